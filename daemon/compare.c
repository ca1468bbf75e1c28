/*
 * A comparison is built in three passes over plain JSON. First each side
 * is indexed: its measured runs (warm-ups and failed runs set aside, the
 * latter reported), its boots in the order they ran, and its metric values
 * grouped by row key (spec, workload, canonical parameters, metric) into
 * one list of iteration values per boot. Then every row key seen on either
 * side becomes a row: the per-boot medians are the samples, and the
 * verdict comes from stats (Mann-Whitney, bootstrap CI, MAD outliers).
 * Last, the views that read rows (summary, sweeps, TLB block) are derived
 * from the rows themselves, so a number never differs between two places.
 *
 * jansson objects serve as the hash maps (they keep insertion order, which
 * keeps boots and rows in the order they ran); the only C-side structure is
 * the array of rows, for sorting.
 */
#include "compare.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "verdict.h"
#include "util.h"
#include "banned.h"

#define PROFILE_TOP 20
#define KEY_SEP "\x1f"

static const char *const shootdown_counters[] = {
	"interrupts.TLB", "vmstat.nr_tlb_remote_flush_received", "tlb_flush.remote_shootdown",
};

void compare_rules_default(struct compare_rules *r)
{
	r->alpha = 0.01;
	r->min_change_headline = 0.02;
	r->min_change_counter = 0.05;
	r->same_band = 0.10;	/* b0008: 80% of A/A jobs same at 5% per-boot noise */
	r->equiv_alpha = 0.05;
	r->power = 0.8;
	r->resamples = 2000;
	r->seed = 0x746c626c6162ULL;	/* "tlblab" */
	r->ci_level = 0.95;
	r->outlier_z = 3.5;
	r->overrides = NULL;
	r->noverrides = 0;
}

static json_t *jreal(double v);

json_t *compare_rules_json(const struct compare_rules *r)
{
	json_t *o = json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:i,s:f,s:f,s:s,s:s,s:s,s:s}", "alpha", r->alpha,
			      "min_change_headline", r->min_change_headline, "min_change_counter",
			      r->min_change_counter, "same_band", r->same_band,
			      "equiv_alpha", r->equiv_alpha, "power", r->power, "resamples", r->resamples,
			      "ci_level", r->ci_level, "outlier_z", r->outlier_z,
			      "test", "Mann-Whitney U, two-sided, on per-boot medians (exact; with ties, "
			      "exact permutation)",
			      "ci", "bootstrap percentile interval of median(patched)/median(base), as % "
			      "change (the difference of medians when a base resample's median is 0)",
			      "multiplicity", "Holm over headline rows (the job's verdict), "
			      "Benjamini-Hochberg over counter rows",
			      "same", "equivalence: the 1 - 2 equiv_alpha Hodges-Lehmann/Moses interval of the "
			      "shift of log values within +-same_band");
	json_t *m;
	size_t i;

	if (!o)
		abort();
	if (!r->noverrides)
		return o;
	m = json_object();
	for (i = 0; i < r->noverrides; i++) {
		const struct compare_override *ov = &r->overrides[i];

		if (json_object_get(m, ov->metric))
			continue;	/* the first one wins */
		json_object_set_new(m, ov->metric, json_pack("{s:o,s:o,s:o}", "alpha", jreal(ov->alpha),
							     "min_change", jreal(ov->min_change),
							     "same_band", jreal(ov->same_band)));
	}
	json_object_set_new(o, "metrics", m);
	return o;
}

/* ---- small JSON helpers ---- */

static json_t *jreal(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static const char *getstr(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static int getint(const json_t *o, const char *k, long long *ret)
{
	const json_t *v = json_object_get(o, k);

	if (!json_is_integer(v))
		return -1;
	*ret = (long long)json_integer_value(v);
	return 0;
}

static void add_unique_string(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;

	if (!s || !*s)
		return;
	json_array_foreach(arr, i, v)
		if (!strcmp(json_string_value(v), s))
			return;
	json_array_append_new(arr, json_string(s));
}

/* "<name>.cpuN": per-CPU, left out of rows */
static int is_per_cpu(const char *name)
{
	const char *dot = strrchr(name, '.');

	if (!dot || strncmp(dot, ".cpu", 4) || !dot[4])
		return 0;
	for (dot += 4; *dot; dot++)
		if (*dot < '0' || *dot > '9')
			return 0;
	return 1;
}

static int is_headline(const char *workload, const char *metric)
{
	size_t n = strlen(workload);

	return n && !strncmp(metric, workload, n) && metric[n] == '.';
}

/* Parameters as sorted compact JSON: the same case in two jobs gets the
 * same key whatever order its parameters were written in. */
static char *params_canon(const json_t *params)
{
	json_t *empty = NULL;
	char *s;

	if (!json_is_object(params))
		params = empty = json_object();
	s = json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(empty);
	if (!s)
		abort();
	return s;
}

/* "mode=threads workers=2", keys sorted */
static void params_text(struct strbuf *sb, const json_t *params)
{
	const char **keys;
	const char *k;
	size_t n = json_object_size(params), i = 0, j;
	json_t *v;

	if (!n)
		return;
	keys = calloc(n, sizeof(*keys));
	if (!keys)
		abort();
	json_object_foreach((json_t *)params, k, v)
		keys[i++] = k;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
			const char *t = keys[j];

			keys[j] = keys[j - 1];
			keys[j - 1] = t;
		}
	for (i = 0; i < n; i++) {
		v = json_object_get(params, keys[i]);
		strbuf_addf(sb, "%s%s=", i ? " " : "", keys[i]);
		if (json_is_string(v)) {
			strbuf_addstr(sb, json_string_value(v));
		} else {
			char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(12));

			strbuf_addstr(sb, t ? t : "?");
			free(t);
		}
	}
	free(keys);
}

static void row_key(struct strbuf *sb, long long spec, const char *workload, const char *pcanon,
		    const char *metric)
{
	strbuf_reset(sb);
	strbuf_addf(sb, "%lld" KEY_SEP "%s" KEY_SEP "%s" KEY_SEP "%s", spec, workload, pcanon, metric);
}

/* ---- one side ---- */

struct side {
	const char *name;	/* "base" or "patched" */
	const json_t *doc;
	const char *filter;	/* runs[].side to keep, or NULL for all */
	json_t *runs;		/* run id -> run */
	json_t *boots;		/* boot key -> index, in the order they ran */
	json_t *groups;		/* row key -> {spec, case, ..., "boots": [[values]...]} */
	json_t *machines, *builds;
	json_t *per_cpu;	/* per-CPU metric names seen */
	json_t *failed;		/* borrowed: the output's "failed" */
	size_t measured, ignored;
};

