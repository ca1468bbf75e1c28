/*
 * daemon/compare: the verdicts a maintainer reads. Inputs are synthetic
 * runs and metrics (fixture_compare.h) from a fixed-seed generator, so the error
 * rates below are measured on the same numbers every time: an A/A rate of
 * false regressions, the power to see a 5% shift, and the rate at which a
 * 0.5% shift (below the 2% threshold) is called a change.
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

/* ---- the decision rule ---- */

/* One A/B document, 1% CV around center, shifted on patched. */
static json_t *ab_doc(int boots, int nrows, double shift, double cv, const char *design)
{
	json_t *doc = doc_new();
	int k;

	for (k = 0; k < nrows; k++) {
		char params[64];

		snprintf(params, sizeof(params), "{\"workers\":%d}", k + 1);
		add_boots(doc, "base", boots, k, params, "mprotect.ops_per_sec", 1000, cv, "higher");
		add_boots(doc, "patched", boots, k, params, "mprotect.ops_per_sec", 1000 * (1 + shift), cv,
			  "higher");
	}
	if (design)
		json_object_set_new(doc, "design", json_loads(design, 0, NULL));
	return doc;
}

/* ab_doc(...) compared; the document is freed, the comparison returned. */
static json_t *ab_compared(int boots, int nrows, double shift, double cv, const char *design)
{
	json_t *doc = ab_doc(boots, nrows, shift, cv, design), *c = compare_ab(doc);

	json_decref(doc);
	return c;
}

static double design_num(const json_t *c, const char *k)
{
	return jsonget_num_or(json_object_get(c, "design"), k, 0);
}

/* Two planned looks: the first spends the O'Brien-Fleming-like share,
 * the second the rest; a first look whose boots cannot give a p below its
 * share gives it to the second; a second look is wanted only while a
 * headline row is undecided at the first. */
static void test_sequential_looks(void **state)
{
	json_t *c;
	double a1, a2;
	char *notes;

	(void)state;
	rng_state = 21;
	/* 5 of 9 boots: the share is 2 - 2 Phi(2.5758 / sqrt(5/9)) = 5.49e-4,
	 * but 5 boots a side give no Mann-Whitney p below 2/252: the rank
	 * headline rows spend nothing now and all of alpha at the second look.
	 * At 15% noise neither a change nor same */
	c = ab_compared(5, 2, 0, 0.15, "{\"boots\":5,\"max_boots\":9,\"look\":1}");
	a1 = design_num(c, "alpha");
	assert_true(a1 == 0);
	assert_true(design_num(c, "first_look_alpha") == 0);
	notes = json_dumps(json_object_get(c, "notes"), 0);
	assert_contains(notes, "the second look spends all of it");
	free(notes);
	assert_int_equal((int)design_num(c, "look"), 1);
	assert_int_equal((int)design_num(c, "looks"), 2);
	assert_string_equal(jsonget_str(c, "verdict"), "inconclusive");
	assert_int_equal(verdict_wants_more_boots(c), 1);
	json_decref(c);

	/* the second look, 9 boots, a clear 10% drop: called, at all of alpha */
	c = ab_compared(9, 2, -0.10, 0.002, "{\"boots\":5,\"max_boots\":9,\"look\":2}");
	a2 = design_num(c, "alpha");
	assert_true(fabs(a1 + a2 - 0.01) < 1e-15);
	assert_string_equal(jsonget_str(c, "verdict"), "regression");
	assert_int_equal(verdict_wants_more_boots(c), 0);
	json_decref(c);

	/* 8 of 12 boots can reach their share (2 - 2 Phi(2.5758 / sqrt(2/3))
	 * = 0.0016 > 2/12870): it is spent at the first look, the rest at the
	 * second */
	c = ab_compared(8, 1, -0.10, 0.002, "{\"boots\":8,\"max_boots\":12,\"look\":1}");
	a1 = design_num(c, "alpha");
	assert_true(a1 > 0.0015 && a1 < 0.0017);
	assert_string_equal(jsonget_str(c, "verdict"), "regression");
	json_decref(c);
	c = ab_compared(12, 1, -0.10, 0.002, "{\"boots\":8,\"max_boots\":12,\"look\":2}");
	assert_true(fabs(a1 + design_num(c, "alpha") - 0.01) < 1e-15);
	json_decref(c);

	/* a quiet A/A job is same at its first look, within the 2% a change
	 * needs, and stops there */
	rng_state = 27;
	c = ab_compared(5, 2, 0, 0.002, "{\"boots\":5,\"max_boots\":9,\"look\":1}");
	assert_string_equal(jsonget_str(c, "verdict"), "same");
	assert_int_equal(verdict_wants_more_boots(c), 0);
	json_decref(c);
	/* a 5% drop at 1% noise is inside the 10% margin at 5 boots, but the
	 * interval reaches past 2%: not same (no change beyond 10%), and the
	 * second look, which can call it */
	rng_state = 28;
	c = ab_compared(5, 1, -0.05, 0.01, "{\"boots\":5,\"max_boots\":9,\"look\":1}");
	assert_string_equal(jsonget_str(c, "verdict"), "inconclusive");
	assert_true(row_num(row_of(c, "mprotect.ops_per_sec", NULL), "no_change_beyond_pct") == 10);
	assert_int_equal(verdict_wants_more_boots(c), 1);
	json_decref(c);

	/* a job that may not grow: one look, all of alpha, no second look */
	c = ab_compared(5, 1, 0, 0.02, "{\"boots\":5,\"max_boots\":5,\"look\":1}");
	assert_true(design_num(c, "alpha") == 0.01);
	assert_int_equal((int)design_num(c, "looks"), 1);
	assert_int_equal(verdict_wants_more_boots(c), 0);
	json_decref(c);

	/* no design (two jobs compared): one look */
	c = ab_compared(5, 1, 0, 0.02, NULL);
	assert_true(design_num(c, "alpha") == 0.01);
	assert_int_equal(verdict_wants_more_boots(c), 0);
	json_decref(c);
}

