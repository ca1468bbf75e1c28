/*
 * What boot: kexec and boot: reboot share (restart.h). A real machine,
 * reached over SSH, is restarted into the side's kernel; the two methods
 * (boot_kexec.c, boot_reboot.c) differ only in how.
 *
 * kexec does not go through the firmware: the kernel is uploaded to the
 * machine's workdir, loaded with `kexec -l` and started with `kexec -e`.
 * reboot goes through it: the kernel is installed as
 * <kernel_dir>/tlblab-vmlinuz, a GRUB menu entry with the id "tlblab" is
 * written to the entry file (Debian's grub.cfg sources custom.cfg), GRUB is
 * told to boot that entry once (grub-reboot), and the machine reboots. GRUB
 * clears the one-time choice as it boots it, so if the new kernel hangs or
 * panics and the machine is reset (by panic=N, a watchdog or our power
 * cycle), it comes back on its own default kernel.
 *
 * Either way the restart does not return: the file systems are synced first,
 * and the connection that ran it drops (a transport error there is the
 * expected outcome, not a failure). The new kernel carries the boot id on its
 * command line like a QEMU guest: the config's `append`, or else the running
 * command line without the previous boot id and the boot loader's initrd=
 * and BOOT_IMAGE= words. Every value reaches kexec as one argv element, and
 * GRUB as a word of its script; the command line is checked word by word
 * first.
 *
 * Whether the machine restarted is told by /proc/sys/kernel/random/boot_id,
 * a fresh UUID at every boot, read before the restart and at each poll of a
 * fresh connection after it: an answer with the same one means the machine
 * has not gone down yet (kexec is quick enough on real hardware that a
 * "went away" phase may never be seen); an answer with another one is the
 * new boot: ours when /proc/cmdline has our boot id, else the machine fell
 * back to another kernel (the new one failed and something reset it into
 * its default kernel: the kernel's failure, a result). A machine silent
 * until the boot deadline is power-cycled when the config says how, then
 * waited for once more (power_cycle_timeout, or the boot timeout again:
 * firmware can take minutes after a cycle); silent still, it is infra and the scheduler marks it
 * bad.
 *
 * There is no serial console: the console is the booted kernel's dmesg read
 * over SSH, after the boot and after the run, so console_scan still finds
 * panics, oopses and warnings after the fact. stop() has nothing to undo:
 * the machine stays on the kernel until the next boot restarts it.
 */
#include "restart.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transport.h"
#include "util.h"
#include "banned.h"

#define CONNECT_TIMEOUT 10.0		/* the connection that uploads and loads */
#define POLL_CONNECT_TIMEOUT 4.0	/* each poll while the machine restarts */
#define POLL_INTERVAL 1.0
#define RESTART_TIMEOUT 5.0		/* kexec -e, the reboot command */
#define SYNC_TIMEOUT 60.0
#define POWER_CYCLE_TIMEOUT 120.0
#define DMESG_TIMEOUT 20.0
#define DMESG_MAX (2u << 20)
#define IDENTITY_MAX (64u << 10)
#define CMDLINE_SIZE 2048		/* x86's COMMAND_LINE_SIZE, with the NUL */

struct boot_session {
	const struct cfg_machine *m;	/* the config's; outlives the session */
};

/* What a machine says about the kernel it runs. */
struct identity {
	struct strbuf cmdline, version, boot_id;	/* boot_id empty when unknown */
};

static void identity_init(struct identity *id)
{
	strbuf_init(&id->cmdline, 0);
	strbuf_init(&id->version, 0);
	strbuf_init(&id->boot_id, 0);
}

static void identity_release(struct identity *id)
{
	strbuf_release(&id->cmdline);
	strbuf_release(&id->version);
	strbuf_release(&id->boot_id);
}

int restart_run(struct transport *t, const char *const *argv, double timeout, size_t max_output,
		struct exec_result *res, struct strbuf *err)
{
	struct exec_req er = { .argv = argv, .timeout = timeout, .max_output = max_output };

	transport_exec_result_release(res);
	transport_exec_result_init(res);
	return transport_exec(t, &er, res, err);
}

/* Copies the line of text starting at *p (without its newline) into out and
 * moves *p past it. */
