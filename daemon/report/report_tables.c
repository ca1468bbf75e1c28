/*
 * The sections of the report that are tables of numbers: the headline
 * metrics, the other metrics that moved, the TLB shootdown counters and
 * the profile lines that moved. A table row whose name does not fit its
 * column puts the name on a line of its own and the numbers on the next.
 */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_class.h"
#include "report_int.h"
#include "util.h"
#include "banned.h"

#define MAX_COUNTER_ROWS 20	/* other metrics that moved, largest first */
#define MAX_SYMBOLS 15		/* profile lines */
#define SYMBOL_MOVED 0.5	/* points of self % */

/* ---- tables of rows ---- */

/* "400002 +- 0.3%": a side's median over boots and its spread */
static void side_cell(char *buf, size_t n, const json_t *side)
{
	char v[32], sp[32] = "";
	double c, s;

	if (jsonget_num(side, "center", &c) < 0) {
		snprintf(buf, n, "-%8s", "");
		return;
	}
	report_fmt_value(v, sizeof(v), c);
	/* no spread (one boot): the value stays in line with the others */
	if (jsonget_num(side, "spread_pct", &s) == 0)
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

/* "work and wait": the classes tested by Welch's t on logs (their rows) */
static void log_t_classes(struct strbuf *s)
{
	size_t i, n = 0, k = 0;

	for (i = 0; i < compare_class_count(); i++)
		n += !!(compare_class_at(i)->flags & COMPARE_CLASS_LOG_T);
	for (i = 0; i < compare_class_count(); i++)
		if (compare_class_at(i)->flags & COMPARE_CLASS_LOG_T)
			strbuf_addf(s, "%s%s", k++ ? (k == n ? " and " : ", ") : "", compare_class_at(i)->name);
}

/* The note under a row: how sure its verdict is, or why it has none. */
static void row_note(struct strbuf *s, const json_t *row, const json_t *rules)
{
	const json_t *ci = json_object_get(row, "ci"), *eq = json_object_get(row, "equiv_ci");
	const json_t *ci_abs = json_object_get(row, "ci_abs");
	char lo[32], hi[32], m[32];
	double level = 0.95, margin, x, y;
	long long outl = jsonget_int_or(row, "outliers", 0);

	jsonget_num(rules, "ci_level", &level);
	/* a bootstrap of so few boots that it has a lower level says which */
	jsonget_num(row, "ci_level", &level);
	if (jsonget_num(row, "margin_pct", &margin) < 0) {
		margin = NAN;
		if (jsonget_num(rules, "same_band", &x) == 0)
			margin = x * 100;
	}
	if (verdict_is(row, "unavailable")) {
		strbuf_addstr(s, "unavailable: ");
		report_add_clean(s, jsonget_str(row, "reason") ?: "no value on one side");
	} else if (verdict_is(row, "same")) {
		if (json_array_size(eq) == 2 && json_is_number(json_array_get(eq, 0)))
			ci = eq;
		/* same promises no change the row would call */
		if (jsonget_num(row, "min_change_pct", &x) == 0 && !(x > margin))
			margin = x;
		snprintf(m, sizeof(m), "%.3g%%", margin);
		strbuf_addf(s, "the same within +-%s", isnan(margin) ? "its margin" : m);
		if (json_array_size(ci) == 2 && json_is_number(json_array_get(ci, 0))) {
			report_fmt_pct(lo, sizeof(lo), json_number_value(json_array_get(ci, 0)));
			report_fmt_pct(hi, sizeof(hi), json_number_value(json_array_get(ci, 1)));
			strbuf_addf(s, " (equivalence interval %s to %s)", lo, hi);
		}
		if (jsonget_num(row, "mde_pct", &y) == 0)
			strbuf_addf(s, "; could detect +-%.3g%%", y);
	} else if (verdict_is(row, "inconclusive")) {
		int mde_known = json_object_get(row, "mde_pct") != NULL;

		if (jsonget_num(row, "no_change_beyond_pct", &x) == 0 && json_array_size(eq) == 2 &&
		    json_is_number(json_array_get(eq, 0))) {
			report_fmt_pct(lo, sizeof(lo), json_number_value(json_array_get(eq, 0)));
			report_fmt_pct(hi, sizeof(hi), json_number_value(json_array_get(eq, 1)));
			strbuf_addf(s, "no change beyond +-%.3g%% (equivalence interval %s to %s), but not the "
				    "same: that needs +-%.3g%%", x, lo, hi, jsonget_num_or(row, "min_change_pct", x));
		} else if (jsonget_num(row, "ruled_out_pct", &x) == 0) {
			strbuf_addf(s, "changes beyond +-%.3g%% ruled out", x);
		} else if (json_array_size(ci) == 2 && json_is_number(json_array_get(ci, 0))) {
			report_fmt_pct(lo, sizeof(lo), json_number_value(json_array_get(ci, 0)));
			report_fmt_pct(hi, sizeof(hi), json_number_value(json_array_get(ci, 1)));
			strbuf_addf(s, "%.0f%% CI %s to %s: neither a clear change nor within +-%.3g%%",
				    level * 100, lo, hi, margin);
		} else {
			strbuf_addstr(s, "no interval: neither a clear change nor the same");
		}
		if (jsonget_num(row, "mde_pct", &y) == 0) {
			strbuf_addf(s, "; could detect +-%.3g%%", y);
		} else if (jsonget_str(row, "mde_note")) {
			strbuf_addstr(s, "; ");
			report_add_clean(s, jsonget_str(row, "mde_note"));
		} else if (mde_known) {
			strbuf_addstr(s, "; could detect no change at this noise");
		}
	} else if (json_array_size(ci) == 2 && json_is_number(json_array_get(ci, 0))) {
		report_fmt_pct(lo, sizeof(lo), json_number_value(json_array_get(ci, 0)));
		report_fmt_pct(hi, sizeof(hi), json_number_value(json_array_get(ci, 1)));
		strbuf_addf(s, "%.0f%% CI of the change %s to %s", level * 100, lo, hi);
	}
	if (json_array_size(ci_abs) == 2 && json_is_number(json_array_get(ci_abs, 0))) {
		report_fmt_value(lo, sizeof(lo), json_number_value(json_array_get(ci_abs, 0)));
		report_fmt_value(hi, sizeof(hi), json_number_value(json_array_get(ci_abs, 1)));
		strbuf_addf(s, "%sbase 0: patched - base in [%s, %s]", s->len ? "; " : "", lo, hi);
		if (jsonget_str(row, "unit")) {
			strbuf_addch(s, ' ');
			report_add_clean(s, jsonget_str(row, "unit"));
		}
	}
	if (outl > 0)
		strbuf_addf(s, "%s%lld outlying boot%s flagged", s->len ? "; " : "", outl, outl == 1 ? "" : "s");
	if (jsonget_str(row, "note")) {
		strbuf_addstr(s, s->len ? "; " : "");
		report_add_clean(s, jsonget_str(row, "note"));
	}
}

/* A row: its metric and case, the numbers under them, a note under those. */
static void table_row(struct strbuf *out, const json_t *row, const json_t *rules, int with_padj)
{
	struct strbuf s = STRBUF_INIT;
	char b[48], p[48], ch[32] = "-", pv[32] = "-", pa[32] = "-";
	double x;

	report_add_clean(&s, jsonget_str(row, "metric") ?: "?");
	if (jsonget_str(row, "unit") && *jsonget_str(row, "unit")) {
		strbuf_addstr(&s, " [");
		report_add_clean(&s, jsonget_str(row, "unit"));
		strbuf_addch(&s, ']');
	}
	/* the class: emulated instructions are not hardware cycles */
	if (jsonget_str(row, "class")) {
		strbuf_addstr(&s, " (");
		report_add_clean(&s, jsonget_str(row, "class"));
		strbuf_addch(&s, ')');
	}
	strbuf_addstr(&s, ", ");
	report_add_case(&s, row);
	report_para(out, "  ", 6, s.buf);
	side_cell(b, sizeof(b), json_object_get(row, "base"));
	side_cell(p, sizeof(p), json_object_get(row, "patched"));
	if (jsonget_num(row, "change_pct", &x) == 0)
		report_fmt_pct(ch, sizeof(ch), x);
	if (jsonget_num(row, "p", &x) == 0)
		report_fmt_p(pv, sizeof(pv), x);
	if (jsonget_num(row, "p_adj", &x) == 0)
		report_fmt_p(pa, sizeof(pa), x);
	strbuf_addf(out, "  %16s  %16s %7s %6s", b, p, ch, pv);
	if (with_padj)
		strbuf_addf(out, " %6s", pa);
	strbuf_addstr(out, "  ");
	report_add_clean(out, jsonget_str(row, "verdict") ?: "?");
	strbuf_addch(out, '\n');
	strbuf_reset(&s);
	row_note(&s, row, rules);
	if (s.len)
		report_para(out, "    ", 4, s.buf);
	strbuf_release(&s);
}

static const char *padj_method(const json_t *rows, int headline)
{
	const json_t *row;
	size_t i;

	json_array_foreach(rows, i, row)
		if (is_headline(row) == headline && jsonget_str(row, "p_adj_method")) {
			const char *m = jsonget_str(row, "p_adj_method");

			if (!strcmp(m, "holm"))
				return "Holm (family-wise)";
			if (!strcmp(m, "bh"))
				return "Benjamini-Hochberg (false discovery rate)";
			return m;
		}
	return NULL;
}

int report_any_padj(const json_t *rows, int headline)
{
	const json_t *row;
	size_t i;

	json_array_foreach(rows, i, row)
		if (is_headline(row) == headline && json_object_get(row, "p_adj"))
			return 1;
	return 0;
}

void report_headline_table(struct report *r)
{
	const json_t *rows = jsonget_array(r->cmp, "rows"), *row, *rules = json_object_get(r->cmp, "rules");
	struct strbuf s = STRBUF_INIT;
	int padj = report_any_padj(rows, 1);
	const char *m = padj_method(rows, 1);
	size_t i, n = 0, scores = 0;

	json_array_foreach(rows, i, row) {
		n += is_headline(row);
		scores += is_score(row);
	}
	report_heading(r->out, "headline metrics");
	if (!n) {
		report_para(r->out, "  ", 2, "no headline metric was compared");
		return;
	}
	strbuf_addstr(&s, "median over boots +- stddev/mean of the per-boot samples; %change of the medians; "
		      "p: two-sided Mann-Whitney U, or Welch's t on log values for ");
	log_t_classes(&s);
	strbuf_addstr(&s, " rows");
	if (padj) {
		strbuf_addstr(&s, "; p_adj: p adjusted over the headline rows");
		if (m)
			strbuf_addf(&s, " by %s", m);
	}
	report_para(r->out, "  ", 2, s.buf);
	strbuf_addch(r->out, '\n');
	table_head(r->out, padj);
	json_array_foreach(rows, i, row)
		if (is_headline(row))
			table_row(r->out, row, rules, padj);
	strbuf_reset(&s);
	strbuf_addf(&s, "classes: %s", compare_class_legend());
	strbuf_addch(r->out, '\n');
	report_para(r->out, "  ", 2, s.buf);
	if (scores) {
		strbuf_addch(r->out, '\n');
		report_para(r->out, "  ", 2, "the workloads' time scores: the instruction rows above are the "
			    "headline (the emulator's, whose time is not the hardware's, or perf's on a real "
			    "machine, less noisy than its clock), so these have a verdict of their own (p_adj by "
			    "Holm over them), not the job's");
		strbuf_addch(r->out, '\n');
		table_head(r->out, padj);
		json_array_foreach(rows, i, row)
			if (is_score(row))
				table_row(r->out, row, rules, padj);
	}
	strbuf_release(&s);
}

static int by_change(const void *a, const void *b)
{
	double x = 0, y = 0;
	int hx = jsonget_num(*(const json_t *const *)a, "change_pct", &x) == 0;
	int hy = jsonget_num(*(const json_t *const *)b, "change_pct", &y) == 0;

	if (hx != hy)
		return hy - hx;
	return fabs(y) > fabs(x) ? 1 : fabs(y) < fabs(x) ? -1 : 0;
}

/* The other metrics (counters, derived) that moved, largest first. */
void report_counter_table(struct report *r)
{
	const json_t *rows = jsonget_array(r->cmp, "rows"), *row, *rules = json_object_get(r->cmp, "rules");
	const json_t **moved = calloc(json_array_size(rows) + 1, sizeof(*moved));
	struct strbuf s = STRBUF_INIT;
	size_t i, n = 0, total = 0;
	int padj;
	const char *m = padj_method(rows, 0);

	if (!moved)
		abort();
	json_array_foreach(rows, i, row) {
		if (is_headline(row) || is_score(row) || verdict_is(row, "context"))
			continue;
		total++;
		if (verdict_is(row, "regression") || verdict_is(row, "improvement") || verdict_is(row, "changed"))
			moved[n++] = row;
	}
	if (!n)
		goto out;
	qsort(moved, n, sizeof(*moved), by_change);
	padj = report_any_padj(rows, 0);
	report_heading(r->out, "other metrics that moved");
	strbuf_addf(&s, "%zu of %zu rows of counters and derived metrics, largest change first", n, total);
	if (padj) {
		strbuf_addstr(&s, "; p_adj: p adjusted over those rows");
		if (m)
			strbuf_addf(&s, " by %s", m);
	}
	report_para(r->out, "  ", 2, s.buf);
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
		report_fmt_value(vb, sizeof(vb), *b);
	if (p)
		report_fmt_value(vp, sizeof(vp), *p);
	if (b && p && *b != 0)
		report_fmt_pct(ch, sizeof(ch), (*p / *b - 1) * 100);
	else if (b && p)
		snprintf(ch, sizeof(ch), "-");
	strbuf_addf(out, "    %-22s %10s %10s %8s", name, vb, vp, ch);
	if (verdict)
		strbuf_addf(out, "  %s", verdict);
	while (out->len && out->buf[out->len - 1] == ' ')
		strbuf_setlen(out, out->len - 1);
	strbuf_addch(out, '\n');
}

/* The shootdown counters a side's kernels could not give, with the agent's
 * reason (arm64: a flush is a TLBI instruction, which nothing counts). */
static void tlb_unavailable_line(struct report *r, struct strbuf *s, const char *name, const char *where,
				 const char *why)
{
	strbuf_reset(s);
	strbuf_addf(s, "%s unavailable on %s: ", name, where);
	report_add_clean(s, why);
	report_para(r->out, "  ", 2, s->buf);
}

static void tlb_unavailable(struct report *r, struct strbuf *s)
{
	static const char *const names[] = { "interrupts.TLB", "tlb_flush.*", "vmstat.nr_tlb_remote_flush" };
	const json_t *u = json_object_get(r->cmp, "unavailable");
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		const char *wb = jsonget_str(json_object_get(u, "base"), names[i]);
		const char *wp = jsonget_str(json_object_get(u, "patched"), names[i]);

		if (wb && wp && !strcmp(wb, wp)) {
			tlb_unavailable_line(r, s, names[i], "both sides", wb);
			continue;
		}
		if (wb)
			tlb_unavailable_line(r, s, names[i], "base", wb);
		if (wp)
			tlb_unavailable_line(r, s, names[i], "patched", wp);
	}
}

