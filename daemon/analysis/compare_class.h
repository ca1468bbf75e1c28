#ifndef TLBLAB_COMPARE_CLASS_H
#define TLBLAB_COMPARE_CLASS_H

#include <stddef.h>

#include "strbuf.h"

/*
 * What a comparison row measures, and what it is for. Every row has a
 * class, decided from its metric's name (and its unit and direction) by
 * compare_class_of() alone. A class is one row of a registry: one file
 * each, daemon/analysis/class_NAME.c, that ends with
 *
 *	COMPARE_CLASS_REGISTER(class_toy);
 *
 * and nothing else in the tree names it. The row says which metrics the
 * class claims, how its rows are tested, its margins and the rule keys
 * that set them, whether its rows can make the job's verdict, and a line
 * a reader is shown (the report, the API's rules.classes, the page). The
 * shipped classes: work (instructions and counters per operation), wait
 * (spin-wait instructions), time (everything from a clock) and context
 * (counts and rates over the window: shown, never tested).
 *
 * And a role, which says what its verdict decides (compare_role_of()):
 *
 *   headline   makes the job's verdict (Holm over all of them), in a class
 *              that can make it: a workload's instruction rows where it
 *              has them, the plugin's (work and wait) on an emulated
 *              machine, else perf's (kernel and user, work) on a real one;
 *              else its score (the agent's workload table: its ops->score,
 *              e.g. mprotect.ops_per_sec, fault-write.total_sec)
 *   score      the score of a workload that has instruction rows: an
 *              emulator's time is not the hardware's, and a real machine's
 *              is noisier than its instruction counts, so it has a verdict
 *              of its own (Holm over the scores) but not the job's
 *   secondary  every other tested row (Benjamini-Hochberg per class)
 *   context    a row of a class that is not tested
 */

/*
 * How a claim matches a metric. The registry tries every class's claims
 * in one order, most specific first, and the first that matches wins, so
 * the order of the files (or of their registration) never matters: names
 * with a suffix, the longest suffix first (then the longest prefix); names
 * with only a prefix, the longest first; then the workload's own counts;
 * then the workload's own metrics. A metric no claim takes belongs to the
 * class marked COMPARE_CLASS_FALLBACK.
 */
enum compare_claim_kind {
	COMPARE_CLAIM_NAME,		/* starts with prefix, ends with suffix
					 * (either NULL: any; the suffix shorter
					 * than the name) */
	COMPARE_CLAIM_OWN_COUNT,	/* "<workload>.x", neutral (or no
					 * direction), no unit of time, not its
					 * score: a count */
	COMPARE_CLAIM_OWN,		/* "<workload>.x" */
	COMPARE_CLAIM_KIND_MAX
};

struct compare_claim {
	enum compare_claim_kind kind;
	const char *prefix, *suffix;
};

/* A class's margins: fractions, 0.02 is 2%. */
enum compare_margin_kind {
	COMPARE_MIN_CHANGE,		/* the least change called, of the
					 * workload's own rows ("<wl>.") */
	COMPARE_MIN_CHANGE_COUNTER,	/* of the others (the monitors'
					 * counters); no key: as MIN_CHANGE */
	COMPARE_SAME_BAND,		/* the equivalence margin */
	COMPARE_MARGIN_MAX
};

struct compare_margin {
	const char *key;	/* its name in the rules object and in a
				 * suite's compare: section; NULL: none */
	double def;		/* its default */
	const char *suite_key;	/* where a suite names it otherwise (the
				 * time class's min_change), else NULL */
};

/* Its rows are tested; a secondary row in a family of its own (BH).
 * Without: shown, never tested, no margins. */
#define COMPARE_CLASS_TESTED		0x01u
/* Its rows may take the headline role: the job's verdict (which do is
 * compare_role_of's rule). */
#define COMPARE_CLASS_MAKES_VERDICT	0x02u
/* A regression of one of its secondary rows is the job's regression (the
 * TLB model's page walks: the kernel's work that is not the headline). */
#define COMPARE_CLASS_SECONDARY_COUNTS	0x04u
/* Welch's t on the logs of the per-boot medians, sd floored, boots in a
 * mode of their own set aside; below VERDICT_FEW_BOOTS boots a side its
 * least change is at least the rules' min_change_few. Without: ranks. */
#define COMPARE_CLASS_LOG_T		0x08u
/* A base median near 0 (below its per-boot spread): tested on the values,
 * the change absolute (the rules' min_change_count per op). */
