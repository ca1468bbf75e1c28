/*
 * The HTTP API. libmicrohttpd runs a small thread pool; each request is
 * handled start to finish on one of its threads: the body is collected (up
 * to lab.max_body, past which the answer is 413 before the rest is read),
 * the route is matched on path segments, and the handler builds a JSON
 * document from the store. Writes only insert or flag rows and wake the
 * scheduler, which owns everything else.
 *
 * Nothing that needs a token costs memory before the token is checked
 * (DESIGN.md): a POST's token is checked from its headers, on the first
 * call of the handler, and only then is its body read; every other body is
 * dropped unread. A client without a token can still hold connections, so
 * each address may have lab.max_connections_per_address of them, and a
 * request whose headers are not complete lab.header_timeout after it began
 * is cut by the reaper thread (libmicrohttpd's own timeout restarts with
 * every byte, so a client trickling a header line at a time never meets
 * it). Answers are bounded too: at most MAX_QUERY_ARGS query arguments, and
 * the samples of a job come in pages.
 *
 * This file is the server: start and stop, connections and their limits,
 * the reaper, routing, the response cache and the routes of the lab
 * (health, suites, trees, machines). The answers and the request's
 * helpers are in api_reply.c, the job routes in api_jobs.c, the tracks'
 * in api_tracks.c, what a submitted job may be in submit.c; api_int.h is
 * what they share.
 */
#include "api.h"
#include "api_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compare.h"
#include "config.h"
#include "log.h"
#include "scheduler.h"
#include "store.h"
#include "util.h"
#include "version.h"
#include "web.h"
#include "banned.h"

/* API threads: one per CPU, between these. More than the CPUs only
 * preempt each other mid-request: on 2 CPUs, 4 threads doubled the job
 * list's p99 under 32 clients (b0002). */
#define API_THREADS_MIN 2
#define API_THREADS_MAX 8
#define CACHE_MAX_BODY (1u << 20)
#define CONNECTION_LIMIT 512u	/* all clients together */
#define MAX_QUERY_ARGS 64	/* past it, 414: no route takes more than a few */
#define REAPER_PERIOD_MS 250	/* how late past header_timeout a cut may come */


/*
 * An open connection, from accept to close (libmicrohttpd's socket
 * context), on api->conns. Between requests (in_request 0) its clock runs
 * from `since`; the reaper cuts it once that passes lab.header_timeout.
 */
struct conn_track {
	struct conn_track *prev, *next;
	struct MHD_Connection *conn;
	double since;		/* monotonic: when its current request began */
	int in_request;		/* its headers are complete: the handler has it */
	int cut;		/* the reaper has shut its socket down */
};

struct request {
	struct strbuf body;
	int too_large;
	int begun;		/* the handler has seen it (its headers are complete) */
	int read_body;		/* an authorized POST: its body is kept */
	int query_args;		/* past MAX_QUERY_ARGS: how many it had (the query is dropped) */
};

/* An operator takes a machine out (maintenance) or puts it back (unknown:
 * it gets a health check before its next job). */
static enum MHD_Result set_health(struct route_ctx *rc)
{
	const char *name = rc->seg[3], *health, *reason;
	struct strbuf err = STRBUF_INIT;
	json_t *body = NULL, *body2;
	enum MHD_Result ret;
	int r;

	if (api_post_refused(rc, &ret))
		return ret;
	if (!config_valid_name(name) || !config_machine(rc->cfg, name))
		return api_send_error(rc->conn, 404, "not_found", "no machine '%.64s'", name);
	/* every machine is the lab's: no token made one */
	if (api_admin_refused(rc, &ret, "machine %s is the lab's; setting its health needs an admin token", name))
		return ret;
	if (api_health_parse(rc->body->buf, rc->body->len, &body, &health, &reason, &err) < 0) {
		ret = api_send_error(rc->conn, 400, "bad_request", "%s", err.buf);
	} else if ((r = store_machine_health(rc->api->st, name, health, reason)) < 0) {
		ret = api_send_store_error(rc->conn, r, "machine %s: could not set its health", name);
	} else {
		log_info("machine %s: %s (%s)", name, health, reason);
		sched_wake(rc->api->sc);
		body2 = store_machines_json(rc->api->st);
		ret = api_send_read(rc->conn, body2, errno, "machine list (machine %s is %s)", name, health);
	}
	json_decref(body);
	strbuf_release(&err);
	return ret;
}

