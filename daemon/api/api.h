#ifndef TLBLAB_API_H
#define TLBLAB_API_H

#include <jansson.h>
#include <stddef.h>

#include "strbuf.h"

/*
 * The HTTP API of tlblabd (libmicrohttpd, JSON through jansson), under
 * /api/v1/. Every response body is JSON (except the plain-text log and
 * report). Errors
 * are {"error": {"code": "bad_request", "message": "workers: ..."}} with the
 * HTTP status that fits: 400 bad_request, 401 unauthorized (missing or wrong
 * token), 403 forbidden (a token changing what it may not), 404 not_found,
 * 405 method_not_allowed, 409 conflict, 413 too_large (body over
 * lab.max_body), 414 uri_too_long (more than 64 query arguments), 429
 * too_many_requests (a token's queued work over lab.max_jobs_per_token or
 * lab.max_boots_per_token), 500 internal, 503 unavailable. Creating and
 * cancelling need "Authorization: Bearer TOKEN"; reads are open unless
 * lab.read_requires_token. A POST without a valid token is answered 401
 * from its headers, its body unread. One address holds at most
 * lab.max_connections_per_address connections (more are closed at once),
 * and a request whose headers take longer than lab.header_timeout is
 * closed without an answer.
 *
 * Tokens own their work: a job or a bisection records the token that made
 * it (its hash), and only that token or an admin token (lab.admin_tokens,
 * admin_token_file) may cancel it; what the lab made (a track's points'
 * jobs, a bisection's steps, the tracker's bisections, every alert, every
 * machine) is the admin tokens' alone to cancel, triage or take out. A
 * refusal is 403 forbidden saying who made it and what the change needs
 * ("job 12 was submitted by another token; cancel needs that token or an
 * admin token"), and changes nothing.
 *
 * A reader without a valid token sees the URLs that may hold a secret
 * redacted to their scheme and host ("https://host/(redacted)", util.h
 * util_url_redact) wherever they show: a job's branch or mbox URL (patch_url,
 * its patch_subject, error messages, its stage logs, its report), a
 * webhook's URL (deliveries: url, errors, and a job in an event's body),
 * a track's tree URL. With a token, all of them.
 *
 *   GET  /api/v1/health
 *        {"status": "ok", "version": TLBLAB_VERSION (lib/version.h), "jobs": {"queued": N, "running": N},
 *         "machines": {"good": N, "unknown": N, "bad": N, "maintenance": N}}
 *   GET  /api/v1/suites    {"suites": [{"name", "timeout", "workloads": [SPEC..],
 *          "rules": {..} (the comparison's "rules")}]}
 *   GET  /api/v1/trees     {"trees": [{"name", "builder", "config_base"}]}
 *   GET  /api/v1/machines
 *        {"machines": [{"name", "transport", "host", "boot", "arch", "cpus",
 *          "tags": [..], "health": "good|unknown|bad|maintenance",
 *          "health_reason", "leased_by": JOB|null, "kernel", "last_boot",
 *          "recent_failures": [{"job", "stage", "class", "message", "at"}]}]}
 *   POST /api/v1/machines/NAME/health   body {"health": "maintenance"|"unknown",
 *        "reason": "..."}: take a machine out, or put it back (a health
 *        check runs before its next job); needs an admin token
 *   GET  /api/v1/jobs?state=S&suite=S&submitter=S&tree=S&verdict=V&limit=N&offset=N
 *        {"jobs": [JOB...], "total": N, "limit": N, "offset": N}
 *        newest first; limit default 50, at most 500
 *   POST /api/v1/jobs            body: JOB_REQUEST  -> 201 {"job": JOB}; 429 when
 *        the token already has lab.max_jobs_per_token jobs queued or running
 *        (a running bisection of its counts as one), or the job's boots would
 *        take its boots still to run past lab.max_boots_per_token; 400 when
 *        its branch or mbox URL names a host the lab may not fetch from
 *        (fetch.h: checked again when its build starts)
 *   GET  /api/v1/jobs/ID         {"job": JOB}  (JOB with "stages")
 *   POST /api/v1/jobs/ID/cancel  -> 200 {"job": JOB}; 403 for a token that did
 *        not submit it (an admin token may); 409 when already finished
 *   GET  /api/v1/jobs/ID/runs    {"runs": [{"id", "stage", "machine", "side",
 *          "spec", "case", "iteration", "warmup", "workload", "params": {..},
 *          "duration_s", "build_id", "boot_id", "error": null, or the message
 *          of its spec's failure in that stage (kept, but not a sample)}]}
 *   GET  /api/v1/jobs/ID/metrics?name=PREFIX&include_warmup=1
 *        {"metrics": [{"run", "name", "value", "unit", "direction"}]}
 *        (measured iterations only unless include_warmup)
 *   GET  /api/v1/jobs/ID/samples?stage=SID&name=NAME&limit=N&after=CURSOR
 *        {"samples": [{"stage", "t", "dt", "spec", "case", "iteration",
 *          "warmup", "window", "values": {NAME: delta}}], "next": CURSOR|null}
 *        in pages of limit samples (default and most 5000), in the order
 *        they were stored; the next page is ?after= the "next" of this one,
 *        null on the last
 *   GET  /api/v1/jobs/ID/stages/SID/log?tail=N   text/plain, the stage's log
 *        (its last N lines with tail)
 *   GET  /api/v1/jobs/ID/profiles          {"profiles": [{"run", "profile"}]}
 *   GET  /api/v1/jobs/ID/comparison        {"comparison": ...} base vs patched of an
 *        A/B job (schemas/comparison.schema.json) under its suite's rules;
 *        computed when the job ends and kept (comparison_cache.h), with its own
 *        one-word "verdict"; 409 for other jobs
 *   GET  /api/v1/jobs/ID/report.txt        text/plain; charset=utf-8: the report of
 *        a finished A/B job, to paste into a mail (report.h: 72 columns; the
 *        patch and its base, machines and kernels, the headline metrics, the
 *        other metrics that moved, TLB counters, profile, what failed, how to
 *        reproduce), made from its comparison; 409 for other jobs and for one
 *        still queued or running
 *   GET  /api/v1/jobs/ID/per-patch         {"per_patch": ...} of the per-patch
 *        series job ID belongs to (comparison_cache.h: per headline row, each
 *        prefix against the base and each patch's step, "moved_by"); 409 for
 *        other jobs
 *   GET  /api/v1/compare?base=A&patched=B  {"comparison": ...} of two jobs that
 *        ran the same suite
 * Nightly tracking (track.h, store.h):
 *   GET  /api/v1/tracks    {"tracks": [{"name", "in_config", "next_due", "last_run",
 *          "last_head", "last_result", "baseline_point", "points", "alerts_open",
 *          "config": {"tree", "branch", "url", "schedule", "suite", "machines",
 *          "boots", "bisect", "detect": {..}}}]}
 *   POST /api/v1/tracks/NAME/run     -> 202: the tracker runs it now; needs a token
 *   GET  /api/v1/tracks/NAME/points?limit=N&offset=N  {"points": [{"id", "commit",
 *          "commit_time", "subject", "author", "machine", "job", "state"}], "total"}
 *   GET  /api/v1/tracks/NAME/series  {"series": [{"id", "machine", "workload",
 *          "params", "metric", "points", "change_points"}]}
 *   GET  /api/v1/series/ID   {"id", ..., "unit", "direction", "values": [{"point",
 *          "commit", "commit_time", "subject", "job", "value", "lo", "hi",
 *          "boots"}], "change_points": [{"id", "point", "commit", "alert",
 *          "status", "p", "before", "after", "magnitude", "direction"}]}
 *   GET  /api/v1/alerts?track=NAME&limit=N&offset=N  {"alerts": [{"id", "track",
 *          "good_commit", "bad_commit", "subject", "kind", "state", "state_by",
 *          "state_at", "created", "change_points": N}], "total"}
 *   GET  /api/v1/alerts/ID   the alert with its "change_points" (and their series)
 *   POST /api/v1/alerts/ID/state  body {"state": "new|acknowledged|ignored|fixed|
 *          intended", "by": NAME}; intended moves the track's baseline; needs an
 *          admin token (the tracker makes every alert)
 *   POST /api/v1/bisections  body {"tree", "good", "bad", "suite", "metric",
 *          "machine" (default: the first configured), "workload" (default: the
 *          row of metric that moved most), "boots" (per step, default 2),
 *          "submitter"} -> 201 {"bisection": ..}: the tracker drives it; needs a
 *          token, in whose limits it counts while it runs (one job, with the
 *          boots of one step); 429 past them, or with 8 running already
 *   GET  /api/v1/bisections?alert=ID&limit=N&offset=N  {"bisections": [{"id",
 *          "alert", "track", "tree", "good", "bad", "suite", "machine", "metric",
 *          "workload", "params", "boots", "state", "change", "status",
 *          "steps_left", "eta_s", "first_bad", "result", "steps_measured", ..}],
 *          "total"}, newest first
 *   GET  /api/v1/bisections/ID   the bisection with its "commits" and "steps"
 *          ({"commit", "role", "job", "outcome", "evidence", "job_state", ..})
 *   GET  /api/v1/bisections/ID/report.txt  text/plain: its report (report.h)
 *   POST /api/v1/bisections/ID/cancel  -> 200; 403 for a token that did not ask
 *          for it (an admin token may); 409 when it has ended
 *   GET  /api/v1/deliveries?limit=N&offset=N  {"deliveries": [{"id", "hook",
 *          "event", "url", "state", "attempts", "last_status", "last_error",
 *          "log": [{"at", "status", "error"}], "body"}], "total"}
 *
 * JOB_REQUEST: {"suite": "tlb", "machines": ["m1"], "tags": ["qemu"],
 *   "submitter": "alice", "boots": 1}. "suite" is required and must name a
 *   configured suite; machines and tags restrict where it runs (names must
 *   be configured machines; no shell metacharacters anywhere: names follow
 *   config_valid_name). "arch" ("x86_64", "arm64"; default: the arch of the
 *   first configured machine the job may use) keeps it on machines of that
 *   arch, and its kernels are built for it. Such a job runs the suite on
 *   machines as they are.
 *   With "tree" and "base" but no patch, it is a run of that kernel: built,
 *   booted "boots" times (default 1), the suite run after every boot (what
 *   a nightly point is).
 *   An A/B job adds "tree" (a configured tree), "base" (a git ref) and one of
 *   "patch" (the text of a diff or a format-patch mbox), "branch" ({"url",
 *   "ref"}: the patched side is that branch) or "url" (a raw mbox to fetch):
 *   both kernels are built, then booted "boots" times each (default 5),
 *   base and patched interleaved, and the suite runs after every boot.
 *   When a headline metric is inconclusive at that first look, boots are
 *   added per side once, all up to "max_boots" (default 10 when "boots" is
 *   not given, else "boots"), for a second look; the comparison spends
 *   alpha across the two looks (docs/statistics.md).
 *   "per_patch": true with a "patch" that is an mbox of 2 to 16 patches
 *   queues a per-patch series (submit.h): an A/B job per prefix of the
 *   series, against the base -> 201 {"job": the whole series' job, "jobs":
 *   [each prefix's, in order]}.
 *
 * JOB: {"id": N, "kind": "run", "state": "queued|running|done|failed|cancelled",
 *   "suite", "machines": [..], "tags": [..], "submitter", "created",
 *   "started", "finished" (epoch seconds, null until then), "stage": the
 *   current or last stage's kind, "error": {"class", "message", "stage": the
 *   id of the stage it came from}|null,
 *   "patch_subject": what to call an A/B job's patch (patch.h: its mail's
 *   Subject: without "[PATCH ...]", else the first line of the text before
 *   the diff, else "diff touching FILE"; "branch REF of URL"; a URL until the
 *   mbox is fetched), at most 200 bytes of UTF-8 without control characters;
 *   null for run jobs and jobs stored before it existed, "arch": the job's,
 *   "patches": an mbox's series ({"cover", "patches": [SUBJECT..]}) or null,
 *   "defaults": the fields it took from the lab's defaults: or null,
 *   "per_patch": {"of", "k", "n", "series"} for a per-patch series' job, else null,
 *   "verdict": the comparison's one word once an A/B job is done (regression,
 *   improvement, changed, inconclusive, same, unavailable), else null,
 *   "stages": [{"id", "seq" (from 0, the order they run in), "kind":
 *   "build|boot|run", "side", "state": "pending|running|done|failed|
 *   cancelled", "machine", "attempt" (from 0),
 *   "started", "finished", "error_class", "error_message", "boot_index",
 *   "build_id", "boot_id", "repeat_of": the seq of the failed run this boot
 *   and run repeat, or null, "note": what the stage waits for or what the
 *   quiet-host rule did (builds paused while it measured), or null,
 *   "specs": [{"spec", "workload", "params", "state": "done|failed|
 *   cancelled|not_run", "class": null|"workload"|"infra"|"cancelled",
 *   "message"}] for run stages that started, "host": what the agent's
 *   hello said of the machine of a run stage (kernel_release, machine: its
 *   uname -m, ...) or null]}
 *   A run that fails as a workload does not end the job: it is kept, its
 *   other specs still run, and its boot is repeated once. The job's error
 *   class is then "suite" when a spec's failure repeated on the base side
 *   (the suite is broken on this tree), "workload" when it repeated on the
 *   patched side only; a job failed so still has a comparison of the specs
 *   that ran on both sides (without a verdict).
 */

