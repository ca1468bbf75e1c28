/*
 * daemon/report: the text of `tlblab report` and GET .../report.txt, on the
 * documents the daemon serves, made by the daemon's own code when the test
 * runs: a store made by its migrations (store_open) and filled by
 * tests/web/seed.py client, the jobs t0020's daemon serves (1 an A/B job
 * with regressions, TLB counters and profiles; 2 one whose patched build
 * failed before anything ran; 4 one that failed with a spec failing on the
 * patched side), read as GET /api/v1/jobs/N/report.txt reads them: the
 * comparison (comparison_cache_get, under the default rules, those of
 * t0020's suite tlb), then the job (store_job_json). Job 1 is compared
 * once more under a suite whose alpha none of its p-values reaches once
 * Holm has adjusted them, for an inconclusive verdict. What a check
 * expects is either what the seed put in (subjects, names, failures) or
 * the document's own numbers and verdicts, never a number copied from one.
 *
 * One document is a file: tests/fixtures/report/comparison1-before-p-adj.json
 * is job 1's comparison by an older daemon, from before the comparison had
 * adjusted p-values, detectable changes and a design (issue 11), which the
 * report must still read. Tests that need a field a document lacks add it
 * to a copy. Every report must keep to 72 columns of clean UTF-8 whatever
 * the documents hold.
 */
#include "testlib.h"
#include "fixture_store.h"
#include "fixture_report.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <sys/wait.h>

#include "compare.h"
#include "comparison_cache.h"
#include "config.h"
#include "jsonget.h"
#include "report.h"
#include "store.h"
#include "util.h"
#include "banned.h"

/* Job 1 as the daemon answers for it: its largest headline regression
 * opens the report, then each section in turn, with the document's
 * numbers. */