/*
 * Adds one query argument to a cache key. Names and values are
 * length-prefixed, so that no two lists of arguments make one key: joined
 * as "&name=value", ?a=b%26c%3Dd (one argument) and ?a=b&c=d (two) did.
 * An argument without '=' (value NULL) is told from one with an empty value.
 */
static enum MHD_Result add_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	(void)kind;
	strbuf_addf(cls, "&%zu:%s", strlen(key), key);
	if (value)
		strbuf_addf(cls, "=%zu:%s", strlen(value), value);
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
	int i, public;

	if (rc->api->cache_off || strcmp(rc->method, "GET") || rc->nseg < 3 || strcmp(rc->seg[2], "jobs"))
		return route_uncached(rc);
	public = api_reader_public(rc);
	if (rc->cfg->read_requires_token && public)
		return route_uncached(rc);
	/* a reader without a token sees URLs redacted: an answer of its own */
	strbuf_addstr(&key, public ? "public:" : "token:");
	for (i = 0; i < rc->nseg; i++)
		strbuf_addf(&key, "/%s", rc->seg[i]);
	MHD_get_connection_values(rc->conn, MHD_GET_ARGUMENT_KIND, add_arg, &key);
	gen = store_generation(rc->api->st);
	if (cache_get(rc->api, key.buf, gen, &body)) {
		ret = api_send_text(rc->conn, 200, "application/json", body.buf, body.len);
	} else {
		api_reply_capture(&body);
		ret = route_uncached(rc);
		api_reply_capture(NULL);
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
		json_t *o = json_pack("{s:s,s:f,s:O,s:o}", "name", su->name, "timeout", su->timeout, "workloads",
				      su->workloads, "rules", compare_rules_json(&su->rules));

		/* a sweep's vCPU counts (config.h): its boots, once per count */
		if (su->nguest_cpus) {
			json_t *counts = json_array();

			for (size_t k = 0; k < su->nguest_cpus; k++)
				json_array_append_new(counts, json_integer(su->guest_cpus[k]));
			json_object_set_new(o, "guest_cpus", counts);
		}
		json_array_append_new(arr, o);
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
	enum MHD_Result refused;

	if (rc->nseg < 2 || strcmp(rc->seg[0], "api") || strcmp(rc->seg[1], "v1"))
		return api_send_error(rc->conn, 404, "not_found", "no such resource");
	if (is_get && rc->cfg->read_requires_token && api_token_refused(api, rc->conn, &refused))
		return refused;
	if (rc->nseg == 3 && !strcmp(rc->seg[2], "health")) {
		json_t *h;

		if (!is_get)
			return api_send_error(rc->conn, 405, "method_not_allowed", "use GET");
		/* it answers when the store cannot: 503 or 500, saying why */
		h = store_health_json(api->st);
		if (h)
			json_object_set_new(h, "version", json_string(TLBLAB_VERSION));
		return api_send_read(rc->conn, h, errno, "health");
	}
	if (rc->nseg == 5 && !strcmp(rc->seg[2], "machines") && !strcmp(rc->seg[4], "health"))
		return set_health(rc);
	if (rc->nseg == 3 && !strcmp(rc->seg[2], "compare"))
		return api_compare_jobs(rc);
	if (rc->nseg == 3 && (!strcmp(rc->seg[2], "suites") || !strcmp(rc->seg[2], "trees"))) {
		if (!is_get)
			return api_send_error(rc->conn, 405, "method_not_allowed", "use GET");
		return api_send_json(rc->conn, 200, !strcmp(rc->seg[2], "suites") ? suites_json(rc->cfg)
									       : trees_json(rc->cfg));
	}
	if (rc->nseg == 3 && !strcmp(rc->seg[2], "machines")) {
		json_t *ms;

		if (!is_get)
			return api_send_error(rc->conn, 405, "method_not_allowed", "use GET");
		ms = store_machines_json(api->st);
		return api_send_read(rc->conn, ms, errno, "machine list");
	}
	if (rc->nseg >= 3 && (!strcmp(rc->seg[2], "tracks") || !strcmp(rc->seg[2], "series") ||
			      !strcmp(rc->seg[2], "alerts") || !strcmp(rc->seg[2], "deliveries") ||
			      !strcmp(rc->seg[2], "bisections")))
		return api_track_routes(rc);
	if (rc->nseg >= 3 && !strcmp(rc->seg[2], "jobs")) {
		int64_t id;

		if (rc->nseg == 3) {
			if (is_get)
				return api_list_jobs(rc);
			if (!is_post)
				return api_send_error(rc->conn, 405, "method_not_allowed", "use GET or POST");
			if (api_token_refused(api, rc->conn, &refused))
				return refused;
			return api_create_job(rc);
		}
		if (api_parse_id(rc->seg[3], &id) < 0)
			return api_send_error(rc->conn, 400, "bad_request", "job: must be a job id");
		return api_job_routes(rc, id);
	}
	return api_send_error(rc->conn, 404, "not_found", "no such resource");
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
		return api_send_error(conn, 405, "method_not_allowed", "use GET");
	if (!api->web_dir)
		return api_send_error(conn, 404, "not_found", "this daemon serves no dashboard (no web/ directory)");
	if (web_resolve(api->web_dir, url, path, sizeof(path)) < 0)
		return api_send_error(conn, 404, "not_found", "no such resource");
	fd = web_open(api->web_dir, path);
	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		if (fd >= 0)
			close(fd);
		return api_send_error(conn, 404, "not_found", "no such resource");
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
				"default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
				"frame-ancestors 'none'");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static struct conn_track *conn_track_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* A request's headers are complete: the reaper leaves it alone until it
 * ends (completed()), when the next request's clock starts. */
