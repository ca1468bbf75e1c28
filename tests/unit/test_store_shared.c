/*
 * daemon/store, where several daemons share one store (lab.store): who
 * leads what nobody submits (store_leader_take), a stage or a machine
 * another daemon is claiming (PostgreSQL's row locks, SKIP LOCKED), a run
 * a boot handed its machine to (still its daemon's, not taken over), and a
 * fetched patch that is not UTF-8, which a shared store must keep as
 * SQLite does. Each daemon is a store of its own on one database
 * (fixture_store.h), on SQLite and on a real PostgreSQL; the row locks
 * are PostgreSQL's alone.
 */
#include "testlib.h"

#include <errno.h>
#include <string.h>

#include "config.h"
#include "jsonget.h"
#include "store.h"
#include "util.h"
#include "fixture_store.h"
#include "banned.h"

/* A second daemon's store on the fixture's database, registered. */
static struct store *second_daemon(struct store_fixture *f, const char *host, int pid)
{
	struct strbuf err = STRBUF_INIT;
	struct store *b = NULL;

	if (store_open(f->where, &b, &err) < 0)
		fail_msg("a second daemon's store_open: %s", err.buf);
	strbuf_release(&err);
	assert_int_equal(store_daemon_register(b, host, pid), 0);
	return b;
}

/* A run job of one boot (a boot stage, then its run); its id. */
static int64_t boot_job(struct store *st)
{
	struct stage_plan plan[] = { { "boot", NULL, 0, 60, 0 }, { "run", NULL, 0, 60, 0 } };
	struct job_request req = { .kind = "run", .suite = "tlb", .boots = 1 };
	struct strbuf err = STRBUF_INIT;
	int64_t id = 0;

	req.suite_json = json_array();
	if (store_job_create(st, &req, plan, ARRAY_SIZE(plan), &id, &err) < 0)
		fail_msg("store_job_create: %s", err.buf);
	json_decref((json_t *)req.suite_json);
	strbuf_release(&err);
	return id;
}

/*
 * One daemon leads: the first to ask, while it is seen; the others
 * follow. It keeps the lead by asking again; another takes it once it has
 * been silent for longer than the lease timeout, or at once when it
 * stopped; and a role the store does not know is no one's.
 */
static void test_leader(void **state)
{
	struct store_fixture *f = *state;
	struct store *b;

	assert_int_equal(store_daemon_register(f->st, "host-a", 100), 0);
	b = second_daemon(f, "host-b", 200);
	assert_int_equal(store_leader_take(f->st, "tracker", 3600), 1);
	assert_int_equal(store_leader_take(b, "tracker", 3600), 0);
	assert_int_equal(store_leader_take(f->st, "tracker", 3600), 1);
	assert_int_equal(store_leader_take(b, "tracker", 3600), 0);
	/* a silent for longer than the lease (0 s: any time since it was
	 * seen is longer): b takes the lead, and a follows */
	assert_int_equal(store_leader_take(b, "tracker", 0), 1);
	assert_int_equal(store_leader_take(f->st, "tracker", 3600), 0);
	assert_int_equal(store_leader_take(b, "tracker", 3600), 1);
	/* b stops: a leads at once */
	assert_int_equal(store_daemon_retire(b), 0);
	assert_int_equal(store_leader_take(f->st, "tracker", 3600), 1);
	assert_int_equal(store_leader_take(f->st, "nothing-of-the-kind", 3600), -ENOENT);
	store_close(b);
}

/*
 * A stage or a machine whose row another daemon's transaction holds (it
 * is claiming it right now) is busy at once: store_stage_start answers
 * -EBUSY and leaves both as they were, rather than wait for the lock (and
 * fail -EAGAIN after the store's lock timeout, as a conditional change
 * would). Once the other transaction ends, the same start goes through.
 */
