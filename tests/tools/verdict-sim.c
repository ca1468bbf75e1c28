/*
 * verdict-sim: the shipped verdict rule, measured end to end (make bench,
 * tests/bench/b0008-verdict-sim.sh). Nothing of the rule is copied here:
 * every verdict comes from compare_sides() and every decision to add boots
 * from verdict_wants_more_boots(), on documents shaped like the ones
 * store_compare_doc() gives them (with "design": {"boots", "max_boots",
 * "look"} for the issue-11 compare, and the job in the provenance);
 * verdict-sim only reads a row's "verdict" and "headline" (and its spec,
 * case and metric, to find the shifted row) and the job's "verdict" back,
 * and counts. Three files: verdict-sim-gen.c makes the jobs' documents,
 * verdict-sim-jobs.c runs the jobs, this one reports and is the command
 * (verdict-sim.h says what they share).
 *
 * The sequential design is the scheduler's: `boots` per side, compare,
 * and when verdict_wants_more_boots() says so, boots up to `max_boots`
 * (all at once, as sched_loop.c adds them) and compare again; the second
 * comparison is the job's result. --fixed N runs N boots and looks once.
 * The power conditions make the first case's headline worse by the shift
 * on the patched side; the margin search runs the A/A jobs again with a
 * wider same_band in struct compare_rules.
 */
#include <malloc.h>
#include <stdarg.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "compare.h"
#include "config.h"
#include "util.h"
#include "verdict.h"
#include "verdict-sim.h"
#include "banned.h"

#define MAX_LIST 16		/* CVs, shifts, bands */

/* ---- figures ---- */

/*
 * A cell of CELL_W columns: "12.34±0.56" percent, or for a count of 0
 * "0 (<0.75)", the 95% upper bound (rule of three) beside it, and for all
 * of n "100 (>99.2)". Padded here: "±" is two bytes but one column.
 */
#define CELL_W 11
static const char *pct(char *buf, size_t len, double k, double n, double se)
{
	size_t w;
	int l;

	if (n <= 0)
		l = snprintf(buf, len, "-");
	else if (k == 0)
		l = snprintf(buf, len, "0 (<%.2g)", 300.0 / n);
	else if (k == n)
		l = snprintf(buf, len, "100 (>%.3g)", 100 - 300.0 / n);
	else
		l = snprintf(buf, len, "%.2f±%.2f", 100 * k / n, 100 * se);
	if (l < 0 || (size_t)l >= len)
		return buf;
	w = strstr(buf, "±") ? (size_t)l - 1 : (size_t)l;
	for (; w < CELL_W && (size_t)l + 1 < len; w++)
		buf[l++] = ' ';
	buf[l] = 0;
	return buf;
}

static double se_prop(double k, double n)
{
	double p = n > 0 ? k / n : 0;

	return n > 0 ? sqrt(p * (1 - p) / n) : 0;
}

/* A rate over rows: rows of one job are correlated, so the error comes
 * from the spread of the per-job counts (clustered by job). */
static void row_rate(const struct job_result *r, int n, int headline, double *ret_called,
		     double *ret_rows, double *ret_se)
{
	double called_n = 0, rows = 0, mean, ss = 0;
	int j;

	for (j = 0; j < n; j++) {
		called_n += headline ? r[j].look.hl_called : r[j].look.ct_called;
		rows += headline ? r[j].look.hl_rows : r[j].look.ct_rows;
	}
	mean = rows > 0 ? called_n / rows : 0;
	for (j = 0; j < n; j++) {
		double nr = headline ? r[j].look.hl_rows : r[j].look.ct_rows;
		double nc = headline ? r[j].look.hl_called : r[j].look.ct_called;

		ss += (nc - mean * nr) * (nc - mean * nr);
	}
	*ret_called = called_n;
	*ret_rows = rows;
	*ret_se = rows > 0 && n > 1 ? sqrt(ss * n / (n - 1)) / rows : 0;
}

static int count_verdict(const struct job_result *r, int n, int v)
{
	int j, c = 0;

	for (j = 0; j < n; j++)
		c += r[j].look.verdict == v;
	return c;
}

/* How often the first shifted row had a 95% interval, and how often it
 * covered the true change: the interval's real coverage. */
static void coverage(const struct job_result *r, int n, int *ret_have, int *ret_cover)
{
	int j;

	*ret_have = *ret_cover = 0;
	for (j = 0; j < n; j++) {
		*ret_have += r[j].look.ci_have;
		*ret_cover += r[j].look.ci_cover;
	}
}

/* The same for its equivalence interval, and the mean of the levels the
 * comparisons gave it (they differ by look) */
