/*
 * The report of an A/B job (report.h). It is read in a mail client, so it
 * is built for 72 columns: key-value lines and paragraphs are wrapped at
 * words (textwrap.h); a table row whose name does not fit its column puts
 * the name on a line of its own and the numbers on the next; a last pass
 * breaks any line that is still too long (a URL, a symbol without spaces),
 * so the width holds whatever the documents contain. Everything the
 * documents say comes from the patch, the agent or the lab's logs, and is
 * cleaned before it is written.
 *
 * The report is one document, written top to bottom in the order it
 * prints; its sections share the readers of the documents, number formats
 * and layout of report_format.c (report_int.h). This file holds the entry
 * and the sections in prose: the opening, the machine and kernels, what
 * failed, the notes and the command to reproduce the job; the tables
 * (headline and other metrics, TLB shootdowns, profile) are in
 * report_tables.c.
 */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_int.h"
#include "textwrap.h"
#include "util.h"
#include "banned.h"

#define FILE_NAME_MAX 52	/* git format-patch's subject part of a name */

/* ---- pieces of text ---- */

/* Whose failure a job's error is, in words; NULL when it says nothing. */
static const char *blame(const json_t *job)
{
	const json_t *e = json_object_get(job, "error"), *st;
	const char *class = jsonget_str(e, "class");
	long long sid = jsonget_int_or(e, "stage", -1);
	size_t i;

	if (!class)
		return NULL;
	if (!strcmp(class, "suite"))
		return "the suite fails on the base kernel too: not a result of the patch";
	if (!strcmp(class, "infra"))
		return "a problem of the lab, not of the patch";
	if (strcmp(class, "patch") && strcmp(class, "build") && strcmp(class, "boot") && strcmp(class, "workload"))
		return NULL;
	json_array_foreach(jsonget_array(job, "stages"), i, st)
		if (jsonget_int_or(st, "id", -2) == sid && jsonget_str(st, "side") &&
		    !strcmp(jsonget_str(st, "side"), "base") && strcmp(class, "patch"))
			return "a result of the base kernel, not of the patch";
	return "a result of the patch, not a lab problem";
}

/* Where the patched side came from. */
static void add_source(struct strbuf *sb, const json_t *job)
{
	const char *kind = jsonget_str(job, "patch_kind"), *url = jsonget_str(job, "patch_url");
	const char *ref = jsonget_str(job, "patch_ref");
	struct strbuf raw = STRBUF_INIT;

	if (kind && !strcmp(kind, "branch"))
		strbuf_addf(&raw, "branch %s of %s", ref ? ref : "?", url ? url : "?");
	else if (kind && !strcmp(kind, "url"))
		strbuf_addf(&raw, "mbox fetched from %s", url ? url : "?");
	else if (kind && !strcmp(kind, "patch"))
		strbuf_addstr(&raw, "a patch pasted with the job");
	else
		strbuf_addstr(&raw, kind ? kind : "unknown");
	report_add_clean(sb, raw.buf);
	strbuf_release(&raw);
}

/* An mbox's series, in the order git am applied it: "series: 3 patches,
 * after a cover letter", then "1/3: SUBJECT" a line. */
static void add_series(struct strbuf *out, const json_t *series)
{
	const json_t *list = json_object_get(series, "patches"), *p;
	struct strbuf s = STRBUF_INIT;
	char key[48];
	size_t i, n = json_array_size(list);

	if (!n)
		return;
	strbuf_addf(&s, "%zu patch%s%s", n, n == 1 ? "" : "es",
		    json_is_string(json_object_get(series, "cover")) ? ", after a cover letter" : "");
	report_kv(out, "series", s.buf);
	json_array_foreach(list, i, p) {
		strbuf_reset(&s);
		report_add_clean(&s, json_string_value(p) ?: "?");
		snprintf(key, sizeof(key), "  %zu/%zu", i + 1, n);
		report_kv(out, key, s.buf);
	}
	strbuf_release(&s);
}

/* The build of side `side` from the comparison's provenance: the daemon
 * gives each side {"job": JOB, "builds": [{"side", "build_id", "commit",
 * "config_hash", "compiler", "meta": {"kernelrelease"}}]}. */
static const json_t *side_build(const json_t *cmp, const char *side)
{
	const json_t *b;
	size_t i;

	json_array_foreach(jsonget_array(json_object_get(json_object_get(cmp, "provenance"), side), "builds"), i, b)
		if (!jsonget_str(b, "side") || !strcmp(jsonget_str(b, "side"), side))
			return b;
	return NULL;
}