static void conn_in_request(struct api *api, struct MHD_Connection *conn, int in_request)
{
	struct conn_track *t = conn_track_of(conn);

	if (!t)
		return;
	pthread_mutex_lock(&api->conns_lock);
	t->in_request = in_request;
	t->since = mono_now();
	pthread_mutex_unlock(&api->conns_lock);
}

/*
 * The first call for a request, its headers complete: what can be refused
 * from them is refused here, before any body is read. Returns 1 with the
 * answer queued in *ret, else 0 (read the body, if any, then route).
 */
static int request_first_look(struct api *api, struct MHD_Connection *conn, const char *url,
			      const char *method, struct request *req, enum MHD_Result *ret)
{
	const char *len = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	int nargs = MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, NULL, NULL);
	uint64_t n;

	if (req->query_args)
		nargs = req->query_args;
	if (nargs > MAX_QUERY_ARGS) {
		*ret = api_send_error(conn, 414, "uri_too_long", "%d query arguments: at most %d", nargs,
				  MAX_QUERY_ARGS);
		return 1;
	}
	if (strcmp(method, "POST") || (strncmp(url, "/api/", 5) && strcmp(url, "/api")))
		return 0;	/* any body is dropped unread; routing answers */
	if (api_token_refused(api, conn, ret))
		return 1;
	if (len && (parse_u64(len, &n) < 0 || n > req->body.max)) {
		*ret = api_send_error(conn, 413, "too_large", "the request body is larger than %zu bytes",
				  req->body.max);
		return 1;
	}
	req->read_body = 1;
	return 0;
}

/*
 * libmicrohttpd's URI log callback: the request line is read, its query not
 * yet parsed; what it returns is the request's *con_cls. libmicrohttpd
 * keeps each query argument in the connection's 32 KiB memory pool: about
 * 460 of them filled it, and such a request never got an answer. So a query
 * of more than MAX_QUERY_ARGS arguments is cut off here, in
 * libmicrohttpd's buffer, before it is parsed (0.9.75 parses the query
 * after this call, from the '?' on), and the handler answers 414.
 */
static void *request_begin(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct api *api = cls;
	struct request *req = calloc(1, sizeof(*req));
	char *q = strchr(uri, '?');
	int nargs = 0;

	(void)conn;
	if (!req)
		return NULL;
	strbuf_init(&req->body, 0);
	{
		const struct lab_config *cfg = api_config(api);

		req->body.max = cfg->max_body;	/* the limit when the request began */
		config_free(cfg);
	}
	if (q) {
		const char *p;

		for (p = q, nargs = 1; *p; p++)
			nargs += *p == '&';
		if (nargs > MAX_QUERY_ARGS) {
			req->query_args = nargs;
			q[1] = '\0';
		}
	}
	return req;
}

