/*
 * Where kernels are built and run: the machines: and builders: sections.
 * Both are endpoints (a transport, local or ssh, and how to reach the host);
 * a machine also has a boot method (none, qemu, kexec, reboot) with its own
 * section, checked here against the method it belongs to.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_int.h"

#include "arch.h"
#include "qemu-plugin/tlb_model.h"
#include "strbuf.h"
#include "util.h"
#include "banned.h"

static const char *transport_name_int(int i)
{
	return config_transport_kind_name((enum transport_kind)i);
}

static const char *boot_name_int(int i)
{
	return config_boot_method_name((enum boot_method)i);
}

/* Keys shared by machines and builders, in this order at the start of both tables. */
enum {
	EK_NAME, EK_TRANSPORT, EK_HOST_GROUP, EK_HOST, EK_PORT, EK_USER, EK_IDENTITY, EK_KNOWN_HOSTS,
	EK_HOST_KEY, EK_MAX
};
#define ENDPOINT_KEYS "name", "transport", "host_group", "host", "port", "user", "identity", \
	"known_hosts", "host_key"

static void parse_endpoint(struct cfg_ctx *c, yaml_node_t *map, const struct keyset *ks,
			   const char *what, struct cfg_endpoint *ep)
{
	int kind = -1;
	long port;

	ep->port = 22;
	if (!ks->val[EK_TRANSPORT])
		config_missing_key(c, map, "transport", what, " (local or ssh)");
	else
		kind = config_get_enum(c, "transport", ks->val[EK_TRANSPORT], transport_name_int,
				TRANSPORT_KIND_MAX);
	if (kind >= 0)
		ep->transport = (enum transport_kind)kind;

	if (ks->val[EK_HOST_GROUP])
		ep->host_group = config_get_str(c, "host_group", ks->val[EK_HOST_GROUP], config_valid_name,
					 MUST_NAME);
	if (ks->val[EK_HOST])
		ep->host = config_get_str(c, "host", ks->val[EK_HOST], config_valid_host, MUST_HOST);
	if (ks->val[EK_PORT] && config_get_int(c, "port", ks->val[EK_PORT], 1, 65535, &port) == 0)
		ep->port = (int)port;
	if (ks->val[EK_USER])
		ep->user = config_get_str(c, "user", ks->val[EK_USER], config_valid_user, MUST_USER);
	else
		ep->user = xstrdup("root");
	if (ks->val[EK_IDENTITY])
		ep->identity = config_get_str(c, "identity", ks->val[EK_IDENTITY], config_valid_path, MUST_PATH);
	if (ks->val[EK_KNOWN_HOSTS])
		ep->known_hosts = config_get_str(c, "known_hosts", ks->val[EK_KNOWN_HOSTS], config_valid_path,
					  MUST_PATH);
	if (ks->val[EK_HOST_KEY])
		ep->host_key = config_get_str(c, "host_key", ks->val[EK_HOST_KEY], config_valid_host_key,
				       MUST_HOST_KEY);

	if (kind == TRANSPORT_SSH) {
		if (!ks->val[EK_HOST])
			config_missing_key(c, map, "host", what, " (required with transport ssh)");
		if (!ks->val[EK_IDENTITY])
			config_missing_key(c, map, "identity", what, " (required with transport ssh)");
		if (!ks->val[EK_KNOWN_HOSTS] && !ks->val[EK_HOST_KEY])
			node_error(c, map, "missing key 'known_hosts' or 'host_key' in %s "
				   "(transport ssh checks the host key strictly)", what);
	} else if (kind == TRANSPORT_LOCAL) {
		/* a remote setting on a local endpoint is a mistake, not a default */
		for (int i = EK_HOST; i < EK_MAX; i++)
			if (ks->key[i])
				node_error(c, ks->key[i], "%s: only used with transport ssh (in %s)",
					   config_scalar(ks->key[i]), what);
	}
}

