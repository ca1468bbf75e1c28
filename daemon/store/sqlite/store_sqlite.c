/*
 * The store's SQLite backend (store_backend.h), the embedded default: one
 * file, WAL (readers see the last commit while the writer works), foreign
 * keys on, synchronous=NORMAL (a commit survives a crash of the daemon;
 * the last ones may not survive one of the machine). Its migrations are
 * schema/NNNN-*.sql beside this file.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "store_backend.h"
#include "util.h"
#include "banned.h"

extern const struct migration sqlite_migrations[];
extern const size_t sqlite_nmigrations;

struct sq_conn {
	struct db_conn base;
	sqlite3 *db;
};

struct sq_stmt {
	struct db_stmt base;
	sqlite3_stmt *s;
};

extern const struct store_backend store_backend_sqlite;

static sqlite3 *db_of(struct db_conn *c)
{
	return ((struct sq_conn *)c)->db;
}

static sqlite3_stmt *stmt_of(struct db_stmt *s)
{
	return ((struct sq_stmt *)s)->s;
}

/* An SQLite result code as the store's negative errno (store.h). */
static int sq_errno(int rc)
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

/* the last of the backends: any path is an SQLite file */
static int sq_claims(const char *where)
{
	(void)where;
	return 1;
}

static void sq_describe(const char *where, struct strbuf *out)
{
	strbuf_addf(out, "sqlite: %s", where);
}

static int sq_open(const char *where, int reader, struct db_conn **ret, struct strbuf *err)
{
	struct sq_conn *c;
	int rc;

	/* an in-memory store is one connection: a second would be another store */
	if (reader && (!*where || !strcmp(where, ":memory:")))
		return -EOPNOTSUPP;
	c = xcalloc(1, sizeof(*c));
	c->base.be = &store_backend_sqlite;
	rc = sqlite3_open_v2(where, &c->db, reader ? SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
						   : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
			     NULL);
	if (rc == SQLITE_OK && !reader)
		rc = sqlite3_exec(c->db, "PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL",
				  NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		strbuf_seterr(err, "store sqlite: %s: %s%s", where, reader ? "cannot open a reader: " : "",
			      c->db ? sqlite3_errmsg(c->db) : "cannot open");
		sqlite3_close(c->db);
		free(c);
		return sq_errno(rc);
	}
	*ret = &c->base;
	return 0;
}

static void sq_close(struct db_conn *c)
{
	if (!c)
		return;
	sqlite3_close(db_of(c));
	free(c);
}

static const char *sq_errmsg(struct db_conn *c)
{
	return c ? sqlite3_errmsg(db_of(c)) : "not open";
}

static void sq_lock_timeout(struct db_conn *c, int ms)
{
	sqlite3_busy_timeout(db_of(c), ms);
}

static int sq_prepare(struct db_conn *c, const char *sql, struct db_stmt **ret)
{
	struct sq_stmt *s;
	sqlite3_stmt *p = NULL;
	int rc = sqlite3_prepare_v2(db_of(c), sql, -1, &p, NULL);

	if (rc != SQLITE_OK)
		return sq_errno(rc);
	s = xcalloc(1, sizeof(*s));
	s->base.be = &store_backend_sqlite;
	s->s = p;
	*ret = &s->base;
	return 0;
}

static void sq_finalize(struct db_stmt *s)
{
	if (!s)
		return;
	sqlite3_finalize(stmt_of(s));
	free(s);
}

static void sq_reset(struct db_stmt *s)
{
	sqlite3_reset(stmt_of(s));
	sqlite3_clear_bindings(stmt_of(s));
}

static const char *sq_sql(struct db_stmt *s)
{
	return sqlite3_sql(stmt_of(s));
}

static int sq_started(struct db_stmt *s)
{
	return sqlite3_stmt_busy(stmt_of(s));
}

static void sq_bind_int(struct db_stmt *s, int i, int64_t v)
{
	sqlite3_bind_int64(stmt_of(s), i, v);
}

static void sq_bind_real(struct db_stmt *s, int i, double v)
{
	sqlite3_bind_double(stmt_of(s), i, v);
}

static void sq_bind_text(struct db_stmt *s, int i, const char *v, size_t len)
{
	if (v)
		sqlite3_bind_text64(stmt_of(s), i, v, len, SQLITE_TRANSIENT, SQLITE_UTF8);
	else
		sqlite3_bind_null(stmt_of(s), i);
}

/* SQLite's text keeps any bytes given with their length */
static void sq_bind_bytes(struct db_stmt *s, int i, const char *v, size_t len)
{
	sq_bind_text(s, i, v, len);
}

static int sq_step(struct db_stmt *s)
{
	int rc = sqlite3_step(stmt_of(s));

	if (rc == SQLITE_ROW)
		return DB_ROW;
	if (rc == SQLITE_DONE)
		return DB_DONE;
	return sq_errno(rc);
}

static enum db_type sq_col_type(struct db_stmt *s, int i)
{
	switch (sqlite3_column_type(stmt_of(s), i)) {
	case SQLITE_INTEGER: return DB_T_INT;
	case SQLITE_FLOAT: return DB_T_REAL;
	case SQLITE_TEXT: return DB_T_TEXT;
	case SQLITE_BLOB: return DB_T_TEXT;
	default: return DB_T_NULL;
	}
}

static int64_t sq_col_int(struct db_stmt *s, int i)
{
	return sqlite3_column_int64(stmt_of(s), i);
}

static double sq_col_real(struct db_stmt *s, int i)
{
	return sqlite3_column_double(stmt_of(s), i);
}

static const char *sq_col_text(struct db_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(stmt_of(s), i);
}

static size_t sq_col_bytes(struct db_stmt *s, int i)
{
	return (size_t)sqlite3_column_bytes(stmt_of(s), i);
}

static int sq_exec(struct db_conn *c, const char *sql)
{
	int rc = sqlite3_exec(db_of(c), sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : sq_errno(rc);
}

static int sq_in_txn(struct db_conn *c)
{
	return !sqlite3_get_autocommit(db_of(c));
}

static int64_t sq_changes(struct db_conn *c)
{
	return sqlite3_changes(db_of(c));
}

/* the writer makes every change to the file (one daemon a file) */
static int64_t sq_generation(struct db_conn *c)
{
	return sqlite3_total_changes64(db_of(c));
}

const struct store_backend store_backend_sqlite = {
	STORE_BACKEND_OPS(sq, "sqlite"), .dialect = DB_DIALECT_SQLITE,
	/* the write lock up front: a busy database fails the BEGIN, not a
	 * statement half-way */
	.begin_sql = "BEGIN IMMEDIATE",
	.migrations = sqlite_migrations, .nmigrations = &sqlite_nmigrations,
};
