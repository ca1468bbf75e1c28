/*
 * verdict-sim: the shipped verdict rule, measured end to end (make bench,
 * tests/bench/b0008-verdict-sim.sh). Nothing of the rule is copied here:
 * every verdict comes from compare_sides() and every decision to add boots
 * from verdict_wants_more_boots(), on documents shaped like the ones
 * store_compare_doc() gives them (with "design": {"boots", "max_boots",
 * "look"} for the issue-11 compare, and the job in the provenance);
 * this file only reads a row's "verdict" and "headline" (and its spec,
 * case and metric, to find the shifted row) and the job's "verdict" back,
 * and counts. One file: shape, generator, driver and report serve the one
 * measurement.
 *
 * A simulated job is shaped like a suite of the lab config, read with the
 * daemon's own loader: each spec is expanded into cases by the agent's
 * spec_from_json(), and each case gets its headline metric and the counter
 * rows its monitors really produce (interrupts.TLB/CAL and their .per_sec,
 * .peak_per_sec and .cpuN, vmstat.nr_tlb_*, tlb_flush.<reason>, perf_stat.*,
 * procstat.busy_pct, tlb.shootdowns_per_kop), with levels like those of the
 * embedded lab's tlb suite: large counts where a shared mm flushes remote
 * TLBs, small integer counts with ties and zeros where it does not, rows
 * that are always 0, a busy_pct that sticks at 100.
 *
 * Noise, per boot: a boot effect shared by every row of the boot (weight
 * rho), a case effect shared by the case's headline and the counters that
 * follow its operations (coupling), and the row's own; the per-boot value
 * is log-normal with the condition's CV. Iterations within a boot add a
 * smaller noise (within * CV), so the per-boot median (what compare takes)
 * has the condition's CV; the per-boot CV actually realised by the
 * headline rows is printed beside the figures. Warm-up iterations are in
 * the documents (marked) and must be dropped by compare.
 *
 * The sequential design is the scheduler's: `boots` per side, compare,
 * and when verdict_wants_more_boots() says so, boots up to `max_boots`
 * (all at once, as sched.c adds them) and compare again; the second
 * comparison is the job's result. --fixed N runs N boots and looks once.
 * The power conditions make the first case's headline worse by the shift
 * on the patched side; the margin search runs the A/A jobs again with a
 * wider same_band in struct compare_rules.
 *
 * Every random draw comes from a stream seeded by (seed, suite, CV, job,
 * side, boot), so boot k of a job is the same whether or not more boots
 * follow, the same in the A/A and in the shifted conditions of one CV
 * (common random numbers: the rates are each unbiased, their differences
 * less noisy) and the same whatever --parallel is.
 */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "compare.h"
#include "config.h"
#include "spec.h"
#include "monitor.h"
#include "stats.h"
#include "util.h"
#include "banned.h"

#define MAX_LIST 16		/* CVs, shifts, bands */
#define MAX_PARALLEL 64
#define SIM_CPUS 2		/* the embedded lab's machine: per-CPU rows cpu0, cpu1 */

/* ---- random numbers: xoshiro256**, seeded by splitmix64 ---- */

struct rng {
	struct stats_rng x;	/* daemon/stats.c's stream */
	int have_gauss;
	double gauss;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	uint64_t x = h ^ (v + 0x632be59bd9b4e019ULL + (h << 6) + (h >> 2));

	return stats_splitmix64(&x);
}

/* FNV-1a */
static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static void rng_seed(struct rng *r, uint64_t seed)
{
	stats_rng_seed(&r->x, seed);
	r->have_gauss = 0;
}

static uint64_t rng_next(struct rng *r)
{
	return stats_rng_next(&r->x);
}

