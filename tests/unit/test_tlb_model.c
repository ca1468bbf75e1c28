/*
 * agents/qemu-plugin/tlb_model: the simulated TLB the instruction plugin
 * keeps per vCPU. Small geometries, so that every eviction is known: a
 * first level of 2 sets x 2 ways on each side, a second of 4 sets x 2.
 */
#include "testlib.h"

#include "qemu-plugin/tlb_model.h"
#include "banned.h"

static void small(struct tlb *t)
{
	assert_int_equal(tlb_init(t, (struct tlb_geom){ 4, 2 }, (struct tlb_geom){ 4, 2 },
				  (struct tlb_geom){ 8, 2 }), 0);
}

/* A page walk fills both levels: the second access is a hit. */
static void test_miss_then_hit(void **state)
{
	struct tlb t;

	(void)state;
	small(&t);
	tlb_access(&t, TLB_DATA, 7, 1, 0);
	tlb_access(&t, TLB_DATA, 7, 1, 0);
	assert_int_equal(t.n.dmiss, 1);
	tlb_access(&t, TLB_INSN, 7, 1, 0);
	/* the instruction side finds it in the second level */
	assert_int_equal(t.n.imiss, 0);
	tlb_free(&t);
}

/* Three pages of one first-level set: the least recently used one leaves
 * the first level but the second still holds it, so no walk. Five pages
 * of one second-level set: the oldest needs a walk again. */
static void test_lru_and_second_level(void **state)
{
	struct tlb t;

	(void)state;
	small(&t);
	tlb_access(&t, TLB_DATA, 0, 1, 0);
	tlb_access(&t, TLB_DATA, 2, 1, 0);
	tlb_access(&t, TLB_DATA, 0, 1, 0);	/* 0 is now the most recent */
	tlb_access(&t, TLB_DATA, 6, 1, 0);	/* evicts 2 from the first level */
	assert_int_equal(t.n.dmiss, 3);
	tlb_access(&t, TLB_DATA, 2, 1, 0);	/* second level: set 2 holds 2, 6 */
	assert_int_equal(t.n.dmiss, 3);
	tlb_access(&t, TLB_DATA, 4, 1, 0);	/* second-level set 0: 0, 4 */
	tlb_access(&t, TLB_DATA, 8, 1, 0);	/* evicts 0 there, the older */
	assert_int_equal(t.n.dmiss, 5);
	tlb_access(&t, TLB_DATA, 12, 1, 0);
	tlb_access(&t, TLB_DATA, 0, 1, 0);	/* gone from both levels */
	assert_int_equal(t.n.dmiss, 7);
	tlb_free(&t);
}

/* A page is one translation per address space; a global one is shared. */
static void test_asids_and_global(void **state)
{
	struct tlb t;

	(void)state;
	small(&t);
	tlb_access(&t, TLB_DATA, 5, 1, 0);
	tlb_access(&t, TLB_DATA, 5, 2, 0);
	assert_int_equal(t.n.dmiss, 2);
	tlb_access(&t, TLB_DATA, 9, 1, 1);
	tlb_access(&t, TLB_DATA, 9, 2, 1);
	assert_int_equal(t.n.dmiss, 3);
	tlb_free(&t);
}

/* What each scope removes, and "lost" counts each translation once
 * however many levels held it. */
static void test_invalidate_scopes(void **state)
{
	struct tlb t;

	(void)state;
	small(&t);
	tlb_access(&t, TLB_DATA, 1, 1, 0);	/* in both levels */
	tlb_access(&t, TLB_DATA, 3, 2, 0);
	tlb_access(&t, TLB_INSN, 1, 0, 1);	/* global, page 1 too */
	tlb_invalidate(&t, TLB_ASID, 1, 0, 0);
	assert_int_equal(t.n.lost, 1);
	tlb_invalidate(&t, TLB_ASID, 1, 0, 0);	/* nothing left of it */
	assert_int_equal(t.n.lost, 1);
	tlb_invalidate(&t, TLB_NONGLOBAL, 0, 0, 0);
	assert_int_equal(t.n.lost, 2);		/* asid 2's page; the global stays */
	tlb_access(&t, TLB_INSN, 1, 5, 0);	/* asid 5 finds the global */
	assert_int_equal(t.n.imiss, 1);
	tlb_invalidate(&t, TLB_PAGE_ASID, 7, 1, 1);	/* a global page goes with any ASID's */
	assert_int_equal(t.n.lost, 3);
	tlb_free(&t);
}

/* Ranges: page by page when short, by a scan when long; the same
 * answer. */
static void test_invalidate_ranges(void **state)
{
	struct tlb t;
	uint64_t p;

	(void)state;
	assert_int_equal(tlb_init(&t, (struct tlb_geom){ 64, 4 }, (struct tlb_geom){ 64, 4 },
				  (struct tlb_geom){ 1024, 8 }), 0);
	for (p = 100; p < 300; p++)
		tlb_access(&t, TLB_DATA, p, 3, 0);
	assert_int_equal(t.n.dmiss, 200);
	tlb_invalidate(&t, TLB_PAGE_ASID, 4, 100, 10);	/* another ASID: nothing */
	assert_int_equal(t.n.lost, 0);
	tlb_invalidate(&t, TLB_PAGE_ASID, 3, 100, 10);
	assert_int_equal(t.n.lost, 10);
	tlb_invalidate(&t, TLB_PAGE_ANY, 0, 150, 100);	/* scanned */
	assert_int_equal(t.n.lost, 110);
	tlb_invalidate(&t, TLB_ALL, 0, 0, 0);
	assert_int_equal(t.n.lost, 200);
	tlb_free(&t);
}

static void test_geometry(void **state)
{
	struct tlb_geom g;

	(void)state;
	assert_int_equal(tlb_geom_parse("1536x12", &g), 0);
	assert_int_equal(g.entries, 1536);
	assert_int_equal(g.ways, 12);
	assert_int_equal(tlb_geom_parse("48x48", &g), 0);
	assert_int_equal(tlb_geom_parse("1536x8", &g), -1);	/* 192 sets */
	assert_int_equal(tlb_geom_parse("64x5", &g), -1);
	assert_int_equal(tlb_geom_parse("64", &g), -1);
	assert_int_equal(tlb_geom_parse("0x4", &g), -1);
	assert_int_equal(tlb_geom_parse("131072x8", &g), -1);
	assert_int_equal(tlb_geom_parse("64x4 ", &g), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_miss_then_hit),
		cmocka_unit_test(test_lru_and_second_level),
		cmocka_unit_test(test_asids_and_global),
		cmocka_unit_test(test_invalidate_scopes),
		cmocka_unit_test(test_invalidate_ranges),
		cmocka_unit_test(test_geometry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
