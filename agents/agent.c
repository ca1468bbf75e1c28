/*
 * tlblab-agent: runs a workload spec on a lab machine, watches the kernel
 * while it runs, and prints the protocol's JSON lines (schemas/agent.schema.json).
 *
 *   tlblab-agent run --spec FILE|-          the daemon's way: a JSON spec
 *   tlblab-agent run --workload NAME [...]  by hand; --table for a summary
 *   tlblab-agent hello                      the host facts line only
 *   tlblab-agent version
 *
 * Exit status: 0 done, 1 a workload or the output failed, 2 bad input.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "facts.h"
#include "monitors/monitor.h"
#include "runner.h"
#include "spec.h"
#include "strbuf.h"
#include "util.h"
#include "version.h"
#include "workloads/workload.h"
#include "banned.h"

#define SPEC_MAX_BYTES (1u << 20)

/* The monitors a spec may name, from the catalog, for the help text. */
static void monitors_usage(FILE *f)
{
	char name[64];
	size_t i;

	fprintf(f, "monitors (* when a spec names none):\n");
	for (i = 0; i < monitor_ndefs; i++) {
		if (monitor_defs[i].flags & MONITOR_ALWAYS)
			continue;
		snprintf(name, sizeof(name), "%s%s", monitor_defs[i].name,
			 monitor_defs[i].flags & MONITOR_DEFAULT_ON ? "*" : "");
		fprintf(f, "  %-13s %s\n", name, monitor_defs[i].what);
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tlblab-agent run --spec FILE|-\n"
		"       tlblab-agent run --workload NAME [options] [--table] [-- COMMAND ARGS...]\n"
		"       tlblab-agent hello | version\n"
		"\n"
		"workloads: %s\n"
		"options (a comma-separated list makes a matrix of cases):\n"
		"  --mode threads|processes    --workers N[,N...]     --duration TIME\n"
		"  --iterations N              --warmup N             --interval TIME\n"
		"  --size BYTES                --rounds N             --grid XS|S|M|L|NXxNYxNZ\n"
		"  --vma one|per-round         fault-write's shape (one vma, or one per round)\n"
		"  --request-size BYTES        --response-size BYTES\n"
		"  --parser stress-ng|last-number|none                --timeout TIME\n"
		"  --monitors a,b | --no-monitors                     --profile\n"
		"  --neighbour WORKLOAD[:WORKERS[:MODE]]              --id TEXT\n"
		"  --table                     print a summary instead of JSON lines\n"
		"  --live-samples              write a window's samples as they are taken (by default\n"
		"                              they are held until it closes, out of its counts)\n"
		"BYTES: 4096, 64K, 8M, 1G (powers of 1024); TIME: seconds, or 500ms, 2s, 10m, 1h\n",
		workload_names());
	monitors_usage(f);
}

static int die_input(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "tlblab-agent: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	return 2;
}

/*
 * K_UNIT values (sizes, times) go into the spec as the text the user typed:
 * the spec parser reads "8M" and "2s" there, as it does in the daemon's
 * suites, so the command line has no unit parser and no messages of its own.
 */
enum kind { K_INT, K_UNIT, K_STR };

/* Adds opt's value to the spec: a scalar, or a list when it has commas. */
static int add_value(json_t *spec, const char *key, const char *opt, const char *arg, enum kind kind,
		     int list_ok)
{
	json_t *list = json_array();
	const char *p = arg;

	for (;;) {
		const char *comma = list_ok ? strchr(p, ',') : NULL;
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		char *item = strndup(p, n);
		json_t *v = NULL;
		uint64_t u;

		if (!item)
			abort();
		switch (kind) {
		case K_INT:
			if (parse_u64(item, &u) == 0 && u <= (uint64_t)INT64_MAX)
				v = json_integer((json_int_t)u);
			break;
		case K_UNIT:
		case K_STR:
			v = json_string(item);
			break;
		}
		if (!v) {
			fprintf(stderr, "tlblab-agent: %s: '%s' is not a %s\n", opt, item,
				kind == K_INT ? "whole number" : "valid string");
			free(item);
			json_decref(list);
			return -1;
		}
		free(item);
		json_array_append_new(list, v);
		if (!comma)
			break;
		p = comma + 1;
	}
	if (json_array_size(list) == 1)
		json_object_set(spec, key, json_array_get(list, 0));
	else
		json_object_set(spec, key, list);
	json_decref(list);
	return 0;
}

