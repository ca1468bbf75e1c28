/*
 * What is built and what is run: the trees: section (a kernel source, the
 * builder that builds it, its config) and the suites: section (workload
 * specs, checked by the agent's own spec parser, and the compare rules,
 * with per-metric overrides); and the defaults: section, the suite, tree
 * and base a job takes when it names none, so parsed after both.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "spec.h"
#include "util.h"
#include "banned.h"

static const char *const tree_keys[] = {
	"name", "url", "builder", "config_base", "fragments", NULL
};
enum { TK_NAME, TK_URL, TK_BUILDER, TK_CONFIG_BASE, TK_FRAGMENTS, TK_MAX };
KEYS_MATCH(tree_keys, TK_MAX);

void config_parse_tree(struct cfg_ctx *c, yaml_node_t *map, size_t index, json_t *seen, void *item)
{
	struct cfg_tree *t = item;
	struct cfg_item it;

	t->name = config_item_start(c, map, "tree", "trees", index, tree_keys, TK_NAME, seen, &it, &t->line);
	if (it.ks.val[TK_URL])
		t->url = config_get_str(c, "url", it.ks.val[TK_URL], config_valid_path, MUST_URL);
	else
		config_missing_key(c, map, "url", it.what, " (a path or git URL)");
	if (it.ks.val[TK_BUILDER]) {
		t->builder = config_get_str(c, "builder", it.ks.val[TK_BUILDER], config_valid_name,
				     MUST_NAME);
		if (t->builder && !config_builder(c->cfg, t->builder))
			node_error(c, it.ks.val[TK_BUILDER], "builder: no builder named '%s'",
				   t->builder);
	} else {
		config_missing_key(c, map, "builder", it.what, "");
	}
	t->config_base = it.ks.val[TK_CONFIG_BASE]
		? config_get_str(c, "config_base", it.ks.val[TK_CONFIG_BASE], config_valid_path, MUST_CONFIG_BASE)
		: xstrdup("tinyconfig");
	if (it.ks.val[TK_FRAGMENTS])
		t->fragments = config_get_list(c, "fragments", it.ks.val[TK_FRAGMENTS], config_valid_path,
					MUST_PATH, &t->nfragments);
	if (!t->fragments)
		t->fragments = xcalloc(1, sizeof(*t->fragments));
}

static const char *const suite_keys[] = {
	"name", "timeout", "workloads", "compare", "tlb_model", "guest_cpus", NULL
};
enum { SK_NAME, SK_TIMEOUT, SK_WORKLOADS, SK_COMPARE, SK_TLB_MODEL, SK_GUEST_CPUS, SK_MAX };
KEYS_MATCH(suite_keys, SK_MAX);

#define MUST_PATTERN	"a metric name or pattern of 1 to 128 letters, digits and '._-*?[]'"
#define MAX_OVERRIDES	256

static int valid_pattern(const char *s)
{
	size_t n;

	for (n = 0; s[n]; n++)
		if (n >= 128 || (!config_is_alnum(s[n]) && !strchr("._-*?[]", s[n])))
			return 0;
	return n > 0;
}

static const char *const rule_keys[] = { "alpha", "min_change", "same_band", NULL };
enum { RK_ALPHA, RK_MIN_CHANGE, RK_SAME_BAND, RK_MAX };
KEYS_MATCH(rule_keys, RK_MAX);

/* compare: alpha, metrics, then the margins of the classes, each under
 * the key its class file names (compare_class.h): min_change,
 * min_change_counter and same_band are the time class's */
enum { CK_ALPHA, CK_METRICS, CK_MARGINS };

