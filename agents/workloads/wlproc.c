/*
 * The workload process and the agent talk over two pipes: lines from the
 * workload process ("B", "E", "R {json}"), one byte back from the agent
 * ('A') for each edge. The shared counters (wl_ctx.sh) are mapped before
 * the fork, so the agent can still read the operations counted so far when
 * the workload process dies without a report.
 *
 * fork() is called from a multi-threaded process: the child runs only this
 * file's code and the workload's, never touches the agent's locks or stdio
 * (stdout belongs to the protocol), and leaves with _exit().
 */
#include "wlproc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jsonget.h"
#include "util.h"
#include "banned.h"

/* Bounds of each phase. They only catch a workload process that hangs (a
 * worker that never sees the stop, a barrier that never fills), so they are
 * generous: setting up a 64 GiB region under TCG takes minutes. */
#define SETUP_SEC 600.0
#define WINDOW_GRACE_SEC 60.0
#define TEARDOWN_SEC 300.0
/* The report is the workload's metrics and an error message. */
#define MSG_MAX (4u << 20)
#define ERR_KEEP 16384

/* ---- the workload process ---- */

struct chan {
	int to_agent, from_agent;
	int began, ended;
};

static void edge(struct wl_ctx *ctx, const char *line)
{
	struct chan *ch = ctx->runner;
	char ack;
	ssize_t n;

	if (write_all(ch->to_agent, line, strlen(line)) < 0)
		_exit(1);
	do
		n = read(ch->from_agent, &ack, 1);
	while (n < 0 && errno == EINTR);
	/* the agent is gone: nobody is left to measure for */
	if (n != 1 || ack != 'A')
		_exit(1);
}

static void child_begin(struct wl_ctx *ctx)
{
	((struct chan *)ctx->runner)->began = 1;
	edge(ctx, "B\n");
}

static void child_end(struct wl_ctx *ctx)
{
	((struct chan *)ctx->runner)->ended = 1;
	edge(ctx, "E\n");
}

/* A JSON string of msg; output of a command need not be UTF-8. */
static json_t *message_string(const struct strbuf *msg)
{
	size_t len = msg->len > ERR_KEEP ? ERR_KEEP : msg->len, i;
	json_t *s = json_stringn(msg->buf, len);
	char *ascii;

	if (s)
		return s;
	ascii = xmalloc(len + 1);
	for (i = 0; i < len; i++)
		ascii[i] = (unsigned char)msg->buf[i] < 0x80 ? msg->buf[i] : '?';
	s = json_stringn(ascii, len);
	free(ascii);
	return s;
}

static void __attribute__((noreturn)) child_main(struct wl_ctx *ctx, pid_t agent, int to_agent,
						 int from_agent)
{
	const struct workload_ops *ops = workload_impl(ctx->p->def);
	struct chan ch = { to_agent, from_agent, 0, 0 };
	struct strbuf err = STRBUF_INIT;
	json_t *rep;
	char *text;
	int rc;

	/* a killed agent must not leave a workload behind */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != agent)
		_exit(1);
	/*
	 * A pinned run's coordinator (this thread, asleep through the window)
	 * stays on worker 0's CPU: an idle CPU it last ran on would keep the
	 * workload's mm loaded (lazy TLB) and get every flush the workers'
	 * calls send, or not, by where it happened to sleep. mremap from 1
	 * worker cost 14000 or 16400 kernel instructions per move by that.
	 */
	wl_pin(ctx, 0);
	ctx->runner = &ch;
	ctx->on_begin = child_begin;
	ctx->on_end = child_end;
	ctx->metrics = json_object();
	ctx->info = json_object();
	rc = ops->run(ctx, &err);
	if (rc == 0 && ch.began && ch.ended && ctx->t_end > ctx->t_begin && ops->score_fn)
		ops->score_fn(ctx);
	rep = json_pack("{s:i,s:o,s:b,s:f,s:f,s:I,s:I,s:o,s:o}", "rc", rc < 0 ? -1 : 0,
			"error", message_string(&err), "window", ch.began && ch.ended,
			"t_begin", ctx->t_begin, "t_end", ctx->t_end,
			"ops_begin", (json_int_t)ctx->ops_begin, "ops_end", (json_int_t)ctx->ops_end,
			"metrics", ctx->metrics, "info", ctx->info);
	text = rep ? json_dumps(rep, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
	if (!text || write_all(to_agent, "R ", 2) < 0 || write_all(to_agent, text, strlen(text)) < 0 ||
	    write_all(to_agent, "\n", 1) < 0)
		_exit(1);
	_exit(0);
}

