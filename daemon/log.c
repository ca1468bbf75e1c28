#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "banned.h"

static int verbose;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void log_verbose(int v)
{
	verbose = v;
}

static void vlog(const char *level, const char *fmt, va_list ap, const char *suffix)
{
	char ts[32];
	struct tm tm;
	time_t t = time(NULL);

	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	pthread_mutex_lock(&log_lock);
	fprintf(stderr, "%s tlblabd: %s", ts, level);
	vfprintf(stderr, fmt, ap);
	if (suffix)
		fprintf(stderr, ": %s", suffix);
	fputc('\n', stderr);
	fflush(stderr);
	pthread_mutex_unlock(&log_lock);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap, NULL);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;
	const char *e = strerror(errno);

	va_start(ap, fmt);
	vlog("warning: ", fmt, ap, e);
	va_end(ap);
}

void log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("warning: ", fmt, ap, NULL);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vlog("debug: ", fmt, ap, NULL);
	va_end(ap);
}

void fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("fatal: ", fmt, ap, NULL);
	va_end(ap);
	exit(1);
}