/* compare.metrics: {pattern: {alpha, min_change, same_band}}, in file order. */
static void parse_overrides(struct cfg_ctx *c, yaml_node_t *n, struct cfg_suite *s, const char *what)
{
	size_t count = 0;

	if (!config_is_mapping(n)) {
		node_error(c, n, "metrics: must be a mapping of metric patterns to rules "
			   "(alpha, min_change, same_band)");
		return;
	}
	s->overrides = xcalloc(MAX_OVERRIDES, sizeof(*s->overrides));
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = config_node_get(c, p->key), *vn = config_node_get(c, p->value);
		struct compare_override *ov;
		struct keyset ks;
		char label[192];
		char *pattern;

		if (count == MAX_OVERRIDES) {
			node_error(c, kn, "metrics: at most %d patterns", MAX_OVERRIDES);
			break;
		}
		pattern = config_get_str(c, "metrics", kn, valid_pattern, MUST_PATTERN);
		if (!pattern)
			continue;
		if (!config_is_mapping(vn)) {
			node_error(c, vn, "metrics: '%s': must be a mapping with alpha, min_change or "
				   "same_band", pattern);
			free(pattern);
			continue;
		}
		snprintf(label, sizeof(label), "the rule for '%.64s' in %.100s", pattern, what);
		config_map_keys(c, vn, rule_keys, label, "key", &ks);
		ov = &s->overrides[count++];
		ov->metric = pattern;
		ov->alpha = ov->min_change = ov->same_band = NAN;
		if (ks.val[RK_ALPHA])
			config_get_alpha(c, "alpha", ks.val[RK_ALPHA], &ov->alpha);
		if (ks.val[RK_MIN_CHANGE])
			config_get_fraction(c, "min_change", ks.val[RK_MIN_CHANGE], &ov->min_change);
		if (ks.val[RK_SAME_BAND])
			config_get_fraction(c, "same_band", ks.val[RK_SAME_BAND], &ov->same_band);
	}
	s->rules.overrides = s->overrides;
	s->rules.noverrides = count;
}

static void parse_compare(struct cfg_ctx *c, yaml_node_t *n, struct cfg_suite *s, const char *what)
{
	const char *keys[MAX_KEYS + 1] = { "alpha", "metrics" };
	size_t nkeys = CK_MARGINS + compare_rules_suite_keys(keys + CK_MARGINS, MAX_KEYS - CK_MARGINS);
	struct keyset ks;
	char label[128];

	nkeys = nkeys < MAX_KEYS ? nkeys : MAX_KEYS;
	keys[nkeys] = NULL;
	if (!config_is_mapping(n)) {
		struct strbuf list = STRBUF_INIT;

		for (size_t i = 0; i < nkeys; i++)
			strbuf_addf(&list, "%s%s", i ? ", " : "", keys[i]);
		node_error(c, n, "compare: must be a mapping (%s)", list.buf);
		strbuf_release(&list);
		return;
	}
	snprintf(label, sizeof(label), "the compare section of %.100s", what);
	config_map_keys(c, n, keys, label, "key", &ks);
	if (ks.val[CK_ALPHA])
		config_get_alpha(c, "alpha", ks.val[CK_ALPHA], &s->rules.alpha);
	for (size_t i = CK_MARGINS; i < nkeys; i++)
		if (ks.val[i])
			config_get_fraction(c, keys[i], ks.val[i], compare_rules_slot(&s->rules, keys[i]));
	if (ks.val[CK_METRICS])
		parse_overrides(c, ks.val[CK_METRICS], s, label);
}

/* "unknown field" and "not a parameter of W": the spec messages about a key (spec.h). */
static int spec_error_is_key(const char *text)
{
	return !strncmp(text, "unknown field", 13) || !strncmp(text, "not a parameter of ", 19);
}

/*
 * The node a message of the agent's spec parser is about. The message
 * starts with the field's path ("size", "size[1]", "neighbour.workers",
 * then ": "), walked here from the workload's mapping as far as it leads: a
 * missing field ("command: missing") stops at the mapping that lacks it.
 * Keys are matched whole, the longest first, so a key holding '.' or '['
 * is still found.
 */
