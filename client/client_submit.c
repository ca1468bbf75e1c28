/*
 * `tlblab submit`: a job request checked as far as the client can (names,
 * refs, URLs, the patch file) before anything is sent, and with --wait the
 * job followed to its end: a line per stage that changes, the results of
 * what ran, and the exit status of how it ended.
 */
#include "client_cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"
#include "banned.h"

/* `submit --wait` rides out a restarting daemon for this long. */
#define WAIT_RETRY_SECONDS 60.0
#define WAIT_POLL_SECONDS 1.0
#define WAIT_DEFAULT_TIMEOUT 3600
#define WAIT_MAX_TIMEOUT (7L * 86400)
#define MAX_BOOTS 100		/* per side; the API's bound */
#define MAX_PATCH (4u << 20)	/* bytes of a --patch file */

/* The rules themselves are util.h's ref_valid() and url_valid(), which the
 * daemon applies too; these only word the refusal. */
static int check_ref(struct cli *cli, const char *option, const char *value,
		     struct strbuf *err)
{
	char clean[80];
	json_t *utf8;

	if (ref_valid(value)) {
		/* git takes any bytes above ASCII; JSON only UTF-8 */
		utf8 = json_string(value);
		json_decref(utf8);
		if (utf8)
			return 0;
		return cli_usage_error(cli, err, "%s: '%s' is not UTF-8", option,
				       client_fmt_clean(clean, sizeof(clean), value));
	}
	return cli_usage_error(cli, err, "%s: '%s' is not a git ref or commit id: refs follow "
			       "`git check-ref-format` (no \"..\", \"@{\", spaces, control characters "
			       "or ~^:?*[\\, no leading '-' or '.', no trailing '/', '.' or \".lock\", "
			       "at most 255 characters)", option,
			       client_fmt_clean(clean, sizeof(clean), value));
}

static int check_url(struct cli *cli, const char *option, const char *value,
		     int allow_git, struct strbuf *err)
{
	char clean[80];

	if (url_valid(value, allow_git))
		return 0;
	return cli_usage_error(cli, err, "%s: '%s' is not an %s URL of at most 2048 characters "
			       "without spaces, quotes or control characters", option,
			       client_fmt_clean(clean, sizeof(clean), value),
			       allow_git ? "https:// or git://" : "http:// or https://");
}

/*
 * Reads the --patch file into *ret, a JSON string: a regular file of at
 * most MAX_PATCH bytes of UTF-8 text (JSON cannot carry anything else, and
 * a binary file is never the patch someone meant). The size is checked
 * before reading, so a wrong path to a disk image costs nothing.
 */
/* Whether text starts as an mbox or a mail does: its first non-empty
 * line is mbox's "From " line or a header a mail starts with. The daemon
 * reads the series itself; this catches the wrong file at once. */
static int looks_like_mail(const char *text)
{
	static const char *const starts[] = { "From ", "From:", "Subject:", "Date:", "Message-I", "Return-Path:",
					      "Received:", "To:", "MIME-Version:", NULL };
	int i;

	while (*text == '\n' || *text == '\r')
		text++;
	for (i = 0; starts[i]; i++)
		if (!strncasecmp(text, starts[i], strlen(starts[i])))
			return 1;
	return 0;
}

static int read_patch(struct cli *cli, const char *opt, const char *path, json_t **ret, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;
	char clean[256];
	struct stat sb;
	int r = 0, e;

	client_fmt_clean(clean, sizeof(clean), path);
	if (stat(path, &sb) < 0) {
		e = errno;
		return cli_usage_error(cli, err, "%s: cannot read '%s': %s", opt, clean, strerror(e));
	}
	if (!S_ISREG(sb.st_mode))
		return cli_usage_error(cli, err, "%s: '%s' is not a regular file", opt, clean);
	if ((unsigned long long)sb.st_size > MAX_PATCH)
		return cli_usage_error(cli, err, "%s: '%s' is larger than %u MiB (%lld bytes)",
				       opt, clean, MAX_PATCH >> 20, (long long)sb.st_size);
	e = strbuf_read_file(&text, path, MAX_PATCH);
	if (e == -EFBIG)
		r = cli_usage_error(cli, err, "%s: '%s' is larger than %u MiB", opt, clean, MAX_PATCH >> 20);
	else if (e < 0)
		r = cli_usage_error(cli, err, "%s: cannot read '%s': %s", opt, clean, strerror(-e));
	else if (!text.len)
		r = cli_usage_error(cli, err, "%s: '%s' is empty", opt, clean);
	else if (memchr(text.buf, '\0', text.len))
		r = cli_usage_error(cli, err, "%s: '%s' is not text (it contains NUL bytes)", opt, clean);
	else if (!(*ret = json_stringn(text.buf, text.len)))
		r = cli_usage_error(cli, err, "%s: '%s' is not UTF-8 text (convert it, "
				    "e.g. with iconv -t UTF-8)", opt, clean);
	else if (!strcmp(opt, "--mbox") && !looks_like_mail(text.buf))
		r = cli_usage_error(cli, err, "--mbox: '%s' is not an mbox (git format-patch and b4 write one: "
				    "it starts with a \"From \" line or mail headers)", clean);
	strbuf_release(&text);
	return r;
}

