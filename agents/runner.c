/*
 * (Over 800 lines on purpose: one state under one mutex, which the sampler
 * thread, the window's edge hooks and the iterations all touch; split, each
 * part would reach into the others' fields.)
 *
 * The runner owns the measurement. Its state (counter snapshots, the current
 * window, peaks) is guarded by one mutex shared with the sampler thread,
 * which wakes every interval, reads every counter, writes a "sample" line of
 * per-interval deltas and, inside a window, keeps the peak rate of each
 * counter. Each iteration runs in a workload process of its own
 * (workloads/wlproc.h), apart from the sampler, the monitors and perf. The
 * window's edges come from that process, which waits at each edge until the
 * runner's hook has run: on_begin reads the counters and re-phases the
 * sampler to the window, and on_end reads them again and writes the last,
 * partial sample, so the samples of a window add up to its totals.
 *
 * Cumulative counters are always turned into deltas over the window; the
 * per-second average is the delta over the window's length, the peak is the
 * highest rate of a full sampling interval.
 */
#include "runner.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "facts.h"
#include "insn_marker.h"
#include "jsonget.h"
#include "monitors/monitor.h"
#include "monitors/kfunc.h"
#include "monitors/profile.h"
#include "util.h"
#include "workloads/wlproc.h"
#include "banned.h"

#define PROFILE_HZ 199

struct runner {
	const struct spec *s;
	FILE *out;
	int table;
	int output_failed;
	pthread_mutex_t out_lock;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t sampler;
	int quit;
	/* the sampler runs its own code: whatever the thread's start-up
	 * allocates is done, so fork() may follow (see wlproc.h) */
	int sampler_up;
	pthread_cond_t up_cond;
	struct monitor_set ms;
	size_t nc;
	uint64_t *v_begin, *v_end, *v_prev, *v_now;
	double *peak;
	int monitor_failed;
	struct strbuf monitor_err;
	double t0, t_prev, next_tick;
	int in_window, case_i, iter_i, warm;
	/* the sample lines of the open window, written once it closes (below) */
	struct strbuf held;
	/* windows opened by this process: the n-th pair of instruction
	 * markers the QEMU plugin sees from this agent is window n */
	int windows;

	/* the neighbour runs in a child process with its own shared counters */
	struct wl_ctx nctx;
	pid_t npid;
	uint64_t n_begin, n_end;

	struct profile *prof;
	struct strbuf prof_err;
	/* kernel function time over the window (kfunc.h), with the profile */
	struct kfunc *kf;
	json_t *kf_result;
	struct strbuf kf_err;

	int cpus[CPU_SETSIZE];
	int ncpus;
};

/* ---- output ---- */

/*
 * A window's samples are held and written after it closes: a line written
 * while it is open goes out through the guest's SSH session (encrypted by
 * its sshd, sent by its network stack, acknowledged when the host gets to
 * it), and that work would land in the window's instruction counts, by an
 * amount that follows the host's timing. Past HELD_MAX bytes they go out
 * anyway (a very long window with a short interval). A spec with
 * live_samples writes them as they are taken, to watch a window live.
 * Called with r->lock.
 */
#define HELD_MAX (1u << 20)

static void flush_held(struct runner *r)
{
	if (!r->held.len)
		return;
	pthread_mutex_lock(&r->out_lock);
	if (fputs(r->held.buf, r->out) < 0 || fflush(r->out) < 0)
		r->output_failed = 1;
	pthread_mutex_unlock(&r->out_lock);
	strbuf_reset(&r->held);
}

/* obj as one line (obj is consumed): appended to r->held when `held`
 * (above), else written now; nothing with --table. */
static void put_line(struct runner *r, json_t *obj, int held)
{
	char *line;

	if (r->table) {
		json_decref(obj);
		return;
	}
	line = json_dumps(obj, JSON_COMPACT | JSON_REAL_PRECISION(12));
	json_decref(obj);
	if (!line)
		return;
	if (held) {
		if (r->held.len + strlen(line) + 1 > HELD_MAX)
			flush_held(r);
		strbuf_addstr(&r->held, line);
		strbuf_addch(&r->held, '\n');
	} else {
		pthread_mutex_lock(&r->out_lock);
		if (fputs(line, r->out) < 0 || fputc('\n', r->out) < 0 || fflush(r->out) < 0)
			r->output_failed = 1;
		pthread_mutex_unlock(&r->out_lock);
	}
	free(line);
}

