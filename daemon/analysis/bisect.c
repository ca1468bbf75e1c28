/*
 * Bisection's decisions (bisect.h). The state is the marks alone, so a
 * bisection survives a restart by reading its steps back from the store.
 */
#include "bisect.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "util.h"

#include "banned.h"

static const char *const mark_names[BISECT_MARK_MAX] = {
	"untested", "good", "bad", "skip", "inconclusive",
};

const char *bisect_mark_name(int m)
{
	return m >= 0 && m < BISECT_MARK_MAX ? mark_names[m] : NULL;
}

static unsigned ceil_log2(size_t n)
{
	unsigned k = 0;

	while (((size_t)1 << k) < n)
		k++;
	return k;
}

int bisect_next(const enum bisect_mark *marks, size_t n, struct bisect_answer *ret)
{
	long lo = -1, i;
	size_t hi, mid, d, best = 0, candidates = 0;
	int found = 0;

	if (n == 0 || marks[n - 1] != BISECT_BAD)
		return -1;
	/* the last good commit, and the first bad one after it */
	for (i = 0; i < (long)n; i++)
		if (marks[i] == BISECT_GOOD)
			lo = i;
	for (hi = (size_t)(lo + 1); marks[hi] != BISECT_BAD; hi++)
		;
	for (i = lo + 1; i < (long)hi; i++)
		candidates += marks[i] == BISECT_UNTESTED;
	memset(ret, 0, sizeof(*ret));
	ret->lo = lo;
	ret->first_bad = hi;
	if ((size_t)(lo + 1) == hi) {
		ret->state = BISECT_FOUND;
		return 0;
	}
	if (!candidates) {
		ret->state = BISECT_STUCK;
		return 0;
	}
	/* the untested commit nearest the middle, the older one on a tie */
	mid = (size_t)(lo + 1) + (hi - (size_t)(lo + 1)) / 2;
	for (d = 0; !found && d < n; d++) {
		if (mid >= d && (long)(mid - d) > lo && marks[mid - d] == BISECT_UNTESTED) {
			best = mid - d;
			found = 1;
		} else if (mid + d < hi && marks[mid + d] == BISECT_UNTESTED) {
			best = mid + d;
			found = 1;
		}
	}
	ret->state = BISECT_NEXT;
	ret->index = best;
	ret->steps_left = ceil_log2(hi - (size_t)lo);
	return 0;
}

static const char *opposite(const char *change)
{
	if (!strcmp(change, "regression"))
		return "improvement";
	if (!strcmp(change, "improvement"))
		return "regression";
	return change;	/* "changed": either way */
}

enum bisect_mark bisect_classify(const char *good_to_step, const char *bad_to_step, const char *change)
{
	int like_good = good_to_step && !strcmp(good_to_step, "same");
	int like_bad = bad_to_step && !strcmp(bad_to_step, "same");
	int moved_from_good = good_to_step && change && !strcmp(good_to_step, change);
	int back_from_bad = bad_to_step && change && !strcmp(bad_to_step, opposite(change));

	if (like_good && !like_bad)
		return BISECT_GOOD;
	if (like_bad && !like_good)
		return BISECT_BAD;
	if (moved_from_good && !back_from_bad && !like_good)
		return BISECT_BAD;
	if (back_from_bad && !moved_from_good && !like_bad)
		return BISECT_GOOD;
	return BISECT_INCONCLUSIVE;
}

/* mean and variance (floored at floor^2) of the logs of v[0..n); -EINVAL
 * when n < 2 or a value is not > 0 */
static int log_moments(const double *v, size_t n, double floor, double *ret_mean, double *ret_var)
{
	double *l;
	size_t i;

	if (n < 2)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!(v[i] > 0) || !isfinite(v[i]))
			return -EINVAL;
	l = xcalloc(n, sizeof(*l));
	for (i = 0; i < n; i++)
		l[i] = log(v[i]);
	*ret_mean = stats_mean(l, n);
	*ret_var = fmax(stats_stddev(l, n) * stats_stddev(l, n), floor * floor);
	free(l);
	return 0;
}

int bisect_position(const double *good, size_t ng, const double *bad, size_t nb, const double *step, size_t ns,
		    double sd_floor, struct bisect_position *ret)
{
	double mg, vg, mb, vb, ms, vs, span, d, ug, ub, us, se2, den, p2;

	if (log_moments(good, ng, sd_floor, &mg, &vg) || log_moments(bad, nb, sd_floor, &mb, &vb) ||
	    log_moments(step, ns, sd_floor, &ms, &vs))
		return -EINVAL;
	span = mb - mg;
	if (span == 0)
		return -EDOM;
	/* the step's mean against the midpoint (mg + mb) / 2, signed so that
	 * positive is toward the bad end */
	d = (ms - (mg + mb) / 2) * (span > 0 ? 1 : -1);
	ug = vg / (double)ng / 4, ub = vb / (double)nb / 4, us = vs / (double)ns;
	se2 = ug + ub + us;
	den = ug * ug / (double)(ng - 1) + ub * ub / (double)(nb - 1) + us * us / (double)(ns - 1);
	ret->x = (ms - mg) / span;
	ret->t = d / sqrt(se2);
	ret->df = se2 * se2 / den;
	p2 = stats_t_p2(ret->t, ret->df);
	ret->p_bad = ret->t > 0 ? p2 / 2 : 1 - p2 / 2;
	ret->p_good = ret->t > 0 ? 1 - p2 / 2 : p2 / 2;
	return 0;
}

enum bisect_mark bisect_position_mark(const struct bisect_position *pos, double alpha, const char *good_to_step,
				      const char *bad_to_step, const char *change)
{
	int partway = good_to_step && bad_to_step && change && !strcmp(good_to_step, change) &&
		      !strcmp(bad_to_step, opposite(change));

	if (pos->p_good < alpha && (!partway || pos->x < 0.25))
		return BISECT_GOOD;
	if (pos->p_bad < alpha && (!partway || pos->x > 0.75))
		return BISECT_BAD;
	return BISECT_INCONCLUSIVE;
}