/* Splits "a,b,c" into a JSON array of valid names. */
static int parse_name_list(struct cli *cli, const char *option, const char *value,
			   json_t **ret, struct strbuf *err)
{
	json_t *arr = json_array();
	const char *p = value;
	int r = 0;

	for (;;) {
		size_t n = strcspn(p, ",");
		char *item = strndup(p, n);

		if (!item)
			abort();
		r = cli_check_name(cli, option, item, err);
		if (!r)
			json_array_append_new(arr, json_string(item));
		free(item);
		if (r)
			break;
		if (!p[n])
			break;
		p += n + 1;
	}
	if (r) {
		json_decref(arr);
		return r;
	}
	json_decref(*ret);	/* a repeated option replaces the earlier one */
	*ret = arr;
	return 0;
}


/* --- submit ------------------------------------------------------------- */

static const char submit_usage[] =
	"usage: tlblab submit --suite NAME [--machines a,b] [--tags t1,t2] [--arch ARCH]\n"
	"                     [--submitter NAME] [--boots N] [--max-boots N] [--wait [--timeout S]]\n"
	"                     [--json] [--server URL]\n"
	"       tlblab submit --suite NAME --tree NAME --base REF\n"
	"                     [--patch FILE | --branch URL REF | --url URL] [...]\n"
	"\n"
	"Queues a job that runs the suite and prints \"job N queued\". With --tree\n"
	"and a patch, an A/B job: the base and the patched kernel are built, each\n"
	"booted --boots times (interleaved) and the suite run on every boot; with\n"
	"--tree alone, the base kernel is built, booted --boots times (default 1)\n"
	"and measured. Names are 1 to 64 of A-Z a-z 0-9 . _ - and do not start\n"
	"with '-' or '.'.\n"
	"\n"
	"  --suite NAME       a suite of the lab's configuration (default: the lab's\n"
	"                     defaults: suite)\n"
	"  --machines a,b     run only on these machines\n"
	"  --tags t1,t2       run only on machines with these tags\n"
	"  --arch ARCH        x86_64 or arm64: only machines of that arch, kernels built\n"
	"                     for it (default: the arch of the first machine that fits)\n"
	"  --submitter NAME   who asks (default $USER, else \"unknown\")\n"
	"  --boots N          boots per side (1..100; default 5, and then up to 10 while\n"
	"                     a headline metric is inconclusive)\n"
	"  --max-boots N      add boots per side up to N while inconclusive\n"
	"  --tree NAME        the lab's kernel tree to build (default: the lab's\n"
	"                     defaults: tree, for a job with a patch or --base)\n"
	"  --base REF         the git ref or commit id to build (the patch applies to\n"
	"                     it; default: the lab's defaults: base, in its tree)\n"
	"  --patch FILE       a patch or mbox (UTF-8 text, at most 4 MiB), sent inline\n"
	"  --mbox FILE        a series as git format-patch or b4 writes it, with or\n"
	"                     without a cover letter: applied in order with git am;\n"
	"                     the job is named by the cover letter, else patch 1\n"
	"  --per-patch        with --mbox: a job per prefix of the series (patches 1..k\n"
	"                     against the base), as 0-day's per-patch runs; `tlblab\n"
	"                     compare JOB --per-patch` shows which patch moved what\n"
	"  --branch URL REF   a git branch to compare with the base (http, https, git)\n"
	"  --url URL          a raw patch or mbox the daemon fetches (lore, patchwork)\n"
	"  --wait             follow the job: a line per stage change, then its\n"
	"                     results; exit 0 only if it ends done\n"
	"  --timeout S        with --wait, give up after S seconds (default 3600)\n"
	COMMON_HELP
	"\n"
	"With --wait --json, progress goes to stderr and the finished job's JSON\n"
	"to stdout. A job that fails because of the kernel or the patch (error\n"
	"classes patch, build, boot, workload) is a result, not a lab problem.\n";

