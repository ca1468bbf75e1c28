#include "sched.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot.h"
#include "build.h"
#include "compare.h"
#include "config.h"
#include "log.h"
#include "comparison_cache.h"
#include "run.h"
#include "quiet.h"
#include "store.h"
#include "transport.h"
#include "util.h"
#include "banned.h"

#define PASS_INTERVAL_MS 1000
#define RECHECK_INTERVAL 60.0
#define MAX_TASKS 256

enum task_kind {
	TASK_RUN,
	TASK_HEALTH,
	TASK_BUILD,
	TASK_BOOTRUN,
	TASK_KIND_MAX
};

struct task {
	enum task_kind kind;
	struct sched *sc;
	struct stage_info si;
	const struct cfg_machine *machine;	/* points into cfg */
	const struct cfg_suite *suite;
	const struct lab_config *cfg;		/* a reference: alive while the task is */
	const struct cfg_builder *builder;	/* TASK_BUILD */
	const struct cfg_tree *tree;
	int64_t run_stage;			/* TASK_BOOTRUN: the run after the boot */
	struct build_outcome bout;
	struct bootrun_outcome brout;
	double deadline;
	volatile sig_atomic_t cancel;
	/* the quiet-host rule: a build's pause flag, a run's measurement */
	struct quiet_entry qe;
	struct run_outcome out;
	char health_kernel[128];
	int health_ok;
	struct strbuf health_err;
	int recorded;				/* steps of its outcome in the store */
	struct task *next;
};

struct sched {
	struct store *st;
	const struct lab_config *cfg;
	char agent_path[4096];
	char agent_sha[65];
	char kernels_dir[4096];

	int wake[2];
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct quiet *quiet;
	struct task *queue, *done;
	struct task *unrecorded;	/* finished, outcome not yet all stored */
	struct task *running[MAX_TASKS];
	size_t nrunning;
	pthread_t *workers;
	int nworkers, quit;
	double last_recheck;
	int64_t backfill_below;	/* backfill() looks below this job id; 0: done */
};

void sched_wake(struct sched *sc)
{
	char c = 1;
	ssize_t n = write(sc->wake[1], &c, 1);

	(void)n; /* a full pipe already means "wake up" */
}

/* ---- the quiet-host rule (quiet.h) ---- */

/* A note says what a stage waits for; a lost one changes no result. */
static void set_note(struct task *t, int64_t stage, const char *note)
{
	int rc = store_stage_set_note(t->sc->st, stage, note);

	if (rc < 0)
		log_warnx("job %lld: stage %lld: store: its note is not updated: %s", (long long)t->si.job_id,
			  (long long)stage, store_strerror(rc));
}

/* Before a run measures on t's machine; the run stage's note and log say
 * what the gate did. -1 when cancelled or out of time meanwhile. */
static int measure_begin(void *arg, int64_t run_stage)
{
	struct task *t = arg;
	struct sched *sc = t->sc;
	struct strbuf note = STRBUF_INIT;
	int rc;

	if (!t->cfg->quiet_host)
		return 0;
	t->qe.ep = &t->machine->ep;
	snprintf(t->qe.label, sizeof(t->qe.label), "%s (job %lld)", t->machine->name, (long long)t->si.job_id);
	set_note(t, run_stage, "quiet host: waiting for the builds on this host to pause or end");
	rc = quiet_measure_begin(sc->quiet, &t->qe, &t->cancel, t->deadline, &note);
	if (note.len) {
		struct strbuf msg = STRBUF_INIT;

		strbuf_addf(&msg, "quiet host: %s while this run measures", note.buf);
		set_note(t, run_stage, msg.buf);
		strbuf_addch(&msg, '\n');
		run_stage_log(sc->st, t->si.job_id, run_stage, msg.buf);
		log_info("job %lld: %s (%s)", (long long)t->si.job_id, note.buf, t->machine->name);
		strbuf_release(&msg);
	} else {
		set_note(t, run_stage, NULL);
	}
	strbuf_release(&note);
	return rc < 0 ? -1 : 0;
}

static void measure_end(void *arg)
{
	struct task *t = arg;

	if (t->qe.ep)
		quiet_measure_end(t->sc->quiet, &t->qe);
}