static double rng_unit(struct rng *r)
{
	return ((double)(rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
}

/* standard normal (Marsaglia's polar method) */
static double rng_gauss(struct rng *r)
{
	double u, v, s;

	if (r->have_gauss) {
		r->have_gauss = 0;
		return r->gauss;
	}
	do {
		u = 2 * rng_unit(r) - 1;
		v = 2 * rng_unit(r) - 1;
		s = u * u + v * v;
	} while (s >= 1 || s == 0);
	s = sqrt(-2 * log(s) / s);
	r->gauss = v * s;
	r->have_gauss = 1;
	return u * s;
}

/* Poisson: Knuth's product for small means, a rounded normal above */
static double rng_poisson(struct rng *r, double mean)
{
	double l, p = 1;
	int k = 0;

	if (mean <= 0)
		return 0;
	if (mean > 60)
		return fmax(0, floor(mean + sqrt(mean) * rng_gauss(r) + 0.5));
	l = exp(-mean);
	do {
		k++;
		p *= rng_unit(r);
	} while (p > l);
	return k - 1;
}

/* ---- the shape of a job ---- */

enum fam_kind {
	FK_SCORE,	/* a workload's metric, continuous (ops/s, or a time) */
	FK_COUNT,	/* a large counter: integer deltas, level in events/s */
	FK_SMALL,	/* a small counter: Poisson counts (ties, zeros), level in events/s */
	FK_ZERO,	/* a counter that never moves here */
	FK_PCT,		/* a share of CPU time, at most 100 */
	FK_FIXED,	/* a count fixed by the spec (fault-write's rounds) */
	FK_MAX
};

/* One metric and the rows derived from it (.per_sec, .peak_per_sec, .cpuN). */
struct fam {
	char name[96];
	const char *unit, *dir;
	enum fam_kind kind;
	double level;
	double coupling;	/* weight of the case's activity in its noise */
	int inverse;		/* a time: falls when the activity rises */
	int rates, per_cpu;
};

struct sim_case {
	int spec, cas;
	char workload[32];
	json_t *params;		/* as the agent reports them (with "mode") */
	double duration;
	int iterations, warmup;
	struct fam *fams;
	size_t nfams;
	size_t headline;	/* index of the case's headline fam */
	long spk_source;	/* fam tlb.shootdowns_per_kop is computed from, or -1 */
};

struct shape {
	const char *suite;
	struct sim_case *cases;
	size_t ncases;
	size_t nfams_max;
};

static void fam_add(struct sim_case *c, const char *name, const char *unit, const char *dir,
		    enum fam_kind kind, double level, double coupling, int rates, int per_cpu)
{
	struct fam *f;

	c->fams = realloc(c->fams, (c->nfams + 1) * sizeof(*c->fams));
	if (!c->fams)
		abort();
	f = &c->fams[c->nfams++];
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->unit = unit;
	f->dir = dir;
	f->kind = kind;
	f->level = level;
	f->coupling = coupling;
	f->rates = rates;
	f->per_cpu = per_cpu;
}

static long fam_find(const struct sim_case *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nfams; i++)
		if (!strcmp(c->fams[i].name, name))
			return (long)i;
	return -1;
}

/* The headline rate of a workload, roughly the embedded lab's (ops/s). */
static double score_level(const char *wl, int shared_mm, int workers)
{
	if (!strcmp(wl, "mprotect"))
		return shared_mm ? 10000 : 17000.0 * workers;
	if (!strcmp(wl, "mremap"))
		return 3500;
	if (!strcmp(wl, "tcp-rr"))
		return 20000;
	if (!strcmp(wl, "stencil"))
		return 500;
	return 1000;
}

/*
 * The rows of one case, as the agent's monitors register them (agents/
 * monitors/, runner.c's counter_metrics) and at levels like those the
 * embedded lab's tlb suite measured: with a shared mm on two CPUs
 * (threads, workers >= 2) every operation sends a shootdown, so the remote
 * counters follow the operations; otherwise they are small counts.
 */
static void case_fams(struct sim_case *c, const struct spec *sp, const struct wl_params *p)
{
	const char *wl = p->ops->name;
	int shared = p->mode == WL_THREADS && p->workers >= 2, mremap = !strcmp(wl, "mremap");
	double ops = score_level(wl, shared, p->workers);
	double remote_small = mremap ? 3 : 0.3;
	char name[96];

	snprintf(name, sizeof(name), "%s.%s", wl, p->ops->score);
	if (!strcmp(wl, "fault-write")) {
		fam_add(c, name, p->ops->score_unit, "lower", FK_SCORE, 2.0, 1, 0, 0);
		c->fams[c->nfams - 1].inverse = 1;
		fam_add(c, "fault-write.writes_per_sec", "writes/s", "higher", FK_SCORE, 5e5, 1, 0, 0);
		fam_add(c, "fault-write.rounds", "rounds", "neutral", FK_FIXED,
			p->rounds ? (double)p->rounds : 4096, 0, 0, 0);
		fam_add(c, "fault-write.usec_per_round", "us", "lower", FK_SCORE, 500, 1, 0, 0);
		c->fams[c->nfams - 1].inverse = 1;
	} else {
		fam_add(c, name, p->ops->score_unit, "higher", FK_SCORE, ops, 1, 0, 0);
		if (!strcmp(wl, "stencil"))
			fam_add(c, "stencil.points_per_sec", "points/s", "higher", FK_SCORE, 5e7, 1, 0, 0);
		if (!strcmp(wl, "exec"))
			fam_add(c, "exec.elapsed_sec", "s", "lower", FK_SCORE, p->duration, 0, 0, 0);
	}
	c->headline = 0;
	if (sp->monitors & monitor_bit("interrupts")) {
		fam_add(c, "interrupts.TLB", "interrupts", "lower", shared ? FK_COUNT : FK_SMALL,
			shared ? 0.85 * ops : remote_small, 0.9, 1, 1);
		fam_add(c, "interrupts.CAL", "interrupts", "lower", shared ? FK_COUNT : FK_SMALL,
			shared ? 1.0 * ops : 10, 0.9, 1, 1);
	}
	if (sp->monitors & monitor_bit("vmstat")) {
		fam_add(c, "vmstat.nr_tlb_remote_flush", "events", "lower", shared ? FK_COUNT : FK_SMALL,
			shared ? 0.95 * ops : remote_small, 0.9, 1, 0);
		fam_add(c, "vmstat.nr_tlb_remote_flush_received", "events", "lower",
			shared ? FK_COUNT : FK_SMALL, shared ? 0.85 * ops : remote_small, 0.9, 1, 0);
		fam_add(c, "vmstat.nr_tlb_local_flush_one", "events", "lower", mremap ? FK_SMALL : FK_COUNT,
			mremap ? 3 : ops, 0.9, 1, 0);
		fam_add(c, "vmstat.nr_tlb_local_flush_all", "events", "lower", mremap ? FK_COUNT : FK_ZERO,
			4 * ops, 0.9, 1, 0);
	}
	if (sp->monitors & monitor_bit("tracepoints")) {
		fam_add(c, "tlb_flush.flush_on_task_switch", "events", "lower", shared ? FK_COUNT : FK_SMALL,
			shared ? 400 : 7, 0, 1, 0);
		fam_add(c, "tlb_flush.remote_shootdown", "events", "lower", shared ? FK_COUNT : FK_SMALL,
			shared ? 0.85 * ops : remote_small, 0.9, 1, 0);
		fam_add(c, "tlb_flush.local_shootdown", "events", "lower", FK_ZERO, 0, 0, 1, 0);
		fam_add(c, "tlb_flush.local_mm_shootdown", "events", "lower", mremap ? FK_SMALL : FK_COUNT,
			mremap ? 3 : ops, 0.9, 1, 0);
		fam_add(c, "tlb_flush.remote_ipi_send", "events", "lower", shared ? FK_COUNT : FK_SMALL,
			shared ? 0.95 * ops : remote_small, 0.9, 1, 0);
		fam_add(c, "perf_stat.context_switches", "switches", "neutral", FK_COUNT,
			shared ? 2200 : 300, 0.3, 1, 0);
		fam_add(c, "perf_stat.page_faults", "faults", "neutral", FK_COUNT, 17, 0, 1, 0);
	}
	if (sp->monitors & monitor_bit("procstat"))
		fam_add(c, "procstat.busy_pct", "%", "neutral", FK_PCT,
			p->workers >= 2 ? (shared ? 96.5 : 99.9) : 50, 0.3, 0, 0);
	c->spk_source = fam_find(c, "interrupts.TLB");
	if (c->spk_source < 0)
		c->spk_source = fam_find(c, "vmstat.nr_tlb_remote_flush_received");
	if (c->spk_source < 0)
		c->spk_source = fam_find(c, "tlb_flush.remote_shootdown");
}

static void shape_release(struct shape *sh)
{
	size_t i;

	for (i = 0; i < sh->ncases; i++) {
		json_decref(sh->cases[i].params);
		free(sh->cases[i].fams);
	}
	free(sh->cases);
	memset(sh, 0, sizeof(*sh));
}

/* Expands the suite's specs into cases the way the agent does. */
static int shape_from_suite(struct shape *sh, const struct cfg_suite *suite, struct strbuf *err)
{
	json_t *spec_json;
	size_t si, ci;

	memset(sh, 0, sizeof(*sh));
	sh->suite = suite->name;
	json_array_foreach(suite->workloads, si, spec_json) {
		struct spec sp;

		if (spec_from_json(&sp, spec_json, err) < 0) {
			strbuf_addf(err, " (suite %s, spec %zu)", suite->name, si);
			shape_release(sh);
			return -1;
		}
		sh->cases = realloc(sh->cases, (sh->ncases + sp.ncases) * sizeof(*sh->cases));
		if (!sh->cases)
			abort();
		for (ci = 0; ci < sp.ncases; ci++) {
			const struct wl_params *p = &sp.cases[ci].p;
			struct sim_case *c = &sh->cases[sh->ncases++];

			memset(c, 0, sizeof(*c));
			c->spec = (int)si;
			c->cas = (int)ci;
			snprintf(c->workload, sizeof(c->workload), "%s", p->ops->name);
			/* runner.c's case_params: the case's params and its mode */
			c->params = json_deep_copy(sp.cases[ci].params);
			json_object_set_new(c->params, "mode", json_string(spec_mode_name(p->mode)));
			c->duration = p->duration > 0 ? p->duration : 1;
			c->iterations = sp.iterations;
			c->warmup = sp.warmup;
			case_fams(c, &sp, p);
			if (c->nfams > sh->nfams_max)
				sh->nfams_max = c->nfams;
		}
		spec_release(&sp);
	}
	if (!sh->ncases) {
		strbuf_addf(err, "suite %s has no cases", suite->name);
		return -1;
	}
	return 0;
}

/* ---- conditions and documents ---- */

struct sim_opts {
	int boots, max_boots;	/* max_boots == boots: fixed count, one look */
	double rho, coupling, within;
	uint64_t seed;
	int parallel;
};

struct cond {
	double cv;		/* per-boot coefficient of variation (0.02) */
	double shift;		/* the first headline row worse by this on patched */
	struct compare_rules rules;	/* the suite's, or one with a candidate same_band */
	int njobs;
};

/* The variance of the median of k standard normals (a table; pi/2k above) */
static double median_var_factor(int k)
{
	static const double f[] = { 1, 1, 0.5, 0.4487, 0.3433, 0.2868 };

	return k < (int)ARRAY_SIZE(f) ? f[k < 1 ? 1 : k] : M_PI / (2.0 * k);
}

struct docgen {
	const struct shape *sh;
	const struct sim_opts *o;
	const struct cond *c;
	int job;
	json_t *doc, *runs, *metrics;
	long long next_run;
	/* per side, case and boot: the log of the headline's per-boot median,
	 * to report the CV the generator really gave */
	double *hl_log;		/* [side][case][boot] */
	int hl_boots;
};

static void put_metric(struct docgen *g, long long run, const char *name, double v, const char *unit,
		       const char *dir)
{
	json_array_append_new(g->metrics, json_pack("{s:I,s:s,s:f,s:s,s:s}", "run", (json_int_t)run,
						     "name", name, "value", v, "unit", unit, "direction", dir));
}

/* One fam's rows in one iteration: v (events over the window, %, ops/s),
 * and for a counter its rate and peak rate and its per-CPU split. */
static void put_fam(struct docgen *g, long long run, const struct fam *f, double v, double secs,
		    struct rng *r)
{
	char name[128], unit[64];
	double per_sec = secs > 0 ? v / secs : 0, peak;

	put_metric(g, run, f->name, v, f->unit, f->dir);
	if (f->per_cpu) {
		double half = floor(v / 2);
		int k;

		for (k = 0; k < SIM_CPUS; k++) {
			snprintf(name, sizeof(name), "%s.cpu%d", f->name, k);
			put_metric(g, run, name, k ? v - half : half, f->unit, "neutral");
		}
	}
	if (!f->rates)
		return;
	snprintf(unit, sizeof(unit), "%s/s", f->unit);
	snprintf(name, sizeof(name), "%s.per_sec", f->name);
	put_metric(g, run, name, per_sec, unit, f->dir);
	/* the busiest one-second sample: above the average, integer counts
	 * for a small counter */
	if (f->kind == FK_SMALL || v < 50)
		peak = v > 0 ? ceil(v / secs) + rng_poisson(r, 0.3) : 0;
	else
		peak = per_sec * 1.12 * exp(0.03 * rng_gauss(r));
	snprintf(name, sizeof(name), "%s.peak_per_sec", f->name);
	put_metric(g, run, name, peak, unit, f->dir);
}

/*
 * Boot `boot` of `side` (0 base, 1 patched): a boot stage and its runs,
 * every case of every spec, warm-ups first, as store_runs_json and
 * store_metrics_json give them.
 */
static void gen_boot(struct docgen *g, int side, int boot)
{
	const struct shape *sh = g->sh;
	const struct sim_opts *o = g->o;
	const char *side_name = side ? "patched" : "base";
	double sig_tot = sqrt(log(1 + g->c->cv * g->c->cv));
	double rho = o->rho, rho_c = sqrt(1 - rho * rho);
	double z_boot, *mu, *vals, *hl_iter;
	char boot_id[40], build_id[16];
	uint64_t h;
	struct rng r;
	size_t ci, k;

	h = mix(mix(mix(mix(mix(o->seed, str_hash(sh->suite)),
				(uint64_t)llround(g->c->cv * 1e6)), (uint64_t)g->job), (uint64_t)side),
		(uint64_t)boot);
	rng_seed(&r, h);
	snprintf(boot_id, sizeof(boot_id), "%016llx%016llx", (unsigned long long)h,
		 (unsigned long long)mix(h, 1));
	snprintf(build_id, sizeof(build_id), "sim-%s", side_name);
	mu = calloc(sh->nfams_max, sizeof(*mu));
	vals = calloc(sh->nfams_max, sizeof(*vals));
	hl_iter = calloc(1024, sizeof(*hl_iter));
	if (!mu || !vals || !hl_iter)
		abort();
	z_boot = rng_gauss(&r);
	for (ci = 0; ci < sh->ncases; ci++) {
		const struct sim_case *c = &sh->cases[ci];
		int m = c->iterations < 1000 ? c->iterations : 1000, it;
		double sig_w = o->within * sig_tot;
		double sig_b = sqrt(fmax(0, sig_tot * sig_tot - median_var_factor(m) * sig_w * sig_w));
		double z_case = rng_gauss(&r), hl_med;
		int nhl = 0;

		/* the boot's level of each fam: boot, case and own effects */
		for (k = 0; k < c->nfams; k++) {
			double a = c->fams[k].coupling * o->coupling;
			double u = rho * z_boot + rho_c * (a * z_case + sqrt(1 - a * a) * rng_gauss(&r));

			mu[k] = sig_b * u;
		}
		for (it = 0; it < c->warmup + c->iterations; it++) {
			int warm = it < c->warmup;
			double e_case = rng_gauss(&r);
			double secs = c->duration * (1 + 0.002 * fabs(rng_gauss(&r)));
			json_t *params = json_deep_copy(c->params);
			long long run = g->next_run++;

			json_array_append_new(g->runs, json_pack(
				"{s:I,s:I,s:s,s:s,s:i,s:i,s:i,s:b,s:s,s:o,s:f,s:s,s:s}",
				"id", (json_int_t)run, "stage", (json_int_t)(2 * (2 * boot + side) + 2),
				"machine", "qemu1", "side", side_name, "spec", c->spec, "case", c->cas,
				"iteration", it, "warmup", warm, "workload", c->workload, "params", params,
				"duration_s", secs, "build_id", build_id, "boot_id", boot_id));
			for (k = 0; k < c->nfams; k++) {
				const struct fam *f = &c->fams[k];
				double a = f->coupling * o->coupling;
				double e = a * e_case + sqrt(1 - a * a) * rng_gauss(&r);
				double lf = mu[k] + sig_w * e + (warm ? log(0.93) : 0), v;

				if (f->inverse)
					lf = -lf;
				switch (f->kind) {
				case FK_SCORE:
					v = f->level * exp(lf);
					/* the power conditions' change: a regression */
					if (k == c->headline && side && ci == 0)
						v *= strcmp(f->dir, "lower") ? 1 - g->c->shift : 1 + g->c->shift;
					break;
				case FK_COUNT:
					v = floor(f->level * c->duration * exp(lf) + 0.5);
					break;
				case FK_SMALL:
					v = rng_poisson(&r, f->level * c->duration * exp(lf));
					break;
				case FK_PCT:
					v = fmin(100, f->level * exp(lf));
					break;
				case FK_FIXED:
					v = f->level;
					break;
				default:
					v = 0;
				}
				vals[k] = v;
				put_fam(g, run, f, v, secs, &r);
			}
			/* runner.c: shootdowns per thousand operations of the window */
			if (c->spk_source >= 0 && vals[c->headline] > 0 && !c->fams[c->headline].inverse)
				put_metric(g, run, "tlb.shootdowns_per_kop",
					   1000 * vals[c->spk_source] / (vals[c->headline] * secs),
					   "shootdowns/kop", "lower");
			if (!warm && nhl < 1024)
				hl_iter[nhl++] = vals[c->headline];
		}
		hl_med = median_inplace(hl_iter, (size_t)nhl);
		if (boot < g->hl_boots && hl_med > 0)
			g->hl_log[((size_t)side * sh->ncases + ci) * (size_t)g->hl_boots + (size_t)boot] = log(hl_med);
	}
	free(mu);
	free(vals);
	free(hl_iter);
}

static void docgen_init(struct docgen *g, const struct shape *sh, const struct sim_opts *o,
			const struct cond *c, int job)
{
	memset(g, 0, sizeof(*g));
	g->sh = sh;
	g->o = o;
	g->c = c;
	g->job = job;
	g->next_run = 1;
	g->runs = json_array();
	g->metrics = json_array();
	/* as store_compare_doc: the job in the provenance (the scheduler's
	 * max_boots), and the design the issue-11 compare reads (job_design:
	 * the first look's boots, the most, which look) */
	g->doc = json_pack("{s:O,s:O,s:[],s:{s:{s:I,s:s,s:s,s:i,s:i}},s:{},s:[],s:{s:i,s:i,s:i}}",
			   "runs", g->runs, "metrics", g->metrics, "profiles",
			   "provenance", "job", "id", (json_int_t)job + 1, "kind", "ab", "suite", sh->suite,
			   "boots", o->boots, "max_boots", o->max_boots,
			   "unavailable_by_side", "failed", "design", "boots", o->boots,
			   "max_boots", o->max_boots, "look", 1);
	if (!g->doc)
		abort();
	g->hl_boots = o->max_boots;
	g->hl_log = calloc(2 * sh->ncases * (size_t)o->max_boots, sizeof(*g->hl_log));
	if (!g->hl_log)
		abort();
}

static void docgen_release(struct docgen *g)
{
	json_decref(g->runs);
	json_decref(g->metrics);
	json_decref(g->doc);
	free(g->hl_log);
}

/* Boots [from, to) of both sides, interleaved base, patched, base... */
static void gen_boots(struct docgen *g, int from, int to)
{
	int b;

	for (b = from; b < to; b++) {
		gen_boot(g, 0, b);
		gen_boot(g, 1, b);
	}
}

/* ---- one job ---- */

enum verdict {
	V_REGRESSION,
	V_IMPROVEMENT,
	V_CHANGED,
	V_SAME,
	V_INCONCLUSIVE,
	V_UNAVAILABLE,
	V_MAX
};

static const char *const verdict_names[V_MAX] = {
	"regression", "improvement", "changed", "same", "inconclusive", "unavailable",
};

static int verdict_of_string(const char *s)
{
	int v;

	for (v = 0; s && v < V_MAX; v++)
		if (!strcmp(s, verdict_names[v]))
			return v;
	return V_UNAVAILABLE;
}

/* What one set of rules made of one job: its last comparison's counts. */
struct look {
	signed char verdict;	/* the job's, enum verdict */
	signed char shifted;	/* the first headline row's verdict */
	unsigned char boots;	/* per side, in the comparison that decided */
	unsigned char more;	/* verdict_wants_more_boots said yes after look 1 */
	unsigned short hl_rows, hl_called, ct_rows, ct_called;
};

struct job_result {
	int job;
	float ms[2];		/* compare_sides time: look 1, look 2 (0: none) */
	float hl_var;		/* pooled variance of the headline's log per-boot medians */
	struct look look;
};

static int called(int v)
{
	return v == V_REGRESSION || v == V_IMPROVEMENT || v == V_CHANGED;
}

static void read_comparison(const json_t *cmp, const struct sim_case *first, struct look *l)
{
	const char *hl_metric = first->fams[first->headline].name;
	const json_t *row;
	size_t i;

	memset(l, 0, sizeof(*l));
	l->verdict = (signed char)verdict_of_string(json_string_value(json_object_get(cmp, "verdict")));
	l->shifted = -1;
	json_array_foreach(json_object_get(cmp, "rows"), i, row) {
		int v = verdict_of_string(json_string_value(json_object_get(row, "verdict")));

		if (json_is_true(json_object_get(row, "headline"))) {
			l->hl_rows++;
			l->hl_called += called(v);
		} else {
			l->ct_rows++;
			l->ct_called += called(v);
		}
		if (json_integer_value(json_object_get(row, "spec")) == first->spec &&
		    json_integer_value(json_object_get(row, "case")) == first->cas &&
		    !strcmp(json_string_value(json_object_get(row, "metric")) ?: "", hl_metric))
			l->shifted = (signed char)v;
	}
}

static json_t *compare_timed(const json_t *doc, const struct compare_rules *rules, float *ret_ms)
{
	struct strbuf err = STRBUF_INIT;
	double t0 = mono_now();
	json_t *cmp = compare_sides(doc, "base", doc, "patched", rules, &err);

	if (!cmp) {
		fprintf(stderr, "verdict-sim: compare_sides: %s\n", err.buf);
		exit(1);
	}
	if (ret_ms)
		*ret_ms = (float)(1000 * (mono_now() - t0));
	strbuf_release(&err);
	return cmp;
}

/* One job, the scheduler's way: compare the first boots; when
 * verdict_wants_more_boots says so, add the boots up to max_boots and
 * compare again. */
static void run_job(const struct shape *sh, const struct sim_opts *o, const struct cond *c, int job,
		    struct job_result *res)
{
	struct docgen g;
	json_t *cmp;
	size_t i, n = 0;
	double ss = 0;

	memset(res, 0, sizeof(*res));
	res->job = job;
	docgen_init(&g, sh, o, c, job);
	gen_boots(&g, 0, o->boots);
	cmp = compare_timed(g.doc, &c->rules, &res->ms[0]);
	read_comparison(cmp, &sh->cases[0], &res->look);
	res->look.boots = (unsigned char)o->boots;
	if (verdict_wants_more_boots(cmp)) {
		json_decref(cmp);
		gen_boots(&g, o->boots, o->max_boots);
		/* as the store says once boots were added (job_design): the
		 * second look, the job's boots grown to max_boots */
		json_object_set_new(json_object_get(g.doc, "design"), "look", json_integer(2));
		json_object_set_new(json_object_get(json_object_get(g.doc, "provenance"), "job"), "boots",
				    json_integer(o->max_boots));
		cmp = compare_timed(g.doc, &c->rules, &res->ms[1]);
		read_comparison(cmp, &sh->cases[0], &res->look);
		res->look.boots = (unsigned char)o->max_boots;
		res->look.more = 1;
	}
	json_decref(cmp);
	/* the realised per-boot spread of the headline rows (first look's boots) */
	for (i = 0; i < 2 * sh->ncases; i++) {
		const double *v = g.hl_log + i * (size_t)g.hl_boots;
		double mean = 0;
		int b;

		if (o->boots < 2)
			break;
		for (b = 0; b < o->boots; b++)
			mean += v[b] / o->boots;
		for (b = 0; b < o->boots; b++)
			ss += (v[b] - mean) * (v[b] - mean);
		n += (size_t)o->boots - 1;
	}
	res->hl_var = n ? (float)(ss / (double)n) : 0;
	docgen_release(&g);
}

/* ---- running a condition in worker processes ---- */

static int run_cond(const struct shape *sh, const struct sim_opts *o, const struct cond *c,
		    struct job_result *out)
{
	int fds[MAX_PARALLEL], np = o->parallel < c->njobs ? o->parallel : c->njobs, i, status, rc = 0;
	pid_t pids[MAX_PARALLEL];
	size_t got[MAX_PARALLEL], want[MAX_PARALLEL];
	struct pollfd pfd[MAX_PARALLEL];
	int open_n;

	if (np < 1)
		np = 1;
	fflush(stdout);
	for (i = 0; i < np; i++) {
		int p[2];

		if (pipe(p) < 0) {
			perror("verdict-sim: pipe");
			exit(1);
		}
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("verdict-sim: fork");
			exit(1);
		}
		if (!pids[i]) {
			int j, w;

			close(p[0]);
			for (w = 0; w < i; w++)
				close(fds[w]);
			for (j = i; j < c->njobs; j += np) {
				struct job_result r;

				run_job(sh, o, c, j, &r);
				if (write_all(p[1], &r, sizeof(r)) < 0)
					_exit(1);
			}
			_exit(0);
		}
		close(p[1]);
		fds[i] = p[0];
		got[i] = 0;
		want[i] = (size_t)((c->njobs - i + np - 1) / np) * sizeof(struct job_result);
	}
	/* results arrive in job order per worker; each goes to its job's slot */
	open_n = np;
	while (open_n > 0) {
		int nfd = 0, w;

		for (w = 0; w < np; w++)
			if (fds[w] >= 0) {
				pfd[nfd].fd = fds[w];
				pfd[nfd].events = POLLIN;
				nfd++;
			}
		if (poll(pfd, (nfds_t)nfd, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("verdict-sim: poll");
			exit(1);
		}
		for (w = 0; w < np; w++) {
			struct job_result r;
			ssize_t k;
			int q, ready = 0;

			for (q = 0; q < nfd; q++)
				if (pfd[q].fd == fds[w] && pfd[q].revents)
					ready = 1;
			if (!ready)
				continue;
			/* a record is smaller than PIPE_BUF: written and read whole */
			k = read(fds[w], &r, sizeof(r));
			if (k == (ssize_t)sizeof(r) && r.job >= 0 && r.job < c->njobs) {
				out[r.job] = r;
				got[w] += sizeof(r);
			} else if (k <= 0) {
				close(fds[w]);
				fds[w] = -1;
				open_n--;
			} else {
				fprintf(stderr, "verdict-sim: short read from a worker\n");
				exit(1);
			}
		}
	}
	for (i = 0; i < np; i++) {
		if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) ||
		    got[i] != want[i])
			rc = -1;
	}
	return rc;
}