static int parse_neighbour(json_t *spec, const char *arg)
{
	char *copy = xstrdup(arg), *workers, *mode;
	json_t *n = json_object();
	uint64_t w;

	workers = strchr(copy, ':');
	if (workers)
		*workers++ = '\0';
	mode = workers ? strchr(workers, ':') : NULL;
	if (mode)
		*mode++ = '\0';
	json_object_set_new(n, "workload", json_string(copy));
	if (workers) {
		if (parse_u64(workers, &w) < 0 || w > 1u << 20) {
			fprintf(stderr, "tlblab-agent: --neighbour: '%s' is not a whole number of workers\n", workers);
			free(copy);
			json_decref(n);
			return -1;
		}
		json_object_set_new(n, "workers", json_integer((json_int_t)w));
	}
	if (mode)
		json_object_set_new(n, "mode", json_string(mode));
	json_object_set_new(spec, "neighbour", n);
	free(copy);
	return 0;
}

enum {
	O_SPEC = 256, O_WORKLOAD, O_MODE, O_WORKERS, O_DURATION, O_ITER, O_WARMUP, O_INTERVAL,
	O_SIZE, O_ROUNDS, O_GRID, O_REQ, O_RESP, O_PARSER, O_TIMEOUT, O_MONITORS, O_NOMON,
	O_PROFILE, O_NEIGHBOUR, O_TABLE, O_ID, O_HELP, O_VMA, O_LIVE,
};

static const struct option longopts[] = {
	{ "spec", required_argument, NULL, O_SPEC },
	{ "workload", required_argument, NULL, O_WORKLOAD },
	{ "mode", required_argument, NULL, O_MODE },
	{ "workers", required_argument, NULL, O_WORKERS },
	{ "duration", required_argument, NULL, O_DURATION },
	{ "iterations", required_argument, NULL, O_ITER },
	{ "warmup", required_argument, NULL, O_WARMUP },
	{ "interval", required_argument, NULL, O_INTERVAL },
	{ "size", required_argument, NULL, O_SIZE },
	{ "rounds", required_argument, NULL, O_ROUNDS },
	{ "vma", required_argument, NULL, O_VMA },
	{ "grid", required_argument, NULL, O_GRID },
	{ "request-size", required_argument, NULL, O_REQ },
	{ "response-size", required_argument, NULL, O_RESP },
	{ "parser", required_argument, NULL, O_PARSER },
	{ "timeout", required_argument, NULL, O_TIMEOUT },
	{ "monitors", required_argument, NULL, O_MONITORS },
	{ "no-monitors", no_argument, NULL, O_NOMON },
	{ "profile", no_argument, NULL, O_PROFILE },
	{ "live-samples", no_argument, NULL, O_LIVE },
	{ "neighbour", required_argument, NULL, O_NEIGHBOUR },
	{ "table", no_argument, NULL, O_TABLE },
	{ "id", required_argument, NULL, O_ID },
	{ "help", no_argument, NULL, O_HELP },
	{ NULL, 0, NULL, 0 },
};

