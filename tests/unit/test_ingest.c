/*
 * daemon/ingest: the trust boundary between the agent's stdout and the
 * store. Lines that are not JSON, too long, or whose fields have the wrong
 * JSON types are refused with a reason that names the line and shows a
 * bounded excerpt of it, as a workload failure (no store error), and leave
 * no row behind: what is read back from a real store file after each
 * refusal is exactly what the good lines before it put there.
 */
#include "testlib.h"

#include <unistd.h>

#include "ingest.h"
#include "jsonget.h"
#include "store.h"
#include "util.h"
#include "fixture_ingest.h"
#include "banned.h"

#define BAD_EXCERPT 400		/* ingest.c: how much of a refused line is kept */

static int setup(void **state)
{
	return ingest_fixture_setup(state, "ingest");
}

static int teardown(void **state)
{
	return ingest_fixture_teardown(state);
}

/* How many runs, metric rows (warm-ups included) and samples the store
 * holds for the fixture's job, read back as the API reads them. */
static size_t stored_runs(struct fixture *f)
{
	return store_json_count(store_runs_json(f->sf.st, f->job), "runs");
}

static size_t stored_metrics(struct fixture *f)
{
	return store_json_count(store_metrics_json(f->sf.st, f->job, NULL, 1), "metrics");
}

static size_t stored_samples(struct fixture *f)
{
	return store_json_count(store_samples_json(f->sf.st, f->job, 0, NULL, 0, 1000), "samples");
}

static int feed(struct fixture *f, const char *line)
{
	return ingest_line(&f->ig, line, strlen(line), 0);
}

/* The line is refused as garbage: -1, no store error, a reason that has
 * `why`, and the store holds what it held before. */
static void assert_refused(struct fixture *f, const char *line, size_t len, int truncated, const char *why)
{
	size_t runs = stored_runs(f), metrics = stored_metrics(f), samples = stored_samples(f);
	long lines = f->ig.lines;
	char at[64];

	if (ingest_line(&f->ig, line, len, truncated) != -1)
		fail_msg("taken: %.200s", line);
	assert_int_equal(f->ig.store_error, 0);
	assert_contains(f->ig.bad.buf, why);
	snprintf(at, sizeof(at), "agent output line %ld: ", lines + 1);
	assert_contains(f->ig.bad.buf, at);
	assert_true(f->ig.bad.len <= strlen(at) + strlen(why) + 2 + BAD_EXCERPT + 3);
	assert_int_equal(stored_runs(f), runs);
	assert_int_equal(stored_metrics(f), metrics);
	assert_int_equal(stored_samples(f), samples);
}

static void refused(struct fixture *f, const char *line, const char *why)
{
	assert_refused(f, line, strlen(line), 0, why);
}

#define ITER_HEAD "{\"type\":\"iteration\",\"case\":0,\"iteration\":1,\"warmup\":false,"
#define GOOD_ITER ITER_HEAD "\"params\":{\"workload\":\"mprotect\",\"workers\":2}," \
	"\"metrics\":{\"mprotect.ops_per_sec\":5000,\"interrupts.TLB\":12},\"duration_s\":1.5}"
#define SAMPLE_HEAD "{\"type\":\"sample\",\"t\":1.0,\"dt\":1.0,\"case\":0,\"iteration\":1,"
#define GOOD_SAMPLE SAMPLE_HEAD "\"warmup\":false,\"window\":true,\"values\":{\"interrupts.TLB\":3}}"

/* The good lines go in, so a refusal below is the field's, not the
 * fixture's. */
static void test_good_lines_are_stored(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(feed(f, "{\"type\":\"hello\",\"protocol\":1,\"host\":{\"kernel\":\"6.1\"}}"), 0);
	assert_int_equal(feed(f, GOOD_SAMPLE), 0);
	assert_int_equal(feed(f, GOOD_ITER), 0);
	assert_int_equal(feed(f, ""), 0);	/* a blank line is nothing */
	assert_int_equal(feed(f, "{\"type\":\"result\",\"status\":\"ok\"}"), 0);
	assert_int_equal(f->ig.bad.len, 0);
	assert_true(f->ig.saw_hello && f->ig.saw_result && f->ig.result_ok);
	assert_int_equal(f->ig.iterations, 1);
	assert_int_equal(f->ig.samples, 1);
	assert_int_equal(stored_runs(f), 1);
	assert_int_equal(stored_metrics(f), 2);
	assert_int_equal(stored_samples(f), 1);
}

