#!/bin/sh
# Patched kernels end to end, with a really built kernel and real QEMU boots:
# the daemon builds base and patched on a builder it reaches over SSH (an
# sshd on 127.0.0.7 in front of the warm tree, build directory and ccache in
# /var/cache/tlblab, logged in to as the lab's user, their owner), where
# build.sh sandboxes the build (issue 12), boots
# each in a 2-vCPU guest under icount (as the default lab does), runs a
# suite, and stores both sides. Then the ways a patch fails: it does not
# apply, does not compile, panics at boot, or asks for an option
# olddefconfig drops. Each must end with the right class and a message a
# developer can act on, and leave the machine good.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
. "$TOP/tests/sshd.sh"
. "$TOP/tests/guest.sh"
trap 'daemon_cleanup; sshd_cleanup; rm -rf "$TMP"' EXIT
guest_lab 23000 10023 vm1
# the daemon is the lab's user, as make demo's is: the guest's files in
# $CACHE are that user's, and QEMU's sandbox reads them as that user
daemon_as_lab_user

guest_prepare usr/sbin/sshd
# the builder is reached over SSH, as a real lab's is: an sshd on 127.0.0.7
# (its host key checked) in front of the warm tree, workdir and ccache
# as the lab's user, who alone writes in the lab's directories (root in
# them would write through what that user could have made a link)
sshd_keys "$TMP/keys" || { fail "ssh keys" "ssh-keygen failed"; exit 0; }
chown "$LAB_USER" "$SSHD_IDENTITY"
SSHD_SHELL_USERS=$LAB_USER sshd_start builder 127.0.0.7 "$(sshd_port 3)" ||
	{ fail "sshd for the builder starts on 127.0.0.7" "see above"; exit 0; }

# the machine as the default lab's qemu1: the plugin's TLB model in the
# boots of a suite that asks for it (quick-tlb, the first job's)
{ lab_qemu_head "accel: icount"; cat <<EOC
builders:
  - name: remote
    transport: ssh
    host: 127.0.0.7
    port: $(sshd_port 3)
    user: $LAB_USER
    identity: $SSHD_IDENTITY
    known_hosts: $SSHD_KNOWN_HOSTS
    jobs: 2
    workdir: $CACHE
trees:
  - name: linux
    url: $CACHE/linux
    builder: remote
    fragments: [$TOP/kernels/fragments/lab-required.config, $TOP/kernels/fragments/qemu-x86_64.config]
  - name: linux-dropped
    url: $CACHE/linux
    builder: remote
    fragments: [$TOP/kernels/fragments/lab-required.config, $TOP/kernels/fragments/qemu-x86_64.config,
                $TOP/tests/fixtures/fragments/dropped-option.config]
EOC
	lab_quick_suite
	cat <<EOC
    compare:
      metrics:
        "tlb_flush.*": {alpha: 0.001, min_change: 10%}
  - name: quick-tlb
    timeout: 600
    tlb_model: on
    workloads:
      - workload: mprotect
        mode: [threads, processes]
        workers: 2
        duration: 1
        iterations: 2
    compare:
      metrics:
        "tlb_flush.*": {alpha: 0.001, min_change: 10%}
EOC
} >"$TMP/lab.yaml"
DAEMON_AGENT=$GUEST_AGENT daemon_start "$TMP/lab.yaml" || { fail "tlblabd starts" "see log"; exit 0; }

# submit TREE PATCHFILE: prints the job id
submit() {
	"$CLIENT" submit --json --suite quick --tree "$1" --base v6.1-debian --patch "$2" --boots 1 --submitter t0050 |
		jq_py 'J["job"]["id"]'
}

# expect NAME JOB CLASS PATTERN: the job failed with CLASS and a message matching PATTERN
expect() {
	state=$(job_wait "$2" "done failed cancelled" 2400)
	job=$(api GET "/jobs/$2")
	cls=$(printf "%s\n" "$job" | jq_py '(J["job"]["error"] or {}).get("class")')
	msg=$(printf "%s\n" "$job" | jq_py '(J["job"]["error"] or {}).get("message")')
	if [ "$state" = failed ] && [ "$cls" = "$3" ] && printf "%s\n" "$msg" | grep -Eq "$4"; then
		pass "$1: $3: $(printf "%s\n" "$msg" | head -n 1 | cut -c1-160)"
	else
		fail "$1" "state $state, class $cls: $(printf "%s\n" "$msg" | head -c 600)"
	fi
	h=$(api GET /machines | jq_py '[m["health"] for m in J["machines"] if m["name"] == "vm1"][0]')
	case "$h" in good|unknown) pass "$1: vm1 is still usable ($h)" ;; *) fail "$1: vm1 usable" "$h" ;; esac
}

