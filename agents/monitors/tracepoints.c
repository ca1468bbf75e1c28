/*
 * Kernel events counted with perf_event_open, no perf binary needed:
 *
 *  - the tlb:tlb_flush tracepoint, one counter per flush reason. The reasons
 *    and their numbers come from the tracepoint's own format file, so a
 *    kernel that adds a reason (6.x added "remote wrong CPU") is counted
 *    without a change here. Each (reason, CPU) pair is one counting event
 *    with a "reason == N" filter: counting in the kernel costs far less than
 *    streaming every event to user space.
 *  - context switches and page faults, as software events.
 *
 * All events are system-wide (pid -1), one per online CPU, which needs root
 * or perf_event_paranoid <= -1 (the agent runs as root on lab machines).
 */
#include "monitor.h"
#include "procparse.h"

#include <ctype.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "util.h"
#include "banned.h"

#define MAX_REASONS 16

struct tp_event {
	int *fds;	/* one per CPU slot, -1 where the CPU is offline */
};

struct tp_priv {
	int ncpu;
	size_t nevents;
	struct tp_event ev[MAX_REASONS + 2];
};

static int perf_open(struct perf_event_attr *attr, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

#ifndef __aarch64__
static const char *const tracefs_dirs[] = {
	"/sys/kernel/tracing",
	"/sys/kernel/debug/tracing",
};

/* Finds tlb/tlb_flush in tracefs, mounting tracefs once if we may. */
static int find_tlb_flush(struct strbuf *dir)
{
	size_t i;
	int tried_mount = 0;

again:
	for (i = 0; i < ARRAY_SIZE(tracefs_dirs); i++) {
		strbuf_reset(dir);
		strbuf_addf(dir, "%s/events/tlb/tlb_flush", tracefs_dirs[i]);
		if (access(dir->buf, R_OK) == 0)
			return 0;
	}
	if (!tried_mount && geteuid() == 0 &&
	    access("/sys/kernel/tracing/events", F_OK) < 0 &&
	    access("/sys/kernel/tracing", F_OK) == 0) {
		tried_mount = 1;
		if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0)
			goto again;
	}
	return -1;
}
#endif

/* Why the tlb_flush.* counters cannot be had here (dir: the tracepoint's
 * directory when they can), or NULL. */
static const char *tlb_flush_unavailable(struct strbuf *dir)
{
#ifdef __aarch64__
	/* tracefs has tlb:tlb_flush on arm64 too, but only x86's flush code
	 * emits it: counted, it would read 0 whatever the kernel flushed */
	(void)dir;
	return "tlb:tlb_flush is emitted by x86's flush code only; arm64 flushes with broadcast TLBI "
	       "instructions, which no tracepoint counts";
#else
	return find_tlb_flush(dir) < 0 ? "no tlb/tlb_flush tracepoint in tracefs (needs CONFIG_TRACEPOINTS and tracefs)"
				       : NULL;
#endif
}

static void close_events(struct tp_priv *p)
{
	size_t e;
	int c;

	for (e = 0; e < p->nevents; e++) {
		for (c = 0; c < p->ncpu; c++)
			if (p->ev[e].fds[c] >= 0)
				close(p->ev[e].fds[c]);
		free(p->ev[e].fds);
	}
	p->nevents = 0;
}

/* Opens one counting event on every online CPU. -errno of the first CPU. */
static int open_event(struct tp_priv *p, struct perf_event_attr *attr, const char *filter)
{
	struct tp_event *ev = &p->ev[p->nevents];
	int c, opened = 0, first_err = 0;

	ev->fds = xmalloc(sizeof(int) * (size_t)p->ncpu);
	for (c = 0; c < p->ncpu; c++) {
		int fd = perf_open(attr, c);

		ev->fds[c] = fd;
		if (fd < 0) {
			if (!first_err && errno != ENODEV)
				first_err = -errno;
			continue;
		}
		if (filter && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0) {
			if (!first_err)
				first_err = -errno;
			close(fd);
			ev->fds[c] = -1;
			continue;
		}
		opened++;
	}
	if (!opened || first_err) {
		for (c = 0; c < p->ncpu; c++)
			if (ev->fds[c] >= 0)
				close(ev->fds[c]);
		free(ev->fds);
		return first_err ? first_err : -ENODEV;
	}
	p->nevents++;
	return 0;
}

static const char *perf_hint(int e)
{
	if (e == -EACCES || e == -EPERM)
		return " (needs root or kernel.perf_event_paranoid <= -1)";
	if (e == -ENOENT || e == -ENOSYS)
		return " (kernel built without CONFIG_PERF_EVENTS?)";
	return "";
}

