#!/usr/bin/python3
"""A stand-in for tlblabd's HTTP API (daemon/api.h) with canned answers, for
testing the command-line client without the daemon.

    fake-api.py --port-file F --log L [--token T] [--read-requires-token]

Binds 127.0.0.1 on a free port and writes the port to F once it listens.
Every request is appended to L as one JSON line: method, path, query (dict
of lists), auth (the Authorization header or null) and body (parsed JSON,
the raw text if it is not JSON, or null).

Jobs created by POST advance one step on every GET /api/v1/jobs/ID: the
first poll shows the job queued, then each run stage (one per machine, m1 by
default) goes running, then done. Suites: "tlb" ends done; "fails" ends with
its last stage failed (infra) and the job failed; "slow" stays running.
Canned: job 1 (done), job 2 (running, cancellable), job 666 answers 502 with
an HTML page.

GET /api/v1/jobs/ID/comparison and GET /api/v1/compare?base=A&patched=B
answer canned_comparison() (valid against schemas/comparison.schema.json,
which t0061 checks) for jobs that exist: a thread sweep of mprotect with a
regression, an improvement, a same and an inconclusive case, counters, an
unavailable counter, the TLB block and a profile diff.

A request with "tree" makes an A/B job (kind "ab"): build base and build
patched on "builder local", then per boot index (boots per side) a boot and a
run stage of each side on the first machine, base first. Finished build
stages, and the boot and run stages of their side, carry a build_id. A
"patch" without a "diff --git" line fails the build patched stage with
class patch (and the job with it). Its runs list the patched side first, as
a daemon interleaving BABA would.
"""
import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlsplit

SUITES = {"tlb", "fails", "slow"}
MACHINES = [
    {"name": "m1", "transport": "local", "host": None, "boot": "qemu", "arch": "x86_64",
     "cpus": 2, "tags": ["qemu", "small"], "health": "good", "health_reason": None,
     "leased_by": 12, "kernel": "6.1.0-tlblab", "last_boot": 1700000000, "recent_failures": []},
    {"name": "m2", "transport": "ssh", "host": "127.0.0.2", "boot": "kexec", "arch": "x86_64",
     "cpus": 8, "tags": ["real"], "health": "bad", "health_reason": "ssh: connection refused",
     "leased_by": None, "kernel": None, "last_boot": None,
     "recent_failures": [{"job": 3, "stage": 7, "class": "infra",
                          "message": "ssh: connection refused", "at": 1700000100}]},
]
T0 = 1700000000
lock = threading.Lock()
jobs = {}
next_id = [12]


def stage(jid, i, kind, side, machine, boot_index=None):
    st = {"id": jid * 100 + i, "seq": i + 1, "kind": kind, "side": side, "state": "pending",
          "machine": machine, "attempt": 1, "started": None, "finished": None,
          "error_class": None, "error_message": None}
    if boot_index is not None:
        st["boot_index"] = boot_index
    return st


def new_job(jid, suite, machines, tags, submitter, boots=1, ab=None):
    if ab is None:
        stages = [stage(jid, i, "run", None, m) for i, m in enumerate(machines)]
    else:
        plan = [("build", "base", "builder local", None), ("build", "patched", "builder local", None)]
        for b in range(boots):
            for side in ("base", "patched"):
                plan += [("boot", side, machines[0], b), ("run", side, machines[0], b)]
        stages = [stage(jid, i, *p) for i, p in enumerate(plan)]
    job = {"id": jid, "kind": "run" if ab is None else "ab", "state": "queued", "suite": suite,
           "machines": machines, "tags": tags, "submitter": submitter, "boots": boots,
           "created": T0 + jid, "started": None, "finished": None, "stage": None,
           "error": None, "stages": stages, "polls": 0}
    if ab is not None:
        job.update(ab)
    return job


def fail(job, st, now, cls, message):
    st.update(state="failed", finished=now, error_class=cls, error_message=message)
    job.update(state="failed", finished=now,
               error={"class": cls, "message": message, "stage": st["id"]})


