/*
 * daemon/compare: the views a comparison adds to its rows, on synthetic
 * runs (fixture_compare.h): a sweep of guest CPUs and the TLB rows, a
 * neighbour's note, the profile diff, duets' pairs and a per-patch
 * series' steps. The decision rule's own tests are test_compare.c's.
 */
#include "testlib.h"

#include <math.h>

#include "compare.h"
#include "fixture_compare.h"
#include "jsonget.h"
#include "stats.h"
#include "util.h"
#include "verdict.h"
#include "banned.h"

/*
 * A suite's guest_cpus: a row per vCPU count (param cpus), a point each
 * on a sweep along "cpus" with its own verdict; the cases of workers:
 * cpus (workers equal to cpus) are one sweep, and a fixed workers count
 * measured at every count another. At each count, the two cases are a
 * thread sweep (workers 1 and N) as before.
 */
static void test_cpus_sweep(void **state)
{
	json_t *b = doc_new(), *p = doc_new(), *c, *sw, *rows;
	static const int counts[] = { 2, 4, 8 };
	size_t i, k, follow = 9, fixed = 9;

	(void)state;
	rng_state = 11;
	for (k = 0; k < 3; k++) {
		char params[96];

		/* the patch costs more the more CPUs there are: 0%, 10%, 30% */
		snprintf(params, sizeof(params), "{\"workers\":%d,\"cpus\":%d}", counts[k], counts[k]);
		add_boots(b, NULL, 6, 0, params, "mprotect.kernel_insn_per_op", 1000, 0.002, "lower");
		add_boots(p, NULL, 6, 0, params, "mprotect.kernel_insn_per_op", k == 0 ? 1000 : k == 1 ? 1100 : 1300,
			  0.002, "lower");
		snprintf(params, sizeof(params), "{\"workers\":1,\"cpus\":%d}", counts[k]);
		add_boots(b, NULL, 6, 1, params, "mprotect.kernel_insn_per_op", 500, 0.002, "lower");
		add_boots(p, NULL, 6, 1, params, "mprotect.kernel_insn_per_op", 500, 0.002, "lower");
	}
	c = compare_docs(b, p);
	sw = json_object_get(c, "sweeps");
	assert_int_equal(json_array_size(sw), 5);
	for (i = 0; i < 5; i++) {
		json_t *s = json_array_get(sw, i);
		const char *axis = jsonget_str(s, "axis");
		const char *pt = jsonget_str(s, "params_text");

		if (!strcmp(axis, "workers"))
			assert_int_equal(strncmp(pt, "cpus=", 5), 0);
		else if (!strcmp(axis, "cpus") && !strcmp(pt, "workers=cpus"))
			follow = i;
		else if (!strcmp(axis, "cpus") && !strcmp(pt, "workers=1"))
			fixed = i;
		else
			fail_msg("sweep %zu: axis %s, params %s", i, axis, pt);
	}
	assert_true(follow < 5 && fixed < 5);
	rows = json_object_get(json_array_get(sw, follow), "rows");
	assert_int_equal(json_array_size(rows), 3);
	for (k = 0; k < 3; k++) {
		json_t *r = json_array_get(rows, k);

		assert_int_equal(jsonget_int_or(r, "x", 0), counts[k]);
		assert_int_equal(jsonget_int_or(r, "cpus", 0), counts[k]);
		assert_string_equal(jsonget_str(r, "verdict"), k ? "regression" : "same");
	}
	rows = json_object_get(json_array_get(sw, fixed), "rows");
	assert_int_equal(json_array_size(rows), 3);
	assert_string_equal(jsonget_str(json_array_get(rows, 2), "verdict"), "same");
	json_decref(b);
	json_decref(p);
	json_decref(c);
}

/* A neighbour whose rate moved by half or more: the comparison notes that
 * the workload's time-driven rows moved with the share it got; one that
 * moved less gets no note. */
