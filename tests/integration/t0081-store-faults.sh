#!/bin/sh
# The store fails under a real tlblabd (issue 12, section 5): SQLite is
# made to fail (TLBLAB_STORE_FAULT, an I/O error, honoured by the tests'
# build of the daemon only: build/tlblabd-faults) at one step of a job's
# life per daemon start: an iteration the run ingests, a sample, the
# machine's hello, the stage's end, and the comparison a finished A/B job
# keeps. Each time the daemon stays up (/health answers), its log names
# the store error, the job still ends done (the A/B job with a verdict),
# every iteration is stored once, and the machine is not blamed (it stays
# good: the store failed, not the machine). A GET whose read fails is 500,
# not a job without its stages. Then the same with a full disk:
# the data directory on a small tmpfs that a filler file fills, freed while
# the daemon runs. A local machine (transport local), no VMs.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
MNT=
trap 'daemon_cleanup; [ -n "$MNT" ] && umount "$MNT" 2>/dev/null; rm -rf "$TMP"' EXIT

daemon_test 11000
DATA=$TMP/data

lab() { # DATA_DIR
	lab_yaml "$1" "tokens: [$TOKEN]"
	echo machines:
	lab_yaml_machine_dirs m1
	echo suites:
	lab_yaml_mprotect_suite quick 120 "mode: [threads, processes]" "workers: 2" "duration: 0.2" "iterations: 2"
}
lab "$DATA" >"$TMP/lab.yaml"

# the log lines of the current daemon start only
log_mark() { touch "$DAEMON_LOG"; LOG_FROM=$(($(wc -l <"$DAEMON_LOG") + 1)); }
log_now() { tail -n +"$LOG_FROM" "$DAEMON_LOG"; }

# start FAULT: a daemon whose store fails the next statement with FAULT
start() {
	log_mark
	if [ -n "$1" ]; then
		TLBLAB_STORE_FAULT=$1
		export TLBLAB_STORE_FAULT
	fi
	daemon_start "$TMP/lab.yaml"
	_st=$?
	unset TLBLAB_STORE_FAULT
	return $_st
}

health_ok() {
	[ "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$DAEMON_PORT/api/v1/health")" = 200 ]
}

# runs ID: "N U": the job's runs and its distinct (spec, case, iteration)
runs() {
	api GET "/jobs/$1/runs" | jq_py 'str(len(J["runs"])) + " " + str(len(set((r["spec"], r["case"], r["iteration"]) for r in J["runs"])))'
}

# 0. the daemon `make` builds honours no fault switch: it says it ignores
#    it, and its store works; the faults below come from the tests' build
DAEMON_BIN=$BUILD/tlblabd
start "1:CREATE" || { fail "the production tlblabd starts with TLBLAB_STORE_FAULT set" "see log"; exit 0; }
if log_now | grep -q 'TLBLAB_STORE_FAULT is ignored' && ! log_now | grep -q 'will fail' && health_ok; then
	pass "the production tlblabd ignores TLBLAB_STORE_FAULT and says so"
else
	fail "the production tlblabd ignores TLBLAB_STORE_FAULT and says so" "log: $(log_now | tail -n 3)"
fi
daemon_stop
DAEMON_BIN=$BUILD/tlblabd-faults

# 1. the seeded A/B jobs (done, no verdict yet: 1, and 5 and 6 of the
#    per-patch pair) keep their comparisons though the store fails to take
#    the first one (the newest, 6: the backfill goes newest first)
daemon_seed "$TMP/lab.yaml" $PY "$TOP/tests/web/seed.py" "$DATA/tlblab.db" dashboard
start "1:INSERT INTO comparisons" || { fail "tlblabd starts with a fault" "see log"; exit 0; }
v=
i=0
while [ $i -lt 100 ]; do
	v=$(api GET /jobs/6 | jq_py 'J["job"]["verdict"] or ""')
	[ -n "$v" ] && [ -n "$(api GET /jobs/1 | jq_py 'J["job"]["verdict"] or ""')" ] && break
	i=$((i + 1))
	sleep 0.2
done
if [ -n "$v" ] && log_now | grep -q 'job 6: comparison: .*store: could not keep the comparison'; then
	pass "a comparison the store failed to keep is kept on a later pass (verdict $v)"
else
	fail "comparison kept after a store error" "verdict '$v'; log: $(log_now | tail -n 5)"
fi
health_ok && pass "/health answers after the comparison's store error" || fail "/health" "no 200"
daemon_stop

# a GET whose read fails part-way is the store's error (500), not a job
# without stages; once the fault is gone it reads; 404 stays for no job
start "1:repeat_of, note, specs, host, cpus FROM stages" || { fail "tlblabd starts with a read fault" "see log"; exit 0; }
body=$(api GET /jobs/1)
s1=$(api_status)
api GET /jobs/1 | jq_py 'len(J["job"]["stages"])' >"$TMP/nstages"
s2=$(api_status)
api GET /jobs/999 >/dev/null
s3=$HTTP_STATUS
if [ "$s1" = 500 ] && echo "$body" | grep -q '"store_error"' && [ "$s2" = 200 ] &&
   [ "$(cat "$TMP/nstages")" -gt 0 ] && [ "$s3" = 404 ] && log_now | grep -q 'could not read job 1: store'; then
	pass "GET /jobs/1 on a failed read: 500 store_error, logged; then 200 with its stages; no job: 404"