# 1. the demo patch, sent as a developer sends a series (git format-patch
# --cover-letter): a cover letter, the demo patch, and two comment-only
# patches at the ends of mm/mprotect.c and mm/mremap.c (made from the base's
# files, so they apply). Processes now shoot down every CPU. One boot per
# side cannot be significant, so the job grows to max_boots (2) by itself.
# comment_mail N FILE: patch N/3, a comment appended to FILE of the base
comment_mail() {
	n=$(git -C "$CACHE/linux" show "v6.1-debian:$2" | wc -l)
	printf 'From %040d Mon Sep 17 00:00:00 2001\nFrom: tlblab test <t@localhost>\nDate: Mon, 1 Jan 2024 00:00:0%d +0000\n' "$1" "$1"
	printf 'Subject: [PATCH %d/3] %s: a comment at its end\n\nNothing the kernel runs changes.\n---\n' "$1" "$2"
	printf 'diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -%d,3 +%d,4 @@\n' "$2" "$2" "$2" "$2" $((n - 2)) $((n - 2))
	git -C "$CACHE/linux" show "v6.1-debian:$2" | tail -n 3 | sed 's/^/ /'
	printf '+/* tlblab: patch %d of the test series */\n-- \n2.39.5\n\n' "$1"
}
{
	printf 'From %040d Mon Sep 17 00:00:00 2001\nFrom: tlblab test <t@localhost>\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n' 0
	printf 'Subject: [PATCH 0/3] x86/mm/tlb: the demo series\n\nThe demo patch, and two that change nothing.\n\n-- \n2.39.5\n\n'
	sed '1,/^Subject:/s/^Subject: \[PATCH\]/Subject: [PATCH 1\/3]/' "$TOP/kernels/patches/0001-x86-mm-tlb-flush-every-online-cpu.patch"
	echo
	comment_mail 2 mm/mprotect.c
	comment_mail 3 mm/mremap.c
} >"$TMP/series.mbox"
# 1b. a series per patch (--per-patch): the series' first two patches,
# a job per prefix (patches 1..k against the base) and each patch's step;
# the demo patch (1 of 2) moves the kernel's work per mprotect(), the
# comment (2 of 2) moves nothing
{
	printf 'From %040d Mon Sep 17 00:00:00 2001\nFrom: tlblab test <t@localhost>\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n' 0
	printf 'Subject: [PATCH 0/2] x86/mm/tlb: the demo pair\n\nThe demo patch, and one that changes nothing.\n\n-- \n2.39.5\n\n'
	sed '1,/^Subject:/s/^Subject: \[PATCH\]/Subject: [PATCH 1\/2]/' "$TOP/kernels/patches/0001-x86-mm-tlb-flush-every-online-cpu.patch"
	echo
	comment_mail 2 mm/mprotect.c | sed 's/PATCH 2\/3/PATCH 2\/2/'
} >"$TMP/pair.mbox"
# part 2's series whose second patch does not apply
{
	comment_mail 1 mm/mprotect.c | sed 's/PATCH 1\/3/PATCH 1\/2/'
	sed '1,/^Subject:/s/^Subject: \[PATCH\]/Subject: [PATCH 2\/2]/' "$TOP/tests/fixtures/patches/does-not-apply.patch"
} >"$TMP/bad-series.mbox"
# Every job of the test is submitted now, the first one first: the daemon
# takes stages in the order of their jobs, so vm1 boots the first job's
# kernels first, while the builder (another host: no quiet-host pause)
# builds the later jobs' kernels, and the jobs that fail at their build
# (part 2) end meanwhile; each job is checked once it ended.
t0=$(date +%s)
id=$("$CLIENT" submit --json --suite quick-tlb --tree linux --base v6.1-debian --mbox "$TMP/series.mbox" --boots 1 \
	--max-boots 2 --submitter t0050 | jq_py 'J["job"]["id"]')
pp_t0=$(date +%s)
"$CLIENT" submit --json --suite quick --tree linux --base v6.1-debian --mbox "$TMP/pair.mbox" --per-patch \
	--boots 1 --submitter t0050 >"$TMP/pp-submit.json"
