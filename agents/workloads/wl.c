#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "banned.h"

/* The code of each row of the catalog (workload_catalog.c), by name. */
static const struct workload_ops *const workloads[] = {
	&workload_mprotect,
	&workload_mremap,
	&workload_fault_write,
	&workload_tcp_rr,
	&workload_stencil,
	&workload_exec,
};

static const struct workload_ops *impl_named(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(workloads); i++)
		if (!strcmp(workloads[i]->name, name))
			return workloads[i];
	return NULL;
}

const struct workload_ops *workload_impl(const struct workload_def *def)
{
	return def ? impl_named(def->name) : NULL;
}

const char *workload_impl_errors(void)
{
	static char problems[256];
	const struct workload_def *d;
	size_t i;

	problems[0] = '\0';
	for (i = 0; (d = workload_def_at(i)) != NULL && !problems[0]; i++)
		if (!impl_named(d->name))
			snprintf(problems, sizeof(problems), "workload '%s' of the catalog "
				 "(lib/catalog/workload_catalog.c) has no implementation in this agent", d->name);
	for (i = 0; i < ARRAY_SIZE(workloads) && !problems[0]; i++)
		if (!workload_lookup(workloads[i]->name))
			snprintf(problems, sizeof(problems), "workload '%s' of agents/workloads/wl.c has no row "
				 "in the catalog (lib/catalog/workload_catalog.c)", workloads[i]->name);
	return problems[0] ? problems : NULL;
}