static int tp_open(struct monitor *m, struct counter_set *cs, struct strbuf *err)
{
	struct tp_priv *p = xcalloc(1, sizeof(*p));
	struct strbuf dir = STRBUF_INIT, text = STRBUF_INIT;
	const char *why;
	char rnames[MAX_REASONS][48];
	int rids[MAX_REASONS], nr = 0, i;
	uint64_t tp_id = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	char pv[200];
	int pv_flush = monitor_pv_remote_flush(pv, sizeof(pv));
	static const struct { const char *name; const char *unit; uint64_t config; } sw[] = {
		{ "perf_stat.context_switches", "switches", PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "perf_stat.page_faults", "faults", PERF_COUNT_SW_PAGE_FAULTS },
	};

	p->ncpu = ncpu > 0 ? (int)ncpu : 1;

	if ((why = tlb_flush_unavailable(&dir))) {
		monitor_counter_set_unavailable(cs, "tlb_flush.*", "%s", why);
	} else {
		size_t dlen = dir.len;

		strbuf_addstr(&dir, "/id");
		if (strbuf_read_file(&text, dir.buf, 64) < 0 ||
		    (strbuf_trim(&text), parse_u64(text.buf, &tp_id) < 0)) {
			monitor_counter_set_unavailable(cs, "tlb_flush.*", "%s unreadable", dir.buf);
			tp_id = 0;
		}
		strbuf_setlen(&dir, dlen);
		strbuf_addstr(&dir, "/format");
		strbuf_reset(&text);
		if (tp_id && strbuf_read_file(&text, dir.buf, 1u << 16) == 0)
			nr = procparse_tlb_flush_reasons(text.buf, rids, rnames, MAX_REASONS);
		if (tp_id && !nr)
			monitor_counter_set_unavailable(cs, "tlb_flush.*", "%s: no reason table", dir.buf);
	}
	for (i = 0; i < nr; i++) {
		struct perf_event_attr attr = { 0 };
		char filter[32], name[COUNTER_NAME_MAX];
		int e;

		attr.type = PERF_TYPE_TRACEPOINT;
		attr.size = sizeof(attr);
		attr.config = tp_id;
		snprintf(filter, sizeof(filter), "reason == %d", rids[i]);
		snprintf(name, sizeof(name), "tlb_flush.%.47s", rnames[i]);
		/* traced by the CPU that receives a flush: none does */
		if (pv_flush && (!strcmp(rnames[i], "remote_shootdown") || !strcmp(rnames[i], "remote_wrong_cpu"))) {
			monitor_counter_set_unavailable(cs, name, "%s", pv);
			continue;
		}
		e = open_event(p, &attr, filter);
		if (e < 0)
			monitor_counter_set_unavailable(cs, name, "perf_event_open: %s%s", strerror(-e), perf_hint(e));
		else
			monitor_counter_set_add(cs, name, "events", DIR_LOWER, 0);
	}
	for (i = 0; i < (int)ARRAY_SIZE(sw); i++) {
		struct perf_event_attr attr = { 0 };
		int e;

		attr.type = PERF_TYPE_SOFTWARE;
		attr.size = sizeof(attr);
		attr.config = sw[i].config;
		e = open_event(p, &attr, NULL);
		if (e < 0)
			monitor_counter_set_unavailable(cs, sw[i].name, "perf_event_open: %s%s", strerror(-e), perf_hint(e));
		else
			monitor_counter_set_add(cs, sw[i].name, sw[i].unit, DIR_NEUTRAL, 0);
	}
	strbuf_release(&dir);
	strbuf_release(&text);
	if (!p->nevents) {
		free(p);
		return strbuf_seterr(err, "no perf events could be opened");
	}
	m->priv = p;
	return 0;
}

static int tp_read(struct monitor *m, uint64_t *vals, struct strbuf *err)
{
	struct tp_priv *p = m->priv;
	size_t e;
	int c;

	for (e = 0; e < p->nevents; e++) {
		uint64_t sum = 0;

		for (c = 0; c < p->ncpu; c++) {
			uint64_t v;

			if (p->ev[e].fds[c] < 0)
				continue;
			if (read(p->ev[e].fds[c], &v, sizeof(v)) != (ssize_t)sizeof(v))
				return strbuf_seterr(err, "reading a perf counter: %s", strerror(errno));
			sum += v;
		}
		vals[m->first + e] = sum;
	}
	return 0;
}

static void tp_close(struct monitor *m)
{
	struct tp_priv *p = m->priv;

	if (!p)
		return;
	close_events(p);
	free(p);
	m->priv = NULL;
}

static const struct monitor_ops monitor_tracepoints = {
	.name = "tracepoints",
	.open = tp_open,
	.read = tp_read,
	.close = tp_close,
};
MONITOR_REGISTER(monitor_tracepoints)
