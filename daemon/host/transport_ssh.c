/*
 * The `ssh` transport, on libssh. (Over 800 lines on purpose: one backend,
 * a session's connect, host-key check, exec and SFTP share its state.)
 *
 * Trust: the host key is checked before anything else is sent, against the
 * endpoint's own known_hosts file (never ~/.ssh/known_hosts nor the global
 * one: both are pointed at /dev/null) or against a pinned SHA256
 * fingerprint, and an unknown or changed key is refused with -EKEYREJECTED.
 * Keys are never added on the fly: a lab that learns keys by itself would
 * happily run kernels for whoever answers on that address. ~/.ssh/config
 * is not read either, so what the lab config says is what happens.
 *
 * Time: libssh's blocking calls wait at most the session timeout, which we
 * set to the connect timeout. exec never blocks on the channel: it writes
 * stdin only as far as the remote window allows, drains stdout and stderr
 * without blocking and otherwise waits in short slices, checking the
 * command's deadline between them. TCP keepalive and TCP_USER_TIMEOUT on
 * the socket make a host that vanishes without a reset look like an error
 * within a minute even inside libssh's own loops (SFTP).
 *
 * A dead connection is not repaired: every later call fails fast and the
 * caller opens a new transport.
 */
#include "transport.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include "backend.h"
#include "settings.h"
#include "transport_backend.h"
#include "util.h"
#include "banned.h"

#define IO_CHUNK	(32u << 10)	/* SFTP request and channel write size */
#define POLL_SLICE_MS	50

struct ssh_priv {
	ssh_session s;
	sftp_session sftp;
};

static struct ssh_priv *priv(struct transport *t)
{
	return t->priv;
}

/*
 * libssh reports socket failures as text ("Socket error: Connection
 * refused", "Timeout connecting to ..."); turn the ones that say the host
 * is down or gone into the codes transport.h promises.
 */
static int ssh_code(ssh_session s, int dflt)
{
	const char *m = ssh_get_error(s);

	if (!m)
		return dflt;
	if (strcasestr(m, "refused"))
		return -ECONNREFUSED;
	if (strcasestr(m, "timeout") || strcasestr(m, "timed out"))
		return -ETIMEDOUT;
	if (strcasestr(m, "no route"))
		return -EHOSTUNREACH;
	if (strcasestr(m, "network is unreachable"))
		return -ENETUNREACH;
	if (strcasestr(m, "resolve"))
		return -EHOSTUNREACH;
	if (strcasestr(m, "reset") || strcasestr(m, "disconnected") ||
	    strcasestr(m, "closed") || strcasestr(m, "broken pipe") ||
	    strcasestr(m, "connection lost"))
		return -ECONNRESET;
	if (s && !ssh_is_connected(s))
		return -ECONNRESET;
	return dflt;
}

static void set_timeout(ssh_session s, double seconds)
{
	long sec, usec;

	if (seconds < 0.001)
		seconds = 0.001;
	sec = (long)seconds;
	usec = (long)((seconds - (double)sec) * 1e6);
	ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &sec);
	ssh_options_set(s, SSH_OPTIONS_TIMEOUT_USEC, &usec);
}

/*
 * The connected socket: TCP keepalive and a user timeout (see the top),
 * and close-on-exec, which libssh does not set: no command the daemon
 * starts, nor a build's sandbox, gets to hold or read another session.
 */
static void set_socket_options(ssh_session s)
{
	int fd = ssh_get_fd(s), one = 1, idle = 15, intvl = 5, cnt = 3;
	unsigned int user_timeout = 45000;

	if (fd < 0)
		return;
	fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof(user_timeout));
}

/* "SHA256:base64", without '=' padding, as ssh-keygen -l prints it. */
static int server_fingerprint(ssh_session s, struct strbuf *fp)
{
	ssh_key key = NULL;
	unsigned char *hash = NULL;
	size_t hlen = 0;
	char *txt = NULL;
	int r = -1;

	if (ssh_get_server_publickey(s, &key) != SSH_OK)
		goto out;
	if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen) != 0)
		goto out;
	txt = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen);
	if (!txt)
		goto out;
	strbuf_addstr(fp, txt);
	while (fp->len && fp->buf[fp->len - 1] == '=')
		strbuf_setlen(fp, fp->len - 1);
	r = 0;
