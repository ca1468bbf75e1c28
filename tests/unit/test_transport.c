/*
 * The transport module's common parts (shell quoting, error classes) and
 * the `local` backend with real processes: argv passed literally, stdin,
 * stdout lines with truncation, stderr apart, exit status and signals,
 * output caps, timeouts that kill a whole process group, cancel from the
 * line callback, descriptors not leaked to children, atomic upload and
 * bounded download. The ssh backend runs against a real sshd in
 * tests/integration/t0010-transport-ssh.sh.
 */
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "transport.h"
#include "util.h"
#include "banned.h"

struct fixture {
	struct cfg_endpoint ep;
	struct transport *t;
	struct exec_result res;
	struct strbuf err;
	char dir[64];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	int r;

	assert_non_null(f);
	f->ep.transport = transport_here()->transport;
	strbuf_init(&f->err, 0);
	transport_exec_result_init(&f->res);
	r = transport_open(&f->ep, 5, &f->t, &f->err);
	assert_int_equal(r, 0);
	snprintf(f->dir, sizeof(f->dir), "/tmp/tlblab-transport.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "# cannot remove %s\n", f->dir);
	transport_free(f->t);
	transport_exec_result_release(&f->res);
	strbuf_release(&f->err);
	free(f);
	return 0;
}

static int run(struct fixture *f, struct exec_req *req)
{
	return transport_exec(f->t, req, &f->res, &f->err);
}

/* ---- common parts ---- */

static void test_shell_quote(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "abc", "'abc'" },
		{ "it's", "'it'\\''s'" },
		{ "", "''" },
		{ "a b", "'a b'" },
		{ "''", "''\\'''\\'''" },
		{ "$(reboot) `x` \\ \"q\"", "'$(reboot) `x` \\ \"q\"'" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf sb = STRBUF_INIT;

		transport_shell_quote(&sb, cases[i].in);
		assert_string_equal(sb.buf, cases[i].out);
		strbuf_release(&sb);
	}
}

/* What a real shell makes of the quoted words: exactly the input. */
static void test_shell_quote_roundtrip(void **state)
{
	struct fixture *f = *state;
	static const char *words[] = {
		"plain", "it's", "", "a'b'c", "\"; reboot; \"", "$(id) `id` ${HOME}",
		"back\\slash\\", "new\nline", "*?[a]~#!&|<>", "'", "''''",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(words); i++) {
		struct strbuf script = STRBUF_INIT;
		const char *argv[] = { "sh", "-c", NULL, NULL };
		struct exec_req req = { .argv = argv, .timeout = 10 };

		strbuf_addstr(&script, "printf %s ");
		transport_shell_quote(&script, words[i]);
		argv[2] = script.buf;
		assert_int_equal(run(f, &req), 0);
		assert_int_equal(f->res.status, 0);
		assert_string_equal(f->res.out.buf, words[i]);
		strbuf_release(&script);
	}
}

static void test_error_classes(void **state)
{
	static const int infra[] = { ETIMEDOUT, ECONNREFUSED, EHOSTUNREACH, ENETUNREACH,
				     ECONNRESET, EPIPE, EIO };
	static const int not_infra[] = { EKEYREJECTED, EACCES, ENOENT, EFBIG, EINVAL,
					 ECANCELED, 0 };
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(infra); i++)
		assert_true(transport_error_is_infra(-infra[i]));
	for (i = 0; i < ARRAY_SIZE(not_infra); i++)
		assert_false(transport_error_is_infra(-not_infra[i]));
}

static void test_open_label(void **state)
{
	struct fixture *f = *state;
	struct cfg_endpoint bad = { .transport = NULL };	/* no transport */
	struct transport *t = (struct transport *)0x1;

	assert_string_equal(f->t->label, "local");
	assert_string_equal(f->t->ops->name, "local");
	assert_int_equal(transport_open(&bad, 1, &t, &f->err), -EINVAL);
	assert_ptr_equal(t, (struct transport *)0x1);
	transport_free(NULL);
}