/* ---- figures ---- */

/*
 * A cell of CELL_W columns: "12.34±0.56" percent, or for a count of 0
 * "0 (<0.75)", the 95% upper bound (rule of three) beside it, and for all
 * of n "100 (>99.2)". Padded here: "±" is two bytes but one column.
 */
#define CELL_W 11
static const char *pct(char *buf, size_t len, double k, double n, double se)
{
	size_t w;
	int l;

	if (n <= 0)
		l = snprintf(buf, len, "-");
	else if (k == 0)
		l = snprintf(buf, len, "0 (<%.2g)", 300.0 / n);
	else if (k == n)
		l = snprintf(buf, len, "100 (>%.3g)", 100 - 300.0 / n);
	else
		l = snprintf(buf, len, "%.2f±%.2f", 100 * k / n, 100 * se);
	if (l < 0 || (size_t)l >= len)
		return buf;
	w = strstr(buf, "±") ? (size_t)l - 1 : (size_t)l;
	for (; w < CELL_W && (size_t)l + 1 < len; w++)
		buf[l++] = ' ';
	buf[l] = 0;
	return buf;
}

static double se_prop(double k, double n)
{
	double p = n > 0 ? k / n : 0;

	return n > 0 ? sqrt(p * (1 - p) / n) : 0;
}

