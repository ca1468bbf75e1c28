/*
 * daemon/report: the text of `tlblab report` and GET .../report.txt. The
 * fixtures under tests/fixtures/report are a daemon's own answers
 * (GET /api/v1/jobs/N and /comparison) for the jobs tests/web/seed.py
 * makes for the client's test: 1 an A/B job with regressions, TLB counters
 * and profiles; 2 one whose patched build failed before anything ran; 4
 * one that failed with a spec failing on the patched side. Those are a
 * daemon's from before the comparison had adjusted p-values (an older
 * daemon's answer, which the report must still read); *-holm.json are
 * job 1's under the rules that adjust them (Holm over the headline rows,
 * which at 5 boots against 5 leaves the regressions inconclusive), and
 * fields that fixture lacks (a detectable change, two looks) are added to
 * copies. Every report must keep to 72 columns of clean UTF-8 whatever the
 * documents hold.
 */
#include "testlib.h"

#include <jansson.h>
#include <math.h>

#include "report.h"
#include "util.h"
#include "banned.h"

/* The "job" or "comparison" member of a fixture file; caller decrefs. */
static json_t *load(const char *rel, const char *member)
{
	struct strbuf sb = STRBUF_INIT;
	json_error_t jerr;
	json_t *root, *v;

	fixture_read(&sb, rel);
	root = json_loadb(sb.buf, sb.len, 0, &jerr);
	if (!root)
		fail_msg("fixture %s: %s", rel, jerr.text);
	v = json_incref(json_object_get(root, member));
	if (!v)
		fail_msg("fixture %s has no \"%s\"", rel, member);
	json_decref(root);
	strbuf_release(&sb);
	return v;
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
		if (!strcmp(json_string_value(json_object_get(r, "metric")), metric) &&
		    !strcmp(json_string_value(json_object_get(r, "params_text")), params_text))
			return r;
	fail_msg("no row %s (%s) in the fixture", metric, params_text);
	return NULL;
}

#define W4 "mode=threads size=64K workers=4 workload=mprotect"
#define W1 "mode=threads size=64K workers=1 workload=mprotect"

static void test_regression(void **state)
{
	json_t *job = load("report/job1.json", "job"), *cmp = load("report/comparison1.json", "comparison");
	const json_t *row = row_of(cmp, "mprotect.ops_per_sec", W4);
	struct strbuf want = STRBUF_INIT;
	char *text;

	(void)state;
	text = report(job, cmp);
	/* what was compared, in the opening lines, then each section in turn */
	{
		const char *order[] = {
			"tlblab report of job 1\n",
			"regression of mprotect.ops_per_sec (mprotect", "workers=4) and 1 more headline regression on:",
			"  patch:     x86/mm/tlb: batch remote flushes\n",
			"  source:    a patch pasted with the job\n",
			"  base:      v6.1-debian of tree linux, commit a1b2c3d4e5a1\n",
			"  job:       1, suite tlb, submitted by alice; done ",
			"  verdict:   regression; headline: 2 regressions, 1 same; other metrics:",
			"machine and kernels\n", "  machines:  m1\n", "  boots:     5 per side,",
			"  base:      6.1.0-tlblab, build b00000000000, commit a1b2c3d4e5a1,",
			"  patched:   6.1.0-tlblab+, build p00000000000, commit f6e5d4c3b2f6,",
			"  suite:     tlb: mprotect\n",
			"headline metrics\n", "other metrics that moved\n", "TLB shootdowns\n", "profile\n",
			"to reproduce\n",
		};

		assert_in_order(text, order, ARRAY_SIZE(order));
	}
	/* the regressed row: the fixture's medians, spreads and change */
	strbuf_addf(&want, "  mprotect.ops_per_sec [ops/s], mprotect mode=threads size=64K workers=4");
	assert_line(text, want.buf);
	{
		char b[32], bs[32], p[32], ps[32], ch[32];
		const char *cells[] = { b, bs, p, ps, ch, "0.0079", "regression" };

		snprintf(b, sizeof(b), "%.0f", json_number_value(json_object_get(json_object_get(row, "base"), "center")));
		snprintf(bs, sizeof(bs), "+-%4.1f%%",
			 json_number_value(json_object_get(json_object_get(row, "base"), "spread_pct")));
		snprintf(p, sizeof(p), "%.0f", json_number_value(json_object_get(json_object_get(row, "patched"), "center")));
		snprintf(ps, sizeof(ps), "+-%4.1f%%",
			 json_number_value(json_object_get(json_object_get(row, "patched"), "spread_pct")));
		snprintf(ch, sizeof(ch), "%+.1f%%", json_number_value(json_object_get(row, "change_pct")));
		assert_row(text, cells, ARRAY_SIZE(cells));
	}
	assert_has(text, "  regression\n    95% CI of the change -15.9% to -14.4%");
	assert_line(text, "              base           patched %change      p  verdict");
	assert_has(text, "the same within +-2% (equivalence interval ");
	/* no p_adj in this comparison: no column for it */
	assert_null(strstr(text, "p_adj"));
	/* TLB and profile: the fixture's biggest movers */
	assert_has(text, "    shootdowns/kop              19.33      89.73    +364%  regression\n");
	assert_has(text, "    interrupts.TLB/s            13471      53001    +293%  regression\n");
	assert_has(text, "    flush_tlb_func                        8.96    15.51    +6.55\n");
	assert_null(strstr(text, "change_protection_range"));	/* moved by 0.02 points */
	assert_has(text, "  tlblab submit --suite tlb --tree linux --base v6.1-debian \\\n"
			"      --patch 0001-x86-mm-tlb-batch-remote-flushes.patch --boots 5 \\\n"
			"      --machines m1 --wait\n  tlblab compare 1\n");
	assert_null(strstr(text, "what failed"));
	free(text);
	strbuf_release(&want);
	json_decref(job);
	json_decref(cmp);
}

