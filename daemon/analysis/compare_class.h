#ifndef TLBLAB_COMPARE_CLASS_H
#define TLBLAB_COMPARE_CLASS_H

/*
 * What a comparison row measures, and what it is for. Every row has a
 * class, decided from its metric's name (and its unit and direction) by
 * compare_class_of() alone:
 *
 *   work     instructions per operation (the TCG plugin's
 *            <wl>.kernel_insn_per_op and .user_insn_per_op, or perf's
 *            instructions:k/:u, <wl>.perf_kernel_insn_per_op and
 *            .perf_user_insn_per_op) and counters per operation (C.per_kop,
 *            tlb.shootdowns_per_kop, *_per_op): what the kernel did for one
 *            operation, near-deterministic on an emulated machine
 *   wait     spin-wait instructions per operation (<wl>.spin_insn_per_op)
 *   time     everything derived from wall-clock time: a workload's score,
 *            its elapsed and throughput figures, kfunc times, busy_pct
 *   context  raw counter deltas over a window and a counter's rate per
 *            wall-clock second (C, C.per_sec, C.peak_per_sec): shown beside
 *            the rest, never tested (a slower kernel is no improvement in
 *            shootdowns per second)
 *
 * and a role, which says what its verdict decides (compare_role_of()):
 *
 *   headline   makes the job's verdict (Holm over all of them): a
 *              workload's instruction rows where it has them, the plugin's
 *              (work and wait) on an emulated machine, else perf's (kernel
 *              and user, work) on a real one; else its score (the agent's
 *              workload table: its ops->score, e.g. mprotect.ops_per_sec,
 *              fault-write.total_sec)
 *   score      the score of a workload that has instruction rows: an
 *              emulator's time is not the hardware's, and a real machine's
 *              is noisier than its instruction counts, so it has a verdict
 *              of its own (the time class's) but not the job's
 *   secondary  every other tested row (Benjamini-Hochberg per class)
 *   context    untested
 */

enum compare_class {
	COMPARE_CLASS_WORK,
	COMPARE_CLASS_WAIT,
	COMPARE_CLASS_TIME,
	COMPARE_CLASS_CONTEXT,
	COMPARE_CLASS_MAX
};

enum compare_role {
	COMPARE_ROLE_HEADLINE,
	COMPARE_ROLE_SCORE,
	COMPARE_ROLE_SECONDARY,
	COMPARE_ROLE_CONTEXT,
	COMPARE_ROLE_MAX
};

/* The class of metric (full name, e.g. "mprotect.kernel_insn_per_op") of
 * a row of workload; unit and direction as the agent gave them (either
 * may be NULL). */
enum compare_class compare_class_of(const char *workload, const char *metric, const char *unit,
				    const char *direction);
/* "work", "wait", "time", "context"; NULL for out of range */
const char *compare_class_name(enum compare_class c);
/* COMPARE_CLASS_MAX when name is none of the above */
enum compare_class compare_class_from_name(const char *name);
/* One line for a report or a page: what each class's numbers are. */
const char *compare_class_legend(void);

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
enum compare_role compare_role_of(const char *workload, const char *metric, enum compare_class cls,
				  enum compare_insn insn);
/* "headline", "score", "secondary", "context" */
const char *compare_role_name(enum compare_role r);

#endif
