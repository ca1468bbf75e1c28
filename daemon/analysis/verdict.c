/*
 * A job compares tens of rows at once, and may look at its data twice
 * (after its first boots, and again once boots were added because a
 * headline row was undecided). Both multiply the chances of a false call,
 * so both are paid for out of one alpha per family of rows:
 *
 * - across looks, alpha is spent by a function of the information fraction
 *   (boots at the first look / the most boots): O'Brien-Fleming-like for
 *   rank-tested families (little early; nothing at all when the first
 *   look's boots cannot give a p below that share, which then goes to the
 *   second look), Pocock-like for Welch families (near-deterministic work
 *   and wait rows, which should decide at the first look). A false call at
 *   either look is bounded by the sum of what the looks spent, whatever the
 *   correlation between them;
 * - across rows, Holm's step-down keeps the family-wise error of the
 *   headline rows (the job's verdict) and of the time scores that are not
 *   headline at the look's alpha, and Benjamini-Hochberg keeps the false
 *   discovery rate of each class's secondary rows (many, correlated, there
 *   to explain a headline change) at that level. Context rows (counts and
 *   rates over the window) are not tested at all.
 *
 * `same` is an equivalence test (two one-sided tests, as an interval at
 * 1 - 2 * alpha_eq) inside the least change the row would call, so it
 * promises no such change; an interval that fits only the wider margin
 * says "no change beyond" it. A job is `same` only when all its headline
 * rows are, which needs no adjustment (each must pass on its own).
 */
#include "verdict.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "stats.h"
#include "util.h"
#include "banned.h"

/* Mann-Whitney against the t test under normal noise */
#define MWU_EFFICIENCY (3 / M_PI)

void verdict_design_init(struct verdict_design *d, const struct compare_rules *r,
			 const json_t *design)
{
	json_int_t boots = jsonget_int_or(design, "boots", 0);
	json_int_t max = jsonget_int_or(design, "max_boots", 0);
	json_int_t look = jsonget_int_or(design, "look", 0);

	memset(d, 0, sizeof(*d));
	d->look = d->looks = 1;
	if (boots >= 1 && max >= boots && max <= 1000) {
		d->boots = (int)boots;
		d->max_boots = (int)max;
		d->looks = max > boots ? 2 : 1;
		d->look = d->looks == 2 && look == 2 ? 2 : 1;
	}
	d->eq_level = 1 - 2 * verdict_spend(d, r->equiv_alpha, VERDICT_SPEND_OBF);
	d->eq_level_welch = 1 - 2 * verdict_spend(d, r->equiv_alpha, VERDICT_SPEND_OBF);
	d->alpha_headline = verdict_look_alpha(d, r->alpha);
}

double verdict_spend(const struct verdict_design *d, double alpha, enum verdict_spending how)
{
	double t, first;

	if (d->looks < 2)
		return alpha;
	t = (double)d->boots / (double)d->max_boots;
	first = how == VERDICT_SPEND_POCOCK ? stats_pocock_spent(alpha, t) :
		how == VERDICT_SPEND_SECOND ? 0 : stats_obf_spent(alpha, t);
	return d->look == 1 ? first : alpha - first;
}

double verdict_look_alpha(const struct verdict_design *d, double alpha)
{
	return verdict_spend(d, alpha, VERDICT_SPEND_OBF);
}

static const char *const spending_names[VERDICT_SPEND_MAX] = {
	"O'Brien-Fleming-like (Lan-DeMets), the looks' alphas summed",
	"all at the second look: the first look's boots cannot give a p below the "
	"O'Brien-Fleming-like share (Mann-Whitney)",
	"Pocock-like (Lan-DeMets), the looks' alphas summed: near-deterministic rows "
	"(Welch) decide at the first look",
};