struct stage_seen {
	long long key;
	long long attempt;
	char state[16];
	char *note;		/* owned; NULL for none */
};

struct wait_state {
	struct stage_seen *seen;
	size_t nseen;
};

static void wait_state_release(struct wait_state *ws)
{
	size_t i;

	for (i = 0; i < ws->nseen; i++)
		free(ws->seen[i].note);
	free(ws->seen);
	ws->seen = NULL;
	ws->nseen = 0;
}

static struct stage_seen *stage_seen_get(struct wait_state *ws, long long key)
{
	struct stage_seen *p;
	size_t j;

	for (j = 0; j < ws->nseen; j++)
		if (ws->seen[j].key == key)
			return &ws->seen[j];
	p = reallocarray(ws->seen, ws->nseen + 1, sizeof(*p));
	if (!p)
		abort();
	ws->seen = p;
	p = &p[ws->nseen++];
	p->key = key;
	p->attempt = 0;
	p->note = NULL;
	snprintf(p->state, sizeof(p->state), "pending");
	return p;
}

/*
 * Stages cancelled together for one reason: when a stage fails, every
 * stage after it is cancelled at once, and one line says so.
 */
struct cancel_group {
	struct strbuf first;	/* the first stage's line, as if alone */
	char *why;		/* the shared message; owned */
	size_t more;
};

static void cancel_group_flush(struct cancel_group *g, FILE *out)
{
	char clean[512];

	if (!g->first.len)
		return;
	if (g->more)
		strbuf_addf(&g->first, " and %zu more stage%s", g->more, g->more == 1 ? "" : "s");
	strbuf_addstr(&g->first, ": cancelled");
	if (g->why && *g->why)
		strbuf_addf(&g->first, " (%s)", g->why);
	fprintf(out, "%s\n", client_fmt_clean(clean, sizeof(clean), g->first.buf));
	strbuf_reset(&g->first);
	free(g->why);
	g->why = NULL;
	g->more = 0;
}

/*
 * Prints "job 12: run on m1: running" for every stage whose state, attempt
 * or note differs from what we saw last; a stage we have not seen yet
 * counts as pending at its first attempt. A run stage that ended with specs
 * that failed or did not run gets a line for each.
 */
