#include "scheduler.h"
#include "sched_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch.h"
#include "boot.h"
#include "config.h"
#include "jsonget.h"
#include "log.h"
#include "quiet.h"
#include "store.h"
#include "transport.h"
#include "util.h"
#include "banned.h"

#define PASS_INTERVAL_MS 1000
#define RECHECK_INTERVAL 60.0

struct quiet *sched_quiet(struct sched *sc)
{
	return sc->quiet;
}

/* The agents of the other arches: given, or in the arch's folder beside
 * the host's (build/aarch64/tlblab-agent). One that is missing is noted,
 * and logged when a configured machine would need it. */
static void find_agents(struct sched *sc, const char *const agents[])
{
	const char *host = sc->agents[0].path, *slash = strrchr(host, '/');
	size_t i, k;

	for (i = 1; i < ARCH_MAX; i++) {
		struct sched_agent *ag = &sc->agents[i];
		const struct arch *a = arch_at(i);
		struct strbuf err = STRBUF_INIT;

		if (agents[i])
			snprintf(ag->path, sizeof(ag->path), "%s", agents[i]);
		else
			snprintf(ag->path, sizeof(ag->path), "%.*s%s/tlblab-agent", slash ? (int)(slash - host + 1) : 0,
				 host, a->agent_dir);
		if (run_file_sha256(ag->path, ag->sha, &err) < 0) {
			ag->sha[0] = 0;
			snprintf(ag->why, sizeof(ag->why), "no tlblab-agent for %s machines: %s (make agent-arm64 "
				 "builds it; tlblabd looks for it when it starts)", a->name, err.buf);
			for (k = 0; k < sc->cfg->nmachines; k++)
				if (!strcmp(sc->cfg->machines[k].arch, a->name)) {
					log_warnx("%s: %s", sc->cfg->machines[k].name, ag->why);
					break;
				}
		}
		strbuf_release(&err);
	}
}

int sched_create(const struct lab_config *cfg, struct store *st, const char *const agents[],
		 const char *kernels_dir, struct sched **ret, struct strbuf *err)
{
	struct sched *sc = calloc(1, sizeof(*sc));
	int i;

	if (!sc)
		abort();
	sc->st = st;
	sc->cfg = cfg;
	sc->backfill_below = INT64_MAX;
	snprintf(sc->agents[0].path, sizeof(sc->agents[0].path), "%s", agents[0]);
	snprintf(sc->kernels_dir, sizeof(sc->kernels_dir), "%s", kernels_dir);
	if (run_file_sha256(agents[0], sc->agents[0].sha, err) < 0) {
		free(sc);
		return -1;
	}
	find_agents(sc, agents);
	if (pipe2(sc->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		strbuf_seterr(err, "pipe: %s", strerror(errno));
		free(sc);
		return -1;
	}
	pthread_mutex_init(&sc->lock, NULL);
	pthread_cond_init(&sc->cond, NULL);
	sc->quiet = quiet_new();
	sc->nworkers = cfg->workers > 0 ? cfg->workers : 4;
	sc->workers = calloc((size_t)sc->nworkers, sizeof(pthread_t));
	if (!sc->workers)
		abort();
	for (i = 0; i < sc->nworkers; i++)
		if (pthread_create(&sc->workers[i], NULL, sched_worker_main, sc)) {
			strbuf_seterr(err, "cannot start worker threads");
			sc->nworkers = i;
			sched_free(sc);
			return -1;
		}
	config_ref(cfg);	/* sc->cfg: held until the next one or sched_free */
	*ret = sc;
	return 0;
}

void sched_set_config(struct sched *sc, const struct lab_config *cfg)
{
	const struct lab_config *old = sc->cfg;

	/* running tasks hold their own reference to the one they started with */
	sc->cfg = config_ref(cfg);
	config_free(old);
}

/* ---- cancels ---- */

/*
 * A cancel reaches every kind of stage a job has running (a build, a boot
 * and its run, a run) through t->cancel, which each stage and the
 * transport's exec look at (transport.h: CANCEL_POLL_MS). Whatever a
 * cancelled task then reports (a killed command reads as a failure, a
 * timeout as infra) is recorded as cancelled: a cancelled stage is never
 * retried. The store refuses a retry of a job being cancelled too
 * (store_stage_retry), for the task that ended just before the flag was
 * set and for the stages a restart finds running.
 */

static void pass_cancels(struct sched *sc)
{
	int64_t *ids;
	size_t n, i, k;

	store_jobs_cancelling(sc->st, &ids, &n);
	pthread_mutex_lock(&sc->lock);
	for (i = 0; i < n; i++)
		for (k = 0; k < sc->nrunning; k++)
			if (sc->running[k]->kind != TASK_HEALTH && sc->running[k]->si.job_id == ids[i])
				sc->running[k]->cancel = 1;
	pthread_mutex_unlock(&sc->lock);
	free(ids);
}

/* ---- dispatch ---- */

static int machine_busy_with_health(struct sched *sc, const char *name)
{
	size_t i;

	for (i = 0; i < sc->nrunning; i++)
		if (sc->running[i]->kind == TASK_HEALTH && sc->running[i]->machine &&
		    !strcmp(sc->running[i]->machine->name, name))
			return 1;
	return 0;
}
static int json_has_string(const json_t *arr, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), s))
			return 1;
	return 0;
}

