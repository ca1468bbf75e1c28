#!/bin/sh
# daemon/stats against an independent implementation: tests/tools/stats-ref.py
# writes a few hundred vectors (fixed seed: exact and asymptotic
# Mann-Whitney, ties, equal and constant samples, n = 2, heavy tails,
# shifts), tests/tools/stats-cli computes every statistic with daemon/stats,
# and scipy 1.10 / numpy (Debian's python3-scipy) give the reference. One
# line per family, with how many vectors agreed and the largest deviation.
# The bootstrap is checked on a subset by replaying its random stream in
# Python: same seed, same interval.
. "$(dirname "$0")/../lib.sh"

CLI=$TMP/stats-cli
build_tool stats-cli "$CLI" tests/tools/stats-cli.c daemon/analysis/stats.c lib/strbuf.c lib/util.c -ljansson -lm || exit 1
py_has scipy "scipy, numpy" python3-scipy || exit 1

REF="$PY $TOP/tests/tools/stats-ref.py"
if ! $REF gen "$TMP/cases.jsonl" 2>"$TMP/gen.out"; then
	fail "generate reference vectors" "$(tail -n 3 "$TMP/gen.out")"
	exit 1
fi
if ! "$CLI" <"$TMP/cases.jsonl" >"$TMP/c.jsonl" 2>"$TMP/cli.out"; then
	fail "stats-cli on $(wc -l <"$TMP/cases.jsonl") vectors" "$(tail -n 3 "$TMP/cli.out")"
	exit 1
fi
head -n 60 "$TMP/cases.jsonl" >"$TMP/boot-cases.jsonl"
if ! "$CLI" --resamples 300 --seed 7 <"$TMP/boot-cases.jsonl" >"$TMP/boot.jsonl" 2>"$TMP/cli.out"; then
	fail "stats-cli --resamples 300" "$(tail -n 3 "$TMP/cli.out")"
	exit 1
fi

$REF compare "$TMP/cases.jsonl" "$TMP/c.jsonl" "$TMP/boot.jsonl" 300 7 \
	>"$TMP/cmp.out" 2>"$TMP/cmp.err"
st=$?
tab=$(printf '\t')
n=0
while IFS="$tab" read -r family status msg; do
	n=$((n + 1))
	case $status in
	ok) pass "$msg" ;;
	*) fail "$family" "$msg" ;;
	esac
done <"$TMP/cmp.out"
if [ "$n" -lt 5 ] || { [ "$st" != 0 ] && ! grep -q "${tab}fail${tab}" "$TMP/cmp.out"; }; then
	fail "stats-ref.py compare" "exit $st, $n families: $(tail -n 3 "$TMP/cmp.err")"
fi

# the same seed gives the same interval, run after run
if "$CLI" --resamples 300 --seed 7 <"$TMP/boot-cases.jsonl" | cmp -s - "$TMP/boot.jsonl"; then
	pass "bootstrap: a second run with the same seed prints identical output"
else
	fail "bootstrap: a second run with the same seed prints identical output" "outputs differ"
fi
exit 0
