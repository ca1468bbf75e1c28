/*
 * The API's job routes (api.h): GET and POST /api/v1/jobs, everything under
 * /api/v1/jobs/ID, and /api/v1/compare. api_server.c matches the path and calls
 * these; they read the store, or for a submit store what submit.h allows,
 * and answer with api_server.c's send helpers.
 */
#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "api_int.h"
#include "compare.h"
#include "config.h"
#include "fetch.h"
#include "guard.h"
#include "jsonget.h"
#include "log.h"
#include "report.h"
#include "comparison_cache.h"
#include "scheduler.h"
#include "store.h"
#include "submit.h"
#include "util.h"
#include "banned.h"

#define SAMPLES_PAGE 5000	/* samples per answer, at most */

/*
 * Stores the jobs (one, or a per-patch series') if their token is within
 * its limits: one step under submit_lock, so that two submits of one token
 * cannot both take its last place. 0 with ret_ids, or -1 with the answer
 * sent and in *ret.
 */
static int queue_jobs(struct route_ctx *rc, const struct job_request *reqs, struct stage_plan *const *plans,
		      const size_t *nplans, size_t n, int64_t *ret_ids, enum MHD_Result *ret)
{
	struct strbuf err = STRBUF_INIT;
	int r;

	GUARD_MUTEX(&rc->api->submit_lock);
	if (api_within_token_limits(rc, "", plans, nplans, n, ret) < 0)
		return -1;
	if ((r = store_job_group_create(rc->api->st, reqs, plans, nplans, n, ret_ids, &err)) < 0) {
		log_warnx("api: create job: %s", err.buf);
		*ret = api_send_store_error(rc->conn, r, "could not store the job");
	}
	strbuf_release(&err);
	return r < 0 ? -1 : 0;
}

/* The job as its reader may see it (api_reader_public): without a token,
 * its URL redacted wherever it shows. NULL with errno, as store_job_json. */
static json_t *job_for_reader(struct route_ctx *rc, int64_t id)
{
	json_t *job = store_job_json(rc->api->st, id);

	if (job && api_reader_public(rc))
		api_redact_json(job, jsonget_str(job, "patch_url"));
	return job;
}

/* the job as stored, or what the client needs of it when it cannot be read back */
static json_t *job_queued(struct route_ctx *rc, int64_t id)
{
	json_t *job = store_job_json(rc->api->st, id);

	if (!job) {
		/* it is queued: the client gets its id, and can read it later */
		log_warnx("job %lld: store: cannot read it back: %s", (long long)id, store_strerror(-errno));
		job = json_pack("{s:I,s:s}", "id", (json_int_t)id, "state", "queued");
	}
	return job;
}

/* A per-patch series' jobs (submit.h): {"job": the whole series' job (the
 * last), "jobs": [each prefix's, k = 1..N]}. */
static enum MHD_Result create_per_patch(struct route_ctx *rc, const struct job_request *req,
					const struct cfg_suite *suite)
{
	struct per_patch_job *pj = NULL;
	size_t n = submit_per_patch(rc->cfg, suite, req, &pj), k;
	struct job_request *reqs = xcalloc(n, sizeof(*reqs));
	struct stage_plan **plans = xcalloc(n, sizeof(*plans));
	size_t *nplans = xcalloc(n, sizeof(*nplans));
	int64_t *ids = xcalloc(n, sizeof(*ids));
	enum MHD_Result ret;
	json_t *jobs;

	for (k = 0; k < n; k++) {
		reqs[k] = *pj[k].req;
		reqs[k].token = api_bearer(rc->conn);
		plans[k] = pj[k].plan;
		nplans[k] = pj[k].nplan;
	}
	if (queue_jobs(rc, reqs, plans, nplans, n, ids, &ret) == 0) {
		log_info("jobs %lld-%lld: queued (a per-patch series of %zu, suite %s, by %s)", (long long)ids[0],
			 (long long)ids[n - 1], n, req->suite, req->submitter ? req->submitter : "?");
		sched_wake(rc->api->sc);
		jobs = json_array();
		for (k = 0; k < n; k++)
			json_array_append_new(jobs, job_queued(rc, ids[k]));
		ret = api_send_json(rc->conn, 201, json_pack("{s:O,s:o}", "job", json_array_get(jobs, n - 1),
							     "jobs", jobs));
	}
	submit_per_patch_release(pj, n);
	free(reqs);
	free(plans);
	free(nplans);
	free(ids);
	return ret;
}