static void *worker_main(void *arg)
{
	struct sched *sc = arg;

	for (;;) {
		struct task *t;

		pthread_mutex_lock(&sc->lock);
		while (!sc->queue && !sc->quit)
			pthread_cond_wait(&sc->cond, &sc->lock);
		if (sc->quit && !sc->queue) {
			pthread_mutex_unlock(&sc->lock);
			return NULL;
		}
		t = sc->queue;
		sc->queue = t->next;
		pthread_mutex_unlock(&sc->lock);

		if (t->kind == TASK_BUILD) {
			struct build_request req = {
				.st = sc->st, .cfg = t->cfg, .job_id = t->si.job_id, .stage_id = t->si.id,
				.tree = t->tree, .builder = t->builder, .side = t->si.side, .base = t->si.base,
				.scripts_dir = sc->kernels_dir, .deadline = t->deadline, .cancel = &t->cancel,
				.pause = t->qe.pausable ? &t->qe.pause : NULL,
			};

			build_stage(&req, &t->bout);
			quiet_build_end(sc->quiet, &t->qe);
		} else if (t->kind == TASK_BOOTRUN) {
			struct bootrun_request req = {
				.st = sc->st, .cfg = t->cfg, .job_id = t->si.job_id, .boot_stage = t->si.id,
				.run_stage = t->run_stage, .machine = t->machine, .side = t->si.side,
				.build_id = t->si.build_id, .workloads = t->si.suite_json,
				.agent_local = sc->agent_path, .agent_sha256 = sc->agent_sha,
				.deadline = t->deadline, .cancel = &t->cancel,
				.measure_begin = measure_begin, .measure_end = measure_end, .measure_arg = t,
			};

			boot_and_run(&req, &t->brout);
		} else if (t->kind == TASK_RUN) {
			struct run_request req = {
				.st = sc->st, .job_id = t->si.job_id, .stage_id = t->si.id,
				.machine = t->machine, .workloads = t->si.suite_json,
				.side = t->si.side[0] ? t->si.side : NULL, .deadline = t->deadline,
				.agent_local = sc->agent_path, .agent_sha256 = sc->agent_sha,
				.cancel = &t->cancel,
			};

			if (measure_begin(t, t->si.id) == 0) {
				run_stage(&req, &t->out);
				measure_end(t);
			} else {
				t->out.kind = RUN_CANCELLED;
				strbuf_addstr(&t->out.message, "run: cancelled while waiting for a quiet host");
			}
		} else {
			t->health_ok = run_health_check(t->machine, sc->agent_path, sc->agent_sha,
							t->health_kernel, sizeof(t->health_kernel),
							&t->health_err) == 0;
		}
		pthread_mutex_lock(&sc->lock);
		t->next = sc->done;
		sc->done = t;
		pthread_mutex_unlock(&sc->lock);
		sched_wake(sc);
	}
}

