/*
 * The settings engine (settings.h): defaults, parser, values in force,
 * reference and release of a section, all read from its table of rows.
 */
#include "settings.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "util.h"
#include "banned.h"

static void *field(void *base, const struct setting *s)
{
	return (char *)base + s->off;
}

static const void *cfield(const void *base, const struct setting *s)
{
	return (const char *)base + s->off;
}

/* 1024 as "1K", 1 MiB as "1M": as the configuration writes sizes */
const char *settings_bytes_text(uint64_t v, char *buf, size_t size)
{
	static const char units[] = "KMG";
	int u = -1;

	while (u < 2 && v && v % 1024 == 0) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, u < 0 ? "%" PRIu64 : "%" PRIu64 "%c", v, u < 0 ? 0 : units[u]);
	return buf;
}

/* The words of text (split at spaces), a NULL-terminated argv. */
static char **words_of(const char *text)
{
	size_t n = 0, cap = 4;
	char **v = xcalloc(cap, sizeof(*v));

	while (*text) {
		size_t len = strcspn(text, " ");

		if (len) {
			if (n + 2 > cap) {
				cap *= 2;
				v = xrealloc(v, cap * sizeof(*v));
			}
			v[n] = strndup(text, len);
			if (!v[n++])
				abort();
			v[n] = NULL;
		}
		text += len + (text[len] == ' ');
	}
	return v;
}

static size_t names_count(const char *const *names)
{
	size_t n = 0;

	while (names[n])
		n++;
	return n;
}

void settings_defaults(const struct setting *rows, size_t n, void *base)
{
	for (size_t i = 0; i < n; i++) {
		const struct setting *s = &rows[i];
		void *f = field(base, s);

		switch (s->type) {
		case SET_STR:
		case SET_CHOICE:
			*(char **)f = s->def_text ? xstrdup(s->def_text) : NULL;
			break;
		case SET_LIST:
		case SET_ARGV:
			*(char ***)f = s->def_text ? words_of(s->def_text) : NULL;
			break;
		case SET_ENUM:
		case SET_BOOL:
		case SET_INT:
			*(int *)f = isnan(s->def) ? 0 : (int)s->def;
			break;
		case SET_BYTES:
			*(size_t *)f = isnan(s->def) ? 0 : (size_t)s->def;
			break;
		case SET_SECONDS:
			*(double *)f = isnan(s->def) ? 0 : s->def;
			break;
		case SET_CUSTOM:
			if (s->custom->defaults)
				s->custom->defaults(s, base);
			break;
		case SET_MAX:
			abort();
		}
	}
}

