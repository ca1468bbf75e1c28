/*
 * Nightly tracking in the configuration: tracks: (a branch, its schedule,
 * the suite and machines that measure it, the detector's settings) and
 * notify: (webhooks, their secret and events), and defaults: (what a job
 * that names no suite, tree or base takes), with the errors a lab's
 * author sees for each mistake, at its line and column.
 */
#include "testlib.h"

#include "fixture_config.h"
#include "banned.h"

/* lines 1-10: a lab with a machine, a builder, a tree and a suite */
#define TRACK_LAB							\
	LAB								\
	L("machines:")							\
	L("  - {name: q1, transport: local}")				\
	L("  - {name: q2, transport: local}")				\
	L("builders:")							\
	L("  - {name: local, transport: local}")			\
	L("trees:")							\
	L("  - {name: linux, url: /src/linux, builder: local}")	\
	L("suites:")							\
	L("  - {name: tlb, workloads: [{workload: mprotect}]}")

static const struct error_case error_cases[] = {
	{ "tracks", "t.yaml",
	  TRACK_LAB					/* 1-10 */
	  L("tracks:")					/* 11 */
	  L("  - name: a")				/* 12 */
	  L("    tree: nope")				/* 13 */
	  L("    branch: 'bad..ref'")			/* 14 */
	  L("    schedule: '61 * * * *'")		/* 15 */
	  L("    suite: tlb")				/* 16 */
	  L("    machines: [q1, q9]")			/* 17 */
	  L("    boots: 50")				/* 18 */
	  L("    detect: {window: 4, max_p: 0.00001, min_change: 300%, typo: 1}")	/* 19 */
	  L("  - name: b")				/* 20 */
	  L("    tree: linux")				/* 21 */
	  L("    machines: []")				/* 22 */
	  L("  - name: a")				/* 23 */
	  L("    tree: linux")				/* 24 */
	  L("    suite: nosuch")			/* 25 */
	  L("    branch: main")				/* 26 */
	  L("    schedule: '@daily'")			/* 27 */
	  L("    machines: [q2]")			/* 28 */
	  L("    bisect: maybe")			/* 29 */
	  L("  - {name: c, tree: linux, branch: main, suite: tlb, machines: [q1], schedule: '0 0 31 2 *'}"), /* 30 */
	  "t.yaml:13:11: tree: no tree named 'nope'\n"
	  "t.yaml:14:13: branch: must be a git ref (a branch or tag name, or a commit id)\n"
	  "t.yaml:15:15: schedule: the minute field \"61\" is not a cron field of 0-59\n"
	  "t.yaml:17:15: machines: no machine named 'q9'\n"
	  "t.yaml:18:12: boots: must be an integer from 1 to 20\n"
	  "t.yaml:19:22: window: must be an integer from 6 to 500\n"
	  "t.yaml:19:32: max_p: at least 0.0001 (a smaller one takes more shuffles than a night "
	  "has time for)\n"
	  "t.yaml:19:53: min_change: must be a percentage like 2% or a fraction from 0 to 1\n"
	  "t.yaml:19:59: unknown key 'typo' in the detect section of track 'a'\n"
	  "t.yaml:20:5: missing key 'suite' in track 'b' (what each new head runs)\n"
	  "t.yaml:20:5: missing key 'branch' in track 'b' (the ref to follow, e.g. master)\n"
	  "t.yaml:20:5: missing key 'schedule' in track 'b' (a cron expression, e.g. \"0 2 * * *\")\n"
	  "t.yaml:22:15: machines: track 'b' needs at least one\n"
	  "t.yaml:23:11: duplicate track name 'a' (first defined at line 12)\n"
	  "t.yaml:25:12: suite: no suite named 'nosuch'\n"
	  "t.yaml:29:13: bisect: must be true or false\n"
	  "t.yaml:30:80: schedule: \"0 0 31 2 *\" is never due (not within 5 years)" },
	{ "hooks", "h.yaml",
	  TRACK_LAB					/* 1-10 */
	  L("notify:")					/* 11 */
	  L("  - name: a")				/* 12 */
	  L("    url: ftp://x/")			/* 13 */
	  L("    secret: short")			/* 14 */
	  L("    events: [job, coffee]")		/* 15 */
	  L("    max_attempts: 0")			/* 16 */
	  L("  - name: b")				/* 17 */
	  L("    url: http://127.0.0.1:9/h")		/* 18 */
	  L("    secret: 0123456789abcdef0123")		/* 19 */
	  L("    secret_file: /nonexistent/secret")	/* 20 */
	  L("  - name: c")				/* 21 */
	  L("    secret_file: /nonexistent/secret")	/* 22 */
	  L("    events: []"),				/* 23 */
	  "h.yaml:13:10: url: must be an http:// or https:// URL without spaces or control characters\n"
	  "h.yaml:14:13: secret: must be a secret of 16 to 4096 printable characters without spaces\n"
	  "h.yaml:15:19: events[1]: must be change_point, bisection or job\n"
	  "h.yaml:16:19: max_attempts: must be an integer from 1 to 50\n"
	  "h.yaml:20:18: secret_file: webhook 'b' has secret already; give one of the two\n"
	  "h.yaml:21:5: missing key 'url' in webhook 'c' (where deliveries are POSTed)\n"
	  "h.yaml:22:18: secret_file: cannot read /nonexistent/secret: No such file or directory\n"
	  "h.yaml:23:13: events: webhook 'c' has no events; leave the key out for all of them" },
	{ "defaults", "d.yaml",
	  TRACK_LAB					/* 1-10 */
	  L("defaults:")				/* 11 */
	  L("  suite: nosuch")				/* 12 */
	  L("  base: 'v6..1'")				/* 13 */
	  L("  colour: blue"),				/* 14 */
	  "d.yaml:12:10: suite: no suite named 'nosuch'\n"
	  "d.yaml:13:9: base: must be a git ref (a branch or tag name, or a commit id)\n"
	  "d.yaml:14:3: unknown key 'colour' in defaults (keys: suite, tree, base)" },
	{ "defaults", "d.yaml",
	  TRACK_LAB					/* 1-10 */
	  L("defaults:")				/* 11 */
	  L("  tree: bsd")				/* 12 */
	  L("  base: v6.1"),				/* 13 */
	  "d.yaml:12:9: tree: no tree named 'bsd'" },
	{ "defaults", "d.yaml",
	  TRACK_LAB					/* 1-10 */
	  L("defaults: [tlb]"),				/* 11 */
	  "d.yaml:11:11: defaults: must be a mapping (suite, tree, base)" },
	{ "defaults", "d.yaml",
	  TRACK_LAB					/* 1-10 */
	  L("defaults: {base: v6.1}"),			/* 11 */
	  "d.yaml:11:18: base: needs defaults.tree (the tree the ref is in)" },
};

