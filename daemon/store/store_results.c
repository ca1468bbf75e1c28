/*
 * The store's results: builds, and a run stage's runs with their metrics
 * and profiles, its per-second samples and the counters its kernel lacks,
 * as ingest writes them; read back per job, and put together as the
 * document the comparison is computed from, whose result (and the job's
 * verdict) is kept per rules.
 */
#include "store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "store_int.h"
#include "util.h"
#include "banned.h"

int store_build_add(struct store *st, const struct build_row *b)
{
	return db_write(st, "INSERT INTO builds (id, tree, commit_id, config_hash, compiler, state, "
			"path, created, duration, meta) VALUES (?, ?, ?, ?, ?, 'done', ?, ?, ?, ?) "
			"ON CONFLICT (id) DO UPDATE SET tree = excluded.tree, commit_id = excluded.commit_id, "
			"config_hash = excluded.config_hash, compiler = excluded.compiler, state = excluded.state, "
			"path = excluded.path, created = excluded.created, duration = excluded.duration, "
			"meta = excluded.meta",
			DB_TEXT(b->id), DB_TEXT(b->tree), DB_TEXT(b->commit_id), DB_TEXT(b->config_hash),
			DB_TEXT(b->compiler), DB_TEXT(b->path), DB_REAL(db_now()), DB_REAL(b->duration),
			DB_JSON(b->meta));
}

/* A run's metrics, and their unit and direction; in the caller's transaction. */
static int add_metrics(struct store *st, int64_t id, const json_t *metrics, const json_t *info)
{
	const char *name;
	json_t *v;
	int rc;

	json_object_foreach((json_t *)metrics, name, v) {
		if (!json_is_number(v))
			continue;
		if ((rc = db_run(st, "INSERT INTO metrics (run_id, name, value) VALUES (?, ?, ?) "
				 "ON CONFLICT (run_id, name) DO UPDATE SET value = excluded.value",
				 DB_INT(id), DB_TEXT(name), DB_REAL(json_number_value(v)))) < 0)
			return rc;
	}
	json_object_foreach((json_t *)info, name, v) {
		const char *dir = jsonget_str(v, "direction");

		if (!dir || (strcmp(dir, "higher") && strcmp(dir, "lower") && strcmp(dir, "neutral")))
			dir = "neutral";
		if ((rc = db_run(st, "INSERT INTO metric_info (name, unit, direction) VALUES (?1, ?2, ?3) "
				 "ON CONFLICT (name) DO UPDATE SET unit = excluded.unit, direction = excluded.direction "
				 "WHERE metric_info.unit IS DISTINCT FROM excluded.unit "
				 "OR metric_info.direction IS DISTINCT FROM excluded.direction", DB_TEXT(name),
				 DB_TEXT(jsonget_str(v, "unit")), DB_TEXT(dir))) < 0)
			return rc;
	}
	return 0;
}

int store_run_add(struct store *st, const struct run_row *r, const json_t *metrics,
		  const json_t *info, const json_t *profile, int64_t *ret_id)
{
	int64_t id = 0;
	int rc;

	db_lock(st);
	if ((rc = db_txn_begin(st)) < 0)
		goto out;
	rc = db_insert(st, &id, "INSERT INTO runs (job_id, stage_id, machine, side, build_id, boot_id, spec_index, "
		    "case_index, iteration, warmup, workload, params, duration) "
		    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
		    DB_INT(r->job_id), DB_INT(r->stage_id), DB_TEXT(r->machine), DB_TEXT(r->side),
		    DB_TEXT(r->build_id), DB_TEXT(r->boot_id), DB_INT(r->spec_index), DB_INT(r->case_index),
		    DB_INT(r->iteration), DB_INT(r->warmup), DB_TEXT(r->workload), DB_JSON(r->params),
		    DB_REAL(r->duration));
	if (rc < 0)
		goto out;
	if ((rc = add_metrics(st, id, metrics, info)) < 0)
		goto out;
	if (profile)
		rc = db_run(st, "INSERT INTO profiles (run_id, profile) VALUES (?, ?)", DB_INT(id), DB_JSON(profile));
out:
	rc = db_txn_end(st, rc);
	if (rc == 0 && ret_id)
		*ret_id = id;
	db_unlock(st);
	return rc;
}

