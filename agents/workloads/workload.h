#ifndef TLBLAB_WORKLOAD_H
#define TLBLAB_WORKLOAD_H

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "strbuf.h"
#include "workload_catalog.h"

/*
 * A workload is the experiment of a kernel patch posting, reduced to a loop
 * that counts operations. Each one sets up what it needs, starts its workers
 * (threads of one process, or single-threaded processes: the contrast is the
 * point for TLB work, since only a shared mm needs remote flushes), then
 * calls wl_window(), which opens the measured window, waits for the duration
 * and closes it. Workers count their operations in a per-worker slot of a
 * shared mapping, so the runner reads totals at the window's edges without
 * stopping anyone, whatever the mode.
 *
 * Every iteration runs in a process of its own (wlproc.h), forked from the
 * agent, so no thread of the agent shares the workload's mm. The one thread
 * of that process that is not a worker sleeps through the window (a blocking
 * wait on a pipe, no polling): a threads-mode workload's mm is live only
 * on its workers' CPUs.
 *
 * The caller of wl_ctx_init owns the wl_ctx; a workload owns what it
 * allocates in run() and must have joined every worker before run() returns.
 *
 * What a spec may say of a workload -- its name, headline metric, modes,
 * parameters and their checks -- is its row of the catalog
 * (lib/catalog/workload_catalog.h), which the daemon reads too; this file
 * is the running of it. A workload is its row there, its file here with a
 * struct workload_ops of the same name, and that ops' line in wl.c's
 * table; the agent refuses to run when a row and the table disagree
 * (workload_impl_errors).
 */

#define WL_ERR_MAX 256

/* Shared between the runner and every worker, in a MAP_SHARED mapping.
 * Workers wait for go on a (process-shared) futex. */
struct wl_shared {
	volatile int go, stop, done, failed;
	char errmsg[WL_ERR_MAX];
	struct {
		_Alignas(64) volatile uint64_t ops;
	} w[2 * WL_MAX_WORKERS];
};

struct wl_ctx;
typedef void (*wl_fn)(struct wl_ctx *ctx, int worker);

struct wl_ctx {
	const struct wl_params *p;
	struct wl_shared *sh;
	const int *cpus;	/* pin worker i to cpus[i % ncpus]; no pinning when 0 */
	int ncpus;
	int background;		/* a neighbour: no window, run until stop */

	/* called in a worker process right after its fork, before it waits
	 * for the window (may be NULL) */
	void (*proc_init)(struct wl_ctx *ctx, int worker);

	/* called at the window's edges (may be NULL): in a workload process,
	 * wlproc's, which wait for the agent to read its counters */
	void (*on_begin)(struct wl_ctx *ctx);
	void (*on_end)(struct wl_ctx *ctx);
	void *runner;

	/* filled by wl_window */
	double t_begin, t_end;
	uint64_t ops_begin, ops_end;
	/* metrics a workload adds (owned by the runner): name -> value, and
	 * name -> {"unit", "direction"} */
	json_t *metrics, *info;

	/* a pipe that wl_done, wl_fail and wl_stop write: the window's
	 * waiter sleeps on it instead of polling the flags */
	int wake_fd[2];

	/* worker handles, private to wl.c */
	int nspawned;
	pthread_t *threads;
	pid_t *pids;
};

struct workload_ops {
	const char *name;	/* its row's in the catalog */
	/* Worker i runs on the i-th CPU the agent may use (round robin) even
	 * without a neighbour, like will-it-scale: the experiment needs the mm
	 * live on as many CPUs as there are workers, which an unpinned
	 * scheduler does not promise on a busy machine (it may stack them). */
	int pin;
	/* Runs one measured window. 0, or -1 with err (a workload failure). */
	int (*run)(struct wl_ctx *ctx, struct strbuf *err);
	/* Adds the headline and other metrics from the window; NULL means
	 * score = operations per second over the window. */
	void (*score_fn)(struct wl_ctx *ctx);
	/* With score_fn: the score is still operations per second, counted by
	 * the agent (so a window whose workload process dies keeps it), and
	 * score_fn only adds metrics beside it. */
	int score_is_rate;
};

/* The code that runs def's workload: the ops of wl.c's table with its
 * name. Never NULL once workload_impl_errors() said nothing. */
