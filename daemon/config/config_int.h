#ifndef TLBLAB_CONFIG_INT_H
#define TLBLAB_CONFIG_INT_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "config.h"
#include "settings.h"
#include "validate.h"
#include "strbuf.h"
#include "util.h"

/*
 * What the files of the configuration loader share (config_load.c,
 * config_yaml.c, config_validate.c, config_lab.c, config_machines.c,
 * config_suites.c). Not for use outside them: the rest of the daemon sees
 * only config.h.
 *
 * Every function here that takes a node reports its own errors at that
 * node's position (config_error) and lets the walk go on.
 */

/* The bounds on everything a user controls, in one place. */
#define CONFIG_MAX_BYTES	(4u << 20)
#define TOKEN_FILE_MAX_BYTES	(1u << 20)
#define CONFIG_MAX_ERRORS	100
#define USER_MAX_LEN		64
#define HOST_MAX_LEN		253
#define PATH_MAX_LEN		4096
#define ARG_MAX_LEN		4096
#define LIST_MAX		256
#define TOKEN_MIN_LEN		16
#define TOKEN_MAX_LEN		4096
#define HOST_KEY_B64_LEN	43	/* a SHA-256 digest in unpadded base64 */
#define CMDLINE_MAX_LEN		1024
#define QEMU_MEMORY_MIN		64	/* MiB */
#define QEMU_MEMORY_MAX		1048576
#define TIMEOUT_MIN		1
#define TIMEOUT_MAX		604800	/* a week */
#define JSON_MAX_DEPTH		32
#define JSON_MAX_NODES		100000	/* per suite, after alias expansion */

/* One error found in the file, and the state of one load. */
struct cfg_error {
	unsigned long line, col;	/* 1-based; 0 when the error has no position */
	size_t seq;			/* keeps the sort stable */
	char *msg;
};

struct cfg_ctx {
	const char *name;
	yaml_document_t *doc;
	struct lab_config *cfg;
	struct cfg_error *errs;
	size_t nerrs, alloc_errs;
	size_t dropped;			/* errors past CONFIG_MAX_ERRORS */
	size_t json_budget;		/* nodes left for the suite being converted */
	int json_limit_reported;
};

/* An error at node n (libyaml marks are 0-based, messages 1-based). */
#define node_error(c, n, ...) \
	config_error((c), (unsigned long)(n)->start_mark.line + 1, \
		  (unsigned long)(n)->start_mark.column + 1, __VA_ARGS__)

