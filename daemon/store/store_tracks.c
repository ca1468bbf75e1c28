/*
 * The store's nightly tracking (store.h, schemas/0009-tracks.sql): tracks
 * and their schedule, points and the run jobs that measure them, series
 * and their values, change points and the alerts that group them, and
 * webhook deliveries. A point's job and its row are made in one
 * transaction, and so are a finished point's values, so a crash never
 * leaves a job no point knows of or half of a point's series.
 */
#include "store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "jsonget.h"
#include "store_int.h"
#include "util.h"
#include "banned.h"

/* ---- tracks ---- */

int store_tracks_sync(struct store *st, const struct lab_config *cfg)
{
	size_t i;
	int rc;

	db_lock(st);
	rc = db_txn_begin(st);
	if (rc == 0)
		rc = db_exec(st, "UPDATE tracks SET in_config = 0");
	for (i = 0; rc == 0 && i < cfg->ntracks; i++)
		rc = db_run(st, "INSERT INTO tracks (name) VALUES (?1) ON CONFLICT (name) DO UPDATE SET in_config = 1",
			    DB_TEXT(cfg->tracks[i].name));
	rc = db_txn_end(st, rc);
	db_unlock(st);
	return rc;
}

int store_track_next_due(struct store *st, const char *track, double *ret_due)
{
	struct db_stmt *s;
	int rc;

	db_lock(st);
	rc = db_one(st, &s, "SELECT coalesce(next_due, 0) FROM tracks WHERE name = ?", DB_TEXT(track));
	if (rc == 0) {
		*ret_due = db_col_double(s, 0);
		db_stmt_done(st, s);
	}
	db_unlock(st);
	return rc;
}

int store_track_set_next_due(struct store *st, const char *track, double due)
{
	return db_write(st, "UPDATE tracks SET next_due = ?2 WHERE name = ?1", DB_TEXT(track), DB_REAL(due));
}

int store_track_ran(struct store *st, const char *track, const char *head, const char *result)
{
	return db_write(st, "UPDATE tracks SET last_run = ?2, last_head = coalesce(?3, last_head), "
			"last_result = ?4 WHERE name = ?1", DB_TEXT(track), DB_REAL(db_now()), DB_TEXT(head),
			DB_TEXT(result));
}

/* ---- points ---- */

int store_point_create(struct store *st, const struct point_commit *c, const char *machine,
		       const struct job_request *req, const struct stage_plan *plan, size_t nplan,
		       int64_t *ret_job, struct strbuf *err)
{
	struct db_stmt *s;
	int64_t job = 0;
	int rc;

	db_lock(st);
	if ((rc = db_txn_begin(st)) < 0)
		goto out;
	rc = db_row(st, &s, "SELECT 1 FROM points WHERE track = ? AND commit_id = ? AND machine = ?",
		    DB_TEXT(c->track), DB_TEXT(c->commit), DB_TEXT(machine));
	if (rc == 1) {
		db_stmt_done(st, s);
		rc = -EEXIST;
	}
	if (rc == 0)
		rc = db_job_insert(st, req, plan, nplan, &job);
	if (rc == 0)
		rc = db_run(st, "INSERT INTO points (track, commit_id, commit_time, subject, author, machine, "
			    "job_id, created) VALUES (?, ?, nullif(?, 0), ?, ?, ?, ?, ?)", DB_TEXT(c->track),
			    DB_TEXT(c->commit), DB_REAL(c->time), DB_TEXT(c->subject), DB_TEXT(c->author),
			    DB_TEXT(machine), DB_INT(job), DB_REAL(db_now()));
out:
	rc = db_txn_end(st, rc);
	if (rc < 0 && rc != -EEXIST)
		db_sql_err(st, err, "create point");
	else if (rc == 0)
		*ret_job = job;
	db_unlock(st);
	return rc;
}

