#ifndef TLBLAB_INSN_H
#define TLBLAB_INSN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

/*
 * Instruction counts per operation from the QEMU plugin
 * (agents/qemu-plugin/insn.c). The plugin writes a line at each of the
 * agent's window markers, "B|E SEQ VCPU KERNEL USER SPIN [HOSTNS CPUNS]",
 * every vCPU's counts so far, the host's monotonic clock and QEMU's CPU
 * time; the agent numbers the windows it opened from 1 in each
 * of its runs and says each iteration's window and operations. The run
 * stage reads the plugin's file before and after a spec: the markers after
 * the first read are that spec's, pair k is its window k.
 *
 * The rows: <workload>.kernel_insn_per_op, .user_insn_per_op (class work:
 * emulated instructions, not hardware cycles) and .spin_insn_per_op (class
 * wait: instructions in blocks with a spin-wait hint), and
 * .host_ns_per_op and .host_cpu_ns_per_op (class time: the host's
 * wall-clock ns and QEMU's host CPU ns per operation; a plugin without the
 * clock columns makes them unavailable).
 *
 * With the plugin's TLB model on (docs/tlb-model.md) four more columns
 * follow the clocks, and the rows .dtlb_miss_per_op and .itlb_miss_per_op
 * (page walks), .tlb_lost_per_op (translations invalidated while present)
 * and .tlb_inval_received_per_op (invalidations from other vCPUs): class
 * work. Each vCPU's own four follow (" vI=D,I,L,R"), and, from plugins
 * that attribute each block to the vCPU running it, its own kernel, user
 * and spin instructions (" vI=D,I,L,R,K,U,S"): the rows count the
 * workload's vCPUs (the CPUs the agent says it ran on; the guest's CPU
 * numbers are QEMU's vCPU indices), and a neighbour's TLB rows count
 * apart as neighbour.<its workload>.<row> per operation of its own. The
 * instruction rows of a window with a neighbour need the per-vCPU
 * instructions: the machine's count would add the neighbour's work, so
 * without them they are unavailable, with that reason. Without them
 * the rows are unavailable, with the plugin's "# tlb unavailable: WHY" or
 * the model being off as the reason. All lower is better.
 */

enum insn_class { INSN_KERNEL, INSN_USER, INSN_SPIN, INSN_CLASS_MAX };

/* the columns of a marker: the three classes, the host's clocks, the TLB
 * model's counts */
enum {
	INSN_HOST_NS = INSN_CLASS_MAX, INSN_HOST_CPU_NS,
	INSN_DTLB_MISS, INSN_ITLB_MISS, INSN_TLB_LOST, INSN_TLB_RECEIVED,
	INSN_COLS
};
#define INSN_TLB_N (INSN_COLS - INSN_DTLB_MISS)
/* vCPUs a marker line may count one by one */
#define INSN_VCPU_MAX 64
/* a set of vCPUs: bit i is vCPU i */
#define INSN_ALL_VCPUS UINT64_MAX

struct insn_window {
	uint64_t begin[INSN_COLS], end[INSN_COLS];
	int have_host;		/* both markers had the host's clocks */
	int have_tlb;		/* and the TLB model's counts; if not, why: */
	char tlb_why[200];
	int nvcpu;		/* vCPUs both markers counted one by one (0: none) */
	uint64_t vcpu_begin[INSN_VCPU_MAX][INSN_TLB_N], vcpu_end[INSN_VCPU_MAX][INSN_TLB_N];
	int have_vinsn;		/* and their instructions, by the vCPU running them */
	uint64_t vinsn_begin[INSN_VCPU_MAX][INSN_CLASS_MAX], vinsn_end[INSN_VCPU_MAX][INSN_CLASS_MAX];
};

/*
 * The plugin's file: ret_markers gets how many marker lines it has. Lines
 * are checked: a malformed one is an error (err names the line).
 */
int insn_count_markers(const char *text, size_t *ret_markers, struct strbuf *err);

/*
 * The windows whose markers come after the first `skip` markers of text:
 * B then E, in order. *ret (owned by the caller, free()) gets *ret_n
 * windows. -1 with err when a line is malformed, a B is not followed by
 * an E, or a count went backwards (a counter wrapped or the plugin
 * restarted): nothing of that spec is then trusted.
 */
int insn_windows(const char *text, size_t skip, struct insn_window **ret, size_t *ret_n,
		 struct strbuf *err);

/*
 * Adds the per-op rows of window w with ops operations to metrics and
 * their unit/direction to info, named after workload (the host row only
 * when the window has the host clock; else it goes to unavailable with the
 * reason); the rows count the vCPUs of the set vcpus (INSN_ALL_VCPUS:
 * every one), the instruction rows when the plugin counted them by vCPU,
 * else the machine's, unless `shared` (a neighbour ran in the window:
 * then they are unavailable). -1 with err when ops is not above 0.
 */
int insn_metrics(const struct insn_window *w, double ops, const char *workload, uint64_t vcpus, int shared,
		 json_t *metrics, json_t *info, json_t *unavailable, struct strbuf *err);

/* The TLB rows alone, "<prefix>.<row>", over the vCPUs of the set vcpus
 * and ops operations (a neighbour's: its vCPUs, its operations). */
void insn_tlb_metrics(const struct insn_window *w, double ops, const char *prefix, uint64_t vcpus,
		      json_t *metrics, json_t *info, json_t *unavailable);

/* Adds "<workload>.<row>": why to unavailable, for every row. */
void insn_unavailable(const char *workload, const char *why, json_t *unavailable);

#endif
