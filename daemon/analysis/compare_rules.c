/*
 * The rules a comparison is decided by: their defaults (docs/statistics.md
 * says where each figure comes from) and the "rules" object a comparison
 * carries, by which a stored one is known to be stale.
 */
#include "compare_rules.h"

#include <stdlib.h>

#include "compare_int.h"
#include "banned.h"

void compare_rules_default(struct compare_rules *r)
{
	r->alpha = 0.01;
	r->min_change_headline = 0.02;
	r->min_change_counter = 0.05;
	r->same_band = 0.10;
	r->min_change_work = 0.01;
	r->same_band_work = 0.01;
	r->min_change_wait = 0.05;
	r->same_band_wait = 0.05;
	r->wait_floor = 0.05;
	r->min_change_count = 0.0001;
	r->min_change_few = 0.20;
	r->noise_floor = 0.001;
	r->equiv_alpha = 0.05;
	r->power = 0.8;
	r->resamples = 2000;
	r->seed = 0x746c626c6162ULL;	/* "tlblab" */
	r->ci_level = 0.95;
	r->outlier_z = 3.5;
	r->overrides = NULL;
	r->noverrides = 0;
}

json_t *compare_rules_json(const struct compare_rules *r)
{
	json_t *o = json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:i,s:f,s:f,s:s,s:s,s:s,s:s,s:s}",
			      "alpha", r->alpha,
			      "min_change_headline", r->min_change_headline, "min_change_counter",
			      r->min_change_counter, "same_band", r->same_band,
			      "min_change_work", r->min_change_work, "same_band_work", r->same_band_work,
			      "min_change_wait", r->min_change_wait, "same_band_wait", r->same_band_wait,
			      "wait_floor", r->wait_floor, "min_change_count", r->min_change_count,
			      "min_change_few", r->min_change_few,
			      "noise_floor", r->noise_floor,
			      "equiv_alpha", r->equiv_alpha, "power", r->power, "resamples", r->resamples,
			      "ci_level", r->ci_level, "outlier_z", r->outlier_z,
			      "test", "Mann-Whitney U, two-sided, on per-boot medians (exact; with ties, "
			      "exact permutation); work and wait rows: Welch's t on log per-boot medians, "
			      "each side's sd at least the noise floor; work rows from a base near 0 "
			      "(counts that were 0): Welch's t on the values, the change absolute",
			      "ci", "bootstrap percentile interval of median(patched)/median(base), as % "
			      "change (the difference of medians when a base resample's median is 0); "
			      "work and wait rows: the Welch t interval",
			      "multiplicity", "Holm over headline rows (the job's verdict) and over the time "
			      "scores of workloads whose headline is their instruction rows; "
			      "Benjamini-Hochberg over the secondary rows of each class; context rows untested",
			      "same", "equivalence: the 1 - 2 equiv_alpha interval (Hodges-Lehmann/Moses of the "
			      "shift of log values; Welch t for work and wait rows) within the least change "
			      "the row would call; within only +-same_band it says no change beyond it; "
			      "a wait row below wait_floor spin-wait instructions per op on every boot of "
			      "both sides is tested on its values against a tenth of the floor, and same "
			      "when that calls nothing",
			      "classes", compare_class_legend());
	json_t *m;
	size_t i;

	if (!o)
		abort();
	if (!r->noverrides)
		return o;
	m = json_object();
	for (i = 0; i < r->noverrides; i++) {
		const struct compare_override *ov = &r->overrides[i];

		if (json_object_get(m, ov->metric))
			continue;	/* the first one wins */
		json_object_set_new(m, ov->metric, json_pack("{s:o,s:o,s:o}", "alpha", jreal(ov->alpha),
							     "min_change", jreal(ov->min_change),
							     "same_band", jreal(ov->same_band)));
	}
	json_object_set_new(o, "metrics", m);
	return o;
}