static const char *run_failure(const json_t *run)
{
	const json_t *e = json_object_get(run, "error");
	const char *state = getstr(run, "state");

	if (json_is_string(e))
		return json_string_value(e);
	if (json_is_object(e))
		return getstr(e, "message") ? getstr(e, "message") : "failed";
	if (e && !json_is_null(e) && !json_is_false(e))
		return "failed";
	if (state && (!strcmp(state, "failed") || !strcmp(state, "cancelled")))
		return state;
	return NULL;
}

static void boot_key(struct strbuf *sb, const json_t *run)
{
	long long v;

	strbuf_reset(sb);
	if (getstr(run, "boot_id") && *getstr(run, "boot_id"))
		strbuf_addf(sb, "boot:%s", getstr(run, "boot_id"));
	else if (getint(run, "stage", &v) == 0)	/* one run stage follows one boot */
		strbuf_addf(sb, "stage:%lld", v);
	else
		strbuf_addstr(sb, "-");
}

static int side_load_runs(struct side *s, struct strbuf *err)
{
	const json_t *runs = json_object_get(s->doc, "runs");
	struct strbuf key = STRBUF_INIT;
	size_t i;
	json_t *run;

	if (!json_is_array(runs))
		return strbuf_seterr(err, "%s: \"runs\" is missing or not an array", s->name);
	json_array_foreach(runs, i, run) {
		long long id = 0, spec = 0, cas = 0;
		const char *side = getstr(run, "side"), *why;
		char idbuf[32];

		if (getint(run, "id", &id) < 0) {
			s->ignored++;
			continue;
		}
		if (s->filter && (!side || strcmp(side, s->filter)))
			continue;
		if (json_is_true(json_object_get(run, "warmup")))
			continue;
		if ((why = run_failure(run))) {
			json_t *f = json_pack("{s:s,s:I,s:s}", "side", s->name, "run", (json_int_t)id,
					      "reason", why);

			if (getint(run, "spec", &spec) == 0)
				json_object_set_new(f, "spec", json_integer(spec));
			if (getint(run, "case", &cas) == 0)
				json_object_set_new(f, "case", json_integer(cas));
			if (getstr(run, "workload"))
				json_object_set_new(f, "workload", json_string(getstr(run, "workload")));
			json_array_append_new(s->failed, f);
			continue;
		}
		if (getint(run, "spec", &spec) < 0 || getint(run, "case", &cas) < 0 ||
		    !getstr(run, "workload")) {
			s->ignored++;
			continue;
		}
		snprintf(idbuf, sizeof(idbuf), "%lld", id);
		json_object_set(s->runs, idbuf, run);
		boot_key(&key, run);
		if (!json_object_get(s->boots, key.buf))
			json_object_set_new(s->boots, key.buf,
					    json_integer((json_int_t)json_object_size(s->boots)));
		add_unique_string(s->machines, getstr(run, "machine"));
		add_unique_string(s->builds, getstr(run, "build_id"));
		s->measured++;
	}
	strbuf_release(&key);
	return 0;
}

static json_t *group_new(const json_t *run, const char *metric, const json_t *m, size_t nboots)
{
	const char *unit = getstr(m, "unit"), *dir = getstr(m, "direction");
	json_t *boots = json_array(), *params = json_object_get(run, "params");
	size_t i;

	for (i = 0; i < nboots; i++)
		json_array_append_new(boots, json_array());
	return json_pack("{s:O,s:O,s:s,s:o,s:s,s:s,s:s,s:o}",
			 "spec", json_object_get(run, "spec"), "case", json_object_get(run, "case"),
			 "workload", getstr(run, "workload"),
			 "params", json_is_object(params) ? json_deep_copy(params) : json_object(),
			 "metric", metric, "unit", unit ? unit : "",
			 "direction", dir && (!strcmp(dir, "higher") || !strcmp(dir, "lower")) ? dir : "neutral",
			 "boots", boots);
}

static int side_load_metrics(struct side *s, struct strbuf *err)
{
	const json_t *metrics = json_object_get(s->doc, "metrics");
	struct strbuf key = STRBUF_INIT, bkey = STRBUF_INIT;
	size_t i, nboots = json_object_size(s->boots);
	json_t *m;

	if (!json_is_array(metrics))
		return strbuf_seterr(err, "%s: \"metrics\" is missing or not an array", s->name);
	json_array_foreach(metrics, i, m) {
		const char *name = getstr(m, "name");
		const json_t *value = json_object_get(m, "value"), *run;
		long long id = 0, spec = 0;
		char idbuf[32], *pc;
		json_t *g;

		if (getint(m, "run", &id) < 0 || !name || !*name ||
		    (!json_is_number(value) && !json_is_null(value) && value)) {
			s->ignored++;
			continue;
		}
		snprintf(idbuf, sizeof(idbuf), "%lld", id);
		run = json_object_get(s->runs, idbuf);
		if (!run)
			continue;	/* the other side's, a warm-up, or a failed run */
		if (is_per_cpu(name)) {
			json_object_set_new(s->per_cpu, name, json_true());
			continue;
		}
		if (json_is_number(value) && !isfinite(json_number_value(value))) {
			s->ignored++;
			continue;
		}
		getint(run, "spec", &spec);
		pc = params_canon(json_object_get(run, "params"));
		row_key(&key, spec, getstr(run, "workload"), pc, name);
		free(pc);
		g = json_object_get(s->groups, key.buf);
		if (!g) {
			g = group_new(run, name, m, nboots);
			json_object_set_new(s->groups, key.buf, g);
		}
		if (json_is_number(value)) {
			json_t *bi;

			boot_key(&bkey, run);
			bi = json_object_get(s->boots, bkey.buf);
			json_array_append_new(json_array_get(json_object_get(g, "boots"),
							     (size_t)json_integer_value(bi)),
					      json_real(json_number_value(value)));
		} else {
			const char *why = getstr(m, "reason");

			json_object_set_new(g, "unavailable", json_string(why ? why : "no value"));
		}
	}
	strbuf_release(&key);
	strbuf_release(&bkey);
	return 0;
}

/* The per-boot samples of a group: the median of each boot's iterations,
 * in boot order. Returns how many (boots without a value are skipped). */
static size_t group_samples(const json_t *g, double *out)
{
	const json_t *boots = json_object_get(g, "boots"), *vals;
	size_t i, j, n = 0;

	json_array_foreach(boots, i, vals) {
		size_t k = json_array_size(vals);
		double *v;
		json_t *x;

		if (!k)
			continue;
		v = calloc(k, sizeof(*v));
		if (!v)
			abort();
		json_array_foreach(vals, j, x)
			v[j] = json_number_value(x);
		out[n++] = stats_median(v, k);
		free(v);
	}
	return n;
}

/* ---- rows ---- */

