/*
 * tlblab: the command-line client of tlblabd (API in api.h).
 *
 * Each command parses its own options, validates everything it can before
 * sending a request (a refused name never reaches the server), talks to the
 * server through client.h and prints a table, or with --json the server's
 * JSON as it came. Commands return an exit status and leave the message in
 * err; main prints it, once, as "tlblab: ...".
 *
 * Exit status: 0 success (for `submit --wait`: the job ended done), 1 the
 * server refused or the job failed, was cancelled or did not finish in
 * time, 2 usage or validation error, 3 the server could not be reached.
 */
#include "client.h"

#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"
#include "banned.h"

#define DEFAULT_SERVER "http://127.0.0.1:8080"

enum {
	EXIT_FAIL = 1,
	EXIT_USAGE = 2,
	EXIT_UNREACHABLE = 3,
	/* not an exit status: a command stopped after printing its help,
	 * which main turns into 0 */
	HELP_SHOWN = 256,
};

/* `submit --wait` rides out a restarting daemon for this long. */
#define WAIT_RETRY_SECONDS 60.0
#define WAIT_POLL_SECONDS 1.0
#define WAIT_DEFAULT_TIMEOUT 3600
#define WAIT_MAX_TIMEOUT (7L * 86400)
#define MAX_BOOTS 100		/* per side; the API's bound */
#define MAX_PATCH (4u << 20)	/* bytes of a --patch file */
#define MAX_LIST_LIMIT 500

/* long-only options shared by every command */
enum {
	OPT_SERVER = 0x100,
	OPT_JSON,
	OPT_SUITE,
	OPT_MACHINES,
	OPT_TAGS,
	OPT_SUBMITTER,
	OPT_BOOTS,
	OPT_MAX_BOOTS,
	OPT_WAIT,
	OPT_TIMEOUT,
	OPT_STATE,
	OPT_LIMIT,
	OPT_OFFSET,
	OPT_ALL,
	OPT_VERSION,
	OPT_TREE,
	OPT_BASE,
	OPT_PATCH,
	OPT_BRANCH,
	OPT_URL,
	OPT_PATCHED,
};

struct cli {
	const char *server;	/* from --server, $TLBLAB_SERVER or the default */
	int json;
	const char *command;
	struct client client;
	int connected;
};

struct command {
	const char *name;
	int (*run)(struct cli *cli, int argc, char **argv, struct strbuf *err);
	const char *usage;	/* first line: synopsis */
};

static const char main_usage[] =
	"usage: tlblab [--server URL] COMMAND [OPTIONS]\n"
	"\n"
	"commands:\n"
	"  submit    queue a job (--wait follows it to the end)\n"
	"  status    show a job and its stages\n"
	"  jobs      list jobs\n"
	"  cancel    cancel a job\n"
	"  machines  list the lab's machines\n"
	"  results   show a job's measured metrics\n"
	"  compare   compare base and patched: verdicts, sweeps, TLB, profiles\n"
	"  version   print the client's version\n"
	"\n"
	"common options:\n"
	"  --server URL   tlblabd's address (default $TLBLAB_SERVER, else " DEFAULT_SERVER ")\n"
	"  --json         print the server's JSON instead of a table\n"
	"  -h, --help     help; `tlblab COMMAND --help` for a command\n"
	"\n"
	"The token for creating and cancelling jobs is read from $TLBLAB_TOKEN.\n"
	"Exit status: 0 ok, 1 refused or job failed, 2 usage error, 3 server unreachable.\n";

#define COMMON_HELP \
	"  --server URL   tlblabd's address (default $TLBLAB_SERVER, else " DEFAULT_SERVER ")\n" \
	"  --json         print the server's JSON instead of a table\n"

#define COMMON_OPTIONS \
	{ "server", required_argument, NULL, OPT_SERVER }, \
	{ "json", no_argument, NULL, OPT_JSON }, \
	{ "help", no_argument, NULL, 'h' }

/* --- helpers ------------------------------------------------------------ */

static int usage_error(struct cli *cli, struct strbuf *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int usage_error(struct cli *cli, struct strbuf *err, const char *fmt, ...)
{
	va_list ap;

	strbuf_reset(err);
	strbuf_addf(err, "%s: ", cli->command);
	va_start(ap, fmt);
	strbuf_vaddf(err, fmt, ap);
	va_end(ap);
	strbuf_addf(err, " (see `tlblab %s --help`)", cli->command);
	return EXIT_USAGE;
}

/*
 * The options every command shares, and getopt's complaints. Returns -1
 * when c was one of them and was handled, 0 when the command should handle
 * c itself, or HELP_SHOWN, or an exit status with a usage error in err.
 */
static int common_option(struct cli *cli, int c, char **argv, const char *usage,
			 struct strbuf *err)
{
	switch (c) {
	case OPT_SERVER:
		cli->server = optarg;
		return -1;
	case OPT_JSON:
		cli->json = 1;
		return -1;
	case 'h':
		fputs(usage, stdout);
		return HELP_SHOWN;
	case ':':
		return usage_error(cli, err, "option '%s' needs a value", argv[optind - 1]);
	case '?':
		return usage_error(cli, err, "unknown option '%s'", argv[optind - 1]);
	}
	return 0;
}

static int parse_job_arg(struct cli *cli, int argc, char **argv, long long *ret,
			 struct strbuf *err)
{
	uint64_t id;

	if (optind >= argc)
		return usage_error(cli, err, "which job? give its id");
	if (optind + 1 < argc)
		return usage_error(cli, err, "unexpected argument '%s'", argv[optind + 1]);
	if (parse_u64(argv[optind], &id) < 0 || !id || id > LLONG_MAX)
		return usage_error(cli, err, "'%s' is not a job id (a positive integer)",
				   argv[optind]);
	*ret = (long long)id;
	return 0;
}

static int no_args(struct cli *cli, int argc, char **argv, struct strbuf *err)
{
	if (optind < argc)
		return usage_error(cli, err, "unexpected argument '%s'", argv[optind]);
	return 0;
}

static int check_name(struct cli *cli, const char *option, const char *value,
		      struct strbuf *err)
{
	char clean[80];

	if (client_valid_name(value))
		return 0;
	if (!*value)
		return usage_error(cli, err, "%s: empty name", option);
	return usage_error(cli, err, "%s: invalid name '%s': names are 1 to 64 of "
			   "A-Z a-z 0-9 . _ - and do not start with '-' or '.'",
			   option, fmt_clean(clean, sizeof(clean), value));
}

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
		return usage_error(cli, err, "%s: '%s' is not UTF-8", option,
				   fmt_clean(clean, sizeof(clean), value));
	}
	return usage_error(cli, err, "%s: '%s' is not a git ref or commit id: refs follow "
			   "`git check-ref-format` (no \"..\", \"@{\", spaces, control characters "
			   "or ~^:?*[\\, no leading '-' or '.', no trailing '/', '.' or \".lock\", "
			   "at most 255 characters)", option,
			   fmt_clean(clean, sizeof(clean), value));
}