struct store;
struct sched;
struct lab_config;
struct api;

/* Starts the HTTP server on cfg's listen address. Paths outside /api/ are
 * the dashboard, served from web_dir (web.h; NULL serves none). The api
 * borrows st, sc and tr, the tracker POST /tracks/NAME/run asks (NULL:
 * those answer 404); they must outlive it and takes a reference to cfg;
 * api_set_config takes one to the next after a reload and drops the old,
 * which lives on while a request that began under it runs (config_ref).
 * Returns 0 and *ret, or -1 with err (e.g. the port is taken). */
struct tracker;
int api_start(const struct lab_config *cfg, struct store *st, struct sched *sc, struct tracker *tr,
	      const char *web_dir, struct api **ret, struct strbuf *err);
void api_set_config(struct api *api, const struct lab_config *cfg);
/* Stops the server and frees api (NULL accepted). */
void api_stop(struct api *api);

/*
 * What the API reads from a query and a body, apart from the server (the
 * fuzzers in tests/fuzz/ call these directly; a JOB_REQUEST body is read
 * by submit.h).
 */
struct job_filter;

/* Reads GET /api/v1/jobs's query arguments into f: get(ctx, key) returns an
 * argument's value, NULL when it is absent or empty (f's strings are
 * get's). 0, or -1 with err: the message of the 400 answer. */