/* ---- local exec ---- */

static void test_argv_literal(void **state)
{
	struct fixture *f = *state;
	const char *argv[] = { "printf", "%s|%s|%s|%s", "a b", "it's \"q\"", "$(reboot)",
			       "; rm -rf /tmp/nothing &", NULL };
	struct exec_req req = { .argv = argv, .timeout = 10 };

	assert_int_equal(run(f, &req), 0);
	assert_int_equal(f->res.status, 0);
	assert_string_equal(f->res.out.buf, "a b|it's \"q\"|$(reboot)|; rm -rf /tmp/nothing &");
}

static void test_stdin_1mib(void **state)
{
	struct fixture *f = *state;
	const char *argv[] = { "cat", NULL };
	size_t n = 1u << 20, i;
	unsigned char *in = malloc(n);
	struct exec_req req = { .argv = argv, .timeout = 20, .max_output = 2u << 20 };

	assert_non_null(in);
	for (i = 0; i < n; i++)
		in[i] = (unsigned char)(i * 2654435761u >> 13);
	req.input = in;
	req.input_len = n;
	assert_int_equal(run(f, &req), 0);
	assert_int_equal(f->res.status, 0);
	assert_int_equal(f->res.out.len, n);
	assert_memory_equal(f->res.out.buf, in, n);
	free(in);
}

/* A child that exits without reading its input must not take us down
 * with SIGPIPE. */
static void test_stdin_unread(void **state)
{
	struct fixture *f = *state;
	const char *argv[] = { "sh", "-c", "exit 4", NULL };
	size_t n = 4u << 20;
	char *in = calloc(1, n);
	struct exec_req req = { .argv = argv, .timeout = 10, .input = in, .input_len = n };

	assert_non_null(in);
	assert_int_equal(run(f, &req), 0);
	assert_int_equal(f->res.status, 4);
	free(in);
}

struct lines {
	size_t n;
	size_t len[8];
	int truncated[8];
	char first[8][16];
	int stop_after;
};

static int collect(void *arg, const char *line, size_t len, int truncated)
{
	struct lines *l = arg;

	if (l->n < 8) {
		l->len[l->n] = len;
		l->truncated[l->n] = truncated;
		snprintf(l->first[l->n], sizeof(l->first[0]), "%.*s", (int)(len < 15 ? len : 15),
			 line);
	}
	l->n++;
	if (l->stop_after && l->n >= (size_t)l->stop_after)
		return -1;
	return 0;
}

static void test_lines_truncated(void **state)
{
	struct fixture *f = *state;
	const char *argv[] = { "sh", "-c",
		"printf 'a\\nbb\\n'; head -c 204800 /dev/zero | tr '\\000' x; printf '\\nc\\n\\nlast'",
		NULL };
	struct lines l = { 0 };
	struct exec_req req = { .argv = argv, .timeout = 10, .on_line = collect, .arg = &l };

	assert_int_equal(run(f, &req), 0);
	assert_int_equal(f->res.status, 0);
	assert_int_equal(l.n, 6);
	assert_string_equal(l.first[0], "a");
	assert_string_equal(l.first[1], "bb");
	assert_int_equal(l.len[2], 64u << 10);	/* the default max_line */
	assert_true(l.truncated[2]);
	assert_string_equal(l.first[2], "xxxxxxxxxxxxxxx");
	assert_string_equal(l.first[3], "c");
	assert_false(l.truncated[3]);
	assert_int_equal(l.len[4], 0);
	assert_string_equal(l.first[5], "last");
	assert_int_equal(f->res.out.len, 0);
}

