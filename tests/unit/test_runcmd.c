/*
 * util.h run_command: the one way the daemon and the agent start a child.
 * Real children (sh, cat, ls), real pipes; what each test checks is what a
 * caller relies on: where the three standard descriptors go, which other
 * descriptors the child gets (those it was handed, at their numbers, and
 * nothing else), its process group, and how a failed exec reads.
 */
#include "testlib.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strbuf.h"
#include "util.h"
#include "banned.h"

/* Runs cmd (stdout a pipe) to the end: its output and its exit status. */
static int run_out(struct run_command *cmd, struct strbuf *out)
{
	int wstatus = -1;

	cmd->out = RUN_FD_PIPE;
	assert_int_equal(run_command_start(cmd), 0);
	assert_true(cmd->pid > 0);
	assert_true(cmd->out_fd > 2);
	assert_true(fcntl(cmd->out_fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(strbuf_read_fd(out, cmd->out_fd, 1 << 20), 0);
	run_command_close_pipes(cmd);
	assert_int_equal(cmd->out_fd, -1);
	assert_int_equal(run_command_wait(cmd, &wstatus), 0);
	assert_int_equal(cmd->pid, -1);
	assert_true(WIFEXITED(wstatus));
	return WEXITSTATUS(wstatus);
}

static void test_pipes(void **state)
{
	const char *argv[] = { "sh", "-c", "cat; echo to-stderr >&2; exit 3", NULL };
	struct run_command cmd = RUN_COMMAND_INIT;
	struct strbuf out = STRBUF_INIT;

	(void)state;
	cmd.argv = argv;
	cmd.in = RUN_FD_PIPE;
	cmd.err_to_out = 1;
	cmd.out = RUN_FD_PIPE;
	assert_int_equal(run_command_start(&cmd), 0);
	assert_int_equal(write_all(cmd.in_fd, "to-stdin\n", 9), 0);
	close(cmd.in_fd);
	cmd.in_fd = -1;
	assert_int_equal(strbuf_read_fd(&out, cmd.out_fd, 4096), 0);
	assert_string_equal(out.buf, "to-stdin\nto-stderr\n");
	run_command_close_pipes(&cmd);
	{
		int wstatus;

		assert_int_equal(run_command_wait(&cmd, &wstatus), 0);
		assert_true(WIFEXITED(wstatus));
		assert_int_equal(WEXITSTATUS(wstatus), 3);
	}
	strbuf_release(&out);
}

static void test_null_and_given(void **state)
{
	const char *argv[] = { "sh", "-c", "cat; echo err >&2", NULL };
	struct run_command cmd = RUN_COMMAND_INIT;
	struct strbuf out = STRBUF_INIT, log = STRBUF_INIT;
	char path[] = "/tmp/test_runcmd.XXXXXX";
	int fd = mkostemp(path, O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	cmd.argv = argv;
	cmd.in = RUN_FD_NULL;	/* cat ends at once */
	cmd.err = RUN_FD_GIVEN;
	cmd.err_fd = fd;
	assert_int_equal(run_out(&cmd, &out), 0);
	assert_string_equal(out.buf, "");
	assert_int_equal(cmd.err_fd, fd);	/* the caller's: still open */
	assert_int_equal(close(fd), 0);
	assert_int_equal(strbuf_read_file(&log, path, 4096), 0);
	assert_string_equal(log.buf, "err\n");
	unlink(path);
	strbuf_release(&out);
	strbuf_release(&log);
}

/* The child gets 0, 1, 2 and what it was handed, at 3 on: nothing else,
 * not the copies made on the way nor our ends of its pipes, nor what this
 * process holds without close-on-exec (what its parent left open, a
 * library's socket: libssh's is one). */
static void test_pass_fds_and_nothing_else(void **state)
{
	const char *argv[] = { "sh", "-c", "read x <&3; echo \"$x\" >&4; ls /proc/self/fd", NULL };
	struct run_command cmd = RUN_COMMAND_INIT;
	struct strbuf out = STRBUF_INIT;
	int a[2], b[2], leak, high;
	char got[16] = "";

	(void)state;
	leak = open("/dev/null", O_RDONLY);
	assert_true(leak > 2);
	high = fcntl(leak, F_DUPFD, 200);
	assert_true(high >= 200);
	assert_int_equal(pipe2(a, O_CLOEXEC), 0);
	assert_int_equal(pipe2(b, O_CLOEXEC), 0);
	assert_int_equal(write_all(a[1], "handed\n", 7), 0);
	cmd.argv = argv;
	cmd.in = RUN_FD_NULL;
	cmd.pass_fds[0] = a[0];
	cmd.pass_fds[1] = b[1];
	cmd.npass_fds = 2;
	assert_int_equal(run_out(&cmd, &out), 0);
	/* ls's own directory is 5 */
	assert_string_equal(out.buf, "0\n1\n2\n3\n4\n5\n");
	close(b[1]);
	assert_int_equal(read(b[0], got, sizeof(got) - 1), 7);
	assert_string_equal(got, "handed\n");
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(leak);
	close(high);
	strbuf_release(&out);
}

/* env prints the child's environment, one variable a line. */
static int run_env(struct run_command *cmd, struct strbuf *out)
{
	static const char *const argv[] = { "env", NULL };

	cmd->argv = argv;
	cmd->in = RUN_FD_NULL;
	return run_out(cmd, out);
}

/* Without an env, the child gets PATH, LC_ALL and HOME, TMPDIR, TZ of ours
 * (when set), and nothing else: not an operator's GIT_* or SSH_* variables
 * nor a token; with one, exactly that one, and argv[0] is looked up in its
 * PATH, not in ours. */
static void test_env(void **state)
{
	const char *given[] = { "PATH=/nonexistent-dir:/usr/bin:/bin", "TLBLAB_A=1", NULL };
	const char *nopath[] = { "PATH=/nonexistent-dir", NULL };
	const char *keep[] = { "TLBLAB_KEEP", "TLBLAB_UNSET", NULL };
	struct run_command cmd = RUN_COMMAND_INIT;
	struct strbuf out = STRBUF_INIT, want = STRBUF_INIT;
	char **env;

	(void)state;
	setenv("HOME", "/home/tlblab-test", 1);
	unsetenv("TMPDIR");
	unsetenv("TZ");
	setenv("GIT_DIR", "/x", 1);
	setenv("SSH_AUTH_SOCK", "/x", 1);
	setenv("TLBLAB_TOKEN", "secret", 1);
	setenv("TLBLAB_KEEP", "kept", 1);
	unsetenv("TLBLAB_UNSET");
	assert_int_equal(run_env(&cmd, &out), 0);
	assert_string_equal(out.buf, "PATH=" RUN_COMMAND_PATH "\nLC_ALL=C\nHOME=/home/tlblab-test\n");

	setenv("TMPDIR", "/tmp", 1);
	env = run_command_env_minimal(keep);
	strbuf_reset(&out);
	cmd = (struct run_command)RUN_COMMAND_INIT;
	cmd.env = (const char *const *)env;
	assert_int_equal(run_env(&cmd, &out), 0);
	strbuf_addstr(&want, "PATH=" RUN_COMMAND_PATH "\nLC_ALL=C\nHOME=/home/tlblab-test\nTMPDIR=/tmp\n"
		      "TLBLAB_KEEP=kept\n");
	assert_string_equal(out.buf, want.buf);
	run_command_env_free(env);

	strbuf_reset(&out);
	cmd = (struct run_command)RUN_COMMAND_INIT;
	cmd.env = given;
	assert_int_equal(run_env(&cmd, &out), 0);
	assert_string_equal(out.buf, "PATH=/nonexistent-dir:/usr/bin:/bin\nTLBLAB_A=1\n");

	strbuf_reset(&out);
	cmd = (struct run_command)RUN_COMMAND_INIT;
	cmd.env = nopath;
	cmd.err_to_out = 1;
	assert_int_equal(run_env(&cmd, &out), 127);
	assert_string_equal(out.buf, "tlblab: cannot execute env: No such file or directory\n");

	unsetenv("GIT_DIR");
	unsetenv("SSH_AUTH_SOCK");
	unsetenv("TLBLAB_TOKEN");
	unsetenv("TLBLAB_KEEP");
	strbuf_release(&out);
	strbuf_release(&want);
}

/* A script without a #! line runs with /bin/sh, as execvp runs it. */
static void test_script_without_interpreter(void **state)
{
	char dir[] = "/tmp/test_runcmd.XXXXXX", path[64];
	const char *argv[] = { path, "arg", NULL };
	struct run_command cmd = RUN_COMMAND_INIT;
	struct strbuf out = STRBUF_INIT;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/script", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
	assert_true(fd >= 0);
	assert_int_equal(write_all(fd, "echo \"ran $1\"\n", 15), 0);
	close(fd);
	cmd.argv = argv;
	assert_int_equal(run_out(&cmd, &out), 0);
	assert_string_equal(out.buf, "ran arg\n");
	unlink(path);
	rmdir(dir);
	strbuf_release(&out);
}

static void test_new_group(void **state)
{
	const char *argv[] = { "sleep", "30", NULL };
	struct run_command cmd = RUN_COMMAND_INIT;
	int wstatus;

	(void)state;
	cmd.argv = argv;
	cmd.new_group = 1;
	assert_int_equal(run_command_start(&cmd), 0);
	/* set on our side too: true at once, exec'd or not */
	assert_int_equal(getpgid(cmd.pid), cmd.pid);
	assert_int_equal(kill(-cmd.pid, SIGKILL), 0);
	assert_int_equal(run_command_wait(&cmd, &wstatus), 0);
	assert_true(WIFSIGNALED(wstatus));
	assert_int_equal(WTERMSIG(wstatus), SIGKILL);
}

static void test_exec_fails(void **state)
{
	const char *argv[] = { "/nonexistent/tlblab-command", NULL };
	const char *none[] = { NULL };
	struct run_command cmd = RUN_COMMAND_INIT;
	struct strbuf out = STRBUF_INIT;

	(void)state;
	cmd.argv = argv;
	cmd.err_to_out = 1;
	assert_int_equal(run_out(&cmd, &out), 127);
	assert_string_equal(out.buf,
			    "tlblab: cannot execute /nonexistent/tlblab-command: No such file or directory\n");

	cmd = (struct run_command)RUN_COMMAND_INIT;
	assert_int_equal(run_command_start(&cmd), -EINVAL);
	cmd.argv = none;
	assert_int_equal(run_command_start(&cmd), -EINVAL);
	cmd.argv = argv;
	cmd.err = RUN_FD_GIVEN;	/* and no descriptor */
	assert_int_equal(run_command_start(&cmd), -EBADF);
	assert_int_equal(cmd.pid, -1);
	assert_int_equal(run_command_wait(&cmd, NULL), -ECHILD);
	strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipes),
		cmocka_unit_test(test_null_and_given),
		cmocka_unit_test(test_pass_fds_and_nothing_else),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_script_without_interpreter),
		cmocka_unit_test(test_new_group),
		cmocka_unit_test(test_exec_fails),
	};

	return cmocka_run_group_tests_name("run_command", tests, NULL, NULL);
}
