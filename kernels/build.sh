#!/bin/sh
# (Over 1000 lines on purpose: the daemon uploads this one file to
# each builder before a build (build_stage.c, build_resolve.c) and runs it
# there alone, so it cannot source siblings; and it is one protocol, whose
# argument checks, checkout, patch, config, sandboxed build and artifacts
# share its state and its TLBLAB result lines.)
#
# Builds one kernel for a tlblab job on a builder; the daemon runs it as root,
# locally or over SSH, and reads the result from the last lines of stdout.
# The tree's own code (kconfig, make) runs in a bubblewrap sandbox as the
# unprivileged user tlblab-build, without network (see "the sandbox").
#
# usage: build.sh --tree TREE --work WORK --ref REF
#                 [--patch FILE | --fetch URL --fetch-ref REF2]
#                 --config-base tinyconfig|defconfig|FILE [--fragment FILE]...
#                 [--jobs N] --out OUT [--vmlinux] [--ccache DIR]
#                 [--arch x86_64|arm64]
#        build.sh --resolve --tree TREE --work WORK --ref REF
#                 [--fetch URL --fetch-ref REF2] [--since GOOD]
#
# Why it is shaped this way:
# - A builder keeps warm state per tree in WORK, so the patched build that
#   follows a base build recompiles only what the patch touched: WORK/src is
#   one checkout (a `git clone --shared` of a local tree, a plain clone of a
#   URL) that each build resets with checkout --force and clean -fdx, and
#   the kernel is built out of tree in WORK/obj-<key>, one object directory
#   per config recipe (base + fragment contents), so two recipes built in
#   turn do not rebuild each other's objects. ccache catches the rest.
# - WORK/lock (flock) serialises builds that share WORK/src.
# - The build id hashes the commit, the final .config and the compiler, so
#   OUT/<build_id>/ is a cache: a second request for the same kernel returns
#   at once (cached 1). The same patch on the same base gives the same commit
#   because git am and the plain-diff commit run with a fixed identity and
#   date. The directory appears by rename, complete or not at all.
# - The .config is made in WORK/cfg-tmp (BASE target or file, the fragments
#   merged with merge_config.sh, olddefconfig) and remembered in
#   WORK/config-cache under a hash of everything kconfig reads, so a patch
#   that touches no Kconfig input skips kconfig's ~15 s of compiler probes.
# - Every option a fragment sets must survive olddefconfig, or the build
#   fails with class config and the names: a silently dropped option would
#   make the measurement meaningless.
# - --arch arm64 cross-builds with Debian's gcc-aarch64-linux-gnu
#   (ARCH=arm64, CROSS_COMPILE=aarch64-linux-gnu-) from the same checkout,
#   into object directories of its own; its image is OUT/<id>/Image where
#   x86_64's is OUT/<id>/bzImage. The arch and the cross compiler are in
#   the build id (x86_64 ids hash no arch line: they predate --arch, and
#   the .config names the arch anyway).
# - An image is stored only if it is this build's kernel (check_image): a
#   stale object from ccache once put an earlier commit's kernel in a
#   bzImage, which only the boot's /proc/version check saw.
# - Every argument is checked here as well as in the daemon, and passed to
#   git and make as a quoted argument, never through eval or a built string.
#
# stdout: everything the build prints (also kept in WORK/build.log and copied
# to OUT/<build_id>/build.log), then one line per fact, each "TLBLAB KEY
# VALUE": status ok|failed; on failure class, message and 0..30 excerpt
# lines; on success build_id, commit, config_hash, compiler, cached, dir,
# duration (of this run), warnings, kernelrelease, build_host, arch, image
# (the file name: bzImage or Image), image_sha256 (a line the sandbox prints
# starting with TLBLAB is defused to "tlblab-build: TLBLAB ...", so every
# fact is this script's). OUT/<id>/
# holds the image, config, System.map, build.log, meta.json (+ vmlinux).
# --fetch takes an https:// or git:// URL or the absolute path of a local
# repository; the commit built is then the fetched one, and REF only names
# the base. The fetch is bounded: TLBLAB_FETCH_TIMEOUT seconds (default 600)
# and a pack of TLBLAB_FETCH_MAX_KB (default 2097152, 2 GiB); a fetch that
# fails for any reason is class ref (the submitter's), not infra.
# --resolve (the nightly tracker's): only brings the checkout up to date
# and says what REF (or REF2 of URL) is now, in TLBLAB lines commit,
# commit_time (committer date, epoch seconds), author and subject; with
# --since GOOD, also "TLBLAB since SHA" (GOOD's commit) and one
# "TLBLAB between SHA TIME SUBJECT" line per commit
# after GOOD up to it, oldest first (at most 100000; a bisection's range).
# exit: 0 ok, 10 patch, 11 build, 12 config, 13 ref, 1 infra (tools, disk,
# git or network trouble, a bad invocation: the only class worth a retry).
# shellcheck disable=SC2317 # on_exit and kmake are called indirectly
set -eu
# The tree may belong to another user than the one this runs as (make
# demo's tlblabd runs as tlblab and builds from the tree root imported), and
# git refuses such a repository unless it is named safe. Configuration
# given this way counts as the command line's, which git honours for it; it
# reaches this script's own git calls only (the sandbox clears the
# environment), and the trees are the ones the daemon names.
# The checkout's index compares files by mtime, size and mode only
# (core.checkStat=minimal, no ctime): the daemon's user and root take turns
# owning WORK (make demo chowns it, a root build gives the objects back to
# the build user), and a chown alone made `checkout --force` rewrite every
# file, so the next build in every object dir recompiled the whole kernel.
GIT_CONFIG_COUNT=3 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*'
GIT_CONFIG_KEY_1=core.checkStat GIT_CONFIG_VALUE_1=minimal
GIT_CONFIG_KEY_2=core.trustctime GIT_CONFIG_VALUE_2=false
export GIT_CONFIG_COUNT GIT_CONFIG_KEY_0 GIT_CONFIG_VALUE_0 GIT_CONFIG_KEY_1 GIT_CONFIG_VALUE_1 \
	GIT_CONFIG_KEY_2 GIT_CONFIG_VALUE_2
# A fetch from a tree on a local path runs git upload-pack in that tree with
# the environment above cleared, so upload-pack is told on its own command
# line (for a tree over SSH, the same command runs there).
UPLOAD_PACK="remote.origin.uploadpack=git -c 'safe.directory=*' upload-pack"

LC_ALL=C
export LC_ALL
unset LANG LANGUAGE 2>/dev/null || true
# The caller's environment must not reach kbuild or kconfig: each of these
# would change what gets built without showing up in the build id.
unset ARCH SUBARCH CROSS_COMPILE KCONFIG_CONFIG KCONFIG_ALLCONFIG KBUILD_OUTPUT \
	KBUILD_EXTMOD KCFLAGS KAFLAGS KCPPFLAGS KBUILD_BUILD_VERSION_TIMESTAMP \
	MAKEFLAGS MFLAGS MAKELEVEL MAKEFILES GNUMAKEFLAGS CONFIG_ GIT_DIR \
	GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY 2>/dev/null || true
# An empty (but set) LOCALVERSION keeps scripts/setlocalversion from adding
# "+" for an untagged tree: kernelrelease depends on the config alone.
LOCALVERSION=
export LOCALVERSION
# Never wait for a password or an editor.
GIT_TERMINAL_PROMPT=0
GIT_EDITOR=:
export GIT_TERMINAL_PROMPT GIT_EDITOR
# The daemon may read only one stream (SSH): everything goes to stdout.
# stdin stays alone: the script itself may come that way (sh -s); commands
# get </dev/null one by one.
exec 2>&1

