/*
 * The rows of a comparison: one per row key seen on either side. A row's
 * samples are its groups' per-boot medians; its statistics are the
 * medians and spread of each side, the change, the Mann-Whitney p, the
 * bootstrap interval of the change and the equivalence interval; its
 * verdict is decided with all rows' at once (verdict.c), since their
 * p-values are adjusted as families.
 *
 * (Over 800 lines for now: a row's statistics (medians, spread, the tests
 * a class's flags ask for, the intervals) are steps over one row's state;
 * which tests a row takes comes from its class's row (compare_class.h), the
 * tests themselves are here.)
 */
#include "compare.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare_int.h"
#include "compare_class.h"
#include "stats.h"
#include "util.h"
#include "verdict.h"
#include "banned.h"

static int is_own(const char *workload, const char *metric)
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

/* 1 when there are values and every one is below bound */
static int all_below(const double *a, size_t n, double bound)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!(a[i] < bound))
			return 0;
	return n > 0;
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

/* The same from the per-boot log values of the paired boots: what the
 * spread of a row would be were its boots not paired, in %. */
static double pooled_sd_pct_logs(const double *lb, const double *lp, size_t n)
{
	double vb, vp;

	if (n < 2)
		return NAN;
	vb = stats_stddev(lb, n);
	vp = stats_stddev(lp, n);
	return 100 * sqrt((vb * vb + vp * vp) / 2);
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
 * interval of the shift (Hodges-Lehmann, Moses, widened by Brunner-Munzel:
 * stats_shift_ci_wide) at the
 * design's level, of log values when all are positive (a shift of logs is
 * a ratio), else of the values, in % of the base median. It inverts the
 * test the verdict uses, and is far narrower than a bootstrap of medians
 * from the same few boots, which is what makes `same` reachable at a
 * useful margin.
 */
static void row_equivalence(struct verdict_row *v, const double *b, size_t nb, const double *p,
			    size_t np, double cb, const struct verdict_design *d)
{
	double *lb, *lp, lo, hi;
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
		if (stats_shift_ci_wide(lb, nb, lp, np, d->eq_level, &lo, &hi) == 0) {
			v->have_eq = 1;
			v->elo = 100 * expm1(lo);
			v->ehi = 100 * expm1(hi);
		}
		free(lb);
		free(lp);
	} else if (cb != 0 && stats_shift_ci_wide(b, nb, p, np, d->eq_level, &lo, &hi) == 0) {
		v->have_eq = 1;
		v->elo = 100 * lo / fabs(cb);
		v->ehi = 100 * hi / fabs(cb);
	}
}

/* The variance of the median of k normal values, in units of one's
 * (exact for k <= 2, tabulated to 5, pi / 2k beyond). */
static double median_var_factor(size_t k)
{
	static const double f[] = { 1, 1, 0.5, 0.4487, 0.3433, 0.2868 };

	return k < ARRAY_SIZE(f) ? f[k] : M_PI / (2.0 * (double)k);
}

/*
 * The noise floor a row's iterations give: the spread of log values within
 * boots, scaled to what it alone would make of a boot's median. A boot's
 * median varies at least that much (the boot's own effect comes on top),
 * so a per-boot sd below it is luck, not quiet. The spread is robust, as
 * the median it guards is: 1.0483 times the median of the absolute
 * differences between two iterations of one boot (for normal values that
 * median is 0.9539 sd), so a window now and then in a rarer, slower mode
 * moves the floor no more than it moves a boot's median. In an A/A job
 * (b0009, 2026-12-03), one window of mremap from 2 workers in 27 on one
 * side ran 7.6% slower: the sd of the iterations made that side's floor
 * 0.95%, over 4 times the spread of its boots' medians (0.23%); this one
 * makes it 0.105%. 0 when no boot has two positive iterations.
 */
static double within_floor(const json_t *g)
{
	const json_t *vals;
	double *d = NULL, kf = 0, sd;
	size_t i, j, m, nd = 0, cap = 0, nb = 0;

	json_array_foreach(json_object_get(g, "boots"), i, vals) {
		size_t k = json_array_size(vals);

		if (k < 2)
			continue;
		for (j = 0; j < k; j++)
			if (!(json_number_value(json_array_get(vals, j)) > 0)) {
				free(d);
				return 0;
			}
		if (nd + k * (k - 1) / 2 > cap) {
			cap = 2 * (nd + k * (k - 1) / 2);
			d = xrealloc(d, cap * sizeof(*d));
		}
		for (j = 0; j < k; j++)
			for (m = j + 1; m < k; m++)
				d[nd++] = fabs(log(json_number_value(json_array_get(vals, j))) -
					       log(json_number_value(json_array_get(vals, m))));
		kf += median_var_factor(k);
		nb++;
	}
	if (!nb) {
		free(d);
		return 0;
	}
	sd = 1.0483 * stats_median(d, nd);
	free(d);
	return sd * sqrt(kf / (double)nb);
}

