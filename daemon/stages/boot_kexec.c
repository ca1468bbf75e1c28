/*
 * boot: kexec. The kernel is uploaded to the machine's workdir, loaded
 * with `kexec -l` and started with `kexec -e`, without going through the
 * firmware (restart.c does the rest, shared with boot: reboot). The
 * machine's kexec: section (optional) gives the command line and an
 * initrd on the machine.
 */
#include "restart.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "config.h"
#include "settings.h"
#include "util.h"
#include "validate.h"
#include "banned.h"

#define KEXEC_BOOT_TIMEOUT 300.0	/* from kexec -e to the machine answering again */
#define KEXEC_LOAD_TIMEOUT 120.0

struct cfg_kexec {
	char *append;		/* command line for the new kernel, or NULL: the running one */
	char *initrd;		/* initrd path on the machine, or NULL: none */
};

static const struct setting rows[] = {
	{ .name = "append", .type = SET_STR, .off = offsetof(struct cfg_kexec, append),
	  .valid = config_valid_cmdline, .must = MUST_CMDLINE, .type_name = "kernel command line",
	  .def_note = "the running one", .what = "the new kernel's command line (replaces the running one's)" },
	{ .name = "initrd", .type = SET_STR, .off = offsetof(struct cfg_kexec, initrd), .valid = config_valid_path,
	  .must = MUST_PATH, .type_name = "path", .what = "an initrd on the machine (kexec --initrd)" },
};

/* kexec -l the uploaded image with cmdline. 0, or -1 with message. */
static int kexec_load(const struct restart_plan *plan, struct transport *t, const struct cfg_machine *m,
		      const char *image, const char *cmdline, const char *boot_id, struct strbuf *console,
		      struct strbuf *message)
{
	const struct cfg_kexec *k = plan->conf;
	struct strbuf cmdarg = STRBUF_INIT, initrdarg = STRBUF_INIT, err = STRBUF_INIT;
	struct exec_result res;
	int r = 0;

	(void)boot_id;
	transport_exec_result_init(&res);
	strbuf_addf(&cmdarg, "--command-line=%s", cmdline);
	if (k && k->initrd)
		strbuf_addf(&initrdarg, "--initrd=%s", k->initrd);
	{
		const char *load[] = { "kexec", "-l", image, cmdarg.buf, initrdarg.len ? initrdarg.buf : NULL,
				       NULL };

		if (restart_run(t, load, KEXEC_LOAD_TIMEOUT, 0, &res, &err) < 0 || res.status != 0) {
			strbuf_addf(message, "boot: kexec -l on %s failed: %s%.500s", m->name, err.buf,
				    res.err.buf);
			r = -1;
		} else {
			strbuf_addf(console, "[tlblab: kexec -l %s %s%s%s]\n", image, cmdarg.buf,
				    initrdarg.len ? " " : "", initrdarg.buf);
		}
	}
	transport_exec_result_release(&res);
	strbuf_release(&cmdarg);
	strbuf_release(&initrdarg);
	strbuf_release(&err);
	return r;
}

static enum boot_outcome_kind kexec_start(const struct cfg_machine *m, const struct boot_ask *ask,
					  const char *kernel_path, const char *boot_id, double deadline,
					  volatile sig_atomic_t *cancel, struct boot_session **ret,
					  struct cfg_machine *guest, struct strbuf *console, struct strbuf *message)
{
	static const char *const exec[] = { "kexec", "-e", NULL };
	const struct cfg_kexec *k = m->boot_conf;
	const struct restart_plan plan = {
		.method = "kexec", .verb = "kexec -e", .timeout = KEXEC_BOOT_TIMEOUT, .dir = m->workdir,
		.image = "tlblab-kexec-bzImage", .append = k ? k->append : NULL, .command = exec,
		.prepare = kexec_load, .conf = k,
	};

	(void)ask;
	return restart_boot(&plan, m, kernel_path, boot_id, deadline, cancel, ret, guest, console, message);
}

static const struct boot_ops ops = { RESTART_BOOT_OPS(kexec, "kexec") };

static const struct backend boot_kexec_backend = {
	.kind = BACKEND_BOOT,
	.name = "kexec",
	.what = "a real machine over SSH, restarted into the kernel by kexec (no firmware)",
	.settings = rows,
	.nsettings = ARRAY_SIZE(rows),
	.conf_size = sizeof(struct cfg_kexec),
	.section_hint = "with the optional keys append and initrd",
	.ops = &ops,
};
BACKEND_REGISTER(boot_kexec_backend)
