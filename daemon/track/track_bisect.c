/*
 * Bisections, driven by the tracker thread (track_int.h). Every decision
 * is read back from the store on each pass (store_bisect.c), so a
 * bisection goes on where it was after a restart, and bisect.c makes the
 * choices (which commit next, what a step says, when it is over):
 *
 * 1. The builder lists the commits after good up to bad (build.sh
 *    --resolve --since).
 * 2. The ends are measured: run jobs of the good and the bad commit, or,
 *    for a track's regression, the points' jobs either side of it. The
 *    A/B rule on the two must call the chased metric changed; when it
 *    cannot, each end gets more boots, up to BISECT_ROUNDS jobs, and then
 *    the bisection fails saying what the lab could have detected.
 * 3. Steps, one at a time: a run job of the commit bisect_next names,
 *    of at least the boots the rule needs to call it against the ends.
 *    Compared with both ends by the A/B rule and placed between them
 *    (bisect_position: which side of the ends' midpoint its per-boot
 *    values lie on) it is good, bad or inconclusive (bisect_position_mark;
 *    the two verdicts alone, bisect_classify, where a side has a value
 *    <= 0 or one boot); an inconclusive one is measured again (more boots,
 *    the jobs' runs pooled), up to BISECT_ROUNDS jobs. A commit whose job
 *    fails (it does not build, boot or run) is skipped.
 * 4. The end: the first bad commit, or the range it could not narrow and
 *    why; the report (report_bisect.c) goes to the webhooks.
 *
 * A step's build is the build cache's (build.sh): a commit built before,
 * by a track or an earlier step, is not built again.
 */
#include "track_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "changepoint.h"
#include "compare.h"
#include "config.h"
#include "jsonget.h"
#include "log.h"
#include "report.h"
#include "stats.h"
#include "store.h"
#include "submit.h"
#include "util.h"
#include "banned.h"

#define BISECT_ROUNDS 3		/* jobs a commit (or an end) gets at most */
#define BISECT_MAX_BOOTS 20	/* a step's job, at most (as the API allows) */

static int job_open(const json_t *step)
{
	const char *s = jsonget_str(step, "job_state");

	return s && (!strcmp(s, "queued") || !strcmp(s, "running"));
}

/* A compact account of a comparison row: what a step's evidence keeps. */
static json_t *row_evidence(const json_t *row)
{
	const json_t *b = json_object_get(row, "base"), *p = json_object_get(row, "patched");

	return json_pack("{s:O,s:O,s:O,s:O,s:{s:O,s:O,s:O},s:{s:O,s:O,s:O}}",
			 "verdict", json_object_get(row, "verdict") ?: json_null(),
			 "p", json_object_get(row, "p") ?: json_null(),
			 "change_pct", json_object_get(row, "change_pct") ?: json_null(),
			 "mde_pct", json_object_get(row, "mde_pct") ?: json_null(),
			 "base", "center", json_object_get(b, "center") ?: json_null(),
			 "spread_pct", json_object_get(b, "spread_pct") ?: json_null(),
			 "n", json_object_get(b, "n") ?: json_null(),
			 "patched", "center", json_object_get(p, "center") ?: json_null(),
			 "spread_pct", json_object_get(p, "spread_pct") ?: json_null(),
			 "n", json_object_get(p, "n") ?: json_null());
}

/* a bisection as the driver sees it on one pass */
struct bis {
	int64_t id;
	json_t *doc;			/* store_bisection_json */
	const struct cfg_suite *suite;
	struct compare_rules rules;
	json_t *params;			/* the chased row's, or NULL before it is chosen */
	json_t *good_side, *bad_side;	/* the ends' runs, once measured */
};

