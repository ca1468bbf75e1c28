#!/bin/sh
# Every workload the lab runs, in the lab's own guest: the lab kernel booted
# by the daemon's boot code (tests/tools/qemu-boot: configs/local.yaml's
# 2-vCPU machine, its QEMU command line, KVM probe and vCPU pinning), then
# each workload x mode x workers combination of configs/local.yaml's suites
# and of the agent examples in docs/user-guide.md run through `tlblab-agent run --spec -`
# over SSH, as the daemon runs them, $RUNS times each: exit status 0, a
# result with status ok, the headline metric present and > 0 in every
# measured iteration. Windows are shorter than the suites' to keep the test
# within a few minutes; the combinations are the same. Then a tcp-rr profile
# in both modes, as a suite asks for it: system-wide (the server side is
# another process), kernel symbols resolved, and switch_mm_irqs_off in it:
# sampled where the guest has a PMU, else timed by ftrace's function
# profiler (a timer-sampled profile cannot see code run with interrupts off).
# Last, a console and dmesg free of segfaults, BUGs and Oopses.
#
# The guest boots from an initramfs made here by kernels/mkinitramfs.sh with
# the agent under test (build/tlblab-agent, or TLBLAB_GUEST_AGENT), so the
# shared one in /var/cache/tlblab/guest is neither needed nor rewritten.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/guest.sh"

RUNS=${T0053_RUNS:-2}
trap 'qemu_boot_end; rm -rf "$TMP"' EXIT

if ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
	fail "qemu-system-x86_64 is installed" "apt-get install qemu-system-x86"
	exit 0
fi
# what the profile needs: perf events, kernel symbols, and eventfd (perf
# record's wakeup; the agent's own window waiter too)
guest_kernel "a lab kernel" CONFIG_PERF_EVENTS=y CONFIG_KALLSYMS=y CONFIG_EVENTFD=y CONFIG_FUNCTION_PROFILER=y
if ! qemu_guest 10026 g53; then
	fail "the guest initramfs and tests/tools/qemu-boot are built" "$(cat "$TMP/guest.why")"
	exit 0
fi
qemu_machine_yaml >"$TMP/lab.yaml"
qemu_boot_start "$TMP/lab.yaml"
t0=$(date +%s)
if qemu_boot_cmd "boot $kernel"; then
	pass "the lab kernel ($(basename "$(dirname "$kernel")")) is up in the lab's guest in $(($(date +%s) - t0)) s"
else
	fail "the lab kernel boots in the lab's guest" "$(tail -n 3 "$TMP/boot.notes"): $(tail -n 5 "$TMP/vm/$MACHINE/console.log")"
	exit 0
fi
sed 's/^/# /' "$TMP/boot.notes"

