/*
 * daemon/stages/pmu_rows: a real machine's work rows from the agent's PMU
 * counters, on iterations as the agent writes them (the counts below are
 * of the shape a 2-CPU x86 box gives for mprotect: about 4,100 kernel and
 * 900 user instructions per call). Each row is a count per operation with
 * its unit and source, or unavailable with the reason, never 0: the
 * agent's reason, a window the PMU did not count whole, a window without
 * operations, an emulated machine. A counter that is not a count is
 * refused, naming it. And through the ingest, into a real store: the rows
 * are stored, and the agent's garbage leaves nothing behind.
 */
#include "testlib.h"

#include <math.h>

#include "ingest.h"
#include "jsonget.h"
#include "pmu_rows.h"
#include "store.h"
#include "util.h"
#include "fixture_ingest.h"
#include "banned.h"

static const char *const row_names[] = {
	"mprotect.perf_kernel_insn_per_op", "mprotect.perf_user_insn_per_op",
	"mprotect.perf_dtlb_miss_per_op", "mprotect.perf_itlb_miss_per_op",
};

struct out {
	json_t *metrics, *info, *unavailable;
	struct strbuf err;
	int rc;
};

/* pmu_rows over the agent's metrics and unavailable, given as JSON text */
static void run_rows(struct out *o, const char *metrics, const char *unavailable, int have_window, double ops,
		     const char *why_not)
{
	json_t *m = json_loads(metrics, 0, NULL), *u = unavailable ? json_loads(unavailable, 0, NULL) : NULL;

	assert_non_null(m);
	o->metrics = json_object();
	o->info = json_object();
	o->unavailable = json_object();
	strbuf_init(&o->err, 0);
	o->rc = pmu_rows("mprotect", m, u, have_window, ops, why_not, o->metrics, o->info, o->unavailable,
			 &o->err);
	json_decref(m);
	json_decref(u);
}

static void out_release(struct out *o)
{
	json_decref(o->metrics);
	json_decref(o->info);
	json_decref(o->unavailable);
	strbuf_release(&o->err);
}

static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	if (!json_is_number(v))
		fail_msg("%s: no number", k);
	return json_number_value(v);
}

static const char *why(const struct out *o, const char *row)
{
	const char *s = jsonget_str(o->unavailable, row);

	if (!s)
		fail_msg("%s is not unavailable", row);
	return s;
}

#define COUNTS "\"perf_stat.instructions_k\":41000000,\"perf_stat.instructions_u\":9000000," \
	"\"perf_stat.dtlb_load_misses\":25000,\"perf_stat.itlb_load_misses\":4000"

static void test_rows_per_op(void **state)
{
	struct out o;
	size_t i;

	(void)state;
	run_rows(&o, "{" COUNTS ",\"perf_stat.pmu_unscheduled_ns\":0,\"mprotect.ops_per_sec\":5000}", "{}", 1,
		 10000, NULL);
	assert_int_equal(o.rc, 0);
	assert_true(fabs(num(o.metrics, "mprotect.perf_kernel_insn_per_op") - 4100) < 1e-9);
	assert_true(fabs(num(o.metrics, "mprotect.perf_user_insn_per_op") - 900) < 1e-9);
	assert_true(fabs(num(o.metrics, "mprotect.perf_dtlb_miss_per_op") - 2.5) < 1e-9);
	assert_true(fabs(num(o.metrics, "mprotect.perf_itlb_miss_per_op") - 0.4) < 1e-9);
	assert_int_equal(json_object_size(o.metrics), 4);
	assert_int_equal(json_object_size(o.unavailable), 0);
	for (i = 0; i < ARRAY_SIZE(row_names); i++) {
		const json_t *inf = json_object_get(o.info, row_names[i]);

		assert_string_equal(jsonget_str(inf, "unit"),
				    i < 2 ? "insn/op" : "events/op");
		assert_string_equal(jsonget_str(inf, "direction"), "lower");
		assert_string_equal(jsonget_str(inf, "source"), "perf");
	}
	out_release(&o);
}