static int check_url(struct cli *cli, const char *option, const char *value,
		     int allow_git, struct strbuf *err)
{
	char clean[80];

	if (url_valid(value, allow_git))
		return 0;
	return usage_error(cli, err, "%s: '%s' is not an %s URL of at most 2048 characters "
			   "without spaces, quotes or control characters", option,
			   fmt_clean(clean, sizeof(clean), value),
			   allow_git ? "http://, https:// or git://" : "http:// or https://");
}

/*
 * Reads the --patch file into *ret, a JSON string: a regular file of at
 * most MAX_PATCH bytes of UTF-8 text (JSON cannot carry anything else, and
 * a binary file is never the patch someone meant). The size is checked
 * before reading, so a wrong path to a disk image costs nothing.
 */
static int read_patch(struct cli *cli, const char *path, json_t **ret, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;
	char clean[256];
	struct stat sb;
	int r = 0, e;

	fmt_clean(clean, sizeof(clean), path);
	if (stat(path, &sb) < 0) {
		e = errno;
		return usage_error(cli, err, "--patch: cannot read '%s': %s", clean, strerror(e));
	}
	if (!S_ISREG(sb.st_mode))
		return usage_error(cli, err, "--patch: '%s' is not a regular file", clean);
	if ((unsigned long long)sb.st_size > MAX_PATCH)
		return usage_error(cli, err, "--patch: '%s' is larger than %u MiB (%lld bytes)",
				   clean, MAX_PATCH >> 20, (long long)sb.st_size);
	e = strbuf_read_file(&text, path, MAX_PATCH);
	if (e == -EFBIG)
		r = usage_error(cli, err, "--patch: '%s' is larger than %u MiB", clean, MAX_PATCH >> 20);
	else if (e < 0)
		r = usage_error(cli, err, "--patch: cannot read '%s': %s", clean, strerror(-e));
	else if (!text.len)
		r = usage_error(cli, err, "--patch: '%s' is empty", clean);
	else if (memchr(text.buf, '\0', text.len))
		r = usage_error(cli, err, "--patch: '%s' is not text (it contains NUL bytes)", clean);
	else if (!(*ret = json_stringn(text.buf, text.len)))
		r = usage_error(cli, err, "--patch: '%s' is not UTF-8 text (convert it, "
				"e.g. with iconv -t UTF-8)", clean);
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
		r = check_name(cli, option, item, err);
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

static int parse_range(struct cli *cli, const char *option, const char *value,
		       long min, long max, long *ret, struct strbuf *err)
{
	if (parse_int_range(value, min, max, ret) < 0)
		return usage_error(cli, err, "%s: '%s' is not a number from %ld to %ld",
				   option, value, min, max);
	return 0;
}

static int cli_connect(struct cli *cli, struct strbuf *err)
{
	if (cli->connected)
		return 0;
	if (client_init(&cli->client, cli->server, getenv("TLBLAB_TOKEN"), err) < 0)
		return EXIT_USAGE;
	cli->connected = 1;
	return 0;
}

/* Exit status for a failed client_request(), whose message is in err. */
static int request_failed(const struct cli *cli, struct strbuf *err)
{
	if (cli->client.last_status == 401 && !cli->client.token)
		strbuf_addstr(err, " (TLBLAB_TOKEN is not set)");
	return cli->client.last_error == CLIENT_ERR_NET ? EXIT_UNREACHABLE : EXIT_FAIL;
}

static void print_raw(const struct strbuf *raw)
{
	fwrite(raw->buf, 1, raw->len, stdout);
	if (!raw->len || raw->buf[raw->len - 1] != '\n')
		fputc('\n', stdout);
}

static int get_json(struct cli *cli, const char *path, struct strbuf *raw,
		    json_t **ret, struct strbuf *err)
{
	int r = cli_connect(cli, err);

	if (r)
		return r;
	if (client_request(&cli->client, "GET", path, NULL, raw, ret, err) < 0)
		return request_failed(cli, err);
	return 0;
}

/* --- results -------------------------------------------------------------- */

static const char results_usage[] =
	"usage: tlblab results [--all] [--json] [--server URL] JOB\n"
	"\n"
	"One block per (spec, case) of the job, and per machine and side when it\n"
	"ran on several, with its parameters and, for each metric, the median,\n"
	"min and max over the measured iterations (warm-ups excluded) and their\n"
	"number n. An A/B job shows its base blocks, then its patched ones, each\n"
	"pooling the boots of that side. --json prints {\"runs\": [...],\n"
	"\"metrics\": [...]} as the server sent them.\n"
	"\n"
	"  --all          also show per-CPU metrics (names containing \".cpu\")\n"
	COMMON_HELP;

static int show_results(struct cli *cli, long long id, int all, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT;
	json_t *runs = NULL, *metrics = NULL;
	int r;

	strbuf_addf(&path, "/api/v1/jobs/%lld/runs", id);
	r = get_json(cli, path.buf, NULL, &runs, err);
	if (r)
		goto out;
	strbuf_reset(&path);
	strbuf_addf(&path, "/api/v1/jobs/%lld/metrics", id);
	r = get_json(cli, path.buf, NULL, &metrics, err);
	if (r)
		goto out;
	if (cli->json) {
		json_t *both = json_pack("{sOsO}", "runs", json_object_get(runs, "runs"),
					 "metrics", json_object_get(metrics, "metrics"));
		char *s = both ? json_dumps(both, JSON_COMPACT) : NULL;

		if (s)
			puts(s);
		else
			r = EXIT_FAIL, strbuf_seterr(err, "job %lld: the server's runs or metrics are missing", id);
		free(s);
		json_decref(both);
		goto out;
	}
	if (results_print(stdout, runs, metrics, all, err) < 0) {
		strbuf_addf(err, " (job %lld)", id);
		r = EXIT_FAIL;
	}
out:
	json_decref(runs);
	json_decref(metrics);
	strbuf_release(&path);
	return r;
}

static int cmd_results(struct cli *cli, int argc, char **argv, struct strbuf *err)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, OPT_ALL },
		COMMON_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	long long id;
	int c, r, all = 0;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if ((r = common_option(cli, c, argv, results_usage, err)) > 0)
			return r;
		if (!r && c == OPT_ALL)
			all = 1;
	}
	if ((r = parse_job_arg(cli, argc, argv, &id, err)))
		return r;
	return show_results(cli, id, all, err);
}

