/*
 * Spec validation. A spec object has top-level settings (iterations, warmup,
 * interval, monitors, profile, neighbour, id) and workload parameters. The
 * parameters the catalog marks as matrix keys may be lists; every
 * combination becomes a case, in the order of the catalog's parameters
 * (workload_catalog.h), the last key varying fastest. Each case is then
 * validated as a plain object, with list elements named key[i] in messages.
 * What a workload takes, and how each parameter is read and bounded, are
 * rows of the catalog; this file is the one reader of those rows.
 */
#include "spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor_catalog.h"
#include "util.h"
#include "banned.h"

#define MIB (1ull << 20)

static const char *const toplevel[] = {
	"iterations", "warmup", "interval", "monitors", "profile", "neighbour", "id", "live_samples",
};

/* The parameter called key (enum workload_param_id), or -1. */
static int find_param(const char *key)
{
	int i;

	for (i = 0; i < WP_MAX; i++)
		if (!strcmp(workload_params[i].key, key))
			return i;
	return -1;
}

static int is_toplevel(const char *key)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(toplevel); i++)
		if (!strcmp(toplevel[i], key))
			return 1;
	return 0;
}

const char *spec_mode_name(enum wl_mode m)
{
	return m == WL_PROCESSES ? "processes" : "threads";
}

static int get_int(json_t *v, const char *field, long min, long max, long *ret, struct strbuf *err)
{
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
		return strbuf_seterr(err, "%s: must be an integer from %ld to %ld", field, min, max);
	*ret = (long)json_integer_value(v);
	return 0;
}

/* ---- numbers with units ---- */

int spec_parse_bytes(const char *s, uint64_t *ret)
{
	static const struct { const char *suffix; unsigned shift; } units[] = {
		{ "", 0 }, { "K", 10 }, { "k", 10 }, { "KiB", 10 }, { "M", 20 }, { "m", 20 },
		{ "MiB", 20 }, { "G", 30 }, { "g", 30 }, { "GiB", 30 },
	};
	char num[32];
	size_t n = 0, i;
	uint64_t v;

	if (!s)
		return -1;
	while (s[n] >= '0' && s[n] <= '9')
		n++;
	if (!n || n >= sizeof(num))
		return -1;
	memcpy(num, s, n);
	num[n] = '\0';
	if (parse_u64(num, &v) < 0)
		return -1;
	for (i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcmp(s + n, units[i].suffix)) {
			if (v > UINT64_MAX >> units[i].shift)
				return -1;
			*ret = v << units[i].shift;
			return 0;
		}
	return -1;
}

int spec_parse_seconds(const char *s, double *ret)
{
	/* ms divides: 500 / 1000 is exactly 0.5, 500 * 0.001 need not be */
	static const struct { const char *suffix; double mul, div; } units[] = {
		{ "", 1, 1 }, { "s", 1, 1 }, { "ms", 1, 1000 }, { "m", 60, 1 }, { "h", 3600, 1 },
	};
	char num[32];
	size_t n = 0, digits = 0, i;
	double v;

	if (!s)
		return -1;
	for (; s[n] >= '0' && s[n] <= '9'; n++)
		digits++;
	if (s[n] == '.')
		for (n++; s[n] >= '0' && s[n] <= '9'; n++)
			digits++;
	if (!digits || n >= sizeof(num))
		return -1;
	memcpy(num, s, n);
	num[n] = '\0';
	if (parse_double(num, &v) < 0)
		return -1;
	for (i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcmp(s + n, units[i].suffix)) {
			v = v * units[i].mul / units[i].div;
			if (!isfinite(v))
				return -1;
			*ret = v;
			return 0;
		}
	return -1;
}

/* The text of a string value, or NULL (not a string, or one holding a NUL
 * that would cut what a parser sees short of what was sent). */
static const char *string_text(json_t *v)
{
	const char *t = json_string_value(v);

	return t && strlen(t) == json_string_length(v) ? t : NULL;
}

/* "4K", "64G", "1": a bound as a user would write it. */
static void fmt_bytes(uint64_t v, char *buf, size_t size)
{
	static const char unit[] = "GMK";
	unsigned i;

	for (i = 0; i < 3; i++) {
		unsigned shift = 30 - 10 * i;

		if (v && !(v & ((1ull << shift) - 1))) {
			snprintf(buf, size, "%llu%c", (unsigned long long)(v >> shift), unit[i]);
			return;
		}
	}
	snprintf(buf, size, "%llu", (unsigned long long)v);
}

