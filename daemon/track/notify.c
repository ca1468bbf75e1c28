/*
 * One webhook attempt with libcurl (notify.h). The reply's body is read
 * and dropped, up to a small bound, so a chatty receiver cannot hold the
 * worker; its status is all that counts.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <string.h>

#include "notify.h"
#include "version.h"
#include "util.h"
#include "banned.h"

#define REPLY_MAX (64u << 10)

int notify_sign(const char *secret, const void *body, size_t len, char *out)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	if (!HMAC(EVP_sha256(), secret, (int)strlen(secret), body, len, md, &mdlen) ||
	    mdlen * 2 != NOTIFY_SIGNATURE_LEN)
		return -EIO;
	hex_encode(md, mdlen, out);
	return 0;
}

static size_t on_reply(char *p, size_t size, size_t n, void *arg)
{
	size_t *seen = arg;

	(void)p;
	*seen += size * n;
	return *seen > REPLY_MAX ? 0 : size * n;
}

/* curl leaves its sockets open across exec: a command the daemon starts
 * meanwhile must not get one */
static int on_socket(void *arg, curl_socket_t fd, curlsocktype purpose)
{
	(void)arg;
	(void)purpose;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	return CURL_SOCKOPT_OK;
}

static int event_valid(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (i >= 32 || !((s[i] >= 'a' && s[i] <= 'z') || s[i] == '_'))
			return 0;
	return i > 0;
}

int notify_post(const struct notify_attempt *a, const void *body, size_t len, long *ret_http,
		struct strbuf *err)
{
	char sig[NOTIFY_SIGNATURE_LEN + 1], line[160];
	struct curl_slist *hdr = NULL, *h;
	size_t seen = 0;
	CURLcode cr;
	CURL *c;
	int r = -EIO;

	*ret_http = 0;
	if ((strncmp(a->url, "http://", 7) && strncmp(a->url, "https://", 8)) || !event_valid(a->event)) {
		strbuf_addf(err, "webhook %s: not an http(s) URL, or event '%s' is not [a-z_]+", a->url,
			    a->event);
		return -EINVAL;
	}
	c = curl_easy_init();
	if (!c) {
		strbuf_addstr(err, "webhook: curl_easy_init failed");
		return -EIO;
	}
	hdr = curl_slist_append(hdr, "Content-Type: application/json");
	snprintf(line, sizeof(line), "X-Tlblab-Event: %s", a->event);
	h = hdr ? curl_slist_append(hdr, line) : NULL;
	snprintf(line, sizeof(line), "X-Tlblab-Delivery: %lld", a->delivery);
	h = h ? curl_slist_append(h, line) : NULL;
	/* curl sends "Expect: 100-continue" for larger bodies and waits; no */
	h = h ? curl_slist_append(h, "Expect:") : NULL;
	if (h && a->secret) {
		if (notify_sign(a->secret, body, len, sig) < 0) {
			strbuf_addf(err, "webhook %s: cannot sign the body", a->url);
			goto out;
		}
		snprintf(line, sizeof(line), "X-Tlblab-Signature: sha256=%s", sig);
		h = curl_slist_append(h, line);
	}
	if (!h) {
		strbuf_addf(err, "webhook %s: out of memory", a->url);
		goto out;
	}
	curl_easy_setopt(c, CURLOPT_URL, a->url);
	curl_easy_setopt(c, CURLOPT_SOCKOPTFUNCTION, on_socket);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)((a->timeout > 0 ? a->timeout : 10) * 1000));
	curl_easy_setopt(c, CURLOPT_USERAGENT, "tlblab/" TLBLAB_VERSION);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_reply);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &seen);
	cr = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, ret_http);
	if (cr != CURLE_OK && !(cr == CURLE_WRITE_ERROR && *ret_http >= 200 && *ret_http < 300))
		strbuf_addf(err, "webhook %s: %s", a->url, curl_easy_strerror(cr));
	else if (*ret_http < 200 || *ret_http > 299)
		strbuf_addf(err, "webhook %s: HTTP %ld", a->url, *ret_http);
	else
		r = 0;
out:
	curl_slist_free_all(hdr);
	curl_easy_cleanup(c);
	return r;
}

double notify_backoff(int attempt, double first)
{
	double s = first > 0 ? first : 10;
	int i;

	for (i = 1; i < attempt && s < 3600; i++)
		s *= 2;
	return s < 3600 ? s : 3600;
}
