/*
 * The store's jobs: creating one with its stage plan (and more boots after
 * a look), reading one with its stages, the job list (as JSON text, from
 * the rows, with its totals kept per filter until the store changes),
 * cancelling, the patch and the jobs still without a verdict.
 */
#include "store.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "util.h"
#include "banned.h"

/* a stage of a job's plan: job_id, seq, kind, side, boot_index, timeout, cpus (0: NULL) */
static const char STAGE_INSERT[] =
	"INSERT INTO stages (job_id, seq, kind, side, boot_index, timeout, cpus) VALUES (?, ?, ?, ?, ?, ?, "
	"nullif(?, 0))";

int db_job_insert(struct store *st, const struct job_request *req, const struct stage_plan *stages,
		  size_t nstages, int64_t *ret_id)
{
	int64_t id;
	size_t i;
	int rc;

	rc = db_insert(st, &id, "INSERT INTO jobs (kind, suite, suite_json, machines, tags, submitter, boots, created, "
		    "tree, base, patch_kind, patch, patch_url, patch_ref, max_boots, patch_subject, arch, defaults, "
		    "patches, per_patch) VALUES (?, ?, ?, coalesce(?, '[]'), coalesce(?, '[]'), ?, ?, ?, ?, ?, ?, ?, ?, "
		    "?, ?, ?, coalesce(?, 'x86_64'), ?, ?, ?) RETURNING id",
		    DB_TEXT(req->kind), DB_TEXT(req->suite), DB_JSON(req->suite_json), DB_JSON(req->machines),
		    DB_JSON(req->tags), DB_TEXT(req->submitter), DB_INT(req->boots), DB_REAL(db_now()),
		    DB_TEXT(req->tree), DB_TEXT(req->base), DB_TEXT(req->patch_kind), DB_BYTES(req->patch),
		    DB_TEXT(req->patch_url), DB_TEXT(req->patch_ref),
		    DB_INT(req->max_boots > req->boots ? req->max_boots : req->boots), DB_TEXT(req->patch_subject),
		    DB_TEXT(req->arch), DB_JSON(req->defaults), DB_JSON(req->patches), DB_JSON(req->per_patch));
	if (rc < 0)
		return rc;
	for (i = 0; i < nstages; i++)
		if ((rc = db_run(st, STAGE_INSERT, DB_INT(id), DB_INT((int)i), DB_TEXT(stages[i].kind),
				 DB_TEXT(stages[i].side), DB_INT(stages[i].boot_index),
				 DB_REAL(stages[i].timeout), DB_INT(stages[i].cpus))) < 0)
			return rc;
	*ret_id = id;
	return 0;
}

int store_job_group_create(struct store *st, const struct job_request *reqs,
			   struct stage_plan *const *plans, const size_t *nplans, size_t n,
			   int64_t *ret_ids, struct strbuf *err)
{
	DB_GUARD(st);
	size_t i;
	int rc;

	rc = db_txn_begin(st);
	for (i = 0; rc == 0 && i < n; i++) {
		rc = db_job_insert(st, &reqs[i], plans[i], nplans[i], &ret_ids[i]);
		if (rc == 0 && reqs[i].token)
			rc = db_job_token_set(st, ret_ids[i], reqs[i].token);
		if (rc == 0 && reqs[i].per_patch) {
			/* each job of the series names the first: known once it is stored */
			json_t *pp = json_deep_copy(reqs[i].per_patch);

			json_object_set_new(pp, "of", json_integer(ret_ids[0]));
			rc = db_run(st, "UPDATE jobs SET per_patch = ?2 WHERE id = ?1", DB_INT(ret_ids[i]), DB_JSON(pp));
			json_decref(pp);
		}
	}
	if ((rc = db_txn_end(st, rc)) < 0)
		db_sql_err(st, err, n > 1 ? "create the series' jobs" : "create job");
	return rc;
}

int store_job_create(struct store *st, const struct job_request *req,
		     const struct stage_plan *stages, size_t nstages, int64_t *ret_id,
		     struct strbuf *err)
{
	struct stage_plan *plan = (struct stage_plan *)stages;

	return store_job_group_create(st, req, &plan, &nstages, 1, ret_id, err);
}