static void test_neighbour_note(void **state)
{
	/* the neighbour's rate in each case: 22 times base's, and 18% over it */
	static const struct {
		const char *params;
		double base, patched, patched_cv;
	} grid[] = {
		{ "{\"grid\":\"S\"}", 1700, 37400, 0 },
		{ "{\"grid\":\"M\"}", 1700, 2000, 0.01 },
	};
	json_t *b = doc_new(), *p = doc_new(), *c, *notes;
	size_t i, said = 0;

	(void)state;
	rng_state = 5;
	for (i = 0; i < ARRAY_SIZE(grid); i++) {
		add_boots(b, NULL, 5, (int)i, grid[i].params, "neighbour.mprotect.ops_per_sec", grid[i].base, 0,
			  "higher");
		add_boots(p, NULL, 5, (int)i, grid[i].params, "neighbour.mprotect.ops_per_sec", grid[i].patched,
			  grid[i].patched_cv, "higher");
	}
	c = compare_docs(b, p);
	notes = json_object_get(c, "notes");
	for (i = 0; i < json_array_size(notes); i++) {
		const char *t = json_string_value(json_array_get(notes, i));

		if (!strstr(t, "the neighbour mprotect beside"))
			continue;
		said++;
		assert_contains(t, "grid=S");
		assert_contains(t, "22x the base's operations per second");
		assert_contains(t, "moved with the share it got");
	}
	assert_int_equal(said, 1);
	json_decref(b);
	json_decref(p);
	json_decref(c);
}

static void test_sweep_and_tlb(void **state)
{
	json_t *b = doc_new(), *p = doc_new(), *c, *sw, *rows;
	int w, k;

	(void)state;
	rng_state = 8;
	for (k = 0, w = 1; w <= 4; w *= 2, k++) {
		char params[64];

		snprintf(params, sizeof(params), "{\"workers\":%d,\"mode\":\"threads\"}", w);
		add_boots(b, NULL, 8, k, params, "mprotect.ops_per_sec", 1000.0 * w, 0.002, "higher");
		add_boots(p, NULL, 8, k, params, "mprotect.ops_per_sec", 900.0 * w, 0.002, "higher");
		add_boots(b, NULL, 8, k, params, "tlb.shootdowns_per_kop", 10, 0.002, "lower");
		add_boots(p, NULL, 8, k, params, "tlb.shootdowns_per_kop", 1, 0.002, "lower");
		add_boots(b, NULL, 8, k, params, "interrupts.TLB.per_sec", 5000, 0.002, "lower");
		add_boots(p, NULL, 8, k, params, "interrupts.TLB.per_sec", 500, 0.002, "lower");
		add_boots(b, NULL, 8, k, params, "interrupts.TLB.peak_per_sec", 7000, 0.002, "lower");
		add_boots(p, NULL, 8, k, params, "interrupts.TLB.peak_per_sec", 700, 0.002, "lower");
		add_boots(b, NULL, 8, k, params, "interrupts.TLB.cpu1", 7000, 0.002, "lower");
	}
	c = compare_docs(b, p);
	sw = json_object_get(c, "sweeps");
	assert_int_equal(json_array_size(sw), 1);
	assert_string_equal(jsonget_str(json_array_get(sw, 0), "params_text"),
			    "mode=threads");
	rows = json_object_get(json_array_get(sw, 0), "rows");
	assert_int_equal(json_array_size(rows), 3);
	for (k = 0, w = 1; k < 3; k++, w *= 2) {
		json_t *r = json_array_get(rows, k);

		assert_int_equal(jsonget_int_or(r, "workers", 0), w);
		assert_true(fabs(jsonget_num_or(r, "change_pct", 0) + 10) < 1);
		assert_string_equal(jsonget_str(r, "verdict"), "regression");
	}
	/* per-CPU metrics are left out of rows and named */
	assert_string_equal(json_string_value(json_array_get(json_object_get(c, "per_cpu_excluded"), 0)),
			    "interrupts.TLB.cpu1");
	{
		json_t *t = json_array_get(json_object_get(c, "tlb"), 0), *ctr;

		assert_int_equal(json_array_size(json_object_get(c, "tlb")), 3);
		assert_true(fabs(jsonget_num_or(json_object_get(t, "shootdowns_per_kop"), "base", 0) - 10) < 0.5);
		ctr = json_array_get(json_object_get(t, "counters"), 0);
		assert_string_equal(jsonget_str(ctr, "name"), "interrupts.TLB");
		assert_true(fabs(jsonget_num_or(json_object_get(ctr, "patched"), "peak_per_sec", 0) - 700) < 20);
		/* shootdowns per second are context (a slower kernel would look
		 * better), per operation they are tested */
		assert_string_equal(jsonget_str(ctr, "verdict"), "context");
		assert_string_equal(jsonget_str(json_object_get(t, "shootdowns_per_kop"), "verdict"), "improvement");
	}
	json_decref(b);
	json_decref(p);
	json_decref(c);
}

