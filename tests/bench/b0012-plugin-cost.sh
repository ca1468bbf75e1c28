#!/bin/sh
# What the instruction plugin (build/tlblab-insn.so) costs a guest: the lab
# kernel is booted PLUGIN_BOOTS times (default 3) each way, with and without
# the plugin, alternately (a drift of the host hits both alike), under
# multi-threaded TCG and under icount (shift 3, sleep=off), the way the
# daemon boots qemu1. In each boot a fixed amount of guest work runs: the
# agent's mprotect from 2 processes for a fixed 20000 rounds each (icount's
# clock is the guest's own, so a duration would not be fixed work). Printed
# per mode: the median host seconds of that run with and without the
# plugin, and their ratio (the target is at most 2x). x86_64 only: an arm64
# guest needs a cross-built arm64 kernel, which this bench does not build.
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

# one boot: MODE (mttcg|icount) and PLUG (on|off); prints the host seconds
# of the fixed run, or nothing when the guest did not come up
one() {
	case $1 in
	mttcg) accel="-accel tcg,thread=multi -cpu max" ;;
	icount) accel="-accel tcg,thread=single -cpu Skylake-Client-v4 -icount shift=3,sleep=off" ;;
	esac
	plug=
	[ "$2" = on ] && plug="-plugin $PLUGIN,out=$TMP/insn.log"
	rm -f "$TMP/console.log"
	# shellcheck disable=SC2086
	qemu-system-x86_64 -machine q35 $accel -smp 2 -m 1024 -kernel "$kernel" \
		-initrd "$GUEST_DIR/initramfs.cpio" -append "console=ttyS0 panic=-1" -no-reboot \
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
	echo "$SPEC" | guest /usr/bin/tlblab-agent run --spec - >"$TMP/run.out" 2>&1
	t1=$(date +%s.%N)
	guest_stop
	QEMU_PID=
	grep -q '"type":"result"' "$TMP/run.out" || { say >&2 "$1 plugin $2: the run failed: $(tail -c 300 "$TMP/run.out")"; return; }
	echo "$t0 $t1" | awk '{printf "%.3f\n", $2 - $1}'
}

for mode in mttcg icount; do
	: >"$TMP/$mode.on"
	: >"$TMP/$mode.off"
	b=0
	while [ $b -lt "$BOOTS" ]; do
		# on, off, off, on, ...
		if [ $((b % 2)) = 0 ]; then order="on off"; else order="off on"; fi
		for p in $order; do
			one $mode $p >>"$TMP/$mode.$p"
		done
		b=$((b + 1))
	done
done
$PY - "$TMP" "$BOOTS" <<'PYEOF'
import os, statistics, sys
d, boots = sys.argv[1], int(sys.argv[2])
status = 0
for mode, what in (("mttcg", "multi-threaded TCG"), ("icount", "icount, shift 3, sleep=off")):
    v = {}
    for p in ("on", "off"):
        v[p] = [float(x) for x in open(os.path.join(d, mode + "." + p)).read().split() if x.strip()]
    if len(v["on"]) < boots or len(v["off"]) < boots:
        print("b0012: %s: only %d and %d of %d runs came back" % (what, len(v["on"]), len(v["off"]), boots))
        status = 1
        continue
    on, off = statistics.median(v["on"]), statistics.median(v["off"])
    print("b0012: %s, 20000 mprotect rounds x 2 processes: %.2f s with the plugin, %.2f s without "
          "(medians of %d boots each): %.2fx%s" % (what, on, off, boots, on / off,
          "" if on / off <= 2 else "  ** over the 2x target"))
sys.exit(status)
PYEOF