static int read_spec(const char *path, struct strbuf *text)
{
	int r;

	if (!strcmp(path, "-"))
		r = strbuf_read_fd(text, 0, SPEC_MAX_BYTES);
	else
		r = strbuf_read_file(text, path, SPEC_MAX_BYTES);
	if (r == -EFBIG)
		return die_input("spec %s: larger than 1 MiB%s", path, "");
	if (r < 0)
		return die_input("spec %s: %s", path, strerror(-r));
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	json_t *spec = json_object();
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	const char *spec_path = NULL, *broken;
	struct spec s;
	int table = 0, c, rc;

	/* the catalog's rows and this agent's code, bound by name: a row
	 * without its code, or code without its row, is a broken build */
	broken = monitor_registry_errors();
	if (!broken)
		broken = workload_impl_errors();
	if (broken) {
		json_decref(spec);
		fprintf(stderr, "tlblab-agent: this agent is built wrong: %s\n", broken);
		return 1;
	}
	opterr = 0;
	optind = 1;
	for (;;) {
		int li = -1, bad = 0;
		char opt[48];

		c = getopt_long(argc, argv, "+", longopts, &li);
		if (c == -1)
			break;
		snprintf(opt, sizeof(opt), "--%s", li >= 0 ? longopts[li].name : "?");

		switch (c) {
		case O_SPEC: spec_path = optarg; break;
		case O_WORKLOAD: json_object_set_new(spec, "workload", json_string(optarg)); break;
		case O_MODE: bad = add_value(spec, "mode", opt, optarg, K_STR, 1); break;
		case O_WORKERS: bad = add_value(spec, "workers", opt, optarg, K_INT, 1); break;
		case O_DURATION: bad = add_value(spec, "duration", opt, optarg, K_UNIT, 0); break;
		case O_ITER: bad = add_value(spec, "iterations", opt, optarg, K_INT, 0); break;
		case O_WARMUP: bad = add_value(spec, "warmup", opt, optarg, K_INT, 0); break;
		case O_INTERVAL: bad = add_value(spec, "interval", opt, optarg, K_UNIT, 0); break;
		case O_SIZE: bad = add_value(spec, "size", opt, optarg, K_UNIT, 1); break;
		case O_ROUNDS: bad = add_value(spec, "rounds", opt, optarg, K_INT, 1); break;
		case O_VMA: bad = add_value(spec, "vma", opt, optarg, K_STR, 1); break;
		case O_GRID: bad = add_value(spec, "grid", opt, optarg, K_STR, 1); break;
		case O_REQ: bad = add_value(spec, "request_size", opt, optarg, K_UNIT, 1); break;
		case O_RESP: bad = add_value(spec, "response_size", opt, optarg, K_UNIT, 1); break;
		case O_PARSER: bad = add_value(spec, "parser", opt, optarg, K_STR, 0); break;
		case O_TIMEOUT: bad = add_value(spec, "timeout", opt, optarg, K_UNIT, 0); break;
		case O_MONITORS: {
			json_t *tmp = json_object();

			bad = add_value(tmp, "m", opt, optarg, K_STR, 1);
			if (!bad) {
				json_t *m = json_object_get(tmp, "m");

				if (json_is_array(m))
					json_object_set(spec, "monitors", m);
				else
					json_object_set_new(spec, "monitors", json_pack("[O]", m));
			}
			json_decref(tmp);
			break;
		}
		case O_NOMON: json_object_set_new(spec, "monitors", json_array()); break;
		case O_PROFILE: json_object_set_new(spec, "profile", json_true()); break;
		case O_LIVE: json_object_set_new(spec, "live_samples", json_true()); break;
		case O_NEIGHBOUR: bad = parse_neighbour(spec, optarg); break;
		case O_TABLE: table = 1; break;
		case O_ID: json_object_set_new(spec, "id", json_string(optarg)); break;
		case O_HELP: usage(stdout); json_decref(spec); return 0;
		default:
			fprintf(stderr, "tlblab-agent: run: unknown or incomplete option '%s'\n",
				argv[optind - 1]);
			usage(stderr);
			json_decref(spec);
			return 2;
		}
		if (bad) {
			json_decref(spec);
			return 2;
		}
	}
	if (optind < argc) {
		json_t *cmd = json_array();
		int i;

		for (i = optind; i < argc; i++)
			json_array_append_new(cmd, json_string(argv[i]));
		json_object_set_new(spec, "command", cmd);
	}
	if (spec_path) {
		if (json_object_size(spec)) {
			json_decref(spec);
			return die_input("run: --spec takes the whole spec; give no other workload options%s%s", "", "");
		}
		json_decref(spec);
		if ((rc = read_spec(spec_path, &text)) != 0)
			return rc;
		rc = spec_parse(&s, text.buf, text.len, &err);
		strbuf_release(&text);
	} else {
		if (!json_object_get(spec, "workload")) {
			json_decref(spec);
			return die_input("run: give --spec FILE or --workload NAME (one of %s)%s", workload_names(), "");
		}
		rc = spec_from_json(&s, spec, &err);
		json_decref(spec);
	}
	if (rc < 0) {
		rc = die_input("spec: %s%s", err.buf, "");
		strbuf_release(&err);
		return rc;
	}
	strbuf_release(&err);
	rc = runner_run(&s, stdout, table);
	spec_release(&s);
	return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	/* a reader that goes away ends us through write errors, not a signal */
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "hello")) {
		json_t *h = facts_hello();
		char *line = json_dumps(h, JSON_COMPACT);

		puts(line);
		free(line);
		json_decref(h);
		return 0;
	}
	if (!strcmp(argv[1], "version")) {
		printf("tlblab-agent %s (protocol %d)\n", TLBLAB_VERSION, AGENT_PROTOCOL);
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "tlblab-agent: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
