#include "fetch.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "util.h"
#include "banned.h"

#define MAX_HOPS 6		/* the URL and 5 redirects */
#define MAX_ADDRS 32		/* addresses of one host that are checked */
#define HOST_MAX 253

/* err set from fmt; returns code (a negative errno). */
static int seterr(int code, struct strbuf *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int seterr(int code, struct strbuf *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vsetf(err, fmt, ap);
	va_end(ap);
	return code;
}

/* An address as bytes: 4 for IPv4 (IPv4-mapped IPv6 included), 16 for IPv6. */
struct addr {
	int len;
	unsigned char b[16];
};

static const unsigned char v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

static int addr_from_sockaddr(const struct sockaddr *sa, struct addr *a)
{
	if (sa->sa_family == AF_INET) {
		a->len = 4;
		memcpy(a->b, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const unsigned char *b = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr;

		if (!memcmp(b, v4mapped, 12)) {
			a->len = 4;
			memcpy(a->b, b + 12, 4);
		} else {
			a->len = 16;
			memcpy(a->b, b, 16);
		}
		return 0;
	}
	return -1;
}

static int addr_parse(const char *s, struct addr *a)
{
	struct in6_addr v6;

	if (inet_pton(AF_INET, s, a->b) == 1) {
		a->len = 4;
		return 0;
	}
	if (inet_pton(AF_INET6, s, &v6) == 1) {
		if (!memcmp(v6.s6_addr, v4mapped, 12)) {
			a->len = 4;
			memcpy(a->b, v6.s6_addr + 12, 4);
		} else {
			a->len = 16;
			memcpy(a->b, v6.s6_addr, 16);
		}
		return 0;
	}
	return -1;
}

/* 1 when a lies in net/prefix (same length). */
static int in_net(const struct addr *a, const unsigned char *net, int len, int prefix)
{
	int full = prefix / 8, rest = prefix % 8;

	if (a->len != len)
		return 0;
	if (memcmp(a->b, net, (size_t)full))
		return 0;
	return !rest || ((a->b[full] ^ net[full]) & (0xff << (8 - rest)) & 0xff) == 0;
}

/* A CIDR entry ("10.0.0.0/8", "::1", "fd00::/8") into net and prefix. */
static int cidr_parse(const char *s, struct addr *net, int *prefix)
{
	char buf[64];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	long p;

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (addr_parse(buf, net) < 0)
		return -1;
	if (!slash) {
		*prefix = net->len * 8;
		return 0;
	}
	/* a mapped address written with an IPv6 prefix is not meant */
	if (strchr(buf, ':') && net->len == 4)
		return -1;
	if (parse_int_range(slash + 1, 0, net->len * 8, &p) < 0)
		return -1;
	*prefix = (int)p;
	return 0;
}

static int host_name_valid(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > HOST_MAX || s[0] == '-' || s[0] == '.')
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '-'))
			return 0;
	return 1;
}

int fetch_allow_entry_valid(const char *entry)
{
	struct addr net;
	int prefix;

	if (!entry)
		return 0;
	return cidr_parse(entry, &net, &prefix) == 0 || (!strchr(entry, '/') && host_name_valid(entry));
}

/* The ranges a fetch must not reach unless allowed, and what they are. */
struct range {
	int len;
	unsigned char net[16];
	int prefix;
	const char *what;
};

