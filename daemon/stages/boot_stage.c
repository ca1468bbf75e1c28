#include "boot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch.h"
#include "backend.h"
#include "build.h"
#include "console.h"
#include "store.h"
#include "transport.h"
#include "util.h"
#include "banned.h"

#define CONSOLE_EXCERPT_LINES 40

const struct boot_ops *boot_ops_of(const struct cfg_machine *m)
{
	return m->boot ? m->boot->ops : NULL;
}


void bootrun_outcome_init(struct bootrun_outcome *o)
{
	memset(o, 0, sizeof(*o));
	strbuf_init(&o->boot_message, 0);
	run_outcome_init(&o->run);
}

void bootrun_outcome_release(struct bootrun_outcome *o)
{
	if (!o)
		return;
	strbuf_release(&o->boot_message);
	run_outcome_release(&o->run);
}

static void random_id(char out[33])
{
	unsigned char b[16];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, b, sizeof(b)) != (ssize_t)sizeof(b)) {
		double t = wall_now();

		memcpy(b, &t, sizeof(t));
		memcpy(b + 8, &t, sizeof(t));
	}
	if (fd >= 0)
		close(fd);
	hex_encode(b, sizeof(b), out);
}

/* Reads a small file on the booted machine. */
static int guest_read(struct transport *t, const char *path, struct strbuf *out, struct strbuf *err)
{
	const char *argv[] = { "cat", path, NULL };
	struct exec_req er = { .argv = argv, .timeout = 30 };
	struct exec_result res;
	int r;

	transport_exec_result_init(&res);
	r = transport_exec(t, &er, &res, err);
	if (r == 0 && res.status != 0)
		r = strbuf_seterr(err, "cat %s: exit %d", path, res.status) ? -EIO : -EIO;
	if (r == 0)
		strbuf_addstr(out, res.out.buf);
	transport_exec_result_release(&res);
	return r;
}

/* The booted machine runs our kernel: the boot id we put on its command
 * line, and the build's host tag in /proc/version. */
static enum boot_outcome_kind check_identity(const struct cfg_machine *guest, const char *boot_id,
					     const char *build_id, struct strbuf *msg)
{
	struct strbuf err = STRBUF_INIT, cmdline = STRBUF_INIT, version = STRBUF_INIT, want = STRBUF_INIT;
	struct transport *t = NULL;
	enum boot_outcome_kind k = BOOT_OK;

	if (transport_open(&guest->ep, 15, &t, &err) < 0 || guest_read(t, "/proc/cmdline", &cmdline, &err) < 0 ||
	    guest_read(t, "/proc/version", &version, &err) < 0) {
		strbuf_addf(msg, "boot: the booted machine does not answer: %s", err.buf);
		k = BOOT_INFRA;
		goto out;
	}
	strbuf_addf(&want, "tlblab.boot=%s", boot_id);
	if (!strstr(cmdline.buf, want.buf)) {
		strbuf_addf(msg, "boot: wrong kernel: /proc/cmdline lacks %s: %s", want.buf, cmdline.buf);
		k = BOOT_KERNEL;
		goto out;
	}
	strbuf_reset(&want);
	strbuf_addf(&want, "@b-%.12s)", build_id);
	if (!strstr(version.buf, want.buf)) {
		strbuf_addf(msg, "boot: wrong kernel: /proc/version is not build %.12s: %s", build_id, version.buf);
		k = BOOT_KERNEL;
	}
out:
	transport_free(t);
	strbuf_release(&err);
	strbuf_release(&cmdline);
	strbuf_release(&version);
	strbuf_release(&want);
	return k;
}

/* The booted machine's console, for a run that fails (run_request.console). */
struct console_src {
	const struct boot_ops *ops;
	struct boot_session *sess;
};

static void read_console(void *arg, struct strbuf *out)
{
	const struct console_src *cs = arg;

	cs->ops->console(cs->sess, out);
}

static int read_insn(void *arg, struct strbuf *out, struct strbuf *why)
{
	const struct console_src *cs = arg;

	return cs->ops->insn(cs->sess, out, why);
}

