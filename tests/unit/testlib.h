#ifndef TLBLAB_TESTLIB_H
#define TLBLAB_TESTLIB_H

/*
 * Helpers shared by the cmocka unit tests. Fixtures live under
 * tests/fixtures, found through $TLBLAB_FIXTURES when it is set (so a test
 * binary can run from anywhere) and relative to the current directory
 * otherwise (tests/run.sh runs from the repository root).
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

#define FIXTURE_MAX_BYTES (16u << 20)

/* Appends the fixture file rel to sb; a missing fixture fails the test
 * rather than letting it pass on an empty buffer. */
static inline void fixture_read(struct strbuf *sb, const char *rel)
{
	const char *dir = getenv("TLBLAB_FIXTURES");
	char path[4096];
	int r;

	snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : "tests/fixtures", rel);
	r = strbuf_read_file(sb, path, FIXTURE_MAX_BYTES);
	if (r < 0)
		fail_msg("fixture %s: %s (run from the repository root or set TLBLAB_FIXTURES)",
			 path, strerror(-r));
	if (sb->len == 0)
		fail_msg("fixture %s is empty", path);
}

/* Fails with both strings shown when needle is not inside hay. */
#define assert_contains(hay, needle) do {					\
	const char *hay_ = (hay), *needle_ = (needle);				\
	if (!hay_ || !strstr(hay_, needle_))					\
		fail_msg("\"%s\" does not contain \"%s\"", hay_ ? hay_ : "(null)", \
			 needle_);						\
} while (0)

/* Skips the running test, saying why: tests/run.sh takes the "# SKIP: why"
 * line as the skip's reason, and counts a skip without one as a failure.
 * Only for a check that cannot run on this machine, never for one that
 * failed. */
#define skip_because(why) do {						\
	print_message("# SKIP: %s\n", (why));				\
	skip();								\
} while (0)

#endif
