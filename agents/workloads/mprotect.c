/*
 * mprotect: every worker flips the protection of its own page between
 * read-only and read-write, writing to it in between so the next downgrade
 * has a present, dirty PTE to change. As threads of one process the mm is
 * live on every worker's CPU, so each downgrade must shoot down the others'
 * TLB entries; as single-threaded processes no remote flush is needed. One
 * operation is one mprotect call.
 */
#include "workload.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "banned.h"

struct mp_state {
	char *region;
	size_t pagesz;
};

static struct mp_state mp;

static void mp_worker(struct wl_ctx *ctx, int i)
{
	volatile char *page = mp.region + (size_t)i * mp.pagesz;

	page[0]++;
	while (wl_running(ctx)) {
		if (mprotect((void *)page, mp.pagesz, PROT_READ) < 0 ||
		    mprotect((void *)page, mp.pagesz, PROT_READ | PROT_WRITE) < 0) {
			wl_fail(ctx, "mprotect: %s", strerror(errno));
			return;
		}
		page[0]++;
		wl_count(ctx, i, 2);
	}
}

static int mp_run(struct wl_ctx *ctx, struct strbuf *err)
{
	const struct wl_params *p = ctx->p;
	int r;

	mp.pagesz = (size_t)sysconf(_SC_PAGESIZE);
	mp.region = mmap(NULL, mp.pagesz * (size_t)p->workers, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mp.region == MAP_FAILED)
		return strbuf_seterr(err, "mmap of %d pages: %s", p->workers, strerror(errno));
	r = wl_run_workers(ctx, p->mode, mp_worker, NULL, err);
	munmap(mp.region, mp.pagesz * (size_t)p->workers);
	return r;
}

const struct workload_ops workload_mprotect = {
	.name = "mprotect",
	.score = "ops_per_sec",
	.score_unit = "ops/s",
	.modes = 1u << WL_THREADS | 1u << WL_PROCESSES,
	.pin = 1,
	.run = mp_run,
};