int store_run_add_metrics(struct store *st, int64_t stage_id, int spec_index, int case_index, int iteration,
			  int warmup, const json_t *metrics, const json_t *info)
{
	struct db_stmt *s;
	int64_t id;
	int rc;

	db_lock(st);
	if ((rc = db_txn_begin(st)) < 0)
		goto out;
	rc = db_one(st, &s, "SELECT id FROM runs WHERE stage_id = ? AND spec_index = ? AND case_index = ? "
		    "AND iteration = ? AND warmup = ?", DB_INT(stage_id), DB_INT(spec_index), DB_INT(case_index),
		    DB_INT(iteration), DB_INT(warmup));
	if (rc < 0)
		goto out;
	id = db_col_int64(s, 0);
	db_stmt_done(st, s);
	rc = add_metrics(st, id, metrics, info);
out:
	rc = db_txn_end(st, rc);
	db_unlock(st);
	return rc;
}

int store_sample_add(struct store *st, int64_t stage_id, int spec_index, const json_t *sample)
{
	return db_write(st, "INSERT INTO samples (stage_id, spec_index, case_index, iteration, warmup, in_window, "
			"t, dt, vals) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", DB_INT(stage_id), DB_INT(spec_index),
			DB_INT(jsonget_int_or(sample, "case", 0)),
			DB_INT(jsonget_int_or(sample, "iteration", 0)),
			DB_INT(json_is_true(json_object_get(sample, "warmup"))),
			DB_INT(json_is_true(json_object_get(sample, "window"))),
			DB_REAL(jsonget_num_or(sample, "t", 0)),
			DB_REAL(jsonget_num_or(sample, "dt", 0)),
			DB_JSON(json_object_get(sample, "values")));
}

int store_unavailable_add(struct store *st, int64_t stage_id, const json_t *unavailable)
{
	const char *name;
	json_t *v;
	int rc = 0;

	db_lock(st);
	rc = db_txn_begin(st);
	json_object_foreach((json_t *)unavailable, name, v) {
		if (rc < 0)
			break;
		rc = db_run(st, "INSERT INTO unavailable (stage_id, name, reason) VALUES (?, ?, ?) "
			    "ON CONFLICT (stage_id, name) DO UPDATE SET reason = excluded.reason",
			    DB_INT(stage_id), DB_TEXT(name), DB_TEXT(json_string_value(v)));
	}
	rc = db_txn_end(st, rc);
	db_unlock(st);
	return rc;
}

/*
 * Runs of a spec that failed in their stage are marked with the failure:
 * what they measured before it stays in the store, but a spec cut short
 * does not count as a sample of its side.
 */
static void mark_failed_runs(const json_t *job, json_t *runs)
{
	json_t *stage, *e, *run;
	size_t i, k;

	json_array_foreach(runs, i, run)
		json_object_set_new(run, "error", json_null());
	json_array_foreach(json_object_get(job, "stages"), i, stage) {
		json_int_t sid = jsonget_int_or(stage, "id", 0);

		json_array_foreach(json_object_get(stage, "specs"), k, e) {
			json_int_t spec = jsonget_int_or(e, "spec", 0);
			const char *state = jsonget_str(e, "state");
			size_t r;

			if (!state || !strcmp(state, "done"))
				continue;
			json_array_foreach(runs, r, run)
				if (jsonget_int_or(run, "stage", 0) == sid &&
				    jsonget_int_or(run, "spec", 0) == spec)
					json_object_set_new(run, "error",
							    json_string(jsonget_str(e, "message") ?:
									state));
		}
	}
}

