/*
 * The stage state machine: which pending stages may run, a stage started
 * (its machine leased), handed from a boot to its run, finished, retried
 * after an infra failure, or failed as a workload (kept as a result, its
 * boot repeated once); a job settled once its stages are over; and, at
 * start-up, the stages a stopped daemon left running queued again. Also
 * each stage's ids, specs, note, host and log.
 */
#include "store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "store_int.h"
#include "util.h"
#include "banned.h"

/* A run stage that failed as a workload is kept as a result: it does not
 * stop the stages after it, and the job is settled once they are all over
 * (settle_job). SQL condition on stage alias A. */
#define KEPT_FAILURE(a) "(" a ".kind = 'run' AND " a ".state = 'failed' AND " a ".error_class = 'workload')"

void store_stage_info_release(struct stage_info *si)
{
	if (!si)
		return;
	json_decref(si->suite_json);
	json_decref(si->machines);
	json_decref(si->tags);
	json_decref(si->excluded);
	memset(si, 0, sizeof(*si));
}

void store_stage_infos_free(struct stage_info *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		store_stage_info_release(&v[i]);
	free(v);
}

/* The columns of a stage_info, from stages g joined with its job j. */
#define STAGE_INFO_SELECT \
	"SELECT g.id, g.job_id, g.seq, g.attempt, coalesce(g.boot_index, 0), j.boots, g.kind, " \
	"coalesce(g.side, ''), j.suite, coalesce(g.timeout, 0), j.suite_json, j.machines, j.tags, " \
	"g.excluded, coalesce(g.error_message, ''), coalesce(j.tree, ''), coalesce(j.base, ''), " \
	"coalesce(j.patch_kind, ''), coalesce((SELECT b.build_id FROM stages b WHERE b.job_id = g.job_id " \
	"AND b.kind = 'build' AND b.side IS NOT DISTINCT FROM g.side AND b.build_id IS NOT NULL), ''), " \
	"coalesce(g.note, ''), " \
	"j.arch, coalesce(g.cpus, 0) FROM stages g JOIN jobs j ON j.id = g.job_id "

static void stage_info_row(struct db_stmt *s, struct stage_info *si)
{
	memset(si, 0, sizeof(*si));
	si->id = db_col_int64(s, 0);
	si->job_id = db_col_int64(s, 1);
	si->seq = db_col_int(s, 2);
	si->attempt = db_col_int(s, 3);
	si->boot_index = db_col_int(s, 4);
	si->boots = db_col_int(s, 5);
	si->timeout = db_col_double(s, 9);
	si->suite_json = db_col_parsed(s, 10);
	si->machines = db_col_parsed(s, 11);
	si->tags = db_col_parsed(s, 12);
	si->excluded = db_col_parsed(s, 13);
	db_col_copy(si->kind, sizeof(si->kind), s, 6);
	db_col_copy(si->side, sizeof(si->side), s, 7);
	db_col_copy(si->suite, sizeof(si->suite), s, 8);
	db_col_copy(si->last_error, sizeof(si->last_error), s, 14);
	db_col_copy(si->tree, sizeof(si->tree), s, 15);
	db_col_copy(si->base, sizeof(si->base), s, 16);
	db_col_copy(si->patch_kind, sizeof(si->patch_kind), s, 17);
	db_col_copy(si->build_id, sizeof(si->build_id), s, 18);
	db_col_copy(si->note, sizeof(si->note), s, 19);
	db_col_copy(si->arch, sizeof(si->arch), s, 20);
	si->cpus = db_col_int(s, 21);
}