def advance(job):
    """One poll's worth of progress."""
    job["polls"] += 1
    if job["state"] in ("done", "failed", "cancelled") or job["polls"] == 1:
        return
    now = T0 + job["id"] + 10 * job["polls"]
    for i, st in enumerate(job["stages"]):
        if st["state"] == "pending":
            st.update(state="running", started=now)
            if st["kind"] != "build" and st["side"]:
                st["build_id"] = job["build_ids"][st["side"]]
            job.update(state="running", started=job["started"] or now, stage=st["kind"])
            return
        if st["state"] == "running":
            if job["suite"] == "slow":
                return
            if job["suite"] == "fails" and i == len(job["stages"]) - 1:
                return fail(job, st, now, "infra", "ssh: connection refused")
            if (st["kind"], st["side"]) == ("build", "patched") and \
                    "diff --git" not in job.get("patch_text", "diff --git"):
                return fail(job, st, now, "patch", "the patch does not apply: error: "
                            "patch failed: arch/x86/mm/tlb.c:42")
            if st["kind"] == "build":
                job["build_ids"][st["side"]] = st["build_id"] = "%s-%d" % (st["side"], job["id"])
            st.update(state="done", finished=now)
            return
    job.update(state="done", finished=now)


def public(job):
    return {k: v for k, v in job.items() if k not in ("polls", "boots", "patch_text", "build_ids")}


def ab_runs_and_metrics(job):
    """Two boots per side, a warm-up and two measured iterations each;
    ops/s 1000..1300 on base and 2000..2300 on patched."""
    runs, metrics = [], []
    rid = 1
    for b in range(2):
        for side, ops in (("patched", 2000), ("base", 1000)):
            for it in range(3):
                warm = it == 0
                runs.append({"id": rid, "stage": job["id"] * 100 + 3, "machine": job["machines"][0],
                             "side": side, "spec": 0, "case": 0, "iteration": it, "warmup": warm,
                             "workload": "mprotect", "params": {"mode": "threads", "workers": 2},
                             "duration_s": 2.0, "build_id": "%s-%d" % (side, job["id"]),
                             "boot_id": "boot-%s-%d" % (side, b)})
                if not warm:
                    metrics.append({"run": rid, "name": "mprotect.ops_per_sec",
                                    "value": ops + 200 * b + 100 * (it - 1), "unit": "ops/s",
                                    "direction": "higher"})
                rid += 1
    return runs, metrics


def runs_and_metrics(job):
    if job["kind"] == "ab":
        return ab_runs_and_metrics(job)
    runs, metrics = [], []
    rid = 1
    ops = {"threads": [1000, 3000, 2000], "processes": [500, 700, 600]}
    for case, mode in enumerate(["threads", "processes"]):
        for it in range(4):
            warm = it == 0
            runs.append({"id": rid, "stage": 1201, "machine": "m1", "side": None, "spec": 0,
                         "case": case, "iteration": it, "warmup": warm, "workload": "mprotect",
                         "params": {"mode": mode, "workers": 2}, "duration_s": 2.0,
                         "build_id": None, "boot_id": "b1"})
            if not warm:
                v = ops[mode][it - 1]
                metrics += [
                    {"run": rid, "name": "mprotect.ops_per_sec", "value": v, "unit": "ops/s",
                     "direction": "higher"},
                    {"run": rid, "name": "interrupts.TLB", "value": v * 2.5, "unit": "count",
                     "direction": "lower"},
                    {"run": rid, "name": "interrupts.TLB.cpu0", "value": v, "unit": "count",
                     "direction": "lower"},
                    {"run": rid, "name": "interrupts.TLB.cpu1", "value": v * 1.5, "unit": "count",
                     "direction": "lower"},
                ]
            rid += 1
    return runs, metrics


def _side(center, spread, samples):
    return {"center": center, "spread_pct": spread, "n": len(samples), "samples": samples}


def _row(case, params, metric, unit, direction, base, patched, change, p, ci, verdict,
         outliers=0, **extra):
    text = " ".join("%s=%s" % (k, params[k]) for k in sorted(params))
    headline = metric.startswith("mprotect.")
    r = {"spec": 0, "case": case, "workload": "mprotect", "params": params, "params_text": text,
         "metric": metric, "unit": unit, "direction": direction, "headline": headline,
         "counter": not headline, "base": base, "patched": patched, "change_pct": change,
         "p": p, "ci": ci, "verdict": verdict, "outliers": outliers}
    if p is not None:
        r["p_method"] = "exact"
    r.update(extra)
    return r


