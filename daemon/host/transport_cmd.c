#include "transport.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "transport_backend.h"
#include "util.h"
#include "banned.h"

#define DEFAULT_MAX_LINE	(64u << 10)
#define DEFAULT_MAX_OUTPUT	(1u << 20)
#define DEFAULT_CONNECT_TIMEOUT	10.0

int transport_open(const struct cfg_endpoint *ep, double connect_timeout,
		   struct transport **ret, struct strbuf *err)
{
	const struct transport_ops *ops;
	struct transport *t;
	int r;

	if (!ep) {
		strbuf_seterr(err, "transport: no endpoint");
		return -EINVAL;
	}
	if (!ep->transport || !(ops = ep->transport->ops)) {
		strbuf_seterr(err, "transport: none configured");
		return -EINVAL;
	}
	if (!config_endpoint_local(ep) && (!ep->host || !*ep->host)) {
		strbuf_seterr(err, "%s: no host configured", ops->name);
		return -EINVAL;
	}

	t = xcalloc(1, sizeof(*t));
	t->ops = ops;
	t->ep = ep;
	t->connect_timeout = connect_timeout > 0 ? connect_timeout : DEFAULT_CONNECT_TIMEOUT;
	if (config_endpoint_local(ep)) {
		snprintf(t->label, sizeof(t->label), "%s", ops->name);
	} else {
		const char *user = ep->user && *ep->user ? ep->user : "root";
		int v6 = strchr(ep->host, ':') != NULL;

		snprintf(t->label, sizeof(t->label), "%s %s@%s%s%s:%d", ops->name, user,
			 v6 ? "[" : "", ep->host, v6 ? "]" : "", ep->port > 0 ? ep->port : 22);
	}

	r = ops->open(t, err);
	if (r < 0) {
		transport_free(t);
		return r;
	}
	*ret = t;
	return 0;
}

void transport_free(struct transport *t)
{
	if (!t)
		return;
	if (t->ops && t->ops->close)
		t->ops->close(t);
	free(t);
}

void transport_exec_result_init(struct exec_result *r)
{
	r->status = 0;
	r->signal = 0;
	strbuf_init(&r->out, 0);
	strbuf_init(&r->err, 0);
}

void transport_exec_result_release(struct exec_result *r)
{
	if (!r)
		return;
	strbuf_release(&r->out);
	strbuf_release(&r->err);
}

void transport_shell_quote(struct strbuf *sb, const char *arg)
{
	const char *p;

	strbuf_addch(sb, '\'');
	for (p = arg; *p; p++) {
		if (*p == '\'')
			strbuf_addstr(sb, "'\\''");
		else
			strbuf_addch(sb, *p);
	}
	strbuf_addch(sb, '\'');
}

int transport_error_is_infra(int code)
{
	if (code > 0)
		code = -code;
	switch (code) {
	case -ETIMEDOUT:
	case -ECONNREFUSED:
	case -EHOSTUNREACH:
	case -ENETUNREACH:
	case -ECONNRESET:
	case -ECONNABORTED:
	case -EPIPE:
	case -EIO:
		return 1;
	default:
		/* -EKEYREJECTED, -EACCES and the rest: a configuration or
		 * input problem that a retry would only repeat */
		return 0;
	}
}

/* ---- helpers for the backends (transport_backend.h) ---- */

void transport_cmdline(struct strbuf *sb, const char *const *argv)
{
	size_t i;

	for (i = 0; argv && argv[i]; i++) {
		if (i)
			strbuf_addch(sb, ' ');
		transport_shell_quote(sb, argv[i]);
	}
}

void transport_cmd_short(struct strbuf *sb, const char *const *argv)
{
	struct strbuf full = STRBUF_INIT;
	size_t i;

	/* plain words read better in messages; quote only what needs it */
	for (i = 0; argv && argv[i]; i++) {
		if (i)
			strbuf_addch(&full, ' ');
		if (*argv[i] && !argv[i][strcspn(argv[i], " \t\n'\"\\$`;&|<>()*?[]{}~#!")])
			strbuf_addstr(&full, argv[i]);
		else
			transport_shell_quote(&full, argv[i]);
	}
	if (full.len > 160) {
		strbuf_setlen(&full, 157);
		strbuf_addstr(&full, "...");
	}
	strbuf_add(sb, full.buf, full.len);
	strbuf_release(&full);
}