# Fixed identities and dates: the commit made from a patch depends on the
# patch and the base only, and the kernel's version string on the build id.
GIT_COMMITTER_NAME=tlblab
GIT_COMMITTER_EMAIL=tlblab@localhost
GIT_COMMITTER_DATE="2000-01-01T00:00:00Z"
export GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL GIT_COMMITTER_DATE
BUILD_TIMESTAMP="Sat Jan  1 00:00:00 UTC 2000"
MAX_PATCH_BYTES=33554432
MIN_FREE_MB=${TLBLAB_MIN_FREE_MB:-1024}
# The bounds of a --fetch (the submitter's repository): its time, and the
# size of the pack it brings (fetch.unpackLimit=1 keeps the pack one file,
# and RLIMIT_FSIZE caps that file).
FETCH_TIMEOUT=${TLBLAB_FETCH_TIMEOUT:-600}
FETCH_MAX_KB=${TLBLAB_FETCH_MAX_KB:-2097152}
NL='
'

start=$(date +%s)
finished=0
step="checking arguments"
LOG=
tmpout=
private_obj=

# ---- the result protocol -------------------------------------------------

# One safe line: no control characters, bounded length.
oneline() {
	printf '%s' "$1" | tr '\000-\037\177' ' ' | cut -c1-400
}

# say MESSAGE: a progress line for the log and stdout.
say() {
	if [ -n "$LOG" ]; then
		printf 'build.sh: %s\n' "$1" | tee -a "$LOG"
	else
		printf 'build.sh: %s\n' "$1"
	fi
}

# fail CLASS MESSAGE [EXCERPT_FILE]: print the failure facts and exit.
fail() {
	case $1 in
	patch) code=10 ;;
	build) code=11 ;;
	config) code=12 ;;
	ref) code=13 ;;
	*) code=1 ;;
	esac
	finished=1
	printf 'TLBLAB status failed\n'
	printf 'TLBLAB class %s\n' "$1"
	printf 'TLBLAB message %s\n' "$(oneline "$2")"
	if [ $# -ge 3 ] && [ -s "$3" ]; then
		head -n 30 "$3" | while IFS= read -r _l || [ -n "$_l" ]; do
			printf 'TLBLAB excerpt %s\n' "$(oneline "$_l")"
		done
	fi
	exit "$code"
}

# Anything that stops the script without a verdict (set -e, a signal) is the
# lab's trouble, not the patch's: class infra, with the step it was in.
on_exit() {
	rc=$?
	set +e	# a failing clean-up command must not replace the exit status
	if [ -n "$tmpout" ]; then rm -rf "$tmpout"; fi
	if [ -n "${private_obj:-}" ]; then rm -rf "$private_obj"; fi
	if [ "$finished" = 0 ]; then
		finished=1
		ex=
		if [ -n "$LOG" ] && [ -f "$LOG" ] && [ -n "${WORK:-}" ] && [ -d "$WORK" ]; then
			ex=$WORK/.excerpt
			tail -n 10 "$LOG" >"$ex" 2>/dev/null || ex=
		fi
		( fail infra "build.sh stopped while $step (exit $rc)" "$ex" )
		exit 1
	fi
	exit "$rc"
}
trap on_exit EXIT
trap 'step="$step (interrupted)"; exit 1' INT TERM HUP

usage() {
	fail infra "$1 (usage: build.sh --tree TREE --work WORK --ref REF [--patch FILE | --fetch URL --fetch-ref REF] --config-base BASE [--fragment FILE]... [--jobs N] --out OUT [--vmlinux])"
}

# ---- argument checks ------------------------------------------------------

# A value with no newline, no leading '-', not empty.
plain_value() {
	[ -n "$1" ] || return 1
	case $1 in -*) return 1 ;; esac
	case $1 in *"$NL"* | *"$(printf '\r')"*) return 1 ;; esac
	return 0
}

