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

CACHE=${TLBLAB_CACHE:-/var/cache/tlblab}
TOKEN=t0051-token-0123456789abcdef
DAEMON_PORT=$((40000 + $$ % 5000))
GUEST_PORT=10024
CLIENT=$BUILD/tlblab
QEMU_PID=
export TLBLAB_SERVER="http://127.0.0.1:$DAEMON_PORT" TLBLAB_TOKEN=$TOKEN
trap 'daemon_cleanup; [ -n "$QEMU_PID" ] && kill "$QEMU_PID" 2>/dev/null; rm -rf "$TMP"' EXIT

guest() {
	ssh -i "$CACHE/guest/lab_key" -o UserKnownHostsFile="$CACHE/guest/known_hosts" -o StrictHostKeyChecking=yes \
		-o BatchMode=yes -o ConnectTimeout=10 -p "$GUEST_PORT" root@127.0.0.1 "$@"
}

if ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
	fail "qemu-system-x86_64 is installed" "apt-get install qemu-system-x86"
	exit 0
fi
if ! sh "$TOP/kernels/import-tree.sh" "$CACHE/linux" >"$TMP/import.log" 2>&1; then
	fail "the kernel tree is imported" "$(tail -n 3 "$TMP/import.log")"
	exit 0
fi
if ! sh "$TOP/kernels/mkinitramfs.sh" "$CACHE/guest" "$GUEST_AGENT" >"$TMP/initramfs.log" 2>&1; then
	fail "the guest initramfs is built" "$(tail -n 3 "$TMP/initramfs.log")"
	exit 0
fi
if ! cpio -t <"$CACHE/guest/initramfs.cpio" 2>/dev/null | grep -qx 'sbin/kexec'; then
	fail "the guest initramfs has kexec" "apt-get install kexec-tools, then kernels/mkinitramfs.sh"
	exit 0
fi

# the kernel the guest starts on: any lab kernel built before (t0040, t0050),
# or the base kernel built here the way t0040 does
kernel=
for f in "$CACHE"/tlblab/out/*/bzImage "$CACHE"/work-test/out/*/bzImage; do
	if [ -f "$f" ] && grep -qx 'CONFIG_KEXEC=y' "$(dirname "$f")/config" 2>/dev/null; then
		kernel=$f
		break
	fi
done
if [ -z "$kernel" ]; then
	if ! sh "$TOP/kernels/build.sh" --tree "$CACHE/linux" --work "$CACHE/work-test" --out "$CACHE/work-test/out" \
		--config-base tinyconfig --fragment "$TOP/kernels/fragments/lab-required.config" \
		--fragment "$TOP/kernels/fragments/qemu-x86_64.config" --ref v6.1-debian >"$TMP/build.log" 2>&1; then
		fail "a first kernel for the guest is built" "$(tail -n 5 "$TMP/build.log")"
		exit 0
	fi
	kernel=$(sed -n 's/^TLBLAB dir //p' "$TMP/build.log" | head -n 1)/bzImage
fi
first_host=$(sed -n 's/.*"build_host": "\(b-[0-9a-f]*\)".*/\1/p' "$(dirname "$kernel")/meta.json")

t0=$(date +%s)
if ! qemu-system-x86_64 -machine q35 -accel tcg,thread=multi -cpu max -smp 2 -m 1024 \
	-kernel "$kernel" -initrd "$CACHE/guest/initramfs.cpio" \
	-append "console=ttyS0 panic=-1 tlblab.kexec_initrd=/tmp/initrd.cpio" \
	-netdev "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:$GUEST_PORT-:22" -device virtio-net-pci,netdev=n0 \
	-serial "file:$TMP/console.log" -display none -monitor none -daemonize -pidfile "$TMP/qemu.pid" \
	>"$TMP/qemu.out" 2>&1; then
	fail "the guest starts" "$(cat "$TMP/qemu.out")"
	exit 0
fi
QEMU_PID=$(cat "$TMP/qemu.pid")
i=0
until grep -q 'tlblab-guest: ready' "$TMP/console.log" 2>/dev/null; do
	i=$((i + 1))
	if [ $i -gt 480 ] || ! kill -0 "$QEMU_PID" 2>/dev/null; then
		fail "the guest boots" "$(tail -n 5 "$TMP/console.log" 2>/dev/null)"
		exit 0
	fi
	sleep 0.25
done
if guest 'test -s /tmp/initrd.cpio && command -v kexec' >"$TMP/guest.out" 2>&1; then
	pass "the guest is up in $(($(date +%s) - t0)) s, with kexec and an initrd to kexec with"
else
	fail "the guest is up with kexec and /tmp/initrd.cpio" "$(cat "$TMP/guest.out")"
	exit 0
fi

cat >"$TMP/lab.yaml" <<EOC
lab:
  data_dir: $TMP/data
  listen: 127.0.0.1:$DAEMON_PORT
  tokens: [$TOKEN]
  stage_timeout: 1200