static void eq_coverage(const struct job_result *r, int n, int *ret_have, int *ret_cover, double *ret_level)
{
	double sum = 0;
	int j;

	*ret_have = *ret_cover = 0;
	for (j = 0; j < n; j++)
		if (r[j].look.eq_have) {
			(*ret_have)++;
			*ret_cover += r[j].look.eq_cover;
			sum += r[j].look.eq_level;
		}
	*ret_level = *ret_have ? sum / *ret_have : NAN;
}

static int count_more(const struct job_result *r, int n)
{
	int j, c = 0;

	for (j = 0; j < n; j++)
		c += r[j].look.more;
	return c;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? -1 : x > y;
}

/* median compare_sides time of the first and of the second looks */
static void times(const struct job_result *r, int n, double *ret_m1, double *ret_m2, int *ret_n2)
{
	float *t = calloc((size_t)n + 1, sizeof(*t)), *t2 = calloc((size_t)n + 1, sizeof(*t2));
	int j, n2 = 0;

	if (!t || !t2)
		abort();
	for (j = 0; j < n; j++) {
		t[j] = r[j].ms[0];
		if (r[j].ms[1] > 0)
			t2[n2++] = r[j].ms[1];
	}
	qsort(t, (size_t)n, sizeof(*t), cmp_float);
	qsort(t2, (size_t)n2, sizeof(*t2), cmp_float);
	*ret_m1 = n ? (n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2) : 0;
	*ret_m2 = n2 ? (n2 % 2 ? t2[n2 / 2] : (t2[n2 / 2 - 1] + t2[n2 / 2]) / 2) : 0;
	*ret_n2 = n2;
	free(t);
	free(t2);
}

static double realised_cv(const struct job_result *r, int n)
{
	double s = 0;
	int j;

	for (j = 0; j < n; j++)
		s += r[j].hl_var;
	return n ? sqrt(exp(s / n) - 1) : 0;
}

/* ---- the command ---- */

/* ---- the command ---- */

static int parse_list(const char *s, double scale, double *out, int *ret_n)
{
	char buf[256], *p, *end;
	int n = 0;

	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return -1;
	for (p = buf; *p; p = end) {
		char *comma = strchr(p, ',');
		double v;

		end = comma ? comma + 1 : p + strlen(p);
		if (comma)
			*comma = 0;
		if (n >= MAX_LIST || parse_double(p, &v) < 0 || !(v >= 0 && v < 1000))
			return -1;
		out[n++] = v * scale;
	}
	*ret_n = n;
	return n ? 0 : -1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: verdict-sim [options] CONFIG\n"
		"  --suite NAME        the suite to shape the jobs like (default tlb)\n"
		"  --jobs N            A/A jobs per CV (400)\n"
		"  --power-jobs N      jobs per CV and shift (--jobs; 0: no power table)\n"
		"  --cv LIST           per-boot CVs of time rows, in percent (1,2,5,10,20), on jobs\n"
		"                      without instruction rows (real machines); 0 alone: none\n"
		"  --shift LIST        score shifts in percent for power (2,3,5,10)\n"
		"  --power-cv LIST     CVs of the power table (--cv)\n"
		"  --work-cv LIST      per-boot CVs of work rows in percent (0.05,0.2,0.3,0.5,1) on\n"
		"                      emulated jobs (instruction rows; time rows at --emu-time-cv);\n"
		"                      0 alone: none\n"
		"  --work-shift LIST   kernel_insn_per_op shifts in percent (2,3,5)\n"
		"  --work-jobs N       emulated A/A jobs per work CV (--jobs)\n"
		"  --work-power-jobs N emulated jobs per work CV and shift, every case's kernel rows\n"
		"                      shifted (--power-jobs); the first case's alone: half as many\n"
		"  --emu-time-cv X     time rows' per-boot CV on emulated jobs, percent (5)\n"
		"  --wait-factor F     spin rows' CV, times the work CV (1)\n"
		"  --mode-rate R       the chance that a case's boot runs in a second mode: its work\n"
		"                      rows (kernel and user instructions) up by --mode-shift (0)\n"
		"  --mode-shift X      that mode's offset, percent (5)\n"
		"  --spread-ratio R    the patched side's per-boot sd, every row, times the base's (1):\n"
		"                      the rank intervals' coverage when the spread changes\n"
		"  --same-goal P       the emulated A/A tables' target: job same >= P percent (80 at\n"
		"                      work CVs <= 0.3%% when not given)\n"
		"  --boots N           boots per side at the first look (5)\n"
		"  --max-boots N       boots per side after the second look (VERDICT_MAX_BOOTS, 10)\n"
		"  --fixed N           N boots per side, one look\n"
		"  --rho R             weight of the boot effect shared by all rows (0.5)\n"
		"  --coupling A        weight of a case's activity in its counters (0.7)\n"
		"  --within W          iteration noise within a boot, times the CV (0.5)\n"
		"  --seed S            (1)\n"
		"  --parallel P        worker processes (2)\n"
		"  --time N            only time compare_sides on N A/A jobs at the first CV\n"
		"  --why               print on stderr, per job, its verdict, its summary and each\n"
		"                      headline row that is not same (test, change, intervals,\n"
		"                      boots in a mode): what kept a job from same\n"
		"  --dump              print job 0's first-look document and comparison (first CV,\n"
		"                      first shift unless --power-jobs 0; emulated with --work-cv X)\n"
		"                      and exit\n");
	exit(2);
}

