#ifndef TLBLAB_STORE_H
#define TLBLAB_STORE_H

#include <jansson.h>
#include <stdint.h>

#include "strbuf.h"

/*
 * The store, the only module with SQL: an SQLite file (WAL, foreign keys
 * on; store/sqlite/, the embedded default) or a PostgreSQL database
 * (store/postgres/, for labs where several daemons share one store),
 * behind one backend interface (store_backend.h). Each backend's schema
 * migrations (store/BACKEND/schema/NNNN-*.sql, embedded at build time) are
 * applied at open and recorded in schema_migrations; both end at the same
 * version. Every state change is one transaction, so a daemon killed at
 * any point finds a consistent store.
 *
 * Threads: a store is shared by the scheduler, the worker pool and the HTTP
 * threads; each call takes the store's mutex, so calls are serialised and
 * each one is atomic.
 *
 * Return values: 0 on success; a negative errno otherwise (-ENOENT no such
 * row, -EBUSY lost a race, -EALREADY already finished; the store's own
 * errors: -EAGAIN the database is locked by another writer (try again
 * later), -ENOSPC it or its disk is full, -ENOTCONN its server cannot be
 * reached (the store connects again on a later call), -EIO any other
 * error of the database, with its message in err where the function takes
 * one).
 *
 * Transactions: every change of more than one statement is one
 * transaction whose every statement is checked; the first that fails
 * rolls the whole change back, and the function returns its error. A
 * failed call changed nothing, so the caller may simply make it again.
 * Functions returning json_t * return a new reference the caller owns, or
 * NULL with errno set: ENOENT when the row does not exist, or the store's
 * error (EAGAIN, ENOSPC, ENOTCONN, EIO: -errno is what store_strerror and
 * store_failed take) when a read failed part-way. They never return part
 * of the rows: a reader tells "not there" from "could not be read".
 */

struct store;
struct lab_config;

#define STORE_MAX_ATTEMPTS 3

/*
 * Opens (and migrates) the store at `where`: a PostgreSQL URL
 * ("postgresql://USER@HOST/DB?host=/run/postgresql", libpq's form, or
 * "postgres://"), else the path of an SQLite file, made when missing.
 * On failure err names the store (store_describe: never its password)
 * and says why; -ENOTCONN when a server could not be reached or refused
 * the login, else -EIO.
 */
int store_open(const char *where, struct store **ret, struct strbuf *err);
/* The store at `where` as messages name it: the backend and the place,
 * without the password ("postgres: user tlblab, database lab, host
 * /run/postgresql", "sqlite: /var/lib/tlblab/tlblab.db"). */
void store_describe(const char *where, struct strbuf *out);
/* What a store error (a negative errno above) means, for a log or an API
 * answer. A static string. */
const char *store_strerror(int rc);
/* 1 when rc is the store's own failure (-EAGAIN, -ENOSPC, -ENOTCONN,
 * -EIO: the call changed nothing and may be made again later), 0 for an
 * answer (0, -ENOENT, -EBUSY, -EALREADY). */
int store_failed(int rc);

/* The store's own failures, by class, as the fault hook makes them. */
enum store_err {
	STORE_ERR_LOCKED,	/* -EAGAIN */
	STORE_ERR_FULL,		/* -ENOSPC */
	STORE_ERR_IO,		/* -EIO */
	STORE_ERR_DOWN,		/* -ENOTCONN */
	STORE_ERR_MAX
};

/*
 * Fault injection, for tests (compiled in every build; off unless armed).
 * store_fault_after: the n-th statement the store starts from now on
 * (BEGIN and COMMIT count, ROLLBACK never fails) fails with the error of
 * class e, once; n = 0 disarms (and keeps the count of hits).
 * store_fault_match: the next `times` statements whose SQL contains
 * `match` fail so. store_fault_hits: how many statements the hook failed
 * since it was last armed. tlblabd arms store_fault_match from
 * TLBLAB_STORE_FAULT="TIMES:SQL-SUBSTRING" (tlblabd.c, in the tests' build
 * of the daemon only).
 */
/* How long a call waits for another connection's write lock before it
 * fails with -EAGAIN: 10 s from store_open. */