/*
 * A byte count: an integer, or a string with a unit. When it was a string,
 * *ret_norm (if not NULL) gets the plain number, for the case's params.
 */
static int get_bytes(json_t *v, const char *field, uint64_t min, uint64_t max, uint64_t *ret,
		     json_t **ret_norm, struct strbuf *err)
{
	const char *text = string_text(v);
	uint64_t u = 0;
	int ok = 0;

	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		u = (uint64_t)json_integer_value(v);
		ok = 1;
	} else if (text) {
		ok = spec_parse_bytes(text, &u) == 0;
	}
	if (!ok || u < min || u > max) {
		char lo[32], hi[32];

		fmt_bytes(min, lo, sizeof(lo));
		fmt_bytes(max, hi, sizeof(hi));
		return strbuf_seterr(err, "%s: must be a number of bytes from %s to %s: " SPEC_BYTES_FORMS
				     "%s%.64s%s", field, lo, hi, text ? " (got '" : "", text ? text : "",
				     text ? "')" : "");
	}
	*ret = u;
	if (text && ret_norm)
		*ret_norm = json_integer((json_int_t)u);
	return 0;
}

/* A time: a number of seconds, or a string with a unit; *ret_norm as above. */
static int get_seconds(json_t *v, const char *field, double min, double max, double *ret,
		       json_t **ret_norm, struct strbuf *err)
{
	const char *text = string_text(v);
	double d;

	if (json_is_number(v))
		d = json_number_value(v);
	else if (!text || spec_parse_seconds(text, &d) < 0)
		d = NAN;
	if (!isfinite(d) || d < min || d > max)
		return strbuf_seterr(err, "%s: must be a number from %g to %g seconds, " SPEC_SECONDS_FORMS
				     "%s%.64s%s", field, min, max, text ? " (got '" : "", text ? text : "",
				     text ? "')" : "");
	*ret = d;
	if (text && ret_norm)
		*ret_norm = json_real(d);
	return 0;
}

static int get_u64(json_t *v, const char *field, uint64_t min, uint64_t max, uint64_t *ret,
		   struct strbuf *err)
{
	json_int_t i;

	if (!json_is_integer(v) || (i = json_integer_value(v)) < 0 ||
	    (uint64_t)i < min || (uint64_t)i > max)
		return strbuf_seterr(err, "%s: must be an integer from %llu to %llu", field,
				     (unsigned long long)min, (unsigned long long)max);
	*ret = (uint64_t)i;
	return 0;
}

/* "NXxNYxNZ": three decimal numbers of at most 4 digits each. Not sscanf's
 * %d: it takes signs and spaces, and a number past INT_MAX is undefined
 * behaviour (glibc wraps: "4294967299x3x3" read as 3x3x3). */
static int grid_dims(const char *s, int *nx, int *ny, int *nz)
{
	int *dim[3] = { nx, ny, nz }, i;

	for (i = 0; i < 3; i++) {
		int digits = 0, v = 0;

		for (; *s >= '0' && *s <= '9'; s++) {
			if (++digits > 4)
				return -1;
			v = v * 10 + (*s - '0');
		}
		if (!digits || *s != (i < 2 ? 'x' : '\0'))
			return -1;
		*dim[i] = v;
		s++;
	}
	return 0;
}

static int parse_grid(json_t *v, const char *field, struct wl_params *wp, struct strbuf *err)
{
	static const struct { const char *name; int nx, ny, nz; } named[] = {
		{ "XS", 33, 33, 65 }, { "S", 65, 65, 129 }, { "M", 129, 129, 257 },
		{ "L", 257, 257, 513 },
	};
	const char *s;
	size_t i;
	int nx, ny, nz;

	if (!json_is_string(v))
		return strbuf_seterr(err, "%s: must be XS, S, M, L or NXxNYxNZ", field);
	s = json_string_value(v);
	for (i = 0; i < ARRAY_SIZE(named); i++)
		if (!strcmp(s, named[i].name)) {
			wp->nx = named[i].nx;
			wp->ny = named[i].ny;
			wp->nz = named[i].nz;
			return 0;
		}
	if (grid_dims(s, &nx, &ny, &nz) < 0 || nx < 3 || ny < 3 || nz < 3 ||
	    nx > 1025 || ny > 1025 || nz > 1025 || (long long)nx * ny * nz > 64ll << 20)
		return strbuf_seterr(err, "%s: must be XS, S, M, L or NXxNYxNZ with each from 3 to 1025 "
				     "and at most 64M points (got '%s')", field, s);
	wp->nx = nx;
	wp->ny = ny;
	wp->nz = nz;
	return 0;
}

