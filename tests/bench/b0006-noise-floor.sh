#!/bin/sh
# The embedded lab's noise floor, per class of row, measured through the
# daemon's own A/B path: two A/A jobs of the tlb suite (configs/local.yaml's)
# with a comment-only patch against v6.1-debian (both kernels do the same),
# NOISE_BOOTS boots a side (default 5), under icount with the instruction
# plugin, as the default lab runs:
#   solo  on vm1 alone: one kernel per boot, the sides interleaved (ABAB),
#         the lab's design before duets;
#   duet  on the duet vm1+vm2 (a host CPU each): each round's base and
#         patched boots run at once, and swap host CPUs every round.
# Reported per class (work: instructions per op and counters per op; wait:
# spin-wait instructions; time: the emulator's host wall-clock and CPU ns
# per op, and the workloads' own rates on the emulated clock): the per-boot
# spread (coefficient of variation of the per-boot medians, median over the
# rows and both sides) in each job; and for the time rows, the spread of
# the log ratio patched/base per round: paired (duet) against consecutive
# boots (solo). Targets: work rows <= 1%; time rows, paired, <= 5%.
set -u
PORT_BASE=27600
. "$(dirname "$0")/lib.sh"
export TLBLAB_TOKEN=bench-token-0123456789
BOOTS=${NOISE_BOOTS:-5}
lab_cache_ready "$CACHE"
{ embedded_lab "$CACHE" 10027,10026; lab_suites; } >"$tmp/lab.yaml"
comment_patch "$CACHE" "$tmp/comment.diff" || { echo "bench: cannot make the comment patch"; exit 1; }

start
export TLBLAB_SERVER="http://127.0.0.1:$port"
bench_job duet "$tmp/comment.diff" --boots "$BOOTS" --max-boots "$BOOTS"
bench_job solo "$tmp/comment.diff" --boots "$BOOTS" --max-boots "$BOOTS" --machines vm1
stop

/usr/bin/python3 - "$tmp" <<'PYEOF'
import json, math, os, statistics, sys
d = sys.argv[1]
status = 0
cmp = {}
for name in ("duet", "solo"):
    try:
        cmp[name] = json.load(open(os.path.join(d, name + "-cmp.json")))["comparison"]
    except Exception:
        job = json.load(open(os.path.join(d, name + "-job.json")))["job"]
        print("b0006: %s: job %s, no comparison (%s)" % (name, job["state"], job.get("error")))
        sys.exit(1)
    c = cmp[name]
    print("b0006: %s: %s s, %s+%s boots, verdict %s" % (name, open(os.path.join(d, name + ".secs")).read().strip(),
          c["provenance"]["boots"]["base"], c["provenance"]["boots"]["patched"], c["verdict"]))

def tested(r):
    return r.get("class") in ("work", "wait", "time") and r["base"].get("n", 0) >= 2

def spreads(c, cls):
    return [r[s]["spread_pct"] for r in c["rows"] if tested(r) and r["class"] == cls
            for s in ("base", "patched") if r[s].get("spread_pct") is not None]

def round_ratios(r):
    """sd (%) of log(patched/base) of boot i of each side: the rounds"""
    b, p = r["base"]["samples"], r["patched"]["samples"]
    x = [math.log(p[i] / b[i]) for i in range(min(len(b), len(p))) if b[i] > 0 and p[i] > 0]
    return 100 * statistics.stdev(x) if len(x) >= 3 else None

print("b0006: per-boot spread, median over rows and sides (rows):")
print("b0006:   %-6s %14s %14s" % ("class", "solo", "duet"))
for cls in ("work", "wait", "time"):
    v = {n: spreads(cmp[n], cls) for n in cmp}
    print("b0006:   %-6s %14s %14s" % (cls, *("%.2f%% (%d)" % (statistics.median(v[n]), len(v[n])) if v[n] else "-"
                                              for n in ("solo", "duet"))))
print("b0006: time rows, sd of the rounds' log ratio patched/base (solo: consecutive boots; duet: paired):")
print("b0006:   %-44s %-30s %8s %8s %10s" % ("row", "case", "solo", "duet", "duet p_method"))
solo_rows = {(r["metric"], r["params_text"]): r for r in cmp["solo"]["rows"]}
paired = []
for r in cmp["duet"]["rows"]:
    if not tested(r) or r["class"] != "time":
        continue
    s = solo_rows.get((r["metric"], r["params_text"]))
    pr = r.get("paired") or {}
    if pr.get("ratio_spread_pct") is not None:
        paired.append(pr["ratio_spread_pct"])
    so = round_ratios(s) if s else None
    print("b0006:   %-44s %-30s %7s%% %7s%% %10s" % (r["metric"][:44], r["params_text"][:30],
          "-" if so is None else "%.1f" % so,
          "-" if pr.get("ratio_spread_pct") is None else "%.1f" % pr["ratio_spread_pct"], r.get("p_method")))
work = spreads(cmp["duet"], "work") + spreads(cmp["solo"], "work")
if work:
    print("b0006: work rows, per-boot spread: median %.2f%% (target <= 1%%)" % statistics.median(work))
if paired:
    print("b0006: time rows, paired round ratios: median %.1f%% (target <= 5%%)" % statistics.median(paired))
else:
    print("b0006: time rows: no paired row (the duet's rounds did not run side by side)")
    status = 1
sys.exit(status)
PYEOF
