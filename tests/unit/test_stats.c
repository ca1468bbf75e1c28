/*
 * daemon/stats: the numbers behind every verdict. Cases here are small
 * enough to check by hand (a U distribution counted on paper, t with 1 or 2
 * degrees of freedom in closed form); tests/integration/t0060 checks the
 * same functions against scipy on hundreds of vectors.
 */
#include "testlib.h"

#include <errno.h>
#include <math.h>

#include "stats.h"
#include "banned.h"

#define N(v) (sizeof(v) / sizeof((v)[0]))

/* |x - want| within rel of want (or of 1e-300 near zero) */
#define assert_close(x, want, rel) do {						\
	double x_ = (x), w_ = (want);						\
	if (!(fabs(x_ - w_) <= (rel) * fmax(fabs(w_), 1e-300)))			\
		fail_msg("%s = %.17g, want %.17g", #x, x_, w_);			\
} while (0)

/* Mann-Whitney of a[0..na) against b[0..nb) must succeed with U = want_u
 * (NAN: not checked) and p within rel of want_p. */
#define assert_mwu(a, na, b, nb, want_u, want_p, rel) do {			\
	double u_, p_, wu_ = (want_u);						\
										\
	assert_int_equal(stats_mann_whitney((a), (na), (b), (nb), &u_, &p_), 0);	\
	if (!isnan(wu_))							\
		assert_close(u_, wu_, 0);					\
	assert_close(p_, (want_p), (rel));					\
} while (0)

/* ---- descriptive ---- */

static void test_descriptive(void **state)
{
	const double v[] = { 4, 1, 3, 2 }, odd[] = { 9, 1, 5 };

	(void)state;
	assert_close(stats_mean(v, N(v)), 2.5, 0);
	assert_close(stats_median(v, N(v)), 2.5, 0);
	assert_close(stats_median(odd, N(odd)), 5, 0);
	/* deviations -1.5 -0.5 0.5 1.5: squares sum to 5, over n - 1 = 3 */
	assert_close(stats_stddev(v, N(v)), sqrt(5.0 / 3), 1e-15);
	/* the input is not reordered by the sort inside median */
	assert_true(v[0] == 4 && v[1] == 1 && v[2] == 3 && v[3] == 2);
}

static void test_descriptive_edges(void **state)
{
	const double one[] = { 7 };
	const double withnan[] = { 1, NAN, 3 };
	const double c[] = { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 };

	(void)state;
	assert_true(isnan(stats_mean(NULL, 0)));
	assert_true(isnan(stats_median(NULL, 0)));
	assert_close(stats_mean(one, 1), 7, 0);
	assert_close(stats_median(one, 1), 7, 0);
	assert_true(isnan(stats_stddev(one, 1)));
	assert_true(isnan(stats_median(withnan, 3)));
	/* a constant sample: mean is the constant and the spread exactly 0,
	 * although 7 * 0.1 / 7 is not 0.1 in doubles */
	assert_true(stats_mean(c, N(c)) == 0.1);
	assert_true(stats_stddev(c, N(c)) == 0);
}

/* ---- distributions ---- */

static void test_t_and_normal(void **state)
{
	double t;

	(void)state;
	assert_close(stats_normal_p2(0), 1, 0);
	assert_close(stats_normal_p2(1.959963984540054), 0.05, 1e-13);
	assert_close(stats_normal_p2(-1.959963984540054), 0.05, 1e-13);
	/* df = 1 is Cauchy: p = 1 - 2 atan|t| / pi; df = 2: 1 - |t| / sqrt(2 + t^2) */
	for (t = 0.125; t < 200; t *= 2) {
		assert_close(stats_t_p2(t, 1), 1 - 2 * atan(t) / M_PI, 1e-12);
		assert_close(stats_t_p2(-t, 2), 1 - t / sqrt(2 + t * t), 1e-12);
	}
	/* far tails keep relative precision: Cauchy tail ~ 2 / (pi t) */
	assert_close(stats_t_p2(1e8, 1), 2 / (M_PI * 1e8), 1e-9);
	assert_close(stats_t_p2(0, 7), 1, 1e-15);
	assert_close(stats_t_p2(3, INFINITY), stats_normal_p2(3), 0);
	assert_true(stats_t_p2(INFINITY, 3) == 0);
	assert_true(isnan(stats_t_p2(1, 0)));
	assert_true(isnan(stats_t_p2(NAN, 3)));
	assert_true(isnan(stats_normal_p2(NAN)));
	/* large df approaches the normal */
	assert_close(stats_t_p2(2, 1e7), stats_normal_p2(2), 1e-6);
}