/* POST /api/v1/jobs, its token already checked. */
enum MHD_Result api_create_job(struct route_ctx *rc)
{
	const struct lab_config *cfg = rc->cfg;
	struct strbuf err = STRBUF_INIT, subject = STRBUF_INIT;
	struct job_request req;
	struct stage_plan *plan = NULL;
	const struct cfg_suite *suite;
	json_t *body = NULL;
	int64_t id;
	size_t nplan;
	enum MHD_Result ret;

	if (submit_request_parse(cfg, rc->body->buf, rc->body->len, &body, &req, &subject, &err) < 0) {
		ret = api_send_error(rc->conn, 400, "bad_request", "%s", err.buf);
		goto out;
	}
	/*
	 * A branch's or an mbox's URL names a host the lab may fetch from
	 * (fetch.h): refused here when it is not, rather than as the job's
	 * failure. A host that does not resolve now is left to the fetch, which
	 * checks again (build_stage.c) and fails as the submitter's if it still
	 * does not: a lab may be offline, or its builder see other names.
	 */
	if (req.patch_url && fetch_url_allowed(req.patch_url, cfg->fetch_allow, &err) == -EPERM) {
		const char *field = !strcmp(req.patch_kind, "branch") ? "branch.url" : "url";

		ret = api_send_error(rc->conn, 400, "bad_request", "%s: %s", field, err.buf);
		goto out;
	}
	suite = config_suite(cfg, req.suite);
	if (req.per_patch) {
		ret = create_per_patch(rc, &req, suite);
		goto out;
	}
	nplan = submit_plan(cfg, suite, &req, &plan);
	req.token = api_bearer(rc->conn);
	if (queue_jobs(rc, &req, &plan, &nplan, 1, &id, &ret) < 0)
		goto out;
	log_info("job %lld: queued (%s, suite %s, by %s)", (long long)id, req.kind, req.suite,
		 req.submitter ? req.submitter : "?");
	sched_wake(rc->api->sc);
	ret = api_send_json(rc->conn, 201, json_pack("{s:o}", "job", job_queued(rc, id)));
out:
	free(plan);
	json_decref(body);
	strbuf_release(&err);
	strbuf_release(&subject);
	return ret;
}

int api_job_filter_parse(const char *(*get)(void *ctx, const char *key), void *ctx,
			 struct job_filter *f, struct strbuf *err)
{
	long limit, offset;
	const char *v;

	*f = (struct job_filter){ 0 };
	f->state = get(ctx, "state");
	f->suite = get(ctx, "suite");
	f->submitter = get(ctx, "submitter");
	f->tree = get(ctx, "tree");
	f->verdict = get(ctx, "verdict");
	limit = 50;
	if ((v = get(ctx, "limit")) && parse_int_range(v, 1, 500, &limit) < 0)
		return strbuf_seterr(err, "limit: must be an integer from 1 to 500");
	offset = 0;
	if ((v = get(ctx, "offset")) && parse_int_range(v, 0, 1000000000, &offset) < 0)
		return strbuf_seterr(err, "offset: must be a non-negative integer");
	if (f->state && strcmp(f->state, "queued") && strcmp(f->state, "running") && strcmp(f->state, "done") &&
	    strcmp(f->state, "failed") && strcmp(f->state, "cancelled"))
		return strbuf_seterr(err, "state: one of queued, running, done, failed, cancelled");
	if (f->verdict && strcmp(f->verdict, "regression") && strcmp(f->verdict, "improvement") &&
	    strcmp(f->verdict, "changed") && strcmp(f->verdict, "inconclusive") && strcmp(f->verdict, "same") &&
	    strcmp(f->verdict, "unavailable"))
		return strbuf_seterr(err, "verdict: one of regression, improvement, "
				     "changed, inconclusive, same, unavailable");
	f->limit = (int)limit;
	f->offset = (int)offset;
	return 0;
}

