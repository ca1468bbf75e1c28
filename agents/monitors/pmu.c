/*
 * The CPU's own counters: instructions in kernel and in user mode, dTLB and
 * iTLB load misses, per window, on the workload's CPUs (pmu.h says why
 * system-wide and which CPUs). Opened whatever the spec's monitors say:
 * they are the work rows of a real machine, as the QEMU plugin's are of an
 * emulated one, and a suite does not opt into its headline. Counting costs
 * nothing measurable (no sampling, no interrupt short of an overflow).
 */
#include "monitor.h"
#include "pmu.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "banned.h"

#define SYSFS_PMUS "/sys/bus/event_source/devices"

#define CACHE(c) ((c) | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16))

static const struct pmu_def {
	uint32_t type;
	uint64_t config;
	int exclude_user, exclude_kernel;
	const char *unit;
	const char *perf_name;		/* as perf stat -e spells it */
	const char *arm64_event;	/* the PMUv3 event the arm64 kernel maps it to */
} defs[PMU_EVENT_MAX] = {
	[PMU_INSN_KERNEL] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1, 0, "instructions",
			      "instructions:k", "inst_retired" },
	[PMU_INSN_USER] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 0, 1, "instructions",
			    "instructions:u", "inst_retired" },
	[PMU_DTLB_MISS] = { PERF_TYPE_HW_CACHE, CACHE(PERF_COUNT_HW_CACHE_DTLB), 0, 0, "misses",
			    "dTLB-load-misses", "l1d_tlb_refill" },
	[PMU_ITLB_MISS] = { PERF_TYPE_HW_CACHE, CACHE(PERF_COUNT_HW_CACHE_ITLB), 0, 0, "misses",
			    "iTLB-load-misses", "l1i_tlb_refill" },
};

void pmu_open_error(int err, int paranoid, int have_pmu, char *why, size_t len)
{
	char level[32] = "";

	if (paranoid > -1000)
		snprintf(level, sizeof(level), " (it is %d)", paranoid);
	switch (err) {
	case ENOENT:
		snprintf(why, len, "perf_event_open: %s: %s", strerror(err),
			 have_pmu ? "this PMU has no such event"
				  : "the kernel has no hardware PMU (a VM without a vPMU?)");
		break;
	case EOPNOTSUPP:
		snprintf(why, len, "perf_event_open: %s: the PMU cannot count this event in one mode apart",
			 strerror(err));
		break;
	case EACCES:
	case EPERM:
		snprintf(why, len, "perf_event_open: %s: counting all of a CPU needs root, CAP_PERFMON or "
			 "kernel.perf_event_paranoid <= 0%s", strerror(err), level);
		break;
	case ENOSYS:
		snprintf(why, len, "perf_event_open: %s: no CONFIG_PERF_EVENTS", strerror(err));
		break;
	default:
		snprintf(why, len, "perf_event_open: %s", strerror(err));
		break;
	}
}

/* Calls fn for each PMU under sysfs_devices that lists its events; stops
 * at the first that returns 1. Returns that 1, or 0. */
static int each_pmu(const char *sysfs_devices, int (*fn)(const char *dir, void *), void *arg)
{
	DIR *d = opendir(sysfs_devices);
	struct dirent *de;
	int r = 0;

	if (!d)
		return 0;
	while (!r && (de = readdir(d))) {
		char path[512];

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/events", sysfs_devices, de->d_name);
		r = fn(path, arg);
	}
	closedir(d);
	return r;
}

static int has_event(const char *events_dir, const char *name)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", events_dir, name);
	return access(path, F_OK) == 0;
}

/* a CPU PMU: x86's "cpu" (or a hybrid's cpu_core) lists instructions,
 * an arm64 PMUv3 cpu_cycles */
static int is_cpu_pmu(const char *events_dir, void *arg)
{
	(void)arg;
	return has_event(events_dir, "instructions") || has_event(events_dir, "cpu_cycles");
}

