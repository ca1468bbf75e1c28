#ifndef TLBLAB_KFUNC_H
#define TLBLAB_KFUNC_H

#include <jansson.h>

#include "strbuf.h"

/*
 * Kernel function time from ftrace's function profiler: for a few named
 * kernel functions, how often each ran and how long, its own time only
 * (options/graph-time off), summed over every CPU, over the measured
 * window. This sees what a timer-sampled profile cannot: in a guest without
 * a PMU, perf samples on a timer interrupt, and code that runs with
 * interrupts off (switch_mm_irqs_off, the TLB flush IPI handlers) is charged
 * to whatever runs when they are enabled again. Only the named functions
 * are traced, so the cost falls on them alone (a few hundred nanoseconds a
 * call under TCG, the same on both sides of a comparison).
 *
 * Needs root, tracefs (mounted here when it is not) and a kernel with
 * CONFIG_FUNCTION_PROFILER and CONFIG_FUNCTION_GRAPH_TRACER. What it
 * changes in tracefs (the filter, graph-time) is put back by kfunc_stop.
 */

/* The functions measured when a spec names none: the context switch's mm
 * switch and the TLB flush paths. NULL-terminated. */
extern const char *const kfunc_default_names[];

struct kfunc;

/* Starts the profiler for names (NULL-terminated); a name the kernel cannot
 * trace is left out and listed by kfunc_stop. NULL with err when there is
 * nothing to measure on this kernel (the reason, for "unavailable"). */
struct kfunc *kfunc_start(const char *const *names, struct strbuf *err);

/*
 * Stops the profiler, puts tracefs back, frees k, and returns
 * {"functions": [{"symbol", "calls", "self_ns"}], "missing": [names]}
 * (the caller owns it), or NULL with err. NULL k returns NULL.
 */
json_t *kfunc_stop(struct kfunc *k, struct strbuf *err);

/* The text of a trace_stat/function<N> file into sums: symbol -> [calls,
 * self_ns] (added to what is there). 0, or -1 when the text is not one. */
int kfunc_parse_stat(const char *text, json_t *sums);

#endif