static void emit(struct runner *r, json_t *obj)
{
	put_line(r, obj, 0);
}

/* ---- counters ---- */

/* edges: at a window's edge (or the run's start), when the counters that
 * are read at edges only are read too */
static int read_counters(struct runner *r, uint64_t *vals, int edges)
{
	if (r->monitor_failed)
		return -1;
	if (monitor_set_read(&r->ms, vals, edges, &r->monitor_err) < 0) {
		r->monitor_failed = 1;
		return -1;
	}
	return 0;
}

static double busy_pct(const struct runner *r, const uint64_t *a, const uint64_t *b)
{
	long busy = monitor_counter_set_find(&r->ms.cs, "procstat.busy_ticks");
	long total = monitor_counter_set_find(&r->ms.cs, "procstat.total_ticks");
	uint64_t dt;

	if (busy < 0 || total < 0)
		return NAN;
	dt = b[total] - a[total];
	return dt ? 100.0 * (double)(b[busy] - a[busy]) / (double)dt : NAN;
}

static int is_procstat_tick(const struct counter *c)
{
	return !strncmp(c->name, "procstat.", 9);
}

/* Writes one sample: deltas since the previous one; edges as for
 * read_counters (the counters read at edges only are in no sample: they
 * keep their last edge's values). Called with r->lock. */
static void take_sample(struct runner *r, double now, int edges)
{
	double dt = now - r->t_prev;
	json_t *values, *obj;
	double bp;
	size_t i;

	memcpy(r->v_now, r->v_prev, r->nc * sizeof(uint64_t));
	if (read_counters(r, r->v_now, edges) < 0 || dt <= 0)
		return;
	values = json_object();
	for (i = 0; i < r->nc; i++) {
		const struct counter *c = &r->ms.cs.c[i];
		uint64_t d = r->v_now[i] - r->v_prev[i];

		if (is_procstat_tick(c) || c->edges_only)
			continue;
		json_object_set_new(values, c->name, json_integer((json_int_t)d));
		if (r->in_window && !c->per_cpu && dt >= 0.5 * r->s->interval &&
		    (double)d / dt > r->peak[i])
			r->peak[i] = (double)d / dt;
	}
	bp = busy_pct(r, r->v_prev, r->v_now);
	if (!isnan(bp))
		json_object_set_new(values, "procstat.busy_pct", json_real(bp));
	obj = json_pack("{s:s,s:f,s:f,s:i,s:i,s:b,s:b,s:o}", "type", "sample",
			"t", now - r->t0, "dt", dt, "case", r->case_i, "iteration", r->iter_i,
			"warmup", r->warm, "window", r->in_window, "values", values);
	put_line(r, obj, r->in_window && !r->s->live_samples);
	memcpy(r->v_prev, r->v_now, r->nc * sizeof(uint64_t));
	r->t_prev = now;
}

