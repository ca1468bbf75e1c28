#ifndef TLBLAB_INSN_MARKER_H
#define TLBLAB_INSN_MARKER_H

/*
 * The window markers of the instruction-counting QEMU plugin
 * (agents/qemu-plugin/insn.c). The agent executes one when a measured window
 * opens and one when it closes; the plugin recognises them when QEMU
 * translates the code, and at each one writes every vCPU's counts so far, so
 * a window's counts are its own.
 *
 * A marker is an architectural no-op with an encoding no compiler emits:
 * - x86_64: `nopl 0x3n424c54(%rax)` (0f 1f 80 and a 32-bit displacement
 *   spelling "TLB1" / "TLB2"): the long NOP form, whose displacement is
 *   never dereferenced;
 * - arm64: `hint #106` / `hint #107`: unallocated hint space, which the
 *   architecture executes as NOP.
 * On hardware, or in a guest without the plugin, they cost one NOP.
 */

#define INSN_MARKER_X86_LEN 7
#define INSN_MARKER_X86_BEGIN { 0x0f, 0x1f, 0x80, 0x54, 0x4c, 0x42, 0x31 }
#define INSN_MARKER_X86_END   { 0x0f, 0x1f, 0x80, 0x54, 0x4c, 0x42, 0x32 }
#define INSN_MARKER_ARM64_BEGIN 0xd5032d5fu	/* hint #106 */
#define INSN_MARKER_ARM64_END   0xd5032d7fu	/* hint #107 */

#if defined(__x86_64__)
#define insn_marker_begin() __asm__ volatile(".byte 0x0f,0x1f,0x80,0x54,0x4c,0x42,0x31" ::: "memory")
#define insn_marker_end()   __asm__ volatile(".byte 0x0f,0x1f,0x80,0x54,0x4c,0x42,0x32" ::: "memory")
#elif defined(__aarch64__)
#define insn_marker_begin() __asm__ volatile(".inst 0xd5032d5f" ::: "memory")
#define insn_marker_end()   __asm__ volatile(".inst 0xd5032d7f" ::: "memory")
#else
#define insn_marker_begin() ((void)0)
#define insn_marker_end()   ((void)0)
#endif

#endif
