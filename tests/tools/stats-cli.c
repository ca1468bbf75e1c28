/*
 * stats-cli: runs daemon/stats on vectors from stdin, for
 * tests/integration/t0060-stats-reference.sh, which compares the answers
 * with scipy's.
 *
 *   stats-cli [--resamples N] [--seed S] <in.jsonl >out.jsonl
 *
 * Each input line is {"id": ID, "a": [numbers], "b": [numbers]}; each output
 * line is
 *   {"id": ID,
 *    "a": {"n", "mean", "median", "std"}, "b": {...},
 *    "mw": {"u", "p", "method": "exact"|"asymptotic"} or {"error": "EINVAL"},
 *    "boot": {"lo", "hi"} or {"error": ...}}
 * with null where a function returned NAN. Exit status 0, or 2 on input
 * that is not such a line (longer than 1 MiB, more than 100000 values).
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "util.h"
#include "banned.h"

#define LINE_MAX_BYTES (1u << 20)
#define VALUES_MAX 100000

static json_t *num(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *error(int r)
{
	const char *name = strerrorname_np(-r);

	return json_pack("{s:s}", "error", name ? name : "?");
}

/* the values of array `key` of obj into a new array; -1 when malformed */
static int read_vector(json_t *obj, const char *key, double **ret, size_t *ret_n)
{
	json_t *arr = json_object_get(obj, key), *x;
	double *v;
	size_t i, n;

	if (!json_is_array(arr) || (n = json_array_size(arr)) > VALUES_MAX)
		return -1;
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return -1;
	json_array_foreach(arr, i, x) {
		if (!json_is_number(x)) {
			free(v);
			return -1;
		}
		v[i] = json_number_value(x);
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

static json_t *describe(const double *v, size_t n)
{
	return json_pack("{s:I s:o s:o s:o}", "n", (json_int_t)n,
			 "mean", num(stats_mean(v, n)), "median", num(stats_median(v, n)),
			 "std", num(stats_stddev(v, n)));
}

static json_t *compute(const double *a, size_t na, const double *b, size_t nb,
		       int resamples, uint64_t seed)
{
	json_t *out = json_object(), *mw, *boot;
	double u, p, lo, hi, level = 0.95;
	int r, m;

	r = stats_mann_whitney(a, na, b, nb, &u, &p);
	m = stats_mann_whitney_method(a, na, b, nb);
	if (r < 0)
		mw = error(r);
	else
		mw = json_pack("{s:o s:o s:s}", "u", num(u), "p", num(p), "method",
			       m == STATS_MWU_EXACT ? "exact" :
			       m == STATS_MWU_ASYMPTOTIC ? "asymptotic" :
			       m == STATS_MWU_PERMUTATION ? "permutation" : "?");
	r = stats_bootstrap_ci(a, na, b, nb, STATS_BOOT_RATIO, resamples, seed, &level, 1, &lo, &hi);
	boot = r < 0 ? error(r) : json_pack("{s:o s:o}", "lo", num(lo), "hi", num(hi));
	json_object_set_new(out, "a", describe(a, na));
	json_object_set_new(out, "b", describe(b, nb));
	json_object_set_new(out, "mw", mw);
	json_object_set_new(out, "boot", boot);
	return out;
}

int main(int argc, char **argv)
{
	char *line = NULL, *s;
	size_t cap = 0, na, nb, lineno = 0;
	ssize_t len;
	long resamples = 2000;
	uint64_t seed = 1;
	double *a, *b;
	json_t *in, *out;
	int i, st = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--resamples") && i + 1 < argc &&
		    !parse_int_range(argv[i + 1], 1, 1000000, &resamples)) {
			i++;
		} else if (!strcmp(argv[i], "--seed") && i + 1 < argc &&
			   !parse_u64(argv[i + 1], &seed)) {
			i++;
		} else {
			fprintf(stderr, "usage: stats-cli [--resamples N] [--seed S] <in.jsonl\n");
			return 3;
		}
	}
	while ((len = getline(&line, &cap, stdin)) >= 0) {
		lineno++;
		if ((size_t)len > LINE_MAX_BYTES) {
			fprintf(stderr, "stats-cli: line %zu: longer than %u bytes\n", lineno,
				LINE_MAX_BYTES);
			st = 2;
			break;
		}
		in = json_loads(line, 0, NULL);
		if (!in || read_vector(in, "a", &a, &na) < 0) {
			fprintf(stderr, "stats-cli: line %zu: not {\"a\": [...], \"b\": [...]}\n", lineno);
			json_decref(in);
			st = 2;
			break;
		}
		if (read_vector(in, "b", &b, &nb) < 0) {
			fprintf(stderr, "stats-cli: line %zu: not {\"a\": [...], \"b\": [...]}\n", lineno);
			free(a);
			json_decref(in);
			st = 2;
			break;
		}
		out = compute(a, na, b, nb, (int)resamples, seed);
		json_object_set(out, "id", json_object_get(in, "id") ? json_object_get(in, "id") :
					   json_null());
		s = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS);
		if (s)
			puts(s);
		free(s);
		json_decref(out);
		json_decref(in);
		free(a);
		free(b);
		if (!s) {
			st = 2;
			break;
		}
	}
	free(line);
	if (fflush(stdout) != 0)
		st = 2;
	return st;
}
