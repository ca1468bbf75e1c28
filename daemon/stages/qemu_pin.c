/*
 * boot: qemu's vCPU pinning (qemu_pin.h). The guest's vCPUs are threads of
 * QEMU that the host scheduler moves between its CPUs and shares with
 * QEMU's own threads and everything else running there; on a small host
 * that migration shows up as boot-to-boot noise in the measured figures.
 * Once the guest is up each vCPU thread is bound to a host CPU of its own
 * (and QEMU's other threads to the CPUs left over, if any), through the
 * machine's host like everything else, so it works for a VM host reached
 * over SSH too. The vCPU threads are found by name (-name
 * debug-threads=on names them "CPU <n>/TCG" or "CPU <n>/KVM"), which needs
 * no QMP client on the host; taskset binds them. A machine with host_cpu
 * (a duet's) has all of QEMU's threads bound to that one host CPU instead.
 */
#include "qemu_pin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"
#include "banned.h"

#define PIN_MAX_CPUS 1024
#define PIN_MAX_THREADS 256

/*
 * Prints QEMU's allowed host CPUs ("Cpus_allowed_list: 0-3"), then one
 * "TID NAME" line per thread. A fixed script: the pidfile path is its only
 * argument and never part of the script text.
 */
static const char pin_script[] =
	"pid=$(cat \"$1\") || exit 1\n"
	"grep '^Cpus_allowed_list:' \"/proc/$pid/status\" || exit 1\n"
	"for t in /proc/$pid/task/*; do\n"
	"\tprintf '%s %s\\n' \"${t##*/}\" \"$(cat \"$t/comm\" 2>/dev/null)\"\n"
	"done\n";

int qemu_host_run(struct transport *t, const char *const *argv, double timeout, struct exec_result *res,
		      struct strbuf *err)
{
	struct exec_req er = { .argv = argv, .timeout = timeout };

	transport_exec_result_release(res);
	transport_exec_result_init(res);
	return transport_exec(t, &er, res, err);
}

/* Parses a kernel CPU list ("0-3,8,10-11") into cpus (ascending, at most
 * max); returns how many, or -1 when it is not one. */
static int parse_cpu_list(const char *s, int *cpus, int max)
{
	int n = 0;

	while (*s && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10), b;

		if (end == s || a < 0 || a >= PIN_MAX_CPUS)
			return -1;
		b = a;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a || b >= PIN_MAX_CPUS)
				return -1;
			s = end;
		}
		for (; a <= b && n < max; a++)
			cpus[n++] = (int)a;
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -1;
	}
	return n;
}

/* taskset -p -c LIST TID on the VM's host; 0 when it took. */
static int pin_thread(struct transport *t, long tid, const char *list, struct strbuf *err)
{
	char tidbuf[24];
	const char *argv[] = { "taskset", "-p", "-c", list, tidbuf, NULL };
	struct exec_result res;
	int r;

	snprintf(tidbuf, sizeof(tidbuf), "%ld", tid);
	transport_exec_result_init(&res);
	r = qemu_host_run(t, argv, 10, &res, err);
	if (r == 0 && res.status != 0) {
		strbuf_trim(&res.err);
		strbuf_addf(err, "taskset -p -c %s %ld: exit %d: %.200s", list, tid, res.status, res.err.buf);
		r = -1;
	}
	transport_exec_result_release(&res);
	return r;
}

/*
 * Pins the running VM's vCPU threads, vCPU n to the n-th host CPU QEMU may
 * use, and QEMU's other threads to the host CPUs no vCPU got, if any. Appends
 * one "[tlblab: ...]" line to console saying what was done or why not.
 */
