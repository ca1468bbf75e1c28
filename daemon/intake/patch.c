/*
 * The subject of a patch. A format-patch mail says it in its Subject:
 * header, which may be folded over lines and MIME-encoded (RFC 2047) when
 * it is not ASCII; a plain diff has at most some text before it, and
 * always the names of the files it touches. Only the top of the text is
 * read for headers, and every line at most once; no scan goes back or
 * looks further than a bound, so a text costs time linear in its size
 * (a job's body is up to lab.max_body: tests/bench/b0015 times 1 MiB).
 */
#include "patch.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"
#include "banned.h"

#define MAX_FILES 1000	/* distinct files counted for "and N more files" */

struct line {
	const char *p;
	size_t n;	/* without the line's end ("\n" or "\r\n") */
};

/* The line at *pos, advancing *pos past it; 0 at the end of the text. */
static int next_line(const char *text, size_t len, size_t *pos, struct line *ret)
{
	const char *nl;
	size_t n;

	if (*pos >= len)
		return 0;
	nl = memchr(text + *pos, '\n', len - *pos);
	n = nl ? (size_t)(nl - (text + *pos)) : len - *pos;
	ret->p = text + *pos;
	ret->n = n;
	*pos += n + (nl ? 1 : 0);
	if (ret->n && ret->p[ret->n - 1] == '\r')
		ret->n--;
	return 1;
}

static int starts(const struct line *l, const char *prefix)
{
	size_t k = strlen(prefix);

	return l->n >= k && !memcmp(l->p, prefix, k);
}

static int starts_nocase(const char *p, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && !strncasecmp(p, prefix, k);
}

/* The length of the header name of "Name: value", or 0. */
static size_t header_name(const struct line *l)
{
	size_t i;

	for (i = 0; i < l->n && (isalnum((unsigned char)l->p[i]) || l->p[i] == '-'); i++)
		;
	return i > 0 && i < l->n && l->p[i] == ':' ? i : 0;
}

/* A line that starts a mail's headers: mbox's "From " line, or a header
 * a mail or git format-patch starts with. A commit title such as "mm: fix
 * it" has the shape of a header, so only these names count. */
static int starts_headers(const struct line *l)
{
	static const char *const names[] = {
		"From", "Date", "Subject", "To", "Cc", "Message-Id", "In-Reply-To", "References",
		"MIME-Version", "Content-Type", "Content-Transfer-Encoding", "Reply-To", "Sender",
		"Return-Path", "Received", "Delivered-To", "User-Agent", "Precedence",
	};
	size_t n = header_name(l), i;

	if (starts(l, "From "))
		return 1;
	if (!n)
		return 0;
	if (starts_nocase(l->p, n, "X-") || starts_nocase(l->p, n, "List-"))
		return 1;
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (n == strlen(names[i]) && !strncasecmp(l->p, names[i], n))
			return 1;
	return 0;
}

static int is_diff_start(const struct line *l, const char *text, size_t len, size_t next)
{
	struct line nl;

	if (starts(l, "diff --git ") || starts(l, "diff -") || starts(l, "Index: ") || starts(l, "+++ "))
		return 1;
	return starts(l, "--- ") && next_line(text, len, &next, &nl) && starts(&nl, "+++ ");
}

