#include "comparison_cache.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "compare.h"
#include "config.h"
#include "store.h"
#include "banned.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int comparison_cache_get(struct store *st, const struct lab_config *cfg, int64_t job,
		       struct strbuf *ret_doc, struct strbuf *err)
{
	json_t *j = store_job_json(st, job), *doc = NULL, *cmp = NULL, *rules_doc;
	const struct cfg_suite *suite;
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
	if (strcmp(json_string_value(json_object_get(j, "kind")) ?: "", "ab")) {
		rc = -EINVAL;
		goto out;
	}
	suite = config_suite(cfg, json_string_value(json_object_get(j, "suite")));
	compare_rules_default(&defaults);
	rules = suite ? &suite->rules : &defaults;
	rules_doc = compare_rules_json(rules);
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
	state = json_string_value(json_object_get(j, "state")) ?: "";
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