static const char *const qemu_keys[] = {
	"binary", "memory", "accel", "initrd", "guest_host", "ssh_port", "identity",
	"host_key", "known_hosts", "append", "pin_vcpus", "icount_shift", "insn_plugin", "host_cpu",
	"duet", "tlb_model", "max_cpus", NULL
};
enum { QK_BINARY, QK_MEMORY, QK_ACCEL, QK_INITRD, QK_GUEST_HOST, QK_SSH_PORT, QK_IDENTITY,
       QK_HOST_KEY, QK_KNOWN_HOSTS, QK_APPEND, QK_PIN_VCPUS, QK_ICOUNT_SHIFT, QK_INSN_PLUGIN,
       QK_HOST_CPU, QK_DUET, QK_TLB_MODEL, QK_MAX_CPUS, QK_MAX };
KEYS_MATCH(qemu_keys, QK_MAX);

static const char *const tlb_keys[] = { "dtlb", "itlb", "stlb", NULL };
enum { TK_DTLB, TK_ITLB, TK_STLB, TK_MAX };
KEYS_MATCH(tlb_keys, TK_MAX);

/*
 * tlb_model: on (the default sizes), off, or a mapping of dtlb, itlb and
 * stlb as ENTRIESxWAYS (the rest default): the plugin's arguments, or
 * NULL for off or after an error. Without the key a machine has the model
 * at its default sizes in the boots of a suite that asks for it.
 */
static char *parse_tlb_model(struct cfg_ctx *c, yaml_node_t *n, const char *machine)
{
	struct strbuf args = STRBUF_INIT;
	struct keyset ks;
	char what[128];
	int i;

	if (!config_is_mapping(n)) {
		const char *v = config_scalar(n);

		if (v && !strcmp(v, "off"))
			return NULL;
		if (v && !strcmp(v, "on"))
			return xstrdup("tlb=on");
		node_error(c, n, "tlb_model: must be on, off, or a mapping of dtlb, itlb and stlb "
			   "(ENTRIESxWAYS, e.g. 64x4)");
		return NULL;
	}
	snprintf(what, sizeof(what), "the tlb_model of %s", machine);
	config_map_keys(c, n, tlb_keys, what, "key", &ks);
	strbuf_addstr(&args, "tlb=on");
	for (i = 0; i < TK_MAX; i++) {
		const char *v = ks.val[i] ? config_scalar(ks.val[i]) : NULL;
		struct tlb_geom g;

		if (!ks.val[i])
			continue;
		if (!v || tlb_geom_parse(v, &g) < 0) {
			node_error(c, ks.val[i], "%s: must be ENTRIESxWAYS (e.g. 64x4), the entries a multiple "
				   "of the ways, a power-of-two number of sets, at most %d entries (in %s)",
				   tlb_keys[i], TLB_ENTRIES_MAX, what);
			continue;
		}
		strbuf_addf(&args, ",%s=%ux%u", tlb_keys[i], g.entries, g.ways);
	}
	return strbuf_detach(&args, NULL);
}

static const char *const qemu_accels[] = { "auto", "kvm", "tcg", "icount" };

static const char *qemu_accel_name_int(int i)
{
	return qemu_accels[i];
}

static const char *const qemu_pins[] = {
	[QEMU_PIN_AUTO] = "auto", [QEMU_PIN_ON] = "on", [QEMU_PIN_OFF] = "off",
};

static const char *qemu_pin_name_int(int i)
{
	return qemu_pins[i];
}

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
	if (m->ep.transport == TRANSPORT_LOCAL && (host = sysconf(_SC_NPROCESSORS_ONLN)) > 0)
		return host > GUEST_CPUS_LIMIT ? GUEST_CPUS_LIMIT : (int)host;
	return m->cpus > 0 ? (m->cpus > GUEST_CPUS_LIMIT ? GUEST_CPUS_LIMIT : m->cpus) : 2;
}

