# Helpers to run tlblabd in a test. Source after tests/lib.sh.
#   daemon_start CONFIG   starts $BUILD/tlblabd -c CONFIG, waits for /health
#   daemon_kill9          SIGKILL, as a crash
#   daemon_stop           SIGTERM and wait
#   api METHOD PATH [BODY] [TOKEN]   curl to the API; prints the body and
#                         leaves the HTTP status in $HTTP_STATUS (when run
#                         in a command substitution, `api_status` prints it)
#   job_wait ID STATES SECONDS       polls until the job's state is one of
#                         STATES (space-separated); prints it
#   jq_py EXPR            evaluates a Python expression over J, the JSON
#                         read from stdin, and prints it
# Needs DAEMON_PORT set (the listen port of the config); DAEMON_AGENT, when
# set, is the agent the daemon uploads (tests with QEMU guests set it to the
# static $GUEST_AGENT); DAEMON_ARGS, more options for it (split on spaces).
# shellcheck shell=sh

DAEMON_PID=
DAEMON_LOG=$TMP/tlblabd.log

daemon_start() {
	# shellcheck disable=SC2086
	"$BUILD/tlblabd" -c "$1" ${DAEMON_AGENT:+-a "$DAEMON_AGENT"} ${DAEMON_ARGS:-} >>"$DAEMON_LOG" 2>&1 &
	DAEMON_PID=$!
	_i=0
	until curl -fs -m 2 "http://127.0.0.1:$DAEMON_PORT/api/v1/health" >/dev/null 2>&1; do
		_i=$((_i + 1))
		if [ $_i -gt 100 ] || ! kill -0 "$DAEMON_PID" 2>/dev/null; then
			echo "# tlblabd did not start:"
			sed 's/^/#   /' "$DAEMON_LOG" | tail -n 20
			return 1
		fi
		sleep 0.1
	done
}

daemon_kill9() {
	[ -n "$DAEMON_PID" ] && kill -9 "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}

daemon_stop() {
	[ -n "$DAEMON_PID" ] || return 0
	kill "$DAEMON_PID" 2>/dev/null
	_i=0
	while kill -0 "$DAEMON_PID" 2>/dev/null && [ $_i -lt 100 ]; do
		_i=$((_i + 1))
		sleep 0.1
	done
	kill -9 "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}

api() {
	_m=$1 _p=$2 _b=${3:-} _t=${4:-}
	set -- -s -m 10 -o "$TMP/api.body" -w '%{http_code}' -X "$_m"
	[ -n "$_t" ] && set -- "$@" -H "Authorization: Bearer $_t"
	[ -n "$_b" ] && set -- "$@" -H 'Content-Type: application/json' --data-binary "$_b"
	HTTP_STATUS=$(curl "$@" "http://127.0.0.1:$DAEMON_PORT/api/v1$_p")
	echo "$HTTP_STATUS" >"$TMP/api.status"
	cat "$TMP/api.body"
}

api_status() {
	cat "$TMP/api.status"
}

jq_py() {
	$PY -c "import json,sys; J=json.load(sys.stdin); print($1)"
}

job_wait() {
	_id=$1 _want=$2 _secs=$3
	_end=$(($(date +%s) + _secs))
	while :; do
		_st=$(curl -s -m 5 "http://127.0.0.1:$DAEMON_PORT/api/v1/jobs/$_id" | jq_py 'J["job"]["state"]' 2>/dev/null)
		case " $_want " in *" $_st "*) echo "$_st"; return 0 ;; esac
		[ "$(date +%s)" -ge $_end ] && { echo "${_st:-unreachable}"; return 1; }
		sleep 0.3
	done
}

# Stops the daemon at exit too (composes with sshd.sh's trap).
daemon_cleanup() {
	daemon_stop
}
