/*
 * The HTTP API. libmicrohttpd runs a small thread pool; each request is
 * handled start to finish on one of its threads: the body is collected (up
 * to lab.max_body, past which the answer is 413 before the rest is read),
 * the route is matched on path segments, and the handler builds a JSON
 * document from the store. Writes only insert or flag rows and wake the
 * scheduler, which owns everything else.
 */
#include "api.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compare.h"
#include "config.h"
#include "log.h"
#include "patch.h"
#include "report.h"
#include "results.h"
#include "sched.h"
#include "store.h"
#include "util.h"
#include "web.h"
#include "banned.h"

#define API_THREADS 4
#define DEFAULT_BOOTS 5
#define DEFAULT_MAX_BOOTS 9
#define MAX_SEGMENTS 8
#define VERSION "0.1.0"
#define CACHE_SLOTS 64
#define CACHE_MAX_BODY (1u << 20)

/*
 * GET responses are cached by URL and query, tagged with the store's
 * generation: any write to the store changes the generation and so retires
 * every entry at once. A dashboard polling a finished job costs a lookup.
 */
struct cache_slot {
	char *key;
	char *body;
	size_t len;
	int64_t gen;
};

struct api_cache {
	pthread_mutex_t lock;
	struct cache_slot slot[CACHE_SLOTS];
	size_t next;
};

/* The request being answered on this thread wants its JSON body kept. */
static _Thread_local struct strbuf *capture;

struct api {
	struct api_cache cache;
	int cache_off;		/* TLBLAB_API_CACHE=0, for measuring without it */
	struct MHD_Daemon *mhd;
	char *web_dir;		/* the dashboard's files, or NULL */
	const struct lab_config *volatile cfg;
	struct store *st;
	struct sched *sc;
};

struct request {
	struct strbuf body;
	int too_large;
};

struct route_ctx {
	struct api *api;
	struct MHD_Connection *conn;
	const char *method;
	char *seg[MAX_SEGMENTS];
	int nseg;
	const struct strbuf *body;
};

static enum MHD_Result send_text(struct MHD_Connection *conn, unsigned status, const char *type,
				 const char *text, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* Sends doc (stolen) as JSON. */
static enum MHD_Result send_json(struct MHD_Connection *conn, unsigned status, json_t *doc)
{
	char *txt = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(12));
	enum MHD_Result ret;

	json_decref(doc);
	if (!txt)
		return send_text(conn, 500, "application/json",
				 "{\"error\":{\"code\":\"internal\",\"message\":\"cannot encode\"}}", 55);
	if (capture && status == 200)
		strbuf_addstr(capture, txt);
	ret = send_text(conn, status, "application/json", txt, strlen(txt));
	free(txt);
	return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *conn, unsigned status, const char *code,
				  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static enum MHD_Result send_error(struct MHD_Connection *conn, unsigned status, const char *code,
				  const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT;
	va_list ap;
	json_t *doc;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	doc = json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", msg.buf);
	strbuf_release(&msg);
	return send_json(conn, status, doc);
}

static int authorized(struct api *api, struct MHD_Connection *conn)
{
	const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");

	if (!h || strncmp(h, "Bearer ", 7))
		return 0;
	return store_token_valid(api->st, h + 7);
}

static const char *query(struct MHD_Connection *conn, const char *key)
{
	const char *v = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, key);

	return v && *v ? v : NULL;
}

static int query_int(struct MHD_Connection *conn, const char *key, long min, long max, long def, long *ret)
{
	const char *v = query(conn, key);

	*ret = def;
	if (!v)
		return 0;
	return parse_int_range(v, min, max, ret);
}

static int parse_id(const char *s, int64_t *ret)
{
	uint64_t v;

	if (parse_u64(s, &v) < 0 || v == 0 || v > (uint64_t)INT64_MAX)
		return -1;
	*ret = (int64_t)v;
	return 0;
}

/* ---- jobs ---- */

static int check_names(const json_t *arr, const char *field, const struct lab_config *cfg,
		       int machines, struct strbuf *err)
{
	size_t i;
	json_t *v;

	if (!json_is_array(arr) || json_array_size(arr) > 256)
		return strbuf_seterr(err, "%s: must be a list of names", field);
	json_array_foreach(arr, i, v) {
		const char *s = json_string_value(v);

		if (!s || !config_valid_name(s))
			return strbuf_seterr(err, "%s[%zu]: not a valid name (letters, digits, '.', '_', '-')",
					     field, i);
		if (machines && !config_machine(cfg, s))
			return strbuf_seterr(err, "%s[%zu]: no machine '%s' in the configuration", field, i, s);
	}
	return 0;
}

