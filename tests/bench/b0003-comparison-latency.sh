#!/bin/sh
# Comparison latency for a big A/B job: 50 metrics x 10 thread counts x 10
# boots per side (a measured iteration per boot and case), in a real store
# behind a real daemon. The scheduler computes a job's comparison when the
# job ends and the store keeps it; "cold" is a request for it with no
# response cache (TLBLAB_API_CACHE=0), "computed" one with nothing stored
# (what the scheduler pays once), "cached" one the response cache answers.
# Medians. Target: under 50 ms cold.
set -u
PORT_BASE=25000
. "$(dirname "$0")/lib.sh"
fill /usr/bin/python3 - "$tmp/data/tlblab.db" <<'PYEOF'
import json, random, sqlite3, sys, time
c = sqlite3.connect(sys.argv[1])
random.seed(3)
now = time.time()
metrics = ["mprotect.ops_per_sec"] + ["bench.counter%02d" % i for i in range(49)]
with c:
    for m in metrics:
        c.execute("INSERT OR IGNORE INTO metric_info (name, unit, direction) VALUES (?, 'ops/s', ?)",
                  (m, "higher" if m.startswith("mprotect") else "lower"))
    c.execute("INSERT INTO jobs (id, kind, state, suite, suite_json, created, tree, base, boots) "
              "VALUES (1, 'ab', 'done', 'tlb', '[]', ?, 'linux', 'v6.1', 10)", (now,))
    run = 0
    for side_i, side in enumerate(("base", "patched")):
        for boot in range(10):
            sid = 1 + side_i * 10 + boot
            c.execute("INSERT INTO stages (id, job_id, seq, kind, side, boot_index, state, boot_id) "
                      "VALUES (?, 1, ?, 'run', ?, ?, 'done', ?)", (sid, sid, side, boot, "%s-%d" % (side, boot)))
            for case, workers in enumerate((1, 2, 4, 8, 16, 24, 32, 48, 64, 96)):
                run += 1
                params = json.dumps({"workload": "mprotect", "workers": workers, "mode": "threads"})
                c.execute("INSERT INTO runs (id, job_id, stage_id, machine, side, boot_id, spec_index, case_index, "
                          "iteration, warmup, workload, params, duration) VALUES (?, 1, ?, 'm1', ?, ?, 0, ?, 1, 0, "
                          "'mprotect', ?, 5)", (run, sid, side, "%s-%d" % (side, boot), case, params))
                shift = 1.03 if side == "patched" else 1.0
                c.executemany("INSERT INTO metrics (run_id, name, value) VALUES (?, ?, ?)",
                              [(run, m, random.gauss(1e5 * shift, 2e3)) for m in metrics])
PYEOF
url="http://127.0.0.1:$port/api/v1/jobs/1/comparison"
# three ways a comparison is served: computed (nothing stored: a job that
# is still running, or one whose suite's rules changed), read back as stored
# when the job finished (no response cache), and from the response cache
forget() {
	/usr/bin/python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("DELETE FROM comparisons"); c.commit()' \
		"$tmp/data/tlblab.db"
}
measure() { # WHAT COUNT [forget]
	: >"$tmp/times"
	i=0
	while [ $i -lt "$2" ]; do
		[ "${3:-}" = forget ] && forget
		curl -s -o "$tmp/cmp.json" -w '%{time_total}\n' "$url" >>"$tmp/times"
		i=$((i + 1))
	done
	/usr/bin/python3 - "$tmp/times" "$tmp/cmp.json" "$1" <<'PYEOF'
import json, statistics, sys
t = [float(x) * 1000 for x in open(sys.argv[1])]
rows = len(json.load(open(sys.argv[2]))["comparison"]["rows"])
print("comparison of %d rows, %-34s median %7.2f ms  (min %.2f, max %.2f, n %d; target < 50 ms cold)" %
      (rows, sys.argv[3], statistics.median(t), min(t), max(t), len(t)))
PYEOF
}
TLBLAB_API_CACHE=0
export TLBLAB_API_CACHE
start
[ -n "${PERF_OUT:-}" ] && perf record -g -p "$pid" -o "$PERF_OUT" -- sleep 4 >/dev/null 2>&1 &
measure "computed (nothing stored)" 7 forget
measure "cold: stored at job end, no cache" 15
stop
TLBLAB_API_CACHE=1
start
curl -s -o /dev/null "$url"
measure "cached (store unchanged)" 15
stop
