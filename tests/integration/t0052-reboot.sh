#!/bin/sh
# boot: reboot, for real: a QEMU guest started here stands in for a real lab
# machine that boots with GRUB from a disk (tests/grub-machine.sh), reached
# over SSH (forwarded port 10025). Its default GRUB entry is a known-good
# kernel. tlblabd installs each built kernel in the guest's /boot, writes
# its GRUB entry, runs grub-reboot (the real script, on the guest) and
# reboots; GRUB boots the entry once and the guest comes back with the boot
# id. Then a patched kernel that panics at boot: panic=-1 resets the guest,
# GRUB has already forgotten the one-time entry and boots the known-good
# kernel, and the job must fail with class boot, the machine still good.
# Last, a machine that goes silent instead of rebooting (its reboot command
# only kills sshd): after boot_timeout the daemon runs its power_cycle (a
# system_reset on the QEMU monitor), GRUB boots the entry still set once,
# and the job (a run job of the base: one reboot) completes.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
. "$TOP/tests/guest.sh"
trap 'daemon_cleanup; guest_stop; rm -rf "$TMP"' EXIT
guest_lab 29000 10025 rb1
# the daemon builds in the lab's directories: as the lab's user, their owner
daemon_as_lab_user

guest_prepare usr/sbin/grub-reboot
# the known-good kernel must mount the disk (virtio-blk, ext2)
guest_kernel "a known-good kernel for the guest" CONFIG_VIRTIO_BLK=y CONFIG_EXT2_FS=y
good_host=$(build_host "$kernel")
if ! sh "$TOP/tests/grub-machine.sh" "$TMP/machine" "$kernel" "$CACHE/guest/initramfs.cpio" >"$TMP/disk.log" 2>&1; then
	fail "the GRUB disk is made" "$(tail -n 5 "$TMP/disk.log")"
	exit 0
fi

t0=$(date +%s)
guest_start -kernel "$TMP/machine/grub.lnx" -drive "file=$TMP/machine/disk.img,format=raw,if=virtio" \
	-monitor "unix:$TMP/monitor.sock,server,nowait"
# the daemon (as the lab's user) power-cycles the machine through it
chown "$LAB_USER" "$TMP/monitor.sock"
if guest 'grep -q " /boot ext2 " /proc/mounts && test -f /boot/grub/grubenv && command -v grub-reboot' >"$TMP/guest.out" 2>&1 &&
	grep -q 'tlblab-grub: booting the known-good kernel' "$TMP/console.log"; then
	pass "the guest booted its known-good kernel through GRUB in $(($(date +%s) - t0)) s, /boot mounted"
else
	fail "the guest is up through GRUB with /boot and grub-reboot" "$(cat "$TMP/guest.out"; tail -n 3 "$TMP/console.log")"
	exit 0
fi

write_config() { # MACHINE_LINES BOOT_TIMEOUT REBOOT_LINES: rb1's extra lines
	{
		lab_ssh_guest_head reboot
		cat <<EOC
    boot_timeout: $2
    cpus: 2
$1
    reboot:
      grub_dir: /
      initrd: initramfs.cpio
$3
EOC
		lab_tail
	} >"$TMP/lab.yaml"
}
write_config "" 120 ""
DAEMON_AGENT=$GUEST_AGENT daemon_start "$TMP/lab.yaml" || { fail "tlblabd starts" "see log"; exit 0; }

# 1. the demo patch, both sides booted once through GRUB
demo_job "a reboot machine" \
	'cat /proc/cmdline; cat /proc/version; grub-editenv /boot/grub/grubenv list; cat /boot/grub/custom.cfg'
$PY - "$TMP/job.json" "$TMP/runs.json" "$TMP/now.txt" <<'PYEOF' || fail "the checks of line 62 ran to their end" "python exited $?"
import json, sys
stages = json.load(open(sys.argv[1]))["job"]["stages"]
runs = json.load(open(sys.argv[2]))["runs"]
lines = open(sys.argv[3]).read().splitlines() + ["", ""]
cmdline, version = lines[:2]
def ok(c, name, why):
    print(("ok - " if c else "not ok - ") + name + ("" if c else " # " + why))
