#ifndef TLBLAB_PROFILE_H
#define TLBLAB_PROFILE_H

#include <jansson.h>

#include "strbuf.h"

/*
 * A system-wide perf profile of one measured window: `perf record -a -g`
 * runs from profile_start() until profile_stop(), which turns the recording
 * into the top symbols (self and children %, from perf report) and folded
 * stacks (from perf script, folded here). Needs the perf binary; without it
 * profile_start fails with a message saying so, and the runner reports the
 * profile as unavailable.
 */

#define PROFILE_MAX_SYMBOLS 100
#define PROFILE_MAX_STACKS 500

struct profile;

/* Starts recording. Returns NULL with err when perf cannot run. The caller
 * owns the result and must pass it to profile_stop. */
struct profile *profile_start(int frequency, struct strbuf *err);

/* Ends the recording at once (SIGINT to perf) without waiting; NULL is
 * accepted. profile_stop still has to be called. */
void profile_halt(struct profile *p);

/*
 * Stops recording and summarises it as {"samples": N, "symbols": [{"symbol",
 * "self", "children"}], "folded": ["a;b;c COUNT", ...], "event": the perf
 * event sampled, "blind_spot": what that event cannot see}. Frees p (NULL is
 * accepted). Returns NULL with err when perf failed.
 */
json_t *profile_stop(struct profile *p, struct strbuf *err);

/* Parsers of perf's text output, exposed for tests. Append to arr. */
int profile_parse_report(const char *text, json_t *symbols, int max);
/* Folds perf script output into "root;...;leaf COUNT" lines, most samples
 * first, at most max; returns the number of samples seen. */
long profile_fold_script(const char *text, json_t *folded, int max);

#endif
