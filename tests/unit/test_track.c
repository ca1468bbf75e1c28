/*
 * daemon/track: the tracker thread against a real store, a local builder
 * and a git repository made here (no scheduler runs, so the point jobs it
 * makes stay queued unless the test ends them). A run asked for makes a
 * point and its job per machine; an unchanged head is skipped and said
 * so; a new commit is a new point; a run that fell due while the daemon
 * was down runs once at start, and a restart neither loses nor doubles
 * one; a point whose job ended without values is failed; a finished job
 * is announced to a webhook receiver on loopback.
 */
#include "testlib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fixture_store.h"
#include "quiet.h"
#include "track.h"
#include "util.h"
#include "banned.h"

static char dir[64];
static int hook_port, hook_fd, hook_requests;
static char hook_last[4096];
static pthread_t hook_thread;

static void *hook_main(void *arg)
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

static void hook_start(void)
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

static void sh(const char *cmd)
{
	if (system(cmd) != 0)
		fail_msg("failed: %s", cmd);
}

static void commit(int k)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "cd %s/linux && echo %d >f && git add f && git -c user.name='A U Thor' "
		 "-c user.email=a@example.org commit -qm 'change %d'", dir, k, k);
	sh(cmd);
}

/* drives job to done as the scheduler would, each run measuring value */
static void job_done(struct store *st, int64_t job, double value)
{
	int guard;

	for (guard = 0; guard < 16; guard++) {
		json_t *j = store_job_json(st, job);
		const char *state = json_string_value(json_object_get(j, "state"));
		int open = state && (!strcmp(state, "queued") || !strcmp(state, "running"));
		char kind[8], side[16];
		int64_t id;

		json_decref(j);
		if (!open)
			return;
		id = store_fixture_next_id(st, job, kind, side);
		assert_int_equal(store_stage_begin(st, id, "q1"), 0);
		if (!strcmp(kind, "run"))
			assert_int_equal(store_fixture_run_add(st, job, id, side, 0, value), 0);
		assert_int_equal(store_stage_finish(st, id, "done", NULL, NULL), 0);
	}
	fail_msg("job %lld did not end", (long long)job);
}

/* the lab of the tests: machines, a local builder over DIR/linux, one
 * suite, a webhook to the receiver for events, and track main over them */
static struct lab_config *lab(const char *machines, const char *events, const char *more)
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
static void repo_make(void)
{
	struct strbuf cmd = STRBUF_INIT;

	snprintf(dir, sizeof(dir), "/tmp/tlblab-track.XXXXXX");
	assert_non_null(mkdtemp(dir));
	strbuf_addf(&cmd, "git init -q -b master %s/linux", dir);
	sh(cmd.buf);
	strbuf_release(&cmd);
}

static void repo_remove(void)
{
	struct strbuf cmd = STRBUF_INIT;

	strbuf_addf(&cmd, "rm -rf %s", dir);
	sh(cmd.buf);
	strbuf_release(&cmd);
}

/* a member of the track's row in the store */
static json_t *track_row(struct store *st, const char *key)
{
	json_t *j = store_tracks_json(st), *v;

	assert_non_null(j);
	v = json_incref(json_object_get(json_array_get(json_object_get(j, "tracks"), 0), key));
	json_decref(j);
	return v;
}

static size_t points(struct store *st)
{
	json_t *j = store_points_json(st, "main", 50, 0);
	size_t n;

	assert_non_null(j);
	n = (size_t)json_integer_value(json_object_get(j, "total"));
	json_decref(j);
	return n;
}

/* one whole pass that started after now */
static void pass(struct tracker *tr)
{
	assert_int_equal(track_wait_pass(tr, track_passes(tr) + 1, 60), 0);
}

