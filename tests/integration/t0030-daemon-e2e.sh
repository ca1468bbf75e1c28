#!/bin/sh
# tlblabd end to end with real parts: two lab machines that are OpenSSH
# servers on loopback addresses, a real SQLite store, the real agent. A suite
# through the client; a machine that dies mid-run (the job finishes on the
# other, the first is marked bad); an unknown host key refused; kill -9 of
# the daemon mid-job and a restart; bad configs, bodies and tokens.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/sshd.sh"
. "$TOP/tests/daemon.sh"
trap 'daemon_cleanup; sshd_cleanup; rm -rf "$TMP"' EXIT

daemon_test 20000
CLIENT=$BUILD/tlblab
export TLBLAB_SERVER="http://127.0.0.1:$DAEMON_PORT"

sshd_keys "$TMP/keys" || { fail "ssh keys" "ssh-keygen failed"; exit 0; }
P1=$(sshd_port 1) P2=$(sshd_port 2)
sshd_start m1 127.0.0.2 "$P1" || { fail "sshd m1" "did not start"; exit 0; }
KH1=$SSHD_KNOWN_HOSTS
sshd_start m2 127.0.0.3 "$P2" || { fail "sshd m2" "did not start"; exit 0; }
KH2=$SSHD_KNOWN_HOSTS
: >"$TMP/empty_known_hosts"

machine() { # NAME ADDR PORT KNOWN_HOSTS
	cat <<EOM
  - name: $1
    transport: ssh
    host: $2
    port: $3
    user: root
    identity: $TMP/keys/id_ed25519
    known_hosts: $4
    boot: none
    tags: [loop]
    agent_path: $TMP/agent-$1/tlblab-agent
EOM
}
{
	lab_yaml "$TMP/data" "tokens: [$TOKEN]" "max_body: 65536" "workers: 4"
	echo machines:
	machine m1 127.0.0.2 "$P1" "$KH1"
	machine m2 127.0.0.3 "$P2" "$KH2"
	machine m3 127.0.0.2 "$P1" "$TMP/empty_known_hosts"
	# m4's agent would live in a directory another user owns, who could
	# swap the binary between the digest check and the exec
	machine m4 127.0.0.2 "$P1" "$KH1" | sed "s|agent_path: .*|agent_path: $TMP/foreign/tlblab-agent|"
	echo suites:
	lab_yaml_mprotect_suite quick 120 "mode: [threads, processes]" "workers: 2" "duration: 0.5" "iterations: 2"
	lab_yaml_mprotect_suite long 120 "workers: 2" "duration: 1.5" "iterations: 6" "warmup: 0"
} >"$TMP/lab.yaml"

# 1. configuration checks
check "tlblabd -n accepts the lab" sh -c "'$BUILD/tlblabd' -n -c '$TMP/lab.yaml' | grep -qx 'configuration OK'"
printf 'lab:\n  data_dir: /tmp/x\nmachines:\n  - name: a\n    transport: ssh\n    port: [1\n' >"$TMP/bad.yaml"
check_fails "malformed YAML is reported with line and column" 1 "bad.yaml:[0-9]+:[0-9]+: " "$BUILD/tlblabd" -n -c "$TMP/bad.yaml"
sed 's/^    port: '"$P2"'$/    port: nope/' "$TMP/lab.yaml" >"$TMP/badport.yaml"
line=$(grep -n '^    port: nope$' "$TMP/badport.yaml" | cut -d: -f1)
check_fails "a bad value is reported at its line and column" 1 "badport.yaml:$line:11: port" "$BUILD/tlblabd" -n -c "$TMP/badport.yaml"

daemon_start "$TMP/lab.yaml" || { fail "tlblabd starts" "see log"; exit 0; }
pass "tlblabd starts"

# 2. tokens, bodies, names
api POST /jobs '{"suite":"quick"}' >/dev/null
[ "$HTTP_STATUS" = 401 ] && pass "creating a job without a token is refused (401)" || fail "no token" "got $HTTP_STATUS"
api POST /jobs '{"suite":"quick"}' wrong-token-wrong-token >/dev/null
[ "$HTTP_STATUS" = 401 ] && pass "a wrong token is refused (401)" || fail "wrong token" "got $HTTP_STATUS"
body=$(api POST /jobs '{"suite": "quick",' "$TOKEN")
[ "$(api_status)" = 400 ] && echo "$body" | grep -q 'malformed JSON at line 1' &&
	pass "a malformed body gets 400 with the position" || fail "malformed body" "$(api_status) $body"