static void logs_of(const double *v, size_t n, double *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = log(v[i]);
}

/* A t test's p, its ci and its equivalence interval, as % changes of the
 * ratio exp(diff), into v. */
static void t_intervals(struct verdict_row *v, const struct stats_welch *w, const struct compare_rules *r,
			const struct verdict_design *d)
{
	double q = stats_t_quantile(1 - r->ci_level, w->df) * w->se;

	v->p = w->p;
	v->have_ci = 1;
	v->lo = 100 * expm1(w->diff - q);
	v->hi = 100 * expm1(w->diff + q);
	q = stats_t_quantile(1 - d->eq_level_welch, w->df) * w->se;
	v->have_eq = 1;
	v->elo = 100 * expm1(w->diff - q);
	v->ehi = 100 * expm1(w->diff + q);
}

/*
 * Work and wait rows (near-deterministic: instruction counts per op): a
 * rank test at 5 boots a side cannot give a p below 0.008, which Holm over
 * the headline rows cannot use. Welch's t on the log per-boot values can,
 * with each side's sd floored by the noise the row is known to have (the
 * rules' noise_floor, or its iterations' spread within boots, whichever is
 * larger), so boots that happen to agree do not make a 0.1% change look
 * certain. The 95% interval (ci) and the equivalence interval are the t
 * intervals of the same difference of mean logs, as ratios.
 */
static int row_welch(json_t *obj, struct verdict_row *v, const double *b, size_t nb, const double *p,
		     size_t np, double floor, const struct compare_rules *r, const struct verdict_design *d)
{
	double *lb = xcalloc(nb, sizeof(*lb)), *lp = xcalloc(np, sizeof(*lp));
	struct stats_welch w;
	int rc;

	logs_of(b, nb, lb);
	logs_of(p, np, lp);
	rc = stats_welch(lb, nb, lp, np, floor, &w);
	if (rc == 0) {
		t_intervals(v, &w, r, d);
		/* the sd the test used, of a side of one boot */
		v->sd_pct = 100 * w.se / sqrt(1 / (double)nb + 1 / (double)np);
		json_object_set_new(obj, "noise_floor_pct", json_real(100 * floor));
		json_object_set_new(obj, "ci_kind", json_string("Welch t interval of the ratio of "
								"geometric means"));
	}
	free(lb);
	free(lp);
	return rc;
}

/*
 * Boots in a mode of their own. Under icount a work row's boots agree to
 * about 0.1%, yet a whole boot can run in another state: mremap from 1 and
 * 2 workers did, in 2 boots of 18, 15-16% more kernel instructions per
 * move in every window of the boot (its agent's address space put a home
 * with no reserved neighbour in the maple tree; fixed in the workload,
 * docs/emulated-work.md), and other states of the kernel's own can do the
 * same. Welch's sd takes such a boot for noise and can
 * then rule out nothing (the row could have seen 8.8%, not 1%). A boot is
 * in a mode of its own when its value lies further from the median of both
 * sides' boots than MODE_FENCE robust sds: 1.4826 MAD of both sides' log
 * values, at least the row's noise floor (pooled_centre). A change that
 * moves every boot of a side widens that MAD with it, so it is no mode;
 * one that moves most of a side's boots leaves more than MODE_MAX_SHARE of
 * the side in the mode, and the row is ranked. A side needs MODE_MIN_BOOTS
 * boots, more than a first look has: the MAD of 5 boots is too often
 * small, and flagging ordinary boots there cost the first look a tenth of
 * its power at 0.2% noise (tests/bench/b0008). A first look with a boot in
 * a mode is undecided by Welch's wide sd, adds boots, and the second look
 * sees the mode.
 */
#define MODE_FENCE 6.0
#define MODE_MIN_BOOTS 6
#define MODE_MAX_SHARE 3	/* at most a third of a side is set aside */

/* The robust sd of a side's log values (1.4826 MAD), at least floor. */
static double robust_sd_log(const double *v, size_t n, double floor)
{
	double *l = xcalloc(n, sizeof(*l)), med, mad;
	size_t i;

	logs_of(v, n, l);
	med = stats_median(l, n);
	for (i = 0; i < n; i++)
		l[i] = fabs(l[i] - med);
	mad = stats_median(l, n);
	free(l);
	return fmax(1.4826 * mad, floor);
}

/*
 * The centre boots are measured from: the median of both sides' boots
 * together and their robust sd (1.4826 MAD of the log values, at least
 * floor). Both sides are measured from one centre so that what is set
 * aside is the same kind of boot on each: from each side's own median, a
 * side with most of its boots in the mode called the ordinary ones the
 * mode, Welch then held one side's mode against the other's ordinary
 * boots, and A/A jobs under one boot in 5 at +5% made false calls in 3.5%
 * at 9+9 once a third of a side could be set aside (b0008). A change that
 * moves a whole side moves the pooled median between the sides and widens
 * the pooled MAD with it, so it is no mode.
 */