static void *sampler_main(void *arg)
{
	struct runner *r = arg;

	prctl(PR_SET_NAME, "tlblab-sampler");
	pthread_mutex_lock(&r->lock);
	r->sampler_up = 1;
	pthread_cond_signal(&r->up_cond);
	while (!r->quit) {
		double now = mono_now();

		if (now < r->next_tick) {
			struct timespec ts;
			double wake = r->next_tick;

			/* the condvar runs on CLOCK_MONOTONIC, like mono_now */
			ts.tv_sec = (time_t)wake;
			ts.tv_nsec = (long)((wake - (double)ts.tv_sec) * 1e9);
			pthread_cond_timedwait(&r->cond, &r->lock, &ts);
			continue;
		}
		take_sample(r, now, 0);
		r->next_tick += r->s->interval;
		if (r->next_tick < now)
			r->next_tick = now + r->s->interval;
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* ---- window hooks ---- */

static void on_begin(void *arg)
{
	struct runner *r = arg;
	double now;
	size_t i;

	if (r->s->profile && !r->warm) {
		strbuf_reset(&r->kf_err);
		/* ftrace patches the traced functions now: before the counters */
		r->kf = kfunc_start(kfunc_default_names, &r->kf_err);
		strbuf_reset(&r->prof_err);
		/* returns once perf is recording */
		r->prof = profile_start(PROFILE_HZ, &r->prof_err);
	}
	pthread_mutex_lock(&r->lock);
	now = mono_now();
	read_counters(r, r->v_begin, 1);
	/* the instruction counts of an emulated machine start here too */
	insn_marker_begin();
	r->windows++;
	memcpy(r->v_prev, r->v_begin, r->nc * sizeof(uint64_t));
	for (i = 0; i < r->nc; i++)
		r->peak[i] = -1;
	r->t_prev = now;
	r->next_tick = now + r->s->interval;
	r->in_window = 1;
	if (r->npid > 0)
		r->n_begin = wl_ops_total(&r->nctx);
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

static void on_end(void *arg)
{
	struct runner *r = arg;
	double now;

	pthread_mutex_lock(&r->lock);
	insn_marker_end();
	now = mono_now();
	take_sample(r, now, 1);
	memcpy(r->v_end, r->v_prev, r->nc * sizeof(uint64_t));
	r->in_window = 0;
	flush_held(r);
	if (r->npid > 0)
		r->n_end = wl_ops_total(&r->nctx);
	pthread_mutex_unlock(&r->lock);
	/* perf stops recording now; its report is made after the workers exit */
	profile_halt(r->prof);
	if (r->kf) {
		r->kf_result = kfunc_stop(r->kf, &r->kf_err);
		r->kf = NULL;
	}
}


/* ---- metrics of one window ---- */

static void set_metric(json_t *metrics, json_t *info, const char *name, double v,
		       const char *unit, const char *dir)
{
	json_object_set_new(metrics, name, json_real(v));
	json_object_set_new(info, name, json_pack("{s:s,s:s}", "unit", unit, "direction", dir));
}

/* The operations of a window: the workload's count, or for exec what the
 * command reported, when it did. */
static double window_ops(const struct wlproc_result *w)
{
	json_t *bops = json_object_get(w->metrics, "exec.bogo_ops");

	return bops ? json_number_value(bops) : (double)(w->ops_end - w->ops_begin);
}

static void counter_metrics(struct runner *r, const struct wlproc_result *w, json_t *unavailable)
{
	double secs = w->t_end - w->t_begin;
	static const char *const shootdown_sources[] = {
		"interrupts.TLB", "vmstat.nr_tlb_remote_flush_received", "tlb_flush.remote_shootdown",
	};
	double ops = window_ops(w);
	size_t i;
	double bp;

	if (r->monitor_failed)
		return;
	for (i = 0; i < r->nc; i++) {
		const struct counter *c = &r->ms.cs.c[i];
		double d = (double)(r->v_end[i] - r->v_begin[i]);
		const char *dir = monitor_metric_dir_name(c->dir);
		char name[COUNTER_NAME_MAX + 16], unit[64];

		if (is_procstat_tick(c))
			continue;
		set_metric(w->metrics, w->info, c->name, d, c->unit, dir);
		if (c->per_cpu || c->raw_only)
			continue;
		snprintf(unit, sizeof(unit), "%s/s", c->unit);
		snprintf(name, sizeof(name), "%s.per_sec", c->name);
		set_metric(w->metrics, w->info, name, secs > 0 ? d / secs : 0, unit, dir);
		if (r->peak[i] >= 0) {
			snprintf(name, sizeof(name), "%s.peak_per_sec", c->name);
			set_metric(w->metrics, w->info, name, r->peak[i], unit, dir);
		}
		/* per operation: what the comparison tests, since a slower
		 * kernel also lowers every count over a fixed window */
		if (ops > 0) {
			snprintf(unit, sizeof(unit), "%s/kop", c->unit);
			snprintf(name, sizeof(name), "%s.per_kop", c->name);
			set_metric(w->metrics, w->info, name, 1000.0 * d / ops, unit, dir);
		}
	}
	bp = busy_pct(r, r->v_begin, r->v_end);
	if (!isnan(bp))
		set_metric(w->metrics, w->info, "procstat.busy_pct", bp, "%", "neutral");
	else if (monitor_counter_set_find(&r->ms.cs, "procstat.total_ticks") >= 0)
		json_object_set_new(unavailable, "procstat.busy_pct",
				    json_string("the window was shorter than a /proc/stat tick"));

	if (ops <= 0) {
		/* exec counts operations only when its parser reads them */
		json_object_set_new(unavailable, "tlb.shootdowns_per_kop",
				    json_string("no operations counted in the window"));
		return;
	}
	for (i = 0; i < ARRAY_SIZE(shootdown_sources); i++) {
		long k = monitor_counter_set_find(&r->ms.cs, shootdown_sources[i]);

		if (k < 0)
			continue;
		set_metric(w->metrics, w->info, "tlb.shootdowns_per_kop",
			   1000.0 * (double)(r->v_end[k] - r->v_begin[k]) / ops, "shootdowns/kop", "lower");
		json_object_set_new(w->info, "tlb.shootdowns_per_kop",
				    json_pack("{s:s,s:s,s:s}", "unit", "shootdowns/kop", "direction", "lower",
					      "source", shootdown_sources[i]));
		return;
	}
	/* the first source's reason says most (x86's TLB row is everywhere) */
	for (i = 0; i < r->ms.cs.nu; i++)
		if (!strcmp(r->ms.cs.u[i].name, shootdown_sources[0])) {
			json_object_set_new(unavailable, "tlb.shootdowns_per_kop",
					    json_sprintf("no shootdown counter: %s: %s", shootdown_sources[0],
							 r->ms.cs.u[i].why));
			return;
		}
	json_object_set_new(unavailable, "tlb.shootdowns_per_kop",
			    json_string("no shootdown counter on this kernel (interrupts.TLB, "
					"vmstat.nr_tlb_remote_flush_received, tlb_flush.remote_shootdown)"));
}

static json_t *unavailable_object(const struct runner *r)
{
	json_t *u = json_object();
	size_t i;

	for (i = 0; i < r->ms.cs.nu; i++)
		json_object_set_new(u, r->ms.cs.u[i].name, json_string(r->ms.cs.u[i].why));
	if (r->monitor_failed)
		json_object_set_new(u, "monitors", json_string(r->monitor_err.buf));
	return u;
}

/* ---- neighbour ---- */

static int pick_cpus(struct runner *r)
{
	cpu_set_t set;
	int c;

	r->ncpus = 0;
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -1;
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			r->cpus[r->ncpus++] = c;
	return 0;
}

static int neighbour_start(struct runner *r, struct strbuf *err)
{
	int main_cpus = (r->ncpus + 1) / 2;

	if (wl_ctx_init(&r->nctx, &r->s->neighbour, err) < 0)
		return -1;
	r->nctx.background = 1;
	if (r->ncpus >= 2) {
		r->nctx.cpus = r->cpus + main_cpus;
		r->nctx.ncpus = r->ncpus - main_cpus;
	}
	/* the sampler allocates only under r->lock: none of its allocator
	 * locks is held in the child (see wlproc.h) */
	pthread_mutex_lock(&r->lock);
	r->npid = fork();
	if (r->npid != 0)
		pthread_mutex_unlock(&r->lock);
	if (r->npid < 0) {
		wl_ctx_release(&r->nctx);
		return strbuf_seterr(err, "neighbour: fork: %s", strerror(errno));
	}
	if (r->npid == 0) {
		struct strbuf nerr = STRBUF_INIT;
		int rc;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		rc = workload_impl(r->s->neighbour.def)->run(&r->nctx, &nerr);
		if (rc < 0)
			dprintf(2, "tlblab-agent: neighbour %s: %s\n", r->s->neighbour.def->name, nerr.buf);
		_exit(rc < 0 ? 1 : 0);
	}
	return 0;
}

/* The neighbour runs until it is stopped; one that ended by itself (a
 * failure, a crash) would leave the case measured without its noise. */
static int neighbour_alive(struct runner *r, struct strbuf *err)
{
	int status;
	pid_t p;

	if (r->npid <= 0)
		return 0;
	p = waitpid(r->npid, &status, WNOHANG);
	if (p == 0)
		return 0;
	r->npid = 0;
	wl_ctx_release(&r->nctx);
	strbuf_seterr(err, "neighbour %s ", r->s->neighbour.def->name);
	if (p < 0)
		strbuf_addf(err, "lost: %s", strerror(errno));
	else
		wl_status_text(status, err);
	strbuf_addstr(err, " before the case ended");
	return -1;
}

static int neighbour_stop(struct runner *r, struct strbuf *err)
{
	int status = 0;

	if (r->npid <= 0)
		return 0;
	wl_stop(&r->nctx);
	while (waitpid(r->npid, &status, 0) < 0 && errno == EINTR)
		;
	r->npid = 0;
	wl_ctx_release(&r->nctx);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		strbuf_seterr(err, "neighbour %s ", r->s->neighbour.def->name);
		wl_status_text(status, err);
		return -1;
	}
	return 0;
}

/* ---- iterations ---- */

struct case_result {
	json_t *iters;		/* array of measured iterations' metrics */
	json_t *info;
};

static void summarise(json_t *iters, json_t *ret_median, json_t *ret_min, json_t *ret_max)
{
	json_t *first = json_array_get(iters, 0);
	const char *name;
	json_t *v;

	json_object_foreach(json_object_get(first, "metrics"), name, v) {
		size_t n = json_array_size(iters), k, m = 0;
		double *vals = xcalloc(n ? n : 1, sizeof(double));

		for (k = 0; k < n; k++) {
			json_t *x = json_object_get(json_object_get(json_array_get(iters, k), "metrics"), name);

			if (json_is_number(x))
				vals[m++] = json_number_value(x);
		}
		if (m) {
			double med = median_inplace(vals, m);

			json_object_set_new(ret_median, name, json_real(med));
			json_object_set_new(ret_min, name, json_real(vals[0]));
			json_object_set_new(ret_max, name, json_real(vals[m - 1]));
		}
		free(vals);
	}
}

static json_t *case_params(const struct spec_case *c)
{
	json_t *p = json_deep_copy(c->params);

	json_object_set_new(p, "mode", json_string(spec_mode_name(c->p.mode)));
	return p;
}

static void error_line(struct runner *r, const struct spec_case *c, const char *message,
		       json_t *partial, json_t *unavailable)
{
	json_t *line = json_pack("{s:s,s:s,s:i,s:i,s:s,s:o}", "type", "error", "stage", "workload",
				 "case", r->case_i, "iteration", r->iter_i, "message", message,
				 "params", case_params(c));

	if (partial)
		json_object_set(line, "partial", partial);
	if (unavailable)
		json_object_set(line, "unavailable", unavailable);
	emit(r, line);
}

/*
 * The window's kernel function times: kfunc.<fn>.calls, .self_pct (its own
 * time as a share of all CPUs' time over the window) and .ns_per_call, and
 * the same share in the profile's symbols where perf has none for the
 * function (marked "source": "ftrace"), so the profile diff shows it.
 * Takes r->kf_result; a profile is made when perf gave none.
 */
static void kfunc_metrics(struct runner *r, struct wlproc_result *w, json_t **prof, json_t *unavailable)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	double secs = w->t_end - w->t_begin;
	json_t *fns = json_object_get(r->kf_result, "functions"), *f, *symbols;
	size_t i;

	if (!r->kf_result) {
		if (r->s->profile && !r->warm)
			json_object_set_new(unavailable, "kfunc", json_string(r->kf_err.buf));
		return;
	}
	json_array_foreach(json_object_get(r->kf_result, "missing"), i, f) {
		char name[128];

		snprintf(name, sizeof(name), "kfunc.%s", json_string_value(f) ?: "?");
		json_object_set_new(unavailable, name, json_string("not traceable on this kernel"));
	}
	if (!*prof)
		*prof = json_pack("{s:i,s:[],s:[],s:s}", "samples", 0, "symbols", "folded", "source", "ftrace");
	symbols = json_object_get(*prof, "symbols");
	json_array_foreach(fns, i, f) {
		const char *sym = jsonget_str(f, "symbol");
		double calls = jsonget_num_or(f, "calls", 0);
		double ns = jsonget_num_or(f, "self_ns", 0);
		double pct = secs > 0 && ncpu > 0 ? 100.0 * ns / (secs * 1e9 * (double)ncpu) : 0;
		char name[128];
		json_t *s;
		size_t k;
		int have = 0;

		if (!sym)
			continue;
		snprintf(name, sizeof(name), "kfunc.%s.calls", sym);
		set_metric(w->metrics, w->info, name, calls, "calls", "neutral");
		snprintf(name, sizeof(name), "kfunc.%s.self_pct", sym);
		set_metric(w->metrics, w->info, name, pct, "% of CPU", "lower");
		snprintf(name, sizeof(name), "kfunc.%s.ns_per_call", sym);
		set_metric(w->metrics, w->info, name, calls > 0 ? ns / calls : 0, "ns", "lower");
		json_array_foreach(symbols, k, s)
			if (!strcmp(jsonget_str(s, "symbol") ?: "", sym) &&
			    jsonget_num_or(s, "self", 0) > 0)
				have = 1;
		if (!have)
			json_array_append_new(symbols, json_pack("{s:s,s:b,s:f,s:f,s:s}", "symbol", sym,
								 "kernel", 1, "self", pct, "children", pct,
								 "source", "ftrace"));
	}
	json_decref(r->kf_result);
	r->kf_result = NULL;
}

/* A list of n CPU numbers. */
static json_t *cpu_list(const int *cpus, int n)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_integer(cpus[i]));
	return a;
}

