# Shared by the tests whose lab machine is a QEMU guest started by the test
# itself and reached over SSH (t0051 kexec, t0052 reboot, t0053 workloads,
# bench b0006), or booted by the daemon (t0050, t0054). Source after lib.sh
# (and daemon.sh for the job helpers and the lab.yaml writers); set
# GUEST_PORT, CLIENT and MACHINE first (guest_lab or qemu_guest does).
# GUEST_DIR, when set, is the directory of the guests' initramfs and keys
# (default $CACHE/guest).

# guest_lab DAEMON_PORT_BASE GUEST_PORT MACHINE: for a test whose daemon
# drives the guest: daemon_test's TOKEN, DAEMON_PORT and URL, GUEST_PORT and
# MACHINE, and CLIENT, the client, set to reach that daemon with that token
guest_lab() {
	daemon_test "$1"
	GUEST_PORT=$2 MACHINE=$3 CLIENT=$BUILD/tlblab
	export TLBLAB_SERVER="$URL" TLBLAB_TOKEN="$TOKEN"
}

# qemu_guest PORT MACHINE: the test's own guest booted by qemu-boot, SSH on
# PORT, named MACHINE: makes its initramfs and keys in GUEST_DIR, $TMP/guest
# (with the agent TLBLAB_GUEST_AGENT, default $GUEST_AGENT: the shared one
# of $CACHE is neither needed nor rewritten), and qemu-boot
# (qemu_boot_build); when either fails, returns 1, what failed in
# $TMP/guest.why
qemu_guest() {
	GUEST_PORT=$1 MACHINE=$2 GUEST_DIR=$TMP/guest
	if ! sh "$TOP/kernels/mkinitramfs.sh" "$GUEST_DIR" "${TLBLAB_GUEST_AGENT:-$GUEST_AGENT}" >"$TMP/initramfs.log" 2>&1; then
		echo "the guest initramfs: $(tail -n 3 "$TMP/initramfs.log")" >"$TMP/guest.why"
		return 1
	fi
	if ! qemu_boot_build; then
		echo "tests/tools/qemu-boot: $(tail -n 5 "$TMP/qemu-boot.cc")" >"$TMP/guest.why"
		return 1
	fi
}

# guest ARGS...: runs a command on the guest as root
guest() {
	ssh -i "${GUEST_DIR:-$CACHE/guest}/lab_key" -o UserKnownHostsFile="${GUEST_DIR:-$CACHE/guest}/known_hosts" \
		-o StrictHostKeyChecking=yes -o BatchMode=yes -o ConnectTimeout=10 -p "$GUEST_PORT" root@127.0.0.1 "$@"
}

# qemu_machine_yaml: a lab config whose one machine, $MACHINE, is a QEMU
# guest like configs/local.yaml's qemu1 (2 vCPUs, 1024 MiB, accel auto), with
# the initramfs and keys of ${GUEST_DIR:-$CACHE/guest}, SSH on $GUEST_PORT and
# its VM's files in $TMP/vm/$MACHINE (and QEMU_APPEND on the kernel's
# command line when set)
qemu_machine_yaml() {
	_g=${GUEST_DIR:-$CACHE/guest}
	cat <<EOC
lab:
  data_dir: $TMP/data
machines:
  - name: $MACHINE
    transport: local
    boot: qemu
    arch: x86_64
    cpus: 2
    workdir: $TMP/vm
    qemu:
      memory: 1024
      accel: auto
      initrd: $_g/initramfs.cpio
      guest_host: 127.0.0.1
      ssh_port: $GUEST_PORT
      identity: $_g/lab_key
      known_hosts: $_g/known_hosts
${QEMU_APPEND:+      append: "$QEMU_APPEND"}
EOC
}

# qemu_boot_build: makes $BUILD/tests/qemu-boot (tests/tools/qemu-boot.c
# with the daemon's modules: it boots a machine with the lab's own boot code)
# unless make test, check or bench did; QEMU_BOOT is its path
qemu_boot_build() {
	QEMU_BOOT=$BUILD/tests/qemu-boot
	make --no-print-directory -C "$TOP" BUILD="${BUILD#"$TOP"/}" "${QEMU_BOOT#"$TOP"/}" >"$TMP/qemu-boot.cc" 2>&1
}

# qemu_boot_start CONFIG [auto|on|off]: starts qemu-boot for $MACHINE
# of CONFIG (pinning as the config says, or as given), commands from fd 8
qemu_boot_start() {
	rm -f "$TMP/qemu-boot.in"
	mkfifo "$TMP/qemu-boot.in"
	"$QEMU_BOOT" "$1" "$MACHINE" ${2:+"$2"} <"$TMP/qemu-boot.in" >"$TMP/qemu-boot.out" 2>&1 &
	QEMU_BOOT_PID=$!
	exec 8>"$TMP/qemu-boot.in"
}