/* A rate over rows: rows of one job are correlated, so the error comes
 * from the spread of the per-job counts (clustered by job). */
static void row_rate(const struct job_result *r, int n, int headline, double *ret_called,
		     double *ret_rows, double *ret_se)
{
	double called_n = 0, rows = 0, mean, ss = 0;
	int j;

	for (j = 0; j < n; j++) {
		called_n += headline ? r[j].look.hl_called : r[j].look.ct_called;
		rows += headline ? r[j].look.hl_rows : r[j].look.ct_rows;
	}
	mean = rows > 0 ? called_n / rows : 0;
	for (j = 0; j < n; j++) {
		double nr = headline ? r[j].look.hl_rows : r[j].look.ct_rows;
		double nc = headline ? r[j].look.hl_called : r[j].look.ct_called;

		ss += (nc - mean * nr) * (nc - mean * nr);
	}
	*ret_called = called_n;
	*ret_rows = rows;
	*ret_se = rows > 0 && n > 1 ? sqrt(ss * n / (n - 1)) / rows : 0;
}

static int count_verdict(const struct job_result *r, int n, int v)
{
	int j, c = 0;

	for (j = 0; j < n; j++)
		c += r[j].look.verdict == v;
	return c;
}

static int count_more(const struct job_result *r, int n)
{
	int j, c = 0;

	for (j = 0; j < n; j++)
		c += r[j].look.more;
	return c;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? -1 : x > y;
}