/* the id of a series (made on first sight) */
static int series_id(struct store *st, const char *track, const char *machine, const json_t *v, int64_t *ret)
{
	const char *wl = jsonget_str(v, "workload");
	const char *params = jsonget_str(v, "params_key");
	const char *metric = jsonget_str(v, "metric");
	struct db_stmt *s;
	int rc;

	if (!wl || !params || !metric)
		return -EINVAL;
	rc = db_run(st, "INSERT INTO series (track, machine, workload, params, metric) VALUES (?, ?, ?, ?, ?) "
		    "ON CONFLICT DO NOTHING", DB_TEXT(track), DB_TEXT(machine), DB_TEXT(wl), DB_TEXT(params),
		    DB_TEXT(metric));
	if (rc < 0)
		return rc;
	rc = db_row(st, &s, "SELECT id FROM series WHERE track = ? AND machine = ? AND workload = ? AND "
		    "params = ? AND metric = ?", DB_TEXT(track), DB_TEXT(machine), DB_TEXT(wl), DB_TEXT(params),
		    DB_TEXT(metric));
	if (rc == 1) {
		*ret = db_col_int64(s, 0);
		db_stmt_done(st, s);
		return 0;
	}
	return rc < 0 ? rc : -EIO;
}

int store_point_finish(struct store *st, int64_t job_id, const char *state, const json_t *values,
		       char *ret_track, size_t track_len)
{
	char track[72] = "", machine[72] = "";
	int64_t point = 0;
	struct db_stmt *s;
	size_t i;
	int rc;

	db_lock(st);
	if ((rc = db_txn_begin(st)) < 0)
		goto out;
	rc = db_row(st, &s, "SELECT id, track, machine FROM points WHERE job_id = ?", DB_INT(job_id));
	if (rc == 1) {
		point = db_col_int64(s, 0);
		db_col_copy(track, sizeof(track), s, 1);
		db_col_copy(machine, sizeof(machine), s, 2);
		db_stmt_done(st, s);
		rc = 0;
	} else if (rc == 0) {
		rc = -ENOENT;
	}
	if (rc == 0)
		rc = db_run(st, "UPDATE points SET state = ?2 WHERE id = ?1", DB_INT(point), DB_TEXT(state));
	for (i = 0; rc == 0 && i < json_array_size(values); i++) {
		const json_t *v = json_array_get(values, i);
		int64_t series = 0;

		rc = series_id(st, track, machine, v, &series);
		if (rc == -EINVAL) {	/* not a value of compare_point_values: skipped */
			rc = 0;
			continue;
		}
		if (rc == 0)
			rc = db_run(st, "INSERT INTO series_values (series_id, point_id, value, lo, hi, boots) "
				    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (series_id, point_id) DO UPDATE SET "
				    "value = excluded.value, lo = excluded.lo, hi = excluded.hi, boots = excluded.boots", DB_INT(series), DB_INT(point),
				    DB_REAL(jsonget_num_or(v, "value", 0)),
				    DB_REAL(jsonget_num_or(v, "lo", 0)),
				    DB_REAL(jsonget_num_or(v, "hi", 0)),
				    DB_INT(jsonget_int_or(v, "boots", 0)));
	}
out:
	rc = db_txn_end(st, rc);
	db_unlock(st);
	if (rc == 0 && ret_track)
		snprintf(ret_track, track_len, "%s", track);
	return rc;
}

int store_track_series(struct store *st, const char *track, int64_t **ret, size_t *ret_n)
{
	DB_READER(r, st);
	struct db_stmt *s = db_prep(r, "SELECT id FROM series WHERE track = ? ORDER BY id");
	int64_t *ids = NULL;
	size_t n = 0, cap = 0;
	int rc;

	db_bind(s, DB_TEXT(track));
	while ((rc = db_stmt_step(r, s)) == DB_ROW) {
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			ids = xrealloc(ids, cap * sizeof(*ids));
		}
		ids[n++] = db_col_int64(s, 0);
	}
	db_stmt_done(r, s);
	if (rc != DB_DONE) {
		free(ids);
		return db_errno(rc);
	}
	*ret = ids;
	*ret_n = n;
	return 0;
}

