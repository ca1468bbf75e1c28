#!/bin/sh
# Daemons on one PostgreSQL store share one lab (lab.store, a server of
# the test's own: tests/pg.sh): four local machines, each daemon with its
# own port and data directory, and a webhook receiver on loopback for the
# job events. 24 jobs submitted to three daemons in turn run on any
# machine: each run stage is started once (the daemons' logs count the
# starts, under contention: every daemon claims from the same pending
# stages), each machine is leased by one stage at a time (sampled all
# along from the server, and checked again from the stages' times once
# they are done), and each job is announced once, by the one daemon that
# leads the tracks and webhooks. Then a daemon is killed with -9 while it
# runs a job's stage and leads: the other takes the stage over within the
# lease timeout (lab.lease_timeout, 5 s here) and the lead too, and the
# job ends done, each iteration stored once, announced once. No VMs.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
. "$TOP/tests/pg.sh"
PID_A= PID_B= PID_C= HOOK_PID=
trap 'for p in $PID_A $PID_B $PID_C $HOOK_PID; do kill -9 "$p" 2>/dev/null; done; pg_cleanup; rm -rf "$TMP"' EXIT

pg_test "two daemons on one PostgreSQL store"

daemon_test 6000
PA=$DAEMON_PORT PB=$((DAEMON_PORT + 1)) PC=$((DAEMON_PORT + 2)) HOOK_PORT=$((DAEMON_PORT + 3))
LEASE=5 NJOBS=24

# the webhook receiver: each POST of the job events a file
webhook_receiver "$TMP/hook" "$HOOK_PORT"

lab() { # DATA_DIR PORT
	DAEMON_PORT=$2
	lab_yaml "$1" "tokens: [$TOKEN]" "store: '$PG_URL'" "lease_timeout: ${LEASE}s"
	echo machines:
	for m in m1 m2 m3 m4; do lab_yaml_machine_dirs $m; done
	echo suites:
	lab_yaml_mprotect_suite quick 120 "workers: 1" "duration: 0.3" "iterations: 2"
	lab_yaml_mprotect_suite slow 120 "workers: 1" "duration: 2" "iterations: 6"
	echo notify:
	echo "  - {name: t0084, url: 'http://127.0.0.1:$HOOK_PORT/hook', events: [job]}"
}
lab "$TMP/a" "$PA" >"$TMP/a.yaml"
lab "$TMP/b" "$PB" >"$TMP/b.yaml"
lab "$TMP/c" "$PC" >"$TMP/c.yaml"

# on A|B|C: the API calls and daemon_* helpers that follow talk to that daemon
on() {
	case $1 in
	A) DAEMON_PORT=$PA DAEMON_LOG=$TMP/a.log DAEMON_PID=$PID_A ;;
	B) DAEMON_PORT=$PB DAEMON_LOG=$TMP/b.log DAEMON_PID=$PID_B ;;
	C) DAEMON_PORT=$PC DAEMON_LOG=$TMP/c.log DAEMON_PID=$PID_C ;;
	esac
}
start() { # A|B|C
	on "$1"
	daemon_start "$TMP/$(echo "$1" | tr ABC abc).yaml" || { fail "tlblabd $1 starts" "$(tail -n 5 "$DAEMON_LOG")"; exit 0; }
	case $1 in A) PID_A=$DAEMON_PID ;; B) PID_B=$DAEMON_PID ;; C) PID_C=$DAEMON_PID ;; esac
}
sql() {
	"$PG_BIN/psql" -X -q -At -h "$PG_SOCKET" -U tlblab -d tlblab -c "$1"
}
# the daemon that leads the tracks and webhooks: A, B, C, or "-"
leader() {
	_l=$(sql "SELECT coalesce(d.pid, 0) FROM leaders l LEFT JOIN daemons d ON d.id = l.daemon_id WHERE l.role = 'tracker'")
	case ${_l:-0} in "$PID_A") echo A ;; "$PID_B") echo B ;; "$PID_C") echo C ;; *) echo - ;; esac
}
# the job events received: "POSTS DISTINCT-JOBS"; of one job: its posts
hooks_seen() {
	$PY - "$TMP/hook" "${1:-}" <<'PYEOF'
import json, os, sys
jobs = [json.load(open(os.path.join(sys.argv[1], f)))["job"]["id"] for f in sorted(os.listdir(sys.argv[1]))]
print(jobs.count(int(sys.argv[2])) if sys.argv[2] else "%d %d" % (len(jobs), len(set(jobs))))
PYEOF
}
# machines that two running stages of different jobs hold at once
DOUBLE="SELECT count(*) FROM (SELECT machine FROM stages WHERE state = 'running' AND kind IN ('boot', 'run')
	GROUP BY machine HAVING count(DISTINCT job_id) > 1) x"

# 1. three daemons, NJOBS jobs submitted to each in turn
start A
start B
start C
for i in $(seq 1 $NJOBS); do
	case $((i % 3)) in 0) on A ;; 1) on B ;; 2) on C ;; esac
	api POST /jobs '{"suite":"quick"}' "$TOKEN" >/dev/null
done
end=$(($(date +%s) + 240)) worst=0 samples=0 left=$NJOBS
while [ "$(date +%s)" -lt $end ]; do
	d=$(sql "$DOUBLE")
	[ "${d:-0}" -gt "$worst" ] && worst=$d
	samples=$((samples + 1))
	left=$(sql "SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')")
	[ "$left" = 0 ] && break
	sleep 0.2
done
done_n=$(sql "SELECT count(*) FROM jobs WHERE state = 'done'")
[ "$done_n" = $NJOBS ] && pass "$NJOBS jobs submitted to three daemons: all done" ||
	fail "$NJOBS jobs on three daemons" "$done_n done, $left left; A: $(tail -n 3 "$TMP/a.log"); B: $(tail -n 3 "$TMP/b.log"); C: $(tail -n 3 "$TMP/c.log")"
