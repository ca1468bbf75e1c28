#include "tlb_plugin.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlb_model.h"

/*
 * An invalidation broadcast by another vCPU waits in the receiver's queue
 * until the receiver runs again (its own thread changes its own model, so
 * the model needs no lock on the access path); a full queue becomes one
 * flush of everything. Under icount every vCPU runs on one thread, in a
 * fixed order, and the counts do not depend on the host.
 */
#define PENDING_MAX 64
/* vCPUs the model follows (the daemon's INSN_VCPU_MAX) */
#define TLB_VCPUS_MAX 64

struct pending {
	enum tlb_scope scope;
	unsigned asid;
	uint64_t vpn, pages;
};

struct vcpu {
	struct tlb tlb;
	unsigned asid;
	uint64_t ttbr[2];		/* arm64: the last TTBR0/1_EL1 written */
	uint32_t icr_high;		/* x86: the APIC's ICR destination */
	uint64_t received;		/* atomic: other vCPUs add to it */
	unsigned npending;		/* atomic */
	int overflow;
	struct pending pending[PENDING_MAX];
	pthread_mutex_t lock;		/* pending, overflow */
	GByteArray *buf;		/* for register reads */
} __attribute__((aligned(64)));

static int on, x86, nvcpus;
static struct tlb_geom geom[3] = { TLB_DTLB_DEFAULT, TLB_ITLB_DEFAULT, TLB_STLB_DEFAULT };
static struct vcpu *vcpus;
static char describe[96];

/* the registers an action reads: x86 rax..r15 in ModRM order, CR4, and
 * the GS bases that say which CPU runs; arm64 x0..x30, TCR_EL1, and
 * TPIDR_EL1 that says it */
#define NREGS 34
static struct qemu_plugin_register *regs[NREGS];
static int reg_cr4 = 16, reg_gs = 17, reg_kgs = 18, reg_tcr = 31, reg_tpidr = 32;
static const char *const x86_regs[] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "cr4", "gs_base", "k_gs_base", NULL,
};

/*
 * Which vCPU runs. QEMU 10.0 hands a callback the index of the vCPU that
 * translated the block, not of the one running it, when its TCG runs every
 * vCPU on one thread (round-robin, as under icount): its blocks are shared,
 * and the index is a constant in them. A block the kernel's flush path
 * translated on vCPU 0 reports vCPU 0 wherever it runs, so a model keyed by
 * that index put one CPU's INVLPGs in another's TLB, and which vCPU first
 * ran the workload's loop decided the counts of a whole boot (two modes).
 *
 * So each block asks the registers: the kernel's per-CPU base, which only
 * that CPU has (x86_64: GS base in the kernel, KERNEL_GS_BASE while in user
 * mode; arm64: TPIDR_EL1). Once every vCPU's base is known they are
 * sorted: Linux lays its per-CPU areas out in CPU order, so the rank is
 * the CPU number (and on these machines QEMU's vCPU index, the APIC ID an
 * IPI names). Before that (early boot), or for a base not among them, the
 * index QEMU gave stands.
 */
static uint64_t cpu_keys[TLB_VCPUS_MAX];
static int ncpu_keys, keys_sorted;
static pthread_mutex_t keys_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int running = -1;	/* the running vCPU's model, or -1 */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int regs_found;
static const char *unavailable;	/* set once, before any count is trusted */
static int unavailable_told;

static const char *const geom_args[3] = { "dtlb=", "itlb=", "stlb=" };

int tlbp_arg(const char *arg, char *msg, size_t len)
{
	int i;

	if (!strcmp(arg, "tlb=on") || !strcmp(arg, "tlb=off")) {
		on = !strcmp(arg, "tlb=on");
		return 1;
	}
	for (i = 0; i < 3; i++) {
		size_t n = strlen(geom_args[i]);

		if (strncmp(arg, geom_args[i], n))
			continue;
		if (tlb_geom_parse(arg + n, &geom[i]) < 0) {
			snprintf(msg, len, "tlblab-insn: %s: give ENTRIESxWAYS, a power-of-two number of sets, "
				 "at most %d entries\n", arg, TLB_ENTRIES_MAX);
			return -1;
		}
		return 1;
	}
	if (!strncmp(arg, "tlb=", 4)) {
		snprintf(msg, len, "tlblab-insn: %s: tlb= takes on or off\n", arg);
		return -1;
	}
	return 0;
}

