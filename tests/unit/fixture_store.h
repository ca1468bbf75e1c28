#ifndef TLBLAB_FIXTURE_STORE_H
#define TLBLAB_FIXTURE_STORE_H

/*
 * A real store on a fresh SQLite file in a temporary directory, for the unit
 * tests of the store and of what writes into it (test_store*, test_ingest,
 * test_sched), and the jobs, stages and runs they put in it as the API, the
 * scheduler and ingest would. Include after testlib.h. The fixture owns its
 * directory and its store; store_fixture_close removes both.
 */

#include <stdlib.h>
#include <jansson.h>

#include "config.h"
#include "store.h"
#include "submit.h"

struct store_fixture {
	char dir[64];		/* the temporary directory */
	struct store *st;	/* the store on dir/t.db */
};

/* Makes /tmp/tlblab-NAME.XXXXXX and opens a new store in it; fails the
 * test when either cannot be done. */
static inline void store_fixture_open(struct store_fixture *sf, const char *name)
{
	struct strbuf err = STRBUF_INIT, path = STRBUF_INIT;

	snprintf(sf->dir, sizeof(sf->dir), "/tmp/tlblab-%s.XXXXXX", name);
	assert_non_null(mkdtemp(sf->dir));
	strbuf_addf(&path, "%s/t.db", sf->dir);
	if (store_open(path.buf, &sf->st, &err) < 0)
		fail_msg("store_open: %s", err.buf);
	strbuf_release(&path);
	strbuf_release(&err);
}

static inline void store_fixture_close(struct store_fixture *sf)
{
	char cmd[128];

	store_close(sf->st);
	sf->st = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", sf->dir);
	assert_int_equal(system(cmd), 0);
}

/* The cmocka setup and teardown of a test whose state is a store_fixture. */
static inline int store_fixture_setup(void **state)
{
	struct store_fixture *sf = calloc(1, sizeof(*sf));

	assert_non_null(sf);
	store_fixture_open(sf, "store");
	*state = sf;
	return 0;
}

static inline int store_fixture_teardown(void **state)
{
	store_fixture_close(*state);
	free(*state);
	*state = NULL;
	return 0;
}

/* A cmocka test with a fresh store_fixture as its state. */
#define store_fixture_test(f) \
	cmocka_unit_test_setup_teardown(f, store_fixture_setup, store_fixture_teardown)

/* The length of the array `key` in j, a store's JSON answer, which must
 * not be NULL (a read that failed); takes j and frees it. */
static inline size_t store_json_count(json_t *j, const char *key)
{
	size_t n;

	assert_non_null(j);
	n = json_array_size(json_object_get(j, key));
	json_decref(j);
	return n;
}

/*
 * Stores an A/B job (tree linux, base v6.1, a patch) of `boots` boots per
 * side that may grow to max_boots (0: it may not), of the workload specs
 * `specs` (a JSON array, taken and freed), with the stages submit_plan
 * gives it when the suite's run timeout and the lab's stage timeout are
 * both `timeout`: store_job_create's 0 with the id in *ret_id, or -1 with
 * err.
 */
static inline int store_fixture_create_ab(struct store *st, json_t *specs, int boots, int max_boots,
					  double timeout, int64_t *ret_id, struct strbuf *err)
{
	struct lab_config cfg = { .stage_timeout = timeout };
	struct cfg_suite suite = { .name = "tlb", .timeout = timeout, .workloads = specs };
	struct job_request req = { .kind = "ab", .tree = "linux", .base = "v6.1", .patch_kind = "patch",
				   .patch = "diff", .suite = suite.name, .suite_json = specs, .boots = boots,
				   .max_boots = max_boots };
	struct stage_plan *plan = NULL;
	size_t n = submit_plan(&cfg, &suite, &req, &plan);
	int rc = store_job_create(st, &req, plan, n, ret_id, err);

	free(plan);
	json_decref(specs);
	return rc;
}

/* The same, when it must be stored: its id. */
static inline int64_t store_fixture_ab_job(struct store *st, json_t *specs, int boots, int max_boots,
					   double timeout)
{
	struct strbuf err = STRBUF_INIT;
	int64_t id = 0;

	if (store_fixture_create_ab(st, specs, boots, max_boots, timeout, &id, &err) < 0)
		fail_msg("store_job_create: %s", err.buf);
	strbuf_release(&err);
	return id;
}

