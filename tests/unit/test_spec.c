/*
 * spec_parse: the defaults a bare spec gets, the matrix expansion and its
 * order, the neighbour and exec forms, fault-write's two shapes and their
 * defaults, and for each kind of bad input an error message that names the
 * field, since that message is all a user sees of a spec the daemon
 * rejected. Also fault-write's page order, which must never visit a page
 * twice.
 */
#include "testlib.h"

#include <sched.h>
#include <unistd.h>

#include "spec.h"
#include "monitors/monitor.h"
#include "util.h"
#include "banned.h"

static int parse(struct spec *s, const char *json, struct strbuf *err)
{
	return spec_parse(s, json, strlen(json), err);
}

/* Parses json, which must fail with a message that contains every needle
 * (NULL-terminated), and leave the spec released. */
static void expect_error_v(const char *json, const char *const *needles)
{
	struct strbuf err = STRBUF_INIT;
	struct spec s;
	size_t i;

	if (parse(&s, json, &err) != -1)
		fail_msg("accepted: %s", json);
	for (i = 0; needles[i]; i++)
		if (!strstr(err.buf, needles[i]))
			fail_msg("spec %s\n  error \"%s\"\n  does not contain \"%s\"", json, err.buf,
				 needles[i]);
	assert_null(s.cases);
	assert_int_equal(s.ncases, 0);
	assert_null(s.argv);
	assert_null(s.neighbour_params);
	strbuf_release(&err);
}

#define expect_error(json, ...) expect_error_v(json, (const char *const[]){ __VA_ARGS__, NULL })

static void parse_ok(struct spec *s, const char *json)
{
	struct strbuf err = STRBUF_INIT;

	if (parse(s, json, &err) != 0)
		fail_msg("rejected: %s: %s", json, err.buf);
	strbuf_release(&err);
}

/* ---- valid specs ---- */

static void test_defaults(void **state)
{
	struct spec s;

	(void)state;
	parse_ok(&s, "{\"workload\":\"mprotect\"}");
	assert_int_equal(s.ncases, 1);
	assert_int_equal(s.iterations, 3);
	assert_int_equal(s.warmup, 1);
	assert_float_equal(s.interval, 1.0, 0);
	assert_int_equal(s.monitors, MONITOR_DEFAULT);
	assert_int_equal(s.profile, 0);
	assert_int_equal(s.has_neighbour, 0);
	assert_string_equal(s.id, "");
	assert_null(s.argv);
	assert_ptr_equal(s.cases[0].p.ops, &workload_mprotect);
	assert_int_equal(s.cases[0].p.mode, WL_THREADS);
	assert_int_equal(s.cases[0].p.workers, 1);
	assert_float_equal(s.cases[0].p.duration, 10.0, 0);
	spec_release(&s);
	/* released specs are empty, and releasing twice is harmless */
	assert_null(s.cases);
	spec_release(&s);
	spec_release(NULL);
}

static void test_toplevel_settings(void **state)
{
	struct spec s;

	(void)state;
	parse_ok(&s, "{\"workload\":\"mremap\",\"iterations\":7,\"warmup\":0,\"interval\":0.25,"
		     "\"monitors\":[\"vmstat\",\"profile\"],\"id\":\"job-42/run-1\",\"duration\":2.5,"
		     "\"size\":16777216}");
	assert_int_equal(s.iterations, 7);
	assert_int_equal(s.warmup, 0);
	assert_float_equal(s.interval, 0.25, 0);
	/* "profile" in monitors turns profiling on without being a counter monitor */
	assert_int_equal(s.monitors, monitor_bit("vmstat") | monitor_bit("profile"));
	assert_int_equal(s.profile, 1);
	assert_string_equal(s.id, "job-42/run-1");
	assert_ptr_equal(s.cases[0].p.ops, &workload_mremap);
	assert_float_equal(s.cases[0].p.duration, 2.5, 0);
	assert_int_equal(s.cases[0].p.size, 16u << 20);
	spec_release(&s);
}

