#include "pmu_events.h"

const char *const pmu_counter_names[PMU_EVENT_MAX] = {
	[PMU_INSN_KERNEL] = "perf_stat.instructions_k",
	[PMU_INSN_USER] = "perf_stat.instructions_u",
	[PMU_DTLB_MISS] = "perf_stat.dtlb_load_misses",
	[PMU_ITLB_MISS] = "perf_stat.itlb_load_misses",
};