/*
 * The rows of sql with args, read under st's lock: each made JSON by row,
 * in an array, returned as {key: [...]} (the array itself when key is
 * NULL). NULL with errno the store's error when a step fails: never part
 * of the rows.
 */
static json_t *rows_json(struct store *st, const char *key, json_t *(*row)(struct db_stmt *s),
			 const char *sql, const struct db_arg *args)
{
	DB_GUARD(st);
	struct db_stmt *s = db_prep(st, sql);
	json_t *arr = json_array();
	int rc;

	db_bind_args(s, args);
	while ((rc = db_stmt_step(st, s)) == DB_ROW)
		json_array_append_new(arr, row(s));
	db_stmt_done(st, s);
	if (rc != DB_DONE || !key)
		return db_read_end(arr, rc);
	return json_pack("{s:o}", key, arr);
}

static json_t *run_row(struct db_stmt *s)
{
	static const char *const names[] = { "id", "stage", "machine", "side", "spec", "case",
					     "iteration", "warmup", "workload", "params", "duration_s",
					     "build_id", "boot_id" };
	json_t *r = json_object();
	int i;

	for (i = 0; i < (int)ARRAY_SIZE(names); i++)
		json_object_set_new(r, names[i], i == 9 ? db_col_parsed(s, i) :
				    i == 7 ? json_boolean(db_col_int(s, i)) : db_col_json(s, i));
	return r;
}

json_t *store_runs_json(struct store *st, int64_t job_id)
{
	json_t *arr, *job;

	arr = rows_json(st, NULL, run_row,
			"SELECT id, stage_id, machine, side, spec_index, case_index, iteration, warmup, "
			"workload, params, duration, build_id, boot_id FROM runs WHERE job_id = ? ORDER BY id",
			DB_ARGS(DB_INT(job_id)));
	if (!arr)
		return NULL;
	job = store_job_json(st, job_id);
	/* without its stages, the runs of failed specs would pass as samples */
	if (!job && errno != ENOENT) {
		json_decref(arr);
		return NULL;
	}
	mark_failed_runs(job, arr);
	json_decref(job);
	return json_pack("{s:o}", "runs", arr);
}

/* {"base": {METRIC: reason}, "patched": {...}, "": {...}}: the counters each
 * side's kernels lack, with the reason the agent gave. */
static json_t *unavailable_by_side(struct store *st, int64_t job_id)
{
	struct db_stmt *s;
	json_t *by = json_object();
	int rc;

	db_lock(st);
	s = db_prep(st, "SELECT coalesce(g.side, ''), u.name, coalesce(u.reason, '') FROM unavailable u "
		     "JOIN stages g ON g.id = u.stage_id WHERE g.job_id = ? ORDER BY g.seq");
	db_bind_int(s, 1, job_id);
	while ((rc = db_stmt_step(st, s)) == DB_ROW) {
		const char *side = db_col_text(s, 0);
		json_t *m = json_object_get(by, side);

		if (!m) {
			m = json_object();
			json_object_set_new(by, side, m);
		}
		json_object_set_new(m, db_col_text(s, 1), db_col_json(s, 2));
	}
	db_stmt_done(st, s);
	db_unlock(st);
	return db_read_end(by, rc);
}

/* The specs that failed in a run stage, whether or not they measured
 * anything before: [{"side", "spec", "workload", "stage", "reason"}]. */
static json_t *failed_specs(const json_t *job)
{
	json_t *out = json_array(), *stage, *e;
	size_t i, k;

	json_array_foreach(json_object_get(job, "stages"), i, stage)
		json_array_foreach(json_object_get(stage, "specs"), k, e) {
			if (strcmp(jsonget_str(e, "state") ?: "", "failed"))
				continue;
			json_array_append_new(out, json_pack("{s:s,s:O,s:O,s:O,s:s}", "side",
							     jsonget_str(stage, "side") ?: "",
							     "spec", json_object_get(e, "spec"),
							     "workload", json_object_get(e, "workload"),
							     "stage", json_object_get(stage, "seq"),
							     "reason", jsonget_str(e, "message") ?: "failed"));
		}
	return out;
}

