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
 * The file is long because the report is one document: its sections
 * share the same readers of the documents, number formats and columns,
 * and are written top to bottom in the order they print.
 */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "textwrap.h"
#include "util.h"
#include "banned.h"

#define CLEAN_MAX 2000		/* bytes of one string from the documents */
#define KEY_INDENT 13		/* "  machines:  " */
#define MAX_COUNTER_ROWS 20	/* other metrics that moved, largest first */
#define MAX_SYMBOLS 15		/* profile lines */
#define SYMBOL_MOVED 0.5	/* points of self % */
#define FILE_NAME_MAX 52	/* git format-patch's subject part of a name */

struct report {
	struct strbuf *out;
	const json_t *job, *cmp;
	long long id;
	int failed;		/* the job failed or was cancelled */
};

/* ---- reading the documents ---- */

static const char *str(const json_t *o, const char *key)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int num(const json_t *o, const char *key, double *ret)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	if (!json_is_number(v) || !isfinite(json_number_value(v)))
		return -1;
	*ret = json_number_value(v);
	return 0;
}

static long long integer(const json_t *o, const char *key, long long def)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_integer(v) ? (long long)json_integer_value(v) : def;
}

static const json_t *arr(const json_t *o, const char *key)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_array(v) ? v : NULL;
}

/* s, cleaned, appended to sb ("" for NULL). */
static void add_clean(struct strbuf *sb, const char *s)
{
	if (s)
		strbuf_add_line_clean(sb, s, strlen(s), CLEAN_MAX);
}

/* Any JSON value as one clean line: strings bare, the rest compact. */
static void add_clean_json(struct strbuf *sb, const json_t *v)
{
	char *t;

	if (json_is_string(v)) {
		add_clean(sb, json_string_value(v));
		return;
	}
	t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	add_clean(sb, t ? t : "?");
	free(t);
}

/* ---- numbers ---- */

/* A value in at most 9 columns: integers in full up to 10^7, else three
 * significant digits. */
static void fmt_value(char *buf, size_t n, double v)
{
	double a = fabs(v);

	if (v == 0)
		snprintf(buf, n, "0");
	else if (a >= 1e7 || a < 1e-3)
		snprintf(buf, n, "%.2e", v);
	else if (a >= 1000)
		snprintf(buf, n, "%.0f", v);
	else if (a >= 100)
		snprintf(buf, n, "%.1f", v);
	else if (a >= 1)
		snprintf(buf, n, "%.2f", v);
	else
		snprintf(buf, n, "%.3g", v);
}

/* "+1.5%", "-15.4%", "+364%" */
static void fmt_pct(char *buf, size_t n, double v)
{
	if (fabs(v) >= 100)
		snprintf(buf, n, "%+.0f%%", v);
	else
		snprintf(buf, n, "%+.1f%%", v);
}

static void fmt_p(char *buf, size_t n, double p)
{
	if (p >= 0.001)
		snprintf(buf, n, "%.2g", p);
	else
		snprintf(buf, n, "%.0e", p);
}

/* "2%" from the fraction 0.02, with no trailing zeros */
static void fmt_fraction_pct(char *buf, size_t n, double f)
{
	snprintf(buf, n, "%.4g%%", f * 100);
}

