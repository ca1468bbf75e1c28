#ifndef TLBLAB_CONFIG_H
#define TLBLAB_CONFIG_H

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>

#include "changepoint.h"
#include "compare_rules.h"
#include "cron.h"
#include "strbuf.h"

struct backend;

/*
 * The lab's configuration: one YAML file (libyaml) with the sections lab:,
 * machines:, builders:, trees:, suites:, notify: and tracks:. config_load() reads and
 * validates the whole file and reports every error it finds, one per line,
 * as "FILE:LINE:COL: message" (line and column 1-based, pointing at the
 * offending key or value), so `tlblabd -n -c FILE` can show them all at once.
 *
 *   lab:
 *     data_dir: /var/lib/tlblab         # required; created by the daemon
 *     store: postgresql://tlblab@db.lab/tlblab   # default: data_dir/tlblab.db (SQLite)
 *     listen: 127.0.0.1:8080            # default; host must be an IP literal
 *     tokens: [s3cret]                  # and/or
 *     token_file: /etc/tlblab/tokens    # one token per line, # comments
 *                                       # (the example token is refused)
 *     admin_tokens: [0ps-s3cret]        # and/or admin_token_file: these may
 *                                       # also cancel others' work, triage
 *                                       # alerts, set machines' health
 *     allowed_hosts: [lab.example.org]  # Host names the API answers besides
 *                                       # the listen address and localhost
 *     read_requires_token: false        # reads are open by default
 *     max_body: 1M                      # bytes (or K, M, G); larger bodies get 413
 *     workers: 4                        # blocking-work pool size (1..64)
 *     stage_timeout: 30m                # seconds (or ms, s, m, h), every stage's default
 *     max_connections_per_address: 64   # open HTTP connections from one client address
 *                                       # (1..512; read at start, not on reload)
 *     header_timeout: 10s               # a request's headers must be complete within
 *                                       # this (1..300 seconds), else it is dropped
 *     max_jobs_per_token: 20            # unfinished jobs one token may have (1..100000);
 *     max_boots_per_token: 200          # and boots still to run (1..1000000); past
 *                                       # either, a submit gets 429
 *     qemu_file_max: 64M                # a QEMU guest's console and plugin files on
 *                                       # the VM host (2M..64G); more fails the boot
 *     fetch_allow: [127.0.0.0/8, lore.lab.internal]
 *                                       # what a patch URL may reach besides public
 *                                       # addresses: CIDRs, addresses or host names
 *                                       # (default none: loopback, link-local and
 *                                       # private addresses are refused; fetch.h)
 *   machines:
 *     - name: m1                        # [A-Za-z0-9._-]{1,64}, unique
 *       transport: ssh                  # a transport (backend.h): ssh | local
 *       host: 127.0.0.2                 # ssh: IP literal or hostname
 *       port: 22
 *       user: root
 *       identity: /path/to/key          # ssh: private key file
 *       known_hosts: /path/known_hosts  # ssh: one of these two is required
 *       host_key: SHA256:base64...      # pinned fingerprint
 *       arch: x86_64
 *       cpus: 2
 *       tags: [qemu, small]
 *       boot: none                      # a boot method (backend.h): none, qemu,
 *                                       # kexec or reboot; its section, a key
 *                                       # of its name (qemu:, kexec:, reboot:),
 *                                       # has the settings docs/lab-settings.md
 *                                       # lists (tlblabd -S), from the method's
 *                                       # own table
 *       power_cycle: [ipmitool, ...]    # argv, optional: run when a boot goes silent
 *       power_cycle_timeout: 900        # seconds to wait after a power cycle
 *                                       # (default: boot_timeout)
 *       boot_timeout: 600               # seconds for a boot to answer (default by
 *                                       # method: qemu 240, kexec 300, reboot 600)
 *       agent_path: /tmp/tlblab-agent   # where the agent is uploaded (the machine
 *                                       # user's or root's alone: run.c checks)
 *       workdir: /tmp/tlblab            # scratch directory on the machine
 *       qemu:                           # boot: qemu's section (required there)
 *         initrd: /var/cache/tlblab/guest/initramfs.cpio
 *         ssh_port: 10022               # ...
 *   builders:
 *     - name: local
 *       transport: local                # same keys as a machine's transport part
 *       jobs: 2                         # make -j
 *       workdir: /var/cache/tlblab
 *       ccache: /var/cache/ccache       # optional, shared by the builder's trees
 *   trees:
 *     - name: linux
 *       url: /var/cache/tlblab/linux    # a path or git URL
 *       builder: local
 *       config_base: tinyconfig         # tinyconfig | defconfig | a file path
 *       fragments: [kernels/fragments/lab-required.config]
 *   suites:
 *     - name: tlb
 *       timeout: 600                    # seconds for the run stage (or 10m)
 *       workloads:                      # each one a tlblab-agent spec, checked at
 *                                       # load by the agent's own parser (lib/catalog/spec.h)
 *         - workload: mprotect
 *           mode: [threads, processes]
 *           workers: 2
 *           duration: 5s
 *       guest_cpus: [2, 8]              # qemu machines only: every boot once per count
 *                                       # (-smp), its rows per count (param cpus); each
 *                                       # at most a machine's max_cpus, and a run's
 *                                       # estimate within timeout (docs/emulated-work.md)
 *       compare:                        # verdict rules, optional (DESIGN.md defaults)
 *         alpha: 0.01                   # p below this counts
 *         min_change: 2%                # headline metrics (or a fraction: 0.02)
 *         min_change_counter: 5%        # counters
 *         same_band: 2%                 # CI within +-this: same
 *         min_change_work: 1%           # a class's margins, by the keys its
 *                                       # file names (compare_class.h); the
 *                                       # three above are the time class's
 *         metrics:                      # per metric (fnmatch pattern), first match wins
 *           "interrupts.*": {min_change: 10%, alpha: 0.001}
 *   notify:                             # webhooks (notify.h), optional
 *     - name: ops
 *       url: http://127.0.0.1:9000/hook # http or https
 *       secret_file: /etc/tlblab/hook.secret   # or secret: ...; signs the body
 *       events: [change_point, bisection, job]  # default: all three
 *       max_attempts: 8                 # 1..50
 *       retry: 10s                      # wait before the second attempt, doubling
 *                                       # after each failure, at most an hour
 *       timeout: 10s                    # one attempt
 *   tracks:                             # nightly tracking, optional
 *     - name: mainline
 *       tree: linux                     # a configured tree
 *       branch: master                  # the ref to follow (a branch, tag or commit)
 *       url: /path/or/git/url           # where the builder fetches it (default: the tree's)
 *       schedule: "0 2 * * *"           # cron (cron.h), the daemon's local time
 *       suite: tlb
 *       machines: [qemu1]               # one run job per machine and point
 *       boots: 3                        # per point (1..20)
 *       bisect: true                    # bisect a confirmed regression
 *       detect:                         # the change-point detector (DESIGN.md defaults)
 *         window: 50                    # points a window holds (6..500)
 *         max_p: 0.001                  # significance of a change point
 *         min_change: 2%                # smallest change reported
 *         confirm_after: 6              # points after a change that confirm it
 *
 * Unknown keys are errors (a typo must not silently change a lab). All
 * strings are owned by the lab_config; config_free releases everything.
 */