static void finish(struct tracker *tr, const struct lab_config *cfg, struct bis *b, const char *state,
		   const char *first_bad, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void finish(struct tracker *tr, const struct lab_config *cfg, struct bis *b, const char *state,
		   const char *first_bad, const char *fmt, ...)
{
	struct strbuf result = STRBUF_INIT, report = STRBUF_INIT;
	json_t *doc, *body;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&result, fmt, ap);
	va_end(ap);
	if (store_bisection_finish(tr->st, b->id, state, first_bad, result.buf) < 0) {
		log_warnx("bisection %lld: store: its end is not kept; the next pass tries again", (long long)b->id);
		strbuf_release(&result);
		return;
	}
	log_info("bisection %lld: %s: %s", (long long)b->id, state, result.buf);
	doc = store_bisection_json(tr->st, b->id);
	if (doc) {
		report_bisect(doc, &report);
		body = json_pack("{s:I,s:s?,s:O,s:s,s:s?,s:O,s:O,s:O,s:O,s:s,s:s}", "bisection", (json_int_t)b->id,
				 "track", jsonget_str(doc, "track"), "alert", json_object_get(doc, "alert"),
				 "state", state,
				 "first_bad", first_bad, "tree", json_object_get(doc, "tree"),
				 "metric", json_object_get(doc, "metric"), "workload", json_object_get(doc, "workload"),
				 "params", json_object_get(doc, "params"), "result", result.buf, "report", report.buf);
		if (body)
			track_announce(tr, cfg, NOTIFY_BISECTION, body);
		json_decref(doc);
	}
	strbuf_release(&result);
	strbuf_release(&report);
}

/* The boots measured of the steps of role that are done. */
static size_t boots_of(const struct bis *b, const char *role)
{
	const json_t *s;
	size_t i, n = 0;

	json_array_foreach(json_object_get(b->doc, "steps"), i, s)
		if (!strcmp(jsonget_str(s, "role") ?: "", role) && !strcmp(jsonget_str(s, "job_state") ?: "", "done"))
			n += (size_t)jsonget_int_or(s, "job_boots", 0);
	return n;
}

/*
 * The boots of a step's job: the bisection's, or more when the A/B rule
 * (a rank test at the suite's alpha) could never call a step of that many
 * boots against the ends as they are measured: a step that can only be
 * inconclusive is a wasted build and boot.
 */
static int step_boots(const struct bis *b, const char *role)
{
	int boots = (int)jsonget_int_or(b->doc, "boots", 0);
	size_t good = boots_of(b, "good"), bad = boots_of(b, "bad"), ends = good < bad ? good : bad;

	if (strcmp(role, "step") || !ends)
		return boots;
	while (boots < BISECT_MAX_BOOTS && stats_mwu_min_p(ends, (size_t)boots) >= b->rules.alpha)
		boots++;
	return boots;
}

/* A new run job of commit for the bisection, as a step of role. */
static int add_step(struct tracker *tr, const struct lab_config *cfg, struct bis *b, const char *commit,
		    const char *role, const char *subject)
{
	struct strbuf err = STRBUF_INIT, title = STRBUF_INIT, who = STRBUF_INIT;
	json_t *machines = json_pack("[s]", jsonget_str(b->doc, "machine"));
	int boots = step_boots(b, role);
	struct job_request req = { .kind = "run", .tree = jsonget_str(b->doc, "tree"), .base = commit,
				   .suite = b->suite->name, .suite_json = b->suite->workloads, .machines = machines,
				   .boots = boots, .max_boots = boots,
				   .arch = submit_job_arch(cfg, machines, NULL, NULL, NULL) };
	struct stage_plan *plan = NULL;
	size_t nplan;
	int64_t job = 0;
	int rc;

	strbuf_addf(&who, "bisection-%lld", (long long)b->id);
	strbuf_addf(&title, "bisection %lld, %s: %.12s%s%s", (long long)b->id, role, commit, subject ? " " : "",
		    subject ?: "");
	req.submitter = who.buf;
	req.patch_subject = title.buf;
	nplan = submit_plan(cfg, b->suite, &req, &plan);
	rc = store_bisection_step_add(tr->st, b->id, commit, role, &req, plan, nplan, &job, &err);
	if (rc < 0)
		log_warnx("bisection %lld: store: the %s step of %.12s is not made: %s", (long long)b->id, role,
			  commit, err.buf);
	else
		log_info("bisection %lld: %s step: job %lld measures %.12s", (long long)b->id, role, (long long)job,
			 commit);
	if (rc == 0 && tr->wake_sched)
		tr->wake_sched(tr->wake_arg);
	free(plan);
	json_decref(machines);
	strbuf_release(&err);
	strbuf_release(&title);
	strbuf_release(&who);
	return rc;
}

/* The done jobs of the steps of role (and commit, unless NULL) as one side;
 * *ret_jobs gets how many jobs it pools. */