/* Headline rows are adjusted by Holm, secondary rows by Benjamini-Hochberg. */
static void test_multiplicity(void **state)
{
	json_t *doc, *c, *r;
	size_t i;
	int headline = 0, counters = 0;
	/* 8 vs 8 completely separated: p = 2 / C(16, 8) */
	double p = 2.0 / 12870;

	(void)state;
	rng_state = 22;
	doc = ab_doc(8, 3, -0.10, 0.001, NULL);
	for (i = 0; i < 4; i++) {
		char name[64];

		snprintf(name, sizeof(name), "kfunc.f%zu.ns_per_call", i);
		add_boots(doc, "base", 8, 0, "{\"workers\":1}", name, 100, 0.001, "lower");
		add_boots(doc, "patched", 8, 0, "{\"workers\":1}", name, 150, 0.001, "lower");
	}
	c = compare_ab(doc);
	json_array_foreach(json_object_get(c, "rows"), i, r) {
		double adj = jsonget_num_or(r, "p_adj", 0);

		assert_true(fabs(jsonget_num_or(r, "p", 0) - p) < 1e-12);
		if (json_is_true(json_object_get(r, "headline"))) {
			headline++;
			/* three equal p-values: Holm multiplies the smallest by 3,
			 * the running max carries it to the others */
			assert_string_equal(jsonget_str(r, "p_adj_method"), "holm");
			assert_true(fabs(adj - 3 * p) < 1e-12);
			assert_string_equal(verdict(r), "regression");
		} else {
			counters++;
			/* four equal p-values: BH leaves them as they are */
			assert_string_equal(jsonget_str(r, "p_adj_method"), "bh");
			assert_true(fabs(adj - p) < 1e-12);
			assert_string_equal(verdict(r), "regression");
		}
	}
	assert_int_equal(headline, 3);
	assert_int_equal(counters, 4);
	json_decref(c);
	json_decref(doc);

	/* 5 boots and 3 headline rows: 2/252 cannot beat 0.01 / 3, and the
	 * comparison says so rather than calling anything */
	rng_state = 23;
	c = ab_compared(5, 3, -0.10, 0.001, NULL);
	assert_string_equal(jsonget_str(c, "verdict"), "inconclusive");
	{
		char *notes = json_dumps(json_object_get(c, "notes"), 0);

		assert_contains(notes, "no headline row can be called");
		free(notes);
	}
	json_decref(c);
}

/* The headline row of ab_doc(boots, 1, shift, cv, NULL) compared, from
 * the random numbers of seed; c is the comparison, which the caller frees. */