/* A machine of another arch never takes a job's stage: its kernels are
 * built for the job's arch, and a run measures on the arch asked for. */
static int machine_fits(const struct cfg_machine *m, const struct stage_info *si)
{
	/* a boot of a sweep's count (guest_cpus) needs a QEMU guest that big */
	if (si->cpus > 0 && m->max_cpus < si->cpus)
		return 0;
	return arch_get(m->arch) == arch_get(si->arch) && config_machine_allowed(m, si->machines, si->tags) && !json_has_string(si->excluded, m->name);
}

static int builder_busy(struct sched *sc, const char *name)
{
	size_t i;
	int busy = 0;

	pthread_mutex_lock(&sc->lock);
	for (i = 0; i < sc->nrunning; i++)
		if (sc->running[i]->kind == TASK_BUILD && !strcmp(sc->running[i]->builder->name, name))
			busy = 1;
	pthread_mutex_unlock(&sc->lock);
	return busy;
}

/* A stage no machine can take fails as infra; on a store error it stays
 * pending and the next pass decides again. */
static void fail_unplaced(struct sched *sc, const struct stage_info *si, const char *msg)
{
	int r = store_stage_finish(sc->st, si->id, "failed", "infra", msg);

	if (r < 0)
		log_warnx("job %lld: stage %lld: store: %s; will try again: %s", (long long)si->job_id,
			  (long long)si->id, store_strerror(r), msg);
	else
		log_warnx("job %lld: %s", (long long)si->job_id, msg);
}

/* Builds run on the tree's builder, one at a time per builder. */
static void start_build(struct sched *sc, struct stage_info *si)
{
	const struct cfg_tree *tree = config_tree(sc->cfg, si->tree);
	const struct cfg_builder *b = tree ? config_builder(sc->cfg, tree->builder) : NULL;
	struct strbuf note = STRBUF_INIT;
	char where[100];
	struct task *t;

	if (!tree || !b) {
		fail_unplaced(sc, si, "the job's tree or its builder is no longer configured");
		return;
	}
	if (builder_busy(sc, b->name))
		return;
	t = sched_task_new(TASK_BUILD, sc->cfg, NULL);
	t->qe.ep = &b->ep;
	t->qe.pausable = transport_pausable(&b->ep);
	snprintf(t->qe.label, sizeof(t->qe.label), "build %s of job %lld on builder %s", si->side,
		 (long long)si->job_id, b->name);
	strbuf_addstr(&note, "quiet host: waits: ");
	if (sc->cfg->quiet_host && quiet_build_begin(sc->quiet, &t->qe, &note) < 0) {
		/* it waits, and says so once */
		if (strcmp(si->note, note.buf)) {
			store_stage_set_note(sc->st, si->id, note.buf);
			log_info("job %lld: build %s waits: %s", (long long)si->job_id, si->side, note.buf);
		}
		sched_task_free(t);
		goto out;
	}
	snprintf(where, sizeof(where), "builder %s", b->name);
	if (store_stage_begin(sc->st, si->id, where) < 0) {
		quiet_build_end(sc->quiet, &t->qe);
		sched_task_free(t);
		goto out;
	}
	if (si->note[0])
		store_stage_set_note(sc->st, si->id, NULL);
	t->tree = tree;
	t->builder = b;
	t->si = *si;
	memset(si, 0, sizeof(*si));
	t->deadline = mono_now() + (t->si.timeout > 0 ? t->si.timeout : sc->cfg->stage_timeout);
	log_info("job %lld: build %s on %s: started%s", (long long)t->si.job_id, t->si.side, b->name,
		 t->qe.pause ? " (paused: a run on this host measures)" : "");
	sched_enqueue(sc, t);
out:
	strbuf_release(&note);
}

