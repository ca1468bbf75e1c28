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
 * (all at once, as sched.c adds them) and compare again; the second
 * comparison is the job's result. --fixed N runs N boots and looks once.
 * The power conditions make the first case's headline worse by the shift
 * on the patched side; the margin search runs the A/A jobs again with a
 * wider same_band in struct compare_rules.
 */
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "compare.h"
#include "config.h"
#include "util.h"
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
		"  --cv LIST           per-boot CVs in percent (1,2,5,10,20)\n"
		"  --shift LIST        headline shifts in percent for power (2,3,5,10)\n"
		"  --power-cv LIST     CVs of the power table (--cv)\n"
		"  --bands LIST        same_band candidates in percent, ascending, bisected\n"
		"                      (3,4,5,6,8,10,12,15,20)\n"
		"  --band-cv LIST      CVs at which the candidates run on the A/A jobs (2,5)\n"
		"  --band-jobs N       the candidates run on the first N A/A jobs (--jobs; 0: none)\n"
		"  --boots N           boots per side at the first look (5)\n"
		"  --max-boots N       boots per side after the second look (9)\n"
		"  --fixed N           N boots per side, one look\n"
		"  --rho R             weight of the boot effect shared by all rows (0.5)\n"
		"  --coupling A        weight of a case's activity in its counters (0.7)\n"
		"  --within W          iteration noise within a boot, times the CV (0.5)\n"
		"  --seed S            (1)\n"
		"  --parallel P        worker processes (2)\n"
		"  --time N            only time compare_sides on N A/A jobs at the first CV\n"
		"  --dump              print job 0's first-look document and comparison (first CV,\n"
		"                      first shift unless --power-jobs 0) and exit\n");
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

static void cond_init(struct cond *c, const struct cfg_suite *suite, double cv, double shift, int njobs)
{
	memset(c, 0, sizeof(*c));
	c->rules = suite->rules;
	c->cv = cv;
	c->shift = shift;
	c->njobs = njobs;
}

/* A rate cell: the count as a percentage of n, with its standard error. */
#define CELL(buf, k, n) pct(buf, sizeof(buf), k, n, se_prop(k, n))

/* The A/A table; ret_same[i] gets the share of jobs called same at cvs[i]. */
static void aa_table(const struct shape *sh, const struct sim_opts *o, const struct cfg_suite *suite,
		     const double *cvs, int ncv, int jobs, double *ret_same)
{
	static const int shown[] = { V_REGRESSION, V_IMPROVEMENT, V_CHANGED, V_SAME, V_INCONCLUSIVE };
	char b[6][40];
	int hl_rows = 0, ct_rows = 0, i, j, k;

	printf("\nA/A (nothing changed), %d jobs per CV; rows called = regression, improvement or changed\n",
	       jobs);
	printf("%4s %6s %6s %5s | %-11s %-11s %-11s | %-11s %-11s %-11s %-11s %-11s\n", "CV", "real",
	       "ms", "look2", "row:headln", "row:counter", "job:anyrow", "job:regress", "job:improve",
	       "job:changed", "job:same", "job:inconcl");
	for (i = 0; i < ncv; i++) {
		struct cond c;
		struct job_result *r = results_new(jobs);
		double kc, nr, se, m1, m2;
		int n2, any = 0;

		cond_init(&c, suite, cvs[i], 0, jobs);
		run_or_die(sh, o, &c, r);
		times(r, jobs, &m1, &m2, &n2);
		for (j = 0; j < jobs; j++)
			any += r[j].look.hl_called || r[j].look.ct_called;
		hl_rows = r[0].look.hl_rows;
		ct_rows = r[0].look.ct_rows;
		printf("%3g%% %5.2f%% %6.1f %4.0f%% |", 100 * cvs[i], 100 * realised_cv(r, jobs), m1,
		       100.0 * count_more(r, jobs) / jobs);
		row_rate(r, jobs, 1, &kc, &nr, &se);
		printf(" %s", pct(b[0], sizeof(b[0]), kc, nr, se));
		row_rate(r, jobs, 0, &kc, &nr, &se);
		printf(" %s", pct(b[1], sizeof(b[1]), kc, nr, se));
		printf(" %s |", CELL(b[2], any, jobs));
		for (k = 0; k < (int)ARRAY_SIZE(shown); k++)
			printf(" %s", CELL(b[3], count_verdict(r, jobs, shown[k]), jobs));
		printf("\n");
		fflush(stdout);
		ret_same[i] = (double)count_verdict(r, jobs, V_SAME) / jobs;
		free(r);
	}
	printf("%-4s %6s %6s %5s | %-11s %-11s %-11s | %-11s %-11s %-11s %-11s\n", "goal", "", "", "", "",
	       "", "", "<= 1", "<= 1", "", ">= 80 at 2,5");
	printf("a job has %d headline and %d counter rows. real: the per-boot CV of the headline rows as "
	       "generated;\nms: median compare_sides time at the first look; look2: jobs that added boots "
	       "(the job is then\njudged by its second comparison)\n", hl_rows, ct_rows);
}

