#ifndef TLBLAB_REPORT_INT_H
#define TLBLAB_REPORT_INT_H

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "jsonget.h"
#include "report.h"
#include "strbuf.h"
#include "textwrap.h"

/*
 * What the files of the reports share (report_text.c, report_tables.c,
 * report_bisect.c, report_format.c). Not for use outside them: the rest of
 * the daemon sees only report.h.
 */

struct report {
	struct strbuf *out;
	const json_t *job, *cmp;
	long long id;
	int failed;		/* the job failed or was cancelled */
};

/* ---- reading the documents ----
 * Members by type: jsonget.h. report_add_clean and report_add_clean_json
 * are in report_format.c. */

/* s, cleaned, appended to sb ("" for NULL). */
void report_add_clean(struct strbuf *sb, const char *s);
/* Any JSON value as one clean line: strings bare, the rest compact. */
void report_add_clean_json(struct strbuf *sb, const json_t *v);

/* ---- numbers (report_format.c), into buf of n bytes ---- */

/* A value in at most 9 columns: integers in full up to 10^7, else three
 * significant digits. */
void report_fmt_value(char *buf, size_t n, double v);
/* "+1.5%", "-15.4%", "+364%" */
void report_fmt_pct(char *buf, size_t n, double v);
/* "0.0079", "3e-05" */
void report_fmt_p(char *buf, size_t n, double p);
/* "2%" from the fraction 0.02, with no trailing zeros */
void report_fmt_fraction_pct(char *buf, size_t n, double f);
/* The time o[key] (seconds since the epoch) as "2026-12-01 03:42 UTC";
 * nothing when it is not a number. */
void report_add_time(struct strbuf *sb, const json_t *o, const char *key);

/* ---- layout (report_format.c), at the report's width ---- */

static inline size_t width(const char *s, size_t n)
{
	return strbuf_utf8_width(s, n);
}

/* text wrapped at REPORT_WIDTH, its first line after first, the others
 * indented by indent columns */
void report_para(struct strbuf *out, const char *first, size_t indent, const char *text);
/* "  key:      value", the value wrapped under itself. */
void report_kv(struct strbuf *out, const char *key, const char *value);
/* a blank line, text, a blank line */
void report_heading(struct strbuf *out, const char *text);

/* ---- pieces of text (report_format.c) ---- */

/* "mprotect mode=threads size=64K workers=4": the row's workload and its
 * parameters (params_text, without the workload's own name in it). */
void report_add_case(struct strbuf *sb, const json_t *row);

static inline int verdict_is(const json_t *row, const char *v)
{
	const char *rv = jsonget_str(row, "verdict");

	return rv && !strcmp(rv, v);
}

static inline int is_headline(const json_t *row)
{
	return json_is_true(json_object_get(row, "headline"));
}

/* a workload's time score that is not its headline (compare_class.h) */
static inline int is_score(const json_t *row)
{
	const char *role = jsonget_str(row, "role");

	return role && !strcmp(role, "score");
}

/* The strings of list, cleaned, with sep between them. */
void report_add_strings(struct strbuf *sb, const json_t *list, const char *sep);

/* ---- the sections that are tables (report_tables.c), in the order
 * they print ---- */

void report_headline_table(struct report *r);
/* The other metrics (counters, derived) that moved, largest first. */
void report_counter_table(struct report *r);
void report_tlb_block(struct report *r);
void report_profile_block(struct report *r);
/* 1 when a headline (or, headline 0, another) row has a p_adj */
int report_any_padj(const json_t *rows, int headline);

#endif