int store_series_data(struct store *st, int64_t series_id, struct series_data *ret)
{
	DB_READER(r, st);
	struct series_data d = { .id = series_id };
	size_t cap = 0;
	struct db_stmt *s;
	int rc;

	rc = db_one(r, &s, "SELECT s.track, s.machine, s.workload, s.params, s.metric, "
		    "coalesce(mi.direction, 'neutral') FROM series s LEFT JOIN metric_info mi ON mi.name = s.metric "
		    "WHERE s.id = ?", DB_INT(series_id));
	if (rc < 0)
		return rc;
	db_col_copy(d.track, sizeof(d.track), s, 0);
	db_col_copy(d.machine, sizeof(d.machine), s, 1);
	db_col_copy(d.workload, sizeof(d.workload), s, 2);
	d.params = xstrdup(db_col_text(s, 3) ?: "{}");
	db_col_copy(d.metric, sizeof(d.metric), s, 4);
	db_col_copy(d.direction, sizeof(d.direction), s, 5);
	db_stmt_done(r, s);
	/* from the track's baseline on (an intended change), in point order */
	s = db_prep(r, "SELECT v.value, p.id, p.commit_id, coalesce(p.job_id, 0) FROM series_values v JOIN points p ON p.id = v.point_id "
		    "LEFT JOIN tracks t ON t.name = p.track WHERE v.series_id = ? AND p.id >= coalesce(t.baseline_point, 0) "
		    "ORDER BY p.id");
	db_bind(s, DB_INT(series_id));
	while ((rc = db_stmt_step(r, s)) == DB_ROW) {
		if (d.n == cap) {
			cap = cap ? 2 * cap : 64;
			d.values = xrealloc(d.values, cap * sizeof(*d.values));
			d.points = xrealloc(d.points, cap * sizeof(*d.points));
			d.jobs = xrealloc(d.jobs, cap * sizeof(*d.jobs));
			d.commits = xrealloc(d.commits, cap * sizeof(*d.commits));
		}
		d.values[d.n] = db_col_double(s, 0);
		d.points[d.n] = db_col_int64(s, 1);
		db_col_copy(d.commits[d.n], sizeof(d.commits[0]), s, 2);
		d.jobs[d.n] = db_col_int64(s, 3);
		d.n++;
	}
	db_stmt_done(r, s);
	if (rc != DB_DONE) {
		store_series_data_release(&d);
		return db_errno(rc);
	}
	*ret = d;
	return 0;
}

void store_series_data_release(struct series_data *d)
{
	free(d->params);
	free(d->values);
	free(d->points);
	free(d->jobs);
	free(d->commits);
	memset(d, 0, sizeof(*d));
}

/* ---- change points and alerts ---- */

int store_change_point_put(struct store *st, const struct change_point_row *c, int64_t *ret_id,
			   int *ret_confirmed_now)
{
	char prev[16] = "";
	struct db_stmt *s;
	int rc;

	db_lock(st);
	rc = db_row(st, &s, "SELECT status FROM change_points WHERE series_id = ? AND point_id = ?",
		    DB_INT(c->series_id), DB_INT(c->point_id));
	if (rc == 1) {
		db_col_copy(prev, sizeof(prev), s, 0);
		db_stmt_done(st, s);
		rc = 0;
	}
	if (rc == 0)
		rc = db_run(st, "INSERT INTO change_points (series_id, point_id, status, p, before, after, magnitude, "
		    "direction, detected) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT (series_id, "
		    "point_id) DO UPDATE SET status = CASE WHEN change_points.status = 'rejected' "
		    "THEN change_points.status ELSE ?3 END, "
		    "p = ?4, before = ?5, after = ?6, magnitude = ?7, direction = ?8, updated = ?9",
		    DB_INT(c->series_id), DB_INT(c->point_id), DB_TEXT(c->status), DB_REAL(c->p),
		    DB_REAL(c->before), DB_REAL(c->after), DB_REAL(c->magnitude), DB_TEXT(c->direction),
		    DB_REAL(db_now()));
	if (rc == 0) {
		rc = db_row(st, &s, "SELECT id FROM change_points WHERE series_id = ? AND point_id = ?",
			    DB_INT(c->series_id), DB_INT(c->point_id));
		if (rc == 1) {
			*ret_id = db_col_int64(s, 0);
			db_stmt_done(st, s);
			rc = 0;
		} else if (rc == 0) {
			rc = -EIO;
		}
	}
	db_unlock(st);
	if (rc == 0 && ret_confirmed_now)
		*ret_confirmed_now = !strcmp(c->status, "confirmed") && strcmp(prev, "confirmed") &&
				     strcmp(prev, "rejected");
	return rc;
}