json_t *store_per_patch_jobs(struct store *st, int64_t of)
{
	static const char *const names[] = { "id", "k", "state", "verdict", "patch_subject", NULL };

	/* the series' jobs are found by the index on per_patch's "of" */
	return db_rows_json(st, DB_SQL(st, "SELECT id, json_extract(per_patch, '$.k') AS k, state, verdict, "
				       "patch_subject FROM jobs WHERE per_patch IS NOT NULL AND "
				       "json_extract(per_patch, '$.of') = ? ORDER BY k",
				       "SELECT id, (per_patch::json ->> 'k')::bigint AS k, state, verdict, "
				       "patch_subject FROM jobs WHERE per_patch IS NOT NULL AND "
				       "(per_patch::json ->> 'of')::bigint = ?1 ORDER BY k"),
			    DB_ARGS(DB_INT(of)), names);
}

/* the last column is the job's current stage: the running one, else the
 * last started, else the first */
#define JOB_COLS "id, kind, state, suite, machines, tags, submitter, boots, created, started, " \
	"finished, cancel_requested, error_class, error_message, error_stage, tree, base, " \
	"(SELECT kind FROM stages g WHERE g.job_id = jobs.id ORDER BY (g.state = 'running') DESC, " \
	"(g.started IS NOT NULL) DESC, CASE WHEN g.started IS NULL THEN g.seq ELSE -g.seq END LIMIT 1), " \
	"patch_kind, patch_url, patch_ref, max_boots, verdict, patch_subject, arch, defaults, patches, per_patch"

static json_t *job_row(struct db_stmt *s)
{
	json_t *j = json_object();

	json_object_set_new(j, "id", db_col_json(s, 0));
	json_object_set_new(j, "kind", db_col_json(s, 1));
	json_object_set_new(j, "state", db_col_json(s, 2));
	json_object_set_new(j, "suite", db_col_json(s, 3));
	json_object_set_new(j, "machines", db_col_parsed(s, 4));
	json_object_set_new(j, "tags", db_col_parsed(s, 5));
	json_object_set_new(j, "submitter", db_col_json(s, 6));
	json_object_set_new(j, "boots", db_col_json(s, 7));
	json_object_set_new(j, "created", db_col_json(s, 8));
	json_object_set_new(j, "started", db_col_json(s, 9));
	json_object_set_new(j, "finished", db_col_json(s, 10));
	json_object_set_new(j, "cancel_requested", json_boolean(db_col_int(s, 11)));
	if (db_col_type(s, 12) != DB_T_NULL)
		json_object_set_new(j, "error", json_pack("{s:o,s:o,s:o}", "class", db_col_json(s, 12),
							  "message", db_col_json(s, 13), "stage", db_col_json(s, 14)));
	else
		json_object_set_new(j, "error", json_null());
	json_object_set_new(j, "tree", db_col_json(s, 15));
	json_object_set_new(j, "base", db_col_json(s, 16));
	json_object_set_new(j, "stage", db_col_json(s, 17));
	json_object_set_new(j, "patch_kind", db_col_json(s, 18));
	json_object_set_new(j, "patch_url", db_col_json(s, 19));
	json_object_set_new(j, "patch_ref", db_col_json(s, 20));
	json_object_set_new(j, "max_boots", db_col_json(s, 21));
	json_object_set_new(j, "verdict", db_col_json(s, 22));
	json_object_set_new(j, "patch_subject", db_col_json(s, 23));
	json_object_set_new(j, "arch", db_col_json(s, 24));
	json_object_set_new(j, "defaults", db_col_parsed(s, 25));
	json_object_set_new(j, "patches", db_col_parsed(s, 26));
	json_object_set_new(j, "per_patch", db_col_parsed(s, 27));
	return j;
}

/* The "host" of the agent's hello that column i holds: null when there
 * is none, or it is no JSON (a string member is itself read as JSON, as
 * it always was). */
static json_t *hello_host(struct db_stmt *s, int i)
{
	json_t *hello = db_col_parsed(s, i), *h = json_object_get(hello, "host"), *v;

	if (json_is_string(h))
		v = json_loads(json_string_value(h), JSON_DECODE_ANY, NULL);
	else
		v = json_incref(h);
	json_decref(hello);
	return v ? v : json_null();
}

