#ifndef TLBLAB_ARCH_H
#define TLBLAB_ARCH_H

/*
 * The architectures a lab machine can have, and what each means to the
 * parts that build, boot and measure: a machine's `arch:` names one, a job
 * has the arch of its machines, and its kernels are built for it.
 */
#include <stddef.h>

#define ARCH_MAX 2

struct arch {
	const char *name;	/* as in configs and the API: "x86_64", "arm64" */
	const char *uname;	/* uname -m in the guest, the agent's hello */
	const char *image;	/* the kernel image build.sh publishes */
	const char *qemu;	/* the default qemu binary of a `boot: qemu` machine */
	const char *qemu_machine, *qemu_cpu_kvm, *qemu_cpu_tcg;
	/* under icount: a named model (`max` with SMP has a bring-up hang) */
	const char *qemu_cpu_icount;
	const char *console;	/* the serial console device */
	const char *agent_dir;	/* the agent's build/ subfolder ("": build/ itself) */
};

/* The arch called name (an arch's name or its uname -m: "aarch64" is arm64),
 * or NULL. */
const struct arch *arch_lookup(const char *name);
/* Never NULL: an unknown name (the config refuses those) is x86_64. */
const struct arch *arch_get(const char *name);
/* 0..ARCH_MAX-1: the arches in a table's order (0 is x86_64, the host's) */
size_t arch_index(const struct arch *a);
const struct arch *arch_at(size_t i);
/* "x86_64, arm64": for error messages */
const char *arch_names(void);

/* A fragment path of a tree may say {arch}, for the arch's own fragment
 * (kernels/fragments/qemu-{arch}.config): path with each {arch} replaced,
 * malloc'ed. */
char *arch_expand(const char *path, const struct arch *a);

#endif
