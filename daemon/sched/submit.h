#ifndef TLBLAB_SUBMIT_H
#define TLBLAB_SUBMIT_H

#include <jansson.h>
#include <stddef.h>

#include "strbuf.h"

/*
 * Submitting a job: what a JOB_REQUEST (api.h, the body of POST
 * /api/v1/jobs) may hold, the stages the job runs, and whether its token
 * may queue them. Nothing here does I/O: the caller reads the body, counts
 * the token's work and stores the job (store.h: store_job_create takes the
 * request and the plan as these functions leave them).
 */

struct lab_config;
struct cfg_suite;
struct job_request;
struct stage_plan;

/*
 * Reads the JOB_REQUEST body buf[0..len) against cfg into req: only known
 * fields; a configured suite; machines and tags valid names (machines
 * configured ones); for an A/B job a configured tree, a valid base ref and
 * exactly one patch source (with a tree and base but no patch source, a
 * run job of that kernel); boots and max_boots in range, with their
 * defaults (1 for a run job; 5, growing up to 10, for an A/B job); a suite
 * that sweeps guest_cpus with a kernel to boot, on machines that can boot
 * its largest count (a machine named that cannot is named in err). req's
 * strings point into *ret_body, which the caller then owns and frees with
 * json_decref; req->patch_subject into subject. Returns 0, or -1 with err:
 * the message of the 400 answer, naming the field (*ret_body untouched).
 * tests/fuzz/api calls it with any bytes.
 */
int submit_request_parse(const struct lab_config *cfg, const char *buf, size_t len, json_t **ret_body,
			 struct job_request *req, struct strbuf *subject, struct strbuf *err);

/*
 * The arch of a job that may use these machines (names; NULL or empty: any)
 * and tags: asked, when given (an arch.h name or uname, as "aarch64"), else
 * that of the first configured machine the job may use, else x86_64. Only
 * machines of that arch take the job's stages, and its kernels are built
 * for it. NULL with err (naming the field arch) when asked is no arch, or
 * no machine the job may use has it. The returned name is static.
 */
const char *submit_job_arch(const struct lab_config *cfg, const json_t *machines, const json_t *tags,
			    const char *asked, struct strbuf *err);

/*
 * The stages of req's job, in the order they run, into *ret (the caller
 * frees it): for a run job, one run per boot; for a run job of a kernel
 * (tree and base, no patch), its build on side base, then each boot
 * followed by its run; for an A/B job, both builds, then base and patched
 * boots interleaved (ABAB...), each followed by its run. A suite that
 * sweeps guest_cpus boots each side once per count in each round, ABAB at
 * one count after the other, the count in each boot and run stage's cpus.
 * Timeouts come from suite (its run timeout) and cfg. Returns how many.
 */
size_t submit_plan(const struct lab_config *cfg, const struct cfg_suite *suite, const struct job_request *req,
		   struct stage_plan **ret);

/*
 * Whether a token that has `jobs` jobs queued or running and `boots` boot
 * stages of them not yet done may queue the n jobs whose stages are
 * plans[i] (nplans[i] each), each counted on top of the ones before: at
 * most lab.max_jobs_per_token jobs, lab.max_boots_per_token boots. Returns
 * 0, or -1 with err: why not (the message of the 429 answer; for a series,
 * it starts "the series' jobs: "). A caller that then stores the jobs
 * holds a lock across the count, this and the store, so that two submits
 * of one token cannot both pass on the last place.
 */
int submit_within_limits(const struct lab_config *cfg, int jobs, int boots, struct stage_plan *const *plans,
			 const size_t *nplans, size_t n, struct strbuf *err);

/*
 * A per-patch series (a request's "per_patch": true, with a patch that is
 * an mbox of 2 to SUBMIT_PER_PATCH_MAX patches; submit_request_parse sets
 * req->per_patch to {"n", "series"}): one A/B job per prefix of the
 * series, as 0-day's per-patch runs. Job k applies the series' first k
 * patches (after its cover letter) on the base and compares them with the
 * base; its subject is "[k/N] " and patch k's. The jobs run one after
 * another, and the comparison of each prefix with the one before
 * (comparison_cache.h) says which patch moved what.
 */
#define SUBMIT_PER_PATCH_MAX 16

struct per_patch_job {
	struct job_request *req;
	struct stage_plan *plan;
	size_t nplan;
	char *text;		/* the series up to patch k */
	struct strbuf subject;
	json_t *patches, *per_patch;
};

/* The jobs of req's series, k = 1..N, into *ret (released with
 * submit_per_patch_release): each a copy of req with its own patch text,
 * subject, series and plan. Returns N. */
size_t submit_per_patch(const struct lab_config *cfg, const struct cfg_suite *suite, const struct job_request *req,
			struct per_patch_job **ret);
void submit_per_patch_release(struct per_patch_job *jobs, size_t n);

#endif
