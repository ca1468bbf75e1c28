/*
 * tlblab-insn.so: a QEMU TCG plugin that counts the instructions each vCPU
 * executes, in three classes, and writes the counts at the agent's window
 * markers, so the lab can report work per operation that the host's speed
 * does not move.
 *
 * - kernel: translation blocks whose address has the top bit set (the upper
 *   half on x86_64, TTBR1's range on arm64);
 * - user: the other blocks;
 * - spin: blocks that contain a spin-wait hint (x86 `pause`, arm64 `yield`
 *   or `wfe`), kernel or user: the body of a cpu_relax() loop, such as the
 *   initiator of a TLB shootdown waiting in csd_lock_wait() for the other
 *   CPUs. Outside icount how long it spins follows the host's scheduling of
 *   the vCPU threads, so it is kept apart from the kernel's own work.
 *
 * Each block adds its instruction count to its class in its vCPU's own
 * slot, from a callback QEMU calls as the block starts (one cache line per
 * vCPU, written by that vCPU's thread alone: no lock). QEMU 10.0's inline
 * per-vCPU scoreboard adds would be cheaper, but with -icount they hang
 * or end the guest during boot here (seen with -cpu qemu64 and max, with
 * and without the marker scan), so the callback is the one used. At a
 * marker (insn_marker.h) another callback sums every vCPU's slot and
 * appends one line to the output file:
 *
 *   B|E SEQ VCPU KERNEL USER SPIN HOSTNS CPUNS
 *
 * SEQ counts markers since QEMU started; HOSTNS is the host's monotonic
 * clock in ns as the marker runs and CPUNS the CPU time all of QEMU's
 * threads have used, so a window also has the host's wall-clock time and
 * the host CPU time the emulator took for it (what a change in an
 * instruction's cost, not in their number, moves: a broadcast TLBI that
 * flushes every vCPU's soft TLB). With the TLB model on (tlb=on,
 * tlb_plugin.h) four more columns follow, every vCPU's sums so far:
 *
 *   ... DMISS IMISS LOST RECEIVED
 *
 * page walks of the data and the instruction side, translations lost to
 * invalidations, invalidations received from other vCPUs; then each
 * vCPU's own four and its own instructions,
 * " vI=DMISS,IMISS,LOST,RECEIVED,KERNEL,USER,SPIN" for I from 0, so the
 * daemon can count a workload's vCPUs apart from a neighbour's. Those
 * instructions go to the vCPU the model finds running the block (its
 * per-CPU base, tlb_plugin.c), not to the index QEMU passes: under icount
 * that is the vCPU that translated the block, whichever runs it. A model that
 * cannot count (QEMU gives no registers) writes "# tlb unavailable: WHY"
 * once, and its columns are left off. The daemon pairs each B with the
 * next E and takes the differences. The file starts with a line
 * "# tlblab-insn 1 target=T vcpus=N[ tlb=DTLB,ITLB,STLB]".
 *
 * Arguments: out=PATH (required); tlb=on|off (off), dtlb=, itlb=, stlb=
 * (ENTRIESxWAYS, tlb_model.h's defaults). A plugin that cannot start makes
 * QEMU exit with its message, so the boot fails with the reason.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "insn_marker.h"
#include "qemu_abi.h"
#include "tlb_plugin.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int qemu_plugin_version = TLBLAB_QEMU_PLUGIN_API;

enum target { TARGET_X86_64, TARGET_ARM64 };

enum insn_class { CLASS_KERNEL, CLASS_USER, CLASS_SPIN, CLASS_MAX };

/* a vCPU's counts, alone on its cache line */
struct counts {
	uint64_t n[CLASS_MAX];
} __attribute__((aligned(64)));

#define MAX_VCPUS 256

static enum target target;
static struct counts *vcpus;
/* with the TLB model on: per CPU number, the blocks it ran (tlbp_running) */
static struct counts *running_counts;
static int nvcpus;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;
static uint64_t seq;

