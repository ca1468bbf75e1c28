/*
 * Where kernels are built and run: the machines: and builders: sections.
 * Both are endpoints (a transport, a backend of the registry such as local
 * or ssh, and the keys of how to reach the host it reads);
 * a machine also has a boot method, a backend of the registry (backend.h)
 * whose section (the key of its name) is read here by the method's own
 * rows, and checked by the method's finish().
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_int.h"
#include "backend.h"

#include "arch.h"
#include "tlb_geom.h"
#include "strbuf.h"
#include "util.h"
#include "banned.h"

/* Keys shared by machines and builders, in this order at the start of both tables. */
enum {
	EK_NAME, EK_TRANSPORT, EK_HOST_GROUP, EK_HOST, EK_PORT, EK_USER, EK_IDENTITY, EK_KNOWN_HOSTS,
	EK_HOST_KEY, EK_MAX
};
#define ENDPOINT_KEYS "name", "transport", "host_group", "host", "port", "user", "identity", \
	"known_hosts", "host_key"

/* The backend of kind named at n (boot:, transport:), or NULL with an
 * error listing them. */
static const struct backend *get_backend(struct cfg_ctx *c, enum backend_kind kind, yaml_node_t *n)
{
	const char *s = config_scalar(n);
	const struct backend *b = s ? backend_find(kind, s) : NULL;
	struct strbuf names = STRBUF_INIT;

	if (b)
		return b;
	backend_names(kind, &names);
	node_error(c, n, "%s: must be %s", backend_kind_key(kind), names.buf);
	strbuf_release(&names);
	return NULL;
}

#define EP(field) offsetof(struct cfg_endpoint, field)

/* How to reach a host: the keys of machines and builders a transport reads
 * (its endpoint_keys; host_group is every transport's). */
static const struct setting endpoint_rows[] = {
	{ .name = "host_group", .type = SET_STR, .off = EP(host_group), .valid = config_valid_name,
	  .must = MUST_NAME },
	{ .name = "host", .type = SET_STR, .off = EP(host), .valid = config_valid_host, .must = MUST_HOST },
	{ .name = "port", .type = SET_INT, .off = EP(port), .def = 22, .min = 1, .max = 65535 },
	{ .name = "user", .type = SET_STR, .off = EP(user), .valid = config_valid_user, .must = MUST_USER,
	  .def_text = "root" },
	{ .name = "identity", .type = SET_STR, .off = EP(identity), .valid = config_valid_path, .must = MUST_PATH },
	{ .name = "known_hosts", .type = SET_STR, .off = EP(known_hosts), .valid = config_valid_path,
	  .must = MUST_PATH },
	{ .name = "host_key", .type = SET_STR, .off = EP(host_key), .valid = config_valid_host_key,
	  .must = MUST_HOST_KEY },
};

static int reads_key(const struct backend *t, const char *key)
{
	for (size_t i = 0; t->endpoint_keys && t->endpoint_keys[i]; i++)
		if (!strcmp(t->endpoint_keys[i], key))
			return 1;
	return 0;
}

/* "ssh": the transports that read key, for a message. */
static void readers_of(const char *key, struct strbuf *out)
{
	const struct backend *t;
	size_t n = 0;

	for (size_t i = 0; (t = backend_at(BACKEND_TRANSPORT, i)); i++)
		if (reads_key(t, key))
			strbuf_addf(out, "%s%s", n++ ? " or " : "", t->name);
}

/* The endpoint of item map (a machine or a builder, called what): its
 * transport, and the keys that transport reads, by endpoint_rows. */
