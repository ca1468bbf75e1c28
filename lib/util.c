#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "strbuf.h"
#include "banned.h"

int parse_u64(const char *s, uint64_t *ret)
{
	unsigned long long v;
	char *end;
	int saved = errno;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end) {
		errno = saved;
		return -1;
	}
	errno = saved;
	*ret = v;
	return 0;
}

int parse_int_range(const char *s, long min, long max, long *ret)
{
	long v;
	char *end;
	int saved = errno;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max) {
		errno = saved;
		return -1;
	}
	errno = saved;
	*ret = v;
	return 0;
}

int parse_double(const char *s, double *ret)
{
	double v;
	char *end;
	int saved = errno;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v)) {
		errno = saved;
		return -1;
	}
	errno = saved;
	*ret = v;
	return 0;
}

double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void sleep_sec(double seconds)
{
	struct timespec ts;

	if (seconds <= 0)
		return;
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double median_inplace(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int word_valid(const char *s, size_t max, const char *not_first)
{
	size_t n;

	if (!s || !*s || strchr(not_first, *s))
		return 0;
	for (n = 0; s[n]; n++) {
		char ch = s[n];

		if (n >= max)
			return 0;
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-'))
			return 0;
	}
	return 1;
}

int name_valid(const char *s)
{
	return word_valid(s, NAME_VALID_MAX, "-.");
}

int ref_valid(const char *ref)
{
	size_t n, i;

	if (!ref || !*ref || (n = strlen(ref)) > 255)
		return 0;
	if (ref[0] == '-' || ref[0] == '.' || ref[0] == '/' || ref[n - 1] == '/' || ref[n - 1] == '.')
		return 0;
	if (strstr(ref, "..") || strstr(ref, "@{") || strstr(ref, "//") || strstr(ref, "/.") ||
	    !strcmp(ref, "@") || (n >= 5 && !strcmp(ref + n - 5, ".lock")))
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)ref[i];

		if (ch < 0x21 || ch == 0x7f || strchr("~^:?*[\\", ch))
			return 0;
	}
	if (strstr(ref, ".lock/"))
		return 0;
	return 1;
}

static int is_alnum_ascii(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

/* kernels/build/args.sh's valid_url, the same grammar:
 * ^(https|git)://[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?(/[A-Za-z0-9._~/%@-]*)?$ */
static int branch_url_valid(const char *url)
{
	const char *p, *h;
	size_t n;

	if (!strncmp(url, "https://", 8))
		p = url + 8;
	else if (!strncmp(url, "git://", 6))
		p = url + 6;
	else
		return 0;
	h = p;
	while (is_alnum_ascii(*p) || *p == '.' || *p == '-')
		p++;
	if (p == h || !is_alnum_ascii(h[0]) || !is_alnum_ascii(p[-1]))
		return 0;
	if (*p == ':') {
		for (n = 0, p++; *p >= '0' && *p <= '9'; p++)
			n++;
		if (n < 1 || n > 5)
			return 0;
	}
	if (!*p)
		return 1;
	if (*p != '/')
		return 0;
	for (; *p; p++)
		if (!is_alnum_ascii(*p) && !strchr("._~/%@-", *p))
			return 0;
	return 1;
}

int url_valid(const char *url, int branch)
{
	size_t i, n;

	if (!url || (n = strlen(url)) > 2048)
		return 0;
	if (branch)
		return branch_url_valid(url);
	if (strncmp(url, "https://", 8) && strncmp(url, "http://", 7))
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)url[i];

		if (ch <= 0x20 || ch >= 0x7f || ch == '"' || ch == '\'' || ch == '\\' || ch == '`' ||
		    ch == '<' || ch == '>')
			return 0;
	}
	return 1;
}

/* Where url's host (and port) end: past "scheme://" and the authority;
 * 0 when url is not scheme://host... */
static size_t url_host_end(const char *url)
{
	size_t i = 0;

	if (!((url[0] >= 'a' && url[0] <= 'z') || (url[0] >= 'A' && url[0] <= 'Z')))
		return 0;
	while (is_alnum_ascii(url[i]) || url[i] == '+' || url[i] == '.' || url[i] == '-')
		i++;
	if (strncmp(url + i, "://", 3))
		return 0;
	i += 3;
	if (!url[i] || strchr("/?#", url[i]))
		return 0;	/* no host */
	return i + strcspn(url + i, "/?#");
}

