/*
 * The client's commands for nightly tracking: tracks (and running one
 * now), series, alerts and their triage, webhook deliveries. Each is one
 * GET (or POST) of the API's tracking routes (api.h), shown as a table or,
 * with --json, as the server sent it.
 */
#include "client_cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "util.h"
#include "banned.h"

/* --- tracks and track run -------------------------------------------------- */

static const char tracks_usage[] =
	"usage: tlblab tracks [--json] [--server URL]\n"
	"       tlblab tracks run NAME [--server URL]\n"
	"\n"
	"The lab's nightly tracks: the branch each follows, its schedule, when it\n"
	"next runs, the head it last found and what it did, its points and its\n"
	"open alerts. `tracks run NAME` asks the daemon to run the track now\n"
	"(needs $TLBLAB_TOKEN): a new head gets a point and a run job per machine.\n"
	"\n"
	COMMON_HELP;

static int track_run(struct cli *cli, const char *name, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT, raw = STRBUF_INIT;
	json_t *root = NULL;
	int r;

	if ((r = cli_check_name(cli, "NAME", name, err)) || (r = cli_connect(cli, err)))
		goto out;
	strbuf_addf(&path, "/api/v1/tracks/%s/run", name);
	if (client_request(&cli->client, "POST", path.buf, NULL, &raw, &root, err) < 0) {
		r = cli_request_failed(cli, err);
		goto out;
	}
	if (cli->json)
		cli_print_raw(&raw);
	else
		printf("track %s: asked to run now (`tlblab tracks` shows what it found)\n", name);
out:
	json_decref(root);
	strbuf_release(&raw);
	strbuf_release(&path);
	return r;
}

static void track_row(struct table *tab, const json_t *t)
{
	const json_t *cf = json_object_get(t, "config");
	char next[FMT_SIZE], points[FMT_SIZE], alerts[FMT_SIZE], head[16];
	struct strbuf branch = STRBUF_INIT;

	strbuf_addstr(&branch, client_jstr_or(cf, "branch", "-"));
	if (jsonget_str(cf, "url"))
		strbuf_addf(&branch, " of %s", jsonget_str(cf, "url"));
	snprintf(head, sizeof(head), "%.12s", client_jstr_or(t, "last_head", "-"));
	{
		const char *row[] = {
			jsonget_str(t, "name"), branch.buf, client_jstr_or(cf, "schedule", "(not configured)"),
			client_fmt_time(next, t, "next_due"), head, client_fmt_id(points, t, "points"),
			client_fmt_id(alerts, t, "alerts_open"), client_jstr_or(t, "last_result", "-"),
		};

		client_table_add_row(tab, row);
	}
	strbuf_release(&branch);
}

int cmd_tracks(struct cli *cli, int argc, char **argv, struct strbuf *err)
{
	static const struct option opts[] = { COMMON_OPTIONS, { NULL, 0, NULL, 0 } };
	static const char *const heads[] = {
		"NAME", "BRANCH", "SCHEDULE", "NEXT", "HEAD", "POINTS", "ALERTS", "LAST RESULT",
	};
	static const struct cli_list view = {
		"tracks", heads, ARRAY_SIZE(heads), "llllrrrl", track_row,
		"no tracks (a tracks: section in the lab's configuration makes one)",
	};
	int c, r;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1)
		if ((r = cli_common_option(cli, c, argv, tracks_usage, err)) > 0)
			return r;
	if (optind < argc && !strcmp(argv[optind], "run")) {
		if (argc - optind != 2)
			return cli_usage_error(cli, err, "tracks run takes one NAME");
		return track_run(cli, argv[optind + 1], err);
	}
	if ((r = cli_no_args(cli, argc, argv, err)))
		return r;
	return cli_show(cli, "/api/v1/tracks", NULL, &view, err);
}

/* --- series ------------------------------------------------------------- */

static const char series_usage[] =
	"usage: tlblab series [--json] [--server URL] TRACK\n"
	"       tlblab series [--json] [--server URL] --id N\n"
	"\n"
	"A track's series, one per machine, workload, parameters and metric, with\n"
	"their points and change points; with --id, one series point by point\n"
	"(commit, value over the point's boots, their range) and its change points.\n"
	"\n"
	"  --id N     one series\n"
	COMMON_HELP;

