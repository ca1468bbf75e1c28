/*
 * A bisection's report (report.h): plain text a kernel developer can paste
 * into a reply on the list. It says what was found first, then the
 * numbers it rests on (each end and the first bad commit with their
 * spread and boots, and the A/B verdict between the ends), then every
 * step with its two verdicts, then how to measure it again with tlblab.
 * Made from the stored document alone, so the API and the webhook give
 * the same text. It cleans its free text (subjects, authors, the result,
 * a step's failure) as the job's report does (report_int.h).
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_int.h"
#include "banned.h"

/* "1234.5 (spread 2.1%, 4 boots)" of a side of a row's evidence */
static void level(struct strbuf *out, const json_t *side)
{
	double c = jsonget_num_or(side, "center", NAN), sp = jsonget_num_or(side, "spread_pct", NAN);
	double n = jsonget_num_or(side, "n", NAN);

	if (isnan(c)) {
		strbuf_addstr(out, "-");
		return;
	}
	strbuf_addf(out, "%.6g", c);
	if (!isnan(sp))
		strbuf_addf(out, " (spread %.1f%%, %g boots)", sp, n);
	else
		strbuf_addf(out, " (%g boot%s)", n, n == 1 ? "" : "s");
}

/* "regression, +12.3% (p 0.004)" of a row's evidence */
static void verdict(struct strbuf *out, const json_t *ev)
{
	double ch = jsonget_num_or(ev, "change_pct", NAN), p = jsonget_num_or(ev, "p", NAN);
	double mde = jsonget_num_or(ev, "mde_pct", NAN);

	strbuf_addstr(out, jsonget_str(ev, "verdict") ?: "?");
	if (!isnan(ch))
		strbuf_addf(out, " %+.1f%%", ch);
	if (!isnan(p))
		strbuf_addf(out, " (p %.2g)", p);
	if (verdict_is(ev, "inconclusive") && !isnan(mde))
		strbuf_addf(out, ", could detect %.1f%%", mde);
}

/* "; 0.08 of the way to bad (p 1e-04 nearer good)" of a step's position */
static void position(struct strbuf *out, const json_t *pos)
{
	double x = jsonget_num_or(pos, "x", NAN), pg = jsonget_num_or(pos, "p_good", NAN);
	double pb = jsonget_num_or(pos, "p_bad", NAN);

	if (!pos || isnan(x))
		return;
	strbuf_addf(out, "; %.2f of the way to bad", x);
	if (!isnan(pg) && !isnan(pb))
		strbuf_addf(out, " (p %.2g nearer %s)", pg < pb ? pg : pb, pg < pb ? "good" : "bad");
}

/* "  key:%*s value\n", the value cleaned, "-" when there is none */
static void line(struct strbuf *out, const char *key, const char *value)
{
	strbuf_addf(out, "  %-18s", key);
	report_add_clean(out, value ? value : "-");
	strbuf_addch(out, '\n');
}

/* a step of the bisection (not one of its ends) */
static int is_step(const json_t *s)
{
	return !strcmp(jsonget_str(s, "role") ?: "", "step");
}

/* the commit sha of the range, and the one before it (or the good end) */
static const json_t *commit_of(const json_t *doc, const char *sha, const char **ret_before)
{
	const json_t *commits = jsonget_array(doc, "commits"), *c;
	size_t i;

	json_array_foreach(commits, i, c)
		if (sha && !strcmp(jsonget_str(c, "commit") ?: "", sha)) {
			if (ret_before)
				*ret_before = i ? jsonget_str(json_array_get(commits, i - 1), "commit")
						: jsonget_str(doc, "good");
			return c;
		}
	return NULL;
}

/* the evidence of the last step of commit with an outcome, or NULL */
static const json_t *evidence_of(const json_t *doc, const char *sha)
{
	const json_t *s, *ev = NULL;
	size_t i;

	json_array_foreach(jsonget_array(doc, "steps"), i, s)
		if (sha && !strcmp(jsonget_str(s, "commit") ?: "", sha) && is_step(s) &&
		    json_object_get(s, "evidence") && !json_is_null(json_object_get(s, "evidence")))
			ev = json_object_get(s, "evidence");
	return ev;
}

