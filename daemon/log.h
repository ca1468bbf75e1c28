#ifndef TLBLAB_LOG_H
#define TLBLAB_LOG_H

/*
 * Daemon logging in the OpenBSD manner: log_warn adds strerror(errno),
 * log_warnx does not; fatal() only at start-up or on a broken invariant.
 * Lines go to stderr with a timestamp (tlblabd runs in the foreground under
 * a supervisor, which keeps them). log_debug prints only after log_verbose(1).
 */
void log_verbose(int v);
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
