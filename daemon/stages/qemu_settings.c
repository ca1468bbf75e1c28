/*
 * boot: qemu's registration: the rows of a machine's qemu: section, the
 * checks across them, what the machine exposes of them (max_cpus, duet,
 * host_cpu, the guests' key) and the duets' checks between machines. The
 * VM itself is boot_qemu.c's.
 */
#include "boot_qemu.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch.h"
#include "backend.h"
#include "config.h"
#include "settings.h"
#include "util.h"
#include "validate.h"
#include "banned.h"

static const char *const accels[] = { "auto", "kvm", "tcg", "icount", NULL };
static const char *const pins[] = {
	[QEMU_PIN_AUTO] = "auto", [QEMU_PIN_ON] = "on", [QEMU_PIN_OFF] = "off", NULL
};

/* off, or the plugin's path on the VM host */
static int valid_plugin(const char *s)
{
	return !strcmp(s, "off") || config_valid_path(s);
}

#define AT(field) offsetof(struct cfg_qemu, field)

static const struct setting rows[] = {
	{ .name = "binary", .type = SET_STR, .off = AT(binary), .valid = config_valid_program,
	  .must = MUST_PROGRAM, .type_name = "program", .def_note = "the arch's (qemu-system-x86_64, "
	  "qemu-system-aarch64)", .what = "QEMU on the machine's host" },
	{ .name = "memory", .type = SET_INT, .off = AT(memory), .def = 1024, .min = 64, .max = 1048576,
	  .what = "the guest's memory, MiB" },
	{ .name = "accel", .type = SET_CHOICE, .off = AT(accel), .names = accels, .def_text = "auto",
	  .what = "kvm, multi-threaded tcg, or icount (single-threaded TCG whose clock is the instructions "
	  "run: deterministic counts, QEMU 8.1+); auto probes KVM once and falls back to tcg" },
	{ .name = "initrd", .type = SET_STR, .off = AT(initrd), .valid = config_valid_path, .must = MUST_PATH,
	  .type_name = "path", .flags = SETTING_REQUIRED, .need = " (the guest's initramfs)",
	  .what = "the guest's initramfs on the machine's host (kernels/mkinitramfs.sh)" },
	{ .name = "guest_host", .type = SET_STR, .off = AT(guest_host), .valid = config_valid_ip, .must = MUST_IP,
	  .def_text = "127.0.0.1", .type_name = "IP address",
	  .what = "where the forwarded SSH port listens" },
	{ .name = "ssh_port", .type = SET_INT, .off = AT(ssh_port), .min = 1, .max = 65535,
	  .flags = SETTING_REQUIRED, .need = " (the host port forwarded to the guest's SSH)",
	  .what = "the host port forwarded to the guest's port 22" },
	{ .name = "identity", .type = SET_STR, .off = AT(identity), .valid = config_valid_path, .must = MUST_PATH,
	  .type_name = "path", .flags = SETTING_REQUIRED, .need = " (the private key for root on the guest)",
	  .what = "the private key for root on the guest" },
	{ .name = "host_key", .type = SET_STR, .off = AT(host_key), .valid = config_valid_host_key,
	  .must = MUST_HOST_KEY, .type_name = "SHA256 fingerprint",
	  .what = "the guests' host key, pinned (or known_hosts: one of the two)" },
	{ .name = "known_hosts", .type = SET_STR, .off = AT(known_hosts), .valid = config_valid_path,
	  .must = MUST_PATH, .type_name = "path", .what = "a known_hosts file with the guests' host key" },
	{ .name = "append", .type = SET_STR, .off = AT(append), .valid = config_valid_cmdline,
	  .must = MUST_CMDLINE, .type_name = "kernel command line",
	  .what = "words added to the guest kernel's command line" },
	{ .name = "pin_vcpus", .type = SET_ENUM, .off = AT(pin_vcpus), .names = pins, .def = QEMU_PIN_AUTO,
	  .what = "each vCPU thread on a host CPU of its own (auto: when the host has enough)" },
	{ .name = "icount_shift", .type = SET_INT, .off = AT(icount_shift), .def = QEMU_ICOUNT_SHIFT_DEFAULT,
	  .min = 0, .max = QEMU_ICOUNT_SHIFT_MAX, .what = "icount: each instruction is 2^shift ns of guest time" },
	{ .name = "insn_plugin", .type = SET_STR, .off = AT(insn_plugin), .valid = valid_plugin,
	  .must = "off or " MUST_PATH, .type_name = "path or off",
	  .def_note = "tlblab-insn.so beside tlblabd (a local VM host)",
	  .what = "the instruction-counting plugin on the VM host, or off" },
	{ .name = "host_cpu", .type = SET_INT, .off = AT(host_cpu), .def = -1, .min = 0, .max = QEMU_HOST_CPU_MAX,
	  .def_note = "none", .what = "every thread of QEMU bound to this host CPU (a duet's)" },
	{ .name = "duet", .type = SET_STR, .off = AT(duet), .valid = config_valid_name, .must = MUST_NAME,
	  .type_name = "machine name", .what = "the machine on the same host whose guest runs beside this "
	  "one's, the other side of an A/B job at once; it names this one back" },
	{ .name = "tlb_model", .type = SET_CUSTOM, .off = AT(tlb_model), .custom = &config_tlb_geometry,
	  .def_note = "on when a suite asks", .what = "the instruction plugin's TLB model (docs/tlb-model.md): "
	  "on or sizes, every boot; absent, the boots of a suite with tlb_model: on" },
	{ .name = "max_cpus", .type = SET_INT, .off = AT(max_cpus), .min = 1, .max = GUEST_CPUS_LIMIT,
	  .def_note = "16 under icount, else the host's CPUs", .what = "the most vCPUs a suite's guest_cpus "
	  "may ask" },
};

