#!/bin/sh
# tlblab-agent by hand: every workload, in every mode configs/local.yaml and
# docs/user-guide.md use, runs a few iterations (each a new workload process, so a
# new address-space layout) and reports a positive score; mremap's layout is
# stressed over worker counts and sizes (the workload checks its two homes
# in /proc/self/maps and the contents of every buffer after each window);
# fault-write's shapes and worker-count edges; the workload runs in a process
# apart from the agent's threads; a workload process that dies is a clean
# error naming the signal; bad input exits 2 naming the field; a workload
# that fails mid-run prints an error line and keeps what it measured before.
. "$(dirname "$0")/../lib.sh"

# run NAME ARGS...: runs the agent into $TMP/NAME.out (JSON lines).
run() {
	_n=$1
	shift
	"$AGENT" run --iterations 1 --warmup 0 "$@" >"$TMP/$_n.out" 2>"$TMP/$_n.err"
}

# positive NAME METRIC: every measured iteration has METRIC > 0, and the run
# ended well.
positive() {
	if pyjson "$TMP/$1.out" "len(by('iteration')) > 0 and all(i['metrics'].get('$2', 0) > 0 for i in by('iteration')) and by('result')[0]['status'] == 'ok' and not by('error')"; then
		pass "$1: $2 > 0"
	else
		fail "$1: $2 > 0" "$(grep -h '"type":"error"' "$TMP/$1.out" | cut -c1-600; tail -c 300 "$TMP/$1.err")"
	fi
}

# iterations NAME N: N measured iterations ran (one per case and iteration).
iterations() {
	if pyjson "$TMP/$1.out" "len([i for i in by('iteration') if not i['warmup']]) == $2"; then
		pass "$1: $2 measured iterations"
	else
		fail "$1: $2 measured iterations" "got $(grep -c '"type":"iteration"' "$TMP/$1.out")"
	fi
}

