#!/usr/bin/python3
"""The parts of b0016 (a lab of many simulated machines, docs/scale.md)
that talk to the daemons and count, on loopback only.

  sim-bench.py submit URL TOKEN N BUILDERS [FIRST]
      N A/B jobs of suite demo, job i on tree linux{i mod BUILDERS}, each
      with a patch of its own (tests/sim/sim.sh's bodies), keep-alive
  sim-bench.py watch URL LIMIT OUT PID...
      until no job is queued or running (or LIMIT seconds), every second:
      the jobs left, and each daemon's RSS (/proc/PID/status VmRSS) and
      CPU time (/proc/PID/stat utime + stime); the samples to OUT (JSON)
  sim-bench.py figures STORE SIMLOG SAMPLES SCALE MACHINES BUILDERS WORKERS LABEL
      every job and its stages (read from STORE, an SQLite file or a
      PostgreSQL URL, read-only), the simulation's log of the work it did,
      and the samples: jobs per hour, the scheduler's overhead per stage,
      the daemons' RSS and CPU (printed)
  sim-bench.py latency URL N LABEL PATH...
      N GETs of each PATH ("{job}" is a random job id, "{cmp}" a job
      with a kept comparison), one connection each: median and p99
"""
import http.client
import json
import os
import random
import sqlite3
import subprocess
import sys
import time
import urllib.parse


def conn_for(url):
    u = urllib.parse.urlparse(url)
    assert u.hostname in ("127.0.0.1", "localhost", "::1"), "loopback only"
    return http.client.HTTPConnection(u.hostname, u.port, timeout=30), u.path.rstrip("/")


def request(c, method, path, body=None, token=None):
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        headers["Authorization"] = "Bearer " + token
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    data = r.read()
    return r.status, data


def patch(i):
    return ("--- a/mm/mprotect.c\n+++ b/mm/mprotect.c\n@@ -1,1 +1,2 @@\n /* mprotect */\n"
            "+/* sim job %d */\n" % i)


def submit(url, token, n, builders, first=1):
    c, base = conn_for(url)
    ids = []
    for i in range(first, first + n):
        t = i % builders + 1
        body = {"suite": "demo", "tree": "linux" + ("" if t == 1 else str(t)), "base": "v6.1",
                "patch": patch(i)}
        st, data = request(c, "POST", base + "/api/v1/jobs", json.dumps(body), token)
        if st != 201:
            sys.exit("submit: job %d: HTTP %d: %s" % (i, st, data[:300]))
        ids.append(json.loads(data)["job"]["id"])
    print("submitted %d jobs (%d..%d)" % (len(ids), ids[0], ids[-1]))


def proc_sample(pid):
    rss = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return rss, (int(fields[11]) + int(fields[12])) / ticks


def left(c, base):
    n = 0
    for state in ("queued", "running"):
        st, data = request(c, "GET", base + "/api/v1/jobs?limit=1&state=" + state)
        n += json.loads(data).get("total", 0) if st == 200 else 10 ** 9
    return n


def watch(url, limit, out, pids):
    c, base = conn_for(url)
    t0 = time.time()
    samples = []
    while True:
        now = time.time()
        row = {"t": now, "left": left(c, base), "procs": []}
        for p in pids:
            try:
                rss, cpu = proc_sample(p)
            except OSError:
                rss, cpu = None, None
            row["procs"].append({"pid": p, "rss_kb": rss, "cpu_s": cpu})
        samples.append(row)
        if row["left"] == 0 or now - t0 > limit:
            break
        time.sleep(max(0.0, 1.0 - (time.time() - now)))
    json.dump(samples, open(out, "w"))
    print("watched %.0f s, %d jobs left" % (time.time() - t0, samples[-1]["left"]))


def all_jobs(store):
    """every job and its stages, read from the store (read-only): the API
    gives times to 12 digits, 10 ms of an epoch time, too coarse here"""
    sql = ("SELECT j.id, j.created, j.finished, j.state, s.seq, s.kind, s.state, s.machine, s.started, "
           "s.finished FROM jobs j JOIN stages s ON s.job_id = j.id ORDER BY j.id, s.seq")
    if store.startswith("postgres"):
        out = subprocess.run(["/usr/lib/postgresql/15/bin/psql", "-X", "-q", "-At", "-F", "|", "-d", store,
                              "-c", sql], check=True, capture_output=True, text=True).stdout
        rows = [[None if v == "" else v for v in line.split("|")] for line in out.splitlines()]
    else:
        c = sqlite3.connect("file:%s?mode=ro" % store, uri=True)
        rows = c.execute(sql).fetchall()
        c.close()
    num = lambda v: None if v is None else float(v)
    jobs = {}
    for r in rows:
        j = jobs.setdefault(int(r[0]), {"id": int(r[0]), "created": num(r[1]), "finished": num(r[2]),
                                         "state": r[3], "stages": []})
        j["stages"].append({"seq": int(r[4]), "kind": r[5], "state": r[6], "machine": r[7],
                            "started": num(r[8]), "finished": num(r[9])})
    return list(jobs.values())