id_na=$(submit linux "$TOP/tests/fixtures/patches/does-not-apply.patch")
id_bad_series=$(submit linux "$TMP/bad-series.mbox")
id_nc=$(submit linux "$TOP/tests/fixtures/patches/does-not-compile.patch")
id_panic=$(submit linux "$TOP/tests/fixtures/patches/panic-at-boot.patch")
id_dropped=$(submit linux-dropped "$TOP/kernels/patches/0001-x86-mm-tlb-flush-every-online-cpu.patch")
state=$(job_wait "$id" "done failed cancelled" 3000)
t1=$(date +%s)
if [ "$state" = done ]; then
	pass "A/B job with the demo series (a cover letter and 3 patches, --mbox) is done in $((t1 - t0)) s"
else
	fail "A/B job with the demo series" "$state: $(api GET "/jobs/$id" | head -c 800)"
fi
api GET "/jobs/$id" >"$TMP/job.json"
check "the job is named by the cover letter, its 3 patches listed in the order git am applied them" \
	pyjson "$TMP/job.json" '(L[0]["job"]["patch_subject"] == "x86/mm/tlb: the demo series" and
	L[0]["job"]["patches"]["patches"] == ["x86/mm/tlb: flush every online CPU in flush_tlb_mm_range()",
	"mm/mprotect.c: a comment at its end", "mm/mremap.c: a comment at its end"])'
api GET "/jobs?limit=50" >"$TMP/jobs.json"
check "the job list names it by the cover letter too" pyjson "$TMP/jobs.json" \
	'[j["patch_subject"] for j in L[0]["jobs"] if j["id"] == '"$id"'] == ["x86/mm/tlb: the demo series"]'
sid=$(jq_py "[g['id'] for g in J['job']['stages'] if g['kind'] == 'build' and g['side'] == 'patched'][0]" <"$TMP/job.json")
curl -fs "$TLBLAB_SERVER/api/v1/jobs/$id/stages/$sid/log" >"$TMP/build.log"
if grep -q "== build patched on remote" "$TMP/build.log" &&
	grep -q "sandbox: tlblab (uid [0-9]*), no network; .* is the submitter's: private objects, ccache read-only" "$TMP/build.log"; then
	pass "the patched kernel was built over SSH on 'remote' as the lab's user, in the sandbox there"
else
	fail "the patched kernel was built over SSH on 'remote', in the sandbox there" \
		"$(grep -E '^== build|sandbox:' "$TMP/build.log" | head -n 3)"
fi
api GET "/jobs/$id/runs" >"$TMP/runs.json"
api GET "/jobs/$id/metrics?name=interrupts.TLB" >"$TMP/tlb.json"
$PY - "$TMP/runs.json" "$TMP/tlb.json" <<'PYEOF' || fail "the checks of line 101 ran to their end" "python exited $?"
import json, sys, statistics
runs = {r["id"]: r for r in json.load(open(sys.argv[1]))["runs"]}
m = [x for x in json.load(open(sys.argv[2]))["metrics"] if x["name"] == "interrupts.TLB"]
def side(s, mode):
    return [x["value"] for x in m if runs[x["run"]]["side"] == s and runs[x["run"]]["params"]["mode"] == mode]
def ok(c, name, why):
    print(("ok - " if c else "not ok - ") + name + ("" if c else " # " + why))
bp, pp = side("base", "processes"), side("patched", "processes")
ok(len(bp) == 4 and len(pp) == 4, "both sides stored their measured runs of 2 boots", "base %s patched %s" % (bp, pp))
if bp and pp:
    ok(statistics.median(pp) > 100 * (statistics.median(bp) + 1),
       "the patch makes single-threaded processes shoot down TLBs (%d -> %d)" % (statistics.median(bp), statistics.median(pp)),
       "base %s patched %s" % (bp, pp))
builds = {r["build_id"] for r in runs.values()}
ok(len(builds) == 2 and None not in builds, "each run records its build (%d builds)" % len(builds), str(builds))
boots = {r["boot_id"] for r in runs.values()}
ok(len(boots) == 4 and None not in boots, "each run records its boot (4 boots)", str(boots))
PYEOF
api GET "/jobs/$id" | jq_py '"\n".join("%s %s %s" % (g["kind"], g["side"], g["state"]) for g in J["job"]["stages"])' >"$TMP/stages.txt"
ab="boot base done run base done boot patched done run patched done"
[ "$(tr '\n' ' ' <"$TMP/stages.txt")" = "build base done build patched done $ab $ab " ] &&
	pass "stages ran in order: builds, then base and patched boots (ABAB), one more pair added while inconclusive" ||
	fail "stage order" "$(tr '\n' ' ' <"$TMP/stages.txt")"