/* Reads the A/B fields of a job request (tree, base and one patch source)
 * into req, and what to call the patch into subject (req points at it).
 * 0, or -1 with err naming the field. */
static int parse_ab(const struct lab_config *cfg, json_t *body, struct job_request *req,
		    struct strbuf *subject, struct strbuf *err)
{
	json_t *patch = json_object_get(body, "patch"), *branch = json_object_get(body, "branch");
	json_t *url = json_object_get(body, "url");
	int sources = !!patch + !!branch + !!url;
	struct strbuf name = STRBUF_INIT;

	req->kind = "ab";
	req->tree = json_string_value(json_object_get(body, "tree"));
	req->base = json_string_value(json_object_get(body, "base"));
	if (!req->tree || !config_valid_name(req->tree) || !config_tree(cfg, req->tree))
		return strbuf_seterr(err, "tree: no tree '%.64s' in the configuration",
				     req->tree ? req->tree : "(not a string)");
	if (!req->base || !ref_valid(req->base))
		return strbuf_seterr(err, "base: not a valid git ref or commit id");
	if (sources != 1)
		return strbuf_seterr(err, "patch: give exactly one of patch, branch or url");
	if (patch) {
		req->patch_kind = "patch";
		req->patch = json_string_value(patch);
		if (!req->patch || !*req->patch || strlen(req->patch) != json_string_length(patch))
			return strbuf_seterr(err, "patch: must be the text of a diff or a git format-patch mbox");
		if (!strstr(req->patch, "\n+++ ") && strncmp(req->patch, "+++ ", 4) && !strstr(req->patch, "\nGIT binary patch"))
			return strbuf_seterr(err, "patch: no diff in it (no '+++' line)");
		patch_subject(req->patch, strlen(req->patch), subject);
	} else if (branch) {
		req->patch_kind = "branch";
		req->patch_url = json_string_value(json_object_get(branch, "url"));
		req->patch_ref = json_string_value(json_object_get(branch, "ref"));
		if (!json_is_object(branch) || !url_valid(req->patch_url, 1))
			return strbuf_seterr(err, "branch.url: must be an http(s) or git URL without spaces or quotes");
		if (!ref_valid(req->patch_ref))
			return strbuf_seterr(err, "branch.ref: not a valid git ref");
		strbuf_addf(&name, "branch %s of %s", req->patch_ref, req->patch_url);
	} else {
		req->patch_kind = "url";
		req->patch_url = json_string_value(url);
		if (!url_valid(req->patch_url, 0))
			return strbuf_seterr(err, "url: must be an http(s) URL without spaces or quotes");
		strbuf_addstr(&name, req->patch_url);	/* until the mbox is fetched (build.c) */
	}
	if (name.len) {
		strbuf_reset(subject);
		strbuf_add_line_clean(subject, name.buf, name.len, PATCH_SUBJECT_MAX);
		strbuf_release(&name);
	}
	req->patch_subject = subject->len ? subject->buf : NULL;
	return 0;
}

/* The stages of a job: for "run", one run per boot; for "ab", both builds,
 * then base and patched boots interleaved (ABAB...), each followed by its run. */
static size_t plan_stages(const struct lab_config *cfg, const struct cfg_suite *suite,
			  const struct job_request *req, struct stage_plan **ret)
{
	double run_timeout = suite->timeout > 0 ? suite->timeout : cfg->stage_timeout;
	size_t n = 0, cap = strcmp(req->kind, "ab") ? (size_t)req->boots : 2 + 4 * (size_t)req->boots;
	struct stage_plan *p = calloc(cap, sizeof(*p));
	static const char *const sides[] = { "base", "patched" };
	int i, k;

	if (!p)
		abort();
	if (strcmp(req->kind, "ab")) {
		for (i = 0; i < req->boots; i++)
			p[n++] = (struct stage_plan){ "run", NULL, i, run_timeout };
		*ret = p;
		return n;
	}
	for (k = 0; k < 2; k++)
		p[n++] = (struct stage_plan){ "build", sides[k], 0, cfg->stage_timeout };
	for (i = 0; i < req->boots; i++)
		for (k = 0; k < 2; k++) {
			p[n++] = (struct stage_plan){ "boot", sides[k], i, 600 };
			p[n++] = (struct stage_plan){ "run", sides[k], i, run_timeout };
		}
	*ret = p;
	return n;
}

int api_job_request_parse(const struct lab_config *cfg, const char *buf, size_t len, json_t **ret_body,
			  struct job_request *req, struct strbuf *subject, struct strbuf *err)
{
	json_error_t jerr;
	json_t *body, *v;
	const char *key;
	int rc = -1;
	static const char *const fields[] = { "suite", "machines", "tags", "submitter", "boots", "tree",
					      "base", "patch", "branch", "url", "max_boots" };

