/*
 * daemon/store: the job list (its total kept between reads, the same list
 * written as text, what it hides of a patch's source) and the API tokens'
 * rights (who made a job, a bisection or an alert, what a token may change
 * and has queued), on a real SQLite file and a real PostgreSQL database
 * (fixture_store.h), read back through the store's own JSON as the API
 * serves it.
 */
#include "testlib.h"

#include <errno.h>

#include "config.h"
#include "jsonget.h"
#include "store.h"
#include "util.h"
#include "fixture_store.h"
#include "banned.h"

/* The job list's total is kept between reads, and the next change (a job
 * created, one cancelled) is counted at once, for each filter; a count
 * that fails is reported and not kept. */
static void test_job_list_total_follows_changes(void **state)
{
	struct store_fixture *f = *state;
	struct job_filter all = { 0 }, queued = { .state = "queued" }, cancelled = { .state = "cancelled" };
	int64_t a;
	json_t *j;

#define TOTAL(flt) (j = store_jobs_json(f->st, &(flt)), assert_non_null(j), \
		    total = jsonget_int_or(j, "total", 0), json_decref(j), total)
	json_int_t total;

	a = store_fixture_job(f->st, 1);
	assert_int_equal(TOTAL(all), 1);
	assert_int_equal(TOTAL(queued), 1);
	assert_int_equal(TOTAL(cancelled), 0);
	store_fixture_job(f->st, 1);
	assert_int_equal(TOTAL(all), 2);
	assert_int_equal(TOTAL(queued), 2);
	assert_int_equal(store_job_cancel(f->st, a), 0);
	assert_int_equal(TOTAL(queued), 1);
	assert_int_equal(TOTAL(cancelled), 1);
	assert_int_equal(TOTAL(all), 2);

	/* a change, then a count that fails: an error, and the next read counts */
	store_fixture_job(f->st, 1);
	store_fault_match(f->st, "SELECT count(*) FROM jobs", 1, STORE_ERR_IO);
	errno = 0;
	assert_null(store_jobs_json(f->st, &all));
	assert_int_equal(errno, EIO);
	assert_int_equal(store_fault_hits(f->st), 1);
	assert_int_equal(TOTAL(all), 3);
	/* kept: the same read again runs no count */
	store_fault_match(f->st, "SELECT count(*) FROM jobs", 1, STORE_ERR_IO);
	assert_int_equal(TOTAL(all), 3);
	assert_int_equal(store_fault_hits(f->st), 0);
#undef TOTAL
}

/* The job list written as text (store_jobs_text) says what the job
 * read built with jansson (store_job_json) says of each job, awkward text
 * included, and its page fields; a failed read is an error, not a page. */
static void test_job_list_text(void **state)
{
	struct store_fixture *f = *state;
	struct job_filter all = { .limit = 2 }, failed = { .state = "failed" };
	static const char msg[] = "tab\there\nnl \x01 \x1f \"q\" \\ / \xc3\xa9 \xe4\xb8\xad \xe2\x80\xa8 end";
	struct strbuf text = STRBUF_INIT;
	char kind[8], side[16];
	int64_t b, c, stage;
	json_t *doc, *job, *want, *jobs;
	size_t i;

	store_fixture_job(f->st, 1);
	b = store_fixture_job(f->st, 1);
	c = store_fixture_job(f->st, 1);
	stage = store_fixture_next_id(f->st, b, kind, side);
	assert_int_equal(store_stage_begin(f->st, stage, "builder local"), 0);
	assert_int_equal(store_stage_finish(f->st, stage, "failed", "build", msg), 0);

	assert_int_equal(store_jobs_text(f->st, &all, &text), 0);
	doc = json_loadb(text.buf, text.len, 0, NULL);
	assert_non_null(doc);
	assert_int_equal(jsonget_int_or(doc, "total", 0), 3);
	assert_int_equal(jsonget_int_or(doc, "limit", 0), 2);
	assert_int_equal(jsonget_int_or(doc, "offset", 0), 0);
	jobs = json_object_get(doc, "jobs");
	assert_int_equal(json_array_size(jobs), 2);
	json_array_foreach(jobs, i, job) {
		want = store_job_json(f->st, jsonget_int_or(job, "id", 0));
		assert_non_null(want);
		json_object_del(want, "stages");
		/* as the API encodes it: 12 significant digits */
		{
			char *got = json_dumps(job, JSON_COMPACT | JSON_REAL_PRECISION(12));
			char *w = json_dumps(want, JSON_COMPACT | JSON_REAL_PRECISION(12));

			assert_non_null(strstr(text.buf, got));
			if (strcmp(got, w))
				fail_msg("job list row %s, the job read %s", got, w);
			free(got);
			free(w);
		}
		json_decref(want);
	}
	assert_int_equal(jsonget_int_or(json_array_get(jobs, 0), "id", 0), c);
	assert_string_equal(jsonget_str(json_object_get(json_array_get(jobs, 1), "error"), "message"), msg);
	json_decref(doc);

	strbuf_reset(&text);
	assert_int_equal(store_jobs_text(f->st, &failed, &text), 0);
	doc = json_loadb(text.buf, text.len, 0, NULL);
	assert_non_null(doc);
	assert_int_equal(jsonget_int_or(doc, "total", 0), 1);
	assert_int_equal(jsonget_int_or(json_array_get(json_object_get(doc, "jobs"), 0), "id", 0), b);
	json_decref(doc);

	strbuf_reset(&text);
	store_fault_match(f->st, "ORDER BY id DESC LIMIT ? OFFSET ?", 1, STORE_ERR_IO);
	assert_int_equal(store_jobs_text(f->st, &all, &text), -EIO);
	assert_int_equal(store_fault_hits(f->st), 1);
	strbuf_release(&text);
}