void report_bisect(const json_t *doc, struct strbuf *out)
{
	const char *first = jsonget_str(doc, "first_bad"), *state = jsonget_str(doc, "state") ?: "?";
	const char *tree = jsonget_str(doc, "tree") ?: "?", *suite = jsonget_str(doc, "suite") ?: "?";
	const char *good = jsonget_str(doc, "good") ?: "?", *bad = jsonget_str(doc, "bad") ?: "?";
	const char *metric = jsonget_str(doc, "metric") ?: "?", *machine = jsonget_str(doc, "machine") ?: "?";
	const char *before = NULL;
	const json_t *fc = commit_of(doc, first, &before), *s, *ends = NULL, *fev = evidence_of(doc, first);
	char *params = json_dumps(json_object_get(doc, "params"), JSON_COMPACT | JSON_SORT_KEYS);
	long long boots = jsonget_int_or(doc, "boots", 0);
	size_t i, k = 0;

	json_array_foreach(jsonget_array(doc, "steps"), i, s)
		if (json_object_get(json_object_get(s, "evidence"), "good_to_bad"))
			ends = json_object_get(json_object_get(s, "evidence"), "good_to_bad");
	strbuf_addf(out, "tlblab bisection %lld", jsonget_int_or(doc, "id", 0));
	if (jsonget_str(doc, "track"))
		strbuf_addf(out, " (track %s, alert %lld)", jsonget_str(doc, "track"), jsonget_int_or(doc, "alert", 0));
	if (first)
		strbuf_addstr(out, ": first bad commit found\n\n");
	else
		strbuf_addf(out, ": %s, no first bad commit\n\n", state);
	if (first) {
		strbuf_addf(out, "  first bad commit: %s\n", first);
		line(out, "subject:", jsonget_str(fc, "subject"));
		line(out, "author:", jsonget_str(fc, "author"));
	}
	if (jsonget_str(doc, "result"))
		line(out, "result:", jsonget_str(doc, "result"));
	strbuf_addf(out, "  range:            %s..%s in tree %s (%zu commits)\n", good, bad, tree,
		    json_array_size(jsonget_array(doc, "commits")));
	strbuf_addf(out, "  metric:           %s of %s %s on %s, suite %s\n", metric, jsonget_str(doc,
												  "workload") ?: "-",
		    params && strcmp(params, "null") ? params : "", machine, suite);
	if (ends) {
		strbuf_addstr(out, "\n  good end:         ");
		level(out, json_object_get(ends, "base"));
		strbuf_addstr(out, "\n  bad end:          ");
		level(out, json_object_get(ends, "patched"));
		if (fev && json_object_get(fev, "vs_good")) {
			strbuf_addstr(out, "\n  first bad:        ");
			level(out, json_object_get(json_object_get(fev, "vs_good"), "patched"));
		}
		strbuf_addstr(out, "\n  good -> bad:      ");
		verdict(out, ends);
		strbuf_addstr(out, "\n");
	}
	strbuf_addstr(out, "\n  steps (each compared with both ends by the A/B rule, and placed between them):\n");
	json_array_foreach(jsonget_array(doc, "steps"), i, s) {
		const json_t *ev = json_object_get(s, "evidence");
		const json_t *c = commit_of(doc, jsonget_str(s, "commit"), NULL);

		if (!is_step(s))
			continue;
		strbuf_addf(out, "  %2zu. %.12s %-12s ", ++k, jsonget_str(s, "commit") ?: "?",
			    jsonget_str(s, "outcome") ?: "(measuring)");
		report_add_clean(out, jsonget_str(c, "subject"));
		strbuf_addch(out, '\n');
		if (jsonget_str(ev, "failed")) {
			strbuf_addstr(out, "      ");
			report_add_clean(out, jsonget_str(ev, "failed"));
			strbuf_addch(out, '\n');
		} else if (json_object_get(ev, "vs_good")) {
			strbuf_addstr(out, "      ");
			level(out, json_object_get(json_object_get(ev, "vs_good"), "patched"));
			strbuf_addstr(out, "; vs good: ");
			verdict(out, json_object_get(ev, "vs_good"));
			strbuf_addstr(out, "; vs bad: ");
			verdict(out, json_object_get(ev, "vs_bad"));
			position(out, json_object_get(ev, "position"));
			strbuf_addstr(out, "\n");
		}
	}
	if (!k)
		strbuf_addstr(out, "      (none)\n");
	strbuf_addf(out, "\n  reproduce:\n    tlblab bisect %s %s %s --suite %s --metric %s --machine %s --boots %lld\n",
		    tree, good, bad, suite, metric, machine, boots);
	if (first && before)
		strbuf_addf(out, "    # the first bad commit alone, as an A/B job on the commit before it:\n"
			    "    git format-patch -1 --stdout %s >first-bad.patch\n"
			    "    tlblab submit --tree %s --base %s --patch first-bad.patch --suite %s --boots %lld\n",
			    first, tree, before, suite, boots);
	free(params);
}