int store_change_point_checked(struct store *st, int64_t id, const char *verdict, double p,
			       const char *status)
{
	return db_write(st, "UPDATE change_points SET ab_verdict = ?2, ab_p = ?3, status = ?4, updated = ?5 "
			"WHERE id = ?1", DB_INT(id), DB_TEXT(verdict), DB_REAL(p), DB_TEXT(status), DB_REAL(db_now()));
}

int store_change_points_prune(struct store *st, int64_t series_id, const int64_t *keep_points, size_t n)
{
	json_t *keep = json_array();
	size_t i;
	int rc;

	for (i = 0; i < n; i++)
		json_array_append_new(keep, json_integer(keep_points[i]));
	rc = db_write(st, DB_SQL(st, "DELETE FROM change_points WHERE series_id = ?1 AND status = 'provisional' "
				 "AND point_id NOT IN (SELECT value FROM json_each(?2))",
				 "DELETE FROM change_points WHERE series_id = ?1 AND status = 'provisional' "
				 "AND point_id NOT IN (SELECT value::bigint FROM json_array_elements_text(?2::json))"),
		      DB_INT(series_id), DB_JSON(keep));
	json_decref(keep);
	return rc;
}

int store_alert_attach(struct store *st, const char *track, const char *good_commit,
		       const char *bad_commit, int64_t change_point, int64_t *ret_alert, int *ret_new)
{
	struct db_stmt *s;
	int64_t alert = 0;
	int rc, made = 0;

	db_lock(st);
	if ((rc = db_txn_begin(st)) < 0)
		goto out;
	rc = db_row(st, &s, "SELECT id FROM alerts WHERE track = ? AND bad_commit = ?", DB_TEXT(track),
		    DB_TEXT(bad_commit));
	if (rc == 1) {
		alert = db_col_int64(s, 0);
		db_stmt_done(st, s);
		rc = 0;
	} else if (rc == 0) {
		rc = db_insert(st, &alert, "INSERT INTO alerts (track, good_commit, bad_commit, kind, created) "
			       "VALUES (?, ?, ?, 'neutral', ?) RETURNING id", DB_TEXT(track), DB_TEXT(good_commit),
			       DB_TEXT(bad_commit), DB_REAL(db_now()));
		made = 1;
	}
	if (rc == 0)
		rc = db_run(st, "UPDATE change_points SET alert_id = ?2 WHERE id = ?1", DB_INT(change_point),
			    DB_INT(alert));
	/* the kind from the alert's change points that are not rejected */
	if (rc == 0)
		rc = db_run(st, "UPDATE alerts SET kind = (SELECT CASE "
			    "WHEN sum(CASE WHEN direction = 'regression' THEN 1 ELSE 0 END) > 0 "
			    "AND sum(CASE WHEN direction = 'improvement' THEN 1 ELSE 0 END) > 0 THEN 'mixed' "
			    "WHEN sum(CASE WHEN direction = 'regression' THEN 1 ELSE 0 END) > 0 THEN 'regression' "
			    "WHEN sum(CASE WHEN direction = 'improvement' THEN 1 ELSE 0 END) > 0 THEN 'improvement' "
			    "ELSE 'neutral' END "
			    "FROM change_points WHERE alert_id = ?1 AND status != 'rejected') WHERE id = ?1",
			    DB_INT(alert));
out:
	rc = db_txn_end(st, rc);
	db_unlock(st);
	if (rc == 0) {
		*ret_alert = alert;
		*ret_new = made;
	}
	return rc;
}

int store_alert_set_state(struct store *st, int64_t alert, const char *state, const char *by)
{
	static const char *const states[] = { "new", "acknowledged", "ignored", "fixed", "intended" };
	int rc, known = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(states); i++)
		known |= !strcmp(state, states[i]);
	if (!known)
		return -EINVAL;
	db_lock(st);
	if ((rc = db_txn_begin(st)) < 0)
		goto out;
	rc = db_run(st, "UPDATE alerts SET state = ?2, state_by = ?3, state_at = ?4 WHERE id = ?1",
		    DB_INT(alert), DB_TEXT(state), DB_TEXT(by), DB_REAL(db_now()));
	if (rc == 0 && db_changes(st) == 0)
		rc = -ENOENT;
	/* an intended change: the series start again at its first point */
	if (rc == 0 && !strcmp(state, "intended"))
		rc = db_run(st, "UPDATE tracks SET baseline_point = (SELECT min(p.id) FROM points p JOIN alerts a "
			    "ON a.track = p.track AND a.bad_commit = p.commit_id WHERE a.id = ?1) "
			    "WHERE name = (SELECT track FROM alerts WHERE id = ?1)", DB_INT(alert));
