/*
 * Brunner-Munzel's test and the shift interval that inverts it, beside
 * the Moses interval (stats.c): stats.h says what each gives.
 */
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "util.h"
#include "banned.h"

/*
 * Brunner-Munzel at shift d (a against b - d): the relative effect from
 * the placements (how many of the other side lie beyond, ties a half), its
 * standard error and Satterthwaite's df. *ret_se 0 when neither side's
 * placements vary (the sides wholly apart, or all tied).
 */
static void bm_at(const double *a, size_t na, const double *b, size_t nb, double d, double *ret_effect,
		  double *ret_se, double *ret_df)
{
	double qa = 0, qa2 = 0, rb = 0, rb2 = 0, va, vb, ua, ub;
	size_t i, j;

	for (i = 0; i < na; i++) {
		double q = 0;

		for (j = 0; j < nb; j++)
			q += b[j] - d > a[i] ? 1 : b[j] - d == a[i] ? 0.5 : 0;
		qa += q;
		qa2 += q * q;
	}
	for (j = 0; j < nb; j++) {
		double q = 0;

		for (i = 0; i < na; i++)
			q += a[i] < b[j] - d ? 1 : a[i] == b[j] - d ? 0.5 : 0;
		rb += q;
		rb2 += q * q;
	}
	*ret_effect = qa / ((double)na * (double)nb);
	/* each side's placements' sample variance, relative to the other's size */
	va = fmax(0, (qa2 - qa * qa / (double)na) / (double)(na - 1)) / ((double)nb * (double)nb);
	vb = fmax(0, (rb2 - rb * rb / (double)nb) / (double)(nb - 1)) / ((double)na * (double)na);
	ua = va / (double)na;
	ub = vb / (double)nb;
	*ret_se = sqrt(ua + ub);
	*ret_df = ua + ub > 0 ? (ua + ub) * (ua + ub) / (ua * ua / (double)(na - 1) + ub * ub / (double)(nb - 1))
			      : NAN;
}

/* The two-sided p of the test at shift d: 0 for sides wholly apart, 1 for
 * sides all tied. */
static double bm_p(const double *a, size_t na, const double *b, size_t nb, double d, double *ret_effect)
{
	double e, se, df;

	bm_at(a, na, b, nb, d, &e, &se, &df);
	if (ret_effect)
		*ret_effect = e;
	if (!(se > 0))
		return e == 0.5 ? 1 : 0;
	return stats_t_p2((e - 0.5) / se, df);
}

int stats_brunner_munzel(const double *a, size_t na, const double *b, size_t nb,
			 double *ret_effect, double *ret_p)
{
	if (na < 2 || nb < 2 || !stats_all_finite(a, na) || !stats_all_finite(b, nb))
		return -EINVAL;
	*ret_p = bm_p(a, na, b, nb, 0, ret_effect);
	return 0;
}

int stats_shift_ci_bm(const double *a, size_t na, const double *b, size_t nb, double level,
		      double *ret_lo, double *ret_hi)
{
	size_t mn = na * nb, i, j, k, nd = 0;
	double *d;
	int found = 0;

	if (na < 2 || nb < 2 || !stats_all_finite(a, na) || !stats_all_finite(b, nb) || !(level > 0 && level < 1))
		return -EINVAL;
	d = malloc(mn * sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (i = 0; i < na; i++)
		for (j = 0; j < nb; j++)
			d[i * nb + j] = b[j] - a[i];
	qsort(d, mn, sizeof(*d), cmp_double);
	for (k = 0; k < mn; k++)
		if (!nd || d[k] != d[nd - 1])
			d[nd++] = d[k];
	/* the test is constant between two neighbouring differences: a shift
	 * is accepted with the gap it lies in, and the interval runs from the
	 * lower end of the first accepted gap to the upper end of the last.
	 * At a difference itself the two values tie, which only brings the
	 * effect nearer 1/2, so the ends belong to it. */
	if (nd == 1 && bm_p(a, na, b, nb, d[0], NULL) > 1 - level) {
		*ret_lo = *ret_hi = d[0];
		found = 1;
	}
	for (k = 0; k + 1 < nd; k++) {
		double mid = d[k] + (d[k + 1] - d[k]) / 2;

		if (bm_p(a, na, b, nb, mid, NULL) > 1 - level) {
			if (!found)
				*ret_lo = d[k];
			*ret_hi = d[k + 1];
			found = 1;
		}
	}
	free(d);
	return found ? 0 : -ERANGE;
}

int stats_shift_ci_wide(const double *a, size_t na, const double *b, size_t nb, double level,
			double *ret_lo, double *ret_hi)
{
	double est, lo, hi;
	int r = stats_shift_ci(a, na, b, nb, level, &est, ret_lo, ret_hi);

	if (r < 0)
		return r;
	if (stats_shift_ci_bm(a, na, b, nb, level, &lo, &hi) == 0) {
		*ret_lo = fmin(*ret_lo, lo);
		*ret_hi = fmax(*ret_hi, hi);
	}
	return 0;
}
