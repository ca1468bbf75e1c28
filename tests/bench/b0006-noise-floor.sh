#!/bin/sh
# The embedded lab's noise floor: how much each headline metric of the tlb
# suite moves from boot to boot when nothing changes. The lab kernel is
# booted NOISE_BOOTS times (default 5) with vCPU pinning on and as many with
# it off, alternately (on, off, off, on, ...: a drift of the host hits both
# alike), by the daemon's own boot code (tests/tools/qemu-boot, the machine
# of configs/local.yaml); in each boot the tlb suite's specs, as the daemon
# sends them, run through the agent over SSH. One boot's sample is the
# median of its measured iterations, as in an A/B job. Reported per metric
# and setting: the median over boots, the per-boot spread (coefficient of
# variation of the per-boot medians) and min/max, then the ratio of the
# spreads, pinned over unpinned, measured in this one run.
#
# Knobs, to explore what lowers the spread (each applies to every spec):
#   NOISE_BOOTS=5  NOISE_DURATION=s  NOISE_ITERATIONS=n  NOISE_WARMUP=n
#   NOISE_INTERVAL=s (the agent's sampler)  NOISE_PIN="on off" (settings;
#   "host" runs the specs with no VM, on this machine: the floor under the VM)
#   QEMU_APPEND="..." (added to the guest kernel's command line)
#   TLBLAB_GUEST_AGENT=path (the agent in the guest; default build/tlblab-agent)
# The load average is printed next to the figures: a busy host is noisy.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/guest.sh"

BOOTS=${NOISE_BOOTS:-5}
PINS=${NOISE_PIN:-on off}
trap 'qemu_boot_end; [ -n "${NOISE_KEEP:-}" ] && cp -r "$TMP" "$NOISE_KEEP"; rm -rf "$TMP"' EXIT

say() { echo "b0006: $*"; }
if ! kernel=$(lab_kernel CONFIG_PERF_EVENTS=y CONFIG_EVENTFD=y); then
	say "no lab kernel: $(tail -n 5 "$TMP/build.log")"
	exit 1
fi
qemu_guest 10027 b06 || { say "$(cat "$TMP/guest.why")"; exit 1; }
{
	qemu_machine_yaml
	sed -n '/^suites:/,$p' "$TOP/configs/local.yaml"
} >"$TMP/lab.yaml"
"$QEMU_BOOT" "$TMP/lab.yaml" --specs tlb >"$TMP/specs.suite" || { say "no tlb suite"; exit 1; }
# the knobs, applied to every spec
$PY - "$TMP/specs.suite" >"$TMP/specs" <<'PYEOF'
import json, os, sys
knobs = {"duration": float, "iterations": int, "warmup": int, "interval": float}
for line in open(sys.argv[1]):
    spec = json.loads(line)
    for k, conv in knobs.items():
        v = os.environ.get("NOISE_" + k.upper())
        if v:
            spec[k] = conv(v)
    print(json.dumps(spec))
PYEOF
say "kernel $(basename "$(dirname "$kernel")"), $BOOTS boots per setting ($PINS), host $(nproc) CPUs, specs:"
sed 's/^/b0006:   /' "$TMP/specs"

