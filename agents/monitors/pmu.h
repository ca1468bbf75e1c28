#ifndef TLBLAB_PMU_H
#define TLBLAB_PMU_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pmu_events.h"

/*
 * The CPU's own counters, read with perf_event_open (no perf binary):
 * instructions retired in kernel mode and in user mode, and dTLB and iTLB
 * load misses. They are a real machine's work rows, as the QEMU plugin's
 * instruction counts are an emulated one's: the daemon turns each window's
 * counts into <wl>.perf_*_per_op rows (daemon/stages/pmu_rows.h).
 *
 * What is counted: every instruction of the CPUs the workload runs on,
 * system-wide (one counting event per CPU, pid -1), not only the workload's
 * own processes (inherit). A TLB patch moves work the workload's tasks never
 * run themselves: the shootdown IPIs and flushes taken on the other CPUs of
 * its set, softirq and RCU callbacks that free page tables, kworkers, the
 * idle task woken by an IPI. An inherited per-task counter sees none of
 * that. It is also what the plugin counts (every vCPU), so the rows mean the
 * same thing on both kinds of machine. The CPUs are the workload's: the
 * agent's own CPU set, less the half a neighbour runs on, whose steady
 * instructions per second would otherwise make the per-op rows a measure of
 * time. What else runs there (the agent's sampler once per interval, sshd)
 * is counted too, as on the emulated machine.
 *
 * The counters are read at a window's edges only, never for the per-second
 * samples: reading another CPU's counter sends that CPU an IPI, work that
 * would land in the window.
 *
 * An event is "pinned": it keeps its hardware counter for the whole window
 * or is put in an error state, never multiplexed into an estimate. The
 * nanoseconds an event was off its counter (time enabled minus time
 * running, or the age of an event in error state) add up in
 * perf_stat.pmu_unscheduled_ns; a window where it moved has no perf rows.
 *
 * An event the machine cannot count is unavailable, with the reason, never a
 * count of 0: no PMU (a VM without a vPMU: ENOENT), an event the PMU lacks
 * (ENOENT, EOPNOTSUPP), perf_event_paranoid (EACCES). On arm64 the kernel
 * takes a generic event only when the PMU's PMCEID registers list the PMUv3
 * event it maps to (else ENOENT); the reason then names that event, as the
 * PMU's sysfs events (which list only what PMCEID says) show it missing:
 * QEMU's TCG PMU implements INST_RETIRED only under -icount shift=N, and no
 * TLB refill event at all.
 */

/* The events and their names in the agent's output: pmu_events.h (the
 * catalog, which the daemon reads too). */

/*
 * Why an event cannot be opened, from perf_event_open's error (a positive
 * errno), kernel.perf_event_paranoid (-1000 when unknown) and whether the
 * machine has a CPU PMU at all (pmu_hw_present): one sentence into why
 * (len bytes; 200 hold every one).
 */
void pmu_open_error(int err, int paranoid, int have_pmu, char *why, size_t len);

/* 1 when sysfs_devices (normally "/sys/bus/event_source/devices") has a
 * CPU PMU: one whose events list instructions (x86) or cpu_cycles (arm64
 * PMUv3). A VM without a vPMU has only software ones. */
int pmu_hw_present(const char *sysfs_devices);

/* What one event's counter on one CPU said last (pmu_account). */
struct pmu_fd_state {
	uint64_t value;		/* the last count read */
	uint64_t lost_ns;	/* enabled - running, the last read */
	int failed;		/* it went into the error state */
	uint64_t failed_at_ns;	/* when that was first seen */
};

/*
 * One read() of a counting event whose read_format is
 * PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING: n the
 * bytes read, buf {value, enabled, running}, now_ns a monotonic clock.
 * Updates st and adds to *ret_lost_ns the time the event was off its counter
 * since it was opened: enabled - running, and for an event in error state
 * (read returns 0: a pinned event lost its counter) the time since that was
 * first seen, plus 1, so that a window that ends with it has lost time. Each
 * event's share never falls. Its count stays the last one read. Returns 0,
 * or -1 for a read that is neither (too short, an error).
 */
int pmu_account(struct pmu_fd_state *st, const uint64_t buf[3], ssize_t n, uint64_t now_ns,
		uint64_t *ret_lost_ns);

/*
 * For arm64: 1 when a PMUv3 under sysfs_devices (normally
 * "/sys/bus/event_source/devices") lists events (it has events/cpu_cycles)
 * but not the PMUv3 event the kernel's generic map gives e (its name into
 * *ret_name), so PMCEID says the PMU does not implement it; 0 otherwise
 * (no PMUv3 there, or it has it).
 */
int pmu_arm64_lacks(const char *sysfs_devices, enum pmu_event e, const char **ret_name);

#endif
