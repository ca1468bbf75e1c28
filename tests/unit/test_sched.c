/*
 * daemon/sched: the extra-boot rule of an A/B job, as the scheduler applies
 * it (sched_record.c: maybe_more_boots, finish_bootrun's step before a run
 * is marked done). A job is walked stage by stage on a real SQLite file, as
 * the scheduler records it: a boot done, its run's iteration stored, the
 * rule asked, the run finished. What the test checks is what the store then
 * holds: the job's boots and the stages added (kind, side, boot index,
 * order, timeouts), so a change to the rule, to the comparison's "wants
 * more boots", or to the store's growing of a job shows here.
 */
#include "testlib.h"

#include <errno.h>

#include "compare.h"
#include "config.h"
#include "jsonget.h"
#include "sched_int.h"
#include "store.h"
#include "fixture_store.h"
#include "banned.h"

#define STAGE_TIMEOUT 77.0	/* the lab's stage_timeout: a run's, with no suite */

#define PLANNED_TIMEOUT 60.0	/* the run timeout of the suite the job was planned with */

struct fixture {
	struct store_fixture sf;
	struct lab_config cfg;
	struct sched sc;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	store_fixture_open(&f->sf, "sched");
	/* no suites: the job's suite falls back to the default rules and the
	 * lab's stage timeout, as when a reload dropped it */
	f->cfg.stage_timeout = STAGE_TIMEOUT;
	f->sc.st = f->sf.st;
	f->sc.cfg = &f->cfg;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	store_fixture_close(&((struct fixture *)*state)->sf);
	free(*state);
	return 0;
}

/* An A/B job of `boots` boots per side that may grow to max_boots (0: as
 * the API stores a job that may not grow), one spec, as submit plans it
 * with a suite whose runs take PLANNED_TIMEOUT: two builds, then per boot
 * index base boot, base run, patched boot, patched run. */
static int64_t ab_job(struct store *st, int boots, int max_boots)
{
	return store_fixture_ab_job(st, json_pack("[{s:s}]", "workload", "mprotect"), boots, max_boots,
				    PLANNED_TIMEOUT);
}

static json_t *job_json(struct store *st, int64_t job)
{
	json_t *j = store_job_json(st, job);

	assert_non_null(j);
	return j;
}

static int job_int(struct store *st, int64_t job, const char *key)
{
	json_t *j = job_json(st, job);
	int v = (int)jsonget_int_or(j, key, 0);

	json_decref(j);
	return v;
}

/*
 * Walks the job to its end. The run of boot index i on side S measures
 * vals[S][i % nvals]. Before each run is finished, maybe_more_boots is
 * asked with the task the scheduler would hold (the boot's stage info);
 * grew[k] is set to the boots added per side at the k-th run stage
 * (counting both sides). The stages of boot index `first` on were added
 * by the rule: their runs take the lab's stage timeout, as the job's suite
 * is no longer configured (the planned ones have PLANNED_TIMEOUT); every
 * boot, planned or added, takes 600 s. Returns the number of run stages.
 */
static int drive(struct fixture *f, int64_t job, const double *base, const double *patched, size_t nvals,
		 int first, int *grew, int max_runs)
{
	int runs = 0, guard;

	for (guard = 0; guard < 200; guard++) {
		json_t *j = job_json(f->sf.st, job);
		const char *state = jsonget_str(j, "state") ?: "";
		int running = !strcmp(state, "queued") || !strcmp(state, "running");
		struct task t = { .sc = &f->sc, .cfg = &f->cfg };
		struct stage_info run;
		const double *vals;
		int before;

		json_decref(j);
		if (!running)
			return runs;
		store_fixture_next_stage(f->sf.st, job, &t.si);
		assert_int_equal(store_stage_begin(f->sf.st, t.si.id, "m1"), 0);
		assert_int_equal(store_stage_finish(f->sf.st, t.si.id, "done", NULL, NULL), 0);
		if (strcmp(t.si.kind, "boot")) {	/* a build */
			store_stage_info_release(&t.si);
			continue;
		}
		store_fixture_next_stage(f->sf.st, job, &run);
		assert_string_equal(run.kind, "run");
		assert_string_equal(run.side, t.si.side);
		assert_int_equal(run.seq, t.si.seq + 1);
		assert_int_equal(run.boot_index, t.si.boot_index);
		assert_true(t.si.timeout == 600);
		assert_true(run.timeout == (run.boot_index >= first ? STAGE_TIMEOUT : PLANNED_TIMEOUT));
		assert_int_equal(store_stage_begin(f->sf.st, run.id, "m1"), 0);
		vals = !strcmp(run.side, "base") ? base : patched;
		assert_int_equal(store_fixture_run_add(f->sf.st, job, run.id, run.side, 0,
						       vals[(size_t)run.boot_index % nvals]), 0);
		before = job_int(f->sf.st, job, "boots");
		t.run_stage = run.id;	/* the boot+run task's run */
		assert_int_equal(sched_maybe_more_boots(&f->sc, &t), 0);
		assert_true(runs < max_runs);
		grew[runs++] = job_int(f->sf.st, job, "boots") - before;
		assert_int_equal(store_stage_finish(f->sf.st, run.id, "done", NULL, NULL), 0);
		store_stage_info_release(&run);
		store_stage_info_release(&t.si);
	}
	fail_msg("job %lld did not end", (long long)job);
	return runs;
}