/*
 * The most vCPUs a boot of m may ask when its qemu section does not say:
 * under icount one host thread runs every vCPU in turn, so a guest may be
 * bigger than the host (QEMU_ICOUNT_MAX_CPUS); under KVM or multi-threaded
 * TCG each vCPU is a host thread, so no more than the host has, counted
 * here where the VM host is this machine, else the machine's own cpus:.
 */
static int default_max_cpus(const struct cfg_machine *m, const struct cfg_qemu *q)
{
	long host;

	if (q->accel && !strcmp(q->accel, "icount"))
		return QEMU_ICOUNT_MAX_CPUS;
	if (config_endpoint_local(&m->ep) && (host = sysconf(_SC_NPROCESSORS_ONLN)) > 0)
		return host > GUEST_CPUS_LIMIT ? GUEST_CPUS_LIMIT : (int)host;
	return m->cpus > 0 ? (m->cpus > GUEST_CPUS_LIMIT ? GUEST_CPUS_LIMIT : m->cpus) : 2;
}

static void finish(struct cfg_section *sec, struct cfg_machine *m, void *conf)
{
	struct cfg_qemu *q = conf;
	const int plugin_off = q->insn_plugin && !strcmp(q->insn_plugin, "off");

	if (!q->binary)
		q->binary = xstrdup(arch_get(m->arch)->qemu);
	if (!settings_has(sec, "host_key") && !settings_has(sec, "known_hosts"))
		settings_error(sec, NULL, "missing key 'known_hosts' or 'host_key' in %s "
				  "(the guest's host key is checked strictly)", settings_what(sec));
	/* without the key, the model at its default sizes in the boots of a
	 * suite that asks for it */
	if (!settings_has(sec, "tlb_model") && !plugin_off) {
		q->tlb_model = xstrdup("tlb=on");
	} else if (settings_has(sec, "tlb_model")) {
		q->tlb_always = q->tlb_model != NULL;
		if (q->tlb_model && plugin_off)
			settings_error(sec, "tlb_model", "tlb_model: the TLB model lives in the instruction "
					  "plugin, which insn_plugin: off turns off (in %s)", settings_what(sec));
	}
	q->file_max = settings_lab(sec)->qemu_file_max;
	if (settings_has(sec, "duet"))
		settings_where(sec, "duet", &q->duet_line, &q->duet_col);
	if (!q->max_cpus)
		q->max_cpus = default_max_cpus(m, q);
	m->max_cpus = q->max_cpus;
	m->duet = q->duet;
	m->host_cpu = q->host_cpu;
	m->guest_identity = q->identity;
}