json_t *verdict_design_json(const struct verdict_design *d, const struct compare_rules *r)
{
	json_t *o = json_pack("{s:i,s:i,s:f,s:f,s:f,s:s}", "look", d->look, "looks", d->looks,
			      "alpha", d->alpha_headline, "alpha_total", r->alpha,
			      "equiv_level", d->eq_level,
			      "spending", d->looks > 1 ? spending_names[d->spend_headline]
			      : "one look: all of alpha");

	if (!o)
		abort();
	if (d->looks > 1 && d->look == 1) {
		json_object_set_new(o, "last_look", json_boolean(d->last));
		if (d->scores_moved)
			json_object_set_new(o, "scores_moved", json_true());
	}
	if (d->boots) {
		struct verdict_design first = *d;

		first.look = 1;
		json_object_set_new(o, "boots", json_integer(d->boots));
		json_object_set_new(o, "max_boots", json_integer(d->max_boots));
		json_object_set_new(o, "first_look_alpha",
				    json_real(verdict_spend(&first, r->alpha,
							    (enum verdict_spending)d->spend_headline)));
		json_object_set_new(o, "equiv_level_welch", json_real(d->eq_level_welch));
	}
	return o;
}

/*
 * The families of rows whose p-values are adjusted together: the headline
 * rows (Holm: the job's verdict), the scores that lost the headline to
 * instruction rows (Holm), then the secondary rows of each tested class
 * (Benjamini-Hochberg), one family per class by its index; context rows
 * (of a class that is not tested) in none.
 */
enum family {
	FAM_HEADLINE,
	FAM_SCORE,
	FAM_CLASS,		/* + the class's index */
	FAM_NONE = FAM_CLASS + COMPARE_CLASSES_MAX,
	FAM_MAX
};

static const char *family_name(int f)
{
	const struct compare_class *c = compare_class_at((size_t)(f - FAM_CLASS));

	if (f == FAM_HEADLINE)
		return "headline";
	if (f == FAM_SCORE)
		return "time score";
	return f > FAM_SCORE && f < FAM_NONE && c ? c->name : NULL;
}

static int family_of(const struct verdict_row *row)
{
	int i;

	switch (row->role) {
	case COMPARE_ROLE_HEADLINE:
		return FAM_HEADLINE;
	case COMPARE_ROLE_SCORE:
		return FAM_SCORE;
	case COMPARE_ROLE_SECONDARY:
		i = compare_class_index(row->cls);
		return i < 0 ? FAM_NONE : FAM_CLASS + i;
	default:
		return FAM_NONE;
	}
}

static int family_holm(int f)
{
	return f == FAM_HEADLINE || f == FAM_SCORE;
}

double verdict_class_min_change(const struct compare_rules *r, const struct compare_class *cls, int own)
{
	return compare_rules_margin_pct(r, cls, COMPARE_MIN_CHANGE, own);
}

double verdict_class_margin(const struct compare_rules *r, const struct compare_class *cls)
{
	return compare_rules_margin_pct(r, cls, COMPARE_SAME_BAND, 1);
}

static const struct compare_override *override_for(const struct compare_rules *r, const char *metric)
{
	size_t i;

	for (i = 0; metric && i < r->noverrides; i++)
		if (!fnmatch(r->overrides[i].metric, metric, 0))
			return &r->overrides[i];
	return NULL;
}

/*
 * How each family spends its alpha over the looks. A family with a Welch
 * or a paired row spends most at the first look (Pocock-like): its t tests
 * can use a small alpha at 5 boots, so waiting buys little and costs boots. A family of
 * rank-tested rows spends O'Brien-Fleming-like, unless the smallest p the
 * first look's boots can give (two complete separations) is above that
 * share: then the share goes to the second look, so the looks still sum to
 * alpha and none of it is spent where it cannot buy anything. Decided from
 * the design and the rows' rules, never from the data's p-values.
 */
