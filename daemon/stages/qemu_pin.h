#ifndef TLBLAB_QEMU_PIN_H
#define TLBLAB_QEMU_PIN_H

#include "boot_qemu.h"
#include "strbuf.h"
#include "transport.h"

/*
 * boot: qemu's vCPU pinning (qemu_pin.c), below boot_qemu.c: once the
 * guest whose QEMU wrote its pid to pidfile (on t's host) is up, binds its
 * vCPU threads to host CPUs of their own as q's pin_vcpus and host_cpu
 * say, and appends one "[tlblab: ...]" line to console saying what was
 * done or why not.
 */
void qemu_pin(struct transport *t, const struct cfg_qemu *q, const char *pidfile, struct strbuf *console);

/* Runs argv on t into res (released and made anew), within timeout
 * seconds; transport_exec's return. */
int qemu_host_run(struct transport *t, const char *const *argv, double timeout, struct exec_result *res,
		  struct strbuf *err);

#endif