void qemu_pin(struct transport *t, const struct cfg_qemu *q, const char *pidfile, struct strbuf *console)
{
	const char *argv[] = { "sh", "-c", pin_script, "sh", pidfile, NULL };
	enum qemu_pin mode = (enum qemu_pin)q->pin_vcpus;
	struct strbuf err = STRBUF_INIT, note = STRBUF_INIT, spare = STRBUF_INIT;
	struct exec_result res;
	long tid[PIN_MAX_THREADS];
	int vcpu[PIN_MAX_THREADS], cpus[PIN_MAX_CPUS];
	int ncpus = 0, nthreads = 0, nvcpus = 0, i, failed = 0;
	const char *line;

	transport_exec_result_init(&res);
	if (mode == QEMU_PIN_OFF) {
		strbuf_addstr(&note, "vCPU threads not pinned (pin_vcpus: off)");
		goto out;
	}
	if (qemu_host_run(t, argv, 20, &res, &err) < 0 || res.status != 0) {
		strbuf_trim(&res.err);
		strbuf_addf(&note, "vCPU threads not pinned: cannot list QEMU's threads: %s%.200s", err.buf,
			    res.err.buf);
		goto out;
	}
	for (line = res.out.buf; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "") {
		const char *name;
		char *end;
		long id, n;

		if (!strncmp(line, "Cpus_allowed_list:", 18)) {
			ncpus = parse_cpu_list(line + 18 + strspn(line + 18, " \t"), cpus, PIN_MAX_CPUS);
			continue;
		}
		id = strtol(line, &end, 10);
		if (end == line || *end != ' ' || nthreads >= PIN_MAX_THREADS)
			continue;
		name = end + 1;
		vcpu[nthreads] = -1;
		/* "CPU 1/TCG" */
		if (!strncmp(name, "CPU ", 4)) {
			n = strtol(name + 4, &end, 10);
			if (end != name + 4 && *end == '/' && n >= 0 && n < PIN_MAX_THREADS) {
				vcpu[nthreads] = (int)n;
				nvcpus++;
			}
		}
		tid[nthreads++] = id;
	}
	if (q->host_cpu >= 0) {
		/* a duet's guest: all of QEMU on the host CPU of its own */
		char list[16];

		snprintf(list, sizeof(list), "%d", q->host_cpu);
		for (i = 0; i < nthreads; i++) {
			strbuf_reset(&err);
			if (pin_thread(t, tid[i], list, &err) < 0) {
				strbuf_addf(&note, "QEMU's threads not pinned to host CPU %s (host_cpu): %s", list,
					    err.buf);
				goto out;
			}
		}
		strbuf_addf(&note, "QEMU's %d threads pinned to host CPU %s (host_cpu)", nthreads, list);
		goto out;
	}
	if (ncpus <= 0)
		strbuf_addstr(&note, "vCPU threads not pinned: QEMU's allowed host CPUs are unknown");
	else if (!nvcpus)
		strbuf_addstr(&note, "vCPU threads not pinned: no thread of QEMU is named as a vCPU");
	else if (mode == QEMU_PIN_AUTO && ncpus < nvcpus)
		strbuf_addf(&note, "vCPU threads not pinned: the host has %d CPUs for %d vCPUs "
			    "(pin_vcpus: on pins them anyway)", ncpus, nvcpus);
	if (note.len)
		goto out;
	for (i = nvcpus; i < ncpus; i++)
		strbuf_addf(&spare, "%s%d", spare.len ? "," : "", cpus[i]);
	strbuf_addstr(&note, "vCPU threads pinned:");
	for (i = 0; i < nthreads; i++) {
		char list[16];

		if (vcpu[i] < 0)
			continue;
		snprintf(list, sizeof(list), "%d", cpus[vcpu[i] % ncpus]);
		strbuf_reset(&err);
		if (pin_thread(t, tid[i], list, &err) < 0) {
			strbuf_addf(&note, " vCPU %d (thread %ld) failed: %s;", vcpu[i], tid[i], err.buf);
			failed++;
		} else {
			strbuf_addf(&note, " vCPU %d (thread %ld) -> host CPU %s;", vcpu[i], tid[i], list);
		}
	}
	if (spare.len) {
		int moved = 0;

		for (i = 0; i < nthreads; i++) {
			strbuf_reset(&err);
			if (vcpu[i] < 0 && pin_thread(t, tid[i], spare.buf, &err) == 0)
				moved++;
		}
		strbuf_addf(&note, " %d other QEMU threads -> host CPUs %s", moved, spare.buf);
	} else {
		strbuf_addf(&note, " QEMU's %d other threads unpinned (no host CPU left over)",
			    nthreads - nvcpus);
	}
	if (failed)
		strbuf_addf(&note, " (%d vCPUs could not be pinned)", failed);
out:
	strbuf_trim(&note);
	if (note.len && note.buf[note.len - 1] == ';')
		strbuf_setlen(&note, note.len - 1);
	strbuf_addf(console, "[tlblab: %s]\n", note.buf);
	transport_exec_result_release(&res);
	strbuf_release(&err);
	strbuf_release(&note);
	strbuf_release(&spare);
}
