#!/bin/sh
# Runs every test: the cmocka unit tests (TAP output) and the numbered shell
# tests, and ends with the line "N passed, N failed, N skipped". Exits non-zero when
# anything failed, or when a test program died without reporting.
#   TESTS=pattern   runs only the tests whose file name matches (grep -E)
#   TEST_RECORD=FILE  adds the run's row to FILE (make test: a whole run's
#                   to docs/measured/make-test.md; scripts/measured.sh)
#   sh tests/run.sh --summarise <TAP   counts TAP text the same way, alone
set -u
cd "$(dirname "$0")/.."

# tap_results: reads a test program's output, writes its result lines, one
# per check, in a single form the summary counts: "ok ...", "not ok ..." or
# "ok ... # SKIP why". A skip is TAP's "# SKIP" directive, the first "#" of
# an "ok" line (tests/lib.sh), or cmocka's "not ok 2 # SKIP name", whose why
# is the line "# SKIP: why" the test printed before it (skip_because() in
# tests/unit/testlib.h). Any other "not ok" is a failure, and so is a skip
# that does not say why: a check that did not run tells what stopped it.
tap_results() {
	awk '
	/^not ok [0-9]+ # SKIP / {	# cmocka: the why was printed before
		name = $0
		sub(/^not ok [0-9]+ # SKIP +/, "", name)
		num = $3
		if (last == "")
			print "not ok " num " - " name " # skipped without saying why"
		else
			print "ok " num " - " name " # SKIP " last
		last = ""
		next
	}
	/^ok( |$)/ {
		d = index($0, "#")
		dir = d ? substr($0, d + 1) : ""
		sub(/^ +/, "", dir)
		if (toupper(substr(dir, 1, 4)) == "SKIP" && substr(dir, 5, 1) ~ /^( |$)/) {
			why = substr(dir, 5)
			sub(/^ +/, "", why)
			head = substr($0, 1, d - 1)
			sub(/ +$/, "", head)
			if (why == "")
				print "not " head " # skipped without saying why"
			else
				print head " # SKIP " why
		} else {
			print
		}
		last = ""
		next
	}
	/^not ok( |$)/ { print; last = ""; next }
	/^# SKIP: / { last = substr($0, 9) }
	'
}

# summarise: reads result lines (tap_results), prints the failures, the
# skips with their reasons and "N passed, N failed, N skipped"; true when
# nothing failed and something passed
summarise() {
	_res=$(cat)
	_skipped=$(printf '%s\n' "$_res" | grep -c '^ok [^#]*# SKIP ')
	_passed=$(($(printf '%s\n' "$_res" | grep -c '^ok ') - _skipped))
	_failed=$(printf '%s\n' "$_res" | grep -c '^not ok ')
	echo
	if [ "$_failed" -gt 0 ]; then
		echo "failures:"
		printf '%s\n' "$_res" | grep '^not ok '
		echo
	fi
	if [ "$_skipped" -gt 0 ]; then
		echo "skipped:"
		printf '%s\n' "$_res" | grep '^ok [^#]*# SKIP '
		echo
	fi
	echo "$_passed passed, $_failed failed, $_skipped skipped"
	[ "$_failed" -eq 0 ] && [ "$_passed" -gt 0 ]
}

if [ "${1:-}" = --summarise ]; then
	tap_results | summarise
	exit
fi

BUILD=${BUILD:-build}
export BUILD
TOP=$(pwd)
. scripts/measured.sh
started=$(measured_now) begun=$(measured_date) commit=$(measured_commit) lab=$(measured_lab)
log=$(mktemp)
trap 'rm -f "$log" "$log".*' EXIT

# run_one LOG NAME CMD...: runs a test, prints its output whole (under a
# lock, so that two lanes' outputs do not mix) and adds its result lines to
# LOG
run_one() {
	_log=$1 name=$2
	shift 2
	t0=$(date +%s)
	"$@" >"$_log.out" 2>&1
	st=$?
	dt=$(($(date +%s) - t0))
	tap_results <"$_log.out" >"$_log.res"
	{
		echo "# $name"
		cat "$_log.out"
		echo "# $name: $dt s"
		if ! [ -s "$_log.res" ]; then
			echo "not ok - $name reported nothing (exit $st)" | tee -a "$_log.res"
		elif [ "$st" != 0 ] && ! grep -q '^not ok ' "$_log.res"; then
			echo "not ok - $name exited $st after its results" | tee -a "$_log.res"
		fi
		grep '^not ok .*# skipped without saying why$' "$_log.res"
	} | flock "$log.lock" cat
	cat "$_log.res" >>"$_log"
	echo "$name $dt $(grep -c '^not ok ' "$_log.res")" >>"$log.times"
	rm -f "$_log.out" "$_log.res"
}

