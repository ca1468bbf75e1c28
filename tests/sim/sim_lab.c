/*
 * What the simulated boot method and transport share (sim.h): the
 * parameters, the real stages' times they draw from, the recorded agent
 * run they replay, and which kernel each simulated machine runs.
 *
 * A draw is a smoothed resample of the measured times: a uniform quantile
 * interpolated between the sorted times, so a handful of measurements
 * still give a spread rather than a few repeated values. Nothing here
 * models a failure; a simulated stage always succeeds (docs/scale.md says
 * what that leaves out).
 */
#include "sim.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "banned.h"

#define SIM_TIMES_MAX 4096
#define SIM_REPLAY_MAX 100000
#define SIM_MACHINES_MAX 4096

static const char *const kind_names[SIM_KIND_MAX] = { "build", "build_cached", "boot", "run" };

/* copied from the environment before main: tlblabd may reset it */
static char *env_times, *env_replay, *env_scale, *env_seed, *env_log;

__attribute__((constructor)) static void sim_env(void)
{
	const char *v;

	if ((v = getenv("TLBLAB_SIM_TIMES")))
		env_times = xstrdup(v);
	if ((v = getenv("TLBLAB_SIM_REPLAY")))
		env_replay = xstrdup(v);
	if ((v = getenv("TLBLAB_SIM_SCALE")))
		env_scale = xstrdup(v);
	if ((v = getenv("TLBLAB_SIM_SEED")))
		env_seed = xstrdup(v);
	if ((v = getenv("TLBLAB_SIM_LOG")))
		env_log = xstrdup(v);
}

static struct {
	pthread_mutex_t lock;
	int loaded;		/* 1: ready; -1: failed, why says why */
	struct strbuf why;
	double scale;
	uint64_t rng;
	int log_fd;
	double *times[SIM_KIND_MAX];	/* sorted */
	size_t ntimes[SIM_KIND_MAX];
	char *hello;
	char **lines;
	size_t nlines;
	struct sim_machine {
		char host[128], boot_id[40], build_id[72];
	} machines[SIM_MACHINES_MAX];
	size_t nmachines;
	char **builds;
	size_t nbuilds, abuilds;
} lab = { .lock = PTHREAD_MUTEX_INITIALIZER, .log_fd = -1 };

static int load_times(const char *path, struct strbuf *why)
{
	json_error_t jerr;
	json_t *doc = json_load_file(path, 0, &jerr), *kinds;
	int k, r = -1;

	if (!doc)
		return strbuf_seterr(why, "TLBLAB_SIM_TIMES %s: %s (line %d)", path, jerr.text, jerr.line);
	kinds = json_object_get(doc, "kinds");
	for (k = 0; k < SIM_KIND_MAX; k++) {
		json_t *secs = json_object_get(json_object_get(kinds, kind_names[k]), "seconds"), *v;
		size_t i, n = json_array_size(secs);

		if (!n || n > SIM_TIMES_MAX) {
			strbuf_seterr(why, "%s: kinds.%s.seconds: 1 to %d numbers wanted", path, kind_names[k],
				      SIM_TIMES_MAX);
			goto out;
		}
		lab.times[k] = xcalloc(n, sizeof(double));
		json_array_foreach(secs, i, v) {
			if (!json_is_number(v) || json_number_value(v) < 0) {
				strbuf_seterr(why, "%s: kinds.%s.seconds[%zu]: not a time", path, kind_names[k], i);
				goto out;
			}
			lab.times[k][i] = json_number_value(v);
		}
		qsort(lab.times[k], n, sizeof(double), cmp_double);
		lab.ntimes[k] = n;
	}
	r = 0;
out:
	json_decref(doc);
	return r;
}

