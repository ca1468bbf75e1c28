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
 * are struct stores too (db_reader_get), and share the writer's fault hook,
 * so a test sees one sequence of statements whichever connection runs it.
 * Every change is committed before the writer's mutex is released, so a
 * read that starts after a call returned sees what the call wrote.
 *
 * This file is the store's core: opening and migrating the file, the
 * connections and their statement cache, the fault hook, transactions
 * and errors, over which every other store*.c builds its tables' calls
 * (store_int.h says which file holds what).
 */
#include "store.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "migrations.h"
#include "patch.h"
#include "store_int.h"
#include "util.h"
#include "banned.h"

void db_lock(struct store *st)
{
	pthread_mutex_lock(&st->lock);
}

void db_unlock(struct store *st)
{
	pthread_mutex_unlock(&st->lock);
}

struct store *db_guard_take(struct store *st)
{
	db_lock(st);
	return st;
}

void db_guard_release(struct store **st)
{
	db_unlock(*st);
}

int db_sqlite_errno(int rc)
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

int db_sql_err(struct store *st, struct strbuf *err, const char *what)
{
	if (err)
		strbuf_seterr(err, "store: %s: %s", what, st->errmsg[0] ? st->errmsg : sqlite3_errmsg(st->db));
	return db_sqlite_errno(st->errcode);
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

/* Remembers why a statement failed (rc), for db_sql_err and the log. */
static int failed(struct store *st, int rc, const char *sql, int injected)
{
	st->errcode = rc;
	snprintf(st->errmsg, sizeof(st->errmsg), "%s%s (%.60s)", injected ? "injected: " : "",
		 injected ? sqlite3_errstr(rc) : sqlite3_errmsg(st->db), sql ? sql : "?");
	return rc;
}

int db_stmt_step(struct store *st, sqlite3_stmt *s)
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

int db_exec(struct store *st, const char *sql)
{
	int rc = strcmp(sql, "ROLLBACK") ? fault_fires(st, sql) : SQLITE_OK;

	if (rc != SQLITE_OK)
		return db_sqlite_errno(failed(st, rc, sql, 1));
	rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
	return rc == SQLITE_OK ? 0 : db_sqlite_errno(failed(st, rc, sql, 0));
}

int db_txn_begin(struct store *st)
{
	if (!sqlite3_get_autocommit(st->db)) {
		fprintf(stderr, "tlblabd: store: a transaction was left open; rolling it back\n");
		db_exec(st, "ROLLBACK");
	}
	return db_exec(st, "BEGIN IMMEDIATE");
}

int db_txn_end(struct store *st, int rc)
{
	if (rc == 0)
		rc = db_exec(st, "COMMIT");
	if (rc < 0 && !sqlite3_get_autocommit(st->db) && db_exec(st, "ROLLBACK") < 0)
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

	db_lock(st);
	sqlite3_busy_timeout(st->db, ms);
	db_unlock(st);
	for (i = 0; i < st->nreaders; i++) {
		db_lock(st->readers[i]);
		sqlite3_busy_timeout(st->readers[i]->db, ms);
		db_unlock(st->readers[i]);
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

struct store *db_reader_get(struct store *st)
{
	unsigned start, i;
	struct store *r;

	if (!st->nreaders) {
		db_lock(st);
		return st;
	}
	start = atomic_fetch_add(&st->next_reader, 1);
	for (i = 0; i < st->nreaders; i++) {
		r = st->readers[(start + i) % st->nreaders];
		if (pthread_mutex_trylock(&r->lock) == 0)
			return r;
	}
	r = st->readers[start % st->nreaders];
	db_lock(r);
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

sqlite3_stmt *db_prep_once(struct store *st, const char *sql)
{
	sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
		failed(st, sqlite3_errcode(st->db), sql, 0);
		fprintf(stderr, "tlblabd: store: cannot prepare: %s: %s\n", sqlite3_errmsg(st->db), sql);
		return NULL;
	}
	return s;
}

sqlite3_stmt *db_prep(struct store *st, const char *sql)
{
	size_t i;
	sqlite3_stmt *s;

	for (i = 0; i < st->ncache; i++)
		if (st->cache[i].sql == sql)
			return st->cache[i].s;
	s = db_prep_once(st, sql);
	if (s && st->ncache < STMT_CACHE) {
		st->cache[st->ncache].sql = sql;
		st->cache[st->ncache++].s = s;
	}
	return s;
}

sqlite3_stmt *db_prep_text(struct store *st, const char *sql)
{
	size_t i;
	sqlite3_stmt *s;
	char *text;

	for (i = 0; i < st->ncache; i++)
		if (st->cache[i].text && !strcmp(st->cache[i].text, sql))
			return st->cache[i].s;
	s = db_prep_once(st, sql);
	if (s && st->ncache < STMT_CACHE) {
		text = xstrdup(sql);
		st->cache[st->ncache].sql = text;
		st->cache[st->ncache].text = text;
		st->cache[st->ncache++].s = s;
	}
	return s;
}

void db_stmt_done(struct store *st, sqlite3_stmt *s)
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

void db_bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, i);
}

void db_bind_json(sqlite3_stmt *s, int i, const json_t *v)
{
	char *txt = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

	if (txt)
		sqlite3_bind_text(s, i, txt, -1, free);
	else
		sqlite3_bind_null(s, i);
}

void db_bind_args(sqlite3_stmt *s, const struct db_arg *args)
{
	int i;

	for (i = 0; s && args[i].kind != DB_ARG_MAX; i++) {
		switch (args[i].kind) {
		case DB_ARG_INT:
			sqlite3_bind_int64(s, i + 1, args[i].v.i);
			break;
		case DB_ARG_REAL:
			sqlite3_bind_double(s, i + 1, args[i].v.d);
			break;
		case DB_ARG_TEXT:
			db_bind_text(s, i + 1, args[i].v.t);
			break;
		case DB_ARG_JSON:
			db_bind_json(s, i + 1, args[i].v.j);
			break;
		case DB_ARG_MAX:
			break;
		}
	}
}

int db_run_args(struct store *st, const char *sql, const struct db_arg *args)
{
	sqlite3_stmt *s = db_prep(st, sql);

	db_bind_args(s, args);
	return db_step_done(s);
}

int db_row_args(struct store *st, sqlite3_stmt **ret_s, const char *sql, const struct db_arg *args)
{
	sqlite3_stmt *s = db_prep(st, sql);
	int rc;

	db_bind_args(s, args);
	rc = db_step_row(st, s);
	if (rc == 1)
		*ret_s = s;
	return rc;
}

int db_write_args(struct store *st, const char *sql, const struct db_arg *args)
{
	int rc;

	db_lock(st);
	rc = db_run_args(st, sql, args);
	db_unlock(st);
	return rc;
}

int db_step_done_st(struct store *st, sqlite3_stmt *s)
{
	int rc;

	if (!s)
		return -EIO;
	rc = db_stmt_step(st, s);
	db_stmt_done(st, s);
	return rc == SQLITE_DONE ? 0 : db_sqlite_errno(rc);
}
int db_step_row(struct store *st, sqlite3_stmt *s)
{
	int rc = s ? db_stmt_step(st, s) : SQLITE_ERROR;

	if (rc == SQLITE_ROW)
		return 1;
	db_stmt_done(st, s);
	return rc == SQLITE_DONE ? 0 : db_sqlite_errno(rc);
}

json_t *db_col_json(sqlite3_stmt *s, int i)
{
	switch (sqlite3_column_type(s, i)) {
	case SQLITE_INTEGER: return json_integer(sqlite3_column_int64(s, i));
	case SQLITE_FLOAT: return json_real(sqlite3_column_double(s, i));
	case SQLITE_TEXT: return json_string((const char *)sqlite3_column_text(s, i));
	default: return json_null();
	}
}

json_t *db_col_parsed(sqlite3_stmt *s, int i)
{
	const char *t = (const char *)sqlite3_column_text(s, i);
	json_t *v;

	/* most jobs' machines and tags: no parser for them */
	if (t && !strcmp(t, "[]"))
		return json_array();
	v = t ? json_loads(t, JSON_DECODE_ANY, NULL) : NULL;
	return v ? v : json_null();
}

void db_col_copy(char *buf, size_t len, sqlite3_stmt *s, int i)
{
	snprintf(buf, len, "%s", (const char *)sqlite3_column_text(s, i));
}

json_t *db_read_end(json_t *doc, int rc)
{
	if (rc == SQLITE_DONE && doc)
		return doc;
	json_decref(doc);
	errno = rc == SQLITE_DONE ? EIO : -db_sqlite_errno(rc);
	return NULL;
}

double db_now(void)
{
	return wall_now();
}

int db_query_ids(struct store *st, const char *sql, int64_t **ret, size_t *ret_n)
{
	sqlite3_stmt *s = db_prep(st, sql);
	int64_t *v = NULL;
	size_t n = 0, alloc = 0;
	int rc;

	while ((rc = s ? db_stmt_step(st, s) : SQLITE_ERROR) == SQLITE_ROW) {
		if (n == alloc) {
			alloc = alloc ? alloc * 2 : 8;
			v = xrealloc(v, alloc * sizeof(*v));
		}
		v[n++] = sqlite3_column_int64(s, 0);
	}
	db_stmt_done(st, s);
	if (rc != SQLITE_DONE) {
		free(v);
		return db_sqlite_errno(rc);
	}
	*ret = v;
	*ret_n = n;
	return 0;
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
	sqlite3_stmt *s;
	int rc = 0;

	s = db_prep_once(st, "SELECT id, patch_kind, patch FROM jobs WHERE kind = 'ab' AND patch IS NOT NULL "
		      "AND patch_kind IN ('patch', 'url')");
	while (s && rc == 0 && db_stmt_step(st, s) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(s, 1);
		enum patch_subject_kind k = patch_subject((const char *)sqlite3_column_text(s, 2),
							  (size_t)sqlite3_column_bytes(s, 2), &subj);

		if (k == PATCH_SUBJECT_NONE || (!strcmp(kind ? kind : "", "url") && k == PATCH_SUBJECT_FILES))
			continue;
		rc = db_run(st, "UPDATE jobs SET patch_subject = ?2 WHERE id = ?1",
			    DB_INT(sqlite3_column_int64(s, 0)), DB_TEXT(subj.buf));
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

	if (db_exec(st, "CREATE TABLE IF NOT EXISTS schema_migrations ("
		     "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied REAL NOT NULL)") < 0)
		return db_sql_err(st, err, "schema_migrations");
	s = db_prep(st, "SELECT coalesce(max(version), 0) FROM schema_migrations");
	if (s && db_stmt_step(st, s) == SQLITE_ROW)
		have = sqlite3_column_int(s, 0);
	db_stmt_done(st, s);
	for (i = 0; i < nmigrations; i++) {
		const struct migration *m = &migrations[i];

		if (m->version <= have)
			continue;
		rc = db_txn_begin(st);
		if (rc == 0)
			rc = db_exec(st, m->sql);
		if (rc == 0 && m->version == SUBJECT_MIGRATION)
			rc = backfill_subjects(st) < 0 ? -EIO : 0;
		if (rc == 0) {
			s = db_prep(st, "INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)");
			sqlite3_bind_int(s, 1, m->version);
			db_bind_text(s, 2, m->name);
			sqlite3_bind_double(s, 3, db_now());
			rc = db_step_done(s);
		}
		if (db_txn_end(st, rc) < 0) {
			db_sql_err(st, err, m->name);
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
	struct store *st = xcalloc(1, sizeof(*st));

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
	if (db_exec(st, "PRAGMA journal_mode=WAL") < 0 || db_exec(st, "PRAGMA foreign_keys=ON") < 0 ||
	    db_exec(st, "PRAGMA synchronous=NORMAL") < 0) {
		db_sql_err(st, err, path);
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
	db_lock(st);
	g = sqlite3_total_changes64(st->db);
	db_unlock(st);
	return g;
}

/* ---- reads as JSON, for the tracks and bisections (store_int.h) ---- */

/*
 * The rows of a query as objects, one member a column, named by names[]
 * (a name ending in "_json" holds JSON text, parsed, and loses the
 * suffix). On a reader. NULL with errno on a store error.
 */
json_t *db_rows_json(struct store *st, const char *sql, const struct db_arg *args,
			 const char *const *names)
{
	DB_READER(r, st);
	sqlite3_stmt *s = db_prep(r, sql);
	json_t *rows = json_array();
	int rc;

	db_bind_args(s, args);
	while ((rc = db_stmt_step(r, s)) == SQLITE_ROW) {
		json_t *o = json_object();
		int i;

		for (i = 0; names[i]; i++) {
			size_t len = strlen(names[i]);

			if (len > 5 && !strcmp(names[i] + len - 5, "_json")) {
				char key[64];

				snprintf(key, sizeof(key), "%.*s", (int)(len - 5), names[i]);
				json_object_set_new(o, key, db_col_parsed(s, i));
			} else {
				json_object_set_new(o, names[i], db_col_json(s, i));
			}
		}
		json_array_append_new(rows, o);
	}
	db_stmt_done(r, s);
	return db_read_end(rows, rc);
}

/* one integer of a query on a reader, or -1 on a store error */
int64_t db_count(struct store *st, const char *sql, const struct db_arg *args)
{
	DB_READER(r, st);
	sqlite3_stmt *s;
	int64_t n = -1;

	if (db_row_args(r, &s, sql, args) == 1) {
		n = sqlite3_column_int64(s, 0);
		db_stmt_done(r, s);
	}
	return n;
}

/* {member: rows, "total": n, "limit", "offset"} or NULL with errno */
json_t *db_page_json(const char *member, json_t *rows, int64_t total, int limit, int offset)
{
	if (!rows)
		return NULL;
	if (total < 0) {
		json_decref(rows);
		errno = EIO;
		return NULL;
	}
	return json_pack("{s:o,s:I,s:i,s:i}", member, rows, "total", (json_int_t)total, "limit", limit,
			 "offset", offset);
}
