/*
 * agents/monitors/kfunc: reading ftrace's function profiler. The fixtures
 * are trace_stat/function<N> files in the kernel's own format (a 30-column
 * name, the hit count, then times in microseconds with as many decimals as
 * fit in 7 digits), one per CPU; the sums over CPUs are what the agent
 * reports.
 */
#include "testlib.h"

#include "monitors/kfunc.h"
#include "banned.h"

static void test_parse_and_sum(void **state)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	json_t *sums = json_object(), *e;

	(void)state;
	fixture_read(&a, "proc/trace_stat-function0");
	fixture_read(&b, "proc/trace_stat-function1");
	assert_int_equal(kfunc_parse_stat(a.buf, sums), 0);
	assert_int_equal(kfunc_parse_stat(b.buf, sums), 0);
	assert_int_equal(json_object_size(sums), 3);
	e = json_object_get(sums, "switch_mm_irqs_off");
	assert_int_equal(json_integer_value(json_array_get(e, 0)), 8412 + 1588);
	assert_float_equal(json_number_value(json_array_get(e, 1)), (5129.443 + 870.557) * 1000, 1e-6);
	/* fewer decimals once the microseconds take more digits */
	e = json_object_get(sums, "flush_tlb_mm_range");
	assert_float_equal(json_number_value(json_array_get(e, 1)), 41200, 1e-6);
	e = json_object_get(sums, "native_flush_tlb_multi");
	assert_float_equal(json_number_value(json_array_get(e, 1)), 13123456000.0, 1e-3);
	json_decref(sums);
	strbuf_release(&a);
	strbuf_release(&b);
}

/* Text that is not a trace_stat file is refused, and adds nothing. */
static void test_not_a_stat_file(void **state)
{
	json_t *sums = json_object();

	(void)state;
	assert_int_equal(kfunc_parse_stat("", sums), -1);
	assert_int_equal(kfunc_parse_stat("#### all functions enabled ####\n", sums), -1);
	assert_int_equal(kfunc_parse_stat("  Function  Hit  Time\n  x 1 2 ms\n  y z 1 us\n", sums), 0);
	assert_int_equal(json_object_size(sums), 0);
	json_decref(sums);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_and_sum),
		cmocka_unit_test(test_not_a_stat_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