static const struct range ranges[] = {
	{ 4, { 0 }, 8, "an unspecified (\"this network\") address" },
	{ 4, { 10 }, 8, "a private address" },
	{ 4, { 100, 64 }, 10, "a shared (carrier-grade NAT) address" },
	{ 4, { 127 }, 8, "a loopback address" },
	{ 4, { 169, 254 }, 16, "a link-local address" },
	{ 4, { 172, 16 }, 12, "a private address" },
	{ 4, { 192, 0, 0 }, 24, "a reserved (IETF protocol) address" },
	{ 4, { 192, 168 }, 16, "a private address" },
	{ 4, { 198, 18 }, 15, "a reserved (benchmarking) address" },
	{ 4, { 224 }, 4, "a multicast address" },
	{ 4, { 240 }, 4, "a reserved address" },
	{ 16, { 0 }, 128, "an unspecified address" },
	{ 16, { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 }, 128, "a loopback address" },
	{ 16, { 0 }, 96, "an IPv4-compatible (deprecated) address" },
	{ 16, { 0, 0x64, 0xff, 0x9b }, 96, "a NAT64 address" },
	{ 16, { 0xfc }, 7, "a unique-local (private) address" },
	{ 16, { 0xfe, 0x80 }, 10, "a link-local address" },
	{ 16, { 0xfe, 0xc0 }, 10, "a site-local (private) address" },
	{ 16, { 0xff }, 8, "a multicast address" },
};

static void addr_text(const struct addr *a, char *buf, size_t len)
{
	if (!inet_ntop(a->len == 4 ? AF_INET : AF_INET6, a->b, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

/* 1 when an entry of allow takes a (reached as host). */
static int allowed_by(const struct addr *a, const char *host, char *const *allow)
{
	size_t i;

	for (i = 0; allow && allow[i]; i++) {
		struct addr net;
		int prefix;

		if (cidr_parse(allow[i], &net, &prefix) == 0) {
			if (in_net(a, net.b, net.len, prefix))
				return 1;
		} else if (host && !strcasecmp(allow[i], host)) {
			return 1;
		}
	}
	return 0;
}

static int addr_allowed(const struct addr *a, const char *host, char *const *allow, struct strbuf *why)
{
	size_t i;
	char text[INET6_ADDRSTRLEN];

	for (i = 0; i < ARRAY_SIZE(ranges); i++) {
		/* the loopback ::1 and the unspecified :: sit inside ::/96 */
		if (!in_net(a, ranges[i].net, ranges[i].len, ranges[i].prefix))
			continue;
		if (allowed_by(a, host, allow))
			return 1;
		addr_text(a, text, sizeof(text));
		strbuf_addf(why, "%s is %s (not in lab.fetch_allow)", text, ranges[i].what);
		return 0;
	}
	return 1;
}

int fetch_addr_allowed(const struct sockaddr *sa, const char *host, char *const *allow, struct strbuf *why)
{
	struct addr a;

	if (addr_from_sockaddr(sa, &a) < 0) {
		strbuf_addstr(why, "not an IPv4 or IPv6 address");
		return 0;
	}
	return addr_allowed(&a, host, allow, why);
}

/* ---- one hop ---- */

struct hop {
	struct addr addrs[MAX_ADDRS];
	int naddrs;
	struct strbuf *out;
	size_t max;
	int too_big;
	volatile sig_atomic_t *cancel;
};

static size_t on_data(char *ptr, size_t size, size_t n, void *arg)
{
	struct hop *h = arg;

	if (h->out->len + size * n > h->max) {
		h->too_big = 1;
		return 0;
	}
	if (strbuf_add(h->out, ptr, size * n) < 0)
		return 0;
	return size * n;
}

static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	struct hop *h = arg;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return h->cancel && *h->cancel ? 1 : 0;
}

/* curl opens a socket only to an address that was checked. */
static curl_socket_t on_open_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *sa)
{
	struct hop *h = arg;
	struct addr a;
	int i;

	if (purpose != CURLSOCKTYPE_IPCXN || addr_from_sockaddr(&sa->addr, &a) < 0)
		return CURL_SOCKET_BAD;
	for (i = 0; i < h->naddrs; i++)
		if (h->addrs[i].len == a.len && !memcmp(h->addrs[i].b, a.b, (size_t)a.len))
			return socket(sa->family, sa->socktype | SOCK_CLOEXEC, sa->protocol);
	return CURL_SOCKET_BAD;
}

/*
 * Resolves host and checks every address; fills h->addrs and, for a name,
 * the CURLOPT_RESOLVE entry "host:port:addr,addr". 0 or -EPERM/-EIO.
 */
static int resolve_checked(const char *host, const char *port, char *const *allow, struct hop *h,
			   struct strbuf *resolve, struct strbuf *err)
{
	struct addrinfo hints, *res = NULL, *ai;
	struct strbuf why = STRBUF_INIT;
	int rc, literal;
	struct addr probe;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	literal = addr_parse(host, &probe) == 0;
	if (!literal && !host_name_valid(host))
		return seterr(-EPERM, err, "'%.80s' is not a host name", host);
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc)
		return seterr(-EIO, err, "%s: %s", host, gai_strerror(rc));
	h->naddrs = 0;
	if (!literal)
		strbuf_addf(resolve, "%s:%s:", host, port);
	for (ai = res; ai; ai = ai->ai_next) {
		struct addr a;
		char text[INET6_ADDRSTRLEN];

		if (addr_from_sockaddr(ai->ai_addr, &a) < 0)
			continue;
		if (!addr_allowed(&a, literal ? NULL : host, allow, &why)) {
			if (literal)
				rc = seterr(-EPERM, err, "refused: %s", why.buf);
			else
				rc = seterr(-EPERM, err, "refused: %s resolves to %s", host, why.buf);
			break;
		}
		if (h->naddrs < MAX_ADDRS) {
			h->addrs[h->naddrs++] = a;
			addr_text(&a, text, sizeof(text));
			if (!literal)
				strbuf_addf(resolve, a.len == 16 ? "%s[%s]" : "%s%s", resolve->buf[resolve->len - 1] == ':'
					    ? "" : ",", text);
		}
	}
	freeaddrinfo(res);
	strbuf_release(&why);
	if (rc == 0 && !h->naddrs)
		rc = seterr(-EIO, err, "%s: no IPv4 or IPv6 address", host);
	return rc;
}

