/*
 * boot: sim, the simulated lab's boot method (sim.h, docs/scale.md). A
 * boot takes a time drawn from real boots' times (scaled) and always
 * comes up: the machine then answers, through transport sim, with the
 * boot id on its command line and the build's host tag in its version,
 * as boot_stage.c's identity check wants. The machine's transport must be
 * sim too: it is what answers for the booted kernel.
 */
#include "boot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "config.h"
#include "sim.h"
#include "util.h"
#include "banned.h"

struct boot_session {
	char host[128];
	struct strbuf console;
};

/* The build id is the name of the kernel's folder (build_dir, build.h). */
static void build_id_of(const char *kernel_path, char *out, size_t len)
{
	const char *end = strrchr(kernel_path, '/'), *p = end;

	while (p && p > kernel_path && p[-1] != '/')
		p--;
	snprintf(out, len, "%.*s", p && end ? (int)(end - p) : 0, p ? p : "");
}

static enum boot_outcome_kind sim_start(const struct cfg_machine *m, const struct boot_ask *ask,
					const char *kernel_path, const char *boot_id, double deadline,
					volatile sig_atomic_t *cancel, struct boot_session **ret,
					struct cfg_machine *guest, struct strbuf *console, struct strbuf *message)
{
	struct boot_session *s;
	char build_id[72];
	double secs;
	int r;

	(void)ask;
	if (sim_lab_ready(message) < 0)
		return BOOT_INFRA;
	if (strcmp(config_transport_name(&m->ep), "sim") || !m->ep.host) {
		strbuf_addf(message, "boot: %s: boot sim needs transport sim (with a host)", m->name);
		return BOOT_INFRA;
	}
	build_id_of(kernel_path, build_id, sizeof(build_id));
	secs = sim_lab_draw(SIM_BOOT);
	r = sim_lab_work(secs, SIM_BOOT, m->name, cancel, deadline);
	if (r == -ECANCELED) {
		strbuf_addstr(message, "boot: cancelled");
		return BOOT_CANCELLED;
	}
	if (r < 0) {
		strbuf_addf(message, "boot: %s: the stage's time ran out during the simulated boot", m->name);
		return BOOT_INFRA;
	}
	s = xcalloc(1, sizeof(*s));
	snprintf(s->host, sizeof(s->host), "%s", m->ep.host);
	strbuf_init(&s->console, 0);
	strbuf_addf(&s->console, "[sim] Linux version 6.1.0-sim (tlblab@b-%.12s)\n[sim] booted in %.3f s "
		    "(simulated)\n", build_id, secs);
	strbuf_addstr(console, s->console.buf);
	sim_lab_boot(s->host, boot_id, build_id);
	/* the booted kernel is reached as the machine is */
	*guest = *m;
	*ret = s;
	return BOOT_OK;
}

static void sim_console(struct boot_session *s, struct strbuf *out)
{
	strbuf_addstr(out, s->console.buf);
}

static void sim_stop(struct boot_session *s)
{
	if (!s)
		return;
	sim_lab_halt(s->host);
	strbuf_release(&s->console);
	free(s);
}

static const struct boot_ops ops = { BOOT_OPS(sim, "sim") };

static const struct backend boot_sim_backend = {
	.kind = BACKEND_BOOT,
	.name = "sim",
	.what = "tests only (build/tlblabd-sim): a boot of a real boot's time, scaled, that always comes up",
	.ops = &ops,
};
BACKEND_REGISTER(boot_sim_backend)
