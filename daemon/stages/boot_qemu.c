/*
 * boot: qemu. The VM runs on the machine's host (its endpoint, usually
 * local): the kernel is copied to the host's work directory, QEMU starts
 * in the background with -kernel/-initrd, the serial console in a file and
 * the guest's SSH port forwarded to guest_host:ssh_port, and -no-reboot so
 * a kernel panic (panic=-1) ends the VM instead of looping. The guest's
 * init prints "tlblab-guest: ready" once sshd runs.
 *
 * QEMU runs confined, in the background (qemu_sandbox.h): under bubblewrap,
 * its own seccomp filter (-sandbox on, with obsolete calls, privilege
 * changes, fork/exec and resource control denied) and a cap on the files
 * it writes (lab.qemu_file_max). A console or plugin file that reaches the
 * cap fails the boot, or the run after it (over_limit), as the kernel's
 * (class boot), naming the file and the cap. QEMU's exit status tells a
 * QEMU that would not start (no -sandbox in an old build, a sandbox it
 * cannot make) or that its filter killed, class infra with what QEMU said,
 * from a kernel that ended the VM (exit 0 after -no-reboot), class boot.
 *
 * random.trust_cpu=on: the kernel seeds its random number generator from
 * the CPU's (RDRAND, RNDR; under TCG, QEMU's, fed by the host) as it
 * starts. Without it the guest's sshd waits in its first getrandom() while
 * the kernel harvests jitter entropy in a busy loop. Under icount the
 * guest's clock reads 0.25 s against 5.0 s when the generator is ready, and
 * the host waits 7.9 s against 8.9 s for the ready line (make bench, b0013:
 * medians of 10 boots each way, alternating; single boots spread from 7.2
 * to 12.6 s, and a run of 5 each showed no difference). A machine's append
 * can turn it off again.
 *
 * accel auto: /dev/kvm exists on some hosts where a guest under KVM hangs
 * right after the firmware, so the first boot on each machine probes KVM
 * with a short timeout and falls back to multi-threaded TCG; the choice is
 * remembered for the daemon's lifetime, kept on the VM host for the next
 * daemon (while the host's kernel and QEMU stay the same), and logged with
 * every boot.
 *
 * vCPU pinning (qemu_pin.c): once the guest is up each vCPU thread is
 * bound to a host CPU of its own; what was done, or why nothing was, goes
 * into the boot log.
 *
 * accel icount: single-threaded TCG with `-icount shift=N,sleep=off`, so
 * guest time is a function of the instructions executed, not of the host's
 * speed. QEMU older than 8.1 livelocks an SMP guest under icount (its
 * round-robin gave one vCPU the whole budget; "accel/tcg: ensure fairness
 * with icount" fixed it in 8.1), so there the boot falls back to
 * multi-threaded TCG and says so. The CPU is a named model (`-cpu max`
 * with SMP has its own reported bring-up hang).
 *
 * Under TCG (either kind) QEMU loads the instruction-counting plugin
 * (agents/qemu-plugin/insn.c), which writes the agent's window markers to
 * insn.log beside the console; the run stage reads it through insn()
 * (insn.h), with the plugin's TLB model when the machine's tlb_model
 * turns it on. Under KVM there is no plugin, and the rows say why.
 */
#include "arch.h"
#include "backend.h"
#include "boot_qemu.h"
#include "console.h"
#include "qemu_pin.h"
#include "qemu_sandbox.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transport.h"
#include "util.h"
#include "banned.h"

#define READY_MARKER "tlblab-guest: ready"
#define BOOT_TIMEOUT 240.0
#define KVM_PROBE_TIMEOUT 20.0
#define CONSOLE_MAX (8u << 20)
#define INSN_LOG_MAX (16u << 20)


