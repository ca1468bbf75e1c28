/*
 * /proc/interrupts: the TLB row (shootdown IPIs received) and the CAL row
 * (function-call IPIs, which carry the flush requests on current kernels),
 * summed and per CPU. The row is re-read at every sample; the header fixes
 * which CPU each column belongs to.
 *
 * A kernel that makes its remote flushes by hypercall (PVM, Hyper-V) keeps
 * a TLB row that never moves: it is unavailable there, with the log line
 * that says so (monitor_pv_remote_flush).
 *
 * The kernel keeps these counts per CPU in an unsigned int, so a busy CPU's
 * count wraps at 2^32. The monitor keeps each CPU's previous raw count and
 * accumulates 64-bit totals from deltas taken modulo 2^32: every consumer
 * sees counters that only grow, and a sum over CPUs never goes backwards
 * when one of them wraps.
 */
#include "monitor.h"
#include "procparse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "banned.h"

#define IRQ_PATH "/proc/interrupts"
#define IRQ_MAX_BYTES (4u << 20)

static const char *const rows[] = { "TLB", "CAL" };

struct irq_priv {
	int ncols;
	int cpu_ids[PROC_MAX_CPUS];
	int present[2];
	uint64_t counts[PROC_MAX_CPUS];
	uint64_t *prev[2], *totals[2];	/* per row: raw counts last read, 64-bit totals */
	struct strbuf text;
};

static void irq_free(struct irq_priv *p)
{
	size_t r;

	for (r = 0; r < 2; r++) {
		free(p->prev[r]);
		free(p->totals[r]);
	}
	strbuf_release(&p->text);
	free(p);
}

static int irq_load(struct irq_priv *p, struct strbuf *err)
{
	int r;

	strbuf_reset(&p->text);
	r = strbuf_read_file(&p->text, IRQ_PATH, IRQ_MAX_BYTES);
	if (r < 0)
		return strbuf_seterr(err, "%s: %s", IRQ_PATH, strerror(-r));
	return 0;
}

static int irq_open(struct monitor *m, struct counter_set *cs, struct strbuf *err)
{
	struct irq_priv *p = xcalloc(1, sizeof(*p));
	char pv[200];
	int pv_flush = monitor_pv_remote_flush(pv, sizeof(pv));
	size_t r, i;

	strbuf_init(&p->text, 0);
	if (irq_load(p, err) < 0 ||
	    (p->ncols = procparse_irq_header(p->text.buf, p->cpu_ids, PROC_MAX_CPUS)) < 0) {
		if (!err->len)
			strbuf_seterr(err, "%s: no CPU header", IRQ_PATH);
		for (r = 0; r < 2; r++) {
			char name[64];

			snprintf(name, sizeof(name), "interrupts.%s", rows[r]);
			monitor_counter_set_unavailable(cs, name, "%s", err->buf);
		}
		irq_free(p);
		return -1;
	}
	for (r = 0; r < 2; r++) {
		char name[COUNTER_NAME_MAX];
		uint64_t sum;
		int e = procparse_irq_row(p->text.buf, rows[r], p->ncols, p->counts, &sum);

		snprintf(name, sizeof(name), "interrupts.%s", rows[r]);
		if (e == -ENOENT) {
#ifdef __aarch64__
			/* said where it is looked for: the TLB row is x86's */
			monitor_counter_set_unavailable(cs, name, "no %s row in %s: arm64 flushes TLBs with "
						"broadcast TLBI instructions, not IPIs", rows[r], IRQ_PATH);
#else
			monitor_counter_set_unavailable(cs, name, "no %s row in %s on this kernel",
						rows[r], IRQ_PATH);
#endif
			continue;
		}
		if (e < 0) {
			monitor_counter_set_unavailable(cs, name, "malformed %s row in %s",
						rows[r], IRQ_PATH);
			continue;
		}
		/* the row is there and stays still: a 0 that would pass for none */
		if (r == 0 && pv_flush) {
			monitor_counter_set_unavailable(cs, name, "%s", pv);
			continue;
		}
		p->present[r] = 1;
		p->prev[r] = xcalloc((size_t)p->ncols, sizeof(uint64_t));
		p->totals[r] = xcalloc((size_t)p->ncols, sizeof(uint64_t));
		memcpy(p->prev[r], p->counts, sizeof(uint64_t) * (size_t)p->ncols);
		memcpy(p->totals[r], p->counts, sizeof(uint64_t) * (size_t)p->ncols);
		monitor_counter_set_add(cs, name, "interrupts", DIR_LOWER, 0);
		for (i = 0; i < (size_t)p->ncols; i++) {
			snprintf(name, sizeof(name), "interrupts.%s.cpu%d", rows[r], p->cpu_ids[i]);
			monitor_counter_set_add(cs, name, "interrupts", DIR_NEUTRAL, 1);
		}
	}
	m->priv = p;
	return 0;
}

static int irq_read(struct monitor *m, uint64_t *vals, struct strbuf *err)
{
	struct irq_priv *p = m->priv;
	int ids[PROC_MAX_CPUS];
	size_t at = m->first, r;
	int i;

	if (irq_load(p, err) < 0)
		return -1;
	if (procparse_irq_header(p->text.buf, ids, PROC_MAX_CPUS) != p->ncols ||
	    memcmp(ids, p->cpu_ids, sizeof(int) * (size_t)p->ncols))
		return strbuf_seterr(err, "%s: the set of online CPUs changed", IRQ_PATH);
	for (r = 0; r < 2; r++) {
		uint64_t sum;

		if (!p->present[r])
			continue;
		if (procparse_irq_row(p->text.buf, rows[r], p->ncols, p->counts, &sum) < 0)
			return strbuf_seterr(err, "%s: %s row unreadable", IRQ_PATH, rows[r]);
		vals[at++] = procparse_irq_accumulate(p->prev[r], p->counts, p->totals[r], p->ncols);
		for (i = 0; i < p->ncols; i++)
			vals[at++] = p->totals[r][i];
	}
	return 0;
}

static void irq_close(struct monitor *m)
{
	struct irq_priv *p = m->priv;

	if (!p)
		return;
	irq_free(p);
	m->priv = NULL;
}

static const struct monitor_ops monitor_interrupts = {
	.name = "interrupts",
	.open = irq_open,
	.read = irq_read,
	.close = irq_close,
};
MONITOR_REGISTER(monitor_interrupts)
