/*
 * daemon/store: what happens to a job when one of its runs fails as a
 * workload. The scheduler's calls are made here in the order it makes them
 * (stages begun, finished, failed), on a real SQLite file, and the job, its
 * stages and its comparison document are read back through the store's own
 * JSON, as the API serves them.
 */
#include "testlib.h"

#include <errno.h>
#include <sqlite3.h>
#include <unistd.h>

#include "config.h"
#include "ingest.h"
#include "migrations.h"
#include "store.h"
#include "util.h"
#include "fixture_store.h"
#include "banned.h"

/* An A/B job of `boots` boots per side, suite of two specs. */
static int64_t ab_job(struct store *st, int boots)
{
	struct stage_plan plan[2 + 4 * 4];
	json_t *suite = json_pack("[{s:s},{s:s,s:i}]", "workload", "mprotect", "workload", "mremap",
				  "workers", 2);
	struct job_request req = { .kind = "ab", .tree = "linux", .base = "v6.1", .patch_kind = "patch",
				   .patch = "diff", .suite = "tlb", .suite_json = suite, .boots = boots };
	struct strbuf err = STRBUF_INIT;
	size_t n = 0;
	int64_t id = 0;
	int i;

	plan[n++] = (struct stage_plan){ "build", "base", 0, 60 };
	plan[n++] = (struct stage_plan){ "build", "patched", 0, 60 };
	for (i = 0; i < boots; i++) {
		plan[n++] = (struct stage_plan){ "boot", "base", i, 60 };
		plan[n++] = (struct stage_plan){ "run", "base", i, 60 };
		plan[n++] = (struct stage_plan){ "boot", "patched", i, 60 };
		plan[n++] = (struct stage_plan){ "run", "patched", i, 60 };
	}
	if (store_job_create(st, &req, plan, n, &id, &err) < 0)
		fail_msg("store_job_create: %s", err.buf);
	json_decref(suite);
	strbuf_release(&err);
	return id;
}

/* The next runnable stage of the job: its id and kind/side into the out
 * arguments; fails the test when there is none. */
static int64_t next_stage(struct store *st, int64_t job, char kind[8], char side[16])
{
	struct stage_info *v;
	size_t n, i;
	int64_t id = 0;

	assert_int_equal(store_runnable_stages(st, &v, &n), 0);
	for (i = 0; i < n && !id; i++)
		if (v[i].job_id == job) {
			id = v[i].id;
			snprintf(kind, 8, "%s", v[i].kind);
			snprintf(side, 16, "%s", v[i].side);
		}
	store_stage_infos_free(v, n);
	if (!id)
		fail_msg("job %lld has no runnable stage", (long long)job);
	return id;
}

/* One run of a stage's spec with a metric, as ingest stores it: 0, or the
 * store's error. */
static int run_add(struct store *st, int64_t job, int64_t stage, const char *side, int spec)
{
	json_t *metrics = json_pack("{s:f}", "mprotect.ops_per_sec", 1000.0 + spec);
	json_t *info = json_pack("{s:{s:s,s:s}}", "mprotect.ops_per_sec", "unit", "ops/s", "direction", "higher");
	json_t *params = json_pack("{s:i}", "workers", 2);
	struct run_row r = { .job_id = job, .stage_id = stage, .machine = "m1", .side = side,
			     .spec_index = spec, .workload = spec ? "mremap" : "mprotect", .params = params,
			     .duration = 1 };
	int rc = store_run_add(st, &r, metrics, info, NULL, NULL);

	json_decref(metrics);
	json_decref(info);
	json_decref(params);
	return rc;
}

static void add_run(struct store *st, int64_t job, int64_t stage, const char *side, int spec)
{
	assert_int_equal(run_add(st, job, stage, side, spec), 0);
}

/* The specs outcome of a run stage: spec `bad` failed (-1: none). */
static json_t *specs_with(int bad, const char *msg)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < 2; i++)
		json_array_append_new(a, json_pack("{s:i,s:s,s:s,s:s?,s:s?}", "spec", i, "workload",
						   i ? "mremap" : "mprotect", "state", i == bad ? "failed" : "done",
						   "class", i == bad ? "workload" : NULL,
						   "message", i == bad ? msg : NULL));
	return a;
}

/*
 * Walks the job's stages in order: builds and boots succeed; the run of
 * side S in its n-th attempt (counting repeats) fails spec fail[S][n], or
 * passes when it is -1. Returns how many run stages ran.
 */
static int drive(struct store *st, int64_t job, const int fail_base[], const int fail_patched[])
{
	int runs = 0, nb = 0, np = 0, guard;

	for (guard = 0; guard < 64; guard++) {
		json_t *j = store_job_json(st, job);
		const char *state = json_string_value(json_object_get(j, "state"));
		char kind[8], side[16];
		int64_t id;
		int running = state && (!strcmp(state, "queued") || !strcmp(state, "running"));

		json_decref(j);
		if (!running)
			return runs;
		id = next_stage(st, job, kind, side);
		assert_int_equal(store_stage_begin(st, id, "m1"), 0);
		if (strcmp(kind, "run")) {
			assert_int_equal(store_stage_finish(st, id, "done", NULL, NULL), 0);
			continue;
		}
		{
			int base = !strcmp(side, "base");
			int bad = base ? fail_base[nb++] : fail_patched[np++];
			json_t *specs = specs_with(bad, "run: spec 1 on m1: workload failed: workload process "
						   "killed by signal 11 (Segmentation fault)");

			runs++;
			add_run(st, job, id, side, 0);
			add_run(st, job, id, side, 1);
			assert_int_equal(store_stage_set_specs(st, id, specs), 0);
			json_decref(specs);
			if (bad < 0)
				assert_int_equal(store_stage_finish(st, id, "done", NULL, NULL), 0);
			else
				assert_int_equal(store_run_failed(st, id, "1 of 2 specs failed", NULL), 0);
		}
	}
	fail_msg("job %lld did not end", (long long)job);
	return runs;
}