static const json_t *ab_headline(uint64_t seed, int boots, double shift, double cv, json_t **c)
{
	rng_state = seed;
	*c = ab_compared(boots, 1, shift, cv, NULL);
	return row_of(*c, "mprotect.ops_per_sec", NULL);
}

static const char *row_reason(const json_t *r)
{
	return jsonget_str(r, "reason");
}

/* `same` is reachable when the noise is small for the margin; otherwise
 * the row says what it rules out and what the job could have seen. */
static void test_same_and_detectable(void **state)
{
	json_t *c;
	const json_t *r;
	double lo, hi, m;

	(void)state;
	r = ab_headline(24, 9, 0, 0.002, &c);
	assert_string_equal(verdict(r), "same");
	lo = json_number_value(json_array_get(json_object_get(r, "equiv_ci"), 0));
	hi = json_number_value(json_array_get(json_object_get(r, "equiv_ci"), 1));
	m = row_num(r, "margin_pct");
	assert_true(lo >= -m && hi <= m && lo < hi);
	/* at 0.2% noise the detectable change is the 2% floor of a call */
	assert_true(row_num(r, "mde_pct") == 2);
	assert_string_equal(verdict(c), "same");
	json_decref(c);

	/* two boots agree closely, but no 90% interval exists from 2 and 2 */
	r = ab_headline(26, 2, 0, 0.002, &c);
	assert_string_equal(verdict(r), "inconclusive");
	assert_true(json_is_null(json_object_get(r, "equiv_ci")));
	assert_contains(row_reason(r), "too few boots for an equivalence");
	json_decref(c);

	/* 15% noise: neither a change nor within the 10% margin (the 90%
	 * interval alone is about +-12% wide): inconclusive, with what the
	 * interval rules out and what this job could detect */
	r = ab_headline(25, 9, 0, 0.15, &c);
	assert_string_equal(verdict(r), "inconclusive");
	/* (t(0.01, 16) + t(0.4, 16)) * 15% * sqrt(2/9) / sqrt(3/pi), with the
	 * sample sd instead of 15%: around 27%, far from the 2% floor */
	assert_true(row_num(r, "mde_pct") > 15 && row_num(r, "mde_pct") < 45);
	assert_true(row_num(r, "ruled_out_pct") > 2);
	assert_contains(row_reason(r), "ruled out");
	assert_contains(row_reason(r), "could detect");
	json_decref(c);
}

static void add_values(json_t *doc, const char *side, const char *metric, const double *v, int n,
		       const char *dir)
{
	add_values_unit(doc, side, "v", metric, v, n, dir, "ops/s");
}

/* A zero in the base no longer costs the interval; integer counters with
 * ties get an exact permutation p. */
static void test_zeros_and_ties(void **state)
{
	const double base[] = { 1000, 0, 1001, 999, 1002, 1003, 998, 1004, 997 };
	const double patched[] = { 900, 901, 899, 902, 898, 900, 901, 899, 900 };
	const double zb[] = { 0, 0, 0, 0, 0 }, zp[] = { 3, 4, 3, 5, 4 };
	const double two[] = { 100, 0, 101, 99, 102, 0, 98, 103, 97 };
	const double tb[] = { 3, 3, 4, 3, 4 }, tp[] = { 8, 9, 8, 8, 9 };
	json_t *doc = doc_new(), *c;
	const json_t *r;

	(void)state;
	add_values(doc, "base", "mprotect.ops_per_sec", base, 9, "higher");
	add_values(doc, "patched", "mprotect.ops_per_sec", patched, 9, "higher");
	/* counters per op (work) with zeros: no logs, so the rank rule */
	add_values(doc, "base", "vmstat.nr_tlb_remote_flush.per_kop", zb, 5, "lower");
	add_values(doc, "patched", "vmstat.nr_tlb_remote_flush.per_kop", zp, 5, "lower");
	add_values(doc, "base", "kfunc.flush_tlb_func.ns_per_call", tb, 5, "lower");
	add_values(doc, "base", "vmstat.two_zeros.per_kop", two, 9, "lower");
	add_values(doc, "patched", "vmstat.two_zeros.per_kop", patched, 9, "lower");
	add_values(doc, "patched", "kfunc.flush_tlb_func.ns_per_call", tp, 5, "lower");
	c = compare_ab(doc);
	/* one zero among nine costs neither the call nor the interval */
	r = row_of(c, "mprotect.ops_per_sec", NULL);
	assert_string_equal(verdict(r), "regression");
	assert_true(json_number_value(json_array_get(json_object_get(r, "ci"), 1)) < 0);
	/* two: some resamples of base have median 0, so the interval is of
	 * the difference, in % of the base median, rather than none */
	r = row_of(c, "vmstat.two_zeros.per_kop", NULL);
	assert_contains(jsonget_str(r, "ci_kind"), "difference");
	assert_true(json_is_array(json_object_get(r, "ci")));
	assert_true(json_number_value(json_array_get(json_object_get(r, "ci"), 0)) > 0);
	/* a base of zeros: no % at all, an absolute change and its interval in
	 * the metric's unit (test_compare_counts.c) */
	r = row_of(c, "vmstat.nr_tlb_remote_flush.per_kop", NULL);
	assert_string_equal(jsonget_str(r, "p_method"), "welch, absolute");
	assert_true(json_is_null(json_object_get(r, "ci")));
	assert_true(json_number_value(json_array_get(json_object_get(r, "ci_abs"), 0)) > 0);
	assert_float_equal(jsonget_num_or(r, "change_abs", 0), 3.8, 1e-9);
	assert_string_equal(verdict(r), "regression");
	/* ties, completely separated: the permutation p is 2 / C(10, 5) */
	r = row_of(c, "kfunc.flush_tlb_func.ns_per_call", NULL);
	assert_string_equal(jsonget_str(r, "p_method"), "permutation");
	assert_true(fabs(jsonget_num_or(r, "p", 0) - 2.0 / 252) < 1e-12);
	json_decref(c);
	json_decref(doc);
}

