#ifndef TLBLAB_PMU_ROWS_H
#define TLBLAB_PMU_ROWS_H

#include <jansson.h>

#include "strbuf.h"

/*
 * A real machine's work rows: the CPU's own counts per operation, from
 * the counters the agent reads on the workload's CPUs with perf_event_open
 * (agents/monitors/pmu.h, "perf_stat.instructions_k" ...) and the window's
 * operations:
 *
 *   <wl>.perf_kernel_insn_per_op   instructions:k per op   insn/op
 *   <wl>.perf_user_insn_per_op     instructions:u per op   insn/op
 *   <wl>.perf_dtlb_miss_per_op     dTLB-load-misses per op events/op
 *   <wl>.perf_itlb_miss_per_op     iTLB-load-misses per op events/op
 *
 * all lower is better, source "perf", class work (compare_class.c: the
 * _per_op rows). Where a case has no plugin rows, its two instruction rows
 * are its headline (compare_role_of). A row that cannot be had is
 * unavailable with the reason, never 0: the agent's (no PMU, an event the
 * PMU lacks, perf_event_paranoid), a window in which a counter lost its
 * hardware counter (perf_stat.pmu_unscheduled_ns moved: another perf user
 * took it, the count is not exact), a window without operations, or the
 * run stage's (an emulated machine, whose plugin counts its instructions).
 */

/*
 * The rows of one iteration: agent_metrics and agent_unavailable are its
 * "metrics" and "unavailable" (either may be NULL), ops the operations of
 * its window (have_window 0: it has none); why_not, when not NULL, makes
 * every row unavailable for that reason. Adds the rows to metrics and their
 * unit, direction and source to info, or "<row>": why to unavailable.
 * Returns 0, or -1 with err naming the field when a counter is not a count
 * (negative, not a whole number): the agent's output is then garbage.
 */
int pmu_rows(const char *workload, const json_t *agent_metrics, const json_t *agent_unavailable,
	     int have_window, double ops, const char *why_not, json_t *metrics, json_t *info,
	     json_t *unavailable, struct strbuf *err);

#endif
