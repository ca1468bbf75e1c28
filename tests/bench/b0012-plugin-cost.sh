#!/bin/sh
# What the instruction plugin (build/tlblab-insn.so) costs a guest: the lab
# kernel is booted PLUGIN_BOOTS times (default 3) each way, with and without
# the plugin, alternately (a drift of the host hits both alike), under
# multi-threaded TCG and under icount (shift 3, sleep=off), the way the
# daemon boots qemu1. In each boot a fixed amount of guest work runs: the
# agent's mprotect from 2 processes for a fixed 20000 rounds each (icount's
# clock is the guest's own, so a duration would not be fixed work). Printed
# per mode: the median host seconds of that run with and without the
# plugin, and their ratio (the target is at most 2x), and the same run
# with the plugin's TLB model on (tlb=on, docs/tlb-model.md): its seconds
# and their ratio to the plugin alone. Then the same for an
# arm64 guest (qemu-system-aarch64 -M virt, multi-threaded TCG and icount
# with -cpu neoverse-n1, as the daemon boots qemu-arm1), when the build
# cache has an arm64 kernel of v6.1-debian itself (the daemon's builds for
# qemu-arm1, t0056 or `make lab-arm64` leave one) and the arm64 guest's
# initramfs is made; otherwise it says so and measures x86_64 only.
# PLUGIN_MODES="icount arm64-icount" measures some of the modes only (the
# lab's machines run icount).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/guest.sh"

BOOTS=${PLUGIN_BOOTS:-3}
GUEST_PORT=10034
PLUGIN="$BUILD/tlblab-insn.so"
trap 'guest_stop; rm -rf "$TMP"' EXIT
say() { echo "b0012: $*"; }
# inside one(), whose standard output is the figure, messages go to stderr
[ -f "$PLUGIN" ] || { say "no $PLUGIN (make builds it)"; exit 1; }
if ! kernel=$(lab_kernel CONFIG_PERF_EVENTS=y); then
	say "no lab kernel: $(tail -n 5 "$TMP/build.log")"
	exit 1
fi
GUEST_DIR=$CACHE/guest
[ -f "$GUEST_DIR/initramfs.cpio" ] || { say "no guest initramfs in $GUEST_DIR (make demo makes it)"; exit 1; }
SPEC='{"workload":"mprotect","mode":"processes","workers":2,"rounds":20000,"duration":300,"iterations":1,"warmup":0}'

# the arm64 kernel: a cached build of the daemon's (build.sh's out/) of
# v6.1-debian with no patch (its commit is its base's), for arm64
ARM64_KERNEL=$($PY - "$CACHE" <<'PYEOF'
import glob, json, os, sys
best = None
for meta in glob.glob(os.path.join(sys.argv[1], "*", "out", "*", "meta.json")):
    try:
        m = json.load(open(meta))
    except (OSError, ValueError):
        continue
    img = os.path.join(os.path.dirname(meta), m.get("image", ""))
    if m.get("arch") == "arm64" and m.get("base_ref") == "v6.1-debian" and m.get("commit") == m.get("base_commit") \
            and os.path.isfile(img) and (best is None or os.path.getmtime(img) > os.path.getmtime(best)):
        best = img
print(best or "")
PYEOF
)
ARM64_GUEST=$CACHE/guest-arm64
MODES="mttcg icount"
if [ -n "$ARM64_KERNEL" ] && [ -f "$ARM64_GUEST/initramfs.cpio" ]; then
	MODES="$MODES arm64-mttcg arm64-icount"
	say "arm64 kernel: $ARM64_KERNEL"
else
	say "arm64: not measured: no arm64 kernel of v6.1-debian in $CACHE/*/out or no $ARM64_GUEST/initramfs.cpio (make lab-arm64 and an arm64 job make them)"
fi
if [ -n "${PLUGIN_MODES:-}" ]; then
	for m in $PLUGIN_MODES; do
		case " $MODES " in
		*" $m "*) ;;
		*) say "PLUGIN_MODES: $m is not one of: $MODES"; exit 1 ;;
		esac
	done
	MODES=$PLUGIN_MODES
fi