/*
 * The iteration's window: its pair of markers, the workload's operations,
 * the CPUs it was pinned to (ncpus of the runner's first; none said when
 * it was not pinned), and a neighbour's CPUs and operations in the window:
 * the daemon counts the plugin's TLB model per vCPU over them.
 */
static json_t *window_object(const struct runner *r, const struct wlproc_result *w, int ncpus)
{
	json_t *o = json_pack("{s:i,s:f}", "index", r->windows, "ops", window_ops(w));

	if (ncpus > 0)
		json_object_set_new(o, "cpus", cpu_list(r->cpus, ncpus));
	if (r->npid > 0 && r->nctx.ncpus > 0)
		json_object_set_new(o, "neighbour", json_pack("{s:s,s:o,s:f}", "workload",
							      r->s->neighbour.def->name, "cpus",
							      cpu_list(r->nctx.cpus, r->nctx.ncpus), "ops",
							      (double)(r->n_end - r->n_begin)));
	return o;
}

static int run_iteration(struct runner *r, const struct spec_case *c, struct case_result *cr,
			 struct strbuf *err)
{
	const struct workload_def *def = c->p.def;
	const struct workload_ops *ops = workload_impl(def);
	const struct wlproc_hooks hooks = { on_begin, on_end, r, &r->lock };
	struct wlproc_result w;
	json_t *line, *unavailable, *prof = NULL;
	int rc, main_cpus = (r->ncpus + 1) / 2, ncpus = 0;

