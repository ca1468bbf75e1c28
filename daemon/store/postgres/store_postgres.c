/*
 * The store's PostgreSQL backend (store_backend.h), through libpq, for
 * labs where several daemons share one store. Its migrations are
 * schema/NNNN-*.sql beside this file.
 *
 * A statement is sent whole when it is first stepped (PQexecParams: the
 * store's ?N become $N, each parameter typed by what was bound to it), and
 * its rows are read from the
 * result. Nothing lives on the server between statements, so a
 * connection that was lost is simply made again: the next statement
 * after a failure reconnects (at most once a second, each attempt bounded
 * by connect_timeout), unless the failure came inside a transaction:
 * that one is over (the server rolled it back), and every statement of it
 * fails until the store's ROLLBACK, so no later statement runs outside
 * the transaction it belonged to.
 *
 * Every wait is bounded: connect_timeout, TCP keepalives and
 * tcp_user_timeout (a server that vanishes without a word), and on the
 * server statement_timeout, lock_timeout and
 * idle_in_transaction_session_timeout (a daemon that hangs holding
 * locks). Messages name the store by user, database and host, never by
 * its URL, which may hold a password.
 */
#include <errno.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_backend.h"
#include "util.h"
#include "banned.h"

extern const struct migration postgres_migrations[];
extern const size_t postgres_nmigrations;
extern const struct store_backend store_backend_postgres;

/* the server's types the store reads (pg_type.h) */
#define OID_BOOL 16
#define OID_BYTEA 17
#define OID_INT8 20
#define OID_INT2 21
#define OID_INT4 23
#define OID_OID 26
#define OID_FLOAT4 700
#define OID_FLOAT8 701
#define OID_NUMERIC 1700

#define RECONNECT_EVERY 1.0	/* seconds between two attempts */

struct pg_conn {
	struct db_conn base;
	PGconn *pg;
	char *where;		/* the URL, for a reconnect (never shown) */
	int reader;
	int lock_ms;		/* lock_timeout, set again after a reconnect */
	int txn;		/* BEGIN ran, no COMMIT or ROLLBACK yet */
	int64_t changes;
	double retry_at;	/* mono_now() before which no reconnect is tried */
	char errmsg[512];
};

struct pg_stmt {
	struct db_stmt base;
	struct pg_conn *c;
	char *sql;		/* the store's text (?N), for messages and the fault hook */
	char *text;		/* the server's ($N) */
	int nparams;
	char **vals;		/* each parameter's text, NULL for NULL */
	Oid *types;		/* of what was bound (0: nothing, the server's guess) */
	PGresult *res;
	int row, nrows;
	int started;
	/* the bytea column last read of the row, unescaped (col_text): its
	 * bytes, NUL ended, valid until the next step or reset, or a read
	 * of another bytea column (the store has one: jobs.patch) */
	char *bytes;
	size_t nbytes;
	int bytes_row, bytes_col;
};

static struct pg_conn *conn_of(struct db_conn *c)
{
	return (struct pg_conn *)c;
}

static struct pg_stmt *stmt_of(struct db_stmt *s)
{
	return (struct pg_stmt *)s;
}

static int pg_claims(const char *where)
{
	return !strncmp(where, "postgresql://", 13) || !strncmp(where, "postgres://", 11);
}

static void pg_describe(const char *where, struct strbuf *out)
{
	static const char *const shown[] = { "user", "dbname", "host", "hostaddr", "port" };
	static const char *const names[] = { "user", "database", "host", "address", "port" };
	PQconninfoOption *opts = PQconninfoParse(where, NULL), *o;
	int n = 0;

	strbuf_addstr(out, "postgres: ");
	if (!opts) {
		strbuf_addstr(out, "a URL libpq cannot read");
		return;
	}
	/* only these: the rest (password, options, ...) may be secret */
	for (size_t i = 0; i < ARRAY_SIZE(shown); i++)
		for (o = opts; o->keyword; o++)
			if (!strcmp(o->keyword, shown[i]) && o->val && *o->val)
				strbuf_addf(out, "%s%s %s", n++ ? ", " : "", names[i], o->val);
	if (!n)
		strbuf_addstr(out, "libpq's defaults");
	PQconninfoFree(opts);
}