#define MAX_KEYS 32
/* A key table (NULL-terminated) and the enum indexing it must not drift apart. */
#define KEYS_MATCH(table, max) \
	_Static_assert(ARRAY_SIZE(table) == (max) + 1 && (max) <= MAX_KEYS, \
		       #table " does not match its enum")

/* The known keys of one mapping, found by config_map_keys(). */
struct keyset {
	yaml_node_t *key[MAX_KEYS];
	yaml_node_t *val[MAX_KEYS];
};

/* ---- config_yaml.c: errors, nodes, typed getters ---- */

/* Frees a NULL-terminated array of strings and the array; NULL is fine. */
void config_strv_free(char **v);

/* Records an error at line:col (1-based; 0, 0: no position) of the file. */
__attribute__((format(printf, 4, 5)))
void config_error(struct cfg_ctx *c, unsigned long line, unsigned long col,
	       const char *fmt, ...);
/* Writes the errors to err, sorted by position, one per line (no final newline). */
void config_errors_flush(struct cfg_ctx *c, struct strbuf *err);
/* Reports a libyaml error: one message at the problem's position. */
void config_yaml_syntax_error(struct cfg_ctx *c, const yaml_parser_t *p, const char *text,
		       size_t len);
/* Frees the errors recorded in c. */
void config_ctx_release(struct cfg_ctx *c);

/* The node of the document at index. */
yaml_node_t *config_node_get(struct cfg_ctx *c, int index);
/* The text of a scalar node, or NULL when n is not a scalar or holds a NUL. */
const char *config_scalar(const yaml_node_t *n);
/* A plain empty, "~" or "null" scalar: YAML's null. */
int config_is_null(const yaml_node_t *n);
/* 1 when n is a mapping (NULL is not). */
int config_is_mapping(const yaml_node_t *n);
/* The value of key in mapping map, or NULL. No error reported. */
yaml_node_t *config_map_find(struct cfg_ctx *c, yaml_node_t *map, const char *key);
/* Sorts the pairs of map whose keys are in keys[] into ks, silently: the
 * caller's own config_map_keys reported the rest. */
void config_map_subset(struct cfg_ctx *c, yaml_node_t *map, const char *const *keys, struct keyset *ks);
/* Sorts the pairs of map into ks by keys[]; reports unknown, duplicate and
 * non-string keys, naming `what`. */
void config_map_keys(struct cfg_ctx *c, yaml_node_t *map, const char *const *keys,
	      const char *what, const char *unknown_word, struct keyset *ks);

/* The getters report an error at n (naming key) and return -1 (or NULL);
 * on success they write *ret (or return a new string or array). */

/* An integer from min to max. */
int config_get_int(struct cfg_ctx *c, const char *key, yaml_node_t *n, long min, long max,
	    long *ret);
/* A time from TIMEOUT_MIN to TIMEOUT_MAX seconds, in the spec's units. */
int config_get_seconds(struct cfg_ctx *c, const char *key, yaml_node_t *n, double *ret);
/* A time from min to max seconds, in the spec's units. */
int config_get_seconds_range(struct cfg_ctx *c, const char *key, yaml_node_t *n, double min, double max,
			     double *ret);
/* A byte count from min to max; lo and hi are the bounds as messages show them. */
int config_get_bytes(struct cfg_ctx *c, const char *key, yaml_node_t *n, uint64_t min,
	      uint64_t max, const char *lo, const char *hi, uint64_t *ret);
/* true or false. */
int config_get_bool(struct cfg_ctx *c, const char *key, yaml_node_t *n, int *ret);
/* A copy of the string value of n when valid(s), else NULL with an error. */
char *config_get_str(struct cfg_ctx *c, const char *key, yaml_node_t *n,
	      int (*valid)(const char *), const char *must);
/* Index of n's value in names[0..count), or -1 with an error listing them. */
int config_get_enum(struct cfg_ctx *c, const char *key, yaml_node_t *n,
	     const char *(*name_of)(int), int count);
/* A share: "2%" or 0.02, from 0 to 1. */
int config_get_fraction(struct cfg_ctx *c, const char *key, yaml_node_t *n, double *ret);
/* A significance level: above 0 and below 1. */
int config_get_alpha(struct cfg_ctx *c, const char *key, yaml_node_t *n, double *ret);
/* A NULL-terminated copy of the list of strings n, bad items reported and
 * left out; *ret_n gets the count. NULL, with an error, when not a list. */
char **config_get_list(struct cfg_ctx *c, const char *key, yaml_node_t *n,
		int (*valid)(const char *), const char *must, size_t *ret_n);

/* The JSON form of n, or NULL after reporting every error in it; bounded by
 * c->json_budget nodes and JSON_MAX_DEPTH levels. */
json_t *config_node_to_json(struct cfg_ctx *c, yaml_node_t *n, int depth);

/* An item of a top-level list (a tree, suite, machine, builder) being
 * parsed: its keys, and what messages call it ("machine 'm1'", or
 * "machines[2]" when it has no valid name). */
struct cfg_item {
	struct keyset ks;
	char what[96];
};
/*
 * Starts item `index` of section, a list of kind: labels it, checks its
 * keys against keys (keys[name_key] being "name") into it, sets *ret_line,
 * and records its name in seen (get_name). The name, or NULL when missing
 * or invalid (reported).
 */
char *config_item_start(struct cfg_ctx *c, yaml_node_t *map, const char *kind, const char *section,
		 size_t index, const char *const *keys, int name_key, json_t *seen,
		 struct cfg_item *it, int *ret_line);
/* Reports "missing key 'key' in what" followed by why. */
void config_missing_key(struct cfg_ctx *c, yaml_node_t *map, const char *key,
		 const char *what, const char *why);

/* ---- config_yaml.c: reading a file ---- */

/* Reads a whole regular file of at most max bytes into sb. 0 or a negative
 * errno (-EFBIG when larger, -EINVAL when not a regular file). */
int config_read_regular_file(const char *path, struct strbuf *sb, size_t max);
/* The text of an error of config_read_regular_file(), written in buf. */
const char *config_read_error_text(int r, size_t max, char *buf, size_t size);

/* ---- one section each: config_lab.c, config_machines.c, config_suites.c ---- */

/* The lab's settings at their defaults (config_lab.c's table), before the
 * file is read. */
void config_lab_defaults(struct lab_config *cfg);
/* The lab: mapping into c->cfg, over the defaults config_load_string() set. */
void config_parse_lab(struct cfg_ctx *c, yaml_node_t *map);
/* Item index of a section's list (map) into item, a struct of the
 * section's kind, zeroed (seen: the names of the items so far). The one
 * shape of all the item parsers below, so that one walk of a list
 * (config_load.c) serves every section. */
typedef void config_item_parse_fn(struct cfg_ctx *c, yaml_node_t *map, size_t index, json_t *seen, void *item);
/* Item of machines: a struct cfg_machine. */
config_item_parse_fn config_parse_machine;
/* Item of builders: a struct cfg_builder. */
config_item_parse_fn config_parse_builder;
/* Frees what an endpoint's settings own. */
void config_endpoint_release(struct cfg_endpoint *ep);
/* Frees a machine's boot method section (boot_conf). */
void config_machine_boot_release(struct cfg_machine *m);
/* After every machine is read: each boot method's checks between
 * machines (a duet's partner names it back). */
void config_check_backends(struct cfg_ctx *c);
/* Frees what the lab's settings own (their rows). */
void config_lab_release(struct lab_config *cfg);
/* Item of trees: a struct cfg_tree; its builder must be parsed already. */
config_item_parse_fn config_parse_tree;
/* Item of notify: a struct cfg_hook (config_tracks.c). */
config_item_parse_fn config_parse_hook;
/* Item of tracks: a struct cfg_track; trees, suites, machines and hooks
 * parsed already (config_tracks.c). */
config_item_parse_fn config_parse_track;
/* Frees what a track and a hook own (not the struct). */
void config_track_release(struct cfg_track *t);
void config_hook_release(struct cfg_hook *h);
/* the defaults: section, after trees: and suites: (config_suites.c) */
void config_parse_defaults(struct cfg_ctx *c, yaml_node_t *map);
/* Item of suites: a struct cfg_suite; the lab's stage_timeout must be
 * parsed already. */
config_item_parse_fn config_parse_suite;

/* ---- settings.c: a section read by its rows (settings.h) ---- */

struct cfg_section {
	struct cfg_ctx *c;
	yaml_node_t *map;		/* the section's mapping; NULL: absent */
	yaml_node_t *owner;		/* where errors of an absent section go */
	const char *what;		/* "the qemu section of machine 'm1'" */
	const struct setting *rows;
	size_t n;
	void *base;			/* the struct the rows fill */
	int subset;			/* the rows are some of map's keys (an item's
					 * endpoint): the item checks the rest */
	struct keyset ks;		/* the section's keys, by row */
};

/* Reads sec->map by its rows into sec->base (over their defaults):
 * unknown and duplicate keys, bad values and missing required rows are
 * errors. A NULL map reads nothing. */
void settings_parse(struct cfg_section *sec);
/* The value node of key in the parsed section, or NULL. */
yaml_node_t *settings_value(const struct cfg_section *sec, const char *key);
/* 1024 as "1K": as the configuration writes sizes, into buf. */
const char *settings_bytes_text(uint64_t v, char *buf, size_t size);

#endif
