/*
 * spec_parse: the defaults a bare spec gets, the matrix expansion and its
 * order, the neighbour and exec forms, sizes and times with units,
 * fault-write's two shapes and their defaults, and for each kind of bad
 * input an error message that names the field, since that message is all a
 * user sees of a spec the daemon rejected. Also the catalog's tables the
 * parser reads (lib/catalog/): the monitors' names and bits, the workloads'
 * names and parameters. It links the daemon's modules, not the agent's: the
 * spec parser needs no code that runs a workload.
 */
#include "testlib.h"

#include <sched.h>
#include <unistd.h>

#include "jsonget.h"
#include "spec.h"
#include "monitor_catalog.h"
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
	assert_int_equal(s.monitors, monitor_bit("interrupts") | monitor_bit("vmstat") | monitor_bit("procstat"));
	assert_int_equal(s.profile, 0);
	assert_int_equal(s.has_neighbour, 0);
	assert_string_equal(s.id, "");
	assert_null(s.argv);
	assert_ptr_equal(s.cases[0].p.def, workload_lookup("mprotect"));
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
	assert_ptr_equal(s.cases[0].p.def, workload_lookup("mremap"));
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

		assert_string_equal(spec_mode_name(s.cases[i].p.mode), want[i].mode);
		assert_int_equal(s.cases[i].p.workers, want[i].workers);
		/* each case's params hold its own scalars, for the output lines */
		assert_string_equal(jsonget_str(p, "mode"), want[i].mode);
		assert_int_equal(jsonget_int_or(p, "workers", 0), want[i].workers);
		assert_string_equal(jsonget_str(p, "workload"), "mprotect");
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
	assert_ptr_equal(s.neighbour.def, workload_lookup("tcp-rr"));
	assert_int_equal(s.neighbour.workers, 3);
	assert_int_equal(s.neighbour.mode, WL_PROCESSES);
	assert_string_equal(jsonget_str(s.neighbour_params, "workload"), "tcp-rr");
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

/* ---- numbers with units ---- */

static void test_parse_bytes(void **state)
{
	static const struct { const char *s; uint64_t want; } ok[] = {
		{ "0", 0 }, { "4096", 4096 }, { "64K", 64 << 10 }, { "64k", 64 << 10 },
		{ "64KiB", 64 << 10 }, { "8M", 8 << 20 }, { "8m", 8 << 20 }, { "8MiB", 8 << 20 },
		{ "1G", 1ull << 30 }, { "1g", 1ull << 30 }, { "1GiB", 1ull << 30 },
		{ "007K", 7 << 10 }, { "18446744073709551615", UINT64_MAX },
		/* the largest G that fits in 64 bits */
		{ "17179869183G", 17179869183ull << 30 },
	};
	static const char *const bad[] = {
		"", "K", "8Q", "8 M", " 8M", "8M ", "-1", "+1", "-1K", "1.5M", "8MB", "8KB", "8Mi",
		"8mib", "8T", "0x10", "1e3", "8M8", "18446744073709551616", "17179869184G",
		"99999999999999999999999999999999K",
	};
	uint64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		v = 1;
		if (spec_parse_bytes(ok[i].s, &v) != 0)
			fail_msg("refused '%s'", ok[i].s);
		if (v != ok[i].want)
			fail_msg("'%s' read as %llu, want %llu", ok[i].s, (unsigned long long)v,
				 (unsigned long long)ok[i].want);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		v = 12345;
		if (spec_parse_bytes(bad[i], &v) != -1)
			fail_msg("accepted '%s' as %llu", bad[i], (unsigned long long)v);
		assert_int_equal(v, 12345);	/* untouched */
	}
	assert_int_equal(spec_parse_bytes(NULL, &v), -1);
}

