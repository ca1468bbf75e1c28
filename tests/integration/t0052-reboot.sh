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
# and the job completes.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
. "$TOP/tests/guest.sh"

CACHE=${TLBLAB_CACHE:-/var/cache/tlblab}
TOKEN=t0052-token-0123456789abcdef
DAEMON_PORT=$((29000 + $$ % 3000))	# below the ephemeral range (32768-)
GUEST_PORT=10025
CLIENT=$BUILD/tlblab
QEMU_PID=
MACHINE=rb1
export TLBLAB_SERVER="http://127.0.0.1:$DAEMON_PORT" TLBLAB_TOKEN=$TOKEN
trap 'daemon_cleanup; [ -n "$QEMU_PID" ] && kill "$QEMU_PID" 2>/dev/null; rm -rf "$TMP"' EXIT

guest_prepare usr/sbin/grub-reboot
# the known-good kernel must mount the disk (virtio-blk, ext2)
if ! kernel=$(lab_kernel CONFIG_VIRTIO_BLK=y CONFIG_EXT2_FS=y); then
	fail "a known-good kernel for the guest is built" "$(tail -n 5 "$TMP/build.log")"
	exit 0
fi
good_host=$(build_host "$kernel")
if ! sh "$TOP/tests/grub-machine.sh" "$TMP/machine" "$kernel" "$CACHE/guest/initramfs.cpio" >"$TMP/disk.log" 2>&1; then
	fail "the GRUB disk is made" "$(tail -n 5 "$TMP/disk.log")"
	exit 0
fi

t0=$(date +%s)
if ! qemu-system-x86_64 -machine q35 -accel tcg,thread=multi -cpu max -smp 2 -m 1024 \
	-kernel "$TMP/machine/grub.lnx" -drive "file=$TMP/machine/disk.img,format=raw,if=virtio" \
	-netdev "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:$GUEST_PORT-:22" -device virtio-net-pci,netdev=n0 \
	-serial "file:$TMP/console.log" -display none -monitor "unix:$TMP/monitor.sock,server,nowait" \
	-daemonize -pidfile "$TMP/qemu.pid" \
	>"$TMP/qemu.out" 2>&1; then
	fail "the guest starts" "$(cat "$TMP/qemu.out")"
	exit 0
fi
guest_wait_ready
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
$PY - "$TMP/job.json" "$TMP/runs.json" "$TMP/now.txt" <<'PYEOF'
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
ngrub=$(grep -c 'tlblab: GRUB boots entry tlblab' "$TMP/console.log")
nlinux=$(grep -c 'Linux version' "$TMP/console.log")
if [ "$nlinux" -ge 3 ] && [ "$ngrub" -ge 2 ]; then
	pass "the serial console shows GRUB booting tlblab's entry $ngrub times, $nlinux kernels in all"
else
	fail "the serial console shows the reboots through GRUB" "$ngrub GRUB starts, $nlinux Linux version lines"
fi
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
write_config "    power_cycle: [$PY, $TOP/tests/tools/qemu-reset.py, $TMP/monitor.sock]" 60 \
	"      command: [killall, sshd]"
kill -HUP "$DAEMON_PID"
wait_until 10 grep -q 'SIGHUP: configuration reloaded' "$DAEMON_LOG" ||
	fail "SIGHUP loads the power-cycle configuration" "no reload logged in 10 s"
t0=$(date +%s)
id=$(submit "$TOP/kernels/patches/0001-x86-mm-tlb-flush-every-online-cpu.patch")
state=$(job_wait "$id" "done failed cancelled" 1500)
if [ "$state" = done ]; then
	pass "a machine silent after its reboot command is power-cycled and the job is done in $(($(date +%s) - t0)) s"
else
	fail "a silent machine is power-cycled" "$state: $(api GET "/jobs/$id" | jq_py 'J["job"]["error"]'); console: $(tail -n 12 "$TMP/console.log")"
fi
boot_log_has "the silence, the power cycle and the new kernel after it" 'silent .* power-cycling it' \
	'back on the new kernel .* and a power cycle'
machine_good "after the power cycles"
