#ifndef TLBLAB_FIXTURE_CONFIG_H
#define TLBLAB_FIXTURE_CONFIG_H

/*
 * What the tests of the configuration loader share (test_config*.c): the
 * loader as `tlblabd -n -c FILE` shows it, a configuration that must load
 * or the exact "FILE:LINE:COL: message" lines of one that must not.
 * Fixtures are written one YAML line per C line, with the line number in a
 * comment where a position is checked, so each can be checked by eye; the
 * openings most of them share are the macros below (LAB is line 1;
 * LAB_BLOCK, MACHINES and BUILDERS lines 1-2; SUITE_S lines 1-4;
 * LOCAL_MACHINE three lines).
 *
 * A file's loads that must fail with nothing but a fixed text are the rows
 * of its table `error_cases[]`, in the order of its tests; the loads whose
 * text is made at run time stay in their tests. Include after testlib.h.
 */

#include <unistd.h>

#include "config.h"
#include "util.h"

#define L(s) s "\n"

/* m's boot method setting key as the configuration writes it ("-":
 * unset; "?": no such setting), in a buffer the next call reuses. */
static inline const char *boot_set(const struct cfg_machine *m, const char *key)
{
	static struct strbuf sb = STRBUF_INIT;

	strbuf_reset(&sb);
	if (config_boot_setting(m, key, &sb) < 0)
		return "?";
	return sb.buf;
}

#define LAB		L("lab: {data_dir: /d}")
#define LAB_BLOCK	L("lab:") L("  data_dir: /d")	/* more keys of lab may follow */
#define MACHINES	LAB L("machines:")
#define BUILDERS	LAB L("builders:")
#define SUITE_S		LAB L("suites:") L("  - name: s") L("    workloads:")
/* The three lines that open a machine on the local transport booted by
 * boot, in block style, so its section and other keys can follow (lines
 * 3-5 when it is the first machine after MACHINES). */
#define LOCAL_MACHINE(name, boot)					\
	L("  - name: " name) L("    transport: local") L("    boot: " boot)

#define KEY1 "SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s"
#define KEY2 "SHA256:+/0123456789abcdefghijklmnopqrstuvwxyzABCDE="

/* The ends of the messages that several checks expect, word for word. */
#define MUST_BE_NAME							\
	"must be a name of 1 to 64 letters, digits, '.', '_' or '-', not starting with '-' or '.'"
#define MUST_BE_HOST "must be an IP address or a host name of letters, digits, '.' and '-'"
#define MUST_BE_PATH "must be a non-empty path without control characters, not starting with '-'"
#define MUST_BE_LISTEN							\
	"must be IPV4:PORT or [IPV6]:PORT (an IP literal and a port from 1 to 65535)"
#define MUST_BE_TOKEN "must be a token of 16 to 4096 printable characters without spaces"
#define MUST_BE_CMDLINE							\
	"must be a kernel command line of at most 1024 characters: words of letters, digits and " \
	"'._,=:/+-' separated by spaces"
#define MUST_BE_BINARY							\
	"must be a program name or an absolute path of letters, digits, '.', '_', '+', '-' and " \
	"'/', not starting with '-' or '.'"
#define MUST_BE_HOST_KEY "must be SHA256: followed by 43 base64 characters (as ssh-keygen -lf prints)"
#define MUST_BE_FETCH_ALLOW						\
	"must be an IP address, a CIDR (10.0.0.0/8, fd00::/8) or a host name of letters, digits, " \
	"'.' and '-'"
/* "must be a number from 1 to 604800 seconds, or one followed by ..." */
#define MUST_BE_SECONDS(range)						\
	"must be a number from " range " seconds, or one followed by ms, s, m or h like 500ms, " \
	"2s or 10m"
#define MUST_BE_BYTES(range)						\
	"must be a number of bytes from " range ": an integer, or one followed by K, M or G " \
	"(powers of 1024; KiB, MiB, GiB also) like 64K or 8M"
