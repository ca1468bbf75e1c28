/*
 * daemon/build_resolve: kernels/build/build.sh --resolve on a local builder, over
 * a git repository made here: the head of a branch and its facts, the
 * commits between two, a ref that is not there, a branch of another
 * repository (a track's own URL), and a branch that moved.
 */
#include "testlib.h"

#include <errno.h>
#include <unistd.h>

#include "build.h"
#include "config.h"
#include "util.h"
#include "fixture_builder.h"
#include "banned.h"

static char dir[64];

static void sh(const char *fmt, const char *arg)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), fmt, arg, arg, arg, arg);
	if (system(cmd) != 0)
		fail_msg("failed: %s", cmd);
}

/* a repository of n commits "change k" on master in DIR/name */
static void make_repo(const char *name, int n)
{
	char path[128], cmd[512];
	int k;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	sh("git init -q -b master %s", path);
	for (k = 1; k <= n; k++) {
		snprintf(cmd, sizeof(cmd), "cd %s && echo %d >f && git add f && GIT_COMMITTER_DATE='@%d +0000' "
			 "git -c user.name='A U Thor' -c user.email=a@example.org commit -qm 'change %d'",
			 path, k, 1700000000 + k, k);
		if (system(cmd) != 0)
			fail_msg("failed: %s", cmd);
	}
}

static struct lab_config *lab(void)
{
	return builder_lab(dir, "r.yaml");
}

static void test_resolve(void **state)
{
	struct lab_config *cfg;
	struct build_resolved r;
	struct strbuf err = STRBUF_INIT, url = STRBUF_INIT;
	char first[41], head[41];
	FILE *f;
	size_t i;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/tlblab-resolve.XXXXXX");
	assert_non_null(mkdtemp(dir));
	make_repo("linux", 4);
	make_repo("next", 6);
	cfg = lab();
	build_resolved_init(&r);
	if (build_resolve(cfg, &cfg->trees[0], NULL, "master", NULL, "kernels", 60, NULL, NULL, &r, &err) < 0)
		fail_msg("build_resolve: %s", err.buf);
	assert_true(hex_valid(r.commit, 40));
	assert_float_equal(r.time, 1700000004, 0);
	assert_string_equal(r.author.buf, "A U Thor");
	assert_string_equal(r.subject.buf, "change 4");
	assert_int_equal(r.nbetween, 0);
	build_resolved_release(&r);

	/* the commits after the first, oldest first */
	strbuf_addf(&url, "git -C %s/linux rev-list --max-parents=0 HEAD", dir);
	f = popen(url.buf, "r");
	assert_non_null(f);
	assert_non_null(fgets(first, sizeof(first), f));
	pclose(f);
	assert_int_equal(build_resolve(cfg, &cfg->trees[0], NULL, "master", first, "kernels", 60, NULL, NULL, &r, &err), 0);
	assert_int_equal(r.nbetween, 3);
	for (i = 0; i < 3; i++) {
		char want[16];

		snprintf(want, sizeof(want), "change %zu", i + 2);
		assert_string_equal(r.between[i].subject, want);
		assert_float_equal(r.between[i].time, 1700000002 + (double)i, 0);
	}
	assert_string_equal(r.between[2].sha, r.commit);
	first[40] = 0;
	assert_string_equal(r.since, first);
	snprintf(head, sizeof(head), "%s", r.commit);
	build_resolved_release(&r);

	/* a "good" end that is not an ancestor of the bad one has no range */
	strbuf_reset(&err);
	assert_int_equal(build_resolve(cfg, &cfg->trees[0], NULL, first, head, "kernels", 60, NULL, NULL, &r, &err),
			 -ENOENT);
	assert_contains(err.buf, "is not an ancestor of");
	build_resolved_release(&r);

	/* the branch moves: asked again, the new head */
	sh("cd %s/linux && echo 5 >f && git -c user.name=B -c user.email=b@x commit -qam 'change 5'", dir);
	assert_int_equal(build_resolve(cfg, &cfg->trees[0], NULL, "master", NULL, "kernels", 60, NULL, NULL, &r, &err), 0);
	assert_string_equal(r.subject.buf, "change 5");
	assert_string_equal(r.author.buf, "B");
	build_resolved_release(&r);

	/* a track's own URL: the branch of another repository */
	strbuf_reset(&url);
	strbuf_addf(&url, "%s/next", dir);
	assert_int_equal(build_resolve(cfg, &cfg->trees[0], url.buf, "master", NULL, "kernels", 60, NULL, NULL, &r, &err), 0);
	assert_string_equal(r.subject.buf, "change 6");
	build_resolved_release(&r);

	/* not there: the track's to fix, said as build.sh says it */
	strbuf_reset(&err);
	assert_int_equal(build_resolve(cfg, &cfg->trees[0], NULL, "no-such-branch", NULL, "kernels", 60, NULL, NULL, &r,
				       &err), -ENOENT);
	assert_contains(err.buf, "no-such-branch");
	assert_int_equal(r.nbetween, 0);
	strbuf_reset(&err);
	assert_int_equal(build_resolve(cfg, &cfg->trees[0], NULL, "ma..ster", NULL, "kernels", 60, NULL, NULL, &r, &err),
			 -EINVAL);

	config_free(cfg);
	sh("rm -rf %s", dir);
	strbuf_release(&err);
	strbuf_release(&url);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
