/*
 * QEMU confined, in the background, watched: qemu_sandbox.h says why and
 * how. Everything runs on the VM host through its transport, as fixed
 * shell scripts whose arguments are paths and argv, never script text.
 */
#include "qemu_sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "banned.h"

static int run(struct transport *t, const char *const *argv, double timeout, size_t max_output,
	       struct exec_result *res, struct strbuf *err)
{
	struct exec_req er = { .argv = argv, .timeout = timeout, .max_output = max_output };

	return transport_exec(t, &er, res, err);
}

/*
 * Starts the command from $3 on (prlimit, bwrap, QEMU) for the VM's
 * directory $2: in the background, in a session of its own, with the
 * monitor script $1 around it, stdin /dev/null and its output in
 * qemu.err; fresh console and plugin files first (the sandbox binds them,
 * so they must exist). A relative path bwrap is to bind is made absolute
 * from the working directory first (bwrap takes one from /), which the
 * sandbox then has, so QEMU finds what its arguments name there, as it
 * did before the sandbox. Exits 0 once qemu.pid holds QEMU's pid as the
 * host sees it, else non-zero with what went wrong on stderr.
 */
static const char launch_script[] =
	"m=$1 d=$2\n"
	"shift 2\n"
	"for t in setsid prlimit bwrap; do\n"
	"\tcommand -v $t >/dev/null 2>&1 && continue\n"
	"\techo \"$t is missing on this host: QEMU runs only in its sandbox (apt-get install util-linux bubblewrap)\" >&2\n"
	"\texit 127\n"
	"done\n"
	"n=$# k=0 bw=1\n"
	"while [ $n -gt 0 ]; do\n"
	"\ta=$1\n"
	"\tshift\n"
	"\tn=$((n - 1))\n"
	"\tif [ $k -gt 0 ]; then\n"
	"\t\tcase $a in /*) ;; *) a=$PWD/$a ;; esac\n"
	"\t\tk=$((k - 1))\n"
	"\telif [ $bw = 1 ]; then\n"
	"\t\tcase $a in --ro-bind | --bind | --dev-bind-try) k=2 ;; --) bw=0 ;; esac\n"
	"\tfi\n"
	"\tset -- \"$@\" \"$a\"\n"
	"done\n"
	"rm -f \"$d/qemu.pid\" \"$d/qemu.exit\" \"$d/qemu.info\" \"$d/console.log\" \"$d/insn.log\" || exit 1\n"
	": >\"$d/console.log\" && : >\"$d/insn.log\" || exit 1\n"
	"setsid sh -c \"$m\" sh \"$d\" \"$@\" </dev/null >/dev/null 2>\"$d/qemu.err\" &\n"
	"g=$!\n"
	"i=0\n"
	"until [ -s \"$d/qemu.pid\" ]; do\n"
	"\tif [ -e \"$d/qemu.exit\" ]; then cat \"$d/qemu.err\" >&2; exit 1; fi\n"
	"\tif [ $i -ge 600 ]; then\n"
	"\t\tkill -9 -- \"-$g\" 2>/dev/null\n"
	"\t\techo \"QEMU's sandbox did not start within 30 s\" >&2\n"
	"\t\texit 1\n"
	"\tfi\n"
	"\ti=$((i + 1))\n"
	"\tsleep 0.05\n"
	"done\n";

/*
 * The monitor: runs the command from $2 on with bwrap's --info-fd 3 going
 * to $1/qemu.info, keeps the pid bwrap reports there (QEMU's: --as-pid-1)
 * in qemu.pid while QEMU runs, and QEMU's exit status (128 + N for signal
 * N) in qemu.exit after. qemu.pid goes first, so no later reader kills
 * a process that took over the number.
 */
