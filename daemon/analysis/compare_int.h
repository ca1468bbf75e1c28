#ifndef TLBLAB_COMPARE_INT_H
#define TLBLAB_COMPARE_INT_H

#include <jansson.h>
#include <math.h>
#include <stddef.h>

#include "compare.h"
#include "jsonget.h"
#include "strbuf.h"
#include "verdict.h"

/*
 * What the files of the comparison share (compare_doc.c, compare_key.c,
 * compare_rules.c, compare_side.c, compare_rows.c, compare_tests.c,
 * compare_views.c, compare_profile.c). Not for use outside them: the rest of the daemon sees only compare.h.
 *
 * Functions that return a json_t * return a new reference the caller owns.
 */

/* ---- small JSON helpers (a member by its type: jsonget.h) ---- */

static inline json_t *jreal(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* ---- row keys (compare_key.c) ---- */

/* Parameters as sorted compact JSON: the same case in two jobs gets the
 * same key whatever order its parameters were written in. The caller
 * frees the string. */
char *compare_params_canon(const json_t *params);
/* "mode=threads workers=2", keys sorted, appended to sb */
void compare_params_text(struct strbuf *sb, const json_t *params);
/* Resets sb to the row key of (spec, workload, canonical parameters,
 * metric): the key of a side's groups and of the views' indexes. */
void compare_row_key(struct strbuf *sb, long long spec, const char *workload, const char *pcanon,
	     const char *metric);
/* Sorts a JSON array in place with qsort's cmp over json_t * elements. */
void compare_sort_array(json_t *arr, int (*cmp)(const void *, const void *));

/* ---- one side (compare_side.c) ---- */

struct side {
	const char *name;	/* "base" or "patched" */
	const json_t *doc;
	const char *filter;	/* runs[].side to keep, or NULL for all */
	json_t *runs;		/* run id -> run */
	json_t *boots;		/* boot key -> index, in the order they ran */
	json_t *groups;		/* row key -> {spec, case, ..., "boots": [[values]...]} */
	json_t *machines, *builds;
	json_t *per_cpu;	/* per-CPU metric names seen */
	json_t *failed;		/* borrowed: the output's "failed" */
	size_t measured, ignored;
};

/* Indexes doc as side `name` (runs whose "side" is filter, or all when
 * NULL), appending its failed runs and stages to failed (borrowed). The
 * side owns what it indexed until compare_side_release, also after an error:
 * returns 0, or -1 with err when doc is not a side document. */
int compare_side_load(struct side *s, const char *name, const json_t *doc, const char *filter,
	      json_t *failed, struct strbuf *err);
void compare_side_release(struct side *s);
/* The per-boot samples of a group: the median of each boot's iterations,
 * in boot order, into out (room for one per boot of the side). Returns
 * how many (boots without a value are skipped). */
size_t compare_group_samples(const json_t *g, double *out);
/* Why the side lacks metric, as its agent said, or NULL. Borrowed from
 * the side's document. */
const char *compare_side_unavailable(const struct side *s, const char *metric);
/* Every counter the side's kernels could not give, {name: the agent's reason}
 * (new reference): one that neither side has makes no row, and is said here. */
json_t *compare_side_unavailable_all(const struct side *s);

/* ---- rows (compare_rows.c) ---- */

struct row {
	json_t *obj;		/* owned until put into the output */
	long long spec, cas;
	int headline;		/* role headline: makes the job's verdict */
	char *key_case;		/* while roles are assigned */
	const char *metric;	/* inside obj */
	struct verdict_row v;	/* its numbers, then its decision */
};

/* One row per row key seen on either side, sorted (spec, case, workload,
 * parameters, headline first, metric), with its statistics and the
 * verdict the rows reach together (verdict_decide). Sets *ret_n; the
 * caller owns the array and each row's obj. */
struct row *compare_build_rows(struct side *sb, struct side *sp, const struct compare_rules *r,
		       struct verdict_design *d, size_t *ret_n);

/* ---- a row's tests (compare_tests.c) ----
 *
 * Each fills v (its p, change, intervals) and obj (the row's JSON: its
 * p_method's details, notes of what was set aside) from a row's per-boot
 * samples b (base, nb of them) and p (patched), with medians cb and cp. A
 * test that returns -1 could not be made, and left v as it was: the row
 * takes the next one (compare_rows.c says in which order).
 */

/* a boot further than this many robust sds from both sides' median is in
 * a mode of its own (compare_tests.c says why) */
#define COMPARE_MODE_FENCE 6.0

int compare_all_positive(const double *v, size_t n);
/* The rank rows' equivalence interval and bootstrap interval of the change */
void compare_row_equivalence(struct verdict_row *v, const double *b, size_t nb, const double *p,
			     size_t np, double cb, const struct verdict_design *d);
void compare_row_interval(json_t *obj, struct verdict_row *v, const double *b, size_t nb,
			  const double *p, size_t np, double cb, const struct compare_rules *r);
/* The noise floor of a group's boot medians, from the spread of its
 * iterations within a boot; 0 when no boot has two positive ones */
double compare_within_floor(const json_t *g);
/* Welch's t on logs, each side's sd at least floor (a log value's) */
int compare_row_welch(json_t *obj, struct verdict_row *v, const double *b, size_t nb, const double *p,
		      size_t np, double floor, const struct compare_rules *r, const struct verdict_design *d);
/* Boots in a mode of their own: 1 when some were set aside (the log
 * values kept in kb and kp), 0 for none, -1 when more than a third of a
 * side is in one (the row is ranked) */
int compare_row_modes(json_t *obj, struct verdict_row *v, const double *b, size_t nb, const double *p,
		      size_t np, double floor, double *kb, size_t *ret_nkb, double *kp, size_t *ret_nkp);
/* Welch's t on the boots compare_row_modes kept */
int compare_row_set_aside(json_t *obj, struct verdict_row *v, const double *kb, size_t nkb, const double *kp,
			  size_t nkp, double floor, const struct compare_rules *r, const struct verdict_design *d);
/* Paired t on the log ratios of the rounds that ran as duets */
int compare_row_paired(json_t *obj, struct verdict_row *v, const json_t *gb, const json_t *gp,
		       const struct side *sb, const struct side *sp, const struct compare_rules *r,
		       const struct verdict_design *d);
/* Welch's t on the values, the change absolute, least its least change */
int compare_row_count(json_t *obj, struct verdict_row *v, const double *b, size_t nb, const double *p,
		      size_t np, double cb, double cp, double least, const struct compare_rules *r,
		      const struct verdict_design *d);
/* The least absolute change compare_row_count calls */
double compare_count_least(const json_t *obj, const struct verdict_row *v, const struct compare_rules *r);

/* ---- views over rows (compare_views.c) ---- */

/* "by_class": per tested class (work, wait, time), the verdict of its lead
 * rows (headline rows; for time also the scores that are not), their
 * counts and what they saw in words */
json_t *compare_build_by_class(const struct row *rows, size_t n);
/* "summary": headline changes largest first, counts, one line of text
 * (ending with by_class's words) */
json_t *compare_build_summary(const struct row *rows, size_t n, const json_t *by_class);
/* "sweeps": headline rows whose cases differ only in "workers", or in
 * "cpus" (compare_views.c) */
json_t *compare_build_sweeps(const struct row *rows, size_t n);
/* "tlb": shootdowns per kop and shootdown counters beside each headline case */
json_t *compare_build_tlb(const struct row *rows, size_t n);

/* ---- profiles (compare_profile.c) ---- */

/* "profile_diff": the symbols whose self share moved most between the
 * sides' profiles, and why there is no diff when a side has none */
json_t *compare_build_profile_diff(const struct side *sb, const struct side *sp);

#endif
