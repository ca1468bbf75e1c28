/*
 * boot: reboot. The kernel is installed on the machine as
 * <kernel_dir>/tlblab-vmlinuz, a GRUB menu entry with the id "tlblab" is
 * written to the entry file (Debian's grub.cfg sources custom.cfg), GRUB
 * is told to boot that entry once (grub-reboot) and the machine reboots,
 * through its firmware. GRUB clears the one-time choice as it boots it, so
 * a kernel that hangs or panics and is reset (panic=N, a watchdog, our
 * power cycle) comes back on the machine's own default kernel. restart.c
 * does the rest, shared with boot: kexec.
 */
#include "restart.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "config.h"
#include "settings.h"
#include "util.h"
#include "validate.h"
#include "banned.h"

#define REBOOT_BOOT_TIMEOUT 600.0	/* a reboot goes through the firmware: slower */
#define ONCE_TIMEOUT 60.0
#define ENTRY_ID "tlblab"		/* the GRUB menu entry's id */

struct cfg_reboot {
	char *append;		/* command line, or NULL: the running one */
	char *kernel_dir;	/* default "/boot" */
	char *grub_dir;		/* default: kernel_dir */
	char *initrd;		/* file name in kernel_dir, or NULL */
	char *entry_file;	/* default "/boot/grub/custom.cfg" */
	char **once;		/* argv, "{entry}" replaced; default grub-reboot {entry} */
	char **command;		/* argv; default reboot */
};

/* A file name in a directory: no slash, nothing a GRUB script or a shell
 * would read specially. */
static int valid_file_name(const char *s)
{
	return config_valid_name(s);
}

#define MUST_FILE_NAME	"a file name of 1 to 64 letters, digits, '.', '_' or '-'"
/* GRUB reads these paths in its own script language: plain characters only */
#define MUST_GRUB_PATH	"an absolute path of letters, digits and '._/-'"

static int valid_grub_path(const char *s)
{
	size_t n;

	if (*s != '/')
		return 0;
	for (n = 0; s[n]; n++)
		if (n >= 4096 || (!config_is_alnum(s[n]) && !strchr("._/-", s[n])))
			return 0;
	return 1;
}

#define AT(field) offsetof(struct cfg_reboot, field)

static const struct setting rows[] = {
	{ .name = "append", .type = SET_STR, .off = AT(append), .valid = config_valid_cmdline,
	  .must = MUST_CMDLINE, .type_name = "kernel command line", .def_note = "the running one",
	  .what = "the new kernel's command line" },
	{ .name = "kernel_dir", .type = SET_STR, .off = AT(kernel_dir), .valid = valid_grub_path,
	  .must = MUST_GRUB_PATH, .def_text = "/boot", .type_name = "path",
	  .what = "where the kernel is installed, as tlblab-vmlinuz" },
	{ .name = "grub_dir", .type = SET_STR, .off = AT(grub_dir), .valid = valid_grub_path,
	  .must = MUST_GRUB_PATH, .def_note = "kernel_dir", .type_name = "path",
	  .what = "kernel_dir as GRUB sees it (/ when /boot is a partition of its own)" },
	{ .name = "initrd", .type = SET_STR, .off = AT(initrd), .valid = valid_file_name, .must = MUST_FILE_NAME,
	  .type_name = "file name", .what = "an initrd in kernel_dir" },
	{ .name = "entry_file", .type = SET_STR, .off = AT(entry_file), .valid = config_valid_path,
	  .must = MUST_PATH, .def_text = "/boot/grub/custom.cfg", .type_name = "path",
	  .what = "where the GRUB menu entry \"tlblab\" is written" },
	{ .name = "once", .type = SET_ARGV, .off = AT(once), .def_text = "grub-reboot {entry}",
	  .what = "boots the entry once ({entry}: its id)" },
	{ .name = "command", .type = SET_ARGV, .off = AT(command), .def_text = "reboot",
	  .what = "restarts the machine" },
};

static void finish(struct cfg_section *sec, struct cfg_machine *m, void *conf)
{
	struct cfg_reboot *r = conf;

	(void)m;
	if (!r->grub_dir && r->kernel_dir && !settings_has(sec, "grub_dir"))
		r->grub_dir = xstrdup(r->kernel_dir);
}

/*
 * Writes the menu entry "tlblab" for the installed kernel to the
 * machine's entry file, then runs `once` (by default grub-reboot tlblab)
 * so GRUB boots it the next time only. 0, or -1 with message.
 */
