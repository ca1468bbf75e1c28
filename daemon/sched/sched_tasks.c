#include "scheduler.h"
#include "sched_int.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "arch.h"
#include "boot.h"
#include "build.h"
#include "config.h"
#include "guard.h"
#include "log.h"
#include "quiet.h"
#include "run.h"
#include "store.h"
#include "banned.h"

/* ---- waking the scheduler, the agent a task uploads ---- */

void sched_wake(struct sched *sc)
{
	char c = 1;
	ssize_t n = write(sc->wake[1], &c, 1);

	(void)n; /* a full pipe already means "wake up" */
}

const struct sched_agent *sched_agent_for(const struct sched *sc, const char *arch, const char **why)
{
	const struct sched_agent *ag = &sc->agents[arch_index(arch_get(arch))];

	*why = ag->why;
	return ag->sha[0] ? ag : NULL;
}

/* ---- the quiet-host rule (quiet.h) ---- */

/* A note says what a stage waits for; a lost one changes no result. */
/* Does the job's suite ask for the TLB model? Read from the lab's config
 * as the boot starts (a job keeps its suite's workloads, not this). */
static int suite_tlb_model(const struct lab_config *cfg, const char *suite)
{
	const struct cfg_suite *s = config_suite(cfg, suite);

	return s && s->tlb_model;
}

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

/* The next task of the queue, waiting for one; NULL once the scheduler
 * quits with none left. */
static struct task *next_task(struct sched *sc)
{
	struct task *t;

	GUARD_MUTEX(&sc->lock);
	while (!sc->queue && !sc->quit)
		pthread_cond_wait(&sc->cond, &sc->lock);
	if (!sc->queue)
		return NULL;
	t = sc->queue;
	sc->queue = t->next;
	return t;
}

void *sched_worker_main(void *arg)
{
	struct sched *sc = arg;

	for (;;) {
		const struct sched_agent *ag;
		const char *no_agent;
		struct task *t;

		if (!(t = next_task(sc)))
			return NULL;

		if (t->kind == TASK_BUILD) {
			struct build_request req = {
				.st = sc->st, .cfg = t->cfg, .job_id = t->si.job_id, .stage_id = t->si.id,
				.tree = t->tree, .builder = t->builder, .side = t->si.side, .base = t->si.base,
				.arch = t->si.arch,
				.scripts_dir = sc->kernels_dir, .deadline = t->deadline, .cancel = &t->cancel,
				.pause = t->qe.pausable ? &t->qe.pause : NULL,
			};

			build_stage(&req, &t->bout);
			quiet_build_end(sc->quiet, &t->qe);
		} else if (!(ag = sched_agent_for(sc, t->machine->arch, &no_agent))) {
			/* nothing to run on this machine: its arch's agent is missing */
			t->brout.boot = BOOT_INFRA;
			strbuf_addf(&t->brout.boot_message, "boot: %s", no_agent);
			t->out.kind = RUN_INFRA;
			strbuf_addf(&t->out.message, "run: %s", no_agent);
			t->health_ok = 0;
			strbuf_addstr(&t->health_err, no_agent);
		} else if (t->kind == TASK_BOOTRUN) {
			struct bootrun_request req = {
				.st = sc->st, .cfg = t->cfg, .job_id = t->si.job_id, .boot_stage = t->si.id,
				.run_stage = t->run_stage, .machine = t->machine, .side = t->si.side,
				.build_id = t->si.build_id, .workloads = t->si.suite_json,
				.tlb_model = suite_tlb_model(t->cfg, t->si.suite), .cpus = t->si.cpus,
				.agent_local = ag->path, .agent_sha256 = ag->sha,
				.deadline = t->deadline, .cancel = &t->cancel,
				.measure_begin = measure_begin, .measure_end = measure_end, .measure_arg = t,
			};

			boot_and_run(&req, &t->brout);
		} else if (t->kind == TASK_RUN) {
			struct run_request req = {
				.st = sc->st, .job_id = t->si.job_id, .stage_id = t->si.id,
				.machine = t->machine, .workloads = t->si.suite_json,
				.side = t->si.side[0] ? t->si.side : NULL, .deadline = t->deadline,
				.agent_local = ag->path, .agent_sha256 = ag->sha,
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
			t->health_ok = run_health_check(t->machine, ag->path, ag->sha,
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

void sched_enqueue(struct sched *sc, struct task *t)
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

void sched_task_free(struct task *t)
{
	store_stage_info_release(&t->si);
	run_outcome_release(&t->out);
	build_outcome_release(&t->bout);
	bootrun_outcome_release(&t->brout);
	strbuf_release(&t->health_err);
	config_free(t->cfg);
	free(t);
}

/* m points into cfg, of which the task takes a reference. */
struct task *sched_task_new(enum task_kind kind, const struct lab_config *cfg, const struct cfg_machine *m)
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