json_t *store_job_json(struct store *w, int64_t id)
{
	DB_READER(st, w);
	struct db_stmt *s, *js;
	json_t *job = NULL, *stages;
	int rc;

	/* js is handed back last: while it is open, its read transaction
	 * gives the stages the same commit as the job */
	js = db_prep(st, "SELECT " JOB_COLS " FROM jobs WHERE id = ?");
	db_bind_int(js, 1, id);
	if ((rc = db_stmt_step(st, js)) == DB_ROW)
		job = job_row(js);
	if (!job) {
		db_stmt_done(st, js);
		if (rc != DB_DONE)
			return db_read_end(NULL, rc);
		errno = ENOENT;
		return NULL;
	}
	stages = json_array();
	s = db_prep(st, "SELECT id, seq, kind, side, state, machine, attempt, started, finished, "
		     "error_class, error_message, boot_index, build_id, boot_id, repeat_of, note, specs, "
		     "host, cpus FROM stages WHERE job_id = ? ORDER BY seq");
	db_bind_int(s, 1, id);
	while ((rc = db_stmt_step(st, s)) == DB_ROW) {
		json_t *g = json_object();
		static const char *const names[] = { "id", "seq", "kind", "side", "state", "machine",
						     "attempt", "started", "finished", "error_class",
						     "error_message", "boot_index", "build_id", "boot_id",
						     "repeat_of", "note", "specs", "host", "cpus" };
		int i;

		for (i = 0; i < (int)ARRAY_SIZE(names); i++)
			json_object_set_new(g, names[i], i == 16 ? db_col_parsed(s, i) : i == 17 ? hello_host(s, i)
								 : db_col_json(s, i));
		if (json_is_null(json_object_get(g, "specs")))
			json_object_set_new(g, "specs", json_array());
		json_array_append_new(stages, g);
	}
	db_stmt_done(st, s);
	db_stmt_done(st, js);
	json_object_set_new(job, "stages", stages);
	return db_read_end(job, rc);
}

/* The job list's totals for a filter, kept until the next change: the
 * count reads every matching job, the page only 50. */
static int count_get(struct store *w, const char *key, int64_t gen, int64_t *ret_total)
{
	size_t i;
	int found = 0;

	pthread_mutex_lock(&w->count_lock);
	for (i = 0; i < COUNT_SLOTS; i++)
		if (w->counts[i].key && w->counts[i].gen == gen && !strcmp(w->counts[i].key, key)) {
			*ret_total = w->counts[i].total;
			found = 1;
			break;
		}
	pthread_mutex_unlock(&w->count_lock);
	return found;
}

static void count_put(struct store *w, const char *key, int64_t gen, int64_t total)
{
	struct count_slot *c = NULL;
	size_t i;
	char *k = xstrdup(key);

	pthread_mutex_lock(&w->count_lock);
	for (i = 0; i < COUNT_SLOTS && !c; i++)
		if (w->counts[i].key && !strcmp(w->counts[i].key, key))
			c = &w->counts[i];
	if (!c)
		c = &w->counts[w->next_count++ % COUNT_SLOTS];
	free(c->key);
	c->key = k;
	c->gen = gen;
	c->total = total;
	pthread_mutex_unlock(&w->count_lock);
}

/* Column i as JSON text, as db_col_json would encode it (api_server.c's precision). */
static void col_text(struct strbuf *out, struct db_stmt *s, int i)
{
	switch (db_col_type(s, i)) {
	case DB_T_INT:
		strbuf_addf(out, "%lld", (long long)db_col_int64(s, i));
		break;
	case DB_T_REAL:
		strbuf_add_json_real(out, db_col_double(s, i), 12);
		break;
	case DB_T_TEXT:
		strbuf_add_json_string(out, db_col_text(s, i),
				       db_col_bytes(s, i));
		break;
	default:
		strbuf_addstr(out, "null");
	}
}

/* A column holding JSON text, as db_col_parsed would encode it. */
static void col_parsed_text(struct strbuf *out, struct db_stmt *s, int i)
{
	const char *t = db_col_text(s, i);
	json_t *v;
	char *txt;

	if (t && !strcmp(t, "[]")) {
		strbuf_addstr(out, "[]");
		return;
	}
	v = t ? json_loads(t, JSON_DECODE_ANY, NULL) : NULL;
	txt = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(12)) : NULL;
	strbuf_addstr(out, txt ? txt : "null");
	free(txt);
	json_decref(v);
}

/* Text column i as JSON text, each place url appears in it redacted
 * (util.h: util_url_redact_in). */
