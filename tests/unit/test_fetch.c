/*
 * daemon/fetch (what a patch URL may reach) and the branch URL grammar
 * that the API (util.c url_valid) shares with kernels/build/args.sh, read from
 * tests/fixtures/branch-urls.txt, which t0033 feeds to build.sh too; and
 * how the API shows a URL to a reader without a token (util.c util_url_redact).
 */
#include "testlib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fetch.h"
#include "util.h"
#include "banned.h"

static void test_branch_urls(void **state)
{
	FILE *f = fopen("tests/fixtures/branch-urls.txt", "r");
	char line[4096];
	int ok = 0, bad = 0;

	(void)state;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		if (!strncmp(line, "ok ", 3)) {
			if (!url_valid(line + 3, 1))
				fail_msg("url_valid refuses the branch URL '%s'", line + 3);
			ok++;
		} else if (!strncmp(line, "bad ", 4)) {
			if (url_valid(line + 4, 1))
				fail_msg("url_valid takes the branch URL '%s'", line + 4);
			bad++;
		}
	}
	fclose(f);
	assert_true(ok > 3 && bad > 5);
	/* patch URLs keep http:// (fetch.h judges the host) */
	assert_true(url_valid("http://lore.kernel.org/all/x/raw", 0));
	assert_false(url_valid("git://lore.kernel.org/all/x/raw", 0));
}

static int allowed(const char *addr, const char *host, char *const *allow, const char *why_has)
{
	struct sockaddr_storage ss;
	struct strbuf why = STRBUF_INIT;
	int r;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, addr, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		ss.ss_family = AF_INET;
	} else {
		assert_int_equal(inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)&ss)->sin6_addr), 1);
		ss.ss_family = AF_INET6;
	}
	r = fetch_addr_allowed((struct sockaddr *)&ss, host, allow, &why);
	if (!r && why_has)
		assert_contains(why.buf, why_has);
	strbuf_release(&why);
	return r;
}

static void test_addresses(void **state)
{
	char *none[] = { NULL };
	char *lab[] = { "127.0.0.0/8", "fd00::/8", "10.1.2.3", "lore.lab.internal", NULL };

	(void)state;
	assert_true(allowed("93.184.216.34", NULL, none, NULL));
	assert_true(allowed("2606:2800:220:1::1", NULL, none, NULL));
	assert_false(allowed("127.0.0.1", NULL, none, "127.0.0.1 is a loopback address (not in lab.fetch_allow)"));
	assert_false(allowed("127.255.0.9", NULL, NULL, "loopback"));
	assert_false(allowed("::1", NULL, none, "loopback"));
	assert_false(allowed("::ffff:127.0.0.1", NULL, none, "127.0.0.1 is a loopback"));
	assert_false(allowed("0.0.0.0", NULL, none, "unspecified"));
	assert_false(allowed("::", NULL, none, "unspecified"));
	assert_false(allowed("169.254.169.254", NULL, none, "link-local"));
	assert_false(allowed("fe80::1", NULL, none, "link-local"));
	assert_false(allowed("10.0.0.1", NULL, none, "private"));
	assert_false(allowed("172.16.0.1", NULL, none, "private"));
	assert_false(allowed("172.31.255.255", NULL, none, "private"));
	assert_true(allowed("172.32.0.1", NULL, none, NULL));
	assert_false(allowed("192.168.1.1", NULL, none, "private"));
	assert_false(allowed("100.64.0.1", NULL, none, "shared"));
	assert_false(allowed("fd12::1", NULL, none, "unique-local"));
	assert_false(allowed("224.0.0.1", NULL, none, "multicast"));
	assert_false(allowed("255.255.255.255", NULL, none, "reserved"));
	assert_false(allowed("::127.0.0.1", NULL, none, "IPv4-compatible"));
	/* what lab.fetch_allow lets through, and only that */
	assert_true(allowed("127.0.0.1", NULL, lab, NULL));
	assert_true(allowed("::ffff:127.0.0.2", NULL, lab, NULL));
	assert_true(allowed("fd00::5", NULL, lab, NULL));
	assert_true(allowed("10.1.2.3", NULL, lab, NULL));
	assert_false(allowed("10.1.2.4", NULL, lab, "10.1.2.4 is a private address"));
	assert_false(allowed("::1", NULL, lab, "loopback"));
	assert_true(allowed("10.9.9.9", "lore.lab.internal", lab, NULL));
	assert_true(allowed("10.9.9.9", "LORE.lab.internal", lab, NULL));
	assert_false(allowed("10.9.9.9", "lore.lab.internal.evil.org", lab, "private"));
	assert_false(allowed("169.254.169.254", "metadata", lab, "link-local"));
}