/* Hands a stage just marked running on m to a worker. */
static void launch(struct sched *sc, struct stage_info *si, const struct cfg_machine *m, int64_t run_stage)
{
	const struct lab_config *cfg = sc->cfg;
	const struct cfg_suite *suite = config_suite(cfg, si->suite);
	struct task *t = sched_task_new(strcmp(si->kind, "boot") ? TASK_RUN : TASK_BOOTRUN, cfg, m);

	t->run_stage = run_stage;
	t->si = *si;
	memset(si, 0, sizeof(*si));	/* the task owns the JSON now */
	t->suite = suite;
	t->deadline = mono_now() + (t->si.timeout > 0 ? t->si.timeout :
				    suite && suite->timeout > 0 ? suite->timeout : cfg->stage_timeout);
	log_info("job %lld: run on %s: started (attempt %d)", (long long)t->si.job_id, m->name,
		 t->si.attempt + 1);
	sched_enqueue(sc, t);
}

/* A machine a boot stage could start on now: it fits, it boots, it is good
 * or not yet known (its run checks it first) and no health check holds it
 * (the lease is checked as it is taken). */
static int boot_ready(struct sched *sc, const struct cfg_machine *m, const struct stage_info *si)
{
	char health[16];

	return machine_fits(m, si) && boot_ops_of(m) &&
	       store_machine_get_health(sc->st, m->name, health, sizeof(health)) == 0 &&
	       (!strcmp(health, "good") || !strcmp(health, "unknown")) && !machine_busy_with_health(sc, m->name);
}

/*
 * A duet (config.h): the base boot of round k of an A/B job and the
 * patched boot of the same round (two stages later) start at once on the
 * two machines of a duet, base on the first in even rounds and on the
 * second in odd ones, so each side gets each host CPU in turn. 1 when both
 * started; 0 when no duet is free or the patched boot is not pending (the
 * stage then starts alone); -1 on a store error (the stage waits for the
 * next pass).
 */
static int start_duet(struct sched *sc, struct stage_info *si)
{
	const struct lab_config *cfg = sc->cfg;
	struct stage_info other;
	int64_t run_a, run_b;
	size_t i;
	int r;

	if (strcmp(si->kind, "boot") || strcmp(si->side, "base"))
		return 0;
	for (i = 0; i < cfg->nmachines; i++) {
		const struct cfg_machine *m = &cfg->machines[i], *p, *mb, *mp;

		if (!m->duet || !(p = config_machine(cfg, m->duet)) || p < m)
			continue;
		if (!boot_ready(sc, m, si) || !boot_ready(sc, p, si))
			continue;
		r = store_stage_pending_at(sc->st, si->job_id, si->seq + 2, &other);
		if (r <= 0)
			return r < 0 ? -1 : 0;
		if (strcmp(other.kind, "boot") || strcmp(other.side, "patched") ||
		    other.boot_index != si->boot_index || other.cpus != si->cpus) {
			store_stage_info_release(&other);
			return 0;
		}
		run_a = store_stage_next(sc->st, si->job_id, si->seq);
		run_b = store_stage_next(sc->st, other.job_id, other.seq);
		mb = si->boot_index % 2 ? p : m;
		mp = si->boot_index % 2 ? m : p;
		r = run_a > 0 && run_b > 0 ? store_stage_start_duet(sc->st, si->id, mb->name, other.id, mp->name)
					   : -EIO;
		if (r < 0) {
			store_stage_info_release(&other);
			return store_failed(r) ? -1 : 0;
		}
		log_info("job %lld: round %d as a duet: base on %s (host CPU %d), patched on %s (host CPU %d)",
			 (long long)si->job_id, si->boot_index + 1, mb->name, mb->host_cpu, mp->name,
			 mp->host_cpu);
		launch(sc, si, mb, run_a);
		launch(sc, &other, mp, run_b);
		return 1;
	}
	return 0;
}

/*
 * One pass's view of the machines (dispatch): each configured machine's
 * health, read once a pass, and whether it is leased (as read, or taken
 * during the pass). Without it every pending stage asked the store for
 * each machine's health and tried to lease each busy one, a write
 * transaction that fails: with 1,000 jobs waiting on 100 busy machines,
 * some 100,000 store calls a pass, the scheduler's whole time (b0016,
 * docs/scale.md). A machine the view calls free may still be leased by
 * another daemon: the lease (store_stage_start) decides, as before.
 */
struct pass_view {
	char (*health)[16];	/* by config index; "" when the store does not know it */
	unsigned char *taken;
};