/* "6.1.0-tlblab+, build p00000000000, commit f6e5d4c3b2f6, config 9c1e,
 * gcc 12.2.0" */
static void add_kernel(struct strbuf *sb, const json_t *cmp, const char *side)
{
	const json_t *b = side_build(cmp, side), *meta = json_object_get(b, "meta");
	const char *release = jsonget_str(meta, "kernelrelease") ?: jsonget_str(meta, "kernel_release");
	struct strbuf raw = STRBUF_INIT;
	const json_t *ids;

	if (!b) {
		ids = jsonget_array(json_object_get(json_object_get(cmp, "provenance"), "builds"), side);
		if (json_array_size(ids) && json_is_string(json_array_get(ids, 0)))
			strbuf_addf(&raw, "build %.12s", json_string_value(json_array_get(ids, 0)));
		else
			strbuf_addstr(&raw, "no build");
		report_add_clean(sb, raw.buf);
		strbuf_release(&raw);
		return;
	}
	if (release)
		strbuf_addf(&raw, "%s, ", release);
	strbuf_addf(&raw, "build %.12s", jsonget_str(b, "build_id") ?: "?");
	if (jsonget_str(b, "commit"))
		strbuf_addf(&raw, ", commit %.12s", jsonget_str(b, "commit"));
	if (jsonget_str(b, "config_hash"))
		strbuf_addf(&raw, ", config %.12s", jsonget_str(b, "config_hash"));
	if (jsonget_str(b, "compiler"))
		strbuf_addf(&raw, ", %s", jsonget_str(b, "compiler"));
	report_add_clean(sb, raw.buf);
	strbuf_release(&raw);
}

/* ---- the opening: what was compared, and what came of it ---- */

/* The headline row of verdict v with the largest |change|, and how many
 * headline rows have that verdict. */
static const json_t *top_row(const json_t *cmp, const char *v, size_t *ret_n)
{
	const json_t *row, *best = NULL;
	double c, bc = -1;
	size_t i;

	*ret_n = 0;
	json_array_foreach(jsonget_array(cmp, "rows"), i, row) {
		if (!is_headline(row) || !verdict_is(row, v))
			continue;
		(*ret_n)++;
		if (jsonget_num(row, "change_pct", &c) == 0 && fabs(c) > bc) {
			bc = fabs(c);
			best = row;
		} else if (!best) {
			best = row;
		}
	}
	return best;
}

static void add_counts(struct strbuf *sb, const json_t *cmp, int headline)
{
	static const char *const verdicts[][3] = {
		{ "regression", "regression", "regressions" }, { "improvement", "improvement", "improvements" },
		{ "changed", "changed", "changed" }, { "same", "same", "same" },
		{ "inconclusive", "inconclusive", "inconclusive" }, { "unavailable", "unavailable", "unavailable" },
	};
	const json_t *row;
	size_t i, k, n, shown = 0;

	for (k = 0; k < ARRAY_SIZE(verdicts); k++) {
		if (!headline && k >= 3)
			break;
		n = 0;
		json_array_foreach(jsonget_array(cmp, "rows"), i, row)
			if (is_headline(row) == headline && verdict_is(row, verdicts[k][0]))
				n++;
		if (n)
			strbuf_addf(sb, "%s%zu %s", shown++ ? ", " : "", n, verdicts[k][n == 1 ? 1 : 2]);
	}
	if (!shown)
		strbuf_addstr(sb, headline ? "no headline rows" : "none moved");
}