def pct(v, p):
    if not v:
        return float("nan")
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def sim_intervals(path):
    """the simulation's work by where it ran: (start, end, kind)"""
    by = {}
    for line in open(path):
        s, e, kind, where = line.split()
        by.setdefault(where, []).append((float(s), float(e), kind))
    for v in by.values():
        v.sort()
    return by


def overlaps(pieces):
    """how many of pieces (start, end, owner): start < end, end None: not
    ended) start while a piece of another owner (None: every piece its own)
    still holds the place"""
    n, held = 0, []
    for s, e, who in sorted(pieces, key=lambda p: p[0]):
        held = [(he, hw) for he, hw in held if he is None or he > s]
        if any(who is None or hw != who for _, hw in held):
            n += 1
        held.append((e, who))
    return n


def held_twice(jobs, sim):
    """a machine held by two at once, counted twice over: in the
    simulation's log of the work done on each machine (every daemon of the
    lab appends to it), and in the store's boot and run stages of
    different jobs by their times. (count, pieces) each."""
    sim_n = sum(overlaps([(b, e, None) for b, e, _ in v]) for w, v in sim.items() if not w.startswith("b"))
    sim_pieces = sum(len(v) for w, v in sim.items() if not w.startswith("b"))
    by_machine = {}
    for j in jobs:
        for s in j["stages"]:
            if s["kind"] in ("boot", "run") and s["started"] is not None and s["machine"]:
                by_machine.setdefault(s["machine"], []).append((s["started"], s["finished"], j["id"]))
    store_n = sum(overlaps(v) for v in by_machine.values())
    return (sim_n, sim_pieces), (store_n, sum(len(v) for v in by_machine.values()))


