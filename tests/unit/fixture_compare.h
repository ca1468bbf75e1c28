#ifndef TLBLAB_FIXTURE_COMPARE_H
#define TLBLAB_FIXTURE_COMPARE_H

/*
 * What test_compare.c and test_compare_modes.c build comparisons from:
 * synthetic runs and metrics from a fixed-seed generator, compared with
 * the default rules, and the helpers that read the rows. Include after
 * testlib.h.
 */

#include <math.h>
#include <stdio.h>

#include "compare.h"
#include "jsonget.h"
#include "util.h"

/* ---- a deterministic generator ---- */

static uint64_t rng_state;

static inline uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline double rng_gauss(void)
{
	double u1 = ((double)(rng_next() >> 11) + 0.5) / 9007199254740992.0;
	double u2 = (double)(rng_next() >> 11) / 9007199254740992.0;

	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/* ---- synthetic sides ---- */

static inline json_t *doc_new(void)
{
	return json_pack("{s:[],s:[],s:[],s:{s:s}}", "runs", "metrics", "profiles", "provenance",
			 "kernel", "6.1.0");
}

static long long next_run = 1;

/* Adds a run; params is JSON text like {"mode":"threads","workers":2}. */
static inline long long add_run(json_t *doc, const char *side, int spec, int cas, const char *wl,
			 const char *params, const char *boot, int warmup)
{
	json_t *p = json_loads(params, 0, NULL);
	long long id = next_run++;

	assert_non_null(p);
	json_array_append_new(json_object_get(doc, "runs"),
		json_pack("{s:I,s:s?,s:i,s:i,s:i,s:b,s:s,s:o,s:s,s:s,s:s}", "id", (json_int_t)id,
			  "side", side, "spec", spec, "case", cas, "iteration", warmup ? 0 : 1,
			  "warmup", warmup, "workload", wl, "params", p, "boot_id", boot,
			  "machine", "m1", "build_id", side ? side : "b"));
	return id;
}

static inline void add_metric(json_t *doc, long long run, const char *name, double v, const char *dir)
{
	json_array_append_new(json_object_get(doc, "metrics"),
		json_pack("{s:I,s:s,s:f,s:s,s:s}", "run", (json_int_t)run, "name", name, "value", v,
			  "unit", "ops/s", "direction", dir));
}

/* the values of one metric in its unit, one boot each (boots named by
 * tag: each metric's own, or shared by the metrics of one tag) */
static inline void add_values_unit(json_t *doc, const char *side, const char *tag, const char *metric, const double *v,
			    int n, const char *dir, const char *unit)
{
	char boot[64];
	int i;

	for (i = 0; i < n; i++) {
		long long run;

		snprintf(boot, sizeof(boot), "%s-%s%d", side, tag, i);
		run = add_run(doc, side, 0, 0, "mprotect", "{}", boot, 0);
		json_array_append_new(json_object_get(doc, "metrics"),
			json_pack("{s:I,s:s,s:f,s:s,s:s}", "run", (json_int_t)run, "name", metric, "value", v[i],
				  "unit", unit, "direction", dir));
	}
}

/* Boots first..first+nboots-1 of one workload, a warm-up (a wild value
 * that must be dropped) and one measured iteration each; the measured
 * values are center * (1 + cv * N(0,1)). */
static inline void add_boots_from(json_t *doc, const char *side, int first, int nboots, int cas, const char *params,
			   const char *metric, double center, double cv, const char *dir)
{
	char boot[64];
	int b;

	for (b = first; b < first + nboots; b++) {
		long long w, r;

		snprintf(boot, sizeof(boot), "%s-%d", side ? side : "x", b);
		w = add_run(doc, side, 0, cas, "mprotect", params, boot, 1);
		add_metric(doc, w, metric, center * 100, dir);
		r = add_run(doc, side, 0, cas, "mprotect", params, boot, 0);
		add_metric(doc, r, metric, center * (1 + cv * rng_gauss()), dir);
	}
}

static inline void add_boots(json_t *doc, const char *side, int nboots, int cas, const char *params,
		      const char *metric, double center, double cv, const char *dir)
{
	add_boots_from(doc, side, 0, nboots, cas, params, metric, center, cv, dir);
}

static inline const json_t *row_of(const json_t *c, const char *metric, const char *params_text)
{
	size_t i;
	json_t *r;

	json_array_foreach(json_object_get(c, "rows"), i, r)
		if (!strcmp(jsonget_str(r, "metric"), metric) &&
		    (!params_text || !strcmp(jsonget_str(r, "params_text"), params_text)))
			return r;
	fail_msg("no row %s (%s)", metric, params_text ? params_text : "any");
	return NULL;
}

static inline const char *verdict(const json_t *row)
{
	return jsonget_str(row, "verdict");
}

/* The comparison of side bs of base with side ps of patched (NULL: the
 * whole document), by the default rules with few resamples (enough for
 * the tests' clear cases, and fast). */
static inline json_t *compare_with(const json_t *base, const char *bs, const json_t *patched, const char *ps)
{
	struct compare_rules rules;
	struct strbuf err = STRBUF_INIT;
	json_t *c;

	compare_rules_default(&rules);
	rules.resamples = 500;
	c = compare_sides(base, bs, patched, ps, &rules, &err);
	if (!c)
		fail_msg("compare_sides: %s", err.buf);
	strbuf_release(&err);
	return c;
}

/* One document's base side against its patched side. */
static inline json_t *compare_ab(json_t *doc)
{
	return compare_with(doc, "base", doc, "patched");
}

/* Two documents, each a whole side. */
static inline json_t *compare_docs(json_t *base, json_t *patched)
{
	return compare_with(base, NULL, patched, NULL);
}

static inline double row_num(const json_t *r, const char *key)
{
	return jsonget_num_or(r, key, 0);
}

#endif