/* The qemu: section n of machine `machine` (boot: qemu), or NULL after an error. */
static struct cfg_qemu *parse_qemu(struct cfg_ctx *c, yaml_node_t *n, const char *machine,
				   const struct arch *arch)
{
	struct cfg_qemu *q;
	struct keyset ks;
	char what[128];
	long v;
	int accel = 0;

	if (!config_is_mapping(n)) {
		node_error(c, n, "qemu: must be a mapping (initrd, ssh_port, identity, and "
			   "host_key or known_hosts are required)");
		return NULL;
	}
	snprintf(what, sizeof(what), "the qemu section of %s", machine);
	config_map_keys(c, n, qemu_keys, what, "key", &ks);
	q = xcalloc(1, sizeof(*q));
	q->binary = ks.val[QK_BINARY]
		? config_get_str(c, "binary", ks.val[QK_BINARY], config_valid_program, MUST_PROGRAM)
		: xstrdup(arch->qemu);
	q->memory = 1024;
	if (ks.val[QK_MEMORY] && config_get_int(c, "memory", ks.val[QK_MEMORY], QEMU_MEMORY_MIN,
					 QEMU_MEMORY_MAX, &v) == 0)
		q->memory = (int)v;
	if (ks.val[QK_ACCEL])
		accel = config_get_enum(c, "accel", ks.val[QK_ACCEL], qemu_accel_name_int,
				 (int)ARRAY_SIZE(qemu_accels));
	if (accel >= 0)
		q->accel = xstrdup(qemu_accels[accel]);
	if (ks.val[QK_INITRD])
		q->initrd = config_get_str(c, "initrd", ks.val[QK_INITRD], config_valid_path, MUST_PATH);
	else
		config_missing_key(c, n, "initrd", what, " (the guest's initramfs)");
	q->guest_host = ks.val[QK_GUEST_HOST]
		? config_get_str(c, "guest_host", ks.val[QK_GUEST_HOST], config_valid_ip, MUST_IP)
		: xstrdup("127.0.0.1");
	if (ks.val[QK_SSH_PORT]) {
		if (config_get_int(c, "ssh_port", ks.val[QK_SSH_PORT], 1, 65535, &v) == 0)
			q->ssh_port = (int)v;
	} else {
		config_missing_key(c, n, "ssh_port", what, " (the host port forwarded to the guest's "
			    "SSH)");
	}
	if (ks.val[QK_IDENTITY])
		q->identity = config_get_str(c, "identity", ks.val[QK_IDENTITY], config_valid_path, MUST_PATH);
	else
		config_missing_key(c, n, "identity", what, " (the private key for root on the guest)");
	if (ks.val[QK_HOST_KEY])
		q->host_key = config_get_str(c, "host_key", ks.val[QK_HOST_KEY], config_valid_host_key,
				      MUST_HOST_KEY);
	if (ks.val[QK_KNOWN_HOSTS])
		q->known_hosts = config_get_str(c, "known_hosts", ks.val[QK_KNOWN_HOSTS], config_valid_path,
					 MUST_PATH);
	if (!ks.val[QK_HOST_KEY] && !ks.val[QK_KNOWN_HOSTS])
		node_error(c, n, "missing key 'known_hosts' or 'host_key' in %s "
			   "(the guest's host key is checked strictly)", what);
	if (ks.val[QK_APPEND])
		q->append = config_get_str(c, "append", ks.val[QK_APPEND], config_valid_cmdline, MUST_CMDLINE);
	q->icount_shift = QEMU_ICOUNT_SHIFT_DEFAULT;
	if (ks.val[QK_ICOUNT_SHIFT] && config_get_int(c, "icount_shift", ks.val[QK_ICOUNT_SHIFT], 0,
						     QEMU_ICOUNT_SHIFT_MAX, &v) == 0)
		q->icount_shift = (int)v;
	if (ks.val[QK_INSN_PLUGIN])
		q->insn_plugin = !strcmp(config_scalar(ks.val[QK_INSN_PLUGIN]), "off")
			? xstrdup("off")
			: config_get_str(c, "insn_plugin", ks.val[QK_INSN_PLUGIN], config_valid_path, MUST_PATH);
	if (!ks.val[QK_TLB_MODEL] && !(q->insn_plugin && !strcmp(q->insn_plugin, "off"))) {
		q->tlb_model = xstrdup("tlb=on");
	} else if (ks.val[QK_TLB_MODEL]) {
		q->tlb_model = parse_tlb_model(c, ks.val[QK_TLB_MODEL], machine);
		q->tlb_always = q->tlb_model != NULL;
		if (q->tlb_model && q->insn_plugin && !strcmp(q->insn_plugin, "off"))
			node_error(c, ks.val[QK_TLB_MODEL], "tlb_model: the TLB model lives in the instruction "
				   "plugin, which insn_plugin: off turns off (in %s)", what);
	}
	if (ks.val[QK_PIN_VCPUS]) {
		int pin = config_get_enum(c, "pin_vcpus", ks.val[QK_PIN_VCPUS], qemu_pin_name_int, QEMU_PIN_MAX);

		if (pin >= 0)
			q->pin_vcpus = (enum qemu_pin)pin;
	}
	q->file_max = c->cfg->qemu_file_max;
	q->host_cpu = -1;
	if (ks.val[QK_HOST_CPU] && config_get_int(c, "host_cpu", ks.val[QK_HOST_CPU], 0, QEMU_HOST_CPU_MAX, &v) == 0)
		q->host_cpu = (int)v;
	if (ks.val[QK_MAX_CPUS] && config_get_int(c, "max_cpus", ks.val[QK_MAX_CPUS], 1, GUEST_CPUS_LIMIT,
						 &v) == 0)
		q->max_cpus = (int)v;
	if (ks.val[QK_DUET]) {
		q->duet = config_get_str(c, "duet", ks.val[QK_DUET], config_valid_name, MUST_NAME);
		q->duet_line = (int)ks.val[QK_DUET]->start_mark.line + 1;
		q->duet_col = (int)ks.val[QK_DUET]->start_mark.column + 1;
	}
	return q;
}