struct boot_session {
	struct transport *t;
	const struct cfg_machine *m;
	const struct cfg_qemu *q;	/* m's qemu settings */
	int tlb;			/* the plugin's TLB model is on in this boot */
	struct strbuf dir, pidfile, console;	/* on the machine's host */
	struct strbuf insn_log;		/* the plugin's file there, or empty: */
	struct strbuf insn_why;		/* why there is none */
	char *insn_plugin;		/* the plugin QEMU loads, or NULL */
	/* the guest endpoint's strings, owned (NULL: none) */
	char *host, *identity, *known_hosts, *host_key;
};

static void session_free(struct boot_session *s)
{
	strbuf_release(&s->dir);
	strbuf_release(&s->pidfile);
	strbuf_release(&s->console);
	strbuf_release(&s->insn_log);
	strbuf_release(&s->insn_why);
	free(s->insn_plugin);
	free(s->host);
	free(s->identity);
	free(s->known_hosts);
	free(s->host_key);
	free(s);
}

/* the daemon's own plugin, for VM hosts that are this machine */
static char default_plugin[4096];

void boot_qemu_set_plugin(const char *path)
{
	snprintf(default_plugin, sizeof(default_plugin), "%s", path ? path : "");
}

enum vm_accel { VM_TCG, VM_KVM, VM_ICOUNT };

static pthread_mutex_t accel_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { char machine[72]; int kvm_ok; } accel_seen[64];
static size_t naccel;

/* -1: not probed yet; 0: tcg; 1: kvm. */
static int accel_known(const char *machine)
{
	size_t i;
	int r = -1;

	pthread_mutex_lock(&accel_lock);
	for (i = 0; i < naccel; i++)
		if (!strcmp(accel_seen[i].machine, machine))
			r = accel_seen[i].kvm_ok;
	pthread_mutex_unlock(&accel_lock);
	return r;
}

static void accel_remember(const char *machine, int kvm_ok)
{
	pthread_mutex_lock(&accel_lock);
	if (naccel < ARRAY_SIZE(accel_seen)) {
		snprintf(accel_seen[naccel].machine, sizeof(accel_seen[naccel].machine), "%s", machine);
		accel_seen[naccel++].kvm_ok = kvm_ok;
	}
	pthread_mutex_unlock(&accel_lock);
}


/*
 * The probe's answer is kept on the VM host too (workdir/NAME/accel), so a
 * restarted daemon does not pay the probe's 20 s again: "RELEASE BINARY
 * kvm|tcg", trusted while the host's kernel release and the QEMU binary are
 * the same. -1 when there is none that fits.
 */
static int accel_from_host(struct transport *t, const struct boot_session *s, struct strbuf *key)
{
	const char *uname[] = { "uname", "-r", NULL };
	struct strbuf err = STRBUF_INIT, path = STRBUF_INIT;
	struct exec_result res;
	int r = -1;

	transport_exec_result_init(&res);
	if (qemu_host_run(t, uname, 30, &res, &err) < 0 || res.status != 0)
		goto out;
	strbuf_trim(&res.out);
	strbuf_addf(key, "%s %s ", res.out.buf, s->q->binary);
	strbuf_addf(&path, "%s/accel", s->dir.buf);
	{
		const char *cat[] = { "cat", path.buf, NULL };

		if (qemu_host_run(t, cat, 30, &res, &err) < 0 || res.status != 0)
			goto out;
	}
	strbuf_trim(&res.out);
	if (!strncmp(res.out.buf, key->buf, key->len)) {
		const char *v = res.out.buf + key->len;

		r = !strcmp(v, "kvm") ? 1 : !strcmp(v, "tcg") ? 0 : -1;
	}
out:
	transport_exec_result_release(&res);
	strbuf_release(&err);
	strbuf_release(&path);
	return r;
}

