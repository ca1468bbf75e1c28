#!/bin/sh
# An arm64 lab machine end to end (issue 15): the daemon cross-builds the
# base and the patched kernel for arm64 (ARCH=arm64, gcc-aarch64-linux-gnu,
# the tree's fragments with {arch}: qemu-arm64.config), boots each on a
# 2-vCPU qemu-system-aarch64 `virt` guest under TCG with the aarch64
# initramfs and agent, and runs a small tlbi suite: mprotect from 2
# single-threaded processes for a fixed amount of work, and the stencil
# with an mprotect neighbour. Checked: the job's arch, the builds' arch and
# image, uname -m in the guest from the agent's hello, TLB counters that
# arm64 does not have reported as unavailable with their reason (never 0),
# elapsed time as a compared headline, and that the x86_64 machine of the
# same lab takes none of the arm64 job's stages, nor the arm64 machine an
# x86_64 job's. The cross build is cached in $CACHE after the first time.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
. "$TOP/tests/guest.sh"
trap 'daemon_cleanup; rm -rf "$TMP"' EXIT
guest_lab 5000 10032 arm1
# the daemon builds in the lab's directories: as the lab's user, their owner
daemon_as_lab_user

guest_prepare usr/sbin/sshd
ARM=$CACHE/guest-arm64
ARM_AGENT=$BUILD/aarch64/tlblab-agent
if ! make --no-print-directory -C "$TOP" BUILD="${BUILD#"$TOP"/}" ARM64_OUT="$CACHE/arm64" agent-arm64 >"$TMP/agent64.log" 2>&1; then
	fail "the aarch64 agent is built (make agent-arm64)" "$(tail -n 5 "$TMP/agent64.log")"
	exit 0
fi
if ! sh "$TOP/kernels/mkinitramfs.sh" "$ARM" "$ARM_AGENT" --arch arm64 --sysroot "$CACHE/arm64/sysroot" \
	>"$TMP/initramfs64.log" 2>&1; then
	fail "the aarch64 initramfs is built" "$(tail -n 5 "$TMP/initramfs64.log")"
	exit 0
fi
file_out=$(file -b "$ARM_AGENT")
case $file_out in
*aarch64*statically\ linked* | *ARM\ aarch64*static*) pass "the agent for arm64 is a static aarch64 binary" ;;
*) fail "the agent for arm64 is a static aarch64 binary" "$file_out" ;;
esac

# arm1 (arm64, first: a job that names no machine is arm64) and x1, an
# x86_64 machine that runs agents in place (no boot), in a directory of
# the daemon's user's
install -d -o "$LAB_USER" -g "$LAB_USER" "$TMP/x1"
{
	lab_yaml "$TMP/data" "tokens: [$TOKEN]" "stage_timeout: 3600"
	cat <<EOC
machines:
  - name: arm1
    transport: local
    boot: qemu
    arch: arm64
    cpus: 2
    workdir: $TMP/vm
    qemu:
      memory: 1024
      accel: tcg
      initrd: $ARM/initramfs.cpio
      ssh_port: $GUEST_PORT
      identity: $ARM/lab_key
      known_hosts: $ARM/known_hosts
  - name: x1
    transport: local
    workdir: $TMP/x1
    agent_path: $TMP/x1/tlblab-agent
EOC
	lab_guest_builder
	cat <<EOC
suites:
  - name: tlbi-quick
    timeout: 1200
    workloads:
      - workload: mprotect
        mode: processes
        workers: 2
        rounds: 2000
        duration: 120
        iterations: 2
        monitors: [interrupts, tracepoints, procstat]
      - workload: stencil
        grid: S
        duration: 2
        iterations: 2
        neighbour: {workload: mprotect, workers: 1, mode: processes}
  - name: host-quick
    timeout: 300
    workloads:
      - workload: mprotect
        mode: threads
        workers: 2
        duration: 0.5
        iterations: 1
EOC
} >"$TMP/lab.yaml"
DAEMON_AGENT=$GUEST_AGENT DAEMON_ARGS="-a arm64=$ARM_AGENT" daemon_start "$TMP/lab.yaml" ||
	{ fail "tlblabd starts" "see log"; exit 0; }

# an arm64 job on an x86_64 machine is refused when it is submitted
api POST /jobs '{"suite":"host-quick","machines":["x1"],"arch":"arm64"}' "$TOKEN"
[ "$HTTP_STATUS" = 400 ] && grep -q "no configured machine of arch arm64" "$TMP/api.body" &&
	pass "a job for arch arm64 on an x86_64 machine is refused (400, naming the arch)" ||
	fail "arm64 job on x1 is refused" "$HTTP_STATUS $(cat "$TMP/api.body")"

# 1. the A/B job of an arm64 patch: no machine named, so arm64. The patch
# is one line in arch/arm64/mm/context.c, made from the base: the job is
# about cross-building, booting and comparing, and a patch of a header
# every file includes (kernels/patches/0003 changes asm/tlbflush.h) makes
# the patched cross build a full one, about 10 minutes on a fresh machine
git -C "$CACHE/linux" show v6.1-debian:arch/arm64/mm/context.c >"$TMP/context.c.orig"
{ cat "$TMP/context.c.orig"; echo '/* tlblab t0056: an arm64 patch */'; } >"$TMP/context.c"
diff -u --label a/arch/arm64/mm/context.c --label b/arch/arm64/mm/context.c "$TMP/context.c.orig" "$TMP/context.c" \
	>"$TMP/arm64.patch"
