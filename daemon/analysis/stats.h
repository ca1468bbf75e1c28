#ifndef TLBLAB_STATS_H
#define TLBLAB_STATS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Statistics for comparisons: a pure module, no I/O, no allocation visible
 * to callers beyond what they pass in. Inputs are arrays of doubles that
 * the functions do not modify (they sort private copies). NaN in an input
 * is an error (-EINVAL) where a function returns int; functions returning a
 * double return NAN when the answer is undefined (n too small, all equal
 * where it matters).
 */

/* Arithmetic mean (with one correction pass, so a constant sample's mean
 * is that constant exactly); NAN when n == 0. */
double stats_mean(const double *v, size_t n);
/* Median, the mean of the middle two for even n; NAN when n == 0, a value
 * is NaN, or memory runs out. */
double stats_median(const double *v, size_t n);
/* Sample standard deviation (n - 1 denominator), exactly 0 for a constant
 * sample; NAN when n < 2. */
double stats_stddev(const double *v, size_t n);

/*
 * Two-sided Mann-Whitney U test of a against b. When n_a, n_b <= 50 the
 * p-value is exact: without ties, the distribution of U counted over all
 * orderings; with ties, the permutation distribution of the midrank sum
 * over all C(n_a + n_b, n_a) splits of the pooled values as they are (ties
 * and all), p = P(|S - E S| >= |s - E S|). Larger samples get the normal
 * approximation with tie correction and continuity correction (as
 * scipy.stats.mannwhitneyu with method="asymptotic", use_continuity=True;
 * p = 1 when every value is equal). ret_u is U of a (the number of pairs
 * with a > b, ties counting one half), as scipy reports it. Returns 0,
 * -EINVAL when either side is empty or has NaN, -ENOMEM.
 */
#define STATS_MWU_EXACT_MAX_N 50

enum stats_mwu_method {
	STATS_MWU_EXACT,
	STATS_MWU_ASYMPTOTIC,
	STATS_MWU_PERMUTATION,		/* exact, with ties */
	STATS_MWU_METHOD_MAX
};

int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
		       double *ret_u, double *ret_p);
/* Which p-value stats_mann_whitney gives for these samples (so a report can
 * say "exact" or "approximate"): an enum stats_mwu_method, -EINVAL as
 * above, or -ENOMEM. */
/* The smallest two-sided p the exact test can give for na and nb values
 * without ties: 2 / C(na + nb, na), the two complete separations (at most 1). */
double stats_mwu_min_p(size_t na, size_t nb);
int stats_mann_whitney_method(const double *a, size_t na, const double *b, size_t nb);

/*
 * The bootstrap's random stream, for anyone who needs a reproducible one:
 * xoshiro256** (Blackman and Vigna) seeded through splitmix64, so a seed
 * gives the same stream on every platform.
 */
struct stats_rng {
	uint64_t s[4];
};

uint64_t stats_splitmix64(uint64_t *x);
void stats_rng_seed(struct stats_rng *r, uint64_t seed);
uint64_t stats_rng_next(struct stats_rng *r);

/*
 * Bootstrap confidence intervals at several levels from one set of
 * resamples: of median(b) / median(a) (STATS_BOOT_RATIO; -EDOM when a
 * resample of a has median 0, so the caller can fall back to the
 * difference) or of median(b) - median(a) (STATS_BOOT_DIFF, defined
 * whatever the values). `resamples` resamplings of each side with
 * replacement; ret_lo[i] and ret_hi[i] get the percentile interval at
 * levels[i] (e.g. 0.95), quantiles interpolated linearly between order
 * statistics (numpy's default). The random stream is a xoshiro256** seeded
 * from `seed` with integer-only bounded draws, so the same inputs and seed
 * give the same intervals on every platform with IEEE 754 double
 * arithmetic (no x87 excess precision). -EINVAL when a side is empty or
 * has a value that is not finite, resamples < 1, or a level is not in
 * (0, 1); -ENOMEM.
 */
enum stats_boot_kind {
	STATS_BOOT_RATIO,
	STATS_BOOT_DIFF,
};

int stats_bootstrap_ci(const double *a, size_t na, const double *b, size_t nb,
		       enum stats_boot_kind kind, int resamples, uint64_t seed,
		       const double *levels, size_t nlevels, double *ret_lo, double *ret_hi);

/*
 * Distribution-free interval of the shift of b against a (Hodges-Lehmann
 * estimate, Moses interval): the median of the na * nb differences b_j -
 * a_i, and the k-th smallest and k-th largest of them, k from the exact
 * null distribution of U, so that the interval covers at least `level`
 * (without ties). -EINVAL (empty side, more than STATS_MWU_EXACT_MAX_N a
 * side, a value not finite, level not in (0, 1)), -ERANGE when the sides
 * are too small for the level (2 / C(na + nb, na) > 1 - level), -ENOMEM.
 */
int stats_shift_ci(const double *a, size_t na, const double *b, size_t nb, double level,
		   double *ret_est, double *ret_lo, double *ret_hi);

/*
 * Brunner-Munzel's test of the relative effect p = P(a < b) + P(a = b) / 2
 * against 1/2, which unlike Mann-Whitney's holds its level when the two
 * sides' spreads differ: p's estimate from the placements of each side
 * among the other, its variance from each side's placements apart, and a t
 * with Satterthwaite's degrees of freedom (two-sided). Sides wholly apart
 * (no spread in either side's placements) give p 0. -EINVAL: a side of
 * fewer than 2 values, a value not finite.
 */
