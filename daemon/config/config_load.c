/*
 * The configuration loader.
 *
 * The text is parsed whole into a libyaml document (a node tree where every
 * node keeps its position), then walked section by section. A check that
 * fails records an error at the position of the node it concerns and the
 * walk goes on, so one run shows every problem; the errors are sorted by
 * position before they are shown. Sections are walked in dependency order
 * (lab, builders, machines, trees, suites) whatever their order in the file,
 * so a tree may name a builder defined below it and a suite's default
 * timeout is the lab's stage_timeout.
 *
 * A suite's workload specs are converted to JSON and checked by the agent's
 * own spec parser (lib/catalog/spec.h, which both link), so a spec the agent
 * would refuse after a build and a boot is refused here, at the position of
 * the field it names.
 * Times and sizes take the same units there and in the lab's settings
 * ("10m", "1M"), read by the same functions.
 *
 * Relative paths (data_dir, token_file, identity, ...) are kept as written:
 * they are relative to the daemon's working directory, not to the file.
 *
 * Everything a user controls is bounded: the file (4 MiB), the token file
 * (1 MiB), the number of errors kept, and the size and depth of a workload
 * spec after YAML aliases are expanded (an alias bomb would otherwise turn
 * a small file into a huge JSON tree).
 *
 * The loader is split by role behind config_int.h: config_yaml.c (errors
 * at positions, node access, typed getters, YAML to JSON), config_validate.c
 * (what a name, host, path or token may be), config_lab.c (the lab
 * section), config_machines.c (machines and builders, their transports and
 * boot methods), config_suites.c (trees, suites, workload specs, compare
 * rules), config_tracks.c (tracks, notify); config_lookup.c finds what a
 * loaded configuration names. This file walks the document section by
 * section and holds the rest of the public API: defaults, references, free.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "config_int.h"
#include "backend.h"
#include "compare_class.h"
#include "util.h"
#include "banned.h"

/* ---- reading the file, walking the document ---- */

/*
 * Walks the list of mappings n of one section, calling parse for each into
 * a new array of *ret_n items of `size` bytes (returned; NULL when empty).
 */
static void *parse_section(struct cfg_ctx *c, yaml_node_t *n, const char *section,
			   size_t size, size_t *ret_n, config_item_parse_fn *parse)
{
	json_t *seen;
	char *items;
	size_t count, i = 0;

	*ret_n = 0;
	if (config_is_null(n))
		return NULL;
	if (n->type != YAML_SEQUENCE_NODE) {
		node_error(c, n, "%s: must be a list of mappings", section);
		return NULL;
	}
	count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (!count)
		return NULL;
	items = xcalloc(count, size);
	seen = json_object();
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		yaml_node_t *item = config_node_get(c, *it);
		size_t index = (size_t)(it - n->data.sequence.items.start);

		if (!config_is_mapping(item)) {
			node_error(c, item, "%s[%zu]: must be a mapping", section, index);
			continue;
		}
		parse(c, item, index, seen, items + i * size);
		/* items are stored only as parsed; the count must match what config_free walks */
		i++;
		*ret_n = i;
	}
	json_decref(seen);
	return items;
}

static const char *const top_keys[] = {
	"lab", "machines", "builders", "trees", "suites", "notify", "tracks", "defaults", NULL
};
enum { TOP_LAB, TOP_MACHINES, TOP_BUILDERS, TOP_TREES, TOP_SUITES, TOP_NOTIFY, TOP_TRACKS, TOP_DEFAULTS,
       TOP_MAX };
KEYS_MATCH(top_keys, TOP_MAX);

static void parse_document(struct cfg_ctx *c, yaml_node_t *root)
{
	struct lab_config *cfg = c->cfg;
	struct keyset ks;

	if (!root) {
		config_error(c, 1, 1, "empty configuration (lab.data_dir is required)");
		return;
	}
	if (!config_is_mapping(root)) {
		node_error(c, root, "the configuration must be a mapping with the sections "
			   "lab, machines, builders, trees, suites, notify, tracks and defaults");
		return;
	}
	config_map_keys(c, root, top_keys, "the configuration (sections: lab, machines, builders, "
		 "trees, suites, notify, tracks, defaults)", "section", &ks);
	if (ks.val[TOP_LAB])
		config_parse_lab(c, ks.val[TOP_LAB]);
	else
		node_error(c, root, "missing section 'lab' (lab.data_dir is required)");
	if (ks.val[TOP_BUILDERS])
		cfg->builders = parse_section(c, ks.val[TOP_BUILDERS], "builders",
					      sizeof(*cfg->builders), &cfg->nbuilders,
					      config_parse_builder);
	if (ks.val[TOP_MACHINES])
		cfg->machines = parse_section(c, ks.val[TOP_MACHINES], "machines",
					      sizeof(*cfg->machines), &cfg->nmachines,
					      config_parse_machine);
	config_check_backends(c);
	if (ks.val[TOP_TREES])
		cfg->trees = parse_section(c, ks.val[TOP_TREES], "trees", sizeof(*cfg->trees),
					   &cfg->ntrees, config_parse_tree);
	if (ks.val[TOP_SUITES])
		cfg->suites = parse_section(c, ks.val[TOP_SUITES], "suites", sizeof(*cfg->suites),
					    &cfg->nsuites, config_parse_suite);
	if (ks.val[TOP_DEFAULTS])
		config_parse_defaults(c, ks.val[TOP_DEFAULTS]);
	if (ks.val[TOP_NOTIFY])
		cfg->hooks = parse_section(c, ks.val[TOP_NOTIFY], "notify", sizeof(*cfg->hooks),
					   &cfg->nhooks, config_parse_hook);
	if (ks.val[TOP_TRACKS])
		cfg->tracks = parse_section(c, ks.val[TOP_TRACKS], "tracks", sizeof(*cfg->tracks),
					    &cfg->ntracks, config_parse_track);
}