out:
	ssh_string_free_char(txt);
	ssh_clean_pubkey_hash(&hash);
	ssh_key_free(key);
	return r;
}

static void host_port(const struct transport *t, struct strbuf *sb)
{
	const struct cfg_endpoint *ep = t->ep;
	int port = ep->port > 0 ? ep->port : 22;

	if (strchr(ep->host, ':'))
		strbuf_addf(sb, "[%s]:%d", ep->host, port);
	else
		strbuf_addf(sb, "%s:%d", ep->host, port);
}

static int check_host_key(struct transport *t, struct strbuf *err)
{
	const struct cfg_endpoint *ep = t->ep;
	ssh_session s = priv(t)->s;
	struct strbuf hp = STRBUF_INIT, fp = STRBUF_INIT, want = STRBUF_INIT;
	int r = -EKEYREJECTED;

	host_port(t, &hp);
	if (server_fingerprint(s, &fp) < 0) {
		strbuf_seterr(err, "%s: cannot read the server's host key: %s", t->label,
			      ssh_get_error(s));
		goto out;
	}
	if (!ep->known_hosts && !ep->host_key) {
		strbuf_seterr(err, "%s: no known_hosts or host_key configured, cannot verify "
			      "host key %s; refusing", t->label, fp.buf);
		goto out;
	}
	if (ep->known_hosts) {
		switch (ssh_session_is_known_server(s)) {
		case SSH_KNOWN_HOSTS_OK:
			break;
		case SSH_KNOWN_HOSTS_CHANGED:
			strbuf_seterr(err, "%s: host key for %s has CHANGED (known_hosts %s); "
				      "refusing (server key %s)", t->label, hp.buf,
				      ep->known_hosts, fp.buf);
			goto out;
		case SSH_KNOWN_HOSTS_OTHER:
			strbuf_seterr(err, "%s: host key for %s has CHANGED: known_hosts %s "
				      "holds a key of another type for it; refusing "
				      "(server key %s)", t->label, hp.buf, ep->known_hosts, fp.buf);
			goto out;
		case SSH_KNOWN_HOSTS_NOT_FOUND:
			strbuf_seterr(err, "%s: host key for %s is unknown (not in %s: the file "
				      "does not exist); refusing (server key %s)", t->label,
				      hp.buf, ep->known_hosts, fp.buf);
			goto out;
		case SSH_KNOWN_HOSTS_UNKNOWN:
			strbuf_seterr(err, "%s: host key for %s is unknown (not in %s); refusing "
				      "(server key %s)", t->label, hp.buf, ep->known_hosts, fp.buf);
			goto out;
		case SSH_KNOWN_HOSTS_ERROR:
		default:
			strbuf_seterr(err, "%s: cannot check host key for %s against %s: %s; "
				      "refusing", t->label, hp.buf, ep->known_hosts,
				      ssh_get_error(s));
			goto out;
		}
	}
	if (ep->host_key) {
		strbuf_addstr(&want, ep->host_key);
		while (want.len && want.buf[want.len - 1] == '=')
			strbuf_setlen(&want, want.len - 1);
		if (strcmp(want.buf, fp.buf) != 0) {
			strbuf_seterr(err, "%s: host key for %s does not match the pinned "
				      "fingerprint: server has %s, configured %s; refusing",
				      t->label, hp.buf, fp.buf, ep->host_key);
			goto out;
		}
	}
	r = 0;
out:
	strbuf_release(&hp);
	strbuf_release(&fp);
	strbuf_release(&want);
	return r;
}