static void accel_to_host(struct transport *t, const struct boot_session *s, const char *key, int kvm)
{
	struct strbuf err = STRBUF_INIT, path = STRBUF_INIT, text = STRBUF_INIT;
	struct exec_result res;

	transport_exec_result_init(&res);
	strbuf_addf(&path, "%s/accel", s->dir.buf);
	strbuf_addf(&text, "%s%s\n", key, kvm ? "kvm" : "tcg");
	{
		const char *tee[] = { "tee", path.buf, NULL };
		struct exec_req er = { .argv = tee, .input = text.buf, .input_len = text.len, .timeout = 30 };

		transport_exec(t, &er, &res, &err);
	}
	transport_exec_result_release(&res);
	strbuf_release(&err);
	strbuf_release(&path);
	strbuf_release(&text);
}

static void read_console(struct boot_session *s, struct strbuf *out)
{
	const char *argv[] = { "cat", s->console.buf, NULL };
	struct exec_req er = { .argv = argv, .timeout = 20, .max_output = CONSOLE_MAX };
	struct exec_result res;
	struct strbuf err = STRBUF_INIT;

	transport_exec_result_init(&res);
	if (transport_exec(s->t, &er, &res, &err) == 0)
		strbuf_add(out, res.out.buf, res.out.len);
	transport_exec_result_release(&res);
	strbuf_release(&err);
}

static int vm_state(struct boot_session *s, struct qemu_sandbox_state *st)
{
	return qemu_sandbox_state(s->t, s->dir.buf, st);
}

static void vm_kill(struct boot_session *s)
{
	qemu_sandbox_kill(s->t, s->dir.buf);
}

/* Which of the VM's files reached the cap, as a message into why (after
 * prefix); 1 when one did, else 0. A write past RLIMIT_FSIZE fails (QEMU,
 * pid 1 of its namespace, does not die of SIGXFSZ), so a file that
 * reached the cap stays at it. */
static int vm_over_cap(const struct boot_session *s, const struct qemu_sandbox_state *st, const char *prefix,
		       struct strbuf *why)
{
	const char *file = st->console_size >= s->q->file_max ? s->console.buf
		: s->insn_log.len && st->insn_size >= s->q->file_max ? s->insn_log.buf : NULL;

	if (!file)
		return 0;
	strbuf_addf(why, "%s: %s's %s %s reached its cap of %zu bytes (lab.qemu_file_max): the guest "
		    "wrote more than the lab keeps", prefix, s->m->name,
		    file == s->console.buf ? "console file" : "instruction plugin's file", file,
		    s->q->file_max);
	return 1;
}

/*
 * What QEMU wrote to stderr when it would not start, for the job's error:
 * the lines that say why. Under icount the CPU model's features TCG lacks
 * are a dozen warnings first, which are left out, and of a long rest the
 * end is kept, where QEMU says what stopped it.
 */
static void qemu_start_error(const char *err, struct strbuf *out)
{
	static const char noise[] = "TCG doesn't support requested feature";
	struct strbuf why = STRBUF_INIT;
	const char *p = err;

	while (*p) {
		const char *eol = strchrnul(p, '\n');
		int len = (int)(eol - p);

		if (len && !memmem(p, (size_t)len, noise, sizeof(noise) - 1))
			strbuf_addf(&why, "%s%.*s", why.len ? "; " : "", len, p);
		p = *eol ? eol + 1 : eol;
	}
	if (why.len > 500)
		strbuf_addf(out, "...%s", why.buf + why.len - 500);
	else
		strbuf_addstr(out, why.len ? why.buf : "(nothing on stderr but TCG's feature warnings)");
	strbuf_release(&why);
}

/* Starts QEMU with accel in its sandbox; 0, or -1 with message (the host
 * could not: no bwrap, or the sandbox would not start). QEMU's own
 * failures show later, as a VM that is gone (vm_gone_why). */
static int vm_start(struct boot_session *s, const char *kernel, const char *cmdline, enum vm_accel accel,
		    struct strbuf *message)
{
	const struct cfg_qemu *q = s->q;
	const struct arch *arch = arch_get(s->m->arch);
	char mem[16], smp[16], name[96], icount[64];
	struct strbuf netdev = STRBUF_INIT, err = STRBUF_INIT, serial = STRBUF_INIT, plugin = STRBUF_INIT;
	struct strbuf said = STRBUF_INIT;
	int kvm = accel == VM_KVM, r;
	struct qemu_sandbox sb = {
		.dir = s->dir.buf, .initrd = q->initrd, .binary = q->binary, .kvm = kvm, .file_max = q->file_max,
	};

