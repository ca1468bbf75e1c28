#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "banned.h"

char strbuf_empty[1];

static size_t strbuf_max(const struct strbuf *sb)
{
	return sb->max ? sb->max : STRBUF_DEFAULT_MAX;
}

void strbuf_init(struct strbuf *sb, size_t hint)
{
	sb->alloc = sb->len = sb->max = 0;
	sb->buf = strbuf_empty;
	if (hint)
		strbuf_grow(sb, hint);
}

void strbuf_release(struct strbuf *sb)
{
	if (!sb)
		return;
	if (sb->alloc)
		free(sb->buf);
	sb->alloc = sb->len = 0;
	sb->buf = strbuf_empty;
}

char *strbuf_detach(struct strbuf *sb, size_t *ret_len)
{
	char *res;

	if (!sb->alloc)
		strbuf_grow(sb, 1);
	res = sb->buf;
	if (ret_len)
		*ret_len = sb->len;
	sb->alloc = sb->len = 0;
	sb->buf = strbuf_empty;
	return res;
}

void strbuf_reset(struct strbuf *sb)
{
	strbuf_setlen(sb, 0);
}

int strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t need, n;
	char *p;

	if (extra > strbuf_max(sb) || sb->len + extra > strbuf_max(sb))
		return -ENOSPC;
	need = sb->len + extra + 1;
	if (need <= sb->alloc)
		return 0;
	n = sb->alloc ? sb->alloc : 64;
	while (n < need)
		n = n * 3 / 2 + 16;
	p = realloc(sb->alloc ? sb->buf : NULL, n);
	if (!p)
		abort();
	if (!sb->alloc)
		p[0] = '\0';
	sb->buf = p;
	sb->alloc = n;
	return 0;
}

int strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	int r = strbuf_grow(sb, len);

	if (r < 0)
		return r;
	memcpy(sb->buf + sb->len, data, len);
	strbuf_setlen(sb, sb->len + len);
	return 0;
}

int strbuf_addstr(struct strbuf *sb, const char *s)
{
	return strbuf_add(sb, s, strlen(s));
}

int strbuf_addch(struct strbuf *sb, int c)
{
	char ch = (char)c;

	return strbuf_add(sb, &ch, 1);
}

int strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n, r;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return -EINVAL;
	r = strbuf_grow(sb, (size_t)n);
	if (r < 0)
		return r;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
	return 0;
}

int strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
	return r;
}

int strbuf_vsetf(struct strbuf *sb, const char *fmt, va_list ap)
{
	strbuf_reset(sb);
	return strbuf_vaddf(sb, fmt, ap);
}

int strbuf_seterr(struct strbuf *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	strbuf_vsetf(err, fmt, ap);
	va_end(ap);
	return -1;
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (!sb->alloc)
		return;
	if (len >= sb->alloc)
		len = sb->alloc - 1;
	sb->len = len;
	sb->buf[len] = '\0';
}

void strbuf_trim(struct strbuf *sb)
{
	size_t start = 0, end = sb->len;

	while (start < end && (sb->buf[start] == ' ' || sb->buf[start] == '\t' ||
			       sb->buf[start] == '\n' || sb->buf[start] == '\r'))
		start++;
	while (end > start && (sb->buf[end - 1] == ' ' || sb->buf[end - 1] == '\t' ||
			       sb->buf[end - 1] == '\n' || sb->buf[end - 1] == '\r'))
		end--;
	if (!sb->alloc)
		return;
	memmove(sb->buf, sb->buf + start, end - start);
	strbuf_setlen(sb, end - start);
}

int strbuf_read_fd(struct strbuf *sb, int fd, size_t max)
{
	size_t start = sb->len;

	for (;;) {
		ssize_t n;

		if (strbuf_grow(sb, 4096) < 0)
			goto toobig;
		n = read(fd, sb->buf + sb->len, sb->alloc - sb->len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			strbuf_setlen(sb, start);
			return (int)n;
		}
		if (n == 0)
			break;
		sb->len += (size_t)n;
		sb->buf[sb->len] = '\0';
		if (sb->len - start > max)
			goto toobig;
	}
	return 0;
toobig:
	strbuf_setlen(sb, start);
	return -EFBIG;
}

int strbuf_read_file(struct strbuf *sb, const char *path, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int r;

	if (fd < 0)
		return -errno;
	r = strbuf_read_fd(sb, fd, max);
	close(fd);
	return r;
}

void strbuf_add_last_lines(struct strbuf *sb, const char *text, size_t len, int n)
{
	size_t i;
	int seen = 0;

	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	for (i = len; i > 0; i--)
		if (text[i - 1] == '\n' && ++seen >= n)
			break;
	strbuf_add(sb, text + i, len - i);
}

