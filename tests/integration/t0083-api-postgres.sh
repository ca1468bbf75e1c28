#!/bin/sh
# The daemon's API tests on a PostgreSQL store: t0030 (a suite through the
# client and the API, a machine that dies mid-run, kill -9 of the daemon
# mid-job and a restart, bad configs, bodies and tokens) run again with
# lab.store on a server of this test's own (tests/pg.sh), its results
# reported as "postgres: ...". The tests that read or seed the SQLite file
# themselves (t0020, t0080, t0081) stay SQLite's.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/pg.sh"

if ! why=$(pg_available); then
	skip "the API's tests on a PostgreSQL store" "$why"
	exit 0
fi
pg_start "$TMP/pg" || { fail "a PostgreSQL server starts (tests/pg.sh)" "see above"; exit 0; }
for t in t0030-daemon-e2e; do
	DAEMON_STORE=$PG_URL sh "$TOP/tests/integration/$t.sh" >"$TMP/$t.out" 2>&1
	st=$?
	sed -e 's/^\(not \)\{0,1\}ok - /&postgres: /' -e '/^\(not \)\{0,1\}ok - /!s/^/# /' "$TMP/$t.out"
	grep -q '^\(not \)\{0,1\}ok - ' "$TMP/$t.out" || fail "postgres: $t reported nothing" "exit $st"
	# each run starts from an empty store
	"$PG_BIN/psql" -X -q -h "$PG_SOCKET" -U tlblab -d postgres \
		-c "DROP DATABASE tlblab WITH (FORCE)" -c "CREATE DATABASE tlblab" >/dev/null 2>&1
done
exit 0