machines:
  - name: kx1
    transport: ssh
    host: 127.0.0.1
    port: $GUEST_PORT
    user: root
    identity: $CACHE/guest/lab_key
    known_hosts: $CACHE/guest/known_hosts
    boot: kexec
    cpus: 2
    workdir: /tmp/tlblab
    kexec:
      initrd: /tmp/initrd.cpio
builders:
  - name: local
    transport: local
    jobs: 2
    workdir: $CACHE
trees:
  - name: linux
    url: $CACHE/linux
    builder: local
    fragments: [$TOP/kernels/fragments/lab-required.config, $TOP/kernels/fragments/qemu-x86_64.config]
suites:
  - name: quick
    timeout: 600
    workloads:
      - workload: mprotect
        mode: [threads, processes]
        workers: 2
        duration: 1
        iterations: 2
EOC
DAEMON_AGENT=$GUEST_AGENT daemon_start "$TMP/lab.yaml" || { fail "tlblabd starts" "see log"; exit 0; }

# submit PATCHFILE: prints the job id
submit() {
	"$CLIENT" submit --json --suite quick --tree linux --base v6.1-debian --patch "$1" --boots 1 --submitter t0051 |
		jq_py 'J["job"]["id"]'
}

# machine_good NAME: kx1 is good in /api/v1/machines
machine_good() {
	h=$(api GET /machines | jq_py '[m["health"] for m in J["machines"] if m["name"] == "kx1"][0]')
	if [ "$h" = good ]; then
		pass "$1: kx1 is good"
	else
		fail "$1: kx1 is good" "health $h: $(api GET /machines | head -c 400)"
	fi
}

# 1. the demo patch, both sides kexec'd on the guest
t0=$(date +%s)
id=$(submit "$TOP/kernels/patches/0001-x86-mm-tlb-flush-every-online-cpu.patch")
state=$(job_wait "$id" "done failed cancelled" 1500)
if [ "$state" = done ]; then
	pass "A/B job with the demo patch on a kexec machine is done in $(($(date +%s) - t0)) s"
else
	fail "A/B job with the demo patch on a kexec machine" "$state: $(api GET "/jobs/$id" | head -c 1200)"
fi
api GET "/jobs/$id" >"$TMP/job.json"
api GET "/jobs/$id/runs" >"$TMP/runs.json"
guest 'cat /proc/cmdline; cat /proc/version' >"$TMP/now.txt" 2>&1
$PY - "$TMP/job.json" "$TMP/runs.json" "$TMP/now.txt" <<'PYEOF'
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
nlinux=$(grep -c 'Linux version' "$TMP/console.log")
nkexec=$(grep -c 'kexec_core: Starting new kernel' "$TMP/console.log")
if [ "$nlinux" -ge 3 ] && [ "$nkexec" -ge 2 ]; then
	pass "the serial console shows the kexec'd kernels booting ($nkexec kexecs, $nlinux 'Linux version' lines)"
else
	fail "the serial console shows the kexec'd kernels" "$nkexec kexecs, $nlinux Linux version lines"
fi
boot_stage=$($PY -c 'import json,sys; print([g["id"] for g in json.load(open(sys.argv[1]))["job"]["stages"] if g["kind"] == "boot"][0])' "$TMP/job.json")
log=$(api GET "/jobs/$id/stages/$boot_stage/log")
if echo "$log" | grep -q 'back on the new kernel' && echo "$log" | grep -q 'Linux version' &&
	echo "$log" | grep -q 'identity checked'; then
	pass "the boot log has the kexec, the kernel's dmesg and the identity check"
else
	fail "the boot log has the kexec, dmesg and identity check" "$(echo "$log" | head -c 600)"
fi
machine_good "after the demo patch"

# 2. a patched kernel that panics at boot: the guest falls back to its first kernel
t0=$(date +%s)
id=$(submit "$TOP/tests/fixtures/patches/panic-at-boot.patch")
state=$(job_wait "$id" "done failed cancelled" 1500)
job=$(api GET "/jobs/$id")
cls=$(printf "%s\n" "$job" | jq_py '(J["job"]["error"] or {}).get("class")')
msg=$(printf "%s\n" "$job" | jq_py '(J["job"]["error"] or {}).get("message")')
if [ "$state" = failed ] && [ "$cls" = boot ] && printf "%s\n" "$msg" | grep -q 'came back on another kernel' &&
	printf "%s\n" "$msg" | grep -q "tlblab@$first_host)"; then
	pass "a kernel that panics at boot: class boot in $(($(date +%s) - t0)) s: $(printf "%s\n" "$msg" | head -n 1 | cut -c1-120)"
else
	fail "a kernel that panics at boot" "state $state, class $cls: $(printf "%s\n" "$msg" | head -c 600)"
fi
if grep -q 'Kernel panic - not syncing: tlblab test: panic at boot' "$TMP/console.log"; then
	pass "the serial console has the panic that sent the guest back"
else
	fail "the serial console has the panic" "$(grep -c 'Linux version' "$TMP/console.log") boots in console.log"
fi
machine_good "after the panic"