static void take_line(const char **p, struct strbuf *out)
{
	const char *eol = strchr(*p, '\n');
	size_t len = eol ? (size_t)(eol - *p) : strlen(*p);

	strbuf_reset(out);
	strbuf_add(out, *p, len);
	*p += eol ? len + 1 : len;
}

/* Reads the running kernel's command line, version and boot UUID over t.
 * 0, or a negative errno with err (the boot UUID alone may be missing). */
static int identity_read(struct transport *t, struct identity *id, struct strbuf *err)
{
	const char *argv[] = { "cat", "/proc/cmdline", "/proc/version", "/proc/sys/kernel/random/boot_id",
			       NULL };
	struct exec_result res;
	const char *p;
	int r;

	transport_exec_result_init(&res);
	r = restart_run(t, argv, 15, IDENTITY_MAX, &res, err);
	if (r == 0 && !strchr(res.out.buf, '\n')) {
		strbuf_seterr(err, "%s: cannot read /proc/cmdline: exit %d: %.200s", t->label, res.status,
			      res.err.buf);
		r = -EIO;
	}
	if (r == 0) {
		p = res.out.buf;
		take_line(&p, &id->cmdline);
		take_line(&p, &id->version);
		take_line(&p, &id->boot_id);
		strbuf_trim(&id->boot_id);
	}
	transport_exec_result_release(&res);
	return r;
}

/* Opens a fresh connection and reads the identity: 0, or a negative errno
 * (the machine does not answer). */
static int identity_probe(const struct cfg_machine *m, struct identity *id, struct strbuf *err)
{
	struct transport *t = NULL;
	int r;

	r = transport_open(&m->ep, POLL_CONNECT_TIMEOUT, &t, err);
	if (r == 0)
		r = identity_read(t, id, err);
	transport_free(t);
	return r;
}

static int has_word(const char *cmdline, const char *word)
{
	size_t n = strlen(word);
	const char *p = cmdline;

	while ((p = strstr(p, word))) {
		if ((p == cmdline || p[-1] == ' ') && (!p[n] || p[n] == ' ' || p[n] == '\n'))
			return 1;
		p += n;
	}
	return 0;
}

static int starts_with(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(s, prefix, n);
}

/* A word kexec passes on, as one argv element: printable ASCII without
 * quotes or backslashes (the kernel's own parser gives those a meaning);
 * for a GRUB script, nothing its shell-like language expands or splits on
 * either. */
static int word_ok(const char *w, size_t len, int grub)
{
	for (size_t i = 0; i < len; i++) {
		if (w[i] <= ' ' || w[i] > '~' || w[i] == '"' || w[i] == '\'' || w[i] == '\\')
			return 0;
		if (grub && strchr("$;{}|&<>#`", w[i]))
			return 0;
	}
	return 1;
}

/*
 * The new kernel's command line into out: the config's append, or the
 * running one without the previous boot id and the boot loader's words,
 * then tlblab.boot=<boot_id>. -1 with message when a word cannot be passed
 * on or the result is too long for the kernel.
 */
static int cmdline_build(const struct restart_plan *plan, const struct cfg_machine *m, const char *running,
			 const char *boot_id, struct strbuf *out, struct strbuf *message)
{
	const char *src = plan->append ? plan->append : running;
	const char *method = plan->method;
	int from_running = src == running;
	const char *p = src;

	while (*p) {
		size_t len;

		if (*p == ' ' || *p == '\t' || *p == '\n') {
			p++;
			continue;
		}
		len = strcspn(p, " \t\n");
		if (!starts_with(p, len, "tlblab.boot=") &&
		    !(from_running && (starts_with(p, len, "initrd=") || starts_with(p, len, "BOOT_IMAGE=")))) {
			if (!word_ok(p, len, plan->grub)) {
				strbuf_addf(message, "boot: %s's command line has a word %s will not pass on: "
					    "%.*s (set %s: append: for this machine)", m->name, method,
					    len > 120 ? 120 : (int)len, p, method);
				return -1;
			}
			strbuf_add(out, p, len);
			strbuf_addch(out, ' ');
		}
		p += len;
	}
	strbuf_addf(out, "tlblab.boot=%s", boot_id);
	if (out->len >= CMDLINE_SIZE) {
		strbuf_addf(message, "boot: the command line for %s is %zu bytes, more than the kernel takes "
			    "(%d)", m->name, out->len, CMDLINE_SIZE - 1);
		return -1;
	}
	return 0;
}

