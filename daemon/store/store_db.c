/*
 * The store. One connection, one mutex for every change: a single writing
 * connection keeps the code simple and every call atomic (SQLite
 * serialises writers anyway; PostgreSQL's other writers are other
 * daemons, whose rows the statements lock). SQLite's WAL lets a crash at
 * any instant leave the last committed state, which store_recover turns
 * into a consistent one at the next start.
 *
 * The API's hottest reads (the job list, a job) go to a few read-only
 * connections on the same database instead, each with its own mutex and
 * statement cache: they read the last commit while the writer works, so
 * 32 dashboards polling no longer queue behind one mutex. They are struct
 * stores too (db_reader_get), and share the writer's fault hook, so a
 * test sees one sequence of statements whichever connection runs it.
 * Every change is committed before the writer's mutex is released, so a
 * read that starts after a call returned sees what the call wrote.
 *
 * This file is the store's core: opening and migrating the database, the
 * connections and their statement cache, the fault hook, transactions
 * and errors, over which every other store*.c builds its tables' calls
 * (store_int.h says which file holds what). It knows no backend: those
 * are tables of operations (store_backend.h), chosen by store_open's
 * argument.
 */
#include "store.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "migrations.h"
#include "patch.h"
#include "store_backend.h"
#include "store_int.h"
#include "util.h"
#include "banned.h"

void db_lock(struct store *st)
{
	pthread_mutex_lock(&st->lock);
	atomic_store(&st->holder, pthread_self());
}

void db_unlock(struct store *st)
{
	atomic_store(&st->holder, (pthread_t)0);
	pthread_mutex_unlock(&st->lock);
}

/*
 * A statement on a connection whose lock this thread does not hold is a
 * bug that no test need be lucky to see: two threads on one libpq
 * connection read each other's results, and the one left waiting for a
 * result already taken waits for ever, holding the lock (a whole daemon
 * stopped so). It stops the daemon at once, naming the statement; the
 * store is made to survive a stop at any instant.
 */
