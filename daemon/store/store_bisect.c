/*
 * The store's bisections (store.h, schemas/0009-tracks.sql and
 * 0010-bisect.sql): a bisection, its steps and the run jobs that measure
 * them. A step and its job are made in one transaction, as a point and its
 * job are, so a crash never leaves a job that no step knows of; and the
 * tracker's decisions are all read back from these rows, so a bisection
 * goes on where it was after a restart.
 */
#include "store.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "store_int.h"
#include "util.h"
#include "banned.h"

#define BISECTION_COLS                                                                                   \
	"b.id, b.alert_id, b.track, b.tree, b.good, b.bad, b.suite, b.machine, b.metric, b.workload, "    \
	"b.params, b.boots, b.state, b.change, b.status, b.steps_left, b.eta_s, b.first_bad, b.result, " \
	"b.submitter, b.created, b.finished, (SELECT count(*) FROM bisection_steps s WHERE "              \
	"s.bisection_id = b.id AND s.role = 'step')"

static const char *const bisection_names[] = {
	"id", "alert", "track", "tree", "good", "bad", "suite", "machine", "metric", "workload",
	"params_json", "boots", "state", "change", "status", "steps_left", "eta_s", "first_bad", "result",
	"submitter", "created", "finished", "steps_measured", NULL
};

/* a step and its job (the job's error names its failed stage's kind) */
static int step_insert(struct store *st, int64_t bisection, const char *commit, const char *role,
		       int64_t job, const char *outcome)
{
	return db_run(st, "INSERT INTO bisection_steps (bisection_id, commit_id, role, job_id, outcome, created, "
		      "finished) VALUES (?1, ?2, ?3, ?4, ?5, ?6, CASE WHEN ?5 IS NULL THEN NULL ELSE ?6 END)",
		      DB_INT(bisection), DB_TEXT(commit), DB_TEXT(role), DB_INT(job), DB_TEXT(outcome),
		      DB_REAL(db_now()));
}

int store_bisection_create(struct store *st, const struct bisection_request *b, const int64_t *good_jobs,
			   size_t ngood, const int64_t *bad_jobs, size_t nbad, int64_t *ret_id, struct strbuf *err)
{
	struct db_stmt *s;
	char hex[65];
	int64_t id = 0;
	size_t i;
	int rc;

	if (b->token)
		db_token_hash(b->token, hex);
	db_lock(st);
	if ((rc = db_txn_begin(st)) < 0)
		goto out;
	if (b->alert) {
		rc = db_row(st, &s, "SELECT id FROM bisections WHERE alert_id = ? AND state != 'cancelled'",
			    DB_INT(b->alert));
		if (rc == 1) {
			db_stmt_done(st, s);
			rc = -EEXIST;
		}
	}
	if (rc == 0)
		rc = db_insert(st, &id, "INSERT INTO bisections (alert_id, track, tree, good, bad, suite, machine, "
			    "metric, workload, params, boots, submitter, status, created, token_hash) VALUES (nullif(?, 0), "
			    "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'asking the builder for the commits between', ?, ?) "
			    "RETURNING id",
			    DB_INT(b->alert), DB_TEXT(b->track), DB_TEXT(b->tree), DB_TEXT(b->good), DB_TEXT(b->bad),
			    DB_TEXT(b->suite), DB_TEXT(b->machine), DB_TEXT(b->metric), DB_TEXT(b->workload),
			    DB_TEXT(b->params), DB_INT(b->boots), DB_TEXT(b->submitter), DB_REAL(db_now()),
			    DB_TEXT(b->token ? hex : NULL));
	/* the ends the tracker measured already, each a point's job */
	for (i = 0; rc == 0 && i < ngood + nbad; i++) {
		int good = i < ngood;
		int64_t job = good ? good_jobs[i] : bad_jobs[i - ngood];
		char commit[41] = "";

		rc = db_row(st, &s, "SELECT commit_id FROM points WHERE job_id = ?", DB_INT(job));
		if (rc == 1) {
			db_col_copy(commit, sizeof(commit), s, 0);
			db_stmt_done(st, s);
			rc = step_insert(st, id, commit, good ? "good" : "bad", job, good ? "good" : "bad");
		} else if (rc == 0) {
			rc = -ENOENT;
		}
	}
out:
	rc = db_txn_end(st, rc);
	if (rc < 0 && rc != -EEXIST)
		db_sql_err(st, err, "create bisection");
	else if (rc == 0)
		*ret_id = id;
	db_unlock(st);
	return rc;
}

int store_bisections_running(struct store *st, int64_t **ret, size_t *ret_n)
{
	int rc;

	db_lock(st);
	rc = db_query_ids(st, "SELECT id FROM bisections WHERE state = 'running' ORDER BY id", ret, ret_n);
	db_unlock(st);
	return rc;
}

json_t *store_bisection_json(struct store *st, int64_t id)
{
	static const char *const step_names[] = {
		"id", "commit", "role", "job", "outcome", "evidence_json", "created", "finished", "job_state",
		"job_boots", "job_started", "job_finished", "error_class", "error_message", "error_stage", NULL
	};
	json_t *rows = db_rows_json(st, "SELECT " BISECTION_COLS ", b.commits FROM bisections b WHERE b.id = ?",
				    DB_ARGS(DB_INT(id)),
				    (const char *const[]){
					    "id", "alert", "track", "tree", "good", "bad", "suite", "machine", "metric",
					    "workload", "params_json", "boots", "state", "change", "status",
					    "steps_left", "eta_s", "first_bad", "result", "submitter", "created",
					    "finished", "steps_measured", "commits_json", NULL });
	json_t *one, *steps;

	if (!rows)
		return NULL;
	if (!json_array_size(rows)) {
		json_decref(rows);
		errno = ENOENT;
		return NULL;
	}
	one = json_incref(json_array_get(rows, 0));
	json_decref(rows);
	steps = db_rows_json(st, "SELECT s.id, s.commit_id, s.role, s.job_id, s.outcome, s.evidence, s.created, "
			     "s.finished, j.state, j.boots, j.started, j.finished, j.error_class, j.error_message, "
			     "(SELECT g.kind FROM stages g WHERE g.id = j.error_stage) FROM bisection_steps s "
			     "LEFT JOIN jobs j ON j.id = s.job_id WHERE s.bisection_id = ? ORDER BY s.id",
			     DB_ARGS(DB_INT(id)), step_names);
	if (!steps) {
		json_decref(one);
		return NULL;
	}
	json_object_set_new(one, "steps", steps);
	return one;
}

