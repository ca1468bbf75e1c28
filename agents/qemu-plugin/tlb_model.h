#ifndef TLBLAB_TLB_MODEL_H
#define TLBLAB_TLB_MODEL_H

/*
 * A simulated TLB for one vCPU (docs/tlb-model.md): a first-level data TLB
 * and instruction TLB, each set-associative with LRU replacement, behind a
 * shared second level. A translation is a 4 KiB virtual page in an address
 * space (ASID); one of the kernel's half is global (it matches in every
 * address space and survives a flush of the non-global entries).
 *
 * An access looks up its first level, then the second; a miss in both is
 * a page walk (counted as a miss of its first level) and fills both. An
 * invalidation removes what it names from every level and counts the
 * translations it found present ("lost"), each once however many levels
 * held it. Pure C with no QEMU in it: the plugin (insn.c) feeds it, and
 * tests/unit/test_tlb_model.c drives it.
 */
#include <stdint.h>

#include "tlb_geom.h"

struct tlb_level {
	unsigned sets, ways;
	uint64_t *key;		/* sets * ways; 0 is an empty way */
	uint32_t *age;		/* the level's clock at the way's last use */
	uint32_t clock;
};

enum tlb_side { TLB_DATA, TLB_INSN };

struct tlb_counts {
	uint64_t dmiss, imiss;	/* page walks, by the side that missed */
	uint64_t lost;		/* translations present when an invalidation removed them */
};

struct tlb {
	struct tlb_level l1[2], l2;	/* l1[TLB_DATA], l1[TLB_INSN] */
	struct tlb_counts n;
};

/* 0, or -1 when out of memory */
int tlb_init(struct tlb *t, struct tlb_geom dtlb, struct tlb_geom itlb, struct tlb_geom stlb);
void tlb_free(struct tlb *t);

/* vpn: the virtual page (address >> 12); asid: the address space (16
 * bits); global: the kernel half's translations */
void tlb_access(struct tlb *t, enum tlb_side side, uint64_t vpn, unsigned asid, int global);

/* The invalidations. */
enum tlb_scope {
	TLB_ALL,		/* every entry, global ones too */
	TLB_NONGLOBAL,		/* every non-global entry */
	TLB_ASID,		/* the non-global entries of one ASID */
	TLB_PAGE_ASID,		/* a page range of one ASID, and global ones there */
	TLB_PAGE_ANY,		/* a page range in every ASID */
};

void tlb_invalidate(struct tlb *t, enum tlb_scope scope, unsigned asid, uint64_t vpn, uint64_t pages);

#endif