#define SECTIONS "(sections: lab, machines, builders, trees, suites, notify, tracks, defaults)"
#define EXAMPLE_TOKEN_MSG						\
	"it is the example token of configs/lab.example.yaml, known to everyone; make a token " \
	"of your own (e.g. head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \\n')"

/* Writes content to a new temporary file; returns its path (free it, unlink it). */
static inline char *temp_file(const char *content, size_t len)
{
	char *path = strdup("/tmp/tlblab-test-config-XXXXXX");
	int fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, len), (ssize_t)len);
	close(fd);
	return path;
}

static inline void temp_remove(char *path)
{
	unlink(path);
	free(path);
}

/* Loads text as `name` and expects failure with exactly `expected` in err. */
static inline void expect_errors(const char *name, const char *text, const char *expected)
{
	struct strbuf err = STRBUF_INIT;
	struct lab_config *cfg = NULL;

	if (config_load_string(name, text, strlen(text), &cfg, &err) == 0) {
		config_free(cfg);
		fail_msg("%s loaded, expected:\n%s", name, expected);
	}
	assert_null(cfg);
	assert_string_equal(err.buf, expected);
	strbuf_release(&err);
}

/* Loads text as `name`, which must load without a word in err. */
static inline struct lab_config *expect_ok(const char *name, const char *text)
{
	struct strbuf err = STRBUF_INIT;
	struct lab_config *cfg = NULL;

	if (config_load_string(name, text, strlen(text), &cfg, &err) < 0)
		fail_msg("%s did not load:\n%s", name, err.buf);
	assert_non_null(cfg);
	assert_int_equal(err.len, 0);
	strbuf_release(&err);
	return cfg;
}

/* A load that must fail with nothing but a fixed text. */
struct error_case {
	const char *test;	/* the test that runs it: its name without test_ */
	const char *name;	/* the file name the messages carry */
	const char *text;
	const char *expected;	/* the whole of err */
};

/* Loads each of the n rows whose test is `test`; there must be one. */
static inline void expect_rows_fail(const struct error_case *rows, size_t n, const char *test)
{
	size_t i, seen = 0;

	for (i = 0; i < n; i++) {
		if (strcmp(rows[i].test, test) != 0)
			continue;
		expect_errors(rows[i].name, rows[i].text, rows[i].expected);
		seen++;
	}
	if (!seen)
		fail_msg("no row of error_cases[] is of test_%s", test);
}

/* The rows of the file's error_cases[] for `test`. */
#define expect_table_errors(test) expect_rows_fail(error_cases, ARRAY_SIZE(error_cases), (test))

/*
 * A test that is nothing but its rows of error_cases[]: error_table_test(NAME)
 * in a file's list of tests is test_NAME, which runs the rows of NAME.
 */
struct error_table {
	const char *test;
	const struct error_case *rows;
	size_t n;
};

static inline void test_error_table(void **state)
{
	const struct error_table *t = *state;

	expect_rows_fail(t->rows, t->n, t->test);
}

#define error_table_test(name)						\
	{ "test_" #name, test_error_table, NULL, NULL,			\
	  &(struct error_table){ #name, error_cases, ARRAY_SIZE(error_cases) } }

/*
 * A test of one configuration that must load, then of its rows of
 * error_cases[]:
 *
 *	CONFIG_TEST(NAME, "n.yaml", TEXT)
 *	{
 *		assert ... of cfg
 *	}
 *
 * defines test_NAME, which loads TEXT as n.yaml, runs the body with the
 * result as `cfg`, frees it, and then expects each row of NAME to fail as
 * it says.
 */
#define CONFIG_TEST(test, file, text)					\
	static void check_##test(const struct lab_config *cfg);		\
	static void test_##test(void **state)				\
	{								\
		struct lab_config *cfg_ = expect_ok((file), (text));	\
									\
		(void)state;						\
		check_##test(cfg_);					\
		config_free(cfg_);					\
		expect_table_errors(#test);				\
	}								\
	static void check_##test(const struct lab_config *cfg)

#endif