void store_busy_timeout(struct store *st, int ms);
void store_fault_after(struct store *st, long n, enum store_err e);
void store_fault_match(struct store *st, const char *match, int times, enum store_err e);
long store_fault_hits(struct store *st);
void store_close(struct store *st);
/* The schema version after migrations. */
int store_version(struct store *st);
/* A number that changes whenever anything in the store changes: readers
 * may cache what they built from the store while it stays the same. */
int64_t store_generation(struct store *st);

/* Upserts the configured machines (others stay, marked not in config). */
int store_sync_machines(struct store *st, const struct lab_config *cfg, struct strbuf *err);
/* Replaces the configured API tokens (lab.tokens and token_file: role
 * user; lab.admin_tokens: role admin, which a token in both lists gets);
 * only their SHA-256 is stored. Both lists NULL-terminated, may be NULL. */
int store_sync_tokens(struct store *st, char *const *tokens, char *const *admin_tokens, struct strbuf *err);
/* 1 when token's hash is known, 0 when not, or a store error (negative). */
int store_token_valid(struct store *st, const char *token);
/* What token still has in the lab: its jobs queued or running, and the boot
 * stages of those not yet done; a running bisection it asked for counts as
 * one job more, and as the boots of one of its steps (its "boots": the
 * steps run one after another, each a job of the lab's). 0 and both
 * counts, or -1. */
int store_token_work(struct store *st, const char *token, int *ret_jobs, int *ret_boots);

/*
 * Who may change what (api.h): a job, a bisection or an alert records the
 * token that made it (its hash), or none when the lab made it (a track's
 * point, a bisection's step, every alert: the tracker's). A token may
 * cancel or triage what it made; an admin token anything.
 */
enum store_owned { STORE_OWNED_JOB, STORE_OWNED_BISECTION, STORE_OWNED_ALERT, STORE_OWNED_MAX };
enum token_right {
	TOKEN_MADE_IT,		/* token made it: it may change it */
	TOKEN_ADMIN,		/* an admin token, which did not: it may too */
	TOKEN_OTHER,		/* another token made it: it may not */
	TOKEN_LAB,		/* no token did, the lab did: it may not */
	TOKEN_RIGHT_MAX
};
/* What token is to row id of what: an enum token_right, -ENOENT when there
 * is no such row, or a store error. */
int store_token_right(struct store *st, const char *token, enum store_owned what, int64_t id);
/* 1 when token is an admin token, 0 when not (or unknown), or a store
 * error (negative). */
int store_token_admin(struct store *st, const char *token);

/*
 * Daemons that share one store (lab.store: store_daemons.c). A daemon
 * registers at start (its host and pid): the stages it starts from then
 * on are its own. store_daemon_pass, at each of its scheduler's passes,
 * says it is alive, and takes over what daemons silent for more than
 * lease_timeout seconds left running: each such stage is claimed (of two
 * daemons that try, one does), then queued again or failed on its last
 * attempt as store_recover does, its machine released with its health
 * unknown; one line per stage in log. A stage is never started twice and
 * a machine never leased twice: each is claimed in the transaction that
 * changes it, on PostgreSQL by its row's lock (FOR UPDATE SKIP LOCKED: a
 * row another daemon is claiming is busy, not waited for), on SQLite by
 * its single writer (store_stage_start). 0, or the first store error.
 */
int store_daemon_register(struct store *st, const char *host, int pid);
int64_t store_daemon_id(struct store *st);
int store_daemon_pass(struct store *st, double lease_timeout, struct strbuf *log);
/* What need not wait for a lease timeout: the other daemons of host whose
 * pid alive() says is gone (a daemon killed here, started again), and
 * this one as it stops, are marked silent at once. 0 or a store error. */
int store_daemons_gone(struct store *st, const char *host, int (*alive)(int pid));
int store_daemon_retire(struct store *st);
/*
 * The leader of role ("tracker": the tracks and the webhooks, which one
 * daemon of a shared store runs): 1 when this daemon holds it, taking it
 * when its holder has been silent for more than lease_timeout seconds (or
 * is known gone: store_daemons_gone, store_daemon_retire) or none holds
 * it; 0 when another daemon does; -ENOENT for a role the store does not
 * know, or a store error. Of daemons that take it at once, one does. A
 * holder paused past the lease timeout leads until its next call, beside
 * the one that took over (docs/lab-setup.md).
 */