static void col_text_redacted(struct strbuf *out, struct db_stmt *s, int i, const char *url)
{
	struct strbuf t = STRBUF_INIT;

	if (db_col_type(s, i) != DB_T_TEXT) {
		col_text(out, s, i);
		return;
	}
	util_url_redact_in(db_col_text(s, i), db_col_bytes(s, i), url, &t);
	strbuf_add_json_string(out, t.buf, t.len);
	strbuf_release(&t);
}

/* job_row, written as JSON text: the job list is the hottest read, and
 * building a document only to encode it took most of its time. With
 * redact, the job's URL (patch_url: a branch's or an mbox's) is redacted
 * where it shows: the URL, the job's name, its error. */
static void job_row_text(struct strbuf *out, struct db_stmt *s, int redact)
{
	static const char *const keys[] = {
		"id", "kind", "state", "suite", "machines", "tags", "submitter", "boots", "created",
		"started", "finished", "cancel_requested", "error", NULL, NULL, "tree", "base",
		"stage", "patch_kind", "patch_url", "patch_ref", "max_boots", "verdict", "patch_subject",
		"arch", "defaults", "patches", "per_patch",
	};
	const char *url = redact ? db_col_text(s, 19) : NULL;
	int i;

	for (i = 0; i < (int)ARRAY_SIZE(keys); i++) {
		if (!keys[i])
			continue;
		strbuf_addstr(out, i ? ",\"" : "{\"");
		strbuf_addstr(out, keys[i]);
		strbuf_addstr(out, "\":");
		if (i == 4 || i == 5 || i >= 25) {
			col_parsed_text(out, s, i);
		} else if (i == 11) {
			strbuf_addstr(out, db_col_int(s, i) ? "true" : "false");
		} else if (i == 12 && db_col_type(s, 12) != DB_T_NULL) {
			strbuf_addstr(out, "{\"class\":");
			col_text(out, s, 12);
			strbuf_addstr(out, ",\"message\":");
			col_text_redacted(out, s, 13, url);
			strbuf_addstr(out, ",\"stage\":");
			col_text(out, s, 14);
			strbuf_addch(out, '}');
		} else if (url && (i == 19 || i == 23)) {
			col_text_redacted(out, s, i, url);
		} else {
			col_text(out, s, i);
		}
	}
	strbuf_addch(out, '}');
}

int store_jobs_text(struct store *w, const struct job_filter *f, struct strbuf *out)
{
	struct strbuf where = STRBUF_INIT, sql = STRBUF_INIT, key = STRBUF_INIT;
	const char *const fields[] = { f->state, f->suite, f->submitter, f->tree, f->verdict };
	const char *const conds[] = { "state", "suite", "submitter", "tree", "verdict" };
	const char *vals[ARRAY_SIZE(fields)];
	int nv = 0, i, n = 0, limit = f->limit > 0 ? f->limit : 50, offset = f->offset > 0 ? f->offset : 0;
	struct db_stmt *s;
	int64_t total = 0, gen;
	int rc = DB_ROW;

	if (limit > 500)
		limit = 500;
	for (i = 0; i < (int)ARRAY_SIZE(fields); i++) {
		if (fields[i]) {
			strbuf_addf(&where, "%s %s = ?", nv ? " AND" : " WHERE", conds[i]);
			vals[nv++] = fields[i];
			strbuf_addf(&key, "%zu:%s;", strlen(fields[i]), fields[i]);
		} else {
			strbuf_addstr(&key, "-;");
		}
	}
	/* before the count: a change committed after it retires what we keep */
	gen = store_generation(w);
	DB_READER(st, w);
	if (gen < 0 || !count_get(w, key.buf, gen, &total)) {
		strbuf_addf(&sql, "SELECT count(*) FROM jobs%s", where.buf);
		s = db_prep_text(st, sql.buf);
		for (i = 0; i < nv; i++)
			db_bind_text(s, i + 1, vals[i]);
		if ((rc = db_stmt_step(st, s)) == DB_ROW)
			total = db_col_int64(s, 0);
		db_stmt_done(st, s);
		if (rc == DB_ROW && gen >= 0)
			count_put(w, key.buf, gen, total);
	}
	if (rc == DB_ROW) {
		strbuf_reset(&sql);
		strbuf_addf(&sql, "SELECT " JOB_COLS " FROM jobs%s ORDER BY id DESC LIMIT ? OFFSET ?",
			    where.buf);
		s = db_prep_text(st, sql.buf);
		for (i = 0; i < nv; i++)
			db_bind_text(s, i + 1, vals[i]);
		db_bind_int(s, nv + 1, limit);
		db_bind_int(s, nv + 2, offset);
		strbuf_addstr(out, "{\"jobs\":[");
		while ((rc = db_stmt_step(st, s)) == DB_ROW) {
			if (n++)
				strbuf_addch(out, ',');
			job_row_text(out, s, f->redact_urls);
		}
		db_stmt_done(st, s);
		strbuf_addf(out, "],\"total\":%lld,\"limit\":%d,\"offset\":%d}", (long long)total, limit,
			    offset);
	}
	strbuf_release(&where);
	strbuf_release(&sql);
	strbuf_release(&key);
	if (rc == DB_DONE)
		return 0;
	return db_errno(rc);
}

