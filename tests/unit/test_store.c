/*
 * daemon/store: what happens to a job when one of its runs fails as a
 * workload, when it is cancelled, what it is called (its patch's subject,
 * migrations included), its boots and the daemons that share a store. The
 * scheduler's calls are made here in the order it makes them (stages
 * begun, finished, failed), on a real SQLite file and a real PostgreSQL
 * database (fixture_store.h), and the job, its stages and its comparison
 * document are read back through the store's own JSON, as the API serves
 * them. test_store_access has the job list and the tokens' rights,
 * test_store_faults the store when its database fails.
 */
#include "testlib.h"

#include <errno.h>
#include <sqlite3.h>

#include "config.h"
#include "jsonget.h"
#include "migrations.h"
#include "store.h"
#include "util.h"
#include "fixture_store.h"
#include "banned.h"

/* the SQLite backend's migrations (scripts/embed.sh) */
extern const struct migration sqlite_migrations[];
extern const size_t sqlite_nmigrations;

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
		const char *state = jsonget_str(j, "state");
		char kind[8], side[16];
		int64_t id;
		int running = state && (!strcmp(state, "queued") || !strcmp(state, "running"));

		json_decref(j);
		if (!running)
			return runs;
		id = store_fixture_next_id(st, job, kind, side);
		assert_int_equal(store_stage_begin(st, id, "m1"), 0);
		if (strcmp(kind, "run")) {
			assert_int_equal(store_stage_finish(st, id, "done", NULL, NULL), 0);
			continue;
		}
		{
			int base = !strcmp(side, "base");
			int bad = base ? fail_base[nb++] : fail_patched[np++];
			json_t *specs = store_fixture_specs_outcome(bad, "run: spec 1 on m1: workload failed: workload process "
						   "killed by signal 11 (Segmentation fault)");

			runs++;
			assert_int_equal(store_fixture_run_add(st, job, id, side, 0, 1000), 0);
			assert_int_equal(store_fixture_run_add(st, job, id, side, 1, 1001), 0);
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

/* The patched kernel crashes a spec on every boot: the boot is repeated
 * once, fails again, and the job is a workload result of the patch. */
static void test_patched_crash_is_a_result(void **state)
{
	struct store_fixture *f = *state;
	int64_t job = store_fixture_job(f->st, 2);
	const int base[] = { -1, -1, -1, -1 }, patched[] = { 1, 1, 1, 1 };
	char buf[1024];
	json_t *j, *g;
	size_t i, repeats = 0;

	/* base #0, patched #0 fails, its repeat fails, base #1, patched #1
	 * fails and is not repeated: the failure is already known to repeat */
	assert_int_equal(drive(f->st, job, base, patched), 5);
	assert_string_equal(store_fixture_job_str(f->st, job, "state", NULL, buf, sizeof(buf)), "failed");
	assert_string_equal(store_fixture_job_str(f->st, job, "error", "class", buf, sizeof(buf)), "workload");
	assert_non_null(strstr(store_fixture_job_str(f->st, job, "error", "message", buf, sizeof(buf)),
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
	int64_t job = store_fixture_job(f->st, 1);
	const int base[] = { 1, 1 }, patched[] = { 1, 1 };
	char buf[1024];

	/* base #0 fails, its repeat fails, patched #0 fails: not repeated, the
	 * suite is known to be broken */
	assert_int_equal(drive(f->st, job, base, patched), 3);
	assert_string_equal(store_fixture_job_str(f->st, job, "state", NULL, buf, sizeof(buf)), "failed");
	assert_string_equal(store_fixture_job_str(f->st, job, "error", "class", buf, sizeof(buf)), "suite");
	assert_non_null(strstr(store_fixture_job_str(f->st, job, "error", "message", buf, sizeof(buf)),
			       "not a result of the patch"));
}

/* A failure that does not repeat is kept, and the job is done. */
static void test_transient_failure(void **state)
{
	struct store_fixture *f = *state;
	int64_t job = store_fixture_job(f->st, 1);
	const int base[] = { -1 }, patched[] = { 0, -1 };
	char buf[256];
	json_t *doc, *run;
	size_t i, marked = 0, clean = 0;

	assert_int_equal(drive(f->st, job, base, patched), 3);
	assert_string_equal(store_fixture_job_str(f->st, job, "state", NULL, buf, sizeof(buf)), "done");
	assert_string_equal(store_fixture_job_str(f->st, job, "error", NULL, buf, sizeof(buf)), "(null)");
	/* the failed run's spec 0 is set aside in the comparison; its spec 1,
	 * and everything of the repeat, count */
	doc = store_compare_doc(f->st, job);
	json_array_foreach(json_object_get(doc, "runs"), i, run) {
		if (json_is_string(json_object_get(run, "error"))) {
			marked++;
			assert_int_equal(jsonget_int_or(run, "spec", 0), 0);
			assert_string_equal(jsonget_str(run, "side"), "patched");
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
	int64_t job = store_fixture_job(f->st, 1), id;
	char kind[8], side[16];
	int repeated = -1, i;
	json_t *specs = store_fixture_specs_outcome(0, "boom");

	for (i = 0; i < 3; i++) {	/* builds, boot base */
		id = store_fixture_next_id(f->st, job, kind, side);
		assert_int_equal(store_stage_begin(f->st, id, "m1"), 0);
		assert_int_equal(store_stage_finish(f->st, id, "done", NULL, NULL), 0);
	}
	id = store_fixture_next_id(f->st, job, kind, side);
	assert_string_equal(kind, "run");
	assert_int_equal(store_stage_begin(f->st, id, "m1"), 0);
	assert_int_equal(store_stage_set_specs(f->st, id, specs), 0);
	assert_int_equal(store_run_failed(f->st, id, "boom", &repeated), 0);
	assert_int_equal(repeated, 1);
	/* the failed base run's boot again, right away, then the rest */
	id = store_fixture_next_id(f->st, job, kind, side);
	assert_string_equal(kind, "boot");
	assert_string_equal(side, "base");
	assert_int_equal(store_stage_begin(f->st, id, "m1"), 0);
	assert_int_equal(store_stage_finish(f->st, id, "done", NULL, NULL), 0);
	id = store_fixture_next_id(f->st, job, kind, side);
	assert_int_equal(store_stage_begin(f->st, id, "m1"), 0);
	assert_int_equal(store_stage_finish(f->st, id, "done", NULL, NULL), 0);
	id = store_fixture_next_id(f->st, job, kind, side);
	assert_string_equal(kind, "boot");
	assert_string_equal(side, "patched");
	json_decref(specs);
}

/* A machine that booted a kernel says so: its kernel and when. */
static void test_machine_last_boot(void **state)
{
	struct store_fixture *f = *state;
	json_t *ms, *m;

	store_fixture_lab(f, STORE_FIXTURE_QEMU_LAB);
	assert_int_equal(store_machine_kernel(f->st, "m1", "6.1.0-tlblab", 1700000000.0), 0);
	assert_int_equal(store_machine_kernel(f->st, "m1", "", 0), 0);	/* keeps both */
	ms = store_machines_json(f->st);
	m = json_array_get(json_object_get(ms, "machines"), 0);
	assert_string_equal(jsonget_str(m, "kernel"), "6.1.0-tlblab");
	assert_true(jsonget_num_or(m, "last_boot", 0) == 1700000000.0);
	json_decref(ms);
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
	now = store_fixture_sourced_job(f->st, "patch", "--- a/x\n+++ b/x\n", NULL, NULL, "x86/mm: kept as given");
	assert_subject(f->st, now, "x86/mm: kept as given");
	url = store_fixture_sourced_job(f->st, "url", NULL, "https://lore.example.org/x/raw", NULL, "https://lore.example.org/x/raw");
	assert_int_equal(store_job_set_patch_subject(f->st, url, "mm: named once fetched"), 0);
	assert_subject(f->st, url, "mm: named once fetched");
}

/*
 * A per-patch series' jobs are stored together, each one's per_patch
 * naming the first job ("of"); the series reads back by k, and a job of
 * its own has no per_patch.
 */
static void test_per_patch_group(void **state)
{
	struct store_fixture *f = *state;
	struct stage_plan plan[] = { { "build", "base", 0, 60, 0 }, { "build", "patched", 0, 60, 0 } };
	struct stage_plan *plans[3] = { plan, plan, plan };
	size_t nplans[3] = { 2, 2, 2 };
	struct job_request reqs[3];
	struct strbuf err = STRBUF_INIT;
	json_t *suite = json_array(), *pp[3], *list, *j, *row;
	int64_t ids[3], lone;
	size_t k;

	for (k = 0; k < 3; k++) {
		pp[k] = json_pack("{s:I,s:i,s:s}", "k", (json_int_t)(k + 1), "n", 3, "series", "mm: the series");
		reqs[k] = (struct job_request){ .kind = "ab", .tree = "linux", .base = "v6.1", .patch_kind = "patch",
						.patch = "--- a/x\n+++ b/x\n", .suite = "tlb", .suite_json = suite,
						.boots = 1, .per_patch = pp[k] };
	}
	if (store_job_group_create(f->st, reqs, plans, nplans, 3, ids, &err) < 0)
		fail_msg("store_job_group_create: %s", err.buf);
	assert_int_equal(ids[1], ids[0] + 1);
	j = store_job_json(f->st, ids[2]);
	assert_int_equal(jsonget_int_or(json_object_get(j, "per_patch"), "of", 0), ids[0]);
	assert_int_equal(jsonget_int_or(json_object_get(j, "per_patch"), "k", 0), 3);
	assert_int_equal(json_array_size(json_object_get(j, "stages")), 2);
	json_decref(j);
	lone = store_fixture_sourced_job(f->st, "patch", "--- a/x\n+++ b/x\n", NULL, NULL, "alone");
	j = store_job_json(f->st, lone);
	assert_true(json_is_null(json_object_get(j, "per_patch")));
	json_decref(j);
	list = store_per_patch_jobs(f->st, ids[0]);
	assert_int_equal(json_array_size(list), 3);
	json_array_foreach(list, k, row) {
		assert_int_equal(jsonget_int_or(row, "id", 0), ids[k]);
		assert_int_equal(jsonget_int_or(row, "k", 0), k + 1);
		assert_string_equal(jsonget_str(row, "state"), "queued");
	}
	json_decref(list);
	for (k = 0; k < 3; k++)
		json_decref(pp[k]);
	json_decref(suite);
	strbuf_release(&err);
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
	for (i = 0; i < sqlite_nmigrations && sqlite_migrations[i].version <= 5; i++) {
		char rec[128];

		assert_int_equal(sqlite3_exec(db, sqlite_migrations[i].sql, NULL, NULL, NULL), SQLITE_OK);
		snprintf(rec, sizeof(rec), "INSERT INTO schema_migrations VALUES (%d, 'x', 0)",
			 sqlite_migrations[i].version);
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

/* A cancelled job's stage is never queued again: a retry (an infra
 * failure that came with the cancel, or a restart that finds it running)
 * ends it cancelled instead, and the job with it. */
static void test_no_retry_after_cancel(void **state)
{
	struct store_fixture *f = *state;
	int64_t job = store_fixture_job(f->st, 1), stage, other = store_fixture_job(f->st, 1);
	struct stage_info *v;
	struct strbuf log = STRBUF_INIT;
	char kind[8], side[16], buf[256];
	size_t n, i;
	json_t *j;

	stage = store_fixture_next_id(f->st, job, kind, side);
	assert_string_equal(kind, "build");
	assert_int_equal(store_stage_begin(f->st, stage, "builder local"), 0);
	assert_int_equal(store_job_cancel(f->st, job), 0);
	/* still running: the scheduler stops it */
	assert_string_equal(store_fixture_job_str(f->st, job, "state", NULL, buf, sizeof(buf)), "running");
	assert_int_equal(store_stage_retry(f->st, stage, NULL, "git fetch timed out"), -ECANCELED);
	assert_string_equal(store_fixture_job_str(f->st, job, "state", NULL, buf, sizeof(buf)), "cancelled");
	j = store_job_json(f->st, job);
	assert_string_equal(jsonget_str(json_array_get(json_object_get(j, "stages"), 0), "state"), "cancelled");
	assert_int_equal(jsonget_int_or(json_array_get(json_object_get(j, "stages"), 0), "attempt", 0), 0);
	json_decref(j);
	assert_int_equal(store_runnable_stages(f->st, &v, &n), 0);
	for (i = 0; i < n; i++)
		assert_int_not_equal(v[i].job_id, job);
	store_stage_infos_free(v, n);

	/* a restart finds another cancelled job's stage running */
	stage = store_fixture_next_id(f->st, other, kind, side);
	assert_int_equal(store_stage_begin(f->st, stage, "builder local"), 0);
	assert_int_equal(store_job_cancel(f->st, other), 0);
	assert_int_equal(store_recover(f->st, &log), 0);
	assert_contains(log.buf, "cancelled");
	assert_string_equal(store_fixture_job_str(f->st, other, "state", NULL, buf, sizeof(buf)), "cancelled");
	strbuf_release(&log);
}

/* The job's stages as "kind/side/boot_index/cN" (c- for no count), by seq. */
static void stages_of(struct store *st, int64_t job, struct strbuf *out)
{
	json_t *j = store_job_json(st, job), *g;
	size_t i;

	assert_non_null(j);
	json_array_foreach(json_object_get(j, "stages"), i, g) {
		json_t *cpus = json_object_get(g, "cpus");

		strbuf_addf(out, "%s%s/%s/%lld/c", i ? " " : "", jsonget_str(g, "kind"),
			    jsonget_str(g, "side") ?: "-",
			    jsonget_int_or(g, "boot_index", 0));
		if (json_is_integer(cpus))
			strbuf_addf(out, "%lld", (long long)json_integer_value(cpus));
		else
			strbuf_addch(out, '-');
	}
	json_decref(j);
}

/*
 * A sweep's stages keep their vCPU count (guest_cpus), and the boots a
 * look adds boot each side at every count of the first round, in its
 * order; a job without a sweep adds boots without one.
 */
static void test_sweep_boots(void **state)
{
	struct store_fixture *f = *state;
	struct stage_plan plan[] = {
		{ "build", "base", 0, 60, 0 }, { "build", "patched", 0, 60, 0 },
		{ "boot", "base", 0, 600, 8 }, { "run", "base", 0, 60, 8 },
		{ "boot", "patched", 0, 600, 8 }, { "run", "patched", 0, 60, 8 },
		{ "boot", "base", 0, 600, 2 }, { "run", "base", 0, 60, 2 },
		{ "boot", "patched", 0, 600, 2 }, { "run", "patched", 0, 60, 2 },
	};
	struct job_request req = { .kind = "ab", .tree = "linux", .base = "v6.1", .patch_kind = "patch",
				   .patch = "--- a/x\n+++ b/x\n", .suite = "sweep", .boots = 1, .max_boots = 2 };
	struct strbuf err = STRBUF_INIT, got = STRBUF_INIT;
	int64_t job = 0, plain;

	req.suite_json = json_array();
	if (store_job_create(f->st, &req, plan, ARRAY_SIZE(plan), &job, &err) < 0)
		fail_msg("store_job_create: %s", err.buf);
	assert_int_equal(store_job_add_boots(f->st, job, 1, 600, 60), 1);
	stages_of(f->st, job, &got);
	assert_string_equal(got.buf, "build/base/0/c- build/patched/0/c- "
			    "boot/base/0/c8 run/base/0/c8 boot/patched/0/c8 run/patched/0/c8 "
			    "boot/base/0/c2 run/base/0/c2 boot/patched/0/c2 run/patched/0/c2 "
			    "boot/base/1/c8 run/base/1/c8 boot/patched/1/c8 run/patched/1/c8 "
			    "boot/base/1/c2 run/base/1/c2 boot/patched/1/c2 run/patched/1/c2");
	/* no more than max_boots */
	assert_int_equal(store_job_add_boots(f->st, job, 1, 600, 60), 0);
	strbuf_reset(&got);
	for (size_t i = 0; i < ARRAY_SIZE(plan); i++)
		plan[i].cpus = 0;
	if (store_job_create(f->st, &req, plan, 6, &plain, &err) < 0)
		fail_msg("store_job_create: %s", err.buf);
	assert_int_equal(store_job_add_boots(f->st, plain, 1, 600, 60), 1);
	stages_of(f->st, plain, &got);
	assert_string_equal(got.buf, "build/base/0/c- build/patched/0/c- "
			    "boot/base/0/c- run/base/0/c- boot/patched/0/c- run/patched/0/c- "
			    "boot/base/1/c- run/base/1/c- boot/patched/1/c- run/patched/1/c-");
	json_decref((json_t *)req.suite_json);
	strbuf_release(&err);
	strbuf_release(&got);
}

/* m's health and its lease's stage (0: free), from the machine list */
static const char *machine_state(struct store *st, const char *m, int64_t *ret_stage, char *buf, size_t len)
{
	json_t *ms = store_machines_json(st), *e;
	size_t i;

	assert_non_null(ms);
	buf[0] = '\0';
	json_array_foreach(json_object_get(ms, "machines"), i, e)
		if (!strcmp(json_string_value(json_object_get(e, "name")), m)) {
			snprintf(buf, len, "%s", json_string_value(json_object_get(e, "health")));
			*ret_stage = json_integer_value(json_object_get(e, "stage"));
		}
	json_decref(ms);
	return buf;
}

/* store_daemons_gone's view of the processes: the tests' are all gone */
static int no_process_alive(int pid)
{
	(void)pid;
	return 0;
}

/*
 * Two daemons on one store (lab.store), each with its own connections: a
 * machine one has leased the other cannot lease; a stage of a daemon
 * that went silent (for longer than the lease timeout, or known gone:
 * its process on its host is no more, or it stopped) the other takes
 * over (queued again, its machine released, of unknown health), once,
 * and never while that daemon is seen; what a daemon runs itself is
 * never taken from it.
 */
static void test_daemons_share(void **state)
{
	struct store_fixture *f = *state;
	struct strbuf err = STRBUF_INIT, log = STRBUF_INIT;
	struct store *b = NULL;
	char kind[8], side[16], buf[64];
	int64_t j1, j2, s1, s2, leased = 0;
	json_t *j;

	store_fixture_two_machines(f);
	if (store_open(f->where, &b, &err) < 0)
		fail_msg("a second daemon's store_open: %s", err.buf);
	assert_int_equal(store_daemon_register(f->st, "host-a", 100), 0);
	assert_int_equal(store_daemon_register(b, "host-b", 200), 0);
	assert_true(store_daemon_id(f->st) > 0 && store_daemon_id(b) > 0);
	assert_true(store_daemon_id(f->st) != store_daemon_id(b));
	j1 = store_fixture_token_job(f->st, NULL, 1);
	j2 = store_fixture_token_job(b, NULL, 1);
	s1 = store_fixture_next_id(f->st, j1, kind, side);
	s2 = store_fixture_next_id(b, j2, kind, side);
	assert_int_equal(store_stage_start(f->st, s1, "m1"), 0);
	assert_int_equal(store_stage_start(b, s2, "m1"), -EBUSY);
	assert_int_equal(store_stage_start(b, s2, "m2"), 0);

	/* both seen: nothing is taken; nor when b's host has no other daemon */
	assert_int_equal(store_daemon_pass(b, 3600, &log), 0);
	assert_int_equal(log.len, 0);
	assert_int_equal(store_daemons_gone(b, "host-b", no_process_alive), 0);
	assert_int_equal(store_daemon_pass(b, 3600, &log), 0);
	assert_int_equal(log.len, 0);
	/* a's process is gone from its host: taken over without waiting */
	assert_int_equal(store_daemons_gone(b, "host-a", no_process_alive), 0);
	assert_int_equal(store_daemon_pass(b, 3600, &log), 0);
	print_message("# %s", log.buf);
	assert_contains(log.buf, "interrupted; queued again (taken over from daemon");
	j = store_job_json(b, j1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(j, "stages"), 0),
							      "state")), "pending");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(j, "stages"), 0),
							    "attempt")), 1);
	json_decref(j);
	assert_string_equal(machine_state(b, "m1", &leased, buf, sizeof(buf)), "unknown");
	assert_int_equal(leased, 0);
	assert_string_equal(machine_state(b, "m2", &leased, buf, sizeof(buf)), "good");
	assert_int_equal(leased, s2);
	assert_string_equal(store_fixture_job_str(b, j2, "state", NULL, buf, sizeof(buf)), "running");

	/* taken once; and the first daemon, seen again, takes nothing of a
	 * daemon that is seen */
	strbuf_reset(&log);
	assert_int_equal(store_daemon_pass(b, 0, &log), 0);
	assert_int_equal(log.len, 0);
	assert_int_equal(store_daemon_pass(f->st, 3600, &log), 0);
	assert_int_equal(log.len, 0);
	/* until it is silent for longer than the lease timeout, or stops */
	assert_int_equal(store_daemon_retire(b), 0);
	assert_int_equal(store_daemon_pass(f->st, 3600, &log), 0);
	assert_contains(log.buf, "interrupted; queued again (taken over from daemon");
	assert_string_equal(store_fixture_job_str(f->st, j2, "state", NULL, buf, sizeof(buf)), "running");
	assert_string_equal(machine_state(f->st, "m2", &leased, buf, sizeof(buf)), "unknown");
	assert_int_equal(leased, 0);
	store_close(b);
	strbuf_release(&err);
	strbuf_release(&log);
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
		store_fixture_test(test_per_patch_group),
		store_fixture_test(test_no_retry_after_cancel),
		store_fixture_test(test_sweep_boots),
		store_fixture_test(test_daemons_share),
	};
	/* SQLite's own: a store of a daemon from before PostgreSQL's first
	 * version (16) */
	const struct CMUnitTest sqlite_only[] = {
		store_fixture_test(test_patch_subject_migration),
	};
	int rc = cmocka_run_group_tests_name("sqlite migrations", sqlite_only, NULL, NULL);

	return store_fixture_run_both(tests, ARRAY_SIZE(tests)) | rc;
}