int store_leader_take(struct store *st, const char *role, double lease_timeout);

/*
 * After a restart of a daemon alone on its store: every stage left
 * running was interrupted. It goes back to
 * pending for another attempt (its partial runs and samples are dropped), or
 * fails as infra after STORE_MAX_ATTEMPTS. Every lease is released and the
 * machines that held one become `unknown` (a health check runs before they
 * are used again). Describes what it did in log, one line per stage.
 * 0, or the first store error (the daemon should not start then).
 */
int store_recover(struct store *st, struct strbuf *log);

/* ---- jobs ---- */

struct stage_plan {
	const char *kind;	/* build | boot | run */
	const char *side;	/* base | patched | NULL */
	int boot_index;
	double timeout;
	int cpus;		/* boot and run: the guest's vCPUs (a suite's guest_cpus);
				 * 0: the machine's own */
};

struct job_request {
	const char *kind;	/* "run" or "ab" */
	const char *tree, *base;	/* ab: the tree and the base ref */
	const char *patch_kind;		/* ab: "patch" | "branch" | "url" */
	const char *patch;		/* the patch text (patch) */
	const char *patch_url;		/* branch or url */
	const char *patch_ref;		/* branch */
	const char *patch_subject;	/* what to call the patch (patch.h), or NULL */
	const char *suite;
	const json_t *suite_json;	/* the suite's workloads, snapshotted */
	const json_t *machines;		/* array of names, may be NULL */
	const json_t *tags;		/* array of tags, may be NULL */
	const char *submitter;
	const char *token;		/* the submitting token, its hash recorded with
					 * the job for its limits; NULL: none */
	const char *arch;		/* arch.h's name; NULL: x86_64 */
	const json_t *defaults;		/* the fields taken from the lab's defaults:,
					 * {field: value}, or NULL: none */
	const json_t *patches;		/* an mbox's series, {"cover": SUBJECT|null,
					 * "patches": [SUBJECT...]}, or NULL */
	const json_t *per_patch;	/* a per-patch series' job, {"k", "n",
					 * "series"} ("of" is set when stored), or NULL */
	int boots;
	int max_boots;		/* ab: grow up to this many boots per side while
				 * a headline metric is inconclusive (0: boots) */
};

/* Creates the job, its stages (seq 0..n-1) and its token's hash (req->token)
 * in one transaction: a job is never stored without the token that counts it. */
int store_job_create(struct store *st, const struct job_request *req,
		     const struct stage_plan *stages, size_t nstages, int64_t *ret_id,
		     struct strbuf *err);
/*
 * A job with its stages, and a page of the job list (newest first) with
 * the filter's total. Both read the last commit on a read-only connection
 * of their own, so they do not wait for a change in progress nor for each
 * other; a call that returned before sees its change. The total is kept
 * per filter until the store's generation moves.
 */
json_t *store_job_json(struct store *st, int64_t id);

/*
 * The jobs of a per-patch series, stored as store_job_create stores one,
 * all in one transaction: reqs[i] with its plan plans[i] of nplans[i]
 * stages, ids to ret_ids. Each one's per_patch gets "of": the first's id.
 */
int store_job_group_create(struct store *st, const struct job_request *reqs,
			   struct stage_plan *const *plans, const size_t *nplans, size_t n,
			   int64_t *ret_ids, struct strbuf *err);
/* The jobs of the per-patch series whose first job is `of`, by k: [{"id",
 * "k", "state", "verdict", "patch_subject"}], or NULL with errno. */
json_t *store_per_patch_jobs(struct store *st, int64_t of);

struct job_filter {
	const char *state, *suite, *submitter, *tree, *verdict;
	int limit, offset;
	int redact_urls;	/* for a reader without a token: each job's
				 * URL redacted wherever it shows (util.h) */
};
/* The page as JSON text appended to out ({"jobs":[...],"total":N,"limit":
 * N,"offset":N}, what api_server.c would encode from store_jobs_json), written
 * straight from the rows: 0, or a store error (out then holds a part). */
int store_jobs_text(struct store *st, const struct job_filter *f, struct strbuf *out);
json_t *store_jobs_json(struct store *st, const struct job_filter *f);

