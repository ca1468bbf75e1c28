#ifndef TLBLAB_FIXTURE_STORE_H
#define TLBLAB_FIXTURE_STORE_H

/*
 * A real store on a fresh SQLite file in a temporary directory, for the unit
 * tests of the store and of what writes into it (test_store, test_ingest).
 * Include after testlib.h. The fixture owns its directory and its store;
 * store_fixture_close removes both.
 */

#include <stdlib.h>
#include <jansson.h>

#include "store.h"

struct store_fixture {
	char dir[64];		/* the temporary directory */
	struct store *st;	/* the store on dir/t.db */
};

/* Makes /tmp/tlblab-NAME.XXXXXX and opens a new store in it; fails the
 * test when either cannot be done. */
static inline void store_fixture_open(struct store_fixture *sf, const char *name)
{
	struct strbuf err = STRBUF_INIT, path = STRBUF_INIT;

	snprintf(sf->dir, sizeof(sf->dir), "/tmp/tlblab-%s.XXXXXX", name);
	assert_non_null(mkdtemp(sf->dir));
	strbuf_addf(&path, "%s/t.db", sf->dir);
	if (store_open(path.buf, &sf->st, &err) < 0)
		fail_msg("store_open: %s", err.buf);
	strbuf_release(&path);
	strbuf_release(&err);
}

static inline void store_fixture_close(struct store_fixture *sf)
{
	char cmd[128];

	store_close(sf->st);
	sf->st = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", sf->dir);
	assert_int_equal(system(cmd), 0);
}

/* The cmocka setup and teardown of a test whose state is a store_fixture. */
static inline int store_fixture_setup(void **state)
{
	struct store_fixture *sf = calloc(1, sizeof(*sf));

	assert_non_null(sf);
	store_fixture_open(sf, "store");
	*state = sf;
	return 0;
}

static inline int store_fixture_teardown(void **state)
{
	store_fixture_close(*state);
	free(*state);
	*state = NULL;
	return 0;
}

/* A cmocka test with a fresh store_fixture as its state. */
#define store_fixture_test(f) \
	cmocka_unit_test_setup_teardown(f, store_fixture_setup, store_fixture_teardown)

/* The length of the array `key` in j, a store's JSON answer, which must
 * not be NULL (a read that failed); takes j and frees it. */
static inline size_t store_json_count(json_t *j, const char *key)
{
	size_t n;

	assert_non_null(j);
	n = json_array_size(json_object_get(j, key));
	json_decref(j);
	return n;
}

#endif
