/*
 * The lab section of the configuration: where the daemon listens, its
 * limits on clients and tokens, what it may fetch, which Host headers it
 * answers, the example token it refuses, and its admin tokens.
 */
#include "testlib.h"

#include "fixture_config.h"
#include "banned.h"

static const struct error_case error_cases[] = {
	/* test_values */
	{ "values", "v.yaml",
	  LAB_BLOCK
	  L("  listen: localhost:8080"),
	  "v.yaml:3:11: listen: " MUST_BE_LISTEN },
	{ "values", "v.yaml",
	  L("lab: {data_dir: /d, listen: 127.0.0.1}"),
	  "v.yaml:1:29: listen: " MUST_BE_LISTEN },
	{ "values", "v.yaml",
	  L("lab: {data_dir: /d, listen: '127.0.0.1:0'}"),
	  "v.yaml:1:29: listen: " MUST_BE_LISTEN },
	{ "values", "v.yaml",
	  L("lab: {data_dir: /d, listen: '::1:80'}"),
	  "v.yaml:1:29: listen: " MUST_BE_LISTEN },
	{ "values", "v.yaml",
	  L("lab: {data_dir: /d, max_body: 1023, workers: 257, stage_timeout: 604801}"),
	  "v.yaml:1:31: max_body: " MUST_BE_BYTES("1K to 1G") "\n"
	  "v.yaml:1:46: workers: must be an integer from 1 to 256\n"
	  "v.yaml:1:66: stage_timeout: " MUST_BE_SECONDS("1 to 604800") },
	{ "values", "v.yaml",
	  L("lab: {data_dir: /d, read_requires_token: maybe, workers: [1], stage_timeout: nan}"),
	  "v.yaml:1:42: read_requires_token: must be true or false\n"
	  "v.yaml:1:58: workers: must be an integer from 1 to 256\n"
	  "v.yaml:1:78: stage_timeout: " MUST_BE_SECONDS("1 to 604800") },
	{ "values", "v.yaml",
	  L("lab: {data_dir: /d, max_body: 2G, stage_timeout: 8d}"),
	  "v.yaml:1:31: max_body: " MUST_BE_BYTES("1K to 1G") "\n"
	  "v.yaml:1:50: stage_timeout: " MUST_BE_SECONDS("1 to 604800") },
	/* inline tokens: at least 16 characters, never echoed */
	{ "values", "v.yaml",
	  LAB_BLOCK
	  L("  tokens: [0123456789abcdef, short-secret]"),
	  "v.yaml:3:30: tokens[1]: " MUST_BE_TOKEN },
	{ "values", "v.yaml",
	  L("lab: {data_dir: /d, tokens: 0123456789abcdef}"),
	  "v.yaml:1:29: tokens: must be a list, each item a token of 16 to 4096 printable "
	  "characters without spaces" },
	/* test_client_limits */
	{ "client_limits", "v.yaml",
	  L("lab: {data_dir: /d, max_connections_per_address: 0, header_timeout: 301,")
	  L("      max_jobs_per_token: 100001, max_boots_per_token: 0}"),
	  "v.yaml:1:50: max_connections_per_address: must be an integer from 1 to 512\n"
	  "v.yaml:1:69: header_timeout: " MUST_BE_SECONDS("1 to 300") "\n"
	  "v.yaml:2:27: max_jobs_per_token: must be an integer from 1 to 100000\n"
	  "v.yaml:2:56: max_boots_per_token: must be an integer from 1 to 1000000" },
	{ "client_limits", "v.yaml",
	  L("lab: {data_dir: /d, max_connections_per_address: 513, header_timeout: 0.5s}"),
	  "v.yaml:1:50: max_connections_per_address: must be an integer from 1 to 512\n"
	  "v.yaml:1:71: header_timeout: " MUST_BE_SECONDS("1 to 300") },
	/* test_fetch_allow */
	{ "fetch_allow", "f.yaml",
	  L("lab: {data_dir: /d, fetch_allow: [127.0.0.0/33, 'x y', '-h', 'fd00::/129', 1.2.3.4/]}"),
	  "f.yaml:1:35: fetch_allow[0]: " MUST_BE_FETCH_ALLOW "\n"
	  "f.yaml:1:49: fetch_allow[1]: " MUST_BE_FETCH_ALLOW "\n"
	  "f.yaml:1:56: fetch_allow[2]: " MUST_BE_FETCH_ALLOW "\n"
	  "f.yaml:1:62: fetch_allow[3]: " MUST_BE_FETCH_ALLOW "\n"
	  "f.yaml:1:76: fetch_allow[4]: " MUST_BE_FETCH_ALLOW },
	{ "fetch_allow", "f.yaml",
	  L("lab: {data_dir: /d, fetch_allow: 127.0.0.1}"),
	  "f.yaml:1:34: fetch_allow: must be a list, each item an IP address, a CIDR (10.0.0.0/8, "
	  "fd00::/8) or a host name of letters, digits, '.' and '-'" },
	/* test_example_token */
	{ "example_token", "ex.yaml",
	  LAB_BLOCK L("  tokens: [aaaaaaaaaaaaaaaa1, " CONFIG_EXAMPLE_TOKEN "]"),
	  "ex.yaml:3:31: tokens[1]: " EXAMPLE_TOKEN_MSG },
	/* test_admin_tokens */
	{ "admin_tokens", "a.yaml",
	  LAB_BLOCK L("  admin_tokens: [aaaaaaaaaaaaaaaa1, " CONFIG_EXAMPLE_TOKEN ", short]"),
	  "a.yaml:3:37: admin_tokens[1]: " EXAMPLE_TOKEN_MSG "\n"
	  "a.yaml:3:67: admin_tokens[2]: " MUST_BE_TOKEN },
	{ "admin_tokens", "a.yaml",
	  LAB_BLOCK L("  admin_tokens: aaaaaaaaaaaaaaaa1"),
	  "a.yaml:3:17: admin_tokens: must be a list, each item a token of 16 to 4096 printable "
	  "characters without spaces" },
	/* test_allowed_hosts */
	{ "allowed_hosts", "h.yaml",
	  LAB_BLOCK L("  allowed_hosts: [ok.example, \"bad name\", a/b]"),
	  "h.yaml:3:31: allowed_hosts[1]: " MUST_BE_HOST "\n"
	  "h.yaml:3:43: allowed_hosts[2]: " MUST_BE_HOST },
	{ "allowed_hosts", "h.yaml",
	  LAB_BLOCK L("  allowed_hosts: lab.example"),
	  "h.yaml:3:18: allowed_hosts: must be a list, each item an IP address or a host name of "
	  "letters, digits, '.' and '-'" },
};

