/*
 * daemon/bisect: the next commit to measure and when a bisection is over,
 * run against a simulated history (commit i is bad from the first bad one
 * on; some commits do not build) for every range length up to 200 and
 * every position of the first bad commit: it names the first bad commit in
 * at most ceil(log2(n + 1)) steps without skips, and with skips either
 * names it or a range that holds it and nothing but skipped commits
 * besides; and what a step's two verdicts make of it.
 */
#include "testlib.h"

#include "bisect.h"
#include "stats.h"
#include "util.h"
#include "banned.h"

/* bisects a range of n commits whose first bad one is f; skip[i]: commit i
 * does not build. Returns the steps taken; *ret the last answer. */
static unsigned run(size_t n, size_t f, const int *skip, struct bisect_answer *ret)
{
	enum bisect_mark marks[256];
	unsigned steps = 0;
	size_t i;

	for (i = 0; i < n; i++)
		marks[i] = BISECT_UNTESTED;
	marks[n - 1] = BISECT_BAD;
	for (;;) {
		assert_int_equal(bisect_next(marks, n, ret), 0);
		if (ret->state != BISECT_NEXT)
			return steps;
		assert_true(ret->index < n - 1);
		assert_int_equal(marks[ret->index], BISECT_UNTESTED);
		marks[ret->index] = skip && skip[ret->index] ? BISECT_SKIP : ret->index >= f ? BISECT_BAD : BISECT_GOOD;
		if (++steps > n)
			fail_msg("n %zu, f %zu: no end after %u steps", n, f, steps);
	}
}

static void test_every_position(void **state)
{
	struct bisect_answer a;
	size_t n, f;

	(void)state;
	for (n = 1; n <= 200; n++) {
		unsigned most = 0;

		while (((size_t)1 << most) < n + 1)
			most++;
		for (f = 0; f < n; f++) {
			unsigned steps = run(n, f, NULL, &a);

			if (a.state != BISECT_FOUND || a.first_bad != f)
				fail_msg("n %zu, f %zu: state %d, first bad %zu", n, f, a.state, a.first_bad);
			if (steps > most)
				fail_msg("n %zu, f %zu: %u steps, more than %u", n, f, steps, most);
		}
	}
}

static void test_skips(void **state)
{
	struct stats_rng rng;
	int skip[256];
	size_t n, f, i, found = 0, stuck = 0;

	(void)state;
	stats_rng_seed(&rng, 42);
	for (n = 2; n <= 120; n++)
		for (f = 0; f < n; f++) {
			struct bisect_answer a;

			for (i = 0; i < n; i++)
				skip[i] = i + 1 < n && stats_rng_next(&rng) % 5 == 0;
			run(n, f, skip, &a);
			if (a.state == BISECT_FOUND) {
				/* a skipped commit can hide the first bad one: then the
				 * one named is the first bad that could be built */
				for (i = f; i < a.first_bad; i++)
					assert_true(skip[i]);
				found++;
			} else {
				assert_int_equal(a.state, BISECT_STUCK);
				/* the range (lo, first_bad] holds f, and between them
				 * only commits that did not build */
				assert_true((long)f > a.lo && f <= a.first_bad);
				for (i = (size_t)(a.lo + 1); i < a.first_bad; i++)
					assert_true(skip[i]);
				stuck++;
			}
		}
	assert_true(found > 0 && stuck > 0);
}

static void test_ends(void **state)
{
	enum bisect_mark one[] = { BISECT_BAD };
	enum bisect_mark m[] = { BISECT_GOOD, BISECT_SKIP, BISECT_INCONCLUSIVE, BISECT_BAD, BISECT_BAD };
	enum bisect_mark open_end[] = { BISECT_UNTESTED, BISECT_UNTESTED };
	struct bisect_answer a;

	(void)state;
	/* one commit after the good end: it is the first bad */
	assert_int_equal(bisect_next(one, 1, &a), 0);
	assert_int_equal(a.state, BISECT_FOUND);
	assert_int_equal(a.first_bad, 0);
	assert_int_equal(a.lo, -1);
	/* stuck between a good commit and a bad one with a skip and an
	 * inconclusive step between them */
	assert_int_equal(bisect_next(m, 5, &a), 0);
	assert_int_equal(a.state, BISECT_STUCK);
	assert_int_equal(a.lo, 0);
	assert_int_equal(a.first_bad, 3);
	/* the bad end must be marked bad */
	assert_int_equal(bisect_next(open_end, 2, &a), -1);
	assert_int_equal(bisect_next(one, 0, &a), -1);
	assert_string_equal(bisect_mark_name(BISECT_SKIP), "skip");
	assert_null(bisect_mark_name(BISECT_MARK_MAX));
}

static void test_classify(void **state)
{
	/* good -> step, bad -> step, good -> bad: what the step is */
	static const struct {
		const char *g, *b, *change;
		enum bisect_mark want;
	} cases[] = {
		/* chasing a regression */
		{ "same", "improvement", "regression", BISECT_GOOD },
		{ "same", "inconclusive", "regression", BISECT_GOOD },
		{ "regression", "same", "regression", BISECT_BAD },
		{ "inconclusive", "same", "regression", BISECT_BAD },
		/* not the same as either, but moved as the bad end did: bad */
		{ "regression", "inconclusive", "regression", BISECT_BAD },
		/* better than the bad end and not worse than good: good */
		{ "inconclusive", "improvement", "regression", BISECT_GOOD },
		/* same as both, or neither, or halfway: the rule cannot tell */
		{ "same", "same", "regression", BISECT_INCONCLUSIVE },
		{ "inconclusive", "inconclusive", "regression", BISECT_INCONCLUSIVE },
		{ "regression", "improvement", "regression", BISECT_INCONCLUSIVE },
		/* chasing an improvement, and a metric without a better side */
		{ "improvement", "same", "improvement", BISECT_BAD },
		{ "same", "regression", "improvement", BISECT_GOOD },
		{ "changed", "same", "changed", BISECT_BAD },
		{ "changed", "changed", "changed", BISECT_INCONCLUSIVE },
		{ NULL, NULL, "regression", BISECT_INCONCLUSIVE },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		enum bisect_mark got = bisect_classify(cases[i].g, cases[i].b, cases[i].change);

		if (got != cases[i].want)
			fail_msg("good->step %s, bad->step %s, chasing %s: %s, not %s", cases[i].g, cases[i].b,
				 cases[i].change, bisect_mark_name(got), bisect_mark_name(cases[i].want));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_position),
		cmocka_unit_test(test_skips),
		cmocka_unit_test(test_ends),
		cmocka_unit_test(test_classify),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