static void test_allow_entries(void **state)
{
	(void)state;
	assert_true(fetch_allow_entry_valid("127.0.0.0/8"));
	assert_true(fetch_allow_entry_valid("0.0.0.0/0"));
	assert_true(fetch_allow_entry_valid("::1"));
	assert_true(fetch_allow_entry_valid("fd00::/8"));
	assert_true(fetch_allow_entry_valid("lore.kernel.org"));
	assert_false(fetch_allow_entry_valid("127.0.0.0/33"));
	assert_false(fetch_allow_entry_valid("::/129"));
	assert_false(fetch_allow_entry_valid("1.2.3.4/"));
	assert_false(fetch_allow_entry_valid("1.2.3.4/x"));
	assert_false(fetch_allow_entry_valid("::ffff:1.2.3.4/24"));
	assert_false(fetch_allow_entry_valid("-x"));
	assert_false(fetch_allow_entry_valid("a b"));
	assert_false(fetch_allow_entry_valid("host/8"));
	assert_false(fetch_allow_entry_valid(""));
	assert_false(fetch_allow_entry_valid(NULL));
}

/* The refusal comes before any connection: no server needed. */
static void test_fetch_refused(void **state)
{
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	char *lab[] = { "127.0.0.0/8", NULL };
	struct fetch_opts o = { .max = 1024, .timeout = 5 };
	volatile sig_atomic_t cancel = 1;
	long http = 0;

	(void)state;
	assert_int_equal(fetch_url("http://127.0.0.1:1/p", &o, &out, &http, &err), -EPERM);
	assert_contains(err.buf, "refused: 127.0.0.1 is a loopback address");
	assert_int_equal(fetch_url("http://[::1]:1/p", &o, &out, &http, &err), -EPERM);
	assert_contains(err.buf, "loopback");
	assert_int_equal(fetch_url("http://localhost:1/p", &o, &out, &http, &err), -EPERM);
	assert_contains(err.buf, "refused: localhost resolves to");
	assert_int_equal(fetch_url("http://169.254.169.254/latest/meta-data/", &o, &out, &http, &err), -EPERM);
	assert_contains(err.buf, "link-local");
	assert_int_equal(fetch_url("file:///etc/passwd", &o, &out, &http, &err), -EPERM);
	assert_int_equal(fetch_url("gopher://127.0.0.1/", &o, &out, &http, &err), -EPERM);
	/* allowed, but nothing listens: the submitter's trouble, with curl's words */
	o.allow = lab;
	assert_int_equal(fetch_url("http://127.0.0.1:1/p", &o, &out, &http, &err), -EIO);
	assert_contains(err.buf, "onnect");
	o.cancel = &cancel;
	assert_int_equal(fetch_url("http://127.0.0.1:1/p", &o, &out, &http, &err), -ECANCELED);
	assert_int_equal(out.len, 0);
	strbuf_release(&out);
	strbuf_release(&err);
}

static void assert_redacted(const char *url, const char *want)
{
	struct strbuf out = STRBUF_INIT;

	util_url_redact(url, &out);
	assert_string_equal(out.buf, want);
	strbuf_release(&out);
}

static void assert_redacted_in(const char *text, const char *url, const char *want)
{
	struct strbuf out = STRBUF_INIT;

	util_url_redact_in(text, strlen(text), url, &out);
	assert_string_equal(out.buf, want);
	strbuf_release(&out);
}

/* What may let one in goes (the user, the path, the query); scheme, host
 * and port stay, wherever the URL shows: whole, or cut short after its host. */