/* One call of libmicrohttpd's handler, under the configuration rc->cfg. */
static enum MHD_Result handle(struct route_ctx *rc, const char *url, struct request *req,
			      const char *upload_data, size_t *upload_data_size)
{
	struct api *api = rc->api;
	struct MHD_Connection *conn = rc->conn;
	const char *method = rc->method;
	char *path, *p, *save = NULL;
	enum MHD_Result ret;

	if (!req->begun) {
		req->begun = 1;
		conn_in_request(api, conn, 1);
		if (request_first_look(api, conn, url, method, req, &ret))
			return ret;
		return MHD_YES;
	}
	if (*upload_data_size) {
		if (req->read_body && !req->too_large && strbuf_add(&req->body, upload_data, *upload_data_size) < 0)
			req->too_large = 1;
		*upload_data_size = 0;
		return MHD_YES;
	}
	/* DNS rebinding: a page of another name must not reach this lab */
	if (!config_host_allowed(rc->cfg, MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host")))
		return api_send_error(conn, 421, "misdirected", "this lab does not answer to that Host name "
				  "(lab.allowed_hosts lists the names it answers to)");
	if (strncmp(url, "/api/", 5) && strcmp(url, "/api"))
		return serve_static(api, conn, url, method);
	if (req->too_large)
		return api_send_error(conn, 413, "too_large", "the request body is larger than %zu bytes",
				  req->body.max);
	path = strdup(url);
	if (!path)
		return MHD_NO;
	for (p = strtok_r(path, "/", &save); p && rc->nseg < MAX_SEGMENTS; p = strtok_r(NULL, "/", &save))
		rc->seg[rc->nseg++] = p;
	rc->body = &req->body;
	if (p)
		ret = api_send_error(conn, 404, "not_found", "no such resource");
	else
		ret = route(rc);
	free(path);
	return ret;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
			       const char *method, const char *version, const char *upload_data,
			       size_t *upload_data_size, void **con_cls)
{
	struct api *api = cls;
	struct route_ctx rc = { .api = api, .conn = conn, .method = method };
	enum MHD_Result ret;

	(void)version;
	if (!*con_cls)
		return MHD_NO;	/* request_begin ran out of memory */
	rc.cfg = api_config(api);
	ret = handle(&rc, url, *con_cls, upload_data, upload_data_size);
	config_free(rc.cfg);
	return ret;
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct request *req = *con_cls;

	(void)toe;
	conn_in_request(cls, conn, 0);
	if (!req)
		return;
	strbuf_release(&req->body);
	free(req);
	*con_cls = NULL;
}

/* Keeps api->conns: every connection from accept to close. */
static void notify_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			      enum MHD_ConnectionNotificationCode toe)
{
	struct api *api = cls;
	struct conn_track *t = *socket_context;

	pthread_mutex_lock(&api->conns_lock);
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		t = calloc(1, sizeof(*t));
		if (t) {
			t->conn = conn;
			t->since = mono_now();
			t->next = api->conns;
			if (api->conns)
				api->conns->prev = t;
			api->conns = t;
		}
		*socket_context = t;
	} else if (t) {
		/* libmicrohttpd tells before it closes the socket: the reaper,
		 * which takes conns_lock too, never shuts down a reused fd */
		if (t->prev)
			t->prev->next = t->next;
		else
			api->conns = t->next;
		if (t->next)
			t->next->prev = t->prev;
		free(t);
		*socket_context = NULL;
	}
	pthread_mutex_unlock(&api->conns_lock);
}

/* Cuts connections whose request headers are late (lab.header_timeout). A
 * shutdown socket reads as closed, and libmicrohttpd closes it there. */
