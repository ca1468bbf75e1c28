/*
 * daemon/compare's classes, roles and per-class verdicts (issue 23): what
 * a maintainer reads when a job ran on an emulated machine with the TCG
 * plugin's instruction counts, and when it did not. Jobs are built here
 * from a fixed-seed generator, with several iterations per boot (so a row
 * has a spread within boots) and rows of every class.
 *
 * (Over 800 lines on purpose: one generator of whole jobs and the verdicts
 * each class must give on them; split, each file would carry its own copy
 * of the generator's job shapes.)
 */
#include "testlib.h"

#include <math.h>

#include "compare.h"
#include "compare_class.h"
#include "jsonget.h"
#include "util.h"
#include "verdict.h"
#include "banned.h"

/* ---- a deterministic generator ---- */

static uint64_t rng_state;

static double rng_gauss(void)
{
	uint64_t z[2];
	int k;

	for (k = 0; k < 2; k++) {
		z[k] = (rng_state += 0x9e3779b97f4a7c15ULL);
		z[k] = (z[k] ^ (z[k] >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z[k] = (z[k] ^ (z[k] >> 27)) * 0x94d049bb133111ebULL;
		z[k] ^= z[k] >> 31;
	}
	return sqrt(-2 * log(((double)(z[0] >> 11) + 0.5) / 9007199254740992.0)) *
	       cos(2 * M_PI * (double)(z[1] >> 11) / 9007199254740992.0);
}

/* ---- jobs ---- */

/* A metric of a case: its level on base, the factor patched has, and its
 * per-boot CV (iterations within a boot vary by half of it). */
struct gen_metric {
	const char *name, *unit, *dir;
	double level, factor, cv;
};

static json_t *job_new(const char *design)
{
	json_t *doc = json_pack("{s:[],s:[],s:[],s:{}}", "runs", "metrics", "profiles", "provenance");

	if (design)
		json_object_set_new(doc, "design", json_loads(design, 0, NULL));
	return doc;
}

/* boots of one case of workload wl on both sides, 3 iterations each */
static void add_case(json_t *doc, int cas, const char *wl, int boots, const struct gen_metric *m, size_t nm)
{
	static long long run = 1;
	int b, side, it;
	size_t k;

	for (b = 0; b < boots; b++)
		for (side = 0; side < 2; side++) {
			char boot[32];
			double level[16];

			snprintf(boot, sizeof(boot), "%s-%d", side ? "p" : "b", b);
			for (k = 0; k < nm && k < ARRAY_SIZE(level); k++)
				level[k] = m[k].level * (side ? m[k].factor : 1) * (1 + m[k].cv * 0.87 * rng_gauss());
			for (it = 0; it < 3; it++) {
				json_array_append_new(json_object_get(doc, "runs"),
					json_pack("{s:I,s:s,s:i,s:i,s:i,s:b,s:s,s:{s:i},s:s}", "id", (json_int_t)run,
						  "side", side ? "patched" : "base", "spec", 0, "case", cas,
						  "iteration", it, "warmup", 0, "workload", wl, "params", "workers", cas + 1,
						  "boot_id", boot));
				for (k = 0; k < nm && k < ARRAY_SIZE(level); k++)
					json_array_append_new(json_object_get(doc, "metrics"),
						json_pack("{s:I,s:s,s:f,s:s,s:s}", "run", (json_int_t)run, "name", m[k].name,
							  "value", level[k] * (1 + m[k].cv * 0.5 * rng_gauss()),
							  "unit", m[k].unit, "direction", m[k].dir));
				run++;
			}
		}
}

/* The plugin's three instruction rows of mprotect at their levels: the
 * kernel's times kfactor on patched, all at cv. */
#define MPROTECT_INSN_ROWS(kfactor, cv)						\
	{ "mprotect.kernel_insn_per_op", "insn/op", "lower", 4000, (kfactor), (cv) },	\
	{ "mprotect.user_insn_per_op", "insn/op", "lower", 800, 1, (cv) },		\
	{ "mprotect.spin_insn_per_op", "insn/op", "lower", 300, 1, (cv) }

/* An emulated mprotect case: instruction rows (work at wcv, the kernel's
 * times kfactor on patched), its score and elapsed time (time at tcv), a
 * counter per kop, and context rows that move a lot. */
static void add_emulated_case(json_t *doc, int cas, int boots, double wcv, double kfactor, double tcv)
{
	const struct gen_metric m[] = {
		MPROTECT_INSN_ROWS(kfactor, wcv),
		{ "mprotect.ops_per_sec", "ops/s", "higher", 20000, 1, tcv },
		{ "mprotect.elapsed_sec", "s", "lower", 3, 1, tcv },
		{ "interrupts.TLB.per_kop", "interrupts/kop", "lower", 850, 1, wcv },
		{ "interrupts.TLB", "interrupts", "lower", 50000, 3, tcv },
		{ "interrupts.TLB.per_sec", "interrupts/s", "lower", 17000, 0.3, tcv },
	};

	add_case(doc, cas, "mprotect", boots, m, ARRAY_SIZE(m));
}

/* A job of one emulated mprotect case (add_emulated_case's arguments),
 * drawn from rng_state. */
static json_t *emulated_job(int boots, double wcv, double kfactor, double tcv)
{
	json_t *doc = job_new(NULL);

	add_emulated_case(doc, 0, boots, wcv, kfactor, tcv);
	return doc;
}

/* A job under design of ncases mprotect cases of boots a side, drawn from
 * rng_state: the first case of metrics first, the others of rest (nm
 * each). */
static json_t *mprotect_job(const char *design, int ncases, int boots, const struct gen_metric *first,
			    const struct gen_metric *rest, size_t nm)
{
	json_t *doc = job_new(design);
	int k;

	for (k = 0; k < ncases; k++)
		add_case(doc, k, "mprotect", boots, k ? rest : first, nm);
	return doc;
}

/* Compares doc's base and patched sides under rules (NULL: the defaults at
 * 500 resamples), and frees doc. */
static json_t *compared(json_t *doc, const struct compare_rules *rules)
{
	struct compare_rules defaults;
	struct strbuf err = STRBUF_INIT;
	json_t *c;

	if (!rules) {
		compare_rules_default(&defaults);
		defaults.resamples = 500;
		rules = &defaults;
	}
	c = compare_sides(doc, "base", doc, "patched", rules, &err);
	if (!c)
		fail_msg("compare_sides: %s", err.buf);
	strbuf_release(&err);
	json_decref(doc);
	return c;
}

/* The comparison of mprotect_job(design, ncases, boots, m, m, nm) drawn
 * from seed, by the default rules. */
static json_t *compared_job(uint64_t seed, const char *design, int ncases, int boots, const struct gen_metric *m,
			    size_t nm)
{
	rng_state = seed;
	return compared(mprotect_job(design, ncases, boots, m, m, nm), NULL);
}

/* The nm metrics of m copied to dst, metric k's patched factor set to
 * factor; returns dst. */
static const struct gen_metric *with_factor(struct gen_metric *dst, const struct gen_metric *m, size_t nm, size_t k,
					    double factor)
{
	memcpy(dst, m, nm * sizeof(*m));
	dst[k].factor = factor;
	return dst;
}

static const json_t *row_of(const json_t *c, const char *metric, int cas)
{
	const json_t *r;
	size_t i;

	json_array_foreach(json_object_get(c, "rows"), i, r)
		if (!strcmp(jsonget_str(r, "metric"), metric) &&
		    jsonget_int_or(r, "case", 0) == cas)
			return r;
	fail_msg("no row %s (case %d)", metric, cas);
	return NULL;
}

static const char *s_of(const json_t *o, const char *k)
{
	const char *s = jsonget_str(o, k);

	return s ? s : "(none)";
}

/* Fails unless the row of metric (case cas) in c says, for each field
 * and value that follow (up to a NULL), that value. */
static void __attribute__((sentinel)) expect_row(const json_t *c, const char *metric, int cas, ...)
{
	const json_t *r = row_of(c, metric, cas);
	const char *field, *want, *got;
	va_list ap;

	va_start(ap, cas);
	while ((field = va_arg(ap, const char *))) {
		want = va_arg(ap, const char *);
		got = s_of(r, field);
		if (strcmp(got, want)) {
			va_end(ap);
			fail_msg("%s (case %d): %s is %s, want %s", metric, cas, field, got, want);
		}
	}
	va_end(ap);
}

static const char *class_verdict(const json_t *c, const char *cls)
{
	return s_of(json_object_get(json_object_get(c, "by_class"), cls), "verdict");
}

/* Fails unless the rows c marks headline are those whose metric is one of
 * names (NULL-ended); returns how many rows that is. */
static size_t headline_rows(const json_t *c, const char *const *names)
{
	const json_t *r;
	size_t i, k, n = 0;

	json_array_foreach(json_object_get(c, "rows"), i, r) {
		const char *m = s_of(r, "metric");
		int want = 0;

		for (k = 0; names[k]; k++)
			want |= !strcmp(m, names[k]);
		if (json_is_true(json_object_get(r, "headline")) != want)
			fail_msg("%s: headline %d, want %d", m, json_is_true(json_object_get(r, "headline")), want);
		n += want;
	}
	return n;
}

/* ---- the class and role of a metric ---- */

static void test_row_class(void **state)
{
	static const struct {
		const char *workload, *metric, *unit, *dir, *cls;
	} cases[] = {
		{ "mprotect", "mprotect.kernel_insn_per_op", "insn/op", "lower", "work" },
		{ "mprotect", "mprotect.user_insn_per_op", "insn/op", "lower", "work" },
		{ "mremap", "mremap.spin_insn_per_op", "insn/op", "lower", "wait" },
		/* a real machine's, from perf (daemon/stages/pmu_rows.h) */
		{ "mprotect", "mprotect.perf_kernel_insn_per_op", "insn/op", "lower", "work" },
		{ "mprotect", "mprotect.perf_user_insn_per_op", "insn/op", "lower", "work" },
		{ "mprotect", "mprotect.perf_dtlb_miss_per_op", "events/op", "lower", "work" },
		{ "mprotect", "mprotect.perf_itlb_miss_per_op", "events/op", "lower", "work" },
		{ "mprotect", "perf_stat.instructions_k", "instructions", "lower", "context" },
		{ "mprotect", "perf_stat.pmu_unscheduled_ns", "ns", "neutral", "context" },
		{ "mprotect", "interrupts.TLB.per_kop", "interrupts/kop", "lower", "work" },
		{ "mprotect", "vmstat.nr_tlb_remote_flush.per_kop", "events/kop", "lower", "work" },
		{ "mprotect", "tlb.shootdowns_per_kop", "shootdowns/kop", "lower", "work" },
		{ "mprotect", "kfunc.flush_tlb_mm_range.calls_per_op", "calls/op", "neutral", "work" },
		{ "mprotect", "mprotect.ops_per_sec", "ops/s", "higher", "time" },
		{ "mprotect", "mprotect.elapsed_sec", "s", "lower", "time" },
		{ "fault-write", "fault-write.total_sec", "s", "lower", "time" },
		{ "fault-write", "fault-write.usec_per_round", "us", "lower", "time" },
		{ "stencil", "stencil.mflops", "MFLOPS", "higher", "time" },
		{ "tcp-rr", "tcp-rr.trans_per_sec", "transactions/s", "higher", "time" },
		{ "mprotect", "kfunc.flush_tlb_mm_range.ns_per_call", "ns", "lower", "time" },
		{ "mprotect", "kfunc.flush_tlb_mm_range.self_pct", "% of CPU", "lower", "time" },
		{ "mprotect", "procstat.busy_pct", "%", "neutral", "time" },
		{ "stencil", "neighbour.mprotect.ops_per_sec", "ops/s", "neutral", "time" },
		/* counts and rates over the window: shown, never tested */
		{ "mprotect", "interrupts.TLB", "interrupts", "lower", "context" },
		{ "mprotect", "interrupts.TLB.per_sec", "interrupts/s", "lower", "context" },
		{ "mprotect", "interrupts.TLB.peak_per_sec", "interrupts/s", "lower", "context" },
		{ "mprotect", "vmstat.nr_tlb_remote_flush", "events", "lower", "context" },
		{ "mprotect", "tlb_flush.remote_shootdown.per_sec", "events/s", "lower", "context" },
		{ "mprotect", "kfunc.flush_tlb_mm_range.calls", "calls", "neutral", "context" },
		{ "fault-write", "fault-write.rounds", "rounds", "neutral", "context" },
		{ "exec", "exec.bogo_ops", "bogo-ops", "neutral", "context" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct compare_class *c = compare_class_of(cases[i].workload, cases[i].metric,
								 cases[i].unit, cases[i].dir);
		const char *got = c ? c->name : "(none)";

		if (strcmp(got, cases[i].cls))
			fail_msg("%s (%s): class %s, want %s", cases[i].metric, cases[i].workload, got, cases[i].cls);
	}
	/* each workload's one score, from the agent's table */
	assert_true(compare_is_score("mprotect", "mprotect.ops_per_sec"));
	assert_true(compare_is_score("mremap", "mremap.moves_per_sec"));
	assert_true(compare_is_score("fault-write", "fault-write.total_sec"));
	assert_true(compare_is_score("tcp-rr", "tcp-rr.trans_per_sec"));
	assert_true(compare_is_score("stencil", "stencil.mflops"));
	assert_true(compare_is_score("exec", "exec.score"));
	assert_false(compare_is_score("mprotect", "mprotect.elapsed_sec"));
	assert_false(compare_is_score("fault-write", "fault-write.writes_per_sec"));
}

/* With instruction rows the headline is the instruction rows; the score
 * has a verdict of its own; other rows are secondary or context. */
static void test_headline_set(void **state)
{
	static const char *const insn[] = {
		"mprotect.kernel_insn_per_op", "mprotect.user_insn_per_op", "mprotect.spin_insn_per_op", NULL,
	};
	json_t *c;

	(void)state;
	rng_state = 1;
	c = compared(emulated_job(5, 0.003, 1, 0.05), NULL);
	assert_int_equal(headline_rows(c, insn), 3);
	expect_row(c, "mprotect.ops_per_sec", 0, "role", "score", "family", "time score", NULL);
	expect_row(c, "mprotect.elapsed_sec", 0, "role", "secondary", NULL);
	expect_row(c, "interrupts.TLB.per_kop", 0, "role", "secondary", NULL);
	expect_row(c, "mprotect.kernel_insn_per_op", 0, "family", "headline", "p_method", "welch", NULL);
	json_decref(c);

	/* without them (a real machine), the score alone is the headline */
	{
		const struct gen_metric m[] = {
			{ "mprotect.ops_per_sec", "ops/s", "higher", 20000, 1, 0.01 },
			{ "mprotect.elapsed_sec", "s", "lower", 3, 1, 0.01 },
			{ "fault-write.rounds", "rounds", "neutral", 4096, 1, 0 },
		};

		c = compared(mprotect_job(NULL, 1, 5, m, m, ARRAY_SIZE(m)), NULL);
		assert_true(json_is_true(json_object_get(row_of(c, "mprotect.ops_per_sec", 0), "headline")));
		assert_false(json_is_true(json_object_get(row_of(c, "mprotect.elapsed_sec", 0), "headline")));
		expect_row(c, "mprotect.ops_per_sec", 0, "p_method", "exact", NULL);
		json_decref(c);
	}
}

/* A real machine's case: perf's instruction rows and TLB misses per op, its
 * score and elapsed time, at a real machine's time noise (2%) */
static void add_real_case(json_t *doc, int cas, int boots, double kfactor, int perf_on_patched)
{
	const struct gen_metric m[] = {
		{ "mprotect.perf_kernel_insn_per_op", "insn/op", "lower", 4100, kfactor, 0.003 },
		{ "mprotect.perf_user_insn_per_op", "insn/op", "lower", 900, 1, 0.003 },
		{ "mprotect.perf_dtlb_miss_per_op", "events/op", "lower", 2.5, 1, 0.01 },
		{ "mprotect.perf_itlb_miss_per_op", "events/op", "lower", 0.4, 1, 0.01 },
		{ "mprotect.ops_per_sec", "ops/s", "higher", 300000, 1, 0.02 },
		{ "mprotect.elapsed_sec", "s", "lower", 3, 1, 0.02 },
	};
	size_t i, n = json_array_size(json_object_get(doc, "metrics"));

	add_case(doc, cas, "mprotect", boots, m, ARRAY_SIZE(m));
	if (perf_on_patched)
		return;
	/* the patched kernel's boots lost the PMU: no perf row there */
	for (i = json_array_size(json_object_get(doc, "metrics")); i-- > n;) {
		const json_t *x = json_array_get(json_object_get(doc, "metrics"), i);
		const char *name = s_of(x, "name");
		json_int_t run = jsonget_int_or(x, "run", 0);
		const json_t *r;
		size_t k;

		json_array_foreach(json_object_get(doc, "runs"), k, r)
			if (jsonget_int_or(r, "id", 0) == run &&
			    !strcmp(s_of(r, "side"), "patched") && strstr(name, ".perf_"))
				json_array_remove(json_object_get(doc, "metrics"), i);
	}
}

/*
 * On a real machine perf's instruction rows are the headline, as the
 * plugin's are on an emulated one: a 2% rise in the kernel's instructions
 * per op is the job's regression, whatever the noisy score says; the score
 * has a verdict of its own; the TLB misses are secondary work rows. Where a
 * case has both, the plugin's rows lead. A side without perf's rows is a
 * missing headline row: never same.
 */
static void test_headline_perf(void **state)
{
	static const char *const insn[] = {
		"mprotect.perf_kernel_insn_per_op", "mprotect.perf_user_insn_per_op", NULL,
	};
	json_t *doc, *c;
	const json_t *r;

	(void)state;
	rng_state = 3;
	doc = job_new(NULL);
	add_real_case(doc, 0, 5, 1.02, 1);
	c = compared(doc, NULL);
	assert_int_equal(headline_rows(c, insn), 2);
	expect_row(c, "mprotect.perf_kernel_insn_per_op", 0, "verdict", "regression", "class", "work", NULL);
	expect_row(c, "mprotect.ops_per_sec", 0, "role", "score", NULL);
	expect_row(c, "mprotect.perf_dtlb_miss_per_op", 0, "role", "secondary", "class", "work", NULL);
	assert_string_equal(s_of(c, "verdict"), "regression");
	json_decref(c);

	/* no change: same, on the instruction rows */
	rng_state = 4;
	doc = job_new(NULL);
	add_real_case(doc, 0, 9, 1, 1);
	c = compared(doc, NULL);
	expect_row(c, "mprotect.perf_kernel_insn_per_op", 0, "verdict", "same", NULL);
	assert_true(json_is_true(json_object_get(row_of(c, "mprotect.perf_user_insn_per_op", 0), "headline")));
	json_decref(c);

	/* the patched side has no perf rows: a headline row is missing */
	rng_state = 4;
	doc = job_new(NULL);
	add_real_case(doc, 0, 9, 1, 0);
	c = compared(doc, NULL);
	r = row_of(c, "mprotect.perf_kernel_insn_per_op", 0);
	assert_string_equal(s_of(r, "verdict"), "unavailable");
	assert_true(json_is_true(json_object_get(r, "headline")));
	assert_string_not_equal(s_of(c, "verdict"), "same");
	json_decref(c);

	/* an emulated machine with both: the plugin's rows lead */
	rng_state = 5;
	doc = job_new(NULL);
	add_emulated_case(doc, 0, 5, 0.003, 1, 0.05);
	add_real_case(doc, 0, 5, 1.10, 1);
	c = compared(doc, NULL);
	assert_true(json_is_true(json_object_get(row_of(c, "mprotect.kernel_insn_per_op", 0), "headline")));
	assert_false(json_is_true(json_object_get(row_of(c, "mprotect.perf_kernel_insn_per_op", 0), "headline")));
	expect_row(c, "mprotect.perf_kernel_insn_per_op", 0, "role", "secondary", NULL);
	json_decref(c);
}

/* A neutral count that moves (fault-write's rounds: 4096 against 2048)
 * is context: it makes no job changed. */
static void test_context_untested(void **state)
{
	const struct gen_metric m[] = {
		{ "fault-write.total_sec", "s", "lower", 2, 1, 0.002 },
		{ "fault-write.rounds", "rounds", "neutral", 4096, 0.5, 0 },
		{ "interrupts.TLB.per_sec", "interrupts/s", "lower", 5000, 0.1, 0.002 },
	};
	json_t *c;
	const json_t *r;

	(void)state;
	rng_state = 2;
	{
		json_t *doc = job_new(NULL);

		add_case(doc, 0, "fault-write", 8, m, ARRAY_SIZE(m));
		c = compared(doc, NULL);
	}
	r = row_of(c, "fault-write.rounds", 0);
	assert_string_equal(s_of(r, "class"), "context");
	assert_string_equal(s_of(r, "verdict"), "context");
	assert_true(json_is_null(json_object_get(r, "p")));
	assert_null(json_object_get(r, "p_adj"));
	assert_true(fabs(jsonget_num_or(r, "change_pct", 0) + 50) < 1e-9);
	/* a tenfold drop in shootdowns per second is no improvement */
	r = row_of(c, "interrupts.TLB.per_sec", 0);
	assert_string_equal(s_of(r, "verdict"), "context");
	assert_string_equal(s_of(c, "verdict"), "same");
	assert_int_equal(jsonget_int_or(json_object_get(json_object_get(c, "summary"), "counters"), "improvements", 0),
			 0);
	json_decref(c);
}

/* Work rows at 0.3% noise: a 2% rise in kernel instructions per op is
 * called at 5+5 boots, where no rank test can call anything (3 headline
 * rows at alpha 0.01 need p < 0.0033, and 5 boots give no p below
 * 0.0079); the time class, at 5% noise, is inconclusive in words. */
static void test_work_rule_calls_two_percent(void **state)
{
	json_t *c;
	const json_t *r, *bc;

	(void)state;
	rng_state = 3;
	c = compared(emulated_job(5, 0.003, 1.02, 0.05), NULL);
	r = row_of(c, "mprotect.kernel_insn_per_op", 0);
	assert_string_equal(s_of(r, "verdict"), "regression");
	assert_true(jsonget_num_or(r, "p_adj", 0) < 0.01);
	assert_true(json_number_value(json_array_get(json_object_get(r, "ci"), 0)) > 0);
	assert_string_equal(s_of(c, "verdict"), "regression");
	assert_string_equal(class_verdict(c, "work"), "regression");
	assert_string_equal(class_verdict(c, "wait"), "same");
	bc = json_object_get(json_object_get(c, "by_class"), "work");
	assert_true(json_is_true(json_object_get(bc, "makes_job_verdict")));
	assert_non_null(strstr(s_of(bc, "text"), "mprotect kernel instructions per op (regression)"));
	bc = json_object_get(json_object_get(c, "by_class"), "time");
	assert_false(json_is_true(json_object_get(bc, "makes_job_verdict")));
	assert_non_null(strstr(s_of(json_object_get(c, "summary"), "text"), "By class: work: +2."));
	json_decref(c);

	/* the same change in the rank rule's hands (a suite that turns the
	 * work class into time by an override cannot: here, the score row
	 * of a real machine at the same noise) is not called at 5 boots */
	{
		const struct gen_metric m[] = {
			{ "mprotect.ops_per_sec", "ops/s", "higher", 20000, 0.98, 0.003 },
		};
		c = compared(mprotect_job(NULL, 3, 5, m, m, ARRAY_SIZE(m)), NULL);
		assert_string_equal(s_of(c, "verdict"), "inconclusive");
		json_decref(c);
	}
}

/*
 * Few boots (issue 38): at 3 boots a side all of a side can sit in a mode
 * no test can see (one boot in 5 at +5% puts all three there 0.8% of the
 * time), so a work row's least change is min_change_few (20%) there. A
 * clear +5% at 3+3 is not called; the demo's +28% is; at 5 boots a side
 * the least change is the class's 1% again.
 */
static void test_few_boots_least_change(void **state)
{
	json_t *c;
	const json_t *r;

	(void)state;
	rng_state = 41;
	c = compared(emulated_job(3, 0.002, 1.05, 0.05), NULL);
	r = row_of(c, "mprotect.kernel_insn_per_op", 0);
	assert_true(jsonget_num_or(r, "p", 0) < 0.001);
	assert_float_equal(jsonget_num_or(r, "min_change_pct", 0), 20, 1e-9);
	assert_string_equal(s_of(r, "verdict"), "inconclusive");
	assert_string_not_equal(s_of(c, "verdict"), "regression");
	json_decref(c);

	c = compared(emulated_job(3, 0.002, 1.28, 0.05), NULL);
	expect_row(c, "mprotect.kernel_insn_per_op", 0, "verdict", "regression", NULL);
	assert_string_equal(s_of(c, "verdict"), "regression");
	json_decref(c);

	c = compared(emulated_job(5, 0.002, 1.05, 0.05), NULL);
	r = row_of(c, "mprotect.kernel_insn_per_op", 0);
	assert_float_equal(jsonget_num_or(r, "min_change_pct", 0), 1, 1e-9);
	assert_string_equal(s_of(r, "verdict"), "regression");
	json_decref(c);
}

/* A/A on deterministic rows: same, within the 1% least change; a 0.5%
 * change (below it) at 0.05% noise is not called. */
static void test_deterministic_same(void **state)
{
	json_t *doc, *c;
	const json_t *r;
	int seed;

	(void)state;
	for (seed = 10; seed < 15; seed++) {
		rng_state = (uint64_t)seed;
		doc = job_new("{\"boots\":5,\"max_boots\":9,\"look\":1}");
		add_emulated_case(doc, 0, 5, 0.002, 1, 0.05);
		add_emulated_case(doc, 1, 5, 0.002, 1, 0.05);
		c = compared(doc, NULL);
		assert_string_equal(s_of(c, "verdict"), "same");
		assert_string_equal(class_verdict(c, "work"), "same");
		r = row_of(c, "mprotect.kernel_insn_per_op", 1);
		assert_true(jsonget_num_or(r, "min_change_pct", 0) == 1);
		assert_true(json_number_value(json_array_get(json_object_get(r, "equiv_ci"), 0)) >= -1);
		assert_true(json_number_value(json_array_get(json_object_get(r, "equiv_ci"), 1)) <= 1);
		/* decided at the first look: no more boots */
		assert_int_equal(verdict_wants_more_boots(c), 0);
		json_decref(c);
	}
	rng_state = 20;
	c = compared(emulated_job(5, 0.0005, 1.005, 0.05), NULL);
	r = row_of(c, "mprotect.kernel_insn_per_op", 0);
	assert_true(jsonget_num_or(r, "p", 0) < 0.01);
	assert_string_equal(s_of(r, "verdict"), "same");
	json_decref(c);
}

/* same means no change the row would call: a 5% drop at 1% noise fits
 * the 10% margin but not the 2% least change, so it is inconclusive, "no
 * change beyond 10%". */
static void test_same_within_min_change(void **state)
{
	const struct gen_metric m[] = {
		{ "mprotect.ops_per_sec", "ops/s", "higher", 20000, 0.95, 0.01 },
	};
	json_t *c;
	const json_t *r;

	(void)state;
	c = compared_job(4, NULL, 2, 5, m, ARRAY_SIZE(m));
	r = row_of(c, "mprotect.ops_per_sec", 0);
	assert_string_equal(s_of(r, "verdict"), "inconclusive");
	assert_true(jsonget_num_or(r, "no_change_beyond_pct", 0) == 10);
	assert_non_null(strstr(s_of(r, "reason"), "no change beyond 10.0%"));
	assert_string_equal(s_of(c, "verdict"), "inconclusive");
	json_decref(c);

	/* a suite may set its own least change for a class through the
	 * existing per-metric rules: 6% on the score makes this interval same */
	{
		struct compare_rules rules;
		struct compare_override ov = { "mprotect.ops_per_sec", NAN, 0.06, NAN };
		const json_t *eq;

		compare_rules_default(&rules);
		rules.resamples = 500;
		rules.overrides = &ov;
		rules.noverrides = 1;
		rng_state = 4;
		c = compared(mprotect_job(NULL, 2, 5, m, m, ARRAY_SIZE(m)), &rules);
		r = row_of(c, "mprotect.ops_per_sec", 0);
		eq = json_object_get(r, "equiv_ci");
		if (json_number_value(json_array_get(eq, 0)) >= -6 && json_number_value(json_array_get(eq, 1)) <= 6)
			assert_string_equal(s_of(r, "verdict"), "same");
		else
			assert_string_equal(s_of(r, "verdict"), "inconclusive");
		assert_true(jsonget_num_or(r, "min_change_pct", 0) == 6);
		json_decref(c);
	}
}

/* A counter whose base median is near 0 has no detectable % change to
 * state (88019% was printed). */
static void test_mde_near_zero(void **state)
{
	const struct gen_metric m[] = {
		{ "mprotect.ops_per_sec", "ops/s", "higher", 20000, 1, 0.01 },
		{ "kfunc.x.ns_per_call", "ns", "lower", 0.01, 1, 3 },
	};
	json_t *c;
	const json_t *r;

	(void)state;
	c = compared_job(6, NULL, 1, 6, m, ARRAY_SIZE(m));
	r = row_of(c, "kfunc.x.ns_per_call", 0);
	assert_true(json_is_null(json_object_get(r, "mde_pct")));
	assert_non_null(strstr(s_of(r, "mde_note"), "near 0"));
	json_decref(c);
}

/* drops one side's runs of a case, and their metrics: a case that failed
 * on every boot of that side */
static void drop_case(json_t *doc, const char *side, int cas)
{
	json_t *runs = json_object_get(doc, "runs"), *metrics = json_object_get(doc, "metrics");
	json_t *gone = json_object();
	char id[32];
	size_t i;

	for (i = json_array_size(runs); i-- > 0;) {
		const json_t *r = json_array_get(runs, i);

		if (strcmp(s_of(r, "side"), side) || jsonget_int_or(r, "case", 0) != cas)
			continue;
		snprintf(id, sizeof(id), "%lld", jsonget_int_or(r, "id", 0));
		json_object_set_new(gone, id, json_true());
		json_array_remove(runs, i);
	}
	for (i = json_array_size(metrics); i-- > 0;) {
		snprintf(id, sizeof(id), "%lld",
			 jsonget_int_or(json_array_get(metrics, i), "run", 0));
		if (json_object_get(gone, id))
			json_array_remove(metrics, i);
	}
	json_decref(gone);
}

/* A job is never same while a tested row outside the headline was called a
 * change (0 -> 0.37 shootdowns per kop beside unchanged instructions once
 * read same), nor while a headline row is missing. A work row that
 * regressed (the kernel's shootdowns per op) makes it a regression; a
 * headline row missing leaves it inconclusive; the summary says why. */
static void test_same_needs_everything(void **state)
{
	const struct gen_metric m[] = {
		MPROTECT_INSN_ROWS(1, 0.002),
		{ "mprotect.ops_per_sec", "ops/s", "higher", 20000, 1, 0.05 },
		{ "interrupts.TLB.per_kop", "interrupts/kop", "lower", 850, 1.5, 0.002 },
	};
	struct gen_metric v[ARRAY_SIZE(m)];	/* m with one factor changed */
	json_t *doc, *c;
	const json_t *sum;

	(void)state;
	c = compared_job(30, NULL, 1, 5, m, ARRAY_SIZE(m));
	expect_row(c, "mprotect.kernel_insn_per_op", 0, "verdict", "same", NULL);
	expect_row(c, "interrupts.TLB.per_kop", 0, "verdict", "regression", NULL);
	assert_string_equal(class_verdict(c, "work"), "same");
	sum = json_object_get(c, "summary");
	assert_string_equal(s_of(c, "verdict"), "regression");
	assert_int_equal(jsonget_int_or(json_object_get(sum, "counters"), "work_regressions", 0), 1);
	assert_non_null(strstr(s_of(sum, "text"), "1 other work row regressed: a regression (work: "
				      "interrupts.TLB.per_kop +"));
	assert_null(json_object_get(sum, "not_same"));
	json_decref(c);

	/* the same beside a headline that improved: both ways, changed */
	c = compared_job(30, NULL, 1, 5, with_factor(v, m, ARRAY_SIZE(m), 0, 0.9), ARRAY_SIZE(m));
	expect_row(c, "mprotect.kernel_insn_per_op", 0, "verdict", "improvement", NULL);
	assert_string_equal(s_of(c, "verdict"), "changed");
	assert_non_null(strstr(s_of(json_object_get(c, "summary"), "text"),
			       "1 other work row regressed while the headline improved: changed"));
	json_decref(c);

	/* the counter unchanged: same, and nothing to explain */
	c = compared_job(30, NULL, 2, 5, with_factor(v, m, ARRAY_SIZE(m), 4, 1), ARRAY_SIZE(m));
	assert_string_equal(s_of(c, "verdict"), "same");
	assert_null(json_object_get(json_object_get(c, "summary"), "not_same"));
	json_decref(c);

	/* case 1 failed on every patched boot: its headline rows are
	 * missing, and the job cannot promise same */
	rng_state = 30;
	doc = mprotect_job(NULL, 2, 5, v, v, ARRAY_SIZE(v));
	drop_case(doc, "patched", 1);
	c = compared(doc, NULL);
	sum = json_object_get(c, "summary");
	assert_true(jsonget_int_or(sum, "unavailable", 0) > 0);
	assert_string_equal(s_of(c, "verdict"), "inconclusive");
	assert_non_null(strstr(s_of(sum, "not_same"), "headline rows unavailable"));
	json_decref(c);
}

/*
 * A first look of two whose headline rows decide is the job's last: the
 * time rows, which kept their alpha for the second look (5 boots a side
 * cannot reach the first look's share), spend it there. Issue 38: all 8
 * time rows moved 15-21% (p 0.0079 each) and the job read same.
 */
static void test_time_rows_at_last_look(void **state)
{
	const struct gen_metric m[] = {
		MPROTECT_INSN_ROWS(1, 0.002),
		{ "mprotect.ops_per_sec", "ops/s", "higher", 20000, 0.8, 0.03 },
		{ "mprotect.elapsed_sec", "s", "lower", 3, 1.2, 0.03 },
		{ "mprotect.host_ns_per_op", "ns/op", "lower", 40000, 1.2, 0.03 },
		{ "mprotect.host_cpu_ns_per_op", "ns/op", "lower", 41000, 1.2, 0.03 },
		{ "kfunc.flush_tlb_mm_range.ns_per_call", "ns", "lower", 900, 1.2, 0.03 },
		{ "kfunc.flush_tlb_func.ns_per_call", "ns", "lower", 500, 1.2, 0.03 },
		{ "kfunc.flush_tlb_mm_range.self_pct", "%", "lower", 12, 1.2, 0.03 },
		{ "kfunc.flush_tlb_func.self_pct", "%", "lower", 7, 1.2, 0.03 },
	};
	/* the job's design at its first look, and at its second */
	static const char look1[] = "{\"boots\": 5, \"max_boots\": 9, \"look\": 1}";
	static const char look2[] = "{\"boots\": 5, \"max_boots\": 9, \"look\": 2}";
	json_t *c;
	const json_t *design;

	(void)state;
	c = compared_job(38, look1, 1, 5, m, ARRAY_SIZE(m));
	design = json_object_get(c, "design");
	expect_row(c, "mprotect.kernel_insn_per_op", 0, "verdict", "same", NULL);
	expect_row(c, "mprotect.ops_per_sec", 0, "verdict", "regression", NULL);
	expect_row(c, "mprotect.host_ns_per_op", 0, "verdict", "regression", NULL);
	expect_row(c, "kfunc.flush_tlb_func.self_pct", 0, "verdict", "regression", NULL);
	assert_true(json_real_value(json_object_get(row_of(c, "mprotect.host_ns_per_op", 0), "alpha")) == 0.01);
	assert_string_equal(class_verdict(c, "time"), "regression");
	assert_string_equal(s_of(c, "verdict"), "inconclusive");
	assert_true(json_is_true(json_object_get(design, "last_look")));
	json_decref(c);

	/* 4 cases whose scores alone moved: Holm over 4 scores cannot call a
	 * p of 0.0079, but each moved past its least change at its own
	 * alpha, and the job is not same */
	{
		const struct gen_metric s4[] = { m[0], m[1], m[2], m[3] };
		const json_t *sc;

		c = compared_job(39, look1, 4, 5, s4, ARRAY_SIZE(s4));
		sc = row_of(c, "mprotect.ops_per_sec", 0);
		assert_string_equal(s_of(sc, "verdict"), "inconclusive");
		assert_true(json_is_true(json_object_get(sc, "moved_alone")));
		expect_row(c, "mprotect.kernel_insn_per_op", 2, "verdict", "same", NULL);
		assert_string_equal(s_of(c, "verdict"), "inconclusive");
		assert_non_null(strstr(s_of(json_object_get(c, "summary"), "not_same"),
				       "4 scores moved past the least change at their own alpha"));
		/* the headline rows decided, but the job takes its second
		 * look: 9 boots a side let Holm test the scores */
		assert_true(json_is_true(json_object_get(json_object_get(c, "design"), "scores_moved")));
		assert_false(json_is_true(json_object_get(json_object_get(c, "design"), "last_look")));
		assert_int_equal(verdict_wants_more_boots(c), 1);
		json_decref(c);

		/* there Holm calls them, and the job is still not same */
		c = compared_job(39, look2, 4, 9, s4, ARRAY_SIZE(s4));
		sc = row_of(c, "mprotect.ops_per_sec", 0);
		assert_string_equal(s_of(sc, "verdict"), "regression");
		assert_null(json_object_get(sc, "moved_alone"));
		assert_string_equal(s_of(c, "verdict"), "inconclusive");
		json_decref(c);
	}

	/* at 9 boots a side, one score of 4 whose raw p (0.0078) is below
	 * alpha but whose Holm p (0.031) is not: Holm could have called it,
	 * so Holm's test is the score's, and the job is same (the raw p held
	 * back 4% of A/A jobs at the lab's noise, b0008) */
	{
		struct gen_metric s4[] = { m[0], m[1], m[2], m[3] }, s4x[4];
		const json_t *sc;

		s4[3].factor = 1;
		memcpy(s4x, s4, sizeof(s4));
		s4x[3].factor = 0.96;
		rng_state = 100;
		c = compared(mprotect_job(look2, 4, 9, s4x, s4, 4), NULL);
		sc = row_of(c, "mprotect.ops_per_sec", 0);
		assert_true(json_real_value(json_object_get(sc, "p")) < 0.01);
		assert_true(json_real_value(json_object_get(sc, "p_adj")) > 0.01);
		assert_string_equal(s_of(sc, "verdict"), "inconclusive");
		assert_null(json_object_get(sc, "moved_alone"));
		assert_string_equal(s_of(c, "verdict"), "same");
		json_decref(c);
	}

	/* the same time rows unmoved: the job is same */
	{
		struct gen_metric m2[ARRAY_SIZE(m)];
		size_t k;

		memcpy(m2, m, sizeof(m));
		for (k = 0; k < ARRAY_SIZE(m2); k++)
			m2[k].factor = 1;
		c = compared_job(38, look1, 1, 5, m2, ARRAY_SIZE(m2));
		assert_string_equal(s_of(c, "verdict"), "same");
		json_decref(c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_row_class),
		cmocka_unit_test(test_headline_set),
		cmocka_unit_test(test_headline_perf),
		cmocka_unit_test(test_context_untested),
		cmocka_unit_test(test_work_rule_calls_two_percent),
		cmocka_unit_test(test_few_boots_least_change),
		cmocka_unit_test(test_deterministic_same),
		cmocka_unit_test(test_same_within_min_change),
		cmocka_unit_test(test_mde_near_zero),
		cmocka_unit_test(test_same_needs_everything),
		cmocka_unit_test(test_time_rows_at_last_look),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