CONFIG_TEST(tracks, "t.yaml",
	    TRACK_LAB
	    L("tracks:")
	    L("  - name: mainline")
	    L("    tree: linux")
	    L("    branch: master")
	    L("    schedule: '30 2 * * mon-fri'")
	    L("    suite: tlb")
	    L("    machines: [q1, q2]")
	    L("  - name: next")
	    L("    tree: linux")
	    L("    url: https://git.kernel.org/pub/scm/linux/kernel/git/next/linux-next.git")
	    L("    branch: master")
	    L("    schedule: '@nightly'")
	    L("    suite: tlb")
	    L("    machines: [q2]")
	    L("    boots: 5")
	    L("    bisect: false")
	    L("    detect: {window: 30, max_p: 0.0002, min_change: 5%, confirm_after: 4}"))
{
	const struct cfg_track *t = config_track(cfg, "mainline");

	assert_int_equal(cfg->ntracks, 2);
	assert_non_null(t);
	assert_string_equal(t->tree, "linux");
	assert_string_equal(t->branch, "master");
	assert_null(t->url);
	assert_string_equal(t->schedule, "30 2 * * mon-fri");
	assert_int_equal(t->cron.hours, 1u << 2);
	assert_int_equal(t->cron.wdays, 0x3e);
	assert_string_equal(t->suite, "tlb");
	assert_int_equal(t->nmachines, 2);
	assert_string_equal(t->machines[1], "q2");
	assert_null(t->machines[2]);
	/* the defaults: DESIGN.md's detector, 3 boots, bisect */
	assert_int_equal(t->boots, 3);
	assert_int_equal(t->bisect, 1);
	assert_int_equal(t->confirm_after, 6);
	assert_int_equal(t->detect.window, 50);
	assert_float_equal(t->detect.max_p, 0.001, 0);
	assert_float_equal(t->detect.min_magnitude, 0.02, 0);
	assert_int_equal(t->detect.permutations, 1999);

	t = config_track(cfg, "next");
	assert_non_null(t);
	assert_string_equal(t->url, "https://git.kernel.org/pub/scm/linux/kernel/git/next/linux-next.git");
	assert_int_equal(t->boots, 5);
	assert_int_equal(t->bisect, 0);
	assert_int_equal(t->confirm_after, 4);
	assert_int_equal(t->detect.window, 30);
	assert_float_equal(t->detect.max_p, 0.0002, 0);
	/* enough shuffles that p can reach half of max_p */
	assert_int_equal(t->detect.permutations, 9999);
	assert_float_equal(t->detect.min_magnitude, 0.05, 0);
	assert_null(config_track(cfg, "other"));
}