/* median compare_sides time of the first and of the second looks */
static void times(const struct job_result *r, int n, double *ret_m1, double *ret_m2, int *ret_n2)
{
	float *t = calloc((size_t)n + 1, sizeof(*t)), *t2 = calloc((size_t)n + 1, sizeof(*t2));
	int j, n2 = 0;

	if (!t || !t2)
		abort();
	for (j = 0; j < n; j++) {
		t[j] = r[j].ms[0];
		if (r[j].ms[1] > 0)
			t2[n2++] = r[j].ms[1];
	}
	qsort(t, (size_t)n, sizeof(*t), cmp_float);
	qsort(t2, (size_t)n2, sizeof(*t2), cmp_float);
	*ret_m1 = n ? (n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2) : 0;
	*ret_m2 = n2 ? (n2 % 2 ? t2[n2 / 2] : (t2[n2 / 2 - 1] + t2[n2 / 2]) / 2) : 0;
	*ret_n2 = n2;
	free(t);
	free(t2);
}

static double realised_cv(const struct job_result *r, int n)
{
	double s = 0;
	int j;

	for (j = 0; j < n; j++)
		s += r[j].hl_var;
	return n ? sqrt(exp(s / n) - 1) : 0;
}

/* ---- the command ---- */

static int parse_list(const char *s, double scale, double *out, int *ret_n)
{
	char buf[256], *p, *end;
	int n = 0;

	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return -1;
	for (p = buf; *p; p = end) {
		char *comma = strchr(p, ',');
		double v;

		end = comma ? comma + 1 : p + strlen(p);
		if (comma)
			*comma = 0;
		if (n >= MAX_LIST || parse_double(p, &v) < 0 || !(v >= 0 && v < 1000))
			return -1;
		out[n++] = v * scale;
	}
	*ret_n = n;
	return n ? 0 : -1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: verdict-sim [options] CONFIG\n"
		"  --suite NAME        the suite to shape the jobs like (default tlb)\n"
		"  --jobs N            A/A jobs per CV (400)\n"
		"  --power-jobs N      jobs per CV and shift (--jobs; 0: no power table)\n"
		"  --cv LIST           per-boot CVs in percent (1,2,5,10,20)\n"
		"  --shift LIST        headline shifts in percent for power (2,3,5,10)\n"
		"  --power-cv LIST     CVs of the power table (--cv)\n"
		"  --bands LIST        same_band candidates in percent, ascending, bisected\n"
		"                      (3,4,5,6,8,10,12,15,20)\n"
		"  --band-cv LIST      CVs at which the candidates run on the A/A jobs (2,5)\n"
		"  --band-jobs N       the candidates run on the first N A/A jobs (--jobs; 0: none)\n"
		"  --boots N           boots per side at the first look (5)\n"
		"  --max-boots N       boots per side after the second look (9)\n"
		"  --fixed N           N boots per side, one look\n"
		"  --rho R             weight of the boot effect shared by all rows (0.5)\n"
		"  --coupling A        weight of a case's activity in its counters (0.7)\n"
		"  --within W          iteration noise within a boot, times the CV (0.5)\n"
		"  --seed S            (1)\n"
		"  --parallel P        worker processes (2)\n"
		"  --time N            only time compare_sides on N A/A jobs at the first CV\n"
		"  --dump              print job 0's first-look document and comparison (first CV,\n"
		"                      first shift unless --power-jobs 0) and exit\n");
	exit(2);
}

