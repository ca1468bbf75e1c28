#!/usr/bin/python3
"""Fills a tlblab store (made by tlblabd's migrations) with known jobs for
the dashboard's test and bench. Deterministic (fixed seeds).

  seed.py DB dashboard   jobs 1..5 (see below) and machine state
  seed.py DB client      the same, and job 4 for the client's test
  seed.py DB bench ROWS  job 1: an A/B job with about ROWS comparison rows

dashboard:
  1  A/B done: mprotect threads at 1, 2, 4 workers, 8 boots per side (Holm over 3 headline rows needs more than 5);
     ops_per_sec regresses at 2 and 4 workers, interrupts.TLB regresses,
     vmstat.nr_tlb_remote_flush improves, procstat.busy_pct stays the same,
     one counter is only on the base side (unavailable); per-second samples,
     perf profiles, builds
  2  A/B failed: the patched build fails (class build) with a compile error
  3  A/B failed: the patched kernel panics at boot (class boot), a console
     log of over 300 lines (longer than the tail the page's excerpt reads)
The tests add a running and a queued job through the API.
Machine m2 is in maintenance with two recent failures.

client: the dashboard's jobs, and
  4  A/B failed (class workload): spec 0 (mprotect) ran on every boot of both
     sides; spec 1 (mremap) ran on base and failed on patched, on boot 1 and
     on a boot repeated for it (repeat_of). Where the store has the columns
     of spec outcomes (stages.specs, stages.repeat_of), the run stages carry
     them; an older store gets the same stages without.
"""
import json
import random
import sqlite3
import sys
import time

NOW = time.time()
BUILD_LOG = """+ git -C /var/cache/tlblab/linux worktree add /var/cache/tlblab/work/patched v6.1-debian
+ git am /tmp/patch.mbox
Applying: x86/mm/tlb: batch remote flushes
+ make olddefconfig
+ make -j2 bzImage
  CC      arch/x86/mm/init.o
  CC      arch/x86/mm/tlb.o
arch/x86/mm/tlb.c: In function 'flush_tlb_multi':
arch/x86/mm/tlb.c:912:9: error: 'info_batch' undeclared (first use in this function)
  912 |         info_batch->end = end;
      |         ^~~~~~~~~~
arch/x86/mm/tlb.c:912:9: note: each undeclared identifier is reported only once for each function it appears in
make[3]: *** [scripts/Makefile.build:250: arch/x86/mm/tlb.o] Error 1
make[2]: *** [scripts/Makefile.build:500: arch/x86/mm] Error 2
make: *** [Makefile:1992: arch/x86] Error 2
build.sh: make exited 2
"""
CONSOLE_LOG = "\n".join(
    ["[    0.000000] Linux version 6.1.0-tlblab+ (root@builder) (gcc (Debian 12.2.0-14) 12.2.0) #1 SMP",
     "[    0.000000] Command line: console=ttyS0 panic=-1 rdinit=/init",
     "[    0.012000] x86/mm: Memory block size: 128MB"]
    + ["[    0.000000] BIOS-e820: [mem 0x%016x-0x%016x] usable" % (i << 24, ((i + 1) << 24) - 1) for i in range(300)]
    + ["[    0.%06d] smpboot: CPU %d: booting" % (100000 + i * 1000, i) for i in range(1, 3)]
    + ["[    0.431200] BUG: unable to handle page fault for address: ffff888000000008",
       "[    0.431305] #PF: supervisor read access in kernel mode",
       "[    0.431410] RIP: 0010:flush_tlb_func+0x2a/0x1c0",
       "[    0.431800] Call Trace:",
       "[    0.431900]  <TASK>",
       "[    0.432000]  __flush_smp_call_function_queue+0x9b/0x220",
       "[    0.432100]  </TASK>",
       "[    0.432500] Kernel panic - not syncing: Fatal exception in interrupt",
       "[    0.432600] Kernel Offset: disabled",
       "[    0.432700] ---[ end Kernel panic - not syncing: Fatal exception in interrupt ]---",
       "boot: no SSH after 60 s; the console ends with a panic"]) + "\n"


