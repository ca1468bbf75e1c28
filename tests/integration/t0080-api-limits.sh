#!/bin/sh
# What a client without a token, or a token holder, can take from tlblabd
# (issue 12): a real daemon on loopback, attacked the ways the security
# review did (tests/tools/api-attacks.py): unauthenticated 1 MiB POSTs,
# many connections from one address, request headers that trickle in, the
# samples of a long run, hundreds of query arguments, a cache key forged
# with an escaped '&', and more queued work than a token may have.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
trap 'daemon_cleanup; rm -rf "$TMP"' EXIT

if [ ! -x "$BUILD/tlblabd" ]; then
	fail "tlblabd is built" "no $BUILD/tlblabd (make)"
	exit 0
fi
daemon_test 14000
OTHER=t0080-other-0123456789abcdef
DB=$TMP/data/tlblab.db
DEAD=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
NSAMPLES=12000

{
	lab_yaml "$TMP/data" "tokens: [$TOKEN, $OTHER]" "max_body: 1048576" "header_timeout: 2" \
		"max_connections_per_address: 16" "max_jobs_per_token: 2" "max_boots_per_token: 9"
	echo machines:
	lab_yaml_machine_dirs m1
	lab_yaml_builder_unreachable "$DEAD"
	echo suites:
	lab_yaml_hold_suite	# holds m1 until the daemon stops
} >"$TMP/lab.yaml"

# the daemon makes the store; job 1 (by mallory) and job 2 (NSAMPLES
# per-second samples) are written into it while it is stopped
daemon_seed "$TMP/lab.yaml" $PY - "$DB" "$NSAMPLES" <<'PYEOF'
import json, sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
now = time.time()
for jid, who in ((1, "mallory"), (2, "bob")):
    db.execute("INSERT INTO jobs (id, kind, state, suite, suite_json, submitter, created, started, finished) "
               "VALUES (?, 'run', 'done', 'hold', '[]', ?, ?, ?, ?)", (jid, who, now, now, now))
    db.execute("INSERT INTO stages (id, job_id, seq, kind, state, machine) VALUES (?, ?, 0, 'run', 'done', 'm1')",
               (jid, jid))
vals = json.dumps({"interrupts.TLB": 15, "interrupts.TLB.cpu0": 13, "interrupts.TLB.cpu1": 2,
                   "vmstat.nr_tlb_remote_flush": 40, "vmstat.nr_tlb_remote_flush_received": 41})
db.executemany("INSERT INTO samples (stage_id, spec_index, case_index, iteration, warmup, in_window, t, dt, vals) "
               "VALUES (2, 0, 0, 0, 0, 1, ?, 1.0, ?)", ((float(i), vals) for i in range(int(sys.argv[2]))))
db.commit()
PYEOF
daemon_start "$TMP/lab.yaml" || { fail "tlblabd serves the seeded store" "see log"; exit 0; }

$PY "$TOP/tests/tools/api-attacks.py" "$DAEMON_PORT" "$DAEMON_PID" "$TOKEN" "$OTHER" 2 "$NSAMPLES"

if kill -0 "$DAEMON_PID" 2>/dev/null; then
	pass "tlblabd is still running after the attacks"
else
	fail "tlblabd is still running after the attacks" "it exited; log:"
	sed 's/^/#   /' "$DAEMON_LOG" | tail -n 20
fi
