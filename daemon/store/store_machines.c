/*
 * The store's machines: those of the config (upserted; others stay,
 * marked not in config), their health and kernel, their recent failures,
 * and the daemon's health (jobs queued and running, machines by health).
 * Leases are taken and released with stages (store_stages.c).
 */
#include "store.h"

#include <errno.h>
#include <stdio.h>

#include "config.h"
#include "store_int.h"
#include "banned.h"

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

	db_lock(st);
	rc = db_txn_begin(st);
	if (rc == 0)
		rc = db_exec(st, "UPDATE machines SET in_config = 0");
	for (i = 0; rc == 0 && i < cfg->nmachines; i++) {
		const struct cfg_machine *m = &cfg->machines[i];
		json_t *tags = string_list(m->tags);

		rc = db_run(st, "INSERT INTO machines (name, transport, host, boot, arch, cpus, tags, in_config) "
			    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1) ON CONFLICT (name) DO UPDATE SET "
			    "transport = ?2, host = ?3, boot = ?4, arch = ?5, cpus = ?6, tags = ?7, in_config = 1",
			    DB_TEXT(m->name), DB_TEXT(config_transport_name(&m->ep)), DB_TEXT(m->ep.host),
			    DB_TEXT(config_boot_method_name(m)), DB_TEXT(m->arch), DB_INT(m->cpus), DB_JSON(tags));
		json_decref(tags);
	}
	if (db_txn_end(st, rc) < 0)
		rc = db_sql_err(st, err, "sync machines");
	db_unlock(st);
	return rc;
}

int store_machine_health(struct store *st, const char *name, const char *health, const char *reason)
{
	return db_write(st, "UPDATE machines SET health = ?2, health_reason = ?3, health_changed = ?4 WHERE name = ?1",
			DB_TEXT(name), DB_TEXT(health), DB_TEXT(reason), DB_REAL(db_now()));
}

int store_machine_kernel(struct store *st, const char *name, const char *kernel, double booted)
{
	return db_write(st, "UPDATE machines SET kernel = coalesce(?2, kernel), "
			"last_boot = CASE WHEN ?3 > 0 THEN ?3 ELSE last_boot END WHERE name = ?1",
			DB_TEXT(name), DB_TEXT(kernel && *kernel ? kernel : NULL), DB_REAL(booted));
}

int store_machine_get_health(struct store *st, const char *name, char *buf, size_t len)
{
	struct db_stmt *s;
	int rc = -ENOENT;

	db_lock(st);
	s = db_prep(st, "SELECT health FROM machines WHERE name = ?");
	db_bind_text(s, 1, name);
	if (s && db_stmt_step(st, s) == DB_ROW) {
		db_col_copy(buf, len, s, 0);
		rc = 0;
	}
	db_stmt_done(st, s);
	db_unlock(st);
	return rc;
}

int store_failure_add(struct store *st, const char *machine, int64_t job, int64_t stage,
		      const char *cls, const char *message)
{
	return db_write(st, "INSERT INTO failures (machine, job_id, stage_id, class, message, at) "
			"VALUES (?, ?, ?, ?, ?, ?)", DB_TEXT(machine), DB_INT(job), DB_INT(stage), DB_TEXT(cls),
			DB_TEXT(message), DB_REAL(db_now()));
}

json_t *store_machines_json(struct store *st)
{
	struct db_stmt *s, *f;
	json_t *arr = json_array();
	int rc, frc = DB_DONE;

	db_lock(st);
	s = db_prep(st, "SELECT name, transport, host, boot, arch, cpus, tags, health, health_reason, "
		     "lease_job, lease_stage, kernel, last_boot, health_changed FROM machines "
		     "WHERE in_config = 1 ORDER BY name");
	while ((rc = db_stmt_step(st, s)) == DB_ROW) {
		json_t *m = json_object(), *fails = json_array();

		json_object_set_new(m, "name", db_col_json(s, 0));
		json_object_set_new(m, "transport", db_col_json(s, 1));
		json_object_set_new(m, "host", db_col_json(s, 2));
		json_object_set_new(m, "boot", db_col_json(s, 3));
		json_object_set_new(m, "arch", db_col_json(s, 4));
		json_object_set_new(m, "cpus", db_col_json(s, 5));
		json_object_set_new(m, "tags", db_col_parsed(s, 6));
		json_object_set_new(m, "health", db_col_json(s, 7));
		json_object_set_new(m, "health_reason", db_col_json(s, 8));
		json_object_set_new(m, "leased_by", db_col_json(s, 9));
		json_object_set_new(m, "stage", db_col_json(s, 10));
		json_object_set_new(m, "kernel", db_col_json(s, 11));
		json_object_set_new(m, "last_boot", db_col_json(s, 12));
		json_object_set_new(m, "health_changed", db_col_json(s, 13));
		f = db_prep(st, "SELECT job_id, stage_id, class, message, at FROM failures WHERE machine = ? "
			     "ORDER BY id DESC LIMIT 5");
		db_bind_text(f, 1, db_col_text(s, 0));
		while ((frc = db_stmt_step(st, f)) == DB_ROW)
			json_array_append_new(fails, json_pack("{s:o,s:o,s:o,s:o,s:o}", "job", db_col_json(f, 0),
							       "stage", db_col_json(f, 1), "class", db_col_json(f, 2),
							       "message", db_col_json(f, 3), "at", db_col_json(f, 4)));
		db_stmt_done(st, f);
		json_object_set_new(m, "recent_failures", fails);
		json_array_append_new(arr, m);
		if (frc != DB_DONE) {
			rc = frc;
			break;
		}
	}
	db_stmt_done(st, s);
	db_unlock(st);
	if (rc != DB_DONE)
		return db_read_end(arr, rc);
	return json_pack("{s:o}", "machines", arr);
}

json_t *store_health_json(struct store *st)
{
	struct db_stmt *s;
	json_t *jobs = json_pack("{s:i,s:i}", "queued", 0, "running", 0);
	json_t *mach = json_pack("{s:i,s:i,s:i,s:i}", "good", 0, "unknown", 0, "bad", 0, "maintenance", 0);
	int rc;

	db_lock(st);
	s = db_prep(st, "SELECT state, count(*) FROM jobs WHERE state IN ('queued', 'running') GROUP BY state");
	while ((rc = db_stmt_step(st, s)) == DB_ROW)
		json_object_set_new(jobs, db_col_text(s, 0), db_col_json(s, 1));
	db_stmt_done(st, s);
	if (rc == DB_DONE) {
		s = db_prep(st, "SELECT health, count(*) FROM machines WHERE in_config = 1 GROUP BY health");
		while ((rc = db_stmt_step(st, s)) == DB_ROW)
			json_object_set_new(mach, db_col_text(s, 0), db_col_json(s, 1));
		db_stmt_done(st, s);
	}
	db_unlock(st);
	if (rc != DB_DONE) {
		json_decref(jobs);
		return db_read_end(mach, rc);
	}
	return json_pack("{s:s,s:o,s:o,s:i}", "status", "ok", "jobs", jobs, "machines", mach,
			 "schema", st->version);
}