static long arg_int(const char *opt, const char *v, long min, long max)
{
	long n;

	if (!v || parse_int_range(v, min, max, &n) < 0) {
		fprintf(stderr, "verdict-sim: %s: an integer from %ld to %ld\n", opt, min, max);
		exit(2);
	}
	return n;
}

static double arg_double(const char *opt, const char *v, double min, double max)
{
	double d;

	if (!v || parse_double(v, &d) < 0 || !(d >= min && d <= max)) {
		fprintf(stderr, "verdict-sim: %s: a number from %g to %g\n", opt, min, max);
		exit(2);
	}
	return d;
}

static void arg_list(const char *opt, const char *v, double *out, int *n)
{
	if (!v || parse_list(v, 0.01, out, n) < 0) {
		fprintf(stderr, "verdict-sim: %s: a comma-separated list of percentages\n", opt);
		exit(2);
	}
}

static struct job_result *results_new(int n)
{
	struct job_result *r = calloc((size_t)n + 1, sizeof(*r));

	if (!r)
		abort();
	return r;
}

static void run_or_die(const struct shape *sh, const struct sim_opts *o, const struct cond *c,
		       struct job_result *r)
{
	if (run_cond(sh, o, c, r) < 0) {
		fprintf(stderr, "verdict-sim: a worker failed\n");
		exit(1);
	}
}

static void cond_init(struct cond *c, const struct cfg_suite *suite, double cv, double shift, int njobs)
{
	memset(c, 0, sizeof(*c));
	c->rules = suite->rules;
	c->cv = cv;
	c->shift = shift;
	c->njobs = njobs;
}

/* A rate cell: the count as a percentage of n, with its standard error. */
#define CELL(buf, k, n) pct(buf, sizeof(buf), k, n, se_prop(k, n))

/* The A/A table; ret_same[i] gets the share of jobs called same at cvs[i]. */
static void aa_table(const struct shape *sh, const struct sim_opts *o, const struct cfg_suite *suite,
		     const double *cvs, int ncv, int jobs, double *ret_same)
{
	static const int shown[] = { V_REGRESSION, V_IMPROVEMENT, V_CHANGED, V_SAME, V_INCONCLUSIVE };
	char b[6][40];
	int hl_rows = 0, ct_rows = 0, i, j, k;

	printf("\nA/A (nothing changed), %d jobs per CV; rows called = regression, improvement or changed\n",
	       jobs);
	printf("%4s %6s %6s %5s | %-11s %-11s %-11s | %-11s %-11s %-11s %-11s %-11s\n", "CV", "real",
	       "ms", "look2", "row:headln", "row:counter", "job:anyrow", "job:regress", "job:improve",
	       "job:changed", "job:same", "job:inconcl");
	for (i = 0; i < ncv; i++) {
		struct cond c;
		struct job_result *r = results_new(jobs);
		double kc, nr, se, m1, m2;
		int n2, any = 0;

		cond_init(&c, suite, cvs[i], 0, jobs);
		run_or_die(sh, o, &c, r);
		times(r, jobs, &m1, &m2, &n2);
		for (j = 0; j < jobs; j++)
			any += r[j].look.hl_called || r[j].look.ct_called;
		hl_rows = r[0].look.hl_rows;
		ct_rows = r[0].look.ct_rows;
		printf("%3g%% %5.2f%% %6.1f %4.0f%% |", 100 * cvs[i], 100 * realised_cv(r, jobs), m1,
		       100.0 * count_more(r, jobs) / jobs);
		row_rate(r, jobs, 1, &kc, &nr, &se);
		printf(" %s", pct(b[0], sizeof(b[0]), kc, nr, se));
		row_rate(r, jobs, 0, &kc, &nr, &se);
		printf(" %s", pct(b[1], sizeof(b[1]), kc, nr, se));
		printf(" %s |", CELL(b[2], any, jobs));
		for (k = 0; k < (int)ARRAY_SIZE(shown); k++)
			printf(" %s", CELL(b[3], count_verdict(r, jobs, shown[k]), jobs));
		printf("\n");
		fflush(stdout);
		ret_same[i] = (double)count_verdict(r, jobs, V_SAME) / jobs;
		free(r);
	}
	printf("%-4s %6s %6s %5s | %-11s %-11s %-11s | %-11s %-11s %-11s %-11s\n", "goal", "", "", "", "",
	       "", "", "<= 1", "<= 1", "", ">= 80 at 2,5");
	printf("a job has %d headline and %d counter rows. real: the per-boot CV of the headline rows as "
	       "generated;\nms: median compare_sides time at the first look; look2: jobs that added boots "
	       "(the job is then\njudged by its second comparison)\n", hl_rows, ct_rows);
}