	*req = (struct job_request){ .kind = "run", .boots = 1 };
	body = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(body)) {
		if (body)
			strbuf_seterr(err, "body: must be a JSON object");
		else
			strbuf_seterr(err, "body: malformed JSON at line %d, column %d: %s",
				      jerr.line, jerr.column, jerr.text);
		goto out;
	}
	json_object_foreach(body, key, v) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(fields); i++)
			if (!strcmp(key, fields[i]))
				break;
		if (i == ARRAY_SIZE(fields)) {
			strbuf_seterr(err, "%.64s: unknown field", key);
			goto out;
		}
	}
	req->suite = json_string_value(json_object_get(body, "suite"));
	if (!req->suite) {
		strbuf_seterr(err, "suite: missing (the name of a configured suite)");
		goto out;
	}
	if (!config_valid_name(req->suite) || !config_suite(cfg, req->suite)) {
		strbuf_seterr(err, "suite: no suite '%.64s' in the configuration", req->suite);
		goto out;
	}
	if ((v = json_object_get(body, "machines")) && check_names(v, "machines", cfg, 1, err) < 0)
		goto out;
	req->machines = v;
	if ((v = json_object_get(body, "tags")) && check_names(v, "tags", cfg, 0, err) < 0)
		goto out;
	req->tags = v;
	if ((v = json_object_get(body, "submitter"))) {
		req->submitter = json_string_value(v);
		if (!req->submitter || !config_valid_name(req->submitter)) {
			strbuf_seterr(err, "submitter: not a valid name (letters, digits, '.', '_', '-')");
			goto out;
		}
	}
	if (json_object_get(body, "tree") || json_object_get(body, "base") || json_object_get(body, "patch") ||
	    json_object_get(body, "branch") || json_object_get(body, "url")) {
		if (parse_ab(cfg, body, req, subject, err) < 0)
			goto out;
		/* DESIGN.md: 5 boots per side; an inconclusive headline metric
		 * adds boots, up to 9 (at 2% noise that takes a 5% change from
		 * 60% to about 97% detected; test_compare measures it) */
		req->boots = DEFAULT_BOOTS;
		req->max_boots = DEFAULT_MAX_BOOTS;
	}
	if ((v = json_object_get(body, "boots"))) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 100) {
			strbuf_seterr(err, "boots: must be an integer from 1 to 100");
			goto out;
		}
		req->boots = (int)json_integer_value(v);
		req->max_boots = req->boots;	/* boots chosen: no more unless asked */
	}
	if ((v = json_object_get(body, "max_boots"))) {
		if (!json_is_integer(v) || json_integer_value(v) < req->boots || json_integer_value(v) > 100 ||
		    strcmp(req->kind, "ab")) {
			strbuf_seterr(err, "max_boots: an integer from boots (%d) to 100, for A/B jobs", req->boots);
			goto out;
		}
		req->max_boots = (int)json_integer_value(v);
	}
	req->suite_json = config_suite(cfg, req->suite)->workloads;
	*ret_body = body;
	body = NULL;
	rc = 0;
out:
	json_decref(body);
	return rc;
}

static enum MHD_Result create_job(struct route_ctx *rc)
{
	const struct lab_config *cfg = rc->api->cfg;
	struct strbuf err = STRBUF_INIT, subject = STRBUF_INIT;
	struct job_request req;
	struct stage_plan *plan = NULL;
	const struct cfg_suite *suite;
	json_t *body = NULL;
	int64_t id;
	size_t nplan;
	enum MHD_Result ret;

	if (api_job_request_parse(cfg, rc->body->buf, rc->body->len, &body, &req, &subject, &err) < 0) {
		ret = send_error(rc->conn, 400, "bad_request", "%s", err.buf);
		goto out;
	}
	suite = config_suite(cfg, req.suite);
	nplan = plan_stages(cfg, suite, &req, &plan);
	if (store_job_create(rc->api->st, &req, plan, nplan, &id, &err) < 0) {
		log_warnx("api: create job: %s", err.buf);
		ret = send_error(rc->conn, 500, "internal", "could not store the job");
		goto out;
	}
	log_info("job %lld: queued (%s, suite %s, by %s)", (long long)id, req.kind, req.suite,
		 req.submitter ? req.submitter : "?");
	sched_wake(rc->api->sc);
	ret = send_json(rc->conn, 201, json_pack("{s:o}", "job", store_job_json(rc->api->st, id)));
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
	return query(conn, key);
}