static void test_claims_skip_locked(void **state)
{
	struct store_fixture *f = *state;
	struct store_fixture_db other;
	char kind[8], side[16], buf[32];
	int64_t j1, j2, s1, s2;

	store_fixture_two_machines(f);
	assert_int_equal(store_daemon_register(f->st, "host-a", 100), 0);
	j1 = boot_job(f->st);
	j2 = boot_job(f->st);
	s1 = store_fixture_next_id(f->st, j1, kind, side);
	s2 = store_fixture_next_id(f->st, j2, kind, side);
	store_fixture_db_open(f, &other);

	/* the stage held by another daemon's claim */
	store_fixture_db_exec(&other, "BEGIN");
	store_fixture_db_text(&other, "SELECT id FROM stages WHERE id = ?1 FOR UPDATE", s1, buf, sizeof(buf));
	assert_int_equal(store_stage_start(f->st, s1, "m1"), -EBUSY);
	/* the machine was not leased for it meanwhile */
	assert_int_equal(store_stage_start(f->st, s2, "m1"), 0);
	store_fixture_db_exec(&other, "COMMIT");
	assert_int_equal(store_stage_start(f->st, s1, "m1"), -EBUSY);	/* m1 is s2's */

	/* the machine held by another daemon's lease under way */
	store_fixture_db_exec(&other, "BEGIN");
	store_fixture_db_text(&other, "SELECT name FROM machines WHERE name = 'm2' FOR UPDATE", 0, buf,
			      sizeof(buf));
	assert_int_equal(store_stage_start(f->st, s1, "m2"), -EBUSY);
	assert_string_equal(store_fixture_job_str(f->st, j1, "state", NULL, buf, sizeof(buf)), "queued");
	store_fixture_db_exec(&other, "COMMIT");
	assert_int_equal(store_stage_start(f->st, s1, "m2"), 0);
	store_fixture_db_close(&other);
}

/*
 * A boot that hands its machine to its run hands the run its daemon too:
 * the run is not taken for a silent daemon's, neither by the daemon that
 * runs it nor by another, and the other takes it over once this one stops.
 */
static void test_handoff_keeps_owner(void **state)
{
	struct store_fixture *f = *state;
	struct strbuf log = STRBUF_INIT;
	char kind[8], side[16];
	int64_t job, boot, run;
	struct store *b;

	store_fixture_two_machines(f);
	assert_int_equal(store_daemon_register(f->st, "host-a", 100), 0);
	b = second_daemon(f, "host-b", 200);
	job = boot_job(f->st);
	boot = store_fixture_next_id(f->st, job, kind, side);
	assert_string_equal(kind, "boot");
	run = store_stage_next(f->st, job, 0);
	assert_true(run > 0);
	assert_int_equal(store_stage_start(f->st, boot, "m1"), 0);
	assert_int_equal(store_stage_handoff(f->st, boot, run), 0);
	assert_int_equal(store_daemon_pass(f->st, 3600, &log), 0);
	assert_int_equal(store_daemon_pass(b, 3600, &log), 0);
	assert_string_equal(log.buf, "");
	assert_int_equal(store_daemon_retire(f->st), 0);
	assert_int_equal(store_daemon_pass(b, 3600, &log), 0);
	assert_contains(log.buf, "interrupted; queued again (taken over from daemon");
	store_close(b);
	strbuf_release(&log);
}

/*
 * A daemon paused past the lease timeout: another took its boot over and
 * started it again on another machine. When the paused one wakes, its end
 * of the boot, and its hand-off to the run, are refused (-EBUSY) and
 * change nothing: the stage runs on, the other daemon's, on its machine.
 */
