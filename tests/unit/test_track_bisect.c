/*
 * daemon/track_bisect: bisections driven by the tracker thread against a
 * real store, a local builder and a git repository made here. The test
 * plays the scheduler: each job a step makes is run to done with the value
 * its commit measures, or failed at its build. Checked: the first bad
 * commit is named in the steps bisection needs, a commit that does not
 * build is skipped, one that stays between the ends is measured again and
 * then left inconclusive, ends the A/B rule cannot tell apart end the
 * bisection with why, the report says it all, and a track's confirmed
 * regression starts a bisection over the commits between its points.
 */
#include "testlib.h"

#include <errno.h>
#include <stdio.h>

#include "fixture_store.h"
#include "fixture_track.h"
#include "jsonget.h"
#include "report.h"
#include "track.h"
#include "util.h"
#include "banned.h"

#define MAX_COMMITS 48

static char shas[MAX_COMMITS + 1][41];	/* shas[k]: the commit "change k" */

/* commit(k), remembering its sha */
static void commit_k(int k)
{
	char cmd[160];
	FILE *f;

	commit(k);
	snprintf(cmd, sizeof(cmd), "git -C %s/linux rev-parse HEAD", dir);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(shas[k], sizeof(shas[k]), f));
	shas[k][40] = 0;
	pclose(f);
}

static int k_of(const char *sha)
{
	int k;

	for (k = 1; k <= MAX_COMMITS; k++)
		if (sha && !strcmp(shas[k], sha))
			return k;
	fail_msg("no commit %s", sha ? sha : "(null)");
	return -1;
}

/* what commit k measures, -1 when it does not build */
typedef double (*measure_fn)(int k);

static json_t *bisection(struct store *st, int64_t id)
{
	json_t *b = store_bisection_json(st, id);

	assert_non_null(b);
	return b;
}

/* Passes of the tracker, each queued job of a bisection run or failed as
 * measure says, until no bisection runs; at most max_jobs jobs. */
static size_t serve(struct store *st, struct tracker *tr, measure_fn measure, int max_jobs)
{
	size_t jobs = 0;
	int guard;

	for (guard = 0; guard < 400; guard++) {
		int64_t *ids = NULL;
		size_t n = 0, i, k;

		pass(tr);
		assert_int_equal(store_bisections_running(st, &ids, &n), 0);
		for (i = 0; i < n; i++) {
			json_t *b = bisection(st, ids[i]), *s;

			json_array_foreach(json_object_get(b, "steps"), k, s) {
				double v;

				if (strcmp(jsonget_str(s, "job_state") ?: "", "queued"))
					continue;
				assert_true((int)++jobs <= max_jobs);
				v = measure(k_of(jsonget_str(s, "commit")));
				if (v < 0)
					job_fail(st, jsonget_int_or(s, "job", 0), "build",
						 "build failed (make exit 2): mm/f.c:1:1: error: expected ';'");
				else
					job_done(st, jsonget_int_or(s, "job", 0), v);
			}
			json_decref(b);
		}
		free(ids);
		if (!n)
			return jobs;
	}
	fail_msg("the bisections did not end");
	return jobs;
}

/* the outcome of the last step of commit k, "-" when it has none */
static const char *outcome_of(const json_t *b, int k, int *ret_steps)
{
	const json_t *s;
	const char *o = "-";
	size_t i;

	*ret_steps = 0;
	json_array_foreach(json_object_get(b, "steps"), i, s)
		if (!strcmp(jsonget_str(s, "role"), "step") && !strcmp(jsonget_str(s, "commit"), shas[k])) {
			o = jsonget_str(s, "outcome") ?: "-";
			(*ret_steps)++;
		}
	return o;
}

/* A tracker over changes 1..9 and a bisection by hand from 1 (good) to
 * master (9) in mprotect.ops_per_sec, 3 boots a step. */
struct bench {
	struct store_fixture sf;
	struct lab_config *cfg;
	struct tracker *tr;
	int64_t id;
};

static void bench_start(struct bench *b, const char *name)
{
	struct bisection_request req = { .tree = "linux", .good = NULL, .bad = "master", .suite = "tlb",
					 .machine = "q1", .metric = "mprotect.ops_per_sec", .boots = 3,
					 .submitter = "t" };
	struct strbuf err = STRBUF_INIT;
	int k;

	repo_make();
	for (k = 1; k <= 9; k++)
		commit_k(k);
	req.good = shas[1];
	b->cfg = lab("q1", "bisection", ", bisect: false");
	store_fixture_open(&b->sf, name);
	assert_int_equal(track_start(b->cfg, b->sf.st, "kernels", NULL, NULL, NULL, &b->tr, &err), 0);
	assert_int_equal(store_bisection_create(b->sf.st, &req, NULL, 0, NULL, 0, &b->id, &err), 0);
	strbuf_release(&err);
}

