/*
 * daemon/notify: one webhook attempt against a receiver on 127.0.0.1 in a
 * thread, which answers each request with the next status of its script
 * and keeps what it was sent; the signature against RFC 4231's HMAC-SHA256
 * test vector and against the body the receiver got; the back-off.
 */
#include "testlib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "notify.h"
#include "util.h"
#include "banned.h"

#define MAX_REQ 8

struct receiver {
	int fd, port;
	const int *statuses;		/* one a request, then 200 */
	int nstatuses;
	int served;
	char req[MAX_REQ][8192];	/* each request as received */
	pthread_t thread;
};

/* reads one request: the headers, then Content-Length bytes of body */
static void read_request(int c, char *buf, size_t size)
{
	size_t got = 0, need = 0;
	const char *end, *cl;

	while (got + 1 < size) {
		ssize_t n = read(c, buf + got, size - 1 - got);

		if (n <= 0)
			break;
		got += (size_t)n;
		buf[got] = 0;
		end = strstr(buf, "\r\n\r\n");
		if (!end)
			continue;
		cl = strcasestr(buf, "content-length:");
		need = (size_t)(end + 4 - buf) + (cl ? strtoul(cl + 15, NULL, 10) : 0);
		if (got >= need)
			break;
	}
	buf[got] = 0;
}

static void *receiver_main(void *arg)
{
	struct receiver *r = arg;
	char head[256];
	int c, hl, status;

	for (;;) {
		c = accept(r->fd, NULL, NULL);
		if (c < 0)
			break;
		status = r->served < r->nstatuses ? r->statuses[r->served] : 200;
		if (r->served < MAX_REQ)
			read_request(c, r->req[r->served], sizeof(r->req[0]));
		r->served++;
		hl = snprintf(head, sizeof(head), "HTTP/1.1 %d X\r\n%sContent-Length: 2\r\nConnection: close\r\n\r\nok",
			      status, status == 302 ? "Location: http://127.0.0.1:1/elsewhere\r\n" : "");
		if (write(c, head, (size_t)hl) != hl)
			fprintf(stderr, "# receiver: short write\n");
		close(c);
	}
	return NULL;
}

static void receiver_start(struct receiver *r, const int *statuses, int n)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);

	memset(r, 0, sizeof(*r));
	r->statuses = statuses;
	r->nstatuses = n;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	r->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(r->fd >= 0);
	assert_int_equal(bind(r->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(r->fd, 8), 0);
	assert_int_equal(getsockname(r->fd, (struct sockaddr *)&a, &len), 0);
	r->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&r->thread, NULL, receiver_main, r), 0);
}

static void receiver_stop(struct receiver *r)
{
	shutdown(r->fd, SHUT_RDWR);
	pthread_join(r->thread, NULL);
	close(r->fd);
}

/* the value of header name in request req, copied into out */
static void header_of(const char *req, const char *name, char *out, size_t size)
{
	const char *p = strcasestr(req, name);
	size_t n = 0;

	out[0] = 0;
	if (!p)
		return;
	p += strlen(name);
	while (*p == ' ')
		p++;
	while (p[n] && p[n] != '\r' && n + 1 < size)
		n++;
	memcpy(out, p, n);
	out[n] = 0;
}