/* The job's stages after the builds: interleaved boot, run of base, boot,
 * run of patched for boot indexes 0 .. boots - 1, seq in order. */
static void assert_stages(struct store *st, int64_t job, int boots)
{
	static const char *const kinds[] = { "boot", "run", "boot", "run" };
	static const char *const sides[] = { "base", "base", "patched", "patched" };
	json_t *j = job_json(st, job), *stages = json_object_get(j, "stages"), *s;
	size_t i;

	assert_int_equal(json_array_size(stages), 2 + 4 * (size_t)boots);
	json_array_foreach(stages, i, s) {
		size_t k = (i - 2) % 4;
		int index = (int)(i - 2) / 4;

		assert_int_equal(jsonget_int_or(s, "seq", 0), (json_int_t)i);
		if (i < 2) {
			assert_string_equal(jsonget_str(s, "kind"), "build");
			continue;
		}
		assert_string_equal(jsonget_str(s, "kind"), kinds[k]);
		assert_string_equal(jsonget_str(s, "side"), sides[k]);
		assert_int_equal(jsonget_int_or(s, "boot_index", 0), index);
	}
	json_decref(j);
}

/* The verdict of the job's headline row, as the comparison calls it from
 * what the store holds now (default rules: the job's suite is not
 * configured). */
static void assert_headline(struct store *st, int64_t job, const char *want)
{
	json_t *doc = store_compare_doc(st, job), *cmp, *row;
	struct compare_rules rules;
	struct strbuf err = STRBUF_INIT;
	size_t i;
	int seen = 0;

	assert_non_null(doc);
	compare_rules_default(&rules);
	cmp = compare_sides(doc, "base", doc, "patched", &rules, &err);
	if (!cmp)
		fail_msg("compare_sides: %s", err.buf);
	json_array_foreach(json_object_get(cmp, "rows"), i, row)
		if (json_is_true(json_object_get(row, "headline"))) {
			assert_string_equal(jsonget_str(row, "verdict"), want);
			seen++;
		}
	assert_int_equal(seen, 1);
	json_decref(cmp);
	json_decref(doc);
	strbuf_release(&err);
}

/* Per-boot medians 20% apart and overlapping: no call is possible. */
static const double noisy_base[] = { 1000, 1300, 800, 1200, 900 };
static const double noisy_patched[] = { 1100, 850, 1250, 950, 1150 };

/*
 * An inconclusive headline at the first look: at the first look's last
 * run, and only there, the job grows to max_boots at once (one more look,
 * not a boot pair per look); the boots are added after its last stage,
 * base and patched interleaved; at the second look's last run, inconclusive
 * still, it does not grow again.
 */
static void test_inconclusive_grows_once_to_max(void **state)
{
	struct fixture *f = *state;
	int64_t job = ab_job(f->sf.st, 3, 7);
	int grew[64] = { 0 }, runs, i;

	runs = drive(f, job, noisy_base, noisy_patched, 5, 3, grew, 64);
	assert_int_equal(runs, 2 * 7);
	for (i = 0; i < runs; i++)
		if (i == 2 * 3 - 1)
			assert_int_equal(grew[i], 4);	/* max_boots - boots, at once */
		else if (grew[i])
			fail_msg("boots added at run %d of %d: %d", i + 1, runs, grew[i]);
	assert_int_equal(job_int(f->sf.st, job, "boots"), 7);
	assert_int_equal(job_int(f->sf.st, job, "max_boots"), 7);
	assert_stages(f->sf.st, job, 7);
	assert_headline(f->sf.st, job, "inconclusive");
}

