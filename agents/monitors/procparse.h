#ifndef TLBLAB_PROCPARSE_H
#define TLBLAB_PROCPARSE_H

#include <stddef.h>
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

/*
 * The per-CPU counts of the TLB and CAL rows are unsigned int in the kernel
 * and wrap at 2^32. Folds a fresh read of a row (now[], ncols counts) into
 * 64-bit running totals: each CPU's delta since prev[] is taken modulo 2^32
 * (a count that went down wrapped; counts above 2^32 are differenced as
 * they are), added to totals[], and prev[] becomes now[]. Returns the sum of
 * totals[], which only grows. A monitor starts with prev[] = totals[] =
 * its first read.
 */
uint64_t procparse_irq_accumulate(uint64_t *prev, const uint64_t *now, uint64_t *totals, int ncols);

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

/*
 * Whether one mapping of /proc/PID/maps covers [start, end) whole. Returns
 * 1 when one line's range contains it, 0 when none does (the range is split
 * among mappings, or partly unmapped), -EINVAL when a line does not start
 * with "START-END " in hex.
 */
int procparse_maps_whole(const char *text, uint64_t start, uint64_t end);

/*
 * Whether the kernel log (klogctl's text, "<level>[time] message" lines)
 * says that this kernel hands remote TLB flushes to its hypervisor by
 * hypercall rather than sending IPIs: PVM ("pvm-pv: remote TLB flushes via
 * PVM_HC_FLUSH_TLB_MULTI") and Hyper-V ("Hyper-V: Using hypercall for
 * remote TLB flush"). Then no CPU receives a shootdown: the TLB row of
 * /proc/interrupts, nr_tlb_remote_flush_received and the tlb_flush
 * tracepoint's remote reasons stay still however many are made. KVM's "pv
 * remote TLB flush" skips only preempted vCPUs and does not count. Returns
 * 1 and the message (without level and time, cut to len) in line, else 0.
 */
int procparse_pv_remote_flush(const char *log, char *line, size_t len);

#endif
