/*
 * A job compares tens of rows at once, and may look at its data twice
 * (after its first boots, and again once boots were added because a
 * headline row was undecided). Both multiply the chances of a false call,
 * so both are paid for out of one alpha:
 *
 * - across looks, alpha is spent by an O'Brien-Fleming-like function of
 *   the information fraction (boots at the first look / the most boots).
 *   The first look spends little (at 5 of 9 boots, 0.06% of a 1% alpha),
 *   the second spends the rest. A false call at either look is bounded by
 *   the sum of what the looks spent, whatever the correlation between them,
 *   so the job keeps its alpha at every noise level;
 * - across rows, Holm's step-down keeps the family-wise error of the
 *   headline rows (the job's verdict) at the look's alpha, and
 *   Benjamini-Hochberg keeps the false discovery rate of the counter rows
 *   (many, correlated, there to explain a headline change) at that level.
 *
 * `same` is an equivalence test (two one-sided tests, as an interval at
 * 1 - 2 * alpha_eq inside +-margin); a job is `same` only when all its
 * headline rows are, which needs no adjustment (each must pass on its own).
 */
#include "verdict.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "util.h"
#include "banned.h"

/* Mann-Whitney against the t test under normal noise */
#define MWU_EFFICIENCY (3 / M_PI)

void verdict_design_init(struct verdict_design *d, const struct compare_rules *r,
			 const json_t *design)
{
	json_int_t boots = json_integer_value(json_object_get(design, "boots"));
	json_int_t max = json_integer_value(json_object_get(design, "max_boots"));
	json_int_t look = json_integer_value(json_object_get(design, "look"));

	memset(d, 0, sizeof(*d));
	d->look = d->looks = 1;
	if (boots >= 1 && max >= boots && max <= 1000) {
		d->boots = (int)boots;
		d->max_boots = (int)max;
		d->looks = max > boots ? 2 : 1;
		d->look = d->looks == 2 && look == 2 ? 2 : 1;
	}
	d->eq_level = 1 - 2 * verdict_look_alpha(d, r->equiv_alpha);
}

double verdict_look_alpha(const struct verdict_design *d, double alpha)
{
	double first;

	if (d->looks < 2)
		return alpha;
	first = stats_obf_spent(alpha, (double)d->boots / (double)d->max_boots);
	return d->look == 1 ? first : alpha - first;
}

json_t *verdict_design_json(const struct verdict_design *d, const struct compare_rules *r)
{
	json_t *o = json_pack("{s:i,s:i,s:f,s:f,s:f,s:s}", "look", d->look, "looks", d->looks,
			      "alpha", verdict_look_alpha(d, r->alpha), "alpha_total", r->alpha,
			      "equiv_level", d->eq_level,
			      "spending", d->looks > 1 ? "O'Brien-Fleming-like (Lan-DeMets), "
			      "the looks' alphas summed" : "one look: all of alpha");

	if (!o)
		abort();
	if (d->boots) {
		json_object_set_new(o, "boots", json_integer(d->boots));
		json_object_set_new(o, "max_boots", json_integer(d->max_boots));
	}
	return o;
}

static const struct compare_override *override_for(const struct compare_rules *r, const char *metric)
{
	size_t i;

	for (i = 0; metric && i < r->noverrides; i++)
		if (!fnmatch(r->overrides[i].metric, metric, 0))
			return &r->overrides[i];
	return NULL;
}

/* The row's own rule (an override's where it sets one) and its look's alpha. */
static void row_rule(const struct compare_rules *r, const struct verdict_design *d,
		     struct verdict_row *row)
{
	const struct compare_override *ov = override_for(r, row->metric);
	double alpha = r->alpha;

	row->min_change = 100 * (row->headline ? r->min_change_headline : r->min_change_counter);
	row->margin = 100 * r->same_band;
	if (ov && !isnan(ov->alpha))
		alpha = ov->alpha;
	if (ov && !isnan(ov->min_change))
		row->min_change = 100 * ov->min_change;
	if (ov && !isnan(ov->same_band))
		row->margin = 100 * ov->same_band;
	row->alpha = verdict_look_alpha(d, alpha);
}