#define COMPARE_CLASS_NEAR_ZERO		0x10u
/* Below the rules' wait_floor on every boot of both sides: none to speak
 * of, tested on the values against a tenth of the floor. */
#define COMPARE_CLASS_FLOOR		0x20u
/* Rounds that ran as duets (two machines at once): paired t on the logs
 * of the pairs' ratios. */
#define COMPARE_CLASS_PAIRED		0x40u
/* Takes every metric no claim takes (exactly one class has it). */
#define COMPARE_CLASS_FALLBACK		0x80u

struct compare_class {
	const char *name;
	const char *legend;	/* one sentence, without the name: what its
				 * numbers are ("spin-wait instructions") */
	int order;		/* where lists show it (lower first; ties by name) */
	unsigned flags;
	const struct compare_claim *claims;
	size_t nclaims;
	struct compare_margin margins[COMPARE_MARGIN_MAX];
};

/* The most classes a tree may have (rules keep their margins by index). */
#define COMPARE_CLASSES_MAX 16

/* Adds c (static storage) to the registry, registered at file:line;
 * COMPARE_CLASS_REGISTER calls it, before main. */
void compare_class_register(const struct compare_class *c, const char *file, int line);
#define COMPARE_CLASS_REGISTER(c) \
	__attribute__((constructor)) static void compare_class_register_##c(void) \
	{ \
		compare_class_register(&(c), __FILE__, __LINE__); \
	}

/* The registry's own errors, one a line, appended to out: a name or a
 * claim registered twice ("FILE:LINE: class 'x' registered twice (first at
 * FILE:LINE)"), no fallback class or two, a full table. 0 when there are
 * none, else -1. A comparison and a configuration load refuse to go on. */
int compare_class_registry_errors(struct strbuf *out);

/* How many classes; the i-th in list order (order, then name), NULL past
 * the last. A class's index is stable for the life of the process. */
size_t compare_class_count(void);
const struct compare_class *compare_class_at(size_t i);
/* The index of c (0 .. count-1); -1 for NULL or a class not registered. */
int compare_class_index(const struct compare_class *c);
/* The class named name, or NULL. */
const struct compare_class *compare_class_find(const char *name);

/* The class of metric (full name, e.g. "mprotect.kernel_insn_per_op") of
 * a row of workload; unit and direction as the agent gave them (either
 * may be NULL). The fallback class for a NULL metric or one no claim
 * takes; NULL only when the registry has none (an error it reports). */
const struct compare_class *compare_class_of(const char *workload, const char *metric, const char *unit,
					     const char *direction);
/* One line for a report or a page: "work: ...; wait: ...; ...", each
 * class's name and legend in list order. Static storage. */
const char *compare_class_legend(void);
/* The classes as a Markdown table (docs/statistics.md shows it): name,
 * legend, the metrics it claims, its test, its margins and their keys. */
void compare_class_table(struct strbuf *out);

enum compare_role {
	COMPARE_ROLE_HEADLINE,
	COMPARE_ROLE_SCORE,
	COMPARE_ROLE_SECONDARY,
	COMPARE_ROLE_CONTEXT,
	COMPARE_ROLE_MAX
};

/* 1 when metric is the workload's score (its time headline) */
int compare_is_score(const char *workload, const char *metric);
/* Where a case's instruction rows come from: the QEMU plugin's
 * (<wl>.kernel_insn_per_op, .user_insn_per_op, .spin_insn_per_op) on an
 * emulated machine, perf's (<wl>.perf_kernel_insn_per_op,
 * .perf_user_insn_per_op, daemon/stages/pmu_rows.h) on a real one. */
enum compare_insn {
	COMPARE_INSN_NONE,
	COMPARE_INSN_PLUGIN,
	COMPARE_INSN_PERF,
	COMPARE_INSN_MAX
};

/* 1 when metric is one of the headline instruction rows of source src */
int compare_is_insn(const char *workload, const char *metric, enum compare_insn src);
/* The source whose presence metric marks: the plugin's for
 * "<workload>.kernel_insn_per_op", perf's for ".perf_kernel_insn_per_op",
 * else COMPARE_INSN_NONE. A case with both has the plugin's as headline. */
enum compare_insn compare_insn_marker(const char *workload, const char *metric);

/* The role of a row of class cls; insn: the source of the instruction
 * rows the row's case has (on either side), COMPARE_INSN_NONE for none. */
enum compare_role compare_role_of(const char *workload, const char *metric, const struct compare_class *cls,
				  enum compare_insn insn);
/* "headline", "score", "secondary", "context" */
const char *compare_role_name(enum compare_role r);

#endif
