#!/bin/sh
# One bad run does not sink a job, with really built kernels and real QEMU
# boots. A patch whose kernel kills the mremap workload (a fixed-address
# mremap gets SIGSEGV): the patched run fails that spec, the boot is
# repeated once, fails again, and the job ends as a `workload` result of the
# patch, with the mprotect spec that ran on both sides compared, and every
# failure named with its signal. A suite whose spec fails on the base
# kernel too ends as `suite`, not as a result of the patch. The machine is
# good afterwards and remembers what it booted.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
. "$TOP/tests/guest.sh"
trap 'daemon_cleanup; rm -rf "$TMP"' EXIT
guest_lab 35000 10029 vm1
# the daemon builds in the lab's directories: as the lab's user, their owner
daemon_as_lab_user

guest_prepare usr/sbin/sshd

{ lab_qemu_head; lab_guest_builder; cat <<EOC
suites:
  - name: crashy
    timeout: 600
    workloads:
      - workload: mprotect
        mode: threads
        workers: 2
        duration: 1s
        iterations: 2
      - workload: mremap
        workers: 2
        duration: 1s
        iterations: 1
      - workload: tcp-rr
        workers: 1
        duration: 1s
        iterations: 1
        monitors: [interrupts, procstat, profile]
  - name: broken
    timeout: 600
    workloads:
      - workload: exec
        command: [sh, -c, "echo the suite is broken here >&2; exit 3"]
      - workload: mprotect
        mode: threads
        workers: 2
        duration: 1s
        iterations: 2
EOC
} >"$TMP/lab.yaml"
DAEMON_AGENT=$GUEST_AGENT daemon_start "$TMP/lab.yaml" || { fail "tlblabd starts" "see log"; exit 0; }

# job SUITE PATCH: an A/B job with one boot per side; prints its id
job() {
	"$CLIENT" submit --json --suite "$1" --tree linux --base v6.1-debian --patch "$2" --boots 1 \
		--submitter t0054 | jq_py 'J["job"]["id"]'
}

# 1. the patched kernel kills the mremap workload on every boot
t0=$(date +%s)
id=$(job crashy "$TOP/tests/fixtures/patches/mremap-fixed-segv.patch")
state=$(job_wait "$id" "done failed cancelled" 3000)
api GET "/jobs/$id" >"$TMP/job1.json"
api GET "/jobs/$id/comparison" >"$TMP/cmp1.json"
echo "# job $id ended $state in $(($(date +%s) - t0)) s"
$PY - "$TMP/job1.json" "$TMP/cmp1.json" <<'PYEOF' || fail "the checks of line 64 ran to their end" "python exited $?"
import json, sys
j = json.load(open(sys.argv[1]))["job"]
try:
    c = json.load(open(sys.argv[2]))["comparison"]
except Exception:
    c = None
def ok(cond, name, why=""):
    print(("ok - " if cond else "not ok - ") + name + ("" if cond else " # " + str(why)[:700]))
err = j.get("error") or {}
ok(j["state"] == "failed" and err.get("class") == "workload",
   "a spec that crashes on every patched boot is a workload result of the patch", (j["state"], err))
ok("spec 1" in (err.get("message") or "") and "patched" in (err.get("message") or ""),
   "the job's error names the spec and the side: %s" % (err.get("message") or "")[:160], err)
ok("signal 11" in (err.get("message") or "") or "Segmentation" in (err.get("message") or ""),
   "the crash is named with its signal", err)
runs = [g for g in j["stages"] if g["kind"] == "run"]
order = ["%s%s:%s" % (g["side"], "(repeat)" if g["repeat_of"] is not None else "", g["state"]) for g in runs]
ok(order == ["base:done", "patched:failed", "patched(repeat):failed"],
   "the failed patched boot was repeated once, right after it: %s" % " ".join(order), order)
failed = [g for g in runs if g["state"] == "failed"]
ok(all([e["state"] for e in g["specs"]] == ["done", "failed", "done"] for g in failed),
   "the failed runs kept their first spec, failed the second and still ran the third", [g["specs"] for g in failed])
ok(all(g["specs"][1]["class"] == "workload" and g["specs"][1]["message"] for g in failed),
   "each failed spec says why", [g["specs"] for g in failed])
