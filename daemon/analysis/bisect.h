#ifndef TLBLAB_BISECT_H
#define TLBLAB_BISECT_H

#include <stddef.h>

/*
 * Bisection's decisions, as pure functions (no I/O): which commit to
 * measure next, what a measured step says, and when it is over. The range
 * is the commits after the good end, oldest first, up to the bad end,
 * which is the last of them (c[n - 1], known bad); the good end is before
 * c[0]. A commit that does not build or boot is skipped, as `git bisect
 * skip` does: the next one tried is the untested commit nearest the
 * middle. A step the A/B rule cannot call is inconclusive: measured again
 * with more boots by the caller, or, when that is spent, treated like a
 * skip.
 */

enum bisect_mark {
	BISECT_UNTESTED,
	BISECT_GOOD,
	BISECT_BAD,
	BISECT_SKIP,		/* does not build or boot */
	BISECT_INCONCLUSIVE,	/* measured, and the rule could not tell */
	BISECT_MARK_MAX
};

enum bisect_state {
	BISECT_NEXT,		/* measure *ret_index next */
	BISECT_FOUND,		/* *ret_first_bad is the first bad commit */
	BISECT_STUCK,		/* only skipped or inconclusive commits lie between
				 * the last good and the first bad: the range
				 * (*ret_lo, *ret_first_bad] is as narrow as it gets */
	BISECT_STATE_MAX
};

struct bisect_answer {
	enum bisect_state state;
	size_t index;		/* BISECT_NEXT: the commit to measure */
	size_t first_bad;	/* BISECT_FOUND, BISECT_STUCK */
	long lo;		/* the last good commit (-1: the good end) */
	unsigned steps_left;	/* at most this many more steps, without skips */
};

/* The next move over marks[0..n) (marks[n - 1] must be BISECT_BAD: the
 * bad end). -1 when n is 0 or the bad end is not marked bad, else 0. */
int bisect_next(const enum bisect_mark *marks, size_t n, struct bisect_answer *ret);

/*
 * What a measured step is, from the one-word verdicts (compare.h) of the
 * row being chased: good_to_step (the good end as base, the step as
 * patched), bad_to_step (the bad end as base), and change (the good end
 * against the bad end: "regression" or "improvement", or "changed" for a
 * metric without a better side). The step is good when it is the same as
 * the good end and not as the bad one, or shows the change the other way
 * against the bad end; bad when it is the same as the bad end and not the
 * good one, or shows the change against the good end; inconclusive
 * otherwise.
 */
enum bisect_mark bisect_classify(const char *good_to_step, const char *bad_to_step, const char *change);

/*
 * Where a step lies between the ends, from the per-boot values of the
 * chased row (all > 0): x is the step's geometric mean on the log line
 * from the good end's (0) to the bad end's (1). p_good and p_bad are the
 * one-sided p-values, by a Welch t test on logs, of the step's mean log
 * lying on the good or the bad side of the ends' midpoint; each side's sd
 * is at least sd_floor (a log value, >= 0). The test asks which end a step
 * resembles, the bisection's question, so a step that drifted a few
 * percent from the good end while the ends lie 50% apart is still
 * plainly good; two verdicts against the ends, each at its own margin,
 * would call it changed from both. 0, or -EINVAL when a side has fewer
 * than 2 values or a value is not > 0, -EDOM when the ends' means agree.
 */
struct bisect_position {
	double x;
	double p_good, p_bad;
	double t, df;
};

int bisect_position(const double *good, size_t ng, const double *bad, size_t nb, const double *step, size_t ns,
		    double sd_floor, struct bisect_position *ret);

/*
 * The mark a position gives at level alpha, with the step's two verdicts
 * (as bisect_classify takes them): good or bad when that side's p is below
 * alpha; but a step the verdicts call changed from both ends, toward the
 * bad one from the good and back from the bad, lies partway, and is good
 * or bad only within a quarter of the way from that end (x < 0.25, or
 * x > 0.75). A commit that made half the change is neither; measured
 * again, it stays inconclusive. Else inconclusive.
 */
enum bisect_mark bisect_position_mark(const struct bisect_position *pos, double alpha, const char *good_to_step,
				      const char *bad_to_step, const char *change);

/* "untested", "good", "bad", "skip", "inconclusive"; NULL past the end. */
const char *bisect_mark_name(int m);

#endif
