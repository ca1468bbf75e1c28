#include "client_fmt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"
#include "banned.h"

/* A cell wider than this is cut: a table is for reading, --json has it all. */
#define TABLE_MAX_CELL 160

char *client_fmt_clean(char *buf, size_t n, const char *s)
{
	size_t i = 0;

	if (!n)
		return buf;
	for (; s && *s && i + 1 < n; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '\n' || ch == '\t' || ch == '\r')
			ch = ' ';
		else if (ch < ' ' || ch == 0x7f)
			ch = '?';
		buf[i++] = (char)ch;
	}
	buf[i] = '\0';
	/* a cut in the middle of a long string is marked, and never leaves
	 * half of a UTF-8 sequence behind */
	if (s && *s && i >= 3) {
		i -= 3;
		while (i > 0 && ((unsigned char)buf[i] & 0xc0) == 0x80)
			i--;
		memcpy(buf + i, "...", 4);
	}
	return buf;
}

void client_table_init(struct table *t, size_t ncols, const char *const *heads,
		const char *align)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	t->heads = heads;
	t->align = align;
}

void client_table_add_row(struct table *t, const char *const *cells)
{
	char clean[TABLE_MAX_CELL + 1];
	size_t i;

	if (t->nrows == t->alloc) {
		size_t n = t->alloc ? t->alloc * 2 : 16;
		char **p = reallocarray(t->cells, n * t->ncols, sizeof(*p));

		if (!p)
			abort();
		t->cells = p;
		t->alloc = n;
	}
	for (i = 0; i < t->ncols; i++) {
		char *s = xstrdup(client_fmt_clean(clean, sizeof(clean),
					   cells[i] && *cells[i] ? cells[i] : "-"));

		t->cells[t->nrows * t->ncols + i] = s;
	}
	t->nrows++;
}

/* Display width: UTF-8 continuation bytes take no column. */
static size_t text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

void client_table_print(const struct table *t, FILE *out, const char *indent)
{
	size_t *width = xcalloc(t->ncols ? t->ncols : 1, sizeof(*width));
	size_t r, i;

	for (i = 0; i < t->ncols; i++)
		width[i] = text_width(t->heads[i]);
	for (r = 0; r < t->nrows; r++)
		for (i = 0; i < t->ncols; i++) {
			size_t w = text_width(t->cells[r * t->ncols + i]);

			if (w > width[i])
				width[i] = w;
		}
	for (r = 0; r <= t->nrows; r++) {
		fputs(indent ? indent : "", out);
		for (i = 0; i < t->ncols; i++) {
			const char *s = r ? t->cells[(r - 1) * t->ncols + i] : t->heads[i];
			int pad = (int)(width[i] - text_width(s));
			int last = i + 1 == t->ncols;

			if (t->align && t->align[i] == 'r')
				fprintf(out, "%*s%s", pad, "", s);
			else if (last)
				fputs(s, out);
			else
				fprintf(out, "%s%*s", s, pad, "");
			fputs(last ? "\n" : "  ", out);
		}
	}
	free(width);
}

void client_table_release(struct table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->alloc = 0;
}

char *client_fmt_time(char *buf, const json_t *obj, const char *key)
{
	struct tm tm;
	double v;
	time_t tt;

	if (jsonget_num(obj, key, &v) < 0 || v < 0 || v > 1e12) {
		snprintf(buf, FMT_SIZE, "-");
		return buf;
	}
	tt = (time_t)v;
	if (!localtime_r(&tt, &tm) || !strftime(buf, FMT_SIZE, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, FMT_SIZE, "%.0f", v);
	return buf;
}

/* "42s", "3m05s", "2h01m", "3d04h". */
static char *fmt_duration(char *buf, double seconds)
{
	long long s;

	if (!isfinite(seconds) || seconds < 0)
		seconds = 0;
	if (seconds > 1e12)
		seconds = 1e12;
	s = (long long)(seconds + 0.5);
	if (s < 60)
		snprintf(buf, FMT_SIZE, "%llds", s);
	else if (s < 3600)
		snprintf(buf, FMT_SIZE, "%lldm%02llds", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, FMT_SIZE, "%lldh%02lldm", s / 3600, s % 3600 / 60);
	else
		snprintf(buf, FMT_SIZE, "%lldd%02lldh", s / 86400, s % 86400 / 3600);
	return buf;
}

char *client_fmt_number(char *buf, double v)
{
	double a = fabs(v);

	if (!isfinite(v))
		snprintf(buf, FMT_SIZE, "%g", v);
	else if (a < 1e15 && v == rint(v))
		snprintf(buf, FMT_SIZE, "%.0f", v);
	else if (a >= 1e15 || a < 1e-3)
		snprintf(buf, FMT_SIZE, "%.4g", v);
	else if (a >= 1000)
		snprintf(buf, FMT_SIZE, "%.1f", v);
	else
		snprintf(buf, FMT_SIZE, "%.4g", v);
	return buf;
}

const char *client_jstr_or(const json_t *obj, const char *key, const char *fallback)
{
	const char *s = jsonget_str(obj, key);

	return s && *s ? s : fallback;
}

void client_join_strings(struct strbuf *sb, const json_t *arr, const char *sep)
{
	size_t i, n = 0;
	json_t *v;

	json_array_foreach(arr, i, v)
		if (json_is_string(v))
			strbuf_addf(sb, "%s%s", n++ ? sep : "", json_string_value(v));
}

void client_join_defaults(struct strbuf *sb, const json_t *taken)
{
	const char *key;
	json_t *v;
	size_t n = 0;

	json_object_foreach((json_t *)taken, key, v)
		strbuf_addf(sb, "%s%s %s", n++ ? ", " : "", key, json_string_value(v) ?: "?");
}

char *client_fmt_span(char *buf, const json_t *obj)
{
	double start, end;

	if (jsonget_num(obj, "started", &start) < 0) {
		snprintf(buf, FMT_SIZE, "-");
		return buf;
	}
	if (jsonget_num(obj, "finished", &end) < 0)
		end = wall_now();
	return fmt_duration(buf, end - start);
}

char *client_fmt_id(char *buf, const json_t *obj, const char *key)
{
	long long v;

	if (jsonget_int(obj, key, &v) < 0)
		snprintf(buf, FMT_SIZE, "-");
	else
		snprintf(buf, FMT_SIZE, "%lld", v);
	return buf;
}

void client_add_json_value(struct strbuf *sb, const json_t *v)
{
	char num[FMT_SIZE], *s;

	if (!v || json_is_null(v)) {
		strbuf_addch(sb, '-');
	} else if (json_is_string(v)) {
		strbuf_addstr(sb, json_string_value(v));
	} else if (json_is_number(v)) {
		/* 0.2, not the 0.20000000000000001 of a double's full precision */
		strbuf_addstr(sb, client_fmt_number(num, json_number_value(v)));
	} else if ((s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT))) {
		strbuf_addstr(sb, s);
		free(s);
	}
}

void client_add_params(struct strbuf *sb, const json_t *params, const char *skip)
{
	const char *key;
	json_t *v;
	int first = 1;

	json_object_foreach((json_t *)params, key, v) {
		if (skip && !strcmp(key, skip))
			continue;
		strbuf_addf(sb, "%s%s=", first ? "" : " ", key);
		client_add_json_value(sb, v);
		first = 0;
	}
}