enum wait_result {
	WAIT_OURS,		/* a new boot with our boot id */
	WAIT_OTHER,		/* a new boot of another kernel */
	WAIT_SAME,		/* still the boot we kexec'd from, at the deadline */
	WAIT_SILENT,		/* no answer at the deadline */
	WAIT_CANCELLED,
	WAIT_RESULT_MAX
};

/*
 * Polls until the machine answers from a boot other than the one whose
 * boot UUID is `before` (empty: unknown, then any answer after a silence
 * counts as a new boot), or until `until`. On WAIT_OURS and WAIT_OTHER, id
 * is what it answered.
 */
static enum wait_result wait_back(const struct cfg_machine *m, const char *tag, const char *before,
				  double until, volatile sig_atomic_t *cancel, struct identity *id,
				  struct strbuf *last_err)
{
	int answered_same = 0, went_away = 0;

	for (;;) {
		if (cancel && *cancel)
			return WAIT_CANCELLED;
		strbuf_reset(last_err);
		if (identity_probe(m, id, last_err) == 0) {
			int new_boot = *before ? strcmp(id->boot_id.buf, before) != 0 : went_away;

			if (has_word(id->cmdline.buf, tag))
				return WAIT_OURS;
			if (new_boot)
				return WAIT_OTHER;
			answered_same = 1;
		} else {
			answered_same = 0;
			went_away = 1;
		}
		if (mono_now() + POLL_INTERVAL >= until)
			return answered_same ? WAIT_SAME : WAIT_SILENT;
		sleep_sec(POLL_INTERVAL);
	}
}

/* Runs the machine's power_cycle argv on the daemon's host. 0, or -1 with err. */
static int power_cycle(const struct cfg_machine *m, struct strbuf *err)
{
	struct transport *t = NULL;
	struct exec_result res;
	int r;

	transport_exec_result_init(&res);
	r = transport_open(transport_here(), 0, &t, err);
	if (r == 0)
		r = restart_run(t, (const char *const *)m->power_cycle, POWER_CYCLE_TIMEOUT, 64u << 10, &res, err);
	if (r == 0 && res.status != 0) {
		strbuf_seterr(err, "%s exited with %d: %.300s", m->power_cycle[0], res.status, res.err.buf);
		r = -1;
	}
	transport_free(t);
	transport_exec_result_release(&res);
	return r < 0 ? -1 : 0;
}

/* Appends the running kernel's dmesg (bounded) to out, or a note why not. */
static void read_dmesg(const struct cfg_machine *m, struct strbuf *out)
{
	const char *argv[] = { "dmesg", NULL };
	struct transport *t = NULL;
	struct exec_result res;
	struct strbuf err = STRBUF_INIT;
	int r;

	transport_exec_result_init(&res);
	r = transport_open(&m->ep, POLL_CONNECT_TIMEOUT, &t, &err);
	if (r == 0)
		r = restart_run(t, argv, DMESG_TIMEOUT, DMESG_MAX, &res, &err);
	if (r == 0 && res.status == 0)
		strbuf_add(out, res.out.buf, res.out.len);
	else
		strbuf_addf(out, "\n[tlblab: cannot read dmesg on %s: %s%.200s]\n", m->name,
			    r < 0 ? err.buf : "", r < 0 ? "" : res.err.buf);
	transport_free(t);
	transport_exec_result_release(&res);
	strbuf_release(&err);
}

/*
 * Readies m to restart into the kernel: uploads it to plan->dir, reads
 * what the machine runs now (into before), builds the new command line and
 * has plan->prepare ready the boot. Then the machine stays as it is until
 * restart_fire. BOOT_OK, or why not with message.
 */
static enum boot_outcome_kind restart_ready(const struct restart_plan *plan, const struct cfg_machine *m,
					    const char *kernel_path, const char *boot_id, struct identity *before,
					    struct strbuf *console, struct strbuf *message)
{
	struct strbuf err = STRBUF_INIT, image = STRBUF_INIT, cmdline = STRBUF_INIT;
	const char *mk[] = { "mkdir", "-p", plan->dir, NULL };
	struct exec_result res;
	struct transport *t = NULL;
	enum boot_outcome_kind k = BOOT_INFRA;

