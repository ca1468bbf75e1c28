#ifndef TLBLAB_PATCH_H
#define TLBLAB_PATCH_H

#include <jansson.h>
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
 *    and ISO-8859-1/Windows-1252; at most 75 characters, as RFC 2047
 *    says: a longer one is text) decoded, 8-bit text that is not UTF-8
 *    read as Latin-1, and the leading "[PATCH v2 1/3]"-like groups and
 *    "Re:" taken off, as git am does;
 *  - else the first non-empty line of the text before the diff (headers
 *    and the "---" line skipped);
 *  - else the files the diff touches: "diff touching mm/mprotect.c", "diff
 *    touching mm/mprotect.c and 2 more files".
 * Returns how it was found; PATCH_SUBJECT_NONE leaves ret empty.
 */
enum patch_subject_kind patch_subject(const char *text, size_t len, struct strbuf *ret);

/*
 * A series: the mails of an mbox (git format-patch's, b4's, lore's raw
 * thread), which git am applies in order. A mail starts at the text's top
 * when that is a mail header or mbox's "From " line, and after it at each
 * "From " line that follows an empty line (or is format-patch's "From
 * <commit id> ") and is followed by a header.
 */
#define PATCH_SERIES_MAX 100

struct patch_series {
	size_t nmails;		/* 0: the text is a plain diff, not mail */
	int cover;		/* the first mail is a cover letter: no diff */
	char *cover_subject;	/* its subject (patch_subject), or NULL */
	size_t npatches;	/* the mails with a diff, in order */
	char **subjects;	/* each one's subject */
	size_t *ends;		/* each one's mail ends at text[ends[k]]: the
				 * text up to there is the series' first k+1
				 * patches (and its cover letter) */
};

/*
 * Reads the series of text[0..len) into ret (released with
 * patch_series_release; nmails 0 for a plain diff). -1 with err, in words
 * for the submitter, when git am could not apply it as a series: no mail
 * has a diff (an empty mbox, a cover letter alone), a mail after the first
 * has none (a reply), a patch is a binary diff, or there are more than
 * PATCH_SERIES_MAX patches.
 */
int patch_series_read(const char *text, size_t len, struct patch_series *ret, struct strbuf *err);
void patch_series_release(struct patch_series *s);
/*
 * The series of text as the job keeps it (store.h's "patches"):
 * {"cover": SUBJECT or null, "patches": [SUBJECT, ...]}, NULL for a plain
 * diff; -1 with err as patch_series_read says.
 */
int patch_series_json(const char *text, size_t len, json_t **ret, struct strbuf *err);

#endif