/* ---- behaviour ---- */

static void test_directions(void **state)
{
	static const struct {
		const char *metric, *dir;
		double shift;
		const char *want;
	} cases[] = {
		{ "mprotect.ops_per_sec", "higher", -0.10, "regression" },
		{ "mprotect.ops_per_sec", "higher", 0.10, "improvement" },
		{ "interrupts.TLB.per_kop", "lower", 0.10, "regression" },
		{ "interrupts.TLB.per_kop", "lower", -0.10, "improvement" },
		{ "procstat.busy_pct", "neutral", 0.10, "changed" },
		{ "mprotect.ops_per_sec", "higher", 0.0, "same" },
	};
	size_t i;

	(void)state;
	rng_state = 5;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		json_t *b = doc_new(), *p = doc_new(), *c;
		const json_t *r;

		add_boots(b, NULL, 5, 0, "{\"workers\":2}", cases[i].metric, 1000, 0.002, cases[i].dir);
		add_boots(p, NULL, 5, 0, "{\"workers\":2}", cases[i].metric, 1000 * (1 + cases[i].shift),
			  0.002, cases[i].dir);
		c = compare_docs(b, p);
		r = row_of(c, cases[i].metric, "workers=2");
		if (strcmp(verdict(r), cases[i].want))
			fail_msg("%s %s %+g: %s, want %s", cases[i].metric, cases[i].dir, cases[i].shift,
				 verdict(r), cases[i].want);
		assert_int_equal(json_is_true(json_object_get(r, "headline")),
				 !strncmp(cases[i].metric, "mprotect.", 9));
		assert_int_equal(jsonget_int_or(json_object_get(r, "base"), "n", 0), 5);
		if (cases[i].shift) {
			double ch = jsonget_num_or(r, "change_pct", 0);
			const json_t *ci = json_object_get(r, "ci");

			assert_true(fabs(ch - 100 * cases[i].shift) < 2);
			/* the CI is in percent change, around the change */
			assert_true(json_number_value(json_array_get(ci, 0)) <= ch &&
				    ch <= json_number_value(json_array_get(ci, 1)));
			assert_true(jsonget_num_or(r, "p", 0) < 0.01);
		}
		json_decref(b);
		json_decref(p);
		json_decref(c);
	}
}