/* The A/A jobs of one CV under one same_band; returns the share called same. */
static double band_row(const struct shape *sh, const struct sim_opts *o, const struct cfg_suite *suite,
		       double cv, double band, int jobs)
{
	struct cond c;
	struct job_result *r = results_new(jobs);
	double kc, nr, se;
	char b[4][40];
	int same;

	cond_init(&c, suite, cv, 0, jobs);
	c.rules.same_band = band;
	run_or_die(sh, o, &c, r);
	same = count_verdict(r, jobs, V_SAME);
	row_rate(r, jobs, 1, &kc, &nr, &se);
	printf("%3g%% %4g%% %4.0f%% | %s %s %s %s\n", 100 * cv, 100 * band, 100.0 * count_more(r, jobs) / jobs,
	       CELL(b[0], same, jobs), CELL(b[1], count_verdict(r, jobs, V_REGRESSION), jobs),
	       CELL(b[2], count_verdict(r, jobs, V_IMPROVEMENT), jobs), pct(b[3], sizeof(b[3]), kc, nr, se));
	fflush(stdout);
	free(r);
	return (double)same / jobs;
}

/*
 * The narrowest candidate same_band under which 80% of the A/A jobs of a
 * CV are called same, by bisection over the candidates (the share of same
 * grows with the band). Each candidate runs whole jobs: a wider band also
 * changes which jobs take a second look.
 */
static void band_search(const struct shape *sh, const struct sim_opts *o, const struct cfg_suite *suite,
			const double *cvs, const double *aa_same, int ncv, const double *bands, int nband,
			int jobs)
{
	int i;

	printf("\nsame_band it takes: the first %d A/A jobs of a CV under candidate same_bands "
	       "(struct compare_rules),\nbisecting the candidates for the narrowest with >= 80%% same; "
	       "each decides its second looks anew\n", jobs);
	printf("%4s %5s %5s | %-11s %-11s %-11s %-11s\n", "CV", "band", "look2", "job:same", "job:regress",
	       "job:improve", "row:headln");
	for (i = 0; i < ncv; i++) {
		int lo = 0, hi = nband;	/* the answer is in [lo, hi]; hi: none */

		if (aa_same[i] >= 0.8) {
			printf("  at %g%% CV: the suite's same_band %g%% already (A/A table)\n", 100 * cvs[i],
			       100 * suite->rules.same_band);
			continue;
		}
		while (lo < hi) {
			int mid = (lo + hi) / 2;

			if (bands[mid] > suite->rules.same_band &&
			    band_row(sh, o, suite, cvs[i], bands[mid], jobs) >= 0.8)
				hi = mid;
			else
				lo = mid + 1;
		}
		if (lo == nband)
			printf("  at %g%% CV: no candidate up to %g%% gets 80%% same\n", 100 * cvs[i],
			       100 * bands[nband - 1]);
		else
			printf("  at %g%% CV: same_band %g%% (the narrowest candidate with >= 80%% same)\n",
			       100 * cvs[i], 100 * bands[lo]);
	}
}

