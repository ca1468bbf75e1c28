/*
 * The `local` transport: commands run on the daemon's own host.
 *
 * exec starts a child (run_command, util.h) that leads a new process group, so a
 * timeout or a cancel can kill the whole tree it started (kill(-pid)), not
 * only the direct child. It gets run_command's minimal environment and
 * transport_local_env, none of the daemon's other variables. The parent runs one poll() loop over three pipes:
 * it writes stdin as the child makes room and reads stdout and stderr as
 * they come, so a command that writes a lot before reading its input (or
 * the other way round) cannot deadlock against us. SIGPIPE is blocked in
 * the calling thread while the loop writes, and one that a write raised is
 * consumed before returning, so a child that exits without reading its
 * input is an ordinary EPIPE, not a dead daemon.
 *
 * upload and download are copies through a temporary file in the target's
 * directory followed by rename(), so a reader never sees half a file.
 */
#include "transport.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "transport_backend.h"
#include "util.h"
#include "banned.h"

#define IO_CHUNK (64u << 10)

/* what kernels/build/ (build.sh's set) reads from its environment: grep it for ${TLBLAB_ and ${CCACHE */
const char *const transport_local_env[] = {
	"TLBLAB_FETCH_TIMEOUT", "TLBLAB_FETCH_MAX_KB", "TLBLAB_MIN_FREE_MB", "TLBLAB_NO_CONFIG_CACHE",
	"CCACHE_DIR", NULL,
};

static int local_open(struct transport *t, struct strbuf *err)
{
	(void)t;
	(void)err;
	return 0;
}

static void local_close(struct transport *t)
{
	(void)t;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/* Kills the child's process group and reaps the child. */
static void kill_and_reap(pid_t pid, int *wstatus)
{
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, wstatus, 0) < 0 && errno == EINTR)
		;
}

/* How often a pausable command looks at its pause flag. */
#define PAUSE_POLL_MS 100

static int ms_until(double deadline)
{
	double left;

	if (!deadline)
		return -1;
	left = deadline - mono_now();
	if (left <= 0)
		return 0;
	return (int)ceil(left * 1000.0);
}

/* A running command's pipes and clocks, for the loop that feeds its stdin
 * and drains its output (pump) and the one that reaps it (reap). */
struct pump {
	const struct exec_req *req;
	struct exec_sink *sink;
	pid_t pid;
	int in_w, out_r, err_r;		/* our ends of its stdin, stdout, stderr */
	size_t in_off;			/* of req->input written */
	double deadline;		/* 0: none; moved on by the time it was stopped */
	double stopped_at;
	int stopped;			/* SIGSTOPped for req->pause */
	int saw_epipe;			/* a write raised SIGPIPE on this thread */
	char *buf;			/* IO_CHUNK bytes */
};

enum pump_end { PUMP_DONE, PUMP_CANCELLED, PUMP_TIMED_OUT, PUMP_FAILED /* errno says */ };

/* Stops the command's process group while req->pause is set, and lets it
 * go on (its deadline moved by the pause) when it is cleared. */
static void pump_pause(struct pump *p)
{
	if (p->req->pause && *p->req->pause && !p->stopped) {
		kill(-p->pid, SIGSTOP);
		p->stopped = 1;
		p->stopped_at = mono_now();
	} else if (p->req->pause && !*p->req->pause && p->stopped) {
		kill(-p->pid, SIGCONT);
		p->stopped = 0;
		if (p->deadline)
			p->deadline += mono_now() - p->stopped_at;
	}
}

/* Writes the next piece of req->input; closes stdin at its end or when
 * the command closed its side. */
static void pump_input(struct pump *p)
{
	size_t want = p->req->input_len - p->in_off;
	ssize_t w;

	if (want > IO_CHUNK)
		want = IO_CHUNK;
	w = write(p->in_w, (const char *)p->req->input + p->in_off, want);
	if (w < 0 && errno == EPIPE) {
		p->saw_epipe = 1;
		close_fd(&p->in_w);
	} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
		close_fd(&p->in_w);
	} else if (w > 0) {
		p->in_off += (size_t)w;
		if (p->in_off == p->req->input_len)
			close_fd(&p->in_w);
	}
}

/* Feeds stdin and drains stdout and stderr until all three are closed. */
static enum pump_end pump_io(struct pump *p)
{
	const struct exec_req *req = p->req;