/* --- compare -------------------------------------------------------------- */

static const char compare_usage[] =
	"usage: tlblab compare [--all] [--json] [--server URL] JOB\n"
	"       tlblab compare --base JOB_A --patched JOB_B [--all] [--json] [--server URL]\n"
	"\n"
	"Compares the base and patched sides of an A/B job, or two jobs that ran\n"
	"the same suite. Each side's sample is one value per boot (the median of\n"
	"its measured iterations); p is a two-sided Mann-Whitney U test, CI the\n"
	"bootstrap 95% interval of the change of medians. Verdicts: regression or\n"
	"improvement (p < 0.01, CI excludes 0, change at least 2% for headline\n"
	"metrics and 5% for counters), changed (a neutral metric moved), same\n"
	"(CI within +-2%), inconclusive, unavailable.\n"
	"\n"
	"Printed: the headline summary, the rows (BASE and PATCHED are medians\n"
	"over boots, with the spread when above 2%), thread sweeps, the TLB\n"
	"shootdown block, the profile diff and provenance, and last the job's\n"
	"verdict (\"verdict: regression\"). A job that failed or is still running\n"
	"is compared on what ran on both sides so far, and has no verdict.\n"
	"--json prints the server's {\"comparison\": ...} as it came.\n"
	"\n"
	"  --base JOB      the base side: this job's runs\n"
	"  --patched JOB   the patched side: this job's runs\n"
	"  --all           also show rows that are the same, and counters that\n"
	"                  moved less than the counter threshold\n"
	COMMON_HELP;

static int parse_job_id(struct cli *cli, const char *option, const char *value, long long *ret,
			struct strbuf *err)
{
	uint64_t id;
	char clean[64];

	if (parse_u64(value, &id) < 0 || !id || id > LLONG_MAX)
		return usage_error(cli, err, "%s: '%s' is not a job id (a positive integer)", option,
				   fmt_clean(clean, sizeof(clean), value));
	*ret = (long long)id;
	return 0;
}

/*
 * The last line, the one a script or a mail quotes: the comparison's own
 * verdict when it carries one, else the one the daemon keeps with a done
 * A/B job. A failed job has none: its rows cover only the specs that ran.
 */
static void print_verdict(const json_t *cmp, const json_t *job)
{
	const char *v = jstr(cmp, "verdict"), *state = jstr(job, "state");
	char clean[64];

	if (!v)
		v = jstr(job, "verdict");
	if (v)
		printf("\nverdict: %s\n", fmt_clean(clean, sizeof(clean), v));
	else if (state && job_is_final(state) && strcmp(state, "done"))
		printf("\nverdict: none (the job %s)\n", !strcmp(state, "failed") ? "failed" : "was cancelled");
	else if (state && !job_is_final(state))
		printf("\nverdict: none yet (the job is %s)\n", fmt_clean(clean, sizeof(clean), state));
}

/*
 * An A/B job's comparison, with what only the job can say: that it failed
 * or is still going (the rows then cover the specs that ran on both sides
 * so far), and its verdict. The job is asked for after the comparison,
 * which the daemon keeps (and gives a finished job its verdict) on the way.
 * Without the job the comparison is still shown.
 */
static int print_job_comparison(struct cli *cli, long long id, const json_t *cmp, int all,
				struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT, jerr = STRBUF_INIT, outcome = STRBUF_INIT;
	json_t *root = NULL;
	const json_t *job = NULL;
	const char *state = NULL;
	int r = 0;

	strbuf_addf(&path, "/api/v1/jobs/%lld", id);
	if (client_request(&cli->client, "GET", path.buf, NULL, NULL, &root, &jerr) == 0)
		job = json_object_get(root, "job");
	state = jstr(job, "state");
	if (state && strcmp(state, "done")) {
		job_outcome(&outcome, job);
		if (!json_array_size(json_object_get(cmp, "rows")) && job_is_final(state)) {
			strbuf_seterr(err, "job %lld: nothing to compare: no spec ran on both sides "
				      "before the job ended (%s); `tlblab status %lld` shows its stages",
				      id, outcome.buf, id);
			r = EXIT_FAIL;
			goto out;
		}
		printf("job %lld: %s\n", id, outcome.buf);
		printf("(the rows compare what ran on both sides %s)\n\n",
		       job_is_final(state) ? "before the job ended" : "so far");
	}
	if (compare_print(stdout, cmp, all, err) < 0) {
		strbuf_addf(err, " (job %lld)", id);
		r = EXIT_FAIL;
		goto out;
	}
	print_verdict(cmp, job);
out:
	json_decref(root);
	strbuf_release(&outcome);
	strbuf_release(&jerr);
	strbuf_release(&path);
	return r;
}

