#include "profile.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "monitor.h"
#include "util.h"
#include "banned.h"

#define PERF_OUTPUT_MAX (64u << 20)
#define PERF_STOP_TIMEOUT 30.0
/* perf record -a reads every process's maps before it can enable events */
#define PERF_START_TIMEOUT 60.0
/* the control descriptors as perf record sees them */
#define PERF_CTL_FD 3
#define PERF_ACK_FD 4
_Static_assert(PERF_CTL_FD == 3 && PERF_ACK_FD == 4,
	       "run_command hands pass_fds over from 3 on, in order");

struct profile {
	pid_t pid;
	int ctl_fd;		/* perf stops listening (and misbehaves) at its EOF */
	int ack_fd;
	char dir[64];
	char data[96];
	char log[96];
};

/* Runs argv with stdout into out (bounded), stderr into the log file. */
static int run_capture(const char *const argv[], const char *log, struct strbuf *out,
		       struct strbuf *err)
{
	struct run_command cmd = RUN_COMMAND_INIT;
	int logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	int status = 0, r;

	cmd.argv = argv;
	cmd.out = RUN_FD_PIPE;
	if (logfd >= 0) {
		cmd.err = RUN_FD_GIVEN;
		cmd.err_fd = logfd;
	}
	r = run_command_start(&cmd);
	if (logfd >= 0)
		close(logfd);
	if (r < 0)
		return strbuf_seterr(err, "%s %s: cannot start: %s", argv[0], argv[1], strerror(-r));
	r = strbuf_read_fd(out, cmd.out_fd, PERF_OUTPUT_MAX);
	run_command_close_pipes(&cmd);
	if (r == -EFBIG)
		kill(cmd.pid, SIGKILL);
	run_command_wait(&cmd, &status);
	if (r < 0)
		return strbuf_seterr(err, "%s %s: output: %s", argv[0], argv[1], strerror(-r));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return strbuf_seterr(err, "%s %s failed (status %d)", argv[0], argv[1], status);
	return 0;
}

static int have_perf(void)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		const char *c = strchr(path, ':');
		size_t n = c ? (size_t)(c - path) : strlen(path);

		snprintf(buf, sizeof(buf), "%.*s/perf", (int)n, path);
		if (access(buf, X_OK) == 0)
			return 1;
		path += n + (c ? 1 : 0);
	}
	return 0;
}

#define STR_(x) #x
#define STR(x) STR_(x)

static void log_excerpt(const struct profile *p, struct strbuf *dst);

/* Waits for perf's "ack\n". 0; -ETIMEDOUT; -EPIPE at EOF (perf exited) or
 * on anything else. */
static int wait_ack(int fd, double timeout)
{
	double deadline = mono_now() + timeout;
	char buf[16];
	size_t got = 0;

	while (got < 4) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		double left = deadline - mono_now();
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)(left * 1000) + 1) <= 0)
			continue;
		n = read(fd, buf + got, sizeof(buf) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		got += (size_t)n;
	}
	return strncmp(buf, "ack\n", 4) ? -EPIPE : 0;
}

struct profile *profile_start(int frequency, struct strbuf *err)
{
	int ctl[2] = { -1, -1 }, ack[2] = { -1, -1 }, i, e, logfd;
	struct run_command cmd = RUN_COMMAND_INIT;
	struct profile *p;
	char freq[16];