struct row {
	json_t *obj;		/* owned until put into the output */
	long long spec, cas;
	int headline;
	const char *metric;	/* inside obj */
	struct verdict_row v;	/* its numbers, then its decision */
};

static json_t *side_stats(const double *v, size_t n)
{
	json_t *samples = json_array();
	double mean = n ? stats_mean(v, n) : NAN, spread = NAN;
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(samples, json_real(v[i]));
	if (n >= 2 && mean != 0)
		spread = 100.0 * stats_stddev(v, n) / fabs(mean);
	return json_pack("{s:o,s:o,s:I,s:o}", "center", jreal(n ? stats_median(v, n) : NAN),
			 "spread_pct", jreal(spread), "n", (json_int_t)n, "samples", samples);
}

static int all_equal(const double *a, size_t na, const double *b, size_t nb)
{
	size_t i;

	if (!na || !nb)
		return 0;
	for (i = 0; i < na; i++)
		if (a[i] != a[0])
			return 0;
	for (i = 0; i < nb; i++)
		if (b[i] != a[0])
			return 0;
	return 1;
}

static int count_outliers(const double *v, size_t n, double z)
{
	int *flags, k;

	if (n < 3)
		return 0;
	flags = calloc(n, sizeof(*flags));
	if (!flags)
		abort();
	k = stats_outliers_mad(v, n, z, flags);
	free(flags);
	return k < 0 ? 0 : k;
}

/*
 * Why a side lacks a metric, as its agent said: from the document's
 * "unavailable" (one side per document) or its "unavailable_by_side" under
 * the side's filter. A derived metric (X.per_sec, X.peak_per_sec) is
 * unavailable for the reason its counter X is.
 */
static const char *side_unavailable(const struct side *s, const char *metric)
{
	const json_t *u = json_object_get(s->doc, "unavailable");
	const json_t *by = json_object_get(s->doc, "unavailable_by_side");
	static const char *const derived[] = { ".peak_per_sec", ".per_sec" };
	char base[256];
	const char *why;
	size_t i, n;

	if (!metric)
		return NULL;
	if (json_is_object(by))
		u = json_object_get(by, s->filter ? s->filter : "");
	if ((why = getstr(u, metric)))
		return why;
	n = strlen(metric);
	for (i = 0; i < ARRAY_SIZE(derived); i++) {
		size_t k = strlen(derived[i]);

		if (n > k && n - k < sizeof(base) && !strcmp(metric + n - k, derived[i])) {
			memcpy(base, metric, n - k);
			base[n - k] = 0;
			return getstr(u, base);
		}
	}
	return NULL;
}

/* The pooled per-boot standard deviation of both sides, in % of the base
 * median: the noise a detectable effect is measured against. */
static double pooled_sd_pct(const double *b, size_t nb, const double *p, size_t np, double cb)
{
	double vb, vp;

	if (nb < 2 || np < 2 || cb == 0)
		return NAN;
	vb = stats_stddev(b, nb);
	vp = stats_stddev(p, np);
	return 100 * sqrt(((double)(nb - 1) * vb * vb + (double)(np - 1) * vp * vp) /
			  (double)(nb + np - 2)) / fabs(cb);
}

static int all_positive(const double *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!(v[i] > 0))
			return 0;
	return 1;
}

/*
 * The equivalence interval of a row, as % change: the distribution-free
 * interval of the shift (Hodges-Lehmann, Moses) at the design's level, of
 * log values when all are positive (a shift of logs is a ratio), else of
 * the values, in % of the base median. It inverts the test the verdict
 * uses, and is far narrower than a bootstrap of medians from the same few
 * boots, which is what makes `same` reachable at a useful margin.
 */
static void row_equivalence(struct verdict_row *v, const double *b, size_t nb, const double *p,
			    size_t np, double cb, const struct verdict_design *d)
{
	double *lb, *lp, est, lo, hi;
	size_t i;

	if (all_positive(b, nb) && all_positive(p, np)) {
		lb = calloc(nb, sizeof(*lb));
		lp = calloc(np, sizeof(*lp));
		if (!lb || !lp)
			abort();
		for (i = 0; i < nb; i++)
			lb[i] = log(b[i]);
		for (i = 0; i < np; i++)
			lp[i] = log(p[i]);
		if (stats_shift_ci(lb, nb, lp, np, d->eq_level, &est, &lo, &hi) == 0) {
			v->have_eq = 1;
			v->elo = 100 * expm1(lo);
			v->ehi = 100 * expm1(hi);
		}
		free(lb);
		free(lp);
	} else if (cb != 0 && stats_shift_ci(b, nb, p, np, d->eq_level, &est, &lo, &hi) == 0) {
		v->have_eq = 1;
		v->elo = 100 * lo / fabs(cb);
		v->ehi = 100 * hi / fabs(cb);
	}
}

/*
 * The 95% interval reported (ci), as % change: a bootstrap of the ratio of
 * medians where the base's resampled median is never 0; else of the
 * difference of medians, in % of the base median when that is not 0, or in
 * the metric's unit (ci_abs, no % at all) when it is.
 */
static void row_interval(json_t *obj, struct verdict_row *v, const double *b, size_t nb,
			 const double *p, size_t np, double cb, const struct compare_rules *r)
{
	double lo, hi;
	int rc;

	rc = stats_bootstrap_ci(b, nb, p, np, STATS_BOOT_RATIO, r->resamples, r->seed, &r->ci_level, 1,
				&lo, &hi);
	if (rc == 0) {
		lo = 100 * (lo - 1), hi = 100 * (hi - 1);
	} else if (rc == -EDOM) {
		rc = stats_bootstrap_ci(b, nb, p, np, STATS_BOOT_DIFF, r->resamples, r->seed, &r->ci_level, 1,
					&lo, &hi);
		if (rc == 0 && cb == 0) {
			json_object_set_new(obj, "ci_abs", json_pack("[f,f]", lo, hi));
			return;
		}
		if (rc == 0) {
			lo = 100 * lo / fabs(cb), hi = 100 * hi / fabs(cb);
			json_object_set_new(obj, "ci_kind", json_string("difference of medians, % of base"));
		}
	}
	if (rc < 0 || !isfinite(lo) || !isfinite(hi))
		return;
	v->have_ci = 1;
	v->lo = lo, v->hi = hi;
}

/* Fills the statistics of a row from its two groups (either may be NULL);
 * its verdict comes later, with all rows' (row_decision). */