def canned_comparison(base_job=12, patched_job=12):
    """A comparison as compare_sides() makes it, small enough to read."""
    T1 = {"mode": "threads", "workers": 1}
    T2 = {"mode": "threads", "workers": 2}
    T4 = {"mode": "threads", "workers": 4}
    P2 = {"mode": "processes", "workers": 2}
    ops = "mprotect.ops_per_sec"
    none = _side(None, None, [])
    rows = [
        _row(0, T1, ops, "ops/s", "higher", _side(500000, 0.8, [498000, 500000, 503000, 505000, 497000]),
             _side(498000, 0.9, [496000, 498000, 501000, 502000, 494000]), -0.4, 0.69,
             [-1.5, 0.9], "same"),
        _row(1, T2, ops, "ops/s", "higher", _side(800000, 1.1, [790000, 800000, 805000, 812000, 796000]),
             _side(900000, 1.0, [890000, 900000, 905000, 912000, 896000]), 12.5, 0.0079,
             [10.9, 14.2], "improvement"),
        _row(1, T2, "interrupts.TLB.per_sec", "count/s", "lower",
             _side(10000, 1.5, [9900, 10000, 10100, 10200, 9800]),
             _side(14000, 1.2, [13900, 14000, 14100, 14300, 13800]), 40.0, 0.0079,
             [38.0, 42.5], "regression"),
        _row(1, T2, "interrupts.TLB.peak_per_sec", "count/s", "lower",
             _side(12000, 2.5, [11800, 12000, 12300, 12600, 11700]),
             _side(17500, 2.2, [17100, 17500, 17800, 18200, 17000]), 45.8, 0.0079,
             [41.0, 50.1], "regression"),
        _row(1, T2, "procstat.busy_pct", "%", "neutral", _side(80.0, 1.0, [79, 80, 81, 80.5, 79.5]),
             _side(85.0, 1.0, [84, 85, 86, 85.5, 84.5]), 6.25, 0.0079, [5.1, 7.4], "changed"),
        _row(1, T2, "tlb.shootdowns_per_kop", "shootdowns/kop", "lower",
             _side(12.5, 1.2, [12.4, 12.5, 12.6, 12.8, 12.3]),
             _side(15.6, 1.1, [15.5, 15.6, 15.7, 15.9, 15.3]), 24.8, 0.0079, [22.9, 26.6],
             "regression"),
        _row(1, T2, "vmstat.nr_tlb_local_flush_one", "count", "lower",
             _side(1000, 1.0, [990, 1000, 1010, 1005, 995]),
             _side(988, 1.3, [980, 988, 1000, 995, 970]), -1.2, 0.31, [-3.0, 0.8], "inconclusive"),
        _row(1, T2, "vmstat.nr_tlb_remote_flush", "count", "lower",
             _side(5000, 1.0, [4950, 5000, 5050, 5020, 4980]), none, None, None, None, "unavailable",
             reason="unavailable on patched: vmstat lacks nr_tlb_* (DEBUG_TLBFLUSH is off)"),
        _row(2, T4, ops, "ops/s", "higher", _side(1200000, 3.4, [1150000, 1200000, 1230000, 1260000, 1190000]),
             _side(1218000, 3.0, [1170000, 1218000, 1240000, 1270000, 1200000]), 1.5, 0.55,
             [-3.2, 6.0], "inconclusive", outliers=1),
        _row(3, P2, ops, "ops/s", "higher", _side(400000, 0.9, [396000, 400000, 404000, 406000, 398000]),
             _side(366800, 1.0, [363000, 366800, 370000, 372000, 365000]), -8.3, 0.0079,
             [-10.2, -6.1], "regression"),
    ]

    def entry(r):
        return {k: r[k] for k in ("spec", "case", "workload", "params", "metric", "change_pct",
                                  "p", "ci", "verdict")}
    sweep = [{"workers": r["params"]["workers"], "case": r["case"], "base": r["base"]["center"],
              "patched": r["patched"]["center"], "change_pct": r["change_pct"],
              "verdict": r["verdict"]} for r in rows[:2] + [rows[8]]]
    return {
        "summary": {
            "regressions": [entry(rows[9])], "improvements": [entry(rows[1])], "changed": [],
            "same": 1, "inconclusive": 1, "unavailable": 0,
            "counters": {"regressions": 3, "improvements": 0, "changed": 1},
            "text": "mprotect.ops_per_sec (mode=processes workers=2) -8.3% regression; "
                    "mprotect.ops_per_sec (mode=threads workers=2) +12.5% improvement; "
                    "1 same, 1 inconclusive"},
        "rows": rows,
        "sweeps": [{"spec": 0, "workload": "mprotect", "metric": ops, "params": {"mode": "threads"},
                    "params_text": "mode=threads", "unit": "ops/s", "direction": "higher",
                    "rows": sweep}],
        "tlb": [{"spec": 0, "case": 1, "workload": "mprotect", "params": T2,
                 "params_text": "mode=threads workers=2",
                 "shootdowns_per_kop": {"base": 12.5, "patched": 15.6, "change_pct": 24.8,
                                        "verdict": "regression"},
                 "counters": [{"name": "interrupts.TLB",
                               "base": {"per_sec": 10000, "peak_per_sec": 12000},
                               "patched": {"per_sec": 14000, "peak_per_sec": 17500},
                               "verdict": "regression"}]}],
        "profile_diff": {"profiles": {"base": 5, "patched": 5}, "symbols": [
            {"symbol": "flush_tlb_func", "kernel": True, "base_self": 8.0, "patched_self": 14.5,
             "delta": 6.5},
            {"symbol": "native_flush_tlb_one_user", "kernel": True, "base_self": 3.0,
             "patched_self": 1.0, "delta": -2.0},
            {"symbol": "do_mprotect_pkey", "kernel": True, "base_self": 20.0, "patched_self": 19.5,
             "delta": -0.5}]},
        "provenance": {"base": {"job": base_job, "kernel": "6.1.0-tlblab", "build": "base-%d" % base_job},
                       "patched": {"job": patched_job, "kernel": "6.1.0-tlblab+",
                                   "build": "patched-%d" % patched_job},
                       "boots": {"base": 5, "patched": 5}, "machines": {"base": ["m1"], "patched": ["m1"]},
                       "builds": {"base": ["base-%d" % base_job], "patched": ["patched-%d" % patched_job]}},
        "failed": [{"side": "patched", "run": 77, "reason": "workload: mprotect: killed by SIGKILL"}],
        "notes": ["base has 5 boots, patched 5"],
        "per_cpu_excluded": ["interrupts.TLB.cpu0", "interrupts.TLB.cpu1"],
        "ci_kind": "percent",
        "rules": {"alpha": 0.01, "min_change_headline": 0.02, "min_change_counter": 0.05,
                  "same_band": 0.02, "resamples": 2000, "ci_level": 0.95, "outlier_z": 3.5,
                  "test": "Mann-Whitney U, two-sided, on per-boot medians",
                  "ci": "bootstrap percentile interval of median(patched)/median(base), as % change"},
    }


