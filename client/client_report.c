/*
 * `tlblab report JOB`: the report of a finished A/B job, as the daemon
 * writes it (GET /api/v1/jobs/ID/report.txt, daemon/report/report.h). The client
 * adds nothing, so what it prints and what the URL serves are the same
 * text; it only keeps control characters a daemon should not have sent
 * away from the terminal.
 */
#include "client_cli.h"

#include <stdio.h>
#include <string.h>

#include "util.h"
#include "banned.h"

static const char report_usage[] =
	"usage: tlblab report [--server URL] JOB\n"
	"\n"
	"The report of a finished A/B job, to paste into a mail: plain text of\n"
	"at most 72 columns, in the manner of the 0-day robot's reports. What was\n"
	"compared (the patch's subject and source, the base, the tree), the\n"
	"verdict; machines, kernels and boots; the headline metrics (base and\n"
	"patched medians +- spread, %change, p, verdict, and for an inconclusive\n"
	"row the change it rules out and the change it could have seen); the\n"
	"other metrics that moved; TLB shootdowns per second; the profile lines\n"
	"that moved; what failed; the commands to reproduce it. The same text as\n"
	"GET /api/v1/jobs/JOB/report.txt.\n"
	"\n"
	"  --server URL   tlblabd's address (default $TLBLAB_SERVER, else " DEFAULT_SERVER ")\n";

int cmd_report(struct cli *cli, int argc, char **argv, struct strbuf *err)
{
	static const struct option opts[] = {
		{ "server", required_argument, NULL, OPT_SERVER },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;
	long long id;
	int c, r;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1)
		if ((r = cli_common_option(cli, c, argv, report_usage, err)) > 0)
			return r;
	if ((r = cli_job_arg(cli, argc, argv, &id, err)) || (r = cli_connect(cli, err)))
		return r;
	strbuf_addf(&path, "/api/v1/jobs/%lld/report.txt", id);
	if (client_request(&cli->client, "GET", path.buf, NULL, &text, NULL, err) < 0) {
		r = cli_request_failed(cli, err);
		/* 409: not an A/B job, or not finished; the daemon says which */
		if (cli->client.last_status == 409)
			strbuf_addf(err, " (`tlblab status %lld` shows the job)", id);
	} else {
		cli_print_text(&text);
	}
	strbuf_release(&path);
	strbuf_release(&text);
	return r;
}