static void row_stats(struct row *row, const json_t *gb, const json_t *gp, const struct side *sb,
		      const struct side *sp, const struct compare_rules *r,
		      const struct verdict_design *d)
{
	json_t *obj = row->obj;
	struct verdict_row *v = &row->v;
	size_t nb_boots = json_object_size(sb->boots), np_boots = json_object_size(sp->boots);
	double *b = calloc(nb_boots + 1, sizeof(double)), *p = calloc(np_boots + 1, sizeof(double));
	size_t nb = gb ? group_samples(gb, b) : 0, np = gp ? group_samples(gp, p) : 0;
	double cb, cp, change, pval = NAN, u;
	struct strbuf why = STRBUF_INIT, note = STRBUF_INIT;

	if (!b || !p)
		abort();
	memset(v, 0, sizeof(*v));
	v->metric = getstr(obj, "metric");
	v->direction = getstr(obj, "direction");
	v->headline = json_is_true(json_object_get(obj, "headline"));
	v->p = v->change = v->sd_pct = NAN;
	json_object_set_new(obj, "base", side_stats(b, nb));
	json_object_set_new(obj, "patched", side_stats(p, np));
	json_object_set_new(obj, "outliers", json_integer(count_outliers(b, nb, r->outlier_z) +
							 count_outliers(p, np, r->outlier_z)));
	if (!nb || !np) {
		const struct side *missing = !nb ? sb : sp;
		const json_t *g = !nb ? gb : gp, *other = !nb ? gp : gb;
		const char *side_why = side_unavailable(missing, getstr(obj, "metric"));

		if (g && getstr(g, "unavailable"))
			strbuf_addf(&why, "unavailable on %s: %s", missing->name, getstr(g, "unavailable"));
		else if (side_why)
			strbuf_addf(&why, "unavailable on %s: %s", missing->name, side_why);
		else if (other && getstr(other, "unavailable") && !(nb || np))
			strbuf_addf(&why, "unavailable: %s", getstr(other, "unavailable"));
		else
			strbuf_addf(&why, "not measured on %s", missing->name);
		json_object_set_new(obj, "change_pct", json_null());
		json_object_set_new(obj, "p", json_null());
		json_object_set_new(obj, "ci", json_null());
		json_object_set_new(obj, "verdict", json_string("unavailable"));
		json_object_set_new(obj, "reason", json_string(why.buf));
		goto out;
	}
	v->testable = 1;
	v->nb = nb, v->np = np;
	cb = stats_median(b, nb);
	cp = stats_median(p, np);
	if (cb != 0)
		change = 100 * (cp / cb - 1);
	else if (cp != 0)
		change = cp > 0 ? INFINITY : -INFINITY;
	else
		change = 0;
	v->change = change;
	if (stats_mann_whitney(b, nb, p, np, &u, &pval) == 0)
		v->p = pval;
	v->identical = all_equal(b, nb, p, np);
	v->sd_pct = pooled_sd_pct(b, nb, p, np, cb);
	row_interval(obj, v, b, nb, p, np, cb, r);
	row_equivalence(v, b, nb, p, np, cb, d);
	json_object_set_new(obj, "change_pct", isinf(change) ? json_null() : jreal(change));
	json_object_set_new(obj, "p", jreal(v->p));
	switch (stats_mann_whitney_method(b, nb, p, np)) {
	case STATS_MWU_EXACT:
		json_object_set_new(obj, "p_method", json_string("exact"));
		break;
	case STATS_MWU_PERMUTATION:
		json_object_set_new(obj, "p_method", json_string("permutation"));
		break;
	default:
		json_object_set_new(obj, "p_method", json_string("approximate"));
	}
	json_object_set_new(obj, "ci", v->have_ci ? json_pack("[f,f]", v->lo, v->hi) : json_null());
	json_object_set_new(obj, "equiv_ci", v->have_eq ? json_pack("[f,f]", v->elo, v->ehi) : json_null());
	if (cb == 0 && cp != 0)
		strbuf_addf(&note, "base is 0: no ratio; the verdict rests on p alone");
	else if (nb != np)
		strbuf_addf(&note, "%zu boots on base, %zu on patched", nb, np);
	if (note.len)
		json_object_set_new(obj, "note", json_string(note.buf));
out:
	strbuf_release(&why);
	strbuf_release(&note);
	free(b);
	free(p);
}

/* A row's decision (verdict_decide) into its JSON. */
static void row_decision(struct row *row)
{
	const struct verdict_row *v = &row->v;
	json_t *obj = row->obj;
	struct strbuf sb = STRBUF_INIT;

	if (!v->testable)
		return;
	json_object_set_new(obj, "verdict", json_string(v->verdict));
	json_object_set_new(obj, "p_adj", jreal(v->p_adj));
	json_object_set_new(obj, "p_adj_method", v->p_adj_method ? json_string(v->p_adj_method) : json_null());
	json_object_set_new(obj, "alpha", json_real(v->alpha));
	json_object_set_new(obj, "min_change_pct", json_real(v->min_change));
	json_object_set_new(obj, "margin_pct", json_real(v->margin));
	json_object_set_new(obj, "mde_pct", jreal(v->mde));
	json_object_set_new(obj, "ruled_out_pct", jreal(v->ruled_out));
	if (isnan(v->mde)) {
		strbuf_addf(&sb, "with %zu and %zu boots no change can be detected here", v->nb, v->np);
		json_object_set_new(obj, "mde_note", json_string(sb.buf));
		strbuf_reset(&sb);
	}
	if (!strcmp(v->verdict, "same") && v->have_eq) {
		strbuf_addf(&sb, "the change lies in %+.1f%%..%+.1f%% (equivalence interval), within +-%.1f%%",
			    v->elo, v->ehi, v->margin);
		json_object_set_new(obj, "reason", json_string(sb.buf));
	}
	if (!strcmp(v->verdict, "inconclusive")) {
		if (!isnan(v->ruled_out))
			strbuf_addf(&sb, "changes larger than %.1f%% ruled out (95%% interval)", v->ruled_out);
		else
			strbuf_addstr(&sb, "no interval: no change ruled out");
		if (!isnan(v->mde))
			strbuf_addf(&sb, "; this job could detect %.1f%%", v->mde);
		if (!v->have_eq)
			strbuf_addstr(&sb, "; too few boots for an equivalence interval");
		else
			strbuf_addf(&sb, "; same needs the interval within +-%.1f%%", v->margin);
		json_object_set_new(obj, "reason", json_string(sb.buf));
	}
	strbuf_release(&sb);
}

static int row_cmp(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	int c;

	if (a->spec != b->spec)
		return a->spec < b->spec ? -1 : 1;
	if (a->cas != b->cas)
		return a->cas < b->cas ? -1 : 1;
	c = strcmp(getstr(a->obj, "workload"), getstr(b->obj, "workload"));
	if (c)
		return c;
	c = strcmp(getstr(a->obj, "params_text"), getstr(b->obj, "params_text"));
	if (c)
		return c;
	if (a->headline != b->headline)
		return b->headline - a->headline;
	return strcmp(a->metric, b->metric);
}