/* Keeps the first line of msg (libpq's end in a newline) as c's message. */
static void set_err(struct pg_conn *c, const char *what, const char *msg)
{
	size_t len = strcspn(msg ? msg : "", "\n");

	snprintf(c->errmsg, sizeof(c->errmsg), "%s%s%.*s", what ? what : "", what ? ": " : "", (int)len,
		 msg ? msg : "");
}

/* The store's negative errno for a failed result (NULL: none came). */
static int result_errno(struct pg_conn *c, const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	if (!res || PQstatus(c->pg) != CONNECTION_OK || !state)
		return PQstatus(c->pg) != CONNECTION_OK ? -ENOTCONN : -EIO;
	if (!strncmp(state, "08", 2) || !strcmp(state, "57P01") || !strcmp(state, "57P02") ||
	    !strcmp(state, "57P03"))
		return -ENOTCONN;
	if (!strcmp(state, "53100"))
		return -ENOSPC;
	/* another's lock outwaited, a deadlock, a serialisation failure, or
	 * a statement that ran out of time: another try may go through */
	if (!strcmp(state, "55P03") || !strcmp(state, "40P01") || !strcmp(state, "40001") ||
	    !strcmp(state, "57014"))
		return -EAGAIN;
	return -EIO;
}

/* The session's settings, after each (re)connect: 0 or a negative errno. */
static int session_setup(struct pg_conn *c)
{
	char sql[256];
	PGresult *res;
	int rc = 0;

	snprintf(sql, sizeof(sql), "SET statement_timeout = '120s'; SET lock_timeout = %d; "
		 "SET idle_in_transaction_session_timeout = '60s'; SET client_min_messages = warning%s",
		 c->lock_ms, c->reader ? "; SET default_transaction_read_only = on" : "");
	res = PQexec(c->pg, sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		set_err(c, "setting up the session", PQresultErrorMessage(res));
		rc = result_errno(c, res);
	}
	PQclear(res);
	return rc;
}

/* What the server says out of turn (its goodbye when it shuts down): the
 * connection's message, not the daemon's stderr; the store logs the
 * failure that follows, once. */
static void keep_notice(void *arg, const char *message)
{
	set_err(arg, NULL, message);
}

/* A new connection to c->where into c->pg: 0 or -ENOTCONN, with why. */
static int pg_connect(struct pg_conn *c)
{
	/* ours first: what the URL says overrides them */
	static const char *const keys[] = { "connect_timeout", "application_name", "client_encoding", "keepalives",
					    "keepalives_idle", "keepalives_interval", "keepalives_count",
					    "tcp_user_timeout", "dbname", NULL };
	const char *vals[] = { "10", "tlblabd", "UTF8", "1", "10", "5", "3", "30000", c->where, NULL };

	PQfinish(c->pg);
	c->pg = PQconnectdbParams(keys, vals, 1);
	if (!c->pg || PQstatus(c->pg) != CONNECTION_OK) {
		set_err(c, "cannot connect", c->pg ? PQerrorMessage(c->pg) : "out of memory");
		return -ENOTCONN;
	}
	PQsetNoticeProcessor(c->pg, keep_notice, c);
	return session_setup(c);
}

/* The connection, made again when it was lost and no transaction of it
 * is open: 0, or -ENOTCONN with why. */
static int ensure_connected(struct pg_conn *c)
{
	double now;

	/* a server that went away while we were idle left its goodbye (or
	 * just the end of the socket): read it now, so that the statement
	 * goes to a new connection rather than fail on the old one */
	if (c->pg && PQstatus(c->pg) == CONNECTION_OK && (c->txn || PQconsumeInput(c->pg)))
		return 0;
	if (c->txn) {
		set_err(c, NULL, "the connection was lost inside a transaction; it was rolled back");
		return -ENOTCONN;
	}
	now = mono_now();
	if (now < c->retry_at)
		return -ENOTCONN;	/* the last attempt's message stays */
	c->retry_at = now + RECONNECT_EVERY;
	if (pg_connect(c) < 0)
		return -ENOTCONN;
	fprintf(stderr, "tlblabd: store: connected again to the database%s\n", c->reader ? " (a reader)" : "");
	return 0;
}

