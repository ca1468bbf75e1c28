/*
 * mremap: worker 0 moves a populated region back and forth between two
 * PMD-aligned addresses (its two homes, A and B) with mremap(MREMAP_FIXED),
 * so the kernel moves whole page tables and must flush the old range on
 * every CPU the mm is live on. The other workers keep the mm live there by
 * writing to memory of their own in the same process. The score is moves per
 * second; run it as a sweep over thread counts to see the flush cost grow
 * with the mm's CPU footprint.
 *
 * Why the layout is safe: nothing but the region may ever sit in either
 * home, or a move replaces it (a thread's stack, a touch buffer: the
 * segfaults of issue 10) or a later move vacates it. So neither home is
 * ever left unmapped:
 *  - one PROT_NONE reservation holds both homes a PMD apart, at the start
 *    of a PUD-aligned span of its own, with reserved space below and
 *    above them (so neither a move's page-table work nor the maple-tree
 *    work on the homes' mappings depends on where address-space
 *    randomization put it); A is mapped over its part of it, B stays
 *    reserved until the first move;
 *  - every move is mremap(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP):
 *    the kernel replaces what is at the destination (our own reservation or
 *    the empty mapping the previous move left) and leaves the source mapped,
 *    empty, all under one hold of the mmap lock, so no mmap(NULL) of any
 *    thread (stacks, malloc arenas, the touch buffers) can find a hole in
 *    either home at any instant;
 *  - the reservation is unmapped only after every worker was joined.
 * MREMAP_DONTUNMAP exists since Linux 5.7; on an older kernel the workload
 * fails with that reason rather than depend on where the kernel puts the
 * next mapping. As a check of all this, both homes must each be one mapping
 * of their own in /proc/self/maps once every worker is started and again
 * after the window, and after the window the region and every touch buffer
 * must still hold what was written to them.
 */
#include "workload.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "monitors/procparse.h"
#include "util.h"
#include "banned.h"

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

#define PMD_SIZE (2ul << 20)
#define PUD_SIZE (1ul << 30)
#define TOUCH_BYTES (64ul << 10)
#define FILL 0x5a
#define MAPS_MAX (16u << 20)

struct mr_state {
	char *reserve;
	size_t reserve_len, len, pagesz;
	char *a, *b;
	char *home;		/* where the region is once the mover stopped */
	char *touch;
	uint64_t *touched;	/* per toucher: increments made */
	uint64_t moves;		/* moves done: the touchers touch once after each */
	uint64_t acks;		/* touches done, all touchers together */
};

static struct mr_state mr;

static void *move(char *from, char *to, size_t len)
{
	return mremap(from, len, len, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, to);
}

static void mr_mover(struct wl_ctx *ctx, int i)
{
	size_t len = ctx->p->size;
	char *from = mr.a, *to = mr.b;

	while (wl_running(ctx)) {
		char *tmp;

		if (move(from, to, len) == MAP_FAILED) {
			wl_fail(ctx, "mremap of %zu bytes: %s", len, strerror(errno));
			break;
		}
		tmp = from;
		from = to;
		to = tmp;
		wl_count(ctx, i, 1);
		__atomic_store_n(&mr.moves, mr.moves + 1, __ATOMIC_RELEASE);
		/* the next move waits for every toucher's touch after this one,
		 * so each move is followed by one touch of each, whatever the
		 * emulator's interleaving: without it a toucher now and then
		 * missed a move, and user instructions per move from 2 workers
		 * spread 0.9% between boots (124.1-127.1) */
		while (__atomic_load_n(&mr.acks, __ATOMIC_ACQUIRE) < mr.moves * (uint64_t)(ctx->p->workers - 1) &&
		       wl_running(ctx))
			wl_cpu_relax();
	}
	mr.home = from;
}

/*
 * A toucher touches one page of its buffer after each move and spin-waits
 * for the next one in between: in user mode the whole time, so the mm stays
 * live on its CPU and each move's flush must reach it. The wait is a
 * spin-wait hint loop, so its instructions count as spin, and the user
 * work per move is one touch whatever the host's timing (the mover waits
 * for every toucher's touch before its next move); touching without
 * pause made it the length of the toucher's turn on the emulator (under
 * single-threaded TCG a vCPU runs until its time slice ends, and `pause`
 * hands the host CPU to the next vCPU at once).
 */
static void mr_toucher(struct wl_ctx *ctx, int i)
{
	volatile unsigned char *mem = (unsigned char *)mr.touch + (size_t)i * TOUCH_BYTES;
	uint64_t n = 0, seen = 0;
	size_t off = 0;

	while (wl_running(ctx)) {
		uint64_t now = __atomic_load_n(&mr.moves, __ATOMIC_ACQUIRE);

		if (now == seen) {
			wl_cpu_relax();
			continue;
		}
		seen = now;
		mem[off]++;
		n++;
		__atomic_add_fetch(&mr.acks, 1, __ATOMIC_RELEASE);
		off = (off + 4096) % TOUCH_BYTES;
	}
	mr.touched[i] = n;
}

/* Each home must be one mapping, whole: anything placed inside it splits it. */
static int homes_intact(const char *when, struct strbuf *err)
{
	struct strbuf maps = STRBUF_INIT;
	char *home[2] = { mr.a, mr.b };
	int i, r = 0;

	/* without /proc there is nothing to check against */
	if (strbuf_read_file(&maps, "/proc/self/maps", MAPS_MAX) < 0) {
		strbuf_release(&maps);
		return 0;
	}
	for (i = 0; i < 2 && r == 0; i++) {
		uint64_t start = (uintptr_t)home[i], end = start + mr.len;

		if (procparse_maps_whole(maps.buf, start, end) != 1)
			r = strbuf_seterr(err, "%s, home %c of the region (%#llx-%#llx) is not one mapping "
					  "of its own: something else was mapped inside it", when, "AB"[i],
					  (unsigned long long)start, (unsigned long long)end);
	}
	strbuf_release(&maps);
	return r;
}

