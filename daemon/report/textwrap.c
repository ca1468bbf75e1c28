/*
 * Fixed-width plain text (textwrap.h).
 */
#include "textwrap.h"

#include <string.h>

#include "banned.h"

void textwrap_para(struct strbuf *out, const char *first, size_t indent, const char *text, size_t width)
{
	size_t col = strbuf_utf8_width(first, strlen(first)), i = 0, n = strlen(text);
	int empty = 1;

	strbuf_addstr(out, first);
	while (i < n) {
		size_t w = strcspn(text + i, " "), ww = strbuf_utf8_width(text + i, w);

		if (!w) {
			i++;
			continue;
		}
		if (!empty && col + 1 + ww > width) {
			strbuf_addf(out, "\n%*s", (int)indent, "");
			col = indent;
			empty = 1;
		}
		if (!empty) {
			strbuf_addch(out, ' ');
			col++;
		}
		strbuf_add(out, text + i, w);
		col += ww;
		empty = 0;
		i += w;
	}
	strbuf_addch(out, '\n');
}

/* One line of text, broken where it is wider than width. */
static void fit_line(struct strbuf *out, const char *l, size_t n, size_t width)
{
	size_t lead = 0, indent = 0, min;

	while (lead < n && l[lead] == ' ')
		lead++;
	min = lead + 8;
	for (;;) {
		size_t avail = width - indent, cols = 0, k, sp = 0, cut;

		if (strbuf_utf8_width(l, n) <= avail) {
			strbuf_addf(out, "%*s", (int)indent, "");
			strbuf_add(out, l, n);
			return;
		}
		for (k = 0; k < n; k++) {
			if (((unsigned char)l[k] & 0xc0) != 0x80 && ++cols > avail)
				break;
			if (l[k] == ' ' && k >= min)
				sp = k;
		}
		cut = sp ? sp : k;
		strbuf_addf(out, "%*s", (int)indent, "");
		strbuf_add(out, l, cut);
		strbuf_addch(out, '\n');
		while (cut < n && l[cut] == ' ')
			cut++;
		l += cut;
		n -= cut;
		indent = lead + 4 > 24 ? 24 : lead + 4;
		min = 8;
	}
}

void textwrap_fit(struct strbuf *text, size_t from, size_t width)
{
	struct strbuf out = STRBUF_INIT;
	size_t i = from;

	while (i < text->len) {
		const char *l = text->buf + i, *nl = memchr(l, '\n', text->len - i);
		size_t n = nl ? (size_t)(nl - l) : text->len - i;

		fit_line(&out, l, n, width);
		if (nl)
			strbuf_addch(&out, '\n');
		i += n + (nl ? 1 : 0);
	}
	strbuf_setlen(text, from);
	strbuf_add(text, out.buf, out.len);
	strbuf_release(&out);
}
