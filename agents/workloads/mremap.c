/*
 * mremap: worker 0 moves a populated region back and forth between two
 * PMD-aligned addresses with mremap(MREMAP_FIXED), so the kernel moves whole
 * page tables and must flush the old range on every CPU the mm is live on.
 * The other workers keep the mm live there by writing to memory of their own
 * in the same process. The score is moves per second; run it as a sweep over
 * thread counts to see the flush cost grow with the mm's CPU footprint.
 */
#include "workload.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "banned.h"

#define PMD_SIZE (2ul << 20)
#define TOUCH_BYTES (64ul << 10)

struct mr_state {
	char *reserve;
	size_t reserve_len;
	char *a, *b;
	char *touch;
};

static struct mr_state mr;

static void mr_mover(struct wl_ctx *ctx, int i)
{
	size_t len = ctx->p->size;
	char *from = mr.a, *to = mr.b;

	while (wl_running(ctx)) {
		void *r = mremap(from, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to);
		char *tmp;

		if (r == MAP_FAILED) {
			wl_fail(ctx, "mremap of %zu bytes: %s", len, strerror(errno));
			return;
		}
		tmp = from;
		from = to;
		to = tmp;
		wl_count(ctx, i, 1);
	}
	/* leave the region where run() expects to unmap it */
	if (from != mr.a)
		mremap(from, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, mr.a);
}

static void mr_toucher(struct wl_ctx *ctx, int i)
{
	volatile char *mem = mr.touch + (size_t)i * TOUCH_BYTES;
	size_t off = 0;

	while (wl_running(ctx)) {
		mem[off]++;
		off = (off + 4096) % TOUCH_BYTES;
	}
}

static int mr_check(const struct wl_params *p, struct strbuf *err)
{
	long pg = sysconf(_SC_PAGESIZE);

	if (p->size % (uint64_t)pg)
		return strbuf_seterr(err, "size: must be a multiple of the page size (%ld)", pg);
	return 0;
}

static int mr_run(struct wl_ctx *ctx, struct strbuf *err)
{
	const struct wl_params *p = ctx->p;
	size_t len = p->size;
	uintptr_t base;
	int i, r = 0;

	/* one reservation holds both homes, each PMD-aligned, with a gap */
	mr.reserve_len = 2 * len + 3 * PMD_SIZE;
	mr.reserve = mmap(NULL, mr.reserve_len, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mr.reserve == MAP_FAILED)
		return strbuf_seterr(err, "mmap of %zu bytes: %s", mr.reserve_len, strerror(errno));
	base = ((uintptr_t)mr.reserve + PMD_SIZE - 1) & ~(PMD_SIZE - 1);
	mr.a = (char *)base;
	mr.b = (char *)((base + len + PMD_SIZE + PMD_SIZE - 1) & ~(PMD_SIZE - 1));
	munmap(mr.b, len);
	if (mmap(mr.a, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		 -1, 0) == MAP_FAILED) {
		r = strbuf_seterr(err, "mmap of the %zu-byte region: %s", len, strerror(errno));
		goto out;
	}
	memset(mr.a, 1, len);
	mr.touch = mmap(NULL, TOUCH_BYTES * (size_t)p->workers, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (mr.touch == MAP_FAILED) {
		r = strbuf_seterr(err, "mmap of touch buffers: %s", strerror(errno));
		goto out;
	}
	r = wl_spawn(ctx, WL_THREADS, mr_mover, 0, err);
	for (i = 1; i < p->workers && r == 0; i++)
		r = wl_spawn(ctx, WL_THREADS, mr_toucher, i, err);
	if (r == 0)
		wl_window(ctx);
	if (wl_join(ctx, err) < 0)
		r = -1;
	munmap(mr.touch, TOUCH_BYTES * (size_t)p->workers);
out:
	munmap(mr.reserve, mr.reserve_len);
	return r;
}

const struct workload_ops workload_mremap = {
	.name = "mremap",
	.score = "moves_per_sec",
	.score_unit = "moves/s",
	.modes = 1u << WL_THREADS,
	.check = mr_check,
	.run = mr_run,
};