static void opening(struct report *r)
{
	const json_t *job = r->job, *cmp = r->cmp, *e = json_object_get(job, "error"), *row;
	const char *state = jsonget_str(job, "state") ?: "unknown";
	const char *verdict = jsonget_str(job, "verdict") ?: jsonget_str(cmp, "verdict") ?: "unavailable";
	struct strbuf s = STRBUF_INIT, v = STRBUF_INIT;
	char pct[32];
	double c;
	size_t n, nrows = json_array_size(jsonget_array(cmp, "rows"));

	strbuf_addf(r->out, "tlblab report of job %lld\n\n", r->id);
	if (!strcmp(state, "failed")) {
		strbuf_addf(&s, "tlblab job %lld failed: ", r->id);
		report_add_clean(&s, jsonget_str(e, "class") ?: "error");
		strbuf_addstr(&s, ": ");
		report_add_clean(&s, jsonget_str(e, "message") ?: "no message");
		if (blame(job))
			strbuf_addf(&s, " (%s)", blame(job));
		strbuf_addstr(&s, nrows ? ". The tables below compare what ran on both sides before it ended. "
				  "It tested:" : ". Nothing ran on both sides, so nothing is compared. It tested:");
	} else if (!strcmp(state, "cancelled")) {
		strbuf_addf(&s, "tlblab job %lld was cancelled before it finished; %s It tested:", r->id,
			    nrows ? "the tables below compare what ran on both sides before that." :
			    "nothing ran on both sides.");
	} else if (strcmp(state, "done")) {
		strbuf_addf(&s, "tlblab job %lld is ", r->id);
		report_add_clean(&s, state);
		strbuf_addstr(&s, "; the tables below compare what ran on both sides so far. It tests:");
	} else if ((!strcmp(verdict, "regression") || !strcmp(verdict, "improvement") ||
		    !strcmp(verdict, "changed")) && (row = top_row(cmp, verdict, &n))) {
		if (jsonget_num(row, "change_pct", &c) == 0) {
			report_fmt_pct(pct, sizeof(pct), c);
			strbuf_addf(&s, "tlblab noticed a %s %s of ", pct,
				    !strcmp(verdict, "changed") ? "change" : verdict);
		} else {
			strbuf_addf(&s, "tlblab noticed a %s of ", !strcmp(verdict, "changed") ? "change" : verdict);
		}
		report_add_clean(&s, jsonget_str(row, "metric") ?: "?");
		strbuf_addstr(&s, " (");
		report_add_case(&s, row);
		strbuf_addch(&s, ')');
		if (!strcmp(verdict, "changed"))
			strbuf_addstr(&s, ", a metric with no better or worse,");
		if (n > 1)
			strbuf_addf(&s, " and %zu more headline %s", n - 1,
				    !strcmp(verdict, "changed") ? "changes" : !strcmp(verdict, "regression") ?
				    (n == 2 ? "regression" : "regressions") : (n == 2 ? "improvement" : "improvements"));
		strbuf_addstr(&s, " on:");
	} else if (!strcmp(verdict, "regression") || !strcmp(verdict, "changed")) {
		/* no headline row says it: a work row outside the headline
		 * regressed (page walks, translations lost, shootdowns per op) */
		strbuf_addf(&s, "tlblab noticed a regression in the kernel's work outside the headline metrics%s on:",
			    !strcmp(verdict, "changed") ? ", where a headline metric improved," : "");
	} else if (!strcmp(verdict, "same")) {
		top_row(cmp, "same", &n);
		strbuf_addf(&s, "tlblab found %s the same, within the least change %s would call, on:",
			    n == 1 ? "the headline metric" : "the headline metrics", n == 1 ? "it" : "they");
	} else if (!strcmp(verdict, "inconclusive")) {
		top_row(cmp, "inconclusive", &n);
		strbuf_addf(&s, "tlblab could neither call a change nor rule one out in %zu headline "
			    "metric%s on:", n, n == 1 ? "" : "s");
	} else {
		strbuf_addstr(&s, "tlblab could compare none of the headline metrics on:");
	}
	report_para(r->out, "", 0, s.buf);
	strbuf_addch(r->out, '\n');

	strbuf_reset(&s);
	report_add_clean(&s, jsonget_str(job, "patch_subject") ?: "(no subject)");
	report_kv(r->out, "patch", s.buf);
	strbuf_reset(&s);
	add_source(&s, job);
	report_kv(r->out, "source", s.buf);
	strbuf_reset(&s);
	add_series(r->out, json_object_get(job, "patches"));
	report_add_clean(&s, jsonget_str(job, "base") ?: "?");
	strbuf_addstr(&s, " of tree ");
	report_add_clean(&s, jsonget_str(job, "tree") ?: "?");
	if (side_build(cmp, "base") && jsonget_str(side_build(cmp, "base"), "commit")) {
		strbuf_addstr(&s, ", commit ");
		strbuf_addf(&v, "%.12s", jsonget_str(side_build(cmp, "base"), "commit"));
		report_add_clean(&s, v.buf);
	}
	report_kv(r->out, "base", s.buf);
	strbuf_reset(&s);
	strbuf_addf(&s, "%lld, suite ", r->id);
	report_add_clean(&s, jsonget_str(job, "suite") ?: "?");
	if (jsonget_str(job, "submitter")) {
		strbuf_addstr(&s, ", submitted by ");
		report_add_clean(&s, jsonget_str(job, "submitter"));
	}
	strbuf_addstr(&s, "; ");
	report_add_clean(&s, state);
	if (json_is_number(json_object_get(job, "finished"))) {
		strbuf_addch(&s, ' ');
		report_add_time(&s, job, "finished");
	}
	report_kv(r->out, "job", s.buf);
	strbuf_reset(&s);
	if (r->failed || strcmp(state, "done")) {
		strbuf_addstr(&s, !strcmp(state, "failed") ? "none (the job failed)" :
			      !strcmp(state, "cancelled") ? "none (the job was cancelled)" : "none yet");
	} else {
		report_add_clean(&s, verdict);
	}
	if (nrows) {
		strbuf_addstr(&s, "; headline: ");
		add_counts(&s, cmp, 1);
		strbuf_addstr(&s, "; other metrics: ");
		add_counts(&s, cmp, 0);
	}
	report_kv(r->out, "verdict", s.buf);
	/* what each class saw, in words: emulated instructions, spin-waits
	 * and wall-clock time are not one measure */
	strbuf_reset(&s);
	{
		const char *cname;
		const json_t *cv;

		json_object_foreach((json_t *)json_object_get(cmp, "by_class"), cname, cv) {
			if (verdict_is(cv, "unavailable"))
				continue;
			strbuf_addstr(&s, s.len ? "; " : "");
			report_add_clean(&s, cname);
			strbuf_addstr(&s, ": ");
			report_add_clean(&s, jsonget_str(cv, "text") ?: "?");
		}
	}
	if (s.len)
		report_kv(r->out, "by class", s.buf);
	strbuf_release(&s);
	strbuf_release(&v);
}

