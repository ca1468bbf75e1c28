/*
 * The configuration loader's YAML layer (config_load.c has the design): errors
 * recorded at a node's FILE:LINE:COL and shown sorted by position, access
 * to the nodes of the libyaml document, the typed getters every section
 * reads its values with, and the conversion of a node to JSON for workload
 * specs, bounded in size and depth.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "config_int.h"
#include "spec.h"
#include "util.h"
#include "banned.h"

/* ---- small helpers ---- */

void config_strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

/* ---- errors, at a position of the file ---- */

__attribute__((format(printf, 4, 5)))
void config_error(struct cfg_ctx *c, unsigned long line, unsigned long col,
	       const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	struct cfg_error *e;
	va_list ap;

	if (c->nerrs >= CONFIG_MAX_ERRORS) {
		c->dropped++;
		return;
	}
	if (c->nerrs == c->alloc_errs) {
		size_t n = c->alloc_errs ? 2 * c->alloc_errs : 8;
		struct cfg_error *p = xrealloc(c->errs, n * sizeof(*p));

		c->errs = p;
		c->alloc_errs = n;
	}
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	e = &c->errs[c->nerrs];
	e->line = line;
	e->col = col;
	e->seq = c->nerrs;
	e->msg = strbuf_detach(&sb, NULL);
	c->nerrs++;
}