static void add_profile(json_t *doc, long long run, const char *const *syms, const double *self, int n)
{
	json_t *arr = json_array();
	int i;

	for (i = 0; i < n; i++)
		json_array_append_new(arr, json_pack("{s:s,s:f,s:f,s:b}", "symbol", syms[i], "self", self[i],
						     "children", self[i], "kernel", 1));
	json_array_append_new(json_object_get(doc, "profiles"),
			      json_pack("{s:I,s:{s:o}}", "run", (json_int_t)run, "profile", "symbols", arr));
}

static void test_profile_diff(void **state)
{
	static const char *const syms[] = { "flush_tlb_func", "native_flush_tlb_one_user", "clear_page_erms",
					    "_raw_spin_lock" };
	const double base_self[] = { 30, 10, 5, 2 }, patched_self[] = { 5, 12, 5, 9 };
	json_t *b = doc_new(), *p = doc_new(), *c, *syms_out;
	long long r;

	(void)state;
	r = add_run(b, NULL, 0, 0, "mprotect", "{}", "b0", 0);
	add_metric(b, r, "mprotect.ops_per_sec", 1, "higher");
	add_profile(b, r, syms, base_self, 4);
	/* a warm-up's profile is not measured */
	add_profile(b, add_run(b, NULL, 0, 0, "mprotect", "{}", "b0", 1), syms, patched_self, 4);
	r = add_run(p, NULL, 0, 0, "mprotect", "{}", "p0", 0);
	add_metric(p, r, "mprotect.ops_per_sec", 1, "higher");
	add_profile(p, r, syms, patched_self, 3);	/* no _raw_spin_lock: 0 */
	r = add_run(p, NULL, 0, 0, "mprotect", "{}", "p1", 0);
	add_profile(p, r, syms, patched_self, 4);
	c = compare_docs(b, p);
	syms_out = json_object_get(json_object_get(c, "profile_diff"), "symbols");
	assert_int_equal(json_array_size(syms_out), 4);
	/* -25, +2.5 (9 / 2 - 2), +2, 0 */
	assert_string_equal(jsonget_str(json_array_get(syms_out, 0), "symbol"),
			    "flush_tlb_func");
	assert_true(fabs(jsonget_num_or(json_array_get(syms_out, 0), "delta", 0) + 25) < 1e-9);
	assert_string_equal(jsonget_str(json_array_get(syms_out, 1), "symbol"),
			    "_raw_spin_lock");
	assert_true(fabs(jsonget_num_or(json_array_get(syms_out, 1), "patched_self", 0) - 4.5) < 1e-9);
	assert_string_equal(jsonget_str(json_array_get(syms_out, 2), "symbol"),
			    "native_flush_tlb_one_user");
	assert_string_equal(jsonget_str(json_array_get(syms_out, 3), "symbol"),
			    "clear_page_erms");
	assert_int_equal(jsonget_int_or(json_object_get(json_object_get(c, "profile_diff"), "profiles"), "base", 0), 1);
	assert_null(json_object_get(json_object_get(c, "profile_diff"), "reason"));
	assert_null(json_object_get(json_object_get(c, "profile_diff"), "blind_spot"));
	json_decref(b);
	json_decref(p);
	json_decref(c);
}

