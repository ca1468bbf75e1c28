/*
 * stencil: a Himeno-style pressure solver. A 3-D grid of pressures is relaxed
 * by Jacobi sweeps of a 19-point stencil with per-point coefficients (four
 * "a", three "b" and three "c" arrays, a boundary mask and a source term),
 * 34 floating-point operations per interior point, as the Himeno benchmark
 * counts them. It is memory-bound, which makes it a good victim: run it with
 * an mprotect neighbour on the other CPUs and watch MFLOPS fall as remote
 * shootdowns interrupt it. Workers split the outer dimension and meet at a
 * barrier after each sweep and each copy-back. One operation is one point
 * updated; MFLOPS = points x 34 / 1e6 / seconds.
 *
 * Stopping: worker 0 decides at the top of each sweep, and everyone reads
 * the decision after the barrier, so all leave at the same sweep. A sweep
 * under way when the window closes skips its remaining planes (the window's
 * counts were read already), so a large grid stops in one plane's time.
 */
#include "workload.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "banned.h"

#define FLOPS_PER_POINT 34.0
#define OMEGA 0.8f

struct st_state {
	int nx, ny, nz;
	float *p, *a[4], *b[3], *c[3], *bnd, *wrk1, *wrk2;
	double *gosa;		/* per worker residual, kept so the loop is not dead code */
	pthread_barrier_t bar;
	int quit;		/* worker 0's decision, read by all after the barrier */
	int abort;		/* set before go: not every worker started */
};

static struct st_state st;

#define AT(arr, i, j, k) (arr)[((size_t)(i) * (size_t)st.ny + (size_t)(j)) * (size_t)st.nz + (size_t)(k)]

static void slice(int worker, int workers, int *lo, int *hi)
{
	int inner = st.nx - 2;

	*lo = 1 + (int)((long)inner * worker / workers);
	*hi = 1 + (int)((long)inner * (worker + 1) / workers);
}

/* Counts points per plane, so the window's edges cut a sweep finely. */
static void sweep(struct wl_ctx *ctx, int worker, int lo, int hi, double *gosa)
{
	int i, j, k;

	for (i = lo; i < hi && wl_running(ctx); i++) {
		for (j = 1; j < st.ny - 1; j++) {
			for (k = 1; k < st.nz - 1; k++) {
				float s0 = AT(st.a[0], i, j, k) * AT(st.p, i + 1, j, k)
					+ AT(st.a[1], i, j, k) * AT(st.p, i, j + 1, k)
					+ AT(st.a[2], i, j, k) * AT(st.p, i, j, k + 1)
					+ AT(st.b[0], i, j, k) * (AT(st.p, i + 1, j + 1, k) - AT(st.p, i + 1, j - 1, k)
								- AT(st.p, i - 1, j + 1, k) + AT(st.p, i - 1, j - 1, k))
					+ AT(st.b[1], i, j, k) * (AT(st.p, i, j + 1, k + 1) - AT(st.p, i, j - 1, k + 1)
								- AT(st.p, i, j + 1, k - 1) + AT(st.p, i, j - 1, k - 1))
					+ AT(st.b[2], i, j, k) * (AT(st.p, i + 1, j, k + 1) - AT(st.p, i - 1, j, k + 1)
								- AT(st.p, i + 1, j, k - 1) + AT(st.p, i - 1, j, k - 1))
					+ AT(st.c[0], i, j, k) * AT(st.p, i - 1, j, k)
					+ AT(st.c[1], i, j, k) * AT(st.p, i, j - 1, k)
					+ AT(st.c[2], i, j, k) * AT(st.p, i, j, k - 1)
					+ AT(st.wrk1, i, j, k);
				float ss = (s0 * AT(st.a[3], i, j, k) - AT(st.p, i, j, k)) * AT(st.bnd, i, j, k);

				*gosa += (double)(ss * ss);
				AT(st.wrk2, i, j, k) = AT(st.p, i, j, k) + OMEGA * ss;
			}
		}
		wl_count(ctx, worker, (uint64_t)(st.ny - 2) * (uint64_t)(st.nz - 2));
	}
}