int strbuf_utf8_decode(const char *s, size_t len, unsigned *ret_cp)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned cp, min;
	int n, i;

	if (!len)
		return -1;
	if (u[0] < 0x80) {
		*ret_cp = u[0];
		return 1;
	}
	if (u[0] >= 0xc2 && u[0] <= 0xdf) {
		n = 2, cp = u[0] & 0x1f, min = 0x80;
	} else if (u[0] >= 0xe0 && u[0] <= 0xef) {
		n = 3, cp = u[0] & 0x0f, min = 0x800;
	} else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
		n = 4, cp = u[0] & 0x07, min = 0x10000;
	} else {
		return -1;
	}
	if ((size_t)n > len)
		return -1;
	for (i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return -1;
		cp = cp << 6 | (u[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	*ret_cp = cp;
	return n;
}

void strbuf_add_utf8(struct strbuf *sb, unsigned cp)
{
	char b[4];

	if (cp < 0x80) {
		strbuf_addch(sb, (int)cp);
		return;
	}
	if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		strbuf_add(sb, b, 2);
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		strbuf_add(sb, b, 3);
	} else {
		b[0] = (char)(0xf0 | cp >> 18);
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		strbuf_add(sb, b, 4);
	}
}

/* Characters that must not reach a terminal or a mail as they are: they
 * move the cursor, end the line, or reorder what is shown around them. */
static int is_control(unsigned cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || cp == 0x061c ||
	       cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
}

void strbuf_add_line_clean(struct strbuf *sb, const char *s, size_t len, size_t max)
{
	struct strbuf t = STRBUF_INIT;
	size_t i = 0, cut;
	int space = 0;

	while (i < len && (!max || t.len <= max)) {
		unsigned cp;
		int n = strbuf_utf8_decode(s + i, len - i, &cp);

		if (n > 0 && (cp == ' ' || is_control(cp))) {
			space = t.len > 0;
		} else {
			if (space)
				strbuf_addch(&t, ' ');
			space = 0;
			if (n < 0)
				strbuf_addch(&t, '?');
			else
				strbuf_add(&t, s + i, (size_t)n);
		}
		i += n > 0 ? (size_t)n : 1;
	}
	if (max && t.len > max) {
		cut = max >= 3 ? max - 3 : 0;
		while (cut > 0 && ((unsigned char)t.buf[cut] & 0xc0) == 0x80)
			cut--;
		while (cut > 0 && t.buf[cut - 1] == ' ')
			cut--;
		strbuf_setlen(&t, cut);
		strbuf_addstr(&t, max >= 3 ? "..." : "");
	}
	strbuf_add(sb, t.buf, t.len);
	strbuf_release(&t);
}

size_t strbuf_utf8_width(const char *s, size_t len)
{
	size_t i, w = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			w++;
	return w;
}

void strbuf_add_json_string(struct strbuf *sb, const char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i = 0, run;
	unsigned cp;
	int n;

	strbuf_addch(sb, '"');
	while (i < len) {
		/* the bytes that go as they are, in one copy */
		for (run = i; run < len; run++) {
			unsigned char c = (unsigned char)s[run];

			if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80)
				break;
		}
		strbuf_add(sb, s + i, run - i);
		i = run;
		if (i == len)
			break;
		if ((unsigned char)s[i] >= 0x80) {
			n = strbuf_utf8_decode(s + i, len - i, &cp);
			if (n < 0) {
				strbuf_addstr(sb, "\xef\xbf\xbd");
				i++;
			} else {
				strbuf_add(sb, s + i, (size_t)n);
				i += (size_t)n;
			}
			continue;
		}
		switch (s[i]) {
		case '"': strbuf_addstr(sb, "\\\""); break;
		case '\\': strbuf_addstr(sb, "\\\\"); break;
		case '\b': strbuf_addstr(sb, "\\b"); break;
		case '\f': strbuf_addstr(sb, "\\f"); break;
		case '\n': strbuf_addstr(sb, "\\n"); break;
		case '\r': strbuf_addstr(sb, "\\r"); break;
		case '\t': strbuf_addstr(sb, "\\t"); break;
		default: {
			char u[6] = { '\\', 'u', '0', '0', hex[(unsigned char)s[i] >> 4], hex[s[i] & 0xf] };

			strbuf_add(sb, u, sizeof(u));
		}
		}
		i++;
	}
	strbuf_addch(sb, '"');
}

void strbuf_add_json_real(struct strbuf *sb, double v, int precision)
{
	char buf[64], *e, *digits, *end;
	int n;

	if (!isfinite(v)) {
		strbuf_addstr(sb, "null");
		return;
	}
	n = snprintf(buf, sizeof(buf) - 2, "%.*g", precision > 0 ? precision : 17, v);
	if (n < 0 || (size_t)n >= sizeof(buf) - 2)
		n = snprintf(buf, sizeof(buf) - 2, "%g", v);
	if (!strchr(buf, '.') && !strchr(buf, 'e'))
		memcpy(buf + n, ".0", 3);
	/* "1e+20" and "1e-07" are written "1e20" and "1e-7" */
	if ((e = strchr(buf, 'e'))) {
		digits = e + 1;
		if (*digits == '-')
			digits++;
		end = e + 1;
		if (*end == '+' || *end == '-')
			end++;
		while (*end == '0' && end[1])
			end++;
		memmove(digits, end, strlen(end) + 1);
	}
	strbuf_addstr(sb, buf);
}
