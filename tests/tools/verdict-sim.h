#ifndef TLBLAB_VERDICT_SIM_H
#define TLBLAB_VERDICT_SIM_H

/*
 * What the files of verdict-sim share (verdict-sim.c says what it
 * measures and how):
 *
 *   verdict-sim-gen.c   the shape of a job, from a suite of the lab config,
 *                       and the documents of its boots, with their noise
 *   verdict-sim-jobs.c  one job, the scheduler's way, and a condition's
 *                       jobs in worker processes
 *   verdict-sim.c       the figures and the command
 */
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "compare.h"
#include "config.h"
#include "strbuf.h"

#define MAX_PARALLEL 64

/* ---- the shape of a job ---- */

enum fam_kind {
	FK_SCORE,	/* a workload's metric, continuous (ops/s, or a time) */
	FK_COUNT,	/* a large counter: integer deltas, level in events/s */
	FK_SMALL,	/* a small counter: Poisson counts (ties, zeros), level in events/s */
	FK_ZERO,	/* a counter that never moves here */
	FK_PCT,		/* a share of CPU time, at most 100 */
	FK_FIXED,	/* a count fixed by the spec (fault-write's rounds) */
	FK_INSN,	/* instructions per op (TCG plugin): the work CV, only when emulated */
	FK_MAX
};

/* One metric and the rows derived from it (.per_sec, .peak_per_sec, .cpuN). */
struct fam {
	char name[96];
	const char *unit, *dir;
	enum fam_kind kind;
	double level;
	double coupling;	/* weight of the case's activity in its noise */
	int inverse;		/* a time: falls when the activity rises */
	int rates, per_cpu;
	int wait;		/* FK_INSN of class wait: the work CV times the wait factor */
};

struct sim_case {
	int spec, cas;
	char workload[32];
	json_t *params;		/* as the agent reports them (with "mode") */
	double duration;
	int iterations, warmup;
	struct fam *fams;
	size_t nfams;
	size_t headline;	/* index of the case's score fam */
	long kernel_insn;	/* index of its kernel_insn_per_op fam, or -1 */
	long spk_source;	/* fam tlb.shootdowns_per_kop is computed from, or -1 */
};

struct shape {
	const char *suite;
	struct sim_case *cases;
	size_t ncases;
	size_t nfams_max;
};

struct sim_opts {
	int boots, max_boots;	/* max_boots == boots: fixed count, one look */
	double rho, coupling, within;
	double wait_factor;	/* spin rows' CV, times the work CV */
	double mode_rate;	/* the chance that a case's boot runs in a second mode (0) */
	double mode_shift;	/* its work rows' level there, up by this (0.05: +5%) */
	double spread_ratio;	/* the patched side's per-boot sd, times the base's (1) */
	uint64_t seed;
	int parallel;
	int why;		/* --why: each job's end on stderr (why_job) */
};

enum shift_what {
	SHIFT_SCORE,		/* the first case's score */
	SHIFT_KERNEL_FIRST,	/* the first case's kernel_insn_per_op */
	SHIFT_KERNEL_ALL,	/* every case's kernel_insn_per_op */
	SHIFT_TIME_ALL,		/* every case's scores and times (emulated: the time
				 * rows), the work rows unchanged */
	SHIFT_MAX
};

struct cond {
	double cv;		/* per-boot coefficient of variation of time rows (0.02) */
	double wcv;		/* of work rows; 0: no instruction rows (a real machine) */
	double shift;		/* the shifted rows worse by this on patched */
	enum shift_what what;
	struct compare_rules rules;	/* the suite's */
	int njobs;
};

/* A job's document as its boots are generated: docgen_init, gen_boots,
 * docgen_release. */
struct docgen {
	const struct shape *sh;
	const struct sim_opts *o;
	const struct cond *c;
	int job;
	json_t *doc, *runs, *metrics;
	long long next_run;
	/* per side, case and boot: the log of the headline's per-boot median,
	 * to report the CV the generator really gave */
	double *hl_log;		/* [side][case][boot] */
	int hl_boots;
};

/* Expands the suite's specs into cases the way the agent does; -1 with
 * err filled when a spec does not parse or the suite has no cases. */
int shape_from_suite(struct shape *sh, const struct cfg_suite *suite, struct strbuf *err);
void shape_release(struct shape *sh);

/* Job `job` of condition c, no boots yet: the document store_compare_doc
 * would give for it (g->doc). */
void docgen_init(struct docgen *g, const struct shape *sh, const struct sim_opts *o,
		 const struct cond *c, int job);
void docgen_release(struct docgen *g);
/* Boots [from, to) of both sides, interleaved base, patched, base... */
void gen_boots(struct docgen *g, int from, int to);

enum verdict {
	V_REGRESSION,
	V_IMPROVEMENT,
	V_CHANGED,
	V_SAME,
	V_INCONCLUSIVE,
	V_UNAVAILABLE,
	V_MAX
};

/* What one set of rules made of one job: its last comparison's counts. */
struct look {
	signed char verdict;	/* the job's, enum verdict */
	signed char verdict1;	/* the first look's comparison's, whether or not
				 * boots were added after it */
	signed char shifted;	/* the first shifted row's verdict (the first
				 * case's score when nothing is shifted) */
	unsigned char boots;	/* per side, in the comparison that decided */
	unsigned char more;	/* verdict_wants_more_boots said yes after look 1 */
	unsigned short hl_rows, hl_called, ct_rows, ct_called;
	/* the first shifted row's 95% interval (ci): given, and covering
	 * the true change (0 when nothing is shifted) */
	unsigned char ci_have, ci_cover;
	/* its equivalence interval (equiv_ci): given, covering the true
	 * change, and the level the comparison's design gave it */
	unsigned char eq_have, eq_cover;
	float eq_level;
};

struct job_result {
	int job;
	float ms[2];		/* compare_sides time: look 1, look 2 (0: none) */
	float hl_var;		/* pooled variance of the headline's log per-boot medians */
	struct look look;
};

/* compare_sides on doc's base and patched sides, timed into *ret_ms (when
 * not NULL); exits when it fails. */
json_t *compare_timed(const json_t *doc, const struct compare_rules *rules, float *ret_ms);

/* The c->njobs jobs of condition c in o->parallel worker processes, each
 * job's result into out[job]; -1 when a worker failed. */
int run_cond(const struct shape *sh, const struct sim_opts *o, const struct cond *c,
	     struct job_result *out);

#endif
