/*
 * A per-patch series' comparison (compare.h, compare_per_patch): which
 * patch of a series moved what. The inputs are comparison documents
 * already made by compare_sides: each prefix against the base, and each
 * prefix against the one before (the step patch k makes). This file only
 * lines their headline rows up, patch by patch.
 */
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "compare_int.h"
#include "strbuf.h"
#include "util.h"
#include "banned.h"

/* what one comparison says of one row: {"change_pct", "ci", "verdict"} */
static json_t *row_cell(const json_t *row)
{
	if (!row)
		return json_null();
	return json_pack("{s:O,s:O,s:O}", "change_pct", json_object_get(row, "change_pct") ?: json_null(),
			 "ci", json_object_get(row, "ci") ?: json_null(), "verdict",
			 json_object_get(row, "verdict") ?: json_null());
}

/* a row across comparisons: its spec, workload, parameters and metric (a
 * row's "case" is its index within a spec, which two jobs may number alike) */
static void row_key(struct strbuf *sb, const json_t *row)
{
	long long spec = 0;

	jsonget_int(row, "spec", &spec);
	strbuf_reset(sb);
	strbuf_addf(sb, "%lld\x1f%s\x1f%s\x1f%s", spec, jsonget_str(row, "workload") ?: "",
		    jsonget_str(row, "params_text") ?: "", jsonget_str(row, "metric") ?: "");
}

/* doc's headline rows by key, into index (key -> row) */
static void index_rows(const json_t *doc, json_t *index, json_t *order)
{
	struct strbuf key = STRBUF_INIT;
	const json_t *row;
	size_t i;

	json_array_foreach(json_object_get(doc, "rows"), i, row) {
		if (!json_is_true(json_object_get(row, "headline")))
			continue;
		row_key(&key, row);
		if (order && !json_object_get(index, key.buf))
			json_array_append_new(order, json_string(key.buf));
		json_object_set(index, key.buf, (json_t *)row);
	}
	strbuf_release(&key);
}

static int moved(const json_t *cell)
{
	const char *v = jsonget_str(cell, "verdict");

	return v && (!strcmp(v, "regression") || !strcmp(v, "improvement") || !strcmp(v, "changed"));
}

json_t *compare_per_patch(json_t *const *vs_base, json_t *const *steps, size_t n)
{
	json_t *order = json_array(), *rows = json_array(), *step_verdicts = json_array();
	json_t **base_idx = xcalloc(n, sizeof(*base_idx)), **step_idx = xcalloc(n, sizeof(*step_idx));
	json_t *first = json_object(), *key;
	size_t i, k;

	/* rows in the order of the longest prefix compared, then any others */
	for (k = n; k-- > 0;)
		if (vs_base[k])
			index_rows(vs_base[k], first, order);
	for (k = 0; k < n; k++) {
		base_idx[k] = json_object();
		step_idx[k] = json_object();
		if (vs_base[k])
			index_rows(vs_base[k], base_idx[k], NULL);
		if (steps[k])
			index_rows(steps[k], step_idx[k], NULL);
		json_array_append_new(step_verdicts, steps[k] ? json_string(compare_verdict(steps[k])) : json_null());
	}
	json_array_foreach(order, i, key) {
		const char *kk = json_string_value(key);
		const json_t *r = json_object_get(first, kk);
		json_t *cum = json_array(), *st = json_array(), *by = json_array();

		for (k = 0; k < n; k++) {
			json_t *cell = row_cell(json_object_get(step_idx[k], kk));

			json_array_append_new(cum, row_cell(json_object_get(base_idx[k], kk)));
			if (moved(cell))
				json_array_append_new(by, json_integer((json_int_t)(k + 1)));
			json_array_append_new(st, cell);
		}
		json_array_append_new(rows, json_pack("{s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:o,s:o,s:o}",
			"case", json_object_get(r, "case"), "workload", json_object_get(r, "workload"),
			"params_text", json_object_get(r, "params_text"), "metric", json_object_get(r, "metric"),
			"unit", json_object_get(r, "unit"), "class", json_object_get(r, "class") ?: json_null(),
			"direction", json_object_get(r, "direction"), "vs_base", cum, "steps", st, "moved_by", by));
	}
	for (k = 0; k < n; k++) {
		json_decref(base_idx[k]);
		json_decref(step_idx[k]);
	}
	free(base_idx);
	free(step_idx);
	json_decref(first);
	json_decref(order);
	return json_pack("{s:o,s:o}", "rows", rows, "step_verdicts", step_verdicts);
}
