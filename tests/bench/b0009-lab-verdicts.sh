#!/bin/sh
# Verdicts on the embedded lab, for real: two A/B jobs of the tlb suite
# (configs/local.yaml) against v6.1-debian with the lab's default design (5
# boots a side, up to 10 when a headline row is undecided), one after the
# other on its one QEMU machine:
#   A  a comment-only patch (a comment added to mm/mprotect.c): nothing
#      changes, so every headline row should be same or, where the lab's
#      noise is too large for the margin, inconclusive with what it rules
#      out; never a regression or an improvement;
#   B  the demo patch (kernels/patches/0001-*: every flush goes to every
#      online CPU): the TLB counters and the processes-mode mprotect
#      throughput change.
#   C  the 2% patch (kernels/patches/0004-*: a fixed amount of extra work
#      in flush_tlb_mm_range(), about 2% of an mprotect's kernel
#      instructions): only the instruction rows can see it.
#   D  the flush-ceiling patch (kernels/patches/0002-*: a range of more
#      than one page is flushed whole, not page by page): the tlb suite
#      has the plugin's TLB model on (docs/tlb-model.md), and mremap's
#      32 KiB (8-page) moves then lose every translation a flush could
#      keep; their tlb_lost_per_op and dtlb_miss_per_op must be called
#      regressions, whatever the instruction rows say (issue 38).
#   E  seed 003 on arm64 (kernels/patches/0003-*: a single-threaded mm's
#      flushes stay local instead of a broadcast TLBI) on arm1, configs/
#      local.yaml's qemu-arm1 (icount, the plugin's TLB model), suite tlbi
#      at 2 and 8 vCPUs: the broadcasts the mprotect processes and the
#      stencil beside one receive, and the translations the processes
#      lose, must be called improvements at both counts; the job's verdict,
#      the time rows and the comparison's notes on the neighbour are
#      printed for what they saw (docs/tlb-model.md, "Seed 003 in the
#      lab"). 5677 s for E alone on 2026-12-06 (18+18 boots, 9 a count;
#      a make test ran beside its first 35 minutes).
# The lab's machine is configs/local.yaml's qemu1 (accel icount with the
# instruction plugin), so the headline rows are instructions per operation
# (class work) and spin-wait instructions (wait); each job's by_class line
# says what the time rows could and could not see.
# Prints, per job, its verdict, the look it ended at, and per headline row
# and TLB counter the change, p, adjusted p, detectable change and verdict.
# 31m52s when last run (2026-12-03 23:05, 54 boots under icount); the builds come
# from the cache. B9_JOBS="A C" runs some of the jobs; BENCH_KEEP=1 keeps
# the store.
set -u
PORT_BASE=27200
. "$(dirname "$0")/lib.sh"
export TLBLAB_TOKEN=bench-token-0123456789
lab_cache_ready "$CACHE"
case " ${B9_JOBS:-A B C D E} " in
*" E "*) arm_cache_ready "$CACHE"; LAB_ARM_PORT=10035 ;;
esac
{ embedded_lab "$CACHE" 10028; lab_suites; } >"$tmp/lab.yaml"

comment_patch "$CACHE" "$tmp/comment.diff" || { echo "bench: cannot make the comment patch"; exit 1; }

start
export TLBLAB_SERVER="http://127.0.0.1:$port"
# B9_JOBS="A": some of the jobs only (default all four)
for j in ${B9_JOBS:-A B C D E}; do
	case $j in
	A) bench_job A "$tmp/comment.diff" ;;
	B) bench_job B "$TOP/kernels/patches/0001-x86-mm-tlb-flush-every-online-cpu.patch" ;;
	C) bench_job C "$TOP/kernels/patches/0004-x86-mm-tlb-extra-work-2pct.patch" ;;
	D) bench_job D "$TOP/kernels/patches/0002-x86-mm-tlb-single-page-ceiling-1.patch" ;;
	E) BENCH_SUITE=tlbi bench_job E "$TOP/kernels/patches/0003-arm64-mm-flush-locally-single-cpu-mm.patch" \
		--machines arm1 ;;
	esac
done
stop

/usr/bin/python3 - "$tmp" <<'PYEOF'
import json, os, sys
d = sys.argv[1]
def fmt(v, f="%.3g"):
    return "-" if v is None else f % v
