/*
 * daemon/store_tracks: what the nightly tracker keeps. A point and its run
 * job are made together (and once per commit and machine); a finished
 * point's values become its series; a series reads back in point order
 * from the track's baseline; change points are kept, pruned while
 * provisional, grouped per commit into alerts whose kind follows them;
 * triage "intended" moves the baseline; a delivery keeps every attempt.
 */
#include "testlib.h"

#include <errno.h>

#include "fixture_store.h"
#include "jsonget.h"
#include "util.h"
#include "banned.h"

static const struct point_commit *commit_n(int i)
{
	static char ids[8][41], subjects[8][32];
	static struct point_commit c[8];

	snprintf(ids[i], sizeof(ids[i]), "%040d", i + 1);
	snprintf(subjects[i], sizeof(subjects[i]), "commit %d", i + 1);
	c[i] = (struct point_commit){ .track = "mainline", .commit = ids[i], .time = 1700000000 + i,
				      .author = "A U Thor", .subject = subjects[i] };
	return &c[i];
}

/* makes the point of commit i on m1 and finishes it with an ops/s value */
static int64_t point(struct store *st, int i, double value)
{
	json_t *specs = json_pack("[{s:s}]", "workload", "mprotect");
	struct job_request req = { .kind = "run", .tree = "linux", .base = commit_n(i)->commit, .suite = "tlb",
				   .suite_json = specs, .boots = 2, .submitter = "track:mainline" };
	struct stage_plan plan[] = { { "build", "base", 0, 60, 0 }, { "boot", "base", 0, 60, 0 }, { "run", "base", 0, 60, 0 } };
	struct strbuf err = STRBUF_INIT;
	char track[72] = "";
	int64_t job = 0;
	json_t *values;

	if (store_point_create(st, commit_n(i), "m1", &req, plan, ARRAY_SIZE(plan), &job, &err) < 0)
		fail_msg("store_point_create: %s", err.buf);
	assert_true(job > 0);
	values = json_pack("[{s:s,s:s,s:s,s:f,s:f,s:f,s:i},{s:s,s:s}]", "workload", "mprotect",
			   "params_key", "{\"workers\":2}", "metric", "mprotect.ops_per_sec", "value", value,
			   "lo", value - 1, "hi", value + 1, "boots", 2,
			   "workload", "broken", "metric", "no params key: skipped");
	assert_int_equal(store_point_finish(st, job, "done", values, track, sizeof(track)), 0);
	assert_string_equal(track, "mainline");
	json_decref(values);
	json_decref(specs);
	strbuf_release(&err);
	return job;
}

static void test_points_and_series(void **state)
{
	struct store_fixture *sf = *state;
	struct store *st = sf->st;
	struct job_request req = { .kind = "run", .tree = "linux", .base = "x", .suite = "tlb", .boots = 1 };
	struct stage_plan plan[] = { { "build", "base", 0, 60, 0 } };
	struct strbuf err = STRBUF_INIT;
	struct series_data d;
	int64_t job, *series = NULL;
	size_t n = 0;
	json_t *j;
	int i;

	for (i = 0; i < 4; i++)
		point(st, i, 100 + i);
	/* once per commit and machine */
	assert_int_equal(store_point_create(st, commit_n(0), "m1", &req, plan, 1, &job, &err), -EEXIST);
	assert_int_equal(store_json_count(store_jobs_json(st, &(struct job_filter){ .limit = 50 }), "jobs"), 4);
	/* a job no point has */
	assert_int_equal(store_point_finish(st, 999, "done", NULL, NULL, 0), -ENOENT);

	assert_int_equal(store_track_series(st, "mainline", &series, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(store_series_data(st, series[0], &d), 0);
	assert_string_equal(d.machine, "m1");
	assert_string_equal(d.metric, "mprotect.ops_per_sec");
	assert_string_equal(d.params, "{\"workers\":2}");
	assert_int_equal(d.n, 4);
	for (i = 0; i < 4; i++) {
		assert_float_equal(d.values[i], 100 + i, 0);
		assert_string_equal(d.commits[i], commit_n(i)->commit);
	}
	store_series_data_release(&d);

	j = store_points_json(st, "mainline", 2, 0);
	assert_non_null(j);
	assert_int_equal(jsonget_int_or(j, "total", 0), 4);
	assert_string_equal(jsonget_str(json_array_get(json_object_get(j, "points"), 0), "subject"), "commit 4");
	json_decref(j);
	j = store_series_json(st, series[0]);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "values")), 4);
	assert_int_equal(jsonget_int_or(json_object_get(j, "params"), "workers", 0), 2);
	json_decref(j);
	assert_null(store_series_json(st, 12345));
	assert_int_equal(errno, ENOENT);
	free(series);
	strbuf_release(&err);
}