ids = [g.get("boot_id") for g in stages if g["kind"] == "boot"]
ok(len(runs) > 0 and {r["side"] for r in runs} == {"base", "patched"}, "both sides ran on rb1",
   str([(r["side"], r["machine"]) for r in runs]))
ok(bool(ids) and bool(ids[-1]) and ("tlblab.boot=%s" % ids[-1]) in cmdline.split(),
   "the guest's /proc/cmdline has the last boot id", "last %s, cmdline %r" % (ids[-1:], cmdline))
patched = {r["build_id"] for r in runs if r["side"] == "patched"}
tag = "tlblab@b-%s)" % (next(iter(patched)) or "")[:12] if len(patched) == 1 else "?"
ok(tag in version, "the guest runs the patched build (%s)" % tag.rstrip(")"), "%s not in %r" % (tag, version))
env = [l for l in lines if l.startswith("next_entry=")]
ok(env in ([], ["next_entry="]), "GRUB cleared the one-time entry as it booted it", str(env))
ok(any(l.strip().startswith("linux /tlblab-vmlinuz ") and ("tlblab.boot=%s" % ids[-1]) in l for l in lines),
   "the GRUB entry tlblab wrote boots the installed kernel with the boot id", "\n".join(lines[2:]))
PYEOF
console_boots "GRUB booting tlblab's entries" 'tlblab: GRUB boots entry tlblab'
boot_log_has "the GRUB entry, the reboot and the identity check" 'GRUB entry tlblab' 'back on the new kernel' \
	'identity checked'
machine_good "after the demo patch"

# 2. a patched kernel that panics at boot: GRUB falls back to the known-good kernel
id=$(submit "$TOP/tests/fixtures/patches/panic-at-boot.patch")
expect_fallback "$id" "$good_host"
if grep -q 'Kernel panic - not syncing: tlblab test: panic at boot' "$TMP/console.log" &&
	[ "$(grep -c 'tlblab-grub: booting the known-good kernel' "$TMP/console.log")" -ge 2 ]; then
	pass "the serial console has the panic, then GRUB booting the known-good kernel"
else
	fail "the console has the panic and the fallback" "$(grep -E 'panic|known-good' "$TMP/console.log" | tail -n 4)"
fi
machine_good "after the panic"

# 3. a machine that goes silent: the power cycle brings it back, on the entry
# GRUB was told to boot once
# (boot_timeout 25 s finds the silence soon; the boot after the cycle has
# power_cycle_timeout, as a server's firmware would need: GRUB and a TCG
# boot on a busy host took more than 25 s once)
write_config "    power_cycle: [$PY, $TOP/tests/tools/qemu-reset.py, $TMP/monitor.sock]
    power_cycle_timeout: 300" 25 \
	"      command: [killall, sshd]"
kill -HUP "$DAEMON_PID"
wait_until 10 grep -q 'SIGHUP: configuration reloaded' "$DAEMON_LOG" ||
	fail "SIGHUP loads the power-cycle configuration" "no reload logged in 10 s"
t0=$(date +%s)
id=$("$CLIENT" submit --json --suite quick --tree linux --base v6.1-debian --boots 1 --submitter t0052 |
	jq_py 'J["job"]["id"]')
state=$(job_wait "$id" "done failed cancelled" 1500)
if [ "$state" = done ]; then
	pass "a run job on a machine silent after its reboot command, power-cycled, is done in $(($(date +%s) - t0)) s"
else
	fail "a run job on a machine silent after its reboot command is done" \
		"$state: $(api GET "/jobs/$id" | jq_py 'J["job"]["error"]'); console: $(tail -n 12 "$TMP/console.log")"
fi
boot_log_has "the silence, the power cycle and the new kernel after it" 'silent .* power-cycling it' \
	'back on the new kernel .* and a power cycle'
machine_good "after the power cycle"
