/*
 * Daemons that share one store (a PostgreSQL store, lab.store): each
 * daemon is a row of daemons, seen again at each of its scheduler's
 * passes, and a stage it starts names it (stages.owner). A machine is
 * never leased twice whatever the daemons do at once: the stage and the
 * machine are claimed by their rows' locks, taken FOR UPDATE SKIP LOCKED
 * (store_stages.c, db_stage_claim), so one daemon's claim never waits for
 * another's. What a daemon that stopped being seen (killed, its host
 * gone) left running, another takes over once the lab's lease timeout
 * has passed (at once for a daemon known gone: one that stopped, or whose
 * process on this host is no more): it claims each stage (one claim wins: the change is
 * conditional on the old owner), then queues it again as a restart would
 * (store_recover), its machine released with its health unknown.
 *
 * What nobody submits (the tracks, their points and bisections, the
 * webhooks' deliveries) is one daemon's work at a time, the leader's: a
 * row of leaders names it, and passes to another daemon on the terms a
 * running stage does (its holder silent past the lease timeout, or known
 * gone), by a change conditional on the holder it replaces, so of two
 * daemons that try one does.
 */
#include "store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "util.h"
#include "banned.h"

int store_daemon_register(struct store *st, const char *host, int pid)
{
	int64_t id = 0;
	int rc;

	db_lock(st);
	rc = db_insert(st, &id, "INSERT INTO daemons (host, pid, started, seen) VALUES (?1, ?2, ?3, ?3) RETURNING id",
		       DB_TEXT(host), DB_INT(pid), DB_REAL(db_now()));
	if (rc == 0)
		st->daemon_id = id;
	db_unlock(st);
	return rc;
}

int64_t store_daemon_id(struct store *st)
{
	return st->daemon_id;
}

int store_daemons_gone(struct store *st, const char *host, int (*alive)(int pid))
{
	json_t *rows = db_rows_json(st, "SELECT id, pid FROM daemons WHERE host = ?1 AND id != ?2 AND seen > 0",
				    DB_ARGS(DB_TEXT(host), DB_INT(st->daemon_id)),
				    (const char *const[]){ "id", "pid", NULL });
	json_t *d;
	size_t i;
	int rc = rows ? 0 : -errno;

	json_array_foreach(rows, i, d) {
		if (rc < 0 || alive((int)json_integer_value(json_object_get(d, "pid"))))
			continue;
		rc = db_write(st, "UPDATE daemons SET seen = 0 WHERE id = ?1",
			      DB_INT(json_integer_value(json_object_get(d, "id"))));
	}
	json_decref(rows);
	return rc;
}

int store_daemon_retire(struct store *st)
{
	return db_write(st, "UPDATE daemons SET seen = 0 WHERE id = ?1", DB_INT(st->daemon_id));
}

/* Claims stage for this daemon from its old owner (0: none): 1 when the
 * claim is ours, 0 when another daemon's came first, or a store error.
 * Its machine's health becomes unknown in the same change. */
static int claim(struct store *st, int64_t stage, int64_t old_owner)
{
	int rc;

	db_lock(st);
	if ((rc = db_txn_begin(st)) < 0)
		goto out;
	if ((rc = db_stage_claim(st, stage, "running")) == 0)
		rc = db_run(st, "UPDATE stages SET owner = ?1 WHERE id = ?2 AND state = 'running' "
			    "AND owner IS NOT DISTINCT FROM nullif(?3, 0)", DB_INT(st->daemon_id), DB_INT(stage),
			    DB_INT(old_owner));
	if (rc == 0 && db_changes(st) != 1)
		rc = -EBUSY;
	if (rc == 0)
		rc = db_run(st, "UPDATE machines SET health = 'unknown', health_reason = "
			    "'its daemon went silent while it ran a stage', health_changed = ?2 "
			    "WHERE lease_stage = ?1 AND health != 'maintenance'", DB_INT(stage), DB_REAL(db_now()));
	rc = db_txn_end(st, rc);
out:
	db_unlock(st);
	return rc == -EBUSY ? 0 : rc < 0 ? rc : 1;
}

