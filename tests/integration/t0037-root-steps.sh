#!/bin/sh
# The daemon's user cannot reach root through root's set-up steps (issue
# 37). make demo, make test and make lab-arm64 run as root and touch the
# directories tlblab owns; a compromised tlblabd can fill those with links
# to root's files before they run. Each root-run step is replayed here
# against such links, all pointing at a secret of root's (0600): the
# initramfs and keys (mkinitramfs.sh), the token and the log (make demo's
# lab_prepare and lab_daemon, scripts/lab-up.sh), a build in the builder's
# work directory as root (build.sh) and as the lab's user (make test's
# builds), and the lab's directories themselves (lab-dirs.sh). After each,
# the secret must have kept its bytes, its owner and its mode, and its
# bytes must be in no file the user can read (the initramfs included).
#
# On 78022e5 the same links turned the secret 0644 and packed it into the
# user's initramfs (mkinitramfs.sh ran as root), handed it out as the
# client's token and appended the daemon's log to it (lab-up.sh), and
# truncated it through WORK/build.log (build.sh as root).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
trap 'daemon_cleanup; rm -rf "$TMP"' EXIT

daemon_test 27000
need_lab_user "root's steps against the daemon's user's links" "nothing to take"
if [ ! -x "$GUEST_AGENT" ] || [ ! -x /bin/busybox ] || [ ! -x /usr/sbin/sshd ]; then
	fail "what mkinitramfs.sh packs is here" "make build/tlblab-agent; apt-get install busybox-static openssh-server"
	exit 0
fi

SECRET=$TMP/secret
SECRET_TEXT="tlblab-root-secret-$$-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
echo "$SECRET_TEXT" >"$SECRET"
chmod 600 "$SECRET"
SECRET_STAT=$(stat -c '%U:%G %a %s' "$SECRET")
SECRET_SUM=$(sha256sum <"$SECRET")

CACHE1=$TMP/cache
DATA1=$TMP/data
sh "$TOP/scripts/lab-dirs.sh" "$CACHE1" "$DATA1" >"$TMP/dirs.out" 2>&1 ||
	{ fail "lab-dirs.sh makes the test's lab" "$(cat "$TMP/dirs.out")"; exit 0; }
# a tree already imported, so lab_prepare's import returns at once
mkdir -p "$TMP/src/linux-source-6.1"
printf 'kernelversion:\n\t@echo 6.1.99\n' >"$TMP/src/linux-source-6.1/Makefile"
tar -cJf "$TMP/linux.tar.xz" -C "$TMP/src" linux-source-6.1
sh "$TOP/kernels/import-tree.sh" "$CACHE1/linux" "$TMP/linux.tar.xz" >"$TMP/import.out" 2>&1 ||
	{ fail "import-tree.sh" "$(cat "$TMP/import.out")"; exit 0; }

# plant DIR NAME...: links DIR/NAME -> the secret, made by the lab's user
plant() {
	_dir=$1
	shift
	for _n; do
		as_lab rm -f "$_dir/$_n"
		as_lab ln -s "$SECRET" "$_dir/$_n"
	done
}

# untouched STEP: the secret kept its bytes, owner and mode, and is in no
# file under the lab's directories
untouched() {
	_why=
	[ "$(stat -c '%U:%G %a %s' "$SECRET")" = "$SECRET_STAT" ] || _why="now $(stat -c '%U:%G %a %s' "$SECRET"), was $SECRET_STAT"
	[ "$(sha256sum <"$SECRET")" = "$SECRET_SUM" ] || _why="$_why; its bytes changed"
	_where=$(grep -rlaF "$SECRET_TEXT" "$CACHE1" "$DATA1" 2>/dev/null | head -n 3)
	[ -z "$_where" ] || _why="$_why; its bytes are in $(echo "$_where" | tr '\n' ' ')"
	if [ -z "$_why" ]; then
		pass "$1: root's secret unchanged and nowhere the user reads"
	else
		fail "$1: root's secret unchanged and nowhere the user reads" "${_why#; }"
	fi
}

# 1. the initramfs and keys: the review's reproduction, then every file
# mkinitramfs.sh writes
plant "$CACHE1/guest" lab_key.pub host_key
sh "$TOP/kernels/mkinitramfs.sh" "$CACHE1/guest" "$GUEST_AGENT" >"$TMP/mkinitramfs1.out" 2>&1
untouched "mkinitramfs.sh, lab_key.pub and host_key linked to it"
as_lab find "$CACHE1/guest" -mindepth 1 -delete
as_lab sh "$TOP/kernels/mkinitramfs.sh" "$CACHE1/guest" "$GUEST_AGENT" >"$TMP/mkinitramfs2.out" 2>&1 ||
	fail "mkinitramfs.sh as the lab's user makes the guests' files" "$(tail -n 3 "$TMP/mkinitramfs2.out")"