static void test_failed_before_anything_ran(void **state)
{
	json_t *job = load("report/job2.json", "job"), *cmp = load("report/comparison2.json", "comparison");
	char *text;

	(void)state;
	text = report(job, cmp);
	assert_has(text, "tlblab job 2 failed: build: make exited 2:");
	assert_says(text, "(a result of the patch, not a lab problem). Nothing ran on both sides, so nothing is "
		    "compared. It tested:");
	assert_line(text, "  verdict:   none (the job failed)");
	assert_line(text, "  patch:     x86/mm/tlb: batch remote flushes (v2)");
	assert_line(text, "  boots:     none ran on either side");
	assert_line(text, "  patched:   no build");
	assert_line(text, "  no headline metric was compared");
	{
		const char *order[] = { "what failed (never averaged in)\n", "  the job: build: make exited 2:",
					"  base: no measured runs\n", "  patched: no measured runs\n", "to reproduce" };

		assert_in_order(text, order, ARRAY_SIZE(order));
	}
	assert_null(strstr(text, "other metrics that moved"));
	free(text);
	json_decref(job);
	json_decref(cmp);
}

static void test_failed_with_rows(void **state)
{
	json_t *job = load("report/job4.json", "job"), *cmp = load("report/comparison4.json", "comparison");
	char *text;

	(void)state;
	text = report(job, cmp);
	assert_has(text, "tlblab job 4 failed: workload: spec 1 (mremap) failed on patched");
	assert_says(text, "The tables below compare what ran on both sides before it ended. It tested:");
	assert_line(text, "  verdict:   none (the job failed); headline: 2 inconclusive; other");
	assert_has(text, "  boots:     2 base, 3 patched (the missing ones failed or did not run)");
	/* a row of one boot has no spread, and its value stays in its column */
	{
		const char *cells[] = { "199859 +- 0.3%", "160268", "-19.8%", "0.67", "inconclusive" };

		assert_row(text, cells, ARRAY_SIZE(cells));
		/* the value of one boot (no spread) lines up with the others */
		assert_int_equal(strstr(text, "160268 ") - strstr(text, "560921 "),
				 strstr(text, "199859 ") - strstr(text, "699412 "));
	}
	assert_has(text, "neither a clear change nor within +-2%");
	assert_says(text, "patched spec 1 (mremap), in the stages at seq 5, 11 (2 times): agent killed by signal 11 "
		    "(SIGSEGV) in mremap; console: BUG: unable to handle page fault for address: ffff888000000008 "
		    "notes");
	assert_has(text, "notes\n\n  - base has 2 boots, patched 3:");
	assert_has(text, "--boots 2 --machines m1 --wait\n  tlblab compare 4\n");
	free(text);
	json_decref(job);
	json_decref(cmp);
}

static void test_unavailable_rows(void **state)
{
	json_t *job = load("report/job1.json", "job"), *cmp = load("report/comparison1.json", "comparison");
	json_t *row = (json_t *)row_of(cmp, "mprotect.ops_per_sec", W1);
	char *text;

	(void)state;
	json_object_set_new(row, "verdict", json_string("unavailable"));
	json_object_set_new(row, "reason", json_string("the patched kernel lacks the counter: "
						       "CONFIG_DEBUG_TLBFLUSH is not set, so vmstat has no "
						       "nr_tlb_* lines on that side"));
	json_object_set_new(json_object_get(row, "patched"), "center", json_null());
	json_object_set_new(json_object_get(row, "patched"), "spread_pct", json_null());
	json_object_set_new(row, "change_pct", json_null());
	json_object_set_new(row, "p", json_null());
	json_object_set_new(row, "ci", json_null());
	text = report(job, cmp);
	{
		const char *cells[] = { "400002 +- 0.3%", " - ", " - ", " - ", " unavailable" };

		assert_row(text, cells, ARRAY_SIZE(cells));
	}
	assert_says(text, "unavailable: the patched kernel lacks the counter: CONFIG_DEBUG_TLBFLUSH is not set, so "
		    "vmstat has no nr_tlb_* lines on that side; 1 outlying boot flagged");
	free(text);
	json_decref(job);
	json_decref(cmp);
}

