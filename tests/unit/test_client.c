/*
 * The client's views of a job (client/client_status.c) and its formatting
 * helpers (client_fmt.c), on JOB documents shaped as api.h describes them:
 * what `tlblab status` says about specs that failed, repeated boots, whose
 * failure an error is, and that a daemon which sends none of the newer
 * fields gets the older view without gaps. The daemon's answers themselves
 * are t0020's part.
 */
#include "testlib.h"

#include <jansson.h>
#include <regex.h>

#include "client.h"
#include "banned.h"

/* The text fn prints for job, from JSON text; the caller frees it. */
static char *render_status(const char *text)
{
	json_error_t jerr;
	json_t *job = json_loads(text, 0, &jerr);
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	if (!job)
		fail_msg("bad test JSON at %d:%d: %s", jerr.line, jerr.column, jerr.text);
	f = open_memstream(&out, &len);
	assert_non_null(f);
	client_status_print(f, 4, job);
	fclose(f);
	json_decref(job);
	return out;
}

/* Fails unless line is one whole line of text. */
static void assert_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	const char *p = text;

	while ((p = strstr(p, line))) {
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return;
		p++;
	}
	fail_msg("no line \"%s\" in:\n%s", line, text);
}

/* Fails unless some line of text matches the extended regex re. */
static void assert_line_re(const char *text, const char *re)
{
	regex_t rx;
	int r;

	if (regcomp(&rx, re, REG_EXTENDED | REG_NEWLINE | REG_NOSUB))
		fail_msg("bad regex %s", re);
	r = regexec(&rx, text, 0, NULL, 0);
	regfree(&rx);
	if (r)
		fail_msg("no line matches /%s/ in:\n%s", re, text);
}

#define SEGV "agent killed by signal 11"

/* An A/B job whose spec 1 failed on the patched side and on the boot that
 * repeated it; spec outcomes as the daemon stores them. */
static const char ab_job[] =
	"{\"id\": 4, \"kind\": \"ab\", \"state\": \"failed\", \"suite\": \"tlb\", \"tree\": \"linux\","
	" \"base\": \"v6.1\", \"patch_kind\": \"patch\", \"machines\": [\"m1\"], \"tags\": [],"
	" \"submitter\": \"dave\", \"verdict\": null, \"cancel_requested\": false,"
	" \"error\": {\"class\": \"workload\", \"message\": \"spec 1 failed on patched twice\", \"stage\": 47},"
	" \"stages\": ["
	"  {\"id\": 40, \"seq\": 0, \"kind\": \"build\", \"side\": \"base\", \"state\": \"done\","
	"   \"machine\": \"builder b1\", \"attempt\": 0, \"boot_index\": 0, \"build_id\": \"b1\", \"specs\": []},"
	"  {\"id\": 43, \"seq\": 3, \"kind\": \"run\", \"side\": \"base\", \"state\": \"done\", \"machine\": \"m1\","
	"   \"attempt\": 0, \"boot_index\": 0, \"repeat_of\": null, \"specs\": ["
	"    {\"spec\": 0, \"workload\": \"mprotect\", \"params\": {\"workload\": \"mprotect\", \"workers\": 2},"
	"     \"state\": \"done\", \"class\": null, \"message\": null},"
	"    {\"spec\": 1, \"workload\": \"mremap\", \"params\": {\"workers\": 2, \"duration\": 0.2},"
	"     \"state\": \"done\", \"class\": null, \"message\": null}]},"
	"  {\"id\": 45, \"seq\": 5, \"kind\": \"run\", \"side\": \"patched\", \"state\": \"failed\","
	"   \"machine\": \"m1\", \"attempt\": 1, \"boot_index\": 0, \"error_class\": \"workload\","
	"   \"error_message\": \"run: spec 1: " SEGV "\", \"specs\": ["
	"    {\"spec\": 0, \"workload\": \"mprotect\", \"state\": \"done\", \"class\": null, \"message\": null},"
	"    {\"spec\": 1, \"workload\": \"mremap\", \"params\": {\"workers\": 2, \"duration\": 0.2},"
	"     \"state\": \"failed\", \"class\": \"workload\", \"message\": \"" SEGV "\\nBUG: oops\"},"
	"    {\"spec\": 2, \"workload\": \"exec\", \"state\": \"not_run\", \"class\": null, \"message\": null}]},"
	"  {\"id\": 46, \"seq\": 6, \"kind\": \"boot\", \"side\": \"patched\", \"state\": \"done\","
	"   \"machine\": \"m1\", \"attempt\": 0, \"boot_index\": 1, \"repeat_of\": 5},"
	"  {\"id\": 47, \"seq\": 7, \"kind\": \"run\", \"side\": \"patched\", \"state\": \"failed\","
	"   \"machine\": \"m1\", \"attempt\": 0, \"boot_index\": 1, \"repeat_of\": 5,"
	"   \"note\": \"waiting for the host to be quiet\", \"specs\": ["
	"    {\"spec\": 1, \"workload\": \"mremap\", \"state\": \"failed\", \"class\": \"infra\","
	"     \"message\": \"ssh: connection reset\"}]}"
	"]}";