static void pooled_centre(const double *b, size_t nb, const double *p, size_t np, double floor, double *ret_med,
			  double *ret_sd)
{
	double *all = xcalloc(nb + np, sizeof(*all));

	memcpy(all, b, nb * sizeof(*all));
	memcpy(all + nb, p, np * sizeof(*all));
	*ret_med = stats_median(all, nb + np);
	*ret_sd = robust_sd_log(all, nb + np, floor);
	free(all);
}

/*
 * How many of a side's boots (all values > 0) are in a mode of their own,
 * beyond MODE_FENCE sds from the centre med; their offsets from it, in %,
 * appended to offsets. The log values of the boots kept go to keep
 * (*ret_kept of them): all but those in a mode when they are at most
 * MODE_MAX_SHARE of the side, else all.
 */
static size_t mode_boots(const double *v, size_t n, double med, double sd, json_t *offsets, double *keep,
			 size_t *ret_kept)
{
	size_t i, k = 0, kept = 0;
	char *out = xcalloc(n + 1, 1);

	if (n >= MODE_MIN_BOOTS)
		for (i = 0; i < n; i++)
			if (fabs(log(v[i] / med)) > MODE_FENCE * sd) {
				json_array_append_new(offsets, json_real(100 * (v[i] / med - 1)));
				out[i] = 1;
				k++;
			}
	for (i = 0; i < n; i++)
		if (!out[i] || k > n / MODE_MAX_SHARE)
			keep[kept++] = log(v[i]);
	*ret_kept = kept;
	free(out);
	return k;
}

/*
 * A work or wait row whose boots fall into modes: the boots in a mode are
 * set aside when they are at most a third of each side, and the rest are
 * Welch-tested as any work row (row_set_aside); with more, the row is
 * ranked (Mann-Whitney, Hodges-Lehmann/Moses), as all such rows once were. A boot in another
 * mode then costs its side one boot, not its distance, and the test keeps
 * the t test's power: the rank test used before could not call a clean
 * +2% with one base boot of 9 in a +15% mode (a Mann-Whitney p near 0.005,
 * which Holm over 12 headline rows never calls: 59% of such rows called
 * in b0008), and Yuen's trimmed t, tried next, lost so much width to its
 * winsorized sd that an A/A job at the lab's noise was same in 64% (83.75%
 * setting boots aside). Which boots are set aside follows from both sides
 * pooled (pooled_centre), never from the difference between them. With
 * one boot in 20 in the mode, a side of 9 has 3 in it 0.8% of the time and
 * a job has 12 sides: at most a quarter (2 of 9) left a tenth of A/A jobs
 * at the lab's noise inconclusive. More than a third cannot be set aside,
 * and the row is ranked: a patch that moves 4 boots of 9 into the mode is
 * not same. The fence is 6 robust sds, so a boot of plain noise is set
 * aside about never. 1 when boots were set aside (obj says which, and the
 * log values kept are in kb and kp), -1 when a side has more than a third
 * in a mode (the row is ranked; obj says which), 0 when none is in a mode
 * (obj untouched).
 */
static int row_modes(json_t *obj, struct verdict_row *v, const double *b, size_t nb, const double *p, size_t np, double floor,
		     double *kb, size_t *ret_nkb, double *kp, size_t *ret_nkp)
{
	json_t *ob = json_array(), *op = json_array();
	double med, sd, sb, sp;
	size_t mb, mp;
	int ranked;

	pooled_centre(b, nb, p, np, floor, &med, &sd);
	mb = mode_boots(b, nb, med, sd, ob, kb, ret_nkb);
	mp = mode_boots(p, np, med, sd, op, kp, ret_nkp);
	if (!mb && !mp) {
		json_decref(ob);
		json_decref(op);
		return 0;
	}
	ranked = mb > nb / MODE_MAX_SHARE || mp > np / MODE_MAX_SHARE;
	if (ranked) {
		sb = robust_sd_log(b, nb, floor);
		sp = robust_sd_log(p, np, floor);
		v->sd_pct = 100 * sqrt(((double)(nb - 1) * sb * sb + (double)(np - 1) * sp * sp) /
				       (double)(nb + np - 2));
	}
	json_object_set_new(obj, "mode_boots", json_pack("{s:o,s:o,s:f,s:[I,I]}", "base", ob, "patched", op,
							 "fence_pct", 100 * MODE_FENCE * sd, "set_aside",
							 (json_int_t)(nb - *ret_nkb), (json_int_t)(np - *ret_nkp)));
	return ranked ? -1 : 1;
}

/* Welch's t on the log values kept by row_modes (kb, kp), each side's sd
 * at least floor: p, ci and equivalence interval as row_welch's. */
