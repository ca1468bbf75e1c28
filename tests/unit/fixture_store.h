#ifndef TLBLAB_FIXTURE_STORE_H
#define TLBLAB_FIXTURE_STORE_H

/*
 * A real store in a temporary directory, for the unit tests of the store
 * and of what writes into it (test_store*, test_ingest, test_sched), and
 * the jobs, stages and runs they put in it as the API, the scheduler and
 * ingest would. Include after testlib.h. The fixture owns its directory
 * and its store; store_fixture_close removes both.
 *
 * On either backend: a fresh SQLite file (the default), or a fresh
 * database of a real PostgreSQL server that the test program starts
 * itself through tests/pg.sh (initdb, pg_ctl, a socket in a temporary
 * directory only) and stops at its end. store_fixture_run_both runs a
 * program's tests once on each: the PostgreSQL round's names start with
 * "postgres: ". Each test gets a database of its own, copied from one the
 * store migrated once (a template), so a test pays for a copy, not for
 * the migrations. A round whose server cannot start fails; when the
 * binaries are missing, its tests are skipped, saying so.
 */

#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>
#include <jansson.h>

#include "config.h"
#include "store.h"
#include "submit.h"

enum store_fixture_backend { STORE_FIXTURE_SQLITE, STORE_FIXTURE_POSTGRES };

/* the program's round: which backend, and its PostgreSQL server */
static struct {
	enum store_fixture_backend backend;
	char dir[64];		/* the cluster's directory (tests/pg.sh) */
	char socket[256];	/* its socket directory */
	PGconn *admin;		/* to make each test's database */
	char skip[256];		/* why the round is skipped (no binaries), or "" */
	int ndb;
} store_fixture_pg __attribute__((unused));

struct store_fixture {
	char dir[64];		/* the temporary directory */
	char where[512];	/* what store_open was given: dir/t.db, or a URL */
	struct store *st;	/* the store on it */
};

/* 1 in the PostgreSQL round */
static inline int store_fixture_postgres(void)
{
	return store_fixture_pg.backend == STORE_FIXTURE_POSTGRES;
}

/* The URL of database db of the round's server, as the store takes it. */
static inline void store_fixture_pg_url(const char *db, char *buf, size_t len)
{
	snprintf(buf, len, "postgresql:///%s?host=%s&user=tlblab", db, store_fixture_pg.socket);
}

/* One statement on the server's admin connection; fails the test. */
static inline void store_fixture_pg_admin(const char *sql)
{
	PGresult *res = PQexec(store_fixture_pg.admin, sql);

	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		fail_msg("%s: %s", sql, PQerrorMessage(store_fixture_pg.admin));
	PQclear(res);
}

/*
 * The cmocka group setup of the PostgreSQL round: the server started
 * (tests/pg.sh start), and the template database migrated by the store.
 * Fails (the round's tests with it) when the server does not start.
 */
static inline int store_fixture_pg_start(void **state)
{
	char cmd[256], url[512];
	struct strbuf err = STRBUF_INIT;
	struct store *st = NULL;
	FILE *p;

	(void)state;
	store_fixture_pg.backend = STORE_FIXTURE_POSTGRES;
	snprintf(store_fixture_pg.dir, sizeof(store_fixture_pg.dir), "/tmp/tlblab-pg.XXXXXX");
	if (!mkdtemp(store_fixture_pg.dir))
		return -1;
	/* with this process's pid: were it to crash, the server stops */
	snprintf(cmd, sizeof(cmd), "sh tests/pg.sh start %s %d", store_fixture_pg.dir, (int)getpid());
	p = popen(cmd, "r");
	if (!p || !fgets(store_fixture_pg.socket, sizeof(store_fixture_pg.socket), p) || pclose(p) != 0) {
		fprintf(stderr, "# the PostgreSQL server of the tests did not start (tests/pg.sh start)\n");
		return -1;
	}
	store_fixture_pg.socket[strcspn(store_fixture_pg.socket, "\n")] = '\0';
	store_fixture_pg_url("postgres", url, sizeof(url));
	store_fixture_pg.admin = PQconnectdb(url);
	if (PQstatus(store_fixture_pg.admin) != CONNECTION_OK) {
		fprintf(stderr, "# %s: %s", url, PQerrorMessage(store_fixture_pg.admin));
		return -1;
	}
	store_fixture_pg_admin("CREATE DATABASE template_store");
	store_fixture_pg_url("template_store", url, sizeof(url));
	if (store_open(url, &st, &err) < 0) {
		fprintf(stderr, "# store_open %s: %s\n", url, err.buf);
		return -1;
	}
	store_close(st);
	strbuf_release(&err);
	return 0;
}