qemu_boot_start "$TMP/lab.yaml"
t0=$(date +%s)
i=1
while [ "$i" -le "$BOOTS" ]; do
	order=$PINS
	# every other round in reverse order: on off, off on, ...
	[ $((i % 2)) = 0 ] && order=$(echo "$PINS" | awk '{ for (k = NF; k > 0; k--) printf "%s ", $k }')
	for pin in $order; do
		# "host": no VM; the agent runs the specs on this machine itself
		if [ "$pin" != host ] && ! qemu_boot_cmd "boot $kernel $pin"; then
			say "boot $i ($pin) failed: $(tail -n 2 "$TMP/boot.notes")"
			exit 1
		fi
		[ "$pin" = host ] && : >"$TMP/boot.notes"
		load=$(cut -d' ' -f1-3 /proc/loadavg)
		j=0
		while read -r spec; do
			if [ "$pin" = host ]; then
				printf '%s\n' "$spec" | "$GUEST_AGENT" run --spec - >"$TMP/out.$pin.$i.$j" 2>"$TMP/err.$pin.$i.$j"
			else
				printf '%s\n' "$spec" | guest 'tlblab-agent run --spec -' >"$TMP/out.$pin.$i.$j" 2>"$TMP/err.$pin.$i.$j"
			fi || say "boot $i ($pin) spec $j: exit $?: $(tail -c 300 "$TMP/err.$pin.$i.$j")"
			j=$((j + 1))
		done <"$TMP/specs"
		echo "$pin $i $load $(cut -d' ' -f1-3 /proc/loadavg) $(grep -o 'vCPU threads [a-z ]*pinned[^;]*' "$TMP/boot.notes" | head -n 1)" \
			>>"$TMP/boots"
		say "boot $i pinning $pin: done at $(($(date +%s) - t0)) s, load $load -> $(cut -d' ' -f1-3 /proc/loadavg)"
		[ "$pin" = host ] || qemu_boot_cmd stop || { say "stop failed"; exit 1; }
	done
	i=$((i + 1))
done

$PY - "$TMP" "$PINS" <<'PYEOF'
import glob, json, os, statistics, sys
tmp, pins = sys.argv[1], sys.argv[2].split()
HEADLINE = {"mprotect": "mprotect.ops_per_sec", "mremap": "mremap.moves_per_sec",
            "fault-write": "fault-write.total_sec", "tcp-rr": "tcp-rr.trans_per_sec",
            "stencil": "stencil.mflops", "exec": "exec.score"}
# per (setting, row) the per-boot medians; a row is spec/case params + headline metric
rows, within = {}, {}
for path in sorted(glob.glob(os.path.join(tmp, "out.*"))):
    _, pin, boot, spec = os.path.basename(path).split(".")
    per = {}
    for line in open(path):
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if o.get("type") != "iteration" or o.get("warmup"):
            continue
        p = o["params"]
        score = HEADLINE.get(p["workload"])
        if score not in o["metrics"]:
            continue
        key = "%s %s workers=%s" % (p["workload"], p.get("mode", ""), p.get("workers"))
        per.setdefault((key, score), []).append(o["metrics"][score])
    for k, v in per.items():
        rows.setdefault(k, {}).setdefault(pin, []).append(statistics.median(v))
        if len(v) > 1 and statistics.mean(v):
            within.setdefault(k, {}).setdefault(pin, []).append(statistics.stdev(v) / statistics.mean(v) * 100)
loads = [l.split() for l in open(os.path.join(tmp, "boots"))]
print("b0006: load average during the boots (1-min, at start -> end of each boot's runs): %s"
      % ", ".join("%s %s->%s" % (l[0], l[2], l[5]) for l in loads))
# spread: CV of the per-boot medians (what an A/B job sees); within: the
# median over boots of the CV of one boot's iterations (moment to moment)
print("b0006: %-34s %-7s %5s %12s %7s %7s %12s %12s" % ("row", "pinning", "boots", "median", "spread", "within",
                                                       "min", "max"))
cvs = {p: [] for p in pins}
for (key, metric), by_pin in sorted(rows.items()):
    for pin in pins:
        v = by_pin.get(pin, [])
        if len(v) < 2:
            print("b0006: %-34s %-7s %5d  (too few boots)" % (key, pin, len(v)))
            continue
        m = statistics.median(v)
        cv = statistics.stdev(v) / statistics.mean(v) * 100 if statistics.mean(v) else float("nan")
        cvs[pin].append(cv)
        w = within.get((key, metric), {}).get(pin)
        print("b0006: %-34s %-7s %5d %12.6g %6.1f%% %7s %12.6g %12.6g" % (key, pin, len(v), m, cv,
              "%.1f%%" % statistics.median(w) if w else "-", min(v), max(v)))
for p in pins:
    if cvs[p]:
        print("b0006: median spread over the rows, %s: %.1f%% (target: every row <= 5%%)" % (p, statistics.median(cvs[p])))
if cvs.get("on") and cvs.get("off"):
    a, b = statistics.median(cvs["on"]), statistics.median(cvs["off"])
    print("b0006: ratio on/off %.2f" % (a / b if b else float("nan")))
PYEOF
