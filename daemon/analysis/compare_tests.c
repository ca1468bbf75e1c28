/*
 * The tests a row's class asks for (its flags, compare_class.h), each over
 * one row's per-boot samples, and their intervals: the rank test's
 * equivalence and bootstrap intervals, Welch's t on logs with the noise
 * floor, boots in a mode of their own set aside, duets' pairs, and counts
 * from a base near 0 tested on their values. compare_rows.c chooses which
 * one a row takes and writes its decision.
 */
#include "compare.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare_int.h"
#include "stats.h"
#include "util.h"
#include "verdict.h"
#include "banned.h"

/* The pooled per-boot sd of both sides (as compare_rows.c's, in % of the
 * base median) from the log values of the paired boots: what the spread
 * of a row would be were its boots not paired, in %. */
static double pooled_sd_pct_logs(const double *lb, const double *lp, size_t n)
{
	double vb, vp;

	if (n < 2)
		return NAN;
	vb = stats_stddev(lb, n);
	vp = stats_stddev(lp, n);
	return 100 * sqrt((vb * vb + vp * vp) / 2);
}

int compare_all_positive(const double *v, size_t n)
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
void compare_row_equivalence(struct verdict_row *v, const double *b, size_t nb, const double *p,
			    size_t np, double cb, const struct verdict_design *d)
{
	double *lb, *lp, lo, hi;
	size_t i;

	if (compare_all_positive(b, nb) && compare_all_positive(p, np)) {
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
double compare_within_floor(const json_t *g)
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
int compare_row_welch(json_t *obj, struct verdict_row *v, const double *b, size_t nb, const double *p,
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
 * sides' boots than COMPARE_MODE_FENCE robust sds: 1.4826 MAD of both sides' log
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
 * beyond COMPARE_MODE_FENCE sds from the centre med; their offsets from it, in %,
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
			if (fabs(log(v[i] / med)) > COMPARE_MODE_FENCE * sd) {
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
int compare_row_modes(json_t *obj, struct verdict_row *v, const double *b, size_t nb, const double *p, size_t np, double floor,
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
							 "fence_pct", 100 * COMPARE_MODE_FENCE * sd, "set_aside",
							 (json_int_t)(nb - *ret_nkb), (json_int_t)(np - *ret_nkp)));
	return ranked ? -1 : 1;
}

/* Welch's t on the log values kept by compare_row_modes (kb, kp), each side's sd
 * at least floor: p, ci and equivalence interval as compare_row_welch's. */
int compare_row_set_aside(json_t *obj, struct verdict_row *v, const double *kb, size_t nkb, const double *kp,
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
int compare_row_paired(json_t *obj, struct verdict_row *v, const json_t *gb, const json_t *gp,
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
	floor = hypot(fmax(r->noise_floor, compare_within_floor(gb)), fmax(r->noise_floor, compare_within_floor(gp)));
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
void compare_row_interval(json_t *obj, struct verdict_row *v, const double *b, size_t nb,
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
int compare_row_count(json_t *obj, struct verdict_row *v, const double *b, size_t nb, const double *p,
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
 * The least absolute change of a row tested by compare_row_count: the rules'
 * min_change_count events per operation (a row per kop: 1000 times that);
 * for a row below its class's floor, a tenth of the floor (spin-wait
 * instructions per op).
 */
double compare_count_least(const json_t *obj, const struct verdict_row *v, const struct compare_rules *r)
{
	if (v->negligible)
		return r->wait_floor / 10;
	return r->min_change_count * (ends_with(jsonget_str(obj, "unit"), "/kop") ? 1000 : 1);
}