is_hex_ref() {
	case $1 in *[!0-9a-f]*) return 1 ;; esac
	[ ${#1} -ge 7 ] && [ ${#1} -le 40 ]
}

# Git's ref-format rules, and a character set narrower than git's: a ref
# also travels through the daemon's SSH command lines and into refspecs,
# where ';', '$', '+' or ':' would mean something.
valid_ref() {
	plain_value "$1" || return 1
	[ ${#1} -le 200 ] || return 1
	case $1 in [!A-Za-z0-9]* | *[!A-Za-z0-9._/@-]*) return 1 ;; esac
	is_hex_ref "$1" && return 0
	git check-ref-format --allow-onelevel "$1" >/dev/null 2>&1
}

# A git URL we are willing to clone or fetch: https:// or git:// only (no
# ext::, no ssh with a user-supplied command, no file:// tricks, no http://),
# at most 2048 bytes. The daemon's API takes exactly these for a branch
# (lib/util.c url_valid; tests/fixtures/branch-urls.txt holds both to it).
valid_url() {
	[ ${#1} -le 2048 ] || return 1
	printf '%s\n' "$1" | grep -Eq '^(https|git)://[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?(/[A-Za-z0-9._~/%@-]*)?$'
}

# abs_dir PATH: the canonical absolute path of an existing directory.
abs_dir() {
	(cd -P -- "$1" 2>/dev/null && pwd -P)
}

# abs_file PATH: the absolute path of an existing readable regular file.
abs_file() {
	[ -f "$1" ] && [ -r "$1" ] || return 1
	_d=$(abs_dir "$(dirname -- "$1")") || return 1
	printf '%s/%s\n' "${_d%/}" "$(basename -- "$1")"
}

tree='' work='' ref='' patch='' fetch_url='' fetch_ref='' base='' jobs='' out='' ccache='' since='' arch=''
want_vmlinux=0
resolve_only=0
nfrag=0
fragments=		# newline-separated absolute paths (none contains a newline)
while [ $# -gt 0 ]; do
	opt=$1
	shift
	case $opt in
	--vmlinux) want_vmlinux=1; continue ;;
	--resolve) resolve_only=1; continue ;;
	-h | --help) sed -n '6,16p' "$0" 2>/dev/null || true; finished=1; exit 0 ;;
	--tree | --work | --ref | --patch | --fetch | --fetch-ref | --config-base | --fragment | --jobs | --out | --ccache | --since | --arch) ;;
	*) usage "unknown argument '$(oneline "$opt")'" ;;
	esac
	[ $# -gt 0 ] || usage "$opt needs a value"
	val=$1
	shift
	if ! plain_value "$val"; then
		case $opt in
		--ref | --fetch | --fetch-ref | --since) fail ref "$opt: refused value '$(oneline "$val")' (empty, starts with '-' or has a newline)" ;;
		*) usage "$opt: refused value '$(oneline "$val")' (empty, starts with '-' or has a newline)" ;;
		esac
	fi
	case $opt in
	--tree) [ -z "$tree" ] || usage "--tree given twice"; tree=$val ;;
	--work) [ -z "$work" ] || usage "--work given twice"; work=$val ;;
	--ref) [ -z "$ref" ] || usage "--ref given twice"; ref=$val ;;
	--patch) [ -z "$patch" ] || usage "--patch given twice"; patch=$val ;;
	--fetch) [ -z "$fetch_url" ] || usage "--fetch given twice"; fetch_url=$val ;;
	--fetch-ref) [ -z "$fetch_ref" ] || usage "--fetch-ref given twice"; fetch_ref=$val ;;
	--config-base) [ -z "$base" ] || usage "--config-base given twice"; base=$val ;;
	--jobs) [ -z "$jobs" ] || usage "--jobs given twice"; jobs=$val ;;
	--out) [ -z "$out" ] || usage "--out given twice"; out=$val ;;
	--since) [ -z "$since" ] || usage "--since given twice"; since=$val ;;
	--arch) [ -z "$arch" ] || usage "--arch given twice"; arch=$val ;;
	--ccache)
		[ -z "$ccache" ] || usage "--ccache given twice"
		case $val in /*) ccache=$val ;; *) usage "--ccache must be an absolute path" ;; esac
		;;
	--fragment)
		f=$(abs_file "$val") || usage "--fragment: '$(oneline "$val")' is not a readable file"
		nfrag=$((nfrag + 1))
		[ "$nfrag" -le 64 ] || usage "more than 64 fragments"
		fragments="$fragments$f$NL"
		;;
	esac
done

[ -n "$tree" ] || usage "--tree is required"
# karch: the kernel's ARCH; cross: CROSS_COMPILE; image: the file make
# leaves in arch/$karch/boot/ and the name it is published under
case ${arch:=x86_64} in
x86_64) karch=x86 cross='' image=bzImage ;;
arm64) karch=arm64 cross=aarch64-linux-gnu- image=Image ;;
*) usage "--arch: '$(oneline "$arch")' is not one of x86_64, arm64" ;;
esac
kcc="${cross}gcc"
[ -n "$work" ] || usage "--work is required"
[ -n "$ref" ] || usage "--ref is required"
if [ "$resolve_only" = 1 ]; then
	[ -z "$patch$base$out" ] || usage "--resolve takes no --patch, --config-base or --out"
	base=tinyconfig
else
	[ -n "$base" ] || usage "--config-base is required"
	[ -n "$out" ] || usage "--out is required"
	[ -z "$since" ] || usage "--since goes with --resolve"
fi
[ -z "$since" ] || valid_ref "$since" || fail ref "--since '$(oneline "$since")' is not a valid ref nor a commit id"
valid_ref "$ref" || fail ref "--ref '$(oneline "$ref")' is not a valid ref (git check-ref-format, characters [A-Za-z0-9._/@-]) nor a 7..40 digit hex commit id"
if [ -n "$patch" ] && [ -n "$fetch_url$fetch_ref" ]; then
	usage "--patch and --fetch exclude each other"
fi
if [ -n "$fetch_url$fetch_ref" ]; then
	if [ -z "$fetch_url" ] || [ -z "$fetch_ref" ]; then
		usage "--fetch and --fetch-ref go together"
	fi
	valid_ref "$fetch_ref" || fail ref "--fetch-ref '$(oneline "$fetch_ref")' is not a valid ref"
	# A local repository only as an absolute path (an operator's own
	# call: the daemon sends URLs only), never a relative one, which
	# would be read against wherever this script runs.
	if valid_url "$fetch_url"; then
		:
	elif case $fetch_url in /*) true ;; *) false ;; esac && fu=$(abs_dir "$fetch_url"); then
		fetch_url=$fu
	else
		fail ref "--fetch '$(oneline "$fetch_url")' is neither an https:// or git:// URL nor the absolute path of a directory"
	fi
fi
case $FETCH_TIMEOUT$FETCH_MAX_KB in *[!0-9]*) usage "TLBLAB_FETCH_TIMEOUT and TLBLAB_FETCH_MAX_KB must be numbers" ;; esac
if [ -z "$jobs" ]; then
	jobs=$(nproc 2>/dev/null || echo 2)
fi
case $jobs in '' | *[!0-9]*) usage "--jobs must be a number" ;; esac
if [ "$jobs" -lt 1 ] || [ "$jobs" -gt 1024 ]; then usage "--jobs must be 1..1024"; fi
tree_is_url=0
if valid_url "$tree"; then
	tree_is_url=1
else
	case $tree in *://*) usage "--tree: only https:// and git:// URLs are accepted" ;; esac
	t=$(abs_dir "$tree") || usage "--tree '$(oneline "$tree")' is not a directory"
	tree=$t
	git -C "$tree" rev-parse --git-dir >/dev/null 2>&1 || usage "--tree $tree is not a git repository"
fi
base_file=
case $base in
tinyconfig | defconfig) ;;
*) base_file=$(abs_file "$base") || usage "--config-base must be tinyconfig, defconfig or a readable file" ;;
esac
if [ -n "$patch" ]; then
	p=$(abs_file "$patch") || usage "--patch '$(oneline "$patch")' is not a readable file"
	patch=$p
	psize=$(wc -c <"$patch")
	[ "$psize" -gt 0 ] || fail patch "the patch file is empty"
	[ "$psize" -le "$MAX_PATCH_BYTES" ] || fail patch "the patch is larger than $MAX_PATCH_BYTES bytes"
fi

step="checking tools"
missing=
for tool in git make gcc "$kcc" ccache flock sha256sum awk sed tee cmp df flex bison bc perl bwrap; do
	command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
[ -z "$missing" ] || fail infra "missing tools on the builder:$missing (apt-get install git make gcc ccache util-linux flex bison bc perl libelf-dev libssl-dev bubblewrap${cross:+ gcc-aarch64-linux-gnu})"

step="preparing $work"
mkdir -p -- "$work" ${out:+"$out"} || fail infra "cannot create $work or $out"
WORK=$(abs_dir "$work")
OUT=
[ -z "$out" ] || OUT=$(abs_dir "$out")
SRC=$WORK/src
# One owner per directory (docs/security.md): a build runs as the owner of
# its work and output directories. Root in a directory of another user's
# would write each file there (the lock, the log, .status) through what
# could be that user's link to one of root's, and a checkout that root and
# that user take turns in rebuilds the whole kernel.
# And no directory above them (their real paths) may be another user's
# or writable by another, but for a sticky one like /tmp: nobody else can
# swap a link into the path.
safe_path() {
	_p=$1
	while [ -n "$_p" ]; do
		_m=$(stat -c %a -- "$_p")
		_u=$(stat -c %u -- "$_p")
		if [ "$_u" != 0 ] && [ "$_u" != "$(id -u)" ]; then
			fail infra "$_p, above $1, belongs to $(stat -c %U -- "$_p") (uid $_u): a build as $(id -un) needs every directory above its work and output directories to be root's or its own"
		fi
		if [ $((0$_m & 022)) != 0 ] && [ $((0$_m & 01000)) = 0 ]; then
			fail infra "$_p, above $1, is writable by others (mode $_m): a build needs every directory above its work and output directories writable by their owner only"
		fi
		_p=${_p%/*}
	done
}
for d in "$WORK" ${OUT:+"$OUT"}; do
	o=$(stat -c %u -- "$d")
	[ "$o" = "$(id -u)" ] ||
		fail infra "$d belongs to $(stat -c %U -- "$d") (uid $o) and this build runs as $(id -un) (uid $(id -u)): run it as $(stat -c %U -- "$d"), whose work and output directories these are"
	safe_path "${d%/*}"
done

# One build at a time per WORK: they share the checkout and object dirs.
exec 9>>"$WORK/lock"
if ! flock -n 9; then
	say "waiting for another build in $WORK"
	flock 9
fi

LOG=$WORK/build.log
: >"$LOG"
say "build of $ref in $WORK (tree $tree), started $(date -u '+%Y-%m-%d %H:%M:%S UTC')"

# Leftovers of builds killed before their rename (the lock is ours, and each
# temp dir names the pid that made it).
for d in ${OUT:+"$OUT"/.tmp-*}; do
	[ -d "$d" ] || continue
	pid=$(basename -- "$d" | sed -n 's/^\.tmp-\([0-9][0-9]*\)-.*/\1/p')
	if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
		rm -rf -- "$d"
	fi
done

free_mb=$(df -Pk "$WORK" | awk 'NR == 2 { print int($4 / 1024) }')
[ "${free_mb:-0}" -ge "$MIN_FREE_MB" ] ||
	fail infra "only ${free_mb:-0} MB free under $WORK (need $MIN_FREE_MB MB)"

# ccache: --ccache, else WORK's own (its owner's, like WORK). BASEDIR makes
# paths under WORK relative, so the hashes do not depend on where WORK lives.
if [ -n "$ccache" ]; then
	CCACHE_DIR=$ccache
elif [ -z "${CCACHE_DIR:-}" ]; then
	CCACHE_DIR=$WORK/ccache