[ "$worst" = 0 ] && pass "no machine was leased by two stages at once ($samples samples)" ||
	fail "no machine leased twice" "$worst machines held by two jobs' stages at once"
overlap=$(sql "SELECT count(*) FROM stages a JOIN stages b ON a.machine = b.machine AND a.job_id < b.job_id
	WHERE a.kind IN ('boot', 'run') AND b.kind IN ('boot', 'run') AND a.started < b.finished AND b.started < a.finished")
[ "$overlap" = 0 ] && pass "the stages' times on each machine do not overlap" ||
	fail "the stages' times on each machine do not overlap" "$overlap overlapping pairs"
# every start a daemon logs is a claim it won: one per run stage
starts=
for d in a b c; do starts="$starts $(grep -c 'run on m[1-4]: started' "$TMP/$d.log")"; done
set -- $starts
runs=$(sql "SELECT count(*) FROM stages WHERE kind = 'run'")
retried=$(sql "SELECT count(*) FROM stages WHERE kind = 'run' AND attempt > 0")
if [ $(($1 + $2 + $3)) = "$runs" ] && [ "$runs" = $NJOBS ] && [ "$retried" = 0 ]; then
	pass "each of the $runs run stages was claimed once: $(($1 + $2 + $3)) starts (A $1, B $2, C $3), none retried"
else
	fail "each run stage claimed once" "starts A $1, B $2, C $3 for $runs run stages, $retried retried"
fi

# the job events: each job's once, all of them sent by the leader alone
wait_until 60 sh -c "[ \$(ls '$TMP/hook' | wc -l) -ge $NJOBS ]"
seen=$(hooks_seen)
lead=$(leader)
senders=
for d in a b c; do grep -q 'webhook t0084: delivery [0-9]* delivered' "$TMP/$d.log" && senders="$senders$(echo $d | tr abc ABC)"; done
if [ "$seen" = "$NJOBS $NJOBS" ] && [ "$lead" != - ] && [ "$senders" = "$lead" ] &&
	[ "$(grep -l 'tracker: this daemon ([0-9]*) leads' "$TMP/a.log" "$TMP/b.log" "$TMP/c.log" | wc -l)" = 1 ]; then
	pass "each job was announced once ($seen: posts, jobs), by the daemon that leads the tracks and webhooks ($lead)"
else
	fail "one daemon announces each job once" "posts and jobs: $seen; leader $lead; sent by: ${senders:-none}"
fi

# 2. A runs a job's stage and leads, and is killed: B takes both over
# within the lease
for d in B C; do
	on $d
	daemon_stop
done
PID_B= PID_C=
on A
# a leader that stops hands the lead on at once: A leads now, if it did not
end=$(($(date +%s) + 20))
until [ "$(leader)" = A ] || [ "$(date +%s)" -ge $end ]; do sleep 0.2; done
[ "$(leader)" = A ] && pass "B and C stopped: A leads the tracks and webhooks" ||
	fail "A leads once B and C stopped" "the leader is $(leader)"
id=$(api POST /jobs '{"suite":"slow","machines":["m1"]}' "$TOKEN" | jq_py 'J["job"]["id"]')
end=$(($(date +%s) + 60))
until [ "$(sql "SELECT count(*) FROM stages WHERE job_id = $id AND kind = 'run' AND state = 'running'")" = 1 ]; do
	[ "$(date +%s)" -lt $end ] || { fail "A runs the slow job" "$(api GET "/jobs/$id" "$TOKEN")"; exit 0; }
	sleep 0.2
done
B_FROM=$(($(wc -l <"$TMP/b.log") + 1))
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
until [ "$(leader)" = B ] || [ "$(date +%s)" -ge $end ]; do sleep 0.2; done
took=$(($(date +%s) - t0))
if [ "$(leader)" = B ] && [ "$took" -le $((LEASE + 5)) ] &&
	tail -n +"$B_FROM" "$TMP/b.log" | grep -q "tracker: this daemon ([0-9]*) leads"; then
	pass "B took the lead of the tracks and webhooks over in ${took} s"
else
	fail "B takes the lead over within the lease timeout" "the leader is $(leader) after ${took} s"
fi
on B
st=$(job_wait "$id" "done failed cancelled" 120)
n=$(api GET "/jobs/$id/runs" "$TOKEN" | jq_py 'str(len(J["runs"])) + " " + str(len(set((r["spec"], r["case"], r["iteration"]) for r in J["runs"])))')
if [ "$st" = done ] && [ "${n%% *}" -gt 0 ] && [ "${n%% *}" = "${n##* }" ]; then
	pass "the job A was running ends done on B, each iteration once ($n)"
else
	fail "the job A was running ends done on B" "$st, runs $n; $(tail -n 5 "$TMP/b.log")"
fi
end=$(($(date +%s) + 30))
until [ "$(hooks_seen "$id")" != 0 ] || [ "$(date +%s)" -ge $end ]; do sleep 0.2; done
posts=$(hooks_seen "$id")
if [ "$posts" = 1 ] && tail -n +"$B_FROM" "$TMP/b.log" | grep -q 'webhook t0084: delivery [0-9]* delivered'; then
	pass "its job was announced once, by B"
else
	fail "B announces the job once" "$posts posts; B: $(tail -n +"$B_FROM" "$TMP/b.log" | grep webhook | tail -n 3)"
fi
leased=$(sql "SELECT count(*) FROM machines WHERE lease_stage IS NOT NULL")
[ "$leased" = 0 ] && pass "no machine stays leased" || fail "no machine stays leased" "$leased leased"
daemon_stop
PID_B=
exit 0