	transport_exec_result_init(&res);
	if (config_endpoint_local(&m->ep)) {
		/* a local machine would restart the daemon's own host */
		strbuf_addf(message, "boot: %s: boot %s needs transport ssh", m->name, plan->method);
		goto out;
	}
	if (transport_open(&m->ep, CONNECT_TIMEOUT, &t, &err) < 0) {
		strbuf_addf(message, "boot: cannot reach %s: %s", m->name, err.buf);
		goto out;
	}
	if (restart_run(t, mk, 30, 0, &res, &err) < 0 || res.status != 0) {
		strbuf_addf(message, "boot: mkdir %s on %s: %s%.300s", plan->dir, m->name, err.buf, res.err.buf);
		goto out;
	}
	strbuf_addf(&image, "%s/%s", plan->dir, plan->image);
	if (transport_upload(t, kernel_path, image.buf, 0644, &err) < 0) {
		strbuf_addf(message, "boot: copying the kernel to %s: %s", m->name, err.buf);
		goto out;
	}
	if (identity_read(t, before, &err) < 0) {
		strbuf_addf(message, "boot: %s", err.buf);
		goto out;
	}
	if (cmdline_build(plan, m, before->cmdline.buf, boot_id, &cmdline, message) < 0)
		goto out;
	strbuf_addf(console, "[tlblab: %s runs %.200s]\n", m->name, before->version.buf);
	if (plan->prepare(plan, t, m, image.buf, cmdline.buf, boot_id, console, message) == 0)
		k = BOOT_OK;
out:
	transport_free(t);
	transport_exec_result_release(&res);
	strbuf_release(&err);
	strbuf_release(&image);
	strbuf_release(&cmdline);
	return k;
}

/*
 * Syncs and runs the plan's restart, over a connection of its own with a
 * short timeout for every libssh call: the one that runs the restart hangs
 * on a peer that is gone, and the transport's clean-up after the timeout
 * must not wait long for it. *ret_t0 is when the restart ran. BOOT_OK, or
 * BOOT_INFRA with message.
 */
static enum boot_outcome_kind restart_fire(const struct restart_plan *plan, const struct cfg_machine *m,
					   double *ret_t0, struct strbuf *console, struct strbuf *message)
{
	const char *sync_argv[] = { "sync", NULL };
	struct strbuf err = STRBUF_INIT;
	struct exec_result res;
	struct transport *t = NULL;
	enum boot_outcome_kind k = BOOT_OK;
	int r;

	transport_exec_result_init(&res);
	if (transport_open(&m->ep, RESTART_TIMEOUT, &t, &err) < 0) {
		strbuf_addf(message, "boot: cannot reach %s again for %s: %s", m->name, plan->verb, err.buf);
		k = BOOT_INFRA;
		goto out;
	}
	restart_run(t, sync_argv, SYNC_TIMEOUT, 0, &res, &err);
	strbuf_reset(&err);
	*ret_t0 = mono_now();
	r = restart_run(t, plan->command, RESTART_TIMEOUT, 0, &res, &err);
	/* kexec -e returns only when it could not start the new kernel;
	 * a reboot command may return at once and restart after */
	if (r == 0 && res.status != 0) {
		strbuf_addf(message, "boot: %s on %s failed: exit %d: %.500s", plan->command[0], m->name,
			    res.status, res.err.buf);
		k = BOOT_INFRA;
		goto out;
	}
	strbuf_addf(console, "[tlblab: %s: the connection ended after %.1f s: %s]\n", plan->verb,
		    mono_now() - *ret_t0, r < 0 ? err.buf : "exit 0");
out:
	transport_free(t);
	transport_exec_result_release(&res);
	strbuf_release(&err);
	return k;
}

/*
 * Waits for m to come back after the restart at t0 (power-cycling it once
 * when it stays silent and the config says how), and tells whose kernel
 * it came back on, with its dmesg in console.
 */
static enum boot_outcome_kind restart_wait(const struct restart_plan *plan, const struct cfg_machine *m,
					   const char *boot_id, const struct identity *before, double t0,
					   double deadline, volatile sig_atomic_t *cancel, struct strbuf *console,
					   struct strbuf *message)
{
	struct strbuf err = STRBUF_INIT, tag = STRBUF_INIT;
	const char *verb = plan->verb;
	double timeout = m->boot_timeout > 0 ? m->boot_timeout : plan->timeout, until;
	enum boot_outcome_kind k = BOOT_OK;
	struct identity after;
	enum wait_result w;
	int cycled = 0;