static void test_change_points_and_alerts(void **state)
{
	struct store_fixture *sf = *state;
	struct store *st = sf->st;
	struct change_point_row c = { .status = "provisional", .p = 0.0005, .before = 100, .after = 90,
				      .magnitude = -0.1, .direction = "regression" };
	struct series_data d;
	int64_t *series = NULL, cp = 0, cp2 = 0, alert = 0, alert2 = 0, keep;
	size_t n = 0;
	struct cfg_track track = { .name = "mainline" };
	struct lab_config cfg = { .tracks = &track, .ntracks = 1 };
	int made = 0, now = -1, i;
	json_t *j;

	assert_int_equal(store_tracks_sync(st, &cfg), 0);
	for (i = 0; i < 6; i++)
		point(st, i, i < 3 ? 100 : 90);
	assert_int_equal(store_track_series(st, "mainline", &series, &n), 0);
	assert_int_equal(store_series_data(st, series[0], &d), 0);
	c.series_id = series[0];
	c.point_id = d.points[3];
	assert_int_equal(store_change_point_put(st, &c, &cp, &now), 0);
	assert_int_equal(now, 0);
	/* seen again: the same row, confirmed now, and once */
	c.status = "confirmed";
	assert_int_equal(store_change_point_put(st, &c, &cp2, &now), 0);
	assert_int_equal(cp, cp2);
	assert_int_equal(now, 1);
	assert_int_equal(store_change_point_put(st, &c, &cp2, &now), 0);
	assert_int_equal(now, 0);
	assert_int_equal(store_alert_attach(st, "mainline", d.commits[2], d.commits[3], cp, &alert, &made), 0);
	assert_int_equal(made, 1);
	assert_int_equal(store_alert_attach(st, "mainline", d.commits[2], d.commits[3], cp, &alert2, &made), 0);
	assert_int_equal(made, 0);
	assert_int_equal(alert, alert2);
	j = store_alert_json(st, alert);
	assert_non_null(j);
	assert_string_equal(jsonget_str(j, "kind"), "regression");
	assert_string_equal(jsonget_str(j, "state"), "new");
	assert_string_equal(jsonget_str(j, "subject"), "commit 4");
	assert_int_equal(json_array_size(json_object_get(j, "change_points")), 1);
	json_decref(j);

	/* a provisional change point no longer found goes; a confirmed one stays */
	c.point_id = d.points[1];
	c.status = "provisional";
	assert_int_equal(store_change_point_put(st, &c, &cp2, NULL), 0);
	keep = d.points[4];
	assert_int_equal(store_change_points_prune(st, series[0], &keep, 1), 0);
	j = store_series_json(st, series[0]);
	assert_int_equal(json_array_size(json_object_get(j, "change_points")), 1);
	json_decref(j);

	/* triage: an intended change starts the series again at its commit */
	assert_int_equal(store_alert_set_state(st, alert, "sideways", "bob"), -EINVAL);
	assert_int_equal(store_alert_set_state(st, 4242, "fixed", "bob"), -ENOENT);
	assert_int_equal(store_alert_set_state(st, alert, "intended", "bob"), 0);
	store_series_data_release(&d);
	assert_int_equal(store_series_data(st, series[0], &d), 0);
	assert_int_equal(d.n, 3);
	assert_string_equal(d.commits[0], commit_n(3)->commit);
	store_series_data_release(&d);
	j = store_alerts_json(st, "mainline", 10, 0);
	assert_string_equal(jsonget_str(json_array_get(json_object_get(j, "alerts"), 0), "state_by"), "bob");
	json_decref(j);
	free(series);
}