static void test_regression(void **state)
{
	json_t *job = job_doc(DOC_JOB1), *cmp = cmp_doc(DOC_JOB1);
	const json_t *top = summary_top(cmp, "regressions"), *same = row_of(cmp, OPS, W1);
	const json_t *tlb = entry_of(json_object_get(cmp, "tlb"), "params_text", W4), *ctr, *sym, *still = NULL;
	size_t more = headline_count(cmp, "regressions") - 1, i;
	long long boots = (long long)num_of(job, "boots", NULL);
	struct strbuf want = STRBUF_INIT, opening = STRBUF_INIT, jobline = STRBUF_INIT, verdict = STRBUF_INIT;
	struct strbuf base = STRBUF_INIT, patched = STRBUF_INIT, patch = STRBUF_INIT, boots_line = STRBUF_INIT;
	char b[32], p[32], ch[32], pv[32], pa[32], lo[32], hi[32];
	char *text;

	(void)state;
	text = report(job, cmp);
	/* what was compared, in the opening lines, then each section in turn */
	strbuf_addf(&opening, "tlblab noticed a %s regression of %s (", pct_text(ch, sizeof(ch),
		    num_of(top, "change_pct", NULL)), str_of(top, "metric"));
	add_case(&opening, top);
	if (more)
		strbuf_addf(&opening, ") and %zu more headline regression%s on:", more, more == 1 ? "" : "s");
	else
		strbuf_addstr(&opening, ") on:");
	assert_says(text, opening.buf);
	strbuf_addf(&patch, "  patch:     %s\n", str_of(job, "patch_subject"));
	strbuf_addf(&jobline, "  job:       %lld, suite %s, submitted by %s; done ",
		    (long long)num_of(job, "id", NULL), str_of(job, "suite"), str_of(job, "submitter"));
	strbuf_addf(&verdict, "  verdict:   %s; headline: %zu regression%s, %zu same; other metrics:",
		    str_of(job, "verdict"), more + 1, more ? "s" : "", headline_count(cmp, "same"));
	strbuf_addf(&boots_line, "  boots:     %lld per side,",
		    (long long)num_of(json_object_get(json_object_get(cmp, "provenance"), "boots"), "base", NULL));
	strbuf_addstr(&base, "  base:      ");
	add_build(&base, cmp, "base");
	strbuf_addstr(&patched, "  patched:   ");
	add_build(&patched, cmp, "patched");
	{
		const char *order[] = {
			"tlblab report of job 1\n", "tlblab noticed a ", patch.buf,
			"  source:    a patch pasted with the job\n",
			"  base:      v6.1-debian of tree linux, commit a1b2c3d4e5a1\n", jobline.buf, verdict.buf,
			"machine and kernels\n", "  machines:  m1\n", boots_line.buf, base.buf, patched.buf,
			"  suite:     tlb: mprotect\n",
			"headline metrics\n", "other metrics that moved\n", "TLB shootdowns\n", "profile\n",
			"to reproduce\n",
		};

		assert_in_order(text, order, ARRAY_SIZE(order));
	}
	/* the largest regression's row: the document's medians, spreads,
	 * change, p and adjusted p, by Holm over the headline rows */
	assert_string_equal(str_of(top, "p_adj_method"), "holm");
	assert_says(text, "p_adj: p adjusted over the headline rows by Holm (family-wise)");
	assert_line(text, HEAD_PADJ);
	/* each row says its class, and the table says what the classes are */
	strbuf_addf(&want, "%s [%s] (%s), ", str_of(top, "metric"), str_of(top, "unit"), str_of(top, "class"));
	add_case(&want, top);
	assert_says(text, want.buf);
	assert_string_equal(str_of(top, "class"), "time");
	assert_says(text, "classes: work: instructions per operation, the emulator's (TCG plugin, not hardware cycles) or on a real machine the CPU's (perf)");
	/* and what each class saw, in words */
	strbuf_reset(&want);
	strbuf_addf(&want, "time: %s", str_of(json_object_get(json_object_get(cmp, "by_class"), "time"), "text"));
	assert_says(text, want.buf);
	{
		const char *cells[] = {
			side_text(b, sizeof(b), json_object_get(top, "base")),
			side_text(p, sizeof(p), json_object_get(top, "patched")),
			pct_text(ch, sizeof(ch), num_of(top, "change_pct", NULL)),
			p_text(pv, sizeof(pv), num_of(top, "p", NULL)),
			p_text(pa, sizeof(pa), num_of(top, "p_adj", NULL)), "regression",
		};

		assert_row(text, cells, ARRAY_SIZE(cells));
	}
	strbuf_reset(&want);
	strbuf_addf(&want, "  regression\n    95%% CI of the change %s to %s",
		    pct_text(lo, sizeof(lo), json_number_value(json_array_get(json_object_get(top, "ci"), 0))),
		    pct_text(hi, sizeof(hi), json_number_value(json_array_get(json_object_get(top, "ci"), 1))));
	assert_has(text, want.buf);
	/* the row that stayed the same, within its own margin */
	assert_string_equal(str_of(same, "verdict"), "same");
	strbuf_reset(&want);
	strbuf_addf(&want, "the same within +-%.3g%% (equivalence interval ",
		    fmin(num_of(same, "margin_pct", NULL), num_of(same, "min_change_pct", NULL)));
	assert_says(text, want.buf);
	/* TLB: the shootdowns and the counter of the case with the most
	 * workers, as the document has them */
	strbuf_reset(&want);
	add_tlb_line(&want, "shootdowns/kop", num_of(json_object_get(tlb, "shootdowns_per_kop"), "base", NULL),
		     num_of(json_object_get(tlb, "shootdowns_per_kop"), "patched", NULL),
		     str_of(json_object_get(tlb, "shootdowns_per_kop"), "verdict"));
	ctr = entry_of(json_object_get(tlb, "counters"), "name", "interrupts.TLB");
	add_tlb_line(&want, "interrupts.TLB/s", num_of(json_object_get(ctr, "base"), "per_sec", NULL),
		     num_of(json_object_get(ctr, "patched"), "per_sec", NULL), str_of(ctr, "verdict"));
	assert_has(text, want.buf);
	/* profile: the symbol that moved most, and one that moved by less
	 * than half a point is left out */
	sym = json_array_get(json_object_get(json_object_get(cmp, "profile_diff"), "symbols"), 0);
	strbuf_reset(&want);
	strbuf_addf(&want, "    %-34s %7.2f %8.2f %+8.2f\n", str_of(sym, "symbol"), num_of(sym, "base_self", NULL),
		    num_of(sym, "patched_self", NULL), num_of(sym, "delta", NULL));
	assert_has(text, want.buf);
	json_array_foreach(json_object_get(json_object_get(cmp, "profile_diff"), "symbols"), i, sym)
		if (fabs(num_of(sym, "delta", NULL)) < 0.5)
			still = sym;
	assert_non_null(still);
	assert_null(strstr(text, str_of(still, "symbol")));
	strbuf_reset(&want);
	strbuf_addf(&want, "  tlblab submit --suite tlb --tree linux --base v6.1-debian \\\n"
		    "      --patch 0001-x86-mm-tlb-batch-remote-flushes.patch --boots %lld \\\n"
		    "      --machines m1 --wait\n  tlblab compare 1\n", boots);
	assert_has(text, want.buf);
	assert_null(strstr(text, "what failed"));
	free(text);
	strbuf_release(&want);
	strbuf_release(&opening);
	strbuf_release(&jobline);
	strbuf_release(&verdict);
	strbuf_release(&base);
	strbuf_release(&patched);
	strbuf_release(&patch);
	strbuf_release(&boots_line);
	json_decref(job);
	json_decref(cmp);
}