	snprintf(mem, sizeof(mem), "%d", q->memory);
	snprintf(smp, sizeof(smp), "%d", s->m->cpus > 0 ? s->m->cpus : 2);
	strbuf_addf(&serial, "file:%s", s->console.buf);
	/* debug-threads names the vCPU threads, which is how vm_pin finds them */
	snprintf(name, sizeof(name), "guest=%s,debug-threads=on", s->m->name);
	strbuf_addf(&netdev, "user,id=n0,restrict=on,hostfwd=tcp:%s:%d-:22", q->guest_host, q->ssh_port);
	snprintf(icount, sizeof(icount), "shift=%d,sleep=off", q->icount_shift);
	if (!kvm && s->insn_log.len) {
		strbuf_addf(&plugin, "%s,out=%s", s->insn_plugin, s->insn_log.buf);
		if (q->tlb_model && s->tlb)
			strbuf_addf(&plugin, ",%s", q->tlb_model);
		sb.plugin = s->insn_plugin;
	}
	{
		const char *argv[40] = {
			q->binary, "-name", name, "-machine", arch->qemu_machine,
			"-accel", kvm ? "kvm" : accel == VM_ICOUNT ? "tcg,thread=single" : "tcg,thread=multi",
			"-cpu", kvm ? arch->qemu_cpu_kvm : accel == VM_ICOUNT ? arch->qemu_cpu_icount
			: arch->qemu_cpu_tcg, "-smp", smp, "-m", mem,
			"-kernel", kernel, "-initrd", q->initrd, "-append", cmdline,
			"-no-reboot", "-netdev", netdev.buf, "-device", "virtio-net-pci,netdev=n0",
			"-serial", serial.buf, "-monitor", "none", "-display", "none",
			"-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny", NULL,
		};
		size_t n = 0;

		while (argv[n])
			n++;
		if (accel == VM_ICOUNT) {
			argv[n++] = "-icount";
			argv[n++] = icount;
		}
		if (plugin.len) {
			argv[n++] = "-plugin";
			argv[n++] = plugin.buf;
		}
		argv[n] = NULL;
		r = qemu_sandbox_start(s->t, &sb, argv, &err, &said);
	}
	if (r < 0) {
		strbuf_addf(message, "boot: qemu did not start on %s: %s", s->m->name, err.buf);
		if (said.len)
			qemu_start_error(said.buf, message);
	}
	strbuf_release(&netdev);
	strbuf_release(&serial);
	strbuf_release(&plugin);
	strbuf_release(&said);
	strbuf_release(&err);
	return r;
}

/*
 * Why the VM is gone, from QEMU's exit status: 0 is the guest's doing
 * (-no-reboot turns a reboot or a panic into QEMU's exit), so BOOT_KERNEL
 * and nothing in message; anything else is QEMU's (it would not start,
 * its sandbox refused a call, it crashed), so BOOT_INFRA with what it
 * said on stderr.
 */
static enum boot_outcome_kind vm_gone_why(struct boot_session *s, int status, int spoke, struct strbuf *message)
{
	struct strbuf said = STRBUF_INIT;

	if (status <= 0)
		return BOOT_KERNEL;	/* -1: still running (a panic), or the monitor is gone too */
	if (status > 128)
		strbuf_addf(message, "boot: qemu on %s was killed by signal %d%s: ", s->m->name, status - 128,
			    status - 128 == SIGSYS ? " (SIGSYS: its seccomp sandbox refused a system call)" : "");
	else if (!spoke)
		strbuf_addf(message, "boot: qemu did not start on %s (exit %d): ", s->m->name, status);
	else
		strbuf_addf(message, "boot: qemu on %s exited with status %d: ", s->m->name, status);
	qemu_sandbox_stderr(s->t, s->dir.buf, &said);
	qemu_start_error(said.buf, message);
	strbuf_release(&said);
	return BOOT_INFRA;
}