/* ---- the agent's side ---- */

enum phase { PH_SETUP, PH_WINDOW, PH_TEARDOWN, PH_MAX };

struct watch {
	pid_t pid;
	int ack_fd;
	enum phase phase;
	double deadline;
	json_t *report;
	struct strbuf problem;	/* why the process was killed */
};

static double window_limit(const struct wl_params *p)
{
	return (!strcmp(p->def->name, "exec") ? p->timeout : p->duration) + WINDOW_GRACE_SEC;
}

static void ack(struct watch *w)
{
	/* a dead child's pipe fails with EPIPE (the agent ignores SIGPIPE);
	 * its death is seen at EOF */
	write_all(w->ack_fd, "A", 1);
}

static json_t *parse_report(const char *text, size_t len)
{
	json_t *rep = json_loadb(text, len, 0, NULL);

	if (!json_is_object(rep) || !json_is_integer(json_object_get(rep, "rc")) ||
	    !json_is_string(json_object_get(rep, "error")) ||
	    !json_is_boolean(json_object_get(rep, "window")) ||
	    !json_is_number(json_object_get(rep, "t_begin")) ||
	    !json_is_number(json_object_get(rep, "t_end")) ||
	    !json_is_integer(json_object_get(rep, "ops_begin")) ||
	    !json_is_integer(json_object_get(rep, "ops_end")) ||
	    !json_is_object(json_object_get(rep, "metrics")) ||
	    !json_is_object(json_object_get(rep, "info"))) {
		json_decref(rep);
		return NULL;
	}
	return rep;
}

/* Handles one line from the workload process. -1 when it breaks the protocol. */
static int on_line(struct watch *w, struct wl_ctx *ctx, const struct wlproc_hooks *h,
		   struct wlproc_result *ret, const char *line, size_t len)
{
	if (len == 1 && line[0] == 'B' && w->phase == PH_SETUP) {
		if (h->on_begin)
			h->on_begin(h->arg);
		ret->window = 1;
		ret->ops_begin = wl_ops_total(ctx);
		ret->t_begin = mono_now();
		ack(w);
		w->phase = PH_WINDOW;
		w->deadline = mono_now() + window_limit(ctx->p);
		return 0;
	}
	if (len == 1 && line[0] == 'E' && w->phase == PH_WINDOW) {
		ret->t_end = mono_now();
		ret->ops_end = wl_ops_total(ctx);
		if (h->on_end)
			h->on_end(h->arg);
		ack(w);
		w->phase = PH_TEARDOWN;
		w->deadline = mono_now() + TEARDOWN_SEC;
		return 0;
	}
	if (len > 2 && line[0] == 'R' && line[1] == ' ' && !w->report) {
		w->report = parse_report(line + 2, len - 2);
		if (w->report)
			return 0;
	}
	strbuf_addf(&w->problem, "workload process: unexpected message '%.40s'", line);
	return -1;
}

/* Reads the workload process's messages until it closes its pipe, or until
 * it overruns a phase or breaks the protocol (then it is killed). */
static void watch_child(struct watch *w, int fd, struct wl_ctx *ctx, const struct wlproc_hooks *h,
			struct wlproc_result *ret)
{
	static const char *const phase_name[PH_MAX] = {
		"set up its window", "close its window", "exit after its window",
	};
	struct strbuf in = STRBUF_INIT;
	char buf[65536];

	w->phase = PH_SETUP;
	w->deadline = mono_now() + SETUP_SEC;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		double left = w->deadline - mono_now();
		char *nl;
		ssize_t n;

		if (left <= 0) {
			strbuf_addf(&w->problem, "workload process did not %s in time (%.0f s); killed",
				    phase_name[w->phase],
				    w->phase == PH_SETUP ? SETUP_SEC :
				    w->phase == PH_WINDOW ? window_limit(ctx->p) : TEARDOWN_SEC);
			break;
		}
		n = poll(&pfd, 1, (int)(left * 1000) + 1);
		if (n <= 0)
			continue;
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (in.len + (size_t)n > MSG_MAX) {
			strbuf_addf(&w->problem, "workload process: report larger than %u bytes; killed", MSG_MAX);
			break;
		}
		strbuf_add(&in, buf, (size_t)n);
		while ((nl = memchr(in.buf, '\n', in.len)) != NULL) {
			size_t len = (size_t)(nl - in.buf);

			*nl = '\0';
			if (on_line(w, ctx, h, ret, in.buf, len) < 0)
				goto out;
			memmove(in.buf, nl + 1, in.len - len - 1);
			strbuf_setlen(&in, in.len - len - 1);
		}
	}