# Two lanes, side by side: the guest lane has the tests that boot guests,
# build kernels or work in the lab's directories (t0033-t0059: one
# builder's lock, one initramfs, fixed SSH ports for the guests), one after
# the other; the host lane has the rest (the unit tests, the daemon's and
# the client's tests on loopback) and four guest tests in their numbers'
# places: t0054 (failed runs), t0055 (nightly tracking and bisection,
# 4.5-10 minutes of guests and builds), t0056 (an arm64 job) and t0057 (a
# sweep of guest CPUs), so that the lanes end nearer each other (t0055's
# and t0057's guests run under icount, whose clock is the instructions
# run: a busy host slows them but does not starve them). On 805a7db
# (2026-12-06) the guest lane took 1661 s of tests and the host lane 980 s,
# and make test 28.3 minutes; t0054 and t0057 (158 s) moved after that. On
# 2ce17d9 the guest lane took 1623 s, the host lane 1484 s: t0056 (49 s,
# its own ports and arm64 cache) moved then. t0052 (reboot through GRUB) stays in the
# guest lane: its guest runs under multi-threaded TCG, and beside the
# other lane's guests and builds it failed twice in the host lane: on
# 0779740 its boot after the power cycle took more than 25 s, and on
# dc3193d (with 300 s for that boot, power_cycle_timeout) the fallback
# boot after the panic took more than 120 s, with RCU stall reports on
# its console. t0053 too (tried on 9887e63): it boots the lab kernel
# that t0040 builds, and t0040 moves that build's directory aside to
# check a stale image, so t0053 found its kernel gone. The two lanes' daemons, sshds and guests listen
# on ports apart (tests/daemon.sh: daemon_test; the guests of t0054,
# t0055, t0056 and t0057 on 10029, 10027, 10032 and 10031, no other
# test's; the daemon of t0054 from 35000, past every other test's range,
# and t0056's from 5000, below the guest lane's), builds wait
# for the builder's lock, and the
# guests' initramfs is replaced whole (kernels/mkinitramfs.sh). Under
# icount a guest's counts do not depend on the host's load. TEST_LANES=1
# runs every test in one lane, in order.
GUEST_LANE='/t00(3[3-9]|4[0-9]|5[0-3]|5[89])-'
selected() {
	[ -z "${TESTS:-}" ] || echo "$1" | grep -Eq "$TESTS"
}
lane() {
	# host | guest | all
	for t in "$BUILD"/tests/test_*; do
		[ -x "$t" ] && [ "$1" != guest ] && selected "$t" || continue
		run_one "$log.$1" "$(basename "$t")" env CMOCKA_MESSAGE_OUTPUT=TAP "$t"
	done
	for t in tests/integration/t[0-9]*.sh; do
		[ -f "$t" ] && selected "$t" || continue
		if echo "$t" | grep -Eq "$GUEST_LANE"; then
			[ "$1" != host ] || continue
		else
			[ "$1" != guest ] || continue
		fi
		run_one "$log.$1" "$(basename "$t")" sh "$t"
	done
}
# timed_lane host | guest | all: lane, and how long it took in $log.lanes
timed_lane() {
	_lt=$(date +%s)
	lane "$1"
	echo "$1 $(($(date +%s) - _lt))" >>"$log.lanes"
}

# record SUMMARY: this run's row of $TEST_RECORD, from $log.lanes and
# $log.times (each test: name, seconds, checks failed)
record() {
	_lanes=$(awk '$1 == "all" { print "one lane, " $2 " s"; next }
		{ printf "%s%s %s s", (n++ ? ", " : ""), $1, $2 } END { if (n) print "" }' "$log.lanes")
	_longest=$(sort -k2,2nr "$log.times" | head -n 5 |
		awk '{ sub(/-.*|\.sh$/, "", $1); printf "%s%s %s s", (NR > 1 ? ", " : ""), $1, $2 } END { print "" }')
	_failed=$(awk '$3 > 0 { sub(/-.*|\.sh$/, "", $1); printf "%s%s (%s)", (n++ ? ", " : "failed: "), $1, $3 }
		END { print n ? "" : "-" }' "$log.times")
	measured_head make-test | measured_write "$TEST_RECORD" history \
		"| $commit | $begun | $lab | $(measured_took "${TLBLAB_MAKE_START:-}") | $(measured_took "$started") | $_lanes | $1 | $_longest | $_failed |"
}

: >"$log.host"
: >"$log.guest"
: >"$log.all"
: >"$log.times"
: >"$log.lanes"
if [ "${TEST_LANES:-2}" -ge 2 ]; then
	timed_lane guest &
	guest=$!
	trap 'kill "$guest" 2>/dev/null; exit 130' INT TERM
	timed_lane host
	wait "$guest"
else
	timed_lane all
fi
cat "$log.guest" "$log.host" "$log.all" >"$log"
summarise <"$log" >"$log.summary"
st=$?
cat "$log.summary"
if [ -n "${TEST_RECORD:-}" ]; then
	record "$(tail -n 1 "$log.summary")" || echo "tests/run.sh: could not write $TEST_RECORD" >&2
fi
exit $st