static void print_series_values(const json_t *s)
{
	static const char *const heads[] = { "POINT", "COMMIT", "VALUE", "LOW", "HIGH", "BOOTS", "SUBJECT" };
	const json_t *v, *cp;
	struct table tab;
	size_t i;

	printf("series %lld: %s on %s, %s", jsonget_int_or(s, "id", 0),
	       client_jstr_or(s, "metric", "?"), client_jstr_or(s, "machine", "?"),
	       client_jstr_or(s, "workload", "?"));
	{
		struct strbuf p = STRBUF_INIT;
		char clean[256];

		client_add_params(&p, json_object_get(s, "params"), NULL);
		printf(" %s (%s is better)\n", client_fmt_clean(clean, sizeof(clean), p.buf),
		       client_jstr_or(s, "direction", "neither"));
		strbuf_release(&p);
	}
	client_table_init(&tab, ARRAY_SIZE(heads), heads, "rlrrrrl");
	json_array_foreach(json_object_get(s, "values"), i, v) {
		char point[FMT_SIZE], val[FMT_SIZE], lo[FMT_SIZE], hi[FMT_SIZE], boots[FMT_SIZE], commit[16];
		const char *row[] = {
			client_fmt_id(point, v, "point"), commit,
			client_fmt_number(val, jsonget_num_or(v, "value", 0)),
			client_fmt_number(lo, jsonget_num_or(v, "lo", 0)),
			client_fmt_number(hi, jsonget_num_or(v, "hi", 0)),
			client_fmt_id(boots, v, "boots"), client_jstr_or(v, "subject", "-"),
		};

		snprintf(commit, sizeof(commit), "%.12s", client_jstr_or(v, "commit", "-"));
		client_table_add_row(&tab, row);
	}
	client_table_print(&tab, stdout, "  ");
	client_table_release(&tab);
	json_array_foreach(json_object_get(s, "change_points"), i, cp) {
		char before[FMT_SIZE], after[FMT_SIZE];

		printf("change point at %.12s: %s -> %s (%+.1f%%, p %.2g), %s, %s, alert %lld\n",
		       client_jstr_or(cp, "commit", "?"),
		       client_fmt_number(before, jsonget_num_or(cp, "before", 0)),
		       client_fmt_number(after, jsonget_num_or(cp, "after", 0)),
		       100 * jsonget_num_or(cp, "magnitude", 0),
		       jsonget_num_or(cp, "p", 0), client_jstr_or(cp, "direction", "?"),
		       client_jstr_or(cp, "status", "?"), jsonget_int_or(cp, "alert", 0));
	}
}

static void series_row(struct table *tab, const json_t *s)
{
	char sid[FMT_SIZE], points[FMT_SIZE], changes[FMT_SIZE];
	struct strbuf p = STRBUF_INIT;

	client_add_params(&p, json_object_get(s, "params"), NULL);
	{
		const char *row[] = {
			client_fmt_id(sid, s, "id"), jsonget_str(s, "machine"), jsonget_str(s, "workload"), p.buf,
			jsonget_str(s, "metric"), client_fmt_id(points, s, "points"),
			client_fmt_id(changes, s, "change_points"),
		};

		client_table_add_row(tab, row);
	}
	strbuf_release(&p);
}

int cmd_series(struct cli *cli, int argc, char **argv, struct strbuf *err)
{
	enum { OPT_ID = 0x300 };
	static const struct option opts[] = { COMMON_OPTIONS, { "id", required_argument, NULL, OPT_ID },
					      { NULL, 0, NULL, 0 } };
	static const char *const heads[] = { "ID", "MACHINE", "WORKLOAD", "PARAMETERS", "METRIC", "POINTS", "CHANGES" };
	static const struct cli_list view = {
		"series", heads, ARRAY_SIZE(heads), "rllllrr", series_row,
		"no series yet (a point makes them when its job is done)",
	};
	struct strbuf path = STRBUF_INIT;
	long id = 0;
	int c, r;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if ((r = cli_common_option(cli, c, argv, series_usage, err)) > 0)
			return r;
		if (r == 0 && c == OPT_ID && (r = cli_parse_range(cli, "--id", optarg, 1, INT64_MAX / 2, &id, err)))
			return r;
	}
	if (id) {
		if ((r = cli_no_args(cli, argc, argv, err)))
			return r;
		strbuf_addf(&path, "/api/v1/series/%ld", id);
	} else {
		if (argc - optind != 1)
			return cli_usage_error(cli, err, "give a TRACK or --id N");
		if ((r = cli_check_name(cli, "TRACK", argv[optind], err)))
			return r;
		strbuf_addf(&path, "/api/v1/tracks/%s/series", argv[optind]);
	}
	r = cli_show(cli, path.buf, id ? print_series_values : NULL, &view, err);
	strbuf_release(&path);
	return r;
}

