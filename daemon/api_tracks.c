/*
 * The API of nightly tracking (api.h lists the routes): tracks and their
 * points, series, alerts and their triage, webhook deliveries. Reads come
 * from the store (store_tracks.c); a run asked for goes to the tracker
 * thread (track.h), which answers by changing the store.
 */
#include "api_int.h"

#include <errno.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "store.h"
#include "track.h"
#include "util.h"
#include "banned.h"

/* the configured side of each track, beside what the store says */
static json_t *tracks_json(struct route_ctx *rc)
{
	json_t *doc = store_tracks_json(rc->api->st), *t;
	size_t i;

	json_array_foreach(json_object_get(doc, "tracks"), i, t) {
		const struct cfg_track *c = config_track(rc->cfg, json_string_value(json_object_get(t, "name")));
		json_t *m = json_array();
		size_t k;

		if (!c) {
			json_decref(m);
			continue;
		}
		for (k = 0; k < c->nmachines; k++)
			json_array_append_new(m, json_string(c->machines[k]));
		json_object_set_new(t, "config", json_pack("{s:s,s:s,s:s?,s:s,s:s,s:o,s:i,s:b,s:{s:i,s:f,s:f,s:i}}",
			"tree", c->tree, "branch", c->branch, "url", c->url, "schedule", c->schedule,
			"suite", c->suite, "machines", m, "boots", c->boots, "bisect", c->bisect,
			"detect", "window", (int)c->detect.window, "max_p", c->detect.max_p,
			"min_change", c->detect.min_magnitude, "confirm_after", c->confirm_after));
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
	json_t *body;
	const char *state, *by;
	enum MHD_Result ret;
	int r;

	if (api_post_refused(rc, &ret))
		return ret;
	body = json_loadb(rc->body->buf, rc->body->len, 0, NULL);
	state = json_string_value(json_object_get(body, "state"));
	by = json_string_value(json_object_get(body, "by"));
	if (!state)
		ret = api_send_error(rc->conn, 400, "bad_request", "state: must be new, acknowledged, ignored, "
				     "fixed or intended");
	else if (by && !config_valid_name(by))
		ret = api_send_error(rc->conn, 400, "bad_request", "by: not a valid name (letters, digits, "
				     "'.', '_', '-')");
	else if ((r = store_alert_set_state(rc->api->st, id, state, by ? by : "unknown")) == -EINVAL)
		ret = api_send_error(rc->conn, 400, "bad_request", "state: must be new, acknowledged, ignored, "
				     "fixed or intended");
	else if (r == -ENOENT)
		ret = api_send_error(rc->conn, 404, "not_found", "no alert %lld", (long long)id);
	else if (r < 0)
		ret = api_send_store_error(rc->conn, r, "alert %lld: could not set its state", (long long)id);
	else {
		log_info("alert %lld: %s by %s", (long long)id, state, by ? by : "unknown");
		if (rc->api->tracker)
			track_wake(rc->api->tracker);	/* an intended change: search again */
		ret = api_send_read(rc->conn, store_alert_json(rc->api->st, id), errno, "alert %lld",
				    (long long)id);
	}
	json_decref(body);
	return ret;
}

enum MHD_Result api_track_routes(struct route_ctx *rc)
{
	int is_get = !strcmp(rc->method, "GET");
	const char *what = rc->seg[2];
	long limit, offset;
	int64_t id;

	if (!strcmp(what, "tracks"))
		return track_routes(rc, is_get);
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
			return api_send_read(rc->conn, store_deliveries_json(rc->api->st, (int)limit, (int)offset),
					     errno, "deliveries");
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