static int pg_open(const char *where, int reader, struct db_conn **ret, struct strbuf *err)
{
	struct pg_conn *c = xcalloc(1, sizeof(*c));
	struct strbuf name = STRBUF_INIT;
	int rc;

	c->base.be = &store_backend_postgres;
	c->where = xstrdup(where);
	c->reader = reader;
	c->lock_ms = 10000;
	if ((rc = pg_connect(c)) < 0) {
		pg_describe(where, &name);
		strbuf_seterr(err, "store %s: %s%s", name.buf, reader ? "a reader: " : "", c->errmsg);
		strbuf_release(&name);
		PQfinish(c->pg);
		free(c->where);
		free(c);
		return rc;
	}
	*ret = &c->base;
	return 0;
}

static void pg_close(struct db_conn *dc)
{
	struct pg_conn *c = conn_of(dc);

	if (!c)
		return;
	PQfinish(c->pg);
	free(c->where);
	free(c);
}

static const char *pg_errmsg(struct db_conn *dc)
{
	return dc ? conn_of(dc)->errmsg : "not open";
}

static void pg_lock_timeout(struct db_conn *dc, int ms)
{
	struct pg_conn *c = conn_of(dc);
	char sql[64];

	c->lock_ms = ms;
	snprintf(sql, sizeof(sql), "SET lock_timeout = %d", ms);
	if (ensure_connected(c) == 0)
		PQclear(PQexec(c->pg, sql));
}

/* The store's ?N (and ?, numbered on from the highest so far) as $N,
 * outside quotes; *ret_n gets the highest number. */
static char *translate(const char *sql, int *ret_n)
{
	struct strbuf out = STRBUF_INIT;
	const char *p = sql;
	char quote = 0;
	int max = 0;

	while (*p) {
		if (quote) {
			if (*p == quote)
				quote = 0;
			strbuf_addch(&out, *p++);
		} else if (*p == '\'' || *p == '"') {
			quote = *p;
			strbuf_addch(&out, *p++);
		} else if (*p == '?') {
			int n = 0;

			for (p++; *p >= '0' && *p <= '9'; p++)
				n = n * 10 + (*p - '0');
			if (!n)
				n = max + 1;
			if (n > max)
				max = n;
			strbuf_addf(&out, "$%d", n);
		} else {
			strbuf_addch(&out, *p++);
		}
	}
	*ret_n = max;
	return strbuf_detach(&out, NULL);
}

static int pg_prepare(struct db_conn *dc, const char *sql, struct db_stmt **ret)
{
	struct pg_stmt *s = xcalloc(1, sizeof(*s));

	s->base.be = &store_backend_postgres;
	s->c = conn_of(dc);
	s->sql = xstrdup(sql);
	s->text = translate(sql, &s->nparams);
	s->vals = xcalloc((size_t)s->nparams + 1, sizeof(*s->vals));
	s->types = xcalloc((size_t)s->nparams + 1, sizeof(*s->types));
	*ret = &s->base;
	return 0;
}

/* Drops the unescaped bytea column, if any. */
static void drop_bytes(struct pg_stmt *s)
{
	free(s->bytes);
	s->bytes = NULL;
	s->nbytes = 0;
}

static void pg_reset(struct db_stmt *ds)
{
	struct pg_stmt *s = stmt_of(ds);

	for (int i = 0; i < s->nparams; i++) {
		free(s->vals[i]);
		s->vals[i] = NULL;
		s->types[i] = 0;
	}
	PQclear(s->res);
	s->res = NULL;
	s->row = s->nrows = 0;
	s->started = 0;
	drop_bytes(s);
}

static void pg_finalize(struct db_stmt *ds)
{
	struct pg_stmt *s = stmt_of(ds);

	if (!s)
		return;
	pg_reset(ds);
	free(s->vals);
	free(s->types);
	free(s->sql);
	free(s->text);
	free(s);
}

static const char *pg_sql(struct db_stmt *ds)
{
	return stmt_of(ds)->sql;
}

static int pg_started(struct db_stmt *ds)
{
	return stmt_of(ds)->started;
}

/* parameter i (from 1) as text of type, taking text */
static void bind_param(struct pg_stmt *s, int i, char *text, Oid type)
{
	if (i < 1 || i > s->nparams) {
		free(text);
		return;
	}
	free(s->vals[i - 1]);
	s->vals[i - 1] = text;
	s->types[i - 1] = type;
}

static void pg_bind_int(struct db_stmt *ds, int i, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	bind_param(stmt_of(ds), i, xstrdup(buf), OID_INT8);
}