int transport_tmpfile(const char *path, struct strbuf *tmp)
{
	int fd;

	strbuf_reset(tmp);
	if (strbuf_addf(tmp, "%s.tmp-XXXXXX", path) < 0)
		return -ENAMETOOLONG;
	fd = mkostemp(tmp->buf, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return fd;
}

/* Appends to a capped buffer, keeping the tail. The buffer may run up to
 * cap + slack before the head is dropped, so the memmove is amortised. */
static void tail_add(struct strbuf *sb, size_t cap, const char *data, size_t len)
{
	size_t slack = cap < (256u << 10) ? cap : (256u << 10);

	if (len >= cap) {
		strbuf_reset(sb);
		strbuf_add(sb, data + len - cap, cap);
		return;
	}
	if (sb->len + len > cap + slack) {
		size_t keep = cap - len;

		memmove(sb->buf, sb->buf + sb->len - keep, keep);
		strbuf_setlen(sb, keep);
	}
	strbuf_add(sb, data, len);
}

static void tail_trim(struct strbuf *sb, size_t cap)
{
	if (sb->len > cap) {
		memmove(sb->buf, sb->buf + sb->len - cap, cap);
		strbuf_setlen(sb, cap);
	}
}

/* Resets res (status 0, empty out and err) and prepares s. */
static void exec_sink_init(struct exec_sink *s, const struct exec_req *req, struct exec_result *res)
{
	s->req = req;
	s->res = res;
	s->max_line = req->max_line ? req->max_line : DEFAULT_MAX_LINE;
	s->max_output = req->max_output ? req->max_output : DEFAULT_MAX_OUTPUT;
	strbuf_init(&s->line, 0);
	s->line_truncated = 0;
	res->status = 0;
	res->signal = 0;
	strbuf_reset(&res->out);
	strbuf_reset(&res->err);
	/* the buffers hold at most cap + slack (<= 2 cap): let strbuf allow it */
	if ((res->out.max ? res->out.max : STRBUF_DEFAULT_MAX) < 2 * s->max_output)
		res->out.max = 2 * s->max_output;
	if ((res->err.max ? res->err.max : STRBUF_DEFAULT_MAX) < 2 * s->max_output)
		res->err.max = 2 * s->max_output;
	if (s->max_line >= STRBUF_DEFAULT_MAX)
		s->line.max = s->max_line + 1;
}

static int sink_emit_line(struct exec_sink *s)
{
	int r = s->req->on_line(s->req->arg, s->line.buf, s->line.len, s->line_truncated);

	strbuf_reset(&s->line);
	s->line_truncated = 0;
	return r < 0 ? -ECANCELED : 0;
}

int transport_exec_sink_out(struct exec_sink *s, const void *data, size_t len)
{
	const char *p = data, *end = p + len;

	if (!s->req->on_line) {
		tail_add(&s->res->out, s->max_output, p, len);
		return 0;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		size_t room = s->max_line - s->line.len;

		if (n > room) {
			s->line_truncated = 1;
			strbuf_add(&s->line, p, room);
		} else {
			strbuf_add(&s->line, p, n);
		}
		if (!nl)
			break;
		if (sink_emit_line(s) < 0)
			return -ECANCELED;
		p = nl + 1;
	}
	return 0;
}

void transport_exec_sink_err(struct exec_sink *s, const void *data, size_t len)
{
	tail_add(&s->res->err, s->max_output, data, len);
}

int transport_exec_sink_finish(struct exec_sink *s)
{
	int r = 0;

	if (s->req->on_line && (s->line.len || s->line_truncated))
		r = sink_emit_line(s);
	tail_trim(&s->res->out, s->max_output);
	tail_trim(&s->res->err, s->max_output);
	return r;
}

void transport_exec_sink_release(struct exec_sink *s)
{
	strbuf_release(&s->line);
}

int transport_exec_begin(struct transport *t, const struct exec_req *req, struct exec_result *res,
	       struct exec_sink *sink, struct strbuf *cmd, double start,
	       double *ret_deadline, struct strbuf *err)
{
	exec_sink_init(sink, req, res);
	if (!req->argv || !req->argv[0]) {
		strbuf_seterr(err, "%s: empty command", t->label);
		return -EINVAL;
	}
	transport_cmd_short(cmd, req->argv);
	*ret_deadline = req->timeout > 0 ? start + req->timeout : 0;
	return 0;
}

int transport_exec_cancelled(struct transport *t, const struct exec_req *req, const char *cmd,
		   struct strbuf *err)
{
	strbuf_seterr(err, "%s: `%s` %s", t->label, cmd,
		      req->cancel && *req->cancel ? "cancelled" : "stopped by its output reader");
	return -ECANCELED;
}

int transport_exec_timed_out(struct transport *t, const char *cmd, double start, struct strbuf *err)
{
	strbuf_seterr(err, "%s: `%s` timed out after %.1f s", t->label, cmd, mono_now() - start);
	return -ETIMEDOUT;
}