int sched_create(const struct lab_config *cfg, struct store *st, const char *agent_path,
		 const char *kernels_dir, struct sched **ret, struct strbuf *err)
{
	struct sched *sc = calloc(1, sizeof(*sc));
	int i;

	if (!sc)
		abort();
	sc->st = st;
	sc->cfg = cfg;
	sc->backfill_below = INT64_MAX;
	snprintf(sc->agent_path, sizeof(sc->agent_path), "%s", agent_path);
	snprintf(sc->kernels_dir, sizeof(sc->kernels_dir), "%s", kernels_dir);
	if (file_sha256(agent_path, sc->agent_sha, err) < 0) {
		free(sc);
		return -1;
	}
	if (pipe2(sc->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		strbuf_seterr(err, "pipe: %s", strerror(errno));
		free(sc);
		return -1;
	}
	pthread_mutex_init(&sc->lock, NULL);
	pthread_cond_init(&sc->cond, NULL);
	sc->quiet = quiet_new();
	sc->nworkers = cfg->workers > 0 ? cfg->workers : 4;
	sc->workers = calloc((size_t)sc->nworkers, sizeof(pthread_t));
	if (!sc->workers)
		abort();
	for (i = 0; i < sc->nworkers; i++)
		if (pthread_create(&sc->workers[i], NULL, worker_main, sc)) {
			strbuf_seterr(err, "cannot start worker threads");
			sc->nworkers = i;
			sched_free(sc);
			return -1;
		}
	config_ref(cfg);	/* sc->cfg: held until the next one or sched_free */
	*ret = sc;
	return 0;
}

void sched_set_config(struct sched *sc, const struct lab_config *cfg)
{
	const struct lab_config *old = sc->cfg;

	/* running tasks hold their own reference to the one they started with */
	sc->cfg = config_ref(cfg);
	config_free(old);
}

static void enqueue(struct sched *sc, struct task *t)
{
	struct task **p;

	t->sc = sc;
	pthread_mutex_lock(&sc->lock);
	t->next = NULL;
	for (p = &sc->queue; *p; p = &(*p)->next)
		;
	*p = t;
	if (sc->nrunning < MAX_TASKS)
		sc->running[sc->nrunning++] = t;
	pthread_cond_signal(&sc->cond);
	pthread_mutex_unlock(&sc->lock);
}

static void task_free(struct task *t)
{
	stage_info_release(&t->si);
	run_outcome_release(&t->out);
	build_outcome_release(&t->bout);
	bootrun_outcome_release(&t->brout);
	strbuf_release(&t->health_err);
	config_free(t->cfg);
	free(t);
}

/* m points into cfg, of which the task takes a reference. */
static struct task *task_new(enum task_kind kind, const struct lab_config *cfg, const struct cfg_machine *m)
{
	struct task *t = calloc(1, sizeof(*t));

	if (!t)
		abort();
	t->kind = kind;
	t->cfg = config_ref(cfg);
	t->machine = m;
	run_outcome_init(&t->out);
	build_outcome_init(&t->bout);
	bootrun_outcome_init(&t->brout);
	strbuf_init(&t->health_err, 0);
	return t;
}

static int machine_busy_with_health(struct sched *sc, const char *name)
{
	size_t i;

	for (i = 0; i < sc->nrunning; i++)
		if (sc->running[i]->kind == TASK_HEALTH && sc->running[i]->machine &&
		    !strcmp(sc->running[i]->machine->name, name))
			return 1;
	return 0;
}

/* ---- finished work ---- */

/*
 * A finished task's outcome takes a few store calls (machine health, the
 * stage's end, a retry). A call that fails on a store error changed
 * nothing (store.h); the recording stops there, the task waits in
 * sc->unrecorded and is recorded again on the next pass from that call on:
 * t->recorded counts the steps already stored, so none is made twice and
 * no outcome is lost. Answers (-EALREADY and the like) are not failures.
 * RECORD(t, k, call) makes step k (0, 1, ...) unless it is stored already.
 */
static int record_step(struct task *t, int k, int rc, const char *what)
{
	if (store_failed(rc)) {
		log_warnx("job %lld: stage %lld: store: %s: %s; will try again", (long long)t->si.job_id,
			  (long long)t->si.id, what, store_strerror(rc));
		return -1;
	}
	if (rc == -EALREADY)
		return rc;	/* nothing stored: the caller decides */
	if (rc == -ECANCELED) {
		/* a retry refused: the stage ended cancelled (store.h) */
		t->recorded = k + 1;
		return rc;
	}
	if (rc < 0)
		log_warnx("job %lld: stage %lld: %s: %s", (long long)t->si.job_id, (long long)t->si.id, what,
			  store_strerror(rc));
	t->recorded = k + 1;
	return 0;
}
#define RECORD(t, k, call) ((t)->recorded > (k) ? 0 : record_step((t), (k), (call), #call))

static int run_failed(struct sched *sc, struct task *t, int k, int64_t stage, const char *msg);

/* An infra failure: retry on another machine, or fail when out of
 * attempts; steps k and k + 1 of t's recording. */
static int retry_or_fail(struct sched *sc, struct task *t, int k, int64_t stage, const char *machine,
			 const char *msg)
{
	int64_t job = t->si.job_id;
	int rc = RECORD(t, k, store_stage_retry(sc->st, stage, machine, msg));

	if (rc == -EALREADY) {
		if (RECORD(t, k + 1, store_stage_finish(sc->st, stage, "failed", "infra", msg)) < 0)
			return -1;
		log_warnx("job %lld: stage %lld: infra failure, no attempts left: %s", (long long)job,
			  (long long)stage, msg);
	} else if (rc == -ECANCELED) {
		log_info("job %lld: stage %lld: cancelled, not retried: %s", (long long)job, (long long)stage, msg);
	} else if (rc == 0) {
		log_warnx("job %lld: stage %lld: infra failure, will retry: %s", (long long)job, (long long)stage, msg);
	}
	return rc < 0 && rc != -EALREADY && rc != -ECANCELED ? -1 : 0;
}

static int finish_run(struct sched *sc, struct task *t)
{
	const char *m = t->machine->name;
	int64_t stage = t->si.id, job = t->si.job_id;
	const char *msg = t->out.message.buf;

	switch (t->out.kind) {
	case RUN_DONE:
		if (RECORD(t, 0, store_machine_health(sc->st, m, "good", NULL)) < 0 ||
		    RECORD(t, 1, store_machine_kernel(sc->st, m, t->out.kernel, 0)) < 0 ||
		    RECORD(t, 2, store_stage_finish(sc->st, stage, "done", NULL, NULL)) < 0)
			return -1;
		log_info("job %lld: run on %s: done", (long long)job, m);
		return 0;
	case RUN_WORKLOAD:
		/* a result, not the machine's fault */
		if (RECORD(t, 0, store_machine_health(sc->st, m, "good", NULL)) < 0 ||
		    RECORD(t, 1, store_machine_kernel(sc->st, m, t->out.kernel, 0)) < 0)
			return -1;
		return run_failed(sc, t, 2, stage, msg);
	case RUN_CANCELLED:
		if (RECORD(t, 0, store_stage_finish(sc->st, stage, "cancelled", "cancelled", msg)) < 0)
			return -1;
		log_info("job %lld: run on %s: cancelled", (long long)job, m);
		return 0;
	default:
		/* the store failed, not the machine: it stays as it is, and
		 * may take the retry */
		if (t->out.store_error)
			return retry_or_fail(sc, t, 0, stage, NULL, msg);
		if (RECORD(t, 0, store_machine_health(sc->st, m, "bad", msg)) < 0 ||
		    RECORD(t, 1, store_failure_add(sc->st, m, job, stage, "infra", msg)) < 0)
			return -1;
		return retry_or_fail(sc, t, 2, stage, m, msg);
	}
}

static int finish_build(struct sched *sc, struct task *t)
{
	int64_t stage = t->si.id, job = t->si.job_id;
	const char *msg = t->bout.message.buf;
	const char *state = "failed", *cls = NULL;

	switch (t->bout.kind) {
	case BUILD_DONE:
		state = "done";
		msg = NULL;
		break;
	case BUILD_PATCH:
		cls = "patch";
		break;
	case BUILD_FAILED:
		cls = "build";
		break;
	case BUILD_CANCELLED:
		state = cls = "cancelled";
		break;
	default:
		return retry_or_fail(sc, t, 0, stage, NULL, msg);
	}
	if (RECORD(t, 0, store_stage_finish(sc->st, stage, state, cls, msg)) < 0)
		return -1;
	log_info("job %lld: build %s: %s", (long long)job, t->si.side,
		 t->bout.kind == BUILD_DONE ? t->bout.build_id : msg);
	return 0;
}

/*
 * After the last run of an A/B job's first look: when the comparison wants
 * a second look (a headline row inconclusive, and the job allows more
 * boots), add boots per side, all up to max_boots at once, before the job
 * can finish. One more look, not one per added pair: the comparison spends
 * alpha by look (verdict.c), so a look is paid for, not free.
 */
#define MORE_BOOTS 100
static int maybe_more_boots(struct sched *sc, struct task *t)
{
	const struct cfg_suite *suite;
	struct compare_rules rules;
	struct strbuf err = STRBUF_INIT;
	json_t *doc, *cmp;
	int64_t next = store_stage_next(sc->st, t->si.job_id, t->si.seq + 1);
	int added = 0;

	if (next)
		return next < 0 ? (int)next : 0;
	doc = store_compare_doc(sc->st, t->si.job_id);
	if (!doc)
		return errno == ENOENT ? -EIO : -errno;	/* a store error: the step is made again */
	suite = config_suite(sc->cfg, t->si.suite);
	compare_rules_default(&rules);
	cmp = compare_sides(doc, "base", doc, "patched", suite ? &suite->rules : &rules, &err);
	if (cmp && compare_wants_more_boots(cmp)) {
		added = store_job_add_boots(sc->st, t->si.job_id, MORE_BOOTS, 600,
					    suite && suite->timeout > 0 ? suite->timeout : sc->cfg->stage_timeout);
		if (added > 0)
			log_info("job %lld: a headline metric is inconclusive at the first look; "
				 "%d more boot(s) per side for the second", (long long)t->si.job_id, added);
	}
	json_decref(cmp);
	json_decref(doc);
	strbuf_release(&err);
	return added < 0 ? added : 0;
}

/* An A/B job that just finished gets its comparison computed and stored
 * now, so nobody waits for it later. */
static void keep_results(struct sched *sc, int64_t job)
{
	json_t *j = store_job_json(sc->st, job);
	struct strbuf doc = STRBUF_INIT, err = STRBUF_INIT;
	json_t *cmp;

	if (!j && errno != ENOENT) {
		log_warnx("job %lld: store: cannot read it to keep its comparison: %s; will look again",
			  (long long)job, store_strerror(-errno));
		sc->backfill_below = INT64_MAX;
	}

	const char *state = json_string_value(json_object_get(j, "state")) ?: "";
	const char *cls = json_string_value(json_object_get(json_object_get(j, "error"), "class")) ?: "";

	/* a job that failed on a spec still compares the specs that ran */
	if (j && !strcmp(json_string_value(json_object_get(j, "kind")) ?: "", "ab") &&
	    (!strcmp(state, "done") || (!strcmp(state, "failed") && (!strcmp(cls, "workload") ||
								   !strcmp(cls, "suite"))))) {
		int r = results_comparison(sc->st, sc->cfg, job, &doc, &err);

		if (store_failed(r))
			/* its verdict is not stored: backfill() looks again */
			sc->backfill_below = INT64_MAX;
		if (r < 0) {
			log_warnx("job %lld: comparison: %s", (long long)job, err.buf);
		} else if (!strcmp(state, "done")) {
			cmp = json_loadb(doc.buf, doc.len, 0, NULL);
			log_info("job %lld: done: %s", (long long)job, json_string_value(json_object_get(cmp, "verdict")) ?: "?");
			json_decref(cmp);
		} else {
			log_info("job %lld: failed (%s); the specs that ran on both sides are compared",
				 (long long)job, cls);
		}
	}
	json_decref(j);
	strbuf_release(&doc);
	strbuf_release(&err);
}

/* A run that failed as a workload: kept; its boot repeated once (store.h). */
static int run_failed(struct sched *sc, struct task *t, int k, int64_t stage, const char *msg)
{
	int64_t job = t->si.job_id;
	int repeated = 0;
	json_t *j;

	if (RECORD(t, k, store_run_failed(sc->st, stage, msg, &repeated)) < 0)
		return -1;
	log_info("job %lld: run %s on %s failed (workload)%s: %s", (long long)job, t->si.side[0] ? t->si.side : "",
		 t->machine->name, repeated ? "; its boot will be repeated once" : "", msg);
	j = store_job_json(sc->st, job);
	if (!j && errno != ENOENT) {
		/* the job may have ended: backfill() keeps its comparison */
		log_warnx("job %lld: store: cannot read it after its failed run: %s", (long long)job,
			  store_strerror(-errno));
		sc->backfill_below = INT64_MAX;
	}
	if (j && strcmp(json_string_value(json_object_get(j, "state")) ?: "", "running")) {
		const char *cls = json_string_value(json_object_get(json_object_get(j, "error"), "class"));

		if (cls)
			log_info("job %lld: failed (%s): %s", (long long)job, cls,
				 json_string_value(json_object_get(json_object_get(j, "error"), "message")) ?: "");
		keep_results(sc, job);
	}
	json_decref(j);
	return 0;
}

static int finish_bootrun(struct sched *sc, struct task *t)
{
	const char *m = t->machine->name;
	int64_t boot = t->si.id, run = t->run_stage, job = t->si.job_id;
	int ran = t->brout.ran;
	const char *msg = t->brout.boot_message.buf;

	switch (t->brout.boot) {
	case BOOT_KERNEL:
		/* the kernel's fault: a result; the VM host is fine */
		if (RECORD(t, 0, store_machine_health(sc->st, m, "good", NULL)) < 0 ||
		    RECORD(t, 1, store_stage_finish(sc->st, ran ? run : boot, "failed", "boot", msg)) < 0)
			return -1;
		log_info("job %lld: boot %s on %s: %s", (long long)job, t->si.side, m, msg);
		return 0;
	case BOOT_INFRA:
		if (t->brout.store_error) {
			/* the store failed, not the machine (boot.h) */
			if (ran && RECORD(t, 0, store_stage_retry(sc->st, run, NULL, msg)) == -1)
				return -1;
			return retry_or_fail(sc, t, 1, boot, NULL, msg);
		}
		if (RECORD(t, 0, store_machine_health(sc->st, m, "bad", msg)) < 0 ||
		    RECORD(t, 1, store_failure_add(sc->st, m, job, boot, "infra", msg)) < 0 ||
		    (ran && RECORD(t, 2, store_stage_retry(sc->st, run, NULL, msg)) == -1))
			return -1;
		return retry_or_fail(sc, t, 3, boot, m, msg);
	case BOOT_CANCELLED:
		if (RECORD(t, 0, store_stage_finish(sc->st, ran ? run : boot, "cancelled", "cancelled", msg)) < 0)
			return -1;
		log_info("job %lld: boot %s on %s: cancelled", (long long)job, t->si.side, m);
		return 0;
	default:
		break;
	}
	msg = t->brout.run.message.buf;
	/* booted and checked: whatever the run does, the machine booted this */
	if (RECORD(t, 0, store_machine_kernel(sc->st, m, t->brout.run.kernel, t->brout.booted_at)) < 0)
		return -1;
	switch (t->brout.run.kind) {
	case RUN_DONE:
		if (RECORD(t, 1, store_machine_health(sc->st, m, "good", NULL)) < 0 ||
		    RECORD(t, 2, maybe_more_boots(sc, t)) < 0 ||
		    RECORD(t, 3, store_stage_finish(sc->st, run, "done", NULL, NULL)) < 0)
			return -1;
		log_info("job %lld: boot+run %s #%d on %s: done", (long long)job, t->si.side, t->si.boot_index, m);
		keep_results(sc, job);
		return 0;
	case RUN_WORKLOAD:
		if (RECORD(t, 1, store_machine_health(sc->st, m, "good", NULL)) < 0)
			return -1;
		return run_failed(sc, t, 2, run, msg);
	case RUN_CANCELLED:
		return RECORD(t, 1, store_stage_finish(sc->st, run, "cancelled", "cancelled", msg));
	default:
		if (t->brout.run.store_error) {
			/* the store failed, not the machine: boot and run again,
			 * there too */
			if (RECORD(t, 1, store_stage_retry(sc->st, run, NULL, msg)) == -1)
				return -1;
			return retry_or_fail(sc, t, 2, boot, NULL, msg);
		}
		if (RECORD(t, 1, store_machine_health(sc->st, m, "bad", msg)) < 0 ||
		    RECORD(t, 2, store_failure_add(sc->st, m, job, run, "infra", msg)) < 0 ||
		    /* the run needs its boot: both go back to the queue */
		    RECORD(t, 3, store_stage_retry(sc->st, run, NULL, msg)) == -1)
			return -1;
		return retry_or_fail(sc, t, 4, boot, m, msg);
	}
}

/* A task whose job was cancelled while it ran ends as cancelled, whatever
 * the killed work looked like (a failed command, a timeout): never a
 * failure of the kernel or the lab, never a retry. Work that completed
 * before the cancel reached it is kept as it is. */
static void set_message(struct strbuf *sb, const char *msg)
{
	strbuf_reset(sb);
	strbuf_addstr(sb, msg);
}

static void cancelled_outcome(struct task *t)
{
	if (!t->cancel)
		return;
	if (t->kind == TASK_BUILD && t->bout.kind != BUILD_DONE && t->bout.kind != BUILD_CANCELLED) {
		t->bout.kind = BUILD_CANCELLED;
		set_message(&t->bout.message, "build: cancelled");
	} else if (t->kind == TASK_BOOTRUN && t->brout.boot != BOOT_OK && t->brout.boot != BOOT_CANCELLED) {
		t->brout.boot = BOOT_CANCELLED;
		set_message(&t->brout.boot_message, t->brout.ran ? "run: cancelled" : "boot: cancelled");
	} else if (t->kind == TASK_BOOTRUN && t->brout.boot == BOOT_OK && t->brout.run.kind != RUN_DONE &&
		   t->brout.run.kind != RUN_CANCELLED) {
		t->brout.run.kind = RUN_CANCELLED;
		set_message(&t->brout.run.message, "run: cancelled");
	} else if (t->kind == TASK_RUN && t->out.kind != RUN_DONE && t->out.kind != RUN_CANCELLED) {
		t->out.kind = RUN_CANCELLED;
		set_message(&t->out.message, "run: cancelled");
	}
}

static void collect(struct sched *sc)
{
	struct task *t, *next;
	size_t i;

	pthread_mutex_lock(&sc->lock);
	t = sc->done;
	sc->done = NULL;
	for (next = t; next; next = next->next)
		for (i = 0; i < sc->nrunning; i++)
			if (sc->running[i] == next) {
				sc->running[i] = sc->running[--sc->nrunning];
				break;
			}
	pthread_mutex_unlock(&sc->lock);
	/* the outcomes not stored on an earlier pass first, in their order */
	if (sc->unrecorded) {
		struct task **tail = &sc->unrecorded;

		while (*tail)
			tail = &(*tail)->next;
		*tail = t;
		t = sc->unrecorded;
		sc->unrecorded = NULL;
	}
	for (; t; t = next) {
		int rc;

		next = t->next;
		cancelled_outcome(t);
		if (t->kind == TASK_BUILD) {
			rc = finish_build(sc, t);
		} else if (t->kind == TASK_BOOTRUN) {
			rc = finish_bootrun(sc, t);
		} else if (t->kind == TASK_RUN) {
			rc = finish_run(sc, t);
		} else if (t->health_ok) {
			rc = RECORD(t, 0, store_machine_health(sc->st, t->machine->name, "good", NULL)) < 0 ||
			     RECORD(t, 1, store_machine_kernel(sc->st, t->machine->name, t->health_kernel, 0)) < 0 ? -1 : 0;
			if (rc == 0)
				log_info("machine %s: health check passed; good again", t->machine->name);
		} else {
			rc = RECORD(t, 0, store_machine_health(sc->st, t->machine->name, "bad", t->health_err.buf));
		}
		if (rc < 0) {
			/* kept, in order, for the next pass */
			struct task **tail = &sc->unrecorded;

			while (*tail)
				tail = &(*tail)->next;
			t->next = NULL;
			*tail = t;
			continue;
		}
		task_free(t);
	}
}

/* ---- cancels ---- */

/*
 * A cancel reaches every kind of stage a job has running (a build, a boot
 * and its run, a run) through t->cancel, which each stage and the
 * transport's exec look at (transport.h: CANCEL_POLL_MS). Whatever a
 * cancelled task then reports (a killed command reads as a failure, a
 * timeout as infra) is recorded as cancelled: a cancelled stage is never
 * retried. The store refuses a retry of a job being cancelled too
 * (store_stage_retry), for the task that ended just before the flag was
 * set and for the stages a restart finds running.
 */

static void pass_cancels(struct sched *sc)
{
	int64_t *ids;
	size_t n, i, k;

	store_jobs_cancelling(sc->st, &ids, &n);
	pthread_mutex_lock(&sc->lock);
	for (i = 0; i < n; i++)
		for (k = 0; k < sc->nrunning; k++)
			if (sc->running[k]->kind != TASK_HEALTH && sc->running[k]->si.job_id == ids[i])
				sc->running[k]->cancel = 1;
	pthread_mutex_unlock(&sc->lock);
	free(ids);
}

/* ---- dispatch ---- */

static int json_has_string(const json_t *arr, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), s))
			return 1;
	return 0;
}