int store_runnable_stages(struct store *st, struct stage_info **ret, size_t *ret_n)
{
	struct db_stmt *s;
	struct stage_info *v = NULL;
	size_t n = 0, alloc = 0;
	int rc;

	db_lock(st);
	s = db_prep(st, STAGE_INFO_SELECT
		 "WHERE g.state = 'pending' AND j.state IN ('queued', 'running') AND j.cancel_requested = 0 "
		 "AND NOT EXISTS (SELECT 1 FROM stages e WHERE e.job_id = g.job_id AND e.seq < g.seq "
		 "AND e.state != 'done' AND NOT " KEPT_FAILURE("e") ") ORDER BY j.id, g.seq LIMIT 256");
	while ((rc = s ? db_stmt_step(st, s) : -EIO) == DB_ROW) {
		if (n == alloc) {
			alloc = alloc ? alloc * 2 : 8;
			v = xrealloc(v, alloc * sizeof(*v));
		}
		stage_info_row(s, &v[n++]);
	}
	db_stmt_done(st, s);
	db_unlock(st);
	if (rc != DB_DONE) {
		store_stage_infos_free(v, n);
		return db_errno(rc);
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int store_stage_pending_at(struct store *st, int64_t job_id, int seq, struct stage_info *ret)
{
	struct db_stmt *s;
	int rc;

	db_lock(st);
	s = db_prep(st, STAGE_INFO_SELECT "WHERE g.job_id = ? AND g.seq = ? AND g.state = 'pending' "
		    "AND j.cancel_requested = 0");
	if (s) {
		db_bind_int(s, 1, job_id);
		db_bind_int(s, 2, seq);
	}
	rc = s ? db_stmt_step(st, s) : -EIO;
	if (rc == DB_ROW)
		stage_info_row(s, ret);
	db_stmt_done(st, s);
	db_unlock(st);
	if (rc == DB_ROW)
		return 1;
	return rc == DB_DONE ? 0 : db_errno(rc);
}

int store_job_open_stages(struct store *st, int64_t job_id, int64_t except)
{
	struct db_stmt *s;
	int rc, n;

	DB_GUARD(st);
	rc = db_row(st, &s, "SELECT count(*) FROM stages WHERE job_id = ?1 AND id != ?2 "
		    "AND state IN ('pending', 'running')", DB_INT(job_id), DB_INT(except));
	if (rc <= 0)
		return rc < 0 ? rc : -EIO;
	n = db_col_int(s, 0);
	db_stmt_done(st, s);
	return n;
}

static int lease(struct store *st, int64_t stage_id, const char *machine);

/* Inside a transaction: a pending stage starts on `where`; its job runs. */
static int mark_running(struct store *st, int64_t stage_id, const char *where)
{
	/* the daemon that runs it: another takes it over if this one goes
	 * silent (store_daemons.c) */
	int rc = db_run(st, "UPDATE stages SET state = 'running', machine = ?2, started = ?3, finished = NULL, "
			"error_class = NULL, error_message = NULL, owner = nullif(?4, 0) "
			"WHERE id = ?1 AND state = 'pending'",
			DB_INT(stage_id), DB_TEXT(where), DB_REAL(db_now()), DB_INT(st->daemon_id));

	if (rc < 0)
		return rc;
	if (db_changes(st) != 1)
		return -EBUSY;
	return db_run(st, "UPDATE jobs SET state = 'running', started = coalesce(started, ?2) "
		      "WHERE id = (SELECT job_id FROM stages WHERE id = ?1)", DB_INT(stage_id), DB_REAL(db_now()));
}

int store_stage_start(struct store *st, int64_t stage_id, const char *machine)
{
	int rc = 0;

	db_lock(st);
	if ((rc = db_txn_begin(st)) < 0)
		goto out;
	if ((rc = db_stage_claim(st, stage_id, "pending")) == 0 && (rc = lease(st, stage_id, machine)) == 0)
		rc = mark_running(st, stage_id, machine);
	rc = db_txn_end(st, rc);
out:
	db_unlock(st);
	return rc;
}

/*
 * Inside a transaction, its stage claimed (db_stage_claim): machine's
 * lease for stage, if it is free and fit, or -EBUSY. On PostgreSQL the
 * machine's row is taken FOR UPDATE SKIP LOCKED: one another daemon is
 * leasing right now is busy at once, and the row stays locked until this
 * transaction ends, so no two daemons lease it together; the change is
 * conditional on the lease being free besides (SQLite's single writer
 * needs only that).
 */
static int lease(struct store *st, int64_t stage_id, const char *machine)
{
	int rc = db_run(st, DB_SQL(st, "UPDATE machines SET lease_job = (SELECT job_id FROM stages WHERE id = ?1), "
				   "lease_stage = ?1, lease_since = ?3 WHERE name = ?2 AND lease_job IS NULL "
				   "AND health IN ('good', 'unknown') AND in_config = 1",
				   "UPDATE machines SET lease_job = (SELECT job_id FROM stages WHERE id = ?1), "
				   "lease_stage = ?1, lease_since = ?3 WHERE name = (SELECT name FROM machines "
				   "WHERE name = ?2 AND lease_job IS NULL AND health IN ('good', 'unknown') "
				   "AND in_config = 1 FOR UPDATE SKIP LOCKED)"),
			DB_INT(stage_id), DB_TEXT(machine), DB_REAL(db_now()));

	if (rc == 0 && db_changes(st) != 1)
		rc = -EBUSY;
	return rc;
}

int store_stage_start_duet(struct store *st, int64_t a, const char *ma, int64_t b, const char *mb)
{
	int rc = 0;

	db_lock(st);
	if ((rc = db_txn_begin(st)) < 0)
		goto out;
	if ((rc = db_stage_claim(st, a, "pending")) == 0 && (rc = db_stage_claim(st, b, "pending")) == 0 &&
	    (rc = lease(st, a, ma)) == 0 && (rc = lease(st, b, mb)) == 0 && (rc = mark_running(st, a, ma)) == 0 &&
	    (rc = mark_running(st, b, mb)) == 0)
		rc = db_run(st, "UPDATE stages SET duet_of = CASE id WHEN ?1 THEN ?2 ELSE ?1 END "
			    "WHERE id IN (?1, ?2)", DB_INT(a), DB_INT(b));
	rc = db_txn_end(st, rc);
out:
	db_unlock(st);
	return rc;
}

int store_stage_begin(struct store *st, int64_t stage_id, const char *where)
{
	int rc;

	db_lock(st);
	rc = db_txn_begin(st);
	if (rc == 0 && (rc = db_stage_claim(st, stage_id, "pending")) == 0)
		rc = mark_running(st, stage_id, where);
	rc = db_txn_end(st, rc);
	db_unlock(st);
	return rc;
}

int store_stage_handoff(struct store *st, int64_t boot_stage, int64_t run_stage)
{
	int rc = 0;

	db_lock(st);
	if ((rc = db_txn_begin(st)) < 0)
		goto out;
	/* fenced as end_stage is: not a boot another daemon runs now */
	rc = db_run(st, "UPDATE stages SET state = 'done', finished = ?2 WHERE id = ?1 AND state = 'running' "
		    "AND owner IS NOT DISTINCT FROM nullif(?3, 0)", DB_INT(boot_stage), DB_REAL(db_now()),
		    DB_INT(st->daemon_id));
	if (rc < 0 || (rc = db_changes(st) != 1 ? -EBUSY : 0) < 0)
		goto out;
	/* the run is this daemon's as its boot was: a running stage that
	 * names no live daemon is taken over by another (store_daemons.c) */
	rc = db_run(st, "UPDATE stages SET state = 'running', started = ?3, finished = NULL, error_class = NULL, "
		    "error_message = NULL, boot_id = (SELECT boot_id FROM stages WHERE id = ?2), "
		    "machine = (SELECT machine FROM stages WHERE id = ?2), owner = nullif(?4, 0) "
		    "WHERE id = ?1 AND state = 'pending'",
		    DB_INT(run_stage), DB_INT(boot_stage), DB_REAL(db_now()), DB_INT(st->daemon_id));
	if (rc < 0 || (rc = db_changes(st) != 1 ? -EBUSY : 0) < 0)
		goto out;
	rc = db_run(st, "UPDATE machines SET lease_stage = ?2 WHERE lease_stage = ?1",
		    DB_INT(boot_stage), DB_INT(run_stage));
out:
	rc = db_txn_end(st, rc);
	db_unlock(st);
	return rc;
}

int store_stage_set_ids(struct store *st, int64_t stage_id, const char *build_id, const char *boot_id)
{
	return db_write(st, "UPDATE stages SET build_id = coalesce(?2, build_id), boot_id = coalesce(?3, boot_id) "
			"WHERE id = ?1", DB_INT(stage_id), DB_TEXT(build_id), DB_TEXT(boot_id));
}

static int64_t stage_at(struct store *st, int64_t job_id, int seq)
{
	struct db_stmt *s;
	int64_t id = 0;
	int rc;

	db_lock(st);
	rc = db_row(st, &s, "SELECT id FROM stages WHERE job_id = ? AND seq = ?", DB_INT(job_id), DB_INT(seq));
	if (rc > 0) {
		id = db_col_int64(s, 0);
		db_stmt_done(st, s);
	}
	db_unlock(st);
	return rc < 0 ? rc : id;
}

int64_t store_stage_next(struct store *st, int64_t job_id, int seq)
{
	return stage_at(st, job_id, seq + 1);
}

int64_t store_stage_prev(struct store *st, int64_t job_id, int seq)
{
	return seq > 0 ? stage_at(st, job_id, seq - 1) : 0;
}

static int release_lease(struct store *st, int64_t stage_id)
{
	return db_run(st, "UPDATE machines SET lease_job = NULL, lease_stage = NULL, "
		      "lease_since = NULL WHERE lease_stage = ?", DB_INT(stage_id));
}

/*
 * Settling a job whose stages are all over. Runs that failed as a workload
 * were kept and (in an A/B job) their boot repeated once; what the job is
 * then depends on where the failures repeat:
 *  - a spec that failed in a boot and again in that boot's repeat on the
 *    base side: the suite is broken on this tree (class "suite"), whatever
 *    the patched side did; not a result of the patch;
 *  - such a repeated failure on the patched side only: a "workload" result
 *    of the patch;
 *  - failures that did not repeat: transient; the job is done.
 * A run job (no sides, no repeats) with a failed run fails as "workload".
 * The job keeps every run either way, so the specs that ran on both sides
 * are still compared. Inside a transaction; -EIO on a store error.
 */

struct spec_failure {
	char side[16];
	int seq, repeat_of;
	int64_t stage;
	long long spec;
	char message[700];
};

/* Appends one failure of spec `spec` of the stage in row s to the array. */
static void push_failure(struct spec_failure **v, size_t *n, size_t *cap, struct db_stmt *s, long long spec,
			 const char *message)
{
	struct spec_failure *f;

	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	f = &(*v)[(*n)++];
	f->stage = db_col_int64(s, 0);
	f->seq = db_col_int(s, 1);
	db_col_copy(f->side, sizeof(f->side), s, 2);
	f->repeat_of = db_col_int(s, 3);
	f->spec = spec;
	snprintf(f->message, sizeof(f->message), "%s", message ? message : "");
}

/* The failed specs of the job's kept run failures, into a growing array
 * (a failure without spec outcomes counts as spec -1, the whole stage). */
static int load_spec_failures(struct store *st, int64_t job, struct spec_failure **ret, size_t *ret_n)
{
	struct db_stmt *s = db_prep(st, "SELECT id, seq, coalesce(side, ''), coalesce(repeat_of, -1), specs, "
				   "coalesce(error_message, '') FROM stages e WHERE job_id = ? AND "
				   KEPT_FAILURE("e") " ORDER BY seq");
	struct spec_failure *v = NULL;
	size_t n = 0, cap = 0;
	int rc;

	db_bind_int(s, 1, job);
	while ((rc = s ? db_stmt_step(st, s) : -EIO) == DB_ROW) {
		json_t *specs = db_col_parsed(s, 4), *e;
		size_t i, before = n;

		json_array_foreach(specs, i, e)
			if (!strcmp(jsonget_str(e, "state") ?: "", "failed"))
				push_failure(&v, &n, &cap, s, jsonget_int_or(e, "spec", 0),
					     jsonget_str(e, "message"));
		if (n == before)
			push_failure(&v, &n, &cap, s, -1, db_col_text(s, 5));
		json_decref(specs);
	}
	db_stmt_done(st, s);
	if (rc != DB_DONE) {
		free(v);
		return db_errno(rc);
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* The failure of a repeat whose original run failed the same spec on the
 * same side (any side when NULL), or NULL. */
static const struct spec_failure *repeated(const struct spec_failure *v, size_t n, const char *side)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		if (v[i].repeat_of < 0 || (side && strcmp(v[i].side, side)))
			continue;
		for (k = 0; k < n; k++)
			if (v[k].seq == v[i].repeat_of && v[k].spec == v[i].spec)
				return &v[i];
	}
	return NULL;
}

static int settle_job(struct store *st, int64_t job)
{
	struct spec_failure *v = NULL;
	const struct spec_failure *f;
	struct strbuf msg = STRBUF_INIT;
	const char *cls = NULL;
	struct db_stmt *s;
	int open = 0, rc = 0;
	size_t n = 0;

	rc = db_row(st, &s, "SELECT count(*) FROM stages WHERE job_id = ? AND state IN ('pending', 'running')",
		    DB_INT(job));
	if (rc <= 0)
		return rc < 0 ? rc : -EIO;
	open = db_col_int(s, 0);
	db_stmt_done(st, s);
	if (open)
		return 0;
	if ((rc = load_spec_failures(st, job, &v, &n)) < 0)
		return rc;
	if ((f = repeated(v, n, "base"))) {
		cls = "suite";
		strbuf_addf(&msg, "the suite fails on the base kernel too (not a result of the patch): "
			    "spec %lld failed in a base boot and again in its repeat: %s", f->spec, f->message);
	} else if ((f = repeated(v, n, "patched"))) {
		cls = "workload";
		strbuf_addf(&msg, "spec %lld failed on the patched kernel in a boot and again in its repeat "
			    "(a result of the patch): %s", f->spec, f->message);
	} else if (n && !v[0].side[0]) {
		f = &v[0];
		cls = "workload";
		strbuf_addstr(&msg, f->message);
	}
	if (cls)
		rc = db_run(st, "UPDATE jobs SET state = 'failed', finished = ?2, error_class = ?3, "
			    "error_message = ?4, error_stage = ?5 WHERE id = ?1 AND state IN ('queued', 'running')",
			    DB_INT(job), DB_REAL(db_now()), DB_TEXT(cls), DB_TEXT(msg.buf), DB_INT(f->stage));
	else
		rc = db_run(st, "UPDATE jobs SET state = 'done', finished = ?2 WHERE id = ?1 "
			    "AND state IN ('queued', 'running')", DB_INT(job), DB_REAL(db_now()));
	free(v);
	strbuf_release(&msg);
	return rc;
}

/* Inside a transaction: a copy of the boot and run pair whose run failed,
 * right after it, unless that side or the base side already has a failure
 * that repeated (more boots would only fail again). 1 if added. */
static int add_repeat(struct store *st, int64_t run_stage)
{
	struct spec_failure *v = NULL;
	struct db_stmt *s;
	int64_t job = 0;
	int seq = 0, boot_index = 0, next = 0, rc = 0, is_repeat = 0, ab = 0, cpus = 0;
	double boot_timeout = 600, run_timeout = 0;
	char side[16] = "";
	size_t n = 0;

	rc = db_row(st, &s, "SELECT g.job_id, g.seq, coalesce(g.side, ''), coalesce(g.boot_index, 0), "
		    "g.repeat_of IS NOT NULL, coalesce(g.timeout, 0), j.kind = 'ab', "
		    "(SELECT coalesce(b.timeout, 600) FROM stages b WHERE b.job_id = g.job_id AND b.seq = g.seq - 1), "
		    "coalesce(g.cpus, 0) FROM stages g JOIN jobs j ON j.id = g.job_id WHERE g.id = ?", DB_INT(run_stage));
	if (rc < 0)
		return rc;
	if (rc) {
		job = db_col_int64(s, 0);
		seq = db_col_int(s, 1);
		db_col_copy(side, sizeof(side), s, 2);
		boot_index = db_col_int(s, 3);
		is_repeat = db_col_int(s, 4);
		run_timeout = db_col_double(s, 5);
		ab = db_col_int(s, 6);
		boot_timeout = db_col_double(s, 7);
		cpus = db_col_int(s, 8);
		db_stmt_done(st, s);
	}
	if (!job || !ab || is_repeat || !side[0])
		return 0;
	if ((rc = load_spec_failures(st, job, &v, &n)) < 0)
		return rc;
	/* a failure known to repeat, on this side or on the base side (the
	 * suite is broken then, whatever the patch does), would only repeat */
	if (repeated(v, n, side) || repeated(v, n, "base")) {
		free(v);
		return 0;
	}
	free(v);
	/* right after the failed run, so a failure that repeats is known
	 * before the side's later boots fail and would be repeated too */
	rc = db_run(st, "UPDATE stages SET seq = -seq WHERE job_id = ? AND seq > ?", DB_INT(job), DB_INT(seq));
	if (rc == 0)
		rc = db_run(st, "UPDATE stages SET seq = 2 - seq WHERE job_id = ? AND seq < 0", DB_INT(job));
	next = seq + 1;
	for (int k = 0; k < 2 && rc == 0; k++)
		rc = db_run(st, "INSERT INTO stages (job_id, seq, kind, side, boot_index, timeout, repeat_of, cpus) "
			    "VALUES (?, ?, ?, ?, ?, ?, ?, nullif(?, 0))", DB_INT(job), DB_INT(next + k),
			    DB_TEXT(k ? "run" : "boot"), DB_TEXT(side), DB_INT(boot_index),
			    DB_REAL(k ? run_timeout : boot_timeout), DB_INT(seq), DB_INT(cpus));
	return rc < 0 ? rc : 1;
}

/* Inside a transaction: the stage ends in state (class, message), its
 * machine released. Returns its job's id, -ENOENT when there is no such
 * stage, -EBUSY when it runs on another daemon (a fence: this daemon was
 * taken over while it was paused, and the stage started again there), or
 * a store error. */
/* 0 when the stage is there, -ENOENT when not, or a store error. */
static int stage_exists(struct store *st, int64_t stage_id)
{
	struct db_stmt *s;
	int rc = db_one(st, &s, "SELECT id FROM stages WHERE id = ?1", DB_INT(stage_id));

	if (rc == 0)
		db_stmt_done(st, s);
	return rc;
}

static int64_t end_stage(struct store *st, int64_t stage_id, const char *state, const char *error_class,
			 const char *message)
{
	int64_t job = 0;
	int rc = db_insert(st, &job, "UPDATE stages SET state = ?2, error_class = ?3, error_message = ?4, "
			   "finished = ?5 WHERE id = ?1 AND NOT (state = 'running' AND owner IS DISTINCT FROM "
			   "nullif(?6, 0)) RETURNING job_id", DB_INT(stage_id), DB_TEXT(state),
			   DB_TEXT(error_class), DB_TEXT(message), DB_REAL(db_now()), DB_INT(st->daemon_id));

	if (rc == -ENOENT && (rc = stage_exists(st, stage_id)) == 0)
		rc = -EBUSY;
	if (rc < 0)
		return rc;
	rc = release_lease(st, stage_id);
	return rc < 0 ? rc : job;
}

int store_run_failed(struct store *st, int64_t stage_id, const char *message, int *ret_repeated)
{
	int64_t job = 0;
	int rc, added = 0;

	db_lock(st);
	if ((rc = db_txn_begin(st)) < 0)
		goto out;
	job = end_stage(st, stage_id, "failed", "workload", message);
	rc = job < 0 ? (int)job : 0;
	if (rc == 0)
		rc = added = add_repeat(st, stage_id);
	if (rc >= 0)
		rc = settle_job(st, job);
	rc = db_txn_end(st, rc);
	if (rc == 0 && ret_repeated)
		*ret_repeated = added;
out:
	db_unlock(st);
	return rc;
}

int store_stage_set_specs(struct store *st, int64_t stage_id, const json_t *specs)
{
	char *text = json_dumps(specs, JSON_COMPACT);
	int rc = db_write(st, "UPDATE stages SET specs = ?2 WHERE id = ?1", DB_INT(stage_id), DB_TEXT(text));

	free(text);
	return rc;
}

int store_stage_set_note(struct store *st, int64_t stage_id, const char *note)
{
	return db_write(st, "UPDATE stages SET note = ?2 WHERE id = ?1", DB_INT(stage_id), DB_TEXT(note));
}

/* A stage of job ended failed or cancelled: the stages still pending are
 * cancelled and the job ends with the stage's class and message. Inside a
 * transaction. */
static int end_job(struct store *st, int64_t job, int64_t stage_id, const char *state,
		   const char *error_class, const char *message)
{
	int rc = db_run(st, "UPDATE stages SET state = 'cancelled', error_class = 'cancelled', "
			"error_message = 'an earlier stage did not finish', finished = ?2 "
			"WHERE job_id = ?1 AND state = 'pending'", DB_INT(job), DB_REAL(db_now()));

	if (rc < 0)
		return rc;
	return db_run(st, "UPDATE jobs SET state = ?2, finished = ?3, error_class = ?4, error_message = ?5, "
		      "error_stage = ?6 WHERE id = ?1", DB_INT(job),
		      DB_TEXT(!strcmp(state, "cancelled") ? "cancelled" : "failed"), DB_REAL(db_now()),
		      DB_TEXT(error_class), DB_TEXT(message), DB_INT(stage_id));
}

int store_stage_finish(struct store *st, int64_t stage_id, const char *state,
		       const char *error_class, const char *message)
{
	int64_t job = 0;
	int rc;

	db_lock(st);
	if ((rc = db_txn_begin(st)) < 0)
		goto out;
	job = end_stage(st, stage_id, state, error_class, message);
	if (job < 0)
		rc = (int)job;
	else if (!strcmp(state, "done"))
		rc = settle_job(st, job);
	else
		rc = end_job(st, job, stage_id, state, error_class, message);
out:
	rc = db_txn_end(st, rc);
	db_unlock(st);
	return rc;
}

static int drop_stage_results(struct store *st, int64_t stage_id)
{
	static const char *const sql[] = { "DELETE FROM runs WHERE stage_id = ?",
					   "DELETE FROM samples WHERE stage_id = ?",
					   "DELETE FROM unavailable WHERE stage_id = ?" };
	size_t i;
	int rc = 0;

	for (i = 0; i < ARRAY_SIZE(sql) && rc == 0; i++)
		rc = db_run(st, sql[i], DB_INT(stage_id));
	return rc;
}

int store_stage_retry(struct store *st, int64_t stage_id, const char *machine, const char *message)
{
	json_t *excluded = NULL;
	struct db_stmt *s;
	char line[600];
	int64_t job;
	int attempt = -1, cancelling = 0, rc;

	db_lock(st);
	if ((rc = db_txn_begin(st)) < 0)
		goto out;
	rc = db_one(st, &s, "SELECT g.attempt, j.cancel_requested, j.id, g.excluded FROM stages g JOIN jobs j "
		    "ON j.id = g.job_id WHERE g.id = ?", DB_INT(stage_id));
	if (rc < 0)
		goto out;
	attempt = db_col_int(s, 0);
	cancelling = db_col_int(s, 1);
	job = db_col_int64(s, 2);
	excluded = db_col_parsed(s, 3);
	db_stmt_done(st, s);
	if (cancelling) {
		/* a cancelled job's stage ends here, whatever it failed of */
		job = end_stage(st, stage_id, "cancelled", "cancelled", "cancelled");
		rc = job < 0 ? (int)job : end_job(st, job, stage_id, "cancelled", "cancelled", "cancelled");
		goto out;
	}
	if (attempt + 1 >= STORE_MAX_ATTEMPTS) {
		rc = -EALREADY;
		goto out;
	}
	if ((rc = release_lease(st, stage_id)) < 0 || (rc = drop_stage_results(st, stage_id)) < 0)
		goto out;
	/* a boot of a duet boots again alone: its runs and its partner's are no
	 * longer a pair */
	if ((rc = db_run(st, "UPDATE stages SET duet_of = NULL WHERE id = ?1 OR duet_of = ?1", DB_INT(stage_id))) < 0)
		goto out;
	snprintf(line, sizeof(line), "\n== attempt %d failed on %s (infra): %.400s; retrying\n",
		 attempt + 1, machine ? machine : "?", message ? message : "");
	/* the machine it failed on is not tried again for it */
	if (!json_is_array(excluded)) {
		json_decref(excluded);
		excluded = json_array();
	}
	if (machine)
		json_array_append_new(excluded, json_string(machine));
	rc = db_run(st, "UPDATE stages SET state = 'pending', attempt = attempt + 1, machine = NULL, "
		    "started = NULL, error_class = 'infra', error_message = ?2, excluded = ?3, "
		    "log = log || ?4 WHERE id = ?1", DB_INT(stage_id), DB_TEXT(message), DB_JSON(excluded),
		    DB_TEXT(line));
out:
	rc = db_txn_end(st, rc);
	db_unlock(st);
	json_decref(excluded);
	/* the stage ended cancelled, committed; the answer says so */
	return rc == 0 && cancelling ? -ECANCELED : rc;
}

int store_stage_append_log(struct store *st, int64_t stage_id, const char *text)
{
	/* a stage log is bounded: past 4 MiB only the tail is kept */
	return db_write(st, "UPDATE stages SET log = CASE WHEN length(log) > 4194304 "
			"THEN '[...]' || substr(log, length(log) - 2097151) || ?2 ELSE log || ?2 END WHERE id = ?1",
			DB_INT(stage_id), DB_TEXT(text));
}

int store_stage_set_host(struct store *st, int64_t stage_id, const json_t *hello)
{
	char *text = json_dumps(hello, JSON_COMPACT);
	int rc = db_write(st, "UPDATE stages SET host = ?2 WHERE id = ?1", DB_INT(stage_id), DB_TEXT(text));

	free(text);
	return rc;
}

int store_stage_log(struct store *st, int64_t job_id, int64_t stage_id, struct strbuf *out)
{
	struct db_stmt *s;
	int rc;

	db_lock(st);
	rc = db_one(st, &s, "SELECT log FROM stages WHERE id = ? AND job_id = ?", DB_INT(stage_id), DB_INT(job_id));
	if (rc == 0) {
		strbuf_add(out, db_col_text(s, 0), db_col_bytes(s, 0));
		db_stmt_done(st, s);
	}
	db_unlock(st);
	return rc;
}

int store_recover(struct store *st, struct strbuf *log)
{
	int64_t *ids = NULL;
	size_t n = 0, i;
	int rc;

	db_lock(st);
	rc = db_txn_begin(st);
	if (rc == 0)
		rc = db_query_ids(st, "SELECT id FROM stages WHERE state = 'running'", &ids, &n);
	/* this daemon's now, as a take-over claims them (store_daemons.c) */
	if (rc == 0)
		rc = db_run(st, "UPDATE stages SET owner = nullif(?1, 0) WHERE state = 'running'", DB_INT(st->daemon_id));
	if (rc == 0)
		rc = db_run(st, "UPDATE machines SET health = 'unknown', health_reason = "
			    "'the daemon restarted while it ran a stage', health_changed = ?1 "
			    "WHERE lease_job IS NOT NULL AND health != 'maintenance'", DB_REAL(db_now()));
	if (rc == 0)
		rc = db_exec(st, "UPDATE machines SET lease_job = NULL, lease_stage = NULL, lease_since = NULL");
	rc = db_txn_end(st, rc);
	db_unlock(st);
	for (i = 0; i < n && rc == 0; i++) {
		const char *msg = "interrupted: the daemon stopped during this stage";

		rc = store_stage_retry(st, ids[i], NULL, msg);
		if (rc == -ECANCELED) {
			strbuf_addf(log, "stage %lld: interrupted; its job was being cancelled: cancelled\n",
				    (long long)ids[i]);
			rc = 0;
		} else if (rc == -EALREADY) {
			rc = store_stage_finish(st, ids[i], "failed", "infra", msg);
			if (rc == 0)
				strbuf_addf(log, "stage %lld: interrupted on its last attempt; failed\n",
					    (long long)ids[i]);
		} else if (rc == 0) {
			strbuf_addf(log, "stage %lld: interrupted; queued again\n", (long long)ids[i]);
		}
		if (rc < 0)
			strbuf_addf(log, "stage %lld: interrupted; cannot queue it again: %s\n",
				    (long long)ids[i], store_strerror(rc));
	}
	free(ids);
	return rc;
}