const char *tlbp_describe(void)
{
	return on ? describe : "";
}

/* ---- registers ---- */

/* the register's value, little-endian, up to 8 bytes; 0 when unreadable */
static uint64_t reg_read(struct vcpu *v, int r)
{
	uint64_t x = 0;
	int n;

	if (r < 0 || r >= NREGS || !regs[r])
		return 0;
	g_byte_array_set_size(v->buf, 0);
	n = qemu_plugin_read_register(regs[r], v->buf);
	if (n > 0)
		memcpy(&x, v->buf->data, n < 8 ? (size_t)n : 8);
	return x;
}

static void find_regs(void)
{
	GArray *list = qemu_plugin_get_registers();
	const qemu_plugin_reg_descriptor *d;
	unsigned i;
	int r;

	if (!list) {
		unavailable = "QEMU lists no registers for the vCPU: the TLB model cannot read its address space";
		return;
	}
	d = (const qemu_plugin_reg_descriptor *)list->data;
	for (i = 0; i < list->len; i++) {
		if (x86) {
			for (r = 0; x86_regs[r]; r++)
				if (!strcmp(d[i].name, x86_regs[r]))
					regs[r] = d[i].handle;
		} else if (!strcmp(d[i].name, "TCR_EL1")) {
			regs[reg_tcr] = d[i].handle;
		} else if (!strcmp(d[i].name, "TPIDR_EL1")) {
			regs[reg_tpidr] = d[i].handle;
		} else if (d[i].name[0] == 'x') {
			char *end;
			long n = strtol(d[i].name + 1, &end, 10);

			if (!*end && n >= 0 && n <= 30 && end != d[i].name + 1)
				regs[n] = d[i].handle;
		}
	}
	g_array_free(list, 1);
	for (r = 0; r < (x86 ? 19 : 33); r++)
		if (!regs[r]) {
			unavailable = x86 ? "QEMU does not give the plugin the x86 general registers, CR4 and the "
				"GS bases: the TLB model cannot follow INVLPG, CR3 and which CPU runs" :
				"QEMU does not give the plugin x0..x30, TCR_EL1 and TPIDR_EL1: the TLB model cannot "
				"follow TLBI, the TTBRs and which CPU runs";
			return;
		}
}

static void on_vcpu_init(qemu_plugin_id_t id, unsigned int vcpu)
{
	(void)id;
	if (vcpu < (unsigned)nvcpus)
		vcpus[vcpu].buf = g_byte_array_new();
	pthread_mutex_lock(&init_lock);
	if (!regs_found++ && !unavailable)
		find_regs();
	pthread_mutex_unlock(&init_lock);
}

/* ---- invalidations ---- */

static void drain(struct vcpu *v)
{
	unsigned i;

	pthread_mutex_lock(&v->lock);
	if (v->overflow)
		tlb_invalidate(&v->tlb, TLB_ALL, 0, 0, 0);
	else
		for (i = 0; i < v->npending; i++)
			tlb_invalidate(&v->tlb, v->pending[i].scope, v->pending[i].asid, v->pending[i].vpn,
				       v->pending[i].pages);
	v->overflow = 0;
	__atomic_store_n(&v->npending, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&v->lock);
}