static void test_tracker(void **state)
{
	struct store_fixture sf;
	struct lab_config *cfg;
	struct tracker *tr = NULL;
	struct strbuf err = STRBUF_INIT;
	json_t *v, *j;
	double due = 0, due2 = 0;
	int i;

	(void)state;
	repo_make();
	commit(1);
	cfg = lab("q1, q2", "job", "");
	store_fixture_open(&sf, "track");
	assert_int_equal(track_start(cfg, sf.st, "kernels", NULL, NULL, NULL, &tr, &err), 0);

	/* a new track gets its next due time, and does not run yet */
	pass(tr);
	assert_int_equal(store_track_next_due(sf.st, "main", &due), 0);
	assert_true(due > wall_now() && due <= wall_now() + 86400);
	assert_int_equal(points(sf.st), 0);

	/* asked for: a point and its job on each machine */
	assert_int_equal(track_run_now(tr, "main"), 0);
	assert_int_equal(track_run_now(tr, "nope"), -ENOENT);
	pass(tr);
	assert_int_equal(points(sf.st), 2);
	v = track_row(sf.st, "last_result");
	assert_contains(json_string_value(v), "new head: job 1 on q1, job 2 on q2");
	json_decref(v);
	j = store_job_json(sf.st, 1);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "run");
	assert_string_equal(json_string_value(json_object_get(j, "tree")), "linux");
	assert_int_equal(json_array_size(json_object_get(j, "stages")), 5);	/* build, 2 x boot+run */
	assert_contains(json_string_value(json_object_get(j, "patch_subject")), "change 1");
	json_decref(j);

	/* the same head again: skipped, and said so */
	assert_int_equal(track_run_now(tr, "main"), 0);
	pass(tr);
	assert_int_equal(points(sf.st), 2);
	v = track_row(sf.st, "last_result");
	assert_string_equal(json_string_value(v), "unchanged: measured already");
	json_decref(v);

	/* due while the daemon was down: runs once at the next start */
	commit(2);
	track_stop(tr);
	tr = NULL;
	assert_int_equal(store_track_set_next_due(sf.st, "main", wall_now() - 3600), 0);
	assert_int_equal(track_start(cfg, sf.st, "kernels", NULL, NULL, NULL, &tr, &err), 0);
	pass(tr);
	assert_int_equal(points(sf.st), 4);
	assert_int_equal(store_track_next_due(sf.st, "main", &due), 0);
	assert_true(due > wall_now());
	/* a restart does not run it again */
	commit(3);
	track_stop(tr);
	tr = NULL;
	assert_int_equal(track_start(cfg, sf.st, "kernels", NULL, NULL, NULL, &tr, &err), 0);
	for (i = 0; i < 2; i++)
		pass(tr);
	assert_int_equal(points(sf.st), 4);
	assert_int_equal(store_track_next_due(sf.st, "main", &due2), 0);
	assert_float_equal(due, due2, 0);

	/* a point whose job ended without values is failed; the job is
	 * announced to the webhook, once */
	assert_int_equal(store_job_cancel(sf.st, 1), 0);
	pass(tr);
	pass(tr);
	j = store_points_json(sf.st, "main", 50, 0);
	v = json_array_get(json_object_get(j, "points"), 3);	/* newest first: job 1 is last */
	assert_int_equal(json_integer_value(json_object_get(v, "job")), 1);
	assert_string_equal(json_string_value(json_object_get(v, "state")), "failed");
	json_decref(j);
	for (i = 0; i < 100 && !__atomic_load_n(&hook_requests, __ATOMIC_SEQ_CST); i++)
		pass(tr);
	assert_int_equal(__atomic_load_n(&hook_requests, __ATOMIC_SEQ_CST), 1);
	assert_contains(hook_last, "X-Tlblab-Event: job");
	assert_contains(hook_last, "\"state\":\"cancelled\"");
	j = store_deliveries_json(sf.st, 10, 0);
	assert_int_equal(json_integer_value(json_object_get(j, "total")), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(j, "deliveries"), 0),
							      "state")), "delivered");
	json_decref(j);

	track_stop(tr);
	config_free(cfg);
	store_fixture_close(&sf);
	repo_remove();
	strbuf_release(&err);
}

/*
 * Twelve nightly points, the last six 20% slower: the change point at the
 * seventh is found, confirmed once five points follow it, checked with
 * the A/B rule on the runs either side (a regression), grouped into an
 * alert and announced to the webhook with both verdicts. While a run
 * measures on a local machine the search waits, and runs once it ends.
 */
