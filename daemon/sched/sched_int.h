#ifndef TLBLAB_SCHED_INT_H
#define TLBLAB_SCHED_INT_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "arch.h"
#include "boot.h"
#include "build.h"
#include "quiet.h"
#include "run.h"
#include "store.h"
#include "strbuf.h"

/*
 * What the files of the scheduler share. Not for use outside them (but for
 * tests/unit/test_sched.c, which drives sched_maybe_more_boots): the rest of the
 * daemon sees only scheduler.h.
 *
 * sched_loop.c         the pass loop (sched_run), cancels, dispatch and
 *                 placement, health rechecks, backfill; create and free
 * sched_tasks.c   the worker pool: tasks, their queue, what a worker runs,
 *                 the quiet-host gate around a run's measurement
 * sched_record.c  finished work: each outcome recorded step by step in the
 *                 store, retries, the second look's boots, kept comparisons
 *
 * Everything here is the scheduler thread's, except the queue, done list
 * and running table, which sc->lock guards (the workers touch them too).
 */

struct lab_config;
struct cfg_machine;
struct cfg_suite;
struct cfg_builder;
struct cfg_tree;

/* the running table's size: a task per machine and builder at most (each
 * is leased to one at a time), above lab.workers' 256 with room for the
 * health checks of a lab of several hundred machines */
#define MAX_TASKS 1024

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
	/* tlblab-agent per arch (arch_index): the one machines of that arch get */
	struct sched_agent {
		char path[4096];
		char sha[65];		/* "" when missing: why says why */
		char why[512];
	} agents[ARCH_MAX];
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
	double last_share;	/* share_pass() */
	int64_t backfill_below;	/* backfill() looks below this job id; 0: done */
};

/* ---- sched_tasks.c ---- */

/* A worker thread: takes tasks off sc->queue, runs each and puts it on
 * sc->done, then wakes the scheduler. */
void *sched_worker_main(void *arg);
/* Queues t for the workers and counts it running; t belongs to sc now. */
void sched_enqueue(struct sched *sc, struct task *t);
/* A task of kind on machine m (may be NULL), which points into cfg; the
 * task holds a reference to cfg until sched_task_free. */
struct task *sched_task_new(enum task_kind kind, const struct lab_config *cfg, const struct cfg_machine *m);
void sched_task_free(struct task *t);
/* The agent for machines of arch (a name), or NULL with why set. */
const struct sched_agent *sched_agent_for(const struct sched *sc, const char *arch, const char **why);

/* ---- sched_record.c ---- */

/* Records the outcome of every finished task (those a store error left
 * unrecorded on an earlier pass first) and frees it, or keeps it in
 * sc->unrecorded for the next pass. */
void sched_collect(struct sched *sc);
/* Computes and stores the comparison of job when it is an A/B job that
 * ended (done, or failed on a workload or suite); on a store error
 * backfill() looks again. */
void sched_keep_results(struct sched *sc, int64_t job);
/* After t's run (the stage at t->si.seq + 1) of an A/B job: when it was
 * the last stage and the comparison wants a second look, adds the boots
 * per side up to the job's max_boots. 0 (also when nothing was added), or
 * a negative errno from the store. */
int sched_maybe_more_boots(struct sched *sc, struct task *t);

#endif
