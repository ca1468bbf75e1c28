#!/bin/sh
# Runs every test: the cmocka unit tests (TAP output) and the numbered shell
# tests, and ends with the line "N passed, N failed, N skipped". Exits non-zero when
# anything failed, or when a test program died without reporting.
#   TESTS=pattern   runs only the tests whose file name matches (grep -E)
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD
log=$(mktemp)
trap 'rm -f "$log"' EXIT
crashed=0

run_one() {
	name=$1
	shift
	echo "# $name"
	t0=$(date +%s)
	"$@" >"$log.out" 2>&1
	st=$?
	cat "$log.out"
	echo "# $name: $(($(date +%s) - t0)) s"
	grep -E '^(not )?ok ' "$log.out" >>"$log"
	if ! grep -Eq '^(not )?ok ' "$log.out"; then
		echo "not ok - $name reported nothing (exit $st)" | tee -a "$log"
	elif [ "$st" != 0 ] && ! grep -q '^not ok ' "$log.out"; then
		echo "not ok - $name exited $st after its results" | tee -a "$log"
	fi
	rm -f "$log.out"
}

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	if [ -n "${TESTS:-}" ] && ! echo "$t" | grep -Eq "$TESTS"; then continue; fi
	run_one "$(basename "$t")" env CMOCKA_MESSAGE_OUTPUT=TAP "$t"
done
for t in tests/integration/t[0-9]*.sh; do
	[ -f "$t" ] || continue
	if [ -n "${TESTS:-}" ] && ! echo "$t" | grep -Eq "$TESTS"; then continue; fi
	run_one "$(basename "$t")" sh "$t"
done

# "ok ... # SKIP why" is TAP's skip: counted apart, never as passed
skipped=$(grep -Ec '^ok .*# SKIP' "$log")
passed=$(($(grep -c '^ok ' "$log") - skipped))
failed=$(grep -c '^not ok ' "$log")
echo
if [ "$failed" -gt 0 ]; then
	echo "failures:"
	grep '^not ok ' "$log"
	echo
fi
if [ "$skipped" -gt 0 ]; then
	echo "skipped:"
	grep -E '^ok .*# SKIP' "$log"
	echo
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