static int row_set_aside(json_t *obj, struct verdict_row *v, const double *kb, size_t nkb, const double *kp,
			 size_t nkp, double floor, const struct compare_rules *r, const struct verdict_design *d)
{
	struct stats_welch w;

	if (stats_welch(kb, nkb, kp, nkp, floor, &w) < 0)
		return -1;
	t_intervals(v, &w, r, d);
	v->sd_pct = 100 * w.se / sqrt(1 / (double)nkb + 1 / (double)nkp);
	json_object_set_new(obj, "noise_floor_pct", json_real(100 * floor));
	json_object_set_new(obj, "ci_kind", json_string("Welch t interval of the ratio of geometric means, "
							"boots in a mode of their own set aside"));
	return 0;
}

/* The median of the iterations of boot `boot_id` of side s in group g:
 * 0, or -1 when that boot has none. */
static int boot_median(const json_t *g, const struct side *s, const char *boot_id, double *ret)
{
	struct strbuf key = STRBUF_INIT;
	const json_t *idx, *vals, *x;
	double *v;
	size_t k, j;

	strbuf_addf(&key, "boot:%s", boot_id ? boot_id : "");
	idx = json_object_get(s->boots, key.buf);
	strbuf_release(&key);
	vals = idx ? json_array_get(json_object_get(g, "boots"), (size_t)json_integer_value(idx)) : NULL;
	if (!(k = json_array_size(vals)))
		return -1;
	v = xcalloc(k, sizeof(*v));
	json_array_foreach(vals, j, x)
		v[j] = json_number_value(x);
	*ret = stats_median(v, k);
	free(v);
	return 0;
}

/*
 * Time rows of a job whose boots ran as duets (design.pairs: the base and
 * the patched kernel booted at once on the two machines of a duet, a host
 * CPU each): what disturbed the host in a round disturbed both sides of
 * it, so each round's ratio patched/base carries far less of the host's
 * noise than either side's boots do. The test is the paired t on the log
 * ratios, their sd floored by the spread within boots (of both sides),
 * and the intervals are its t intervals, as ratios. -1 when fewer than 3
 * rounds have the row on both sides (the rank rule applies then).
 */
static int row_paired(json_t *obj, struct verdict_row *v, const json_t *gb, const json_t *gp,
		      const struct side *sb, const struct side *sp, const struct compare_rules *r,
		      const struct verdict_design *d)
{
	const json_t *pairs = sb->doc == sp->doc ? json_object_get(json_object_get(sb->doc, "design"), "pairs")
						  : NULL, *pr;
	size_t k, n = 0, np = json_array_size(pairs);
	double *lb, *lp, *ratio, floor, x, y;
	struct stats_welch w;
	int rc = -1;

	if (!gb || !gp || np < 3)
		return -1;
	lb = xcalloc(np, sizeof(*lb));
	lp = xcalloc(np, sizeof(*lp));
	ratio = xcalloc(np, sizeof(*ratio));
	json_array_foreach(pairs, k, pr) {
		if (boot_median(gb, sb, json_string_value(json_array_get(pr, 0)), &x) < 0 ||
		    boot_median(gp, sp, json_string_value(json_array_get(pr, 1)), &y) < 0 || !(x > 0) || !(y > 0))
			continue;
		lb[n] = log(x);
		lp[n] = log(y);
		ratio[n] = lp[n] - lb[n];
		n++;
	}
	floor = hypot(fmax(r->noise_floor, within_floor(gb)), fmax(r->noise_floor, within_floor(gp)));
	if (n >= 3 && stats_paired_t(lb, lp, n, floor, &w) == 0) {
		t_intervals(v, &w, r, d);
		/* the sd of one round's log ratio the test used, in % */
		v->sd_pct = 100 * w.se * sqrt((double)n);
		v->nb = v->np = n;
		json_object_set_new(obj, "paired", json_pack("{s:I,s:o,s:o,s:o}", "rounds", (json_int_t)n,
			"ratio_spread_pct", jreal(100 * stats_stddev(ratio, n)),
			"unpaired_spread_pct", jreal(pooled_sd_pct_logs(lb, lp, n)),
			"noise_floor_pct", jreal(100 * floor)));
		json_object_set_new(obj, "ci_kind", json_string("paired t interval of the ratio (duet rounds)"));
		rc = 0;
	}
	free(lb);
	free(lp);
	free(ratio);
	return rc;
}

