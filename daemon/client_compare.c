/*
 * `tlblab compare`: the comparison document (schemas/comparison.schema.json)
 * as the tables a kernel developer pastes into a posting. The order is the
 * order of questions: did the headline move (summary), by how much and how
 * sure (rows), how does it scale (thread sweeps), what did the TLB do, where
 * did the time go (profile diff), and what exactly ran (provenance). Every
 * string comes from the server and goes through the table's cleaning or
 * fmt_clean before it reaches the terminal.
 */
#include "client.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "banned.h"

#define SPREAD_SHOWN_PCT 2.0	/* like LKP: spread only when it matters */

static const char *str_or_dash(const json_t *o, const char *k)
{
	const char *s = jstr(o, k);

	return s && *s ? s : "-";
}

/* "+12.5%", or "-" when absent */
static char *fmt_pct(char *buf, const json_t *v)
{
	if (!json_is_number(v) || !isfinite(json_number_value(v)))
		snprintf(buf, FMT_SIZE, "-");
	else
		snprintf(buf, FMT_SIZE, "%+.1f%%", json_number_value(v));
	return buf;
}

static char *fmt_num_json(char *buf, const json_t *v)
{
	if (!json_is_number(v))
		snprintf(buf, FMT_SIZE, "-");
	else
		fmt_number(buf, json_number_value(v));
	return buf;
}

/* "800000 ±3.4%" (spread shown above SPREAD_SHOWN_PCT) */
static char *fmt_center(char *buf, const json_t *side)
{
	double spread;
	size_t n;

	fmt_num_json(buf, json_object_get(side, "center"));
	if (jnum(side, "spread_pct", &spread) == 0 && spread > SPREAD_SHOWN_PCT) {
		n = strlen(buf);
		snprintf(buf + n, FMT_SIZE - n, " ±%.1f%%", spread);
	}
	return buf;
}

static char *fmt_p(char *buf, const json_t *row)
{
	double p;

	if (jnum(row, "p", &p) < 0)
		snprintf(buf, FMT_SIZE, "-");
	else
		snprintf(buf, FMT_SIZE, "%.2g", p);
	return buf;
}

static char *fmt_ci(char *buf, const json_t *ci)
{
	const json_t *lo = json_array_get(ci, 0), *hi = json_array_get(ci, 1);

	if (!json_is_number(lo) || !json_is_number(hi))
		snprintf(buf, FMT_SIZE, "-");
	else
		snprintf(buf, FMT_SIZE, "[%+.1f, %+.1f]", json_number_value(lo), json_number_value(hi));
	return buf;
}

static const char *direction_text(const char *dir)
{
	if (dir && !strcmp(dir, "higher"))
		return "higher is better";
	if (dir && !strcmp(dir, "lower"))
		return "lower is better";
	return "neutral";
}

static void print_summary(FILE *out, const json_t *s)
{
	static const char *const lists[] = { "regressions", "improvements", "changed" };
	char clean[1024], vd[FMT_SIZE], ch[FMT_SIZE], p[FMT_SIZE], ci[FMT_SIZE];
	size_t k, i;
	json_t *e;

	fprintf(out, "summary: %s\n", fmt_clean(clean, sizeof(clean), str_or_dash(s, "text")));
	for (k = 0; k < ARRAY_SIZE(lists); k++)
		json_array_foreach(json_object_get(s, lists[k]), i, e) {
			struct strbuf label = STRBUF_INIT;
			const json_t *params = json_object_get(e, "params");
			const char *key;
			json_t *v;
			int first = 1;

			strbuf_addstr(&label, str_or_dash(e, "metric"));
			json_object_foreach((json_t *)params, key, v) {
				char *txt = json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

				strbuf_addf(&label, "%s%s=%s", first ? " (" : " ", key,
					    txt ? txt : json_string_value(v));
				free(txt);
				first = 0;
			}
			if (!first)
				strbuf_addch(&label, ')');
			fprintf(out, "  %-12s %s  %s  p=%s  CI %s\n", fmt_clean(vd, sizeof(vd), str_or_dash(e, "verdict")),
				fmt_clean(clean, sizeof(clean), label.buf), fmt_pct(ch, json_object_get(e, "change_pct")),
				fmt_p(p, e), fmt_ci(ci, json_object_get(e, "ci")));
			strbuf_release(&label);
		}
}