static json_t *row_from_group(const json_t *g)
{
	struct strbuf pt = STRBUF_INIT;
	const char *wl = getstr(g, "workload"), *metric = getstr(g, "metric");
	int headline = is_headline(wl, metric);
	json_t *obj;

	params_text(&pt, json_object_get(g, "params"));
	obj = json_pack("{s:O,s:O,s:s,s:O,s:s,s:s,s:s,s:s,s:b,s:b}",
			"spec", json_object_get(g, "spec"), "case", json_object_get(g, "case"),
			"workload", wl, "params", json_object_get(g, "params"), "params_text", pt.buf,
			"metric", metric, "unit", getstr(g, "unit"), "direction", getstr(g, "direction"),
			"headline", headline, "counter", !headline);
	strbuf_release(&pt);
	return obj;
}

static struct row *build_rows(struct side *sb, struct side *sp, const struct compare_rules *r,
			      const struct verdict_design *d, size_t *ret_n)
{
	struct verdict_row *vr;
	size_t n = 0, i, alloc = json_object_size(sb->groups) + json_object_size(sp->groups) + 1;
	struct row *rows = calloc(alloc, sizeof(*rows));
	const char *key;
	json_t *g;
	int pass;

	if (!rows)
		abort();
	for (pass = 0; pass < 2; pass++) {
		json_t *groups = pass ? sp->groups : sb->groups;

		json_object_foreach(groups, key, g) {
			const json_t *gb = json_object_get(sb->groups, key), *gp = json_object_get(sp->groups, key);
			long long v = 0;

			if (pass && gb)
				continue;	/* done in the first pass */
			rows[n].obj = row_from_group(g);
			row_stats(&rows[n], gb, gp, sb, sp, r, d);
			getint(rows[n].obj, "spec", &v);
			rows[n].spec = v;
			getint(rows[n].obj, "case", &v);
			rows[n].cas = v;
			rows[n].headline = json_is_true(json_object_get(rows[n].obj, "headline"));
			rows[n].metric = getstr(rows[n].obj, "metric");
			n++;
		}
	}
	qsort(rows, n, sizeof(*rows), row_cmp);
	/* the rows decide together: their p-values are adjusted as families */
	vr = calloc(n + 1, sizeof(*vr));
	if (!vr)
		abort();
	for (i = 0; i < n; i++)
		vr[i] = rows[i].v;
	verdict_decide(r, d, vr, n);
	for (i = 0; i < n; i++) {
		rows[i].v = vr[i];
		row_decision(&rows[i]);
	}
	free(vr);
	*ret_n = n;
	return rows;
}

/* ---- views over rows ---- */

static json_t *summary_entry(const json_t *row)
{
	return json_pack("{s:O,s:O,s:s,s:O,s:s,s:O,s:O,s:O,s:O,s:s}", "spec", json_object_get(row, "spec"),
			 "case", json_object_get(row, "case"), "workload", getstr(row, "workload"),
			 "params", json_object_get(row, "params"), "metric", getstr(row, "metric"),
			 "change_pct", json_object_get(row, "change_pct"), "p", json_object_get(row, "p"),
			 "p_adj", json_object_get(row, "p_adj"),
			 "ci", json_object_get(row, "ci"), "verdict", getstr(row, "verdict"));
}

static int by_abs_change(const void *x, const void *y)
{
	const json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
	double ca = fabs(json_number_value(json_object_get(a, "change_pct")));
	double cb = fabs(json_number_value(json_object_get(b, "change_pct")));

	if (json_is_null(json_object_get(a, "change_pct")))
		ca = INFINITY;
	if (json_is_null(json_object_get(b, "change_pct")))
		cb = INFINITY;
	return ca > cb ? -1 : ca < cb;
}

static void sort_array(json_t *arr, int (*cmp)(const void *, const void *))
{
	size_t n = json_array_size(arr), i;
	json_t **v = calloc(n + 1, sizeof(*v));

	if (!v)
		abort();
	for (i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(arr, i));
	qsort(v, n, sizeof(*v), cmp);
	json_array_clear(arr);
	for (i = 0; i < n; i++)
		json_array_append_new(arr, v[i]);
	free(v);
}

static json_t *build_summary(const struct row *rows, size_t n)
{
	json_t *reg = json_array(), *imp = json_array(), *chg = json_array();
	long long same = 0, inc = 0, unav = 0, creg = 0, cimp = 0, cchg = 0;
	struct strbuf text = STRBUF_INIT;
	size_t i, k;
	json_t *lists[3], *e;

	for (i = 0; i < n; i++) {
		const char *v = getstr(rows[i].obj, "verdict");

		if (!rows[i].headline) {
			creg += !strcmp(v, "regression");
			cimp += !strcmp(v, "improvement");
			cchg += !strcmp(v, "changed");
			continue;
		}
		if (!strcmp(v, "regression"))
			json_array_append_new(reg, summary_entry(rows[i].obj));
		else if (!strcmp(v, "improvement"))
			json_array_append_new(imp, summary_entry(rows[i].obj));
		else if (!strcmp(v, "changed"))
			json_array_append_new(chg, summary_entry(rows[i].obj));
		else if (!strcmp(v, "same"))
			same++;
		else if (!strcmp(v, "inconclusive"))
			inc++;
		else
			unav++;
	}
	sort_array(reg, by_abs_change);
	sort_array(imp, by_abs_change);
	sort_array(chg, by_abs_change);
	lists[0] = reg, lists[1] = imp, lists[2] = chg;
	for (k = 0; k < 3; k++)
		json_array_foreach(lists[k], i, e) {
			struct strbuf pt = STRBUF_INIT;
			const json_t *c = json_object_get(e, "change_pct");

			params_text(&pt, json_object_get(e, "params"));
			if (text.len)
				strbuf_addstr(&text, "; ");
			strbuf_addstr(&text, getstr(e, "metric"));
			if (pt.len)
				strbuf_addf(&text, " (%s)", pt.buf);
			if (json_is_number(c))
				strbuf_addf(&text, " %+.1f%%", json_number_value(c));
			strbuf_addf(&text, " %s", getstr(e, "verdict"));
			strbuf_release(&pt);
		}
	if (!text.len)
		strbuf_addstr(&text, "no headline change");
	strbuf_addf(&text, "; %lld same, %lld inconclusive", same, inc);
	if (unav)
		strbuf_addf(&text, ", %lld unavailable", unav);
	e = json_pack("{s:o,s:o,s:o,s:I,s:I,s:I,s:{s:I,s:I,s:I},s:s}", "regressions", reg,
		      "improvements", imp, "changed", chg, "same", (json_int_t)same,
		      "inconclusive", (json_int_t)inc, "unavailable", (json_int_t)unav,
		      "counters", "regressions", (json_int_t)creg, "improvements", (json_int_t)cimp,
		      "changed", (json_int_t)cchg, "text", text.buf);
	strbuf_release(&text);
	return e;
}