/* How to reach a host: shared by machines and builders. */
struct cfg_endpoint {
	const struct backend *transport;	/* a transport (backend.h): local, ssh */
	/* machines and builders of one host_group share CPUs (the quiet-host
	 * rule, sched_loop.c); NULL: the group is "local" for local transport, else
	 * the SSH host (config_same_host) */
	char *host_group;
	char *host;		/* NULL for local */
	int port;		/* default 22 */
	char *user;		/* default "root" */
	char *identity;		/* private key path (ssh) */
	char *known_hosts;	/* known_hosts path (ssh), or NULL */
	char *host_key;		/* pinned "SHA256:..." fingerprint (ssh), or NULL */
};

/* A suite's guest_cpus (docs/emulated-work.md, "Guests bigger than the
 * host"): at most GUEST_CPUS_MAX counts, each 1..GUEST_CPUS_LIMIT. */
#define GUEST_CPUS_MAX 8
#define GUEST_CPUS_LIMIT 64
/* The time estimate of a sweep: host seconds per second of a window's guest
 * time, per vCPU, under icount (the tlb suite's 40 s of windows took 39.2 s
 * a run at 2 vCPUs: docs/emulated-work.md). */
#define GUEST_CPUS_HOST_S_PER_VCPU 0.5

struct cfg_machine {
	char *name;
	struct cfg_endpoint ep;
	char *arch;		/* an arch.h name: "x86_64" (the default), "arm64" */
	int cpus;		/* 0: unknown */
	char **tags;		/* NULL-terminated */
	size_t ntags;
	const struct backend *boot;	/* its boot method (backend.h), "none" at least */
	void *boot_conf;	/* the method's settings (the struct of its rows, owned),
				 * or NULL: a method without a section */
	/* what the boot method's settings say to the rest of the lab (its
	 * finish() sets them): */
	int max_cpus;		/* the most vCPUs a boot may ask (a suite's guest_cpus);
				 * 0: its boots have the machine's own cpus */
	const char *duet;	/* the machine whose boots run beside this one's, the
				 * other side of an A/B job at once (sched_loop.c), or NULL */
	int host_cpu;		/* the host CPU its boots are bound to; -1: none */
	const char *guest_identity;	/* a key file its booted kernels are reached with
					 * (the daemon's user must read it), or NULL */
	char **power_cycle;	/* NULL-terminated argv, or NULL */
	double boot_timeout;	/* seconds; 0: the boot method's default */
	double power_cycle_timeout;	/* seconds after a power cycle; 0: the boot timeout */
	char *agent_path;	/* default "/tmp/tlblab-agent" */
	char *workdir;		/* default "/tmp/tlblab" */
	int line;		/* where it was defined, for messages */
};

