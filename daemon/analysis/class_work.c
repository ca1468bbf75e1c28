/*
 * class: work, what the kernel did for one operation. Instructions per
 * operation (the TCG plugin's <wl>.kernel_insn_per_op and
 * .user_insn_per_op, or perf's instructions:k/:u, <wl>.perf_kernel_insn_per_op
 * and .perf_user_insn_per_op) and counters per operation (C.per_kop,
 * tlb.shootdowns_per_kop, kfunc.<fn>.calls_per_op, the TLB model's
 * *_per_op): near-deterministic on an emulated machine, so tested by
 * Welch's t on logs with a 1% least change (docs/statistics.md says why).
 */
#include "compare_class.h"

static const struct compare_claim claims[] = {
	{ COMPARE_CLAIM_NAME, NULL, "_insn_per_op" },
	{ COMPARE_CLAIM_NAME, NULL, ".per_kop" },	/* C.per_kop */
	{ COMPARE_CLAIM_NAME, NULL, "_per_kop" },	/* tlb.shootdowns_per_kop */
	{ COMPARE_CLAIM_NAME, NULL, ".per_op" },
	{ COMPARE_CLAIM_NAME, NULL, "_per_op" },	/* kfunc.<fn>.calls_per_op */
};

static const struct compare_class class_work = {
	.name = "work",
	.legend = "instructions per operation, the emulator's (TCG plugin, not hardware cycles) or on a real "
		  "machine the CPU's (perf), and counters per operation",
	.order = 10,
	/* the TLB model's page walks and lost translations are the kernel's
	 * work too: their regression is the job's */
	.flags = COMPARE_CLASS_TESTED | COMPARE_CLASS_MAKES_VERDICT | COMPARE_CLASS_SECONDARY_COUNTS |
		 COMPARE_CLASS_LOG_T | COMPARE_CLASS_NEAR_ZERO,
	.claims = claims,
	.nclaims = sizeof(claims) / sizeof(claims[0]),
	.margins = {
		[COMPARE_MIN_CHANGE] = { "min_change_work", 0.01, NULL },
		[COMPARE_SAME_BAND] = { "same_band_work", 0.01, NULL },
	},
};
COMPARE_CLASS_REGISTER(class_work)