# what each A/B job's patch is called (jobs.patch_subject, where the store has it)
SUBJECTS = {1: "x86/mm/tlb: batch remote flushes", 2: "x86/mm/tlb: batch remote flushes (v2)",
            3: "x86/mm: flush the TLB of every online CPU", 4: "mm/mremap: move page tables in one go",
            5: "[1/2] x86/mm/tlb: count the CPUs a flush reaches",
            6: "[2/2] x86/mm/tlb: send one IPI for a batch of flushes"}


# job 1's series: a cover letter (its subject names the job) and two patches
SERIES = {"cover": SUBJECTS[1], "patches": ["x86/mm/tlb: count the CPUs a flush reaches",
                                            "x86/mm/tlb: send one IPI for a batch of flushes"]}


def info(c, name, unit, direction):
    c.execute("INSERT OR REPLACE INTO metric_info (name, unit, direction) VALUES (?, ?, ?)", (name, unit, direction))


def job(c, jid, kind, state, suite, created, **kw):
    cols = {"id": jid, "kind": kind, "state": state, "suite": suite, "suite_json": "[]", "created": created}
    cols.update(kw)
    for col in ("patch_subject", "patches", "defaults", "per_patch"):
        if col in cols and col not in columns(c, "jobs"):
            del cols[col]    # a store from before jobs had it
    c.execute("INSERT INTO jobs (%s) VALUES (%s)" % (", ".join(cols), ", ".join("?" * len(cols))), list(cols.values()))


def stage(c, sid, jid, seq, kind, side, boot, state, t0, dur, machine=None, **kw):
    cols = {"id": sid, "job_id": jid, "seq": seq, "kind": kind, "side": side, "boot_index": boot, "state": state,
            "machine": machine}
    if state in ("done", "failed"):
        cols["started"] = t0
        cols["finished"] = t0 + dur
    cols.update(kw)
    c.execute("INSERT INTO stages (%s) VALUES (%s)" % (", ".join(cols), ", ".join("?" * len(cols))), list(cols.values()))


def build(c, bid, side, t0):
    c.execute("INSERT OR REPLACE INTO builds (id, tree, commit_id, config_hash, compiler, state, created, duration, meta) "
              "VALUES (?, 'linux', ?, ?, 'gcc (Debian 12.2.0-14) 12.2.0', 'done', ?, 312.5, ?)",
              (bid, ("a1b2c3d4e5" if side == "base" else "f6e5d4c3b2") * 4, "cfg-" + bid[:8], t0,
               json.dumps({"kernel_release": "6.1.0-tlblab" + ("" if side == "base" else "+"), "side": side})))