/* ---- machines, kernels, design ---- */

static void machine_facts(struct report *r)
{
	const json_t *pv = json_object_get(r->cmp, "provenance"), *design = json_object_get(r->cmp, "design");
	const json_t *mb = jsonget_array(json_object_get(pv, "machines"), "base");
	const json_t *mp = jsonget_array(json_object_get(pv, "machines"), "patched");
	const json_t *rules = json_object_get(r->cmp, "rules"), *row;
	long long bb = jsonget_int_or(json_object_get(pv, "boots"), "base", 0);
	long long bp = jsonget_int_or(json_object_get(pv, "boots"), "patched", 0);
	struct strbuf s = STRBUF_INIT;
	char f1[32], f2[32], f3[32];
	double a, x, y;
	size_t i, k;

	report_heading(r->out, "machine and kernels");
	if (json_equal((json_t *)mb, (json_t *)mp) || !json_array_size(mp)) {
		report_add_strings(&s, mb, ", ");
	} else if (!json_array_size(mb)) {
		report_add_strings(&s, mp, ", ");
	} else {
		report_add_strings(&s, mb, ", ");
		strbuf_addstr(&s, " (base); ");
		report_add_strings(&s, mp, ", ");
		strbuf_addstr(&s, " (patched)");
	}
	report_kv(r->out, "machines", s.len ? s.buf : "none: nothing ran");
	strbuf_reset(&s);
	if (!bb && !bp)
		strbuf_addstr(&s, "none ran on either side");
	else if (bb == bp)
		strbuf_addf(&s, "%lld per side", bb);
	else
		strbuf_addf(&s, "%lld base, %lld patched (the missing ones failed or did not run)", bb, bp);
	if (bb || bp)
		strbuf_addstr(&s, ", base and patched interleaved; one sample per boot, the median of its "
			      "measured iterations");
	report_kv(r->out, "boots", s.buf);
	strbuf_reset(&s);
	add_kernel(&s, r->cmp, "base");
	report_kv(r->out, "base", s.buf);
	strbuf_reset(&s);
	add_kernel(&s, r->cmp, "patched");
	report_kv(r->out, "patched", s.buf);
	strbuf_reset(&s);
	report_add_clean(&s, jsonget_str(r->job, "suite") ?: "?");
	/* the workloads it ran, in order */
	k = 0;
	json_array_foreach(jsonget_array(r->cmp, "rows"), i, row) {
		const json_t *prev;
		size_t j;
		int seen = 0;

		if (!jsonget_str(row, "workload"))
			continue;
		for (j = 0; j < i && !seen; j++) {
			prev = json_array_get(jsonget_array(r->cmp, "rows"), j);
			seen = jsonget_str(prev, "workload") &&
			       !strcmp(jsonget_str(prev, "workload"), jsonget_str(row, "workload"));
		}
		if (seen)
			continue;
		strbuf_addstr(&s, k++ ? ", " : ": ");
		report_add_clean(&s, jsonget_str(row, "workload"));
	}
	report_kv(r->out, "suite", s.buf);
	if (json_is_object(design)) {
		strbuf_reset(&s);
		strbuf_addf(&s, "%lld boots per side", jsonget_int_or(design, "boots", bb));
		if (jsonget_int_or(design, "max_boots", 0) > jsonget_int_or(design, "boots", 0))
			strbuf_addf(&s, ", up to %lld while a headline metric is inconclusive",
				    jsonget_int_or(design, "max_boots", 0));
		if (jsonget_int_or(design, "looks", 0) > 0)
			strbuf_addf(&s, "; look %lld of %lld", jsonget_int_or(design, "look", 1),
				    jsonget_int_or(design, "looks", 1));
		if (jsonget_num(design, "alpha", &a) == 0) {
			strbuf_addf(&s, "; alpha %.3g", a);
			if (jsonget_num(design, "alpha_total", &x) == 0)
				strbuf_addf(&s, " of %.3g", x);
		}
		if (jsonget_str(design, "spending")) {
			strbuf_addstr(&s, " (");
			report_add_clean(&s, jsonget_str(design, "spending"));
			strbuf_addch(&s, ')');
		}
		report_kv(r->out, "design", s.buf);
	}
	if (json_is_object(rules) && jsonget_num(rules, "alpha", &a) == 0 &&
	    jsonget_num(rules, "min_change_headline", &x) == 0 && jsonget_num(rules, "min_change_counter", &y) == 0) {
		double band = 0;
		const char *pat;
		json_t *ov;

		strbuf_reset(&s);
		report_fmt_fraction_pct(f1, sizeof(f1), x);
		report_fmt_fraction_pct(f2, sizeof(f2), y);
		strbuf_addf(&s, "a change needs %s below %.3g, a CI that excludes 0 and at least %s (headline) "
			    "or %s (other metrics)",
			    report_any_padj(jsonget_array(r->cmp, "rows"), 1) ? "the adjusted p" : "p", a, f1, f2);
		if (jsonget_num(rules, "same_band", &band) == 0) {
			report_fmt_fraction_pct(f3, sizeof(f3), band);
			strbuf_addf(&s, "; the same when the equivalence interval is within +-%s", f3);
		}
		k = 0;
		json_object_foreach(json_object_get(rules, "metrics"), pat, ov) {
			strbuf_addstr(&s, k++ ? ", " : "; own rules for ");
			report_add_clean(&s, pat);
		}
		report_kv(r->out, "rules", s.buf);
	}
	strbuf_release(&s);
}