/*
 * The stored comparison of a finished job: the document text computed under
 * `rules` (compare_rules_json text). _get returns 1 and the text in
 * ret_doc when one is stored under exactly these rules, else 0. _put stores
 * it and sets the job's verdict, replacing an older one, only for a finished
 * job (a running job's comparison still changes); returns 0, -ENOENT (no such finished job) or a store error.
 */
int store_comparison_get(struct store *st, int64_t job, const char *rules, struct strbuf *ret_doc);
int store_comparison_put(struct store *st, int64_t job, const char *rules, const char *doc,
			 const char *verdict, double compute_ms);
/* The newest done A/B job below id `below` that has no verdict yet (stored
 * before there were verdicts, or not kept on a store error), 0 when none,
 * or a store error. */
int64_t store_job_without_verdict(struct store *st, int64_t below);

/*
 * Asks for a job to be cancelled: a queued job (or one whose stages have not
 * started) is cancelled at once; a running one is flagged and the scheduler
 * stops its stage. -ENOENT, or -EALREADY when it already finished.
 */
int store_job_cancel(struct store *st, int64_t id);
/* Ids of running jobs with a pending cancel request. Caller frees *ret. */
int store_jobs_cancelling(struct store *st, int64_t **ret, size_t *ret_n);

/* ---- stages, for the scheduler ---- */

struct stage_info {
	int64_t id, job_id;
	int seq, attempt, boot_index, boots;
	int cpus;		/* the guest's vCPUs of a sweep (stage_plan), or 0 */
	char kind[8];
	char side[16];
	char suite[72];
	double timeout;
	json_t *suite_json;	/* owned */
	json_t *machines;	/* owned: the job's allowed machines ([] = any) */
	json_t *tags;		/* owned */
	json_t *excluded;	/* owned: machines that failed this stage */
	char last_error[512];	/* why the previous attempt failed, or "" */
	char tree[72];		/* ab jobs */
	char base[256];
	char patch_kind[16];
	char build_id[72];	/* of this stage's side, once built ("" before) */
	char boot_id[40];
	char note[300];		/* what the stage waits for, or "" */
	char arch[16];		/* the job's (arch.h) */
};
void store_stage_info_release(struct stage_info *si);

/* Pending stages that may start now (every earlier stage of their job done,
 * no cancel request), oldest job first. Caller frees with store_stage_infos_free;
 * on a store error *ret is left alone. */
int store_runnable_stages(struct store *st, struct stage_info **ret, size_t *ret_n);
void store_stage_infos_free(struct stage_info *v, size_t n);

/* The pending stage at seq of job (runnable or not: a duet starts the
 * patched boot beside the base one): 1 and *ret filled (release it), 0
 * when that stage is not pending or its job is being cancelled, or a store
 * error. */
int store_stage_pending_at(struct store *st, int64_t job_id, int seq, struct stage_info *ret);

/* How many stages of job other than `except` are pending or running (a
 * duet's other side may still run when a run ends), or a store error. */
int store_job_open_stages(struct store *st, int64_t job_id, int64_t except);

/* Starts two boot stages at once, a on machine ma and b on mb, each
 * machine leased as store_stage_start does, in one transaction, and notes
 * them as each other's duet (the comparison pairs their runs). -EBUSY when
 * a machine is taken or a stage is no longer pending. */
int store_stage_start_duet(struct store *st, int64_t a, const char *ma, int64_t b, const char *mb);

/* Starts a stage that needs no machine (a build on a builder): running,
 * with `where` (e.g. "builder local") in its machine column. */
int store_stage_begin(struct store *st, int64_t stage_id, const char *where);
/* A boot stage that succeeded hands its machine to the run stage after it:
 * boot done, run running on the same machine and by this daemon, the
 * lease moved, in one transaction. -EBUSY when the boot is no longer
 * running on this daemon (store_stage_finish's fence). */
int store_stage_handoff(struct store *st, int64_t boot_stage, int64_t run_stage);
int store_stage_set_ids(struct store *st, int64_t stage_id, const char *build_id, const char *boot_id);
/* The id of the stage of the job after (before) seq; 0 when none, or a
 * store error. */
int64_t store_stage_next(struct store *st, int64_t job_id, int seq);
int64_t store_stage_prev(struct store *st, int64_t job_id, int seq);

/* The job's patch: kind, text (for "patch", or once fetched), URL and ref.
 * Any of the outputs may be NULL. */