static int valid_utf8(const char *s, size_t n)
{
	size_t i = 0;
	unsigned cp;
	int k;

	while (i < n) {
		if (!((unsigned char)s[i] & 0x80)) {
			i++;
			continue;
		}
		if ((k = strbuf_utf8_decode(s + i, n - i, &cp)) < 0)
			return 0;
		i += (size_t)k;
	}
	return 1;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int b64val(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Appends bytes b[0..n) in charset cs as UTF-8: Latin-1 (and its
 * relatives, approximately) by code point; anything else as it is, for
 * the cleaning to make valid. */
static void add_charset(struct strbuf *out, const char *b, size_t n, const char *cs, size_t csn)
{
	static const char *const latin[] = { "iso-8859-1", "iso-8859-15", "latin1", "windows-1252",
					     "cp1252" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(latin); i++)
		if (csn == strlen(latin[i]) && !strncasecmp(cs, latin[i], csn))
			break;
	if (i == ARRAY_SIZE(latin)) {
		strbuf_add(out, b, n);
		return;
	}
	for (i = 0; i < n; i++)
		strbuf_add_utf8(out, (unsigned char)b[i]);
}

/*
 * RFC 2047, 2: an encoded word is at most 75 characters, its delimiters
 * included. A longer one, or a "=?" with no "?=" within that bound, is
 * text. The bound is also what keeps a header linear: each "=?" is
 * looked at for 75 characters at most, not to the header's end (a
 * Subject: of "=?utf-8?q?a" repeated over 1 MiB took minutes).
 */
#define ENCODED_WORD_MAX 75

/*
 * An RFC 2047 encoded word at s ("=?charset?Q?text?=" or B): appends it
 * decoded and returns its length, or 0 when s does not start with one.
 */
static size_t encoded_word(struct strbuf *out, const char *s, size_t n)
{
	struct strbuf raw = STRBUF_INIT;
	size_t i = 2, cs, csn, tx, end;
	const char *p;
	unsigned acc = 0;
	int bits = 0, enc;

	if (n < 8 || s[0] != '=' || s[1] != '?')
		return 0;
	if (n > ENCODED_WORD_MAX)
		n = ENCODED_WORD_MAX;
	cs = i;
	while (i < n && s[i] != '?' && !isspace((unsigned char)s[i]))
		i++;
	if (i + 2 >= n || s[i] != '?' || s[i + 2] != '?' || i == cs)
		return 0;
	csn = i - cs;
	if (memchr(s + cs, '*', csn))	/* RFC 2231 language: "utf-8*en" */
		csn = (size_t)((const char *)memchr(s + cs, '*', csn) - (s + cs));
	enc = toupper((unsigned char)s[i + 1]);
	if (enc != 'Q' && enc != 'B')
		return 0;
	tx = i + 3;
	if (tx >= n || !(p = memmem(s + tx, n - tx, "?=", 2)))
		return 0;
	end = (size_t)(p - s);
	for (i = tx; i < end; i++)
		if (isspace((unsigned char)s[i]))
			return 0;
	for (i = tx; i < end; i++) {
		if (enc == 'Q') {
			if (s[i] == '_') {
				strbuf_addch(&raw, ' ');
			} else if (s[i] == '=' && i + 2 < end + 1 && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
				strbuf_addch(&raw, hexval(s[i + 1]) << 4 | hexval(s[i + 2]));
				i += 2;
			} else {
				strbuf_addch(&raw, s[i]);
			}
		} else if (b64val(s[i]) >= 0) {
			acc = acc << 6 | (unsigned)b64val(s[i]);
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				strbuf_addch(&raw, (int)((acc >> bits) & 0xff));
			}
		}
	}
	add_charset(out, raw.buf, raw.len, s + cs, csn);
	strbuf_release(&raw);
	return end + 2;
}

/* A header's value, unfolded, with its encoded words decoded; white space
 * between two encoded words goes (RFC 2047, 6.2). */
static void decode_header(struct strbuf *out, const char *v, size_t n)
{
	struct strbuf word = STRBUF_INIT;
	int latin1 = !valid_utf8(v, n), after_word = 0, ws = 0;
	size_t i = 0, k;

	while (i < n) {
		if (isspace((unsigned char)v[i])) {
			ws = 1;
			i++;
			continue;
		}
		strbuf_reset(&word);
		k = v[i] == '=' ? encoded_word(&word, v + i, n - i) : 0;
		if (ws && out->len && !(k && after_word))
			strbuf_addch(out, ' ');
		if (k) {
			strbuf_add(out, word.buf, word.len);
			i += k;
		} else {
			/* text, up to the next space or the next word's '=' */
			size_t end = i + 1;

			while (end < n && !isspace((unsigned char)v[end]) && v[end] != '=')
				end++;
			if (latin1)
				while (i < end)
					strbuf_add_utf8(out, (unsigned char)v[i++]);
			else
				strbuf_add(out, v + i, end - i);
			i = end;
		}
		after_word = k > 0;
		ws = 0;
	}
	strbuf_release(&word);
}

/* git am's cleanup of a subject: "Re:" and "[...]" groups at its start go. */
static const char *strip_prefixes(const char *s)
{
	for (;;) {
		const char *close;

		while (*s == ' ')
			s++;
		if (!strncasecmp(s, "re:", 3)) {
			s += 3;
		} else if (*s == '[' && (close = strchr(s, ']'))) {
			s = close + 1;
		} else {
			return s;
		}
	}
}

/* A name the diff touches: where it is in the text. */
struct file_name {
	const char *p;
	size_t n;
};

static int file_name_cmp(const struct file_name *x, const struct file_name *y)
{
	int c = memcmp(x->p, y->p, x->n < y->n ? x->n : y->n);

	return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* Adds name to the names set[0..*n), sorted, unless it is there. */
static void file_set_add(struct file_name *set, size_t *n, struct file_name name)
{
	size_t lo = 0, hi = *n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = file_name_cmp(&name, &set[mid]);

		if (!c)
			return;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	memmove(set + lo + 1, set + lo, (*n - lo) * sizeof(*set));
	set[lo] = name;
	(*n)++;
}

/*
 * "diff touching X" from the diff's file names, the patched side's. The
 * names seen are kept sorted, and the reading stops at the MAX_FILES-th:
 * a line costs its length and a binary search. Comparing each name with
 * every one before it cost MAX_FILES compares a line (a diff of 1000
 * files listed over and over took 0.4 s a MiB).
 */
static int touched_files(const char *text, size_t len, struct strbuf *ret)
{
	struct file_name seen[MAX_FILES], first = { NULL, 0 }, minus = { "", 0 };
	size_t pos = 0, nseen = 0;
	struct line l;
	int git = 0;

	while (nseen < MAX_FILES && next_line(text, len, &pos, &l)) {
		const char *p = NULL;
		size_t n = 0;

		if (starts(&l, "diff --git ")) {
			const char *b = NULL, *q;

			git = 1;
			for (q = l.p + 11; (q = memmem(q, (size_t)(l.p + l.n - q), " b/", 3)); q++)
				b = q;
			if (!b)
				b = memrchr(l.p + 11, ' ', l.n - 11);
			if (!b)
				continue;
			p = b + 1;
			n = (size_t)(l.p + l.n - p);
			if (n > 2 && !memcmp(p, "b/", 2))
				p += 2, n -= 2;
		} else if (!git && starts(&l, "--- ")) {
			const char *tab = memchr(l.p + 4, '\t', l.n - 4);

			minus.p = l.p + 4;
			minus.n = tab ? (size_t)(tab - (l.p + 4)) : l.n - 4;
			continue;
		} else if (!git && starts(&l, "+++ ")) {
			const char *slash;

			p = l.p + 4;
			n = l.n - 4;
			if (memchr(p, '\t', n))
				n = (size_t)((const char *)memchr(p, '\t', n) - p);
			if (n == 9 && !memcmp(p, "/dev/null", 9)) {
				p = minus.p;
				n = minus.n;
			}
			/* patch -p1: the first component is the tree's name */
			if ((slash = memchr(p, '/', n)) && slash + 1 < p + n)
				n -= (size_t)(slash + 1 - p), p = slash + 1;
		} else {
			continue;
		}
		n = strnlen(p, n);	/* a name is a C string: it ends at a NUL */
		while (n && (p[n - 1] == '"' || p[n - 1] == ' '))
			n--;
		if (!n)
			continue;
		if (!first.p)
			first = (struct file_name){ p, n };
		file_set_add(seen, &nseen, (struct file_name){ p, n });
	}
	if (!nseen)
		return 0;
	strbuf_addstr(ret, "diff touching ");
	strbuf_add(ret, first.p, first.n);
	if (nseen > 1)
		strbuf_addf(ret, " and %zu%s more file%s", nseen - 1, nseen == MAX_FILES ? "+" : "",
			    nseen == 2 ? "" : "s");
	return 1;
}

enum patch_subject_kind patch_subject(const char *text, size_t len, struct strbuf *ret)
{
	struct strbuf raw = STRBUF_INIT, dec = STRBUF_INIT;
	enum patch_subject_kind kind = PATCH_SUBJECT_NONE;
	size_t pos = 0, at = 0;
	struct line l;
	int in_subject = 0, have_subject = 0;

	strbuf_reset(ret);
	while (next_line(text, len, &pos, &l) && !l.n)
		at = pos;	/* blank lines before anything */
	pos = at;
	/* the first mail's headers, its Subject: unfolded */
	if (next_line(text, len, &pos, &l) && starts_headers(&l)) {
		do {
			if (!l.n)
				break;	/* the end of the headers */
			if (l.p[0] == ' ' || l.p[0] == '\t') {
				if (in_subject)
					strbuf_add(&raw, l.p, l.n);
				continue;
			}
			in_subject = 0;
			if (!have_subject && header_name(&l) == 7 && starts_nocase(l.p, l.n, "Subject:")) {
				strbuf_add(&raw, l.p + 8, l.n - 8);
				in_subject = have_subject = 1;
			} else if (!header_name(&l) && !starts(&l, "From ")) {
				pos = (size_t)(l.p - text);	/* not a header: the text starts here */
				break;
			}
		} while (next_line(text, len, &pos, &l));
	} else {
		pos = at;
	}
	if (have_subject) {
		const char *s;

		decode_header(&dec, raw.buf, raw.len);
		s = strip_prefixes(dec.buf);
		strbuf_add_line_clean(ret, s, strlen(s), PATCH_SUBJECT_MAX);
		if (!ret->len)	/* nothing but "[PATCH]": keep it */
			strbuf_add_line_clean(ret, dec.buf, dec.len, PATCH_SUBJECT_MAX);
		if (ret->len) {
			kind = PATCH_SUBJECT_HEADER;
			goto out;
		}
	}
	/* the text before the diff: its first line that says something */
	while (next_line(text, len, &pos, &l)) {
		if (is_diff_start(&l, text, len, pos))
			break;
		if (!l.n || (l.n == 3 && !memcmp(l.p, "---", 3)) || starts_headers(&l))
			continue;
		strbuf_add_line_clean(ret, l.p, l.n, PATCH_SUBJECT_MAX);
		if (ret->len) {
			kind = PATCH_SUBJECT_TEXT;
			goto out;
		}
	}
	strbuf_reset(&raw);
	if (touched_files(text, len, &raw)) {
		strbuf_add_line_clean(ret, raw.buf, raw.len, PATCH_SUBJECT_MAX);
		kind = PATCH_SUBJECT_FILES;
	}
out:
	strbuf_release(&raw);
	strbuf_release(&dec);
	return kind;
}

/* One mail of an mbox: its place in the text, and what its body holds. */
struct mail {
	size_t start, len;
	int diff, binary;
};

static int is_commit_from(const struct line *l)
{
	size_t i;

	if (l->n < 46 || !starts(l, "From ") || l->p[45] != ' ')
		return 0;
	for (i = 5; i < 45; i++)
		if (!isxdigit((unsigned char)l->p[i]))
			return 0;
	return 1;
}

/* Splits text into mails: how many there are; the first max go to ret. */
static size_t split_mails(const char *text, size_t len, struct mail *ret, size_t max)
{
	size_t pos = 0, at = 0, n = 0, next;
	struct line l, nl;
	int prev_empty = 1;

	while (next_line(text, len, &pos, &l) && !l.n)
		at = pos;
	pos = at;
	if (!next_line(text, len, &pos, &l) || !starts_headers(&l))
		return 0;
	pos = at;
	while (next_line(text, len, &pos, &l)) {
		size_t start = (size_t)(l.p - text);

		next = pos;
		if ((start == at || ((prev_empty || is_commit_from(&l)) && starts(&l, "From "))) &&
		    (start == at || (next_line(text, len, &next, &nl) && header_name(&nl) && starts_headers(&nl)))) {
			if (n && n <= max)
				ret[n - 1].len = start - ret[n - 1].start;
			if (n < max)
				ret[n] = (struct mail){ .start = start };
			n++;
		} else if (n && n <= max) {
			if (starts(&l, "GIT binary patch"))
				ret[n - 1].diff = ret[n - 1].binary = 1;
			else if (is_diff_start(&l, text, len, pos))
				ret[n - 1].diff = 1;
		}
		prev_empty = !l.n;
	}
	if (n && n <= max)
		ret[n - 1].len = len - ret[n - 1].start;
	return n;
}

int patch_series_read(const char *text, size_t len, struct patch_series *ret, struct strbuf *err)
{
	struct mail *m = xcalloc(PATCH_SERIES_MAX + 2, sizeof(*m));
	struct strbuf subj = STRBUF_INIT;
	size_t n, i, k = 0;
	int rc = -1;

	memset(ret, 0, sizeof(*ret));
	n = split_mails(text, len, m, PATCH_SERIES_MAX + 2);
	if (!n) {
		rc = 0;
		goto out;
	}
	if (n > PATCH_SERIES_MAX + 1) {
		strbuf_seterr(err, "the mbox holds more than %d patches", PATCH_SERIES_MAX);
		goto out;
	}
	for (i = 0; i < n && !m[i].diff; i++)
		;
	if (i == n && n > 1) {
		strbuf_seterr(err, "the mbox holds no patch: none of its %zu mails has a diff", n);
		goto out;
	}
	ret->nmails = n;
	ret->cover = !m[0].diff && n > 1;
	ret->subjects = xcalloc(n, sizeof(*ret->subjects));
	ret->ends = xcalloc(n, sizeof(*ret->ends));
	for (i = 0; i < n; i++) {
		patch_subject(text + m[i].start, m[i].len, &subj);
		if (i == 0 && ret->cover) {
			ret->cover_subject = strbuf_detach(&subj, NULL);
			continue;
		}
		if (!m[i].diff) {
			if (n == 1)
				strbuf_seterr(err, "the mbox holds no patch: its one mail ('%s') has no diff", subj.buf);
			else
				strbuf_seterr(err, "mail %zu of %zu ('%s') has no diff: an mbox holds a series' "
					      "patches, a cover letter at most first", i + 1, n, subj.buf);
			goto out;
		}
		if (m[i].binary) {
			strbuf_seterr(err, "patch %zu of %zu ('%s') is a binary diff (GIT binary patch): the "
				      "lab applies text patches", k + 1, n - (size_t)ret->cover, subj.buf);
			goto out;
		}
		ret->ends[k] = m[i].start + m[i].len;
		ret->subjects[k++] = strbuf_detach(&subj, NULL);
	}
	ret->npatches = k;
	if (k > PATCH_SERIES_MAX) {
		strbuf_seterr(err, "the mbox holds %zu patches, more than %d", k, PATCH_SERIES_MAX);
		goto out;
	}
	rc = 0;
out:
	if (rc < 0) {
		ret->npatches = k;
		patch_series_release(ret);
	}
	strbuf_release(&subj);
	free(m);
	return rc;
}

void patch_series_release(struct patch_series *s)
{
	size_t i;

	for (i = 0; i < s->npatches; i++)
		free(s->subjects[i]);
	free(s->subjects);
	free(s->ends);
	free(s->cover_subject);
	memset(s, 0, sizeof(*s));
}

int patch_series_json(const char *text, size_t len, json_t **ret, struct strbuf *err)
{
	struct patch_series s;
	json_t *list;
	size_t i;

	*ret = NULL;
	if (patch_series_read(text, len, &s, err) < 0)
		return -1;
	if (!s.nmails)
		return 0;
	list = json_array();
	for (i = 0; i < s.npatches; i++)
		json_array_append_new(list, json_string(s.subjects[i]));
	*ret = json_pack("{s:o,s:o}", "cover", s.cover_subject ? json_string(s.cover_subject) : json_null(),
			 "patches", list);
	patch_series_release(&s);
	return 0;
}