/* ---- failures and notes ---- */

static int same_failure(const json_t *a, const json_t *b)
{
	return a && b && json_equal(json_object_get(a, "side"), json_object_get(b, "side")) &&
	       json_equal(json_object_get(a, "spec"), json_object_get(b, "spec")) &&
	       json_equal(json_object_get(a, "reason"), json_object_get(b, "reason"));
}

static void failures(struct report *r)
{
	const json_t *failed = jsonget_array(r->cmp, "failed"), *f, *e = json_object_get(r->job, "error");
	struct strbuf s = STRBUF_INIT, where = STRBUF_INIT;
	size_t i, j;

	if (!json_array_size(failed) && !json_is_object(e))
		return;
	report_heading(r->out, "what failed (never averaged in)");
	if (json_is_object(e)) {
		strbuf_addstr(&s, "the job: ");
		report_add_clean(&s, jsonget_str(e, "class") ?: "error");
		strbuf_addstr(&s, ": ");
		report_add_clean(&s, jsonget_str(e, "message") ?: "no message");
		report_para(r->out, "  ", 4, s.buf);
	}
	for (i = 0; i < json_array_size(failed); i = j) {
		size_t k, nstages = 0;

		f = json_array_get(failed, i);
		for (j = i + 1; j < json_array_size(failed) && same_failure(f, json_array_get(failed, j)); j++)
			;
		strbuf_reset(&s);
		strbuf_reset(&where);
		report_add_clean(&s, jsonget_str(f, "side") ?: "?");
		if (jsonget_int_or(f, "spec", -1) >= 0)
			strbuf_addf(&s, " spec %lld", jsonget_int_or(f, "spec", -1));
		if (jsonget_str(f, "workload")) {
			strbuf_addstr(&s, " (");
			report_add_clean(&s, jsonget_str(f, "workload"));
			strbuf_addch(&s, ')');
		}
		if (jsonget_int_or(f, "case", -1) >= 0)
			strbuf_addf(&s, " case %lld", jsonget_int_or(f, "case", -1));
		if (jsonget_int_or(f, "run", -1) >= 0)
			strbuf_addf(&s, " run %lld", jsonget_int_or(f, "run", -1));
		for (k = i; k < j; k++)
			if (jsonget_int_or(json_array_get(failed, k), "stage", -1) >= 0)
				strbuf_addf(&where, "%s%lld", nstages++ ? ", " : "",
					    jsonget_int_or(json_array_get(failed, k), "stage", -1));
		if (nstages)
			strbuf_addf(&s, ", in the stage%s at seq %s", nstages == 1 ? "" : "s", where.buf);
		if (j - i > 1)
			strbuf_addf(&s, " (%zu times)", j - i);
		strbuf_addstr(&s, ": ");
		report_add_clean_json(&s, json_object_get(f, "reason"));
		report_para(r->out, "  ", 4, s.buf);
	}
	strbuf_release(&s);
	strbuf_release(&where);
}

