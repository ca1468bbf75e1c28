/*
 * The rules a comparison is decided by: their defaults (docs/statistics.md
 * says where each figure comes from) and the "rules" object a comparison
 * carries, by which a stored one is known to be stale.
 */
#include "compare_rules.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare_int.h"
#include "banned.h"

void compare_rules_default(struct compare_rules *r)
{
	r->alpha = 0.01;
	memset(r->margins, 0, sizeof(r->margins));
	for (size_t i = 0; i < compare_class_count(); i++)
		for (int k = 0; k < COMPARE_MARGIN_MAX; k++)
			r->margins[i][k] = compare_class_at(i)->margins[k].def;
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

double *compare_rules_slot(struct compare_rules *r, const char *key)
{
	for (size_t i = 0; key && i < compare_class_count(); i++)
		for (int k = 0; k < COMPARE_MARGIN_MAX; k++) {
			const struct compare_margin *m = &compare_class_at(i)->margins[k];

			if (m->key && (!strcmp(m->key, key) || (m->suite_key && !strcmp(m->suite_key, key))))
				return &r->margins[i][k];
		}
	return NULL;
}

double compare_rules_get(const struct compare_rules *r, const char *key)
{
	const double *v = compare_rules_slot((struct compare_rules *)r, key);

	return v ? *v : NAN;
}

size_t compare_rules_suite_keys(const char **keys, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < compare_class_count(); i++)
		for (int k = 0; k < COMPARE_MARGIN_MAX; k++) {
			const struct compare_margin *m = &compare_class_at(i)->margins[k];

			if (!m->key)
				continue;
			if (n < max)
				keys[n] = m->suite_key ?: m->key;
			n++;
		}
	return n;
}

double compare_rules_margin_pct(const struct compare_rules *r, const struct compare_class *c,
				enum compare_margin_kind k, int own)
{
	int i = compare_class_index(c);

	if (i < 0 || k >= COMPARE_MARGIN_MAX)
		return 0;
	/* a counter's least change without a key of its own is the own rows' */
	if (k == COMPARE_MIN_CHANGE && !own && c->margins[COMPARE_MIN_CHANGE_COUNTER].key)
		k = COMPARE_MIN_CHANGE_COUNTER;
	else if (k == COMPARE_MIN_CHANGE_COUNTER && !c->margins[k].key)
		k = COMPARE_MIN_CHANGE;
	return 100 * r->margins[i][k];
}

/* The classes as the rules object lists them, and their margins under
 * their keys in o */
static json_t *classes_json(const struct compare_rules *r, json_t *o)
{
	static const char *const names[COMPARE_MARGIN_MAX] = { "min_change", "min_change_counter", "same_band" };
	json_t *list = json_array();

	for (size_t i = 0; i < compare_class_count(); i++) {
		const struct compare_class *c = compare_class_at(i);
		int tested = !!(c->flags & COMPARE_CLASS_TESTED);
		json_t *margins = json_null(), *keys;

		if (tested) {
			margins = json_object();
			keys = json_object();
			for (int k = 0; k < COMPARE_MARGIN_MAX; k++) {
				const struct compare_margin *m = &c->margins[k];
				/* a counter margin without a key is set by the own rows' */
				const struct compare_margin *by = m->key ? m : &c->margins[COMPARE_MIN_CHANGE];

				json_object_set_new(margins, names[k],
						    json_real(compare_rules_margin_pct(r, c, k, k != COMPARE_MIN_CHANGE_COUNTER) / 100));
				if (by->key)
					json_object_set_new(keys, names[k], json_string(by->suite_key ?: by->key));
				if (m->key)
					json_object_set_new(o, m->key, json_real(r->margins[i][k]));
			}
			json_object_set_new(margins, "keys", keys);
		}
		json_array_append_new(list, json_pack("{s:s,s:s,s:b,s:b,s:o}", "name", c->name, "legend", c->legend,
						      "tested", tested, "makes_verdict",
						      !!(c->flags & COMPARE_CLASS_MAKES_VERDICT), "margins", margins));
	}
	return list;
}

json_t *compare_rules_json(const struct compare_rules *r)
{
	json_t *o = json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:i,s:f,s:f,s:s,s:s,s:s,s:s}",
			      "alpha", r->alpha,
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
			      "when that calls nothing");
	json_t *m;
	size_t i;

	if (!o)
		abort();
	json_object_set_new(o, "classes", classes_json(r, o));
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
