/*
 * E-Divisive means with a permutation test (changepoint.h says what it
 * finds). The energy statistic of a split of y[0..m) into A = y[0..t) and
 * B = y[t..m), with a = t, b = m - t and distances |y_i - y_j|:
 *
 *   Q(t) = ab / (a + b) * (2 mean|A - B| - mean|A - A'| - mean|B - B'|)
 *
 * where the within-side means run over distinct pairs. Q is computed for
 * every t in one pass of O(m^2): moving point t from B to A adds its
 * distances to the points before it to A's pair sum and takes its distances
 * to the points after it out of B's; the between sum is the total minus
 * both. A window of 50 points and 999 shuffles is about 2.5 million
 * distance evaluations a test; a test stops as soon as enough shuffles
 * reach the observed Q to make it insignificant, which is at once on a flat
 * series.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "changepoint.h"
#include "stats.h"
#include "util.h"
#include "banned.h"

void changepoint_opts_init(struct changepoint_opts *o)
{
	o->window = 50;
	o->max_p = 0.001;
	o->min_magnitude = 0.02;
	o->permutations = 1999;
	o->min_segment = 3;
	o->seed = 1;
}

/* Q of every admissible split of y[0..m) into q (when not NULL); returns the
 * largest Q and its split in *ret_t (0 when no split is admissible). */
static double energy_scan(const double *y, size_t m, size_t minseg, double *q, size_t *ret_t)
{
	double total = 0, wl = 0, wr, best = -INFINITY;
	size_t i, j, t;

	*ret_t = 0;
	for (i = 0; i < m; i++)
		for (j = i + 1; j < m; j++)
			total += fabs(y[i] - y[j]);
	wr = total;
	for (t = 0; t + 1 < m; t++) {
		double to_left = 0, to_right = 0, between, e, a, b, qt;

		for (i = 0; i < t; i++)
			to_left += fabs(y[i] - y[t]);
		for (j = t + 1; j < m; j++)
			to_right += fabs(y[t] - y[j]);
		wl += to_left;
		wr -= to_right;
		/* the split after point t: A = y[0..t+1) */
		if (t + 1 < minseg || m - t - 1 < minseg)
			continue;
		a = (double)(t + 1);
		b = (double)(m - t - 1);
		between = total - wl - wr;
		e = 2 * between / (a * b) - 2 * wl / (a * (a - 1)) - 2 * wr / (b * (b - 1));
		qt = a * b / (a + b) * e;
		if (q)
			q[t + 1] = qt;
		if (qt > best) {
			best = qt;
			*ret_t = t + 1;
		}
	}
	return best;
}

int changepoint_energy(const double *v, size_t n, size_t min_segment, double *q)
{
	size_t i, t;

	if (min_segment < 2 || !q)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return -EINVAL;
	for (i = 0; i <= n; i++)
		q[i] = 0;
	energy_scan(v, n, min_segment, q, &t);
	return 0;
}

/* a uniform integer in [0, bound): draws below 2^64 mod bound are rejected */
static size_t draw_below(struct stats_rng *r, size_t bound)
{
	uint64_t min = (0 - (uint64_t)bound) % bound, x;

	do
		x = stats_rng_next(r);
	while (x < min);
	return (size_t)(x % bound);
}

/*
 * The permutation p of the best split of y[0..m) (whose largest Q is
 * observed): shuffles of a copy in work[], stopping once p must exceed
 * max_p. The stream is seeded from the segment's place in the series, so
 * the answer does not depend on the order windows are read in.
 */
static double permutation_p(const double *y, size_t m, double observed,
			    const struct changepoint_opts *o, size_t start, double *work)
{
	struct stats_rng rng;
	uint64_t mix = o->seed ^ ((uint64_t)start << 32) ^ (uint64_t)m;
	double limit = o->max_p * (o->permutations + 1.0) - 1;
	int k, reached = 0;
	size_t i, t;

	stats_rng_seed(&rng, stats_splitmix64(&mix));
	memcpy(work, y, m * sizeof(*work));
	for (k = 0; k < o->permutations; k++) {
		for (i = m - 1; i > 0; i--) {
			size_t j = draw_below(&rng, i + 1);
			double tmp = work[i];

			work[i] = work[j];
			work[j] = tmp;
		}
		/* a shuffle that ties the observed Q counts against the change */
		if (energy_scan(work, m, o->min_segment, NULL, &t) >= observed * (1 - 1e-12)) {
			reached++;
			if (reached > limit)	/* p > max_p whatever follows */
				break;
		}
	}
	return (reached + 1.0) / (o->permutations + 1.0);
}

/* the significant splits of every window: index and p only, until the
 * levels either side are measured over all of them */
struct found {
	struct changepoint *v;
	size_t n, alloc;
};