static const char *job_str(struct store *st, int64_t job, const char *key, const char *sub, char *buf, size_t len)
{
	json_t *j = store_job_json(st, job), *v = json_object_get(j, key);

	if (sub)
		v = json_object_get(v, sub);
	snprintf(buf, len, "%s", json_string_value(v) ?: "(null)");
	json_decref(j);
	return buf;
}

/* The patched kernel crashes a spec on every boot: the boot is repeated
 * once, fails again, and the job is a workload result of the patch. */
static void test_patched_crash_is_a_result(void **state)
{
	struct store_fixture *f = *state;
	int64_t job = ab_job(f->st, 2);
	const int base[] = { -1, -1, -1, -1 }, patched[] = { 1, 1, 1, 1 };
	char buf[1024];
	json_t *j, *g;
	size_t i, repeats = 0;

	/* base #0, patched #0 fails, its repeat fails, base #1, patched #1
	 * fails and is not repeated: the failure is already known to repeat */
	assert_int_equal(drive(f->st, job, base, patched), 5);
	assert_string_equal(job_str(f->st, job, "state", NULL, buf, sizeof(buf)), "failed");
	assert_string_equal(job_str(f->st, job, "error", "class", buf, sizeof(buf)), "workload");
	assert_non_null(strstr(job_str(f->st, job, "error", "message", buf, sizeof(buf)),
			       "spec 1 failed on the patched kernel"));
	assert_non_null(strstr(buf, "signal 11"));
	j = store_job_json(f->st, job);
	json_array_foreach(json_object_get(json_object_get(j, "job") ?: j, "stages"), i, g)
		if (json_is_integer(json_object_get(g, "repeat_of")))
			repeats++;
	/* one repeat (a boot and a run) for the first failure only */
	assert_int_equal(repeats, 2);
	json_decref(j);
}

/* The base kernel fails the spec too: the suite is broken, not the patch. */
static void test_base_crash_is_the_suite(void **state)
{
	struct store_fixture *f = *state;
	int64_t job = ab_job(f->st, 1);
	const int base[] = { 1, 1 }, patched[] = { 1, 1 };
	char buf[1024];

	/* base #0 fails, its repeat fails, patched #0 fails: not repeated, the
	 * suite is known to be broken */
	assert_int_equal(drive(f->st, job, base, patched), 3);
	assert_string_equal(job_str(f->st, job, "state", NULL, buf, sizeof(buf)), "failed");
	assert_string_equal(job_str(f->st, job, "error", "class", buf, sizeof(buf)), "suite");
	assert_non_null(strstr(job_str(f->st, job, "error", "message", buf, sizeof(buf)),
			       "not a result of the patch"));
}

/* A failure that does not repeat is kept, and the job is done. */
static void test_transient_failure(void **state)
{
	struct store_fixture *f = *state;
	int64_t job = ab_job(f->st, 1);
	const int base[] = { -1 }, patched[] = { 0, -1 };
	char buf[256];
	json_t *doc, *run;
	size_t i, marked = 0, clean = 0;

	assert_int_equal(drive(f->st, job, base, patched), 3);
	assert_string_equal(job_str(f->st, job, "state", NULL, buf, sizeof(buf)), "done");
	assert_string_equal(job_str(f->st, job, "error", NULL, buf, sizeof(buf)), "(null)");
	/* the failed run's spec 0 is set aside in the comparison; its spec 1,
	 * and everything of the repeat, count */
	doc = store_compare_doc(f->st, job);
	json_array_foreach(json_object_get(doc, "runs"), i, run) {
		if (json_is_string(json_object_get(run, "error"))) {
			marked++;
			assert_int_equal(json_integer_value(json_object_get(run, "spec")), 0);
			assert_string_equal(json_string_value(json_object_get(run, "side")), "patched");
		} else {
			clean++;
		}
	}
	assert_int_equal(marked, 1);
	assert_int_equal(clean, 5);
	json_decref(doc);
}

/* A kept failure does not hold the stages after it back. */
static void test_failure_does_not_block(void **state)
{
	struct store_fixture *f = *state;
	int64_t job = ab_job(f->st, 1), id;
	char kind[8], side[16];
	int repeated = -1, i;
	json_t *specs = specs_with(0, "boom");

	for (i = 0; i < 3; i++) {	/* builds, boot base */
		id = next_stage(f->st, job, kind, side);
		assert_int_equal(store_stage_begin(f->st, id, "m1"), 0);
		assert_int_equal(store_stage_finish(f->st, id, "done", NULL, NULL), 0);
	}
	id = next_stage(f->st, job, kind, side);
	assert_string_equal(kind, "run");
	assert_int_equal(store_stage_begin(f->st, id, "m1"), 0);
	assert_int_equal(store_stage_set_specs(f->st, id, specs), 0);
	assert_int_equal(store_run_failed(f->st, id, "boom", &repeated), 0);
	assert_int_equal(repeated, 1);
	/* the failed base run's boot again, right away, then the rest */
	id = next_stage(f->st, job, kind, side);
	assert_string_equal(kind, "boot");
	assert_string_equal(side, "base");
	assert_int_equal(store_stage_begin(f->st, id, "m1"), 0);
	assert_int_equal(store_stage_finish(f->st, id, "done", NULL, NULL), 0);
	id = next_stage(f->st, job, kind, side);
	assert_int_equal(store_stage_begin(f->st, id, "m1"), 0);
	assert_int_equal(store_stage_finish(f->st, id, "done", NULL, NULL), 0);
	id = next_stage(f->st, job, kind, side);
	assert_string_equal(kind, "boot");
	assert_string_equal(side, "patched");
	json_decref(specs);
}