struct cfg_builder {
	char *name;
	struct cfg_endpoint ep;
	int jobs;		/* default 2 */
	char *workdir;		/* default "/var/cache/tlblab" */
	char *ccache;		/* ccache directory on the builder, or NULL: build.sh's
				 * choice (/var/cache/tlblab/ccache if there, else
				 * one per tree in the workdir) */
	int line;
};

struct cfg_tree {
	char *name;
	char *url;
	char *builder;		/* name of a builder; checked to exist */
	char *config_base;	/* default "tinyconfig" */
	char **fragments;	/* NULL-terminated, may be empty */
	size_t nfragments;
	int line;
};

struct cfg_suite {
	char *name;
	double timeout;		/* seconds; default: lab stage_timeout */
	json_t *workloads;	/* array of agent spec objects (owned) */
	int tlb_model;		/* tlb_model: on: its boots load the plugin's TLB
				 * model where the machine allows it */
	/* guest_cpus: each boot of a side is made once per count, in this
	 * order (a QEMU guest of that many vCPUs), and its runs' params say
	 * "cpus"; nguest_cpus 0: the machine's own cpus, no param */
	int guest_cpus[GUEST_CPUS_MAX];
	size_t nguest_cpus;
	/* verdict rules; rules.overrides points into overrides (owned, with
	 * their metric patterns) */
	struct compare_rules rules;
	struct compare_override *overrides;
	int line;
};

enum notify_event {
	NOTIFY_CHANGE_POINT,
	NOTIFY_BISECTION,
	NOTIFY_JOB,
	NOTIFY_EVENT_MAX
};