static void parse_endpoint(struct cfg_ctx *c, yaml_node_t *map, const struct keyset *ks,
			   const char *what, struct cfg_endpoint *ep)
{
	struct cfg_section sec = { .c = c, .map = map, .owner = map, .what = what, .rows = endpoint_rows,
				   .n = ARRAY_SIZE(endpoint_rows), .base = ep, .subset = 1 };
	struct strbuf names = STRBUF_INIT;

	settings_defaults(endpoint_rows, ARRAY_SIZE(endpoint_rows), ep);
	if (ks->val[EK_TRANSPORT]) {
		ep->transport = get_backend(c, BACKEND_TRANSPORT, ks->val[EK_TRANSPORT]);
	} else {
		strbuf_addstr(&names, " (");
		backend_names(BACKEND_TRANSPORT, &names);
		strbuf_addch(&names, ')');
		config_missing_key(c, map, "transport", what, names.buf);
	}
	settings_parse(&sec);
	/* with an unknown transport (reported) its keys cannot be judged */
	for (size_t i = 1; ep->transport && i < ARRAY_SIZE(endpoint_rows); i++) {
		if (!sec.ks.key[i] || reads_key(ep->transport, endpoint_rows[i].name))
			continue;
		/* a setting the transport does not read is a mistake, not a default */
		strbuf_reset(&names);
		readers_of(endpoint_rows[i].name, &names);
		node_error(c, sec.ks.key[i], "%s: only used with transport %s (in %s)", endpoint_rows[i].name,
			   names.buf, what);
	}
	if (ep->transport && ep->transport->check_endpoint)
		ep->transport->check_endpoint(&sec, ep);
	strbuf_release(&names);
}

void config_endpoint_release(struct cfg_endpoint *ep)
{
	settings_release(endpoint_rows, ARRAY_SIZE(endpoint_rows), ep);
}

static const char *const tlb_keys[] = { "dtlb", "itlb", "stlb", NULL };
enum { TK_DTLB, TK_ITLB, TK_STLB, TK_MAX };
KEYS_MATCH(tlb_keys, TK_MAX);

/*
 * tlb_model: on (the default sizes), off, or a mapping of dtlb, itlb and
 * stlb as ENTRIESxWAYS (the rest default), checked by the plugin's own
 * parser: the plugin's arguments in the row's char *, or NULL for off or
 * after an error.
 */
static void tlb_model_parse(struct cfg_section *sec, const struct setting *row, void *base)
{
	struct cfg_ctx *c = sec->c;
	yaml_node_t *n = settings_value(sec, row->name);
	char **f = (char **)((char *)base + row->off);
	struct strbuf args = STRBUF_INIT;
	struct keyset ks;
	char what[160];
	int i;

	free(*f);
	*f = NULL;
	if (!config_is_mapping(n)) {
		const char *v = config_scalar(n);

		if (v && !strcmp(v, "on"))
			*f = xstrdup("tlb=on");
		else if (!v || strcmp(v, "off"))
			node_error(c, n, "%s: must be on, off, or a mapping of dtlb, itlb and stlb "
				   "(ENTRIESxWAYS, e.g. 64x4)", row->name);
		return;
	}
	snprintf(what, sizeof(what), "the %s of %s", row->name, sec->what);
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
	*f = strbuf_detach(&args, NULL);
}

static void str_row_text(const struct setting *row, const void *base, struct strbuf *out)
{
	const char *v = *(char *const *)((const char *)base + row->off);

	strbuf_addstr(out, v ? v : "-");
}

static void str_row_release(const struct setting *row, void *base)
{
	char **f = (char **)((char *)base + row->off);

	free(*f);
	*f = NULL;
}

const struct setting_custom config_tlb_geometry = {
	"on, off, or {dtlb, itlb, stlb: ENTRIESxWAYS}", NULL, tlb_model_parse, str_row_text, str_row_release,
};

static const char *const machine_keys[] = {
	ENDPOINT_KEYS, "arch", "cpus", "tags", "boot", "power_cycle", "agent_path", "workdir",
	"boot_timeout", "power_cycle_timeout", NULL
};
enum { MK_ARCH = EK_MAX, MK_CPUS, MK_TAGS, MK_BOOT, MK_POWER_CYCLE, MK_AGENT_PATH, MK_WORKDIR,
       MK_BOOT_TIMEOUT, MK_POWER_CYCLE_TIMEOUT, MK_MAX };
KEYS_MATCH(machine_keys, MK_MAX);

/* A machine's keys: its own, then one per boot method with a section (the
 * method's name); *ret_n is the count. */