static void test_summary_and_side_filters(void **state)
{
	json_t *doc = doc_new(), *c, *s;
	struct compare_rules rules;
	struct strbuf err = STRBUF_INIT;

	(void)state;
	rng_state = 6;
	/* one A/B job: both sides in one document, told apart by "side" */
	add_boots(doc, "base", 8, 0, "{\"mode\":\"processes\",\"workers\":2}", "mprotect.ops_per_sec",
		  1000, 0.0003, "higher");
	add_boots(doc, "patched", 8, 0, "{\"mode\":\"processes\",\"workers\":2}", "mprotect.ops_per_sec",
		  917, 0.0003, "higher");
	add_boots(doc, "base", 8, 1, "{\"mode\":\"threads\",\"workers\":2}", "mprotect.ops_per_sec",
		  1000, 0.003, "higher");
	add_boots(doc, "patched", 8, 1, "{\"mode\":\"threads\",\"workers\":2}", "mprotect.ops_per_sec",
		  1000, 0.003, "higher");
	compare_rules_default(&rules);
	c = compare_sides(doc, "base", doc, "patched", &rules, &err);
	assert_non_null(c);
	s = json_object_get(c, "summary");
	assert_int_equal(json_array_size(json_object_get(s, "regressions")), 1);
	assert_int_equal(json_array_size(json_object_get(s, "improvements")), 0);
	assert_contains(jsonget_str(s, "text"),
			"mprotect.ops_per_sec (mode=processes workers=2) -8.3% regression");
	assert_int_equal(jsonget_int_or(json_object_get( json_object_get(c, "provenance"), "boots"), "patched", 0), 8);
	assert_string_equal(json_string_value(json_array_get(json_object_get(json_object_get(
		json_object_get(c, "provenance"), "builds"), "patched"), 0)), "patched");
	assert_int_equal(json_array_size(json_object_get(c, "failed")), 0);
	json_decref(c);
	json_decref(doc);
	strbuf_release(&err);
}

static void test_unavailable(void **state)
{
	json_t *b = doc_new(), *p = doc_new(), *c;
	const json_t *r;
	long long run;

	(void)state;
	rng_state = 7;
	add_boots(b, NULL, 5, 0, "{}", "mprotect.ops_per_sec", 1000, 0.01, "higher");
	add_boots(p, NULL, 5, 0, "{}", "mprotect.ops_per_sec", 1000, 0.01, "higher");
	add_boots(b, NULL, 5, 0, "{}", "vmstat.nr_tlb_remote_flush", 50, 0.01, "lower");
	add_boots(b, NULL, 5, 0, "{}", "interrupts.TLB", 50, 0.01, "lower");
	json_object_set_new(p, "unavailable", json_pack("{s:s}", "interrupts.TLB",
							"no TLB line in /proc/interrupts"));
	/* a null value: unavailable for that run, with the agent's reason */
	run = add_run(p, NULL, 0, 0, "mprotect", "{}", "x-0", 0);
	json_array_append_new(json_object_get(p, "metrics"),
		json_pack("{s:I,s:s,s:n,s:s}", "run", (json_int_t)run, "name", "tlb_flush.remote_shootdown",
			  "value", "reason", "tracefs not mounted"));
	c = compare_docs(b, p);
	r = row_of(c, "vmstat.nr_tlb_remote_flush", NULL);
	assert_string_equal(verdict(r), "unavailable");
	assert_string_equal(jsonget_str(r, "reason"), "not measured on patched");
	r = row_of(c, "interrupts.TLB", NULL);
	assert_string_equal(verdict(r), "unavailable");
	assert_contains(jsonget_str(r, "reason"), "no TLB line");
	r = row_of(c, "tlb_flush.remote_shootdown", NULL);
	assert_string_equal(verdict(r), "unavailable");
	assert_contains(jsonget_str(r, "reason"), "tracefs not mounted");
	assert_true(json_is_null(json_object_get(r, "change_pct")));
	json_decref(b);
	json_decref(p);
	json_decref(c);
}

/* A counter neither side's kernel has (arm64: no TLB interrupts, no
 * tlb_flush tracepoint) makes no row; the comparison says it, per side,
 * with the agent's reason. */