static void test_values(void **state)
{
	struct lab_config *cfg;

	(void)state;
	/* listen forms */
	cfg = expect_ok("v.yaml", L("lab: {data_dir: /d, listen: '0.0.0.0:1'}"));
	assert_string_equal(cfg->listen_host, "0.0.0.0");
	assert_int_equal(cfg->listen_port, 1);
	config_free(cfg);
	cfg = expect_ok("v.yaml", L("lab: {data_dir: /d, listen: '[fe80::1]:65535'}"));
	assert_string_equal(cfg->listen_host, "fe80::1");
	assert_int_equal(cfg->listen_port, 65535);
	config_free(cfg);
	expect_table_errors("values");

	/* numeric ranges at their edges */
	cfg = expect_ok("v.yaml",
			L("lab: {data_dir: /d, max_body: 1073741824, workers: 256, stage_timeout: 604800}"));
	assert_int_equal(cfg->max_body, 1u << 30);
	assert_int_equal(cfg->workers, 256);
	config_free(cfg);
	/* the lab's sizes and times take the units suites take */
	cfg = expect_ok("v.yaml", L("lab: {data_dir: /d, max_body: 64K, stage_timeout: 45m}"));
	assert_int_equal(cfg->max_body, 64u << 10);
	assert_true(cfg->stage_timeout == 2700);
	config_free(cfg);
}

/* The limits on what one client or one token may hold of the daemon, at
 * both edges of each. */