/* A sweep's boot (guest_cpus) adds its vCPU count to each run's params,
 * beside the agent's, so the comparison has a row per count. */
static void test_sweep_count_in_params(void **state)
{
	struct fixture *f = *state;
	json_t *runs, *params;

	f->ig.cpus = 8;
	assert_int_equal(feed(f, GOOD_ITER), 0);
	runs = store_runs_json(f->sf.st, f->job);
	assert_non_null(runs);
	params = json_object_get(json_array_get(json_object_get(runs, "runs"), 0), "params");
	assert_int_equal(jsonget_int_or(params, "cpus", 0), 8);
	assert_int_equal(jsonget_int_or(params, "workers", 0), 2);
	assert_string_equal(jsonget_str(params, "workload"), "mprotect");
	json_decref(runs);
}

/* Bytes that are not one JSON object with a string "type". */
static void test_garbage(void **state)
{
	static const char binary[] = "{\"type\":\"sample\"\0\x01\xff\xfe}";
	struct fixture *f = *state;

	assert_int_equal(feed(f, GOOD_ITER), 0);
	refused(f, "Segmentation fault (core dumped)", "not JSON");
	refused(f, GOOD_SAMPLE "trailing", "not JSON");
	refused(f, "{\"type\":\"iteration\",\"case\":0", "not JSON");
	assert_refused(f, binary, sizeof(binary) - 1, 0, "not JSON");
	refused(f, "{\"type\":\"sample\",\"type\":\"iteration\"}", "not JSON");	/* duplicate key */
	refused(f, "{\"type\":\"iteration\",\"case\":NaN}", "not JSON");
	refused(f, ITER_HEAD "\"params\":{\"workload\":\"mprotect\"},\"metrics\":{\"x\":1e400},"
		"\"duration_s\":1}", "not JSON");
	refused(f, "[{\"type\":\"iteration\"}]", "no \"type\"");
	refused(f, "\"iteration\"", "not JSON");	/* not an object or array */
	refused(f, "42", "not JSON");
	refused(f, "{\"kind\":\"iteration\"}", "no \"type\"");
	refused(f, "{\"type\":7}", "no \"type\"");
	refused(f, "{\"type\":null}", "no \"type\"");
	assert_int_equal(stored_runs(f), 1);
}

/* A line the transport cut (longer than its bound) is refused whatever it
 * starts with, and the reason keeps only an excerpt of it. */
static void test_huge_lines(void **state)
{
	struct fixture *f = *state;
	size_t len = 5u << 20, i;
	char *huge = malloc(len + 1);
	struct strbuf sb = STRBUF_INIT;

	assert_non_null(huge);
	memcpy(huge, GOOD_ITER, strlen(GOOD_ITER));
	memset(huge + strlen(GOOD_ITER), ' ', len - strlen(GOOD_ITER));
	huge[len] = '\0';
	assert_refused(f, huge, len, 1, "line too long");
	assert_contains(f->ig.bad.buf, "...");
	free(huge);

	/* within the bound, a long line is read, its metric names are not */
	strbuf_addstr(&sb, ITER_HEAD "\"params\":{\"workload\":\"mprotect\"},\"metrics\":{\"");
	for (i = 0; i < 300; i++)
		strbuf_addch(&sb, 'm');
	strbuf_addstr(&sb, "\":1},\"duration_s\":1}");
	refused(f, sb.buf, "malformed iteration");
	strbuf_reset(&sb);
	strbuf_addstr(&sb, SAMPLE_HEAD "\"warmup\":false,\"window\":true,\"values\":{\"");
	for (i = 0; i < 300; i++)
		strbuf_addch(&sb, 'v');
	strbuf_addstr(&sb, "\":1}}");
	refused(f, sb.buf, "malformed sample");
	strbuf_release(&sb);
	assert_int_equal(stored_runs(f), 0);
}