#define T_A "token-a-of-the-test-0123456789"
#define T_B "token-b-of-the-test-0123456789"
#define T_ADMIN "token-admin-of-the-test-0123456789"

/* A bisection asked for by token (NULL: the lab's), boots per step; its id. */
static int64_t token_bisection(struct store *st, const char *token, int boots)
{
	struct bisection_request b = { .tree = "linux", .good = "v6.1", .bad = "v6.2", .suite = "tlb",
				       .machine = "m1", .metric = "mprotect.ops_per_sec", .boots = boots,
				       .token = token };
	struct strbuf err = STRBUF_INIT;
	int64_t id = 0;

	if (store_bisection_create(st, &b, NULL, 0, NULL, 0, &id, &err) < 0)
		fail_msg("store_bisection_create: %s", err.buf);
	strbuf_release(&err);
	return id;
}

/*
 * A job or a bisection records the token that made it: that token may
 * change it, another may not, an admin token may; what the lab made (a
 * track's job, every alert) is the admin tokens' alone. A token in both
 * lists is an admin token, and one dropped from admin_tokens is one no
 * longer.
 */
static void test_token_rights(void **state)
{
	struct store_fixture *f = *state;
	char *users[] = { T_A, T_B, NULL }, *admins[] = { T_ADMIN, T_B, NULL };
	struct strbuf err = STRBUF_INIT;
	int64_t ja, jlab, ba, blab, alert;
	int made;

	assert_int_equal(store_sync_tokens(f->st, users, admins, &err), 0);
	assert_int_equal(store_token_valid(f->st, T_A), 1);
	assert_int_equal(store_token_valid(f->st, T_ADMIN), 1);
	assert_int_equal(store_token_admin(f->st, T_A), 0);
	assert_int_equal(store_token_admin(f->st, T_B), 1);
	assert_int_equal(store_token_admin(f->st, T_ADMIN), 1);
	assert_int_equal(store_token_admin(f->st, "not-a-token-of-this-lab-0123"), 0);

	ja = store_fixture_token_job(f->st, T_A, 1);
	jlab = store_fixture_token_job(f->st, NULL, 1);
	assert_int_equal(store_token_right(f->st, T_A, STORE_OWNED_JOB, ja), TOKEN_MADE_IT);
	assert_int_equal(store_token_right(f->st, T_ADMIN, STORE_OWNED_JOB, ja), TOKEN_ADMIN);
	assert_int_equal(store_token_right(f->st, T_A, STORE_OWNED_JOB, jlab), TOKEN_LAB);
	assert_int_equal(store_token_right(f->st, T_ADMIN, STORE_OWNED_JOB, jlab), TOKEN_ADMIN);
	assert_int_equal(store_token_right(f->st, T_A, STORE_OWNED_JOB, jlab + 100), -ENOENT);

	ba = token_bisection(f->st, T_A, 2);
	blab = token_bisection(f->st, NULL, 2);
	assert_int_equal(store_token_right(f->st, T_A, STORE_OWNED_BISECTION, ba), TOKEN_MADE_IT);
	assert_int_equal(store_token_right(f->st, T_ADMIN, STORE_OWNED_BISECTION, ba), TOKEN_ADMIN);
	assert_int_equal(store_token_right(f->st, T_A, STORE_OWNED_BISECTION, blab), TOKEN_LAB);
	assert_int_equal(store_token_right(f->st, T_A, STORE_OWNED_BISECTION, blab + 100), -ENOENT);

	assert_int_equal(store_alert_attach(f->st, "mainline", "v6.1", "v6.2", 0, &alert, &made), 0);
	assert_int_equal(store_token_right(f->st, T_A, STORE_OWNED_ALERT, alert), TOKEN_LAB);
	assert_int_equal(store_token_right(f->st, T_ADMIN, STORE_OWNED_ALERT, alert), TOKEN_ADMIN);

	/* B dropped from admin_tokens: a user token, not A's */
	admins[1] = NULL;
	assert_int_equal(store_sync_tokens(f->st, users, admins, &err), 0);
	assert_int_equal(store_token_admin(f->st, T_B), 0);
	assert_int_equal(store_token_right(f->st, T_B, STORE_OWNED_JOB, ja), TOKEN_OTHER);
	assert_int_equal(store_token_right(f->st, T_B, STORE_OWNED_BISECTION, ba), TOKEN_OTHER);
	strbuf_release(&err);
}