static const char *query_get(void *conn, const char *key)
{
	return api_query(conn, key);
}

enum MHD_Result api_list_jobs(struct route_ctx *rc)
{
	struct strbuf err = STRBUF_INIT, body = STRBUF_INIT;
	struct job_filter f;
	enum MHD_Result ret;
	int r;

	strbuf_init(&body, 32768);	/* a page of 50 jobs, without regrowing */
	if (api_job_filter_parse(query_get, rc->conn, &f, &err) < 0) {
		ret = api_send_error(rc->conn, 400, "bad_request", "%s", err.buf);
	} else {
		f.redact_urls = api_reader_public(rc);
		if ((r = store_jobs_text(rc->api->st, &f, &body)) < 0)
			ret = api_send_read(rc->conn, NULL, -r, "job list");
		else
			ret = api_send_json_text(rc->conn, &body);
	}
	strbuf_release(&err);
	strbuf_release(&body);
	return ret;
}

/* {"comparison": doc}, doc being JSON text already. */
static enum MHD_Result send_comparison_text(struct route_ctx *rc, const struct strbuf *doc)
{
	struct strbuf body = STRBUF_INIT;
	enum MHD_Result ret;

	strbuf_addstr(&body, "{\"comparison\":");
	strbuf_add(&body, doc->buf, doc->len);
	strbuf_addstr(&body, "}");
	ret = api_send_json_text(rc->conn, &body);
	strbuf_release(&body);
	return ret;
}

/* GET /api/v1/compare?base=A&patched=B: two jobs that ran the same suite. */
enum MHD_Result api_compare_jobs(struct route_ctx *rc)
{
	const char *bv = api_query(rc->conn, "base"), *pv = api_query(rc->conn, "patched");
	int64_t a, b;
	json_t *ja, *jb, *da, *db, *cmp;
	const struct cfg_suite *suite;
	struct compare_rules defaults;
	struct strbuf err = STRBUF_INIT;
	enum MHD_Result ret;

	if (strcmp(rc->method, "GET"))
		return api_send_error(rc->conn, 405, "method_not_allowed", "use GET");
	if (!bv || !pv || api_parse_id(bv, &a) < 0 || api_parse_id(pv, &b) < 0)
		return api_send_error(rc->conn, 400, "bad_request", "base, patched: give two job ids");
	ja = store_job_json(rc->api->st, a);
	if (!ja)
		return api_send_read(rc->conn, NULL, errno, "job %lld", (long long)a);
	jb = store_job_json(rc->api->st, b);
	if (!jb) {
		json_decref(ja);
		return api_send_read(rc->conn, NULL, errno, "job %lld", (long long)b);
	}
	if (!json_equal(json_object_get(ja, "suite"), json_object_get(jb, "suite"))) {
		ret = api_send_error(rc->conn, 409, "conflict", "jobs %lld and %lld ran different suites (%s, %s)",
				 (long long)a, (long long)b, jsonget_str(ja, "suite"),
				 jsonget_str(jb, "suite"));
		json_decref(ja);
		json_decref(jb);
		return ret;
	}
	suite = config_suite(rc->cfg, jsonget_str(ja, "suite"));
	json_decref(ja);
	json_decref(jb);
	compare_rules_default(&defaults);
	da = store_compare_doc(rc->api->st, a);
	db = da ? store_compare_doc(rc->api->st, b) : NULL;
	if (!da || !db) {
		/* both exist: a missing document is the store's failure */
		ret = api_send_store_error(rc->conn, errno == ENOENT || !errno ? -EIO : -errno,
				       "could not read the runs of job %lld", (long long)(da ? b : a));
		json_decref(da);
		return ret;
	}
	cmp = compare_sides(da, NULL, db, NULL, suite ? &suite->rules : &defaults, &err);
	if (cmp)
		ret = api_send_json(rc->conn, 200, json_pack("{s:o}", "comparison", cmp));
	else
		ret = api_send_error(rc->conn, 409, "conflict", "cannot compare: %s", err.buf);
	strbuf_release(&err);
	json_decref(da);
	json_decref(db);
	return ret;
}

