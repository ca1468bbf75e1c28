# Shared by the benches that measure a real tlblabd on a store they fill
# themselves (b0002, b0003, b0005, b0010) or on the embedded lab (b0004,
# b0007, b0009). Source it with PORT_BASE set; it gives TOP, BUILD
# (absolute), CACHE (the embedded lab's: TLBLAB_CACHE or /var/cache/tlblab),
# tmp (removed at exit), port, a lab.yaml in $tmp (one local machine m1, a
# local builder, a tree, suite tlb), the helpers of
# tests/daemon.sh (TMP is tmp, DAEMON_PORT port, the log $DAEMON_LOG), and:
#   start   starts the daemon (serving web/) and waits for it
#   stop    stops it
#   fill COMMAND...   the daemon makes the store, then COMMAND fills it
# $pid is the running daemon's.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac
CACHE=${TLBLAB_CACHE:-/var/cache/tlblab}
tmp=$(mktemp -d)
# the lab's user passes through (the benches on the embedded lab run their
# daemon as that user: embedded_lab)
chmod 711 "$tmp"
LAB_USER=tlblab
pid=
# BENCH_KEEP=1 keeps the bench's store and comparisons (their folder is
# named at the end), to look at the per-boot values behind a figure
cleanup() {
	# the daemon's pid only: a bare wait would also wait for a
	# PostgreSQL reaper (tests/pg.sh), which waits for this shell to end
	[ -n "$pid" ] && { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
	if [ -n "${BENCH_KEEP:-}" ]; then
		echo "bench: kept $tmp (its store: data/tlblab.db; the comparisons: *-cmp.json)"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
port=$((${PORT_BASE:-20000} + $$ % 5000))
TMP=$tmp DAEMON_PORT=$port
. "$TOP/tests/daemon.sh"
{
	lab_yaml "$tmp/data" "tokens: [bench-token-0123456789]"
	echo machines:
	lab_yaml_machine m1
	lab_yaml_builder
	echo suites:
	lab_yaml_mprotect_suite tlb "" "workers: 2"
} >"$tmp/lab.yaml"

start() {
	DAEMON_ARGS="-w $TOP/web" daemon_start "$tmp/lab.yaml" || { echo "bench: the daemon did not start"; exit 1; }
	pid=$DAEMON_PID
}

stop() {
	daemon_stop
	pid=
}

# fill COMMAND...: the daemon makes its store (started, stopped), then
# COMMAND (reading this function's stdin) fills it; the bench ends when it
# fails
fill() {
	start
	stop
	"$@" || { echo "bench: cannot fill the store"; exit 1; }
}

# fresh_patch CACHE OUT: the demo patch to arch/x86/mm/tlb.c plus a comment
# that is new on every call, so the patched kernel really rebuilds
# (incrementally: one file and the link), as a diff in OUT
fresh_patch() {
	rm -rf "$tmp/src"
	git clone -q --shared "$1/linux" "$tmp/src" && (cd "$tmp/src" &&
		git -c advice.detachedHead=false checkout -q v6.1-debian &&
		git -c user.name=bench -c user.email=bench@localhost am -q "$TOP/kernels/patches/0001-x86-mm-tlb-flush-every-online-cpu.patch" &&
		printf '/* tlblab bench %s */\n' "$(date +%s.%N)" >>arch/x86/mm/tlb.c &&
		git diff v6.1-debian >"$2")
}

# lab_cache_ready CACHE: the Debian tree imported and the guest's initramfs
# (with this build's agent) in CACHE, for the benches that boot the
# embedded lab; exits the bench when either cannot be made
lab_cache_ready() {
	sh "$TOP/scripts/lab-dirs.sh" "$1" >/dev/null || exit 1
	sh "$TOP/kernels/import-tree.sh" "$1/linux" >/dev/null || exit 1
	sh "$TOP/kernels/mkinitramfs.sh" "$1/guest" "$BUILD/tlblab-agent" >/dev/null || exit 1
}

# embedded_lab CACHE SSH_PORT[,SSH_PORT2] [LAB_KEY: VALUE...]: the head of
# a lab.yaml like configs/local.yaml (a 2-vCPU QEMU machine vm1 under TCG
# with icount and the instruction plugin; with a second port, vm2 beside it
# as its duet, a host CPU each, as qemu1 and qemu1b are; the local builder
# and the linux tree of CACHE) on $port, for the benches that run real A/B
# jobs; the suites: section follows it. The daemon runs as the lab's user,
# who alone writes in the builder's directories of CACHE (docs/security.md).
embedded_lab() {
	_cache=$1 _ssh=${2%,*} _ssh2=${2#*,}
	shift 2
	daemon_as_lab_user
	lab_yaml "$tmp/data" "tokens: [bench-token-0123456789]" "$@"
	echo machines:
	if [ "$_ssh2" = "$_ssh" ]; then
		lab_yaml_qemu_machine "$_cache/guest" "$_ssh" "accel: icount" "icount_shift: 3"
	else
		lab_yaml_qemu_machine "$_cache/guest" "$_ssh" "accel: icount" "icount_shift: 3" \
			"host_cpu: 0" "duet: vm2"
		LAB_VM_NAME=vm2 lab_yaml_qemu_machine "$_cache/guest" "$_ssh2" "accel: icount" "icount_shift: 3" \
			"host_cpu: 1" "duet: vm1"
	fi
	# LAB_ARM_PORT: the arm64 machine arm1 as well (arm_machine)
	[ -z "${LAB_ARM_PORT:-}" ] || arm_machine "$_cache" "$LAB_ARM_PORT"
	cat <<EOC
builders:
  - name: local
    transport: local
    workdir: $_cache
trees:
  - name: linux
    url: $_cache/linux
    builder: local
    fragments:
      - $TOP/kernels/fragments/lab-required.config
      - $TOP/kernels/fragments/qemu-{arch}.config
EOC
}

# arm_machine CACHE SSH_PORT: a machines: entry arm1, configs/local.yaml's
# qemu-arm1 (arm64 under TCG with icount and the instruction plugin), its
# guest the lab's arm64 initramfs in CACHE/guest-arm64 (arm_cache_ready)
arm_machine() {
	install -d -o "$LAB_USER" -g "$LAB_USER" "$tmp/vm-arm"
	cat <<EOC
  - name: arm1
    transport: local
    boot: qemu
    arch: arm64
    cpus: 2
    workdir: $tmp/vm-arm
    boot_timeout: 300
    qemu:
      memory: 1024
      accel: icount
      initrd: $1/guest-arm64/initramfs.cpio
      ssh_port: $2
      identity: $1/guest-arm64/lab_key
      known_hosts: $1/guest-arm64/known_hosts
EOC
}

# arm_cache_ready CACHE: the aarch64 agent and the arm64 guest's initramfs
# in CACHE (make lab-arm64's steps); exits the bench when either cannot be
# made
arm_cache_ready() {
	make --no-print-directory -C "$TOP" BUILD="${BUILD#"$TOP"/}" ARM64_OUT="$1/arm64" agent-arm64 >/dev/null || exit 1
	sh "$TOP/kernels/mkinitramfs.sh" "$1/guest-arm64" "$BUILD/aarch64/tlblab-agent" --arch arm64 \
		--sysroot "$1/arm64/sysroot" >/dev/null || exit 1
}

# lab_suites: the suites: section of configs/local.yaml, alone (its tracks
# name the lab's machine qemu1, which a bench's lab calls vm1)
lab_suites() {
	awk '/^[a-z_]+:/ { on = ($0 ~ /^suites:/) } on' "$TOP/configs/local.yaml"
}

# comment_patch CACHE OUT: a comment-only change to mm/mprotect.c against
# v6.1-debian, as a diff in OUT: fixed text, so its build is cached from
# run to run; the kernel it builds does what the base does
comment_patch() {
	rm -rf "$tmp/src"
	git clone -q --shared "$1/linux" "$tmp/src" && (cd "$tmp/src" &&
		git -c advice.detachedHead=false checkout -q v6.1-debian &&
		printf '/* tlblab: a comment-only change; the kernel it builds does what the base does */\n' \
			>>mm/mprotect.c &&
		git diff v6.1-debian >"$2")
}

# bench_job NAME PATCH [SUBMIT ARGS...]: an A/B job of suite tlb (or
# BENCH_SUITE) against
# v6.1-debian on the running daemon, waited for; $tmp/NAME-job.json and
# NAME-cmp.json get the job and its comparison, NAME.secs how long it took
bench_job() {
	_name=$1 _patch=$2
	shift 2
	t0=$(date +%s)
	id=$("$BUILD/tlblab" submit --json --suite "${BENCH_SUITE:-tlb}" --tree linux --base v6.1-debian --patch "$_patch" "$@" |
		/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["job"]["id"])') || return 1
	until curl -fs "$TLBLAB_SERVER/api/v1/jobs/$id" | /usr/bin/python3 -c \
		'import json,sys; sys.exit(json.load(sys.stdin)["job"]["state"] not in ("done", "failed", "cancelled"))'; do
		sleep 5
	done
	curl -fs "$TLBLAB_SERVER/api/v1/jobs/$id" >"$tmp/$_name-job.json"
	curl -fs "$TLBLAB_SERVER/api/v1/jobs/$id/comparison" >"$tmp/$_name-cmp.json"
	echo "$(($(date +%s) - t0))" >"$tmp/$_name.secs"
}