static void machine_key_table(const char **keys, size_t *ret_n)
{
	const struct backend *b;
	size_t n = 0;

	while (machine_keys[n]) {
		keys[n] = machine_keys[n];
		n++;
	}
	for (size_t i = 0; (b = backend_at(BACKEND_BOOT, i)); i++)
		if (b->nsettings && n < MAX_KEYS)
			keys[n++] = b->name;
	keys[n] = NULL;
	*ret_n = n;
}

/*
 * The sections of boot methods in m's item: boot's own read by its rows
 * (over their defaults; absent, the defaults alone unless the method
 * needs it), then its finish(); another method's section is a mistake.
 * With an unknown method (b NULL, reported) no section can be judged.
 */
static void parse_boot_sections(struct cfg_ctx *c, yaml_node_t *map, struct cfg_item *it,
				const char *const *keys, size_t nkeys, const struct backend *b,
				struct cfg_machine *m)
{
	char what[160];

	for (size_t k = MK_MAX; k < nkeys; k++) {
		yaml_node_t *v = it->ks.val[k];
		const struct backend *other = backend_find(BACKEND_BOOT, keys[k]);

		if (v && b && other != b)
			node_error(c, it->ks.key[k], "%s: only for boot: %s (in %s)", keys[k], keys[k], it->what);
		if (!b || other != b)
			continue;
		/* kexec: ~ is no section, as it would be for any optional key */
		if (v && config_is_null(v) && !(b->flags & BACKEND_SECTION_REQUIRED))
			v = NULL;
		if (!v && (b->flags & BACKEND_SECTION_REQUIRED)) {
			snprintf(what, sizeof(what), " (required with boot: %s)", b->name);
			config_missing_key(c, map, b->name, it->what, what);
			continue;
		}
		if (v && !config_is_mapping(v)) {
			node_error(c, v, "%s: must be a mapping (%s)", b->name, b->section_hint);
			continue;
		}
		snprintf(what, sizeof(what), "the %s section of %s", b->name, it->what);
		m->boot_conf = xcalloc(1, b->conf_size);
		settings_defaults(b->settings, b->nsettings, m->boot_conf);
		{
			struct cfg_section sec = { .c = c, .map = v, .owner = map, .what = what, .rows = b->settings,
						   .n = b->nsettings, .base = m->boot_conf };

			settings_parse(&sec);
			if (b->finish)
				b->finish(&sec, m, m->boot_conf);
		}
	}
}

void config_machine_boot_release(struct cfg_machine *m)
{
	if (!m->boot || !m->boot_conf)
		return;
	if (m->boot->release)
		m->boot->release(m->boot_conf);
	settings_release(m->boot->settings, m->boot->nsettings, m->boot_conf);
	free(m->boot_conf);
	m->boot_conf = NULL;
}

int config_boot_setting(const struct cfg_machine *m, const char *key, struct strbuf *out)
{
	const struct setting *row = m->boot ? settings_find(m->boot->settings, m->boot->nsettings, key) : NULL;

	if (!row || !m->boot_conf)
		return -1;
	settings_text(row, m->boot_conf, out);
	return 0;
}

void config_check_backends(struct cfg_ctx *c)
{
	const struct backend *b;

	for (size_t i = 0; (b = backend_at(BACKEND_BOOT, i)); i++)
		if (b->check_lab)
			b->check_lab(c, c->cfg);
}

void config_parse_machine(struct cfg_ctx *c, yaml_node_t *map, size_t index, json_t *seen, void *item)
{
	struct cfg_machine *m = item;
	const char *keys[MAX_KEYS + 1];
	const struct backend *boot;
	struct cfg_item it;
	size_t nkeys;
	long v;

	machine_key_table(keys, &nkeys);
	m->name = config_item_start(c, map, "machine", "machines", index, keys, EK_NAME, seen, &it, &m->line);
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
	m->host_cpu = -1;
	boot = it.ks.val[MK_BOOT] ? get_backend(c, BACKEND_BOOT, it.ks.val[MK_BOOT]) : backend_find(BACKEND_BOOT, "none");
	m->boot = boot ? boot : backend_find(BACKEND_BOOT, "none");
	parse_boot_sections(c, map, &it, keys, nkeys, boot, m);
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

void config_parse_builder(struct cfg_ctx *c, yaml_node_t *map, size_t index, json_t *seen, void *item)
{
	struct cfg_builder *b = item;
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