/* this lab's host: a VM without a vPMU; the agent says why, the rows do */
static void test_agent_unavailable(void **state)
{
	static const char *const agent =
		"{\"perf_stat.instructions_k\":\"instructions:k: perf_event_open: No such file or directory: the "
		"kernel has no hardware PMU (a VM without a vPMU?)\","
		"\"perf_stat.instructions_u\":\"instructions:u: perf_event_open: No such file or directory\","
		"\"perf_stat.dtlb_load_misses\":\"dTLB-load-misses: perf_event_open: Operation not supported\","
		"\"perf_stat.itlb_load_misses\":\"iTLB-load-misses: perf_event_open: Permission denied\"}";
	struct out o;

	(void)state;
	run_rows(&o, "{\"mprotect.ops_per_sec\":5000}", agent, 1, 10000, NULL);
	assert_int_equal(o.rc, 0);
	assert_int_equal(json_object_size(o.metrics), 0);
	assert_contains(why(&o, "mprotect.perf_kernel_insn_per_op"),
			"perf_stat.instructions_k: instructions:k: perf_event_open: No such file or directory: "
			"the kernel has no hardware PMU");
	assert_contains(why(&o, "mprotect.perf_user_insn_per_op"), "instructions:u");
	assert_contains(why(&o, "mprotect.perf_dtlb_miss_per_op"), "Operation not supported");
	assert_contains(why(&o, "mprotect.perf_itlb_miss_per_op"), "Permission denied");
	out_release(&o);

	/* one event missing (an x86 PMU without iTLB misses): the others count */
	run_rows(&o, "{\"perf_stat.instructions_k\":41000000,\"perf_stat.instructions_u\":9000000,"
		 "\"perf_stat.dtlb_load_misses\":25000,\"perf_stat.pmu_unscheduled_ns\":0}",
		 "{\"perf_stat.itlb_load_misses\":\"iTLB-load-misses: perf_event_open: No such file or directory: "
		 "this PMU has no such event\"}", 1, 10000, NULL);
	assert_int_equal(json_object_size(o.metrics), 3);
	assert_contains(why(&o, "mprotect.perf_itlb_miss_per_op"), "this PMU has no such event");
	out_release(&o);
}

/* the PMU was taken from a pinned counter: no row of that window is exact */
static void test_lost_time(void **state)
{
	struct out o;
	size_t i;

	(void)state;
	run_rows(&o, "{" COUNTS ",\"perf_stat.pmu_unscheduled_ns\":1500}", "{}", 1, 10000, NULL);
	assert_int_equal(o.rc, 0);
	assert_int_equal(json_object_size(o.metrics), 0);
	for (i = 0; i < ARRAY_SIZE(row_names); i++)
		assert_contains(why(&o, row_names[i]), "the PMU's counters were off for 1500 ns of the window");
	out_release(&o);

	/* an agent that does not say whether the PMU kept its counters */
	run_rows(&o, "{" COUNTS "}", "{}", 1, 10000, NULL);
	assert_int_equal(json_object_size(o.metrics), 0);
	assert_contains(why(&o, "mprotect.perf_kernel_insn_per_op"), "perf_stat.pmu_unscheduled_ns");
	out_release(&o);
}

static void test_no_ops_no_window(void **state)
{
	struct out o;

	(void)state;
	run_rows(&o, "{" COUNTS ",\"perf_stat.pmu_unscheduled_ns\":0}", "{}", 1, 0, NULL);
	assert_int_equal(json_object_size(o.metrics), 0);
	assert_string_equal(why(&o, "mprotect.perf_user_insn_per_op"), "no operations counted in the window");
	out_release(&o);
	run_rows(&o, "{" COUNTS ",\"perf_stat.pmu_unscheduled_ns\":0}", "{}", 0, 10000, NULL);
	assert_int_equal(json_object_size(o.metrics), 0);
	assert_string_equal(why(&o, "mprotect.perf_kernel_insn_per_op"), "the iteration has no measured window");
	out_release(&o);
	/* an agent older than the counters */
	run_rows(&o, "{\"mprotect.ops_per_sec\":5000}", NULL, 1, 10000, NULL);
	assert_contains(why(&o, "mprotect.perf_kernel_insn_per_op"), "the agent reported no perf_stat.instructions_k");
	out_release(&o);
}

/* an emulated machine: the run stage's reason, whatever the agent counted */
static void test_emulated(void **state)
{
	struct out o;
	size_t i;

	(void)state;
	run_rows(&o, "{" COUNTS ",\"perf_stat.pmu_unscheduled_ns\":0}", "{}", 1, 10000, "an emulated machine");
	assert_int_equal(json_object_size(o.metrics), 0);
	for (i = 0; i < ARRAY_SIZE(row_names); i++)
		assert_string_equal(why(&o, row_names[i]), "an emulated machine");
	out_release(&o);
}