static void test_lines_max_line(void **state)
{
	struct fixture *f = *state;
	const char *argv[] = { "printf", "123456789\n12345\n", NULL };
	struct lines l = { 0 };
	struct exec_req req = { .argv = argv, .timeout = 10, .on_line = collect, .arg = &l,
				.max_line = 5 };

	assert_int_equal(run(f, &req), 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.first[0], "12345");
	assert_true(l.truncated[0]);
	assert_string_equal(l.first[1], "12345");
	assert_false(l.truncated[1]);
}

static void test_cancel_from_callback(void **state)
{
	struct fixture *f = *state;
	const char *argv[] = { "yes", NULL };
	struct lines l = { .stop_after = 10 };
	struct exec_req req = { .argv = argv, .timeout = 10, .on_line = collect, .arg = &l };
	double t0 = mono_now();

	assert_int_equal(run(f, &req), -ECANCELED);
	assert_true(mono_now() - t0 < 5);
	assert_int_equal(l.n, 10);
	assert_contains(f->err.buf, "yes");
}

static void test_stderr_apart(void **state)
{
	struct fixture *f = *state;
	const char *argv[] = { "sh", "-c", "echo out; echo err >&2; echo out2; exit 3", NULL };
	struct exec_req req = { .argv = argv, .timeout = 10 };

	assert_int_equal(run(f, &req), 0);
	assert_int_equal(f->res.status, 3);
	assert_int_equal(f->res.signal, 0);
	assert_string_equal(f->res.out.buf, "out\nout2\n");
	assert_string_equal(f->res.err.buf, "err\n");
}

static void test_status_signal(void **state)
{
	struct fixture *f = *state;
	const char *argv[] = { "sh", "-c", "kill -TERM $$", NULL };
	struct exec_req req = { .argv = argv, .timeout = 10 };

	assert_int_equal(run(f, &req), 0);
	assert_int_equal(f->res.status, -1);
	assert_int_equal(f->res.signal, SIGTERM);
}

static void test_not_found(void **state)
{
	struct fixture *f = *state;
	const char *argv[] = { "/nonexistent/tlblab-command", "x", NULL };
	struct exec_req req = { .argv = argv, .timeout = 10 };

	assert_int_equal(run(f, &req), 0);
	assert_int_equal(f->res.status, 127);
	assert_contains(f->res.err.buf, "cannot execute /nonexistent/tlblab-command");
}

static void test_output_cap_keeps_tail(void **state)
{
	struct fixture *f = *state;
	const char *argv[] = { "sh", "-c", "seq 1 200000; seq 1 200000 >&2", NULL };
	struct exec_req req = { .argv = argv, .timeout = 10, .max_output = 100 };
	size_t len;

	assert_int_equal(run(f, &req), 0);
	len = f->res.out.len;
	assert_int_equal(len, 100);
	assert_string_equal(f->res.out.buf + len - 14, "199999\n200000\n");
	assert_int_equal(f->res.err.len, 100);
	assert_string_equal(f->res.err.buf + 100 - 7, "200000\n");
}

