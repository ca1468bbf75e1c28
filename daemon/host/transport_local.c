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

static int local_exec(struct transport *t, const struct exec_req *req,
		      struct exec_result *res, struct strbuf *err)
{
	struct run_command child = RUN_COMMAND_INIT;
	int in_w = -1, out_r = -1, err_r = -1;	/* our ends of its stdin, stdout, stderr */
	sigset_t pipe_set, old_set;
	struct exec_sink sink;
	struct strbuf cmd = STRBUF_INIT;
	const char *input = req->input;
	size_t in_off = 0;
	double start = mono_now(), deadline = 0;
	char *buf = NULL;
	pid_t pid = -1;
	int wstatus = 0, reaped = 0, saw_epipe = 0, r = 0, stopped = 0;
	double stopped_at = 0;
	char **env = NULL;

	r = transport_exec_begin(t, req, res, &sink, &cmd, start, &deadline, err);
	if (r < 0)
		goto out;

	child.argv = req->argv;
	child.in = input ? RUN_FD_PIPE : RUN_FD_NULL;
	child.out = RUN_FD_PIPE;
	child.err = RUN_FD_PIPE;
	child.new_group = 1;
	child.default_signals = 1;
	env = run_command_env_minimal(transport_local_env);
	child.env = (const char *const *)env;
	buf = malloc(IO_CHUNK);
	if (!buf)
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
	pid = child.pid;
	in_w = child.in_fd;
	out_r = child.out_fd;
	err_r = child.err_fd;
	if (in_w >= 0 && (set_nonblock(in_w) < 0 || req->input_len == 0))
		close_fd(&in_w);
	set_nonblock(out_r);
	set_nonblock(err_r);

	while (in_w >= 0 || out_r >= 0 || err_r >= 0) {
		struct pollfd pfd[3];
		int nfd = 0, ms, i_in = -1, i_out = -1, i_err = -1, n;

		if (in_w >= 0) {
			pfd[nfd] = (struct pollfd){ .fd = in_w, .events = POLLOUT };
			i_in = nfd++;
		}
		if (out_r >= 0) {
			pfd[nfd] = (struct pollfd){ .fd = out_r, .events = POLLIN };
			i_out = nfd++;
		}
		if (err_r >= 0) {
			pfd[nfd] = (struct pollfd){ .fd = err_r, .events = POLLIN };
			i_err = nfd++;
		}
		if (req->pause && *req->pause && !stopped) {
			kill(-pid, SIGSTOP);
			stopped = 1;
			stopped_at = mono_now();
		} else if (req->pause && !*req->pause && stopped) {
			kill(-pid, SIGCONT);
			stopped = 0;
			if (deadline)
				deadline += mono_now() - stopped_at;
		}
		if (req->cancel && *req->cancel)
			goto cancelled;
		ms = stopped ? -1 : ms_until(deadline);
		if (ms == 0)
			goto timed_out;
		if (req->pause && (ms < 0 || ms > PAUSE_POLL_MS))
			ms = PAUSE_POLL_MS;
		if (req->cancel && (ms < 0 || ms > CANCEL_POLL_MS))
			ms = CANCEL_POLL_MS;
		n = poll(pfd, (nfds_t)nfd, ms);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			goto sys_fail_kill;
		}
		if (n == 0)
			continue;

		if (i_in >= 0 && pfd[i_in].revents) {
			size_t want = req->input_len - in_off;
			ssize_t w;

			if (want > IO_CHUNK)
				want = IO_CHUNK;
			w = write(in_w, input + in_off, want);
			if (w < 0 && errno == EPIPE) {
				saw_epipe = 1;
				close_fd(&in_w);
			} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
				close_fd(&in_w);
			} else if (w > 0) {
				in_off += (size_t)w;
				if (in_off == req->input_len)
					close_fd(&in_w);
			}
		}
		if (i_out >= 0 && pfd[i_out].revents) {
			ssize_t rd = read(out_r, buf, IO_CHUNK);

			if (rd > 0) {
				if (transport_exec_sink_out(&sink, buf, (size_t)rd) < 0)
					goto cancelled;
			} else if (rd == 0 || (errno != EAGAIN && errno != EINTR)) {
				close_fd(&out_r);
			}
		}
		if (i_err >= 0 && pfd[i_err].revents) {
			ssize_t rd = read(err_r, buf, IO_CHUNK);

			if (rd > 0)
				transport_exec_sink_err(&sink, buf, (size_t)rd);
			else if (rd == 0 || (errno != EAGAIN && errno != EINTR))
				close_fd(&err_r);
		}
	}

	/* output is closed; the child is normally gone or about to be */
	for (long nap = 1000000;; nap = nap < 50000000 ? nap * 2 : nap) {
		pid_t w = waitpid(pid, &wstatus, WNOHANG);

		if (w == pid) {
			reaped = 1;
			break;
		}
		if (w < 0 && errno != EINTR)
			goto sys_fail_kill;
		if (ms_until(deadline) == 0)
			goto timed_out;
		if (req->cancel && *req->cancel)
			goto cancelled;
		nanosleep(&(struct timespec){ 0, nap }, NULL);
	}
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
	kill_and_reap(pid, &wstatus);
	reaped = 1;
	transport_exec_sink_finish(&sink);
	r = transport_exec_timed_out(t, cmd.buf, start, err);
	goto out_mask;
cancelled:
	kill_and_reap(pid, &wstatus);
	reaped = 1;
	r = transport_exec_cancelled(t, req, cmd.buf, err);
	goto out_mask;
sys_fail_kill:
	r = -errno;
	kill_and_reap(pid, &wstatus);
	reaped = 1;
	strbuf_seterr(err, "%s: `%s`: %s", t->label, cmd.buf, strerror(-r));
out_mask:
	if (saw_epipe) {
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
	if (pid > 0 && !reaped)
		kill_and_reap(pid, &wstatus);
	close_fd(&in_w);
	close_fd(&out_r);
	close_fd(&err_r);
	free(buf);
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

const struct transport_ops transport_local = {
	.name = "local",
	.open = local_open,
	.exec = local_exec,
	.upload = local_upload,
	.download = local_download,
	.close = local_close,
};
