#ifndef TLBLAB_FIXTURE_REPORT_H
#define TLBLAB_FIXTURE_REPORT_H

/*
 * What test_report.c reads: the documents the daemon's own code makes for
 * the jobs tests/web/seed.py client stores (see test_report.c), and the
 * helpers that read their numbers as the report writes them. Include after
 * testlib.h and fixture_store.h.
 */

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <sys/wait.h>

#include "comparison_cache.h"
#include "config.h"
#include "jsonget.h"
#include "report.h"
#include "store.h"
#include "util.h"

/* ---- the documents ---- */

enum doc {
	DOC_JOB1,		/* job 1 under the default rules */
	DOC_JOB2,
	DOC_JOB4,
	DOC_JOB1_STRICT,	/* job 1 under STRICT_ALPHA */
	DOC_MAX
};

static const int64_t doc_job[DOC_MAX] = { 1, 2, 4, 1 };

/* Below 3 x 2/C(16,8) = 4.7e-4, the least p that Holm makes of 8 boots
 * against 8 over job 1's 3 headline rows; and below what
 * Benjamini-Hochberg makes of its counters' */
#define STRICT_ALPHA 0.0002

static struct {
	int tried;
	struct store_fixture sf;
	json_t *job[DOC_MAX], *cmp[DOC_MAX];
	struct strbuf why;	/* why they could not be made */
} docs = { .why = STRBUF_INIT };

/* Fills the store at db as t0020 does: python3 tests/web/seed.py DB client
 * (the script found beside the fixtures). */
static int seed(const char *db, struct strbuf *err)
{
	const char *fx = getenv("TLBLAB_FIXTURES");
	struct strbuf script = STRBUF_INIT, out = STRBUF_INIT;
	struct run_command cmd = RUN_COMMAND_INIT;
	const char *argv[] = { "python3", NULL, db, "client", NULL };
	int wstatus = -1, r;

	strbuf_addf(&script, "%s/../web/seed.py", fx && *fx ? fx : "tests/fixtures");
	argv[1] = script.buf;
	cmd.argv = argv;
	cmd.in = RUN_FD_NULL;
	cmd.out = RUN_FD_PIPE;
	cmd.err_to_out = 1;
	r = run_command_start(&cmd);
	if (r == 0) {
		strbuf_read_fd(&out, cmd.out_fd, 1 << 20);
		run_command_close_pipes(&cmd);
		r = run_command_wait(&cmd, &wstatus);
	}
	if (r < 0)
		r = strbuf_seterr(err, "python3 %s: %s", script.buf, strerror(-r));
	else if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus))
		r = strbuf_seterr(err, "python3 %s %s client: %s %d: %s", script.buf, db,
				  WIFEXITED(wstatus) ? "exit" : "signal",
				  WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : WTERMSIG(wstatus), out.buf);
	strbuf_release(&script);
	strbuf_release(&out);
	return r;
}

/* Job id's documents as the API serves them (api_jobs.c send_report): the
 * comparison first, which gives a finished job its verdict, then the job. */
static int read_docs(struct store *st, const struct lab_config *cfg, int64_t id, json_t **ret_job,
		     json_t **ret_cmp, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;
	json_error_t jerr;
	int r = comparison_cache_get(st, cfg, id, &text, err);

	if (r < 0) {
		if (!err->len)
			strbuf_seterr(err, "comparison_cache_get: %d", r);
		goto out;
	}
	*ret_cmp = json_loadb(text.buf, text.len, 0, &jerr);
	if (!*ret_cmp) {
		r = strbuf_seterr(err, "the comparison is not JSON: %s", jerr.text);
		goto out;
	}
	*ret_job = store_job_json(st, id);
	if (!*ret_job)
		r = strbuf_seterr(err, "store_job_json: %s", strerror(errno));
out:
	strbuf_release(&text);
	return r;
}

/* The store, and the documents of DOC_*: job 1's strict ones under a
 * suite tlb with `compare: {alpha: STRICT_ALPHA}`, the others with no
 * configuration, under the default rules as t0020's suite tlb has them. */