static json_t *side(struct tracker *tr, struct bis *b, const char *role, const char *commit, size_t *ret_jobs)
{
	const json_t *steps = json_object_get(b->doc, "steps"), *s;
	int64_t *jobs = xcalloc(json_array_size(steps) + 1, sizeof(*jobs));
	size_t i, n = 0;
	json_t *doc;

	json_array_foreach(steps, i, s)
		if (!strcmp(jsonget_str(s, "role") ?: "", role) &&
		    (!commit || !strcmp(jsonget_str(s, "commit") ?: "", commit)) &&
		    !strcmp(jsonget_str(s, "job_state") ?: "", "done"))
			jobs[n++] = jsonget_int_or(s, "job", 0);
	doc = track_jobs_side(tr, jobs, 0, n);
	free(jobs);
	if (ret_jobs)
		*ret_jobs = n;
	return doc;
}

/* The chased row of base vs patched (a new reference), or NULL with err. */
static json_t *compare_row(struct bis *b, const json_t *base, const json_t *patched, struct strbuf *err)
{
	json_t *cmp = compare_sides(base, NULL, patched, NULL, &b->rules, err), *row = NULL;

	if (cmp) {
		row = json_incref((json_t *)track_row_of(cmp, jsonget_str(b->doc, "workload"), b->params,
							  jsonget_str(b->doc, "metric")));
		if (!row)
			strbuf_addf(err, "no row of %s in %s", jsonget_str(b->doc, "metric"),
				    jsonget_str(b->doc, "workload"));
	}
	json_decref(cmp);
	return row;
}

/* Of the rows of metric in the ends' comparison (of workload when the
 * bisection names one), the one that moved most: changed rows first. */
static const json_t *choose_row(struct bis *b, const json_t *cmp)
{
	const char *metric = jsonget_str(b->doc, "metric"), *workload = jsonget_str(b->doc, "workload");
	const json_t *row, *best = NULL;
	double best_score = -1;
	size_t i;

	json_array_foreach(json_object_get(cmp, "rows"), i, row) {
		const char *v = jsonget_str(row, "verdict") ?: "";
		int moved = !strcmp(v, "regression") || !strcmp(v, "improvement") || !strcmp(v, "changed");
		double score = fabs(jsonget_num_or(row, "change_pct", 0));

		if (strcmp(jsonget_str(row, "metric") ?: "", metric) ||
		    (workload && strcmp(jsonget_str(row, "workload") ?: "", workload)))
			continue;
		if (b->params && !json_equal(json_object_get(row, "params"), b->params))
			continue;
		if (isnan(score))
			score = 0;
		score += moved ? 1e12 : 0;
		if (score > best_score) {
			best = row;
			best_score = score;
		}
	}
	return best;
}

/* How many steps of role (and commit) there are, and whether one is open. */
static size_t rounds(const struct bis *b, const char *role, const char *commit, int *ret_open)
{
	const json_t *s;
	size_t i, n = 0;

	*ret_open = 0;
	json_array_foreach(json_object_get(b->doc, "steps"), i, s)
		if (!strcmp(jsonget_str(s, "role") ?: "", role) &&
		    (!commit || !strcmp(jsonget_str(s, "commit") ?: "", commit))) {
			n++;
			*ret_open |= job_open(s);
		}
	return n;
}

/* The failed job of an end or a step, in words: "job 12 failed at build (build): ..." */
static void job_failure(const json_t *s, struct strbuf *out)
{
	strbuf_addf(out, "job %lld %s", jsonget_int_or(s, "job", 0),
		    jsonget_str(s, "job_state") ?: "is gone");
	if (jsonget_str(s, "error_stage"))
		strbuf_addf(out, " at its %s stage", jsonget_str(s, "error_stage"));
	if (jsonget_str(s, "error_class"))
		strbuf_addf(out, " (%s)", jsonget_str(s, "error_class"));
	if (jsonget_str(s, "error_message"))
		strbuf_addf(out, ": %.300s", jsonget_str(s, "error_message"));
}

/*
 * The ends: measured (1), still measuring or measuring more (0), or the
 * bisection is over (-1). Sets b->good_side and b->bad_side, and the
 * chased row and the change once the ends show one.
 */