/* Rows a reader can skip: the same, or counters that moved less than the
 * counter threshold without a verdict. */
static int folded(const json_t *row, double counter_pct)
{
	const char *v = str_or_dash(row, "verdict");
	double ch;

	if (!strcmp(v, "same"))
		return 1;
	if (json_is_true(json_object_get(row, "headline")) || strcmp(v, "inconclusive"))
		return 0;
	return jnum(row, "change_pct", &ch) == 0 && fabs(ch) < counter_pct;
}

static void print_rows(FILE *out, const json_t *cmp, int all)
{
	static const char *const heads[] = {
		"WORKLOAD", "PARAMS", "METRIC", "BASE", "PATCHED", "%CHANGE", "P", "CI %", "VERDICT",
	};
	const json_t *rows = json_object_get(cmp, "rows");
	double counter_pct = 5;
	size_t i, nfolded = 0;
	struct table tab;
	json_t *r;

	if (jnum(json_object_get(cmp, "rules"), "min_change_counter", &counter_pct) == 0)
		counter_pct *= 100;
	table_init(&tab, ARRAY_SIZE(heads), heads, "lllrrrrll");
	json_array_foreach(rows, i, r) {
		char b[FMT_SIZE], p[FMT_SIZE], ch[FMT_SIZE], pv[FMT_SIZE], ci[FMT_SIZE];
		struct strbuf verdict = STRBUF_INIT;

		if (!all && folded(r, counter_pct)) {
			nfolded++;
			continue;
		}
		strbuf_addstr(&verdict, str_or_dash(r, "verdict"));
		if (jstr(r, "reason"))
			strbuf_addf(&verdict, " (%s)", jstr(r, "reason"));
		{
			const char *row[] = {
				jstr(r, "workload"), jstr(r, "params_text"), jstr(r, "metric"),
				fmt_center(b, json_object_get(r, "base")),
				fmt_center(p, json_object_get(r, "patched")),
				fmt_pct(ch, json_object_get(r, "change_pct")), fmt_p(pv, r),
				fmt_ci(ci, json_object_get(r, "ci")), verdict.buf,
			};

			table_add_row(&tab, row);
		}
		strbuf_release(&verdict);
	}
	fputc('\n', out);
	if (tab.nrows)
		table_print(&tab, out, NULL);
	else
		fprintf(out, "no rows\n");
	if (nfolded)
		fprintf(out, "(%zu rows folded: same, or counters that moved less than %g%%; --all shows them)\n",
			nfolded, counter_pct);
	table_release(&tab);
}

static void print_sweeps(FILE *out, const json_t *cmp)
{
	static const char *const heads[] = { "WORKERS", "BASE", "PATCHED", "%CHANGE", "VERDICT" };
	char clean[512], unit[64];
	size_t i, j;
	json_t *sw, *r;

	json_array_foreach(json_object_get(cmp, "sweeps"), i, sw) {
		struct table tab;

		fprintf(out, "\nthread sweep: %s", fmt_clean(clean, sizeof(clean), str_or_dash(sw, "metric")));
		if (jstr(sw, "params_text") && *jstr(sw, "params_text"))
			fprintf(out, " (%s)", fmt_clean(clean, sizeof(clean), jstr(sw, "params_text")));
		fprintf(out, ", %s, %s\n", fmt_clean(unit, sizeof(unit), str_or_dash(sw, "unit")),
			direction_text(jstr(sw, "direction")));
		table_init(&tab, ARRAY_SIZE(heads), heads, "rrrrl");
		json_array_foreach(json_object_get(sw, "rows"), j, r) {
			char w[FMT_SIZE], b[FMT_SIZE], p[FMT_SIZE], ch[FMT_SIZE];
			const char *row[] = {
				fmt_num_json(w, json_object_get(r, "workers")),
				fmt_num_json(b, json_object_get(r, "base")),
				fmt_num_json(p, json_object_get(r, "patched")),
				fmt_pct(ch, json_object_get(r, "change_pct")), jstr(r, "verdict"),
			};

			table_add_row(&tab, row);
		}
		table_print(&tab, out, "  ");
		table_release(&tab);
	}
}

