/*
 * store-fill: fills a lab's store with finished A/B jobs through the
 * daemon's own code, for b0016's API latency on a store of 100,000 jobs
 * (docs/scale.md). No SQL of its own: the store is whichever the lab
 * names (lab.store, else data_dir's SQLite file).
 *
 *   store-fill LAB.yaml N REPLAY [--runs-every K] [--first I --step S]
 *
 * The daemon has made the store first. Job i (I, I+S, I+2S, ... up to N
 * jobs: several store-fills may share a PostgreSQL store, each with
 * machines of its own when S divides their count) is what POST /api/v1/jobs makes of the body the
 * simulated lab's jobs have (tests/sim/sim.sh: suite demo, tree linux, a
 * patch of its own, 1 boot a side): submit_request_parse, submit_plan,
 * store_job_create. Its stages are then walked as the scheduler walks
 * them: each build begun, kept (store_build_add) and finished; each boot
 * started on machine s(i mod machines) and handed to its run; each run fed
 * the recorded agent run's iteration lines by ingest_line (one job in K:
 * the others' runs end with no rows, which keeps a fill of 100,000 jobs to
 * minutes; samples never, which the endpoints timed do not read) and
 * finished. The first job's comparison is computed (comparison_cache_get);
 * every other job keeps that text and verdict under the same rules
 * (store_comparison_put), as a lab that computed each one would hold it.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "compare_rules.h"
#include "comparison_cache.h"
#include "config.h"
#include "ingest.h"
#include "store.h"
#include "submit.h"
#include "util.h"
#include "banned.h"

static const char *usage = "usage: store-fill LAB.yaml N REPLAY [--runs-every K] [--first I --step S]\n";

struct fill {
	const struct lab_config *cfg;
	struct store *st;
	char **iterations;	/* the replay's iteration lines */
	size_t niterations;
	int runs_every;
	char *rules_key;	/* the comparison's rules, as comparison_cache.c keys them */
	struct strbuf doc;	/* the first job's comparison */
	char verdict[32];
};

static int load_replay(struct fill *f, const char *path)
{
	struct strbuf text = STRBUF_INIT;
	char *p, *nl;

	if (strbuf_read_file(&text, path, 64u << 20) < 0)
		return -1;
	f->iterations = xcalloc(text.len / 2 + 1, sizeof(char *));
	for (p = text.buf; *p; p = nl) {
		nl = strchrnul(p, '\n');
		if (*nl)
			*nl++ = '\0';
		if (strstr(p, "\"type\":\"iteration\""))
			f->iterations[f->niterations++] = xstrdup(p);
	}
	strbuf_release(&text);
	return f->niterations ? 0 : -1;
}

/* the key comparison_cache_get stores a comparison of suite demo under */
static void rules_key(struct fill *f)
{
	struct compare_rules defaults;
	const struct cfg_suite *s = config_suite(f->cfg, "demo");
	json_t *doc;

	compare_rules_default(&defaults);
	doc = compare_rules_json(s ? &s->rules : &defaults);
	json_object_set_new(doc, "compare_source", json_string(compare_source_id));
	f->rules_key = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(doc);
}

static int check(int rc, long job, const char *what)
{
	if (rc < 0)
		fprintf(stderr, "store-fill: job %ld: %s: %s\n", job, what, store_strerror(rc));
	return rc < 0 ? -1 : 0;
}

static int run_stage_rows(struct fill *f, int64_t job, int64_t stage, const char *machine, const char *side,
			  const char *build_id, const char *boot_id)
{
	struct ingest ig;
	size_t i;
	int r = 0;

	ingest_init(&ig);
	ig.st = f->st;
	ig.job_id = job;
	ig.stage_id = stage;
	ig.machine = machine;
	ig.side = side;
	ig.build_id = build_id;
	ig.boot_id = boot_id;
	for (i = 0; i < f->niterations && r == 0; i++)
		r = ingest_line(&ig, f->iterations[i], strlen(f->iterations[i]), 0);
	if (r < 0)
		fprintf(stderr, "store-fill: job %lld: %s\n", (long long)job, ig.bad.buf);
	ingest_release(&ig);
	return r;
}

/* The stages of job, seq 0.., as the scheduler would end them. */
static int walk(struct fill *f, long i, int64_t job, const char *base_id, const char *patched_id)
{
	const struct cfg_machine *m = &f->cfg->machines[i % (long)f->cfg->nmachines];
	const char *side = "base", *build_id = base_id;
	char boot_id[40];
	int64_t id, boot = 0;
	int seq;

	for (seq = 0; (id = store_stage_next(f->st, job, seq - 1)) > 0; seq++) {
		/* the plan: build base, build patched, then (boot, run) a side */
		if (seq == 1 || seq == 4) {
			side = "patched";
			build_id = patched_id;
		} else if (seq == 2) {
			side = "base";
			build_id = base_id;
		}
		if (seq < 2) {
			struct build_row b = { .id = build_id, .tree = "linux", .commit_id = base_id,
					       .config_hash = base_id, .compiler = "gcc (sim)", .path = "/nonexistent",
					       .duration = 50 };

			if (check(store_stage_begin(f->st, id, "builder b1"), i, "build begins") < 0 ||
			    check(store_build_add(f->st, &b), i, "build kept") < 0 ||
			    check(store_stage_set_ids(f->st, id, build_id, NULL), i, "build id") < 0 ||
			    check(store_stage_finish(f->st, id, "done", NULL, NULL), i, "build ends") < 0)
				return -1;
		} else if (seq % 2 == 0) {
			snprintf(boot_id, sizeof(boot_id), "%030lx%02d", i, seq % 100);
			boot = id;
			if (check(store_stage_set_ids(f->st, id, build_id, boot_id), i, "boot id") < 0 ||
			    check(store_stage_start(f->st, id, m->name), i, "boot starts") < 0)
				return -1;
		} else {
			if (check(store_stage_handoff(f->st, boot, id), i, "handoff") < 0 ||
			    (i % f->runs_every == 0 && run_stage_rows(f, job, id, m->name, side, build_id, boot_id) < 0) ||
			    check(store_stage_finish(f->st, id, "done", NULL, NULL), i, "run ends") < 0)
				return -1;
		}
	}
	return id < 0 ? check((int)id, i, "next stage") : 0;
}

