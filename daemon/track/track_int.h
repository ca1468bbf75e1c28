#ifndef TLBLAB_TRACK_INT_H
#define TLBLAB_TRACK_INT_H

/*
 * Inside the tracker (track_thread.c, track_bisect.c, track_evidence.c): the
 * thread's state and the pieces both halves use (track_evidence.c). Not for the rest of the daemon.
 */

#include <jansson.h>
#include <pthread.h>
#include <signal.h>

#include "build.h"
#include "notify.h"
#include "strbuf.h"

struct lab_config;
struct cfg_track;
struct series_data;
struct changepoint;

/* The points either side of a change whose runs are its evidence: the
 * A/B check of a change point, and the ends of its bisection. */
#define TRACK_SIDE_POINTS 5

struct tracker {
	pthread_t thread;
	pthread_mutex_t lock;		/* cfg, run_now, woken, stop */
	pthread_cond_t cond;
	int stop, woken;
	const struct lab_config *cfg;	/* a reference */
	json_t *run_now;		/* names asked for */
	json_t *to_search;		/* the thread's: tracks whose series changed, or
					 * all of them after a start or a reload */
	struct store *st;
	struct quiet *quiet;
	char *kernels_dir;
	void (*wake_sched)(void *);
	void *wake_arg;
	volatile sig_atomic_t cancel;	/* set by track_stop: a resolve stops */
	long passes;			/* under lock */
	long cfg_gen;			/* under lock: moves with each configuration */
	long synced_gen;		/* the one whose tracks the store has, +1 */
	int leading;			/* the thread's: 1 leads (store_leader_take),
					 * 0 follows, -1 not yet known */
};

/* Queues body (taken) for every hook that wants event. */
void track_announce(struct tracker *tr, const struct lab_config *cfg, enum notify_event ev, json_t *body);

/* build_resolve of ref (of url when not NULL) in the tree, with the
 * commits after since (NULL: none), waiting while a run measures on the
 * builder's host. */
int track_resolve(struct tracker *tr, const struct lab_config *cfg, const char *tree, const char *url,
		  const char *ref, const char *since, struct build_resolved *r, struct strbuf *err);

/* The runs and metrics of the jobs[from..to) (0: none) as one side
 * document for compare_sides. */
json_t *track_jobs_side(struct tracker *tr, const int64_t *jobs, size_t from, size_t to);

/* The row of a comparison for a workload, its parameters and a metric,
 * or NULL (borrowed). */
const json_t *track_row_of(const json_t *cmp, const char *workload, const json_t *params, const char *metric);

/* One pass over the running bisections (track_bisect.c): each takes its
 * next step, or waits for the one in progress. */
void track_bisect_pass(struct tracker *tr, const struct lab_config *cfg);

/* A confirmed regression of track t (change point cp of series d, under
 * alert) starts a bisection between the points either side of it, unless
 * the alert has one: its ends are the points' jobs already measured. */
void track_bisect_regression(struct tracker *tr, const struct lab_config *cfg, const struct cfg_track *t,
			     const struct series_data *d, const struct changepoint *cp, int64_t alert);

#endif