/* Job 1's comparison as an older daemon sent it: no p_adj, no margin or
 * detectable change per row, no design; the report reads it with the job
 * as today's daemon sends it (its fields have not changed since). */
static void test_older_daemon(void **state)
{
	json_t *job = job_doc(DOC_JOB1), *cmp = load("report/comparison1-before-p-adj.json");
	const json_t *row = row_of(cmp, OPS, W4);
	char b[32], p[32], ch[32], pv[32], band[64];
	char *text;

	(void)state;
	assert_null(json_object_get(row, "p_adj"));
	assert_null(json_object_get(cmp, "design"));
	text = report(job, cmp);
	{
		const char *cells[] = {
			side_text(b, sizeof(b), json_object_get(row, "base")),
			side_text(p, sizeof(p), json_object_get(row, "patched")),
			pct_text(ch, sizeof(ch), num_of(row, "change_pct", NULL)),
			p_text(pv, sizeof(pv), num_of(row, "p", NULL)), "regression",
		};

		assert_row(text, cells, ARRAY_SIZE(cells));
	}
	/* no p_adj in this comparison: no column for it */
	assert_line(text, "              base           patched %change      p  verdict");
	assert_null(strstr(text, "p_adj"));
	/* a row's margin is the rules' band */
	snprintf(band, sizeof(band), "the same within +-%.3g%% (equivalence interval ",
		 num_of(json_object_get(cmp, "rules"), "same_band", NULL) * 100);
	assert_says(text, band);
	assert_null(strstr(text, "design:"));
	free(text);
	json_decref(job);
	json_decref(cmp);
}

static void test_failed_before_anything_ran(void **state)
{
	json_t *job = job_doc(DOC_JOB2), *cmp = cmp_doc(DOC_JOB2);
	struct strbuf patch = STRBUF_INIT;
	char *text;

	(void)state;
	assert_int_equal(json_array_size(json_object_get(cmp, "rows")), 0);
	text = report(job, cmp);
	assert_has(text, "tlblab job 2 failed: build: make exited 2:");
	assert_says(text, "(a result of the patch, not a lab problem). Nothing ran on both sides, so nothing is "
		    "compared. It tested:");
	assert_line(text, "  verdict:   none (the job failed)");
	strbuf_addf(&patch, "  patch:     %s", str_of(job, "patch_subject"));
	assert_line(text, patch.buf);
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
	strbuf_release(&patch);
	json_decref(job);
	json_decref(cmp);
}

