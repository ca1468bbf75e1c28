#ifndef TLBLAB_BACKEND_H
#define TLBLAB_BACKEND_H

#include <stddef.h>
#include <stdio.h>

#include "settings.h"

/*
 * Backends register themselves (syzkaller's vm/<type>, OpenSMTPD's backend
 * tables): a boot method is one file that ends with
 *
 *	BACKEND_REGISTER(boot_toy_backend);
 *
 * and nothing else in the tree names it. The registration runs before
 * main (a constructor), so the loader finds a machine's `boot: toy` and its
 * `toy:` section here, the reference (`tlblabd -S`) lists its settings,
 * and the stages reach its ops through the machine's configuration. The
 * registry sits below the loader and knows no backend: the backends, in
 * the folders above, call down into it.
 *
 * A name registered twice is a broken build, not a broken lab, but it is
 * reported where a lab would see it: every load fails with
 * "FILE:LINE: boot method 'x' registered twice (first at FILE:LINE)", the
 * positions of the two registrations.
 */

struct cfg_endpoint;
struct cfg_machine;
struct cfg_section;
struct cfg_ctx;
struct lab_config;

enum backend_kind {
	BACKEND_BOOT,		/* a machine's boot: (boot.h's boot_ops) */
	BACKEND_TRANSPORT,	/* a machine's or builder's transport: (transport.h's
				 * transport_ops) */
	BACKEND_KIND_MAX
};

/* A boot method is a section of a machine: its settings are the rows of
 * the machine's key named after it (qemu:), absent or not. */
#define BACKEND_SECTION_REQUIRED 1u	/* the machine must have the section */
/* A transport's commands run on the daemon's own host (local): its CPUs
 * are the daemon's, and a machine there must not be restarted. */
#define BACKEND_THIS_HOST 2u
/* A transport whose commands can be paused (exec_req.pause). */
#define BACKEND_PAUSABLE 4u

struct backend {
	enum backend_kind kind;
	const char *name;
	const char *what;		/* one line, for the reference */
	/* its section's settings (rows into a struct of conf_size bytes);
	 * nsettings 0: the method has no section */
	const struct setting *settings;
	size_t nsettings;
	size_t conf_size;
	unsigned flags;
	/* what a section that is not a mapping is told it must hold:
	 * "initrd, ssh_port, identity, and host_key or known_hosts are required" */
	const char *section_hint;
	/*
	 * After the section's rows are read (or set to their defaults when
	 * the section is absent): checks across rows, defaults that depend
	 * on the machine, and what the machine exposes of the backend
	 * (cfg_machine's max_cpus, duet, host_cpu, guest_identity). Errors
	 * through settings_error. NULL: nothing to do.
	 */
	void (*finish)(struct cfg_section *sec, struct cfg_machine *m, void *conf);
	/* A transport: the keys of an endpoint it reads (cfg_endpoint's
	 * host, port, user, identity, known_hosts, host_key), NULL-terminated;
	 * another of them given with it is a mistake. NULL: none. */
	const char *const *endpoint_keys;
	/* A transport: checks the endpoint a machine or builder gives it
	 * (keys it requires). NULL: nothing to check. */
	void (*check_endpoint)(struct cfg_section *sec, const struct cfg_endpoint *ep);
	/* After every machine is read: checks between machines. NULL: none. */
	void (*check_lab)(struct cfg_ctx *c, const struct lab_config *cfg);
	/* Frees what conf owns besides its rows' values. NULL: nothing. */
	void (*release)(void *conf);
	const void *ops;		/* the kind's ops (struct boot_ops); NULL: a
					 * method that boots nothing (none) */
};

/* What a kind is called in messages ("boot method"). */
const char *backend_kind_name(enum backend_kind k);
/* The key of a machine that names its backend of kind k ("boot"). */
const char *backend_kind_key(enum backend_kind k);

/* Adds b (static storage) to the registry, registered at file:line;
 * BACKEND_REGISTER calls it. */
void backend_register(const struct backend *b, const char *file, int line);
#define BACKEND_REGISTER(b) \
	__attribute__((constructor)) static void backend_register_##b(void) \
	{ \
		backend_register(&(b), __FILE__, __LINE__); \
	}

/* The backend of kind k named name, or NULL. */
const struct backend *backend_find(enum backend_kind k, const char *name);
/* The i-th backend of kind k in name order, NULL past the last. */
const struct backend *backend_at(enum backend_kind k, size_t i);
/* "kexec, none, qemu or reboot": the names of kind k, for messages. */
void backend_names(enum backend_kind k, struct strbuf *out);
/* The registry's own errors (names given twice), one a line, appended to
 * out; 0 when there are none, else -1. */
int backend_registry_errors(struct strbuf *out);

#endif
