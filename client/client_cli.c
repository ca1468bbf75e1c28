#include "client_cli.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "banned.h"

int cli_usage_error(struct cli *cli, struct strbuf *err, const char *fmt, ...)
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

int cli_common_option(struct cli *cli, int c, char **argv, const char *usage,
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
		return cli_usage_error(cli, err, "option '%s' needs a value", argv[optind - 1]);
	case '?':
		return cli_usage_error(cli, err, "unknown option '%s'", argv[optind - 1]);
	}
	return 0;
}

int cli_job_arg(struct cli *cli, int argc, char **argv, long long *ret,
		struct strbuf *err)
{
	uint64_t id;

	if (optind >= argc)
		return cli_usage_error(cli, err, "which job? give its id");
	if (optind + 1 < argc)
		return cli_usage_error(cli, err, "unexpected argument '%s'", argv[optind + 1]);
	if (parse_u64(argv[optind], &id) < 0 || !id || id > LLONG_MAX)
		return cli_usage_error(cli, err, "'%s' is not a job id (a positive integer)",
				       argv[optind]);
	*ret = (long long)id;
	return 0;
}

int cli_no_args(struct cli *cli, int argc, char **argv, struct strbuf *err)
{
	if (optind < argc)
		return cli_usage_error(cli, err, "unexpected argument '%s'", argv[optind]);
	return 0;
}

int cli_check_name(struct cli *cli, const char *option, const char *value,
		   struct strbuf *err)
{
	char clean[80];

	if (client_valid_name(value))
		return 0;
	if (!*value)
		return cli_usage_error(cli, err, "%s: empty name", option);
	return cli_usage_error(cli, err, "%s: invalid name '%s': names are 1 to 64 of "
			       "A-Z a-z 0-9 . _ - and do not start with '-' or '.'",
			       option, client_fmt_clean(clean, sizeof(clean), value));
}


int cli_parse_range(struct cli *cli, const char *option, const char *value,
		    long min, long max, long *ret, struct strbuf *err)
{
	if (parse_int_range(value, min, max, ret) < 0)
		return cli_usage_error(cli, err, "%s: '%s' is not a number from %ld to %ld",
				       option, value, min, max);
	return 0;
}

int cli_connect(struct cli *cli, struct strbuf *err)
{
	if (cli->connected)
		return 0;
	if (client_init(&cli->client, cli->server, getenv("TLBLAB_TOKEN"), err) < 0)
		return EXIT_USAGE;
	cli->connected = 1;
	return 0;
}

/* Exit status for a failed client_request(), whose message is in err. */
int cli_request_failed(const struct cli *cli, struct strbuf *err)
{
	if (cli->client.last_status == 401 && !cli->client.token)
		strbuf_addstr(err, " (TLBLAB_TOKEN is not set)");
	return cli->client.last_error == CLIENT_ERR_NET ? EXIT_UNREACHABLE : EXIT_FAIL;
}

void cli_print_raw(const struct strbuf *raw)
{
	fwrite(raw->buf, 1, raw->len, stdout);
	if (!raw->len || raw->buf[raw->len - 1] != '\n')
		fputc('\n', stdout);
}

int cli_get_json(struct cli *cli, const char *path, struct strbuf *raw,
		 json_t **ret, struct strbuf *err)
{
	int r = cli_connect(cli, err);

	if (r)
		return r;
	if (client_request(&cli->client, "GET", path, NULL, raw, ret, err) < 0)
		return cli_request_failed(cli, err);
	return 0;
}

int cli_show(struct cli *cli, const char *path, void (*one)(const json_t *), const struct cli_list *l,
	     struct strbuf *err)
{
	struct strbuf raw = STRBUF_INIT;
	json_t *root = NULL, *list, *item;
	struct table tab;
	size_t i;
	int r;

	if ((r = cli_get_json(cli, path, &raw, &root, err)))
		goto out;
	if (cli->json) {
		cli_print_raw(&raw);
		goto out;
	}
	if (one) {
		one(root);
		goto out;
	}
	list = json_object_get(root, l->key);
	if (!json_is_array(list)) {
		strbuf_seterr(err, "the server's answer has no list of %s", l->key);
		r = EXIT_FAIL;
		goto out;
	}
	if (!json_array_size(list)) {
		printf("%s\n", l->empty);
		goto out;
	}
	client_table_init(&tab, l->ncols, l->heads, l->align);
	json_array_foreach(list, i, item)
		l->row(&tab, item);
	client_table_print(&tab, stdout, NULL);
	client_table_release(&tab);
out:
	json_decref(root);
	strbuf_release(&raw);
	return r;
}

int cli_show_results(struct cli *cli, long long id, int all, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT;
	json_t *runs = NULL, *metrics = NULL;
	int r;

	strbuf_addf(&path, "/api/v1/jobs/%lld/runs", id);
	r = cli_get_json(cli, path.buf, NULL, &runs, err);
	if (r)
		goto out;
	strbuf_reset(&path);
	strbuf_addf(&path, "/api/v1/jobs/%lld/metrics", id);
	r = cli_get_json(cli, path.buf, NULL, &metrics, err);
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
	if (client_results_print(stdout, runs, metrics, all, err) < 0) {
		strbuf_addf(err, " (job %lld)", id);
		r = EXIT_FAIL;
	}
out:
	json_decref(runs);
	json_decref(metrics);
	strbuf_release(&path);
	return r;
}


int cli_job_id(struct cli *cli, const char *option, const char *value, long long *ret,
	       struct strbuf *err)
{
	uint64_t id;
	char clean[64];

	if (parse_u64(value, &id) < 0 || !id || id > LLONG_MAX)
		return cli_usage_error(cli, err, "%s: '%s' is not a job id (a positive integer)", option,
				       client_fmt_clean(clean, sizeof(clean), value));
	*ret = (long long)id;
	return 0;
}

/* The text as sent, but for bytes that would drive a terminal: a report
 * has only newlines and printable text. */
void cli_print_text(const struct strbuf *text)
{
	size_t i;

	for (i = 0; i < text->len; i++) {
		unsigned char c = (unsigned char)text->buf[i];

		putchar(c == '\n' || (c >= ' ' && c != 0x7f) ? c : '?');
	}
	if (!text->len || text->buf[text->len - 1] != '\n')
		putchar('\n');
}
