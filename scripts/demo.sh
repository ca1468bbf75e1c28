#!/bin/sh
# make demo: the whole embedded lab on this machine. Imports Debian's
# linux-source-6.1 into a git tree (once), builds the QEMU guests' initramfs,
# starts tlblabd on configs/local.yaml (unless it already runs), submits a demo
# patch to arch/x86/mm/tlb.c against its base, waits, and prints the stored
# results of both sides, their comparison and the dashboard URL. A second run reuses the tree,
# the builds and ccache. How long it took goes to docs/measured/make-demo.md.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/scripts/lab-up.sh"
. "$TOP/scripts/measured.sh"
started=${TLBLAB_MAKE_START:-$(measured_now)} begun=$(measured_date) commit=$(measured_commit) lab=$(measured_lab)
PATCH=${PATCH:-$TOP/kernels/patches/0001-x86-mm-tlb-flush-every-online-cpu.patch}
BOOTS=${BOOTS:-3}
SUITE=${SUITE:-demo}
cd "$TOP"
lab_up 4

echo "== 4/4 A/B job: $(basename "$PATCH") against v6.1-debian, suite $SUITE, $BOOTS boots per side"
echo "   (the first build of the base kernel takes several minutes; later ones are cached)"
rc=0
# the tree and base are the lab's defaults: (configs/local.yaml)
"$BUILD/tlblab" submit --suite "$SUITE" --patch "$PATCH" \
	--boots "$BOOTS" --max-boots "$BOOTS" --submitter demo --wait --timeout 5400 || rc=$?
job=$("$BUILD/tlblab" jobs --submitter demo --limit 1 --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["jobs"][0]["id"])')
echo
echo "== results of job $job (base, then patched)"
"$BUILD/tlblab" results "$job" || rc=1
echo
echo "== comparison of job $job (base vs patched)"
"$BUILD/tlblab" compare "$job" || [ "$rc" != 0 ] || rc=1
echo
echo "Dashboard: $TLBLAB_SERVER/   this job: $TLBLAB_SERVER/jobs/$job   JSON: $TLBLAB_SERVER/api/v1/jobs/$job/comparison"
echo "tlblabd keeps running; stop it with: pkill -x tlblabd"
echo "Nightly tracking, with an alert and its bisection to watch in the dashboard: make demo-track"
# what was measured and what the verdict rests on, in words, from the
# comparison itself
echo
"$BUILD/tlblab" compare "$job" --json 2>/dev/null | /usr/bin/python3 -c '
import json, sys
try:
    c = json.load(sys.stdin)["comparison"]
except Exception:
    sys.exit(0)
by = c.get("by_class") or {}
boots = c.get("provenance", {}).get("boots", {})
print("What was measured: %s boots of each kernel on the emulated lab (QEMU TCG)." % boots.get("base", "?"))
if by.get("work"):
    print("  emulated work: instructions the guest executed per operation, counted by QEMU'"'"'s")
    print("    instruction plugin (emulated instructions, not hardware cycles): %s" % by["work"].get("text"))
if by.get("wait"):
    print("  wait: spin-wait instructions per operation: %s" % by["wait"].get("text"))
if by.get("time"):
    print("  time: throughput on the emulated clock: %s" % by["time"].get("text"))
rest = [k for k in ("work", "wait", "time") if (by.get(k) or {}).get("makes_job_verdict")]
print("The verdict rests on the %s rows%s." % (" and ".join(rest) or "headline",
      ", each called only past its least change with the error rate held over the rows (Holm)" if rest else ""))
'
# the closing line: the job's verdict, or why it has none
verdict=$("$BUILD/tlblab" status "$job" | sed -n 's/^verdict  *//p')
[ "$rc" = 0 ] && [ -n "$verdict" ] || note="did not end with a verdict"
measured_head make-demo | measured_write "$TOP/docs/measured/make-demo.md" history \
	"| $commit | $begun | $lab | $(measured_took "$started") | $job | ${verdict:--} | ${note:--} |" ||
	echo "demo: could not write docs/measured/make-demo.md" >&2
if [ "$rc" = 0 ] && [ -n "$verdict" ]; then
	echo "demo: job $job done; verdict: $verdict"
else
	echo "demo: job $job did not end with a verdict; see tlblab status $job"
	exit 1
fi
