#ifndef TLBLAB_UTIL_H
#define TLBLAB_UTIL_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

struct strbuf;

/*
 * Checked number parsing and small helpers shared by every binary.
 * The parsers accept the whole string or nothing: trailing garbage, empty
 * input, overflow and out-of-range values all return -1 (errno untouched).
 */

int parse_u64(const char *s, uint64_t *ret);
int parse_int_range(const char *s, long min, long max, long *ret);
int parse_double(const char *s, double *ret);

/* Monotonic seconds since an arbitrary point. */
double mono_now(void);
/* Wall-clock seconds since the epoch. */
double wall_now(void);
/* Sleeps for seconds, restarting after signals. */
void sleep_sec(double seconds);

/* Writes all of buf to fd, retrying short writes and EINTR. -errno on error. */
int write_all(int fd, const void *buf, size_t len);

/* Removes path and, for a directory, everything under it, following no
 * symbolic link; 0, or -1 when something could not be removed (errno). A
 * path that is not there is 0. */
int remove_tree(const char *path);

/* Comparison for qsort of doubles, ascending. */
int cmp_double(const void *a, const void *b);
/* Median of v[0..n) (sorts v in place). NAN when n == 0. */
double median_inplace(double *v, size_t n);

/*
 * A name of the lab (suites, machines, builders, tags, submitters), as the
 * configuration and the API take it: [A-Za-z0-9._-]{1,NAME_VALID_MAX}, not
 * starting with '-' or '.', so it is safe as an argument, a path element
 * and in a log line. NULL is not a name.
 */
#define NAME_VALID_MAX 64
int name_valid(const char *s);
/* 1 when s is 1 to max characters of [A-Za-z0-9._-] and does not start
 * with one of not_first: the alphabet of name_valid and of user names. */
int word_valid(const char *s, size_t max, const char *not_first);
/*
 * A git ref a user may name (git check-ref-format --allow-onelevel rules:
 * no "..", "@{", control characters, space, ~^:?*[\, no leading '-' or
 * '.', no trailing '/', '.' or ".lock", at most 255 bytes) or a 7..40
 * character hex commit id. Safe to pass as an argument once valid.
 */
int ref_valid(const char *ref);
/*
 * A URL a submitter may give, of at most 2048 bytes. branch 0: a patch URL,
 * http:// or https:// without spaces, quotes, backslashes or control
 * characters (fetch.h then decides which hosts it may reach). branch 1: a
 * git branch to fetch, https:// or git:// only, a host of letters, digits,
 * '.' and '-', an optional port and a path of [A-Za-z0-9._~/%@-]: exactly
 * what kernels/build/args.sh's valid_url takes (tests/fixtures/branch-urls.txt
 * holds both to it). A local path is never a branch URL.
 */
int url_valid(const char *url, int branch);
/*
 * A URL as the API shows it to a reader without a token: its scheme and
 * host (with the port) kept, the rest, whose user, path or query may be
 * what lets one in (a webhook's secret path, a token in a query), written
 * "/(redacted)": "https://lore.kernel.org/(redacted)". A URL of nothing
 * but scheme and host stays as it is; what is not scheme://host... is
 * "(redacted)" whole.
 */
void util_url_redact(const char *url, struct strbuf *out);
/*
 * text[0..len) with each place url appears written as util_url_redact writes
 * it: the whole URL, or a part of it that runs at least through its host
 * (a URL cut short in a job's name, "branch x of https://host/pa...").
 * With url NULL or empty, text as it is.
 */
void util_url_redact_in(const char *text, size_t len, const char *url, struct strbuf *out);

/*
 * Allocation that aborts on failure, as strbuf does: the daemon has no
 * way to go on without the memory, and a NULL checked at every call site
 * is a check forgotten at one. Never NULL, even for a size of 0.
 */
void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);

/*
 * Lower-case hex of in[0..n): writes 2n digits and a NUL to out, which
 * holds 2n + 1 bytes. Returns out. Every hash and random id the binaries
 * print goes through it, so they all read the same way.
 */
char *hex_encode(const unsigned char *in, size_t n, char *out);
/* 1 when s is exactly n lower-case hex digits (what hex_encode writes). */
int hex_valid(const char *s, size_t n);

/* ---- run_command ---- */

