#ifndef TLBLAB_FIXTURE_TRACK_H
#define TLBLAB_FIXTURE_TRACK_H

/*
 * Shared by the tracker's tests (test_track, test_track_bisect): a git
 * repository made here that a local builder resolves, the lab config of a
 * track over it, a webhook receiver on loopback that answers 204 and keeps
 * the last request, and the scheduler's part played by hand (a job driven
 * to done or failed stage by stage).
 */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fixture_store.h"
#include "jsonget.h"
#include "track.h"
#include "util.h"

static char dir[64];
static int hook_port, hook_fd, hook_requests;
static char hook_last[4096];
static pthread_t hook_thread;

static inline void *hook_main(void *arg)
{
	int c;

	(void)arg;
	while ((c = accept(hook_fd, NULL, NULL)) >= 0) {
		ssize_t n = read(c, hook_last, sizeof(hook_last) - 1);
		const char ok[] = "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n";

		hook_last[n > 0 ? n : 0] = 0;
		__atomic_add_fetch(&hook_requests, 1, __ATOMIC_SEQ_CST);
		if (write(c, ok, sizeof(ok) - 1) < 0)
			fprintf(stderr, "# hook: short write\n");
		close(c);
	}
	return NULL;
}

static inline void hook_start(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	hook_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(hook_fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(hook_fd, 8), 0);
	assert_int_equal(getsockname(hook_fd, (struct sockaddr *)&a, &len), 0);
	hook_port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&hook_thread, NULL, hook_main, NULL), 0);
}

static inline void sh(const char *cmd)
{
	if (system(cmd) != 0)
		fail_msg("failed: %s", cmd);
}

static inline void commit(int k)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "cd %s/linux && echo %d >f && git add f && git -c user.name='A U Thor' "
		 "-c user.email=a@example.org commit -qm 'change %d'", dir, k, k);
	sh(cmd);
}

/* drives job to done as the scheduler would, each run measuring value
 * with a wobble of a few parts in a thousand from run to run */
static inline void job_done(struct store *st, int64_t job, double value)
{
	static unsigned wobble;
	int guard;

	for (guard = 0; guard < 64; guard++) {
		json_t *j = store_job_json(st, job);
		const char *state = jsonget_str(j, "state");
		int open = state && (!strcmp(state, "queued") || !strcmp(state, "running"));
		char kind[8], side[16];
		int64_t id;

		json_decref(j);
		if (!open)
			return;
		id = store_fixture_next_id(st, job, kind, side);
		assert_int_equal(store_stage_begin(st, id, "q1"), 0);
		if (!strcmp(kind, "run"))
			assert_int_equal(store_fixture_run_add(st, job, id, side, 0,
							       value * (1 + 0.002 * ((int)(wobble++ % 3) - 1))), 0);
		assert_int_equal(store_stage_finish(st, id, "done", NULL, NULL), 0);
	}
	fail_msg("job %lld did not end", (long long)job);
}

/* fails job's first stage (its build) with class and message */
static inline void job_fail(struct store *st, int64_t job, const char *cls, const char *message)
{
	char kind[8], side[16];
	int64_t id = store_fixture_next_id(st, job, kind, side);

	assert_int_equal(store_stage_begin(st, id, "q1"), 0);
	assert_int_equal(store_stage_finish(st, id, "failed", cls, message), 0);
}

/* the lab of the tests: machines, a local builder over DIR/linux, one
 * suite, a webhook to the receiver for events, and track main over them */
static inline struct lab_config *lab(const char *machines, const char *events, const char *more)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	struct lab_config *cfg = NULL;

	strbuf_addf(&text, "lab: {data_dir: %s/data}\n"
		    "machines:\n  - {name: q1, transport: local}\n  - {name: q2, transport: local}\n"
		    "builders:\n  - {name: local, transport: local, workdir: %s/builder}\n"
		    "trees:\n  - {name: linux, url: %s/linux, builder: local}\n"
		    "suites:\n  - {name: tlb, workloads: [{workload: mprotect}]}\n"
		    "notify:\n  - {name: ops, url: 'http://127.0.0.1:%d/hook', events: [%s]}\n"
		    "tracks:\n  - {name: main, tree: linux, branch: master, schedule: '0 3 * * *', suite: tlb,"
		    " machines: [%s], boots: 2%s}\n", dir, dir, dir, hook_port, events, machines, more);
	if (config_load_string("t.yaml", text.buf, text.len, &cfg, &err) < 0)
		fail_msg("%s", err.buf);
	strbuf_release(&text);
	strbuf_release(&err);
	return cfg;
}

/* DIR, a new temporary directory, with an empty repository DIR/linux */
static inline void repo_make(void)
{
	struct strbuf cmd = STRBUF_INIT;

	snprintf(dir, sizeof(dir), "/tmp/tlblab-track.XXXXXX");
	assert_non_null(mkdtemp(dir));
	strbuf_addf(&cmd, "git init -q -b master %s/linux", dir);
	sh(cmd.buf);
	strbuf_release(&cmd);
}

static inline void repo_remove(void)
{
	struct strbuf cmd = STRBUF_INIT;

	strbuf_addf(&cmd, "rm -rf %s", dir);
	sh(cmd.buf);
	strbuf_release(&cmd);
}

/* a member of the track's row in the store */
static inline json_t *track_row(struct store *st, const char *key)
{
	json_t *j = store_tracks_json(st), *v;

	assert_non_null(j);
	v = json_incref(json_object_get(json_array_get(json_object_get(j, "tracks"), 0), key));
	json_decref(j);
	return v;
}

static inline size_t points(struct store *st)
{
	json_t *j = store_points_json(st, "main", 50, 0);
	size_t n;

	assert_non_null(j);
	n = (size_t)jsonget_int_or(j, "total", 0);
	json_decref(j);
	return n;
}

/* one whole pass that started after now */
static inline void pass(struct tracker *tr)
{
	assert_int_equal(track_wait_pass(tr, track_passes(tr) + 1, 60), 0);
}

static inline int hook_up(void **state)
{
	(void)state;
	hook_start();
	return 0;
}

static inline int hook_down(void **state)
{
	(void)state;
	shutdown(hook_fd, SHUT_RDWR);
	pthread_join(hook_thread, NULL);
	close(hook_fd);
	return 0;
}

#endif