/* ---- public API ---- */

int config_load_string(const char *name, const char *text, size_t len,
		       struct lab_config **ret, struct strbuf *err)
{
	struct cfg_ctx c = { .name = name };
	yaml_parser_t parser;
	yaml_document_t doc, extra;
	struct strbuf registry = STRBUF_INIT;
	int have_doc = 0, r = -1;

	if (err)
		strbuf_reset(err);
	if (!yaml_parser_initialize(&parser))
		abort();
	c.cfg = xcalloc(1, sizeof(*c.cfg));
	atomic_init(&c.cfg->refs, 1);
	c.cfg->path = xstrdup(name);
	config_lab_defaults(c.cfg);

	if (len > CONFIG_MAX_BYTES) {
		config_error(&c, 0, 0, "larger than %u KiB", CONFIG_MAX_BYTES >> 10);
		goto out;
	}
	/* a backend or a class named twice makes every lab ambiguous: no
	 * load succeeds */
	if ((backend_registry_errors(&registry) | compare_class_registry_errors(&registry)) < 0) {
		config_error(&c, 0, 0, "%.*s", (int)registry.len - 1, registry.buf);
		goto out;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		config_yaml_syntax_error(&c, &parser, text, len);
		goto out;
	}
	have_doc = 1;
	c.doc = &doc;
	/* a second document would be silently ignored: refuse it */
	if (!yaml_parser_load(&parser, &extra)) {
		config_yaml_syntax_error(&c, &parser, text, len);
		goto out;
	}
	if (yaml_document_get_root_node(&extra)) {
		yaml_node_t *root = yaml_document_get_root_node(&extra);

		node_error(&c, root, "only one YAML document is allowed");
	}
	yaml_document_delete(&extra);
	if (c.nerrs)
		goto out;

	parse_document(&c, yaml_document_get_root_node(&doc));
	if (c.nerrs)
		goto out;
	*ret = c.cfg;
	c.cfg = NULL;
	r = 0;
out:
	strbuf_release(&registry);
	config_errors_flush(&c, err);
	config_ctx_release(&c);
	config_free(c.cfg);
	if (have_doc)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return r;
}

int config_load(const char *path, struct lab_config **ret, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;
	char why[128];
	int r;

	r = config_read_regular_file(path, &text, CONFIG_MAX_BYTES);
	if (r < 0) {
		if (err) {
			strbuf_reset(err);
			strbuf_addf(err, "%s: cannot read: %s", path,
				    config_read_error_text(r, CONFIG_MAX_BYTES, why, sizeof(why)));
		}
		r = -1;
		goto out;
	}
	r = config_load_string(path, text.buf, text.len, ret, err);
out:
	strbuf_release(&text);
	return r;
}

const struct lab_config *config_ref(const struct lab_config *cfg)
{
	if (cfg)
		atomic_fetch_add(&((struct lab_config *)cfg)->refs, 1);
	return cfg;
}

void config_free(const struct lab_config *shared)
{
	/* the count is the only part a holder changes: the cast is for it */
	struct lab_config *cfg = (struct lab_config *)shared;

	if (!cfg || atomic_fetch_sub(&cfg->refs, 1) > 1)
		return;
	for (size_t i = 0; i < cfg->nmachines; i++) {
		struct cfg_machine *m = &cfg->machines[i];

		free(m->name);
		config_endpoint_release(&m->ep);
		free(m->arch);
		config_strv_free(m->tags);
		config_strv_free(m->power_cycle);
		free(m->agent_path);
		free(m->workdir);
		config_machine_boot_release(m);
	}
	free(cfg->machines);
	for (size_t i = 0; i < cfg->nbuilders; i++) {
		free(cfg->builders[i].name);
		config_endpoint_release(&cfg->builders[i].ep);
		free(cfg->builders[i].workdir);
		free(cfg->builders[i].ccache);
	}
	free(cfg->builders);
	for (size_t i = 0; i < cfg->ntrees; i++) {
		free(cfg->trees[i].name);
		free(cfg->trees[i].url);
		free(cfg->trees[i].builder);
		free(cfg->trees[i].config_base);
		config_strv_free(cfg->trees[i].fragments);
	}
	free(cfg->trees);
	for (size_t i = 0; i < cfg->nsuites; i++) {
		free(cfg->suites[i].name);
		json_decref(cfg->suites[i].workloads);
		for (size_t k = 0; k < cfg->suites[i].rules.noverrides; k++)
			free((char *)cfg->suites[i].overrides[k].metric);
		free(cfg->suites[i].overrides);
	}
	free(cfg->suites);
	for (size_t i = 0; i < cfg->nhooks; i++)
		config_hook_release(&cfg->hooks[i]);
	free(cfg->hooks);
	for (size_t i = 0; i < cfg->ntracks; i++)
		config_track_release(&cfg->tracks[i]);
	free(cfg->tracks);
	free(cfg->defaults.suite);
	free(cfg->defaults.tree);
	free(cfg->defaults.base);
	config_lab_release(cfg);
	free(cfg->path);
	free(cfg);
}