static void test_matrix_order(void **state)
{
	static const struct { const char *mode; int workers; } want[] = {
		{ "threads", 1 }, { "threads", 2 }, { "threads", 4 },
		{ "processes", 1 }, { "processes", 2 }, { "processes", 4 },
	};
	struct spec s;
	size_t i;

	(void)state;
	/* workers listed first: the order comes from the parameter table, not the JSON */
	parse_ok(&s, "{\"workers\":[1,2,4],\"workload\":\"mprotect\",\"mode\":[\"threads\",\"processes\"]}");
	assert_int_equal(s.ncases, 6);
	for (i = 0; i < 6; i++) {
		json_t *p = s.cases[i].params;

		assert_string_equal(wl_mode_name(s.cases[i].p.mode), want[i].mode);
		assert_int_equal(s.cases[i].p.workers, want[i].workers);
		/* each case's params hold its own scalars, for the output lines */
		assert_string_equal(json_string_value(json_object_get(p, "mode")), want[i].mode);
		assert_int_equal(json_integer_value(json_object_get(p, "workers")), want[i].workers);
		assert_string_equal(json_string_value(json_object_get(p, "workload")), "mprotect");
	}
	spec_release(&s);
}

static void test_matrix_three_keys(void **state)
{
	struct spec s;

	(void)state;
	parse_ok(&s, "{\"workload\":\"tcp-rr\",\"response_size\":[64,4096],\"workers\":[1,2],"
		     "\"request_size\":[1,100,1000]}");
	/* order: workers, request_size, response_size (the last fastest) */
	assert_int_equal(s.ncases, 12);
	assert_int_equal(s.cases[0].p.workers, 1);
	assert_int_equal(s.cases[0].p.request_size, 1);
	assert_int_equal(s.cases[0].p.response_size, 64);
	assert_int_equal(s.cases[1].p.response_size, 4096);
	assert_int_equal(s.cases[1].p.request_size, 1);
	assert_int_equal(s.cases[2].p.request_size, 100);
	assert_int_equal(s.cases[5].p.request_size, 1000);
	assert_int_equal(s.cases[5].p.response_size, 4096);
	assert_int_equal(s.cases[5].p.workers, 1);
	assert_int_equal(s.cases[6].p.workers, 2);
	assert_int_equal(s.cases[6].p.request_size, 1);
	assert_int_equal(s.cases[11].p.workers, 2);
	assert_int_equal(s.cases[11].p.request_size, 1000);
	assert_int_equal(s.cases[11].p.response_size, 4096);
	spec_release(&s);
}

static void test_max_cases(void **state)
{
	struct strbuf json = STRBUF_INIT;
	struct spec s;
	int i;

	(void)state;
	/* 2 modes x 128 worker counts: exactly the limit */
	strbuf_addstr(&json, "{\"workload\":\"mprotect\",\"mode\":[\"threads\",\"processes\"],\"workers\":[");
	for (i = 1; i <= 128; i++)
		strbuf_addf(&json, "%s%d", i > 1 ? "," : "", i);
	strbuf_addstr(&json, "]}");
	parse_ok(&s, json.buf);
	assert_int_equal(s.ncases, SPEC_MAX_CASES);
	assert_int_equal(s.cases[255].p.workers, 128);
	assert_int_equal(s.cases[255].p.mode, WL_PROCESSES);
	spec_release(&s);

	/* one more worker count: 258 cases */
	strbuf_setlen(&json, json.len - 2);
	strbuf_addstr(&json, ",129]}");
	expect_error(json.buf, "workers: the lists expand to more than 256 cases");
	strbuf_release(&json);
}

static void test_grid(void **state)
{
	struct spec s;

	(void)state;
	parse_ok(&s, "{\"workload\":\"stencil\",\"grid\":[\"M\",\"9x17x33\"],\"workers\":2}");
	assert_int_equal(s.ncases, 2);
	assert_int_equal(s.cases[0].p.nx, 129);
	assert_int_equal(s.cases[0].p.ny, 129);
	assert_int_equal(s.cases[0].p.nz, 257);
	assert_int_equal(s.cases[1].p.nx, 9);
	assert_int_equal(s.cases[1].p.ny, 17);
	assert_int_equal(s.cases[1].p.nz, 33);
	spec_release(&s);
}

static void test_neighbour(void **state)
{
	struct spec s;

	(void)state;
	parse_ok(&s, "{\"workload\":\"mprotect\",\"workers\":2,"
		     "\"neighbour\":{\"workload\":\"tcp-rr\",\"workers\":3,\"mode\":\"processes\"}}");
	assert_int_equal(s.ncases, 1);
	assert_int_equal(s.has_neighbour, 1);
	assert_ptr_equal(s.neighbour.ops, &workload_tcp_rr);
	assert_int_equal(s.neighbour.workers, 3);
	assert_int_equal(s.neighbour.mode, WL_PROCESSES);
	assert_string_equal(json_string_value(json_object_get(s.neighbour_params, "workload")), "tcp-rr");
	/* the neighbour is not a parameter of the cases */
	assert_null(json_object_get(s.cases[0].params, "neighbour"));
	assert_int_equal(s.cases[0].p.workers, 2);
	spec_release(&s);
}

