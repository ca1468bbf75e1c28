/*
 * The API of nightly tracking (api.h lists the routes): tracks and their
 * points, series, alerts and their triage, bisections, webhook deliveries. Reads come
 * from the store (store_tracks.c); a run asked for goes to the tracker
 * thread (track.h), which answers by changing the store.
 */
#include "api.h"
#include "api_int.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "guard.h"
#include "jsonget.h"
#include "log.h"
#include "report.h"
#include "store.h"
#include "submit.h"
#include "track.h"
#include "util.h"
#include "banned.h"

/* the configured side of each track, beside what the store says */
static json_t *tracks_json(struct route_ctx *rc)
{
	json_t *doc = store_tracks_json(rc->api->st), *t;
	int public = api_reader_public(rc);
	struct strbuf url = STRBUF_INIT;
	size_t i;

	json_array_foreach(json_object_get(doc, "tracks"), i, t) {
		const struct cfg_track *c = config_track(rc->cfg, jsonget_str(t, "name"));
		json_t *m = json_array();
		size_t k;

		if (!c) {
			json_decref(m);
			continue;
		}
		for (k = 0; k < c->nmachines; k++)
			json_array_append_new(m, json_string(c->machines[k]));
		/* a tree's URL, which /trees never shows */
		strbuf_reset(&url);
		if (c->url && public)
			util_url_redact(c->url, &url);
		json_object_set_new(t, "config", json_pack("{s:s,s:s,s:s?,s:s,s:s,s:o,s:i,s:b,s:{s:i,s:f,s:f,s:i}}",
			"tree", c->tree, "branch", c->branch, "url", url.len ? url.buf : c->url,
			"schedule", c->schedule,
			"suite", c->suite, "machines", m, "boots", c->boots, "bisect", c->bisect,
			"detect", "window", (int)c->detect.window, "max_p", c->detect.max_p,
			"min_change", c->detect.min_magnitude, "confirm_after", c->confirm_after));
	}
	strbuf_release(&url);
	return doc;
}

/*
 * A page of webhook deliveries as its reader may see it: without a token,
 * each hook's URL (whose path may be its secret) and the URL of the job an
 * event tells of (its body's "job") redacted wherever they show, in the
 * errors and the body as well.
 */
static json_t *deliveries_json(struct route_ctx *rc, int limit, int offset)
{
	json_t *doc = store_deliveries_json(rc->api->st, limit, offset), *d;
	size_t i;

	if (!doc || !api_reader_public(rc))
		return doc;
	json_array_foreach(json_object_get(doc, "deliveries"), i, d) {
		json_t *job = json_object_get(json_object_get(d, "body"), "job");

		api_redact_json(d, jsonget_str(job, "patch_url"));
		api_redact_json(d, jsonget_str(d, "url"));
	}
	return doc;
}

static int page(struct route_ctx *rc, long *limit, long *offset)
{
	return api_query_int(rc->conn, "limit", 1, 500, 50, limit) < 0 ||
	       api_query_int(rc->conn, "offset", 0, 1000000000, 0, offset) < 0 ? -1 : 0;
}

static enum MHD_Result track_routes(struct route_ctx *rc, int is_get)
{
	const char *name = rc->nseg >= 4 ? rc->seg[3] : NULL;
	long limit, offset;

	if (rc->nseg == 3) {
		if (!is_get)
			return api_send_error(rc->conn, 405, "method_not_allowed", "use GET");
		return api_send_read(rc->conn, tracks_json(rc), errno, "track list");
	}
	if (!config_valid_name(name) || rc->nseg != 5)
		return api_send_error(rc->conn, 404, "not_found", "no such resource");
	if (!strcmp(rc->seg[4], "run")) {
		enum MHD_Result refused;

		if (api_post_refused(rc, &refused))
			return refused;
		if (!rc->api->tracker || track_run_now(rc->api->tracker, name) < 0)
			return api_send_error(rc->conn, 404, "not_found", "no track '%.64s'", name);
		log_info("track %s: a run asked for through the API", name);
		return api_send_json(rc->conn, 202, json_pack("{s:s,s:b}", "track", name, "asked", 1));
	}
	if (!is_get)
		return api_send_error(rc->conn, 405, "method_not_allowed", "use GET");
	if (!config_track(rc->cfg, name))
		return api_send_error(rc->conn, 404, "not_found", "no track '%.64s'", name);
	if (!strcmp(rc->seg[4], "points")) {
		if (page(rc, &limit, &offset) < 0)
			return api_send_error(rc->conn, 400, "bad_request", "limit, offset: must be integers "
					      "(limit 1..500)");
		return api_send_read(rc->conn, store_points_json(rc->api->st, name, (int)limit, (int)offset), errno,
				     "points of track %s", name);
	}
	if (!strcmp(rc->seg[4], "series"))
		return api_send_read(rc->conn, store_series_list_json(rc->api->st, name), errno,
				     "series of track %s", name);
	return api_send_error(rc->conn, 404, "not_found", "no such resource");
}