static int cmd_compare(struct cli *cli, int argc, char **argv, struct strbuf *err)
{
	static const struct option opts[] = {
		{ "base", required_argument, NULL, OPT_BASE },
		{ "patched", required_argument, NULL, OPT_PATCHED },
		{ "all", no_argument, NULL, OPT_ALL },
		COMMON_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct strbuf path = STRBUF_INIT, raw = STRBUF_INIT;
	long long id = 0, base = 0, patched = 0;
	json_t *root = NULL, *cmp;
	int c, r, all = 0;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if ((r = common_option(cli, c, argv, compare_usage, err)) > 0)
			return r;
		r = 0;
		if (c == OPT_ALL)
			all = 1;
		else if (c == OPT_BASE)
			r = parse_job_id(cli, "--base", optarg, &base, err);
		else if (c == OPT_PATCHED)
			r = parse_job_id(cli, "--patched", optarg, &patched, err);
		if (r)
			return r;
	}
	if (base || patched) {
		if (!base || !patched)
			return usage_error(cli, err, "--base and --patched go together");
		if ((r = no_args(cli, argc, argv, err)))
			return usage_error(cli, err, "give either JOB or --base and --patched, not both");
		strbuf_addf(&path, "/api/v1/compare?base=%lld&patched=%lld", base, patched);
	} else {
		if ((r = parse_job_arg(cli, argc, argv, &id, err)))
			return r;
		strbuf_addf(&path, "/api/v1/jobs/%lld/comparison", id);
	}
	if ((r = get_json(cli, path.buf, &raw, &root, err))) {
		/* 409: not an A/B job; the API's hint names its URL, not the command */
		if (id && cli->client.last_status == 409)
			strbuf_addstr(err, " (two jobs: tlblab compare --base A --patched B)");
		goto out;
	}
	if (cli->json) {
		print_raw(&raw);
		goto out;
	}
	/* the API wraps the document (api.h): {"comparison": {...}} */
	cmp = json_object_get(root, "comparison");
	if (!json_is_object(cmp)) {
		strbuf_seterr(err, "the server's answer has no \"comparison\"");
		r = EXIT_FAIL;
	} else if (id) {
		r = print_job_comparison(cli, id, cmp, all, err);
	} else if (compare_print(stdout, cmp, all, err) < 0) {
		strbuf_addf(err, " (jobs %lld and %lld)", base, patched);
		r = EXIT_FAIL;
	} else {
		print_verdict(cmp, NULL);
	}
out:
	json_decref(root);
	strbuf_release(&raw);
	strbuf_release(&path);
	return r;
}

/* --- submit ------------------------------------------------------------- */

static const char submit_usage[] =
	"usage: tlblab submit --suite NAME [--machines a,b] [--tags t1,t2]\n"
	"                     [--submitter NAME] [--boots N] [--max-boots N] [--wait [--timeout S]]\n"
	"                     [--json] [--server URL]\n"
	"       tlblab submit --suite NAME --tree NAME --base REF\n"
	"                     (--patch FILE | --branch URL REF | --url URL) [...]\n"
	"\n"
	"Queues a job that runs the suite and prints \"job N queued\". With --tree,\n"
	"an A/B job: the base and the patched kernel are built, each booted --boots\n"
	"times (interleaved) and the suite run on every boot. Names are 1 to 64 of\n"
	"A-Z a-z 0-9 . _ - and do not start with '-' or '.'.\n"
	"\n"
	"  --suite NAME       a suite of the lab's configuration (required)\n"
	"  --machines a,b     run only on these machines\n"
	"  --tags t1,t2       run only on machines with these tags\n"
	"  --submitter NAME   who asks (default $USER, else \"unknown\")\n"
	"  --boots N          boots per side (1..100; default 5, and then up to 9 while\n"
	"                     a headline metric is inconclusive)\n"
	"  --max-boots N      add boots per side up to N while inconclusive\n"
	"  --tree NAME        the lab's kernel tree to build (needs --base and one of\n"
	"                     --patch, --branch, --url)\n"
	"  --base REF         the git ref or commit id the patch applies to\n"
	"  --patch FILE       a patch or mbox (UTF-8 text, at most 4 MiB), sent inline\n"
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
	fprintf(out, "%s\n", fmt_clean(clean, sizeof(clean), g->first.buf));
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
		const char *state = jstr_or(st, "state", "unknown"), *note = jstr(st, "note");
		const char *why = jstr_or(st, "error_message", "");
		long long key, attempt = 0, rep;
		struct stage_seen *s;

		if (jint(st, "id", &key) < 0 && jint(st, "seq", &key) < 0)
			key = (long long)i;
		jint(st, "attempt", &attempt);	/* the API counts from 0 */
		if (note && !*note)
			note = NULL;
		s = stage_seen_get(ws, key);
		if (!strncmp(s->state, state, sizeof(s->state) - 1) && s->attempt == attempt &&
		    !note == !s->note && (!note || !strcmp(note, s->note)))
			continue;
		snprintf(s->state, sizeof(s->state), "%s", state);
		s->attempt = attempt;
		free(s->note);
		s->note = note ? strdup(note) : NULL;
		if (note && !s->note)
			abort();

		strbuf_reset(&line);
		strbuf_addf(&line, "job %lld: ", id);
		stage_name(&line, st);
		if (jint(st, "repeat_of", &rep) == 0)
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
			if (!(group.why = strdup(why)))
				abort();
			continue;
		}
		cancel_group_flush(&group, out);
		strbuf_addf(&line, ": %s", state);
		if (jstr(st, "error_class") || jstr(st, "error_message")) {
			strbuf_addf(&line, " (%s", jstr_or(st, "error_class", "error"));
			if (jstr(st, "error_message"))
				strbuf_addf(&line, ": %s", jstr(st, "error_message"));
			strbuf_addch(&line, ')');
		} else if (note) {
			strbuf_addf(&line, " (%s)", note);
		}
		fprintf(out, "%s\n", fmt_clean(clean, sizeof(clean), line.buf));
		if (job_is_final(state))
			stage_spec_problems_print(out, st, indent.buf);
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
				r = request_failed(cli, err);
				goto out;
			}
			if (!failing_since)
				failing_since = now;
			if (now - failing_since >= WAIT_RETRY_SECONDS || now >= deadline) {
				strbuf_addf(err, " (job %lld: gave up waiting after %.0f s)", id,
					    now - failing_since);
				r = request_failed(cli, err);
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
		state = jstr(job, "state");
		if (job_is_final(state))
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
		print_raw(&raw);
	} else {
		struct strbuf rerr = STRBUF_INIT;
		const json_t *stages = json_object_get(job, "stages");
		size_t i;
		json_t *st;
		int ran = !strcmp(state, "done");

		/* results only when some run stage got going: a job that died in
		 * its build, or found no machine, has none to show */
		json_array_foreach(stages, i, st)
			if (!strcmp(jstr_or(st, "kind", ""), "run") && json_is_number(json_object_get(st, "started")))
				ran = 1;
		if (ran) {
			fputc('\n', stdout);
			if (show_results(cli, id, 0, &rerr))
				fprintf(stderr, "tlblab: %s\n", rerr.buf);
			fputc('\n', stdout);
		}
		strbuf_release(&rerr);
	}
	job_outcome(&line, job);
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