static void power_table(const struct shape *sh, const struct sim_opts *o, const struct cfg_suite *suite,
			const double *cvs, int ncv, const double *shifts, int nshift, int jobs)
{
	const struct sim_case *c0 = &sh->cases[0];
	struct strbuf pt = STRBUF_INIT;
	char b[2][40], h[40];
	const char *key;
	json_t *v;
	int i, k, j;

	json_object_foreach(c0->params, key, v)
		if (strcmp(key, "workload") && strcmp(key, "duration")) {
			char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

			strbuf_addf(&pt, " %s=%s", key, json_is_string(v) ? json_string_value(v) : t ? t : "?");
			free(t);
		}
	printf("\npower: %s (%s) made worse by the shift on patched, %d jobs per cell;\n"
	       "right: that row is called regression; job: the job's verdict is regression\n",
	       c0->fams[c0->headline].name, pt.len ? pt.buf + 1 : c0->workload, jobs);
	strbuf_release(&pt);
	printf("%4s", "CV");
	for (k = 0; k < nshift; k++) {
		snprintf(h, sizeof(h), "%g%%: right", 100 * shifts[k]);
		printf(" | %-11s %-11s", h, "job");
	}
	printf("\n");
	for (i = 0; i < ncv; i++) {
		printf("%3g%%", 100 * cvs[i]);
		for (k = 0; k < nshift; k++) {
			struct cond c;
			struct job_result *r = results_new(jobs);
			int right = 0, jobreg = 0;

			cond_init(&c, suite, cvs[i], shifts[k], jobs);
			run_or_die(sh, o, &c, r);
			for (j = 0; j < jobs; j++) {
				right += r[j].look.shifted == V_REGRESSION;
				jobreg += r[j].look.verdict == V_REGRESSION;
			}
			printf(" | %s %s", CELL(b[0], right, jobs), CELL(b[1], jobreg, jobs));
			fflush(stdout);
			free(r);
		}
		printf("\n");
	}
	printf("goal: 5%% shift at 2%% CV: right >= 95\n");
}