/* The recorded run: its hello line apart, the rest replayed in order. */
static int load_replay(const char *path, struct strbuf *why)
{
	struct strbuf text = STRBUF_INIT;
	char *p, *nl;
	int r = strbuf_read_file(&text, path, 64u << 20);

	if (r < 0)
		return strbuf_seterr(why, "TLBLAB_SIM_REPLAY %s: %s", path, strerror(-r));
	lab.lines = xcalloc(SIM_REPLAY_MAX, sizeof(char *));
	for (p = text.buf; *p && lab.nlines < SIM_REPLAY_MAX; p = nl) {
		json_t *o;
		const char *type;

		nl = strchrnul(p, '\n');
		if (*nl)
			*nl++ = '\0';
		if (!*p)
			continue;
		o = json_loads(p, 0, NULL);
		type = json_string_value(json_object_get(o, "type"));
		if (type && !strcmp(type, "hello") && !lab.hello)
			lab.hello = xstrdup(p);
		else if (type)
			lab.lines[lab.nlines++] = xstrdup(p);
		json_decref(o);
	}
	strbuf_release(&text);
	if (!lab.hello || !lab.nlines)
		return strbuf_seterr(why, "TLBLAB_SIM_REPLAY %s: no hello line, or nothing after it", path);
	return 0;
}