void settings_release(const struct setting *rows, size_t n, void *base)
{
	for (size_t i = 0; base && i < n; i++) {
		const struct setting *s = &rows[i];
		void *f = field(base, s);

		switch (s->type) {
		case SET_STR:
		case SET_CHOICE:
			free(*(char **)f);
			*(char **)f = NULL;
			break;
		case SET_LIST:
		case SET_ARGV:
			config_strv_free(*(char ***)f);
			*(char ***)f = NULL;
			break;
		case SET_CUSTOM:
			if (s->custom->release)
				s->custom->release(s, base);
			break;
		default:
			break;
		}
	}
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

static const char *const *enum_names;

static const char *enum_name(int i)
{
	return enum_names[i];
}

/* Index of n's value in s->names, or -1 with an error listing them. */
static int get_name(struct cfg_ctx *c, const struct setting *s, yaml_node_t *n)
{
	/* config_get_enum wants a function: the loader is single-threaded */
	enum_names = s->names;
	return config_get_enum(c, s->name, n, enum_name, (int)names_count(s->names));
}

/* Reads n, the value of row s, into base; an error at n when it is not one. */
static void parse_row(struct cfg_section *sec, const struct setting *s, yaml_node_t *n)
{
	struct cfg_ctx *c = sec->c;
	void *f = field(sec->base, s);
	char lo[32], hi[32];
	uint64_t bytes;
	size_t count = 0;
	double d;
	long v;
	int i;

	switch (s->type) {
	case SET_STR:
		free(*(char **)f);
		*(char **)f = config_get_str(c, s->name, n, s->valid, s->must);
		break;
	case SET_LIST: {
		char **a = config_get_list(c, s->name, n, s->valid, s->must, &count);

		if (a) {
			config_strv_free(*(char ***)f);
			*(char ***)f = a;
		}
		break;
	}
	case SET_ARGV:
		config_strv_free(*(char ***)f);
		*(char ***)f = get_argv(c, s->name, n);
		break;
	case SET_CHOICE:
		if ((i = get_name(c, s, n)) >= 0) {
			free(*(char **)f);
			*(char **)f = xstrdup(s->names[i]);
		}
		break;
	case SET_ENUM:
		if ((i = get_name(c, s, n)) >= 0)
			*(int *)f = i;
		break;
	case SET_BOOL:
		config_get_bool(c, s->name, n, (int *)f);
		break;
	case SET_INT:
		if (config_get_int(c, s->name, n, (long)s->min, (long)s->max, &v) == 0)
			*(int *)f = (int)v;
		break;
	case SET_BYTES:
		if (config_get_bytes(c, s->name, n, (uint64_t)s->min, (uint64_t)s->max,
				     settings_bytes_text((uint64_t)s->min, lo, sizeof(lo)),
				     settings_bytes_text((uint64_t)s->max, hi, sizeof(hi)), &bytes) == 0)
			*(size_t *)f = (size_t)bytes;
		break;
	case SET_SECONDS:
		if (config_get_seconds_range(c, s->name, n, s->min, s->max, &d) == 0)
			*(double *)f = d;
		break;
	case SET_CUSTOM:
		s->custom->parse(sec, s, sec->base);
		break;
	case SET_MAX:
		abort();
	}
}

void settings_parse(struct cfg_section *sec)
{
	const char *names[MAX_KEYS + 1];
	size_t i;

	if (sec->n > MAX_KEYS)
		abort();	/* a table larger than a keyset: the build's mistake */
	memset(&sec->ks, 0, sizeof(sec->ks));
	if (!sec->map)
		return;
	for (i = 0; i < sec->n; i++)
		names[i] = sec->rows[i].name;
	names[i] = NULL;
	if (sec->subset)
		config_map_subset(sec->c, sec->map, names, &sec->ks);
	else
		config_map_keys(sec->c, sec->map, names, sec->what, "key", &sec->ks);
	/* in the rows' order: a row may read what one above it set */
	for (i = 0; i < sec->n; i++)
		if (sec->ks.val[i])
			parse_row(sec, &sec->rows[i], sec->ks.val[i]);
		else if (sec->rows[i].flags & SETTING_REQUIRED)
			config_missing_key(sec->c, sec->map, sec->rows[i].name, sec->what,
					   sec->rows[i].need ? sec->rows[i].need : "");
}

static int row_index(const struct cfg_section *sec, const char *key)
{
	for (size_t i = 0; key && i < sec->n; i++)
		if (!strcmp(sec->rows[i].name, key))
			return (int)i;
	return -1;
}

yaml_node_t *settings_value(const struct cfg_section *sec, const char *key)
{
	int i = row_index(sec, key);

	return i >= 0 ? sec->ks.val[i] : NULL;
}

/* Where an error about key goes: its key or value node, else the section
 * (or, absent, the item that would hold it). */
static yaml_node_t *error_node(const struct cfg_section *sec, const char *key, int at_key)
{
	int i = row_index(sec, key);

	if (i >= 0 && sec->ks.val[i])
		return at_key ? sec->ks.key[i] : sec->ks.val[i];
	return sec->map ? sec->map : sec->owner;
}

static void verror(struct cfg_section *sec, yaml_node_t *n, const char *fmt, va_list ap)
{
	struct strbuf msg = STRBUF_INIT;

	strbuf_vaddf(&msg, fmt, ap);
	if (n)
		node_error(sec->c, n, "%s", msg.buf);
	else
		config_error(sec->c, 0, 0, "%s", msg.buf);
	strbuf_release(&msg);
}

void settings_error(struct cfg_section *sec, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(sec, error_node(sec, key, 0), fmt, ap);
	va_end(ap);
}

void settings_key_error(struct cfg_section *sec, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(sec, error_node(sec, key, 1), fmt, ap);
	va_end(ap);
}

void settings_missing(struct cfg_section *sec, const char *key, const char *why)
{
	config_missing_key(sec->c, sec->map ? sec->map : sec->owner, key, sec->what, why);
}

int settings_has(const struct cfg_section *sec, const char *key)
{
	return settings_value(sec, key) != NULL;
}

const char *settings_scalar(const struct cfg_section *sec, const char *key)
{
	yaml_node_t *n = settings_value(sec, key);

	return n ? config_scalar(n) : NULL;
}

const char *settings_what(const struct cfg_section *sec)
{
	return sec->what;
}

void settings_where(const struct cfg_section *sec, const char *key, int *ret_line, int *ret_col)
{
	const yaml_node_t *n = error_node(sec, key, 0);

	*ret_line = n ? (int)n->start_mark.line + 1 : 0;
	*ret_col = n ? (int)n->start_mark.column + 1 : 0;
}

const struct lab_config *settings_lab(const struct cfg_section *sec)
{
	return sec->c->cfg;
}

struct cfg_ctx *settings_ctx(struct cfg_section *sec)
{
	return sec->c;
}

void settings_error_at(struct cfg_ctx *c, int line, int col, const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	config_error(c, (unsigned long)line, (unsigned long)col, "%s", msg.buf);
	strbuf_release(&msg);
}

const struct setting *settings_find(const struct setting *rows, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

static void add_words(struct strbuf *out, char *const *v, const char *sep)
{
	for (size_t i = 0; v && v[i]; i++)
		strbuf_addf(out, "%s%s", i ? sep : "", v[i]);
	if (!v || !v[0])
		strbuf_addstr(out, "-");
}

void settings_text(const struct setting *s, const void *base, struct strbuf *out)
{
	const void *f = cfield(base, s);
	char buf[32];
	int i;

	switch (s->type) {
	case SET_STR:
	case SET_CHOICE:
		strbuf_addstr(out, *(char *const *)f ? *(char *const *)f : "-");
		break;
	case SET_LIST:
		add_words(out, *(char **const *)f, ", ");
		break;
	case SET_ARGV:
		add_words(out, *(char **const *)f, " ");
		break;
	case SET_ENUM:
		i = *(const int *)f;
		strbuf_addstr(out, i >= 0 && (size_t)i < names_count(s->names) ? s->names[i] : "?");
		break;
	case SET_BOOL:
		strbuf_addstr(out, *(const int *)f ? "true" : "false");
		break;
	case SET_INT:
		strbuf_addf(out, "%d", *(const int *)f);
		break;
	case SET_BYTES:
		strbuf_addstr(out, settings_bytes_text(*(const size_t *)f, buf, sizeof(buf)));
		break;
	case SET_SECONDS:
		strbuf_addf(out, "%gs", *(const double *)f);
		break;
	case SET_CUSTOM:
		if (s->custom->text)
			s->custom->text(s, base, out);
		break;
	case SET_MAX:
		abort();
	}
}

static const char *type_name(const struct setting *s, char *buf, size_t size)
{
	static const char *const words[SET_MAX] = {
		[SET_STR] = "string", [SET_LIST] = "list of strings", [SET_ARGV] = "command (argv list)",
		[SET_BOOL] = "true or false", [SET_INT] = "integer", [SET_BYTES] = "size (1K, 1M, 1G)",
		[SET_SECONDS] = "time (90, 30s, 10m, 2h)",
	};
	struct strbuf sb = STRBUF_INIT;

	if (s->type_name)
		return s->type_name;
	if (s->type == SET_CUSTOM)
		return s->custom->type_name;
	if (s->type != SET_CHOICE && s->type != SET_ENUM)
		return words[s->type];
	for (size_t i = 0; s->names[i]; i++)
		strbuf_addf(&sb, "%s%s", i ? " \\| " : "", s->names[i]);
	snprintf(buf, size, "%s", sb.buf);
	strbuf_release(&sb);
	return buf;
}

static int numeric(const struct setting *s)
{
	return s->type == SET_INT || s->type == SET_BYTES || s->type == SET_SECONDS;
}

/* A number of row s as the configuration writes it. */
static const char *number_text(const struct setting *s, double v, char *buf, size_t size)
{
	if (s->type == SET_BYTES)
		return settings_bytes_text((uint64_t)v, buf, size);
	snprintf(buf, size, s->type == SET_SECONDS ? "%.10gs" : "%.10g", v);
	return buf;
}

void settings_reference(FILE *out, const char *prefix, const struct setting *rows, size_t n, int header)
{
	char def[64], lo[32], hi[32], tn[160];

	if (header)
		fprintf(out, "| setting | type | default | bounds | what it is |\n|---|---|---|---|---|\n");
	for (size_t i = 0; i < n; i++) {
		const struct setting *s = &rows[i];

		if (s->def_note)
			snprintf(def, sizeof(def), "%s", s->def_note);
		else if (s->flags & SETTING_REQUIRED)
			snprintf(def, sizeof(def), "required");
		else if (s->def_text)
			snprintf(def, sizeof(def), "%s", s->def_text);
		else if (s->type == SET_ENUM)
			snprintf(def, sizeof(def), "%s", s->names[isnan(s->def) ? 0 : (int)s->def]);
		else if (s->type == SET_BOOL)
			snprintf(def, sizeof(def), "%s", s->def > 0 ? "true" : "false");
		else if (numeric(s) && !isnan(s->def))
			number_text(s, s->def, def, sizeof(def));
		else
			snprintf(def, sizeof(def), "-");
		if (numeric(s)) {
			number_text(s, s->min, lo, sizeof(lo));
			number_text(s, s->max, hi, sizeof(hi));
			fprintf(out, "| `%s%s` | %s | %s | %s to %s | %s |\n", prefix, s->name,
				type_name(s, tn, sizeof(tn)), def, lo, hi, s->what);
		} else {
			fprintf(out, "| `%s%s` | %s | %s | - | %s |\n", prefix, s->name, type_name(s, tn, sizeof(tn)),
				def, s->what);
		}
	}
}
