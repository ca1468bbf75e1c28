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

#include <errno.h>

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

/*
 * A step's place between the ends: t0055's case (the ends 53% apart, a good
 * commit measured 6% below the good end, per-boot spread near 10%) is good;
 * one near the bad end is bad; one halfway is neither; a step beyond the
 * bad end is bad; improvement and regression alike (the sign of the span);
 * sides too small or with a value <= 0 are refused.
 */
static void test_position(void **state)
{
	const double good[] = { 99000, 91000, 108000, 95000, 104000, 97000 };
	const double bad[] = { 46000, 42000, 51000, 44000, 49000, 45000 };
	const double drifted[] = { 93000, 88000, 99000 };
	const double near_bad[] = { 47000, 43500, 50000 };
	const double half[] = { 69000, 62000, 76000 };
	const double beyond[] = { 30000, 31000, 29000 };
	const double zero[] = { 1, 0, 2 };
	struct bisect_position pos;

	(void)state;
	assert_int_equal(bisect_position(good, 6, bad, 6, drifted, 3, 0.001, &pos), 0);
	assert_true(pos.x > 0.02 && pos.x < 0.15);
	assert_true(pos.p_good < 0.01);
	assert_true(pos.p_bad > 0.99);
	assert_int_equal(bisect_position_mark(&pos, 0.01, NULL, NULL, "regression"), BISECT_GOOD);
	assert_int_equal(bisect_position(good, 6, bad, 6, near_bad, 3, 0.001, &pos), 0);
	assert_true(pos.x > 0.9 && pos.x < 1.05);
	assert_int_equal(bisect_position_mark(&pos, 0.01, NULL, NULL, "regression"), BISECT_BAD);
	assert_int_equal(bisect_position(good, 6, bad, 6, half, 3, 0.001, &pos), 0);
	assert_true(pos.x > 0.4 && pos.x < 0.6);
	assert_int_equal(bisect_position_mark(&pos, 0.01, NULL, NULL, "regression"), BISECT_INCONCLUSIVE);
	assert_int_equal(bisect_position(good, 6, bad, 6, beyond, 3, 0.001, &pos), 0);
	assert_true(pos.x > 1.2);
	assert_int_equal(bisect_position_mark(&pos, 0.01, NULL, NULL, "regression"), BISECT_BAD);
	/* changed from both ends: partway, placed only within a quarter of an end */
	assert_int_equal(bisect_position(good, 6, bad, 6, drifted, 3, 0.001, &pos), 0);
	assert_int_equal(bisect_position_mark(&pos, 0.01, "regression", "improvement", "regression"), BISECT_GOOD);
	pos.x = 0.3;
	assert_int_equal(bisect_position_mark(&pos, 0.01, "regression", "improvement", "regression"),
			 BISECT_INCONCLUSIVE);
	assert_int_equal(bisect_position_mark(&pos, 0.01, "regression", "same", "regression"), BISECT_GOOD);
	assert_int_equal(bisect_position(good, 6, bad, 6, near_bad, 3, 0.001, &pos), 0);
	pos.x = 0.7;
	assert_int_equal(bisect_position_mark(&pos, 0.01, "regression", "improvement", "regression"),
			 BISECT_INCONCLUSIVE);
	pos.x = 0.8;
	assert_int_equal(bisect_position_mark(&pos, 0.01, "regression", "improvement", "regression"), BISECT_BAD);
	/* an improvement: the bad end above the good one */
	assert_int_equal(bisect_position(bad, 6, good, 6, near_bad, 3, 0.001, &pos), 0);
	assert_true(pos.x < 0.1);
	assert_int_equal(bisect_position_mark(&pos, 0.01, NULL, NULL, "regression"), BISECT_GOOD);
	/* a floor wider than the ends' gap leaves even the good end's twin unplaced */
	assert_int_equal(bisect_position(good, 6, bad, 6, drifted, 3, 1.0, &pos), 0);
	assert_int_equal(bisect_position_mark(&pos, 0.01, NULL, NULL, "regression"), BISECT_INCONCLUSIVE);
	assert_int_equal(bisect_position(good, 6, bad, 6, drifted, 1, 0.001, &pos), -EINVAL);
	assert_int_equal(bisect_position(good, 6, bad, 6, zero, 3, 0.001, &pos), -EINVAL);
	assert_int_equal(bisect_position(good, 6, good, 6, drifted, 3, 0.001, &pos), -EDOM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_position),
		cmocka_unit_test(test_skips),
		cmocka_unit_test(test_ends),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_position),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