/* GET /api/v1/jobs/ID/report.txt: the report of a finished A/B job
 * (report.h), from its comparison as GET .../comparison serves it. */
static enum MHD_Result send_report(struct route_ctx *rc, int64_t id)
{
	struct api *api = rc->api;
	struct strbuf doc = STRBUF_INIT, err = STRBUF_INIT, text = STRBUF_INIT;
	json_t *job = store_job_json(api->st, id), *cmp = NULL;
	int read_err = errno;
	const char *state = jsonget_str(job, "state") ?: "";
	enum MHD_Result ret;
	int r;

	if (!job)
		return api_send_read(rc->conn, NULL, read_err, "job %lld", (long long)id);
	if (strcmp(jsonget_str(job, "kind") ?: "", "ab")) {
		ret = api_send_error(rc->conn, 409, "conflict", "job %lld is not an A/B job: a report compares a "
				 "base and a patched kernel", (long long)id);
		goto out;
	}
	if (strcmp(state, "done") && strcmp(state, "failed") && strcmp(state, "cancelled")) {
		ret = api_send_error(rc->conn, 409, "conflict", "job %lld is %s: its report is ready once it ends",
				 (long long)id, state);
		goto out;
	}
	r = comparison_cache_get(api->st, rc->cfg, id, &doc, &err);
	if (r == -ENOENT) {
		ret = api_send_error(rc->conn, 404, "not_found", "no job %lld", (long long)id);
		goto out;
	}
	if (store_failed(r)) {
		ret = api_send_store_error(rc->conn, r, "job %lld: could not keep the comparison", (long long)id);
		goto out;
	}
	if (r < 0) {
		ret = api_send_error(rc->conn, 409, "conflict", "cannot compare: %s", err.buf);
		goto out;
	}
	cmp = json_loadb(doc.buf, doc.len, 0, NULL);
	/* the comparison has just given a finished job its verdict */
	json_decref(job);
	job = job_for_reader(rc, id);
	if (!job) {
		ret = api_send_store_error(rc->conn, errno == ENOENT ? -EIO : -errno, "job %lld: could not read it "
				       "for its report", (long long)id);
		goto out;
	}
	if (!cmp || report_text(job, cmp, &text, &err) < 0) {
		log_warnx("job %lld: report: %s", (long long)id, err.len ? err.buf : "cannot read the comparison");
		ret = api_send_error(rc->conn, 500, "internal", "job %lld: cannot write the report", (long long)id);
		goto out;
	}
	ret = api_send_text(rc->conn, 200, "text/plain; charset=utf-8", text.buf, text.len);
out:
	json_decref(cmp);
	json_decref(job);
	strbuf_release(&doc);
	strbuf_release(&err);
	strbuf_release(&text);
	return ret;
}

/* GET /jobs/ID/comparison: the job's comparison (kept, or made now). */
static enum MHD_Result send_job_comparison(struct route_ctx *rc, struct api *api, int64_t id)
{
	struct strbuf doc = STRBUF_INIT, err = STRBUF_INIT;
	enum MHD_Result ret;
	int r = comparison_cache_get(api->st, rc->cfg, id, &doc, &err);