/* --- alerts ------------------------------------------------------------- */

static const char alerts_usage[] =
	"usage: tlblab alerts [--json] [--server URL] [--track NAME] [--limit N]\n"
	"       tlblab alerts [--json] [--server URL] ID [--state STATE --by NAME]\n"
	"\n"
	"Alerts: the change points of one commit of a track, across its series,\n"
	"newest first; with ID, one alert and its change points. --state triages it\n"
	"(needs $TLBLAB_TOKEN): new, acknowledged, ignored, fixed, or intended (the\n"
	"change is wanted: the track's series start again from it).\n"
	"\n"
	"  --track NAME   one track's alerts\n"
	"  --limit N      at most N (1..500, default 50)\n"
	"  --state STATE  set the alert's triage state\n"
	"  --by NAME      who triages (default $USER)\n"
	COMMON_HELP;

static void print_alert(const json_t *a)
{
	const json_t *cp;
	size_t i;

	printf("alert %lld: track %s, %s at %.12s (%s), after %.12s\n",
	       jsonget_int_or(a, "id", 0), client_jstr_or(a, "track", "?"),
	       client_jstr_or(a, "kind", "?"), client_jstr_or(a, "bad_commit", "?"),
	       client_jstr_or(a, "subject", "-"), client_jstr_or(a, "good_commit", "-"));
	printf("state: %s%s%s\n", client_jstr_or(a, "state", "?"), jsonget_str(a, "state_by") ? " by " : "",
	       client_jstr_or(a, "state_by", ""));
	json_array_foreach(json_object_get(a, "change_points"), i, cp) {
		char before[FMT_SIZE], after[FMT_SIZE];
		struct strbuf p = STRBUF_INIT;

		client_add_params(&p, json_object_get(cp, "params"), NULL);
		printf("  %s %s %s on %s: %s -> %s (%+.1f%%, p %.2g) %s, %s\n", client_jstr_or(cp, "workload", "?"),
		       p.buf, client_jstr_or(cp, "metric", "?"), client_jstr_or(cp, "machine", "?"),
		       client_fmt_number(before, jsonget_num_or(cp, "before", 0)),
		       client_fmt_number(after, jsonget_num_or(cp, "after", 0)),
		       100 * jsonget_num_or(cp, "magnitude", 0),
		       jsonget_num_or(cp, "p", 0), client_jstr_or(cp, "direction", "?"),
		       client_jstr_or(cp, "status", "?"));
		strbuf_release(&p);
	}
}

static int alert_set_state(struct cli *cli, long long id, const char *state, const char *by, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT, raw = STRBUF_INIT;
	json_t *root = NULL, *body = json_pack("{s:s,s:s}", "state", state, "by", by);
	int r;

	if ((r = cli_connect(cli, err)))
		goto out;
	strbuf_addf(&path, "/api/v1/alerts/%lld/state", id);
	if (client_request(&cli->client, "POST", path.buf, body, &raw, &root, err) < 0) {
		r = cli_request_failed(cli, err);
		goto out;
	}
	if (cli->json)
		cli_print_raw(&raw);
	else
		print_alert(root);
out:
	json_decref(body);
	json_decref(root);
	strbuf_release(&raw);
	strbuf_release(&path);
	return r;
}

static void alert_row(struct table *tab, const json_t *a)
{
	char aid[FMT_SIZE], changes[FMT_SIZE], commit[16];
	const char *row[] = {
		client_fmt_id(aid, a, "id"), jsonget_str(a, "track"), jsonget_str(a, "kind"), jsonget_str(a, "state"),
		commit, client_fmt_id(changes, a, "change_points"), client_jstr_or(a, "subject", "-"),
	};

	snprintf(commit, sizeof(commit), "%.12s", client_jstr_or(a, "bad_commit", "-"));
	client_table_add_row(tab, row);
}