static int machine_fits(const struct cfg_machine *m, const struct stage_info *si)
{
	size_t i;
	json_t *tag;

	if (json_array_size(si->machines) && !json_has_string(si->machines, m->name))
		return 0;
	json_array_foreach(si->tags, i, tag)
		if (!json_is_string(tag) || !config_machine_has_tag(m, json_string_value(tag)))
			return 0;
	return !json_has_string(si->excluded, m->name);
}

static int builder_busy(struct sched *sc, const char *name)
{
	size_t i;
	int busy = 0;

	pthread_mutex_lock(&sc->lock);
	for (i = 0; i < sc->nrunning; i++)
		if (sc->running[i]->kind == TASK_BUILD && !strcmp(sc->running[i]->builder->name, name))
			busy = 1;
	pthread_mutex_unlock(&sc->lock);
	return busy;
}

/* A stage no machine can take fails as infra; on a store error it stays
 * pending and the next pass decides again. */
static void fail_unplaced(struct sched *sc, const struct stage_info *si, const char *msg)
{
	int r = store_stage_finish(sc->st, si->id, "failed", "infra", msg);

	if (r < 0)
		log_warnx("job %lld: stage %lld: store: %s; will try again: %s", (long long)si->job_id,
			  (long long)si->id, store_strerror(r), msg);
	else
		log_warnx("job %lld: %s", (long long)si->job_id, msg);
}