static void broadcast(unsigned int from, enum tlb_scope scope, unsigned asid, uint64_t vpn, uint64_t pages)
{
	int i;

	for (i = 0; i < nvcpus; i++) {
		struct vcpu *v = &vcpus[i];

		if ((unsigned)i == from)
			continue;
		__atomic_add_fetch(&v->received, 1, __ATOMIC_RELAXED);
		pthread_mutex_lock(&v->lock);
		/* a full queue stays at PENDING_MAX, so the receiver still sees it */
		if (v->npending < PENDING_MAX) {
			v->pending[v->npending] = (struct pending){ scope, asid, vpn, pages };
			__atomic_store_n(&v->npending, v->npending + 1, __ATOMIC_RELEASE);
		} else {
			v->overflow = 1;
		}
		pthread_mutex_unlock(&v->lock);
	}
}

/* x86_64: a per-CPU area, in the direct map or vmalloc space: not the
 * kernel image's boot-time GS base (fixed_percpu_data), which the boot CPU
 * has until its own area is set up */
static int x86_percpu_base(uint64_t gs)
{
	return gs >> 47 == 0x1ffff && gs < 0xffffffff80000000ull;
}

/* The running CPU's per-CPU base (see `running`), or 0 before the kernel
 * has one. */
static uint64_t cpu_key(struct vcpu *v)
{
	uint64_t gs;

	if (!x86)
		return reg_read(v, reg_tpidr);
	gs = reg_read(v, reg_gs);
	if (x86_percpu_base(gs))
		return gs;
	gs = reg_read(v, reg_kgs);
	return x86_percpu_base(gs) ? gs : 0;
}

static int key_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The model of the vCPU whose per-CPU base is key: its rank once every
 * vCPU's is known, else -1 (QEMU's index stands). */
