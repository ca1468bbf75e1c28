#ifndef TLBLAB_BOOT_QEMU_H
#define TLBLAB_BOOT_QEMU_H

#include <stddef.h>

#include "boot.h"

/*
 * boot: qemu (boot_qemu.c), its settings (qemu_settings.c: the rows of a
 * machine's qemu: section, docs/lab-settings.md). A machine whose boot is
 * qemu has a struct cfg_qemu as its boot_conf.
 *
 * The VM runs on the machine's host (ep); the daemon reaches the guest by
 * SSH at guest_host:ssh_port.
 */

#define QEMU_ICOUNT_SHIFT_DEFAULT 3
#define QEMU_ICOUNT_SHIFT_MAX 10
#define QEMU_HOST_CPU_MAX 4095
/* under icount one host thread runs every vCPU: a guest may be bigger
 * than the host, up to this unless max_cpus says */
#define QEMU_ICOUNT_MAX_CPUS 16

/* Whether the boot pins each vCPU thread to a host CPU of its own. auto:
 * when the host has at least as many CPUs as the guest has vCPUs. */
enum qemu_pin {
	QEMU_PIN_AUTO,
	QEMU_PIN_ON,
	QEMU_PIN_OFF,
	QEMU_PIN_MAX
};

struct cfg_qemu {
	char *binary;		/* default: the arch's (arch.h) */
	int memory;		/* MiB, default 1024 */
	char *accel;		/* "auto" (default), "kvm", "tcg" or "icount" (single-threaded
				 * TCG whose clock is the instructions run: QEMU 8.1+) */
	char *initrd;		/* required */
	char *guest_host;	/* default "127.0.0.1" */
	int ssh_port;		/* required, 1..65535 */
	char *identity;		/* required: private key for root on the guest */
	char *host_key;		/* pinned SHA256 fingerprint, or */
	char *known_hosts;	/* a known_hosts file; one of the two required */
	char *append;		/* extra command line, or NULL */
	int pin_vcpus;		/* enum qemu_pin, default QEMU_PIN_AUTO */
	int icount_shift;	/* icount: each instruction is 2^shift ns of guest time (3) */
	char *insn_plugin;	/* the instruction-counting plugin on the VM host; "off";
				 * NULL: the daemon's own (tlblab-insn.so beside tlblabd)
				 * where the VM host is this machine */
	int host_cpu;		/* every thread of QEMU bound to this host CPU; -1 (default):
				 * pin_vcpus decides */
	char *duet;		/* the machine on the same host whose guest runs beside this
				 * one's, the other side of an A/B job at the same time (its
				 * duet names this one back), or NULL */
	char *tlb_model;	/* the plugin's TLB model (docs/tlb-model.md): its arguments,
				 * "tlb=on,dtlb=64x4,itlb=64x8,stlb=1536x12"; NULL: never */
	int max_cpus;		/* the most vCPUs a boot may ask (a suite's guest_cpus):
				 * default QEMU_ICOUNT_MAX_CPUS under icount (one host
				 * thread runs them all), else the host's CPUs where the
				 * VM host is this machine (the machine's cpus: over SSH) */
	/* set by finish(), not rows: */
	int tlb_always;		/* tlb_model: on or sizes: every boot has it; else
				 * (the key absent) a boot has it when its suite
				 * asks (a suite's tlb_model: on) */
	int duet_line, duet_col;	/* where duet: was, for messages */
	size_t file_max;	/* lab.qemu_file_max, copied at load */
};

/* The qemu settings of m, or NULL when its boot is not qemu. */
const struct cfg_qemu *qemu_conf(const struct cfg_machine *m);
/* The same, to change (tests and tools that adjust a loaded machine). */
struct cfg_qemu *qemu_conf_mut(struct cfg_machine *m);

/* The ops (boot_qemu.c). */
extern const struct boot_ops boot_qemu;
/* The instruction plugin QEMU machines on this host load unless their
 * config names one (tlblabd: tlblab-insn.so beside it); set at start-up. */
void boot_qemu_set_plugin(const char *path);

#endif
