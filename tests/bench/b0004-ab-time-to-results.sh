#!/bin/sh
# Time to results of an A/B job for a one-file patch when the base build is
# cached: the demo patch to arch/x86/mm/tlb.c plus a comment that is new on
# every run (so the patched kernel really rebuilds, incrementally), one boot
# per side, a 30-second suite (2 cases x 3 iterations x 5 s). Reports the
# time per stage kind (build, boot, run) and in all. Target: under 2 minutes.
# Needs the embedded lab's cache (/var/cache/tlblab: the tree, the guest
# initramfs; the base build cached by an earlier test or demo run).
# accel: tcg, as a daemon that has already probed KVM on its machine runs:
# the probe (about 20 s, once per machine and daemon) is not counted.
set -u
PORT_BASE=26000
. "$(dirname "$0")/lib.sh"
lab_cache_ready "$CACHE"

# a patch that is new every time: the demo patch and a dated comment
fresh_patch "$CACHE" "$tmp/patch.diff" || { echo "bench: cannot make the patch"; exit 1; }

{ embedded_lab "$CACHE" 10025; cat <<EOC
suites:
  - name: thirty
    workloads:
      - workload: mprotect
        mode: [threads, processes]
        workers: 2
        duration: 5
        iterations: 3
        warmup: 0
EOC
} >"$tmp/lab.yaml"
start
export TLBLAB_SERVER="http://127.0.0.1:$port" TLBLAB_TOKEN=bench-token-0123456789
t0=$(date +%s.%N)
"$BUILD/tlblab" submit --suite thirty --tree linux --base v6.1-debian --patch "$tmp/patch.diff" --boots 1 \
	--wait --timeout 3600 >"$tmp/submit.out" 2>&1
st=$?
t1=$(date +%s.%N)
"$BUILD/tlblab" status 1 --json >"$tmp/job.json" 2>/dev/null || curl -s "$TLBLAB_SERVER/api/v1/jobs/1" >"$tmp/job.json"
/usr/bin/python3 - "$tmp/job.json" "$t0" "$t1" "$st" <<'PYEOF'
import json, sys
j = json.load(open(sys.argv[1]))["job"]
total = float(sys.argv[3]) - float(sys.argv[2])
by = {}
for g in j["stages"]:
    if g["started"] and g["finished"]:
        by.setdefault(g["kind"], []).append((g["side"], g["finished"] - g["started"]))
print("A/B time to results, one-file patch, base build cached, 1 boot per side, 30 s suite: job %s" % j["state"])
for kind in ("build", "boot", "run"):
    parts = ", ".join("%s %.1f s" % (s, d) for s, d in by.get(kind, []))
    print("  %-5s %6.1f s  (%s)" % (kind, sum(d for _, d in by.get(kind, [])), parts))
print("  total %6.1f s from submit to results (target < 120 s: %s)" % (total, "met" if total < 120 else "NOT met"))
PYEOF