static void test_unavailable_both(void **state)
{
	json_t *b = doc_new(), *p = doc_new(), *c, *u, *r;
	static const char why[] = "no TLB row in /proc/interrupts: arm64 flushes TLBs with broadcast TLBI";
	size_t i;

	(void)state;
	rng_state = 9;
	add_boots(b, NULL, 5, 0, "{}", "mprotect.elapsed_sec", 2.0, 0.01, "lower");
	add_boots(p, NULL, 5, 0, "{}", "mprotect.elapsed_sec", 1.0, 0.01, "lower");
	json_object_set_new(b, "unavailable", json_pack("{s:s}", "interrupts.TLB", why));
	json_object_set_new(p, "unavailable", json_pack("{s:s,s:s}", "interrupts.TLB", why, "tlb_flush.*",
							"tlb:tlb_flush is emitted by x86's flush code only"));
	c = compare_docs(b, p);
	json_array_foreach(json_object_get(c, "rows"), i, r)
		assert_false(strncmp(jsonget_str(r, "metric"), "interrupts.", 11) == 0);
	u = json_object_get(c, "unavailable");
	assert_string_equal(jsonget_str(json_object_get(u, "base"), "interrupts.TLB"), why);
	assert_string_equal(jsonget_str(json_object_get(u, "patched"), "interrupts.TLB"), why);
	assert_contains(jsonget_str(json_object_get(u, "patched"), "tlb_flush.*"), "x86");
	assert_null(json_object_get(json_object_get(u, "base"), "tlb_flush.*"));
	assert_string_equal(verdict(row_of(c, "mprotect.elapsed_sec", NULL)), "improvement");
	json_decref(b);
	json_decref(p);
	json_decref(c);
}

static void test_outliers_failed_and_fewer_boots(void **state)
{
	json_t *b = doc_new(), *p = doc_new(), *c;
	const json_t *r, *notes;
	long long run;
	size_t i;
	int found = 0;

	(void)state;
	rng_state = 9;
	add_boots(b, NULL, 4, 0, "{}", "mprotect.ops_per_sec", 1000, 0.002, "higher");
	/* boot 5 of base: 40% slow, an outlier to flag, not to drop */
	run = add_run(b, NULL, 0, 0, "mprotect", "{}", "slow-boot", 0);
	add_metric(b, run, "mprotect.ops_per_sec", 600, "higher");
	add_boots(p, NULL, 3, 0, "{}", "mprotect.ops_per_sec", 2000, 0.002, "higher");
	/* a failed run: reported, its value never averaged in */
	run = add_run(p, NULL, 0, 0, "mprotect", "{}", "p-failed", 0);
	json_object_set_new(json_array_get(json_object_get(p, "runs"), json_array_size(json_object_get(p, "runs")) - 1),
			    "error", json_string("workload: mprotect: killed by SIGSEGV"));
	add_metric(p, run, "mprotect.ops_per_sec", 1e9, "higher");
	c = compare_docs(b, p);
	r = row_of(c, "mprotect.ops_per_sec", NULL);
	assert_int_equal(jsonget_int_or(r, "outliers", 0), 1);
	assert_int_equal(jsonget_int_or(json_object_get(r, "patched"), "n", 0), 3);
	assert_int_equal(jsonget_int_or(json_object_get(r, "base"), "n", 0), 5);
	/* 5 vs 3: the smallest p is 2/56 > 0.01, so a 2x change is inconclusive */
	assert_string_equal(verdict(r), "inconclusive");
	assert_contains(jsonget_str(r, "note"), "5 boots on base, 3 on patched");
	assert_contains(jsonget_str(r, "mde_note"), "no change can be detected");
	assert_true(json_is_null(json_object_get(r, "mde_pct")));
	assert_int_equal(json_array_size(json_object_get(c, "failed")), 1);
	assert_contains(jsonget_str(json_array_get(json_object_get(c, "failed"), 0), "reason"), "SIGSEGV");
	notes = json_object_get(c, "notes");
	for (i = 0; i < json_array_size(notes); i++)
		found |= strstr(json_string_value(json_array_get(notes, i)), "base has 5 boots, patched 3") != NULL;
	assert_true(found);
	json_decref(b);
	json_decref(p);
	json_decref(c);

	/* a side with nothing measured is a failure, not an empty average */
	b = doc_new();
	p = doc_new();
	add_boots(b, NULL, 5, 0, "{}", "mprotect.ops_per_sec", 1000, 0.01, "higher");
	c = compare_docs(b, p);
	assert_string_equal(jsonget_str(json_array_get(json_object_get(c, "failed"), 0), "reason"), "no measured runs");
	assert_string_equal(verdict(row_of(c, "mprotect.ops_per_sec", NULL)), "unavailable");
	json_decref(b);
	json_decref(p);
	json_decref(c);
}

