/*
 * What names a row across the comparison's passes (compare_int.h): a case's
 * parameters in canonical form and as text, the row key, and sorting a
 * JSON array. Below every pass, so that none of them calls back into the
 * document's assembly (compare_doc.c).
 */
#include <stdlib.h>
#include <string.h>

#include "compare_int.h"
#include "banned.h"

#define KEY_SEP "\x1f"

/* Parameters as sorted compact JSON: the same case in two jobs gets the
 * same key whatever order its parameters were written in. */
char *compare_params_canon(const json_t *params)
{
	json_t *empty = NULL;
	char *s;

	if (!json_is_object(params))
		params = empty = json_object();
	s = json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(empty);
	if (!s)
		abort();
	return s;
}

/* "mode=threads workers=2", keys sorted */
void compare_params_text(struct strbuf *sb, const json_t *params)
{
	const char **keys;
	const char *k;
	size_t n = json_object_size(params), i = 0, j;
	json_t *v;

	if (!n)
		return;
	keys = calloc(n, sizeof(*keys));
	if (!keys)
		abort();
	json_object_foreach((json_t *)params, k, v)
		keys[i++] = k;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
			const char *t = keys[j];

			keys[j] = keys[j - 1];
			keys[j - 1] = t;
		}
	for (i = 0; i < n; i++) {
		v = json_object_get(params, keys[i]);
		strbuf_addf(sb, "%s%s=", i ? " " : "", keys[i]);
		if (json_is_string(v)) {
			strbuf_addstr(sb, json_string_value(v));
		} else {
			char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(12));

			strbuf_addstr(sb, t ? t : "?");
			free(t);
		}
	}
	free(keys);
}

void compare_row_key(struct strbuf *sb, long long spec, const char *workload, const char *pcanon,
	     const char *metric)
{
	strbuf_reset(sb);
	strbuf_addf(sb, "%lld" KEY_SEP "%s" KEY_SEP "%s" KEY_SEP "%s", spec, workload, pcanon, metric);
}

void compare_sort_array(json_t *arr, int (*cmp)(const void *, const void *))
{
	size_t n = json_array_size(arr), i;
	json_t **v = calloc(n + 1, sizeof(*v));

	if (!v)
		abort();
	for (i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(arr, i));
	qsort(v, n, sizeof(*v), cmp);
	json_array_clear(arr);
	for (i = 0; i < n; i++)
		json_array_append_new(arr, v[i]);
	free(v);
}