/* A machine that booted a kernel says so: its kernel and when. */
static void test_machine_last_boot(void **state)
{
	struct store_fixture *f = *state;
	struct lab_config *cfg = NULL;
	struct strbuf err = STRBUF_INIT;
	json_t *ms, *m;
	const char *yaml = "lab: {data_dir: /tmp}\nmachines:\n  - name: m1\n    transport: local\n"
			   "    boot: qemu\n    qemu: {initrd: /x, identity: /y, ssh_port: 10099, known_hosts: /z}\n";
	char path[128];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/lab.yaml", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(yaml, fp);
	fclose(fp);
	if (config_load(path, &cfg, &err) < 0)
		fail_msg("config: %s", err.buf);
	assert_int_equal(store_sync_machines(f->st, cfg, &err), 0);
	assert_int_equal(store_machine_kernel(f->st, "m1", "6.1.0-tlblab", 1700000000.0), 0);
	assert_int_equal(store_machine_kernel(f->st, "m1", "", 0), 0);	/* keeps both */
	ms = store_machines_json(f->st);
	m = json_array_get(json_object_get(ms, "machines"), 0);
	assert_string_equal(json_string_value(json_object_get(m, "kernel")), "6.1.0-tlblab");
	assert_true(json_number_value(json_object_get(m, "last_boot")) == 1700000000.0);
	json_decref(ms);
	config_free(cfg);
	strbuf_release(&err);
}

/* An A/B job of one boot with this patch source; its id. */
static int64_t sourced_job(struct store *st, const char *kind, const char *patch, const char *url, const char *ref,
			   const char *subject)
{
	struct stage_plan plan[] = { { "build", "base", 0, 60 }, { "build", "patched", 0, 60 } };
	struct job_request req = { .kind = "ab", .tree = "linux", .base = "v6.1", .patch_kind = kind,
				   .patch = patch, .patch_url = url, .patch_ref = ref, .patch_subject = subject,
				   .suite = "tlb", .boots = 1 };
	struct strbuf err = STRBUF_INIT;
	int64_t id = 0;

	req.suite_json = json_array();
	if (store_job_create(st, &req, plan, 2, &id, &err) < 0)
		fail_msg("store_job_create: %s", err.buf);
	json_decref((json_t *)req.suite_json);
	strbuf_release(&err);
	return id;
}

static void assert_subject(struct store *st, int64_t job, const char *want)
{
	json_t *j = store_job_json(st, job);
	const json_t *v = json_object_get(j, "patch_subject");

	assert_non_null(v);
	assert_string_equal(json_string_value(v) ?: "(null)", want);
	json_decref(j);
}

/*
 * A job keeps its patch's subject (the API computes it at submission);
 * a fetched mbox names its job later.
 */
static void test_patch_subject(void **state)
{
	struct store_fixture *f = *state;
	int64_t now, url;

	(void)state;
	now = sourced_job(f->st, "patch", "--- a/x\n+++ b/x\n", NULL, NULL, "x86/mm: kept as given");
	assert_subject(f->st, now, "x86/mm: kept as given");
	url = sourced_job(f->st, "url", NULL, "https://lore.example.org/x/raw", NULL, "https://lore.example.org/x/raw");
	assert_int_equal(store_job_set_patch_subject(f->st, url, "mm: named once fetched"), 0);
	assert_subject(f->st, url, "mm: named once fetched");
}

/* A job row of a schema-5 store, by hand; its id. */
static int64_t old_job(sqlite3 *db, const char *kind, const char *patch, const char *url, const char *ref)
{
	sqlite3_stmt *s;

	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO jobs (kind, suite, suite_json, created, tree, base, "
					    "patch_kind, patch, patch_url, patch_ref) VALUES ('ab', 'tlb', '[]', 1, "
					    "'linux', 'v6.1', ?, ?, ?, ?)", -1, &s, NULL), SQLITE_OK);
	sqlite3_bind_text(s, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, patch, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, url, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, ref, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(s), SQLITE_DONE);
	sqlite3_finalize(s);
	return sqlite3_last_insert_rowid(db);
}

/*
 * Jobs stored before there were subjects get theirs when the store applies
 * migration 6: a store made here with the migrations up to 5 (as a daemon
 * of then left it), its jobs written by hand, then opened by the store.
 */
static void test_patch_subject_migration(void **state)
{
	struct store_fixture *f = *state;
	struct strbuf path = STRBUF_INIT, err = STRBUF_INIT, mail = STRBUF_INIT;
	const char *diff = "--- a/mm/mremap.c\n+++ b/mm/mremap.c\n@@ -1 +1 @@\n-a\n+b\n";
	int64_t pasted, plain, branch, url, fetched;
	sqlite3 *db;
	size_t i;

	strbuf_addf(&mail, "From: a\nSubject: [PATCH v2] x86/mm: from the mail\n\n---\n%s", diff);
	strbuf_addf(&path, "%s/old.db", f->dir);
	assert_int_equal(sqlite3_open(path.buf, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, "
				      "name TEXT NOT NULL, applied REAL NOT NULL)", NULL, NULL, NULL), SQLITE_OK);
	for (i = 0; i < nmigrations && migrations[i].version <= 5; i++) {
		char rec[128];

		assert_int_equal(sqlite3_exec(db, migrations[i].sql, NULL, NULL, NULL), SQLITE_OK);
		snprintf(rec, sizeof(rec), "INSERT INTO schema_migrations VALUES (%d, 'x', 0)", migrations[i].version);
		assert_int_equal(sqlite3_exec(db, rec, NULL, NULL, NULL), SQLITE_OK);
	}
	pasted = old_job(db, "patch", mail.buf, NULL, NULL);
	plain = old_job(db, "patch", diff, NULL, NULL);
	branch = old_job(db, "branch", NULL, "https://git.example.org/l.git", "tlb/v2");
	url = old_job(db, "url", NULL, "https://lore.example.org/y/raw", NULL);
	fetched = old_job(db, "url", diff, "https://lore.example.org/z/raw", NULL);
	sqlite3_close(db);

	store_close(f->st);
	if (store_open(path.buf, &f->st, &err) < 0)
		fail_msg("store_open: %s", err.buf);
	assert_true(store_version(f->st) >= 6);
	assert_subject(f->st, pasted, "x86/mm: from the mail");
	assert_subject(f->st, plain, "diff touching mm/mremap.c");
	assert_subject(f->st, branch, "branch tlb/v2 of https://git.example.org/l.git");
	assert_subject(f->st, url, "https://lore.example.org/y/raw");
	/* a fetched mbox that names nothing keeps its URL */
	assert_subject(f->st, fetched, "https://lore.example.org/z/raw");
	strbuf_release(&mail);
	strbuf_release(&path);
	strbuf_release(&err);
}