/* A process that is gone or a zombie waiting for init to reap it. */
static int process_dead(long pid)
{
	char path[64], buf[256];
	FILE *fp;
	char *p;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fp = fopen(path, "re");
	if (!fp)
		return 1;
	p = fgets(buf, sizeof(buf), fp);
	fclose(fp);
	p = p ? strrchr(buf, ')') : NULL;
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

static void test_timeout_kills_group(void **state)
{
	struct fixture *f = *state;
	const char *argv[] = { "sh", "-c", "sleep 100 & echo $!; wait", NULL };
	struct exec_req req = { .argv = argv, .timeout = 1 };
	double t0 = mono_now(), dt;
	long pid;
	int i;

	assert_int_equal(run(f, &req), -ETIMEDOUT);
	dt = mono_now() - t0;
	assert_true(dt >= 0.9);
	assert_true(dt < 2.0);
	assert_contains(f->err.buf, "sleep 100");
	assert_contains(f->err.buf, "timed out after 1.");
	strbuf_trim(&f->res.out);
	assert_int_equal(parse_int_range(f->res.out.buf, 2, 1 << 30, &pid), 0);
	for (i = 0; i < 100 && !process_dead(pid); i++)
		sleep_sec(0.01);
	assert_true(process_dead(pid));
}

/* The state letter of a process in /proc/PID/stat ('T' when stopped), or 0. */
static char proc_state(long pid)
{
	struct strbuf sb = STRBUF_INIT;
	char path[64], st = 0;
	const char *paren;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (strbuf_read_file(&sb, path, 4096) == 0 && (paren = strrchr(sb.buf, ')')) && paren[1])
		st = paren[2];
	strbuf_release(&sb);
	return st;
}

struct pause_run {
	struct fixture *f;
	struct exec_req req;
	int rc;
};

static void *pause_thread(void *arg)
{
	struct pause_run *p = arg;

	p->rc = transport_exec(p->f->t, &p->req, &p->f->res, &p->f->err);
	return NULL;
}

/* A paused command is stopped as a whole group, and its timeout does not
 * run meanwhile: stopped past its timeout, it still finishes once resumed. */
static void test_pause_stops_group(void **state)
{
	struct fixture *f = *state;
	struct strbuf pidfile = STRBUF_INIT, script = STRBUF_INIT, text = STRBUF_INIT;
	volatile sig_atomic_t pause = 0;
	struct pause_run p = { .f = f, .rc = 99 };
	const char *argv[] = { "sh", "-c", NULL, NULL };
	double until;
	long pid = 0;
	pthread_t th;

	strbuf_addf(&pidfile, "%s/pid", f->dir);
	/* the grandchild writes the pid: the whole group must stop, not only sh */
	strbuf_addf(&script, "sh -c 'echo $$ >%s.tmp; mv %s.tmp %s; sleep 0.5; echo done' & wait",
		    pidfile.buf, pidfile.buf, pidfile.buf);
	argv[2] = script.buf;
	p.req = (struct exec_req){ .argv = argv, .timeout = 1.5, .pause = &pause };
	assert_int_equal(pthread_create(&th, NULL, pause_thread, &p), 0);
	until = mono_now() + 10;
	while (strbuf_read_file(&text, pidfile.buf, 64) < 0 && mono_now() < until)
		sched_yield();
	strbuf_trim(&text);
	assert_int_equal(parse_int_range(text.buf, 2, 1 << 30, &pid), 0);
	pause = 1;
	until = mono_now() + 10;
	while (proc_state(pid) != 'T' && mono_now() < until)
		sched_yield();
	assert_int_equal(proc_state(pid), 'T');
	/* stay stopped longer than the whole timeout */
	until = mono_now() + 2.0;
	while (mono_now() < until)
		sleep_sec(0.05);
	assert_int_equal(proc_state(pid), 'T');
	assert_int_equal(p.rc, 99);
	pause = 0;
	pthread_join(th, NULL);
	assert_int_equal(p.rc, 0);
	assert_int_equal(f->res.status, 0);
	assert_contains(f->res.out.buf, "done");
	strbuf_release(&pidfile);
	strbuf_release(&script);
	strbuf_release(&text);
}

/* The grandchild keeps stdout open after its parent exits: the timeout
 * still holds. */
static void test_timeout_orphan_holds_pipe(void **state)
{
	struct fixture *f = *state;
	const char *argv[] = { "sh", "-c", "sleep 100 & exit 0", NULL };
	struct exec_req req = { .argv = argv, .timeout = 0.5 };
	double t0 = mono_now();

	assert_int_equal(run(f, &req), -ETIMEDOUT);
	assert_true(mono_now() - t0 < 1.5);
}

/* The child sees stdin, stdout, stderr and nothing else of ours: every
 * descriptor it has beyond those was inheritable in this process before
 * the call (the test runner's own), except the one ls opens to list. */
static void test_no_fd_leak(void **state)
{
	struct fixture *f = *state;
	const char *argv[] = { "ls", "/proc/self/fd", NULL };
	struct exec_req req = { .argv = argv, .timeout = 10 };
	const char *p;
	int foreign = 0;

	assert_int_equal(run(f, &req), 0);
	for (p = f->res.out.buf; *p; p = strchr(p, '\n') + 1) {
		char num[16];
		long fd;
		int fl;

		snprintf(num, sizeof(num), "%.*s", (int)strcspn(p, "\n"), p);
		assert_int_equal(parse_int_range(num, 0, 1 << 20, &fd), 0);
		fl = fcntl((int)fd, F_GETFD);
		if (fd > 2 && (fl < 0 || (fl & FD_CLOEXEC)))
			foreign++;
		if (!strchr(p, '\n'))
			break;
	}
	assert_int_equal(foreign, 1);
}

/* ---- local upload / download ---- */

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *fp = fopen(path, "we");

	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
}