/* The job's first runnable stage, moved into *ret (the caller releases it
 * with stage_info_release); ret->id is 0 when there is none. Returns 0,
 * or store_runnable_stages's error with *ret untouched. */
static inline int store_fixture_runnable(struct store *st, int64_t job, struct stage_info *ret)
{
	struct stage_info *v;
	size_t n, i;
	int rc = store_runnable_stages(st, &v, &n);

	if (rc < 0)
		return rc;
	memset(ret, 0, sizeof(*ret));
	for (i = 0; i < n; i++)
		if (v[i].job_id == job) {
			*ret = v[i];
			memset(&v[i], 0, sizeof(v[i]));
			break;
		}
	store_stage_infos_free(v, n);
	return 0;
}

/* The same, when there must be one: fails the test otherwise. */
static inline void store_fixture_next_stage(struct store *st, int64_t job, struct stage_info *ret)
{
	assert_int_equal(store_fixture_runnable(st, job, ret), 0);
	if (!ret->id)
		fail_msg("job %lld has no runnable stage", (long long)job);
}

/*
 * One measured iteration of spec `spec` in the run stage `stage` on
 * `side`, as ingest stores it: mprotect.ops_per_sec = value (higher is
 * better), of mprotect for spec 0 and mremap for the others, with 2
 * workers. Returns store_run_add's result.
 */
static inline int store_fixture_run_add(struct store *st, int64_t job, int64_t stage, const char *side, int spec,
					double value)
{
	json_t *metrics = json_pack("{s:f}", "mprotect.ops_per_sec", value);
	json_t *info = json_pack("{s:{s:s,s:s}}", "mprotect.ops_per_sec", "unit", "ops/s", "direction", "higher");
	json_t *params = json_pack("{s:i}", "workers", 2);
	struct run_row r = { .job_id = job, .stage_id = stage, .machine = "m1", .side = side,
			     .spec_index = spec, .workload = spec ? "mremap" : "mprotect", .params = params,
			     .duration = 1 };
	int rc = store_run_add(st, &r, metrics, info, NULL, NULL);

	json_decref(metrics);
	json_decref(info);
	json_decref(params);
	return rc;
}

/* ---- the jobs of test_store and test_store_faults ---- */

/* An A/B job of `boots` boots per side that may not grow, of two specs:
 * mprotect, and mremap with 2 workers. */
static inline int64_t store_fixture_job(struct store *st, int boots)
{
	return store_fixture_ab_job(st, json_pack("[{s:s},{s:s,s:i}]", "workload", "mprotect", "workload",
						  "mremap", "workers", 2), boots, 0, 60);
}

/* store_fixture_next_stage's id, with its kind and side copied out. */
static inline int64_t store_fixture_next_id(struct store *st, int64_t job, char kind[8], char side[16])
{
	struct stage_info si;
	int64_t id;

	store_fixture_next_stage(st, job, &si);
	id = si.id;
	snprintf(kind, 8, "%s", si.kind);
	snprintf(side, 16, "%s", si.side);
	store_stage_info_release(&si);
	return id;
}

/* The specs outcome of a run stage of such a job: spec `bad` failed with
 * msg (-1: none did). */
static inline json_t *store_fixture_specs_outcome(int bad, const char *msg)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < 2; i++)
		json_array_append_new(a, json_pack("{s:i,s:s,s:s,s:s?,s:s?}", "spec", i, "workload",
						   i ? "mremap" : "mprotect", "state", i == bad ? "failed" : "done",
						   "class", i == bad ? "workload" : NULL,
						   "message", i == bad ? msg : NULL));
	return a;
}

/* The string at key (or key.sub) of the job's JSON, copied into buf;
 * "(null)" when there is none. */
static inline const char *store_fixture_job_str(struct store *st, int64_t job, const char *key, const char *sub,
						char *buf, size_t len)
{
	json_t *j = store_job_json(st, job), *v = json_object_get(j, key);

	if (sub)
		v = json_object_get(v, sub);
	snprintf(buf, len, "%s", json_string_value(v) ?: "(null)");
	json_decref(j);
	return buf;
}

#endif
