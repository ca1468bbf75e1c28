/*
 * daemon/quiet: no build runs beside a measurement on the same host. Builds
 * and runs are entries of the real gate; a run that must wait does so in a
 * thread of its own, and the test waits for what it checks through the
 * gate's own state (pause flags, return values), never for a fixed time.
 */
#include "testlib.h"

#include <errno.h>
#include <pthread.h>

#include "backend.h"
#include "quiet.h"
#include "transport.h"
#include "util.h"
#include "banned.h"

/* the transports are the registry's (backend.h): set in main */
static struct cfg_endpoint local_ep;
static struct cfg_endpoint remote_ep = { .host = "10.0.0.2" };
static struct cfg_endpoint remote_ep2 = { .host = "10.0.0.3" };

static void entry(struct quiet_entry *e, const struct cfg_endpoint *ep, int pausable, const char *label)
{
	memset(e, 0, sizeof(*e));
	e->ep = ep;
	e->pausable = pausable;
	snprintf(e->label, sizeof(e->label), "%s", label);
}

/* A local build is paused while a run on this host measures, and only then. */
static void test_pause_and_resume(void **state)
{
	struct quiet *q = quiet_new();
	struct quiet_entry build, run, far;
	struct strbuf why = STRBUF_INIT, note = STRBUF_INIT;

	(void)state;
	entry(&build, &local_ep, 1, "build patched of job 2");
	entry(&run, &local_ep, 0, "qemu1 (job 1)");
	entry(&far, &remote_ep, 0, "far (job 3)");
	assert_int_equal(quiet_build_begin(q, &build, &why), 0);
	assert_false(build.pause);
	/* a run on another host leaves it alone */
	assert_int_equal(quiet_measure_begin(q, &far, NULL, mono_now() + 60, &note), 0);
	assert_false(build.pause);
	assert_int_equal(note.len, 0);
	quiet_measure_end(q, &far);
	assert_int_equal(quiet_measure_begin(q, &run, NULL, mono_now() + 60, &note), 0);
	assert_true(build.pause);
	assert_string_equal(note.buf, "build patched of job 2 paused");
	quiet_measure_end(q, &run);
	assert_false(build.pause);
	quiet_build_end(q, &build);
	quiet_free(q);
	strbuf_release(&why);
	strbuf_release(&note);
}

/* A build that starts while a run measures starts paused; with two runs on
 * the host it goes on only when both are over. */
static void test_start_paused_two_runs(void **state)
{
	struct quiet *q = quiet_new();
	struct quiet_entry build, r1, r2;
	struct strbuf why = STRBUF_INIT, note = STRBUF_INIT;

	(void)state;
	entry(&build, &local_ep, 1, "build base of job 5");
	entry(&r1, &local_ep, 0, "vm1");
	entry(&r2, &local_ep, 0, "vm2");
	assert_int_equal(quiet_measure_begin(q, &r1, NULL, mono_now() + 60, &note), 0);
	assert_int_equal(quiet_measure_begin(q, &r2, NULL, mono_now() + 60, &note), 0);
	assert_int_equal(quiet_build_begin(q, &build, &why), 0);
	assert_true(build.pause);
	quiet_measure_end(q, &r1);
	assert_true(build.pause);
	quiet_measure_end(q, &r2);
	assert_false(build.pause);
	quiet_build_end(q, &build);
	quiet_free(q);
	strbuf_release(&why);
	strbuf_release(&note);
}

struct waiter {
	struct quiet *q;
	struct quiet_entry *e;
	volatile sig_atomic_t cancel;
	double deadline;
	int rc;
	struct strbuf note;
};

static void *measure_thread(void *arg)
{
	struct waiter *w = arg;

	w->rc = quiet_measure_begin(w->q, w->e, &w->cancel, w->deadline, &w->note);
	return NULL;
}

/* A build that cannot be paused: a run on its host waits for its end, and
 * meanwhile no other such build may start there. */
static void test_unpausable_build(void **state)
{
	struct quiet *q = quiet_new();
	struct quiet_entry build, other, run;
	struct strbuf why = STRBUF_INIT;
	struct waiter w = { .q = q, .e = &run, .deadline = mono_now() + 120, .rc = 99 };
	pthread_t th;

	(void)state;
	strbuf_init(&w.note, 0);
	entry(&build, &remote_ep, 0, "build base of job 1 on builder b1");
	entry(&other, &remote_ep, 0, "build patched of job 1 on builder b2");
	entry(&run, &remote_ep, 0, "box (job 9)");
	assert_int_equal(quiet_build_begin(q, &build, &why), 0);
	assert_int_equal(pthread_create(&th, NULL, measure_thread, &w), 0);
	/* the waiting run keeps new unpausable builds of its host out; that is
	 * also how the test knows the run is in place and waiting */
	for (;;) {
		strbuf_reset(&why);
		if (quiet_build_begin(q, &other, &why) == -EBUSY)
			break;
		quiet_build_end(q, &other);
		sched_yield();
	}
	assert_non_null(strstr(why.buf, "box (job 9) measures on the same host"));
	assert_int_equal(w.rc, 99);	/* still waiting */
	quiet_build_end(q, &build);
	pthread_join(th, NULL);
	assert_int_equal(w.rc, 0);
	assert_non_null(strstr(w.note.buf, "for a build that cannot be paused"));
	/* a build on another host is not held back */
	entry(&other, &remote_ep2, 0, "build on elsewhere");
	assert_int_equal(quiet_build_begin(q, &other, &why), 0);
	quiet_build_end(q, &other);
	quiet_measure_end(q, &run);
	quiet_free(q);
	strbuf_release(&why);
	strbuf_release(&w.note);
}

