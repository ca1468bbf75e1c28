#include "monitor.h"
#include "procparse.h"

#include <stdarg.h>
#include <sys/klog.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "banned.h"

/*
 * The registry: the monitors' files fill it before main (MONITOR_REGISTER),
 * each bound by its name to its row of the catalog (monitor_catalog.h),
 * which says its bit and whether a spec gets it by default. Kept in name
 * order, so that the monitors open, and their counters come out, in the
 * same order whatever the link order. Read only afterwards: no lock.
 */
#define MONITORS_MAX MONITOR_CATALOG_MAX

static const struct monitor_ops *monitors[MONITORS_MAX];
static const char *where[MONITORS_MAX];
static int where_line[MONITORS_MAX];
static size_t nmonitors;
static char problems[512];

/* Adds "FILE:LINE: message" to the registry's problems. */
static void __attribute__((format(printf, 3, 4))) problem(const char *file, int line, const char *fmt, ...)
{
	size_t len = strlen(problems);
	va_list ap;

	snprintf(problems + len, sizeof(problems) - len, "%s%s:%d: ", len ? "; " : "", file, line);
	len = strlen(problems);
	va_start(ap, fmt);
	vsnprintf(problems + len, sizeof(problems) - len, fmt, ap);
	va_end(ap);
}

void monitor_register(const struct monitor_ops *ops, const char *file, int line)
{
	size_t i;

	for (i = 0; i < nmonitors; i++)
		if (!strcmp(monitors[i]->name, ops->name)) {
			problem(file, line, "monitor '%s' registered twice (first at %s:%d)", ops->name, where[i],
				where_line[i]);
			return;
		}
	if (!monitor_def_lookup(ops->name)) {
		problem(file, line, "monitor '%s' has no row in the catalog (lib/catalog/monitor_catalog.c)",
			ops->name);
		return;
	}
	if (nmonitors == MONITORS_MAX) {
		problem(file, line, "more than %d monitors", MONITORS_MAX);
		return;
	}
	for (i = nmonitors; i > 0 && strcmp(monitors[i - 1]->name, ops->name) > 0; i--) {
		monitors[i] = monitors[i - 1];
		where[i] = where[i - 1];
		where_line[i] = where_line[i - 1];
	}
	monitors[i] = ops;
	where[i] = file;
	where_line[i] = line;
	nmonitors++;
}

const char *monitor_registry_errors(void)
{
	static char text[sizeof(problems) + 256];
	size_t i, k, len;

	snprintf(text, sizeof(text), "%s", problems);
	for (i = 0; i < monitor_ndefs; i++) {
		for (k = 0; k < nmonitors && strcmp(monitors[k]->name, monitor_defs[i].name); k++)
			;
		if (k < nmonitors)
			continue;
		len = strlen(text);
		snprintf(text + len, sizeof(text) - len, "%smonitor '%s' of the catalog "
			 "(lib/catalog/monitor_catalog.c) has no file in this agent", len ? "; " : "",
			 monitor_defs[i].name);
	}
	return text[0] ? text : NULL;
}

const char *monitor_metric_dir_name(enum metric_dir d)
{
	switch (d) {
	case DIR_HIGHER: return "higher";
	case DIR_LOWER: return "lower";
	default: return "neutral";
	}
}

static void counter_set_release(struct counter_set *cs)
{
	if (!cs)
		return;
	free(cs->c);
	free(cs->u);
	memset(cs, 0, sizeof(*cs));
}

static void *grow(void *p, size_t *alloc, size_t need, size_t size)
{
	if (need <= *alloc)
		return p;
	*alloc = *alloc ? *alloc * 2 : 16;
	if (*alloc < need)
		*alloc = need;
	return xrealloc(p, *alloc * size);
}

size_t monitor_counter_set_add(struct counter_set *cs, const char *name, const char *unit,
		       enum metric_dir dir, int per_cpu)
{
	struct counter *c;