static void print_tlb(FILE *out, const json_t *cmp)
{
	static const char *const heads[] = {
		"CASE", "METRIC", "BASE AVG", "BASE PEAK", "PATCHED AVG", "PATCHED PEAK", "%CHANGE", "VERDICT",
	};
	const json_t *tlb = json_object_get(cmp, "tlb");
	struct table tab;
	size_t i, j;
	json_t *t, *c;

	if (!json_array_size(tlb))
		return;
	fprintf(out, "\nTLB shootdowns (medians over boots; AVG per second over the window, PEAK the "
		"busiest sampling interval)\n");
	table_init(&tab, ARRAY_SIZE(heads), heads, "llrrrrrl");
	json_array_foreach(tlb, i, t) {
		const json_t *spk = json_object_get(t, "shootdowns_per_kop");
		struct strbuf label = STRBUF_INIT;

		strbuf_addstr(&label, str_or_dash(t, "workload"));
		if (jstr(t, "params_text") && *jstr(t, "params_text"))
			strbuf_addf(&label, " %s", jstr(t, "params_text"));
		if (json_is_object(spk)) {
			char b[FMT_SIZE], p[FMT_SIZE], ch[FMT_SIZE];
			const char *row[] = {
				label.buf, "shootdowns/kop", fmt_num_json(b, json_object_get(spk, "base")), NULL,
				fmt_num_json(p, json_object_get(spk, "patched")), NULL,
				fmt_pct(ch, json_object_get(spk, "change_pct")), jstr(spk, "verdict"),
			};

			table_add_row(&tab, row);
		}
		json_array_foreach(json_object_get(t, "counters"), j, c) {
			const json_t *b = json_object_get(c, "base"), *p = json_object_get(c, "patched");
			char ba[FMT_SIZE], bp[FMT_SIZE], pa[FMT_SIZE], pp[FMT_SIZE], name[128];
			const char *row[] = {
				json_is_object(spk) || j ? "" : label.buf, name,
				fmt_num_json(ba, json_object_get(b, "per_sec")),
				fmt_num_json(bp, json_object_get(b, "peak_per_sec")),
				fmt_num_json(pa, json_object_get(p, "per_sec")),
				fmt_num_json(pp, json_object_get(p, "peak_per_sec")), NULL, jstr(c, "verdict"),
			};

			snprintf(name, sizeof(name), "%s/s", str_or_dash(c, "name"));
			table_add_row(&tab, row);
		}
		strbuf_release(&label);
	}
	table_print(&tab, out, "  ");
	table_release(&tab);
}

static void print_profile(FILE *out, const json_t *cmp)
{
	static const char *const heads[] = { "SYMBOL", "BASE SELF%", "PATCHED SELF%", "DELTA" };
	const json_t *pd = json_object_get(cmp, "profile_diff");
	const json_t *syms = json_object_get(pd, "symbols"), *counts = json_object_get(pd, "profiles");
	long long nb = 0, np = 0;
	struct table tab;
	size_t i;
	json_t *s;

	if (!json_array_size(syms))
		return;
	jint(counts, "base", &nb);
	jint(counts, "patched", &np);
	fprintf(out, "\nprofile diff (average self %% over %lld base and %lld patched profiles)\n", nb, np);
	table_init(&tab, ARRAY_SIZE(heads), heads, "lrrr");
	json_array_foreach(syms, i, s) {
		char b[FMT_SIZE], p[FMT_SIZE], d[FMT_SIZE];
		double vb = 0, vp = 0, vd = 0;

		jnum(s, "base_self", &vb);
		jnum(s, "patched_self", &vp);
		jnum(s, "delta", &vd);
		snprintf(b, sizeof(b), "%.2f", vb);
		snprintf(p, sizeof(p), "%.2f", vp);
		snprintf(d, sizeof(d), "%+.2f", vd);
		{
			const char *row[] = { jstr(s, "symbol"), b, p, d };

			table_add_row(&tab, row);
		}
	}
	table_print(&tab, out, "  ");
	table_release(&tab);
}