plant "$CACHE1/guest" lab_key.pub host_key.pub host_key.fingerprint known_hosts initramfs.cpio
sh "$TOP/kernels/mkinitramfs.sh" "$CACHE1/guest" "$GUEST_AGENT" >"$TMP/mkinitramfs3.out" 2>&1
untouched "mkinitramfs.sh, its public files and the initramfs linked to it"
# and, with nothing planted, run as root it makes the files as the user
as_lab find "$CACHE1/guest" -mindepth 1 -delete
if sh "$TOP/kernels/mkinitramfs.sh" "$CACHE1/guest" "$GUEST_AGENT" >"$TMP/mkinitramfs4.out" 2>&1 &&
	[ -z "$(find "$CACHE1/guest" ! -user "$LAB_USER")" ] &&
	cpio -tv <"$CACHE1/guest/initramfs.cpio" 2>/dev/null | grep -q ' root *root .* usr/sbin/sshd$'; then
	pass "mkinitramfs.sh run by root in the user's directory writes as the user; the archive's files are root's"
else
	fail "mkinitramfs.sh run by root in the user's directory writes as the user" \
		"$(tail -n 2 "$TMP/mkinitramfs4.out"; find "$CACHE1/guest" ! -user "$LAB_USER" | head -n 3)"
fi

# 2. make demo's token and log (scripts/lab-up.sh), with this test's lab
plant "$DATA1" token tlblabd.log
TOKEN_SEEN=$(
	TLBLAB_CACHE=$CACHE1 TLBLAB_DATA=$DATA1
	. "$TOP/scripts/lab-up.sh"
	lab_prepare 3 >"$TMP/prepare.out" 2>&1
	echo "$TLBLAB_TOKEN"
)
untouched "lab_prepare (make demo), the token linked to it"
check "the client was not handed the secret as its token" [ "$TOKEN_SEEN" != "$SECRET_TEXT" ]
{ lab_yaml "$DATA1" "tokens: [$TOKEN]"; } >"$TMP/lab.yaml"
(
	TLBLAB_CACHE=$CACHE1 TLBLAB_DATA=$DATA1
	. "$TOP/scripts/lab-up.sh"
	lab_daemon "$TMP/lab.yaml" "$URL"
) >"$TMP/daemon.out" 2>&1
pkill -f "tlblabd -c $TMP/lab.yaml" 2>/dev/null
untouched "lab_daemon (make demo), its log linked to it"

# 3. builds in the builder's work directory: as root (refused before it
# writes), then as the lab's user, who may write only what it owns
WORK1=$CACHE1/tlblab/work-linux
as_lab mkdir -p "$WORK1"
plant "$WORK1" lock build.log .status .sb-status
sh "$TOP/kernels/build/build.sh" --resolve --tree "$CACHE1/linux" --work "$WORK1" --ref v6.1-debian >"$TMP/build-root.out" 2>&1
untouched "build.sh as root in the user's work directory, its lock, log and status files linked to it"
grep -q "^TLBLAB message $WORK1 belongs to $LAB_USER" "$TMP/build-root.out" &&
	pass "and build.sh as root refused it, naming the owner" ||
	fail "and build.sh as root refused it, naming the owner" "$(tail -n 2 "$TMP/build-root.out")"
as_lab sh "$TOP/kernels/build/build.sh" --resolve --tree "$CACHE1/linux" --work "$WORK1" --ref v6.1-debian \
	>"$TMP/build-user.out" 2>&1
untouched "build.sh as the lab's user (make test's builds), the same links"

# 4. the lab's directories: a data directory that is root's is refused,
# not chowned
install -d -m 0700 "$TMP/rootdata"
if ! sh "$TOP/scripts/lab-dirs.sh" "$CACHE1" "$TMP/rootdata" >"$TMP/dirs2.out" 2>&1 &&
	grep -q "$TMP/rootdata belongs to root; the lab needs it to be $LAB_USER's" "$TMP/dirs2.out" &&
	[ "$(stat -c %U "$TMP/rootdata")" = root ]; then
	pass "lab-dirs.sh refuses a data directory of another owner, names both owners, chowns nothing"
else
	fail "lab-dirs.sh refuses a data directory of another owner" "$(cat "$TMP/dirs2.out"; stat -c %U "$TMP/rootdata")"
fi
plant "$CACHE1/tlblab" planted
sh "$TOP/scripts/lab-dirs.sh" "$CACHE1" "$DATA1" >"$TMP/dirs3.out" 2>&1
untouched "lab-dirs.sh over the user's directories, a link to it among them"
exit 0
