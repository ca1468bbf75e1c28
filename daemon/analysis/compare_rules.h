#ifndef TLBLAB_COMPARE_RULES_H
#define TLBLAB_COMPARE_RULES_H

#include <jansson.h>
#include <stddef.h>

#include "compare_class.h"

/*
 * The rules a comparison is decided by (compare_rules.c): a suite's
 * `rules:` in the configuration, the defaults, and the "rules" object a
 * stored comparison carries. Apart from compare.h so that the
 * configuration and the decision rule (verdict.h) can name them without
 * the comparison's entry point.
 */

/*
 * A rule for some metrics: the first override whose pattern (fnmatch(3),
 * e.g. "interrupts.*" or "*.kernel_insn_per_op") matches a row's metric
 * replaces the suite's alpha, minimum change (of any class) and same band
 * where they are set; NAN keeps the suite's (or the row's class's) value.
 * Patterns are borrowed from the caller.
 */
struct compare_override {
	const char *metric;
	double alpha;
	double min_change;
	double same_band;
};

struct compare_rules {
	double alpha;			/* p below this counts (default 0.01) */
	/* each class's margins, by its index (compare_class_index): the
	 * defaults its file gives, or what a suite set by their keys */
	double margins[COMPARE_CLASSES_MAX][COMPARE_MARGIN_MAX];
	double min_change_count;	/* COMPARE_CLASS_NEAR_ZERO rows (work) from a
					 * base near 0: the least absolute change
					 * called, in events per operation (0.0001:
					 * one per ten thousand operations) */
	double wait_floor;		/* COMPARE_CLASS_FLOOR rows (wait): below this
					 * many spin-wait instructions per op on
					 * every boot of both sides, none to speak
					 * of (0.05) */
	double min_change_few;		/* COMPARE_CLASS_LOG_T rows (work, wait) with
					 * fewer than VERDICT_FEW_BOOTS boots a side:
					 * their least change is at least this
					 * (0.20), since all of a side may sit in a
					 * mode no test can see */
	double noise_floor;		/* COMPARE_CLASS_LOG_T rows: the least
					 * per-boot sd of a log value (0.001, 0.1%) */
	double equiv_alpha;		/* each one-sided test of equivalence (0.05) */
	double power;			/* for the detectable effect (0.8) */
	int resamples;			/* bootstrap (2000) */
	unsigned long long seed;	/* bootstrap seed (fixed default) */
	double ci_level;		/* bootstrap interval (0.95) */
	double outlier_z;		/* MAD modified z-score flagged (3.5) */
	const struct compare_override *overrides;	/* borrowed; may be NULL */
	size_t noverrides;
};

void compare_rules_default(struct compare_rules *r);

/* The margin a rule key names in r: a class's key as the rules object
 * has it ("min_change_work", "min_change_headline") or as a suite writes
 * it ("min_change"); NULL when no class has that key. */
double *compare_rules_slot(struct compare_rules *r, const char *key);
/* Its value, NAN when no class has that key. */
double compare_rules_get(const struct compare_rules *r, const char *key);
/* The keys a suite's compare: section may set besides alpha and metrics,
 * as a suite writes them, the classes in list order, into keys (room for
 * max). Returns how many there are (more than max: some left out). */
size_t compare_rules_suite_keys(const char **keys, size_t max);
/* A class's margin k in r, in % (the least change of its own rows or of
 * the others, by own; a counter margin without a key is the own rows'). */
double compare_rules_margin_pct(const struct compare_rules *r, const struct compare_class *c,
				enum compare_margin_kind k, int own);

/* The rules as the comparison's "rules" object (with "metrics": {pattern:
 * {alpha, min_change, same_band}} when there are overrides), each class's
 * margins under their keys, and "classes": a list of {name, legend, tested,
 * makes_verdict, margins} in list order (margins null for a class that is
 * not tested). A comparison stored with one rules object is stale under
 * another. */
json_t *compare_rules_json(const struct compare_rules *r);

#endif
