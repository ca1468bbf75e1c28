#!/bin/sh
# What tlblabd's children inherit: nothing they were not given (issue 37).
# The daemon starts with what an operator's shell may leave it, a
# descriptor that is not close-on-exec (7) and GIT_*, SSH_* and
# TLBLAB_TOKEN in its environment, and it holds an SSH session to a lab
# machine (a job whose run sleeps there, on an sshd on loopback). Then:
# - a build runs kernels/build/build.sh (through a wrapper that notes what it got)
#   on a tiny git tree whose every make target lists, from inside the
#   build's sandbox, its descriptors and its environment;
# - a boot runs QEMU on a 4 KiB test kernel that halts, whose
#   /proc/PID/fd and environ are read from here.
# Each has 0, 1 and 2 only (QEMU: and what it opens itself, none of the
# daemon's), and a minimal environment without the operator's variables;
# build.sh still gets its knob TLBLAB_MIN_FREE_MB from the daemon's.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/sshd.sh"
. "$TOP/tests/daemon.sh"
trap 'daemon_cleanup; sshd_cleanup; rm -rf "$TMP"' EXIT

daemon_test 25000
for tool in bwrap qemu-system-x86_64 git make gcc; do
	if ! command -v $tool >/dev/null 2>&1; then
		skip "the daemon's children inherit nothing" "$tool is not installed"
		exit 0
	fi
done
# build.sh's sandbox user (tlblab-build, when root) reaches the checkout
chmod 711 "$TMP"

# ---- the parts -----------------------------------------------------------

qemu_test_kernel "$TMP/quiet.img" quiet
mkdir -p "$TMP/vm" "$TMP/builder" "$TMP/ccache" "$TMP/guest"
kernels_stub "$TMP/kernels"
: >"$TMP/guest/initramfs.cpio" >"$TMP/guest/lab_key" >"$TMP/guest/known_hosts"
echo real >"$TMP/build-mode"
# build.sh: notes its environment and descriptors, then runs the real one,
# or (build-mode fake) makes the test kernel a build at once
cat >"$TMP/kernels/build/build.sh" <<EOF
#!/bin/sh
env | sort >"$TMP/build-env"
ls -l /proc/\$\$/fd | awk 'NF >= 11 { print \$9, \$11 }' >"$TMP/build-fds"
[ "\$(cat "$TMP/build-mode")" = real ] && exec sh "$TOP/kernels/build/build.sh" "\$@"
$(fake_build_image "$TMP/quiet.img")
EOF

# the tree: every make target says what it has, from inside the sandbox.
# ls lists its own descriptors (all it inherited, and the directory it
# reads, dropped here): listing the recipe shell's raced with the shell's
# own end of the `ls | sed` pipe, which it may still hold while ls reads
# (a 3 -> pipe seen once in make test's busy guest lane, on d39b151)
git init -q "$TMP/tree"
cat >"$TMP/tree/Makefile" <<'EOF'
.DEFAULT:
	@echo "tlblab-canary: make $@ in the sandbox"; \
	ls -l /proc/self/fd | sed -n '\|-> /proc/[0-9]*/fd$$|d; s/^.* \([0-9][0-9]*\) -> \(.*\)$$/tlblab-canary fd \1 \2/p'; \
	env | sed 's/^/tlblab-canary env /'; \
	exit 1
EOF
git -C "$TMP/tree" add Makefile &&
	git -C "$TMP/tree" -c user.name=t -c user.email=t@t commit -q -m base &&
	git -C "$TMP/tree" tag v1 || { fail "a git tree" "git failed"; exit 0; }

sshd_keys "$TMP/keys" || { fail "ssh keys" "ssh-keygen failed"; exit 0; }
P1=$(sshd_port 1)
sshd_start s1 127.0.0.8 "$P1" || { fail "sshd s1" "did not start"; exit 0; }

{
	lab_yaml "$TMP/data" "tokens: [$TOKEN]" "quiet_host: false" "workers: 4"
	echo machines:
	cat <<EOM
  - name: s1
    transport: ssh
    host: 127.0.0.8
    port: $P1
    user: root
    identity: $SSHD_IDENTITY
    known_hosts: $SSHD_KNOWN_HOSTS
    boot: none
    agent_path: $TMP/agent-s1/tlblab-agent
EOM
	lab_yaml_qemu_machine "$TMP/guest" 10029 "accel: tcg" "pin_vcpus: off"
	LAB_TREE=t LAB_TREE_URL=$TMP/tree lab_yaml_builder "transport: local" "jobs: 1" "workdir: $TMP/builder" \
		"ccache: $TMP/ccache"
	echo suites:
	lab_yaml_mprotect_suite quick "" "duration: 0.2" "iterations: 1"
	# its own hold suite: the test finds the run's sleep by its 897
	cat <<EOB
  - name: hold
    timeout: 1200
    workloads:
      - workload: exec
        command: [sleep, "897"]
        parser: none
        iterations: 1
        warmup: 0
EOB
} >"$TMP/lab.yaml"

