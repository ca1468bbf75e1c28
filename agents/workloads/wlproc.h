#ifndef TLBLAB_WLPROC_H
#define TLBLAB_WLPROC_H

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>

#include "strbuf.h"
#include "workload.h"

/*
 * One iteration of a workload in a process of its own, forked from the agent
 * for that iteration alone. The agent's threads (the sampler, the monitors,
 * the perf launcher) stay in the agent's mm, so a threads-mode workload's TLB
 * shootdowns reach only the CPUs its own threads ran on, and a workload that
 * crashes takes down nothing but its process.
 *
 * The window's edges stay exact: at each edge the workload process writes
 * "B" or "E" on a pipe and waits for the agent's acknowledgement, which the
 * agent sends after its hook (reading every counter) returned. At the end
 * the workload process writes one "R" line, a JSON object with its verdict,
 * the window's times and operation counts, and its metrics, then exits.
 *
 * The agent bounds every phase: the setup before the window, the window
 * (its duration, or exec's timeout, plus a grace), and the teardown after
 * it. A process that overruns one is killed and the iteration fails.
 */

struct wlproc_hooks {
	/* the window opens (called before the workers are let go) and
	 * closes (called before they are told to stop); either may be NULL */
	void (*on_begin)(void *arg);
	void (*on_end)(void *arg);
	void *arg;
	/* held across fork() when not NULL: the lock under which the agent's
	 * other threads allocate, so none of them is inside the allocator
	 * when the child is made (a child inherits its locks as they were,
	 * and an allocator without fork handlers, like ASan's, deadlocks) */
	pthread_mutex_t *fork_lock;
};

struct wlproc_result {
	int window;		/* the window opened; the times below are set */
	double t_begin, t_end;
	uint64_t ops_begin, ops_end;
	/* the workload's own metrics and their unit/direction; never NULL
	 * after wlproc_run, owned by the caller (wlproc_result_release) */
	json_t *metrics, *info;
};

/*
 * Runs one window of the workload p in a child process, pinned per
 * cpus/ncpus (no pinning when ncpus is 0). Returns 0 when the workload
 * finished well; -1 with err when it failed, died ("workload process killed
 * by signal 11 (Segmentation fault)") or overran a phase. Either way ret
 * holds what was measured: when the process died inside the window, on_end
 * is called at the moment its death is seen and the operation counts are
 * read from the shared counters it left behind.
 */
int wlproc_run(const struct wl_params *p, const int *cpus, int ncpus,
	       const struct wlproc_hooks *h, struct wlproc_result *ret, struct strbuf *err);

void wlproc_result_release(struct wlproc_result *res);

#endif