	if (neighbour_alive(r, err) < 0) {
		error_line(r, c, err->buf, NULL, NULL);
		return -1;
	}
	/* with a neighbour, the workload gets the first half of the CPUs;
	 * without, pinning workloads get them all */
	if (r->npid > 0 && r->ncpus >= 2)
		ncpus = main_cpus;
	else if (ops->pin)
		ncpus = r->ncpus;
	rc = wlproc_run(&c->p, r->cpus, ncpus, &hooks, &w, err);
	unavailable = unavailable_object(r);
	if (w.window && w.t_end > w.t_begin) {
		double secs = w.t_end - w.t_begin;

		if (!ops->score_fn || ops->score_is_rate) {
			char name[96];

			snprintf(name, sizeof(name), "%s.%s", def->name, def->score);
			set_metric(w.metrics, w.info, name, (double)(w.ops_end - w.ops_begin) / secs,
				   def->score_unit, "higher");
		}
		counter_metrics(r, &w, unavailable);
		if (r->npid > 0) {
			char name[96];

			snprintf(name, sizeof(name), "neighbour.%s.ops_per_sec", r->s->neighbour.def->name);
			set_metric(w.metrics, w.info, name, (double)(r->n_end - r->n_begin) / secs,
				   "ops/s", "neutral");
		}
	}
	if (r->prof) {
		prof = profile_stop(r->prof, &r->prof_err);
		r->prof = NULL;
		if (!prof)
			json_object_set_new(unavailable, "profile", json_string(r->prof_err.buf));
	} else if (r->s->profile && !r->warm) {
		json_object_set_new(unavailable, "profile", json_string(r->prof_err.buf));
	}
	if (w.window && w.t_end > w.t_begin)
		kfunc_metrics(r, &w, &prof, unavailable);
	json_decref(r->kf_result);	/* a window that did not close */
	r->kf_result = NULL;

