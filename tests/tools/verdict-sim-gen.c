/*
 * verdict-sim's jobs, as documents (verdict-sim.c says what they measure).
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
 * Every random draw comes from a stream seeded by (seed, suite, CV, job,
 * side, boot), so boot k of a job is the same whether or not more boots
 * follow, the same in the A/A and in the shifted conditions of one CV
 * (common random numbers: the rates are each unbiased, their differences
 * less noisy) and the same whatever --parallel is.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "spec.h"
#include "monitor_catalog.h"
#include "stats.h"
#include "util.h"
#include "verdict-sim.h"
#include "banned.h"

#define SIM_CPUS 2		/* the embedded lab's machine: per-CPU rows cpu0, cpu1 */

/* ---- random numbers: xoshiro256**, seeded by splitmix64 ---- */

struct rng {
	struct stats_rng x;	/* daemon/analysis/stats.c's stream */
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
	const char *wl = p->def->name;
	int shared = p->mode == WL_THREADS && p->workers >= 2, mremap = !strcmp(wl, "mremap");
	double ops = score_level(wl, shared, p->workers);
	double remote_small = mremap ? 3 : 0.3;
	char name[96];

	snprintf(name, sizeof(name), "%s.%s", wl, p->def->score);
	if (!strcmp(wl, "fault-write")) {
		fam_add(c, name, p->def->score_unit, "lower", FK_SCORE, 2.0, 1, 0, 0);
		c->fams[c->nfams - 1].inverse = 1;
		fam_add(c, "fault-write.writes_per_sec", "writes/s", "higher", FK_SCORE, 5e5, 1, 0, 0);
		fam_add(c, "fault-write.rounds", "rounds", "neutral", FK_FIXED,
			p->rounds ? (double)p->rounds : 4096, 0, 0, 0);
		fam_add(c, "fault-write.usec_per_round", "us", "lower", FK_SCORE, 500, 1, 0, 0);
		c->fams[c->nfams - 1].inverse = 1;
	} else {
		fam_add(c, name, p->def->score_unit, "higher", FK_SCORE, ops, 1, 0, 0);
		if (!strcmp(wl, "stencil"))
			fam_add(c, "stencil.points_per_sec", "points/s", "higher", FK_SCORE, 5e7, 1, 0, 0);
		if (!strcmp(wl, "exec"))
			fam_add(c, "exec.elapsed_sec", "s", "lower", FK_SCORE, p->duration, 0, 0, 0);
	}
	c->headline = 0;
	/* the TCG plugin's rows (emulated machines only: put when the
	 * condition has a work CV) */
	c->kernel_insn = (long)c->nfams;
	snprintf(name, sizeof(name), "%s.kernel_insn_per_op", wl);
	fam_add(c, name, "insn/op", "lower", FK_INSN, shared ? 9000 : mremap ? 6000 : 4000, 0.5, 0, 0);
	snprintf(name, sizeof(name), "%s.user_insn_per_op", wl);
	fam_add(c, name, "insn/op", "lower", FK_INSN, 800, 0.5, 0, 0);
	snprintf(name, sizeof(name), "%s.spin_insn_per_op", wl);
	fam_add(c, name, "insn/op", "lower", FK_INSN, shared ? 3000 : 200, 0.5, 0, 0);
	c->fams[c->nfams - 1].wait = 1;
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

void shape_release(struct shape *sh)
{
	size_t i;

	for (i = 0; i < sh->ncases; i++) {
		json_decref(sh->cases[i].params);
		free(sh->cases[i].fams);
	}
	free(sh->cases);
	memset(sh, 0, sizeof(*sh));
}

int shape_from_suite(struct shape *sh, const struct cfg_suite *suite, struct strbuf *err)
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
			snprintf(c->workload, sizeof(c->workload), "%s", p->def->name);
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

/* ---- documents ---- */

/* The variance of the median of k standard normals (a table; pi/2k above) */
static double median_var_factor(int k)
{
	static const double f[] = { 1, 1, 0.5, 0.4487, 0.3433, 0.2868 };

	return k < (int)ARRAY_SIZE(f) ? f[k < 1 ? 1 : k] : M_PI / (2.0 * k);
}

static void put_metric(struct docgen *g, long long run, const char *name, double v, const char *unit,
		       const char *dir)
{
	json_array_append_new(g->metrics, json_pack("{s:I,s:s,s:f,s:s,s:s}", "run", (json_int_t)run,
						     "name", name, "value", v, "unit", unit, "direction", dir));
}

/* One fam's rows in one iteration: v (events over the window, %, ops/s),
 * and for a counter its rate and peak rate, its count per thousand
 * operations (ops > 0) and its per-CPU split. */
static void put_fam(struct docgen *g, long long run, const struct fam *f, double v, double secs,
		    double ops, struct rng *r)
{
	char name[128], unit[64];
	double per_sec = secs > 0 ? v / secs : 0, peak;

	if (f->kind == FK_INSN && !(g->c->wcv > 0))
		return;

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
	if (ops > 0) {
		snprintf(unit, sizeof(unit), "%s/kop", f->unit);
		snprintf(name, sizeof(name), "%s.per_kop", f->name);
		put_metric(g, run, name, 1000 * v / ops, unit, f->dir);
	}
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
	double spread = side ? o->spread_ratio : 1;
	double sig_tot = spread * sqrt(log(1 + g->c->cv * g->c->cv)), wcv = g->c->wcv;
	double sig_work = spread * sqrt(log(1 + wcv * wcv));
	double sig_wait = spread * sqrt(log(1 + wcv * o->wait_factor * wcv * o->wait_factor));
	double rho = o->rho, rho_c = sqrt(1 - rho * rho);
	double z_boot, *mu, *sig_w, *vals, *hl_iter;
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
	sig_w = calloc(sh->nfams_max, sizeof(*sig_w));
	vals = calloc(sh->nfams_max, sizeof(*vals));
	hl_iter = calloc(1024, sizeof(*hl_iter));
	if (!mu || !sig_w || !vals || !hl_iter)
		abort();
	z_boot = rng_gauss(&r);
	for (ci = 0; ci < sh->ncases; ci++) {
		const struct sim_case *c = &sh->cases[ci];
		int m = c->iterations < 1000 ? c->iterations : 1000, it;
		double z_case = rng_gauss(&r), hl_med, mode = 0;
		int nhl = 0;

		/* a second mode (--mode-rate, --mode-shift): the whole boot of
		 * the case, every window, its work rows up by mode_shift, as
		 * mremap's boots did in b0009 (+15%, 1 in 9). From a stream of
		 * its own, so the other draws stay those of the mode-free job. */
		if (o->mode_rate > 0) {
			struct rng rm;

			rng_seed(&rm, mix(h, 0x6d6f6465 + ci));
			if (rng_unit(&rm) < o->mode_rate)
				mode = log(1 + o->mode_shift);
		}

		/* the boot's level of each fam: boot, case and own effects; each
		 * fam's per-boot median has its class's CV, a part of it from
		 * the iterations within the boot */
		for (k = 0; k < c->nfams; k++) {
			double a = c->fams[k].coupling * o->coupling;
			double u = rho * z_boot + rho_c * (a * z_case + sqrt(1 - a * a) * rng_gauss(&r));
			double st = c->fams[k].kind != FK_INSN ? sig_tot : c->fams[k].wait ? sig_wait : sig_work;

			sig_w[k] = o->within * st;
			mu[k] = sqrt(fmax(0, st * st - median_var_factor(m) * sig_w[k] * sig_w[k])) * u;
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
			/* the operations of the window, for the counters per kop */
			double ops = 0;

			for (k = 0; k < c->nfams; k++) {
				const struct fam *f = &c->fams[k];
				double a = f->coupling * o->coupling;
				double e = a * e_case + sqrt(1 - a * a) * rng_gauss(&r);
				double lf = mu[k] + sig_w[k] * e + (warm ? log(0.93) : 0), v, unshifted = NAN;

				if (f->inverse)
					lf = -lf;
				switch (f->kind) {
				case FK_SCORE:
					v = unshifted = f->level * exp(lf);
					/* the power conditions' change: a regression */
					if (side && ((k == c->headline && ci == 0 && g->c->what == SHIFT_SCORE) ||
						     g->c->what == SHIFT_TIME_ALL))
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
				case FK_INSN:
					v = f->level * exp(lf + (f->wait ? 0 : mode));
					if (side && ((g->c->what == SHIFT_KERNEL_FIRST && ci == 0) ||
						     g->c->what == SHIFT_KERNEL_ALL) && (long)k == c->kernel_insn)
						v *= 1 + g->c->shift;
					break;
				default:
					v = 0;
				}
				vals[k] = v;
				/* SHIFT_TIME_ALL moves the time, not the work: the
				 * window's operations stay what they were */
				if (k == c->headline && !f->inverse)
					ops = (g->c->what == SHIFT_TIME_ALL ? unshifted : v) * secs;
				put_fam(g, run, f, v, secs, ops, &r);
			}
			/* runner.c: shootdowns per thousand operations of the window */
			if (c->spk_source >= 0 && vals[c->headline] > 0 && !c->fams[c->headline].inverse)
				put_metric(g, run, "tlb.shootdowns_per_kop",
					   1000 * vals[c->spk_source] / ops,
					   "shootdowns/kop", "lower");
			if (!warm && nhl < 1024)
				hl_iter[nhl++] = vals[c->headline];
		}
		hl_med = median_inplace(hl_iter, (size_t)nhl);
		if (boot < g->hl_boots && hl_med > 0)
			g->hl_log[((size_t)side * sh->ncases + ci) * (size_t)g->hl_boots + (size_t)boot] = log(hl_med);
	}
	free(mu);
	free(sig_w);
	free(vals);
	free(hl_iter);
}

void docgen_init(struct docgen *g, const struct shape *sh, const struct sim_opts *o,
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

void docgen_release(struct docgen *g)
{
	json_decref(g->runs);
	json_decref(g->metrics);
	json_decref(g->doc);
	free(g->hl_log);
}

void gen_boots(struct docgen *g, int from, int to)
{
	int b;

	for (b = from; b < to; b++) {
		gen_boot(g, 0, b);
		gen_boot(g, 1, b);
	}
}
