/*
 * Bisection's decisions (bisect.h). The state is the marks alone, so a
 * bisection survives a restart by reading its steps back from the store.
 */
#include "bisect.h"

#include <string.h>

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