static void test_change_found(void **state)
{
	static const struct cfg_endpoint here = { .transport = TRANSPORT_LOCAL };
	struct quiet_entry run = { .ep = &here, .label = "a run on q1" };
	struct quiet *q;
	struct store_fixture sf;
	struct lab_config *cfg = NULL;
	struct tracker *tr = NULL;
	struct strbuf err = STRBUF_INIT;
	json_t *j, *a, *cp;
	int i, k;

	(void)state;
	repo_make();
	cfg = lab("q1", "change_point", ", detect: {max_p: 0.01, confirm_after: 5}");
	store_fixture_open(&sf, "track-change");
	q = quiet_new();
	assert_int_equal(track_start(cfg, sf.st, "kernels", q, NULL, NULL, &tr, &err), 0);

	__atomic_store_n(&hook_requests, 0, __ATOMIC_SEQ_CST);
	for (i = 0; i < 12; i++) {
		commit(100 + i);
		assert_int_equal(track_run_now(tr, "main"), 0);
		pass(tr);
		assert_int_equal(points(sf.st), (size_t)i + 1);
		/* the last point ends while a run measures on this host */
		if (i == 11)
			assert_int_equal(quiet_measure_begin(q, &run, NULL, mono_now() + 10, &err), 0);
		/* the point's job, measured: 1000 ops/s, 800 from the seventh on */
		j = store_points_json(sf.st, "main", 1, 0);
		job_done(sf.st, json_integer_value(json_object_get(json_array_get(json_object_get(j, "points"), 0),
								   "job")), (i < 6 ? 1000 : 800) + (i % 3));
		json_decref(j);
		pass(tr);
		pass(tr);
	}
	/* the change is 5 points old only with the twelfth: not searched yet,
	 * so not confirmed nor announced */
	j = store_series_json(sf.st, 1);
	assert_int_equal(json_array_size(json_object_get(j, "values")), 12);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(j, "change_points"), 0),
							      "status")), "provisional");
	json_decref(j);
	assert_int_equal(__atomic_load_n(&hook_requests, __ATOMIC_SEQ_CST), 0);
	quiet_measure_end(q, &run);
	pass(tr);
	/* one alert: the seventh commit, a regression, its change point confirmed and checked */
	j = store_alerts_json(sf.st, "main", 10, 0);
	assert_int_equal(json_integer_value(json_object_get(j, "total")), 1);
	a = store_alert_json(sf.st, json_integer_value(json_object_get(json_array_get(json_object_get(j, "alerts"), 0),
									  "id")));
	json_decref(j);
	assert_string_equal(json_string_value(json_object_get(a, "kind")), "regression");
	assert_string_equal(json_string_value(json_object_get(a, "subject")), "change 106");
	cp = json_array_get(json_object_get(a, "change_points"), 0);
	assert_string_equal(json_string_value(json_object_get(cp, "status")), "confirmed");
	assert_string_equal(json_string_value(json_object_get(cp, "metric")), "mprotect.ops_per_sec");
	assert_string_equal(json_string_value(json_object_get(cp, "ab_verdict")), "regression");
	assert_true(json_number_value(json_object_get(cp, "magnitude")) < -0.19);
	assert_true(json_number_value(json_object_get(cp, "p")) <= 0.01);
	json_decref(a);
	/* announced once, with both verdicts */
	for (k = 0; k < 100 && !__atomic_load_n(&hook_requests, __ATOMIC_SEQ_CST); k++)
		pass(tr);
	assert_int_equal(__atomic_load_n(&hook_requests, __ATOMIC_SEQ_CST), 1);
	assert_contains(hook_last, "X-Tlblab-Event: change_point");
	assert_contains(hook_last, "\"direction\":\"regression\"");
	assert_contains(hook_last, "\"ab_verdict\":\"regression\"");

	track_stop(tr);
	quiet_free(q);
	config_free(cfg);
	store_fixture_close(&sf);
	repo_remove();
	strbuf_release(&err);
}

static void test_direction(void **state)
{
	(void)state;
	assert_string_equal(track_change_direction("higher", -0.05), "regression");
	assert_string_equal(track_change_direction("higher", 0.05), "improvement");
	assert_string_equal(track_change_direction("lower", 0.05), "regression");
	assert_string_equal(track_change_direction("lower", -0.05), "improvement");
	assert_string_equal(track_change_direction("neutral", 0.5), "neutral");
	assert_string_equal(track_change_direction(NULL, 0.5), "neutral");
}

static int hook_up(void **state)
{
	(void)state;
	hook_start();
	return 0;
}

static int hook_down(void **state)
{
	(void)state;
	shutdown(hook_fd, SHUT_RDWR);
	pthread_join(hook_thread, NULL);
	close(hook_fd);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_direction),
		cmocka_unit_test(test_tracker),
		cmocka_unit_test(test_change_found),
	};

	return cmocka_run_group_tests(tests, hook_up, hook_down);
}