	identity_init(&after);
	strbuf_addf(&tag, "tlblab.boot=%s", boot_id);
	until = t0 + timeout;
	if (until > deadline)
		until = deadline;
	for (;;) {
		w = wait_back(m, tag.buf, before->boot_id.buf, until, cancel, &after, &err);
		if (w != WAIT_SILENT || !m->power_cycle || cycled)
			break;
		strbuf_addf(console, "[tlblab: %s silent %.0f s after %s; power-cycling it]\n", m->name,
			    mono_now() - t0, verb);
		cycled = 1;
		if (power_cycle(m, &err) < 0) {
			strbuf_addf(message, "boot: %s did not come back after %s, and power_cycle failed: %s",
				    m->name, verb, err.buf);
			k = BOOT_INFRA;
			goto out;
		}
		until = mono_now() + (m->power_cycle_timeout > 0 ? m->power_cycle_timeout : timeout);
		if (until > deadline)
			until = deadline;
	}
	switch (w) {
	case WAIT_OURS:
		strbuf_addf(console, "[tlblab: %s back on the new kernel %.1f s after %s%s]\n", m->name,
			    mono_now() - t0, verb, cycled ? " and a power cycle" : "");
		break;
	case WAIT_OTHER:
		strbuf_addf(message, "boot: the machine came back on another kernel: /proc/cmdline lacks %s%s: "
			    "%.300s; /proc/version: %.300s", tag.buf, cycled ? " (after a power cycle)" : "",
			    after.cmdline.buf, after.version.buf);
		k = BOOT_KERNEL;
		break;
	case WAIT_SAME:
		strbuf_addf(message, "boot: %s did not restart %s: it still runs the previous boot after "
			    "%.0f s", verb, m->name, mono_now() - t0);
		k = BOOT_INFRA;
		break;
	case WAIT_SILENT:
		strbuf_addf(message, "boot: %s did not come back within %.0f s after %s%s: %s", m->name,
			    mono_now() - t0, verb, cycled ? " and a power cycle" : " (no power_cycle configured)",
			    err.buf);
		k = BOOT_INFRA;
		break;
	case WAIT_CANCELLED:
	default:
		strbuf_addstr(message, "boot: cancelled");
		k = BOOT_CANCELLED;
		break;
	}
	if (w == WAIT_OURS || w == WAIT_OTHER) {
		strbuf_addf(console, "[tlblab: dmesg of %s]\n", m->name);
		read_dmesg(m, console);
	}
	if (w == WAIT_OTHER)
		strbuf_addf(console, "\n[tlblab: that was the dmesg of the kernel %s fell back to; without a serial "
			    "console, what the new kernel said is lost]\n", m->name);
out:
	identity_release(&after);
	strbuf_release(&err);
	strbuf_release(&tag);
	return k;
}

enum boot_outcome_kind restart_boot(const struct restart_plan *plan, const struct cfg_machine *m,
				    const char *kernel_path, const char *boot_id, double deadline,
				    volatile sig_atomic_t *cancel, struct boot_session **ret,
				    struct cfg_machine *guest, struct strbuf *console, struct strbuf *message)
{
	struct identity before;
	enum boot_outcome_kind k;
	double t0 = 0;

	*ret = NULL;
	identity_init(&before);
	k = restart_ready(plan, m, kernel_path, boot_id, &before, console, message);
	if (k == BOOT_OK && cancel && *cancel) {
		/* the last moment the machine can stay as it is (a GRUB entry
		 * set to boot once stays set: the next boot replaces it) */
		strbuf_addstr(message, "boot: cancelled");
		k = BOOT_CANCELLED;
	}
	if (k == BOOT_OK)
		k = restart_fire(plan, m, &t0, console, message);
	if (k == BOOT_OK)
		k = restart_wait(plan, m, boot_id, &before, t0, deadline, cancel, console, message);
	if (k == BOOT_OK) {
		*guest = *m;
		guest->boot = NULL;	/* none: the booted kernel is what it runs */
		guest->boot_conf = NULL;
		*ret = xcalloc(1, sizeof(**ret));
		(*ret)->m = m;
	}
	identity_release(&before);
	return k;
}

void restart_console(struct boot_session *s, struct strbuf *out)
{
	if (s)
		read_dmesg(s->m, out);
}

void restart_stop(struct boot_session *s)
{
	free(s);
}