void boot_and_run(const struct bootrun_request *req, struct bootrun_outcome *out)
{
	const struct boot_ops *ops = boot_ops_of(req->machine);
	const struct boot_ask ask = { .tlb_model = req->tlb_model };
	struct strbuf kernel = STRBUF_INIT, console = STRBUF_INIT, log = STRBUF_INIT, trouble = STRBUF_INIT;
	struct boot_session *sess = NULL;
	struct cfg_machine guest, asked;
	const struct cfg_machine *m = req->machine;
	char boot_id[33];
	int r;

	memset(&guest, 0, sizeof(guest));
	random_id(boot_id);
	out->boot = BOOT_OK;
	if (!ops) {
		out->boot = BOOT_INFRA;
		strbuf_addf(&out->boot_message, "boot: %s cannot boot kernels (boot: %s)", req->machine->name,
			    config_boot_method_name(req->machine));
		goto out;
	}
	build_dir(req->cfg, req->build_id, &kernel);
	/* the job's kernels are built for its arch, which is the machine's */
	strbuf_addf(&kernel, "/%s", arch_get(req->machine->arch)->image);
	strbuf_addf(&log, "== boot %s build %.12s on %s (%s), boot id %s\n", req->side, req->build_id,
		    req->machine->name, ops->name, boot_id);
	run_stage_log(req->st, req->job_id, req->boot_stage, log.buf);
	/* a boot whose id is not kept cannot be told from another one */
	if ((r = store_stage_set_ids(req->st, req->boot_stage, req->build_id, boot_id)) < 0) {
		out->boot = BOOT_INFRA;
		out->store_error = r;
		strbuf_addf(&out->boot_message, "boot: store: could not keep the boot id: %s", store_strerror(r));
		goto out;
	}
	/* a sweep's vCPU count, on a copy of the machine (submit.c placed
	 * the boot on a machine whose max_cpus allows it) */
	if (req->cpus > 0 && m->max_cpus > 0) {
		asked = *m;
		asked.cpus = req->cpus;
		m = &asked;
	}
	if (req->cpus > 0) {
		strbuf_reset(&log);
		strbuf_addf(&log, "== a guest of %d vCPUs (the suite's guest_cpus)\n", m->cpus);
		run_stage_log(req->st, req->job_id, req->boot_stage, log.buf);
	}
	out->boot = ops->start(m, &ask, kernel.buf, boot_id, req->deadline, req->cancel, &sess, &guest,
			       &console, &out->boot_message);
	if (out->boot == BOOT_OK)
		out->boot = check_identity(&guest, boot_id, req->build_id, &out->boot_message);
	strbuf_reset(&log);
	if (out->boot != BOOT_OK) {
		strbuf_addstr(&log, "== console (last lines):\n");
		strbuf_add_last_lines(&log, console.buf, console.len, CONSOLE_EXCERPT_LINES);
		if (console_scan(console.buf, &trouble, 10)) {
			strbuf_addstr(&out->boot_message, "; console: ");
			strbuf_add(&out->boot_message, trouble.buf, trouble.len < 600 ? trouble.len : 600);
		}
		strbuf_addf(&log, "\n%s\n", out->boot_message.buf);
		run_stage_log(req->st, req->job_id, req->boot_stage, log.buf);
		goto out;
	}
	strbuf_addstr(&log, "== console:\n");
	strbuf_add(&log, console.buf, console.len);
	strbuf_addstr(&log, "\n== booted; identity checked\n");
	run_stage_log(req->st, req->job_id, req->boot_stage, log.buf);
	if ((r = store_stage_handoff(req->st, req->boot_stage, req->run_stage)) < 0) {
		out->boot = BOOT_INFRA;
		out->store_error = store_failed(r) ? r : 0;
		strbuf_addf(&out->boot_message, "boot: could not hand the machine to the run stage: %s",
			    store_strerror(r));
		goto out;
	}
	out->ran = 1;
	out->booted_at = wall_now();
	{
		struct console_src cs = { ops, sess };
		struct run_request rr = {
			.st = req->st, .job_id = req->job_id, .stage_id = req->run_stage, .machine = &guest,
			.workloads = req->workloads, .side = req->side, .build_id = req->build_id,
			.boot_id = boot_id, .cpus = req->cpus, .deadline = req->deadline, .agent_local = req->agent_local,
			.agent_sha256 = req->agent_sha256, .cancel = req->cancel,
			.console = read_console, .console_arg = &cs,
			.insn = ops->insn ? read_insn : NULL, .insn_arg = &cs,
		};

		if (req->measure_begin && req->measure_begin(req->measure_arg, req->run_stage) < 0) {
			out->run.kind = RUN_CANCELLED;
			strbuf_addstr(&out->run.message, "run: cancelled while waiting for a quiet host");
		} else {
			run_stage(&rr, &out->run);
			if (req->measure_end)
				req->measure_end(req->measure_arg);
		}
	}
	/* what the kernel said while the suite ran */
	strbuf_reset(&console);
	ops->console(sess, &console);
	strbuf_reset(&trouble);
	if (console_scan(console.buf, &trouble, 20)) {
		strbuf_reset(&log);
		strbuf_addf(&log, "== console trouble during the run:\n%s", trouble.buf);
		strbuf_addstr(&log, "== the kernel's report:\n");
		if (!console_oops(console.buf, &log, 80))
			strbuf_addstr(&log, "(none: only processes died)\n");
		run_stage_log(req->st, req->job_id, req->run_stage, log.buf);
		if (console_scan(console.buf, NULL, 0) == 2 && out->run.kind != RUN_DONE) {
			out->boot = BOOT_KERNEL;
			strbuf_addf(&out->boot_message, "run: the kernel panicked during the suite: %.600s", trouble.buf);
		}
	}
	/* a capped file is a cut one: the run's figures cannot stand */
	strbuf_reset(&trouble);
	if (out->boot == BOOT_OK && ops->over_limit && ops->over_limit(sess, &trouble)) {
		out->boot = BOOT_KERNEL;
		strbuf_add(&out->boot_message, trouble.buf, trouble.len);
		strbuf_reset(&log);
		strbuf_addf(&log, "== %s\n", trouble.buf);
		run_stage_log(req->st, req->job_id, req->run_stage, log.buf);
	}
out:
	if (sess)
		ops->stop(sess);
	strbuf_release(&kernel);
	strbuf_release(&console);
	strbuf_release(&log);
	strbuf_release(&trouble);
}