static void test_fence_paused_daemon(void **state)
{
	struct store_fixture *f = *state;
	struct strbuf log = STRBUF_INIT;
	char kind[8], side[16], buf[32];
	int64_t job, boot, run, leased = 0;
	struct store *b;
	json_t *j, *ms, *m, *g;
	size_t i;

	store_fixture_two_machines(f);
	assert_int_equal(store_daemon_register(f->st, "host-a", 100), 0);
	b = second_daemon(f, "host-b", 200);
	job = boot_job(f->st);
	boot = store_fixture_next_id(f->st, job, kind, side);
	run = store_stage_next(f->st, job, 0);
	assert_int_equal(store_stage_start(f->st, boot, "m1"), 0);
	/* a is silent for longer than a lease of 0 s: b takes the boot over */
	assert_int_equal(store_daemon_pass(b, 0, &log), 0);
	assert_contains(log.buf, "interrupted; queued again (taken over from daemon");
	assert_int_equal(store_stage_start(b, boot, "m2"), 0);

	assert_int_equal(store_stage_finish(f->st, boot, "failed", "boot", "a's late end"), -EBUSY);
	assert_int_equal(store_stage_handoff(f->st, boot, run), -EBUSY);
	j = store_job_json(b, job);
	g = json_array_get(json_object_get(j, "stages"), 0);
	assert_string_equal(jsonget_str(g, "state") ?: "", "running");
	assert_string_equal(jsonget_str(g, "machine") ?: "", "m2");
	json_decref(j);
	assert_string_equal(store_fixture_job_str(b, job, "state", NULL, buf, sizeof(buf)), "running");
	ms = store_machines_json(b);
	json_array_foreach(json_object_get(ms, "machines"), i, m)
		if (!strcmp(jsonget_str(m, "name"), "m2"))
			leased = jsonget_int_or(m, "stage", 0);
	json_decref(ms);
	assert_int_equal(leased, boot);
	assert_int_equal(store_stage_handoff(b, boot, run), 0);
	store_close(b);
	strbuf_release(&log);
}

/*
 * A patch fetched from a URL is kept as the bytes it came as: a mail in
 * Latin-1 (not UTF-8) reads back byte for byte, as SQLite's text keeps
 * it, where a text column of PostgreSQL would refuse it.
 */
static void test_patch_bytes(void **state)
{
	static const char latin1[] = "From: Ren\xe9 Dupr\xe9 <r@example.org>\nSubject: [PATCH] mm: caf\xe9\n\n"
				     "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+\xe0\xff\n";
	struct store_fixture *f = *state;
	struct stage_plan plan[] = { { "build", "base", 0, 60, 0 }, { "build", "patched", 0, 60, 0 } };
	struct job_request req = { .kind = "ab", .tree = "linux", .base = "v6.1", .patch_kind = "url",
				   .patch_url = "https://lore.example.org/x/raw", .suite = "tlb", .boots = 1 };
	struct strbuf err = STRBUF_INIT, kind = STRBUF_INIT, text = STRBUF_INIT;
	int64_t job = 0;

	req.suite_json = json_array();
	if (store_job_create(f->st, &req, plan, ARRAY_SIZE(plan), &job, &err) < 0)
		fail_msg("store_job_create: %s", err.buf);
	json_decref((json_t *)req.suite_json);
	assert_int_equal(store_job_set_patch(f->st, job, latin1), 0);
	assert_int_equal(store_job_patch(f->st, job, &kind, &text, NULL, NULL), 0);
	assert_string_equal(kind.buf, "url");
	assert_int_equal(text.len, strlen(latin1));
	assert_memory_equal(text.buf, latin1, text.len);
	strbuf_release(&err);
	strbuf_release(&kind);
	strbuf_release(&text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		store_fixture_test(test_leader),
		store_fixture_test(test_handoff_keeps_owner),
		store_fixture_test(test_fence_paused_daemon),
		store_fixture_test(test_patch_bytes),
	};
	/* SQLite has one writer: no row of it is ever held by another */
	const struct CMUnitTest pg_only[] = {
		store_fixture_test(test_claims_skip_locked),
	};

	return store_fixture_run_rounds(tests, ARRAY_SIZE(tests), pg_only, ARRAY_SIZE(pg_only));
}
