/*
 * class: time, everything derived from a clock: a workload's score, its
 * elapsed and throughput figures, latencies, kfunc times, busy_pct, a
 * neighbour's ops/s, and the emulator's host time per operation. Ranked
 * (Mann-Whitney), or paired when the rounds ran as duets. Its margins are
 * the suite's general ones (min_change, min_change_counter, same_band),
 * named so before there were classes.
 */
#include "compare_class.h"

static const struct compare_claim claims[] = {
	/* the emulator's wall-clock and CPU time on the host per operation */
	{ COMPARE_CLAIM_NAME, NULL, ".host_ns_per_op" },
	{ COMPARE_CLAIM_NAME, NULL, ".host_cpu_ns_per_op" },
	{ COMPARE_CLAIM_NAME, "kfunc.", NULL },		/* self_pct, ns_per_call */
	{ COMPARE_CLAIM_NAME, "procstat.", NULL },	/* busy_pct */
	{ COMPARE_CLAIM_NAME, "neighbour.", NULL },	/* its ops/s */
	{ COMPARE_CLAIM_OWN, NULL, NULL },		/* scores, elapsed, mflops, latencies */
};

static const struct compare_class class_time = {
	.name = "time",
	.legend = "clock time, of the guest (under icount, the instructions run) or, in host_ns and "
		  "host_cpu_ns rows, of the host",
	.order = 30,
	.flags = COMPARE_CLASS_TESTED | COMPARE_CLASS_MAKES_VERDICT | COMPARE_CLASS_PAIRED,
	.claims = claims,
	.nclaims = sizeof(claims) / sizeof(claims[0]),
	.margins = {
		[COMPARE_MIN_CHANGE] = { "min_change_headline", 0.02, "min_change" },
		[COMPARE_MIN_CHANGE_COUNTER] = { "min_change_counter", 0.05, NULL },
		[COMPARE_SAME_BAND] = { "same_band", 0.10, NULL },
	},
};
COMPARE_CLASS_REGISTER(class_time)
