/*
 * One side of a comparison, indexed: its measured runs by id (warm-ups
 * set aside, failed runs and stages listed in the output's "failed"), its
 * boots in the order they ran, and its metric values grouped by row key
 * into one list of iteration values per boot; and what the side's agent
 * said it could not measure.
 */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_int.h"
#include "stats.h"
#include "util.h"
#include "banned.h"

static void add_unique_string(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;

	if (!s || !*s)
		return;
	json_array_foreach(arr, i, v)
		if (!strcmp(json_string_value(v), s))
			return;
	json_array_append_new(arr, json_string(s));
}

/* "<name>.cpuN": per-CPU, left out of rows */
static int is_per_cpu(const char *name)
{
	const char *dot = strrchr(name, '.');

	if (!dot || strncmp(dot, ".cpu", 4) || !dot[4])
		return 0;
	for (dot += 4; *dot; dot++)
		if (*dot < '0' || *dot > '9')
			return 0;
	return 1;
}

static const char *run_failure(const json_t *run)
{
	const json_t *e = json_object_get(run, "error");
	const char *state = jsonget_str(run, "state");

	if (json_is_string(e))
		return json_string_value(e);
	if (json_is_object(e))
		return jsonget_str(e, "message") ? jsonget_str(e, "message") : "failed";
	if (e && !json_is_null(e) && !json_is_false(e))
		return "failed";
	if (state && (!strcmp(state, "failed") || !strcmp(state, "cancelled")))
		return state;
	return NULL;
}

static void boot_key(struct strbuf *sb, const json_t *run)
{
	long long v;

	strbuf_reset(sb);
	if (jsonget_str(run, "boot_id") && *jsonget_str(run, "boot_id"))
		strbuf_addf(sb, "boot:%s", jsonget_str(run, "boot_id"));
	else if (jsonget_int(run, "stage", &v) == 0)	/* one run stage follows one boot */
		strbuf_addf(sb, "stage:%lld", v);
	else
		strbuf_addstr(sb, "-");
}

static int side_load_runs(struct side *s, struct strbuf *err)
{
	const json_t *runs = json_object_get(s->doc, "runs");
	struct strbuf key = STRBUF_INIT;
	size_t i;
	json_t *run;

	if (!json_is_array(runs))
		return strbuf_seterr(err, "%s: \"runs\" is missing or not an array", s->name);
	json_array_foreach(runs, i, run) {
		long long id = 0, spec = 0, cas = 0;
		const char *side = jsonget_str(run, "side"), *why;
		char idbuf[32];

		if (jsonget_int(run, "id", &id) < 0) {
			s->ignored++;
			continue;
		}
		if (s->filter && (!side || strcmp(side, s->filter)))
			continue;
		if (json_is_true(json_object_get(run, "warmup")))
			continue;
		if ((why = run_failure(run))) {
			json_t *f = json_pack("{s:s,s:I,s:s}", "side", s->name, "run", (json_int_t)id,
					      "reason", why);

			if (jsonget_int(run, "spec", &spec) == 0)
				json_object_set_new(f, "spec", json_integer(spec));
			if (jsonget_int(run, "case", &cas) == 0)
				json_object_set_new(f, "case", json_integer(cas));
			if (jsonget_str(run, "workload"))
				json_object_set_new(f, "workload", json_string(jsonget_str(run, "workload")));
			json_array_append_new(s->failed, f);
			continue;
		}
		if (jsonget_int(run, "spec", &spec) < 0 || jsonget_int(run, "case", &cas) < 0 ||
		    !jsonget_str(run, "workload")) {
			s->ignored++;
			continue;
		}
		snprintf(idbuf, sizeof(idbuf), "%lld", id);
		json_object_set(s->runs, idbuf, run);
		boot_key(&key, run);
		if (!json_object_get(s->boots, key.buf))
			json_object_set_new(s->boots, key.buf,
					    json_integer((json_int_t)json_object_size(s->boots)));
		add_unique_string(s->machines, jsonget_str(run, "machine"));
		add_unique_string(s->builds, jsonget_str(run, "build_id"));
		s->measured++;
	}
	strbuf_release(&key);
	return 0;
}

static json_t *group_new(const json_t *run, const char *metric, const json_t *m, size_t nboots)
{
	const char *unit = jsonget_str(m, "unit"), *dir = jsonget_str(m, "direction");
	json_t *boots = json_array(), *params = json_object_get(run, "params");
	size_t i;

	for (i = 0; i < nboots; i++)
		json_array_append_new(boots, json_array());
	return json_pack("{s:O,s:O,s:s,s:o,s:s,s:s,s:s,s:o}",
			 "spec", json_object_get(run, "spec"), "case", json_object_get(run, "case"),
			 "workload", jsonget_str(run, "workload"),
			 "params", json_is_object(params) ? json_deep_copy(params) : json_object(),
			 "metric", metric, "unit", unit ? unit : "",
			 "direction", dir && (!strcmp(dir, "higher") || !strcmp(dir, "lower")) ? dir : "neutral",
			 "boots", boots);
}

