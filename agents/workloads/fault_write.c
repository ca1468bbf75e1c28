/*
 * fault-write: as many workers (threads) as CPUs write to one random
 * address, all at once, round after round; the measure is the total time of
 * a fixed number of rounds. What a kernel patch changes here is the write
 * fault that loses the race: one worker's fault installs the PTE, and the
 * others' faults find it already fixed by another thread (the spurious-fault
 * path, with whatever TLB flush it does). Workers meet at two barriers per
 * round; worker 0 picks the next address between rounds. One operation is
 * one write.
 *
 * The shape of the memory, chosen with `vma`:
 *
 *   one        (the default, the experiment) one shared anonymous mapping of
 *              `size` bytes, mapped once before the window and never
 *              unmapped during it. Round r writes to a page no earlier round
 *              touched (fault_write_page: a fixed permutation of the pages),
 *              at a random offset, so every round begins with a write fault
 *              on a not-present PTE and no round pays for an unmap. `rounds`
 *              (default FAULT_WRITE_ROUNDS) must fit in size / page size pages; size
 *              defaults to exactly that many pages. The window ends when the
 *              rounds are done: the headline is total_sec, their time (lower
 *              is better); a window that reaches `duration` first fails.
 *   per-round  the older shape: each round maps a fresh region, everyone
 *              writes one random address in it, and it is unmapped, which
 *              shoots the page out of every worker's TLB: a shootdown per
 *              round of its own, on top of the faults. With rounds 0 (its
 *              default) the window lasts `duration`.
 *
 * Workers default to the number of CPUs the agent may run on; 1 worker is
 * allowed (no race: a plain fault per round).
 */
#include "workload.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util.h"
#include "banned.h"

struct fw_state {
	pthread_barrier_t start, end;
	volatile uint64_t *target;
	char *region;		/* vma one: the mapping; per-round: this round's */
	size_t pagesz;
	uint64_t npages;
	int quit;		/* worker 0's decision, read by all after the barrier */
	int abort;		/* set before go: not every worker started */
	uint64_t rounds_done;
	double t_first, t_last;
	uint64_t rng, seed;
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

/* A bijection of [0, 2^bits): multiplying by an odd number, adding and
 * xor-shifting right each map k-bit numbers one to one. */
static uint64_t mix(uint64_t x, unsigned bits, uint64_t seed)
{
	uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
	int r;

	for (r = 0; r < 3; r++) {
		x = (x * 0x9e3779b97f4a7c15ull + seed) & mask;
		x ^= x >> (bits / 2 + 1);
	}
	return x;
}

uint64_t fault_write_page(uint64_t round, uint64_t npages, uint64_t seed)
{
	unsigned bits = 0;
	uint64_t x;

	if (npages <= 1)
		return 0;
	while (bits < 64 && (1ull << bits) < npages)
		bits++;
	/* cycle-walking: a permutation of the power of two above npages,
	 * stepped until it lands below npages, permutes [0, npages) */
	x = mix(round, bits, seed);
	while (x >= npages)
		x = mix(x, bits, seed);
	return x;
}

/* Worker 0, between rounds: where everyone writes next. -1 on failure. */
static int fw_prepare(struct wl_ctx *ctx)
{
	const struct wl_params *p = ctx->p;

	if (p->vma == WL_VMA_PER_ROUND) {
		fw.region = mmap(NULL, p->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (fw.region == MAP_FAILED) {
			wl_fail(ctx, "mmap of %llu bytes: %s", (unsigned long long)p->size, strerror(errno));
			return -1;
		}
		fw.target = (volatile uint64_t *)fw.region + next_random() % (p->size / sizeof(uint64_t));
	} else {
		uint64_t page = fault_write_page(fw.rounds_done, fw.npages, fw.seed);
		uint64_t word = next_random() % (fw.pagesz / sizeof(uint64_t));

		fw.target = (volatile uint64_t *)(fw.region + page * fw.pagesz) + word;
	}
	return 0;
}

static void fw_worker(struct wl_ctx *ctx, int i)
{
	const struct wl_params *p = ctx->p;

	/* the barriers count every worker: if one did not start, nobody
	 * may wait at them */
	if (fw.abort)
		return;
	for (;;) {
		if (i == 0) {
			int limit = p->rounds && fw.rounds_done >= p->rounds;

			fw.quit = !wl_running(ctx) || limit;
			if (!fw.quit && fw_prepare(ctx) < 0)
				fw.quit = 1;
			else if (!fw.quit && !fw.rounds_done)
				fw.t_first = mono_now();
			if (limit)
				wl_done(ctx);
		}
		pthread_barrier_wait(&fw.start);
		if (fw.quit)
			return;
		*fw.target = (uint64_t)i;
		wl_count(ctx, i, 1);
		pthread_barrier_wait(&fw.end);
		if (i == 0) {
			if (p->vma == WL_VMA_PER_ROUND)
				munmap(fw.region, p->size);
			fw.rounds_done++;
			fw.t_last = mono_now();
		}
	}
}

static int fw_run(struct wl_ctx *ctx, struct strbuf *err)
{
	const struct wl_params *p = ctx->p;
	int r;

	memset(&fw, 0, sizeof(fw));
	fw.seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)p->workers;
	fw.rng = fw.seed;
	fw.pagesz = (size_t)sysconf(_SC_PAGESIZE);
	fw.npages = p->size / fw.pagesz;
	if (p->vma == WL_VMA_ONE) {
		fw.region = mmap(NULL, p->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (fw.region == MAP_FAILED)
			return strbuf_seterr(err, "mmap of %llu bytes: %s", (unsigned long long)p->size,
					     strerror(errno));
	}
	/* workers touch the barriers only after go, which follows every spawn */
	pthread_barrier_init(&fw.start, NULL, (unsigned)p->workers);
	pthread_barrier_init(&fw.end, NULL, (unsigned)p->workers);
	r = wl_run_workers(ctx, WL_THREADS, fw_worker, &fw.abort, err);
	if (r == 0 && p->vma == WL_VMA_ONE && fw.rounds_done < p->rounds)
		r = strbuf_seterr(err, "duration: the %g s window ended after %llu of %llu rounds "
				  "(raise duration or lower rounds)", p->duration,
				  (unsigned long long)fw.rounds_done, (unsigned long long)p->rounds);
	pthread_barrier_destroy(&fw.start);
	pthread_barrier_destroy(&fw.end);
	if (p->vma == WL_VMA_ONE)
		munmap(fw.region, p->size);
	return r;
}

static void fw_score(struct wl_ctx *ctx)
{
	double secs = ctx->t_end - ctx->t_begin;
	double writes = (double)(ctx->ops_end - ctx->ops_begin);

	if (ctx->p->rounds && fw.rounds_done)
		secs = fw.t_last - fw.t_first;
	wl_metric(ctx, "total_sec", secs, "s", "lower");
	wl_metric(ctx, "writes_per_sec", secs > 0 ? writes / secs : 0, "writes/s", "higher");
	wl_metric(ctx, "rounds", (double)fw.rounds_done, "rounds", "neutral");
	if (fw.rounds_done)
		wl_metric(ctx, "usec_per_round", secs * 1e6 / (double)fw.rounds_done, "us", "lower");
}

const struct workload_ops workload_fault_write = {
	.name = "fault-write",
	.pin = 1,
	.run = fw_run,
	.score_fn = fw_score,
};
