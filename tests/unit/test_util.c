/*
 * lib/strbuf and lib/util: the buffer every module builds text in
 * (never a NULL buf, a hard maximum size) and the whole-string number
 * parsers that stand between user input and every limit we check; and
 * lib/jsonget, how every binary reads a document's members.
 */
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>

#include "jsonget.h"
#include "util.h"
#include "web.h"
#include "banned.h"

/* ---- strbuf ---- */

static void test_strbuf_empty(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char *p;
	size_t len = 99;

	(void)state;
	/* printable before anything was added */
	assert_non_null(sb.buf);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	strbuf_trim(&sb);
	strbuf_setlen(&sb, 5);
	assert_int_equal(sb.len, 0);
	strbuf_release(&sb);
	strbuf_release(&sb);
	strbuf_release(NULL);
	/* detaching an empty buffer still gives the caller a string to free */
	p = strbuf_detach(&sb, &len);
	assert_non_null(p);
	assert_string_equal(p, "");
	assert_int_equal(len, 0);
	assert_ptr_not_equal(p, strbuf_empty);
	free(p);
}

static void test_strbuf_add(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char *p;
	size_t len, i;

	(void)state;
	assert_int_equal(strbuf_addstr(&sb, "TLB"), 0);
	assert_int_equal(strbuf_addch(&sb, ':'), 0);
	assert_int_equal(strbuf_add(&sb, " 12\0x", 5), 0);
	assert_int_equal(sb.len, 9);
	assert_memory_equal(sb.buf, "TLB: 12\0x", 10);
	assert_int_equal(strbuf_addf(&sb, "|%d|%s|%.2f|", -7, "cpu", 1.5), 0);
	assert_int_equal(sb.len, 9 + 13);
	assert_string_equal(sb.buf + 9, "|-7|cpu|1.50|");
	/* growth past several reallocations keeps the content */
	for (i = 0; i < 1000; i++)
		assert_int_equal(strbuf_addf(&sb, "%04zu", i), 0);
	assert_int_equal(sb.len, 22 + 4000);
	assert_memory_equal(sb.buf + 22, "000000010002", 12);
	assert_string_equal(sb.buf + sb.len - 4, "0999");
	assert_true(sb.alloc > sb.len);
	p = strbuf_detach(&sb, &len);
	assert_int_equal(len, 4022);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	free(p);
}

static void test_strbuf_setlen_reset(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	strbuf_addstr(&sb, "interrupts.TLB");
	strbuf_setlen(&sb, 10);
	assert_int_equal(sb.len, 10);
	assert_string_equal(sb.buf, "interrupts");
	/* never past what is allocated */
	strbuf_setlen(&sb, sb.alloc + 100);
	assert_true(sb.len < sb.alloc);
	assert_int_equal(sb.buf[sb.len], '\0');
	strbuf_reset(&sb);
	assert_int_equal(sb.len, 0);
	assert_string_equal(sb.buf, "");
	strbuf_addstr(&sb, "again");
	assert_string_equal(sb.buf, "again");
	strbuf_release(&sb);
}

static void test_strbuf_trim(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	strbuf_addstr(&sb, " \t\r\n 6.1.0-18-amd64 x\t \n");
	strbuf_trim(&sb);
	assert_string_equal(sb.buf, "6.1.0-18-amd64 x");
	assert_int_equal(sb.len, 16);
	strbuf_reset(&sb);
	strbuf_addstr(&sb, " \n\t ");
	strbuf_trim(&sb);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "clean");
	strbuf_trim(&sb);
	assert_string_equal(sb.buf, "clean");
	strbuf_release(&sb);
}

static void test_strbuf_max(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	sb.max = 8;
	assert_int_equal(strbuf_addstr(&sb, "12345678"), 0);
	/* one byte too many fails and leaves the buffer as it was */
	assert_int_equal(strbuf_addch(&sb, '9'), -ENOSPC);
	assert_int_equal(strbuf_addstr(&sb, "9"), -ENOSPC);
	assert_int_equal(strbuf_addf(&sb, "%d", 9), -ENOSPC);
	assert_int_equal(strbuf_grow(&sb, 1), -ENOSPC);
	assert_int_equal(sb.len, 8);
	assert_string_equal(sb.buf, "12345678");
	strbuf_setlen(&sb, 4);
	assert_int_equal(strbuf_addf(&sb, "%s", "abcd"), 0);
	assert_string_equal(sb.buf, "1234abcd");
	strbuf_release(&sb);

	/* a huge request cannot wrap len + extra around */
	sb.max = 0;
	strbuf_addstr(&sb, "x");
	assert_int_equal(strbuf_grow(&sb, (size_t)-1), -ENOSPC);
	assert_int_equal(strbuf_grow(&sb, STRBUF_DEFAULT_MAX), -ENOSPC);
	assert_string_equal(sb.buf, "x");
	strbuf_release(&sb);
}

