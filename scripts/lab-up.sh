# The embedded lab up, for make demo and make demo-track (sourced, TOP
# set): Debian's linux-source-6.1 as a git tree (once), the QEMU guests'
# initramfs, and tlblabd on configs/local.yaml unless it already answers.
# Sets BUILD (absolute), CACHE and DATA; lab_up exports TLBLAB_TOKEN and
# TLBLAB_SERVER for the client.
# shellcheck shell=sh
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac
CACHE=/var/cache/tlblab
DATA=/var/lib/tlblab

# lab_up N: steps 1 to 3 of N
lab_up() {
	echo "== 1/$1 kernel tree (Debian linux-source-6.1 as a git tree, once)"
	mkdir -p "$CACHE" "$DATA"
	sh "$TOP/kernels/import-tree.sh" "$CACHE/linux"

	echo "== 2/$1 guest initramfs (busybox, sshd, tlblab-agent, perf)"
	sh "$TOP/kernels/mkinitramfs.sh" "$CACHE/guest" "$BUILD/tlblab-agent"

	echo "== 3/$1 tlblabd on configs/local.yaml"
	[ -s "$DATA/token" ] || (umask 077; head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$DATA/token")
	TLBLAB_TOKEN=$(cat "$DATA/token")
	TLBLAB_SERVER=http://127.0.0.1:8080
	export TLBLAB_TOKEN TLBLAB_SERVER
	# tlblabd runs as tlblab (lab.user): what it writes and the guests'
	# key are that user's alone. Every time, with a tlblabd already running
	# too: what runs as root meanwhile (make test's kernel builds in the
	# lab's work tree, make lab-arm64) leaves files of root's or of the
	# build user's there, which tlblab's builds and boots could not use.
	# (mkinitramfs.sh keeps its own output its directory's owner's.)
	mkdir -p "$CACHE/tlblab"
	for d in "$DATA" "$CACHE/guest" "$CACHE/guest-arm64" "$CACHE/tlblab"; do
		if [ -e "$d" ]; then find "$d" ! -user tlblab -exec chown -h tlblab: {} +; fi
	done
	if curl -fs -m 2 "$TLBLAB_SERVER/api/v1/health" >/dev/null 2>&1; then
		echo "tlblabd already answers on $TLBLAB_SERVER"
		return 0
	fi
	checked=$("$BUILD/tlblabd" -n -c "$TOP/configs/local.yaml")
	echo "$checked" | head -n 1
	(cd "$TOP" && exec nohup "$BUILD/tlblabd" -c configs/local.yaml >>"$DATA/tlblabd.log" 2>&1) &
	_pid=$!
	_i=0
	# it answers once it has opened the store and listens (at most 10 s)
	until curl -fs -m 2 "$TLBLAB_SERVER/api/v1/health" >/dev/null 2>&1; do
		_i=$((_i + 1))
		[ $_i -lt 100 ] || { echo "tlblabd did not start; see $DATA/tlblabd.log"; tail "$DATA/tlblabd.log"; exit 1; }
		sleep 0.1
	done
	echo "tlblabd started (pid $_pid, user $(ps -o user= -p $_pid 2>/dev/null || echo ?), log $DATA/tlblabd.log)"
}