# the vCPU threads as the host sees them: "CPU n/ACCEL allowed-host-CPUs"
pid=$(cat "$TMP/vm/$MACHINE/qemu.pid")
for t in /proc/"$pid"/task/*; do
	case "$(cat "$t/comm")" in
	"CPU "*) echo "$(cat "$t/comm") $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$t/status")" ;;
	esac
done >"$TMP/vcpus"
host_cpus=$(nproc)
$PY - "$TMP/vcpus" "$TMP/boot.notes" "$host_cpus" <<'PYEOF' || fail "the checks of line 56 ran to their end" "python exited $?"
import sys
vcpus = [l.split() for l in open(sys.argv[1]) if l.strip()]
notes = open(sys.argv[2]).read()
host = int(sys.argv[3])
def ok(c, name, why):
    print(("ok - " if c else "not ok - ") + name + ("" if c else " # " + why))
ok(len(vcpus) == 2, "QEMU runs 2 named vCPU threads", repr(vcpus))
if host >= len(vcpus):
    allowed = [v[-1] for v in vcpus]
    ok("vCPU threads pinned" in notes and all(a.isdigit() for a in allowed) and len(set(allowed)) == len(allowed),
       "each vCPU thread is pinned to a host CPU of its own (%s), and the boot log says so"
       % ", ".join("%s -> %s" % (" ".join(v[:2]), v[-1]) for v in vcpus), "%r; notes %r" % (vcpus, notes))
else:
    ok("not pinned: the host has %d CPUs" % host in notes, "a host with fewer CPUs than vCPUs: not pinned, and the "
       "boot log says why", notes)
PYEOF

# a hardware PMU (NMI sampling) is what lets perf see code run with
# interrupts off; QEMU's TCG has none
guest 'nproc; uname -r; command -v perf || echo no-perf; command -v stress-ng || echo no-stress-ng;
	grep -c " switch_mm_irqs_off$" /proc/kallsyms; test -e /sys/bus/event_source/devices/cpu && echo pmu || echo no-pmu' \
	>"$TMP/facts" 2>&1
# shellcheck disable=SC2046
set -- $(cat "$TMP/facts")
if [ "${1:-}" = 2 ] && [ "${5:-0}" -ge 1 ]; then
	pass "the guest has 2 CPUs, kernel $2, and switch_mm_irqs_off in /proc/kallsyms"
else
	fail "the guest has 2 CPUs and kernel symbols" "$(cat "$TMP/facts")"
fi
guest_perf=$3 guest_stress=$4 guest_pmu=${6:-}

# run_case NAME HEADLINE SPEC: the spec $RUNS times through the agent on the
# guest; one ok line for all runs, and the headline figures as comments
run_case() {
	printf '%s\n' "$3" >"$TMP/spec.json"
	_files=
	_r=1
	while [ $_r -le "$RUNS" ]; do
		guest 'tlblab-agent run --spec -' <"$TMP/spec.json" >"$TMP/run.$_r.out" 2>"$TMP/run.$_r.err"
		_files="$_files $?:$TMP/run.$_r.out:$TMP/run.$_r.err"
		_r=$((_r + 1))
	done
	# shellcheck disable=SC2086
	$PY - "$1" "$2" $_files <<'PYEOF'
import json, statistics, sys
name, headline, runs = sys.argv[1], sys.argv[2], sys.argv[3:]
problems, figures = [], {}
for i, arg in enumerate(runs, 1):
    rc, out, err = arg.split(":", 2)
    lines = []
    for l in open(out):
        try:
            lines.append(json.loads(l))
        except ValueError:
            problems.append("run %d: not JSON: %.100s" % (i, l))
    errors = [o.get("message") for o in lines if o.get("type") == "error"]
    result = [o for o in lines if o.get("type") == "result"]
    if rc != "0":
        # ssh exits 255 when the remote command died of a signal
        problems.append("run %d: exit %s%s: %s %s" % (i, rc, " (killed by a signal, or ssh failed)" if rc == "255"
                        else "", errors[:2], open(err).read()[-300:]))
    if not result or result[-1].get("status") != "ok":
        problems.append("run %d: result %s" % (i, result[-1].get("status") if result else "missing"))
    measured = [o for o in lines if o.get("type") == "iteration" and not o.get("warmup")]
    if not measured:
        problems.append("run %d: no measured iteration" % i)
    for o in measured:
        p = dict(o.get("params", {}))
        for k in ("workload", "command", "parser", "duration"):
            p.pop(k, None)
        key = " ".join("%s=%s" % kv for kv in sorted(p.items()))
        for metric in [headline] + [m for m in o["metrics"] if m.startswith("neighbour.")]:
            v = o["metrics"].get(metric)
            if not isinstance(v, (int, float)) or not v > 0:
                problems.append("run %d, %s: %s is %r" % (i, key, metric, v))
            else:
                figures.setdefault((key, metric), []).append(v)
for (key, metric), vals in sorted(figures.items()):
    print("#   %-26s %-34s median %10.5g  runs %s" % (key, metric, statistics.median(vals),
                                                       " ".join("%.4g" % v for v in vals)))
if problems:
    print("not ok - %s: %d runs in the guest # %s" % (name, len(runs), "; ".join(problems)[:1500]))
else:
    print("ok - %s: %d runs in the guest, exit 0, result ok, %s > 0 in every measured iteration"
          % (name, len(runs), headline))
PYEOF
}

T='"duration": 1, "iterations": 1'
# configs/local.yaml's suites tlb and quick, and docs/user-guide.md's examples
run_case "mprotect threads,processes x2 (suites tlb, quick; user guide)" mprotect.ops_per_sec \
	"{\"workload\": \"mprotect\", \"mode\": [\"threads\", \"processes\"], \"workers\": 2, $T,
	  \"monitors\": [\"interrupts\", \"vmstat\", \"tracepoints\", \"procstat\"]}"
# the suite's workers 1,2 and the user guide's 1,2,4 at 8M (mremap's default size)
run_case "mremap workers 1,2,4 (suite tlb; user guide)" mremap.moves_per_sec \
	"{\"workload\": \"mremap\", \"workers\": [1, 2, 4], $T}"
# a fixed number of rounds ends the window (duration is the cap): total_sec
run_case "fault-write workers 1,2, 512 rounds" fault-write.total_sec \
	'{"workload": "fault-write", "workers": [1, 2], "rounds": 512, "duration": 10, "iterations": 1}'
run_case "tcp-rr threads,processes workers 1,2 request 300 (user guide)" tcp-rr.trans_per_sec \
	"{\"workload\": \"tcp-rr\", \"mode\": [\"threads\", \"processes\"], \"workers\": [1, 2], \"request_size\": 300, $T}"
run_case "stencil grid S with an mprotect:2:threads neighbour (user guide)" stencil.mflops \
	"{\"workload\": \"stencil\", \"grid\": \"S\", \"neighbour\": {\"workload\": \"mprotect\", \"workers\": 2, \"mode\": \"threads\"}, $T}"
if [ "$guest_stress" = no-stress-ng ]; then
	skip "exec stress-ng --tlb-shootdown 2 (user guide)" "stress-ng is not in the guest's initramfs"
else
	run_case "exec stress-ng --tlb-shootdown 2 (user guide)" exec.score \
		'{"workload": "exec", "parser": "stress-ng", "iterations": 1,
		  "command": ["stress-ng", "--tlb-shootdown", "2", "--timeout", "2", "--metrics-brief"]}'
fi

# a profile of tcp-rr, threads and processes, asked for as a suite asks
printf '%s\n' '{"workload": "tcp-rr", "mode": ["threads", "processes"], "workers": 1, "duration": 2,
	"iterations": 1, "monitors": ["interrupts", "vmstat", "procstat", "profile"]}' >"$TMP/prof.json"
guest 'tlblab-agent run --spec -' <"$TMP/prof.json" >"$TMP/prof.out" 2>"$TMP/prof.err"
$PY - "$TMP/prof.out" "$?" "$guest_perf" "$guest_pmu" <<'PYEOF' || fail "the checks of line 172 ran to their end" "python exited $?"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rc, perf, pmu = sys.argv[2], sys.argv[3], sys.argv[4]
def ok(c, name, why):
    print(("ok - " if c else "not ok - ") + name + ("" if c else " # " + why))
measured = [o for o in lines if o.get("type") == "iteration" and not o.get("warmup")]
ok(rc == "0" and len(measured) == 2, "tcp-rr with monitors [..., profile] runs in both modes", "exit %s, %d iterations: %s"
   % (rc, len(measured), [o.get("message") for o in lines if o.get("type") == "error"]))
for o in measured:
    mode = o["params"].get("mode")
    prof, why = o.get("profile"), (o.get("unavailable") or {}).get("profile")
    if perf == "no-perf":
        ok(prof is None and why and "perf" in why, "tcp-rr %s: no perf in the guest, and the run says so (%s)"
           % (mode, why), repr(why))
        continue
    syms = {s["symbol"]: s for s in (prof or {}).get("symbols", [])}
    # the server side is another process: a system-wide profile has both ends' kernel paths
    ok(prof is not None and prof.get("samples", 0) > 0 and syms.get("tcp_sendmsg", {}).get("kernel")
       and syms.get("tcp_recvmsg", {}).get("kernel"),
       "tcp-rr %s: a system-wide profile of the window (%s samples) with kernel symbols resolved"
       % (mode, (prof or {}).get("samples")), "unavailable: %s; symbols %s" % (why, list(syms)[:20]))
    sw = syms.get("switch_mm_irqs_off")
    blind = (prof or {}).get("blind_spot", "")
    m = o.get("metrics", {})
    # a timer-interrupt sampler cannot land in code run with interrupts off
    # (only NMI sampling on a PMU can, and the guest has none): ftrace's
    # function profiler times it instead, and the profile carries that
    ok(sw is not None and sw.get("kernel") and (sw.get("source") == "ftrace" or pmu == "pmu") and sw.get("self", 0) > 0,
       "tcp-rr %s: the profile has switch_mm_irqs_off (self %.3f%% of CPU, %s)"
       % (mode, (sw or {}).get("self", 0), (sw or {}).get("source", "perf")),
       "guest %s; unavailable %s; profile event %s, blind_spot %r; symbols %s"
       % (pmu, o.get("unavailable"), (prof or {}).get("event"), blind, list(syms)[:15]))
    ok(m.get("kfunc.switch_mm_irqs_off.calls", 0) > 0 and m.get("kfunc.switch_mm_irqs_off.self_pct", 0) > 0
       and m.get("kfunc.switch_mm_irqs_off.ns_per_call", 0) > 0,
       "tcp-rr %s: switch_mm_irqs_off as metrics: %d calls, %.3f%% of CPU, %.0f ns a call"
       % (mode, m.get("kfunc.switch_mm_irqs_off.calls", 0), m.get("kfunc.switch_mm_irqs_off.self_pct", 0),
          m.get("kfunc.switch_mm_irqs_off.ns_per_call", 0)),
       "metrics %s; unavailable %s" % ({k: v for k, v in m.items() if k.startswith("kfunc")}, o.get("unavailable")))
    trans = m.get("tcp-rr.trans_per_sec", 0)
    calls = m.get("kfunc.switch_mm_irqs_off.calls", 0) / max(o.get("duration_s", 1), 1e-9)
    # every transaction switches to the other end and back, in both modes;
    # threads of one mm switch without changing mm but still call it
    ok(trans > 0 and calls >= trans,
       "tcp-rr %s: at least one switch_mm_irqs_off per transaction (%.0f/s for %.0f transactions/s)"
       % (mode, calls, trans), "calls/s %s, transactions/s %s" % (calls, trans))
PYEOF

# what the kernel said meanwhile
guest dmesg >"$TMP/dmesg" 2>&1
if grep -Eq 'segfault|BUG:|Oops|general protection|Kernel panic' "$TMP/vm/$MACHINE/console.log" "$TMP/dmesg"; then
	fail "the guest's console and dmesg have no segfault, BUG or Oops" \
		"$(grep -Eh 'segfault|BUG:|Oops|general protection|Kernel panic' "$TMP/vm/$MACHINE/console.log" "$TMP/dmesg" | head -n 5)"
else
	pass "the guest's console and dmesg have no segfault, BUG or Oops after every run"
fi

# A QEMU that will not start: the job's error says why, not only the dozen
# warnings QEMU prints first under icount (the CPU model's features TCG
# lacks), as it did when make demo-track's initramfs was unreadable
qemu_boot_end
qemu_machine_yaml | sed "s|^      accel: auto\$|      accel: icount|; s|^      initrd: .*|      initrd: $TMP/no-such.cpio|" \
	>"$TMP/bad.yaml"
qemu_boot_start "$TMP/bad.yaml"
qemu_boot_cmd "boot $kernel"
why=$(grep '^failed: ' "$TMP/boot.notes")
case $why in
*"did not start on $MACHINE"*"no-such.cpio"*)
	if echo "$why" | grep -q "TCG doesn't support"; then
		fail "a QEMU that does not start: the error leaves out TCG's feature warnings" "$why"
	else
		pass "a QEMU that does not start: the error names the missing initramfs, without TCG's warnings ($(echo "$why" | cut -c1-160))"
	fi ;;
*) fail "a QEMU that does not start: the error names the missing initramfs" "${why:-$(tail -n 3 "$TMP/boot.notes")}" ;;
esac
qemu_boot_end

# made again by root, the initramfs and keys stay their directory's owner's
# (make demo gives it to tlblab, whose running tlblabd must still read it)
mkdir "$TMP/owned"
chown -R 65534:65534 "$TMP/owned"
if ! sh "$TOP/kernels/mkinitramfs.sh" "$TMP/owned" "$GUEST_AGENT" >"$TMP/owned.log" 2>&1; then
	fail "mkinitramfs writes into a directory of another user's" "$(tail -n 3 "$TMP/owned.log")"
elif others=$(find "$TMP/owned" ! -user 65534) && [ -z "$others" ] && [ -s "$TMP/owned/initramfs.cpio" ]; then
	pass "made by root in a directory of another user's, the initramfs and keys are that user's ($(ls "$TMP/owned" | wc -l) files)"
else
	fail "made by root in a directory of another user's, the initramfs and keys are that user's" "not: $others"
fi