const struct workload_ops *workload_impl(const struct workload_def *def);
/* "workload 'x' of the catalog has no implementation in this agent" (or
 * an implementation no row), or NULL: the agent runs nothing then. */
const char *workload_impl_errors(void);

/* Allocates ctx->sh (shared, zeroed) and the wake pipe. -1 with err.
 * A forked child inherits both: whoever holds ctx can read the counters
 * and stop the workers, from either side of the fork. */
int wl_ctx_init(struct wl_ctx *ctx, const struct wl_params *p, struct strbuf *err);
/* Frees what wl_ctx_init made; a ctx that was never set up (zeroed) or
 * already released is accepted. */
void wl_ctx_release(struct wl_ctx *ctx);

/* Starts worker `i` as a thread or a process (per p->mode or `mode`), pinned
 * per ctx->cpus. The worker first waits for the window to open. */
int wl_spawn(struct wl_ctx *ctx, enum wl_mode mode, wl_fn fn, int i, struct strbuf *err);
/* Tells every worker to stop and waits for them: no worker runs once it
 * returns. Returns -1 with err when a worker process died or reported a
 * failure. */
int wl_join(struct wl_ctx *ctx, struct strbuf *err);
/* Sets stop (and go, for workers still waiting) and wakes the window's
 * waiter; for a background window (a neighbour), this is how it ends. */
void wl_stop(struct wl_ctx *ctx);

/* Opens the window, waits duration (or until done/failed), closes it. */
void wl_window(struct wl_ctx *ctx);

/*
 * The run of a workload whose workers are all alike: workers 0 to
 * p->workers - 1 of fn started in mode, the window measured once every one
 * has started, then all joined. When a start fails, *give_up (unless NULL)
 * is set before the join, so workers already waiting for their peers give
 * up. 0, or -1 with err (the first failure).
 */
int wl_run_workers(struct wl_ctx *ctx, enum wl_mode mode, wl_fn fn, int *give_up, struct strbuf *err);
void wl_begin(struct wl_ctx *ctx);
void wl_end(struct wl_ctx *ctx);

/* Binds the calling thread to the CPU of worker i (best effort; nothing
 * when the run is not pinned). */
void wl_pin(const struct wl_ctx *ctx, int i);

/* For workers. */
void wl_wait_go(struct wl_ctx *ctx);
static inline int wl_running(const struct wl_ctx *ctx)
{
	return !__atomic_load_n(&ctx->sh->stop, __ATOMIC_RELAXED);
}
/* A spin-wait hint (x86 `pause`, arm64 `yield`): the emulator's
 * instruction plugin counts the block it is in as spin, and single-threaded
 * TCG hands the host CPU to the next vCPU at it. */
static inline void wl_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}
static inline void wl_count(struct wl_ctx *ctx, int i, uint64_t n)
{
	__atomic_store_n(&ctx->sh->w[i].ops, ctx->sh->w[i].ops + n, __ATOMIC_RELAXED);
}
/* A worker's failure: recorded once, ends the window early. */
void wl_fail(struct wl_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Marks the work finished before the duration (e.g. fault-write rounds). */
void wl_done(struct wl_ctx *ctx);

uint64_t wl_ops_total(const struct wl_ctx *ctx);
/* "killed by signal 11 (Segmentation fault)" or "exited with status 3",
 * appended to sb, for a wait status. */
void wl_status_text(int status, struct strbuf *sb);
/* Sets metrics["<workload>.<name>"] = value with its unit and direction
 * ("higher", "lower" or "neutral": which way is better). */
void wl_metric(struct wl_ctx *ctx, const char *name, double value, const char *unit,
	       const char *direction);

/* fault-write's page of round `round` (0-based) in a vma of npages pages:
 * a permutation of [0, npages) chosen by seed, so no page is written in two
 * rounds. Exposed for tests. */
uint64_t fault_write_page(uint64_t round, uint64_t npages, uint64_t seed);
/* exec's output parsers (their names: workload_exec_parser_known), exposed
 * for tests. */
int exec_parse_score(const char *parser, const char *out, double elapsed,
		     double *ret_score, double *ret_ops, struct strbuf *err);

extern const struct workload_ops workload_mprotect;
extern const struct workload_ops workload_mremap;
extern const struct workload_ops workload_fault_write;
extern const struct workload_ops workload_tcp_rr;
extern const struct workload_ops workload_stencil;
extern const struct workload_ops workload_exec;

#endif