/* Drives the job of `boots` boots per side, its runs measuring base and
 * patched (5 values each), to its end, which it must reach as planned:
 * never grown, with the headline verdict `want`. */
static void assert_never_grows(struct fixture *f, int64_t job, const double *base, const double *patched,
			       int boots, const char *want)
{
	int grew[64] = { 0 }, runs, i;

	runs = drive(f, job, base, patched, 5, boots, grew, 64);
	assert_int_equal(runs, 2 * boots);
	for (i = 0; i < runs; i++)
		assert_int_equal(grew[i], 0);
	assert_int_equal(job_int(f->sf.st, job, "boots"), boots);
	assert_stages(f->sf.st, job, boots);
	assert_headline(f->sf.st, job, want);
}

/* The limit: a job that may not grow (max_boots = boots) never gets
 * boots, however inconclusive. */
static void test_no_growth_at_the_limit(void **state)
{
	struct fixture *f = *state;

	assert_never_grows(f, ab_job(f->sf.st, 4, 4), noisy_base, noisy_patched, 4, "inconclusive");
}

/* A headline decided at the first look (the same kernel twice, noise well
 * inside the least change a row would call): no second look. */
static void test_decided_first_look_stops(void **state)
{
	struct fixture *f = *state;
	static const double base[] = { 1000.0, 1000.2, 999.9, 1000.1, 999.8 };
	static const double patched[] = { 1000.1, 999.9, 1000.2, 999.8, 1000.0 };

	assert_never_grows(f, ab_job(f->sf.st, 5, 9), base, patched, 5, "same");
}

/* One iteration of the run stage `run` of boot `boot_id`, as ingest
 * stores it: mprotect.ops_per_sec = value. */
static void duet_run_add(struct store *st, int64_t job, int64_t run, const char *side, const char *boot_id,
			 double value)
{
	json_t *metrics = json_pack("{s:f}", "mprotect.ops_per_sec", value);
	json_t *info = json_pack("{s:{s:s,s:s}}", "mprotect.ops_per_sec", "unit", "ops/s", "direction", "higher");
	json_t *params = json_pack("{s:i}", "workers", 2);
	struct run_row r = { .job_id = job, .stage_id = run, .machine = "d1", .side = side, .boot_id = boot_id,
			     .workload = "mprotect", .params = params, .duration = 1 };

	assert_int_equal(store_run_add(st, &r, metrics, info, NULL, NULL), 0);
	json_decref(metrics);
	json_decref(info);
	json_decref(params);
}

/*
 * A duet: a round's base boot and the patched boot two stages on start at
 * once on two machines, leased in one step and noted as each other's; the
 * stages after them wait for both. The second look is taken when the last
 * open run of the job ends, whichever side: the patched run ending first
 * leaves the job as it is, the base run after it grows it. The comparison
 * document lists the rounds that ran as duets; a boot retried (infra)
 * boots again alone and its round is no longer a pair.
 */
