/*
 * The answers of the HTTP API and what a request carries, shared by the
 * server (api_server.c) and its routes (api_jobs.c, api_tracks.c): sending JSON,
 * text, errors and a store's failures; the bearer token, what it may
 * change and queue, and what a reader without one sees (URLs redacted);
 * the query's arguments and ids. Below the routes and the server both, so
 * that the routes never call back into the server's file.
 */
#include "api_int.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store.h"
#include "submit.h"
#include "util.h"
#include "banned.h"

/* The request being answered on this thread wants its JSON body kept. */
static _Thread_local struct strbuf *capture;

void api_reply_capture(struct strbuf *sb)
{
	capture = sb;
}

enum MHD_Result api_send_text(struct MHD_Connection *conn, unsigned status, const char *type,
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
enum MHD_Result api_send_json(struct MHD_Connection *conn, unsigned status, json_t *doc)
{
	char *txt = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(12));
	enum MHD_Result ret;

	json_decref(doc);
	if (!txt)
		return api_send_text(conn, 500, "application/json",
				 "{\"error\":{\"code\":\"internal\",\"message\":\"cannot encode\"}}", 55);
	if (capture && status == 200)
		strbuf_addstr(capture, txt);
	ret = api_send_text(conn, status, "application/json", txt, strlen(txt));
	free(txt);
	return ret;
}

/* Sends 200 with body, JSON text already (the response cache keeps a
 * copy); body is handed to the response, not copied, and left empty. */
