#!/bin/sh
# QEMU runs the submitter's kernel confined (issue 37, daemon/stages/
# boot_qemu.c): under QEMU's own seccomp filter (-sandbox) and with
# no_new_privs, in a bubblewrap sandbox that shows it neither the daemon's
# data_dir (store, patches, token file) nor the guests' SSH identity, with
# its files capped by lab.qemu_file_max. A kernel that writes its console
# past the cap fails its boot as the kernel's (class boot), with a message
# naming the file and the cap; a QEMU that cannot start in its sandbox (an
# old one without -sandbox) fails it as the lab's (class infra), with
# QEMU's own message. The kernels are tests/daemon.sh's 4 KiB test images;
# nothing is built.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
trap 'daemon_cleanup; rm -rf "$TMP"' EXIT

daemon_test 26000
for tool in bwrap qemu-system-x86_64; do
	if ! command -v $tool >/dev/null 2>&1; then
		skip "QEMU runs confined" "$tool is not installed"
		exit 0
	fi
done

CAP=2097152
qemu_test_kernel "$TMP/quiet.img" quiet
qemu_test_kernel "$TMP/spam.img" spam
mkdir -p "$TMP/vm" "$TMP/guest" "$TMP/data"
kernels_stub "$TMP/kernels"
chmod 700 "$TMP/data"
echo "t0039-secret-token-0123456789" >"$TMP/data/token"
echo "t0039-secret-key" >"$TMP/guest/lab_key"
chmod 600 "$TMP/data/token" "$TMP/guest/lab_key"
: >"$TMP/guest/initramfs.cpio" >"$TMP/guest/known_hosts"
cp "$TMP/quiet.img" "$TMP/image.img"
# build.sh: the test kernel $TMP/image.img (a copy of one), as a build, at once
cat >"$TMP/kernels/build/build.sh" <<EOF
#!/bin/sh
$(fake_build_image "$TMP/image.img")
EOF
# a QEMU built without seccomp support: what it says to -sandbox
cat >"$TMP/old-qemu" <<'EOF'
#!/bin/sh
for a; do
	case $a in on,*) echo "qemu-system-x86_64: -sandbox $a: There is no option group 'sandbox'" >&2; exit 1 ;; esac
done
exec qemu-system-x86_64 "$@"
EOF
chmod +x "$TMP/old-qemu"
git init -q "$TMP/tree" && git -C "$TMP/tree" -c user.name=t -c user.email=t@t commit -q --allow-empty -m base &&
	git -C "$TMP/tree" tag v1 || { fail "a git tree" "git failed"; exit 0; }

vm() { # NAME PORT [QEMU KEY: VALUE]...
	printf '  - name: %s\n    transport: local\n    boot: qemu\n    cpus: 1\n    workdir: %s\n' "$1" "$TMP/vm"
	printf '    boot_timeout: 60\n    qemu:\n      accel: tcg\n      pin_vcpus: off\n'
	printf '      initrd: %s\n      ssh_port: %s\n' "$TMP/guest/initramfs.cpio" "$2"
	printf '      identity: %s\n      known_hosts: %s\n' "$TMP/guest/lab_key" "$TMP/guest/known_hosts"
	shift 2
	for _kv; do printf '      %s\n' "$_kv"; done
}
{
	lab_yaml "$TMP/data" "token_file: $TMP/data/token" "quiet_host: false" "qemu_file_max: 2M"
	echo machines:
	vm vm1 10030
	vm vm2 10031 "binary: $TMP/old-qemu"
	LAB_TREE=t LAB_TREE_URL=$TMP/tree lab_yaml_builder "transport: local" "workdir: $TMP/builder"
	echo suites:
	lab_yaml_mprotect_suite quick "" "duration: 0.2" "iterations: 1"
} >"$TMP/lab.yaml"
TOKEN=t0039-secret-token-0123456789
DAEMON_ARGS="-k $TMP/kernels"
daemon_start "$TMP/lab.yaml" || { fail "tlblabd starts" "$(tail -n 5 "$DAEMON_LOG")"; exit 0; }

submit() { # MACHINE: a run job of the test kernel in $TMP/image.img; prints its id
	api POST /jobs "{\"suite\":\"quick\",\"tree\":\"t\",\"base\":\"v1\",\"machines\":[\"$1\"]}" "$TOKEN" |
		jq_py 'J["job"]["id"]'
}
stage() { # JOB INDEX FIELD
	api GET "/jobs/$1" | jq_py "J['job']['stages'][$2]['$3']"
}
cancel() {
	api POST "/jobs/$1/cancel" '' "$TOKEN" >/dev/null
	job_wait "$1" "cancelled failed done" 60 >/dev/null
}

# ---- 1. a running QEMU: its filter, its privileges, what it sees ------------

