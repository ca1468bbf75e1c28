/*
 * A job's comparison as the scheduler and the API get it: read from the
 * store when it was kept under the same rules and analysis code, else
 * computed from the store's runs (compare_sides) and kept once the job
 * has ended; and a per-patch series' steps. Why this folder, between
 * sched/ and store/: comparison_cache.h.
 */
#include "comparison_cache.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "compare.h"
#include "config.h"
#include "jsonget.h"
#include "store.h"
#include "util.h"
#include "banned.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* the comparison rules of job j's suite, or *defaults when it is gone */
static const struct compare_rules *job_rules(const struct lab_config *cfg, const json_t *j,
					     struct compare_rules *defaults)
{
	const struct cfg_suite *suite = config_suite(cfg, jsonget_str(j, "suite"));

	compare_rules_default(defaults);
	return suite ? &suite->rules : defaults;
}

int comparison_cache_get(struct store *st, const struct lab_config *cfg, int64_t job,
		       struct strbuf *ret_doc, struct strbuf *err)
{
	json_t *j = store_job_json(st, job), *doc = NULL, *cmp = NULL, *rules_doc;
	struct compare_rules defaults;
	const struct compare_rules *rules;
	const char *state;
	char *rules_key = NULL, *text = NULL;
	double t0;
	int rc = -1;

	if (!j) {
		if (errno == ENOENT)
			return -ENOENT;
		rc = -errno;
		strbuf_seterr(err, "job %lld: store: could not read it: %s", (long long)job, store_strerror(rc));
		return rc;
	}
	if (strcmp(jsonget_str(j, "kind") ?: "", "ab")) {
		rc = -EINVAL;
		goto out;
	}
	rules = job_rules(cfg, j, &defaults);
	rules_doc = compare_rules_json(rules);
	json_object_set_new(rules_doc, "compare_source", json_string(compare_source_id));
	rules_key = json_dumps(rules_doc, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(rules_doc);
	if (!rules_key)
		abort();
	if (store_comparison_get(st, job, rules_key, ret_doc)) {
		rc = 0;
		goto out;
	}
	t0 = now_ms();
	doc = store_compare_doc(st, job);
	cmp = doc ? compare_sides(doc, "base", doc, "patched", rules, err) : NULL;
	if (!doc) {
		/* the job is there: a missing document is the store's failure */
		rc = errno == ENOENT ? -EIO : -errno;
		strbuf_seterr(err, "job %lld: store: could not read its runs: %s", (long long)job,
			      store_strerror(rc));
		goto out;
	}
	if (!cmp)
		goto out;
	text = json_dumps(cmp, JSON_COMPACT | JSON_REAL_PRECISION(12));
	if (!text)
		abort();
	strbuf_reset(ret_doc);
	strbuf_addstr(ret_doc, text);
	state = jsonget_str(j, "state") ?: "";
	rc = 0;
	if (!strcmp(state, "done") || !strcmp(state, "failed") || !strcmp(state, "cancelled")) {
		rc = store_comparison_put(st, job, rules_key, text, compare_verdict(cmp), now_ms() - t0);
		if (store_failed(rc))
			strbuf_seterr(err, "job %lld: store: could not keep the comparison and its verdict: %s",
				      (long long)job, store_strerror(rc));
		else
			rc = 0;	/* -ENOENT: the job went on meanwhile; nothing to keep */
	}
out:
	free(text);
	free(rules_key);
	json_decref(cmp);
	json_decref(doc);
	json_decref(j);
	return rc;
}

/* job's comparison as a document, or NULL (an error goes to notes) */
static json_t *job_comparison(struct store *st, const struct lab_config *cfg, int64_t job, json_t *notes)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	json_t *doc = NULL;

	if (comparison_cache_get(st, cfg, job, &text, &err) == 0)
		doc = json_loadb(text.buf, text.len, 0, NULL);
	else
		json_array_append_new(notes, json_sprintf("job %lld: no comparison: %s", (long long)job,
							  err.len ? err.buf : "it cannot be read"));
	strbuf_release(&text);
	strbuf_release(&err);
	return doc;
}

int comparison_per_patch(struct store *st, const struct lab_config *cfg, int64_t job, json_t **ret,
			 struct strbuf *err)
{
	json_t *j = store_job_json(st, job), *pp, *list = NULL, *notes = json_array(), *item, *doc;
	json_t **vs_base = NULL, **steps = NULL, **runs = NULL;
	struct compare_rules defaults;
	const struct compare_rules *rules;
	size_t n = 0, k;
	int64_t of;
	int rc = -1;

	if (!j) {
		rc = errno == ENOENT ? -ENOENT : -errno;
		if (rc != -ENOENT)
			strbuf_seterr(err, "job %lld: store: could not read it: %s", (long long)job, store_strerror(rc));
		goto out;
	}
	pp = json_object_get(j, "per_patch");
	if (!json_is_object(pp)) {
		rc = -EINVAL;
		goto out;
	}
	of = jsonget_int_or(pp, "of", 0);
	rules = job_rules(cfg, j, &defaults);
	if (!(list = store_per_patch_jobs(st, of))) {
		rc = -errno;
		strbuf_seterr(err, "job %lld: store: could not read its series' jobs: %s", (long long)job,
			      store_strerror(rc));
		goto out;
	}
	n = json_array_size(list);
	vs_base = xcalloc(n + 1, sizeof(*vs_base));
	steps = xcalloc(n + 1, sizeof(*steps));
	runs = xcalloc(n + 1, sizeof(*runs));
	json_array_foreach(list, k, item) {
		int64_t id = jsonget_int_or(item, "id", 0);

		if (strcmp(jsonget_str(item, "state") ?: "", "done"))
			continue;
		vs_base[k] = job_comparison(st, cfg, id, notes);
		runs[k] = store_compare_doc(st, id);
	}
	/* the first patch's step is its job; each later one compares the
	 * patched boots of the prefix before with its own */
	for (k = 0; k < n; k++) {
		struct strbuf why = STRBUF_INIT;

		if (k == 0) {
			steps[0] = json_incref(vs_base[0]);
			continue;
		}
		if (!runs[k - 1] || !runs[k])
			continue;
		steps[k] = compare_sides(runs[k - 1], "patched", runs[k], "patched", rules, &why);
		if (!steps[k])
			json_array_append_new(notes, json_sprintf("patch %zu's step: %s", k + 1, why.buf));
		strbuf_release(&why);
	}
	doc = compare_per_patch(vs_base, steps, n);
	json_object_set_new(doc, "of", json_integer((json_int_t)of));
	json_object_set(doc, "series", json_object_get(pp, "series"));
	json_object_set(doc, "jobs", list);
	if (n > 1)
		json_array_append_new(notes, json_string(
			"a step after the first compares the patched boots of two jobs: its work and wait rows are "
			"the emulator's counts, as in one job; its time rows were not interleaved A/B, so they "
			"carry more of the host's noise than a job's own"));
	json_object_set(doc, "notes", notes);
	*ret = doc;
	rc = 0;
out:
	for (k = 0; k < n && vs_base; k++) {
		json_decref(vs_base[k]);
		json_decref(steps[k]);
		json_decref(runs[k]);
	}
	free(vs_base);
	free(steps);
	free(runs);
	json_decref(list);
	json_decref(notes);
	json_decref(j);
	return rc;
}