static int ends(struct tracker *tr, const struct lab_config *cfg, struct bis *b, const char *bad_sha)
{
	static const char *const roles[] = { "good", "bad" };
	struct strbuf err = STRBUF_INIT;
	json_t *cmp;
	const json_t *row, *s;
	size_t i, k, ngood, nbad;
	int open = 0, o, r = 0;

	/* each end's steps that ended: a failed one ends the bisection */
	json_array_foreach(json_object_get(b->doc, "steps"), i, s) {
		const char *role = jsonget_str(s, "role") ?: "";

		if (!strcmp(role, "step") || job_open(s) || jsonget_str(s, "outcome"))
			continue;
		if (!strcmp(jsonget_str(s, "job_state") ?: "", "done")) {
			store_bisection_step_done(tr->st, jsonget_int_or(s, "id", 0), role, NULL);
			continue;
		}
		job_failure(s, &err);
		store_bisection_step_done(tr->st, jsonget_int_or(s, "id", 0), "skip", NULL);
		finish(tr, cfg, b, "failed", NULL, "the %s end %.12s could not be measured: %s", role,
		       jsonget_str(s, "commit"), err.buf);
		strbuf_release(&err);
		return -1;
	}
	for (k = 0; k < 2; k++) {
		if (rounds(b, roles[k], NULL, &o) == 0) {
			add_step(tr, cfg, b, k ? bad_sha : jsonget_str(b->doc, "good"), roles[k], NULL);
			o = 1;
		}
		open |= o;
	}
	if (open) {
		store_bisection_progress(tr->st, b->id, "measuring the good and the bad end", -1, NAN);
		return 0;
	}
	b->good_side = side(tr, b, "good", NULL, &ngood);
	b->bad_side = side(tr, b, "bad", NULL, &nbad);
	if (jsonget_str(b->doc, "change"))
		return 1;	/* chosen on an earlier pass */
	cmp = compare_sides(b->good_side, NULL, b->bad_side, NULL, &b->rules, &err);
	row = cmp ? choose_row(b, cmp) : NULL;
	if (!row) {
		finish(tr, cfg, b, "failed", NULL, "the ends have no %s to compare%s%s", jsonget_str(b->doc, "metric"),
		       cmp ? "" : ": ", cmp ? "" : err.buf);
		r = -1;
	} else {
		const char *v = jsonget_str(row, "verdict") ?: "";
		json_t *ev = json_pack("{s:o}", "good_to_bad", row_evidence(row));
		char *params = json_dumps(json_object_get(row, "params"), JSON_COMPACT | JSON_SORT_KEYS);
		const json_t *last_bad = NULL;

		json_array_foreach(json_object_get(b->doc, "steps"), i, s)
			if (!strcmp(jsonget_str(s, "role") ?: "", "bad"))
				last_bad = s;
		store_bisection_step_done(tr->st, jsonget_int_or(last_bad, "id", 0), "bad", ev);
		if (!strcmp(v, "regression") || !strcmp(v, "improvement") || !strcmp(v, "changed")) {
			store_bisection_set_row(tr->st, b->id, jsonget_str(row, "workload"), params, v);
			json_object_set_new(b->doc, "change", json_string(v));
			json_object_set_new(b->doc, "workload", json_incref(json_object_get(row, "workload")));
			json_decref(b->params);
			b->params = json_incref(json_object_get(row, "params"));
			log_info("bisection %lld: the ends differ in %s of %s: %s %+.1f%% (p %.2g)", (long long)b->id,
				 jsonget_str(b->doc, "metric"), jsonget_str(row, "workload"), v,
				 jsonget_num_or(row, "change_pct", 0),
				 jsonget_num_or(row, "p", 0));
			r = 1;
		} else if (ngood < BISECT_ROUNDS || nbad < BISECT_ROUNDS) {
			/* inconclusive, or same within what these boots resolve: more */
			if (ngood < BISECT_ROUNDS)
				add_step(tr, cfg, b, jsonget_str(b->doc, "good"), "good", NULL);
			if (nbad < BISECT_ROUNDS)
				add_step(tr, cfg, b, bad_sha, "bad", NULL);
			store_bisection_progress(tr->st, b->id, "the ends are not told apart yet: more boots of each",
						 -1, NAN);
		} else {
			double mde = jsonget_num_or(row, "mde_pct", 0);

			finish(tr, cfg, b, "failed", NULL, "the A/B rule does not tell the ends apart in %s of %s: %s, "
			       "%+.1f%% (p %.2g) after %zu and %zu jobs%s%.1f%%", jsonget_str(b->doc, "metric"),
			       jsonget_str(row, "workload"), v, jsonget_num_or(row, "change_pct", 0),
			       jsonget_num_or(row, "p", 0), ngood, nbad,
			       isfinite(mde) ? "; the least change it could have detected: " : "", isfinite(mde) ? mde : 0);
			r = -1;
		}
		json_decref(ev);
		free(params);
	}
	json_decref(cmp);
	strbuf_release(&err);
	return r;
}

