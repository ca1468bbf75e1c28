/*
 * What the sections of the report (report_text.c, report_tables.c) write with:
 * strings from the documents, cleaned; numbers in the report's few
 * formats; key-value lines, paragraphs and headings at the report's width
 * (textwrap.h); a row's case in words.
 */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report_int.h"
#include "textwrap.h"
#include "banned.h"

#define CLEAN_MAX 2000		/* bytes of one string from the documents */
#define KEY_INDENT 13		/* "  machines:  " */

/* ---- reading the documents ---- */

/* s, cleaned, appended to sb ("" for NULL). */
void report_add_clean(struct strbuf *sb, const char *s)
{
	if (s)
		strbuf_add_line_clean(sb, s, strlen(s), CLEAN_MAX);
}

/* Any JSON value as one clean line: strings bare, the rest compact. */
void report_add_clean_json(struct strbuf *sb, const json_t *v)
{
	char *t;

	if (json_is_string(v)) {
		report_add_clean(sb, json_string_value(v));
		return;
	}
	t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	report_add_clean(sb, t ? t : "?");
	free(t);
}

/* ---- numbers ---- */

/* A value in at most 9 columns: integers in full up to 10^7, else three
 * significant digits. */
void report_fmt_value(char *buf, size_t n, double v)
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
void report_fmt_pct(char *buf, size_t n, double v)
{
	if (fabs(v) >= 100)
		snprintf(buf, n, "%+.0f%%", v);
	else
		snprintf(buf, n, "%+.1f%%", v);
}

void report_fmt_p(char *buf, size_t n, double p)
{
	if (p >= 0.001)
		snprintf(buf, n, "%.2g", p);
	else
		snprintf(buf, n, "%.0e", p);
}

/* "2%" from the fraction 0.02, with no trailing zeros */
void report_fmt_fraction_pct(char *buf, size_t n, double f)
{
	snprintf(buf, n, "%.4g%%", f * 100);
}

void report_add_time(struct strbuf *sb, const json_t *o, const char *key)
{
	double t;
	time_t tt;
	struct tm tm;
	char buf[64];

	if (jsonget_num(o, key, &t) < 0)
		return;
	tt = (time_t)t;
	if (!gmtime_r(&tt, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M UTC", &tm))
		return;
	strbuf_addstr(sb, buf);
}

/* ---- layout (textwrap.h), at the report's width ---- */

void report_para(struct strbuf *out, const char *first, size_t indent, const char *text)
{
	textwrap_para(out, first, indent, text, REPORT_WIDTH);
}

/* "  key:      value", the value wrapped under itself. */
void report_kv(struct strbuf *out, const char *key, const char *value)
{
	struct strbuf first = STRBUF_INIT;

	strbuf_addf(&first, "  %s:", key);
	while (first.len < KEY_INDENT)
		strbuf_addch(&first, ' ');
	report_para(out, first.buf, KEY_INDENT, value);
	strbuf_release(&first);
}

void report_heading(struct strbuf *out, const char *text)
{
	strbuf_addch(out, '\n');
	report_para(out, "", 0, text);
	strbuf_addch(out, '\n');
}

/* ---- pieces of text ---- */

/* "mprotect mode=threads size=64K workers=4": the row's workload and its
 * parameters (params_text, without the workload's own name in it). */
void report_add_case(struct strbuf *sb, const json_t *row)
{
	struct strbuf raw = STRBUF_INIT;
	const char *wl = jsonget_str(row, "workload"), *pt = jsonget_str(row, "params_text");

	strbuf_addstr(&raw, wl ? wl : "?");
	while (pt && *pt) {
		size_t n = strcspn(pt, " ");

		if (n && !(n > 9 && !strncmp(pt, "workload=", 9)))
			strbuf_addf(&raw, " %.*s", (int)n, pt);
		pt += n;
		while (*pt == ' ')
			pt++;
	}
	report_add_clean(sb, raw.buf);
	strbuf_release(&raw);
}

void report_add_strings(struct strbuf *sb, const json_t *list, const char *sep)
{
	const json_t *v;
	size_t i, n = 0;

	json_array_foreach(list, i, v)
		if (json_is_string(v)) {
			strbuf_addstr(sb, n++ ? sep : "");
			report_add_clean(sb, json_string_value(v));
		}
}