/* A running bisection counts in its token's work as one job with the
 * boots of one step; once it ends, it counts no more. Another token's and
 * the lab's count for neither. */
static void test_token_work_bisections(void **state)
{
	struct store_fixture *f = *state;
	int jobs = -1, boots = -1;
	int64_t b;

	store_fixture_token_job(f->st, T_A, 2);
	assert_int_equal(store_token_work(f->st, T_A, &jobs, &boots), 0);
	assert_int_equal(jobs, 1);
	assert_int_equal(boots, 2);
	b = token_bisection(f->st, T_A, 3);
	token_bisection(f->st, T_B, 5);
	token_bisection(f->st, NULL, 7);
	assert_int_equal(store_token_work(f->st, T_A, &jobs, &boots), 0);
	assert_int_equal(jobs, 2);
	assert_int_equal(boots, 5);
	assert_int_equal(store_bisection_cancel(f->st, b), 0);
	assert_int_equal(store_token_work(f->st, T_A, &jobs, &boots), 0);
	assert_int_equal(jobs, 1);
	assert_int_equal(boots, 2);
}

/*
 * For a reader without a token the job list redacts each job's URL where
 * it shows (the URL, the job's name, its error), and only that job's; with
 * a token, the list is as stored.
 */
static void test_job_list_redacted(void **state)
{
	struct store_fixture *f = *state;
	static const char url[] = "https://git.example.org/people/me/linux.git";
	struct job_filter all = { .limit = 10 }, pub = { .limit = 10, .redact_urls = 1 };
	struct strbuf text = STRBUF_INIT;
	char kind[8], side[16];
	int64_t branch, plain, stage;
	json_t *doc, *j;

	branch = store_fixture_sourced_job(f->st, "branch", NULL, url, "tlb/fix", 
			     "branch tlb/fix of https://git.example.org/people/me/linux.git");
	plain = store_fixture_sourced_job(f->st, "patch", "--- a/x\n+++ b/x\n", NULL, NULL,
			    "mm: cite https://git.example.org/people/me/linux.git");
	stage = store_fixture_next_id(f->st, branch, kind, side);
	assert_int_equal(store_stage_begin(f->st, stage, "local"), 0);
	assert_int_equal(store_stage_finish(f->st, stage, "failed", "patch",
					    "cannot fetch tlb/fix from https://git.example.org/people/me/linux.git"), 0);

	assert_int_equal(store_jobs_text(f->st, &pub, &text), 0);
	doc = json_loadb(text.buf, text.len, 0, NULL);
	assert_non_null(doc);
	/* a job without a URL of its own keeps its text */
	j = json_array_get(json_object_get(doc, "jobs"), 0);
	assert_int_equal(jsonget_int_or(j, "id", 0), plain);
	assert_string_equal(jsonget_str(j, "patch_subject"),
			    "mm: cite https://git.example.org/people/me/linux.git");
	j = json_array_get(json_object_get(doc, "jobs"), 1);
	assert_int_equal(jsonget_int_or(j, "id", 0), branch);
	assert_string_equal(jsonget_str(j, "patch_url"), "https://git.example.org/(redacted)");
	assert_string_equal(jsonget_str(j, "patch_subject"),
			    "branch tlb/fix of https://git.example.org/(redacted)");
	assert_string_equal(jsonget_str(json_object_get(j, "error"), "message"),
			    "cannot fetch tlb/fix from https://git.example.org/(redacted)");
	assert_string_equal(jsonget_str(j, "patch_ref"), "tlb/fix");
	json_decref(doc);

	strbuf_reset(&text);
	assert_int_equal(store_jobs_text(f->st, &all, &text), 0);
	doc = json_loadb(text.buf, text.len, 0, NULL);
	j = json_array_get(json_object_get(doc, "jobs"), 1);
	assert_string_equal(jsonget_str(j, "patch_url"), url);
	assert_non_null(strstr(jsonget_str(json_object_get(j, "error"), "message"), url));
	json_decref(doc);
	strbuf_release(&text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		store_fixture_test(test_job_list_total_follows_changes),
		store_fixture_test(test_job_list_text),
		store_fixture_test(test_token_rights),
		store_fixture_test(test_token_work_bisections),
		store_fixture_test(test_job_list_redacted),
	};

	return store_fixture_run_both(tests, ARRAY_SIZE(tests));
}