static void family_spending(const struct compare_rules *r, const struct verdict_design *d,
			    const struct verdict_row *rows, size_t n, enum verdict_spending *how)
{
	struct verdict_design first = *d;
	size_t i;
	int f;

	first.look = 1;
	for (f = 0; f < FAM_MAX; f++)
		how[f] = d->looks == 2 && stats_mwu_min_p((size_t)d->boots, (size_t)d->boots) >
			 verdict_look_alpha(&first, r->alpha) ? VERDICT_SPEND_SECOND : VERDICT_SPEND_OBF;
	for (i = 0; i < n; i++)
		if (rows[i].testable && rows[i].rule != VERDICT_RULE_RANK)
			how[family_of(&rows[i])] = VERDICT_SPEND_POCOCK;
}

/* The row's own rule (an override's where it sets one) and its look's alpha. */
static void row_rule(const struct compare_rules *r, const struct verdict_design *d,
		     const enum verdict_spending *how, struct verdict_row *row)
{
	const struct compare_override *ov = override_for(r, row->metric);
	double alpha = r->alpha;

	row->min_change = verdict_class_min_change(r, row->cls, row->own);
	row->margin = verdict_class_margin(r, row->cls);
	if (ov && !isnan(ov->alpha))
		alpha = ov->alpha;
	if (ov && !isnan(ov->min_change))
		row->min_change = 100 * ov->min_change;
	if (ov && !isnan(ov->same_band))
		row->margin = 100 * ov->same_band;
	/* a side of 3 boots all in a +5% mode (one boot in 5 runs there)
	 * looks like a +5% change to any test: 2.5-7% of A/A jobs at 3+3 were
	 * called so in b0008; only a change beyond any mode seen is called */
	if (row->cls && (row->cls->flags & COMPARE_CLASS_LOG_T) && row->rule != VERDICT_RULE_COUNT &&
	    (row->nb < VERDICT_FEW_BOOTS || row->np < VERDICT_FEW_BOOTS))
		row->min_change = fmax(row->min_change, 100 * r->min_change_few);
	if (row->rule == VERDICT_RULE_COUNT)
		row->min_change = row->margin = row->abs_least;
	row->alpha = verdict_spend(d, alpha, how[family_of(row)]);
}

/* Adjusts one family in place. */
static void adjust_family(struct verdict_row *rows, size_t n, int fam)
{
	double *p = xcalloc(n + 1, sizeof(*p)), *adj = xcalloc(n + 1, sizeof(*adj));
	size_t i, m = 0, *idx = xcalloc(n + 1, sizeof(*idx));

	for (i = 0; i < n; i++)
		if (rows[i].testable && family_of(&rows[i]) == fam)
			p[m] = rows[i].p, idx[m++] = i;
	if ((family_holm(fam) ? stats_holm(p, m, adj) : stats_bh(p, m, adj)) < 0)
		abort();
	for (i = 0; i < m; i++) {
		rows[idx[i]].p_adj = adj[i];
		rows[idx[i]].p_adj_method = family_holm(fam) ? "holm" : "bh";
		rows[idx[i]].family = family_name(fam);
	}
	free(p);
	free(adj);
	free(idx);
}

/* How many rows of each family were tested: the Holm (and first BH) step
 * holds a lone change against alpha / m. */
static void family_sizes(const struct verdict_row *rows, size_t n, size_t *m)
{
	size_t i;
	int f;

	for (f = 0; f < FAM_MAX; f++)
		m[f] = 0;
	for (i = 0; i < n; i++)
		m[family_of(&rows[i])] += rows[i].testable && !isnan(rows[i].p);
	for (f = 0; f < FAM_MAX; f++)
		m[f] = m[f] ? m[f] : 1;
}

static int within(double lo, double hi, double bound)
{
	return lo >= -bound && hi <= bound;
}

/* Past the least change, its interval excluding 0 and p (raw, or
 * adjusted) below the row's alpha: what a call needs. */
static int past(const struct verdict_row *row, double p)
{
	int excludes = row->have_ci ? (row->lo > 0 || row->hi < 0) : isinf(row->change);

	return !isnan(p) && p < row->alpha && excludes && !isnan(row->change) && fabs(row->change) >= row->min_change;
}

