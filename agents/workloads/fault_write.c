/*
 * fault-write: all workers write to the same random address of a fresh
 * shared mapping, round after round. Each round the first worker maps a new
 * region and picks the address; everyone faults on the same page at once
 * (the page-table lock and the fault path's retry are what is measured); then
 * the region is unmapped, which shoots the page out of every worker's TLB.
 * One operation is one write. With `rounds` the window ends after that many
 * rounds and total_sec is their exact time.
 */
#include "workload.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "util.h"
#include "banned.h"

struct fw_state {
	pthread_barrier_t start, end;
	volatile uint64_t *target;
	char *region;
	int quit;
	uint64_t rounds_done;
	double t_first, t_last;
	uint64_t rng;
};

static struct fw_state fw;

static uint64_t next_random(void)
{
	/* xorshift64*: reproducible without libc state */
	fw.rng ^= fw.rng >> 12;
	fw.rng ^= fw.rng << 25;
	fw.rng ^= fw.rng >> 27;
	return fw.rng * 2685821657736338717ull;
}

static void fw_worker(struct wl_ctx *ctx, int i)
{
	const struct wl_params *p = ctx->p;

	for (;;) {
		if (i == 0) {
			int limit = p->rounds && fw.rounds_done >= p->rounds;

			fw.quit = !wl_running(ctx) || limit;
			if (!fw.quit) {
				fw.region = mmap(NULL, p->size, PROT_READ | PROT_WRITE,
						 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
				if (fw.region == MAP_FAILED) {
					wl_fail(ctx, "mmap of %llu bytes: %s",
						(unsigned long long)p->size, strerror(errno));
					fw.quit = 1;
				} else {
					uint64_t off = next_random() % (p->size / sizeof(uint64_t));

					fw.target = (volatile uint64_t *)fw.region + off;
					if (!fw.rounds_done)
						fw.t_first = mono_now();
				}
			}
			if (fw.quit && limit)
				wl_done(ctx);
		}
		pthread_barrier_wait(&fw.start);
		if (fw.quit)
			return;
		*fw.target = (uint64_t)i;
		wl_count(ctx, i, 1);
		pthread_barrier_wait(&fw.end);
		if (i == 0) {
			munmap(fw.region, p->size);
			fw.rounds_done++;
			fw.t_last = mono_now();
		}
	}
}

static int fw_check(const struct wl_params *p, struct strbuf *err)
{
	if (p->size < 4096)
		return strbuf_seterr(err, "size: must be at least 4096 bytes for fault-write");
	return 0;
}

static int fw_run(struct wl_ctx *ctx, struct strbuf *err)
{
	const struct wl_params *p = ctx->p;
	int i, r = 0;

	memset(&fw, 0, sizeof(fw));
	fw.rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)p->workers;
	pthread_barrier_init(&fw.start, NULL, (unsigned)p->workers);
	pthread_barrier_init(&fw.end, NULL, (unsigned)p->workers);
	for (i = 0; i < p->workers && r == 0; i++)
		r = wl_spawn(ctx, WL_THREADS, fw_worker, i, err);
	if (r < 0) {
		/* workers already started would wait forever at the barrier */
		fw.quit = 1;
		for (; i < p->workers; i++)
			wl_spawn(ctx, WL_THREADS, fw_worker, i, err);
	}
	if (r == 0)
		wl_window(ctx);
	if (wl_join(ctx, err) < 0)
		r = -1;
	pthread_barrier_destroy(&fw.start);
	pthread_barrier_destroy(&fw.end);
	return r;
}

static void fw_score(struct wl_ctx *ctx)
{
	double secs = ctx->t_end - ctx->t_begin;
	double writes = (double)(ctx->ops_end - ctx->ops_begin);

	if (ctx->p->rounds && fw.rounds_done)
		secs = fw.t_last - fw.t_first;
	wl_metric(ctx, "writes_per_sec", secs > 0 ? writes / secs : 0, "writes/s", "higher");
	wl_metric(ctx, "total_sec", secs, "s", "lower");
	wl_metric(ctx, "rounds", (double)fw.rounds_done, "rounds", "neutral");
	if (fw.rounds_done)
		wl_metric(ctx, "usec_per_round", secs * 1e6 / (double)fw.rounds_done, "us", "lower");
}

const struct workload_ops workload_fault_write = {
	.name = "fault-write",
	.score = "writes_per_sec",
	.score_unit = "writes/s",
	.modes = 1u << WL_THREADS,
	.check = fw_check,
	.run = fw_run,
	.score_fn = fw_score,
};