static void report_stages(struct wait_state *ws, FILE *out, long long id, const json_t *job)
{
	const json_t *stages = json_object_get(job, "stages");
	struct strbuf line = STRBUF_INIT, indent = STRBUF_INIT;
	struct cancel_group group = { STRBUF_INIT, NULL, 0 };
	char clean[512];
	size_t i;
	json_t *st;

	strbuf_addf(&indent, "job %lld:   ", id);
	json_array_foreach(stages, i, st) {
		const char *state = client_jstr_or(st, "state", "unknown"), *note = jsonget_str(st, "note");
		const char *why = client_jstr_or(st, "error_message", "");
		long long key, attempt = 0, rep;
		struct stage_seen *s;

		if (jsonget_int(st, "id", &key) < 0 && jsonget_int(st, "seq", &key) < 0)
			key = (long long)i;
		jsonget_int(st, "attempt", &attempt);	/* the API counts from 0 */
		if (note && !*note)
			note = NULL;
		s = stage_seen_get(ws, key);
		if (!strncmp(s->state, state, sizeof(s->state) - 1) && s->attempt == attempt &&
		    !note == !s->note && (!note || !strcmp(note, s->note)))
			continue;
		snprintf(s->state, sizeof(s->state), "%s", state);
		s->attempt = attempt;
		free(s->note);
		s->note = note ? xstrdup(note) : NULL;

		strbuf_reset(&line);
		strbuf_addf(&line, "job %lld: ", id);
		client_stage_name(&line, st);
		if (jsonget_int(st, "repeat_of", &rep) == 0)
			strbuf_addf(&line, " (repeats seq %lld)", rep);
		if (attempt > 0 && attempt < LLONG_MAX)
			strbuf_addf(&line, " (attempt %lld)", attempt + 1);
		if (!strcmp(state, "cancelled")) {
			if (group.first.len && !strcmp(group.why, why)) {
				group.more++;
				continue;
			}
			cancel_group_flush(&group, out);
			strbuf_add(&group.first, line.buf, line.len);
			group.why = xstrdup(why);
			continue;
		}
		cancel_group_flush(&group, out);
		strbuf_addf(&line, ": %s", state);
		if (jsonget_str(st, "error_class") || jsonget_str(st, "error_message")) {
			strbuf_addf(&line, " (%s", client_jstr_or(st, "error_class", "error"));
			if (jsonget_str(st, "error_message"))
				strbuf_addf(&line, ": %s", jsonget_str(st, "error_message"));
			strbuf_addch(&line, ')');
		} else if (note) {
			strbuf_addf(&line, " (%s)", note);
		}
		fprintf(out, "%s\n", client_fmt_clean(clean, sizeof(clean), line.buf));
		if (client_job_is_final(state))
			client_stage_spec_problems_print(out, st, indent.buf);
	}
	cancel_group_flush(&group, out);
	fflush(out);
	strbuf_release(&group.first);
	strbuf_release(&line);
	strbuf_release(&indent);
}

static int is_transient(const struct client *c)
{
	return c->last_error == CLIENT_ERR_NET ||
	       (c->last_error == CLIENT_ERR_HTTP &&
		(c->last_status == 502 || c->last_status == 503 || c->last_status == 504));
}

/*
 * Polls job id until it ends or timeout seconds pass. A daemon that is
 * briefly away (restart, overload) is waited for, up to WAIT_RETRY_SECONDS
 * in a row. Returns the exit status.
 */
static int wait_job(struct cli *cli, long long id, long timeout, struct strbuf *err)
{
	FILE *progress = cli->json ? stderr : stdout;
	struct strbuf path = STRBUF_INIT, raw = STRBUF_INIT, line = STRBUF_INIT;
	struct wait_state ws = { NULL, 0 };
	double deadline = mono_now() + (double)timeout, failing_since = 0;
	json_t *root = NULL;
	const json_t *job = NULL;
	const char *state = NULL;
	int r = 0;

	strbuf_addf(&path, "/api/v1/jobs/%lld", id);
	for (;;) {
		json_decref(root);
		root = NULL;
		strbuf_reset(&raw);
		if (client_request(&cli->client, "GET", path.buf, NULL, &raw, &root, err) < 0) {
			double now = mono_now();

			if (!is_transient(&cli->client)) {
				r = cli_request_failed(cli, err);
				goto out;
			}
			if (!failing_since)
				failing_since = now;
			if (now - failing_since >= WAIT_RETRY_SECONDS || now >= deadline) {
				strbuf_addf(err, " (job %lld: gave up waiting after %.0f s)", id,
					    now - failing_since);
				r = cli_request_failed(cli, err);
				goto out;
			}
			sleep_sec(WAIT_POLL_SECONDS);
			continue;
		}
		failing_since = 0;
		job = json_object_get(root, "job");
		if (!json_is_object(job)) {
			strbuf_seterr(err, "job %lld: the server's answer has no \"job\"", id);
			r = EXIT_FAIL;
			goto out;
		}
		report_stages(&ws, progress, id, job);
		state = jsonget_str(job, "state");
		if (client_job_is_final(state))
			break;
		if (mono_now() >= deadline) {
			strbuf_seterr(err, "job %lld: still %s after %ld s; `tlblab status %lld` "
				      "follows it", id, state ? state : "unknown", timeout, id);
			r = EXIT_FAIL;
			goto out;
		}
		sleep_sec(fmin(WAIT_POLL_SECONDS, deadline - mono_now()));
	}

	if (cli->json) {
		cli_print_raw(&raw);
	} else {
		struct strbuf rerr = STRBUF_INIT;
		const json_t *stages = json_object_get(job, "stages");
		size_t i;
		json_t *st;
		int ran = !strcmp(state, "done");

		/* results only when some run stage got going: a job that died in
		 * its build, or found no machine, has none to show */
		json_array_foreach(stages, i, st)
			if (!strcmp(client_jstr_or(st, "kind", ""), "run") && json_is_number(json_object_get(st, "started")))
				ran = 1;
		if (ran) {
			fputc('\n', stdout);
			if (cli_show_results(cli, id, 0, &rerr))
				fprintf(stderr, "tlblab: %s\n", rerr.buf);
			fputc('\n', stdout);
		}
		strbuf_release(&rerr);
	}
	client_job_outcome(&line, job);
	fprintf(progress, "job %lld: %s\n", id, line.buf);
	r = !strcmp(state, "done") ? 0 : EXIT_FAIL;
out:
	wait_state_release(&ws);
	json_decref(root);
	strbuf_release(&line);
	strbuf_release(&raw);
	strbuf_release(&path);
	return r;
}