api GET "/jobs/$id/comparison" >"$TMP/cmp.json"
$PY - "$TMP/cmp.json" <<'PYEOF' || fail "the checks of line 126 ran to their end" "python exited $?"
import json, sys
c = json.load(open(sys.argv[1]))["comparison"]
def ok(cond, name, why):
    print(("ok - " if cond else "not ok - ") + name + ("" if cond else " # " + why))
rows = [r for r in c["rows"] if r["metric"] == "interrupts.TLB" and r["params"].get("mode") == "processes"]
ok(len(rows) == 1, "the comparison has the TLB shootdown row of mode=processes", str(len(rows)))
if rows:
    r = rows[0]
    ok(r["base"]["center"] < 50 and r["patched"]["center"] > 100 and r["base"]["n"] == 2 and r["patched"]["n"] == 2,
       "the comparison shows the counter change the patch causes: %s -> %s per window, %s" %
       (r["base"]["center"], r["patched"]["center"], r["verdict"]), json.dumps(r)[:500])
ok(c["rules"].get("metrics", {}).get("tlb_flush.*") == {"alpha": 0.001, "min_change": 0.1, "same_band": None},
   "the comparison was made under the suite's per-metric rule", json.dumps(c["rules"]))
# the QEMU plugin's instruction counts: the headline rows of an emulated machine
ins = [r for r in c["rows"] if r["metric"] == "mprotect.kernel_insn_per_op" and r["params"].get("mode") == "processes"]
ok(len(ins) == 1 and ins[0]["headline"] and ins[0].get("class") == "work" and ins[0]["base"]["n"] == 2 and
   ins[0]["patched"]["n"] == 2 and 1000 < ins[0]["base"]["center"] < ins[0]["patched"]["center"],
   "the plugin's kernel instructions per mprotect() are a headline work row, and rise with the patch (%s)" %
   (" -> ".join("%.0f" % ins[0][s]["center"] for s in ("base", "patched")) if ins else "none"),
   json.dumps(ins)[:600])
# the TLB model's rows (docs/tlb-model.md): work rows; the invalidations
# the other vCPUs received are the shootdown IPIs the kernel counts itself
# (interrupts.TLB), which the demo patch sends to every online CPU
tlb = {r["metric"]: r for r in c["rows"] if r["params"].get("mode") == "processes" and
       r["metric"] in ("mprotect.dtlb_miss_per_op", "mprotect.itlb_miss_per_op", "mprotect.tlb_lost_per_op",
                       "mprotect.tlb_inval_received_per_op", "interrupts.TLB.per_kop")}
ok(len(tlb) == 5 and all(tlb[m].get("class") == "work" for m in tlb if m.startswith("mprotect.")) and
   all(tlb[m]["base"]["n"] == 2 and tlb[m]["patched"]["n"] == 2 for m in tlb),
   "the TLB model's four rows per op are work rows of both sides (%s)" % ", ".join(sorted(tlb)),
   json.dumps(list(tlb.values()))[:600])
if len(tlb) == 5:
    recv, ipi = tlb["mprotect.tlb_inval_received_per_op"], tlb["interrupts.TLB.per_kop"]
    ok(recv["base"]["center"] < 0.05 and recv["patched"]["center"] > 0.5 and
       abs(recv["patched"]["center"] - ipi["patched"]["center"] / 1000) <= 0.05 * ipi["patched"]["center"] / 1000,
       "invalidations received per op follow the kernel's own shootdown count: %.3f -> %.3f (interrupts.TLB %.3f "
       "per op)" % (recv["base"]["center"], recv["patched"]["center"], ipi["patched"]["center"] / 1000),
       json.dumps([recv, ipi])[:600])
