/*
 * tlblabd: the lab daemon.
 *
 *   tlblabd -c FILE [-d] [-a AGENT]   run
 *   tlblabd -n -c FILE                check the configuration and exit
 *
 * Start-up: load the configuration, open the store (migrations), sync the
 * machines and API tokens, recover what a previous run left (stages that
 * were running go back to the queue, every lease is released), start the
 * workers and the HTTP API, then run the scheduler in this thread. SIGHUP
 * reloads the configuration only if the new one validates; SIGTERM and
 * SIGINT stop.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch.h"
#include "api.h"
#include "boot_qemu.h"
#include "config.h"
#include "log.h"
#include "strbuf.h"
#include "scheduler.h"
#include "store.h"
#include "track.h"
#include "transport.h"
#include "util.h"
#include "version.h"
#include "banned.h"


static volatile sig_atomic_t stop_flag, reload_flag;
static struct sched *sched_for_signal;

/* the tracker's new jobs: the scheduler looks at the store now */
static void wake_sched(void *sc)
{
	sched_wake(sc);
}

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reload_flag = 1;
	else
		stop_flag = 1;
	if (sched_for_signal)
		sched_wake(sched_for_signal);
}

static void usage(void)
{
	fprintf(stderr, "usage: tlblabd -c FILE [-d] [-a AGENT] [-a ARCH=AGENT]... [-k KERNELS_DIR] [-w WEB_DIR]\n"
		"       tlblabd -n -c FILE    check FILE, print the lab's settings in force\n"
		"       tlblabd -S            the lab's settings reference (docs/lab-settings.md)\n");
}

/* A path next to this binary (build/tlblab-agent, build/../kernels). */
static void default_agent(char *buf, size_t len, const char *name)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0) {
		snprintf(buf, len, "%s", name);
		return;
	}
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(buf, len, "%.4000s/%s", self, name);
}