static void test_duet(void **state)
{
	struct fixture *f = *state;
	struct cfg_machine m[2] = { { .name = "d1", .arch = "x86_64" }, { .name = "d2", .arch = "x86_64" } };
	struct strbuf err = STRBUF_INIT;
	int64_t job = ab_job(f->sf.st, 3, 5);
	json_t *doc, *pairs;
	int k;

	f->cfg.machines = m;
	f->cfg.nmachines = 2;
	assert_int_equal(store_sync_machines(f->sf.st, &f->cfg, &err), 0);
	for (k = 0; k < 2; k++) {	/* the builds */
		struct stage_info b;

		store_fixture_next_stage(f->sf.st, job, &b);
		assert_string_equal(b.kind, "build");
		assert_int_equal(store_stage_begin(f->sf.st, b.id, "builder"), 0);
		assert_int_equal(store_stage_finish(f->sf.st, b.id, "done", NULL, NULL), 0);
		store_stage_info_release(&b);
	}
	for (k = 0; k < 3; k++) {
		struct stage_info base, patched, none = { 0 };
		struct task t = { .sc = &f->sc, .cfg = &f->cfg };
		int64_t run_b, run_p;
		char bb[16], pb[16];

		store_fixture_next_stage(f->sf.st, job, &base);
		assert_string_equal(base.kind, "boot");
		assert_string_equal(base.side, "base");
		assert_int_equal(store_stage_pending_at(f->sf.st, job, base.seq + 2, &patched), 1);
		assert_string_equal(patched.kind, "boot");
		assert_string_equal(patched.side, "patched");
		assert_int_equal(patched.boot_index, k);
		assert_int_equal(store_stage_start_duet(f->sf.st, base.id, k % 2 ? "d2" : "d1", patched.id,
							k % 2 ? "d1" : "d2"), 0);
		/* both machines are leased now, and nothing else of the job runs */
		assert_int_equal(store_stage_start_duet(f->sf.st, base.id, "d1", patched.id, "d2"), -EBUSY);
		assert_int_equal(store_fixture_runnable(f->sf.st, job, &none), 0);
		assert_int_equal(none.id, 0);
		if (k == 0) {
			/* the patched boot fails as infra: retried alone, unpaired */
			assert_int_equal(store_stage_retry(f->sf.st, patched.id, "d2", "the VM host failed"), 0);
		}
		run_b = store_stage_next(f->sf.st, job, base.seq);
		run_p = store_stage_next(f->sf.st, job, patched.seq);
		snprintf(bb, sizeof(bb), "b%d", k);
		snprintf(pb, sizeof(pb), "p%d", k);
		assert_int_equal(store_stage_set_ids(f->sf.st, base.id, NULL, bb), 0);
		assert_int_equal(store_stage_handoff(f->sf.st, base.id, run_b), 0);
		duet_run_add(f->sf.st, job, run_b, "base", bb, noisy_base[k]);
		if (k == 0) {	/* the base run ends; then the patched boot, alone */
			assert_int_equal(store_stage_finish(f->sf.st, run_b, "done", NULL, NULL), 0);
			store_stage_info_release(&patched);
			store_fixture_next_stage(f->sf.st, job, &patched);
			assert_int_equal(patched.seq, base.seq + 2);
			assert_int_equal(store_stage_begin(f->sf.st, patched.id, "d2"), 0);
		}
		assert_int_equal(store_stage_set_ids(f->sf.st, patched.id, NULL, pb), 0);
		assert_int_equal(store_stage_handoff(f->sf.st, patched.id, run_p), 0);
		duet_run_add(f->sf.st, job, run_p, "patched", pb, noisy_patched[k]);
		/* the patched run ends first: the base run is still open */
		t.si = patched;
		t.run_stage = run_p;
		assert_int_equal(sched_maybe_more_boots(&f->sc, &t), 0);
		assert_int_equal(job_int(f->sf.st, job, "boots"), 3);
		assert_int_equal(store_stage_finish(f->sf.st, run_p, "done", NULL, NULL), 0);
		if (k > 0) {
			t.si = base;
			t.run_stage = run_b;
			assert_int_equal(sched_maybe_more_boots(&f->sc, &t), 0);
			/* the first look's last run: inconclusive, so it grows */
			assert_int_equal(job_int(f->sf.st, job, "boots"), k == 2 ? 5 : 3);
			assert_int_equal(store_stage_finish(f->sf.st, run_b, "done", NULL, NULL), 0);
		}
		store_stage_info_release(&base);
		store_stage_info_release(&patched);
	}
	doc = store_compare_doc(f->sf.st, job);
	assert_non_null(doc);
	pairs = json_object_get(json_object_get(doc, "design"), "pairs");
	assert_int_equal(json_array_size(pairs), 2);
	assert_string_equal(json_string_value(json_array_get(json_array_get(pairs, 0), 0)), "b1");
	assert_string_equal(json_string_value(json_array_get(json_array_get(pairs, 0), 1)), "p1");
	assert_string_equal(json_string_value(json_array_get(json_array_get(pairs, 1), 1)), "p2");
	json_decref(doc);
	strbuf_release(&err);
	f->cfg.machines = NULL;
	f->cfg.nmachines = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_inconclusive_grows_once_to_max, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_growth_at_the_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_decided_first_look_stops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duet, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