# what an operator's shell may leave the daemon
echo canary >"$TMP/canary-fd"
exec 7<"$TMP/canary-fd"
GIT_CANARY=t0038 GIT_SSH_COMMAND=/tmp/t0038-ssh SSH_AUTH_SOCK=/tmp/t0038-agent TLBLAB_TOKEN=t0038-operator-secret
TLBLAB_MIN_FREE_MB=1
export GIT_CANARY GIT_SSH_COMMAND SSH_AUTH_SOCK TLBLAB_TOKEN TLBLAB_MIN_FREE_MB
DAEMON_ARGS="-k $TMP/kernels"
DAEMON_AGENT=$AGENT
daemon_start "$TMP/lab.yaml"
started=$?
unset GIT_CANARY GIT_SSH_COMMAND SSH_AUTH_SOCK TLBLAB_TOKEN TLBLAB_MIN_FREE_MB
exec 7<&-
[ $started = 0 ] || { fail "tlblabd starts" "$(tail -n 5 "$DAEMON_LOG")"; exit 0; }

# leaks LIST: the lines of LIST ("FD TARGET") that are the daemon's: its
# canary descriptor, or a socket the daemon holds too
daemon_sockets() {
	ls -l "/proc/$DAEMON_PID/fd" | sed -n 's/.*-> \(socket:\[[0-9]*\]\)$/\1/p' | sort -u
}
leaks() {
	daemon_sockets >"$TMP/daemon-sockets"
	grep -F -e "$TMP/canary-fd" "$1"
	awk 'NR == FNR { s[$1] = 1; next } ($2 in s)' "$TMP/daemon-sockets" "$1"
}
oneline() { tr '\n' ';' <"$1" | cut -c1-600; }
stage_id() { api GET "/jobs/$1" | jq_py "J['job']['stages'][$2]['id']"; }

# ---- 1. an SSH session the daemon holds ------------------------------------

hold=$(api POST /jobs '{"suite":"hold","machines":["s1"]}' "$TOKEN" | jq_py 'J["job"]["id"]')
if wait_until 60 pgrep -f '^sleep 897$'; then
	pass "a job holds an SSH session of the daemon's to s1 (its run sleeps there)"
else
	fail "a job holds an SSH session of the daemon's to s1" "$(api GET "/jobs/$hold" | head -c 400)"
fi
daemon_sockets >"$TMP/sockets-held"
grep -q . "$TMP/sockets-held" || fail "the daemon holds sockets" "none in /proc/$DAEMON_PID/fd"

# ---- 2. the build: build.sh and its sandbox --------------------------------

job=$(api POST /jobs '{"suite":"quick","tree":"t","base":"v1","machines":["vm1"]}' "$TOKEN" |
	jq_py 'J["job"]["id"]')
build_log() { api GET "/jobs/$job/stages/$(stage_id "$job" 0)/log"; }
canary_logged() { build_log | grep -q 'tlblab-canary fd'; }
if wait_until 120 canary_logged; then
	build_log >"$TMP/build.log"
	pass "the build's sandbox listed what it has ($(grep -c 'tlblab-canary' "$TMP/build.log") lines in the build log)"
else
	fail "the build's sandbox lists what it has" "$(build_log | tail -n 8 | tr '\n' ';')"
fi
api POST "/jobs/$job/cancel" '' "$TOKEN" >/dev/null
job_wait "$job" "cancelled failed done" 60 >/dev/null

sed -n 's/^tlblab-canary fd //p' "$TMP/build.log" | sort -u >"$TMP/sandbox-fds"
sed -n 's/^tlblab-canary env //p' "$TMP/build.log" | sort -u >"$TMP/sandbox-env"
if [ "$(cut -d' ' -f1 "$TMP/sandbox-fds" | sort -n | tr '\n' ' ')" = "0 1 2 " ]; then
	pass "inside the build's sandbox: descriptors 0, 1 and 2 only ($(oneline "$TMP/sandbox-fds"))"
