#ifndef TLBLAB_CLIENT_H
#define TLBLAB_CLIENT_H

#include <jansson.h>
#include <stdio.h>
#include <time.h>

#include "client_fmt.h"
#include "strbuf.h"

/*
 * The pieces of the command-line client `tlblab` (client/tlblab.c) that are
 * not command parsing: an HTTP/JSON client for the API described in api.h,
 * a plain-text table printer (client_fmt.h), the words for jobs and stages behind `tlblab
 * status`, and the views of `tlblab results` and `tlblab compare`.
 *
 * Everything the server sends is untrusted: bodies are capped, JSON is
 * parsed strictly, fields of the wrong type read as absent, and strings are
 * stripped of control characters before they reach the terminal.
 */

#include "version.h"

#define CLIENT_CONNECT_TIMEOUT 5L	/* seconds */
#define CLIENT_TOTAL_TIMEOUT 30L	/* seconds, whole request */
#define CLIENT_MAX_BODY (64u << 20)	/* bytes of response body */

/* What went wrong with the last failed request. */
enum client_error {
	CLIENT_ERR_NONE,
	CLIENT_ERR_HTTP,	/* the server answered with a non-2xx status */
	CLIENT_ERR_NET,		/* no answer: connect, DNS, timeout, reset */
	CLIENT_ERR_RESPONSE,	/* an answer we cannot use: too large, not JSON */
	CLIENT_ERR_MAX
};

struct client {
	char *server;		/* base URL, no trailing '/'; owned */
	char *token;		/* bearer token or NULL; owned */
	void *curl;		/* CURL *, reused so polls keep the connection */
	enum client_error last_error;
	long last_status;	/* HTTP status of the last answer, 0 if none */
};

/*
 * Prepares c for server (an http:// or https:// URL) and token (NULL or ""
 * for none). Both are copied. Returns 0, or -1 with err when the URL or the
 * token cannot be used (a token with control characters would break the
 * header). c must be released with client_release() either way.
 */
int client_init(struct client *c, const char *server, const char *token,
		struct strbuf *err);
void client_release(struct client *c);

/*
 * Sends METHOD server+path (path starts with "/api/v1/"; the caller escapes
 * query values with client_add_query()). body, when not NULL, is sent as
 * JSON. On a 2xx answer returns 0 and, if asked, the raw body in *ret_raw
 * (appended) and the parsed JSON in *ret_json (caller json_decref()s).
 * Otherwise returns -1, sets c->last_error and c->last_status, and fills err
 * with what a user should read: "HTTP 401 unauthorized: missing or invalid
 * token", or curl's message and the URL when the server did not answer.
 */
int client_request(struct client *c, const char *method, const char *path,
		   json_t *body, struct strbuf *ret_raw, json_t **ret_json,
		   struct strbuf *err);

/* Appends "?name=value" or "&name=value" to path, value URL-escaped. */
void client_add_query(struct client *c, struct strbuf *path, const char *name,
		      const char *value);

/*
 * Names the API accepts for suites, machines, tags and submitters:
 * util.h's name_valid(), the rule the daemon's config_valid_name() is too.
 */
int client_valid_name(const char *s);

/*
 * Jobs and their stages as the API's JOB (api.h) has them, for status,
 * submit --wait and cancel (client_status.c).
 */
/* done, failed and cancelled: states a job does not leave */
int client_job_is_final(const char *state);
/* "running", or "running, cancel requested" while a cancel is on its way */
void client_job_state_text(struct strbuf *sb, const json_t *job);
/* "build base on builder b1", "run patched #2 on m1", "run on m1" (boots
 * counted from 1). Not cleaned. */
void client_stage_name(struct strbuf *sb, const json_t *stage);
/* Whose failure the job's error is, in words ("a result of the patch, not
 * a lab problem"); NULL for infra, cancelled, unknown classes or no error. */
const char *client_job_error_blame(const json_t *job);
/* "failed: infra: ssh: connection refused", with the blame when there is
 * one; "done" for a job that ended well. Cleaned. */
void client_job_outcome(struct strbuf *sb, const json_t *job);

/* The specs of run stages ("specs": [{"spec", "workload", "params",
 * "state": done|failed|not_run, "class", "message"}]); a spec that ran
 * and failed counts in ran and in failed. */
struct spec_counts {
	size_t ran, failed, not_run;
};
/* Prints indent + "spec 1 mremap workers=2: failed (workload): message"
 * for each spec of stage that failed or did not run; returns how many. */
size_t client_stage_spec_problems_print(FILE *out, const json_t *stage, const char *indent);
/*
 * The `tlblab status` view of job id: its summary (with the verdict of an
 * A/B job, whose failure an error is, and how many specs ran and failed),
 * a table of its stages, and per run stage what became of its specs.
 */
void client_status_print(FILE *out, long long id, const json_t *job);

/*
 * Prints the `tlblab results` view of a job: runs and metrics are the
 * bodies of GET /api/v1/jobs/ID/runs and /metrics. One block per (spec,
 * case) and, when a job ran on several machines or sides, per machine and
 * side (an A/B job's base blocks first, then the patched ones), with its
 * parameters and, for each metric, the median, min and max over the
 * measured iterations, all boots of a side pooled. Metrics with ".cpu" in their name are
 * per-CPU and are left out unless all; runs marked with an "error" (a spec
 * that failed in its stage) are left out and counted. Returns 0, or -1 with
 * err when the bodies do not have the documented shape.
 */
int client_results_print(FILE *out, const json_t *runs, const json_t *metrics,
		  int all, struct strbuf *err);

/*
 * Prints the `tlblab compare` view of a comparison document
 * (schemas/comparison.schema.json): the headline summary, one row per
 * workload x parameters x metric (base and patched centers, with the spread
 * when above 2%, %change, p, CI, verdict; rows that are "same" and counters
 * that moved less than the counter threshold are folded unless all), the
 * thread-sweep tables, the TLB block, the profile diff, provenance, failed
 * runs and notes. Returns 0, or -1 with err when cmp lacks rows or summary.
 */
int client_compare_print(FILE *out, const json_t *cmp, int all, struct strbuf *err);

/*
 * Prints the `tlblab compare --per-patch` view of a per-patch series
 * (GET /api/v1/jobs/ID/per-patch): its jobs, one per prefix, with their
 * verdicts; then per headline row the step each patch made ("+28.5%
 * regression") and which patches moved it; then the notes. Returns 0, or
 * -1 with err when pp is not such a document.
 */
int client_per_patch_print(FILE *out, const json_t *pp, struct strbuf *err);

#endif