static void add_time(struct strbuf *sb, const json_t *o, const char *key)
{
	double t;
	time_t tt;
	struct tm tm;
	char buf[64];

	if (num(o, key, &t) < 0)
		return;
	tt = (time_t)t;
	if (!gmtime_r(&tt, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M UTC", &tm))
		return;
	strbuf_addstr(sb, buf);
}

/* ---- layout (textwrap.h), at the report's width ---- */

static size_t width(const char *s, size_t n)
{
	return utf8_width(s, n);
}

static void para(struct strbuf *out, const char *first, size_t indent, const char *text)
{
	text_para(out, first, indent, text, REPORT_WIDTH);
}

/* "  key:      value", the value wrapped under itself. */
static void kv(struct strbuf *out, const char *key, const char *value)
{
	struct strbuf first = STRBUF_INIT;

	strbuf_addf(&first, "  %s:", key);
	while (first.len < KEY_INDENT)
		strbuf_addch(&first, ' ');
	para(out, first.buf, KEY_INDENT, value);
	strbuf_release(&first);
}

static void heading(struct strbuf *out, const char *text)
{
	strbuf_addch(out, '\n');
	para(out, "", 0, text);
	strbuf_addch(out, '\n');
}

/* ---- pieces of text ---- */

/* "mprotect mode=threads size=64K workers=4": the row's workload and its
 * parameters (params_text, without the workload's own name in it). */
static void add_case(struct strbuf *sb, const json_t *row)
{
	struct strbuf raw = STRBUF_INIT;
	const char *wl = str(row, "workload"), *pt = str(row, "params_text");

	strbuf_addstr(&raw, wl ? wl : "?");
	while (pt && *pt) {
		size_t n = strcspn(pt, " ");

		if (n && !(n > 9 && !strncmp(pt, "workload=", 9)))
			strbuf_addf(&raw, " %.*s", (int)n, pt);
		pt += n;
		while (*pt == ' ')
			pt++;
	}
	add_clean(sb, raw.buf);
	strbuf_release(&raw);
}

static int verdict_is(const json_t *row, const char *v)
{
	const char *rv = str(row, "verdict");

	return rv && !strcmp(rv, v);
}

static int is_headline(const json_t *row)
{
	return json_is_true(json_object_get(row, "headline"));
}

/* Whose failure a job's error is, in words; NULL when it says nothing. */
static const char *blame(const json_t *job)
{
	const json_t *e = json_object_get(job, "error"), *st;
	const char *class = str(e, "class");
	long long sid = integer(e, "stage", -1);
	size_t i;

	if (!class)
		return NULL;
	if (!strcmp(class, "suite"))
		return "the suite fails on the base kernel too: not a result of the patch";
	if (!strcmp(class, "infra"))
		return "a problem of the lab, not of the patch";
	if (strcmp(class, "patch") && strcmp(class, "build") && strcmp(class, "boot") && strcmp(class, "workload"))
		return NULL;
	json_array_foreach(arr(job, "stages"), i, st)
		if (integer(st, "id", -2) == sid && str(st, "side") && !strcmp(str(st, "side"), "base") &&
		    strcmp(class, "patch"))
			return "a result of the base kernel, not of the patch";
	return "a result of the patch, not a lab problem";
}

/* Where the patched side came from. */
static void add_source(struct strbuf *sb, const json_t *job)
{
	const char *kind = str(job, "patch_kind"), *url = str(job, "patch_url"), *ref = str(job, "patch_ref");
	struct strbuf raw = STRBUF_INIT;

	if (kind && !strcmp(kind, "branch"))
		strbuf_addf(&raw, "branch %s of %s", ref ? ref : "?", url ? url : "?");
	else if (kind && !strcmp(kind, "url"))
		strbuf_addf(&raw, "mbox fetched from %s", url ? url : "?");
	else if (kind && !strcmp(kind, "patch"))
		strbuf_addstr(&raw, "a patch pasted with the job");
	else
		strbuf_addstr(&raw, kind ? kind : "unknown");
	add_clean(sb, raw.buf);
	strbuf_release(&raw);
}

/* The build of side `side` from the comparison's provenance: the daemon
 * gives each side {"job": JOB, "builds": [{"side", "build_id", "commit",
 * "config_hash", "compiler", "meta": {"kernelrelease"}}]}. */
static const json_t *side_build(const json_t *cmp, const char *side)
{
	const json_t *b;
	size_t i;

	json_array_foreach(arr(json_object_get(json_object_get(cmp, "provenance"), side), "builds"), i, b)
		if (!str(b, "side") || !strcmp(str(b, "side"), side))
			return b;
	return NULL;
}

/* "6.1.0-tlblab+, build p00000000000, commit f6e5d4c3b2f6, config 9c1e,
 * gcc 12.2.0" */
static void add_kernel(struct strbuf *sb, const json_t *cmp, const char *side)
{
	const json_t *b = side_build(cmp, side), *meta = json_object_get(b, "meta");
	const char *release = str(meta, "kernelrelease") ?: str(meta, "kernel_release");
	struct strbuf raw = STRBUF_INIT;
	const json_t *ids;

	if (!b) {
		ids = arr(json_object_get(json_object_get(cmp, "provenance"), "builds"), side);
		if (json_array_size(ids) && json_is_string(json_array_get(ids, 0)))
			strbuf_addf(&raw, "build %.12s", json_string_value(json_array_get(ids, 0)));
		else
			strbuf_addstr(&raw, "no build");
		add_clean(sb, raw.buf);
		strbuf_release(&raw);
		return;
	}
	if (release)
		strbuf_addf(&raw, "%s, ", release);
	strbuf_addf(&raw, "build %.12s", str(b, "build_id") ?: "?");
	if (str(b, "commit"))
		strbuf_addf(&raw, ", commit %.12s", str(b, "commit"));
	if (str(b, "config_hash"))
		strbuf_addf(&raw, ", config %.12s", str(b, "config_hash"));
	if (str(b, "compiler"))
		strbuf_addf(&raw, ", %s", str(b, "compiler"));
	add_clean(sb, raw.buf);
	strbuf_release(&raw);
}

static void add_strings(struct strbuf *sb, const json_t *list, const char *sep)
{
	const json_t *v;
	size_t i, n = 0;

	json_array_foreach(list, i, v)
		if (json_is_string(v)) {
			strbuf_addstr(sb, n++ ? sep : "");
			add_clean(sb, json_string_value(v));
		}
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
	json_array_foreach(arr(cmp, "rows"), i, row) {
		if (!is_headline(row) || !verdict_is(row, v))
			continue;
		(*ret_n)++;
		if (num(row, "change_pct", &c) == 0 && fabs(c) > bc) {
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
		json_array_foreach(arr(cmp, "rows"), i, row)
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
	const char *state = str(job, "state") ?: "unknown";
	const char *verdict = str(job, "verdict") ?: str(cmp, "verdict") ?: "unavailable";
	struct strbuf s = STRBUF_INIT, v = STRBUF_INIT;
	char pct[32];
	double c;
	size_t n, nrows = json_array_size(arr(cmp, "rows"));

	strbuf_addf(r->out, "tlblab report of job %lld\n\n", r->id);
	if (!strcmp(state, "failed")) {
		strbuf_addf(&s, "tlblab job %lld failed: ", r->id);
		add_clean(&s, str(e, "class") ?: "error");
		strbuf_addstr(&s, ": ");
		add_clean(&s, str(e, "message") ?: "no message");
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
		add_clean(&s, state);
		strbuf_addstr(&s, "; the tables below compare what ran on both sides so far. It tests:");
	} else if ((!strcmp(verdict, "regression") || !strcmp(verdict, "improvement") ||
		    !strcmp(verdict, "changed")) && (row = top_row(cmp, verdict, &n))) {
		if (num(row, "change_pct", &c) == 0) {
			fmt_pct(pct, sizeof(pct), c);
			strbuf_addf(&s, "tlblab noticed a %s %s of ", pct,
				    !strcmp(verdict, "changed") ? "change" : verdict);
		} else {
			strbuf_addf(&s, "tlblab noticed a %s of ", !strcmp(verdict, "changed") ? "change" : verdict);
		}
		add_clean(&s, str(row, "metric") ?: "?");
		strbuf_addstr(&s, " (");
		add_case(&s, row);
		strbuf_addch(&s, ')');
		if (!strcmp(verdict, "changed"))
			strbuf_addstr(&s, ", a metric with no better or worse,");
		if (n > 1)
			strbuf_addf(&s, " and %zu more headline %s", n - 1,
				    !strcmp(verdict, "changed") ? "changes" : !strcmp(verdict, "regression") ?
				    (n == 2 ? "regression" : "regressions") : (n == 2 ? "improvement" : "improvements"));
		strbuf_addstr(&s, " on:");
	} else if (!strcmp(verdict, "same")) {
		top_row(cmp, "same", &n);
		strbuf_addf(&s, "tlblab found %s the same, within %s, on:",
			    n == 1 ? "the headline metric" : "the headline metrics",
			    n == 1 ? "its equivalence margin" : "their equivalence margins");
	} else if (!strcmp(verdict, "inconclusive")) {
		top_row(cmp, "inconclusive", &n);
		strbuf_addf(&s, "tlblab could neither call a change nor rule one out in %zu headline "
			    "metric%s on:", n, n == 1 ? "" : "s");
	} else {
		strbuf_addstr(&s, "tlblab could compare none of the headline metrics on:");
	}
	para(r->out, "", 0, s.buf);
	strbuf_addch(r->out, '\n');

	strbuf_reset(&s);
	add_clean(&s, str(job, "patch_subject") ?: "(no subject)");
	kv(r->out, "patch", s.buf);
	strbuf_reset(&s);
	add_source(&s, job);
	kv(r->out, "source", s.buf);
	strbuf_reset(&s);
	add_clean(&s, str(job, "base") ?: "?");
	strbuf_addstr(&s, " of tree ");
	add_clean(&s, str(job, "tree") ?: "?");
	if (side_build(cmp, "base") && str(side_build(cmp, "base"), "commit")) {
		strbuf_addstr(&s, ", commit ");
		strbuf_addf(&v, "%.12s", str(side_build(cmp, "base"), "commit"));
		add_clean(&s, v.buf);
	}
	kv(r->out, "base", s.buf);
	strbuf_reset(&s);
	strbuf_addf(&s, "%lld, suite ", r->id);
	add_clean(&s, str(job, "suite") ?: "?");
	if (str(job, "submitter")) {
		strbuf_addstr(&s, ", submitted by ");
		add_clean(&s, str(job, "submitter"));
	}
	strbuf_addstr(&s, "; ");
	add_clean(&s, state);
	if (json_is_number(json_object_get(job, "finished"))) {
		strbuf_addch(&s, ' ');
		add_time(&s, job, "finished");
	}
	kv(r->out, "job", s.buf);
	strbuf_reset(&s);
	if (r->failed || strcmp(state, "done")) {
		strbuf_addstr(&s, !strcmp(state, "failed") ? "none (the job failed)" :
			      !strcmp(state, "cancelled") ? "none (the job was cancelled)" : "none yet");
	} else {
		add_clean(&s, verdict);
	}
	if (nrows) {
		strbuf_addstr(&s, "; headline: ");
		add_counts(&s, cmp, 1);
		strbuf_addstr(&s, "; other metrics: ");
		add_counts(&s, cmp, 0);
	}
	kv(r->out, "verdict", s.buf);
	strbuf_release(&s);
	strbuf_release(&v);
}

static int any_padj(const json_t *rows, int headline);

/* ---- machines, kernels, design ---- */

static void machine_facts(struct report *r)
{
	const json_t *pv = json_object_get(r->cmp, "provenance"), *design = json_object_get(r->cmp, "design");
	const json_t *mb = arr(json_object_get(pv, "machines"), "base");
	const json_t *mp = arr(json_object_get(pv, "machines"), "patched");
	const json_t *rules = json_object_get(r->cmp, "rules"), *row;
	long long bb = integer(json_object_get(pv, "boots"), "base", 0);
	long long bp = integer(json_object_get(pv, "boots"), "patched", 0);
	struct strbuf s = STRBUF_INIT;
	char f1[32], f2[32], f3[32];
	double a, x, y;
	size_t i, k;

	heading(r->out, "machine and kernels");
	if (json_equal((json_t *)mb, (json_t *)mp) || !json_array_size(mp)) {
		add_strings(&s, mb, ", ");
	} else if (!json_array_size(mb)) {
		add_strings(&s, mp, ", ");
	} else {
		add_strings(&s, mb, ", ");
		strbuf_addstr(&s, " (base); ");
		add_strings(&s, mp, ", ");
		strbuf_addstr(&s, " (patched)");
	}
	kv(r->out, "machines", s.len ? s.buf : "none: nothing ran");
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
	kv(r->out, "boots", s.buf);
	strbuf_reset(&s);
	add_kernel(&s, r->cmp, "base");
	kv(r->out, "base", s.buf);
	strbuf_reset(&s);
	add_kernel(&s, r->cmp, "patched");
	kv(r->out, "patched", s.buf);
	strbuf_reset(&s);
	add_clean(&s, str(r->job, "suite") ?: "?");
	/* the workloads it ran, in order */
	k = 0;
	json_array_foreach(arr(r->cmp, "rows"), i, row) {
		const json_t *prev;
		size_t j;
		int seen = 0;

		if (!str(row, "workload"))
			continue;
		for (j = 0; j < i && !seen; j++) {
			prev = json_array_get(arr(r->cmp, "rows"), j);
			seen = str(prev, "workload") && !strcmp(str(prev, "workload"), str(row, "workload"));
		}
		if (seen)
			continue;
		strbuf_addstr(&s, k++ ? ", " : ": ");
		add_clean(&s, str(row, "workload"));
	}
	kv(r->out, "suite", s.buf);
	if (json_is_object(design)) {
		strbuf_reset(&s);
		strbuf_addf(&s, "%lld boots per side", integer(design, "boots", bb));
		if (integer(design, "max_boots", 0) > integer(design, "boots", 0))
			strbuf_addf(&s, ", up to %lld while a headline metric is inconclusive",
				    integer(design, "max_boots", 0));
		if (integer(design, "looks", 0) > 0)
			strbuf_addf(&s, "; look %lld of %lld", integer(design, "look", 1), integer(design, "looks", 1));
		if (num(design, "alpha", &a) == 0) {
			strbuf_addf(&s, "; alpha %.3g", a);
			if (num(design, "alpha_total", &x) == 0)
				strbuf_addf(&s, " of %.3g", x);
		}
		if (str(design, "spending")) {
			strbuf_addstr(&s, " (");
			add_clean(&s, str(design, "spending"));
			strbuf_addch(&s, ')');
		}
		kv(r->out, "design", s.buf);
	}
	if (json_is_object(rules) && num(rules, "alpha", &a) == 0 && num(rules, "min_change_headline", &x) == 0 &&
	    num(rules, "min_change_counter", &y) == 0) {
		double band = 0;
		const char *pat;
		json_t *ov;

		strbuf_reset(&s);
		fmt_fraction_pct(f1, sizeof(f1), x);
		fmt_fraction_pct(f2, sizeof(f2), y);
		strbuf_addf(&s, "a change needs %s below %.3g, a CI that excludes 0 and at least %s (headline) "
			    "or %s (other metrics)", any_padj(arr(r->cmp, "rows"), 1) ? "the adjusted p" : "p",
			    a, f1, f2);
		if (num(rules, "same_band", &band) == 0) {
			fmt_fraction_pct(f3, sizeof(f3), band);
			strbuf_addf(&s, "; the same when the equivalence interval is within +-%s", f3);
		}
		k = 0;
		json_object_foreach(json_object_get(rules, "metrics"), pat, ov) {
			strbuf_addstr(&s, k++ ? ", " : "; own rules for ");
			add_clean(&s, pat);
		}
		kv(r->out, "rules", s.buf);
	}
	strbuf_release(&s);
}

/* ---- tables of rows ---- */

/* "400002 +- 0.3%": a side's median over boots and its spread */
static void side_cell(char *buf, size_t n, const json_t *side)
{
	char v[32], sp[32] = "";
	double c, s;

	if (num(side, "center", &c) < 0) {
		snprintf(buf, n, "-%8s", "");
		return;
	}
	fmt_value(v, sizeof(v), c);
	/* no spread (one boot): the value stays in line with the others */
	if (num(side, "spread_pct", &s) == 0)
		snprintf(sp, sizeof(sp), s >= 99.95 ? " +-%.0f%%" : " +-%4.1f%%", s);
	else
		snprintf(sp, sizeof(sp), "%8s", "");
	snprintf(buf, n, "%s%s", v, sp);
}

static void table_head(struct strbuf *out, int with_padj)
{
	strbuf_addf(out, "  %16s  %16s %7s %6s", "base", "patched", "%change", "p");
	if (with_padj)
		strbuf_addf(out, " %6s", "p_adj");
	strbuf_addstr(out, "  verdict\n");
}

/* The note under a row: how sure its verdict is, or why it has none. */
static void row_note(struct strbuf *s, const json_t *row, const json_t *rules)
{
	const json_t *ci = json_object_get(row, "ci"), *eq = json_object_get(row, "equiv_ci");
	const json_t *ci_abs = json_object_get(row, "ci_abs");
	char lo[32], hi[32], m[32];
	double level = 0.95, margin, x, y;
	long long outl = integer(row, "outliers", 0);

	num(rules, "ci_level", &level);
	if (num(row, "margin_pct", &margin) < 0) {
		margin = NAN;
		if (num(rules, "same_band", &x) == 0)
			margin = x * 100;
	}
	if (verdict_is(row, "unavailable")) {
		strbuf_addstr(s, "unavailable: ");
		add_clean(s, str(row, "reason") ?: "no value on one side");
	} else if (verdict_is(row, "same")) {
		if (json_array_size(eq) == 2 && json_is_number(json_array_get(eq, 0)))
			ci = eq;
		snprintf(m, sizeof(m), "%.3g%%", margin);
		strbuf_addf(s, "the same within +-%s", isnan(margin) ? "its margin" : m);
		if (json_array_size(ci) == 2 && json_is_number(json_array_get(ci, 0))) {
			fmt_pct(lo, sizeof(lo), json_number_value(json_array_get(ci, 0)));
			fmt_pct(hi, sizeof(hi), json_number_value(json_array_get(ci, 1)));
			strbuf_addf(s, " (equivalence interval %s to %s)", lo, hi);
		}
		if (num(row, "mde_pct", &y) == 0)
			strbuf_addf(s, "; could detect +-%.3g%%", y);
	} else if (verdict_is(row, "inconclusive")) {
		int mde_known = json_object_get(row, "mde_pct") != NULL;

		if (num(row, "ruled_out_pct", &x) == 0) {
			strbuf_addf(s, "changes beyond +-%.3g%% ruled out", x);
		} else if (json_array_size(ci) == 2 && json_is_number(json_array_get(ci, 0))) {
			fmt_pct(lo, sizeof(lo), json_number_value(json_array_get(ci, 0)));
			fmt_pct(hi, sizeof(hi), json_number_value(json_array_get(ci, 1)));
			strbuf_addf(s, "%.0f%% CI %s to %s: neither a clear change nor within +-%.3g%%",
				    level * 100, lo, hi, margin);
		} else {
			strbuf_addstr(s, "no interval: neither a clear change nor the same");
		}
		if (num(row, "mde_pct", &y) == 0) {
			strbuf_addf(s, "; could detect +-%.3g%%", y);
		} else if (str(row, "mde_note")) {
			strbuf_addstr(s, "; ");
			add_clean(s, str(row, "mde_note"));
		} else if (mde_known) {
			strbuf_addstr(s, "; could detect no change at this noise");
		}
	} else if (json_array_size(ci) == 2 && json_is_number(json_array_get(ci, 0))) {
		fmt_pct(lo, sizeof(lo), json_number_value(json_array_get(ci, 0)));
		fmt_pct(hi, sizeof(hi), json_number_value(json_array_get(ci, 1)));
		strbuf_addf(s, "%.0f%% CI of the change %s to %s", level * 100, lo, hi);
	}
	if (json_array_size(ci_abs) == 2 && json_is_number(json_array_get(ci_abs, 0))) {
		fmt_value(lo, sizeof(lo), json_number_value(json_array_get(ci_abs, 0)));
		fmt_value(hi, sizeof(hi), json_number_value(json_array_get(ci_abs, 1)));
		strbuf_addf(s, "%sbase 0: patched - base in [%s, %s]", s->len ? "; " : "", lo, hi);
		if (str(row, "unit")) {
			strbuf_addch(s, ' ');
			add_clean(s, str(row, "unit"));
		}
	}
	if (outl > 0)
		strbuf_addf(s, "%s%lld outlying boot%s flagged", s->len ? "; " : "", outl, outl == 1 ? "" : "s");
	if (str(row, "note")) {
		strbuf_addstr(s, s->len ? "; " : "");
		add_clean(s, str(row, "note"));
	}
}

/* A row: its metric and case, the numbers under them, a note under those. */
static void table_row(struct strbuf *out, const json_t *row, const json_t *rules, int with_padj)
{
	struct strbuf s = STRBUF_INIT;
	char b[48], p[48], ch[32] = "-", pv[32] = "-", pa[32] = "-";
	double x;

	add_clean(&s, str(row, "metric") ?: "?");
	if (str(row, "unit") && *str(row, "unit")) {
		strbuf_addstr(&s, " [");
		add_clean(&s, str(row, "unit"));
		strbuf_addch(&s, ']');
	}
	strbuf_addstr(&s, ", ");
	add_case(&s, row);
	para(out, "  ", 6, s.buf);
	side_cell(b, sizeof(b), json_object_get(row, "base"));
	side_cell(p, sizeof(p), json_object_get(row, "patched"));
	if (num(row, "change_pct", &x) == 0)
		fmt_pct(ch, sizeof(ch), x);
	if (num(row, "p", &x) == 0)
		fmt_p(pv, sizeof(pv), x);
	if (num(row, "p_adj", &x) == 0)
		fmt_p(pa, sizeof(pa), x);
	strbuf_addf(out, "  %16s  %16s %7s %6s", b, p, ch, pv);
	if (with_padj)
		strbuf_addf(out, " %6s", pa);
	strbuf_addstr(out, "  ");
	add_clean(out, str(row, "verdict") ?: "?");
	strbuf_addch(out, '\n');
	strbuf_reset(&s);
	row_note(&s, row, rules);
	if (s.len)
		para(out, "    ", 4, s.buf);
	strbuf_release(&s);
}

static const char *padj_method(const json_t *rows, int headline)
{
	const json_t *row;
	size_t i;

	json_array_foreach(rows, i, row)
		if (is_headline(row) == headline && str(row, "p_adj_method")) {
			const char *m = str(row, "p_adj_method");

			if (!strcmp(m, "holm"))
				return "Holm (family-wise)";
			if (!strcmp(m, "bh"))
				return "Benjamini-Hochberg (false discovery rate)";
			return m;
		}
	return NULL;
}

static int any_padj(const json_t *rows, int headline)
{
	const json_t *row;
	size_t i;

	json_array_foreach(rows, i, row)
		if (is_headline(row) == headline && json_object_get(row, "p_adj"))
			return 1;
	return 0;
}

static void headline_table(struct report *r)
{
	const json_t *rows = arr(r->cmp, "rows"), *row, *rules = json_object_get(r->cmp, "rules");
	struct strbuf s = STRBUF_INIT;
	int padj = any_padj(rows, 1);
	const char *m = padj_method(rows, 1);
	size_t i, n = 0;

	json_array_foreach(rows, i, row)
		n += is_headline(row);
	heading(r->out, "headline metrics");
	if (!n) {
		para(r->out, "  ", 2, "no headline metric was compared");
		return;
	}
	strbuf_addstr(&s, "median over boots +- stddev/mean of the per-boot samples; %change of the medians; "
		      "p: two-sided Mann-Whitney U");
	if (padj) {
		strbuf_addstr(&s, "; p_adj: p adjusted over the headline rows");
		if (m)
			strbuf_addf(&s, " by %s", m);
	}
	para(r->out, "  ", 2, s.buf);
	strbuf_addch(r->out, '\n');
	table_head(r->out, padj);
	json_array_foreach(rows, i, row)
		if (is_headline(row))
			table_row(r->out, row, rules, padj);
	strbuf_release(&s);
}

static int by_change(const void *a, const void *b)
{
	double x = 0, y = 0;
	int hx = num(*(const json_t *const *)a, "change_pct", &x) == 0;
	int hy = num(*(const json_t *const *)b, "change_pct", &y) == 0;

	if (hx != hy)
		return hy - hx;
	return fabs(y) > fabs(x) ? 1 : fabs(y) < fabs(x) ? -1 : 0;
}

/* The other metrics (counters, derived) that moved, largest first. */
static void counter_table(struct report *r)
{
	const json_t *rows = arr(r->cmp, "rows"), *row, *rules = json_object_get(r->cmp, "rules");
	const json_t **moved = calloc(json_array_size(rows) + 1, sizeof(*moved));
	struct strbuf s = STRBUF_INIT;
	size_t i, n = 0, total = 0;
	int padj;
	const char *m = padj_method(rows, 0);

	if (!moved)
		abort();
	json_array_foreach(rows, i, row) {
		if (is_headline(row))
			continue;
		total++;
		if (verdict_is(row, "regression") || verdict_is(row, "improvement") || verdict_is(row, "changed"))
			moved[n++] = row;
	}
	if (!n)
		goto out;
	qsort(moved, n, sizeof(*moved), by_change);
	padj = any_padj(rows, 0);
	heading(r->out, "other metrics that moved");
	strbuf_addf(&s, "%zu of %zu rows of counters and derived metrics, largest change first", n, total);
	if (padj) {
		strbuf_addstr(&s, "; p_adj: p adjusted over those rows");
		if (m)
			strbuf_addf(&s, " by %s", m);
	}
	para(r->out, "  ", 2, s.buf);
	strbuf_addch(r->out, '\n');
	table_head(r->out, padj);
	for (i = 0; i < n && i < MAX_COUNTER_ROWS; i++)
		table_row(r->out, moved[i], rules, padj);
	if (n > MAX_COUNTER_ROWS)
		strbuf_addf(r->out, "  (%zu more; `tlblab compare %lld` lists them all)\n", n - MAX_COUNTER_ROWS,
			    r->id);
out:
	strbuf_release(&s);
	free(moved);
}

/* ---- TLB shootdowns ---- */

static void tlb_line(struct strbuf *out, const char *name, const double *b, const double *p, const char *verdict)
{
	char vb[32] = "-", vp[32] = "-", ch[32] = "";

	if (width(name, strlen(name)) > 22) {
		strbuf_addf(out, "    %s\n", name);
		name = "";
	}
	if (b)
		fmt_value(vb, sizeof(vb), *b);
	if (p)
		fmt_value(vp, sizeof(vp), *p);
	if (b && p && *b != 0)
		fmt_pct(ch, sizeof(ch), (*p / *b - 1) * 100);
	else if (b && p)
		snprintf(ch, sizeof(ch), "-");
	strbuf_addf(out, "    %-22s %10s %10s %8s", name, vb, vp, ch);
	if (verdict)
		strbuf_addf(out, "  %s", verdict);
	while (out->len && out->buf[out->len - 1] == ' ')
		strbuf_setlen(out, out->len - 1);
	strbuf_addch(out, '\n');
}

static void tlb_block(struct report *r)
{
	const json_t *e, *c;
	struct strbuf s = STRBUF_INIT, name = STRBUF_INIT, v = STRBUF_INIT;
	size_t i, k, shown = 0;

	heading(r->out, "TLB shootdowns");
	json_array_foreach(arr(r->cmp, "tlb"), i, e) {
		const json_t *spk = json_object_get(e, "shootdowns_per_kop");
		double b, p;
		int hb, hp;

		if (!json_is_object(spk) && !json_array_size(arr(e, "counters")))
			continue;
		if (!shown)
			para(r->out, "  ", 2, "medians over boots; shootdowns per thousand operations, and the "
			     "counters per second of the measured windows: the average, then the busiest second");
		strbuf_addch(r->out, '\n');
		strbuf_reset(&s);
		add_case(&s, e);
		para(r->out, "  ", 4, s.buf);
		strbuf_addf(r->out, "    %-22s %10s %10s %8s  %s\n", "", "base", "patched", "%change", "verdict");
		if (json_is_object(spk)) {
			hb = num(spk, "base", &b) == 0;
			hp = num(spk, "patched", &p) == 0;
			strbuf_reset(&v);
			add_clean(&v, str(spk, "verdict") ?: "");
			tlb_line(r->out, "shootdowns/kop", hb ? &b : NULL, hp ? &p : NULL, v.buf);
		}
		json_array_foreach(arr(e, "counters"), k, c) {
			const json_t *cb = json_object_get(c, "base"), *cp = json_object_get(c, "patched");

			strbuf_reset(&name);
			add_clean(&name, str(c, "name") ?: "?");
			strbuf_addstr(&name, "/s");
			strbuf_reset(&v);
			add_clean(&v, str(c, "verdict") ?: "");
			hb = num(cb, "per_sec", &b) == 0;
			hp = num(cp, "per_sec", &p) == 0;
			tlb_line(r->out, name.buf, hb ? &b : NULL, hp ? &p : NULL, v.buf);
			hb = num(cb, "peak_per_sec", &b) == 0;
			hp = num(cp, "peak_per_sec", &p) == 0;
			if (hb || hp)
				tlb_line(r->out, "  busiest second", hb ? &b : NULL, hp ? &p : NULL, NULL);
		}
		shown++;
	}
	if (!shown)
		para(r->out, "  ", 2, "no TLB counters in this comparison (none of its workloads had them)");
	strbuf_release(&s);
	strbuf_release(&name);
	strbuf_release(&v);
}

/* ---- profile ---- */

static void profile_block(struct report *r)
{
	const json_t *pd = json_object_get(r->cmp, "profile_diff"), *sym;
	long long nb = integer(json_object_get(pd, "profiles"), "base", 0);
	long long np = integer(json_object_get(pd, "profiles"), "patched", 0);
	struct strbuf s = STRBUF_INIT;
	size_t i, shown = 0, moved = 0;

	if (!json_is_object(pd))
		return;
	heading(r->out, "profile");
	if (nb || np) {
		strbuf_addf(&s, "self %% of the samples, averaged over %lld base and %lld patched profiles; "
			    "the symbols that moved by %.1f points or more", nb, np, SYMBOL_MOVED);
		para(r->out, "  ", 2, s.buf);
	}
	if (str(pd, "reason")) {
		strbuf_reset(&s);
		add_clean(&s, str(pd, "reason"));
		para(r->out, "  ", 2, s.buf);
	}
	if (str(pd, "blind_spot")) {
		strbuf_reset(&s);
		add_clean(&s, str(pd, "blind_spot"));
		para(r->out, "  ", 2, s.buf);
	}
	json_array_foreach(arr(pd, "symbols"), i, sym) {
		double b, p, d;
		char vb[32], vp[32], vd[32];

		if (num(sym, "delta", &d) < 0 || fabs(d) < SYMBOL_MOVED || num(sym, "base_self", &b) < 0 ||
		    num(sym, "patched_self", &p) < 0)
			continue;
		if (moved++ >= MAX_SYMBOLS)
			continue;
		if (!shown++)
			strbuf_addf(r->out, "\n    %-34s %7s %8s %8s\n", "symbol", "base", "patched", "delta");
		strbuf_reset(&s);
		add_clean(&s, str(sym, "symbol") ?: "?");
		if (str(sym, "source") && !strcmp(str(sym, "source"), "ftrace"))
			strbuf_addstr(&s, " (ftrace)");
		if (width(s.buf, s.len) > 34) {
			strbuf_addf(r->out, "    %s\n", s.buf);
			strbuf_reset(&s);
		}
		snprintf(vb, sizeof(vb), "%.2f", b);
		snprintf(vp, sizeof(vp), "%.2f", p);
		snprintf(vd, sizeof(vd), "%+.2f", d);
		strbuf_addf(r->out, "    %s%*s %7s %8s %8s\n", s.buf, (int)(34 - width(s.buf, s.len)), "", vb, vp, vd);
	}
	if (moved > MAX_SYMBOLS)
		strbuf_addf(r->out, "    (%zu more)\n", moved - MAX_SYMBOLS);
	if (!moved && (nb || np))
		para(r->out, "  ", 2, "no symbol moved that much");
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
	const json_t *failed = arr(r->cmp, "failed"), *f, *e = json_object_get(r->job, "error");
	struct strbuf s = STRBUF_INIT, where = STRBUF_INIT;
	size_t i, j;

	if (!json_array_size(failed) && !json_is_object(e))
		return;
	heading(r->out, "what failed (never averaged in)");
	if (json_is_object(e)) {
		strbuf_addstr(&s, "the job: ");
		add_clean(&s, str(e, "class") ?: "error");
		strbuf_addstr(&s, ": ");
		add_clean(&s, str(e, "message") ?: "no message");
		para(r->out, "  ", 4, s.buf);
	}
	for (i = 0; i < json_array_size(failed); i = j) {
		size_t k, nstages = 0;

		f = json_array_get(failed, i);
		for (j = i + 1; j < json_array_size(failed) && same_failure(f, json_array_get(failed, j)); j++)
			;
		strbuf_reset(&s);
		strbuf_reset(&where);
		add_clean(&s, str(f, "side") ?: "?");
		if (integer(f, "spec", -1) >= 0)
			strbuf_addf(&s, " spec %lld", integer(f, "spec", -1));
		if (str(f, "workload")) {
			strbuf_addstr(&s, " (");
			add_clean(&s, str(f, "workload"));
			strbuf_addch(&s, ')');
		}
		if (integer(f, "case", -1) >= 0)
			strbuf_addf(&s, " case %lld", integer(f, "case", -1));
		if (integer(f, "run", -1) >= 0)
			strbuf_addf(&s, " run %lld", integer(f, "run", -1));
		for (k = i; k < j; k++)
			if (integer(json_array_get(failed, k), "stage", -1) >= 0)
				strbuf_addf(&where, "%s%lld", nstages++ ? ", " : "",
					    integer(json_array_get(failed, k), "stage", -1));
		if (nstages)
			strbuf_addf(&s, ", in the stage%s at seq %s", nstages == 1 ? "" : "s", where.buf);
		if (j - i > 1)
			strbuf_addf(&s, " (%zu times)", j - i);
		strbuf_addstr(&s, ": ");
		add_clean_json(&s, json_object_get(f, "reason"));
		para(r->out, "  ", 4, s.buf);
	}
	strbuf_release(&s);
	strbuf_release(&where);
}

static void notes(struct report *r)
{
	const json_t *n;
	struct strbuf s = STRBUF_INIT;
	size_t i;

	if (!json_array_size(arr(r->cmp, "notes")))
		return;
	heading(r->out, "notes");
	json_array_foreach(arr(r->cmp, "notes"), i, n) {
		if (!json_is_string(n))
			continue;
		strbuf_reset(&s);
		add_clean(&s, json_string_value(n));
		para(r->out, "  - ", 4, s.buf);
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

	add_clean(&clean, word);
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
	const char *kind = str(job, "patch_kind") ?: "";
	long long boots = integer(job, "boots", 0), max = integer(job, "max_boots", 0);
	struct strbuf w = STRBUF_INIT;
	size_t col;
	char num_buf[32];

	if (json_is_object(design) && integer(design, "boots", 0) > 0) {
		boots = integer(design, "boots", boots);
		max = integer(design, "max_boots", max);
	}
	heading(r->out, "to reproduce");
	strbuf_addstr(r->out, "  tlblab submit");
	col = 15;
	cmd_option(r->out, &col, "--suite", str(job, "suite") ?: "?");
	cmd_option(r->out, &col, "--tree", str(job, "tree") ?: "?");
	cmd_option(r->out, &col, "--base", str(job, "base") ?: "?");
	if (!strcmp(kind, "branch")) {
		strbuf_addstr(&w, "--branch ");
		add_shell_word(&w, str(job, "patch_url") ?: "?");
		cmd_word(r->out, &col, w.buf);
		strbuf_reset(&w);
		add_shell_word(&w, str(job, "patch_ref") ?: "?");
		cmd_word(r->out, &col, w.buf);
	} else if (!strcmp(kind, "url")) {
		cmd_option(r->out, &col, "--url", str(job, "patch_url") ?: "?");
	} else {
		add_patch_file(&w, str(job, "patch_subject"));
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
	if (json_array_size(arr(job, "machines"))) {
		strbuf_reset(&w);
		add_strings(&w, arr(job, "machines"), ",");
		cmd_option(r->out, &col, "--machines", w.buf);
	}
	if (json_array_size(arr(job, "tags"))) {
		strbuf_reset(&w);
		add_strings(&w, arr(job, "tags"), ",");
		cmd_option(r->out, &col, "--tags", w.buf);
	}
	cmd_word(r->out, &col, "--wait");
	strbuf_addf(r->out, "\n  tlblab compare %lld\n", r->id);
	if (strcmp(kind, "branch") && strcmp(kind, "url")) {
		strbuf_addch(r->out, '\n');
		para(r->out, "  ", 2, "where the --patch file is the patch as it was submitted with the job");
	}
	strbuf_release(&w);
}

int report_text(const json_t *job, const json_t *comparison, struct strbuf *out, struct strbuf *err)
{
	struct report r = { .out = out, .job = job, .cmp = comparison };
	const char *state = str(job, "state");
	size_t from = out->len;

	if (!json_is_object(job) || !str(job, "kind") || strcmp(str(job, "kind"), "ab"))
		return strbuf_seterr(err, "report: not an A/B job");
	if (!json_is_object(comparison) || !arr(comparison, "rows"))
		return strbuf_seterr(err, "report: the comparison has no rows");
	r.id = integer(job, "id", 0);
	r.failed = state && (!strcmp(state, "failed") || !strcmp(state, "cancelled"));
	opening(&r);
	machine_facts(&r);
	headline_table(&r);
	counter_table(&r);
	tlb_block(&r);
	profile_block(&r);
	failures(&r);
	notes(&r);
	reproduce(&r);
	text_fit(out, from, REPORT_WIDTH);
	return 0;
}