int api_job_filter_parse(const char *(*get)(void *ctx, const char *key), void *ctx,
			 struct job_filter *f, struct strbuf *err);

/*
 * The bodies of the other POSTs, buf[0..len), as their routes read them
 * (api_bodies.c; the fuzzers in tests/fuzz/bisect, alert and health call
 * them directly). Each returns 0 with *ret_body, which the caller owns
 * (json_decref) and the strings it returns point into; or -1 with err,
 * the message of the 400 answer, and nothing to free.
 */
struct bisection_request;
/* POST /api/v1/bisections against cfg: every field known, the tree,
 * suite and machine (default: the first) configured ones, good and bad
 * valid refs, metric a metric's name, boots 1 to 20 (default 2). */
int api_bisection_parse(const struct lab_config *cfg, const char *buf, size_t len, json_t **ret_body,
			struct bisection_request *req, struct strbuf *err);
/* POST /api/v1/alerts/ID/state: the state asked (the store says whether
 * it is one) and by whom ("unknown" when the body does not say). */
int api_alert_state_parse(const char *buf, size_t len, json_t **ret_body, const char **ret_state,
			  const char **ret_by, struct strbuf *err);
/* POST /api/v1/machines/NAME/health: maintenance or unknown, and why (at
 * most 500 characters; "set by an operator" when the body does not say). */
int api_health_parse(const char *buf, size_t len, json_t **ret_body, const char **ret_health,
		     const char **ret_reason, struct strbuf *err);

#endif