struct cfg_hook {
	char *name;
	char *url;
	char *secret;		/* from secret: or secret_file:, or NULL */
	char *secret_file;	/* or NULL */
	unsigned events;	/* bit (1 << enum notify_event) */
	int max_attempts;	/* default 8 */
	double timeout;		/* seconds, default 10 */
	double retry;		/* seconds before the second attempt, doubling; default 10 */
	int line;
};

struct cfg_track {
	char *name;
	char *tree;		/* a configured tree */
	char *branch;		/* a valid ref */
	char *url;		/* or NULL: the tree's */
	char *schedule;		/* as written */
	struct cron cron;
	char *suite;
	char **machines;	/* NULL-terminated, at least one */
	size_t nmachines;
	int boots;		/* default 3 */
	int bisect;		/* default 1 */
	struct changepoint_opts detect;	/* DESIGN.md defaults */
	int confirm_after;	/* default 6 */
	int line;
};

struct lab_config {
	char *path;
	char *data_dir;
	/* lab.store: the PostgreSQL URL of a store several daemons share
	 * (store.h: store_open), or NULL: the SQLite file data_dir/tlblab.db */
	char *store;
	/* lab.lease_timeout: with a shared store, how long a daemon may go
	 * unseen before another takes over its stages (default 30 s) */
	double lease_timeout;
	char *user;		/* lab.user: tlblabd becomes it when started as root, or NULL */
	char *listen_host;	/* default "127.0.0.1" */
	int listen_port;	/* default 8080 */
	char **tokens;		/* NULL-terminated: from tokens: and token_file: */
	size_t ntokens;
	/* NULL-terminated, from admin_tokens: and admin_token_file: tokens
	 * that may also cancel and triage what other tokens or the lab made
	 * (api.h) */
	char **admin_tokens;
	char *admin_token_file;	/* or NULL */
	char *token_file;	/* or NULL */
	/* Host header names accepted besides the listen address, localhost,
	 * 127.0.0.1 and ::1 (config_host_allowed); NULL-terminated */
	char **allowed_hosts;
	int read_requires_token;
	size_t max_body;	/* default 1 MiB */
	int workers;		/* default 4 */
	double stage_timeout;	/* default 1800 */
	/* what one client may hold of the HTTP server before it has a token
	 * (api_server.c): connections per address (default 64) and seconds to send
	 * a request's headers (default 10) */
	int max_connections_per_address;
	double header_timeout;
	/* what one token may have queued or running: jobs (default 20) and
	 * boot stages not yet done (default 200) */
	int max_jobs_per_token;
	int max_boots_per_token;
	/* the quiet-host rule (quiet.h): builds pause while a machine on their
	 * host measures; default 1, off only to trade noise for speed */
	int quiet_host;
	/* what a QEMU guest's console and plugin files may hold on its VM host
	 * (boot_qemu.c; default 64 MiB); each cfg_qemu has a copy */
	size_t qemu_file_max;
	/* lab.fetch_allow (fetch.h): NULL-terminated, may be NULL */
	char **fetch_allow;

	struct cfg_machine *machines;
	size_t nmachines;
	struct cfg_builder *builders;
	size_t nbuilders;
	struct cfg_tree *trees;
	size_t ntrees;
	struct cfg_suite *suites;
	size_t nsuites;
	struct cfg_hook *hooks;
	size_t nhooks;
	struct cfg_track *tracks;
	size_t ntracks;
	/* defaults: what a job that names none takes (submit.c); each NULL
	 * when not set. base is a ref of tree. */
	struct cfg_defaults {
		char *suite, *tree, *base;
	} defaults;
	atomic_int refs;	/* config_ref / config_free */
};

/*
 * Loads and validates path. On success *ret is a new lab_config owned by the
 * caller. On failure returns -1, *ret is untouched, and err holds every
 * error found, one "FILE:LINE:COL: message" per line (a YAML syntax error
 * stops at the first one, with libyaml's position and problem).
 */