/*
 * One way to start a child process, in the manner of git's run-command:
 * argv (never a shell line), what its stdin, stdout and stderr are, an
 * optional process group of its own, and descriptors handed over at fixed
 * numbers, and an environment of its own (a minimal one unless the caller
 * gives another). Every descriptor this module creates is close-on-exec
 * until the child's dup2 puts it where it belongs, and the child closes
 * every other descriptor above 2 before exec, so it inherits nothing it
 * was not given, whatever other threads or libraries open meanwhile.
 *
 * What to do while it runs stays with the caller: timeouts, killing the
 * group, caps on output, polling. The module starts and reaps; the caller
 * owns the policy in between.
 *
 *	struct run_command cmd = RUN_COMMAND_INIT;
 *
 *	cmd.argv = argv;
 *	cmd.out = RUN_FD_PIPE;
 *	if (run_command_start(&cmd) < 0) ...
 *	... read cmd.out_fd, close it ...
 *	run_command_wait(&cmd, &wstatus);
 */

enum run_fd {
	RUN_FD_INHERIT,		/* the child gets ours */
	RUN_FD_NULL,		/* /dev/null */
	RUN_FD_PIPE,		/* a pipe; our end in *_fd after start */
	RUN_FD_GIVEN,		/* *_fd, a descriptor the caller keeps and closes */
	RUN_FD_MAX
};

/* Descriptors a child may be handed besides 0, 1 and 2 (pass_fds). */
#define RUN_PASS_FDS_MAX 4

/* The PATH of a child's minimal environment (run_command_env_minimal). */
#define RUN_COMMAND_PATH "/usr/sbin:/usr/bin:/sbin:/bin"

struct run_command {
	const char *const *argv;	/* argv[0] is looked up in PATH */
	enum run_fd in, out, err;
	/*
	 * RUN_FD_GIVEN: set by the caller, the child's descriptor. RUN_FD_PIPE:
	 * set by run_command_start, our end (close-on-exec, blocking), which
	 * the caller reads or writes and closes. Otherwise -1.
	 */
	int in_fd, out_fd, err_fd;
	/* stderr goes where stdout goes (err is then ignored) */
	unsigned err_to_out : 1;
	/* the child leads a new process group (its pid), set on both sides
	 * of the fork so that kill(-pid) right after start cannot miss it */
	unsigned new_group : 1;
	/* the child is killed (SIGKILL) when the thread that started it dies */
	unsigned kill_with_parent : 1;
	/* the child starts with SIGPIPE at its default disposition and an
	 * empty signal mask, whatever this process or thread set */
	unsigned default_signals : 1;
	/* pass_fds[i] becomes the child's descriptor 3 + i; ours stay open.
	 * Every other descriptor from 3 up is closed in the child, whether
	 * close-on-exec or not (what a library or our own parent left open) */
	int pass_fds[RUN_PASS_FDS_MAX];
	int npass_fds;
	/*
	 * The child's whole environment, "NAME=VALUE" strings and a NULL, the
	 * caller's until run_command_start returns; NULL: the minimal one of
	 * run_command_env_minimal(NULL). argv[0] is looked up in the PATH of
	 * the environment the child gets, not in ours.
	 */
	const char *const *env;
	/* after start: the child, until run_command_wait reaps it (a caller
	 * that polls with waitpid(WNOHANG) or kills it reaps it itself) */
	pid_t pid;
};

#define RUN_COMMAND_INIT { .in_fd = -1, .out_fd = -1, .err_fd = -1, .pid = -1 }

/*
 * Starts cmd. 0, or a negative errno (nothing started, nothing left open).
 * Between fork and exec the child makes only async-signal-safe calls, as
 * the daemon and the agent have threads. When exec fails the child writes
 * "tlblab: cannot execute ARGV0: REASON" on its stderr and exits 127 (not
 * found) or 126.
 */
int run_command_start(struct run_command *cmd);

/*
 * A child's minimal environment: PATH=RUN_COMMAND_PATH, LC_ALL=C, and
 * HOME, TMPDIR, TZ and each name of keep (NULL-terminated; NULL for none)
 * that this process's environment has, with its value. Nothing else of
 * ours gets through: an operator's GIT_* or SSH_* variables, or a token
 * in TLBLAB_TOKEN, stay with the process they were given to. Returns a
 * NULL-terminated array, the caller's (run_command_env_free).
 */
char **run_command_env_minimal(const char *const *keep);
void run_command_env_free(char **env);

/*
 * Waits for the child (retrying EINTR) and stores its wait status in
 * *ret_wstatus. 0 or a negative errno. cmd->pid is -1 afterwards.
 */
int run_command_wait(struct run_command *cmd, int *ret_wstatus);

/* Closes the parent's ends of the pipes that are still open. */
void run_command_close_pipes(struct run_command *cmd);

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