static long arg_int(const char *opt, const char *v, long min, long max)
{
	long n;

	if (!v || parse_int_range(v, min, max, &n) < 0) {
		fprintf(stderr, "verdict-sim: %s: an integer from %ld to %ld\n", opt, min, max);
		exit(2);
	}
	return n;
}

static double arg_double(const char *opt, const char *v, double min, double max)
{
	double d;

	if (!v || parse_double(v, &d) < 0 || !(d >= min && d <= max)) {
		fprintf(stderr, "verdict-sim: %s: a number from %g to %g\n", opt, min, max);
		exit(2);
	}
	return d;
}

static void arg_list(const char *opt, const char *v, double *out, int *n)
{
	if (!v || parse_list(v, 0.01, out, n) < 0) {
		fprintf(stderr, "verdict-sim: %s: a comma-separated list of percentages\n", opt);
		exit(2);
	}
}

static struct job_result *results_new(int n)
{
	struct job_result *r = calloc((size_t)n + 1, sizeof(*r));

	if (!r)
		abort();
	return r;
}

static void run_or_die(const struct shape *sh, const struct sim_opts *o, const struct cond *c,
		       struct job_result *r)
{
	if (run_cond(sh, o, c, r) < 0) {
		fprintf(stderr, "verdict-sim: a worker failed\n");
		exit(1);
	}
}

static void cond_init(struct cond *c, const struct cfg_suite *suite, double cv, double wcv, double shift,
		      enum shift_what what, int njobs)
{
	memset(c, 0, sizeof(*c));
	c->rules = suite->rules;
	c->cv = cv;
	c->wcv = wcv;
	c->shift = shift;
	c->what = what;
	c->njobs = njobs;
}

/* A rate cell: the count as a percentage of n, with its standard error. */
#define CELL(buf, k, n) pct(buf, sizeof(buf), k, n, se_prop(k, n))

/* ---- targets: checked as they are measured, said again at the end ---- */

static struct strbuf targets = STRBUF_INIT;
static int targets_failed;