def ab_done(c, jid, boots, cases, metrics, created, profile=True, samples=True, submitter="alice"):
    """An A/B job done on m1: build base, build patched, then boot+run ABAB...
    cases: list of (workers, params dict). metrics(side, workers, boot, rng) -> {name: value}."""
    rng = random.Random(jid)
    t = created + 5
    # job 1 came as a series, its tree and base the lab's defaults
    extra = {"patches": json.dumps(SERIES), "defaults": json.dumps({"tree": "linux", "base": "v6.1-debian"})} \
        if jid == 1 else {}
    if jid in (5, 6):
        # jobs 5 and 6: job 1's series measured per patch (submit --per-patch)
        extra = {"patches": json.dumps({"cover": SERIES["cover"], "patches": SERIES["patches"][:jid - 4]}),
                 "per_patch": json.dumps({"of": 5, "k": jid - 4, "n": 2, "series": SERIES["cover"]})}
    job(c, jid, "ab", "done", "tlb", created, machines='["m1"]', submitter=submitter, boots=boots, tree="linux",
        base="v6.1-debian", patch_kind="patch", patch_subject=SUBJECTS[jid], started=t, finished=t + 900, **extra)
    sid = jid * 1000
    seq = 0
    bids = {}
    for side in ("base", "patched"):
        bids[side] = "%s%040x" % (side[0], jid)
        build(c, bids[side], side, t)
        stage(c, sid, jid, seq, "build", side, None, "done", t, 300, None, build_id=bids[side], host="builder b1",
              log="+ make -j2 bzImage\n  LD      vmlinux\n  BUILD   arch/x86/boot/bzImage\nbuild %s: done in 300 s\n" % bids[side])
        sid += 1
        seq += 1
        t += 300
    run = jid * 100000
    for boot in range(boots):
        for side in ("base", "patched"):
            boot_id = "%s-boot-%d" % (side, boot)
            stage(c, sid, jid, seq, "boot", side, boot, "done", t, 3, "m1", build_id=bids[side], boot_id=boot_id,
                  log="[    0.000000] Linux version 6.1.0-tlblab%s\n[    2.100000] Run /init as init process\n"
                  "boot: identity checked (boot id %s)\n" % ("" if side == "base" else "+", boot_id))
            sid += 1
            seq += 1
            t += 3
            rsid = sid
            stage(c, sid, jid, seq, "run", side, boot, "done", t, 40, "m1",
                  log="agent uploaded on m1\nrun: mprotect %d cases\nrun: done\n" % len(cases))
            sid += 1
            seq += 1
            clock = 1000.0 + boot * 100
            for case, (workers, params) in enumerate(cases):
                for it in (0, 1):
                    run += 1
                    warm = 1 if it == 0 else 0
                    c.execute("INSERT INTO runs (id, job_id, stage_id, machine, side, build_id, boot_id, spec_index, "
                              "case_index, iteration, warmup, workload, params, duration) "
                              "VALUES (?, ?, ?, 'm1', ?, ?, ?, 0, ?, ?, ?, ?, ?, 3)",
                              (run, jid, rsid, side, bids[side], boot_id, case, it, warm, params["workload"],
                               json.dumps(params)))
                    vals = metrics(side, workers, boot, rng)
                    c.executemany("INSERT INTO metrics (run_id, name, value) VALUES (?, ?, ?)",
                                  [(run, k, v) for k, v in vals.items()])
                    if samples:
                        tlb = vals.get("interrupts.TLB", 0) / 3
                        for sec in range(3):
                            c.execute("INSERT INTO samples (stage_id, spec_index, case_index, iteration, warmup, "
                                      "in_window, t, dt, vals) VALUES (?, 0, ?, ?, ?, ?, ?, 1.0, ?)",
                                      (rsid, case, it, warm, 1 - warm, clock, json.dumps({
                                          "interrupts.TLB": max(0, round(tlb * rng.uniform(0.7, 1.3) * (1.8 if sec == 1 and case == 2 else 1))),
                                          "vmstat.nr_tlb_remote_flush": round(vals.get("vmstat.nr_tlb_remote_flush", 0) / 3)})))
                            clock += 1
                    if profile and not warm:
                        patched = side == "patched"
                        syms = [("flush_tlb_func", 9.0 + (6.5 if patched else 0), True),
                                ("native_flush_tlb_one_user", 4.0 + (2.0 if patched else 0), True),
                                ("change_protection_range", 12.0, True),
                                ("smp_call_function_many_cond", 6.0 + (3.0 if patched else 0), True),
                                ("do_mprotect_pkey", 8.0 - (1.0 if patched else 0), True),
                                ("mprotect_worker", 20.0 - (5.0 if patched else 0), False)]
                        c.execute("INSERT INTO profiles (run_id, profile) VALUES (?, ?)", (run, json.dumps({
                            "symbols": [{"symbol": s, "self": round(v * rng.uniform(0.97, 1.03), 3), "kernel": k}
                                        for s, v, k in syms], "folded": []})))
            t += 40
    return sid


