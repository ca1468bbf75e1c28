#ifndef TLBLAB_TLB_PLUGIN_H
#define TLBLAB_TLB_PLUGIN_H

/*
 * The TLB model's side of tlblab-insn.so (docs/tlb-model.md): a simulated
 * TLB per vCPU (tlb_model.h), fed from every memory access and every block
 * the vCPU runs, invalidated by the guest's own instructions as QEMU
 * translates them:
 *
 * - x86_64: INVLPG (the page, in every address space), MOV to CR3 (the
 *   non-global entries, or with PCIDs the new PCID's unless bit 63 is
 *   set), MOV to CR4 and INVPCID (everything);
 * - arm64: TLBI at EL1, every form; an Inner or Outer Shareable one
 *   reaches every vCPU's model.
 *
 * The address space is the ASID: on arm64 from the TTBR that TCR_EL1.A1
 * names, read as the kernel writes it; on x86_64 the PCID of CR3 (0
 * without PCIDs, where every CR3 write flushes the non-global entries).
 *
 * Invalidations received from other vCPUs: on arm64 the broadcast TLBIs,
 * on x86_64 the call-function IPIs (vectors 0xfb and 0xfc, which carry a
 * TLB shootdown's flush) written to the local APIC's ICR (xAPIC's page at
 * 0xfee00300, or x2APIC's MSR 0x830), whether or not anything was lost.
 *
 * A QEMU whose plugin API cannot read registers, or that does not list
 * the ones needed, leaves the model unable to count: tlbp_sum says why.
 *
 * insn.c passes its arguments here first, installs this after its own,
 * and adds the sums to each marker line; with the model on it counts each
 * block's instructions for the vCPU tlbp_running names, too.
 */
#include <stddef.h>
#include <stdint.h>

#include "qemu_abi.h"

enum tlbp_count { TLBP_DMISS, TLBP_IMISS, TLBP_LOST, TLBP_RECEIVED, TLBP_COUNTS };

/*
 * One plugin argument: 1 when it was the model's (tlb=on|off, dtlb=, itlb=,
 * stlb= as ENTRIESxWAYS), 0 when not, -1 with msg when malformed.
 */
int tlbp_arg(const char *arg, char *msg, size_t len);

/* Starts the model when tlb=on: 0, or -1 with msg. */
int tlbp_install(qemu_plugin_id_t id, int x86, int nvcpus, char *msg, size_t len);

/* " tlb=DTLB,ITLB,STLB" for the file's first line, or "" when off */
const char *tlbp_describe(void);

/* At a block's translation: the model's callbacks on the block and its
 * instructions, when on. */
void tlbp_translate(struct qemu_plugin_tb *tb);

/*
 * Every vCPU's counts so far into sum: 1 when the model counts, 0 when it
 * is off, -1 when it is on but cannot count; then *why says why (once: the
 * caller writes it to the file).
 */
int tlbp_sum(uint64_t sum[TLBP_COUNTS], const char **why);

/*
 * The CPU number of the vCPU running the current block, as this block's
 * first callback found it (the model's, which tlbp_translate registers:
 * call it before registering a block callback that asks), or -1 when the
 * model is off or cannot tell yet.
 */
int tlbp_running(void);

/* vCPU i's own counts so far (after tlbp_sum said the model counts). */
void tlbp_vcpu(int i, uint64_t counts[TLBP_COUNTS]);

#endif
