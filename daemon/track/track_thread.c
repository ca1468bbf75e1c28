/*
 * The tracker thread (track.h). One pass: due tracks run, ended points
 * become series values and change points, finished jobs are announced,
 * and due webhook deliveries are attempted. Every decision is read from
 * and written to the store first, so a pass cut short by a crash is taken
 * up again by the next daemon's first pass.
 */
#include "track.h"
#include "track_int.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "build.h"
#include "changepoint.h"
#include "compare.h"
#include "config.h"
#include "guard.h"
#include "jsonget.h"
#include "log.h"
#include "notify.h"
#include "quiet.h"
#include "store.h"
#include "submit.h"
#include "transport.h"
#include "util.h"
#include "banned.h"

#define POINTS_PER_PASS 16
#define JOBS_PER_PASS 32
#define DELIVERIES_PER_PASS 8


const char *track_change_direction(const char *direction, double magnitude)
{
	if (!direction || magnitude == 0 || isnan(magnitude))
		return "neutral";
	if (!strcmp(direction, "higher"))
		return magnitude < 0 ? "regression" : "improvement";
	if (!strcmp(direction, "lower"))
		return magnitude > 0 ? "regression" : "improvement";
	return "neutral";
}

/* ---- webhooks ---- */

static void deliver(struct tracker *tr, const struct lab_config *cfg)
{
	json_t *due = store_deliveries_due(tr->st, wall_now(), DELIVERIES_PER_PASS), *d;
	size_t i;

	json_array_foreach(due, i, d) {
		const char *hook = jsonget_str(d, "hook");
		const char *body = jsonget_str(d, "body") ?: "";
		const struct cfg_hook *h = NULL;
		struct strbuf err = STRBUF_INIT;
		int64_t id = jsonget_int_or(d, "id", 0);
		int attempts = (int)jsonget_int_or(d, "attempts", 0) + 1, r;
		long http = 0;
		size_t k;

		for (k = 0; k < cfg->nhooks; k++)
			if (!strcmp(cfg->hooks[k].name, hook ?: ""))
				h = &cfg->hooks[k];
		if (!h) {	/* the hook went from the configuration */
			store_delivery_attempt(tr->st, id, 0, 0, "the webhook is no longer configured", 0);
			continue;
		}
		{
			struct notify_attempt a = { .url = h->url,
						    .event = jsonget_str(d, "event") ?: "",
						    .delivery = id, .secret = h->secret, .timeout = h->timeout };

			r = notify_post(&a, body, strlen(body), &http, &err);
		}
		if (r == 0) {
			store_delivery_attempt(tr->st, id, 1, http, NULL, 0);
			log_info("webhook %s: delivery %lld delivered (attempt %d)", h->name, (long long)id, attempts);
		} else {
			double next = attempts >= h->max_attempts ? 0 : wall_now() + notify_backoff(attempts, h->retry);

			store_delivery_attempt(tr->st, id, 0, http, err.buf, next);
			log_warnx("webhook %s: delivery %lld, attempt %d of %d: %s%s", h->name, (long long)id, attempts,
				  h->max_attempts, err.buf, next ? "" : "; given up");
		}
		strbuf_release(&err);
	}
	json_decref(due);
}

static void announce_jobs(struct tracker *tr, const struct lab_config *cfg)
{
	int64_t *ids = NULL;
	size_t i, n = 0;
	int wanted = 0;

	for (i = 0; i < cfg->nhooks; i++)
		wanted |= (cfg->hooks[i].events & (1u << NOTIFY_JOB)) != 0;
	if (store_jobs_to_notify(tr->st, wanted ? JOBS_PER_PASS : 1, &ids, &n) < 0)
		return;
	/* nobody listens: they are told, in one write (none when there are
	 * none, so a quiet store's generation and the API's cache stay) */
	if (!wanted && n)
		store_jobs_notified_all(tr->st);
	for (i = 0; wanted && i < n; i++) {
		json_t *j = store_job_json(tr->st, ids[i]);

		if (!j)
			break;	/* the next pass looks again */
		track_announce(tr, cfg, NOTIFY_JOB, json_pack("{s:o}", "job", j));
		if (store_job_notified(tr->st, ids[i]) < 0)
			break;
	}
	free(ids);
}

/* ---- change points ---- */

/*
 * The A/B rule on the raw runs of the points either side of a change
 * (at most TRACK_SIDE_POINTS a side, within the change's segment): the
 * verdict of the row of the series' workload, parameters and metric, and
 * its p, into ret_verdict and *ret_p. 0, or -1 when there is no such row.
 */
