/*
 * tlblab: the command-line client of tlblabd (API in api.h).
 *
 * Each command parses its own options, validates everything it can before
 * sending a request (a refused name never reaches the server), talks to the
 * server through client.h and prints a table, or with --json the server's
 * JSON as it came. Commands return an exit status and leave the message in
 * err; main prints it, once, as "tlblab: ...". This file holds main and the
 * commands that read (status, jobs, results, compare, machines) or cancel;
 * submit is client_submit.c, report client_report.c, what they share
 * client_cli.c.
 *
 * Exit status: 0 success (for `submit --wait`: the job ended done), 1 the
 * server refused or the job failed, was cancelled or did not finish in
 * time, 2 usage or validation error, 3 the server could not be reached.
 */
#include "client_cli.h"

#include <curl/curl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "version.h"
#include "banned.h"

#define MAX_LIST_LIMIT 500
#define MAX_LIST_OFFSET 1000000000L	/* the API's bounds */

struct command {
	const char *name;
	int (*run)(struct cli *cli, int argc, char **argv, struct strbuf *err);
};

static const char main_usage[] =
	"usage: tlblab [--server URL] COMMAND [OPTIONS]\n"
	"\n"
	"commands:\n"
	"  submit    queue a job (--wait follows it to the end)\n"
	"  status    show a job, its stages and what became of its specs\n"
	"  jobs      list jobs\n"
	"  cancel    cancel a job\n"
	"  machines  list the lab's machines\n"
	"  results   show a job's measured metrics\n"
	"  compare   compare base and patched: verdicts, sweeps, TLB, profiles\n"
	"  report    an A/B job's report, 72 columns, to paste into a mail\n"
	"  tracks    nightly tracks (`tracks run NAME` runs one now)\n"
	"  series    a track's series and their change points\n"
	"  alerts    change points grouped per commit, and their triage\n"
	"  bisect    find the commit that changed a metric (`bisect ID` reports one)\n"
	"  bisections  bisections, their steps and results\n"
	"  deliveries  webhook deliveries and their attempts\n"
	"  version   print the client's version\n"
	"\n"
	"common options:\n"
	"  --server URL   tlblabd's address (default $TLBLAB_SERVER, else " DEFAULT_SERVER ")\n"
	"  --json         print the server's JSON instead of a table\n"
	"  -h, --help     help; `tlblab COMMAND --help` for a command\n"
	"\n"
	"The token for creating and cancelling jobs is read from $TLBLAB_TOKEN.\n"
	"Exit status: 0 ok, 1 refused or job failed, 2 usage error, 3 server unreachable.\n";

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
		if ((r = cli_common_option(cli, c, argv, results_usage, err)) > 0)
			return r;
		if (!r && c == OPT_ALL)
			all = 1;
	}
	if ((r = cli_job_arg(cli, argc, argv, &id, err)))
		return r;
	return cli_show_results(cli, id, all, err);
}

/* --- compare -------------------------------------------------------------- */

static const char compare_usage[] =
	"usage: tlblab compare [--all] [--json] [--server URL] JOB\n"
	"       tlblab compare --base JOB_A --patched JOB_B [--all] [--json] [--server URL]\n"
	"       tlblab compare --per-patch [--json] [--server URL] JOB\n"
	"\n"
	"Compares the base and patched sides of an A/B job, or two jobs that ran\n"
	"the same suite. Each side's sample is one value per boot (the median of\n"
	"its measured iterations); p is a two-sided Mann-Whitney U test, CI the\n"
	"bootstrap 95% interval of the change of medians. Verdicts: regression or\n"
	"improvement (p adjusted by Holm over headline rows, Benjamini-Hochberg\n"
	"over counters, below 0.01; CI excludes 0; change at least 2% for\n"
	"headline metrics and 5% for counters), changed (a neutral metric moved),\n"
	"same (the equivalence interval within +-10% by default), inconclusive,\n"
	"unavailable. docs/statistics.md says why.\n"
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
	"  --per-patch     JOB is one of a per-patch series (submit --per-patch):\n"
	"                  per headline row, the step each patch made (its prefix\n"
	"                  against the one before) and which patches moved it\n"
	COMMON_HELP;