static int pass_view_read(struct sched *sc, struct pass_view *pv)
{
	json_t *ms = store_machines_json(sc->st), *m;
	size_t i;

	if (!ms)
		return -1;
	pv->health = xcalloc(sc->cfg->nmachines + 1, sizeof(*pv->health));
	pv->taken = xcalloc(sc->cfg->nmachines + 1, 1);
	json_array_foreach(json_object_get(ms, "machines"), i, m) {
		const struct cfg_machine *cm = config_machine(sc->cfg, jsonget_str(m, "name") ?: "");
		size_t k = cm ? (size_t)(cm - sc->cfg->machines) : 0;

		if (!cm)
			continue;
		snprintf(pv->health[k], sizeof(*pv->health), "%s", jsonget_str(m, "health") ?: "");
		pv->taken[k] = !json_is_null(json_object_get(m, "leased_by"));
	}
	json_decref(ms);
	return 0;
}

static void pass_view_release(struct pass_view *pv)
{
	free(pv->health);
	free(pv->taken);
}

static void start_stage(struct sched *sc, struct stage_info *si, struct pass_view *pv)
{
	const struct lab_config *cfg = sc->cfg;
	struct strbuf why = STRBUF_INIT;
	size_t i, fits = 0, healthy = 0;
	int64_t run_stage = 0;
	int pass, r;

	if (!strcmp(si->kind, "build")) {
		start_build(sc, si);
		return;
	}
	if (!strcmp(si->kind, "run") && si->side[0]) {
		/* a run of an A/B job needs its boot: after a restart, boot again */
		int64_t boot = store_stage_prev(sc->st, si->job_id, si->seq);

		if (boot > 0 && store_failed(store_stage_retry(sc->st, boot, NULL,
							       "its run was interrupted; booting again")))
			log_warnx("job %lld: stage %lld: store error; its boot is queued again on a later pass",
				  (long long)si->job_id, (long long)si->id);
		return;
	}
	if ((r = start_duet(sc, si)) != 0)
		return;
	/* good machines first, then unknown ones (the run checks them first) */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < cfg->nmachines; i++) {
			const struct cfg_machine *m = &cfg->machines[i];
			char health[16];

			if (!machine_fits(m, si))
				continue;
			/* boots need a machine that can boot a kernel; runs of run
			 * jobs take the machine as it is */
			if (!strcmp(si->kind, "boot") ? !boot_ops_of(m) : 0)
				continue;
			if (pass == 0)
				fits++;
			if (!pv->health[i][0])
				continue;
			snprintf(health, sizeof(health), "%s", pv->health[i]);
			if (pass == 0 && (!strcmp(health, "good") || !strcmp(health, "unknown")))
				healthy++;
			if (pass == 0 && strcmp(health, "good")) {
				if (strcmp(health, "unknown"))
					strbuf_addf(&why, "%s%s is %s", why.len ? ", " : "", m->name, health);
				continue;
			}
			if (pass == 1 && strcmp(health, "unknown"))
				continue;
			if (pv->taken[i] || machine_busy_with_health(sc, m->name))
				continue;
			/* a store error leaves the stage pending for the next pass */
			if (!strcmp(si->kind, "boot") && !run_stage &&
			    (run_stage = store_stage_next(sc->st, si->job_id, si->seq)) <= 0)
				goto out;
			if ((r = store_stage_start(sc->st, si->id, m->name)) < 0) {
				if (store_failed(r))
					goto out;
				pv->taken[i] = 1;	/* leased meanwhile (another daemon) */
				continue;
			}
			pv->taken[i] = 1;
			launch(sc, si, m, run_stage);
			goto out;
		}
	}
	if (!fits) {
		struct strbuf msg = STRBUF_INIT;

		if (json_array_size(si->excluded))
			strbuf_addf(&msg, "no machine left to retry on (every fitting machine failed this stage); "
				    "last failure: %s", si->last_error);
		else
			strbuf_addf(&msg, "no configured machine of arch %s fits the job's machines and tags",
				    arch_get(si->arch)->name);
		fail_unplaced(sc, si, msg.buf);
		strbuf_release(&msg);
	} else if (!healthy) {
		struct strbuf msg = STRBUF_INIT;

		strbuf_addf(&msg, "no healthy machine fits: %s", why.buf);
		fail_unplaced(sc, si, msg.buf);
		strbuf_release(&msg);
	}
	/* otherwise every fitting machine is busy: wait */
out:
	strbuf_release(&why);
}

static void dispatch(struct sched *sc)
{
	struct stage_info *v;
	struct pass_view pv;
	size_t n, i;

	if (store_runnable_stages(sc->st, &v, &n) < 0)
		return;
	/* a store error: the next pass looks again */
	if (n && pass_view_read(sc, &pv) == 0) {
		for (i = 0; i < n; i++)
			start_stage(sc, &v[i], &pv);
		pass_view_release(&pv);
	}
	store_stage_infos_free(v, n);
}