static void test_status_specs(void **state)
{
	char *out = render_status(ab_job);

	(void)state;
	assert_line(out, "job 4: failed (ab)");
	/* failed counts among ran: 2 + 2 + 1 ran, 2 failed, 1 not run */
	assert_line(out, "specs      5 ran, 2 failed, 1 not run (over 3 run stages)");
	/* the error's stage by name and seq, as the table shows it */
	assert_line(out, "error      workload: spec 1 failed on patched twice (run patched #2 on m1, seq 7)");
	assert_line(out, "           a result of the patch, not a lab problem");
	assert_line(out, "specs of the run stages");
	assert_line(out, "  seq 3 run base #1 on m1: 2 ran (0 mprotect, 1 mremap)");
	assert_line(out, "  seq 5 run patched #1 on m1: 2 ran, 1 failed, 1 not run");
	/* params without the workload that the label names; a message's
	 * newline is not let through to the terminal */
	assert_line(out, "    spec 1 mremap workers=2 duration=0.2: failed (workload): " SEGV " BUG: oops");
	assert_line(out, "    spec 2 exec: not run");
	assert_line(out, "  seq 7 run patched #2 on m1 (repeats seq 5): 1 ran, 1 failed");
	assert_line(out, "    spec 1 mremap: failed (infra): ssh: connection reset");
	/* attempts counted from 1; the repeated stages say which they repeat */
	assert_non_null(strstr(out, "REPEATS"));
	assert_non_null(strstr(out, "ATTEMPT"));
	free(out);
}

static void test_status_table_columns(void **state)
{
	char *out = render_status(ab_job);

	(void)state;
	assert_line_re(out, "^SEQ +KIND +SIDE +BOOT +MACHINE +STATE +ATTEMPT +STARTED +DURATION +BUILD "
		       "+REPEATS +ERROR$");
	/* attempts counted from 1: the API's attempt 1 is the second */
	assert_line_re(out, "^ +5 +run +patched +#1 +m1 +failed +2 +- +- +- +- +workload: run: spec 1: "
		       SEGV "$");
	/* the repeated boot and run name the seq they repeat; a note shows
	 * where there is no error */
	assert_line_re(out, "^ +6 +boot +patched +#2 +m1 +done +1 +- +- +- +5 +-$");
	assert_line_re(out, "^ +7 +run +patched +#2 +m1 +failed +1 +- +- +- +5 +"
		       "\\(waiting for the host to be quiet\\)$");
	assert_line_re(out, "^ +0 +build +base +- +builder b1 +done +1 +- +- +b1 +- +-$");
	free(out);
	/* a cancel on its way, and a note on a stage that waits */
	out = render_status("{\"id\": 9, \"kind\": \"run\", \"state\": \"running\", \"cancel_requested\": true,"
			    " \"stages\": [{\"id\": 1, \"seq\": 0, \"kind\": \"run\", \"state\": \"pending\","
			    " \"attempt\": 0, \"note\": \"waiting for the host to be quiet\"}]}");
	assert_line(out, "job 4: running, cancel requested (run)");
	assert_non_null(strstr(out, "(waiting for the host to be quiet)"));
	assert_null(strstr(out, "REPEATS"));
	free(out);
}