int store_job_patch(struct store *st, int64_t job_id, struct strbuf *kind, struct strbuf *text,
		    struct strbuf *url, struct strbuf *ref);
/* Keeps the text fetched from a patch URL with the job: its bytes as they
 * came, UTF-8 or not (a mail of another charset), as SQLite keeps any
 * text; the intake refuses one with a NUL byte (build_stage.c). */
int store_job_set_patch(struct store *st, int64_t job_id, const char *text);
/* Keeps the series a fetched mbox is (store_job's "patches"). */
int store_job_set_patches(struct store *st, int64_t job_id, const json_t *patches);
/* Replaces the job's patch_subject (once a fetched mbox names it). */
int store_job_set_patch_subject(struct store *st, int64_t job_id, const char *subject);

struct build_row {
	const char *id, *tree, *commit_id, *config_hash, *compiler, *path;
	double duration;
	const json_t *meta;
};
int store_build_add(struct store *st, const struct build_row *b);

/* Leases machine for a stage, in one transaction, only if the stage is
 * still pending and not being started by another daemon, and the machine
 * is free (not being leased by another daemon either) and its health is
 * good or unknown. -EBUSY otherwise. Marks the stage running on it and the
 * job running. */
int store_stage_start(struct store *st, int64_t stage_id, const char *machine);
/*
 * A run stage that failed as a workload (run.h): kept, with its runs, log
 * and spec outcomes. In an A/B job its boot is repeated once (a boot and run
 * pair with repeat_of = the failed run's seq, next in the job's order),
 * unless that side already has a failure that repeated; *ret_repeated says
 * whether it was (may be NULL). The stages after it go on. When nothing is
 * left to run the job is settled: a spec whose failure repeated on the base
 * side fails the job as "suite" (broken on this tree, not a result of the
 * patch), one that repeated on the patched side only as "workload"; failures
 * that did not repeat leave the job done. 0, -ENOENT, -EIO.
 */
int store_run_failed(struct store *st, int64_t stage_id, const char *message, int *ret_repeated);
/* The outcome of each spec of a run stage so far (JSON array; run.h). */
int store_stage_set_specs(struct store *st, int64_t stage_id, const json_t *specs);
/* What a stage waits for (NULL clears it), shown with the stage. */
int store_stage_set_note(struct store *st, int64_t stage_id, const char *note);
/*
 * Ends a stage: state done, failed or cancelled; class and message for
 * failures. Releases its machine. Advances the job: done when its last stage
 * is done; failed (with the stage's class and message) when a stage failed;
 * cancelled when cancelled; its remaining stages are cancelled. A fence on
 * a shared store: -EBUSY, and nothing changed, when the stage is running
 * on another daemon (this one was taken over while paused, and the stage
 * started again there). The same for store_run_failed.
 */
int store_stage_finish(struct store *st, int64_t stage_id, const char *state,
		       const char *error_class, const char *message);
/* An infra failure to retry elsewhere: back to pending, attempt + 1,
 * machine excluded, its runs and samples dropped, its machine released.
 * -EALREADY when the attempts are used up (the caller then finishes it).
 * A stage of a job with a cancel request is never queued again: it ends
 * cancelled, and its job with it, and the answer is -ECANCELED. */
int store_stage_retry(struct store *st, int64_t stage_id, const char *machine,
		      const char *message);
/* Fails every pending stage of job with class/message (no machine fits). */
int store_stage_append_log(struct store *st, int64_t stage_id, const char *text);
int store_stage_set_host(struct store *st, int64_t stage_id, const json_t *hello);
/* Appends the stage's log to out. 0, -ENOENT (no such stage in the job),
 * or a store error. */
int store_stage_log(struct store *st, int64_t job_id, int64_t stage_id, struct strbuf *out);

/* ---- machines ---- */

int store_machine_health(struct store *st, const char *name, const char *health,
			 const char *reason);
/* The kernel a machine runs (NULL or "" keeps the known one) and, when
 * booted > 0, the time (epoch seconds) it booted it. */
int store_machine_kernel(struct store *st, const char *name, const char *kernel, double booted);
/* Health of a machine into buf ("good", ...); -ENOENT if unknown. */
int store_machine_get_health(struct store *st, const char *name, char *buf, size_t len);
int store_failure_add(struct store *st, const char *machine, int64_t job, int64_t stage,
		      const char *cls, const char *message);