static int cfg_error_cmp(const void *a, const void *b)
{
	const struct cfg_error *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Writes the errors to err, sorted by position, one per line (no final newline). */
void config_errors_flush(struct cfg_ctx *c, struct strbuf *err)
{
	if (!c->nerrs || !err)
		return;
	qsort(c->errs, c->nerrs, sizeof(*c->errs), cfg_error_cmp);
	for (size_t i = 0; i < c->nerrs; i++) {
		if (i)
			strbuf_addch(err, '\n');
		if (c->errs[i].line)
			strbuf_addf(err, "%s:%lu:%lu: %s", c->name, c->errs[i].line,
				    c->errs[i].col, c->errs[i].msg);
		else
			strbuf_addf(err, "%s: %s", c->name, c->errs[i].msg);
	}
	if (c->dropped)
		strbuf_addf(err, "\n%s: %zu more errors not shown", c->name, c->dropped);
}

/* Reports a libyaml error: one message at the problem's position. */
void config_yaml_syntax_error(struct cfg_ctx *c, const yaml_parser_t *p, const char *text,
		       size_t len)
{
	const char *problem = p->problem ? p->problem : "cannot parse";

	if (p->error == YAML_MEMORY_ERROR) {
		config_error(c, 0, 0, "out of memory while parsing");
	} else if (p->error == YAML_READER_ERROR) {
		/* the reader knows only a byte offset */
		unsigned long line = 1, col = 1;

		for (size_t i = 0; i < p->problem_offset && i < len; i++) {
			if (text[i] == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
		}
		if (p->problem_value != -1)
			config_error(c, line, col, "%s (byte 0x%02x)", problem, p->problem_value);
		else
			config_error(c, line, col, "%s", problem);
	} else if (p->context) {
		config_error(c, (unsigned long)p->problem_mark.line + 1,
			  (unsigned long)p->problem_mark.column + 1, "%s (%s at line %lu, column %lu)",
			  problem, p->context, (unsigned long)p->context_mark.line + 1,
			  (unsigned long)p->context_mark.column + 1);
	} else {
		config_error(c, (unsigned long)p->problem_mark.line + 1,
			  (unsigned long)p->problem_mark.column + 1, "%s", problem);
	}
}

void config_ctx_release(struct cfg_ctx *c)
{
	for (size_t i = 0; i < c->nerrs; i++)
		free(c->errs[i].msg);
	free(c->errs);
}

/* ---- nodes ---- */

yaml_node_t *config_node_get(struct cfg_ctx *c, int index)
{
	return yaml_document_get_node(c->doc, index);
}

/* The text of a scalar node, or NULL when n is not a scalar or holds a NUL. */
const char *config_scalar(const yaml_node_t *n)
{
	const char *s;

	if (!n || n->type != YAML_SCALAR_NODE)
		return NULL;
	s = (const char *)n->data.scalar.value;
	if (strlen(s) != n->data.scalar.length)
		return NULL;
	return s;
}

/* A plain empty, "~" or "null" scalar: YAML's null. */
int config_is_null(const yaml_node_t *n)
{
	const char *s = config_scalar(n);

	if (!s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

int config_is_mapping(const yaml_node_t *n)
{
	return n && n->type == YAML_MAPPING_NODE;
}

/* The value of key in mapping map, or NULL. No error reported. */
yaml_node_t *config_map_find(struct cfg_ctx *c, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *p;

	if (!config_is_mapping(map))
		return NULL;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *k = config_scalar(config_node_get(c, p->key));

		if (k && !strcmp(k, key))
			return config_node_get(c, p->value);
	}
	return NULL;
}

/*
 * Matches the pairs of map against keys[] (NULL-terminated, at most
 * MAX_KEYS). ks->val[i] and ks->key[i] get the nodes of keys[i], or NULL.
 * Reports unknown, duplicate and non-string keys, naming `what`.
 */
void config_map_subset(struct cfg_ctx *c, yaml_node_t *map, const char *const *keys, struct keyset *ks)
{
	memset(ks, 0, sizeof(*ks));
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *k = config_scalar(config_node_get(c, p->key));
		size_t i;

		for (i = 0; k && keys[i] && strcmp(keys[i], k); i++)
			;
		if (k && keys[i] && !ks->key[i]) {
			ks->key[i] = config_node_get(c, p->key);
			ks->val[i] = config_node_get(c, p->value);
		}
	}
}

void config_map_keys(struct cfg_ctx *c, yaml_node_t *map, const char *const *keys,
	      const char *what, const char *unknown_word, struct keyset *ks)
{
	yaml_node_pair_t *p;

	memset(ks, 0, sizeof(*ks));
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = config_node_get(c, p->key);
		const char *k = config_scalar(kn);
		size_t i;

		if (!k) {
			node_error(c, kn, "keys must be strings (in %s)", what);
			continue;
		}
		for (i = 0; keys[i] && strcmp(keys[i], k); i++)
			;
		if (!keys[i]) {
			node_error(c, kn, "unknown %s '%s' in %s", unknown_word, k, what);
			continue;
		}
		if (ks->key[i]) {
			node_error(c, kn, "duplicate key '%s' in %s (first at line %lu)", k, what,
				   (unsigned long)ks->key[i]->start_mark.line + 1);
			continue;
		}
		ks->key[i] = kn;
		ks->val[i] = config_node_get(c, p->value);
	}
}

/* ---- value getters: report an error and return -1 (or NULL) ---- */

int config_get_int(struct cfg_ctx *c, const char *key, yaml_node_t *n, long min, long max,
	    long *ret)
{
	const char *s = config_scalar(n);

	if (!s || parse_int_range(s, min, max, ret) < 0) {
		node_error(c, n, "%s: must be an integer from %ld to %ld", key, min, max);
		return -1;
	}
	return 0;
}

int config_get_seconds_range(struct cfg_ctx *c, const char *key, yaml_node_t *n, double min, double max,
			     double *ret)
{
	double v;

	if (spec_parse_seconds(config_scalar(n), &v) < 0 || v < min || v > max) {
		node_error(c, n, "%s: must be a number from %g to %g seconds, " SPEC_SECONDS_FORMS, key, min, max);
		return -1;
	}
	*ret = v;
	return 0;
}

int config_get_seconds(struct cfg_ctx *c, const char *key, yaml_node_t *n, double *ret)
{
	return config_get_seconds_range(c, key, n, TIMEOUT_MIN, TIMEOUT_MAX, ret);
}

/* A byte count from min to max; lo and hi are the bounds as messages show them. */
int config_get_bytes(struct cfg_ctx *c, const char *key, yaml_node_t *n, uint64_t min,
	      uint64_t max, const char *lo, const char *hi, uint64_t *ret)
{
	uint64_t v;

	if (spec_parse_bytes(config_scalar(n), &v) < 0 || v < min || v > max) {
		node_error(c, n, "%s: must be a number of bytes from %s to %s: " SPEC_BYTES_FORMS,
			   key, lo, hi);
		return -1;
	}
	*ret = v;
	return 0;
}

int config_get_bool(struct cfg_ctx *c, const char *key, yaml_node_t *n, int *ret)
{
	const char *s = config_scalar(n);

	if (s && (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))) {
		*ret = 1;
		return 0;
	}
	if (s && (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))) {
		*ret = 0;
		return 0;
	}
	node_error(c, n, "%s: must be true or false", key);
	return -1;
}

/* A copy of the string value of n when valid(s), else NULL with an error. */
char *config_get_str(struct cfg_ctx *c, const char *key, yaml_node_t *n,
	      int (*valid)(const char *), const char *must)
{
	const char *s = config_scalar(n);

	if (!s || config_is_null(n) || !valid(s)) {
		node_error(c, n, "%s: must be %s", key, must);
		return NULL;
	}
	return xstrdup(s);
}