static void test_parse_seconds(void **state)
{
	static const struct { const char *s; double want; } ok[] = {
		{ "2", 2 }, { "2s", 2 }, { "0.5", 0.5 }, { ".5", 0.5 }, { "5.", 5 }, { "0", 0 },
		{ "500ms", 0.5 }, { "1ms", 0.001 }, { "1m", 60 }, { "1.5m", 90 }, { "1h", 3600 },
		{ "86400", 86400 }, { "0.25s", 0.25 },
	};
	static const char *const bad[] = {
		"", ".", "s", "ms", "2 s", " 2s", "2s ", "2S", "2M", "2H", "2sec", "2min", "1d", "-1s",
		"+1", "1e3", "nan", "inf", "1..2", "1.2.3", "2ms5", "1h30m", "0x1p3", "2m s",
		"10000000000000000000000000000000000000s",
	};
	double v;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		v = -1;
		if (spec_parse_seconds(ok[i].s, &v) != 0)
			fail_msg("refused '%s'", ok[i].s);
		if (v != ok[i].want)
			fail_msg("'%s' read as %.17g, want %.17g", ok[i].s, v, ok[i].want);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		v = -7;
		if (spec_parse_seconds(bad[i], &v) != -1)
			fail_msg("accepted '%s' as %g", bad[i], v);
		assert_true(v == -7);	/* untouched */
	}
	assert_int_equal(spec_parse_seconds(NULL, &v), -1);
}

static void test_units_in_spec(void **state)
{
	struct spec s;
	json_t *p;
	size_t i;

	(void)state;
	parse_ok(&s, "{\"workload\":\"mremap\",\"size\":\"8M\",\"duration\":\"2s\",\"interval\":\"500ms\"}");
	assert_int_equal(s.cases[0].p.size, 8u << 20);
	assert_float_equal(s.cases[0].p.duration, 2.0, 0);
	assert_float_equal(s.interval, 0.5, 0);
	/* the output's params carry the plain numbers, typed as the numbers would be */
	p = s.cases[0].params;
	assert_true(json_is_integer(json_object_get(p, "size")));
	assert_int_equal(jsonget_int_or(p, "size", 0), 8u << 20);
	assert_true(json_is_real(json_object_get(p, "duration")));
	assert_float_equal(json_real_value(json_object_get(p, "duration")), 2.0, 0);
	spec_release(&s);

	/* a plain number given as a string is that many bytes or seconds */
	parse_ok(&s, "{\"workload\":\"mremap\",\"size\":\"16384\",\"duration\":\"1.5\"}");
	assert_int_equal(s.cases[0].p.size, 16384);
	assert_float_equal(s.cases[0].p.duration, 1.5, 0);
	spec_release(&s);

	/* in a list, each element on its own: units and plain numbers mixed */
	parse_ok(&s, "{\"workload\":\"mremap\",\"size\":[\"4M\",8388608,\"16MiB\",\"1g\"]}");
	assert_int_equal(s.ncases, 4);
	for (i = 0; i < 4; i++) {
		static const uint64_t want[] = { 4u << 20, 8u << 20, 16u << 20, 1u << 30 };

		assert_int_equal(s.cases[i].p.size, want[i]);
		assert_int_equal(jsonget_int_or(s.cases[i].params, "size", 0), want[i]);
	}
	spec_release(&s);

	parse_ok(&s, "{\"workload\":\"tcp-rr\",\"request_size\":\"1K\",\"response_size\":[\"64k\",\"1M\"]}");
	assert_int_equal(s.ncases, 2);
	assert_int_equal(s.cases[0].p.request_size, 1024);
	assert_int_equal(s.cases[0].p.response_size, 64 << 10);
	assert_int_equal(s.cases[1].p.response_size, 1 << 20);
	spec_release(&s);

	parse_ok(&s, "{\"workload\":\"exec\",\"command\":[\"true\"],\"timeout\":\"10m\"}");
	assert_float_equal(s.cases[0].p.timeout, 600.0, 0);
	spec_release(&s);
}