json_t *store_jobs_json(struct store *st, const struct job_filter *f)
{
	struct strbuf text = STRBUF_INIT;
	json_t *doc = NULL;
	int r = store_jobs_text(st, f, &text);

	if (r == 0 && !(doc = json_loadb(text.buf, text.len, 0, NULL)))
		r = -EIO;
	strbuf_release(&text);
	if (r < 0)
		errno = -r;
	return doc;
}

int64_t store_job_without_verdict(struct store *st, int64_t below)
{
	struct db_stmt *s;
	int64_t id = 0;
	int rc;

	db_lock(st);
	s = db_prep(st, "SELECT id FROM jobs WHERE kind = 'ab' AND state = 'done' AND verdict IS NULL AND id < ? "
		     "ORDER BY id DESC LIMIT 1");
	db_bind_int(s, 1, below);
	if ((rc = db_stmt_step(st, s)) == DB_ROW)
		id = db_col_int64(s, 0);
	else if (rc != DB_DONE)
		id = db_errno(rc);
	db_stmt_done(st, s);
	db_unlock(st);
	return id;
}

/* The job's state into buf, and how many of its stages run: 0, -ENOENT,
 * or a store error. Caller holds the lock. */
static int job_state(struct store *st, int64_t id, char *buf, size_t len, int *ret_running)
{
	struct db_stmt *s;
	int rc = db_one(st, &s, "SELECT state, (SELECT count(*) FROM stages WHERE job_id = ?1 "
			"AND state = 'running') FROM jobs WHERE id = ?1", DB_INT(id));

	if (rc < 0)
		return rc;
	db_col_copy(buf, len, s, 0);
	*ret_running = db_col_int(s, 1);
	db_stmt_done(st, s);
	return 0;
}

static int finished_state(const char *state)
{
	return !strcmp(state, "done") || !strcmp(state, "failed") || !strcmp(state, "cancelled");
}

int store_job_cancel(struct store *st, int64_t id)
{
	char state[16];
	int rc, running = 0;

	db_lock(st);
	/* read inside the transaction: the scheduler may start a stage meanwhile */
	if ((rc = db_txn_begin(st)) < 0 || (rc = job_state(st, id, state, sizeof(state), &running)) < 0)
		goto out;
	if (finished_state(state)) {
		rc = -EALREADY;
		goto out;
	}
	if ((rc = db_run(st, "UPDATE jobs SET cancel_requested = 1 WHERE id = ?", DB_INT(id))) < 0)
		goto out;
	if (!running) {
		if ((rc = db_run(st, "UPDATE stages SET state = 'cancelled', error_class = 'cancelled', "
				 "error_message = 'cancelled before it started', finished = ?2 "
				 "WHERE job_id = ?1 AND state = 'pending'", DB_INT(id), DB_REAL(db_now()))) < 0)
			goto out;
		rc = db_run(st, "UPDATE jobs SET state = 'cancelled', finished = ?2, error_class = 'cancelled', "
			    "error_message = 'cancelled' WHERE id = ?1", DB_INT(id), DB_REAL(db_now()));
	}
out:
	/* -EALREADY and -ENOENT changed nothing: rolled back all the same */
	rc = db_txn_end(st, rc);
	db_unlock(st);
	return rc;
}

int store_jobs_cancelling(struct store *st, int64_t **ret, size_t *ret_n)
{
	int rc;

	*ret = NULL;
	*ret_n = 0;
	db_lock(st);
	rc = db_query_ids(st, "SELECT id FROM jobs WHERE cancel_requested = 1 AND state IN ('queued', 'running')",
		       ret, ret_n);
	db_unlock(st);
	return rc;
}

