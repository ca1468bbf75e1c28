#!/bin/sh
# Runs each fuzzer named (build/fuzz/fuzzer-NAME, from `make fuzz`) for
# FUZZ_SECONDS, one after the other, niced and as one job, so a shared
# machine stays usable. Each starts from its committed corpus
# (tests/fuzz/NAME/corpus) and works in $BUILD/work/NAME; what it found
# that is new is then merged back into the committed corpus (-merge=1 keeps
# only inputs that add coverage). A crash, leak or sanitizer report stops
# that fuzzer and leaves the input in $BUILD/artifacts/NAME/.
# At the end one line per fuzzer: executions, coverage, time, and "crash"
# with the artifact when it found one. Exits non-zero when any crashed.
# usage: BUILD=build/fuzz FUZZ_SECONDS=600 sh tests/fuzz/run.sh NAME...
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build/fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-600}
top=$(pwd)
summary=""
status=0
for name in "$@"; do
	fuzzer=$top/$BUILD/fuzzer-$name
	corpus=$top/tests/fuzz/$name/corpus
	work=$top/$BUILD/work/$name
	art=$top/$BUILD/artifacts/$name
	mkdir -p "$work" "$art" "$corpus"
	echo "fuzz: $name for ${FUZZ_SECONDS}s"
	t0=$(date +%s)
	# -jobs=1 writes libFuzzer's output to fuzz-0.log in the current directory
	(cd "$work" && rm -f fuzz-0.log &&
		ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		nice -n 19 "$fuzzer" -jobs=1 -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
			-artifact_prefix="$art/" -print_final_stats=1 "$work" "$corpus" >/dev/null 2>&1)
	t1=$(date +%s)
	log=$work/fuzz-0.log
	stats=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(echo "$stats" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$stats" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	crash=$(ls -t "$art" 2>/dev/null | head -n 1)
	if grep -Eq '^==[0-9]+==ERROR|runtime error:|^==[0-9]+== ERROR: libFuzzer' "$log"; then
		status=1
		grep -E 'ERROR|runtime error' "$log" | head -n 3
		line="$name: CRASH after $((t1 - t0)) s: $art/$crash (log $log)"
	else
		before=$(ls "$corpus" | wc -l)
		"$fuzzer" -merge=1 "$corpus" "$work" >/dev/null 2>&1
		after=$(ls "$corpus" | wc -l)
		line="$name: ${execs:-?} executions in $((t1 - t0)) s, cov ${cov:-?}, ft ${ft:-?}, corpus $before -> $after"
	fi
	echo "$line"
	summary="$summary$line
"
done
echo
printf '%s' "$summary"
exit $status