/*
 * Duets: two qemu machines on one host whose guests run at once, one host
 * CPU each, the base kernel on one and the patched on the other (sched_loop.c
 * swaps them between rounds), so that what disturbs the host disturbs both
 * sides of a pair alike. Each names the other; both boot the same arch
 * under single-threaded emulation on a host CPU of their own.
 */
static void check_duets(struct cfg_ctx *c, const struct lab_config *cfg)
{
	for (size_t i = 0; i < cfg->nmachines; i++) {
		const struct cfg_machine *m = &cfg->machines[i], *o = NULL;
		const struct cfg_qemu *q = qemu_conf(m), *oq;

		if (!q || !q->duet)
			continue;
		for (size_t k = 0; k < cfg->nmachines; k++)
			if (cfg->machines[k].name && !strcmp(cfg->machines[k].name, q->duet))
				o = &cfg->machines[k];
		oq = o ? qemu_conf(o) : NULL;
		if (!o)
			settings_error_at(c, q->duet_line, q->duet_col, "duet: '%s' is not a machine (in machine %s)",
				     q->duet, m->name);
		else if (o == m)
			settings_error_at(c, q->duet_line, q->duet_col, "duet: machine %s names itself", m->name);
		else if (!oq || !oq->duet || strcmp(oq->duet, m->name))
			settings_error_at(c, q->duet_line, q->duet_col, "duet: machine %s names %s, whose qemu "
				     "section must name %s back (duet: %s)", m->name, o->name, m->name, m->name);
		else if (strcmp(o->arch, m->arch) || !config_same_host(&m->ep, &o->ep))
			settings_error_at(c, q->duet_line, q->duet_col, "duet: machines %s and %s must have the "
				     "same arch and the same host", m->name, o->name);
		else if (q->accel && strcmp(q->accel, "icount") && strcmp(q->accel, "tcg"))
			settings_error_at(c, q->duet_line, q->duet_col, "duet: machine %s needs accel icount or tcg "
				     "(a guest of its own on a host CPU of its own), not %s", m->name, q->accel);
		else if (q->host_cpu < 0 || oq->host_cpu < 0 || q->host_cpu == oq->host_cpu)
			settings_error_at(c, q->duet_line, q->duet_col, "duet: machines %s and %s each need a "
				     "host_cpu of their own", m->name, o->name);
	}
}

static const struct backend boot_qemu_backend = {
	.kind = BACKEND_BOOT,
	.name = "qemu",
	.what = "a QEMU guest on the machine's host, reached by SSH through a forwarded port",
	.settings = rows,
	.nsettings = ARRAY_SIZE(rows),
	.conf_size = sizeof(struct cfg_qemu),
	.flags = BACKEND_SECTION_REQUIRED,
	.section_hint = "initrd, ssh_port, identity, and host_key or known_hosts are required",
	.finish = finish,
	.check_lab = check_duets,
	.ops = &boot_qemu,
};
BACKEND_REGISTER(boot_qemu_backend)

const struct cfg_qemu *qemu_conf(const struct cfg_machine *m)
{
	return m->boot == &boot_qemu_backend ? m->boot_conf : NULL;
}

struct cfg_qemu *qemu_conf_mut(struct cfg_machine *m)
{
	return m->boot == &boot_qemu_backend ? m->boot_conf : NULL;
}
