#!/bin/sh
# What a client without a token, or a token holder, can take from tlblabd
# (issue 12): a real daemon on loopback, attacked the ways the security
# review did (tests/tools/api-attacks.py): unauthenticated 1 MiB POSTs,
# many connections from one address, request headers that trickle in, the
# samples of a long run, hundreds of query arguments, a cache key forged
# with an escaped '&', and more queued work than a token may have. Then a
# second daemon (issue 37, tests/tools/api-owners.py): a token cannot
# cancel another's job or bisection, nor triage an alert or set a
# machine's health, which an admin token can; bisections count in their
# token's limits, two at once included; a URL the lab may not fetch from
# is refused at submit; a reader without a token sees URLs redacted.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
trap 'daemon_cleanup; stop_fake_builds; rm -rf "$TMP"' EXIT
stop_fake_builds() {
	[ -f "$TMP/fake-build.pids" ] && xargs kill <"$TMP/fake-build.pids" 2>/dev/null
	return 0
}

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

# ---- tokens own their work; what a reader without a token sees (issue 37) ----

daemon_stop
A=t0080-user-a-0123456789abcdef
B=t0080-user-b-0123456789abcdef
C=t0080-user-c-0123456789abcdef
ADMIN=t0080-admin-0123456789abcdef
kernels_stub "$TMP/kernels"
# build.sh: a resolve (a bisection's range) hangs until the end, so the
# bisection runs on; a base is built at once; a branch is not found, as
# build.sh says it, naming its URL
cat >"$TMP/kernels/build/build.sh" <<EOF
#!/bin/sh
echo \$\$ >>"$TMP/fake-build.pids"
out= fetch=
while [ \$# -gt 0 ]; do
	case \$1 in --out) out=\$2; shift ;; --fetch) fetch=\$2; shift ;; --resolve) exec sleep 300 ;; esac
	shift
done
if [ -n "\$fetch" ]; then
	echo "fetching tlb/fix from \$fetch"
	echo "TLBLAB status failed"
	echo "TLBLAB class ref"
	echo "TLBLAB message cannot fetch tlb/fix from \$fetch"
	exit 13
fi
id=\$(date +%s%N | sha256sum | cut -c1-64)
$(fake_build_done)
EOF
{
	lab_yaml "$TMP/data2" "tokens: [$A, $B, $C]" "admin_tokens: [$ADMIN]" "max_jobs_per_token: 1" \
		"max_boots_per_token: 4"
	echo machines:
	lab_yaml_machine_dirs m1
	lab_yaml_builder
	echo suites:
	lab_yaml_hold_suite
	echo tracks:
	echo '  - {name: nightly, tree: linux, branch: master, url: "https://git.example.org/track/s3cret/linux.git",'
	echo '     schedule: "0 3 1 1 *", suite: hold, machines: [m1]}'
} >"$TMP/lab2.yaml"
DAEMON_ARGS="-k $TMP/kernels"
daemon_seed "$TMP/lab2.yaml" $PY - "$TMP/data2/tlblab.db" <<'PYEOF'
import json, sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
now = time.time()
db.execute("INSERT INTO alerts (id, track, good_commit, bad_commit, kind, created) "
           "VALUES (1, 'nightly', 'aaaa', 'bbbb', 'regression', ?)", (now,))
hook = "https://hooks.example.org/services/T0/s3cret"
err = "webhook %s: HTTP 500" % hook
db.execute("INSERT INTO deliveries (id, hook, event, url, body, state, attempts, next_attempt, last_status, "
           "last_error, log, created) VALUES (1, 'chat', 'alert', ?, '{}', 'failed', 1, ?, 500, ?, ?, ?)",
           (hook, now, err, json.dumps([{"at": now, "status": 500, "error": err}]), now))
db.commit()
PYEOF
daemon_start "$TMP/lab2.yaml" || { fail "tlblabd with admin tokens serves the seeded store" "see log"; exit 0; }
$PY "$TOP/tests/tools/api-owners.py" "$DAEMON_PORT" "$A" "$B" "$C" "$ADMIN"