/* Index of n's value in names[0..count), or -1 with an error listing them. */
int config_get_enum(struct cfg_ctx *c, const char *key, yaml_node_t *n,
	     const char *(*name_of)(int), int count)
{
	const char *s = config_scalar(n);
	struct strbuf list = STRBUF_INIT;

	for (int i = 0; s && i < count; i++)
		if (!strcmp(s, name_of(i)))
			return i;
	for (int i = 0; i < count; i++)
		strbuf_addf(&list, "%s%s", i ? (i == count - 1 ? " or " : ", ") : "", name_of(i));
	node_error(c, n, "%s: must be %s", key, list.buf);
	strbuf_release(&list);
	return -1;
}

/*
 * A NULL-terminated copy of the list of strings n (null is an empty list),
 * each checked with valid(); bad items are reported and left out. *ret_n
 * gets the count. Returns NULL, with an error, when n is not a list.
 */
char **config_get_list(struct cfg_ctx *c, const char *key, yaml_node_t *n,
		int (*valid)(const char *), const char *must, size_t *ret_n)
{
	char **v;
	size_t count = 0, i = 0;

	if (config_is_null(n)) {
		*ret_n = 0;
		return xcalloc(1, sizeof(*v));
	}
	if (n->type != YAML_SEQUENCE_NODE) {
		node_error(c, n, "%s: must be a list, each item %s", key, must);
		return NULL;
	}
	count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (count > LIST_MAX) {
		node_error(c, n, "%s: must have at most %d items", key, LIST_MAX);
		return NULL;
	}
	v = xcalloc(count + 1, sizeof(*v));
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		yaml_node_t *item = config_node_get(c, *it);
		const char *s = config_scalar(item);

		if (!s || config_is_null(item) || !valid(s)) {
			node_error(c, item, "%s[%td]: must be %s", key,
				   it - n->data.sequence.items.start, must);
			continue;
		}
		v[i++] = xstrdup(s);
	}
	*ret_n = i;
	return v;
}

/* ---- YAML to JSON, for workload specs ---- */

/* [-+]?[0-9]+ */
static int looks_integer(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/* [-+]?(digits)?(.digits)?([eE][-+]?digits)? with a digit in the mantissa;
 * strtod alone would also take "nan", "inf" and hex. */
static int looks_real(const char *s)
{
	int digits = 0;

	if (*s == '-' || *s == '+')
		s++;
	for (; *s >= '0' && *s <= '9'; s++)
		digits++;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			digits++;
	if (!digits)
		return 0;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+')
			s++;
		if (*s < '0' || *s > '9')
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return !*s;
}

static json_t *scalar_to_json(const yaml_node_t *n)
{
	const char *s = (const char *)n->data.scalar.value;
	size_t len = n->data.scalar.length;

	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return json_stringn(s, len);
	if (config_is_null(n))
		return json_null();
	if (!strcmp(s, "true"))
		return json_true();
	if (!strcmp(s, "false"))
		return json_false();
	if (looks_integer(s)) {
		char *end;
		long long v;
		int saved = errno;

		errno = 0;
		v = strtoll(s, &end, 10);
		if (!errno && !*end) {
			errno = saved;
			return json_integer((json_int_t)v);
		}
		errno = saved;	/* out of range: a real below */
	}
	if (looks_real(s)) {
		double v;

		if (parse_double(s, &v) == 0)
			return json_real(v);
	}
	return json_stringn(s, len);
}

/* The JSON form of n, or NULL after reporting every error in it. */
json_t *config_node_to_json(struct cfg_ctx *c, yaml_node_t *n, int depth)
{
	json_t *j = NULL;
	int failed = 0;

	if (depth > JSON_MAX_DEPTH || c->json_budget == 0) {
		if (!c->json_limit_reported)
			node_error(c, n, "workload spec too large or nested deeper than %d levels",
				   JSON_MAX_DEPTH);
		c->json_limit_reported = 1;
		return NULL;
	}
	c->json_budget--;

	switch (n->type) {
	case YAML_SCALAR_NODE:
		j = scalar_to_json(n);
		if (!j)
			node_error(c, n, "value is not valid UTF-8 text");
		return j;
	case YAML_SEQUENCE_NODE:
		j = json_array();
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++) {
			json_t *v = config_node_to_json(c, config_node_get(c, *it), depth + 1);

			if (!v)
				failed = 1;
			else
				json_array_append_new(j, v);
		}
		break;
	case YAML_MAPPING_NODE:
		j = json_object();
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *kn = config_node_get(c, p->key);
			const char *k = config_scalar(kn);
			json_t *v;

			if (!k) {
				node_error(c, kn, "keys must be strings");
				failed = 1;
				continue;
			}
			if (json_object_get(j, k)) {
				node_error(c, kn, "duplicate key '%s'", k);
				failed = 1;
				continue;
			}
			v = config_node_to_json(c, config_node_get(c, p->value), depth + 1);
			if (!v || json_object_set_new(j, k, v) < 0) {
				if (v) {
					node_error(c, kn, "key is not valid UTF-8 text");
					json_decref(v);
				}
				failed = 1;
			}
		}
		break;
	default:
		node_error(c, n, "unexpected YAML node");
		return NULL;
	}
	if (failed) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* ---- what the items of every section share ---- */