int stats_brunner_munzel(const double *a, size_t na, const double *b, size_t nb,
			 double *ret_effect, double *ret_p);

/*
 * The shifts d of b against a that Brunner-Munzel's test of a against
 * b - d does not reject at 1 - level: [*ret_lo, *ret_hi], each end a
 * difference b_j - a_i (the test changes only there). Beside the Moses
 * interval (stats_shift_ci), which assumes the sides differ by a shift
 * alone and falls short when their spreads differ. -EINVAL as above or a
 * level not in (0, 1), -ERANGE when no shift is accepted (too few values
 * for the level), -ENOMEM.
 */
int stats_shift_ci_bm(const double *a, size_t na, const double *b, size_t nb, double level,
		      double *ret_lo, double *ret_hi);

/*
 * The shift interval a rank row's equivalence test uses: the Moses interval
 * (it inverts Mann-Whitney, which assumes the sides differ by a shift
 * alone), widened to every shift stats_shift_ci_bm accepts, so it holds
 * its level when the spreads differ too. Errors as stats_shift_ci's.
 */
int stats_shift_ci_wide(const double *a, size_t na, const double *b, size_t nb, double level,
			double *ret_lo, double *ret_hi);

/* 1 when every value is finite (none NaN or infinite) */
int stats_all_finite(const double *v, size_t n);

/*
 * Robust outlier flags: the modified z-score 0.6745 * (x - median) / MAD;
 * flags[i] = 1 when |z| > threshold (3.5 is customary). When MAD is 0, only
 * values different from the median are flagged. Returns how many were
 * flagged (0 when n is 0), -EINVAL (NaN in v, threshold NaN or negative,
 * n too large for an int), or -ENOMEM.
 */
int stats_outliers_mad(const double *v, size_t n, double threshold, int *flags);

/* Two-sided p-value of a standard normal z, and of Student's t with df
 * (> 0; infinite df is the normal). NAN for NaN arguments or df <= 0. */
double stats_normal_p2(double z);
double stats_t_p2(double t, double df);
/* The t (>= 0) whose two-sided p with df degrees of freedom is p2 (in
 * (0, 1]; infinite df is the normal): the upper p2 / 2 quantile. NAN for
 * arguments out of range. */
double stats_t_quantile(double p2, double df);

/*
 * Welch's two-sample t test of mean(b) - mean(a), for near-deterministic
 * rows: each side's standard deviation is taken as at least sd_floor (>= 0,
 * in the values' unit), so boots that agree by chance, or exactly, cannot
 * make the p-value smaller than the noise the caller knows is there. The
 * degrees of freedom are Welch-Satterthwaite's, of the floored variances.
 * ret gets the difference, its standard error, the degrees of freedom, t
 * and the two-sided p. -EINVAL (a side below 2 values, a value not finite,
 * sd_floor negative or NaN), -EDOM when the standard error is 0 (every
 * value of each side equal and no floor).
 */
struct stats_welch {
	double diff, se, df, t, p;
};

int stats_welch(const double *a, size_t na, const double *b, size_t nb, double sd_floor,
		struct stats_welch *ret);

/*
 * The paired t test of mean(b[i] - a[i]) over n pairs (boots that ran side
 * by side): the standard deviation of the differences is taken as at least
 * sd_floor. ret as stats_welch's, on n - 1 degrees of freedom. -EINVAL (n
 * below 3, a value not finite, sd_floor negative or NaN), -EDOM when every
 * difference is equal and there is no floor.
 */
int stats_paired_t(const double *a, const double *b, size_t n, double sd_floor, struct stats_welch *ret);

/*
 * Multiplicity. adj[i] gets p[i] adjusted over the n values (NaN entries are
 * left out of the family and stay NaN): Holm's step-down (family-wise
 * error), or Benjamini-Hochberg's step-up (false discovery rate). Adjusted
 * values are capped at 1 and keep the order of the raw ones. 0, -ENOMEM.
 */
int stats_holm(const double *p, size_t n, double *adj);
int stats_bh(const double *p, size_t n, double *adj);

/*
 * Alpha spending over looks at the data (Lan and DeMets' O'Brien-Fleming-
 * like function): the share of a two-sided alpha spent by information
 * fraction t in (0, 1], 2 - 2 Phi(z_{alpha/2} / sqrt(t)); all of alpha at
 * t = 1. NAN for arguments out of range.
 */
double stats_obf_spent(double alpha, double t);
/* Pocock-like (Lan and DeMets): alpha ln(1 + (e - 1) t), a larger share
 * early, for rows whose first look is nearly as informative as the last
 * (near-deterministic ones). NAN for arguments out of range. */
double stats_pocock_spent(double alpha, double t);

/*
 * The smallest shift between two means that a two-sided test at alpha
 * detects with the given power, for samples of na and nb with standard
 * deviation sd: (t_{alpha} + t_{2 (1 - power)}) sd sqrt(1/na + 1/nb) on
 * na + nb - 2 degrees of freedom, divided by sqrt(efficiency) (3 / pi for
 * Mann-Whitney against the t test under normal noise). NAN when na or nb
 * is below 2 or an argument is out of range.
 */
double stats_detectable_shift(double sd, size_t na, size_t nb, double alpha, double power,
			      double efficiency);

/* The same for the paired t test of n pairs whose differences have
 * standard deviation sd: (t_{alpha} + t_{2 (1 - power)}) sd / sqrt(n) on
 * n - 1 degrees of freedom. NAN when n is below 3 or out of range. */
double stats_detectable_shift_paired(double sd, size_t n, double alpha, double power);

#endif
