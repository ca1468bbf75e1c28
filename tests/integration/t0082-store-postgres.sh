#!/bin/sh
# tlblabd on a PostgreSQL store (lab.store, store/postgres/): a real server
# of the test's own (tests/pg.sh: initdb, a socket in $TMP only). The
# daemon makes its schema, runs a job through it and answers the API from
# it; `tlblabd -n` shows the URL without its password. When the server
# goes away, requests fail with 503 (store_down), nothing is lost, and the
# daemon reconnects by itself once the server is back. A server that is
# down or refuses the login stops the daemon at start with an error that
# names the store (user, database, host), never the password. And the
# server of a test killed with -9 does not outlive it (tests/pg.sh's
# reaper). A local machine (transport local), no VMs.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
. "$TOP/tests/pg.sh"
trap 'daemon_cleanup; pg_cleanup; rm -rf "$TMP"' EXIT

pg_test "tlblabd on a PostgreSQL store"

daemon_test 3000
SECRET=wrong-password-3d9f0a
lab() { # STORE_URL
	lab_yaml "$TMP/data" "tokens: [$TOKEN]" "store: '$1'"
	echo machines:
	lab_yaml_machine_dirs m1
	echo suites:
	lab_yaml_mprotect_suite quick 120 "workers: 1" "duration: 0.2" "iterations: 2"
}
lab "$PG_URL" >"$TMP/lab.yaml"

log_mark() { touch "$DAEMON_LOG"; LOG_FROM=$(($(wc -l <"$DAEMON_LOG") + 1)); }
log_now() { tail -n +"$LOG_FROM" "$DAEMON_LOG"; }

# status METHOD PATH [BODY]: the HTTP status alone
status() {
	api "$@" "$TOKEN" >/dev/null
	echo "$HTTP_STATUS"
}

# until_status WANT SECONDS METHOD PATH: polls until PATH answers WANT;
# prints the last status
until_status() {
	_want=$1 _end=$(($(date +%s) + $2))
	shift 2
	while :; do
		_s=$(status "$@")
		[ "$_s" = "$_want" ] || [ "$(date +%s)" -ge $_end ] && break
		sleep 0.2
	done
	echo "$_s"
}

# 1. -n: the store's URL, its password hidden
lab "postgresql://tlblab:$SECRET@/tlblab?host=$PG_SOCKET" >"$TMP/lab-pw.yaml"
out=$("$BUILD/tlblabd" -n -c "$TMP/lab-pw.yaml" 2>&1)
if echo "$out" | grep -q "^lab.store: postgresql://tlblab:\*\*\*@/tlblab?host=" && ! echo "$out" | grep -q "$SECRET"; then
	pass "tlblabd -n shows lab.store without its password"
else
	fail "tlblabd -n shows lab.store without its password" "$(echo "$out" | grep store)"
fi

# 2. the daemon on the server: its schema, a job run through it
log_mark
daemon_start "$TMP/lab.yaml" || { fail "tlblabd starts on a PostgreSQL store" "$(log_now | tail -n 5)"; exit 0; }
if log_now | grep -q "store: postgres: user tlblab, database tlblab, host $PG_SOCKET, schema 19"; then
	pass "tlblabd opens the PostgreSQL store and names it"
else
	fail "tlblabd opens the PostgreSQL store and names it" "$(log_now | head -n 5)"
fi
# its connections to the server (the writer and the readers) are
# close-on-exec, as every socket it makes: no child inherits them (what
# it inherited itself, the test's lock and pipes, is not its doing)
bad=
for fi in /proc/"$DAEMON_PID"/fdinfo/*; do
	fd=${fi##*/}
	case $(readlink "/proc/$DAEMON_PID/fd/$fd") in socket:*) ;; *) continue ;; esac
	fl=$(awk '/^flags:/ {print $2}' "$fi" 2>/dev/null)
	[ -n "$fl" ] || continue
	[ $((0$fl & 02000000)) -ne 0 ] || bad="$bad $fd:$(readlink "/proc/$DAEMON_PID/fd/$fd")"
done
# the API's socket and five of the store's (a writer, four readers)
socks=$(ls -l "/proc/$DAEMON_PID/fd" | grep -c 'socket:')
if [ -z "$bad" ] && [ "$socks" -ge 6 ]; then
	pass "the daemon's $socks sockets (the API's, the server's connections) are close-on-exec"
else
	fail "the daemon's sockets are close-on-exec" "not:$bad; $socks sockets"
fi
id=$(api POST /jobs '{"suite":"quick","machines":["m1"]}' "$TOKEN" | jq_py 'J["job"]["id"]')
st=$(job_wait "$id" "done failed cancelled" 120)
runs=$(api GET "/jobs/$id/runs" | jq_py 'len(J["runs"])')
if [ "$st" = done ] && [ "${runs:-0}" -gt 0 ]; then
	pass "a run job on the PostgreSQL store: done, $runs runs"
else
	fail "a run job on the PostgreSQL store" "$st, ${runs:-no} runs; $(log_now | tail -n 5)"
fi
rows=$("$PG_BIN/psql" -X -q -At -h "$PG_SOCKET" -U tlblab -d tlblab -c "SELECT count(*) FROM runs WHERE job_id = $id")
[ "$rows" = "$runs" ] && pass "the runs are rows of the server's database ($rows)" ||
	fail "the runs are rows of the server's database" "psql: $rows, API: $runs"