/* The first line of a mapping, for the `line` fields. */
static int node_line(const yaml_node_t *n)
{
	return (int)n->start_mark.line + 1;
}

/* "machine 'm1'", or "machines[2]" when the item has no valid name. */
static void item_label(struct cfg_ctx *c, yaml_node_t *map, const char *kind,
		       const char *section, size_t index, char *buf, size_t size)
{
	const char *name = config_scalar(config_map_find(c, map, "name"));

	if (name && config_valid_name(name))
		snprintf(buf, size, "%s '%s'", kind, name);
	else
		snprintf(buf, size, "%s[%zu]", section, index);
}

void config_missing_key(struct cfg_ctx *c, yaml_node_t *map, const char *key,
		 const char *what, const char *why)
{
	node_error(c, map, "missing key '%s' in %s%s", key, what, why);
}

/*
 * Records name (the value node n) in the set `seen` of one section and
 * reports a duplicate. Returns the name, or NULL when missing or invalid.
 */
static char *get_name(struct cfg_ctx *c, yaml_node_t *map, yaml_node_t *n, const char *kind,
	       const char *what, json_t *seen)
{
	json_t *first;
	char *name;

	if (!n) {
		config_missing_key(c, map, "name", what, "");
		return NULL;
	}
	name = config_get_str(c, "name", n, config_valid_name, MUST_NAME);
	if (!name)
		return NULL;
	first = json_object_get(seen, name);
	if (first)
		node_error(c, n, "duplicate %s name '%s' (first defined at line %lld)", kind,
			   name, (long long)json_integer_value(first));
	else
		json_object_set_new(seen, name, json_integer(node_line(n)));
	return name;
}

char *config_item_start(struct cfg_ctx *c, yaml_node_t *map, const char *kind, const char *section,
		 size_t index, const char *const *keys, int name_key, json_t *seen,
		 struct cfg_item *it, int *ret_line)
{
	item_label(c, map, kind, section, index, it->what, sizeof(it->what));
	config_map_keys(c, map, keys, it->what, "key", &it->ks);
	*ret_line = node_line(map);
	return get_name(c, map, it->ks.val[name_key], kind, it->what, seen);
}

/* ---- shares and significance levels ---- */

int config_get_fraction(struct cfg_ctx *c, const char *key, yaml_node_t *n, double *ret)
{
	const char *s = config_scalar(n);
	char num[64];
	size_t len = s ? strlen(s) : 0;
	double v, scale = 1;

	if (len && len < sizeof(num) && s[len - 1] == '%') {
		memcpy(num, s, len - 1);
		num[len - 1] = '\0';
		s = num;
		scale = 100;
	}
	if (!s || !len || (*s != '.' && (*s < '0' || *s > '9')) || parse_double(s, &v) < 0 ||
	    v / scale > 1) {
		node_error(c, n, "%s: must be %s", key, MUST_FRACTION);
		return -1;
	}
	*ret = v / scale;
	return 0;
}

int config_get_alpha(struct cfg_ctx *c, const char *key, yaml_node_t *n, double *ret)
{
	const char *s = config_scalar(n);
	double v;

	if (!s || (*s != '.' && (*s < '0' || *s > '9')) || parse_double(s, &v) < 0 || !(v > 0 && v < 1)) {
		node_error(c, n, "%s: must be %s", key, MUST_ALPHA);
		return -1;
	}
	*ret = v;
	return 0;
}

/* ---- reading a file ---- */

/*
 * Reads a whole regular file of at most max bytes into sb. Returns 0 or a
 * negative errno (-EFBIG when larger, -EINVAL when not a regular file).
 */
int config_read_regular_file(const char *path, struct strbuf *sb, size_t max)
{
	struct stat st;
	int fd, r;

	/* O_NONBLOCK: a FIFO must not hang the open; no effect on regular files */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto out;
	}
	if ((size_t)st.st_size > max) {
		r = -EFBIG;
		goto out;
	}
	r = strbuf_read_fd(sb, fd, max);
out:
	close(fd);
	return r;
}

const char *config_read_error_text(int r, size_t max, char *buf, size_t size)
{
	if (r == -EFBIG)
		snprintf(buf, size, "larger than %zu KiB", max >> 10);
	else if (r == -EINVAL)
		snprintf(buf, size, "not a regular file");
	else
		snprintf(buf, size, "%s", strerror(-r));
	return buf;
}