static void test_url_redact(void **state)
{
	const char *hook = "https://hooks.example.org/services/T0/B0/s3cret";
	const char *branch = "git://git.example.org:9418/people/me/linux.git";

	(void)state;
	assert_redacted(hook, "https://hooks.example.org/(redacted)");
	assert_redacted("https://user:pass@lore.example.org/x/raw", "https://lore.example.org/(redacted)");
	assert_redacted("https://lore.example.org/x/raw?token=s3cret", "https://lore.example.org/(redacted)");
	assert_redacted("http://[::1]:8080/p?k=v", "http://[::1]:8080/(redacted)");
	assert_redacted("https://user@example.org", "https://example.org/(redacted)");
	assert_redacted(branch, "git://git.example.org:9418/(redacted)");
	/* nothing to hide */
	assert_redacted("https://example.org", "https://example.org");
	assert_redacted("https://example.org/", "https://example.org/");
	/* not scheme://host: all of it */
	assert_redacted("/var/cache/tlblab/linux", "(redacted)");
	assert_redacted("https:///x", "(redacted)");
	assert_redacted("", "(redacted)");

	assert_redacted_in("webhook https://hooks.example.org/services/T0/B0/s3cret: HTTP 500", hook,
			   "webhook https://hooks.example.org/(redacted): HTTP 500");
	assert_redacted_in("branch tlb/fix of git://git.example.org:9418/people/me/linux.git", branch,
			   "branch tlb/fix of git://git.example.org:9418/(redacted)");
	/* cut short in a job's name, and twice */
	assert_redacted_in("branch x of git://git.example.org:9418/peop...", branch,
			   "branch x of git://git.example.org:9418/(redacted)...");
	assert_redacted_in(branch, branch, "git://git.example.org:9418/(redacted)");
	assert_redacted_in("a git://git.example.org:9418/people/me/linux.git b git://git.example.org:9418/people/x",
			   branch, "a git://git.example.org:9418/(redacted) b git://git.example.org:9418/(redacted)x");
	/* its host alone, or another host: not the URL */
	assert_redacted_in("git://git.example.org is down", branch, "git://git.example.org is down");
	assert_redacted_in("see https://hooks.example.org.evil/x", hook, "see https://hooks.example.org.evil/x");
	assert_redacted_in("no URL here", NULL, "no URL here");
	assert_redacted_in("no URL here", "", "no URL here");
}

/* A branch URL (git fetches it) or a patch URL at submit: its host under
 * the same policy as fetch_url's hops, git:// included; a host that does
 * not resolve is -EIO, for the caller to leave to the fetch. */
static void test_url_allowed(void **state)
{
	struct strbuf err = STRBUF_INIT;
	char *lab[] = { "127.0.0.0/8", NULL };

	(void)state;
	assert_int_equal(fetch_url_allowed("git://127.0.0.1:9418/linux.git", NULL, &err), -EPERM);
	assert_contains(err.buf, "host 127.0.0.1: refused: 127.0.0.1 is a loopback address (not in lab.fetch_allow)");
	assert_int_equal(fetch_url_allowed("git://10.1.2.3/linux.git", NULL, &err), -EPERM);
	assert_contains(err.buf, "host 10.1.2.3: refused: 10.1.2.3 is a private address");
	assert_int_equal(fetch_url_allowed("https://localhost/linux.git", NULL, &err), -EPERM);
	assert_contains(err.buf, "host localhost: refused: localhost resolves to");
	assert_int_equal(fetch_url_allowed("https://[fe80::1]/x.git", NULL, &err), -EPERM);
	assert_contains(err.buf, "link-local");
	assert_int_equal(fetch_url_allowed("http://169.254.169.254/latest/meta-data/", NULL, &err), -EPERM);
	assert_int_equal(fetch_url_allowed("ssh://git.example.org/linux.git", NULL, &err), -EPERM);
	assert_int_equal(fetch_url_allowed("file:///etc/passwd", NULL, &err), -EPERM);
	/* allowed by lab.fetch_allow, and public addresses always */
	assert_int_equal(fetch_url_allowed("git://127.0.0.1:9418/linux.git", lab, &err), 0);
	assert_int_equal(fetch_url_allowed("https://localhost/linux.git", lab, &err), 0);
	assert_int_equal(fetch_url_allowed("git://8.8.8.8/linux.git", NULL, &err), 0);
	assert_int_equal(fetch_url_allowed("https://[2001:4860:4860::8888]:8443/l.git", NULL, &err), 0);
	/* no such name: not the policy's to decide */
	assert_int_equal(fetch_url_allowed("https://no-such-host.invalid/linux.git", NULL, &err), -EIO);
	strbuf_release(&err);
}

/*
 * A tiny HTTP server on 127.0.0.1 in a thread, answering each request by
 * its path until the listening socket is shut down: /redir-private sends the client to 127.0.0.2 (loopback too,
 * not in the test's allow list); /redir-ok to /ok on itself; /loop to
 * itself; /big 4096 bytes; /ok "hello".
 */
struct mini_http {
	int fd, port;
	int served;		/* requests answered, read after the join */
	pthread_t thread;
};

