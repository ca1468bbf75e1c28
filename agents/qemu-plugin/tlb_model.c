#include "tlb_model.h"

#include <stdlib.h>
#include <string.h>

/*
 * A way's key: valid (bit 63), global (62), the ASID (16 bits from 46) and
 * the page's low 46 bits. The halves cannot meet there: a user page is
 * below 2^35 (47-bit addresses), a kernel page at or above.
 */
#define KEY_VALID (1ull << 63)
#define KEY_GLOBAL (1ull << 62)
#define ASID_SHIFT 46
#define VPN_MASK ((1ull << ASID_SHIFT) - 1)
#define ASID_MASK 0xffffull
/* a range at most this long is looked up page by page, a longer one by a
 * scan of every way */
#define RANGE_BY_PAGE 64

static uint64_t make_key(uint64_t vpn, unsigned asid, int global)
{
	return KEY_VALID | (global ? KEY_GLOBAL : ((uint64_t)asid & ASID_MASK) << ASID_SHIFT) | (vpn & VPN_MASK);
}

static int key_matches(uint64_t key, uint64_t vpn, unsigned asid)
{
	if (!(key & KEY_VALID) || (key & VPN_MASK) != (vpn & VPN_MASK))
		return 0;
	return (key & KEY_GLOBAL) || ((key >> ASID_SHIFT) & ASID_MASK) == (asid & ASID_MASK);
}

static int level_init(struct tlb_level *l, struct tlb_geom g)
{
	memset(l, 0, sizeof(*l));
	l->ways = g.ways;
	l->sets = g.entries / g.ways;
	l->key = calloc(g.entries, sizeof(*l->key));
	l->age = calloc(g.entries, sizeof(*l->age));
	return l->key && l->age ? 0 : -1;
}

static void level_free(struct tlb_level *l)
{
	free(l->key);
	free(l->age);
	memset(l, 0, sizeof(*l));
}

int tlb_init(struct tlb *t, struct tlb_geom dtlb, struct tlb_geom itlb, struct tlb_geom stlb)
{
	memset(t, 0, sizeof(*t));
	if (level_init(&t->l1[TLB_DATA], dtlb) < 0 || level_init(&t->l1[TLB_INSN], itlb) < 0 ||
	    level_init(&t->l2, stlb) < 0) {
		tlb_free(t);
		return -1;
	}
	return 0;
}

void tlb_free(struct tlb *t)
{
	level_free(&t->l1[TLB_DATA]);
	level_free(&t->l1[TLB_INSN]);
	level_free(&t->l2);
}

/* The way that holds (vpn, asid) in l, or -1. */
static long level_find(const struct tlb_level *l, uint64_t vpn, unsigned asid)
{
	size_t base = (size_t)(vpn & (l->sets - 1)) * l->ways, i;

	for (i = 0; i < l->ways; i++)
		if (key_matches(l->key[base + i], vpn, asid))
			return (long)(base + i);
	return -1;
}

/* Puts key into its set, in an empty way or the least recently used one. */
static void level_fill(struct tlb_level *l, uint64_t vpn, uint64_t key)
{
	size_t base = (size_t)(vpn & (l->sets - 1)) * l->ways, i, victim = base;

	for (i = 0; i < l->ways; i++) {
		if (!l->key[base + i]) {
			victim = base + i;
			break;
		}
		if (l->age[base + i] < l->age[victim])
			victim = base + i;
	}
	l->key[victim] = key;
	l->age[victim] = ++l->clock;
}

void tlb_access(struct tlb *t, enum tlb_side side, uint64_t vpn, unsigned asid, int global)
{
	struct tlb_level *l1 = &t->l1[side];
	long w = level_find(l1, vpn, asid);

	if (w >= 0) {
		l1->age[w] = ++l1->clock;
		return;
	}
	w = level_find(&t->l2, vpn, asid);
	if (w >= 0) {
		t->l2.age[w] = ++t->l2.clock;
		level_fill(l1, vpn, t->l2.key[w]);
		return;
	}
	if (side == TLB_DATA)
		t->n.dmiss++;
	else
		t->n.imiss++;
	level_fill(&t->l2, vpn, make_key(vpn, asid, global));
	level_fill(l1, vpn, make_key(vpn, asid, global));
}