static void target(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void target(int ok, const char *fmt, ...)
{
	va_list ap;

	strbuf_addstr(&targets, ok ? "  ok    " : "  FAIL  ");
	va_start(ap, fmt);
	strbuf_vaddf(&targets, fmt, ap);
	va_end(ap);
	strbuf_addch(&targets, '\n');
	targets_failed += !ok;
}

/*
 * The A/A table over a list of CVs: of time rows on jobs without
 * instruction rows (emulated 0), or of work rows on emulated jobs (time
 * rows at time_cv). ret_same[i] and ret_false[i] get the share of jobs
 * called same, and called a regression or an improvement (the larger).
 */
static void aa_table(const struct shape *sh, const struct sim_opts *o, const struct cfg_suite *suite,
		     const double *cvs, int ncv, int emulated, double time_cv, int jobs, double same_goal,
		     double *ret_same, double *ret_false)
{
	static const int shown[] = { V_REGRESSION, V_IMPROVEMENT, V_CHANGED, V_SAME, V_INCONCLUSIVE };
	char b[7][40];
	int hl_rows = 0, ct_rows = 0, i, j, k;

	if (emulated)
		printf("\nA/A, emulated (instruction rows the headline; time rows at %g%% CV), %d jobs per work CV\n",
		       100 * time_cv, jobs);
	else
		printf("\nA/A, no instruction rows (a real machine: the scores the headline), %d jobs per CV\n", jobs);
	printf("rows called = regression, improvement or changed\n");
	printf("%5s %6s %6s %5s | %-11s %-11s %-11s | %-11s %-11s %-11s %-11s %-11s | %-11s %-11s %s\n",
	       emulated ? "wCV" : "CV", "real", "ms", "look2", "row:headln", "row:second", "job:anyrow",
	       "job:regress", "job:improve", "job:changed", "job:same", "job:inconcl", "ci covers", "eq covers",
	       "eq level");
	for (i = 0; i < ncv; i++) {
		struct cond c;
		struct job_result *r = results_new(jobs);
		double kc, nr, se, m1, m2;
		int n2, any = 0;

		int have, cover;
		double level;

		/* emulated: the first case's kernel row is the one whose
		 * interval is checked (shifted by 0, the same draws) */
		cond_init(&c, suite, emulated ? time_cv : cvs[i], emulated ? cvs[i] : 0, 0,
			  emulated ? SHIFT_KERNEL_ALL : SHIFT_SCORE, jobs);
		run_or_die(sh, o, &c, r);
		times(r, jobs, &m1, &m2, &n2);
		for (j = 0; j < jobs; j++)
			any += r[j].look.hl_called || r[j].look.ct_called;
		hl_rows = r[0].look.hl_rows;
		ct_rows = r[0].look.ct_rows;
		printf("%4g%% %5.2f%% %6.1f %4.0f%% |", 100 * cvs[i], 100 * realised_cv(r, jobs), m1,
		       100.0 * count_more(r, jobs) / jobs);
		row_rate(r, jobs, 1, &kc, &nr, &se);
		printf(" %s", pct(b[0], sizeof(b[0]), kc, nr, se));
		row_rate(r, jobs, 0, &kc, &nr, &se);
		printf(" %s", pct(b[1], sizeof(b[1]), kc, nr, se));
		printf(" %s |", CELL(b[2], any, jobs));
		for (k = 0; k < (int)ARRAY_SIZE(shown); k++)
			printf(" %s", CELL(b[3], count_verdict(r, jobs, shown[k]), jobs));
		coverage(r, jobs, &have, &cover);
		printf(" | %s", CELL(b[6], cover, have));
		eq_coverage(r, jobs, &have, &cover, &level);
		printf(" %s %.3f\n", CELL(b[6], cover, have), level);
		fflush(stdout);
		ret_same[i] = (double)count_verdict(r, jobs, V_SAME) / jobs;
		ret_false[i] = (double)(count_verdict(r, jobs, V_REGRESSION) > count_verdict(r, jobs, V_IMPROVEMENT)
			? count_verdict(r, jobs, V_REGRESSION) : count_verdict(r, jobs, V_IMPROVEMENT)) / jobs;
		target(count_verdict(r, jobs, V_REGRESSION) <= 0.01 * jobs &&
		       count_verdict(r, jobs, V_IMPROVEMENT) <= 0.01 * jobs,
		       "A/A %s at %g%% CV: job regression %.2f%%, improvement %.2f%% (goal <= 1 each)",
		       emulated ? "emulated, work rows" : "time", 100 * cvs[i],
		       100.0 * count_verdict(r, jobs, V_REGRESSION) / jobs,
		       100.0 * count_verdict(r, jobs, V_IMPROVEMENT) / jobs);
		if (emulated && cvs[i] <= 0.003 + 1e-12 && !(same_goal > 0) && !(o->mode_rate > 0))
			target(ret_same[i] >= 0.8, "A/A emulated at %g%% work CV: job same %.1f%% (goal >= 80)",
			       100 * cvs[i], 100 * ret_same[i]);
		if (emulated && same_goal > 0)
			target(ret_same[i] >= same_goal, "A/A emulated at %g%% work CV (spin rows x%g, modes 1 in "
			       "%.3g at %+g%%): job same %.1f%% (goal >= %g)", 100 * cvs[i], o->wait_factor,
			       o->mode_rate > 0 ? 1 / o->mode_rate : 0, 100 * o->mode_shift, 100 * ret_same[i],
			       100 * same_goal);
		free(r);
	}
	printf("a job has %d headline and %d other rows (context rows included, untested). real: the per-boot\n"
	       "CV of the scores as generated; ms: median compare_sides time at the first look; look2: jobs\n"
	       "that added boots (the job is then judged by its second comparison); ci covers: the share of\n"
	       "the first case's %s row's 95%% intervals (ci) that hold the true change, 0; eq covers: the\n"
	       "same for its equivalence interval (equiv_ci), whose level (mean) is eq level\n", hl_rows, ct_rows,
	       emulated ? "kernel" : "score");
}

/*
 * Emulated jobs whose every time row moved (each case's scores and times
 * worse by 20% on patched, the work rows unchanged): the headline decides
 * at the first look, and the job must not read same (issue 38: it did,
 * with all 8 time rows 15-21% apart). Printed: the job's verdicts, and how
 * often the first case's score was called.
 */
static void time_table(const struct shape *sh, const struct sim_opts *o, const struct cfg_suite *suite, double wcv,
		       double time_cv, int jobs)
{
	struct cond c;
	struct job_result *r = results_new(jobs);
	int v[V_MAX] = { 0 }, right = 0, j;
	char b[5][40];

	cond_init(&c, suite, time_cv, wcv, 0.2, SHIFT_TIME_ALL, jobs);
	run_or_die(sh, o, &c, r);
	for (j = 0; j < jobs; j++) {
		if (r[j].look.verdict >= 0 && r[j].look.verdict < V_MAX)
			v[r[j].look.verdict]++;
		right += r[j].look.shifted == V_REGRESSION;
	}
	printf("\nemulated, every case's scores and times 20%% worse on patched (time rows at %g%% CV, work rows\n"
	       "at %g%% and unchanged), %d jobs: the job's verdict, and the first case's score called\n",
	       100 * time_cv, 100 * wcv, jobs);
	printf("%-11s %-11s %-11s %-11s %-11s\n", "job:same", "job:inconcl", "job:regress", "job:changed", "score called");
	printf("%s %s %s %s %s\n", CELL(b[0], v[V_SAME], jobs), CELL(b[1], v[V_INCONCLUSIVE], jobs),
	       CELL(b[2], v[V_REGRESSION], jobs), CELL(b[3], v[V_CHANGED], jobs), CELL(b[4], right, jobs));
	target(v[V_SAME] == 0, "every time row 20%% worse, work rows unchanged: job same %.1f%% (goal 0)",
	       100.0 * v[V_SAME] / jobs);
	free(r);
}

/*
 * Power and false same: the shifted rows worse by each shift on patched,
 * per CV. right: the first shifted row called a regression; job: the job's
 * verdict regression; at 5+5: decided regression at the first look;
 * same: the job called same, and the shifted row called same (neither may
 * happen: the change is real).
 */
static void power_table(const struct shape *sh, const struct sim_opts *o, const struct cfg_suite *suite,
			const double *cvs, int ncv, double time_cv, const double *shifts, int nshift,
			enum shift_what what, int jobs)
{
	const struct sim_case *c0 = &sh->cases[0];
	struct strbuf pt = STRBUF_INIT;
	const char *key;
	json_t *v;
	int i, k, j;

	json_object_foreach(c0->params, key, v)
		if (strcmp(key, "workload") && strcmp(key, "duration")) {
			char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

			strbuf_addf(&pt, " %s=%s", key, json_is_string(v) ? json_string_value(v) : t ? t : "?");
			free(t);
		}
	if (what == SHIFT_SCORE)
		printf("\npower, no instruction rows: the score %s (%s) made worse by the shift on patched,\n",
		       c0->fams[c0->headline].name, pt.len ? pt.buf + 1 : c0->workload);
	else if (what == SHIFT_KERNEL_FIRST)
		printf("\npower, emulated (time rows at %g%% CV): %s (%s) alone up by the shift on patched,\n",
		       100 * time_cv, c0->fams[c0->kernel_insn].name, pt.len ? pt.buf + 1 : c0->workload);
	else
		printf("\npower, emulated (time rows at %g%% CV): every case's kernel_insn_per_op up by the "
		       "shift on patched,\n", 100 * time_cv);
	printf("%d jobs per cell. right: the (first) shifted row called regression; job: the job's verdict\n"
	       "regression; 5+5: the first look's comparison (5 boots a side) said regression, whether\n"
	       "or not boots were added for other rows; same: the job same / the shifted row same; ci\n"
	       "covers: the share of its 95%% intervals (ci) that hold the true change\n", jobs);
	strbuf_release(&pt);
	printf("%5s | %5s | %-11s %-11s %-11s %-11s %-11s %-11s\n", what == SHIFT_SCORE ? "CV" : "wCV", "shift",
	       "right", "job", "job at 5+5", "job:same", "row:same", "ci covers");
	for (i = 0; i < ncv; i++) {
		for (k = 0; k < nshift; k++) {
			struct cond c;
			struct job_result *r = results_new(jobs);
			int right = 0, jobreg = 0, first = 0, same = 0, rsame = 0, have, cover;
			char b[6][40];

			cond_init(&c, suite, what == SHIFT_SCORE ? cvs[i] : time_cv, what == SHIFT_SCORE ? 0 : cvs[i],
				  shifts[k], what, jobs);
			run_or_die(sh, o, &c, r);
			for (j = 0; j < jobs; j++) {
				right += r[j].look.shifted == V_REGRESSION;
				jobreg += r[j].look.verdict == V_REGRESSION;
				first += r[j].look.verdict1 == V_REGRESSION;
				same += r[j].look.verdict == V_SAME;
				rsame += r[j].look.shifted == V_SAME;
			}
			coverage(r, jobs, &have, &cover);
			printf("%4g%% | %4g%% | %s %s %s %s %s %s\n", 100 * cvs[i], 100 * shifts[k],
			       CELL(b[0], right, jobs), CELL(b[1], jobreg, jobs), CELL(b[2], first, jobs),
			       CELL(b[3], same, jobs), CELL(b[4], rsame, jobs), CELL(b[5], cover, have));
			fflush(stdout);
			if (shifts[k] >= 0.02 - 1e-12 && shifts[k] <= 0.05 + 1e-12)
				target(same <= 0.05 * jobs && rsame <= 0.05 * jobs,
				       "a real %g%% shift (%s) at %g%% CV: job same %.1f%%, row same %.1f%% (goal <= 5)",
				       100 * shifts[k], what == SHIFT_SCORE ? "score" : what == SHIFT_KERNEL_FIRST ?
				       "one kernel row" : "kernel rows", 100 * cvs[i], 100.0 * same / jobs,
				       100.0 * rsame / jobs);
			if (what == SHIFT_SCORE && fabs(shifts[k] - 0.05) < 1e-9 && fabs(cvs[i] - 0.02) < 1e-9)
				target(right >= 0.95 * jobs, "a 5%% score drop at 2%% CV: called %.1f%% (goal >= 95)",
				       100.0 * right / jobs);
			/* with modes a first look of 5 boots cannot see them
			 * (MODE_MIN_BOOTS): the goal is then in the end */
			if (what == SHIFT_KERNEL_ALL && fabs(shifts[k] - 0.02) < 1e-9 && cvs[i] <= 0.005 + 1e-12 &&
			    o->mode_rate > 0)
				target(jobreg >= 0.95 * jobs,
				       "+2%% kernel instructions per op at %g%% work CV, modes 1 in %.3g at %+g%%: job "
				       "regression in the end %.1f%% (at 5+5: %.1f%%) (goal >= 95 in the end)",
				       100 * cvs[i], 1 / o->mode_rate, 100 * o->mode_shift, 100.0 * jobreg / jobs,
				       100.0 * first / jobs);
			else if (what == SHIFT_KERNEL_ALL && fabs(shifts[k] - 0.02) < 1e-9 && cvs[i] <= 0.005 + 1e-12)
				target(first >= 0.95 * jobs,
				       "+2%% kernel instructions per op at %g%% work CV: job regression at 5+5 "
				       "boots %.1f%%, in the end %.1f%% (goal >= 95 at 5+5)", 100 * cvs[i],
				       100.0 * first / jobs, 100.0 * jobreg / jobs);
			free(r);
		}
	}
}

/* What the command line asks for: the tables' grids, and how many jobs
 * each runs; -1 until main fills in a default from another. */
struct sim_args {
	double cvs[MAX_LIST], shifts[MAX_LIST], wcvs[MAX_LIST], wshifts[MAX_LIST], pcvs[MAX_LIST];
	double emu_time_cv, same_goal;
	int ncv, nshift, npcv, nwcv, nwshift, jobs, pjobs, wjobs, wpjobs, time_n, dump;
	const char *suite_name, *config;
	struct sim_opts o;
};

static void parse_args(int argc, char **argv, struct sim_args *A)
{
	struct sim_opts *o = &A->o;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (a[0] != '-') {
			if (A->config)
				usage();
			A->config = a;
			continue;
		}
		if (!strcmp(a, "--dump")) {
			A->dump = 1;
			continue;
		}
		if (!strcmp(a, "--why")) {
			o->why = 1;
			continue;
		}
		i++;
		if (!strcmp(a, "--suite") && v)
			A->suite_name = v;
		else if (!strcmp(a, "--jobs"))
			A->jobs = (int)arg_int(a, v, 1, 1000000);
		else if (!strcmp(a, "--power-jobs"))
			A->pjobs = (int)arg_int(a, v, 0, 1000000);
		else if (!strcmp(a, "--work-jobs"))
			A->wjobs = (int)arg_int(a, v, 0, 1000000);
		else if (!strcmp(a, "--work-power-jobs"))
			A->wpjobs = (int)arg_int(a, v, 0, 1000000);
		else if (!strcmp(a, "--cv"))
			arg_list(a, v, A->cvs, &A->ncv);
		else if (!strcmp(a, "--shift"))
			arg_list(a, v, A->shifts, &A->nshift);
		else if (!strcmp(a, "--power-cv"))
			arg_list(a, v, A->pcvs, &A->npcv);
		else if (!strcmp(a, "--work-cv"))
			arg_list(a, v, A->wcvs, &A->nwcv);
		else if (!strcmp(a, "--work-shift"))
			arg_list(a, v, A->wshifts, &A->nwshift);
		else if (!strcmp(a, "--emu-time-cv"))
			A->emu_time_cv = arg_double(a, v, 0, 100) / 100;
		else if (!strcmp(a, "--wait-factor"))
			o->wait_factor = arg_double(a, v, 0, 100);
		else if (!strcmp(a, "--same-goal"))
			A->same_goal = arg_double(a, v, 0, 100) / 100;
		else if (!strcmp(a, "--mode-rate"))
			o->mode_rate = arg_double(a, v, 0, 1);
		else if (!strcmp(a, "--spread-ratio"))
			o->spread_ratio = arg_double(a, v, 0.01, 100);
		else if (!strcmp(a, "--mode-shift"))
			o->mode_shift = arg_double(a, v, 0, 100) / 100;
		else if (!strcmp(a, "--boots"))
			o->boots = (int)arg_int(a, v, 1, 100);
		else if (!strcmp(a, "--max-boots"))
			o->max_boots = (int)arg_int(a, v, 1, 100);
		else if (!strcmp(a, "--fixed"))
			o->boots = o->max_boots = (int)arg_int(a, v, 1, 100);
		else if (!strcmp(a, "--rho"))
			o->rho = arg_double(a, v, 0, 1);
		else if (!strcmp(a, "--coupling"))
			o->coupling = arg_double(a, v, 0, 1);
		else if (!strcmp(a, "--within"))
			o->within = arg_double(a, v, 0, 0.9);
		else if (!strcmp(a, "--seed"))
			o->seed = (uint64_t)arg_int(a, v, 0, 1L << 40);
		else if (!strcmp(a, "--parallel"))
			o->parallel = (int)arg_int(a, v, 1, MAX_PARALLEL);
		else if (!strcmp(a, "--time"))
			A->time_n = (int)arg_int(a, v, 1, 100000);
		else
			usage();
	}
	if (!A->config)
		usage();
	if (o->mode_rate > 0 && !(o->mode_shift > 0))
		o->mode_shift = 0.05;
	if (o->max_boots < o->boots) {
		fprintf(stderr, "verdict-sim: --max-boots %d is below --boots %d\n", o->max_boots, o->boots);
		exit(2);
	}
	if (A->ncv == 1 && A->cvs[0] == 0)
		A->ncv = 0;
	if (A->npcv < 0) {
		memcpy(A->pcvs, A->cvs, sizeof(A->cvs));
		A->npcv = A->ncv;
	}
	if (A->nwcv == 1 && A->wcvs[0] == 0)
		A->nwcv = 0;
	if (A->pjobs < 0)
		A->pjobs = A->jobs;
	if (A->wjobs < 0)
		A->wjobs = A->jobs;
	if (A->wpjobs < 0)
		A->wpjobs = A->pjobs;
}

