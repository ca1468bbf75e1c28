#!/bin/sh
# Every call of store.h holds its connection's lock for the whole call
# (store_int.h: DB_GUARD, DB_READER, or a db_ helper that takes the lock
# itself). One that did not, store_job_open_stages, put two threads on one
# libpq connection: they took each other's results, and a daemon on
# PostgreSQL stopped within seconds (docs/scale.md). store_db.c aborts on
# such a statement when it runs; this reads the source, so that a call no
# test reaches is found too. A public store_ function whose body runs a
# statement (a db_ call) must name one of the locking forms.
. "$(dirname "$0")/../lib.sh"

scan() {
	/usr/bin/python3 - "$@" <<'PY'
import re, sys
LOCKS = r'DB_GUARD|DB_READER|db_lock|db_reader_get|db_write|db_rows_json'
for path in sys.argv[1:]:
    src = open(path).read()
    for m in re.finditer(r'^(?!static)[a-z][^\n;]*?\b(store_\w+)\([^)]*\)\n\{\n(.*?)\n\}\n', src, re.S | re.M):
        if re.search(r'\bdb_', m.group(2)) and not re.search(LOCKS, m.group(2)):
            print("%s: %s" % (path, m.group(1)))
PY
}

# the scan finds what it is for: a store call without a lock
cat >"$TMP/bad.c" <<'C'
int store_thing(struct store *st)
{
	return db_run(st, "DELETE FROM things");
}

int store_other(struct store *st)
{
	DB_GUARD(st);
	return db_run(st, "DELETE FROM others");
}
C
out=$(scan "$TMP/bad.c")
check "the scan names a store call that takes no lock, and only it" test "$out" = "$TMP/bad.c: store_thing"

out=$(scan "$TOP"/daemon/store/*.c)
if [ -z "$out" ]; then
	pass "every store_ call in daemon/store/ holds its connection's lock"
else
	fail "every store_ call in daemon/store/ holds its connection's lock" "$(echo $out)"
fi
exit 0