	if (rc < 0) {
		error_line(r, c, err->buf, w.metrics, unavailable);
		json_decref(prof);
		json_decref(unavailable);
		wlproc_result_release(&w);
		return -1;
	}
	line = json_pack("{s:s,s:i,s:i,s:b,s:o,s:f,s:O,s:O,s:o}", "type", "iteration",
			 "case", r->case_i, "iteration", r->iter_i, "warmup", r->warm,
			 "params", case_params(c), "duration_s", w.t_end - w.t_begin,
			 "metrics", w.metrics, "info", w.info, "unavailable", unavailable);
	if (prof)
		json_object_set_new(line, "profile", prof);
	/* which pair of instruction markers was this window's, and its
	 * operations: the daemon turns the QEMU plugin's counts into per-op
	 * rows with them */
	if (w.window)
		json_object_set_new(line, "window", window_object(r, &w, ncpus));
	if (!r->warm) {
		json_array_append(cr->iters, line);
		json_object_update(cr->info, w.info);
	}
	emit(r, line);
	wlproc_result_release(&w);
	return 0;
}

/* ---- the table ---- */

static void print_table(FILE *out, const struct spec *s, json_t *cases, json_t *unavailable)
{
	size_t i;
	json_t *c;

	json_array_foreach(cases, i, c) {
		json_t *params = json_object_get(c, "params");
		json_t *med = json_object_get(c, "median"), *min = json_object_get(c, "min");
		json_t *max = json_object_get(c, "max"), *info = json_object_get(c, "info");
		const char *key, *name;
		json_t *v;

		fprintf(out, "%scase %zu/%zu:", i ? "\n" : "", i + 1, json_array_size(cases));
		json_object_foreach(params, key, v) {
			char *txt = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

			fprintf(out, " %s=%s", key, json_is_string(v) ? json_string_value(v) : txt);
			free(txt);
		}
		fprintf(out, "\n  %d iterations, %d warm-up discarded\n", s->iterations, s->warmup);
		fprintf(out, "  %-44s %14s %14s %14s  %s\n", "metric", "median", "min", "max", "unit");
		json_object_foreach(med, name, v) {
			const char *unit = jsonget_str(json_object_get(info, name), "unit");

			if (strstr(name, ".cpu"))
				continue;
			fprintf(out, "  %-44s %14.6g %14.6g %14.6g  %s\n", name, json_number_value(v),
				jsonget_num_or(min, name, 0),
				jsonget_num_or(max, name, 0), unit ? unit : "");
		}
	}
	if (json_object_size(unavailable)) {
		const char *name;
		json_t *v;

		fprintf(out, "\nunavailable on this kernel:\n");
		json_object_foreach(unavailable, name, v)
			fprintf(out, "  %-44s %s\n", name, json_string_value(v));
	}
}

