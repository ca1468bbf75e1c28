#ifndef TLBLAB_SIM_H
#define TLBLAB_SIM_H

#include <signal.h>
#include <stddef.h>

#include "strbuf.h"

/*
 * The simulated lab (docs/scale.md): a boot method `sim` and a transport
 * `sim` that run no QEMU, no build and no agent. Each stage takes a time
 * drawn from real stages' times (tests/fixtures/sim/stage-times.json,
 * which says where they were measured), multiplied by a scale factor so a
 * bench of a thousand jobs ends in minutes, and the agent's output is a
 * recorded run of the real agent replayed line by line. They are linked
 * into build/tlblabd-sim only, never into tlblabd: the registrations are
 * constructors, so linking the files is what adds the backends.
 *
 * What they share lives here (sim_lab.c): the parameters, read from the
 * environment as the process starts (before tlblabd may reset it):
 *   TLBLAB_SIM_TIMES   the stage times (JSON; required)
 *   TLBLAB_SIM_REPLAY  the recorded agent output (JSON lines; required)
 *   TLBLAB_SIM_SCALE   simulated seconds per real second (default 0.01)
 *   TLBLAB_SIM_SEED    the draws' seed (default 1)
 *   TLBLAB_SIM_LOG     a file that gets a line per simulated piece of
 *                      work, "START END KIND WHERE" (wall seconds), so a
 *                      bench can tell simulated time from the daemon's
 * and the lab's state: which kernel each simulated machine runs.
 */

enum sim_kind {
	SIM_BUILD,		/* a kernel build the builder had not made */
	SIM_BUILD_CACHED,	/* one it had (build.sh finds the build id) */
	SIM_BOOT,		/* from the boot's start to the kernel answering */
	SIM_RUN,		/* one spec's agent run */
	SIM_KIND_MAX
};

/* 0 with the lab loaded (once, for the whole process), or -1 with why. */
int sim_lab_ready(struct strbuf *why);

/* A real stage's time of kind k (seconds, drawn), times the scale. */
double sim_lab_draw(enum sim_kind k);
/* A number from the normal distribution N(0, 1), for the replay's noise. */
double sim_lab_gauss(void);

/*
 * Sleeps seconds, waking every 50 ms to look at *cancel (may be NULL) and
 * the deadline (mono_now() seconds, 0: none). 0, -ECANCELED, -ETIMEDOUT.
 * Logs "START END KIND WHERE" to TLBLAB_SIM_LOG when it ran out whole
 * (where NULL: not logged; a part of a piece logged whole).
 */
int sim_lab_work(double seconds, enum sim_kind k, const char *where, volatile sig_atomic_t *cancel,
		 double deadline);
/* The same log line for work whose time someone else spent (the replay). */
void sim_lab_log(double start, double end, enum sim_kind k, const char *where);

/* The recorded agent run: the hello line and the lines of `run`. */
const char *sim_lab_hello(void);
const char *const *sim_lab_replay(size_t *ret_n);

/*
 * The machines' kernels: a sim boot of host puts boot_id and build_id
 * here, its stop takes them away; the transport answers /proc/cmdline
 * and /proc/version from them. 0, or -1 when host is not booted.
 */
void sim_lab_boot(const char *host, const char *boot_id, const char *build_id);
void sim_lab_halt(const char *host);
int sim_lab_kernel(const char *host, struct strbuf *cmdline, struct strbuf *version);

/* 1 the first time a builder is asked for build_id (then it is built),
 * 0 after: build.sh would find it. */
int sim_lab_new_build(const char *build_id);

#endif