/* A URL's scheme, host (without IPv6 brackets) and port: http and https,
 * and with git set git:// too (git's own protocol, port 9418 unless given),
 * which only git fetches (a branch URL, build.sh). */
static int url_parts(const char *url, int git, char *host, size_t hostlen, char *port, size_t portlen,
		     struct strbuf *err)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *h = NULL, *p = NULL;
	int rc = 0, is_git;

	if (!u)
		abort();
	if (curl_url_set(u, CURLUPART_URL, url, git ? CURLU_NON_SUPPORT_SCHEME : 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &h, 0) != CURLUE_OK) {
		rc = seterr(-EPERM, err, "%.200s: not a URL curl understands", url);
		goto out;
	}
	is_git = git && !strcasecmp(scheme, "git");
	if (strcasecmp(scheme, "http") && strcasecmp(scheme, "https") && !is_git) {
		rc = seterr(-EPERM, err, "%.200s: only %s are fetched", url,
			    git ? "http, https and git" : "http and https");
		goto out;
	}
	/* curl knows no default port of git's protocol */
	if (curl_url_get(u, CURLUPART_PORT, &p, is_git ? 0 : CURLU_DEFAULT_PORT) != CURLUE_OK && !is_git) {
		rc = seterr(-EPERM, err, "%.200s: not a URL curl understands", url);
		goto out;
	}
	if (h[0] == '[') {
		size_t n = strlen(h);

		if (n < 2 || h[n - 1] != ']' || strchr(h, '%')) {
			rc = seterr(-EPERM, err, "%.200s: not a usable IPv6 host", url);
			goto out;
		}
		snprintf(host, hostlen, "%.*s", (int)(n - 2), h + 1);
	} else {
		snprintf(host, hostlen, "%s", h);
	}
	snprintf(port, portlen, "%s", p ? p : "9418");
out:
	curl_free(scheme);
	curl_free(h);
	curl_free(p);
	curl_url_cleanup(u);
	return rc;
}

int fetch_url(const char *url, const struct fetch_opts *o, struct strbuf *out, long *ret_http,
	      struct strbuf *err)
{
	double timeout = o->timeout > 0 ? o->timeout : 30, end = mono_now() + timeout;
	char host[HOST_MAX + 3], port[8];
	struct strbuf cur = STRBUF_INIT, resolve = STRBUF_INIT;
	struct hop h;
	int hop, rc = 0;

