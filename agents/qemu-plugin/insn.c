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
 *   B|E SEQ VCPU KERNEL USER SPIN OWN_KERNEL OWN_USER OWN_SPIN SPACES
 *
 * SEQ counts markers since QEMU started; the daemon pairs each B with the
 * next E and takes the differences. The OWN_ counts are those of blocks run
 * while one of the workload's address spaces was current on the vCPU, and
 * SPACES how many are noted (0: no worker said so, the own counts are 0):
 *
 * - each worker executes the worker marker as it starts, and the plugin
 *   notes the page-table root then current (x86 CR3, arm64 TTBR0_EL1,
 *   without the PCID, PTI and ASID bits);
 * - each block's callback reads the vCPU's root as the block starts (a
 *   register read per block: following only the instructions that write
 *   the root missed switches under -icount, docs/emulated-work.md);
 * - the notes are cleared after each end marker, since the workers of a
 *   window exit with it and their page tables' memory is reused.
 *
 * Kernel work on a workload's behalf runs under its root (its system
 * calls, its faults, interrupts that land while it runs, a kernel thread
 * that borrows its mm lazily); the agent's own sampling, sshd and the
 * guest's daemons run under theirs, and are left out.
 *
 * The file starts with a line "# tlblab-insn 2 target=T vcpus=N".
 *
 * Arguments: out=PATH (required). A plugin that cannot start makes QEMU exit
 * with its message, so the boot fails with the reason.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insn_marker.h"
#include "qemu_abi.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int qemu_plugin_version = TLBLAB_QEMU_PLUGIN_API;

enum target { TARGET_X86_64, TARGET_ARM64 };

enum insn_class { CLASS_KERNEL, CLASS_USER, CLASS_SPIN, CLASS_MAX };

/* a vCPU's counts and the root it runs under, alone on its cache line */
struct counts {
	uint64_t n[CLASS_MAX];
	uint64_t own[CLASS_MAX];
	uint64_t root;		/* the page-table root now current, masked */
	uint64_t gen;		/* the notes' generation "mine" was computed at */
	int mine;		/* root is a noted workload address space */
	GByteArray *buf;	/* for register reads, this vCPU's thread only */
} __attribute__((aligned(64)));

#define MAX_VCPUS 256
#define MAX_SPACES 64

/* the root's bits that name the page tables: x86 CR3 without the PCID
 * (11:0), PTI's user-half bit (12) and the no-flush bit (63); arm64
 * TTBR0_EL1 without the ASID (63:48) and CnP (0) */
#define X86_ROOT_MASK   0x000fffffffffe000ull
#define ARM64_ROOT_MASK 0x0000fffffffff000ull

static enum target target;
static struct counts *vcpus;
static int nvcpus;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;
static uint64_t seq;

/* the workload's address spaces, noted at worker markers; written under
 * out_lock, read by vCPU threads through spaces_gen */
static uint64_t spaces[MAX_SPACES];
static int nspaces;
static uint64_t spaces_gen = 1;

/* the root register's handle, found at the first vCPU's start */
static struct qemu_plugin_register *root_reg;
static int have_regs;

static const unsigned char x86_begin[INSN_MARKER_X86_LEN] = INSN_MARKER_X86_BEGIN;
static const unsigned char x86_end[INSN_MARKER_X86_LEN] = INSN_MARKER_X86_END;
static const unsigned char x86_worker[INSN_MARKER_X86_LEN] = INSN_MARKER_X86_WORKER;

/* 'B', 'E' or 'W' for a marker, 'S' for a spin-wait hint, 0 for anything
 * else */
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
		if (n == INSN_MARKER_X86_LEN && !memcmp(b, x86_worker, n))
			return 'W';
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
		if (w == INSN_MARKER_ARM64_WORKER)
			return 'W';
	}
	return 0;
}

/* a register of this vCPU as a 64-bit value; 0 when it cannot be read */
static uint64_t read_reg(unsigned int vcpu, struct qemu_plugin_register *reg)
{
	GByteArray *b = vcpus[vcpu].buf;
	uint64_t v = 0;
	int n;

	if (!reg || !b)
		return 0;
	g_byte_array_set_size(b, 0);
	n = qemu_plugin_read_register(reg, b);
	if (n >= 8 && b->len >= 8)
		memcpy(&v, b->data, 8);	/* the guest's order: both targets are little-endian here */
	else if (n >= 4 && b->len >= 4)
		memcpy(&v, b->data, 4);
	return v;
}

static uint64_t root_mask(void)
{
	return target == TARGET_X86_64 ? X86_ROOT_MASK : ARM64_ROOT_MASK;
}

/* only vcpu's own thread calls this: PTI's flips between a process's two
 * halves keep the masked root, and "mine" with it */
static void set_root(unsigned int vcpu, uint64_t root)
{
	struct counts *c = &vcpus[vcpu];

	root &= root_mask();
	if (root == c->root)
		return;
	c->root = root;
	c->gen = 0;
}