/* ---- every transaction checked: SQLite failing at each statement ---- */

/*
 * The store life of an A/B job of one boot, as the scheduler and ingest
 * make it: created; builds begun, built, finished; boots leased on m1 and
 * handed to their runs; runs ingested (iterations, a sample, unavailable
 * counters, spec outcomes) and finished; the comparison stored. Each store
 * call is made again after a failure, as the scheduler does on its next
 * pass; before that, the store is read through a second connection of our
 * own and must hold no half-made change.
 */
struct life {
	struct store_fixture *f;
	sqlite3 *db;		/* the test's own connection, for the invariants */
	int64_t job;
	int faults;		/* calls that failed (each on the armed fault) */
};

static long long q_int(sqlite3 *db, const char *sql, long long arg)
{
	sqlite3_stmt *s;
	long long v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		fail_msg("prepare %s: %s", sql, sqlite3_errmsg(db));
	sqlite3_bind_int64(s, 1, arg);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* What a store call must not leave half made, whatever failed: each a
 * count over the job (bound to ?) that must be 0, and what it counts. A run
 * is done with all its results, and a pending one has none. */
static const struct {
	const char *count;
	const char *what;
} half_made[] = {
	{ "SELECT count(*) FROM stages WHERE job_id = ? AND ((state = 'done' AND finished IS NULL) "
	  "OR (state = 'running' AND (started IS NULL OR machine IS NULL)))",
	  "a stage half-started or half-finished" },
	{ "SELECT count(*) FROM stages g WHERE job_id = ? AND kind = 'run' AND state = 'done' AND "
	  "(specs IS NULL OR (SELECT count(*) FROM runs r WHERE r.stage_id = g.id) != 2 OR "
	  "(SELECT count(*) FROM metrics m JOIN runs r ON r.id = m.run_id WHERE r.stage_id = g.id) != 2 OR "
	  "(SELECT count(*) FROM samples p WHERE p.stage_id = g.id) != 1 OR "
	  "(SELECT count(*) FROM unavailable u WHERE u.stage_id = g.id) != 1)",
	  "a run stage is done without all its results" },
	{ "SELECT count(*) FROM runs r JOIN stages g ON g.id = r.stage_id WHERE g.job_id = ? "
	  "AND g.state = 'pending'",
	  "a pending stage has runs" },
	{ "SELECT count(*) FROM runs r WHERE job_id = ? AND NOT EXISTS "
	  "(SELECT 1 FROM metrics m WHERE m.run_id = r.id)",
	  "a run without its metrics" },
};

/* What must hold between any two store calls, whatever failed. */
static void check_invariants(struct life *l, const char *after)
{
	sqlite3 *db = l->db;
	size_t i;
	long long jobs = q_int(db, "SELECT count(*) FROM jobs WHERE ?1 >= 0", 0);
	long long n, done, running, started;
	char state[16] = "";
	sqlite3_stmt *s;

	if (jobs == 0)
		return;
	if (jobs != 1)
		fail_msg("after %s: %lld jobs", after, jobs);
	l->job = q_int(db, "SELECT id FROM jobs WHERE ?1 >= 0", 0);
	/* created with all its stages, or not at all */
	n = q_int(db, "SELECT count(*) FROM stages WHERE job_id = ?", l->job);
	if (n != 6)
		fail_msg("after %s: the job has %lld stages of 6", after, n);
	if (q_int(db, "SELECT count(*) FROM stages WHERE job_id = ? AND state NOT IN ('pending', 'running', 'done')",
		  l->job))
		fail_msg("after %s: a stage failed or was cancelled by a store error", after);
	done = q_int(db, "SELECT count(*) FROM stages WHERE job_id = ? AND state = 'done'", l->job);
	running = q_int(db, "SELECT count(*) FROM stages WHERE job_id = ? AND state = 'running'", l->job);
	started = q_int(db, "SELECT count(*) FROM stages WHERE job_id = ? AND started IS NOT NULL", l->job);
	/* done stages first, then at most one running, then pending ones */
	if (running > 1 || q_int(db, "SELECT count(*) FROM stages a JOIN stages b ON a.job_id = b.job_id "
				 "AND a.seq < b.seq WHERE a.job_id = ? AND a.state != 'done' AND b.state != 'pending'",
				 l->job))
		fail_msg("after %s: stages out of order", after);
	for (i = 0; i < ARRAY_SIZE(half_made); i++)
		if (q_int(db, half_made[i].count, l->job))
			fail_msg("after %s: %s", after, half_made[i].what);
	/* the machine is leased by the boot or run that runs on it, else free */
	if (q_int(db, "SELECT count(*) FROM machines m WHERE name = 'm1' AND ?1 >= 0 AND (lease_stage IS NOT "
		  "(SELECT id FROM stages WHERE state = 'running' AND kind IN ('boot', 'run')) OR "
		  "(lease_stage IS NULL) != (lease_job IS NULL))", 0))
		fail_msg("after %s: the machine's lease does not match its stages", after);
	/* the job's state is its stages' */
	if (sqlite3_prepare_v2(db, "SELECT state FROM jobs WHERE id = ?", -1, &s, NULL) != SQLITE_OK)
		fail_msg("prepare: %s", sqlite3_errmsg(db));
	sqlite3_bind_int64(s, 1, l->job);
	if (sqlite3_step(s) == SQLITE_ROW)
		snprintf(state, sizeof(state), "%s", (const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	if (strcmp(state, done == 6 ? "done" : started ? "running" : "queued"))
		fail_msg("after %s: job %s with %lld of 6 stages done, %lld started", after, state, done, started);
	/* a verdict comes with its stored comparison */
	if (q_int(db, "SELECT count(*) FROM jobs WHERE id = ? AND (verdict IS NULL) != "
		  "((SELECT count(*) FROM comparisons c WHERE c.job_id = jobs.id) = 0)", l->job))
		fail_msg("after %s: a verdict without its comparison, or the reverse", after);
}

/* One store call of the life, made again until it succeeds. A failure
 * must be the armed fault's (never a failure of its own), reported as a
 * store error, and leave the invariants holding. */
#define LIFE_CALL(l, call) do {								\
	int r_, tries_ = 0;								\
	while ((r_ = (call)) < 0) {							\
		if (++tries_ > 1 || !store_fault_hits((l)->f->st))			\
			fail_msg("%s: %d (%s) with no fault armed", #call, r_, store_strerror(r_)); \
		if (r_ != -EIO && r_ != -ENOSPC && r_ != -EAGAIN)			\
			fail_msg("%s: %d: not a store error", #call, r_);		\
		check_invariants((l), #call);						\
		store_fault_after((l)->f->st, 0, 0);					\
		(l)->faults++;								\
	}										\
} while (0)

static int create_job(struct store *st, int64_t *ret)
{
	struct stage_plan plan[] = { { "build", "base", 0, 60 }, { "build", "patched", 0, 60 },
				     { "boot", "base", 0, 60 }, { "run", "base", 0, 60 },
				     { "boot", "patched", 0, 60 }, { "run", "patched", 0, 60 } };
	json_t *suite = json_pack("[{s:s},{s:s}]", "workload", "mprotect", "workload", "mremap");
	struct job_request req = { .kind = "ab", .tree = "linux", .base = "v6.1", .patch_kind = "patch",
				   .patch = "diff", .suite = "tlb", .suite_json = suite, .boots = 1 };
	struct strbuf err = STRBUF_INIT;
	int rc = store_job_create(st, &req, plan, ARRAY_SIZE(plan), ret, &err);

	if (rc < 0 && !strstr(err.buf, "store: create job: "))
		fail_msg("store_job_create says: %s", err.buf);
	json_decref(suite);
	strbuf_release(&err);
	return rc;
}

static int runnable(struct store *st, int64_t job, struct stage_info *ret)
{
	struct stage_info *v;
	size_t n, i;
	int rc = store_runnable_stages(st, &v, &n);

	if (rc < 0)
		return rc;
	memset(ret, 0, sizeof(*ret));
	for (i = 0; i < n; i++)
		if (v[i].job_id == job && !ret->id) {
			ret->id = v[i].id;
			ret->seq = v[i].seq;
			snprintf(ret->kind, sizeof(ret->kind), "%s", v[i].kind);
			snprintf(ret->side, sizeof(ret->side), "%s", v[i].side);
		}
	store_stage_infos_free(v, n);
	return 0;
}


/* Drives the life; returns how many calls failed on the fault. */
static int job_life(struct life *l)
{
	struct store *st = l->f->st;
	json_t *sample = json_pack("{s:i,s:i,s:b,s:b,s:f,s:f,s:{s:i}}", "case", 0, "iteration", 0, "warmup", 0,
				   "window", 1, "t", 1.0, "dt", 1.0, "values", "interrupts.TLB", 5);
	json_t *unavail = json_pack("{s:s}", "vmstat.nr_tlb_remote_flush", "no DEBUG_TLBFLUSH");
	json_t *specs = specs_with(-1, NULL);
	struct build_row b = { .id = NULL, .tree = "linux", .commit_id = "abc", .config_hash = "h",
			       .compiler = "gcc", .path = "/b", .duration = 1 };
	struct stage_info si;
	int guard;

	l->job = 0;
	LIFE_CALL(l, create_job(st, &l->job));
	for (guard = 0; guard < 16; guard++) {
		int64_t run;

		LIFE_CALL(l, runnable(st, l->job, &si));
		if (!si.id)
			break;
		if (!strcmp(si.kind, "build")) {
			b.id = si.side;	/* a build id per side */
			LIFE_CALL(l, store_stage_begin(st, si.id, "builder local"));
			LIFE_CALL(l, store_build_add(st, &b));
			LIFE_CALL(l, store_stage_set_ids(st, si.id, si.side, NULL));
			LIFE_CALL(l, store_stage_finish(st, si.id, "done", NULL, NULL));
			continue;
		}
		assert_string_equal(si.kind, "boot");
		LIFE_CALL(l, (run = store_stage_next(st, l->job, si.seq)) < 0 ? (int)run : 0);
		assert_true(run > 0);
		LIFE_CALL(l, store_stage_start(st, si.id, "m1"));
		LIFE_CALL(l, store_stage_set_ids(st, si.id, NULL, "bootid"));
		LIFE_CALL(l, store_stage_handoff(st, si.id, run));
		LIFE_CALL(l, run_add(st, l->job, run, si.side, 0));
		LIFE_CALL(l, run_add(st, l->job, run, si.side, 1));
		LIFE_CALL(l, store_sample_add(st, run, 0, sample));
		LIFE_CALL(l, store_unavailable_add(st, run, unavail));
		LIFE_CALL(l, store_stage_set_specs(st, run, specs));
		LIFE_CALL(l, store_stage_finish(st, run, "done", NULL, NULL));
	}
	LIFE_CALL(l, store_comparison_put(st, l->job, "{}", "{\"verdict\": \"same\"}", "same", 1.0));
	check_invariants(l, "the last call");
	json_decref(sample);
	json_decref(unavail);
	json_decref(specs);
	return l->faults;
}

static void open_lab(struct store_fixture *f, sqlite3 **ret_db)
{
	struct lab_config *cfg = NULL;
	struct strbuf err = STRBUF_INIT, path = STRBUF_INIT;
	const char *yaml = "lab: {data_dir: /tmp}\nmachines:\n  - name: m1\n    transport: local\n"
			   "    boot: qemu\n    qemu: {initrd: /x, identity: /y, ssh_port: 10099, known_hosts: /z}\n";
	FILE *fp;

	strbuf_addf(&path, "%s/lab.yaml", f->dir);
	fp = fopen(path.buf, "w");
	assert_non_null(fp);
	fputs(yaml, fp);
	fclose(fp);
	if (config_load(path.buf, &cfg, &err) < 0)
		fail_msg("config: %s", err.buf);
	assert_int_equal(store_sync_machines(f->st, cfg, &err), 0);
	assert_int_equal(store_machine_health(f->st, "m1", "good", NULL), 0);
	config_free(cfg);
	strbuf_reset(&path);
	strbuf_addf(&path, "%s/t.db", f->dir);
	assert_int_equal(sqlite3_open_v2(path.buf, ret_db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	sqlite3_busy_timeout(*ret_db, 5000);
	strbuf_release(&path);
	strbuf_release(&err);
}

/*
 * SQLite fails at statement 1, then 2, 3, ... of the life (SQLITE_FULL or
 * SQLITE_IOERR, alternately), until a life runs without reaching the
 * fault: after each failure nothing is half-made, and the job ends done,
 * with every result once, after the fault clears.
 */
static void test_fault_at_each_statement(void **state)
{
	struct store_fixture *f = *state;
	long n;
	int lives = 0;

	for (n = 1; n < 1000; n++) {
		struct life l = { .f = f };
		int faults;

		store_fixture_teardown((void **)&f);
		store_fixture_setup((void **)&f);
		l.f = f;
		open_lab(f, &l.db);
		store_fault_after(f->st, n, n % 2 ? SQLITE_FULL : SQLITE_IOERR);
		faults = job_life(&l);
		lives++;
		/* done, each result once, nothing leased */
		assert_int_equal(q_int(l.db, "SELECT count(*) FROM stages WHERE job_id = ? AND state = 'done'", l.job), 6);
		assert_int_equal(q_int(l.db, "SELECT count(*) FROM runs WHERE job_id = ?", l.job), 4);
		assert_int_equal(q_int(l.db, "SELECT count(*) FROM jobs WHERE id = ? AND state = 'done' "
				       "AND verdict = 'same'", l.job), 1);
		assert_int_equal(q_int(l.db, "SELECT count(*) FROM machines WHERE lease_stage IS NOT NULL "
				       "AND ?1 >= 0", 0), 0);
		sqlite3_close(l.db);
		if (!store_fault_hits(f->st))
			break;
		if (faults != 1)
			fail_msg("statement %ld failed and %d calls said so (one should)", n, faults);
	}
	*state = f;
	print_message("# %d lives, the fault at statement 1 to %ld\n", lives, n - 1);
	/* a life has more statements than a handful: the loop went through them */
	assert_true(n > 40 && n < 1000);
}

/* Another connection holds the write lock: the stage's end is reported as
 * -EAGAIN (not swallowed), changes nothing, and goes through once the lock
 * is gone. */
static void test_locked_database(void **state)
{
	struct store_fixture *f = *state;
	struct life l = { .f = f };
	struct stage_info si;
	char buf[64];

	open_lab(f, &l.db);
	assert_int_equal(create_job(f->st, &l.job), 0);
	assert_int_equal(runnable(f->st, l.job, &si), 0);
	assert_int_equal(store_stage_begin(f->st, si.id, "builder local"), 0);
	store_busy_timeout(f->st, 50);
	assert_int_equal(sqlite3_exec(l.db, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(store_stage_finish(f->st, si.id, "done", NULL, NULL), -EAGAIN);
	assert_int_equal(store_job_cancel(f->st, l.job), -EAGAIN);
	assert_contains(store_strerror(-EAGAIN), "locked");
	assert_int_equal(sqlite3_exec(l.db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	check_invariants(&l, "a locked database");
	assert_string_equal(job_str(f->st, l.job, "state", NULL, buf, sizeof(buf)), "running");
	assert_int_equal(store_stage_finish(f->st, si.id, "done", NULL, NULL), 0);
	check_invariants(&l, "the lock went");
	sqlite3_close(l.db);
}

/*
 * A read that fails part-way (issue 12): the store's JSON is NULL with the
 * store's error in errno, never the rows read before the failure, so the
 * API can answer 500/503 instead of a job without stages or a list that
 * is short; a row that is not there is still ENOENT (404).
 */
static void test_reads_report_store_errors(void **state)
{
	struct store_fixture *f = *state;
	struct job_filter jf = { 0 };
	struct strbuf log = STRBUF_INIT;
	char kind[8], side[16];
	int64_t job = ab_job(f->st, 1), stage;
	json_t *j;

	stage = next_stage(f->st, job, kind, side);
	assert_int_equal(store_stage_begin(f->st, stage, "builder local"), 0);
	add_run(f->st, job, stage, "base", 0);

	errno = 0;
	assert_null(store_job_json(f->st, job + 100));
	assert_int_equal(errno, ENOENT);
	j = store_job_json(f->st, job);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "stages")), 6);
	json_decref(j);

	/* the job row is read, its stages are not */
	store_fault_match(f->st, "FROM stages WHERE job_id = ? ORDER BY seq", 1, SQLITE_IOERR);
	errno = 0;
	assert_null(store_job_json(f->st, job));
	assert_int_equal(errno, EIO);
	assert_int_equal(store_fault_hits(f->st), 1);

	store_fault_match(f->st, "FROM runs WHERE job_id", 1, SQLITE_BUSY);
	assert_null(store_runs_json(f->st, job));
	assert_int_equal(errno, EAGAIN);
	store_fault_match(f->st, "JOIN metrics", 1, SQLITE_FULL);
	assert_null(store_metrics_json(f->st, job, NULL, 1));
	assert_int_equal(errno, ENOSPC);
	store_fault_match(f->st, "JOIN metrics", 1, SQLITE_IOERR);
	assert_null(store_compare_doc(f->st, job));
	assert_int_equal(errno, EIO);
	store_fault_match(f->st, "FROM samples", 1, SQLITE_IOERR);
	assert_null(store_samples_json(f->st, job, 0, NULL, 0, 10));
	assert_int_equal(errno, EIO);
	store_fault_match(f->st, "FROM jobs ORDER BY", 1, SQLITE_IOERR);
	assert_null(store_jobs_json(f->st, &jf));
	assert_int_equal(errno, EIO);
	store_fault_match(f->st, "FROM machines", 1, SQLITE_BUSY);
	assert_null(store_machines_json(f->st));
	assert_int_equal(errno, EAGAIN);
	store_fault_match(f->st, "FROM machines", 1, SQLITE_IOERR);
	assert_null(store_health_json(f->st));
	store_fault_match(f->st, "SELECT log FROM stages", 1, SQLITE_IOERR);
	assert_int_equal(store_stage_log(f->st, job, stage, &log), -EIO);
	assert_int_equal(store_stage_log(f->st, job, stage + 100, &log), -ENOENT);
	store_fault_match(f->st, "verdict IS NULL", 1, SQLITE_IOERR);
	assert_true(store_job_without_verdict(f->st, INT64_MAX) < 0);

	/* the fault is gone: everything reads again */
	j = store_compare_doc(f->st, job);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "runs")), 1);
	json_decref(j);
	strbuf_release(&log);
}

/*
 * The agent's output the store fails to keep stops the ingest as a store
 * error (the run stage is then infra, retried), whatever line it came on:
 * an iteration, a sample, unavailable counters. Nothing is dropped
 * silently, and garbage stays a workload failure (no store_error).
 */
static void test_ingest_store_error(void **state)
{
	static const char *const lines[] = {
		"{\"type\":\"sample\",\"t\":1,\"dt\":1,\"case\":0,\"iteration\":0,\"warmup\":false,"
		"\"window\":true,\"values\":{\"interrupts.TLB\":3}}",
		"{\"type\":\"iteration\",\"case\":0,\"iteration\":1,\"warmup\":false,\"params\":"
		"{\"workload\":\"mprotect\"},\"metrics\":{\"mprotect.ops_per_sec\":5},\"duration_s\":1}",
		"{\"type\":\"iteration\",\"case\":0,\"iteration\":2,\"warmup\":false,\"params\":"
		"{\"workload\":\"mprotect\"},\"metrics\":{\"mprotect.ops_per_sec\":5},\"duration_s\":1,"
		"\"unavailable\":{\"interrupts.TLB\":\"no TLB line\"}}",
		"{\"type\":\"result\",\"status\":\"ok\",\"unavailable\":{\"vmstat.nr_tlb_remote_flush\":\"no\"}}",
	};
	static const char *const faults[] = { "INTO samples", "INTO runs", "INTO unavailable", "INTO unavailable" };
	static const char *const lost[] = { "a sample", "an iteration", "unavailable counters", "unavailable counters" };
	struct store_fixture *f = *state;
	char kind[8], side[16];
	int64_t job = ab_job(f->st, 1), stage;
	size_t i;

	stage = next_stage(f->st, job, kind, side);
	assert_int_equal(store_stage_begin(f->st, stage, "builder local"), 0);
	for (i = 0; i < ARRAY_SIZE(lines); i++) {
		struct ingest ig;

		ingest_init(&ig);
		ig.st = f->st;
		ig.job_id = job;
		ig.stage_id = stage;
		ig.machine = "m1";
		ig.side = "base";
		store_fault_match(f->st, faults[i], 1, i % 2 ? SQLITE_FULL : SQLITE_IOERR);
		if (ingest_line(&ig, lines[i], strlen(lines[i]), 0) != -1)
			fail_msg("line %zu: the store failed and the ingest went on", i);
		assert_int_equal(store_fault_hits(f->st), 1);
		assert_int_equal(ig.store_error, i % 2 ? -ENOSPC : -EIO);
		assert_contains(ig.bad.buf, lost[i]);
		/* the fault cleared: the same line goes in */
		assert_int_equal(ingest_line(&ig, lines[i], strlen(lines[i]), 0), 0);
		ingest_release(&ig);
	}
	{
		struct ingest ig;

		ingest_init(&ig);
		ig.st = f->st;
		assert_int_equal(ingest_line(&ig, "{\"type\":", 8, 0), -1);
		assert_int_equal(ig.store_error, 0);
		ingest_release(&ig);
	}
}


/* A cancelled job's stage is never queued again: a retry (an infra
 * failure that came with the cancel, or a restart that finds it running)
 * ends it cancelled instead, and the job with it. */
static void test_no_retry_after_cancel(void **state)
{
	struct store_fixture *f = *state;
	int64_t job = ab_job(f->st, 1), stage, other = ab_job(f->st, 1);
	struct stage_info *v;
	struct strbuf log = STRBUF_INIT;
	char kind[8], side[16], buf[256];
	size_t n, i;
	json_t *j;

	stage = next_stage(f->st, job, kind, side);
	assert_string_equal(kind, "build");
	assert_int_equal(store_stage_begin(f->st, stage, "builder local"), 0);
	assert_int_equal(store_job_cancel(f->st, job), 0);
	/* still running: the scheduler stops it */
	assert_string_equal(job_str(f->st, job, "state", NULL, buf, sizeof(buf)), "running");
	assert_int_equal(store_stage_retry(f->st, stage, NULL, "git fetch timed out"), -ECANCELED);
	assert_string_equal(job_str(f->st, job, "state", NULL, buf, sizeof(buf)), "cancelled");
	j = store_job_json(f->st, job);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(j, "stages"), 0),
							      "state")), "cancelled");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(j, "stages"), 0),
							    "attempt")), 0);
	json_decref(j);
	assert_int_equal(store_runnable_stages(f->st, &v, &n), 0);
	for (i = 0; i < n; i++)
		assert_int_not_equal(v[i].job_id, job);
	store_stage_infos_free(v, n);

	/* a restart finds another cancelled job's stage running */
	stage = next_stage(f->st, other, kind, side);
	assert_int_equal(store_stage_begin(f->st, stage, "builder local"), 0);
	assert_int_equal(store_job_cancel(f->st, other), 0);
	assert_int_equal(store_recover(f->st, &log), 0);
	assert_contains(log.buf, "cancelled");
	assert_string_equal(job_str(f->st, other, "state", NULL, buf, sizeof(buf)), "cancelled");
	strbuf_release(&log);
}