/*
 * The interval reported (ci) at the rules' ci_level, as % change: a
 * bootstrap of the ratio of medians where the base's resampled median is
 * never 0; else of the difference of medians, in % of the base median when
 * that is not 0, or in the metric's unit (ci_abs, no % at all) when it is.
 * With so few boots that no such interval can reach ci_level, the row's
 * ci_level says the level it has: 1 - 2 / C(nb + np, nb), the smallest
 * p a rank test of them can give (stats_mwu_min_p). All of one side's
 * boots lie below all of the other's with chance 1 / C(nb + np, nb) when
 * nothing changed, and then no interval within the boots' range holds 0:
 * at 3+3 that is 1 in 20 each way, so at most 90%, however wide the
 * bootstrap is asked to be (b0008 measured 90.25% at 3+3 with ci_level
 * 0.95, 0.98 or 0.99).
 */
static void row_interval(json_t *obj, struct verdict_row *v, const double *b, size_t nb,
			 const double *p, size_t np, double cb, const struct compare_rules *r)
{
	double lo, hi, cap = 1 - stats_mwu_min_p(nb, np);
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
	if (cap < r->ci_level)
		json_object_set_new(obj, "ci_level", json_real(floor(1000 * cap) / 1000));
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/*
 * A work row from a base near 0 (a count that was 0, or below its own
 * spread), or a wait row below the wait floor on every boot of both
 * sides: a ratio means nothing there (0 -> 1000 shootdowns per kop is
 * +inf%, 0.001 -> 33 printed +3,306,281%), and a rank test of 3 boots a
 * side cannot give a p below 0.1 however far apart they are. The change is
 * the difference of the means, in the row's unit, tested by Welch's t on
 * the values (each side's sd at least the noise floor of the larger mean),
 * and held against an absolute least change, `least`. -1 when the values
 * give no test (fewer than 2 boots a side, or no spread and no floor: both
 * sides all 0).
 */
static int row_count(json_t *obj, struct verdict_row *v, const double *b, size_t nb, const double *p,
		     size_t np, double cb, double cp, double least, const struct compare_rules *r,
		     const struct verdict_design *d)
{
	struct stats_welch w;
	double q;

	if (nb < 2 || np < 2 || stats_welch(b, nb, p, np, r->noise_floor * fmax(fabs(cb), fabs(cp)), &w) < 0)
		return -1;
	v->abs_least = least;
	v->p = w.p;
	v->change = w.diff;
	q = stats_t_quantile(1 - r->ci_level, w.df) * w.se;
	v->have_ci = 1;
	v->lo = w.diff - q;
	v->hi = w.diff + q;
	q = stats_t_quantile(1 - d->eq_level_welch, w.df) * w.se;
	v->have_eq = 1;
	v->elo = w.diff - q;
	v->ehi = w.diff + q;
	json_object_set_new(obj, "change_abs", json_real(w.diff));
	json_object_set_new(obj, "ci_abs", json_pack("[f,f]", v->lo, v->hi));
	json_object_set_new(obj, "ci_kind", json_string("Welch t interval of the difference of means, in the "
							"row's unit (the base is near 0)"));
	return 0;
}

/*
 * The least absolute change of a row tested by row_count: the rules'
 * min_change_count events per operation (a row per kop: 1000 times that);
 * for a row below its class's floor, a tenth of the floor (spin-wait
 * instructions per op).
 */
static double count_least(const json_t *obj, const struct verdict_row *v, const struct compare_rules *r)
{
	if (v->negligible)
		return r->wait_floor / 10;
	return r->min_change_count * (ends_with(jsonget_str(obj, "unit"), "/kop") ? 1000 : 1);
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
	double cb, cp, change, pval = NAN, u, floor = 0;
	struct strbuf why = STRBUF_INIT, note = STRBUF_INIT;
	int welch_ok, modes = 0;
	unsigned flags;
	double *kb = xcalloc(nb + 1, sizeof(*kb)), *kp = xcalloc(np + 1, sizeof(*kp));
	size_t nkb = 0, nkp = 0;

	if (!b || !p)
		abort();
	memset(v, 0, sizeof(*v));
	v->metric = jsonget_str(obj, "metric");
	v->direction = jsonget_str(obj, "direction");
	v->cls = compare_class_find(jsonget_str(obj, "class"));
	flags = v->cls ? v->cls->flags : 0;
	v->own = is_own(jsonget_str(obj, "workload"), v->metric);
	v->p = v->change = v->sd_pct = NAN;
	json_object_set_new(obj, "base", side_stats(b, nb));
	json_object_set_new(obj, "patched", side_stats(p, np));
	json_object_set_new(obj, "outliers", json_integer(count_outliers(b, nb, r->outlier_z) +
							 count_outliers(p, np, r->outlier_z)));
	if (!nb || !np) {
		const struct side *missing = !nb ? sb : sp;
		const json_t *g = !nb ? gb : gp, *other = !nb ? gp : gb;
		const char *side_why = compare_side_unavailable(missing, jsonget_str(obj, "metric"));

		if (g && jsonget_str(g, "unavailable"))
			strbuf_addf(&why, "unavailable on %s: %s", missing->name, jsonget_str(g, "unavailable"));
		else if (side_why)
			strbuf_addf(&why, "unavailable on %s: %s", missing->name, side_why);
		else if (other && jsonget_str(other, "unavailable") && !(nb || np))
			strbuf_addf(&why, "unavailable: %s", jsonget_str(other, "unavailable"));
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
	v->identical = all_equal(b, nb, p, np);
	v->negligible = (flags & COMPARE_CLASS_FLOOR) && all_below(b, nb, r->wait_floor) &&
			all_below(p, np, r->wait_floor);
	v->sd_pct = pooled_sd_pct(b, nb, p, np, cb);
	/* a base median below its own per-boot sd: a % change means nothing */
	v->near_zero = cb == 0 || (!isnan(v->sd_pct) && v->sd_pct > 100);
	json_object_set_new(obj, "change_pct", isinf(change) ? json_null() : jreal(change));
	if (!(flags & COMPARE_CLASS_TESTED)) {
		/* shown, not tested: no p, no interval */
		json_object_set_new(obj, "p", json_null());
		json_object_set_new(obj, "ci", json_null());
		strbuf_addf(&why, "%s: %s; shown beside the tested rows", v->cls ? v->cls->name : "?",
			    v->cls ? v->cls->legend : "not tested");
		json_object_set_new(obj, "reason", json_string(why.buf));
		goto out;
	}
	welch_ok = (flags & COMPARE_CLASS_LOG_T) && nb >= 2 && np >= 2 &&
		   all_positive(b, nb) && all_positive(p, np);
	if (welch_ok) {
		floor = fmax(r->noise_floor, fmax(within_floor(gb), within_floor(gp)));
		modes = row_modes(obj, v, b, nb, p, np, floor, kb, &nkb, kp, &nkp);
	}
	if ((flags & COMPARE_CLASS_PAIRED) && row_paired(obj, v, gb, gp, sb, sp, r, d) == 0) {
		v->rule = VERDICT_RULE_PAIRED;
		json_object_set_new(obj, "p_method", json_string("paired t"));
	} else if ((((flags & COMPARE_CLASS_NEAR_ZERO) && v->near_zero) || v->negligible) &&
		   row_count(obj, v, b, nb, p, np, cb, cp, count_least(obj, v, r), r, d) == 0) {
		v->rule = VERDICT_RULE_COUNT;
		json_object_set_new(obj, "p_method", json_string("welch, absolute"));
		/* a ratio from near 0 means nothing (0.03 -> 999.8 once
		 * printed +3,300,690%): change_abs says what changed */
		json_object_set_new(obj, "change_pct", json_null());
	} else if (welch_ok && !modes && row_welch(obj, v, b, nb, p, np, floor, r, d) == 0) {
		v->rule = VERDICT_RULE_WELCH;
		json_object_set_new(obj, "p_method", json_string("welch"));
	} else if (welch_ok && modes > 0 && row_set_aside(obj, v, kb, nkb, kp, nkp, floor, r, d) == 0) {
		v->rule = VERDICT_RULE_SET_ASIDE;
		json_object_set_new(obj, "p_method", json_string("welch, modes set aside"));
	} else {
		v->rule = VERDICT_RULE_RANK;
		if (stats_mann_whitney(b, nb, p, np, &u, &pval) == 0)
			v->p = pval;
		row_interval(obj, v, b, nb, p, np, cb, r);
		row_equivalence(v, b, nb, p, np, cb, d);
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
	}
	json_object_set_new(obj, "p", jreal(v->p));
	if (v->rule == VERDICT_RULE_COUNT) {
		json_object_set_new(obj, "ci", json_null());
		json_object_set_new(obj, "equiv_ci", json_null());
		json_object_set_new(obj, "equiv_ci_abs", json_pack("[f,f]", v->elo, v->ehi));
	} else {
		json_object_set_new(obj, "ci", v->have_ci ? json_pack("[f,f]", v->lo, v->hi) : json_null());
		json_object_set_new(obj, "equiv_ci", v->have_eq ? json_pack("[f,f]", v->elo, v->ehi) : json_null());
	}
	if (modes)
		strbuf_addf(&note, "boots in a mode of their own (beyond %g robust sds of both sides' median): "
			    "base %zu of %zu, patched %zu of %zu; %s; ", MODE_FENCE,
			    json_array_size(json_object_get(json_object_get(obj, "mode_boots"), "base")), nb,
			    json_array_size(json_object_get(json_object_get(obj, "mode_boots"), "patched")), np,
			    modes > 0 ? "set aside, Welch on the rest" : "more than a third of a side: ranked");
	if (v->rule == VERDICT_RULE_COUNT)
		strbuf_addf(&note, "the base is near 0: the change is absolute, %+.4g %s", v->change,
			    jsonget_str(obj, "unit"));
	else if (cb == 0 && cp != 0)
		strbuf_addf(&note, "base is 0: no ratio; the verdict rests on p alone");
	else if (nb != np)
		strbuf_addf(&note, "%zu boots on base, %zu on patched", nb, np);
	strbuf_trim(&note);
	if (note.len && note.buf[note.len - 1] == ';')
		strbuf_setlen(&note, note.len - 1);
	if (note.len)
		json_object_set_new(obj, "note", json_string(note.buf));
out:
	strbuf_release(&why);
	strbuf_release(&note);
	free(kb);
	free(kp);
	free(b);
	free(p);
}

/* A change of the row's, as the row states it: "+1.2%", or for a row of
 * absolute changes "+0.95 events/kop" (sign: with a sign) */
static void add_change(struct strbuf *sb, const struct verdict_row *v, const json_t *obj, double x, int sign)
{
	if (v->rule == VERDICT_RULE_COUNT)
		strbuf_addf(sb, sign ? "%+.4g %s" : "%.4g %s", x, jsonget_str(obj, "unit"));
	else
		strbuf_addf(sb, sign ? "%+.2f%%" : "%.1f%%", x);
}

/* A row's decision (verdict_decide) into its JSON. */
static void row_decision(struct row *row, const struct compare_rules *r)
{
	const struct verdict_row *v = &row->v;
	json_t *obj = row->obj;
	struct strbuf sb = STRBUF_INIT;
	int abs_rule;

	if (!v->testable)
		return;
	json_object_set_new(obj, "verdict", json_string(v->verdict));
	if (!strcmp(v->verdict, "context"))
		return;
	abs_rule = v->rule == VERDICT_RULE_COUNT;
	json_object_set_new(obj, "family", json_string(v->family ?: "none"));
	json_object_set_new(obj, "p_adj", jreal(v->p_adj));
	json_object_set_new(obj, "p_adj_method", v->p_adj_method ? json_string(v->p_adj_method) : json_null());
	json_object_set_new(obj, "alpha", json_real(v->alpha));
	json_object_set_new(obj, "min_change_pct", abs_rule ? json_null() : json_real(v->min_change));
	json_object_set_new(obj, "margin_pct", abs_rule ? json_null() : json_real(v->margin));
	if (abs_rule)
		json_object_set_new(obj, "min_change_abs", json_real(v->min_change));
	if (v->moved)
		json_object_set_new(obj, "moved_alone", json_true());
	json_object_set_new(obj, "mde_pct", jreal(v->mde));
	json_object_set_new(obj, "ruled_out_pct", jreal(v->ruled_out));
	json_object_set_new(obj, "no_change_beyond_pct", jreal(v->beyond));
	if (isnan(v->mde)) {
		if (v->near_zero)
			strbuf_addstr(&sb, "the base median is near 0 (below its per-boot spread): "
				      "no change in % can be stated");
		else
			strbuf_addf(&sb, "with %zu and %zu boots no change can be detected here", v->nb, v->np);
		json_object_set_new(obj, "mde_note", json_string(sb.buf));
		strbuf_reset(&sb);
	}
	if (!strcmp(v->verdict, "same") && v->negligible) {
		strbuf_addf(&sb, "every boot of both sides spun less than %g spin-wait instructions per "
			    "operation (the rules' wait_floor): none to speak of", r->wait_floor);
		json_object_set_new(obj, "reason", json_string(sb.buf));
	} else if (!strcmp(v->verdict, "same") && v->have_eq) {
		strbuf_addstr(&sb, "the change lies in ");
		add_change(&sb, v, obj, v->elo, 1);
		strbuf_addstr(&sb, "..");
		add_change(&sb, v, obj, v->ehi, 1);
		strbuf_addstr(&sb, " (equivalence interval), within +-");
		add_change(&sb, v, obj, fmin(v->min_change, v->margin), 0);
		json_object_set_new(obj, "reason", json_string(sb.buf));
	} else if (abs_rule && strcmp(v->verdict, "inconclusive")) {
		strbuf_addf(&sb, "from a base near 0: ");
		add_change(&sb, v, obj, v->change, 1);
		strbuf_addf(&sb, " (95%% interval %+.4g..%+.4g), p %.2g; the least change called is ", v->lo, v->hi,
			    v->p_adj);
		add_change(&sb, v, obj, v->min_change, 0);
		json_object_set_new(obj, "reason", json_string(sb.buf));
	}
	if (!strcmp(v->verdict, "inconclusive") && abs_rule) {
		strbuf_addstr(&sb, "from a base near 0: ");
		add_change(&sb, v, obj, v->change, 1);
		strbuf_addf(&sb, " (95%% interval %+.4g..%+.4g, equivalence %+.4g..%+.4g); a change needs p below "
			    "%.2g and at least ", v->lo, v->hi, v->elo, v->ehi, v->alpha);
		add_change(&sb, v, obj, v->min_change, 0);
		strbuf_addstr(&sb, ", same the equivalence interval within it");
		json_object_set_new(obj, "reason", json_string(sb.buf));
	} else if (!strcmp(v->verdict, "inconclusive")) {
		if (!isnan(v->beyond))
			strbuf_addf(&sb, "no change beyond %.1f%% (equivalence interval %+.1f%%..%+.1f%%); "
				    "same needs it within +-%.1f%%", v->beyond, v->elo, v->ehi,
				    fmin(v->min_change, v->margin));
		else if (!isnan(v->ruled_out))
			strbuf_addf(&sb, "changes larger than %.1f%% ruled out (95%% interval)", v->ruled_out);
		else
			strbuf_addstr(&sb, "no interval: no change ruled out");
		if (!isnan(v->mde))
			strbuf_addf(&sb, "; this job could detect %.1f%%", v->mde);
		if (!v->have_eq)
			strbuf_addstr(&sb, "; too few boots for an equivalence interval");
		else if (isnan(v->beyond))
			strbuf_addf(&sb, "; same needs the interval within +-%.1f%%",
				    fmin(v->min_change, v->margin));
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
	c = strcmp(jsonget_str(a->obj, "workload"), jsonget_str(b->obj, "workload"));
	if (c)
		return c;
	c = strcmp(jsonget_str(a->obj, "params_text"), jsonget_str(b->obj, "params_text"));
	if (c)
		return c;
	if (a->headline != b->headline)
		return b->headline - a->headline;
	return strcmp(a->metric, b->metric);
}

static json_t *row_from_group(const json_t *g)
{
	struct strbuf pt = STRBUF_INIT;
	const char *wl = jsonget_str(g, "workload"), *metric = jsonget_str(g, "metric");
	const struct compare_class *cls = compare_class_of(wl, metric, jsonget_str(g, "unit"),
							   jsonget_str(g, "direction"));
	json_t *obj;

	compare_params_text(&pt, json_object_get(g, "params"));
	obj = json_pack("{s:O,s:O,s:s,s:O,s:s,s:s,s:s,s:s,s:s,s:b}",
			"spec", json_object_get(g, "spec"), "case", json_object_get(g, "case"),
			"workload", wl, "params", json_object_get(g, "params"), "params_text", pt.buf,
			"metric", metric, "unit", jsonget_str(g, "unit"), "direction", jsonget_str(g, "direction"),
			"class", cls ? cls->name : "?", "counter", !is_own(wl, metric));
	strbuf_release(&pt);
	return obj;
}

/*
 * Each row's role (compare_class.h): a case whose rows include the
 * workload's kernel_insn_per_op (on either side) has the plugin's
 * instruction rows as its headline; else one with perf_kernel_insn_per_op
 * has perf's; otherwise its score is.
 */
static void assign_roles(struct row *rows, size_t n)
{
	json_t *insn = json_object();
	struct strbuf key = STRBUF_INIT;
	size_t i;

	for (i = 0; i < n; i++) {
		const char *wl = jsonget_str(rows[i].obj, "workload");
		char *pc = compare_params_canon(json_object_get(rows[i].obj, "params"));
		enum compare_insn src = compare_insn_marker(wl, rows[i].metric);
		json_int_t had;

		compare_row_key(&key, rows[i].spec, wl, pc, "");
		free(pc);
		had = jsonget_int_or(insn, key.buf, 0);
		/* the plugin's, where a case has both */
		if (src != COMPARE_INSN_NONE && (!had || (json_int_t)src < had))
			json_object_set_new(insn, key.buf, json_integer(src));
		rows[i].key_case = xstrdup(key.buf);
	}
	for (i = 0; i < n; i++) {
		const char *wl = jsonget_str(rows[i].obj, "workload");
		enum compare_role role = compare_role_of(wl, rows[i].metric, rows[i].v.cls,
			(enum compare_insn)jsonget_int_or(insn, rows[i].key_case, 0));

		rows[i].v.role = role;
		rows[i].headline = role == COMPARE_ROLE_HEADLINE;
		json_object_set_new(rows[i].obj, "role", json_string(compare_role_name(role)));
		json_object_set_new(rows[i].obj, "headline", json_boolean(rows[i].headline));
		free(rows[i].key_case);
		rows[i].key_case = NULL;
	}
	json_decref(insn);
	strbuf_release(&key);
}

struct row *compare_build_rows(struct side *sb, struct side *sp, const struct compare_rules *r,
		       struct verdict_design *d, size_t *ret_n)
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
			jsonget_int(rows[n].obj, "spec", &v);
			rows[n].spec = v;
			jsonget_int(rows[n].obj, "case", &v);
			rows[n].cas = v;
			rows[n].metric = jsonget_str(rows[n].obj, "metric");
			n++;
		}
	}
	assign_roles(rows, n);
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
		row_decision(&rows[i], r);
	}
	free(vr);
	*ret_n = n;
	return rows;
}