/* No profile on a side: the diff says which side, and the agent's reason */
static void test_profile_diff_missing(void **state)
{
	static const char *const syms[] = { "switch_mm_irqs_off" };
	const double self[] = { 3 };
	json_t *b = doc_new(), *p = doc_new(), *c;
	const char *why;
	long long r;

	(void)state;
	r = add_run(b, NULL, 0, 0, "tcp-rr", "{}", "b0", 0);
	add_metric(b, r, "tcp-rr.trans_per_sec", 1, "higher");
	add_profile(b, r, syms, self, 1);
	json_object_set_new(json_object_get(json_array_get(json_object_get(b, "profiles"), 0), "profile"),
			    "blind_spot", json_string("code run with interrupts off"));
	r = add_run(p, NULL, 0, 0, "tcp-rr", "{}", "p0", 0);
	add_metric(p, r, "tcp-rr.trans_per_sec", 1, "higher");
	json_object_set_new(p, "unavailable", json_pack("{s:s}", "profile", "perf record failed (exit 255): "
							 "Failed to create wakeup eventfd"));
	c = compare_docs(b, p);
	why = jsonget_str(json_object_get(c, "profile_diff"), "reason");
	assert_non_null(why);
	assert_non_null(strstr(why, "no profile on patched: perf record failed (exit 255)"));
	assert_null(strstr(why, "on base"));
	assert_int_equal(json_array_size(json_object_get(json_object_get(c, "profile_diff"), "symbols")), 0);
	/* and what the profiler cannot see, as the agent said */
	assert_string_equal(jsonget_str(json_object_get(c, "profile_diff"), "blind_spot"),
			    "code run with interrupts off");
	json_decref(c);
	/* neither side: both named, with how to ask for a profile */
	json_array_clear(json_object_get(b, "profiles"));
	json_object_del(p, "unavailable");
	c = compare_docs(b, p);
	why = jsonget_str(json_object_get(c, "profile_diff"), "reason");
	assert_non_null(why);
	assert_non_null(strstr(why, "no profile on base: none was taken (a suite asks for one with monitors"));
	assert_non_null(strstr(why, "; no profile on patched: "));
	json_decref(b);
	json_decref(p);
	json_decref(c);
}

/* Rounds of a duet: base and patched booted at once, so each round's host
 * noise (here 15% sd) is shared by both of its boots, each of which adds
 * 0.5% of its own. */
static json_t *duet_doc(double shift, int with_pairs)
{
	json_t *doc = doc_new(), *pairs = json_array();
	int i;

	for (i = 0; i < 5; i++) {
		double host = 1 + 0.15 * rng_gauss();
		char bb[32], bp[32];
		long long r;

		snprintf(bb, sizeof(bb), "base-%d", i);
		snprintf(bp, sizeof(bp), "patched-%d", i);
		r = add_run(doc, "base", 0, 0, "mprotect", "{}", bb, 0);
		add_metric(doc, r, "mprotect.ops_per_sec", 1000 * host * (1 + 0.005 * rng_gauss()), "higher");
		r = add_run(doc, "patched", 0, 0, "mprotect", "{}", bp, 0);
		add_metric(doc, r, "mprotect.ops_per_sec", 1000 * (1 + shift) * host * (1 + 0.005 * rng_gauss()),
			   "higher");
		json_array_append_new(pairs, json_pack("[s,s]", bb, bp));
	}
	json_object_set_new(doc, "design", json_pack("{s:i,s:i,s:i}", "boots", 5, "max_boots", 5, "look", 1));
	if (with_pairs)
		json_object_set(json_object_get(doc, "design"), "pairs", pairs);
	json_decref(pairs);
	return doc;
}

/* The score's row of duet_doc(shift, with_pairs) drawn from seed,
 * compared; *ret_c is the comparison (the caller frees it). */
static const json_t *duet_score(uint64_t seed, double shift, int with_pairs, json_t **ret_c)
{
	json_t *doc;

	rng_state = seed;
	doc = duet_doc(shift, with_pairs);
	*ret_c = compare_ab(doc);
	json_decref(doc);
	return row_of(*ret_c, "mprotect.ops_per_sec", NULL);
}

/* A time row of duet rounds is tested on its paired ratios: a 4% drop
 * under 15% host noise is called; the same boots unpaired are not; no
 * change stays uncalled. */
static void test_paired_duets(void **state)
{
	json_t *c;
	const json_t *r;

	(void)state;
	r = duet_score(77, -0.04, 1, &c);
	assert_string_equal(jsonget_str(r, "p_method"), "paired t");
	assert_string_equal(verdict(r), "regression");
	assert_int_equal(jsonget_int_or(json_object_get(r, "paired"), "rounds", 0), 5);
	assert_true(row_num(json_object_get(r, "paired"), "ratio_spread_pct") <
		    row_num(json_object_get(r, "paired"), "unpaired_spread_pct") / 5);
	json_decref(c);

	r = duet_score(77, -0.04, 0, &c);
	assert_string_not_equal(jsonget_str(r, "p_method"), "paired t");
	assert_string_not_equal(verdict(r), "regression");
	json_decref(c);

	r = duet_score(78, 0, 1, &c);
	assert_string_equal(jsonget_str(r, "p_method"), "paired t");
	assert_string_not_equal(verdict(r), "regression");
	assert_string_not_equal(verdict(r), "improvement");
	json_decref(c);
}