/* A suite's per-metric rule moves one metric's threshold and not another's. */
static void test_metric_overrides(void **state)
{
	static const struct compare_override ov[] = {
		{ "mprotect.ops_*", NAN, 0.05, NAN },
		{ "mprotect.*", 0.5, 0.0, NAN },	/* shadowed for ops_per_sec: first match wins */
	};
	const char *params = "{\"mode\":\"threads\",\"workers\":2}";
	json_t *b = doc_new(), *p = doc_new(), *c, *rules;
	struct compare_rules r;
	struct strbuf err = STRBUF_INIT;

	(void)state;
	rng_state = 11;
	add_boots(b, NULL, 8, 0, params, "mprotect.ops_per_sec", 1000, 0.003, "higher");
	add_boots(p, NULL, 8, 0, params, "mprotect.ops_per_sec", 970, 0.003, "higher");
	add_boots(b, NULL, 8, 1, params, "mprotect.latency_ns", 1000, 0.003, "lower");
	add_boots(p, NULL, 8, 1, params, "mprotect.latency_ns", 1030, 0.003, "lower");
	c = compare_docs(b, p);
	assert_string_equal(verdict(row_of(c, "mprotect.ops_per_sec", NULL)), "regression");
	assert_string_equal(verdict(row_of(c, "mprotect.latency_ns", NULL)), "regression");
	json_decref(c);

	compare_rules_default(&r);
	r.resamples = 500;
	r.overrides = ov;
	r.noverrides = 2;
	c = compare_sides(b, NULL, p, NULL, &r, &err);
	assert_non_null(c);
	/* -3% is below this metric's 5%: not a change; its equivalence
	 * interval lies inside the 10% margin: same */
	assert_string_equal(verdict(row_of(c, "mprotect.ops_per_sec", NULL)), "same");
	assert_string_equal(verdict(row_of(c, "mprotect.latency_ns", NULL)), "regression");
	rules = json_object_get(json_object_get(c, "rules"), "metrics");
	assert_int_equal(json_object_size(rules), 2);
	assert_float_equal(json_real_value(json_object_get(json_object_get(rules, "mprotect.ops_*"),
							   "min_change")), 0.05, 1e-12);
	assert_true(json_is_null(json_object_get(json_object_get(rules, "mprotect.ops_*"), "alpha")));
	json_decref(c);

	/* a rule outside its range is refused */
	r.noverrides = 1;
	r.overrides = (const struct compare_override[]){ { "x", 2.0, NAN, NAN } };
	assert_null(compare_sides(b, NULL, p, NULL, &r, &err));
	assert_string_equal(err.buf, "compare: invalid rule for metrics 'x'");
	strbuf_release(&err);
	json_decref(b);
	json_decref(p);
}

static void test_bad_input(void **state)
{
	struct strbuf err = STRBUF_INIT;
	json_t *b = json_pack("{s:s}", "runs", "nope"), *p = doc_new();

	(void)state;
	assert_null(compare_sides(b, NULL, p, NULL, NULL, &err));
	assert_contains(err.buf, "base: \"runs\"");
	json_decref(b);
	json_decref(p);
	strbuf_release(&err);
}

/*
 * Wait rows (spin-wait instructions per op): their least change and margin
 * are 5% (min_change_wait, same_band_wait), not the work rows' 1%; a row
 * below wait_floor on every boot of both sides is tested first, on the
 * values against a tenth of the floor (issue 38: 0.001 -> 0.045 per op,
 * 45x, once read same), and is same when that calls nothing, whatever the
 * ratio of its near-zero counts; one boot above the floor makes it the
 * ratio's test again.
 */
