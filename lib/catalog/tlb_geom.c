#include "tlb_geom.h"

#include <errno.h>
#include <stdlib.h>

int tlb_geom_parse(const char *s, struct tlb_geom *g)
{
	char *end;
	unsigned long e, w;

	errno = 0;
	e = strtoul(s, &end, 10);
	if (end == s || *end != 'x' || errno)
		return -1;
	s = end + 1;
	w = strtoul(s, &end, 10);
	if (end == s || *end || errno || !e || !w || e > TLB_ENTRIES_MAX || e % w)
		return -1;
	if ((e / w) & (e / w - 1))
		return -1;
	g->entries = (unsigned)e;
	g->ways = (unsigned)w;
	return 0;
}
