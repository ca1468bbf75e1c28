#ifndef TLBLAB_LOG_H
#define TLBLAB_LOG_H

/*
 * Daemon logging in the OpenBSD manner: log_warn adds strerror(errno),
 * log_warnx does not; fatal() only at start-up or on a broken invariant.
 * Lines go to stderr with a timestamp (tlblabd runs in the foreground under
 * a supervisor, which keeps them). log_debug prints only after log_verbose(1).
 *
 * A message is one line, whatever it holds: control characters in it
 * (newline, carriage return, ESC, any byte below 0x20 and 0x7f) are written
 * escaped, by log_escape, so text from outside cannot forge a log line or
 * drive a terminal. Several lines are several calls.
 */
#include <stddef.h>

struct strbuf;

/* Appends s[0..len) to out with \n, \r, \t for those bytes and \xNN for
 * the other control bytes (< 0x20, 0x7f); everything else as is. */
void log_escape(struct strbuf *out, const char *s, size_t len);

void log_verbose(int v);
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