/* What an A/B job compares with its base: exactly one of these. */
struct patch_source {
	const char *option;	/* "--patch", "--branch" or "--url"; NULL if none */
	const char *file;	/* --patch */
	const char *url;	/* --branch (with ref) or --url */
	const char *ref;	/* --branch */
};

/* A per-patch series' jobs, one line each: "  job 5: [1/3] SUBJECT". */
static void print_series_jobs(FILE *out, const json_t *jobs)
{
	const json_t *j;
	char subject[256];
	long long id;
	size_t i;

	if (!json_is_array(jobs))
		return;
	fprintf(out, "a per-patch series: %zu A/B jobs, patches 1..k against the base "
		"(the last one is the whole series)\n", json_array_size(jobs));
	json_array_foreach(jobs, i, j)
		if (jsonget_int(j, "id", &id) == 0)
			fprintf(out, "  job %lld: %s\n", id, client_fmt_clean(subject, sizeof(subject),
						     client_jstr_or(j, "patch_subject", "-")));
}

/* --wait on one job, or on each of a per-patch series' in turn: the
 * first failure's exit status, after all of them are followed */
static int wait_jobs(struct cli *cli, const json_t *jobs, long long id, long timeout, struct strbuf *err)
{
	const json_t *j;
	long long jid;
	size_t i;
	int r = 0, rj;

	if (!json_is_array(jobs))
		return wait_job(cli, id, timeout, err);
	json_array_foreach(jobs, i, j) {
		if (jsonget_int(j, "id", &jid) < 0) {
			strbuf_seterr(err, "the server queued the series but did not say job %zu's id", i + 1);
			rj = EXIT_FAIL;
		} else {
			rj = wait_job(cli, jid, timeout, err);
		}
		if (rj && !r)
			r = rj;
		if (rj == EXIT_UNREACHABLE)
			break;
	}
	return r;
}

static int set_source(struct cli *cli, struct patch_source *src, const char *option,
		      struct strbuf *err)
{
	if (src->option && strcmp(src->option, option))
		return cli_usage_error(cli, err, "%s and %s: give only one of --patch, --mbox, "
				       "--branch and --url", src->option, option);
	memset(src, 0, sizeof(*src));	/* a repeated option replaces the earlier one */
	src->option = option;
	return 0;
}

/*
 * --branch takes two values, URL and REF. getopt hands us the URL; the ref
 * is the next word, taken here so that getopt skips it.
 */
static int parse_branch(struct cli *cli, int argc, char **argv, struct patch_source *src,
			struct strbuf *err)
{
	int r;

	if ((r = set_source(cli, src, "--branch", err)))
		return r;
	if (optind >= argc)
		return cli_usage_error(cli, err, "--branch needs two values: URL REF");
	src->url = optarg;
	src->ref = argv[optind++];
	if ((r = check_url(cli, "--branch", src->url, 1, err)))
		return r;
	return check_ref(cli, "--branch", src->ref, err);
}

/* What `tlblab submit` was asked, from its options. */
struct submit_args {
	const char *suite, *submitter, *tree, *base, *arch;
	json_t *machines, *tags, *patch;	/* owned */
	struct patch_source src;
	long boots, max_boots, timeout;
	int wait, timeout_set, per_patch;
};