static const unsigned char x86_begin[INSN_MARKER_X86_LEN] = INSN_MARKER_X86_BEGIN;
static const unsigned char x86_end[INSN_MARKER_X86_LEN] = INSN_MARKER_X86_END;

/* 'B' or 'E' for a marker, 'S' for a spin-wait hint, 0 for anything else */
static int classify(const struct qemu_plugin_insn *insn)
{
	unsigned char b[8];
	size_t n = qemu_plugin_insn_size(insn);

	if (n > sizeof(b))
		return 0;
	if (qemu_plugin_insn_data(insn, b, sizeof(b)) != n)
		return 0;
	if (target == TARGET_X86_64) {
		if (n == 2 && b[0] == 0xf3 && b[1] == 0x90)
			return 'S';
		if (n == INSN_MARKER_X86_LEN && !memcmp(b, x86_begin, n))
			return 'B';
		if (n == INSN_MARKER_X86_LEN && !memcmp(b, x86_end, n))
			return 'E';
		return 0;
	}
	if (n == 4) {
		uint32_t w = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;

		if (w == 0xd503203fu || w == 0xd503205fu)	/* yield, wfe */
			return 'S';
		if (w == INSN_MARKER_ARM64_BEGIN)
			return 'B';
		if (w == INSN_MARKER_ARM64_END)
			return 'E';
	}
	return 0;
}

static void on_marker(unsigned int vcpu, void *udata)
{
	int kind = (int)(intptr_t)udata, i, c;
	uint64_t sum[CLASS_MAX] = { 0 }, tlb[TLBP_COUNTS];
	struct timespec ts, cpu;
	const char *why;
	int have_tlb;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);

	/* another vCPU's thread may be adding to its slot now (multi-threaded
	 * TCG): an aligned 64-bit load sees its count before or after */
	for (i = 0; i < nvcpus; i++)
		for (c = 0; c < CLASS_MAX; c++)
			sum[c] += __atomic_load_n(&vcpus[i].n[c], __ATOMIC_RELAXED);
	pthread_mutex_lock(&out_lock);
	have_tlb = tlbp_sum(tlb, &why);
	if (why)
		fprintf(out, "# tlb unavailable: %s\n", why);
	fprintf(out, "%c %" PRIu64 " %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64, kind, ++seq,
		vcpu, sum[CLASS_KERNEL], sum[CLASS_USER], sum[CLASS_SPIN],
		(uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
		(uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec);
	if (have_tlb > 0) {
		fprintf(out, " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64, tlb[TLBP_DMISS], tlb[TLBP_IMISS],
			tlb[TLBP_LOST], tlb[TLBP_RECEIVED]);
		for (i = 0; i < nvcpus; i++) {
			tlbp_vcpu(i, tlb);
			fprintf(out, " v%d=%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, i, tlb[TLBP_DMISS],
				tlb[TLBP_IMISS], tlb[TLBP_LOST], tlb[TLBP_RECEIVED]);
			for (c = 0; c < CLASS_MAX; c++)
				fprintf(out, ",%" PRIu64, __atomic_load_n(&running_counts[i].n[c], __ATOMIC_RELAXED));
		}
	}
	fputc('\n', out);
	fflush(out);
	pthread_mutex_unlock(&out_lock);
}

/* udata: the block's instruction count << 2 | its class */
static void on_block(unsigned int vcpu, void *udata)
{
	uintptr_t u = (uintptr_t)udata;

	int r = tlbp_running();

	if (vcpu < (unsigned int)nvcpus)
		__atomic_store_n(&vcpus[vcpu].n[u & 3], vcpus[vcpu].n[u & 3] + (u >> 2), __ATOMIC_RELAXED);
	/* the slot of the CPU that runs the block: its thread's alone (one
	 * thread runs every vCPU under icount, one each under MTTCG) */
	if (r >= 0 && r < nvcpus)
		__atomic_store_n(&running_counts[r].n[u & 3], running_counts[r].n[u & 3] + (u >> 2),
				 __ATOMIC_RELAXED);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	int spin = 0;
	uintptr_t cls;

	(void)id;
	/* the model's block callback first: it finds the running vCPU that
	 * on_block counts for */
	tlbp_translate(tb);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		int k = classify(insn);

		if (k == 'S')
			spin = 1;
		else if (k)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker, QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(intptr_t)k);
	}
	if (spin)
		cls = CLASS_SPIN;
	else if (qemu_plugin_tb_vaddr(tb) >> 63)
		cls = CLASS_KERNEL;
	else
		cls = CLASS_USER;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, QEMU_PLUGIN_CB_NO_REGS,
					     (void *)((uintptr_t)n << 2 | cls));
}