ok(c is not None, "the failed job still has a comparison", sys.argv[2])
if c:
    mp = [r for r in c["rows"] if r["workload"] == "mprotect" and r["metric"] == "mprotect.ops_per_sec"]
    ok(len(mp) == 1 and mp[0]["base"]["n"] >= 1 and mp[0]["patched"]["n"] >= 1,
       "the spec that ran on both sides is compared (mprotect: base n=%s, patched n=%s)" %
       (mp[0]["base"]["n"] if mp else "-", mp[0]["patched"]["n"] if mp else "-"), mp)
    mr = [f for f in c["failed"] if f.get("workload") == "mremap" and f["side"] == "patched"]
    ok(len(mr) >= 1, "the comparison lists the patched mremap runs as failed, not as samples", c["failed"])
    # the switch_mm experiment's two numbers: TCP_RR throughput, and the
    # share of switch_mm_irqs_off (timed by ftrace: the TCG guest has no PMU)
    rr = [r for r in c["rows"] if r["metric"] == "tcp-rr.trans_per_sec"]
    ok(len(rr) == 1 and rr[0]["base"]["n"] >= 1 and rr[0]["patched"]["n"] >= 1,
       "tcp-rr throughput is compared (%s -> %s transactions/s)" %
       (rr[0]["base"]["center"] if rr else "-", rr[0]["patched"]["center"] if rr else "-"), rr)
    sw = [s for s in c["profile_diff"]["symbols"] if s["symbol"] == "switch_mm_irqs_off"]
    ok(len(sw) == 1 and sw[0]["base_self"] > 0 and sw[0]["patched_self"] > 0,
       "the profile diff shows switch_mm_irqs_off (%.3f%% -> %.3f%% of CPU, %s)" %
       (sw[0]["base_self"], sw[0]["patched_self"], sw[0].get("source", "perf")) if sw else
       "the profile diff shows switch_mm_irqs_off", c["profile_diff"])
    kf = [r for r in c["rows"] if r["metric"] == "kfunc.switch_mm_irqs_off.self_pct"]
    ok(len(kf) == 1, "switch_mm_irqs_off's share of CPU is a comparison row with its statistics",
       [r["metric"] for r in c["rows"] if r["workload"] == "tcp-rr"])
ok(j["verdict"] is None, "a failed job gets no verdict", j["verdict"])
PYEOF
# a kernel that crashed instead is not what this test is about: show its report
for sid in $(jq_py '" ".join(str(g["id"]) for g in J["job"]["stages"] if g["kind"] == "run" and g["state"] == "failed")' <"$TMP/job1.json"); do
	api GET "/jobs/$id/stages/$sid/log" | sed -n "/== the kernel's report:/,\$p" | head -n 60 | sed 's/^/#   /'
done
cls=$(api GET "/jobs?state=failed" | jq_py '[x["error"]["class"] for x in J["jobs"] if x["id"] == '"$id"'][0]')
[ "$cls" = workload ] && pass "the job list shows the failure class" || fail "job list class" "$cls"
grep -q "job $id: failed (workload); the specs that ran on both sides are compared" "$DAEMON_LOG" &&
	pass "the daemon logged the failure and kept the comparison" ||
	fail "daemon log" "$(grep "job $id:" "$DAEMON_LOG" | tail -n 5)"
"$CLIENT" status "$id" >"$TMP/status.txt" 2>&1
grep -q "mremap" "$TMP/status.txt" && grep -qi "failed" "$TMP/status.txt" &&
	pass "tlblab status shows which spec failed" || fail "tlblab status" "$(head -c 800 "$TMP/status.txt")"
api GET /machines >"$TMP/machines.json"
$PY - "$TMP/machines.json" <<'PYEOF' || fail "the checks of line 126 ran to their end" "python exited $?"
import json, sys, time
m = [x for x in json.load(open(sys.argv[1]))["machines"] if x["name"] == "vm1"][0]
def ok(cond, name, why=""):
    print(("ok - " if cond else "not ok - ") + name + ("" if cond else " # " + str(why)[:400]))
ok(m["health"] == "good", "the machine is good after runs that crashed", m)
ok(isinstance(m["last_boot"], (int, float)) and time.time() - m["last_boot"] < 3600 and (m["kernel"] or "").startswith("6.1"),
   "the machine shows its last boot and kernel (%s)" % m["kernel"], m)
PYEOF

# 2. a suite that fails on the base kernel too
id=$(job broken "$TOP/kernels/patches/0001-x86-mm-tlb-flush-every-online-cpu.patch")
state=$(job_wait "$id" "done failed cancelled" 3000)
api GET "/jobs/$id" >"$TMP/job2.json"
$PY - "$TMP/job2.json" <<'PYEOF' || fail "the checks of line 140 ran to their end" "python exited $?"
import json, sys
j = json.load(open(sys.argv[1]))["job"]
def ok(cond, name, why=""):
    print(("ok - " if cond else "not ok - ") + name + ("" if cond else " # " + str(why)[:700]))
err = j.get("error") or {}
ok(j["state"] == "failed" and err.get("class") == "suite",
   "a spec that fails on the base kernel too is a suite failure, not a result of the patch", (j["state"], err))
ok("exit status 3" in (err.get("message") or "") and "suite is broken here" in (err.get("message") or ""),
   "the message carries the command's status and output", err)
runs = [g for g in j["stages"] if g["kind"] == "run"]
ok(not any(g["side"] == "patched" and g["repeat_of"] is not None for g in runs),
   "once the base side's failure repeated, patched boots are not repeated for it",
   ["%s %s %s" % (g["side"], g["repeat_of"], g["state"]) for g in runs])
PYEOF