static yaml_node_t *spec_error_node(struct cfg_ctx *c, yaml_node_t *item, const char *msg)
{
	const char *end = strstr(msg, ": "), *p = msg;
	yaml_node_t *n = item, *key = NULL;

	if (!end)
		return item;
	while (p < end) {
		if (*p == '[' && n->type == YAML_SEQUENCE_NODE) {
			size_t idx = 0, count = (size_t)(n->data.sequence.items.top -
							 n->data.sequence.items.start);
			const char *q = p + 1;

			for (; *q >= '0' && *q <= '9' && idx <= count; q++)
				idx = idx * 10 + (size_t)(*q - '0');
			if (q == p + 1 || *q != ']' || idx >= count)
				break;
			n = config_node_get(c, n->data.sequence.items.start[idx]);
			p = q + 1;
		} else if (config_is_mapping(n) && (p == msg || *p == '.')) {
			yaml_node_pair_t *best = NULL;
			size_t best_len = 0;

			if (p > msg)
				p++;
			for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
			     pr < n->data.mapping.pairs.top; pr++) {
				const char *k = config_scalar(config_node_get(c, pr->key));
				size_t len = k ? strlen(k) : 0;

				if (len > best_len && p + len <= end && !strncmp(p, k, len) &&
				    (p + len == end || p[len] == '.' || p[len] == '[')) {
					best = pr;
					best_len = len;
				}
			}
			if (!best)
				break;
			key = config_node_get(c, best->key);
			n = config_node_get(c, best->value);
			p += best_len;
		} else {
			break;
		}
	}
	if (key && p == end && spec_error_is_key(end + 2))
		return key;
	return n;
}

/*
 * Checks one workload spec with the agent's parser. The suite keeps the
 * spec as written ("8M" stays a string) and sends it so: the agent reads it
 * with this same code, and the suite shows in the API as the user wrote it.
 * Adds to *window_s the guest seconds its windows take at most: each
 * case's duration (a bound where rounds end it sooner) times its warm-up
 * and measured iterations.
 */
static int check_spec(struct cfg_ctx *c, yaml_node_t *item, json_t *j, double *window_s)
{
	struct strbuf err = STRBUF_INIT;
	struct spec sp;
	int r = spec_from_json(&sp, j, &err);

	if (r < 0) {
		node_error(c, spec_error_node(c, item, err.buf), "%s", err.buf);
	} else {
		for (size_t i = 0; i < sp.ncases; i++)
			*window_s += sp.cases[i].p.duration * (sp.warmup + sp.iterations);
		spec_release(&sp);
	}
	strbuf_release(&err);
	return r;
}

/* The workload specs into s->workloads; *window_s: their windows' guest
 * seconds (check_spec). */
static void parse_workloads(struct cfg_ctx *c, yaml_node_t *n, struct cfg_suite *s, double *window_s)
{
	json_t *arr;
	int failed = 0;

	if (n->type != YAML_SEQUENCE_NODE || n->data.sequence.items.top ==
					      n->data.sequence.items.start) {
		node_error(c, n, "workloads: must be a non-empty list of workload specs "
			   "(mappings with a 'workload' key)");
		return;
	}
	arr = json_array();
	c->json_budget = JSON_MAX_NODES;
	c->json_limit_reported = 0;
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		yaml_node_t *item = config_node_get(c, *it);
		ptrdiff_t i = it - n->data.sequence.items.start;
		yaml_node_t *w;
		json_t *j;
		int item_ok = 1;

		if (!config_is_mapping(item)) {
			node_error(c, item, "workloads[%td]: must be a mapping with a 'workload' key",
				   i);
			failed = 1;
			continue;
		}
		w = config_map_find(c, item, "workload");
		if (!w) {
			node_error(c, item, "workloads[%td]: missing key 'workload' "
				   "(the name of the workload to run)", i);
			item_ok = 0;
		} else if (!config_scalar(w) || config_is_null(w)) {
			node_error(c, w, "workload: must be the name of a workload");
			item_ok = 0;
		}
		j = config_node_to_json(c, item, 0);
		if (!j)
			item_ok = 0;
		else if (item_ok && check_spec(c, item, j, window_s) < 0)
			item_ok = 0;
		if (j)
			json_array_append_new(arr, j);
		if (!item_ok)
			failed = 1;
	}
	if (failed)
		json_decref(arr);
	else
		s->workloads = arr;
}