/* The fields the comparison gains for issue 11 (notes/api11.md). */
static void test_adjusted_p_and_detectable_change(void **state)
{
	json_t *job = load("report/job1.json", "job"), *cmp = load("report/comparison1.json", "comparison");
	json_t *w1 = (json_t *)row_of(cmp, "mprotect.ops_per_sec", W1);
	json_t *w4 = (json_t *)row_of(cmp, "mprotect.ops_per_sec", W4);
	json_t *r;
	size_t i;
	char *text;

	(void)state;
	json_array_foreach(json_object_get(cmp, "rows"), i, r) {
		double p = json_number_value(json_object_get(r, "p"));
		int headline = json_is_true(json_object_get(r, "headline"));

		if (!json_is_number(json_object_get(r, "p")))
			continue;
		json_object_set_new(r, "p_adj", json_real(fmin(1, p * (headline ? 3 : 20))));
		json_object_set_new(r, "p_adj_method", json_string(headline ? "holm" : "bh"));
		json_object_set_new(r, "margin_pct", json_real(3));
		json_object_set_new(r, "mde_pct", json_real(4.5));
	}
	json_object_set_new(w1, "verdict", json_string("inconclusive"));
	json_object_set_new(w1, "ruled_out_pct", json_real(3.2));
	json_object_set_new(w4, "p_adj", json_real(0.0238));
	json_object_set_new(cmp, "design", json_pack("{s:i,s:i,s:i,s:i,s:f,s:f,s:s}", "look", 2, "looks", 2, "boots", 5,
						       "max_boots", 9, "alpha", 0.0095, "alpha_total", 0.01,
						       "spending", "O'Brien-Fleming (Lan-DeMets)"));
	text = report(job, cmp);
	assert_line(text, "              base           patched %change      p  p_adj  verdict");
	assert_says(text, "p_adj: p adjusted over the headline rows by Holm (family-wise)");
	assert_says(text, "p_adj: p adjusted over those rows by Benjamini-Hochberg");
	assert_has(text, "  -15.4% 0.0079  0.024  regression\n");
	assert_says(text, "changes beyond +-3.2% ruled out; could detect +-4.5%");
	assert_says(text, "a change needs the adjusted p below 0.01");
	assert_says(text, "design: 5 boots per side, up to 9 while a headline metric is inconclusive; look 2 of 2; "
		    "alpha 0.0095 of 0.01 (O'Brien-Fleming (Lan-DeMets)) rules:");
	assert_has(text, " --max-boots 9 ");
	assert_has(text, " --boots 5 ");
	/* a row that could see no change says so, and why */
	json_object_set_new(w1, "mde_pct", json_null());
	json_object_set_new(w1, "mde_note", json_string("every boot gave the same value"));
	json_object_del(w1, "ruled_out_pct");
	free(text);
	text = report(job, cmp);
	assert_says(text, ": neither a clear change nor within +-3%; every boot gave the same value");
	free(text);
	json_decref(job);
	json_decref(cmp);
}

/* Job 1 under the rules that adjust p: the p_adj column, what an
 * inconclusive row rules out and why it could detect nothing, the design. */
static void test_holm(void **state)
{
	json_t *job = load("report/job1-holm.json", "job"), *cmp = load("report/comparison1-holm.json", "comparison");
	const json_t *w4 = row_of(cmp, "mprotect.ops_per_sec", W4);
	struct strbuf want = STRBUF_INIT;
	char *text;

	(void)state;
	assert_string_equal(json_string_value(json_object_get(w4, "verdict")), "inconclusive");
	text = report(job, cmp);
	assert_line(text, "tlblab could neither call a change nor rule one out in 2 headline");
	assert_says(text, "verdict: inconclusive; headline: 1 same, 2 inconclusive;");
	assert_says(text, "design: 5 boots per side; look 1 of 1; alpha 0.01 of 0.01 (one look: all of alpha)");
	assert_says(text, "p_adj: p adjusted over the headline rows by Holm (family-wise)");
	assert_line(text, "              base           patched %change      p  p_adj  verdict");
	{
		char pa[32];
		const char *cells[] = { "-15.4%", "0.0079", pa, "inconclusive" };

		snprintf(pa, sizeof(pa), "%.2g", json_number_value(json_object_get(w4, "p_adj")));
		assert_row(text, cells, ARRAY_SIZE(cells));
	}
	strbuf_addf(&want, "changes beyond +-%.3g%% ruled out; %s;",
		    json_number_value(json_object_get(w4, "ruled_out_pct")),
		    json_string_value(json_object_get(w4, "mde_note")));
	assert_says(text, want.buf);
	/* nothing moved among the counters once BH adjusted them */
	assert_null(strstr(text, "other metrics that moved"));
	free(text);
	strbuf_release(&want);
	json_decref(job);
	json_decref(cmp);
}

