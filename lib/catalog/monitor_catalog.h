#ifndef TLBLAB_MONITOR_CATALOG_H
#define TLBLAB_MONITOR_CATALOG_H

#include <stddef.h>

/*
 * The monitors' catalog: each monitor a spec may name is one row (name,
 * flags, what it counts) of the table in monitor_catalog.c, and nothing
 * else describes it. The spec parser (spec.h) takes the names of a spec's
 * monitors list from it and keeps them as a mask of bits; the daemon learns
 * the same names from it (it checks suites with that parser), and the
 * agent binds each row by name to the file that reads the kernel
 * (agents/monitors/NAME.c, MONITOR_REGISTER), refusing to run when a row
 * has no implementation or an implementation no row.
 *
 * A monitor's bit is its rank in name order among the rows, not its place
 * in the table, so every binary that reads this table agrees on the bits
 * whatever the order its lines were added in. A mask never leaves the
 * process that made it: each side turns names into bits itself.
 */

enum monitor_flag {
	/* a spec that names no monitors gets it: the /proc readers, read once
	 * per interval, cost nothing measurable; the tracepoint counters are
	 * opt-in (every tlb_flush event runs one filter per reason and CPU,
	 * which costs an mprotect-bound workload several percent) */
	MONITOR_DEFAULT_ON = 1 << 0,
	/* opened whatever the spec's monitors list, so a spec cannot name it
	 * and it has no bit (the PMU's work counters) */
	MONITOR_ALWAYS = 1 << 1,
};

#define MONITOR_CATALOG_MAX 32	/* the bits of an unsigned mask */

struct monitor_def {
	const char *name;
	unsigned flags;		/* enum monitor_flag */
	const char *what;	/* what it counts, for help texts */
	int line;		/* its line in monitor_catalog.c, for the errors */
};

/* The rows, in the table's order (ndefs of them). */
extern const struct monitor_def monitor_defs[];
extern const size_t monitor_ndefs;

/* The row of name, or NULL. */
const struct monitor_def *monitor_def_lookup(const char *name);
/* "interrupts, procstat, ...": the names a spec may list, in name order,
 * for messages. */
const char *monitor_names(void);
/* Bit for a monitor name a spec may list, or 0 if unknown or always on. */
unsigned monitor_bit(const char *name);
/* The monitors a spec gets when it names none (MONITOR_DEFAULT_ON). */
unsigned monitor_default_mask(void);
/* What is wrong with the table ("monitor 'x' listed twice", more than
 * MONITOR_CATALOG_MAX rows), or NULL: the spec parser then reads no spec. */
const char *monitor_catalog_errors(void);

#endif