static enum MHD_Result list_jobs(struct route_ctx *rc)
{
	struct strbuf err = STRBUF_INIT;
	struct job_filter f;
	enum MHD_Result ret;

	if (api_job_filter_parse(query_get, rc->conn, &f, &err) < 0)
		ret = send_error(rc->conn, 400, "bad_request", "%s", err.buf);
	else
		ret = send_json(rc->conn, 200, store_jobs_json(rc->api->st, &f));
	strbuf_release(&err);
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
	if (capture)
		strbuf_add(capture, body.buf, body.len);
	ret = send_text(rc->conn, 200, "application/json", body.buf, body.len);
	strbuf_release(&body);
	return ret;
}

/* GET /api/v1/compare?base=A&patched=B: two jobs that ran the same suite. */
static enum MHD_Result compare_jobs(struct route_ctx *rc)
{
	const char *bv = query(rc->conn, "base"), *pv = query(rc->conn, "patched");
	int64_t a, b;
	json_t *ja, *jb, *da, *db, *cmp;
	const struct cfg_suite *suite;
	struct compare_rules defaults;
	struct strbuf err = STRBUF_INIT;
	enum MHD_Result ret;

	if (strcmp(rc->method, "GET"))
		return send_error(rc->conn, 405, "method_not_allowed", "use GET");
	if (!bv || !pv || parse_id(bv, &a) < 0 || parse_id(pv, &b) < 0)
		return send_error(rc->conn, 400, "bad_request", "base, patched: give two job ids");
	ja = store_job_json(rc->api->st, a);
	jb = store_job_json(rc->api->st, b);
	if (!ja || !jb) {
		json_decref(ja);
		json_decref(jb);
		return send_error(rc->conn, 404, "not_found", "no job %lld", (long long)(ja ? b : a));
	}
	if (!json_equal(json_object_get(ja, "suite"), json_object_get(jb, "suite"))) {
		ret = send_error(rc->conn, 409, "conflict", "jobs %lld and %lld ran different suites (%s, %s)",
				 (long long)a, (long long)b, json_string_value(json_object_get(ja, "suite")),
				 json_string_value(json_object_get(jb, "suite")));
		json_decref(ja);
		json_decref(jb);
		return ret;
	}
	suite = config_suite(rc->api->cfg, json_string_value(json_object_get(ja, "suite")));
	json_decref(ja);
	json_decref(jb);
	compare_rules_default(&defaults);
	da = store_compare_doc(rc->api->st, a);
	db = store_compare_doc(rc->api->st, b);
	cmp = compare_sides(da, NULL, db, NULL, suite ? &suite->rules : &defaults, &err);
	if (cmp)
		ret = send_json(rc->conn, 200, json_pack("{s:o}", "comparison", cmp));
	else
		ret = send_error(rc->conn, 409, "conflict", "cannot compare: %s", err.buf);
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
	const char *state = json_string_value(json_object_get(job, "state")) ?: "";
	enum MHD_Result ret;
	int r;

	if (!job)
		return send_error(rc->conn, 404, "not_found", "no job %lld", (long long)id);
	if (strcmp(json_string_value(json_object_get(job, "kind")) ?: "", "ab")) {
		ret = send_error(rc->conn, 409, "conflict", "job %lld is not an A/B job: a report compares a "
				 "base and a patched kernel", (long long)id);
		goto out;
	}
	if (strcmp(state, "done") && strcmp(state, "failed") && strcmp(state, "cancelled")) {
		ret = send_error(rc->conn, 409, "conflict", "job %lld is %s: its report is ready once it ends",
				 (long long)id, state);
		goto out;
	}
	r = results_comparison(api->st, api->cfg, id, &doc, &err);
	if (r == -ENOENT) {
		ret = send_error(rc->conn, 404, "not_found", "no job %lld", (long long)id);
		goto out;
	}
	if (r < 0) {
		ret = send_error(rc->conn, 409, "conflict", "cannot compare: %s", err.buf);
		goto out;
	}
	cmp = json_loadb(doc.buf, doc.len, 0, NULL);
	/* the comparison has just given a finished job its verdict */
	json_decref(job);
	job = store_job_json(api->st, id);
	if (!cmp || !job || report_text(job, cmp, &text, &err) < 0) {
		log_warnx("job %lld: report: %s", (long long)id, err.len ? err.buf : "cannot read the comparison");
		ret = send_error(rc->conn, 500, "internal", "job %lld: cannot write the report", (long long)id);
		goto out;
	}
	ret = send_text(rc->conn, 200, "text/plain; charset=utf-8", text.buf, text.len);
out:
	json_decref(cmp);
	json_decref(job);
	strbuf_release(&doc);
	strbuf_release(&err);
	strbuf_release(&text);
	return ret;
}

