#!/bin/sh
# Guests bigger than the host (a suite's guest_cpus, docs/emulated-work.md),
# with a really built kernel and real QEMU boots under icount: an A/B job
# of the demo patch, one round, on a suite that sweeps guest_cpus: [2, 4]
# with workers: cpus. Each side boots once per count, ABAB at 2 vCPUs and
# then at 4; the agent's hello in each boot saw as many CPUs as asked
# (-smp), every run's params say its count and its workers followed it,
# the comparison has a row per count, and a sweep along cpus (a point per
# count, each with its verdict). On a 2-CPU host, a guest of 4 vCPUs is
# bigger than the host. The run stages' times at each count are shown, not
# tested.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
. "$TOP/tests/guest.sh"
trap 'daemon_cleanup; rm -rf "$TMP"' EXIT
guest_lab 31000 10031 vm1
daemon_as_lab_user

guest_prepare usr/sbin/sshd

{ lab_qemu_head "accel: icount"; lab_guest_builder; cat <<EOC
suites:
  - name: swept
    timeout: 600
    guest_cpus: [2, 4]
    workloads:
      - workload: mprotect
        mode: threads
        workers: cpus
        duration: 1
        iterations: 1
EOC
} >"$TMP/lab.yaml"
DAEMON_AGENT=$GUEST_AGENT daemon_start "$TMP/lab.yaml" || { fail "tlblabd starts" "see log"; exit 0; }

t0=$(date +%s)
id=$("$CLIENT" submit --json --suite swept --tree linux --base v6.1-debian --boots 1 --submitter t0057 \
	--patch "$TOP/kernels/patches/0001-x86-mm-tlb-flush-every-online-cpu.patch" | jq_py 'J["job"]["id"]')
state=$(job_wait "$id" "done failed cancelled" 2400)
echo "# job $id ended $state in $(($(date +%s) - t0)) s"
api GET "/jobs/$id" >"$TMP/job.json"
api GET "/jobs/$id/runs" >"$TMP/runs.json"
api GET "/jobs/$id/comparison" >"$TMP/cmp.json"
boot4=$(jq_py '[g["id"] for g in J["job"]["stages"] if g["kind"] == "boot" and g.get("cpus") == 4][0]' <"$TMP/job.json" 2>/dev/null)
api GET "/jobs/$id/stages/$boot4/log" >"$TMP/boot4.log" 2>/dev/null
$PY - "$TMP/job.json" "$TMP/runs.json" "$TMP/cmp.json" "$TMP/boot4.log" <<'PYEOF' || fail "the checks of line 44 ran to their end" "python exited $?"
import json, sys
j = json.load(open(sys.argv[1]))["job"]
runs = json.load(open(sys.argv[2]))["runs"]
try:
    c = json.load(open(sys.argv[3]))["comparison"]
except Exception:
    c = None
boot4 = open(sys.argv[4]).read()
def ok(cond, name, why=""):
    print(("ok - " if cond else "not ok - ") + name + ("" if cond else " # " + str(why)[:700]))
ok(j["state"] == "done", "the sweep job is done", (j["state"], j.get("error")))
boots = ["%s/%s" % (g["side"], g.get("cpus")) for g in j["stages"] if g["kind"] == "boot"]
ok(boots == ["base/2", "patched/2", "base/4", "patched/4"],
   "each side boots once per count, ABAB at 2 vCPUs then at 4: %s" % " ".join(boots), boots)
seen = ["%s/%s" % (g.get("cpus"), (g.get("host") or {}).get("cpus")) for g in j["stages"] if g["kind"] == "run"]
ok(len(seen) == 4 and all(s.split("/")[0] == s.split("/")[1] for s in seen),
   "the agent's hello saw as many CPUs as each boot asked (asked/seen: %s)" % " ".join(seen), seen)
ok("a guest of 4 vCPUs" in boot4, "the 4-vCPU boot's log says so", boot4[:400])
measured = [r for r in runs if not r["warmup"]]
pc = sorted(set((r["params"].get("cpus"), r["params"].get("workers")) for r in measured), key=str)
ok(pc == [(2, 2), (4, 4)], "every run's params say its count, and workers: cpus followed it (cpus, workers): %s" % pc, pc)
for g in j["stages"]:
    if g["kind"] == "run" and g.get("started") and g.get("finished"):
        print("# run stage %s at %s vCPUs: %.1f s" % (g["side"], g.get("cpus"), g["finished"] - g["started"]))
ok(c is not None, "the sweep job has a comparison", sys.argv[3])
if c:
    head = [r for r in c["rows"] if r["workload"] == "mprotect" and r["metric"] == "mprotect.kernel_insn_per_op"]
    counts = sorted(r["params"].get("cpus") for r in head)
    ok(counts == [2, 4], "the comparison has a row per count (mprotect.kernel_insn_per_op at cpus %s: %s)" %
       (counts, ", ".join("%s vCPUs %s -> %s, %s" % (r["params"].get("cpus"), r["base"]["center"], r["patched"]["center"],
                                                       r["verdict"]) for r in sorted(head, key=lambda r: r["params"]["cpus"]))), head)
    sw = [s for s in c["sweeps"] if s.get("axis") == "cpus" and s["metric"] == "mprotect.kernel_insn_per_op"]
    ok(len(sw) == 1 and [p["x"] for p in sw[0]["rows"]] == [2, 4] and all(p["verdict"] for p in sw[0]["rows"]) and
       sw[0]["params"].get("workers") == "cpus",
       "a sweep along cpus, a point per count with its verdict: %s" %
       (", ".join("%s: %s" % (p["x"], p["verdict"]) for p in sw[0]["rows"]) if sw else "none"),
       [(s.get("axis"), s["metric"], s["params_text"]) for s in c["sweeps"]])
PYEOF
machine_good "after the sweep"