	cs->c = grow(cs->c, &cs->alloc, cs->n + 1, sizeof(*cs->c));
	c = &cs->c[cs->n];
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->unit = unit;
	c->dir = dir;
	c->per_cpu = per_cpu;
	c->raw_only = 0;
	c->edges_only = 0;
	return cs->n++;
}

void monitor_counter_set_unavailable(struct counter_set *cs, const char *name, const char *fmt, ...)
{
	struct unavailable *u;
	va_list ap;

	cs->u = grow(cs->u, &cs->ualloc, cs->nu + 1, sizeof(*cs->u));
	u = &cs->u[cs->nu++];
	snprintf(u->name, sizeof(u->name), "%s", name);
	va_start(ap, fmt);
	vsnprintf(u->why, sizeof(u->why), fmt, ap);
	va_end(ap);
}

long monitor_counter_set_find(const struct counter_set *cs, const char *name)
{
	size_t i;

	for (i = 0; i < cs->n; i++)
		if (!strcmp(cs->c[i].name, name))
			return (long)i;
	return -1;
}

const struct monitor_ops *monitor_lookup(const char *name)
{
	for (size_t i = 0; i < nmonitors; i++)
		if (monitors[i]->open && !strcmp(monitors[i]->name, name))
			return monitors[i];
	return NULL;
}

void monitor_set_open(struct monitor_set *ms, unsigned mask, const int *cpus, int ncpus)
{
	size_t i, k, n = nmonitors;

	memset(ms, 0, sizeof(*ms));
	ms->m = xcalloc(n ? n : 1, sizeof(*ms->m));
	for (i = 0; i < n; i++) {
		const struct monitor_def *d = monitor_def_lookup(monitors[i]->name);
		struct monitor *m = &ms->m[ms->n];
		struct strbuf err = STRBUF_INIT;

		if (!monitors[i]->open || (!(mask & monitor_bit(d->name)) && !(d->flags & MONITOR_ALWAYS)))
			continue;
		m->ops = monitors[i];
		m->first = ms->cs.n;
		m->cpus = cpus;
		m->ncpus = cpus ? ncpus : 0;
		if (m->ops->open(m, &ms->cs, &err) < 0) {
			/* the monitor registered its counters as unavailable */
			ms->cs.n = m->first;
			strbuf_release(&err);
			continue;
		}
		m->count = ms->cs.n - m->first;
		for (k = m->first; k < ms->cs.n; k++)
			ms->cs.c[k].edges_only = m->ops->edges_only;
		ms->n++;
		strbuf_release(&err);
	}
}

int monitor_set_read(struct monitor_set *ms, uint64_t *vals, int edges, struct strbuf *err)
{
	size_t i;

	for (i = 0; i < ms->n; i++)
		if ((edges || !ms->m[i].ops->edges_only) && ms->m[i].ops->read(&ms->m[i], vals, err) < 0)
			return -1;
	return 0;
}

void monitor_set_close(struct monitor_set *ms)
{
	size_t i;

	if (!ms)
		return;
	for (i = 0; i < ms->n; i++)
		if (ms->m[i].ops->close)
			ms->m[i].ops->close(&ms->m[i]);
	free(ms->m);
	counter_set_release(&ms->cs);
	memset(ms, 0, sizeof(*ms));
}

int monitor_pv_remote_flush(char *why, size_t len)
{
	/* klogctl's actions: 3 reads the whole ring, 10 its size */
	int size = klogctl(10, NULL, 0), n, found = 0;
	char line[160], *buf;

	if (size <= 0)
		return 0;
	buf = xmalloc((size_t)size + 1);
	n = klogctl(3, buf, size);
	if (n > 0) {
		buf[n] = 0;
		found = procparse_pv_remote_flush(buf, line, sizeof(line));
	}
	free(buf);
	if (found)
		snprintf(why, len, "this kernel makes remote TLB flushes by hypercall, not IPIs "
			 "(its log: \"%s\"): no CPU receives a shootdown to count", line);
	return found;
}