/*
 * What a step's row says for the bisection: its verdict, except that a row
 * whose equivalence interval fits the margin ("no change beyond X%", which
 * is `inconclusive` for a job since `same` needs the least change) counts
 * as the same here. A bisection asks which end a step resembles, and its
 * ends differ by a confirmed change; a step within the margin of both ends
 * is still inconclusive (bisect_classify).
 */
static const char *step_verdict(const json_t *row)
{
	const char *v = jsonget_str(row, "verdict");

	if (v && !strcmp(v, "inconclusive") && json_is_number(json_object_get(row, "no_change_beyond_pct")))
		return "same";
	return v;
}

/* The per-boot values of the chased row on a side (compare_point_values),
 * into a new array *ret; their count, 0 when it has none. */
static size_t row_samples(struct bis *b, const json_t *side_doc, double **ret)
{
	struct strbuf err = STRBUF_INIT;
	json_t *vals = compare_point_values(side_doc, NULL, &err), *o, *v;
	size_t i, j, n = 0;

	*ret = NULL;
	json_array_foreach(vals, i, o) {
		const json_t *samples = json_object_get(o, "samples");

		if (strcmp(jsonget_str(o, "metric") ?: "", jsonget_str(b->doc, "metric")) ||
		    strcmp(jsonget_str(o, "workload") ?: "", jsonget_str(b->doc, "workload") ?: "") ||
		    !json_equal(json_object_get(o, "params"), b->params))
			continue;
		*ret = xcalloc(json_array_size(samples) + 1, sizeof(**ret));
		json_array_foreach(samples, j, v)
			(*ret)[n++] = json_number_value(v);
		break;
	}
	json_decref(vals);
	strbuf_release(&err);
	return n;
}

/*
 * Where the step lies between the ends (bisect_position), its sd floored
 * by the rules' noise floor; 0, or -1 when a side has too few boots or a
 * value that is not > 0 (the two verdicts decide then).
 */
static int step_position(struct bis *b, const json_t *step_side, struct bisect_position *ret)
{
	double *g, *bd, *st;
	size_t ng = row_samples(b, b->good_side, &g), nb = row_samples(b, b->bad_side, &bd),
	       ns = row_samples(b, step_side, &st);
	int rc = bisect_position(g, ng, bd, nb, st, ns, b->rules.noise_floor, ret);

	free(g);
	free(bd);
	free(st);
	return rc ? -1 : 0;
}

