#!/bin/sh
# How long the embedded lab's guest takes to come up, and what
# random.trust_cpu=on (on the command line daemon/stages/boot_qemu.c gives
# every guest) saves of it. The lab kernel is booted by the daemon's own boot
# code (tests/tools/qemu-boot) as configs/local.yaml's qemu1 boots: 2 vCPUs,
# icount shift 3, the instruction plugin. BOOT_RUNS times (default 10) each
# way, alternately (a drift of the host hits both alike): as shipped, and with
# the machine's append turning it off again (random.trust_cpu=off). Printed:
# the median host seconds from the boot command to the guest's ready line
# (its sshd up) each way, and their difference. No target: the figure is
# the boot's share of every job and of make test.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/guest.sh"

RUNS=${BOOT_RUNS:-10}
GUEST_PORT=10035 MACHINE=b13
say() { echo "b0013: $*"; }
trap 'qemu_boot_end; rm -rf "$TMP"' EXIT

command -v qemu-system-x86_64 >/dev/null 2>&1 || { say "no qemu-system-x86_64 (apt-get install qemu-system-x86)"; exit 1; }
[ -f "$BUILD/tlblab-insn.so" ] || { say "no $BUILD/tlblab-insn.so (make builds it)"; exit 1; }
if ! kernel=$(lab_kernel CONFIG_PERF_EVENTS=y); then
	say "no lab kernel: $(tail -n 5 "$TMP/build.log")"
	exit 1
fi
[ -f "$CACHE/guest/initramfs.cpio" ] || { say "no guest initramfs in $CACHE/guest (make demo makes it)"; exit 1; }
qemu_boot_build || { say "tests/tools/qemu-boot: $(tail -n 5 "$TMP/qemu-boot.cc")"; exit 1; }

# lab.yaml with qemu1's accel and plugin; QEMU_APPEND for the machine's append
lab_yaml_for() {
	QEMU_APPEND=$1 qemu_machine_yaml | sed "s|^      accel: auto\$|      accel: icount\\
      icount_shift: 3\\
      insn_plugin: $BUILD/tlblab-insn.so|"
}
lab_yaml_for "" >"$TMP/on.yaml"
lab_yaml_for random.trust_cpu=off >"$TMP/off.yaml"
grep -q 'icount_shift: 3' "$TMP/on.yaml" || { say "the machine's accel line was not found in qemu_machine_yaml's output"; exit 1; }

# one WAY (on|off): one boot to the ready line; prints its host seconds, or
# nothing (and why, on stderr) when it did not come up
one() {
	qemu_boot_start "$TMP/$1.yaml"
	t0=$(date +%s.%N)
	if qemu_boot_cmd "boot $kernel"; then
		t1=$(date +%s.%N)
		echo "$t0 $t1" | awk '{printf "%.2f\n", $2 - $1}'
		# the guest's clock when its random number generator was ready
		sed -n 's/^\[ *\([0-9.]*\)\] random: crng init done.*/\1/p' "$TMP/vm/$MACHINE/console.log" |
			head -n 1 >>"$TMP/$1.crng"
	else
		say >&2 "trust_cpu $1: the guest did not come up: $(tail -n 2 "$TMP/boot.notes")"
	fi
	qemu_boot_end
}

for f in on.s off.s on.crng off.crng; do : >"$TMP/$f"; done
b=0
while [ $b -lt "$RUNS" ]; do
	if [ $((b % 2)) = 0 ]; then order="on off"; else order="off on"; fi
	for w in $order; do
		one $w >>"$TMP/$w.s"
	done
	b=$((b + 1))
done
$PY - "$TMP" "$RUNS" <<'PYEOF'
import os, statistics, sys
d, runs = sys.argv[1], int(sys.argv[2])
status = 0
v = {w: [float(x) for x in open(os.path.join(d, w + ".s")).read().split()] for w in ("on", "off")}
if len(v["on"]) < runs or len(v["off"]) < runs:
    print("b0013: only %d and %d of %d boots came up" % (len(v["on"]), len(v["off"]), runs))
    sys.exit(1)
on, off = statistics.median(v["on"]), statistics.median(v["off"])
crng = {w: [float(x) for x in open(os.path.join(d, w + ".crng")).read().split()] for w in ("on", "off")}
print("b0013: boot to the ready line, icount shift 3, medians of %d boots each: %.2f s with random.trust_cpu=on "
      "(as shipped), %.2f s with it off: %.2f s saved" % (runs, on, off, off - on))
if len(crng["on"]) == len(v["on"]) and len(crng["off"]) == len(v["off"]):
    print("b0013: the guest's clock at \"random: crng init done\" (icount: the instructions run, and idle time "
          "skipped ahead), medians: %.2f s on, %.2f s off" % (statistics.median(crng["on"]), statistics.median(crng["off"])))
else:
    print("b0013: the console's \"random: crng init done\" line was missing in %d of %d boots"
          % (2 * runs - len(crng["on"]) - len(crng["off"]), 2 * runs))
    status = 1
print("b0013: each boot (on): %s; (off): %s" % (" ".join("%.2f" % x for x in v["on"]),
                                                 " ".join("%.2f" % x for x in v["off"])))
sys.exit(status)
PYEOF
