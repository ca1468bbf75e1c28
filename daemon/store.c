/*
 * The store. One connection, one mutex for every change: SQLite serialises
 * writers anyway, so a single writing connection keeps the code simple and
 * every call atomic. WAL lets a crash at any instant leave the last
 * committed state, which store_recover turns into a consistent one at the
 * next start.
 *
 * The API's hottest reads (the job list, a job) go to a few read-only
 * connections on the same file instead, each with its own mutex and
 * statement cache: WAL lets them read the last commit while the writer
 * works, so 32 dashboards polling no longer queue behind one mutex. They
 * are struct stores too (reader_get), and share the writer's fault hook,
 * so a test sees one sequence of statements whichever connection runs it.
 * Every change is committed before the writer's mutex is released, so a
 * read that starts after a call returned sees what the call wrote.
 */
#include "store.h"

#include <errno.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "migrations.h"
#include "patch.h"
#include "util.h"
#include "banned.h"

#define STMT_CACHE 96
/* read-only connections: as many as API threads on a 4-CPU host (api.c);
 * a read takes a free one, and waits only while all of them read */
#define READERS 4
/* job list totals kept per filter (count_get) */
#define COUNT_SLOTS 16

/* A run stage that failed as a workload is kept as a result: it does not
 * stop the stages after it, and the job is settled once they are all over
 * (settle_job). SQL condition on stage alias A. */
#define KEPT_FAILURE(a) "(" a ".kind = 'run' AND " a ".state = 'failed' AND " a ".error_class = 'workload')"

/*
 * Prepared statements are cached by the address of their SQL text (every
 * fixed query is a string literal), so a request pays for parsing once per
 * daemon, not once per call. Callers hand them back with stmt_done, which
 * resets them; queries built at run time use prep_once and finalize, or
 * prep_text, which keeps them by their text (a few shapes, many calls).
 */
struct stmt_slot {
	const char *sql;
	sqlite3_stmt *s;
	char *text;		/* prep_text's own copy of sql, or NULL */
};

/* The test hook (store.h): the n-th statement from now, or the next
 * `times` statements whose SQL contains `match`, fail with `code`. */
struct store_fault {
	long after;
	int times;
	int code;
	long hits;
	char match[128];
};

/* The job list's total for one filter, as of a generation. */
struct count_slot {
	char *key;		/* the filter's values (store_jobs_json), or NULL */
	int64_t gen;
	int64_t total;
};

struct store {
	sqlite3 *db;
	pthread_mutex_t lock;	/* this connection: its statements, errmsg */
	int version;
	struct stmt_slot cache[STMT_CACHE];
	size_t ncache;
	char errmsg[256];	/* the last failure's message, under the lock */
	int errcode;		/* and its SQLite code */
	/* the writer's only (a reader has parent set and uses its parent's) */
	struct store *parent;
	pthread_mutex_t fault_lock;	/* fault; taken last, alone */
	struct store_fault fault;
	struct store *readers[READERS];
	size_t nreaders;
	atomic_uint next_reader;
	pthread_mutex_t count_lock;	/* counts */
	struct count_slot counts[COUNT_SLOTS];
	size_t next_count;
};

static void lock(struct store *st)
{
	pthread_mutex_lock(&st->lock);
}

static void unlock(struct store *st)
{
	pthread_mutex_unlock(&st->lock);
}

/* An SQLite result code as the store's negative errno (store.h). */
static int sqlite_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EAGAIN;
	case SQLITE_FULL:
		return -ENOSPC;
	default:
		return -EIO;
	}
}

static int sql_err(struct store *st, struct strbuf *err, const char *what)
{
	if (err)
		strbuf_seterr(err, "store: %s: %s", what, st->errmsg[0] ? st->errmsg : sqlite3_errmsg(st->db));
	return sqlite_errno(st->errcode);
}

/* Whether the statement about to start (sql) is the one the fault hook
 * fails: SQLITE_OK, or the code to fail it with. */
static int fault_fires(struct store *st, const char *sql)
{
	struct store *w = st->parent ? st->parent : st;
	struct store_fault *f = &w->fault;
	int code = SQLITE_OK;

	pthread_mutex_lock(&w->fault_lock);
	if (f->after > 0) {
		if (--f->after > 0)
			goto out;
	} else if (f->times > 0 && sql && strstr(sql, f->match)) {
		f->times--;
	} else {
		goto out;
	}
	f->hits++;
	code = f->code;
out:
	pthread_mutex_unlock(&w->fault_lock);
	return code;
}

/* Remembers why a statement failed (rc), for sql_err and the log. */
static int failed(struct store *st, int rc, const char *sql, int injected)
{
	st->errcode = rc;
	snprintf(st->errmsg, sizeof(st->errmsg), "%s%s (%.60s)", injected ? "injected: " : "",
		 injected ? sqlite3_errstr(rc) : sqlite3_errmsg(st->db), sql ? sql : "?");
	return rc;
}

/*
 * Every statement the store runs goes through here: it starts (or goes on
 * with) s, unless the fault hook fails it first. Returns SQLite's code.
 */
static int stmt_step(struct store *st, sqlite3_stmt *s)
{
	int rc;

	if (!s)
		return SQLITE_MISUSE;
	if (!sqlite3_stmt_busy(s) && (rc = fault_fires(st, sqlite3_sql(s))) != SQLITE_OK)
		return failed(st, rc, sqlite3_sql(s), 1);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		failed(st, rc, sqlite3_sql(s), 0);
	return rc;
}

static int exec(struct store *st, const char *sql)
{
	int rc = strcmp(sql, "ROLLBACK") ? fault_fires(st, sql) : SQLITE_OK;

	if (rc != SQLITE_OK)
		return sqlite_errno(failed(st, rc, sql, 1));
	rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
	return rc == SQLITE_OK ? 0 : sqlite_errno(failed(st, rc, sql, 0));
}

/*
 * Transactions: every change of more than one statement is
 * txn_begin ... txn_end(st, rc). BEGIN IMMEDIATE takes the write lock up
 * front, so a busy database fails the BEGIN, not a statement half-way.
 * txn_end commits when rc is 0 and rolls back otherwise, or when the
 * COMMIT fails; it returns rc, or the COMMIT's error. A transaction left
 * open by a failed ROLLBACK is rolled back by the next txn_begin, so one
 * failure never swallows the next change into a transaction that no one
 * commits.
 */
static int txn_begin(struct store *st)
{
	if (!sqlite3_get_autocommit(st->db)) {
		fprintf(stderr, "tlblabd: store: a transaction was left open; rolling it back\n");
		exec(st, "ROLLBACK");
	}
	return exec(st, "BEGIN IMMEDIATE");
}

static int txn_end(struct store *st, int rc)
{
	if (rc == 0)
		rc = exec(st, "COMMIT");
	if (rc < 0 && !sqlite3_get_autocommit(st->db) && exec(st, "ROLLBACK") < 0)
		fprintf(stderr, "tlblabd: store: rollback failed: %s\n", sqlite3_errmsg(st->db));
	return rc;
}

void store_fault_after(struct store *st, long n, int code)
{
	long hits;

	pthread_mutex_lock(&st->fault_lock);
	hits = st->fault.hits;
	memset(&st->fault, 0, sizeof(st->fault));
	st->fault.hits = n ? 0 : hits;
	st->fault.after = n;
	st->fault.code = code;
	pthread_mutex_unlock(&st->fault_lock);
}

void store_fault_match(struct store *st, const char *match, int times, int code)
{
	pthread_mutex_lock(&st->fault_lock);
	memset(&st->fault, 0, sizeof(st->fault));
	snprintf(st->fault.match, sizeof(st->fault.match), "%s", match ? match : "");
	st->fault.times = match && *match ? times : 0;
	st->fault.code = code;
	pthread_mutex_unlock(&st->fault_lock);
}

void store_busy_timeout(struct store *st, int ms)
{
	size_t i;

	lock(st);
	sqlite3_busy_timeout(st->db, ms);
	unlock(st);
	for (i = 0; i < st->nreaders; i++) {
		lock(st->readers[i]);
		sqlite3_busy_timeout(st->readers[i]->db, ms);
		unlock(st->readers[i]);
	}
}

long store_fault_hits(struct store *st)
{
	long n;

	pthread_mutex_lock(&st->fault_lock);
	n = st->fault.hits;
	pthread_mutex_unlock(&st->fault_lock);
	return n;
}

/*
 * A connection for a read of the last commit, locked: a free reader, else
 * one in turn (waiting for it), else the writer when there are none (an
 * in-memory store). Hand it back with unlock.
 */
static struct store *reader_get(struct store *st)
{
	unsigned start, i;
	struct store *r;

	if (!st->nreaders) {
		lock(st);
		return st;
	}
	start = atomic_fetch_add(&st->next_reader, 1);
	for (i = 0; i < st->nreaders; i++) {
		r = st->readers[(start + i) % st->nreaders];
		if (pthread_mutex_trylock(&r->lock) == 0)
			return r;
	}
	r = st->readers[start % st->nreaders];
	lock(r);
	return r;
}

int store_failed(int rc)
{
	return rc == -EIO || rc == -ENOSPC || rc == -EAGAIN;
}

const char *store_strerror(int rc)
{
	switch (rc) {
	case -EAGAIN: return "the database is locked by another writer";
	case -ENOSPC: return "the database or its disk is full";
	case -ENOENT: return "no such row";
	case -EBUSY: return "lost a race with another change";
	case -EALREADY: return "already finished";
	default: return "an SQLite error";
	}
}

static sqlite3_stmt *prep_once(struct store *st, const char *sql)
{
	sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
		failed(st, sqlite3_errcode(st->db), sql, 0);
		fprintf(stderr, "tlblabd: store: cannot prepare: %s: %s\n", sqlite3_errmsg(st->db), sql);
		return NULL;
	}
	return s;
}

static sqlite3_stmt *prep(struct store *st, const char *sql)
{
	size_t i;
	sqlite3_stmt *s;

	for (i = 0; i < st->ncache; i++)
		if (st->cache[i].sql == sql)
			return st->cache[i].s;
	s = prep_once(st, sql);
	if (s && st->ncache < STMT_CACHE) {
		st->cache[st->ncache].sql = sql;
		st->cache[st->ncache++].s = s;
	}
	return s;
}

/* A statement whose SQL was built at run time, kept by its text: the
 * same text reuses it. */
static sqlite3_stmt *prep_text(struct store *st, const char *sql)
{
	size_t i;
	sqlite3_stmt *s;
	char *text;

	for (i = 0; i < st->ncache; i++)
		if (st->cache[i].text && !strcmp(st->cache[i].text, sql))
			return st->cache[i].s;
	s = prep_once(st, sql);
	if (s && st->ncache < STMT_CACHE) {
		if (!(text = strdup(sql)))
			abort();
		st->cache[st->ncache].sql = text;
		st->cache[st->ncache].text = text;
		st->cache[st->ncache++].s = s;
	}
	return s;
}

/* Hands a statement back: cached ones are reset, others finalized. */
static void stmt_done(struct store *st, sqlite3_stmt *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < st->ncache; i++)
		if (st->cache[i].s == s) {
			sqlite3_reset(s);
			sqlite3_clear_bindings(s);
			return;
		}
	sqlite3_finalize(s);
}

static void bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, i);
}

static void bind_json(sqlite3_stmt *s, int i, const json_t *v)
{
	char *txt = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

	if (txt)
		sqlite3_bind_text(s, i, txt, -1, free);
	else
		sqlite3_bind_null(s, i);
}

/* Runs a statement that returns no rows; hands it back. */
static int step_done_st(struct store *st, sqlite3_stmt *s)
{
	int rc;

	if (!s)
		return -EIO;
	rc = stmt_step(st, s);
	stmt_done(st, s);
	return rc == SQLITE_DONE ? 0 : sqlite_errno(rc);
}
#define step_done(s) step_done_st(st, (s))

/* Steps a query of at most one row: 1 with a row (read it, then
 * stmt_done), 0 with none (handed back), or a negative errno (handed
 * back). For reads inside a transaction, where "no row" decides. */
static int step_row(struct store *st, sqlite3_stmt *s)
{
	int rc = s ? stmt_step(st, s) : SQLITE_ERROR;

	if (rc == SQLITE_ROW)
		return 1;
	stmt_done(st, s);
	return rc == SQLITE_DONE ? 0 : sqlite_errno(rc);
}

static json_t *col_json(sqlite3_stmt *s, int i)
{
	switch (sqlite3_column_type(s, i)) {
	case SQLITE_INTEGER: return json_integer(sqlite3_column_int64(s, i));
	case SQLITE_FLOAT: return json_real(sqlite3_column_double(s, i));
	case SQLITE_TEXT: return json_string((const char *)sqlite3_column_text(s, i));
	default: return json_null();
	}
}