fi
CCACHE_BASEDIR=$WORK
CCACHE_MAXSIZE=5G
# Not ccache's depend mode: it hashes only the headers the compiler's
# dependency file names, so an object whose source pulls a file in with
# .incbin comes back from the cache as it was. x86's bzImage wraps the
# compressed vmlinux that way (arch/x86/boot/compressed/piggy.S): a commit
# whose compressed kernel kept its size got the image of an earlier one
# (the boot's /proc/version check caught it, make demo-track's bisection
# skipped that commit). The default mode preprocesses, sees the .incbin and
# does not cache that object. The namespace keeps this cache's entries from
# the builds made in depend mode (up to 2c24e33) out of reach: ccache's
# direct mode would hit them.
CCACHE_NAMESPACE=tlblab-2
export CCACHE_DIR CCACHE_BASEDIR CCACHE_MAXSIZE CCACHE_NAMESPACE
mkdir -p -- "$CCACHE_DIR" || fail infra "cannot create $CCACHE_DIR"

# ---- the sandbox -----------------------------------------------------------

# Everything that runs the tree's own code (kconfig, merge_config.sh, make)
# runs in a bubblewrap sandbox: as the unprivileged user tlblab-build (made
# here when missing; a builder reached as an unprivileged user runs it as
# that user), in new user, pid, network, IPC and UTS namespaces (no network:
# only a loopback that is down), with the system's /usr and /etc read-only,
# the checkout read-only, and only SB_RW (the object or config directory of
# this build; SB_RW_HOST when it is a private copy shown at SB_RW's path)
# and ccache writable. The daemon's data, tokens, keys, the
# output directory, this script and other builds' directories are not in
# its view. Root touches what the sandbox could write only through the
# sandbox (sb_cat), so a planted symlink reaches nothing the build user
# could not read anyway. Every line the sandbox prints that looks like one
# of this script's facts is defused (TLBLAB -> tlblab-build:), so the facts
# below are this script's alone.
SB_USER=tlblab-build
SB_RW=
SB_RW_HOST=
SB_CCACHE=rw
if [ "$(id -u)" = 0 ]; then
	if ! id -u "$SB_USER" >/dev/null 2>&1; then
		useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
			"$SB_USER" >/dev/null 2>&1 || id -u "$SB_USER" >/dev/null 2>&1 ||
			fail infra "cannot create the build user $SB_USER (useradd)"
	fi
	SB_UID=$(id -u "$SB_USER")
	SB_GID=$(id -g "$SB_USER")
else
	SB_USER=$(id -un)
	SB_UID=$(id -u)
	SB_GID=$(id -g)
fi

# sb_own DIR: makes DIR the build user's (once: a directory of an older,
# unsandboxed build belongs to root). -h: a link is changed, not its target.
sb_own() {
	[ "$(stat -c %u -- "$1")" = "$SB_UID" ] && return 0
	[ "$(id -u)" = 0 ] || fail infra "$1 belongs to another user and this builder is not root"
	chown -R -h "$SB_UID:$SB_GID" -- "$1" || fail infra "cannot give $1 to $SB_USER"
}

# sb_exec CMD...: CMD in the sandbox, its output unfiltered (for sb_cat).
# The lock's descriptor (9) stays outside: bwrap hands the sandbox every
# descriptor it gets, and a build's code holding WORK's lock could stall
# the next build, or outlive its own.
sb_exec() {
	set -- bwrap --unshare-all --unshare-user --die-with-parent --new-session --disable-userns \
		--ro-bind /usr /usr --ro-bind /etc /etc \
		--symlink usr/bin /bin --symlink usr/sbin /sbin --symlink usr/lib /lib \
		--symlink usr/lib64 /lib64 --proc /proc --dev /dev --tmpfs /tmp \
		--ro-bind "$SRC" "$SRC" \
		${SB_RW:+--bind "${SB_RW_HOST:-$SB_RW}" "$SB_RW"} \
		$([ "$SB_CCACHE" = rw ] && echo --bind || echo --ro-bind) "$CCACHE_DIR" "$CCACHE_DIR" \
		--clearenv --setenv PATH /usr/bin:/bin:/usr/sbin:/sbin --setenv HOME /tmp \
		--setenv LC_ALL C --setenv LOCALVERSION "" --setenv TMPDIR /tmp \
		--setenv CCACHE_DIR "$CCACHE_DIR" --setenv CCACHE_BASEDIR "$CCACHE_BASEDIR" \
		--setenv CCACHE_MAXSIZE "$CCACHE_MAXSIZE" --setenv CCACHE_TEMPDIR /tmp \
		--setenv CCACHE_NAMESPACE "$CCACHE_NAMESPACE" \
		$([ "$SB_CCACHE" = ro ] && echo --setenv CCACHE_READONLY 1) \
		$([ "$SB_CCACHE" = off ] && echo --setenv CCACHE_DISABLE 1) \
		--chdir "${SB_RW:-/tmp}" -- "$@"
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid="$SB_UID" --regid="$SB_GID" --clear-groups --inh-caps=-all --bounding-set=-all "$@" 9>&-
	else
		"$@" 9>&-
	fi
}

# sb CMD...: CMD in the sandbox; its output with any fact line defused.
sb() {
	_sbst=$WORK/.sb-status
	{
		_rc=0
		sb_exec "$@" </dev/null 2>&1 || _rc=$?
		echo "$_rc" >"$_sbst"
	} | sed -u 's/^TLBLAB/tlblab-build: TLBLAB/'
	return "$(cat "$_sbst")"
}

# sb_cat FILE: FILE's bytes, read by the build user in the sandbox (a
# regular file only: a link the build planted is not followed).
sb_cat() {
	sb_exec sh -c '[ -f "$1" ] && [ ! -L "$1" ] && exec cat -- "$1"; echo "not a regular file: $1" >&2; exit 1' sh "$1" </dev/null
}

# run CMD...: CMD's output to the log and stdout; returns CMD's status
# (a pipeline's status would be tee's, hence the status file).
run() {
	_st=$WORK/.status
	{
		_rc=0
		"$@" </dev/null 2>&1 || _rc=$?
		echo "$_rc" >"$_st"
	} | tee -a "$LOG"
	return "$(cat "$_st")"
}

# capture FILE CMD...: like run, and CMD's output also in FILE.
capture() {
	_f=$1
	shift
	_st=$WORK/.status
	{
		_rc=0
		"$@" </dev/null 2>&1 || _rc=$?
		echo "$_rc" >"$_st"
	} | tee "$_f" | tee -a "$LOG"
	return "$(cat "$_st")"
}

g() { git -C "$SRC" -c advice.detachedHead=false -c core.hooksPath=/dev/null "$@" </dev/null; }

# ---- the source checkout ---------------------------------------------------

step="preparing the source checkout"
if [ -d "$SRC" ]; then
	# A checkout of another tree, or a broken one, is replaced.
	cur=$(git -C "$SRC" config --get remote.origin.url 2>/dev/null || true)
	if [ "$cur" != "$tree" ] || ! git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
		say "replacing $SRC (was a checkout of '$cur')"
		rm -rf -- "$SRC"
	fi
fi
if [ ! -d "$SRC" ]; then
	rm -rf -- "$SRC.new"
	if [ "$tree_is_url" = 1 ]; then
		say "cloning $tree"
		run git clone --no-checkout -- "$tree" "$SRC.new" ||
			fail infra "git clone of $tree failed"
	else
		# git clone of a local path runs upload-pack in the tree with
		# the GIT_CONFIG_* environment cleared: it is told on its own
		# command line that the tree is safe (the daemon's user clones
		# a tree that root imported), as the fetches below are
		say "cloning $tree (shared objects)"
		run git clone --shared --no-checkout --upload-pack "git -c safe.directory=* upload-pack" \
			-- "$tree" "$SRC.new" ||
			fail infra "git clone --shared of $tree failed"
	fi
	mv -- "$SRC.new" "$SRC"
	# Every file of a new checkout is newer than what an object dir built
	# from the old one holds: those dirs would rebuild everything, and a
	# cached base would leave them so for each patched build that copies
	# them. Removed, the next build of a tree's own commit makes them again.
	rm -rf -- "$WORK"/obj-*