static void on_marker(unsigned int vcpu, void *udata)
{
	int kind = (int)(intptr_t)udata, i, c;
	uint64_t sum[CLASS_MAX] = { 0 }, own[CLASS_MAX] = { 0 }, root;

	if (kind == 'W') {
		if (vcpu >= (unsigned int)nvcpus)
			return;
		/* the worker's root, read now: its last write may predate the plugin */
		root = read_reg(vcpu, root_reg) & root_mask();
		set_root(vcpu, root);
		pthread_mutex_lock(&out_lock);
		/* a comment line, for whoever reads the file */
		fprintf(out, "# W %u %#" PRIx64 "\n", vcpu, root);
		for (i = 0; i < nspaces && spaces[i] != root; i++)
			;
		if (root && i == nspaces && nspaces < MAX_SPACES) {
			spaces[nspaces++] = root;
			__atomic_add_fetch(&spaces_gen, 1, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&out_lock);
		return;
	}
	/* another vCPU's thread may be adding to its slot now (multi-threaded
	 * TCG): an aligned 64-bit load sees its count before or after */
	for (i = 0; i < nvcpus; i++)
		for (c = 0; c < CLASS_MAX; c++) {
			sum[c] += __atomic_load_n(&vcpus[i].n[c], __ATOMIC_RELAXED);
			own[c] += __atomic_load_n(&vcpus[i].own[c], __ATOMIC_RELAXED);
		}
	pthread_mutex_lock(&out_lock);
	fprintf(out, "%c %" PRIu64 " %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %d\n",
		kind, ++seq, vcpu, sum[CLASS_KERNEL], sum[CLASS_USER], sum[CLASS_SPIN], own[CLASS_KERNEL],
		own[CLASS_USER], own[CLASS_SPIN], nspaces);
	fflush(out);
	if (kind == 'E' && nspaces) {
		nspaces = 0;
		__atomic_add_fetch(&spaces_gen, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&out_lock);
}

/* whether vcpu's root is a noted address space, recomputed when the notes
 * or the root changed since */
static int mine(struct counts *c)
{
	uint64_t gen = __atomic_load_n(&spaces_gen, __ATOMIC_ACQUIRE);
	int i;

	if (c->gen == gen)
		return c->mine;
	c->mine = 0;
	pthread_mutex_lock(&out_lock);
	for (i = 0; i < nspaces; i++)
		if (spaces[i] == c->root)
			c->mine = 1;
	pthread_mutex_unlock(&out_lock);
	c->gen = gen;
	return c->mine;
}

/* udata: the block's instruction count << 3 | REGS (it may read
 * registers) | its class */
#define REGS 4
static void on_block(unsigned int vcpu, void *udata)
{
	uintptr_t u = (uintptr_t)udata;
	struct counts *c;

	if (vcpu >= (unsigned int)nvcpus)
		return;
	c = &vcpus[vcpu];
	__atomic_store_n(&c->n[u & 3], c->n[u & 3] + (u >> 3), __ATOMIC_RELAXED);
	if (u & REGS)
		set_root(vcpu, read_reg(vcpu, root_reg));
	if (mine(c))
		__atomic_store_n(&c->own[u & 3], c->own[u & 3] + (u >> 3), __ATOMIC_RELAXED);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	int spin = 0;
	uintptr_t cls;

	(void)id;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		int k = classify(insn);

		if (k == 'S')
			spin = 1;
		else if (k == 'B' || k == 'E' || (k == 'W' && have_regs))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker,
							       k == 'W' ? QEMU_PLUGIN_CB_R_REGS : QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(intptr_t)k);
	}
	if (spin)
		cls = CLASS_SPIN;
	else if (qemu_plugin_tb_vaddr(tb) >> 63)
		cls = CLASS_KERNEL;
	else
		cls = CLASS_USER;
	/* blocks translated before the first vCPU started (firmware) read no
	 * register: no worker runs there */
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, have_regs ? QEMU_PLUGIN_CB_R_REGS : QEMU_PLUGIN_CB_NO_REGS,
					     (void *)((uintptr_t)n << 3 | (have_regs ? REGS : 0) | cls));
}

/*
 * A vCPU starts: its buffer for register reads, and, at the first one, the
 * handle of the page-table root register by its gdb name. Without it (a
 * QEMU whose register set lacks it) the worker markers are ignored and the
 * own counts stay 0, which the daemon reads as "not attributed".
 */
static void on_vcpu_init(qemu_plugin_id_t id, unsigned int vcpu)
{
	const char *want = target == TARGET_X86_64 ? "cr3" : "TTBR0_EL1";
	GArray *regs;
	unsigned int i;

	(void)id;
	if (vcpu >= (unsigned int)nvcpus)
		return;
	vcpus[vcpu].buf = g_byte_array_new();
	if (have_regs || vcpu != 0)
		return;
	regs = qemu_plugin_get_registers();
	if (!regs)
		return;
	for (i = 0; i < regs->len; i++) {
		const struct qemu_plugin_reg_descriptor *d =
			&((const struct qemu_plugin_reg_descriptor *)(const void *)regs->data)[i];

		if (d->name && !strcmp(d->name, want))
			root_reg = d->handle;
	}
	g_array_free(regs, 1);
	have_regs = root_reg != NULL;
	if (!have_regs)
		qemu_plugin_outs("tlblab-insn: this QEMU names no page-table root register: "
				 "counts are the whole system's only\n");
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
		if (!strncmp(argv[i], "out=", 4) && argv[i][4]) {
			path = argv[i] + 4;
		} else {
			snprintf(msg, sizeof(msg), "tlblab-insn: unknown argument \"%s\" (it takes out=PATH)\n",
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
	fprintf(out, "# tlblab-insn 2 target=%s vcpus=%d\n", info->target_name, info->system.smp_vcpus);
	fflush(out);
	nvcpus = info->system.max_vcpus;
	if (nvcpus < 1 || nvcpus > MAX_VCPUS) {
		snprintf(msg, sizeof(msg), "tlblab-insn: %d vCPUs: it counts 1 to %d\n", nvcpus, MAX_VCPUS);
		qemu_plugin_outs(msg);
		return -1;
	}
	vcpus = aligned_alloc(64, sizeof(*vcpus) * (size_t)nvcpus);
	if (!vcpus) {
		qemu_plugin_outs("tlblab-insn: out of memory\n");
		return -1;
	}
	memset(vcpus, 0, sizeof(*vcpus) * (size_t)nvcpus);
	qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	return 0;
}