void report_tlb_block(struct report *r)
{
	const json_t *e, *c;
	struct strbuf s = STRBUF_INIT, name = STRBUF_INIT, v = STRBUF_INIT;
	size_t i, k, shown = 0;

	report_heading(r->out, "TLB shootdowns");
	json_array_foreach(jsonget_array(r->cmp, "tlb"), i, e) {
		const json_t *spk = json_object_get(e, "shootdowns_per_kop");
		double b, p;
		int hb, hp;

		if (!json_is_object(spk) && !json_array_size(jsonget_array(e, "counters")))
			continue;
		if (!shown)
			report_para(r->out, "  ", 2, "medians over boots; shootdowns per thousand operations, and the "
			     "counters per second of the measured windows: the average, then the busiest second");
		strbuf_addch(r->out, '\n');
		strbuf_reset(&s);
		report_add_case(&s, e);
		report_para(r->out, "  ", 4, s.buf);
		strbuf_addf(r->out, "    %-22s %10s %10s %8s  %s\n", "", "base", "patched", "%change", "verdict");
		if (json_is_object(spk)) {
			hb = jsonget_num(spk, "base", &b) == 0;
			hp = jsonget_num(spk, "patched", &p) == 0;
			strbuf_reset(&v);
			report_add_clean(&v, jsonget_str(spk, "verdict") ?: "");
			tlb_line(r->out, "shootdowns/kop", hb ? &b : NULL, hp ? &p : NULL, v.buf);
		}
		json_array_foreach(jsonget_array(e, "counters"), k, c) {
			const json_t *cb = json_object_get(c, "base"), *cp = json_object_get(c, "patched");

			strbuf_reset(&name);
			report_add_clean(&name, jsonget_str(c, "name") ?: "?");
			strbuf_addstr(&name, "/s");
			strbuf_reset(&v);
			report_add_clean(&v, jsonget_str(c, "verdict") ?: "");
			hb = jsonget_num(cb, "per_sec", &b) == 0;
			hp = jsonget_num(cp, "per_sec", &p) == 0;
			tlb_line(r->out, name.buf, hb ? &b : NULL, hp ? &p : NULL, v.buf);
			hb = jsonget_num(cb, "peak_per_sec", &b) == 0;
			hp = jsonget_num(cp, "peak_per_sec", &p) == 0;
			if (hb || hp)
				tlb_line(r->out, "  busiest second", hb ? &b : NULL, hp ? &p : NULL, NULL);
		}
		shown++;
	}
	if (!shown)
		report_para(r->out, "  ", 2, "no TLB counters in this comparison (none of its workloads had them)");
	tlb_unavailable(r, &s);
	strbuf_release(&s);
	strbuf_release(&name);
	strbuf_release(&v);
}

