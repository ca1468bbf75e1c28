/*
 * daemon/analysis/compare_rows.c: work rows from a base near 0 (issue 38),
 * apart from test_compare.c. A count per operation that was 0 has no %
 * change and no rank test that 3 boots a side could pass: it is tested on
 * its values (Welch's t, `p_method: welch, absolute`) against an absolute
 * least change.
 */
#include "testlib.h"

#include <math.h>

#include "compare.h"
#include "fixture_compare.h"
#include "jsonget.h"
#include "util.h"
#include "banned.h"

/* the values of one counter per op, unit shootdowns/kop, one boot each */
static void add_counts(json_t *doc, const char *side, const char *metric, const double *v, int n)
{
	add_values_unit(doc, side, "c", metric, v, n, "lower", "shootdowns/kop");
}

/*
 * Counts from a base near 0 (issue 38): a ratio means nothing there and
 * a rank test of 3 boots a side cannot call anything. The demo's 0 ->
 * 1000 shootdowns per kop at 3+3 is a regression, its change absolute; so
 * is 0 -> 0.37 (the least change is 0.1 per kop: min_change_count, 0.0001
 * per op); a rise the boots cannot tell from noise is inconclusive, and a
 * count that stayed near 0 is same.
 */
static void test_counts_from_zero(void **state)
{
	const double zero[] = { 0, 0, 0 }, demo[] = { 999.9, 1000.2, 999.7 };
	const double small[] = { 0.37, 0.41, 0.33 }, cal_b[] = { 0.001, 0, 0.002 }, cal_p[] = { 33, 31, 35 };
	const double noise_b[] = { 0, 0.01, 0 }, noise_p[] = { 0.01, 0, 0 }, vague[] = { 0.05, 0.3, 0 };
	json_t *doc = doc_new(), *c;
	const json_t *r;

	(void)state;
	add_counts(doc, "base", "tlb.shootdowns_per_kop", zero, 3);
	add_counts(doc, "patched", "tlb.shootdowns_per_kop", demo, 3);
	add_counts(doc, "base", "vmstat.nr_tlb_remote_flush_received.per_kop", zero, 3);
	add_counts(doc, "patched", "vmstat.nr_tlb_remote_flush_received.per_kop", small, 3);
	add_counts(doc, "base", "interrupts.CAL.per_kop", cal_b, 3);
	add_counts(doc, "patched", "interrupts.CAL.per_kop", cal_p, 3);
	add_counts(doc, "base", "interrupts.TLB.per_kop", zero, 3);
	add_counts(doc, "patched", "interrupts.TLB.per_kop", vague, 3);
	add_counts(doc, "base", "interrupts.RES.per_kop", noise_b, 3);
	add_counts(doc, "patched", "interrupts.RES.per_kop", noise_p, 3);
	c = compare_ab(doc);
	r = row_of(c, "tlb.shootdowns_per_kop", NULL);
	assert_string_equal(verdict(r), "regression");
	assert_string_equal(jsonget_str(r, "p_method"), "welch, absolute");
	assert_true(json_is_null(json_object_get(r, "change_pct")));
	assert_float_equal(jsonget_num_or(r, "change_abs", 0), 999.9333, 1e-3);
	assert_float_equal(jsonget_num_or(r, "min_change_abs", 0), 0.1, 1e-12);
	assert_contains(jsonget_str(r, "reason"), "from a base near 0: +999.9 shootdowns/kop");
	r = row_of(c, "vmstat.nr_tlb_remote_flush_received.per_kop", NULL);
	assert_string_equal(verdict(r), "regression");
	r = row_of(c, "interrupts.TLB.per_kop", NULL);
	assert_string_equal(verdict(r), "inconclusive");
	assert_contains(jsonget_str(r, "reason"), "at least 0.1 shootdowns/kop");
	/* not +3,306,281% */
	r = row_of(c, "interrupts.CAL.per_kop", NULL);
	assert_string_equal(verdict(r), "regression");
	assert_true(json_is_null(json_object_get(r, "change_pct")));
	assert_float_equal(jsonget_num_or(r, "change_abs", 0), 32.999, 1e-9);
	r = row_of(c, "interrupts.RES.per_kop", NULL);
	assert_string_equal(verdict(r), "same");
	assert_contains(jsonget_str(r, "reason"), "within +-0.1 shootdowns/kop");
	json_decref(c);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_from_zero),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
