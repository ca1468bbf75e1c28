/*
 * daemon/analysis/compare_rows.c: work rows whose boots fall into modes.
 * Under icount a work row's boots agree to about 0.1%, but now and then a
 * whole boot runs in another state of the kernel's own (mremap: 2 boots of
 * 18 at +15.5% kernel instructions per move). Such boots, measured from
 * both sides' median, are set aside (at most a third of a side) and the
 * rest Welch-tested: a comment-only patch stays `same`, with 3 base boots
 * of 9 in the mode too, a 2% change on every boot is still a regression
 * with a p that Holm over 12 headline rows can use, a patch that puts 4
 * boots of 9 into the mode is not `same`, and a side with most of its
 * boots in a mode is not held against the other side's ordinary boots.
 * Rows without such boots keep Welch, and a change of every boot of a side
 * is no mode.
 */
#include "testlib.h"

#include <math.h>

#include "compare.h"
#include "fixture_compare.h"
#include "jsonget.h"
#include "util.h"
#include "banned.h"

#define WORK_METRIC "mremap.kernel_insn_per_op"

/* nboots boots of one side, 3 windows each at 0.1% noise around center;
 * boots listed in slow[] (-1 ends it) run at center * mode */
static void add_mode_boots(json_t *doc, const char *side, int nboots, double center, const int *slow,
			   double mode)
{
	char boot[32];
	int b, i, k;

	for (b = 0; b < nboots; b++) {
		double f = 1;

		for (k = 0; slow && slow[k] >= 0; k++)
			if (slow[k] == b)
				f = mode;
		snprintf(boot, sizeof(boot), "%s-%d", side, b);
		for (i = 0; i < 3; i++) {
			long long run = add_run(doc, side, 0, 0, "mremap", "{\"workers\":1}", boot, 0);

			add_metric(doc, run, WORK_METRIC, center * f * (1 + 0.001 * rng_gauss()), "lower");
		}
	}
}

/* 9 boots a side, patched shifted; the comparison, its one row in *row */
static json_t *compared(uint64_t seed, double shift, const int *slow_base, const int *slow_patched,
			const json_t **row)
{
	json_t *doc = doc_new(), *c;

	rng_state = seed;
	add_mode_boots(doc, "base", 9, 14230, slow_base, 1.155);
	add_mode_boots(doc, "patched", 9, 14230 * (1 + shift), slow_patched, 1.155);
	c = compare_ab(doc);
	json_decref(doc);
	*row = row_of(c, WORK_METRIC, NULL);
	return c;
}

static size_t modes_of(const json_t *r, const char *side)
{
	return json_array_size(json_object_get(json_object_get(r, "mode_boots"), side));
}

static const char *method(const json_t *r)
{
	return jsonget_str(r, "p_method");
}

/* a comment-only patch, 2 base boots of 9 in the slow mode: same, and
 * what the row could have seen is near 1%, not 9% */
static void test_modes_same(void **state)
{
	static const int slow[] = { 0, 7, -1 };
	const json_t *r;
	json_t *c = compared(23, 0, slow, NULL, &r);
	const json_t *offsets = json_object_get(json_object_get(r, "mode_boots"), "base");

	(void)state;
	assert_int_equal(modes_of(r, "base"), 2);
	assert_int_equal(modes_of(r, "patched"), 0);
	assert_true(fabs(json_number_value(json_array_get(offsets, 0)) - 15.5) < 0.5);
	assert_string_equal(method(r), "welch, modes set aside");
	assert_int_equal(json_integer_value(json_array_get(json_object_get(json_object_get(r, "mode_boots"),
									     "set_aside"), 0)), 2);
	assert_string_equal(verdict(r), "same");
	assert_true(row_num(r, "mde_pct") < 2);
	assert_non_null(strstr(jsonget_str(r, "note"), "mode of their own"));
	json_decref(c);
}

/* 3 base boots of 9 in the mode (a side of 9 has that many 0.8% of the
 * time at one boot in 20, and a job has 12 sides): still set aside, same */