/*
 * A per-patch series of three, made and compared by the shipped code:
 * patch 2 of 3 takes ops/s from 1000 to 700, 1 and 3 change nothing. Each
 * job compares its prefix with the base; each step (prefix k-1's patched
 * boots against prefix k's) is compare_sides over two jobs' documents, as
 * comparison_cache.c computes it; compare_per_patch names patch 2 alone.
 */
static void test_per_patch(void **state)
{
	static const double centers[] = { 1000, 700, 700 };
	struct compare_rules rules;
	struct strbuf err = STRBUF_INIT;
	json_t *docs[3], *vs_base[3], *steps[3], *pp, *row, *v;
	size_t k, i;

	(void)state;
	rng_state = 77;
	compare_rules_default(&rules);
	rules.resamples = 500;
	for (k = 0; k < 3; k++) {
		docs[k] = doc_new();
		add_boots(docs[k], "base", 6, 0, "{\"workers\":2}", "mprotect.ops_per_sec", 1000, 0.01, "higher");
		add_boots(docs[k], "patched", 6, 0, "{\"workers\":2}", "mprotect.ops_per_sec", centers[k], 0.01,
			  "higher");
		/* a second case that no patch moves: a row of its own */
		add_boots(docs[k], "base", 6, 1, "{\"workers\":1}", "mprotect.ops_per_sec", 500, 0.01, "higher");
		add_boots(docs[k], "patched", 6, 1, "{\"workers\":1}", "mprotect.ops_per_sec", 500, 0.01, "higher");
		vs_base[k] = compare_ab(docs[k]);
		steps[k] = k ? compare_sides(docs[k - 1], "patched", docs[k], "patched", &rules, &err)
			     : json_incref(vs_base[0]);
		if (!steps[k])
			fail_msg("step %zu: %s", k + 1, err.buf);
	}
	pp = compare_per_patch(vs_base, steps, 3);
	assert_int_equal(json_array_size(json_object_get(pp, "rows")), 2);
	json_array_foreach(json_object_get(pp, "rows"), i, row)
		if (!strcmp(jsonget_str(row, "params_text"), "workers=1"))
			assert_int_equal(json_array_size(json_object_get(row, "moved_by")), 0);
	row = json_array_get(json_object_get(pp, "rows"), 0);
	if (strcmp(jsonget_str(row, "params_text"), "workers=2"))
		row = json_array_get(json_object_get(pp, "rows"), 1);
	assert_string_equal(jsonget_str(row, "params_text"), "workers=2");
	assert_string_equal(jsonget_str(row, "metric"), "mprotect.ops_per_sec");
	assert_int_equal(json_array_size(json_object_get(row, "moved_by")), 1);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(row, "moved_by"), 0)), 2);
	assert_string_equal(verdict(json_array_get(json_object_get(row, "steps"), 1)), "regression");
	assert_string_equal(verdict(json_array_get(json_object_get(row, "vs_base"), 2)), "regression");
	assert_true(fabs(row_num(json_array_get(json_object_get(row, "steps"), 1), "change_pct") + 30) < 3);
	json_array_foreach(json_object_get(row, "steps"), i, v)
		if (i != 1)
			assert_string_not_equal(verdict(v), "regression");
	assert_string_equal(json_string_value(json_array_get(json_object_get(pp, "step_verdicts"), 1)), "regression");
	/* a job not ended yet: its cells are null, and nothing is said of it */
	json_decref(pp);
	json_decref(vs_base[2]);
	json_decref(steps[2]);
	vs_base[2] = steps[2] = NULL;
	pp = compare_per_patch(vs_base, steps, 3);
	row = json_array_get(json_object_get(pp, "rows"), 0);
	assert_int_equal(json_array_size(json_object_get(pp, "rows")), 2);
	assert_true(json_is_null(json_array_get(json_object_get(row, "steps"), 2)));
	assert_true(json_is_null(json_array_get(json_object_get(pp, "step_verdicts"), 2)));
	json_decref(pp);
	for (k = 0; k < 3; k++) {
		json_decref(docs[k]);
		json_decref(vs_base[k]);
		json_decref(steps[k]);
	}
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sweep_and_tlb),
		cmocka_unit_test(test_cpus_sweep),
		cmocka_unit_test(test_neighbour_note),
		cmocka_unit_test(test_profile_diff),
		cmocka_unit_test(test_profile_diff_missing),
		cmocka_unit_test(test_paired_duets),
		cmocka_unit_test(test_per_patch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
