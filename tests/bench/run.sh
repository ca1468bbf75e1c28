#!/bin/sh
# make bench: every tests/bench/b*.sh in turn. Each prints its figures
# (medians and ratios measured in the same run); none asserts a wall-clock time.
# As each ends, its row of docs/measured/bench.md (BENCH_RECORD; empty: none)
# keeps what it printed (scripts/measured.sh); the whole output stays in
# $BUILD/bench/NAME.log.
set -u
cd "$(dirname "$0")/../.."
TOP=$(pwd) # for scripts/measured.sh
. scripts/measured.sh
BUILD=${BUILD:-build}
BENCH_RECORD=${BENCH_RECORD-docs/measured/bench.md}
commit=$(measured_commit)
mkdir -p "$BUILD/bench"

# figures LOG: the lines of LOG that carry a median, a p99, a target or a
# goal (the last 20), else its last 5, as one table cell
figures() {
	{ grep -Ei 'median|p99|target|goal' "$1" | tail -n 20 | grep . || tail -n 5 "$1"; } |
		sed 's/^[[:space:]]*//; s/`/'"'"'/g; s/^\(.\{240\}\).*/\1 [...]/; s/.*/`&`/' |
		awk '{ printf "%s%s", (NR > 1 ? "<br>" : ""), $0 } END { print "" }' | sed 's/|/\\|/g'
}

# record NAME START EXIT FIGURES: NAME's row of $BENCH_RECORD
record() {
	[ -n "$BENCH_RECORD" ] || return 0
	measured_head bench | measured_write "$BENCH_RECORD" key \
		"| $1 | $commit | $(measured_date) | $(measured_took "$2") | $3 | $4 |" ||
		echo "tests/bench/run.sh: could not write $BENCH_RECORD" >&2
}

status=0 all=$(measured_now) failed=
for b in tests/bench/b[0-9]*.sh; do
	# BENCHES=PATTERN: those benches only (their rows, not make bench's)
	[ -z "${BENCHES:-}" ] || echo "$b" | grep -Eq "$BENCHES" || continue
	name=$(basename "$b" .sh)
	name=${name%%-*}
	echo "== $(basename "$b")"
	t0=$(measured_now)
	{ sh "$b"; echo $? >"$BUILD/bench/$name.exit"; } | tee "$BUILD/bench/$name.log"
	st=$(cat "$BUILD/bench/$name.exit")
	[ "$st" = 0 ] || { status=1 failed="$failed $name"; }
	record "$name" "$t0" "$st" "$(figures "$BUILD/bench/$name.log")"
done
if [ -n "${BENCHES:-}" ]; then
	:
elif [ -n "$failed" ]; then
	record "make bench" "${TLBLAB_MAKE_START:-$all}" "$status" "exit not 0:$failed"
else
	record "make bench" "${TLBLAB_MAKE_START:-$all}" "$status" "every bench exited 0"
fi
exit $status