	if (r == -EINVAL)
		ret = api_send_error(rc->conn, 409, "conflict", "job %lld is not an A/B job; compare two jobs "
				 "with /api/v1/compare?base=A&patched=B", (long long)id);
	else if (r == -ENOENT)
		ret = api_send_error(rc->conn, 404, "not_found", "no job %lld", (long long)id);
	else if (store_failed(r))
		ret = api_send_store_error(rc->conn, r, "job %lld: could not keep the comparison", (long long)id);
	else if (r < 0)
		ret = api_send_error(rc->conn, 409, "conflict", "cannot compare: %s", err.buf);
	else
		ret = send_comparison_text(rc, &doc);
	strbuf_release(&doc);
	strbuf_release(&err);
	return ret;
}

/* GET /jobs/ID/per-patch: a per-patch series' steps. */
static enum MHD_Result send_per_patch(struct route_ctx *rc, struct api *api, int64_t id)
{
	struct strbuf err = STRBUF_INIT;
	enum MHD_Result ret;
	json_t *job = NULL;
	int r = comparison_per_patch(api->st, rc->cfg, id, &job, &err);

	if (r == -EINVAL)
		ret = api_send_error(rc->conn, 409, "conflict", "job %lld is not one of a per-patch series "
				 "(tlblab submit --mbox FILE --per-patch)", (long long)id);
	else if (r == -ENOENT)
		ret = api_send_error(rc->conn, 404, "not_found", "no job %lld", (long long)id);
	else if (r < 0)
		ret = api_send_store_error(rc->conn, r, "%s", err.buf);
	else
		ret = api_send_json(rc->conn, 200, json_pack("{s:o}", "per_patch", job));
	strbuf_release(&err);
	return ret;
}

/* GET /jobs/ID/stages/STAGE/log[?tail=N]: a stage's log, its URLs
 * redacted for a reader without a token. */
static enum MHD_Result send_stage_log(struct route_ctx *rc, struct api *api, int64_t id)
{
	struct strbuf log = STRBUF_INIT;
	int64_t stage;
	enum MHD_Result ret;
	json_t *job;
	long tail;
	size_t from;
	int r;

	if (api_parse_id(rc->seg[5], &stage) < 0)
		return api_send_error(rc->conn, 400, "bad_request", "stage: must be a stage id");
	if (api_query_int(rc->conn, "tail", 1, 1000000, 0, &tail) < 0)
		return api_send_error(rc->conn, 400, "bad_request", "tail: must be a number of lines from 1 "
				  "to 1000000");
	if ((r = store_stage_log(api->st, id, stage, &log)) < 0) {
		strbuf_release(&log);
		if (r != -ENOENT)
			return api_send_store_error(rc->conn, r, "could not read the log of stage %lld",
						(long long)stage);
		return api_send_error(rc->conn, 404, "not_found", "no stage %lld in job %lld",
				  (long long)stage, (long long)id);
	}
	/* ?tail=N: the last N lines only */
	from = log.len;
	if (from && log.buf[from - 1] == '\n')
		from--;
	while (tail > 0 && from > 0)
		if (log.buf[--from] == '\n' && --tail == 0)
			from++;
	if (!api_query(rc->conn, "tail"))
		from = 0;
	if (api_reader_public(rc)) {
		/* build.sh names the branch it fetches */
		struct strbuf red = STRBUF_INIT;

		if (!(job = store_job_json(api->st, id))) {
			strbuf_release(&log);
			return api_send_read(rc->conn, NULL, errno, "job %lld", (long long)id);
		}
		util_url_redact_in(log.buf + from, log.len - from,
			      jsonget_str(job, "patch_url"), &red);
		json_decref(job);
		strbuf_release(&log);
		log = red;
		from = 0;
	}
	ret = api_send_text(rc->conn, 200, "text/plain; charset=utf-8", log.buf + from, log.len - from);
	strbuf_release(&log);
	return ret;
}

enum MHD_Result api_job_routes(struct route_ctx *rc, int64_t id)
{
	struct api *api = rc->api;
	const char *sub = rc->nseg > 4 ? rc->seg[4] : NULL;
	json_t *job;

