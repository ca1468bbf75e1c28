#!/bin/sh
# What watching the kernel costs: mprotect throughput with every counter
# monitor on, and with none, interleaved on/off so drift hits both sides
# alike. Two modes: 2 threads (the shootdown-heavy case, but on a VM whose
# vCPUs are scheduled by a busy host its throughput swings by tens of
# percent from run to run) and 2 processes (steady). Target: under 1%.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac
AGENT=${AGENT:-$BUILD/tlblab-agent}
RUNS=${RUNS:-10}
DURATION=${DURATION:-2}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

for MODE in threads processes; do
: >"$out"
i=0
while [ $i -lt "$RUNS" ]; do
	for side in on off; do
		if [ $side = on ]; then mon=""; else mon="--no-monitors"; fi
		# shellcheck disable=SC2086
		"$AGENT" run --workload mprotect --mode $MODE --workers 2 --duration "$DURATION" \
			--iterations 1 --warmup 0 $mon | grep '"type":"iteration"' | sed "s/^/$side /" >>"$out"
	done
	i=$((i + 1))
done
/usr/bin/python3 - "$out" "$RUNS" "$DURATION" "$MODE" <<'PYEOF'
import json, statistics, sys
on, off = [], []
for line in open(sys.argv[1]):
    side, js = line.split(" ", 1)
    v = json.loads(js)["metrics"]["mprotect.ops_per_sec"]
    (on if side == "on" else off).append(v)
mon, moff = statistics.median(on), statistics.median(off)
cost = (1 - mon / moff) * 100
print("monitor overhead: mprotect %s x2, %s runs of %s s per side, interleaved" % (sys.argv[4], sys.argv[2], sys.argv[3]))
print("  monitors on : median %12.0f ops/s  (min %.0f, max %.0f)" % (mon, min(on), max(on)))
print("  monitors off: median %12.0f ops/s  (min %.0f, max %.0f)" % (moff, min(off), max(off)))
print("  ratio on/off: %.4f  -> cost %.2f%% (target < 1%%: %s)" % (mon / moff, cost, "met" if cost < 1 else "NOT met"))
PYEOF
done