def dashboard(c):
    for m, u, d in (("mprotect.ops_per_sec", "ops/s", "higher"), ("interrupts.TLB", "count", "lower"),
                    ("interrupts.TLB.per_sec", "1/s", "lower"), ("interrupts.TLB.peak_per_sec", "1/s", "lower"),
                    ("vmstat.nr_tlb_remote_flush", "count", "lower"), ("procstat.busy_pct", "%", "neutral"),
                    ("tlb.shootdowns_per_kop", "1/kop", "lower"), ("tracepoints.tlb_flush_remote", "count", "lower"),
                    ("vmstat.nr_tlb_remote_flush.per_kop", "count/kop", "lower")):
        info(c, m, u, d)
    cases = [(w, {"workload": "mprotect", "mode": "threads", "workers": w, "size": "64K"}) for w in (1, 2, 4)]

    def metrics(side, workers, boot, rng):
        p = side == "patched"
        ops = 4.0e5 * workers ** 0.8 * (0.85 if p and workers > 1 else 1.0) * rng.gauss(1, 0.004)
        tlb = (0 if workers == 1 else 2.0e4 * workers * (4.0 if p else 1.0)) * rng.gauss(1, 0.01)
        flush = (0 if workers == 1 else 1.0e4 * workers * (0.5 if p else 1.0)) * rng.gauss(1, 0.01)
        v = {"mprotect.ops_per_sec": ops, "interrupts.TLB": tlb, "interrupts.TLB.per_sec": tlb / 3,
             "interrupts.TLB.peak_per_sec": tlb / 3 * 1.8, "vmstat.nr_tlb_remote_flush": flush,
             "procstat.busy_pct": 99.0 * rng.gauss(1, 0.001), "tlb.shootdowns_per_kop": tlb / (ops * 3) * 1000}
        if workers > 1:
            # a counter per operation (work): remote flushes per kop halve
            v["vmstat.nr_tlb_remote_flush.per_kop"] = flush / (ops * 3) * 1000
        if not p:
            v["tracepoints.tlb_flush_remote"] = flush * 0.9
        return v

    created = NOW - 7200
    ab_done(c, 1, 8, cases, metrics, created)

    # the series per patch: patch 1 changes nothing, patch 2 makes what job 1 measured
    def per_patch(k):
        def m(side, workers, boot, rng):
            return metrics("patched" if side == "patched" and k == 2 else "base", workers, boot, rng)
        return m
    ab_done(c, 5, 6, cases, per_patch(1), NOW - 9000, profile=False, samples=False)
    ab_done(c, 6, 6, cases, per_patch(2), NOW - 8000, profile=False, samples=False)
    # 2: the patched build fails
    t = NOW - 3600
    job(c, 2, "ab", "failed", "tlb", t, submitter="bob", boots=2, tree="linux", base="v6.1-debian", patch_kind="patch",
        patch_subject=SUBJECTS[2],
        started=t + 2, finished=t + 400, error_class="build", error_message="make exited 2: arch/x86/mm/tlb.c:912: 'info_batch' undeclared",
        error_stage=2001)
    build(c, "b" + "0" * 39 + "2", "base", t)
    stage(c, 2000, 2, 0, "build", "base", None, "done", t + 2, 250, None, build_id="b" + "0" * 39 + "2", host="builder b1",
          log="build: reused\n")
    stage(c, 2001, 2, 1, "build", "patched", None, "failed", t + 252, 140, None, host="builder b1", log=BUILD_LOG,
          error_class="build", error_message="make exited 2: arch/x86/mm/tlb.c:912: 'info_batch' undeclared")
    seq = 2
    for boot in range(2):
        for side in ("base", "patched"):
            for kind in ("boot", "run"):
                stage(c, 2000 + seq, 2, seq, kind, side, boot, "cancelled", 0, 0)
                seq += 1
    # 3: the patched kernel panics at boot
    t = NOW - 1800
    job(c, 3, "ab", "failed", "tlb", t, submitter="carol", boots=1, tree="linux", base="v6.1-debian", patch_kind="url",
        patch_subject=SUBJECTS[3],
        patch_url="https://lore.kernel.org/all/20240101-tlb@example.org/raw", started=t + 2, finished=t + 700,
        error_class="boot", error_message="kernel panic at boot: Fatal exception in interrupt", error_stage=3003)
    stage(c, 3000, 3, 0, "build", "base", None, "done", t + 2, 300, None, log="build: reused\n")
    stage(c, 3001, 3, 1, "build", "patched", None, "done", t + 302, 320, None, log="build: done\n")
    stage(c, 3002, 3, 2, "boot", "base", 0, "done", t + 622, 3, "m1", log="[    2.1] Run /init as init process\n")
    stage(c, 3003, 3, 3, "boot", "patched", 0, "failed", t + 625, 62, "m1", log=CONSOLE_LOG, error_class="boot",
          error_message="kernel panic at boot: Fatal exception in interrupt")
    stage(c, 3004, 3, 4, "run", "base", 0, "cancelled", 0, 0)
    stage(c, 3005, 3, 5, "run", "patched", 0, "cancelled", 0, 0)
    c.execute("UPDATE machines SET health = 'good', kernel = '6.1.0-tlblab+', last_boot = ?, arch = 'x86_64', cpus = 2 "
              "WHERE name = 'm1'", (NOW - 900,))
    c.execute("UPDATE machines SET health = 'maintenance', health_reason = 'disk replaced, waiting for a check', "
              "health_changed = ?, kernel = '6.1.0-tlblab', last_boot = ? WHERE name = 'm2'", (NOW - 5000, NOW - 86400))
    for k, (jid, sid, cls, msg) in enumerate(((3, 3003, "boot", "kernel panic at boot: Fatal exception in interrupt"),
                                              (2, None, "infra", "ssh: connection refused (port 22)"))):
        c.execute("INSERT INTO failures (machine, job_id, stage_id, class, message, at) VALUES ('m2', ?, ?, ?, ?, ?)",
                  (jid, sid, cls, msg, NOW - 4000 + k))


