/*
 * Cron expressions (cron.h). cron_next walks forward from the minute after
 * `after` and skips whole months, days and hours that cannot match before
 * it looks at minutes, so a yearly schedule costs a few hundred steps.
 * Local time goes through mktime with tm_isdst = -1, so the walk follows
 * daylight saving: a minute that does not exist on the night clocks go
 * forward is skipped, one that happens twice is due once (the first).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cron.h"
#include "banned.h"

struct field {
	const char *name;
	int min, max;
	const char *const *names;	/* names for min, min + 1, ... or NULL */
};

static const char *const month_names[] = {
	"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec", NULL
};
static const char *const day_names[] = {
	"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL
};

static const struct field fields[5] = {
	{ "minute", 0, 59, NULL },
	{ "hour", 0, 23, NULL },
	{ "day of month", 1, 31, NULL },
	{ "month", 1, 12, month_names },
	{ "day of week", 0, 7, day_names },
};

/* a number or a name at *p; advances *p */
static int parse_value(const struct field *f, const char **p, int *ret)
{
	const char *s = *p;
	long v = 0;
	int i;

	if (*s >= '0' && *s <= '9') {
		while (*s >= '0' && *s <= '9' && v <= 1000)
			v = v * 10 + (*s++ - '0');
		if (v < f->min || v > f->max)
			return -ERANGE;
		*ret = (int)v;
		*p = s;
		return 0;
	}
	for (i = 0; f->names && f->names[i]; i++)
		if (!strncasecmp(s, f->names[i], 3)) {
			*ret = f->min + i;
			*p = s + 3;
			return 0;
		}
	return -EINVAL;
}

/* one field's text [s, end) into a bit set of values */
static int parse_field(const struct field *f, const char *s, const char *end, uint64_t *ret,
		       int *ret_star, struct strbuf *err)
{
	uint64_t bits = 0;
	const char *p = s;

	*ret_star = (end - s == 1 && *s == '*');
	while (p < end) {
		int lo = f->min, hi = f->max, step = 1, v;

		if (*p == '*') {
			p++;
		} else {
			if (parse_value(f, &p, &lo) < 0)
				goto bad;
			hi = lo;
			if (p < end && *p == '-') {
				p++;
				if (parse_value(f, &p, &hi) < 0 || hi < lo)
					goto bad;
			}
		}
		if (p < end && *p == '/') {
			long n = 0;

			p++;
			if (p == end || *p < '0' || *p > '9')
				goto bad;
			while (p < end && *p >= '0' && *p <= '9' && n <= 1000)
				n = n * 10 + (*p++ - '0');
			if (n < 1 || n > f->max)
				goto bad;
			step = (int)n;
		}
		if (p < end && *p != ',')
			goto bad;
		if (p < end)
			p++;
		for (v = lo; v <= hi; v += step)
			bits |= 1ULL << v;
	}
	if (!bits)
		goto bad;
	*ret = bits;
	return 0;
bad:
	strbuf_addf(err, "the %s field \"%.*s\" is not a cron field of %d-%d", f->name,
		    (int)(end - s), s, f->min, f->max);
	return -EINVAL;
}

static const struct {
	const char *name, *expr;
} shorthands[] = {
	{ "@hourly", "0 * * * *" },
	{ "@daily", "0 0 * * *" },
	{ "@midnight", "0 0 * * *" },
	{ "@nightly", "0 0 * * *" },
	{ "@weekly", "0 0 * * 0" },
	{ "@monthly", "0 0 1 * *" },
};

int cron_parse(const char *expr, struct cron *ret, struct strbuf *err)
{
	struct cron c = { 0 };
	const char *p = expr;
	uint64_t bits[5];
	int star[5], i, r;

	if (expr[0] == '@') {
		for (i = 0; i < (int)(sizeof(shorthands) / sizeof(shorthands[0])); i++)
			if (!strcmp(expr, shorthands[i].name))
				return cron_parse(shorthands[i].expr, ret, err);
		strbuf_addf(err, "\"%s\" is not one of @hourly, @daily, @midnight, @nightly, "
			    "@weekly, @monthly", expr);
		return -EINVAL;
	}
	for (i = 0; i < 5; i++) {
		const char *end;

		while (*p == ' ' || *p == '\t')
			p++;
		end = p;
		while (*end && *end != ' ' && *end != '\t')
			end++;
		if (end == p) {
			strbuf_addf(err, "\"%s\" has %d fields, not 5 (minute hour day-of-month "
				    "month day-of-week)", expr, i);
			return -EINVAL;
		}
		r = parse_field(&fields[i], p, end, &bits[i], &star[i], err);
		if (r < 0)
			return r;
		p = end;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p) {
		strbuf_addf(err, "\"%s\" has more than 5 fields", expr);
		return -EINVAL;
	}
	c.minutes = bits[0];
	c.hours = (uint32_t)bits[1];
	c.mdays = (uint32_t)bits[2];
	c.months = (uint16_t)bits[3];
	/* 7 is Sunday too */
	c.wdays = (uint8_t)((bits[4] | (bits[4] >> 7)) & 0x7f);
	c.mday_star = star[2];
	c.wday_star = star[4];
	*ret = c;
	return 0;
}

static int day_matches(const struct cron *c, const struct tm *tm)
{
	int md = !!(c->mdays & (1U << tm->tm_mday)), wd = !!(c->wdays & (1U << tm->tm_wday));

	if (c->mday_star || c->wday_star)
		return md && wd;
	return md || wd;
}

/* t is the second pass of a wall-clock minute the night clocks go back */
static int repeated_minute(time_t t, const struct tm *tm)
{
	time_t h = t - 3600;
	struct tm prev;

	return tm->tm_isdst == 0 && localtime_r(&h, &prev) && prev.tm_isdst > 0 &&
	       prev.tm_hour == tm->tm_hour && prev.tm_min == tm->tm_min;
}

int cron_next(const struct cron *c, time_t after, time_t *ret)
{
	time_t t = after - (after % 60 + 60) % 60 + 60, limit = after + 5 * 366 * 86400L;
	struct tm tm;
	int steps;

	for (steps = 0; t <= limit && steps < 200000; steps++) {
		if (!localtime_r(&t, &tm))
			return -ERANGE;
		if (!(c->months & (1U << (tm.tm_mon + 1)))) {
			tm.tm_mon++;
			tm.tm_mday = 1;
			tm.tm_hour = tm.tm_min = 0;
		} else if (!day_matches(c, &tm)) {
			tm.tm_mday++;
			tm.tm_hour = tm.tm_min = 0;
		} else if (!(c->hours & (1U << tm.tm_hour))) {
			tm.tm_hour++;
			tm.tm_min = 0;
		} else if (!(c->minutes & (1ULL << tm.tm_min))) {
			tm.tm_min++;
		} else if (!repeated_minute(t, &tm)) {
			*ret = t;
			return 0;
		} else {
			tm.tm_min++;
		}
		tm.tm_sec = 0;
		tm.tm_isdst = -1;
		{
			time_t n = mktime(&tm);

			/* a skipped hour can send mktime back; never walk back */
			t = n > t ? n : t + 60;
		}
	}
	return -ERANGE;
}
