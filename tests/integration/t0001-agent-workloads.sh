#!/bin/sh
# tlblab-agent by hand: every workload runs briefly and reports a positive
# score; bad input exits 2 naming the field; a workload that fails mid-run
# prints an error line and keeps what it measured before.
. "$(dirname "$0")/../lib.sh"

# run NAME ARGS...: runs the agent into $TMP/NAME.out (JSON lines).
run() {
	_n=$1
	shift
	"$AGENT" run --iterations 1 --warmup 0 "$@" >"$TMP/$_n.out" 2>"$TMP/$_n.err"
}

# positive NAME METRIC: every measured iteration has METRIC > 0.
positive() {
	if pyjson "$TMP/$1.out" "len(by('iteration')) > 0 and all(i['metrics'].get('$2', 0) > 0 for i in by('iteration')) and by('result')[0]['status'] == 'ok'"; then
		pass "$1: $2 > 0"
	else
		fail "$1: $2 > 0" "$(grep -h '"type":"error"' "$TMP/$1.out" | cut -c1-600; tail -c 300 "$TMP/$1.err")"
	fi
}

run mprotect-threads --workload mprotect --mode threads --workers 2 --duration 0.5
positive mprotect-threads mprotect.ops_per_sec
run mprotect-processes --workload mprotect --mode processes --workers 2 --duration 0.5
positive mprotect-processes mprotect.ops_per_sec

run mremap-sweep --workload mremap --workers 1,2 --duration 0.5
positive mremap-sweep mremap.moves_per_sec
if pyjson "$TMP/mremap-sweep.out" "[i['params']['workers'] for i in by('iteration')] == [1, 2]"; then
	pass "mremap: --workers 1,2 runs one case per thread count"
else
	fail "mremap: --workers 1,2 runs one case per thread count" "cases: $(grep -c iteration "$TMP/mremap-sweep.out")"
fi

run fault-write --workload fault-write --workers 2 --duration 0.5
positive fault-write fault-write.writes_per_sec
run fault-write-rounds --workload fault-write --workers 2 --rounds 200 --duration 30
positive fault-write-rounds fault-write.total_sec
if pyjson "$TMP/fault-write-rounds.out" "by('iteration')[0]['metrics']['fault-write.rounds'] == 200 and by('iteration')[0]['duration_s'] < 30"; then
	pass "fault-write: --rounds 200 stops after 200 rounds"
else
	fail "fault-write: --rounds 200 stops after 200 rounds" "$(grep iteration "$TMP/fault-write-rounds.out" | head -c 400)"
fi

run tcp-rr --workload tcp-rr --workers 1 --duration 0.5
positive tcp-rr tcp-rr.trans_per_sec
run tcp-rr-proc --workload tcp-rr --mode processes --workers 2 --request-size 64 --response-size 1K --duration 0.5
positive tcp-rr-proc tcp-rr.trans_per_sec

run stencil --workload stencil --grid XS --workers 2 --duration 0.5
positive stencil stencil.mflops
run stencil-noise --workload stencil --grid XS --workers 1 --duration 0.5 --neighbour mprotect:2:threads
positive stencil-noise stencil.mflops
positive stencil-noise neighbour.mprotect.ops_per_sec

if command -v stress-ng >/dev/null; then
	run exec-stress-ng --workload exec --parser stress-ng -- stress-ng --tlb-shootdown 2 --timeout 2 --metrics-brief
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