json_t *store_machines_json(struct store *st);
json_t *store_health_json(struct store *st);

/* ---- results ---- */

struct run_row {
	int64_t job_id, stage_id;
	const char *machine, *side, *build_id, *boot_id;
	int spec_index, case_index, iteration, warmup;
	const char *workload;
	const json_t *params;
	double duration;
};

/* Stores one iteration: the run, its metrics (name -> number), their units
 * and directions (info), and its profile (may be NULL), in one transaction. */
int store_run_add(struct store *st, const struct run_row *r, const json_t *metrics,
		  const json_t *info, const json_t *profile, int64_t *ret_id);
/* Adds metrics (and their info) to the stored iteration of a stage's spec,
 * case, iteration number and warm-up flag (-ENOENT when there is none): rows computed
 * after the iteration was stored, such as the instruction counts per
 * operation that the run stage reads from the QEMU plugin once the spec
 * ends. One transaction. */
int store_run_add_metrics(struct store *st, int64_t stage_id, int spec_index, int case_index, int iteration,
			  int warmup, const json_t *metrics, const json_t *info);
int store_sample_add(struct store *st, int64_t stage_id, int spec_index, const json_t *sample);
int store_unavailable_add(struct store *st, int64_t stage_id, const json_t *unavailable);

/* {"runs": [...]} of a job; a run of a spec that failed in its stage
 * carries "error" (the spec's message): what it measured is kept, but it
 * is no sample of its side. */
json_t *store_runs_json(struct store *st, int64_t job_id);
/* One side document for compare_sides (compare.h): the job's runs (as
 * store_runs_json: those of a failed spec carry "error"), metrics (warm-ups
 * included: the comparison drops them), profiles, provenance (the job and
 * its builds) and "unavailable_by_side" (side -> counter -> the reason its
 * kernel lacks it), and "design" ({"boots": the first look's, "max_boots",
 * "look": 1, or 2 once boots were added}). NULL when the job does not exist. */
json_t *store_compare_doc(struct store *st, int64_t job_id);
/*
 * Adds `more` boots per side to an A/B job (boot and run stages, base and
 * patched interleaved, after its last stage) when its boots stay within
 * max_boots. Returns how many boots per side were added (0 when at the
 * maximum), or a negative errno.
 */
int store_job_add_boots(struct store *st, int64_t job_id, int more, double boot_timeout,
			double run_timeout);

/* {"profiles": [{"run", "profile"}]} of a job's measured runs. */
json_t *store_profiles_json(struct store *st, int64_t job_id);
/* {"builds": [...]} of the builds a job's stages made or used: id,
 * commit, config hash, compiler, duration and the build's metadata. */
json_t *store_job_builds_json(struct store *st, int64_t job_id);
json_t *store_metrics_json(struct store *st, int64_t job_id, const char *prefix, int include_warmup);
/* One page of a job's per-second samples (of one stage unless stage_id is
 * 0, of one counter unless name is NULL), in the order they were stored:
 * the first `limit` (>= 1) whose id is above `after` (0: from the start).
 * {"samples": [..], "next": the `after` of the next page, or null after the
 * last}. The store is locked while the rows are read, not while their JSON
 * is built. */
json_t *store_samples_json(struct store *st, int64_t job_id, int64_t stage_id, const char *name,
			   int64_t after, int limit);

/* ---- nightly tracks (store_tracks.c; schema 0009-tracks.sql) ---- */

/* Every track of cfg gets its row (others stay, marked not in config). */
int store_tracks_sync(struct store *st, const struct lab_config *cfg);
/* The next due time kept for a track, 0 when none (a new track), into
 * *ret_due; -ENOENT when the track has no row. */
int store_track_next_due(struct store *st, const char *track, double *ret_due);
int store_track_set_next_due(struct store *st, const char *track, double due);
/* What a run of the track found: the head and a line saying what it did. */
int store_track_ran(struct store *st, const char *track, const char *head, const char *result);

/* A commit a track measures, with the facts git gave about it. */
struct point_commit {
	const char *track, *commit;
	double time;		/* committer date, epoch seconds (0: unknown) */
	const char *author, *subject;
};
/*
 * Creates the point of c on machine: its run job (req, plan as
 * store_job_create takes them) and the point row, in one transaction.
 * -EEXIST when the track already has that commit on that machine.
 */