/* Classifies the steps that ended and have no outcome yet. */
static void classify(struct tracker *tr, struct bis *b)
{
	const json_t *s;
	size_t i;

	json_array_foreach(json_object_get(b->doc, "steps"), i, s) {
		const char *commit = jsonget_str(s, "commit") ?: "";
		int64_t id = jsonget_int_or(s, "id", 0);
		struct strbuf err = STRBUF_INIT;
		json_t *ev = NULL, *step_side, *vg = NULL, *vb = NULL;
		enum bisect_mark m;
		size_t njobs;

		if (strcmp(jsonget_str(s, "role") ?: "", "step") || job_open(s) || jsonget_str(s, "outcome"))
			continue;
		if (strcmp(jsonget_str(s, "job_state") ?: "", "done")) {
			job_failure(s, &err);
			ev = json_pack("{s:s}", "failed", err.buf);
			store_bisection_step_done(tr->st, id, "skip", ev);
			json_object_set_new((json_t *)s, "outcome", json_string("skip"));
			log_info("bisection %lld: %.12s is skipped: %s", (long long)b->id, commit, err.buf);
			json_decref(ev);
			strbuf_release(&err);
			continue;
		}
		step_side = side(tr, b, "step", commit, &njobs);
		vg = compare_row(b, b->good_side, step_side, &err);
		vb = vg ? compare_row(b, b->bad_side, step_side, &err) : NULL;
		if (!vg || !vb) {
			struct strbuf why = STRBUF_INIT;

			m = BISECT_SKIP;
			strbuf_addf(&why, "its runs have no value to compare: %s", err.buf);
			ev = json_pack("{s:s}", "failed", why.buf);
			strbuf_release(&why);
		} else {
			struct bisect_position pos;

			if (step_position(b, step_side, &pos) == 0) {
				m = bisect_position_mark(&pos, b->rules.alpha, step_verdict(vg), step_verdict(vb),
							 jsonget_str(b->doc, "change"));
				ev = json_pack("{s:o,s:o,s:I,s:{s:f,s:f,s:f,s:f}}", "vs_good", row_evidence(vg),
					       "vs_bad", row_evidence(vb), "jobs", (json_int_t)njobs, "position",
					       "x", pos.x, "p_good", pos.p_good, "p_bad", pos.p_bad, "alpha",
					       b->rules.alpha);
				log_info("bisection %lld: %.12s lies %.2f of the way from the good end to the bad "
					 "one (p good %.2g, p bad %.2g)", (long long)b->id, commit, pos.x, pos.p_good,
					 pos.p_bad);
			} else {
				m = bisect_classify(step_verdict(vg), step_verdict(vb), jsonget_str(b->doc, "change"));
				ev = json_pack("{s:o,s:o,s:I}", "vs_good", row_evidence(vg), "vs_bad",
					       row_evidence(vb), "jobs", (json_int_t)njobs);
			}
		}
		store_bisection_step_done(tr->st, id, bisect_mark_name(m), ev);
		json_object_set_new((json_t *)s, "outcome", json_string(bisect_mark_name(m)));
		log_info("bisection %lld: %.12s is %s (against good: %s, against bad: %s)", (long long)b->id, commit,
			 bisect_mark_name(m), vg ? step_verdict(vg) : "-", vb ? step_verdict(vb) : "-");
		json_decref(ev);
		json_decref(vg);
		json_decref(vb);
		json_decref(step_side);
		strbuf_release(&err);
	}
}

/* The mark of commit: its latest step's outcome; *ret_more when it is
 * inconclusive and may be measured again. */
static enum bisect_mark mark_of(const struct bis *b, const char *commit, int *ret_more)
{
	const json_t *s, *last = NULL;
	size_t i, n = 0;
	const char *o;

	*ret_more = 0;
	json_array_foreach(json_object_get(b->doc, "steps"), i, s)
		if (!strcmp(jsonget_str(s, "role") ?: "", "step") && !strcmp(jsonget_str(s, "commit") ?: "", commit)) {
			last = s;
			n++;
		}
	o = last ? jsonget_str(last, "outcome") : NULL;
	if (!o)
		return BISECT_UNTESTED;
	if (!strcmp(o, "good"))
		return BISECT_GOOD;
	if (!strcmp(o, "bad"))
		return BISECT_BAD;
	if (!strcmp(o, "skip"))
		return BISECT_SKIP;
	*ret_more = n < BISECT_ROUNDS;
	return BISECT_INCONCLUSIVE;
}

/* the median time a step's job took, NAN before one ended */
static double step_time(const struct bis *b)
{
	const json_t *s;
	double t[64];
	size_t i, n = 0;

	json_array_foreach(json_object_get(b->doc, "steps"), i, s) {
		double a = jsonget_num_or(s, "job_started", 0),
		       z = jsonget_num_or(s, "job_finished", 0);

		if (n < 64 && a > 0 && z >= a && !strcmp(jsonget_str(s, "job_state") ?: "", "done"))
			t[n++] = z - a;
	}
	return n ? stats_median(t, n) : NAN;
}

/* The first bad commit's author, from the builder (NULL when it cannot say). */
static char *author_of(struct tracker *tr, const struct lab_config *cfg, struct bis *b, const char *sha)
{
	struct build_resolved r;
	struct strbuf err = STRBUF_INIT;
	char *a = NULL;

	build_resolved_init(&r);
	if (track_resolve(tr, cfg, jsonget_str(b->doc, "tree"), NULL, sha, NULL, &r, &err) == 0 && r.author.len)
		a = xstrdup(r.author.buf);
	build_resolved_release(&r);
	strbuf_release(&err);
	return a;
}