def nightly(c):
    """Track "nightly" (t0070's lab configures it): 14 points of one series,
    the last 7 15% slower, the change at the 8th confirmed and checked, in
    alert 1."""
    # the daemon that made the store has the track's row already
    c.execute("INSERT OR IGNORE INTO tracks (name) VALUES ('nightly')")
    c.execute("UPDATE tracks SET next_due = ?, last_run = ?, last_head = ?, last_result = 'unchanged: measured "
              "already' WHERE name = 'nightly'", (NOW + 3600, NOW - 60, "%040x" % 14))
    c.execute("INSERT INTO series (id, track, machine, workload, params, metric) VALUES "
              "(1, 'nightly', 'm1', 'mprotect', '{\"workers\":2}', 'mprotect.ops_per_sec')")
    for i in range(14):
        pid = 100 + i
        c.execute("INSERT INTO points (id, track, commit_id, commit_time, subject, author, machine, state, created) "
                  "VALUES (?, 'nightly', ?, ?, ?, 'A U Thor', 'm1', 'done', ?)",
                  (pid, "%040x" % (i + 1), NOW - 86400 * (14 - i), "mm: change %d" % (i + 1), NOW - 86400 * (14 - i)))
        v = (1000.0 if i < 7 else 850.0) + (i % 3)
        c.execute("INSERT INTO series_values (series_id, point_id, value, lo, hi, boots) VALUES (1, ?, ?, ?, ?, 3)",
                  (pid, v, v - 5, v + 5))
    c.execute("INSERT INTO alerts (id, track, good_commit, bad_commit, kind, created) VALUES "
              "(1, 'nightly', ?, ?, 'regression', ?)", ("%040x" % 7, "%040x" % 8, NOW - 3600))
    c.execute("INSERT INTO change_points (series_id, point_id, alert_id, status, p, before, after, magnitude, "
              "direction, ab_verdict, ab_p, detected) VALUES (1, 107, 1, 'confirmed', 0.0005, 1001, 851, -0.15, "
              "'regression', 'regression', 0.0002, ?)", (NOW - 3600,))
    bisection(c)


