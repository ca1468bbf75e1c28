/*
 * The client's bisections: `tlblab bisect TREE GOOD BAD ...` starts one
 * (POST /api/v1/bisections), `tlblab bisect ID` prints its report as the
 * daemon writes it (GET .../report.txt, the text the webhook carries),
 * `--cancel` stops it, and `tlblab bisections` lists them. Arguments are
 * checked here before anything is sent; the daemon checks them again
 * against the lab.
 */
#include "client_cli.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "util.h"
#include "banned.h"

static const char bisect_usage[] =
	"usage: tlblab bisect [--json] [--server URL] TREE GOOD BAD --suite S --metric M\n"
	"                     [--machine NAME] [--workload W] [--boots N]\n"
	"       tlblab bisect [--json] [--server URL] ID [--cancel]\n"
	"\n"
	"Finds the first commit after GOOD up to BAD whose METRIC is like BAD's.\n"
	"The daemon measures both ends (a run job each: build, boots, the suite),\n"
	"checks that the A/B rule tells them apart (more boots when it cannot yet),\n"
	"then measures the commit in the middle of what is left, compares it with\n"
	"both ends by the same rule, and goes on: a commit that does not build or\n"
	"boot is skipped, one that stays between the two is measured again. It ends\n"
	"with the first bad commit and the evidence of each step, or the range it\n"
	"could not narrow and why. Starting one needs $TLBLAB_TOKEN.\n"
	"With ID, the bisection's report: what it found (or is doing, and the steps\n"
	"and time left), each step's two verdicts, and how to reproduce it.\n"
	"\n"
	"  --suite S       the suite each step runs\n"
	"  --metric M      the metric to chase, e.g. interrupts.TLB\n"
	"  --machine NAME  where the steps run (default: the lab's first machine)\n"
	"  --workload W    the workload whose METRIC is chased (default: the one\n"
	"                  whose METRIC moved most between the ends)\n"
	"  --boots N       boots a step (1..20, default 2)\n"
	"  --cancel        stop bisection ID and its steps' jobs\n"
	COMMON_HELP;

/* The report of bisection id, as the daemon writes it. */
static int show(struct cli *cli, long long id, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;
	int r;

	if ((r = cli_connect(cli, err)))
		return r;
	if (cli->json) {
		strbuf_addf(&path, "/api/v1/bisections/%lld", id);
		r = cli_show(cli, path.buf, NULL, NULL, err);
	} else {
		strbuf_addf(&path, "/api/v1/bisections/%lld/report.txt", id);
		if (client_request(&cli->client, "GET", path.buf, NULL, &text, NULL, err) < 0)
			r = cli_request_failed(cli, err);
		else
			cli_print_text(&text);
	}
	strbuf_release(&path);
	strbuf_release(&text);
	return r;
}

static int post(struct cli *cli, const char *path, json_t *body, struct strbuf *err)
{
	struct strbuf raw = STRBUF_INIT;
	json_t *root = NULL;
	const json_t *b;
	int r;

	if ((r = cli_connect(cli, err)))
		goto out;
	if (client_request(&cli->client, "POST", path, body, &raw, &root, err) < 0) {
		r = cli_request_failed(cli, err);
		goto out;
	}
	b = json_object_get(root, "bisection") ?: root;
	if (cli->json)
		cli_print_raw(&raw);
	else
		printf("bisection %lld: %s, %s..%s in %s on %s (`tlblab bisect %lld` shows it)\n",
		       jsonget_int_or(b, "id", 0), client_jstr_or(b, "state", "?"),
		       client_jstr_or(b, "good", "?"), client_jstr_or(b, "bad", "?"), client_jstr_or(b, "metric", "?"),
		       client_jstr_or(b, "machine", "?"), jsonget_int_or(b, "id", 0));
out:
	json_decref(root);
	strbuf_release(&raw);
	return r;
}