/* After the window: the region moved intact, and no move hit a touch buffer. */
static int contents_intact(const struct wl_params *p, struct strbuf *err)
{
	size_t off;
	int i;

	for (off = 0; off < p->size; off += mr.pagesz)
		if (mr.home[off] != FILL || mr.home[off + mr.pagesz - 1] != FILL)
			return strbuf_seterr(err, "after the window, the region lost its contents at "
					     "offset %zu", off);
	for (i = 1; i < p->workers; i++) {
		const unsigned char *mem = (unsigned char *)mr.touch + (size_t)i * TOUCH_BYTES;
		uint8_t sum = 0;

		for (off = 0; off < TOUCH_BYTES; off++)
			sum = (uint8_t)(sum + mem[off]);
		if (sum != (uint8_t)mr.touched[i])
			return strbuf_seterr(err, "after the window, worker %d's touch buffer does not "
					     "hold what it wrote", i);
	}
	return 0;
}

static int mr_setup(const struct wl_params *p, struct strbuf *err)
{
	size_t len = p->size;
	uintptr_t base;

	mr.pagesz = (size_t)sysconf(_SC_PAGESIZE);
	mr.len = len;
	/* the homes at the start of a PUD-aligned span of their own, whatever
	 * address-space randomization gave the process: with the homes where
	 * mmap() put them, the page-table work of a move depended on where
	 * that was (kernel instructions per move from 1 worker differed by
	 * 17% between boots of one kernel under icount). And always with a
	 * piece of the reservation below A and above B, so the homes' mappings
	 * have the same neighbours in the mm's maple tree in every process:
	 * taking the first PUD boundary at or above the reservation's start,
	 * A had none below it whenever the start fell on one (the reservation
	 * lies under a 64 MiB-aligned malloc arena, so one process in 16), and
	 * then every other move replaced a tree node, freed through RCU: 16430
	 * kernel instructions per move instead of 14250 */
	mr.reserve_len = ((2 * len + 3 * PMD_SIZE + PUD_SIZE - 1) & ~(PUD_SIZE - 1)) + PUD_SIZE;
	mr.reserve = mmap(NULL, mr.reserve_len, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mr.reserve == MAP_FAILED) {
		mr.reserve = NULL;
		return strbuf_seterr(err, "mmap of %zu bytes: %s", mr.reserve_len, strerror(errno));
	}
	/* the first PUD boundary above the start: at most PUD_SIZE above it,
	 * and B ends at most PUD_SIZE + 2 * len + 2 * PMD_SIZE above it, short
	 * of the reservation's end */
	base = ((uintptr_t)mr.reserve + PUD_SIZE) & ~(PUD_SIZE - 1);
	mr.a = (char *)base;
	mr.b = (char *)((base + len + PMD_SIZE + PMD_SIZE - 1) & ~(PMD_SIZE - 1));
	/* over our own reservation: MAP_FIXED replaces nothing else */
	if (mmap(mr.a, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		 -1, 0) == MAP_FAILED)
		return strbuf_seterr(err, "mmap of the %zu-byte region: %s", len, strerror(errno));
	memset(mr.a, FILL, len);
	/* one move there and back: B becomes the empty mapping a move leaves,
	 * and a kernel without MREMAP_DONTUNMAP is found before any worker runs */
	if (move(mr.a, mr.b, len) == MAP_FAILED || move(mr.b, mr.a, len) == MAP_FAILED) {
		if (errno == EINVAL)
			return strbuf_seterr(err, "mremap: this kernel refuses MREMAP_DONTUNMAP (Linux 5.7 "
					     "or later needed), which keeps both homes of the moving "
					     "region mapped so nothing else can be placed there");
		return strbuf_seterr(err, "mremap of %zu bytes: %s", len, strerror(errno));
	}
	mr.home = mr.a;
	mr.touch = mmap(NULL, TOUCH_BYTES * (size_t)p->workers, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (mr.touch == MAP_FAILED) {
		mr.touch = NULL;
		return strbuf_seterr(err, "mmap of touch buffers: %s", strerror(errno));
	}
	mr.touched = xcalloc((size_t)p->workers, sizeof(*mr.touched));
	return 0;
}

static int mr_run(struct wl_ctx *ctx, struct strbuf *err)
{
	const struct wl_params *p = ctx->p;
	int i, r;

	memset(&mr, 0, sizeof(mr));
	r = mr_setup(p, err);
	if (r == 0)
		r = wl_spawn(ctx, WL_THREADS, mr_mover, 0, err);
	for (i = 1; i < p->workers && r == 0; i++)
		r = wl_spawn(ctx, WL_THREADS, mr_toucher, i, err);
	if (r == 0)
		r = homes_intact("with every worker started", err);
	if (r == 0)
		wl_window(ctx);
	if (wl_join(ctx, err) < 0)
		r = -1;
	if (r == 0)
		r = homes_intact("after the window", err);
	if (r == 0)
		r = contents_intact(p, err);
	if (mr.touch)
		munmap(mr.touch, TOUCH_BYTES * (size_t)p->workers);
	free(mr.touched);
	if (mr.reserve)
		munmap(mr.reserve, mr.reserve_len);
	return r;
}

const struct workload_ops workload_mremap = {
	.name = "mremap",
	.pin = 1,
	.run = mr_run,
};