static int set_source(struct cli *cli, struct patch_source *src, const char *option,
		      struct strbuf *err)
{
	if (src->option && strcmp(src->option, option))
		return usage_error(cli, err, "%s and %s: give only one of --patch, --branch "
				   "and --url", src->option, option);
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
		return usage_error(cli, err, "--branch needs two values: URL REF");
	src->url = optarg;
	src->ref = argv[optind++];
	if ((r = check_url(cli, "--branch", src->url, 1, err)))
		return r;
	return check_ref(cli, "--branch", src->ref, err);
}

/* The pairings the options need, once all are read. */
static int check_ab_options(struct cli *cli, const char *tree, const char *base,
			    const struct patch_source *src, struct strbuf *err)
{
	if (tree && !base)
		return usage_error(cli, err, "--tree needs --base (the ref the patch applies to)");
	if (base && !tree)
		return usage_error(cli, err, "--base needs --tree (the tree the ref is in)");
	if (tree && !src->option)
		return usage_error(cli, err, "--tree needs one of --patch, --branch or --url");
	if (src->option && !tree)
		return usage_error(cli, err, "%s needs --tree and --base", src->option);
	return 0;
}

static int cmd_submit(struct cli *cli, int argc, char **argv, struct strbuf *err)
{
	static const struct option opts[] = {
		{ "suite", required_argument, NULL, OPT_SUITE },
		{ "machines", required_argument, NULL, OPT_MACHINES },
		{ "tags", required_argument, NULL, OPT_TAGS },
		{ "submitter", required_argument, NULL, OPT_SUBMITTER },
		{ "boots", required_argument, NULL, OPT_BOOTS },
		{ "max-boots", required_argument, NULL, OPT_MAX_BOOTS },
		{ "wait", no_argument, NULL, OPT_WAIT },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "tree", required_argument, NULL, OPT_TREE },
		{ "base", required_argument, NULL, OPT_BASE },
		{ "patch", required_argument, NULL, OPT_PATCH },
		{ "branch", required_argument, NULL, OPT_BRANCH },
		{ "url", required_argument, NULL, OPT_URL },
		COMMON_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	const char *suite = NULL, *submitter = NULL, *tree = NULL, *base = NULL;
	json_t *machines = NULL, *tags = NULL, *body = NULL, *resp = NULL, *patch = NULL;
	struct patch_source src = { NULL, NULL, NULL, NULL };
	struct strbuf raw = STRBUF_INIT;
	long boots = 0, max_boots = 0, timeout = WAIT_DEFAULT_TIMEOUT;
	int c, r = 0, wait = 0, timeout_set = 0;
	const json_t *job;
	long long id;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if ((r = common_option(cli, c, argv, submit_usage, err)) > 0)
			goto out;
		r = 0;
		switch (c) {
		case OPT_SUITE:
			suite = optarg;
			r = check_name(cli, "--suite", suite, err);
			break;
		case OPT_MACHINES:
			r = parse_name_list(cli, "--machines", optarg, &machines, err);
			break;
		case OPT_TAGS:
			r = parse_name_list(cli, "--tags", optarg, &tags, err);
			break;
		case OPT_SUBMITTER:
			submitter = optarg;
			r = check_name(cli, "--submitter", submitter, err);
			break;
		case OPT_BOOTS:
			r = parse_range(cli, "--boots", optarg, 1, MAX_BOOTS, &boots, err);
			break;
		case OPT_MAX_BOOTS:
			r = parse_range(cli, "--max-boots", optarg, 1, MAX_BOOTS, &max_boots, err);
			break;
		case OPT_WAIT:
			wait = 1;
			break;
		case OPT_TIMEOUT:
			timeout_set = 1;
			r = parse_range(cli, "--timeout", optarg, 1, WAIT_MAX_TIMEOUT, &timeout, err);
			break;
		case OPT_TREE:
			tree = optarg;
			r = check_name(cli, "--tree", tree, err);
			break;
		case OPT_BASE:
			base = optarg;
			r = check_ref(cli, "--base", base, err);
			break;
		case OPT_PATCH:
			if (!(r = set_source(cli, &src, "--patch", err)))
				src.file = optarg;
			break;
		case OPT_BRANCH:
			r = parse_branch(cli, argc, argv, &src, err);
			break;
		case OPT_URL:
			if (!(r = set_source(cli, &src, "--url", err))) {
				src.url = optarg;
				r = check_url(cli, "--url", src.url, 0, err);
			}
			break;
		}
		if (r)
			goto out;
	}
	if ((r = no_args(cli, argc, argv, err)))
		goto out;
	if (!suite) {
		r = usage_error(cli, err, "--suite is required");
		goto out;
	}
	if (timeout_set && !wait) {
		r = usage_error(cli, err, "--timeout only makes sense with --wait");
		goto out;
	}
	if ((r = check_ab_options(cli, tree, base, &src, err)))
		goto out;
	/* last: the file is read only for a request that is otherwise sound */
	if (src.file && (r = read_patch(cli, src.file, &patch, err)))
		goto out;
	if (!submitter) {
		/* $USER is a convenience, not an input to refuse over */
		submitter = getenv("USER");
		if (!submitter || !client_valid_name(submitter))
			submitter = "unknown";
	}
	if ((r = cli_connect(cli, err)))
		goto out;

	body = json_pack("{ss}", "suite", suite);
	if (!body)
		abort();
	if (tree) {
		json_object_set_new(body, "tree", json_string(tree));
		json_object_set_new(body, "base", json_string(base));
		if (patch)
			json_object_set(body, "patch", patch);
		else if (src.ref)
			json_object_set_new(body, "branch", json_pack("{ssss}", "url", src.url,
								      "ref", src.ref));
		else
			json_object_set_new(body, "url", json_string(src.url));
	}
	if (boots)
		json_object_set_new(body, "boots", json_integer(boots));
	if (max_boots)
		json_object_set_new(body, "max_boots", json_integer(max_boots));
	if (machines)
		json_object_set(body, "machines", machines);
	if (tags)
		json_object_set(body, "tags", tags);
	json_object_set_new(body, "submitter", json_string(submitter));

	if (client_request(&cli->client, "POST", "/api/v1/jobs", body, &raw, &resp, err) < 0) {
		r = request_failed(cli, err);
		goto out;
	}
	job = json_object_get(resp, "job");
	if (jint(job, "id", &id) < 0) {
		strbuf_seterr(err, "the server accepted the job but did not say its id");
		r = EXIT_FAIL;
		goto out;
	}
	if (cli->json && !wait) {
		print_raw(&raw);
	} else {
		char clean[64];

		fprintf(cli->json ? stderr : stdout, "job %lld %s\n", id,
			fmt_clean(clean, sizeof(clean), jstr_or(job, "state", "queued")));
		fflush(cli->json ? stderr : stdout);
	}
	if (wait)
		r = wait_job(cli, id, timeout, err);