$PY -c 'print("{\"suite\":\"" + "x" * 100000 + "\"}")' >"$TMP/big.json"
code=$(curl -s -m 10 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" --data-binary @"$TMP/big.json" "$TLBLAB_SERVER/api/v1/jobs")
[ "$code" = 413 ] && pass "an oversized body gets 413" || fail "oversized body" "got $code"
body=$(api POST /jobs '{"suite":"quick","machines":["m1;reboot"]}' "$TOKEN")
[ "$(api_status)" = 400 ] && echo "$body" | grep -q 'machines\[0\]: not a valid name' &&
	pass "a machine name with shell metacharacters is refused (400)" || fail "metachar machine" "$(api_status) $body"
body=$(api POST /jobs '{"suite":"$(reboot)"}' "$TOKEN")
[ "$(api_status)" = 400 ] && pass "a suite name with shell metacharacters is refused" || fail "metachar suite" "$(api_status) $body"
TLBLAB_TOKEN=$TOKEN check_fails "the client refuses a bad machine name before sending" 2 "machines" \
	"$CLIENT" submit --suite quick --machines 'm1;reboot'
njobs=$(api GET /jobs | jq_py 'J["total"]')
[ "$njobs" = 0 ] && pass "nothing was queued by the refused requests" || fail "refused requests" "$njobs jobs exist"
api GET /jobs/999 >/dev/null
[ "$HTTP_STATUS" = 404 ] && pass "an unknown job is 404" || fail "unknown job" "got $HTTP_STATUS"

# 3. a suite end to end through the client
TLBLAB_TOKEN=$TOKEN "$CLIENT" submit --suite quick --machines m1 --submitter t0030 --wait --timeout 120 >"$TMP/submit.out" 2>&1
st=$?
if [ $st = 0 ] && grep -q 'mprotect.ops_per_sec' "$TMP/submit.out"; then
	pass "submit --wait runs the suite on m1 and prints the results"
else
	fail "submit --wait runs the suite on m1 and prints the results" "exit $st: $(tail -c 600 "$TMP/submit.out")"
fi
n=$(api GET "/jobs/1/metrics?name=mprotect.ops_per_sec" | jq_py 'len([m for m in J["metrics"] if m["value"] > 0])')
[ "$n" = 4 ] && pass "4 measured iterations stored (2 cases x 2)" || fail "stored iterations" "got $n"
n=$(api GET "/jobs/1/samples?name=interrupts.CAL" | jq_py 'len(J["samples"])')
[ "${n:-0}" -gt 4 ] && pass "per-second samples stored ($n)" || fail "samples" "got $n"
api GET /jobs/1/stages/1/log | grep -q 'agent uploaded on m1' && pass "the stage log shows the agent upload" ||
	fail "stage log" "$(api GET /jobs/1/stages/1/log | head -c 300)"
full=$(api GET /jobs/1/stages/1/log)
[ "$(api GET '/jobs/1/stages/1/log?tail=2')" = "$(printf '%s\n' "$full" | tail -n 2)" ] &&
	pass "?tail=2 gives the stage log's last 2 lines" || fail "log tail" "$(api GET '/jobs/1/stages/1/log?tail=2')"
api GET '/jobs/1/stages/1/log?tail=x' >/dev/null
[ "$HTTP_STATUS" = 400 ] && pass "a bad tail is 400" || fail "bad tail" "got $HTTP_STATUS"
[ "$(api GET /suites | jq_py '" ".join(s["name"] for s in J["suites"])')" = "quick long" ] &&
	pass "GET /suites lists the configured suites" || fail "suites" "$(api GET /suites | head -c 300)"
# both cases: a group whose params say mode=threads and one whose params
# say mode=processes, each with its ops_per_sec row
both_cases() {
	$PY - "$1" <<'PYEOF'
import re, sys
groups, cur = [], None
for line in open(sys.argv[1]):
    if line.startswith("spec "):
        cur = {"params": "", "rows": []}
        groups.append(cur)
    elif cur is not None and line.startswith("  params: "):
        cur["params"] = line
    elif cur is not None:
        cur["rows"].append(line.split()[0] if line.split() else "")
seen = {m for g in groups for m in ("threads", "processes")
        if re.search(r'\bmode="?%s"?(\s|$)' % m, g["params"]) and "mprotect.ops_per_sec" in g["rows"]}
sys.exit(0 if seen == {"threads", "processes"} else 1)
PYEOF
}
"$CLIENT" results 1 >"$TMP/results.out" 2>&1 && both_cases "$TMP/results.out" &&
	pass "tlblab results shows both cases (mode=threads, mode=processes)" ||
	fail "tlblab results shows both cases" "$(grep -E '^spec |^  params: ' "$TMP/results.out" | tr -s ' \n' ' ' | head -c 600)"

# refused MACHINE NAME PATTERN: a quick job on MACHINE fails, with an error
# message that PATTERN (grep) matches; passes "NAME: MESSAGE"
refused() {
	id=$(api POST /jobs "{\"suite\":\"quick\",\"machines\":[\"$1\"]}" "$TOKEN" | jq_py 'J["job"]["id"]')
	state=$(job_wait "$id" "failed done" 60)
	msg=$(api GET "/jobs/$id" | jq_py 'J["job"]["error"]["message"]')
	if [ "$state" = failed ] && printf "%s\n" "$msg" | grep -q "$3"; then
		pass "$2: $msg"
	else
		fail "$2" "state $state: $msg"
	fi
}

# 4. an unknown host key is refused, and says so
refused m3 "an unknown host key is refused" 'unknown'
h=$(api GET /machines | jq_py '[m["health"] for m in J["machines"] if m["name"] == "m3"][0]')
[ "$h" = bad ] && pass "m3 is marked bad" || fail "m3 health" "$h"

# 4b. the agent's place must be the lab user's (or root's) alone
install -d -o nobody -m 755 "$TMP/foreign"
refused m4 "an agent_path in another user's directory is refused" \
	"agent_path $TMP/foreign/tlblab-agent: not a safe place for the agent: $TMP/foreign belongs to uid $(id -u nobody)"
[ ! -e "$TMP/foreign/tlblab-agent" ] || fail "nothing is uploaded into another user's directory" "$(ls -l "$TMP/foreign")"

# job_has_runs ID: the job has stored a run (so its agent is running, with
# iterations to go); sets $first to the machine of its first stage
job_has_runs() {
	first=$(api GET "/jobs/$1" | jq_py 'J["job"]["stages"][0]["machine"] or ""')
	n=$(api GET "/jobs/$1/runs" | jq_py 'len(J["runs"])')
	[ -n "$first" ] && [ "${n:-0}" -ge 1 ]
}

# 5. a machine dies mid-run: the job finishes on the other one
id=$(api POST /jobs '{"suite":"long","machines":["m1","m2"]}' "$TOKEN" | jq_py 'J["job"]["id"]')
if ! wait_until 30 job_has_runs "$id"; then
	fail "the long job starts" "no run stored after 30 s (machine '$first')"
else
	sshd_kill "$first"
	state=$(job_wait "$id" "done failed" 120)
	job=$(api GET "/jobs/$id")
	second=$(printf "%s\n" "$job" | jq_py 'J["job"]["stages"][0]["machine"]')
	attempt=$(printf "%s\n" "$job" | jq_py 'J["job"]["stages"][0]["attempt"]')
	if [ "$state" = done ] && [ "$second" != "$first" ] && [ "$attempt" = 1 ]; then
		pass "killing $first's sshd mid-run: the job finished on $second (attempt 2)"
	else
		fail "a machine dies mid-run" "state $state on $second, attempt $attempt"
	fi
	h=$(api GET /machines | jq_py "[m['health'] + ': ' + (m['health_reason'] or '') for m in J['machines'] if m['name'] == '$first'][0]")
	case "$h" in bad:*) pass "$first is marked bad ($h)" ;; *) fail "$first marked bad" "$h" ;; esac
	runs=$(api GET "/jobs/$id/runs" | jq_py "len([r for r in J['runs'] if r['machine'] == '$second'])")
	[ "$runs" = 6 ] && pass "only the complete attempt's 6 runs are kept" || fail "runs kept" "$runs"
	addr=$(cut -d' ' -f1 "$TMP/sshd-$first/addr")
	port=$(cut -d' ' -f2 "$TMP/sshd-$first/addr")
	sshd_start "$first" "$addr" "$port" >/dev/null || fail "restart $first's sshd" "did not start"