/* A run cancelled while it waits leaves the gate as it was: the builds it
 * paused go on. */
static void test_cancel_while_waiting(void **state)
{
	struct quiet *q = quiet_new();
	struct quiet_entry stuck, paused, run;
	struct strbuf why = STRBUF_INIT, note = STRBUF_INIT;
	volatile sig_atomic_t cancel = 1;

	(void)state;
	entry(&stuck, &local_ep, 0, "unpausable");
	entry(&paused, &local_ep, 1, "pausable");
	entry(&run, &local_ep, 0, "vm");
	assert_int_equal(quiet_build_begin(q, &stuck, &why), 0);
	assert_int_equal(quiet_build_begin(q, &paused, &why), 0);
	assert_int_equal(quiet_measure_begin(q, &run, &cancel, mono_now() + 60, &note), -ECANCELED);
	assert_false(paused.pause);
	/* nothing measures now: an unpausable build may start */
	entry(&run, &local_ep, 0, "another unpausable");
	assert_int_equal(quiet_build_begin(q, &run, &why), 0);
	quiet_build_end(q, &run);
	quiet_build_end(q, &stuck);
	quiet_build_end(q, &paused);
	quiet_free(q);
	strbuf_release(&why);
	strbuf_release(&note);
}

struct build_waiter {
	struct quiet *q;
	struct quiet_entry *e;
	volatile sig_atomic_t cancel;
	int rc;
};

static void *build_wait_thread(void *arg)
{
	struct build_waiter *w = arg;

	w->rc = quiet_build_wait(w->q, w->e, &w->cancel);
	return NULL;
}

/* An unpausable build that waits on the gate (the tracker's resolve)
 * starts once the run on its host ends, and not before; cancelled while it
 * waits, it leaves without registering. */
static void test_build_waits_for_run(void **state)
{
	struct quiet *q = quiet_new();
	struct quiet_entry run, build, probe;
	struct strbuf why = STRBUF_INIT, note = STRBUF_INIT;
	struct build_waiter w = { .q = q, .e = &build, .rc = 99 };
	pthread_t th;

	(void)state;
	entry(&run, &local_ep, 0, "vm (job 3)");
	entry(&build, &local_ep, 0, "resolve of main on builder local");
	entry(&probe, &local_ep, 0, "probe");
	assert_int_equal(quiet_measure_begin(q, &run, NULL, mono_now() + 60, &note), 0);
	assert_int_equal(pthread_create(&th, NULL, build_wait_thread, &w), 0);
	/* the run measures: no unpausable build may begin, the waiter neither */
	assert_int_equal(quiet_build_begin(q, &probe, &why), -EBUSY);
	assert_int_equal(w.rc, 99);
	quiet_measure_end(q, &run);
	pthread_join(th, NULL);
	assert_int_equal(w.rc, 0);
	/* it is registered: a run on its host now waits for it */
	strbuf_reset(&note);
	w.cancel = 1;
	assert_int_equal(quiet_measure_begin(q, &run, &w.cancel, mono_now() + 60, &note), -ECANCELED);
	quiet_build_end(q, &build);

	/* cancelled while it waits: -ECANCELED, not registered */
	assert_int_equal(quiet_measure_begin(q, &run, NULL, mono_now() + 60, &note), 0);
	w.cancel = 0;
	w.rc = 99;
	assert_int_equal(pthread_create(&th, NULL, build_wait_thread, &w), 0);
	w.cancel = 1;
	pthread_join(th, NULL);
	assert_int_equal(w.rc, -ECANCELED);
	quiet_measure_end(q, &run);
	assert_int_equal(quiet_build_begin(q, &probe, &why), 0);
	quiet_build_end(q, &probe);
	quiet_free(q);
	strbuf_release(&why);
	strbuf_release(&note);
}

int main(void)
{
	local_ep.transport = transport_here()->transport;
	remote_ep.transport = remote_ep2.transport = backend_find(BACKEND_TRANSPORT, "ssh");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pause_and_resume),
		cmocka_unit_test(test_start_paused_two_runs),
		cmocka_unit_test(test_unpausable_build),
		cmocka_unit_test(test_cancel_while_waiting),
		cmocka_unit_test(test_build_waits_for_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