/* The cmocka group teardown of the PostgreSQL round: the server stopped,
 * its directory removed. */
static inline int store_fixture_pg_stop(void **state)
{
	char cmd[256];
	int rc = 0;

	(void)state;
	PQfinish(store_fixture_pg.admin);
	store_fixture_pg.admin = NULL;
	if (store_fixture_pg.dir[0]) {
		snprintf(cmd, sizeof(cmd), "sh tests/pg.sh stop %s && rm -rf %s", store_fixture_pg.dir,
			 store_fixture_pg.dir);
		rc = system(cmd) == 0 ? 0 : -1;
	}
	store_fixture_pg.backend = STORE_FIXTURE_SQLITE;
	return rc;
}

/* Makes /tmp/tlblab-NAME.XXXXXX and opens a new store in it (an SQLite
 * file there, or a new database of the round's server); fails the test
 * when either cannot be done. */
static inline void store_fixture_open(struct store_fixture *sf, const char *name)
{
	struct strbuf err = STRBUF_INIT;

	snprintf(sf->dir, sizeof(sf->dir), "/tmp/tlblab-%s.XXXXXX", name);
	assert_non_null(mkdtemp(sf->dir));
	if (store_fixture_postgres()) {
		char sql[128], db[32];

		snprintf(db, sizeof(db), "t%d", ++store_fixture_pg.ndb);
		snprintf(sql, sizeof(sql), "CREATE DATABASE %s TEMPLATE template_store STRATEGY FILE_COPY", db);
		store_fixture_pg_admin(sql);
		store_fixture_pg_url(db, sf->where, sizeof(sf->where));
	} else {
		snprintf(sf->where, sizeof(sf->where), "%s/t.db", sf->dir);
	}
	if (store_open(sf->where, &sf->st, &err) < 0)
		fail_msg("store_open: %s", err.buf);
	strbuf_release(&err);
}

static inline void store_fixture_close(struct store_fixture *sf)
{
	char cmd[128];

	store_close(sf->st);
	sf->st = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", sf->dir);
	assert_int_equal(system(cmd), 0);
}

/* The cmocka setup and teardown of a test whose state is a store_fixture. */
static inline int store_fixture_setup(void **state)
{
	struct store_fixture *sf = calloc(1, sizeof(*sf));

	assert_non_null(sf);
	*state = sf;
	store_fixture_open(sf, "store");
	return 0;
}

static inline int store_fixture_teardown(void **state)
{
	struct store_fixture *sf = *state;

	if (sf && sf->dir[0])
		store_fixture_close(sf);
	free(sf);
	*state = NULL;
	return 0;
}

/* A cmocka test with a fresh store_fixture as its state. */
#define store_fixture_test(f) \
	cmocka_unit_test_setup_teardown(f, store_fixture_setup, store_fixture_teardown)

/* A test of the PostgreSQL round when its server cannot run here. */
static inline void store_fixture_pg_skipped(void **state)
{
	(void)state;
	skip_because(store_fixture_pg.skip);
}

/* Whether tests/pg.sh can start a server here: 1, or 0 with why in
 * store_fixture_pg.skip (the binaries are missing). */
static inline int store_fixture_pg_available(void)
{
	FILE *p = popen("sh tests/pg.sh available", "r");
	char *why = store_fixture_pg.skip;

	if (!p || !fgets(why, sizeof(store_fixture_pg.skip), p))
		why[0] = '\0';
	if (p && pclose(p) == 0)
		return 1;
	why[strcspn(why, "\n")] = '\0';
	if (!why[0])
		snprintf(why, sizeof(store_fixture_pg.skip), "tests/pg.sh cannot run");
	return 0;
}

/*
 * Runs tests[0..n) on SQLite, then on PostgreSQL (the server started
 * first, stopped after) with pg_only[0..npg) after them, as two cmocka
 * groups: non-zero when any failed. Without PostgreSQL's binaries the
 * second round's tests are skipped, saying so; a server that does not
 * start fails it.
 */
