#ifndef TLBLAB_FETCH_H
#define TLBLAB_FETCH_H

#include <signal.h>
#include <stddef.h>
#include <sys/socket.h>

#include "strbuf.h"

/*
 * Downloads what a submitter names by URL (a patch: kind url), with libcurl,
 * as a client that cannot be pointed at the lab itself. A URL is
 * submitter's input, and the daemon's host sees what the internet does not:
 * its own services on loopback, the lab's private network, a cloud's
 * metadata service on a link-local address. So:
 *
 * - every address the URL's host resolves to must be public: loopback,
 *   link-local, private (RFC 1918, unique-local, CGNAT), unspecified,
 *   multicast and reserved addresses are refused unless lab.fetch_allow
 *   names the host or holds a CIDR that contains the address;
 * - curl connects only to the addresses checked (CURLOPT_RESOLVE for the
 *   name, and CURLOPT_OPENSOCKETFUNCTION refuses any other address), so a
 *   DNS answer that changes between the check and the connect (rebinding)
 *   changes nothing;
 * - redirects are followed here, one hop at a time (at most 5), each new
 *   host checked the same way; proxies from the environment are not used;
 * - http and https only, a size limit, an overall time limit, and a
 *   cancel flag looked at while the transfer runs.
 */

/* Fetch limits and policy. allow: lab.fetch_allow (NULL-terminated, may be
 * NULL), entries as fetch_allow_entry_valid accepts them. */
struct fetch_opts {
	size_t max;				/* bytes; past it the fetch fails */
	double timeout;				/* seconds for all hops; 0: 30 */
	char *const *allow;
	volatile sig_atomic_t *cancel;		/* may be NULL */
};

/*
 * Fetches url into out. 0; or a negative errno with err naming the URL:
 * -EPERM (an address refused by the policy, or a bad URL), -ECANCELED
 * (*cancel was set), -EFBIG (larger than max), -EIO (anything else:
 * DNS, connection, TLS, an HTTP status of 400 or more). *ret_http is the
 * last HTTP status (0 if none).
 */
int fetch_url(const char *url, const struct fetch_opts *o, struct strbuf *out, long *ret_http,
	      struct strbuf *err);

/*
 * Whether the lab may fetch from url's host, as fetch_url decides for each
 * hop (every address the host resolves to, under allow), for a URL another
 * program fetches: a branch URL, https:// or git://, which git fetches
 * (build.sh, with redirects off), or a patch URL checked when it is
 * submitted. 0 when it may; -EPERM with err naming the host and why
 * ("host 10.1.2.3: refused: 10.1.2.3 is a private address (not in
 * lab.fetch_allow)"), also for a URL that is not one; -EIO with err when
 * the host does not resolve here.
 */
int fetch_url_allowed(const char *url, char *const *allow, struct strbuf *err);

/* One lab.fetch_allow entry: an IPv4 or IPv6 address, a CIDR (address/len)
 * or a host name (letters, digits, '.', '-'; matched whole, any case).
 * 1 when valid. */
int fetch_allow_entry_valid(const char *entry);

/*
 * Whether a fetch may connect to sa, reached by the name host (the URL's
 * host as written, or NULL): 1 allowed, 0 refused with why ("127.0.0.1 is
 * a loopback address"). IPv4-mapped IPv6 addresses are judged as IPv4.
 */
int fetch_addr_allowed(const struct sockaddr *sa, const char *host, char *const *allow, struct strbuf *why);

#endif