/* ---- Mann-Whitney ---- */

static void test_mwu_exact_small(void **state)
{
	const double a2[] = { 2, 1 }, b2[] = { 3, 4 };
	const double a3[] = { 1, 2, 3 }, b3[] = { 4, 5, 6 };
	const double a5[] = { 1, 2, 3, 4, 5 }, b5[] = { 6, 7, 8, 9, 10 };
	const double x[] = { 1, 4 }, y[] = { 2, 3 }, w[] = { 1, 2.5 };

	(void)state;
	/* 2 vs 2: 6 orderings, U = 0 in one of them: p = 2 / 6 */
	assert_mwu(a2, 2, b2, 2, 0, 1.0 / 3, 1e-15);
	assert_int_equal(stats_mann_whitney_method(a2, 2, b2, 2), STATS_MWU_EXACT);
	/* swapped sides: U of a counts the pairs a > b */
	assert_mwu(b2, 2, a2, 2, 4, 1.0 / 3, 1e-15);
	/* 3 vs 3: 20 orderings; 5 vs 5: 252 */
	assert_mwu(a3, 3, b3, 3, 0, 2.0 / 20, 1e-15);
	assert_mwu(a5, 5, b5, 5, 0, 2.0 / 252, 1e-15);
	/* U = 2 of 4 is the centre: p = 1 */
	assert_mwu(x, 2, y, 2, 2, 1, 0);
	/* U = 1 with 2 vs 2: counts 1 1 2 1 1, P(U <= 1) = 2 / 6 */
	assert_mwu(w, 2, y, 2, 1, 4.0 / 6, 1e-15);
	/* n = 1 each: never significant */
	assert_mwu(a2, 1, b2, 1, 0, 1, 0);
}

static void test_mwu_exact_large(void **state)
{
	double a[50], b[50];
	int i;

	(void)state;
	/* complete separation at the exact limit: p = 2 / C(100, 50) */
	for (i = 0; i < 50; i++) {
		a[i] = i;
		b[i] = 100 + i;
	}
	assert_int_equal(stats_mann_whitney_method(a, 50, b, 50), STATS_MWU_EXACT);
	assert_mwu(a, 50, b, 50, 0, 2 / 1.0089134454556419e29, 1e-12);
	/* interleaved, each a just below its b: U = 0 + 1 + ... + 49 = 1225,
	 * 25 below the centre */
	for (i = 0; i < 50; i++)
		b[i] = i + 0.5;
	assert_mwu(a, 50, b, 50, 1225, 0.8664717523984105, 1e-12); /* scipy 1.10 */
	/* 51 values leave the exact range */
	{
		double c[51];

		for (i = 0; i < 51; i++)
			c[i] = 1000 + i;
		assert_int_equal(stats_mann_whitney_method(a, 50, c, 51), STATS_MWU_ASYMPTOTIC);
		assert_int_equal(stats_mann_whitney_method(c, 51, a, 50), STATS_MWU_ASYMPTOTIC);
	}
}

/* The permutation p by brute force: every choice of na of the pooled
 * values as a's, their midrank sum against the observed one. */
static double brute_perm_p(const double *a, size_t na, const double *b, size_t nb)
{
	double pool[16], rank[16], obs = 0, mean, hits = 0, all = 0;
	size_t n = na + nb, i, j;
	unsigned mask;

	for (i = 0; i < na; i++)
		pool[i] = a[i];
	for (i = 0; i < nb; i++)
		pool[na + i] = b[i];
	for (i = 0; i < n; i++) {
		double below = 0, equal = 0;

		for (j = 0; j < n; j++) {
			below += pool[j] < pool[i];
			equal += pool[j] == pool[i];
		}
		rank[i] = below + (equal + 1) / 2;
	}
	for (i = 0; i < na; i++)
		obs += rank[i];
	mean = (double)na * (double)(n + 1) / 2;
	for (mask = 0; mask < 1u << n; mask++) {
		double sum = 0;

		if ((size_t)__builtin_popcount(mask) != na)
			continue;
		for (i = 0; i < n; i++)
			if (mask & 1u << i)
				sum += rank[i];
		all++;
		hits += fabs(sum - mean) >= fabs(obs - mean) - 1e-9;
	}
	return hits / all;
}

