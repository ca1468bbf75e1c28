#ifndef TLBLAB_QEMU_SANDBOX_H
#define TLBLAB_QEMU_SANDBOX_H

#include <stddef.h>

#include "strbuf.h"
#include "transport.h"

/*
 * How boot_qemu.c runs QEMU on a VM host, through the host's transport:
 * confined, in the background, and watched.
 *
 * QEMU runs the submitter's kernel, and an escape from it must not reach
 * the daemon's store, token file, patches or SSH identities. It runs
 * under bubblewrap rather than as a uid of its own: the daemon is an
 * unprivileged user with no_new_privs and no capability, so it cannot
 * switch uids, while bwrap makes an unprivileged user namespace, as
 * build.sh's sandbox does, on any VM host. In it QEMU sees /usr and /etc
 * read-only, its directory read-only but for the console and plugin files,
 * its initrd, plugin and binary read-only, a /tmp, /dev and /proc of its
 * own (/dev/kvm under KVM), in new pid, IPC, UTS and cgroup namespaces,
 * with a cleared environment. It keeps the host's network namespace: user
 * networking's hostfwd listens on the host's address. QEMU's own seccomp
 * filter (the caller passes -sandbox) narrows its system calls, and
 * RLIMIT_FSIZE (file_max) caps every file it writes, so a guest cannot
 * fill the host's disk with its console or the plugin's file: a write past
 * the cap fails (QEMU, the first process of its pid namespace, does not
 * die of SIGXFSZ) and the file stays at the cap, which state shows.
 *
 * -sandbox spawn=deny rules out -daemonize (it forks), so a launcher
 * starts QEMU in the background in a session of its own, and a monitor
 * keeps QEMU's pid as the host sees it in DIR/qemu.pid while it runs
 * (bwrap --as-pid-1 makes QEMU the namespace's first process; --info-fd
 * names it) and its exit status in DIR/qemu.exit after (128 + N: killed by
 * signal N); its stderr goes to DIR/qemu.err. Relative paths are taken
 * from the transport's working directory, as QEMU would have.
 *
 * The files in DIR: console.log and insn.log (made fresh at each start,
 * the only ones QEMU may write), qemu.pid, qemu.exit, qemu.err, qemu.info.
 */

#define QEMU_SANDBOX_CONSOLE "console.log"
#define QEMU_SANDBOX_INSN "insn.log"

struct qemu_sandbox {
	const char *dir;	/* the VM's directory on the host (its kernel, its files) */
	const char *initrd;	/* read-only in view */
	const char *plugin;	/* read-only in view, or NULL */
	const char *binary;	/* QEMU: read-only in view when a path, else found in /usr */
	int kvm;		/* /dev/kvm in view, when the host has it */
	size_t file_max;	/* what each file QEMU writes may hold (RLIMIT_FSIZE) */
};

/*
 * Starts argv (QEMU's; argv[0] is sb->binary) in sb on t. 0 once QEMU runs
 * (its pid in DIR/qemu.pid); QEMU's own complaints come later, as a QEMU
 * that is gone with a status (qemu_sandbox_state). -1 when the sandbox did
 * not start (no bwrap, prlimit or setsid on the host, bwrap refused, QEMU
 * gone at once): the transport's error in err, what the launcher and QEMU
 * said on stderr in said.
 */
int qemu_sandbox_start(struct transport *t, const struct qemu_sandbox *sb, const char *const *argv,
		       struct strbuf *err, struct strbuf *said);

struct qemu_sandbox_state {
	int alive;
	int status;		/* when gone: QEMU's exit status (128 + N: signal N), -1 not known */
	unsigned long long console_size, insn_size;
};

/* The state of the QEMU of dir; 0, or -1 when the host would not say. */
int qemu_sandbox_state(struct transport *t, const char *dir, struct qemu_sandbox_state *ret);

/* What QEMU of dir said on stderr (its last 64 KiB), appended to out. */
void qemu_sandbox_stderr(struct transport *t, const char *dir, struct strbuf *out);

/* Kills the QEMU of dir, if any, and waits (up to 10 s) until it is gone. */
void qemu_sandbox_kill(struct transport *t, const char *dir);

#endif
