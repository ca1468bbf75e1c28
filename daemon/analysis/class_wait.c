/*
 * class: wait, spin-wait instructions per operation (<wl>.spin_insn_per_op,
 * the plugin's count of instructions in spin-wait loops): how long an
 * initiator spins follows how the vCPUs interleave, so it is noisier than
 * work (a 5% least change), and a row that barely spins on any boot is
 * none to speak of (the rules' wait_floor).
 */
#include "compare_class.h"

static const struct compare_claim claims[] = {
	{ COMPARE_CLAIM_NAME, NULL, ".spin_insn_per_op" },
};

static const struct compare_class class_wait = {
	.name = "wait",
	.legend = "spin-wait instructions",
	.order = 20,
	.flags = COMPARE_CLASS_TESTED | COMPARE_CLASS_MAKES_VERDICT | COMPARE_CLASS_LOG_T | COMPARE_CLASS_FLOOR,
	.claims = claims,
	.nclaims = sizeof(claims) / sizeof(claims[0]),
	.margins = {
		[COMPARE_MIN_CHANGE] = { "min_change_wait", 0.05, NULL },
		[COMPARE_SAME_BAND] = { "same_band_wait", 0.05, NULL },
	},
};
COMPARE_CLASS_REGISTER(class_wait)