static int make_docs(struct strbuf *err)
{
	char tlb[] = "tlb";
	struct cfg_suite strict = { .name = tlb };
	struct lab_config strict_cfg = { .suites = &strict, .nsuites = 1 };
	struct strbuf db = STRBUF_INIT;
	size_t d;
	int r;

	compare_rules_default(&strict.rules);
	strict.rules.alpha = STRICT_ALPHA;
	/* the daemon's migrations make the store, the seed fills it */
	store_fixture_open(&docs.sf, "report");
	store_close(docs.sf.st);
	docs.sf.st = NULL;
	strbuf_addf(&db, "%s/t.db", docs.sf.dir);
	r = seed(db.buf, err);
	if (r == 0)
		r = store_open(db.buf, &docs.sf.st, err);
	for (d = 0; r == 0 && d < DOC_MAX; d++) {
		struct strbuf why = STRBUF_INIT;

		r = read_docs(docs.sf.st, d == DOC_JOB1_STRICT ? &strict_cfg : NULL, doc_job[d], &docs.job[d],
			      &docs.cmp[d], &why);
		if (r < 0)
			strbuf_seterr(err, "job %lld: %s", (long long)doc_job[d], why.buf);
		strbuf_release(&why);
	}
	strbuf_release(&db);
	return r;
}

/* A copy of document d's job or comparison, the caller's to change and
 * decref; made on first use, and a test fails when they cannot be. */
static json_t *doc_of(enum doc d, int cmp)
{
	struct strbuf err = STRBUF_INIT;

	if (!docs.tried) {
		docs.tried = 1;
		/* what the next tests say when this one fails inside make_docs */
		strbuf_addstr(&docs.why, "the documents of the seeded jobs could not be made (see the first test)");
		if (make_docs(&err) < 0) {
			strbuf_reset(&docs.why);
			strbuf_addf(&docs.why, "the documents of the seeded jobs: %s", err.buf);
		} else {
			strbuf_reset(&docs.why);
		}
		strbuf_release(&err);
	}
	if (docs.why.len)
		fail_msg("%s", docs.why.buf);
	return json_deep_copy(cmp ? docs.cmp[d] : docs.job[d]);
}

#define job_doc(d) doc_of(d, 0)
#define cmp_doc(d) doc_of(d, 1)

static int docs_teardown(void **state)
{
	size_t d;

	(void)state;
	for (d = 0; d < DOC_MAX; d++) {
		json_decref(docs.job[d]);
		json_decref(docs.cmp[d]);
	}
	if (docs.sf.dir[0])
		store_fixture_close(&docs.sf);
	strbuf_release(&docs.why);
	return 0;
}

/* The "comparison" of a fixture file; caller decrefs. */
static json_t *load(const char *rel)
{
	struct strbuf sb = STRBUF_INIT;
	json_error_t jerr;
	json_t *root, *v;

	fixture_read(&sb, rel);
	root = json_loadb(sb.buf, sb.len, 0, &jerr);
	if (!root)
		fail_msg("fixture %s: %s", rel, jerr.text);
	v = json_incref(json_object_get(root, "comparison"));
	if (!v)
		fail_msg("fixture %s has no \"comparison\"", rel);
	json_decref(root);
	strbuf_release(&sb);
	return v;
}

/* ---- reading the documents, and their numbers as the report writes them ---- */

static const char *str_of(const json_t *o, const char *key)
{
	const char *s = jsonget_str(o, key);

	if (!s)
		fail_msg("no string \"%s\" in the document", key);
	return s;
}

/* o[key], or o[key][sub] */
static double num_of(const json_t *o, const char *key, const char *sub)
{
	const json_t *v = json_object_get(o, key);

	if (sub)
		v = json_object_get(v, sub);
	if (!json_is_number(v))
		fail_msg("no number \"%s%s%s\" in the document", key, sub ? "." : "", sub ? sub : "");
	return json_number_value(v);
}

/* The report's formats (report_format.c), written out again here: a
 * change "+1.5%" (whole percents from 100%); p in two significant digits,
 * as an exponent below 0.001; a value in full from 1000 to 10^7, with 1
 * or 2 decimals below; a spread "+- 0.3%". */
static const char *pct_text(char *buf, size_t n, double v)
{
	snprintf(buf, n, fabs(v) >= 100 ? "%+.0f%%" : "%+.1f%%", v);
	return buf;
}

static const char *p_text(char *buf, size_t n, double p)
{
	snprintf(buf, n, p >= 0.001 ? "%.2g" : "%.0e", p);
	return buf;
}

static const char *value_text(char *buf, size_t n, double v)
{
	double a = fabs(v);

	if (v == 0 || a >= 1e7 || a < 1)
		fail_msg("value_text: %g is outside the values it knows", v);
	snprintf(buf, n, a >= 1000 ? "%.0f" : a >= 100 ? "%.1f" : "%.2f", v);
	return buf;
}

