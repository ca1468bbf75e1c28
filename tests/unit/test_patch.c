/*
 * daemon/patch: what a job's patch is called in lists, pages and reports.
 * Mails as git format-patch and git send-email write them (folded and
 * MIME-encoded subjects, "[PATCH v2 3/7]" prefixes, an mbox's "From "
 * line), plain diffs with and without text before them, the project's own
 * patches, and text meant to break a terminal or a page.
 */
#include "testlib.h"

#include "patch.h"
#include "banned.h"

/* The subject of text, and how it was found. */
static enum patch_subject_kind subject(const char *text, struct strbuf *out)
{
	return patch_subject(text, strlen(text), out);
}

#define DIFF "diff --git a/mm/mprotect.c b/mm/mprotect.c\n--- a/mm/mprotect.c\n+++ b/mm/mprotect.c\n" \
	"@@ -1 +1 @@\n-a\n+b\n"

static void expect(const char *text, enum patch_subject_kind kind, const char *want)
{
	struct strbuf s = STRBUF_INIT;
	enum patch_subject_kind got = subject(text, &s);

	if (got != kind || strcmp(s.buf, want))
		fail_msg("subject of\n%s\nis \"%s\" (kind %d), not \"%s\" (kind %d)", text, s.buf, got, want, kind);
	strbuf_release(&s);
}

static void test_format_patch(void **state)
{
	(void)state;
	expect("From 1234abcd Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\nDate: Mon, 1 Jan 2024\n"
	       "Subject: [PATCH] x86/mm/tlb: flush less\n\nbody\n---\n" DIFF,
	       PATCH_SUBJECT_HEADER, "x86/mm/tlb: flush less");
	/* git am's cleanup: every leading [...] group and Re: */
	expect("Subject: Re: [RFC PATCH v2 3/7] [net-next] mm: batch\n\n" DIFF, PATCH_SUBJECT_HEADER, "mm: batch");
	expect("subject: [PATCH]   mm:   spaces\t inside \n\n" DIFF, PATCH_SUBJECT_HEADER, "mm: spaces inside");
	/* the first mail of an mbox (a cover letter) names the series */
	expect("From x Mon Sep 17 00:00:00 2001\nSubject: [PATCH 0/2] tlb: series\n\ncover\n"
	       "From y Mon Sep 17 00:00:00 2001\nSubject: [PATCH 1/2] tlb: one\n\n" DIFF,
	       PATCH_SUBJECT_HEADER, "tlb: series");
	/* CRLF line ends, and blank lines before the mail */
	expect("\r\n\r\nFrom: a\r\nSubject: [PATCH] crlf: ends\r\n\r\n" DIFF, PATCH_SUBJECT_HEADER, "crlf: ends");
	/* a subject of nothing but the prefix keeps it */
	expect("Subject: [PATCH]\n\n" DIFF, PATCH_SUBJECT_HEADER, "[PATCH]");
}

static void test_folded_and_encoded(void **state)
{
	(void)state;
	/* a long subject folded over lines */
	expect("From: a\nSubject: [PATCH v3] x86/mm/tlb: a subject long enough that git\n"
	       " send-email folded it\n\tover three lines\nDate: x\n\n" DIFF,
	       PATCH_SUBJECT_HEADER, "x86/mm/tlb: a subject long enough that git send-email folded it over three lines");
	/* RFC 2047: Q and B, the space between two encoded words dropped */
	expect("Subject: =?UTF-8?q?=5BPATCH=5D_mm=3A_Ren=C3=A9e=27s_fix?=\n\n" DIFF, PATCH_SUBJECT_HEADER,
	       "mm: Ren\xc3\xa9" "e's fix");
	expect("Subject: [PATCH] =?utf-8?B?bW06IGZpeA==?=\n =?utf-8?B?IHRoZSB0bGI=?= now\n\n" DIFF,
	       PATCH_SUBJECT_HEADER, "mm: fix the tlb now");
	/* Latin-1, encoded or raw 8-bit */
	expect("Subject: [PATCH] mm: =?ISO-8859-1?Q?Ren=E9e?=\n\n" DIFF, PATCH_SUBJECT_HEADER,
	       "mm: Ren\xc3\xa9" "e");
	expect("Subject: [PATCH] mm: Ren\xe9" "e\n\n" DIFF, PATCH_SUBJECT_HEADER, "mm: Ren\xc3\xa9" "e");
	/* not an encoded word: kept as written */
	expect("Subject: [PATCH] a =?x? b\n\n" DIFF, PATCH_SUBJECT_HEADER, "a =?x? b");
	/* RFC 2047, 6.2: the space between two encoded words goes, on one line
	 * or folded; between a word and text it stays */
	expect("Subject: =?utf-8?q?a?= =?utf-8?q?b?=\n \t=?utf-8?q?c?=  d =?utf-8?q?e?=\n\n" DIFF,
	       PATCH_SUBJECT_HEADER, "abc d e");
}