else
	fail "GET on a failed read" "$s1 $body; then $s2, $(cat "$TMP/nstages") stages; 404? $s3"
fi
daemon_stop

# 2. a run job, once with no fault: what a job stores
start "" || { fail "tlblabd restarts" "see log"; exit 0; }
id=$(api POST /jobs '{"suite":"quick","machines":["m1"]}' "$TOKEN" | jq_py 'J["job"]["id"]')
st=$(job_wait "$id" "done failed cancelled" 120)
REF=$(runs "$id")
[ "$st" = done ] && [ "${REF%% *}" -gt 0 ] && [ "${REF%% *}" = "${REF##* }" ] &&
	pass "a run job without faults: done, $REF runs" || fail "run job without faults" "$st, runs $REF"
daemon_stop

# 3. one fault per daemon start, at a step of the job's life:
#    fault, what it hits, the attempt the run stage ends on (a store error
#    in the run retries the stage; one at its end is recorded again)
for f in "1:INSERT INTO runs|an iteration the run ingests|1" \
	 "1:INSERT INTO samples|a sample the run ingests|1" \
	 "1:SET host|the machine's hello|1" \
	 "1:UPDATE stages SET state = ?2, error_class|the stage's end|0"; do
	fault=${f%%|*} rest=${f#*|}
	what=${rest%%|*} attempt=${rest##*|}
	start "$fault" || { fail "tlblabd starts ($what)" "see log"; continue; }
	id=$(api POST /jobs '{"suite":"quick","machines":["m1"]}' "$TOKEN" | jq_py 'J["job"]["id"]')
	st=$(job_wait "$id" "done failed cancelled" 120)
	job=$(api GET "/jobs/$id")
	att=$(echo "$job" | jq_py 'J["job"]["stages"][0]["attempt"]')
	health=$(api GET /machines | jq_py '[m["health"] for m in J["machines"] if m["name"] == "m1"][0]')
	n=$(runs "$id")
	if ! log_now | grep -q "will fail (TLBLAB_STORE_FAULT)"; then
		fail "store fault at $what" "the fault was not armed"
	elif [ "$st" != done ]; then
		fail "store fault at $what: the job completes" "$st: $(echo "$job" | jq_py 'J["job"]["error"]')"
	elif ! log_now | grep -q "job $id: stage [0-9]*: .*store: .*a database error"; then
		fail "store fault at $what: the daemon log names the store error" "$(log_now | tail -n 8)"
	elif [ "$n" != "$REF" ]; then
		fail "store fault at $what: every iteration once" "runs $n, without faults $REF"
	elif [ "$att" != "$attempt" ]; then
		fail "store fault at $what: attempts" "ended on attempt $att, expected $attempt"
	elif [ "$health" != good ]; then
		fail "store fault at $what: the machine is not blamed" "m1 is $health"
	elif ! health_ok; then
		fail "store fault at $what: /health answers" "no 200"
	else
		pass "store fault at $what: logged, the job is done (attempt $att), runs $n as without faults, m1 good, /health 200"
	fi
	daemon_stop
done

# 4. a full disk: the store on a tmpfs that a filler file fills while a
#    job runs; the filler goes, and the job completes
MNT=$TMP/small
mkdir -p "$MNT"
if ! mount -t tmpfs -o size=4m tmpfs "$MNT" 2>/dev/null; then
	MNT=
	skip "full disk" "cannot mount a tmpfs here"
	exit 0
fi
lab "$MNT/data" >"$TMP/lab.yaml"
start "" || { fail "tlblabd starts on the small tmpfs" "see log"; exit 0; }
# the disk fills as soon as the store grows: the job's first writes
# (its stage starting) may still fit, the run's rows do not
id=$(api POST /jobs '{"suite":"quick","machines":["m1"]}' "$TOKEN" | jq_py 'J["job"]["id"]')
dd if=/dev/zero of="$MNT/filler" bs=64k 2>/dev/null
i=0
until log_now | grep -q "the database or its disk is full" || [ $i -ge 300 ]; do
	i=$((i + 1))
	sleep 0.1
done
full=$(log_now | grep -c "the database or its disk is full")
health_ok && h=200 || h=no
rm -f "$MNT/filler"
st=$(job_wait "$id" "done failed cancelled" 180)
n=$(runs "$id")
if [ "$full" -gt 0 ] && [ "$h" = 200 ] && [ "$st" = done ] && [ "$n" = "$REF" ]; then
	pass "a full disk: $full store errors logged, /health 200 meanwhile, the job is done once freed, runs $n"
else
	fail "a full disk" "errors logged $full, /health $h, job $st, runs $n (without faults $REF); $(log_now | tail -n 6)"
fi
daemon_stop