static enum MHD_Result alert_state(struct route_ctx *rc, int64_t id)
{
	struct strbuf err = STRBUF_INIT;
	json_t *body = NULL;
	const char *state, *by;
	enum MHD_Result ret;
	int r;

	if (api_post_refused(rc, &ret) || api_change_refused(rc, STORE_OWNED_ALERT, id, "setting its state", &ret))
		return ret;
	if (api_alert_state_parse(rc->body->buf, rc->body->len, &body, &state, &by, &err) < 0)
		ret = api_send_error(rc->conn, 400, "bad_request", "%s", err.buf);
	else if ((r = store_alert_set_state(rc->api->st, id, state, by)) == -EINVAL)
		ret = api_send_error(rc->conn, 400, "bad_request", API_ALERT_STATE_WHY);
	else if (r == -ENOENT)
		ret = api_send_error(rc->conn, 404, "not_found", "no alert %lld", (long long)id);
	else if (r < 0)
		ret = api_send_store_error(rc->conn, r, "alert %lld: could not set its state", (long long)id);
	else {
		log_info("alert %lld: %s by %s", (long long)id, state, by);
		if (rc->api->tracker)
			track_wake(rc->api->tracker);	/* an intended change: search again */
		ret = api_send_read(rc->conn, store_alert_json(rc->api->st, id), errno, "alert %lld",
				    (long long)id);
	}
	json_decref(body);
	strbuf_release(&err);
	return ret;
}

/* running at once: each holds a lab machine for hours */
#define API_MAX_BISECTIONS 8

/*
 * Stores the bisection req if the lab runs fewer than API_MAX_BISECTIONS
 * and its token is within its limits, where a running bisection counts as
 * one job with the boots of one step (plan: its steps run one after
 * another, store_token_work): checked and stored as one step under
 * submit_lock, as jobs are (api_jobs.c), so that two requests cannot both
 * take a last place. 0 with *ret_id, or -1 with the answer sent and in *ret.
 */
static int queue_bisection(struct route_ctx *rc, const struct bisection_request *req, struct stage_plan *plan,
			   size_t nplan, int64_t *ret_id, enum MHD_Result *ret)
{
	struct strbuf err = STRBUF_INIT;
	int64_t *running = NULL;
	size_t n = 0;
	int r;

	GUARD_MUTEX(&rc->api->submit_lock);
	r = store_bisections_running(rc->api->st, &running, &n);
	free(running);
	if (r == 0 && n >= API_MAX_BISECTIONS) {
		*ret = api_send_error(rc->conn, 429, "too_many", "%zu bisections are running already (at most %d): "
				      "cancel one or wait", n, API_MAX_BISECTIONS);
		return -1;
	}
	if (api_within_token_limits(rc, "a running bisection counts as one job with the boots of one of its steps: ",
				    &plan, &nplan, 1, ret) < 0)
		return -1;
	r = store_bisection_create(rc->api->st, req, NULL, 0, NULL, 0, ret_id, &err);
	if (r < 0)
		*ret = api_send_store_error(rc->conn, r, "bisection: not stored: %s", err.buf);
	strbuf_release(&err);
	return r < 0 ? -1 : 0;
}

/* POST /bisections: the body read (api_bisection_parse), then stored
 * under the lab's and the token's limits (queue_bisection) */
static enum MHD_Result bisection_create(struct route_ctx *rc)
{
	struct bisection_request req;
	struct job_request step;
	struct stage_plan *plan = NULL;
	struct strbuf err = STRBUF_INIT;
	json_t *body, *doc;
	enum MHD_Result ret;
	int64_t id = 0;
	size_t nplan;

	if (api_post_refused(rc, &ret))
		return ret;
	if (api_bisection_parse(rc->cfg, rc->body->buf, rc->body->len, &body, &req, &err) < 0) {
		ret = api_send_error(rc->conn, 400, "bad_request", "%s", err.buf);
		strbuf_release(&err);
		return ret;
	}
	req.token = api_bearer(rc->conn);
	/* what each step runs (track_bisect.c): a kernel's build, then its boots */
	step = (struct job_request){ .kind = "run", .tree = req.tree, .base = req.bad, .suite = req.suite,
				     .boots = req.boots };
	nplan = submit_plan(rc->cfg, config_suite(rc->cfg, req.suite), &step, &plan);
	if (queue_bisection(rc, &req, plan, nplan, &id, &ret) == 0) {
		log_info("bisection %lld: %s..%s in %s of tree %s on %s, asked for through the API", (long long)id,
			 req.good, req.bad, req.metric, req.tree, req.machine);
		if (rc->api->tracker)
			track_wake(rc->api->tracker);
		doc = store_bisection_json(rc->api->st, id);
		ret = doc ? api_send_json(rc->conn, 201, json_pack("{s:o}", "bisection", doc))
			  : api_send_store_error(rc->conn, -errno, "bisection %lld", (long long)id);
	}
	free(plan);
	strbuf_release(&err);
	json_decref(body);
	return ret;
}