/* --dump: one job's first-look document and its comparison, to look at */
static void run_dump(const struct shape *sh, const struct sim_args *A, const struct cfg_suite *suite)
{
	struct cond c;
	struct docgen g;
	json_t *cmp, *out;
	int emulated = A->nwcv > 0 && A->wjobs > 0;

	cond_init(&c, suite, emulated ? A->emu_time_cv : A->cvs[0], emulated ? A->wcvs[0] : 0,
		  emulated ? (A->nwshift && A->wpjobs ? A->wshifts[0] : 0) :
			     (A->nshift && A->pjobs ? A->shifts[0] : 0),
		  emulated ? SHIFT_KERNEL_ALL : SHIFT_SCORE, 1);
	docgen_init(&g, sh, &A->o, &c, 0);
	gen_boots(&g, 0, A->o.boots);
	cmp = compare_timed(g.doc, &c.rules, NULL);
	out = json_pack("{s:O,s:O,s:b}", "input", g.doc, "comparison", cmp, "wants_more_boots",
			verdict_wants_more_boots(cmp));
	json_dumpf(out, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(8));
	putchar('\n');
	json_decref(out);
	json_decref(cmp);
	docgen_release(&g);
}

/* --time N: how long compare_sides takes on N A/A jobs */
static void run_time(const struct shape *sh, const struct sim_args *A, const struct cfg_suite *suite,
		     double t_start)
{
	struct cond c;
	struct job_result *r = results_new(A->time_n);
	double m1, m2;
	int n2;

	cond_init(&c, suite, A->cvs[0], 0, 0, SHIFT_SCORE, A->time_n);
	run_or_die(sh, &A->o, &c, r);
	times(r, A->time_n, &m1, &m2, &n2);
	printf("compare_sides, suite %s, A/A at %g%% CV: median %.1f ms at %d boots per side (%d jobs)",
	       suite->name, 100 * A->cvs[0], m1, A->o.boots, A->time_n);
	if (n2)
		printf(", %.1f ms at %d (%d second looks)", m2, A->o.max_boots, n2);
	printf("; %.1f s in all, %d worker(s)\n", mono_now() - t_start, A->o.parallel);
	free(r);
}