void config_qemu_free(struct cfg_qemu *q)
{
	if (!q)
		return;
	free(q->binary);
	free(q->accel);
	free(q->insn_plugin);
	free(q->tlb_model);
	free(q->duet);
	free(q->initrd);
	free(q->guest_host);
	free(q->identity);
	free(q->host_key);
	free(q->known_hosts);
	free(q->append);
	free(q);
}

static const char *const kexec_keys[] = { "append", "initrd", NULL };
enum { XK_APPEND, XK_INITRD, XK_MAX };
KEYS_MATCH(kexec_keys, XK_MAX);

/* The kexec: section n of machine `machine` (boot: kexec), or NULL after an error. */
static struct cfg_kexec *parse_kexec(struct cfg_ctx *c, yaml_node_t *n, const char *machine)
{
	struct cfg_kexec *k;
	struct keyset ks;
	char what[128];

	if (!config_is_mapping(n)) {
		node_error(c, n, "kexec: must be a mapping (with the optional keys append and "
			   "initrd)");
		return NULL;
	}
	snprintf(what, sizeof(what), "the kexec section of %s", machine);
	config_map_keys(c, n, kexec_keys, what, "key", &ks);
	k = xcalloc(1, sizeof(*k));
	if (ks.val[XK_APPEND])
		k->append = config_get_str(c, "append", ks.val[XK_APPEND], config_valid_cmdline, MUST_CMDLINE);
	if (ks.val[XK_INITRD])
		k->initrd = config_get_str(c, "initrd", ks.val[XK_INITRD], config_valid_path, MUST_PATH);
	return k;
}

void config_kexec_free(struct cfg_kexec *k)
{
	if (!k)
		return;
	free(k->append);
	free(k->initrd);
	free(k);
}

static const char *const reboot_keys[] = {
	"append", "kernel_dir", "grub_dir", "initrd", "entry_file", "once", "command", NULL
};
enum { RB_APPEND, RB_KERNEL_DIR, RB_GRUB_DIR, RB_INITRD, RB_ENTRY_FILE, RB_ONCE, RB_COMMAND, RB_MAX };
KEYS_MATCH(reboot_keys, RB_MAX);

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
		if (n >= PATH_MAX_LEN || (!config_is_alnum(s[n]) && !strchr("._/-", s[n])))
			return 0;
	return 1;
}

/* An argv list (non-empty, a program name first) or NULL after an error. */
static char **get_argv(struct cfg_ctx *c, const char *key, yaml_node_t *n)
{
	size_t count = 0;
	char **v = config_get_list(c, key, n, config_valid_arg, MUST_ARG, &count);

	if (v && (count == 0 || !*v[0])) {
		node_error(c, n, "%s: must be a command as a list of strings (argv), with a non-empty "
			   "program name first", key);
		config_strv_free(v);
		return NULL;
	}
	return v;
}

static char **argv_of(const char *const *words)
{
	size_t n = 0;
	char **v;

	while (words[n])
		n++;
	v = xcalloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = xstrdup(words[i]);
	return v;
}