static void test_strbuf_seterr(void **state)
{
	struct strbuf err = STRBUF_INIT;

	(void)state;
	strbuf_addstr(&err, "old message");
	assert_int_equal(strbuf_seterr(&err, "%s: must be an integer from %d to %d", "workers", 1, 1024), -1);
	assert_string_equal(err.buf, "workers: must be an integer from 1 to 1024");
	/* callers without an error buffer */
	assert_int_equal(strbuf_seterr(NULL, "ignored %d", 1), -1);
	strbuf_release(&err);
}

static void write_tmp(char *path, size_t pathlen, const char *data, size_t len)
{
	int fd;

	snprintf(path, pathlen, "%s/tlblab-test-util.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write_all(fd, data, len), 0);
	close(fd);
}

static void test_strbuf_read_file(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char path[4096], big[10000];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	write_tmp(path, sizeof(path), big, sizeof(big));

	/* appends to what is there */
	strbuf_addstr(&sb, ">>");
	assert_int_equal(strbuf_read_file(&sb, path, sizeof(big)), 0);
	assert_int_equal(sb.len, 2 + sizeof(big));
	assert_memory_equal(sb.buf + 2, big, sizeof(big));
	assert_int_equal(sb.buf[sb.len], '\0');

	/* larger than max: -EFBIG, and the buffer is as it was */
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "keep");
	assert_int_equal(strbuf_read_file(&sb, path, sizeof(big) - 1), -EFBIG);
	assert_string_equal(sb.buf, "keep");

	/* the buffer's own maximum holds too */
	strbuf_release(&sb);
	sb.max = 100;
	assert_int_equal(strbuf_read_file(&sb, path, 1u << 20), -EFBIG);
	assert_int_equal(sb.len, 0);
	sb.max = 0;
	unlink(path);

	assert_int_equal(strbuf_read_file(&sb, path, 100), -ENOENT);
	assert_int_equal(sb.len, 0);

	/* /proc files report size 0: read until EOF, not by stat */
	assert_int_equal(strbuf_read_file(&sb, "/proc/self/stat", 1u << 20), 0);
	assert_true(sb.len > 0);
	strbuf_release(&sb);

	write_tmp(path, sizeof(path), "", 0);
	assert_int_equal(strbuf_read_file(&sb, path, 100), 0);
	assert_int_equal(sb.len, 0);
	assert_string_equal(sb.buf, "");
	unlink(path);
	strbuf_release(&sb);
}

/* ---- number parsers ---- */