t0=$(date +%s)
id=$("$CLIENT" submit --json --suite tlbi-quick --tree linux --base v6.1-debian --boots 1 --submitter t0056 \
	--patch "$TMP/arm64.patch" | jq_py 'J["job"]["id"]')
# an x86_64 run job meanwhile: it must go to x1, never to arm1
hid=$("$CLIENT" submit --json --suite host-quick --arch x86_64 --submitter t0056 | jq_py 'J["job"]["id"]')
state=$(job_wait "$id" "done failed cancelled" 3500)
hstate=$(job_wait "$hid" "done failed cancelled" 600)
echo "# arm64 A/B job $id ended $state in $(($(date +%s) - t0)) s"
api GET "/jobs/$id" >"$TMP/job.json"
api GET "/jobs/$id/comparison" >"$TMP/cmp.json"
api GET "/jobs/$hid" >"$TMP/hjob.json"
for sid in $($PY -c 'import json,sys; j=json.load(open(sys.argv[1]))["job"]; print(" ".join(str(g["id"]) for g in j["stages"] if g["kind"] == "build"))' "$TMP/job.json"); do
	api GET "/jobs/$id/stages/$sid/log" >>"$TMP/build.logs"
done
[ "$state" = done ] || sed -n '/TLBLAB message\|error\|console trouble\|kernel.s report/,+8p' "$TMP/build.logs" | head -n 30 | sed 's/^/#   /'
$PY - "$TMP/job.json" "$TMP/cmp.json" "$TMP/hjob.json" "$TMP/build.logs" "$state" "$hstate" <<'PYEOF' || fail "the checks of line 121 ran to their end" "python exited $?"
import json, sys
j = json.load(open(sys.argv[1]))["job"]
try:
    c = json.load(open(sys.argv[2]))["comparison"]
except Exception:
    c = None
h = json.load(open(sys.argv[3]))["job"]
logs = open(sys.argv[4]).read()
state, hstate = sys.argv[5], sys.argv[6]
def ok(cond, name, why=""):
    print(("ok - " if cond else "not ok - ") + name + ("" if cond else " # " + str(why)[:700]))
ok(state == "done", "the arm64 A/B job is done", (state, j.get("error")))
ok(j.get("arch") == "arm64", "a job that names no machine takes the first machine's arch: arm64", j.get("arch"))
ok(logs.count("arch arm64") >= 2 and "ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-" in logs or
   logs.count("cached") >= 2 and logs.count("arch arm64") >= 2,
   "both builds are arm64 cross builds (or cached ones)", logs[-600:])
ok("TLBLAB image Image" in logs, "the build publishes arch/arm64/boot/Image", logs[-400:])
machines = set(g["machine"] for g in j["stages"] if g["kind"] in ("boot", "run"))
ok(machines == {"arm1"}, "every boot and run of the arm64 job was on arm1: %s" % sorted(machines), machines)
runs = [g for g in j["stages"] if g["kind"] == "run" and g["state"] == "done"]
unames = set((g.get("host") or {}).get("machine") for g in runs)
ok(len(runs) >= 2 and unames == {"aarch64"}, "the agent's hello in the guest says uname -m aarch64: %s" % sorted(map(str, unames)), unames)
ok(hstate == "done" and set(g["machine"] for g in h["stages"]) == {"x1"} and h.get("arch") == "x86_64",
   "the x86_64 run job ran on x1 only, while the arm64 job held arm1", (hstate, h.get("arch"), [g["machine"] for g in h["stages"]], h.get("error")))
if c:
    rows = {r["metric"]: r for r in c["rows"]}
    el = rows.get("mprotect.elapsed_sec")
    ok(el is not None and el.get("class") == "time" and el["base"]["n"] >= 1 and el["patched"]["n"] >= 1 and el["verdict"],
       "mprotect's elapsed time for fixed work is compared as a time row (%s -> %s s, %s)" %
       ((el or {}).get("base", {}).get("center"), (el or {}).get("patched", {}).get("center"), (el or {}).get("verdict")), el)
    # the QEMU plugin counts an arm64 guest's instructions too (hint #106/#107
    # mark the windows): the emulated machine's headline rows
    ki = rows.get("mprotect.kernel_insn_per_op")
    ok(ki is not None and ki["headline"] and ki.get("class") == "work" and ki["base"]["n"] >= 1 and
       ki["patched"]["n"] >= 1 and ki["base"]["center"] > 100,
       "the arm64 guest's kernel instructions per mprotect() are a headline work row (%s -> %s)" %
       ((ki or {}).get("base", {}).get("center"), (ki or {}).get("patched", {}).get("center")), ki)
    st = rows.get("stencil.mflops")
    ok(st is not None and st["base"]["n"] >= 1 and st["patched"]["n"] >= 1,
       "the stencil's MFLOPS beside an mprotect neighbour is compared (%s -> %s)" %
       ((st or {}).get("base", {}).get("center"), (st or {}).get("patched", {}).get("center")), st)
    # what arm64 cannot count: no row with a number, the agent's reason said
    u = c.get("unavailable") or {}
    for name, word in (("interrupts.TLB", "TLBI"), ("tlb_flush.*", "TLBI")):
        why = [(u.get(side) or {}).get(name) or "" for side in ("base", "patched")]
        ok(all(word in w for w in why) and not any(m.startswith(name.rstrip("*")) for m in rows),
           "%s is unavailable on arm64 on both sides, with its reason, and no row: %s" % (name, why[0]),
           (why, [m for m in rows if m.startswith(name.rstrip("*"))]))
else:
    ok(False, "the arm64 job has a comparison", sys.argv[2])
PYEOF