/* The reboot: section n (or NULL: all defaults) of machine `machine`. */
static struct cfg_reboot *parse_reboot(struct cfg_ctx *c, yaml_node_t *n, const char *machine)
{
	static const char *const once_default[] = { "grub-reboot", "{entry}", NULL };
	static const char *const command_default[] = { "reboot", NULL };
	struct cfg_reboot *r = xcalloc(1, sizeof(*r));
	struct keyset ks;
	char what[128];

	memset(&ks, 0, sizeof(ks));
	if (n && !config_is_mapping(n)) {
		node_error(c, n, "reboot: must be a mapping (append, kernel_dir, grub_dir, initrd, "
			   "entry_file, once, command)");
	} else if (n) {
		snprintf(what, sizeof(what), "the reboot section of %s", machine);
		config_map_keys(c, n, reboot_keys, what, "key", &ks);
	}
	if (ks.val[RB_APPEND])
		r->append = config_get_str(c, "append", ks.val[RB_APPEND], config_valid_cmdline, MUST_CMDLINE);
	r->kernel_dir = ks.val[RB_KERNEL_DIR]
		? config_get_str(c, "kernel_dir", ks.val[RB_KERNEL_DIR], valid_grub_path, MUST_GRUB_PATH)
		: xstrdup("/boot");
	if (ks.val[RB_GRUB_DIR])
		r->grub_dir = config_get_str(c, "grub_dir", ks.val[RB_GRUB_DIR], valid_grub_path, MUST_GRUB_PATH);
	else if (r->kernel_dir)
		r->grub_dir = xstrdup(r->kernel_dir);
	if (ks.val[RB_INITRD])
		r->initrd = config_get_str(c, "initrd", ks.val[RB_INITRD], valid_file_name, MUST_FILE_NAME);
	r->entry_file = ks.val[RB_ENTRY_FILE]
		? config_get_str(c, "entry_file", ks.val[RB_ENTRY_FILE], config_valid_path, MUST_PATH)
		: xstrdup("/boot/grub/custom.cfg");
	r->once = ks.val[RB_ONCE] ? get_argv(c, "once", ks.val[RB_ONCE]) : argv_of(once_default);
	r->command = ks.val[RB_COMMAND] ? get_argv(c, "command", ks.val[RB_COMMAND])
					: argv_of(command_default);
	return r;
}

void config_reboot_free(struct cfg_reboot *r)
{
	if (!r)
		return;
	free(r->append);
	free(r->kernel_dir);
	free(r->grub_dir);
	free(r->initrd);
	free(r->entry_file);
	config_strv_free(r->once);
	config_strv_free(r->command);
	free(r);
}

static const char *const machine_keys[] = {
	ENDPOINT_KEYS, "arch", "cpus", "tags", "boot", "power_cycle", "agent_path", "workdir",
	"qemu", "kexec", "reboot", "boot_timeout", "power_cycle_timeout", NULL
};
enum { MK_ARCH = EK_MAX, MK_CPUS, MK_TAGS, MK_BOOT, MK_POWER_CYCLE, MK_AGENT_PATH, MK_WORKDIR,
       MK_QEMU, MK_KEXEC, MK_REBOOT, MK_BOOT_TIMEOUT, MK_POWER_CYCLE_TIMEOUT, MK_MAX };
KEYS_MATCH(machine_keys, MK_MAX);

void config_parse_machine(struct cfg_ctx *c, yaml_node_t *map, size_t index, json_t *seen,
		   struct cfg_machine *m)
{
	struct cfg_item it;
	long v;
	int b;

	m->name = config_item_start(c, map, "machine", "machines", index, machine_keys, EK_NAME, seen, &it, &m->line);
	parse_endpoint(c, map, &it.ks, it.what, &m->ep);