# every round of the base's mprotect from 2 processes writes its page and
# then flushes it: one translation lost and one page walk per round of 2
# calls, on its own vCPU, in every boot (docs/tlb-model.md, "Which vCPU
# runs": when the model took QEMU's vCPU index, a boot read 0.01). Each
# boot is held to it, not the spread of two boots: what else ran on that
# vCPU adds a little (0.503-0.515 seen), and a CI run read 0.5148 and
# 0.5072, a CV of 1.06% that says nothing about the model
if len(tlb) == 5:
    for m in ("mprotect.dtlb_miss_per_op", "mprotect.tlb_lost_per_op"):
        b = tlb[m]["base"]
        boots = b.get("samples") or []
        ok(len(boots) == 2 and all(0.495 <= v <= 0.53 for v in boots),
           "%s of the base from 2 processes: %s per op in its boots (one per round, 0.495-0.53), %.2f%% apart" %
           (m, " and ".join("%.4f" % v for v in boots) or "none", b.get("spread_pct") or -1),
           json.dumps(tlb[m])[:600])
spin = [r for r in c["rows"] if r["metric"] == "mprotect.spin_insn_per_op"]
ok(len(spin) == 2 and all(r.get("class") == "wait" for r in spin), "spin-wait instructions are a wait row per case",
   json.dumps(spin)[:300])
head = [r for r in c["rows"] if r["headline"]]
ok(len(head) >= 2 and all(r["verdict"] in ("inconclusive", "same", "regression", "improvement") for r in head),
   "headline rows carry verdicts (%s)" % ", ".join("%s %s" % (r["params"].get("mode"), r["verdict"]) for r in head), "")
PYEOF
# the comparison was computed when the job ended, and the job carries its verdict
verdict=$(api GET "/jobs/$id" | jq_py 'J["job"]["verdict"]')
grep -q "job $id: done: $verdict\$" "$DAEMON_LOG" &&
	pass "the comparison was computed and kept when the job ended (verdict $verdict)" ||
	fail "comparison kept at job end" "verdict $verdict; $(grep "job $id:" "$DAEMON_LOG" | tail -n 3)"
# (the later jobs may have ended too: the filter gives the jobs whose
# verdict it is, this one among them, and no other)
api GET "/jobs?limit=50" >"$TMP/jobs-now.json"
api GET "/jobs?verdict=$verdict&limit=50" >"$TMP/jobs-verdict.json"
$PY - "$TMP/jobs-now.json" "$TMP/jobs-verdict.json" "$id" "$verdict" <<'PYEOF' &&
import json, sys
every, got = (json.load(open(f))["jobs"] for f in sys.argv[1:3])
want = [j["id"] for j in every if j.get("verdict") == sys.argv[4]]
sys.exit(not (int(sys.argv[3]) in want and [j["id"] for j in got] == want))
PYEOF
	pass "the job list filters by verdict" || fail "jobs?verdict=$verdict" "$(head -c 300 "$TMP/jobs-verdict.json")"
log=$(api GET "/jobs/$id/stages/$(api GET "/jobs/$id" | jq_py '[g["id"] for g in J["job"]["stages"] if g["kind"] == "boot"][0]')/log")
echo "$log" | grep -q 'identity checked' && pass "the boot log has the console and the identity check" || fail "boot log" "$(echo "$log" | tail -n 5)"
echo "$log" | grep -q 'tlblab: instruction plugin .*tlblab-insn.so writes .*/insn.log; TLB model tlb=on' &&
	pass "the boot log says which instruction plugin QEMU loaded" ||
	fail "boot log: the instruction plugin" "$(echo "$log" | grep 'tlblab:' | tail -n 4)"

pp_ids=$(jq_py '" ".join(str(j["id"]) for j in J["jobs"])' <"$TMP/pp-submit.json")
pp_states=
for j in $pp_ids; do
	pp_states="$pp_states $(job_wait "$j" "done failed cancelled" 3000)"
done
t1=$(date +%s)
if [ "$pp_states" = " done done" ]; then
	pass "a per-patch series of 2: jobs $pp_ids done in $((t1 - pp_t0)) s"
else
	fail "a per-patch series of 2" "jobs $pp_ids:$pp_states"
