#!/bin/sh
# Two tlblabd on one PostgreSQL store share one lab (lab.store, a server
# of the test's own: tests/pg.sh): two local machines, each daemon with
# its own port and data directory. Jobs submitted to either run on
# either machine, each machine leased by one stage at a time (sampled all
# along from the server, and checked again from the stages' times once
# they are done). Then a daemon is killed with -9 while it runs a job's
# stage: the other takes the stage over within the lease timeout
# (lab.lease_timeout, 5 s here) and the job ends done, each iteration
# stored once. No VMs.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
. "$TOP/tests/pg.sh"
PID_A= PID_B=
trap 'for p in $PID_A $PID_B; do kill -9 "$p" 2>/dev/null; done; pg_cleanup; rm -rf "$TMP"' EXIT

if ! why=$(pg_available); then
	skip "two daemons on one PostgreSQL store" "$why"
	exit 0
fi
pg_start "$TMP/pg" || { fail "a PostgreSQL server starts (tests/pg.sh)" "see above"; exit 0; }

daemon_test 6000
PA=$DAEMON_PORT PB=$((DAEMON_PORT + 1))
LEASE=5
lab() { # DATA_DIR PORT
	DAEMON_PORT=$2
	lab_yaml "$1" "tokens: [$TOKEN]" "store: '$PG_URL'" "lease_timeout: ${LEASE}s"
	echo machines:
	lab_yaml_machine_dirs m1
	lab_yaml_machine_dirs m2
	echo suites:
	lab_yaml_mprotect_suite quick 120 "workers: 1" "duration: 0.3" "iterations: 2"
	lab_yaml_mprotect_suite slow 120 "workers: 1" "duration: 2" "iterations: 6"
}
lab "$TMP/a" "$PA" >"$TMP/a.yaml"
lab "$TMP/b" "$PB" >"$TMP/b.yaml"

# on A|B: the API calls and daemon_* helpers that follow talk to that daemon
on() {
	case $1 in
	A) DAEMON_PORT=$PA DAEMON_LOG=$TMP/a.log DAEMON_PID=$PID_A ;;
	B) DAEMON_PORT=$PB DAEMON_LOG=$TMP/b.log DAEMON_PID=$PID_B ;;
	esac
}
start() { # A|B
	on "$1"
	daemon_start "$TMP/$(echo "$1" | tr AB ab).yaml" || { fail "tlblabd $1 starts" "$(tail -n 5 "$DAEMON_LOG")"; exit 0; }
	case $1 in A) PID_A=$DAEMON_PID ;; B) PID_B=$DAEMON_PID ;; esac
}
sql() {
	"$PG_BIN/psql" -X -q -At -h "$PG_SOCKET" -U tlblab -d tlblab -c "$1"
}
# machines that two running stages of different jobs hold at once
DOUBLE="SELECT count(*) FROM (SELECT machine FROM stages WHERE state = 'running' AND kind IN ('boot', 'run')
	GROUP BY machine HAVING count(DISTINCT job_id) > 1) x"

# 1. both daemons, six jobs submitted to one or the other
start A
start B
ids=
for i in 1 2 3 4 5 6; do
	case $((i % 2)) in 0) on A ;; 1) on B ;; esac
	id=$(api POST /jobs '{"suite":"quick"}' "$TOKEN" | jq_py 'J["job"]["id"]')
	ids="$ids $id"
done
end=$(($(date +%s) + 180)) worst=0 samples=0 left=6
while [ "$(date +%s)" -lt $end ]; do
	d=$(sql "$DOUBLE")
	[ "${d:-0}" -gt "$worst" ] && worst=$d
	samples=$((samples + 1))
	left=$(sql "SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')")
	[ "$left" = 0 ] && break
	sleep 0.2
done
done_n=$(sql "SELECT count(*) FROM jobs WHERE state = 'done'")
[ "$done_n" = 6 ] && pass "six jobs submitted to two daemons: all done" ||
	fail "six jobs on two daemons" "$done_n done, $left left; A: $(tail -n 3 "$TMP/a.log"); B: $(tail -n 3 "$TMP/b.log")"
[ "$worst" = 0 ] && pass "no machine was leased by two stages at once ($samples samples)" ||
	fail "no machine leased twice" "$worst machines held by two jobs' stages at once"
overlap=$(sql "SELECT count(*) FROM stages a JOIN stages b ON a.machine = b.machine AND a.job_id < b.job_id
	WHERE a.kind IN ('boot', 'run') AND b.kind IN ('boot', 'run') AND a.started < b.finished AND b.started < a.finished")
[ "$overlap" = 0 ] && pass "the stages' times on each machine do not overlap" ||
	fail "the stages' times on each machine do not overlap" "$overlap overlapping pairs"
owners=$(sql "SELECT string_agg(n::text, ' ') FROM (SELECT count(*) AS n FROM stages WHERE kind = 'run' GROUP BY owner ORDER BY owner) x")
echo "# run stages per daemon: $owners"

# 2. A runs a job's stage and is killed: B takes it over within the lease
on B
daemon_stop
PID_B=
on A
id=$(api POST /jobs '{"suite":"slow","machines":["m1"]}' "$TOKEN" | jq_py 'J["job"]["id"]')
end=$(($(date +%s) + 60))
until [ "$(sql "SELECT count(*) FROM stages WHERE job_id = $id AND kind = 'run' AND state = 'running'")" = 1 ]; do
	[ "$(date +%s)" -lt $end ] || { fail "A runs the slow job" "$(api GET "/jobs/$id" "$TOKEN")"; exit 0; }
	sleep 0.2
done
start B
on A
t0=$(date +%s)
daemon_kill9
PID_A=
end=$((t0 + LEASE + 20))
att=0
while [ "$(date +%s)" -lt $end ]; do
	att=$(sql "SELECT attempt FROM stages WHERE job_id = $id AND kind = 'run'")
	[ "$att" = 1 ] && break
	sleep 0.2
done
took=$(($(date +%s) - t0))
if [ "$att" = 1 ] && [ "$took" -le $((LEASE + 5)) ] && grep -q "interrupted; queued again (taken over from daemon" "$TMP/b.log"; then
	pass "A killed with -9: B took its stage over in ${took} s (lease timeout ${LEASE} s)"
else
	fail "B takes A's stage over within the lease timeout" "attempt $att after ${took} s; B: $(tail -n 5 "$TMP/b.log")"
fi
on B
st=$(job_wait "$id" "done failed cancelled" 120)
n=$(api GET "/jobs/$id/runs" "$TOKEN" | jq_py 'str(len(J["runs"])) + " " + str(len(set((r["spec"], r["case"], r["iteration"]) for r in J["runs"])))')
if [ "$st" = done ] && [ "${n%% *}" -gt 0 ] && [ "${n%% *}" = "${n##* }" ]; then
	pass "the job A was running ends done on B, each iteration once ($n)"
else
	fail "the job A was running ends done on B" "$st, runs $n; $(tail -n 5 "$TMP/b.log")"
fi
leased=$(sql "SELECT count(*) FROM machines WHERE lease_stage IS NOT NULL")
[ "$leased" = 0 ] && pass "no machine stays leased" || fail "no machine stays leased" "$leased leased"
daemon_stop
PID_B=
exit 0