static json_t *pair_row(struct db_stmt *s)
{
	return json_pack("[o,o]", db_col_json(s, 0), db_col_json(s, 1));
}

/* The job's sequential design, for the comparison's alpha spending: the
 * boots of its first look, the most it may have, and which look this is
 * (2 once boots were added); and its pairs, the boots that ran as duets. */
static json_t *job_design(struct store *st, int64_t job_id)
{
	struct db_stmt *s;
	json_t *d = NULL, *pairs;
	int rc;

	db_lock(st);
	s = db_prep(st, "SELECT coalesce(first_boots, boots), coalesce(max_boots, boots), "
		     "first_boots IS NOT NULL FROM jobs WHERE id = ?");
	db_bind_int(s, 1, job_id);
	if ((rc = db_stmt_step(st, s)) == DB_ROW)
		d = json_pack("{s:i,s:i,s:i}", "boots", db_col_int(s, 0),
			      "max_boots", db_col_int(s, 1), "look", db_col_int(s, 2) ? 2 : 1);
	db_stmt_done(st, s);
	db_unlock(st);
	if (rc != DB_ROW)
		return db_read_end(json_null(), rc);
	/* the boots that ran as a duet, side by side: [base boot, patched boot] */
	pairs = rows_json(st, NULL, pair_row,
			  "SELECT b.boot_id, p.boot_id FROM stages b JOIN stages p ON p.id = b.duet_of "
			  "WHERE b.job_id = ? AND b.kind = 'boot' AND b.side = 'base' AND p.side = 'patched' "
			  "AND b.boot_id IS NOT NULL AND p.boot_id IS NOT NULL ORDER BY b.seq",
			  DB_ARGS(DB_INT(job_id)));
	if (!pairs) {
		json_decref(d);
		return NULL;
	}
	json_object_set_new(d, "pairs", pairs);
	return d;
}

json_t *store_compare_doc(struct store *st, int64_t job_id)
{
	json_t *job = store_job_json(st, job_id), *runs = NULL, *metrics = NULL, *profiles = NULL;
	json_t *builds = NULL, *unavailable = NULL, *design = NULL, *doc = NULL;
	int err;

	if (!job)
		return NULL;
	/* each part whole, or no document: a comparison of part of the runs
	 * would be a wrong verdict, not a missing one */
	if (!(runs = store_runs_json(st, job_id)) || !(metrics = store_metrics_json(st, job_id, NULL, 1)) ||
	    !(profiles = store_profiles_json(st, job_id)) || !(builds = store_job_builds_json(st, job_id)) ||
	    !(unavailable = unavailable_by_side(st, job_id)) || !(design = job_design(st, job_id))) {
		err = errno == ENOENT ? EIO : errno;
		json_decref(job);
		goto out;
	}
	doc = json_pack("{s:O,s:O,s:O,s:{s:o,s:O},s:O,s:o,s:O}", "runs", json_object_get(runs, "runs"),
			"metrics", json_object_get(metrics, "metrics"),
			"profiles", json_object_get(profiles, "profiles"),
			"provenance", "job", job, "builds", json_object_get(builds, "builds"),
			"unavailable_by_side", unavailable, "failed", failed_specs(job),
			"design", design);
	err = 0;
out:
	json_decref(runs);
	json_decref(metrics);
	json_decref(profiles);
	json_decref(builds);
	json_decref(unavailable);
	json_decref(design);
	if (!doc)
		errno = err;
	return doc;
}

static json_t *profile_row(struct db_stmt *s)
{
	return json_pack("{s:o,s:o}", "run", db_col_json(s, 0), "profile", db_col_parsed(s, 1));
}

