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
 * kept in name order, so that a monitor's bit (monitor_bit) is the same in
 * every binary that links the same files, whatever their link order. Read
 * only afterwards: no lock.
 */
#define MONITORS_MAX 32

static const struct monitor_ops *monitors[MONITORS_MAX];
static const char *where[MONITORS_MAX];
static int where_line[MONITORS_MAX];
static size_t nmonitors;
static char problems[512];
static char names_text[MONITORS_MAX * 24];

void monitor_register(const struct monitor_ops *ops, const char *file, int line)
{
	size_t i, len = strlen(problems);

	for (i = 0; i < nmonitors; i++)
		if (!strcmp(monitors[i]->name, ops->name)) {
			snprintf(problems + len, sizeof(problems) - len, "%s%s:%d: monitor '%s' registered twice "
				 "(first at %s:%d)", len ? "; " : "", file, line, ops->name, where[i], where_line[i]);
			return;
		}
	if (nmonitors == MONITORS_MAX) {
		snprintf(problems + len, sizeof(problems) - len, "%s%s:%d: more than %d monitors", len ? "; " : "",
			 file, line, MONITORS_MAX);
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
	/* the names a spec may list, for messages */
	names_text[0] = '\0';
	for (i = 0; i < nmonitors; i++) {
		len = strlen(names_text);
		if (!monitors[i]->always)
			snprintf(names_text + len, sizeof(names_text) - len, "%s%s", len ? ", " : "", monitors[i]->name);
	}
}

const char *monitor_registry_errors(void)
{
	return problems[0] ? problems : NULL;
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

const char *monitor_names(void)
{
	return names_text;
}

unsigned monitor_bit(const char *name)
{
	for (size_t i = 0; i < nmonitors; i++)
		if (!monitors[i]->always && !strcmp(monitors[i]->name, name))
			return 1u << i;
	return 0;
}

unsigned monitor_default_mask(void)
{
	unsigned mask = 0;

	for (size_t i = 0; i < nmonitors; i++)
		if (monitors[i]->default_on)
			mask |= 1u << i;
	return mask;
}

void monitor_set_open(struct monitor_set *ms, unsigned mask, const int *cpus, int ncpus)
{
	size_t i, k, n = nmonitors;

	memset(ms, 0, sizeof(*ms));
	ms->m = xcalloc(n ? n : 1, sizeof(*ms->m));
	for (i = 0; i < n; i++) {
		struct monitor *m = &ms->m[ms->n];
		struct strbuf err = STRBUF_INIT;

		if (!monitors[i]->open || (!(mask & (1u << i)) && !monitors[i]->always))
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