/*
 * Waits for the ready marker: 1 ready; 0 the VM is gone or its kernel
 * panicked (*status QEMU's exit status, -1 while it still runs or is not
 * known); -1 timeout; -2 cancelled; -3 a file reached its cap (message
 * says which).
 */
static int vm_wait(struct boot_session *s, double until, volatile sig_atomic_t *cancel, struct strbuf *console,
		   int *status, struct strbuf *message)
{
	struct qemu_sandbox_state st;

	*status = -1;
	for (;;) {
		int known;

		strbuf_reset(console);
		read_console(s, console);
		if (strstr(console->buf, READY_MARKER))
			return 1;
		known = vm_state(s, &st) == 0;
		if (known && vm_over_cap(s, &st, "boot", message))
			return -3;
		if (console_scan(console->buf, NULL, 0) == 2 || !known || !st.alive) {
			/* a panicking kernel may still be printing; let it finish,
			 * and the launcher write QEMU's exit status */
			sleep_sec(0.5);
			strbuf_reset(console);
			read_console(s, console);
			if (vm_state(s, &st) == 0 && !st.alive)
				*status = st.status;
			return 0;
		}
		if (cancel && *cancel)
			return -2;
		if (mono_now() >= until)
			return -1;
		sleep_sec(0.5);
	}
}


/*
 * Which plugin QEMU loads on this machine, into s (insn_plugin and
 * insn_log), or why none (insn_why).
 */
static void plugin_choose(struct boot_session *s)
{
	const struct cfg_machine *m = s->m;
	const char *conf = s->q->insn_plugin, *path = NULL;

	if (conf && !strcmp(conf, "off"))
		strbuf_addf(&s->insn_why, "the instruction plugin is off on %s (insn_plugin: off)", m->name);
	else if (conf)
		path = conf;
	else if (!config_endpoint_local(&m->ep))
		strbuf_addf(&s->insn_why, "%s's VM host is another machine: its insn_plugin: must give the "
			    "plugin's path there", m->name);
	else if (!default_plugin[0] || access(default_plugin, R_OK) != 0)
		strbuf_addf(&s->insn_why, "the instruction plugin %s is missing (make builds it)",
			    default_plugin[0] ? default_plugin : "tlblab-insn.so");
	else
		path = default_plugin;
	if (!path)
		return;
	s->insn_plugin = xstrdup(path);
	strbuf_addf(&s->insn_log, "%s/" QEMU_SANDBOX_INSN, s->dir.buf);
}

/* The major and minor version `BINARY --version` prints, or -1 when it
 * prints none. */
static int qemu_version(struct boot_session *s, int *ret_major, int *ret_minor)
{
	const char *argv[] = { s->q->binary, "--version", NULL };
	struct exec_result res;
	struct strbuf err = STRBUF_INIT;
	const char *v;
	int r = -1;

	transport_exec_result_init(&res);
	if (qemu_host_run(s->t, argv, 30, &res, &err) == 0 && res.status == 0 &&
	    (v = strstr(res.out.buf, "version ")) && sscanf(v + 8, "%d.%d", ret_major, ret_minor) == 2)
		r = 0;
	transport_exec_result_release(&res);
	strbuf_release(&err);
	return r;
}

/*
 * Readies the VM host for a boot of s: connects, makes the machine's
 * directory there (its pid file and console), kills a VM left over from an
 * interrupted boot, chooses the plugin and uploads the kernel (its path
 * there in kernel). 0, or -1 with message.
 */
static int session_ready(struct boot_session *s, const char *kernel_path, struct strbuf *kernel,
			 struct strbuf *message)
{
	const struct cfg_machine *m = s->m;
	const char *mk[] = { "mkdir", "-p", NULL, NULL };
	struct strbuf err = STRBUF_INIT;
	struct exec_result res;
	int r = -1;

