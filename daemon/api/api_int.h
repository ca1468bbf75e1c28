#ifndef TLBLAB_API_INT_H
#define TLBLAB_API_INT_H

#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "strbuf.h"

/*
 * What the files of the HTTP API share: api_server.c (the server, routing),
 * api_reply.c (the answers and the request's helpers), api_jobs.c (the job
 * routes), api_tracks.c and api_bodies.c (the other POSTs' bodies). Not
 * for use outside them:
 * the rest of the daemon sees only api.h.
 */

#define MAX_SEGMENTS 8		/* path segments a route may have */
#define CACHE_SLOTS 64

struct lab_config;
struct store;
struct sched;
struct conn_track;
struct tracker;

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

struct api {
	struct api_cache cache;
	int cache_off;		/* TLBLAB_API_CACHE=0, for measuring without it */
	struct MHD_Daemon *mhd;
	char *web_dir;		/* the dashboard's files, or NULL */
	/* the current configuration, a reference; a request takes its own
	 * (api_config) and keeps it to the end, whatever a reload does */
	const struct lab_config *cfg;
	pthread_mutex_t cfg_lock;
	struct store *st;
	struct sched *sc;
	struct tracker *tracker;	/* api_set_tracker, or NULL */
	/* every open connection, for the reaper (api_server.c) */
	pthread_mutex_t conns_lock;
	pthread_cond_t reaper_wake;
	struct conn_track *conns;
	pthread_t reaper;
	int stopping;
	/* a submit counts the token's queued work and adds to it as one step */
	pthread_mutex_t submit_lock;
};

/* A reference to the current configuration (config_free it when done). */
const struct lab_config *api_config(struct api *api);

/* The request a route answers: its path split at '/', and its body (kept
 * only for an authorized POST). */
struct route_ctx {
	struct api *api;
	const struct lab_config *cfg;	/* a reference, for this request */
	struct MHD_Connection *conn;
	const char *method;
	char *seg[MAX_SEGMENTS];
	int nseg;
	const struct strbuf *body;
};

/*
 * Answers (api_reply.c). Each queues the response and returns what the handler
 * returns to libmicrohttpd. A JSON 200 is kept by the response cache when
 * the route is cached.
 */
/* While sb is set, this thread's JSON 200 answers are also appended to
 * it (the response cache's copy); NULL stops it. */
void api_reply_capture(struct strbuf *sb);
enum MHD_Result api_send_text(struct MHD_Connection *conn, unsigned status, const char *type,
			  const char *text, size_t len);
/* Sends doc (stolen) as JSON. */
enum MHD_Result api_send_json(struct MHD_Connection *conn, unsigned status, json_t *doc);
/* Sends 200 with body, JSON text already; body is handed to the response,
 * not copied, and left empty. */
enum MHD_Result api_send_json_text(struct MHD_Connection *conn, struct strbuf *body);
/* {"error": {"code": code, "message": ...}} with status. */
enum MHD_Result api_send_error(struct MHD_Connection *conn, unsigned status, const char *code,
			   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A store call failed with r (store.h): 503 store_busy when the database
 * is locked by another writer, else 500 store_error; logged. */
enum MHD_Result api_send_store_error(struct MHD_Connection *conn, int r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A cancel the store refused with r < 0: 404 when there is no such what
 * (-ENOENT), 409 "<what> <id> <ended>" when it has ended (-EALREADY),
 * else the store's error. */
enum MHD_Result api_send_cancel_refused(struct MHD_Connection *conn, int r, const char *what, long long id,
					const char *ended);
/* A document a store read returned: 200 with it; without one, 404 when
 * err is ENOENT, else the store's error. The format names the thing. */
enum MHD_Result api_send_read(struct MHD_Connection *conn, json_t *doc, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* What a request carries (api_reply.c). */
/* The token of "Authorization: Bearer TOKEN", or NULL. */
const char *api_bearer(struct MHD_Connection *conn);
/* The request has a token the store knows (0 too when the store could not
 * tell: such a reader is treated as one without a token). */
int api_authorized(struct api *api, struct MHD_Connection *conn);
/* 0 when the request has a token the store knows; else 1 with the answer
 * sent and in *ret: 401, or the store's 503 or 500 when it could not be
 * checked (a valid token is not turned away as invalid). */
int api_token_refused(struct api *api, struct MHD_Connection *conn, enum MHD_Result *ret);
/* A query argument's value, NULL when it is absent or empty. */
/* 0 when rc is a POST with a valid token; else 1, the 405 or 401 (or the
 * store's error: api_token_refused) sent and what the handler returns in
 * *ret. */
int api_post_refused(struct route_ctx *rc, enum MHD_Result *ret);
/*
 * Who may change what (store.h: store_token_right), for a POST whose
 * token api_post_refused let through: 0 when its token made row id of
 * what, or is an admin token. Else 1 with the answer sent and in *ret,
 * having changed nothing: 404 when there is no such row, 403 forbidden
 * saying who made it and what `change` ("cancel") needs, or the store's
 * error.
 */
int api_change_refused(struct route_ctx *rc, enum store_owned what, int64_t id, const char *change,
		       enum MHD_Result *ret);
/* 0 when rc's token is an admin token; else 1 with 403 forbidden sent
 * (and in *ret), its message why_fmt's. */
int api_admin_refused(struct route_ctx *rc, enum MHD_Result *ret, const char *why_fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * Whether rc's token may queue the n jobs of plans[i] (nplans[i] stages
 * each), by what the store counts of its work (store_token_work) and
 * submit_within_limits. 0, or -1 with the answer (500, or 429 with
 * `prefix` and why) sent and in *ret. The caller holds submit_lock across
 * this and the store's insert, so two requests of one token cannot both
 * take its last place.
 */
int api_within_token_limits(struct route_ctx *rc, const char *prefix, struct stage_plan *const *plans,
			    const size_t *nplans, size_t n, enum MHD_Result *ret);
/*
 * A reader without a valid token sees URLs that may hold a secret (a
 * webhook's, a job's branch or mbox URL, a track's) redacted (util.h:
 * util_url_redact), as /trees never shows the trees' URLs. 1 when rc's reader
 * is such a one.
 */
int api_reader_public(struct route_ctx *rc);
/* Every string of doc with each place url appears in it redacted
 * (util_url_redact_in), in place. */
void api_redact_json(json_t *doc, const char *url);
const char *api_query(struct MHD_Connection *conn, const char *key);
/* A query argument as an integer in [min, max] into *ret (def when
 * absent): 0, or -1 when it is not one. */
int api_query_int(struct MHD_Connection *conn, const char *key, long min, long max, long def, long *ret);
/* A job or stage id (1 to INT64_MAX): 0, or -1. */
int api_parse_id(const char *s, int64_t *ret);

/* The job routes (api_jobs.c), which api_server.c's routing calls once the path
 * matches; api_create_job after the token is checked. */
enum MHD_Result api_create_job(struct route_ctx *rc);
enum MHD_Result api_list_jobs(struct route_ctx *rc);
enum MHD_Result api_compare_jobs(struct route_ctx *rc);
/* Everything under /api/v1/jobs/ID. */
enum MHD_Result api_job_routes(struct route_ctx *rc, int64_t id);

/* What a 400 answer says of an alert state that is not one (the store
 * knows the states). */
#define API_ALERT_STATE_WHY "state: must be new, acknowledged, ignored, fixed or intended"

/* ---- api_tracks.c ---- */

/* /api/v1/tracks..., /series/ID, /alerts..., /deliveries (api.h) */
enum MHD_Result api_track_routes(struct route_ctx *rc);

#endif