void util_url_redact(const char *url, struct strbuf *out)
{
	size_t end = url_host_end(url), scheme, at;

	if (!end) {
		strbuf_addstr(out, "(redacted)");
		return;
	}
	scheme = (size_t)(strstr(url, "://") - url) + 3;
	/* the host is after the last '@' of the authority: the user goes */
	for (at = end; at > scheme && url[at - 1] != '@'; at--)
		;
	if (at == scheme && (!url[end] || !strcmp(url + end, "/"))) {
		strbuf_addstr(out, url);
		return;
	}
	strbuf_add(out, url, scheme);
	strbuf_add(out, url + at, end - at);
	strbuf_addstr(out, "/(redacted)");
}

void util_url_redact_in(const char *text, size_t len, const char *url, struct strbuf *out)
{
	size_t n = url ? strlen(url) : 0, min, i = 0, k;
	struct strbuf red = STRBUF_INIT;
	const char *p;

	if (!n) {
		strbuf_add(out, text, len);
		return;
	}
	min = url_host_end(url);
	if (!min)
		min = n;
	util_url_redact(url, &red);
	while (i < len && (p = memmem(text + i, len - i, url, min))) {
		size_t at = (size_t)(p - text);

		for (k = min; k < n && at + k < len && text[at + k] == url[k]; k++)
			;
		/* its host going on ("https://host.evil/"): another URL */
		if (k == min && at + k < len && text[at + k] &&
		    (is_alnum_ascii(text[at + k]) || strchr(".-_~:@[]%", text[at + k]))) {
			strbuf_add(out, text + i, at + 1 - i);
			i = at + 1;
			continue;
		}
		strbuf_add(out, text + i, at - i);
		strbuf_add(out, red.buf, red.len);
		i = at + k;
	}
	strbuf_add(out, text + i, len - i);
	strbuf_release(&red);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

int remove_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	return nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		abort();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		abort();
	return p;
}

void *xrealloc(void *p, size_t size)
{
	void *q = realloc(p, size ? size : 1);

	if (!q)
		abort();
	return q;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		abort();
	return p;
}

char *hex_encode(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 0xf];
	}
	out[2 * n] = '\0';
	return out;
}

int hex_valid(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[n] == '\0';
}

/*
 * ---- run_command ----
 *
 * The descriptors are all made in the parent, before the fork,
 * close-on-exec; the child only moves them into place and execs.
 * Moving is two steps, all sources above the highest target first and then
 * dup2 onto the targets, so no dup2 clobbers a source another one needs
 * (a pipe may well have been given descriptor 1 or 3). dup2 clears
 * close-on-exec on its target, and only on it: nothing else gets through.
 */

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void run_command_close_pipes(struct run_command *cmd)
{
	if (cmd->in == RUN_FD_PIPE)
		close_fd(&cmd->in_fd);
	if (cmd->out == RUN_FD_PIPE)
		close_fd(&cmd->out_fd);
	if (cmd->err == RUN_FD_PIPE && !cmd->err_to_out)
		close_fd(&cmd->err_fd);
}

static void __attribute__((noreturn)) child_fail(const char *argv0, int e)
{
	const char *msg = strerrordesc_np(e);

	if (!msg)
		msg = "error";
	/* nothing to do if these fail: the exit status says it */
	if (write(2, "tlblab: cannot execute ", 23) < 0 ||
	    write(2, argv0, strlen(argv0)) < 0 || write(2, ": ", 2) < 0 ||
	    write(2, msg, strlen(msg)) < 0 || write(2, "\n", 1) < 0)
		_exit(e == ENOENT ? 127 : 126);
	_exit(e == ENOENT ? 127 : 126);
}

/*
 * Closes every descriptor from low up: close_range(2) (Linux 5.9), else
 * each one /proc/self/fd lists, else each one below RLIMIT_NOFILE. Only
 * async-signal-safe calls: it runs between fork and exec.
 */
