#!/bin/sh
# boot: kexec, for real: a QEMU guest started here stands in for a real lab
# machine reached over SSH (forwarded port 10024). tlblabd builds base and
# patched on the local builder (the warm tree, builds and ccache of
# /var/cache/tlblab, shared with t0050), kexecs each kernel on the guest from
# the running one, waits for it to come back with the boot id, runs a suite
# and stores both sides. Then a patched kernel that panics at boot: the
# guest resets into the kernel QEMU started it with (as a real machine falls
# back to its default kernel), and the job must fail with class boot, the
# machine still good.
#
# The guest's root file system is in RAM, so nothing survives a kexec; the
# guest's init packs its own root into /tmp/initrd.cpio at every boot
# (tlblab.kexec_initrd=, kept on the command line by the kexec method), which
# stands in for a real machine's /boot/initrd.img. QEMU runs without
# -no-reboot so that a panic (panic=-1) resets the guest instead of ending it.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
. "$TOP/tests/guest.sh"
trap 'daemon_cleanup; guest_stop; rm -rf "$TMP"' EXIT
guest_lab 26000 10024 kx1
# the daemon builds in the lab's directories: as the lab's user, their owner
daemon_as_lab_user

if ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
	fail "qemu-system-x86_64 is installed" "apt-get install qemu-system-x86"
	exit 0
fi
guest_prepare sbin/kexec
guest_kernel "a first kernel for the guest" CONFIG_KEXEC=y
first_host=$(build_host "$kernel")

t0=$(date +%s)
guest_start -kernel "$kernel" -initrd "$CACHE/guest/initramfs.cpio" -monitor none \
	-append "console=ttyS0 panic=-1 random.trust_cpu=on tlblab.kexec_initrd=/tmp/initrd.cpio"
if guest 'test -s /tmp/initrd.cpio && command -v kexec' >"$TMP/guest.out" 2>&1; then
	pass "the guest is up in $(($(date +%s) - t0)) s, with kexec and an initrd to kexec with"
else
	fail "the guest is up with kexec and /tmp/initrd.cpio" "$(cat "$TMP/guest.out")"
	exit 0
fi

{
	lab_ssh_guest_head kexec
	cat <<EOC
    cpus: 2
    workdir: /tmp/tlblab
    kexec:
      initrd: /tmp/initrd.cpio
EOC
	lab_tail
} >"$TMP/lab.yaml"
DAEMON_AGENT=$GUEST_AGENT daemon_start "$TMP/lab.yaml" || { fail "tlblabd starts" "see log"; exit 0; }

# 1. the demo patch, both sides kexec'd on the guest
demo_job "a kexec machine" 'cat /proc/cmdline; cat /proc/version'
$PY - "$TMP/job.json" "$TMP/runs.json" "$TMP/now.txt" <<'PYEOF' || fail "the checks of line 55 ran to their end" "python exited $?"
import json, sys
stages = json.load(open(sys.argv[1]))["job"]["stages"]
runs = json.load(open(sys.argv[2]))["runs"]
cmdline, version = (open(sys.argv[3]).read().splitlines() + ["", ""])[:2]
def ok(c, name, why):
    print(("ok - " if c else "not ok - ") + name + ("" if c else " # " + why))
boots = [g for g in stages if g["kind"] == "boot"]
ids = [g.get("boot_id") for g in boots]
ok(len(runs) > 0 and {r["side"] for r in runs} == {"base", "patched"}, "both sides ran on kx1",
   str([(r["side"], r["machine"]) for r in runs]))
run_boots = {r["boot_id"] for r in runs}
ok(len(run_boots) == 2 and None not in run_boots and len(set(ids)) == len(ids) == 2,
   "each boot has its own boot id (%d boots)" % len(ids), "stages %s runs %s" % (ids, run_boots))
ok(bool(ids) and bool(ids[-1]) and ("tlblab.boot=%s" % ids[-1]) in cmdline.split(),
   "the guest's /proc/cmdline has the last boot id", "last %s, cmdline %r" % (ids[-1:], cmdline))
ok(sum(w.startswith("tlblab.boot=") for w in cmdline.split()) == 1,
   "the previous boot id was dropped from the command line", cmdline)
patched = {r["build_id"] for r in runs if r["side"] == "patched"}
tag = "tlblab@b-%s)" % (next(iter(patched)) or "")[:12] if len(patched) == 1 else "?"
ok(tag in version, "the guest runs the patched build (%s)" % tag.rstrip(")"), "%s not in %r" % (tag, version))
PYEOF
console_boots "the kexec'd kernels" 'kexec_core: Starting new kernel'
boot_log_has "the kexec, the kernel's dmesg and the identity check" 'back on the new kernel' 'Linux version' \
	'identity checked'
machine_good "after the demo patch"

# 2. a patched kernel that panics at boot: the guest falls back to its first kernel
id=$(submit "$TOP/tests/fixtures/patches/panic-at-boot.patch")
expect_fallback "$id" "$first_host"
if grep -q 'Kernel panic - not syncing: tlblab test: panic at boot' "$TMP/console.log"; then
	pass "the serial console has the panic that sent the guest back"
else
	fail "the serial console has the panic" "$(grep -c 'Linux version' "$TMP/console.log") boots in console.log"
fi
machine_good "after the panic"
