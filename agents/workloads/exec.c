/*
 * exec: runs an external command (argv, never a shell string) under the same
 * monitors and takes its score from its output with a named parser:
 *
 *   stress-ng    the "bogo ops/s (real time)" column of the metrics lines,
 *                summed over stressors (e.g. stress-ng --tlb-shootdown 2
 *                --metrics-brief); score unit bogo-ops/s
 *   last-number  the last number the command printed; unit "value"
 *   none         runs per second (1 / elapsed)
 *
 * The window is the command's lifetime. Its output is kept (the last
 * EXEC_KEEP bytes) for the parser and for the error message when it fails.
 *
 * The command leads a process group of its own. When it exits, whatever it
 * left running in that group is killed, so nothing of one iteration runs
 * into the next, and the window does not wait for the output pipe to close
 * (a background child may hold it open).
 */
#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"
#include "banned.h"

#define EXEC_KEEP (1u << 20)
/* without a pidfd (Linux before 5.3), how often to look for the exit */
#define EXEC_EXIT_POLL_SEC 0.01

struct ex_state {
	double score;
	double bogo_ops;
};

static struct ex_state ex;

/* Reads up to max numbers from p; returns how many. */
static int scan_numbers(const char *p, const char *eol, double *v, int max)
{
	int n = 0;

	while (p < eol && n < max) {
		char *end;
		double d;

		while (p < eol && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= eol)
			break;
		d = strtod(p, &end);
		if (end == p || (end < eol && *end != ' ' && *end != '\t'))
			break;
		v[n++] = d;
		p = end;
	}
	return n;
}

/* Whether tag occurs in [line, end). */
static int has_tag(const char *line, const char *end, const char *tag)
{
	return memmem(line, (size_t)(end - line), tag, strlen(tag)) != NULL;
}

static int parse_stress_ng(const char *out, double *ret_score, double *ret_ops, struct strbuf *err)
{
	const char *line = out;
	double score = 0, ops = 0;
	int found = 0;

	while (*line) {
		const char *eol = strchr(line, '\n');
		const char *p;

		if (!eol)
			eol = line + strlen(line);
		p = strstr(line, "] ");
		/* the tag must be this line's, before the "[pid] " */
		if (p && p < eol && !strncmp(line, "stress-ng:", 10) &&
		    (has_tag(line, p, " metrc: ") || has_tag(line, p, " info: "))) {
			const char *name = p + 2, *ne;
			double v[6];

			while (*name == ' ')
				name++;
			ne = name;
			while (ne < eol && *ne != ' ')
				ne++;
			/* skip the header rows: "stressor ..." and "(secs) ..." */
			if (ne > name && *name != '(' && strncmp(name, "stressor ", 9) &&
			    scan_numbers(ne, eol, v, 6) >= 5) {
				ops += v[0];
				score += v[4];
				found++;
			}
		}
		line = *eol ? eol + 1 : eol;
	}
	if (!found)
		return strbuf_seterr(err, "parser stress-ng: no metrics line in the output (run it with --metrics-brief)");
	*ret_score = score;
	*ret_ops = ops;
	return 0;
}

static int parse_last_number(const char *out, double *ret, struct strbuf *err)
{
	const char *p = out;
	int found = 0;

	while (*p) {
		char *end;
		double d;

		if ((*p >= '0' && *p <= '9') || ((*p == '-' || *p == '.') && p[1] >= '0' && p[1] <= '9')) {
			d = strtod(p, &end);
			if (end > p) {
				*ret = d;
				found = 1;
				p = end;
				continue;
			}
		}
		p++;
	}
	if (!found)
		return strbuf_seterr(err, "parser last-number: the command printed no number");
	return 0;
}

int exec_parse_score(const char *parser, const char *out, double elapsed,
		     double *ret_score, double *ret_ops, struct strbuf *err)
{
	*ret_ops = 0;
	if (!strcmp(parser, "stress-ng"))
		return parse_stress_ng(out, ret_score, ret_ops, err);
	if (!strcmp(parser, "last-number"))
		return parse_last_number(out, ret_score, err);
	if (!strcmp(parser, "none")) {
		*ret_score = elapsed > 0 ? 1.0 / elapsed : 0;
		return 0;
	}
	return strbuf_seterr(err, "parser: unknown parser '%s'", parser);
}

/* The last few lines of the output, for an error message. */
static void tail_lines(const struct strbuf *out, int lines, struct strbuf *dst)
{
	size_t i = out->len;
	int seen = 0;

	while (i > 0) {
		if (out->buf[i - 1] == '\n' && i != out->len && ++seen >= lines)
			break;
		i--;
	}
	strbuf_add(dst, out->buf + i, out->len - i);
	strbuf_trim(dst);
}