/* The next move once the ends are measured and the steps classified. */
static void next_move(struct tracker *tr, const struct lab_config *cfg, struct bis *b, json_t *commits)
{
	size_t n = json_array_size(commits), i, nskip = 0, ninc = 0;
	enum bisect_mark *marks = xcalloc(n, sizeof(*marks));
	struct bisect_answer ans;
	const json_t *s;
	int more;

	json_array_foreach(json_object_get(b->doc, "steps"), i, s)
		if (!strcmp(jsonget_str(s, "role") ?: "", "step") && job_open(s))
			goto out;	/* one step at a time: it measures */
	for (i = 0; i + 1 < n; i++) {
		const char *c = jsonget_str(json_array_get(commits, i), "commit");

		marks[i] = mark_of(b, c, &more);
		if (more) {
			add_step(tr, cfg, b, c, "step", jsonget_str(json_array_get(commits, i), "subject"));
			store_bisection_progress(tr->st, b->id, "more boots of an inconclusive step", -1, NAN);
			goto out;
		}
		nskip += marks[i] == BISECT_SKIP;
		ninc += marks[i] == BISECT_INCONCLUSIVE;
	}
	marks[n - 1] = BISECT_BAD;
	if (bisect_next(marks, n, &ans) < 0)
		goto out;
	if (ans.state == BISECT_NEXT) {
		const json_t *c = json_array_get(commits, ans.index);
		struct strbuf status = STRBUF_INIT;
		double per = step_time(b);

		if (add_step(tr, cfg, b, jsonget_str(c, "commit"), "step", jsonget_str(c, "subject")) == 0) {
			strbuf_addf(&status, "measuring %.12s %s; at most %u steps left", jsonget_str(c, "commit"),
				    jsonget_str(c, "subject") ?: "", ans.steps_left);
			store_bisection_progress(tr->st, b->id, status.buf, (int)ans.steps_left,
						 isfinite(per) ? per * ans.steps_left : NAN);
		}
		strbuf_release(&status);
	} else if (ans.state == BISECT_FOUND) {
		json_t *c = json_array_get(commits, ans.first_bad);
		char *author = author_of(tr, cfg, b, jsonget_str(c, "commit"));

		if (author) {
			json_object_set_new(c, "author", json_string(author));
			store_bisection_set_commits(tr->st, b->id, commits);
		}
		finish(tr, cfg, b, "done", jsonget_str(c, "commit"),
		       "first bad commit %.12s (%s)%s%s; %zu commits, %zu steps measured, %zu skipped",
		       jsonget_str(c, "commit"), jsonget_str(c, "subject") ?: "", author ? " by " : "", author ?: "", n,
		       (size_t)jsonget_int_or(b->doc, "steps_measured", 0), nskip);
		free(author);
	} else {
		const char *lo = ans.lo < 0 ? jsonget_str(b->doc, "good")
					    : jsonget_str(json_array_get(commits, (size_t)ans.lo), "commit");

		finish(tr, cfg, b, "done", NULL, "could not narrow it below %zu commits: the first bad commit is after "
		       "%.12s and at most %.12s; the commits between were skipped (%zu: they did not build, boot or "
		       "run) or stayed inconclusive (%zu) after %d jobs each", ans.first_bad - (size_t)(ans.lo + 1) + 1,
		       lo, jsonget_str(json_array_get(commits, ans.first_bad), "commit"), nskip, ninc, BISECT_ROUNDS);
	}
out:
	free(marks);
}

/* The range, from the builder: 0 when known, else the bisection is over. */
static int range(struct tracker *tr, const struct lab_config *cfg, struct bis *b, json_t **ret)
{
	struct build_resolved r;
	struct strbuf err = STRBUF_INIT;
	json_t *commits;
	size_t i;
	int rc;

	if ((*ret = json_object_get(b->doc, "commits")) && json_array_size(*ret))
		return 0;
	build_resolved_init(&r);
	rc = track_resolve(tr, cfg, jsonget_str(b->doc, "tree"), NULL, jsonget_str(b->doc, "bad"),
			   jsonget_str(b->doc, "good"), &r, &err);
	if (rc == -ECANCELED) {
		build_resolved_release(&r);
		strbuf_release(&err);
		return -1;
	}
	if (rc < 0 || !r.nbetween) {
		finish(tr, cfg, b, "failed", NULL, "no commits to bisect between %s and %s: %s",
		       jsonget_str(b->doc, "good"), jsonget_str(b->doc, "bad"),
		       rc < 0 ? err.buf : "the bad commit is the good one");
		build_resolved_release(&r);
		strbuf_release(&err);
		return -1;
	}
	commits = json_array();
	for (i = 0; i < r.nbetween; i++)
		json_array_append_new(commits, json_pack("{s:s,s:f,s:s}", "commit", r.between[i].sha, "time",
							 r.between[i].time, "subject", r.between[i].subject));
	store_bisection_set_commits(tr->st, b->id, commits);
	log_info("bisection %lld: %zu commits after %.12s up to %.12s", (long long)b->id, r.nbetween, r.since,
		 r.commit);
	json_object_set_new(b->doc, "commits", commits);
	*ret = commits;
	build_resolved_release(&r);
	strbuf_release(&err);
	return 0;
}

