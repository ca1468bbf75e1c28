# Shared helpers for the numbered shell tests (tests/integration/tNNNN-*.sh).
# Each test prints TAP-style lines, "ok - NAME", "not ok - NAME # WHY" or
# "ok - NAME # SKIP WHY"; tests/run.sh counts them. Source this file; it sets:
#   TOP     the repository
#   BUILD   the build directory (build, or build/check under sanitizers)
#   AGENT   the tlblab-agent binary under test
#   GUEST_AGENT  the static agent (build/tlblab-agent) for QEMU guests
#   TMP     a scratch directory removed at exit
#   CACHE   the lab's cache the kernel and QEMU tests share (the kernel
#           tree, builds, ccache, the guests' initramfs): TLBLAB_CACHE or
#           /var/cache/tlblab
# shellcheck shell=sh

TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac
AGENT=${AGENT:-$BUILD/tlblab-agent}
# the agent that goes into QEMU guests must be the static one: a sanitizer
# build (make check) is linked dynamically against libasan
GUEST_AGENT=$TOP/build/tlblab-agent
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tlblab-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# the lab's user may pass through (a build as that user reads a patch here);
# it lists nothing, and what a test keeps secret is 0600
chmod 711 "$TMP"
PY=/usr/bin/python3
CACHE=${TLBLAB_CACHE:-/var/cache/tlblab}
# The lab's user (lab.user of configs/local.yaml): what is in its
# directories of $CACHE (the builder's checkout, objects and kernels, the
# guests' keys) is touched as that user only, never as root
# (docs/security.md); as_lab CMD runs CMD so (scripts/as-user.sh: a clean
# environment, no capability).
LAB_USER=tlblab
as_lab() { sh "$TOP/scripts/as-user.sh" "$LAB_USER" "$@"; }
# need_lab_user NAME WHY: the test is about what root does for the lab's
# user: skipped (NAME, WHY) when not root, failed when the user is missing;
# either way the test ends
need_lab_user() {
	if [ "$(id -u)" != 0 ]; then
		skip "$1" "not root: $2"
		exit 0
	fi
	if ! id -u "$LAB_USER" >/dev/null 2>&1; then
		fail "the user $LAB_USER exists" "scripts/deps.sh test makes it"
		exit 0
	fi
}
# lab_tmp: $TMP/lab, a directory of the lab user's for what a test makes
# as that user
lab_tmp() {
	[ -d "$TMP/lab" ] || install -d -o "$LAB_USER" -g "$LAB_USER" "$TMP/lab"
}

# The kernel log's line saying that this host's kernel makes remote TLB
# flushes by hypercall (PVM, Hyper-V), or nothing: then no CPU receives a
# shootdown, and the agent calls those counters unavailable, not 0 (the
# tests read the log themselves rather than take the agent's word).
PVFLUSH=$(dmesg 2>/dev/null | grep "remote TLB flush" | grep -E "hypercall|_HC_" | head -n 1 | sed 's/^\[[^]]*\] *//')
export PVFLUSH

pass() { echo "ok - $1"; }
fail() { echo "not ok - $1 # $2"; }
# skip NAME WHY: a check that cannot run here; counted as skipped, not
# passed. WHY is required: a skip that does not say why is a failure.
skip() {
	if [ -n "${2:-}" ]; then
		echo "ok - $1 # SKIP $2"
	else
		fail "$1" "skipped without saying why"
	fi
}

# backoff VAR MAX_MS: the pause between two looks at a condition. Sleeps
# VAR's milliseconds (100 while VAR is empty), then makes VAR half again as
# long, up to MAX_MS. A look is often a curl and a python3 (some 85 ms of
# CPU): at a fixed 0.1 s, a wait of minutes took most of a core from the
# guests of the other lane (t0055's bisection: a look every 0.1 s, plus
# the look's own time, for 320 s).
backoff() {
	eval "_bo=\${$1:-100}"
	sleep "$((_bo / 1000)).$(printf %03d $((_bo % 1000)))"
	_bo=$((_bo * 3 / 2))
	[ "$_bo" -le "$2" ] || _bo=$2
	eval "$1=\$_bo"
}

# wait_until SECONDS COMMAND...: runs COMMAND until it succeeds (true) or
# SECONDS have passed (false; its last output is in $TMP/wait.out): at
# once, then after 0.1 s, and backing off to a look a second (backoff).
# Waiting on a condition is done this way, never by a fixed sleep.
wait_until() {
	_wu_end=$(($(date +%s) + $1)) _wu_pause=
	shift
	until "$@" >"$TMP/wait.out" 2>&1; do
		[ "$(date +%s)" -lt "$_wu_end" ] || return 1
		backoff _wu_pause 1000
	done
}

# check NAME COMMAND...: passes when COMMAND exits 0; on failure shows its output.
check() {
	_name=$1
	shift
	if "$@" >"$TMP/check.out" 2>&1; then
		pass "$_name"
	else
		fail "$_name" "exit $? from: $*"
		sed 's/^/#   /' "$TMP/check.out" | tail -n 20
	fi
}

# check_status NAME WANT STATUS LOG: passes when the exit status STATUS (of
# a command already run) is WANT; on failure shows the end of LOG.
check_status() {
	if [ "$3" = "$2" ]; then
		pass "$1"
	else
		fail "$1" "exit $3: $(tail -c 400 "$4")"
	fi
}