out:
	rc = db_txn_end(st, rc);
	db_unlock(st);
	return rc;
}

/* ---- reads for the API ---- */

json_t *store_tracks_json(struct store *st)
{
	static const char *const names[] = {
		"name", "in_config", "next_due", "last_run", "last_head", "last_result", "baseline_point",
		"points", "alerts_open", NULL
	};
	json_t *rows = db_rows_json(st, "SELECT name, in_config, next_due, last_run, last_head, last_result, "
				 "baseline_point, (SELECT count(*) FROM points p WHERE p.track = t.name), "
				 "(SELECT count(*) FROM alerts a WHERE a.track = t.name AND a.state = 'new') "
				 "FROM tracks t ORDER BY name", DB_ARGS(DB_INT(0)), names);

	return rows ? json_pack("{s:o}", "tracks", rows) : NULL;
}

json_t *store_points_json(struct store *st, const char *track, int limit, int offset)
{
	static const char *const names[] = {
		"id", "track", "commit", "commit_time", "subject", "author", "machine", "job", "state",
		"created", NULL
	};

	return db_page_json("points",
			 db_rows_json(st, "SELECT id, track, commit_id, commit_time, subject, author, machine, job_id, "
				   "state, created FROM points WHERE track = ? ORDER BY id DESC LIMIT ? OFFSET ?",
				   DB_ARGS(DB_TEXT(track), DB_INT(limit), DB_INT(offset)), names),
			 db_count(st, "SELECT count(*) FROM points WHERE track = ?", DB_ARGS(DB_TEXT(track))),
			 limit, offset);
}

json_t *store_series_list_json(struct store *st, const char *track)
{
	static const char *const names[] = {
		"id", "track", "machine", "workload", "params_json", "metric", "points", "change_points", NULL
	};
	json_t *rows = db_rows_json(st, "SELECT id, track, machine, workload, params, metric, "
				 "(SELECT count(*) FROM series_values v WHERE v.series_id = s.id), "
				 "(SELECT count(*) FROM change_points c WHERE c.series_id = s.id AND c.status != 'rejected') "
				 "FROM series s WHERE track = ? ORDER BY workload, params, metric, machine",
				 DB_ARGS(DB_TEXT(track)), names);

	return rows ? json_pack("{s:o}", "series", rows) : NULL;
}

static const char *const cp_names[] = {
	"id", "series", "point", "commit", "alert", "status", "p", "before", "after", "magnitude",
	"direction", "ab_verdict", "ab_p", "detected", "job", "bisection", NULL
};
#define CP_COLS "c.id, c.series_id, c.point_id, p.commit_id, c.alert_id, c.status, c.p, c.before, c.after, " \
	"c.magnitude, c.direction, c.ab_verdict, c.ab_p, c.detected, p.job_id, (SELECT max(b.id) FROM " \
	"bisections b WHERE b.alert_id = c.alert_id AND c.alert_id IS NOT NULL)"

json_t *store_series_json(struct store *st, int64_t series_id)
{
	static const char *const head[] = {
		"id", "track", "machine", "workload", "params_json", "metric", "unit", "direction", NULL
	};
	static const char *const vals[] = {
		"point", "commit", "commit_time", "subject", "job", "value", "lo", "hi", "boots", NULL
	};
	json_t *h = db_rows_json(st, "SELECT s.id, s.track, s.machine, s.workload, s.params, s.metric, mi.unit, "
			      "coalesce(mi.direction, 'neutral') FROM series s LEFT JOIN metric_info mi "
			      "ON mi.name = s.metric WHERE s.id = ?", DB_ARGS(DB_INT(series_id)), head);
	json_t *one, *v, *c;

	if (!h)
		return NULL;
	if (!json_array_size(h)) {
		json_decref(h);
		errno = ENOENT;
		return NULL;
	}
	one = json_incref(json_array_get(h, 0));
	json_decref(h);
	v = db_rows_json(st, "SELECT p.id, p.commit_id, p.commit_time, p.subject, p.job_id, v.value, v.lo, v.hi, "
		      "v.boots FROM series_values v JOIN points p ON p.id = v.point_id WHERE v.series_id = ? "
		      "ORDER BY p.id", DB_ARGS(DB_INT(series_id)), vals);
	c = v ? db_rows_json(st, "SELECT " CP_COLS " FROM change_points c JOIN points p ON p.id = c.point_id "
			  "WHERE c.series_id = ? ORDER BY c.point_id", DB_ARGS(DB_INT(series_id)), cp_names) : NULL;
	if (!c) {
		json_decref(v);
		json_decref(one);
		return NULL;
	}
	json_object_set_new(one, "values", v);
	json_object_set_new(one, "change_points", c);
	return one;
}

