#ifndef TLBLAB_COMPARE_H
#define TLBLAB_COMPARE_H

#include <jansson.h>

#include "compare_rules.h"
#include "strbuf.h"

/*
 * Turns the stored runs of two sides into a comparison a maintainer can
 * trust. A pure function over JSON documents (the same shapes the API
 * serves), so it is tested without a daemon and reused for any two sides:
 * the base and patched sides of one A/B job, or two jobs that ran the same
 * suite (`tlblab compare --base JOB_A --patched JOB_B`).
 *
 * Input, per side: "runs" (GET /jobs/ID/runs: id, side, spec, case, params,
 * iteration, warmup, boot_id, build_id, machine, workload), "metrics"
 * (GET /jobs/ID/metrics?include_warmup=1: run, name, value, unit,
 * direction), "profiles" ([{"run", "profile": {symbols, folded}}]) and
 * "provenance" (free-form object copied to the output: job, builds, kernel
 * versions, config hashes, machines).
 *
 * Method (DESIGN.md, Statistics): warm-up iterations are dropped; within a
 * side, the iterations of one boot give one sample (their median); rows are
 * (spec, case parameters, metric), each with a class and a role
 * (compare_class.h); the test is two-sided Mann-Whitney U on the per-boot
 * samples, with a bootstrap 95% CI (2000 resamples, fixed seed) of
 * median(patched) / median(base), or for work and wait rows Welch's t on
 * their logs with a noise floor; the verdict follows the rules below
 * (verdict.h), using the metric's direction to say regression or
 * improvement. docs/statistics.md says why.
 */

/*
 * Output (schemas/comparison.schema.json is the contract): "rows", one per
 * (spec, workload, case parameters, metric) seen on either side, per-CPU
 * metrics ("<name>.cpuN") left out; "summary" (headline regressions and
 * improvements first, largest change first); "sweeps" (headline metrics of
 * cases that differ only in "workers", or in a sweep's "cpus": "axis" says
 * which, each point's "x" its value); "tlb" (shootdowns per kop and the
 * shootdown counters' per-second average and peak beside each headline
 * case); "profile_diff"; "provenance"; "failed"; "notes"; "rules";
 * "by_class" (per tested class, its lead rows' verdict and what they saw in
 * words). Each row has "class", "role", "headline" (role headline) and,
 * when tested, "family" and its adjusted p; context rows have verdict
 * "context" and no p.
 *
 * "ci" is the bootstrap interval of the ratio of medians given as percent
 * change, like "change_pct": [-3.1, 0.4] means patched/base in [0.969,
 * 1.004]. The verdict of a neutral metric that moved is "changed": it has
 * no better or worse.
 *
 * Inputs may also carry "unavailable" ({metric: why}, as the agent
 * reports it) and "failed" ([{...}], stages or runs that failed, copied to
 * the output with their side). A metric entry whose value is null is
 * unavailable for that run ("reason" says why). Runs with an "error" or a
 * "state" of failed or cancelled are listed in "failed", never measured.
 */

/* base and patched: {"runs": [...], "metrics": [...], "profiles": [...],
 * "provenance": {...}}. For one A/B job, pass the same document twice
 * with side filters "base" and "patched"; for two jobs, NULL filters.
 * Returns the comparison document (schemas/comparison.schema.json), or
 * NULL with err. The caller owns the result. */
json_t *compare_sides(const json_t *base, const char *base_side, const json_t *patched,
		      const char *patched_side, const struct compare_rules *rules, struct strbuf *err);

/*
 * The values one job's runs give the nightly series: for each (spec,
 * workload, case parameters, metric) of doc (a side document as above;
 * runs whose "side" is filter, or all when NULL), per-CPU metrics left
 * out, one object {"key", "spec", "workload", "params", "params_key" (the
 * parameters as sorted compact JSON), "metric", "unit", "direction",
 * "samples" (each boot's median of its measured iterations, in boot
 * order), "value" (their median), "lo", "hi" (the smallest and largest),
 * "boots"}, sorted by key; groups without a measured value are left out.
 * NULL with err when doc is not a side document. Caller owns the array.
 */
json_t *compare_point_values(const json_t *doc, const char *filter, struct strbuf *err);

/* The one-word verdict of a comparison document (its "verdict"):
 * regression when any headline metric regressed, else improvement,
 * changed, inconclusive, same, or unavailable when no headline metric could
 * be compared. The document's "by_class" has the same word for the lead
 * rows of each class (work, wait, time). */
const char *compare_verdict(const json_t *comparison);

/*
 * A per-patch series of n patches, lined up (submit.h): vs_base[k] the
 * comparison of the series' first k+1 patches with the base, steps[k] that
 * of the first k+1 with the first k (steps[0] is vs_base[0]); NULL where
 * a job has not ended. Returns {"rows": [one per headline row of any of
 * them: "case", "workload", "params_text", "metric", "unit", "class",
 * "direction", "vs_base" and "steps" (n cells each, {"change_pct", "ci",
 * "verdict"} or null), "moved_by" (the k, from 1, of the steps whose
 * verdict is regression, improvement or changed)], "step_verdicts" (each
 * step's verdict, or null)}.
 */
json_t *compare_per_patch(json_t *const *vs_base, json_t *const *steps, size_t n);

/* A hash of this folder's sources, made at build time (the Makefile's
 * gen/compare_source.c): a comparison kept by a daemon built from other
 * analysis code is not served again (comparison_cache.h) */
extern const char compare_source_id[];

#endif