/* A column holding JSON text, parsed (null if absent or unparsable). */
static json_t *col_parsed(sqlite3_stmt *s, int i)
{
	const char *t = (const char *)sqlite3_column_text(s, i);
	json_t *v;

	/* most jobs' machines and tags: no parser for them */
	if (t && !strcmp(t, "[]"))
		return json_array();
	v = t ? json_loads(t, JSON_DECODE_ANY, NULL) : NULL;
	return v ? v : json_null();
}

/*
 * The end of a read that builds JSON (store.h): rc is the last step's
 * code, SQLITE_DONE when every row was read. Otherwise what was built is
 * dropped: NULL with errno the store's error, never part of the rows.
 */
static json_t *read_end(json_t *doc, int rc)
{
	if (rc == SQLITE_DONE && doc)
		return doc;
	json_decref(doc);
	errno = rc == SQLITE_DONE ? EIO : -sqlite_errno(rc);
	return NULL;
}

static double now(void)
{
	return wall_now();
}

/* ---- open, migrate ---- */

#define SUBJECT_MIGRATION 6

/*
 * Migration 6 gave jobs a patch_subject: those with a patch text (pasted,
 * or fetched from a URL) get theirs from it, in the migration's
 * transaction. A fetched mbox without a subject keeps its URL.
 */
static int backfill_subjects(struct store *st)
{
	struct strbuf subj = STRBUF_INIT;
	sqlite3_stmt *s, *u;
	int rc = 0;

	s = prep_once(st, "SELECT id, patch_kind, patch FROM jobs WHERE kind = 'ab' AND patch IS NOT NULL "
		      "AND patch_kind IN ('patch', 'url')");
	while (s && rc == 0 && stmt_step(st, s) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(s, 1);
		enum patch_subject_kind k = patch_subject((const char *)sqlite3_column_text(s, 2),
							  (size_t)sqlite3_column_bytes(s, 2), &subj);

		if (k == PATCH_SUBJECT_NONE || (!strcmp(kind ? kind : "", "url") && k == PATCH_SUBJECT_FILES))
			continue;
		u = prep(st, "UPDATE jobs SET patch_subject = ?2 WHERE id = ?1");
		sqlite3_bind_int64(u, 1, sqlite3_column_int64(s, 0));
		bind_text(u, 2, subj.buf);
		rc = step_done(u);
	}
	if (s)
		sqlite3_finalize(s);
	strbuf_release(&subj);
	return s ? rc : -1;
}

static int migrate(struct store *st, struct strbuf *err)
{
	sqlite3_stmt *s;
	size_t i;
	int have = 0, rc;

	if (exec(st, "CREATE TABLE IF NOT EXISTS schema_migrations ("
		     "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied REAL NOT NULL)") < 0)
		return sql_err(st, err, "schema_migrations");
	s = prep(st, "SELECT coalesce(max(version), 0) FROM schema_migrations");
	if (s && stmt_step(st, s) == SQLITE_ROW)
		have = sqlite3_column_int(s, 0);
	stmt_done(st, s);
	for (i = 0; i < nmigrations; i++) {
		const struct migration *m = &migrations[i];

		if (m->version <= have)
			continue;
		rc = txn_begin(st);
		if (rc == 0)
			rc = exec(st, m->sql);
		if (rc == 0 && m->version == SUBJECT_MIGRATION)
			rc = backfill_subjects(st) < 0 ? -EIO : 0;
		if (rc == 0) {
			s = prep(st, "INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)");
			sqlite3_bind_int(s, 1, m->version);
			bind_text(s, 2, m->name);
			sqlite3_bind_double(s, 3, now());
			rc = step_done(s);
		}
		if (txn_end(st, rc) < 0) {
			sql_err(st, err, m->name);
			return -EIO;
		}
		have = m->version;
	}
	st->version = have;
	return 0;
}

/* Closes one connection and frees its store (a reader, or the writer once
 * its readers are gone). */
static void conn_close(struct store *st)
{
	size_t i;

	for (i = 0; i < st->ncache; i++) {
		sqlite3_finalize(st->cache[i].s);
		free(st->cache[i].text);
	}
	for (i = 0; i < COUNT_SLOTS; i++)
		free(st->counts[i].key);
	sqlite3_close(st->db);
	pthread_mutex_destroy(&st->lock);
	pthread_mutex_destroy(&st->fault_lock);
	pthread_mutex_destroy(&st->count_lock);
	free(st);
}

static struct store *conn_new(void)
{
	struct store *st = calloc(1, sizeof(*st));

	if (!st)
		abort();
	pthread_mutex_init(&st->lock, NULL);
	pthread_mutex_init(&st->fault_lock, NULL);
	pthread_mutex_init(&st->count_lock, NULL);
	return st;
}

/*
 * The read-only connections, opened once the schema is current. A store
 * with none (in memory, or none would open) reads on the writer, as
 * before; that is slower, never wrong.
 */
static void open_readers(struct store *st, const char *path)
{
	struct store *r;

	if (!*path || !strcmp(path, ":memory:"))
		return;
	while (st->nreaders < READERS) {
		r = conn_new();
		r->parent = st;
		if (sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
			fprintf(stderr, "tlblabd: store: %s: cannot open a reader: %s; reading on the writer\n",
				path, r->db ? sqlite3_errmsg(r->db) : "out of memory");
			conn_close(r);
			return;
		}
		sqlite3_busy_timeout(r->db, 10000);
		st->readers[st->nreaders++] = r;
	}
}

int store_open(const char *path, struct store **ret, struct strbuf *err)
{
	struct store *st = conn_new();
	int rc;

	rc = sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			     SQLITE_OPEN_FULLMUTEX, NULL);
	if (rc != SQLITE_OK) {
		strbuf_seterr(err, "store %s: %s", path, st->db ? sqlite3_errmsg(st->db) : "cannot open");
		goto fail;
	}
	sqlite3_busy_timeout(st->db, 10000);
	if (exec(st, "PRAGMA journal_mode=WAL") < 0 || exec(st, "PRAGMA foreign_keys=ON") < 0 ||
	    exec(st, "PRAGMA synchronous=NORMAL") < 0) {
		sql_err(st, err, path);
		goto fail;
	}
	if (migrate(st, err) < 0)
		goto fail;
	open_readers(st, path);
	*ret = st;
	return 0;
fail:
	conn_close(st);
	return -EIO;
}

void store_close(struct store *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->nreaders; i++)
		conn_close(st->readers[i]);
	conn_close(st);
}

int store_version(struct store *st)
{
	return st->version;
}

int64_t store_generation(struct store *st)
{
	int64_t g;

	/* the writer makes every change, so every change counts here; read
	 * under its lock, no change is half-committed */
	lock(st);
	g = sqlite3_total_changes64(st->db);
	unlock(st);
	return g;
}

/* ---- config sync, tokens ---- */

static json_t *string_list(char *const *v)
{
	json_t *a = json_array();

	for (; v && *v; v++)
		json_array_append_new(a, json_string(*v));
	return a;
}

int store_sync_machines(struct store *st, const struct lab_config *cfg, struct strbuf *err)
{
	size_t i;
	int rc = 0;

	lock(st);
	rc = txn_begin(st);
	if (rc == 0)
		rc = exec(st, "UPDATE machines SET in_config = 0");
	for (i = 0; rc == 0 && i < cfg->nmachines; i++) {
		const struct cfg_machine *m = &cfg->machines[i];
		sqlite3_stmt *s = prep(st,
			"INSERT INTO machines (name, transport, host, boot, arch, cpus, tags, in_config) "
			"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1) ON CONFLICT (name) DO UPDATE SET "
			"transport = ?2, host = ?3, boot = ?4, arch = ?5, cpus = ?6, tags = ?7, in_config = 1");
		json_t *tags = string_list(m->tags);

		bind_text(s, 1, m->name);
		bind_text(s, 2, transport_kind_name(m->ep.transport));
		bind_text(s, 3, m->ep.host);
		bind_text(s, 4, boot_method_name(m->boot));
		bind_text(s, 5, m->arch);
		sqlite3_bind_int(s, 6, m->cpus);
		bind_json(s, 7, tags);
		json_decref(tags);
		rc = step_done(s);
	}
	if (txn_end(st, rc) < 0)
		rc = sql_err(st, err, "sync machines");
	unlock(st);
	return rc;
}