static void close_from(int low)
{
	struct rlimit rl;
	char buf[2048];
	long n;
	int dfd;

	if (close_range((unsigned)low, ~0U, 0) == 0 || errno != ENOSYS)
		return;
	dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		while ((n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
			for (long off = 0; off < n;) {
				/* struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name */
				unsigned short reclen;
				const char *name = buf + off + 19;
				int fd = 0;

				memcpy(&reclen, buf + off + 16, sizeof(reclen));
				for (; *name >= '0' && *name <= '9' && fd < (1 << 24); name++)
					fd = fd * 10 + (*name - '0');
				if (!*name && fd >= low && fd != dfd)
					close(fd);
				off += reclen;
			}
		}
		close(dfd);
		return;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur > (1u << 20))
		rl.rlim_cur = 1u << 20;
	for (int fd = low; fd < (int)rl.rlim_cur; fd++)
		close(fd);
}

/* execve of run with argv; a file that is not an executable format runs
 * with /bin/sh, as execvp does. Returns the errno when nothing ran. */
static int exec_one(const char *run, const char *const *argv, size_t argc, char *const *envp)
{
	const char *sh[argc + 2];

	execve(run, (char *const *)argv, envp);
	if (errno != ENOEXEC)
		return errno;
	sh[0] = "/bin/sh";
	sh[1] = run;
	memcpy(sh + 2, argv + 1, argc * sizeof(*argv));	/* argv[1..], and its NULL */
	execve(sh[0], (char *const *)sh, envp);
	return errno;
}

/*
 * Runs argv[0], looked up in the PATH of envp (RUN_COMMAND_PATH when it
 * has none) unless it names a path: execvp looks in our PATH, and the
 * child's environment is not ours. Returns when nothing could run: the
 * errno to report (EACCES when a file was found but could not run, else
 * ENOENT, or what stopped the search).
 */
static int exec_search(const char *const *argv, char *const *envp)
{
	const char *file = argv[0], *path = RUN_COMMAND_PATH, *p, *end;
	size_t flen = strlen(file), argc = 0;
	char buf[4096];
	int eacces = 0, e;

	while (argv[argc])
		argc++;
	if (strchr(file, '/'))
		return exec_one(file, argv, argc, envp);
	for (size_t i = 0; envp[i]; i++)
		if (!strncmp(envp[i], "PATH=", 5))
			path = envp[i] + 5;
	for (p = path;; p = end + 1) {
		size_t dlen;

		end = strchrnul(p, ':');
		dlen = (size_t)(end - p);
		if (dlen + flen + 3 <= sizeof(buf)) {
			/* an empty element is the working directory, as in execvp */
			memcpy(buf, dlen ? p : ".", dlen ? dlen : 1);
			dlen = dlen ? dlen : 1;
			buf[dlen] = '/';
			memcpy(buf + dlen + 1, file, flen + 1);
			e = exec_one(buf, argv, argc, envp);
			if (e == EACCES)
				eacces = 1;
			else if (e != ENOENT && e != ENOTDIR)
				return e;
		}
		if (!*end)
			break;
	}
	return eacces ? EACCES : ENOENT;
}

/* Only async-signal-safe calls from here to exec. src[i] < 0: leave
 * descriptor i as it is. */