/* The job list's total is kept between reads, and the next change (a job
 * created, one cancelled) is counted at once, for each filter; a count
 * that fails is reported and not kept. */
static void test_job_list_total_follows_changes(void **state)
{
	struct store_fixture *f = *state;
	struct job_filter all = { 0 }, queued = { .state = "queued" }, cancelled = { .state = "cancelled" };
	int64_t a, b;
	json_t *j;

#define TOTAL(flt) (j = store_jobs_json(f->st, &(flt)), assert_non_null(j), \
		    total = json_integer_value(json_object_get(j, "total")), json_decref(j), total)
	json_int_t total;

	assert_int_equal(create_job(f->st, &a), 0);
	assert_int_equal(TOTAL(all), 1);
	assert_int_equal(TOTAL(queued), 1);
	assert_int_equal(TOTAL(cancelled), 0);
	assert_int_equal(create_job(f->st, &b), 0);
	assert_int_equal(TOTAL(all), 2);
	assert_int_equal(TOTAL(queued), 2);
	assert_int_equal(store_job_cancel(f->st, a), 0);
	assert_int_equal(TOTAL(queued), 1);
	assert_int_equal(TOTAL(cancelled), 1);
	assert_int_equal(TOTAL(all), 2);

	/* a change, then a count that fails: an error, and the next read counts */
	assert_int_equal(create_job(f->st, &b), 0);
	store_fault_match(f->st, "SELECT count(*) FROM jobs", 1, SQLITE_IOERR);
	errno = 0;
	assert_null(store_jobs_json(f->st, &all));
	assert_int_equal(errno, EIO);
	assert_int_equal(store_fault_hits(f->st), 1);
	assert_int_equal(TOTAL(all), 3);
	/* kept: the same read again runs no count */
	store_fault_match(f->st, "SELECT count(*) FROM jobs", 1, SQLITE_IOERR);
	assert_int_equal(TOTAL(all), 3);
	assert_int_equal(store_fault_hits(f->st), 0);
