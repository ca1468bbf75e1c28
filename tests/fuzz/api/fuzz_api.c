/*
 * What the API parses from outside (daemon/api/api.h, daemon/sched/submit.h), without
 * the server: the first byte chooses the parser. 'q': the rest is a query
 * string ("state=done&limit=5"), split and %-decoded as libmicrohttpd does,
 * for GET /api/v1/jobs and the ids and counts other routes read; else the
 * whole input is a POST /api/v1/jobs body, read against a small lab
 * (fuzz_lab.h) so a valid request gets past the lookups. A body goes up
 * to 1 MiB, lab.max_body's default.
 */
#include <microhttpd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz_body.h"
#include "../fuzz_lab.h"
#include "api.h"
#include "config.h"
#include "store.h"
#include "submit.h"
#include "util.h"
#include "banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#define MAX_ARGS 32

struct args {
	char *key[MAX_ARGS], *value[MAX_ARGS];
	int n;
};

/* As libmicrohttpd's lookup: the first argument of that name; empty is absent (api_reply.c). */
static const char *get(void *ctx, const char *key)
{
	struct args *a = ctx;
	int i;

	for (i = 0; i < a->n; i++)
		if (!strcmp(a->key[i], key))
			return *a->value[i] ? a->value[i] : NULL;
	return NULL;
}

static void fuzz_query(const char *data, size_t size)
{
	char *q = strndup(data, size), *p = q, *amp;
	struct strbuf err = STRBUF_INIT;
	struct job_filter f;
	struct args a = { 0 };
	int i;

	if (!q)
		return;
	while (p && a.n < MAX_ARGS) {
		char *eq;

		if ((amp = strchr(p, '&')))
			*amp = '\0';
		if ((eq = strchr(p, '=')))
			*eq = '\0';
		MHD_http_unescape(p);
		a.key[a.n] = p;
		a.value[a.n] = eq ? eq + 1 : p + strlen(p);
		MHD_http_unescape(a.value[a.n]);
		a.n++;
		p = amp ? amp + 1 : NULL;
	}
	if (api_job_filter_parse(get, &a, &f, &err) < 0 && !err.len)
		abort();	/* a refusal always says why */
	/* the ids of /compare?base=&patched= and /samples?stage=, the log's tail */
	for (i = 0; i < a.n; i++) {
		uint64_t id;
		long n;

		parse_u64(a.value[i], &id);
		parse_int_range(a.value[i], 1, 1000000, &n);
	}
	strbuf_release(&err);
	free(q);
}

static void fuzz_body(const char *data, size_t size)
{
	struct strbuf err = STRBUF_INIT, subject = STRBUF_INIT;
	struct job_request req;
	json_t *body = NULL;
	int rc = submit_request_parse(fuzz_cfg, data, size, &body, &req, &subject, &err);

	if (rc == 0 && (!req.suite || req.boots < 1 || req.boots > 100))
		abort();
	fuzz_body_kept(rc, body, &err);
	strbuf_release(&subject);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size && data[0] == 'q')
		fuzz_query((const char *)data + 1, size - 1);
	else
		fuzz_body((const char *)data, size);
	return 0;
}
