/*
 * (Over 800 lines on purpose: one pure module of numerical routines that
 * depend on each other, the exact Mann-Whitney counts, the t and normal
 * tails with Welch's test on them, the bootstrap and alpha spending; split,
 * each part would need the others' internals.)
 *
 * Statistics for comparisons. A comparison has few samples (5 boots per
 * side by default), so the Mann-Whitney p-value is exact where it can be:
 * the null distribution of U is counted, not approximated, whenever there
 * are no ties and both sides have at most STATS_MWU_EXACT_MAX_N values.
 * The counts reach C(100, 50) ~ 1e29, beyond uint64_t, so they are kept in
 * doubles; every count is a sum of positive terms and the tail is summed
 * from its small end, so the p-value keeps ~1e-15 relative precision even
 * when it is 1e-29.
 *
 * Student's t tail comes from the regularized incomplete beta function
 * (continued fraction, modified Lentz), evaluated on whichever side of the
 * mean of the beta distribution converges fast; 1 - x is passed along
 * separately so small tails do not lose digits to cancellation.
 *
 * No global state: lgamma_r rather than lgamma (which writes signgam), and
 * the bootstrap's generator lives on the stack. The bootstrap uses only
 * integer arithmetic for its random draws, so its interval is the same on
 * every platform with IEEE 754 doubles.
 */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "util.h"
#include "banned.h"

static int any_nan(const double *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (isnan(v[i]))
			return 1;
	return 0;
}

int stats_all_finite(const double *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return 0;
	return 1;
}

static double *copy_values(const double *v, size_t n)
{
	double *c = malloc((n ? n : 1) * sizeof(*c));

	if (c && n)
		memcpy(c, v, n * sizeof(*c));
	return c;
}

double stats_mean(const double *v, size_t n)
{
	double sum = 0, mean, corr = 0;
	size_t i;

	if (!n)
		return NAN;
	for (i = 0; i < n; i++)
		sum += v[i];
	mean = sum / (double)n;
	if (!isfinite(mean))
		return mean;
	/* the rounding error of the first pass, measured and taken back */
	for (i = 0; i < n; i++)
		corr += v[i] - mean;
	return mean + corr / (double)n;
}

double stats_median(const double *v, size_t n)
{
	double *c, m;

	if (!n || any_nan(v, n))
		return NAN;
	c = copy_values(v, n);
	if (!c)
		return NAN;
	m = median_inplace(c, n);
	free(c);
	return m;
}

/* Sample variance; exactly 0 when every value is equal (stats_stddev
 * promises it), not rounding noise. */
static double variance(const double *v, size_t n)
{
	double mean, d, ss = 0, s = 0;
	size_t i;
	int constant = 1;

	if (n < 2)
		return NAN;
	for (i = 1; i < n; i++) {
		if (isnan(v[i]) || isnan(v[0]))
			return NAN;
		if (v[i] != v[0])
			constant = 0;
	}
	if (constant)
		return 0;
	mean = stats_mean(v, n);
	/* corrected two-pass: s is ~0 but absorbs the mean's rounding error */
	for (i = 0; i < n; i++) {
		d = v[i] - mean;
		ss += d * d;
		s += d;
	}
	ss -= s * s / (double)n;
	return (ss > 0 ? ss : 0) / (double)(n - 1);
}

double stats_stddev(const double *v, size_t n)
{
	return sqrt(variance(v, n));
}

/* ---- distributions ---- */

double stats_normal_p2(double z)
{
	if (isnan(z))
		return NAN;
	return erfc(fabs(z) / M_SQRT2);
}

static double lgamma_pos(double x)
{
	int sign;

	return lgamma_r(x, &sign);
}

#define LENTZ_TINY 1e-300

/* One term of the modified Lentz recurrence, of coefficient aa: d and c
 * updated (kept off 0), and the factor the fraction takes from them. */
static double lentz_term(double aa, double *d, double *c)
{
	*d = 1 + aa * *d;
	if (fabs(*d) < LENTZ_TINY)
		*d = LENTZ_TINY;
	*c = 1 + aa / *c;
	if (fabs(*c) < LENTZ_TINY)
		*c = LENTZ_TINY;
	*d = 1 / *d;
	return *d * *c;
}