int cmd_bisect(struct cli *cli, int argc, char **argv, struct strbuf *err)
{
	enum { OPT_METRIC = 0x300, OPT_MACHINE, OPT_WORKLOAD, OPT_CANCEL };
	static const struct option opts[] = {
		COMMON_OPTIONS,
		{ "suite", required_argument, NULL, OPT_SUITE },
		{ "metric", required_argument, NULL, OPT_METRIC },
		{ "machine", required_argument, NULL, OPT_MACHINE },
		{ "workload", required_argument, NULL, OPT_WORKLOAD },
		{ "boots", required_argument, NULL, OPT_BOOTS },
		{ "cancel", no_argument, NULL, OPT_CANCEL },
		{ NULL, 0, NULL, 0 }
	};
	const char *suite = NULL, *metric = NULL, *machine = NULL, *workload = NULL;
	long boots = 0;
	int c, r, cancel = 0;
	long long id;
	json_t *body;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if ((r = cli_common_option(cli, c, argv, bisect_usage, err)) > 0)
			return r;
		if (r < 0)
			continue;
		if (c == OPT_BOOTS && (r = cli_parse_range(cli, "--boots", optarg, 1, 20, &boots, err)))
			return r;
		if ((c == OPT_SUITE || c == OPT_MACHINE || c == OPT_WORKLOAD) &&
		    (r = cli_check_name(cli, c == OPT_SUITE ? "--suite" : c == OPT_MACHINE ? "--machine" : "--workload",
					optarg, err)))
			return r;
		if (c == OPT_SUITE)
			suite = optarg;
		else if (c == OPT_METRIC)
			metric = optarg;
		else if (c == OPT_MACHINE)
			machine = optarg;
		else if (c == OPT_WORKLOAD)
			workload = optarg;
		else if (c == OPT_CANCEL)
			cancel = 1;
	}
	if (argc - optind == 1) {
		struct strbuf path = STRBUF_INIT;

		if ((r = cli_job_arg(cli, argc, argv, &id, err)))
			return r;
		if (suite || metric || machine || workload || boots)
			return cli_usage_error(cli, err, "with an ID, only --cancel, --json and --server");
		if (!cancel)
			return show(cli, id, err);
		strbuf_addf(&path, "/api/v1/bisections/%lld/cancel", id);
		r = post(cli, path.buf, NULL, err);
		strbuf_release(&path);
		return r;
	}
	if (cancel)
		return cli_usage_error(cli, err, "--cancel needs a bisection ID");
	if (argc - optind != 3)
		return cli_usage_error(cli, err, "give TREE GOOD BAD (or a bisection ID)");
	if ((r = cli_check_name(cli, "TREE", argv[optind], err)))
		return r;
	if (!ref_valid(argv[optind + 1]) || !ref_valid(argv[optind + 2]))
		return cli_usage_error(cli, err, "GOOD and BAD must be git refs or commit ids: '%s', '%s'",
				       argv[optind + 1], argv[optind + 2]);
	if (!suite || !metric)
		return cli_usage_error(cli, err, "--suite and --metric are required");
	body = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s*,s:s*,s:s*}", "tree", argv[optind], "good", argv[optind + 1], "bad",
			 argv[optind + 2], "suite", suite, "metric", metric, "machine", machine, "workload", workload,
			 "submitter", getenv("USER") && client_valid_name(getenv("USER")) ? getenv("USER") : NULL);
	if (boots)
		json_object_set_new(body, "boots", json_integer(boots));
	r = post(cli, "/api/v1/bisections", body, err);
	json_decref(body);
	return r;
}

static const char bisections_usage[] =
	"usage: tlblab bisections [--json] [--server URL] [--alert ID] [--limit N]\n"
	"\n"
	"Bisections, newest first: the range and the metric, their state, the\n"
	"steps measured and left, and the first bad commit or what they do now.\n"
	"\n"
	"  --alert ID     the bisections of one alert\n"
	"  --limit N      at most N (1..500, default 50)\n"
	COMMON_HELP;

static void bisection_row(struct table *tab, const json_t *b)
{
	char bid[FMT_SIZE], steps[FMT_SIZE], left[FMT_SIZE], range[48];
	const char *what = jsonget_str(b, "result") ?: client_jstr_or(b, "status", "-");

	snprintf(range, sizeof(range), "%.12s..%.12s", client_jstr_or(b, "good", "?"), client_jstr_or(b, "bad", "?"));
	{
		const char *row[] = {
			client_fmt_id(bid, b, "id"), jsonget_str(b, "state"), jsonget_str(b, "tree"), range,
			jsonget_str(b, "metric"), client_fmt_id(steps, b, "steps_measured"),
			client_fmt_id(left, b, "steps_left"), what,
		};

		client_table_add_row(tab, row);
	}
}

int cmd_bisections(struct cli *cli, int argc, char **argv, struct strbuf *err)
{
	enum { OPT_ALERT = 0x300 };
	static const struct option opts[] = {
		COMMON_OPTIONS, { "alert", required_argument, NULL, OPT_ALERT },
		{ "limit", required_argument, NULL, OPT_LIMIT }, { NULL, 0, NULL, 0 }
	};
	static const char *const heads[] = { "ID", "STATE", "TREE", "RANGE", "METRIC", "STEPS", "LEFT", "RESULT" };
	static const struct cli_list view = {
		"bisections", heads, ARRAY_SIZE(heads), "rlllrrrl", bisection_row,
		"no bisections (`tlblab bisect` starts one; a track's confirmed regression does too)",
	};
	struct strbuf path = STRBUF_INIT;
	long limit = 50, alert = 0;
	int c, r;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if ((r = cli_common_option(cli, c, argv, bisections_usage, err)) > 0)
			return r;
		if (r == 0 && c == OPT_LIMIT && (r = cli_parse_range(cli, "--limit", optarg, 1, 500, &limit, err)))
			return r;
		if (r == 0 && c == OPT_ALERT &&
		    (r = cli_parse_range(cli, "--alert", optarg, 1, INT64_MAX / 2, &alert, err)))
			return r;
	}
	if ((r = cli_no_args(cli, argc, argv, err)))
		return r;
	strbuf_addf(&path, "/api/v1/bisections?limit=%ld&alert=%ld", limit, alert);
	r = cli_show(cli, path.buf, NULL, &view, err);
	strbuf_release(&path);
	return r;
}