static int cpu_of_key(uint64_t key)
{
	int i, n;

	if (!key)
		return -1;
	if (__atomic_load_n(&keys_sorted, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < nvcpus; i++)
			if (cpu_keys[i] == key)
				return i;
		return -1;
	}
	pthread_mutex_lock(&keys_lock);
	n = ncpu_keys;
	for (i = 0; i < n && cpu_keys[i] != key; i++)
		;
	if (i == n && n < nvcpus) {
		cpu_keys[ncpu_keys++] = key;
		if (ncpu_keys == nvcpus) {
			qsort(cpu_keys, (size_t)nvcpus, sizeof(cpu_keys[0]), key_cmp);
			__atomic_store_n(&keys_sorted, 1, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&keys_lock);
	return -1;
}

static struct vcpu *vcpu_of(unsigned int vcpu)
{
	struct vcpu *v;

	if (running >= 0)
		vcpu = (unsigned)running;
	if (vcpu >= (unsigned)nvcpus)
		return NULL;
	v = &vcpus[vcpu];
	if (__atomic_load_n(&v->npending, __ATOMIC_ACQUIRE))
		drain(v);
	return v;
}

/* ---- what the instructions do, decoded at translation ----
 *
 * An action is a callback's udata: kind in the low 4 bits, then its fields. */
enum action {
	ACT_X86_INVLPG = 1,	/* base 5 bits (16: none), index 5 (16: none), scale 2, disp 32 */
	ACT_X86_CR3,		/* source register 4 bits */
	ACT_X86_FLUSH_ALL,	/* MOV to CR4, INVPCID */
	ACT_X86_WRMSR,		/* an x2APIC ICR write, when ECX says so */
	ACT_ARM_TLBI,		/* CRm 4 bits, op2 3, Rt 5 */
	ACT_ARM_TTBR,		/* n 1 bit, Rt 5 */
};

#define FIELD(u, shift, bits) (((u) >> (shift)) & ((1u << (bits)) - 1))

static void on_action(unsigned int vcpu, void *udata);

/*
 * An x86 instruction's action, or 0. Prefixes: operand size, segments,
 * REP, address size and REX; the opcodes 0F 01 /7 (INVLPG, memory form),
 * 0F 22 /r (MOV to CRn), 66 0F 38 82 (INVPCID).
 */
static uintptr_t x86_action(const unsigned char *b, size_t n)
{
	size_t i = 0;
	int rex = 0, opsize = 0;
	unsigned modrm, mod, reg, rm, base = 16, index = 16, scale = 0;
	int32_t disp = 0;

	for (; i < n; i++) {
		if (b[i] == 0x66)
			opsize = 1;
		else if (b[i] == 0x2e || b[i] == 0x36 || b[i] == 0x3e || b[i] == 0x26 || b[i] == 0x64 ||
			 b[i] == 0x65 || b[i] == 0x67 || b[i] == 0xf2 || b[i] == 0xf3)
			continue;
		else
			break;
	}
	if (i < n && (b[i] & 0xf0) == 0x40)
		rex = b[i++];
	if (i + 1 < n && b[i] == 0x0f && b[i + 1] == 0x30)
		return ACT_X86_WRMSR;
	/* 0F, the second opcode byte, ModRM */
	if (i + 2 >= n || b[i] != 0x0f)
		return 0;
	if (opsize && b[i + 1] == 0x38 && b[i + 2] == 0x82)
		return ACT_X86_FLUSH_ALL;
	modrm = b[i + 2];
	mod = modrm >> 6;
	reg = (modrm >> 3 & 7) | (rex & 4 ? 8 : 0);
	rm = (modrm & 7) | (rex & 1 ? 8 : 0);
	if (b[i + 1] == 0x22) {
		if (reg == 3)
			return ACT_X86_CR3 | (uintptr_t)rm << 4;
		return reg == 4 ? ACT_X86_FLUSH_ALL : 0;
	}
	if (b[i + 1] != 0x01 || (modrm >> 3 & 7) != 7 || mod == 3)
		return 0;
	i += 3;
	if ((modrm & 7) == 4) {			/* SIB */
		unsigned sib;

		if (i >= n)
			return 0;
		sib = b[i++];
		scale = sib >> 6;
		index = (sib >> 3 & 7) | (rex & 2 ? 8 : 0);
		if (index == 4)
			index = 16;
		base = (sib & 7) | (rex & 1 ? 8 : 0);
		if ((sib & 7) == 5 && mod == 0) {
			base = 16;
			mod = 2;			/* disp32 follows */
		}
	} else if ((modrm & 7) == 5 && mod == 0) {
		return ACT_X86_FLUSH_ALL;	/* RIP-relative: not followed, flushed whole */
	} else {
		base = rm;
	}
	if (mod == 1 && i + 1 <= n)
		disp = (int8_t)b[i];
	else if (mod == 2 && i + 4 <= n)
		disp = (int32_t)((uint32_t)b[i] | (uint32_t)b[i + 1] << 8 | (uint32_t)b[i + 2] << 16 |
				 (uint32_t)b[i + 3] << 24);
	else if (mod != 0)
		return 0;
	return ACT_X86_INVLPG | (uintptr_t)base << 4 | (uintptr_t)index << 9 | (uintptr_t)scale << 14 |
	       (uintptr_t)(uint32_t)disp << 16;
}

/* An arm64 instruction's action, or 0: TLBI (SYS, op0 1, CRn 8) at EL1,
 * MSR TTBR0_EL1 / TTBR1_EL1. */
static uintptr_t arm64_action(uint32_t w)
{
	if ((w & 0xfff8f000u) == 0xd5088000u && FIELD(w, 16, 3) == 0)
		return ACT_ARM_TLBI | (uintptr_t)FIELD(w, 8, 4) << 4 | (uintptr_t)FIELD(w, 5, 3) << 8 |
		       (uintptr_t)FIELD(w, 0, 5) << 11;
	if ((w & 0xffffffc0u) == 0xd5182000u && FIELD(w, 5, 1) <= 1)
		return ACT_ARM_TTBR | (uintptr_t)FIELD(w, 5, 1) << 4 | (uintptr_t)FIELD(w, 0, 5) << 5;
	return 0;
}

static uint64_t arm_xreg(struct vcpu *v, unsigned rt)
{
	return rt == 31 ? 0 : reg_read(v, (int)rt);
}

/* the TLBI's page number: VA[55:12], sign-extended from VA bit 55 */
static uint64_t arm_va_page(uint64_t x)
{
	uint64_t vpn = x & ((1ull << 44) - 1);

	return vpn >> 43 ? vpn | ~((1ull << 44) - 1) : vpn;
}

static void arm_tlbi(unsigned int vcpu, struct vcpu *v, uintptr_t u)
{
	unsigned crm = FIELD(u, 4, 4), op2 = FIELD(u, 8, 3);
	uint64_t x = arm_xreg(v, FIELD(u, 11, 5)), vpn = arm_va_page(x), pages = 1;
	unsigned asid = (unsigned)(x >> 48);
	int range = crm == 2 || crm == 5 || crm == 6;
	int shared = crm == 1 || crm == 2 || crm == 3 || crm == 5;
	enum tlb_scope scope;

	if (crm != 1 && crm != 2 && crm != 3 && crm != 5 && crm != 6 && crm != 7)
		return;
	if (range) {
		/* BaseADDR VA[48:12] (sign-extended), NUM, SCALE */
		uint64_t base = x & ((1ull << 37) - 1);

		vpn = base >> 36 ? base | ~((1ull << 37) - 1) : base;
		pages = (FIELD(x, 39, 5) + 1ull) << (5 * FIELD(x, 44, 2) + 1);
		scope = op2 == 3 || op2 == 7 ? TLB_PAGE_ANY : TLB_PAGE_ASID;
	} else {
		switch (op2) {
		case 0:
			scope = TLB_ALL;
			break;
		case 2:
			scope = TLB_ASID;
			break;
		case 3:
		case 7:
			scope = TLB_PAGE_ANY;
			break;
		default:
			scope = TLB_PAGE_ASID;
		}
	}
	tlb_invalidate(&v->tlb, scope, asid, vpn, pages);
	if (shared)
		broadcast(vcpu, scope, asid, vpn, pages);
}

/* Is vCPU i (APIC ID i) named by an ICR's destination? xAPIC: the ID, or
 * in logical (flat) mode a bit per CPU; x2APIC: the ID, or in logical
 * (cluster) mode the cluster (ID / 16) and a bit within it. */
static int apic_dest(int x2apic, int logical, uint32_t dest, int i)
{
	if (!logical)
		return (uint32_t)i == dest;
	if (!x2apic)
		return i < 8 && (dest >> i & 1);
	return (dest >> 16) == (uint32_t)(i >> 4) && (dest >> (i & 15) & 1);
}

/* x86: an IPI written to the APIC's ICR (xAPIC's memory-mapped one, or
 * x2APIC's MSR 0x830): counted on each destination when it is a
 * call-function vector */
static void x86_icr(unsigned int vcpu, int x2apic, uint32_t low, uint32_t dest)
{
	unsigned vector = low & 0xff, shorthand = FIELD(low, 18, 2);
	int logical = (low >> 11) & 1, i;

	if ((vector != 0xfb && vector != 0xfc) || FIELD(low, 8, 3) != 0)
		return;
	for (i = 0; i < nvcpus; i++) {
		int to;

		switch (shorthand) {
		case 1:
			to = (unsigned)i == vcpu;
			break;
		case 2:
			to = 1;
			break;
		case 3:
			to = (unsigned)i != vcpu;
			break;
		default:
			to = apic_dest(x2apic, logical, dest, i);
		}
		if (to)
			__atomic_add_fetch(&vcpus[i].received, 1, __ATOMIC_RELAXED);
	}
}

static void on_action(unsigned int vcpu, void *udata)
{
	uintptr_t u = (uintptr_t)udata;
	struct vcpu *v = vcpu_of(vcpu);

	if (!v || unavailable)
		return;
	vcpu = (unsigned)(v - vcpus);	/* the running one's */
	switch (u & 15) {
	case ACT_X86_INVLPG: {
		unsigned base = FIELD(u, 4, 5), index = FIELD(u, 9, 5), scale = FIELD(u, 14, 2);
		uint64_t addr = (uint64_t)(int64_t)(int32_t)(uint32_t)(u >> 16);

		if (base < 16)
			addr += reg_read(v, (int)base);
		if (index < 16)
			addr += reg_read(v, (int)index) << scale;
		tlb_invalidate(&v->tlb, TLB_PAGE_ANY, 0, addr >> 12, 1);
		break;
	}
	case ACT_X86_CR3: {
		uint64_t cr3 = reg_read(v, (int)FIELD(u, 4, 4));

		if (reg_read(v, reg_cr4) & (1u << 17)) {	/* CR4.PCIDE */
			v->asid = (unsigned)(cr3 & 0xfff);
			if (!(cr3 >> 63))
				tlb_invalidate(&v->tlb, TLB_ASID, v->asid, 0, 0);
		} else {
			v->asid = 0;
			tlb_invalidate(&v->tlb, TLB_NONGLOBAL, 0, 0, 0);
		}
		break;
	}
	case ACT_X86_FLUSH_ALL:
		tlb_invalidate(&v->tlb, TLB_ALL, 0, 0, 0);
		break;
	case ACT_X86_WRMSR:
		/* registers in ModRM order: 0 rax, 1 rcx, 2 rdx */
		if (reg_read(v, 1) == 0x830)
			x86_icr(vcpu, 1, (uint32_t)reg_read(v, 0), (uint32_t)reg_read(v, 2));
		break;
	case ACT_ARM_TLBI:
		arm_tlbi(vcpu, v, u);
		break;
	case ACT_ARM_TTBR: {
		int a1 = (reg_read(v, reg_tcr) >> 22) & 1;

		v->ttbr[FIELD(u, 4, 1)] = arm_xreg(v, FIELD(u, 5, 5));
		v->asid = (unsigned)(v->ttbr[a1] >> 48);
		break;
	}
	}
}

/* ---- the accesses ---- */

static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	struct vcpu *v = vcpu_of(vcpu);

	(void)udata;
	if (!v)
		return;
	vcpu = (unsigned)(v - vcpus);	/* the running one's */
	tlb_access(&v->tlb, TLB_DATA, vaddr >> 12, v->asid, (int)(vaddr >> 63));
	/* x86: a store to the APIC's ICR (offset 0x300 its low half, 0x310
	 * the destination) sends an IPI */
	if (x86 && ((vaddr & 0xfff) == 0x300 || (vaddr & 0xfff) == 0x310) && qemu_plugin_mem_is_store(info)) {
		struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
		qemu_plugin_mem_value val;

		if (!hw || !qemu_plugin_hwaddr_is_io(hw) ||
		    (qemu_plugin_hwaddr_phys_addr(hw) & ~0xfffull) != 0xfee00000ull)
			return;
		val = qemu_plugin_mem_get_value(info);
		if (val.type != QEMU_PLUGIN_MEM_VALUE_U32)
			return;
		if ((vaddr & 0xfff) == 0x310)
			v->icr_high = val.data.u32;
		else
			x86_icr(vcpu, 0, val.data.u32, v->icr_high >> 24);
	}
}

static void on_fetch(unsigned int vcpu, void *udata)
{
	uint64_t pc = (uint64_t)(uintptr_t)udata;
	struct vcpu *v;

	running = -1;
	if (vcpu < (unsigned)nvcpus && !unavailable)
		running = cpu_of_key(cpu_key(&vcpus[vcpu]));
	v = vcpu_of(vcpu);

	if (v)
		tlb_access(&v->tlb, TLB_INSN, pc >> 12, v->asid, (int)(pc >> 63));
}

void tlbp_translate(struct qemu_plugin_tb *tb)
{
	size_t n, i;

	if (!on)
		return;
	n = qemu_plugin_tb_n_insns(tb);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_fetch, QEMU_PLUGIN_CB_R_REGS,
					     (void *)(uintptr_t)qemu_plugin_tb_vaddr(tb));
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		unsigned char b[16];
		size_t len = qemu_plugin_insn_data(insn, b, sizeof(b));
		uintptr_t act = 0;

		qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, NULL);
		if (x86)
			act = x86_action(b, len);
		else if (len == 4)
			act = arm64_action((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
					   (uint32_t)b[3] << 24);
		if (act)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_action, QEMU_PLUGIN_CB_R_REGS, (void *)act);
	}
}

