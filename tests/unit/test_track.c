/*
 * daemon/track: the tracker thread against a real store, a local builder
 * and a git repository made here (no scheduler runs, so the point jobs it
 * makes stay queued unless the test ends them). A run asked for makes a
 * point and its job per machine; an unchanged head is skipped and said
 * so; a new commit is a new point; a run that fell due while the daemon
 * was down runs once at start, and a restart neither loses nor doubles
 * one; a point whose job ended without values is failed; a finished job
 * is announced to a webhook receiver on loopback.
 */
#include "testlib.h"

#include <errno.h>

#include "fixture_store.h"
#include "fixture_track.h"
#include "jsonget.h"
#include "quiet.h"
#include "track.h"
#include "transport.h"
#include "util.h"
#include "banned.h"

static void test_tracker(void **state)
{
	struct store_fixture sf;
	struct lab_config *cfg;
	struct tracker *tr = NULL;
	struct strbuf err = STRBUF_INIT;
	json_t *v, *j;
	double due = 0, due2 = 0;
	int i;

	(void)state;
	repo_make();
	commit(1);
	cfg = lab("q1, q2", "job", "");
	store_fixture_open(&sf, "track");
	assert_int_equal(track_start(cfg, sf.st, "kernels", NULL, NULL, NULL, &tr, &err), 0);

	/* a new track gets its next due time, and does not run yet */
	pass(tr);
	assert_int_equal(store_track_next_due(sf.st, "main", &due), 0);
	assert_true(due > wall_now() && due <= wall_now() + 86400);
	assert_int_equal(points(sf.st), 0);

	/* asked for: a point and its job on each machine */
	assert_int_equal(track_run_now(tr, "main"), 0);
	assert_int_equal(track_run_now(tr, "nope"), -ENOENT);
	pass(tr);
	assert_int_equal(points(sf.st), 2);
	v = track_row(sf.st, "last_result");
	assert_contains(json_string_value(v), "new head: job 1 on q1, job 2 on q2");
	json_decref(v);
	j = store_job_json(sf.st, 1);
	assert_string_equal(jsonget_str(j, "kind"), "run");
	assert_string_equal(jsonget_str(j, "tree"), "linux");
	assert_int_equal(json_array_size(json_object_get(j, "stages")), 5);	/* build, 2 x boot+run */
	assert_contains(jsonget_str(j, "patch_subject"), "change 1");
	json_decref(j);

	/* the same head again: skipped, and said so */
	assert_int_equal(track_run_now(tr, "main"), 0);
	pass(tr);
	assert_int_equal(points(sf.st), 2);
	v = track_row(sf.st, "last_result");
	assert_string_equal(json_string_value(v), "unchanged: measured already");
	json_decref(v);

	/* due while the daemon was down: runs once at the next start */
	commit(2);
	track_stop(tr);
	tr = NULL;
	assert_int_equal(store_track_set_next_due(sf.st, "main", wall_now() - 3600), 0);
	assert_int_equal(track_start(cfg, sf.st, "kernels", NULL, NULL, NULL, &tr, &err), 0);
	pass(tr);
	assert_int_equal(points(sf.st), 4);
	assert_int_equal(store_track_next_due(sf.st, "main", &due), 0);
	assert_true(due > wall_now());
	/* a restart does not run it again */
	commit(3);
	track_stop(tr);
	tr = NULL;
	assert_int_equal(track_start(cfg, sf.st, "kernels", NULL, NULL, NULL, &tr, &err), 0);
	for (i = 0; i < 2; i++)
		pass(tr);
	assert_int_equal(points(sf.st), 4);
	assert_int_equal(store_track_next_due(sf.st, "main", &due2), 0);
	assert_float_equal(due, due2, 0);

	/* a point whose job ended without values is failed; the job is
	 * announced to the webhook, once */
	assert_int_equal(store_job_cancel(sf.st, 1), 0);
	pass(tr);
	pass(tr);
	j = store_points_json(sf.st, "main", 50, 0);
	v = json_array_get(json_object_get(j, "points"), 3);	/* newest first: job 1 is last */
	assert_int_equal(jsonget_int_or(v, "job", 0), 1);
	assert_string_equal(jsonget_str(v, "state"), "failed");
	json_decref(j);
	for (i = 0; i < 100 && !__atomic_load_n(&hook_requests, __ATOMIC_SEQ_CST); i++)
		pass(tr);
	assert_int_equal(__atomic_load_n(&hook_requests, __ATOMIC_SEQ_CST), 1);
	assert_contains(hook_last, "X-Tlblab-Event: job");
	assert_contains(hook_last, "\"state\":\"cancelled\"");
	j = store_deliveries_json(sf.st, 10, 0);
	assert_int_equal(jsonget_int_or(j, "total", 0), 1);
	assert_string_equal(jsonget_str(json_array_get(json_object_get(j, "deliveries"), 0), "state"), "delivered");
	json_decref(j);

	track_stop(tr);
	config_free(cfg);
	store_fixture_close(&sf);
	repo_remove();
	strbuf_release(&err);
}