/* Does the scope name key? */
static int in_scope(uint64_t key, enum tlb_scope scope, unsigned asid, uint64_t vpn, uint64_t pages)
{
	uint64_t kv = key & VPN_MASK;
	int global = (key & KEY_GLOBAL) != 0;
	unsigned kasid = (unsigned)((key >> ASID_SHIFT) & ASID_MASK);

	if (!(key & KEY_VALID))
		return 0;
	switch (scope) {
	case TLB_ALL:
		return 1;
	case TLB_NONGLOBAL:
		return !global;
	case TLB_ASID:
		return !global && kasid == (asid & ASID_MASK);
	case TLB_PAGE_ASID:
		if (!global && kasid != (asid & ASID_MASK))
			return 0;
		/* fall through */
	case TLB_PAGE_ANY:
		return kv - (vpn & VPN_MASK) < pages;
	}
	return 0;
}

/* Is key held by a way of l? */
static int level_holds(const struct tlb_level *l, uint64_t key)
{
	uint64_t vpn = key & VPN_MASK;
	size_t base = (size_t)(vpn & (l->sets - 1)) * l->ways, i;

	for (i = 0; i < l->ways; i++)
		if (l->key[base + i] == key)
			return 1;
	return 0;
}

/*
 * Empties the ways of l (within [first, end) of its ways) that the scope
 * names; counts those not held by `other` (a first level's entry that the
 * second level holds too is one translation, counted there), or all when
 * other is NULL.
 */
static uint64_t level_drop(struct tlb_level *l, size_t first, size_t end, const struct tlb_level *other,
			   enum tlb_scope scope, unsigned asid, uint64_t vpn, uint64_t pages)
{
	uint64_t lost = 0;
	size_t i;

	for (i = first; i < end; i++) {
		if (!in_scope(l->key[i], scope, asid, vpn, pages))
			continue;
		if (!other || !level_holds(other, l->key[i]))
			lost++;
		l->key[i] = 0;
	}
	return lost;
}

/* Drops the scope from the first levels (counting what the second level
 * does not hold), then from the second (counting all of it). */
static void drop_range(struct tlb *t, size_t l1d_first, size_t l1d_end, size_t l1i_first, size_t l1i_end,
		       size_t l2_first, size_t l2_end, enum tlb_scope scope, unsigned asid, uint64_t vpn,
		       uint64_t pages)
{
	t->n.lost += level_drop(&t->l1[TLB_DATA], l1d_first, l1d_end, &t->l2, scope, asid, vpn, pages);
	t->n.lost += level_drop(&t->l1[TLB_INSN], l1i_first, l1i_end, &t->l2, scope, asid, vpn, pages);
	t->n.lost += level_drop(&t->l2, l2_first, l2_end, NULL, scope, asid, vpn, pages);
}

static size_t set_base(const struct tlb_level *l, uint64_t vpn)
{
	return (size_t)(vpn & (l->sets - 1)) * l->ways;
}

void tlb_invalidate(struct tlb *t, enum tlb_scope scope, unsigned asid, uint64_t vpn, uint64_t pages)
{
	const struct tlb_level *d = &t->l1[TLB_DATA], *i = &t->l1[TLB_INSN], *s = &t->l2;
	uint64_t p;

	if ((scope == TLB_PAGE_ASID || scope == TLB_PAGE_ANY) && pages <= RANGE_BY_PAGE) {
		/* one set per page in each level: a translation of a page
		 * lives only in its page's set */
		for (p = 0; p < pages; p++) {
			uint64_t v = vpn + p;

			drop_range(t, set_base(d, v), set_base(d, v) + d->ways, set_base(i, v),
				   set_base(i, v) + i->ways, set_base(s, v), set_base(s, v) + s->ways, scope,
				   asid, v, 1);
		}
		return;
	}
	drop_range(t, 0, (size_t)d->sets * d->ways, 0, (size_t)i->sets * i->ways, 0, (size_t)s->sets * s->ways,
		   scope, asid, vpn, pages);
}
