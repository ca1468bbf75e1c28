#!/bin/sh
# The fuzzers' corpora replayed as a test: each parser of outside input
# (tests/fuzz/NAME: config, api, ingest, spec, patch, mbox, insn, bisect,
# alert, health) is fed every input its
# fuzzer kept, the seeds and the inputs that once crashed it among them,
# through the same harness linked as an ordinary program ($BUILD/tests/
# fuzz-NAME, tests/fuzz/replay.c), so no clang is needed. Under make check
# it runs with ASan and UBSan, leaks included. One line per parser, with
# how many inputs were replayed.
. "$(dirname "$0")/../lib.sh"

n=0
for dir in "$TOP"/tests/fuzz/*/corpus; do
	name=$(basename "$(dirname "$dir")")
	n=$((n + 1))
	bin=$BUILD/tests/fuzz-$name
	# make test builds them; a plain `make` does not (make check's are
	# sanitized, so only the plain ones are built here)
	case "$BUILD" in */check) ;; *)
		[ -x "$bin" ] || make -s -C "$TOP" BUILD="$BUILD" "$bin" >"$TMP/make.out" 2>&1 ;;
	esac
	if [ ! -x "$bin" ]; then
		fail "fuzz replay $name" "no $bin (make $bin)"
		continue
	fi
	files=$(ls "$dir" | wc -l)
	if [ "$files" -eq 0 ]; then
		fail "fuzz replay $name" "empty corpus $dir"
		continue
	fi
	if ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} "$bin" "$dir" >"$TMP/$name.out" 2>&1 &&
		grep -q "^replayed $files inputs$" "$TMP/$name.out"; then
		pass "fuzz replay $name: $files inputs"
	else
		fail "fuzz replay $name" "$(grep -E 'ERROR|runtime error|SUMMARY|replayed' "$TMP/$name.out" | head -n 3)"
		tail -n 20 "$TMP/$name.out" | sed 's/^/#   /'
	fi
done
[ "$n" -ge 10 ] || fail "fuzz corpora" "found $n of the 10 (tests/fuzz/*/corpus)"
