#ifndef TLBLAB_COMPARISON_CACHE_H
#define TLBLAB_COMPARISON_CACHE_H

#include <jansson.h>
#include <stdint.h>

#include "strbuf.h"

/*
 * The comparison of an A/B job, computed once. compare_sides over 500 rows
 * takes a few hundred milliseconds (the bootstrap dominates), and a finished
 * job's runs never change, so the scheduler computes it when the job ends and
 * the store keeps the text together with the rules it was computed under;
 * a request for it is then a single row read. A job still running, or one
 * whose suite's rules or the daemon's analysis code (compare_source_id)
 * changed since, is computed on request (and stored again once finished).
 *
 * Its own folder, on the layer of stages/ (docs/design.md, "layers:"):
 * it reads the store and the configuration and computes with analysis/,
 * and the scheduler (when a job ends) and the API (on request) call it.
 * So it sits below sched/ and api/ and above store/ and config/: not in
 * analysis/, whose code is pure and may not include store.h or config.h;
 * not in store/, which holds the SQL and would then run the comparison;
 * not in sched/, which it does not schedule for.
 *
 * (The file was results.h, then sched/comparison_cache.h.
 * client/client_results.c is another thing: the client's aggregation of a
 * job's metrics.)
 */

struct store;
struct lab_config;

/* The comparison of A/B job `job` as JSON text in ret_doc, under the rules
 * of its suite in cfg (DESIGN.md defaults when the suite is gone).
 * Returns 0; -ENOENT when there is no such job; -EINVAL when it is not an
 * A/B job; -1 with err when the runs cannot be compared; a store error
 * (store_failed) with err when the job or its runs could not be read, or
 * when it was computed (into ret_doc) but could not be kept with the job's
 * verdict. */
int comparison_cache_get(struct store *st, const struct lab_config *cfg, int64_t job,
		       struct strbuf *ret_doc, struct strbuf *err);

/*
 * The comparison of the per-patch series job `job` belongs to (submit.h),
 * into *ret: compare_per_patch's document (each prefix against the base,
 * each patch's step) with the series' "of", "series", "jobs" (id, k,
 * state, verdict, patch_subject) and "notes". The steps are computed on
 * each call (a few hundred milliseconds each); jobs not done yet have
 * null cells. 0; -ENOENT: no such job; -EINVAL: not one of a series'
 * jobs; else a store error with err.
 */
int comparison_per_patch(struct store *st, const struct lab_config *cfg, int64_t job, json_t **ret,
			 struct strbuf *err);

#endif