int store_job_patch(struct store *st, int64_t job_id, struct strbuf *kind, struct strbuf *text,
		    struct strbuf *url, struct strbuf *ref)
{
	struct db_stmt *s;
	int rc = -ENOENT;

	db_lock(st);
	s = db_prep(st, "SELECT coalesce(patch_kind, ''), coalesce(patch, ''), coalesce(patch_url, ''), "
		     "coalesce(patch_ref, '') FROM jobs WHERE id = ?");
	db_bind_int(s, 1, job_id);
	if (s && db_stmt_step(st, s) == DB_ROW) {
		struct strbuf *outs[] = { kind, text, url, ref };
		int i;

		for (i = 0; i < 4; i++)
			if (outs[i])
				strbuf_add(outs[i], db_col_text(s, i), db_col_bytes(s, i));
		rc = 0;
	}
	db_stmt_done(st, s);
	db_unlock(st);
	return rc;
}

int store_job_set_patch(struct store *st, int64_t job_id, const char *text)
{
	return db_write(st, "UPDATE jobs SET patch = ?2 WHERE id = ?1", DB_INT(job_id), DB_BYTES(text));
}

int store_job_set_patches(struct store *st, int64_t job_id, const json_t *patches)
{
	return db_write(st, "UPDATE jobs SET patches = ?2 WHERE id = ?1", DB_INT(job_id), DB_JSON(patches));
}

int store_job_set_patch_subject(struct store *st, int64_t job_id, const char *subject)
{
	return db_write(st, "UPDATE jobs SET patch_subject = ?2 WHERE id = ?1", DB_INT(job_id), DB_TEXT(subject));
}

int store_job_add_boots(struct store *st, int64_t job_id, int more, double boot_timeout,
			double run_timeout)
{
	static const char *const sides[] = { "base", "patched" };
	struct db_stmt *s;
	int boots = 0, max = 0, seq = 0, added = 0, i, k, rc = 0;
	int cpus[64] = { 0 };
	size_t ncpus = 0, c;

	db_lock(st);
	rc = db_one(st, &s, "SELECT boots, coalesce(max_boots, boots), (SELECT max(seq) FROM stages "
		    "WHERE job_id = ?1) FROM jobs WHERE id = ?1 AND kind = 'ab'", DB_INT(job_id));
	if (rc < 0)
		goto out;
	boots = db_col_int(s, 0);
	max = db_col_int(s, 1);
	seq = db_col_int(s, 2) + 1;
	db_stmt_done(st, s);
	if (boots >= max)
		goto out;
	if (more > max - boots)
		more = max - boots;
	/* a sweep's counts, in the order of its first round (submit_plan):
	 * each new round boots every count, as the first did */
	s = db_prep(st, "SELECT coalesce(cpus, 0) FROM stages WHERE job_id = ? AND kind = 'boot' AND side = 'base' "
		    "AND boot_index = 0 AND repeat_of IS NULL ORDER BY seq");
	if (s)
		db_bind_int(s, 1, job_id);
	while (s && (rc = db_stmt_step(st, s)) == DB_ROW)
		if (ncpus < ARRAY_SIZE(cpus))
			cpus[ncpus++] = db_col_int(s, 0);
	db_stmt_done(st, s);
	if (!s || rc != DB_DONE) {
		rc = s ? db_errno(rc) : -EIO;
		goto out;
	}
	if (!ncpus)
		ncpus = 1;	/* cpus[0] = 0: the machine's own */
	rc = db_txn_begin(st);
	for (i = 0; i < more && rc == 0; i++)
		for (c = 0; c < ncpus && rc == 0; c++)
			for (k = 0; k < 4 && rc == 0; k++)
				rc = db_run(st, STAGE_INSERT, DB_INT(job_id), DB_INT(seq++),
					    DB_TEXT(k % 2 ? "run" : "boot"), DB_TEXT(sides[k / 2]), DB_INT(boots + i),
					    DB_REAL(k % 2 ? run_timeout : boot_timeout), DB_INT(cpus[c]));
	if (rc == 0)
		rc = db_run(st, "UPDATE jobs SET first_boots = coalesce(first_boots, boots), boots = boots + ?2 "
			    "WHERE id = ?1", DB_INT(job_id), DB_INT(more));
	rc = db_txn_end(st, rc);
	if (rc == 0)
		added = more;
out:
	db_unlock(st);
	return rc < 0 ? rc : added;
}
