/*
 * intake-time: what a POST /api/v1/jobs body costs to read, for `make
 * bench` (b0015). Each shape is a patch made to cost the intake parsers
 * (daemon/intake/patch.c) the most per byte: RFC 2047 openings with no end,
 * a folded Subject: of many lines, "[PATCH]" prefixes, an mbox of many
 * mails, a diff of many files. It is wrapped in a JOB_REQUEST and read by
 * submit_request_parse (daemon/sched/submit.h), the function the API calls,
 * against a small lab. Per shape and size: the median of --runs runs of
 * the CPU time the reading thread spent (the machine may be shared);
 * each size after the first is also given as a ratio to the first size's
 * time scaled up to it ("x linear": near 1 or below when the time grows
 * linearly with the input, growing with the size when it does not);
 * and, at the last size, the time json_loadb alone takes on that body
 * (what any POST of that size costs before its fields are read).
 *
 *   intake-time [--runs N] [--sizes KIB,KIB...] [--shape NAME]
 *
 * Sizes in KiB, 1,1024 by default (the API's default lab.max_body is
 * 1 MiB). The bodies are made before the clock starts.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "store.h"
#include "submit.h"
#include "util.h"
/* the lab the API fuzzers read bodies against: the same lookups */
#include "../fuzz/fuzz_lab.h"
#include "banned.h"

#define MAX_SIZES 8
/* a sample of a small body runs it this many times at least, so that
 * the clock's resolution does not make its time */
#define MIN_SAMPLE_S 0.01

#define D100 "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
#define DIFF "\n---\ndiff --git a/mm/x.c b/mm/x.c\n--- a/mm/x.c\n+++ b/mm/x.c\n@@ -1 +1 @@\n-a\n+b\n"

/* "head" then "unit" until the text is about size bytes, then "tail" */
struct shape {
	const char *name, *what;
	const char *head, *unit, *tail;
	int numbered;		/* unit is a format of one %d: 0..999 */
};

static const struct shape shapes[] = {
	{ "eq-q", "Subject: \"=?\" repeated", "Subject: ", "=?", "\n" DIFF, 0 },
	{ "open-words", "Subject: \"=?utf-8?q?a\" repeated, no \"?=\"", "Subject: ", "=?utf-8?q?a", "\n" DIFF, 0 },
	{ "folded", "Subject: folded over lines of open words", "Subject: [PATCH] x\n",
	  " =?utf-8?q?a=?utf-8?q?a=?utf-8?q?a=?utf-8?q?a=?utf-8?q?a=?utf-8?q?a\n", DIFF, 0 },
	{ "words", "Subject: encoded words, whitespace between", "Subject: ", "=?utf-8?q?=C3=A9t=C3=A9?= ",
	  "\n" DIFF, 0 },
	{ "prefixes", "Subject: \"Re: [PATCH v2 1/3] \" repeated", "Subject: ", "Re: [PATCH v2 1/3] ", "x\n" DIFF, 0 },
	{ "brackets", "Subject: \"[\" repeated, no \"]\"", "Subject: ", "[", "\n" DIFF, 0 },
	{ "mbox", "an mbox of many short mails", "",
	  "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] a\n\nb\n" DIFF,
	  "", 0 },
	{ "files", "a diff of 1000 files, over and over", "", "+++ b/%03d\n", "", 1 },
	{ "long-files", "a diff of 1000 files, long names alike", "",
	  "+++ b/" D100 D100 D100 D100 D100 D100 D100 D100 D100 D100 "/%03d\n", "", 1 },
};

static void make_patch(const struct shape *sh, size_t size, struct strbuf *ret)
{
	int k = 0;

	strbuf_reset(ret);
	strbuf_addstr(ret, sh->head);
	while (ret->len + strlen(sh->unit) + strlen(sh->tail) <= size) {
		if (sh->numbered)
			strbuf_addf(ret, sh->unit, k % 1000);
		else
			strbuf_addstr(ret, sh->unit);
		k++;
	}
	strbuf_addstr(ret, sh->tail);
}

/* The JSON body of an A/B job with that patch. */
static char *make_body(const char *patch)
{
	json_t *doc = json_pack("{s:s,s:s,s:s,s:s}", "suite", "tlb", "tree", "linux", "base", "v6.1", "patch", patch);
	char *s = json_dumps(doc, JSON_COMPACT);

	json_decref(doc);
	if (!s)
		abort();
	return s;
}