static inline int store_fixture_run_rounds(const struct CMUnitTest *tests, size_t n,
					   const struct CMUnitTest *pg_only, size_t npg)
{
	struct CMUnitTest *pg = calloc(n + npg, sizeof(*pg));
	int available;
	size_t i;
	int rc;

	store_fixture_pg.backend = STORE_FIXTURE_SQLITE;
	rc = _cmocka_run_group_tests("sqlite", tests, n, NULL, NULL);
	available = store_fixture_pg_available();
	for (i = 0; i < n + npg; i++) {
		const struct CMUnitTest *t = i < n ? &tests[i] : &pg_only[i - n];
		size_t len = strlen(t->name) + 16;
		char *name = malloc(len);

		snprintf(name, len, "postgres: %s", t->name);
		pg[i] = *t;
		pg[i].name = name;
		if (!available)
			pg[i] = (struct CMUnitTest){ .name = name, .test_func = store_fixture_pg_skipped };
	}
	rc |= _cmocka_run_group_tests("postgres", pg, n + npg, available ? store_fixture_pg_start : NULL,
				      available ? store_fixture_pg_stop : NULL);
	for (i = 0; i < n + npg; i++)
		free((char *)pg[i].name);
	free(pg);
	return rc;
}

/* The same tests on each backend. */
static inline int store_fixture_run_both(const struct CMUnitTest *tests, size_t n)
{
	return store_fixture_run_rounds(tests, n, NULL, 0);
}

/* The round's server stopped (mode fast or immediate), or started again
 * (mode NULL), through tests/pg.sh; fails the test when it cannot. */
static inline void store_fixture_pg_server(const char *mode)
{
	char cmd[256];

	if (mode)
		snprintf(cmd, sizeof(cmd), "sh tests/pg.sh stop %s %s", store_fixture_pg.dir, mode);
	else
		snprintf(cmd, sizeof(cmd), "sh tests/pg.sh start-again %s", store_fixture_pg.dir);
	if (system(cmd) != 0)
		fail_msg("%s failed", cmd);
}

/*
 * The test's own connection to the store's database, for what it checks
 * behind the store's back (the invariants of test_store_faults): SQL of
 * both dialects, one integer parameter ?1 (or ?).
 */
struct store_fixture_db {
	sqlite3 *lite;
	PGconn *pg;
};