static int recheck(struct tracker *tr, const struct lab_config *cfg, const struct cfg_track *t,
		   const struct series_data *d, const struct changepoint *cp, char *ret_verdict, size_t len,
		   double *ret_p)
{
	const struct cfg_suite *suite = config_suite(cfg, t->suite);
	struct compare_rules defaults;
	struct strbuf err = STRBUF_INIT;
	size_t lo = cp->seg_start, hi = cp->seg_end;
	json_t *before, *after, *cmp, *params = json_loads(d->params, 0, NULL);
	const json_t *row;
	int r = -1;

	compare_rules_default(&defaults);
	if (cp->index - lo > TRACK_SIDE_POINTS)
		lo = cp->index - TRACK_SIDE_POINTS;
	if (hi - cp->index > TRACK_SIDE_POINTS)
		hi = cp->index + TRACK_SIDE_POINTS;
	before = track_jobs_side(tr, d->jobs, lo, cp->index);
	after = track_jobs_side(tr, d->jobs, cp->index, hi);
	cmp = compare_sides(before, NULL, after, NULL, suite ? &suite->rules : &defaults, &err);
	row = track_row_of(cmp, d->workload, params, d->metric);
	if (row) {
		snprintf(ret_verdict, len, "%s", jsonget_str(row, "verdict") ?: "?");
		*ret_p = jsonget_num_or(row, "p", 0);
		r = 0;
	}
	if (!cmp)
		log_warnx("track %s: series of %s: the A/B check could not compare: %s", t->name, d->metric, err.buf);
	json_decref(cmp);
	json_decref(before);
	json_decref(after);
	json_decref(params);
	strbuf_release(&err);
	return r;
}

/*
 * A confirmed regression a bisection may chase. One alert groups the
 * change points of every series that moved at the same commit; the
 * bisection chases the one the A/B rule saw most clearly (its smallest p),
 * so that each step is told from the ends by the plainest signal: spin-wait
 * instructions that go from 0.04 to 1 per op, rather than a time score that
 * moved 6%. Only rows the rule tests are chased: a context counter that went
 * from 3 to 38729 calls per window is evidence, not something a step can be
 * placed by.
 */
struct chase {
	int64_t alert, series;
	struct changepoint cp;
	double ab_p;		/* NAN when the A/B rule could not say: chased last */
};

struct chases {
	struct chase *c;
	size_t n, alloc;
};

static void chase_offer(struct chases *cs, int64_t alert, int64_t series, const struct changepoint *cp, double ab_p)
{
	size_t i;

	for (i = 0; i < cs->n; i++)
		if (cs->c[i].alert == alert) {
			if (isnan(ab_p) || (!isnan(cs->c[i].ab_p) && cs->c[i].ab_p <= ab_p))
				return;
			break;
		}
	if (i == cs->n) {
		if (cs->n == cs->alloc) {
			cs->alloc = cs->alloc ? 2 * cs->alloc : 4;
			cs->c = xrealloc(cs->c, cs->alloc * sizeof(*cs->c));
		}
		cs->n++;
	}
	cs->c[i] = (struct chase){ .alert = alert, .series = series, .cp = *cp, .ab_p = ab_p };
}

/* The change points of one series, kept and grouped; a change point that
 * becomes confirmed is checked with the A/B rule on its raw runs, then
 * announced (or rejected when that rule calls the two sides the same), and
 * a regression is offered to the bisection of its alert (chases). */
