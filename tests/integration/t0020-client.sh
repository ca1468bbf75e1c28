#!/bin/sh
# The command-line client, every command, against tests/tools/fake-api.py: a
# stand-in for tlblabd's API (daemon/api.h) that checks the bearer token,
# records each request it gets, and moves a submitted job one step further
# on each poll. What is checked is what a user sees: output, exit status,
# and what reached the server (or that nothing did).
. "$(dirname "$0")/../lib.sh"

TLBLAB=$BUILD/tlblab
if [ ! -x "$TLBLAB" ]; then
	fail "tlblab is built" "no $TLBLAB (make $BUILD/tlblab)"
	exit 0
fi

LOG=$TMP/requests.log
$PY "$TOP/tests/tools/fake-api.py" --port-file "$TMP/port" --log "$LOG" \
	--token s3cret >"$TMP/fake.err" 2>&1 &
FAKE=$!
trap 'kill $FAKE 2>/dev/null; rm -rf "$TMP"' EXIT
i=0
while [ ! -s "$TMP/port" ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
if [ ! -s "$TMP/port" ]; then
	fail "fake API server starts" "$(cat "$TMP/fake.err")"
	exit 0
fi
PORT=$(cat "$TMP/port")
TLBLAB_SERVER=http://127.0.0.1:$PORT
TLBLAB_TOKEN=s3cret
USER=alice
export TLBLAB_SERVER TLBLAB_TOKEN USER

nreq() { if [ -f "$LOG" ]; then wc -l <"$LOG"; else echo 0; fi; }
# last_req 'python expression over R, the last request recorded'
last_req() {
	tail -n 1 "$LOG" >"$TMP/last.json"
	pyjson "$TMP/last.json" "(lambda R: $1)(L[-1])"
}
# in_order FILE LINE...: each LINE occurs in FILE as a whole line, in order
in_order() {
	$PY - "$@" <<'PYEOF'
import sys
lines = open(sys.argv[1]).read().splitlines()
at = 0
for want in sys.argv[2:]:
    try:
        at = lines.index(want, at) + 1
    except ValueError:
        print("missing, or out of order: %r" % want)
        sys.exit(1)
PYEOF
}
is_json() { $PY -c 'import json, sys; json.load(open(sys.argv[1]))' "$1"; }

# --- submit ---------------------------------------------------------------

"$TLBLAB" submit --suite tlb --machines m1,m2 --tags qemu --submitter bob --boots 2 \
	>"$TMP/sub.out" 2>&1
st=$?
if [ $st = 0 ] && grep -Eqx 'job [0-9]+ queued' "$TMP/sub.out"; then
	pass "submit prints the job id"
else
	fail "submit prints the job id" "exit $st: $(cat "$TMP/sub.out")"
fi
check "submit POSTs the request body with the token" last_req \
	'R["method"] == "POST" and R["path"] == "/api/v1/jobs" and R["auth"] == "Bearer s3cret"
	 and R["body"] == {"suite": "tlb", "machines": ["m1", "m2"], "tags": ["qemu"],
			   "submitter": "bob", "boots": 2}'

"$TLBLAB" submit --suite tlb >/dev/null 2>&1
check "submit defaults the submitter to \$USER and sends no unset field" last_req \
	'R["body"] == {"suite": "tlb", "submitter": "alice"}'

# --- submit --wait ---------------------------------------------------------

"$TLBLAB" submit --suite tlb --machines m1,m2 --wait >"$TMP/wait.out" 2>&1
st=$?
id=$(sed -n 's/^job \([0-9]*\) queued$/\1/p' "$TMP/wait.out")
if [ $st = 0 ] && [ -n "$id" ] && in_order "$TMP/wait.out" \
	"job $id: run on m1: running" "job $id: run on m1: done" \
	"job $id: run on m2: running" "job $id: run on m2: done" >"$TMP/order" &&
	[ "$(tail -n 1 "$TMP/wait.out")" = "job $id: done" ]; then
	pass "submit --wait follows the stages of a job that ends done, exit 0"
else
	fail "submit --wait follows the stages of a job that ends done, exit 0" \
		"exit $st, $(cat "$TMP/order" 2>/dev/null)"
	sed 's/^/#   /' "$TMP/wait.out"
fi
if [ "$(grep -c ': running$' "$TMP/wait.out")" = 2 ]; then
	pass "submit --wait prints a stage's state once, not on every poll"
else
	fail "submit --wait prints a stage's state once, not on every poll" \
		"$(grep -c ': running$' "$TMP/wait.out") running lines for 2 stages"
fi
check "submit --wait ends with the results table" \
	grep -Eq '^  mprotect\.ops_per_sec +2000 +1000 +3000 +3 +ops/s$' "$TMP/wait.out"

"$TLBLAB" submit --suite fails --machines m1,m2 --wait >"$TMP/wfail.out" 2>&1
st=$?
id=$(sed -n 's/^job \([0-9]*\) queued$/\1/p' "$TMP/wfail.out")
if [ $st = 1 ] && [ -n "$id" ] && in_order "$TMP/wfail.out" \
	"job $id: run on m1: done" \
	"job $id: run on m2: failed (infra: ssh: connection refused)" >"$TMP/order" &&
	[ "$(tail -n 1 "$TMP/wfail.out")" = "job $id: failed: infra: ssh: connection refused" ]; then
	pass "submit --wait on a job that fails shows the failed stage and exits 1"
else
	fail "submit --wait on a job that fails shows the failed stage and exits 1" \
		"exit $st, $(cat "$TMP/order" 2>/dev/null)"
	sed 's/^/#   /' "$TMP/wfail.out"
fi

check_fails "submit --wait --timeout gives up on a job that does not finish" 1 \
	"job [0-9]+: still running after 2 s" \
	"$TLBLAB" submit --suite slow --wait --timeout 2

"$TLBLAB" submit --suite tlb --wait --json >"$TMP/wjson.out" 2>"$TMP/wjson.err"
st=$?
if [ $st = 0 ] && pyjson "$TMP/wjson.out" 'L[0]["job"]["state"] == "done"' &&
	grep -q ': done$' "$TMP/wjson.err"; then
	pass "submit --wait --json prints the finished job as JSON, progress on stderr"
else
	fail "submit --wait --json prints the finished job as JSON, progress on stderr" \
		"exit $st: $(head -c 300 "$TMP/wjson.out")"
fi

# --- refusals: token, names, options --------------------------------------

check_fails "submit without a token shows the server's 401 and exits 1" 1 \
	'^tlblab: HTTP 401 unauthorized: missing or invalid token' \
	env -u TLBLAB_TOKEN "$TLBLAB" submit --suite tlb
check_fails "submit with a wrong token shows the server's 401" 1 \
	'^tlblab: HTTP 401 unauthorized: missing or invalid token' \
	env TLBLAB_TOKEN=wrong "$TLBLAB" submit --suite tlb
check_fails "a server-side validation error is shown as the server words it" 1 \
	'^tlblab: HTTP 400 bad_request: suite: not a configured suite' \
	"$TLBLAB" submit --suite nosuch

n0=$(nreq)
check_fails "a machine name with ';' is refused locally, naming the option" 2 \
	"^tlblab: submit: --machines: invalid name 'm1;reboot'" \
	"$TLBLAB" submit --suite tlb --machines 'm1;reboot'
for bad in "--suite=../etc" "--suite=-rf" "--tags=a b" "--tags=qemu," "--submitter=.hidden" \
	"--machines=$(printf 'm%064d' 1)" "--boots=0" "--boots=2x" "--suite"; do
	check_fails "submit $bad is refused locally" 2 "^tlblab: submit: " \
		"$TLBLAB" submit --suite tlb "$bad"
done
check_fails "submit without --suite is refused" 2 "--suite is required" "$TLBLAB" submit
check_fails "an unknown option is refused" 2 "unknown option '--frob'" \
	"$TLBLAB" submit --suite tlb --frob
n1=$(nreq)
if [ "$n0" = "$n1" ]; then
	pass "refused submissions send no request"
else
	fail "refused submissions send no request" "the server got $((n1 - n0))"
fi
"$TLBLAB" submit --suite tlb --machines "$(printf 'm%063d' 1)" >/dev/null 2>&1
check "a 64-character name is sent" last_req 'len(R["body"]["machines"][0]) == 64'

# --- an unreachable server ---------------------------------------------------

DEAD=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for cmd in "submit --suite tlb" "jobs" "status 1" "machines" "results 1" "cancel 2"; do
	# shellcheck disable=SC2086
	check_fails "$cmd against a server that is down exits 3 naming the URL" 3 \
		"^tlblab: .*http://127\.0\.0\.1:$DEAD/api/v1/" \
		env TLBLAB_SERVER="http://127.0.0.1:$DEAD" "$TLBLAB" $cmd
done
check "--server overrides \$TLBLAB_SERVER" \
	env TLBLAB_SERVER="http://127.0.0.1:$DEAD" "$TLBLAB" --server "$TLBLAB_SERVER" machines
check_fails "a --server that is not an http URL is refused" 2 "--server: 'ftp://x'" \
	"$TLBLAB" jobs --server ftp://x

# --- status, jobs, machines, results, cancel ---------------------------------

"$TLBLAB" status "$id" >"$TMP/status.out" 2>&1
st=$?
if [ $st = 0 ] && grep -q "^job $id: failed (run)$" "$TMP/status.out" &&
	grep -Eq '^error +infra: ssh: connection refused \(stage [0-9]+\)$' "$TMP/status.out" &&
	grep -Eq '^SEQ +KIND +SIDE +MACHINE +STATE +ATTEMPT +STARTED +DURATION +ERROR$' "$TMP/status.out" &&
	grep -Eq '^ +1 +run +- +m1 +done +1 +[0-9-]+ [0-9:]+ +10s +-$' "$TMP/status.out" &&
	grep -Eq '^ +2 +run +- +m2 +failed +1 .* +infra: ssh: connection refused$' "$TMP/status.out"; then
	pass "status shows the job and a table of its stages"
else
	fail "status shows the job and a table of its stages" "exit $st"
	sed 's/^/#   /' "$TMP/status.out"
fi
check_fails "status of an unknown job shows the server's 404 and exits 1" 1 \
	'^tlblab: HTTP 404 not_found: no job 999$' "$TLBLAB" status 999
check_fails "an answer that is not JSON is reported with its status" 1 \
	'^tlblab: HTTP 502: <html>' "$TLBLAB" status 666
check_fails "status needs a job id" 2 "which job" "$TLBLAB" status
check_fails "status refuses a job id that is not a number" 2 "'12x' is not a job id" \
	"$TLBLAB" status 12x

"$TLBLAB" jobs --state "done" --suite tlb --submitter alice --limit 5 --offset 0 \
	>"$TMP/jobs.out" 2>&1
st=$?
if [ $st = 0 ] && grep -Eq '^ID +STATE +SUITE +SUBMITTER' "$TMP/jobs.out" &&
	grep -Eq '^ *1 +done +tlb +alice +m1 ' "$TMP/jobs.out" &&
	! grep -Eq ' (running|failed) ' "$TMP/jobs.out"; then
	pass "jobs lists the jobs the filters select"
else
	fail "jobs lists the jobs the filters select" "exit $st"
	sed 's/^/#   /' "$TMP/jobs.out"
fi
check "jobs sends the filters as query parameters" last_req \
	'R["path"] == "/api/v1/jobs" and R["query"] == {"state": ["done"], "suite": ["tlb"],
	 "submitter": ["alice"], "limit": ["5"], "offset": ["0"]}'
