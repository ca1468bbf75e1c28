/*
 * transport-cli: drives one transport from the shell, for
 * tests/integration/t0010-transport-ssh.sh. It fills a cfg_endpoint from
 * flags (no config file, so it does not depend on the config module):
 *
 *   transport-cli [--local] [--host H] [--port N] [--user U] [--identity F]
 *                 [--known-hosts F] [--host-key SHA256:...] [--connect-timeout S]
 *                 COMMAND ...
 *   COMMAND:
 *     open                              connect (and check keys), nothing more
 *     exec [--timeout S] [--stdin FILE] [--stderr FILE] [--lines]
 *          [--cancel-on-usr1] -- ARGV...
 *                                       remote stdout to stdout (--lines: one
 *                                       "line: ..." per on_line call), remote
 *                                       stderr to FILE or our stderr; SIGUSR1
 *                                       sets the cancel flag (exec_req.cancel)
 *     upload LOCAL REMOTE MODE          MODE in octal
 *     download REMOTE LOCAL MAX
 *
 * The last line on stderr is "transport-cli: status=N signal=S" after an
 * exec, or "transport-cli: error=ENAME infra=0|1: message" on a transport
 * error. Exit status: 0 when the transport call succeeded (whatever the
 * command's status), 2 on a transport error, 3 on bad usage.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "backend.h"
#include "transport.h"
#include "util.h"
#include "banned.h"

static volatile sig_atomic_t cancel_flag;

static void on_usr1(int sig)
{
	(void)sig;
	cancel_flag = 1;
}

static int usage(void)
{
	fprintf(stderr, "usage: transport-cli [endpoint flags] open|exec|upload|download ...\n");
	return 3;
}

static int print_line(void *arg, const char *line, size_t len, int truncated)
{
	(void)arg;
	printf("line%s: %.*s\n", truncated ? "(truncated)" : "", (int)len, line);
	fflush(stdout);		/* a test waits for a line while we run */
	return 0;
}

static int report_error(int r, const struct strbuf *err)
{
	const char *name = strerrorname_np(-r);

	fprintf(stderr, "transport-cli: error=%s infra=%d: %s\n", name ? name : "?",
		transport_error_is_infra(r), err->buf);
	return 2;
}

int main(int argc, char **argv)
{
	struct cfg_endpoint ep = { .transport = backend_find(BACKEND_TRANSPORT, "ssh"), .port = 22 };
	struct strbuf err = STRBUF_INIT, in = STRBUF_INIT;
	struct transport *t = NULL;
	double connect_timeout = 10;
	int i = 1, r, ret = 3;
	long v;

	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		const char *f = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(f, "--local")) {
			ep.transport = transport_here()->transport;
			continue;
		}
		if (!val)
			return usage();
		i++;
		if (!strcmp(f, "--host"))
			ep.host = (char *)val;
		else if (!strcmp(f, "--port") && !parse_int_range(val, 1, 65535, &v))
			ep.port = (int)v;
		else if (!strcmp(f, "--user"))
			ep.user = (char *)val;
		else if (!strcmp(f, "--identity"))
			ep.identity = (char *)val;
		else if (!strcmp(f, "--known-hosts"))
			ep.known_hosts = (char *)val;
		else if (!strcmp(f, "--host-key"))
			ep.host_key = (char *)val;
		else if (!strcmp(f, "--connect-timeout") && !parse_double(val, &connect_timeout))
			;
		else
			return usage();
	}
	if (i >= argc)
		return usage();

	r = transport_open(&ep, connect_timeout, &t, &err);
	if (r < 0) {
		ret = report_error(r, &err);
		goto out;
	}

	if (!strcmp(argv[i], "open")) {
		ret = 0;
	} else if (!strcmp(argv[i], "exec")) {
		struct exec_req req = { 0 };
		struct exec_result res;
		const char *errfile = NULL;
		FILE *ef;

		for (i++; i < argc && strcmp(argv[i], "--"); i++) {
			if (!strcmp(argv[i], "--lines")) {
				req.on_line = print_line;
			} else if (!strcmp(argv[i], "--cancel-on-usr1")) {
				struct sigaction sa = { .sa_handler = on_usr1 };

				sigaction(SIGUSR1, &sa, NULL);
				req.cancel = &cancel_flag;
			} else if (i + 1 < argc && !strcmp(argv[i], "--timeout")) {
				if (parse_double(argv[++i], &req.timeout))
					return usage();
			} else if (i + 1 < argc && !strcmp(argv[i], "--stdin")) {
				r = strbuf_read_file(&in, argv[++i], 256u << 20);
				if (r < 0) {
					fprintf(stderr, "transport-cli: %s: %s\n", argv[i], strerror(-r));
					goto out;
				}
				req.input = in.buf;
				req.input_len = in.len;
			} else if (i + 1 < argc && !strcmp(argv[i], "--stderr")) {
				errfile = argv[++i];
			} else {
				ret = usage();
				goto out;
			}
		}
		if (i + 1 >= argc) {
			ret = usage();
			goto out;
		}
		req.argv = (const char *const *)&argv[i + 1];
		req.max_output = 64u << 20;
		transport_exec_result_init(&res);
		r = transport_exec(t, &req, &res, &err);
		fwrite(res.out.buf, 1, res.out.len, stdout);
		fflush(stdout);
		ef = errfile ? fopen(errfile, "we") : stderr;
		if (ef) {
			fwrite(res.err.buf, 1, res.err.len, ef);
			if (ef != stderr)
				fclose(ef);
		}
		if (r < 0) {
			ret = report_error(r, &err);
		} else {
			fprintf(stderr, "transport-cli: status=%d signal=%d\n", res.status, res.signal);
			ret = 0;
		}
		transport_exec_result_release(&res);
	} else if (!strcmp(argv[i], "upload") && i + 3 < argc) {
		char *end;

		v = strtol(argv[i + 3], &end, 8);
		if (!*argv[i + 3] || *end || v < 0 || v > 07777) {
			ret = usage();
			goto out;
		}
		r = transport_upload(t, argv[i + 1], argv[i + 2], (int)v, &err);
		ret = r < 0 ? report_error(r, &err) : 0;
	} else if (!strcmp(argv[i], "download") && i + 3 < argc) {
		uint64_t max;

		if (parse_u64(argv[i + 3], &max)) {
			ret = usage();
			goto out;
		}
		r = transport_download(t, argv[i + 1], argv[i + 2], (size_t)max, &err);
		ret = r < 0 ? report_error(r, &err) : 0;
	} else {
		ret = usage();
	}
out:
	transport_free(t);
	strbuf_release(&err);
	strbuf_release(&in);
	return ret;
}