/* Each field of each known type, with the wrong JSON type or missing. */
static void test_wrong_types(void **state)
{
	static const char *const iterations[] = {
		"{\"type\":\"iteration\",\"case\":\"0\",\"iteration\":1,\"warmup\":false,"
		"\"params\":{\"workload\":\"mprotect\"},\"metrics\":{\"x\":1},\"duration_s\":1}",
		"{\"type\":\"iteration\",\"case\":0,\"iteration\":1.5,\"warmup\":false,"
		"\"params\":{\"workload\":\"mprotect\"},\"metrics\":{\"x\":1},\"duration_s\":1}",
		"{\"type\":\"iteration\",\"case\":0,\"iteration\":1,\"warmup\":0,"
		"\"params\":{\"workload\":\"mprotect\"},\"metrics\":{\"x\":1},\"duration_s\":1}",
		"{\"type\":\"iteration\",\"case\":0,\"iteration\":1,"
		"\"params\":{\"workload\":\"mprotect\"},\"metrics\":{\"x\":1},\"duration_s\":1}",
		ITER_HEAD "\"params\":[\"mprotect\"],\"metrics\":{\"x\":1},\"duration_s\":1}",
		ITER_HEAD "\"params\":{\"workers\":2},\"metrics\":{\"x\":1},\"duration_s\":1}",
		ITER_HEAD "\"params\":{\"workload\":7},\"metrics\":{\"x\":1},\"duration_s\":1}",
		ITER_HEAD "\"params\":{\"workload\":\"mprotect\"},\"metrics\":[1,2],\"duration_s\":1}",
		ITER_HEAD "\"params\":{\"workload\":\"mprotect\"},\"metrics\":{\"x\":1,\"y\":\"2\"},\"duration_s\":1}",
		ITER_HEAD "\"params\":{\"workload\":\"mprotect\"},\"metrics\":{\"x\":null},\"duration_s\":1}",
		ITER_HEAD "\"params\":{\"workload\":\"mprotect\"},\"metrics\":{\"x\":true},\"duration_s\":1}",
		ITER_HEAD "\"params\":{\"workload\":\"mprotect\"},\"metrics\":{\"x\":{\"v\":1}},\"duration_s\":1}",
		ITER_HEAD "\"params\":{\"workload\":\"mprotect\"},\"metrics\":{\"x\":1},\"duration_s\":\"1\"}",
		ITER_HEAD "\"params\":{\"workload\":\"mprotect\"},\"metrics\":{\"x\":1}}",
		ITER_HEAD "\"params\":{\"workload\":\"mprotect\"},\"metrics\":{\"x\":1},\"duration_s\":1,"
		"\"info\":\"x\"}",
		ITER_HEAD "\"params\":{\"workload\":\"mprotect\"},\"metrics\":{\"x\":1},\"duration_s\":1,"
		"\"profile\":[1]}",
		/* out of range: a case past INT_MAX would wrap onto case 1 */
		"{\"type\":\"iteration\",\"case\":4294967297,\"iteration\":1,\"warmup\":false,"
		"\"params\":{\"workload\":\"mprotect\"},\"metrics\":{\"x\":1},\"duration_s\":1}",
		"{\"type\":\"iteration\",\"case\":0,\"iteration\":-5,\"warmup\":false,"
		"\"params\":{\"workload\":\"mprotect\"},\"metrics\":{\"x\":1},\"duration_s\":1}",
		ITER_HEAD "\"params\":{\"workload\":\"mprotect\"},\"metrics\":{\"x\":1},\"duration_s\":-3}",
		/* where a window ran: a CPU no marker line can count, a
		 * neighbour without its operations */
		ITER_HEAD "\"params\":{\"workload\":\"mprotect\"},\"metrics\":{\"x\":1},\"duration_s\":1,"
		"\"window\":{\"index\":1,\"ops\":5,\"cpus\":[0,64]}}",
		ITER_HEAD "\"params\":{\"workload\":\"stencil\"},\"metrics\":{\"x\":1},\"duration_s\":1,"
		"\"window\":{\"index\":1,\"ops\":5,\"cpus\":[0],\"neighbour\":{\"workload\":\"mprotect\","
		"\"cpus\":[1]}}}",
	};
	static const char *const samples[] = {
		"{\"type\":\"sample\",\"t\":\"1\",\"dt\":1,\"case\":0,\"iteration\":1,\"warmup\":false,"
		"\"window\":true,\"values\":{\"a\":1}}",
		"{\"type\":\"sample\",\"t\":1,\"case\":0,\"iteration\":1,\"warmup\":false,"
		"\"window\":true,\"values\":{\"a\":1}}",
		"{\"type\":\"sample\",\"t\":1,\"dt\":1,\"case\":0.5,\"iteration\":1,\"warmup\":false,"
		"\"window\":true,\"values\":{\"a\":1}}",
		SAMPLE_HEAD "\"warmup\":false,\"window\":\"yes\",\"values\":{\"a\":1}}",
		SAMPLE_HEAD "\"warmup\":false,\"window\":true,\"values\":[1]}",
		SAMPLE_HEAD "\"warmup\":false,\"window\":true,\"values\":{\"a\":1,\"b\":\"x\"}}",
		SAMPLE_HEAD "\"warmup\":false,\"window\":true}",
		"{\"type\":\"sample\",\"t\":1,\"dt\":-1,\"case\":0,\"iteration\":1,\"warmup\":false,"
		"\"window\":true,\"values\":{\"a\":1}}",
		"{\"type\":\"sample\",\"t\":1,\"dt\":1,\"case\":-1,\"iteration\":1,\"warmup\":false,"
		"\"window\":true,\"values\":{\"a\":1}}",
	};
	static const struct { const char *line, *why; } others[] = {
		{ "{\"type\":\"hello\",\"protocol\":\"1\",\"host\":{}}", "malformed hello" },
		{ "{\"type\":\"hello\",\"protocol\":1,\"host\":\"box\"}", "malformed hello" },
		{ "{\"type\":\"hello\",\"protocol\":1}", "malformed hello" },
		{ "{\"type\":\"result\",\"status\":0}", "malformed result" },
		{ "{\"type\":\"result\"}", "malformed result" },
		{ "{\"type\":\"error\",\"message\":[\"x\"]}", "malformed error" },
		{ "{\"type\":\"error\"}", "malformed error" },
	};
	struct fixture *f = *state;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(iterations); i++)
		refused(f, iterations[i], "malformed iteration");
	for (i = 0; i < ARRAY_SIZE(samples); i++)
		refused(f, samples[i], "malformed sample");
	for (i = 0; i < ARRAY_SIZE(others); i++)
		refused(f, others[i].line, others[i].why);
	assert_false(f->ig.saw_hello);
	assert_false(f->ig.saw_result);
	assert_int_equal(f->ig.agent_error.len, 0);
	assert_int_equal(f->ig.iterations, 0);
	assert_int_equal(f->ig.samples, 0);
}