static void on_qemu_exit(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	pthread_mutex_lock(&out_lock);
	if (out)
		fclose(out);
	out = NULL;
	pthread_mutex_unlock(&out_lock);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv);

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	const char *path = NULL;
	char msg[512];
	int i;

	for (i = 0; i < argc; i++) {
		int r = tlbp_arg(argv[i], msg, sizeof(msg));

		if (r < 0) {
			qemu_plugin_outs(msg);
			return -1;
		}
		if (r > 0)
			continue;
		if (!strncmp(argv[i], "out=", 4) && argv[i][4]) {
			path = argv[i] + 4;
		} else {
			snprintf(msg, sizeof(msg), "tlblab-insn: unknown argument \"%s\" (it takes out=PATH, "
				 "tlb=on|off, dtlb=, itlb=, stlb=)\n",
				 argv[i]);
			qemu_plugin_outs(msg);
			return -1;
		}
	}
	if (!path) {
		qemu_plugin_outs("tlblab-insn: out=PATH is required\n");
		return -1;
	}
	if (!info->system_emulation) {
		qemu_plugin_outs("tlblab-insn: counts a whole system: load it into qemu-system-*\n");
		return -1;
	}
	if (!strcmp(info->target_name, "x86_64")) {
		target = TARGET_X86_64;
	} else if (!strcmp(info->target_name, "aarch64")) {
		target = TARGET_ARM64;
	} else {
		snprintf(msg, sizeof(msg), "tlblab-insn: target %s is not x86_64 or aarch64\n", info->target_name);
		qemu_plugin_outs(msg);
		return -1;
	}
	out = fopen(path, "we");
	if (!out) {
		snprintf(msg, sizeof(msg), "tlblab-insn: cannot write %s\n", path);
		qemu_plugin_outs(msg);
		return -1;
	}
	nvcpus = info->system.max_vcpus;
	if (nvcpus < 1 || nvcpus > MAX_VCPUS) {
		snprintf(msg, sizeof(msg), "tlblab-insn: %d vCPUs: it counts 1 to %d\n", nvcpus, MAX_VCPUS);
		qemu_plugin_outs(msg);
		return -1;
	}
	if (tlbp_install(id, target == TARGET_X86_64, nvcpus, msg, sizeof(msg)) < 0) {
		qemu_plugin_outs(msg);
		return -1;
	}
	fprintf(out, "# tlblab-insn 1 target=%s vcpus=%d%s\n", info->target_name, info->system.smp_vcpus,
		tlbp_describe());
	fflush(out);
	vcpus = aligned_alloc(64, sizeof(*vcpus) * (size_t)nvcpus);
	running_counts = aligned_alloc(64, sizeof(*running_counts) * (size_t)nvcpus);
	if (!vcpus || !running_counts) {
		qemu_plugin_outs("tlblab-insn: out of memory\n");
		return -1;
	}
	memset(vcpus, 0, sizeof(*vcpus) * (size_t)nvcpus);
	memset(running_counts, 0, sizeof(*running_counts) * (size_t)nvcpus);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	return 0;
}