/* Builds run on the tree's builder, one at a time per builder. */
static void start_build(struct sched *sc, struct stage_info *si)
{
	const struct cfg_tree *tree = config_tree(sc->cfg, si->tree);
	const struct cfg_builder *b = tree ? config_builder(sc->cfg, tree->builder) : NULL;
	struct strbuf note = STRBUF_INIT;
	char where[100];
	struct task *t;

	if (!tree || !b) {
		fail_unplaced(sc, si, "the job's tree or its builder is no longer configured");
		return;
	}
	if (builder_busy(sc, b->name))
		return;
	t = task_new(TASK_BUILD, sc->cfg, NULL);
	t->qe.ep = &b->ep;
	t->qe.pausable = transport_pausable(b->ep.transport);
	snprintf(t->qe.label, sizeof(t->qe.label), "build %s of job %lld on builder %s", si->side,
		 (long long)si->job_id, b->name);
	strbuf_addstr(&note, "quiet host: waits: ");
	if (sc->cfg->quiet_host && quiet_build_begin(sc->quiet, &t->qe, &note) < 0) {
		/* it waits, and says so once */
		if (strcmp(si->note, note.buf)) {
			store_stage_set_note(sc->st, si->id, note.buf);
			log_info("job %lld: build %s waits: %s", (long long)si->job_id, si->side, note.buf);
		}
		task_free(t);
		goto out;
	}
	snprintf(where, sizeof(where), "builder %s", b->name);
	if (store_stage_begin(sc->st, si->id, where) < 0) {
		quiet_build_end(sc->quiet, &t->qe);
		task_free(t);
		goto out;
	}
	if (si->note[0])
		store_stage_set_note(sc->st, si->id, NULL);
	t->tree = tree;
	t->builder = b;
	t->si = *si;
	memset(si, 0, sizeof(*si));
	t->deadline = mono_now() + (t->si.timeout > 0 ? t->si.timeout : sc->cfg->stage_timeout);
	log_info("job %lld: build %s on %s: started%s", (long long)t->si.job_id, t->si.side, b->name,
		 t->qe.pause ? " (paused: a run on this host measures)" : "");
	enqueue(sc, t);
out:
	strbuf_release(&note);
}