static int by_workers(const void *x, const void *y)
{
	const json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
	json_int_t wa = json_integer_value(json_object_get(a, "workers"));
	json_int_t wb = json_integer_value(json_object_get(b, "workers"));

	return wa < wb ? -1 : wa > wb;
}

/* Headline rows whose cases differ only in "workers": one table each. */
static json_t *build_sweeps(const struct row *rows, size_t n)
{
	json_t *groups = json_object(), *sweeps = json_array(), *g;
	struct strbuf key = STRBUF_INIT;
	const char *k;
	size_t i;

	for (i = 0; i < n; i++) {
		const json_t *row = rows[i].obj, *params = json_object_get(row, "params");
		const json_t *w = json_object_get(params, "workers");
		json_t *rest, *entry;
		char *pc;

		if (!rows[i].headline || !json_is_integer(w))
			continue;
		rest = json_deep_copy(params);
		json_object_del(rest, "workers");
		pc = params_canon(rest);
		row_key(&key, rows[i].spec, getstr(row, "workload"), pc, rows[i].metric);
		free(pc);
		g = json_object_get(groups, key.buf);
		if (!g) {
			struct strbuf pt = STRBUF_INIT;

			params_text(&pt, rest);
			g = json_pack("{s:O,s:s,s:s,s:O,s:s,s:s,s:s,s:[]}", "spec", json_object_get(row, "spec"),
				      "workload", getstr(row, "workload"), "metric", rows[i].metric,
				      "params", rest, "params_text", pt.buf, "unit", getstr(row, "unit"),
				      "direction", getstr(row, "direction"), "rows");
			strbuf_release(&pt);
			json_object_set_new(groups, key.buf, g);
		}
		json_decref(rest);
		entry = json_pack("{s:O,s:O,s:O,s:O,s:O,s:O}", "workers", w, "case", json_object_get(row, "case"),
				  "base", json_object_get(json_object_get(row, "base"), "center"),
				  "patched", json_object_get(json_object_get(row, "patched"), "center"),
				  "change_pct", json_object_get(row, "change_pct"),
				  "verdict", json_object_get(row, "verdict"));
		json_array_append_new(json_object_get(g, "rows"), entry);
	}
	json_object_foreach(groups, k, g)
		if (json_array_size(json_object_get(g, "rows")) >= 2) {
			sort_array(json_object_get(g, "rows"), by_workers);
			json_array_append(sweeps, g);
		}
	json_decref(groups);
	strbuf_release(&key);
	return sweeps;
}

static const json_t *find_row(const json_t *index, const json_t *row, const char *metric,
			      struct strbuf *key)
{
	char *pc = params_canon(json_object_get(row, "params"));
	long long spec = 0;

	getint(row, "spec", &spec);
	row_key(key, spec, getstr(row, "workload"), pc, metric);
	free(pc);
	return json_object_get(index, key->buf);
}

static json_t *center_of(const json_t *row, const char *side)
{
	return row ? json_incref(json_object_get(json_object_get(row, side), "center")) : json_null();
}

static json_t *build_tlb(const struct row *rows, size_t n)
{
	json_t *index = json_object(), *seen = json_object(), *out = json_array();
	struct strbuf key = STRBUF_INIT;
	size_t i, k;

	for (i = 0; i < n; i++) {
		char *pc = params_canon(json_object_get(rows[i].obj, "params"));

		row_key(&key, rows[i].spec, getstr(rows[i].obj, "workload"), pc, rows[i].metric);
		free(pc);
		json_object_set(index, key.buf, rows[i].obj);
	}
	for (i = 0; i < n; i++) {
		const json_t *row = rows[i].obj, *spk;
		json_t *counters, *entry;

		if (!rows[i].headline)
			continue;
		find_row(index, row, "", &key);	/* the case's key */
		if (json_object_get(seen, key.buf))
			continue;
		json_object_set_new(seen, key.buf, json_true());
		counters = json_array();
		for (k = 0; k < ARRAY_SIZE(shootdown_counters); k++) {
			char ps[128], pk[128];
			const json_t *avg, *peak;

			snprintf(ps, sizeof(ps), "%s.per_sec", shootdown_counters[k]);
			snprintf(pk, sizeof(pk), "%s.peak_per_sec", shootdown_counters[k]);
			avg = find_row(index, row, ps, &key);
			peak = find_row(index, row, pk, &key);
			if (!avg && !peak)
				continue;
			json_array_append_new(counters, json_pack(
				"{s:s,s:{s:o,s:o},s:{s:o,s:o},s:o}", "name", shootdown_counters[k],
				"base", "per_sec", center_of(avg, "base"), "peak_per_sec", center_of(peak, "base"),
				"patched", "per_sec", center_of(avg, "patched"),
				"peak_per_sec", center_of(peak, "patched"),
				"verdict", avg ? json_incref(json_object_get(avg, "verdict")) : json_null()));
		}
		spk = find_row(index, row, "tlb.shootdowns_per_kop", &key);
		if (!spk && !json_array_size(counters)) {
			json_decref(counters);
			continue;
		}
		entry = json_pack("{s:O,s:O,s:s,s:O,s:s,s:o,s:o}", "spec", json_object_get(row, "spec"),
				  "case", json_object_get(row, "case"), "workload", getstr(row, "workload"),
				  "params", json_object_get(row, "params"),
				  "params_text", getstr(row, "params_text"),
				  "shootdowns_per_kop", spk ? json_pack("{s:o,s:o,s:O,s:O}",
						"base", center_of(spk, "base"), "patched", center_of(spk, "patched"),
						"change_pct", json_object_get(spk, "change_pct"),
						"verdict", json_object_get(spk, "verdict")) : json_null(),
				  "counters", counters);
		json_array_append_new(out, entry);
	}
	json_decref(index);
	json_decref(seen);
	strbuf_release(&key);
	return out;
}

/* ---- profiles ---- */

/* Sums self % per symbol over the side's measured runs that have a
 * profile; returns how many profiles. */
/* Sums each symbol's self share over the side's profiles into sums; kernel
 * gets each symbol's kernel flag, and timed the symbols that were timed by
 * ftrace (source "ftrace") rather than sampled. Returns how many profiles. */