static void test_sign_rfc4231(void **state)
{
	char sig[NOTIFY_SIGNATURE_LEN + 1];
	const char *data = "what do ya want for nothing?";

	(void)state;
	/* RFC 4231, test case 2 */
	assert_int_equal(notify_sign("Jefe", data, strlen(data), sig), 0);
	assert_string_equal(sig, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

/* a receiver that fails the first two deliveries gets the third, and the
 * signature of each verifies against the body it got */
static void test_retried_delivery(void **state)
{
	static const int script[] = { 500, 503 };
	const char *body = "{\"event\": \"bisection\", \"first_bad\": \"abc\"}";
	struct strbuf err = STRBUF_INIT, url = STRBUF_INIT;
	struct notify_attempt a = { .event = "bisection", .delivery = 42, .secret = "s3cret-hook-key" };
	struct receiver r;
	long http = -1;
	int i;

	(void)state;
	receiver_start(&r, script, 2);
	strbuf_addf(&url, "http://127.0.0.1:%d/hook", r.port);
	a.url = url.buf;
	assert_int_equal(notify_post(&a, body, strlen(body), &http, &err), -EIO);
	assert_int_equal(http, 500);
	assert_contains(err.buf, "HTTP 500");
	strbuf_reset(&err);
	assert_int_equal(notify_post(&a, body, strlen(body), &http, &err), -EIO);
	assert_int_equal(http, 503);
	strbuf_reset(&err);
	assert_int_equal(notify_post(&a, body, strlen(body), &http, &err), 0);
	assert_int_equal(http, 200);
	assert_int_equal(err.len, 0);
	receiver_stop(&r);
	assert_int_equal(r.served, 3);
	for (i = 0; i < 3; i++) {
		unsigned char md[EVP_MAX_MD_SIZE];
		unsigned int mdlen = 0;
		char v[128], want[2 * EVP_MAX_MD_SIZE + 8];
		const char *got_body = strstr(r.req[i], "\r\n\r\n");

		assert_non_null(got_body);
		got_body += 4;
		assert_string_equal(got_body, body);
		assert_true(!strncmp(r.req[i], "POST /hook HTTP/1.1\r\n", 21));
		header_of(r.req[i], "X-Tlblab-Event:", v, sizeof(v));
		assert_string_equal(v, "bisection");
		header_of(r.req[i], "X-Tlblab-Delivery:", v, sizeof(v));
		assert_string_equal(v, "42");
		header_of(r.req[i], "Content-Type:", v, sizeof(v));
		assert_string_equal(v, "application/json");
		/* what a receiver does: HMAC the body it got, compare */
		assert_non_null(HMAC(EVP_sha256(), "s3cret-hook-key", 15, (const unsigned char *)got_body,
				     strlen(got_body), md, &mdlen));
		memcpy(want, "sha256=", 7);
		hex_encode(md, mdlen, want + 7);
		header_of(r.req[i], "X-Tlblab-Signature:", v, sizeof(v));
		assert_string_equal(v, want);
	}
	strbuf_release(&err);
	strbuf_release(&url);
}

static void test_unsigned_and_failures(void **state)
{
	static const int script[] = { 302 };
	struct strbuf err = STRBUF_INIT, url = STRBUF_INIT;
	struct notify_attempt a = { .event = "job", .delivery = 7 };
	struct receiver r;
	long http = -1;

	(void)state;
	receiver_start(&r, script, 1);
	strbuf_addf(&url, "http://127.0.0.1:%d/", r.port);
	a.url = url.buf;
	/* a redirect is not followed: a failed attempt */
	assert_int_equal(notify_post(&a, "{}", 2, &http, &err), -EIO);
	assert_int_equal(http, 302);
	assert_contains(err.buf, "HTTP 302");
	strbuf_reset(&err);
	assert_int_equal(notify_post(&a, "{}", 2, &http, &err), 0);
	receiver_stop(&r);
	assert_int_equal(r.served, 2);
	assert_null(strcasestr(r.req[1], "X-Tlblab-Signature"));

	/* nobody listens: curl's words, no status */
	a.url = "http://127.0.0.1:1/";
	assert_int_equal(notify_post(&a, "{}", 2, &http, &err), -EIO);
	assert_int_equal(http, 0);
	assert_contains(err.buf, "webhook http://127.0.0.1:1/: ");
	strbuf_reset(&err);
	a.url = "file:///etc/passwd";
	assert_int_equal(notify_post(&a, "{}", 2, &http, &err), -EINVAL);
	a.url = url.buf;
	a.event = "job\r\nX-Evil: 1";
	assert_int_equal(notify_post(&a, "{}", 2, &http, &err), -EINVAL);
	strbuf_release(&err);
	strbuf_release(&url);
}

static void test_backoff(void **state)
{
	(void)state;
	assert_float_equal(notify_backoff(1, 10), 10, 0);
	assert_float_equal(notify_backoff(2, 10), 20, 0);
	assert_float_equal(notify_backoff(3, 10), 40, 0);
	assert_float_equal(notify_backoff(9, 10), 2560, 0);
	assert_float_equal(notify_backoff(10, 10), 3600, 0);
	assert_float_equal(notify_backoff(1000, 10), 3600, 0);
	assert_float_equal(notify_backoff(1, 0.5), 0.5, 0);
	assert_float_equal(notify_backoff(3, 0.5), 2, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sign_rfc4231),
		cmocka_unit_test(test_retried_delivery),
		cmocka_unit_test(test_unsigned_and_failures),
		cmocka_unit_test(test_backoff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