fi
# A killed run may have left a lock or a git am in progress; we hold the lock.
rm -f -- "$SRC/.git/index.lock"
if [ -d "$SRC/.git/rebase-apply" ]; then
	g am --abort >/dev/null 2>&1 || rm -rf -- "$SRC/.git/rebase-apply"
fi

# ---- the ref ---------------------------------------------------------------

# resolve NAME: the commit NAME names in the checkout, origin's view first.
resolve() {
	if is_hex_ref "$1" && g rev-parse -q --verify "$1^{commit}" 2>/dev/null; then
		return 0
	fi
	case $1 in
	refs/*) g rev-parse -q --verify "$1^{commit}" 2>/dev/null ;;
	*)
		g rev-parse -q --verify "refs/tags/$1^{commit}" 2>/dev/null ||
			g rev-parse -q --verify "refs/remotes/origin/$1^{commit}" 2>/dev/null ||
			g rev-parse -q --verify "refs/remotes/$1^{commit}" 2>/dev/null
		;;
	esac
}

step="resolving $ref"
commit=
if is_hex_ref "$ref"; then
	commit=$(resolve "$ref") || commit=
fi
if [ -z "$commit" ]; then
	# Branch names move: always ask origin. A tag we already have is
	# enough when origin cannot be reached.
	say "fetching from origin"
	if ! run g -c "$UPLOAD_PACK" fetch --prune --force --tags origin '+refs/heads/*:refs/remotes/origin/*'; then
		case $ref in refs/tags/*) tag=$ref ;; *) tag=refs/tags/$ref ;; esac
		g rev-parse -q --verify "$tag^{commit}" >/dev/null ||
			fail infra "git fetch from $tree failed"
		say "fetch failed; using the tag $ref already here"
	fi
	commit=$(resolve "$ref") || commit=
	# A full commit id that no branch or tag reaches: ask for it by name.
	if [ -z "$commit" ] && is_hex_ref "$ref" && [ ${#ref} = 40 ]; then
		run g -c "$UPLOAD_PACK" fetch --no-tags origin "$ref" || true
		commit=$(resolve "$ref") || commit=
	fi
	[ -n "$commit" ] ||
		fail ref "ref '$ref' not found in $tree (not a tag, branch or commit there)"
fi
base_commit=$commit
say "$ref is $commit"

if [ -n "$fetch_url" ]; then
	step="fetching $fetch_ref from $fetch_url"
	say "fetching $fetch_ref from $fetch_url"
	# Whatever keeps the submitter's repository from giving the ref (a
	# wrong URL or ref, a host that does not answer, a pack too large) is
	# the submitter's to fix: class ref, never a retry.
	# --foreground: timeout stays in this script's process group, so the
	# daemon's cancel (a kill of the group) reaches the fetch too; and the
	# fetch does not hold WORK/lock (fd 9) should it outlive us.
	fetch_rc=0
	capture "$WORK/.fetch.out" timeout --foreground -k 5 "$FETCH_TIMEOUT" \
		prlimit --fsize=$((FETCH_MAX_KB * 1024)) -- \
		git -C "$SRC" -c advice.detachedHead=false -c core.hooksPath=/dev/null \
		-c fetch.unpackLimit=1 -c transfer.unpackLimit=1 -c http.followRedirects=false \
		fetch --no-tags -- "$fetch_url" "$fetch_ref" 9>&- || fetch_rc=$?
	if [ "$fetch_rc" != 0 ]; then
		grep -E '^(fatal|error): ' "$WORK/.fetch.out" | head -n 5 >"$WORK/.excerpt" || true
		if [ "$fetch_rc" = 124 ] || [ "$fetch_rc" = 137 ]; then
			fail ref "git fetch of $fetch_ref from $fetch_url did not finish within $FETCH_TIMEOUT s" "$WORK/.excerpt"
		fi
		# the file size limit stops index-pack as it writes the pack, and
		# git then says only "invalid index-pack output": the partial pack
		# at the limit says why (and goes)
		too_big=
		for p in "$SRC/.git/objects/pack"/tmp_pack_*; do
			[ -f "$p" ] || continue
			[ "$(wc -c <"$p")" -ge $((FETCH_MAX_KB * 1024)) ] && too_big=1
			rm -f "$p"
		done
		if [ -n "$too_big" ] || grep -Eq 'signal 25|File too large' "$WORK/.fetch.out"; then
			fail ref "git fetch of $fetch_ref from $fetch_url: the pack is larger than $FETCH_MAX_KB KB" "$WORK/.excerpt"
		fi
		first=$(head -n 1 "$WORK/.excerpt")
		fail ref "cannot fetch $fetch_ref from $fetch_url${first:+: $first}" "$WORK/.excerpt"
	fi
	commit=$(g rev-parse -q --verify 'FETCH_HEAD^{commit}') ||
		fail ref "$fetch_ref at $fetch_url is not a commit"
	say "$fetch_ref at $fetch_url is $commit"
fi

if [ "$resolve_only" = 1 ]; then
	step="reading the facts of $commit"
	good=
	if [ -n "$since" ]; then
		good=$(resolve "$since") || fail ref "--since '$since' is not a commit of $tree"
		g merge-base --is-ancestor "$good" "$commit" ||
			fail ref "--since '$since' ($good) is not an ancestor of $commit: there is no range between them"
	fi
	facts=$(g log -1 --format='%ct%x01%an%x01%s' "$commit") || fail infra "git log of $commit failed"
	SOH=$(printf '\001')
	rest=${facts#*"$SOH"}
	finished=1
	printf 'TLBLAB status ok\n'
	printf 'TLBLAB commit %s\n' "$commit"
	printf 'TLBLAB commit_time %s\n' "${facts%%"$SOH"*}"
	printf 'TLBLAB author %s\n' "$(oneline "${rest%%"$SOH"*}")"
	printf 'TLBLAB subject %s\n' "$(oneline "${rest#*"$SOH"}")"
	if [ -n "$good" ]; then
		printf 'TLBLAB since %s\n' "$good"
		g rev-list --reverse --topo-order --max-count=100000 --format='%ct %s' "$good..$commit" |
			awk '/^commit [0-9a-f]+$/ { sha = $2; next } { gsub(/[\001-\037\177]/, " "); printf "TLBLAB between %s %s\n", sha, substr($0, 1, 400) }'
	fi
	exit 0
fi

step="checking out $commit"
run g checkout -q --detach --force "$commit" || fail infra "git checkout of $commit failed"
run g clean -fdxq || fail infra "git clean failed"

# ---- the patch -------------------------------------------------------------

# An mbox (git format-patch, a lore raw message, a series) starts with the
# mbox "From " line or with mail headers; anything else is a plain diff.
is_mbox() {
	head -n 1 -- "$1" | grep -Eq '^(From |(From|Subject|Date|Message-I[Dd]|Return-Path|Received|To|Cc|MIME-Version|Content-Type|X-[A-Za-z0-9-]+): )'
}

# The errors of a failed apply: the file and the hunk position, the way
# `git apply` words them, made relative to the tree.
apply_errors() {
	grep -E '^(error|fatal): |^Patch failed at |^Applying: |^CONFLICT|^Patch is empty|^No changes' "$1" |
		grep -v '^error: while searching for:' | head -n 30 || true
}

if [ -n "$patch" ]; then
	step="applying the patch"
	if is_mbox "$patch"; then
		# a series' cover letter has no diff: git am drops it
		say "applying the mbox with git am --3way --empty=drop"
		if ! capture "$WORK/.apply.out" g am --3way --empty=drop -- "$patch"; then
			apply_errors "$WORK/.apply.out" >"$WORK/.excerpt"
			# With --3way, git am may only say that it could not build a
			# fake ancestor; git apply names the file and the hunk.
			failed=$(g rev-parse --git-path rebase-apply/patch)
			case $failed in /*) ;; *) failed=$SRC/$failed ;; esac
			if ! grep -q 'patch failed: ' "$WORK/.excerpt" && [ -s "$failed" ]; then
				g apply --check --verbose -- "$failed" 2>&1 | grep -E '^error: ' |
					grep -v '^error: while searching for:' >>"$WORK/.excerpt" || true
			fi
			g am --abort >/dev/null 2>&1 || true
			first=$(grep -m1 'patch failed: ' "$WORK/.excerpt" || grep -m1 -E '^(error|fatal): ' "$WORK/.excerpt" || echo "git am failed")
			# which patch of a series: "Patch failed at 0002 mm: subject"
			at=$(sed -n 's/^Patch failed at \([0-9]*\) \(.*\)$/patch \1 (\2)/p' "$WORK/.excerpt" | head -n 1)
			fail patch "${at:-patch} does not apply to $ref: $first" "$WORK/.excerpt"
		fi
	else
		say "applying the plain diff with git apply --index"
		if ! capture "$WORK/.apply.out" g apply --index -- "$patch"; then
			apply_errors "$WORK/.apply.out" >"$WORK/.excerpt"
			g reset -q --hard >/dev/null 2>&1 || true
			first=$(grep -m1 'patch failed: ' "$WORK/.excerpt" || grep -m1 -E '^(error|fatal): ' "$WORK/.excerpt" || echo "git apply failed")
			fail patch "patch does not apply to $ref: $first" "$WORK/.excerpt"
		fi
		if g diff --cached --quiet; then
			fail patch "the patch changes nothing in $ref"
		fi
		GIT_AUTHOR_NAME=tlblab GIT_AUTHOR_EMAIL=tlblab@localhost GIT_AUTHOR_DATE=$GIT_COMMITTER_DATE \
			run g commit -q --no-verify --no-gpg-sign -m "tlblab: apply a plain diff" ||
			fail infra "git commit of the applied diff failed"
	fi
	commit=$(g rev-parse --verify 'HEAD^{commit}')
	say "patched commit $commit"
fi

# ---- trust -----------------------------------------------------------------

# A commit that origin's branches or tags contain is the tree's own code; a
# patched or fetched commit, or a base that only a fetch brought in, is
# the submitter's. Untrusted builds read the shared ccache and object dirs
# but never write them: they build in a private copy of the object dir,
# removed afterwards, so nothing they leave is reused by another build.
trusted=0
if [ -z "$patch" ] && [ -z "$fetch_url" ] &&
	[ -n "$(g for-each-ref --count=1 --contains "$commit" refs/remotes/origin refs/tags 2>/dev/null)" ]; then
	trusted=1
fi
sb_own "$CCACHE_DIR"
if [ "$trusted" = 1 ]; then
	say "sandbox: $SB_USER (uid $SB_UID), no network; $commit is the tree's own: shared objects and ccache"
else
	SB_CCACHE=ro
	say "sandbox: $SB_USER (uid $SB_UID), no network; $commit is the submitter's: private objects, ccache read-only"
fi

# ---- the config ------------------------------------------------------------

# kmake DIR TARGET...: make in the checkout with objects in DIR, for the
# arch, with the compiler the build uses (kconfig records it in the .config).
# x86_64 is built natively, without ARCH=: its configs stay as they were.
kmake() {
	_o=$1
	shift
	if [ -n "$cross" ]; then
		sb make -C "$SRC" O="$_o" ARCH="$karch" CROSS_COMPILE="$cross" CC="ccache $kcc" "$@"
	else
		sb make -C "$SRC" O="$_o" CC="ccache gcc" "$@"
	fi
}

step="generating the config"
CFG=$WORK/cfg-tmp
REQ=$WORK/.requested.config
FINAL=$WORK/.final.config
# a fresh directory each time: the last build's sandbox could write the old one
rm -rf -- "$CFG"
mkdir -- "$CFG"

# The fragments, in order: copies with plain names for merge_config.sh
# (it splits its file list on spaces), and all of them in one file for the
# check below and for the keys.
nmerge=0
rest=$fragments
: >"$REQ"
while [ -n "$rest" ]; do
	f=${rest%%"$NL"*}
	rest=${rest#*"$NL"}
	nmerge=$((nmerge + 1))
	cp -- "$f" "$CFG/frag-$nmerge.config"
	cat -- "$f" >>"$REQ"
	printf '\n' >>"$REQ"
done

# kconfig takes ~15 s here, most of it compiler probes, and its result
# depends only on these inputs: the recipe, the toolchain, and the files
# kconfig reads (every Kconfig*, the defconfigs and fragments, scripts/,
# the Makefiles). A patch to a .c file reuses the base build's config; a
# patch to a Kconfig file gets a fresh one. TLBLAB_NO_CONFIG_CACHE=1
# always regenerates.
cfgkey=$({
	printf 'base %s\n' "$base"
	if [ -n "$base_file" ]; then cat -- "$base_file"; fi
	cat "$REQ"
	uname -m
	[ -z "$cross" ] || printf 'arch %s\n' "$arch"
	"$kcc" --version
	"${cross}ld" --version | head -n 1
	rustc --version 2>/dev/null || true
	g ls-tree HEAD -- Makefile scripts "arch/$karch/Makefile" "arch/$karch/configs" kernel/configs
	g ls-tree -r HEAD | awk -F '\t' '$2 ~ /(^|\/)Kconfig[^\/]*$/'
} | sha256sum | cut -c1-64)
CFGCACHE=$WORK/config-cache
mkdir -p -- "$CFGCACHE"
find "$CFGCACHE" -type f -mtime +30 -exec rm -f {} + 2>/dev/null || true
if [ "${TLBLAB_NO_CONFIG_CACHE:-0}" != 1 ] && [ -s "$CFGCACHE/$cfgkey" ]; then
	say "config: same kconfig inputs as an earlier build, reusing its .config"
	cp -- "$CFGCACHE/$cfgkey" "$FINAL"
	touch -- "$CFGCACHE/$cfgkey"
else
	sb_own "$CFG"
	SB_RW=$CFG
	case $base in
	tinyconfig | defconfig)
		say "config: make $base"
		run kmake "$CFG" "$base" || fail infra "make $base failed"
		;;
	*)
		say "config: base $base_file"
		cp -- "$base_file" "$CFG/.config"
		;;
	esac
	merge_fragments() {
		set --
		_i=0
		while [ "$_i" -lt "$nmerge" ]; do
			_i=$((_i + 1))
			set -- "$@" "frag-$_i.config"
		done
		[ $# -gt 0 ] || return 0
		say "config: merging $# fragment(s)"
		# merge_config.sh makes its temp files in the current directory
		# (the sandbox starts in SB_RW, the config directory).
		run sb sh "$SRC/scripts/kconfig/merge_config.sh" -m -O . .config "$@"
	}
	merge_fragments || fail infra "merge_config.sh failed"
	run kmake "$CFG" olddefconfig || fail infra "make olddefconfig failed"
	sb_cat "$CFG/.config" >"$FINAL" || fail infra "kconfig left no .config"
	SB_RW=
	# only the tree's own kconfig fills the cache another build reads
	if [ "$trusted" = 1 ]; then
		cp -- "$FINAL" "$CFGCACHE/$cfgkey.tmp"
		mv -- "$CFGCACHE/$cfgkey.tmp" "$CFGCACHE/$cfgkey"
	fi
fi
final=$FINAL

# Every option the fragments set (the last setting wins, as when merging)
# must be in the final .config with the same value; "is not set" and =n
# must not be set.
awk '
function trim(s) { sub(/[ \t\r]+$/, "", s); return s }
NR == FNR {
	line = trim($0)
	if (line ~ /^CONFIG_[A-Za-z0-9_]+=/) {
		name = substr(line, 1, index(line, "=") - 1)
		val = substr(line, index(line, "=") + 1)
	} else if (line ~ /^# CONFIG_[A-Za-z0-9_]+ is not set$/) {
		name = line; sub(/^# /, "", name); sub(/ is not set$/, "", name)
		val = "n"
	} else
		next
	if (!(name in want)) order[++n] = name
	want[name] = val
	next
}
/^CONFIG_[A-Za-z0-9_]+=/ {
	line = trim($0)
	have[substr(line, 1, index(line, "=") - 1)] = substr(line, index(line, "=") + 1)
}
END {
	for (i = 1; i <= n; i++) {
		name = order[i]
		if (want[name] == "n") {
			if (name in have)
				printf "%s is not set requested, final .config has %s=%s\n", name, name, have[name]
		} else if (!(name in have)) {
			printf "%s=%s requested, final .config has it not set\n", name, want[name]
		} else if (have[name] != want[name]) {
			printf "%s=%s requested, final .config has %s=%s\n", name, want[name], name, have[name]
		}
	}
}' "$REQ" "$final" >"$WORK/.dropped"
if [ -s "$WORK/.dropped" ]; then
	tee -a "$LOG" <"$WORK/.dropped"
	names=$(awk '{ sub(/[= ].*/, ""); printf "%s%s", sep, $0; sep = " " }' "$WORK/.dropped")
	fail config "$(wc -l <"$WORK/.dropped") option(s) from the fragments did not survive olddefconfig (unmet dependencies?): $names" "$WORK/.dropped"