out:
	json_decref(machines);
	json_decref(tags);
	json_decref(patch);
	json_decref(body);
	json_decref(resp);
	strbuf_release(&raw);
	return r;
}

/* --- status --------------------------------------------------------------- */

static const char status_usage[] =
	"usage: tlblab status [--json] [--server URL] JOB\n"
	"\n"
	"The job's summary (an A/B job's verdict once it is done; the error of a\n"
	"failed job and whether it is a result of the patch, the suite or a lab\n"
	"problem; how many specs ran and failed) and a table of its stages: start\n"
	"time in local time, duration (so far, for a running stage), the error of\n"
	"a failed one. Then, per run stage, which specs ran, which failed or did\n"
	"not run, and why.\n"
	"\n"
	COMMON_HELP;

static int cmd_status(struct cli *cli, int argc, char **argv, struct strbuf *err)
{
	static const struct option opts[] = { COMMON_OPTIONS, { NULL, 0, NULL, 0 } };
	struct strbuf path = STRBUF_INIT, raw = STRBUF_INIT;
	json_t *root = NULL;
	const json_t *job;
	long long id;
	int c, r;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1)
		if ((r = common_option(cli, c, argv, status_usage, err)) > 0)
			return r;
	if ((r = parse_job_arg(cli, argc, argv, &id, err)))
		return r;
	strbuf_addf(&path, "/api/v1/jobs/%lld", id);
	if ((r = get_json(cli, path.buf, &raw, &root, err)))
		goto out;
	job = json_object_get(root, "job");
	if (cli->json) {
		print_raw(&raw);
	} else if (!json_is_object(job)) {
		strbuf_seterr(err, "job %lld: the server's answer has no \"job\"", id);
		r = EXIT_FAIL;
	} else {
		status_print(stdout, id, job);
	}
out:
	json_decref(root);
	strbuf_release(&raw);
	strbuf_release(&path);
	return r;
}

/* --- jobs ----------------------------------------------------------------- */

static const char jobs_usage[] =
	"usage: tlblab jobs [--state S] [--suite S] [--submitter S] [--limit N]\n"
	"                   [--offset N] [--json] [--server URL]\n"
	"\n"
	"Jobs, newest first.\n"
	"\n"
	"  --state S       queued, running, done, failed or cancelled\n"
	"  --suite S       only jobs of this suite\n"
	"  --submitter S   only jobs of this submitter\n"
	"  --limit N       at most N jobs (1..500, server default 50)\n"
	"  --offset N      skip the N newest\n"
	COMMON_HELP;