static void *mini_http_main(void *arg)
{
	struct mini_http *h = arg;
	char req[2048], head[512], body[4096];
	const char *path;
	int c, blen, hlen;
	ssize_t got;

	memset(body, 'x', sizeof(body));
	for (;;) {
		c = accept(h->fd, NULL, NULL);
		if (c < 0)
			break;		/* shut down: the test is over */
		h->served++;
		got = read(c, req, sizeof(req) - 1);
		req[got > 0 ? got : 0] = 0;
		path = strchr(req, ' ') ? strchr(req, ' ') + 1 : "";
		blen = 0;
		if (!strncmp(path, "/redir-private ", 15))
			hlen = snprintf(head, sizeof(head), "HTTP/1.0 302 Found\r\nLocation: http://127.0.0.2:%d/ok\r\n"
					"Content-Length: 0\r\n\r\n", h->port);
		else if (!strncmp(path, "/redir-ok ", 10))
			hlen = snprintf(head, sizeof(head), "HTTP/1.0 302 Found\r\nLocation: /ok\r\n"
					"Content-Length: 0\r\n\r\n");
		else if (!strncmp(path, "/loop ", 6))
			hlen = snprintf(head, sizeof(head), "HTTP/1.0 302 Found\r\nLocation: /loop\r\n"
					"Content-Length: 0\r\n\r\n");
		else if (!strncmp(path, "/big ", 5))
			hlen = snprintf(head, sizeof(head), "HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n",
					blen = (int)sizeof(body));
		else
			hlen = snprintf(head, sizeof(head), "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello");
		if (write(c, head, (size_t)hlen) != hlen || (blen && write(c, body, (size_t)blen) != blen))
			fprintf(stderr, "# mini_http: short write\n");
		close(c);
	}
	return NULL;
}

static void mini_http_start(struct mini_http *h)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	h->served = 0;
	h->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(h->fd >= 0);
	assert_int_equal(bind(h->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(h->fd, 8), 0);
	assert_int_equal(getsockname(h->fd, (struct sockaddr *)&a, &len), 0);
	h->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&h->thread, NULL, mini_http_main, h), 0);
}

/* Every hop is checked like the first: a redirect to an address the
 * policy refuses is refused before connecting; the size bound holds;
 * redirects are bounded; an allowed redirect is followed. */
static void test_fetch_hops(void **state)
{
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT, url = STRBUF_INIT;
	char *one[] = { "127.0.0.1/32", NULL };
	struct fetch_opts o = { .max = 1024, .timeout = 10, .allow = one };
	struct mini_http h;
	long http = 0;

	(void)state;
	mini_http_start(&h);
	strbuf_addf(&url, "http://127.0.0.1:%d/redir-private", h.port);
	assert_int_equal(fetch_url(url.buf, &o, &out, &http, &err), -EPERM);
	assert_contains(err.buf, "127.0.0.2 is a loopback address");
	assert_int_equal(out.len, 0);

	strbuf_reset(&url);
	strbuf_addf(&url, "http://127.0.0.1:%d/redir-ok", h.port);
	assert_int_equal(fetch_url(url.buf, &o, &out, &http, &err), 0);
	assert_int_equal(http, 200);
	assert_int_equal(out.len, 5);
	assert_memory_equal(out.buf, "hello", 5);

	strbuf_reset(&url);
	strbuf_addf(&url, "http://127.0.0.1:%d/big", h.port);
	assert_int_equal(fetch_url(url.buf, &o, &out, &http, &err), -EFBIG);
	assert_contains(err.buf, "larger than 1024 bytes");
	assert_int_equal(out.len, 0);

	strbuf_reset(&url);
	strbuf_addf(&url, "http://127.0.0.1:%d/loop", h.port);
	assert_int_equal(fetch_url(url.buf, &o, &out, &http, &err), -EIO);
	assert_contains(err.buf, "more than 5 redirects");

	shutdown(h.fd, SHUT_RDWR);
	assert_int_equal(pthread_join(h.thread, NULL), 0);
	close(h.fd);
	/* 1 (the private hop never connected) + 2 + 1 + 6 */
	assert_int_equal(h.served, 10);
	strbuf_release(&out);
	strbuf_release(&err);
	strbuf_release(&url);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_branch_urls),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_allow_entries),
		cmocka_unit_test(test_fetch_refused),
		cmocka_unit_test(test_url_allowed),
		cmocka_unit_test(test_url_redact),
		cmocka_unit_test(test_fetch_hops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