int main(int argc, char **argv)
{
	double cvs[MAX_LIST] = { 0.01, 0.02, 0.05, 0.10, 0.20 }, shifts[MAX_LIST] = { 0.02, 0.03, 0.05, 0.10 };
	double pcvs[MAX_LIST], bands[MAX_LIST] = { 0.03, 0.04, 0.05, 0.06, 0.08, 0.10, 0.12, 0.15, 0.20 };
	double bcvs[MAX_LIST] = { 0.02, 0.05 }, aa_same[MAX_LIST];
	int ncv = 5, nshift = 4, npcv = -1, nband = 9, nbcv = 2, jobs = 400, pjobs = -1, bjobs = -1;
	int time_n = 0, dump = 0, i;
	struct sim_opts o = { 5, 9, 0.5, 0.7, 0.5, 1, 2 };
	const char *suite_name = "tlb", *config = NULL;
	struct strbuf err = STRBUF_INIT;
	struct lab_config *cfg = NULL;
	const struct cfg_suite *suite;
	struct shape sh;
	double t_start = mono_now();

	/* a job's documents are a few thousand small objects freed at once:
	 * without fastbins glibc skips consolidating them, a quarter of the
	 * run time otherwise (the figures are the same either way) */
	mallopt(M_MXFAST, 0);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (a[0] != '-') {
			if (config)
				usage();
			config = a;
			continue;
		}
		if (!strcmp(a, "--dump")) {
			dump = 1;
			continue;
		}
		i++;
		if (!strcmp(a, "--suite") && v)
			suite_name = v;
		else if (!strcmp(a, "--jobs"))
			jobs = (int)arg_int(a, v, 1, 1000000);
		else if (!strcmp(a, "--power-jobs"))
			pjobs = (int)arg_int(a, v, 0, 1000000);
		else if (!strcmp(a, "--band-jobs"))
			bjobs = (int)arg_int(a, v, 0, 1000000);
		else if (!strcmp(a, "--cv"))
			arg_list(a, v, cvs, &ncv);
		else if (!strcmp(a, "--shift"))
			arg_list(a, v, shifts, &nshift);
		else if (!strcmp(a, "--power-cv"))
			arg_list(a, v, pcvs, &npcv);
		else if (!strcmp(a, "--bands"))
			arg_list(a, v, bands, &nband);
		else if (!strcmp(a, "--band-cv"))
			arg_list(a, v, bcvs, &nbcv);
		else if (!strcmp(a, "--boots"))
			o.boots = (int)arg_int(a, v, 1, 100);
		else if (!strcmp(a, "--max-boots"))
			o.max_boots = (int)arg_int(a, v, 1, 100);
		else if (!strcmp(a, "--fixed"))
			o.boots = o.max_boots = (int)arg_int(a, v, 1, 100);
		else if (!strcmp(a, "--rho"))
			o.rho = arg_double(a, v, 0, 1);
		else if (!strcmp(a, "--coupling"))
			o.coupling = arg_double(a, v, 0, 1);
		else if (!strcmp(a, "--within"))
			o.within = arg_double(a, v, 0, 0.9);
		else if (!strcmp(a, "--seed"))
			o.seed = (uint64_t)arg_int(a, v, 0, 1L << 40);
		else if (!strcmp(a, "--parallel"))
			o.parallel = (int)arg_int(a, v, 1, MAX_PARALLEL);
		else if (!strcmp(a, "--time"))
			time_n = (int)arg_int(a, v, 1, 100000);
		else
			usage();
	}
	if (!config)
		usage();
	if (o.max_boots < o.boots) {
		fprintf(stderr, "verdict-sim: --max-boots %d is below --boots %d\n", o.max_boots, o.boots);
		return 2;
	}
	if (npcv < 0) {
		memcpy(pcvs, cvs, sizeof(cvs));
		npcv = ncv;
	}
	qsort(bands, (size_t)nband, sizeof(*bands), cmp_double);	/* bisected */
	if (pjobs < 0)
		pjobs = jobs;
	if (bjobs < 0)
		bjobs = jobs;
	if (config_load(config, &cfg, &err) < 0) {
		fprintf(stderr, "verdict-sim: %s\n", err.buf);
		return 1;
	}
	suite = config_suite(cfg, suite_name);
	if (!suite) {
		fprintf(stderr, "verdict-sim: no suite %s in %s\n", suite_name, config);
		return 1;
	}
	if (shape_from_suite(&sh, suite, &err) < 0) {
		fprintf(stderr, "verdict-sim: %s\n", err.buf);
		return 1;
	}

	if (dump) {
		/* one job's first-look document and its comparison, to look at */
		struct cond c;
		struct docgen g;
		json_t *cmp, *out;

		cond_init(&c, suite, cvs[0], nshift && pjobs ? shifts[0] : 0, 1);
		docgen_init(&g, &sh, &o, &c, 0);
		gen_boots(&g, 0, o.boots);
		cmp = compare_timed(g.doc, &c.rules, NULL);
		out = json_pack("{s:O,s:O,s:b}", "input", g.doc, "comparison", cmp, "wants_more_boots",
				verdict_wants_more_boots(cmp));
		json_dumpf(out, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(8));
		putchar('\n');
		json_decref(out);
		json_decref(cmp);
		docgen_release(&g);
	} else if (time_n) {
		struct cond c;
		struct job_result *r = results_new(time_n);
		double m1, m2;
		int n2;

		cond_init(&c, suite, cvs[0], 0, time_n);
		run_or_die(&sh, &o, &c, r);
		times(r, time_n, &m1, &m2, &n2);
		printf("compare_sides, suite %s, A/A at %g%% CV: median %.1f ms at %d boots per side (%d jobs)",
		       suite->name, 100 * cvs[0], m1, o.boots, time_n);
		if (n2)
			printf(", %.1f ms at %d (%d second looks)", m2, o.max_boots, n2);
		printf("; %.1f s in all, %d worker(s)\n", mono_now() - t_start, o.parallel);
		free(r);
	} else {
		printf("suite %s of %s: %zu cases; ", suite->name, config, sh.ncases);
		if (o.max_boots > o.boots)
			printf("%d boots per side, %d when verdict_wants_more_boots() says so\n", o.boots,
			       o.max_boots);
		else
			printf("%d boots per side, one look\n", o.boots);
		printf("noise: log-normal per boot; boot effect shared by all rows rho %.2f, case activity "
		       "coupling %.2f,\niterations within a boot %.2f x CV; seed %llu\n", o.rho, o.coupling,
		       o.within, (unsigned long long)o.seed);
		printf("rates in %% ± Monte-Carlo standard error (row rates clustered by job); "
		       "0 (<x): none seen, 95%% bound x\n");
		aa_table(&sh, &o, suite, cvs, ncv, jobs, aa_same);
		if (nband && nbcv && bjobs) {
			/* the band CVs' A/A share at the suite's band, where the table has it */
			double bsame[MAX_LIST];
			int b, k;

			for (b = 0; b < nbcv; b++) {
				bsame[b] = 0;
				for (k = 0; k < ncv; k++)
					if (fabs(cvs[k] - bcvs[b]) < 1e-9)
						bsame[b] = aa_same[k];
			}
			band_search(&sh, &o, suite, bcvs, bsame, nbcv, bands, nband, bjobs);
		}
		if (nshift && npcv && pjobs)
			power_table(&sh, &o, suite, pcvs, npcv, shifts, nshift, pjobs);
		printf("\n%.0f s in all, %d worker(s)\n", mono_now() - t_start, o.parallel);
	}
	shape_release(&sh);
	config_free(cfg);
	strbuf_release(&err);
	return 0;
}
