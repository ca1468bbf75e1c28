/*
 * API tokens: the config's (only their SHA-256 is stored) with their role,
 * whether one is known, what each token has queued, for its limits, and
 * what it may change: what it made (jobs.token_hash, bisections' and
 * alerts'), or anything when it is an admin token.
 */
#include "store.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "store_int.h"
#include "util.h"
#include "banned.h"

void db_token_hash(const char *token, char out[65])
{
	unsigned char md[32];
	unsigned int len = 0;

	EVP_Digest(token, strlen(token), md, &len, EVP_sha256(), NULL);
	hex_encode(md, sizeof(md), out);
}

int store_sync_tokens(struct store *st, char *const *tokens, char *const *admin_tokens, struct strbuf *err)
{
	int rc = 0;

	db_lock(st);
	rc = db_txn_begin(st);
	if (rc == 0)
		rc = db_exec(st, "DELETE FROM tokens WHERE source = 'config'");
	for (; rc == 0 && tokens && *tokens; tokens++) {
		char hex[65];

		db_token_hash(*tokens, hex);
		rc = db_run(st, "INSERT INTO tokens (hash, source, created) VALUES (?, 'config', ?) "
			    "ON CONFLICT DO NOTHING",
			    DB_TEXT(hex), DB_REAL(db_now()));
	}
	/* a token in both lists is an admin token */
	for (; rc == 0 && admin_tokens && *admin_tokens; admin_tokens++) {
		char hex[65];

		db_token_hash(*admin_tokens, hex);
		rc = db_run(st, "INSERT INTO tokens (hash, source, created, role) VALUES (?, 'config', ?, 'admin') "
			    "ON CONFLICT (hash) DO UPDATE SET role = 'admin'", DB_TEXT(hex), DB_REAL(db_now()));
	}
	if (db_txn_end(st, rc) < 0)
		rc = db_sql_err(st, err, "sync tokens");
	db_unlock(st);
	return rc;
}

/* 1 when token is one of the lab's (with admin, one of its admin tokens),
 * 0 when not, or a store error */
static int token_known(struct store *st, const char *token, int admin)
{
	struct db_stmt *s;
	char hex[65];
	int rc;

	if (!token || !*token)
		return 0;
	db_token_hash(token, hex);
	DB_READER(r, st);
	rc = db_row(r, &s, admin ? "SELECT 1 FROM tokens WHERE hash = ? AND role = 'admin'"
				 : "SELECT 1 FROM tokens WHERE hash = ?", DB_TEXT(hex));
	if (rc == 1)
		db_stmt_done(r, s);
	return rc;
}

int store_token_valid(struct store *st, const char *token)
{
	return token_known(st, token, 0);
}

int db_job_token_set(struct store *st, int64_t job_id, const char *token)
{
	char hex[65];

	db_token_hash(token, hex);
	return db_run(st, "UPDATE jobs SET token_hash = ? WHERE id = ?", DB_TEXT(hex), DB_INT(job_id));
}

int store_token_work(struct store *st, const char *token, int *ret_jobs, int *ret_boots)
{
	struct db_stmt *s;
	char hex[65];
	int ok;

	db_token_hash(token, hex);
	db_lock(st);
	s = db_prep(st, "SELECT (SELECT count(*) FROM jobs WHERE token_hash = ?1 AND state IN ('queued', 'running')) + "
		     "(SELECT count(*) FROM bisections WHERE token_hash = ?1 AND state = 'running'), "
		     "(SELECT count(*) FROM stages g JOIN jobs j ON j.id = g.job_id WHERE j.token_hash = ?1 "
		     "AND j.state IN ('queued', 'running') AND g.kind = 'boot' AND g.state IN ('pending', 'running')) + "
		     "(SELECT coalesce(sum(boots), 0) FROM bisections WHERE token_hash = ?1 AND state = 'running')");
	db_bind_text(s, 1, hex);
	ok = s && db_stmt_step(st, s) == DB_ROW;
	if (ok) {
		*ret_jobs = db_col_int(s, 0);
		*ret_boots = db_col_int(s, 1);
	}
	db_stmt_done(st, s);
	db_unlock(st);
	return ok ? 0 : -1;
}

int store_token_right(struct store *st, const char *token, enum store_owned what, int64_t id)
{
	/* one fixed statement a table: the owner, and the token's role */
#define OWNER_SQL(table) "SELECT token_hash, (SELECT role FROM tokens WHERE hash = ?2) FROM " table " WHERE id = ?1"
	static const char *const sql[STORE_OWNED_MAX] = {
		[STORE_OWNED_JOB] = OWNER_SQL("jobs"),
		[STORE_OWNED_BISECTION] = OWNER_SQL("bisections"),
		[STORE_OWNED_ALERT] = OWNER_SQL("alerts"),
	};
#undef OWNER_SQL
	struct db_stmt *s;
	char hex[65];
	int rc;

	if ((unsigned)what >= STORE_OWNED_MAX || !token)
		return -EINVAL;
	db_token_hash(token, hex);
	DB_READER(r, st);
	rc = db_one(r, &s, sql[what], DB_INT(id), DB_TEXT(hex));
	if (rc < 0)
		return rc;
	{
		const char *owner = db_col_text(s, 0);
		const char *role = db_col_text(s, 1);

		if (owner && !strcmp(owner, hex))
			rc = TOKEN_MADE_IT;
		else if (role && !strcmp(role, "admin"))
			rc = TOKEN_ADMIN;
		else
			rc = owner ? TOKEN_OTHER : TOKEN_LAB;
	}
	db_stmt_done(r, s);
	return rc;
}

int store_token_admin(struct store *st, const char *token)
{
	return token_known(st, token, 1);
}