static enum MHD_Result bisection_routes(struct route_ctx *rc, int is_get)
{
	long limit, offset, alert;
	enum MHD_Result ret;
	int64_t id;
	json_t *doc;
	int r;

	if (rc->nseg == 3) {
		if (!is_get)
			return bisection_create(rc);
		if (page(rc, &limit, &offset) < 0 || api_query_int(rc->conn, "alert", 0, INT64_MAX / 2, 0, &alert) < 0)
			return api_send_error(rc->conn, 400, "bad_request", "limit, offset, alert: must be integers "
					      "(limit 1..500)");
		return api_send_read(rc->conn, store_bisections_json(rc->api->st, alert, (int)limit, (int)offset),
				     errno, "bisections");
	}
	if (api_parse_id(rc->seg[3], &id) < 0)
		return api_send_error(rc->conn, 400, "bad_request", "bisection: must be a bisection id");
	if (rc->nseg == 5 && !strcmp(rc->seg[4], "cancel")) {
		if (api_post_refused(rc, &ret) || api_change_refused(rc, STORE_OWNED_BISECTION, id, "cancel", &ret))
			return ret;
		r = store_bisection_cancel(rc->api->st, id);
		if (r < 0)
			return api_send_cancel_refused(rc->conn, r, "bisection", (long long)id, "has ended");
		log_info("bisection %lld: cancelled through the API", (long long)id);
		return api_send_read(rc->conn, store_bisection_json(rc->api->st, id), errno, "bisection %lld",
				     (long long)id);
	}
	if (!is_get)
		return api_send_error(rc->conn, 405, "method_not_allowed", "use GET");
	if (rc->nseg == 4)
		return api_send_read(rc->conn, store_bisection_json(rc->api->st, id), errno, "bisection %lld",
				     (long long)id);
	if (rc->nseg == 5 && !strcmp(rc->seg[4], "report.txt")) {
		struct strbuf text = STRBUF_INIT;

		if (!(doc = store_bisection_json(rc->api->st, id)))
			return api_send_read(rc->conn, NULL, errno, "bisection %lld", (long long)id);
		report_bisect(doc, &text);
		ret = api_send_text(rc->conn, 200, "text/plain; charset=utf-8", text.buf, text.len);
		strbuf_release(&text);
		json_decref(doc);
		return ret;
	}
	return api_send_error(rc->conn, 404, "not_found", "no such resource");
}

enum MHD_Result api_track_routes(struct route_ctx *rc)
{
	int is_get = !strcmp(rc->method, "GET");
	const char *what = rc->seg[2];
	long limit, offset;
	int64_t id;

	if (!strcmp(what, "tracks"))
		return track_routes(rc, is_get);
	if (!strcmp(what, "bisections"))
		return bisection_routes(rc, is_get);
	if (rc->nseg == 5 && !strcmp(what, "alerts") && !strcmp(rc->seg[4], "state")) {
		if (api_parse_id(rc->seg[3], &id) < 0)
			return api_send_error(rc->conn, 400, "bad_request", "alert: must be an alert id");
		return alert_state(rc, id);
	}
	if (!is_get)
		return api_send_error(rc->conn, 405, "method_not_allowed", "use GET");
	if (rc->nseg == 3 && (!strcmp(what, "alerts") || !strcmp(what, "deliveries"))) {
		const char *track = api_query(rc->conn, "track");

		if (page(rc, &limit, &offset) < 0)
			return api_send_error(rc->conn, 400, "bad_request", "limit, offset: must be integers "
					      "(limit 1..500)");
		if (!strcmp(what, "deliveries"))
			return api_send_read(rc->conn, deliveries_json(rc, (int)limit, (int)offset), errno,
					     "deliveries");
		if (track && !config_valid_name(track))
			return api_send_error(rc->conn, 400, "bad_request", "track: not a valid name");
		return api_send_read(rc->conn, store_alerts_json(rc->api->st, track, (int)limit, (int)offset),
				     errno, "alerts");
	}
	if (rc->nseg == 4 && (!strcmp(what, "alerts") || !strcmp(what, "series"))) {
		if (api_parse_id(rc->seg[3], &id) < 0)
			return api_send_error(rc->conn, 400, "bad_request", "%s: must be an id", what);
		if (!strcmp(what, "alerts"))
			return api_send_read(rc->conn, store_alert_json(rc->api->st, id), errno, "alert %lld",
					     (long long)id);
		return api_send_read(rc->conn, store_series_json(rc->api->st, id), errno, "series %lld",
				     (long long)id);
	}
	return api_send_error(rc->conn, 404, "not_found", "no such resource");
}
