/*
 * daemon/build_builder: the build script set (kernels/build/, as its
 * parts.list names it) read, hashed and uploaded to a local builder: into
 * a directory named by the set's hash, build.sh last and executable, once
 * per version; a set with a part missing or a name that is not a part's is
 * refused before anything is uploaded.
 */
#include "testlib.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_builder.h"
#include "config.h"
#include "transport.h"
#include "util.h"
#include "fixture_builder.h"
#include "banned.h"

static char dir[64];

static void sh(const char *fmt, const char *a, const char *b)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	if (system(cmd) != 0)
		fail_msg("failed: %s", cmd);
}

static struct lab_config *lab(void)
{
	return builder_lab(dir, "b.yaml");
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		fail_msg("%s: %s", path, strerror(errno));
	return st.st_mode & 07777;
}

static void test_set(void **state)
{
	struct build_set set, copy;
	struct strbuf err = STRBUF_INIT, kdir = STRBUF_INIT;
	size_t i;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/tlblab-set.XXXXXX");
	assert_non_null(mkdtemp(dir));
	if (build_set_read("kernels", &set, &err) < 0)
		fail_msg("build_set_read: %s", err.buf);
	assert_true(set.n >= 3);
	assert_string_equal(set.names[0], BUILD_SET_LIST);
	assert_string_equal(set.names[set.n - 1], BUILD_SET_ENTRY);
	assert_true(hex_valid(set.id, 16));
	for (i = 1; i + 1 < set.n; i++)
		assert_int_equal(strcmp(set.names[i] + strlen(set.names[i]) - 3, ".sh"), 0);

	/* a copy has the same id; a byte more in one part, another */
	strbuf_addf(&kdir, "%s/kernels", dir);
	sh("mkdir -p %s && cp -R kernels/build %s/", kdir.buf, kdir.buf);
	assert_int_equal(build_set_read(kdir.buf, &copy, &err), 0);
	assert_string_equal(copy.id, set.id);
	build_set_release(&copy);
	sh("echo '# more' >>%s/build/%s", kdir.buf, set.names[1]);
	assert_int_equal(build_set_read(kdir.buf, &copy, &err), 0);
	assert_string_not_equal(copy.id, set.id);
	build_set_release(&copy);

	/* a part missing: named, with where it was looked for */
	sh("rm %s/build/%s", kdir.buf, set.names[1]);
	strbuf_reset(&err);
	assert_int_equal(build_set_read(kdir.buf, &copy, &err), -1);
	assert_contains(err.buf, set.names[1]);
	assert_contains(err.buf, "No such file");
	build_set_release(&copy);

	/* parts.list naming what is not a part: refused as build.sh does */
	sh("cp kernels/build/%s %s/build/", set.names[1], kdir.buf);
	sh("echo ../x.sh >>%s/build/parts.list%s", kdir.buf, "");
	strbuf_reset(&err);
	assert_int_equal(build_set_read(kdir.buf, &copy, &err), -1);
	assert_contains(err.buf, "'../x.sh' is not a part's name");
	build_set_release(&copy);

	build_set_release(&set);
	build_set_release(NULL);
	sh("rm -rf %s %s", dir, "");
	strbuf_release(&err);
	strbuf_release(&kdir);
}

static void test_upload(void **state)
{
	struct lab_config *cfg;
	struct build_builder bb;
	struct build_set set;
	struct strbuf err = STRBUF_INIT, path = STRBUF_INIT, setdir = STRBUF_INIT;
	size_t i;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/tlblab-builder.XXXXXX");
	assert_non_null(mkdtemp(dir));
	cfg = lab();
	assert_int_equal(build_set_read("kernels", &set, &err), 0);

	build_builder_init(&bb);
	if (build_builder_open(&cfg->builders[0], &cfg->trees[0], "kernels", &bb, &err) < 0)
		fail_msg("build_builder_open: %s", err.buf);
	assert_non_null(bb.t);
	strbuf_addf(&setdir, "%s/builder/tlblab/scripts/build-%s", dir, set.id);
	strbuf_addf(&path, "%s/build.sh", setdir.buf);
	assert_string_equal(bb.script.buf, path.buf);
	strbuf_reset(&path);
	strbuf_addf(&path, "%s/builder/tlblab/scripts", dir);
	assert_string_equal(bb.scripts.buf, path.buf);
	strbuf_reset(&path);
	strbuf_addf(&path, "%s/builder/tlblab/work-linux", dir);
	assert_string_equal(bb.work.buf, path.buf);
	assert_int_equal(access(bb.outdir.buf, W_OK), 0);
	for (i = 0; i < set.n; i++) {
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/%s", setdir.buf, set.names[i]);
		assert_int_equal(mode_of(path.buf), i + 1 == set.n ? 0755 : 0644);
	}
	build_builder_release(&bb);

	/* a directory with build.sh holds the whole set: not uploaded again */
	strbuf_reset(&path);
	strbuf_addf(&path, "%s/%s", setdir.buf, set.names[1]);
	assert_int_equal(unlink(path.buf), 0);
	build_builder_init(&bb);
	assert_int_equal(build_builder_open(&cfg->builders[0], &cfg->trees[0], "kernels", &bb, &err), 0);
	assert_int_equal(access(path.buf, F_OK), -1);
	build_builder_release(&bb);

	/* a set that cannot be read is not uploaded, nor connected to */
	build_builder_init(&bb);
	strbuf_reset(&err);
	assert_true(build_builder_open(&cfg->builders[0], &cfg->trees[0], "no-such-kernels", &bb, &err) < 0);
	assert_null(bb.t);
	assert_contains(err.buf, "no-such-kernels/build/parts.list");
	build_builder_release(&bb);
	build_builder_release(NULL);

	build_set_release(&set);
	config_free(cfg);
	sh("rm -rf %s %s", dir, "");
	strbuf_release(&err);
	strbuf_release(&path);
	strbuf_release(&setdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set),
		cmocka_unit_test(test_upload),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