static void notes(struct report *r)
{
	const json_t *n;
	struct strbuf s = STRBUF_INIT;
	size_t i;

	if (!json_array_size(jsonget_array(r->cmp, "notes")))
		return;
	report_heading(r->out, "notes");
	json_array_foreach(jsonget_array(r->cmp, "notes"), i, n) {
		if (!json_is_string(n))
			continue;
		strbuf_reset(&s);
		report_add_clean(&s, json_string_value(n));
		report_para(r->out, "  - ", 4, s.buf);
	}
	strbuf_release(&s);
}

/* ---- reproducing it ---- */

/* word as one shell word: bare when it is made of characters no shell
 * reads specially, else in single quotes (the values here never hold one:
 * refs, names and URLs are validated before they are stored). */
static void add_shell_word(struct strbuf *sb, const char *word)
{
	static const char safe[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
				   "._-/:@=+,%";
	struct strbuf clean = STRBUF_INIT;
	size_t i;

	report_add_clean(&clean, word);
	if (clean.len && strspn(clean.buf, safe) == clean.len) {
		strbuf_addstr(sb, clean.buf);
	} else {
		strbuf_addch(sb, '\'');
		for (i = 0; i < clean.len; i++)
			if (clean.buf[i] == '\'')
				strbuf_addstr(sb, "'\\''");
			else
				strbuf_addch(sb, clean.buf[i]);
		strbuf_addch(sb, '\'');
	}
	strbuf_release(&clean);
}

/* git format-patch's name for the patch: "0001-x86-mm-tlb-batch-flushes.patch" */
static void add_patch_file(struct strbuf *sb, const char *subject)
{
	size_t start = sb->len, n = 0;
	int dash = 0;

	strbuf_addstr(sb, "0001-");
	for (; subject && *subject && n < FILE_NAME_MAX; subject++) {
		char c = *subject;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		    (c == '.' && n)) {
			if (dash && n)
				strbuf_addch(sb, '-'), n++;
			strbuf_addch(sb, c);
			n++;
			dash = 0;
		} else {
			dash = 1;
		}
	}
	while (sb->len > start + 5 && (sb->buf[sb->len - 1] == '.' || sb->buf[sb->len - 1] == '-'))
		strbuf_setlen(sb, sb->len - 1);
	if (!n)
		strbuf_addstr(sb, "patch");
	strbuf_addstr(sb, ".patch");
}

/* Adds word to the command, a continuation line when it would not fit. */
static void cmd_word(struct strbuf *out, size_t *col, const char *word)
{
	size_t w = width(word, strlen(word));

	if (*col + 1 + w + 2 > REPORT_WIDTH) {
		strbuf_addstr(out, " \\\n      ");
		*col = 6;
	} else {
		strbuf_addch(out, ' ');
		(*col)++;
	}
	strbuf_addstr(out, word);
	*col += w;
}