fi

# 6. kill -9 of the daemon mid-job, then a restart: the job completes
id=$(api POST /jobs '{"suite":"long","machines":["m2"]}' "$TOKEN" | jq_py 'J["job"]["id"]')
wait_until 30 job_has_runs "$id" || fail "the job runs before the kill -9" "no run stored after 30 s"
daemon_kill9
daemon_start "$TMP/lab.yaml" || { fail "tlblabd restarts after kill -9" "see log"; exit 0; }
pass "tlblabd restarts after kill -9"
grep -q "stage .*: interrupted; queued again" "$DAEMON_LOG" && pass "the restart requeued the interrupted stage" ||
	fail "requeue after restart" "$(tail -n 5 "$DAEMON_LOG")"
state=$(job_wait "$id" "done failed" 120)
[ "$state" = done ] && pass "the interrupted job completed after the restart" || fail "job after restart" "$state: $(api GET "/jobs/$id" | head -c 400)"
runs=$(api GET "/jobs/$id/runs" | jq_py 'len(J["runs"])')
[ "$runs" = 6 ] && pass "no duplicate runs after the restart" || fail "runs after restart" "$runs"
leased=$(api GET /machines | jq_py 'len([m for m in J["machines"] if m["leased_by"] is not None])')
[ "$leased" = 0 ] && pass "no machine stays leased" || fail "leases" "$leased leased"

