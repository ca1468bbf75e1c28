/*
 * API tokens: the config's (only their SHA-256 is stored), whether one is
 * known, and what each token has queued, for its limits.
 */
#include "store.h"

#include <openssl/evp.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "store_int.h"
#include "util.h"
#include "banned.h"

static void sha256_hex(const char *s, char out[65])
{
	unsigned char md[32];
	unsigned int len = 0;

	EVP_Digest(s, strlen(s), md, &len, EVP_sha256(), NULL);
	hex_encode(md, sizeof(md), out);
}

int store_sync_tokens(struct store *st, char *const *tokens, struct strbuf *err)
{
	int rc = 0;

	db_lock(st);
	rc = db_txn_begin(st);
	if (rc == 0)
		rc = db_exec(st, "DELETE FROM tokens WHERE source = 'config'");
	for (; rc == 0 && tokens && *tokens; tokens++) {
		char hex[65];

		sha256_hex(*tokens, hex);
		rc = db_run(st, "INSERT OR IGNORE INTO tokens (hash, source, created) VALUES (?, 'config', ?)",
			    DB_TEXT(hex), DB_REAL(db_now()));
	}
	if (db_txn_end(st, rc) < 0)
		rc = db_sql_err(st, err, "sync tokens");
	db_unlock(st);
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
	db_lock(st);
	s = db_prep(st, "SELECT 1 FROM tokens WHERE hash = ?");
	db_bind_text(s, 1, hex);
	ok = s && db_stmt_step(st, s) == SQLITE_ROW;
	db_stmt_done(st, s);
	db_unlock(st);
	return ok;
}

int db_job_token_set(struct store *st, int64_t job_id, const char *token)
{
	char hex[65];

	sha256_hex(token, hex);
	return db_run(st, "UPDATE jobs SET token_hash = ? WHERE id = ?", DB_TEXT(hex), DB_INT(job_id));
}

int store_token_work(struct store *st, const char *token, int *ret_jobs, int *ret_boots)
{
	sqlite3_stmt *s;
	char hex[65];
	int ok;

	sha256_hex(token, hex);
	db_lock(st);
	s = db_prep(st, "SELECT (SELECT count(*) FROM jobs WHERE token_hash = ?1 AND state IN ('queued', 'running')), "
		     "(SELECT count(*) FROM stages g JOIN jobs j ON j.id = g.job_id WHERE j.token_hash = ?1 "
		     "AND j.state IN ('queued', 'running') AND g.kind = 'boot' AND g.state IN ('pending', 'running'))");
	db_bind_text(s, 1, hex);
	ok = s && db_stmt_step(st, s) == SQLITE_ROW;
	if (ok) {
		*ret_jobs = sqlite3_column_int(s, 0);
		*ret_boots = sqlite3_column_int(s, 1);
	}
	db_stmt_done(st, s);
	db_unlock(st);
	return ok ? 0 : -1;
}