/* Strings from the patch, the agent and the logs: cleaned, and the width
 * holds whatever their length. */
static void test_hostile_strings(void **state)
{
	json_t *job = load("report/job1.json", "job"), *cmp = load("report/comparison1.json", "comparison");
	json_t *row = (json_t *)row_of(cmp, "mprotect.ops_per_sec", W4), *sym;
	struct strbuf url = STRBUF_INIT, name = STRBUF_INIT;
	char *text;
	int i;

	(void)state;
	json_object_set_new(job, "patch_subject", json_string("x86: \x1b[31mred\x1b[0m \xe2\x80\xae" "evil\r\nBcc: x"));
	strbuf_addstr(&url, "https://lore.kernel.org/all/");
	for (i = 0; i < 40; i++)
		strbuf_addstr(&url, "0123456789");
	strbuf_addstr(&url, "/raw");
	json_object_set_new(job, "patch_kind", json_string("url"));
	json_object_set_new(job, "patch_url", json_string(url.buf));
	for (i = 0; i < 9; i++)
		strbuf_addstr(&name, "tracepoints.");
	strbuf_addstr(&name, "a_metric_name_longer_than_any_line");
	json_object_set_new(row, "metric", json_string(name.buf));
	json_object_set_new(row, "note", json_string("a\ttab, a\nnewline and a bell\x07"));
	sym = json_array_get(json_object_get(json_object_get(cmp, "profile_diff"), "symbols"), 0);
	json_object_set_new(sym, "symbol", json_string("__pfx_a_very_long_symbol_name_that_a_compiler_made_up_for_a_clone.cold.isra.0"));
	json_array_append_new(json_object_get(cmp, "failed"),
			      json_pack("{s:s,s:{s:s}}", "side", "base", "reason", "why", "line\x1b]0;title\x07"));
	text = report(job, cmp);
	assert_has(text, "  patch:     x86: [31mred [0m evil Bcc: x\n");
	assert_says(text, "source: mbox fetched from https://lore.kernel.org/all/0123456789");
	assert_has(text, "      --url https://lore.kernel.org/all/0123456789");
	assert_says(text, "a tab, a newline and a bell");
	/* a reason that is not a string: compact JSON, whose escapes are text */
	assert_has(text, "  base: {\"why\":\"line\\u001B]0;title\\u0007\"}\n");
	assert_has(text, "__pfx_a_very_long_symbol_name");
	assert_has(text, "tracepoints.tracepoints.");
	free(text);
	strbuf_release(&url);
	strbuf_release(&name);
	json_decref(job);
	json_decref(cmp);
}

static void test_minimal_and_refused(void **state)
{
	json_t *job = load("report/job1.json", "job"), *cmp = json_pack("{s:[]}", "rows");
	json_t *run = json_pack("{s:i,s:s,s:s}", "id", 9, "kind", "run", "state", "done");
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	char *text;

	(void)state;
	/* a comparison with nothing but its rows (an older daemon's, or a
	 * hand-made one): the report says what it can */
	json_object_del(job, "patch_subject");
	json_object_set_new(job, "verdict", json_null());
	text = report(job, cmp);
	assert_line(text, "tlblab could compare none of the headline metrics on:");
	assert_line(text, "  patch:     (no subject)");
	assert_line(text, "  no headline metric was compared");
	assert_has(text, "--patch 0001-patch.patch");
	free(text);
	assert_int_equal(report_text(run, cmp, &out, &err), -1);
	assert_string_equal(err.buf, "report: not an A/B job");
	json_object_del(cmp, "rows");
	assert_int_equal(report_text(job, cmp, &out, &err), -1);
	assert_string_equal(err.buf, "report: the comparison has no rows");
	assert_int_equal(out.len, 0);
	strbuf_release(&out);
	strbuf_release(&err);
	json_decref(run);
	json_decref(job);
	json_decref(cmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regression),
		cmocka_unit_test(test_failed_before_anything_ran),
		cmocka_unit_test(test_failed_with_rows),
		cmocka_unit_test(test_unavailable_rows),
		cmocka_unit_test(test_adjusted_p_and_detectable_change),
		cmocka_unit_test(test_holm),
		cmocka_unit_test(test_hostile_strings),
		cmocka_unit_test(test_minimal_and_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