/* "Subject: " and an encoded word of n characters in all, "=?utf-8?q?"
 * then 'a's then "?=" */
static void encoded_word_of(struct strbuf *text, size_t n)
{
	strbuf_reset(text);
	strbuf_addstr(text, "Subject: =?utf-8?q?");
	while (text->len < strlen("Subject: ") + n - 2)
		strbuf_addch(text, 'a');
	strbuf_addstr(text, "?=\n\n" DIFF);
}

/* RFC 2047, 2: an encoded word is at most 75 characters; a longer one, or
 * a "=?" with no "?=" within them, is text. Each "=?" is then looked at
 * for 75 characters at most, so a header of them costs linear time (the
 * time is b0015's; here, what the subject is). */
static void test_encoded_word_bounds(void **state)
{
	struct strbuf text = STRBUF_INIT, s = STRBUF_INIT, want = STRBUF_INIT;
	size_t i;

	(void)state;
	encoded_word_of(&text, 75);
	assert_int_equal(patch_subject(text.buf, text.len, &s), PATCH_SUBJECT_HEADER);
	for (i = 0; i < 63; i++)
		strbuf_addch(&want, 'a');
	assert_string_equal(s.buf, want.buf);	/* decoded */

	encoded_word_of(&text, 76);
	assert_int_equal(patch_subject(text.buf, text.len, &s), PATCH_SUBJECT_HEADER);
	strbuf_reset(&want);
	strbuf_add(&want, text.buf + strlen("Subject: "), 76);
	assert_string_equal(s.buf, want.buf);	/* kept as it is */

	/* a closing "?=" past the 75th character ends no word begun before */
	expect("Subject: =?utf-8?q?bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	       "=?utf-8?q?c?=\n\n" DIFF, PATCH_SUBJECT_HEADER,
	       "=?utf-8?q?bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbc");

	/* 64 KiB of openings with no end: the text as written, cut at 200 bytes */
	strbuf_reset(&text);
	strbuf_addstr(&text, "Subject: ");
	while (text.len < (64u << 10))
		strbuf_addstr(&text, "=?utf-8?q?a");
	strbuf_addstr(&text, "\n\n" DIFF);
	assert_int_equal(patch_subject(text.buf, text.len, &s), PATCH_SUBJECT_HEADER);
	assert_int_equal(s.len, PATCH_SUBJECT_MAX);
	assert_memory_equal(s.buf, "=?utf-8?q?a=?utf-8?q?a", 22);
	assert_string_equal(s.buf + s.len - 3, "...");
	strbuf_release(&text);
	strbuf_release(&s);
	strbuf_release(&want);
}