static void copy_back(int lo, int hi)
{
	size_t plane = (size_t)st.ny * (size_t)st.nz;

	memcpy(&AT(st.p, lo, 0, 0), &AT(st.wrk2, lo, 0, 0), plane * (size_t)(hi - lo) * sizeof(float));
}

static void st_worker(struct wl_ctx *ctx, int i)
{
	int lo, hi;

	/* the barrier counts every worker: if one did not start, nobody may
	 * wait at it */
	if (st.abort)
		return;
	slice(i, ctx->p->workers, &lo, &hi);
	for (;;) {
		if (i == 0)
			st.quit = !wl_running(ctx);
		pthread_barrier_wait(&st.bar);
		if (st.quit)
			return;
		sweep(ctx, i, lo, hi, &st.gosa[i]);
		pthread_barrier_wait(&st.bar);
		copy_back(lo, hi);
	}
}

static void st_free(void)
{
	int n;

	free(st.p);
	free(st.bnd);
	free(st.wrk1);
	free(st.wrk2);
	free(st.gosa);
	for (n = 0; n < 4; n++)
		free(st.a[n]);
	for (n = 0; n < 3; n++) {
		free(st.b[n]);
		free(st.c[n]);
	}
	memset(&st, 0, sizeof(st));
}

static int st_alloc(const struct wl_params *p, struct strbuf *err)
{
	size_t n = (size_t)p->nx * (size_t)p->ny * (size_t)p->nz;
	float **all[] = { &st.p, &st.a[0], &st.a[1], &st.a[2], &st.a[3], &st.b[0], &st.b[1],
			  &st.b[2], &st.c[0], &st.c[1], &st.c[2], &st.bnd, &st.wrk1, &st.wrk2 };
	size_t k;
	int i, j, l;

	st.nx = p->nx;
	st.ny = p->ny;
	st.nz = p->nz;
	for (k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
		*all[k] = calloc(n, sizeof(float));
		if (!*all[k]) {
			st_free();
			return strbuf_seterr(err, "grid %dx%dx%d: out of memory", p->nx, p->ny, p->nz);
		}
	}
	st.gosa = xcalloc((size_t)p->workers, sizeof(double));
	/* Himeno's initial state: unit coefficients, a pressure that grows
	 * quadratically along the outer axis, boundary mask and source zero-free */
	for (i = 0; i < st.nx; i++)
		for (j = 0; j < st.ny; j++)
			for (l = 0; l < st.nz; l++) {
				AT(st.a[0], i, j, l) = AT(st.a[1], i, j, l) = AT(st.a[2], i, j, l) = 1.0f;
				AT(st.a[3], i, j, l) = 1.0f / 6.0f;
				AT(st.c[0], i, j, l) = AT(st.c[1], i, j, l) = AT(st.c[2], i, j, l) = 1.0f;
				AT(st.bnd, i, j, l) = 1.0f;
				AT(st.p, i, j, l) = (float)(i * i) / (float)((st.nx - 1) * (st.nx - 1));
			}
	return 0;
}

static int st_run(struct wl_ctx *ctx, struct strbuf *err)
{
	const struct wl_params *p = ctx->p;
	int r;

	if (st_alloc(p, err) < 0)
		return -1;
	/* workers touch the barrier only after go, which follows every spawn */
	pthread_barrier_init(&st.bar, NULL, (unsigned)p->workers);
	r = wl_run_workers(ctx, WL_THREADS, st_worker, &st.abort, err);
	pthread_barrier_destroy(&st.bar);
	st_free();
	return r;
}

static void st_score(struct wl_ctx *ctx)
{
	double secs = ctx->t_end - ctx->t_begin;
	double points = (double)(ctx->ops_end - ctx->ops_begin);

	wl_metric(ctx, "mflops", secs > 0 ? points * FLOPS_PER_POINT / 1e6 / secs : 0, "MFLOPS", "higher");
	wl_metric(ctx, "points_per_sec", secs > 0 ? points / secs : 0, "points/s", "higher");
}

const struct workload_ops workload_stencil = {
	.name = "stencil",
	.run = st_run,
	.score_fn = st_score,
};