	while (p->in_w >= 0 || p->out_r >= 0 || p->err_r >= 0) {
		struct pollfd pfd[3];
		int nfd = 0, ms, i_in = -1, i_out = -1, i_err = -1, n;

		if (p->in_w >= 0) {
			pfd[nfd] = (struct pollfd){ .fd = p->in_w, .events = POLLOUT };
			i_in = nfd++;
		}
		if (p->out_r >= 0) {
			pfd[nfd] = (struct pollfd){ .fd = p->out_r, .events = POLLIN };
			i_out = nfd++;
		}
		if (p->err_r >= 0) {
			pfd[nfd] = (struct pollfd){ .fd = p->err_r, .events = POLLIN };
			i_err = nfd++;
		}
		pump_pause(p);
		if (req->cancel && *req->cancel)
			return PUMP_CANCELLED;
		ms = p->stopped ? -1 : ms_until(p->deadline);
		if (ms == 0)
			return PUMP_TIMED_OUT;
		if (req->pause && (ms < 0 || ms > PAUSE_POLL_MS))
			ms = PAUSE_POLL_MS;
		if (req->cancel && (ms < 0 || ms > CANCEL_POLL_MS))
			ms = CANCEL_POLL_MS;
		n = poll(pfd, (nfds_t)nfd, ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return PUMP_FAILED;
		if (n == 0)
			continue;
		if (i_in >= 0 && pfd[i_in].revents)
			pump_input(p);
		if (i_out >= 0 && pfd[i_out].revents) {
			ssize_t rd = read(p->out_r, p->buf, IO_CHUNK);

			if (rd > 0) {
				if (transport_exec_sink_out(p->sink, p->buf, (size_t)rd) < 0)
					return PUMP_CANCELLED;
			} else if (rd == 0 || (errno != EAGAIN && errno != EINTR)) {
				close_fd(&p->out_r);
			}
		}
		if (i_err >= 0 && pfd[i_err].revents) {
			ssize_t rd = read(p->err_r, p->buf, IO_CHUNK);

			if (rd > 0)
				transport_exec_sink_err(p->sink, p->buf, (size_t)rd);
			else if (rd == 0 || (errno != EAGAIN && errno != EINTR))
				close_fd(&p->err_r);
		}
	}
	return PUMP_DONE;
}

/* Output is closed: the child is normally gone or about to be. Waits for
 * it (within the deadline, while not cancelled) into *wstatus. */
static enum pump_end pump_reap(struct pump *p, int *wstatus)
{
	for (long nap = 1000000;; nap = nap < 50000000 ? nap * 2 : nap) {
		pid_t w = waitpid(p->pid, wstatus, WNOHANG);

		if (w == p->pid)
			return PUMP_DONE;
		if (w < 0 && errno != EINTR)
			return PUMP_FAILED;
		if (ms_until(p->deadline) == 0)
			return PUMP_TIMED_OUT;
		if (p->req->cancel && *p->req->cancel)
			return PUMP_CANCELLED;
		nanosleep(&(struct timespec){ 0, nap }, NULL);
	}
}

static int local_exec(struct transport *t, const struct exec_req *req,
		      struct exec_result *res, struct strbuf *err)
{
	struct run_command child = RUN_COMMAND_INIT;
	struct pump p = { .req = req, .pid = -1, .in_w = -1, .out_r = -1, .err_r = -1 };
	sigset_t pipe_set, old_set;
	struct exec_sink sink;
	struct strbuf cmd = STRBUF_INIT;
	double start = mono_now();
	enum pump_end end;
	int wstatus = 0, reaped = 0, r = 0;
	char **env = NULL;

	p.sink = &sink;
	r = transport_exec_begin(t, req, res, &sink, &cmd, start, &p.deadline, err);
	if (r < 0)
		goto out;

	child.argv = req->argv;
	child.in = req->input ? RUN_FD_PIPE : RUN_FD_NULL;
	child.out = RUN_FD_PIPE;
	child.err = RUN_FD_PIPE;
	child.new_group = 1;
	child.default_signals = 1;
	env = run_command_env_minimal(transport_local_env);
	child.env = (const char *const *)env;
	p.buf = malloc(IO_CHUNK);
	if (!p.buf)
		abort();

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);

	r = run_command_start(&child);
	if (r < 0) {
		pthread_sigmask(SIG_SETMASK, &old_set, NULL);
		errno = -r;
		goto sys_fail;
	}
	p.pid = child.pid;
	p.in_w = child.in_fd;
	p.out_r = child.out_fd;
	p.err_r = child.err_fd;
	if (p.in_w >= 0 && (set_nonblock(p.in_w) < 0 || req->input_len == 0))
		close_fd(&p.in_w);
	set_nonblock(p.out_r);
	set_nonblock(p.err_r);