/* Bad machines get a health check now and then; one that passes is good. */
static void recheck(struct sched *sc)
{
	json_t *ms, *m;
	size_t i;

	if (mono_now() - sc->last_recheck < RECHECK_INTERVAL)
		return;
	sc->last_recheck = mono_now();
	ms = store_machines_json(sc->st);
	json_array_foreach(json_object_get(ms, "machines"), i, m) {
		const char *name = jsonget_str(m, "name");
		const char *health = jsonget_str(m, "health");
		const struct cfg_machine *cm = name ? config_machine(sc->cfg, name) : NULL;

		if (!cm || !health || strcmp(health, "bad") || !json_is_null(json_object_get(m, "leased_by")) ||
		    machine_busy_with_health(sc, name))
			continue;
		sched_enqueue(sc, sched_task_new(TASK_HEALTH, sc->cfg, cm));
	}
	json_decref(ms);
}

/* Done A/B jobs from before comparisons were kept get theirs, one per
 * pass, newest first, so the job list can filter them by verdict too. */
static void backfill(struct sched *sc)
{
	int64_t id;

	if (sc->backfill_below == 0)
		return;
	id = store_job_without_verdict(sc->st, sc->backfill_below);
	if (id < 0)
		return;			/* a store error: the next pass looks again */
	sc->backfill_below = id;	/* 0: nothing left */
	if (id)
		sched_keep_results(sc, id);
}

/* A store shared with other daemons (lab.store): this daemon is alive,
 * and what a daemon gone silent left running is taken over (store.h),
 * three times a lease timeout. */
static void share_pass(struct sched *sc)
{
	struct strbuf log = STRBUF_INIT;
	const char *p, *nl;
	int r;

	if (!sc->cfg->store || mono_now() - sc->last_share < sc->cfg->lease_timeout / 3)
		return;
	sc->last_share = mono_now();
	if ((r = store_daemon_pass(sc->st, sc->cfg->lease_timeout, &log)) < 0)
		log_warnx("store: the daemons' pass: %s; again on a later pass", store_strerror(r));
	for (p = log.buf; *p; p = nl + 1) {
		nl = strchrnul(p, '\n');
		log_warnx("%.*s", (int)(nl - p), p);
		if (!*nl)
			break;
	}
	strbuf_release(&log);
}

int sched_run(struct sched *sc, volatile sig_atomic_t *stop, volatile sig_atomic_t *reload)
{
	sc->last_recheck = mono_now();
	while (!*stop && !*reload) {
		struct pollfd pfd = { .fd = sc->wake[0], .events = POLLIN };
		char buf[256];

		sched_collect(sc);
		share_pass(sc);
		pass_cancels(sc);
		dispatch(sc);
		recheck(sc);
		backfill(sc);
		if (poll(&pfd, 1, PASS_INTERVAL_MS) > 0)
			while (read(sc->wake[0], buf, sizeof(buf)) > 0)
				;
	}
	return 0;
}

void sched_free(struct sched *sc)
{
	size_t i;
	int k;

	if (!sc)
		return;
	pthread_mutex_lock(&sc->lock);
	sc->quit = 1;
	/* queued work that never started stays pending in the store */
	while (sc->queue) {
		struct task *t = sc->queue;

		sc->queue = t->next;
		for (i = 0; i < sc->nrunning; i++)
			if (sc->running[i] == t)
				sc->running[i] = sc->running[--sc->nrunning];
		sched_task_free(t);
	}
	for (i = 0; i < sc->nrunning; i++)
		sc->running[i]->cancel = 1;
	pthread_cond_broadcast(&sc->cond);
	pthread_mutex_unlock(&sc->lock);
	for (k = 0; k < sc->nworkers; k++)
		pthread_join(sc->workers[k], NULL);
	while (sc->done) {
		struct task *t = sc->done;

		sc->done = t->next;
		sched_task_free(t);
	}
	/* outcomes never stored: their stages stay running, for store_recover */
	while (sc->unrecorded) {
		struct task *t = sc->unrecorded;

		sc->unrecorded = t->next;
		sched_task_free(t);
	}
	free(sc->workers);
	close(sc->wake[0]);
	close(sc->wake[1]);
	pthread_mutex_destroy(&sc->lock);
	pthread_cond_destroy(&sc->cond);
	quiet_free(sc->quiet);
	config_free(sc->cfg);
	free(sc);
}
