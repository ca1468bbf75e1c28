/*
 * verdict-sim's jobs, run (verdict-sim.c says what they measure): one
 * job compared the scheduler's way, and a condition's jobs spread over
 * worker processes that send their results back through pipes.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "compare.h"
#include "jsonget.h"
#include "util.h"
#include "verdict.h"
#include "verdict-sim.h"
#include "banned.h"

/* ---- one job ---- */

static const char *const verdict_names[V_MAX] = {
	"regression", "improvement", "changed", "same", "inconclusive", "unavailable",
};

static int verdict_of_string(const char *s)
{
	int v;

	for (v = 0; s && v < V_MAX; v++)
		if (!strcmp(s, verdict_names[v]))
			return v;
	return V_UNAVAILABLE;
}

static int called(int v)
{
	return v == V_REGRESSION || v == V_IMPROVEMENT || v == V_CHANGED;
}

static void read_comparison(const json_t *cmp, const struct sim_case *first, const struct cond *c,
			    struct look *l)
{
	const char *hl_metric = first->fams[c->what == SHIFT_SCORE || c->what == SHIFT_TIME_ALL ? first->headline
						: (size_t)first->kernel_insn].name;
	const json_t *row;
	size_t i;

	memset(l, 0, sizeof(*l));
	l->verdict = (signed char)verdict_of_string(jsonget_str(cmp, "verdict"));
	l->shifted = -1;
	json_array_foreach(json_object_get(cmp, "rows"), i, row) {
		int v = verdict_of_string(jsonget_str(row, "verdict"));

		if (json_is_true(json_object_get(row, "headline"))) {
			l->hl_rows++;
			l->hl_called += called(v);
		} else {
			l->ct_rows++;
			l->ct_called += called(v);
		}
		if (jsonget_int_or(row, "spec", 0) == first->spec &&
		    jsonget_int_or(row, "case", 0) == first->cas &&
		    !strcmp(jsonget_str(row, "metric") ?: "", hl_metric)) {
			const json_t *ci = json_object_get(row, "ci"), *eq = json_object_get(row, "equiv_ci");
			/* the true change of the medians, in %: the shift, in the
			 * direction it was made (worse: up for a "lower" row) */
			const char *dir = jsonget_str(row, "direction") ?: "";
			double truth = c->shift > 0 ? 100 * (strcmp(dir, "lower") ? -c->shift : c->shift) : 0;

			l->shifted = (signed char)v;
			if (json_array_size(ci) == 2) {
				l->ci_have = 1;
				l->ci_cover = json_number_value(json_array_get(ci, 0)) <= truth &&
					      json_number_value(json_array_get(ci, 1)) >= truth;
			}
			if (json_array_size(eq) == 2) {
				l->eq_have = 1;
				l->eq_cover = json_number_value(json_array_get(eq, 0)) <= truth &&
					      json_number_value(json_array_get(eq, 1)) >= truth;
				l->eq_level = (float)jsonget_num_or(json_object_get(cmp, "design"), "equiv_level", 0);
			}
		}
	}
}

json_t *compare_timed(const json_t *doc, const struct compare_rules *rules, float *ret_ms)
{
	struct strbuf err = STRBUF_INIT;
	double t0 = mono_now();
	json_t *cmp = compare_sides(doc, "base", doc, "patched", rules, &err);

	if (!cmp) {
		fprintf(stderr, "verdict-sim: compare_sides: %s\n", err.buf);
		exit(1);
	}
	if (ret_ms)
		*ret_ms = (float)(1000 * (mono_now() - t0));
	strbuf_release(&err);
	return cmp;
}

/* --why: the job's verdict and summary, and each headline row that is not
 * same, with its test, change, intervals and boots in a mode, on stderr
 * (one write per line: the workers' lines do not mix) */
static void why_job(int job, const json_t *cmp)
{
	const json_t *row;
	size_t i;

	fprintf(stderr, "job %d: %s: %s\n", job, jsonget_str(cmp, "verdict") ?: "-",
		jsonget_str(json_object_get(cmp, "summary"), "text") ?: "-");
	json_array_foreach(json_object_get(cmp, "rows"), i, row) {
		const char *v = jsonget_str(row, "verdict") ?: "-";
		char *ci, *eq, *modes;

		if (!json_is_true(json_object_get(row, "headline")) || !strcmp(v, "same"))
			continue;
		ci = json_dumps(json_object_get(row, "ci"), JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(4));
		eq = json_dumps(json_object_get(row, "equiv_ci"), JSON_ENCODE_ANY | JSON_COMPACT |
				JSON_REAL_PRECISION(4));
		modes = json_dumps(json_object_get(json_object_get(row, "mode_boots"), "set_aside"),
				   JSON_ENCODE_ANY | JSON_COMPACT);
		fprintf(stderr, "job %d:   %s %s (%s): %s, change %+.3g%%, ci %s, equiv_ci %s, set aside %s\n", job,
			v, jsonget_str(row, "metric") ?: "-",
			jsonget_str(row, "params_text") ?: "",
			jsonget_str(row, "p_method") ?: "-",
			jsonget_num_or(row, "change_pct", 0), ci ?: "-", eq ?: "-", modes ?: "-");
		free(ci);
		free(eq);
		free(modes);
	}
}

