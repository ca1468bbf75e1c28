# The embedded lab up, for make demo and make demo-track (sourced, TOP
# set): Debian's linux-source-6.1 as a git tree (once), the QEMU guests'
# initramfs, and tlblabd on configs/local.yaml unless it already answers.
# Sets BUILD (absolute), CACHE and DATA (TLBLAB_CACHE and TLBLAB_DATA when
# set: the tests' own labs); lab_up exports TLBLAB_TOKEN and TLBLAB_SERVER
# for the client.
#
# Root makes the lab's directories, each with its one owner
# (scripts/lab-dirs.sh), and imports the tree into its own; whatever is done
# in a directory of the daemon's user (the initramfs and keys, the token,
# the log, tlblabd itself) runs as that user, so root never writes or reads
# through a path the daemon controls (docs/security.md).
# shellcheck shell=sh
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac
CACHE=${TLBLAB_CACHE:-/var/cache/tlblab}
DATA=${TLBLAB_DATA:-/var/lib/tlblab}

# the daemon's user (lab.user of configs/local.yaml), and a command as it
LAB_USER=tlblab
as_lab() { sh "$TOP/scripts/as-user.sh" "$LAB_USER" "$@"; }

# lab_prepare N: steps 1 and 2 of N and the token (TLBLAB_TOKEN)
lab_prepare() {
	sh "$TOP/scripts/lab-dirs.sh" "$CACHE" "$DATA"
	echo "== 1/$1 kernel tree (Debian linux-source-6.1 as a git tree, once)"
	sh "$TOP/kernels/import-tree.sh" "$CACHE/linux"

	echo "== 2/$1 guest initramfs (busybox, sshd, tlblab-agent, perf)"
	sh "$TOP/kernels/mkinitramfs.sh" "$CACHE/guest" "$BUILD/tlblab-agent"

	as_lab sh -c 'umask 077; [ -s "$1" ] || head -c 24 /dev/urandom | od -An -tx1 | tr -d " \n" >"$1"' sh "$DATA/token"
	TLBLAB_TOKEN=$(as_lab cat "$DATA/token")
	export TLBLAB_TOKEN
}

# lab_daemon CONFIG SERVER: tlblabd -c CONFIG (relative to TOP) as the
# daemon's user, its log $DATA/tlblabd.log opened by that user, unless
# something answers on SERVER already; waits until it answers
lab_daemon() {
	TLBLAB_SERVER=$2
	export TLBLAB_SERVER
	if curl -fs -m 2 "$TLBLAB_SERVER/api/v1/health" >/dev/null 2>&1; then
		echo "tlblabd already answers on $TLBLAB_SERVER"
		return 0
	fi
	checked=$(cd "$TOP" && as_lab "$BUILD/tlblabd" -n -c "$1")
	echo "$checked" | head -n 1
	(cd "$TOP" && exec nohup sh "$TOP/scripts/as-user.sh" "$LAB_USER" \
		sh -c 'exec "$0" -c "$1" >>"$2" 2>&1 </dev/null' "$BUILD/tlblabd" "$1" "$DATA/tlblabd.log") &
	_pid=$!
	_i=0
	# it answers once it has opened the store and listens (at most 10 s)
	until curl -fs -m 2 "$TLBLAB_SERVER/api/v1/health" >/dev/null 2>&1; do
		_i=$((_i + 1))
		[ $_i -lt 100 ] || { echo "tlblabd did not start; see $DATA/tlblabd.log"; as_lab tail "$DATA/tlblabd.log"; exit 1; }
		sleep 0.1
	done
	echo "tlblabd started (pid $_pid, user $(ps -o user= -p $_pid 2>/dev/null || echo ?), log $DATA/tlblabd.log)"
}

# lab_up N: steps 1 to 3 of N
lab_up() {
	lab_prepare "$1"
	echo "== 3/$1 tlblabd on configs/local.yaml"
	lab_daemon configs/local.yaml http://127.0.0.1:8080
}