static void test_exec(void **state)
{
	struct spec s;

	(void)state;
	parse_ok(&s, "{\"workload\":\"exec\",\"command\":[\"stress-ng\",\"--tlb-shootdown\",\"2\"],"
		     "\"parser\":\"stress-ng\",\"timeout\":30}");
	assert_int_equal(s.ncases, 1);
	assert_non_null(s.argv);
	assert_string_equal(s.argv[0], "stress-ng");
	assert_string_equal(s.argv[1], "--tlb-shootdown");
	assert_string_equal(s.argv[2], "2");
	assert_null(s.argv[3]);
	assert_ptr_equal(s.cases[0].p.argv, s.argv);
	assert_string_equal(s.cases[0].p.parser, "stress-ng");
	assert_float_equal(s.cases[0].p.timeout, 30.0, 0);
	spec_release(&s);

	parse_ok(&s, "{\"workload\":\"exec\",\"command\":[\"true\"]}");
	assert_string_equal(s.cases[0].p.parser, "none");
	assert_float_equal(s.cases[0].p.timeout, 600.0, 0);
	spec_release(&s);
}

/* ---- invalid specs: the message names the field ---- */

static int cpus_allowed(void)
{
	cpu_set_t set;

	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	return CPU_COUNT(&set);
}

static void test_fault_write_shapes(void **state)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	struct spec s;
	char json[256];
	json_t *p;

	(void)state;
	/* the experiment by default: one vma, 4096 rounds in as many pages,
	 * as many workers as CPUs; the params say so */
	parse_ok(&s, "{\"workload\":\"fault-write\"}");
	assert_int_equal(s.cases[0].p.vma, WL_VMA_ONE);
	assert_int_equal(s.cases[0].p.rounds, FAULT_WRITE_ROUNDS);
	assert_int_equal(s.cases[0].p.size, FAULT_WRITE_ROUNDS * pg);
	assert_int_equal(s.cases[0].p.workers, cpus_allowed());
	p = s.cases[0].params;
	assert_string_equal(json_string_value(json_object_get(p, "vma")), "one");
	assert_int_equal(json_integer_value(json_object_get(p, "rounds")), FAULT_WRITE_ROUNDS);
	assert_int_equal(json_integer_value(json_object_get(p, "workers")), cpus_allowed());
	spec_release(&s);

	/* the older shape keeps its defaults: 2 MiB per round, until the duration */
	parse_ok(&s, "{\"workload\":\"fault-write\",\"vma\":\"per-round\",\"workers\":1}");
	assert_int_equal(s.cases[0].p.vma, WL_VMA_PER_ROUND);
	assert_int_equal(s.cases[0].p.rounds, 0);
	assert_int_equal(s.cases[0].p.size, 2u << 20);
	assert_int_equal(s.cases[0].p.workers, 1);
	assert_string_equal(json_string_value(json_object_get(s.cases[0].params, "vma")), "per-round");
	spec_release(&s);

	/* given values win; rounds may use every page of size, not one more */
	snprintf(json, sizeof(json), "{\"workload\":\"fault-write\",\"size\":%llu,\"rounds\":512,"
		 "\"workers\":1}", (unsigned long long)(512 * pg));
	parse_ok(&s, json);
	assert_int_equal(s.cases[0].p.size, 512 * pg);
	assert_int_equal(s.cases[0].p.rounds, 512);
	assert_int_equal(s.cases[0].p.workers, 1);
	spec_release(&s);
	snprintf(json, sizeof(json), "{\"workload\":\"fault-write\",\"size\":%llu,\"rounds\":513}",
		 (unsigned long long)(512 * pg));
	expect_error(json, "rounds: 513 rounds need as many untouched pages", "holds 512 pages");
	parse_ok(&s, "{\"workload\":\"fault-write\",\"rounds\":100}");
	assert_int_equal(s.cases[0].p.size, 100 * pg);
	spec_release(&s);

	/* both shapes as a matrix */
	parse_ok(&s, "{\"workload\":\"fault-write\",\"vma\":[\"one\",\"per-round\"],\"workers\":2}");
	assert_int_equal(s.ncases, 2);
	assert_int_equal(s.cases[0].p.vma, WL_VMA_ONE);
	assert_int_equal(s.cases[1].p.vma, WL_VMA_PER_ROUND);
	assert_int_equal(s.cases[1].p.rounds, 0);
	spec_release(&s);
	/* other workloads' params are not touched */
	parse_ok(&s, "{\"workload\":\"mprotect\"}");
	assert_null(json_object_get(s.cases[0].params, "workers"));
	spec_release(&s);
}

