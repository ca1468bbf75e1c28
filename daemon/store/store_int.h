#ifndef TLBLAB_STORE_INT_H
#define TLBLAB_STORE_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "guard.h"
#include "store.h"
#include "store_backend.h"
#include "strbuf.h"

/*
 * What the store's files share: the connection (struct store) and the
 * helpers every query goes through, implemented in store_db.c. Not for use
 * outside the store module: the rest of the daemon sees only store.h, and
 * no file but store*.c holds SQL.
 *
 *   store_db.c        open, migrations, connections and readers, the
 *                     statement cache, the fault hook, transactions, errors,
 *                     over a backend (store_backend.h: sqlite/, postgres/)
 *   store_values.c    a statement's parameters and columns, and JSON of them
 *   store_jobs.c      jobs: create, read, list, cancel, patch, more boots
 *   store_stages.c    the stage state machine: runnable, start, finish,
 *                     retry, settle, recover; stage logs and notes
 *   store_results.c   builds, runs, metrics, samples, profiles, comparisons
 *   store_machines.c  machines from the config, health, failures
 *   store_tokens.c    API tokens and what each has queued
 *   store_tracks.c    nightly tracks: points, series, change points,
 *                     alerts; webhook deliveries
 *   store_daemons.c   daemons sharing a store: who runs what, take-overs
 *
 * The helpers are named db_*: each works on one connection, a struct store
 * (the writer, or one of its readers), and its prepared statements.
 *
 * SQL the backends share: ?N parameters; INSERT ... ON CONFLICT (...) DO
 * UPDATE/NOTHING (no INSERT OR REPLACE); RETURNING for a new row's id;
 * IS [NOT] DISTINCT FROM (not IS); CASE WHEN on comparisons (no bare
 * integer as a condition); no JSON functions (the JSON is read and made
 * in C), no date functions (db_now). Where a statement cannot be shared,
 * DB_SQL gives each dialect its text.
 *
 * Locking: a function of store.h holds the writer's lock (db_lock), or a
 * reader's (db_reader_get), for its whole call, by DB_GUARD or DB_READER
 * where it has more than one way out; the helpers below expect
 * their caller to hold the lock of the connection they are given, except
 * db_write, which takes it.
 */

#define STMT_CACHE 96
/* read-only connections: as many as API threads on a 4-CPU host (api_server.c);
 * a read takes a free one, and waits only while all of them read */
#define READERS 4
/* job list totals kept per filter (count_get) */
#define COUNT_SLOTS 16

/*
 * Prepared statements are cached by the address of their SQL text (every
 * fixed query is a string literal), so a request pays for parsing once per
 * daemon, not once per call. Callers hand them back with db_stmt_done, which
 * resets them; queries built at run time use db_prep_once and finalize, or
 * db_prep_text, which keeps them by their text (a few shapes, many calls).
 */
struct stmt_slot {
	const char *sql;
	struct db_stmt *s;
	char *text;		/* db_prep_text's own copy of sql, or NULL */
};

/* The test hook (store.h): the n-th statement from now, or the next
 * `times` statements whose SQL contains `match`, fail with `code`. */
