#include "workload_catalog.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util.h"
#include "banned.h"

#define MIB (1ull << 20)
#define AT(field) offsetof(struct wl_params, field)

const struct workload_param workload_params[WP_MAX] = {
	[WP_WORKLOAD] = { "workload", WPT_NAME, 0, 0, 0, 0 },
	[WP_MODE] = { "mode", WPT_MODE, 1, 0, 0, 0 },
	[WP_WORKERS] = { "workers", WPT_WORKERS, 1, 1, WL_MAX_WORKERS, AT(workers) },
	[WP_DURATION] = { "duration", WPT_SECONDS, 0, 0.1, 86400, AT(duration) },
	[WP_SIZE] = { "size", WPT_BYTES, 1, 4096, 64.0 * (1ull << 30), AT(size) },
	[WP_ROUNDS] = { "rounds", WPT_COUNT, 1, 0, 1e12, AT(rounds) },
	[WP_VMA] = { "vma", WPT_VMA, 1, 0, 0, 0 },
	[WP_REQUEST_SIZE] = { "request_size", WPT_BYTES32, 1, 1, MIB, AT(request_size) },
	[WP_RESPONSE_SIZE] = { "response_size", WPT_BYTES32, 1, 1, MIB, AT(response_size) },
	[WP_GRID] = { "grid", WPT_GRID, 1, 0, 0, 0 },
	[WP_COMMAND] = { "command", WPT_COMMAND, 0, 0, 0, 0 },
	[WP_PARSER] = { "parser", WPT_PARSER, 0, 0, 0, 0 },
	[WP_TIMEOUT] = { "timeout", WPT_SECONDS, 0, 1, 86400, AT(timeout) },
};

int workload_cpus_allowed(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 1;
	n = CPU_COUNT(&set);
	return n < 1 ? 1 : n > WL_MAX_WORKERS ? WL_MAX_WORKERS : n;
}

static const char *const vma_names[WL_VMA_MAX] = { "one", "per-round" };

const char *workload_vma_name(enum wl_vma v)
{
	return v < WL_VMA_MAX ? vma_names[v] : "?";
}

enum wl_vma workload_vma_lookup(const char *name)
{
	int v;

	for (v = 0; v < WL_VMA_MAX; v++)
		if (name && !strcmp(vma_names[v], name))
			return (enum wl_vma)v;
	return WL_VMA_MAX;
}

int workload_exec_parser_known(const char *name)
{
	static const char *const parsers[] = { "stress-ng", "last-number", "none" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(parsers); i++)
		if (!strcmp(parsers[i], name))
			return 1;
	return 0;
}

/* ---- the checks and defaults of each workload's parameters ---- */

static int mremap_check(const struct wl_params *p, struct strbuf *err)
{
	long pg = sysconf(_SC_PAGESIZE);

	if (p->size % (uint64_t)pg)
		return strbuf_seterr(err, "size: must be a multiple of the page size (%ld)", pg);
	return 0;
}

/*
 * fault-write's defaults depend on what the case gave: as many workers as
 * CPUs, and with vma one FAULT_WRITE_ROUNDS rounds in a vma of exactly as
 * many pages. The resolved shape, rounds and workers are added to the case's
 * params, so the output says which experiment ran.
 */
static void fault_write_resolve(struct wl_params *wp, json_t *given, json_t *echo)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);

	if (!json_object_get(given, "workers"))
		wp->workers = workload_cpus_allowed();
	if (wp->vma == WL_VMA_ONE) {
		if (!json_object_get(given, "rounds"))
			wp->rounds = FAULT_WRITE_ROUNDS;
		/* too many rounds for any size: fault_write_check says so */
		if (!json_object_get(given, "size") && wp->rounds <= (64ull << 30) / pg)
			wp->size = wp->rounds * pg;
	}
	if (!echo)
		return;
	if (!json_object_get(echo, "vma"))
		json_object_set_new(echo, "vma", json_string(workload_vma_name(wp->vma)));
	if (!json_object_get(echo, "rounds"))
		json_object_set_new(echo, "rounds", json_integer((json_int_t)wp->rounds));
	if (!json_object_get(echo, "workers"))
		json_object_set_new(echo, "workers", json_integer(wp->workers));
}

