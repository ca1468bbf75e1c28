#include "scheduler.h"
#include "sched_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "boot.h"
#include "build.h"
#include "compare.h"
#include "config.h"
#include "jsonget.h"
#include "log.h"
#include "comparison_cache.h"
#include "run.h"
#include "store.h"
#include "verdict.h"
#include "banned.h"

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
int sched_maybe_more_boots(struct sched *sc, struct task *t)
{
	const struct cfg_suite *suite;
	struct compare_rules rules;
	struct strbuf err = STRBUF_INIT;
	json_t *doc, *cmp;
	/* the last run to end looks: in a duet the other side's may end later */
	int open = store_job_open_stages(sc->st, t->si.job_id, t->run_stage);
	int added = 0;

	if (open)
		return open < 0 ? open : 0;
	doc = store_compare_doc(sc->st, t->si.job_id);
	if (!doc)
		return errno == ENOENT ? -EIO : -errno;	/* a store error: the step is made again */
	suite = config_suite(sc->cfg, t->si.suite);
	compare_rules_default(&rules);
	cmp = compare_sides(doc, "base", doc, "patched", suite ? &suite->rules : &rules, &err);
	if (cmp && verdict_wants_more_boots(cmp)) {
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
void sched_keep_results(struct sched *sc, int64_t job)
{
	json_t *j = store_job_json(sc->st, job);
	struct strbuf doc = STRBUF_INIT, err = STRBUF_INIT;
	json_t *cmp;

	if (!j && errno != ENOENT) {
		log_warnx("job %lld: store: cannot read it to keep its comparison: %s; will look again",
			  (long long)job, store_strerror(-errno));
		sc->backfill_below = INT64_MAX;
	}

	const char *state = jsonget_str(j, "state") ?: "";
	const char *cls = jsonget_str(json_object_get(j, "error"), "class") ?: "";

	/* a job that failed on a spec still compares the specs that ran */
	if (j && !strcmp(jsonget_str(j, "kind") ?: "", "ab") &&
	    (!strcmp(state, "done") || (!strcmp(state, "failed") && (!strcmp(cls, "workload") ||
								   !strcmp(cls, "suite"))))) {
		int r = comparison_cache_get(sc->st, sc->cfg, job, &doc, &err);

		if (store_failed(r))
			/* its verdict is not stored: backfill() looks again */
			sc->backfill_below = INT64_MAX;
		if (r < 0) {
			log_warnx("job %lld: comparison: %s", (long long)job, err.buf);
		} else if (!strcmp(state, "done")) {
			cmp = json_loadb(doc.buf, doc.len, 0, NULL);
			log_info("job %lld: done: %s", (long long)job, jsonget_str(cmp, "verdict") ?: "?");
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
	if (j && strcmp(jsonget_str(j, "state") ?: "", "running")) {
		const char *cls = jsonget_str(json_object_get(j, "error"), "class");

		if (cls)
			log_info("job %lld: failed (%s): %s", (long long)job, cls,
				 jsonget_str(json_object_get(j, "error"), "message") ?: "");
		sched_keep_results(sc, job);
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
		    RECORD(t, 2, sched_maybe_more_boots(sc, t)) < 0 ||
		    RECORD(t, 3, store_stage_finish(sc->st, run, "done", NULL, NULL)) < 0)
			return -1;
		log_info("job %lld: boot+run %s #%d on %s: done", (long long)job, t->si.side, t->si.boot_index, m);
		sched_keep_results(sc, job);
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

void sched_collect(struct sched *sc)
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
		sched_task_free(t);
	}
}