job=$(submit vm1)
qemu_pid() {
	_p=$(cat "$TMP/vm/vm1/qemu.pid" 2>/dev/null) && [ -n "$_p" ] &&
		grep -q 'tlblab-test: a kernel' "$TMP/vm/vm1/console.log" 2>/dev/null && echo "$_p"
}
if wait_until 60 qemu_pid; then
	pid=$(qemu_pid)
	pass "the daemon boots the test kernel (QEMU pid $pid)"
	st=$(awk '/^(Seccomp|NoNewPrivs):/ { printf "%s %s;", $1, $2 }' "/proc/$pid/status")
	[ "$st" = "NoNewPrivs: 1;Seccomp: 2;" ] &&
		pass "QEMU runs under its seccomp filter with no_new_privs ($st)" ||
		fail "QEMU runs under its seccomp filter with no_new_privs" "$st"
	root=/proc/$pid/root
	seen=
	for p in "$TMP/data" "$TMP/data/token" "$TMP/data/tlblab.db" "$TMP/guest/lab_key" "$TMP/lab.yaml" \
		"$TOP/configs/local.yaml" "$BUILD/tlblabd"; do
		[ -e "$root$p" ] && seen="$seen $p"
	done
	if [ -z "$seen" ] && [ -e "$root$TMP/vm/vm1/console.log" ] && [ -e "$root/usr/bin" ]; then
		pass "QEMU sees its own files, not the daemon's data_dir, token file, store, the guests' key or the lab"
	else
		fail "QEMU sees none of the daemon's data_dir, token file, store, the guests' key, the lab" \
			"it sees:$seen; its console: $([ -e "$root$TMP/vm/vm1/console.log" ] && echo yes || echo no)"
	fi
	if [ "$(readlink "/proc/$pid/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] &&
		[ "$(readlink "/proc/$pid/ns/net")" = "$(readlink /proc/self/ns/net)" ]; then
		pass "QEMU has a pid namespace of its own, and the host's network (for hostfwd)"
	else
		fail "QEMU has a pid namespace of its own, and the host's network" \
			"pid ns $(readlink "/proc/$pid/ns/pid"), net ns $(readlink "/proc/$pid/ns/net")"
	fi
	# written through QEMU's own view of the files
	if ! (: >>"$root$TMP/vm/vm1/bzImage") 2>/dev/null && (: >>"$root$TMP/vm/vm1/console.log") 2>/dev/null; then
		pass "in QEMU's view its kernel is read-only, its console writable"
	else
		fail "in QEMU's view its kernel is read-only, its console writable" "$(ls -l "$root$TMP/vm/vm1" | tr '\n' ';')"
	fi
else
	pid=
	fail "the daemon boots the test kernel" "$(api GET "/jobs/$job" | head -c 600)"
fi
cancel "$job"
gone() { ! kill -0 "$1" 2>/dev/null && [ ! -e "$TMP/vm/vm1/qemu.pid" ]; }
[ -n "$pid" ] && check "a cancelled boot stops its QEMU, and its pidfile goes" wait_until 10 gone "$pid"

# ---- 2. a console past lab.qemu_file_max ---------------------------------------

cp "$TMP/spam.img" "$TMP/image.img"
job=$(submit vm1)
st=$(job_wait "$job" "failed done cancelled" 120)
cls=$(stage "$job" 1 error_class) att=$(stage "$job" 1 attempt) msg=$(stage "$job" 1 error_message)
if [ "$st/$cls/$att" = failed/boot/0 ] && printf '%s\n' "$msg" | grep -qF "$TMP/vm/vm1/console.log" &&
	printf '%s\n' "$msg" | grep -qF "its cap of $CAP bytes" && printf '%s\n' "$msg" | grep -q 'lab.qemu_file_max'; then
	pass "a kernel that writes its console past the cap fails its boot, class boot, not retried: $msg"
else
	fail "a kernel that writes its console past the cap fails its boot, class boot" "$st/$cls/attempt $att: $msg"
fi
size=$(stat -c %s "$TMP/vm/vm1/console.log" 2>/dev/null)
[ "$size" = "$CAP" ] && pass "the console file stopped at the cap ($size bytes)" ||
	fail "the console file stopped at the cap" "$size bytes"

# ---- 3. a QEMU that cannot start in its sandbox ------------------------------

cp "$TMP/quiet.img" "$TMP/image.img"
job=$(submit vm2)
if wait_until 60 grep -q "infra failure.*qemu did not start on vm2.*There is no option group 'sandbox'" "$DAEMON_LOG"; then
	pass "a QEMU without -sandbox fails the boot as the lab's (infra), with its message: $(grep -m1 -o "qemu did not start on vm2.*" "$DAEMON_LOG")"
else
	fail "a QEMU without -sandbox fails the boot as the lab's (infra), with its message" \
		"$(grep 'vm2' "$DAEMON_LOG" | tail -n 3 | tr '\n' ';')"
fi
cancel "$job"
exit 0
