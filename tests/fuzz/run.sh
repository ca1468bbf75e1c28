#!/bin/sh
# Runs each fuzzer named (build/fuzz/fuzzer-NAME, from `make fuzz`) for
# FUZZ_SECONDS, one after the other, niced and as one job, so a shared
# machine stays usable. Each starts from its committed corpus
# (tests/fuzz/NAME/corpus), with its dictionary (NAME.dict), and works in
# $BUILD/work/NAME. Then the corpus is minimised with -merge=1: the inputs
# named by hand (the seeds, crash-*: the inputs that once crashed it) are
# kept, and of the others and the new ones only those that add coverage
# to them, edges only (named by their SHA-1). A crash, leak or sanitizer report stops
# that fuzzer and leaves the input in $BUILD/artifacts/NAME/; the corpus
# is then left as it was.
# Inputs go up to 1 MiB (-max_len), the size of a job's body
# (lab.max_body): a parser that is slow on large inputs shows there. An
# input that takes a second or more is a finding too: libFuzzer keeps it
# in the artifacts (slow-unit-*); as its clock is the wall's, and the
# fuzzer runs niced on a shared machine, each such input is timed again
# alone, and the line says SLOW when it still takes a second.
# At the end one line per fuzzer: executions, coverage (edges, features),
# the longest input it tried, time, corpus size (and SLOW with an input
# that took a second or more), or CRASH with the artifact. Exits non-zero
# on a crash or a slow input.
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
	dict=$top/tests/fuzz/$name/$name.dict
	work=$top/$BUILD/work/$name
	art=$top/$BUILD/artifacts/$name
	mkdir -p "$work/new" "$art" "$corpus"
	set --
	[ -f "$dict" ] && set -- -dict="$dict"
	echo "fuzz: $name for ${FUZZ_SECONDS}s"
	t0=$(date +%s)
	# -jobs=1 writes libFuzzer's output to fuzz-0.log in the current directory
	(cd "$work" && rm -f fuzz-0.log &&
		ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		nice -n 19 "$fuzzer" "$@" -jobs=1 -max_total_time="$FUZZ_SECONDS" -timeout=10 \
			-max_len=1048576 -report_slow_units=1 \
			-rss_limit_mb=2048 -artifact_prefix="$art/" -print_final_stats=1 \
			"$work/new" "$corpus" >/dev/null 2>&1)
	t1=$(date +%s)
	log=$work/fuzz-0.log
	stats=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	[ -n "$execs" ] || execs=$(echo "$stats" | sed -n 's/^#\([0-9]*\).*/\1/p')
	cov=$(echo "$stats" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$stats" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	lim=$(echo "$stats" | sed -n 's/.* lim: \([0-9]*\).*/\1/p')
	# the inputs libFuzzer saw take a second or more, timed again alone
	slow_ms=0 slow_unit=
	for u in $(sed -n 's|.*Test unit written to \(.*/slow-unit-[0-9a-f]*\)$|\1|p' "$log"); do
		ms=$("$fuzzer" -runs=1 "$u" 2>&1 | sed -n 's/^Executed .* in \([0-9]*\) ms$/\1/p')
		if [ "${ms:-0}" -ge "$slow_ms" ]; then
			slow_ms=${ms:-0} slow_unit=$u
		fi
	done
	if grep -Eq '^==[0-9]+==ERROR|runtime error:|^==[0-9]+== ERROR: libFuzzer|^SUMMARY: ' "$log"; then
		status=1
		grep -E 'ERROR|runtime error|SUMMARY' "$log" | head -n 3
		line="$name: CRASH after $((t1 - t0)) s, ${execs:-?} executions: $(ls -t "$art" | grep -v '^slow-unit-' | head -n 1) in $art (log $log)"
	else
		before=$(ls "$corpus" | wc -l)
		min=$work/min
		rm -rf "$min" && mkdir -p "$min"
		mkdir -p "$work/old"
		for f in $(ls "$corpus"); do
			case "$f" in
			*[!0-9a-f]*) cp "$corpus/$f" "$min/" ;;
			*) [ ${#f} = 40 ] && mv "$corpus/$f" "$work/old/" || cp "$corpus/$f" "$min/" ;;
			esac
		done
		if nice -n 19 "$fuzzer" -merge=1 -use_counters=0 -max_len=1048576 "$min" "$work/old" "$work/new" >"$work/merge.log" 2>&1; then
			rm -f "$corpus"/* && cp "$min"/* "$corpus"/ && rm -rf "$work/old"
		else
			mv "$work/old"/* "$corpus"/ 2>/dev/null
			echo "fuzz: $name: merge failed, corpus kept (log $work/merge.log)"
		fi
		after=$(ls "$corpus" | wc -l)
		line="$name: ${execs:-?} executions in $((t1 - t0)) s, cov ${cov:-?}, ft ${ft:-?}, inputs up to ${lim:-?} bytes, corpus $before -> $after files"
		if [ "$slow_ms" -ge 1000 ]; then
			status=1
			line="$line; SLOW: $slow_unit takes $slow_ms ms"
		elif [ -n "$slow_unit" ]; then
			line="$line; the slowest input libFuzzer timed takes $slow_ms ms alone"
		fi
	fi
	echo "$line"
	summary="$summary$line
"
done
echo
printf '%s' "$summary"
exit $status