static void test_fault_write_bad(void **state)
{
	(void)state;
	expect_error("{\"workload\":\"fault-write\",\"vma\":\"two\"}", "vma: must be one or per-round");
	expect_error("{\"workload\":\"fault-write\",\"vma\":[\"one\",1]}", "vma[1]: must be one or per-round");
	expect_error("{\"workload\":\"mprotect\",\"vma\":\"one\"}", "vma: not a parameter of mprotect");
	/* the default rounds do not fit a small vma: say which field */
	expect_error("{\"workload\":\"fault-write\",\"size\":2097152}",
		     "rounds: 4096 rounds need as many untouched pages", "size 2097152", "default 4096");
	expect_error("{\"workload\":\"fault-write\",\"size\":2097152,\"rounds\":100000}",
		     "rounds: 100000 rounds need");
	expect_error("{\"workload\":\"fault-write\",\"rounds\":0}", "rounds: must be at least 1 with vma one");
	expect_error("{\"workload\":\"fault-write\",\"rounds\":1000000000000}", "rounds:");
	/* the older shape has no page budget, but a floor on size */
	expect_error("{\"workload\":\"fault-write\",\"vma\":\"per-round\",\"size\":4095}", "size:");
}

static void test_fault_write_pages(void **state)
{
	static const uint64_t sizes[] = { 1, 2, 3, 7, 512, 1000, 4096, 65537 };
	unsigned char *seen;
	size_t k;
	uint64_t r, same = 0;

	(void)state;
	for (k = 0; k < ARRAY_SIZE(sizes); k++) {
		uint64_t n = sizes[k];

		seen = calloc(n, 1);
		assert_non_null(seen);
		for (r = 0; r < n; r++) {
			uint64_t page = fault_write_page(r, n, 0x1234 + k);

			if (page >= n || seen[page])
				fail_msg("npages %llu: round %llu gives page %llu, %s",
					 (unsigned long long)n, (unsigned long long)r, (unsigned long long)page,
					 page >= n ? "out of range" : "already written");
			seen[page] = 1;
		}
		free(seen);
	}
	/* not the identity, and the seed changes the order */
	for (r = 0; r < 1000; r++)
		same += fault_write_page(r, 1000, 1) == r;
	assert_true(same < 100);
	same = 0;
	for (r = 0; r < 1000; r++)
		same += fault_write_page(r, 1000, 1) == fault_write_page(r, 1000, 2);
	assert_true(same < 100);
}

static void test_bad_workload(void **state)
{
	(void)state;
	expect_error("{\"workload\":\"mprotekt\"}", "workload: unknown workload 'mprotekt'",
		     "mprotect, mremap, fault-write, tcp-rr, stencil, exec");
	expect_error("{\"workload\":7}", "workload: unknown workload");
	expect_error("{\"workers\":2}", "workload: missing");
	expect_error("[]", "spec: must be a JSON object");
}

static void test_bad_workers(void **state)
{
	(void)state;
	expect_error("{\"workload\":\"mprotect\",\"workers\":0}",
		     "workers: must be an integer from 1 to 1024");
	expect_error("{\"workload\":\"mprotect\",\"workers\":5000}",
		     "workers: must be an integer from 1 to 1024");
	expect_error("{\"workload\":\"mprotect\",\"workers\":2.5}", "workers: must be an integer");
	expect_error("{\"workload\":\"mprotect\",\"workers\":\"4\"}", "workers: must be an integer");
	/* a bad element of a list is named by its index */
	expect_error("{\"workload\":\"mprotect\",\"workers\":[1,0,4]}",
		     "workers[1]: must be an integer from 1 to 1024");
	expect_error("{\"workload\":\"mprotect\",\"mode\":[\"threads\",\"procs\"],\"workers\":[1,2]}",
		     "mode[1]: must be threads or processes");
	expect_error("{\"workload\":\"mprotect\",\"workers\":[1,2,[3]]}", "workers[2]: must be an integer");
}