static int side_load_metrics(struct side *s, struct strbuf *err)
{
	const json_t *metrics = json_object_get(s->doc, "metrics");
	struct strbuf key = STRBUF_INIT, bkey = STRBUF_INIT;
	size_t i, nboots = json_object_size(s->boots);
	json_t *m;

	if (!json_is_array(metrics))
		return strbuf_seterr(err, "%s: \"metrics\" is missing or not an array", s->name);
	json_array_foreach(metrics, i, m) {
		const char *name = jsonget_str(m, "name");
		const json_t *value = json_object_get(m, "value"), *run;
		long long id = 0, spec = 0;
		char idbuf[32], *pc;
		json_t *g;

		if (jsonget_int(m, "run", &id) < 0 || !name || !*name ||
		    (!json_is_number(value) && !json_is_null(value) && value)) {
			s->ignored++;
			continue;
		}
		snprintf(idbuf, sizeof(idbuf), "%lld", id);
		run = json_object_get(s->runs, idbuf);
		if (!run)
			continue;	/* the other side's, a warm-up, or a failed run */
		if (is_per_cpu(name)) {
			json_object_set_new(s->per_cpu, name, json_true());
			continue;
		}
		if (json_is_number(value) && !isfinite(json_number_value(value))) {
			s->ignored++;
			continue;
		}
		jsonget_int(run, "spec", &spec);
		pc = compare_params_canon(json_object_get(run, "params"));
		compare_row_key(&key, spec, jsonget_str(run, "workload"), pc, name);
		free(pc);
		g = json_object_get(s->groups, key.buf);
		if (!g) {
			g = group_new(run, name, m, nboots);
			json_object_set_new(s->groups, key.buf, g);
		}
		if (json_is_number(value)) {
			json_t *bi;

			boot_key(&bkey, run);
			bi = json_object_get(s->boots, bkey.buf);
			json_array_append_new(json_array_get(json_object_get(g, "boots"),
							     (size_t)json_integer_value(bi)),
					      json_real(json_number_value(value)));
		} else {
			const char *why = jsonget_str(m, "reason");

			json_object_set_new(g, "unavailable", json_string(why ? why : "no value"));
		}
	}
	strbuf_release(&key);
	strbuf_release(&bkey);
	return 0;
}

/* The per-boot samples of a group: the median of each boot's iterations,
 * in boot order. Returns how many (boots without a value are skipped). */
size_t compare_group_samples(const json_t *g, double *out)
{
	const json_t *boots = json_object_get(g, "boots"), *vals;
	size_t i, j, n = 0;

	json_array_foreach(boots, i, vals) {
		size_t k = json_array_size(vals);
		double *v;
		json_t *x;

		if (!k)
			continue;
		v = calloc(k, sizeof(*v));
		if (!v)
			abort();
		json_array_foreach(vals, j, x)
			v[j] = json_number_value(x);
		out[n++] = stats_median(v, k);
		free(v);
	}
	return n;
}

/* The side's unavailable counters, as the document keeps them (below). */
static const json_t *side_unavailable(const struct side *s)
{
	const json_t *by = json_object_get(s->doc, "unavailable_by_side");

	if (json_is_object(by))
		return json_object_get(by, s->filter ? s->filter : "");
	return json_object_get(s->doc, "unavailable");
}

json_t *compare_side_unavailable_all(const struct side *s)
{
	const json_t *u = side_unavailable(s);

	return json_is_object(u) ? json_deep_copy(u) : json_object();
}

/*
 * Why a side lacks a metric, as its agent said: from the document's
 * "unavailable" (one side per document) or its "unavailable_by_side" under
 * the side's filter. A derived metric (X.per_sec, X.peak_per_sec) is
 * unavailable for the reason its counter X is.
 */
const char *compare_side_unavailable(const struct side *s, const char *metric)
{
	const json_t *u = side_unavailable(s);
	static const char *const derived[] = { ".peak_per_sec", ".per_sec" };
	char base[256];
	const char *why;
	size_t i, n;

	if (!metric)
		return NULL;
	if ((why = jsonget_str(u, metric)))
		return why;
	n = strlen(metric);
	for (i = 0; i < ARRAY_SIZE(derived); i++) {
		size_t k = strlen(derived[i]);

		if (n > k && n - k < sizeof(base) && !strcmp(metric + n - k, derived[i])) {
			memcpy(base, metric, n - k);
			base[n - k] = 0;
			return jsonget_str(u, base);
		}
	}
	return NULL;
}

void compare_side_release(struct side *s)
{
	json_decref(s->runs);
	json_decref(s->boots);
	json_decref(s->groups);
	json_decref(s->machines);
	json_decref(s->builds);
	json_decref(s->per_cpu);
}

int compare_side_load(struct side *s, const char *name, const json_t *doc, const char *filter,
	      json_t *failed, struct strbuf *err)
{
	const json_t *f;
	size_t i;

	s->name = name;
	s->doc = doc;
	s->filter = filter;
	s->failed = failed;
	s->runs = json_object();
	s->boots = json_object();
	s->groups = json_object();
	s->machines = json_array();
	s->builds = json_array();
	s->per_cpu = json_object();
	if (!json_is_object(doc))
		return strbuf_seterr(err, "%s: not a JSON object", name);
	if (side_load_runs(s, err) < 0 || side_load_metrics(s, err) < 0)
		return -1;
	json_array_foreach(json_object_get(doc, "failed"), i, f) {
		json_t *c = json_is_object(f) ? json_deep_copy(f) : json_pack("{s:O}", "reason", f);

		if (filter && jsonget_str(c, "side") && strcmp(jsonget_str(c, "side"), filter)) {
			json_decref(c);
			continue;
		}
		json_object_set_new(c, "side", json_string(name));
		json_array_append_new(failed, c);
	}
	if (!s->measured)
		json_array_append_new(failed, json_pack("{s:s,s:s}", "side", name, "reason",
							"no measured runs"));
	return 0;
}
