#ifndef TLBLAB_FIXTURE_INGEST_H
#define TLBLAB_FIXTURE_INGEST_H

/*
 * An ingest over a real store file: a run job of one stage, begun on
 * machine m1, side base, that the agent's lines are read into.
 */
#include "ingest.h"
#include "store.h"
#include "fixture_store.h"

struct fixture {
	struct store_fixture sf;
	int64_t job, stage;
	struct ingest ig;
};

/* The fixture, its store named name (fixture_store.h). */
static int ingest_fixture_setup(void **state, const char *name)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct strbuf err = STRBUF_INIT;
	struct stage_plan plan = { "run", NULL, 0, 60, 0 };
	json_t *suite = json_pack("[{s:s}]", "workload", "mprotect");
	struct job_request req = { .kind = "run", .suite = "tlb", .suite_json = suite, .boots = 1 };

	assert_non_null(f);
	store_fixture_open(&f->sf, name);
	if (store_job_create(f->sf.st, &req, &plan, 1, &f->job, &err) < 0)
		fail_msg("store: %s", err.buf);
	f->stage = store_stage_next(f->sf.st, f->job, -1);
	assert_true(f->stage > 0);
	assert_int_equal(store_stage_begin(f->sf.st, f->stage, "m1"), 0);
	ingest_init(&f->ig);
	f->ig.st = f->sf.st;
	f->ig.job_id = f->job;
	f->ig.stage_id = f->stage;
	f->ig.machine = "m1";
	f->ig.side = "base";
	json_decref(suite);
	strbuf_release(&err);
	*state = f;
	return 0;
}

static int ingest_fixture_teardown(void **state)
{
	struct fixture *f = *state;

	ingest_release(&f->ig);
	store_fixture_close(&f->sf);
	free(f);
	return 0;
}

#endif