status = 0
for name, what in (("A", "comment-only patch"), ("B", "demo patch (flush every online CPU)"),
                   ("C", "2% patch (extra work in the flush path)"),
                   ("D", "flush-ceiling patch (ranges flushed whole)"),
                   ("E", "seed 003 on arm64 (single-threaded mm flushed locally)")):
    if not os.path.exists(os.path.join(d, name + "-job.json")):
        continue	# not asked for (B9_JOBS)
    job = json.load(open(os.path.join(d, name + "-job.json")))["job"]
    try:
        c = json.load(open(os.path.join(d, name + "-cmp.json")))["comparison"]
    except Exception:
        print("%s %s: job %s, no comparison (%s)" % (name, what, job["state"], job.get("error")))
        status = 1
        continue
    g = c.get("design", {})
    secs = open(os.path.join(d, name + ".secs")).read().strip()
    print("%s %s: job %s in %s s, verdict %s, look %s of %s, %s+%s boots" % (
        name, what, job["state"], secs, c["verdict"], g.get("look"), g.get("looks"),
        c["provenance"]["boots"]["base"], c["provenance"]["boots"]["patched"]))
    # per-boot spread (CV of the per-boot medians) of the headline rows and
    # of the time scores, median over rows and sides: the lab's noise floor
    for cls, pick in (("work+wait headline", lambda r: r["headline"]),
                      ("time score", lambda r: r.get("role") == "score")):
        sp = sorted(r[s]["spread_pct"] for r in c["rows"] if pick(r) for s in ("base", "patched")
                    if r[s].get("spread_pct") is not None)
        if sp:
            print("   per-boot spread, %s rows: median %.2f%% (%.2f-%.2f%%, %d values)" % (
                cls, sp[len(sp) // 2] if len(sp) % 2 else (sp[len(sp) // 2 - 1] + sp[len(sp) // 2]) / 2,
                sp[0], sp[-1], len(sp)))
    for k, v in sorted((c.get("by_class") or {}).items()):
        print("   class %-5s %s%s" % (k, v.get("text"), "" if v.get("makes_job_verdict") else " [not the job's verdict]"))
    for r in c["rows"]:
        tlb = (r["metric"].endswith(".per_sec") and r["metric"].split(".")[0] in ("interrupts", "vmstat", "tlb_flush")
               or r["metric"].endswith(("tlb_miss_per_op", "tlb_lost_per_op", "tlb_inval_received_per_op")))
        if not (r["headline"] or tlb or r.get("class") == "time" and (
                r["metric"] == "mprotect.ops_per_sec" or name == "E")):
            continue
        print("   %-9s %-34s %-28s %8s%% p %-8s adj %-8s mde %6s%%  %s" % (
            "headline" if r["headline"] else r.get("class", "counter"), r["metric"][:34], r["params_text"][:28],
            fmt(r.get("change_pct"), "%+.1f"), fmt(r.get("p")), fmt(r.get("p_adj")),
            fmt(r.get("mde_pct"), "%.1f"), r["verdict"]))
    if name == "D":
        # the TLB model's rows of mremap: the ceiling patch must be a
        # regression there, whatever the instruction rows say
        # of its 32 KiB moves (8 pages, flushed page by page below the
        # ceiling of 33; the 8 MiB moves are flushed whole by both kernels)
        lost = [r for r in c["rows"] if r["metric"] in ("mremap.tlb_lost_per_op", "mremap.dtlb_miss_per_op")
                and str(r["params"].get("size")) in ("32768", "32K")]
        called = [r for r in lost if r["verdict"] == "regression"]
        print("   D target: the TLB model rows of mremap's 32 KiB moves called regressions: %d of %d%s" % (
            len(called), len(lost), "" if lost and len(called) == len(lost) else "  FAIL"))
        if not lost or len(called) != len(lost):
            status = 1
    if name == "E":
        # seed 003's rows (issue 38): the broadcasts received by the
        # mprotect processes' CPUs and by the stencil's beside one, and the
        # translations the processes lose, at every CPU count; the
        # stencil's lost translations are printed (its translations carry
        # another ASID than the ones the neighbour's TLBIs name: 0 -> 0,
        # docs/tlb-model.md)
        want = [r for r in c["rows"] if (
            r["metric"] in ("mprotect.tlb_inval_received_per_op", "mprotect.tlb_lost_per_op")
            and r["params"].get("mode") == "processes"
            or r["metric"] == "stencil.tlb_inval_received_per_op")]
        called = [r for r in want if r["verdict"] == "improvement"]
        for r in want:
            print("   E row %-36s %-40s %s" % (r["metric"], r["params_text"][:40], r["verdict"]))
        print("   E target: seed 003's received and lost rows called improvements: %d of %d (job %s)%s" % (
            len(called), len(want), c["verdict"], "" if want and len(called) == len(want) else "  FAIL"))
        for note in c.get("notes", []):
            if note.startswith("the neighbour"):
                print("   note: " + note)
        if not want or len(called) != len(want):
            status = 1
sys.exit(status)
PYEOF