static void test_mwu_ties(void **state)
{
	const double a[] = { 1, 2, 2, 3 }, b[] = { 2, 4, 5 };
	const double e[] = { 5, 5, 5 }, f[] = { 5, 5 };
	const double g[] = { 1, 1, 2 }, h[] = { 3, 4 };
	const double ta[] = { 3, 3, 4, 3, 4 }, tb[] = { 8, 9, 8, 8, 9 };
	double x[7], y[7];
	int trial, i;

	(void)state;
	/* ranks 1, 3, 3, 5 | 3, 6, 7: R_a = 12, U = 12 - 10 = 2 */
	assert_int_equal(stats_mann_whitney_method(a, 4, b, 3), STATS_MWU_PERMUTATION);
	assert_mwu(a, 4, b, 3, 2, brute_perm_p(a, 4, b, 3), 1e-14);
	/* every value equal: no evidence at all */
	assert_mwu(e, 3, f, 2, 3, 1, 0);
	/* a tie inside one side is a tie too */
	assert_int_equal(stats_mann_whitney_method(g, 3, h, 2), STATS_MWU_PERMUTATION);
	assert_mwu(g, 3, h, 2, 0, 2.0 / 10, 1e-15);
	/* integer counters, completely separated: the two extreme splits */
	assert_mwu(ta, 5, tb, 5, 0, 2.0 / 252, 1e-14);
	/* small integer samples with many ties against the brute force */
	for (trial = 0; trial < 200; trial++) {
		unsigned r = 2463534242u + (unsigned)trial * 2654435761u;

		for (i = 0; i < 7; i++) {
			r ^= r << 13, r ^= r >> 17, r ^= r << 5;
			x[i] = r % 5;
			r ^= r << 13, r ^= r >> 17, r ^= r << 5;
			y[i] = r % 6;
		}
		assert_mwu(x, 6, y, 7, NAN, brute_perm_p(x, 6, y, 7), 1e-12);
	}
}

/* Adjusted p-values adj[0..n) as want[] has them (NAN: adj is NaN too). */
static void assert_adjusted(const double *adj, const double *want, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (isnan(want[i]) ? !isnan(adj[i]) : !(fabs(adj[i] - want[i]) <= 1e-15 * fabs(want[i])))
			fail_msg("adj[%zu] = %.17g, want %.17g", i, adj[i], want[i]);
	}
}

static void test_multiplicity(void **state)
{
	/* worked by hand: sorted 0.01, 0.02, 0.03, 0.04 (m = 4) and a NaN */
	const double p[] = { 0.03, 0.01, NAN, 0.04, 0.02 };
	double adj[5];

	(void)state;
	assert_int_equal(stats_holm(p, 5, adj), 0);
	/* 4 * 0.01, max(3 * 0.02, .04), max(2 * 0.03, .06), max(0.04, .06) */
	assert_adjusted(adj, ((const double[]){ 0.06, 0.04, NAN, 0.06, 0.06 }), 5);
	assert_int_equal(stats_bh(p, 5, adj), 0);
	/* 0.04 * 4/4, min(0.03 * 4/3, .04), ...: all 0.04 */
	assert_adjusted(adj, ((const double[]){ 0.04, 0.04, NAN, 0.04, 0.04 }), 5);
	assert_int_equal(stats_holm(p, 0, adj), 0);
}