static void test_plain_diffs(void **state)
{
	(void)state;
	/* the first line of the text before the diff; "---" and headers skipped */
	expect("\nmm: make mprotect cheaper\n\nmore words\n---\n" DIFF, PATCH_SUBJECT_TEXT, "mm: make mprotect cheaper");
	expect("---\n\nfix it\n" DIFF, PATCH_SUBJECT_TEXT, "fix it");
	expect("From: a <a@b>\nDate: x\n\nthe body's first line\n" DIFF, PATCH_SUBJECT_TEXT, "the body's first line");
	/* nothing before the diff: the files it touches */
	expect(DIFF, PATCH_SUBJECT_FILES, "diff touching mm/mprotect.c");
	expect(DIFF "diff --git a/mm/mremap.c b/mm/mremap.c\n--- a/mm/mremap.c\n+++ b/mm/mremap.c\n"
	       "diff --git a/mm/mprotect.c b/mm/mprotect.c\n--- a/mm/mprotect.c\n+++ b/mm/mprotect.c\n"
	       "diff --git a/x b/y\n", PATCH_SUBJECT_FILES, "diff touching mm/mprotect.c and 2 more files");
	/* diff -u of two trees: patch -p1 names; a deleted file by its old name */
	expect("--- linux.orig/arch/x86/mm/tlb.c\t2024-01-01\n+++ linux/arch/x86/mm/tlb.c\t2024-01-02\n@@ -1 +1 @@\n",
	       PATCH_SUBJECT_FILES, "diff touching arch/x86/mm/tlb.c");
	expect("--- a/old.c\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n", PATCH_SUBJECT_FILES, "diff touching old.c");
	/* the first file named, not the first in order; each file counted once,
	 * up to 1000 */
	expect("+++ b/z.c\n+++ b/a.c\n+++ b/z.c\n", PATCH_SUBJECT_FILES, "diff touching z.c and 1 more file");
	expect("no diff here\n", PATCH_SUBJECT_TEXT, "no diff here");
	expect("", PATCH_SUBJECT_NONE, "");
}