	transport_exec_result_init(&res);
	if (transport_open(&m->ep, 10, &s->t, &err) < 0) {
		strbuf_addf(message, "boot: cannot reach %s's host: %s", m->name, err.buf);
		goto out;
	}
	strbuf_addf(&s->dir, "%s/%s", m->workdir, m->name);
	strbuf_addf(&s->pidfile, "%s/qemu.pid", s->dir.buf);
	strbuf_addf(&s->console, "%s/" QEMU_SANDBOX_CONSOLE, s->dir.buf);
	mk[2] = s->dir.buf;
	if (qemu_host_run(s->t, mk, 30, &res, &err) < 0 || res.status != 0) {
		strbuf_addf(message, "boot: mkdir %s on %s: %s%s", s->dir.buf, m->name, err.buf, res.err.buf);
		goto out;
	}
	vm_kill(s);	/* a VM left over from an interrupted boot */
	plugin_choose(s);
	strbuf_addf(kernel, "%s/%s", s->dir.buf, arch_get(m->arch)->image);
	if (transport_upload(s->t, kernel_path, kernel->buf, 0644, &err) < 0) {
		strbuf_addf(message, "boot: copying the kernel to %s: %s", m->name, err.buf);
		goto out;
	}
	r = 0;
out:
	transport_exec_result_release(&res);
	strbuf_release(&err);
	return r;
}

/* What a wait that did not end in the ready line (vm_wait's w) says of
 * the boot, with message. */
static enum boot_outcome_kind wait_outcome(struct boot_session *s, int w, int status, const struct strbuf *console,
					   struct strbuf *message)
{
	const struct cfg_machine *m = s->m;
	enum boot_outcome_kind k;
	int kernel_spoke;

	switch (w) {
	case -2:
		strbuf_addstr(message, "boot: cancelled");
		return BOOT_CANCELLED;
	case -3:
		return BOOT_KERNEL;
	case 0:
		k = vm_gone_why(s, status, console->len > 0, message);
		if (k == BOOT_KERNEL)
			strbuf_addf(message, "boot: the kernel did not come up on %s: the VM ended during boot",
				    m->name);
		return k;
	default:
		kernel_spoke = strstr(console->buf, "Linux version") != NULL;
		strbuf_addf(message, "boot: %s did not come up within %.0f s (%s)", m->name,
			    m->boot_timeout > 0 ? m->boot_timeout : BOOT_TIMEOUT,
			    kernel_spoke ? "the kernel hangs" : "no kernel output at all");
		return kernel_spoke ? BOOT_KERNEL : BOOT_INFRA;
	}
}

/* The boot log's lines on how the guest runs: the accelerator, and the
 * instruction plugin with its TLB model or why there is none. */
static void booted_notes(struct boot_session *s, int kvm, int icount, const char *probe_note,
			 struct strbuf *console)
{
	const struct cfg_qemu *q = s->q;

	if (kvm) {
		strbuf_reset(&s->insn_log);
		strbuf_reset(&s->insn_why);
		strbuf_addstr(&s->insn_why, "the guest runs under KVM: QEMU's instruction plugin counts only "
			      "what TCG emulates");
	}
	strbuf_addf(console, "\n%s[tlblab: booted under ", probe_note);
	if (icount)
		strbuf_addf(console, "TCG (single-threaded, icount shift=%d, sleep=off: guest time follows the "
			    "instructions run)]\n", q->icount_shift);
	else
		strbuf_addf(console, "%s]\n", kvm ? "KVM" : "TCG (multi-threaded)");
	if (s->insn_log.len)
		strbuf_addf(console, "[tlblab: instruction plugin %s writes %s; TLB model %s]\n", s->insn_plugin,
			    s->insn_log.buf, s->tlb ? q->tlb_model
			    : q->tlb_model ? "off (its suite does not ask for it)" : "off (the machine's tlb_model)");
	else
		strbuf_addf(console, "[tlblab: no instruction counts: %s]\n", s->insn_why.buf);
}

