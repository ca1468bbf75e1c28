#ifndef TLBLAB_VERDICT_H
#define TLBLAB_VERDICT_H

#include <jansson.h>
#include <stddef.h>

#include "compare.h"

/*
 * The decision rule of a comparison, apart from how its numbers are
 * gathered (compare.c): which alpha a look at the data may spend, how the
 * p-values of a job's rows are adjusted for their number, and what each
 * row is called. Pure functions over numbers; docs/statistics.md says why
 * the rule is what it is.
 */

/* A job's sequential design as the comparison sees it. */
struct verdict_design {
	int boots;		/* per side at the first look */
	int max_boots;		/* the most a job may grow to (>= boots) */
	int look;		/* 1, or 2 once boots were added */
	int looks;		/* 2 when max_boots > boots, else 1 */
	double eq_level;	/* the level of the equivalence interval at this look */
};

/* From a compare input's "design" ({"boots", "max_boots", "look"}); NULL
 * or malformed: one look with the whole alpha. */
void verdict_design_init(struct verdict_design *d, const struct compare_rules *r,
			 const json_t *design);
/* The part of a two-sided alpha this look may spend: all of it with one
 * look; with two, the O'Brien-Fleming-like share at the first
 * (information fraction boots / max_boots) and the rest at the second. */
double verdict_look_alpha(const struct verdict_design *d, double alpha);
/* The comparison's "design" object. The caller owns it. */
json_t *verdict_design_json(const struct verdict_design *d, const struct compare_rules *r);

/* One row's numbers in, its decision out. */
struct verdict_row {
	/* in */
	const char *metric;
	const char *direction;	/* higher, lower or neutral */
	int headline;
	int testable;		/* both sides measured; p may still be NAN */
	double change;		/* % change of the medians (may be +-inf) */
	double p;		/* raw Mann-Whitney p, NAN when none */
	int have_ci;		/* 95% interval of the change, % */
	double lo, hi;
	int have_eq;		/* the equivalence interval (eq_level), % */
	double elo, ehi;
	int identical;		/* every value on both sides equal */
	double sd_pct;		/* pooled per-boot sd, % of the base median; NAN */
	size_t nb, np;		/* boots per side */
	/* out */
	double p_adj;		/* NAN when untested */
	const char *p_adj_method;	/* "holm" or "bh" */
	double alpha;		/* what p_adj is held against at this look */
	double min_change;	/* %, the least change called */
	double margin;		/* %, the equivalence margin */
	double mde;		/* %, detectable with the power asked; NAN: none */
	double ruled_out;	/* %, inconclusive: changes beyond it ruled out */
	const char *verdict;
};

/*
 * Decides every row: Holm over the headline rows, Benjamini-Hochberg over
 * the counter rows (each family with the look's alpha); a row changed when
 * its adjusted p is below alpha, its 95% interval excludes 0 and the change
 * is at least min_change; same when its equivalence interval lies within
 * +-margin; inconclusive otherwise, with its detectable effect and the
 * changes its interval rules out. Rows that are not testable are left
 * alone (verdict NULL).
 */
void verdict_decide(const struct compare_rules *r, const struct verdict_design *d,
		    struct verdict_row *rows, size_t n);

#endif
