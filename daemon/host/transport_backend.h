#ifndef TLBLAB_TRANSPORT_BACKEND_H
#define TLBLAB_TRANSPORT_BACKEND_H

#include <stddef.h>

#include "strbuf.h"
#include "transport.h"

/*
 * What the transport backends (transport_local.c, transport_ssh.c) share,
 * implemented in transport_cmd.c. Not for use outside the transport module:
 * stages see only transport.h.
 */

/*
 * Where a command's output goes while it runs: stdout split into lines for
 * req->on_line (cut at max_line, the rest of the line dropped) or kept in
 * res->out; stderr kept in res->err. Both keep at most max_output bytes,
 * the tail, so a chatty command cannot grow the daemon without bound.
 */
struct exec_sink {
	const struct exec_req *req;
	struct exec_result *res;
	size_t max_line;
	size_t max_output;
	struct strbuf line;	/* the stdout line being assembled */
	int line_truncated;
};

/* Feeds stdout bytes. Returns 0, or -ECANCELED when on_line asked to stop. */
int transport_exec_sink_out(struct exec_sink *s, const void *data, size_t len);
/* Feeds stderr bytes. */
void transport_exec_sink_err(struct exec_sink *s, const void *data, size_t len);
/* At end of output: hands a last unterminated line to on_line and trims
 * the kept buffers to max_output. 0 or -ECANCELED. */
int transport_exec_sink_finish(struct exec_sink *s);
void transport_exec_sink_release(struct exec_sink *s);

/*
 * What every backend's exec does first: prepares sink for req and res,
 * puts the short form of argv (for messages) in cmd and the deadline
 * (start + req->timeout, or 0 for none) in *ret_deadline. 0, or -EINVAL
 * with a message when there is no command; sink is ready to release
 * either way.
 */
int transport_exec_begin(struct transport *t, const struct exec_req *req, struct exec_result *res,
	       struct exec_sink *sink, struct strbuf *cmd, double start,
	       double *ret_deadline, struct strbuf *err);
/* The message of a command cancelled by req->cancel or stopped by its
 * on_line; returns -ECANCELED. */
int transport_exec_cancelled(struct transport *t, const struct exec_req *req, const char *cmd,
		   struct strbuf *err);
/* The message of a command that ran past its deadline; returns -ETIMEDOUT. */
int transport_exec_timed_out(struct transport *t, const char *cmd, double start, struct strbuf *err);

/* Appends argv as one POSIX shell command line, every element quoted. */
void transport_cmdline(struct strbuf *sb, const char *const *argv);
/* A short form of argv for messages: the command line, cut at 160 bytes. */
void transport_cmd_short(struct strbuf *sb, const char *const *argv);

/*
 * Creates a temporary file next to path (same directory, so a rename onto
 * path is atomic), O_CLOEXEC, mode 0600. Returns the descriptor and its
 * name in tmp, or a negative errno.
 */
int transport_tmpfile(const char *path, struct strbuf *tmp);

#endif