static void test_shift_ci(void **state)
{
	const double a[] = { 3, 1, 5, 2, 4 }, b[] = { 12, 11, 15, 13, 14 };
	double est, lo, hi;

	(void)state;
	/* 5 vs 5: P(U <= t) for t = 0..4 is 1, 2, 4, 7, 12 in 252, all within
	 * 5% (12.6), so k = 5; the 25 differences are 6, 7 x2, 8 x3, 9 x4,
	 * 10 x5, 11 x4, 12 x3, 13 x2, 14: the 5th smallest is 8, the 5th
	 * largest 12, the median 10 */
	assert_int_equal(stats_shift_ci(a, 5, b, 5, 0.90, &est, &lo, &hi), 0);
	assert_close(est, 10, 0);
	assert_close(lo, 8, 0);
	assert_close(hi, 12, 0);
	/* 95%: within 6.3 of 252 only t = 0..2 (4): k = 3, 7 and 13 */
	assert_int_equal(stats_shift_ci(a, 5, b, 5, 0.95, &est, &lo, &hi), 0);
	assert_close(lo, 7, 0);
	assert_close(hi, 13, 0);
	/* 2 vs 2 cannot give a 90% interval: 1/6 is already beyond 5% */
	assert_int_equal(stats_shift_ci(a, 2, b, 2, 0.90, &est, &lo, &hi), -ERANGE);
	assert_int_equal(stats_shift_ci(a, 0, b, 2, 0.90, &est, &lo, &hi), -EINVAL);
}

/* Brunner-Munzel against scipy.stats.brunnermunzel (1.10, distribution
 * "t"), and its shift interval against the same test inverted over the
 * gaps between the differences in numpy */
static void test_brunner_munzel(void **state)
{
	const double a[] = { 10.1, 10.4, 9.8, 10.0, 10.3 }, b[] = { 10.9, 10.2, 11.5, 10.7, 12.0, 10.6 };
	const double a2[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 }, b2[] = { 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5 };
	const double apart[] = { 1, 2 }, far[] = { 5, 6 };
	double e, p, lo, hi;

	(void)state;
	assert_int_equal(stats_brunner_munzel(a, 5, b, 6, &e, &p), 0);
	assert_close(p, 0.000535873251271024, 1e-9);
	assert_true(e > 0.5);
	assert_int_equal(stats_brunner_munzel(a2, 9, b2, 9, &e, &p), 0);
	assert_close(p, 0.06207489435850877, 1e-9);
	assert_int_equal(stats_brunner_munzel(apart, 2, far, 2, &e, &p), 0);
	assert_close(p, 0, 0);
	assert_close(e, 1, 0);
	assert_int_equal(stats_shift_ci_bm(a, 5, b, 6, 0.90, &lo, &hi), 0);
	assert_close(lo, 0.3, 1e-12);
	assert_close(hi, 1.6, 1e-12);
	assert_int_equal(stats_shift_ci_bm(a2, 9, b2, 9, 0.90, &lo, &hi), 0);
	assert_close(lo, 0.5, 1e-12);
	assert_close(hi, 4.5, 1e-12);
	assert_int_equal(stats_shift_ci_bm(a, 1, b, 6, 0.90, &lo, &hi), -EINVAL);
	assert_int_equal(stats_shift_ci_bm(a, 5, b, 6, 1, &lo, &hi), -EINVAL);
}

static void test_spending_and_power(void **state)
{
	(void)state;
	assert_close(stats_t_quantile(0.05, INFINITY), 1.959963984540054, 1e-10);
	assert_close(stats_t_quantile(0.05, 10), 2.228138851986274, 1e-10);	/* tables */
	assert_close(stats_t_quantile(0.4, 16), 0.865, 1e-3);	/* tables: 3 digits */
	assert_close(stats_t_p2(stats_t_quantile(0.4, 16), 16), 0.4, 1e-12);
	assert_true(isnan(stats_t_quantile(0, 3)));
	/* O'Brien-Fleming-like: half the information spends 2 - 2 Phi(z / sqrt(.5)) */
	assert_close(stats_obf_spent(0.05, 0.5), erfc(1.959963984540054 / sqrt(0.5) / M_SQRT2), 1e-9);
	assert_close(stats_obf_spent(0.01, 1), 0.01, 0);
	assert_true(stats_obf_spent(0.01, 5.0 / 9) < 0.001);
	/* (1.96 + 0.8416) * 1 * sqrt(2 / 1e6) on (almost) infinite df */
	assert_close(stats_detectable_shift(1, 1000000, 1000000, 0.05, 0.8, 1),
		     (1.959963984540054 + 0.8416212335729143) * sqrt(2e-6), 1e-4);
	assert_true(isnan(stats_detectable_shift(1, 1, 5, 0.05, 0.8, 1)));
	assert_close(stats_mwu_min_p(5, 5), 2.0 / 252, 1e-15);
}

