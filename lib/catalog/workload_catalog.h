#ifndef TLBLAB_WORKLOAD_CATALOG_H
#define TLBLAB_WORKLOAD_CATALOG_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

/*
 * The workloads' catalog: what the agent and the daemon both know of a
 * workload. Each workload is one row of the table in workload_catalog.c:
 * its name, its headline metric, the modes it runs in, which of the
 * parameters below a spec may give it, its default size, and the checks
 * across its parameters. The parameters are rows too (key, type, bounds,
 * whether a list of them expands to cases, where the value lands). The
 * spec parser (spec.h) reads both tables, so the daemon checks a suite
 * with exactly the agent's rules, and reads the headline's name from here
 * (compare_class.c), without linking the code that runs a workload. That
 * code is the agent's (agents/workloads/NAME.c), bound to its row by name
 * (workload.h).
 */

#define WL_MAX_WORKERS 1024
/* fault-write's rounds with vma one, unless the spec says otherwise */
#define FAULT_WRITE_ROUNDS 4096

enum wl_mode {
	WL_THREADS,
	WL_PROCESSES,
	WL_MODE_MAX
};

/* fault-write's shape: one vma for every round, or a fresh one per round */
enum wl_vma {
	WL_VMA_ONE,
	WL_VMA_PER_ROUND,
	WL_VMA_MAX
};

struct workload_def;

/* A case's parameters, as the spec parser resolved them. */
struct wl_params {
	const struct workload_def *def;	/* its row of the catalog */
	enum wl_mode mode;
	int workers;
	double duration;	/* seconds of measured window */
	uint64_t size;		/* bytes: mremap region, fault-write mapping */
	uint64_t rounds;	/* fault-write: stop after this many rounds (0: duration) */
	enum wl_vma vma;	/* fault-write's shape */
	uint32_t request_size, response_size;	/* tcp-rr */
	int nx, ny, nz;		/* stencil grid */
	char **argv;		/* exec: NULL-terminated, owned by the spec */
	char parser[32];	/* exec: how to read a score from the output */
	double timeout;		/* exec: kill the command after this many seconds */
};

/* The parameters, in the order a spec's lists expand to cases (the last
 * varying fastest). */
enum workload_param_id {
	WP_WORKLOAD,
	WP_MODE,
	WP_WORKERS,
	WP_DURATION,
	WP_SIZE,
	WP_ROUNDS,
	WP_VMA,
	WP_REQUEST_SIZE,
	WP_RESPONSE_SIZE,
	WP_GRID,
	WP_COMMAND,
	WP_PARSER,
	WP_TIMEOUT,
	WP_MAX
};
#define WP(id) (1u << WP_##id)

/* How a parameter's value is read (spec.c). The plain types land at the
 * row's offset in struct wl_params; the others have a reader of their own. */
enum workload_param_type {
	WPT_NAME,	/* the workload's name: its row */
	WPT_MODE,	/* threads or processes, of those the row allows */
	WPT_WORKERS,	/* an integer within the bounds, or "cpus" */
	WPT_SECONDS,	/* a double: a number, or one with ms, s, m or h */
	WPT_BYTES,	/* a uint64_t: an integer, or one with K, M or G */
	WPT_BYTES32,	/* the same into a uint32_t */
	WPT_COUNT,	/* a uint64_t: an integer */
	WPT_VMA,	/* one or per-round */
	WPT_GRID,	/* XS, S, M, L or NXxNYxNZ */
	WPT_COMMAND,	/* a list of strings: exec's argv */
	WPT_PARSER,	/* one of exec's output parsers */
	WPT_MAX
};

struct workload_param {
	const char *key;
	enum workload_param_type type;
	int matrix;		/* may be a list that expands to cases */
	double min, max;	/* the bounds of the plain types */
	size_t off;		/* where a plain type lands in struct wl_params */
};

/* By enum workload_param_id. */
extern const struct workload_param workload_params[WP_MAX];

struct workload_def {
	const char *name;
	const char *score;	/* headline metric, without the workload prefix */
	const char *score_unit;
	unsigned modes;		/* bit per enum wl_mode allowed */
	unsigned params;	/* WP() bits: the parameters a spec may give it */
	uint64_t size;		/* its size when the spec gives none (0: 2 MiB) */
	int no_neighbour;	/* cannot run beside a case as its neighbour */
	/* Defaults that depend on what the case gave (given: its object), after
	 * the parameters are read; those it chose are added to echo (unless
	 * NULL), so the output says which experiment ran. NULL: none. */
	void (*resolve)(struct wl_params *p, json_t *given, json_t *echo);
	/* Cross-field checks after the generic ones; -1 with err naming the
	 * field. NULL: none. */
	int (*check)(const struct wl_params *p, struct strbuf *err);
	int line;		/* its line in workload_catalog.c, for the errors */
};

/* The row called name, or NULL. */
const struct workload_def *workload_lookup(const char *name);
/* "mprotect, mremap, ...": every name, in the table's order, for messages. */
const char *workload_names(void);
/* The rows, in the table's order: for i from 0 until it returns NULL. */
const struct workload_def *workload_def_at(size_t i);
/* What is wrong with the table (a name listed twice), or NULL: the spec
 * parser then reads no spec. */
const char *workload_catalog_errors(void);

/* The CPUs this process may run on, at most WL_MAX_WORKERS (at least 1):
 * "workers: cpus", and fault-write's default. */
int workload_cpus_allowed(void);

/* "one" or "per-round"; and the shape of a name, or WL_VMA_MAX. */
const char *workload_vma_name(enum wl_vma v);
enum wl_vma workload_vma_lookup(const char *name);

/* Whether name is one of exec's output parsers (the agent's exec.c reads
 * the output with them): WORKLOAD_EXEC_PARSERS. */
int workload_exec_parser_known(const char *name);
#define WORKLOAD_EXEC_PARSERS "stress-ng, last-number or none"

#endif