	if (!sub) {
		if (strcmp(rc->method, "GET"))
			return api_send_error(rc->conn, 405, "method_not_allowed", "use GET");
		job = job_for_reader(rc, id);
		if (!job)
			return api_send_read(rc->conn, NULL, errno, "job %lld", (long long)id);
		return api_send_json(rc->conn, 200, json_pack("{s:o}", "job", job));
	}
	if (!strcmp(sub, "cancel") && rc->nseg == 5) {
		enum MHD_Result refused;
		int r;

		if (api_post_refused(rc, &refused) || api_change_refused(rc, STORE_OWNED_JOB, id, "cancel", &refused))
			return refused;
		r = store_job_cancel(api->st, id);
		if (r < 0)
			return api_send_cancel_refused(rc->conn, r, "job", (long long)id, "already finished");
		log_info("job %lld: cancel requested", (long long)id);
		sched_wake(api->sc);
		job = store_job_json(api->st, id);
		if (!job)
			return api_send_read(rc->conn, NULL, errno, "job %lld (its cancel is requested)", (long long)id);
		return api_send_json(rc->conn, 200, json_pack("{s:o}", "job", job));
	}
	if (strcmp(rc->method, "GET"))
		return api_send_error(rc->conn, 405, "method_not_allowed", "use GET");
	job = store_job_json(api->st, id);
	if (!job)
		return api_send_read(rc->conn, NULL, errno, "job %lld", (long long)id);
	json_decref(job);
	if (!strcmp(sub, "runs") && rc->nseg == 5) {
		job = store_runs_json(api->st, id);
		return api_send_read(rc->conn, job, errno, "runs of job %lld", (long long)id);
	}
	if (!strcmp(sub, "comparison") && rc->nseg == 5)
		return send_job_comparison(rc, api, id);
	if (!strcmp(sub, "report.txt") && rc->nseg == 5)
		return send_report(rc, id);
	if (!strcmp(sub, "per-patch") && rc->nseg == 5)
		return send_per_patch(rc, api, id);
	if (!strcmp(sub, "profiles") && rc->nseg == 5) {
		job = store_profiles_json(api->st, id);
		return api_send_read(rc->conn, job, errno, "profiles of job %lld", (long long)id);
	}
	if (!strcmp(sub, "metrics") && rc->nseg == 5) {
		const char *w = api_query(rc->conn, "include_warmup"), *name = api_query(rc->conn, "name");

		job = store_metrics_json(api->st, id, name, w && !strcmp(w, "1"));
		return api_send_read(rc->conn, job, errno, "metrics of job %lld", (long long)id);
	}
	if (!strcmp(sub, "samples") && rc->nseg == 5) {
		const char *sv = api_query(rc->conn, "stage"), *name = api_query(rc->conn, "name");
		int64_t stage = 0;
		long limit, after;

		if (sv && api_parse_id(sv, &stage) < 0)
			return api_send_error(rc->conn, 400, "bad_request", "stage: must be a stage id");
		if (api_query_int(rc->conn, "limit", 1, SAMPLES_PAGE, SAMPLES_PAGE, &limit) < 0)
			return api_send_error(rc->conn, 400, "bad_request", "limit: must be an integer from 1 to %d",
					  SAMPLES_PAGE);
		if (api_query_int(rc->conn, "after", 0, LONG_MAX, 0, &after) < 0)
			return api_send_error(rc->conn, 400, "bad_request", "after: must be the \"next\" of the "
					  "previous page");
		job = store_samples_json(api->st, id, stage, name, after, (int)limit);
		return api_send_read(rc->conn, job, errno, "samples of job %lld", (long long)id);
	}
	if (!strcmp(sub, "stages") && rc->nseg == 7 && !strcmp(rc->seg[6], "log"))
		return send_stage_log(rc, api, id);
	return api_send_error(rc->conn, 404, "not_found", "no such resource");
}