static int dir_entries(const char *dir)
{
	char cmd[160];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	p = popen(cmd, "r");
	if (p) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	return n;
}

static void test_upload_download(void **state)
{
	struct fixture *f = *state;
	char src[96], dst[96], back[96], small[96];
	struct strbuf got = STRBUF_INIT;
	struct stat st;
	size_t n = 300000, i;
	char *data = malloc(n);

	assert_non_null(data);
	for (i = 0; i < n; i++)
		data[i] = (char)(i * 7 + (i >> 9));
	snprintf(src, sizeof(src), "%s/src", f->dir);
	snprintf(dst, sizeof(dst), "%s/dst", f->dir);
	snprintf(back, sizeof(back), "%s/back", f->dir);
	snprintf(small, sizeof(small), "%s/small", f->dir);
	write_file(src, data, n);
	write_file(dst, "old", 3);

	assert_int_equal(transport_upload(f->t, src, dst, 0750, &f->err), 0);
	assert_int_equal(stat(dst, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0750);
	assert_int_equal(strbuf_read_file(&got, dst, n + 1), 0);
	assert_int_equal(got.len, n);
	assert_memory_equal(got.buf, data, n);
	assert_int_equal(dir_entries(f->dir), 2);	/* no temporary left */

	assert_int_equal(transport_download(f->t, dst, back, n, &f->err), 0);
	strbuf_reset(&got);
	assert_int_equal(strbuf_read_file(&got, back, n + 1), 0);
	assert_memory_equal(got.buf, data, n);

	assert_int_equal(transport_download(f->t, dst, small, n - 1, &f->err), -EFBIG);
	assert_contains(f->err.buf, "larger than");
	assert_int_equal(access(small, F_OK), -1);
	assert_int_equal(dir_entries(f->dir), 3);

	assert_int_equal(transport_upload(f->t, "/nonexistent/x", dst, 0644, &f->err), -ENOENT);
	assert_contains(f->err.buf, "/nonexistent/x");
	assert_int_equal(transport_download(f->t, "/nonexistent/y", back, 10, &f->err), -ENOENT);
	snprintf(small, sizeof(small), "%s/no/such/dir/file", f->dir);
	assert_int_equal(transport_upload(f->t, src, small, 0644, &f->err), -ENOENT);
	strbuf_release(&got);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shell_quote),
		cmocka_unit_test(test_error_classes),
		cmocka_unit_test_setup_teardown(test_shell_quote_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_label, setup, teardown),
		cmocka_unit_test_setup_teardown(test_argv_literal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stdin_1mib, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stdin_unread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lines_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lines_max_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_from_callback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stderr_apart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_status_signal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_found, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_cap_keeps_tail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_kills_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_orphan_holds_pipe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pause_stops_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_fd_leak, setup, teardown),
		cmocka_unit_test_setup_teardown(test_upload_download, setup, teardown),
	};

	return cmocka_run_group_tests_name("transport", tests, NULL, NULL);
}
