/*
 * The rows of a comparison: one per row key seen on either side. A row's
 * samples are its groups' per-boot medians; its statistics are the
 * medians and spread of each side, the change, the Mann-Whitney p, the
 * bootstrap interval of the change and the equivalence interval; its
 * verdict is decided with all rows' at once (verdict.c), since their
 * p-values are adjusted as families.
 */
#include "compare.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare_int.h"
#include "stats.h"
#include "verdict.h"
#include "banned.h"

static int is_headline(const char *workload, const char *metric)
{
	size_t n = strlen(workload);

	return n && !strncmp(metric, workload, n) && metric[n] == '.';
}

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
	size_t nb = gb ? compare_group_samples(gb, b) : 0, np = gp ? compare_group_samples(gp, p) : 0;
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
		const char *side_why = compare_side_unavailable(missing, getstr(obj, "metric"));

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

	compare_params_text(&pt, json_object_get(g, "params"));
	obj = json_pack("{s:O,s:O,s:s,s:O,s:s,s:s,s:s,s:s,s:b,s:b}",
			"spec", json_object_get(g, "spec"), "case", json_object_get(g, "case"),
			"workload", wl, "params", json_object_get(g, "params"), "params_text", pt.buf,
			"metric", metric, "unit", getstr(g, "unit"), "direction", getstr(g, "direction"),
			"headline", headline, "counter", !headline);
	strbuf_release(&pt);
	return obj;
}

struct row *compare_build_rows(struct side *sb, struct side *sp, const struct compare_rules *r,
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