static void test_bad_numbers(void **state)
{
	(void)state;
	expect_error("{\"workload\":\"mprotect\",\"duration\":-1}",
		     "duration: must be a number from 0.1 to 86400");
	expect_error("{\"workload\":\"mprotect\",\"duration\":\"10\"}", "duration: must be a number");
	expect_error("{\"workload\":\"mprotect\",\"iterations\":0}",
		     "iterations: must be an integer from 1 to 1000");
	expect_error("{\"workload\":\"mprotect\",\"warmup\":-1}", "warmup: must be an integer from 0 to 100");
	expect_error("{\"workload\":\"mprotect\",\"interval\":0}", "interval: must be a number from 0.05 to 3600");
	expect_error("{\"workload\":\"fault-write\",\"size\":4095}",
		     "size: must be an integer from 4096 to");
	expect_error("{\"workload\":\"tcp-rr\",\"request_size\":[100,0]}",
		     "request_size[1]: must be an integer from 1 to 1048576");
	expect_error("{\"workload\":\"mprotect\",\"profile\":1}", "profile: must be true or false");
	expect_error("{\"workload\":\"mprotect\",\"monitors\":[\"vmstat\",\"dmesg\"]}",
		     "monitors[1]: unknown monitor");
}

static void test_not_applicable(void **state)
{
	(void)state;
	expect_error("{\"workload\":\"mprotect\",\"request_size\":100}",
		     "request_size: not a parameter of mprotect");
	expect_error("{\"workload\":\"mprotect\",\"request_size\":[100,200]}",
		     "request_size[0]: not a parameter of mprotect");
	expect_error("{\"workload\":\"exec\",\"command\":[\"true\"],\"workers\":2}",
		     "workers: not a parameter of exec");
	expect_error("{\"workload\":\"mprotect\",\"parser\":\"none\"}", "parser: not a parameter of mprotect");
}

static void test_unknown_field(void **state)
{
	(void)state;
	expect_error("{\"workload\":\"mprotect\",\"colour\":\"blue\"}", "colour: unknown field");
	expect_error("{\"workload\":\"mprotect\",\"neighbour\":{\"workload\":\"mremap\",\"colour\":1}}",
		     "neighbour.colour: unknown field");
}

static void test_malformed_json(void **state)
{
	(void)state;
	expect_error("{\"workload\":\"mprotect\",\n \"workers\": 2,,}", "spec: malformed JSON",
		     "line 2", "column");
	expect_error("", "malformed JSON", "line", "column");
	expect_error("{\"workload\":\"mprotect\",\"workload\":\"mremap\"}", "malformed JSON",
		     "duplicate");
}

static void test_mode_processes_stencil(void **state)
{
	(void)state;
	expect_error("{\"workload\":\"stencil\",\"mode\":\"processes\"}",
		     "mode: stencil runs only as threads");
	expect_error("{\"workload\":\"stencil\",\"mode\":[\"threads\",\"processes\"]}",
		     "mode[1]: stencil runs only as threads");
}

static void test_exec_command(void **state)
{
	(void)state;
	expect_error("{\"workload\":\"exec\"}", "command: missing");
	expect_error("{\"workload\":\"exec\",\"command\":[]}", "command: must be a list of 1 to 256 strings");
	expect_error("{\"workload\":\"exec\",\"command\":\"stress-ng --tlb-shootdown 2\"}",
		     "command: must be a list");
	expect_error("{\"workload\":\"exec\",\"command\":[\"\"]}", "command[0]:", "not empty");
	expect_error("{\"workload\":\"exec\",\"command\":[\"sh\",\"-c\",3]}", "command[2]: must be a string");
	/* jansson refuses \u0000 in the text; a caller's object can still hold one */
	expect_error("{\"workload\":\"exec\",\"command\":[\"sh\",\"a\\u0000b\"]}", "malformed JSON");
	expect_error("{\"workload\":\"exec\",\"command\":[\"true\"],\"parser\":\"perl\"}",
		     "parser: must be stress-ng, last-number or none");
}