# window_child APID ITER: waits (at most 60 s) until the agent APID is inside
# iteration ITER's window, then prints its workload process's pid.
window_child() {
	_i=0
	while [ $_i -lt 600 ]; do
		if grep -q "\"iteration\":$2,\"warmup\":[a-z]*,\"window\":true" "$TMP/watch.out" 2>/dev/null; then
			_c=$(pgrep -P "$1" | head -n 1)
			if [ -n "$_c" ]; then
				echo "$_c"
				return 0
			fi
		fi
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# ---- the runs of configs/local.yaml and of docs/user-guide.md ----
run mprotect-threads --workload mprotect --mode threads --workers 2 --duration 0.3 --iterations 3
positive mprotect-threads mprotect.ops_per_sec
iterations mprotect-threads 3
run mprotect-processes --workload mprotect --mode processes --workers 2 --duration 0.3 --iterations 3
positive mprotect-processes mprotect.ops_per_sec
run mprotect-both --workload mprotect --mode threads,processes --workers 2 --duration 0.3 --iterations 2 \
	--monitors interrupts,vmstat,tracepoints,procstat
positive mprotect-both mprotect.ops_per_sec
iterations mprotect-both 4

# a fixed amount of work: 2 workers x 3000 rounds = 12000 mprotect calls,
# the window ending when the last is done, long before the 60 s duration
run mprotect-rounds --workload mprotect --mode processes,threads --workers 2 --rounds 3000 --duration 60 --iterations 2
positive mprotect-rounds mprotect.elapsed_sec
iterations mprotect-rounds 4
if pyjson "$TMP/mprotect-rounds.out" "all(abs(i['metrics']['mprotect.ops_per_sec'] * i['metrics']['mprotect.elapsed_sec'] - 12000) < 12000 * 0.02 and i['metrics']['mprotect.elapsed_sec'] < 30 for i in by('iteration'))"; then
	pass "mprotect-rounds: ops/s x elapsed is the 12000 calls of the rounds, and the window ended with them"
else
	fail "mprotect-rounds: fixed work" "$(grep -h '"type":"iteration"' "$TMP/mprotect-rounds.out" | cut -c1-400)"
fi
run mprotect-short --workload mprotect --workers 2 --rounds 100000000 --duration 0.3
if pyjson "$TMP/mprotect-short.out" "by('error') and 'before every worker did its' in by('error')[0]['message']"; then
	pass "mprotect rounds that do not fit the duration: an error that says so"
else
	fail "mprotect rounds that do not fit the duration" "$(cut -c1-400 "$TMP/mprotect-short.out")"
fi

run mremap-sweep --workload mremap --workers 1,2,4 --size 8M --duration 0.3 --iterations 3
positive mremap-sweep mremap.moves_per_sec
if pyjson "$TMP/mremap-sweep.out" "[i['params']['workers'] for i in by('iteration')] == [1, 1, 1, 2, 2, 2, 4, 4, 4]"; then
	pass "mremap: --workers 1,2,4 runs one case per thread count"
else
	fail "mremap: --workers 1,2,4 runs one case per thread count" "cases: $(grep -c iteration "$TMP/mremap-sweep.out")"
fi

# mremap's layout under stress: many threads (stacks and touch buffers
# mapped around the homes), regions of one page, of a few pages, of whole
# PMDs and of a PMD and a page; every window ends with the homes and
# buffers checked, which fails the run. (With 24 spinning threads on a busy
# 2-CPU host one window may see no move at all, so only the run's total
# must be positive.)
run mremap-stress --workload mremap --workers 1,8,24 --size 4K,12K,2M,8M,10M --duration 0.2 --iterations 2
if pyjson "$TMP/mremap-stress.out" "by('result')[0]['status'] == 'ok' and not by('error') and sum(i['metrics']['mremap.moves_per_sec'] for i in by('iteration')) > 0"; then
	pass "mremap-stress: every window ends with both homes and all buffers intact"
else
	fail "mremap-stress: every window ends with both homes and all buffers intact" \
		"$(grep -h '"type":"error"' "$TMP/mremap-stress.out" | cut -c1-600; tail -c 300 "$TMP/mremap-stress.err")"
fi
iterations mremap-stress 30

run fault-write --workload fault-write --duration 5 --iterations 2
positive fault-write fault-write.total_sec
if pyjson "$TMP/fault-write.out" "all(i['params']['vma'] == 'one' and i['metrics']['fault-write.rounds'] == 4096 and i['metrics']['fault-write.writes_per_sec'] > 0 for i in by('iteration'))"; then
	pass "fault-write: one vma and 4096 rounds by default"
else
	fail "fault-write: one vma and 4096 rounds by default" "$(grep iteration "$TMP/fault-write.out" | head -c 400)"
fi
run fault-write-edges --workload fault-write --vma one,per-round --workers 1,2,3 --rounds 200 --duration 30 --iterations 2
positive fault-write-edges fault-write.total_sec
if pyjson "$TMP/fault-write-edges.out" "len(by('iteration')) == 12 and all(i['metrics']['fault-write.rounds'] == 200 and i['metrics']['fault-write.writes_per_sec'] > 0 and i['duration_s'] < 30 for i in by('iteration'))"; then
	pass "fault-write: --rounds 200 stops after 200 rounds, both shapes, 1 to 3 workers"
else
	fail "fault-write: --rounds 200 stops after 200 rounds, both shapes, 1 to 3 workers" "$(grep iteration "$TMP/fault-write-edges.out" | head -c 400)"
fi
run fault-write-per-round --workload fault-write --vma per-round --workers 2 --duration 0.3 --iterations 2
positive fault-write-per-round fault-write.writes_per_sec
run fault-write-short --workload fault-write --rounds 1000000 --size 4G --duration 0.2
if pyjson "$TMP/fault-write-short.out" "len(by('error')) == 1 and by('error')[0]['message'].startswith('duration: the 0.2 s window ended after ') and 'of 1000000 rounds' in by('error')[0]['message'] and by('result')[0]['status'] == 'failed'"; then
	pass "fault-write: a window too short for its rounds is an error naming duration"
else
	fail "fault-write: a window too short for its rounds is an error naming duration" "$(grep -v sample "$TMP/fault-write-short.out" | tail -c 400)"
fi

run tcp-rr --workload tcp-rr --workers 1,2 --duration 0.3 --iterations 2
positive tcp-rr tcp-rr.trans_per_sec
echo '{"workload":"tcp-rr","workers":[1,2],"request_size":300,"duration":0.3,"iterations":2,"warmup":0}' |
	"$AGENT" run --spec - >"$TMP/tcp-rr-spec.out" 2>"$TMP/tcp-rr-spec.err"
positive tcp-rr-spec tcp-rr.trans_per_sec
run tcp-rr-proc --workload tcp-rr --mode processes --workers 2 --request-size 64 --response-size 1K --duration 0.3 --iterations 2
positive tcp-rr-proc tcp-rr.trans_per_sec

run stencil --workload stencil --grid XS --workers 1,2 --duration 0.3 --iterations 2
positive stencil stencil.mflops
run stencil-noise --workload stencil --grid S --workers 1 --duration 0.5 --iterations 2 --neighbour mprotect:2:threads
positive stencil-noise stencil.mflops
positive stencil-noise neighbour.mprotect.ops_per_sec

if command -v stress-ng >/dev/null; then
	run exec-stress-ng --workload exec --parser stress-ng --iterations 2 -- stress-ng --tlb-shootdown 2 --timeout 1 --metrics-brief
	positive exec-stress-ng exec.score
	positive exec-stress-ng exec.bogo_ops
else
	fail "exec: stress-ng" "stress-ng is not installed (make test installs it)"
fi
run exec-number --workload exec --parser last-number -- sh -c 'echo "latency: 12.5 us"'
if pyjson "$TMP/exec-number.out" "by('iteration')[0]['metrics']['exec.score'] == 12.5"; then
	pass "exec: last-number parser reads 12.5"
else
	fail "exec: last-number parser reads 12.5" "$(cat "$TMP/exec-number.out" "$TMP/exec-number.err" | tail -c 400)"
fi
# what the command leaves running is ended with it, and the window does not
# wait for the output pipe it holds open
run exec-leftover --workload exec --parser last-number --timeout 60 -- sh -c 'sleep 120 & echo "$!" >"$0"; echo 7' "$TMP/leftover.pid"
# ended: gone, or a zombie left to init (SIGKILL lands within moments)
ended() {
	_i=0
	while [ $_i -lt 50 ]; do
		_st=$(sed 's/.*) //' /proc/"$1"/stat 2>/dev/null | cut -d' ' -f1)
		[ -z "$_st" ] || [ "$_st" = Z ] && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}
if pyjson "$TMP/exec-leftover.out" "by('iteration')[0]['metrics']['exec.score'] == 7 and by('iteration')[0]['duration_s'] < 30" &&
	ended "$(cat "$TMP/leftover.pid")"; then
	pass "exec: a background child of the command is ended with it"
else
	fail "exec: a background child of the command is ended with it" "$(grep -v sample "$TMP/exec-leftover.out" | tail -c 300)"
fi

# ---- the workload runs in a process of its own ----
"$AGENT" run --workload mremap --workers 2 --duration 5 --iterations 1 --warmup 0 --interval 0.1 --live-samples \
	>"$TMP/watch.out" 2>"$TMP/watch.err" &
apid=$!
if child=$(window_child $apid 0); then
	tasks=$(cat /proc/"$child"/task/*/comm 2>/dev/null | sort | tr '\n' ' ')
	agent_tasks=$(cat /proc/$apid/task/*/comm 2>/dev/null | sort | tr '\n' ' ')
	kill $apid
	if [ "$(echo $tasks | wc -w)" = 3 ] && ! echo "$tasks" | grep -q sampler && echo "$agent_tasks" | grep -q tlblab-sampler; then
		pass "the workload's threads (2 workers and its waiter) are in a process without the agent's sampler"
	else
		fail "the workload's threads (2 workers and its waiter) are in a process without the agent's sampler" \
			"workload process: $tasks; agent: $agent_tasks"
	fi
else
	kill $apid 2>/dev/null
	fail "the workload runs in a process of its own" "no window of iteration 0 seen: $(tail -c 300 "$TMP/watch.err")"
fi
wait $apid 2>/dev/null

# ---- a window's samples are held until it closes ----
# (written while it is open, each would be guest work inside the window
# that follows the host's timing: its SSH session's). By default the first
# window sample appears together with all the others of its 2 s window at
# 0.1 s; with --live-samples they come one by one.
first_window_samples() {
	"$AGENT" run --workload mprotect --workers 2 --duration 2 --iterations 1 --warmup 0 --interval 0.1 "$@" \
		>"$TMP/held.out" 2>"$TMP/held.err" &
	_p=$!
	_n=0
	while kill -0 $_p 2>/dev/null; do
		_n=$(grep -c '"window":true' "$TMP/held.out")
		[ "$_n" -gt 0 ] && break
		sleep 0.02
	done
	wait $_p
	# ended between two looks: what it wrote is what the first look sees
	[ "$_n" -gt 0 ] || _n=$(grep -c '"window":true' "$TMP/held.out")
	echo "$_n"
}
held=$(first_window_samples)
live=$(first_window_samples --live-samples)
if [ "$held" -ge 15 ] && [ "$live" -ge 1 ] && [ "$live" -le 5 ]; then
	pass "a window's samples are written when it closes (held: $held at once; --live-samples: $live at first)"
else
	fail "a window's samples are written when it closes" "held: $held at first sight, live: $live"
fi

# ---- a workload process that dies ----
# killed inside the window of iteration 1: iteration 0 stays, the error names
# the signal and keeps the counters up to the death, no further iteration runs
# (under ASan, its own SIGSEGV handler would turn the death into an exit)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0" \
"$AGENT" run --workload mprotect --workers 2 --duration 5 --iterations 3 --warmup 0 --interval 0.1 --live-samples \
	>"$TMP/watch.out" 2>"$TMP/watch.err" &
apid=$!
if child=$(window_child $apid 1); then
	kill -SEGV "$child"
	wait $apid
	st=$?
	if [ $st = 1 ] && pyjson "$TMP/watch.out" "len(by('iteration')) == 1 and by('iteration')[0]['metrics']['mprotect.ops_per_sec'] > 0 and len(by('error')) == 1 and by('error')[0]['message'] == 'workload process killed by signal 11 (Segmentation fault)' and by('error')[0]['iteration'] == 1 and 'interrupts.CAL' in by('error')[0]['partial'] and by('error')[0]['partial']['mprotect.ops_per_sec'] > 0 and L[-1]['type'] == 'result' and L[-1]['status'] == 'failed'"; then
		pass "a workload process killed by SIGSEGV is an error naming the signal; what ran before is kept"
	else
		fail "a workload process killed by SIGSEGV is an error naming the signal; what ran before is kept" \
			"exit $st: $(grep -v '"type":"sample"' "$TMP/watch.out" | cut -c1-300)"
	fi
else
	kill $apid 2>/dev/null
	wait $apid 2>/dev/null
	fail "a workload process killed by SIGSEGV is an error naming the signal" "no window of iteration 1 seen"
fi

# --table is a human summary, not JSON
"$AGENT" run --workload mprotect --workers 1 --duration 0.3 --iterations 1 --table >"$TMP/table.out" 2>&1
if grep -q '^  mprotect.ops_per_sec ' "$TMP/table.out" && ! grep -q '"type"' "$TMP/table.out"; then
	pass "--table prints a summary table"
else
	fail "--table prints a summary table" "$(head -c 400 "$TMP/table.out")"
fi

# Bad input: exit 2, and the message names the field.
check_fails "unknown workload is refused" 2 "workload: unknown workload 'nope'" "$AGENT" run --workload nope
check_fails "--workers 0 names workers" 2 "workers: must be an integer from 1 to 1024" "$AGENT" run --workload mprotect --workers 0
check_fails "a bad list element names its index" 2 "workers\[1\]: must be an integer" "$AGENT" run --workload mprotect --workers 1,5000
check_fails "--workers abc names the option" 2 "--workers: 'abc' is not a whole number" "$AGENT" run --workload mprotect --workers abc
check_fails "--duration out of range" 2 "duration: must be a number from 0.1" "$AGENT" run --workload mprotect --duration 0
check_fails "a parameter of another workload" 2 "request_size: not a parameter of mprotect" "$AGENT" run --workload mprotect --request-size 10
check_fails "stencil cannot run as processes" 2 "mode: stencil runs only as threads" "$AGENT" run --workload stencil --mode processes
check_fails "exec without a command" 2 "command: missing" "$AGENT" run --workload exec
check_fails "unknown monitor" 2 "monitors\[0\]: unknown monitor" "$AGENT" run --workload mprotect --monitors nosuch
printf '{"workload": "mprotect", "workers": 2,,}' >"$TMP/bad.json"
check_fails "malformed spec JSON gives line and column" 2 "spec: malformed JSON at line 1, column" "$AGENT" run --spec "$TMP/bad.json"
printf '{"workload": "mprotect", "wokers": 2}' >"$TMP/typo.json"
check_fails "a misspelt field is named" 2 "wokers: unknown field" "$AGENT" run --spec - <"$TMP/typo.json"
check_fails "unknown command" 2 "unknown command 'frob'" "$AGENT" frob

# A spec on stdin works like the options.
echo '{"workload": "mprotect", "workers": 2, "duration": 0.3, "iterations": 1, "warmup": 0, "id": "job-7"}' |
	"$AGENT" run --spec - >"$TMP/stdin.out" 2>&1
if pyjson "$TMP/stdin.out" "by('result')[0]['id'] == 'job-7' and by('iteration')[0]['metrics']['mprotect.ops_per_sec'] > 0"; then
	pass "--spec - reads the spec from stdin and echoes its id"
else
	fail "--spec - reads the spec from stdin and echoes its id" "$(tail -c 400 "$TMP/stdin.out")"
fi

# A workload that fails mid-run: the second iteration's command fails.
"$AGENT" run --workload exec --parser last-number --iterations 3 --warmup 0 -- \
	sh -c 'if [ -e "$0" ]; then echo "boom: disk on fire"; exit 3; fi; touch "$0"; echo 42' "$TMP/flag" \
	>"$TMP/midrun.out" 2>"$TMP/midrun.err"
st=$?
if [ $st = 1 ] && pyjson "$TMP/midrun.out" "len(by('iteration')) == 1 and by('iteration')[0]['metrics']['exec.score'] == 42 and len(by('error')) == 1 and 'exit status 3' in by('error')[0]['message'] and 'boom: disk on fire' in by('error')[0]['message'] and by('error')[0]['iteration'] == 1 and by('result')[0]['status'] == 'failed'"; then
	pass "a failure mid-run keeps the first iteration and reports the error"
else
	fail "a failure mid-run keeps the first iteration and reports the error" "exit $st: $(tail -c 600 "$TMP/midrun.out")"
fi