/* "1213025 +- 0.5%": a side's median and spread in a table row */
static const char *side_text(char *buf, size_t n, const json_t *side)
{
	snprintf(buf, n, "%.0f +-%4.1f%%", num_of(side, "center", NULL), num_of(side, "spread_pct", NULL));
	return buf;
}

/* "mprotect mode=threads size=64K workers=4": a row's case in words */
static void add_case(struct strbuf *sb, const json_t *row)
{
	const char *pt = str_of(row, "params_text");

	strbuf_addstr(sb, str_of(row, "workload"));
	while (*pt) {
		size_t n = strcspn(pt, " ");

		if (strncmp(pt, "workload=", 9))
			strbuf_addf(sb, " %.*s", (int)n, pt);
		pt += n + (pt[n] == ' ');
	}
}

/* cmocka cuts long messages: the report goes to stderr whole */
static const char *show(const char *text)
{
	fprintf(stderr, "---- the report ----\n%s---- end of the report ----\n", text);
	return " (the report is above)";
}

/* Every line at most 72 columns of valid UTF-8, no control characters
 * but the newlines, no trailing spaces, a newline at the end. */
static void assert_shape(const char *text)
{
	size_t len = strlen(text), i = 0, line = 1, start = 0;

	assert_true(len > 0);
	assert_int_equal(text[len - 1], '\n');
	while (i < len) {
		unsigned cp;
		int n = strbuf_utf8_decode(text + i, len - i, &cp);

		if (n < 0)
			fail_msg("line %zu: not UTF-8 at byte %zu:\n%s", line, i, text);
		if (cp == '\n') {
			if (strbuf_utf8_width(text + start, i - start) > REPORT_WIDTH)
				fail_msg("line %zu is %zu columns wide:\n%.*s", line,
					 strbuf_utf8_width(text + start, i - start), (int)(i - start), text + start);
			if (i > start && text[i - 1] == ' ')
				fail_msg("line %zu ends with a space: \"%.*s\"", line, (int)(i - start), text + start);
			line++;
			start = i + 1;
		} else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || (cp >= 0x2028 && cp <= 0x202e)) {
			fail_msg("line %zu: control character U+%04X", line, cp);
		}
		i += (size_t)n;
	}
}

static char *report(const json_t *job, const json_t *cmp)
{
	struct strbuf out = STRBUF_INIT, again = STRBUF_INIT, err = STRBUF_INIT;

	if (report_text(job, cmp, &out, &err) < 0)
		fail_msg("report_text: %s", err.buf);
	assert_shape(out.buf);
	/* a pure function: the same documents, the same text */
	assert_int_equal(report_text(job, cmp, &again, &err), 0);
	assert_string_equal(out.buf, again.buf);
	strbuf_release(&again);
	strbuf_release(&err);
	return strbuf_detach(&out, NULL);
}

/* Fails unless the needles occur in text in this order. */
static void assert_in_order(const char *text, const char *const *needles, size_t n)
{
	const char *at = text;
	size_t i;

	for (i = 0; i < n; i++) {
		const char *p = strstr(at, needles[i]);

		if (!p)
			fail_msg("\"%s\" missing%s%s", needles[i], strstr(text, needles[i]) ? " after the one before" : "",
				 show(text));
		at = p + strlen(needles[i]);
	}
}

/* Fails unless some line of text is exactly line. */
static void assert_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	const char *p = text;

	while ((p = strstr(p, line))) {
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return;
		p++;
	}
	fail_msg("no line \"%s\"%s", line, show(text));
}

/* text with its line breaks and indents taken out, for what a paragraph
 * says wherever it wraps; caller frees */
static char *flat(const char *text)
{
	struct strbuf sb = STRBUF_INIT;

	for (; *text; text++) {
		if (*text == ' ' || *text == '\n') {
			if (sb.len && sb.buf[sb.len - 1] != ' ')
				strbuf_addch(&sb, ' ');
			continue;
		}
		strbuf_addch(&sb, *text);
	}
	return strbuf_detach(&sb, NULL);
}

#define assert_has(text, needle) do {						\
	if (!strstr(text, needle))						\
		fail_msg("the report has no \"%s\"%s", needle, show(text));	\
} while (0)