int pmu_hw_present(const char *sysfs_devices)
{
	return each_pmu(sysfs_devices, is_cpu_pmu, NULL);
}

struct lacks {
	const char *event;
	int pmuv3, has;
};

static int pmuv3_has(const char *events_dir, void *arg)
{
	struct lacks *l = arg;

	if (!has_event(events_dir, "cpu_cycles"))
		return 0;
	l->pmuv3 = 1;
	l->has = has_event(events_dir, l->event);
	return l->has;
}

int pmu_account(struct pmu_fd_state *st, const uint64_t buf[3], ssize_t n, uint64_t now_ns,
		uint64_t *ret_lost_ns)
{
	if (n == 0) {
		/* end of file: a pinned event in error state; it counts no more */
		if (!st->failed) {
			st->failed = 1;
			st->failed_at_ns = now_ns;
		}
		/* grows from then on, by at least 1: a window that ends with the
		 * event failed has lost time */
		*ret_lost_ns += st->lost_ns + (now_ns - st->failed_at_ns) + 1;
		return 0;
	}
	if (n != (ssize_t)(3 * sizeof(uint64_t)))
		return -1;
	if (buf[0] >= st->value)
		st->value = buf[0];
	if (buf[1] > buf[2] && buf[1] - buf[2] > st->lost_ns)
		st->lost_ns = buf[1] - buf[2];
	*ret_lost_ns += st->lost_ns;
	return 0;
}

int pmu_arm64_lacks(const char *sysfs_devices, enum pmu_event e, const char **ret_name)
{
	struct lacks l = { defs[e].arm64_event, 0, 0 };

	*ret_name = l.event;
	each_pmu(sysfs_devices, pmuv3_has, &l);
	return l.pmuv3 && !l.has;
}

struct pmu_priv {
	int ncpu;
	int *cpu;			/* the CPUs counted */
	int nev;			/* events opened, in the order registered */
	int *fds[PMU_EVENT_MAX];	/* per event, one per CPU; -1 offline */
	struct pmu_fd_state *st[PMU_EVENT_MAX];
};

