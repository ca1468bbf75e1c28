#ifndef TLBLAB_PMU_EVENTS_H
#define TLBLAB_PMU_EVENTS_H

/*
 * The names under which the agent reports the CPU's own counters (its pmu
 * monitor, agents/monitors/pmu.h) and the daemon reads them back to make a
 * real machine's work rows (daemon/stages/pmu_rows.h): one list, in the
 * catalog, so that the two cannot spell a counter differently.
 */

enum pmu_event {
	PMU_INSN_KERNEL,
	PMU_INSN_USER,
	PMU_DTLB_MISS,
	PMU_ITLB_MISS,
	PMU_EVENT_MAX
};

/* The counters' names in the agent's output ("perf_stat.instructions_k",
 * ...), by enum pmu_event. */
extern const char *const pmu_counter_names[PMU_EVENT_MAX];
/* The nanoseconds the events were not on the PMU (pmu.h says why that
 * matters). */
#define PMU_UNSCHEDULED "perf_stat.pmu_unscheduled_ns"

#endif