def bisection(c):
    """Bisection 1 of alert 1, done: two commits lie between the points of
    changes 7 and 8; the first of them (7a) is good, the second (7b) the
    first bad commit; 8 is the bad end."""
    good, bad = "%040x" % 7, "%040x" % 8
    a, b = "7a" + "0" * 38, "7b" + "0" * 38
    commits = [{"commit": a, "time": NOW - 86400 * 7, "subject": "mm: tidy the flush batch"},
               {"commit": b, "time": NOW - 86400 * 7 + 60, "subject": "mm: flush every CPU", "author": "A U Thor"},
               {"commit": bad, "time": NOW - 86400 * 6, "subject": "mm: change 8"}]
    level = lambda c, n: {"center": c, "spread_pct": 0.4, "n": n}
    ab = lambda v, ch, p, c0, c1: {"verdict": v, "p": p, "change_pct": ch, "mde_pct": None,
                                   "base": level(c0, 5), "patched": level(c1, 3)}
    c.execute("INSERT INTO bisections (id, alert_id, track, tree, good, bad, suite, machine, metric, workload, params, "
              "boots, state, change, status, steps_left, commits, first_bad, result, submitter, created, finished) "
              "VALUES (1, 1, 'nightly', 'linux', ?, ?, 'tlb', 'm1', 'mprotect.ops_per_sec', 'mprotect', "
              "'{\"workers\":2}', 3, 'done', 'regression', 'done', 0, ?, ?, ?, 'tracker', ?, ?)",
              (good, bad, json.dumps(commits), b, "first bad commit %s (mm: flush every CPU) by A U Thor; "
               "3 commits, 2 steps measured, 0 skipped" % b[:12], NOW - 3500, NOW - 1800))
    steps = [(good, "good", "good", None), (bad, "bad", "bad", {"good_to_bad": ab("regression", -15.0, 0.0004, 1001, 851)}),
             (b, "step", "bad", {"vs_good": ab("regression", -15.1, 0.004, 1001, 850),
                                 "vs_bad": ab("same", 0.1, 0.8, 851, 850), "jobs": 1}),
             (a, "step", "good", {"vs_good": ab("same", 0.2, 0.7, 1001, 1003),
                                  "vs_bad": ab("improvement", 17.8, 0.004, 851, 1003), "jobs": 1})]
    for i, (commit, role, outcome, ev) in enumerate(steps):
        c.execute("INSERT INTO bisection_steps (bisection_id, commit_id, role, outcome, evidence, created, finished) "
                  "VALUES (1, ?, ?, ?, ?, ?, ?)", (commit, role, outcome, json.dumps(ev) if ev else None,
                                                   NOW - 3500 + 60 * i, NOW - 3400 + 60 * i))


def columns(c, table):
    return {r[1] for r in c.execute("PRAGMA table_info(%s)" % table)}