/* The neighbour's units are read too; the caller's object is left as it was. */
static void test_units_neighbour(void **state)
{
	struct strbuf err = STRBUF_INIT;
	json_t *root = json_pack("{s:s,s:s,s:{s:s,s:s}}", "workload", "mprotect", "duration", "3s",
				 "neighbour", "workload", "mremap", "size", "16M");
	char *before = json_dumps(root, JSON_SORT_KEYS), *after;
	struct spec s;

	(void)state;
	if (spec_from_json(&s, root, &err) != 0)
		fail_msg("rejected: %s", err.buf);
	assert_int_equal(s.neighbour.size, 16u << 20);
	assert_int_equal(jsonget_int_or(s.neighbour_params, "size", 0), 16u << 20);
	assert_float_equal(s.cases[0].p.duration, 3.0, 0);
	after = json_dumps(root, JSON_SORT_KEYS);
	assert_string_equal(after, before);
	spec_release(&s);
	free(before);
	free(after);
	json_decref(root);
	strbuf_release(&err);
}

static void test_bad_units(void **state)
{
	struct strbuf err = STRBUF_INIT;
	struct spec s;
	json_t *root;

	(void)state;
	/* the message names the field, the bounds in units, the forms, and what was given */
	expect_error("{\"workload\":\"mremap\",\"size\":\"8Q\"}",
		     "size: must be a number of bytes from 4K to 64G: an integer, or one followed by "
		     "K, M or G (powers of 1024; KiB, MiB, GiB also) like 64K or 8M (got '8Q')");
	expect_error("{\"workload\":\"mremap\",\"size\":\"2K\"}", "size: must be", "(got '2K')");
	expect_error("{\"workload\":\"mremap\",\"size\":\"65G\"}", "size: must be", "to 64G", "(got '65G')");
	expect_error("{\"workload\":\"mremap\",\"size\":\"99999999999999999999G\"}", "size: must be");
	expect_error("{\"workload\":\"mremap\",\"size\":-4096}", "size: must be a number of bytes");
	expect_error("{\"workload\":\"mremap\",\"size\":8388608.0}", "size: must be a number of bytes");
	expect_error("{\"workload\":\"mremap\",\"size\":\"8MB\"}", "size: must be", "powers of 1024",
		     "(got '8MB')");
	/* one bad element of a list is named by its index */
	expect_error("{\"workload\":\"mremap\",\"size\":[\"4M\",\"8Q\",\"16M\"]}",
		     "size[1]: must be a number of bytes", "(got '8Q')");
	expect_error("{\"workload\":\"tcp-rr\",\"request_size\":\"2M\"}",
		     "request_size: must be a number of bytes from 1 to 1M", "(got '2M')");
	expect_error("{\"workload\":\"mprotect\",\"neighbour\":{\"workload\":\"mremap\",\"size\":\"8Q\"}}",
		     "neighbour.size: must be a number of bytes", "(got '8Q')");
	/* a count is not a size: no units */
	expect_error("{\"workload\":\"fault-write\",\"rounds\":\"1M\"}", "rounds: must be an integer");

	expect_error("{\"workload\":\"mprotect\",\"duration\":\"2x\"}",
		     "duration: must be a number from 0.1 to 86400 seconds, or one followed by ms, s, m "
		     "or h like 500ms, 2s or 10m (got '2x')");
	expect_error("{\"workload\":\"mprotect\",\"duration\":\"50ms\"}", "duration: must be", "(got '50ms')");
	expect_error("{\"workload\":\"mprotect\",\"duration\":\"25h\"}", "duration: must be", "(got '25h')");
	expect_error("{\"workload\":\"mprotect\",\"duration\":\"2 s\"}", "duration: must be", "(got '2 s')");
	expect_error("{\"workload\":\"mprotect\",\"duration\":true}", "duration: must be a number from 0.1");
	expect_error("{\"workload\":\"mprotect\",\"interval\":\"1h1m\"}", "interval: must be a number from 0.05 "
		     "to 3600 seconds", "(got '1h1m')");
	expect_error("{\"workload\":\"exec\",\"command\":[\"true\"],\"timeout\":\"0s\"}",
		     "timeout: must be a number from 1 to 86400 seconds");

	/* a NUL inside the string would cut "8M\0x" to "8M" for a C parser: refused */
	root = json_pack("{s:s,s:s%}", "workload", "mremap", "size", "8M\0x", (size_t)4);
	assert_non_null(root);
	assert_int_equal(spec_from_json(&s, root, &err), -1);
	assert_contains(err.buf, "size: must be a number of bytes");
	json_decref(root);
	strbuf_release(&err);
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
	assert_string_equal(jsonget_str(p, "vma"), "one");
	assert_int_equal(jsonget_int_or(p, "rounds", 0), FAULT_WRITE_ROUNDS);
	assert_int_equal(jsonget_int_or(p, "workers", 0), cpus_allowed());
	spec_release(&s);

	/* the older shape keeps its defaults: 2 MiB per round, until the duration */
	parse_ok(&s, "{\"workload\":\"fault-write\",\"vma\":\"per-round\",\"workers\":1}");
	assert_int_equal(s.cases[0].p.vma, WL_VMA_PER_ROUND);
	assert_int_equal(s.cases[0].p.rounds, 0);
	assert_int_equal(s.cases[0].p.size, 2u << 20);
	assert_int_equal(s.cases[0].p.workers, 1);
	assert_string_equal(jsonget_str(s.cases[0].params, "vma"), "per-round");
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

/* ---- the catalog's tables ---- */

static void test_catalog_monitors(void **state)
{
	static const char *const by_name[] = { "interrupts", "procstat", "profile", "tracepoints", "vmstat" };
	size_t i;

	(void)state;
	assert_null(monitor_catalog_errors());
	/* the names a spec may list, in name order; pmu is always on */
	assert_string_equal(monitor_names(), "interrupts, procstat, profile, tracepoints, vmstat");
	assert_int_equal(monitor_bit("pmu"), 0);
	assert_int_equal(monitor_bit("dmesg"), 0);
	assert_non_null(monitor_def_lookup("pmu"));
	assert_true(monitor_def_lookup("pmu")->flags & MONITOR_ALWAYS);
	/* a bit each, growing in name order whatever the table's order */
	for (i = 0; i < ARRAY_SIZE(by_name); i++) {
		assert_int_not_equal(monitor_bit(by_name[i]), 0);
		if (i)
			assert_true(monitor_bit(by_name[i - 1]) < monitor_bit(by_name[i]));
	}
	assert_int_equal(monitor_default_mask(),
			 monitor_bit("interrupts") | monitor_bit("procstat") | monitor_bit("vmstat"));
	for (i = 0; i < monitor_ndefs; i++)
		assert_true(monitor_defs[i].what && *monitor_defs[i].what);
}

static void test_catalog_workloads(void **state)
{
	const struct workload_def *d;
	size_t i;

	(void)state;
	assert_null(workload_catalog_errors());
	assert_string_equal(workload_names(), "mprotect, mremap, fault-write, tcp-rr, stencil, exec");
	for (i = 0; (d = workload_def_at(i)) != NULL; i++) {
		/* every workload takes its name and a mode, has a headline and
		 * runs as threads */
		assert_true(d->params & WP(WORKLOAD));
		assert_true(d->params & WP(MODE));
		assert_non_null(d->score);
		assert_non_null(d->score_unit);
		assert_true(d->modes & (1u << WL_THREADS));
		assert_ptr_equal(workload_lookup(d->name), d);
	}
	assert_int_equal(i, 6);
	assert_null(workload_lookup("mprotekt"));
	assert_null(workload_lookup(NULL));
	/* what compare_class.c reads as a case's headline */
	assert_string_equal(workload_lookup("fault-write")->score, "total_sec");
	for (i = 0; i < WP_MAX; i++)
		assert_true(workload_params[i].key && workload_params[i].type < WPT_MAX);
	assert_true(workload_exec_parser_known("stress-ng"));
	assert_false(workload_exec_parser_known("stress"));
	assert_string_equal(workload_vma_name(workload_vma_lookup("per-round")), "per-round");
	assert_int_equal(workload_vma_lookup("two"), WL_VMA_MAX);
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
	/* a word other than cpus: the message says cpus is one */
	expect_error("{\"workload\":\"mprotect\",\"workers\":\"cpu\"}",
		     "workers: must be an integer from 1 to 1024, or cpus (one a CPU it may run on)");
}

/* workers: cpus is one worker a CPU the agent may run on (a sweep's
 * guest_cpus changes it boot by boot); the case's params say how many. */
static void test_workers_cpus(void **state)
{
	struct strbuf err = STRBUF_INIT;
	struct spec s;
	cpu_set_t set;
	int n;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	n = CPU_COUNT(&set);
	if (parse(&s, "{\"workload\":\"mprotect\",\"workers\":[1,\"cpus\"]}", &err) < 0)
		fail_msg("%s", err.buf);
	assert_int_equal(s.ncases, 2);
	assert_int_equal(s.cases[0].p.workers, 1);
	assert_int_equal(s.cases[1].p.workers, n);
	assert_int_equal(jsonget_int_or(s.cases[1].params, "workers", 0), n);
	spec_release(&s);
	strbuf_release(&err);
}

static void test_bad_numbers(void **state)
{
	(void)state;
	expect_error("{\"workload\":\"mprotect\",\"duration\":-1}",
		     "duration: must be a number from 0.1 to 86400");
	expect_error("{\"workload\":\"mprotect\",\"duration\":\"ten\"}", "duration: must be a number");
	expect_error("{\"workload\":\"mprotect\",\"iterations\":0}",
		     "iterations: must be an integer from 1 to 1000");
	expect_error("{\"workload\":\"mprotect\",\"warmup\":-1}", "warmup: must be an integer from 0 to 100");
	expect_error("{\"workload\":\"mprotect\",\"interval\":0}", "interval: must be a number from 0.05 to 3600");
	expect_error("{\"workload\":\"fault-write\",\"size\":4095}",
		     "size: must be a number of bytes from 4K to 64G");
	expect_error("{\"workload\":\"tcp-rr\",\"request_size\":[100,0]}",
		     "request_size[1]: must be a number of bytes from 1 to 1M");
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
	/* a number past INT_MAX is refused, not wrapped to 3 */
	expect_error("{\"workload\":\"stencil\",\"grid\":\"4294967299x3x3\"}", "grid:", "(got '4294967299x3x3')");
	expect_error("{\"workload\":\"stencil\",\"grid\":\"+5x 7x3\"}", "grid:", "(got '+5x 7x3')");
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
		cmocka_unit_test(test_workers_cpus),
		cmocka_unit_test(test_toplevel_settings),
		cmocka_unit_test(test_matrix_order),
		cmocka_unit_test(test_matrix_three_keys),
		cmocka_unit_test(test_max_cases),
		cmocka_unit_test(test_grid),
		cmocka_unit_test(test_neighbour),
		cmocka_unit_test(test_exec),
		cmocka_unit_test(test_fault_write_shapes),
		cmocka_unit_test(test_fault_write_bad),
		cmocka_unit_test(test_catalog_monitors),
		cmocka_unit_test(test_catalog_workloads),
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
		cmocka_unit_test(test_parse_bytes),
		cmocka_unit_test(test_parse_seconds),
		cmocka_unit_test(test_units_in_spec),
		cmocka_unit_test(test_units_neighbour),
		cmocka_unit_test(test_bad_units),
	};

	return cmocka_run_group_tests_name("spec", tests, NULL, NULL);
}