static void test_wait_rows(void **state)
{
	json_t *doc, *c;
	const json_t *r;

	(void)state;
	rng_state = 91;
	doc = doc_new();
	/* 1.5% per-boot noise, no change: same within 5%, as 1% could not be */
	add_boots(doc, "base", 5, 0, "{\"mode\":\"threads\"}", "mprotect.spin_insn_per_op", 3.0, 0.015,
		  "lower");
	add_boots(doc, "patched", 5, 0, "{\"mode\":\"threads\"}", "mprotect.spin_insn_per_op", 3.0, 0.015,
		  "lower");
	/* a few spin instructions in a hundred thousand ops, 5x more on patched: none to speak of */
	add_boots(doc, "base", 5, 1, "{\"mode\":\"processes\"}", "mprotect.spin_insn_per_op", 2e-5, 0.5,
		  "lower");
	add_boots(doc, "patched", 5, 1, "{\"mode\":\"processes\"}", "mprotect.spin_insn_per_op", 1e-4, 0.5,
		  "lower");
	/* 45x, both sides below the floor: tested first, a regression */
	add_boots(doc, "base", 5, 3, "{\"mode\":\"low\"}", "mprotect.spin_insn_per_op", 0.001, 0.05, "lower");
	add_boots(doc, "patched", 5, 3, "{\"mode\":\"low\"}", "mprotect.spin_insn_per_op", 0.045, 0.05, "lower");
	/* from none to one spin-wait block per op: tested, a regression */
	add_boots(doc, "base", 5, 2, "{\"mode\":\"other\"}", "mprotect.spin_insn_per_op", 2e-5, 0.5, "lower");
	add_boots(doc, "patched", 5, 2, "{\"mode\":\"other\"}", "mprotect.spin_insn_per_op", 1.0, 0.01,
		  "lower");
	c = compare_ab(doc);
	r = row_of(c, "mprotect.spin_insn_per_op", "mode=threads");
	assert_string_equal(jsonget_str(r, "class"), "wait");
	assert_true(row_num(r, "min_change_pct") == 5.0);
	assert_string_equal(verdict(r), "same");
	r = row_of(c, "mprotect.spin_insn_per_op", "mode=processes");
	assert_string_equal(verdict(r), "same");
	assert_non_null(strstr(jsonget_str(r, "reason"), "wait_floor"));
	r = row_of(c, "mprotect.spin_insn_per_op", "mode=low");
	assert_string_equal(verdict(r), "regression");
	assert_string_equal(jsonget_str(r, "p_method"), "welch, absolute");
	assert_float_equal(row_num(r, "min_change_abs"), 0.005, 1e-12);
	r = row_of(c, "mprotect.spin_insn_per_op", "mode=other");
	assert_string_equal(verdict(r), "regression");
	assert_true(json_real_value(json_object_get(json_object_get(c, "rules"), "wait_floor")) == 0.05);
	json_decref(c);
	json_decref(doc);
}

/*
 * The within-boot floor of a work row is robust: boots of 3 windows at
 * 0.1% noise, one window of one boot 8% slower (a rarer mode), stay same,
 * and the floor stays near 0.1%; the sd of the iterations would have made
 * it over 1%. A boot whose windows all spread 2% still raises it.
 */
static void test_within_floor_robust(void **state)
{
	json_t *doc, *c;
	const json_t *r;
	const char *sides[] = { "base", "patched" };
	char boot[32];
	int s, b, i;

	(void)state;
	rng_state = 5;
	doc = doc_new();
	for (s = 0; s < 2; s++)
		for (b = 0; b < 5; b++) {
			snprintf(boot, sizeof(boot), "%s-%d", sides[s], b);
			for (i = 0; i < 3; i++) {
				long long run = add_run(doc, sides[s], 0, 0, "mremap", "{\"workers\":2}", boot, 0);
				double v = 17000 * (1 + 0.001 * rng_gauss());

				if (s == 1 && b == 2 && i == 1)
					v *= 1.08;
				add_metric(doc, run, "mremap.kernel_insn_per_op", v, "lower");
				run = add_run(doc, sides[s], 0, 1, "mremap", "{\"workers\":4}", boot, 0);
				add_metric(doc, run, "mremap.kernel_insn_per_op",
					   17000 * (1 + (s == 1 ? 0.02 : 0.001) * rng_gauss()), "lower");
			}
		}
	c = compare_ab(doc);
	r = row_of(c, "mremap.kernel_insn_per_op", "workers=2");
	assert_true(row_num(r, "noise_floor_pct") < 0.2);
	assert_string_equal(verdict(r), "same");
	r = row_of(c, "mremap.kernel_insn_per_op", "workers=4");
	assert_true(row_num(r, "noise_floor_pct") > 0.5);
	json_decref(c);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sequential_looks),
		cmocka_unit_test(test_multiplicity),
		cmocka_unit_test(test_same_and_detectable),
		cmocka_unit_test(test_zeros_and_ties),
		cmocka_unit_test(test_directions),
		cmocka_unit_test(test_summary_and_side_filters),
		cmocka_unit_test(test_unavailable),
		cmocka_unit_test(test_unavailable_both),
		cmocka_unit_test(test_outliers_failed_and_fewer_boots),
		cmocka_unit_test(test_metric_overrides),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_wait_rows),
		cmocka_unit_test(test_within_floor_robust),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
