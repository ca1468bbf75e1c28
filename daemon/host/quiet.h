#ifndef TLBLAB_QUIET_H
#define TLBLAB_QUIET_H

#include <signal.h>

#include "config.h"
#include "strbuf.h"

/*
 * The quiet-host rule. A builder and a lab machine on one host share its
 * CPUs, so a build beside a measured run changes what the run measures (a
 * tcp-rr boot measured 451 transactions/s beside builds, 4,200 without).
 * While a run measures on a machine, every build on a builder of the same
 * host (config_same_host) is stopped, and resumed when no run measures
 * there any more: builds still overlap boots and the gaps between runs, but
 * never a measurement. A build that cannot be paused (its transport cannot
 * stop it: transport_pausable) makes a run on its host wait for its end
 * instead, and does not start while a run there measures or waits to.
 *
 * Builds and runs register an entry each, which the caller owns and keeps
 * alive until it ends (quiet_build_end, quiet_measure_end). The gate only
 * flips entry->pause for builds; whoever runs the build stops and continues
 * it (exec_req.pause). All calls are thread-safe.
 */

struct quiet;

struct quiet_entry {
	const struct cfg_endpoint *ep;	/* where it runs; outlives the entry */
	int pausable;			/* builds: the build can be stopped */
	volatile sig_atomic_t pause;	/* builds: set while a run measures on its host */
	char label[160];		/* "build patched of job 7 on builder local" */
	/* private to quiet.c */
	int kind, measuring;
	struct quiet_entry *next;
};

struct quiet *quiet_new(void);
void quiet_free(struct quiet *q);	/* NULL accepted; no entry may be left */

/*
 * A build is about to start. 0: registered (paused already when a run
 * measures on its host). -EBUSY: a run measures or waits to on its host and
 * the build cannot be paused; why says which; try again later.
 */
int quiet_build_begin(struct quiet *q, struct quiet_entry *e, struct strbuf *why);
void quiet_build_end(struct quiet *q, struct quiet_entry *e);
/*
 * quiet_build_begin, waiting on the gate while a run measures on the host
 * and the build cannot be paused: woken when a run there ends (re-checking
 * *cancel at least once a second). 0: registered; -ECANCELED: *cancel was
 * set first (not registered).
 */
int quiet_build_wait(struct quiet *q, struct quiet_entry *e, volatile sig_atomic_t *cancel);

/*
 * A run is about to measure: pauses the builds on its host, waits for those
 * that cannot be paused (re-checking *cancel and the deadline, mono_now()
 * seconds, at least once a second). Appends to note what it did ("build X
 * paused; ..." or "waited N s for build Y"), nothing when the host was
 * quiet. 0, or -ECANCELED (cancelled or out of time: not registered).
 */
int quiet_measure_begin(struct quiet *q, struct quiet_entry *e, volatile sig_atomic_t *cancel,
			double deadline, struct strbuf *note);
/* The run stopped measuring: builds on its host go on unless another run
 * measures there. */
void quiet_measure_end(struct quiet *q, struct quiet_entry *e);

#endif