static void start_stage(struct sched *sc, struct stage_info *si)
{
	const struct lab_config *cfg = sc->cfg;
	const struct cfg_suite *suite = config_suite(cfg, si->suite);
	struct strbuf why = STRBUF_INIT;
	size_t i, fits = 0, healthy = 0;
	int64_t run_stage = 0;
	int pass, r;

	if (!strcmp(si->kind, "build")) {
		start_build(sc, si);
		return;
	}
	if (!strcmp(si->kind, "run") && si->side[0]) {
		/* a run of an A/B job needs its boot: after a restart, boot again */
		int64_t boot = store_stage_prev(sc->st, si->job_id, si->seq);

		if (boot > 0 && store_failed(store_stage_retry(sc->st, boot, NULL,
							       "its run was interrupted; booting again")))
			log_warnx("job %lld: stage %lld: store error; its boot is queued again on a later pass",
				  (long long)si->job_id, (long long)si->id);
		return;
	}
	/* good machines first, then unknown ones (the run checks them first) */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < cfg->nmachines; i++) {
			const struct cfg_machine *m = &cfg->machines[i];
			char health[16];
			struct task *t;

			if (!machine_fits(m, si))
				continue;
			/* boots need a machine that can boot a kernel; runs of run
			 * jobs take the machine as it is */
			if (!strcmp(si->kind, "boot") ? !boot_lookup(m->boot) : 0)
				continue;
			if (pass == 0)
				fits++;
			if (store_machine_get_health(sc->st, m->name, health, sizeof(health)) < 0)
				continue;
			if (pass == 0 && (!strcmp(health, "good") || !strcmp(health, "unknown")))
				healthy++;
			if (pass == 0 && strcmp(health, "good")) {
				if (strcmp(health, "unknown"))
					strbuf_addf(&why, "%s%s is %s", why.len ? ", " : "", m->name, health);
				continue;
			}
			if (pass == 1 && strcmp(health, "unknown"))
				continue;
			if (machine_busy_with_health(sc, m->name))
				continue;
			/* a store error leaves the stage pending for the next pass */
			if (!strcmp(si->kind, "boot") && (run_stage = store_stage_next(sc->st, si->job_id, si->seq)) <= 0)
				goto out;
			if ((r = store_stage_start(sc->st, si->id, m->name)) < 0) {
				if (store_failed(r))
					goto out;
				continue;
			}
			t = task_new(strcmp(si->kind, "boot") ? TASK_RUN : TASK_BOOTRUN, cfg, m);
			t->run_stage = run_stage;
			t->si = *si;
			memset(si, 0, sizeof(*si));	/* the task owns the JSON now */
			t->suite = suite;
			t->deadline = mono_now() + (t->si.timeout > 0 ? t->si.timeout :
						    suite && suite->timeout > 0 ? suite->timeout : cfg->stage_timeout);
			log_info("job %lld: run on %s: started (attempt %d)", (long long)t->si.job_id, m->name,
				 t->si.attempt + 1);
			enqueue(sc, t);
			goto out;
		}
	}
	if (!fits) {
		struct strbuf msg = STRBUF_INIT;

		if (json_array_size(si->excluded))
			strbuf_addf(&msg, "no machine left to retry on (every fitting machine failed this stage); "
				    "last failure: %s", si->last_error);
		else
			strbuf_addstr(&msg, "no configured machine fits the job's machines and tags");
		fail_unplaced(sc, si, msg.buf);
		strbuf_release(&msg);
	} else if (!healthy) {
		struct strbuf msg = STRBUF_INIT;

		strbuf_addf(&msg, "no healthy machine fits: %s", why.buf);
		fail_unplaced(sc, si, msg.buf);
		strbuf_release(&msg);
	}
	/* otherwise every fitting machine is busy: wait */