static int fill_one(struct fill *f, long i)
{
	struct strbuf body = STRBUF_INIT, subject = STRBUF_INIT, err = STRBUF_INIT;
	struct stage_plan *plan = NULL;
	struct job_request req;
	json_t *jb = NULL;
	char patched_id[72], base_id[72];
	int64_t job;
	size_t n;
	int r = -1;

	strbuf_addf(&body, "{\"suite\":\"demo\",\"tree\":\"linux\",\"base\":\"v6.1\",\"boots\":1,\"patch\":"
		    "\"--- a/mm/mprotect.c\\n+++ b/mm/mprotect.c\\n@@ -1,1 +1,2 @@\\n /* mprotect */\\n"
		    "+/* fill job %ld */\\n\"}", i);
	if (submit_request_parse(f->cfg, body.buf, body.len, &jb, &req, &subject, &err) < 0) {
		fprintf(stderr, "store-fill: job %ld: %s\n", i, err.buf);
		goto out;
	}
	req.submitter = "store-fill";
	n = submit_plan(f->cfg, config_suite(f->cfg, req.suite), &req, &plan);
	if (store_job_create(f->st, &req, plan, n, &job, &err) < 0) {
		fprintf(stderr, "store-fill: job %ld: %s\n", i, err.buf);
		goto out;
	}
	snprintf(base_id, sizeof(base_id), "%064d", 0);
	snprintf(patched_id, sizeof(patched_id), "%064ld", i + 1);
	if (walk(f, i, job, base_id, patched_id) < 0)
		goto out;
	if (!f->doc.len) {
		if (comparison_cache_get(f->st, f->cfg, job, &f->doc, &err) < 0) {
			fprintf(stderr, "store-fill: job %ld: its comparison: %s\n", i, err.buf);
			goto out;
		}
		json_t *c = json_loads(f->doc.buf, 0, NULL);

		snprintf(f->verdict, sizeof(f->verdict), "%s", c ? compare_verdict(c) : "inconclusive");
		json_decref(c);
	} else if (check(store_comparison_put(f->st, job, f->rules_key, f->doc.buf, f->verdict, 1), i,
			 "comparison") < 0) {
		goto out;
	}
	r = 0;
out:
	free(plan);
	json_decref(jb);
	strbuf_release(&body);
	strbuf_release(&subject);
	strbuf_release(&err);
	return r;
}

int main(int argc, char **argv)
{
	struct fill f = { .runs_every = 1, .doc = STRBUF_INIT };
	struct lab_config *cfg = NULL;
	struct strbuf err = STRBUF_INIT;
	uint64_t n = 0, first = 0, step = 1, every = 1, done = 0, i;
	double t0;
	int a;

	if (argc < 4 || parse_u64(argv[2], &n) < 0 || !n || n > 10000000) {
		fputs(usage, stderr);
		return 2;
	}
	for (a = 4; a < argc; a += 2) {
		uint64_t *to = !strcmp(argv[a], "--runs-every") ? &every : !strcmp(argv[a], "--first") ? &first :
			       !strcmp(argv[a], "--step") ? &step : NULL;

		if (!to || a + 1 >= argc || parse_u64(argv[a + 1], to) < 0 || (to != &first && !*to)) {
			fputs(usage, stderr);
			return 2;
		}
	}
	f.runs_every = (int)every;
	if (config_load(argv[1], &cfg, &err) < 0 || !cfg->nmachines) {
		fprintf(stderr, "store-fill: %s: %s\n", argv[1], err.len ? err.buf : "no machines");
		return 1;
	}
	f.cfg = cfg;
	strbuf_addf(&err, "%s/tlblab.db", cfg->data_dir);
	/* the daemon made the store and its machines' rows (b0016 starts it
	 * once first): several store-fills leasing them side by side must
	 * not hold every row at once, as a sync would */
	if (store_open(cfg->store ? cfg->store : err.buf, &f.st, &err) < 0) {
		fprintf(stderr, "store-fill: %s\n", err.buf);
		return 1;
	}
	if (load_replay(&f, argv[3]) < 0) {
		fprintf(stderr, "store-fill: %s: no iteration lines\n", argv[3]);
		return 1;
	}
	rules_key(&f);
	t0 = mono_now();
	for (i = first; done < n; i += step, done++)
		if (fill_one(&f, (long)i) < 0)
			return 1;
	printf("store-fill: %llu jobs in %.1f s (%.0f a second), runs in one job in %d\n", (unsigned long long)done,
	       mono_now() - t0, (double)done / (mono_now() - t0), f.runs_every);
	store_close(f.st);
	config_free(cfg);
	return 0;
}