/* The booted guest as a machine to run on: SSH to the forwarded port, its
 * strings owned by s. */
static void guest_endpoint(struct boot_session *s, struct cfg_machine *guest)
{
	const struct cfg_qemu *q = s->q;

	s->host = xstrdup(q->guest_host);
	s->identity = xstrdup(q->identity);
	s->known_hosts = q->known_hosts ? xstrdup(q->known_hosts) : NULL;
	s->host_key = q->host_key ? xstrdup(q->host_key) : NULL;
	memset(guest, 0, sizeof(*guest));
	guest->name = s->m->name;
	guest->ep.transport = backend_find(BACKEND_TRANSPORT, "ssh");
	guest->ep.host = s->host;
	guest->ep.port = q->ssh_port;
	guest->ep.user = "root";
	guest->ep.identity = s->identity;
	guest->ep.known_hosts = s->known_hosts;
	guest->ep.host_key = s->host_key;
	guest->arch = s->m->arch;
	guest->cpus = s->m->cpus;
	guest->boot = NULL;	/* none: the guest boots nothing more */
	guest->agent_path = "/usr/bin/tlblab-agent";
	guest->workdir = "/tmp";
}

static enum boot_outcome_kind qemu_start(const struct cfg_machine *m, const struct boot_ask *ask,
					 const char *kernel_path, const char *boot_id, double deadline,
					 volatile sig_atomic_t *cancel, struct boot_session **ret,
					 struct cfg_machine *guest, struct strbuf *console, struct strbuf *message)
{
	const struct cfg_qemu *q = qemu_conf(m);
	struct boot_session *s = xcalloc(1, sizeof(*s));
	struct strbuf err = STRBUF_INIT, cmdline = STRBUF_INIT, kernel = STRBUF_INIT;
	struct exec_result res;
	enum boot_outcome_kind k = BOOT_OK;
	double until;
	char probe_note[160] = "";	/* console is re-read while waiting: kept apart */
	const struct arch *arch = arch_get(m->arch);
	int kvm, w, icount = 0, status = -1;

	strbuf_init(&s->dir, 0);
	strbuf_init(&s->pidfile, 0);
	strbuf_init(&s->console, 0);
	strbuf_init(&s->insn_log, 0);
	strbuf_init(&s->insn_why, 0);
	transport_exec_result_init(&res);
	s->m = m;
	s->q = q;
	if (!q) {
		strbuf_addf(message, "boot: machine %s has no qemu settings", m->name);
		k = BOOT_INFRA;
		goto fail;
	}
	if (session_ready(s, kernel_path, &kernel, message) < 0) {
		k = BOOT_INFRA;
		goto fail;
	}
	s->tlb = q->tlb_model && (q->tlb_always || ask->tlb_model);
	strbuf_addf(&cmdline, "console=%s panic=-1 random.trust_cpu=on tlblab.boot=%s", arch->console, boot_id);
	if (q->append)
		strbuf_addf(&cmdline, " %s", q->append);
	until = mono_now() + (m->boot_timeout > 0 ? m->boot_timeout : BOOT_TIMEOUT);
	if (until > deadline)
		until = deadline;