json_t *store_profiles_json(struct store *st, int64_t job_id)
{
	return rows_json(st, "profiles", profile_row,
			 "SELECT p.run_id, p.profile FROM profiles p JOIN runs r ON r.id = p.run_id "
			 "WHERE r.job_id = ? AND r.warmup = 0 ORDER BY p.run_id",
			 DB_ARGS(DB_INT(job_id)));
}

static json_t *build_row(struct db_stmt *s)
{
	return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "side", db_col_json(s, 0),
			 "build_id", db_col_json(s, 1), "commit", db_col_json(s, 2),
			 "config_hash", db_col_json(s, 3), "compiler", db_col_json(s, 4),
			 "duration_s", db_col_json(s, 5), "meta", db_col_parsed(s, 6));
}

json_t *store_job_builds_json(struct store *st, int64_t job_id)
{
	return rows_json(st, "builds", build_row,
			 "SELECT g.side, b.id, b.commit_id, b.config_hash, b.compiler, b.duration, b.meta "
			 "FROM stages g JOIN builds b ON b.id = g.build_id WHERE g.job_id = ? AND g.kind = 'build' "
			 "ORDER BY g.seq",
			 DB_ARGS(DB_INT(job_id)));
}

static json_t *metric_row(struct db_stmt *s)
{
	return json_pack("{s:o,s:o,s:o,s:o,s:o}", "run", db_col_json(s, 0), "name", db_col_json(s, 1),
			 "value", db_col_json(s, 2), "unit", db_col_json(s, 3), "direction", db_col_json(s, 4));
}

json_t *store_metrics_json(struct store *st, int64_t job_id, const char *prefix, int include_warmup)
{
	return rows_json(st, "metrics", metric_row,
			 "SELECT m.run_id, m.name, m.value, i.unit, coalesce(i.direction, 'neutral') "
			 "FROM runs r JOIN metrics m ON m.run_id = r.id LEFT JOIN metric_info i ON i.name = m.name "
			 "WHERE r.job_id = ?1 AND (?2 != 0 OR r.warmup = 0) "
			 "AND (?3 IS NULL OR substr(m.name, 1, length(?3)) = ?3) "
			 "ORDER BY m.run_id, m.name",
			 DB_ARGS(DB_INT(job_id), DB_INT(include_warmup), DB_TEXT(prefix)));
}

/* One sample row, copied out of the store so that JSON is built unlocked. */
struct sample_row {
	int64_t id, stage, spec, kase, iteration;
	double t, dt;
	int warmup, window;
	char *vals;		/* JSON text, or NULL */
};