static void bench_stop(struct bench *b)
{
	track_stop(b->tr);
	config_free(b->cfg);
	store_fixture_close(&b->sf);
	repo_remove();
}

/* 1000 ops/s before change 6, 800 from it on; change 7 does not build */
static double first_bad_6(int k)
{
	return k == 7 ? -1 : k >= 6 ? 800 : 1000;
}

static void test_found(void **state)
{
	struct bench b;
	struct strbuf report = STRBUF_INIT;
	json_t *d;
	size_t jobs;
	int n;

	(void)state;
	__atomic_store_n(&hook_requests, 0, __ATOMIC_SEQ_CST);
	bench_start(&b, "bisect-found");
	jobs = serve(b.sf.st, b.tr, first_bad_6, 12);
	d = bisection(b.sf.st, b.id);
	assert_string_equal(jsonget_str(d, "state"), "done");
	assert_string_equal(jsonget_str(d, "first_bad"), shas[6]);
	assert_string_equal(jsonget_str(d, "change"), "regression");
	assert_string_equal(jsonget_str(d, "workload"), "mprotect");
	assert_int_equal(json_array_size(json_object_get(d, "commits")), 8);
	/* the ends, 3 boots each, are told apart once measured twice (the
	 * A/B rule's rank test cannot reach its alpha with 3 against 3);
	 * 2..9 is 8 commits: the middle (5) is good, 7 is skipped, its
	 * neighbour 6 is bad and follows a good one: 3 steps after the ends */
	assert_string_equal(outcome_of(d, 5, &n), "good");
	assert_string_equal(outcome_of(d, 7, &n), "skip");
	assert_string_equal(outcome_of(d, 6, &n), "bad");
	assert_int_equal(n, 1);
	assert_int_equal(jobs, 4 + 3);
	assert_contains(jsonget_str(d, "result"), "first bad commit");
	assert_contains(jsonget_str(d, "result"), "change 6");
	assert_contains(jsonget_str(d, "result"), "A U Thor");

	report_bisect(d, &report);
	assert_contains(report.buf, ": first bad commit found");
	assert_contains(report.buf, shas[6]);
	assert_contains(report.buf, "author:           A U Thor");
	assert_contains(report.buf, "mprotect.ops_per_sec of mprotect");
	assert_contains(report.buf, "good -> bad:      regression -20.0%");
	assert_contains(report.buf, "skip");
	assert_contains(report.buf, "at its build stage (build): build failed (make exit 2)");
	/* each step has the boots the rank test needs against 6 a side (4) */
	assert_contains(report.buf, "(spread 0.2%, 4 boots); vs good: same");
	assert_contains(report.buf, "vs bad: improvement +24.9% (p 0.0095)");
	assert_contains(report.buf, "vs good: regression -20.0%");
	assert_contains(report.buf, "vs bad: same");
	assert_contains(report.buf, "tlblab bisect linux");
	assert_contains(report.buf, "--base ");
	assert_contains(report.buf, shas[5]);
	json_decref(d);

	/* the result is announced to the webhook, with the report */
	for (n = 0; n < 100 && !__atomic_load_n(&hook_requests, __ATOMIC_SEQ_CST); n++)
		pass(b.tr);
	assert_int_equal(__atomic_load_n(&hook_requests, __ATOMIC_SEQ_CST), 1);
	assert_contains(hook_last, "X-Tlblab-Event: bisection");
	assert_contains(hook_last, "first bad commit found");
	strbuf_release(&report);
	bench_stop(&b);
}

/* the first bad commit (5) does not build: the range stays 4..6 */
static double first_bad_5_broken(int k)
{
	return k == 5 ? -1 : k >= 5 ? 800 : 1000;
}

static void test_stuck_on_skip(void **state)
{
	struct bench b;
	json_t *d;
	int n;

	(void)state;
	bench_start(&b, "bisect-stuck");
	serve(b.sf.st, b.tr, first_bad_5_broken, 12);
	d = bisection(b.sf.st, b.id);
	assert_string_equal(jsonget_str(d, "state"), "done");
	assert_true(json_is_null(json_object_get(d, "first_bad")));
	assert_string_equal(outcome_of(d, 5, &n), "skip");
	assert_string_equal(outcome_of(d, 4, &n), "good");
	assert_string_equal(outcome_of(d, 6, &n), "bad");
	assert_contains(jsonget_str(d, "result"), "could not narrow it below 2 commits");
	assert_contains(jsonget_str(d, "result"), "skipped (1");
	json_decref(d);
	bench_stop(&b);
}