static const char monitor_script[] =
	"d=$1\n"
	"shift\n"
	"\"$@\" 3>\"$d/qemu.info\" &\n"
	"q=$!\n"
	"i=0\n"
	"while [ $i -lt 600 ] && kill -0 $q 2>/dev/null; do\n"
	"\tpid=$(sed -n 's/^ *\"child-pid\": *\\([0-9][0-9]*\\).*/\\1/p' \"$d/qemu.info\")\n"
	"\tif [ -n \"$pid\" ]; then\n"
	"\t\techo $pid >\"$d/qemu.pid.new\" && mv -f \"$d/qemu.pid.new\" \"$d/qemu.pid\"\n"
	"\t\tbreak\n"
	"\tfi\n"
	"\ti=$((i + 1))\n"
	"\tsleep 0.05\n"
	"done\n"
	"wait $q\n"
	"st=$?\n"
	"rm -f \"$d/qemu.pid\"\n"
	"echo $st >\"$d/qemu.exit.new\" && mv -f \"$d/qemu.exit.new\" \"$d/qemu.exit\"\n";

#define QEMU_ARGV_MAX 112

struct argv_list {
	const char *v[QEMU_ARGV_MAX + 1];
	size_t n;
};

static void argv_push(struct argv_list *a, const char *arg)
{
	if (a->n >= QEMU_ARGV_MAX)
		abort();	/* a fixed list below: a bug, not an input */
	a->v[a->n++] = arg;
	a->v[a->n] = NULL;
}

/* bwrap --ro-bind PATH PATH (--bind: writable; --dev-bind-try: a device,
 * when the host has it) */
static void argv_bind(struct argv_list *a, const char *how, const char *path)
{
	argv_push(a, how);
	argv_push(a, path);
	argv_push(a, path);
}

int qemu_sandbox_start(struct transport *t, const struct qemu_sandbox *sb, const char *const *qemu,
		       struct strbuf *err, struct strbuf *said)
{
	static const char *const sandbox[] = {
		"bwrap", "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
		"--unshare-cgroup-try", "--disable-userns", "--as-pid-1", "--new-session",
		"--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc",
		"--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
		"--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
		"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		"--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "LC_ALL", "C",
		"--info-fd", "3",
	};
	struct strbuf console = STRBUF_INIT, insn = STRBUF_INIT;
	struct argv_list a = { .n = 0 };
	struct exec_result res;
	char fsize[40];
	int r;

	strbuf_addf(&console, "%s/" QEMU_SANDBOX_CONSOLE, sb->dir);
	strbuf_addf(&insn, "%s/" QEMU_SANDBOX_INSN, sb->dir);
	snprintf(fsize, sizeof(fsize), "--fsize=%zu", sb->file_max);
	argv_push(&a, "sh");
	argv_push(&a, "-c");
	argv_push(&a, launch_script);
	argv_push(&a, "sh");
	argv_push(&a, monitor_script);
	argv_push(&a, sb->dir);
	/* every file QEMU writes is capped; no core file either */
	argv_push(&a, "prlimit");
	argv_push(&a, fsize);
	argv_push(&a, "--core=0");
	for (size_t i = 0; i < ARRAY_SIZE(sandbox); i++)
		argv_push(&a, sandbox[i]);
	if (sb->kvm)
		argv_bind(&a, "--dev-bind-try", "/dev/kvm");
	/* the kernel is in dir; of dir QEMU writes only these two */
	argv_bind(&a, "--ro-bind", sb->dir);
	argv_bind(&a, "--bind", console.buf);
	argv_bind(&a, "--bind", insn.buf);
	argv_bind(&a, "--ro-bind", sb->initrd);
	if (sb->plugin)
		argv_bind(&a, "--ro-bind", sb->plugin);
	if (strchr(sb->binary, '/'))
		argv_bind(&a, "--ro-bind", sb->binary);
	argv_push(&a, "--");
	for (size_t i = 0; qemu[i]; i++)
		argv_push(&a, qemu[i]);

	transport_exec_result_init(&res);
	r = run(t, a.v, 60, 0, &res, err);
	if (r == 0 && res.status != 0) {
		strbuf_add(said, res.err.buf, res.err.len);
		r = -1;
	}
	transport_exec_result_release(&res);
	strbuf_release(&console);
	strbuf_release(&insn);
	return r < 0 ? -1 : 0;
}