static const char *const alert_names[] = {
	"id", "track", "good_commit", "bad_commit", "subject", "kind", "state", "state_by", "state_at",
	"created", "change_points", "bisection", NULL
};
#define ALERT_COLS "a.id, a.track, a.good_commit, a.bad_commit, (SELECT subject FROM points p WHERE " \
	"p.track = a.track AND p.commit_id = a.bad_commit LIMIT 1), a.kind, a.state, a.state_by, a.state_at, " \
	"a.created, (SELECT count(*) FROM change_points c WHERE c.alert_id = a.id), (SELECT max(b.id) FROM " \
	"bisections b WHERE b.alert_id = a.id)"

json_t *store_alerts_json(struct store *st, const char *track, int limit, int offset)
{
	return db_page_json("alerts",
			 db_rows_json(st, "SELECT " ALERT_COLS " FROM alerts a WHERE ?1 IS NULL OR a.track = ?1 "
				   "ORDER BY a.id DESC LIMIT ?2 OFFSET ?3",
				   DB_ARGS(DB_TEXT(track), DB_INT(limit), DB_INT(offset)), alert_names),
			 db_count(st, "SELECT count(*) FROM alerts WHERE ?1 IS NULL OR track = ?1",
				  DB_ARGS(DB_TEXT(track))),
			 limit, offset);
}

json_t *store_alert_json(struct store *st, int64_t alert)
{
	static const char *const cps[] = {
		"id", "series", "point", "commit", "alert", "status", "p", "before", "after", "magnitude",
		"direction", "ab_verdict", "ab_p", "detected", "job", "bisection", "machine", "workload",
		"params_json", "metric", NULL
	};
	json_t *a = db_rows_json(st, "SELECT " ALERT_COLS " FROM alerts a WHERE a.id = ?", DB_ARGS(DB_INT(alert)),
			      alert_names);
	json_t *one, *c;

	if (!a)
		return NULL;
	if (!json_array_size(a)) {
		json_decref(a);
		errno = ENOENT;
		return NULL;
	}
	one = json_incref(json_array_get(a, 0));
	json_decref(a);
	c = db_rows_json(st, "SELECT " CP_COLS ", s.machine, s.workload, s.params, s.metric FROM change_points c "
		      "JOIN points p ON p.id = c.point_id JOIN series s ON s.id = c.series_id WHERE c.alert_id = ? "
		      "ORDER BY abs(c.magnitude) DESC", DB_ARGS(DB_INT(alert)), cps);
	if (!c) {
		json_decref(one);
		return NULL;
	}
	json_object_set_new(one, "change_points", c);
	return one;
}

json_t *store_points_ended(struct store *st, int max)
{
	static const char *const names[] = { "job", "state", NULL };

	return db_rows_json(st, "SELECT p.job_id, j.state FROM points p JOIN jobs j ON j.id = p.job_id "
			 "WHERE p.state = 'queued' AND j.state IN ('done', 'failed', 'cancelled') ORDER BY p.id LIMIT ?",
			 DB_ARGS(DB_INT(max)), names);
}

int store_jobs_to_notify(struct store *st, int max, int64_t **ret, size_t *ret_n)
{
	json_t *rows = db_rows_json(st, "SELECT id FROM jobs WHERE notified = 0 AND state IN ('done', 'failed', "
				 "'cancelled') ORDER BY finished, id LIMIT ?", DB_ARGS(DB_INT(max)),
				 (const char *const[]){ "id", NULL });
	size_t i, n;

	if (!rows)
		return -errno;
	n = json_array_size(rows);
	*ret = xcalloc(n ? n : 1, sizeof(**ret));
	for (i = 0; i < n; i++)
		(*ret)[i] = jsonget_int_or(json_array_get(rows, i), "id", 0);
	*ret_n = n;
	json_decref(rows);
	return 0;
}