static void submit_args_release(struct submit_args *a)
{
	json_decref(a->machines);
	json_decref(a->tags);
	json_decref(a->patch);
}

/* One option c (its argument in optarg) into a; 0, or the exit code. */
static int submit_option(struct cli *cli, int c, int argc, char **argv, struct submit_args *a, struct strbuf *err)
{
	switch (c) {
	case OPT_SUITE:
		a->suite = optarg;
		return cli_check_name(cli, "--suite", a->suite, err);
	case OPT_MACHINES:
		return parse_name_list(cli, "--machines", optarg, &a->machines, err);
	case OPT_TAGS:
		return parse_name_list(cli, "--tags", optarg, &a->tags, err);
	case OPT_ARCH:
		/* the daemon knows the arches; the client checks the shape */
		a->arch = optarg;
		return cli_check_name(cli, "--arch", a->arch, err);
	case OPT_SUBMITTER:
		a->submitter = optarg;
		return cli_check_name(cli, "--submitter", a->submitter, err);
	case OPT_BOOTS:
		return cli_parse_range(cli, "--boots", optarg, 1, MAX_BOOTS, &a->boots, err);
	case OPT_MAX_BOOTS:
		return cli_parse_range(cli, "--max-boots", optarg, 1, MAX_BOOTS, &a->max_boots, err);
	case OPT_WAIT:
		a->wait = 1;
		return 0;
	case OPT_TIMEOUT:
		a->timeout_set = 1;
		return cli_parse_range(cli, "--timeout", optarg, 1, WAIT_MAX_TIMEOUT, &a->timeout, err);
	case OPT_TREE:
		a->tree = optarg;
		return cli_check_name(cli, "--tree", a->tree, err);
	case OPT_BASE:
		a->base = optarg;
		return check_ref(cli, "--base", a->base, err);
	case OPT_PATCH:
	case OPT_MBOX: {
		int r = set_source(cli, &a->src, c == OPT_PATCH ? "--patch" : "--mbox", err);

		if (!r)
			a->src.file = optarg;
		return r;
	}
	case OPT_PER_PATCH:
		a->per_patch = 1;
		return 0;
	case OPT_BRANCH:
		return parse_branch(cli, argc, argv, &a->src, err);
	case OPT_URL: {
		int r = set_source(cli, &a->src, "--url", err);

		if (!r) {
			a->src.url = optarg;
			r = check_url(cli, "--url", a->src.url, 0, err);
		}
		return r;
	}
	}
	return 0;
}

/* The options together: what one allows only with another. 0, or the
 * exit code of a usage error. */
static int submit_check(struct cli *cli, const struct submit_args *a, struct strbuf *err)
{
	if (a->timeout_set && !a->wait)
		return cli_usage_error(cli, err, "--timeout only makes sense with --wait");
	if (a->per_patch && (!a->src.option || strcmp(a->src.option, "--mbox")))
		return cli_usage_error(cli, err, "--per-patch measures each prefix of a series: it needs --mbox FILE");
	/* more boots are added only to compare sides: an A/B job's */
	if (a->max_boots && !a->src.option)
		return cli_usage_error(cli, err, "--max-boots is for A/B jobs (with a patch)");
	if (a->max_boots && a->boots && a->max_boots < a->boots)
		return cli_usage_error(cli, err, "--max-boots %ld is below --boots %ld", a->max_boots, a->boots);
	return 0;
}

/* The request's body: what is left out, the daemon takes from the lab's
 * defaults: (or refuses, naming the field). */
static json_t *submit_body(const struct submit_args *a)
{
	json_t *body = json_object();

	if (a->suite)
		json_object_set_new(body, "suite", json_string(a->suite));
	if (a->tree)
		json_object_set_new(body, "tree", json_string(a->tree));
	if (a->base)
		json_object_set_new(body, "base", json_string(a->base));
	if (a->patch)
		json_object_set(body, "patch", a->patch);
	else if (a->src.ref)
		json_object_set_new(body, "branch", json_pack("{ssss}", "url", a->src.url, "ref", a->src.ref));
	else if (a->src.url)
		json_object_set_new(body, "url", json_string(a->src.url));
	if (a->boots)
		json_object_set_new(body, "boots", json_integer(a->boots));
	if (a->max_boots)
		json_object_set_new(body, "max_boots", json_integer(a->max_boots));
	if (a->machines)
		json_object_set(body, "machines", a->machines);
	if (a->tags)
		json_object_set(body, "tags", a->tags);
	if (a->arch)
		json_object_set_new(body, "arch", json_string(a->arch));
	json_object_set_new(body, "submitter", json_string(a->submitter));
	if (a->per_patch)
		json_object_set_new(body, "per_patch", json_true());
	return body;
}