else
	fail "inside the build's sandbox: descriptors 0, 1 and 2 only" "$(oneline "$TMP/sandbox-fds")"
fi
if [ -s "$TMP/sandbox-env" ] && ! grep -Eq '^(GIT_|SSH_|TLBLAB_TOKEN=)|t0038' "$TMP/sandbox-env"; then
	pass "inside the build's sandbox: none of the operator's GIT_*, SSH_*, TLBLAB_TOKEN"
else
	fail "inside the build's sandbox: none of the operator's GIT_*, SSH_*, TLBLAB_TOKEN" "$(oneline "$TMP/sandbox-env")"
fi
# (and the script itself, which sh keeps open to read it)
if [ "$(grep -v ' /.*/tlblab/scripts/build-[0-9a-f]*/build\.sh$' "$TMP/build-fds" | cut -d' ' -f1 | sort -n | tr '\n' ' ')" = "0 1 2 " ]; then
	pass "build.sh gets descriptors 0, 1 and 2 only ($(oneline "$TMP/build-fds"))"
else
	fail "build.sh gets descriptors 0, 1 and 2 only" "$(oneline "$TMP/build-fds"); the daemon's: $(leaks "$TMP/build-fds" | tr '\n' ';')"
fi
if ! grep -Eq '^(GIT_|SSH_|TLBLAB_TOKEN=)|t0038' "$TMP/build-env" &&
	grep -qx 'PATH=/usr/sbin:/usr/bin:/sbin:/bin' "$TMP/build-env" && grep -qx 'TLBLAB_MIN_FREE_MB=1' "$TMP/build-env"; then
	pass "build.sh's environment is minimal, with its knob TLBLAB_MIN_FREE_MB ($(oneline "$TMP/build-env"))"
else
	fail "build.sh's environment is minimal, with its knob TLBLAB_MIN_FREE_MB" "$(oneline "$TMP/build-env")"
fi

# ---- 3. QEMU ---------------------------------------------------------------

echo fake >"$TMP/build-mode"
job=$(api POST /jobs '{"suite":"quick","tree":"t","base":"v1","machines":["vm1"]}' "$TOKEN" |
	jq_py 'J["job"]["id"]')
qemu_pid() {
	_p=$(cat "$TMP/vm/vm1/qemu.pid" 2>/dev/null) && [ -n "$_p" ] &&
		grep -q 'tlblab-test: a kernel' "$TMP/vm/vm1/console.log" 2>/dev/null && echo "$_p"
}
if wait_until 120 qemu_pid; then
	pid=$(qemu_pid)
	ls -l "/proc/$pid/fd" | awk 'NF >= 11 { print $9, $11 }' >"$TMP/qemu-fds"
	tr '\0' '\n' <"/proc/$pid/environ" | sort >"$TMP/qemu-env"
	pass "the daemon boots the test kernel in QEMU (pid $pid)"
	if [ -s "$TMP/qemu-fds" ] && [ -z "$(leaks "$TMP/qemu-fds")" ] &&
		grep -qx '0 /dev/null' "$TMP/qemu-fds" && grep -qx '1 /dev/null' "$TMP/qemu-fds"; then
		pass "QEMU holds none of the daemon's descriptors ($(oneline "$TMP/qemu-fds"))"
	else
		fail "QEMU holds none of the daemon's descriptors" "the daemon's: $(leaks "$TMP/qemu-fds" | tr '\n' ';'); all: $(oneline "$TMP/qemu-fds")"
	fi
	if [ -s "$TMP/qemu-env" ] && ! grep -Eq '^(GIT_|SSH_|TLBLAB_)|t0038' "$TMP/qemu-env"; then
		pass "QEMU's environment has none of the operator's variables ($(oneline "$TMP/qemu-env"))"
	else
		fail "QEMU's environment has none of the operator's variables" "$(oneline "$TMP/qemu-env")"
	fi
else
	fail "the daemon boots the test kernel in QEMU" "$(api GET "/jobs/$job" | head -c 600)"
fi
api POST "/jobs/$job/cancel" '' "$TOKEN" >/dev/null
api POST "/jobs/$hold/cancel" '' "$TOKEN" >/dev/null
job_wait "$job" "cancelled failed done" 60 >/dev/null
job_wait "$hold" "cancelled failed done" 60 >/dev/null
exit 0
