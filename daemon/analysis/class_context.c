/*
 * class: context, counts and rates over the window: the monitors' raw
 * deltas (interrupts.*, vmstat.*, tlb_flush.*, perf_stat.*, kfunc.*.calls),
 * a counter's rate per wall-clock second and a workload's neutral counts.
 * Shown beside the tested rows, never tested: a slower kernel sends fewer
 * shootdowns per second and would look like an improvement. It takes
 * every metric no other class claims.
 */
#include "compare_class.h"

static const struct compare_claim claims[] = {
	/* a counter's rate over wall-clock seconds: a slower kernel would
	 * look like an improvement */
	{ COMPARE_CLAIM_NAME, NULL, ".peak_per_sec" },
	{ COMPARE_CLAIM_NAME, NULL, ".per_sec" },
	{ COMPARE_CLAIM_NAME, "kfunc.", ".calls" },	/* a count over the window */
	{ COMPARE_CLAIM_OWN_COUNT, NULL, NULL },	/* fault-write.rounds, exec.bogo_ops */
};

static const struct compare_class class_context = {
	.name = "context",
	.legend = "counts and rates over the window, not tested",
	.order = 40,
	.flags = COMPARE_CLASS_FALLBACK,
	.claims = claims,
	.nclaims = sizeof(claims) / sizeof(claims[0]),
};
COMPARE_CLASS_REGISTER(class_context)
