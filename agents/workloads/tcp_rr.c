/*
 * tcp-rr: request/response over loopback TCP, like netperf's TCP_RR. Each of
 * the N pairs is a client that sends request_size bytes and waits for
 * response_size bytes back, and a server that does the reverse; one
 * operation is one completed transaction. Every switch between the two ends
 * is a context switch through switch_mm, which is where lazy-TLB and
 * mm_cpumask patches show up. Pairs are set up before the window opens; at
 * its end each client shuts down its write side and the server sees EOF.
 * As processes, each worker keeps only its own socket and the workload
 * process drops its copies once all are started, so a worker that dies
 * closes its connection and its peer sees EOF instead of waiting forever.
 */
#include "workload.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util.h"
#include "banned.h"

struct rr_state {
	int *client_fd, *server_fd;
	int pairs;
};

static struct rr_state rr;

/* Reads exactly len bytes. 1 on success, 0 on EOF, -1 on error. */
static int read_full(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		got += (size_t)n;
	}
	return 1;
}

static int write_full(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A worker process keeps its own socket only (slots as in rr_run). */
static void rr_proc_init(struct wl_ctx *ctx, int slot)
{
	int keep = slot < rr.pairs ? rr.client_fd[slot] : rr.server_fd[slot - rr.pairs], k;

	(void)ctx;
	for (k = 0; k < rr.pairs; k++) {
		if (rr.client_fd[k] != keep)
			close(rr.client_fd[k]);
		if (rr.server_fd[k] != keep)
			close(rr.server_fd[k]);
	}
}

static void rr_client(struct wl_ctx *ctx, int i)
{
	size_t req = ctx->p->request_size, resp = ctx->p->response_size;
	char *buf = calloc(1, req > resp ? req : resp);
	int fd = rr.client_fd[i];

	if (!buf) {
		wl_fail(ctx, "tcp-rr client %d: out of memory", i);
		return;
	}
	while (wl_running(ctx)) {
		if (write_full(fd, buf, req) < 0 || read_full(fd, buf, resp) != 1) {
			wl_fail(ctx, "tcp-rr client %d: %s", i, errno ? strerror(errno) : "server closed");
			break;
		}
		wl_count(ctx, i, 1);
	}
	shutdown(fd, SHUT_WR);
	free(buf);
}

static void rr_server(struct wl_ctx *ctx, int slot)
{
	size_t req = ctx->p->request_size, resp = ctx->p->response_size;
	int i = slot - rr.pairs;
	char *buf = calloc(1, req > resp ? req : resp);
	int fd = rr.server_fd[i];

	if (!buf) {
		wl_fail(ctx, "tcp-rr server %d: out of memory", i);
		return;
	}
	for (;;) {
		int r = read_full(fd, buf, req);

		if (r == 0)
			break;
		if (r < 0 || write_full(fd, buf, resp) < 0) {
			if (wl_running(ctx))
				wl_fail(ctx, "tcp-rr server %d: %s", i, strerror(errno));
			break;
		}
	}
	shutdown(fd, SHUT_WR);
	free(buf);
}

/* Connects one pair through a listener on 127.0.0.1, port chosen by the kernel. */
static int rr_connect(int lfd, const struct sockaddr_in *addr, int *ret_c, int *ret_s)
{
	int one = 1, c, s;

	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0)
		return -1;
	if (connect(c, (const struct sockaddr *)addr, sizeof(*addr)) < 0) {
		close(c);
		return -1;
	}
	s = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (s < 0) {
		close(c);
		return -1;
	}
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	*ret_c = c;
	*ret_s = s;
	return 0;
}

static int rr_run(struct wl_ctx *ctx, struct strbuf *err)
{
	const struct wl_params *p = ctx->p;
	struct sockaddr_in addr = { 0 };
	socklen_t alen = sizeof(addr);
	int lfd, i, r = 0, made = 0;

	rr.pairs = p->workers;
	ctx->proc_init = rr_proc_init;
	rr.client_fd = xcalloc((size_t)p->workers, sizeof(int));
	rr.server_fd = xcalloc((size_t)p->workers, sizeof(int));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(lfd, p->workers) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&addr, &alen) < 0) {
		r = strbuf_seterr(err, "listening on 127.0.0.1: %s", strerror(errno));
		goto out;
	}
	for (made = 0; made < p->workers; made++) {
		if (rr_connect(lfd, &addr, &rr.client_fd[made], &rr.server_fd[made]) < 0) {
			r = strbuf_seterr(err, "connecting pair %d on 127.0.0.1:%d: %s", made,
					  ntohs(addr.sin_port), strerror(errno));
			goto out;
		}
	}
	for (i = 0; i < p->workers && r == 0; i++)
		r = wl_spawn(ctx, p->mode, rr_server, p->workers + i, err);
	for (i = 0; i < p->workers && r == 0; i++)
		r = wl_spawn(ctx, p->mode, rr_client, i, err);
	if (r == 0 && p->mode == WL_PROCESSES) {
		for (i = 0; i < made; i++) {
			close(rr.client_fd[i]);
			close(rr.server_fd[i]);
		}
		made = 0;
	}
	if (r == 0)
		wl_window(ctx);
	else
		for (i = 0; i < made; i++)
			shutdown(rr.client_fd[i], SHUT_RDWR);
	if (wl_join(ctx, err) < 0)
		r = -1;
out:
	for (i = 0; i < made; i++) {
		close(rr.client_fd[i]);
		close(rr.server_fd[i]);
	}
	if (lfd >= 0)
		close(lfd);
	free(rr.client_fd);
	free(rr.server_fd);
	return r;
}

const struct workload_ops workload_tcp_rr = {
	.name = "tcp-rr",
	.run = rr_run,
};