static int paranoid_level(void)
{
	struct strbuf sb = STRBUF_INIT;
	long v = -1000;

	if (strbuf_read_file(&sb, "/proc/sys/kernel/perf_event_paranoid", 64) == 0) {
		strbuf_trim(&sb);
		if (parse_int_range(sb.buf, -1000, 1000, &v) < 0)
			v = -1000;
	}
	strbuf_release(&sb);
	return (int)v;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Opens event e on every CPU of p; 0, or a positive errno (the first CPU's
 * that is not an offline one's) with nothing left open. */
static int open_on_cpus(struct pmu_priv *p, int slot, enum pmu_event e)
{
	struct perf_event_attr attr;
	int c, opened = 0, first_err = 0;

	memset(&attr, 0, sizeof(attr));
	attr.type = defs[e].type;
	attr.size = sizeof(attr);
	attr.config = defs[e].config;
	attr.exclude_user = (unsigned)defs[e].exclude_user;
	attr.exclude_kernel = (unsigned)defs[e].exclude_kernel;
	/* as perf's :k and :u: a hypervisor's instructions are not the kernel's */
	attr.exclude_hv = 1;
	attr.pinned = 1;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	p->fds[slot] = xcalloc((size_t)p->ncpu, sizeof(int));
	p->st[slot] = xcalloc((size_t)p->ncpu, sizeof(struct pmu_fd_state));
	for (c = 0; c < p->ncpu; c++) {
		int fd = (int)syscall(SYS_perf_event_open, &attr, -1, p->cpu[c], -1, PERF_FLAG_FD_CLOEXEC);

		p->fds[slot][c] = fd;
		if (fd < 0) {
			if (!first_err && errno != ENODEV)
				first_err = errno;
			continue;
		}
		opened++;
	}
	if (!opened || first_err) {
		for (c = 0; c < p->ncpu; c++)
			if (p->fds[slot][c] >= 0)
				close(p->fds[slot][c]);
		free(p->fds[slot]);
		free(p->st[slot]);
		p->fds[slot] = NULL;
		p->st[slot] = NULL;
		return first_err ? first_err : ENODEV;
	}
	return 0;
}

static int pmu_open(struct monitor *m, struct counter_set *cs, struct strbuf *err)
{
	struct pmu_priv *p = xcalloc(1, sizeof(*p));
	int paranoid = paranoid_level(), have_pmu = pmu_hw_present(SYSFS_PMUS), e, c;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	/* the workload's CPUs, or every CPU when the runner says none */
	p->ncpu = m->ncpus > 0 ? m->ncpus : ncpu > 0 ? (int)ncpu : 1;
	p->cpu = xcalloc((size_t)p->ncpu, sizeof(int));
	for (c = 0; c < p->ncpu; c++)
		p->cpu[c] = m->ncpus > 0 ? m->cpus[c] : c;
	for (e = 0; e < PMU_EVENT_MAX; e++) {
		const char *arm_name;
		char why[200];
		int r;

		r = open_on_cpus(p, p->nev, (enum pmu_event)e);
		if (r) {
			pmu_open_error(r, paranoid, have_pmu, why, sizeof(why));
#ifdef __aarch64__
			/* say which PMUv3 event: QEMU's TCG PMU has INST_RETIRED
			 * only under icount, no TLB refill (docs/emulated-work.md) */
			if (r == ENOENT && pmu_arm64_lacks(SYSFS_PMUS, (enum pmu_event)e, &arm_name))
				snprintf(why, sizeof(why), "perf_event_open: %s: the PMU lacks PMUv3 event %s "
					 "(not in PMCEID)", strerror(r), arm_name);
#else
			(void)arm_name;
#endif
			monitor_counter_set_unavailable(cs, pmu_counter_names[e], "%s: %s", defs[e].perf_name, why);
			continue;
		}
		cs->c[monitor_counter_set_add(cs, pmu_counter_names[e], defs[e].unit, DIR_LOWER, 0)].raw_only = 1;
		p->nev++;
	}
	if (!p->nev) {
		free(p->cpu);
		free(p);
		return strbuf_seterr(err, "no PMU event could be opened");
	}
	cs->c[monitor_counter_set_add(cs, PMU_UNSCHEDULED, "ns", DIR_NEUTRAL, 0)].raw_only = 1;
	m->priv = p;
	return 0;
}

static int pmu_read(struct monitor *m, uint64_t *vals, struct strbuf *err)
{
	struct pmu_priv *p = m->priv;
	uint64_t lost = 0, t = now_ns();
	int e, c;

	for (e = 0; e < p->nev; e++) {
		uint64_t sum = 0;

		for (c = 0; c < p->ncpu; c++) {
			uint64_t buf[3] = { 0, 0, 0 };
			ssize_t n;

			if (p->fds[e][c] < 0)
				continue;
			n = read(p->fds[e][c], buf, sizeof(buf));
			if (pmu_account(&p->st[e][c], buf, n, t, &lost) < 0)
				return strbuf_seterr(err, "reading a PMU counter: %s",
						     n < 0 ? strerror(errno) : "short read");
			sum += p->st[e][c].value;
		}
		vals[m->first + (size_t)e] = sum;
	}
	vals[m->first + (size_t)p->nev] = lost;
	return 0;
}

static void pmu_close(struct monitor *m)
{
	struct pmu_priv *p = m->priv;
	int e, c;

	if (!p)
		return;
	for (e = 0; e < p->nev; e++) {
		for (c = 0; c < p->ncpu; c++)
			if (p->fds[e][c] >= 0)
				close(p->fds[e][c]);
		free(p->fds[e]);
		free(p->st[e]);
	}
	free(p->cpu);
	free(p);
	m->priv = NULL;
}

static const struct monitor_ops monitor_pmu = {
	.name = "pmu",
	.edges_only = 1,
	.open = pmu_open,
	.read = pmu_read,
	.close = pmu_close,
};
MONITOR_REGISTER(monitor_pmu)
