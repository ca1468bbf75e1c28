/*
 * Every line this daemon logs is one event: what it logs comes in part from
 * outside (a machine-health reason, a host's error text, a patch subject),
 * and a newline in it would start a line that looks like the daemon's own,
 * an ESC would drive the operator's terminal. So the whole message, format
 * and arguments alike, goes through one filter on its way out: control
 * bytes (below 0x20, and 0x7f) become \n, \r, \t or \xNN. A caller with
 * several lines to say logs them one call each.
 */
#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "strbuf.h"
#include "banned.h"

static int verbose;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void log_verbose(int v)
{
	verbose = v;
}

void log_escape(struct strbuf *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '\n')
			strbuf_addstr(out, "\\n");
		else if (ch == '\r')
			strbuf_addstr(out, "\\r");
		else if (ch == '\t')
			strbuf_addstr(out, "\\t");
		else if (ch < 0x20 || ch == 0x7f)
			strbuf_addf(out, "\\x%02x", ch);
		else
			strbuf_addch(out, (char)ch);
	}
}

static void vlog(const char *level, const char *fmt, va_list ap, const char *suffix)
{
	struct strbuf msg = STRBUF_INIT, line = STRBUF_INIT;
	char ts[32];
	struct tm tm;
	time_t t = time(NULL);

	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	strbuf_vaddf(&msg, fmt, ap);
	if (suffix)
		strbuf_addf(&msg, ": %s", suffix);
	strbuf_addf(&line, "%s tlblabd: %s", ts, level);
	log_escape(&line, msg.buf, msg.len);
	strbuf_addch(&line, '\n');
	pthread_mutex_lock(&log_lock);
	fwrite(line.buf, 1, line.len, stderr);
	fflush(stderr);
	pthread_mutex_unlock(&log_lock);
	strbuf_release(&msg);
	strbuf_release(&line);
}

/* The body of each log function below: its arguments after fmt, to vlog. */
#define VLOG(level, suffix) do {		\
	va_list ap;				\
						\
	va_start(ap, fmt);			\
	vlog((level), fmt, ap, (suffix));	\
	va_end(ap);				\
} while (0)

void log_info(const char *fmt, ...)
{
	VLOG("", NULL);
}

void log_warn(const char *fmt, ...)
{
	/* before anything else can change errno */
	const char *e = strerror(errno);

	VLOG("warning: ", e);
}

void log_warnx(const char *fmt, ...)
{
	VLOG("warning: ", NULL);
}

void log_debug(const char *fmt, ...)
{
	if (verbose)
		VLOG("debug: ", NULL);
}

void log_fatalx(const char *fmt, ...)
{
	VLOG("fatal: ", NULL);
	exit(1);
}
