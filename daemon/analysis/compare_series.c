/*
 * A nightly point: what one job measured, as the values its series take
 * (compare.h, compare_point_values). The side is indexed as a comparison
 * indexes one (compare_side.c), so a point and an A/B row agree on what a
 * boot's sample is: the median of its measured iterations.
 */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare_int.h"
#include "stats.h"
#include "util.h"
#include "banned.h"

static int by_key(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;

	return strcmp(jsonget_str(x, "key"), jsonget_str(y, "key"));
}

json_t *compare_point_values(const json_t *doc, const char *filter, struct strbuf *err)
{
	json_t *failed = json_array(), *out = json_array(), *g;
	struct side s;
	const char *key;

	if (compare_side_load(&s, "point", doc, filter, failed, err) < 0) {
		compare_side_release(&s);
		json_decref(failed);
		json_decref(out);
		return NULL;
	}
	json_object_foreach(s.groups, key, g) {
		size_t nb = json_array_size(json_object_get(g, "boots")), n, i;
		double *v = xcalloc(nb ? nb : 1, sizeof(*v)), lo, hi;
		json_t *samples, *o;
		char *pc;

		n = compare_group_samples(g, v);
		if (!n) {
			free(v);
			continue;
		}
		samples = json_array();
		lo = hi = v[0];
		for (i = 0; i < n; i++) {
			json_array_append_new(samples, json_real(v[i]));
			lo = v[i] < lo ? v[i] : lo;
			hi = v[i] > hi ? v[i] : hi;
		}
		pc = compare_params_canon(json_object_get(g, "params"));
		o = json_pack("{s:s,s:O,s:O,s:s,s:O,s:s,s:O,s:O,s:o,s:f,s:f,s:f,s:i}",
			      "key", key,
			      "spec", json_object_get(g, "spec"),
			      "workload", json_object_get(g, "workload"),
			      "params_key", pc,
			      "params", json_object_get(g, "params"),
			      "metric", jsonget_str(g, "metric"),
			      "unit", json_object_get(g, "unit"),
			      "direction", json_object_get(g, "direction"),
			      "samples", samples,
			      "value", stats_median(v, n), "lo", lo, "hi", hi, "boots", (int)n);
		free(pc);
		free(v);
		if (!o) {
			compare_side_release(&s);
			json_decref(failed);
			json_decref(out);
			strbuf_seterr(err, "point: a group of the side does not make a value");
			return NULL;
		}
		json_array_append_new(out, o);
	}
	compare_sort_array(out, by_key);
	compare_side_release(&s);
	json_decref(failed);
	return out;
}
