/*
 * /proc/vmstat: the TLB flush event counters. They exist only when the kernel
 * has CONFIG_DEBUG_TLBFLUSH (and VM_EVENT_COUNTERS); a kernel without them
 * gets each one reported as unavailable with that reason.
 */
#include "monitor.h"
#include "procparse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "banned.h"

#define VMSTAT_PATH "/proc/vmstat"

static const char *const names[] = {
	"nr_tlb_remote_flush",
	"nr_tlb_remote_flush_received",
	"nr_tlb_local_flush_one",
	"nr_tlb_local_flush_all",
};
#define NNAMES (sizeof(names) / sizeof(names[0]))

struct vmstat_priv {
	int present[NNAMES];
	struct strbuf text;
};

static int vmstat_open(struct monitor *m, struct counter_set *cs, struct strbuf *err)
{
	struct vmstat_priv *p = xcalloc(1, sizeof(*p));
	size_t i, found = 0;
	char pv[200];
	int r, pv_flush = monitor_pv_remote_flush(pv, sizeof(pv));

	strbuf_init(&p->text, 0);
	r = strbuf_read_file(&p->text, VMSTAT_PATH, 1u << 20);
	for (i = 0; i < NNAMES; i++) {
		char name[COUNTER_NAME_MAX];
		uint64_t v;
		int e = r < 0 ? r : procparse_vmstat(p->text.buf, names[i], &v);

		snprintf(name, sizeof(name), "vmstat.%s", names[i]);
		if (r < 0)
			monitor_counter_set_unavailable(cs, name, "%s: %s", VMSTAT_PATH, strerror(-r));
		else if (e == -ENOENT)
#ifdef __aarch64__
			monitor_counter_set_unavailable(cs, name, "not in %s: the nr_tlb_* counters are x86's "
						"(CONFIG_DEBUG_TLBFLUSH)", VMSTAT_PATH);
#else
			monitor_counter_set_unavailable(cs, name, "not in %s (kernel built without CONFIG_DEBUG_TLBFLUSH)",
						VMSTAT_PATH);
#endif
		else if (e < 0)
			monitor_counter_set_unavailable(cs, name, "malformed row in %s", VMSTAT_PATH);
		else if (pv_flush && !strcmp(names[i], "nr_tlb_remote_flush_received"))
			monitor_counter_set_unavailable(cs, name, "%s", pv);
		else {
			p->present[i] = 1;
			monitor_counter_set_add(cs, name, "events", DIR_LOWER, 0);
			found++;
		}
	}
	if (!found) {
		strbuf_seterr(err, "%s: no TLB counters", VMSTAT_PATH);
		strbuf_release(&p->text);
		free(p);
		return -1;
	}
	m->priv = p;
	return 0;
}

static int vmstat_read(struct monitor *m, uint64_t *vals, struct strbuf *err)
{
	struct vmstat_priv *p = m->priv;
	size_t i, at = m->first;
	int r;

	strbuf_reset(&p->text);
	r = strbuf_read_file(&p->text, VMSTAT_PATH, 1u << 20);
	if (r < 0)
		return strbuf_seterr(err, "%s: %s", VMSTAT_PATH, strerror(-r));
	for (i = 0; i < NNAMES; i++) {
		if (!p->present[i])
			continue;
		if (procparse_vmstat(p->text.buf, names[i], &vals[at++]) < 0)
			return strbuf_seterr(err, "%s: %s unreadable", VMSTAT_PATH, names[i]);
	}
	return 0;
}

static void vmstat_close(struct monitor *m)
{
	struct vmstat_priv *p = m->priv;

	if (!p)
		return;
	strbuf_release(&p->text);
	free(p);
	m->priv = NULL;
}

static const struct monitor_ops monitor_vmstat = {
	.name = "vmstat",
	.open = vmstat_open,
	.read = vmstat_read,
	.close = vmstat_close,
};
MONITOR_REGISTER(monitor_vmstat)