/* ---- profile ---- */

void report_profile_block(struct report *r)
{
	const json_t *pd = json_object_get(r->cmp, "profile_diff"), *sym;
	long long nb = jsonget_int_or(json_object_get(pd, "profiles"), "base", 0);
	long long np = jsonget_int_or(json_object_get(pd, "profiles"), "patched", 0);
	struct strbuf s = STRBUF_INIT;
	size_t i, shown = 0, moved = 0;

	if (!json_is_object(pd))
		return;
	report_heading(r->out, "profile");
	if (nb || np) {
		strbuf_addf(&s, "self %% of the samples, averaged over %lld base and %lld patched profiles; "
			    "the symbols that moved by %.1f points or more", nb, np, SYMBOL_MOVED);
		report_para(r->out, "  ", 2, s.buf);
	}
	if (jsonget_str(pd, "reason")) {
		strbuf_reset(&s);
		report_add_clean(&s, jsonget_str(pd, "reason"));
		report_para(r->out, "  ", 2, s.buf);
	}
	if (jsonget_str(pd, "blind_spot")) {
		strbuf_reset(&s);
		report_add_clean(&s, jsonget_str(pd, "blind_spot"));
		report_para(r->out, "  ", 2, s.buf);
	}
	json_array_foreach(jsonget_array(pd, "symbols"), i, sym) {
		double b, p, d;
		char vb[32], vp[32], vd[32];

		if (jsonget_num(sym, "delta", &d) < 0 || fabs(d) < SYMBOL_MOVED ||
		    jsonget_num(sym, "base_self", &b) < 0 || jsonget_num(sym, "patched_self", &p) < 0)
			continue;
		if (moved++ >= MAX_SYMBOLS)
			continue;
		if (!shown++)
			strbuf_addf(r->out, "\n    %-34s %7s %8s %8s\n", "symbol", "base", "patched", "delta");
		strbuf_reset(&s);
		report_add_clean(&s, jsonget_str(sym, "symbol") ?: "?");
		if (jsonget_str(sym, "source") && !strcmp(jsonget_str(sym, "source"), "ftrace"))
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
		report_para(r->out, "  ", 2, "no symbol moved that much");
	strbuf_release(&s);
}