static enum MHD_Result job_routes(struct route_ctx *rc, int64_t id)
{
	struct api *api = rc->api;
	const char *sub = rc->nseg > 4 ? rc->seg[4] : NULL;
	json_t *job;

	if (!sub) {
		if (strcmp(rc->method, "GET"))
			return send_error(rc->conn, 405, "method_not_allowed", "use GET");
		job = store_job_json(api->st, id);
		if (!job)
			return send_error(rc->conn, 404, "not_found", "no job %lld", (long long)id);
		return send_json(rc->conn, 200, json_pack("{s:o}", "job", job));
	}
	if (!strcmp(sub, "cancel") && rc->nseg == 5) {
		int r;

		if (strcmp(rc->method, "POST"))
			return send_error(rc->conn, 405, "method_not_allowed", "use POST");
		if (!authorized(api, rc->conn))
			return send_error(rc->conn, 401, "unauthorized", "missing or invalid token");
		r = store_job_cancel(api->st, id);
		if (r == -ENOENT)
			return send_error(rc->conn, 404, "not_found", "no job %lld", (long long)id);
		if (r == -EALREADY)
			return send_error(rc->conn, 409, "conflict", "job %lld already finished", (long long)id);
		if (r < 0)
			return send_error(rc->conn, 500, "internal", "could not cancel job %lld", (long long)id);
		log_info("job %lld: cancel requested", (long long)id);
		sched_wake(api->sc);
		return send_json(rc->conn, 200, json_pack("{s:o}", "job", store_job_json(api->st, id)));
	}
	if (strcmp(rc->method, "GET"))
		return send_error(rc->conn, 405, "method_not_allowed", "use GET");
	job = store_job_json(api->st, id);
	if (!job)
		return send_error(rc->conn, 404, "not_found", "no job %lld", (long long)id);
	json_decref(job);
	if (!strcmp(sub, "runs") && rc->nseg == 5)
		return send_json(rc->conn, 200, store_runs_json(api->st, id));
	if (!strcmp(sub, "comparison") && rc->nseg == 5) {
		struct strbuf doc = STRBUF_INIT, err = STRBUF_INIT;
		enum MHD_Result ret;
		int r = results_comparison(api->st, api->cfg, id, &doc, &err);

		if (r == -EINVAL)
			ret = send_error(rc->conn, 409, "conflict", "job %lld is not an A/B job; compare two jobs "
					 "with /api/v1/compare?base=A&patched=B", (long long)id);
		else if (r == -ENOENT)
			ret = send_error(rc->conn, 404, "not_found", "no job %lld", (long long)id);
		else if (r < 0)
			ret = send_error(rc->conn, 409, "conflict", "cannot compare: %s", err.buf);
		else
			ret = send_comparison_text(rc, &doc);
		strbuf_release(&doc);
		strbuf_release(&err);
		return ret;
	}
	if (!strcmp(sub, "report.txt") && rc->nseg == 5)
		return send_report(rc, id);
	if (!strcmp(sub, "profiles") && rc->nseg == 5)
		return send_json(rc->conn, 200, store_profiles_json(api->st, id));
	if (!strcmp(sub, "metrics") && rc->nseg == 5) {
		const char *w = query(rc->conn, "include_warmup");

		return send_json(rc->conn, 200, store_metrics_json(api->st, id, query(rc->conn, "name"),
								   w && !strcmp(w, "1")));
	}
	if (!strcmp(sub, "samples") && rc->nseg == 5) {
		const char *sv = query(rc->conn, "stage");
		int64_t stage = 0;

		if (sv && parse_id(sv, &stage) < 0)
			return send_error(rc->conn, 400, "bad_request", "stage: must be a stage id");
		return send_json(rc->conn, 200, store_samples_json(api->st, id, stage, query(rc->conn, "name")));
	}
	if (!strcmp(sub, "stages") && rc->nseg == 7 && !strcmp(rc->seg[6], "log")) {
		struct strbuf log = STRBUF_INIT;
		int64_t stage;
		enum MHD_Result ret;

		long tail;
		size_t from;

		if (parse_id(rc->seg[5], &stage) < 0)
			return send_error(rc->conn, 400, "bad_request", "stage: must be a stage id");
		if (query_int(rc->conn, "tail", 1, 1000000, 0, &tail) < 0)
			return send_error(rc->conn, 400, "bad_request", "tail: must be a number of lines from 1 "
					  "to 1000000");
		if (store_stage_log(api->st, id, stage, &log) < 0) {
			strbuf_release(&log);
			return send_error(rc->conn, 404, "not_found", "no stage %lld in job %lld",
					  (long long)stage, (long long)id);
		}
		/* ?tail=N: the last N lines only */
		from = log.len;
		if (from && log.buf[from - 1] == '\n')
			from--;
		while (tail > 0 && from > 0)
			if (log.buf[--from] == '\n' && --tail == 0)
				from++;
		if (!query(rc->conn, "tail"))
			from = 0;
		ret = send_text(rc->conn, 200, "text/plain; charset=utf-8", log.buf + from, log.len - from);
		strbuf_release(&log);
		return ret;
	}
	return send_error(rc->conn, 404, "not_found", "no such resource");
}