static void set_defaults(struct wl_params *wp, const struct workload_def *def)
{
	memset(wp, 0, sizeof(*wp));
	wp->def = def;
	wp->mode = WL_THREADS;
	wp->workers = 1;
	wp->duration = 10;
	wp->size = def->size ? def->size : 2 * MIB;
	wp->request_size = 300;
	wp->response_size = 300;
	wp->nx = 65;
	wp->ny = 65;
	wp->nz = 129;
	snprintf(wp->parser, sizeof(wp->parser), "none");
	wp->timeout = 600;
}

/* exec's command: the spec's argv, read from the first case that has it
 * (every case has the same: a command is no matrix key). */
static int set_command(struct wl_params *wp, struct spec *s, json_t *v, const char *field, struct strbuf *err)
{
	size_t i, n = json_array_size(v);

	if (!json_is_array(v) || n == 0 || n > 256)
		return strbuf_seterr(err, "%s: must be a list of 1 to 256 strings", field);
	if (!s->argv) {
		s->argv = xcalloc(n + 1, sizeof(char *));
		for (i = 0; i < n; i++) {
			json_t *a = json_array_get(v, i);

			if (!json_is_string(a) || json_string_length(a) > 4096 ||
			    strlen(json_string_value(a)) != json_string_length(a) ||
			    (i == 0 && !json_string_length(a)))
				return strbuf_seterr(err, "%s[%zu]: must be a string of at most 4096 bytes "
						     "without NUL%s", field, i, i == 0 ? ", and not empty" : "");
			s->argv[i] = xstrdup(json_string_value(a));
		}
	}
	wp->argv = s->argv;
	return 0;
}

/* Sets one parameter, read as its catalog row says. A value written with
 * a unit leaves its plain number in *ret_norm (a new reference) for the
 * case's params. */
static int set_param(struct wl_params *wp, struct spec *s, const struct workload_param *row, json_t *v,
		     const char *field, json_t **ret_norm, struct strbuf *err)
{
	char *at = (char *)wp + row->off;
	const char *str = json_string_value(v);
	long l;
	uint64_t u = 0;

	switch (row->type) {
	case WPT_NAME:
		return 0;
	case WPT_MODE:
		if (!str || (strcmp(str, "threads") && strcmp(str, "processes")))
			return strbuf_seterr(err, "%s: must be threads or processes", field);
		wp->mode = strcmp(str, "threads") ? WL_PROCESSES : WL_THREADS;
		if (!(wp->def->modes & (1u << wp->mode)))
			return strbuf_seterr(err, "%s: %s runs only as threads", field, wp->def->name);
		return 0;
	case WPT_WORKERS:
		/* cpus: one a CPU, whatever the machine (a sweep's guest_cpus);
		 * the case's params say how many that was */
		if (str && !strcmp(str, "cpus")) {
			*(int *)at = workload_cpus_allowed();
			*ret_norm = json_integer(*(int *)at);
			return 0;
		}
		if (get_int(v, field, (long)row->min, (long)row->max, &l, err) < 0) {
			strbuf_addstr(err, ", or cpus (one a CPU it may run on)");
			return -1;
		}
		*(int *)at = (int)l;
		return 0;
	case WPT_SECONDS:
		return get_seconds(v, field, row->min, row->max, (double *)at, ret_norm, err);
	case WPT_BYTES:
		return get_bytes(v, field, (uint64_t)row->min, (uint64_t)row->max, (uint64_t *)at, ret_norm, err);
	case WPT_BYTES32:
		if (get_bytes(v, field, (uint64_t)row->min, (uint64_t)row->max, &u, ret_norm, err) < 0)
			return -1;
		*(uint32_t *)at = (uint32_t)u;
		return 0;
	case WPT_COUNT:
		return get_u64(v, field, (uint64_t)row->min, (uint64_t)row->max, (uint64_t *)at, err);
	case WPT_VMA:
		wp->vma = workload_vma_lookup(str);
		if (wp->vma == WL_VMA_MAX)
			return strbuf_seterr(err, "%s: must be one or per-round", field);
		return 0;
	case WPT_GRID:
		return parse_grid(v, field, wp, err);
	case WPT_PARSER:
		if (!str || !workload_exec_parser_known(str))
			return strbuf_seterr(err, "%s: must be " WORKLOAD_EXEC_PARSERS, field);
		snprintf(wp->parser, sizeof(wp->parser), "%s", str);
		return 0;
	case WPT_COMMAND:
		return set_command(wp, s, v, field, err);
	case WPT_MAX:
		break;
	}
	return strbuf_seterr(err, "%s: a parameter of no known type", field);
}