static const char *call(struct verdict_row *row)
{
	double least = fmin(row->min_change, row->margin);

	if (past(row, row->p_adj)) {
		if (!strcmp(row->direction ?: "neutral", "neutral"))
			return "changed";
		return (row->change > 0) == !strcmp(row->direction, "higher") ? "improvement" : "regression";
	}
	/* the wait floor comes after the test: 0.001 -> 0.045 spin-wait
	 * instructions per op is a change, both below the floor */
	if (row->negligible)
		return "same";
	if (row->identical)
		return "same";
	/* same promises no change the row would call: an interval that fits
	 * only the wider margin leaves room for one (a true 5% change fits a
	 * 10% margin) */
	if (row->have_eq && within(row->elo, row->ehi, least))
		return "same";
	if (row->have_eq && within(row->elo, row->ehi, row->margin))
		row->beyond = row->margin;
	return "inconclusive";
}

/* The change this row would have caught with the power asked, were it the
 * only one in its family: at alpha / m, the Holm step a lone change meets.
 * NAN when the boots cannot give a p that small at all, or when the base
 * is near 0 and a % change means nothing. */
static double detectable(const struct compare_rules *r, const struct verdict_row *row, size_t m)
{
	double a = row->alpha / (double)m, shift;
	int rank = row->rule == VERDICT_RULE_RANK;

	if (row->nb < 2 || row->np < 2 || isnan(row->sd_pct) || row->near_zero || !(a > 0) ||
	    (rank && stats_mwu_min_p(row->nb, row->np) >= a))
		return NAN;
	if (row->rule == VERDICT_RULE_PAIRED)
		shift = stats_detectable_shift_paired(row->sd_pct, row->nb, a, r->power);
	else
		shift = stats_detectable_shift(row->sd_pct, row->nb, row->np, a, r->power,
					       rank ? MWU_EFFICIENCY : 1);
	if (isnan(shift))
		return NAN;
	return fmax(shift, row->min_change);
}

/* The row form of verdict_wants_more_boots(): a headline row
 * inconclusive, or same with an equivalence interval beyond its least
 * change. */
static int rows_want_more(const struct verdict_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct verdict_row *row = &rows[i];

		if (family_of(row) != FAM_HEADLINE || !row->verdict)
			continue;
		if (!strcmp(row->verdict, "inconclusive"))
			return 1;
		if (!strcmp(row->verdict, "same") && row->have_eq && !row->negligible && !row->identical &&
		    !within(row->elo, row->ehi, row->min_change))
			return 1;
	}
	return 0;
}

/*
 * A job planned for two looks stops at the first when its headline rows
 * decide. Its other families (time scores, the secondary rows) had kept
 * alpha for the second look, a rank family all of it (5 boots a side cannot
 * reach its first-look share), so a job that stopped early never tested its
 * time rows: all 8 moved 15-21% and the job read same. When the first look
 * is the last, they spend it all now. Whether the job stops follows from the
 * headline rows alone, so each family still spends alpha once.
 */
static void spend_rest(const struct compare_rules *r, struct verdict_design *d, struct verdict_row *rows,
		       size_t n)
{
	struct verdict_design last = *d;
	enum verdict_spending how[FAM_MAX];
	size_t i;

	last.looks = last.look = 1;
	for (i = 0; i < FAM_MAX; i++)
		how[i] = VERDICT_SPEND_OBF;
	for (i = 0; i < n; i++) {
		if (!rows[i].testable || family_of(&rows[i]) == FAM_HEADLINE || family_of(&rows[i]) == FAM_NONE)
			continue;
		row_rule(r, &last, how, &rows[i]);
		rows[i].verdict = call(&rows[i]);
	}
	d->last = 1;
}