/* Adjusts one family (headline or counter rows) in place. */
static void adjust_family(struct verdict_row *rows, size_t n, int headline)
{
	double *p = xcalloc(n + 1, sizeof(*p)), *adj = xcalloc(n + 1, sizeof(*adj));
	size_t i, m = 0, *idx = xcalloc(n + 1, sizeof(*idx));

	for (i = 0; i < n; i++)
		if (rows[i].testable && rows[i].headline == headline)
			p[m] = rows[i].p, idx[m++] = i;
	if ((headline ? stats_holm(p, m, adj) : stats_bh(p, m, adj)) < 0)
		abort();
	for (i = 0; i < m; i++) {
		rows[idx[i]].p_adj = adj[i];
		rows[idx[i]].p_adj_method = headline ? "holm" : "bh";
	}
	free(p);
	free(adj);
	free(idx);
}

/* How many rows of a family were tested: the Holm (and first BH) step
 * holds a lone change against alpha / m. */
static size_t family_size(const struct verdict_row *rows, size_t n, int headline)
{
	size_t i, m = 0;

	for (i = 0; i < n; i++)
		m += rows[i].testable && !isnan(rows[i].p) && rows[i].headline == headline;
	return m ? m : 1;
}

static const char *call(const struct verdict_row *row)
{
	int excludes = row->have_ci ? (row->lo > 0 || row->hi < 0) : isinf(row->change);

	if (!isnan(row->p_adj) && row->p_adj < row->alpha && excludes && !isnan(row->change) &&
	    fabs(row->change) >= row->min_change) {
		if (!strcmp(row->direction ?: "neutral", "neutral"))
			return "changed";
		return (row->change > 0) == !strcmp(row->direction, "higher") ? "improvement" : "regression";
	}
	if (row->identical)
		return "same";
	if (row->have_eq && row->elo >= -row->margin && row->ehi <= row->margin)
		return "same";
	return "inconclusive";
}

/* The change this row would have caught with the power asked, were it the
 * only one in its family: at alpha / m, the Holm step a lone change meets.
 * NAN when the boots cannot give a p that small at all. */
static double detectable(const struct compare_rules *r, const struct verdict_row *row, size_t m)
{
	double a = row->alpha / (double)m, shift;

	if (row->nb < 2 || row->np < 2 || isnan(row->sd_pct) || stats_mwu_min_p(row->nb, row->np) >= a)
		return NAN;
	shift = stats_detectable_shift(row->sd_pct, row->nb, row->np, a, r->power, MWU_EFFICIENCY);
	return fmax(shift, row->min_change);
}

void verdict_decide(const struct compare_rules *r, const struct verdict_design *d,
		    struct verdict_row *rows, size_t n)
{
	size_t i, m[2];

	for (i = 0; i < n; i++) {
		rows[i].p_adj = rows[i].mde = rows[i].ruled_out = NAN;
		rows[i].p_adj_method = NULL;
		rows[i].verdict = NULL;
		row_rule(r, d, &rows[i]);
	}
	adjust_family(rows, n, 1);
	adjust_family(rows, n, 0);
	m[0] = family_size(rows, n, 0);
	m[1] = family_size(rows, n, 1);
	for (i = 0; i < n; i++) {
		if (!rows[i].testable)
			continue;
		rows[i].verdict = call(&rows[i]);
		rows[i].mde = detectable(r, &rows[i], m[rows[i].headline ? 1 : 0]);
		if (!strcmp(rows[i].verdict, "inconclusive") && rows[i].have_ci)
			rows[i].ruled_out = fmax(fabs(rows[i].lo), fabs(rows[i].hi));
	}
}

int verdict_wants_more_boots(const json_t *comparison)
{
	const json_t *design = json_object_get(comparison, "design"), *row;
	size_t i;

	if (json_integer_value(json_object_get(design, "look")) != 1 ||
	    json_integer_value(json_object_get(design, "looks")) != 2)
		return 0;
	json_array_foreach(json_object_get(comparison, "rows"), i, row) {
		const char *v = json_string_value(json_object_get(row, "verdict")) ?: "";
		const json_t *eq = json_object_get(row, "equiv_ci");
		double least = json_number_value(json_object_get(row, "min_change_pct"));

		if (!json_is_true(json_object_get(row, "headline")))
			continue;
		if (!strcmp(v, "inconclusive"))
			return 1;
		/* the first look stops on same only when no change it would
		 * call fits the interval: a true 5% change inside a 10% margin
		 * must still get the boots that can find it */
		if (!strcmp(v, "same") && json_is_array(eq) &&
		    (json_number_value(json_array_get(eq, 0)) < -least ||
		     json_number_value(json_array_get(eq, 1)) > least))
			return 1;
	}
	return 0;
}