struct chosen {
	const char *key;
	size_t idx;
};

/* Validates one case object whose matrix values are already scalars. */
static int case_from_object(struct wl_params *wp, struct spec *s, json_t *obj, const char *prefix,
			    const struct chosen *ch, size_t nch, struct strbuf *err)
{
	const struct workload_def *def;
	const char *key, *name;
	json_t *v, *w = json_object_get(obj, "workload"), *plain = NULL;
	char field[160];

	if (!w)
		return strbuf_seterr(err, "%sworkload: missing (one of %s)", prefix, workload_names());
	name = json_string_value(w);
	def = name ? workload_lookup(name) : NULL;
	if (!def)
		return strbuf_seterr(err, "%sworkload: unknown workload '%s' (one of %s)", prefix,
				     name ? name : "(not a string)", workload_names());
	set_defaults(wp, def);
	json_object_foreach(obj, key, v) {
		int p = find_param(key);
		json_t *norm = NULL;
		size_t i;

		snprintf(field, sizeof(field), "%s%s", prefix, key);
		for (i = 0; i < nch; i++)
			if (!strcmp(ch[i].key, key))
				snprintf(field, sizeof(field), "%s%s[%zu]", prefix, key, ch[i].idx);
		if (p < 0) {
			if (!*prefix && is_toplevel(key))
				continue;
			json_decref(plain);
			return strbuf_seterr(err, "%s: unknown field", field);
		}
		if (!(def->params & (1u << p))) {
			json_decref(plain);
			return strbuf_seterr(err, "%s: not a parameter of %s", field, def->name);
		}
		if (set_param(wp, s, &workload_params[p], v, field, &norm, err) < 0) {
			json_decref(plain);
			return -1;
		}
		if (norm) {
			if (!plain)
				plain = json_object();
			json_object_set_new(plain, key, norm);
		}
	}
	/* after the walk: obj is not changed while it is iterated */
	if (plain) {
		json_object_update(obj, plain);
		json_decref(plain);
	}
	if (def->resolve)
		def->resolve(wp, obj, *prefix ? NULL : obj);
	if (def->check && def->check(wp, err) < 0) {
		/* checks name the bare field; add the prefix */
		if (*prefix) {
			struct strbuf tmp = STRBUF_INIT;

			strbuf_addf(&tmp, "%s%s", prefix, err->buf);
			strbuf_reset(err);
			strbuf_addstr(err, tmp.buf);
			strbuf_release(&tmp);
		}
		return -1;
	}
	return 0;
}

static int parse_toplevel(struct spec *s, json_t *root, struct strbuf *err)
{
	json_t *v;
	long l;

	/* a name listed twice in the catalog is a broken build: no spec is read */
	if (monitor_catalog_errors())
		return strbuf_seterr(err, "%s", monitor_catalog_errors());
	if (workload_catalog_errors())
		return strbuf_seterr(err, "%s", workload_catalog_errors());
	s->iterations = 3;
	s->warmup = 1;
	s->interval = 1.0;
	s->monitors = monitor_default_mask();
	if ((v = json_object_get(root, "iterations")) && get_int(v, "iterations", 1, 1000, &l, err) < 0)
		return -1;
	if (v)
		s->iterations = (int)l;
	if ((v = json_object_get(root, "warmup")) && get_int(v, "warmup", 0, 100, &l, err) < 0)
		return -1;
	if (v)
		s->warmup = (int)l;
	if ((v = json_object_get(root, "interval")) &&
	    get_seconds(v, "interval", 0.05, 3600, &s->interval, NULL, err) < 0)
		return -1;
	if ((v = json_object_get(root, "profile"))) {
		if (!json_is_boolean(v))
			return strbuf_seterr(err, "profile: must be true or false");
		s->profile = json_is_true(v);
	}
	if ((v = json_object_get(root, "live_samples"))) {
		if (!json_is_boolean(v))
			return strbuf_seterr(err, "live_samples: must be true or false");
		s->live_samples = json_is_true(v);
	}
	if ((v = json_object_get(root, "monitors"))) {
		size_t i;
		json_t *m;

		if (!json_is_array(v))
			return strbuf_seterr(err, "monitors: must be a list of monitor names (%s)",
					     monitor_names());
		s->monitors = 0;
		json_array_foreach(v, i, m) {
			unsigned bit = json_is_string(m) ? monitor_bit(json_string_value(m)) : 0;

			if (!bit)
				return strbuf_seterr(err, "monitors[%zu]: unknown monitor (one of %s)", i,
						     monitor_names());
			s->monitors |= bit;
		}
		if (s->monitors & monitor_bit("profile"))
			s->profile = 1;
	}
	if ((v = json_object_get(root, "id"))) {
		if (!json_is_string(v) || json_string_length(v) >= sizeof(s->id))
			return strbuf_seterr(err, "id: must be a string of at most %zu bytes", sizeof(s->id) - 1);
		snprintf(s->id, sizeof(s->id), "%s", json_string_value(v));
	}
	return 0;
}