# qemu_boot_cmd COMMAND: sends it to qemu-boot and waits for its answer (a
# line "ready", "failed: ..." or "stopped"); what it printed meanwhile goes
# to $TMP/boot.notes. Returns 0 when the answer is "ready" or "stopped".
qemu_boot_cmd() {
	_before=$(wc -l <"$TMP/qemu-boot.out")
	echo "$1" >&8
	_i=0
	until sed -n "$((_before + 1)),\$p" "$TMP/qemu-boot.out" | grep -Eq '^(ready|failed|stopped)'; do
		_i=$((_i + 1))
		if [ $_i -gt 6000 ] || ! kill -0 "$QEMU_BOOT_PID" 2>/dev/null; then
			echo "failed: qemu-boot did not answer '$1'" >>"$TMP/qemu-boot.out"
			break
		fi
		# fine enough for b0013 to time a boot by it
		sleep 0.1
	done
	sed -n "$((_before + 1)),\$p" "$TMP/qemu-boot.out" >"$TMP/boot.notes"
	grep -Eqx 'ready|stopped' "$TMP/boot.notes"
}

# qemu_boot_end: stops the VM, if any, and qemu-boot (at the end of its
# input); the VM is killed by its pidfile if qemu-boot could not
qemu_boot_end() {
	[ -n "${QEMU_BOOT_PID:-}" ] || return 0
	exec 8>&-
	wait "$QEMU_BOOT_PID" 2>/dev/null
	QEMU_BOOT_PID=
	[ -s "$TMP/vm/$MACHINE/qemu.pid" ] && pkill -F "$TMP/vm/$MACHINE/qemu.pid" qemu-system 2>/dev/null
	return 0
}

# guest_prepare FILE: imports the tree and builds the initramfs; fails the
# test unless the initramfs has FILE (a path inside it)
guest_prepare() {
	if ! sh "$TOP/scripts/lab-dirs.sh" "$CACHE" >"$TMP/lab-dirs.out" 2>&1; then
		fail "the lab's directories" "$(cat "$TMP/lab-dirs.out")"
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
	if ! cpio -t <"$CACHE/guest/initramfs.cpio" 2>/dev/null | grep -qx "$1"; then
		fail "the guest initramfs has $1" "apt-get install what provides it, then kernels/mkinitramfs.sh"
		exit 0
	fi
}

# lab_kernel CONFIG_LINE...: prints the bzImage of a lab kernel of the base
# v6.1-debian, unpatched, whose config has every line given (one built
# before by t0040 or a test's daemon, or the base kernel built here the way
# t0040 does: as the lab's user, in its directories)
lab_kernel() {
	_base=$(git -C "$CACHE/linux" rev-parse -q --verify 'v6.1-debian^{commit}' 2>/dev/null)
	for f in "$CACHE"/tlblab/out/*/bzImage; do
		[ -f "$f" ] && [ -n "$_base" ] && grep -q "\"commit\": \"$_base\"" "$(dirname "$f")/meta.json" 2>/dev/null ||
			continue
		found=$f
		for opt in "$@"; do
			grep -qx "$opt" "$(dirname "$f")/config" 2>/dev/null || found=
		done
		[ -n "$found" ] && { echo "$found"; return 0; }
	done
	if ! as_lab sh "$TOP/kernels/build/build.sh" --tree "$CACHE/linux" --work "$CACHE/tlblab/work-linux" --out "$CACHE/tlblab/out" \
		--config-base tinyconfig --fragment "$TOP/kernels/fragments/lab-required.config" \
		--fragment "$TOP/kernels/fragments/qemu-x86_64.config" --ref v6.1-debian >"$TMP/build.log" 2>&1; then
		return 1
	fi
	echo "$(sed -n 's/^TLBLAB dir //p' "$TMP/build.log" | head -n 1)/bzImage"
}

# guest_kernel WHAT CONFIG_LINE...: sets kernel to lab_kernel's bzImage;
# when there is none the test fails ("WHAT is built") and ends
guest_kernel() {
	_what=$1
	shift
	if ! kernel=$(lab_kernel "$@"); then
		fail "$_what is built" "$(tail -n 5 "$TMP/build.log")"
		exit 0
	fi
}

# build_host BZIMAGE: the build's host tag (b-...), as /proc/version shows it
build_host() {
	sed -n 's/.*"build_host": "\(b-[0-9a-f]*\)".*/\1/p' "$(dirname "$1")/meta.json"
}

