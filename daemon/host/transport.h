#ifndef TLBLAB_TRANSPORT_H
#define TLBLAB_TRANSPORT_H

#include <signal.h>
#include <stddef.h>

#include "config.h"
#include "strbuf.h"

/*
 * How the daemon runs commands and moves files on a builder or a lab
 * machine. One interface, backends behind a table of function pointers,
 * each registered by its own file (backend.h; the endpoint's transport):
 * `local` (fork/exec on the daemon's host) and `ssh` (libssh: key auth, host
 * key checked strictly against a known_hosts file or a pinned SHA256
 * fingerprint, exec with exit status and separate stdout/stderr, SFTP).
 * A stage never knows which one it has.
 *
 * Commands are argv vectors, never shell strings. The ssh backend must turn
 * argv into one remote command line: it quotes every element for a POSIX
 * shell (single quotes, with ' written as '\''), so no element can be
 * interpreted by the remote shell. Callers still validate what they pass.
 *
 * Errors: functions return 0, or a negative errno with err describing the
 * failure and naming the host. The codes tell the caller how to classify:
 *   -EKEYREJECTED  the host key is unknown, or changed (err says which)
 *   -ETIMEDOUT     the operation passed its timeout
 *   -ECONNREFUSED, -EHOSTUNREACH, -ENETUNREACH, -ECONNRESET, -EPIPE
 *                  the host is down or went away
 *   -EACCES        authentication failed
 *   -EIO, -ENOENT, -EFBIG, ...  other failures
 * A command that runs and exits non-zero is not a transport error: exec
 * returns 0 and the status is in the result.
 *
 * Threads: a transport object is used by one thread at a time.
 */

struct transport;

/* Called for each line of stdout (without the newline). A line longer than
 * max_line is cut to max_line bytes and `truncated` is 1; the rest of that
 * line is discarded. Return < 0 to stop: the command is killed and exec
 * returns -ECANCELED (as when exec_req.cancel is set). */
typedef int (*transport_line_fn)(void *arg, const char *line, size_t len, int truncated);

struct exec_req {
	const char *const *argv;	/* NULL-terminated */
	const void *input;		/* stdin contents, may be NULL */
	size_t input_len;
	double timeout;			/* seconds for the whole command; 0: none */
	transport_line_fn on_line;	/* NULL: stdout is collected in result.out */
	void *arg;
	size_t max_line;		/* 0: 64 KiB */
	size_t max_output;		/* cap of result.out/err kept; 0: 1 MiB (the
					 * rest is read and dropped, keeping the tail) */
	/* While *pause is set the command's whole process tree is stopped
	 * (SIGSTOP) and its timeout does not run; it continues (SIGCONT) when
	 * *pause is cleared. local only: NULL elsewhere (see pausable). */
	volatile sig_atomic_t *pause;
	/* When *cancel becomes set the command's process tree is killed within
	 * CANCEL_POLL_MS and exec returns -ECANCELED, whether or not it prints
	 * anything (a silent fetch, a hung boot). NULL: never. */
	volatile sig_atomic_t *cancel;
};

/* How often a running command looks at its cancel flag. */
#define CANCEL_POLL_MS 200

struct exec_result {
	int status;		/* exit status 0..255, or -1 when killed by a signal */
	int signal;		/* the signal when status is -1 */
	struct strbuf out;	/* stdout when on_line is NULL (tail, capped) */
	struct strbuf err;	/* stderr (tail, capped) */
};

void transport_exec_result_init(struct exec_result *r);
void transport_exec_result_release(struct exec_result *r);

struct transport_ops {
	const char *name;
	int (*open)(struct transport *t, struct strbuf *err);
	int (*exec)(struct transport *t, const struct exec_req *req,
		    struct exec_result *res, struct strbuf *err);
	/* Copies a local file to remote_path with mode, atomically (a
	 * temporary name, then rename). */
	int (*upload)(struct transport *t, const char *local_path, const char *remote_path,
		      int mode, struct strbuf *err);
	/* Copies remote_path to local_path; -EFBIG past max bytes. */
	int (*download)(struct transport *t, const char *remote_path, const char *local_path,
			size_t max, struct strbuf *err);
	void (*close)(struct transport *t);
};

/*
 * A transport's ops, from its functions named after it (PREFIX_OP):
 * TRANSPORT_OPS(toy, "toy") is `.name = "toy", .open = toy_open, .exec =
 * toy_exec, .upload = toy_upload, .download = toy_download, .close =
 * toy_close`. Every transport has all five (a close with nothing to free
 * does nothing), so there is no optional op to add; like boot.h's
 * BOOT_OPS it gives the members and leaves the braces to the transport:
 *
 *	static const struct transport_ops ops = { TRANSPORT_OPS(local, "local") };
 */
#define TRANSPORT_OPS(p, n) .name = (n), .open = p##_open, .exec = p##_exec, .upload = p##_upload, \
			    .download = p##_download, .close = p##_close

struct transport {
	const struct transport_ops *ops;
	const struct cfg_endpoint *ep;	/* not owned; outlives the transport */
	char label[96];			/* "ssh root@127.0.0.2:2222" for messages */
	double connect_timeout;		/* seconds; default 10 */
	void *priv;
};

/*
 * Creates a transport for ep and connects it (ssh: TCP, host key check,
 * public key auth). Returns 0 and *ret (owned by the caller, freed with
 * transport_free), or a negative errno with err.
 */
int transport_open(const struct cfg_endpoint *ep, double connect_timeout,
		   struct transport **ret, struct strbuf *err);
void transport_free(struct transport *t);

static inline int transport_exec(struct transport *t, const struct exec_req *req,
				 struct exec_result *res, struct strbuf *err)
{
	return t->ops->exec(t, req, res, err);
}

static inline int transport_upload(struct transport *t, const char *local_path,
				   const char *remote_path, int mode, struct strbuf *err)
{
	return t->ops->upload(t, local_path, remote_path, mode, err);
}

static inline int transport_download(struct transport *t, const char *remote_path,
				     const char *local_path, size_t max, struct strbuf *err)
{
	return t->ops->download(t, remote_path, local_path, max, err);
}

/* Quotes one argument for a POSIX shell into sb (appends). */
void transport_shell_quote(struct strbuf *sb, const char *arg);

/* True when err code means the host is unreachable or went away (infra). */
int transport_error_is_infra(int code);

/*
 * The variables of the daemon's own environment a local command gets on
 * purpose, besides run_command's minimal environment (util.h): the knobs
 * kernels/build/build.sh reads on a local builder (NULL-terminated). Nothing
 * else of the daemon's environment reaches a command; over SSH the remote
 * side's sshd makes the environment.
 */
extern const char *const transport_local_env[];

/* Whether exec_req.pause works over ep's transport. */
static inline int transport_pausable(const struct cfg_endpoint *ep)
{
	return config_endpoint_pausable(ep);
}

/* The endpoint of the daemon's own host (transport local), for what runs
 * here whatever the lab says (a power cycle's command, a git ls-remote). */
const struct cfg_endpoint *transport_here(void);

#endif