fi

config_hash=$(sha256sum <"$final" | cut -c1-64)
compiler=$("$kcc" --version | head -n 1)
build_id=$({
	[ -z "$cross" ] || printf 'arch %s\n' "$arch"
	printf '%s\n' "$commit"
	cat "$final"
	printf '\n%s' "$compiler"
} | sha256sum | cut -c1-64)
build_host=b-$(printf '%s' "$build_id" | cut -c1-12)
dest=$OUT/$build_id
say "build id $build_id (config $config_hash)"

# The object dir belongs to the config recipe, so a patched build after its
# base build is incremental. The .config is copied only when it differs: a
# new mtime alone makes kconfig and kbuild redo work.
objkey=$({
	[ -z "$cross" ] || printf 'arch %s\n' "$arch"
	printf 'base %s\n' "$base"
	if [ -n "$base_file" ]; then cat -- "$base_file"; fi
	cat "$REQ"
} | sha256sum | cut -c1-16)
OBJ=$WORK/obj-$objkey
mkdir -p -- "$OBJ"
sb_own "$OBJ"
if [ "$trusted" = 0 ]; then
	# A copy keeps the build incremental (cp -a copies links as links). The
	# sandbox sees it at the shared directory's own path: objtool and the
	# .cmd files record absolute paths, and another path rebuilds it all.
	private_obj=$WORK/objp-$objkey
	rm -rf -- "$private_obj"
	cp -a -- "$OBJ" "$private_obj" || fail infra "cannot copy $OBJ for a private build"
	SB_RW_HOST=$private_obj