# guest_start QEMU_ARG...: starts the test's own guest (QEMU under TCG, 2
# vCPUs, 1024 MiB, SSH forwarded from $GUEST_PORT, the serial console in
# $TMP/console.log) with the given boot arguments, and waits until it says
# it is ready; QEMU_PID is its pid (guest_stop). When it does not start or
# get ready, the test fails and ends, saying how: QEMU runs as this
# shell's child, not daemonized, so that a QEMU that ends early leaves its
# exit status (128 + the signal's number when a signal ended it) and its
# own messages ($TMP/qemu.out) to report. (On d2c75f7 t0052's daemonized
# QEMU was gone 1 s into the kernel's PCI set-up, and nothing said why.)
guest_start() {
	qemu-system-x86_64 -machine q35 -accel tcg,thread=multi -cpu max -smp 2 -m 1024 "$@" \
		-netdev "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:$GUEST_PORT-:22" -device virtio-net-pci,netdev=n0 \
		-serial "file:$TMP/console.log" -display none </dev/null >"$TMP/qemu.out" 2>&1 &
	QEMU_PID=$!
	_i=0
	until grep -q 'tlblab-guest: ready' "$TMP/console.log" 2>/dev/null; do
		if ! kill -0 "$QEMU_PID" 2>/dev/null; then
			wait "$QEMU_PID"
			_st=$?
			QEMU_PID=
			fail "the guest boots" "QEMU ended with exit status $_st after some $((_i / 4)) s: $(tail -n 5 "$TMP/qemu.out"); its console: $(tail -n 5 "$TMP/console.log" 2>/dev/null)"
			exit 0
		fi
		_i=$((_i + 1))
		if [ $_i -gt 720 ]; then
			fail "the guest boots" "not ready after 180 s; its console: $(tail -n 5 "$TMP/console.log" 2>/dev/null)"
			exit 0
		fi
		sleep 0.25
	done
}

# guest_stop: kills the guest guest_start started, if any (for the EXIT trap)
guest_stop() {
	[ -n "${QEMU_PID:-}" ] && kill "$QEMU_PID" 2>/dev/null
	return 0
}

# lab_qemu_head: the lab section and a machines section with one 2-vCPU
# QEMU machine vm1 booted by the daemon (for $DAEMON_PORT, $TOKEN, $GUEST_PORT);
# extra arguments are more qemu keys, and an "accel: X" among them replaces
# the default "accel: auto"
lab_qemu_head() {
	lab_yaml "$TMP/data" "tokens: [$TOKEN]" "stage_timeout: 3600"
	echo machines:
	case " $* " in
	*" accel:"*) lab_yaml_qemu_machine "$CACHE/guest" "$GUEST_PORT" "memory: 1024" "$@" ;;
	*) lab_yaml_qemu_machine "$CACHE/guest" "$GUEST_PORT" "memory: 1024" "accel: auto" "$@" ;;
	esac
}

# lab_ssh_guest_head BOOT: the lab section and a machines section with one
# machine, $MACHINE, the guest reached over SSH on $GUEST_PORT and booted by
# the method BOOT (for $DAEMON_PORT, $TOKEN); the caller appends the rest of
# the machine's keys
lab_ssh_guest_head() {
	lab_yaml "$TMP/data" "tokens: [$TOKEN]" "stage_timeout: 1200"
	cat <<EOC
machines:
  - name: $MACHINE
    transport: ssh
    host: 127.0.0.1
    port: $GUEST_PORT
    user: root
    identity: $CACHE/guest/lab_key
    known_hosts: $CACHE/guest/known_hosts
    boot: $1
EOC
}

# lab_tail: the builders, trees and suites sections of the guest tests'
# lab.yaml whose subject is how a machine boots (t0051, t0052): the suite
# quick is one window of mprotect, as much as shows that each boot ran
lab_tail() {
	lab_guest_builder
	lab_quick_suite short
}

# lab_guest_builder: the builders and trees sections: the local builder on
# the warm tree of $CACHE, the tree linux with the guests' fragments (the
# qemu one of the job's arch)
lab_guest_builder() {
	cat <<EOC
builders:
  - name: local
    transport: local
    jobs: 2
    workdir: $CACHE
trees:
  - name: linux
    url: $CACHE/linux
    builder: local
    fragments: [$TOP/kernels/fragments/lab-required.config, "$TOP/kernels/fragments/qemu-{arch}.config"]
EOC
}

# lab_quick_suite [short]: the suites section with one suite, quick
# (mprotect, two modes, 2 iterations of 1 s; short: threads, 1 iteration)
lab_quick_suite() {
	if [ "${1:-}" = short ]; then
		set -- threads 1
	else
		set -- "[threads, processes]" 2
	fi
	cat <<EOC
suites:
  - name: quick
    timeout: 600
    workloads:
      - workload: mprotect
        mode: $1
        workers: 2
        duration: 1
        iterations: $2
EOC
}