/*
 * A workload's score that its own alpha would call, were it the only one
 * in its family, but that Holm over the family cannot: its rank test at
 * these boots cannot reach Holm's first step at all (5 boots a side give
 * 0.0079 at best; Holm over 4 scores asks 0.0025). The score has no other
 * test then, so its move stands against a same. Where Holm can reach (9 a
 * side give 4e-5), Holm's call is the score's test: a raw p below alpha
 * among 6 scores happened in 4% of A/A jobs at 9+9 (b0008), and held back
 * a same that often for nothing. Held to the alpha the score has at its
 * last look, whichever look this is.
 */
static int score_moved(const struct compare_rules *r, const struct verdict_row *row, size_t m)
{
	const struct compare_override *ov = override_for(r, row->metric);
	struct verdict_row at = *row;

	if (!row->testable || family_of(row) != FAM_SCORE || strcmp(row->verdict ?: "", "inconclusive"))
		return 0;
	at.alpha = ov && !isnan(ov->alpha) ? ov->alpha : r->alpha;
	return row->rule == VERDICT_RULE_RANK && past(&at, row->p) &&
	       stats_mwu_min_p(row->nb, row->np) >= at.alpha / (double)m;
}

void verdict_decide(const struct compare_rules *r, struct verdict_design *d,
		    struct verdict_row *rows, size_t n)
{
	enum verdict_spending how[FAM_MAX];
	size_t i, m[FAM_MAX];

	family_spending(r, d, rows, n, how);
	d->spend_headline = how[FAM_HEADLINE];
	d->alpha_headline = verdict_spend(d, r->alpha, how[FAM_HEADLINE]);
	d->scores_moved = 0;
	for (i = 0; i < n; i++) {
		rows[i].p_adj = rows[i].mde = rows[i].ruled_out = rows[i].beyond = NAN;
		rows[i].p_adj_method = rows[i].family = NULL;
		rows[i].verdict = NULL;
		rows[i].moved = 0;
		row_rule(r, d, how, &rows[i]);
	}
	for (i = 0; i < FAM_NONE; i++)
		adjust_family(rows, n, (int)i);
	family_sizes(rows, n, m);
	for (i = 0; i < n; i++) {
		if (!rows[i].testable)
			continue;
		if (family_of(&rows[i]) == FAM_NONE) {
			rows[i].verdict = "context";
			continue;
		}
		rows[i].verdict = call(&rows[i]);
	}
	for (i = 0; i < n; i++)
		d->scores_moved |= rows[i].moved = score_moved(r, &rows[i], m[FAM_SCORE]);
	/* a first look whose headline rows decided is the last, unless a
	 * score moved that only the second look's boots can test (its p is
	 * held to the whole alpha there, none of it spent here: the family
	 * could call nothing at these boots) */
	d->last = 0;
	if (d->looks == 2 && d->look == 1 && !rows_want_more(rows, n) && !d->scores_moved)
		spend_rest(r, d, rows, n);
	else if (d->looks == 1 || d->look == 2)
		d->scores_moved = 0;
	for (i = 0; i < n; i++) {
		if (!rows[i].testable || family_of(&rows[i]) == FAM_NONE)
			continue;
		rows[i].mde = detectable(r, &rows[i], m[family_of(&rows[i])]);
		if (!strcmp(rows[i].verdict, "inconclusive") && rows[i].have_ci)
			rows[i].ruled_out = fmax(fabs(rows[i].lo), fabs(rows[i].hi));
	}
}

int verdict_wants_more_boots(const json_t *comparison)
{
	const json_t *design = json_object_get(comparison, "design"), *row;
	size_t i;

	if (jsonget_int_or(design, "look", 0) != 1 ||
	    jsonget_int_or(design, "looks", 0) != 2)
		return 0;
	if (json_is_true(json_object_get(design, "scores_moved")))
		return 1;
	json_array_foreach(json_object_get(comparison, "rows"), i, row) {
		const char *v = jsonget_str(row, "verdict") ?: "";
		const json_t *eq = json_object_get(row, "equiv_ci");
		double least = jsonget_num_or(row, "min_change_pct", 0);

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
