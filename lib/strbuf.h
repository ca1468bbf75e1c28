#ifndef TLBLAB_STRBUF_H
#define TLBLAB_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

/*
 * A growable, NUL-terminated byte buffer in the manner of git's strbuf.
 *
 * `buf` is never NULL: an empty strbuf points at a shared empty string, so a
 * caller can always print sb.buf. `len` excludes the terminating NUL. Every
 * strbuf has a maximum size (`max`, 0 meaning STRBUF_DEFAULT_MAX); growing past
 * it fails with -ENOSPC and leaves the buffer as it was, so untrusted input
 * cannot make us allocate without bound. Allocation failure aborts: there is
 * no sensible recovery from it in this program.
 *
 * Library code reports errors by filling a `struct strbuf *err` that the
 * caller may show; it never prints or exits on its own.
 */

#define STRBUF_DEFAULT_MAX (64u << 20)

struct strbuf {
	size_t alloc;
	size_t len;
	size_t max;
	char *buf;
};

extern char strbuf_empty[];
#define STRBUF_INIT { 0, 0, 0, strbuf_empty }

void strbuf_init(struct strbuf *sb, size_t hint);
/* Frees the memory and leaves sb empty and reusable. Accepts NULL. */
void strbuf_release(struct strbuf *sb);
/* Hands the buffer to the caller (who frees it) and leaves sb empty. */
char *strbuf_detach(struct strbuf *sb, size_t *ret_len);
void strbuf_reset(struct strbuf *sb);
/* Ensures room for `extra` more bytes. -ENOSPC past sb->max. */
int strbuf_grow(struct strbuf *sb, size_t extra);
int strbuf_add(struct strbuf *sb, const void *data, size_t len);
int strbuf_addstr(struct strbuf *sb, const char *s);
int strbuf_addch(struct strbuf *sb, int c);
int strbuf_addf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* Sets the length (at most what is allocated) and terminates there. */
void strbuf_setlen(struct strbuf *sb, size_t len);
void strbuf_trim(struct strbuf *sb);

/* Replaces the content with a formatted string. */
int strbuf_vsetf(struct strbuf *sb, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/*
 * Replaces the content with a formatted message. Meant for error buffers:
 * `return strbuf_seterr(err, "workers: must be ...")` returns -1.
 */
int strbuf_seterr(struct strbuf *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Appends the last n lines of text[0..len) (trailing blank lines and
 * spaces left out, no final newline). */
void strbuf_add_last_lines(struct strbuf *sb, const char *text, size_t len, int n);

/*
 * Appends s[0..len) as one line a person can read safely in a terminal, a
 * mail or a web page: valid UTF-8 (a byte that is not becomes '?'); control
 * characters (C0, DEL, C1, and the Unicode line and paragraph separators
 * and bidirectional formatting marks), tabs and newlines become spaces, a
 * run of spaces one, none leading or trailing. At most max bytes (0: no
 * limit); a cut is marked "..." and falls between characters.
 */
void strbuf_add_line_clean(struct strbuf *sb, const char *s, size_t len, size_t max);
/* Columns of UTF-8 text s[0..len): one per character (continuation bytes
 * take none). */
size_t strbuf_utf8_width(const char *s, size_t len);
/* Decodes the UTF-8 character at s (len bytes available) into *ret_cp;
 * returns its length in bytes, or -1 when the bytes there are not valid
 * UTF-8 (overlong, surrogate, past U+10FFFF, cut short). */
int strbuf_utf8_decode(const char *s, size_t len, unsigned *ret_cp);
/* Appends code point cp (at most U+10FFFF, not a surrogate) as UTF-8. */
void strbuf_add_utf8(struct strbuf *sb, unsigned cp);

/*
 * JSON text written directly, for the hot reads that skip building a
 * jansson document, byte for byte what json_dumps(JSON_COMPACT |
 * JSON_REAL_PRECISION(p)) writes: a string quoted and escaped as jansson
 * does ('"', '\\', \b \f \n \r \t, other C0 as \u00XX, UTF-8 kept; a
 * byte that is not valid UTF-8 becomes U+FFFD, where jansson would refuse
 * the string); a real as "%.*g" with ".0" added when that reads as an
 * integer (a non-finite one is null).
 */
void strbuf_add_json_string(struct strbuf *sb, const char *s, size_t len);
void strbuf_add_json_real(struct strbuf *sb, double v, int precision);

/*
 * Reads the whole file at path into sb (appending), at most `max` bytes.
 * Returns 0, or a negative errno (-EFBIG when the file is larger than max).
 */
int strbuf_read_file(struct strbuf *sb, const char *path, size_t max);
/* Reads from fd until EOF, at most max bytes. Negative errno on failure. */
int strbuf_read_fd(struct strbuf *sb, int fd, size_t max);

#endif