/* the tables b0008 prints: what the noise is, then A/A, power and time */
static void run_tables(const struct shape *sh, const struct sim_args *A, const struct cfg_suite *suite,
		       double t_start)
{
	const struct sim_opts *o = &A->o;
	double aa_same[MAX_LIST], aa_false[MAX_LIST];

	printf("suite %s of %s: %zu cases; ", suite->name, A->config, sh->ncases);
	if (o->max_boots > o->boots)
		printf("%d boots per side, %d when verdict_wants_more_boots() says so\n", o->boots, o->max_boots);
	else
		printf("%d boots per side, one look\n", o->boots);
	printf("noise: log-normal per boot; boot effect shared by all rows rho %.2f, case activity "
	       "coupling %.2f,\niterations within a boot %.2f x CV; spin rows at %g x the work CV; seed %llu\n",
	       o->rho, o->coupling, o->within, o->wait_factor, (unsigned long long)o->seed);
	if (o->spread_ratio != 1)
		printf("the patched side's per-boot sd is %g x the base's\n", o->spread_ratio);
	if (o->mode_rate > 0)
		printf("two-mode noise: 1 boot in %.3g of each case runs its work rows %+g%% (a "
		       "second mode)\n", 1 / o->mode_rate, 100 * o->mode_shift);
	printf("rates in %% ± Monte-Carlo standard error (row rates clustered by job); "
	       "0 (<x): none seen, 95%% bound x\n");
	if (A->ncv && A->jobs)
		aa_table(sh, o, suite, A->cvs, A->ncv, 0, 0, A->jobs, 0, aa_same, aa_false);
	if (A->nshift && A->npcv && A->pjobs)
		power_table(sh, o, suite, A->pcvs, A->npcv, 0, A->shifts, A->nshift, SHIFT_SCORE, A->pjobs);
	if (A->nwcv && A->wjobs)
		aa_table(sh, o, suite, A->wcvs, A->nwcv, 1, A->emu_time_cv, A->wjobs, A->same_goal, aa_same,
			 aa_false);
	if (A->nwcv && A->nwshift && A->wpjobs) {
		power_table(sh, o, suite, A->wcvs, A->nwcv, A->emu_time_cv, A->wshifts, A->nwshift,
			    SHIFT_KERNEL_ALL, A->wpjobs);
		if (A->wpjobs / 2)
			power_table(sh, o, suite, A->wcvs, A->nwcv, A->emu_time_cv, A->wshifts, A->nwshift,
				    SHIFT_KERNEL_FIRST, A->wpjobs / 2);
	}
	if (A->nwcv && A->wpjobs / 2)
		time_table(sh, o, suite, A->wcvs[0], A->emu_time_cv, A->wpjobs / 2);
	printf("\ntargets (docs/statistics.md), on the point estimates above:\n%s", targets.buf);
	if (targets_failed)
		printf("b0008: %d target(s) FAILED (marked FAIL above)\n", targets_failed);
	printf("\n%.0f s in all, %d worker(s)\n", mono_now() - t_start, o->parallel);
}