# submit PATCHFILE: an A/B job of the patch against v6.1-debian, one boot
# per side; prints the job id
submit() {
	"$CLIENT" submit --json --suite quick --tree linux --base v6.1-debian --patch "$1" --boots 1 \
		--submitter "$(basename "$0" .sh)" | jq_py 'J["job"]["id"]'
}

# machine_good WHEN: $MACHINE is good in /api/v1/machines
machine_good() {
	h=$(api GET /machines | jq_py "[m['health'] for m in J['machines'] if m['name'] == '$MACHINE'][0]")
	if [ "$h" = good ]; then
		pass "$1: $MACHINE is good"
	else
		fail "$1: $MACHINE is good" "health $h: $(api GET /machines | head -c 400)"
	fi
}

# expect_fallback JOB GOOD_HOST: the job failed with class boot, the machine
# having come back on the kernel built as GOOD_HOST
expect_fallback() {
	_t0=$(date +%s)
	_state=$(job_wait "$1" "done failed cancelled" 1500)
	_job=$(api GET "/jobs/$1")
	_cls=$(printf "%s\n" "$_job" | jq_py '(J["job"]["error"] or {}).get("class")')
	_msg=$(printf "%s\n" "$_job" | jq_py '(J["job"]["error"] or {}).get("message")')
	if [ "$_state" = failed ] && [ "$_cls" = boot ] && printf "%s\n" "$_msg" | grep -q 'came back on another kernel' &&
		printf "%s\n" "$_msg" | grep -q "tlblab@$2)"; then
		pass "a kernel that panics at boot: class boot in $(($(date +%s) - _t0)) s: back on the first kernel"
	else
		fail "a kernel that panics at boot" "state $_state, class $_cls: $(printf "%s\n" "$_msg" | head -c 600)"
	fi
}

# job_done NAME PATCHFILE: an A/B job of the patch (submit), which must end
# done: passes "NAME is done in N s", else shows its state, its error and the
# end of the guest's console; sets id
job_done() {
	_t0=$(date +%s)
	id=$(submit "$2")
	_state=$(job_wait "$id" "done failed cancelled" 1500)
	if [ "$_state" = done ]; then
		pass "$1 is done in $(($(date +%s) - _t0)) s"
	else
		fail "$1 is done" "$_state: $(api GET "/jobs/$id" | jq_py 'J["job"]["error"]'); console: $(tail -n 12 "$TMP/console.log" 2>/dev/null)"
	fi
}

# demo_job WHAT GUEST_COMMAND: an A/B job of the demo patch, both sides
# booted on $MACHINE; sets id and leaves $TMP/job.json, $TMP/runs.json and
# what GUEST_COMMAND printed on the guest afterwards in $TMP/now.txt
demo_job() {
	job_done "A/B job with the demo patch on $1" "$TOP/kernels/patches/0001-x86-mm-tlb-flush-every-online-cpu.patch"
	api GET "/jobs/$id" >"$TMP/job.json"
	api GET "/jobs/$id/runs" >"$TMP/runs.json"
	guest "$2" >"$TMP/now.txt" 2>&1
}

# console_boots WHAT PATTERN: the serial console of the test's own guest
# shows the demo job's two boots: PATTERN (grep) at least twice, and at
# least 3 kernels (the first one's and each side's 'Linux version' line)
console_boots() {
	_n=$(grep -c "$2" "$TMP/console.log")
	_nlinux=$(grep -c 'Linux version' "$TMP/console.log")
	if [ "$_nlinux" -ge 3 ] && [ "$_n" -ge 2 ]; then
		pass "the serial console shows $1 ($_n times '$2', $_nlinux kernels in all)"
	else
		fail "the serial console shows $1" "$_n times '$2', $_nlinux 'Linux version' lines"
	fi
}

# boot_log_has WHAT PATTERN...: the first boot stage of job $id logged every
# pattern (grep)
boot_log_has() {
	_what=$1
	shift
	_stage=$(api GET "/jobs/$id" | jq_py '[g["id"] for g in J["job"]["stages"] if g["kind"] == "boot"][0]')
	_log=$(api GET "/jobs/$id/stages/$_stage/log")
	for _p in "$@"; do
		if ! printf '%s\n' "$_log" | grep -q "$_p"; then
			fail "the boot log has $_what" "no '$_p' in: $(printf '%s\n' "$_log" | head -c 600)"
			return
		fi
	done
	pass "the boot log has $_what"
}