int store_point_create(struct store *st, const struct point_commit *c, const char *machine,
		       const struct job_request *req, const struct stage_plan *plan, size_t nplan,
		       int64_t *ret_job, struct strbuf *err);
/*
 * A point's job ended: the point gets its state ("done" or "failed"), and,
 * when values is an array (compare_point_values of the job), each value
 * its series (made on first sight) and its row of series_values, all in
 * one transaction. *ret_track (when not NULL) gets the point's track.
 * -ENOENT when the job is no point's.
 */
int store_point_finish(struct store *st, int64_t job_id, const char *state, const json_t *values,
		       char *ret_track, size_t track_len);
/* The ids of a track's series into *ret (caller frees). */
int store_track_series(struct store *st, const char *track, int64_t **ret, size_t *ret_n);

/* A series in the order its points were made, from the track's baseline
 * point on: values, their point ids, and the series' facts. */
struct series_data {
	int64_t id;
	char track[72], machine[72], workload[72], metric[160], direction[16];
	char *params;		/* canonical JSON (owned) */
	size_t n;
	double *values;		/* owned */
	int64_t *points;	/* owned */
	int64_t *jobs;		/* owned: each point's job (0 when gone) */
	char (*commits)[41];	/* owned */
};
int store_series_data(struct store *st, int64_t series_id, struct series_data *ret);
void store_series_data_release(struct series_data *d);

/* A change point found (or seen again) in a series at point_id: inserted,
 * or its status, p, levels and magnitude updated; a rejected one stays
 * rejected. *ret_id gets its id, *ret_confirmed_now (when not NULL) 1 when
 * it is confirmed by this call (was new or provisional). */
struct change_point_row {
	int64_t series_id, point_id;
	const char *status;	/* provisional | confirmed | rejected */
	double p, before, after, magnitude;
	const char *direction;	/* regression | improvement | neutral */
};
int store_change_point_put(struct store *st, const struct change_point_row *c, int64_t *ret_id,
			   int *ret_confirmed_now);
/* The A/B rule's word on a change point (its raw runs either side) and p. */
int store_change_point_checked(struct store *st, int64_t id, const char *verdict, double p,
			       const char *status);
/* The change points of a series no longer found are dropped, unless
 * confirmed: keep_points[0..n) are the points still found. */
int store_change_points_prune(struct store *st, int64_t series_id, const int64_t *keep_points,
			      size_t n);
/* The alert of track's commit (made when new, kind regression,
 * improvement, mixed or neutral from its change points), and the change
 * point put under it. *ret_alert, *ret_new (1 when made now). */
int store_alert_attach(struct store *st, const char *track, const char *good_commit,
		       const char *bad_commit, int64_t change_point, int64_t *ret_alert, int *ret_new);
/* Triage: new, acknowledged, ignored, fixed or intended, by whom. An
 * intended change moves the track's baseline to the alert's first point.
 * -ENOENT, -EINVAL (not a state). */
int store_alert_set_state(struct store *st, int64_t alert, const char *state, const char *by);

/* Reads for the API: {"tracks": [...]}, {"points": [...], "total"} of a
 * track (newest first, a page), {"series": [...]} of a track, one series
 * with its values and change points, {"alerts": [...], "total"} (a page,
 * newest first, of one track unless NULL), one alert with its change
 * points. NULL with errno (ENOENT for a missing one). */
json_t *store_tracks_json(struct store *st);
json_t *store_points_json(struct store *st, const char *track, int limit, int offset);
json_t *store_series_list_json(struct store *st, const char *track);
json_t *store_series_json(struct store *st, int64_t series_id);
json_t *store_alerts_json(struct store *st, const char *track, int limit, int offset);
json_t *store_alert_json(struct store *st, int64_t alert);

/* Points whose job ended but that are still queued: [{"job", "state"}]
 * (the job's state), oldest first, at most max. */
json_t *store_points_ended(struct store *st, int max);
/* Finished jobs the webhooks were not told of yet, oldest first, at most
 * max: their ids into *ret (caller frees); and marking one told. */
