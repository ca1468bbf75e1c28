/*
 * daemon/store when its database fails: at each statement of a job's life
 * in turn, on a database another connection holds locked, part-way
 * through a read, and under the ingest of the agent's output. Whatever
 * fails, the store says so and leaves nothing half made; once the fault
 * clears, the same calls go through. On SQLite and on PostgreSQL
 * (fixture_store.h).
 */
#include "testlib.h"

#include <errno.h>
#include <poll.h>

#include "config.h"
#include "ingest.h"
#include "store.h"
#include "submit.h"
#include "util.h"
#include "fixture_store.h"
#include "jsonget.h"
#include "banned.h"

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
	struct store_fixture_db db;	/* the test's own connection, for the invariants */
	int64_t job;
	int faults;		/* calls that failed (each on the armed fault) */
};

static long long q_int(struct store_fixture_db *db, const char *sql, long long arg)
{
	return store_fixture_db_int(db, sql, arg);
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
	struct store_fixture_db *db = &l->db;
	size_t i;
	long long jobs = q_int(db, "SELECT count(*) FROM jobs WHERE ?1 >= 0", 0);
	long long n, done, running, started;
	char state[16] = "";

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
	if (q_int(db, "SELECT count(*) FROM machines m WHERE name = 'm1' AND ?1 >= 0 AND (lease_stage IS DISTINCT FROM "
		  "(SELECT id FROM stages WHERE state = 'running' AND kind IN ('boot', 'run')) OR "
		  "(lease_stage IS NULL) != (lease_job IS NULL))", 0))
		fail_msg("after %s: the machine's lease does not match its stages", after);
	/* the job's state is its stages' */
	store_fixture_db_text(db, "SELECT state FROM jobs WHERE id = ?", l->job, state, sizeof(state));
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

/* The job of a life: an A/B job of one boot; 0, or the store's error. */
static int create_job(struct store *st, int64_t *ret)
{
	struct strbuf err = STRBUF_INIT;
	int rc = store_fixture_create_ab(st, json_pack("[{s:s},{s:s}]", "workload", "mprotect", "workload",
						       "mremap"), 1, 0, 60, ret, &err);

	if (rc < 0 && !strstr(err.buf, "store: create job: "))
		fail_msg("store_job_create says: %s", err.buf);
	strbuf_release(&err);
	return rc;
}

/* Drives the life; returns how many calls failed on the fault. */
static int job_life(struct life *l)
{
	struct store *st = l->f->st;
	json_t *sample = json_pack("{s:i,s:i,s:b,s:b,s:f,s:f,s:{s:i}}", "case", 0, "iteration", 0, "warmup", 0,
				   "window", 1, "t", 1.0, "dt", 1.0, "values", "interrupts.TLB", 5);
	json_t *unavail = json_pack("{s:s}", "vmstat.nr_tlb_remote_flush", "no DEBUG_TLBFLUSH");
	json_t *specs = store_fixture_specs_outcome(-1, NULL);
	struct build_row b = { .id = NULL, .tree = "linux", .commit_id = "abc", .config_hash = "h",
			       .compiler = "gcc", .path = "/b", .duration = 1 };
	struct stage_info si = { 0 };
	int guard;

	l->job = 0;
	LIFE_CALL(l, create_job(st, &l->job));
	for (guard = 0; guard < 16; guard++) {
		int64_t run;

		store_stage_info_release(&si);
		LIFE_CALL(l, store_fixture_runnable(st, l->job, &si));
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
		LIFE_CALL(l, store_fixture_run_add(st, l->job, run, si.side, 0, 1000));
		LIFE_CALL(l, store_fixture_run_add(st, l->job, run, si.side, 1, 1001));
		LIFE_CALL(l, store_sample_add(st, run, 0, sample));
		LIFE_CALL(l, store_unavailable_add(st, run, unavail));
		LIFE_CALL(l, store_stage_set_specs(st, run, specs));
		LIFE_CALL(l, store_stage_finish(st, run, "done", NULL, NULL));
	}
	LIFE_CALL(l, store_comparison_put(st, l->job, "{}", "{\"verdict\": \"same\"}", "same", 1.0));
	check_invariants(l, "the last call");
	store_stage_info_release(&si);
	json_decref(sample);
	json_decref(unavail);
	json_decref(specs);
	return l->faults;
}

static void open_lab(struct store_fixture *f, struct store_fixture_db *ret_db)
{
	store_fixture_lab(f, STORE_FIXTURE_QEMU_LAB);
	assert_int_equal(store_machine_health(f->st, "m1", "good", NULL), 0);
	store_fixture_db_open(f, ret_db);
}

/*
 * The store fails at statement 1, then 2, 3, ... of the life (its database
 * full or an I/O error, alternately), until a life runs without reaching the
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
		store_fault_after(f->st, n, n % 2 ? STORE_ERR_FULL : STORE_ERR_IO);
		faults = job_life(&l);
		lives++;
		/* done, each result once, nothing leased */
		assert_int_equal(q_int(&l.db, "SELECT count(*) FROM stages WHERE job_id = ? AND state = 'done'", l.job), 6);
		assert_int_equal(q_int(&l.db, "SELECT count(*) FROM runs WHERE job_id = ?", l.job), 4);
		assert_int_equal(q_int(&l.db, "SELECT count(*) FROM jobs WHERE id = ? AND state = 'done' "
				       "AND verdict = 'same'", l.job), 1);
		assert_int_equal(q_int(&l.db, "SELECT count(*) FROM machines WHERE lease_stage IS NOT NULL "
				       "AND ?1 >= 0", 0), 0);
		store_fixture_db_close(&l.db);
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
	assert_int_equal(store_fixture_runnable(f->st, l.job, &si), 0);
	assert_int_equal(store_stage_begin(f->st, si.id, "builder local"), 0);
	store_busy_timeout(f->st, 50);
	store_fixture_db_lock(&l.db);
	assert_int_equal(store_stage_finish(f->st, si.id, "done", NULL, NULL), -EAGAIN);
	assert_int_equal(store_job_cancel(f->st, l.job), -EAGAIN);
	assert_contains(store_strerror(-EAGAIN), "locked");
	store_fixture_db_unlock(&l.db);
	check_invariants(&l, "a locked database");
	assert_string_equal(store_fixture_job_str(f->st, l.job, "state", NULL, buf, sizeof(buf)), "running");
	assert_int_equal(store_stage_finish(f->st, si.id, "done", NULL, NULL), 0);
	check_invariants(&l, "the lock went");
	store_stage_info_release(&si);
	store_fixture_db_close(&l.db);
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
	int64_t job = store_fixture_job(f->st, 1), stage;
	json_t *j;

	stage = store_fixture_next_id(f->st, job, kind, side);
	assert_int_equal(store_stage_begin(f->st, stage, "builder local"), 0);
	assert_int_equal(store_fixture_run_add(f->st, job, stage, "base", 0, 1000), 0);

	errno = 0;
	assert_null(store_job_json(f->st, job + 100));
	assert_int_equal(errno, ENOENT);
	j = store_job_json(f->st, job);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "stages")), 6);
	json_decref(j);

	/* the job row is read, its stages are not */
	store_fault_match(f->st, "FROM stages WHERE job_id = ? ORDER BY seq", 1, STORE_ERR_IO);
	errno = 0;
	assert_null(store_job_json(f->st, job));
	assert_int_equal(errno, EIO);
	assert_int_equal(store_fault_hits(f->st), 1);

	store_fault_match(f->st, "FROM runs WHERE job_id", 1, STORE_ERR_LOCKED);
	assert_null(store_runs_json(f->st, job));
	assert_int_equal(errno, EAGAIN);
	store_fault_match(f->st, "JOIN metrics", 1, STORE_ERR_FULL);
	assert_null(store_metrics_json(f->st, job, NULL, 1));
	assert_int_equal(errno, ENOSPC);
	store_fault_match(f->st, "JOIN metrics", 1, STORE_ERR_IO);
	assert_null(store_compare_doc(f->st, job));
	assert_int_equal(errno, EIO);
	store_fault_match(f->st, "FROM samples", 1, STORE_ERR_IO);
	assert_null(store_samples_json(f->st, job, 0, NULL, 0, 10));
	assert_int_equal(errno, EIO);
	store_fault_match(f->st, "FROM jobs ORDER BY", 1, STORE_ERR_IO);
	assert_null(store_jobs_json(f->st, &jf));
	assert_int_equal(errno, EIO);
	store_fault_match(f->st, "FROM machines", 1, STORE_ERR_LOCKED);
	assert_null(store_machines_json(f->st));
	assert_int_equal(errno, EAGAIN);
	store_fault_match(f->st, "FROM machines", 1, STORE_ERR_IO);
	assert_null(store_health_json(f->st));
	store_fault_match(f->st, "SELECT log FROM stages", 1, STORE_ERR_IO);
	assert_int_equal(store_stage_log(f->st, job, stage, &log), -EIO);
	assert_int_equal(store_stage_log(f->st, job, stage + 100, &log), -ENOENT);
	store_fault_match(f->st, "verdict IS NULL", 1, STORE_ERR_IO);
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
	int64_t job = store_fixture_job(f->st, 1), stage;
	size_t i;

	stage = store_fixture_next_id(f->st, job, kind, side);
	assert_int_equal(store_stage_begin(f->st, stage, "builder local"), 0);
	for (i = 0; i < ARRAY_SIZE(lines); i++) {
		struct ingest ig;

		ingest_init(&ig);
		ig.st = f->st;
		ig.job_id = job;
		ig.stage_id = stage;
		ig.machine = "m1";
		ig.side = "base";
		store_fault_match(f->st, faults[i], 1, i % 2 ? STORE_ERR_FULL : STORE_ERR_IO);
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

/*
 * A job and its token's hash are one transaction: when recording the
 * token fails, no job is stored (else it would run uncounted by
 * max_jobs_per_token); once the fault clears, the job is stored and counts.
 */
static void test_job_and_token_together(void **state)
{
	struct store_fixture *f = *state;
	json_t *specs = json_pack("[{s:s,s:{s:i}}]", "workload", "mprotect", "params", "workers", 1);
	struct lab_config cfg = { .stage_timeout = 60 };
	struct cfg_suite suite = { .name = "tlb", .timeout = 60, .workloads = specs };
	struct job_request req = { .kind = "run", .tree = "linux", .base = "v6.1", .suite = "tlb",
				   .suite_json = specs, .boots = 2,
				   .token = "a-token-of-the-test-0123456789" };
	struct strbuf err = STRBUF_INIT;
	struct stage_plan *plan = NULL;
	size_t n = submit_plan(&cfg, &suite, &req, &plan);
	int64_t id = 0;
	int jobs = -1, boots = -1;

	store_fault_match(f->st, "token_hash", 1, STORE_ERR_IO);
	assert_true(store_job_create(f->st, &req, plan, n, &id, &err) < 0);
	assert_int_equal(store_fault_hits(f->st), 1);
	assert_null(store_job_json(f->st, 1));	/* the job's rows rolled back with the token's */
	assert_int_equal(store_token_work(f->st, req.token, &jobs, &boots), 0);
	assert_int_equal(jobs, 0);

	strbuf_reset(&err);
	assert_int_equal(store_job_create(f->st, &req, plan, n, &id, &err), 0);
	assert_int_equal(store_token_work(f->st, req.token, &jobs, &boots), 0);
	assert_int_equal(jobs, 1);
	assert_int_equal(boots, 2);	/* its two boot stages */
	json_decref(store_job_json(f->st, id));
	free(plan);
	json_decref(specs);
	strbuf_release(&err);
}

/* ---- PostgreSQL: a server down, a login refused, a server gone ---- */

/*
 * A store whose server is down, or that refuses the login, does not open:
 * -ENOTCONN, and the error names the store (user, database, host) and
 * why, never the password of its URL.
 */
static void test_pg_cannot_connect(void **state)
{
	static const char secret[] = "not-the-password-7c1e";
	struct store_fixture *f = *state;
	struct strbuf err = STRBUF_INIT, name = STRBUF_INIT;
	struct store *st = NULL;
	char url[512];

	snprintf(url, sizeof(url), "postgresql://tlblab_pw:%s@/tlblab?host=%s", secret, store_fixture_pg.socket);
	assert_int_equal(store_open(url, &st, &err), -ENOTCONN);
	assert_null(st);
	assert_contains(err.buf, "user tlblab_pw");
	assert_contains(err.buf, "database tlblab");
	assert_contains(err.buf, store_fixture_pg.socket);
	assert_contains(err.buf, "password authentication failed");
	assert_null(strstr(err.buf, secret));
	store_describe(url, &name);
	assert_null(strstr(name.buf, secret));
	print_message("# refused: %s\n", err.buf);

	/* nobody listens there: the test's own directory */
	snprintf(url, sizeof(url), "postgresql://tlblab:%s@/tlblab?host=%s&connect_timeout=5", secret, f->dir);
	strbuf_reset(&err);
	assert_int_equal(store_open(url, &st, &err), -ENOTCONN);
	assert_contains(err.buf, "cannot connect");
	assert_contains(err.buf, f->dir);
	assert_null(strstr(err.buf, secret));
	print_message("# down: %s\n", err.buf);
	strbuf_release(&err);
	strbuf_release(&name);
}

/*
 * The server goes away while the store is open: every call fails with
 * -ENOTCONN (a failure of the store: the API answers 503), a change made
 * meanwhile is not half made; once the server is back, the store
 * connects again by itself and every job is there, with its stages.
 */
static void test_pg_server_goes_away(void **state)
{
	struct store_fixture *f = *state;
	struct job_filter all = { 0 };
	struct strbuf err = STRBUF_INIT;
	int64_t job = store_fixture_job(f->st, 1), later = 0;
	json_t *j = NULL;
	double deadline;
	int rc;

	store_fixture_pg_server("fast");
	errno = 0;
	assert_null(store_job_json(f->st, job));
	assert_int_equal(errno, ENOTCONN);
	assert_null(store_jobs_json(f->st, &all));
	assert_int_equal(errno, ENOTCONN);
	rc = store_fixture_create_ab(f->st, json_pack("[{s:s}]", "workload", "mprotect"), 1, 0, 60, &later, &err);
	assert_int_equal(rc, -ENOTCONN);
	assert_true(store_failed(rc));
	assert_contains(store_strerror(rc), "cannot be reached");
	print_message("# while down: %s\n", err.buf);

	store_fixture_pg_server(NULL);
	/* each connection tries again at most once a second: poll */
	deadline = mono_now() + 30;
	while (!(j = store_job_json(f->st, job)) && mono_now() < deadline)
		poll(NULL, 0, 100);
	assert_non_null(j);
	assert_string_equal(jsonget_str(j, "state"), "queued");
	assert_int_equal(json_array_size(json_object_get(j, "stages")), 6);
	json_decref(j);
	/* the writer too, and the readers: a change and the list */
	deadline = mono_now() + 30;
	while ((rc = store_fixture_create_ab(f->st, json_pack("[{s:s}]", "workload", "mprotect"), 1, 0, 60, &later,
					     &err)) < 0 && mono_now() < deadline)
		poll(NULL, 0, 100);
	assert_int_equal(rc, 0);
	deadline = mono_now() + 30;
	while (!(j = store_jobs_json(f->st, &all)) && mono_now() < deadline)
		poll(NULL, 0, 100);
	assert_int_equal(store_json_count(j, "jobs"), 2);
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		store_fixture_test(test_fault_at_each_statement),
		store_fixture_test(test_locked_database),
		store_fixture_test(test_reads_report_store_errors),
		store_fixture_test(test_ingest_store_error),
		store_fixture_test(test_job_and_token_together),
	};

	const struct CMUnitTest pg_only[] = {
		store_fixture_test(test_pg_cannot_connect),
		store_fixture_test(test_pg_server_goes_away),
	};

	return store_fixture_run_rounds(tests, ARRAY_SIZE(tests), pg_only, ARRAY_SIZE(pg_only));
}
