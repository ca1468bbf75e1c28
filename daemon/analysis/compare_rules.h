#ifndef TLBLAB_COMPARE_RULES_H
#define TLBLAB_COMPARE_RULES_H

#include <jansson.h>
#include <stddef.h>

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
	double min_change_headline;	/* |change| at least this (0.02) */
	double min_change_counter;	/* for counters (0.05) */
	double same_band;		/* equivalence margin (0.10): within it, "no
					 * change beyond" it; same needs min_change */
	double min_change_work;		/* work rows (0.01) */
	double same_band_work;		/* their margin (0.01) */
	double min_change_wait;		/* wait rows (0.05) */
	double same_band_wait;		/* their margin (0.05) */
	double min_change_count;	/* work rows from a base near 0: the least absolute
					 * change called, in events per operation (0.0001:
					 * one per ten thousand operations) */
	double wait_floor;		/* wait rows: below this many spin-wait
					 * instructions per op on every boot of
					 * both sides, none to speak of (0.05) */
	double min_change_few;		/* work and wait rows with fewer than
					 * VERDICT_FEW_BOOTS boots a side: their least
					 * change is at least this (0.20), since all of a
					 * side may sit in a mode no test can see */
	double noise_floor;		/* work and wait rows: the least per-boot sd
					 * of a log value (0.001, 0.1%) */
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

/* The rules as the comparison's "rules" object (with "metrics": {pattern:
 * {alpha, min_change, same_band}} when there are overrides). A comparison
 * stored with one rules object is stale under another. */
json_t *compare_rules_json(const struct compare_rules *r);

#endif