/* A daemon that sends no specs, repeat_of or note: the older view. */
static void test_status_without_specs(void **state)
{
	char *out = render_status(
		"{\"id\": 4, \"kind\": \"run\", \"state\": \"failed\", \"suite\": \"s\","
		" \"error\": {\"class\": \"workload\", \"message\": \"exit 1\", \"stage\": 99},"
		" \"stages\": [{\"id\": 7, \"seq\": 0, \"kind\": \"run\", \"side\": null, \"state\": \"failed\","
		" \"machine\": \"m1\", \"attempt\": 0, \"error_class\": \"workload\", \"error_message\": \"exit 1\"}]}");

	(void)state;
	assert_line(out, "job 4: failed (run)");
	/* a stage id the job does not list is named as an id */
	assert_line(out, "error      workload: exit 1 (stage id 99)");
	assert_line(out, "           a result of the kernel or workload under test, not a lab problem");
	assert_null(strstr(out, "specs"));
	assert_null(strstr(out, "REPEATS"));
	assert_null(strstr(out, "BOOT"));
	free(out);
	out = render_status("{\"id\": 4, \"state\": \"queued\", \"stages\": []}");
	assert_line(out, "no stages yet");
	free(out);
}

static void test_blame(void **state)
{
	static const struct {
		const char *job, *blame;
	} cases[] = {
		{ "{\"kind\": \"ab\", \"error\": {\"class\": \"suite\", \"message\": \"x\"}}",
		  "the suite fails on the base kernel too: a problem of the suite on this tree, "
		  "not of the patch or the lab" },
		{ "{\"kind\": \"ab\", \"error\": {\"class\": \"boot\", \"stage\": 2},"
		  " \"stages\": [{\"id\": 2, \"side\": \"base\"}]}",
		  "a result of the base kernel, not of the patch or the lab" },
		{ "{\"kind\": \"ab\", \"error\": {\"class\": \"patch\", \"stage\": 2},"
		  " \"stages\": [{\"id\": 2, \"side\": \"base\"}]}",
		  "a result of the patch, not a lab problem" },
		{ "{\"kind\": \"ab\", \"error\": {\"class\": \"infra\"}}", NULL },
		{ "{\"kind\": \"ab\", \"error\": {\"class\": \"cancelled\"}}", NULL },
		{ "{\"kind\": \"run\", \"error\": null}", NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *job = json_loads(cases[i].job, 0, NULL);
		const char *b;

		assert_non_null(job);
		b = client_job_error_blame(job);
		if (cases[i].blame)
			assert_string_equal(b, cases[i].blame);
		else
			assert_null(b);
		json_decref(job);
	}
}

static void test_outcome_and_names(void **state)
{
	json_t *job = json_loads("{\"kind\": \"ab\", \"state\": \"failed\", \"error\": {\"class\": \"suite\","
				 " \"message\": \"spec 1 fails on base\"}}", 0, NULL);
	json_t *st = json_loads("{\"kind\": \"boot\", \"side\": \"patched\", \"boot_index\": 2,"
				" \"machine\": null, \"host\": \"q1\"}", 0, NULL);
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	client_job_outcome(&sb, job);
	assert_string_equal(sb.buf, "failed: suite: spec 1 fails on base (the suite fails on the base "
			    "kernel too: a problem of the suite on this tree, not of the patch or the lab)");
	strbuf_reset(&sb);
	client_stage_name(&sb, st);
	assert_string_equal(sb.buf, "boot patched #3 on q1");
	json_decref(job);
	json_decref(st);
	strbuf_release(&sb);
}

static void test_params(void **state)
{
	json_t *p = json_loads("{\"workload\": \"mprotect\", \"duration\": 0.2, \"workers\": 2,"
			       " \"mode\": \"threads\", \"cpus\": [0, 1], \"size\": null}", 0, NULL);
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	client_add_params(&sb, p, "workload");
	/* 0.2, not the double's 0.20000000000000001 */
	assert_string_equal(sb.buf, "duration=0.2 workers=2 mode=threads cpus=[0,1] size=-");
	strbuf_reset(&sb);
	client_add_params(&sb, json_object_get(p, "workers"), NULL);	/* not an object */
	assert_string_equal(sb.buf, "");
	json_decref(p);
	strbuf_release(&sb);
}

/* client_results_print: medians per block; a run of a spec that failed in its
 * stage is left out and counted, a warm-up is not counted at all */
static void test_results_failed_runs(void **state)
{
	json_t *runs = json_loads(
		"{\"runs\": ["
		" {\"id\": 1, \"machine\": \"m1\", \"side\": null, \"spec\": 1, \"case\": 0, \"warmup\": true,"
		"  \"workload\": \"mremap\", \"params\": {\"workload\": \"mremap\", \"duration\": 0.2}},"
		" {\"id\": 2, \"machine\": \"m1\", \"side\": null, \"spec\": 1, \"case\": 0, \"warmup\": false,"
		"  \"workload\": \"mremap\", \"params\": {\"workload\": \"mremap\", \"duration\": 0.2}},"
		" {\"id\": 3, \"machine\": \"m1\", \"side\": null, \"spec\": 1, \"case\": 0, \"warmup\": false,"
		"  \"workload\": \"mremap\", \"params\": {\"workload\": \"mremap\", \"duration\": 0.2}},"
		" {\"id\": 4, \"machine\": \"m1\", \"side\": null, \"spec\": 1, \"case\": 0, \"warmup\": false,"
		"  \"workload\": \"mremap\", \"params\": {}, \"error\": \"workload: killed by signal 11\"}]}",
		0, NULL);
	json_t *metrics = json_loads(
		"{\"metrics\": ["
		" {\"run\": 1, \"name\": \"mremap.ops_per_sec\", \"value\": 1, \"unit\": \"ops/s\"},"
		" {\"run\": 2, \"name\": \"mremap.ops_per_sec\", \"value\": 100, \"unit\": \"ops/s\"},"
		" {\"run\": 3, \"name\": \"mremap.ops_per_sec\", \"value\": 300, \"unit\": \"ops/s\"},"
		" {\"run\": 4, \"name\": \"mremap.ops_per_sec\", \"value\": 5, \"unit\": \"ops/s\"}]}",
		0, NULL);
	struct strbuf err = STRBUF_INIT;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	(void)state;
	assert_non_null(runs);
	assert_non_null(metrics);
	assert_int_equal(client_results_print(f, runs, metrics, 0, &err), 0);
	fclose(f);
	assert_line(out, "spec 1, case 0: mremap on m1");
	assert_line(out, "  params: duration=0.2");
	assert_line_re(out, "^  mremap\\.ops_per_sec +200 +100 +300 +2 +ops/s$");
	assert_line(out, "(1 run of specs that failed in their stage left out; --json has them)");
	free(out);
	json_decref(runs);
	json_decref(metrics);
	strbuf_release(&err);
}

/* What client_compare_print writes for the document cmp (the caller frees
 * it), or NULL when it fails: then err says why. */
static char *compare_text(const json_t *cmp, struct strbuf *err)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	int r;

	assert_non_null(cmp);
	assert_non_null(f);
	r = client_compare_print(f, cmp, 0, err);
	fclose(f);
	if (r == 0)
		return out;
	assert_int_equal(r, -1);
	free(out);
	return NULL;
}