/* An operator takes a machine out (maintenance) or puts it back (unknown:
 * it gets a health check before its next job). */
static enum MHD_Result set_health(struct route_ctx *rc)
{
	const char *name = rc->seg[3], *health, *reason;
	json_t *body;
	enum MHD_Result ret;

	if (strcmp(rc->method, "POST"))
		return send_error(rc->conn, 405, "method_not_allowed", "use POST");
	if (!authorized(rc->api, rc->conn))
		return send_error(rc->conn, 401, "unauthorized", "missing or invalid token");
	if (!config_valid_name(name) || !config_machine(rc->api->cfg, name))
		return send_error(rc->conn, 404, "not_found", "no machine '%.64s'", name);
	body = json_loadb(rc->body->buf, rc->body->len, 0, NULL);
	health = json_string_value(json_object_get(body, "health"));
	reason = json_string_value(json_object_get(body, "reason"));
	if (!health || (strcmp(health, "maintenance") && strcmp(health, "unknown"))) {
		ret = send_error(rc->conn, 400, "bad_request", "health: must be maintenance or unknown");
	} else if (reason && strlen(reason) > 500) {
		ret = send_error(rc->conn, 400, "bad_request", "reason: at most 500 characters");
	} else {
		store_machine_health(rc->api->st, name, health, reason ? reason : "set by an operator");
		log_info("machine %s: %s (%s)", name, health, reason ? reason : "set by an operator");
		sched_wake(rc->api->sc);
		ret = send_json(rc->conn, 200, store_machines_json(rc->api->st));
	}
	json_decref(body);
	return ret;
}

static enum MHD_Result add_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	(void)kind;
	strbuf_addf(cls, "&%s=%s", key, value ? value : "");
	return MHD_YES;
}

static int cache_get(struct api *api, const char *key, int64_t gen, struct strbuf *out)
{
	size_t i;
	int hit = 0;

	pthread_mutex_lock(&api->cache.lock);
	for (i = 0; i < CACHE_SLOTS && !hit; i++) {
		struct cache_slot *c = &api->cache.slot[i];

		if (c->key && c->gen == gen && !strcmp(c->key, key)) {
			strbuf_add(out, c->body, c->len);
			hit = 1;
		}
	}
	pthread_mutex_unlock(&api->cache.lock);
	return hit;
}

static void cache_put(struct api *api, const char *key, int64_t gen, const struct strbuf *body)
{
	struct cache_slot *c;

	if (body->len > CACHE_MAX_BODY)
		return;
	pthread_mutex_lock(&api->cache.lock);
	c = &api->cache.slot[api->cache.next++ % CACHE_SLOTS];
	free(c->key);
	free(c->body);
	c->key = strdup(key);
	c->body = malloc(body->len + 1);
	if (c->key && c->body) {
		memcpy(c->body, body->buf, body->len + 1);
		c->len = body->len;
		c->gen = gen;
	} else {
		free(c->key);
		free(c->body);
		c->key = c->body = NULL;
	}
	pthread_mutex_unlock(&api->cache.lock);
}

static enum MHD_Result route_uncached(struct route_ctx *rc);

/* Serves GETs of job data from the cache when the store has not changed. */
static enum MHD_Result route(struct route_ctx *rc)
{
	struct strbuf key = STRBUF_INIT, body = STRBUF_INIT;
	enum MHD_Result ret;
	int64_t gen;
	int i;

	if (rc->api->cache_off || strcmp(rc->method, "GET") || rc->nseg < 3 || strcmp(rc->seg[2], "jobs") ||
	    (rc->api->cfg->read_requires_token && !authorized(rc->api, rc->conn)))
		return route_uncached(rc);
	for (i = 0; i < rc->nseg; i++)
		strbuf_addf(&key, "/%s", rc->seg[i]);
	MHD_get_connection_values(rc->conn, MHD_GET_ARGUMENT_KIND, add_arg, &key);
	gen = store_generation(rc->api->st);
	if (cache_get(rc->api, key.buf, gen, &body)) {
		ret = send_text(rc->conn, 200, "application/json", body.buf, body.len);
	} else {
		capture = &body;
		ret = route_uncached(rc);
		capture = NULL;
		if (body.len)
			cache_put(rc->api, key.buf, gen, &body);
	}
	strbuf_release(&key);
	strbuf_release(&body);
	return ret;
}