static void test_client_limits(void **state)
{
	static const struct {
		const char *text;
		int connections;
		double header_timeout;
		int jobs, boots;
	} edges[] = {
		{ L("lab: {data_dir: /d, max_connections_per_address: 512, header_timeout: 2500ms,")
		  L("      max_jobs_per_token: 1, max_boots_per_token: 1000000}"), 512, 2.5, 1, 1000000 },
		{ L("lab: {data_dir: /d, max_connections_per_address: 1, header_timeout: 5m,")
		  L("      max_jobs_per_token: 100000, max_boots_per_token: 1}"), 1, 300, 100000, 1 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(edges); i++) {
		struct lab_config *cfg = expect_ok("v.yaml", edges[i].text);

		assert_int_equal(cfg->max_connections_per_address, edges[i].connections);
		assert_true(cfg->header_timeout == edges[i].header_timeout);
		assert_int_equal(cfg->max_jobs_per_token, edges[i].jobs);
		assert_int_equal(cfg->max_boots_per_token, edges[i].boots);
		config_free(cfg);
	}
	expect_table_errors("client_limits");
}

static void test_fetch_allow(void **state)
{
	struct lab_config *cfg;

	(void)state;
	cfg = expect_ok("f.yaml", L("lab: {data_dir: /d}"));
	assert_null(cfg->fetch_allow);
	config_free(cfg);
	cfg = expect_ok("f.yaml", L("lab: {data_dir: /d, fetch_allow: [127.0.0.0/8, '::1', 'fd00::/8', 10.1.2.3,")
				  L("      lore.lab.internal]}"));
	assert_non_null(cfg->fetch_allow);
	assert_string_equal(cfg->fetch_allow[0], "127.0.0.0/8");
	assert_string_equal(cfg->fetch_allow[1], "::1");
	assert_string_equal(cfg->fetch_allow[2], "fd00::/8");
	assert_string_equal(cfg->fetch_allow[3], "10.1.2.3");
	assert_string_equal(cfg->fetch_allow[4], "lore.lab.internal");
	assert_null(cfg->fetch_allow[5]);
	config_free(cfg);
	expect_table_errors("fetch_allow");
}

/* The token everyone has read in configs/lab.example.yaml opens nothing:
 * refused inline and in a token file, at its line. */
static void test_example_token(void **state)
{
	static const char file_text[] = "# tokens\n" "ffffffffffffffff6\n" "  " CONFIG_EXAMPLE_TOKEN "  \n";
	char *path = temp_file(file_text, strlen(file_text));
	struct strbuf text = STRBUF_INIT, want = STRBUF_INIT;
	struct lab_config *cfg;

	(void)state;
	expect_table_errors("example_token");
	strbuf_addf(&text, LAB_BLOCK L("  token_file: %s"), path);
	strbuf_addf(&want, "ex.yaml:3:15: token_file: %s:3: " EXAMPLE_TOKEN_MSG, path);
	expect_errors("ex.yaml", text.buf, want.buf);
	/* a token that merely starts like it is the operator's own */
	cfg = expect_ok("ex.yaml", LAB_BLOCK
			L("  tokens: [" CONFIG_EXAMPLE_TOKEN "-but-mine]"));
	assert_int_equal(cfg->ntokens, 1);
	config_free(cfg);
	strbuf_release(&text);
	strbuf_release(&want);
	temp_remove(path);
}

/* Admin tokens, inline and from their own file, apart from the tokens
 * (whose file's go to the tokens); counted by -n, never shown; the example
 * token refused in an admin token file too. */
static void test_admin_tokens(void **state)
{
	static const char admins[] = "# the lab's operators\n" "dddddddddddddddd4\n";
	static const char users[] = "eeeeeeeeeeeeeeee5\n";
	static const char example[] = "ffffffffffffffff6\n" CONFIG_EXAMPLE_TOKEN "\n";
	char *apath = temp_file(admins, strlen(admins)), *upath = temp_file(users, strlen(users));
	char *epath = temp_file(example, strlen(example));
	struct strbuf text = STRBUF_INIT, want = STRBUF_INIT;
	struct lab_config *cfg;
	char *printed = NULL;
	size_t plen = 0;
	FILE *out;

	(void)state;
	strbuf_addf(&text, LAB_BLOCK L("  tokens: [aaaaaaaaaaaaaaaa1]") L("  token_file: %s")
		    L("  admin_tokens: [bbbbbbbbbbbbbbbb2, cccccccccccccccc3]") L("  admin_token_file: %s"), upath, apath);
	cfg = expect_ok("a.yaml", text.buf);
	assert_int_equal(cfg->ntokens, 2);
	assert_string_equal(cfg->tokens[0], "aaaaaaaaaaaaaaaa1");
	assert_string_equal(cfg->tokens[1], "eeeeeeeeeeeeeeee5");
	assert_null(cfg->tokens[2]);
	assert_string_equal(cfg->admin_tokens[0], "bbbbbbbbbbbbbbbb2");
	assert_string_equal(cfg->admin_tokens[1], "cccccccccccccccc3");
	assert_string_equal(cfg->admin_tokens[2], "dddddddddddddddd4");
	assert_null(cfg->admin_tokens[3]);
	assert_string_equal(cfg->admin_token_file, apath);
	out = open_memstream(&printed, &plen);
	assert_non_null(out);
	config_lab_print(out, cfg);
	fclose(out);
	assert_non_null(strstr(printed, "lab.tokens: 2 token(s)\n"));
	assert_non_null(strstr(printed, "lab.admin_tokens: 3 token(s)\n"));
	assert_null(strstr(printed, "bbbbbbbbbbbbbbbb2"));
	free(printed);
	config_free(cfg);

	cfg = expect_ok("a.yaml", LAB_BLOCK L("  tokens: [aaaaaaaaaaaaaaaa1]"));
	assert_non_null(cfg->admin_tokens);
	assert_null(cfg->admin_tokens[0]);
	config_free(cfg);

	strbuf_reset(&text);
	strbuf_addf(&text, LAB_BLOCK L("  admin_token_file: %s"), epath);
	strbuf_addf(&want, "a.yaml:3:21: admin_token_file: %s:2: " EXAMPLE_TOKEN_MSG, epath);
	expect_errors("a.yaml", text.buf, want.buf);
	expect_table_errors("admin_tokens");
	strbuf_release(&text);
	strbuf_release(&want);
	temp_remove(apath);
	temp_remove(upath);
	temp_remove(epath);
}

/* Which Host headers the API answers (DNS rebinding: a name of the
 * attacker's resolving to 127.0.0.1 must not reach the lab). */
struct host_case {
	const char *host;	/* NULL: HTTP/1.0 without Host */
	int allowed;
};

static void assert_hosts(const struct lab_config *cfg, const struct host_case *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!!config_host_allowed(cfg, c[i].host) != c[i].allowed)
			fail_msg("Host: %s is %s, expected %s", c[i].host ? c[i].host : "(none)",
				 c[i].allowed ? "refused" : "allowed", c[i].allowed ? "allowed" : "refused");
}

