#ifndef TLBLAB_TRACK_H
#define TLBLAB_TRACK_H

#include "strbuf.h"

/*
 * Nightly tracking: a thread of its own that does what nobody submits.
 *
 * - Schedules: each track's next due time is kept in the store, set from
 *   its cron schedule before the run it announces starts, so a restart
 *   neither loses a run that fell due while the daemon was down (it runs
 *   once at start) nor doubles one.
 * - A run asks the builder what the branch names now (build_resolve); a
 *   head already measured on a machine is skipped and logged, a new one
 *   gets a point and its run job per machine (build, boots, runs), which
 *   the scheduler runs like any job.
 * - A point whose job ended gives its series their values
 *   (compare_point_values), and every series of the track is searched
 *   for change points (changepoint.h): provisional until confirm_after
 *   points follow, confirmed then; those of one commit are one alert.
 * - A confirmed regression starts a bisection (with the track's bisect:
 *   on), and every running bisection, by hand too, takes its next step
 *   here (track_bisect.c): a run job of one commit at a time, classified
 *   against both ends by the A/B rule (bisect.h).
 * - Webhooks (notify.h): a confirmed change point, a bisection's result, a
 *   finished job; the deliveries are kept in the store and retried with
 *   back-off from here.
 *
 * Daemons that share a store (lab.store) each run this thread, but only
 * one of them, the leader (store_leader_take), does the scheduled runs,
 * points, searches, bisections and webhooks; another takes the lead once
 * it has been silent for lab.lease_timeout. A run asked for
 * (track_run_now) runs on the daemon that was asked.
 *
 * The resolve is builder work: it waits while a run measures on the
 * builder's host (quiet.h), as builds do; the search for change points is
 * work on the daemon's host, and waits while a run measures on a local
 * machine (then on the next pass; after a start or a reload every track is
 * searched once). The store is the only shared
 * state; the thread looks at it every TRACK_POLL_S seconds and at once
 * when woken.
 */

#define TRACK_POLL_S 2

struct tracker;
struct store;
struct quiet;
struct lab_config;

/* Starts the thread. cfg is referenced (config_ref) until the next
 * track_set_config or track_stop; kernels_dir holds build.sh; quiet is
 * the scheduler's gate (may be NULL: nothing waits); wake(arg) tells the
 * scheduler there are new jobs. 0, or -1 with err. */
int track_start(const struct lab_config *cfg, struct store *st, const char *kernels_dir,
		struct quiet *quiet, void (*wake)(void *), void *arg, struct tracker **ret,
		struct strbuf *err);
void track_set_config(struct tracker *tr, const struct lab_config *cfg);
/* A run of the track now, whatever its schedule (POST /tracks/NAME/run).
 * 0, or -ENOENT when no track of that name is configured. */
int track_run_now(struct tracker *tr, const char *name);
/* Makes the thread look at the store now. */
void track_wake(struct tracker *tr);
/* The passes the thread has made; and a wait (waking it) until it has
 * made one more than `after`: 0, or -ETIMEDOUT after timeout seconds. */
long track_passes(struct tracker *tr);
int track_wait_pass(struct tracker *tr, long after, double timeout);
/* Stops the thread (a resolve in progress is cancelled) and frees. NULL
 * is fine. */
void track_stop(struct tracker *tr);

/* The direction a change of `magnitude` (after vs before, relative) has
 * for a metric whose better side is direction ("higher", "lower" or
 * "neutral"): "regression", "improvement" or "neutral". */
const char *track_change_direction(const char *direction, double magnitude);

#endif
