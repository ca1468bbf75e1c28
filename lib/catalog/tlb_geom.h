#ifndef TLBLAB_TLB_GEOM_H
#define TLBLAB_TLB_GEOM_H

/*
 * The geometry of a level of the instruction plugin's simulated TLB
 * (docs/tlb-model.md), as a lab's configuration and the plugin's arguments
 * write it: "ENTRIESxWAYS". In the catalog because both sides read it: the
 * daemon checks a machine's tlb_model: with it at load, and the plugin
 * (agents/qemu-plugin/tlb_model.h) takes its arguments with it, so a
 * geometry the daemon accepts is one the plugin builds. Plain C with no
 * library (the plugin links nothing else of lib/).
 */

struct tlb_geom {
	unsigned entries, ways;	/* entries / ways sets, a power of two */
};

/* the defaults (docs/tlb-model.md): a recent x86 core's sizes */
#define TLB_DTLB_DEFAULT { 64, 4 }
#define TLB_ITLB_DEFAULT { 64, 8 }
#define TLB_STLB_DEFAULT { 1536, 12 }
#define TLB_ENTRIES_MAX 65536

/* "64x4" (entries x ways) into g; -1 when malformed or not a power-of-two
 * number of sets, or above TLB_ENTRIES_MAX */
int tlb_geom_parse(const char *s, struct tlb_geom *g);

#endif