fi
last=${pp_ids##* }
api GET "/jobs/$last/per-patch" >"$TMP/per-patch.json"
"$CLIENT" compare "$last" --per-patch >"$TMP/per-patch.txt" 2>&1
$PY - "$TMP/pp-submit.json" "$TMP/per-patch.json" "$TMP/per-patch.txt" <<'PYEOF' || fail "the per-patch checks ran to their end" "python exited $?"
import json, sys
sub = json.load(open(sys.argv[1]))
pp = json.load(open(sys.argv[2]))["per_patch"]
text = open(sys.argv[3]).read()
def ok(cond, name, why=""):
    print(("ok - " if cond else "not ok - ") + name + ("" if cond else " # " + str(why)[:600]))
jobs = sub["jobs"]
ok([j["patch_subject"] for j in jobs] == ["[1/2] x86/mm/tlb: flush every online CPU in flush_tlb_mm_range()",
   "[2/2] mm/mprotect.c: a comment at its end"] and
   [len(j["patches"]["patches"]) for j in jobs] == [1, 2] and sub["job"]["id"] == jobs[-1]["id"] and
   all(j["per_patch"] == {"of": jobs[0]["id"], "k": k + 1, "n": 2, "series": "x86/mm/tlb: the demo pair"}
       for k, j in enumerate(jobs)),
   "each job of the series names its patch, applies patches 1..k, and names the series", jobs)
# this lab's guest runs as the default lab's does, under icount with the
# instruction plugin, where one boot measures the kernel's instructions
# per mprotect() within about 1% (t0055). One boot a side calls nothing
# (test_compare checks the verdicts of the same view on the shipped
# statistics): what each patch moved is checked by its size. The demo
# patch adds about a quarter to the kernel's work per mprotect() from 2
# processes, the comment nothing.
work = [r for r in pp["rows"] if r["metric"] == "mprotect.kernel_insn_per_op" and "mode=processes" in r["params_text"]]
steps = [c and c["change_pct"] for c in work[0]["steps"]] if work else []
ok(len(work) == 1 and len(steps) == 2 and None not in steps and steps[0] > 15 and abs(steps[1]) < 3,
   "the kernel's work per mprotect() from 2 processes: patch 1's step is the one that moved it (%s)" %
   " | ".join("patch %d %+.1f%% %s" % (k + 1, c["change_pct"], c["verdict"]) for k, c in enumerate(work[0]["steps"]) if c)
   if work else "no row", json.dumps(work)[:600])
whole = work[0]["vs_base"][1] if work else None
ok(whole is not None and whole["change_pct"] > 15,
   "against the base, the whole pair adds to it too (%s)" % (whole and "%+.1f%%" % whole["change_pct"]), json.dumps(whole))
ok([j["k"] for j in pp["jobs"]] == [1, 2] and pp["series"] == "x86/mm/tlb: the demo pair",
   "the view lists the series' jobs in order", pp["jobs"])
ok("which patch moved what" in text and "PATCH 2" in text and "kernel_insn_per_op" in text,
   "tlblab compare --per-patch prints the steps", text[:600])
PYEOF

# the per-patch jobs' suite (quick) does not ask for the TLB model: their
# boots load the plugin without it, and its rows say why they are missing
plog=$(api GET "/jobs/$last/stages/$(api GET "/jobs/$last" | jq_py '[g["id"] for g in J["job"]["stages"] if g["kind"] == "boot"][0]')/log")
echo "$plog" | grep -q 'tlblab: instruction plugin .*; TLB model off (its suite does not ask for it)' &&
	pass "a boot of a suite that does not ask for the TLB model runs without it, and its boot log says so" ||
	fail "boot log of a suite without the TLB model" "$(echo "$plog" | grep 'tlblab:' | tail -n 4)"
# (a row neither side has is no row: the comparison lists it, with the
# reason, under unavailable)
why=$(api GET "/jobs/$last/comparison" | jq_py '[w for k, w in sorted((J["comparison"].get("unavailable") or {}).get("base", {}).items())
	if k.endswith("tlb_lost_per_op")][:1]')
case "$why" in
*"TLB model was off in this boot"*) pass "its TLB rows are unavailable, with the reason: $(echo "$why" | cut -c1-120)" ;;
*) fail "the TLB rows of a boot without the model say why" "$why" ;;
esac

# 2. the ways a patch fails (its jobs were submitted with the first)
expect "a patch that does not apply" "$id_na" patch "tlb\.c"
# in a series, the patch that does not apply is named; nothing of it is built
expect "a series whose second patch does not apply" "$id_bad_series" patch \
	"patch 0002 \(x86/mm/tlb: test fixture that does not apply to v6\.1\) does not apply to v6\.1-debian: .*tlb\.c"
expect "a patch that does not compile" "$id_nc" build "arch/x86/mm/tlb\.c:[0-9]+"
expect "a patch whose kernel panics at boot" "$id_panic" boot "Kernel panic|panic at boot"
expect "a fragment option that olddefconfig drops" "$id_dropped" build "CONFIG_DRM_I915"
