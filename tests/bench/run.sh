#!/bin/sh
# make bench: every tests/bench/b*.sh in turn. Each prints its figures
# (medians and ratios measured in the same run); none asserts a wall-clock time.
set -u
cd "$(dirname "$0")/../.."
status=0
for b in tests/bench/b[0-9]*.sh; do
	echo "== $(basename "$b")"
	sh "$b" || status=1
done
exit $status