out:
	strbuf_release(&why);
}

static void dispatch(struct sched *sc)
{
	struct stage_info *v;
	size_t n, i;

	if (store_runnable_stages(sc->st, &v, &n) < 0)
		return;
	for (i = 0; i < n; i++)
		start_stage(sc, &v[i]);
	stage_infos_free(v, n);
}

/* Bad machines get a health check now and then; one that passes is good. */
static void recheck(struct sched *sc)
{
	json_t *ms, *m;
	size_t i;

	if (mono_now() - sc->last_recheck < RECHECK_INTERVAL)
		return;
	sc->last_recheck = mono_now();
	ms = store_machines_json(sc->st);
	json_array_foreach(json_object_get(ms, "machines"), i, m) {
		const char *name = json_string_value(json_object_get(m, "name"));
		const char *health = json_string_value(json_object_get(m, "health"));
		const struct cfg_machine *cm = name ? config_machine(sc->cfg, name) : NULL;

		if (!cm || !health || strcmp(health, "bad") || !json_is_null(json_object_get(m, "leased_by")) ||
		    machine_busy_with_health(sc, name))
			continue;
		enqueue(sc, task_new(TASK_HEALTH, sc->cfg, cm));
	}
	json_decref(ms);
}

/* Done A/B jobs from before comparisons were kept get theirs, one per
 * pass, newest first, so the job list can filter them by verdict too. */
