/*
 * The parsers of other programs' output: exec's score parsers over real
 * stress-ng output (0.15's "metrc:" lines, the older "info:" ones), and the
 * perf report / perf script readers of the profile monitor over output of
 * perf 6.1 recorded on a 2-CPU guest while stress-ng --tlb-shootdown ran.
 */
#include "testlib.h"

#include <math.h>

#include "jsonget.h"
#include "workloads/workload.h"
#include "monitors/profile.h"
#include "banned.h"

#define EPS 1e-9

struct score {
	int rc;
	double score, ops;
	struct strbuf err;
};

static struct score run_parser(const char *parser, const char *out, double elapsed)
{
	struct score s = { 0, -1, -1, STRBUF_INIT };

	s.rc = exec_parse_score(parser, out, elapsed, &s.score, &s.ops, &s.err);
	return s;
}

static struct score run_parser_fixture(const char *parser, const char *rel)
{
	struct strbuf sb = STRBUF_INIT;
	struct score s;

	fixture_read(&sb, rel);
	s = run_parser(parser, sb.buf, 3.0);
	strbuf_release(&sb);
	return s;
}

/* ---- exec: stress-ng ---- */

static void test_stress_ng_metrc(void **state)
{
	struct score s = run_parser_fixture("stress-ng", "stress-ng-tlb-shootdown.txt");

	(void)state;
	if (s.rc)
		fail_msg("%s", s.err.buf);
	/* the "bogo ops/s (real time)" column, and the bogo ops */
	assert_float_equal(s.score, 1591.26, EPS);
	assert_float_equal(s.ops, 4796, EPS);
	strbuf_release(&s.err);
}

static void test_stress_ng_two_stressors_verbose(void **state)
{
	struct score s = run_parser_fixture("stress-ng", "stress-ng-two-stressors-verbose.txt");

	(void)state;
	if (s.rc)
		fail_msg("%s", s.err.buf);
	/* summed over stressors; the -v debug lines are not metrics */
	assert_float_equal(s.score, 705.23 + 0.28, EPS);
	assert_float_equal(s.ops, 2123 + 1, EPS);
	strbuf_release(&s.err);
}

static void test_stress_ng_info_format(void **state)
{
	struct score s = run_parser_fixture("stress-ng", "stress-ng-info-format.txt");

	(void)state;
	if (s.rc)
		fail_msg("%s", s.err.buf);
	assert_float_equal(s.score, 1955.42 + 11.94, EPS);
	assert_float_equal(s.ops, 3912 + 24, EPS);
	strbuf_release(&s.err);
}

static void test_stress_ng_other_tags(void **state)
{
	/* numbers on a line of another tag count for nothing, even when a
	 * metrics line follows further down */
	struct score s = run_parser("stress-ng",
		"stress-ng: debug: [10357] tlb-shootdown 1 2 3 4 5 6\n"
		"stress-ng: fail:  [10357] mmap 7 8 9 10 11 12\n"
		"stress-ng: metrc: [10357] tlb-shootdown      2123      3.01      1.03      0.93       705.23        1082.72\n",
		3.0);

	(void)state;
	assert_int_equal(s.rc, 0);
	assert_float_equal(s.score, 705.23, EPS);
	assert_float_equal(s.ops, 2123, EPS);
	strbuf_release(&s.err);
}

static void test_stress_ng_no_metrics(void **state)
{
	struct score s = run_parser("stress-ng",
		"stress-ng: info:  [10035] setting to a 2 second run per stressor\n"
		"stress-ng: info:  [10035] dispatching hogs: 2 tlb-shootdown\n"
		"stress-ng: info:  [10035] successful run completed in 3.02s\n", 3.0);

	(void)state;
	assert_int_equal(s.rc, -1);
	assert_string_equal(s.err.buf,
		"parser stress-ng: no metrics line in the output (run it with --metrics-brief)");
	strbuf_release(&s.err);

	/* only the header rows: still nothing measured */
	s = run_parser("stress-ng",
		"stress-ng: metrc: [1] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s\n"
		"stress-ng: metrc: [1]                           (secs)    (secs)    (secs)   (real time) (usr+sys time)\n",
		1.0);
	assert_int_equal(s.rc, -1);
	assert_contains(s.err.buf, "no metrics line");
	strbuf_release(&s.err);

	s = run_parser("stress-ng", "", 1.0);
	assert_int_equal(s.rc, -1);
	strbuf_release(&s.err);
}

/* ---- exec: last-number, none, unknown ---- */