static void test_mwu_errors(void **state)
{
	const double a[] = { 1, 2 }, bad[] = { 1, NAN };
	double u = 42, p = 42;

	(void)state;
	assert_int_equal(stats_mann_whitney(a, 2, a, 0, &u, &p), -EINVAL);
	assert_int_equal(stats_mann_whitney(a, 0, a, 2, &u, &p), -EINVAL);
	assert_int_equal(stats_mann_whitney(a, 2, bad, 2, &u, &p), -EINVAL);
	assert_int_equal(stats_mann_whitney(bad, 2, a, 2, &u, &p), -EINVAL);
	assert_int_equal(stats_mann_whitney_method(bad, 2, a, 2), -EINVAL);
	/* outputs are written only on success */
	assert_true(u == 42 && p == 42);
}

/* ---- bootstrap ---- */

/* The ratio's interval at one level, as compare asks for it. */
static int ratio_ci(const double *a, size_t na, const double *b, size_t nb, int resamples, double level,
		    uint64_t seed, double *ret_lo, double *ret_hi)
{
	return stats_bootstrap_ci(a, na, b, nb, STATS_BOOT_RATIO, resamples, seed, &level, 1, ret_lo, ret_hi);
}

static void test_bootstrap(void **state)
{
	double a[10], b[10], lo, hi, lo2, hi2, lo3, hi3;
	int i;

	(void)state;
	/* clean data, b about 10% above a */
	for (i = 0; i < 10; i++) {
		a[i] = 100 + (i * 7 % 10) * 0.3;
		b[i] = 110 + (i * 3 % 10) * 0.3;
	}
	assert_int_equal(ratio_ci(a, 10, b, 10, 2000, 0.95, 1, &lo, &hi), 0);
	assert_true(lo <= hi);
	assert_true(lo <= stats_median(b, 10) / stats_median(a, 10));
	assert_true(hi >= stats_median(b, 10) / stats_median(a, 10));
	assert_true(lo > 1.05 && hi < 1.15);
	/* the same seed gives the same interval, to the bit */
	assert_int_equal(ratio_ci(a, 10, b, 10, 2000, 0.95, 1, &lo2, &hi2), 0);
	assert_true(lo == lo2 && hi == hi2);
	/* another seed draws other resamples */
	assert_int_equal(ratio_ci(a, 10, b, 10, 2000, 0.95, 2, &lo3, &hi3), 0);
	assert_true(lo3 != lo || hi3 != hi);
	/* a narrower level gives a nested interval */
	assert_int_equal(ratio_ci(a, 10, b, 10, 2000, 0.5, 1, &lo2, &hi2), 0);
	assert_true(lo2 >= lo && hi2 <= hi && lo2 <= hi2);
	/* identical constant sides: every resample ratio is exactly 1 */
	for (i = 0; i < 10; i++)
		a[i] = b[i] = 3;
	assert_int_equal(ratio_ci(a, 10, b, 10, 500, 0.95, 9, &lo, &hi), 0);
	assert_true(lo == 1 && hi == 1);
}

/*
 * The percentile interval interpolates between order statistics as numpy
 * does. With a = {1} and b = {1, 2}, a resample's ratio is 1, 1.5 or 2;
 * two resamples r0 <= r1 at level 0.5 give the 25% and 75% points:
 * lo = r0 + (r1 - r0) / 4, hi = r0 + 3 (r1 - r0) / 4.
 */
static void test_bootstrap_interpolation(void **state)
{
	const double a[] = { 1 }, b[] = { 1, 2 }, r[] = { 1, 1.5, 2 };
	double lo, hi;
	int i, j, found = 0;
	uint64_t seed;

	(void)state;
	for (seed = 1; seed < 64 && !found; seed++) {
		assert_int_equal(ratio_ci(a, 1, b, 2, 2, 0.5, seed, &lo, &hi), 0);
		for (i = 0; i < 3; i++)
			for (j = i + 1; j < 3; j++)
				if (lo == r[i] + (r[j] - r[i]) / 4 &&
				    hi == r[i] + 3 * (r[j] - r[i]) / 4)
					found = 1;
		/* both resamples alike: no interpolation to see, only r[k] */
		if (!found)
			assert_true(lo == hi && (lo == 1 || lo == 1.5 || lo == 2));
	}
	assert_true(found);
}