int tlbp_install(qemu_plugin_id_t id, int is_x86, int n, char *msg, size_t len)
{
	int i;

	if (!on)
		return 0;
	x86 = is_x86;
	nvcpus = n;
	if (n > TLB_VCPUS_MAX) {
		snprintf(msg, len, "tlblab-insn: the TLB model follows at most %d vCPUs (this machine has %d)\n",
			 TLB_VCPUS_MAX, n);
		return -1;
	}
	vcpus = aligned_alloc(64, sizeof(*vcpus) * (size_t)n);
	if (!vcpus) {
		snprintf(msg, len, "tlblab-insn: out of memory for the TLB model\n");
		return -1;
	}
	memset(vcpus, 0, sizeof(*vcpus) * (size_t)n);
	for (i = 0; i < n; i++) {
		pthread_mutex_init(&vcpus[i].lock, NULL);
		if (tlb_init(&vcpus[i].tlb, geom[0], geom[1], geom[2]) < 0) {
			snprintf(msg, len, "tlblab-insn: out of memory for the TLB model\n");
			return -1;
		}
	}
	if (!qemu_plugin_get_registers || !qemu_plugin_read_register || !qemu_plugin_mem_get_value)
		unavailable = "this QEMU's plugin API has no register reads or memory values (QEMU 9.1 and "
			      "later have them): the TLB model cannot follow the guest's address spaces";
	snprintf(describe, sizeof(describe), " tlb=%ux%u,%ux%u,%ux%u", geom[0].entries, geom[0].ways,
		 geom[1].entries, geom[1].ways, geom[2].entries, geom[2].ways);
	qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
	return 0;
}