static void pg_bind_real(struct db_stmt *ds, int i, double v)
{
	char buf[40];

	if (isnan(v))
		snprintf(buf, sizeof(buf), "NaN");
	else if (isinf(v))
		snprintf(buf, sizeof(buf), "%sInfinity", v < 0 ? "-" : "");
	else
		snprintf(buf, sizeof(buf), "%.17g", v);
	bind_param(stmt_of(ds), i, xstrdup(buf), OID_FLOAT8);
}

static void pg_bind_text(struct db_stmt *ds, int i, const char *v, size_t len)
{
	char *t = NULL;

	if (v) {
		t = xmalloc(len + 1);
		memcpy(t, v, len);
		t[len] = '\0';
	}
	/* a NULL is text too: the server need not guess its type */
	bind_param(stmt_of(ds), i, t, 25 /* text */);
}

/* Bytes as bytea's hex input ("\\x4142"): any byte, none taken for the
 * database's encoding. */
static void pg_bind_bytes(struct db_stmt *ds, int i, const char *v, size_t len)
{
	char *t = NULL;

	if (v) {
		t = xmalloc(2 * len + 3);
		t[0] = '\\';
		t[1] = 'x';
		hex_encode((const unsigned char *)v, len, t + 2);
	}
	bind_param(stmt_of(ds), i, t, OID_BYTEA);
}

/* Runs s: its rows into s->res, or a negative errno. */
static int run(struct pg_stmt *s)
{
	struct pg_conn *c = s->c;
	ExecStatusType st;
	int rc;

	if ((rc = ensure_connected(c)) < 0)
		return rc;
	s->res = PQexecParams(c->pg, s->text, s->nparams, s->types, (const char *const *)s->vals, NULL, NULL, 0);
	st = PQresultStatus(s->res);
	if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
		set_err(c, NULL, s->res ? PQresultErrorMessage(s->res) : PQerrorMessage(c->pg));
		rc = result_errno(c, s->res);
		PQclear(s->res);
		s->res = NULL;
		return rc;
	}
	c->changes = strtoll(PQcmdTuples(s->res), NULL, 10);
	s->nrows = st == PGRES_TUPLES_OK ? PQntuples(s->res) : 0;
	s->row = -1;
	return 0;
}

static int pg_step(struct db_stmt *ds)
{
	struct pg_stmt *s = stmt_of(ds);
	int rc;

	if (!s->started) {
		PQclear(s->res);
		s->res = NULL;
		if ((rc = run(s)) < 0)
			return rc;
		s->started = 1;
	}
	drop_bytes(s);
	if (++s->row < s->nrows)
		return DB_ROW;
	s->started = 0;		/* at its end: another step runs it again */
	return DB_DONE;
}

static int in_row(struct pg_stmt *s, int i)
{
	return s->res && s->row >= 0 && s->row < s->nrows && i >= 0 && i < PQnfields(s->res);
}

static enum db_type pg_col_type(struct db_stmt *ds, int i)
{
	struct pg_stmt *s = stmt_of(ds);
	const char *v;

	if (!in_row(s, i) || PQgetisnull(s->res, s->row, i))
		return DB_T_NULL;
	switch (PQftype(s->res, i)) {
	case OID_BOOL:
	case OID_INT2:
	case OID_INT4:
	case OID_INT8:
	case OID_OID:
		return DB_T_INT;
	case OID_FLOAT4:
	case OID_FLOAT8:
		return DB_T_REAL;
	case OID_NUMERIC:
		/* a sum of integers is one */
		v = PQgetvalue(s->res, s->row, i);
		return strpbrk(v, ".eEN") ? DB_T_REAL : DB_T_INT;
	default:
		return DB_T_TEXT;
	}
}

/* Column i, a bytea whose text (hex) is v, as its bytes (kept in s). */
static const char *bytea_text(struct pg_stmt *s, int i, const char *v)
{
	unsigned char *raw;
	size_t n = 0;

	if (s->bytes && s->bytes_row == s->row && s->bytes_col == i)
		return s->bytes;
	drop_bytes(s);
	raw = PQunescapeBytea((const unsigned char *)v, &n);
	if (!raw)
		return "";
	s->bytes = xmalloc(n + 1);
	memcpy(s->bytes, raw, n);
	s->bytes[n] = '\0';
	s->nbytes = n;
	s->bytes_row = s->row;
	s->bytes_col = i;
	PQfreemem(raw);
	return s->bytes;
}