	m->arch = xstrdup("x86_64");
	if (it.ks.val[MK_ARCH]) {
		char *a = config_get_str(c, "arch", it.ks.val[MK_ARCH], config_valid_name, MUST_NAME);

		/* kept as the arch's own name: aarch64 is arm64 */
		if (a && arch_lookup(a)) {
			free(m->arch);
			m->arch = xstrdup(arch_lookup(a)->name);
		} else if (a) {
			node_error(c, it.ks.val[MK_ARCH], "arch: '%.64s' is not one of %s (in %s)", a, arch_names(),
				   it.what);
		}
		free(a);
	}
	if (it.ks.val[MK_CPUS] && config_get_int(c, "cpus", it.ks.val[MK_CPUS], 0, 4096, &v) == 0)
		m->cpus = (int)v;
	if (it.ks.val[MK_TAGS])
		m->tags = config_get_list(c, "tags", it.ks.val[MK_TAGS], config_valid_name, MUST_NAME,
				   &m->ntags);
	if (!m->tags)
		m->tags = xcalloc(1, sizeof(*m->tags));
	m->boot = BOOT_NONE;
	b = BOOT_NONE;
	if (it.ks.val[MK_BOOT]) {
		b = config_get_enum(c, "boot", it.ks.val[MK_BOOT], boot_name_int, BOOT_METHOD_MAX);
		if (b >= 0)
			m->boot = (enum boot_method)b;
	}
	/* with an unknown boot method (b < 0, reported) neither section can be judged */
	if (it.ks.val[MK_QEMU] && b == BOOT_QEMU) {
		m->qemu = parse_qemu(c, it.ks.val[MK_QEMU], it.what, arch_get(m->arch));
		if (m->qemu && !m->qemu->max_cpus)
			m->qemu->max_cpus = default_max_cpus(m, m->qemu);
	} else if (it.ks.val[MK_QEMU] && b >= 0)
		node_error(c, it.ks.key[MK_QEMU], "qemu: only for boot: qemu (in %s)", it.what);
	else if (b == BOOT_QEMU)
		config_missing_key(c, map, "qemu", it.what, " (required with boot: qemu)");
	/* kexec: ~ is no section, as it would be for any optional key */
	if (it.ks.val[MK_KEXEC] && b == BOOT_KEXEC && !config_is_null(it.ks.val[MK_KEXEC]))
		m->kexec = parse_kexec(c, it.ks.val[MK_KEXEC], it.what);
	else if (it.ks.val[MK_KEXEC] && b >= 0 && b != BOOT_KEXEC)
		node_error(c, it.ks.key[MK_KEXEC], "kexec: only for boot: kexec (in %s)", it.what);
	if (b == BOOT_REBOOT)
		m->reboot = parse_reboot(c, it.ks.val[MK_REBOOT] && !config_is_null(it.ks.val[MK_REBOOT])
					 ? it.ks.val[MK_REBOOT] : NULL, it.what);
	else if (it.ks.val[MK_REBOOT] && b >= 0)
		node_error(c, it.ks.key[MK_REBOOT], "reboot: only for boot: reboot (in %s)", it.what);
	if (it.ks.val[MK_POWER_CYCLE] && !config_is_null(it.ks.val[MK_POWER_CYCLE])) {
		size_t n = 0;

		m->power_cycle = config_get_list(c, "power_cycle", it.ks.val[MK_POWER_CYCLE], config_valid_arg,
					  MUST_ARG, &n);
		/* bad items were reported by config_get_list: only an empty command is left */
		if (m->power_cycle && (it.ks.val[MK_POWER_CYCLE]->data.sequence.items.top ==
				       it.ks.val[MK_POWER_CYCLE]->data.sequence.items.start ||
				       (n > 0 && !*m->power_cycle[0])))
			node_error(c, it.ks.val[MK_POWER_CYCLE],
				   "power_cycle: must be a command as a list of strings (argv), "
				   "with a non-empty program name first");
	}
	m->agent_path = it.ks.val[MK_AGENT_PATH]
		? config_get_str(c, "agent_path", it.ks.val[MK_AGENT_PATH], config_valid_path, MUST_PATH)
		: xstrdup("/tmp/tlblab-agent");
	if (it.ks.val[MK_BOOT_TIMEOUT])
		config_get_seconds(c, "boot_timeout", it.ks.val[MK_BOOT_TIMEOUT], &m->boot_timeout);
	/* a real machine's firmware can take minutes after a power cycle, where
	 * a short boot_timeout finds a silent one soon */
	if (it.ks.val[MK_POWER_CYCLE_TIMEOUT] && !m->power_cycle)
		node_error(c, it.ks.key[MK_POWER_CYCLE_TIMEOUT], "power_cycle_timeout: only with power_cycle (in %s)",
			   it.what);
	else if (it.ks.val[MK_POWER_CYCLE_TIMEOUT])
		config_get_seconds(c, "power_cycle_timeout", it.ks.val[MK_POWER_CYCLE_TIMEOUT],
				   &m->power_cycle_timeout);
	m->workdir = it.ks.val[MK_WORKDIR]
		? config_get_str(c, "workdir", it.ks.val[MK_WORKDIR], config_valid_path, MUST_PATH)
		: xstrdup("/tmp/tlblab");
}