static void *reaper_main(void *arg)
{
	struct api *api = arg;
	struct timespec ts;

	pthread_mutex_lock(&api->conns_lock);
	while (!api->stopping) {
		const struct lab_config *cfg = api_config(api);
		double timeout = cfg->header_timeout, late = mono_now() - timeout;
		struct conn_track *t;
		int cut = 0;

		config_free(cfg);
		for (t = api->conns; t; t = t->next) {
			const union MHD_ConnectionInfo *ci;

			if (t->in_request || t->cut || t->since > late)
				continue;
			ci = MHD_get_connection_info(t->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
			if (ci && shutdown(ci->connect_fd, SHUT_RDWR) == 0)
				cut++;
			t->cut = 1;
		}
		if (cut)
			log_info("api: closed %d connections whose request headers took over %gs "
				 "(lab.header_timeout)", cut, timeout);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += REAPER_PERIOD_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&api->reaper_wake, &api->conns_lock, &ts);
	}
	pthread_mutex_unlock(&api->conns_lock);
	return NULL;
}

static unsigned api_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < API_THREADS_MIN ? API_THREADS_MIN : n > API_THREADS_MAX ? API_THREADS_MAX : (unsigned)n;
}

int api_start(const struct lab_config *cfg, struct store *st, struct sched *sc, struct tracker *tr,
	      const char *web_dir, struct api **ret, struct strbuf *err)
{
	struct api *api = xcalloc(1, sizeof(*api));
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
	int rc;

	api->cfg = cfg;		/* its reference is taken once the API runs */
	api->st = st;
	api->sc = sc;
	api->tracker = tr;
	if (web_dir)
		api->web_dir = xstrdup(web_dir);
	pthread_mutex_init(&api->cache.lock, NULL);
	pthread_mutex_init(&api->submit_lock, NULL);
	pthread_mutex_init(&api->conns_lock, NULL);
	pthread_mutex_init(&api->cfg_lock, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&api->reaper_wake, &ca);
		pthread_condattr_destroy(&ca);
	}
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
				    MHD_OPTION_THREAD_POOL_SIZE, api_threads(),
				    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
				    MHD_OPTION_CONNECTION_LIMIT, CONNECTION_LIMIT,
				    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)cfg->max_connections_per_address,
				    MHD_OPTION_NOTIFY_COMPLETED, completed, api,
				    MHD_OPTION_NOTIFY_CONNECTION, notify_connection, api,
				    MHD_OPTION_URI_LOG_CALLBACK, request_begin, api,
				    MHD_OPTION_END);
	if (!api->mhd) {
		free(api->web_dir);
		free(api);
		return strbuf_seterr(err, "cannot listen on %s:%d (address in use?)", cfg->listen_host,
				     cfg->listen_port);
	}
	rc = pthread_create(&api->reaper, NULL, reaper_main, api);
	if (rc) {
		MHD_stop_daemon(api->mhd);
		free(api->web_dir);
		free(api);
		return strbuf_seterr(err, "cannot start the API's connection reaper: %s", strerror(rc));
	}
	config_ref(cfg);
	*ret = api;
	return 0;
}

const struct lab_config *api_config(struct api *api)
{
	const struct lab_config *cfg;

	pthread_mutex_lock(&api->cfg_lock);
	cfg = config_ref(api->cfg);
	pthread_mutex_unlock(&api->cfg_lock);
	return cfg;
}

void api_set_config(struct api *api, const struct lab_config *cfg)
{
	const struct lab_config *old;

	pthread_mutex_lock(&api->cfg_lock);
	old = api->cfg;
	api->cfg = config_ref(cfg);
	pthread_mutex_unlock(&api->cfg_lock);
	config_free(old);	/* requests still running hold their own */
}

void api_stop(struct api *api)
{
	size_t i;

	if (!api)
		return;
	pthread_mutex_lock(&api->conns_lock);
	api->stopping = 1;
	pthread_cond_signal(&api->reaper_wake);
	pthread_mutex_unlock(&api->conns_lock);
	pthread_join(api->reaper, NULL);
	MHD_stop_daemon(api->mhd);
	for (i = 0; i < CACHE_SLOTS; i++) {
		free(api->cache.slot[i].key);
		free(api->cache.slot[i].body);
	}
	pthread_mutex_destroy(&api->cache.lock);
	pthread_mutex_destroy(&api->submit_lock);
	pthread_mutex_destroy(&api->conns_lock);
	pthread_mutex_destroy(&api->cfg_lock);
	pthread_cond_destroy(&api->reaper_wake);
	config_free(api->cfg);
	free(api->web_dir);
	free(api);
}