int tlbp_running(void)
{
	return on ? running : -1;
}

void tlbp_vcpu(int i, uint64_t counts[TLBP_COUNTS])
{
	const struct tlb_counts *c = &vcpus[i].tlb.n;

	counts[TLBP_DMISS] = __atomic_load_n(&c->dmiss, __ATOMIC_RELAXED);
	counts[TLBP_IMISS] = __atomic_load_n(&c->imiss, __ATOMIC_RELAXED);
	counts[TLBP_LOST] = __atomic_load_n(&c->lost, __ATOMIC_RELAXED);
	counts[TLBP_RECEIVED] = __atomic_load_n(&vcpus[i].received, __ATOMIC_RELAXED);
}

int tlbp_sum(uint64_t sum[TLBP_COUNTS], const char **why)
{
	int i;

	memset(sum, 0, sizeof(uint64_t) * TLBP_COUNTS);
	*why = NULL;
	if (!on)
		return 0;
	if (unavailable) {
		if (!unavailable_told++)
			*why = unavailable;
		return -1;
	}
	/* a vCPU whose kernel never set up its per-CPU base (it did not come
	 * online): which vCPU runs a block is not known, so neither is whose
	 * TLB an access fills */
	if (!__atomic_load_n(&keys_sorted, __ATOMIC_ACQUIRE)) {
		static char said[160];

		snprintf(said, sizeof(said), "the model has seen the per-CPU base of %d of %d vCPUs (one never came "
			 "online?): it cannot tell which vCPU runs", __atomic_load_n(&ncpu_keys, __ATOMIC_RELAXED),
			 nvcpus);
		*why = said;
		return -1;
	}
	/* another vCPU's thread may be counting now (multi-threaded TCG):
	 * an aligned 64-bit load sees its count before or after */
	for (i = 0; i < nvcpus; i++) {
		uint64_t c[TLBP_COUNTS];
		int k;

		tlbp_vcpu(i, c);
		for (k = 0; k < TLBP_COUNTS; k++)
			sum[k] += c[k];
	}
	return 1;
}
