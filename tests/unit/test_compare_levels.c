/*
 * daemon/analysis/compare_rows.c: the level a row's interval has. A time
 * row's interval is a bootstrap of the ratio of medians, asked for at the
 * rules' ci_level (95%). From 3 boots a side no interval made from the
 * boots' order can hold the true change more than 90% of the time (all 3
 * of one side below all 3 of the other happens 1 time in 20 each way), and
 * b0008 measured 90.25% however wide it was asked to be; the row then says
 * its level (ci_level 0.9), and from 5 boots a side it says nothing, its
 * level being the rules'.
 */
#include "testlib.h"

#include <math.h>

#include "compare.h"
#include "fixture_compare.h"
#include "util.h"
#include "banned.h"

#define TIME_METRIC "mprotect.ops_per_sec"

/* nb and np boots of a time row at 2% noise; the row's ci_level, or -1
 * when it has none */
static double row_ci_level(uint64_t seed, int nb, int np)
{
	json_t *doc = doc_new(), *c;
	const json_t *r, *level;
	double ret;

	rng_state = seed;
	add_boots(doc, "base", nb, 0, "{}", TIME_METRIC, 1000, 0.02, "higher");
	add_boots(doc, "patched", np, 0, "{}", TIME_METRIC, 1000, 0.02, "higher");
	c = compare_ab(doc);
	json_decref(doc);
	r = row_of(c, TIME_METRIC, NULL);
	assert_int_equal(json_array_size(json_object_get(r, "ci")), 2);
	level = json_object_get(r, "ci_level");
	ret = level ? json_number_value(level) : -1;
	json_decref(c);
	return ret;
}

static void test_few_boots_level(void **state)
{
	(void)state;
	/* 1 - 2 / C(6, 3) = 0.9; 1 - 2 / C(7, 3) = 0.9428 */
	assert_true(fabs(row_ci_level(3, 3, 3) - 0.9) < 1e-9);
	assert_true(fabs(row_ci_level(5, 3, 4) - 0.942) < 1e-9);
	/* 1 - 2 / C(8, 4) = 0.971 reaches 95%: the rules' level holds */
	assert_true(row_ci_level(7, 4, 4) < 0);
	assert_true(row_ci_level(11, 5, 5) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_few_boots_level),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