def figures(store, simlog, samples_path, scale, machines, builders, workers, label):
    jobs = all_jobs(store)
    sim = sim_intervals(simlog)
    samples = json.load(open(samples_path))
    ended = [j for j in jobs if j["state"] in ("done", "failed", "cancelled")]
    done = [j for j in jobs if j["state"] == "done"]
    t_first = min(j["created"] for j in jobs)
    t_last = max(j["finished"] for j in ended) if ended else time.time()
    wall = t_last - t_first
    # stages by the resource that held them: a machine, or "builder bN"
    stages, by_res = [], {}
    for j in jobs:
        prev_end = j["created"]
        for s in sorted(j["stages"], key=lambda s: s["seq"]):
            if s["state"] != "done" or s["started"] is None:
                prev_end = None
                continue
            res = s["machine"]
            s = dict(s, job=j["id"], ready_job=prev_end)
            stages.append(s)
            by_res.setdefault(res, []).append(s)
            prev_end = s["finished"]
    gaps, inside = {}, {}
    for res, ss in by_res.items():
        ss.sort(key=lambda s: s["started"])
        host = res.split()[-1]
        work = sim.get(host, [])
        free = t_first
        for s in ss:
            ready = max(x for x in (s["ready_job"], free) if x is not None)
            # a run starts as its boot hands the machine over: no gap
            if s["kind"] != "run":
                gaps.setdefault(s["kind"], []).append(max(0.0, s["started"] - ready))
            simulated = sum(min(e, s["finished"]) - max(b, s["started"]) for b, e, _ in work
                            if b < s["finished"] and e > s["started"])
            inside.setdefault(s["kind"], []).append(max(0.0, s["finished"] - s["started"] - simulated))
            free = s["finished"]
    busy_m = sum(e - b for w, v in sim.items() if not w.startswith("b") for b, e, _ in v)
    busy_b = sum(e - b for w, v in sim.items() if w.startswith("b") for b, e, _ in v)
    per_h = len(done) / wall * 3600 if wall > 0 else 0
    print("%s: %d jobs, %d done, %d ended otherwise, in %.1f s (first submitted to last ended)"
          % (label, len(jobs), len(done), len(ended) - len(done), wall))
    print("%s: %d stages done (%d build, %d boot, %d run)" % (label, len(stages),
          *(sum(1 for s in stages if s["kind"] == k) for k in ("build", "boot", "run"))))
    (sim_n, sim_pieces), (store_n, store_stages) = held_twice(jobs, sim)
    print("%s: a machine held by two at once: %d times in the simulation's log (%d pieces of work on "
          "machines), %d in the store (%d boot and run stages, of different jobs)"
          % (label, sim_n, sim_pieces, store_n, store_stages))
    print("%s: jobs per hour at scale %g: %.0f (x %g: %.1f at the real stage times, were the daemon's "
          "own time stretched with them)" % (label, scale, per_h, scale, per_h * scale))
    print("%s: the lab's use of its time: machines %.0f%% busy with simulated work, builders %.0f%%"
          % (label, 100 * busy_m / (machines * wall), 100 * busy_b / (builders * wall)))
    # The capacity at the real stage times: a done job's real seconds of
    # builder and of machine work (simulated seconds / scale), plus the
    # daemon's own median time per stage as measured here, not stretched
    # (it does not grow with the stages), over the builders and the
    # machines the workers can serve at once (a build holds a worker too)
    n = len(done) or 1
    per = {k: sum(1 for s in stages if s["kind"] == k) / n for k in ("build", "boot", "run")}
    own = {k: (pct(gaps.get(k, []), 50) if k != "run" else 0) + pct(inside.get(k, [0]), 50)
           for k in ("build", "boot", "run")}
    need_b = busy_b / scale / n + per["build"] * own["build"]
    need_m = busy_m / scale / n + per["boot"] * own["boot"] + per["run"] * own["run"]
    slots_m = max(1, min(machines, workers - builders))
    cap_b, cap_m = 3600 * builders / need_b, 3600 * slots_m / need_m
    print("%s: jobs per hour at the real stage times (a model): %.0f, the builders' bound %.0f (%.0f s of "
          "builds a job), the machines' %.0f (%.0f s of boots and runs a job on %d machines at once: "
          "%d workers)" % (label, min(cap_b, cap_m), cap_b, need_b, cap_m, need_m, slots_m, workers))
    # the detail first, in words make bench's record leaves out; then one
    # line with the figures (tests/bench/run.sh keeps those with "median")
    summary = []
    for k in ("build", "boot", "run"):
        g, d = gaps.get(k, []), inside.get(k, [])
        gtxt = ("from ready to started 50%% %.1f ms, 99%% %.1f ms; " % (1e3 * pct(g, 50), 1e3 * pct(g, 99))
                if g else "")
        print("%s: the daemon's time per %s stage: %sinside the stage, besides the simulated work, "
              "50%% %.1f ms, 99%% %.1f ms (%d stages)" % (label, k, gtxt, 1e3 * pct(d, 50), 1e3 * pct(d, 99),
                                                        len(d)))
        summary.append("%s %.0f/%.0f" % (k, 1e3 * (pct(g, 50) if g else 0) + 1e3 * pct(d, 50),
                                        1e3 * (pct(g, 99) if g else 0) + 1e3 * pct(d, 99)))
    procs = []
    for i in range(len(samples[0]["procs"])):
        rss = [r["procs"][i]["rss_kb"] for r in samples if r["procs"][i]["rss_kb"]]
        cpu = [r["procs"][i]["cpu_s"] for r in samples if r["procs"][i]["cpu_s"] is not None]
        span = samples[-1]["t"] - samples[0]["t"]
        print("%s: daemon %d: RSS 50%% %.0f MB, peak %.0f MB; CPU %.0f%% of a core (%.1f s in %.0f s)"
              % (label, i + 1, pct(rss, 50) / 1024, max(rss) / 1024, 100 * (cpu[-1] - cpu[0]) / span,
                 cpu[-1] - cpu[0], span))
        procs.append((pct(rss, 50) / 1024, max(rss) / 1024, 100 * (cpu[-1] - cpu[0]) / span))
    print("%s: %.0f jobs/h at x%g (model at real times %.0f, %s-bound); overhead/stage median/p99 ms: %s; "
          "RSS median %s MB; CPU %s; a machine held twice %d (log), %d (store)"
          % (label, per_h, scale, min(cap_b, cap_m), "builders" if cap_b < cap_m else "machines",
             ", ".join(summary), "/".join("%.0f" % p[0] for p in procs), "/".join("%.0f%%" % p[2] for p in procs),
             sim_n, store_n))


def latency(url, n, label, paths):
    c, base = conn_for(url)
    st, data = request(c, "GET", base + "/api/v1/jobs?limit=1")
    top = json.loads(data)["jobs"][0]["id"]
    rnd = random.Random(1)
    for p in paths:
        times = []
        for _ in range(n):
            q = p.replace("{job}", str(rnd.randint(1, top))).replace("{cmp}", str(rnd.randint(1, top)))
            t = time.perf_counter()
            st, data = request(c, "GET", base + "/api/v1/" + q)
            times.append(time.perf_counter() - t)
            if st != 200:
                sys.exit("latency: GET %s: HTTP %d: %s" % (q, st, data[:200]))
        print("  %s GET /api/v1/%s median %.2f ms, p99 %.2f ms (%d requests)"
              % (label, p, 1e3 * pct(times, 50), 1e3 * pct(times, 99), n))


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    cmd, a = argv[1], argv[2:]
    if cmd == "submit":
        submit(a[0], a[1], int(a[2]), int(a[3]), int(a[4]) if len(a) > 4 else 1)
    elif cmd == "watch":
        watch(a[0], float(a[1]), a[2], [int(p) for p in a[3:]])
    elif cmd == "figures":
        figures(a[0], a[1], a[2], float(a[3]), int(a[4]), int(a[5]), int(a[6]), a[7])
    elif cmd == "latency":
        latency(a[0], int(a[1]), a[2], a[3:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
