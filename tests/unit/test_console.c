/*
 * daemon/console: what a kernel's console says about trouble. Console text
 * here is shaped as a 6.1 guest prints it over the serial line ("\r\n" line
 * ends, timestamps), an oops in an interrupt followed by its panic.
 */
#include "testlib.h"

#include "console.h"
#include "util.h"
#include "banned.h"

static const char oops_console[] =
	"[   13.901000] tlblab-agent[233]: run spec 2\r\n"
	"[   13.950112] mremap[240]: segfault at 7f0000000000 ip 0000000000401234 sp 00007ffd error 6\r\n"
	"[   14.080001] BUG: kernel NULL pointer dereference, address: 0000000000000008\r\n"
	"[   14.080100] #PF: supervisor read access in kernel mode\r\n"
	"[   14.080200] Oops: 0000 [#1] PREEMPT SMP NOPTI\r\n"
	"[   14.080300] Call Trace:\r\n"
	"[   14.080400]  <IRQ>\r\n"
	"[   14.080500]  ftrace_graph_caller+0x10/0x20\r\n"
	"[   14.089148] Kernel panic - not syncing: Fatal exception in interrupt\r\n"
	"[   14.089200] ---[ end Kernel panic - not syncing: Fatal exception in interrupt ]---\r\n";

/* A panic is 2; the marker lines, not the trace, are what scan lists. */
static void test_scan_panic(void **state)
{
	struct strbuf out = STRBUF_INIT;

	(void)state;
	assert_int_equal(console_scan(oops_console, &out, 20), 2);
	assert_non_null(strstr(out.buf, "segfault at"));
	assert_non_null(strstr(out.buf, "BUG: kernel NULL pointer"));
	assert_non_null(strstr(out.buf, "Fatal exception in interrupt"));
	assert_null(strstr(out.buf, "ftrace_graph_caller"));
	strbuf_release(&out);
}

/* The report starts at the kernel's first complaint, not at the process
 * it killed before, and carries the call trace through the panic. */
static void test_oops_report(void **state)
{
	struct strbuf out = STRBUF_INIT;

	(void)state;
	assert_int_equal(console_oops(oops_console, &out, 80), 8);
	assert_true(strncmp(out.buf, "[   14.080001] BUG: kernel NULL", 31) == 0);
	assert_null(strstr(out.buf, "segfault at"));
	assert_non_null(strstr(out.buf, "ftrace_graph_caller+0x10/0x20"));
	assert_non_null(strstr(out.buf, "end Kernel panic"));
	strbuf_reset(&out);
	assert_int_equal(console_oops(oops_console, &out, 3), 3);
	assert_non_null(strstr(out.buf, "#PF: supervisor read"));
	assert_null(strstr(out.buf, "Call Trace"));
	strbuf_release(&out);
}

/* Only a process died, or nothing happened: no kernel report. */
static void test_oops_none(void **state)
{
	struct strbuf out = STRBUF_INIT;

	(void)state;
	assert_int_equal(console_oops("[ 1.0] a[1]: segfault at 0 ip 0\n[ 1.1] Killed process 9\n", &out, 80), 0);
	assert_int_equal(out.len, 0);
	assert_int_equal(console_oops("", &out, 80), 0);
	assert_int_equal(console_scan("[ 1.0] all quiet\n", NULL, 0), 0);
	/* the last line need not end with a newline */
	assert_int_equal(console_oops("x\nKernel panic - not syncing: VFS", &out, 80), 1);
	assert_string_equal(out.buf, "Kernel panic - not syncing: VFS\n");
	strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_panic),
		cmocka_unit_test(test_oops_report),
		cmocka_unit_test(test_oops_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
