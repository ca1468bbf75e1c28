#ifndef TLBLAB_RUNNER_H
#define TLBLAB_RUNNER_H

#include <stdio.h>

#include "spec.h"

/*
 * Runs a spec: for each case, warm-up iterations then measured ones, each a
 * window of the workload with every monitor read at its edges and sampled
 * every interval in between. Writes the protocol's JSON lines to out (one
 * object per line, flushed, from one mutex so the sampler's lines never
 * interleave with the runner's) or, with table, a human summary at the end.
 *
 * Returns 0 when every case ran, 1 when a workload failed (an "error" line
 * was written, and everything measured before it stays in the output), and
 * -1 when the output could not be written.
 */
int runner_run(const struct spec *s, FILE *out, int table);

#endif