static int authenticate(struct transport *t, struct strbuf *err)
{
	const struct cfg_endpoint *ep = t->ep;
	ssh_session s = priv(t)->s;
	ssh_key key = NULL;
	int rc, r = -EACCES;

	if (!ep->identity || !*ep->identity) {
		strbuf_seterr(err, "%s: no identity (private key) configured", t->label);
		goto out;
	}
	rc = ssh_pki_import_privkey_file(ep->identity, NULL, NULL, NULL, &key);
	if (rc != SSH_OK) {
		strbuf_seterr(err, "%s: cannot load identity %s (missing, unreadable, not a "
			      "private key, or protected by a passphrase)", t->label, ep->identity);
		goto out;
	}
	rc = ssh_userauth_publickey(s, NULL, key);
	switch (rc) {
	case SSH_AUTH_SUCCESS:
		r = 0;
		break;
	case SSH_AUTH_DENIED:
	case SSH_AUTH_PARTIAL:
		strbuf_seterr(err, "%s: authentication failed: public key %s was %s", t->label,
			      ep->identity, rc == SSH_AUTH_DENIED ? "denied" :
			      "not enough (the server wants more methods)");
		break;
	default:
		r = ssh_code(s, -EACCES);
		strbuf_seterr(err, "%s: authentication failed: %s", t->label, ssh_get_error(s));
		break;
	}
out:
	ssh_key_free(key);
	return r;
}