static void test_exec_command_nul(void **state)
{
	struct strbuf err = STRBUF_INIT;
	struct spec s;
	json_t *root = json_pack("{s:s,s:[s,s%]}", "workload", "exec", "command", "sh", "a\0b", (size_t)3);

	(void)state;
	assert_non_null(root);
	assert_int_equal(spec_from_json(&s, root, &err), -1);
	assert_contains(err.buf, "command[1]: must be a string of at most 4096 bytes without NUL");
	assert_null(s.argv);
	json_decref(root);
	strbuf_release(&err);
}

static void test_empty_list(void **state)
{
	(void)state;
	expect_error("{\"workload\":\"mprotect\",\"workers\":[]}", "workers: an empty list");
	expect_error("{\"workload\":\"mprotect\",\"mode\":[],\"workers\":[1,2]}", "mode: an empty list");
}

static void test_bad_neighbour(void **state)
{
	(void)state;
	expect_error("{\"workload\":\"mprotect\",\"neighbour\":{\"workload\":\"mremap\",\"duration\":5}}",
		     "neighbour.duration: the neighbour runs as long as each case");
	expect_error("{\"workload\":\"mprotect\",\"neighbour\":{\"workload\":\"mremap\",\"workers\":[1,2]}}",
		     "neighbour.workers: a list is not allowed here");
	expect_error("{\"workload\":\"mprotect\",\"neighbour\":{\"workload\":\"mremap\",\"workers\":0}}",
		     "neighbour.workers: must be an integer from 1 to 1024");
	expect_error("{\"workload\":\"mprotect\",\"neighbour\":{\"workers\":2}}", "neighbour.workload: missing");
	expect_error("{\"workload\":\"mprotect\",\"neighbour\":{\"workload\":\"exec\",\"command\":[\"true\"]}}",
		     "neighbour.workload: exec cannot be a neighbour");
	expect_error("{\"workload\":\"mprotect\",\"neighbour\":\"mremap\"}", "neighbour: must be an object");
	/* a workload's own check, with the prefix added */
	expect_error("{\"workload\":\"mprotect\",\"neighbour\":{\"workload\":\"stencil\",\"grid\":\"5x5x5\","
		     "\"workers\":4}}", "neighbour.grid: 4 workers need at least 6 points along x");
}

static void test_bad_grid(void **state)
{
	(void)state;
	expect_error("{\"workload\":\"stencil\",\"grid\":\"7x7\"}",
		     "grid: must be XS, S, M, L or NXxNYxNZ", "(got '7x7')");
	expect_error("{\"workload\":\"stencil\",\"grid\":\"7x7x7x\"}", "grid:", "(got '7x7x7x')");
	expect_error("{\"workload\":\"stencil\",\"grid\":\"2x9x9\"}", "grid:", "from 3 to 1025");
	expect_error("{\"workload\":\"stencil\",\"grid\":\"1025x1025x1025\"}", "grid:", "at most 64M points");
	expect_error("{\"workload\":\"stencil\",\"grid\":[\"S\",\"xl\"]}", "grid[1]:", "(got 'xl')");
	expect_error("{\"workload\":\"stencil\",\"grid\":65}", "grid: must be XS, S, M, L or NXxNYxNZ");
	/* the stencil's own check: every worker needs a slab of x */
	expect_error("{\"workload\":\"stencil\",\"grid\":\"5x9x9\",\"workers\":4}",
		     "grid: 4 workers need at least 6 points along x");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_toplevel_settings),
		cmocka_unit_test(test_matrix_order),
		cmocka_unit_test(test_matrix_three_keys),
		cmocka_unit_test(test_max_cases),
		cmocka_unit_test(test_grid),
		cmocka_unit_test(test_neighbour),
		cmocka_unit_test(test_exec),
		cmocka_unit_test(test_fault_write_shapes),
		cmocka_unit_test(test_fault_write_bad),
		cmocka_unit_test(test_fault_write_pages),
		cmocka_unit_test(test_bad_workload),
		cmocka_unit_test(test_bad_workers),
		cmocka_unit_test(test_bad_numbers),
		cmocka_unit_test(test_not_applicable),
		cmocka_unit_test(test_unknown_field),
		cmocka_unit_test(test_malformed_json),
		cmocka_unit_test(test_mode_processes_stencil),
		cmocka_unit_test(test_exec_command),
		cmocka_unit_test(test_exec_command_nul),
		cmocka_unit_test(test_empty_list),
		cmocka_unit_test(test_bad_neighbour),
		cmocka_unit_test(test_bad_grid),
	};

	return cmocka_run_group_tests_name("spec", tests, NULL, NULL);
}
