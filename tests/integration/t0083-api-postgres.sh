#!/bin/sh
# The daemon's API tests on a PostgreSQL store, run again with lab.store
# on a server of this test's own (tests/pg.sh), each from an empty
# database, their results reported as "postgres: ...":
#   t0030  a suite through the client and the API, a machine that dies
#          mid-run, kill -9 of the daemon mid-job and a restart, bad
#          configs, bodies and tokens;
#   t0033  cancels of builds, boots and fetches, patch and branch URLs
#          (a fetched patch in Latin-1 among them);
#   t0080  what a client without a token or a token holder can take from
#          the API, on a store seeded through daemon_sql.
# Each takes the store's URL from DAEMON_STORE (tests/daemon.sh: lab_yaml),
# nothing else of it changes. Those that stay SQLite's: t0020 and t0070
# seed the SQLite file with tests/web/seed.py, t0081 breaks it, t0032
# checks its file modes, t0031 starts no store.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
. "$TOP/tests/pg.sh"

pg_test "the API's tests on a PostgreSQL store"
for t in t0030-daemon-e2e t0033-cancel-fetch t0080-api-limits; do
	DAEMON_STORE=$PG_URL sh "$TOP/tests/integration/$t.sh" >"$TMP/$t.out" 2>&1
	st=$?
	sed -e 's/^\(not \)\{0,1\}ok - /&postgres: /' -e '/^\(not \)\{0,1\}ok - /!s/^/# /' "$TMP/$t.out"
	grep -q '^\(not \)\{0,1\}ok - ' "$TMP/$t.out" || fail "postgres: $t reported nothing" "exit $st"
	# each run starts from an empty store
	DAEMON_STORE=$PG_URL daemon_store_empty || fail "postgres: the store is emptied after $t" "psql failed"
done
exit 0