def client(c):
    """Job 4, a failed A/B job whose spec 0 compares and spec 1 does not."""
    dashboard(c)
    info(c, "mremap.moves_per_sec", "moves/s", "higher")
    has = columns(c, "stages")
    rng = random.Random(4)
    t = NOW - 900
    specs = [("mprotect", {"workload": "mprotect", "mode": "threads", "workers": 2}),
             ("mremap", {"workload": "mremap", "workers": 2})]
    segv = ("agent killed by signal 11 (SIGSEGV) in mremap; console: "
            "BUG: unable to handle page fault for address: ffff888000000008")
    job(c, 4, "ab", "failed", "tlb", t, machines='["m1"]', submitter="dave", boots=2, tree="linux",
        base="v6.1-debian", patch_kind="patch", patch_subject=SUBJECTS[4], started=t + 1, finished=t + 300,
        error_class="workload",
        error_message="spec 1 (mremap) failed on patched, again on a repeated boot", error_stage=4011)
    bids = {"base": "b%040x" % 4, "patched": "p%040x" % 4}
    for seq, side in enumerate(("base", "patched")):
        build(c, bids[side], side, t)
        stage(c, 4000 + seq, 4, seq, "build", side, None, "done", t + 1, 10, "builder b1", build_id=bids[side])
    # (seq, side, boot, repeat_of, spec 1 fails)
    plan = [(2, "base", 0, None, False), (4, "patched", 0, None, True), (6, "base", 1, None, False),
            (8, "patched", 1, None, False), (10, "patched", 2, 5, True)]
    run = 400000
    for seq, side, boot, repeat, fails in plan:
        extra = {"repeat_of": repeat} if repeat is not None and "repeat_of" in has else {}
        boot_id = "%s-boot-%d" % (side, boot)
        stage(c, 4000 + seq, 4, seq, "boot", side, boot, "done", t + 20 + seq, 3, "m1", build_id=bids[side],
              boot_id=boot_id, **extra)
        outcomes = [{"spec": 0, "workload": "mprotect", "params": specs[0][1], "state": "done",
                     "class": None, "message": None},
                    {"spec": 1, "workload": "mremap", "params": specs[1][1], "state": "failed" if fails else "done",
                     "class": "workload" if fails else None, "message": segv if fails else None}]
        if "specs" in has:
            extra["specs"] = json.dumps(outcomes)
        if fails:
            extra.update(error_class="workload", error_message="run: spec 1 on m1: " + segv)
        stage(c, 4001 + seq, 4, seq + 1, "run", side, boot, "failed" if fails else "done", t + 23 + seq, 8, "m1",
              **extra)
        for spec, (workload, params) in enumerate(specs):
            if spec == 1 and fails:
                continue
            for it in (0, 1):
                run += 1
                c.execute("INSERT INTO runs (id, job_id, stage_id, machine, side, build_id, boot_id, spec_index, "
                          "case_index, iteration, warmup, workload, params, duration) "
                          "VALUES (?, 4, ?, 'm1', ?, ?, ?, ?, 0, ?, ?, ?, ?, 2)",
                          (run, 4001 + seq, side, bids[side], boot_id, spec, it, 1 if it == 0 else 0, workload,
                           json.dumps(params)))
                ops = (7.0e5 if workload == "mprotect" else 2.0e5) * (0.8 if side == "patched" else 1.0)
                c.execute("INSERT INTO metrics (run_id, name, value) VALUES (?, ?, ?)",
                          (run, workload + (".ops_per_sec" if workload == "mprotect" else ".moves_per_sec"),
                           ops * rng.gauss(1, 0.004)))


def bench(c, nrows):
    # rows = cases x metrics: 10 thread counts x (nrows / 10) metrics
    nmetrics = max(1, nrows // 10)
    names = ["mprotect.ops_per_sec"] + ["bench.counter%03d" % i for i in range(nmetrics - 1)]
    for m in names:
        info(c, m, "ops/s" if m.startswith("mprotect") else "count", "higher" if m.startswith("mprotect") else "lower")
    cases = [(w, {"workload": "mprotect", "mode": "threads", "workers": w}) for w in (1, 2, 4, 8, 12, 16, 24, 32, 48, 64)]

    def metrics(side, workers, boot, rng):
        p = side == "patched"
        out = {}
        for i, m in enumerate(names):
            shift = 1.0
            if p and i % 7 == 1:
                shift = 1.3    # a worse counter
            elif p and i % 11 == 2:
                shift = 0.7
            out[m] = 1e5 * (i + 1) * workers * shift * rng.gauss(1, 0.003)
        return out

    ab_done(c, 1, 5, cases, metrics, NOW - 600, profile=False, samples=False, submitter="bench")


def main():
    c = sqlite3.connect(sys.argv[1])
    c.execute("PRAGMA foreign_keys = ON")
    with c:
        if sys.argv[2] == "dashboard":
            nightly(c)
            dashboard(c)
        elif sys.argv[2] == "client":
            nightly(c)
            client(c)
        elif sys.argv[2] == "bench":
            bench(c, int(sys.argv[3]))
        else:
            sys.exit("usage: seed.py DB dashboard | seed.py DB client | seed.py DB bench ROWS")


if __name__ == "__main__":
    main()