int cmd_submit(struct cli *cli, int argc, char **argv, struct strbuf *err)
{
	static const struct option opts[] = {
		{ "suite", required_argument, NULL, OPT_SUITE },
		{ "machines", required_argument, NULL, OPT_MACHINES },
		{ "tags", required_argument, NULL, OPT_TAGS },
		{ "arch", required_argument, NULL, OPT_ARCH },
		{ "submitter", required_argument, NULL, OPT_SUBMITTER },
		{ "boots", required_argument, NULL, OPT_BOOTS },
		{ "max-boots", required_argument, NULL, OPT_MAX_BOOTS },
		{ "wait", no_argument, NULL, OPT_WAIT },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "tree", required_argument, NULL, OPT_TREE },
		{ "base", required_argument, NULL, OPT_BASE },
		{ "patch", required_argument, NULL, OPT_PATCH },
		{ "mbox", required_argument, NULL, OPT_MBOX },
		{ "per-patch", no_argument, NULL, OPT_PER_PATCH },
		{ "branch", required_argument, NULL, OPT_BRANCH },
		{ "url", required_argument, NULL, OPT_URL },
		COMMON_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct submit_args a = { .src = { NULL, NULL, NULL, NULL }, .timeout = WAIT_DEFAULT_TIMEOUT };
	json_t *body = NULL, *resp = NULL;
	struct strbuf raw = STRBUF_INIT, raw_defaults = STRBUF_INIT;
	int c, r = 0;
	const json_t *job;
	long long id;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if ((r = cli_common_option(cli, c, argv, submit_usage, err)) > 0)
			goto out;
		if ((r = submit_option(cli, c, argc, argv, &a, err)))
			goto out;
	}
	if ((r = cli_no_args(cli, argc, argv, err)) || (r = submit_check(cli, &a, err)))
		goto out;
	/* last: the file is read only for a request that is otherwise sound */
	if (a.src.file && (r = read_patch(cli, a.src.option, a.src.file, &a.patch, err)))
		goto out;
	if (!a.submitter) {
		/* $USER is a convenience, not an input to refuse over */
		a.submitter = getenv("USER");
		if (!a.submitter || !client_valid_name(a.submitter))
			a.submitter = "unknown";
	}
	if ((r = cli_connect(cli, err)))
		goto out;
	body = submit_body(&a);
	if (client_request(&cli->client, "POST", "/api/v1/jobs", body, &raw, &resp, err) < 0) {
		r = cli_request_failed(cli, err);
		goto out;
	}
	job = json_object_get(resp, "job");
	if (jsonget_int(job, "id", &id) < 0) {
		strbuf_seterr(err, "the server accepted the job but did not say its id");
		r = EXIT_FAIL;
		goto out;
	}
	if (cli->json && !a.wait) {
		cli_print_raw(&raw);
	} else {
		char clean[64];

		FILE *out = cli->json ? stderr : stdout;
		char line[512];

		fprintf(out, "job %lld %s\n", id,
			client_fmt_clean(clean, sizeof(clean), client_jstr_or(job, "state", "queued")));
		/* what it took from the lab's defaults: */
		client_join_defaults(&raw_defaults, json_object_get(job, "defaults"));
		if (raw_defaults.len)
			fprintf(out, "defaults: %s\n", client_fmt_clean(line, sizeof(line), raw_defaults.buf));
		print_series_jobs(out, json_object_get(resp, "jobs"));
		fflush(out);
	}
	if (a.wait)
		r = wait_jobs(cli, json_object_get(resp, "jobs"), id, a.timeout, err);
out:
	submit_args_release(&a);
	json_decref(body);
	json_decref(resp);
	strbuf_release(&raw);
	strbuf_release(&raw_defaults);
	return r;
}