fi
# ccache is off for a compiler's first build in WORK (into a new object
# dir): the cache holds nothing it could return, and a miss preprocesses
# every file once more before compiling it. On this project's 2-core
# builders a cold `make mm/ kernel/sched/` took 42.5 and 39.3 s with plain
# gcc, 53.2 and 52.3 s through an empty ccache (2026-12-05), a quarter more. The first build's objects
# stay in its object directory, which the builds that follow reuse; ccache
# fills from the second build on (other commits, other recipes). WORK's
# .ccache-compilers lists the compilers that have built here; a ccache
# the builder names (--ccache, CCACHE_DIR) may hold other builders'
# objects, so it is always used.
ccache_seen=$WORK/.ccache-compilers
if [ "$CCACHE_DIR" = "$WORK/ccache" ] && [ ! -f "$OBJ/vmlinux" ] &&
	! grep -qxF -- "$compiler" "$ccache_seen" 2>/dev/null; then
	SB_CCACHE=off
	say "ccache: the first build with $(oneline "$compiler") in $WORK: ccache off (an empty cache only adds its own preprocessing)"
fi

SB_RW=$OBJ
sb_exec sh -c 'cat >.config.new && if cmp -s .config.new .config; then rm -f .config.new; else mv -f .config.new .config; fi' \
	<"$final" || fail infra "cannot put the .config into $OBJ"

# emit_ok CACHED WARNINGS KERNELRELEASE: the success facts.
emit_ok() {
	finished=1
	grep -qxF -- "$compiler" "$ccache_seen" 2>/dev/null ||
		{ printf '%s\n' "$compiler" >>"$ccache_seen"; } 2>/dev/null || true
	printf 'TLBLAB status ok\n'
	printf 'TLBLAB build_id %s\n' "$build_id"
	printf 'TLBLAB commit %s\n' "$commit"
	printf 'TLBLAB config_hash %s\n' "$config_hash"
	printf 'TLBLAB compiler %s\n' "$(oneline "$compiler")"
	printf 'TLBLAB cached %s\n' "$1"
	printf 'TLBLAB dir %s\n' "$dest"
	printf 'TLBLAB duration %s\n' "$(($(date +%s) - start))"
	printf 'TLBLAB warnings %s\n' "$2"
	printf 'TLBLAB kernelrelease %s\n' "$(oneline "$3")"
	printf 'TLBLAB build_host %s\n' "$build_host"
	printf 'TLBLAB arch %s\n' "$arch"
	printf 'TLBLAB image %s\n' "$image"
	printf 'TLBLAB image_sha256 %s\n' "$image_sha256"
	exit 0
}

# meta_field NAME: a field of an existing meta.json (one field per line).
meta_field() {
	sed -n "/^  \"$1\": /{s/^  \"$1\": //; s/,\$//; s/^\"//; s/\"\$//; p; q}" "$dest/meta.json" 2>/dev/null
}

# A cached kernel is reused only while its image still has the hash its
# build recorded; one without a recorded hash predates the sandbox (x86_64
# kernels built before --arch recorded it as bzimage_sha256).
if [ -f "$dest/$image" ] && { [ "$want_vmlinux" = 0 ] || [ -f "$dest/vmlinux" ]; }; then
	image_sha256=$(sha256sum <"$dest/$image" | cut -c1-64)
	recorded=$(meta_field image_sha256)
	[ -n "$recorded" ] || recorded=$(meta_field bzimage_sha256)
	# A tree's own kernel is reused only once its object directory has been
	# built too: the patched builds that follow copy it to be incremental,
	# and a recipe whose fragments were reorganised (same .config, new
	# object directory) would otherwise leave every one of them a full build.
	if [ "$recorded" = "$image_sha256" ] && { [ "$trusted" = 0 ] || [ -f "$OBJ/vmlinux" ]; }; then
		say "$dest exists: cached, objects in $OBJ"
		emit_ok 1 "$(meta_field warnings)" "$(meta_field kernelrelease)"
	elif [ "$recorded" = "$image_sha256" ]; then
		say "$dest exists, but $OBJ was never built: building it (ccache) for the patched builds that follow"
	else
		say "$dest exists but its $image ${recorded:+does not match its recorded hash}${recorded:-has no recorded hash}: building again"
	fi
fi

# ---- the build -------------------------------------------------------------

step="building"
say "make -j$jobs $image${cross:+ (ARCH=$karch CROSS_COMPILE=$cross)} in $OBJ${private_obj:+ (a private copy)} (ccache $CCACHE_DIR)"
make_from=$(($(wc -l <"$LOG") + 1))
build_rc=0
run kmake "$OBJ" -j"$jobs" \
	KBUILD_BUILD_USER=tlblab KBUILD_BUILD_HOST="$build_host" \
	KBUILD_BUILD_TIMESTAMP="$BUILD_TIMESTAMP" KBUILD_BUILD_VERSION=1 \
	"$image" || build_rc=$?