int config_load(const char *path, struct lab_config **ret, struct strbuf *err);
/* Same, from a string; `name` stands for the file in messages. */
int config_load_string(const char *name, const char *text, size_t len,
		       struct lab_config **ret, struct strbuf *err);
/* The lab's settings in force, "lab.NAME: VALUE" a line (tokens counted,
 * never shown): what `tlblabd -n` prints after "configuration OK". */
void config_lab_print(FILE *out, const struct lab_config *cfg);
/* The reference of the lab's settings and of each boot method's section,
 * a Markdown table (name, type, default, bounds, what it is), from the
 * same rows the parser reads: `tlblabd -S`, and docs/lab-settings.md. */
void config_lab_reference(FILE *out);
/*
 * A configuration is shared by reference across a reload (SIGHUP): the
 * daemon's main, the scheduler, each task and each HTTP request hold one
 * while they use it, so the old configuration lives until the last of them
 * lets go, and none is kept longer. config_load gives the caller the first
 * reference; config_ref takes another (and returns cfg); config_free drops
 * one, and frees the configuration with the last. Thread-safe. NULL is
 * accepted and ignored by both.
 */
const struct lab_config *config_ref(const struct lab_config *cfg);
void config_free(const struct lab_config *cfg);

const struct cfg_machine *config_machine(const struct lab_config *cfg, const char *name);
const struct cfg_builder *config_builder(const struct lab_config *cfg, const char *name);
const struct cfg_tree *config_tree(const struct lab_config *cfg, const char *name);
/* Whether two endpoints run on one host (their CPUs are shared): the same
 * host_group, or both local, or both SSH to the same host. */
int config_same_host(const struct cfg_endpoint *a, const struct cfg_endpoint *b);
const struct cfg_suite *config_suite(const struct lab_config *cfg, const char *name);
const struct cfg_track *config_track(const struct lab_config *cfg, const char *name);
/* The name of a notify event ("change_point", "bisection", "job"), NULL
 * past the end. */
const char *config_notify_event_name(int e);

/* True when machine m has tag. */
int config_machine_has_tag(const struct cfg_machine *m, const char *tag);
/* Whether a job of these machines (names; empty or NULL: any) and tags
 * (every one needed) may use m. */
int config_machine_allowed(const struct cfg_machine *m, const json_t *machines, const json_t *tags);

/* Names used in configs and APIs: [A-Za-z0-9._-]{1,64}, not starting with
 * '-' or '.'. Safe to pass as an argument anywhere. */
int config_valid_name(const char *s);

/* The token configs/lab.example.yaml shows: config_load refuses it. */
#define CONFIG_EXAMPLE_TOKEN "example-token-change-me-0001"

/*
 * Whether an HTTP Host header (name or IP literal, IPv6 in brackets, with
 * or without ":port") names this lab: the listen address, localhost,
 * 127.0.0.1, [::1], or an allowed_hosts entry, compared without case and
 * whatever the port (a proxy in front may use another). A page a
 * DNS-rebinding attack loads carries its own name here, never these.
 * NULL (an HTTP/1.0 request without Host, not a browser's) is allowed.
 */
int config_host_allowed(const struct lab_config *cfg, const char *host);

/* The name of ep's transport ("local", "ssh"). */
const char *config_transport_name(const struct cfg_endpoint *ep);
/* Whether ep's commands run on the daemon's own host (transport local). */
int config_endpoint_local(const struct cfg_endpoint *ep);
/* Whether commands over ep can be paused (exec_req.pause: local). */
int config_endpoint_pausable(const struct cfg_endpoint *ep);
/* The name of m's boot method ("none", "qemu", ...). */
const char *config_boot_method_name(const struct cfg_machine *m);
/* The value of m's boot method setting key (a row of its section) as the
 * configuration writes it ("-" when it has none), appended to out; -1
 * when the method has no such setting. */
int config_boot_setting(const struct cfg_machine *m, const char *key, struct strbuf *out);

#endif