/* Continued fraction of I_x(a, b), modified Lentz; converges quickly when
 * x < (a + 1) / (a + b + 2). */
static double beta_cf(double a, double b, double x)
{
	double c = 1, d, h, del;
	int m;

	d = 1 - (a + b) * x / (a + 1);
	if (fabs(d) < LENTZ_TINY)
		d = LENTZ_TINY;
	d = 1 / d;
	h = d;
	for (m = 1; m <= 100000; m++) {
		/* the even term, then the odd one */
		h *= lentz_term(m * (b - m) * x / ((a - 1 + 2 * m) * (a + 2 * m)), &d, &c);
		del = lentz_term(-(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1 + 2 * m)), &d, &c);
		h *= del;
		if (fabs(del - 1) < DBL_EPSILON)
			break;
	}
	return h;
}

/* Regularized incomplete beta I_x(a, b) with y = 1 - x given exactly. */
static double ibeta(double a, double b, double x, double y)
{
	double lbt;

	if (x <= 0)
		return 0;
	if (y <= 0)
		return 1;
	lbt = lgamma_pos(a + b) - lgamma_pos(a) - lgamma_pos(b) + a * log(x) + b * log(y);
	if (x < (a + 1) / (a + b + 2))
		return exp(lbt) * beta_cf(a, b, x) / a;
	return 1 - exp(lbt) * beta_cf(b, a, y) / b;
}

double stats_t_p2(double t, double df)
{
	double t2;

	if (isnan(t) || isnan(df) || df <= 0)
		return NAN;
	if (isinf(df))
		return stats_normal_p2(t);
	if (isinf(t))
		return 0;
	t2 = t * t;
	/* P(|T| > |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2) */
	return ibeta(df / 2, 0.5, df / (df + t2), t2 / (df + t2));
}

