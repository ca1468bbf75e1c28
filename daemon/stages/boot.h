#ifndef TLBLAB_BOOT_H
#define TLBLAB_BOOT_H

#include <jansson.h>
#include <signal.h>
#include <stdint.h>

#include "config.h"
#include "run.h"
#include "strbuf.h"

/*
 * The boot stage and the run stage that follows it, on one leased lab
 * machine, as one piece of work: boot the side's kernel, check that the
 * machine really runs it (the boot id in /proc/cmdline, the build's host tag
 * in /proc/version), hand the machine to the run stage, run the suite,
 * then scan the console once more and shut the guest down.
 *
 * Boot methods sit behind a table of function pointers, each registered
 * with its settings by its own file (backend.h; boot_qemu.c, boot_kexec.c,
 * boot_reboot.c): start() boots and returns the endpoint
 * the run stage reaches the booted kernel at; console() reads what the
 * kernel said (a serial console, or dmesg where there is none); stop() ends
 * the boot (kills the VM; nothing for a real machine).
 *
 * A kernel that panics, oopses during boot or never comes up is a `boot`
 * result of the job, with the console excerpt; a host that cannot start the
 * VM at all is `infra`.
 */

struct store;

enum boot_outcome_kind {
	BOOT_OK,
	BOOT_KERNEL,		/* the kernel failed: a result */
	BOOT_INFRA,
	BOOT_CANCELLED,
	BOOT_OUTCOME_MAX
};

struct boot_session;

/* What a boot's suite asks of it beyond the machine's settings. */
struct boot_ask {
	int tlb_model;		/* the plugin's TLB model (where the machine has it
				 * on request: docs/tlb-model.md) */
};

/*
 * A boot method's ops: the `ops` of its backend (backend.h), which the
 * method's file registers with its settings. The stages reach them
 * through the machine's configuration (boot_ops_of).
 */
struct boot_ops {
	const char *name;
	/* Boots kernel_path with cmdline tag boot_id on m (whose cpus may be
	 * a sweep's count), as ask says. On success *ret is a session (owned
	 * by the caller, ended with stop) and guest the machine to run on. On
	 * failure, message says why and console has the console. */
	enum boot_outcome_kind (*start)(const struct cfg_machine *m, const struct boot_ask *ask,
					const char *kernel_path,
					const char *boot_id, double deadline,
					volatile sig_atomic_t *cancel, struct boot_session **ret,
					struct cfg_machine *guest, struct strbuf *console,
					struct strbuf *message);
	/* The console so far (appended to out). */
	void (*console)(struct boot_session *s, struct strbuf *out);
	/* The instruction plugin's markers so far (insn.h), appended to out;
	 * -1 with why when there are none. NULL: a method that has none. */
	int (*insn)(struct boot_session *s, struct strbuf *out, struct strbuf *why);
	/* 1 with why (a message for the job) when the booted kernel went past
	 * a limit of the host's since the boot (QEMU: its console or plugin
	 * file reached lab.qemu_file_max), else 0. NULL: a method without. */
	int (*over_limit)(struct boot_session *s, struct strbuf *why);
	void (*stop)(struct boot_session *s);
};

/*
 * A method's ops, from its functions named after it (PREFIX_OP):
 * BOOT_OPS(toy, "toy") is `.name = "toy", .start = toy_start, .console =
 * toy_console, .stop = toy_stop`, the ops every method has. It gives the
 * members and leaves the braces to the method, so that a method with
 * optional ops names them after it, and no ops table is written out
 * member by member again:
 *
 *	static const struct boot_ops ops = { BOOT_OPS(toy, "toy") };
 *	const struct boot_ops boot_qemu = { BOOT_OPS(qemu, "qemu"),
 *					    .insn = qemu_insn, .over_limit = qemu_over_limit };
 *
 * (a method may have either optional op without the other, so a macro
 * per set of them would read worse; a member named twice is a warning,
 * -Woverride-init.)
 * The methods that restart a real machine share restart.c's session:
 * theirs is RESTART_BOOT_OPS (restart.h).
 */
#define BOOT_OPS(p, n) .name = (n), .start = p##_start, .console = p##_console, .stop = p##_stop

/* The ops of m's boot method, or NULL when it boots nothing (none). */
const struct boot_ops *boot_ops_of(const struct cfg_machine *m);


struct bootrun_request {
	struct store *st;
	const struct lab_config *cfg;
	int64_t job_id, boot_stage, run_stage;
	const struct cfg_machine *machine;
	const char *side;
	const char *build_id;
	const json_t *workloads;
	int tlb_model;		/* the suite asks for the plugin's TLB model */
	int cpus;		/* a sweep's count (the suite's guest_cpus): a QEMU
				 * guest of that many vCPUs, and the runs' param
				 * "cpus"; 0: the machine's own cpus */
	const char *agent_local, *agent_sha256;
	double deadline;
	volatile sig_atomic_t *cancel;
	/* Around the run, after the boot (the quiet-host rule, sched_loop.c):
	 * measure_begin returns -1 when the run must not start (cancelled). */
	int (*measure_begin)(void *arg, int64_t run_stage);
	void (*measure_end)(void *arg);
	void *measure_arg;
};

struct bootrun_outcome {
	enum boot_outcome_kind boot;
	int ran;			/* the machine was handed to the run stage */
	double booted_at;		/* wall time the kernel was up and checked; 0 */
	int store_error;		/* BOOT_INFRA because the store failed to keep
					 * the boot id or the handoff: not the
					 * machine's fault (store.h) */
	struct strbuf boot_message;
	struct run_outcome run;		/* valid when boot == BOOT_OK */
};

void bootrun_outcome_init(struct bootrun_outcome *o);
void bootrun_outcome_release(struct bootrun_outcome *o);
void boot_and_run(const struct bootrun_request *req, struct bootrun_outcome *out);

#endif