int wl_ctx_init(struct wl_ctx *ctx, const struct wl_params *p, struct strbuf *err)
{
	void *sh;

	memset(ctx, 0, sizeof(*ctx));
	ctx->p = p;
	ctx->wake_fd[0] = ctx->wake_fd[1] = -1;
	sh = mmap(NULL, sizeof(struct wl_shared), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return strbuf_seterr(err, "mmap of the shared counters: %s", strerror(errno));
	/* a pipe rather than an eventfd: lab kernels built from tinyconfig
	 * may lack CONFIG_EVENTFD */
	if (pipe2(ctx->wake_fd, O_CLOEXEC | O_NONBLOCK) < 0) {
		int e = errno;

		munmap(sh, sizeof(struct wl_shared));
		return strbuf_seterr(err, "pipe: %s", strerror(e));
	}
	ctx->sh = sh;
	ctx->threads = xcalloc(2 * WL_MAX_WORKERS + 1, sizeof(*ctx->threads));
	ctx->pids = xcalloc(2 * WL_MAX_WORKERS + 1, sizeof(*ctx->pids));
	return 0;
}

void wl_ctx_release(struct wl_ctx *ctx)
{
	if (!ctx || !ctx->sh)
		return;
	munmap(ctx->sh, sizeof(struct wl_shared));
	close(ctx->wake_fd[0]);
	close(ctx->wake_fd[1]);
	ctx->wake_fd[0] = ctx->wake_fd[1] = -1;
	free(ctx->threads);
	free(ctx->pids);
	ctx->sh = NULL;
	ctx->threads = NULL;
	ctx->pids = NULL;
}

void wl_pin(const struct wl_ctx *ctx, int i)
{
	cpu_set_t set;

	if (!ctx->ncpus)
		return;
	CPU_ZERO(&set);
	CPU_SET(ctx->cpus[i % ctx->ncpus], &set);
	/* best effort: a CPU that went offline leaves the worker unpinned */
	sched_setaffinity(0, sizeof(set), &set);
}

struct tramp {
	struct wl_ctx *ctx;
	wl_fn fn;
	int i;
};

static void *thread_main(void *arg)
{
	struct tramp t = *(struct tramp *)arg;

	free(arg);
	wl_pin(t.ctx, t.i);
	wl_wait_go(t.ctx);
	t.fn(t.ctx, t.i);
	return NULL;
}

int wl_spawn(struct wl_ctx *ctx, enum wl_mode mode, wl_fn fn, int i, struct strbuf *err)
{
	int slot = ctx->nspawned;

	if (slot >= 2 * WL_MAX_WORKERS + 1)
		return strbuf_seterr(err, "too many workers");
	if (mode == WL_THREADS) {
		struct tramp *t = xmalloc(sizeof(*t));
		int r;

		t->ctx = ctx;
		t->fn = fn;
		t->i = i;
		r = pthread_create(&ctx->threads[slot], NULL, thread_main, t);
		if (r) {
			free(t);
			return strbuf_seterr(err, "worker %d: pthread_create: %s", i, strerror(r));
		}
		ctx->pids[slot] = 0;
	} else {
		cpu_set_t was;
		int repin = ctx->ncpus > 0 && sched_getaffinity(0, sizeof(was), &was) == 0;
		pid_t pid;

		/* the child is born on its own CPU: pinned only after the fork, a
		 * single-threaded worker's mm had run on the parent's CPU first,
		 * which a kernel that flushes such an mm locally (kernels/patches/
		 * 0003) must then treat as shared */
		if (repin)
			wl_pin(ctx, i);
		pid = fork();
		if (pid != 0 && repin)
			sched_setaffinity(0, sizeof(was), &was);
		if (pid < 0)
			return strbuf_seterr(err, "worker %d: fork: %s", i, strerror(errno));
		if (pid == 0) {
			/* a killed agent must not leave workers behind */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			wl_pin(ctx, i);
			if (ctx->proc_init)
				ctx->proc_init(ctx, i);
			wl_wait_go(ctx);
			fn(ctx, i);
			_exit(0);
		}
		ctx->pids[slot] = pid;
	}
	ctx->nspawned++;
	return 0;
}

void wl_status_text(int status, struct strbuf *sb)
{
	if (WIFSIGNALED(status))
		strbuf_addf(sb, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else if (WIFEXITED(status))
		strbuf_addf(sb, "exited with status %d", WEXITSTATUS(status));
	else
		strbuf_addf(sb, "ended with wait status %#x", (unsigned)status);
}

static long futex(volatile int *addr, int op, int val)
{
	/* not FUTEX_PRIVATE: processes-mode workers wait on the shared mapping */
	return syscall(SYS_futex, (int *)addr, op, val, NULL, NULL, 0);
}

static void wake(struct wl_ctx *ctx)
{
	ssize_t n;

	/* fails only with EAGAIN, when the pipe is full: the waiter has not
	 * drained it yet, so it will wake anyway */
	n = write(ctx->wake_fd[1], "w", 1);
	(void)n;
}

static void set_go(struct wl_ctx *ctx)
{
	__atomic_store_n(&ctx->sh->go, 1, __ATOMIC_SEQ_CST);
	futex(&ctx->sh->go, FUTEX_WAKE, INT_MAX);
}

void wl_stop(struct wl_ctx *ctx)
{
	__atomic_store_n(&ctx->sh->stop, 1, __ATOMIC_SEQ_CST);
	/* workers still waiting for go must see the stop too */
	set_go(ctx);
	wake(ctx);
}

int wl_join(struct wl_ctx *ctx, struct strbuf *err)
{
	int i, bad = 0;

	wl_stop(ctx);
	for (i = 0; i < ctx->nspawned; i++) {
		int status;

		if (!ctx->pids[i]) {
			pthread_join(ctx->threads[i], NULL);
			continue;
		}
		while (waitpid(ctx->pids[i], &status, 0) < 0 && errno == EINTR)
			;
		if (!bad && (!WIFEXITED(status) || WEXITSTATUS(status))) {
			strbuf_seterr(err, "worker process %d ", (int)ctx->pids[i]);
			wl_status_text(status, err);
			bad = 1;
		}
	}
	ctx->nspawned = 0;
	if (ctx->sh->failed)
		return strbuf_seterr(err, "%s", ctx->sh->errmsg);
	return bad ? -1 : 0;
}

void wl_wait_go(struct wl_ctx *ctx)
{
	/* FUTEX_WAIT returns at once when go is no longer 0 (EAGAIN) */
	while (!__atomic_load_n(&ctx->sh->go, __ATOMIC_ACQUIRE))
		futex(&ctx->sh->go, FUTEX_WAIT, 0);
}

uint64_t wl_ops_total(const struct wl_ctx *ctx)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ctx->sh->w); i++)
		sum += __atomic_load_n(&ctx->sh->w[i].ops, __ATOMIC_RELAXED);
	return sum;
}