static void test_allowed_hosts(void **state)
{
	static const struct host_case local[] = {
		{ "127.0.0.5:8080", 1 }, { "127.0.0.5", 1 }, { "localhost:8080", 1 },
		{ "LocalHost", 1 }, { "localhost.:8080", 1 }, { "127.0.0.1:8080", 1 },
		{ "[::1]:8080", 1 }, { NULL, 1 },
		{ "evil.example", 0 }, { "evil.example:8080", 0 }, { "localhost.evil.example", 0 },
		{ "127.0.0.1.evil.example", 0 }, { "localhost:8080@evil.example", 0 },
		{ "localhost:", 0 }, { "[::1", 0 }, { "[::1]x", 0 }, { "", 0 }, { ":8080", 0 },
	};
	static const struct host_case listed[] = {
		{ "tlblab.example.org", 1 }, { "TLBLAB.example.org:443", 1 }, { "192.0.2.7:8080", 1 },
		{ "[2001:db8::7]:8080", 1 }, { "[::]:8080", 1 },
		{ "example.org", 0 }, { "192.0.2.8", 0 },
	};
	struct lab_config *cfg;

	(void)state;
	cfg = expect_ok("h.yaml", LAB_BLOCK L("  listen: 127.0.0.5:8080"));
	assert_null(cfg->allowed_hosts);
	assert_hosts(cfg, local, ARRAY_SIZE(local));
	config_free(cfg);

	cfg = expect_ok("h.yaml", LAB_BLOCK L("  listen: \"[::]:8080\"")
			L("  allowed_hosts: [tlblab.example.org, 192.0.2.7, \"2001:db8::7\"]"));
	assert_hosts(cfg, listed, ARRAY_SIZE(listed));
	config_free(cfg);

	expect_table_errors("allowed_hosts");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_client_limits),
		cmocka_unit_test(test_fetch_allow),
		cmocka_unit_test(test_example_token),
		cmocka_unit_test(test_allowed_hosts),
		cmocka_unit_test(test_admin_tokens),
	};

	return cmocka_run_group_tests_name("config_lab", tests, NULL, NULL);
}