/*
 * Twelve nightly points, the last six 20% slower: the change point at the
 * seventh is found, confirmed once five points follow it, checked with
 * the A/B rule on the runs either side (a regression), grouped into an
 * alert and announced to the webhook with both verdicts. While a run
 * measures on a local machine the search waits, and runs once it ends.
 */
static void test_change_found(void **state)
{
	struct quiet_entry run = { .ep = transport_here(), .label = "a run on q1" };
	struct quiet *q;
	struct store_fixture sf;
	struct lab_config *cfg = NULL;
	struct tracker *tr = NULL;
	struct strbuf err = STRBUF_INIT;
	json_t *j, *a, *cp;
	int i, k;

	(void)state;
	repo_make();
	cfg = lab("q1", "change_point", ", detect: {max_p: 0.01, confirm_after: 5}");
	store_fixture_open(&sf, "track-change");
	q = quiet_new();
	assert_int_equal(track_start(cfg, sf.st, "kernels", q, NULL, NULL, &tr, &err), 0);

	__atomic_store_n(&hook_requests, 0, __ATOMIC_SEQ_CST);
	for (i = 0; i < 12; i++) {
		commit(100 + i);
		assert_int_equal(track_run_now(tr, "main"), 0);
		pass(tr);
		assert_int_equal(points(sf.st), (size_t)i + 1);
		/* the last point ends while a run measures on this host */
		if (i == 11)
			assert_int_equal(quiet_measure_begin(q, &run, NULL, mono_now() + 10, &err), 0);
		/* the point's job, measured: 1000 ops/s, 800 from the seventh on */
		j = store_points_json(sf.st, "main", 1, 0);
		job_done(sf.st, jsonget_int_or(json_array_get(json_object_get(j, "points"), 0), "job", 0),
			 (i < 6 ? 1000 : 800) + (i % 3));
		json_decref(j);
		pass(tr);
		pass(tr);
	}
	/* the change is 5 points old only with the twelfth: not searched yet,
	 * so not confirmed nor announced */
	j = store_series_json(sf.st, 1);
	assert_int_equal(json_array_size(json_object_get(j, "values")), 12);
	assert_string_equal(jsonget_str(json_array_get(json_object_get(j, "change_points"), 0), "status"),
			    "provisional");
	json_decref(j);
	assert_int_equal(__atomic_load_n(&hook_requests, __ATOMIC_SEQ_CST), 0);
	quiet_measure_end(q, &run);
	pass(tr);
	/* one alert: the seventh commit, a regression, its change point confirmed and checked */
	j = store_alerts_json(sf.st, "main", 10, 0);
	assert_int_equal(jsonget_int_or(j, "total", 0), 1);
	a = store_alert_json(sf.st, jsonget_int_or(json_array_get(json_object_get(j, "alerts"), 0), "id", 0));
	json_decref(j);
	assert_string_equal(jsonget_str(a, "kind"), "regression");
	assert_string_equal(jsonget_str(a, "subject"), "change 106");
	cp = json_array_get(json_object_get(a, "change_points"), 0);
	assert_string_equal(jsonget_str(cp, "status"), "confirmed");
	assert_string_equal(jsonget_str(cp, "metric"), "mprotect.ops_per_sec");
	assert_string_equal(jsonget_str(cp, "ab_verdict"), "regression");
	assert_true(jsonget_num_or(cp, "magnitude", 0) < -0.19);
	assert_true(jsonget_num_or(cp, "p", 0) <= 0.01);
	json_decref(a);
	/* announced once, with both verdicts */
	for (k = 0; k < 100 && !__atomic_load_n(&hook_requests, __ATOMIC_SEQ_CST); k++)
		pass(tr);
	assert_int_equal(__atomic_load_n(&hook_requests, __ATOMIC_SEQ_CST), 1);
	assert_contains(hook_last, "X-Tlblab-Event: change_point");
	assert_contains(hook_last, "\"direction\":\"regression\"");
	assert_contains(hook_last, "\"ab_verdict\":\"regression\"");

	track_stop(tr);
	quiet_free(q);
	config_free(cfg);
	store_fixture_close(&sf);
	repo_remove();
	strbuf_release(&err);
}

static void test_direction(void **state)
{
	(void)state;
	assert_string_equal(track_change_direction("higher", -0.05), "regression");
	assert_string_equal(track_change_direction("higher", 0.05), "improvement");
	assert_string_equal(track_change_direction("lower", 0.05), "regression");
	assert_string_equal(track_change_direction("lower", -0.05), "improvement");
	assert_string_equal(track_change_direction("neutral", 0.5), "neutral");
	assert_string_equal(track_change_direction(NULL, 0.5), "neutral");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_direction),
		cmocka_unit_test(test_tracker),
		cmocka_unit_test(test_change_found),
	};

	return cmocka_run_group_tests(tests, hook_up, hook_down);
}