static int cmd_jobs(struct cli *cli, int argc, char **argv, struct strbuf *err)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, OPT_STATE },
		{ "suite", required_argument, NULL, OPT_SUITE },
		{ "submitter", required_argument, NULL, OPT_SUBMITTER },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "offset", required_argument, NULL, OPT_OFFSET },
		COMMON_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	static const char *const states[] = { "queued", "running", "done", "failed", "cancelled" };
	static const char *const heads[] = {
		"ID", "STATE", "SUITE", "SUBMITTER", "MACHINES", "STAGE", "CREATED", "DURATION",
		"VERDICT", "ERROR",
	};
	const char *state = NULL, *suite = NULL, *submitter = NULL, *limit = NULL, *offset = NULL;
	struct strbuf path = STRBUF_INIT, raw = STRBUF_INIT;
	json_t *root = NULL, *jobs, *job;
	struct table tab;
	long n;
	size_t i;
	int c, r = 0;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if ((r = common_option(cli, c, argv, jobs_usage, err)) > 0)
			return r;
		r = 0;
		switch (c) {
		case OPT_STATE:
			state = optarg;
			for (i = 0; i < ARRAY_SIZE(states); i++)
				if (!strcmp(state, states[i]))
					break;
			if (i == ARRAY_SIZE(states))
				r = usage_error(cli, err, "--state: '%s' is not one of queued, "
						"running, done, failed, cancelled", state);
			break;
		case OPT_SUITE:
			suite = optarg;
			r = check_name(cli, "--suite", suite, err);
			break;
		case OPT_SUBMITTER:
			submitter = optarg;
			r = check_name(cli, "--submitter", submitter, err);
			break;
		case OPT_LIMIT:
			limit = optarg;
			r = parse_range(cli, "--limit", limit, 1, MAX_LIST_LIMIT, &n, err);
			break;
		case OPT_OFFSET:
			offset = optarg;
			r = parse_range(cli, "--offset", offset, 0, LONG_MAX, &n, err);
			break;
		}
		if (r)
			return r;
	}
	if ((r = no_args(cli, argc, argv, err)) || (r = cli_connect(cli, err)))
		return r;

	strbuf_addstr(&path, "/api/v1/jobs");
	if (state)
		client_add_query(&cli->client, &path, "state", state);
	if (suite)
		client_add_query(&cli->client, &path, "suite", suite);
	if (submitter)
		client_add_query(&cli->client, &path, "submitter", submitter);
	if (limit)
		client_add_query(&cli->client, &path, "limit", limit);
	if (offset)
		client_add_query(&cli->client, &path, "offset", offset);
	if ((r = get_json(cli, path.buf, &raw, &root, err)))
		goto out;
	if (cli->json) {
		print_raw(&raw);
		goto out;
	}
	jobs = json_object_get(root, "jobs");
	if (!json_is_array(jobs)) {
		strbuf_seterr(err, "the server's answer has no list of jobs");
		r = EXIT_FAIL;
		goto out;
	}
	if (!json_array_size(jobs)) {
		printf("no jobs\n");
		goto out;
	}
	table_init(&tab, ARRAY_SIZE(heads), heads, "rllllllrll");
	json_array_foreach(jobs, i, job) {
		char id[FMT_SIZE], created[FMT_SIZE], dur[FMT_SIZE];
		struct strbuf machines = STRBUF_INIT, stxt = STRBUF_INIT;
		const json_t *e = json_object_get(job, "error");

		join_strings(&machines, json_object_get(job, "machines"), ",");
		job_state_text(&stxt, job);
		{
			const char *row[] = {
				fmt_id(id, job, "id"), stxt.buf, jstr(job, "suite"),
				jstr(job, "submitter"), machines.buf, jstr(job, "stage"),
				fmt_time(created, job, "created"), fmt_span(dur, job),
				jstr(job, "verdict"), json_is_object(e) ? jstr(e, "class") : NULL,
			};

			table_add_row(&tab, row);
		}
		strbuf_release(&machines);
		strbuf_release(&stxt);
	}
	table_print(&tab, stdout, NULL);
	{
		long long total, off = 0;

		jint(root, "offset", &off);
		if (jint(root, "total", &total) == 0 && total > (long long)tab.nrows)
			printf("(jobs %lld-%lld of %lld; --offset pages)\n", off + 1,
			       off + (long long)tab.nrows, total);
	}
	table_release(&tab);
out:
	json_decref(root);
	strbuf_release(&raw);
	strbuf_release(&path);
	return r;
}

/* --- cancel --------------------------------------------------------------- */

static const char cancel_usage[] =
	"usage: tlblab cancel [--json] [--server URL] JOB\n"
	"\n"
	"Cancels a queued or running job (needs $TLBLAB_TOKEN). A job that has\n"
	"already finished cannot be cancelled: the server answers 409.\n"
	"\n"
	COMMON_HELP;

static int cmd_cancel(struct cli *cli, int argc, char **argv, struct strbuf *err)
{
	static const struct option opts[] = { COMMON_OPTIONS, { NULL, 0, NULL, 0 } };
	struct strbuf path = STRBUF_INIT, raw = STRBUF_INIT;
	json_t *root = NULL;
	long long id;
	int c, r;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1)
		if ((r = common_option(cli, c, argv, cancel_usage, err)) > 0)
			return r;
	if ((r = parse_job_arg(cli, argc, argv, &id, err)) || (r = cli_connect(cli, err)))
		return r;
	strbuf_addf(&path, "/api/v1/jobs/%lld/cancel", id);
	if (client_request(&cli->client, "POST", path.buf, NULL, &raw, &root, err) < 0) {
		r = request_failed(cli, err);
		goto out;
	}
	if (cli->json) {
		print_raw(&raw);
	} else {
		const json_t *job = json_object_get(root, "job");
		struct strbuf state = STRBUF_INIT;
		char clean[128];

		/* a queued job is cancelled at once; a running one when the
		 * scheduler stops its stage */
		job_state_text(&state, job);
		printf("job %lld: %s\n", id, fmt_clean(clean, sizeof(clean), state.buf));
		if (!job_is_final(jstr(job, "state")))
			printf("(its running stage is being stopped; `tlblab status %lld` follows it)\n", id);
		strbuf_release(&state);
	}