int store_daemon_pass(struct store *st, double lease_timeout, struct strbuf *log)
{
	struct db_stmt *s;
	int64_t *ids = NULL, *owners = NULL;
	size_t n = 0, cap = 0, i;
	int rc;

	if ((rc = db_write(st, "UPDATE daemons SET seen = ?2 WHERE id = ?1", DB_INT(st->daemon_id),
			   DB_REAL(db_now()))) < 0)
		return rc;
	db_lock(st);
	s = db_prep(st, "SELECT g.id, coalesce(g.owner, 0) FROM stages g LEFT JOIN daemons d ON d.id = g.owner "
		    "WHERE g.state = 'running' AND g.owner IS DISTINCT FROM ?1 AND (d.id IS NULL OR d.seen < ?2) "
		    "ORDER BY g.id");
	db_bind(s, DB_INT(st->daemon_id), DB_REAL(db_now() - lease_timeout));
	while ((rc = s ? db_stmt_step(st, s) : -EIO) == DB_ROW) {
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			ids = xrealloc(ids, cap * sizeof(*ids));
			owners = xrealloc(owners, cap * sizeof(*owners));
		}
		ids[n] = db_col_int64(s, 0);
		owners[n++] = db_col_int64(s, 1);
	}
	db_stmt_done(st, s);
	db_unlock(st);
	rc = rc == DB_DONE ? 0 : db_errno(rc);
	for (i = 0; i < n && rc == 0; i++) {
		const char *msg = "interrupted: the daemon that ran it went silent";
		int r = claim(st, ids[i], owners[i]);

		if (r <= 0) {
			rc = r;
			continue;
		}
		/* as store_recover says it, and from whom */
		r = store_stage_retry(st, ids[i], NULL, msg);
		if (r == -ECANCELED) {
			strbuf_addf(log, "stage %lld: interrupted; its job was being cancelled: cancelled", (long long)ids[i]);
			r = 0;
		} else if (r == -EALREADY) {
			r = store_stage_finish(st, ids[i], "failed", "infra", msg);
			strbuf_addf(log, "stage %lld: interrupted on its last attempt; %s", (long long)ids[i],
				    r == 0 ? "failed" : "cannot fail it");
		} else if (r == 0) {
			strbuf_addf(log, "stage %lld: interrupted; queued again", (long long)ids[i]);
		} else {
			strbuf_addf(log, "stage %lld: interrupted; cannot queue it again: %s", (long long)ids[i],
				    store_strerror(r));
		}
		strbuf_addf(log, " (taken over from daemon %lld, gone silent)\n", (long long)owners[i]);
		rc = r;
	}
	free(ids);
	free(owners);
	return rc;
}

int store_leader_take(struct store *st, const char *role, double lease_timeout)
{
	struct db_stmt *s;
	int64_t holder;
	double seen;
	int rc;

	/* a read while the role stays where it is: a leader's pass writes
	 * nothing, so the store's generation (and the API's cache) stays */
	{
		DB_GUARD(st);
		rc = db_one(st, &s, "SELECT coalesce(l.daemon_id, 0), coalesce(d.seen, 0) FROM leaders l "
			    "LEFT JOIN daemons d ON d.id = l.daemon_id WHERE l.role = ?1", DB_TEXT(role));
		if (rc < 0)
			return rc;
		holder = db_col_int64(s, 0);
		seen = db_col_double(s, 1);
		db_stmt_done(st, s);
	}
	if (holder == st->daemon_id)
		return 1;
	if (holder && seen >= db_now() - lease_timeout)
		return 0;
	DB_GUARD(st);
	rc = db_run(st, "UPDATE leaders SET daemon_id = ?2, since = ?3 WHERE role = ?1 "
		    "AND daemon_id IS NOT DISTINCT FROM nullif(?4, 0)", DB_TEXT(role), DB_INT(st->daemon_id),
		    DB_REAL(db_now()), DB_INT(holder));
	return rc < 0 ? rc : db_changes(st) == 1;
}
