/*
 * The mbox series reader (daemon/intake/patch.h: patch_series_read, and
 * patch_series_json, which a job's submit calls) on any bytes, whole and
 * cut short: a submitter's mbox may end anywhere (a download cut off, a
 * paste that lost its tail). Whatever it is given:
 *  - a refusal says why and leaves nothing to free;
 *  - a series is 1 to PATCH_SERIES_MAX patches, each with a subject as
 *    patch.h promises (fuzz_subject.h), ending in order within the text;
 *  - the text up to ends[k] reads as the series' first k+1 patches, with
 *    the same subjects and cover letter: what a per-patch series' job k+1
 *    applies (submit.h); checked for the first two patches, the middle
 *    one and the one before the last.
 * Cut short means every prefix of the first PREFIX_ALL bytes, then
 * PREFIX_SPREAD prefixes spread over the rest, so that the prefixes of a
 * 1 MiB input cost tens of reads of it, not a million.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz_subject.h"
#include "patch.h"
#include "util.h"
#include "banned.h"

#define PREFIX_ALL 256
#define PREFIX_SPREAD 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

/* Reads text[0..len) as a series and checks what patch.h promises; with
 * whole set, also that each patch's end cuts it into a series of that
 * patch and the ones before. */
static void read_series(const char *text, size_t len, int whole)
{
	struct strbuf err = STRBUF_INIT;
	struct patch_series s, p;
	size_t ks[4], k, j;

	if (patch_series_read(text, len, &s, &err) < 0) {
		if (!err.len || s.npatches || s.subjects || s.ends || s.cover_subject)
			abort();	/* a refusal says why, and keeps nothing */
		strbuf_release(&err);
		return;
	}
	if (!s.nmails ? s.npatches || s.cover || s.subjects :
	    s.npatches < 1 || s.npatches > PATCH_SERIES_MAX || s.npatches + (size_t)s.cover != s.nmails)
		abort();
	if (s.cover && (!s.cover_subject || !fuzz_subject_valid(s.cover_subject, strlen(s.cover_subject))))
		abort();
	for (k = 0; k < s.npatches; k++)
		if (!fuzz_subject_valid(s.subjects[k], strlen(s.subjects[k])) || s.ends[k] > len ||
		    (k && s.ends[k] <= s.ends[k - 1]))
			abort();
	/* the first two patches, the middle one, the one before the last: a
	 * prefix each, each a read of up to the whole text */
	ks[0] = 0, ks[1] = 1, ks[2] = s.npatches / 2, ks[3] = s.npatches > 1 ? s.npatches - 2 : 0;
	for (j = 0; whole && j < ARRAY_SIZE(ks); j++) {
		size_t i;

		if ((k = ks[j]) >= s.npatches)
			continue;
		if (patch_series_read(text, s.ends[k], &p, &err) < 0 || p.npatches != k + 1 || p.cover != s.cover ||
		    !same(p.cover_subject, s.cover_subject))
			abort();
		for (i = 0; i <= k; i++)
			if (strcmp(p.subjects[i], s.subjects[i]) || p.ends[i] != s.ends[i])
				abort();
		patch_series_release(&p);
	}
	patch_series_release(&s);
	strbuf_release(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct strbuf err = STRBUF_INIT;
	json_t *series = NULL;
	size_t cut, k;

	read_series(text, size, 1);
	if (patch_series_json(text, size, &series, &err) < 0 ? !err.len || series : 0)
		abort();
	json_decref(series);
	for (cut = 0; cut < size && cut < PREFIX_ALL; cut++)
		read_series(text, cut, 0);
	for (k = 1; size > PREFIX_ALL && k < PREFIX_SPREAD; k++)
		read_series(text, PREFIX_ALL + (size - PREFIX_ALL) * k / PREFIX_SPREAD, 0);
	strbuf_release(&err);
	return 0;
}