out:
	json_decref(root);
	strbuf_release(&raw);
	strbuf_release(&path);
	return r;
}

/* --- machines ------------------------------------------------------------- */

static const char machines_usage[] =
	"usage: tlblab machines [--json] [--server URL]\n"
	"\n"
	"The lab's machines: how they are reached and booted, their health, the\n"
	"job holding them and the kernel they last booted.\n"
	"\n"
	COMMON_HELP;

static int cmd_machines(struct cli *cli, int argc, char **argv, struct strbuf *err)
{
	static const struct option opts[] = { COMMON_OPTIONS, { NULL, 0, NULL, 0 } };
	static const char *const heads[] = {
		"NAME", "TRANSPORT", "HOST", "BOOT", "HEALTH", "LEASED_BY", "KERNEL", "TAGS",
	};
	struct strbuf raw = STRBUF_INIT;
	json_t *root = NULL, *list, *m;
	struct table tab;
	size_t i;
	int c, r;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1)
		if ((r = common_option(cli, c, argv, machines_usage, err)) > 0)
			return r;
	if ((r = no_args(cli, argc, argv, err)))
		return r;
	if ((r = get_json(cli, "/api/v1/machines", &raw, &root, err)))
		goto out;
	if (cli->json) {
		print_raw(&raw);
		goto out;
	}
	list = json_object_get(root, "machines");
	if (!json_is_array(list)) {
		strbuf_seterr(err, "the server's answer has no list of machines");
		r = EXIT_FAIL;
		goto out;
	}
	if (!json_array_size(list)) {
		printf("no machines\n");
		goto out;
	}
	table_init(&tab, ARRAY_SIZE(heads), heads, "llllllll");
	json_array_foreach(list, i, m) {
		char lease[FMT_SIZE];
		struct strbuf tags = STRBUF_INIT, health = STRBUF_INIT;

		join_strings(&tags, json_object_get(m, "tags"), ",");
		strbuf_addstr(&health, jstr_or(m, "health", ""));
		if (jstr(m, "health_reason") && *jstr(m, "health_reason") &&
		    strcmp(health.buf, "good"))
			strbuf_addf(&health, " (%s)", jstr(m, "health_reason"));
		{
			const char *row[] = {
				jstr(m, "name"), jstr(m, "transport"), jstr(m, "host"),
				jstr(m, "boot"), health.buf, fmt_id(lease, m, "leased_by"),
				jstr(m, "kernel"), tags.buf,
			};

			table_add_row(&tab, row);
		}
		strbuf_release(&tags);
		strbuf_release(&health);
	}
	table_print(&tab, stdout, NULL);
	table_release(&tab);
out:
	json_decref(root);
	strbuf_release(&raw);
	return r;
}

/* --- version and dispatch ------------------------------------------------- */

static const char version_usage[] =
	"usage: tlblab version\n"
	"\n"
	"Prints the client's version.\n";

static int cmd_version(struct cli *cli, int argc, char **argv, struct strbuf *err)
{
	static const struct option opts[] = { COMMON_OPTIONS, { NULL, 0, NULL, 0 } };
	int c, r;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1)
		if ((r = common_option(cli, c, argv, version_usage, err)) > 0)
			return r;
	if ((r = no_args(cli, argc, argv, err)))
		return r;
	printf("tlblab %s\n", TLBLAB_VERSION);
	return 0;
}

static const struct command commands[] = {
	{ "submit", cmd_submit, submit_usage },
	{ "status", cmd_status, status_usage },
	{ "jobs", cmd_jobs, jobs_usage },
	{ "cancel", cmd_cancel, cancel_usage },
	{ "machines", cmd_machines, machines_usage },
	{ "results", cmd_results, results_usage },
	{ "compare", cmd_compare, compare_usage },
	{ "version", cmd_version, version_usage },
};

static const struct command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "version", no_argument, NULL, OPT_VERSION },
		COMMON_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct cli cli = { 0 };
	struct strbuf err = STRBUF_INIT;
	const struct command *cmd;
	int c, r = 0;

	opterr = 0;
	cli.command = "tlblab";
	cli.server = getenv("TLBLAB_SERVER");
	if (!cli.server || !*cli.server)
		cli.server = DEFAULT_SERVER;

	/* options before the command; '+' stops at the command's name */
	while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		if (c == OPT_VERSION) {
			printf("tlblab %s\n", TLBLAB_VERSION);
			goto out;
		}
		if ((r = common_option(&cli, c, argv, main_usage, &err)) > 0)
			goto out;
		r = 0;
	}
	if (optind >= argc) {
		fputs(main_usage, stderr);
		r = EXIT_USAGE;
		goto out;
	}
	cmd = find_command(argv[optind]);
	if (!cmd) {
		strbuf_seterr(&err, "unknown command '%s' (see `tlblab --help`)", argv[optind]);
		r = EXIT_USAGE;
		goto out;
	}
	cli.command = cmd->name;
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		strbuf_seterr(&err, "cannot initialise libcurl");
		r = EXIT_FAIL;
		goto out;
	}
	argc -= optind;
	argv += optind;
	optind = 0;	/* glibc: start a fresh scan of the command's own argv */
	r = cmd->run(&cli, argc, argv, &err);
	client_release(&cli.client);
	curl_global_cleanup();
out:
	if (r == HELP_SHOWN)
		r = 0;
	if (fflush(stdout) && !r) {
		strbuf_seterr(&err, "cannot write the output");
		r = EXIT_FAIL;
	}
	if (r && err.len)
		fprintf(stderr, "tlblab: %s\n", err.buf);
	strbuf_release(&err);
	return r;
}