/* Keeps the tail of the output: scores are printed last. */
static void keep(struct strbuf *out, const char *buf, size_t n)
{
	if (out->len + n > EXEC_KEEP) {
		size_t drop = out->len / 2;

		memmove(out->buf, out->buf + drop, out->len - drop);
		strbuf_setlen(out, out->len - drop);
	}
	strbuf_add(out, buf, n);
}

/* Whether pid has exited, without reaping it (its group stays valid). */
static int has_exited(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

/*
 * Reads the command's output until it exits or the timeout passes (then
 * its group is killed). Returns 1 on timeout. The pidfd, when the kernel
 * has one, wakes us at the exit itself.
 */
static int ex_wait(pid_t pid, int fd, double timeout, struct strbuf *out)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), pipe_open = 1, timed_out = 0;
	double deadline = mono_now() + timeout;
	char buf[8192];
	ssize_t n;

	for (;;) {
		struct pollfd pfd[2] = { { .fd = pipe_open ? fd : -1, .events = POLLIN },
					 { .fd = pidfd, .events = POLLIN } };
		double left = deadline - mono_now(), wait = left;

		if (left <= 0) {
			timed_out = 1;
			break;
		}
		if (pidfd < 0 && wait > EXEC_EXIT_POLL_SEC)
			wait = EXEC_EXIT_POLL_SEC;
		if (poll(pfd, 2, (int)(wait * 1000) + 1) > 0 && (pfd[0].revents & (POLLIN | POLLHUP))) {
			n = read(fd, buf, sizeof(buf));
			if (n > 0)
				keep(out, buf, (size_t)n);
			else if (n == 0 || errno != EINTR)
				pipe_open = 0;
		}
		if (has_exited(pid))
			break;
	}
	/* what is left in its group outlives the command: end it */
	kill(-pid, SIGKILL);
	if (!timed_out && pipe_open) {
		/* the rest of what it wrote before it exited */
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
			if (n > 0)
				keep(out, buf, (size_t)n);
	}
	if (pidfd >= 0)
		close(pidfd);
	return timed_out;
}

static int ex_run(struct wl_ctx *ctx, struct strbuf *err)
{
	const struct wl_params *p = ctx->p;
	struct strbuf out = STRBUF_INIT;
	struct run_command cmd = RUN_COMMAND_INIT;
	int status = 0, r = 0, timed_out;

	memset(&ex, 0, sizeof(ex));
	cmd.argv = (const char *const *)p->argv;
	cmd.out = RUN_FD_PIPE;
	cmd.err_to_out = 1;
	cmd.new_group = 1;	/* so that ex_wait can end what it leaves behind */
	cmd.kill_with_parent = 1;
	/* the command measured runs in the agent's environment, as the guest's
	 * sshd gave it: what it reads there is part of what is measured */
	cmd.env = (const char *const *)environ;
	wl_begin(ctx);
	r = run_command_start(&cmd);
	if (r < 0) {
		wl_end(ctx);
		return strbuf_seterr(err, "%s: cannot start: %s", p->argv[0], strerror(-r));
	}
	timed_out = ex_wait(cmd.pid, cmd.out_fd, p->timeout, &out);
	run_command_close_pipes(&cmd);
	run_command_wait(&cmd, &status);
	wl_end(ctx);

	if (timed_out) {
		r = strbuf_seterr(err, "%s: killed after the %.0f s timeout", p->argv[0], p->timeout);
	} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		struct strbuf tail = STRBUF_INIT;

		tail_lines(&out, 5, &tail);
		strbuf_seterr(err, "%s: ", p->argv[0]);
		if (WIFSIGNALED(status))
			strbuf_addf(err, "killed by signal %d", WTERMSIG(status));
		else
			strbuf_addf(err, "exit status %d", WEXITSTATUS(status));
		strbuf_addf(err, "; output ends: %s", tail.buf);
		r = -1;
		strbuf_release(&tail);
	} else {
		r = exec_parse_score(p->parser, out.buf, ctx->t_end - ctx->t_begin,
				     &ex.score, &ex.bogo_ops, err);
	}
	strbuf_release(&out);
	return r;
}

static void ex_score(struct wl_ctx *ctx)
{
	const char *unit = !strcmp(ctx->p->parser, "stress-ng") ? "bogo-ops/s" :
			   !strcmp(ctx->p->parser, "none") ? "runs/s" : "value";

	wl_metric(ctx, "score", ex.score, unit, "higher");
	wl_metric(ctx, "elapsed_sec", ctx->t_end - ctx->t_begin, "s", "lower");
	if (!strcmp(ctx->p->parser, "stress-ng"))
		wl_metric(ctx, "bogo_ops", ex.bogo_ops, "bogo-ops", "neutral");
}

const struct workload_ops workload_exec = {
	.name = "exec",
	.run = ex_run,
	.score_fn = ex_score,
};