	end = pump_io(&p);
	if (end == PUMP_DONE)
		end = pump_reap(&p, &wstatus);
	if (end == PUMP_TIMED_OUT)
		goto timed_out;
	if (end == PUMP_CANCELLED)
		goto cancelled;
	if (end == PUMP_FAILED)
		goto sys_fail_kill;
	reaped = 1;
	if (WIFEXITED(wstatus)) {
		res->status = WEXITSTATUS(wstatus);
	} else if (WIFSIGNALED(wstatus)) {
		res->status = -1;
		res->signal = WTERMSIG(wstatus);
	}
	if (transport_exec_sink_finish(&sink) < 0)
		goto cancelled;
	r = 0;
	goto out_mask;

timed_out:
	kill_and_reap(p.pid, &wstatus);
	reaped = 1;
	transport_exec_sink_finish(&sink);
	r = transport_exec_timed_out(t, cmd.buf, start, err);
	goto out_mask;
cancelled:
	if (!reaped)
		kill_and_reap(p.pid, &wstatus);
	reaped = 1;
	r = transport_exec_cancelled(t, req, cmd.buf, err);
	goto out_mask;
sys_fail_kill:
	r = -errno;
	kill_and_reap(p.pid, &wstatus);
	reaped = 1;
	strbuf_seterr(err, "%s: `%s`: %s", t->label, cmd.buf, strerror(-r));
out_mask:
	if (p.saw_epipe) {
		/* a write to a closed pipe raised SIGPIPE on this thread */
		sigset_t pending;

		if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE))
			sigtimedwait(&pipe_set, NULL, &(struct timespec){ 0, 0 });
	}
	pthread_sigmask(SIG_SETMASK, &old_set, NULL);
	goto out;
sys_fail:
	r = -errno;
	strbuf_seterr(err, "%s: `%s`: %s", t->label, cmd.buf, strerror(-r));
out:
	if (p.pid > 0 && !reaped)
		kill_and_reap(p.pid, &wstatus);
	close_fd(&p.in_w);
	close_fd(&p.out_r);
	close_fd(&p.err_r);
	free(p.buf);
	run_command_env_free(env);
	transport_exec_sink_release(&sink);
	strbuf_release(&cmd);
	return r;
}

/*
 * Copies src to a new file at dst (temporary name, fchmod, fsync, rename).
 * mode < 0 keeps the source's permission bits. max == 0: no limit. Returns
 * 0 or a negative errno; *what names the step that failed.
 */
static int copy_file(const char *src, const char *dst, int mode, size_t max,
		     const char **what)
{
	struct strbuf tmp = STRBUF_INIT;
	struct stat st;
	char *buf = NULL;
	size_t total = 0;
	int in = -1, fd = -1, r;

	*what = "open source";
	in = open(src, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (in < 0 || fstat(in, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
		goto out;
	}
	*what = "size";
	if (max && (size_t)st.st_size > max) {
		r = -EFBIG;
		goto out;
	}
	*what = "create temporary file";
	fd = transport_tmpfile(dst, &tmp);
	if (fd < 0) {
		r = fd;
		goto out;
	}
	buf = malloc(IO_CHUNK);
	if (!buf)
		abort();
	for (;;) {
		ssize_t n = read(in, buf, IO_CHUNK);

		if (n < 0 && errno == EINTR)
			continue;
		*what = "read";
		if (n < 0) {
			r = -errno;
			goto out;
		}
		if (n == 0)
			break;
		total += (size_t)n;
		if (max && total > max) {
			*what = "size";
			r = -EFBIG;
			goto out;
		}
		*what = "write";
		r = write_all(fd, buf, (size_t)n);
		if (r < 0)
			goto out;
	}
	*what = "chmod";
	if (fchmod(fd, mode >= 0 ? (mode_t)mode & 07777 : st.st_mode & 07777) < 0) {
		r = -errno;
		goto out;
	}
	*what = "write";
	if (fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		r = -errno;
		goto out;
	}
	fd = -1;
	*what = "rename";
	if (rename(tmp.buf, dst) < 0) {
		r = -errno;
		goto out;
	}
	strbuf_reset(&tmp);
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	if (tmp.len)
		unlink(tmp.buf);
	if (in >= 0)
		close(in);
	free(buf);
	strbuf_release(&tmp);
	return r;
}

static int local_upload(struct transport *t, const char *local_path, const char *remote_path,
			int mode, struct strbuf *err)
{
	const char *what;
	int r = copy_file(local_path, remote_path, mode, 0, &what);

	if (r < 0)
		strbuf_seterr(err, "%s: upload %s -> %s: %s: %s", t->label, local_path,
			      remote_path, what, strerror(-r));
	return r;
}

static int local_download(struct transport *t, const char *remote_path, const char *local_path,
			  size_t max, struct strbuf *err)
{
	const char *what;
	int r = copy_file(remote_path, local_path, -1, max ? max : (size_t)-1, &what);

	if (r == -EFBIG)
		strbuf_seterr(err, "%s: download %s: larger than %zu bytes", t->label,
			      remote_path, max);
	else if (r < 0)
		strbuf_seterr(err, "%s: download %s -> %s: %s: %s", t->label, remote_path,
			      local_path, what, strerror(-r));
	return r;
}

static const struct transport_ops ops = { TRANSPORT_OPS(local, "local") };

static const struct backend transport_local_backend = {
	.kind = BACKEND_TRANSPORT,
	.name = "local",
	.what = "commands and files on the daemon's own host (fork/exec), its environment kept out",
	.flags = BACKEND_THIS_HOST | BACKEND_PAUSABLE,
	.ops = &ops,
};
BACKEND_REGISTER(transport_local_backend)

const struct cfg_endpoint *transport_here(void)
{
	static const struct cfg_endpoint here = { .transport = &transport_local_backend };

	return &here;
}
