/*
 * changepoint-sim: the nightly detector (daemon/analysis/changepoint.c, the shipped
 * code) on synthetic series with known changes, for `make bench` (b0011).
 * Each scenario makes `runs` series of 200 points at level 100 with normal
 * noise, and counts: recall (a true step found within 6 points of where it
 * is), false positives (change points reported more than 6 points from any
 * true step), and how far found steps are from the truth. Scenarios: flat
 * series at three noise levels, steps of 2, 5 and 10% at 2% noise, a 5%
 * step with outliers, a slow drift, a 5% step in a drifting series, and a 5%
 * step with only 6 points after it.
 *
 *   changepoint-sim [--runs N] [--seed S]
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "changepoint.h"
#include "stats.h"
#include "util.h"
#include "banned.h"

struct scenario {
	const char *name;
	size_t n;		/* points */
	double noise;		/* relative sd */
	size_t step_at;		/* the step's first point; n for none */
	double step;		/* relative */
	double drift;		/* relative change over the n points */
	int outliers;		/* points multiplied by 3 or divided by 3 */
};

static const struct scenario scenarios[] = {
	{ "flat, 1% noise", 200, 0.01, 200, 0, 0, 0 },
	{ "flat, 2% noise", 200, 0.02, 200, 0, 0, 0 },
	{ "flat, 5% noise", 200, 0.05, 200, 0, 0, 0 },
	{ "flat, 2% noise, 4 outliers", 200, 0.02, 200, 0, 0, 4 },
	{ "drift of 4%, 1% noise", 200, 0.01, 200, 0, 0.04, 0 },
	{ "2% step, 2% noise", 200, 0.02, 120, 0.02, 0, 0 },
	{ "5% step, 2% noise", 200, 0.02, 120, 0.05, 0, 0 },
	{ "10% step, 2% noise", 200, 0.02, 120, 0.10, 0, 0 },
	{ "-5% step, 2% noise", 200, 0.02, 120, -0.05, 0, 0 },
	{ "5% step, 2% noise, 4 outliers", 200, 0.02, 120, 0.05, 0, 4 },
	{ "5% step in a drift of 4%", 200, 0.01, 120, 0.05, 0.04, 0 },
	{ "5% step, 6 points after it", 127, 0.02, 120, 0.05, 0, 0 },
};

static double normal(struct stats_rng *r)
{
	double u1 = ((stats_rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
	double u2 = ((stats_rng_next(r) >> 11) + 0.5) / 9007199254740992.0;

	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

static void make_series(const struct scenario *s, struct stats_rng *r, double *v)
{
	size_t i;
	int k;

	for (i = 0; i < s->n; i++)
		v[i] = 100 * (1 + (i >= s->step_at ? s->step : 0)) *
		       (1 + s->drift * (double)i / (double)s->n) * (1 + s->noise * normal(r));
	for (k = 0; k < s->outliers; k++) {
		size_t at = (size_t)(stats_rng_next(r) % s->n);

		v[at] = k % 2 ? v[at] / 3 : v[at] * 3;
	}
}

int main(int argc, char **argv)
{
	struct changepoint_opts o;
	uint64_t seed = 1;
	unsigned long long runs = 100;
	long lruns;
	size_t si;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--runs") && i + 1 < argc &&
		    parse_int_range(argv[i + 1], 1, 100000, &lruns) == 0) {
			runs = (unsigned long long)lruns;
			i++;
		} else if (!strcmp(argv[i], "--seed") && i + 1 < argc &&
			   parse_u64(argv[i + 1], &seed) == 0) {
			i++;
		} else {
			fprintf(stderr, "usage: changepoint-sim [--runs N] [--seed S]\n");
			return 2;
		}
	}
	changepoint_opts_init(&o);
	printf("detector: window %zu, p <= %g (%d shuffles), magnitude >= %g%%, segments >= %zu\n",
	       o.window, o.max_p, o.permutations, 100 * o.min_magnitude, o.min_segment);
	printf("%-32s %6s %8s %10s %12s\n", "scenario", "runs", "recall", "false pos", "|error| med");
	for (si = 0; si < sizeof(scenarios) / sizeof(scenarios[0]); si++) {
		const struct scenario *s = &scenarios[si];
		struct stats_rng rng;
		double *v = xcalloc(s->n, sizeof(*v)), *err = xcalloc(runs, sizeof(*err));
		unsigned long long run, found = 0, falsepos = 0, series_fp = 0;

		stats_rng_seed(&rng, seed * 1000 + si);
		for (run = 0; run < runs; run++) {
			struct changepoint *cp;
			size_t k, j;
			int hit = 0, fp = 0;

			make_series(s, &rng, v);
			if (changepoint_detect(v, s->n, &o, &cp, &k) < 0) {
				fprintf(stderr, "changepoint-sim: %s: detect failed\n", s->name);
				return 1;
			}
			for (j = 0; j < k; j++) {
				size_t d = cp[j].index > s->step_at ? cp[j].index - s->step_at :
					   s->step_at - cp[j].index;

				if (s->step_at < s->n && d <= 6 && !hit) {
					hit = 1;
					err[found] = (double)d;
				} else {
					fp++;
				}
			}
			found += hit;
			falsepos += fp;
			series_fp += fp > 0;
			free(cp);
		}
		if (s->step_at < s->n)
			printf("%-32s %6llu %7.1f%% %10llu %12.1f\n", s->name, runs,
			       100.0 * found / runs, falsepos, found ? stats_median(err, found) : NAN);
		else
			printf("%-32s %6llu %8s %10llu %12s\n", s->name, runs, "-", falsepos, "-");
		printf("  series with a false positive: %llu of %llu\n", series_fp, runs);
		free(v);
		free(err);
	}
	return 0;
}
