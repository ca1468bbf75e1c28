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
 * (The file was results.h. client/client_results.c is another thing: the
 * client's aggregation of a job's metrics.)
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