/* change 5 measures half-way: it gets more boots, then stays inconclusive */
static double halfway_5(int k)
{
	return k < 5 ? 1000 : k == 5 ? 900 : 800;
}

static void test_inconclusive_step(void **state)
{
	struct bench b;
	json_t *d;
	int n;

	(void)state;
	bench_start(&b, "bisect-inconclusive");
	serve(b.sf.st, b.tr, halfway_5, 16);
	d = bisection(b.sf.st, b.id);
	assert_string_equal(outcome_of(d, 5, &n), "inconclusive");
	assert_int_equal(n, 3);		/* measured three times */
	assert_true(json_is_null(json_object_get(d, "first_bad")));
	assert_contains(jsonget_str(d, "result"), "inconclusive (1)");
	json_decref(d);
	bench_stop(&b);
}

static double flat(int k)
{
	(void)k;
	return 1000;
}

static void test_ends_alike(void **state)
{
	struct bench b;
	json_t *d;
	size_t jobs;

	(void)state;
	bench_start(&b, "bisect-alike");
	jobs = serve(b.sf.st, b.tr, flat, 8);
	d = bisection(b.sf.st, b.id);
	assert_string_equal(jsonget_str(d, "state"), "failed");
	assert_contains(jsonget_str(d, "result"), "does not tell the ends apart in mprotect.ops_per_sec");
	assert_contains(jsonget_str(d, "result"), "after 3 and 3 jobs");
	assert_int_equal(jobs, 6);
	json_decref(d);
	bench_stop(&b);
}

/*
 * A track measures every third commit; from change 20 on, mprotect is 20%
 * slower. The change point at the point of change 21 is confirmed, and the
 * bisection it starts (its ends: the points' own jobs) names change 20.
 */
static double track_value(int k)
{
	return k >= 20 ? 800 : 1000;
}

static void test_from_track(void **state)
{
	struct store_fixture sf;
	struct lab_config *cfg;
	struct tracker *tr = NULL;
	struct strbuf err = STRBUF_INIT;
	json_t *j, *d;
	int i, k, n;

	(void)state;
	repo_make();
	cfg = lab("q1", "change_point", ", detect: {max_p: 0.01, confirm_after: 5}");
	store_fixture_open(&sf, "bisect-track");
	assert_int_equal(track_start(cfg, sf.st, "kernels", NULL, NULL, NULL, &tr, &err), 0);
	for (i = 0; i < 12; i++) {
		for (k = 3 * i + 1; k <= 3 * i + 3; k++)
			commit_k(k);
		assert_int_equal(track_run_now(tr, "main"), 0);
		pass(tr);
		j = store_points_json(sf.st, "main", 1, 0);
		job_done(sf.st, jsonget_int_or(json_array_get(json_object_get(j, "points"), 0), "job", 0),
			 track_value(3 * i + 3));
		json_decref(j);
		pass(tr);
	}
	serve(sf.st, tr, track_value, 8);
	j = store_bisections_json(sf.st, 0, 10, 0);
	assert_int_equal(jsonget_int_or(j, "total", 0), 1);
	d = bisection(sf.st, jsonget_int_or(json_array_get(json_object_get(j, "bisections"), 0), "id", 0));
	json_decref(j);
	assert_string_equal(jsonget_str(d, "track"), "main");
	assert_int_equal(jsonget_int_or(d, "alert", 0), 1);
	assert_string_equal(jsonget_str(d, "good"), shas[18]);
	assert_string_equal(jsonget_str(d, "bad"), shas[21]);
	assert_string_equal(jsonget_str(d, "state"), "done");
	assert_string_equal(jsonget_str(d, "first_bad"), shas[20]);
	/* the ends are the points' jobs, five a side: only 19 and 20 measured */
	assert_string_equal(outcome_of(d, 19, &n), "good");
	assert_string_equal(outcome_of(d, 20, &n), "bad");
	assert_int_equal(jsonget_int_or(d, "steps_measured", 0), 2);
	json_decref(d);
	track_stop(tr);
	config_free(cfg);
	store_fixture_close(&sf);
	repo_remove();
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found),
		cmocka_unit_test(test_stuck_on_skip),
		cmocka_unit_test(test_inconclusive_step),
		cmocka_unit_test(test_ends_alike),
		cmocka_unit_test(test_from_track),
	};

	return cmocka_run_group_tests(tests, hook_up, hook_down);
}
