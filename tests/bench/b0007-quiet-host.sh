#!/bin/sh
# What the quiet-host rule costs and buys, measured in one run. Two jobs on
# the embedded lab (one 2-vCPU QEMU machine and a builder on this host):
# X, the demo patch (builds cached) with 5 boots per side and a short
# mprotect suite, and Y, submitted right after it, whose patched kernel
# really rebuilds (the demo patch and a fresh comment: one file and the
# link), so Y's build runs while X boots and measures. Once with the rule
# (Y's build stopped while X measures) and once with lab.quiet_host: false.
# Reports per scenario: X's time from submit to done (what the rule adds to
# a 5+5-boot job), Y's build time and Y's time to done (what the rule costs
# the job behind it), and the per-boot spread of X's headline rows (what it
# buys), with the load average beside them.
set -u
PORT_BASE=27000
. "$(dirname "$0")/lib.sh"
export TLBLAB_TOKEN=bench-token-0123456789
lab_cache_ready "$CACHE"

# scenario NAME QUIET: runs X and Y with lab.quiet_host QUIET; leaves
# $tmp/NAME-x.json, NAME-y.json, NAME-cmp.json and NAME.times
scenario() {
	rm -rf "$tmp/data" "$tmp/vm"
	{ embedded_lab "$CACHE" 10028 "quiet_host: $2"; cat <<EOC
suites:
  - name: short
    workloads:
      - workload: mprotect
        mode: [threads, processes]
        workers: 2
        duration: 2s
        iterations: 3
EOC
	} >"$tmp/lab.yaml"
	fresh_patch "$CACHE" "$tmp/y.diff" || { echo "bench: cannot make the patch"; exit 1; }
	start
	export TLBLAB_SERVER="http://127.0.0.1:$port"
	t0=$(date +%s.%N)
	x=$("$BUILD/tlblab" submit --json --suite short --tree linux --base v6.1-debian --boots 5 \
		--patch "$TOP/kernels/patches/0001-x86-mm-tlb-flush-every-online-cpu.patch" |
		/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["job"]["id"])')
	y=$("$BUILD/tlblab" submit --json --suite short --tree linux --base v6.1-debian --boots 1 \
		--patch "$tmp/y.diff" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["job"]["id"])')
	# X ends first (Y's boots come after X's on the one machine)
	for id in "$x" "$y"; do
		# the job's own state (its stages have states too)
		until curl -fs "$TLBLAB_SERVER/api/v1/jobs/$id" | /usr/bin/python3 -c \
			'import json,sys; sys.exit(json.load(sys.stdin)["job"]["state"] not in ("done", "failed", "cancelled"))'; do
			sleep 1
		done
		echo "$id $(date +%s.%N)" >>"$tmp/$1.times"
	done
	curl -fs "$TLBLAB_SERVER/api/v1/jobs/$x" >"$tmp/$1-x.json"
	curl -fs "$TLBLAB_SERVER/api/v1/jobs/$y" >"$tmp/$1-y.json"
	curl -fs "$TLBLAB_SERVER/api/v1/jobs/$x/comparison" >"$tmp/$1-cmp.json"
	echo "t0 $t0 load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$tmp/$1.times"
	stop
}

scenario on true
scenario off false
/usr/bin/python3 - "$tmp" <<'PYEOF'
import json, os, statistics, sys
d = sys.argv[1]
def load(name):
    x = json.load(open(os.path.join(d, name + "-x.json")))["job"]
    y = json.load(open(os.path.join(d, name + "-y.json")))["job"]
    try:
        c = json.load(open(os.path.join(d, name + "-cmp.json")))["comparison"]
    except Exception:
        c = {"rows": []}
    times = {}
    for line in open(os.path.join(d, name + ".times")):
        f = line.split()
        times[f[0]] = f[1:]
    t0 = float(times["t0"][0])
    xdone = float(times[str(x["id"])][0]) - t0
    ydone = float(times[str(y["id"])][0]) - t0
    ybuild = [g["finished"] - g["started"] for g in y["stages"] if g["kind"] == "build" and g["side"] == "patched"
              and g["started"] and g["finished"]]
    paused = sum(1 for g in x["stages"] if g["kind"] == "run" and "paused" in (g.get("note") or ""))
    spreads = {}
    for r in c["rows"]:
        if r.get("headline"):
            s = r["base"]["samples"] + r["patched"]["samples"]
            # per-boot spread: the CV of each side's per-boot medians, averaged
            cvs = [statistics.pstdev(v) / statistics.mean(v) * 100 for v in (r["base"]["samples"], r["patched"]["samples"])
                   if len(v) > 1 and statistics.mean(v) > 0]
            spreads["%s %s" % (r["workload"], r["params"].get("mode", ""))] = statistics.mean(cvs) if cvs else float("nan")
    def err(j):
        e = j.get("error") or {}
        return ("%s: %s" % (e.get("class"), e.get("message"))) if e else ""
    return dict(x=x["state"], y=y["state"], xerr=err(x), yerr=err(y), xdone=xdone, ydone=ydone, ybuild=ybuild[0] if ybuild else float("nan"),
                paused=paused, spreads=spreads, load=" ".join(times["t0"][2:]))
on, off = load("on"), load("off")
print("quiet-host rule, X = 5+5 boots (demo patch, cached), Y = a patch rebuilt while X runs")
for name, s in (("rule on", on), ("rule off", off)):
    print("  %-8s X %s in %6.1f s; Y %s in %6.1f s, its patched build %5.1f s; %d of X's runs paused a build; load %s"
          % (name, s["x"], s["xdone"], s["y"], s["ydone"], s["ybuild"], s["paused"], s["load"]))
    for job in ("x", "y"):
        if s[job + "err"]:
            print("           %s failed: %s" % (job.upper(), s[job + "err"]))
    for k, v in sorted(s["spreads"].items()):
        print("           X per-boot spread %-22s %5.1f%%" % (k, v))
if any(s[j] != "done" for s in (on, off) for j in ("x", "y")):
    print("  a job failed: no ratio")
    sys.exit(1)
print("  X with the rule / without: %.2f (what the rule adds to a 5+5-boot job)" % (on["xdone"] / off["xdone"]))
print("  Y's build with the rule / without: %.2f; Y's time to done: %.2f" % (on["ybuild"] / off["ybuild"], on["ydone"] / off["ydone"]))
for k in sorted(set(on["spreads"]) & set(off["spreads"])):
    if off["spreads"][k] > 0:
        print("  X's spread with the rule / without, %s: %.2f" % (k, on["spreads"][k] / off["spreads"][k]))
PYEOF