/*
 * What qemu_sandbox_state reads: "alive", or "gone STATUS" (STATUS from
 * qemu.exit, empty while the monitor has not written it), then the sizes
 * of the console and the plugin's file. A fixed script, as all of them
 * here: its one argument is the VM's directory.
 */
static const char state_script[] =
	"pid=$(cat \"$1/qemu.pid\" 2>/dev/null)\n"
	"if [ -n \"$pid\" ] && kill -0 \"$pid\" 2>/dev/null; then\n"
	"\techo alive\n"
	"else\n"
	"\techo \"gone $(cat \"$1/qemu.exit\" 2>/dev/null)\"\n"
	"fi\n"
	"for f in console.log insn.log; do stat -c %s \"$1/$f\" 2>/dev/null || echo 0; done\n";

int qemu_sandbox_state(struct transport *t, const char *dir, struct qemu_sandbox_state *st)
{
	const char *argv[] = { "sh", "-c", state_script, "sh", dir, NULL };
	struct exec_result res;
	struct strbuf err = STRBUF_INIT;
	char word[8] = "";
	int r = -1, n = 0;

	memset(st, 0, sizeof(*st));
	st->status = -1;
	transport_exec_result_init(&res);
	if (run(t, argv, 10, 0, &res, &err) == 0 && res.status == 0 &&
	    sscanf(res.out.buf, "%7s", word) == 1) {
		const char *nl = strchr(res.out.buf, '\n');

		st->alive = !strcmp(word, "alive");
		if (!st->alive && sscanf(res.out.buf, "gone %d", &n) == 1)
			st->status = n;
		if (nl && sscanf(nl + 1, "%llu %llu", &st->console_size, &st->insn_size) == 2)
			r = 0;
	}
	transport_exec_result_release(&res);
	strbuf_release(&err);
	return r;
}

void qemu_sandbox_stderr(struct transport *t, const char *dir, struct strbuf *out)
{
	struct strbuf err = STRBUF_INIT, path = STRBUF_INIT;
	struct exec_result res;

	strbuf_addf(&path, "%s/qemu.err", dir);
	transport_exec_result_init(&res);
	{
		const char *cat[] = { "cat", path.buf, NULL };

		if (run(t, cat, 20, 64u << 10, &res, &err) == 0)
			strbuf_add(out, res.out.buf, res.out.len);
	}
	transport_exec_result_release(&res);
	strbuf_release(&err);
	strbuf_release(&path);
}

/*
 * Kills the QEMU of the pidfile ($1) and waits (up to 10 s) until it is
 * gone (or a zombie), so that a QEMU started next does not meet it.
 */
static const char kill_script[] =
	"pid=$(cat \"$1\" 2>/dev/null) || exit 0\n"
	"kill -9 \"$pid\" 2>/dev/null || exit 0\n"
	"i=0\n"
	"while [ $i -lt 100 ]; do\n"
	"\tst=$(sed 's/.*) //' \"/proc/$pid/stat\" 2>/dev/null | cut -c1)\n"
	"\tcase $st in '' | Z | X) exit 0 ;; esac\n"	/* gone, or a zombie nobody reaps */
	"\tsleep 0.1\n"
	"\ti=$((i + 1))\n"
	"done\n";

void qemu_sandbox_kill(struct transport *t, const char *dir)
{
	struct strbuf err = STRBUF_INIT, pidfile = STRBUF_INIT;
	struct exec_result res;

	strbuf_addf(&pidfile, "%s/qemu.pid", dir);
	transport_exec_result_init(&res);
	{
		const char *argv[] = { "sh", "-c", kill_script, "sh", pidfile.buf, NULL };

		run(t, argv, 15, 0, &res, &err);
	}
	transport_exec_result_release(&res);
	strbuf_release(&err);
	strbuf_release(&pidfile);
}