static const char *pg_col_text(struct db_stmt *ds, int i)
{
	struct pg_stmt *s = stmt_of(ds);
	const char *v;

	if (!in_row(s, i) || PQgetisnull(s->res, s->row, i))
		return NULL;
	v = PQgetvalue(s->res, s->row, i);
	/* a condition reads as SQLite's: 1 or 0 */
	if (PQftype(s->res, i) == OID_BOOL)
		return *v == 't' ? "1" : "0";
	if (PQftype(s->res, i) == OID_BYTEA)
		return bytea_text(s, i, v);
	return v;
}

static int64_t pg_col_int(struct db_stmt *ds, int i)
{
	const char *v = pg_col_text(ds, i);

	if (!v)
		return 0;
	if (pg_col_type(ds, i) == DB_T_REAL)
		return (int64_t)strtod(v, NULL);
	return strtoll(v, NULL, 10);
}

static double pg_col_real(struct db_stmt *ds, int i)
{
	const char *v = pg_col_text(ds, i);

	return v ? strtod(v, NULL) : 0;
}

static size_t pg_col_bytes(struct db_stmt *ds, int i)
{
	const char *v = pg_col_text(ds, i);

	if (v && v == stmt_of(ds)->bytes)
		return stmt_of(ds)->nbytes;
	return v ? strlen(v) : 0;
}

static int pg_exec(struct db_conn *dc, const char *sql)
{
	struct pg_conn *c = conn_of(dc);
	int begin = !strcmp(sql, "BEGIN"), commit = !strcmp(sql, "COMMIT"), rollback = !strcmp(sql, "ROLLBACK");
	PGresult *res;
	int rc = 0;

	if (commit || rollback) {
		int lost = !c->pg || PQstatus(c->pg) != CONNECTION_OK;

		c->txn = 0;
		/* the server ended the transaction with the connection */
		if (lost) {
			if (rollback)
				return 0;
			set_err(c, NULL, "the connection was lost before COMMIT; the transaction was rolled back");
			return -ENOTCONN;
		}
	}
	if ((rc = ensure_connected(c)) < 0)
		return rc;
	res = PQexec(c->pg, sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK) {
		set_err(c, NULL, res ? PQresultErrorMessage(res) : PQerrorMessage(c->pg));
		rc = result_errno(c, res);
	} else if (commit && !strcmp(PQcmdStatus(res), "ROLLBACK")) {
		/* a statement of it had failed: the server rolled it back */
		set_err(c, NULL, "the transaction had failed and was rolled back");
		rc = -EIO;
	} else {
		c->changes = strtoll(PQcmdTuples(res), NULL, 10);
		if (begin)
			c->txn = 1;
	}
	PQclear(res);
	return rc;
}

static int pg_in_txn(struct db_conn *dc)
{
	return conn_of(dc)->txn;
}

static int64_t pg_changes(struct db_conn *dc)
{
	return conn_of(dc)->changes;
}

/*
 * Any daemon's commit that wrote changes the server's snapshot (its xmax
 * moves on, or a transaction leaves its list of those in progress): its
 * text, hashed (FNV-1a), is the generation. A failure is a negative errno.
 */
static int64_t pg_generation(struct db_conn *dc)
{
	struct pg_conn *c = conn_of(dc);
	uint64_t h = 14695981039346656037ull;
	PGresult *res;
	const char *v;
	int rc;

	if ((rc = ensure_connected(c)) < 0)
		return rc;
	res = PQexec(c->pg, "SELECT pg_current_snapshot()::text");
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
		set_err(c, NULL, PQresultErrorMessage(res));
		rc = result_errno(c, res);
		PQclear(res);
		return rc;
	}
	for (v = PQgetvalue(res, 0, 0); *v; v++)
		h = (h ^ (unsigned char)*v) * 1099511628211ull;
	PQclear(res);
	return (int64_t)(h >> 1);
}

const struct store_backend store_backend_postgres = {
	STORE_BACKEND_OPS(pg, "postgres"), .dialect = DB_DIALECT_POSTGRES, .begin_sql = "BEGIN",
	.migrations = postgres_migrations, .nmigrations = &postgres_nmigrations,
};