int store_jobs_to_notify(struct store *st, int max, int64_t **ret, size_t *ret_n);
int store_job_notified(struct store *st, int64_t job);
/* Every finished job told at once (no webhook wants them). */
int store_jobs_notified_all(struct store *st);

/* ---- webhook deliveries (store_tracks.c) ---- */

/* A delivery to make: its body, to the hook's URL, first attempt now. */
int store_delivery_add(struct store *st, const char *hook, const char *event, const char *url,
		       const char *body, int64_t *ret_id);
/* The pending deliveries due at `now`, oldest first, at most max, as
 * {"id", "hook", "event", "url", "body", "attempts"} objects. */
json_t *store_deliveries_due(struct store *st, double now, int max);
/* An attempt's outcome: delivered, or failed with its status and error and
 * the next attempt at next_attempt (0: no more, the delivery failed). */
int store_delivery_attempt(struct store *st, int64_t id, int delivered, long http,
			   const char *error, double next_attempt);
/* {"deliveries": [...], "total"}, newest first, a page. */
json_t *store_deliveries_json(struct store *st, int limit, int offset);

/* ---- bisections (store_bisect.c; schema 0009-tracks.sql, 0010) ---- */

/* What a bisection looks for: the first commit after good up to bad
 * whose metric is like bad's, on one machine, with a suite. */
struct bisection_request {
	int64_t alert;		/* the alert it explains, 0: none */
	const char *track;	/* the track that found it, NULL: by hand */
	const char *tree, *good, *bad, *suite, *machine, *metric;
	const char *workload;	/* NULL: the row of metric that moved most */
	const char *params;	/* its case parameters (canonical JSON), or NULL */
	int boots;		/* per step */
	const char *submitter;
	const char *token;	/* that asked for it, its hash recorded (its
				 * limits, who may cancel it); NULL: the lab's */
};
/*
 * Creates a bisection (state running), with the jobs that measured its
 * ends already (points' jobs, whose commits the points give) as its good
 * and its bad steps. -EEXIST when the alert has one already; -ENOENT when
 * a job is no point's.
 */
int store_bisection_create(struct store *st, const struct bisection_request *b, const int64_t *good_jobs,
			   size_t ngood, const int64_t *bad_jobs, size_t nbad, int64_t *ret_id,
			   struct strbuf *err);
/* The ids of the running bisections, oldest first (caller frees). */
int store_bisections_running(struct store *st, int64_t **ret, size_t *ret_n);
/* One bisection with its steps, oldest first, each with its job's state,
 * boots, times and error ("error_stage" is the failed stage's kind); and
 * a page of them, newest first, of one alert unless 0. NULL with errno
 * (ENOENT for a missing one). */
json_t *store_bisection_json(struct store *st, int64_t id);
json_t *store_bisections_json(struct store *st, int64_t alert, int limit, int offset);
/* The commits after good up to bad, oldest first: [{"commit", "time",
 * "subject"}]. */
int store_bisection_set_commits(struct store *st, int64_t id, const json_t *commits);
/* The row the bisection chases (workload, parameters) and the change its
 * ends show there ("regression", "improvement" or "changed"). */
int store_bisection_set_row(struct store *st, int64_t id, const char *workload, const char *params,
			    const char *change);
/* What it does now, the steps left (-1: unknown) and their time (NAN). */
int store_bisection_progress(struct store *st, int64_t id, const char *status, int steps_left, double eta_s);
/* A step of role "good", "bad" (more boots of an end) or "step" (a commit
 * in between): its run job (req, plan as store_job_create takes them) and
 * its row, in one transaction. */
int store_bisection_step_add(struct store *st, int64_t id, const char *commit, const char *role,
			     const struct job_request *req, const struct stage_plan *plan, size_t nplan,
			     int64_t *ret_job, struct strbuf *err);
/* A step's outcome (good, bad, skip, inconclusive) and its evidence. */
int store_bisection_step_done(struct store *st, int64_t step, const char *outcome, const json_t *evidence);
/* The end: state done or failed, the first bad commit (NULL: none found)
 * and what it found in words. Only a running bisection ends. */
int store_bisection_finish(struct store *st, int64_t id, const char *state, const char *first_bad,
			   const char *result);
/* Cancels a running bisection and its steps' jobs. -ENOENT, -EALREADY
 * (it has ended). */
int store_bisection_cancel(struct store *st, int64_t id);

#endif
