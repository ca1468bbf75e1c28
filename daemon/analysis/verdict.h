#ifndef TLBLAB_VERDICT_H
#define TLBLAB_VERDICT_H

#include <jansson.h>
#include <stddef.h>

#include "compare_rules.h"
#include "compare_class.h"

/*
 * The decision rule of a comparison, apart from how its numbers are
 * gathered (compare_doc.c): which alpha a look at the data may spend, how the
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
	double eq_level;	/* the level of a rank row's equivalence interval at this look */
	double eq_level_welch;	/* a Welch row's (VERDICT_SPEND_POCOCK) */
	/* set by verdict_decide, for the "design" object: */
	double alpha_headline;	/* what the headline family spends at this look */
	int spend_headline;	/* its enum verdict_spending */
	int last;		/* the first of two looks, but the headline rows decided:
				 * the job stops here, and the other families spend
				 * what they kept for the second look */
	int scores_moved;	/* the first of two looks, the headline rows
				 * decided, but a score is past its least change
				 * at its last look's alpha: the second look
				 * decides it (verdict.c, moved_first) */
};

/* How a family of rows spends its alpha over the looks. */
enum verdict_spending {
	VERDICT_SPEND_OBF,	/* O'Brien-Fleming-like: little at the first look */
	VERDICT_SPEND_SECOND,	/* rank rows whose first look cannot reach the
				 * OBF share (the smallest p its boots can
				 * give is above it): all of alpha at the second */
	VERDICT_SPEND_POCOCK,	/* Pocock-like: most at the first (Welch rows) */
	VERDICT_SPEND_MAX
};

/* From a compare input's "design" ({"boots", "max_boots", "look"}); NULL
 * or malformed: one look with the whole alpha. */
void verdict_design_init(struct verdict_design *d, const struct compare_rules *r,
			 const json_t *design);
/* The part of a two-sided alpha this look may spend: all of it with one
 * look; with two, the spending function's share at the first
 * (information fraction boots / max_boots) and the rest at the second. */
double verdict_spend(const struct verdict_design *d, double alpha, enum verdict_spending how);
/* verdict_spend(d, alpha, VERDICT_SPEND_OBF) */
double verdict_look_alpha(const struct verdict_design *d, double alpha);
/* The comparison's "design" object. The caller owns it. */
json_t *verdict_design_json(const struct verdict_design *d, const struct compare_rules *r);

/* How a row's p-value and intervals were made (compare_rows.c) */
enum verdict_rule {
	VERDICT_RULE_RANK,	/* Mann-Whitney, bootstrap and Moses intervals */
	VERDICT_RULE_WELCH,	/* work and wait: Welch's t on logs, sd floored */
	VERDICT_RULE_SET_ASIDE,	/* work and wait rows with boots in a mode of their own:
				 * Welch's t on the logs of the others, sd floored */
	VERDICT_RULE_PAIRED,	/* time rows of duet boots: paired t on log ratios, sd floored;
				 * sd_pct is then the sd of the ratios, nb = np the pairs */
	VERDICT_RULE_COUNT,	/* work rows from a base near 0: Welch's t on the values;
				 * change, intervals, least change and margin absolute */
	VERDICT_RULE_MAX
};

/* One row's numbers in, its decision out. */
struct verdict_row {
	/* in */
	const char *metric;
	const char *direction;	/* higher, lower or neutral */
	const struct compare_class *cls;
	enum compare_role role;
	int own;		/* the workload's own metric ("<wl>.") */
	int testable;		/* both sides measured; p may still be NAN */
	enum verdict_rule rule;
	double change;		/* % change of the medians (may be +-inf) */
	double p;		/* raw p (the rule's), NAN when none */
	int have_ci;		/* 95% interval of the change, % */
	double lo, hi;
	int have_eq;		/* the equivalence interval (eq_level), % */
	double elo, ehi;
	int identical;		/* every value on both sides equal */
	int negligible;		/* a wait row below the rules' wait_floor on
				 * every boot of both sides: same, whatever
				 * the ratio of two near-zero counts */
	int near_zero;		/* the base median is near 0 against the noise: no % effect */
	double abs_least;	/* VERDICT_RULE_COUNT: the least change called, in the
				 * row's unit; change, lo, hi, elo, ehi, min_change and
				 * margin are then in the row's unit */
	double sd_pct;		/* per-boot sd (the rule's), % of the base median; NAN */
	size_t nb, np;		/* boots per side */
	/* out */
	double p_adj;		/* NAN when untested */
	const char *p_adj_method;	/* "holm" or "bh" */
	const char *family;	/* the family p_adj was adjusted in */
	double alpha;		/* what p_adj is held against at this look */
	double min_change;	/* %, the least change called */
	double margin;		/* %, the equivalence margin */
	double mde;		/* %, detectable with the power asked; NAN: none */
	double ruled_out;	/* %, inconclusive: changes beyond it ruled out */
	double beyond;		/* %, inconclusive, but the equivalence interval fits
				 * the margin: no change beyond it; NAN otherwise */
	const char *verdict;
	int moved;		/* a score not called, but past its least change with
				 * its raw p below its alpha: a job is not same then */
};

/*
 * An A/B job's default design: 5 boots a side, and a second look at 10
 * when a headline row is undecided (verdict_wants_more_boots). At the
 * embedded lab's noise (0.45% per boot on work rows, 1 boot in 20 in a
 * +15% mode) a second look at 9 left 11-12.5% of A/A jobs inconclusive,
 * at 10 5.5% (b0008, 400 jobs): the 1% margin is 4.5 standard errors of
 * a 9+9 difference, and the tail of t beyond what fits falls steeply with
 * each boot. At 2% noise on the scores, 9 boots took a 5% change from 60%
 * to about 97% detected (test_compare measures it).
 */
#define VERDICT_BOOTS 5
#define VERDICT_MAX_BOOTS 10

/*
 * Below this many boots a side a work or wait row cannot show a boot in a
 * mode of its own (compare_rows.c needs 6), and all of a side can sit in
 * one: at 3 boots and a mode one boot in 5 runs in, 0.8% of the time, as
 * often as alpha. Its least change is then at least the rules'
 * min_change_few.
 */
#define VERDICT_FEW_BOOTS 5

/* The class's least change and margin, in % (before metric overrides). */
double verdict_class_min_change(const struct compare_rules *r, const struct compare_class *cls, int own);
double verdict_class_margin(const struct compare_rules *r, const struct compare_class *cls);

/*
 * Decides every row. Families, each with its own alpha spending over the
 * looks: the headline rows (Holm: the job's verdict), the scores of
 * workloads whose headline is their instruction rows (Holm), and the
 * secondary rows of each class (Benjamini-Hochberg); context rows are not
 * tested (verdict "context"). A row changed when its adjusted p is below
 * alpha, its 95% interval excludes 0 and the change is at least
 * min_change; same when its equivalence interval lies within the least
 * change (min_change, or the margin when that is narrower); inconclusive
 * otherwise, with its detectable effect, the changes its interval rules out
 * and, when the interval fits the margin, the change beyond which there is
 * none. Rows that are not testable are left alone (verdict NULL). Records
 * the headline family's alpha in d.
 */
void verdict_decide(const struct compare_rules *r, struct verdict_design *d,
		    struct verdict_row *rows, size_t n);

/* 1 when a comparison is the first of two looks its job planned and a
 * headline row is inconclusive, or same with an equivalence interval that
 * reaches beyond the least change the row would call (the margin may be
 * wider than a change worth finding): the scheduler then adds boots up to
 * the job's max_boots. 0 otherwise. */
int verdict_wants_more_boots(const json_t *comparison);

#endif