void wl_begin(struct wl_ctx *ctx)
{
	if (ctx->on_begin)
		ctx->on_begin(ctx);
	ctx->ops_begin = wl_ops_total(ctx);
	ctx->t_begin = mono_now();
	set_go(ctx);
}

void wl_end(struct wl_ctx *ctx)
{
	ctx->t_end = mono_now();
	ctx->ops_end = wl_ops_total(ctx);
	if (ctx->on_end)
		ctx->on_end(ctx);
	__atomic_store_n(&ctx->sh->stop, 1, __ATOMIC_SEQ_CST);
}

static int window_over(const struct wl_ctx *ctx)
{
	return __atomic_load_n(&ctx->sh->stop, __ATOMIC_SEQ_CST) ||
	       __atomic_load_n(&ctx->sh->done, __ATOMIC_SEQ_CST) ||
	       __atomic_load_n(&ctx->sh->failed, __ATOMIC_SEQ_CST);
}

/*
 * Sleeps until the deadline or until a worker (or, for a neighbour, the
 * runner) writes the wake pipe. The flags are set before the pipe is
 * written and the pipe stays readable until drained, so no wake-up is
 * lost between the check and ppoll.
 */
void wl_window(struct wl_ctx *ctx)
{
	double deadline;

	wl_begin(ctx);
	deadline = ctx->t_begin + ctx->p->duration;
	while (!window_over(ctx)) {
		struct pollfd pfd = { .fd = ctx->wake_fd[0], .events = POLLIN };
		struct timespec ts;
		char buf[64];

		if (!ctx->background) {
			double left = deadline - mono_now();

			if (left <= 0)
				break;
			ts.tv_sec = (time_t)left;
			ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		}
		/* drained so the next ppoll sleeps; the flags say why we woke */
		if (ppoll(&pfd, 1, ctx->background ? NULL : &ts, NULL) > 0)
			while (read(ctx->wake_fd[0], buf, sizeof(buf)) > 0)
				;
	}
	wl_end(ctx);
}

int wl_run_workers(struct wl_ctx *ctx, enum wl_mode mode, wl_fn fn, int *give_up, struct strbuf *err)
{
	int i, r = 0;

	for (i = 0; i < ctx->p->workers && r == 0; i++)
		r = wl_spawn(ctx, mode, fn, i, err);
	if (r == 0)
		wl_window(ctx);
	else if (give_up)
		*give_up = 1;
	if (wl_join(ctx, err) < 0)
		r = -1;
	return r;
}

void wl_fail(struct wl_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_exchange_n(&ctx->sh->failed, 1, __ATOMIC_SEQ_CST))
		return;
	va_start(ap, fmt);
	vsnprintf(ctx->sh->errmsg, sizeof(ctx->sh->errmsg), fmt, ap);
	va_end(ap);
	wake(ctx);
}

void wl_done(struct wl_ctx *ctx)
{
	__atomic_store_n(&ctx->sh->done, 1, __ATOMIC_SEQ_CST);
	wake(ctx);
}

void wl_metric(struct wl_ctx *ctx, const char *name, double value, const char *unit,
	       const char *direction)
{
	char key[128];

	snprintf(key, sizeof(key), "%s.%s", ctx->p->def->name, name);
	json_object_set_new(ctx->metrics, key, json_real(value));
	if (ctx->info)
		json_object_set_new(ctx->info, key, json_pack("{s:s,s:s}", "unit", unit,
								"direction", direction));
}