/* An mbox's series: after the source, the count, then each patch in the
 * order git am applied them */
static void test_series(void **state)
{
	json_t *job = job_doc(DOC_JOB2), *cmp = cmp_doc(DOC_JOB2);
	char *text;

	(void)state;
	json_object_set_new(job, "patches", json_pack("{s:s,s:[s,s,s]}", "cover", "mm: batch flushes", "patches",
						      "mm: one", "mm: two", "mm: three"));
	text = report(job, cmp);
	{
		const char *order[] = { "  source:", "  series:    3 patches, after a cover letter\n",
					"    1/3:     mm: one\n", "    2/3:     mm: two\n", "    3/3:     mm: three\n" };

		assert_in_order(text, order, ARRAY_SIZE(order));
	}
	free(text);
	json_decref(job);
	json_decref(cmp);
}

static void test_failed_with_rows(void **state)
{
	json_t *job = job_doc(DOC_JOB4), *cmp = cmp_doc(DOC_JOB4);
	const json_t *mp = row_of(cmp, OPS, "mode=threads workers=2 workload=mprotect");
	const json_t *mr = row_of(cmp, "mremap.moves_per_sec", "workers=2 workload=mremap");
	const json_t *boots = json_object_get(json_object_get(cmp, "provenance"), "boots");
	struct strbuf want = STRBUF_INIT;
	char mpb[32], mpp[32], mrb[32], mrp[32], ch[32], pv[32], pa[32];
	char *text;

	(void)state;
	text = report(job, cmp);
	assert_has(text, "tlblab job 4 failed: workload: spec 1 (mremap) failed on patched");
	assert_says(text, "The tables below compare what ran on both sides before it ended. It tested:");
	strbuf_addf(&want, "  verdict:   none (the job failed); headline: %zu inconclusive; other",
		    headline_count(cmp, "inconclusive"));
	assert_line(text, want.buf);
	strbuf_reset(&want);
	strbuf_addf(&want, "  boots:     %lld base, %lld patched (the missing ones failed or did not run)",
		    (long long)num_of(boots, "base", NULL), (long long)num_of(boots, "patched", NULL));
	assert_has(text, want.buf);
	/* a row of one boot has no spread, and its value stays in its column */
	assert_int_equal(num_of(json_object_get(mr, "patched"), "n", NULL), 1);
	snprintf(mrp, sizeof(mrp), "%.0f", num_of(json_object_get(mr, "patched"), "center", NULL));
	snprintf(mpp, sizeof(mpp), "%.0f", num_of(json_object_get(mp, "patched"), "center", NULL));
	snprintf(mpb, sizeof(mpb), "%.0f", num_of(json_object_get(mp, "base"), "center", NULL));
	{
		const char *cells[] = {
			side_text(mrb, sizeof(mrb), json_object_get(mr, "base")), mrp,
			pct_text(ch, sizeof(ch), num_of(mr, "change_pct", NULL)),
			p_text(pv, sizeof(pv), num_of(mr, "p", NULL)), p_text(pa, sizeof(pa), num_of(mr, "p_adj", NULL)),
			"inconclusive",
		};

		assert_row(text, cells, ARRAY_SIZE(cells));
	}
	/* the value of one boot (no spread) lines up with the others */
	{
		struct strbuf a = STRBUF_INIT, c = STRBUF_INIT, d = STRBUF_INIT, e = STRBUF_INIT;

		strbuf_addf(&a, "%s ", mrp);
		strbuf_addf(&c, "%s ", mpp);
		strbuf_addf(&d, "%.0f ", num_of(json_object_get(mr, "base"), "center", NULL));
		strbuf_addf(&e, "%s ", mpb);
		assert_non_null(strstr(text, a.buf));
		assert_non_null(strstr(text, c.buf));
		assert_int_equal(strstr(text, a.buf) - strstr(text, c.buf), strstr(text, d.buf) - strstr(text, e.buf));
		strbuf_release(&a);
		strbuf_release(&c);
		strbuf_release(&d);
		strbuf_release(&e);
	}
	/* an inconclusive row says what it rules out, and why it could
	 * detect nothing */
	strbuf_reset(&want);
	strbuf_addf(&want, "changes beyond +-%.3g%% ruled out; %s", num_of(mr, "ruled_out_pct", NULL),
		    str_of(mr, "mde_note"));
	assert_says(text, want.buf);
	assert_says(text, "patched spec 1 (mremap), in the stages at seq 5, 11 (2 times): agent killed by signal 11 "
		    "(SIGSEGV) in mremap; console: BUG: unable to handle page fault for address: ffff888000000008 "
		    "notes");
	strbuf_reset(&want);
	strbuf_addf(&want, "notes\n\n  - base has %lld boots, patched %lld:", (long long)num_of(boots, "base", NULL),
		    (long long)num_of(boots, "patched", NULL));
	assert_has(text, want.buf);
	strbuf_reset(&want);
	strbuf_addf(&want, "--boots %lld --machines m1 --wait\n  tlblab compare 4\n",
		    (long long)num_of(job, "boots", NULL));
	assert_has(text, want.buf);
	free(text);
	strbuf_release(&want);
	json_decref(job);
	json_decref(cmp);
}

