# Shared helpers for the numbered shell tests (tests/integration/tNNNN-*.sh).
# Each test prints TAP-style lines, "ok - NAME", "not ok - NAME # WHY" or
# "ok - NAME # SKIP WHY"; tests/run.sh counts them. Source this file; it sets:
#   TOP     the repository
#   BUILD   the build directory (build, or build/check under sanitizers)
#   AGENT   the tlblab-agent binary under test
#   GUEST_AGENT  the static agent (build/tlblab-agent) for QEMU guests
#   TMP     a scratch directory removed at exit
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
PY=/usr/bin/python3

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

# wait_until SECONDS COMMAND...: runs COMMAND every 0.1 s until it succeeds
# (true) or SECONDS have passed (false; its last output is in $TMP/wait.out).
# Waiting on a condition is done this way, never by a fixed sleep.
wait_until() {
	_wu_end=$(($(date +%s) + $1))
	shift
	until "$@" >"$TMP/wait.out" 2>&1; do
		[ "$(date +%s)" -lt "$_wu_end" ] || return 1
		sleep 0.1
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