/* The A/A jobs of one CV under one same_band; returns the share called same. */
static double band_row(const struct shape *sh, const struct sim_opts *o, const struct cfg_suite *suite,
		       double cv, double band, int jobs)
{
	struct cond c;
	struct job_result *r = results_new(jobs);
	double kc, nr, se;
	char b[4][40];
	int same;

	cond_init(&c, suite, cv, 0, jobs);
	c.rules.same_band = band;
	run_or_die(sh, o, &c, r);
	same = count_verdict(r, jobs, V_SAME);
	row_rate(r, jobs, 1, &kc, &nr, &se);
	printf("%3g%% %4g%% %4.0f%% | %s %s %s %s\n", 100 * cv, 100 * band, 100.0 * count_more(r, jobs) / jobs,
	       CELL(b[0], same, jobs), CELL(b[1], count_verdict(r, jobs, V_REGRESSION), jobs),
	       CELL(b[2], count_verdict(r, jobs, V_IMPROVEMENT), jobs), pct(b[3], sizeof(b[3]), kc, nr, se));
	fflush(stdout);
	free(r);
	return (double)same / jobs;
}

/*
 * The narrowest candidate same_band under which 80% of the A/A jobs of a
 * CV are called same, by bisection over the candidates (the share of same
 * grows with the band). Each candidate runs whole jobs: a wider band also
 * changes which jobs take a second look.
 */
static void band_search(const struct shape *sh, const struct sim_opts *o, const struct cfg_suite *suite,
			const double *cvs, const double *aa_same, int ncv, const double *bands, int nband,
			int jobs)
{
	int i;

	printf("\nsame_band it takes: the first %d A/A jobs of a CV under candidate same_bands "
	       "(struct compare_rules),\nbisecting the candidates for the narrowest with >= 80%% same; "
	       "each decides its second looks anew\n", jobs);
	printf("%4s %5s %5s | %-11s %-11s %-11s %-11s\n", "CV", "band", "look2", "job:same", "job:regress",
	       "job:improve", "row:headln");
	for (i = 0; i < ncv; i++) {
		int lo = 0, hi = nband;	/* the answer is in [lo, hi]; hi: none */

		if (aa_same[i] >= 0.8) {
			printf("  at %g%% CV: the suite's same_band %g%% already (A/A table)\n", 100 * cvs[i],
			       100 * suite->rules.same_band);
			continue;
		}
		while (lo < hi) {
			int mid = (lo + hi) / 2;

			if (bands[mid] > suite->rules.same_band &&
			    band_row(sh, o, suite, cvs[i], bands[mid], jobs) >= 0.8)
				hi = mid;
			else
				lo = mid + 1;
		}
		if (lo == nband)
			printf("  at %g%% CV: no candidate up to %g%% gets 80%% same\n", 100 * cvs[i],
			       100 * bands[nband - 1]);
		else
			printf("  at %g%% CV: same_band %g%% (the narrowest candidate with >= 80%% same)\n",
			       100 * cvs[i], 100 * bands[lo]);
	}
}

static void power_table(const struct shape *sh, const struct sim_opts *o, const struct cfg_suite *suite,
			const double *cvs, int ncv, const double *shifts, int nshift, int jobs)
{
	const struct sim_case *c0 = &sh->cases[0];
	struct strbuf pt = STRBUF_INIT;
	char b[2][40], h[40];
	const char *key;
	json_t *v;
	int i, k, j;

	json_object_foreach(c0->params, key, v)
		if (strcmp(key, "workload") && strcmp(key, "duration")) {
			char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

			strbuf_addf(&pt, " %s=%s", key, json_is_string(v) ? json_string_value(v) : t ? t : "?");
			free(t);
		}
	printf("\npower: %s (%s) made worse by the shift on patched, %d jobs per cell;\n"
	       "right: that row is called regression; job: the job's verdict is regression\n",
	       c0->fams[c0->headline].name, pt.len ? pt.buf + 1 : c0->workload, jobs);
	strbuf_release(&pt);
	printf("%4s", "CV");
	for (k = 0; k < nshift; k++) {
		snprintf(h, sizeof(h), "%g%%: right", 100 * shifts[k]);
		printf(" | %-11s %-11s", h, "job");
	}
	printf("\n");
	for (i = 0; i < ncv; i++) {
		printf("%3g%%", 100 * cvs[i]);
		for (k = 0; k < nshift; k++) {
			struct cond c;
			struct job_result *r = results_new(jobs);
			int right = 0, jobreg = 0;

			cond_init(&c, suite, cvs[i], shifts[k], jobs);
			run_or_die(sh, o, &c, r);
			for (j = 0; j < jobs; j++) {
				right += r[j].look.shifted == V_REGRESSION;
				jobreg += r[j].look.verdict == V_REGRESSION;
			}
			printf(" | %s %s", CELL(b[0], right, jobs), CELL(b[1], jobreg, jobs));
			fflush(stdout);
			free(r);
		}
		printf("\n");
	}
	printf("goal: 5%% shift at 2%% CV: right >= 95\n");
}