	*ret_http = 0;
	strbuf_addstr(&cur, url);
	for (hop = 0; hop < MAX_HOPS; hop++) {
		struct curl_slist *rs = NULL;
		CURL *c;
		CURLcode cc;
		char *next = NULL;
		double left = end - mono_now();

		memset(&h, 0, sizeof(h));
		h.out = out;
		h.max = o->max;
		h.cancel = o->cancel;
		strbuf_reset(out);
		strbuf_reset(&resolve);
		if (o->cancel && *o->cancel) {
			rc = seterr(-ECANCELED, err, "%s: cancelled", url);
			break;
		}
		if (left < 1) {
			rc = seterr(-EIO, err, "%s: no answer within %.0f s", url, timeout);
			break;
		}
		if ((rc = url_parts(cur.buf, 0, host, sizeof(host), port, sizeof(port), err)) < 0 ||
		    (rc = resolve_checked(host, port, o->allow, &h, &resolve, err)) < 0)
			break;
		c = curl_easy_init();
		if (!c) {
			rc = seterr(-EIO, err, "libcurl: cannot start");
			break;
		}
		if (resolve.len)
			rs = curl_slist_append(NULL, resolve.buf);
		curl_easy_setopt(c, CURLOPT_URL, cur.buf);
		curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
		curl_easy_setopt(c, CURLOPT_PROXY, "");
		curl_easy_setopt(c, CURLOPT_RESOLVE, rs);
		curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
		curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, &h);
		curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(left < 10 ? left * 1000 : 10000));
		curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(left * 1000));
		curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(c, CURLOPT_USERAGENT, "tlblab/0.1");
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, &h);
		curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(c, CURLOPT_XFERINFODATA, &h);
		cc = curl_easy_perform(c);
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, ret_http);
		if (cc == CURLE_OK && *ret_http >= 300 && *ret_http < 400 &&
		    curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &next) == CURLE_OK && next) {
			strbuf_reset(&cur);
			strbuf_addstr(&cur, next);
		}
		curl_easy_cleanup(c);
		curl_slist_free_all(rs);
		if (cc == CURLE_ABORTED_BY_CALLBACK || (o->cancel && *o->cancel))
			rc = seterr(-ECANCELED, err, "%s: cancelled", url);
		else if (h.too_big)
			rc = seterr(-EFBIG, err, "%s: larger than %zu bytes", url, o->max);
		else if (cc != CURLE_OK)
			rc = seterr(-EIO, err, "%s: %s", url, curl_easy_strerror(cc));
		else if (*ret_http >= 400)
			rc = seterr(-EIO, err, "%s: HTTP %ld", url, *ret_http);
		else if (*ret_http >= 300 && *ret_http < 400 && next)
			continue;	/* the next hop, checked like the first */
		else if (*ret_http >= 300)
			rc = seterr(-EIO, err, "%s: HTTP %ld without a Location", url, *ret_http);
		break;
	}
	if (hop == MAX_HOPS)
		rc = seterr(-EIO, err, "%s: more than %d redirects", url, MAX_HOPS - 1);
	if (rc < 0)
		strbuf_reset(out);
	strbuf_release(&cur);
	strbuf_release(&resolve);
	return rc;
}

int fetch_url_allowed(const char *url, char *const *allow, struct strbuf *err)
{
	char host[HOST_MAX + 3], port[8];
	struct strbuf resolve = STRBUF_INIT, why = STRBUF_INIT;
	struct hop h;
	int rc;

	memset(&h, 0, sizeof(h));
	if ((rc = url_parts(url, 1, host, sizeof(host), port, sizeof(port), err)) == 0 &&
	    (rc = resolve_checked(host, port, allow, &h, &resolve, &why)) < 0)
		strbuf_seterr(err, "host %s: %s", host, why.buf);
	strbuf_release(&resolve);
	strbuf_release(&why);
	return rc;
}