#define assert_says(text, words) do {						\
	char *flat_ = flat(text);						\
	if (!strstr(flat_, words))						\
		fail_msg("the report does not say \"%s\"%s", words, show(text));	\
	free(flat_);								\
} while (0)

/* Fails unless one line of text holds the n needles, in order. */
static void assert_row(const char *text, const char *const *needles, size_t n)
{
	const char *l = text;

	while (*l) {
		const char *end = strchr(l, '\n'), *at = l;
		size_t i;

		if (!end)
			end = l + strlen(l);
		for (i = 0; i < n; i++) {
			const char *p = strstr(at, needles[i]);

			if (!p || p + strlen(needles[i]) > end)
				break;
			at = p + strlen(needles[i]);
		}
		if (i == n)
			return;
		l = *end ? end + 1 : end;
	}
	fail_msg("no line with \"%s\" ... \"%s\"%s", needles[0], needles[n - 1], show(text));
}

static const json_t *row_of(const json_t *cmp, const char *metric, const char *params_text)
{
	const json_t *r;
	size_t i;

	json_array_foreach(json_object_get(cmp, "rows"), i, r)
		if (!strcmp(jsonget_str(r, "metric"), metric) &&
		    !strcmp(jsonget_str(r, "params_text"), params_text))
			return r;
	fail_msg("no row %s (%s) in the comparison", metric, params_text);
	return NULL;
}

/* The comparison's entry of list (its "tlb", or its profile's "symbols")
 * whose key is value. */
static const json_t *entry_of(const json_t *list, const char *key, const char *value)
{
	const json_t *e;
	size_t i;

	json_array_foreach(list, i, e)
		if (!strcmp(jsonget_str(e, key) ?: "", value))
			return e;
	fail_msg("no entry %s=%s in the comparison", key, value);
	return NULL;
}

/* How many headline rows the comparison's summary counts with verdict v. */
static size_t headline_count(const json_t *cmp, const char *v)
{
	const json_t *sum = json_object_get(cmp, "summary");
	const json_t *n = json_object_get(sum, v);

	if (json_is_array(n))
		return json_array_size(n);
	if (!json_is_integer(n))
		fail_msg("the summary has no count of \"%s\"", v);
	return (size_t)json_integer_value(n);
}

/* "6.1.0-tlblab, build b00000000000, commit a1b2c3d4e5a1," of side's build
 * in the comparison's provenance */
static void add_build(struct strbuf *sb, const json_t *cmp, const char *side)
{
	const json_t *pv = json_object_get(json_object_get(cmp, "provenance"), side);
	const json_t *b = entry_of(json_object_get(pv, "builds"), "side", side);

	strbuf_addf(sb, "%s, build %.12s, commit %.12s,", str_of(json_object_get(b, "meta"), "kernel_release"),
		    str_of(b, "build_id"), str_of(b, "commit"));
}

/* A TLB table line of the report (report_tables.c tlb_line). */
static void add_tlb_line(struct strbuf *sb, const char *name, double b, double p, const char *verdict)
{
	char vb[32], vp[32], ch[32];

	strbuf_addf(sb, "    %-22s %10s %10s %8s  %s\n", name, value_text(vb, sizeof(vb), b),
		    value_text(vp, sizeof(vp), p), pct_text(ch, sizeof(ch), (p / b - 1) * 100), verdict);
}

#define W4 "mode=threads size=64K workers=4 workload=mprotect"
#define W1 "mode=threads size=64K workers=1 workload=mprotect"
#define OPS "mprotect.ops_per_sec"
#define HEAD_PADJ "              base           patched %change      p  p_adj  verdict"

/* The row of the summary's first entry of list ("regressions"): the
 * largest change of that verdict among the headline rows. */
static const json_t *summary_top(const json_t *cmp, const char *list)
{
	const json_t *top = json_array_get(json_object_get(json_object_get(cmp, "summary"), list), 0), *r;
	size_t i;

	if (!top)
		fail_msg("the summary has no %s", list);
	json_array_foreach(json_object_get(cmp, "rows"), i, r)
		if (json_equal(json_object_get(r, "spec"), json_object_get(top, "spec")) &&
		    json_equal(json_object_get(r, "case"), json_object_get(top, "case")) &&
		    !strcmp(str_of(r, "metric"), str_of(top, "metric")))
			return r;
	fail_msg("no row of the summary's first of %s", list);
	return NULL;
}

#endif