double stats_t_quantile(double p2, double df)
{
	double lo = 0, hi = 1, mid;
	int i;

	if (!(p2 > 0 && p2 <= 1) || !(df > 0))
		return NAN;
	while (stats_t_p2(hi, df) > p2)
		if ((hi *= 2) > 1e12)
			return NAN;
	/* the p of t falls as t grows: bisect to the last bit */
	for (i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		mid = (lo + hi) / 2;
		if (stats_t_p2(mid, df) > p2)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/* ---- Welch's t ---- */

int stats_welch(const double *a, size_t na, const double *b, size_t nb, double sd_floor,
		struct stats_welch *ret)
{
	double va, vb, qa, qb, se2;

	if (na < 2 || nb < 2 || !stats_all_finite(a, na) || !stats_all_finite(b, nb) || !(sd_floor >= 0) ||
	    isinf(sd_floor))
		return -EINVAL;
	va = fmax(variance(a, na), sd_floor * sd_floor);
	vb = fmax(variance(b, nb), sd_floor * sd_floor);
	qa = va / (double)na;
	qb = vb / (double)nb;
	se2 = qa + qb;
	if (!(se2 > 0))
		return -EDOM;
	ret->diff = stats_mean(b, nb) - stats_mean(a, na);
	ret->se = sqrt(se2);
	ret->df = se2 * se2 / (qa * qa / (double)(na - 1) + qb * qb / (double)(nb - 1));
	ret->t = ret->diff / ret->se;
	ret->p = stats_t_p2(ret->t, ret->df);
	return 0;
}

int stats_paired_t(const double *a, const double *b, size_t n, double sd_floor, struct stats_welch *ret)
{
	double *d, var;
	size_t i;

	if (n < 3 || !stats_all_finite(a, n) || !stats_all_finite(b, n) || !(sd_floor >= 0) || isinf(sd_floor))
		return -EINVAL;
	d = xcalloc(n, sizeof(*d));
	for (i = 0; i < n; i++)
		d[i] = b[i] - a[i];
	var = fmax(variance(d, n), sd_floor * sd_floor);
	ret->diff = stats_mean(d, n);
	free(d);
	if (!(var > 0))
		return -EDOM;
	ret->se = sqrt(var / (double)n);
	ret->df = (double)n - 1;
	ret->t = ret->diff / ret->se;
	ret->p = stats_t_p2(ret->t, ret->df);
	return 0;
}

/* ---- Mann-Whitney U ---- */

struct mwu_obs {
	double v;
	int from_a;
};

static int cmp_obs(const void *x, const void *y)
{
	return cmp_double(&((const struct mwu_obs *)x)->v, &((const struct mwu_obs *)y)->v);
}

/* U of a from midranks, the tie term sum(t^3 - t), and whether any value
 * occurs twice in the pooled sample. */
static int mwu_rank(const double *a, size_t na, const double *b, size_t nb,
		    double *ret_u, double *ret_tie_term, int *ret_ties)
{
	struct mwu_obs *o;
	size_t n = na + nb, i, j, k, in_a;
	double r1 = 0, tie_term = 0, t, rank;
	int ties = 0;

	if (!na || !nb || any_nan(a, na) || any_nan(b, nb))
		return -EINVAL;
	o = malloc(n * sizeof(*o));
	if (!o)
		return -ENOMEM;
	for (i = 0; i < na; i++)
		o[i] = (struct mwu_obs){ a[i], 1 };
	for (i = 0; i < nb; i++)
		o[na + i] = (struct mwu_obs){ b[i], 0 };
	qsort(o, n, sizeof(*o), cmp_obs);
	for (i = 0; i < n; i = j) {
		in_a = 0;
		for (j = i; j < n && o[j].v == o[i].v; j++)
			in_a += (size_t)o[j].from_a;
		/* ranks i+1 .. j share their mean; exact in halves */
		rank = ((double)(i + 1) + (double)j) / 2;
		r1 += rank * (double)in_a;
		k = j - i;
		if (k > 1) {
			ties = 1;
			t = (double)k;
			tie_term += t * t * t - t;
		}
	}
	free(o);
	*ret_u = r1 - (double)na * ((double)na + 1) / 2;
	*ret_tie_term = tie_term;
	*ret_ties = ties;
	return 0;
}

static enum stats_mwu_method mwu_method(size_t na, size_t nb, int ties)
{
	if (na > STATS_MWU_EXACT_MAX_N || nb > STATS_MWU_EXACT_MAX_N)
		return STATS_MWU_ASYMPTOTIC;
	return ties ? STATS_MWU_PERMUTATION : STATS_MWU_EXACT;
}

/*
 * Exact two-sided p for U = u with m and n values: f(i, j, t), the number
 * of orderings of i a's and j b's with U = t, obeys
 *   f(i, j, t) = f(i - 1, j, t - j) + f(i, j - 1, t)
 * (the largest value is an a, beating all j b's, or a b). The distribution
 * is symmetric, so p = 2 P(U <= min(u, mn - u)), and only t up to that
 * bound is ever needed.
 */
/* counts[t] for t = 0..kmax: the orderings of m a's and n b's with U = t
 * (by the recurrence above), and their total C(m + n, m). */
static int mwu_counts(size_t m, size_t n, size_t kmax, double *counts, double *ret_total)
{
	size_t w = kmax + 1, i, j, t;
	double *prev = calloc((n + 1) * w, sizeof(*prev)), *cur = calloc((n + 1) * w, sizeof(*cur));
	double *swap, total = 1;

	if (!prev || !cur) {
		free(prev);
		free(cur);
		return -ENOMEM;
	}
	for (j = 0; j <= n; j++)
		prev[j * w] = 1;
	for (i = 1; i <= m; i++) {
		cur[0] = 1;
		for (t = 1; t < w; t++)
			cur[t] = 0;
		for (j = 1; j <= n; j++)
			for (t = 0; t < w; t++)
				cur[j * w + t] = cur[(j - 1) * w + t] +
						 (t >= j ? prev[j * w + t - j] : 0);
		swap = prev;
		prev = cur;
		cur = swap;
	}
	for (t = 0; t < w; t++)
		counts[t] = prev[n * w + t];
	for (i = 1; i <= m; i++)
		total = total * (double)(n + i) / (double)i;
	free(prev);
	free(cur);
	*ret_total = total;
	return 0;
}

static int mwu_exact_p(size_t m, size_t n, double u, double *ret_p)
{
	size_t k = (size_t)fmin(u, (double)m * (double)n - u), t;
	double *counts = malloc((k + 1) * sizeof(*counts)), sum = 0, total;
	int r;

	if (!counts)
		return -ENOMEM;
	r = mwu_counts(m, n, k, counts, &total);
	for (t = 0; r == 0 && t <= k; t++)
		sum += counts[t];
	free(counts);
	if (r == 0)
		*ret_p = fmin(1, 2 * sum / total);
	return r;
}

/*
 * The Hodges-Lehmann shift and its distribution-free interval (Moses): of
 * the na * nb differences b_j - a_i, the median is the estimate and the
 * k-th smallest and k-th largest bound the interval, k - 1 being the
 * largest U whose lower tail P(U <= k - 1) is at most (1 - level) / 2. The
 * interval inverts the Mann-Whitney test, so it agrees with the p-value
 * and covers at least its level for any continuous noise.
 */
int stats_shift_ci(const double *a, size_t na, const double *b, size_t nb, double level,
		   double *ret_est, double *ret_lo, double *ret_hi)
{
	size_t mn = na * nb, kmax = mn / 2, i, j, k = 0;
	double *counts, *d, total, cum = 0;
	int r;

	if (!na || !nb || na > STATS_MWU_EXACT_MAX_N || nb > STATS_MWU_EXACT_MAX_N ||
	    !stats_all_finite(a, na) || !stats_all_finite(b, nb) || !(level > 0 && level < 1))
		return -EINVAL;
	counts = malloc((kmax + 1) * sizeof(*counts));
	d = malloc(mn * sizeof(*d));
	if (!counts || !d) {
		r = -ENOMEM;
		goto out;
	}
	r = mwu_counts(na, nb, kmax, counts, &total);
	if (r < 0)
		goto out;
	/* k = how many lower-tail values of U stay within (1 - level) / 2 */
	while (k <= kmax && (cum + counts[k]) / total <= (1 - level) / 2)
		cum += counts[k++];
	if (!k) {
		r = -ERANGE;	/* too few values for this level */
		goto out;
	}
	for (i = 0; i < na; i++)
		for (j = 0; j < nb; j++)
			d[i * nb + j] = b[j] - a[i];
	qsort(d, mn, sizeof(*d), cmp_double);
	*ret_est = mn % 2 ? d[mn / 2] : (d[mn / 2 - 1] + d[mn / 2]) / 2;
	*ret_lo = d[k - 1];
	*ret_hi = d[mn - k];
out:
	free(counts);
	free(d);
	return r;
}

/*
 * Exact two-sided p with ties, conditional on the pooled values as they
 * are: every split of the n = m + k values into m a's and k b's is equally
 * likely under the null, and the statistic is a's sum of midranks. In
 * doubled units the midranks are integers (a tie group's mean rank is a
 * half at worst), so c[j][s], the number of j-subsets of the values seen
 * so far with doubled rank sum s, is counted value by value like a
 * knapsack. The two-sided p sums the subsets at least as far from the mean
 * m * T / n as the observed one, compared as integers: |n s - m T|.
 */
static int mwu_permutation_p(const double *a, size_t m, const double *b, size_t k, double *ret_p)
{
	size_t n = m + k, i, j, g, t, total, w;
	struct mwu_obs *o = malloc(n * sizeof(*o));
	long long *r2 = malloc(n * sizeof(*r2)), sobs = 0, dev_obs;
	double *c = NULL, sum = 0, all = 0;

	if (!o || !r2)
		goto nomem;
	for (i = 0; i < m; i++)
		o[i] = (struct mwu_obs){ a[i], 1 };
	for (i = 0; i < k; i++)
		o[m + i] = (struct mwu_obs){ b[i], 0 };
	qsort(o, n, sizeof(*o), cmp_obs);
	for (i = 0; i < n; i = g) {
		for (g = i; g < n && o[g].v == o[i].v; g++)
			;
		for (j = i; j < g; j++) {
			r2[j] = (long long)(i + 1 + g);	/* twice the mean of ranks i+1..g */
			if (o[j].from_a)
				sobs += r2[j];
		}
	}
	total = n * (n + 1);	/* the sum of all doubled ranks */
	w = total + 1;
	c = calloc((m + 1) * w, sizeof(*c));
	if (!c)
		goto nomem;
	c[0] = 1;
	for (i = 0; i < n; i++)
		for (j = (i + 1 < m ? i + 1 : m); j >= 1; j--)
			for (t = total; t >= (size_t)r2[i]; t--)
				c[j * w + t] += c[(j - 1) * w + t - (size_t)r2[i]];
	dev_obs = llabs((long long)n * sobs - (long long)m * (long long)total);
	for (t = 0; t < w; t++) {
		double cnt = c[m * w + t];

		if (cnt == 0)
			continue;
		all += cnt;
		if (llabs((long long)n * (long long)t - (long long)m * (long long)total) >= dev_obs)
			sum += cnt;
	}
	free(o);
	free(r2);
	free(c);
	*ret_p = fmin(1, sum / all);
	return 0;
nomem:
	free(o);
	free(r2);
	free(c);
	return -ENOMEM;
}

static double mwu_asymptotic_p(size_t na, size_t nb, double u, double tie_term)
{
	double n = (double)na + (double)nb, prod = (double)na * (double)nb;
	double mu = prod / 2, var, z;

	var = prod / 12 * ((n + 1) - tie_term / (n * (n - 1)));
	if (!(var > 0))
		return 1;
	/* scipy's form: the larger of U and U', continuity-corrected */
	z = (fmax(u, prod - u) - mu - 0.5) / sqrt(var);
	return fmin(1, erfc(z / M_SQRT2));
}

double stats_mwu_min_p(size_t na, size_t nb)
{
	double c = 1;
	size_t i;

	for (i = 1; i <= nb; i++)
		c = c * (double)(na + i) / (double)i;
	return fmin(1, 2 / c);
}

int stats_mann_whitney_method(const double *a, size_t na, const double *b, size_t nb)
{
	double u, tie_term;
	int ties, r;

	r = mwu_rank(a, na, b, nb, &u, &tie_term, &ties);
	if (r < 0)
		return r;
	return (int)mwu_method(na, nb, ties);
}

int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
		       double *ret_u, double *ret_p)
{
	double u, tie_term, p = NAN;
	int ties, r;

	r = mwu_rank(a, na, b, nb, &u, &tie_term, &ties);
	if (r < 0)
		return r;
	switch (mwu_method(na, nb, ties)) {
	case STATS_MWU_EXACT:
		r = mwu_exact_p(na, nb, u, &p);
		break;
	case STATS_MWU_PERMUTATION:
		r = mwu_permutation_p(a, na, b, nb, &p);
		break;
	default:
		p = mwu_asymptotic_p(na, nb, u, tie_term);
	}
	if (r < 0)
		return r;
	*ret_u = u;
	*ret_p = p;
	return 0;
}

/* ---- bootstrap ---- */

uint64_t stats_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void stats_rng_seed(struct stats_rng *r, uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = stats_splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t stats_rng_next(struct stats_rng *r)
{
	uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

/*
 * The median of one resample without sorting it: the median depends only
 * on how often each source value was drawn, so count the draws by the
 * value's rank (rank[j] is v[j]'s position in sorted) and walk the counts
 * to the middle. The draws are the same as drawing values and sorting them,
 * so the answer is bit-identical to that, in O(n) instead of O(n log n).
 */
static double resample_median(struct stats_rng *r, const double *sorted, const size_t *rank, size_t n,
			      size_t *count)
{
	size_t i, k, cum = 0, lo = (n - 1) / 2, hi = n / 2;
	double vlo = 0;
	int have_lo = 0;

	/* uniform indices in [0, n): draws below 2^64 mod n are rejected so
	 * every remainder is equally likely (the threshold computed once) */
	uint64_t bound = n, min = (0 - bound) % bound, x;

	memset(count, 0, n * sizeof(*count));
	for (i = 0; i < n; i++) {
		do
			x = stats_rng_next(r);
		while (x < min);
		count[rank[x % bound]]++;
	}
	for (k = 0; k < n; k++) {
		cum += count[k];
		if (!have_lo && cum > lo) {
			vlo = sorted[k];
			have_lo = 1;
		}
		if (cum > hi)
			return (vlo + sorted[k]) / 2;
	}
	return vlo;
}

/* sorted copy of v and each value's rank in it (ties: stable order) */
static int rank_values(const double *v, size_t n, double *sorted, size_t *rank)
{
	size_t i, j;

	/* insertion by position: n is small (boots per side) */
	for (i = 0; i < n; i++) {
		size_t pos = 0;

		for (j = 0; j < n; j++)
			if (v[j] < v[i] || (v[j] == v[i] && j < i))
				pos++;
		rank[i] = pos;
		sorted[pos] = v[i];
	}
	return 0;
}

/* The k-th smallest of x[0..n) (x is reordered), by quickselect. */
static double select_kth(double *x, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		double pivot = x[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;

		while (i <= j) {
			while (x[i] < pivot)
				i++;
			while (x[j] > pivot)
				j--;
			if (i <= j) {
				double t = x[i];

				x[i] = x[j];
				x[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return x[k];
	}
	return x[k];
}

/* numpy's default ("linear") quantile of x[0..n), including its choice of
 * endpoint by which the interpolation is anchored, without sorting all of
 * x: only the two order statistics it interpolates between are selected
 * (x is reordered). */
static double quantile_selected(double *x, size_t n, double q)
{
	double h = (double)(n - 1) * q, f, lo, hi, d;
	size_t i = (size_t)floor(h);

	if (i >= n - 1)
		return select_kth(x, n, n - 1);
	lo = select_kth(x, n, i);
	/* after selecting i, everything above position i is >= x[i]: the
	 * next order statistic is the smallest of those */
	hi = select_kth(x + i + 1, n - i - 1, 0);
	f = h - (double)i;
	d = hi - lo;
	return f >= 0.5 ? hi - d * (1 - f) : lo + d * f;
}

int stats_bootstrap_ci(const double *a, size_t na, const double *b, size_t nb,
		       enum stats_boot_kind kind, int resamples, uint64_t seed,
		       const double *levels, size_t nlevels, double *ret_lo, double *ret_hi)
{
	double *stat = NULL, *sa = NULL, *sb = NULL, ma, mb;
	size_t *ra = NULL, *rb = NULL, *ca = NULL, *cb = NULL, l;
	struct stats_rng rng;
	int i, r = 0;

	if (!na || !nb || resamples < 1 || !stats_all_finite(a, na) || !stats_all_finite(b, nb) ||
	    (kind != STATS_BOOT_RATIO && kind != STATS_BOOT_DIFF))
		return -EINVAL;
	for (l = 0; l < nlevels; l++)
		if (!(levels[l] > 0 && levels[l] < 1))
			return -EINVAL;
	stat = malloc((size_t)resamples * sizeof(*stat));
	sa = malloc(na * sizeof(*sa));
	sb = malloc(nb * sizeof(*sb));
	ra = malloc(na * sizeof(*ra));
	rb = malloc(nb * sizeof(*rb));
	ca = malloc(na * sizeof(*ca));
	cb = malloc(nb * sizeof(*cb));
	if (!stat || !sa || !sb || !ra || !rb || !ca || !cb) {
		r = -ENOMEM;
		goto out;
	}
	rank_values(a, na, sa, ra);
	rank_values(b, nb, sb, rb);
	stats_rng_seed(&rng, seed);
	/* the draw order (a's indices, then b's, resample after resample) is
	 * part of the reproducibility promise */
	for (i = 0; i < resamples; i++) {
		ma = resample_median(&rng, sa, ra, na, ca);
		mb = resample_median(&rng, sb, rb, nb, cb);
		if (kind == STATS_BOOT_DIFF) {
			stat[i] = mb - ma;
			continue;
		}
		if (ma == 0) {
			r = -EDOM;
			goto out;
		}
		stat[i] = mb / ma;
	}
	for (l = 0; l < nlevels; l++) {
		ret_lo[l] = quantile_selected(stat, (size_t)resamples, (1 - levels[l]) / 2);
		ret_hi[l] = quantile_selected(stat, (size_t)resamples, (1 + levels[l]) / 2);
	}
out:
	free(stat);
	free(sa);
	free(sb);
	free(ra);
	free(rb);
	free(ca);
	free(cb);
	return r;
}

/* ---- outliers ---- */

int stats_outliers_mad(const double *v, size_t n, double threshold, int *flags)
{
	double *dev, med, mad;
	size_t i;
	int count = 0;

	if (!n)
		return 0;
	if (n > INT_MAX || isnan(threshold) || threshold < 0 || any_nan(v, n))
		return -EINVAL;
	dev = copy_values(v, n);
	if (!dev)
		return -ENOMEM;
	med = median_inplace(dev, n);
	for (i = 0; i < n; i++)
		dev[i] = fabs(v[i] - med);
	mad = median_inplace(dev, n);
	free(dev);
	for (i = 0; i < n; i++) {
		if (mad == 0)
			flags[i] = v[i] != med;
		else
			flags[i] = fabs(0.6745 * (v[i] - med) / mad) > threshold;
		count += flags[i];
	}
	return count;
}

/* ---- multiplicity, spending, power ---- */

struct ranked_p {
	double p;
	size_t i;
};

static int cmp_ranked_p(const void *x, const void *y)
{
	return cmp_double(&((const struct ranked_p *)x)->p, &((const struct ranked_p *)y)->p);
}

/* the finite p-values of p[0..n) in ascending order, with their indices */
static struct ranked_p *sorted_family(const double *p, size_t n, size_t *ret_m, double *adj)
{
	struct ranked_p *f = malloc((n ? n : 1) * sizeof(*f));
	size_t i, m = 0;

	if (!f)
		return NULL;
	for (i = 0; i < n; i++) {
		adj[i] = NAN;
		if (!isnan(p[i]))
			f[m++] = (struct ranked_p){ p[i], i };
	}
	qsort(f, m, sizeof(*f), cmp_ranked_p);
	*ret_m = m;
	return f;
}

/*
 * Holm's step-down adjustment, or Benjamini-Hochberg's step-up (bh): the
 * k-th smallest of the m finite p-values (k from 0) is multiplied by m - k
 * (Holm, at most 1) or by m / (k + 1) (BH), and a running max from the
 * smallest up (Holm) or a running min from the largest down (BH) keeps
 * the adjusted values in the p-values' order.
 */
static int adjust_family(const double *p, size_t n, double *adj, int bh)
{
	size_t m, j, k;
	struct ranked_p *f = sorted_family(p, n, &m, adj);
	double run = bh ? 1 : 0;

	if (!f)
		return -ENOMEM;
	for (j = 0; j < m; j++) {
		k = bh ? m - 1 - j : j;
		if (bh)
			run = fmin(run, (double)m / (double)(k + 1) * f[k].p);
		else
			run = fmax(run, fmin(1, (double)(m - k) * f[k].p));
		adj[f[k].i] = run;
	}
	free(f);
	return 0;
}

int stats_holm(const double *p, size_t n, double *adj)
{
	return adjust_family(p, n, adj, 0);
}

int stats_bh(const double *p, size_t n, double *adj)
{
	return adjust_family(p, n, adj, 1);
}

double stats_obf_spent(double alpha, double t)
{
	if (!(alpha > 0 && alpha < 1) || !(t > 0 && t <= 1))
		return NAN;
	if (t == 1)
		return alpha;
	return stats_normal_p2(stats_t_quantile(alpha, INFINITY) / sqrt(t));
}

double stats_pocock_spent(double alpha, double t)
{
	if (!(alpha > 0 && alpha < 1) || !(t > 0 && t <= 1))
		return NAN;
	if (t == 1)
		return alpha;
	return alpha * log1p((M_E - 1) * t);
}

double stats_detectable_shift(double sd, size_t na, size_t nb, double alpha, double power,
			      double efficiency)
{
	double df = (double)na + (double)nb - 2;

	if (na < 2 || nb < 2 || !(sd >= 0) || !(alpha > 0 && alpha < 1) ||
	    !(power > 0.5 && power < 1) || !(efficiency > 0))
		return NAN;
	return (stats_t_quantile(alpha, df) + stats_t_quantile(2 * (1 - power), df)) * sd *
	       sqrt(1 / (double)na + 1 / (double)nb) / sqrt(efficiency);
}

double stats_detectable_shift_paired(double sd, size_t n, double alpha, double power)
{
	double df = (double)n - 1;

	if (n < 3 || !(sd >= 0) || !(alpha > 0 && alpha < 1) || !(power > 0.5 && power < 1))
		return NAN;
	return (stats_t_quantile(alpha, df) + stats_t_quantile(2 * (1 - power), df)) * sd / sqrt((double)n);
}