static void test_unavailable_rows(void **state)
{
	json_t *job = job_doc(DOC_JOB1), *cmp = cmp_doc(DOC_JOB1);
	json_t *row = (json_t *)row_of(cmp, OPS, W1);
	long long outliers = (long long)num_of(row, "outliers", NULL);
	struct strbuf want = STRBUF_INIT;
	char b[32];
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
	json_object_set_new(row, "p_adj", json_null());
	json_object_set_new(row, "ci", json_null());
	text = report(job, cmp);
	{
		const char *cells[] = { side_text(b, sizeof(b), json_object_get(row, "base")), " - ", " - ", " - ",
					" unavailable" };

		assert_row(text, cells, ARRAY_SIZE(cells));
	}
	strbuf_addstr(&want, "unavailable: the patched kernel lacks the counter: CONFIG_DEBUG_TLBFLUSH is not set, "
		      "so vmstat has no nr_tlb_* lines on that side");
	if (outliers)
		strbuf_addf(&want, "; %lld outlying boot%s flagged", outliers, outliers == 1 ? "" : "s");
	assert_says(text, want.buf);
	free(text);
	strbuf_release(&want);
	json_decref(job);
	json_decref(cmp);
}

/* A counter a side's kernel could not give (arm64's TLB interrupts and
 * tlb_flush tracepoint) is said under the TLB heading, with its reason. */
static void test_unavailable_counters(void **state)
{
	json_t *job = job_doc(DOC_JOB1), *cmp = cmp_doc(DOC_JOB1);
	char *text;

	(void)state;
	json_object_set_new(cmp, "unavailable", json_pack(
		"{s:{s:s,s:s},s:{s:s,s:s}}",
		"base", "interrupts.TLB", "no TLB row in /proc/interrupts: arm64 flushes TLBs with TLBI",
		"vmstat.nr_tlb_remote_flush", "not in /proc/vmstat",
		"patched", "interrupts.TLB", "no TLB row in /proc/interrupts: arm64 flushes TLBs with TLBI",
		"tlb_flush.*", "tlb:tlb_flush is x86's"));
	text = report(job, cmp);
	assert_says(text, "interrupts.TLB unavailable on both sides: no TLB row in /proc/interrupts: arm64 flushes "
		    "TLBs with TLBI");
	assert_says(text, "tlb_flush.* unavailable on patched: tlb:tlb_flush is x86's");
	assert_says(text, "vmstat.nr_tlb_remote_flush unavailable on base: not in /proc/vmstat");
	free(text);
	json_decref(job);
	json_decref(cmp);
}