json_t *store_samples_json(struct store *st, int64_t job_id, int64_t stage_id, const char *name,
			   int64_t after, int limit)
{
	struct sample_row *rows = xcalloc((size_t)limit + 1, sizeof(*rows));
	json_t *arr = json_array(), *next = json_null();
	struct db_stmt *s;
	int i, n = 0, rc = DB_DONE;

	db_lock(st);
	s = db_prep(st, "SELECT p.id, p.stage_id, p.t, p.dt, p.spec_index, p.case_index, p.iteration, p.warmup, "
		     "p.in_window, p.vals FROM samples p JOIN stages g ON g.id = p.stage_id "
		     "WHERE g.job_id = ?1 AND (?2 = 0 OR p.stage_id = ?2) AND p.id > ?3 "
		     "ORDER BY p.id LIMIT ?4");
	/* one more than the limit: whether there is a next page */
	db_bind(s, DB_INT(job_id), DB_INT(stage_id), DB_INT(after), DB_INT(limit + 1));
	while (n <= limit && (rc = db_stmt_step(st, s)) == DB_ROW) {
		struct sample_row *r = &rows[n++];
		const char *v = db_col_text(s, 9);

		r->id = db_col_int64(s, 0);
		r->stage = db_col_int64(s, 1);
		r->t = db_col_double(s, 2);
		r->dt = db_col_double(s, 3);
		r->spec = db_col_int64(s, 4);
		r->kase = db_col_int64(s, 5);
		r->iteration = db_col_int64(s, 6);
		r->warmup = db_col_int(s, 7);
		r->window = db_col_int(s, 8);
		if (v)
			r->vals = xstrdup(v);
	}
	db_stmt_done(st, s);
	db_unlock(st);
	if (rc != DB_ROW && rc != DB_DONE) {
		for (i = 0; i < n; i++)
			free(rows[i].vals);
		free(rows);
		json_decref(next);
		return db_read_end(arr, rc);
	}
	if (n > limit) {
		n = limit;
		json_decref(next);
		next = json_integer(rows[n - 1].id);
	}
	for (i = 0; i < n; i++) {
		json_t *v = rows[i].vals ? json_loads(rows[i].vals, JSON_DECODE_ANY, NULL) : NULL;

		if (name && v) {	/* the one counter asked for, null where a sample lacks it */
			json_t *one = json_pack("{s:O?}", name, json_object_get(v, name));

			json_decref(v);
			v = one;
		}

		json_array_append_new(arr, json_pack("{s:I,s:f,s:f,s:I,s:I,s:I,s:b,s:b,s:o}",
						     "stage", (json_int_t)rows[i].stage, "t", rows[i].t,
						     "dt", rows[i].dt, "spec", (json_int_t)rows[i].spec,
						     "case", (json_int_t)rows[i].kase,
						     "iteration", (json_int_t)rows[i].iteration,
						     "warmup", rows[i].warmup, "window", rows[i].window,
						     "values", v ? v : json_null()));
	}
	for (i = 0; i <= limit; i++)
		free(rows[i].vals);
	free(rows);
	return json_pack("{s:o,s:o}", "samples", arr, "next", next);
}

int store_comparison_get(struct store *st, int64_t job, const char *rules, struct strbuf *ret_doc)
{
	struct db_stmt *s;
	int found = 0;

	db_lock(st);
	s = db_prep(st, "SELECT doc FROM comparisons WHERE job_id = ? AND rules = ?");
	db_bind(s, DB_INT(job), DB_TEXT(rules));
	if (s && db_stmt_step(st, s) == DB_ROW) {
		strbuf_reset(ret_doc);
		strbuf_add(ret_doc, db_col_text(s, 0), db_col_bytes(s, 0));
		found = 1;
	}
	db_stmt_done(st, s);
	db_unlock(st);
	return found;
}

int store_comparison_put(struct store *st, int64_t job, const char *rules, const char *doc,
			 const char *verdict, double compute_ms)
{
	int rc;

	db_lock(st);
	if ((rc = db_txn_begin(st)) < 0)
		goto out;
	rc = db_run(st, "INSERT INTO comparisons (job_id, rules, doc, computed, compute_ms) "
		    "SELECT id, ?2, ?3, ?4, ?5 FROM jobs WHERE id = ?1 "
		    "AND state IN ('done', 'failed', 'cancelled') "
		    "ON CONFLICT (job_id) DO UPDATE SET rules = excluded.rules, doc = excluded.doc, "
		    "computed = excluded.computed, compute_ms = excluded.compute_ms",
		    DB_INT(job), DB_TEXT(rules), DB_TEXT(doc), DB_REAL(db_now()), DB_REAL(compute_ms));
	if (rc == 0 && !db_changes(st))
		rc = -ENOENT;
	/* a failed job's partial comparison is kept, but gives it no verdict */
	if (rc == 0)
		rc = db_run(st, "UPDATE jobs SET verdict = ?2 WHERE id = ?1 AND state = 'done'",
			    DB_INT(job), DB_TEXT(verdict));
	rc = db_txn_end(st, rc);
out:
	db_unlock(st);
	return rc;
}