	if (!have_perf()) {
		strbuf_seterr(err, "perf is not installed on this machine");
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		abort();
	snprintf(p->dir, sizeof(p->dir), "%s/tlblab-prof.XXXXXX",
		 getenv("TMPDIR") && strlen(getenv("TMPDIR")) < 32 ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(p->dir)) {
		strbuf_seterr(err, "mkdtemp %s: %s", p->dir, strerror(errno));
		free(p);
		return NULL;
	}
	snprintf(p->data, sizeof(p->data), "%s/perf.data", p->dir);
	snprintf(p->log, sizeof(p->log), "%s/perf.log", p->dir);
	snprintf(freq, sizeof(freq), "%d", frequency);
	if (pipe2(ctl, O_CLOEXEC) < 0 || pipe2(ack, O_CLOEXEC) < 0) {
		strbuf_seterr(err, "pipe: %s", strerror(errno));
		goto fail;
	}
	{
		const char *argv[] = { "perf", "record", "-a", "-g", "-e", "cpu-clock", "-F", freq,
				       "-D", "-1", "--control",
				       "fd:" STR(PERF_CTL_FD) "," STR(PERF_ACK_FD), "-o", p->data,
				       NULL };

		logfd = open(p->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		cmd.argv = argv;
		cmd.in = RUN_FD_NULL;
		cmd.out = RUN_FD_NULL;
		if (logfd >= 0) {
			cmd.err = RUN_FD_GIVEN;
			cmd.err_fd = logfd;
		}
		/* perf gets exactly these two, at the numbers --control names */
		cmd.pass_fds[PERF_CTL_FD - 3] = ctl[0];
		cmd.pass_fds[PERF_ACK_FD - 3] = ack[1];
		cmd.npass_fds = 2;
		e = run_command_start(&cmd);
		if (logfd >= 0)
			close(logfd);
	}
	if (e < 0) {
		strbuf_seterr(err, "perf record: cannot start: %s", strerror(-e));
		goto fail;
	}
	p->pid = cmd.pid;
	close(ctl[0]);
	close(ack[1]);
	ctl[0] = ack[1] = -1;
	/* perf starts with its events off and turns them on when told: the
	 * recording begins exactly when its acknowledgement arrives */
	if ((e = write_all(ctl[1], "enable\n", 7)) < 0 || (e = wait_ack(ack[0], PERF_START_TIMEOUT)) < 0) {
		int status = 0;

		/* no effect on a perf that is exiting: its status stays */
		kill(p->pid, SIGKILL);
		while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
			;
		if (e == -ETIMEDOUT) {
			strbuf_seterr(err, "perf record did not start recording within %.0f s",
				      PERF_START_TIMEOUT);
		} else {
			/* perf before 5.10 has no --control: its usage error says so */
			strbuf_seterr(err, "perf record %s %d before it started recording",
				      WIFSIGNALED(status) ? "was killed by signal" : "exited with status",
				      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		}
		log_excerpt(p, err);
		unlink(p->data);
		unlink(p->log);
		goto fail;
	}
	p->ctl_fd = ctl[1];
	p->ack_fd = ack[0];
	return p;
fail:
	for (i = 0; i < 2; i++) {
		if (ctl[i] >= 0)
			close(ctl[i]);
		if (ack[i] >= 0)
			close(ack[i]);
	}
	rmdir(p->dir);
	free(p);
	return NULL;
}

static void cleanup(struct profile *p)
{
	close(p->ctl_fd);
	close(p->ack_fd);
	unlink(p->data);
	unlink(p->log);
	rmdir(p->dir);
	free(p);
}

static void log_excerpt(const struct profile *p, struct strbuf *dst)
{
	struct strbuf sb = STRBUF_INIT;

	if (strbuf_read_file(&sb, p->log, 4096) == 0) {
		strbuf_trim(&sb);
		if (sb.len)
			strbuf_addf(dst, ": %.300s", sb.buf);
	}
	strbuf_release(&sb);
}

/* how long perf may take to acknowledge turning its events off */
#define PERF_DISABLE_TIMEOUT 5.0

void profile_halt(struct profile *p)
{
	if (!p || p->pid <= 0)
		return;
	/* events off at once and acknowledged; perf may take a while to
	 * act on the SIGINT that ends it */
	if (write_all(p->ctl_fd, "disable\n", 8) == 0)
		wait_ack(p->ack_fd, PERF_DISABLE_TIMEOUT);
	kill(p->pid, SIGINT);
}

/*
 * What the recording cannot show. cpu-clock samples from a timer interrupt,
 * so code that runs with interrupts off is never where a sample lands: its
 * time is counted where interrupts come back on. That is the context
 * switch's core (switch_mm_irqs_off runs there; its time shows up in
 * finish_task_switch). Only an NMI-driven hardware event sees it, which
 * needs a PMU (none under QEMU TCG).
 */
static const char profile_blind_spot[] =
	"cpu-clock samples from a timer interrupt: code run with interrupts off (the context switch's "
	"switch_mm_irqs_off) is never sampled, its time is counted where interrupts come back on "
	"(finish_task_switch)";

json_t *profile_stop(struct profile *p, struct strbuf *err)
{
	struct strbuf out = STRBUF_INIT;
	json_t *res = NULL, *symbols, *folded;
	double deadline;
	int status = 0, exited = 0;
	long samples;

	if (!p)
		return NULL;
	kill(p->pid, SIGINT);
	deadline = mono_now() + PERF_STOP_TIMEOUT;
	while (mono_now() < deadline) {
		pid_t w = waitpid(p->pid, &status, WNOHANG);

		if (w == p->pid) {
			exited = 1;
			break;
		}
		sleep_sec(0.02);
	}
	if (!exited) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, &status, 0);
		strbuf_seterr(err, "perf record did not stop within %.0f s", PERF_STOP_TIMEOUT);
		goto out;
	}
	/* perf record exits 0 or with SIGINT's status once it wrote the file */
	if (access(p->data, R_OK) < 0) {
		strbuf_seterr(err, "perf record wrote no data (status %d)", status);
		log_excerpt(p, err);
		goto out;
	}
	symbols = json_array();
	folded = json_array();
	{
		const char *report[] = { "perf", "report", "-i", p->data, "--stdio", "--children",
					 "--sort", "symbol", "-g", "none", "--percent-limit", "0.1",
					 "-q", NULL };
		const char *script[] = { "perf", "script", "-i", p->data, "-F", "comm,ip,sym", NULL };

		if (run_capture(report, p->log, &out, err) < 0) {
			log_excerpt(p, err);
			json_decref(symbols);
			json_decref(folded);
			goto out;
		}
		profile_parse_report(out.buf, symbols, PROFILE_MAX_SYMBOLS);
		strbuf_reset(&out);
		if (run_capture(script, p->log, &out, err) < 0) {
			log_excerpt(p, err);
			json_decref(symbols);
			json_decref(folded);
			goto out;
		}
		samples = profile_fold_script(out.buf, folded, PROFILE_MAX_STACKS);
	}
	res = json_object();
	json_object_set_new(res, "samples", json_integer(samples));
	json_object_set_new(res, "symbols", symbols);
	json_object_set_new(res, "folded", folded);
	json_object_set_new(res, "event", json_string("cpu-clock"));
	json_object_set_new(res, "blind_spot", json_string(profile_blind_spot));
out:
	strbuf_release(&out);
	cleanup(p);
	return res;
}

int profile_parse_report(const char *text, json_t *symbols, int max)
{
	const char *line = text;
	int n = 0;

	while (*line && n < max) {
		const char *eol = strchr(line, '\n');
		double children, self;
		int used = 0;
		char kind[8];

		if (!eol)
			eol = line + strlen(line);
		/* "    12.34%     1.23%  [k] symbol" */
		if (sscanf(line, " %lf%% %lf%% [%7[^]]] %n", &children, &self, kind, &used) == 3 && used > 0 &&
		    line + used < eol) {
			json_t *o = json_object();
			const char *sym = line + used;
			size_t len = (size_t)(eol - sym);
			const char *gap;

			/* perf pads the symbol column, and 6.x adds "IPC [IPC
			 * Coverage]" columns after it: columns are two spaces apart */
			if ((gap = memmem(sym, len, "  ", 2)) != NULL)
				len = (size_t)(gap - sym);
			while (len && (sym[len - 1] == ' ' || sym[len - 1] == '\r'))
				len--;
			json_object_set_new(o, "symbol", json_stringn(sym, len));
			json_object_set_new(o, "kernel", json_boolean(kind[0] == 'k'));
			json_object_set_new(o, "self", json_real(self));
			json_object_set_new(o, "children", json_real(children));
			if (json_object_get(o, "symbol")) {
				json_array_append_new(symbols, o);
				n++;
			} else {
				json_decref(o);
			}
		}
		line = *eol ? eol + 1 : eol;
	}
	return n;
}

struct stack_count {
	char *stack;
	long count;
};

static int cmp_stack(const void *a, const void *b)
{
	const struct stack_count *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->stack, y->stack);
}