static const char *const builder_keys[] = { ENDPOINT_KEYS, "jobs", "workdir", "ccache", NULL };
enum { BK_JOBS = EK_MAX, BK_WORKDIR, BK_CCACHE, BK_MAX };
KEYS_MATCH(builder_keys, BK_MAX);

void config_parse_builder(struct cfg_ctx *c, yaml_node_t *map, size_t index, json_t *seen,
		   struct cfg_builder *b)
{
	struct cfg_item it;
	long v;

	b->name = config_item_start(c, map, "builder", "builders", index, builder_keys, EK_NAME, seen, &it, &b->line);
	parse_endpoint(c, map, &it.ks, it.what, &b->ep);
	b->jobs = 2;
	if (it.ks.val[BK_JOBS] && config_get_int(c, "jobs", it.ks.val[BK_JOBS], 1, 256, &v) == 0)
		b->jobs = (int)v;
	b->workdir = it.ks.val[BK_WORKDIR]
		? config_get_str(c, "workdir", it.ks.val[BK_WORKDIR], config_valid_path, MUST_PATH)
		: xstrdup("/var/cache/tlblab");
	if (it.ks.val[BK_CCACHE])
		b->ccache = config_get_str(c, "ccache", it.ks.val[BK_CCACHE], config_valid_path, MUST_PATH);
}

/*
 * Duets: two qemu machines on one host whose guests run at once, one host
 * CPU each, the base kernel on one and the patched on the other (sched_loop.c
 * swaps them between rounds), so that what disturbs the host disturbs both
 * sides of a pair alike. Each names the other; both boot the same arch
 * under single-threaded emulation on a host CPU of their own.
 */
void config_check_duets(struct cfg_ctx *c)
{
	const struct lab_config *cfg = c->cfg;
	size_t i, k;

	for (i = 0; i < cfg->nmachines; i++) {
		const struct cfg_machine *m = &cfg->machines[i], *o = NULL;
		const struct cfg_qemu *q = m->qemu;

		if (!q || !q->duet)
			continue;
		for (k = 0; k < cfg->nmachines; k++)
			if (cfg->machines[k].name && !strcmp(cfg->machines[k].name, q->duet))
				o = &cfg->machines[k];
		if (!o) {
			config_error(c, (unsigned long)q->duet_line, (unsigned long)q->duet_col, "duet: '%s' is not a machine (in machine %s)",
				     q->duet, m->name);
		} else if (o == m) {
			config_error(c, (unsigned long)q->duet_line, (unsigned long)q->duet_col, "duet: machine %s names itself", m->name);
		} else if (!o->qemu || !o->qemu->duet || strcmp(o->qemu->duet, m->name)) {
			config_error(c, (unsigned long)q->duet_line, (unsigned long)q->duet_col, "duet: machine %s names %s, whose qemu "
				     "section must name %s back (duet: %s)", m->name, o->name, m->name, m->name);
		} else if (strcmp(o->arch, m->arch) || !config_same_host(&m->ep, &o->ep)) {
			config_error(c, (unsigned long)q->duet_line, (unsigned long)q->duet_col, "duet: machines %s and %s must have the "
				     "same arch and the same host", m->name, o->name);
		} else if (q->accel && strcmp(q->accel, "icount") && strcmp(q->accel, "tcg")) {
			config_error(c, (unsigned long)q->duet_line, (unsigned long)q->duet_col, "duet: machine %s needs accel icount or tcg "
				     "(a guest of its own on a host CPU of its own), not %s", m->name, q->accel);
		} else if (q->host_cpu < 0 || o->qemu->host_cpu < 0 || q->host_cpu == o->qemu->host_cpu) {
			config_error(c, (unsigned long)q->duet_line, (unsigned long)q->duet_col, "duet: machines %s and %s each need a "
				     "host_cpu of their own", m->name, o->name);
		}
	}
}
