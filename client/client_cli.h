#ifndef TLBLAB_CLIENT_CLI_H
#define TLBLAB_CLIENT_CLI_H

#include <getopt.h>

#include "client.h"

/*
 * What the commands of `tlblab` share (client_cli.c): the command line's
 * state, the options every command takes, the wording of usage errors,
 * and the way a request's failure becomes an exit status. One file per
 * command or group of commands (tlblab.c, client_submit.c) uses them;
 * main() in tlblab.c picks the command from its table.
 *
 * A command returns an exit status and leaves the message in err; main
 * prints it, once, as "tlblab: ...".
 */

#define DEFAULT_SERVER "http://127.0.0.1:8080"

enum {
	EXIT_FAIL = 1,
	EXIT_USAGE = 2,
	EXIT_UNREACHABLE = 3,
	/* not an exit status: a command stopped after printing its help,
	 * which main turns into 0 */
	HELP_SHOWN = 256,
};

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
	OPT_VERDICT,
	OPT_ARCH,
	OPT_MBOX,
	OPT_PER_PATCH,
};

struct cli {
	const char *server;	/* from --server, $TLBLAB_SERVER or the default */
	int json;
	const char *command;
	struct client client;
	int connected;
};

#define COMMON_HELP \
	"  --server URL   tlblabd's address (default $TLBLAB_SERVER, else " DEFAULT_SERVER ")\n" \
	"  --json         print the server's JSON instead of a table\n"

#define COMMON_OPTIONS \
	{ "server", required_argument, NULL, OPT_SERVER }, \
	{ "json", no_argument, NULL, OPT_JSON }, \
	{ "help", no_argument, NULL, 'h' }

/* "COMMAND: MESSAGE (see `tlblab COMMAND --help`)" into err; EXIT_USAGE. */
int cli_usage_error(struct cli *cli, struct strbuf *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * The options every command shares, and getopt's complaints. Returns -1
 * when c was one of them and was handled, 0 when the command should handle
 * c itself, or HELP_SHOWN, or an exit status with a usage error in err.
 */
int cli_common_option(struct cli *cli, int c, char **argv, const char *usage,
		      struct strbuf *err);
/* The one JOB argument left after the options, into *ret; or EXIT_USAGE. */
int cli_job_arg(struct cli *cli, int argc, char **argv, long long *ret, struct strbuf *err);
/* A job id given to option; or EXIT_USAGE naming the option. */
int cli_job_id(struct cli *cli, const char *option, const char *value, long long *ret,
	       struct strbuf *err);
/* EXIT_USAGE when arguments are left after the options, else 0. */
int cli_no_args(struct cli *cli, int argc, char **argv, struct strbuf *err);
/* A name as the API takes it (client_valid_name), or EXIT_USAGE. */
int cli_check_name(struct cli *cli, const char *option, const char *value,
		   struct strbuf *err);
/* An integer from min to max, or EXIT_USAGE. */
int cli_parse_range(struct cli *cli, const char *option, const char *value,
		    long min, long max, long *ret, struct strbuf *err);
/* Prepares cli->client once: 0, or EXIT_USAGE for a bad --server. */
int cli_connect(struct cli *cli, struct strbuf *err);
/* The exit status of a failed client_request(), whose message is in err
 * (EXIT_UNREACHABLE when the server did not answer, else EXIT_FAIL). */
int cli_request_failed(const struct cli *cli, struct strbuf *err);
/* The server's answer as it came, newline-terminated, for --json. */
void cli_print_raw(const struct strbuf *raw);
/* Text as the server sent it (a report), newline-terminated, with bytes
 * that would drive a terminal shown as '?'. */
void cli_print_text(const struct strbuf *text);
/* GET path; 0 with the body in raw (may be NULL) and *ret, or an exit
 * status with err. */
int cli_get_json(struct cli *cli, const char *path, struct strbuf *raw,
		 json_t **ret, struct strbuf *err);
/*
 * What a listing command shows of the answer to a GET: the list `key`, a
 * row of the table (heads, align as client_table_init takes them) per
 * element by row(), or `empty` when the list is empty.
 */
struct cli_list {
	const char *key;
	const char *const *heads;
	size_t ncols;
	const char *align;
	void (*row)(struct table *t, const json_t *item);
	const char *empty;
};
/* GET path and show it: as the server sent it with --json; else by one()
 * when it is not NULL (a single object), else as the list l. 0 or an exit
 * status with err. */
int cli_show(struct cli *cli, const char *path, void (*one)(const json_t *), const struct cli_list *l,
	     struct strbuf *err);
/* The `tlblab results` view of job id (--json: both lists as sent);
 * shared by results and submit --wait. 0 or an exit status. */
int cli_show_results(struct cli *cli, long long id, int all, struct strbuf *err);

/* client_submit.c */
int cmd_submit(struct cli *cli, int argc, char **argv, struct strbuf *err);
/* client_report.c */
int cmd_report(struct cli *cli, int argc, char **argv, struct strbuf *err);
/* client_tracks.c: nightly tracking */
int cmd_tracks(struct cli *cli, int argc, char **argv, struct strbuf *err);
int cmd_series(struct cli *cli, int argc, char **argv, struct strbuf *err);
int cmd_alerts(struct cli *cli, int argc, char **argv, struct strbuf *err);
int cmd_deliveries(struct cli *cli, int argc, char **argv, struct strbuf *err);
/* client_bisect.c */
int cmd_bisect(struct cli *cli, int argc, char **argv, struct strbuf *err);
int cmd_bisections(struct cli *cli, int argc, char **argv, struct strbuf *err);

#endif
