#ifndef TLBLAB_RESTART_H
#define TLBLAB_RESTART_H

#include <signal.h>
#include <stddef.h>

#include "boot.h"
#include "transport.h"

/*
 * What boot: kexec (boot_kexec.c) and boot: reboot (boot_reboot.c) share
 * (restart.c): a real machine, reached over SSH, restarted into the side's
 * kernel, the two differing only in how. A method's start() fills a plan
 * from its settings and hands it to restart_boot(), which uploads the
 * kernel, has the plan's prepare() ready the machine (kexec -l; a GRUB
 * entry), runs the plan's command, and waits for the machine to come back
 * on the new kernel (or power-cycles it, or calls it the kernel's fault).
 */

struct restart_plan {
	const char *method;		/* "kexec": messages, the append: key's section */
	const char *verb;		/* what restarts it, for messages ("kexec -e") */
	double timeout;			/* the boot timeout when the machine gives none */
	int grub;			/* the command line becomes a word of a GRUB script */
	const char *dir;		/* where the kernel goes on the machine */
	const char *image;		/* its file name there */
	const char *append;		/* the command line, or NULL: the running one */
	const char *const *command;	/* the restart (argv) */
	/* readies the machine to boot image with cmdline at the restart:
	 * 0, or -1 with message; what it did goes to console */
	int (*prepare)(const struct restart_plan *plan, struct transport *t, const struct cfg_machine *m,
		       const char *image, const char *cmdline, const char *boot_id, struct strbuf *console,
		       struct strbuf *message);
	const void *conf;		/* the method's settings, for prepare */
};

/* boot_ops.start for a restarting method, by plan. */
enum boot_outcome_kind restart_boot(const struct restart_plan *plan, const struct cfg_machine *m,
				    const char *kernel_path, const char *boot_id, double deadline,
				    volatile sig_atomic_t *cancel, struct boot_session **ret,
				    struct cfg_machine *guest, struct strbuf *console, struct strbuf *message);
/* boot_ops.console: the booted kernel's dmesg. */
void restart_console(struct boot_session *s, struct strbuf *out);
/* boot_ops.stop: nothing to undo. */
void restart_stop(struct boot_session *s);
/* A restarting method's ops (boot.h's BOOT_OPS, with restart.c's session
 * in place of the method's own): RESTART_BOOT_OPS(kexec, "kexec") is
 * kexec_start with restart_console and restart_stop. */
#define RESTART_BOOT_OPS(p, n) .name = (n), .start = p##_start, .console = restart_console, \
			       .stop = restart_stop
/* Runs argv on t into res (released and made anew), timeout seconds, at
 * most max_output bytes kept (0: the transport's cap); transport_exec's
 * return. */
int restart_run(struct transport *t, const char *const *argv, double timeout, size_t max_output,
		struct exec_result *res, struct strbuf *err);

#endif