static void test_project_patches(void **state)
{
	static const char *const files[][2] = {
		{ "patches/does-not-apply.patch", "x86/mm/tlb: test fixture that does not apply to v6.1" },
		{ "patches/does-not-compile.patch", "diff touching arch/x86/mm/tlb.c" },
		{ "patches/panic-at-boot.patch", "x86/mm/tlb: panic at boot (tlblab test fixture)" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct strbuf text = STRBUF_INIT, s = STRBUF_INIT;

		fixture_read(&text, files[i][0]);
		patch_subject(text.buf, text.len, &s);
		assert_string_equal(s.buf, files[i][1]);
		strbuf_release(&text);
		strbuf_release(&s);
	}
}

/* Untrusted: one line of valid UTF-8, no control characters, bounded. */
static void test_hostile(void **state)
{
	struct strbuf text = STRBUF_INIT, s = STRBUF_INIT;
	size_t i;

	(void)state;
	expect("Subject: [PATCH] a\x1b[2Jb\x07 c\x7f" "d \xe2\x80\xae" "evil\xc2\x85" "x\n\n" DIFF,
	       PATCH_SUBJECT_HEADER, "a [2Jb c d evil x");
	expect("Subject: [PATCH] bad \xff\xfe utf-8 \xc3\n\n" DIFF, PATCH_SUBJECT_HEADER,
	       "bad \xc3\xbf\xc3\xbe utf-8 \xc3\x83");	/* read as Latin-1 */
	expect("Subject: =?utf-8?q?bad_=FF_byte?=\n\n" DIFF, PATCH_SUBJECT_HEADER, "bad ? byte");
	expect("Subject: =?utf-8?q?line=0Abreak=0D_and_=1B=5B31m?=\n\n" DIFF, PATCH_SUBJECT_HEADER,
	       "line break and [31m");
	/* 300 bytes of 'e' with an accent: cut at 200 bytes, between characters */
	strbuf_addstr(&text, "Subject: [PATCH] ");
	for (i = 0; i < 150; i++)
		strbuf_addstr(&text, "\xc3\xa9");
	strbuf_addstr(&text, "\n\n" DIFF);
	assert_int_equal(patch_subject(text.buf, text.len, &s), PATCH_SUBJECT_HEADER);
	assert_true(s.len <= PATCH_SUBJECT_MAX);
	assert_true(s.len >= PATCH_SUBJECT_MAX - 4);
	assert_string_equal(s.buf + s.len - 3, "...");
	assert_int_equal((unsigned char)s.buf[s.len - 4], 0xa9);	/* a whole character before it */
	/* a 4 MiB patch of one file is read to its end */
	strbuf_reset(&text);
	strbuf_addstr(&text, "--- a/x\n+++ b/big.c\n");
	while (text.len < (4u << 20))
		strbuf_addstr(&text, "+xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n");
	assert_int_equal(patch_subject(text.buf, text.len, &s), PATCH_SUBJECT_FILES);
	assert_string_equal(s.buf, "diff touching big.c");
	strbuf_reset(&text);
	for (i = 0; i < 3000; i++)
		strbuf_addf(&text, "+++ b/f%zu.c\n", i % 1500);
	assert_int_equal(patch_subject(text.buf, text.len, &s), PATCH_SUBJECT_FILES);
	assert_string_equal(s.buf, "diff touching f0.c and 999+ more files");
	strbuf_reset(&text);
	for (i = 0; i < 3000; i++)
		strbuf_addf(&text, "+++ b/f%zu.c\n", i % 999);
	assert_int_equal(patch_subject(text.buf, text.len, &s), PATCH_SUBJECT_FILES);
	assert_string_equal(s.buf, "diff touching f0.c and 998 more files");
	strbuf_release(&text);
	strbuf_release(&s);
}

/* ---- series: the mails of an mbox ---- */

#define MAIL(id, subj, body) "From " id " Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\n" \
	"Subject: " subj "\n\n" body "\n-- \n2.39.5\n\n"
#define ID1 "1111111111111111111111111111111111111111"
#define ID2 "2222222222222222222222222222222222222222"
#define ID3 "3333333333333333333333333333333333333333"
#define ID0 "0000000000000000000000000000000000000000"

/* text is read as a series of n patches (cover: its subject, or NULL) */
static void series_ok(const char *text, const char *cover, size_t n, const char *const *subjects)
{
	struct strbuf err = STRBUF_INIT;
	struct patch_series s;
	size_t i;

	if (patch_series_read(text, strlen(text), &s, &err) < 0)
		fail_msg("refused: %s\n%s", err.buf, text);
	assert_int_equal(s.npatches, n);
	assert_int_equal(s.cover, cover != NULL);
	if (cover)
		assert_string_equal(s.cover_subject, cover);
	else
		assert_null(s.cover_subject);
	for (i = 0; i < n; i++)
		assert_string_equal(s.subjects[i], subjects[i]);
	patch_series_release(&s);
	strbuf_release(&err);
}

static void series_refused(const char *text, const char *want)
{
	struct strbuf err = STRBUF_INIT;
	struct patch_series s;

	if (patch_series_read(text, strlen(text), &s, &err) == 0)
		fail_msg("accepted:\n%s", text);
	assert_string_equal(err.buf, want);
	assert_int_equal(s.npatches, 0);
	assert_null(s.subjects);
	strbuf_release(&err);
}

static void test_series(void **state)
{
	static const char *const three[] = { "mm: one", "mm: two", "mm: three" };
	struct strbuf big = STRBUF_INIT;
	struct patch_series s;
	int i;

	(void)state;
	/* git format-patch --cover-letter --stdout: the cover letter, then 3 */
	series_ok(MAIL(ID0, "[PATCH 0/3] mm: a series", "why it matters")
		  MAIL(ID1, "[PATCH 1/3] mm: one", "one\n---\n" DIFF)
		  MAIL(ID2, "[PATCH 2/3] mm: two", "two\n---\n" DIFF)
		  MAIL(ID3, "[PATCH 3/3] mm: three", "three\n---\n" DIFF), "mm: a series", 3, three);
	/* without a cover letter; a body line "From the docs:" followed by a
	 * trailer, after an empty line, does not start a mail */
	series_ok(MAIL(ID1, "[PATCH 1/3] mm: one", "one\n\nFrom the docs:\nSigned-off-by: A <a@b>\n---\n" DIFF)
		  MAIL(ID2, "[PATCH 2/3] mm: two", "---\n" DIFF)
		  MAIL(ID3, "[PATCH 3/3] mm: three", "---\n" DIFF), NULL, 3, three);
	/* one mail without a From line; a plain diff is no series */
	series_ok("Subject: [PATCH] mm: one\n\n" DIFF, NULL, 1, three);
	assert_int_equal(patch_series_read(DIFF, strlen(DIFF), &s, &big), 0);
	assert_int_equal(s.nmails, 0);
	assert_int_equal(s.npatches, 0);
	patch_series_release(&s);

	series_refused(MAIL(ID0, "[PATCH 0/1] mm: cover", "only words"),
		       "the mbox holds no patch: its one mail ('mm: cover') has no diff");
	series_refused(MAIL(ID0, "[PATCH 0/2] mm: cover", "words") MAIL(ID1, "Re: [PATCH 0/2] mm: cover", "me too"),
		       "the mbox holds no patch: none of its 2 mails has a diff");
	series_refused(MAIL(ID1, "[PATCH 1/2] mm: one", "---\n" DIFF) MAIL(ID2, "Re: [PATCH 1/2] mm: one", "nice"),
		       "mail 2 of 2 ('mm: one') has no diff: an mbox holds a series' patches, a cover letter at most first");
	series_refused(MAIL(ID0, "[PATCH 0/2] mm: c", "w") MAIL(ID1, "[PATCH 1/2] mm: one", "---\n" DIFF)
		       MAIL(ID2, "[PATCH 2/2] fw: blob", "---\ndiff --git a/fw.bin b/fw.bin\nGIT binary patch\nliteral 4\nLcmZ?d00001\n"),
		       "patch 2 of 2 ('fw: blob') is a binary diff (GIT binary patch): the lab applies text patches");
	for (i = 0; i < PATCH_SERIES_MAX + 1; i++)
		strbuf_addstr(&big, MAIL(ID1, "[PATCH] mm: one", "---\n" DIFF));
	series_refused(big.buf, "the mbox holds 101 patches, more than 100");
	for (i = 0; i < 5; i++)
		strbuf_addstr(&big, MAIL(ID1, "[PATCH] mm: one", "---\n" DIFF));
	series_refused(big.buf, "the mbox holds more than 100 patches");
	strbuf_release(&big);
}

static void test_clean_line(void **state)
{
	struct strbuf s = STRBUF_INIT;

	(void)state;
	strbuf_add_line_clean(&s, "  a\tb\n\nc  ", 10, 0);
	assert_string_equal(s.buf, "a b c");
	strbuf_reset(&s);
	strbuf_add_line_clean(&s, "abcdefghij", 10, 8);
	assert_string_equal(s.buf, "abcde...");
	strbuf_reset(&s);
	strbuf_add_line_clean(&s, "abcdefgh", 8, 8);
	assert_string_equal(s.buf, "abcdefgh");
	strbuf_reset(&s);
	/* overlong encodings and surrogates are not UTF-8 */
	strbuf_add_line_clean(&s, "\xc0\xaf \xed\xa0\x80 ok", 10, 0);
	assert_string_equal(s.buf, "?? ??? ok");
	assert_int_equal(strbuf_utf8_width("R\xc3\xa9" "e", 4), 3);
	strbuf_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_patch),
		cmocka_unit_test(test_folded_and_encoded),
		cmocka_unit_test(test_encoded_word_bounds),
		cmocka_unit_test(test_plain_diffs),
		cmocka_unit_test(test_project_patches),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_series),
		cmocka_unit_test(test_clean_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
