/*
 * daemon/arch: the lab's architectures by either name, and a tree's
 * fragment paths that name the arch.
 */
#include "testlib.h"

#include <stdlib.h>

#include "arch.h"
#include "banned.h"

static void test_lookup(void **state)
{
	(void)state;
	assert_string_equal(arch_lookup("x86_64")->image, "bzImage");
	assert_string_equal(arch_lookup("arm64")->image, "Image");
	/* uname -m's name is the same arch */
	assert_ptr_equal(arch_lookup("aarch64"), arch_lookup("arm64"));
	assert_string_equal(arch_lookup("arm64")->console, "ttyAMA0");
	assert_null(arch_lookup("arm"));
	assert_null(arch_lookup(NULL));
	assert_string_equal(arch_get("riscv64")->name, "x86_64");
	assert_int_equal(arch_index(arch_get(NULL)), 0);
	assert_ptr_equal(arch_at(arch_index(arch_lookup("arm64"))), arch_lookup("arm64"));
	assert_null(arch_at(ARCH_MAX));
}

static void test_expand(void **state)
{
	char *p;

	(void)state;
	p = arch_expand("kernels/fragments/qemu-{arch}.config", arch_lookup("arm64"));
	assert_string_equal(p, "kernels/fragments/qemu-arm64.config");
	free(p);
	p = arch_expand("{arch}/{arch}", arch_lookup("x86_64"));
	assert_string_equal(p, "x86_64/x86_64");
	free(p);
	p = arch_expand("/plain/{ar}ch}.config", arch_lookup("arm64"));
	assert_string_equal(p, "/plain/{ar}ch}.config");
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_expand),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