static void test_not_a_count(void **state)
{
	static const struct { const char *metrics, *field; } cases[] = {
		{ "{\"perf_stat.instructions_k\":-5,\"perf_stat.pmu_unscheduled_ns\":0}", "perf_stat.instructions_k" },
		{ "{\"perf_stat.instructions_u\":12.5,\"perf_stat.pmu_unscheduled_ns\":0}", "perf_stat.instructions_u" },
		{ "{\"perf_stat.itlb_load_misses\":1e300,\"perf_stat.instructions_k\":3,"
		  "\"perf_stat.pmu_unscheduled_ns\":-1}", "perf_stat.pmu_unscheduled_ns" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct out o;

		run_rows(&o, cases[i].metrics, "{}", 1, 10000, NULL);
		assert_int_equal(o.rc, -1);
		assert_contains(o.err.buf, cases[i].field);
		assert_contains(o.err.buf, "is not a count");
		assert_int_equal(json_object_size(o.metrics), 0);
		assert_int_equal(json_object_size(o.unavailable), 0);
		out_release(&o);
	}
}

/* ---- through the ingest, into a store ---- */

static int setup(void **state)
{
	return ingest_fixture_setup(state, "pmu-rows");
}

static int teardown(void **state)
{
	return ingest_fixture_teardown(state);
}

#define ITER(metrics, unavailable) "{\"type\":\"iteration\",\"case\":0,\"iteration\":1,\"warmup\":false," \
	"\"params\":{\"workload\":\"mprotect\",\"workers\":2},\"duration_s\":1.0," \
	"\"window\":{\"index\":1,\"ops\":10000},\"metrics\":" metrics ",\"unavailable\":" unavailable "}"

static int feed(struct fixture *f, const char *line)
{
	return ingest_line(&f->ig, line, strlen(line), 0);
}

/* the value of a stored metric, NAN when there is none */
static double stored(struct fixture *f, const char *name)
{
	json_t *all = store_metrics_json(f->sf.st, f->job, NULL, 1), *m;
	double v = NAN;
	size_t i;

	json_array_foreach(json_object_get(all, "metrics"), i, m)
		if (!strcmp(jsonget_str(m, "name") ?: "", name))
			v = jsonget_num_or(m, "value", 0);
	json_decref(all);
	return v;
}

static void test_ingest_stores_rows(void **state)
{
	struct fixture *f = *state;
	json_t *doc;
	const json_t *u;

	assert_int_equal(feed(f, ITER("{" COUNTS ",\"perf_stat.pmu_unscheduled_ns\":0,\"mprotect.ops_per_sec\":5000}",
				      "{}")), 0);
	assert_true(fabs(stored(f, "mprotect.perf_kernel_insn_per_op") - 4100) < 1e-6);
	assert_true(fabs(stored(f, "mprotect.perf_itlb_miss_per_op") - 0.4) < 1e-6);
	/* the raw counts stay, as context */
	assert_true(fabs(stored(f, "perf_stat.instructions_k") - 41000000) < 1e-6);

	/* an emulated machine's: unavailable, with the run stage's reason */
	f->ig.pmu_why = "an emulated machine (QEMU TCG)";
	assert_int_equal(feed(f, ITER("{" COUNTS ",\"perf_stat.pmu_unscheduled_ns\":0}", "{}")), 0);
	doc = store_compare_doc(f->sf.st, f->job);
	assert_non_null(doc);
	/* the fixture's stage belongs to no side: "" */
	u = json_object_get(json_object_get(doc, "unavailable_by_side"), "");
	assert_non_null(json_object_get(u, "mprotect.perf_user_insn_per_op"));
	assert_string_equal(jsonget_str(u, "mprotect.perf_user_insn_per_op"),
			    "an emulated machine (QEMU TCG)");
	json_decref(doc);
}

static void test_ingest_refuses_bad_count(void **state)
{
	struct fixture *f = *state;
	size_t before;
	json_t *all;

	assert_int_equal(feed(f, ITER("{" COUNTS ",\"perf_stat.pmu_unscheduled_ns\":0}", "{}")), 0);
	all = store_metrics_json(f->sf.st, f->job, NULL, 1);
	before = json_array_size(json_object_get(all, "metrics"));
	json_decref(all);
	assert_int_equal(feed(f, ITER("{\"perf_stat.instructions_k\":-41,\"perf_stat.pmu_unscheduled_ns\":0}", "{}")),
			 -1);
	assert_int_equal(f->ig.store_error, 0);
	assert_contains(f->ig.bad.buf, "agent output line 2: malformed iteration: perf_stat.instructions_k is not "
			"a count: -41");
	all = store_metrics_json(f->sf.st, f->job, NULL, 1);
	assert_int_equal(json_array_size(json_object_get(all, "metrics")), before);
	json_decref(all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_per_op),
		cmocka_unit_test(test_agent_unavailable),
		cmocka_unit_test(test_lost_time),
		cmocka_unit_test(test_no_ops_no_window),
		cmocka_unit_test(test_emulated),
		cmocka_unit_test(test_not_a_count),
		cmocka_unit_test_setup_teardown(test_ingest_stores_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ingest_refuses_bad_count, setup, teardown),
	};

	return cmocka_run_group_tests_name("pmu_rows", tests, NULL, NULL);
}