static void search_series(struct tracker *tr, const struct lab_config *cfg, const struct cfg_track *t,
			  int64_t series, struct chases *chases)
{
	struct series_data d;
	struct changepoint *cp = NULL;
	int64_t *keep = NULL;
	size_t i, n = 0, nkeep = 0;
	int r;

	if (store_series_data(tr->st, series, &d) < 0)
		return;
	r = changepoint_detect(d.values, d.n, &t->detect, &cp, &n);
	if (r < 0) {
		log_warnx("track %s: series %lld: change points: %s", t->name, (long long)series, strerror(-r));
		goto out;
	}
	keep = xcalloc(n ? n : 1, sizeof(*keep));
	for (i = 0; i < n; i++) {
		size_t after = d.n - 1 - cp[i].index;
		struct change_point_row row = {
			.series_id = series, .point_id = d.points[cp[i].index],
			.status = after >= (size_t)t->confirm_after ? "confirmed" : "provisional",
			.p = cp[i].p, .before = cp[i].before, .after = cp[i].after,
			.magnitude = cp[i].magnitude,
			.direction = track_change_direction(d.direction, cp[i].magnitude),
		};
		int64_t id = 0, alert = 0;
		int confirmed_now = 0, made = 0;

		keep[nkeep++] = row.point_id;
		if (store_change_point_put(tr->st, &row, &id, &confirmed_now) < 0 ||
		    store_alert_attach(tr->st, t->name, cp[i].index ? d.commits[cp[i].index - 1] : NULL,
				       d.commits[cp[i].index], id, &alert, &made) < 0)
			continue;
		if (made)
			log_info("track %s: alert %lld: %s moved %+.1f%% at %.12s (%s, p %.2g)", t->name,
				 (long long)alert, d.metric, 100 * row.magnitude, d.commits[cp[i].index],
				 row.direction, row.p);
		if (confirmed_now) {
			char verdict[32] = "";
			double ab_p = NAN;
			json_t *body;

			if (recheck(tr, cfg, t, &d, &cp[i], verdict, sizeof(verdict), &ab_p) == 0) {
				int same = !strcmp(verdict, "same");

				store_change_point_checked(tr->st, id, verdict, ab_p, same ? "rejected" : "confirmed");
				log_info("track %s: change point at %.12s in %s: the A/B rule on its runs says %s "
					 "(p %.2g)%s", t->name, d.commits[cp[i].index], d.metric, verdict, ab_p,
					 same ? "; rejected" : "");
				if (same)
					continue;
			}
			body = json_pack("{s:s,s:I,s:I,s:s,s:s?,s:{s:I,s:s,s:s,s:o,s:s},s:f,s:f,s:f,s:f,s:s,s:s,"
					 "s:s?,s:o}",
					 "track", t->name, "alert", (json_int_t)alert, "change_point", (json_int_t)id,
					 "commit", d.commits[cp[i].index],
					 "good_commit", cp[i].index ? d.commits[cp[i].index - 1] : NULL,
					 "series", "id", (json_int_t)series, "machine", d.machine, "workload", d.workload,
					 "params", json_loads(d.params, 0, NULL) ?: json_object(), "metric", d.metric,
					 "before", row.before, "after", row.after, "change_pct", 100 * row.magnitude,
					 "p", row.p, "direction", row.direction, "status", "confirmed",
					 "ab_verdict", verdict[0] ? verdict : NULL,
					 "ab_p", isfinite(ab_p) ? json_real(ab_p) : json_null());
			if (body)
				track_announce(tr, cfg, NOTIFY_CHANGE_POINT, body);
			/* a bisection asks the A/B rule to tell each step from the
			 * ends: never of a row that rule does not test (a context
			 * counter such as interrupts.CAL, or one unavailable) */
			if (t->bisect && !strcmp(row.direction, "regression") && strcmp(verdict, "context") &&
			    strcmp(verdict, "unavailable"))
				chase_offer(chases, alert, series, &cp[i], ab_p);
		}
	}
	store_change_points_prune(tr->st, series, keep, nkeep);
out:
	free(keep);
	free(cp);
	store_series_data_release(&d);
}

static void search_track(struct tracker *tr, const struct lab_config *cfg, const struct cfg_track *t)
{
	int64_t *series = NULL;
	size_t i, n = 0;
	struct chases chases = { 0 };

	if (store_track_series(tr->st, t->name, &series, &n) < 0)
		return;
	for (i = 0; i < n; i++)
		search_series(tr, cfg, t, series[i], &chases);
	free(series);
	for (i = 0; i < chases.n; i++) {
		struct series_data d;

		if (store_series_data(tr->st, chases.c[i].series, &d) < 0)
			continue;
		track_bisect_regression(tr, cfg, t, &d, &chases.c[i].cp, chases.c[i].alert);
		store_series_data_release(&d);
	}
	free(chases.c);
}

/*
 * The change points of the tracks whose series changed. The search is work
 * on the daemon's own host (a few million distance evaluations a series
 * with a change): it waits, as a build does, while a run measures on a
 * local machine (quiet.h), and a run that is about to measure waits for it.
 */