static int found_add(struct found *f, const struct changepoint *c, size_t min_segment)
{
	size_t i;

	/* the same change from another window: keep the stronger sighting */
	for (i = 0; i < f->n; i++) {
		struct changepoint *o = &f->v[i];
		size_t d = o->index > c->index ? o->index - c->index : c->index - o->index;

		if (d < min_segment) {
			if (c->p < o->p)
				*o = *c;
			return 0;
		}
	}
	if (f->n == f->alloc) {
		size_t na = f->alloc ? 2 * f->alloc : 8;
		struct changepoint *nv = realloc(f->v, na * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		f->v = nv;
		f->alloc = na;
	}
	f->v[f->n++] = *c;
	return 0;
}

static double median_of(const double *v, size_t n, double *work)
{
	memcpy(work, v, n * sizeof(*work));
	return stats_median(work, n);
}

/*
 * The levels either side of each split, over the points between it and
 * its neighbours (at most half a window a side), and the splits whose
 * change is at least min_magnitude, in place. f is sorted by index.
 */
static void measure_levels(const double *v, size_t n, const struct changepoint_opts *o,
			   struct found *f, double *work)
{
	size_t i, kept = 0, half = o->window / 2;

	for (i = 0; i < f->n; i++) {
		struct changepoint *c = &f->v[i];
		size_t lo = i > 0 ? f->v[i - 1].index : 0;
		size_t hi = i + 1 < f->n ? f->v[i + 1].index : n;

		if (c->index - lo > half)
			lo = c->index - half;
		if (hi - c->index > half)
			hi = c->index + half;
		c->seg_start = lo;
		c->seg_end = hi;
		c->before = median_of(v + lo, c->index - lo, work);
		c->after = median_of(v + c->index, hi - c->index, work);
		if (c->before != 0)
			c->magnitude = (c->after - c->before) / fabs(c->before);
		else
			c->magnitude = c->after == 0 ? 0 : copysign(INFINITY, c->after);
	}
	for (i = 0; i < f->n; i++)
		if (fabs(f->v[i].magnitude) >= o->min_magnitude)
			f->v[kept++] = f->v[i];
	f->n = kept;
}

/* binary segmentation of v[start..end), one window */
static int segment_window(const double *v, size_t start, size_t end,
			  const struct changepoint_opts *o, struct found *f, double *work)
{
	size_t stack[CHANGEPOINT_WINDOW_MAX / 2 + 2][2], top = 0;
	int r;

	stack[top][0] = start;
	stack[top][1] = end;
	top++;
	while (top > 0) {
		size_t s, e, t, m;
		double qmax, p;
		struct changepoint c = { 0 };

		top--;
		s = stack[top][0];
		e = stack[top][1];
		m = e - s;
		if (m < 2 * o->min_segment)
			continue;
		qmax = energy_scan(v + s, m, o->min_segment, NULL, &t);
		if (t == 0 || !(qmax > 0))
			continue;
		p = permutation_p(v + s, m, qmax, o, s, work);
		if (p > o->max_p)
			continue;
		c.index = s + t;
		c.p = p;
		r = found_add(f, &c, o->min_segment);
		if (r < 0)
			return r;
		/* depth first: the stack holds at most one segment a level
		 * plus one, and a level takes at least min_segment points */
		stack[top][0] = s;
		stack[top][1] = s + t;
		top++;
		stack[top][0] = s + t;
		stack[top][1] = e;
		top++;
	}
	return 0;
}

static int by_index(const void *a, const void *b)
{
	const struct changepoint *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

int changepoint_detect(const double *v, size_t n, const struct changepoint_opts *o,
		       struct changepoint **ret, size_t *ret_n)
{
	struct found f = { 0 };
	double *work = NULL;
	size_t i, s, w;
	int r = 0;

	if (!o || o->min_segment < 2 || o->window < 2 * o->min_segment || !(o->max_p > 0) ||
	    !(o->max_p < 1) || o->permutations < 1 || !(o->min_magnitude >= 0) ||
	    o->window > CHANGEPOINT_WINDOW_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return -EINVAL;
	w = n < o->window ? n : o->window;
	work = malloc((w ? w : 1) * sizeof(*work));
	if (!work) {
		r = -ENOMEM;
		goto out;
	}
	for (s = 0; n > 0; s += o->window / 2) {
		size_t e = s + w;

		if (e >= n) {	/* the last window ends at the last point */
			r = segment_window(v, n - w, n, o, &f, work);
			break;
		}
		r = segment_window(v, s, e, o, &f, work);
		if (r < 0)
			break;
	}
	if (r < 0)
		goto out;
	if (f.n)
		qsort(f.v, f.n, sizeof(*f.v), by_index);
	measure_levels(v, n, o, &f, work);
	if (!f.n) {
		free(f.v);
		f.v = NULL;
	}
	*ret = f.v;
	*ret_n = f.n;
	f.v = NULL;
out:
	free(f.v);
	free(work);
	return r;
}