check_fails "jobs --state refuses an unknown state" 2 "--state: 'finished' is not one of" \
	"$TLBLAB" jobs --state finished
check_fails "jobs --limit is bounded" 2 "--limit: '501' is not a number from 1 to 500" \
	"$TLBLAB" jobs --limit 501

"$TLBLAB" machines >"$TMP/machines.out" 2>&1
st=$?
if [ $st = 0 ] &&
	grep -Eq '^NAME +TRANSPORT +HOST +BOOT +HEALTH +LEASED_BY +KERNEL +TAGS$' "$TMP/machines.out" &&
	grep -Eq '^m1 +local +- +qemu +good +12 +6\.1\.0-tlblab +qemu,small$' "$TMP/machines.out" &&
	grep -Eq '^m2 +ssh +127\.0\.0\.2 +kexec +bad \(ssh: connection refused\) +- +- +real$' "$TMP/machines.out"; then
	pass "machines shows a table of the lab's machines"
else
	fail "machines shows a table of the lab's machines" "exit $st"
	sed 's/^/#   /' "$TMP/machines.out"
fi

"$TLBLAB" results 1 >"$TMP/results.out" 2>&1
st=$?
if [ $st = 0 ] &&
	in_order "$TMP/results.out" "spec 0, case 0: mprotect on m1" "  params: mode=threads workers=2" \
		"spec 0, case 1: mprotect on m1" "  params: mode=processes workers=2" >"$TMP/order" &&
	grep -Eq '^  mprotect\.ops_per_sec +2000 +1000 +3000 +3 +ops/s$' "$TMP/results.out" &&
	grep -Eq '^  mprotect\.ops_per_sec +600 +500 +700 +3 +ops/s$' "$TMP/results.out"; then
	pass "results shows median, min, max and n of each metric per case"