static int ssh_open(struct transport *t, struct strbuf *err)
{
	const struct cfg_endpoint *ep = t->ep;
	struct ssh_priv *p;
	const char *user = ep->user && *ep->user ? ep->user : "root";
	unsigned int port = ep->port > 0 ? (unsigned int)ep->port : 22;
	int verbosity = SSH_LOG_NOLOG;
	bool no = false;
	int r;

	p = calloc(1, sizeof(*p));
	if (!p)
		abort();
	t->priv = p;
	p->s = ssh_new();
	if (!p->s) {
		strbuf_seterr(err, "%s: cannot create a libssh session", t->label);
		return -ENOMEM;
	}
	if (ssh_options_set(p->s, SSH_OPTIONS_LOG_VERBOSITY, &verbosity) < 0 ||
	    ssh_options_set(p->s, SSH_OPTIONS_PROCESS_CONFIG, &no) < 0 ||
	    ssh_options_set(p->s, SSH_OPTIONS_HOST, ep->host) < 0 ||
	    ssh_options_set(p->s, SSH_OPTIONS_PORT, &port) < 0 ||
	    ssh_options_set(p->s, SSH_OPTIONS_USER, user) < 0 ||
	    ssh_options_set(p->s, SSH_OPTIONS_KNOWNHOSTS,
			    ep->known_hosts ? ep->known_hosts : "/dev/null") < 0 ||
	    ssh_options_set(p->s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null") < 0) {
		strbuf_seterr(err, "%s: bad ssh option: %s", t->label, ssh_get_error(p->s));
		return -EINVAL;
	}
	set_timeout(p->s, t->connect_timeout);

	if (ssh_connect(p->s) != SSH_OK) {
		r = ssh_code(p->s, -EIO);
		strbuf_seterr(err, "%s: cannot connect: %s", t->label, ssh_get_error(p->s));
		return r;
	}
	set_socket_options(p->s);
	r = check_host_key(t, err);
	if (r < 0)
		return r;
	return authenticate(t, err);
}

static void ssh_close(struct transport *t)
{
	struct ssh_priv *p = priv(t);

	if (!p)
		return;
	if (p->sftp)
		sftp_free(p->sftp);
	if (p->s) {
		if (ssh_is_connected(p->s))
			ssh_disconnect(p->s);
		ssh_free(p->s);
	}
	free(p);
	t->priv = NULL;
}

/* ---- exec ---- */

struct exit_info {
	int got_status;
	int status;
	int got_signal;
	char signal[24];
};

static void on_exit_status(ssh_session s, ssh_channel ch, int status, void *arg)
{
	struct exit_info *x = arg;

	(void)s;
	(void)ch;
	x->got_status = 1;
	x->status = status;
}

static void on_exit_signal(ssh_session s, ssh_channel ch, const char *sig, int core,
			   const char *errmsg, const char *lang, void *arg)
{
	struct exit_info *x = arg;

	(void)s;
	(void)ch;
	(void)core;
	(void)errmsg;
	(void)lang;
	x->got_signal = 1;
	snprintf(x->signal, sizeof(x->signal), "%s", sig ? sig : "");
}

/* RFC 4254 signal names (without SIG) to numbers; 0 when unknown. */
static int signal_number(const char *name)
{
	static const struct { const char *name; int sig; } map[] = {
		{ "ABRT", SIGABRT }, { "ALRM", SIGALRM }, { "BUS", SIGBUS },
		{ "FPE", SIGFPE }, { "HUP", SIGHUP }, { "ILL", SIGILL },
		{ "INT", SIGINT }, { "KILL", SIGKILL }, { "PIPE", SIGPIPE },
		{ "QUIT", SIGQUIT }, { "SEGV", SIGSEGV }, { "SYS", SIGSYS },
		{ "TERM", SIGTERM }, { "TRAP", SIGTRAP }, { "USR1", SIGUSR1 },
		{ "USR2", SIGUSR2 }, { "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(map); i++)
		if (!strcmp(map[i].name, name))
			return map[i].sig;
	return 0;
}

static int ms_left(double deadline)
{
	double left;

	if (!deadline)
		return POLL_SLICE_MS;
	left = deadline - mono_now();
	if (left <= 0)
		return 0;
	return left * 1000 < POLL_SLICE_MS ? (int)ceil(left * 1000) : POLL_SLICE_MS;
}

/* Drops the channel; the "signal" request first, which OpenSSH honours
 * for non-root sessions only (hence remote_kill). */
static void channel_abort(ssh_channel ch)
{
	if (ssh_channel_is_open(ch)) {
		ssh_channel_request_send_signal(ch, "KILL");
		ssh_channel_close(ch);
	}
}

/*
 * The remote shell's pid arrives as the first line of stdout (see
 * exec_channel). Consumes bytes of p until that line is complete; returns
 * how many. *state: 0 reading, 1 got *pid, -1 not a pid (the bytes taken
 * so far are in pb and belong to the output).
 */
static size_t pid_feed(struct strbuf *pb, long *pid, int *state, const char *p, size_t n)
{
	const char *nl = memchr(p, '\n', n);
	size_t k = nl ? (size_t)(nl - p) : n;

	if (pb->len + k > 24) {
		*state = -1;
		return 0;
	}
	strbuf_add(pb, p, k);
	if (!nl)
		return n;
	*state = parse_int_range(pb->buf, 2, 0x7fffffff, pid) ? -1 : 1;
	if (*state < 0)
		strbuf_addch(pb, '\n');
	return k + 1;
}

static int exec_channel(struct transport *t, const struct exec_req *req,
			struct exec_result *res, struct strbuf *err, int want_pid);

/*
 * Kills the remote command's process group from a second channel. sshd
 * starts each session in its own session (setsid), so the shell's pid is
 * the group of everything the command started.
 */
static void remote_kill(struct transport *t, long pid)
{
	char target[32];
	const char *argv[] = { "kill", "-9", target, NULL };
	struct exec_req req = { .argv = argv, .timeout = 3 };
	struct exec_result res;
	struct strbuf err = STRBUF_INIT;

	snprintf(target, sizeof(target), "-%ld", pid);
	transport_exec_result_init(&res);
	exec_channel(t, &req, &res, &err, 0);
	transport_exec_result_release(&res);
	strbuf_release(&err);
}

static int ssh_exec(struct transport *t, const struct exec_req *req,
		    struct exec_result *res, struct strbuf *err)
{
	return exec_channel(t, req, res, err, 1);
}

/*
 * Runs argv on a new channel. With want_pid, the remote command line is
 * `printf '%s\n' "$$" && exec ARGV...`: the shell reports its pid, which
 * exec keeps for the command, so a timeout or a cancel can kill the whole
 * remote process group (closing the channel alone leaves it running).
 * Like the quoting, this needs a POSIX login shell on the remote side.
 */
/* A command on a channel: what the loop that feeds its stdin and drains
 * its output (channel_pump) keeps between turns. */
struct chan_pump {
	const struct exec_req *req;
	struct exec_sink *sink;
	ssh_channel ch;
	size_t in_off;			/* of req->input written */
	double deadline;		/* 0: none */
	int eof[2], eof_sent;		/* stdout's and stderr's EOF; ours sent */
	struct strbuf pid_buf;		/* the pid line's bytes so far */
	int pid_state;			/* pid_feed's: 0 reading it, 1 read, <0 none */
	long pid;
	char *buf;			/* IO_CHUNK bytes */
};

enum chan_end { CHAN_DONE, CHAN_CANCELLED, CHAN_TIMED_OUT, CHAN_FAILED /* ssh_get_error says */ };

/* Writes what the window allows of req->input, then our EOF once it is
 * all written. *progress is set when a byte went. */
static enum chan_end channel_input(struct chan_pump *p, int *progress)
{
	const struct exec_req *req = p->req;
	uint32_t win;
	size_t n;
	int rc;

	if (!p->eof_sent && (!req->input || p->in_off == req->input_len)) {
		if (ssh_channel_send_eof(p->ch) != SSH_OK && ssh_channel_is_open(p->ch))
			return CHAN_FAILED;
		p->eof_sent = 1;
	}
	if (p->eof_sent)
		return CHAN_DONE;
	win = ssh_channel_window_size(p->ch);
	n = req->input_len - p->in_off;
	if (n > IO_CHUNK)
		n = IO_CHUNK;
	if (n > win)
		n = win;
	if (!n)
		return CHAN_DONE;
	rc = ssh_channel_write(p->ch, (const char *)req->input + p->in_off, (uint32_t)n);
	if (rc < 0) {
		/* the command closed its end: like EPIPE */
		if (ssh_channel_is_open(p->ch) && !ssh_channel_is_eof(p->ch))
			return CHAN_FAILED;
		p->in_off = req->input_len;
	} else {
		p->in_off += (size_t)rc;
		*progress |= rc > 0;
	}
	return CHAN_DONE;
}

/* Reads what stdout (i 0) and stderr (i 1) have into the sink, the pid
 * line first when one was asked for. */
static enum chan_end channel_output(struct chan_pump *p, int *progress)
{
	for (int i = 0; i < 2; i++) {
		size_t skip = 0;
		int rc;

		if (p->eof[i])
			continue;
		rc = ssh_channel_read_nonblocking(p->ch, p->buf, IO_CHUNK, i);
		if (rc == SSH_EOF) {
			p->eof[i] = 1;
			continue;
		}
		if (rc < 0)
			return CHAN_FAILED;
		if (rc == 0)
			continue;
		*progress = 1;
		if (i == 1) {
			transport_exec_sink_err(p->sink, p->buf, (size_t)rc);
			continue;
		}
		if (p->pid_state == 0) {
			skip = pid_feed(&p->pid_buf, &p->pid, &p->pid_state, p->buf, (size_t)rc);
			if (p->pid_state < 0 && transport_exec_sink_out(p->sink, p->pid_buf.buf, p->pid_buf.len) < 0)
				return CHAN_CANCELLED;
		}
		if (transport_exec_sink_out(p->sink, p->buf + skip, (size_t)rc - skip) < 0)
			return CHAN_CANCELLED;
	}
	return CHAN_DONE;
}

/* Runs the channel until both outputs end (or the deadline, a cancel, an
 * error). */
static enum chan_end channel_pump(struct chan_pump *p)
{
	const struct exec_req *req = p->req;
	enum chan_end e;

	for (;;) {
		int progress = 0, ms;

		if (p->deadline && mono_now() >= p->deadline)
			return CHAN_TIMED_OUT;
		if (req->cancel && *req->cancel)
			return CHAN_CANCELLED;
		if ((e = channel_input(p, &progress)) != CHAN_DONE || (e = channel_output(p, &progress)) != CHAN_DONE)
			return e;
		if (p->eof[0] && p->eof[1])
			break;
		if (progress)
			continue;
		ms = ms_left(p->deadline);
		if (ms == 0)
			return CHAN_TIMED_OUT;
		if (req->cancel && (ms < 0 || ms > CANCEL_POLL_MS))
			ms = CANCEL_POLL_MS;
		/* wakes early for stdout or EOF; stderr waits for the slice */
		if (ssh_channel_poll_timeout(p->ch, ms, 0) == SSH_ERROR)
			return CHAN_FAILED;
	}
	if (p->pid_state == 0 && transport_exec_sink_out(p->sink, p->pid_buf.buf, p->pid_buf.len) < 0)
		return CHAN_CANCELLED;
	if (transport_exec_sink_finish(p->sink) < 0)
		return CHAN_CANCELLED;
	return CHAN_DONE;
}

static int exec_channel(struct transport *t, const struct exec_req *req,
			struct exec_result *res, struct strbuf *err, int want_pid)
{
	ssh_session s = priv(t)->s;
	struct ssh_channel_callbacks_struct cb;
	struct exit_info xi = { 0 };
	struct exec_sink sink;
	struct strbuf cmd = STRBUF_INIT, line = STRBUF_INIT;
	struct chan_pump p = { .req = req, .sink = &sink, .pid_buf = STRBUF_INIT, .pid_state = want_pid ? 0 : 1 };
	double start = mono_now();
	enum chan_end e;
	int r = 0;
	const char *what = "";

	r = transport_exec_begin(t, req, res, &sink, &cmd, start, &p.deadline, err);
	if (r < 0)
		goto out;
	if (want_pid)
		strbuf_addstr(&line, "printf '%s\\n' \"$$\" && exec ");
	transport_cmdline(&line, req->argv);
	p.buf = malloc(IO_CHUNK);
	if (!p.buf)
		abort();

	what = "open a channel";
	p.ch = ssh_channel_new(s);
	if (!p.ch)
		goto ssh_fail;
	memset(&cb, 0, sizeof(cb));
	ssh_callbacks_init(&cb);
	cb.userdata = &xi;
	cb.channel_exit_status_function = on_exit_status;
	cb.channel_exit_signal_function = on_exit_signal;
	ssh_set_channel_callbacks(p.ch, &cb);
	if (ssh_channel_open_session(p.ch) != SSH_OK)
		goto ssh_fail;
	what = "start the command";
	if (ssh_channel_request_exec(p.ch, line.buf) != SSH_OK)
		goto ssh_fail;

	what = "run";
	e = channel_pump(&p);
	if (e == CHAN_TIMED_OUT)
		goto timed_out;
	if (e == CHAN_CANCELLED)
		goto cancelled;
	if (e == CHAN_FAILED)
		goto ssh_fail;

	/* the exit status follows EOF; wait for it within the deadline */
	if (!xi.got_status && !xi.got_signal) {
		double left = p.deadline ? p.deadline - mono_now() : t->connect_timeout;

		if (left <= 0)
			goto timed_out;
		set_timeout(s, left < t->connect_timeout ? left : t->connect_timeout);
		ssh_channel_get_exit_status(p.ch);
		set_timeout(s, t->connect_timeout);
	}
	if (xi.got_signal) {
		res->status = -1;
		res->signal = signal_number(xi.signal);
	} else if (xi.got_status) {
		res->status = xi.status;
	} else if (!ssh_is_connected(s)) {
		what = "wait for the exit status";
		goto ssh_fail;
	} else if (p.deadline && mono_now() >= p.deadline) {
		goto timed_out;
	} else {
		strbuf_seterr(err, "%s: `%s`: no exit status from the server", t->label, cmd.buf);
		r = -EIO;
		goto out;
	}
	r = 0;
	goto out;

timed_out:
	r = transport_exec_timed_out(t, cmd.buf, start, err);
	if (want_pid && p.pid_state == 1 && ssh_is_connected(s))
		remote_kill(t, p.pid);
	channel_abort(p.ch);
	transport_exec_sink_finish(&sink);
	goto out;
cancelled:
	if (want_pid && p.pid_state == 1 && ssh_is_connected(s))
		remote_kill(t, p.pid);
	channel_abort(p.ch);
	r = transport_exec_cancelled(t, req, cmd.buf, err);
	goto out;
ssh_fail:
	r = ssh_code(s, -EIO);
	if (!ssh_is_connected(s) && r == -EIO)
		r = -ECONNRESET;
	strbuf_seterr(err, "%s: `%s`: cannot %s: %s", t->label, cmd.buf, what,
		      ssh_get_error(s));
out:
	if (p.ch)
		ssh_channel_free(p.ch);
	free(p.buf);
	transport_exec_sink_release(&sink);
	strbuf_release(&cmd);
	strbuf_release(&line);
	strbuf_release(&p.pid_buf);
	return r;
}

/* ---- SFTP ---- */

static int sftp_code(struct ssh_priv *p)
{
	if (!ssh_is_connected(p->s))
		return ssh_code(p->s, -ECONNRESET);
	switch (sftp_get_error(p->sftp)) {
	case SSH_FX_NO_SUCH_FILE:
	case SSH_FX_NO_SUCH_PATH:
		return -ENOENT;
	case SSH_FX_PERMISSION_DENIED:
	case SSH_FX_WRITE_PROTECT:
		return -EACCES;
	case SSH_FX_FILE_ALREADY_EXISTS:
		return -EEXIST;
	case SSH_FX_NO_CONNECTION:
	case SSH_FX_CONNECTION_LOST:
		return -ECONNRESET;
	default:
		return ssh_code(p->s, -EIO);
	}
}

static const char *sftp_text(struct ssh_priv *p, int code)
{
	if (code == -ENOENT || code == -EACCES || code == -EEXIST)
		return strerror(-code);
	return ssh_get_error(p->s);
}

static int sftp_ready(struct transport *t, struct strbuf *err)
{
	struct ssh_priv *p = priv(t);
	int r;

	if (p->sftp)
		return 0;
	p->sftp = sftp_new(p->s);
	if (!p->sftp || sftp_init(p->sftp) != SSH_OK) {
		r = ssh_code(p->s, -EIO);
		strbuf_seterr(err, "%s: cannot start SFTP: %s", t->label, ssh_get_error(p->s));
		if (p->sftp)
			sftp_free(p->sftp);
		p->sftp = NULL;
		return r;
	}
	return 0;
}

static int ssh_upload(struct transport *t, const char *local_path, const char *remote_path,
		      int mode, struct strbuf *err)
{
	struct ssh_priv *p = priv(t);
	struct strbuf tmp = STRBUF_INIT;
	sftp_file f = NULL;
	char *buf = NULL;
	int fd = -1, r, tmp_made = 0;
	const char *what;

	r = sftp_ready(t, err);
	if (r < 0)
		return r;
	fd = open(local_path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		r = -errno;
		strbuf_seterr(err, "%s: upload: cannot open %s: %s", t->label, local_path,
			      strerror(-r));
		goto out;
	}
	strbuf_addf(&tmp, "%s.tmp-%ld-%llx", remote_path, (long)getpid(),
		    (unsigned long long)(mono_now() * 1e9));
	what = "create";
	f = sftp_open(p->sftp, tmp.buf, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (!f)
		goto sftp_fail;
	tmp_made = 1;
	buf = malloc(IO_CHUNK);
	if (!buf)
		abort();
	for (;;) {
		ssize_t n = read(fd, buf, IO_CHUNK), off = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			strbuf_seterr(err, "%s: upload: cannot read %s: %s", t->label,
				      local_path, strerror(-r));
			goto out;
		}
		if (n == 0)
			break;
		what = "write";
		while (off < n) {
			ssize_t w = sftp_write(f, buf + off, (size_t)(n - off));

			if (w <= 0)
				goto sftp_fail;
			off += w;
		}
	}
	what = "close";
	if (sftp_close(f) != SSH_NO_ERROR) {
		f = NULL;
		goto sftp_fail;
	}
	f = NULL;
	what = "chmod";
	if (sftp_chmod(p->sftp, tmp.buf, (mode_t)mode & 07777) < 0)
		goto sftp_fail;
	what = "rename";
	if (sftp_rename(p->sftp, tmp.buf, remote_path) < 0) {
		/* SFTP v3 rename does not replace: remove the target, retry */
		if (!ssh_is_connected(p->s))
			goto sftp_fail;
		sftp_unlink(p->sftp, remote_path);
		if (sftp_rename(p->sftp, tmp.buf, remote_path) < 0)
			goto sftp_fail;
	}
	tmp_made = 0;
	r = 0;
	goto out;
sftp_fail:
	r = sftp_code(p);
	strbuf_seterr(err, "%s: upload %s -> %s: %s %s: %s", t->label, local_path,
		      remote_path, what, tmp.buf, sftp_text(p, r));
out:
	if (f)
		sftp_close(f);
	if (tmp_made && ssh_is_connected(p->s))
		sftp_unlink(p->sftp, tmp.buf);
	if (fd >= 0)
		close(fd);
	free(buf);
	strbuf_release(&tmp);
	return r;
}

static int ssh_download(struct transport *t, const char *remote_path, const char *local_path,
			size_t max, struct strbuf *err)
{
	struct ssh_priv *p = priv(t);
	struct strbuf tmp = STRBUF_INIT;
	sftp_attributes attr = NULL;
	sftp_file f = NULL;
	mode_t mode = 0644;
	size_t total = 0;
	char *buf = NULL;
	int fd = -1, r;

	if (!max)
		max = (size_t)-1;
	r = sftp_ready(t, err);
	if (r < 0)
		return r;
	f = sftp_open(p->sftp, remote_path, O_RDONLY, 0);
	if (!f)
		goto sftp_fail;
	attr = sftp_fstat(f);
	if (attr) {
		if ((attr->flags & SSH_FILEXFER_ATTR_SIZE) && attr->size > max)
			goto too_big;
		if (attr->flags & SSH_FILEXFER_ATTR_PERMISSIONS)
			mode = attr->permissions & 0777;
	}
	fd = transport_tmpfile(local_path, &tmp);
	if (fd < 0) {
		r = fd;
		strbuf_seterr(err, "%s: download: cannot create a file next to %s: %s",
			      t->label, local_path, strerror(-r));
		goto out;
	}
	buf = malloc(IO_CHUNK);
	if (!buf)
		abort();
	for (;;) {
		ssize_t n = sftp_read(f, buf, IO_CHUNK);

		if (n < 0)
			goto sftp_fail;
		if (n == 0)
			break;
		total += (size_t)n;
		if (total > max)
			goto too_big;
		r = write_all(fd, buf, (size_t)n);
		if (r < 0)
			goto local_fail;
	}
	if (fchmod(fd, mode) < 0 || fsync(fd) < 0)
		goto local_errno;
	r = close(fd);
	fd = -1;
	if (r < 0)
		goto local_errno;
	if (rename(tmp.buf, local_path) < 0)
		goto local_errno;
	strbuf_reset(&tmp);
	r = 0;
	goto out;

too_big:
	r = -EFBIG;
	strbuf_seterr(err, "%s: download %s: larger than %zu bytes", t->label, remote_path, max);
	goto out;
local_errno:
	r = -errno;
local_fail:
	strbuf_seterr(err, "%s: download %s: cannot write %s: %s", t->label, remote_path,
		      local_path, strerror(-r));
	goto out;
sftp_fail:
	r = sftp_code(p);
	strbuf_seterr(err, "%s: download %s: %s", t->label, remote_path, sftp_text(p, r));
out:
	if (fd >= 0)
		close(fd);
	if (tmp.len)
		unlink(tmp.buf);
	if (attr)
		sftp_attributes_free(attr);
	if (f)
		sftp_close(f);
	free(buf);
	strbuf_release(&tmp);
	return r;
}

static const struct transport_ops ops = { TRANSPORT_OPS(ssh, "ssh") };

static const char *const endpoint_keys[] = {
	"host", "port", "user", "identity", "known_hosts", "host_key", NULL
};

/* A host, a key to log in with, and its host key to check, strictly. */
static void check_endpoint(struct cfg_section *sec, const struct cfg_endpoint *ep)
{
	if (!ep->host && !settings_has(sec, "host"))
		settings_missing(sec, "host", " (required with transport ssh)");
	if (!ep->identity && !settings_has(sec, "identity"))
		settings_missing(sec, "identity", " (required with transport ssh)");
	if (!settings_has(sec, "known_hosts") && !settings_has(sec, "host_key"))
		settings_error(sec, NULL, "missing key 'known_hosts' or 'host_key' in %s "
				  "(transport ssh checks the host key strictly)", settings_what(sec));
}

static const struct backend transport_ssh_backend = {
	.kind = BACKEND_TRANSPORT,
	.name = "ssh",
	.what = "libssh: key authentication, the host key checked strictly, exec and SFTP",
	.endpoint_keys = endpoint_keys,
	.check_endpoint = check_endpoint,
	.ops = &ops,
};
BACKEND_REGISTER(transport_ssh_backend)