#define MUST_GUEST_CPUS "a vCPU count from 1 to 64, or a list of at most 8 of them like [2, 8]"

/* The lab's machine whose boots may ask the most vCPUs (a qemu machine's
 * max_cpus; the first of them), or NULL when none may ask any. */
static const struct cfg_machine *largest_qemu(const struct lab_config *cfg)
{
	const struct cfg_machine *best = NULL;

	for (size_t i = 0; i < cfg->nmachines; i++)
		if (cfg->machines[i].max_cpus > 0 && (!best || cfg->machines[i].max_cpus > best->max_cpus))
			best = &cfg->machines[i];
	return best;
}

/*
 * guest_cpus: one count or a list: each boot of a side is made once per
 * count, a QEMU guest of that many vCPUs (docs/emulated-work.md). A count
 * must fit a qemu machine of the lab (its max_cpus), and a run at that
 * count must be expected to end within the suite's timeout: the windows'
 * guest seconds (window_s, -1 when the workloads did not parse) times the
 * vCPUs times GUEST_CPUS_HOST_S_PER_VCPU, under icount's round-robin,
 * where every vCPU's instructions are the one host thread's.
 */
static void parse_guest_cpus(struct cfg_ctx *c, yaml_node_t *n, struct cfg_suite *s, const char *what,
			     double window_s)
{
	const struct cfg_machine *big = largest_qemu(c->cfg);
	yaml_node_t *items[GUEST_CPUS_MAX];
	size_t count = 0, i, k;
	int failed = 0;
	long v;

	if (n->type == YAML_SEQUENCE_NODE) {
		count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
		if (count == 0 || count > GUEST_CPUS_MAX) {
			node_error(c, n, "guest_cpus: must be %s (in %s)", MUST_GUEST_CPUS, what);
			return;
		}
		for (i = 0; i < count; i++)
			items[i] = config_node_get(c, n->data.sequence.items.start[i]);
	} else if (n->type == YAML_SCALAR_NODE) {
		items[count++] = n;
	} else {
		node_error(c, n, "guest_cpus: must be %s (in %s)", MUST_GUEST_CPUS, what);
		return;
	}
	if (!big) {
		node_error(c, n, "guest_cpus: the lab has no qemu machine to boot a guest at these counts "
			   "(in %s)", what);
		return;
	}
	for (i = 0; i < count; i++) {
		const char *bad = NULL;

		if (config_get_int(c, "guest_cpus", items[i], 1, GUEST_CPUS_LIMIT, &v) < 0) {
			failed = 1;
			continue;
		}
		for (k = 0; k < s->nguest_cpus; k++)
			if (s->guest_cpus[k] == (int)v)
				bad = "is listed twice";
		if (bad) {
			node_error(c, items[i], "guest_cpus: %ld %s (in %s)", v, bad, what);
			failed = 1;
			continue;
		}
		if (v > big->max_cpus) {
			node_error(c, items[i], "guest_cpus: %ld vCPUs is more than any qemu machine of the lab "
				   "allows (at most %d, machine '%s'; its qemu section's max_cpus) (in %s)", v,
				   big->max_cpus, big->name, what);
			failed = 1;
			continue;
		}
		if (window_s >= 0) {
			double est = window_s * (double)v * GUEST_CPUS_HOST_S_PER_VCPU;

			if (est > s->timeout) {
				node_error(c, items[i], "guest_cpus: a run at %ld vCPUs is estimated at %.0f s "
					   "(%.0f s of windows x %ld vCPUs x %g host s per guest s and vCPU under "
					   "icount), over the suite's timeout of %.0f s (in %s)", v, est, window_s, v,
					   GUEST_CPUS_HOST_S_PER_VCPU, s->timeout, what);
				failed = 1;
				continue;
			}
		}
		s->guest_cpus[s->nguest_cpus++] = (int)v;
	}
	if (failed)
		s->nguest_cpus = 0;
}