struct store_fault {
	long after;
	int times;
	int code;		/* the negative errno it fails with */
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
	const struct store_backend *be;
	struct db_conn *db;	/* the backend's connection */
	int64_t daemon_id;	/* the writer's: this daemon's row (store_daemons.c), or 0 */
	pthread_mutex_t lock;	/* this connection: its statements, errmsg */
	_Atomic(pthread_t) holder;	/* the thread that holds lock, or 0 */
	int version;
	struct stmt_slot cache[STMT_CACHE];
	size_t ncache;
	char errmsg[256];	/* the last failure's message, under the lock */
	int errcode;		/* and its negative errno */
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

/* The connection's mutex: its statements, its errmsg. */
void db_lock(struct store *st);
void db_unlock(struct store *st);

/*
 * A connection for a read of the last commit, locked: a free reader, else
 * one in turn (waiting for it), else the writer when there are none (an
 * in-memory store). Hand it back with db_unlock.
 */
struct store *db_reader_get(struct store *st);

/*
 * A connection's lock held to the end of the enclosing block, as
 * GUARD_MUTEX (guard.h) holds a mutex:
 *
 *	DB_GUARD(st);		st's own lock (db_lock)
 *	DB_READER(r, w);	declares r, a reader of w (db_reader_get)
 *
 * Every way out of the block hands the lock back once. A function whose
 * lock has more than one way out, or that reads on a reader, holds it so;
 * one that calls into store.h again after its read puts the guarded part in
 * a block of its own, as the lock is not recursive.
 */
struct store *db_guard_take(struct store *st);	/* db_lock, returning st */
void db_guard_release(struct store **st);	/* db_unlock(*st) */

#define DB_GUARD(st) \
	struct store *GUARD_CAT(db_held_, __LINE__) \
		__attribute__((cleanup(db_guard_release), unused)) = db_guard_take(st)
#define DB_READER(r, w) \
	struct store *r __attribute__((cleanup(db_guard_release))) = db_reader_get(w)

/* A statement's end (db_stmt_step) as the store's negative errno: rc when
 * it is one, -EIO for a row or an end where the other was due. */
int db_errno(int rc);

/* The dialect's text of a statement the backends cannot share: st's
 * backend's own (both string literals, so each is cached apart). */
#define DB_SQL(st, sqlite, postgres) ((st)->be->dialect == DB_DIALECT_POSTGRES ? (postgres) : (sqlite))
/* The failure last seen on st, as "store: WHAT: MESSAGE" into err (when
 * not NULL); returns it as the store's negative errno. */
int db_sql_err(struct store *st, struct strbuf *err, const char *what);

/* Statements (the cache: struct stmt_slot). db_prep: a fixed query, a
 * string literal. db_prep_once: a query for one use, to finalize (or hand
 * to db_stmt_done). Both NULL when the SQL does not prepare, or the
 * connection is down (logged, and kept for db_sql_err); every function
 * below takes a NULL statement as a failure (binds do nothing). */
struct db_stmt *db_prep_once(struct store *st, const char *sql);
struct db_stmt *db_prep(struct store *st, const char *sql);

/* A statement whose SQL was built at run time, kept by its text: the
 * same text reuses it. */
struct db_stmt *db_prep_text(struct store *st, const char *sql);

/* Hands a statement back: cached ones are reset, others finalized. */
void db_stmt_done(struct store *st, struct db_stmt *s);
/* Parameter i (from 1) as an integer, a number, v's text (NULL when v is),
 * v's bytes for a column that keeps any (jobs.patch: a fetched patch need
 * not be UTF-8, which a text column of PostgreSQL requires), or v's
 * compact JSON text (NULL when v is). */
void db_bind_int(struct db_stmt *s, int i, int64_t v);
void db_bind_real(struct db_stmt *s, int i, double v);
void db_bind_text(struct db_stmt *s, int i, const char *v);
void db_bind_bytes(struct db_stmt *s, int i, const char *v);
void db_bind_json(struct db_stmt *s, int i, const json_t *v);

/* Column i (from 0) of the row in s: its type (enum db_type), and its
 * value as an integer, a number, text (NULL for NULL; valid until the
 * next step) and the text's length. */
enum db_type db_col_type(struct db_stmt *s, int i);
int64_t db_col_int64(struct db_stmt *s, int i);
int db_col_int(struct db_stmt *s, int i);
double db_col_double(struct db_stmt *s, int i);
const char *db_col_text(struct db_stmt *s, int i);
size_t db_col_bytes(struct db_stmt *s, int i);

/* The rows the connection's last statement changed. */
int64_t db_changes(struct store *st);

/*
 * A statement's parameters as one list, ?1 first: each a DB_INT (any
 * integer, bound as a 64-bit integer), DB_REAL, DB_TEXT, DB_BYTES or
 * DB_JSON (db_bind_text, db_bind_bytes, db_bind_json: NULL binds NULL). The macros below end the
 * list, so a call reads as the statement does:
 *
 *	rc = db_run(st, "UPDATE stages SET note = ?2 WHERE id = ?1",
 *		    DB_INT(stage_id), DB_TEXT(note));
 */
enum db_arg_kind { DB_ARG_INT, DB_ARG_REAL, DB_ARG_TEXT, DB_ARG_JSON, DB_ARG_BYTES, DB_ARG_MAX };

struct db_arg {
	enum db_arg_kind kind;	/* DB_ARG_MAX ends a list */
	union {
		int64_t i;
		double d;
		const char *t;
		const json_t *j;
	} v;
};

#define DB_INT(x) ((struct db_arg){ .kind = DB_ARG_INT, .v.i = (x) })
#define DB_REAL(x) ((struct db_arg){ .kind = DB_ARG_REAL, .v.d = (x) })
#define DB_TEXT(x) ((struct db_arg){ .kind = DB_ARG_TEXT, .v.t = (x) })
#define DB_JSON(x) ((struct db_arg){ .kind = DB_ARG_JSON, .v.j = (x) })
#define DB_BYTES(x) ((struct db_arg){ .kind = DB_ARG_BYTES, .v.t = (x) })
#define DB_ARGS(...) ((const struct db_arg[]){ __VA_ARGS__, { .kind = DB_ARG_MAX } })

/* Binds args, up to the one of kind DB_ARG_MAX, to parameters 1, 2, ...
 * of s (nothing when s is NULL). */
void db_bind_args(struct db_stmt *s, const struct db_arg *args);
#define db_bind(s, ...) db_bind_args((s), DB_ARGS(__VA_ARGS__))

/* A statement of fixed text (db_prep) that returns no rows, with its
 * parameters, run and handed back: 0 or the store's negative errno. */
int db_run_args(struct store *st, const char *sql, const struct db_arg *args);
#define db_run(st, sql, ...) db_run_args((st), (sql), DB_ARGS(__VA_ARGS__))

/* A query of at most one row (db_step_row), with its parameters: 1 with
 * the row in *ret_s (read it, then db_stmt_done), 0 with none, or the
 * store's negative errno (the statement handed back in both). */
int db_row_args(struct store *st, struct db_stmt **ret_s, const char *sql, const struct db_arg *args);
#define db_row(st, ret_s, sql, ...) db_row_args((st), (ret_s), (sql), DB_ARGS(__VA_ARGS__))

/* db_row for a row that must be there (a thing asked for by its id): 0
 * with the row in *ret_s (read it, then db_stmt_done), -ENOENT with none,
 * or the store's negative errno (the statement handed back in both). */
int db_one_args(struct store *st, struct db_stmt **ret_s, const char *sql, const struct db_arg *args);
#define db_one(st, ret_s, sql, ...) db_one_args((st), (ret_s), (sql), DB_ARGS(__VA_ARGS__))

/* A statement of fixed text that makes or changes one row and returns its
 * id (INSERT ... RETURNING id, UPDATE ... RETURNING), with its parameters:
 * 0 with the id in *ret_id, -ENOENT when no row was, or the store's
 * negative errno. */
int db_insert_args(struct store *st, const char *sql, const struct db_arg *args, int64_t *ret_id);
#define db_insert(st, ret_id, sql, ...) db_insert_args((st), (sql), DB_ARGS(__VA_ARGS__), (ret_id))

/* db_run under the writer's lock, which it takes (the caller holds none):
 * a change of one statement. */
int db_write_args(struct store *st, const char *sql, const struct db_arg *args);
#define db_write(st, sql, ...) db_write_args((st), (sql), DB_ARGS(__VA_ARGS__))

/*
 * Every statement the store runs goes through here: it starts (or goes on
 * with) s, unless the fault hook fails it first. Returns DB_ROW, DB_DONE,
 * or the store's negative errno.
 */
int db_stmt_step(struct store *st, struct db_stmt *s);
/* A statement of fixed text (no parameters) run through the same hook;
 * ROLLBACK is never failed by it. 0 or the store's negative errno. */
int db_exec(struct store *st, const char *sql);

/* Runs a statement that returns no rows; hands it back. 0 or the store's
 * negative errno. db_step_done(s) is this on the st of the caller. */
int db_step_done_st(struct store *st, struct db_stmt *s);
#define db_step_done(s) db_step_done_st(st, (s))

/* Steps a query of at most one row: 1 with a row (read it, then
 * db_stmt_done), 0 with none (handed back), or a negative errno (handed
 * back). For reads inside a transaction, where "no row" decides. */
int db_step_row(struct store *st, struct db_stmt *s);

/* The first column of every row of sql, as ids. Caller holds the lock and
 * frees *ret (set on success only). 0 or a store error. */
int db_query_ids(struct store *st, const char *sql, int64_t **ret, size_t *ret_n);

/*
 * Transactions: every change of more than one statement is
 * db_txn_begin ... db_txn_end(st, rc). On SQLite, BEGIN IMMEDIATE takes
 * the write lock up front, so a busy database fails the BEGIN, not a
 * statement half-way; on PostgreSQL each statement takes its rows' locks. db_txn_end commits when rc is 0 and rolls back otherwise, or
 * when the COMMIT fails; it returns rc, or the COMMIT's error. A
 * transaction left open by a failed ROLLBACK is rolled back by the next
 * db_txn_begin, so one failure never swallows the next change into a
 * transaction that no one commits.
 */
int db_txn_begin(struct store *st);
int db_txn_end(struct store *st, int rc);

/*
 * Inside a transaction of the writer: stage stage_id, in state, claimed
 * for the transaction: 0; -EBUSY when it is not in that state, or on
 * PostgreSQL when another connection's transaction holds its row (FOR
 * UPDATE SKIP LOCKED: a claim under way elsewhere is busy at once, never
 * waited for); or a store error. The row stays locked to the end of the
 * transaction, so the change that follows is this daemon's alone. On
 * SQLite the writer's BEGIN IMMEDIATE holds the one write lock already.
 */
int db_stage_claim(struct store *st, int64_t stage_id, const char *state);

/* A token as the store keeps it: its SHA-256 in lower-case hex
 * (store_tokens.c); the store never holds a token itself. */
void db_token_hash(const char *token, char out[65]);
/* Records that token submitted job_id (its hash), in the caller's
 * transaction (store_tokens.c). 0, or a negative errno. */
int db_job_token_set(struct store *st, int64_t job_id, const char *token);
/* Inserts a job and its stages (store_job_create's rows) inside the
 * caller's transaction. */
int db_job_insert(struct store *st, const struct job_request *req, const struct stage_plan *stages,
		  size_t nstages, int64_t *ret_id);

/* Column i as JSON of its type (NULL as null). */
json_t *db_col_json(struct db_stmt *s, int i);

/* A column holding JSON text, parsed (null if absent or unparsable). */
json_t *db_col_parsed(struct db_stmt *s, int i);

/* Column i's text into buf (len bytes), cut to fit. */
void db_col_copy(char *buf, size_t len, struct db_stmt *s, int i);

/*
 * The end of a read that builds JSON (store.h): rc is the last step's
 * code, DB_DONE when every row was read. Otherwise what was built is
 * dropped: NULL with errno the store's error, never part of the rows.
 */
json_t *db_read_end(json_t *doc, int rc);

/* The time every timestamp column holds: seconds since the epoch. */
double db_now(void);

/*
 * Reads for the API's documents, each on a reader: the rows of sql as
 * objects, one member a column named by names[] (NULL-terminated; a name
 * ending in "_json" holds JSON text, parsed, and loses the suffix), NULL
 * with errno on a store error; one integer (a count), -1 on a store
 * error; and a page, {member: rows, "total", "limit", "offset"}, NULL with
 * errno when rows is NULL or total is -1 (rows is taken).
 */
json_t *db_rows_json(struct store *st, const char *sql, const struct db_arg *args, const char *const *names);
int64_t db_count(struct store *st, const char *sql, const struct db_arg *args);
json_t *db_page_json(const char *member, json_t *rows, int64_t total, int limit, int offset);

#endif
