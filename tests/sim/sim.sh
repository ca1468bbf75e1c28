# The simulated lab for the shell tests and benches (docs/scale.md):
# sourced after tests/daemon.sh (TOP, BUILD, DAEMON_PORT set). It points
# the daemon helpers at build/tlblabd-sim (DAEMON_BIN, unless set) and the simulation
# at its fixtures (TLBLAB_SIM_TIMES, TLBLAB_SIM_REPLAY; TLBLAB_SIM_SCALE
# stays the caller's, 0.01 when unset), and gives:
#   sim_lab_yaml DATA_DIR MACHINES BUILDERS [LAB_KEY: VALUE]...
#       a lab.yaml of MACHINES machines s1..sN (boot and transport sim)
#       and BUILDERS builders b1..bN, tree linux (on b1) and, when
#       BUILDERS > 1, linux2..linuxN (one per builder: a tree has one
#       builder), suite demo (configs/local.yaml's, the recorded run's)
#   sim_patch N   the text of job N's patch (a one-line diff, its own)
#   sim_ab_body N [KEY: VALUE JSON]...   the body of an A/B job of suite
#       demo on tree linux{N mod BUILDERS}, with its own patch
# shellcheck shell=sh

DAEMON_BIN=${DAEMON_BIN:-$BUILD/tlblabd-sim}
TLBLAB_SIM_TIMES=$TOP/tests/fixtures/sim/stage-times.json
TLBLAB_SIM_REPLAY=$TOP/tests/fixtures/sim/agent-demo.jsonl
TLBLAB_SIM_SCALE=${TLBLAB_SIM_SCALE:-0.01}
export TLBLAB_SIM_TIMES TLBLAB_SIM_REPLAY TLBLAB_SIM_SCALE
SIM_BUILDERS=1

sim_lab_yaml() {
	_data=$1 _nm=$2 _nb=$3
	shift 3
	SIM_BUILDERS=$_nb
	lab_yaml "$_data" "$@"
	echo machines:
	_i=1
	while [ $_i -le "$_nm" ]; do
		printf '  - name: s%d\n    transport: sim\n    host: s%d\n    boot: sim\n    cpus: 2\n' $_i $_i
		_i=$((_i + 1))
	done
	echo builders:
	_i=1
	while [ $_i -le "$_nb" ]; do
		printf '  - name: b%d\n    transport: sim\n    host: b%d\n    workdir: /nonexistent/sim-b%d\n' $_i $_i $_i
		_i=$((_i + 1))
	done
	echo trees:
	_i=1
	while [ $_i -le "$_nb" ]; do
		printf '  - name: linux%s\n    url: /nonexistent/sim-tree\n    builder: b%d\n' \
			"$([ $_i = 1 ] || echo $_i)" $_i
		_i=$((_i + 1))
	done
	cat <<'EOC'
suites:
  - name: demo
    timeout: 600
    workloads:
      - workload: mprotect
        mode: [processes, threads]
        workers: 2
        duration: 2
        iterations: 3
        monitors: [interrupts, vmstat, procstat]
EOC
}

sim_patch() {
	printf -- '--- a/mm/mprotect.c\n+++ b/mm/mprotect.c\n@@ -1,1 +1,2 @@\n /* mprotect */\n+/* sim job %s */\n' "$1"
}

sim_ab_body() {
	_n=$1
	shift
	_t=$((_n % SIM_BUILDERS + 1))
	[ $_t = 1 ] && _t=
	$PY -c 'import json, sys
body = {"suite": "demo", "tree": "linux" + sys.argv[1], "base": "v6.1", "patch": sys.stdin.read()}
for kv in sys.argv[2:]:
    k, v = kv.split(": ", 1)
    body[k] = json.loads(v)
print(json.dumps(body))' "$_t" "$@" <<EOF
$(sim_patch "$_n")
EOF
}