static void test_parse_u64(void **state)
{
	static const char *const bad[] = {
		"", " 1", "1 ", "-1", "+1", "0x10", "12a", "18446744073709551616", "1e3", "1.0",
	};
	uint64_t v = 0;
	size_t i;

	(void)state;
	assert_int_equal(parse_u64("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(parse_u64("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(parse_u64("18446744073709551615", &v), 0);
	assert_int_equal(v, UINT64_MAX);
	assert_int_equal(parse_u64("007", &v), 0);
	assert_int_equal(v, 7);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 42;
		errno = 1234;
		if (parse_u64(bad[i], &v) != -1)
			fail_msg("parse_u64 accepted \"%s\"", bad[i]);
		assert_int_equal(v, 42);
		assert_int_equal(errno, 1234);
	}
	assert_int_equal(parse_u64(NULL, &v), -1);
}

static void test_parse_int_range(void **state)
{
	long v = 0;

	(void)state;
	assert_int_equal(parse_int_range("1", 1, 1024, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(parse_int_range("1024", 1, 1024, &v), 0);
	assert_int_equal(v, 1024);
	assert_int_equal(parse_int_range("-5", -10, 10, &v), 0);
	assert_int_equal(v, -5);
	v = 77;
	assert_int_equal(parse_int_range("0", 1, 1024, &v), -1);
	assert_int_equal(parse_int_range("1025", 1, 1024, &v), -1);
	assert_int_equal(parse_int_range("", 1, 1024, &v), -1);
	assert_int_equal(parse_int_range("12x", 1, 1024, &v), -1);
	assert_int_equal(parse_int_range("2 ", 1, 1024, &v), -1);
	assert_int_equal(parse_int_range("99999999999999999999", 0, 1024, &v), -1);
	assert_int_equal(parse_int_range(NULL, 0, 1, &v), -1);
	assert_int_equal(v, 77);
}

static void test_parse_double(void **state)
{
	static const char *const bad[] = { "", "1.5s", "nan", "inf", "-inf", "1e999", "x", "1,5" };
	double v = 0;
	size_t i;

	(void)state;
	assert_int_equal(parse_double("0.5", &v), 0);
	assert_float_equal(v, 0.5, 0);
	assert_int_equal(parse_double("-2", &v), 0);
	assert_float_equal(v, -2, 0);
	assert_int_equal(parse_double("1e3", &v), 0);
	assert_float_equal(v, 1000, 0);
	assert_int_equal(parse_double("10", &v), 0);
	assert_float_equal(v, 10, 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 42;
		if (parse_double(bad[i], &v) != -1)
			fail_msg("parse_double accepted \"%s\"", bad[i]);
		assert_float_equal(v, 42, 0);
	}
	assert_int_equal(parse_double(NULL, &v), -1);
}

/* Names and user names share an alphabet; only what may come first and
 * the length differ (test_config holds names to the whole rule). */
static void test_word_valid(void **state)
{
	(void)state;
	assert_true(word_valid(".profile-user", 64, "-"));
	assert_false(name_valid(".profile-user"));
	assert_false(word_valid("-x", 64, "-"));
	assert_false(word_valid("abc", 2, ""));
	assert_true(word_valid("ab", 2, ""));
	assert_false(word_valid("a:b", 64, ""));
	assert_false(word_valid(NULL, 64, ""));
}

static void test_hex(void **state)
{
	const unsigned char b[] = { 0x00, 0x01, 0x7f, 0x80, 0xab, 0xff };
	char out[2 * sizeof(b) + 1];

	(void)state;
	memset(out, 'x', sizeof(out));
	assert_ptr_equal(hex_encode(b, sizeof(b), out), out);
	assert_string_equal(out, "00017f80abff");
	assert_true(hex_valid(out, 12));
	hex_encode(b, 0, out);
	assert_string_equal(out, "");

	assert_false(hex_valid("00017f80abff", 11));	/* longer than n */
	assert_false(hex_valid("00017f80abf", 12));	/* shorter */
	assert_false(hex_valid("00017F80abff", 12));	/* upper case is not ours */
	assert_false(hex_valid("00017g80abff", 12));
}

static void test_median(void **state)
{
	double odd[] = { 5, 1, 3 };
	double even[] = { 4, 1, 3, 2 };
	double one[] = { -7.5 };
	double same[] = { 2, 2, 2, 2, 2 };

	(void)state;
	assert_float_equal(median_inplace(odd, 3), 3, 0);
	/* sorted in place, ascending */
	assert_float_equal(odd[0], 1, 0);
	assert_float_equal(odd[2], 5, 0);
	assert_float_equal(median_inplace(even, 4), 2.5, 0);
	assert_float_equal(even[0], 1, 0);
	assert_float_equal(even[3], 4, 0);
	assert_float_equal(median_inplace(one, 1), -7.5, 0);
	assert_float_equal(median_inplace(same, 5), 2, 0);
	assert_true(isnan(median_inplace(NULL, 0)));
}

/* ---- web: which URL paths map to which dashboard files ---- */

/* each getter answers "absent" for a member of another type, a missing
 * key, a NULL key, a NULL or non-object document, and leaves *ret alone */
static void test_jsonget(void **state)
{
	json_t *doc = json_pack("{s:s,s:I,s:f,s:[i],s:n,s:{s:s}}", "s", "text", "i", (json_int_t)1 << 40,
				"r", 2.5, "a", 1, "z", "o", "in", "deep");
	json_t *arr = json_pack("[s]", "s");
	long long i = 7;
	double d = 7;

	(void)state;
	assert_non_null(doc);
	assert_string_equal(jsonget_str(doc, "s"), "text");
	assert_string_equal(jsonget_str(json_object_get(doc, "o"), "in"), "deep");
	assert_null(jsonget_str(doc, "i"));
	assert_null(jsonget_str(doc, "z"));
	assert_null(jsonget_str(doc, "missing"));
	assert_null(jsonget_str(doc, NULL));
	assert_null(jsonget_str(NULL, "s"));
	assert_null(jsonget_str(arr, "s"));

	assert_int_equal(jsonget_int(doc, "i", &i), 0);
	assert_true(i == 1LL << 40);
	i = 7;
	assert_int_equal(jsonget_int(doc, "r", &i), -1);	/* a real is not an integer */
	assert_int_equal(jsonget_int(doc, "s", &i), -1);
	assert_int_equal(jsonget_int(NULL, "i", &i), -1);
	assert_int_equal(i, 7);
	assert_true(jsonget_int_or(doc, "i", 0) == 1LL << 40);
	assert_int_equal(jsonget_int_or(doc, "r", -1), -1);
	assert_int_equal(jsonget_int_or(doc, "missing", 0), 0);
	assert_int_equal(jsonget_int_or(arr, "i", 3), 3);

	assert_int_equal(jsonget_num(doc, "r", &d), 0);
	assert_true(d == 2.5);
	assert_int_equal(jsonget_num(doc, "i", &d), 0);	/* an integer is a number */
	assert_true(d == (double)(1LL << 40));
	d = 7;
	assert_int_equal(jsonget_num(doc, "s", &d), -1);
	assert_int_equal(jsonget_num(doc, "z", &d), -1);
	assert_int_equal(jsonget_num(NULL, "r", &d), -1);
	assert_true(d == 7);
	assert_true(jsonget_num_or(doc, "r", 0) == 2.5);
	assert_true(isnan(jsonget_num_or(doc, "a", NAN)));

	assert_ptr_equal(jsonget_array(doc, "a"), json_object_get(doc, "a"));
	assert_null(jsonget_array(doc, "o"));
	assert_null(jsonget_array(doc, "missing"));
	assert_null(jsonget_array(NULL, "a"));
	json_decref(arr);
	json_decref(doc);
}

static void test_web_resolve(void **state)
{
	/* each URL path and the file it maps to in /w, or NULL: refused */
	static const struct {
		const char *url, *file;
	} cases[] = {
		{ "/app.js", "/w/app.js" },
		/* of node_modules/, only what the pages load (web/js/charts.js) */
		{ "/node_modules/uplot/dist/uPlot.esm.js", "/w/node_modules/uplot/dist/uPlot.esm.js" },
		{ "//node_modules/uplot/dist/uPlot.min.css", "/w/node_modules/uplot/dist/uPlot.min.css" },
		{ "/node_modules/uplot/dist/uPlot.iife.min.js", NULL },
		{ "/node_modules/uplot/package.json", NULL },
		{ "//node_modules/uplot/package.json", NULL },
		{ "/node_modules/.package-lock.json", NULL },
		/* nor what builds the dashboard */
		{ "/package.json", NULL },
		{ "/package-lock.json", NULL },
		{ "/js/package.json", NULL },
		/* pages of the app: stable URLs that all load index.html */
		{ "/", "/w/index.html" },
		{ "/jobs/12", "/w/index.html" },
		{ "/machines/", "/w/index.html" },
		/* never outside the directory, never a dotfile */
		{ "/../etc/passwd", NULL },
		{ "/a/../../x.js", NULL },
		{ "/.git/config", NULL },
		{ "/.env.js", NULL },
		{ "/js/.hidden.js", NULL },
		{ "/a//b.js", NULL },
		{ "/a b.js", NULL },
		{ "/%2e%2e/x.js", NULL },
		{ "relative.js", NULL },
	};
	char buf[256];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		int rc = web_resolve("/w", cases[i].url, buf, sizeof(buf));

		if (!cases[i].file) {
			if (rc != -1)
				fail_msg("%s: resolved to %s, expected refused", cases[i].url, buf);
			continue;
		}
		if (rc != 0)
			fail_msg("%s: refused (%d), expected %s", cases[i].url, rc, cases[i].file);
		assert_string_equal(buf, cases[i].file);
	}
	/* too long for the buffer */
	assert_int_equal(web_resolve("/w", "/0123456789.js", buf, 8), -1);
	assert_string_equal(web_content_type("/w/app.js"), "text/javascript; charset=utf-8");
	assert_string_equal(web_content_type("/w/index.html"), "text/html; charset=utf-8");
	assert_string_equal(web_content_type("/w/x.bin"), "application/octet-stream");
	assert_string_equal(web_content_type("/w.d/noext"), "application/octet-stream");
}

/* dir/rel, in a buffer of the caller's. */
static const char *in_dir(char *buf, size_t len, const char *dir, const char *rel)
{
	snprintf(buf, len, "%s/%s", dir, rel);
	return buf;
}

/* A symbolic link under web/ leads nowhere, in or out of it. */
static void test_web_open(void **state)
{
	/* what the test makes under dir, removed in reverse order */
	static const char *const made[] = { "js", "js/app.js", "js/link.js", "up", "inside.js" };
	char dir[] = "/tmp/tlblab-test-web-XXXXXX", path[512], outside[600];
	size_t i;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(mkdir(in_dir(path, sizeof(path), dir, "js"), 0755), 0);
	fd = open(in_dir(path, sizeof(path), dir, "js/app.js"), O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	close(fd);
	snprintf(outside, sizeof(outside), "%s.secret", dir);
	fd = open(outside, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(symlink(outside, in_dir(path, sizeof(path), dir, "js/link.js")), 0);
	assert_int_equal(symlink("/tmp", in_dir(path, sizeof(path), dir, "up")), 0);
	assert_int_equal(symlink("js/app.js", in_dir(path, sizeof(path), dir, "inside.js")), 0);

	fd = web_open(dir, in_dir(path, sizeof(path), dir, "js/app.js"));
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(web_open(dir, in_dir(path, sizeof(path), dir, "js/link.js")), -ELOOP);
	snprintf(path, sizeof(path), "%s/up/%s", dir, strrchr(outside, '/') + 1);
	assert_int_equal(web_open(dir, path), -ELOOP);
	assert_int_equal(web_open(dir, in_dir(path, sizeof(path), dir, "inside.js")), -ELOOP);
	assert_int_equal(web_open(dir, in_dir(path, sizeof(path), dir, "js/none.js")), -ENOENT);
	assert_int_equal(web_open(dir, "/etc/passwd"), -EINVAL);

	for (i = ARRAY_SIZE(made); i-- > 0;)
		remove(in_dir(path, sizeof(path), dir, made[i]));
	rmdir(dir);
	unlink(outside);
}

/* The JSON text writers give what jansson's encoder gives (api_server.c's
 * flags) for every ASCII byte, UTF-8, and reals across the range. */
static void test_json_text_as_jansson(void **state)
{
	static const double reals[] = { 0.0, -0.0, 1.0, -3.0, 0.5, 1e20, 1e-7, 1.5e300, -2.25e-10,
					 123456.789012345678, 1796095411.9371314, 1e12, 1e11, 99999999999.5,
					 4.9e-324, 1.7976931348623157e308 };
	struct strbuf sb = STRBUF_INIT;
	char s[2], *want;
	json_t *v;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(reals); i++) {
		v = json_real(reals[i]);
		want = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(12));
		strbuf_reset(&sb);
		strbuf_add_json_real(&sb, reals[i], 12);
		assert_string_equal(sb.buf, want);
		free(want);
		json_decref(v);
	}
	strbuf_reset(&sb);
	strbuf_add_json_real(&sb, NAN, 12);
	assert_string_equal(sb.buf, "null");
	for (i = 0; i < 128; i++) {
		s[0] = (char)i;
		v = json_stringn(s, 1);
		want = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		strbuf_reset(&sb);
		strbuf_add_json_string(&sb, s, 1);
		assert_string_equal(sb.buf, want);
		free(want);
		json_decref(v);
	}
	v = json_string("caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x90\xa7 \xe2\x80\xa8");
	want = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	strbuf_reset(&sb);
	strbuf_add_json_string(&sb, json_string_value(v), json_string_length(v));
	assert_string_equal(sb.buf, want);
	free(want);
	json_decref(v);
	/* not UTF-8 (jansson refuses it): U+FFFD for each bad byte */
	strbuf_reset(&sb);
	strbuf_add_json_string(&sb, "\xff" "a\xc3", 3);
	assert_string_equal(sb.buf, "\"\xef\xbf\xbd" "a\xef\xbf\xbd\"");
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strbuf_empty),
		cmocka_unit_test(test_json_text_as_jansson),
		cmocka_unit_test(test_strbuf_add),
		cmocka_unit_test(test_strbuf_setlen_reset),
		cmocka_unit_test(test_strbuf_trim),
		cmocka_unit_test(test_strbuf_max),
		cmocka_unit_test(test_strbuf_seterr),
		cmocka_unit_test(test_strbuf_read_file),
		cmocka_unit_test(test_parse_u64),
		cmocka_unit_test(test_parse_int_range),
		cmocka_unit_test(test_parse_double),
		cmocka_unit_test(test_word_valid),
		cmocka_unit_test(test_hex),
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_jsonget),
		cmocka_unit_test(test_web_resolve),
		cmocka_unit_test(test_web_open),
	};

	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