/* ---- the run ---- */

int runner_run(const struct spec *s, FILE *out, int table)
{
	struct runner *r = xcalloc(1, sizeof(*r));
	struct strbuf err = STRBUF_INIT;
	pthread_condattr_t ca;
	json_t *cases = json_array(), *unavailable;
	int rc = 0, it;
	size_t ci;

	if (!r)
		abort();
	r->s = s;
	r->out = out;
	r->table = table;
	strbuf_init(&r->monitor_err, 0);
	strbuf_init(&r->prof_err, 0);
	strbuf_init(&r->kf_err, 0);
	strbuf_init(&r->held, 0);
	pthread_mutex_init(&r->out_lock, NULL);
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cond, &ca);
	pthread_cond_init(&r->up_cond, NULL);
	pthread_condattr_destroy(&ca);
	pick_cpus(r);
	r->t0 = mono_now();

	emit(r, facts_hello());
	/* the PMU counts the workload's CPUs: with a neighbour, the first
	 * half of them (run_iteration), without, all the agent's */
	monitor_set_open(&r->ms, s->monitors, r->ncpus ? r->cpus : NULL,
			 s->has_neighbour && r->ncpus >= 2 ? (r->ncpus + 1) / 2 : r->ncpus);
	r->nc = r->ms.cs.n;
	r->v_begin = xcalloc(r->nc + 1, sizeof(uint64_t));
	r->v_end = xcalloc(r->nc + 1, sizeof(uint64_t));
	r->v_prev = xcalloc(r->nc + 1, sizeof(uint64_t));
	r->v_now = xcalloc(r->nc + 1, sizeof(uint64_t));
	r->peak = xcalloc(r->nc + 1, sizeof(double));
	read_counters(r, r->v_prev, 1);
	r->t_prev = r->next_tick = mono_now();
	r->next_tick += s->interval;
	if (pthread_create(&r->sampler, NULL, sampler_main, r)) {
		fprintf(stderr, "tlblab-agent: cannot start the sampler thread\n");
		rc = -1;
		goto out;
	}
	pthread_mutex_lock(&r->lock);
	while (!r->sampler_up)
		pthread_cond_wait(&r->up_cond, &r->lock);
	pthread_mutex_unlock(&r->lock);

	for (ci = 0; ci < s->ncases && rc == 0; ci++) {
		struct case_result cr = { json_array(), json_object() };
		json_t *med = json_object(), *min = json_object(), *max = json_object();

		r->case_i = (int)ci;
		if (s->has_neighbour && neighbour_start(r, &err) < 0) {
			emit(r, json_pack("{s:s,s:s,s:i,s:s}", "type", "error", "stage", "workload",
					  "case", r->case_i, "message", err.buf));
			rc = 1;
		}
		for (it = 0; rc == 0 && it < s->warmup + s->iterations; it++) {
			r->iter_i = it;
			r->warm = it < s->warmup;
			if (run_iteration(r, &s->cases[ci], &cr, &err) < 0)
				rc = 1;
			if (r->output_failed)
				rc = -1;
		}
		if (neighbour_stop(r, &err) < 0 && rc == 0) {
			emit(r, json_pack("{s:s,s:s,s:i,s:s}", "type", "error", "stage", "workload",
					  "case", r->case_i, "message", err.buf));
			rc = 1;
		}
		summarise(cr.iters, med, min, max);
		json_array_append_new(cases, json_pack("{s:i,s:o,s:i,s:o,s:o,s:o,s:o}",
						       "case", (int)ci, "params", case_params(&s->cases[ci]),
						       "iterations", (int)json_array_size(cr.iters),
						       "median", med, "min", min, "max", max, "info", cr.info));
		json_decref(cr.iters);
	}

	pthread_mutex_lock(&r->lock);
	r->quit = 1;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->sampler, NULL);

	unavailable = unavailable_object(r);
	if (table) {
		print_table(out, s, cases, unavailable);
		if (rc)
			fprintf(out, "\nfailed: %s\n", err.buf);
		fflush(out);
	}
	{
		json_t *res = json_pack("{s:s,s:s,s:f,s:o,s:O}", "type", "result",
					"status", rc ? "failed" : "ok", "elapsed_s", mono_now() - r->t0,
					"cases", cases, "unavailable", unavailable);

		if (s->id[0])
			json_object_set_new(res, "id", json_string(s->id));
		emit(r, res);
	}
	json_decref(unavailable);
	if (r->output_failed)
		rc = -1;
out:
	if (r->prof)
		json_decref(profile_stop(r->prof, &r->prof_err));
	json_decref(kfunc_stop(r->kf, &r->kf_err));
	monitor_set_close(&r->ms);
	free(r->v_begin);
	free(r->v_end);
	free(r->v_prev);
	free(r->v_now);
	free(r->peak);
	strbuf_release(&r->monitor_err);
	strbuf_release(&r->prof_err);
	strbuf_release(&r->kf_err);
	strbuf_release(&r->held);
	strbuf_release(&err);
	pthread_mutex_destroy(&r->lock);
	pthread_mutex_destroy(&r->out_lock);
	pthread_cond_destroy(&r->cond);
	pthread_cond_destroy(&r->up_cond);
	free(r);
	return rc;
}