static void search_pending(struct tracker *tr, const struct lab_config *cfg)
{
	struct quiet_entry qe = { .ep = transport_here(), .pausable = 0 };
	const char *name;
	json_t *v;
	void *tmp;

	if (!json_object_size(tr->to_search))
		return;
	snprintf(qe.label, sizeof(qe.label), "the tracker's change-point search");
	if (tr->quiet && cfg->quiet_host) {
		struct strbuf why = STRBUF_INIT;
		int busy = quiet_build_begin(tr->quiet, &qe, &why) < 0;

		strbuf_release(&why);
		if (busy)
			return;	/* a run measures here: the next pass */
	}
	json_object_foreach_safe(tr->to_search, tmp, name, v) {
		const struct cfg_track *t = config_track(cfg, name);

		if (t)
			search_track(tr, cfg, t);
		json_object_del(tr->to_search, name);
	}
	if (tr->quiet && cfg->quiet_host)
		quiet_build_end(tr->quiet, &qe);
}

/* Points whose job ended: their values, and their track to search. */
static void points_ended(struct tracker *tr)
{
	json_t *ended = store_points_ended(tr->st, POINTS_PER_PASS), *e;
	size_t i;

	json_array_foreach(ended, i, e) {
		int64_t job = jsonget_int_or(e, "job", 0);
		const char *state = jsonget_str(e, "state") ?: "failed";
		struct strbuf err = STRBUF_INIT;
		json_t *doc = NULL, *values = NULL;
		char track[72] = "";
		int r;

		if (!strcmp(state, "done")) {
			doc = store_compare_doc(tr->st, job);
			values = doc ? compare_point_values(doc, "base", &err) : NULL;
			if (!values) {
				log_warnx("job %lld: its point has no values: %s", (long long)job,
					  doc ? err.buf : "the store could not read its runs");
				json_decref(doc);
				strbuf_release(&err);
				if (!doc)
					break;	/* the store's trouble: the next pass */
				doc = NULL;
			}
		}
		r = store_point_finish(tr->st, job, values ? "done" : "failed", values, track, sizeof(track));
		if (r < 0)
			log_warnx("job %lld: store: its point is not finished: %s", (long long)job, store_strerror(r));
		else
			log_info("track %s: point of job %lld %s, %zu values", track, (long long)job,
				 values ? "done" : "failed", json_array_size(values));
		if (r == 0 && values)
			json_object_set_new(tr->to_search, track, json_true());
		json_decref(values);
		json_decref(doc);
		strbuf_release(&err);
	}
	json_decref(ended);
}

/* ---- runs of a track ---- */

static void run_track(struct tracker *tr, const struct lab_config *cfg, const struct cfg_track *t,
		      const char *why)
{
	const struct cfg_suite *suite = config_suite(cfg, t->suite);
	struct strbuf err = STRBUF_INIT, result = STRBUF_INIT, subject = STRBUF_INIT;
	struct build_resolved r;
	size_t i, made = 0, had = 0;

	build_resolved_init(&r);
	if (!suite) {
		strbuf_addf(&result, "suite %s is not configured", t->suite);
		goto out;
	}
	if (track_resolve(tr, cfg, t->tree, t->url, t->branch, NULL, &r, &err) < 0) {
		strbuf_addf(&result, "cannot resolve %s: %s", t->branch, err.buf);
		goto out;
	}
	strbuf_addf(&subject, "%.12s %s", r.commit, r.subject.buf);
	for (i = 0; i < t->nmachines; i++) {
		json_t *machines = json_pack("[s]", t->machines[i]);
		struct job_request req = { .kind = "run", .tree = t->tree, .base = r.commit, .suite = t->suite,
					   .suite_json = suite->workloads, .machines = machines,
					   .submitter = "tracker", .boots = t->boots, .max_boots = t->boots,
					   .patch_subject = subject.buf,
					   .arch = submit_job_arch(cfg, machines, NULL, NULL, NULL) };
		struct point_commit pc = { .track = t->name, .commit = r.commit, .time = r.time,
					   .author = r.author.buf, .subject = r.subject.buf };
		struct stage_plan *plan = NULL;
		size_t nplan = submit_plan(cfg, suite, &req, &plan);
		int64_t job = 0;
		int rc;

		strbuf_reset(&err);
		rc = store_point_create(tr->st, &pc, t->machines[i], &req, plan, nplan, &job, &err);
		if (rc == -EEXIST) {
			had++;
		} else if (rc < 0) {
			strbuf_addf(&result, "%sthe point on %s is not stored: %s", result.len ? "; " : "",
				    t->machines[i], err.buf);
		} else {
			strbuf_addf(&result, "%sjob %lld on %s", made ? ", " : "new head: ", (long long)job,
				    t->machines[i]);
			made++;
		}
		free(plan);
		json_decref(machines);
	}
	if (!made && had == t->nmachines)
		strbuf_addstr(&result, "unchanged: measured already");
	if (made && tr->wake_sched)
		tr->wake_sched(tr->wake_arg);
out:
	log_info("track %s (%s): %.12s %s", t->name, why, r.commit[0] ? r.commit : "-", result.buf);
	store_track_ran(tr->st, t->name, r.commit[0] ? r.commit : NULL, result.buf);
	build_resolved_release(&r);
	strbuf_release(&err);
	strbuf_release(&result);
	strbuf_release(&subject);
}