static size_t profile_sum(const struct side *s, json_t *sums, json_t *kernel, json_t *timed)
{
	const json_t *profiles = json_object_get(s->doc, "profiles"), *p, *sym;
	json_t *done = json_object();
	size_t i, j, n = 0;

	json_array_foreach(profiles, i, p) {
		long long id;
		char idbuf[32];
		const json_t *symbols = json_object_get(json_object_get(p, "profile"), "symbols");

		if (getint(p, "run", &id) < 0 || !json_is_array(symbols))
			continue;
		snprintf(idbuf, sizeof(idbuf), "%lld", id);
		if (!json_object_get(s->runs, idbuf) || json_object_get(done, idbuf))
			continue;
		json_object_set_new(done, idbuf, json_true());
		n++;
		json_array_foreach(symbols, j, sym) {
			const char *name = getstr(sym, "symbol");
			const json_t *self = json_object_get(sym, "self");
			double prev;

			if (!name || !json_is_number(self) || !isfinite(json_number_value(self)))
				continue;
			prev = json_number_value(json_object_get(sums, name));
			json_object_set_new(sums, name, json_real(prev + json_number_value(self)));
			if (json_is_boolean(json_object_get(sym, "kernel")))
				json_object_set(kernel, name, json_object_get(sym, "kernel"));
			if (!strcmp(getstr(sym, "source") ?: "", "ftrace"))
				json_object_set_new(timed, name, json_true());
		}
	}
	json_decref(done);
	return n;
}

static int by_abs_delta(const void *x, const void *y)
{
	const json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
	double da = fabs(json_number_value(json_object_get(a, "delta")));
	double db = fabs(json_number_value(json_object_get(b, "delta")));

	if (da != db)
		return da > db ? -1 : 1;
	return strcmp(getstr(a, "symbol"), getstr(b, "symbol"));
}

/*
 * Why there is no diff: the sides without a profile, with what the agent
 * said (a run's "unavailable" profile reason, stored like any metric's), or
 * how to ask for one.
 */
static json_t *profile_missing(const struct side *b, const struct side *p)
{
	struct strbuf why = STRBUF_INIT;
	const struct side *sides[2] = { b, p };
	json_t *out;
	int i;

	for (i = 0; i < 2; i++) {
		const char *reason;

		if (!sides[i])
			continue;
		reason = side_unavailable(sides[i], "profile");
		strbuf_addf(&why, "%sno profile on %s: %s", why.len ? "; " : "", sides[i]->name,
			    reason ? reason : "none was taken (a suite asks for one with monitors: [..., profile] "
			    "or profile: true)");
	}
	out = json_string(why.buf);
	strbuf_release(&why);
	return out;
}

/* What the side's profiles say they cannot see (their "blind_spot"), or NULL. */
static const char *profile_blind_spot(const struct side *s)
{
	const json_t *p;
	size_t i;

	json_array_foreach(json_object_get(s->doc, "profiles"), i, p) {
		const char *b = getstr(json_object_get(p, "profile"), "blind_spot");
		long long id;
		char idbuf[32];

		if (!b || getint(p, "run", &id) < 0)
			continue;
		snprintf(idbuf, sizeof(idbuf), "%lld", id);
		if (json_object_get(s->runs, idbuf))
			return b;
	}
	return NULL;
}

static json_t *build_profile_diff(const struct side *sb, const struct side *sp)
{
	json_t *sum_b = json_object(), *sum_p = json_object(), *kernel = json_object(), *timed = json_object();
	json_t *syms = json_array(), *kept = json_array(), *v, *out;
	size_t nb = profile_sum(sb, sum_b, kernel, timed), np = profile_sum(sp, sum_p, kernel, timed);
	const char *name;
	size_t i;
	int pass;

	for (pass = 0; nb && np && pass < 2; pass++)
		json_object_foreach(pass ? sum_p : sum_b, name, v) {
			double b = json_number_value(json_object_get(sum_b, name)) / (double)nb;
			double p = json_number_value(json_object_get(sum_p, name)) / (double)np;
			json_t *e;

			if (pass && json_object_get(sum_b, name))
				continue;
			e = json_pack("{s:s,s:f,s:f,s:f}", "symbol", name, "base_self", b,
				      "patched_self", p, "delta", p - b);
			if (json_object_get(kernel, name))
				json_object_set(e, "kernel", json_object_get(kernel, name));
			if (json_object_get(timed, name))
				json_object_set_new(e, "source", json_string("ftrace"));
			json_array_append_new(syms, e);
		}
	sort_array(syms, by_abs_delta);
	/* the top changes, and every function the agent timed on purpose
	 * (switch_mm_irqs_off...) whatever its change */
	json_array_foreach(syms, i, v)
		if (i < PROFILE_TOP || json_object_get(v, "source"))
			json_array_append(kept, v);
	json_decref(syms);
	syms = kept;
	json_decref(sum_b);
	json_decref(sum_p);
	json_decref(kernel);
	json_decref(timed);
	out = json_pack("{s:{s:I,s:I},s:o}", "profiles", "base", (json_int_t)nb, "patched", (json_int_t)np,
			"symbols", syms);
	if (!nb || !np)
		json_object_set_new(out, "reason", profile_missing(!nb ? sb : NULL, !np ? sp : NULL));
	/* a symbol missing from both sides may be one the profiler cannot see */
	if (profile_blind_spot(sb) || profile_blind_spot(sp))
		json_object_set_new(out, "blind_spot", json_string(profile_blind_spot(sb) ?: profile_blind_spot(sp)));
	return out;
}

/* ---- the whole ---- */

static void side_release(struct side *s)
{
	json_decref(s->runs);
	json_decref(s->boots);
	json_decref(s->groups);
	json_decref(s->machines);
	json_decref(s->builds);
	json_decref(s->per_cpu);
}

static int side_load(struct side *s, const char *name, const json_t *doc, const char *filter,
		     json_t *failed, struct strbuf *err)
{
	const json_t *f;
	size_t i;

	s->name = name;
	s->doc = doc;
	s->filter = filter;
	s->failed = failed;
	s->runs = json_object();
	s->boots = json_object();
	s->groups = json_object();
	s->machines = json_array();
	s->builds = json_array();
	s->per_cpu = json_object();
	if (!json_is_object(doc))
		return strbuf_seterr(err, "%s: not a JSON object", name);
	if (side_load_runs(s, err) < 0 || side_load_metrics(s, err) < 0)
		return -1;
	json_array_foreach(json_object_get(doc, "failed"), i, f) {
		json_t *c = json_is_object(f) ? json_deep_copy(f) : json_pack("{s:O}", "reason", f);

		if (filter && getstr(c, "side") && strcmp(getstr(c, "side"), filter)) {
			json_decref(c);
			continue;
		}
		json_object_set_new(c, "side", json_string(name));
		json_array_append_new(failed, c);
	}
	if (!s->measured)
		json_array_append_new(failed, json_pack("{s:s,s:s}", "side", name, "reason",
							"no measured runs"));
	return 0;
}