static void drive(struct tracker *tr, const struct lab_config *cfg, int64_t id)
{
	struct bis b = { .id = id };
	json_t *commits;
	const char *bad;

	if (!(b.doc = store_bisection_json(tr->st, id)))
		return;
	b.suite = config_suite(cfg, jsonget_str(b.doc, "suite"));
	b.params = json_incref(json_object_get(b.doc, "params"));
	if (json_is_null(b.params)) {
		json_decref(b.params);
		b.params = NULL;
	}
	if (!b.suite || !config_tree(cfg, jsonget_str(b.doc, "tree")) ||
	    !config_machine(cfg, jsonget_str(b.doc, "machine"))) {
		finish(tr, cfg, &b, "failed", NULL, "its suite %s, tree %s or machine %s is no longer configured",
		       jsonget_str(b.doc, "suite"), jsonget_str(b.doc, "tree"), jsonget_str(b.doc, "machine"));
		goto out;
	}
	b.rules = b.suite->rules;
	if (range(tr, cfg, &b, &commits) < 0)
		goto out;
	bad = jsonget_str(json_array_get(commits, json_array_size(commits) - 1), "commit");
	if (ends(tr, cfg, &b, bad) <= 0)
		goto out;
	classify(tr, &b);
	next_move(tr, cfg, &b, commits);
out:
	json_decref(b.doc);
	json_decref(b.params);
	json_decref(b.good_side);
	json_decref(b.bad_side);
}

void track_bisect_pass(struct tracker *tr, const struct lab_config *cfg)
{
	int64_t *ids = NULL;
	size_t i, n = 0;

	if (store_bisections_running(tr->st, &ids, &n) < 0)
		return;
	for (i = 0; i < n && !tr->cancel; i++)
		drive(tr, cfg, ids[i]);
	free(ids);
}

void track_bisect_regression(struct tracker *tr, const struct lab_config *cfg, const struct cfg_track *t,
			     const struct series_data *d, const struct changepoint *cp, int64_t alert)
{
	size_t lo = cp->index - cp->seg_start > TRACK_SIDE_POINTS ? cp->index - TRACK_SIDE_POINTS : cp->seg_start;
	size_t hi = cp->seg_end - cp->index > TRACK_SIDE_POINTS ? cp->index + TRACK_SIDE_POINTS : cp->seg_end;
	struct bisection_request req = { .alert = alert, .track = t->name, .tree = t->tree,
					 .good = d->commits[cp->index - 1], .bad = d->commits[cp->index],
					 .suite = t->suite, .machine = d->machine, .metric = d->metric,
					 .workload = d->workload, .params = d->params, .boots = t->boots,
					 .submitter = "tracker" };
	int64_t good[TRACK_SIDE_POINTS], bad[TRACK_SIDE_POINTS], id = 0;
	struct strbuf err = STRBUF_INIT;
	size_t i, ng = 0, nb = 0;
	int rc;

	(void)cfg;
	if (!cp->index)
		return;
	for (i = lo; i < cp->index && ng < TRACK_SIDE_POINTS; i++)
		if (d->jobs[i])
			good[ng++] = d->jobs[i];
	for (i = cp->index; i < hi && nb < TRACK_SIDE_POINTS; i++)
		if (d->jobs[i])
			bad[nb++] = d->jobs[i];
	rc = store_bisection_create(tr->st, &req, good, ng, bad, nb, &id, &err);
	if (rc == 0)
		log_info("track %s: alert %lld: bisection %lld between %.12s and %.12s in %s", t->name,
			 (long long)alert, (long long)id, req.good, req.bad, d->metric);
	else if (rc != -EEXIST)
		log_warnx("track %s: alert %lld: the bisection is not stored: %s", t->name, (long long)alert, err.buf);
	strbuf_release(&err);
}