/* One read of the body, as api_create_job does; 0 when it was taken. */
static int parse_once(const struct lab_config *cfg, const char *body, size_t len)
{
	struct strbuf err = STRBUF_INIT, subject = STRBUF_INIT;
	struct job_request req;
	json_t *doc = NULL;
	int r = submit_request_parse(cfg, body, len, &doc, &req, &subject, &err);

	json_decref(doc);
	strbuf_release(&err);
	strbuf_release(&subject);
	return r;
}

/* Only the JSON of the body, which every POST pays before its fields are
 * read: the floor under parse_once. */
static int json_once(const struct lab_config *cfg, const char *body, size_t len)
{
	json_t *doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);

	(void)cfg;
	json_decref(doc);
	return doc ? 0 : -1;
}

/* This thread's CPU seconds: what a read costs the API thread that does
 * it, whatever else the (shared) machine runs meanwhile. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The median CPU seconds of one call of fn over runs samples. */
static double time_body(int (*fn)(const struct lab_config *, const char *, size_t), const struct lab_config *cfg,
			const char *body, int runs)
{
	double *t = xcalloc((size_t)runs, sizeof(*t)), med;
	size_t len = strlen(body), reps = 1, i;
	double t0 = cpu_now();
	int r;

	fn(cfg, body, len);	/* warm: allocator, caches */
	while (cpu_now() - t0 < MIN_SAMPLE_S) {
		fn(cfg, body, len);
		reps++;
	}
	for (r = 0; r < runs; r++) {
		t0 = cpu_now();
		for (i = 0; i < reps; i++)
			fn(cfg, body, len);
		t[r] = (cpu_now() - t0) / (double)reps;
	}
	med = median_inplace(t, (size_t)runs);
	free(t);
	return med;
}

static int parse_sizes(const char *s, size_t *ret, size_t *ret_n)
{
	char *copy = xstrdup(s), *p = copy, *comma;
	long kib;
	size_t n = 0;
	int rc = 0;

	do {
		if ((comma = strchr(p, ',')))
			*comma = '\0';
		if (n == MAX_SIZES || parse_int_range(p, 1, 64 * 1024, &kib) < 0) {
			rc = -1;
			break;
		}
		ret[n++] = (size_t)kib * 1024;
		p = comma + 1;
	} while (comma);
	free(copy);
	*ret_n = n;
	return rc;
}

int main(int argc, char **argv)
{
	struct strbuf patch = STRBUF_INIT;
	size_t sizes[MAX_SIZES] = { 1024, 1024 * 1024 }, nsizes = 2, si, k;
	const char *only = NULL;
	struct lab_config *cfg;
	long runs = 5;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--runs") && i + 1 < argc && parse_int_range(argv[i + 1], 1, 1000, &runs) == 0)
			i++;
		else if (!strcmp(argv[i], "--sizes") && i + 1 < argc && parse_sizes(argv[i + 1], sizes, &nsizes) == 0)
			i++;
		else if (!strcmp(argv[i], "--shape") && i + 1 < argc)
			only = argv[++i];
		else {
			fprintf(stderr, "usage: intake-time [--runs N] [--sizes KIB,KIB...] [--shape NAME]\n");
			return 2;
		}
	}
	cfg = fuzz_lab();
	printf("submit_request_parse of a POST /api/v1/jobs body, CPU ms, median of %ld runs; "
	       "x linear: the time over the first size's scaled up to it; of which JSON: json_loadb alone, "
	       "at the last size\n", runs);
	printf("%-11s %-46s", "shape", "patch");
	for (si = 0; si < nsizes; si++)
		printf(" %9zu KiB%s", sizes[si] / 1024, si ? "  x linear" : "");
	printf("  of which JSON\n");
	for (k = 0; k < ARRAY_SIZE(shapes); k++) {
		const struct shape *sh = &shapes[k];
		double first = 0;

		if (only && strcmp(only, sh->name))
			continue;
		printf("%-11s %-46s", sh->name, sh->what);
		fflush(stdout);
		for (si = 0; si < nsizes; si++) {
			char *body;
			double t;

			make_patch(sh, sizes[si], &patch);
			body = make_body(patch.buf);
			t = time_body(parse_once, cfg, body, (int)runs);
			if (!si)
				first = t;
			printf(" %13.3f", 1e3 * t);
			if (si)
				printf(" %9.2f", t / (first * (double)sizes[si] / (double)sizes[0]));
			if (si == nsizes - 1)
				printf(" %14.3f", 1e3 * time_body(json_once, cfg, body, (int)runs));
			free(body);
			fflush(stdout);
		}
		printf("\n");
	}
	config_free(cfg);
	strbuf_release(&patch);
	return 0;
}
