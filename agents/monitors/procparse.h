#ifndef TLBLAB_PROCPARSE_H
#define TLBLAB_PROCPARSE_H

#include <stdint.h>

/*
 * Parsers for the text the kernel exports under /proc. Pure functions over a
 * NUL-terminated buffer, so they are tested against fixtures from machines we
 * do not have (many CPUs, arm64 without a TLB line, truncated reads).
 *
 * Return values: 0 found, -ENOENT when the row does not exist on this kernel
 * (the caller reports the counter as unavailable), -EINVAL when the row exists
 * but is malformed or truncated.
 */

#define PROC_MAX_CPUS 4096

/*
 * Reads the header of /proc/interrupts ("CPU0 CPU1 ...") into cpu_ids (the
 * kernel omits offline CPUs, so ids may have gaps). Returns the number of
 * columns (> 0), or -EINVAL when the header is missing or has more than max.
 */
int procparse_irq_header(const char *text, int *cpu_ids, int max);

/*
 * Finds the row whose label is `name` (e.g. "TLB", "CAL") and stores its
 * ncols per-CPU counts in counts[] and their sum in *ret_sum.
 */
int procparse_irq_row(const char *text, const char *name, int ncols,
		      uint64_t *counts, uint64_t *ret_sum);

/* Finds "name value" in /proc/vmstat. */
int procparse_vmstat(const char *text, const char *name, uint64_t *ret);

/*
 * Reads the aggregate "cpu" line of /proc/stat: busy ticks (everything but
 * idle and iowait) and total ticks (guest time is already inside user).
 */
int procparse_stat_cpu(const char *text, uint64_t *ret_busy, uint64_t *ret_total);

/*
 * Parses the { N, "text" } pairs of __print_symbolic(REC->reason, ...) in the
 * tlb/tlb_flush tracepoint's format file into ids and metric-friendly names
 * ("remote shootdown" becomes remote_shootdown, at most 47 characters).
 * Returns the number of reasons found (0 when there is no reason table).
 */
int procparse_tlb_flush_reasons(const char *format, int *ids, char names[][48], int max);

#endif
