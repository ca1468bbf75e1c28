#ifndef TLBLAB_REPORT_H
#define TLBLAB_REPORT_H

#include <jansson.h>

#include "strbuf.h"

/*
 * The report of an A/B job, to paste into a mail or a bug: plain text,
 * every line at most REPORT_WIDTH columns, in the manner of the 0-day
 * robot's performance reports. In order: what was compared (the patch's
 * subject and where it came from, the base, the tree), the job and its
 * verdict; the machines, kernels (release, build, commit, config,
 * compiler), boots per side, the suite, the design and the rules; the
 * headline metrics (base median +- spread, patched median +- spread,
 * %change, p and the adjusted p where the comparison has it, verdict, and
 * for a row that is neither a change nor the same, how large a change is
 * ruled out and how large one it could have seen); the other metrics that
 * moved; the TLB shootdown counters per second; the profile lines that
 * moved; what failed; the comparison's notes; the commands to reproduce.
 *
 * GET /api/v1/jobs/ID/report.txt serves it and `tlblab report JOB` prints
 * that, so both say the same by construction.
 */

#define REPORT_WIDTH 72

/*
 * Appends the report of `job` (api.h's JOB, as store_job_json gives it)
 * whose comparison is `comparison` (schemas/comparison.schema.json, as
 * comparison_cache_get makes it; its "provenance" has the machine and
 * kernel facts) to out. A pure function of its input: the same documents
 * give the same text (times are printed in UTC). Fields the comparison
 * does not have (an older daemon's, or rows without p_adj) are left out,
 * not guessed; every string from the documents is cleaned
 * (strbuf_add_line_clean). Returns 0, or -1 with err when job is not an
 * A/B job or comparison has no "rows".
 */
int report_text(const json_t *job, const json_t *comparison, struct strbuf *out, struct strbuf *err);

/*
 * The report of a bisection (store_bisection_json's document), as plain
 * text a developer can paste into a reply: the first bad commit with its
 * subject and author (or why there is none), the range and the metric,
 * each end and the first bad commit with their spread and boots and the
 * verdict between the ends, every step with its two verdicts, and how to
 * measure it again with tlblab. Appended to out; its free text cleaned as
 * above. GET /api/v1/bisections/ID/report.txt serves it and the webhooks
 * get it when a bisection ends. (report_bisect.c)
 */
void report_bisect(const json_t *doc, struct strbuf *out);

#endif