static void assert_held(struct store *st, const char *sql)
{
	if (pthread_equal(atomic_load(&st->holder), pthread_self()))
		return;
	fprintf(stderr, "tlblabd: store: bug: a statement without its connection's lock: %.200s\n", sql ? sql : "?");
	abort();
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

int db_errno(int rc)
{
	return rc < 0 ? rc : -EIO;
}

int db_sql_err(struct store *st, struct strbuf *err, const char *what)
{
	if (err)
		strbuf_seterr(err, "store: %s: %s", what, st->errmsg[0] ? st->errmsg : st->be->errmsg(st->db));
	return st->errcode < 0 ? st->errcode : -EIO;
}

/* the error of each class of store.h, as the fault hook makes it */
static int class_errno(enum store_err e)
{
	static const int err[STORE_ERR_MAX] = {
		[STORE_ERR_LOCKED] = -EAGAIN, [STORE_ERR_FULL] = -ENOSPC, [STORE_ERR_IO] = -EIO,
		[STORE_ERR_DOWN] = -ENOTCONN,
	};

	return (unsigned)e < STORE_ERR_MAX ? err[e] : -EIO;
}

/* Whether the statement about to start (sql) is the one the fault hook
 * fails: 0, or the negative errno to fail it with. */
static int fault_fires(struct store *st, const char *sql)
{
	struct store *w = st->parent ? st->parent : st;
	struct store_fault *f = &w->fault;
	int code = 0;

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

/* Remembers why a statement failed (rc, a negative errno), for db_sql_err
 * and the log; returns rc. */
static int failed(struct store *st, int rc, const char *sql, int injected)
{
	st->errcode = rc;
	snprintf(st->errmsg, sizeof(st->errmsg), "%s%s (%.60s)", injected ? "injected: " : "",
		 injected ? store_strerror(rc) : st->be->errmsg(st->db), sql ? sql : "?");
	return rc;
}

int db_stmt_step(struct store *st, struct db_stmt *s)
{
	int rc;

	if (!s)
		return -EIO;
	assert_held(st, st->be->sql(s));
	if (!st->be->started(s) && (rc = fault_fires(st, st->be->sql(s))) < 0)
		return failed(st, rc, st->be->sql(s), 1);
	rc = st->be->step(s);
	if (rc != DB_ROW && rc != DB_DONE)
		failed(st, db_errno(rc), st->be->sql(s), 0);
	return rc == DB_ROW || rc == DB_DONE ? rc : db_errno(rc);
}

int db_exec(struct store *st, const char *sql)
{
	int rc;

	assert_held(st, sql);
	rc = strcmp(sql, "ROLLBACK") ? fault_fires(st, sql) : 0;
	if (rc < 0)
		return failed(st, rc, sql, 1);
	rc = st->be->exec(st->db, sql);
	return rc == 0 ? 0 : failed(st, db_errno(rc), sql, 0);
}

int db_txn_begin(struct store *st)
{
	if (st->be->in_txn(st->db)) {
		fprintf(stderr, "tlblabd: store: a transaction was left open; rolling it back\n");
		db_exec(st, "ROLLBACK");
	}
	return db_exec(st, st->be->begin_sql);
}

int db_txn_end(struct store *st, int rc)
{
	if (rc == 0)
		rc = db_exec(st, "COMMIT");
	if (rc < 0 && st->be->in_txn(st->db) && db_exec(st, "ROLLBACK") < 0)
		fprintf(stderr, "tlblabd: store: rollback failed: %s\n", st->be->errmsg(st->db));
	return rc;
}

int db_stage_claim(struct store *st, int64_t stage_id, const char *state)
{
	/* PostgreSQL: a row another daemon's transaction holds is skipped, so
	 * its claim is seen as busy at once rather than waited for; SQLite:
	 * the writer's BEGIN IMMEDIATE holds the one write lock already */
	struct db_stmt *s;
	int rc = db_row(st, &s, DB_SQL(st, "SELECT id FROM stages WHERE id = ?1 AND state = ?2",
					"SELECT id FROM stages WHERE id = ?1 AND state = ?2 FOR UPDATE SKIP LOCKED"),
			DB_INT(stage_id), DB_TEXT(state));

	if (rc == 1)
		db_stmt_done(st, s);
	return rc < 0 ? rc : rc == 0 ? -EBUSY : 0;
}

void store_fault_after(struct store *st, long n, enum store_err e)
{
	long hits;

	pthread_mutex_lock(&st->fault_lock);
	hits = st->fault.hits;
	memset(&st->fault, 0, sizeof(st->fault));
	st->fault.hits = n ? 0 : hits;
	st->fault.after = n;
	st->fault.code = class_errno(e);
	pthread_mutex_unlock(&st->fault_lock);
}

void store_fault_match(struct store *st, const char *match, int times, enum store_err e)
{
	pthread_mutex_lock(&st->fault_lock);
	memset(&st->fault, 0, sizeof(st->fault));
	snprintf(st->fault.match, sizeof(st->fault.match), "%s", match ? match : "");
	st->fault.times = match && *match ? times : 0;
	st->fault.code = class_errno(e);
	pthread_mutex_unlock(&st->fault_lock);
}

void store_busy_timeout(struct store *st, int ms)
{
	size_t i;

	db_lock(st);
	st->be->lock_timeout(st->db, ms);
	db_unlock(st);
	for (i = 0; i < st->nreaders; i++) {
		db_lock(st->readers[i]);
		st->be->lock_timeout(st->readers[i]->db, ms);
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
		if (pthread_mutex_trylock(&r->lock) == 0) {
			atomic_store(&r->holder, pthread_self());
			return r;
		}
	}
	r = st->readers[start % st->nreaders];
	db_lock(r);
	return r;
}

int store_failed(int rc)
{
	return rc == -EIO || rc == -ENOSPC || rc == -EAGAIN || rc == -ENOTCONN;
}

const char *store_strerror(int rc)
{
	switch (rc) {
	case -EAGAIN: return "the database is locked by another writer";
	case -ENOSPC: return "the database or its disk is full";
	case -ENOTCONN: return "the database server cannot be reached";
	case -ENOENT: return "no such row";
	case -EBUSY: return "lost a race with another change";
	case -EALREADY: return "already finished";
	default: return "a database error";
	}
}

struct db_stmt *db_prep_once(struct store *st, const char *sql)
{
	struct db_stmt *s = NULL;
	int rc = st->be->prepare(st->db, sql, &s);

	if (rc < 0) {
		failed(st, rc, sql, 0);
		fprintf(stderr, "tlblabd: store: cannot prepare: %s: %s\n", st->be->errmsg(st->db), sql);
		return NULL;
	}
	return s;
}

struct db_stmt *db_prep(struct store *st, const char *sql)
{
	size_t i;
	struct db_stmt *s;

	assert_held(st, sql);
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

struct db_stmt *db_prep_text(struct store *st, const char *sql)
{
	size_t i;
	struct db_stmt *s;
	char *text;

	assert_held(st, sql);
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

void db_stmt_done(struct store *st, struct db_stmt *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < st->ncache; i++)
		if (st->cache[i].s == s) {
			st->be->reset(s);
			return;
		}
	st->be->finalize(s);
}

int64_t db_changes(struct store *st)
{
	return st->be->changes(st->db);
}

int db_run_args(struct store *st, const char *sql, const struct db_arg *args)
{
	struct db_stmt *s = db_prep(st, sql);

	db_bind_args(s, args);
	return db_step_done(s);
}

int db_row_args(struct store *st, struct db_stmt **ret_s, const char *sql, const struct db_arg *args)
{
	struct db_stmt *s = db_prep(st, sql);
	int rc;

	db_bind_args(s, args);
	rc = db_step_row(st, s);
	if (rc == 1)
		*ret_s = s;
	return rc;
}

int db_one_args(struct store *st, struct db_stmt **ret_s, const char *sql, const struct db_arg *args)
{
	int rc = db_row_args(st, ret_s, sql, args);

	return rc < 0 ? rc : rc == 0 ? -ENOENT : 0;
}

int db_insert_args(struct store *st, const char *sql, const struct db_arg *args, int64_t *ret_id)
{
	struct db_stmt *s;
	int64_t id;
	int rc = db_one_args(st, &s, sql, args);

	if (rc < 0)
		return rc;
	id = db_col_int64(s, 0);
	/* the row is made once the statement runs to its end */
	rc = db_stmt_step(st, s);
	db_stmt_done(st, s);
	if (rc != DB_DONE)
		return db_errno(rc);
	*ret_id = id;
	return 0;
}

int db_write_args(struct store *st, const char *sql, const struct db_arg *args)
{
	int rc;

	db_lock(st);
	rc = db_run_args(st, sql, args);
	db_unlock(st);
	return rc;
}

int db_step_done_st(struct store *st, struct db_stmt *s)
{
	int rc;

	if (!s)
		return -EIO;
	rc = db_stmt_step(st, s);
	db_stmt_done(st, s);
	return rc == DB_DONE ? 0 : db_errno(rc);
}

int db_step_row(struct store *st, struct db_stmt *s)
{
	int rc = s ? db_stmt_step(st, s) : -EIO;

	if (rc == DB_ROW)
		return 1;
	db_stmt_done(st, s);
	return rc == DB_DONE ? 0 : db_errno(rc);
}

json_t *db_read_end(json_t *doc, int rc)
{
	if (rc == DB_DONE && doc)
		return doc;
	json_decref(doc);
	errno = rc == DB_DONE ? EIO : -db_errno(rc);
	return NULL;
}

double db_now(void)
{
	return wall_now();
}

int db_query_ids(struct store *st, const char *sql, int64_t **ret, size_t *ret_n)
{
	struct db_stmt *s = db_prep(st, sql);
	int64_t *v = NULL;
	size_t n = 0, alloc = 0;
	int rc;

	while ((rc = s ? db_stmt_step(st, s) : -EIO) == DB_ROW) {
		if (n == alloc) {
			alloc = alloc ? alloc * 2 : 8;
			v = xrealloc(v, alloc * sizeof(*v));
		}
		v[n++] = db_col_int64(s, 0);
	}
	db_stmt_done(st, s);
	if (rc != DB_DONE) {
		free(v);
		return db_errno(rc);
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
	struct db_stmt *s;
	int rc = 0;

	s = db_prep_once(st, "SELECT id, patch_kind, patch FROM jobs WHERE kind = 'ab' AND patch IS NOT NULL "
		      "AND patch_kind IN ('patch', 'url')");
	while (s && rc == 0 && db_stmt_step(st, s) == DB_ROW) {
		const char *kind = db_col_text(s, 1);
		enum patch_subject_kind k = patch_subject(db_col_text(s, 2), db_col_bytes(s, 2), &subj);

		if (k == PATCH_SUBJECT_NONE || (!strcmp(kind ? kind : "", "url") && k == PATCH_SUBJECT_FILES))
			continue;
		rc = db_run(st, "UPDATE jobs SET patch_subject = ?2 WHERE id = ?1",
			    DB_INT(db_col_int64(s, 0)), DB_TEXT(subj.buf));
	}
	if (s)
		st->be->finalize(s);
	strbuf_release(&subj);
	return s ? rc : -1;
}

/* The version the store's schema_migrations records, inside the caller's
 * transaction (or none): 0 or a negative errno, the version in *ret. */
static int schema_version(struct store *st, int *ret)
{
	struct db_stmt *s;
	int rc = db_row(st, &s, "SELECT coalesce(max(version), 0) FROM schema_migrations", DB_INT(0));

	if (rc <= 0)
		return rc < 0 ? rc : -EIO;
	*ret = db_col_int(s, 0);
	db_stmt_done(st, s);
	return 0;
}

/*
 * Each migration the store lacks, in its own transaction. Daemons that
 * share a store may start together: on PostgreSQL each takes the table's
 * lock and reads the version again under it, so a migration is applied
 * once; SQLite's BEGIN IMMEDIATE serialises them already.
 */
static int migrate(struct store *st, struct strbuf *err)
{
	const struct store_backend *be = st->be;
	size_t i;
	int have = 0, rc;

	if (db_exec(st, "CREATE TABLE IF NOT EXISTS schema_migrations ("
		     "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied DOUBLE PRECISION NOT NULL)") < 0 ||
	    schema_version(st, &have) < 0)
		return db_sql_err(st, err, "schema_migrations");
	for (i = 0; i < *be->nmigrations; i++) {
		const struct migration *m = &be->migrations[i];

		if (m->version <= have)
			continue;
		rc = db_txn_begin(st);
		if (rc == 0 && be->dialect == DB_DIALECT_POSTGRES)
			rc = db_exec(st, "LOCK TABLE schema_migrations IN EXCLUSIVE MODE");
		if (rc == 0)
			rc = schema_version(st, &have);
		if (rc == 0 && m->version <= have) {
			db_txn_end(st, -EALREADY);	/* another daemon applied it */
			continue;
		}
		if (rc == 0)
			rc = db_exec(st, m->sql);
		if (rc == 0 && m->version == SUBJECT_MIGRATION)
			rc = backfill_subjects(st) < 0 ? -EIO : 0;
		if (rc == 0)
			rc = db_run(st, "INSERT INTO schema_migrations (version, name, applied) VALUES (?1, ?2, ?3)",
				    DB_INT(m->version), DB_TEXT(m->name), DB_REAL(db_now()));
		if ((rc = db_txn_end(st, rc)) < 0)
			return db_sql_err(st, err, m->name);
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
		st->be->finalize(st->cache[i].s);
		free(st->cache[i].text);
	}
	for (i = 0; i < COUNT_SLOTS; i++)
		free(st->counts[i].key);
	st->be->close(st->db);
	pthread_mutex_destroy(&st->lock);
	pthread_mutex_destroy(&st->fault_lock);
	pthread_mutex_destroy(&st->count_lock);
	free(st);
}

static struct store *conn_new(const struct store_backend *be)
{
	struct store *st = xcalloc(1, sizeof(*st));

	st->be = be;
	pthread_mutex_init(&st->lock, NULL);
	pthread_mutex_init(&st->fault_lock, NULL);
	pthread_mutex_init(&st->count_lock, NULL);
	return st;
}

/*
 * The read-only connections, opened once the schema is current. A store
 * with none (in memory, or none would open) reads on the writer; that is
 * slower, never wrong.
 */
static void open_readers(struct store *st, const char *where)
{
	struct strbuf err = STRBUF_INIT;
	struct store *r;
	int rc;

	while (st->nreaders < READERS) {
		r = conn_new(st->be);
		r->parent = st;
		if ((rc = st->be->open(where, 1, &r->db, &err)) < 0) {
			/* -EOPNOTSUPP: a store with no second connection (in memory) */
			if (rc != -EOPNOTSUPP)
				fprintf(stderr, "tlblabd: %s; reading on the writer\n", err.buf);
			conn_close(r);
			break;
		}
		st->be->lock_timeout(r->db, 10000);
		st->readers[st->nreaders++] = r;
	}
	strbuf_release(&err);
}

void store_describe(const char *where, struct strbuf *out)
{
	store_backend_for(where)->describe(where, out);
}

int store_open(const char *where, struct store **ret, struct strbuf *err)
{
	const struct store_backend *be = store_backend_for(where);
	struct store *st = conn_new(be);
	int rc;

	if ((rc = be->open(where, 0, &st->db, err)) < 0) {
		st->db = NULL;
		goto fail;
	}
	be->lock_timeout(st->db, 10000);
	db_lock(st);
	rc = migrate(st, err);
	db_unlock(st);
	if (rc < 0 && err) {
		struct strbuf msg = STRBUF_INIT;

		/* err says what failed; the store it failed in goes first */
		store_describe(where, &msg);
		strbuf_addf(&msg, ": %s", err->buf);
		strbuf_seterr(err, "%s", msg.buf);
		strbuf_release(&msg);
	}
	if (rc < 0)
		goto fail;
	open_readers(st, where);
	*ret = st;
	return 0;
fail:
	conn_close(st);
	return rc == -ENOTCONN ? rc : -EIO;
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

	/* the writer makes every change of this daemon, and the backend
	 * knows of others' commits; read under its lock, no change of ours
	 * is half-committed */
	db_lock(st);
	g = st->be->generation(st->db);
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
	struct db_stmt *s = db_prep(r, sql);
	json_t *rows = json_array();
	int rc;

	db_bind_args(s, args);
	while ((rc = db_stmt_step(r, s)) == DB_ROW) {
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
	struct db_stmt *s;
	int64_t n = -1;

	if (db_row_args(r, &s, sql, args) == 1) {
		n = db_col_int64(s, 0);
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