enum MHD_Result api_send_json_text(struct MHD_Connection *conn, struct strbuf *body)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	size_t len;
	char *text;

	if (capture)
		strbuf_add(capture, body->buf, body->len);
	text = strbuf_detach(body, &len);
	r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	ret = MHD_queue_response(conn, 200, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result api_send_error(struct MHD_Connection *conn, unsigned status, const char *code,
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
	return api_send_json(conn, status, doc);
}

/* A store call failed (store.h): 503 when the database is locked by
 * another writer or its server cannot be reached (try again), else 500;
 * the message says what could not be done and why. The failed call
 * changed nothing. */
enum MHD_Result api_send_store_error(struct MHD_Connection *conn, int r, const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT;
	enum MHD_Result ret;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	log_warnx("api: %s: store: %s", msg.buf, store_strerror(r));
	ret = api_send_error(conn, r == -EAGAIN || r == -ENOTCONN ? 503 : 500,
			 r == -EAGAIN ? "store_busy" : r == -ENOTCONN ? "store_down" : "store_error",
			 "%s: store: %s", msg.buf, store_strerror(r));
	strbuf_release(&msg);
	return ret;
}

/*
 * A document a store read returned (store.h): 200 with it; without one,
 * errno (read right after the call) says why: 404 when what the request
 * names does not exist, else the store's error (503 or 500), never a
 * partial document. `what` names the thing in either answer.
 */
enum MHD_Result api_send_cancel_refused(struct MHD_Connection *conn, int r, const char *what, long long id,
					const char *ended)
{
	if (r == -ENOENT)
		return api_send_error(conn, 404, "not_found", "no %s %lld", what, id);
	if (r == -EALREADY)
		return api_send_error(conn, 409, "conflict", "%s %lld %s", what, id, ended);
	return api_send_store_error(conn, r, "%s %lld: not cancelled", what, id);
}

enum MHD_Result api_send_read(struct MHD_Connection *conn, json_t *doc, int err, const char *fmt, ...)
{
	struct strbuf what = STRBUF_INIT;
	enum MHD_Result ret;
	va_list ap;

	if (doc)
		return api_send_json(conn, 200, doc);
	va_start(ap, fmt);
	strbuf_vaddf(&what, fmt, ap);
	va_end(ap);
	if (err == ENOENT)
		ret = api_send_error(conn, 404, "not_found", "no %s", what.buf);
	else
		ret = api_send_store_error(conn, -(err ? err : EIO), "could not read %s", what.buf);
	strbuf_release(&what);
	return ret;
}

/* The token of "Authorization: Bearer TOKEN", or NULL. */
const char *api_bearer(struct MHD_Connection *conn)
{
	const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");

	if (!h || strncmp(h, "Bearer ", 7))
		return NULL;
	return h + 7;
}

int api_authorized(struct api *api, struct MHD_Connection *conn)
{
	const char *token = api_bearer(conn);

	return token && store_token_valid(api->st, token) > 0;
}

int api_token_refused(struct api *api, struct MHD_Connection *conn, enum MHD_Result *ret)
{
	const char *token = api_bearer(conn);
	int r = token ? store_token_valid(api->st, token) : 0;

	if (r > 0)
		return 0;
	if (r < 0)
		*ret = api_send_store_error(conn, r, "could not check the token");
	else
		*ret = api_send_error(conn, 401, "unauthorized", "missing or invalid token");
	return 1;
}

int api_post_refused(struct route_ctx *rc, enum MHD_Result *ret)
{
	if (strcmp(rc->method, "POST")) {
		*ret = api_send_error(rc->conn, 405, "method_not_allowed", "use POST");
		return 1;
	}
	return api_token_refused(rc->api, rc->conn, ret);
}

int api_change_refused(struct route_ctx *rc, enum store_owned what, int64_t id, const char *change,
		       enum MHD_Result *ret)
{
	static const char *const noun[STORE_OWNED_MAX] = { "job", "bisection", "alert" };
	static const char *const made[STORE_OWNED_MAX] = { "submitted", "asked for", "made" };
	int r = store_token_right(rc->api->st, api_bearer(rc->conn), what, id);

	if (r == TOKEN_MADE_IT || r == TOKEN_ADMIN)
		return 0;
	if (r == -ENOENT)
		*ret = api_send_error(rc->conn, 404, "not_found", "no %s %lld", noun[what], (long long)id);
	else if (r == TOKEN_OTHER)
		*ret = api_send_error(rc->conn, 403, "forbidden", "%s %lld was %s by another token; %s needs that "
				      "token or an admin token", noun[what], (long long)id, made[what], change);
	else if (r == TOKEN_LAB)
		*ret = api_send_error(rc->conn, 403, "forbidden", "%s %lld is the lab's (no token %s it: a track, "
				      "the tracker or a bisection did); %s needs an admin token", noun[what],
				      (long long)id, made[what], change);
	else
		*ret = api_send_store_error(rc->conn, r, "%s %lld: could not read who made it", noun[what],
					    (long long)id);
	return 1;
}

int api_admin_refused(struct route_ctx *rc, enum MHD_Result *ret, const char *why_fmt, ...)
{
	struct strbuf why = STRBUF_INIT;
	va_list ap;

	if (store_token_admin(rc->api->st, api_bearer(rc->conn)) > 0)
		return 0;
	va_start(ap, why_fmt);
	strbuf_vaddf(&why, why_fmt, ap);
	va_end(ap);
	*ret = api_send_error(rc->conn, 403, "forbidden", "%s", why.buf);
	strbuf_release(&why);
	return 1;
}

int api_within_token_limits(struct route_ctx *rc, const char *prefix, struct stage_plan *const *plans,
			    const size_t *nplans, size_t n, enum MHD_Result *ret)
{
	struct strbuf why = STRBUF_INIT;
	int jobs, boots;

	if (store_token_work(rc->api->st, api_bearer(rc->conn), &jobs, &boots) < 0) {
		log_warnx("api: cannot count a token's queued work");
		*ret = api_send_error(rc->conn, 500, "internal", "could not count the token's queued jobs");
		return -1;
	}
	if (submit_within_limits(rc->cfg, jobs, boots, plans, nplans, n, &why) < 0) {
		*ret = api_send_error(rc->conn, 429, "too_many_requests", "%s%s", prefix, why.buf);
		strbuf_release(&why);
		return -1;
	}
	return 0;
}

int api_reader_public(struct route_ctx *rc)
{
	return !api_authorized(rc->api, rc->conn);
}

static void redact_walk(json_t *doc, const char *url)
{
	struct strbuf t = STRBUF_INIT;
	const char *key;
	json_t *v;
	size_t i;

	if (json_is_object(doc)) {
		json_object_foreach(doc, key, v)
			redact_walk(v, url);
	} else if (json_is_array(doc)) {
		json_array_foreach(doc, i, v)
			redact_walk(v, url);
	} else if (json_is_string(doc)) {
		util_url_redact_in(json_string_value(doc), json_string_length(doc), url, &t);
		if (t.len != json_string_length(doc) || memcmp(t.buf, json_string_value(doc), t.len))
			json_string_setn(doc, t.buf, t.len);
		strbuf_release(&t);
	}
}

void api_redact_json(json_t *doc, const char *url)
{
	char *copy;

	if (!url || !*url)
		return;
	copy = xstrdup(url);	/* url may be one of doc's strings, which change */
	redact_walk(doc, copy);
	free(copy);
}

const char *api_query(struct MHD_Connection *conn, const char *key)
{
	const char *v = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, key);

	return v && *v ? v : NULL;
}

int api_query_int(struct MHD_Connection *conn, const char *key, long min, long max, long def, long *ret)
{
	const char *v = api_query(conn, key);

	*ret = def;
	if (!v)
		return 0;
	return parse_int_range(v, min, max, ret);
}

int api_parse_id(const char *s, int64_t *ret)
{
	uint64_t v;

	if (parse_u64(s, &v) < 0 || v == 0 || v > (uint64_t)INT64_MAX)
		return -1;
	*ret = (int64_t)v;
	return 0;
}