json_t *store_bisections_json(struct store *st, int64_t alert, int limit, int offset)
{
	return db_page_json("bisections",
			    db_rows_json(st, "SELECT " BISECTION_COLS " FROM bisections b WHERE ?1 = 0 OR "
					 "b.alert_id = ?1 ORDER BY b.id DESC LIMIT ?2 OFFSET ?3",
					 DB_ARGS(DB_INT(alert), DB_INT(limit), DB_INT(offset)), bisection_names),
			    db_count(st, "SELECT count(*) FROM bisections WHERE ?1 = 0 OR alert_id = ?1",
				     DB_ARGS(DB_INT(alert))),
			    limit, offset);
}

int store_bisection_set_commits(struct store *st, int64_t id, const json_t *commits)
{
	return db_write(st, "UPDATE bisections SET commits = ?2 WHERE id = ?1 AND state = 'running'", DB_INT(id),
			DB_JSON(commits));
}

int store_bisection_set_row(struct store *st, int64_t id, const char *workload, const char *params,
			    const char *change)
{
	return db_write(st, "UPDATE bisections SET workload = ?2, params = ?3, change = ?4 WHERE id = ?1",
			DB_INT(id), DB_TEXT(workload), DB_TEXT(params), DB_TEXT(change));
}

int store_bisection_progress(struct store *st, int64_t id, const char *status, int steps_left, double eta_s)
{
	return db_write(st, "UPDATE bisections SET status = ?2, steps_left = nullif(?3, -1), "
			"eta_s = CASE WHEN ?5 != 0 THEN ?4 END WHERE id = ?1", DB_INT(id), DB_TEXT(status),
			DB_INT(steps_left), DB_REAL(isfinite(eta_s) ? eta_s : 0), DB_INT(isfinite(eta_s)));
}

int store_bisection_step_add(struct store *st, int64_t id, const char *commit, const char *role,
			     const struct job_request *req, const struct stage_plan *plan, size_t nplan,
			     int64_t *ret_job, struct strbuf *err)
{
	int64_t job = 0;
	int rc;

	db_lock(st);
	if ((rc = db_txn_begin(st)) == 0)
		rc = db_job_insert(st, req, plan, nplan, &job);
	if (rc == 0)
		rc = step_insert(st, id, commit, role, job, NULL);
	rc = db_txn_end(st, rc);
	if (rc < 0)
		db_sql_err(st, err, "add bisection step");
	else
		*ret_job = job;
	db_unlock(st);
	return rc;
}

int store_bisection_step_done(struct store *st, int64_t step, const char *outcome, const json_t *evidence)
{
	return db_write(st, "UPDATE bisection_steps SET outcome = ?2, evidence = ?3, finished = ?4 WHERE id = ?1",
			DB_INT(step), DB_TEXT(outcome), DB_JSON(evidence), DB_REAL(db_now()));
}

int store_bisection_finish(struct store *st, int64_t id, const char *state, const char *first_bad,
			   const char *result)
{
	return db_write(st, "UPDATE bisections SET state = ?2, first_bad = ?3, result = ?4, status = ?2, "
			"steps_left = CASE WHEN ?3 IS NULL THEN steps_left ELSE 0 END, eta_s = NULL, finished = ?5 "
			"WHERE id = ?1 AND state = 'running'", DB_INT(id), DB_TEXT(state), DB_TEXT(first_bad),
			DB_TEXT(result), DB_REAL(db_now()));
}

int store_bisection_cancel(struct store *st, int64_t id)
{
	struct db_stmt *s;
	json_t *jobs = NULL, *j;
	size_t i;
	int rc;

	db_lock(st);
	if ((rc = db_txn_begin(st)) < 0)
		goto out;
	rc = db_one(st, &s, "SELECT state FROM bisections WHERE id = ?", DB_INT(id));
	if (rc == 0) {
		rc = strcmp(db_col_text(s, 0), "running") ? -EALREADY : 0;
		db_stmt_done(st, s);
	}
	if (rc == 0)
		rc = db_run(st, "UPDATE bisections SET state = 'cancelled', status = 'cancelled', eta_s = NULL, "
			    "finished = ?2 WHERE id = ?1", DB_INT(id), DB_REAL(db_now()));
out:
	rc = db_txn_end(st, rc);
	db_unlock(st);
	/* its steps that have not ended stop, as a cancelled job does */
	if (rc == 0)
		jobs = db_rows_json(st, "SELECT s.job_id FROM bisection_steps s JOIN jobs j ON j.id = s.job_id "
				    "WHERE s.bisection_id = ? AND j.state IN ('queued', 'running')",
				    DB_ARGS(DB_INT(id)), (const char *const[]){ "job", NULL });
	json_array_foreach(jobs, i, j)
		store_job_cancel(st, jsonget_int_or(j, "job", 0));
	json_decref(jobs);
	return rc;
}
