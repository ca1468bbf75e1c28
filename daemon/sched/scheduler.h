#ifndef TLBLAB_SCHEDULER_H
#define TLBLAB_SCHEDULER_H

#include <signal.h>

#include "strbuf.h"

/*
 * The scheduler, in the manner of Redis: one thread (the daemon's main
 * thread, inside sched_run) owns every scheduling decision; a bounded pool
 * of workers does the blocking work (SSH, builds, boots, agent runs) and
 * reports back through a pipe. The state lives in the store, so the API
 * threads only insert or flag rows and call sched_wake().
 *
 * Each pass: collect finished work (a stage done, failed as a result, or an
 * infra failure to retry on another machine, the first one marked bad),
 * pass cancel requests to running work, then start every runnable stage on
 * a machine that fits (leased in one transaction). Bad machines get a health
 * check every recheck interval and come back when it passes.
 */

struct sched;
struct store;
struct lab_config;

/* agents: the tlblab-agent binary uploaded to machines, one per arch
 * (arch_index; agents[0], x86_64's, is required; NULL for another arch:
 * the aarch64/ folder beside agents[0], as the Makefile builds it); a
 * missing one fails the work of that arch's machines only, saying so.
 * kernels_dir: the kernels/ directory (build.sh) uploaded to builders. */
int sched_create(const struct lab_config *cfg, struct store *st, const char *const agents[],
		 const char *kernels_dir, struct sched **ret, struct strbuf *err);
/* A new configuration after a reload; the old one must stay valid until
 * sched_free (running work may still use it). */
void sched_set_config(struct sched *sc, const struct lab_config *cfg);
/* The scheduler's quiet-host gate (quiet.h), for other builder work (the
 * tracker's resolves) to wait on as builds do; lives as long as sc. */
struct quiet;
struct quiet *sched_quiet(struct sched *sc);
/* Makes sched_run look at the store now. Thread- and signal-safe. */
void sched_wake(struct sched *sc);
/* Runs passes until *stop or *reload becomes non-zero (set them from a
 * signal handler and call sched_wake). Returns 0. */
int sched_run(struct sched *sc, volatile sig_atomic_t *stop, volatile sig_atomic_t *reload);
/* Stops the workers (running work is told to cancel and is waited for;
 * its stages stay running in the store, for store_recover) and frees. */
void sched_free(struct sched *sc);

#endif
