/*
 * lib/log: what reaches the daemon's log from outside (a machine-health
 * reason, a host's error text) cannot forge a line or drive a terminal.
 * The log functions write to stderr; each test points stderr at a file and
 * reads back exactly what an operator would see.
 */
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "log.h"
#include "banned.h"

static char log_path[] = "/tmp/tlblab-test-log-XXXXXX";
static int saved_stderr = -1;

/* stderr to a fresh file, until logged() */
static void capture_start(void)
{
	int fd;

	memcpy(log_path + sizeof(log_path) - 7, "XXXXXX", 6);
	fd = mkstemp(log_path);
	assert_true(fd >= 0);
	fflush(stderr);
	saved_stderr = dup(STDERR_FILENO);
	assert_true(saved_stderr >= 0);
	assert_true(dup2(fd, STDERR_FILENO) >= 0);
	close(fd);
}

/* What was logged since capture_start, with each line's timestamp cut. */
static void logged(struct strbuf *out)
{
	struct strbuf raw = STRBUF_INIT;
	size_t pos = 0;

	fflush(stderr);
	assert_true(dup2(saved_stderr, STDERR_FILENO) >= 0);
	close(saved_stderr);
	assert_int_equal(strbuf_read_file(&raw, log_path, 1 << 20) >= 0, 1);
	unlink(log_path);
	while (pos < raw.len) {
		const char *line = raw.buf + pos, *nl = memchr(line, '\n', raw.len - pos);
		const char *sp = memchr(line, ' ', nl ? (size_t)(nl - line) : raw.len - pos);

		assert_non_null(nl);	/* every line ends */
		assert_non_null(sp);	/* after "YYYY-MM-DDTHH:MM:SSZ " */
		assert_int_equal(sp - line, 20);
		strbuf_add(out, sp + 1, (size_t)(nl - sp));
		pos = (size_t)(nl - raw.buf) + 1;
	}
	strbuf_release(&raw);
}

static void test_log_one_line(void **state)
{
	struct strbuf out = STRBUF_INIT;

	(void)state;
	capture_start();
	/* a reason as POST /machines/m1/health takes it */
	log_info("machine %s: %s (%s)", "m1", "maintenance",
		 "disk\n2030-01-01T00:00:00Z tlblabd: job 1: done\r\x1b[2J");
	log_warnx("tab\there, bell\a, del\x7f, \x01 and \x1f; unicode \xc3\xa9 kept");
	errno = ENOENT;
	log_warn("open %s", "a\nb");
	logged(&out);
	assert_string_equal(out.buf,
			    "tlblabd: machine m1: maintenance (disk\\n2030-01-01T00:00:00Z tlblabd: "
			    "job 1: done\\r\\x1b[2J)\n"
			    "tlblabd: warning: tab\\there, bell\\x07, del\\x7f, \\x01 and \\x1f; "
			    "unicode \xc3\xa9 kept\n"
			    "tlblabd: warning: open a\\nb: No such file or directory\n");
	strbuf_release(&out);
}

static void test_log_escape(void **state)
{
	struct strbuf out = STRBUF_INIT;
	static const char in[] = "a\0b\nc\\d";

	(void)state;
	/* a NUL inside the given length is a byte like the others */
	log_escape(&out, in, sizeof(in) - 1);
	assert_string_equal(out.buf, "a\\x00b\\nc\\d");
	strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log_one_line),
		cmocka_unit_test(test_log_escape),
	};

	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