/*
 * The last line, the one a script or a mail quotes: the job's verdict, or
 * the comparison's own for two jobs compared (job NULL). A job that failed
 * or still runs has none: its rows cover only the specs that ran so far.
 */
static void print_verdict(const json_t *cmp, const json_t *job)
{
	const char *v = jsonget_str(cmp, "verdict"), *state = jsonget_str(job, "state");
	char clean[64];

	if (state && client_job_is_final(state) && strcmp(state, "done"))
		printf("\nverdict: none (the job %s)\n", !strcmp(state, "failed") ? "failed" : "was cancelled");
	else if (state && !client_job_is_final(state))
		printf("\nverdict: none yet (the job is %s)\n", client_fmt_clean(clean, sizeof(clean), state));
	else if ((v = jsonget_str(job, "verdict") ?: v))
		printf("\nverdict: %s\n", client_fmt_clean(clean, sizeof(clean), v));
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
	state = jsonget_str(job, "state");
	if (state && strcmp(state, "done")) {
		client_job_outcome(&outcome, job);
		if (!json_array_size(json_object_get(cmp, "rows")) && client_job_is_final(state)) {
			strbuf_seterr(err, "job %lld: nothing to compare: no spec ran on both sides "
				      "before the job ended (%s); `tlblab status %lld` shows its stages",
				      id, outcome.buf, id);
			r = EXIT_FAIL;
			goto out;
		}
		printf("job %lld: %s\n", id, outcome.buf);
		printf("(the rows compare what ran on both sides %s)\n\n",
		       client_job_is_final(state) ? "before the job ended" : "so far");
	}
	if (client_compare_print(stdout, cmp, all, err) < 0) {
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
		{ "per-patch", no_argument, NULL, OPT_PER_PATCH },
		COMMON_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct strbuf path = STRBUF_INIT, raw = STRBUF_INIT;
	long long id = 0, base = 0, patched = 0;
	json_t *root = NULL, *cmp;
	int c, r, all = 0, per_patch = 0;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if ((r = cli_common_option(cli, c, argv, compare_usage, err)) > 0)
			return r;
		r = 0;
		if (c == OPT_ALL)
			all = 1;
		else if (c == OPT_PER_PATCH)
			per_patch = 1;
		else if (c == OPT_BASE)
			r = cli_job_id(cli, "--base", optarg, &base, err);
		else if (c == OPT_PATCHED)
			r = cli_job_id(cli, "--patched", optarg, &patched, err);
		if (r)
			return r;
	}
	if (per_patch && (base || patched || all))
		return cli_usage_error(cli, err, "--per-patch takes one JOB, without --base, --patched or --all");
	if (base || patched) {
		if (!base || !patched)
			return cli_usage_error(cli, err, "--base and --patched go together");
		if ((r = cli_no_args(cli, argc, argv, err)))
			return cli_usage_error(cli, err, "give either JOB or --base and --patched, not both");
		strbuf_addf(&path, "/api/v1/compare?base=%lld&patched=%lld", base, patched);
	} else {
		if ((r = cli_job_arg(cli, argc, argv, &id, err)))
			return r;
		strbuf_addf(&path, "/api/v1/jobs/%lld/%s", id, per_patch ? "per-patch" : "comparison");
	}
	if ((r = cli_get_json(cli, path.buf, &raw, &root, err))) {
		/* 409: not an A/B job; the API's hint names its URL, not the command */
		if (id && cli->client.last_status == 409)
			strbuf_addstr(err, " (two jobs: tlblab compare --base A --patched B)");
		goto out;
	}
	if (cli->json) {
		cli_print_raw(&raw);
		goto out;
	}
	if (per_patch) {
		if (client_per_patch_print(stdout, json_object_get(root, "per_patch"), err) < 0)
			r = EXIT_FAIL;
		goto out;
	}
	/* the API wraps the document (api.h): {"comparison": {...}} */
	cmp = json_object_get(root, "comparison");
	if (!json_is_object(cmp)) {
		strbuf_seterr(err, "the server's answer has no \"comparison\"");
		r = EXIT_FAIL;
	} else if (id) {
		r = print_job_comparison(cli, id, cmp, all, err);
	} else if (client_compare_print(stdout, cmp, all, err) < 0) {
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
		if ((r = cli_common_option(cli, c, argv, status_usage, err)) > 0)
			return r;
	if ((r = cli_job_arg(cli, argc, argv, &id, err)))
		return r;
	strbuf_addf(&path, "/api/v1/jobs/%lld", id);
	if ((r = cli_get_json(cli, path.buf, &raw, &root, err)))
		goto out;
	job = json_object_get(root, "job");
	if (cli->json) {
		cli_print_raw(&raw);
	} else if (!json_is_object(job)) {
		strbuf_seterr(err, "job %lld: the server's answer has no \"job\"", id);
		r = EXIT_FAIL;
	} else {
		client_status_print(stdout, id, job);
	}
out:
	json_decref(root);
	strbuf_release(&raw);
	strbuf_release(&path);
	return r;
}

/* --- jobs ----------------------------------------------------------------- */

static const char jobs_usage[] =
	"usage: tlblab jobs [--state S] [--suite S] [--submitter S] [--tree T] [--verdict V]\n"
	"                   [--limit N] [--offset N] [--json] [--server URL]\n"
	"\n"
	"Jobs, newest first, with an A/B job's verdict once it is done.\n"
	"\n"
	"  --state S       queued, running, done, failed or cancelled\n"
	"  --suite S       only jobs of this suite\n"
	"  --submitter S   only jobs of this submitter\n"
	"  --tree T        only A/B jobs of this kernel tree\n"
	"  --verdict V     only A/B jobs with this verdict: regression, improvement,\n"
	"                  changed, inconclusive, same or unavailable\n"
	"  --limit N       at most N jobs (1..500, server default 50)\n"
	"  --offset N      skip the N newest\n"
	COMMON_HELP;

/* value is one of the n words; else EXIT_USAGE listing them */
static int one_of(struct cli *cli, const char *option, const char *value,
		  const char *const *words, size_t n, struct strbuf *err)
{
	struct strbuf list = STRBUF_INIT;
	size_t i;
	int r;

	for (i = 0; i < n; i++)
		if (!strcmp(value, words[i]))
			return 0;
	for (i = 0; i < n; i++)
		strbuf_addf(&list, "%s%s", i ? ", " : "", words[i]);
	r = cli_usage_error(cli, err, "%s: '%s' is not one of %s", option, value, list.buf);
	strbuf_release(&list);
	return r;
}

static int cmd_jobs(struct cli *cli, int argc, char **argv, struct strbuf *err)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, OPT_STATE },
		{ "suite", required_argument, NULL, OPT_SUITE },
		{ "submitter", required_argument, NULL, OPT_SUBMITTER },
		{ "tree", required_argument, NULL, OPT_TREE },
		{ "verdict", required_argument, NULL, OPT_VERDICT },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "offset", required_argument, NULL, OPT_OFFSET },
		COMMON_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	static const char *const states[] = { "queued", "running", "done", "failed", "cancelled" };
	static const char *const verdicts[] = {
		"regression", "improvement", "changed", "inconclusive", "same", "unavailable",
	};
	static const char *const heads[] = {
		"ID", "STATE", "SUITE", "SUBMITTER", "MACHINES", "STAGE", "CREATED", "DURATION",
		"VERDICT", "ERROR",
	};
	const char *state = NULL, *suite = NULL, *submitter = NULL, *limit = NULL, *offset = NULL;
	const char *tree = NULL, *verdict = NULL;
	struct strbuf path = STRBUF_INIT, raw = STRBUF_INIT;
	json_t *root = NULL, *jobs, *job;
	struct table tab;
	long n;
	size_t i;
	int c, r = 0;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if ((r = cli_common_option(cli, c, argv, jobs_usage, err)) > 0)
			return r;
		r = 0;
		switch (c) {
		case OPT_STATE:
			state = optarg;
			r = one_of(cli, "--state", state, states, ARRAY_SIZE(states), err);
			break;
		case OPT_VERDICT:
			verdict = optarg;
			r = one_of(cli, "--verdict", verdict, verdicts, ARRAY_SIZE(verdicts), err);
			break;
		case OPT_TREE:
			tree = optarg;
			r = cli_check_name(cli, "--tree", tree, err);
			break;
		case OPT_SUITE:
			suite = optarg;
			r = cli_check_name(cli, "--suite", suite, err);
			break;
		case OPT_SUBMITTER:
			submitter = optarg;
			r = cli_check_name(cli, "--submitter", submitter, err);
			break;
		case OPT_LIMIT:
			limit = optarg;
			r = cli_parse_range(cli, "--limit", limit, 1, MAX_LIST_LIMIT, &n, err);
			break;
		case OPT_OFFSET:
			offset = optarg;
			r = cli_parse_range(cli, "--offset", offset, 0, MAX_LIST_OFFSET, &n, err);
			break;
		}
		if (r)
			return r;
	}
	if ((r = cli_no_args(cli, argc, argv, err)) || (r = cli_connect(cli, err)))
		return r;

	strbuf_addstr(&path, "/api/v1/jobs");
	if (state)
		client_add_query(&cli->client, &path, "state", state);
	if (suite)
		client_add_query(&cli->client, &path, "suite", suite);
	if (submitter)
		client_add_query(&cli->client, &path, "submitter", submitter);
	if (tree)
		client_add_query(&cli->client, &path, "tree", tree);
	if (verdict)
		client_add_query(&cli->client, &path, "verdict", verdict);
	if (limit)
		client_add_query(&cli->client, &path, "limit", limit);
	if (offset)
		client_add_query(&cli->client, &path, "offset", offset);
	if ((r = cli_get_json(cli, path.buf, &raw, &root, err)))
		goto out;
	if (cli->json) {
		cli_print_raw(&raw);
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
	client_table_init(&tab, ARRAY_SIZE(heads), heads, "rllllllrll");
	json_array_foreach(jobs, i, job) {
		char id[FMT_SIZE], created[FMT_SIZE], dur[FMT_SIZE];
		struct strbuf machines = STRBUF_INIT, stxt = STRBUF_INIT;
		const json_t *e = json_object_get(job, "error");

		client_join_strings(&machines, json_object_get(job, "machines"), ",");
		client_job_state_text(&stxt, job);
		{
			const char *row[] = {
				client_fmt_id(id, job, "id"), stxt.buf, jsonget_str(job, "suite"),
				jsonget_str(job, "submitter"), machines.buf, jsonget_str(job, "stage"),
				client_fmt_time(created, job, "created"), client_fmt_span(dur, job),
				jsonget_str(job, "verdict"), json_is_object(e) ? jsonget_str(e, "class") : NULL,
			};

			client_table_add_row(&tab, row);
		}
		strbuf_release(&machines);
		strbuf_release(&stxt);
	}
	client_table_print(&tab, stdout, NULL);
	{
		long long total, off = 0;

		jsonget_int(root, "offset", &off);
		if (jsonget_int(root, "total", &total) == 0 && total > (long long)tab.nrows)
			printf("(jobs %lld-%lld of %lld; --offset pages)\n", off + 1,
			       off + (long long)tab.nrows, total);
	}
	client_table_release(&tab);
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
		if ((r = cli_common_option(cli, c, argv, cancel_usage, err)) > 0)
			return r;
	if ((r = cli_job_arg(cli, argc, argv, &id, err)) || (r = cli_connect(cli, err)))
		return r;
	strbuf_addf(&path, "/api/v1/jobs/%lld/cancel", id);
	if (client_request(&cli->client, "POST", path.buf, NULL, &raw, &root, err) < 0) {
		r = cli_request_failed(cli, err);
		goto out;
	}
	if (cli->json) {
		cli_print_raw(&raw);
	} else {
		const json_t *job = json_object_get(root, "job");
		struct strbuf state = STRBUF_INIT;
		char clean[128];

		/* a queued job is cancelled at once; a running one when the
		 * scheduler stops its stage */
		client_job_state_text(&state, job);
		printf("job %lld: %s\n", id, client_fmt_clean(clean, sizeof(clean), state.buf));
		if (!client_job_is_final(jsonget_str(job, "state")))
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

static void machine_row(struct table *tab, const json_t *m)
{
	char lease[FMT_SIZE];
	struct strbuf tags = STRBUF_INIT, health = STRBUF_INIT;

	client_join_strings(&tags, json_object_get(m, "tags"), ",");
	strbuf_addstr(&health, client_jstr_or(m, "health", ""));
	if (jsonget_str(m, "health_reason") && *jsonget_str(m, "health_reason") &&
	    strcmp(health.buf, "good"))
		strbuf_addf(&health, " (%s)", jsonget_str(m, "health_reason"));
	{
		const char *row[] = {
			jsonget_str(m, "name"), jsonget_str(m, "transport"), jsonget_str(m, "host"),
			jsonget_str(m, "boot"), health.buf, client_fmt_id(lease, m, "leased_by"),
			jsonget_str(m, "kernel"), tags.buf,
		};

		client_table_add_row(tab, row);
	}
	strbuf_release(&tags);
	strbuf_release(&health);
}

static int cmd_machines(struct cli *cli, int argc, char **argv, struct strbuf *err)
{
	static const struct option opts[] = { COMMON_OPTIONS, { NULL, 0, NULL, 0 } };
	static const char *const heads[] = {
		"NAME", "TRANSPORT", "HOST", "BOOT", "HEALTH", "LEASED_BY", "KERNEL", "TAGS",
	};
	static const struct cli_list view = {
		"machines", heads, ARRAY_SIZE(heads), "llllllll", machine_row, "no machines",
	};
	int c, r;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1)
		if ((r = cli_common_option(cli, c, argv, machines_usage, err)) > 0)
			return r;
	if ((r = cli_no_args(cli, argc, argv, err)))
		return r;
	return cli_show(cli, "/api/v1/machines", NULL, &view, err);
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
		if ((r = cli_common_option(cli, c, argv, version_usage, err)) > 0)
			return r;
	if ((r = cli_no_args(cli, argc, argv, err)))
		return r;
	printf("tlblab %s\n", TLBLAB_VERSION);
	return 0;
}

static const struct command commands[] = {
	{ "submit", cmd_submit },
	{ "status", cmd_status },
	{ "jobs", cmd_jobs },
	{ "cancel", cmd_cancel },
	{ "machines", cmd_machines },
	{ "results", cmd_results },
	{ "compare", cmd_compare },
	{ "report", cmd_report },
	{ "tracks", cmd_tracks },
	{ "series", cmd_series },
	{ "alerts", cmd_alerts },
	{ "deliveries", cmd_deliveries },
	{ "bisect", cmd_bisect },
	{ "bisections", cmd_bisections },
	{ "version", cmd_version },
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
		if ((r = cli_common_option(&cli, c, argv, main_usage, &err)) > 0)
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