static void test_modes_third_same(void **state)
{
	static const int slow[] = { 1, 4, 8, -1 };
	const json_t *r;
	json_t *c = compared(41, 0, slow, NULL, &r);

	(void)state;
	assert_int_equal(modes_of(r, "base"), 3);
	assert_string_equal(method(r), "welch, modes set aside");
	assert_string_equal(verdict(r), "same");
	json_decref(c);
}

/* 6 base boots of 9 in a +5% mode, 2 patched: measured from its own
 * median, the base's 3 ordinary boots were its mode, and Welch held the
 * base's +5% boots against the patched side's ordinary ones (a false
 * call). From both sides' median the base's 6 are the mode, more than a
 * third: ranked, and no call */
static void test_modes_majority_no_call(void **state)
{
	static const int six[] = { 0, 1, 3, 4, 6, 8, -1 }, two[] = { 2, 5, -1 };
	json_t *doc = doc_new(), *c;
	const json_t *r;

	(void)state;
	rng_state = 43;
	add_mode_boots(doc, "base", 9, 14230, six, 1.05);
	add_mode_boots(doc, "patched", 9, 14230, two, 1.05);
	c = compare_ab(doc);
	json_decref(doc);
	r = row_of(c, WORK_METRIC, NULL);
	assert_int_equal(modes_of(r, "base"), 6);
	assert_int_equal(modes_of(r, "patched"), 2);
	assert_string_not_equal(method(r), "welch, modes set aside");
	assert_string_not_equal(verdict(r), "regression");
	assert_string_not_equal(verdict(r), "improvement");
	json_decref(c);
}

/* a 2% change on every boot, one base boot in the slow mode: still a
 * regression, and with a p below 0.01 / 3 / 12, the Holm step a lone
 * change meets among 12 headline rows at a second look's share of alpha
 * (the rank test gave about 0.005, so a job of 12 rows missed it); a
 * patch that puts 4 boots of 9 into the slow mode is not same */
static void test_modes_regression_and_share(void **state)
{
	static const int one[] = { 3, -1 }, four[] = { 1, 3, 5, 7, -1 };
	const json_t *r;
	json_t *c = compared(29, 0.02, one, NULL, &r);

	(void)state;
	assert_int_equal(modes_of(r, "base"), 1);
	assert_int_equal(modes_of(r, "patched"), 0);
	assert_string_equal(verdict(r), "regression");
	assert_true(jsonget_num_or(r, "p", 0) < 0.01 / 3 / 12);
	json_decref(c);
	c = compared(31, 0, NULL, four, &r);
	assert_int_equal(modes_of(r, "patched"), 4);
	assert_string_not_equal(verdict(r), "same");
	json_decref(c);
}

/* without boots in a mode, Welch as before; a 3% change of every
 * patched boot is no mode; a 0.5% spread of every boot
 * (no mode, just noise) is not taken for one either */
static void test_no_modes_welch(void **state)
{
	json_t *doc, *c;
	const json_t *r;
	int b;

	(void)state;
	c = compared(37, 0, NULL, NULL, &r);
	assert_null(json_object_get(r, "mode_boots"));
	assert_string_equal(method(r), "welch");
	assert_string_equal(verdict(r), "same");
	json_decref(c);
	c = compared(47, 0.03, NULL, NULL, &r);
	assert_null(json_object_get(r, "mode_boots"));
	assert_string_equal(method(r), "welch");
	assert_string_equal(verdict(r), "regression");
	json_decref(c);

	doc = doc_new();
	for (b = 0; b < 18; b++) {
		char boot[32];
		const char *side = b < 9 ? "base" : "patched";
		long long run;

		snprintf(boot, sizeof(boot), "%s-%d", side, b);
		run = add_run(doc, side, 0, 0, "mremap", "{\"workers\":1}", boot, 0);
		add_metric(doc, run, WORK_METRIC, 14230 * (1 + 0.005 * rng_gauss()), "lower");
	}
	c = compare_ab(doc);
	r = row_of(c, WORK_METRIC, NULL);
	assert_null(json_object_get(r, "mode_boots"));
	assert_string_equal(method(r), "welch");
	json_decref(c);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modes_same),
		cmocka_unit_test(test_modes_third_same),
		cmocka_unit_test(test_modes_majority_no_call),
		cmocka_unit_test(test_modes_regression_and_share),
		cmocka_unit_test(test_no_modes_welch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
