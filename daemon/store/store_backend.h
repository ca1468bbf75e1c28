#ifndef TLBLAB_STORE_BACKEND_H
#define TLBLAB_STORE_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "migrations.h"
#include "strbuf.h"

/*
 * What a store backend is: a table of operations on its connections and
 * statements, chosen by the place store_open is given (OpenSMTPD's
 * scheduler_backend is the model). store/sqlite/ is the embedded default,
 * store/postgres/ serves labs where several daemons share one store.
 * Nothing above this file knows a backend's own types: the store's query
 * files (store_jobs.c, ...) run their SQL through the db_* helpers of
 * store_int.h, which call these.
 *
 * Statements: SQL with ?N (or ?) parameters, numbered from 1, in the
 * subset the backends share (store_int.h says which constructs that is);
 * a backend rewrites it to its own form. Where the two cannot share a
 * statement, the query file gives each its own text (DB_SQL).
 *
 * Errors: every operation that can fail returns the store's negative
 * errno (store.h): -EAGAIN another connection holds the lock (try later),
 * -ENOSPC the database or its disk is full, -ENOTCONN the database server
 * cannot be reached (the connection is tried again on the next call),
 * -EIO anything else; the backend keeps its message for errmsg.
 */

/* A connection and a statement of a backend: each backend's own structs
 * begin with these, so the helpers find their backend from either. */
struct store_backend;
struct db_conn {
	const struct store_backend *be;
};
struct db_stmt {
	const struct store_backend *be;
};

/* what db_stmt_step returns besides an error */
#define DB_ROW 100		/* a row is there to read */
#define DB_DONE 101		/* the statement ran to its end */

/* a column's value, as the store reads it */
enum db_type { DB_T_NULL, DB_T_INT, DB_T_REAL, DB_T_TEXT, DB_T_MAX };

/* whose SQL a statement is written in, where the backends' differ (DB_SQL) */
enum db_dialect { DB_DIALECT_SQLITE, DB_DIALECT_POSTGRES, DB_DIALECT_MAX };

struct store_backend {
	const char *name;	/* "sqlite", "postgres" */
	enum db_dialect dialect;
	/* 1 when store_open's argument names a store of this backend */
	int (*claims)(const char *where);
	/* the store's name for messages: never a password */
	void (*describe)(const char *where, struct strbuf *out);

	/* A connection: the writer, or (reader) one that only reads the last
	 * commit. 0 with *ret set, or a negative errno with err saying why
	 * (naming the store as describe does). */
	int (*open)(const char *where, int reader, struct db_conn **ret, struct strbuf *err);
	/* NULL is accepted; finalizes nothing (the caller did). */
	void (*close)(struct db_conn *c);
	/* The message of the connection's last failure. */
	const char *(*errmsg)(struct db_conn *c);
	/* How long a statement waits for another connection's lock before it
	 * fails with -EAGAIN. */
	void (*lock_timeout)(struct db_conn *c, int ms);

	/* A statement of sql (copied). 0, or a negative errno. */
	int (*prepare)(struct db_conn *c, const char *sql, struct db_stmt **ret);
	void (*finalize)(struct db_stmt *s);
	/* Back to its start, parameters cleared, for another use. */
	void (*reset)(struct db_stmt *s);
	const char *(*sql)(struct db_stmt *s);
	/* 1 when it was stepped since its last reset */
	int (*started)(struct db_stmt *s);
	/* Parameter i (from 1); text of len bytes, copied; NULL text binds
	 * NULL. Parameters past those of the SQL are ignored. */
	void (*bind_int)(struct db_stmt *s, int i, int64_t v);
	void (*bind_real)(struct db_stmt *s, int i, double v);
	void (*bind_text)(struct db_stmt *s, int i, const char *v, size_t len);
	/* The same for a column of bytes, in any encoding (jobs.patch): a
	 * text column may hold only the database's (PostgreSQL: UTF-8), a
	 * column of bytes reads back the bytes bound, as text (col_text,
	 * col_bytes). */
	void (*bind_bytes)(struct db_stmt *s, int i, const char *v, size_t len);
	/* DB_ROW, DB_DONE, or a negative errno. */
	int (*step)(struct db_stmt *s);
	/* Column i (from 0) of the row: its type, and its value as each type
	 * (text: NULL for NULL, valid until the next step or reset). */
	enum db_type (*col_type)(struct db_stmt *s, int i);
	int64_t (*col_int)(struct db_stmt *s, int i);
	double (*col_real)(struct db_stmt *s, int i);
	const char *(*col_text)(struct db_stmt *s, int i);
	size_t (*col_bytes)(struct db_stmt *s, int i);

	/* A statement of fixed text that returns no rows (several, separated
	 * by ';', for a migration). 0 or a negative errno. */
	int (*exec)(struct db_conn *c, const char *sql);
	/* The statement that starts a transaction that will write. */
	const char *begin_sql;
	/* 1 while a transaction is open on the connection */
	int (*in_txn)(struct db_conn *c);
	/* The rows the connection's last statement changed. */
	int64_t (*changes)(struct db_conn *c);
	/* A number that moves whenever the database changed (any
	 * connection's commit it can know of); a negative errno when it
	 * cannot be read. */
	int64_t (*generation)(struct db_conn *c);

	/* The backend's migrations, in ascending version order. */
	const struct migration *migrations;
	const size_t *nmigrations;
};

/*
 * A backend's functions, named with its prefix (PREFIX_OP), and its name:
 * STORE_BACKEND_OPS(sq, "sqlite") is `.name = "sqlite", .claims =
 * sq_claims, ..., .generation = sq_generation`, every function member (a
 * backend has them all: none is optional). It gives the members and leaves
 * the braces to the backend, which adds after it the members that are
 * values, not functions: dialect, begin_sql, migrations, nmigrations. So
 * the table is not written out member by member in each backend again,
 * and a function missing or misnamed is a compile error. The prefix is
 * short and not the name (sq, pg) because the backend's own types and
 * helpers carry it too.
 */
#define STORE_BACKEND_OPS(p, n) \
	.name = (n), .claims = p##_claims, .describe = p##_describe, .open = p##_open, \
	.close = p##_close, .errmsg = p##_errmsg, .lock_timeout = p##_lock_timeout, \
	.prepare = p##_prepare, .finalize = p##_finalize, .reset = p##_reset, .sql = p##_sql, \
	.started = p##_started, .bind_int = p##_bind_int, .bind_real = p##_bind_real, \
	.bind_text = p##_bind_text, .bind_bytes = p##_bind_bytes, .step = p##_step, \
	.col_type = p##_col_type, .col_int = p##_col_int, .col_real = p##_col_real, \
	.col_text = p##_col_text, .col_bytes = p##_col_bytes, .exec = p##_exec, \
	.in_txn = p##_in_txn, .changes = p##_changes, .generation = p##_generation

/* The backend that claims where (store_backends.c: the registry), or NULL. */
const struct store_backend *store_backend_for(const char *where);

#endif
