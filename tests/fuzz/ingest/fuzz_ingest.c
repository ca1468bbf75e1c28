/*
 * Agent output ingest (daemon/stages/ingest.h) on any bytes: the input is the
 * agent's stdout, cut into lines as the run stage cuts it (at most
 * LINE_MAX bytes a line, longer ones marked truncated), fed to one ingest
 * until a line is refused. The rows go to a real store on a temporary
 * file, with a run job whose stage they belong to.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest.h"
#include "store.h"
#include "banned.h"

#define LINE_MAX_FUZZ (4u << 20)	/* run.c: AGENT_MAX_LINE */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct store *st;
static int64_t job_id, stage_id;
static char dir[64];

/* The store's file and SQLite's beside it, then their directory. */
static void cleanup(void)
{
	static const char *const files[] = { "f.db", "f.db-wal", "f.db-shm" };
	char path[128];
	size_t i;

	store_close(st);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct strbuf err = STRBUF_INIT, path = STRBUF_INIT;
	struct stage_plan plan = { "run", NULL, 0, 60, 0 };
	json_t *suite = json_pack("[{s:s}]", "workload", "mprotect");
	struct job_request req = { .kind = "run", .suite = "tlb", .suite_json = suite, .boots = 1 };

	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "/tmp/tlblab-fuzz.XXXXXX");
	if (!mkdtemp(dir))
		abort();
	strbuf_addf(&path, "%s/f.db", dir);
	if (store_open(path.buf, &st, &err) < 0 || store_job_create(st, &req, &plan, 1, &job_id, &err) < 0) {
		fprintf(stderr, "fuzz_ingest: %s\n", err.buf);
		abort();
	}
	stage_id = store_stage_next(st, job_id, -1);
	if (stage_id <= 0)
		abort();
	atexit(cleanup);
	json_decref(suite);
	strbuf_release(&path);
	strbuf_release(&err);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	struct ingest ig;

	ingest_init(&ig);
	ig.st = st;
	ig.job_id = job_id;
	ig.stage_id = stage_id;
	ig.machine = "m1";
	ig.side = "base";
	ig.build_id = "b1";
	ig.boot_id = "boot1";
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		int truncated = len > LINE_MAX_FUZZ;

		if (ingest_line(&ig, p, truncated ? LINE_MAX_FUZZ : len, truncated) < 0) {
			if (!ig.bad.len)
				abort();	/* a refusal always says why */
			break;
		}
		p += len + (nl != NULL);
	}
	ingest_release(&ig);
	return 0;
}