static void test_tracks_and_deliveries(void **state)
{
	struct store_fixture *sf = *state;
	struct store *st = sf->st;
	struct cfg_track tracks[] = { { .name = "mainline" }, { .name = "next" } };
	struct lab_config cfg = { .tracks = tracks, .ntracks = 2 };
	double due = -1;
	int64_t id = 0;
	json_t *j, *d;

	assert_int_equal(store_tracks_sync(st, &cfg), 0);
	assert_int_equal(store_track_next_due(st, "mainline", &due), 0);
	assert_float_equal(due, 0, 0);
	assert_int_equal(store_track_set_next_due(st, "mainline", 1800000000), 0);
	assert_int_equal(store_track_next_due(st, "mainline", &due), 0);
	assert_float_equal(due, 1800000000, 0);
	assert_int_equal(store_track_next_due(st, "gone", &due), -ENOENT);
	assert_int_equal(store_track_ran(st, "mainline", "abc123", "new head, job 1"), 0);
	cfg.ntracks = 1;
	assert_int_equal(store_tracks_sync(st, &cfg), 0);
	j = store_tracks_json(st);
	assert_non_null(j);
	d = json_object_get(j, "tracks");
	assert_int_equal(json_array_size(d), 2);
	assert_string_equal(jsonget_str(json_array_get(d, 0), "last_head"), "abc123");
	assert_int_equal(jsonget_int_or(json_array_get(d, 1), "in_config", 0), 0);
	json_decref(j);

	assert_int_equal(store_delivery_add(st, "ops", "job", "http://127.0.0.1:9/h", "{\"job\": 1}", &id), 0);
	d = store_deliveries_due(st, 1e12, 10);
	assert_int_equal(json_array_size(d), 1);
	json_decref(d);
	assert_int_equal(store_delivery_attempt(st, id, 0, 500, "HTTP 500", 1e12 + 10), 0);
	d = store_deliveries_due(st, 1e12, 10);
	assert_int_equal(json_array_size(d), 0);
	json_decref(d);
	assert_int_equal(store_delivery_attempt(st, id, 1, 200, NULL, 0), 0);
	j = store_deliveries_json(st, 10, 0);
	d = json_array_get(json_object_get(j, "deliveries"), 0);
	assert_string_equal(jsonget_str(d, "state"), "delivered");
	assert_int_equal(jsonget_int_or(d, "attempts", 0), 2);
	assert_int_equal(json_array_size(json_object_get(d, "log")), 2);
	assert_int_equal(jsonget_int_or(json_array_get(json_object_get(d, "log"), 0), "status", 0), 500);
	assert_int_equal(jsonget_int_or(json_object_get(d, "body"), "job", 0), 1);
	json_decref(j);
	/* a delivery out of attempts fails */
	assert_int_equal(store_delivery_add(st, "ops", "job", "http://127.0.0.1:9/h", "{}", &id), 0);
	assert_int_equal(store_delivery_attempt(st, id, 0, 0, "Couldn't connect", 0), 0);
	j = store_deliveries_json(st, 10, 0);
	assert_string_equal(jsonget_str(json_array_get(json_object_get(j, "deliveries"), 0), "state"), "failed");
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		store_fixture_test(test_points_and_series),
		store_fixture_test(test_change_points_and_alerts),
		store_fixture_test(test_tracks_and_deliveries),
	};

	return store_fixture_run_both(tests, ARRAY_SIZE(tests));
}