# one boot: MODE (mttcg|icount|arm64-mttcg|arm64-icount) and PLUG (on|off|tlb);
# prints the host seconds of the fixed run, or nothing when the guest did
# not come up
one() {
	qemu=qemu-system-x86_64 machine="-machine q35" img=$kernel dir=$GUEST_DIR console=ttyS0
	case $1 in
	arm64-*)
		qemu=qemu-system-aarch64 machine="-machine virt" img=$ARM64_KERNEL dir=$ARM64_GUEST console=ttyAMA0 ;;
	esac
	case $1 in
	mttcg) accel="-accel tcg,thread=multi -cpu max" ;;
	icount) accel="-accel tcg,thread=single -cpu Skylake-Client-v4 -icount shift=3,sleep=off" ;;
	arm64-mttcg) accel="-accel tcg,thread=multi -cpu max" ;;
	arm64-icount) accel="-accel tcg,thread=single -cpu neoverse-n1 -icount shift=3,sleep=off" ;;
	esac
	plug=
	[ "$2" = on ] && plug="-plugin $PLUGIN,out=$TMP/insn.log"
	[ "$2" = tlb ] && plug="-plugin $PLUGIN,out=$TMP/insn.log,tlb=on"
	rm -f "$TMP/console.log"
	# shellcheck disable=SC2086
	$qemu $machine $accel -smp 2 -m 1024 -kernel "$img" \
		-initrd "$dir/initramfs.cpio" -append "console=$console panic=-1" -no-reboot \
		-netdev "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:$GUEST_PORT-:22" -device virtio-net-pci,netdev=n0 \
		-serial "file:$TMP/console.log" -monitor none -display none -daemonize -pidfile "$TMP/qemu.pid" \
		$plug >"$TMP/qemu.out" 2>&1 || { say >&2 "qemu: $(tail -n 2 "$TMP/qemu.out")"; return; }
	QEMU_PID=$(cat "$TMP/qemu.pid")
	i=0
	until grep -q 'tlblab-guest: ready' "$TMP/console.log" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 1200 ] || ! kill -0 "$QEMU_PID" 2>/dev/null; then
			say >&2 "$1 plugin $2: the guest did not come up: $(tail -n 2 "$TMP/console.log" 2>/dev/null)"
			guest_stop
			return
		fi
		sleep 0.25
	done
	t0=$(date +%s.%N)
	echo "$SPEC" | GUEST_DIR=$dir guest /usr/bin/tlblab-agent run --spec - >"$TMP/run.out" 2>&1
	t1=$(date +%s.%N)
	guest_stop
	QEMU_PID=
	grep -q '"type":"result"' "$TMP/run.out" || { say >&2 "$1 plugin $2: the run failed: $(tail -c 300 "$TMP/run.out")"; return; }
	echo "$t0 $t1" | awk '{printf "%.3f\n", $2 - $1}'
}

for mode in $MODES; do
	: >"$TMP/$mode.on"
	: >"$TMP/$mode.off"
	: >"$TMP/$mode.tlb"
	b=0
	while [ $b -lt "$BOOTS" ]; do
		# on, off, tlb, then tlb, off, on, ...
		if [ $((b % 2)) = 0 ]; then order="on off tlb"; else order="tlb off on"; fi
		for p in $order; do
			one $mode $p >>"$TMP/$mode.$p"
		done
		b=$((b + 1))
	done
done
$PY - "$TMP" "$BOOTS" "$MODES" <<'PYEOF'
import os, statistics, sys
d, boots, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
status = 0
names = {"mttcg": "x86_64, multi-threaded TCG", "icount": "x86_64, icount, shift 3, sleep=off",
         "arm64-mttcg": "arm64, multi-threaded TCG", "arm64-icount": "arm64, icount, shift 3, sleep=off"}
for mode in modes:
    what = names[mode]
    v = {}
    for p in ("on", "off", "tlb"):
        v[p] = [float(x) for x in open(os.path.join(d, mode + "." + p)).read().split() if x.strip()]
    if min(len(v[p]) for p in v) < boots:
        print("b0012: %s: only %d, %d and %d of %d runs came back" % (what, len(v["on"]), len(v["off"]),
              len(v["tlb"]), boots))
        status = 1
        continue
    on, off, tlb = (statistics.median(v[p]) for p in ("on", "off", "tlb"))
    print("b0012: %s, 20000 mprotect rounds x 2 processes: %.2f s with the plugin, %.2f s without "
          "(medians of %d boots each): %.2fx%s" % (what, on, off, boots, on / off,
          "" if on / off <= 2 else "  ** over the 2x target"))
    print("b0012: %s, the same with the TLB model on: %.2f s, %.2fx the plugin alone, %.2fx no plugin"
          % (what, tlb, tlb / on, tlb / off))
sys.exit(status)
PYEOF