static int fault_write_check(const struct wl_params *p, struct strbuf *err)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE), npages = p->size / pg;

	if (p->vma == WL_VMA_PER_ROUND) {
		if (p->size < 4096)
			return strbuf_seterr(err, "size: must be at least 4096 bytes for fault-write");
		return 0;
	}
	if (p->rounds < 1)
		return strbuf_seterr(err, "rounds: must be at least 1 with vma one (the measure is the "
				     "time of that many rounds)");
	if (p->rounds > npages)
		return strbuf_seterr(err, "rounds: %llu rounds need as many untouched pages, but size %llu "
				     "holds %llu pages of %llu bytes (lower rounds, default %d, or raise size)",
				     (unsigned long long)p->rounds, (unsigned long long)p->size,
				     (unsigned long long)npages, (unsigned long long)pg, FAULT_WRITE_ROUNDS);
	return 0;
}

static int stencil_check(const struct wl_params *p, struct strbuf *err)
{
	if (p->nx - 2 < p->workers)
		return strbuf_seterr(err, "grid: %d workers need at least %d points along x",
				     p->workers, p->workers + 2);
	return 0;
}

static int exec_check(const struct wl_params *p, struct strbuf *err)
{
	if (!p->argv)
		return strbuf_seterr(err, "command: missing (exec needs the command to run)");
	return 0;
}

/* ---- the table: one row a workload ---- */

#define BOTH_MODES (1u << WL_THREADS | 1u << WL_PROCESSES)
#define THREADS (1u << WL_THREADS)
/* every workload's, and those of the ones that run for a duration */
#define COMMON (WP(WORKLOAD) | WP(MODE))
#define TIMED (COMMON | WP(WORKERS) | WP(DURATION))

/* a row, with the line it is on: a name listed twice names both */
#define WORKLOAD(...) { __VA_ARGS__, .line = __LINE__ }

static const struct workload_def workloads[] = {
	WORKLOAD(.name = "mprotect", .score = "ops_per_sec", .score_unit = "ops/s", .modes = BOTH_MODES,
	  .params = TIMED | WP(ROUNDS)),
	WORKLOAD(.name = "mremap", .score = "moves_per_sec", .score_unit = "moves/s", .modes = THREADS,
	  .params = TIMED | WP(SIZE), .size = 8 * MIB, .check = mremap_check),
	WORKLOAD(.name = "fault-write", .score = "total_sec", .score_unit = "s", .modes = THREADS,
	  .params = TIMED | WP(SIZE) | WP(ROUNDS) | WP(VMA), .resolve = fault_write_resolve,
	  .check = fault_write_check),
	WORKLOAD(.name = "tcp-rr", .score = "trans_per_sec", .score_unit = "transactions/s", .modes = BOTH_MODES,
	  .params = TIMED | WP(REQUEST_SIZE) | WP(RESPONSE_SIZE)),
	WORKLOAD(.name = "stencil", .score = "mflops", .score_unit = "MFLOPS", .modes = THREADS,
	  .params = TIMED | WP(GRID), .check = stencil_check),
	WORKLOAD(.name = "exec", .score = "score", .score_unit = "score", .modes = THREADS,
	  .params = COMMON | WP(COMMAND) | WP(PARSER) | WP(TIMEOUT), .no_neighbour = 1, .check = exec_check),
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char names_text[ARRAY_SIZE(workloads) * 24];
static char problems[256];

static void catalog_init(void)
{
	size_t i, k, len;

	for (i = 0; i < ARRAY_SIZE(workloads); i++) {
		for (k = 0; k < i && !problems[0]; k++)
			if (!strcmp(workloads[i].name, workloads[k].name))
				snprintf(problems, sizeof(problems), "%s:%d: workload '%s' listed twice (first at %s:%d)",
					 __FILE__, workloads[i].line, workloads[i].name, __FILE__, workloads[k].line);
		len = strlen(names_text);
		snprintf(names_text + len, sizeof(names_text) - len, "%s%s", len ? ", " : "", workloads[i].name);
	}
}

const struct workload_def *workload_lookup(const char *name)
{
	size_t i;

	for (i = 0; name && i < ARRAY_SIZE(workloads); i++)
		if (!strcmp(workloads[i].name, name))
			return &workloads[i];
	return NULL;
}

const struct workload_def *workload_def_at(size_t i)
{
	return i < ARRAY_SIZE(workloads) ? &workloads[i] : NULL;
}

const char *workload_names(void)
{
	pthread_once(&once, catalog_init);
	return names_text;
}

const char *workload_catalog_errors(void)
{
	pthread_once(&once, catalog_init);
	return problems[0] ? problems : NULL;
}