else
	fail "results shows median, min, max and n of each metric per case" \
		"exit $st $(cat "$TMP/order" 2>/dev/null)"
	sed 's/^/#   /' "$TMP/results.out"
fi
if ! grep -q 'cpu0' "$TMP/results.out" && grep -q '2 per-CPU metrics hidden' "$TMP/results.out"; then
	pass "results hides per-CPU metrics and says so"
else
	fail "results hides per-CPU metrics and says so" "$(grep -i cpu "$TMP/results.out")"
fi
check "results --all shows per-CPU metrics" \
	sh -c '"$1" results --all 1 | grep -Eq "^  interrupts\.TLB\.cpu1 +900 +750 +1050 +3 +count$"' \
	sh "$TLBLAB"

"$TLBLAB" cancel 2 >"$TMP/cancel.out" 2>&1
st=$?
if [ $st = 0 ] && grep -qx 'job 2: cancelled' "$TMP/cancel.out" &&
	last_req 'R["method"] == "POST" and R["path"] == "/api/v1/jobs/2/cancel"
		  and R["auth"] == "Bearer s3cret"'; then
	pass "cancel POSTs to the job's cancel endpoint with the token"
else
	fail "cancel POSTs to the job's cancel endpoint with the token" \
		"exit $st: $(cat "$TMP/cancel.out")"
