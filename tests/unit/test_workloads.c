/*
 * The agent's side of the catalog (lib/catalog/): every row of the
 * workloads' and the monitors' tables has its code in this agent, bound
 * by name, and no code is without its row (the agent refuses to run
 * otherwise). Also fault-write's page order, which must never visit a page
 * twice.
 */
#include "testlib.h"

#include "monitors/monitor.h"
#include "workloads/workload.h"
#include "util.h"
#include "banned.h"

static void test_bindings(void **state)
{
	const struct workload_def *d;
	size_t i;

	(void)state;
	assert_null(workload_impl_errors());
	assert_null(monitor_registry_errors());
	for (i = 0; (d = workload_def_at(i)) != NULL; i++) {
		assert_non_null(workload_impl(d));
		assert_string_equal(workload_impl(d)->name, d->name);
		assert_non_null(workload_impl(d)->run);
	}
	assert_null(workload_impl(NULL));
	/* a monitor with code to open has it; profile's work is the runner's */
	for (i = 0; i < monitor_ndefs; i++)
		if (strcmp(monitor_defs[i].name, "profile"))
			assert_non_null(monitor_lookup(monitor_defs[i].name));
	assert_null(monitor_lookup("profile"));
}

static void test_fault_write_pages(void **state)
{
	static const uint64_t sizes[] = { 1, 2, 3, 7, 512, 1000, 4096, 65537 };
	unsigned char *seen;
	size_t k;
	uint64_t r, same = 0;

	(void)state;
	for (k = 0; k < ARRAY_SIZE(sizes); k++) {
		uint64_t n = sizes[k];

		seen = calloc(n, 1);
		assert_non_null(seen);
		for (r = 0; r < n; r++) {
			uint64_t page = fault_write_page(r, n, 0x1234 + k);

			if (page >= n || seen[page])
				fail_msg("npages %llu: round %llu gives page %llu, %s",
					 (unsigned long long)n, (unsigned long long)r, (unsigned long long)page,
					 page >= n ? "out of range" : "already written");
			seen[page] = 1;
		}
		free(seen);
	}
	/* not the identity, and the seed changes the order */
	for (r = 0; r < 1000; r++)
		same += fault_write_page(r, 1000, 1) == r;
	assert_true(same < 100);
	same = 0;
	for (r = 0; r < 1000; r++)
		same += fault_write_page(r, 1000, 1) == fault_write_page(r, 1000, 2);
	assert_true(same < 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bindings),
		cmocka_unit_test(test_fault_write_pages),
	};

	return cmocka_run_group_tests_name("workloads", tests, NULL, NULL);
}