/* Adds one finished sample (frames leaf first) to the table. */
static void add_stack(struct stack_count **tab, size_t *n, size_t *alloc,
		      const char *comm, char **frames, size_t nframes)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	strbuf_addstr(&sb, comm);
	for (i = nframes; i-- > 0;)
		strbuf_addf(&sb, ";%s", frames[i]);
	for (i = 0; i < *n; i++)
		if (!strcmp((*tab)[i].stack, sb.buf)) {
			(*tab)[i].count++;
			strbuf_release(&sb);
			return;
		}
	if (*n == *alloc) {
		*alloc = *alloc ? *alloc * 2 : 64;
		*tab = realloc(*tab, *alloc * sizeof(**tab));
		if (!*tab)
			abort();
	}
	(*tab)[*n].stack = strbuf_detach(&sb, NULL);
	(*tab)[*n].count = 1;
	(*n)++;
}

#define MAX_FRAMES 128
#define MAX_DISTINCT 20000

long profile_fold_script(const char *text, json_t *folded, int max)
{
	struct stack_count *tab = NULL;
	size_t n = 0, alloc = 0, nframes = 0, i;
	char *frames[MAX_FRAMES];
	char comm[64] = "";
	int in_sample = 0;
	long samples = 0;
	const char *line = text;

	for (;;) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);

		if (len == 0 || !*line) {
			if (in_sample && n < MAX_DISTINCT) {
				add_stack(&tab, &n, &alloc, comm, frames, nframes);
				samples++;
			} else if (in_sample) {
				samples++;
			}
			for (i = 0; i < nframes; i++)
				free(frames[i]);
			nframes = 0;
			in_sample = 0;
		} else if (line[0] == ' ' || line[0] == '\t') {
			/* "\t ffffffff810a1b2c do_syscall_64" */
			const char *p = line, *end = line + len, *s;

			while (p < end && (*p == ' ' || *p == '\t'))
				p++;
			while (p < end && *p != ' ')
				p++;
			while (p < end && *p == ' ')
				p++;
			s = p;
			while (p < end && *p != ' ' && *p != '+')
				p++;
			if (in_sample && nframes < MAX_FRAMES && p > s)
				frames[nframes++] = strndup(s, (size_t)(p - s));
		} else {
			/* a new sample's first line: its comm (up to a run of spaces or digits) */
			size_t k = 0;

			if (in_sample) {
				/* a sample without a blank line after it */
				add_stack(&tab, &n, &alloc, comm, frames, nframes);
				samples++;
				for (i = 0; i < nframes; i++)
					free(frames[i]);
				nframes = 0;
			}
			while (k < len && k < sizeof(comm) - 1 && line[k] != ' ')
				comm[k] = line[k] == ';' ? '_' : line[k], k++;
			comm[k] = '\0';
			in_sample = 1;
		}
		if (!*line)
			break;
		/* past a last line without '\n', the NUL ends the sample */
		line = eol ? eol + 1 : line + len;
	}
	/* no samples: tab is NULL, which qsort must not be given */
	if (n)
		qsort(tab, n, sizeof(*tab), cmp_stack);
	for (i = 0; i < n; i++) {
		if ((int)i < max) {
			char buf[64];
			struct strbuf sb = STRBUF_INIT;

			snprintf(buf, sizeof(buf), " %ld", tab[i].count);
			strbuf_addstr(&sb, tab[i].stack);
			strbuf_addstr(&sb, buf);
			json_array_append_new(folded, json_string(sb.buf));
			strbuf_release(&sb);
		}
		free(tab[i].stack);
	}
	free(tab);
	return samples;
}

/* "profile" shares the monitors' name space, so that a spec can list it
 * beside them; the runner does its work (profile_start, profile_stop). */
static const struct monitor_ops monitor_profile = { .name = "profile" };
MONITOR_REGISTER(monitor_profile)