# 3. the server goes away: 503, nothing lost; back: the daemon reconnects
pg_stop "$TMP/pg" fast
s_list=$(status GET /jobs)
body=$(api GET "/jobs/$id" "$TOKEN")
s_job=$(api_status)
s_post=$(status POST /jobs '{"suite":"quick","machines":["m1"]}')
if [ "$s_list" = 503 ] && [ "$s_job" = 503 ] && [ "$s_post" = 503 ] && echo "$body" | grep -q store_down &&
	kill -0 "$DAEMON_PID" 2>/dev/null; then
	pass "the server down: GET /jobs, GET /jobs/$id and POST /jobs answer 503 store_down; the daemon stays up"
else
	fail "the server down: 503" "list $s_list, job $s_job ($body), submit $s_post"
fi
pg_start_again "$TMP/pg" || { fail "the server starts again" "see above"; exit 0; }
s=$(until_status 200 30 GET "/jobs/$id")
st=$(api GET "/jobs/$id" "$TOKEN" | jq_py 'J["job"]["state"]')
if [ "$s" = 200 ] && [ "$st" = done ]; then
	pass "the server back: the daemon reconnects, the job is there (done)"
else
	fail "the server back: the daemon reconnects" "status $s, job $st; $(log_now | tail -n 5)"
fi
s=$(until_status 201 30 POST /jobs '{"suite":"quick","machines":["m1"]}')
id2=$(jq_py 'J["job"]["id"]' <"$TMP/api.body" 2>/dev/null)
st=$(job_wait "$id2" "done failed cancelled" 120)
[ "$s" = 201 ] && [ "$st" = done ] && pass "a job submitted after the reconnect runs: done" ||
	fail "a job after the reconnect" "submit $s, job ${id2:-none} $st; $(log_now | tail -n 5)"
if log_now | grep -q "$SECRET\|password="; then
	fail "no password in the daemon's log" "$(log_now | grep "$SECRET\|password=" | head -n 3)"
else
	pass "no password in the daemon's log"
fi
daemon_stop

# 4. at start: a login refused, a server down: a clear error, no password
start_fails() { # NAME YAML: the daemon exits at start; its log in $TMP/start.log
	"$BUILD/tlblabd" -c "$2" >"$TMP/start.log" 2>&1 &
	_p=$!
	_i=0
	while kill -0 "$_p" 2>/dev/null && [ $_i -lt 150 ]; do
		_i=$((_i + 1))
		sleep 0.1
	done
	if kill -0 "$_p" 2>/dev/null; then
		kill -9 "$_p"
		wait "$_p"
		fail "$1: tlblabd stops at start" "still running after 15 s"
		return 1
	fi
	wait "$_p"
	[ $? -ne 0 ] || { fail "$1: tlblabd stops at start" "exit 0"; return 1; }
}
lab "postgresql://tlblab_pw:$SECRET@/tlblab?host=$PG_SOCKET" >"$TMP/lab-refused.yaml"
if start_fails "a login refused" "$TMP/lab-refused.yaml"; then
	if grep -q "user tlblab_pw, database tlblab, host $PG_SOCKET" "$TMP/start.log" &&
		grep -q "password authentication failed" "$TMP/start.log" && ! grep -q "$SECRET" "$TMP/start.log"; then
		pass "a login refused: tlblabd stops, naming the store and why, without the password"
	else
		fail "a login refused: the error" "$(cat "$TMP/start.log")"
	fi
fi
pg_stop "$TMP/pg" fast
if start_fails "the server down" "$TMP/lab-pw.yaml"; then
	if grep -q "user tlblab, database tlblab, host $PG_SOCKET: cannot connect" "$TMP/start.log" &&
		! grep -q "$SECRET" "$TMP/start.log"; then
		pass "the server down: tlblabd stops, naming the store, without the password"
	else
		fail "the server down: the error" "$(cat "$TMP/start.log")"
	fi
fi

# tests/pg.sh's reaper: a test killed with -9 (no trap runs) leaves no
# server behind; the reaper stops it once the test's shell is gone
sh -c 'TMP=$1 TOP=$2; . "$TOP/tests/pg.sh"; pg_start "$TMP/orphan" >/dev/null 2>&1 || exit 1
	sed -n 1p "$TMP/orphan/data/postmaster.pid" >"$TMP/orphan.pid.tmp" && mv "$TMP/orphan.pid.tmp" "$TMP/orphan.pid"
	exec sleep 300' orphan-test "$TMP" "$TOP" &
ORPHAN=$!
if wait_until 60 test -s "$TMP/orphan.pid"; then
	srv=$(cat "$TMP/orphan.pid")
	kill -9 "$ORPHAN"
	wait "$ORPHAN" 2>/dev/null
	end=$(($(date +%s) + 30))
	while kill -0 "$srv" 2>/dev/null && [ "$(date +%s)" -lt $end ]; do sleep 0.2; done
	if kill -0 "$srv" 2>/dev/null; then
		kill -9 "$srv"
		fail "tests/pg.sh: the server of a test killed with -9 is stopped" "pid $srv still ran after 30 s"
	else
		pass "tests/pg.sh: the server of a test killed with -9 is stopped by its reaper"
	fi
else
	kill -9 "$ORPHAN" 2>/dev/null
	fail "tests/pg.sh: a test's server for the reaper's check starts" "$(tail -n 3 "$TMP/orphan/run/server.log" 2>/dev/null)"
fi
exit 0