void config_parse_suite(struct cfg_ctx *c, yaml_node_t *map, size_t index, json_t *seen, void *item)
{
	struct cfg_suite *s = item;
	struct cfg_item it;
	double window_s = 0;

	s->name = config_item_start(c, map, "suite", "suites", index, suite_keys, SK_NAME, seen, &it, &s->line);
	s->timeout = c->cfg->stage_timeout;
	if (it.ks.val[SK_TIMEOUT])
		config_get_seconds(c, "timeout", it.ks.val[SK_TIMEOUT], &s->timeout);
	if (it.ks.val[SK_TLB_MODEL]) {
		const char *v = config_scalar(it.ks.val[SK_TLB_MODEL]);

		if (v && (!strcmp(v, "on") || !strcmp(v, "off")))
			s->tlb_model = !strcmp(v, "on");
		else
			node_error(c, it.ks.val[SK_TLB_MODEL], "tlb_model: must be on or off (the instruction "
				   "plugin's TLB model in this suite's boots, where a machine allows it; in %s)",
				   it.what);
	}
	if (it.ks.val[SK_WORKLOADS])
		parse_workloads(c, it.ks.val[SK_WORKLOADS], s, &window_s);
	else
		config_missing_key(c, map, "workloads", it.what, "");
	if (it.ks.val[SK_GUEST_CPUS])
		parse_guest_cpus(c, it.ks.val[SK_GUEST_CPUS], s, it.what, s->workloads ? window_s : -1);
	compare_rules_default(&s->rules);
	if (it.ks.val[SK_COMPARE])
		parse_compare(c, it.ks.val[SK_COMPARE], s, it.what);
}

static const char *const defaults_keys[] = { "suite", "tree", "base", NULL };
enum { DK_SUITE, DK_TREE, DK_BASE, DK_MAX };
KEYS_MATCH(defaults_keys, DK_MAX);

static int valid_base(const char *s)
{
	return ref_valid(s);
}

void config_parse_defaults(struct cfg_ctx *c, yaml_node_t *map)
{
	struct cfg_defaults *d = &c->cfg->defaults;
	struct keyset ks;

	if (!config_is_mapping(map)) {
		node_error(c, map, "defaults: must be a mapping (suite, tree, base)");
		return;
	}
	config_map_keys(c, map, defaults_keys, "defaults (keys: suite, tree, base)", "key", &ks);
	if (ks.val[DK_SUITE]) {
		d->suite = config_get_str(c, "suite", ks.val[DK_SUITE], config_valid_name, MUST_NAME);
		if (d->suite && !config_suite(c->cfg, d->suite))
			node_error(c, ks.val[DK_SUITE], "suite: no suite named '%s'", d->suite);
	}
	if (ks.val[DK_TREE]) {
		d->tree = config_get_str(c, "tree", ks.val[DK_TREE], config_valid_name, MUST_NAME);
		if (d->tree && !config_tree(c->cfg, d->tree))
			node_error(c, ks.val[DK_TREE], "tree: no tree named '%s'", d->tree);
	}
	if (ks.val[DK_BASE]) {
		d->base = config_get_str(c, "base", ks.val[DK_BASE], valid_base,
					 "a git ref (a branch or tag name, or a commit id)");
		/* a base is a ref of one tree: which one must be said */
		if (d->base && !ks.val[DK_TREE])
			node_error(c, ks.val[DK_BASE], "base: needs defaults.tree (the tree the ref is in)");
	}
}