/* The fields the comparison gained for issue 11 (notes/api11.md), as the
 * report reads them: each row's own p_adj, margin and detectable change,
 * and a design of two looks. */
static void test_adjusted_p_and_detectable_change(void **state)
{
	json_t *job = job_doc(DOC_JOB1), *cmp = cmp_doc(DOC_JOB1);
	json_t *w1 = (json_t *)row_of(cmp, OPS, W1);
	json_t *w4 = (json_t *)row_of(cmp, OPS, W4);
	json_t *r;
	size_t i;
	char want[128], ch[32], pv[32];
	char *text;

	(void)state;
	json_array_foreach(json_object_get(cmp, "rows"), i, r) {
		double p = jsonget_num_or(r, "p", 0);
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
	assert_line(text, HEAD_PADJ);
	assert_says(text, "p_adj: p adjusted over the headline rows by Holm (family-wise)");
	assert_says(text, "p_adj: p adjusted over those rows by Benjamini-Hochberg");
	snprintf(want, sizeof(want), " %s %6s  0.024  regression\n", pct_text(ch, sizeof(ch),
		 num_of(w4, "change_pct", NULL)), p_text(pv, sizeof(pv), num_of(w4, "p", NULL)));
	assert_has(text, want);
	assert_says(text, "changes beyond +-3.2% ruled out; could detect +-4.5%");
	snprintf(want, sizeof(want), "a change needs the adjusted p below %g",
		 num_of(json_object_get(cmp, "rules"), "alpha", NULL));
	assert_says(text, want);
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

/* Job 1 under an alpha no adjusted p of its headline rows reaches: its
 * shootdowns per kop quadrupled (a work row outside the headline), which
 * makes the job a regression; the opening says where, then the p_adj
 * column, what an inconclusive row rules out and why it could detect
 * nothing, the design. */
static void test_inconclusive(void **state)
{
	json_t *job = job_doc(DOC_JOB1_STRICT), *cmp = cmp_doc(DOC_JOB1_STRICT);
	const json_t *w4 = row_of(cmp, OPS, W4), *design = json_object_get(cmp, "design");
	const json_t *counters = json_object_get(json_object_get(cmp, "summary"), "counters");
	size_t inconclusive = headline_count(cmp, "inconclusive");
	struct strbuf want = STRBUF_INIT;
	char ch[32], pv[32], pa[32];
	char *text;

	(void)state;
	assert_string_equal(str_of(job, "verdict"), "regression");
	assert_string_equal(str_of(w4, "verdict"), "inconclusive");
	assert_true(inconclusive > 0);
	assert_true(num_of(counters, "work_regressions", NULL) > 0);
	text = report(job, cmp);
	assert_says(text, "tlblab noticed a regression in the kernel's work outside the headline metrics on:");
	strbuf_addf(&want, "verdict: regression; headline: %zu same, %zu inconclusive;",
		    headline_count(cmp, "same"), inconclusive);
	assert_says(text, want.buf);
	strbuf_reset(&want);
	strbuf_addf(&want, "design: %lld boots per side; look 1 of 1; alpha %g of %g (%s)",
		    (long long)num_of(design, "boots", NULL), num_of(design, "alpha", NULL),
		    num_of(design, "alpha_total", NULL), str_of(design, "spending"));
	assert_says(text, want.buf);
	assert_says(text, "p_adj: p adjusted over the headline rows by Holm (family-wise)");
	assert_line(text, HEAD_PADJ);
	{
		const char *cells[] = {
			pct_text(ch, sizeof(ch), num_of(w4, "change_pct", NULL)),
			p_text(pv, sizeof(pv), num_of(w4, "p", NULL)), p_text(pa, sizeof(pa), num_of(w4, "p_adj", NULL)),
			"inconclusive",
		};

		assert_row(text, cells, ARRAY_SIZE(cells));
	}
	strbuf_reset(&want);
	strbuf_addf(&want, "changes beyond +-%.3g%% ruled out; %s", num_of(w4, "ruled_out_pct", NULL),
		    str_of(w4, "mde_note"));
	assert_says(text, want.buf);
	/* among the other rows only counters per operation (work: Welch's t on
	 * 8 boots a side) reach this alpha: shootdowns per kop quadrupled */
	{
		const json_t *r;
		size_t i, moved = 0;

		json_array_foreach(json_object_get(cmp, "rows"), i, r) {
			const char *v = str_of(r, "verdict");

			if (json_is_true(json_object_get(r, "headline")) ||
			    (strcmp(v, "regression") && strcmp(v, "improvement") && strcmp(v, "changed")))
				continue;
			assert_string_equal(str_of(r, "class"), "work");
			assert_string_equal(str_of(r, "p_method"), "welch");
			moved++;
		}
		assert_int_equal(num_of(counters, "regressions", NULL) + num_of(counters, "improvements", NULL) +
				 num_of(counters, "changed", NULL), moved);
		assert_true(moved > 0);
	}
	assert_says(text, "other metrics that moved");
	free(text);
	strbuf_release(&want);
	json_decref(job);
	json_decref(cmp);
}
/* Strings from the patch, the agent and the logs: cleaned, and the width
 * holds whatever their length. */
static void test_hostile_strings(void **state)
{
	json_t *job = job_doc(DOC_JOB1), *cmp = cmp_doc(DOC_JOB1);
	json_t *row = (json_t *)row_of(cmp, OPS, W4), *sym;
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
	json_t *job = job_doc(DOC_JOB1), *cmp = json_pack("{s:[]}", "rows");
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

/* A comparison kept by a daemon built from other analysis code (its
 * rules key without this build's compare_source) is computed again, not
 * served; one kept under this build's key is served as kept. */
static void test_stale_comparison(void **state)
{
	json_t *cmp = cmp_doc(DOC_JOB1), *key_doc;
	struct compare_rules rules;
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	char *key;

	(void)state;
	compare_rules_default(&rules);
	key_doc = compare_rules_json(&rules);
	key = json_dumps(key_doc, JSON_COMPACT | JSON_SORT_KEYS);
	assert_int_equal(store_comparison_put(docs.sf.st, 1, key, "{\"verdict\":\"stale\"}", "same", 1), 0);
	free(key);
	assert_int_equal(comparison_cache_get(docs.sf.st, NULL, 1, &text, &err), 0);
	assert_null(strstr(text.buf, "stale"));
	assert_non_null(strstr(text.buf, str_of(cmp, "verdict")));

	json_object_set_new(key_doc, "compare_source", json_string(compare_source_id));
	key = json_dumps(key_doc, JSON_COMPACT | JSON_SORT_KEYS);
	assert_int_equal(store_comparison_put(docs.sf.st, 1, key, "{\"verdict\":\"kept\"}", "same", 1), 0);
	strbuf_reset(&text);
	assert_int_equal(comparison_cache_get(docs.sf.st, NULL, 1, &text, &err), 0);
	assert_string_equal(text.buf, "{\"verdict\":\"kept\"}");
	free(key);
	json_decref(key_doc);
	json_decref(cmp);
	strbuf_release(&text);
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regression),
		cmocka_unit_test(test_older_daemon),
		cmocka_unit_test(test_failed_before_anything_ran),
		cmocka_unit_test(test_series),
		cmocka_unit_test(test_failed_with_rows),
		cmocka_unit_test(test_unavailable_rows),
		cmocka_unit_test(test_unavailable_counters),
		cmocka_unit_test(test_adjusted_p_and_detectable_change),
		cmocka_unit_test(test_inconclusive),
		cmocka_unit_test(test_hostile_strings),
		cmocka_unit_test(test_minimal_and_refused),
		cmocka_unit_test(test_stale_comparison),
	};

	return cmocka_run_group_tests(tests, NULL, docs_teardown);
}