static inline void store_fixture_db_open(struct store_fixture *sf, struct store_fixture_db *d)
{
	memset(d, 0, sizeof(*d));
	if (store_fixture_postgres()) {
		d->pg = PQconnectdb(sf->where);
		if (PQstatus(d->pg) != CONNECTION_OK)
			fail_msg("%s: %s", sf->where, PQerrorMessage(d->pg));
		return;
	}
	assert_int_equal(sqlite3_open_v2(sf->where, &d->lite, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	sqlite3_busy_timeout(d->lite, 5000);
}

static inline void store_fixture_db_close(struct store_fixture_db *d)
{
	sqlite3_close(d->lite);
	PQfinish(d->pg);
	memset(d, 0, sizeof(*d));
}

/* Statements with no rows (several, ';' between), or the test fails. */
static inline void store_fixture_db_exec(struct store_fixture_db *d, const char *sql)
{
	if (d->pg) {
		PGresult *res = PQexec(d->pg, sql);

		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			fail_msg("%s: %s", sql, PQerrorMessage(d->pg));
		PQclear(res);
	} else if (sqlite3_exec(d->lite, sql, NULL, NULL, NULL) != SQLITE_OK) {
		fail_msg("%s: %s", sql, sqlite3_errmsg(d->lite));
	}
}

/* The first column of the first row of sql with ?1 = arg, as text into
 * buf ("" when there is no row), or the test fails. */
static inline const char *store_fixture_db_text(struct store_fixture_db *d, const char *sql, long long arg,
						char *buf, size_t len)
{
	buf[0] = '\0';
	if (d->pg) {
		char text[4096], val[32];
		const char *vals[] = { val };
		const Oid types[] = { 20 /* int8 */ };
		size_t i, o = 0;
		PGresult *res;

		for (i = 0; sql[i] && o + 3 < sizeof(text); i++) {
			if (sql[i] == '?') {
				text[o++] = '$';
				if (sql[i + 1] != '1')
					text[o++] = '1';
			} else {
				text[o++] = sql[i];
			}
		}
		text[o] = '\0';
		snprintf(val, sizeof(val), "%lld", arg);
		res = PQexecParams(d->pg, text, strstr(text, "$1") ? 1 : 0, types, vals, NULL, NULL, 0);
		if (PQresultStatus(res) != PGRES_TUPLES_OK)
			fail_msg("%s: %s", text, PQerrorMessage(d->pg));
		if (PQntuples(res) > 0)
			snprintf(buf, len, "%s", PQgetvalue(res, 0, 0));
		PQclear(res);
		return buf;
	} else {
		sqlite3_stmt *s;

		if (sqlite3_prepare_v2(d->lite, sql, -1, &s, NULL) != SQLITE_OK)
			fail_msg("prepare %s: %s", sql, sqlite3_errmsg(d->lite));
		sqlite3_bind_int64(s, 1, arg);
		if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
			snprintf(buf, len, "%s", (const char *)sqlite3_column_text(s, 0));
		sqlite3_finalize(s);
	}
	return buf;
}

/* The same as an integer: -1 when there is no row. */
static inline long long store_fixture_db_int(struct store_fixture_db *d, const char *sql, long long arg)
{
	char buf[32];

	store_fixture_db_text(d, sql, arg, buf, sizeof(buf));
	return buf[0] ? strtoll(buf, NULL, 10) : -1;
}

/* Takes the write lock of the tables a stage's end and a job's cancel
 * write, as another writer would hold it, until store_fixture_db_unlock. */
static inline void store_fixture_db_lock(struct store_fixture_db *d)
{
	store_fixture_db_exec(d, d->pg ? "BEGIN; LOCK TABLE jobs, stages IN EXCLUSIVE MODE" : "BEGIN IMMEDIATE");
}

static inline void store_fixture_db_unlock(struct store_fixture_db *d)
{
	store_fixture_db_exec(d, "COMMIT");
}

/* The length of the array `key` in j, a store's JSON answer, which must
 * not be NULL (a read that failed); takes j and frees it. */
static inline size_t store_json_count(json_t *j, const char *key)
{
	size_t n;

	assert_non_null(j);
	n = json_array_size(json_object_get(j, key));
	json_decref(j);
	return n;
}

/*
 * Stores an A/B job (tree linux, base v6.1, a patch) of `boots` boots per
 * side that may grow to max_boots (0: it may not), of the workload specs
 * `specs` (a JSON array, taken and freed), with the stages submit_plan
 * gives it when the suite's run timeout and the lab's stage timeout are
 * both `timeout`: store_job_create's 0 with the id in *ret_id, or -1 with
 * err.
 */
static inline int store_fixture_create_ab(struct store *st, json_t *specs, int boots, int max_boots,
					  double timeout, int64_t *ret_id, struct strbuf *err)
{
	struct lab_config cfg = { .stage_timeout = timeout };
	struct cfg_suite suite = { .name = "tlb", .timeout = timeout, .workloads = specs };
	struct job_request req = { .kind = "ab", .tree = "linux", .base = "v6.1", .patch_kind = "patch",
				   .patch = "diff", .suite = suite.name, .suite_json = specs, .boots = boots,
				   .max_boots = max_boots };
	struct stage_plan *plan = NULL;
	size_t n = submit_plan(&cfg, &suite, &req, &plan);
	int rc = store_job_create(st, &req, plan, n, ret_id, err);

	free(plan);
	json_decref(specs);
	return rc;
}

/* The same, when it must be stored: its id. */
static inline int64_t store_fixture_ab_job(struct store *st, json_t *specs, int boots, int max_boots,
					   double timeout)
{
	struct strbuf err = STRBUF_INIT;
	int64_t id = 0;

	if (store_fixture_create_ab(st, specs, boots, max_boots, timeout, &id, &err) < 0)
		fail_msg("store_job_create: %s", err.buf);
	strbuf_release(&err);
	return id;
}

/* The job's first runnable stage, moved into *ret (the caller releases it
 * with stage_info_release); ret->id is 0 when there is none. Returns 0,
 * or store_runnable_stages's error with *ret untouched. */
static inline int store_fixture_runnable(struct store *st, int64_t job, struct stage_info *ret)
{
	struct stage_info *v;
	size_t n, i;
	int rc = store_runnable_stages(st, &v, &n);

	if (rc < 0)
		return rc;
	memset(ret, 0, sizeof(*ret));
	for (i = 0; i < n; i++)
		if (v[i].job_id == job) {
			*ret = v[i];
			memset(&v[i], 0, sizeof(v[i]));
			break;
		}
	store_stage_infos_free(v, n);
	return 0;
}

/* The same, when there must be one: fails the test otherwise. */
static inline void store_fixture_next_stage(struct store *st, int64_t job, struct stage_info *ret)
{
	assert_int_equal(store_fixture_runnable(st, job, ret), 0);
	if (!ret->id)
		fail_msg("job %lld has no runnable stage", (long long)job);
}

/*
 * One measured iteration of spec `spec` in the run stage `stage` on
 * `side`, as ingest stores it: mprotect.ops_per_sec = value (higher is
 * better), of mprotect for spec 0 and mremap for the others, with 2
 * workers. Returns store_run_add's result.
 */
static inline int store_fixture_run_add(struct store *st, int64_t job, int64_t stage, const char *side, int spec,
					double value)
{
	json_t *metrics = json_pack("{s:f}", "mprotect.ops_per_sec", value);
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

/* ---- the jobs of test_store and test_store_faults ---- */

/* An A/B job of `boots` boots per side that may not grow, of two specs:
 * mprotect, and mremap with 2 workers. */
static inline int64_t store_fixture_job(struct store *st, int boots)
{
	return store_fixture_ab_job(st, json_pack("[{s:s},{s:s,s:i}]", "workload", "mprotect", "workload",
						  "mremap", "workers", 2), boots, 0, 60);
}

/* store_fixture_next_stage's id, with its kind and side copied out. */
static inline int64_t store_fixture_next_id(struct store *st, int64_t job, char kind[8], char side[16])
{
	struct stage_info si;
	int64_t id;

	store_fixture_next_stage(st, job, &si);
	id = si.id;
	snprintf(kind, 8, "%s", si.kind);
	snprintf(side, 16, "%s", si.side);
	store_stage_info_release(&si);
	return id;
}

/* The specs outcome of a run stage of such a job: spec `bad` failed with
 * msg (-1: none did). */
static inline json_t *store_fixture_specs_outcome(int bad, const char *msg)
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

/* The string at key (or key.sub) of the job's JSON, copied into buf;
 * "(null)" when there is none. */
static inline const char *store_fixture_job_str(struct store *st, int64_t job, const char *key, const char *sub,
						char *buf, size_t len)
{
	json_t *j = store_job_json(st, job), *v = json_object_get(j, key);

	if (sub)
		v = json_object_get(v, sub);
	snprintf(buf, len, "%s", json_string_value(v) ?: "(null)");
	json_decref(j);
	return buf;
}

/* An A/B job of one boot with this patch source; its id. */
static inline int64_t store_fixture_sourced_job(struct store *st, const char *kind, const char *patch,
						 const char *url, const char *ref, const char *subject)
{
	struct stage_plan plan[] = { { "build", "base", 0, 60, 0 }, { "build", "patched", 0, 60, 0 } };
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

/* A job of token (NULL: the lab's), of boots boot stages; its id. */
static inline int64_t store_fixture_token_job(struct store *st, const char *token, int boots)
{
	struct stage_plan plan[] = { { "boot", NULL, 0, 60, 0 }, { "run", NULL, 0, 60, 0 }, { "boot", NULL, 1, 60, 0 },
				     { "run", NULL, 1, 60, 0 } };
	struct job_request req = { .kind = "run", .suite = "tlb", .boots = boots, .token = token };
	struct strbuf err = STRBUF_INIT;
	int64_t id = 0;

	req.suite_json = json_array();
	if (store_job_create(st, &req, plan, 2 * (size_t)boots, &id, &err) < 0)
		fail_msg("store_job_create: %s", err.buf);
	json_decref((json_t *)req.suite_json);
	strbuf_release(&err);
	return id;
}

/* The machine m1 of a lab, booted by QEMU (its settings are never used:
 * no store test boots it), for the tests of what a boot records. */
#define STORE_FIXTURE_QEMU_LAB							\
	"lab: {data_dir: /tmp}\nmachines:\n  - name: m1\n    transport: local\n"	\
	"    boot: qemu\n    qemu: {initrd: /x, identity: /y, ssh_port: 10099, known_hosts: /z}\n"

/* The machines of the lab configuration yaml put in f's store, as the
 * daemon does at start (their health unknown). */
static inline void store_fixture_lab(struct store_fixture *f, const char *yaml)
{
	struct lab_config *cfg = NULL;
	struct strbuf err = STRBUF_INIT;

	if (config_load_string("lab.yaml", yaml, strlen(yaml), &cfg, &err) < 0)
		fail_msg("lab.yaml: %s", err.buf);
	assert_int_equal(store_sync_machines(f->st, cfg, &err), 0);
	config_free(cfg);
	strbuf_release(&err);
}

/* The machines m1 and m2 of a lab, in the store, both good. */
static inline void store_fixture_two_machines(struct store_fixture *f)
{
	store_fixture_lab(f, "lab: {data_dir: /tmp}\nmachines:\n  - name: m1\n    transport: local\n"
			     "  - name: m2\n    transport: local\n");
	assert_int_equal(store_machine_health(f->st, "m1", "good", NULL), 0);
	assert_int_equal(store_machine_health(f->st, "m2", "good", NULL), 0);
}

#endif