int main(int argc, char **argv)
{
	struct sim_args A = {
		.cvs = { 0.01, 0.02, 0.05, 0.10, 0.20 }, .shifts = { 0.02, 0.03, 0.05, 0.10 },
		.wcvs = { 0.0005, 0.002, 0.003, 0.005, 0.01 }, .wshifts = { 0.02, 0.03, 0.05 },
		.emu_time_cv = 0.05, .ncv = 5, .nshift = 4, .npcv = -1, .nwcv = 5, .nwshift = 3, .jobs = 400,
		.pjobs = -1, .wjobs = -1, .wpjobs = -1, .suite_name = "tlb",
		.o = { .spread_ratio = 1, .boots = VERDICT_BOOTS, .max_boots = VERDICT_MAX_BOOTS, .rho = 0.5,
		       .coupling = 0.7, .within = 0.5, .wait_factor = 1, .seed = 1, .parallel = 2 },
	};
	struct strbuf err = STRBUF_INIT;
	struct lab_config *cfg = NULL;
	const struct cfg_suite *suite;
	struct shape sh;
	double t_start = mono_now();

	/* a job's documents are a few thousand small objects freed at once:
	 * without fastbins glibc skips consolidating them, a quarter of the
	 * run time otherwise (the figures are the same either way) */
	mallopt(M_MXFAST, 0);
	parse_args(argc, argv, &A);
	if (config_load(A.config, &cfg, &err) < 0) {
		fprintf(stderr, "verdict-sim: %s\n", err.buf);
		return 1;
	}
	suite = config_suite(cfg, A.suite_name);
	if (!suite) {
		fprintf(stderr, "verdict-sim: no suite %s in %s\n", A.suite_name, A.config);
		return 1;
	}
	if (shape_from_suite(&sh, suite, &err) < 0) {
		fprintf(stderr, "verdict-sim: %s\n", err.buf);
		return 1;
	}
	if (A.dump)
		run_dump(&sh, &A, suite);
	else if (A.time_n)
		run_time(&sh, &A, suite, t_start);
	else
		run_tables(&sh, &A, suite, t_start);
	shape_release(&sh);
	config_free(cfg);
	strbuf_release(&err);
	strbuf_release(&targets);
	return 0;
}
