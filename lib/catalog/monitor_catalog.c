#include "monitor_catalog.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "banned.h"

/* One line a monitor (monitor_catalog.h). The order is free: a monitor's
 * bit comes from its name. */
#define MONITOR(name, flags, what) { name, flags, what, __LINE__ }
const struct monitor_def monitor_defs[] = {
	MONITOR("interrupts", MONITOR_DEFAULT_ON, "the TLB and CAL rows of /proc/interrupts, summed and per CPU"),
	MONITOR("pmu", MONITOR_ALWAYS, "the CPU's instructions (kernel, user) and dTLB/iTLB misses, perf_event_open"),
	MONITOR("procstat", MONITOR_DEFAULT_ON, "CPU busy % from /proc/stat"),
	MONITOR("profile", 0, "perf record: top symbols and folded stacks; ftrace's kernel function times"),
	MONITOR("tracepoints", 0, "tlb:tlb_flush per reason, context switches, page faults (perf_event_open)"),
	MONITOR("vmstat", MONITOR_DEFAULT_ON, "the nr_tlb_* rows of /proc/vmstat (CONFIG_DEBUG_TLBFLUSH)"),
};
const size_t monitor_ndefs = sizeof(monitor_defs) / sizeof(monitor_defs[0]);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char names_text[MONITOR_CATALOG_MAX * 24];
static char problems[256];

/* The rank of row i in name order: how many rows sort before it. */
static size_t rank(size_t i)
{
	size_t k, r = 0;

	for (k = 0; k < monitor_ndefs; k++)
		if (strcmp(monitor_defs[k].name, monitor_defs[i].name) < 0)
			r++;
	return r;
}

/* Once per process, for the messages and the checks: the text of the
 * names, and what is wrong with the table. */
static void catalog_init(void)
{
	size_t i, k, r, len;

	if (monitor_ndefs > MONITOR_CATALOG_MAX)
		snprintf(problems, sizeof(problems), "lib/catalog/monitor_catalog.c: more than %d monitors",
			 MONITOR_CATALOG_MAX);
	for (i = 0; i < monitor_ndefs && !problems[0]; i++)
		for (k = 0; k < i; k++)
			if (!strcmp(monitor_defs[i].name, monitor_defs[k].name))
				snprintf(problems, sizeof(problems), "%s:%d: monitor '%s' listed twice (first at %s:%d)",
					 __FILE__, monitor_defs[i].line, monitor_defs[i].name, __FILE__,
					 monitor_defs[k].line);
	/* in name order: rank r's row, for each r */
	for (r = 0; r < monitor_ndefs; r++)
		for (i = 0; i < monitor_ndefs; i++) {
			if (rank(i) != r || (monitor_defs[i].flags & MONITOR_ALWAYS))
				continue;
			len = strlen(names_text);
			snprintf(names_text + len, sizeof(names_text) - len, "%s%s", len ? ", " : "",
				 monitor_defs[i].name);
		}
}

const char *monitor_catalog_errors(void)
{
	pthread_once(&once, catalog_init);
	return problems[0] ? problems : NULL;
}

const struct monitor_def *monitor_def_lookup(const char *name)
{
	size_t i;

	for (i = 0; name && i < monitor_ndefs; i++)
		if (!strcmp(monitor_defs[i].name, name))
			return &monitor_defs[i];
	return NULL;
}

const char *monitor_names(void)
{
	pthread_once(&once, catalog_init);
	return names_text;
}

unsigned monitor_bit(const char *name)
{
	const struct monitor_def *d = monitor_def_lookup(name);
	size_t r;

	if (!d || (d->flags & MONITOR_ALWAYS))
		return 0;
	r = rank((size_t)(d - monitor_defs));
	return r < MONITOR_CATALOG_MAX ? 1u << r : 0;
}

unsigned monitor_default_mask(void)
{
	unsigned mask = 0;
	size_t i;

	for (i = 0; i < monitor_ndefs; i++)
		if (monitor_defs[i].flags & MONITOR_DEFAULT_ON)
			mask |= monitor_bit(monitor_defs[i].name);
	return mask;
}