/* "job=12 kernel=6.1.0" from the scalar fields of a provenance object */
static void add_scalars(struct strbuf *sb, const json_t *o)
{
	const char *k;
	json_t *v;

	if (!json_is_object(o)) {
		strbuf_addstr(sb, "-");
		return;
	}
	json_object_foreach((json_t *)o, k, v) {
		char *txt;

		if (json_is_object(v) || json_is_array(v) || json_is_null(v))
			continue;
		txt = json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		strbuf_addf(sb, "%s%s=%s", sb->len ? " " : "", k, txt ? txt : json_string_value(v));
		free(txt);
	}
}

static void add_list(struct strbuf *sb, const json_t *arr)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
		if (json_is_string(v))
			strbuf_addf(sb, "%s%s", i ? "," : "", json_string_value(v));
	if (!json_array_size(arr))
		strbuf_addstr(sb, "-");
}

static void print_provenance(FILE *out, const json_t *cmp)
{
	static const char *const sides[] = { "base", "patched" };
	const json_t *pv = json_object_get(cmp, "provenance");
	char clean[1024];
	size_t k, i;
	json_t *f, *n;

	fprintf(out, "\nprovenance\n");
	for (k = 0; k < ARRAY_SIZE(sides); k++) {
		struct strbuf sb = STRBUF_INIT;
		long long boots = 0;

		add_scalars(&sb, json_object_get(pv, sides[k]));
		jint(json_object_get(pv, "boots"), sides[k], &boots);
		strbuf_addf(&sb, "; %lld boots on ", boots);
		add_list(&sb, json_object_get(json_object_get(pv, "machines"), sides[k]));
		strbuf_addstr(&sb, "; builds ");
		add_list(&sb, json_object_get(json_object_get(pv, "builds"), sides[k]));
		fprintf(out, "  %-8s %s\n", sides[k], fmt_clean(clean, sizeof(clean), sb.buf));
		strbuf_release(&sb);
	}
	if (json_array_size(json_object_get(cmp, "failed"))) {
		fprintf(out, "\nfailed (not averaged in):\n");
		json_array_foreach(json_object_get(cmp, "failed"), i, f) {
			struct strbuf sb = STRBUF_INIT;
			long long run;
			char *txt = json_is_string(json_object_get(f, "reason")) ? NULL :
				json_dumps(json_object_get(f, "reason"), JSON_ENCODE_ANY | JSON_COMPACT);

			strbuf_addstr(&sb, str_or_dash(f, "side"));
			if (jint(f, "run", &run) == 0)
				strbuf_addf(&sb, " run %lld", run);
			strbuf_addf(&sb, ": %s", txt ? txt : jstr(f, "reason"));
			free(txt);
			fprintf(out, "  %s\n", fmt_clean(clean, sizeof(clean), sb.buf));
			strbuf_release(&sb);
		}
	}
	if (json_array_size(json_object_get(cmp, "notes"))) {
		fprintf(out, "\nnotes:\n");
		json_array_foreach(json_object_get(cmp, "notes"), i, n)
			if (json_is_string(n))
				fprintf(out, "  %s\n", fmt_clean(clean, sizeof(clean), json_string_value(n)));
	}
}

int compare_print(FILE *out, const json_t *cmp, int all, struct strbuf *err)
{
	if (!json_is_object(cmp) || !json_is_array(json_object_get(cmp, "rows")) ||
	    !json_is_object(json_object_get(cmp, "summary")))
		return strbuf_seterr(err, "the server's comparison has no \"rows\" or \"summary\"");
	print_summary(out, json_object_get(cmp, "summary"));
	print_rows(out, cmp, all);
	print_sweeps(out, cmp);
	print_tlb(out, cmp);
	print_profile(out, cmp);
	print_provenance(out, cmp);
	return 0;
}