static int load(struct strbuf *why)
{
	double scale = 0.01;
	uint64_t seed = 1;

	if (!env_times || !env_replay)
		return strbuf_seterr(why, "the simulated lab needs TLBLAB_SIM_TIMES and TLBLAB_SIM_REPLAY "
				     "(tests/fixtures/sim/)");
	if (env_scale && (parse_double(env_scale, &scale) < 0 || !(scale > 0) || scale > 100))
		return strbuf_seterr(why, "TLBLAB_SIM_SCALE %s: a factor above 0, at most 100", env_scale);
	if (env_seed && parse_u64(env_seed, &seed) < 0)
		return strbuf_seterr(why, "TLBLAB_SIM_SEED %s: not a number", env_seed);
	lab.scale = scale;
	lab.rng = seed * 0x9e3779b97f4a7c15ull + 1;
	if (load_times(env_times, why) < 0 || load_replay(env_replay, why) < 0)
		return -1;
	if (env_log && (lab.log_fd = open(env_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0)
		return strbuf_seterr(why, "TLBLAB_SIM_LOG %s: %s", env_log, strerror(errno));
	return 0;
}

int sim_lab_ready(struct strbuf *why)
{
	int r;

	pthread_mutex_lock(&lab.lock);
	if (!lab.loaded) {
		strbuf_init(&lab.why, 0);
		lab.loaded = load(&lab.why) == 0 ? 1 : -1;
	}
	r = lab.loaded == 1 ? 0 : -1;
	if (r < 0)
		strbuf_addstr(why, lab.why.buf);
	pthread_mutex_unlock(&lab.lock);
	return r;
}

/* xorshift64*: under lab.lock */
static double uniform_locked(void)
{
	lab.rng ^= lab.rng >> 12;
	lab.rng ^= lab.rng << 25;
	lab.rng ^= lab.rng >> 27;
	return (double)((lab.rng * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

double sim_lab_draw(enum sim_kind k)
{
	double u, pos, t;
	size_t i, n = lab.ntimes[k];

	pthread_mutex_lock(&lab.lock);
	u = uniform_locked();
	pthread_mutex_unlock(&lab.lock);
	pos = u * (double)(n - 1);
	i = (size_t)pos;
	t = i + 1 < n ? lab.times[k][i] + (pos - (double)i) * (lab.times[k][i + 1] - lab.times[k][i])
		      : lab.times[k][n - 1];
	return t * lab.scale;
}

double sim_lab_gauss(void)
{
	double u1, u2;

	pthread_mutex_lock(&lab.lock);
	u1 = uniform_locked();
	u2 = uniform_locked();
	pthread_mutex_unlock(&lab.lock);
	if (u1 < 1e-300)
		u1 = 1e-300;
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

void sim_lab_log(double start, double end, enum sim_kind k, const char *where)
{
	char line[300];
	int n;

	if (lab.log_fd < 0 || k >= SIM_KIND_MAX)
		return;
	n = snprintf(line, sizeof(line), "%.6f %.6f %s %s\n", start, end, kind_names[k], where);
	/* one write with O_APPEND: lines of several threads do not mix */
	if (n > 0 && (size_t)n < sizeof(line) && write(lab.log_fd, line, (size_t)n) < 0)
		return;
}

int sim_lab_work(double seconds, enum sim_kind k, const char *where, volatile sig_atomic_t *cancel,
		 double deadline)
{
	double start = wall_now(), end = mono_now() + seconds;

	for (;;) {
		double now = mono_now(), step = end - now;

		if (cancel && *cancel)
			return -ECANCELED;
		if (deadline && now >= deadline)
			return -ETIMEDOUT;
		if (step <= 0)
			break;
		if (step > 0.05)
			step = 0.05;
		if (deadline && deadline - now < step)
			step = deadline - now;
		sleep_sec(step);
	}
	if (where)
		sim_lab_log(start, wall_now(), k, where);
	return 0;
}

const char *sim_lab_hello(void)
{
	return lab.hello;
}

const char *const *sim_lab_replay(size_t *ret_n)
{
	*ret_n = lab.nlines;
	return (const char *const *)lab.lines;
}

static struct sim_machine *machine_locked(const char *host)
{
	size_t i;

	for (i = 0; i < lab.nmachines; i++)
		if (!strcmp(lab.machines[i].host, host))
			return &lab.machines[i];
	return NULL;
}

void sim_lab_boot(const char *host, const char *boot_id, const char *build_id)
{
	struct sim_machine *m;

	pthread_mutex_lock(&lab.lock);
	if (!(m = machine_locked(host)) && lab.nmachines < SIM_MACHINES_MAX)
		m = &lab.machines[lab.nmachines++];
	if (m) {
		snprintf(m->host, sizeof(m->host), "%s", host);
		snprintf(m->boot_id, sizeof(m->boot_id), "%s", boot_id);
		snprintf(m->build_id, sizeof(m->build_id), "%s", build_id);
	}
	pthread_mutex_unlock(&lab.lock);
}

void sim_lab_halt(const char *host)
{
	struct sim_machine *m;

	pthread_mutex_lock(&lab.lock);
	if ((m = machine_locked(host)))
		m->boot_id[0] = m->build_id[0] = '\0';
	pthread_mutex_unlock(&lab.lock);
}

int sim_lab_kernel(const char *host, struct strbuf *cmdline, struct strbuf *version)
{
	struct sim_machine *m;
	int r = -1;

	pthread_mutex_lock(&lab.lock);
	if ((m = machine_locked(host)) && m->boot_id[0]) {
		/* what check_identity (boot_stage.c) looks for in each */
		strbuf_addf(cmdline, "console=ttyS0 quiet tlblab.boot=%s\n", m->boot_id);
		strbuf_addf(version, "Linux version 6.1.0-sim (tlblab@b-%.12s) (gcc (Debian 12.2.0-14) 12.2.0) "
			    "#1 SMP PREEMPT_DYNAMIC\n", m->build_id);
		r = 0;
	}
	pthread_mutex_unlock(&lab.lock);
	return r;
}

int sim_lab_new_build(const char *build_id)
{
	size_t i;
	int r = 1;

	pthread_mutex_lock(&lab.lock);
	for (i = 0; i < lab.nbuilds && r; i++)
		if (!strcmp(lab.builds[i], build_id))
			r = 0;
	if (r) {
		if (lab.nbuilds == lab.abuilds) {
			lab.abuilds = lab.abuilds ? 2 * lab.abuilds : 64;
			lab.builds = xrealloc(lab.builds, lab.abuilds * sizeof(char *));
		}
		lab.builds[lab.nbuilds++] = xstrdup(build_id);
	}
	pthread_mutex_unlock(&lab.lock);
	return r;
}