/* What a submitter may choose: the configured suites, with their rules. */
static json_t *suites_json(const struct lab_config *cfg)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < cfg->nsuites; i++) {
		const struct cfg_suite *su = &cfg->suites[i];

		json_array_append_new(arr, json_pack("{s:s,s:f,s:O,s:o}", "name", su->name, "timeout",
						     su->timeout, "workloads", su->workloads, "rules",
						     compare_rules_json(&su->rules)));
	}
	return json_pack("{s:o}", "suites", arr);
}

/* The configured trees: names and builders (not their URLs). */
static json_t *trees_json(const struct lab_config *cfg)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < cfg->ntrees; i++)
		json_array_append_new(arr, json_pack("{s:s,s:s,s:s}", "name", cfg->trees[i].name, "builder",
						     cfg->trees[i].builder, "config_base",
						     cfg->trees[i].config_base));
	return json_pack("{s:o}", "trees", arr);
}

static enum MHD_Result route_uncached(struct route_ctx *rc)
{
	struct api *api = rc->api;
	int is_get = !strcmp(rc->method, "GET"), is_post = !strcmp(rc->method, "POST");

	if (rc->nseg < 2 || strcmp(rc->seg[0], "api") || strcmp(rc->seg[1], "v1"))
		return send_error(rc->conn, 404, "not_found", "no such resource");
	if (is_get && api->cfg->read_requires_token && !authorized(api, rc->conn))
		return send_error(rc->conn, 401, "unauthorized", "missing or invalid token");
	if (rc->nseg == 3 && !strcmp(rc->seg[2], "health")) {
		json_t *h;

		if (!is_get)
			return send_error(rc->conn, 405, "method_not_allowed", "use GET");
		h = store_health_json(api->st);
		json_object_set_new(h, "version", json_string(VERSION));
		return send_json(rc->conn, 200, h);
	}
	if (rc->nseg == 5 && !strcmp(rc->seg[2], "machines") && !strcmp(rc->seg[4], "health"))
		return set_health(rc);
	if (rc->nseg == 3 && !strcmp(rc->seg[2], "compare"))
		return compare_jobs(rc);
	if (rc->nseg == 3 && (!strcmp(rc->seg[2], "suites") || !strcmp(rc->seg[2], "trees"))) {
		if (!is_get)
			return send_error(rc->conn, 405, "method_not_allowed", "use GET");
		return send_json(rc->conn, 200, !strcmp(rc->seg[2], "suites") ? suites_json(api->cfg)
									       : trees_json(api->cfg));
	}
	if (rc->nseg == 3 && !strcmp(rc->seg[2], "machines")) {
		if (!is_get)
			return send_error(rc->conn, 405, "method_not_allowed", "use GET");
		return send_json(rc->conn, 200, store_machines_json(api->st));
	}
	if (rc->nseg >= 3 && !strcmp(rc->seg[2], "jobs")) {
		int64_t id;

		if (rc->nseg == 3) {
			if (is_get)
				return list_jobs(rc);
			if (!is_post)
				return send_error(rc->conn, 405, "method_not_allowed", "use GET or POST");
			if (!authorized(api, rc->conn))
				return send_error(rc->conn, 401, "unauthorized", "missing or invalid token");
			return create_job(rc);
		}
		if (parse_id(rc->seg[3], &id) < 0)
			return send_error(rc->conn, 400, "bad_request", "job: must be a job id");
		return job_routes(rc, id);
	}
	return send_error(rc->conn, 404, "not_found", "no such resource");
}

