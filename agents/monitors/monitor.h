#ifndef TLBLAB_MONITOR_H
#define TLBLAB_MONITOR_H

#include <stddef.h>
#include <stdint.h>

#include "monitor_catalog.h"
#include "strbuf.h"

/*
 * Monitors watch the kernel while a workload runs. Each one registers the
 * cumulative counters it can read into a counter_set when it opens; the runner
 * reads all of them at once (monitor_set_read) at the edges of a measured
 * window and every sampling interval, and works with deltas from then on.
 *
 * A counter the running kernel lacks is registered as unavailable with the
 * reason, never as a counter that reads 0: arm64 has no TLB interrupt row,
 * and the nr_tlb_* vmstat rows need CONFIG_DEBUG_TLBFLUSH.
 *
 * A monitor is one row of the catalog (lib/catalog/monitor_catalog.c:
 * its name, whether a spec that names none gets it, what it counts), which
 * the daemon reads too, and one file here that reads the kernel for it.
 */

enum metric_dir {
	DIR_NEUTRAL,
	DIR_HIGHER,	/* higher is better */
	DIR_LOWER,	/* lower is better */
	DIR_MAX
};

const char *monitor_metric_dir_name(enum metric_dir d);

#define COUNTER_NAME_MAX 96

struct counter {
	char name[COUNTER_NAME_MAX];
	const char *unit;
	enum metric_dir dir;
	int per_cpu;		/* a per-CPU breakdown of a summed counter */
	/* only its delta over a window: no .per_sec or .per_kop rows (the
	 * daemon makes the rows it needs, as for the PMU's, pmu.h) */
	int raw_only;
	/* its monitor's: read at a window's edges only, in no sample */
	int edges_only;
};

struct unavailable {
	char name[COUNTER_NAME_MAX];
	char why[200];
};

struct counter_set {
	struct counter *c;
	size_t n, alloc;
	struct unavailable *u;
	size_t nu, ualloc;
};

/* Registers a counter; returns its index. */
size_t monitor_counter_set_add(struct counter_set *cs, const char *name, const char *unit,
		       enum metric_dir dir, int per_cpu);
void monitor_counter_set_unavailable(struct counter_set *cs, const char *name,
			     const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Index of the counter called name, or -1. */
long monitor_counter_set_find(const struct counter_set *cs, const char *name);

/*
 * Whether this kernel makes remote TLB flushes by hypercall, not IPIs, as
 * its log says at boot (procparse_pv_remote_flush): then every counter of
 * shootdowns received stays at 0 and must be unavailable, with why (the
 * sentence to give, at most len bytes). A log the agent cannot read (no
 * CAP_SYSLOG) or that has rolled past the boot says nothing: 0.
 */
int monitor_pv_remote_flush(char *why, size_t len);

struct monitor;

/*
 * A monitor's code is one file, agents/monitors/NAME.c, whose ops end with
 * the registry line MONITOR_REGISTER(ops), bound by its name to its row of
 * the catalog (monitor_catalog.h): the spec parser takes the name in a
 * spec's monitors list, the runner opens it, and its counters reach the
 * store as samples and metrics with no daemon change. Whether it is on by
 * default or always is the row's (the spec parser needs it), not the ops'.
 */
struct monitor_ops {
	const char *name;	/* its row's in the catalog */
	/* read at a window's edges only, not for each sample: reading a
	 * counter of another CPU sends that CPU an IPI, work that would land
	 * in the window's counts (the PMU's) */
	int edges_only;
	/*
	 * Registers the counters this monitor can read (and the unavailable
	 * ones). Returns 0, or -1 with err set when the monitor cannot run at
	 * all on this machine; it must then have registered its counters as
	 * unavailable with the reason.
	 */
	int (*open)(struct monitor *m, struct counter_set *cs, struct strbuf *err);
	/* (NULL open: a name a spec may list whose work is done elsewhere:
	 * profile, perf record per window, runner.c) */
	/* Stores the current cumulative value of each of its counters into
	 * vals[m->first .. m->first + m->count). 0 or -1 with err. */
	int (*read)(struct monitor *m, uint64_t *vals, struct strbuf *err);
	void (*close)(struct monitor *m);
};

struct monitor {
	const struct monitor_ops *ops;
	void *priv;
	size_t first, count;
	/* the CPUs the workload runs on (ncpus 0: every CPU), for a monitor
	 * that counts per CPU; the runner's, valid while the set is open */
	const int *cpus;
	int ncpus;
};

/* Adds ops (static storage) to the registry; MONITOR_REGISTER calls it
 * before main. A name registered twice is kept once, and a name the
 * catalog lacks is left out; monitor_registry_errors reports both. */
void monitor_register(const struct monitor_ops *ops, const char *file, int line);
#define MONITOR_REGISTER(ops) \
	__attribute__((constructor)) static void monitor_register_##ops(void) \
	{ \
		monitor_register(&(ops), __FILE__, __LINE__); \
	}
/* The registry's errors ("FILE:LINE: monitor 'x' registered twice (first
 * at FILE:LINE)", "FILE:LINE: monitor 'x' has no row in the catalog", a
 * row of the catalog with no file here), or NULL when there are none: the
 * agent runs nothing then. Call it from main, once every file registered. */
const char *monitor_registry_errors(void);
/* The counter monitor called name (one with open), or NULL. */
const struct monitor_ops *monitor_lookup(const char *name);

struct monitor_set {
	struct monitor *m;
	size_t n;
	struct counter_set cs;
};

/* Opens every counter monitor in mask (monitor_bit), and those the catalog
 * says are always on.
 * cpus (ncpus of them; NULL, 0 for all) are the CPUs the workload runs on,
 * kept by the caller while the set is open. Monitors that fail are kept as
 * unavailable (their reason in cs.u); this never fails as a whole. */
void monitor_set_open(struct monitor_set *ms, unsigned mask, const int *cpus, int ncpus);
/* Reads every counter into vals (cs.n entries); with edges 0 (a sample),
 * those of edges_only monitors are left as they are. 0 or -1 with err. */
int monitor_set_read(struct monitor_set *ms, uint64_t *vals, int edges, struct strbuf *err);
void monitor_set_close(struct monitor_set *ms);


#endif