/* option and its value as one unit, so a line never ends between them */
static void cmd_option(struct strbuf *out, size_t *col, const char *option, const char *value)
{
	struct strbuf w = STRBUF_INIT;

	strbuf_addf(&w, "%s ", option);
	add_shell_word(&w, value);
	cmd_word(out, col, w.buf);
	strbuf_release(&w);
}

static void reproduce(struct report *r)
{
	const json_t *job = r->job, *design = json_object_get(r->cmp, "design");
	const char *kind = jsonget_str(job, "patch_kind") ?: "";
	long long boots = jsonget_int_or(job, "boots", 0), max = jsonget_int_or(job, "max_boots", 0);
	struct strbuf w = STRBUF_INIT;
	size_t col;
	char num_buf[32];

	if (json_is_object(design) && jsonget_int_or(design, "boots", 0) > 0) {
		boots = jsonget_int_or(design, "boots", boots);
		max = jsonget_int_or(design, "max_boots", max);
	}
	report_heading(r->out, "to reproduce");
	strbuf_addstr(r->out, "  tlblab submit");
	col = 15;
	cmd_option(r->out, &col, "--suite", jsonget_str(job, "suite") ?: "?");
	cmd_option(r->out, &col, "--tree", jsonget_str(job, "tree") ?: "?");
	cmd_option(r->out, &col, "--base", jsonget_str(job, "base") ?: "?");
	if (!strcmp(kind, "branch")) {
		strbuf_addstr(&w, "--branch ");
		add_shell_word(&w, jsonget_str(job, "patch_url") ?: "?");
		cmd_word(r->out, &col, w.buf);
		strbuf_reset(&w);
		add_shell_word(&w, jsonget_str(job, "patch_ref") ?: "?");
		cmd_word(r->out, &col, w.buf);
	} else if (!strcmp(kind, "url")) {
		cmd_option(r->out, &col, "--url", jsonget_str(job, "patch_url") ?: "?");
	} else {
		add_patch_file(&w, jsonget_str(job, "patch_subject"));
		cmd_option(r->out, &col, "--patch", w.buf);
	}
	if (boots > 0) {
		snprintf(num_buf, sizeof(num_buf), "%lld", boots);
		cmd_option(r->out, &col, "--boots", num_buf);
	}
	if (max > boots) {
		snprintf(num_buf, sizeof(num_buf), "%lld", max);
		cmd_option(r->out, &col, "--max-boots", num_buf);
	}
	if (json_array_size(jsonget_array(job, "machines"))) {
		strbuf_reset(&w);
		report_add_strings(&w, jsonget_array(job, "machines"), ",");
		cmd_option(r->out, &col, "--machines", w.buf);
	}
	if (json_array_size(jsonget_array(job, "tags"))) {
		strbuf_reset(&w);
		report_add_strings(&w, jsonget_array(job, "tags"), ",");
		cmd_option(r->out, &col, "--tags", w.buf);
	}
	cmd_word(r->out, &col, "--wait");
	strbuf_addf(r->out, "\n  tlblab compare %lld\n", r->id);
	if (strcmp(kind, "branch") && strcmp(kind, "url")) {
		strbuf_addch(r->out, '\n');
		report_para(r->out, "  ", 2, "where the --patch file is the patch as it was submitted with the job");
	}
	strbuf_release(&w);
}

int report_text(const json_t *job, const json_t *comparison, struct strbuf *out, struct strbuf *err)
{
	struct report r = { .out = out, .job = job, .cmp = comparison };
	const char *state = jsonget_str(job, "state");
	size_t from = out->len;

	if (!json_is_object(job) || !jsonget_str(job, "kind") || strcmp(jsonget_str(job, "kind"), "ab"))
		return strbuf_seterr(err, "report: not an A/B job");
	if (!json_is_object(comparison) || !jsonget_array(comparison, "rows"))
		return strbuf_seterr(err, "report: the comparison has no rows");
	r.id = jsonget_int_or(job, "id", 0);
	r.failed = state && (!strcmp(state, "failed") || !strcmp(state, "cancelled"));
	opening(&r);
	machine_facts(&r);
	report_headline_table(&r);
	report_counter_table(&r);
	report_tlb_block(&r);
	report_profile_block(&r);
	failures(&r);
	notes(&r);
	reproduce(&r);
	textwrap_fit(out, from, REPORT_WIDTH);
	return 0;
}