/* The reason shows the start of the line, cut: enough to find it in the
 * stage log, never the whole of a large line. */
static void test_refusal_shows_an_excerpt(void **state)
{
	struct fixture *f = *state;
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	strbuf_addstr(&sb, "{\"type\":\"result\",\"status\":17,\"pad\":\"");
	for (i = 0; i < 2000; i++)
		strbuf_addch(&sb, 'p');
	strbuf_addstr(&sb, "\"}");
	refused(f, sb.buf, "malformed result");
	assert_contains(f->ig.bad.buf, "{\"type\":\"result\",\"status\":17");
	assert_contains(f->ig.bad.buf, "...");
	assert_null(strstr(f->ig.bad.buf, "\"}"));
	strbuf_release(&sb);
}

/* A newer agent: unknown fields and unknown types are ignored, not stored
 * and not refused. */
static void test_unknown_is_ignored(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(feed(f, "{\"type\":\"topology\",\"nodes\":[1,2]}"), 0);
	assert_int_equal(stored_runs(f), 0);
	assert_int_equal(stored_samples(f), 0);
	assert_int_equal(feed(f, ITER_HEAD "\"params\":{\"workload\":\"mprotect\"},"
			      "\"metrics\":{\"x\":1},\"duration_s\":1,\"energy_j\":\"n/a\"}"), 0);
	assert_int_equal(stored_runs(f), 1);
	assert_int_equal(f->ig.bad.len, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_good_lines_are_stored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep_count_in_params, setup, teardown),
		cmocka_unit_test_setup_teardown(test_huge_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_types, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusal_shows_an_excerpt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_is_ignored, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