out:
	if (w->problem.len)
		kill(w->pid, SIGKILL);
	strbuf_release(&in);
}

/* Takes the workload process's own account of the window and its verdict. */
static int use_report(json_t *rep, struct wlproc_result *ret, struct strbuf *err)
{
	if (json_is_true(json_object_get(rep, "window"))) {
		ret->t_begin = jsonget_num_or(rep, "t_begin", 0);
		ret->t_end = jsonget_num_or(rep, "t_end", 0);
		ret->ops_begin = (uint64_t)jsonget_int_or(rep, "ops_begin", 0);
		ret->ops_end = (uint64_t)jsonget_int_or(rep, "ops_end", 0);
	}
	json_object_update(ret->metrics, json_object_get(rep, "metrics"));
	json_object_update(ret->info, json_object_get(rep, "info"));
	if (jsonget_int_or(rep, "rc", 0) < 0)
		return strbuf_seterr(err, "%s", jsonget_str(rep, "error"));
	return 0;
}

int wlproc_run(const struct wl_params *p, const int *cpus, int ncpus,
	       const struct wlproc_hooks *h, struct wlproc_result *ret, struct strbuf *err)
{
	struct watch w = { .pid = -1, .ack_fd = -1 };
	int to_agent[2] = { -1, -1 }, from_agent[2] = { -1, -1 };
	struct wl_ctx ctx;
	int status = 0, rc = -1;
	pid_t agent = getpid();

	memset(ret, 0, sizeof(*ret));
	ret->metrics = json_object();
	ret->info = json_object();
	strbuf_init(&w.problem, 0);
	if (wl_ctx_init(&ctx, p, err) < 0)
		goto out;
	ctx.cpus = cpus;
	ctx.ncpus = ncpus;
	if (pipe2(to_agent, O_CLOEXEC) < 0 || pipe2(from_agent, O_CLOEXEC) < 0) {
		strbuf_seterr(err, "pipe: %s", strerror(errno));
		goto out;
	}
	if (h->fork_lock)
		pthread_mutex_lock(h->fork_lock);
	w.pid = fork();
	/* the parent unlocks, forked or not; the child never takes it again */
	if (w.pid != 0 && h->fork_lock)
		pthread_mutex_unlock(h->fork_lock);
	if (w.pid < 0) {
		strbuf_seterr(err, "fork of the workload process: %s", strerror(errno));
		goto out;
	}
	if (w.pid == 0) {
		close(to_agent[0]);
		close(from_agent[1]);
		child_main(&ctx, agent, to_agent[1], from_agent[0]);
	}
	close(to_agent[1]);
	close(from_agent[0]);
	to_agent[1] = from_agent[0] = -1;
	w.ack_fd = from_agent[1];

	watch_child(&w, to_agent[0], &ctx, h, ret);
	/* a child still waiting for an acknowledgement sees EOF and leaves */
	close(from_agent[1]);
	from_agent[1] = -1;
	while (waitpid(w.pid, &status, 0) < 0 && errno == EINTR)
		;
	if (w.phase == PH_WINDOW) {
		/* died (or was killed) inside its window: close it now, so the
		 * counters cover what ran */
		ret->t_end = mono_now();
		ret->ops_end = wl_ops_total(&ctx);
		if (h->on_end)
			h->on_end(h->arg);
	}
	if (w.report && !w.problem.len) {
		rc = use_report(w.report, ret, err);
	} else if (w.problem.len) {
		strbuf_seterr(err, "%s", w.problem.buf);
	} else {
		strbuf_seterr(err, "workload process ");
		wl_status_text(status, err);
		if (WIFEXITED(status))
			strbuf_addstr(err, " without a report");
	}
out:
	json_decref(w.report);
	strbuf_release(&w.problem);
	if (to_agent[0] >= 0)
		close(to_agent[0]);
	if (to_agent[1] >= 0)
		close(to_agent[1]);
	if (from_agent[0] >= 0)
		close(from_agent[0]);
	if (from_agent[1] >= 0)
		close(from_agent[1]);
	wl_ctx_release(&ctx);
	return rc;
}

void wlproc_result_release(struct wlproc_result *res)
{
	if (!res)
		return;
	json_decref(res->metrics);
	json_decref(res->info);
	res->metrics = res->info = NULL;
}