def ab_request(req):
    """The A/B part of a job request: (fields for the job, None) or (None, why)."""
    if not isinstance(req.get("tree"), str) or not isinstance(req.get("base"), str):
        return None, "tree, base: both are required, as strings"
    sources = [k for k in ("patch", "branch", "url") if k in req]
    if len(sources) != 1:
        return None, "patch, branch, url: exactly one is required"
    # echoed as the daemon's JOB has it: patch_kind, patch_url, patch_ref
    ab = {"tree": req["tree"], "base": req["base"], "build_ids": {}, "patch_kind": sources[0],
          "patch_url": None, "patch_ref": None}
    if "patch" in req:
        ab["patch_text"] = req["patch"]
    elif "branch" in req:
        ab.update(patch_url=req["branch"].get("url"), patch_ref=req["branch"].get("ref"))
    else:
        ab["patch_url"] = req["url"]
    return ab, None


class Handler(BaseHTTPRequestHandler):
    server_version = "fake-tlblabd/0.1"

    def log_message(self, fmt, *args):
        pass

    def send_json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def error(self, status, code, message):
        self.send_json(status, {"error": {"code": code, "message": message}})

    def record(self, body):
        u = urlsplit(self.path)
        parsed = None
        if body:
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = body.decode(errors="replace")
        entry = {"method": self.command, "path": u.path, "query": parse_qs(u.query),
                 "auth": self.headers.get("Authorization"), "body": parsed}
        with open(self.server.args.log, "a") as f:
            f.write(json.dumps(entry) + "\n")
        return u.path, parse_qs(u.query), parsed

    def authorized(self):
        return self.headers.get("Authorization") == "Bearer " + self.server.args.token

    def do_GET(self):
        path, query, _ = self.record(b"")
        if self.server.args.read_requires_token and not self.authorized():
            return self.error(401, "unauthorized", "missing or invalid token")
        parts = path.strip("/").split("/")
        if parts[:2] != ["api", "v1"]:
            return self.error(404, "not_found", "no such endpoint")
        parts = parts[2:]
        with lock:
            if parts == ["health"]:
                return self.send_json(200, {"status": "ok", "version": "0.1.0"})
            if parts == ["machines"]:
                return self.send_json(200, {"machines": MACHINES})
            if parts == ["compare"]:
                ids = [query.get(k, [""])[0] for k in ("base", "patched")]
                if not all(i.isdigit() for i in ids):
                    return self.error(400, "bad_request", "base, patched: job ids are required")
                for i in ids:
                    if int(i) not in jobs:
                        return self.error(404, "not_found", "no job %s" % i)
                return self.send_json(200, canned_comparison(int(ids[0]), int(ids[1])))
            if parts == ["jobs"]:
                L = sorted(jobs.values(), key=lambda j: -j["id"])
                for key in ("state", "suite", "submitter"):
                    if key in query:
                        L = [j for j in L if j[key] == query[key][0]]
                limit = int(query.get("limit", ["50"])[0])
                offset = int(query.get("offset", ["0"])[0])
                return self.send_json(200, {"jobs": [public(j) for j in L[offset:offset + limit]],
                                            "total": len(L), "limit": limit, "offset": offset})
            if len(parts) >= 2 and parts[0] == "jobs":
                if parts[1] == "666":
                    data = b"<html><body>502 Bad Gateway</body></html>"
                    self.send_response(502)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    return self.wfile.write(data)
                job = jobs.get(int(parts[1])) if parts[1].isdigit() else None
                if job is None:
                    return self.error(404, "not_found", "no job %s" % parts[1])
                if len(parts) == 2:
                    advance(job)
                    return self.send_json(200, {"job": public(job)})
                if parts[2:] == ["comparison"]:
                    return self.send_json(200, canned_comparison(job["id"], job["id"]))
                runs, metrics = runs_and_metrics(job)
                if parts[2:] == ["runs"]:
                    return self.send_json(200, {"runs": runs})
                if parts[2:] == ["metrics"]:
                    return self.send_json(200, {"metrics": metrics})
        return self.error(404, "not_found", "no such endpoint")

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(min(n, 32 << 20)) if n else b""
        path, _, req = self.record(body)
        if not self.authorized():
            return self.error(401, "unauthorized", "missing or invalid token")
        parts = path.strip("/").split("/")[2:]
        with lock:
            if parts == ["jobs"]:
                if not isinstance(req, dict) or req.get("suite") not in SUITES:
                    return self.error(400, "bad_request", "suite: not a configured suite")
                machines = req.get("machines") or ["m1"]
                bad = [m for m in machines if m not in ("m1", "m2")]
                if bad:
                    return self.error(400, "bad_request", "machines: unknown machine %s" % bad[0])
                ab = None
                if "tree" in req:
                    ab, why = ab_request(req)
                    if why:
                        return self.error(400, "bad_request", why)
                jid = next_id[0]
                next_id[0] += 1
                jobs[jid] = new_job(jid, req["suite"], machines, req.get("tags") or [],
                                    req.get("submitter", "unknown"), req.get("boots", 1), ab)
                return self.send_json(201, {"job": public(jobs[jid])})
            if len(parts) == 3 and parts[0] == "jobs" and parts[2] == "cancel":
                job = jobs.get(int(parts[1])) if parts[1].isdigit() else None
                if job is None:
                    return self.error(404, "not_found", "no job %s" % parts[1])
                if job["state"] in ("done", "failed", "cancelled"):
                    return self.error(409, "conflict", "job %d already %s" % (job["id"], job["state"]))
                job.update(state="cancelled", finished=T0 + 999,
                           error={"class": "cancelled", "message": "cancelled by user", "stage": None})
                return self.send_json(200, {"job": public(job)})
        return self.error(404, "not_found", "no such endpoint")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--token", default="s3cret")
    ap.add_argument("--read-requires-token", action="store_true")
    args = ap.parse_args()

    j = new_job(1, "tlb", ["m1"], ["qemu"], "alice")
    for _ in range(4):
        advance(j)
    jobs[1] = j
    j = new_job(2, "slow", ["m1"], [], "bob")
    advance(j)
    advance(j)
    jobs[2] = j

    srv = HTTPServer(("127.0.0.1", 0), Handler)
    srv.args = args
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, args.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