static json_t *provenance(const struct side *sb, const struct side *sp)
{
	const json_t *pb = json_object_get(sb->doc, "provenance"), *pp = json_object_get(sp->doc, "provenance");

	return json_pack("{s:o,s:o,s:{s:I,s:I},s:{s:O,s:O},s:{s:O,s:O}}",
			 "base", pb ? json_deep_copy(pb) : json_null(),
			 "patched", pp ? json_deep_copy(pp) : json_null(),
			 "boots", "base", (json_int_t)json_object_size(sb->boots),
			 "patched", (json_int_t)json_object_size(sp->boots),
			 "machines", "base", sb->machines, "patched", sp->machines,
			 "builds", "base", sb->builds, "patched", sp->builds);
}

static void add_notes(json_t *notes, const struct side *sb, const struct side *sp,
		      const struct compare_rules *r, const struct verdict_design *d,
		      const struct row *rows, size_t n)
{
	size_t bb = json_object_size(sb->boots), bp = json_object_size(sp->boots), i, m = 0;
	double alpha = verdict_look_alpha(d, r->alpha);
	struct strbuf sb_ = STRBUF_INIT;

	for (i = 0; i < n; i++)
		m += rows[i].headline && rows[i].v.testable && !isnan(rows[i].v.p);
	if (bb != bp) {
		strbuf_addf(&sb_, "base has %zu boots, patched %zu: each side is compared with the "
			    "boots it has; the missing ones failed or did not run", bb, bp);
		json_array_append_new(notes, json_string(sb_.buf));
		strbuf_reset(&sb_);
	}
	if (d->looks == 2) {
		strbuf_addf(&sb_, "look %d of 2 (%d boots per side, up to %d): this look spends "
			    "alpha %.3g of %g", d->look, d->boots, d->max_boots, alpha, r->alpha);
		json_array_append_new(notes, json_string(sb_.buf));
		strbuf_reset(&sb_);
	}
	if (bb && bp && m && stats_mwu_min_p(bb, bp) >= alpha / (double)m) {
		strbuf_addf(&sb_, "with %zu and %zu boots no Mann-Whitney p can go below %.3g, and "
			    "%zu headline rows at alpha %.3g need %.3g (Holm): no headline row can "
			    "be called a change at this look", bb, bp, stats_mwu_min_p(bb, bp), m,
			    alpha, alpha / (double)m);
		json_array_append_new(notes, json_string(sb_.buf));
		strbuf_reset(&sb_);
	}
	if (sb->ignored || sp->ignored) {
		strbuf_addf(&sb_, "%zu malformed run or metric entries ignored",
			    sb->ignored + sp->ignored);
		json_array_append_new(notes, json_string(sb_.buf));
	}
	strbuf_release(&sb_);
}

const char *compare_verdict(const json_t *comparison)
{
	const json_t *sum = json_object_get(comparison, "summary");

	if (json_array_size(json_object_get(sum, "regressions")))
		return "regression";
	if (json_array_size(json_object_get(sum, "improvements")))
		return "improvement";
	if (json_array_size(json_object_get(sum, "changed")))
		return "changed";
	if (json_integer_value(json_object_get(sum, "inconclusive")) > 0)
		return "inconclusive";
	if (json_integer_value(json_object_get(sum, "same")) > 0)
		return "same";
	return "unavailable";
}

json_t *compare_sides(const json_t *base, const char *base_side, const json_t *patched,
		      const char *patched_side, const struct compare_rules *rules, struct strbuf *err)
{
	struct compare_rules defaults;
	struct verdict_design design;
	struct side sb = { 0 }, sp = { 0 };
	json_t *failed = json_array(), *notes = json_array(), *out = NULL, *jrows, *per_cpu;
	struct row *rows = NULL;
	size_t n = 0, i;
	const char *name;
	json_t *v;

	if (!rules) {
		compare_rules_default(&defaults);
		rules = &defaults;
	}
	if (!(rules->alpha > 0 && rules->alpha < 1) || rules->resamples < 1 ||
	    !(rules->equiv_alpha > 0 && rules->equiv_alpha < 0.5) ||
	    !(rules->power > 0.5 && rules->power < 1) ||
	    !(rules->ci_level > 0 && rules->ci_level < 1) || !(rules->same_band >= 0) ||
	    !(rules->min_change_headline >= 0) || !(rules->min_change_counter >= 0) ||
	    !(rules->outlier_z >= 0)) {
		strbuf_seterr(err, "compare: invalid rules");
		goto out;
	}
	for (i = 0; i < rules->noverrides; i++) {
		const struct compare_override *ov = &rules->overrides[i];

		if (!ov->metric || !(isnan(ov->alpha) || (ov->alpha > 0 && ov->alpha < 1)) ||
		    ov->min_change < 0 || ov->same_band < 0) {
			strbuf_seterr(err, "compare: invalid rule for metrics '%s'", ov->metric ?: "(null)");
			goto out;
		}
	}
	if (side_load(&sb, "base", base, base_side, failed, err) < 0 ||
	    side_load(&sp, "patched", patched, patched_side, failed, err) < 0)
		goto out;
	/* one job's two sides follow its sequential design; two jobs compared
	 * afterwards are one look */
	verdict_design_init(&design, rules, base == patched ? json_object_get(base, "design") : NULL);
	rows = build_rows(&sb, &sp, rules, &design, &n);
	add_notes(notes, &sb, &sp, rules, &design, rows, n);
	jrows = json_array();
	for (i = 0; i < n; i++)
		json_array_append(jrows, rows[i].obj);
	per_cpu = json_array();
	json_object_foreach(sb.per_cpu, name, v)
		json_array_append_new(per_cpu, json_string(name));
	json_object_foreach(sp.per_cpu, name, v)
		if (!json_object_get(sb.per_cpu, name))
			json_array_append_new(per_cpu, json_string(name));
	out = json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}",
			"summary", build_summary(rows, n), "rows", jrows,
			"sweeps", build_sweeps(rows, n), "tlb", build_tlb(rows, n),
			"profile_diff", build_profile_diff(&sb, &sp),
			"provenance", provenance(&sb, &sp), "failed", failed, "notes", notes,
			"per_cpu_excluded", per_cpu, "ci_kind", json_string("percent"),
			"rules", compare_rules_json(rules));
	failed = notes = NULL;
	if (!out)
		strbuf_seterr(err, "compare: out of memory");
	else {
		json_object_set_new(out, "design", verdict_design_json(&design, rules));
		json_object_set_new(out, "verdict", json_string(compare_verdict(out)));
	}
out:
	for (i = 0; i < n; i++)
		json_decref(rows[i].obj);
	free(rows);
	json_decref(failed);
	json_decref(notes);
	side_release(&sb);
	side_release(&sp);
	return out;
}