static void test_last_number(void **state)
{
	static const struct { const char *out; double want; } cases[] = {
		{ "result: 12.5 ops\n", 12.5 },
		{ "run 1\nrun 2\nthroughput 8123.75 MB/s\n", 8123.75 },
		{ "delta -3.25e2\n", -325 },
		{ "42", 42 },
		{ "ratio .5\n", 0.5 },
		/* a trailing word without digits does not hide the number before it */
		{ "took 17 seconds, done\n", 17 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct score s = run_parser("last-number", cases[i].out, 1.0);

		if (s.rc)
			fail_msg("case %zu: %s", i, s.err.buf);
		if (fabs(s.score - cases[i].want) > EPS)
			fail_msg("case %zu: %s -> %g, want %g", i, cases[i].out, s.score, cases[i].want);
		assert_float_equal(s.ops, 0, 0);
		strbuf_release(&s.err);
	}
}

static void test_last_number_none_found(void **state)
{
	struct score s = run_parser("last-number", "no digits here - . -.\n", 1.0);

	(void)state;
	assert_int_equal(s.rc, -1);
	assert_string_equal(s.err.buf, "parser last-number: the command printed no number");
	strbuf_release(&s.err);
	s = run_parser("last-number", "", 1.0);
	assert_int_equal(s.rc, -1);
	strbuf_release(&s.err);
}

static void test_none_and_unknown(void **state)
{
	struct score s = run_parser("none", "whatever 99\n", 0.25);

	(void)state;
	/* runs per second: one run over the elapsed time */
	assert_int_equal(s.rc, 0);
	assert_float_equal(s.score, 4.0, EPS);
	assert_float_equal(s.ops, 0, 0);
	strbuf_release(&s.err);
	s = run_parser("none", "", 0);
	assert_int_equal(s.rc, 0);
	assert_float_equal(s.score, 0, 0);
	strbuf_release(&s.err);

	s = run_parser("perl", "1\n", 1.0);
	assert_int_equal(s.rc, -1);
	assert_string_equal(s.err.buf, "parser: unknown parser 'perl'");
	strbuf_release(&s.err);

	/* every name the catalog knows has its parser here */
	assert_true(workload_exec_parser_known("stress-ng"));
	assert_true(workload_exec_parser_known("last-number"));
	assert_true(workload_exec_parser_known("none"));
	assert_false(workload_exec_parser_known("stress"));
	assert_false(workload_exec_parser_known(""));
}

/* ---- profile: perf report ---- */

static void expect_symbol(json_t *arr, size_t i, const char *name, int kernel, double self,
			  double children)
{
	json_t *o = json_array_get(arr, i);

	if (!o)
		fail_msg("no symbol %zu (have %zu)", i, json_array_size(arr));
	assert_string_equal(jsonget_str(o, "symbol"), name);
	assert_int_equal(json_is_true(json_object_get(o, "kernel")), kernel);
	assert_float_equal(jsonget_num_or(o, "self", 0), self, EPS);
	assert_float_equal(jsonget_num_or(o, "children", 0), children, EPS);
}

static void test_report_perf61(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *arr = json_array();

	(void)state;
	fixture_read(&sb, "perf-report.txt");
	/* perf 6.1 prints "-      -" IPC columns after the padded symbol */
	assert_int_equal(profile_parse_report(sb.buf, arr, 100), 30);
	assert_int_equal(json_array_size(arr), 30);
	expect_symbol(arr, 0, "do_syscall_64", 1, 0.24, 20.68);
	expect_symbol(arr, 1, "entry_SYSCALL_64_after_hwframe", 1, 0.0, 20.68);
	expect_symbol(arr, 2, "__mprotect", 0, 0.0, 16.30);
	expect_symbol(arr, 7, "change_pte_range", 1, 9.00, 14.36);
	expect_symbol(arr, 8, "0x00000000002fff43", 0, 10.71, 10.71);
	expect_symbol(arr, 25, "prot_commit_flush_ptes", 1, 2.68, 3.16);
	expect_symbol(arr, 28, "0000000000000000", 0, 0.0, 2.92);
	json_decref(arr);

	/* at most max entries */
	arr = json_array();
	assert_int_equal(profile_parse_report(sb.buf, arr, 3), 3);
	assert_int_equal(json_array_size(arr), 3);
	json_decref(arr);
	strbuf_release(&sb);
}

static void test_report_other_forms(void **state)
{
	json_t *arr = json_array();

	(void)state;
	/* headers and blank lines are skipped; without IPC columns the symbol
	 * runs to the end of the line; one space inside a symbol is part of it */
	assert_int_equal(profile_parse_report(
		"# Children      Self  Symbol\n"
		"# ........  ........  ......\n"
		"#\n"
		"\n"
		"    42.00%    40.50%  [k] native_flush_tlb_one_user\n"
		"     3.10%     3.10%  [.] std::vector<int, std::allocator<int> >::push_back(int const&)   \n"
		"     1.00%     0.50%  [g] guest_func\r\n"
		"    12.00%     1.00%\n"
		"    oops\n"
		"     0.20%     0.10%  [k] last_line_without_newline", arr, 100), 4);
	expect_symbol(arr, 0, "native_flush_tlb_one_user", 1, 40.5, 42.0);
	expect_symbol(arr, 1, "std::vector<int, std::allocator<int> >::push_back(int const&)", 0, 3.1, 3.1);
	expect_symbol(arr, 2, "guest_func", 0, 0.5, 1.0);
	expect_symbol(arr, 3, "last_line_without_newline", 1, 0.1, 0.2);
	json_decref(arr);

	arr = json_array();
	assert_int_equal(profile_parse_report("", arr, 100), 0);
	assert_int_equal(json_array_size(arr), 0);
	json_decref(arr);
}

/* ---- profile: perf script ---- */

static void test_fold_perf61(void **state)
{
	static const char *const want[] = {
		"stress-ng-tlb-s;[unknown];[unknown] 4",
		"cc1;[unknown];[unknown] 1",
		"cc1;[unknown];[unknown];[unknown] 1",
		"cc1;[unknown];[unknown];cpp_push_buffer 1",
		"cc1;[unknown];read;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_read;vfs_read;"
			"filemap_read;copy_page_to_iter;_copy_to_iter 1",
		"cc1;ht_lookup_with_hash 1",
		"cc1;malloc_consolidate 1",
		"sleep;mmap64 1",
		"stress-ng-tlb-s;[unknown];[unknown];[unknown];asm_exc_page_fault;exc_page_fault 1",
		"stress-ng-tlb-s;[unknown];[unknown];[unknown];asm_exc_page_fault;exc_page_fault;"
			"handle_mm_fault;__handle_mm_fault;do_fault;__do_fault;shmem_fault;shmem_get_folio_gfp 1",
		"stress-ng-tlb-s;[unknown];[unknown];__madvise;entry_SYSCALL_64_after_hwframe;do_syscall_64;"
			"__x64_sys_madvise;do_madvise;madvise_do_behavior;madvise_vma_behavior;"
			"zap_page_range_single_batched;unmap_page_range 1",
		"stress-ng-tlb-s;[unknown];__mprotect;entry_SYSCALL_64_after_hwframe;do_syscall_64;"
			"__x64_sys_mprotect;do_mprotect_pkey;mprotect_fixup;change_protection;change_pte_range 1",
		"stress-ng-tlb-s;[unknown];__mprotect;entry_SYSCALL_64_after_hwframe;do_syscall_64;"
			"__x64_sys_mprotect;do_mprotect_pkey;mprotect_fixup;change_protection;change_pte_range;"
			"prot_commit_flush_ptes;__ptep_modify_prot_commit 1",
	};
	struct strbuf sb = STRBUF_INIT;
	json_t *arr = json_array();
	size_t i;

	(void)state;
	fixture_read(&sb, "perf-script.txt");
	/* root first, most samples first, ties in byte order */
	assert_int_equal(profile_fold_script(sb.buf, arr, 500), 16);
	assert_int_equal(json_array_size(arr), sizeof(want) / sizeof(want[0]));
	for (i = 0; i < json_array_size(arr); i++)
		assert_string_equal(json_string_value(json_array_get(arr, i)), want[i]);
	json_decref(arr);

	/* max bounds the lines, not the samples counted */
	arr = json_array();
	assert_int_equal(profile_fold_script(sb.buf, arr, 2), 16);
	assert_int_equal(json_array_size(arr), 2);
	assert_string_equal(json_string_value(json_array_get(arr, 0)), want[0]);
	json_decref(arr);
	strbuf_release(&sb);
}

static void test_fold_edges(void **state)
{
	json_t *arr = json_array();

	(void)state;
	/* offsets are cut at '+', a ';' in a comm cannot split the stack, and
	 * the last sample needs no blank line after it */
	assert_int_equal(profile_fold_script(
		"a;b 123/456\n"
		"\tffffffff81001000 leaf+0x1a\n"
		"\tffffffff81002000 root\n"
		"\n"
		"\n"
		"a;b\n"
		"\tffffffff81001000 leaf+0x2b\n"
		"\tffffffff81002000 root\n"
		"\n"
		"swapper\n"
		"\tffffffff81003000 default_idle\n"
		"kworker/0:1\n"
		"\tffffffff81004000 worker_thread", arr, 10), 4);
	assert_int_equal(json_array_size(arr), 3);
	assert_string_equal(json_string_value(json_array_get(arr, 0)), "a_b;root;leaf 2");
	assert_string_equal(json_string_value(json_array_get(arr, 1)), "kworker/0:1;worker_thread 1");
	assert_string_equal(json_string_value(json_array_get(arr, 2)), "swapper;default_idle 1");
	json_decref(arr);

	arr = json_array();
	assert_int_equal(profile_fold_script("", arr, 10), 0);
	assert_int_equal(profile_fold_script("\n\n\n", arr, 10), 0);
	assert_int_equal(json_array_size(arr), 0);
	json_decref(arr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stress_ng_metrc),
		cmocka_unit_test(test_stress_ng_two_stressors_verbose),
		cmocka_unit_test(test_stress_ng_info_format),
		cmocka_unit_test(test_stress_ng_other_tags),
		cmocka_unit_test(test_stress_ng_no_metrics),
		cmocka_unit_test(test_last_number),
		cmocka_unit_test(test_last_number_none_found),
		cmocka_unit_test(test_none_and_unknown),
		cmocka_unit_test(test_report_perf61),
		cmocka_unit_test(test_report_other_forms),
		cmocka_unit_test(test_fold_perf61),
		cmocka_unit_test(test_fold_edges),
	};

	return cmocka_run_group_tests_name("parsers", tests, NULL, NULL);
}
