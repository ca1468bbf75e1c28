#ifndef TLBLAB_PATCH_H
#define TLBLAB_PATCH_H

#include <stddef.h>

#include "strbuf.h"

/*
 * What a person calls a patch: its subject, for job lists, job pages,
 * `tlblab status` and the report, instead of "patch (pasted)". Computed
 * once, when the job is submitted (or when a patch URL is fetched), and
 * kept with the job. The text is untrusted: the subject is at most
 * PATCH_SUBJECT_MAX bytes of valid UTF-8 on one line, with no control
 * characters (strbuf_add_line_clean).
 */

#define PATCH_SUBJECT_MAX 200

/* Where a subject came from, best first. */
enum patch_subject_kind {
	PATCH_SUBJECT_NONE,	/* nothing found: no diff either */
	PATCH_SUBJECT_HEADER,	/* the mail's Subject:, "[PATCH ...]" taken off */
	PATCH_SUBJECT_TEXT,	/* the first line of the text before the diff */
	PATCH_SUBJECT_FILES,	/* "diff touching mm/mprotect.c" */
	PATCH_SUBJECT_MAX_
};

/*
 * The subject of the patch text[0..len) (a git format-patch mail, an
 * mbox, or a plain diff), replacing ret's content:
 *  - the first mail's "Subject:" header, continuation lines unfolded,
 *    RFC 2047 encoded words ("=?UTF-8?q?...?=", B and Q; UTF-8, US-ASCII
 *    and ISO-8859-1/Windows-1252) decoded, 8-bit text that is not UTF-8
 *    read as Latin-1, and the leading "[PATCH v2 1/3]"-like groups and
 *    "Re:" taken off, as git am does;
 *  - else the first non-empty line of the text before the diff (headers
 *    and the "---" line skipped);
 *  - else the files the diff touches: "diff touching mm/mprotect.c", "diff
 *    touching mm/mprotect.c and 2 more files".
 * Returns how it was found; PATCH_SUBJECT_NONE leaves ret empty.
 */
enum patch_subject_kind patch_subject(const char *text, size_t len, struct strbuf *ret);

#endif
