/*
 * mprotect: every worker flips the protection of its own page between
 * read-only and read-write, writing to it in between so the next downgrade
 * has a present, dirty PTE to change. As threads of one process the mm is
 * live on every worker's CPU, so each downgrade must shoot down the others'
 * TLB entries; as single-threaded processes no remote flush is needed. One
 * operation is one mprotect call.
 *
 * Each worker's page is a mapping of its own, with a PROT_NONE guard page
 * on either side, so a call changes one whole VMA and never splits or
 * merges one. With the pages side by side in one mapping, a flip split the
 * mapping or merged it back depending on what the other workers' pages
 * were at that instant: the kernel's instructions per call from 2 threads
 * followed how they happened to interleave (2.80% from boot to boot of one
 * kernel under icount; 0.02% with a mapping each).
 *
 * With `rounds` N, each worker does N downgrade+upgrade pairs and stops, and
 * the window ends when the last one is done: mprotect.elapsed_sec, the time
 * of that fixed amount of work (lower is better, as `perf stat` reports a
 * loop of N), is a headline beside ops_per_sec. On arm64, where a flush is
 * a broadcast TLBI rather than an IPI, time is what shows the flushes. A
 * window that reaches `duration` first fails.
 */
#include "workload.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "banned.h"

struct mp_state {
	char *region;
	size_t pagesz, len;
	/* workers that did their rounds: shared, as workers may be processes */
	volatile int *finished;
};

static struct mp_state mp;

static void mp_worker(struct wl_ctx *ctx, int i)
{
	volatile char *page = mp.region + (size_t)(2 * i + 1) * mp.pagesz;

	uint64_t rounds = ctx->p->rounds, done = 0;

	page[0]++;
	while (wl_running(ctx)) {
		if (mprotect((void *)page, mp.pagesz, PROT_READ) < 0 ||
		    mprotect((void *)page, mp.pagesz, PROT_READ | PROT_WRITE) < 0) {
			wl_fail(ctx, "mprotect: %s", strerror(errno));
			return;
		}
		page[0]++;
		wl_count(ctx, i, 2);
		if (rounds && ++done == rounds) {
			if (__atomic_add_fetch(mp.finished, 1, __ATOMIC_SEQ_CST) == ctx->p->workers)
				wl_done(ctx);
			return;
		}
	}
}

static int mp_run(struct wl_ctx *ctx, struct strbuf *err)
{
	const struct wl_params *p = ctx->p;
	int i, r;

	mp.pagesz = (size_t)sysconf(_SC_PAGESIZE);
	mp.finished = mmap(NULL, mp.pagesz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mp.finished == MAP_FAILED)
		return strbuf_seterr(err, "mmap of a shared page: %s", strerror(errno));
	mp.len = mp.pagesz * (size_t)(2 * p->workers + 1);
	mp.region = mmap(NULL, mp.len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mp.region == MAP_FAILED) {
		munmap((void *)mp.finished, mp.pagesz);
		return strbuf_seterr(err, "mmap of %zu pages: %s", mp.len / mp.pagesz, strerror(errno));
	}
	for (i = 0; i < p->workers; i++)
		if (mprotect(mp.region + (size_t)(2 * i + 1) * mp.pagesz, mp.pagesz, PROT_READ | PROT_WRITE) < 0) {
			r = strbuf_seterr(err, "mprotect of worker %d's page: %s", i, strerror(errno));
			munmap(mp.region, mp.len);
			munmap((void *)mp.finished, mp.pagesz);
			return r;
		}
	r = wl_run_workers(ctx, p->mode, mp_worker, NULL, err);
	if (r == 0 && p->rounds && *mp.finished < p->workers)
		r = strbuf_seterr(err, "duration: the %g s window ended before every worker did its %llu rounds "
				  "(raise duration or lower rounds)", p->duration, (unsigned long long)p->rounds);
	munmap(mp.region, mp.len);
	munmap((void *)mp.finished, mp.pagesz);
	return r;
}

/* beside ops_per_sec (score_is_rate): the time of the rounds */
static void mp_score(struct wl_ctx *ctx)
{
	if (ctx->p->rounds)
		wl_metric(ctx, "elapsed_sec", ctx->t_end - ctx->t_begin, "s", "lower");
}

const struct workload_ops workload_mprotect = {
	.name = "mprotect",
	.pin = 1,
	.run = mp_run,
	.score_fn = mp_score,
	.score_is_rate = 1,
};
