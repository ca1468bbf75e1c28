/*
 * The agent's PMU counters (agents/monitors/pmu.c) on recorded reads and on
 * sysfs trees of machines we do not have: a counter's reads add up, a
 * multiplexed or failed (pinned, error state) event shows as lost time and
 * never as a lower count; an event the machine cannot count says why
 * (ENOENT with and without a PMU, EOPNOTSUPP, EACCES with the paranoid
 * level), in a sentence that fits the agent's 200 bytes; an arm64 PMUv3
 * without INST_RETIRED (QEMU TCG without icount) or TLB refills is named
 * as such (the kernel refuses those events with ENOENT).
 */
#include "testlib.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "monitor.h"
#include "pmu.h"
#include "util.h"
#include "banned.h"

static void test_account_counts(void **state)
{
	struct pmu_fd_state st = { 0 };
	uint64_t a[3] = { 1000, 5000, 5000 }, b[3] = { 251000, 9000, 9000 }, lost = 0;

	(void)state;
	assert_int_equal(pmu_account(&st, a, sizeof(a), 1, &lost), 0);
	assert_int_equal(st.value, 1000);
	assert_int_equal(lost, 0);
	assert_int_equal(pmu_account(&st, b, sizeof(b), 2, &lost), 0);
	assert_int_equal(st.value, 251000);
	assert_int_equal(lost, 0);
}

/* enabled > running: the event shared its counter; the time shows, and a
 * window over it has lost time to show */
static void test_account_multiplexed(void **state)
{
	struct pmu_fd_state st = { 0 };
	uint64_t a[3] = { 1000, 5000, 5000 }, b[3] = { 3000, 9000, 7000 }, l0 = 0, l1 = 0;

	(void)state;
	assert_int_equal(pmu_account(&st, a, sizeof(a), 1, &l0), 0);
	assert_int_equal(pmu_account(&st, b, sizeof(b), 2, &l1), 0);
	assert_int_equal(l1 - l0, 2000);
	assert_int_equal(st.value, 3000);
}

/* read() returns 0: a pinned event lost its counter. The count stays the
 * last one (never falls, so no delta wraps), the lost time grows */
static void test_account_error_state(void **state)
{
	struct pmu_fd_state st = { 0 };
	uint64_t a[3] = { 7000, 5000, 4000 }, none[3] = { 0, 0, 0 }, l0 = 0, l1 = 0, l2 = 0;

	(void)state;
	assert_int_equal(pmu_account(&st, a, sizeof(a), 100, &l0), 0);
	assert_int_equal(l0, 1000);
	assert_int_equal(pmu_account(&st, none, 0, 200, &l1), 0);
	assert_int_equal(st.value, 7000);
	assert_true(st.failed);
	assert_true(l1 > l0);
	assert_int_equal(pmu_account(&st, none, 0, 700, &l2), 0);
	assert_int_equal(l2 - l1, 500);
	assert_int_equal(st.value, 7000);
}

static void test_account_bad_reads(void **state)
{
	struct pmu_fd_state st = { 0 };
	uint64_t a[3] = { 1, 2, 2 }, lost = 0;

	(void)state;
	assert_int_equal(pmu_account(&st, a, 8, 1, &lost), -1);
	assert_int_equal(pmu_account(&st, a, -1, 1, &lost), -1);
	assert_int_equal(st.value, 0);
}

static void test_open_errors(void **state)
{
	static const struct { int err, paranoid, have_pmu; const char *says; } cases[] = {
		{ ENOENT, 2, 0, "no hardware PMU" },
		{ ENOENT, 2, 1, "this PMU has no such event" },
		{ EOPNOTSUPP, 2, 1, "cannot count this event in one mode" },
		{ EACCES, 2, 1, "perf_event_paranoid <= 0 (it is 2)" },
		{ EPERM, -1000, 1, "CAP_PERFMON" },
		{ ENOSYS, 2, 0, "CONFIG_PERF_EVENTS" },
		{ EINVAL, 2, 1, "Invalid argument" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char why[200], longer[400];

		pmu_open_error(cases[i].err, cases[i].paranoid, cases[i].have_pmu, why, sizeof(why));
		assert_contains(why, "perf_event_open: ");
		assert_contains(why, strerror(cases[i].err));
		assert_contains(why, cases[i].says);
		/* the agent keeps 199 bytes of a reason, with the event's name
		 * ("iTLB-load-misses: ") before it: nothing may be cut */
		pmu_open_error(cases[i].err, cases[i].paranoid, cases[i].have_pmu, longer, sizeof(longer));
		assert_true(strlen(longer) + strlen("iTLB-load-misses: ") < 200);
	}
	{
		/* a paranoid level it could not read is not made up */
		char why[200];

		pmu_open_error(EPERM, -1000, 1, why, sizeof(why));
		assert_null(strstr(why, "it is"));
	}
}

static void test_counter_names(void **state)
{
	int e;

	(void)state;
	for (e = 0; e < PMU_EVENT_MAX; e++) {
		assert_non_null(pmu_counter_names[e]);
		assert_true(!strncmp(pmu_counter_names[e], "perf_stat.", 10));
	}
	assert_string_equal(pmu_counter_names[PMU_INSN_KERNEL], "perf_stat.instructions_k");
	assert_string_equal(pmu_counter_names[PMU_INSN_USER], "perf_stat.instructions_u");
}

/* a fake /sys/bus/event_source/devices in a temporary directory */
struct tree {
	char root[64];
};

static void touch(struct tree *t, const char *rel)
{
	char path[512], dir[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", t->root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = strchr(dir + strlen(t->root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = 0;
		mkdir(dir, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("event=0x08\n", f);
	fclose(f);
}

static int tree_setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));

	snprintf(t->root, sizeof(t->root), "/tmp/tlblab-pmu-XXXXXX");
	if (!mkdtemp(t->root))
		return -1;
	*state = t;
	return 0;
}

