#ifndef TLBLAB_NOTIFY_H
#define TLBLAB_NOTIFY_H

#include <stddef.h>

#include "strbuf.h"

/*
 * Webhook deliveries: one POST of a JSON body to a configured URL, and the
 * rules around it. What is delivered, to whom and when is the caller's
 * (the store keeps every delivery and its attempts); this module makes one
 * attempt and says how long to wait before the next.
 *
 * A delivery carries these headers:
 *   Content-Type: application/json
 *   X-Tlblab-Event: change_point | bisection | job
 *   X-Tlblab-Delivery: the delivery's id (the same on every attempt)
 *   X-Tlblab-Signature: sha256=HEX   when the hook has a secret: the
 *       HMAC-SHA256 of the body under the secret, in lower-case hex, as
 *       GitHub's webhooks sign theirs; a receiver recomputes and compares.
 *
 * Redirects are not followed and proxies from the environment are not
 * used (the URL is the configuration's, and goes where it says); a reply
 * of 2xx is a delivery, anything else an attempt that failed.
 */

#define NOTIFY_SIGNATURE_LEN 64		/* hex digits of an HMAC-SHA256 */

/* The lower-case hex HMAC-SHA256 of body[0..len) under secret, into
 * out[NOTIFY_SIGNATURE_LEN + 1]. 0, or -EIO when the library fails. */
int notify_sign(const char *secret, const void *body, size_t len, char *out);

struct notify_attempt {
	const char *url;	/* http or https */
	const char *event;	/* the X-Tlblab-Event value: [a-z_]+ */
	long long delivery;	/* the X-Tlblab-Delivery value */
	const char *secret;	/* or NULL: unsigned */
	double timeout;		/* seconds for the whole attempt; 0: 10 */
};

/*
 * Makes one attempt to POST body[0..len). 0 when the receiver answered
 * 2xx; -EIO otherwise, with err saying what happened (curl's words, or
 * "HTTP 503"), -EINVAL for a URL that is not http(s) or an event that is
 * not [a-z_]+. *ret_http is the HTTP status, 0 when there was none.
 */
int notify_post(const struct notify_attempt *a, const void *body, size_t len, long *ret_http,
		struct strbuf *err);

/* Seconds to wait after failed attempt number `attempt` (1-based): first
 * (a hook's retry:, 10 s by default), doubling, at most an hour. */
double notify_backoff(int attempt, double first);

#endif