static void test_bootstrap_errors(void **state)
{
	const double a[] = { 1, 2, 3 }, z[] = { 0, 0, 1 }, bad[] = { 1, NAN };
	double lo = 42, hi = 42;

	(void)state;
	assert_int_equal(ratio_ci(a, 0, a, 3, 100, 0.95, 1, &lo, &hi), -EINVAL);
	assert_int_equal(ratio_ci(a, 3, a, 0, 100, 0.95, 1, &lo, &hi), -EINVAL);
	assert_int_equal(ratio_ci(a, 3, a, 3, 0, 0.95, 1, &lo, &hi), -EINVAL);
	assert_int_equal(ratio_ci(a, 3, a, 3, 100, 0, 1, &lo, &hi), -EINVAL);
	assert_int_equal(ratio_ci(a, 3, a, 3, 100, 1, 1, &lo, &hi), -EINVAL);
	assert_int_equal(ratio_ci(a, 3, a, 3, 100, NAN, 1, &lo, &hi), -EINVAL);
	assert_int_equal(ratio_ci(a, 3, bad, 2, 100, 0.95, 1, &lo, &hi), -EINVAL);
	/* a's median is 0 in most resamples: EDOM says why */
	assert_int_equal(ratio_ci(z, 3, a, 3, 100, 0.95, 1, &lo, &hi), -EDOM);
	assert_true(lo == 42 && hi == 42);
	/* b's median 0 is a ratio of 0, not an error */
	assert_int_equal(ratio_ci(a, 3, z, 3, 100, 0.95, 1, &lo, &hi), 0);
	assert_true(lo == 0 && hi >= 0);
	/* the difference is defined there, and several levels come from one
	 * stream: the interval at a level is the one asked for alone */
	{
		const double levels[2] = { 0.95, 0.5 };
		double l2[2], h2[2], lr, hr;

		assert_int_equal(stats_bootstrap_ci(z, 3, a, 3, STATS_BOOT_DIFF, 100, 1, levels, 2, l2, h2), 0);
		assert_true(l2[0] <= l2[1] && l2[1] <= h2[1] && h2[1] <= h2[0]);
		assert_int_equal(stats_bootstrap_ci(a, 3, z, 3, STATS_BOOT_RATIO, 100, 7, levels, 2, l2, h2), 0);
		assert_int_equal(ratio_ci(a, 3, z, 3, 100, 0.5, 7, &lr, &hr), 0);
		assert_true(l2[1] == lr && h2[1] == hr);
	}
}

/* ---- outliers ---- */

/* Welch's t: 1..5 against 2, 4, .., 10 (t = 3 / sqrt(2.5), df = 6.25 /
 * 1.0625, p by numerical integration of the t density); and the floor,
 * which turns sides with no spread into a test instead of an error. */
/* The paired t test against scipy.stats.ttest_rel([1,2,3,4],
 * [1.1,2.3,3.2,4.4]): t 3.8730, p 0.03047 on 3 df; the floor widens it,
 * equal differences without a floor have no test, and fewer than 3
 * pairs are refused. The paired detectable shift is the t one on n - 1
 * df. */
static void test_paired_t(void **state)
{
	const double a[] = { 1, 2, 3, 4 }, b[] = { 1.1, 2.3, 3.2, 4.4 }, c[] = { 2, 3, 4, 5 };
	struct stats_welch w;

	(void)state;
	assert_int_equal(stats_paired_t(a, b, 4, 0, &w), 0);
	assert_float_equal(w.diff, 0.25, 1e-12);
	assert_float_equal(w.t, 3.8729833, 1e-6);
	assert_float_equal(w.df, 3, 0);
	assert_float_equal(w.p, 0.030466, 1e-5);
	assert_int_equal(stats_paired_t(a, b, 4, 1, &w), 0);
	assert_float_equal(w.se, 0.5, 1e-12);
	assert_true(w.p > 0.6);
	assert_int_equal(stats_paired_t(a, c, 4, 0, &w), -EDOM);
	assert_int_equal(stats_paired_t(a, b, 2, 0, &w), -EINVAL);
	assert_float_equal(stats_detectable_shift_paired(1, 4, 0.05, 0.8),
			   (stats_t_quantile(0.05, 3) + stats_t_quantile(0.4, 3)) / 2, 1e-12);
	assert_true(isnan(stats_detectable_shift_paired(1, 2, 0.05, 0.8)));
}