	kvm = !strcmp(q->accel, "kvm") ? 1 : !strcmp(q->accel, "tcg") ? 0 : accel_known(m->name);
	if (!strcmp(q->accel, "icount")) {
		int major = 0, minor = 0;

		kvm = 0;
		if (qemu_version(s, &major, &minor) == 0 && (major > 8 || (major == 8 && minor >= 1)))
			icount = 1;
		else
			snprintf(probe_note, sizeof(probe_note), "[tlblab: QEMU %d.%d livelocks SMP guests under "
				 "icount (8.1 or later does not); multi-threaded TCG instead]\n", major, minor);
	}
	if (kvm == -1) {
		struct strbuf key = STRBUF_INIT;

		kvm = accel_from_host(s->t, s, &key);
		if (kvm >= 0) {
			accel_remember(m->name, kvm);
			snprintf(probe_note, sizeof(probe_note), "[tlblab: %s, as probed before on this host]\n",
				 kvm ? "KVM" : "KVM did not boot; TCG");
		} else if (vm_start(s, kernel.buf, cmdline.buf, VM_KVM, message) == 0 &&
			   vm_wait(s, mono_now() + KVM_PROBE_TIMEOUT, cancel, console, &status, message) == 1) {
			/* the probe: a short boot under KVM */
			accel_remember(m->name, 1);
			accel_to_host(s->t, s, key.buf, 1);
			kvm = 1;
			strbuf_release(&key);
			goto ready;
		} else {
			vm_kill(s);
			strbuf_reset(message);
			accel_remember(m->name, 0);
			if (key.len)
				accel_to_host(s->t, s, key.buf, 0);
			kvm = 0;
			snprintf(probe_note, sizeof(probe_note),
				 "[tlblab: KVM did not boot within %.0f s; using TCG]\n", KVM_PROBE_TIMEOUT);
		}
		strbuf_release(&key);
	}
	if (vm_start(s, kernel.buf, cmdline.buf, kvm ? VM_KVM : icount ? VM_ICOUNT : VM_TCG, message) < 0) {
		k = BOOT_INFRA;
		goto fail;
	}
	w = vm_wait(s, until, cancel, console, &status, message);
	if (w != 1) {
		k = wait_outcome(s, w, status, console, message);
		goto fail;
	}
ready:
	booted_notes(s, kvm, icount, probe_note, console);
	qemu_pin(s->t, s->q, s->pidfile.buf, console);
	guest_endpoint(s, guest);
	*ret = s;
	goto out;
fail:
	if (s->t) {
		strbuf_reset(console);
		read_console(s, console);
		if (probe_note[0])
			strbuf_addf(console, "\n%s", probe_note);
		vm_kill(s);
		transport_free(s->t);
	}
	session_free(s);
	*ret = NULL;
out:
	transport_exec_result_release(&res);
	strbuf_release(&err);
	strbuf_release(&cmdline);
	strbuf_release(&kernel);
	return k;
}

static void qemu_console(struct boot_session *s, struct strbuf *out)
{
	if (s)
		read_console(s, out);
}

static int qemu_insn(struct boot_session *s, struct strbuf *out, struct strbuf *why)
{
	struct exec_result res;
	struct strbuf err = STRBUF_INIT;
	int r = 0;

	if (!s || !s->insn_log.len) {
		strbuf_addstr(why, s ? s->insn_why.buf : "no guest");
		return -1;
	}
	transport_exec_result_init(&res);
	{
		const char *argv[] = { "cat", s->insn_log.buf, NULL };
		struct exec_req er = { .argv = argv, .timeout = 20, .max_output = INSN_LOG_MAX };

		if (transport_exec(s->t, &er, &res, &err) < 0 || res.status != 0) {
			strbuf_trim(&res.err);
			strbuf_addf(why, "the instruction plugin's file %s cannot be read: %s%.200s", s->insn_log.buf,
				    err.buf, res.err.buf);
			r = -1;
		} else {
			strbuf_add(out, res.out.buf, res.out.len);
		}
	}
	transport_exec_result_release(&res);
	strbuf_release(&err);
	return r;
}

static int qemu_over_limit(struct boot_session *s, struct strbuf *why)
{
	struct qemu_sandbox_state st;

	return s && vm_state(s, &st) == 0 && vm_over_cap(s, &st, "run", why);
}

static void qemu_stop(struct boot_session *s)
{
	if (!s)
		return;
	vm_kill(s);
	transport_free(s->t);
	session_free(s);
}

const struct boot_ops boot_qemu = { BOOT_OPS(qemu, "qemu"), .insn = qemu_insn,
				    .over_limit = qemu_over_limit };