# check_fails NAME EXPECTED_STATUS PATTERN COMMAND...: passes when COMMAND
# exits with EXPECTED_STATUS and its stderr+stdout match PATTERN (grep -E).
check_fails() {
	_name=$1 _want=$2 _pat=$3
	shift 3
	"$@" >"$TMP/check.out" 2>&1
	_st=$?
	if [ "$_st" = "$_want" ] && grep -Eq -- "$_pat" "$TMP/check.out"; then
		pass "$_name"
	else
		fail "$_name" "exit $_st (want $_want), output did not match /$_pat/"
		sed 's/^/#   /' "$TMP/check.out" | tail -n 10
	fi
}

# jq-like checks are done in Python: pyjson FILE 'python expression over L'
# where L is the list of JSON objects read from FILE (one per line).
pyjson() {
	_file=$1
	shift
	$PY - "$_file" "$@" <<'PYEOF'
import json, sys
L = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ok = eval(sys.argv[2], {"L": L, "by": lambda t: [o for o in L if o.get("type") == t]})
if not ok:
    sys.exit(1)
PYEOF
}

# build_tool NAME OUT SOURCE... [-lLIB...]: compiles a test's driver (from
# tests/tools and the modules it drives, paths relative to TOP) into OUT,
# here so the Makefile need not know about it; under make check
# (BUILD=build/check) with the same sanitizers as the suite. On failure the
# check "build NAME" fails with the compiler's last lines, and it returns 1.
build_tool() {
	_bt_name=$1 _bt_out=$2
	shift 2
	_bt_san=
	case "$BUILD" in */check) _bt_san="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined" ;; esac
	# the daemon's folders, as the Makefile's DAEMON_DIRS
	_bt_inc=$(cd "$TOP" && for _d in daemon daemon/*/; do printf ' -iquote %s' "${_d%/}"; done)
	# shellcheck disable=SC2086
	if ! (cd "$TOP" && ${CC:-cc} -std=c11 -D_GNU_SOURCE -pthread -Wall -Wextra $_bt_san -iquote lib $_bt_inc \
		"$@" -o "$_bt_out") >"$TMP/cc.out" 2>&1; then
		fail "build $_bt_name" "$(tail -n 5 "$TMP/cc.out")"
		return 1
	fi
}

# py_has NAME MODULES PACKAGE: $PY can import MODULES (comma-separated);
# when it cannot, the check "NAME for $PY" fails, naming the Debian PACKAGE
# to install, and it returns 1.
py_has() {
	if ! $PY -c "import $2" 2>"$TMP/py.out"; then
		fail "$1 for $PY" "$(tail -n 1 "$TMP/py.out") (apt-get install $3)"
		return 1
	fi
}

# kernels_stub DIR: a kernels directory for tlblabd -k DIR, whose build
# script set (DIR/build/) is the real one, copied file by file as
# kernels/build/parts.list names it, so the daemon uploads it whole; the
# test then writes its stand-in for DIR/build/build.sh (which may exec
# the real $TOP/kernels/build/build.sh).
kernels_stub() {
	mkdir -p "$1/build" || return 1
	cp "$TOP/kernels/build/parts.list" "$1/build/" || return 1
	for _p in $(grep -v '^#' "$TOP/kernels/build/parts.list"); do
		cp "$TOP/kernels/build/$_p" "$1/build/" || return 1
	done
}

# kernel_tree: for the tests that run kernels/build/build.sh: LINUX, the lab's
# tree ($CACHE/linux, imported by kernels/import-tree.sh unless it has
# v6.1-debian), WORK and OUT, and BUILD_SH. WORK and OUT are the ones the
# lab's builder on $CACHE uses for the tree linux (configs/local.yaml's,
# lab_guest_builder's: WORKDIR/tlblab/work-linux and WORKDIR/tlblab/out),
# so that the base kernel t0040 builds is the one the daemon's jobs find
# built (the same build id), and its objects and ccache are shared: on a
# fresh machine the lab kernel is compiled once. When the tree cannot be
# imported the test fails and ends.
kernel_tree() {
	LINUX=$CACHE/linux WORK=$CACHE/tlblab/work-linux OUT=$CACHE/tlblab/out BUILD_SH=$TOP/kernels/build/build.sh
	if ! sh "$TOP/scripts/lab-dirs.sh" "$CACHE" >"$TMP/lab-dirs.out" 2>&1; then
		fail "the lab's directories" "$(cat "$TMP/lab-dirs.out")"
		exit 0
	fi
	git -C "$LINUX" rev-parse -q --verify refs/tags/v6.1-debian >/dev/null 2>&1 && return 0
	if ! sh "$TOP/kernels/import-tree.sh" "$LINUX" >"$TMP/import.out" 2>&1; then
		fail "import the kernel tree" "kernels/import-tree.sh $LINUX failed (apt-get install linux-source-6.1)"
		sed 's/^/#   /' "$TMP/import.out" | tail -n 5
		exit 0
	fi
}

# kbuild NAME ARG...: build.sh (after kernel_tree), as the lab's user, with
# the lab's tree, WORK, OUT and config, and ARGs; output in $TMP/NAME.out, exit status in
# $ST. NO_CONFIG_CACHE=1 makes it run kconfig even when an earlier build had
# the same kconfig inputs.
kbuild() {
	_n=$1
	shift
	ST=0
	as_lab env TLBLAB_NO_CONFIG_CACHE="${NO_CONFIG_CACHE:-0}" sh "$BUILD_SH" --tree "$LINUX" --work "$WORK" --out "$OUT" \
		--config-base tinyconfig \
		--fragment "$TOP/kernels/fragments/lab-required.config" \
		--fragment "$TOP/kernels/fragments/qemu-x86_64.config" \
		"$@" >"$TMP/$_n.out" 2>&1 || ST=$?
}