static void sha256_hex(const char *s, char out[65])
{
	unsigned char md[32];
	unsigned int len = 0;
	int i;

	EVP_Digest(s, strlen(s), md, &len, EVP_sha256(), NULL);
	for (i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

int store_sync_tokens(struct store *st, char *const *tokens, struct strbuf *err)
{
	int rc = 0;

	lock(st);
	rc = txn_begin(st);
	if (rc == 0)
		rc = exec(st, "DELETE FROM tokens WHERE source = 'config'");
	for (; rc == 0 && tokens && *tokens; tokens++) {
		sqlite3_stmt *s = prep(st, "INSERT OR IGNORE INTO tokens (hash, source, created) VALUES (?, 'config', ?)");
		char hex[65];

		sha256_hex(*tokens, hex);
		bind_text(s, 1, hex);
		sqlite3_bind_double(s, 2, now());
		rc = step_done(s);
	}
	if (txn_end(st, rc) < 0)
		rc = sql_err(st, err, "sync tokens");
	unlock(st);
	return rc;
}

int store_token_valid(struct store *st, const char *token)
{
	sqlite3_stmt *s;
	char hex[65];
	int ok;

	if (!token || !*token)
		return 0;
	sha256_hex(token, hex);
	lock(st);
	s = prep(st, "SELECT 1 FROM tokens WHERE hash = ?");
	bind_text(s, 1, hex);
	ok = s && stmt_step(st, s) == SQLITE_ROW;
	stmt_done(st, s);
	unlock(st);
	return ok;
}

/* ---- jobs ---- */

int store_job_create(struct store *st, const struct job_request *req,
		     const struct stage_plan *stages, size_t nstages, int64_t *ret_id,
		     struct strbuf *err)
{
	sqlite3_stmt *s;
	int64_t id = 0;
	size_t i;
	int rc = 0;

	lock(st);
	if ((rc = txn_begin(st)) < 0)
		goto fail;
	s = prep(st, "INSERT INTO jobs (kind, suite, suite_json, machines, tags, submitter, boots, created, "
		     "tree, base, patch_kind, patch, patch_url, patch_ref, max_boots, patch_subject) "
		     "VALUES (?, ?, ?, coalesce(?, '[]'), coalesce(?, '[]'), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
	bind_text(s, 1, req->kind);
	bind_text(s, 2, req->suite);
	bind_json(s, 3, req->suite_json);
	bind_json(s, 4, req->machines);
	bind_json(s, 5, req->tags);
	bind_text(s, 6, req->submitter);
	sqlite3_bind_int(s, 7, req->boots);
	sqlite3_bind_double(s, 8, now());
	bind_text(s, 9, req->tree);
	bind_text(s, 10, req->base);
	bind_text(s, 11, req->patch_kind);
	bind_text(s, 12, req->patch);
	bind_text(s, 13, req->patch_url);
	bind_text(s, 14, req->patch_ref);
	sqlite3_bind_int(s, 15, req->max_boots > req->boots ? req->max_boots : req->boots);
	bind_text(s, 16, req->patch_subject);
	if ((rc = step_done(s)) < 0)
		goto fail;
	id = sqlite3_last_insert_rowid(st->db);
	for (i = 0; i < nstages; i++) {
		s = prep(st, "INSERT INTO stages (job_id, seq, kind, side, boot_index, timeout) VALUES (?, ?, ?, ?, ?, ?)");
		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_int(s, 2, (int)i);
		bind_text(s, 3, stages[i].kind);
		bind_text(s, 4, stages[i].side);
		sqlite3_bind_int(s, 5, stages[i].boot_index);
		sqlite3_bind_double(s, 6, stages[i].timeout);
		if ((rc = step_done(s)) < 0)
			goto fail;
	}
fail:
	if ((rc = txn_end(st, rc)) < 0)
		sql_err(st, err, "create job");
	else
		*ret_id = id;
	unlock(st);
	return rc;
}

/* the last column is the job's current stage: the running one, else the
 * last started, else the first */
#define JOB_COLS "id, kind, state, suite, machines, tags, submitter, boots, created, started, " \
	"finished, cancel_requested, error_class, error_message, error_stage, tree, base, " \
	"(SELECT kind FROM stages g WHERE g.job_id = jobs.id ORDER BY (g.state = 'running') DESC, " \
	"(g.started IS NOT NULL) DESC, CASE WHEN g.started IS NULL THEN g.seq ELSE -g.seq END LIMIT 1), " \
	"patch_kind, patch_url, patch_ref, max_boots, verdict, patch_subject"

static json_t *job_row(sqlite3_stmt *s)
{
	json_t *j = json_object();

	json_object_set_new(j, "id", col_json(s, 0));
	json_object_set_new(j, "kind", col_json(s, 1));
	json_object_set_new(j, "state", col_json(s, 2));
	json_object_set_new(j, "suite", col_json(s, 3));
	json_object_set_new(j, "machines", col_parsed(s, 4));
	json_object_set_new(j, "tags", col_parsed(s, 5));
	json_object_set_new(j, "submitter", col_json(s, 6));
	json_object_set_new(j, "boots", col_json(s, 7));
	json_object_set_new(j, "created", col_json(s, 8));
	json_object_set_new(j, "started", col_json(s, 9));
	json_object_set_new(j, "finished", col_json(s, 10));
	json_object_set_new(j, "cancel_requested", json_boolean(sqlite3_column_int(s, 11)));
	if (sqlite3_column_type(s, 12) != SQLITE_NULL)
		json_object_set_new(j, "error", json_pack("{s:o,s:o,s:o}", "class", col_json(s, 12),
							  "message", col_json(s, 13), "stage", col_json(s, 14)));
	else
		json_object_set_new(j, "error", json_null());
	json_object_set_new(j, "tree", col_json(s, 15));
	json_object_set_new(j, "base", col_json(s, 16));
	json_object_set_new(j, "stage", col_json(s, 17));
	json_object_set_new(j, "patch_kind", col_json(s, 18));
	json_object_set_new(j, "patch_url", col_json(s, 19));
	json_object_set_new(j, "patch_ref", col_json(s, 20));
	json_object_set_new(j, "max_boots", col_json(s, 21));
	json_object_set_new(j, "verdict", col_json(s, 22));
	json_object_set_new(j, "patch_subject", col_json(s, 23));
	return j;
}

json_t *store_job_json(struct store *w, int64_t id)
{
	struct store *st = reader_get(w);
	sqlite3_stmt *s, *js;
	json_t *job = NULL, *stages;
	int rc;

	/* js is handed back last: while it is open, its read transaction
	 * gives the stages the same commit as the job */
	js = prep(st, "SELECT " JOB_COLS " FROM jobs WHERE id = ?");
	sqlite3_bind_int64(js, 1, id);
	if ((rc = stmt_step(st, js)) == SQLITE_ROW)
		job = job_row(js);
	if (!job) {
		stmt_done(st, js);
		unlock(st);
		if (rc != SQLITE_DONE)
			return read_end(NULL, rc);
		errno = ENOENT;
		return NULL;
	}
	stages = json_array();
	s = prep(st, "SELECT id, seq, kind, side, state, machine, attempt, started, finished, "
		     "error_class, error_message, boot_index, build_id, boot_id, repeat_of, note, specs "
		     "FROM stages WHERE job_id = ? ORDER BY seq");
	sqlite3_bind_int64(s, 1, id);
	while ((rc = stmt_step(st, s)) == SQLITE_ROW) {
		json_t *g = json_object();
		static const char *const names[] = { "id", "seq", "kind", "side", "state", "machine",
						     "attempt", "started", "finished", "error_class",
						     "error_message", "boot_index", "build_id", "boot_id",
						     "repeat_of", "note", "specs" };
		int i;

		for (i = 0; i < (int)ARRAY_SIZE(names); i++)
			json_object_set_new(g, names[i], i == 16 ? col_parsed(s, i) : col_json(s, i));
		if (json_is_null(json_object_get(g, "specs")))
			json_object_set_new(g, "specs", json_array());
		json_array_append_new(stages, g);
	}
	stmt_done(st, s);
	stmt_done(st, js);
	json_object_set_new(job, "stages", stages);
	unlock(st);
	return read_end(job, rc);
}

/* The job list's totals for a filter, kept until the next change: the
 * count reads every matching job, the page only 50. */
static int count_get(struct store *w, const char *key, int64_t gen, int64_t *ret_total)
{
	size_t i;
	int found = 0;

	pthread_mutex_lock(&w->count_lock);
	for (i = 0; i < COUNT_SLOTS; i++)
		if (w->counts[i].key && w->counts[i].gen == gen && !strcmp(w->counts[i].key, key)) {
			*ret_total = w->counts[i].total;
			found = 1;
			break;
		}
	pthread_mutex_unlock(&w->count_lock);
	return found;
}

static void count_put(struct store *w, const char *key, int64_t gen, int64_t total)
{
	struct count_slot *c = NULL;
	size_t i;
	char *k = strdup(key);

	if (!k)
		abort();
	pthread_mutex_lock(&w->count_lock);
	for (i = 0; i < COUNT_SLOTS && !c; i++)
		if (w->counts[i].key && !strcmp(w->counts[i].key, key))
			c = &w->counts[i];
	if (!c)
		c = &w->counts[w->next_count++ % COUNT_SLOTS];
	free(c->key);
	c->key = k;
	c->gen = gen;
	c->total = total;
	pthread_mutex_unlock(&w->count_lock);
}

/* Column i as JSON text, as col_json would encode it (api.c's precision). */
static void col_text(struct strbuf *out, sqlite3_stmt *s, int i)
{
	switch (sqlite3_column_type(s, i)) {
	case SQLITE_INTEGER:
		strbuf_addf(out, "%lld", (long long)sqlite3_column_int64(s, i));
		break;
	case SQLITE_FLOAT:
		strbuf_add_json_real(out, sqlite3_column_double(s, i), 12);
		break;
	case SQLITE_TEXT:
		strbuf_add_json_string(out, (const char *)sqlite3_column_text(s, i),
				       (size_t)sqlite3_column_bytes(s, i));
		break;
	default:
		strbuf_addstr(out, "null");
	}
}

/* A column holding JSON text, as col_parsed would encode it. */
static void col_parsed_text(struct strbuf *out, sqlite3_stmt *s, int i)
{
	const char *t = (const char *)sqlite3_column_text(s, i);
	json_t *v;
	char *txt;

	if (t && !strcmp(t, "[]")) {
		strbuf_addstr(out, "[]");
		return;
	}
	v = t ? json_loads(t, JSON_DECODE_ANY, NULL) : NULL;
	txt = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(12)) : NULL;
	strbuf_addstr(out, txt ? txt : "null");
	free(txt);
	json_decref(v);
}

/* job_row, written as JSON text: the job list is the hottest read, and
 * building a document only to encode it took most of its time. */
static void job_row_text(struct strbuf *out, sqlite3_stmt *s)
{
	static const char *const keys[] = {
		"id", "kind", "state", "suite", "machines", "tags", "submitter", "boots", "created",
		"started", "finished", "cancel_requested", "error", NULL, NULL, "tree", "base",
		"stage", "patch_kind", "patch_url", "patch_ref", "max_boots", "verdict", "patch_subject",
	};
	int i;

	for (i = 0; i < (int)ARRAY_SIZE(keys); i++) {
		if (!keys[i])
			continue;
		strbuf_addstr(out, i ? ",\"" : "{\"");
		strbuf_addstr(out, keys[i]);
		strbuf_addstr(out, "\":");
		if (i == 4 || i == 5) {
			col_parsed_text(out, s, i);
		} else if (i == 11) {
			strbuf_addstr(out, sqlite3_column_int(s, i) ? "true" : "false");
		} else if (i == 12 && sqlite3_column_type(s, 12) != SQLITE_NULL) {
			strbuf_addstr(out, "{\"class\":");
			col_text(out, s, 12);
			strbuf_addstr(out, ",\"message\":");
			col_text(out, s, 13);
			strbuf_addstr(out, ",\"stage\":");
			col_text(out, s, 14);
			strbuf_addch(out, '}');
		} else {
			col_text(out, s, i);
		}
	}
	strbuf_addch(out, '}');
}

int store_jobs_text(struct store *w, const struct job_filter *f, struct strbuf *out)
{
	struct strbuf where = STRBUF_INIT, sql = STRBUF_INIT, key = STRBUF_INIT;
	const char *const fields[] = { f->state, f->suite, f->submitter, f->tree, f->verdict };
	const char *const conds[] = { "state", "suite", "submitter", "tree", "verdict" };
	const char *vals[ARRAY_SIZE(fields)];
	int nv = 0, i, n = 0, limit = f->limit > 0 ? f->limit : 50, offset = f->offset > 0 ? f->offset : 0;
	struct store *st;
	sqlite3_stmt *s;
	int64_t total = 0, gen;
	int rc = SQLITE_ROW;

	if (limit > 500)
		limit = 500;
	for (i = 0; i < (int)ARRAY_SIZE(fields); i++) {
		if (fields[i]) {
			strbuf_addf(&where, "%s %s = ?", nv ? " AND" : " WHERE", conds[i]);
			vals[nv++] = fields[i];
			strbuf_addf(&key, "%zu:%s;", strlen(fields[i]), fields[i]);
		} else {
			strbuf_addstr(&key, "-;");
		}
	}
	/* before the count: a change committed after it retires what we keep */
	gen = store_generation(w);
	st = reader_get(w);
	if (!count_get(w, key.buf, gen, &total)) {
		strbuf_addf(&sql, "SELECT count(*) FROM jobs%s", where.buf);
		s = prep_text(st, sql.buf);
		for (i = 0; i < nv; i++)
			bind_text(s, i + 1, vals[i]);
		if ((rc = stmt_step(st, s)) == SQLITE_ROW)
			total = sqlite3_column_int64(s, 0);
		stmt_done(st, s);
		if (rc == SQLITE_ROW)
			count_put(w, key.buf, gen, total);
	}
	if (rc == SQLITE_ROW) {
		strbuf_reset(&sql);
		strbuf_addf(&sql, "SELECT " JOB_COLS " FROM jobs%s ORDER BY id DESC LIMIT ? OFFSET ?",
			    where.buf);
		s = prep_text(st, sql.buf);
		for (i = 0; i < nv; i++)
			bind_text(s, i + 1, vals[i]);
		sqlite3_bind_int(s, nv + 1, limit);
		sqlite3_bind_int(s, nv + 2, offset);
		strbuf_addstr(out, "{\"jobs\":[");
		while ((rc = stmt_step(st, s)) == SQLITE_ROW) {
			if (n++)
				strbuf_addch(out, ',');
			job_row_text(out, s);
		}
		stmt_done(st, s);
		strbuf_addf(out, "],\"total\":%lld,\"limit\":%d,\"offset\":%d}", (long long)total, limit,
			    offset);
	}
	unlock(st);
	strbuf_release(&where);
	strbuf_release(&sql);
	strbuf_release(&key);
	if (rc == SQLITE_DONE)
		return 0;
	return sqlite_errno(rc == SQLITE_ROW ? SQLITE_ERROR : rc);
}

json_t *store_jobs_json(struct store *st, const struct job_filter *f)
{
	struct strbuf text = STRBUF_INIT;
	json_t *doc = NULL;
	int r = store_jobs_text(st, f, &text);

	if (r == 0 && !(doc = json_loadb(text.buf, text.len, 0, NULL)))
		r = -EIO;
	strbuf_release(&text);
	if (r < 0)
		errno = -r;
	return doc;
}

int store_comparison_get(struct store *st, int64_t job, const char *rules, struct strbuf *ret_doc)
{
	sqlite3_stmt *s;
	int found = 0;

	lock(st);
	s = prep(st, "SELECT doc FROM comparisons WHERE job_id = ? AND rules = ?");
	sqlite3_bind_int64(s, 1, job);
	bind_text(s, 2, rules);
	if (s && stmt_step(st, s) == SQLITE_ROW) {
		strbuf_reset(ret_doc);
		strbuf_add(ret_doc, sqlite3_column_text(s, 0), (size_t)sqlite3_column_bytes(s, 0));
		found = 1;
	}
	stmt_done(st, s);
	unlock(st);
	return found;
}

int store_comparison_put(struct store *st, int64_t job, const char *rules, const char *doc,
			 const char *verdict, double compute_ms)
{
	sqlite3_stmt *s;
	int rc;

	lock(st);
	if ((rc = txn_begin(st)) < 0)
		goto out;
	s = prep(st, "INSERT INTO comparisons (job_id, rules, doc, computed, compute_ms) "
		     "SELECT id, ?2, ?3, ?4, ?5 FROM jobs WHERE id = ?1 "
		     "AND state IN ('done', 'failed', 'cancelled') "
		     "ON CONFLICT (job_id) DO UPDATE SET rules = excluded.rules, doc = excluded.doc, "
		     "computed = excluded.computed, compute_ms = excluded.compute_ms");
	sqlite3_bind_int64(s, 1, job);
	bind_text(s, 2, rules);
	bind_text(s, 3, doc);
	sqlite3_bind_double(s, 4, now());
	sqlite3_bind_double(s, 5, compute_ms);
	rc = step_done(s);
	if (rc == 0 && !sqlite3_changes(st->db))
		rc = -ENOENT;
	/* a failed job's partial comparison is kept, but gives it no verdict */
	s = prep(st, "UPDATE jobs SET verdict = ?2 WHERE id = ?1 AND state = 'done'");
	sqlite3_bind_int64(s, 1, job);
	bind_text(s, 2, verdict);
	if (rc == 0)
		rc = step_done(s);
	else
		stmt_done(st, s);
	rc = txn_end(st, rc);
out:
	unlock(st);
	return rc;
}

int64_t store_job_without_verdict(struct store *st, int64_t below)
{
	sqlite3_stmt *s;
	int64_t id = 0;
	int rc;

	lock(st);
	s = prep(st, "SELECT id FROM jobs WHERE kind = 'ab' AND state = 'done' AND verdict IS NULL AND id < ? "
		     "ORDER BY id DESC LIMIT 1");
	sqlite3_bind_int64(s, 1, below);
	if ((rc = stmt_step(st, s)) == SQLITE_ROW)
		id = sqlite3_column_int64(s, 0);
	else if (rc != SQLITE_DONE)
		id = sqlite_errno(rc);
	stmt_done(st, s);
	unlock(st);
	return id;
}

/* The job's state into buf, and how many of its stages run: 0, -ENOENT,
 * or a store error. Caller holds the lock. */
static int job_state(struct store *st, int64_t id, char *buf, size_t len, int *ret_running)
{
	sqlite3_stmt *s = prep(st, "SELECT state, (SELECT count(*) FROM stages WHERE job_id = ?1 "
			       "AND state = 'running') FROM jobs WHERE id = ?1");
	int rc;

	sqlite3_bind_int64(s, 1, id);
	rc = step_row(st, s);
	if (rc <= 0)
		return rc < 0 ? rc : -ENOENT;
	snprintf(buf, len, "%s", (const char *)sqlite3_column_text(s, 0));
	*ret_running = sqlite3_column_int(s, 1);
	stmt_done(st, s);
	return 0;
}

static int finished_state(const char *state)
{
	return !strcmp(state, "done") || !strcmp(state, "failed") || !strcmp(state, "cancelled");
}

int store_job_cancel(struct store *st, int64_t id)
{
	char state[16];
	sqlite3_stmt *s;
	int rc, running = 0;

	lock(st);
	/* read inside the transaction: the scheduler may start a stage meanwhile */
	if ((rc = txn_begin(st)) < 0 || (rc = job_state(st, id, state, sizeof(state), &running)) < 0)
		goto out;
	if (finished_state(state)) {
		rc = -EALREADY;
		goto out;
	}
	s = prep(st, "UPDATE jobs SET cancel_requested = 1 WHERE id = ?");
	sqlite3_bind_int64(s, 1, id);
	if ((rc = step_done(s)) < 0)
		goto out;
	if (!running) {
		s = prep(st, "UPDATE stages SET state = 'cancelled', error_class = 'cancelled', "
			     "error_message = 'cancelled before it started', finished = ?2 "
			     "WHERE job_id = ?1 AND state = 'pending'");
		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_double(s, 2, now());
		if ((rc = step_done(s)) < 0)
			goto out;
		s = prep(st, "UPDATE jobs SET state = 'cancelled', finished = ?2, error_class = 'cancelled', "
			     "error_message = 'cancelled' WHERE id = ?1");
		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_double(s, 2, now());
		rc = step_done(s);
	}
out:
	/* -EALREADY and -ENOENT changed nothing: rolled back all the same */
	rc = txn_end(st, rc);
	unlock(st);
	return rc;
}

/* The first column of every row of sql, as ids. Caller holds the lock and
 * frees *ret (set on success only). 0 or a store error. */
static int query_ids(struct store *st, const char *sql, int64_t **ret, size_t *ret_n)
{
	sqlite3_stmt *s = prep(st, sql);
	int64_t *v = NULL;
	size_t n = 0, alloc = 0;
	int rc;

	while ((rc = s ? stmt_step(st, s) : SQLITE_ERROR) == SQLITE_ROW) {
		if (n == alloc) {
			alloc = alloc ? alloc * 2 : 8;
			v = realloc(v, alloc * sizeof(*v));
			if (!v)
				abort();
		}
		v[n++] = sqlite3_column_int64(s, 0);
	}
	stmt_done(st, s);
	if (rc != SQLITE_DONE) {
		free(v);
		return sqlite_errno(rc);
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int store_jobs_cancelling(struct store *st, int64_t **ret, size_t *ret_n)
{
	int rc;

	*ret = NULL;
	*ret_n = 0;
	lock(st);
	rc = query_ids(st, "SELECT id FROM jobs WHERE cancel_requested = 1 AND state IN ('queued', 'running')",
		       ret, ret_n);
	unlock(st);
	return rc;
}

/* ---- stages ---- */

void stage_info_release(struct stage_info *si)
{
	if (!si)
		return;
	json_decref(si->suite_json);
	json_decref(si->machines);
	json_decref(si->tags);
	json_decref(si->excluded);
	memset(si, 0, sizeof(*si));
}

void stage_infos_free(struct stage_info *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		stage_info_release(&v[i]);
	free(v);
}

int store_runnable_stages(struct store *st, struct stage_info **ret, size_t *ret_n)
{
	sqlite3_stmt *s;
	struct stage_info *v = NULL;
	size_t n = 0, alloc = 0;
	int rc;

	lock(st);
	s = prep(st,
		 "SELECT g.id, g.job_id, g.seq, g.attempt, coalesce(g.boot_index, 0), j.boots, g.kind, "
		 "coalesce(g.side, ''), j.suite, coalesce(g.timeout, 0), j.suite_json, j.machines, j.tags, "
		 "g.excluded, coalesce(g.error_message, ''), coalesce(j.tree, ''), coalesce(j.base, ''), "
		 "coalesce(j.patch_kind, ''), coalesce((SELECT b.build_id FROM stages b WHERE b.job_id = g.job_id "
		 "AND b.kind = 'build' AND b.side IS g.side AND b.build_id IS NOT NULL), ''), coalesce(g.note, '') "
		 "FROM stages g JOIN jobs j ON j.id = g.job_id "
		 "WHERE g.state = 'pending' AND j.state IN ('queued', 'running') AND j.cancel_requested = 0 "
		 "AND NOT EXISTS (SELECT 1 FROM stages e WHERE e.job_id = g.job_id AND e.seq < g.seq "
		 "AND e.state != 'done' AND NOT " KEPT_FAILURE("e") ") ORDER BY j.id, g.seq LIMIT 256");
	while ((rc = s ? stmt_step(st, s) : SQLITE_ERROR) == SQLITE_ROW) {
		struct stage_info *si;

		if (n == alloc) {
			alloc = alloc ? alloc * 2 : 8;
			v = realloc(v, alloc * sizeof(*v));
			if (!v)
				abort();
		}
		si = &v[n++];
		memset(si, 0, sizeof(*si));
		si->id = sqlite3_column_int64(s, 0);
		si->job_id = sqlite3_column_int64(s, 1);
		si->seq = sqlite3_column_int(s, 2);
		si->attempt = sqlite3_column_int(s, 3);
		si->boot_index = sqlite3_column_int(s, 4);
		si->boots = sqlite3_column_int(s, 5);
		snprintf(si->kind, sizeof(si->kind), "%s", (const char *)sqlite3_column_text(s, 6));
		snprintf(si->side, sizeof(si->side), "%s", (const char *)sqlite3_column_text(s, 7));
		snprintf(si->suite, sizeof(si->suite), "%s", (const char *)sqlite3_column_text(s, 8));
		si->timeout = sqlite3_column_double(s, 9);
		si->suite_json = col_parsed(s, 10);
		si->machines = col_parsed(s, 11);
		si->tags = col_parsed(s, 12);
		si->excluded = col_parsed(s, 13);
		snprintf(si->last_error, sizeof(si->last_error), "%s", (const char *)sqlite3_column_text(s, 14));
		snprintf(si->tree, sizeof(si->tree), "%s", (const char *)sqlite3_column_text(s, 15));
		snprintf(si->base, sizeof(si->base), "%s", (const char *)sqlite3_column_text(s, 16));
		snprintf(si->patch_kind, sizeof(si->patch_kind), "%s", (const char *)sqlite3_column_text(s, 17));
		snprintf(si->build_id, sizeof(si->build_id), "%s", (const char *)sqlite3_column_text(s, 18));
		snprintf(si->note, sizeof(si->note), "%s", (const char *)sqlite3_column_text(s, 19));
	}
	stmt_done(st, s);
	unlock(st);
	if (rc != SQLITE_DONE) {
		stage_infos_free(v, n);
		return sqlite_errno(rc);
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* Inside a transaction: a pending stage starts on `where`; its job runs. */
static int mark_running(struct store *st, int64_t stage_id, const char *where)
{
	sqlite3_stmt *s;
	int rc;

	s = prep(st, "UPDATE stages SET state = 'running', machine = ?2, started = ?3, finished = NULL, "
		     "error_class = NULL, error_message = NULL WHERE id = ?1 AND state = 'pending'");
	sqlite3_bind_int64(s, 1, stage_id);
	bind_text(s, 2, where);
	sqlite3_bind_double(s, 3, now());
	if ((rc = step_done(s)) < 0)
		return rc;
	if (sqlite3_changes(st->db) != 1)
		return -EBUSY;
	s = prep(st, "UPDATE jobs SET state = 'running', started = coalesce(started, ?2) "
		     "WHERE id = (SELECT job_id FROM stages WHERE id = ?1)");
	sqlite3_bind_int64(s, 1, stage_id);
	sqlite3_bind_double(s, 2, now());
	return step_done(s);
}

int store_stage_start(struct store *st, int64_t stage_id, const char *machine)
{
	sqlite3_stmt *s;
	int rc = 0;

	lock(st);
	if ((rc = txn_begin(st)) < 0)
		goto out;
	s = prep(st, "UPDATE machines SET lease_job = (SELECT job_id FROM stages WHERE id = ?1), "
		     "lease_stage = ?1, lease_since = ?3 WHERE name = ?2 AND lease_job IS NULL "
		     "AND health IN ('good', 'unknown') AND in_config = 1");
	sqlite3_bind_int64(s, 1, stage_id);
	bind_text(s, 2, machine);
	sqlite3_bind_double(s, 3, now());
	rc = step_done(s);
	if (rc == 0 && sqlite3_changes(st->db) != 1)
		rc = -EBUSY;
	if (rc == 0)
		rc = mark_running(st, stage_id, machine);
	rc = txn_end(st, rc);
out:
	unlock(st);
	return rc;
}

/* Runs an UPDATE whose parameters are ?1 = id and ?2 = text. */
static int update_id_text(struct store *st, const char *sql, int64_t id, const char *text)
{
	sqlite3_stmt *s;
	int rc;

	lock(st);
	s = prep(st, sql);
	sqlite3_bind_int64(s, 1, id);
	bind_text(s, 2, text);
	rc = step_done(s);
	unlock(st);
	return rc;
}

int store_stage_begin(struct store *st, int64_t stage_id, const char *where)
{
	int rc;

	lock(st);
	rc = txn_begin(st);
	if (rc == 0)
		rc = mark_running(st, stage_id, where);
	rc = txn_end(st, rc);
	unlock(st);
	return rc;
}

int store_stage_handoff(struct store *st, int64_t boot_stage, int64_t run_stage)
{
	sqlite3_stmt *s;
	int rc = 0;

	lock(st);
	if ((rc = txn_begin(st)) < 0)
		goto out;
	s = prep(st, "UPDATE stages SET state = 'done', finished = ?2 WHERE id = ?1 AND state = 'running'");
	sqlite3_bind_int64(s, 1, boot_stage);
	sqlite3_bind_double(s, 2, now());
	if ((rc = step_done(s)) < 0 || (rc = sqlite3_changes(st->db) != 1 ? -EBUSY : 0) < 0)
		goto out;
	s = prep(st, "UPDATE stages SET state = 'running', started = ?3, finished = NULL, error_class = NULL, "
		     "error_message = NULL, boot_id = (SELECT boot_id FROM stages WHERE id = ?2), "
		     "machine = (SELECT machine FROM stages WHERE id = ?2) WHERE id = ?1 AND state = 'pending'");
	sqlite3_bind_int64(s, 1, run_stage);
	sqlite3_bind_int64(s, 2, boot_stage);
	sqlite3_bind_double(s, 3, now());
	if ((rc = step_done(s)) < 0 || (rc = sqlite3_changes(st->db) != 1 ? -EBUSY : 0) < 0)
		goto out;
	s = prep(st, "UPDATE machines SET lease_stage = ?2 WHERE lease_stage = ?1");
	sqlite3_bind_int64(s, 1, boot_stage);
	sqlite3_bind_int64(s, 2, run_stage);
	rc = step_done(s);
out:
	rc = txn_end(st, rc);
	unlock(st);
	return rc;
}

int store_stage_set_ids(struct store *st, int64_t stage_id, const char *build_id, const char *boot_id)
{
	sqlite3_stmt *s;
	int rc;

	lock(st);
	s = prep(st, "UPDATE stages SET build_id = coalesce(?2, build_id), boot_id = coalesce(?3, boot_id) "
		     "WHERE id = ?1");
	sqlite3_bind_int64(s, 1, stage_id);
	bind_text(s, 2, build_id);
	bind_text(s, 3, boot_id);
	rc = step_done(s);
	unlock(st);
	return rc;
}

static int64_t stage_at(struct store *st, int64_t job_id, int seq)
{
	sqlite3_stmt *s;
	int64_t id = 0;
	int rc;

	lock(st);
	s = prep(st, "SELECT id FROM stages WHERE job_id = ? AND seq = ?");
	sqlite3_bind_int64(s, 1, job_id);
	sqlite3_bind_int(s, 2, seq);
	if ((rc = step_row(st, s)) > 0) {
		id = sqlite3_column_int64(s, 0);
		stmt_done(st, s);
	}
	unlock(st);
	return rc < 0 ? rc : id;
}

int64_t store_stage_next(struct store *st, int64_t job_id, int seq)
{
	return stage_at(st, job_id, seq + 1);
}

int64_t store_stage_prev(struct store *st, int64_t job_id, int seq)
{
	return seq > 0 ? stage_at(st, job_id, seq - 1) : 0;
}

int store_job_patch(struct store *st, int64_t job_id, struct strbuf *kind, struct strbuf *text,
		    struct strbuf *url, struct strbuf *ref)
{
	sqlite3_stmt *s;
	int rc = -ENOENT;

	lock(st);
	s = prep(st, "SELECT coalesce(patch_kind, ''), coalesce(patch, ''), coalesce(patch_url, ''), "
		     "coalesce(patch_ref, '') FROM jobs WHERE id = ?");
	sqlite3_bind_int64(s, 1, job_id);
	if (s && stmt_step(st, s) == SQLITE_ROW) {
		struct strbuf *outs[] = { kind, text, url, ref };
		int i;

		for (i = 0; i < 4; i++)
			if (outs[i])
				strbuf_add(outs[i], sqlite3_column_text(s, i), (size_t)sqlite3_column_bytes(s, i));
		rc = 0;
	}
	stmt_done(st, s);
	unlock(st);
	return rc;
}

int store_job_set_patch(struct store *st, int64_t job_id, const char *text)
{
	return update_id_text(st, "UPDATE jobs SET patch = ?2 WHERE id = ?1", job_id, text);
}

int store_job_set_patch_subject(struct store *st, int64_t job_id, const char *subject)
{
	return update_id_text(st, "UPDATE jobs SET patch_subject = ?2 WHERE id = ?1", job_id, subject);
}

int store_build_add(struct store *st, const struct build_row *b)
{
	sqlite3_stmt *s;
	int rc;

	lock(st);
	s = prep(st, "INSERT OR REPLACE INTO builds (id, tree, commit_id, config_hash, compiler, state, path, "
		     "created, duration, meta) VALUES (?, ?, ?, ?, ?, 'done', ?, ?, ?, ?)");
	bind_text(s, 1, b->id);
	bind_text(s, 2, b->tree);
	bind_text(s, 3, b->commit_id);
	bind_text(s, 4, b->config_hash);
	bind_text(s, 5, b->compiler);
	bind_text(s, 6, b->path);
	sqlite3_bind_double(s, 7, now());
	sqlite3_bind_double(s, 8, b->duration);
	bind_json(s, 9, b->meta);
	rc = step_done(s);
	unlock(st);
	return rc;
}

static int release_lease(struct store *st, int64_t stage_id)
{
	sqlite3_stmt *s = prep(st, "UPDATE machines SET lease_job = NULL, lease_stage = NULL, "
				   "lease_since = NULL WHERE lease_stage = ?");

	sqlite3_bind_int64(s, 1, stage_id);
	return step_done(s);
}

/*
 * Settling a job whose stages are all over. Runs that failed as a workload
 * were kept and (in an A/B job) their boot repeated once; what the job is
 * then depends on where the failures repeat:
 *  - a spec that failed in a boot and again in that boot's repeat on the
 *    base side: the suite is broken on this tree (class "suite"), whatever
 *    the patched side did; not a result of the patch;
 *  - such a repeated failure on the patched side only: a "workload" result
 *    of the patch;
 *  - failures that did not repeat: transient; the job is done.
 * A run job (no sides, no repeats) with a failed run fails as "workload".
 * The job keeps every run either way, so the specs that ran on both sides
 * are still compared. Inside a transaction; -EIO on a store error.
 */

struct spec_failure {
	char side[16];
	int seq, repeat_of;
	int64_t stage;
	long long spec;
	char message[700];
};

/* Appends one failure of spec `spec` of the stage in row s to the array. */
static void push_failure(struct spec_failure **v, size_t *n, size_t *cap, sqlite3_stmt *s, long long spec,
			 const char *message)
{
	struct spec_failure *f;

	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		*v = realloc(*v, *cap * sizeof(**v));
		if (!*v)
			abort();
	}
	f = &(*v)[(*n)++];
	f->stage = sqlite3_column_int64(s, 0);
	f->seq = sqlite3_column_int(s, 1);
	snprintf(f->side, sizeof(f->side), "%s", (const char *)sqlite3_column_text(s, 2));
	f->repeat_of = sqlite3_column_int(s, 3);
	f->spec = spec;
	snprintf(f->message, sizeof(f->message), "%s", message ? message : "");
}

/* The failed specs of the job's kept run failures, into a growing array
 * (a failure without spec outcomes counts as spec -1, the whole stage). */
static int load_spec_failures(struct store *st, int64_t job, struct spec_failure **ret, size_t *ret_n)
{
	sqlite3_stmt *s = prep(st, "SELECT id, seq, coalesce(side, ''), coalesce(repeat_of, -1), specs, "
				   "coalesce(error_message, '') FROM stages e WHERE job_id = ? AND "
				   KEPT_FAILURE("e") " ORDER BY seq");
	struct spec_failure *v = NULL;
	size_t n = 0, cap = 0;
	int rc;

	sqlite3_bind_int64(s, 1, job);
	while ((rc = s ? stmt_step(st, s) : SQLITE_ERROR) == SQLITE_ROW) {
		json_t *specs = col_parsed(s, 4), *e;
		size_t i, before = n;

		json_array_foreach(specs, i, e)
			if (!strcmp(json_string_value(json_object_get(e, "state")) ?: "", "failed"))
				push_failure(&v, &n, &cap, s, json_integer_value(json_object_get(e, "spec")),
					     json_string_value(json_object_get(e, "message")));
		if (n == before)
			push_failure(&v, &n, &cap, s, -1, (const char *)sqlite3_column_text(s, 5));
		json_decref(specs);
	}
	stmt_done(st, s);
	if (rc != SQLITE_DONE) {
		free(v);
		return sqlite_errno(rc);
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* The failure of a repeat whose original run failed the same spec on the
 * same side (any side when NULL), or NULL. */
static const struct spec_failure *repeated(const struct spec_failure *v, size_t n, const char *side)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		if (v[i].repeat_of < 0 || (side && strcmp(v[i].side, side)))
			continue;
		for (k = 0; k < n; k++)
			if (v[k].seq == v[i].repeat_of && v[k].spec == v[i].spec)
				return &v[i];
	}
	return NULL;
}

static int settle_job(struct store *st, int64_t job)
{
	struct spec_failure *v = NULL;
	const struct spec_failure *f;
	struct strbuf msg = STRBUF_INIT;
	const char *cls = NULL;
	sqlite3_stmt *s;
	int open = 0, rc = 0;
	size_t n = 0;
	int64_t stage = 0;

	s = prep(st, "SELECT count(*) FROM stages WHERE job_id = ? AND state IN ('pending', 'running')");
	sqlite3_bind_int64(s, 1, job);
	if ((rc = step_row(st, s)) <= 0)
		return rc < 0 ? rc : -EIO;
	open = sqlite3_column_int(s, 0);
	stmt_done(st, s);
	if (open)
		return 0;
	if ((rc = load_spec_failures(st, job, &v, &n)) < 0)
		return rc;
	if ((f = repeated(v, n, "base"))) {
		cls = "suite";
		strbuf_addf(&msg, "the suite fails on the base kernel too (not a result of the patch): "
			    "spec %lld failed in a base boot and again in its repeat: %s", f->spec, f->message);
	} else if ((f = repeated(v, n, "patched"))) {
		cls = "workload";
		strbuf_addf(&msg, "spec %lld failed on the patched kernel in a boot and again in its repeat "
			    "(a result of the patch): %s", f->spec, f->message);
	} else if (n && !v[0].side[0]) {
		f = &v[0];
		cls = "workload";
		strbuf_addstr(&msg, f->message);
	}
	if (cls) {
		stage = f->stage;
		s = prep(st, "UPDATE jobs SET state = 'failed', finished = ?2, error_class = ?3, "
			     "error_message = ?4, error_stage = ?5 WHERE id = ?1 AND state IN ('queued', 'running')");
	} else {
		s = prep(st, "UPDATE jobs SET state = 'done', finished = ?2 WHERE id = ?1 "
			     "AND state IN ('queued', 'running')");
	}
	sqlite3_bind_int64(s, 1, job);
	sqlite3_bind_double(s, 2, now());
	if (cls) {
		bind_text(s, 3, cls);
		bind_text(s, 4, msg.buf);
		sqlite3_bind_int64(s, 5, stage);
	}
	rc = step_done(s);
	free(v);
	strbuf_release(&msg);
	return rc;
}

/* Inside a transaction: a copy of the boot and run pair whose run failed,
 * right after it, unless that side or the base side already has a failure
 * that repeated (more boots would only fail again). 1 if added. */
static int add_repeat(struct store *st, int64_t run_stage)
{
	struct spec_failure *v = NULL;
	sqlite3_stmt *s;
	int64_t job = 0;
	int seq = 0, boot_index = 0, next = 0, rc = 0, is_repeat = 0, ab = 0;
	double boot_timeout = 600, run_timeout = 0;
	char side[16] = "";
	size_t n = 0;

	s = prep(st, "SELECT g.job_id, g.seq, coalesce(g.side, ''), coalesce(g.boot_index, 0), "
		     "g.repeat_of IS NOT NULL, coalesce(g.timeout, 0), j.kind = 'ab', "
		     "(SELECT coalesce(b.timeout, 600) FROM stages b WHERE b.job_id = g.job_id AND b.seq = g.seq - 1) "
		     "FROM stages g JOIN jobs j ON j.id = g.job_id WHERE g.id = ?");
	sqlite3_bind_int64(s, 1, run_stage);
	if ((rc = step_row(st, s)) < 0)
		return rc;
	if (rc) {
		job = sqlite3_column_int64(s, 0);
		seq = sqlite3_column_int(s, 1);
		snprintf(side, sizeof(side), "%s", (const char *)sqlite3_column_text(s, 2));
		boot_index = sqlite3_column_int(s, 3);
		is_repeat = sqlite3_column_int(s, 4);
		run_timeout = sqlite3_column_double(s, 5);
		ab = sqlite3_column_int(s, 6);
		boot_timeout = sqlite3_column_double(s, 7);
		stmt_done(st, s);
	}
	if (!job || !ab || is_repeat || !side[0])
		return 0;
	if ((rc = load_spec_failures(st, job, &v, &n)) < 0)
		return rc;
	/* a failure known to repeat, on this side or on the base side (the
	 * suite is broken then, whatever the patch does), would only repeat */
	if (repeated(v, n, side) || repeated(v, n, "base")) {
		free(v);
		return 0;
	}
	free(v);
	/* right after the failed run, so a failure that repeats is known
	 * before the side's later boots fail and would be repeated too */
	s = prep(st, "UPDATE stages SET seq = -seq WHERE job_id = ? AND seq > ?");
	sqlite3_bind_int64(s, 1, job);
	sqlite3_bind_int(s, 2, seq);
	rc = step_done(s);
	s = prep(st, "UPDATE stages SET seq = 2 - seq WHERE job_id = ? AND seq < 0");
	sqlite3_bind_int64(s, 1, job);
	if (rc == 0)
		rc = step_done(s);
	else
		stmt_done(st, s);
	next = seq + 1;
	for (int k = 0; k < 2 && rc == 0; k++) {
		s = prep(st, "INSERT INTO stages (job_id, seq, kind, side, boot_index, timeout, repeat_of) "
			     "VALUES (?, ?, ?, ?, ?, ?, ?)");
		sqlite3_bind_int64(s, 1, job);
		sqlite3_bind_int(s, 2, next + k);
		bind_text(s, 3, k ? "run" : "boot");
		bind_text(s, 4, side);
		sqlite3_bind_int(s, 5, boot_index);
		sqlite3_bind_double(s, 6, k ? run_timeout : boot_timeout);
		sqlite3_bind_int(s, 7, seq);
		rc = step_done(s);
	}
	return rc < 0 ? rc : 1;
}

/* Inside a transaction: the stage ends in state (class, message), its
 * machine released. Returns its job's id, -ENOENT when there is no such
 * stage, or a store error. */
static int64_t end_stage(struct store *st, int64_t stage_id, const char *state, const char *error_class,
			 const char *message)
{
	sqlite3_stmt *s = prep(st, "UPDATE stages SET state = ?2, error_class = ?3, error_message = ?4, "
				   "finished = ?5 WHERE id = ?1 RETURNING job_id");
	int64_t job = 0;
	int rc;

	sqlite3_bind_int64(s, 1, stage_id);
	bind_text(s, 2, state);
	bind_text(s, 3, error_class);
	bind_text(s, 4, message);
	sqlite3_bind_double(s, 5, now());
	rc = step_row(st, s);
	if (rc <= 0)
		return rc < 0 ? rc : -ENOENT;
	job = sqlite3_column_int64(s, 0);
	/* RETURNING: the change is made once the statement runs to its end */
	rc = stmt_step(st, s);
	stmt_done(st, s);
	if (rc != SQLITE_DONE)
		return sqlite_errno(rc);
	rc = release_lease(st, stage_id);
	return rc < 0 ? rc : job;
}

int store_run_failed(struct store *st, int64_t stage_id, const char *message, int *ret_repeated)
{
	int64_t job = 0;
	int rc, added = 0;

	lock(st);
	if ((rc = txn_begin(st)) < 0)
		goto out;
	job = end_stage(st, stage_id, "failed", "workload", message);
	rc = job < 0 ? (int)job : 0;
	if (rc == 0)
		rc = added = add_repeat(st, stage_id);
	if (rc >= 0)
		rc = settle_job(st, job);
	rc = txn_end(st, rc);
	if (rc == 0 && ret_repeated)
		*ret_repeated = added;
out:
	unlock(st);
	return rc;
}

int store_stage_set_specs(struct store *st, int64_t stage_id, const json_t *specs)
{
	char *text = json_dumps(specs, JSON_COMPACT);
	int rc = update_id_text(st, "UPDATE stages SET specs = ?2 WHERE id = ?1", stage_id, text);

	free(text);
	return rc;
}

int store_stage_set_note(struct store *st, int64_t stage_id, const char *note)
{
	return update_id_text(st, "UPDATE stages SET note = ?2 WHERE id = ?1", stage_id, note);
}

/* A stage of job ended failed or cancelled: the stages still pending are
 * cancelled and the job ends with the stage's class and message. Inside a
 * transaction. */
static int end_job(struct store *st, int64_t job, int64_t stage_id, const char *state,
		   const char *error_class, const char *message)
{
	sqlite3_stmt *s;
	int rc;

	s = prep(st, "UPDATE stages SET state = 'cancelled', error_class = 'cancelled', "
		     "error_message = 'an earlier stage did not finish', finished = ?2 "
		     "WHERE job_id = ?1 AND state = 'pending'");
	sqlite3_bind_int64(s, 1, job);
	sqlite3_bind_double(s, 2, now());
	if ((rc = step_done(s)) < 0)
		return rc;
	s = prep(st, "UPDATE jobs SET state = ?2, finished = ?3, error_class = ?4, error_message = ?5, "
		     "error_stage = ?6 WHERE id = ?1");
	sqlite3_bind_int64(s, 1, job);
	bind_text(s, 2, !strcmp(state, "cancelled") ? "cancelled" : "failed");
	sqlite3_bind_double(s, 3, now());
	bind_text(s, 4, error_class);
	bind_text(s, 5, message);
	sqlite3_bind_int64(s, 6, stage_id);
	return step_done(s);
}

int store_stage_finish(struct store *st, int64_t stage_id, const char *state,
		       const char *error_class, const char *message)
{
	int64_t job = 0;
	int rc;

	lock(st);
	if ((rc = txn_begin(st)) < 0)
		goto out;
	job = end_stage(st, stage_id, state, error_class, message);
	if (job < 0)
		rc = (int)job;
	else if (!strcmp(state, "done"))
		rc = settle_job(st, job);
	else
		rc = end_job(st, job, stage_id, state, error_class, message);
out:
	rc = txn_end(st, rc);
	unlock(st);
	return rc;
}

static int drop_stage_results(struct store *st, int64_t stage_id)
{
	static const char *const sql[] = { "DELETE FROM runs WHERE stage_id = ?",
					   "DELETE FROM samples WHERE stage_id = ?",
					   "DELETE FROM unavailable WHERE stage_id = ?" };
	sqlite3_stmt *s;
	size_t i;
	int rc = 0;

	for (i = 0; i < ARRAY_SIZE(sql) && rc == 0; i++) {
		s = prep(st, sql[i]);
		sqlite3_bind_int64(s, 1, stage_id);
		rc = step_done(s);
	}
	return rc;
}

int store_stage_retry(struct store *st, int64_t stage_id, const char *machine, const char *message)
{
	sqlite3_stmt *s;
	int64_t job;
	int attempt = -1, cancelling = 0, rc;

	lock(st);
	if ((rc = txn_begin(st)) < 0)
		goto out;
	s = prep(st, "SELECT g.attempt, j.cancel_requested, j.id FROM stages g JOIN jobs j ON j.id = g.job_id "
		     "WHERE g.id = ?");
	sqlite3_bind_int64(s, 1, stage_id);
	if ((rc = step_row(st, s)) <= 0) {
		rc = rc < 0 ? rc : -ENOENT;
		goto out;
	}
	attempt = sqlite3_column_int(s, 0);
	cancelling = sqlite3_column_int(s, 1);
	job = sqlite3_column_int64(s, 2);
	stmt_done(st, s);
	if (cancelling) {
		/* a cancelled job's stage ends here, whatever it failed of */
		job = end_stage(st, stage_id, "cancelled", "cancelled", "cancelled");
		rc = job < 0 ? (int)job : end_job(st, job, stage_id, "cancelled", "cancelled", "cancelled");
		goto out;
	}
	if (attempt + 1 >= STORE_MAX_ATTEMPTS) {
		rc = -EALREADY;
		goto out;
	}
	if ((rc = release_lease(st, stage_id)) < 0 || (rc = drop_stage_results(st, stage_id)) < 0)
		goto out;
	s = prep(st, "UPDATE stages SET state = 'pending', attempt = attempt + 1, machine = NULL, "
		     "started = NULL, error_class = 'infra', error_message = ?2, "
		     "excluded = CASE WHEN ?3 IS NULL THEN excluded ELSE json_insert(excluded, '$[#]', ?3) END, "
		     "log = log || ?4 WHERE id = ?1");
	sqlite3_bind_int64(s, 1, stage_id);
	bind_text(s, 2, message);
	bind_text(s, 3, machine);
	{
		char line[600];

		snprintf(line, sizeof(line), "\n== attempt %d failed on %s (infra): %.400s; retrying\n",
			 attempt + 1, machine ? machine : "?", message ? message : "");
		bind_text(s, 4, line);
	}
	rc = step_done(s);
out:
	rc = txn_end(st, rc);
	unlock(st);
	/* the stage ended cancelled, committed; the answer says so */
	return rc == 0 && cancelling ? -ECANCELED : rc;
}

int store_stage_append_log(struct store *st, int64_t stage_id, const char *text)
{
	/* a stage log is bounded: past 4 MiB only the tail is kept */
	return update_id_text(st, "UPDATE stages SET log = CASE WHEN length(log) > 4194304 "
			      "THEN '[...]' || substr(log, -2097152) || ?2 ELSE log || ?2 END WHERE id = ?1",
			      stage_id, text);
}

int store_stage_set_host(struct store *st, int64_t stage_id, const json_t *hello)
{
	char *text = json_dumps(hello, JSON_COMPACT);
	int rc = update_id_text(st, "UPDATE stages SET host = ?2 WHERE id = ?1", stage_id, text);

	free(text);
	return rc;
}

int store_stage_log(struct store *st, int64_t job_id, int64_t stage_id, struct strbuf *out)
{
	sqlite3_stmt *s;
	int rc = -ENOENT;

	lock(st);
	s = prep(st, "SELECT log FROM stages WHERE id = ? AND job_id = ?");
	sqlite3_bind_int64(s, 1, stage_id);
	sqlite3_bind_int64(s, 2, job_id);
	if ((rc = step_row(st, s)) == 1) {
		strbuf_add(out, sqlite3_column_text(s, 0), (size_t)sqlite3_column_bytes(s, 0));
		stmt_done(st, s);
		rc = 0;
	} else if (rc == 0) {
		rc = -ENOENT;
	}
	unlock(st);
	return rc;
}

int store_recover(struct store *st, struct strbuf *log)
{
	int64_t *ids = NULL;
	size_t n = 0, i;
	int rc;

	lock(st);
	rc = txn_begin(st);
	if (rc == 0)
		rc = query_ids(st, "SELECT id FROM stages WHERE state = 'running'", &ids, &n);
	if (rc == 0)
		rc = exec(st, "UPDATE machines SET health = 'unknown', health_reason = "
			  "'the daemon restarted while it ran a stage', health_changed = strftime('%s','now') "
			  "WHERE lease_job IS NOT NULL AND health != 'maintenance'");
	if (rc == 0)
		rc = exec(st, "UPDATE machines SET lease_job = NULL, lease_stage = NULL, lease_since = NULL");
	rc = txn_end(st, rc);
	unlock(st);
	for (i = 0; i < n && rc == 0; i++) {
		const char *msg = "interrupted: the daemon stopped during this stage";

		rc = store_stage_retry(st, ids[i], NULL, msg);
		if (rc == -ECANCELED) {
			strbuf_addf(log, "stage %lld: interrupted; its job was being cancelled: cancelled\n",
				    (long long)ids[i]);
			rc = 0;
		} else if (rc == -EALREADY) {
			rc = store_stage_finish(st, ids[i], "failed", "infra", msg);
			if (rc == 0)
				strbuf_addf(log, "stage %lld: interrupted on its last attempt; failed\n",
					    (long long)ids[i]);
		} else if (rc == 0) {
			strbuf_addf(log, "stage %lld: interrupted; queued again\n", (long long)ids[i]);
		}
		if (rc < 0)
			strbuf_addf(log, "stage %lld: interrupted; cannot queue it again: %s\n",
				    (long long)ids[i], store_strerror(rc));
	}
	free(ids);
	return rc;
}

/* ---- machines ---- */

int store_machine_health(struct store *st, const char *name, const char *health, const char *reason)
{
	sqlite3_stmt *s;
	int rc;

	lock(st);
	s = prep(st, "UPDATE machines SET health = ?2, health_reason = ?3, health_changed = ?4 WHERE name = ?1");
	bind_text(s, 1, name);
	bind_text(s, 2, health);
	bind_text(s, 3, reason);
	sqlite3_bind_double(s, 4, now());
	rc = step_done(s);
	unlock(st);
	return rc;
}

int store_machine_kernel(struct store *st, const char *name, const char *kernel, double booted)
{
	sqlite3_stmt *s;
	int rc;

	lock(st);
	s = prep(st, "UPDATE machines SET kernel = coalesce(?2, kernel), "
		     "last_boot = CASE WHEN ?3 > 0 THEN ?3 ELSE last_boot END WHERE name = ?1");
	bind_text(s, 1, name);
	bind_text(s, 2, kernel && *kernel ? kernel : NULL);
	sqlite3_bind_double(s, 3, booted);
	rc = step_done(s);
	unlock(st);
	return rc;
}

int store_machine_get_health(struct store *st, const char *name, char *buf, size_t len)
{
	sqlite3_stmt *s;
	int rc = -ENOENT;

	lock(st);
	s = prep(st, "SELECT health FROM machines WHERE name = ?");
	bind_text(s, 1, name);
	if (s && stmt_step(st, s) == SQLITE_ROW) {
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(s, 0));
		rc = 0;
	}
	stmt_done(st, s);
	unlock(st);
	return rc;
}

int store_failure_add(struct store *st, const char *machine, int64_t job, int64_t stage,
		      const char *cls, const char *message)
{
	sqlite3_stmt *s;
	int rc;

	lock(st);
	s = prep(st, "INSERT INTO failures (machine, job_id, stage_id, class, message, at) VALUES (?, ?, ?, ?, ?, ?)");
	bind_text(s, 1, machine);
	sqlite3_bind_int64(s, 2, job);
	sqlite3_bind_int64(s, 3, stage);
	bind_text(s, 4, cls);
	bind_text(s, 5, message);
	sqlite3_bind_double(s, 6, now());
	rc = step_done(s);
	unlock(st);
	return rc;
}

json_t *store_machines_json(struct store *st)
{
	sqlite3_stmt *s, *f;
	json_t *arr = json_array();
	int rc, frc = SQLITE_DONE;

	lock(st);
	s = prep(st, "SELECT name, transport, host, boot, arch, cpus, tags, health, health_reason, "
		     "lease_job, lease_stage, kernel, last_boot, health_changed FROM machines "
		     "WHERE in_config = 1 ORDER BY name");
	while ((rc = stmt_step(st, s)) == SQLITE_ROW) {
		json_t *m = json_object(), *fails = json_array();

		json_object_set_new(m, "name", col_json(s, 0));
		json_object_set_new(m, "transport", col_json(s, 1));
		json_object_set_new(m, "host", col_json(s, 2));
		json_object_set_new(m, "boot", col_json(s, 3));
		json_object_set_new(m, "arch", col_json(s, 4));
		json_object_set_new(m, "cpus", col_json(s, 5));
		json_object_set_new(m, "tags", col_parsed(s, 6));
		json_object_set_new(m, "health", col_json(s, 7));
		json_object_set_new(m, "health_reason", col_json(s, 8));
		json_object_set_new(m, "leased_by", col_json(s, 9));
		json_object_set_new(m, "stage", col_json(s, 10));
		json_object_set_new(m, "kernel", col_json(s, 11));
		json_object_set_new(m, "last_boot", col_json(s, 12));
		json_object_set_new(m, "health_changed", col_json(s, 13));
		f = prep(st, "SELECT job_id, stage_id, class, message, at FROM failures WHERE machine = ? "
			     "ORDER BY id DESC LIMIT 5");
		bind_text(f, 1, (const char *)sqlite3_column_text(s, 0));
		while ((frc = stmt_step(st, f)) == SQLITE_ROW)
			json_array_append_new(fails, json_pack("{s:o,s:o,s:o,s:o,s:o}", "job", col_json(f, 0),
							       "stage", col_json(f, 1), "class", col_json(f, 2),
							       "message", col_json(f, 3), "at", col_json(f, 4)));
		stmt_done(st, f);
		json_object_set_new(m, "recent_failures", fails);
		json_array_append_new(arr, m);
		if (frc != SQLITE_DONE) {
			rc = frc;
			break;
		}
	}
	stmt_done(st, s);
	unlock(st);
	if (rc != SQLITE_DONE)
		return read_end(arr, rc);
	return json_pack("{s:o}", "machines", arr);
}

json_t *store_health_json(struct store *st)
{
	sqlite3_stmt *s;
	json_t *jobs = json_pack("{s:i,s:i}", "queued", 0, "running", 0);
	json_t *mach = json_pack("{s:i,s:i,s:i,s:i}", "good", 0, "unknown", 0, "bad", 0, "maintenance", 0);
	int rc;

	lock(st);
	s = prep(st, "SELECT state, count(*) FROM jobs WHERE state IN ('queued', 'running') GROUP BY state");
	while ((rc = stmt_step(st, s)) == SQLITE_ROW)
		json_object_set_new(jobs, (const char *)sqlite3_column_text(s, 0), col_json(s, 1));
	stmt_done(st, s);
	if (rc == SQLITE_DONE) {
		s = prep(st, "SELECT health, count(*) FROM machines WHERE in_config = 1 GROUP BY health");
		while ((rc = stmt_step(st, s)) == SQLITE_ROW)
			json_object_set_new(mach, (const char *)sqlite3_column_text(s, 0), col_json(s, 1));
		stmt_done(st, s);
	}
	unlock(st);
	if (rc != SQLITE_DONE) {
		json_decref(jobs);
		return read_end(mach, rc);
	}
	return json_pack("{s:s,s:o,s:o,s:i}", "status", "ok", "jobs", jobs, "machines", mach,
			 "schema", st->version);
}

/* ---- results ---- */

int store_run_add(struct store *st, const struct run_row *r, const json_t *metrics,
		  const json_t *info, const json_t *profile, int64_t *ret_id)
{
	sqlite3_stmt *s;
	const char *name;
	json_t *v;
	int64_t id = 0;
	int rc;

	lock(st);
	if ((rc = txn_begin(st)) < 0)
		goto out;
	s = prep(st, "INSERT INTO runs (job_id, stage_id, machine, side, build_id, boot_id, spec_index, "
		     "case_index, iteration, warmup, workload, params, duration) "
		     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
	sqlite3_bind_int64(s, 1, r->job_id);
	sqlite3_bind_int64(s, 2, r->stage_id);
	bind_text(s, 3, r->machine);
	bind_text(s, 4, r->side);
	bind_text(s, 5, r->build_id);
	bind_text(s, 6, r->boot_id);
	sqlite3_bind_int(s, 7, r->spec_index);
	sqlite3_bind_int(s, 8, r->case_index);
	sqlite3_bind_int(s, 9, r->iteration);
	sqlite3_bind_int(s, 10, r->warmup);
	bind_text(s, 11, r->workload);
	bind_json(s, 12, r->params);
	sqlite3_bind_double(s, 13, r->duration);
	if ((rc = step_done(s)) < 0)
		goto out;
	id = sqlite3_last_insert_rowid(st->db);
	rc = -EIO;
	s = prep(st, "INSERT OR REPLACE INTO metrics (run_id, name, value) VALUES (?, ?, ?)");
	if (!s)
		goto out;
	json_object_foreach((json_t *)metrics, name, v) {
		if (!json_is_number(v))
			continue;
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
		sqlite3_bind_double(s, 3, json_number_value(v));
		if ((rc = stmt_step(st, s)) != SQLITE_DONE) {
			stmt_done(st, s);
			rc = sqlite_errno(rc);
			goto out;
		}
	}
	stmt_done(st, s);
	rc = -EIO;
	s = prep(st, "INSERT INTO metric_info (name, unit, direction) VALUES (?1, ?2, ?3) "
		     "ON CONFLICT (name) DO UPDATE SET unit = ?2, direction = ?3 "
		     "WHERE unit IS NOT ?2 OR direction IS NOT ?3");
	if (!s)
		goto out;
	json_object_foreach((json_t *)info, name, v) {
		const char *dir = json_string_value(json_object_get(v, "direction"));

		if (!dir || (strcmp(dir, "higher") && strcmp(dir, "lower") && strcmp(dir, "neutral")))
			dir = "neutral";
		sqlite3_reset(s);
		sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
		bind_text(s, 2, json_string_value(json_object_get(v, "unit")));
		bind_text(s, 3, dir);
		if ((rc = stmt_step(st, s)) != SQLITE_DONE) {
			stmt_done(st, s);
			rc = sqlite_errno(rc);
			goto out;
		}
	}
	stmt_done(st, s);
	rc = 0;
	if (profile) {
		s = prep(st, "INSERT INTO profiles (run_id, profile) VALUES (?, ?)");
		sqlite3_bind_int64(s, 1, id);
		bind_json(s, 2, profile);
		rc = step_done(s);
	}
out:
	rc = txn_end(st, rc);
	if (rc == 0 && ret_id)
		*ret_id = id;
	unlock(st);
	return rc;
}

int store_sample_add(struct store *st, int64_t stage_id, int spec_index, const json_t *sample)
{
	sqlite3_stmt *s;
	int rc;

	lock(st);
	s = prep(st, "INSERT INTO samples (stage_id, spec_index, case_index, iteration, warmup, in_window, "
		     "t, dt, vals) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
	sqlite3_bind_int64(s, 1, stage_id);
	sqlite3_bind_int(s, 2, spec_index);
	sqlite3_bind_int64(s, 3, json_integer_value(json_object_get(sample, "case")));
	sqlite3_bind_int64(s, 4, json_integer_value(json_object_get(sample, "iteration")));
	sqlite3_bind_int(s, 5, json_is_true(json_object_get(sample, "warmup")));
	sqlite3_bind_int(s, 6, json_is_true(json_object_get(sample, "window")));
	sqlite3_bind_double(s, 7, json_number_value(json_object_get(sample, "t")));
	sqlite3_bind_double(s, 8, json_number_value(json_object_get(sample, "dt")));
	bind_json(s, 9, json_object_get(sample, "values"));
	rc = step_done(s);
	unlock(st);
	return rc;
}

int store_unavailable_add(struct store *st, int64_t stage_id, const json_t *unavailable)
{
	sqlite3_stmt *s;
	const char *name;
	json_t *v;
	int rc = 0;

	lock(st);
	rc = txn_begin(st);
	s = prep(st, "INSERT OR REPLACE INTO unavailable (stage_id, name, reason) VALUES (?, ?, ?)");
	json_object_foreach((json_t *)unavailable, name, v) {
		int r;

		if (rc < 0)
			break;
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, stage_id);
		sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
		bind_text(s, 3, json_string_value(v));
		if ((r = stmt_step(st, s)) != SQLITE_DONE)
			rc = sqlite_errno(r);
	}
	stmt_done(st, s);
	rc = txn_end(st, rc);
	unlock(st);
	return rc;
}

/*
 * Runs of a spec that failed in their stage are marked with the failure:
 * what they measured before it stays in the store, but a spec cut short
 * does not count as a sample of its side.
 */
static void mark_failed_runs(const json_t *job, json_t *runs)
{
	json_t *stage, *e, *run;
	size_t i, k;

	json_array_foreach(runs, i, run)
		json_object_set_new(run, "error", json_null());
	json_array_foreach(json_object_get(job, "stages"), i, stage) {
		json_int_t sid = json_integer_value(json_object_get(stage, "id"));

		json_array_foreach(json_object_get(stage, "specs"), k, e) {
			json_int_t spec = json_integer_value(json_object_get(e, "spec"));
			const char *state = json_string_value(json_object_get(e, "state"));
			size_t r;

			if (!state || !strcmp(state, "done"))
				continue;
			json_array_foreach(runs, r, run)
				if (json_integer_value(json_object_get(run, "stage")) == sid &&
				    json_integer_value(json_object_get(run, "spec")) == spec)
					json_object_set_new(run, "error",
							    json_string(json_string_value(json_object_get(e, "message")) ?:
									state));
		}
	}
}

json_t *store_runs_json(struct store *st, int64_t job_id)
{
	sqlite3_stmt *s;
	json_t *arr = json_array(), *job;
	static const char *const names[] = { "id", "stage", "machine", "side", "spec", "case",
					     "iteration", "warmup", "workload", "params", "duration_s",
					     "build_id", "boot_id" };
	int rc;

	lock(st);
	s = prep(st, "SELECT id, stage_id, machine, side, spec_index, case_index, iteration, warmup, "
		     "workload, params, duration, build_id, boot_id FROM runs WHERE job_id = ? ORDER BY id");
	sqlite3_bind_int64(s, 1, job_id);
	while ((rc = stmt_step(st, s)) == SQLITE_ROW) {
		json_t *r = json_object();
		int i;

		for (i = 0; i < (int)ARRAY_SIZE(names); i++)
			json_object_set_new(r, names[i], i == 9 ? col_parsed(s, i) :
					    i == 7 ? json_boolean(sqlite3_column_int(s, i)) : col_json(s, i));
		json_array_append_new(arr, r);
	}
	stmt_done(st, s);
	unlock(st);
	if (rc != SQLITE_DONE)
		return read_end(arr, rc);
	job = store_job_json(st, job_id);
	/* without its stages, the runs of failed specs would pass as samples */
	if (!job && errno != ENOENT) {
		json_decref(arr);
		return NULL;
	}
	mark_failed_runs(job, arr);
	json_decref(job);
	return json_pack("{s:o}", "runs", arr);
}

/* {"base": {METRIC: reason}, "patched": {...}, "": {...}}: the counters each
 * side's kernels lack, with the reason the agent gave. */
static json_t *unavailable_by_side(struct store *st, int64_t job_id)
{
	sqlite3_stmt *s;
	json_t *by = json_object();
	int rc;

	lock(st);
	s = prep(st, "SELECT coalesce(g.side, ''), u.name, coalesce(u.reason, '') FROM unavailable u "
		     "JOIN stages g ON g.id = u.stage_id WHERE g.job_id = ? ORDER BY g.seq");
	sqlite3_bind_int64(s, 1, job_id);
	while ((rc = stmt_step(st, s)) == SQLITE_ROW) {
		const char *side = (const char *)sqlite3_column_text(s, 0);
		json_t *m = json_object_get(by, side);

		if (!m) {
			m = json_object();
			json_object_set_new(by, side, m);
		}
		json_object_set_new(m, (const char *)sqlite3_column_text(s, 1), col_json(s, 2));
	}
	stmt_done(st, s);
	unlock(st);
	return read_end(by, rc);
}

/* The specs that failed in a run stage, whether or not they measured
 * anything before: [{"side", "spec", "workload", "stage", "reason"}]. */
static json_t *failed_specs(const json_t *job)
{
	json_t *out = json_array(), *stage, *e;
	size_t i, k;

	json_array_foreach(json_object_get(job, "stages"), i, stage)
		json_array_foreach(json_object_get(stage, "specs"), k, e) {
			if (strcmp(json_string_value(json_object_get(e, "state")) ?: "", "failed"))
				continue;
			json_array_append_new(out, json_pack("{s:s,s:O,s:O,s:O,s:s}", "side",
							     json_string_value(json_object_get(stage, "side")) ?: "",
							     "spec", json_object_get(e, "spec"),
							     "workload", json_object_get(e, "workload"),
							     "stage", json_object_get(stage, "seq"),
							     "reason", json_string_value(json_object_get(e, "message")) ?: "failed"));
		}
	return out;
}

/* The job's sequential design, for the comparison's alpha spending: the
 * boots of its first look, the most it may have, and which look this is
 * (2 once boots were added). */
static json_t *job_design(struct store *st, int64_t job_id)
{
	sqlite3_stmt *s;
	json_t *d = NULL;
	int rc;

	lock(st);
	s = prep(st, "SELECT coalesce(first_boots, boots), coalesce(max_boots, boots), "
		     "first_boots IS NOT NULL FROM jobs WHERE id = ?");
	sqlite3_bind_int64(s, 1, job_id);
	if ((rc = stmt_step(st, s)) == SQLITE_ROW)
		d = json_pack("{s:i,s:i,s:i}", "boots", sqlite3_column_int(s, 0),
			      "max_boots", sqlite3_column_int(s, 1), "look", sqlite3_column_int(s, 2) ? 2 : 1);
	stmt_done(st, s);
	unlock(st);
	return rc == SQLITE_ROW ? d : read_end(json_null(), rc);
}

json_t *store_compare_doc(struct store *st, int64_t job_id)
{
	json_t *job = store_job_json(st, job_id), *runs = NULL, *metrics = NULL, *profiles = NULL;
	json_t *builds = NULL, *unavailable = NULL, *design = NULL, *doc = NULL;
	int err;

	if (!job)
		return NULL;
	/* each part whole, or no document: a comparison of part of the runs
	 * would be a wrong verdict, not a missing one */
	if (!(runs = store_runs_json(st, job_id)) || !(metrics = store_metrics_json(st, job_id, NULL, 1)) ||
	    !(profiles = store_profiles_json(st, job_id)) || !(builds = store_job_builds_json(st, job_id)) ||
	    !(unavailable = unavailable_by_side(st, job_id)) || !(design = job_design(st, job_id))) {
		err = errno == ENOENT ? EIO : errno;
		json_decref(job);
		goto out;
	}
	doc = json_pack("{s:O,s:O,s:O,s:{s:o,s:O},s:O,s:o,s:O}", "runs", json_object_get(runs, "runs"),
			"metrics", json_object_get(metrics, "metrics"),
			"profiles", json_object_get(profiles, "profiles"),
			"provenance", "job", job, "builds", json_object_get(builds, "builds"),
			"unavailable_by_side", unavailable, "failed", failed_specs(job),
			"design", design);
	err = 0;
out:
	json_decref(runs);
	json_decref(metrics);
	json_decref(profiles);
	json_decref(builds);
	json_decref(unavailable);
	json_decref(design);
	if (!doc)
		errno = err;
	return doc;
}

int store_job_add_boots(struct store *st, int64_t job_id, int more, double boot_timeout,
			double run_timeout)
{
	static const char *const sides[] = { "base", "patched" };
	sqlite3_stmt *s;
	int boots = 0, max = 0, seq = 0, added = 0, i, k, rc = 0;

	lock(st);
	s = prep(st, "SELECT boots, coalesce(max_boots, boots), (SELECT max(seq) FROM stages WHERE job_id = ?1) "
		     "FROM jobs WHERE id = ?1 AND kind = 'ab'");
	sqlite3_bind_int64(s, 1, job_id);
	if ((rc = step_row(st, s)) <= 0) {
		rc = rc < 0 ? rc : -ENOENT;
		goto out;
	}
	boots = sqlite3_column_int(s, 0);
	max = sqlite3_column_int(s, 1);
	seq = sqlite3_column_int(s, 2) + 1;
	stmt_done(st, s);
	rc = 0;
	if (boots >= max)
		goto out;
	if (more > max - boots)
		more = max - boots;
	rc = txn_begin(st);
	for (i = 0; i < more && rc == 0; i++)
		for (k = 0; k < 4 && rc == 0; k++) {
			s = prep(st, "INSERT INTO stages (job_id, seq, kind, side, boot_index, timeout) VALUES (?, ?, ?, ?, ?, ?)");
			sqlite3_bind_int64(s, 1, job_id);
			sqlite3_bind_int(s, 2, seq++);
			bind_text(s, 3, k % 2 ? "run" : "boot");
			bind_text(s, 4, sides[k / 2]);
			sqlite3_bind_int(s, 5, boots + i);
			sqlite3_bind_double(s, 6, k % 2 ? run_timeout : boot_timeout);
			rc = step_done(s);
		}
	s = prep(st, "UPDATE jobs SET first_boots = coalesce(first_boots, boots), boots = boots + ?2 "
		     "WHERE id = ?1");
	sqlite3_bind_int64(s, 1, job_id);
	sqlite3_bind_int(s, 2, more);
	if (rc == 0)
		rc = step_done(s);
	else
		stmt_done(st, s);
	rc = txn_end(st, rc);
	if (rc == 0)
		added = more;
out:
	unlock(st);
	return rc < 0 ? rc : added;
}

json_t *store_profiles_json(struct store *st, int64_t job_id)
{
	sqlite3_stmt *s;
	json_t *arr = json_array();
	int rc;

	lock(st);
	s = prep(st, "SELECT p.run_id, p.profile FROM profiles p JOIN runs r ON r.id = p.run_id "
		     "WHERE r.job_id = ? AND r.warmup = 0 ORDER BY p.run_id");
	sqlite3_bind_int64(s, 1, job_id);
	while ((rc = stmt_step(st, s)) == SQLITE_ROW)
		json_array_append_new(arr, json_pack("{s:o,s:o}", "run", col_json(s, 0), "profile", col_parsed(s, 1)));
	stmt_done(st, s);
	unlock(st);
	if (rc != SQLITE_DONE)
		return read_end(arr, rc);
	return json_pack("{s:o}", "profiles", arr);
}

json_t *store_job_builds_json(struct store *st, int64_t job_id)
{
	sqlite3_stmt *s;
	json_t *arr = json_array();
	int rc;

	lock(st);
	s = prep(st, "SELECT g.side, b.id, b.commit_id, b.config_hash, b.compiler, b.duration, b.meta "
		     "FROM stages g JOIN builds b ON b.id = g.build_id WHERE g.job_id = ? AND g.kind = 'build' "
		     "ORDER BY g.seq");
	sqlite3_bind_int64(s, 1, job_id);
	while ((rc = stmt_step(st, s)) == SQLITE_ROW)
		json_array_append_new(arr, json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "side", col_json(s, 0),
						     "build_id", col_json(s, 1), "commit", col_json(s, 2),
						     "config_hash", col_json(s, 3), "compiler", col_json(s, 4),
						     "duration_s", col_json(s, 5), "meta", col_parsed(s, 6)));
	stmt_done(st, s);
	unlock(st);
	if (rc != SQLITE_DONE)
		return read_end(arr, rc);
	return json_pack("{s:o}", "builds", arr);
}

json_t *store_metrics_json(struct store *st, int64_t job_id, const char *prefix, int include_warmup)
{
	sqlite3_stmt *s;
	json_t *arr = json_array();
	int rc;

	lock(st);
	s = prep(st, "SELECT m.run_id, m.name, m.value, i.unit, coalesce(i.direction, 'neutral') "
		     "FROM runs r JOIN metrics m ON m.run_id = r.id LEFT JOIN metric_info i ON i.name = m.name "
		     "WHERE r.job_id = ?1 AND (?2 OR r.warmup = 0) AND (?3 IS NULL OR substr(m.name, 1, length(?3)) = ?3) "
		     "ORDER BY m.run_id, m.name");
	sqlite3_bind_int64(s, 1, job_id);
	sqlite3_bind_int(s, 2, include_warmup);
	bind_text(s, 3, prefix);
	while ((rc = stmt_step(st, s)) == SQLITE_ROW)
		json_array_append_new(arr, json_pack("{s:o,s:o,s:o,s:o,s:o}", "run", col_json(s, 0),
						     "name", col_json(s, 1), "value", col_json(s, 2),
						     "unit", col_json(s, 3), "direction", col_json(s, 4)));
	stmt_done(st, s);
	unlock(st);
	if (rc != SQLITE_DONE)
		return read_end(arr, rc);
	return json_pack("{s:o}", "metrics", arr);
}

/* One sample row, copied out of the store so that JSON is built unlocked. */
struct sample_row {
	int64_t id, stage, spec, kase, iteration;
	double t, dt;
	int warmup, window;
	char *vals;		/* JSON text, or NULL */
};

json_t *store_samples_json(struct store *st, int64_t job_id, int64_t stage_id, const char *name,
			   int64_t after, int limit)
{
	struct sample_row *rows = calloc((size_t)limit + 1, sizeof(*rows));
	json_t *arr = json_array(), *next = json_null();
	sqlite3_stmt *s;
	int i, n = 0, rc = SQLITE_DONE;

	if (!rows)
		abort();
	lock(st);
	s = prep(st, "SELECT p.id, p.stage_id, p.t, p.dt, p.spec_index, p.case_index, p.iteration, p.warmup, "
		     "p.in_window, CASE WHEN ?3 IS NULL THEN p.vals ELSE "
		     "json_object(?3, json_extract(p.vals, '$.\"' || ?3 || '\"')) END "
		     "FROM samples p JOIN stages g ON g.id = p.stage_id "
		     "WHERE g.job_id = ?1 AND (?2 = 0 OR p.stage_id = ?2) AND p.id > ?4 "
		     "ORDER BY p.id LIMIT ?5");
	sqlite3_bind_int64(s, 1, job_id);
	sqlite3_bind_int64(s, 2, stage_id);
	bind_text(s, 3, name);
	sqlite3_bind_int64(s, 4, after);
	sqlite3_bind_int(s, 5, limit + 1);	/* one more: whether there is a next page */
	while (n <= limit && (rc = stmt_step(st, s)) == SQLITE_ROW) {
		struct sample_row *r = &rows[n++];
		const char *v = (const char *)sqlite3_column_text(s, 9);

		r->id = sqlite3_column_int64(s, 0);
		r->stage = sqlite3_column_int64(s, 1);
		r->t = sqlite3_column_double(s, 2);
		r->dt = sqlite3_column_double(s, 3);
		r->spec = sqlite3_column_int64(s, 4);
		r->kase = sqlite3_column_int64(s, 5);
		r->iteration = sqlite3_column_int64(s, 6);
		r->warmup = sqlite3_column_int(s, 7);
		r->window = sqlite3_column_int(s, 8);
		if (v && !(r->vals = strdup(v)))
			abort();
	}
	stmt_done(st, s);
	unlock(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		for (i = 0; i < n; i++)
			free(rows[i].vals);
		free(rows);
		json_decref(next);
		return read_end(arr, rc);
	}
	if (n > limit) {
		n = limit;
		json_decref(next);
		next = json_integer(rows[n - 1].id);
	}
	for (i = 0; i < n; i++) {
		json_t *v = rows[i].vals ? json_loads(rows[i].vals, JSON_DECODE_ANY, NULL) : NULL;

		json_array_append_new(arr, json_pack("{s:I,s:f,s:f,s:I,s:I,s:I,s:b,s:b,s:o}",
						     "stage", (json_int_t)rows[i].stage, "t", rows[i].t,
						     "dt", rows[i].dt, "spec", (json_int_t)rows[i].spec,
						     "case", (json_int_t)rows[i].kase,
						     "iteration", (json_int_t)rows[i].iteration,
						     "warmup", rows[i].warmup, "window", rows[i].window,
						     "values", v ? v : json_null()));
	}
	for (i = 0; i <= limit; i++)
		free(rows[i].vals);
	free(rows);
	return json_pack("{s:o,s:o}", "samples", arr, "next", next);
}

/* ---- what a token has queued ---- */

int store_job_set_token(struct store *st, int64_t job_id, const char *token)
{
	sqlite3_stmt *s;
	char hex[65];
	int ok;

	sha256_hex(token, hex);
	lock(st);
	s = prep(st, "UPDATE jobs SET token_hash = ? WHERE id = ?");
	bind_text(s, 1, hex);
	sqlite3_bind_int64(s, 2, job_id);
	ok = s && stmt_step(st, s) == SQLITE_DONE;
	stmt_done(st, s);
	unlock(st);
	return ok ? 0 : -1;
}

int store_token_work(struct store *st, const char *token, int *ret_jobs, int *ret_boots)
{
	sqlite3_stmt *s;
	char hex[65];
	int ok;

	sha256_hex(token, hex);
	lock(st);
	s = prep(st, "SELECT (SELECT count(*) FROM jobs WHERE token_hash = ?1 AND state IN ('queued', 'running')), "
		     "(SELECT count(*) FROM stages g JOIN jobs j ON j.id = g.job_id WHERE j.token_hash = ?1 "
		     "AND j.state IN ('queued', 'running') AND g.kind = 'boot' AND g.state IN ('pending', 'running'))");
	bind_text(s, 1, hex);
	ok = s && stmt_step(st, s) == SQLITE_ROW;
	if (ok) {
		*ret_jobs = sqlite3_column_int(s, 0);
		*ret_boots = sqlite3_column_int(s, 1);
	}
	stmt_done(st, s);
	unlock(st);
	return ok ? 0 : -1;
}