static void backfill(struct sched *sc)
{
	int64_t id;

	if (sc->backfill_below == 0)
		return;
	id = store_job_without_verdict(sc->st, sc->backfill_below);
	if (id < 0)
		return;			/* a store error: the next pass looks again */
	sc->backfill_below = id;	/* 0: nothing left */
	if (id)
		keep_results(sc, id);
}

int sched_run(struct sched *sc, volatile sig_atomic_t *stop, volatile sig_atomic_t *reload)
{
	sc->last_recheck = mono_now();
	while (!*stop && !*reload) {
		struct pollfd pfd = { .fd = sc->wake[0], .events = POLLIN };
		char buf[256];

		collect(sc);
		pass_cancels(sc);
		dispatch(sc);
		recheck(sc);
		backfill(sc);
		if (poll(&pfd, 1, PASS_INTERVAL_MS) > 0)
			while (read(sc->wake[0], buf, sizeof(buf)) > 0)
				;
	}
	return 0;
}

void sched_free(struct sched *sc)
{
	size_t i;
	int k;

	if (!sc)
		return;
	pthread_mutex_lock(&sc->lock);
	sc->quit = 1;
	/* queued work that never started stays pending in the store */
	while (sc->queue) {
		struct task *t = sc->queue;

		sc->queue = t->next;
		for (i = 0; i < sc->nrunning; i++)
			if (sc->running[i] == t)
				sc->running[i] = sc->running[--sc->nrunning];
		task_free(t);
	}
	for (i = 0; i < sc->nrunning; i++)
		sc->running[i]->cancel = 1;
	pthread_cond_broadcast(&sc->cond);
	pthread_mutex_unlock(&sc->lock);
	for (k = 0; k < sc->nworkers; k++)
		pthread_join(sc->workers[k], NULL);
	while (sc->done) {
		struct task *t = sc->done;

		sc->done = t->next;
		task_free(t);
	}
	/* outcomes never stored: their stages stay running, for store_recover */
	while (sc->unrecorded) {
		struct task *t = sc->unrecorded;

		sc->unrecorded = t->next;
		task_free(t);
	}
	free(sc->workers);
	close(sc->wake[0]);
	close(sc->wake[1]);
	pthread_mutex_destroy(&sc->lock);
	pthread_cond_destroy(&sc->cond);
	quiet_free(sc->quiet);
	config_free(sc->cfg);
	free(sc);
}