fi
check_fails "cancel of a finished job shows the server's 409 and exits 1" 1 \
	'^tlblab: HTTP 409 conflict: job 2 already cancelled$' "$TLBLAB" cancel 2

# --- --json ------------------------------------------------------------------

for cmd in "jobs" "status 1" "machines" "results 1" "submit --suite tlb"; do
	# shellcheck disable=SC2086
	"$TLBLAB" $cmd --json >"$TMP/json.out" 2>"$TMP/json.err"
	st=$?
	if [ $st = 0 ] && is_json "$TMP/json.out" 2>"$TMP/json.why"; then
		pass "$cmd --json prints parseable JSON"
	else
		fail "$cmd --json prints parseable JSON" \
			"exit $st: $(cat "$TMP/json.why" "$TMP/json.err") $(head -c 200 "$TMP/json.out")"
	fi
done
"$TLBLAB" status 1 --json >"$TMP/status.json"
check "status --json is the server's job, stages included" pyjson "$TMP/status.json" \
	'L[0]["job"]["id"] == 1 and L[0]["job"]["stages"][0]["machine"] == "m1"'
"$TLBLAB" results 1 --json >"$TMP/results.json"
check "results --json holds the runs and the metrics" pyjson "$TMP/results.json" \
	'len(L[0]["runs"]) == 8 and len(L[0]["metrics"]) == 24'

# --- help and version --------------------------------------------------------

check "--help lists the commands" sh -c '"$1" --help | grep -q "^  results "' sh "$TLBLAB"
for cmd in submit status jobs cancel machines results; do
	check "$cmd --help shows its usage" \
		sh -c '"$1" "$2" --help | grep -q "^usage: tlblab $2"' sh "$TLBLAB" "$cmd"
done
check "version prints the version" sh -c '"$1" version | grep -Eqx "tlblab [0-9]+\.[0-9]+\.[0-9]+"' \
	sh "$TLBLAB"
check_fails "an unknown command is a usage error" 2 "unknown command 'frobnicate'" \
	"$TLBLAB" frobnicate
check_fails "no command is a usage error" 2 "^usage: tlblab" "$TLBLAB"
exit 0