int main(int argc, char **argv)
{
	double cvs[MAX_LIST] = { 0.01, 0.02, 0.05, 0.10, 0.20 }, shifts[MAX_LIST] = { 0.02, 0.03, 0.05, 0.10 };
	double pcvs[MAX_LIST], bands[MAX_LIST] = { 0.03, 0.04, 0.05, 0.06, 0.08, 0.10, 0.12, 0.15, 0.20 };
	double bcvs[MAX_LIST] = { 0.02, 0.05 }, aa_same[MAX_LIST];
	int ncv = 5, nshift = 4, npcv = -1, nband = 9, nbcv = 2, jobs = 400, pjobs = -1, bjobs = -1;
	int time_n = 0, dump = 0, i;
	struct sim_opts o = { 5, 9, 0.5, 0.7, 0.5, 1, 2 };
	const char *suite_name = "tlb", *config = NULL;
	struct strbuf err = STRBUF_INIT;
	struct lab_config *cfg = NULL;
	const struct cfg_suite *suite;
	struct shape sh;
	double t_start = mono_now();

	/* a job's documents are a few thousand small objects freed at once:
	 * without fastbins glibc skips consolidating them, a quarter of the
	 * run time otherwise (the figures are the same either way) */
	mallopt(M_MXFAST, 0);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (a[0] != '-') {
			if (config)
				usage();
			config = a;
			continue;
		}
		if (!strcmp(a, "--dump")) {
			dump = 1;
			continue;
		}
		i++;
		if (!strcmp(a, "--suite") && v)
			suite_name = v;
		else if (!strcmp(a, "--jobs"))
			jobs = (int)arg_int(a, v, 1, 1000000);
		else if (!strcmp(a, "--power-jobs"))
			pjobs = (int)arg_int(a, v, 0, 1000000);
		else if (!strcmp(a, "--band-jobs"))
			bjobs = (int)arg_int(a, v, 0, 1000000);
		else if (!strcmp(a, "--cv"))
			arg_list(a, v, cvs, &ncv);
		else if (!strcmp(a, "--shift"))
			arg_list(a, v, shifts, &nshift);
		else if (!strcmp(a, "--power-cv"))
			arg_list(a, v, pcvs, &npcv);
		else if (!strcmp(a, "--bands"))
			arg_list(a, v, bands, &nband);
		else if (!strcmp(a, "--band-cv"))
			arg_list(a, v, bcvs, &nbcv);
		else if (!strcmp(a, "--boots"))
			o.boots = (int)arg_int(a, v, 1, 100);
		else if (!strcmp(a, "--max-boots"))
			o.max_boots = (int)arg_int(a, v, 1, 100);
		else if (!strcmp(a, "--fixed"))
			o.boots = o.max_boots = (int)arg_int(a, v, 1, 100);
		else if (!strcmp(a, "--rho"))
			o.rho = arg_double(a, v, 0, 1);
		else if (!strcmp(a, "--coupling"))
			o.coupling = arg_double(a, v, 0, 1);
		else if (!strcmp(a, "--within"))
			o.within = arg_double(a, v, 0, 0.9);
		else if (!strcmp(a, "--seed"))
			o.seed = (uint64_t)arg_int(a, v, 0, 1L << 40);
		else if (!strcmp(a, "--parallel"))
			o.parallel = (int)arg_int(a, v, 1, MAX_PARALLEL);
		else if (!strcmp(a, "--time"))
			time_n = (int)arg_int(a, v, 1, 100000);
		else
			usage();
	}
	if (!config)
		usage();
	if (o.max_boots < o.boots) {
		fprintf(stderr, "verdict-sim: --max-boots %d is below --boots %d\n", o.max_boots, o.boots);
		return 2;
	}
	if (npcv < 0) {
		memcpy(pcvs, cvs, sizeof(cvs));
		npcv = ncv;
	}
	qsort(bands, (size_t)nband, sizeof(*bands), cmp_double);	/* bisected */
	if (pjobs < 0)
		pjobs = jobs;
	if (bjobs < 0)
		bjobs = jobs;
	if (config_load(config, &cfg, &err) < 0) {
		fprintf(stderr, "verdict-sim: %s\n", err.buf);
		return 1;
	}
	suite = config_suite(cfg, suite_name);
	if (!suite) {
		fprintf(stderr, "verdict-sim: no suite %s in %s\n", suite_name, config);
		return 1;
	}
	if (shape_from_suite(&sh, suite, &err) < 0) {
		fprintf(stderr, "verdict-sim: %s\n", err.buf);
		return 1;
	}

	if (dump) {
		/* one job's first-look document and its comparison, to look at */
		struct cond c;
		struct docgen g;
		json_t *cmp, *out;

		cond_init(&c, suite, cvs[0], nshift && pjobs ? shifts[0] : 0, 1);
		docgen_init(&g, &sh, &o, &c, 0);
		gen_boots(&g, 0, o.boots);
		cmp = compare_timed(g.doc, &c.rules, NULL);
		out = json_pack("{s:O,s:O,s:b}", "input", g.doc, "comparison", cmp, "wants_more_boots",
				verdict_wants_more_boots(cmp));
		json_dumpf(out, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(8));
		putchar('\n');
		json_decref(out);
		json_decref(cmp);
		docgen_release(&g);
	} else if (time_n) {
		struct cond c;
		struct job_result *r = results_new(time_n);
		double m1, m2;
		int n2;

		cond_init(&c, suite, cvs[0], 0, time_n);
		run_or_die(&sh, &o, &c, r);
		times(r, time_n, &m1, &m2, &n2);
		printf("compare_sides, suite %s, A/A at %g%% CV: median %.1f ms at %d boots per side (%d jobs)",
		       suite->name, 100 * cvs[0], m1, o.boots, time_n);
		if (n2)
			printf(", %.1f ms at %d (%d second looks)", m2, o.max_boots, n2);
		printf("; %.1f s in all, %d worker(s)\n", mono_now() - t_start, o.parallel);
		free(r);
	} else {
		printf("suite %s of %s: %zu cases; ", suite->name, config, sh.ncases);
		if (o.max_boots > o.boots)
			printf("%d boots per side, %d when verdict_wants_more_boots() says so\n", o.boots,
			       o.max_boots);
		else
			printf("%d boots per side, one look\n", o.boots);
		printf("noise: log-normal per boot; boot effect shared by all rows rho %.2f, case activity "
		       "coupling %.2f,\niterations within a boot %.2f x CV; seed %llu\n", o.rho, o.coupling,
		       o.within, (unsigned long long)o.seed);
		printf("rates in %% ± Monte-Carlo standard error (row rates clustered by job); "
		       "0 (<x): none seen, 95%% bound x\n");
		aa_table(&sh, &o, suite, cvs, ncv, jobs, aa_same);
		if (nband && nbcv && bjobs) {
			/* the band CVs' A/A share at the suite's band, where the table has it */
			double bsame[MAX_LIST];
			int b, k;

			for (b = 0; b < nbcv; b++) {
				bsame[b] = 0;
				for (k = 0; k < ncv; k++)
					if (fabs(cvs[k] - bcvs[b]) < 1e-9)
						bsame[b] = aa_same[k];
			}
			band_search(&sh, &o, suite, bcvs, bsame, nbcv, bands, nband, bjobs);
		}
		if (nshift && npcv && pjobs)
			power_table(&sh, &o, suite, pcvs, npcv, shifts, nshift, pjobs);
		printf("\n%.0f s in all, %d worker(s)\n", mono_now() - t_start, o.parallel);
	}
	shape_release(&sh);
	config_free(cfg);
	strbuf_release(&err);
	return 0;
}