/* Due tracks and those asked for run; each due time moves first. A
 * daemon that does not lead runs only those asked of it: the schedule is
 * the leader's. */
static void due_tracks(struct tracker *tr, const struct lab_config *cfg, json_t *asked, int lead)
{
	time_t now = (time_t)wall_now();
	size_t i;

	for (i = 0; i < cfg->ntracks && !tr->cancel; i++) {
		const struct cfg_track *t = &cfg->tracks[i];
		double due = 0;
		time_t next;
		int asked_now = json_object_get(asked, t->name) != NULL;

		if (!lead) {
			if (asked_now)
				run_track(tr, cfg, t, "asked for");
			continue;
		}
		if (store_track_next_due(tr->st, t->name, &due) < 0)
			continue;
		if (due > 0 && due <= now) {
			/* the next one is set before this one runs: a crash
			 * during the run does not run it twice */
			if (cron_next(&t->cron, now, &next) < 0 || store_track_set_next_due(tr->st, t->name, (double)next) < 0)
				continue;
			run_track(tr, cfg, t, due < now - 60 ? "due while the daemon was down" : "scheduled");
		} else {
			if (due == 0 && cron_next(&t->cron, now, &next) == 0)
				store_track_set_next_due(tr->st, t->name, (double)next);
			if (asked_now)
				run_track(tr, cfg, t, "asked for");
		}
	}
}

/* ---- the thread ---- */

/*
 * Whether this daemon does what nobody submits on this pass: alone on its
 * store it does; on a shared one (lab.store) only the leader does, and
 * another takes the lead once it has been silent for the lease timeout
 * (store_leader_take). A store error is no lead for the pass. Says when
 * the lead comes or goes.
 */
static int leads(struct tracker *tr, const struct lab_config *cfg)
{
	int r;

	if (!cfg->store)
		return 1;
	r = store_leader_take(tr->st, "tracker", cfg->lease_timeout);
	if (r < 0) {
		log_warnx("tracker: store: who leads the tracks and webhooks: %s; not this pass",
			  store_strerror(r));
		return 0;
	}
	if (r != tr->leading)
		log_info("tracker: this daemon (%lld) %s the lab's tracks and webhooks", (long long)store_daemon_id(tr->st),
			 r ? "leads" : "follows: another leads");
	tr->leading = r;
	return r;
}

/* What a pass works with, taken under the lock: the configuration (a
 * reference), its generation and the tracks asked for since the last
 * pass. NULL once the tracker stops. */
static const struct lab_config *pass_begin(struct tracker *tr, long *ret_gen, json_t **ret_asked)
{
	GUARD_MUTEX(&tr->lock);
	if (tr->stop)
		return NULL;
	*ret_gen = tr->cfg_gen + 1;
	*ret_asked = tr->run_now;
	tr->run_now = json_object();
	tr->woken = 0;
	return config_ref(tr->cfg);
}

/* Counts the pass and waits for the next: TRACK_POLL_S, or until woken or
 * stopped. */
static void pass_end(struct tracker *tr)
{
	struct timespec until;

	GUARD_MUTEX(&tr->lock);
	tr->passes++;
	pthread_cond_broadcast(&tr->cond);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += TRACK_POLL_S;
	while (!tr->stop && !tr->woken)
		if (pthread_cond_timedwait(&tr->cond, &tr->lock, &until) == ETIMEDOUT)
			break;
}