/* client_compare_print reads the document, not the API's wrapper around it. */
static void test_compare_needs_document(void **state)
{
	json_t *wrapped = json_loads("{\"comparison\": {\"rows\": [], \"summary\": {}}}", 0, NULL);
	struct strbuf err = STRBUF_INIT;
	char *out;

	(void)state;
	assert_null(compare_text(wrapped, &err));
	assert_string_equal(err.buf, "the server's comparison has no \"rows\" or \"summary\"");
	out = compare_text(json_object_get(wrapped, "comparison"), &err);
	assert_non_null(out);
	assert_non_null(strstr(out, "no rows"));
	free(out);
	json_decref(wrapped);
	strbuf_release(&err);
}

/* the classes line is the daemon's list, each class with its legend */
static void test_compare_classes(void **state)
{
	json_t *cmp = json_loads("{\"rows\": [], \"summary\": {}, \"rules\": {\"classes\": ["
				 "{\"name\": \"work\", \"legend\": \"instructions\"},"
				 "{\"name\": \"toy\", \"legend\": \"toys\"}]}}", 0, NULL);
	struct strbuf err = STRBUF_INIT;
	char *out = compare_text(cmp, &err);

	(void)state;
	if (!out)
		fail_msg("client_compare_print: %s", err.buf);
	assert_line(out, "classes: work: instructions; toy: toys");
	free(out);
	json_decref(cmp);
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_specs),
		cmocka_unit_test(test_status_table_columns),
		cmocka_unit_test(test_status_without_specs),
		cmocka_unit_test(test_blame),
		cmocka_unit_test(test_outcome_and_names),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_results_failed_runs),
		cmocka_unit_test(test_compare_needs_document),
		cmocka_unit_test(test_compare_classes),
	};

	return cmocka_run_group_tests_name("client", tests, NULL, NULL);
}