static int grub_once(const struct restart_plan *plan, struct transport *t, const struct cfg_machine *m,
		     const char *image, const char *cmdline, const char *boot_id, struct strbuf *console,
		     struct strbuf *message)
{
	const struct cfg_reboot *rb = plan->conf;
	struct strbuf entry = STRBUF_INIT, err = STRBUF_INIT, gdir = STRBUF_INIT;
	char local[] = "/tmp/tlblab-grub-entry-XXXXXX";
	const char *argv[16];
	struct exec_result res;
	size_t i, n = 0;
	int fd, r = -1;

	(void)image;
	transport_exec_result_init(&res);
	/* GRUB paths: grub_dir without a trailing slash ("/" becomes "") */
	strbuf_addstr(&gdir, rb->grub_dir);
	while (gdir.len && gdir.buf[gdir.len - 1] == '/')
		strbuf_setlen(&gdir, gdir.len - 1);
	strbuf_addf(&entry, "# written by tlblab for boot %s; booted once, by grub-reboot " ENTRY_ID "\n"
		    "menuentry 'tlblab %s' --id " ENTRY_ID " {\n"
		    "\techo 'tlblab: GRUB boots entry " ENTRY_ID " for boot %s'\n"
		    "\tsearch --no-floppy --file --set=root %s/tlblab-vmlinuz\n"
		    "\tlinux %s/tlblab-vmlinuz %s\n", boot_id, boot_id, boot_id, gdir.buf, gdir.buf, cmdline);
	if (rb->initrd)
		strbuf_addf(&entry, "\tinitrd %s/%s\n", gdir.buf, rb->initrd);
	strbuf_addstr(&entry, "}\n");
	fd = mkostemp(local, O_CLOEXEC);
	if (fd < 0 || write(fd, entry.buf, entry.len) != (ssize_t)entry.len) {
		strbuf_addf(message, "boot: cannot write a temporary file: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	close(fd);
	if (transport_upload(t, local, rb->entry_file, 0644, &err) < 0) {
		strbuf_addf(message, "boot: writing the GRUB entry %s on %s: %s", rb->entry_file, m->name, err.buf);
		goto out;
	}
	for (i = 0; rb->once[i] && n < ARRAY_SIZE(argv) - 1; i++)
		argv[n++] = strcmp(rb->once[i], "{entry}") ? rb->once[i] : ENTRY_ID;
	argv[n] = NULL;
	if (restart_run(t, argv, ONCE_TIMEOUT, 0, &res, &err) < 0 || res.status != 0) {
		strbuf_addf(message, "boot: %s " ENTRY_ID " on %s failed: %s%.500s", argv[0], m->name, err.buf,
			    res.err.buf);
		goto out;
	}
	strbuf_addf(console, "[tlblab: GRUB entry " ENTRY_ID " in %s: linux %s/tlblab-vmlinuz %s; %s "
		    ENTRY_ID "]\n", rb->entry_file, gdir.buf, cmdline, argv[0]);
	r = 0;
out:
	unlink(local);
	transport_exec_result_release(&res);
	strbuf_release(&entry);
	strbuf_release(&err);
	strbuf_release(&gdir);
	return r;
}

static enum boot_outcome_kind reboot_start(const struct cfg_machine *m, const struct boot_ask *ask,
					   const char *kernel_path, const char *boot_id, double deadline,
					   volatile sig_atomic_t *cancel, struct boot_session **ret,
					   struct cfg_machine *guest, struct strbuf *console, struct strbuf *message)
{
	const struct cfg_reboot *rb = m->boot_conf;
	const struct restart_plan plan = {
		.method = "reboot", .verb = "the reboot", .timeout = REBOOT_BOOT_TIMEOUT, .grub = 1,
		.dir = rb->kernel_dir, .image = "tlblab-vmlinuz", .append = rb->append,
		.command = (const char *const *)rb->command, .prepare = grub_once, .conf = rb,
	};

	(void)ask;
	return restart_boot(&plan, m, kernel_path, boot_id, deadline, cancel, ret, guest, console, message);
}

static const struct boot_ops ops = { RESTART_BOOT_OPS(reboot, "reboot") };

static const struct backend boot_reboot_backend = {
	.kind = BACKEND_BOOT,
	.name = "reboot",
	.what = "a real machine over SSH, rebooted once into the kernel through GRUB",
	.settings = rows,
	.nsettings = ARRAY_SIZE(rows),
	.conf_size = sizeof(struct cfg_reboot),
	.section_hint = "append, kernel_dir, grub_dir, initrd, entry_file, once, command",
	.finish = finish,
	.ops = &ops,
};
BACKEND_REGISTER(boot_reboot_backend)