int store_job_notified(struct store *st, int64_t job)
{
	return db_write(st, "UPDATE jobs SET notified = 1 WHERE id = ?", DB_INT(job));
}

int store_jobs_notified_all(struct store *st)
{
	return db_write(st, "UPDATE jobs SET notified = 1 WHERE notified = 0 AND state IN ('done', 'failed', "
			"'cancelled')", DB_INT(0));
}

/* ---- webhook deliveries ---- */

int store_delivery_add(struct store *st, const char *hook, const char *event, const char *url,
		       const char *body, int64_t *ret_id)
{
	double now = db_now();
	int64_t id = 0;
	int rc;

	db_lock(st);
	rc = db_insert(st, &id, "INSERT INTO deliveries (hook, event, url, body, next_attempt, created) "
		       "VALUES (?, ?, ?, ?, ?, ?) RETURNING id", DB_TEXT(hook), DB_TEXT(event), DB_TEXT(url),
		       DB_TEXT(body), DB_REAL(now), DB_REAL(now));
	if (rc == 0 && ret_id)
		*ret_id = id;
	db_unlock(st);
	return rc;
}

json_t *store_deliveries_due(struct store *st, double now, int max)
{
	static const char *const names[] = { "id", "hook", "event", "url", "body", "attempts", NULL };

	return db_rows_json(st, "SELECT id, hook, event, url, body, attempts FROM deliveries WHERE state = 'pending' "
			 "AND next_attempt <= ? ORDER BY next_attempt, id LIMIT ?",
			 DB_ARGS(DB_REAL(now), DB_INT(max)), names);
}

int store_delivery_attempt(struct store *st, int64_t id, int delivered, long http, const char *error,
			   double next_attempt)
{
	json_t *entry = json_pack("{s:f,s:i,s:s?}", "at", db_now(), "status", (int)http, "error", error);
	int rc;

	/* the attempt joins the log in the statement that counts it, so
	 * that no attempt is lost to another daemon's at the same time */
	rc = db_write(st, DB_SQL(st, "UPDATE deliveries SET attempts = attempts + 1, last_status = nullif(?2, 0), "
				 "last_error = ?3, log = json_insert(log, '$[#]', json(?4)), "
				 "state = CASE WHEN ?5 != 0 THEN 'delivered' WHEN ?6 = 0 THEN 'failed' ELSE 'pending' END, "
				 "delivered = CASE WHEN ?5 != 0 THEN ?7 END, next_attempt = CASE WHEN ?6 > 0 THEN ?6 "
				 "ELSE next_attempt END WHERE id = ?1",
				 "UPDATE deliveries SET attempts = attempts + 1, last_status = nullif(?2, 0), "
				 "last_error = ?3, log = (log::jsonb || jsonb_build_array(?4::jsonb))::text, "
				 "state = CASE WHEN ?5 != 0 THEN 'delivered' WHEN ?6 = 0 THEN 'failed' ELSE 'pending' END, "
				 "delivered = CASE WHEN ?5 != 0 THEN ?7 END, next_attempt = CASE WHEN ?6 > 0 THEN ?6 "
				 "ELSE next_attempt END WHERE id = ?1"),
		      DB_INT(id), DB_INT(http), DB_TEXT(error), DB_JSON(entry), DB_INT(delivered),
		      DB_REAL(next_attempt), DB_REAL(db_now()));
	json_decref(entry);
	return rc;
}

json_t *store_deliveries_json(struct store *st, int limit, int offset)
{
	static const char *const names[] = {
		"id", "hook", "event", "url", "state", "attempts", "last_status", "last_error", "log_json",
		"created", "delivered", "next_attempt", "body_json", NULL
	};

	return db_page_json("deliveries",
			 db_rows_json(st, "SELECT id, hook, event, url, state, attempts, last_status, last_error, log, "
				   "created, delivered, next_attempt, body FROM deliveries ORDER BY id DESC LIMIT ? OFFSET ?",
				   DB_ARGS(DB_INT(limit), DB_INT(offset)), names),
			 db_count(st, "SELECT count(*) FROM deliveries", DB_ARGS(DB_INT(0))), limit, offset);
}