static void test_hooks(void **state)
{
	struct strbuf text = STRBUF_INIT;
	struct lab_config *cfg;
	char *secret = temp_file("0123456789abcdef-from-a-file\n", 29);

	(void)state;
	strbuf_addf(&text, TRACK_LAB
		    L("notify:")
		    L("  - name: ops")
		    L("    url: http://127.0.0.1:9000/hook")
		    L("    secret_file: %s")
		    L("    events: [bisection, change_point]")
		    L("    max_attempts: 3")
		    L("    timeout: 2s")
		    L("    retry: 1s")
		    L("  - {name: plain, url: 'https://hooks.example.org/x'}"), secret);
	cfg = expect_ok("h.yaml", text.buf);
	assert_int_equal(cfg->nhooks, 2);
	assert_string_equal(cfg->hooks[0].url, "http://127.0.0.1:9000/hook");
	assert_string_equal(cfg->hooks[0].secret, "0123456789abcdef-from-a-file");
	assert_int_equal(cfg->hooks[0].events, (1u << NOTIFY_CHANGE_POINT) | (1u << NOTIFY_BISECTION));
	assert_int_equal(cfg->hooks[0].max_attempts, 3);
	assert_float_equal(cfg->hooks[0].timeout, 2, 0);
	assert_float_equal(cfg->hooks[0].retry, 1, 0);
	assert_float_equal(cfg->hooks[1].retry, 10, 0);
	assert_null(cfg->hooks[1].secret);
	assert_int_equal(cfg->hooks[1].events, 7);
	assert_int_equal(cfg->hooks[1].max_attempts, 8);
	assert_string_equal(config_notify_event_name(NOTIFY_JOB), "job");
	assert_null(config_notify_event_name(NOTIFY_EVENT_MAX));
	config_free(cfg);
	temp_remove(secret);
	strbuf_release(&text);
	expect_table_errors("hooks");
}

/* defaults: the suite, tree and base a job that names none takes
 * (test_submit checks what a job takes) */
CONFIG_TEST(defaults, "d.yaml",
	    TRACK_LAB
	    L("defaults:")
	    L("  suite: tlb")
	    L("  tree: linux")
	    L("  base: v6.1-debian"))
{
	assert_string_equal(cfg->defaults.suite, "tlb");
	assert_string_equal(cfg->defaults.tree, "linux");
	assert_string_equal(cfg->defaults.base, "v6.1-debian");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tracks),
		cmocka_unit_test(test_hooks),
		cmocka_unit_test(test_defaults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
