#ifndef TLBLAB_RUN_H
#define TLBLAB_RUN_H

#include <jansson.h>
#include <signal.h>
#include <stdint.h>

#include "config.h"
#include "strbuf.h"

/*
 * The run stage on one leased machine: connect, check the machine (the
 * agent is uploaded when its SHA-256 differs, then must answer `hello`),
 * then run each workload spec of the suite through `tlblab-agent run
 * --spec -`, ingesting its JSON lines as they arrive.
 *
 * The outcome says how the stage ended and, for a failure, its class:
 * `infra` when the machine or the link failed (the scheduler retries on
 * another machine and marks this one bad), `workload` when the agent or a
 * workload failed or printed garbage (a result, never retried), `cancelled`.
 * A store that fails to keep what the stage must record (a run, a sample,
 * the machine's hello, the specs' outcomes) is `infra` with store_error set:
 * the stage is retried, but the machine is not to blame. A stage log line
 * the store fails to take is only lost (run_stage_log).
 */

struct store;

enum run_outcome_kind {
	RUN_DONE,
	RUN_INFRA,
	RUN_WORKLOAD,
	RUN_CANCELLED,
	RUN_OUTCOME_MAX
};

struct run_request {
	struct store *st;
	int64_t job_id, stage_id;
	const struct cfg_machine *machine;	/* borrowed, outlives the call */
	const json_t *workloads;		/* the suite's specs */
	const char *side;
	const char *build_id, *boot_id;		/* recorded with every run, may be NULL */
	int cpus;				/* a sweep's vCPU count: every run's params
						 * get "cpus" (ingest.h); 0: none */
	double deadline;			/* mono_now() seconds */
	const char *agent_local;		/* the agent binary to upload */
	const char *agent_sha256;		/* its hex digest */
	volatile sig_atomic_t *cancel;		/* set to stop as soon as possible */
	/* What the machine's kernel said so far (a booted guest's console),
	 * appended to out; NULL where there is none. Read when a spec fails,
	 * so its message carries the kernel's lines of that moment. */
	void (*console)(void *arg, struct strbuf *out);
	void *console_arg;
	/* The QEMU plugin's instruction markers so far (insn.h), into out:
	 * 0, or -1 with why when the machine has none (not emulated, the
	 * plugin off, or its file unreadable). NULL: a machine without one. */
	int (*insn)(void *arg, struct strbuf *out, struct strbuf *why);
	void *insn_arg;
};

/*
 * A spec that fails as a workload (the agent or the workload failed, or
 * printed garbage) does not stop the stage: the other specs still run, the
 * failed one's outcome and everything measured before the failure are kept,
 * and the stage ends RUN_WORKLOAD. An infra failure or a cancel stops it.
 */
struct run_outcome {
	enum run_outcome_kind kind;
	struct strbuf message;	/* for failures: what a developer can act on */
	char kernel[128];	/* the machine's kernel release, when it answered */
	/* owned: one entry per spec, {"spec", "workload", "params", "state":
	 * done|failed|not_run, "class": null|workload|infra|cancelled,
	 * "message"}; also stored with the stage as it goes */
	json_t *specs;
	int nfailed;		/* specs that failed as a workload */
	int store_error;	/* RUN_INFRA because the store failed (store.h): not
				 * the machine's fault */
};

void run_outcome_init(struct run_outcome *o);
void run_outcome_release(struct run_outcome *o);

void run_stage(const struct run_request *req, struct run_outcome *out);

/*
 * Appends text to a stage's log (store_stage_append_log). A log line is
 * not a result: when the store fails to take it, the loss is said in the
 * daemon's log, with the job and stage, and the stage goes on. For the
 * build, boot and run stages alike.
 */
void run_stage_log(struct store *st, int64_t job_id, int64_t stage_id, const char *text);

/* Connects and asks the agent for hello (uploading it if needed): the health
 * check. 0 or -1 with err; kernel gets the release. */
int run_health_check(const struct cfg_machine *m, const char *agent_local,
		     const char *agent_sha256, char *kernel, size_t kernel_len,
		     struct strbuf *err);

/* SHA-256 of a file as 64 hex characters. 0 or -1 with err. */
int run_file_sha256(const char *path, char out[65], struct strbuf *err);

#endif