# 7. cancel a running job
id=$(api POST /jobs '{"suite":"long","machines":["m2"]}' "$TOKEN" | jq_py 'J["job"]["id"]')
wait_until 30 job_has_runs "$id" || fail "the job to cancel runs" "no run stored after 30 s"
TLBLAB_TOKEN=$TOKEN "$CLIENT" cancel "$id" >/dev/null 2>&1
state=$(job_wait "$id" "cancelled done failed" 30)
[ "$state" = cancelled ] && pass "a running job is cancelled" || fail "cancel" "$state"
api POST "/jobs/$id/cancel" '' "$TOKEN" >/dev/null
[ "$HTTP_STATUS" = 409 ] && pass "cancelling a finished job is 409" || fail "cancel twice" "$HTTP_STATUS"

# 8. SIGHUP with a broken configuration keeps the running one
cp "$TMP/lab.yaml" "$TMP/lab.good"
printf 'lab: [\n' >"$TMP/lab.yaml"
kill -HUP "$DAEMON_PID"
wait_until 10 grep -q "SIGHUP: the new configuration is not valid" "$DAEMON_LOG"
logged=$?
api GET /health >/dev/null
[ "$HTTP_STATUS" = 200 ] && [ $logged = 0 ] &&
	pass "SIGHUP with an invalid file keeps the old configuration" ||
	fail "SIGHUP with an invalid file keeps the old configuration" "health $HTTP_STATUS, refusal logged: $([ $logged = 0 ] && echo yes || echo 'not in 10 s')"
cp "$TMP/lab.good" "$TMP/lab.yaml"
kill -HUP "$DAEMON_PID"
wait_until 10 grep -q "SIGHUP: configuration reloaded" "$DAEMON_LOG" && pass "SIGHUP reloads a valid file" ||
	fail "SIGHUP reloads a valid file" "no reload logged in 10 s"

# the lab's defaults:, reloaded: a submission without a suite takes it,
# and the job (and the client) say that it did
printf 'defaults: {suite: quick}\n' >>"$TMP/lab.yaml"
n0=$(grep -c "SIGHUP: configuration reloaded" "$DAEMON_LOG")
kill -HUP "$DAEMON_PID"
wait_until 10 sh -c "[ \$(grep -c 'SIGHUP: configuration reloaded' '$DAEMON_LOG') -gt $n0 ]"
TLBLAB_TOKEN=$TOKEN "$CLIENT" submit --machines m1 --submitter dflt >"$TMP/dflt.out" 2>&1
did=$(sed -n 's/^job \([0-9]*\) .*/\1/p' "$TMP/dflt.out")
[ -n "$did" ] && api POST "/jobs/$did/cancel" '' "$TOKEN" >/dev/null
if grep -qx "defaults: suite quick" "$TMP/dflt.out" &&
	[ "$(api GET "/jobs/$did" | jq_py 'J["job"]["suite"] + " " + json.dumps(J["job"]["defaults"])')" = 'quick {"suite": "quick"}' ]; then
	pass "with defaults: {suite: quick}, a submission without --suite runs quick, and the job and the client say so"
else
	fail "a submission without --suite takes the lab's default suite" "$(cat "$TMP/dflt.out")"
fi
cp "$TMP/lab.good" "$TMP/lab.yaml"

# 70 more reloads (the daemon once refused a reload after 64) while clients
# read: each reload is taken in turn, requests in flight keep the
# configuration they began with, and the daemon answers throughout
reloads() { grep -c "SIGHUP: configuration reloaded" "$DAEMON_LOG"; }
n0=$(reloads)
( i=0; while [ $i -lt 400 ]; do curl -s -m 10 -o /dev/null "$TLBLAB_SERVER/api/v1/jobs?limit=5"; curl -s -m 10 -o /dev/null "$TLBLAB_SERVER/api/v1/suites"; i=$((i + 1)); done ) &
readers=$!
i=1
while [ $i -le 70 ]; do
	kill -HUP "$DAEMON_PID"
	wait_until 10 sh -c "[ \$(grep -c 'SIGHUP: configuration reloaded' '$DAEMON_LOG') -ge $((n0 + i)) ]" || break
	i=$((i + 1))
done
kill "$readers" 2>/dev/null
wait "$readers" 2>/dev/null
api GET /suites >/dev/null
[ $(($(reloads) - n0)) = 70 ] && [ "$HTTP_STATUS" = 200 ] && ! grep -q "too many reloads" "$DAEMON_LOG" &&
	kill -0 "$DAEMON_PID" &&
	pass "70 more reloads under reading clients, each taken, the API answering" ||
	fail "70 more reloads" "$(($(reloads) - n0)) taken, /suites $HTTP_STATUS, $(grep -c 'too many reloads' "$DAEMON_LOG") refusals"
