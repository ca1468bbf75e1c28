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
# t0083 runs it again on a PostgreSQL store (lab_yaml, daemon_sql).
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
# per-second samples) are written into it while it is stopped (in SQL
# both backends read: t0083 runs this on PostgreSQL)
seed_jobs() {
	now=$(date +%s)
	cat <<EOSQL | daemon_sql "$DB"
INSERT INTO jobs (id, kind, state, suite, suite_json, submitter, created, started, finished)
	VALUES (1, 'run', 'done', 'hold', '[]', 'mallory', $now, $now, $now), (2, 'run', 'done', 'hold', '[]', 'bob', $now, $now, $now);
INSERT INTO stages (id, job_id, seq, kind, state, machine) VALUES (1, 1, 0, 'run', 'done', 'm1'), (2, 2, 0, 'run', 'done', 'm1');
INSERT INTO samples (stage_id, spec_index, case_index, iteration, warmup, in_window, t, dt, vals)
	WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < $NSAMPLES)
	SELECT 2, 0, 0, 0, 0, 1, i, 1.0, '{"interrupts.TLB": 15, "interrupts.TLB.cpu0": 13, "interrupts.TLB.cpu1": 2, "vmstat.nr_tlb_remote_flush": 40, "vmstat.nr_tlb_remote_flush_received": 41}' FROM n;
EOSQL
}
daemon_seed "$TMP/lab.yaml" seed_jobs
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
seed_alert() {
	now=$(date +%s)
	hook=https://hooks.example.org/services/T0/s3cret
	cat <<EOSQL | daemon_sql "$TMP/data2/tlblab.db"
INSERT INTO alerts (id, track, good_commit, bad_commit, kind, created) VALUES (1, 'nightly', 'aaaa', 'bbbb', 'regression', $now);
INSERT INTO deliveries (id, hook, event, url, body, state, attempts, next_attempt, last_status, last_error, log, created)
	VALUES (1, 'chat', 'alert', '$hook', '{}', 'failed', 1, $now, 500, 'webhook $hook: HTTP 500',
		'[{"at": $now, "status": 500, "error": "webhook $hook: HTTP 500"}]', $now);
EOSQL
}
# a lab of its own: on PostgreSQL (t0083), the store made empty again
daemon_store_empty
daemon_seed "$TMP/lab2.yaml" seed_alert
daemon_start "$TMP/lab2.yaml" || { fail "tlblabd with admin tokens serves the seeded store" "see log"; exit 0; }
$PY "$TOP/tests/tools/api-owners.py" "$DAEMON_PORT" "$A" "$B" "$C" "$ADMIN"