static void *track_main(void *arg)
{
	struct tracker *tr = arg;

	for (;;) {
		const struct lab_config *cfg;
		json_t *asked;
		long gen;
		int lead;

		if (!(cfg = pass_begin(tr, &gen, &asked)))
			break;

		/* the store learns the tracks once per configuration, and
		 * their series are searched again under it */
		if (tr->synced_gen != gen && store_tracks_sync(tr->st, cfg) == 0) {
			size_t i;

			tr->synced_gen = gen;
			for (i = 0; i < cfg->ntracks; i++)
				json_object_set_new(tr->to_search, cfg->tracks[i].name, json_true());
		}
		lead = leads(tr, cfg);
		if (tr->synced_gen == gen && cfg->ntracks)
			due_tracks(tr, cfg, asked, lead);
		if (lead) {
			points_ended(tr);
			search_pending(tr, cfg);
			track_bisect_pass(tr, cfg);
			announce_jobs(tr, cfg);
			deliver(tr, cfg);
		}
		json_decref(asked);
		config_free(cfg);

		pass_end(tr);
	}
	return NULL;
}

int track_start(const struct lab_config *cfg, struct store *st, const char *kernels_dir,
		struct quiet *quiet, void (*wake)(void *), void *arg, struct tracker **ret,
		struct strbuf *err)
{
	struct tracker *tr = xcalloc(1, sizeof(*tr));
	int r;

	pthread_mutex_init(&tr->lock, NULL);
	pthread_cond_init(&tr->cond, NULL);
	tr->cfg = config_ref(cfg);
	tr->st = st;
	tr->quiet = quiet;
	tr->kernels_dir = xstrdup(kernels_dir);
	tr->wake_sched = wake;
	tr->wake_arg = arg;
	tr->run_now = json_object();
	tr->to_search = json_object();
	tr->leading = -1;
	r = pthread_create(&tr->thread, NULL, track_main, tr);
	if (r) {
		strbuf_addf(err, "tracker: cannot start its thread: %s", strerror(r));
		config_free(tr->cfg);
		json_decref(tr->run_now);
		json_decref(tr->to_search);
		free(tr->kernels_dir);
		free(tr);
		return -1;
	}
	*ret = tr;
	return 0;
}

void track_set_config(struct tracker *tr, const struct lab_config *cfg)
{
	const struct lab_config *old;

	pthread_mutex_lock(&tr->lock);
	old = tr->cfg;
	tr->cfg = config_ref(cfg);
	tr->cfg_gen++;
	tr->woken = 1;
	pthread_cond_broadcast(&tr->cond);
	pthread_mutex_unlock(&tr->lock);
	config_free(old);
}

int track_run_now(struct tracker *tr, const char *name)
{
	int r = -ENOENT;

	pthread_mutex_lock(&tr->lock);
	if (config_track(tr->cfg, name)) {
		json_object_set_new(tr->run_now, name, json_true());
		tr->woken = 1;
		pthread_cond_broadcast(&tr->cond);
		r = 0;
	}
	pthread_mutex_unlock(&tr->lock);
	return r;
}

long track_passes(struct tracker *tr)
{
	long n;

	pthread_mutex_lock(&tr->lock);
	n = tr->passes;
	pthread_mutex_unlock(&tr->lock);
	return n;
}

int track_wait_pass(struct tracker *tr, long after, double timeout)
{
	struct timespec until;
	int r = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)timeout;
	pthread_mutex_lock(&tr->lock);
	while (tr->passes <= after && r == 0) {
		/* each pass that ends wakes the next at once */
		tr->woken = 1;
		pthread_cond_broadcast(&tr->cond);
		if (pthread_cond_timedwait(&tr->cond, &tr->lock, &until) == ETIMEDOUT)
			r = -ETIMEDOUT;
	}
	pthread_mutex_unlock(&tr->lock);
	return r;
}

void track_wake(struct tracker *tr)
{
	pthread_mutex_lock(&tr->lock);
	tr->woken = 1;
	pthread_cond_broadcast(&tr->cond);
	pthread_mutex_unlock(&tr->lock);
}

void track_stop(struct tracker *tr)
{
	if (!tr)
		return;
	pthread_mutex_lock(&tr->lock);
	tr->stop = 1;
	tr->cancel = 1;
	pthread_cond_broadcast(&tr->cond);
	pthread_mutex_unlock(&tr->lock);
	pthread_join(tr->thread, NULL);
	config_free(tr->cfg);
	json_decref(tr->run_now);
	json_decref(tr->to_search);
	free(tr->kernels_dir);
	pthread_mutex_destroy(&tr->lock);
	pthread_cond_destroy(&tr->cond);
	free(tr);
}