static void __attribute__((noreturn))
child_exec(const struct run_command *cmd, const int *src, int nsrc, char *const *envp)
{
	int moved[3 + RUN_PASS_FDS_MAX], i;

	if (cmd->new_group)
		setpgid(0, 0);
	if (cmd->kill_with_parent)
		prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (cmd->default_signals) {
		struct sigaction sa;
		sigset_t none;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigaction(SIGPIPE, &sa, NULL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
	}
	for (i = 0; i < nsrc; i++) {
		moved[i] = -1;
		if (src[i] >= 0 && (moved[i] = fcntl(src[i], F_DUPFD_CLOEXEC, nsrc)) < 0)
			child_fail(cmd->argv[0], errno);
	}
	for (i = 0; i < nsrc; i++)
		if (moved[i] >= 0 && dup2(moved[i], i) < 0)
			child_fail(cmd->argv[0], errno);
	/* the copies above, and whatever else was open, close-on-exec or not */
	close_from(nsrc);
	child_fail(cmd->argv[0], exec_search(cmd->argv, envp));
}

/* Prepares one of stdin/stdout/stderr: *child the child's descriptor (or
 * -1 to inherit), *mine ours to close after the fork (-1 for none). */
static int setup_fd(enum run_fd how, int *fd, int reading, int *child, int *mine)
{
	int p[2];

	*child = *mine = -1;
	switch (how) {
	case RUN_FD_INHERIT:
		return 0;
	case RUN_FD_NULL:
		*child = *mine = open("/dev/null", (reading ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
		return *child < 0 ? -errno : 0;
	case RUN_FD_PIPE:
		if (pipe2(p, O_CLOEXEC) < 0)
			return -errno;
		*child = *mine = reading ? p[0] : p[1];
		*fd = reading ? p[1] : p[0];
		return 0;
	case RUN_FD_GIVEN:
		*child = *fd;
		return *child < 0 ? -EBADF : 0;
	default:
		return -EINVAL;
	}
}

char **run_command_env_minimal(const char *const *keep)
{
	static const char *const always[] = { "HOME", "TMPDIR", "TZ" };
	size_t nkeep = 0, n = 0;
	char **env;

	while (keep && keep[nkeep])
		nkeep++;
	env = xcalloc(ARRAY_SIZE(always) + nkeep + 3, sizeof(*env));
	env[n++] = xstrdup("PATH=" RUN_COMMAND_PATH);
	env[n++] = xstrdup("LC_ALL=C");
	for (size_t i = 0; i < ARRAY_SIZE(always) + nkeep; i++) {
		const char *name = i < ARRAY_SIZE(always) ? always[i] : keep[i - ARRAY_SIZE(always)];
		const char *v = getenv(name);
		size_t len;

		if (!v)
			continue;
		len = strlen(name) + strlen(v) + 2;
		env[n] = xmalloc(len);
		snprintf(env[n++], len, "%s=%s", name, v);
	}
	env[n] = NULL;
	return env;
}

void run_command_env_free(char **env)
{
	if (!env)
		return;
	for (size_t i = 0; env[i]; i++)
		free(env[i]);
	free(env);
}

int run_command_start(struct run_command *cmd)
{
	int src[3 + RUN_PASS_FDS_MAX], mine[3] = { -1, -1, -1 }, nsrc, i, r;
	char **minimal = NULL;

	if (!cmd->argv || !cmd->argv[0] || cmd->npass_fds < 0 || cmd->npass_fds > RUN_PASS_FDS_MAX)
		return -EINVAL;
	if (cmd->in == RUN_FD_PIPE)
		cmd->in_fd = -1;
	if (cmd->out == RUN_FD_PIPE)
		cmd->out_fd = -1;
	if (cmd->err == RUN_FD_PIPE)
		cmd->err_fd = -1;
	if ((r = setup_fd(cmd->in, &cmd->in_fd, 1, &src[0], &mine[0])) < 0 ||
	    (r = setup_fd(cmd->out, &cmd->out_fd, 0, &src[1], &mine[1])) < 0)
		goto fail;
	if (cmd->err_to_out)
		src[2] = src[1] >= 0 ? src[1] : 1;
	else if ((r = setup_fd(cmd->err, &cmd->err_fd, 0, &src[2], &mine[2])) < 0)
		goto fail;
	nsrc = 3 + cmd->npass_fds;
	for (i = 0; i < cmd->npass_fds; i++) {
		if (cmd->pass_fds[i] < 0) {
			r = -EBADF;
			goto fail;
		}
		src[3 + i] = cmd->pass_fds[i];
	}

	/* built before the fork: the child may not allocate */
	if (!cmd->env)
		minimal = run_command_env_minimal(NULL);
	cmd->pid = fork();
	if (cmd->pid < 0) {
		r = -errno;
		goto fail;
	}
	if (cmd->pid == 0)
		child_exec(cmd, src, nsrc, cmd->env ? (char *const *)cmd->env : minimal);
	/* EACCES once the child has exec'd is fine: it did it itself */
	if (cmd->new_group)
		setpgid(cmd->pid, cmd->pid);
	for (i = 0; i < 3; i++)
		close_fd(&mine[i]);
	run_command_env_free(minimal);
	return 0;

fail:
	for (i = 0; i < 3; i++)
		close_fd(&mine[i]);
	run_command_close_pipes(cmd);
	run_command_env_free(minimal);
	cmd->pid = -1;
	return r;
}

int run_command_wait(struct run_command *cmd, int *ret_wstatus)
{
	int wstatus;

	if (cmd->pid <= 0)
		return -ECHILD;
	while (waitpid(cmd->pid, &wstatus, 0) < 0)
		if (errno != EINTR)
			return -errno;
	cmd->pid = -1;
	if (ret_wstatus)
		*ret_wstatus = wstatus;
	return 0;
}