static void test_welch(void **state)
{
	const double a[] = { 1, 2, 3, 4, 5 }, b[] = { 2, 4, 6, 8, 10 };
	const double c[] = { 1, 1, 1 }, d[] = { 1.01, 1.01, 1.01 };
	struct stats_welch w;

	(void)state;
	assert_int_equal(stats_welch(a, N(a), b, N(b), 0, &w), 0);
	assert_close(w.diff, 3, 1e-12);
	assert_close(w.t, 3 / sqrt(2.5), 1e-12);
	assert_close(w.df, 6.25 / 1.0625, 1e-12);
	assert_close(w.p, 0.10753119494, 1e-6);
	/* a floor below the spread changes nothing */
	assert_int_equal(stats_welch(a, N(a), b, N(b), 1, &w), 0);
	assert_close(w.p, 0.10753119494, 1e-6);
	/* no spread at all: no test without a floor; with one, sd = floor */
	assert_int_equal(stats_welch(c, N(c), d, N(d), 0, &w), -EDOM);
	assert_int_equal(stats_welch(c, N(c), d, N(d), 0.01, &w), 0);
	assert_close(w.se, 0.01 * sqrt(2.0 / 3), 1e-9);
	assert_close(w.df, 4, 1e-9);
	assert_close(w.p, 0.28786413469, 1e-6);
	assert_int_equal(stats_welch(c, 1, d, N(d), 0.01, &w), -EINVAL);
	assert_int_equal(stats_welch(c, N(c), d, N(d), -1, &w), -EINVAL);
	/* Pocock-like spending: alpha ln(1 + (e - 1) t), all of it at t = 1 */
	assert_close(stats_pocock_spent(0.01, 5.0 / 9), 0.01 * log(1 + (M_E - 1) * 5 / 9), 1e-12);
	assert_close(stats_pocock_spent(0.01, 1), 0.01, 0);
	assert_true(isnan(stats_pocock_spent(0.01, 0)));
}

static void test_outliers(void **state)
{
	const double v[] = { 10, 11, 9, 10, 10.5, 9.5, 50 };
	const double flat[] = { 5, 5, 5, 5, 6 }, bad[] = { 1, NAN };
	int flags[7];

	(void)state;
	/* median 10, |dev| 0 1 1 0 .5 .5 40: MAD 0.5; 50 has z = 53.96 */
	assert_int_equal(stats_outliers_mad(v, 7, 3.5, flags), 1);
	assert_int_equal(flags[6], 1);
	assert_int_equal(flags[0] + flags[1] + flags[2] + flags[3] + flags[4] + flags[5], 0);
	/* 11 and 9 have |z| = 1.349: flagged only under a threshold below it */
	assert_int_equal(stats_outliers_mad(v, 7, 1.3, flags), 3);
	assert_int_equal(flags[1] + flags[2], 2);
	/* MAD 0: whatever differs from the median */
	assert_int_equal(stats_outliers_mad(flat, 5, 3.5, flags), 1);
	assert_int_equal(flags[4], 1);
	assert_int_equal(stats_outliers_mad(NULL, 0, 3.5, NULL), 0);
	assert_int_equal(stats_outliers_mad(bad, 2, 3.5, flags), -EINVAL);
	assert_int_equal(stats_outliers_mad(v, 7, NAN, flags), -EINVAL);
	assert_int_equal(stats_outliers_mad(v, 7, -1, flags), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_descriptive),
		cmocka_unit_test(test_descriptive_edges),
		cmocka_unit_test(test_t_and_normal),
		cmocka_unit_test(test_mwu_exact_small),
		cmocka_unit_test(test_mwu_exact_large),
		cmocka_unit_test(test_mwu_ties),
		cmocka_unit_test(test_multiplicity),
		cmocka_unit_test(test_shift_ci),
		cmocka_unit_test(test_brunner_munzel),
		cmocka_unit_test(test_spending_and_power),
		cmocka_unit_test(test_mwu_errors),
		cmocka_unit_test(test_bootstrap),
		cmocka_unit_test(test_bootstrap_interpolation),
		cmocka_unit_test(test_bootstrap_errors),
		cmocka_unit_test(test_welch),
		cmocka_unit_test(test_paired_t),
		cmocka_unit_test(test_outliers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