static int parse_neighbour(struct spec *s, json_t *v, struct strbuf *err)
{
	const char *key;
	json_t *val, *copy;

	if (!json_is_object(v))
		return strbuf_seterr(err, "neighbour: must be an object with a workload");
	json_object_foreach(v, key, val) {
		if (json_is_array(val) && strcmp(key, "command"))
			return strbuf_seterr(err, "neighbour.%s: a list is not allowed here", key);
		if (!strcmp(key, "duration"))
			return strbuf_seterr(err, "neighbour.duration: the neighbour runs as long as each case");
	}
	/* a copy: its units are replaced by plain numbers, and root stays as it was */
	copy = json_deep_copy(v);
	if (!copy)
		abort();
	if (case_from_object(&s->neighbour, s, copy, "neighbour.", NULL, 0, err) < 0) {
		json_decref(copy);
		return -1;
	}
	if (s->neighbour.def->no_neighbour) {
		json_decref(copy);
		return strbuf_seterr(err, "neighbour.workload: %s cannot be a neighbour", s->neighbour.def->name);
	}
	s->has_neighbour = 1;
	s->neighbour_params = copy;
	return 0;
}

int spec_from_json(struct spec *s, json_t *root, struct strbuf *err)
{
	const char *mkeys[WP_MAX];
	size_t mlen[WP_MAX], nm = 0, total = 1, c, i;
	json_t *v;

	memset(s, 0, sizeof(*s));
	if (!json_is_object(root))
		return strbuf_seterr(err, "spec: must be a JSON object");
	if (parse_toplevel(s, root, err) < 0)
		goto fail;
	for (i = 0; i < WP_MAX; i++) {
		v = json_object_get(root, workload_params[i].key);
		if (!json_is_array(v) || !workload_params[i].matrix)
			continue;
		if (!json_array_size(v)) {
			strbuf_seterr(err, "%s: an empty list", workload_params[i].key);
			goto fail;
		}
		mkeys[nm] = workload_params[i].key;
		mlen[nm] = json_array_size(v);
		total *= mlen[nm];
		if (total > SPEC_MAX_CASES) {
			strbuf_seterr(err, "%s: the lists expand to more than %d cases", workload_params[i].key,
				      SPEC_MAX_CASES);
			goto fail;
		}
		nm++;
	}
	s->cases = xcalloc(total, sizeof(*s->cases));
	for (c = 0; c < total; c++) {
		struct chosen ch[WP_MAX];
		json_t *obj = json_object();
		const char *key;
		size_t rest = c;

		json_object_foreach(root, key, v)
			if (!is_toplevel(key))
				json_object_set(obj, key, v);
		for (i = nm; i-- > 0;) {
			ch[i].key = mkeys[i];
			ch[i].idx = rest % mlen[i];
			rest /= mlen[i];
			json_object_set(obj, mkeys[i], json_array_get(json_object_get(root, mkeys[i]), ch[i].idx));
		}
		s->cases[c].params = obj;
		s->ncases++;
		if (case_from_object(&s->cases[c].p, s, obj, "", ch, nm, err) < 0)
			goto fail;
	}
	if ((v = json_object_get(root, "neighbour")) && parse_neighbour(s, v, err) < 0)
		goto fail;
	return 0;
fail:
	spec_release(s);
	return -1;
}

int spec_parse(struct spec *s, const char *text, size_t len, struct strbuf *err)
{
	json_error_t jerr;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	int r;

	memset(s, 0, sizeof(*s));
	if (!root)
		return strbuf_seterr(err, "spec: malformed JSON at line %d, column %d: %s",
				     jerr.line, jerr.column, jerr.text);
	r = spec_from_json(s, root, err);
	json_decref(root);
	return r;
}

void spec_release(struct spec *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->ncases; i++)
		json_decref(s->cases[i].params);
	free(s->cases);
	json_decref(s->neighbour_params);
	if (s->argv) {
		for (i = 0; s->argv[i]; i++)
			free(s->argv[i]);
		free(s->argv);
	}
	memset(s, 0, sizeof(*s));
}
