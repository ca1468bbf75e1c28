#ifndef TLBLAB_INGEST_H
#define TLBLAB_INGEST_H

#include <jansson.h>
#include <stdint.h>

#include "strbuf.h"

/*
 * Turns the agent's JSON lines into store rows as they arrive. Agent output
 * is untrusted: each line is bounded (the transport cuts it), must be one
 * JSON object with a string "type", and each known type must have its
 * fields with the right types; unknown fields and unknown types are
 * ignored, so a newer agent still works. Anything else is garbage: the
 * ingest stops, keeps the offending line (cut to 400 bytes) in `bad`, and
 * the stage fails as a `workload` error.
 *
 * A row the store fails to take (an iteration, a sample, an unavailable
 * counter) also stops the ingest, with store_error set and bad saying what
 * was lost: that is the lab's failure (`infra`, the stage is retried and its
 * partial rows dropped), never the workload's, and nothing is dropped
 * silently.
 */

struct store;

struct ingest {
	struct store *st;
	int64_t job_id, stage_id;
	int spec_index;
	const char *machine, *side, *build_id, *boot_id;
	/* a sweep's vCPU count (a suite's guest_cpus), added to every
	 * iteration's params as "cpus", so the comparison has a row per
	 * count; 0: none */
	int cpus;
	/* when set, why the machine has no perf rows (pmu_rows.h): an
	 * emulated one, whose plugin counts its instructions */
	const char *pmu_why;

	/* what was seen */
	long lines, iterations, samples;
	int saw_hello, saw_result, result_ok;
	int store_error;		/* the store's error (store.h) that stopped it, or 0 */
	json_t *hello;			/* the last hello line (owned) */
	/* the stored iterations' measured windows (owned): {case, iteration,
	 * warmup, index, ops, workload}, in order; the run stage adds the
	 * QEMU plugin's instruction counts to them (insn.h) */
	json_t *windows;
	struct strbuf agent_error;	/* message of the agent's "error" line */
	struct strbuf bad;		/* why the output was refused, with the line */
};

void ingest_init(struct ingest *ig);
void ingest_release(struct ingest *ig);
/* 0, or -1 when the line is garbage or the store failed to keep what it
 * says (ig->store_error set); ig->bad says why. */
int ingest_line(struct ingest *ig, const char *line, size_t len, int truncated);

#endif