#undef TOTAL
}

/* The job list written as text (store_jobs_text) says what the job
 * read built with jansson (store_job_json) says of each job, awkward text
 * included, and its page fields; a failed read is an error, not a page. */
static void test_job_list_text(void **state)
{
	struct store_fixture *f = *state;
	struct job_filter all = { .limit = 2 }, failed = { .state = "failed" };
	static const char msg[] = "tab\there\nnl \x01 \x1f \"q\" \\ / \xc3\xa9 \xe4\xb8\xad \xe2\x80\xa8 end";
	struct strbuf text = STRBUF_INIT;
	char kind[8], side[16];
	int64_t a, b, c, stage;
	json_t *doc, *job, *want, *jobs;
	size_t i;

	assert_int_equal(create_job(f->st, &a), 0);
	assert_int_equal(create_job(f->st, &b), 0);
	assert_int_equal(create_job(f->st, &c), 0);
	stage = next_stage(f->st, b, kind, side);
	assert_int_equal(store_stage_begin(f->st, stage, "builder local"), 0);
	assert_int_equal(store_stage_finish(f->st, stage, "failed", "build", msg), 0);

	assert_int_equal(store_jobs_text(f->st, &all, &text), 0);
	doc = json_loadb(text.buf, text.len, 0, NULL);
	assert_non_null(doc);
	assert_int_equal(json_integer_value(json_object_get(doc, "total")), 3);
	assert_int_equal(json_integer_value(json_object_get(doc, "limit")), 2);
	assert_int_equal(json_integer_value(json_object_get(doc, "offset")), 0);
	jobs = json_object_get(doc, "jobs");
	assert_int_equal(json_array_size(jobs), 2);
	json_array_foreach(jobs, i, job) {
		want = store_job_json(f->st, json_integer_value(json_object_get(job, "id")));
		assert_non_null(want);
		json_object_del(want, "stages");
		/* as the API encodes it: 12 significant digits */
		{
			char *got = json_dumps(job, JSON_COMPACT | JSON_REAL_PRECISION(12));
			char *w = json_dumps(want, JSON_COMPACT | JSON_REAL_PRECISION(12));

			assert_non_null(strstr(text.buf, got));
			if (strcmp(got, w))
				fail_msg("job list row %s, the job read %s", got, w);
			free(got);
			free(w);
		}
		json_decref(want);
	}
	assert_int_equal(json_integer_value(json_object_get(json_array_get(jobs, 0), "id")), c);
	assert_string_equal(json_string_value(json_object_get(json_object_get(json_array_get(jobs, 1), "error"),
							      "message")), msg);
	json_decref(doc);

	strbuf_reset(&text);
	assert_int_equal(store_jobs_text(f->st, &failed, &text), 0);
	doc = json_loadb(text.buf, text.len, 0, NULL);
	assert_non_null(doc);
	assert_int_equal(json_integer_value(json_object_get(doc, "total")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(doc, "jobs"), 0),
							    "id")), b);
	json_decref(doc);

	strbuf_reset(&text);
	store_fault_match(f->st, "ORDER BY id DESC LIMIT ? OFFSET ?", 1, SQLITE_IOERR);
	assert_int_equal(store_jobs_text(f->st, &all, &text), -EIO);
	assert_int_equal(store_fault_hits(f->st), 1);
	strbuf_release(&text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		store_fixture_test(test_patched_crash_is_a_result),
		store_fixture_test(test_base_crash_is_the_suite),
		store_fixture_test(test_transient_failure),
		store_fixture_test(test_failure_does_not_block),
		store_fixture_test(test_machine_last_boot),
		store_fixture_test(test_patch_subject),
		store_fixture_test(test_patch_subject_migration),
		store_fixture_test(test_fault_at_each_statement),
		store_fixture_test(test_locked_database),
		store_fixture_test(test_reads_report_store_errors),
		store_fixture_test(test_job_list_total_follows_changes),
		store_fixture_test(test_job_list_text),
		store_fixture_test(test_ingest_store_error),
		store_fixture_test(test_no_retry_after_cancel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
