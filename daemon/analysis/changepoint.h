#ifndef TLBLAB_CHANGEPOINT_H
#define TLBLAB_CHANGEPOINT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Change points in a nightly series: E-Divisive means (Matteson and James)
 * with a permutation test, over overlapping windows. A pure module: no I/O,
 * the same answer for the same input and seed on every platform.
 *
 * The series is read in windows of `window` points that overlap by half
 * (the last one ends at the last point). Inside a window, binary
 * segmentation: the split that maximises the energy statistic Q is kept
 * when the largest Q of `permutations` shuffles of that segment reaches it
 * rarely enough, p = (1 + reached) / (1 + permutations) <= max_p, and the
 * two halves are searched again. A kept split is reported when the median
 * after it differs from the median before it (the points of its segment on
 * each side) by at least min_magnitude, relative; a significant but smaller
 * split still divides the segment, so a larger change beside it is found.
 * The same change seen from two windows is reported once, with the smaller
 * p. Because the test shuffles the segment it searched, choosing the best
 * split does not inflate the significance, and one outlier, which can land
 * anywhere in a shuffle, does not make a change.
 */

#define CHANGEPOINT_WINDOW_MAX 500

struct changepoint_opts {
	size_t window;		/* points a window holds, 2 * min_segment to the max */
	double max_p;		/* a split is significant at p <= max_p */
	double min_magnitude;	/* |after - before| / |before| to report, e.g. 0.02 */
	int permutations;	/* shuffles per test; max_p needs >= 1 / max_p - 1 */
	size_t min_segment;	/* fewest points on either side of a split, >= 2 */
	uint64_t seed;		/* the shuffles' stream */
};

/* The defaults of DESIGN.md: window 50, p <= 0.001 with 1999 shuffles,
 * magnitude >= 2%, segments of at least 3 points, seed 1. */
void changepoint_opts_init(struct changepoint_opts *o);

struct changepoint {
	size_t index;		/* the first point of the new level */
	double p;		/* the permutation test's p-value */
	double before;		/* median of the segment before index */
	double after;		/* median of the segment from index on */
	double magnitude;	/* (after - before) / |before|, +-INFINITY when before is 0 */
	size_t seg_start;	/* the tested segment: [seg_start, seg_end) */
	size_t seg_end;
};

/*
 * The change points of v[0..n), in increasing index. *ret (caller frees,
 * NULL when none) and *ret_n are written only on success. Returns 0,
 * -EINVAL (a value not finite, options out of range: window not in
 * [2 * min_segment, CHANGEPOINT_WINDOW_MAX], min_segment < 2, max_p not in (0, 1), permutations < 1,
 * min_magnitude negative or NaN), -ENOMEM.
 */
int changepoint_detect(const double *v, size_t n, const struct changepoint_opts *o,
		       struct changepoint **ret, size_t *ret_n);

/* The energy statistic of every split of v[0..n): q[t] for t in
 * [min_segment, n - min_segment] (the split puts v[0..t) before), 0
 * elsewhere; q has n + 1 entries. Exposed for tests. -EINVAL, -ENOMEM. */
int changepoint_energy(const double *v, size_t n, size_t min_segment, double *q);

#endif