/* One job, the scheduler's way: compare the first boots; when
 * verdict_wants_more_boots says so, add the boots up to max_boots and
 * compare again. */
static void run_job(const struct shape *sh, const struct sim_opts *o, const struct cond *c, int job,
		    struct job_result *res)
{
	struct docgen g;
	json_t *cmp;
	size_t i, n = 0;
	double ss = 0;

	memset(res, 0, sizeof(*res));
	res->job = job;
	docgen_init(&g, sh, o, c, job);
	gen_boots(&g, 0, o->boots);
	cmp = compare_timed(g.doc, &c->rules, &res->ms[0]);
	read_comparison(cmp, &sh->cases[0], c, &res->look);
	res->look.verdict1 = res->look.verdict;
	res->look.boots = (unsigned char)o->boots;
	if (verdict_wants_more_boots(cmp)) {
		json_decref(cmp);
		gen_boots(&g, o->boots, o->max_boots);
		/* as the store says once boots were added (job_design): the
		 * second look, the job's boots grown to max_boots */
		json_object_set_new(json_object_get(g.doc, "design"), "look", json_integer(2));
		json_object_set_new(json_object_get(json_object_get(g.doc, "provenance"), "job"), "boots",
				    json_integer(o->max_boots));
		cmp = compare_timed(g.doc, &c->rules, &res->ms[1]);
		{
			signed char v1 = res->look.verdict1;

			read_comparison(cmp, &sh->cases[0], c, &res->look);
			res->look.verdict1 = v1;
		}
		res->look.boots = (unsigned char)o->max_boots;
		res->look.more = 1;
	}
	if (o->why)
		why_job(job, cmp);
	json_decref(cmp);
	/* the realised per-boot spread of the headline rows (first look's boots) */
	for (i = 0; i < 2 * sh->ncases; i++) {
		const double *v = g.hl_log + i * (size_t)g.hl_boots;
		double mean = 0;
		int b;

		if (o->boots < 2)
			break;
		for (b = 0; b < o->boots; b++)
			mean += v[b] / o->boots;
		for (b = 0; b < o->boots; b++)
			ss += (v[b] - mean) * (v[b] - mean);
		n += (size_t)o->boots - 1;
	}
	res->hl_var = n ? (float)(ss / (double)n) : 0;
	docgen_release(&g);
}

/* ---- running a condition in worker processes ---- */

int run_cond(const struct shape *sh, const struct sim_opts *o, const struct cond *c,
		    struct job_result *out)
{
	int fds[MAX_PARALLEL], np = o->parallel < c->njobs ? o->parallel : c->njobs, i, status, rc = 0;
	pid_t pids[MAX_PARALLEL];
	size_t got[MAX_PARALLEL], want[MAX_PARALLEL];
	struct pollfd pfd[MAX_PARALLEL];
	int open_n;

	if (np < 1)
		np = 1;
	fflush(stdout);
	for (i = 0; i < np; i++) {
		int p[2];

		if (pipe(p) < 0) {
			perror("verdict-sim: pipe");
			exit(1);
		}
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("verdict-sim: fork");
			exit(1);
		}
		if (!pids[i]) {
			int j, w;

			close(p[0]);
			for (w = 0; w < i; w++)
				close(fds[w]);
			for (j = i; j < c->njobs; j += np) {
				struct job_result r;

				run_job(sh, o, c, j, &r);
				if (write_all(p[1], &r, sizeof(r)) < 0)
					_exit(1);
			}
			_exit(0);
		}
		close(p[1]);
		fds[i] = p[0];
		got[i] = 0;
		want[i] = (size_t)((c->njobs - i + np - 1) / np) * sizeof(struct job_result);
	}
	/* results arrive in job order per worker; each goes to its job's slot */
	open_n = np;
	while (open_n > 0) {
		int nfd = 0, w;

		for (w = 0; w < np; w++)
			if (fds[w] >= 0) {
				pfd[nfd].fd = fds[w];
				pfd[nfd].events = POLLIN;
				nfd++;
			}
		if (poll(pfd, (nfds_t)nfd, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("verdict-sim: poll");
			exit(1);
		}
		for (w = 0; w < np; w++) {
			struct job_result r;
			ssize_t k;
			int q, ready = 0;

			for (q = 0; q < nfd; q++)
				if (pfd[q].fd == fds[w] && pfd[q].revents)
					ready = 1;
			if (!ready)
				continue;
			/* a record is smaller than PIPE_BUF: written and read whole */
			k = read(fds[w], &r, sizeof(r));
			if (k == (ssize_t)sizeof(r) && r.job >= 0 && r.job < c->njobs) {
				out[r.job] = r;
				got[w] += sizeof(r);
			} else if (k <= 0) {
				close(fds[w]);
				fds[w] = -1;
				open_n--;
			} else {
				fprintf(stderr, "verdict-sim: short read from a worker\n");
				exit(1);
			}
		}
	}
	for (i = 0; i < np; i++) {
		if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) ||
		    got[i] != want[i])
			rc = -1;
	}
	return rc;
}