tail -n +"$make_from" "$LOG" >"$WORK/.make.out"
warnings=$(grep -c 'warning:' "$WORK/.make.out" || true)

if [ "$build_rc" != 0 ]; then
	# Paths are made relative to the tree: "arch/x86/mm/tlb.c:1046:3: error".
	# gcc names the source as make passed it: absolute, or relative to OBJ
	# ("../src/...") once ccache's BASEDIR has rewritten it.
	awk -v src="$SRC/" -v obj="$OBJ/" '
	function strip(s, p,   i) {
		while ((i = index(s, p)) > 0)
			s = substr(s, 1, i - 1) substr(s, i + length(p))
		return s
	}
	function clean(s) {
		s = strip(strip(s, src), obj)
		while (sub(/(^|[ \t(])\.\.\/src\//, "&\001", s))
			sub(/\.\.\/src\/\001/, "", s)
		return s
	}
	/: (fatal )?error: |: Error: |undefined reference to |^ld: / {
		if (n < 20) { print clean($0); n++ }
	}
	# make[4]: *** [/src/scripts/Makefile.build:250: arch/x86/mm/tlb.o] Error 1
	/^make(\[[0-9]+\])?: \*\*\* \[/ && target == "" {
		t = substr($0, index($0, "*** [") + 5)
		t = substr(t, 1, index(t, "]") - 1)
		k = split(t, a, ": ")
		target = clean(a[k])
	}
	END { if (target != "") print "make target: " target }
	' "$WORK/.make.out" >"$WORK/.excerpt"
	if grep -Eq 'No space left on device|Cannot allocate memory|virtual memory exhausted|Killed signal terminated program|please install' "$WORK/.make.out"; then
		grep -Em3 'No space left on device|Cannot allocate memory|virtual memory exhausted|Killed signal terminated program|please install' "$WORK/.make.out" >"$WORK/.excerpt"
		fail infra "the builder ran out of resources or lacks a tool: $(head -n 1 "$WORK/.excerpt")" "$WORK/.excerpt"
	fi
	if [ ! -s "$WORK/.excerpt" ]; then
		tail -n 15 "$WORK/.make.out" >"$WORK/.excerpt"
	fi
	first=$(grep -m1 -E 'error|Error|undefined reference' "$WORK/.excerpt" || head -n 1 "$WORK/.excerpt")
	fail build "build failed (make exit $build_rc): $first" "$WORK/.excerpt"
fi

# le_num FILE OFFSET NBYTES: the little-endian number at OFFSET of FILE.
le_num() {
	od -An -tu1 -j "$2" -N "$3" -- "$1" | awk '{ for (i = NF; i >= 1; i--) v = v * 256 + $i } END { print v + 0 }'
}

# check_image IMAGE: IMAGE is this build's kernel, or nothing is stored.
# A stale object from a cache is otherwise seen only at the boot, by the
# /proc/version check, and fails every boot of a build stored as good.
# The image names this build's host (x86's setup code carries the version
# string; arm64's Image is the kernel itself). x86's payload, which
# piggy.S pulls in with .incbin, must be byte for byte the compressed
# vmlinux this make wrote: its place and length are in the boot header
# (setup_sects at 0x1f1, payload_offset and payload_length at 0x248 and
# 0x24c, from the end of the setup code).
check_image() {
	grep -qaF "(tlblab@$build_host)" "$1" ||
		fail infra "the $image this build made does not name its build host $build_host: a stale image, not stored"
	[ "$karch" = x86 ] || return 0
	case $(sed -nE 's/^CONFIG_KERNEL_(GZIP|BZIP2|LZMA|XZ|LZO|LZ4|ZSTD)=y$/\1/p' "$final") in
	GZIP) _z=gz ;;
	BZIP2) _z=bz2 ;;
	LZMA) _z=lzma ;;
	XZ) _z=xz ;;
	LZO) _z=lzo ;;
	LZ4) _z=lz4 ;;
	ZSTD) _z=zst ;;
	*) fail infra "the .config chooses no kernel compression (CONFIG_KERNEL_GZIP, CONFIG_KERNEL_XZ, ...)" ;;
	esac
	_payload=arch/x86/boot/compressed/vmlinux.bin.$_z
	sb_cat "$OBJ/$_payload" >"$WORK/.payload" || fail infra "the build left no $_payload"
	_sects=$(le_num "$1" 497 1)
	[ "$_sects" != 0 ] || _sects=4
	_off=$(((_sects + 1) * 512 + $(le_num "$1" 584 4)))
	_len=$(le_num "$1" 588 4)
	if [ "$_len" != "$(($(wc -c <"$WORK/.payload")))" ] ||
		! tail -c +"$((_off + 1))" -- "$1" | head -c "$_len" | cmp -s - "$WORK/.payload"; then
		fail infra "the bzImage's payload is not the $_payload this make wrote (a stale piggy.o from a cache?): not stored"
	fi
	rm -f -- "$WORK/.payload"
}

step="collecting the artifacts"
kernelrelease=$(kmake "$OBJ" -s kernelrelease 2>/dev/null | tail -n 1)
[ -n "$kernelrelease" ] || fail infra "make kernelrelease printed nothing"
tmpout=$OUT/.tmp-$$-$build_id
rm -rf -- "$tmpout"
mkdir -- "$tmpout"
sb_cat "$OBJ/arch/$karch/boot/$image" >"$tmpout/$image" || fail infra "the build left no arch/$karch/boot/$image"
check_image "$tmpout/$image"
cp -- "$final" "$tmpout/config"
sb_cat "$OBJ/System.map" >"$tmpout/System.map" || fail infra "the build left no System.map"
if [ "$want_vmlinux" = 1 ]; then
	sb_cat "$OBJ/vmlinux" >"$tmpout/vmlinux" || fail infra "the build left no vmlinux"
fi
SB_RW=
SB_RW_HOST=
if [ -n "$private_obj" ]; then
	rm -rf -- "$private_obj"
	private_obj=
fi
image_sha256=$(sha256sum <"$tmpout/$image" | cut -c1-64)

json_str() {
	printf '"%s"' "$(oneline "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"
}
duration=$(($(date +%s) - start))
say "built in ${duration}s with $warnings warning(s): $kernelrelease"
cp -- "$LOG" "$tmpout/build.log"
{
	printf '{\n'
	printf '  "build_id": %s,\n' "$(json_str "$build_id")"
	printf '  "commit": %s,\n' "$(json_str "$commit")"
	printf '  "base_ref": %s,\n' "$(json_str "$ref")"
	printf '  "base_commit": %s,\n' "$(json_str "$base_commit")"
	printf '  "config_hash": %s,\n' "$(json_str "$config_hash")"
	printf '  "compiler": %s,\n' "$(json_str "$compiler")"
	printf '  "duration_s": %s,\n' "$duration"
	printf '  "warnings": %s,\n' "$warnings"
	printf '  "kernelrelease": %s,\n' "$(json_str "$kernelrelease")"
	printf '  "build_host": %s,\n' "$(json_str "$build_host")"
	printf '  "arch": %s,\n' "$(json_str "$arch")"
	printf '  "image": %s,\n' "$(json_str "$image")"
	printf '  "image_sha256": %s,\n' "$(json_str "$image_sha256")"
	printf '  "cached": 0\n'
	printf '}\n'
} >"$tmpout/meta.json"

# Publish by rename. A directory already there without vmlinux (asked for
# now) is replaced; one that appeared meanwhile is kept.
if [ -d "$dest" ]; then
	mv -T -- "$dest" "$OUT/.tmp-$$-old" 2>/dev/null || true
	rm -rf -- "$OUT/.tmp-$$-old"
fi
if ! mv -T -- "$tmpout" "$dest" 2>/dev/null; then
	[ -f "$dest/$image" ] || fail infra "cannot publish $dest"
fi
tmpout=
emit_ok 0 "$warnings" "$kernelrelease"