static int tree_teardown(void **state)
{
	struct tree *t = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->root);
	if (system(cmd) != 0)
		return -1;
	free(t);
	return 0;
}

/* this lab's own host: only software PMUs */
static void test_sysfs_vm_without_vpmu(void **state)
{
	struct tree *t = *state;
	const char *name;
	int e;

	touch(t, "software/events/.keep");
	touch(t, "tracepoint/type");
	touch(t, "breakpoint/type");
	assert_int_equal(pmu_hw_present(t->root), 0);
	for (e = 0; e < PMU_EVENT_MAX; e++)
		assert_int_equal(pmu_arm64_lacks(t->root, (enum pmu_event)e, &name), 0);
	assert_int_equal(pmu_hw_present("/nonexistent/tlblab"), 0);
}

static void test_sysfs_x86(void **state)
{
	struct tree *t = *state;
	const char *name;

	touch(t, "software/events/.keep");
	touch(t, "cpu/events/instructions");
	touch(t, "cpu/events/cpu-cycles");
	assert_int_equal(pmu_hw_present(t->root), 1);
	assert_int_equal(pmu_arm64_lacks(t->root, PMU_INSN_KERNEL, &name), 0);
}

/* QEMU TCG without icount: PMCEID has CPU_CYCLES, not INST_RETIRED, and
 * no TLB refill event; with icount shift=N it has INST_RETIRED */
static void test_sysfs_arm64_tcg(void **state)
{
	struct tree *t = *state;
	const char *name = NULL;

	touch(t, "armv8_pmuv3_0/events/cpu_cycles");
	touch(t, "armv8_pmuv3_0/events/sw_incr");
	assert_int_equal(pmu_hw_present(t->root), 1);
	assert_int_equal(pmu_arm64_lacks(t->root, PMU_INSN_KERNEL, &name), 1);
	assert_string_equal(name, "inst_retired");
	assert_int_equal(pmu_arm64_lacks(t->root, PMU_INSN_USER, &name), 1);
	assert_int_equal(pmu_arm64_lacks(t->root, PMU_DTLB_MISS, &name), 1);
	assert_string_equal(name, "l1d_tlb_refill");
	assert_int_equal(pmu_arm64_lacks(t->root, PMU_ITLB_MISS, &name), 1);
	assert_string_equal(name, "l1i_tlb_refill");
	touch(t, "armv8_pmuv3_0/events/inst_retired");
	assert_int_equal(pmu_arm64_lacks(t->root, PMU_INSN_KERNEL, &name), 0);
	assert_int_equal(pmu_arm64_lacks(t->root, PMU_DTLB_MISS, &name), 1);
}

/* The PMU's counters are read at a window's edges only: a sample's read
 * of another CPU's counter would send it an IPI inside the window */
static int fake_reads;

static int fake_read(struct monitor *m, uint64_t *vals, struct strbuf *err)
{
	(void)err;
	vals[m->first] = (uint64_t)++fake_reads;
	return 0;
}

static void test_edges_only(void **state)
{
	static const struct monitor_ops edges = { .name = "fake", .edges_only = 1, .read = fake_read };
	struct monitor mon = { .ops = &edges, .first = 0, .count = 1 };
	struct monitor_set ms;
	struct strbuf err = STRBUF_INIT;
	uint64_t v = 7;

	(void)state;
	memset(&ms, 0, sizeof(ms));
	ms.m = &mon;
	ms.n = 1;
	assert_int_equal(monitor_set_read(&ms, &v, 0, &err), 0);
	assert_int_equal(v, 7);
	assert_int_equal(fake_reads, 0);
	assert_int_equal(monitor_set_read(&ms, &v, 1, &err), 0);
	assert_int_equal(v, 1);
	assert_non_null(monitor_lookup("pmu"));
	assert_true(monitor_lookup("pmu")->edges_only && (monitor_def_lookup("pmu")->flags & MONITOR_ALWAYS));
	strbuf_release(&err);
}

/* A test on a sysfs tree of its own (tree_setup), removed after it. */
#define sysfs_test(t) cmocka_unit_test_setup_teardown(t, tree_setup, tree_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_account_counts),
		cmocka_unit_test(test_account_multiplexed),
		cmocka_unit_test(test_account_error_state),
		cmocka_unit_test(test_account_bad_reads),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_counter_names),
		cmocka_unit_test(test_edges_only),
		sysfs_test(test_sysfs_vm_without_vpmu),
		sysfs_test(test_sysfs_x86),
		sysfs_test(test_sysfs_arm64_tcg),
	};

	return cmocka_run_group_tests_name("pmu", tests, NULL, NULL);
}