/* Makes path and its missing parents; path itself (the data_dir) 0700. */
static int mkdir_p(const char *path)
{
	char tmp[PATH_MAX];
	char *p;

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -1;
	for (p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(tmp, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

/*
 * The store holds token hashes and every job's patches and logs, the token
 * file the tokens: nobody but the daemon's user reads them. What this
 * daemon creates is created so; what an older version or an operator left
 * looser is tightened here, once, with a line saying so. A missing file is
 * fine (the store makes its -wal and -shm later, with the database's mode).
 */
static void tighten_mode(const char *path, mode_t max)
{
	struct stat sb;

	if (lstat(path, &sb) < 0 || S_ISLNK(sb.st_mode) || !(sb.st_mode & 07777 & ~max))
		return;
	if (chmod(path, sb.st_mode & max) < 0)
		log_warn("%s: mode %04o is looser than %04o, and chmod failed", path,
			 (unsigned)(sb.st_mode & 07777), (unsigned)max);
	else
		log_info("%s: mode was %04o, now %04o (readable by its owner only)", path,
			 (unsigned)(sb.st_mode & 07777), (unsigned)(sb.st_mode & max));
}

/* dbpath: the SQLite store's file, or NULL when the store is elsewhere */
static void secure_files(const struct lab_config *cfg, const char *dbpath)
{
	static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
	char p[PATH_MAX];
	int fd;

	tighten_mode(cfg->data_dir, 0700);
	for (size_t i = 0; dbpath && i < ARRAY_SIZE(suffixes); i++) {
		snprintf(p, sizeof(p), "%s%s", dbpath, suffixes[i]);
		tighten_mode(p, 0600);
	}
	/* a new store is made 0600; SQLite gives its -wal and -shm that mode */
	fd = dbpath ? open(dbpath, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
	if (fd >= 0)
		close(fd);
	if (cfg->token_file)
		tighten_mode(cfg->token_file, 0600);
	if (cfg->admin_token_file)
		tighten_mode(cfg->admin_token_file, 0600);
}

/*
 * Least privilege, as OpenBSD's daemons do it: started as root with
 * lab.user set, tlblabd becomes that user for good before it opens the
 * store, reads a patch or an agent's output, or answers a request. Nothing
 * it does later needs root: QEMU under TCG, kernels/build/build.sh's sandbox
 * (bubblewrap in a user namespace of its own) and the transports run as
 * any user. Its data_dir must be that user's already (the installer makes
 * the user, make demo gives it the lab's directories): root does not
 * chown anything on the daemon's behalf. Started as another user, it stays
 * that user; as root without lab.user, it says so and stays root.
 * The drop is whole: the bounding set emptied while root may still do it,
 * every id changed, no capability left (checked, fatal otherwise), and the
 * environment reset to a minimal one. Either way, no_new_privileges then
 * holds for the daemon and everything it starts.
 */
/* Every capability the kernel knows leaves the bounding set, so nothing
 * this process or a child runs can gain one back (a file capability, a
 * setuid-root program). Needs CAP_SETPCAP: before setresuid. */
static void drop_bounding_set(void)
{
	for (int cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			log_fatalx("dropping capability %d from the bounding set: %s", cap, strerror(errno));
}

/* Fatal unless every capability set of this process is empty, as
 * /proc/self/status shows them. */
static void check_no_capabilities(const char *user)
{
	static const char *const sets[] = { "CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:" };
	struct strbuf st = STRBUF_INIT;
	size_t seen = 0;

	if (strbuf_read_file(&st, "/proc/self/status", 1 << 16) < 0)
		log_fatalx("becoming %s: cannot read /proc/self/status to check the capabilities left", user);
	for (const char *line = st.buf, *eol; *line; line = *eol ? eol + 1 : eol) {
		eol = strchrnul(line, '\n');
		for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
			size_t n = strlen(sets[i]);
			uint64_t v;
			char hex[24];

			if (strncmp(line, sets[i], n))
				continue;
			snprintf(hex, sizeof(hex), "%.*s", (int)(eol - line - n), line + n);
			if (sscanf(hex, "%" SCNx64, &v) != 1 || v)
				log_fatalx("becoming %s: %s%s: a capability is left; refusing to run", user, sets[i], hex);
			seen++;
		}
	}
	if (seen != ARRAY_SIZE(sets))
		log_fatalx("becoming %s: /proc/self/status shows %zu of the 5 capability sets", user, seen);
	strbuf_release(&st);
}

/*
 * The daemon's own environment after the drop: what run_command gives a
 * child (util.h), the knobs its local commands get (transport.h) and its
 * own (TLBLAB_API_CACHE, TLBLAB_STORE_FAULT), with HOME its data_dir (git
 * and ssh read HOME; root's is not this user's to read). The operator's
 * GIT_*, SSH_* or TLBLAB_TOKEN stay with the root shell that started it:
 * their bytes are wiped too, since /proc/PID/environ shows the block the
 * process started with, whatever clearenv did to environ.
 */
static void reset_environment(const char *home)
{
	static const char *const own[] = { "TLBLAB_API_CACHE", "TLBLAB_STORE_FAULT", NULL };
	char **keep[] = { run_command_env_minimal(transport_local_env), run_command_env_minimal(own) };
	size_t nold = 0;
	char **old;

	while (environ[nold])
		nold++;
	old = xcalloc(nold + 1, sizeof(*old));
	memcpy(old, environ, nold * sizeof(*old));
	if (clearenv() != 0)
		log_fatalx("clearenv failed");
	for (size_t i = 0; i < nold; i++)
		memset(old[i], 0, strlen(old[i]));
	free(old);
	for (size_t k = 0; k < ARRAY_SIZE(keep); k++) {
		for (char **e = keep[k]; *e; e++) {
			char *eq = strchr(*e, '=');

			*eq = '\0';
			if (setenv(*e, eq + 1, 1) < 0)
				log_fatalx("setenv %s: %s", *e, strerror(errno));
		}
		run_command_env_free(keep[k]);
	}
	if (setenv("HOME", home, 1) < 0)
		log_fatalx("setenv HOME: %s", strerror(errno));
}

static void drop_root(const struct lab_config *cfg)
{
	const struct passwd *pw;
	struct stat sb;
	gid_t gid;

	if (geteuid() != 0)
		return;
	if (!cfg->user) {
		log_warnx("running as root: set lab.user (docs/lab-settings.md) to run as a user of its own");
		return;
	}
	errno = 0;
	if (!(pw = getpwnam(cfg->user)))
		log_fatalx("lab.user %s: %s (scripts/deps.sh demo makes it)", cfg->user,
			   errno ? strerror(errno) : "no such user");
	if (pw->pw_uid == 0)
		log_fatalx("lab.user %s: is root; name a user of its own", cfg->user);
	if (stat(cfg->data_dir, &sb) < 0)
		log_fatalx("data_dir %s: %s (make it %s's: mkdir -p %s && chown %s: %s)", cfg->data_dir,
			   strerror(errno), cfg->user, cfg->data_dir, cfg->user, cfg->data_dir);
	if (sb.st_uid != pw->pw_uid)
		log_fatalx("data_dir %s belongs to uid %u, not to %s (lab.user): chown -R %s: %s", cfg->data_dir,
			   (unsigned)sb.st_uid, cfg->user, cfg->user, cfg->data_dir);
	gid = pw->pw_gid;
	drop_bounding_set();
	if (setgroups(1, &gid) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0)
		log_fatalx("becoming %s: %s", cfg->user, strerror(errno));
	if (setuid(0) == 0)
		log_fatalx("becoming %s: root could be taken back", cfg->user);
	check_no_capabilities(cfg->user);
	reset_environment(cfg->data_dir);
	log_info("running as %s (uid %u), root dropped", cfg->user, (unsigned)pw->pw_uid);
}

/*
 * No program the daemon or its children run gains a privilege by exec
 * (a setuid bit, a file capability), however the daemon was started:
 * nothing it runs needs one (bwrap makes its sandbox in a user namespace
 * of its own, which works under this too).
 */
static void no_new_privileges(void)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		log_fatalx("prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
}

/*
 * The lab's SSH identities (machines, builders, QEMU guests) are secrets of
 * the daemon's user: each must be readable by it, and by it alone. One
 * that others may read is tightened when it is this user's, else named;
 * one this user cannot read is named now rather than at the first boot.
 */
static void check_identity(const char *path, const char *whose)
{
	struct stat sb;

	if (!path)
		return;
	if (access(path, R_OK) < 0) {
		log_warnx("%s: identity %s: %s: its boots and commands will fail (chown it to the daemon's user)",
			  whose, path, strerror(errno));
		return;
	}
	if (stat(path, &sb) < 0)
		return;
	if (sb.st_uid == geteuid())
		tighten_mode(path, 0600);
	else if (sb.st_mode & 077)
		log_warnx("%s: identity %s is readable by others than this daemon's user (mode %04o)", whose, path,
			  (unsigned)(sb.st_mode & 07777));
}

static void check_identities(const struct lab_config *cfg)
{
	for (size_t i = 0; i < cfg->nmachines; i++) {
		const struct cfg_machine *m = &cfg->machines[i];

		check_identity(m->ep.identity, m->name);
		check_identity(m->guest_identity, m->name);
	}
	for (size_t i = 0; i < cfg->nbuilders; i++)
		check_identity(cfg->builders[i].ep.identity, cfg->builders[i].name);
}

/* Logs text (lines, as config errors come) one line per call, after head. */
static void log_lines(void (*say)(const char *fmt, ...), const char *head, const char *text)
{
	const char *nl;

	for (; *text; text = nl + 1) {
		nl = strchrnul(text, '\n');
		say("%s%.*s", head, (int)(nl - text), text);
		if (!*nl)
			break;
	}
}

/*
 * One owner per directory (docs/security.md). What this daemon writes on
 * its own host (data_dir, each local machine's workdir, each local
 * builder's WORKDIR/tlblab) must be its user's, down to the entries a
 * build or a boot writes through (two levels: WORKDIR/tlblab/work-linux/src,
 * vm/qemu1/console.log); a local tree it reads must be its user's or
 * root's. Anything else (an older version's root-run builds left files of
 * root's there; an operator's typo named someone's home) is named with the
 * owner it has and the one it needs, and the daemon does not start:
 * nothing is chowned on its behalf, by it or by root. What does not exist
 * yet is fine (the daemon makes it).
 */
#define OWNER_ERRORS_MAX 6

/* uid's name, in buf (getpwuid's own is overwritten by the next call) */
static const char *user_name(uid_t uid, char *buf, size_t n)
{
	const struct passwd *pw = getpwuid(uid);

	if (pw)
		snprintf(buf, n, "%s", pw->pw_name);
	else
		snprintf(buf, n, "uid %u", (unsigned)uid);
	return buf;
}

/* Checks path (not followed), and depth levels below it; returns how many
 * entries were wrong, each a line in errs (at most OWNER_ERRORS_MAX). */
static int check_owned(const char *what, const char *path, int root_ok, int depth, struct strbuf *errs, int nerr)
{
	char has[32], needs[32];
	struct stat sb;
	DIR *d;
	const struct dirent *e;
	int bad = 0;

	if (nerr >= OWNER_ERRORS_MAX || lstat(path, &sb) < 0)
		return 0;
	if (sb.st_uid != geteuid() && !(root_ok && sb.st_uid == 0)) {
		strbuf_addf(errs, "%s %s belongs to %s; it needs to be %s's%s\n", what, path,
			    user_name(sb.st_uid, has, sizeof(has)), user_name(geteuid(), needs, sizeof(needs)),
			    root_ok ? " or root's" : "");
		return 1;
	}
	if (depth == 0 || !S_ISDIR(sb.st_mode) || !(d = opendir(path)))
		return 0;
	while ((e = readdir(d)) && nerr + bad < OWNER_ERRORS_MAX) {
		char sub[PATH_MAX];

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >= sizeof(sub))
			continue;
		bad += check_owned(what, sub, 0, depth - 1, errs, nerr + bad);
	}
	closedir(d);
	return bad;
}

static void check_owners(const struct lab_config *cfg)
{
	struct strbuf errs = STRBUF_INIT, p = STRBUF_INIT;
	int n = check_owned("data_dir", cfg->data_dir, 0, 1, &errs, 0);

	for (size_t i = 0; i < cfg->nmachines; i++)
		if (config_endpoint_local(&cfg->machines[i].ep) && cfg->machines[i].workdir)
			n += check_owned("machine workdir", cfg->machines[i].workdir, 0, 2, &errs, n);
	for (size_t i = 0; i < cfg->nbuilders; i++) {
		if (!config_endpoint_local(&cfg->builders[i].ep) || !cfg->builders[i].workdir)
			continue;
		strbuf_reset(&p);
		strbuf_addf(&p, "%s/tlblab", cfg->builders[i].workdir);
		n += check_owned("builder work directory", p.buf, 0, 2, &errs, n);
	}
	for (size_t i = 0; i < cfg->ntrees; i++)
		if (cfg->trees[i].url && cfg->trees[i].url[0] == '/')
			n += check_owned("tree", cfg->trees[i].url, 1, 0, &errs, n);
	strbuf_release(&p);
	if (n) {
		log_lines(log_warnx, "", errs.buf);
		log_fatalx("%d path%s of another owner (listed above%s): give %s to this daemon's user, or name "
			   "other directories in the configuration; tlblabd chowns nothing", n, n == 1 ? "" : "s",
			   n >= OWNER_ERRORS_MAX ? ", the first ones" : "", n == 1 ? "it" : "them");
	}
	strbuf_release(&errs);
}

/* Whether the process pid runs (as another user's too): a daemon of this
 * host whose pid does not is gone (store_daemons_gone). */
static int pid_alive(int pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

#ifdef TLBLAB_FAULTS
/*
 * TLBLAB_STORE_FAULT="TIMES:SQL", in the tests' build of the daemon only
 * ($(BUILD)/tlblabd-faults, made with -DTLBLAB_FAULTS): the next
 * TIMES statements whose SQL contains SQL fail with the store's I/O error
 * (store_fault_match), so a test can watch the daemon ride out a store
 * failure at one step.
 */
static void arm_store_fault(struct store *st)
{
	const char *v = getenv("TLBLAB_STORE_FAULT"), *colon = v ? strchr(v, ':') : NULL;
	long times;
	char num[16];

	if (!colon || colon == v || (size_t)(colon - v) >= sizeof(num))
		return;
	memcpy(num, v, (size_t)(colon - v));
	num[colon - v] = '\0';
	if (parse_int_range(num, 1, 1000, &times) < 0)
		log_fatalx("TLBLAB_STORE_FAULT: TIMES:SQL, TIMES from 1 to 1000");
	store_fault_match(st, colon + 1, (int)times, STORE_ERR_IO);
	log_warnx("store: the next %ld statements with \"%s\" will fail (TLBLAB_STORE_FAULT)", times, colon + 1);
}
#else
/* A production build honours no fault switch: it says so, once. */
static void arm_store_fault(struct store *st)
{
	(void)st;
	if (getenv("TLBLAB_STORE_FAULT"))
		log_warnx("TLBLAB_STORE_FAULT is ignored: only the tests' build of tlblabd "
			  "(build/tlblabd-faults) injects store faults");
}
#endif

/* What the command line says: the configuration, and where the files the
 * daemon hands out are when they are not next to this binary. */
struct daemon_args {
	const char *config_path;
	char agent[PATH_MAX], kernels[PATH_MAX], web[PATH_MAX];
	const char *agents[ARCH_MAX];	/* [0] is agent, the host's */
	int check_only;
};

/* -a arm64=PATH: another arch's agent; -a PATH: the host's */
static void agent_option(struct daemon_args *A, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char name[16];
	const struct arch *a = NULL;

	if (eq && (size_t)(eq - arg) < sizeof(name)) {
		snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
		a = arch_lookup(name);
	}
	if (a && arch_index(a) > 0)
		A->agents[arch_index(a)] = eq + 1;
	else
		snprintf(A->agent, sizeof(A->agent), "%s", arg);
}

/* Returns -1 to run, else the exit status (-S has printed its reference). */
static int parse_args(int argc, char **argv, struct daemon_args *A)
{
	int c;

	A->agents[0] = A->agent;
	while ((c = getopt(argc, argv, "c:dnSa:k:w:h")) != -1) {
		switch (c) {
		case 'c': A->config_path = optarg; break;
		case 'd': log_verbose(1); break;
		case 'n': A->check_only = 1; break;
		case 'S':
			config_lab_reference(stdout);
			return 0;
		case 'a': agent_option(A, optarg); break;
		case 'k': snprintf(A->kernels, sizeof(A->kernels), "%s", optarg); break;
		case 'w': snprintf(A->web, sizeof(A->web), "%s", optarg); break;
		default: usage(); return 2;
		}
	}
	if (!A->config_path || optind != argc) {
		usage();
		return 2;
	}
	return -1;
}

/* The agent, the plugin, kernels/ and web/ next to this binary where the
 * command line did not say: build/tlblabd or build/check/tlblabd, so the
 * tree's folders are one or two up. */
static void default_paths(struct daemon_args *A)
{
	char plugin[PATH_MAX];

	if (!A->agent[0])
		default_agent(A->agent, sizeof(A->agent), "tlblab-agent");
	default_agent(plugin, sizeof(plugin), "tlblab-insn.so");
	boot_qemu_set_plugin(plugin);
	if (!A->kernels[0]) {
		default_agent(A->kernels, sizeof(A->kernels), "../kernels/build/build.sh");
		if (access(A->kernels, R_OK) < 0)
			default_agent(A->kernels, sizeof(A->kernels), "../../kernels/build/build.sh");
		*strrchr(A->kernels, '/') = '\0';	/* kernels/build */
		*strrchr(A->kernels, '/') = '\0';
	}
	if (!A->web[0]) {
		default_agent(A->web, sizeof(A->web), "../web/index.html");
		if (access(A->web, R_OK) < 0)
			default_agent(A->web, sizeof(A->web), "../../web/index.html");
		*strrchr(A->web, '/') = '\0';
	}
}

/*
 * Opens the store (its migrations), syncs the machines and tokens, says
 * this daemon is here and takes back what was left running: alone on its
 * store, every stage left running was this daemon's; on a shared one
 * (lab.store), only those of daemons gone silent. Fatal on any error.
 */
static struct store *open_store(const struct lab_config *cfg, const char *dbpath)
{
	struct strbuf err = STRBUF_INIT, log = STRBUF_INIT;
	struct store *st = NULL;
	char host[256] = "";
	int r;

	/* a store elsewhere (lab.store) is named as store_describe names it:
	 * its URL may hold a password */
	if (store_open(cfg->store ? cfg->store : dbpath, &st, &err) < 0)
		log_fatalx("%s", err.buf);
	if (cfg->store) {
		struct strbuf name = STRBUF_INIT;

		store_describe(cfg->store, &name);
		log_info("store: %s, schema %d", name.buf, store_version(st));
		strbuf_release(&name);
	}
	if (store_sync_machines(st, cfg, &err) < 0 || store_sync_tokens(st, cfg->tokens, cfg->admin_tokens, &err) < 0)
		log_fatalx("%s", err.buf);
	gethostname(host, sizeof(host) - 1);
	if ((r = store_daemon_register(st, host, (int)getpid())) < 0 ||
	    (cfg->store && (r = store_daemons_gone(st, host, pid_alive)) < 0))
		log_fatalx("store: registering this daemon: %s", store_strerror(r));
	if (cfg->store)
		r = store_daemon_pass(st, cfg->lease_timeout, &log);
	else
		r = store_recover(st, &log);
	if (r < 0)
		log_fatalx("store: recovering after a restart: %s:\n%s", store_strerror(r), log.buf);
	if (log.len)
		log_lines(log_info, "recovered after a restart: ", log.buf);
	strbuf_release(&err);
	strbuf_release(&log);
	return st;
}

static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* The daemon's parts, which a reload hands the next configuration. */
struct daemon_parts {
	struct store *st;
	struct sched *sc;
	struct tracker *tr;
	struct api *api;
};

/*
 * SIGHUP: the configuration at path, only if it validates and the store
 * takes its machines and tokens; returns the one in force after. The
 * scheduler and the API take their references to the next one; running
 * tasks and requests keep theirs to the old one, which is freed when the
 * last of them ends.
 */
static struct lab_config *reload_config(const char *path, struct lab_config *cfg, struct daemon_parts *d)
{
	struct lab_config *next = NULL;
	struct strbuf err = STRBUF_INIT;

	if (config_load(path, &next, &err) < 0) {
		log_lines(log_warnx, "SIGHUP: the new configuration is not valid; keeping the old one: ", err.buf);
		goto keep;
	}
	if (store_sync_machines(d->st, next, &err) < 0 ||
	    store_sync_tokens(d->st, next->tokens, next->admin_tokens, &err) < 0) {
		log_warnx("SIGHUP: %s", err.buf);
		config_free(next);
		goto keep;
	}
	if (next->token_file)
		tighten_mode(next->token_file, 0600);
	if (next->admin_token_file)
		tighten_mode(next->admin_token_file, 0600);
	sched_set_config(d->sc, next);
	track_set_config(d->tr, next);
	api_set_config(d->api, next);
	config_free(cfg);
	log_info("SIGHUP: configuration reloaded (%zu machines)", next->nmachines);
	strbuf_release(&err);
	return next;
keep:
	strbuf_release(&err);
	return cfg;
}

int main(int argc, char **argv)
{
	struct daemon_args A = { 0 };
	struct daemon_parts d = { 0 };
	struct lab_config *cfg = NULL;
	struct strbuf err = STRBUF_INIT;
	char dbpath[PATH_MAX];
	int r;

	if ((r = parse_args(argc, argv, &A)) >= 0)
		return r;
	if (config_load(A.config_path, &cfg, &err) < 0) {
		fprintf(stderr, "%s", err.buf);
		if (err.len && err.buf[err.len - 1] != '\n')
			fputc('\n', stderr);
		strbuf_release(&err);
		return 1;
	}
	if (A.check_only) {
		printf("configuration OK\n");
		config_lab_print(stdout, cfg);
		config_free(cfg);
		return 0;
	}
	default_paths(&A);
	drop_root(cfg);
	no_new_privileges();
	check_owners(cfg);
	if (mkdir_p(cfg->data_dir) < 0)
		log_fatalx("data_dir %s: %s", cfg->data_dir, strerror(errno));
	check_identities(cfg);
	snprintf(dbpath, sizeof(dbpath), "%s/tlblab.db", cfg->data_dir);
	secure_files(cfg, cfg->store ? NULL : dbpath);
	d.st = open_store(cfg, dbpath);
	arm_store_fault(d.st);
	if (sched_create(cfg, d.st, A.agents, A.kernels, &d.sc, &err) < 0)
		log_fatalx("scheduler: %s", err.buf);
	sched_for_signal = d.sc;
	catch_signals();
	if (track_start(cfg, d.st, A.kernels, sched_quiet(d.sc), wake_sched, d.sc, &d.tr, &err) < 0)
		log_fatalx("%s", err.buf);
	if (api_start(cfg, d.st, d.sc, d.tr, A.web, &d.api, &err) < 0)
		log_fatalx("api: %s", err.buf);
	log_info("tlblabd %s listening on %s:%d, store %s (schema %d), %zu machines, agent %s, dashboard %s",
		 TLBLAB_VERSION, cfg->listen_host, cfg->listen_port, dbpath, store_version(d.st), cfg->nmachines,
		 A.agent, A.web);

	while (!stop_flag) {
		sched_run(d.sc, &stop_flag, &reload_flag);
		if (reload_flag) {
			reload_flag = 0;
			cfg = reload_config(A.config_path, cfg, &d);
		}
	}
	log_info("stopping");
	api_stop(d.api);
	track_stop(d.tr);
	sched_free(d.sc);
	/* what it leaves running, another daemon may take over at once */
	if (cfg->store && (r = store_daemon_retire(d.st)) < 0)
		log_warnx("store: this daemon could not say it stops: %s", store_strerror(r));
	store_close(d.st);
	config_free(cfg);
	strbuf_release(&err);
	return 0;
}