/* GET of anything outside /api/: the dashboard's files. */
static enum MHD_Result serve_static(struct api *api, struct MHD_Connection *conn, const char *url,
				    const char *method)
{
	char path[4096], mtime[64];
	const char *since;
	struct MHD_Response *r;
	struct stat sb;
	struct tm tm;
	enum MHD_Result ret;
	unsigned status = 200;
	int fd;

	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return send_error(conn, 405, "method_not_allowed", "use GET");
	if (!api->web_dir)
		return send_error(conn, 404, "not_found", "this daemon serves no dashboard (no web/ directory)");
	if (web_resolve(api->web_dir, url, path, sizeof(path)) < 0)
		return send_error(conn, 404, "not_found", "no such resource");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		if (fd >= 0)
			close(fd);
		return send_error(conn, 404, "not_found", "no such resource");
	}
	/* the browser revalidates every load; an unchanged file is a 304 */
	gmtime_r(&sb.st_mtime, &tm);
	strftime(mtime, sizeof(mtime), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	since = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_MODIFIED_SINCE);
	if (since && !strcmp(since, mtime)) {
		close(fd);
		fd = -1;
		r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
		status = 304;
	} else {
		r = MHD_create_response_from_fd((uint64_t)sb.st_size, fd);
	}
	if (!r) {
		if (fd >= 0)
			close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Last-Modified", mtime);
	MHD_add_response_header(r, "Content-Type", web_content_type(path));
	MHD_add_response_header(r, "Cache-Control", "no-cache");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Content-Security-Policy",
				"default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
			       const char *method, const char *version, const char *upload_data,
			       size_t *upload_data_size, void **con_cls)
{
	struct api *api = cls;
	struct request *req = *con_cls;
	struct route_ctx rc = { .api = api, .conn = conn, .method = method };
	char *path, *p, *save = NULL;
	enum MHD_Result ret;

	(void)version;
	if (!req) {
		req = calloc(1, sizeof(*req));
		if (!req)
			return MHD_NO;
		strbuf_init(&req->body, 0);
		req->body.max = api->cfg->max_body;
		*con_cls = req;
		return MHD_YES;
	}
	if (*upload_data_size) {
		if (!req->too_large && strbuf_add(&req->body, upload_data, *upload_data_size) < 0)
			req->too_large = 1;
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (strncmp(url, "/api/", 5) && strcmp(url, "/api"))
		return serve_static(api, conn, url, method);
	if (req->too_large)
		return send_error(conn, 413, "too_large", "the request body is larger than %zu bytes",
				  api->cfg->max_body);
	path = strdup(url);
	if (!path)
		return MHD_NO;
	for (p = strtok_r(path, "/", &save); p && rc.nseg < MAX_SEGMENTS; p = strtok_r(NULL, "/", &save))
		rc.seg[rc.nseg++] = p;
	rc.body = &req->body;
	if (p)
		ret = send_error(conn, 404, "not_found", "no such resource");
	else
		ret = route(&rc);
	free(path);
	return ret;
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct request *req = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (!req)
		return;
	strbuf_release(&req->body);
	free(req);
	*con_cls = NULL;
}

int api_start(const struct lab_config *cfg, struct store *st, struct sched *sc, const char *web_dir,
	      struct api **ret, struct strbuf *err)
{
	struct api *api = calloc(1, sizeof(*api));
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;

	if (!api)
		abort();
	api->cfg = cfg;
	api->st = st;
	api->sc = sc;
	if (web_dir) {
		api->web_dir = strdup(web_dir);
		if (!api->web_dir)
			abort();
	}
	pthread_mutex_init(&api->cache.lock, NULL);
	api->cache_off = getenv("TLBLAB_API_CACHE") && !strcmp(getenv("TLBLAB_API_CACHE"), "0");
	if (inet_pton(AF_INET, cfg->listen_host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)cfg->listen_port);
	} else if (inet_pton(AF_INET6, cfg->listen_host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)cfg->listen_port);
		flags |= MHD_USE_IPv6;
	} else {
		free(api->web_dir);
		free(api);
		return strbuf_seterr(err, "listen: '%s' is not an IP address", cfg->listen_host);
	}
	api->mhd = MHD_start_daemon(flags, (uint16_t)cfg->listen_port, NULL, NULL, handler, api,
				    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				    MHD_OPTION_THREAD_POOL_SIZE, (unsigned)API_THREADS,
				    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
				    MHD_OPTION_CONNECTION_LIMIT, (unsigned)512,
				    MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
				    MHD_OPTION_END);
	if (!api->mhd) {
		free(api->web_dir);
		free(api);
		return strbuf_seterr(err, "cannot listen on %s:%d (address in use?)", cfg->listen_host,
				     cfg->listen_port);
	}
	*ret = api;
	return 0;
}

void api_set_config(struct api *api, const struct lab_config *cfg)
{
	api->cfg = cfg;
}

void api_stop(struct api *api)
{
	size_t i;

	if (!api)
		return;
	MHD_stop_daemon(api->mhd);
	for (i = 0; i < CACHE_SLOTS; i++) {
		free(api->cache.slot[i].key);
		free(api->cache.slot[i].body);
	}
	pthread_mutex_destroy(&api->cache.lock);
	free(api->web_dir);
	free(api);
}