int cmd_alerts(struct cli *cli, int argc, char **argv, struct strbuf *err)
{
	enum { OPT_TRACK = 0x300, OPT_BY };
	static const struct option opts[] = {
		COMMON_OPTIONS, { "track", required_argument, NULL, OPT_TRACK },
		{ "limit", required_argument, NULL, OPT_LIMIT }, { "state", required_argument, NULL, OPT_STATE },
		{ "by", required_argument, NULL, OPT_BY }, { NULL, 0, NULL, 0 }
	};
	static const char *const heads[] = { "ID", "TRACK", "KIND", "STATE", "COMMIT", "CHANGES", "SUBJECT" };
	static const struct cli_list view = { "alerts", heads, ARRAY_SIZE(heads), "rllllrl", alert_row, "no alerts" };
	const char *track = NULL, *state = NULL, *by = getenv("USER");
	struct strbuf path = STRBUF_INIT;
	long limit = 50;
	long long id = 0;
	int c, r;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if ((r = cli_common_option(cli, c, argv, alerts_usage, err)) > 0)
			return r;
		if (r < 0)
			continue;
		if (c == OPT_TRACK && (r = cli_check_name(cli, "--track", optarg, err)))
			return r;
		if (c == OPT_LIMIT && (r = cli_parse_range(cli, "--limit", optarg, 1, 500, &limit, err)))
			return r;
		if (c == OPT_BY && (r = cli_check_name(cli, "--by", optarg, err)))
			return r;
		if (c == OPT_TRACK)
			track = optarg;
		else if (c == OPT_STATE)
			state = optarg;
		else if (c == OPT_BY)
			by = optarg;
	}
	if (optind < argc && (r = cli_job_arg(cli, argc, argv, &id, err)))
		return r;
	if (state && !id)
		return cli_usage_error(cli, err, "--state needs an alert ID");
	if (state)
		return alert_set_state(cli, id, state, by && *by ? by : "unknown", err);
	if (id)
		strbuf_addf(&path, "/api/v1/alerts/%lld", id);
	else
		strbuf_addf(&path, "/api/v1/alerts?limit=%ld%s%s", limit, track ? "&track=" : "", track ? track : "");
	r = cli_show(cli, path.buf, id ? print_alert : NULL, &view, err);
	strbuf_release(&path);
	return r;
}

/* --- deliveries ------------------------------------------------------------ */

static const char deliveries_usage[] =
	"usage: tlblab deliveries [--json] [--server URL] [--limit N]\n"
	"\n"
	"Webhook deliveries, newest first: the event, the hook, whether it was\n"
	"delivered, how many attempts it took and the last answer or error.\n"
	"\n"
	"  --limit N      at most N (1..500, default 50)\n"
	COMMON_HELP;

static void delivery_row(struct table *tab, const json_t *d)
{
	char did[FMT_SIZE], attempts[FMT_SIZE], created[FMT_SIZE];
	struct strbuf last = STRBUF_INIT;

	if (jsonget_int_or(d, "last_status", 0))
		strbuf_addf(&last, "HTTP %lld", jsonget_int_or(d, "last_status", 0));
	if (jsonget_str(d, "last_error"))
		strbuf_addf(&last, "%s%s", last.len ? ": " : "", jsonget_str(d, "last_error"));
	{
		const char *row[] = {
			client_fmt_id(did, d, "id"), jsonget_str(d, "event"), jsonget_str(d, "hook"),
			jsonget_str(d, "state"),
			client_fmt_id(attempts, d, "attempts"), last.len ? last.buf : "-",
			client_fmt_time(created, d, "created"),
		};

		client_table_add_row(tab, row);
	}
	strbuf_release(&last);
}

int cmd_deliveries(struct cli *cli, int argc, char **argv, struct strbuf *err)
{
	static const struct option opts[] = {
		COMMON_OPTIONS, { "limit", required_argument, NULL, OPT_LIMIT }, { NULL, 0, NULL, 0 }
	};
	static const char *const heads[] = { "ID", "EVENT", "HOOK", "STATE", "ATTEMPTS", "LAST", "CREATED" };
	static const struct cli_list view = {
		"deliveries", heads, ARRAY_SIZE(heads), "rlllrll", delivery_row, "no deliveries",
	};
	struct strbuf path = STRBUF_INIT;
	long limit = 50;
	int c, r;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if ((r = cli_common_option(cli, c, argv, deliveries_usage, err)) > 0)
			return r;
		if (r == 0 && c == OPT_LIMIT && (r = cli_parse_range(cli, "--limit", optarg, 1, 500, &limit, err)))
			return r;
	}
	if ((r = cli_no_args(cli, argc, argv, err)))
		return r;
	strbuf_addf(&path, "/api/v1/deliveries?limit=%ld", limit);
	r = cli_show(cli, path.buf, NULL, &view, err);
	strbuf_release(&path);
	return r;
}
