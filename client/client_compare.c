/*
 * `tlblab compare`: the comparison document (schemas/comparison.schema.json)
 * as the tables a kernel developer pastes into a posting. The order is the
 * order of questions: did the headline move (summary), by how much and how
 * sure (rows), how does it scale (thread sweeps), what did the TLB do, where
 * did the time go (profile diff), and what exactly ran (provenance). Every
 * string comes from the server and goes through the table's cleaning or
 * client_fmt_clean before it reaches the terminal.
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
	const char *s = jsonget_str(o, k);

	return s && *s ? s : "-";
}

/*
 * An entry's params_text ("k=v" pairs, keys sorted) without the pair that
 * repeats the entry's workload: a suite's spec names its workload among its
 * parameters, and the column beside it already says it.
 */
static void add_params_text(struct strbuf *sb, const json_t *entry)
{
	const char *text = client_jstr_or(entry, "params_text", ""), *wl = jsonget_str(entry, "workload");
	struct strbuf skip = STRBUF_INIT;
	size_t start = sb->len;

	if (wl)
		strbuf_addf(&skip, "workload=%s", wl);
	while (*text) {
		size_t n = strcspn(text, " ");

		if (n && (!wl || n != skip.len || strncmp(text, skip.buf, n)))
			strbuf_addf(sb, "%s%.*s", sb->len > start ? " " : "", (int)n, text);
		text += n;
		text += strspn(text, " ");
	}
	strbuf_release(&skip);
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
		client_fmt_number(buf, json_number_value(v));
	return buf;
}

/* "800000 ±3.4%" (spread shown above SPREAD_SHOWN_PCT) */
static char *fmt_center(char *buf, const json_t *side)
{
	double spread;
	size_t n;

	fmt_num_json(buf, json_object_get(side, "center"));
	if (jsonget_num(side, "spread_pct", &spread) == 0 && spread > SPREAD_SHOWN_PCT) {
		n = strlen(buf);
		snprintf(buf + n, FMT_SIZE - n, " ±%.1f%%", spread);
	}
	return buf;
}

/* p, and the adjusted p after it when there is one: "0.0021/0.0084" */
static char *fmt_p(char *buf, const json_t *row)
{
	double p, adj;

	if (jsonget_num(row, "p", &p) < 0)
		snprintf(buf, FMT_SIZE, "-");
	else if (jsonget_num(row, "p_adj", &adj) == 0)
		snprintf(buf, FMT_SIZE, "%.2g/%.2g", p, adj);
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

	fprintf(out, "summary: %s\n", client_fmt_clean(clean, sizeof(clean), str_or_dash(s, "text")));
	for (k = 0; k < ARRAY_SIZE(lists); k++)
		json_array_foreach(json_object_get(s, lists[k]), i, e) {
			struct strbuf label = STRBUF_INIT;
			const json_t *params = json_object_get(e, "params");

			strbuf_addstr(&label, str_or_dash(e, "metric"));
			/* the metric's name already says the workload */
			if (json_object_size(params)) {
				strbuf_addstr(&label, " (");
				client_add_params(&label, params, "workload");
				strbuf_addch(&label, ')');
			}
			fprintf(out, "  %-12s %s  %s  p=%s  CI %s\n", client_fmt_clean(vd, sizeof(vd), str_or_dash(e, "verdict")),
				client_fmt_clean(clean, sizeof(clean), label.buf), fmt_pct(ch, json_object_get(e, "change_pct")),
				fmt_p(p, e), fmt_ci(ci, json_object_get(e, "ci")));
			strbuf_release(&label);
		}
}

/* Rows a reader can skip: the same, context (untested), or counters that
 * moved less than the counter threshold without a verdict. */
static int folded(const json_t *row, double counter_pct)
{
	const char *v = str_or_dash(row, "verdict");
	double ch;

	if (!strcmp(v, "same") || !strcmp(v, "context"))
		return 1;
	if (json_is_true(json_object_get(row, "headline")) || strcmp(v, "inconclusive"))
		return 0;
	return jsonget_num(row, "change_pct", &ch) == 0 && fabs(ch) < counter_pct;
}

/* "classes: work: ...; wait: ...": the daemon's list of classes, each
 * with its legend (a comparison stored before there was a list has the
 * line as one string) */
static void print_classes(FILE *out, const json_t *classes)
{
	struct strbuf line = STRBUF_INIT;
	char clean[2048];
	const json_t *c;
	size_t i;

	if (json_is_string(classes))
		strbuf_addstr(&line, json_string_value(classes));
	json_array_foreach(classes, i, c)
		strbuf_addf(&line, "%s%s: %s", i ? "; " : "", str_or_dash(c, "name"), str_or_dash(c, "legend"));
	if (line.len)
		fprintf(out, "classes: %s\n", client_fmt_clean(clean, sizeof(clean), line.buf));
	strbuf_release(&line);
}

static void print_rows(FILE *out, const json_t *cmp, int all)
{
	static const char *const heads[] = {
		"WORKLOAD", "PARAMS", "METRIC", "CLASS", "BASE", "PATCHED", "%CHANGE", "P/ADJ", "CI %", "MDE %",
		"VERDICT",
	};
	const json_t *rows = json_object_get(cmp, "rows");
	double counter_pct = 5;
	size_t i, nfolded = 0;
	struct table tab;
	json_t *r;

	if (jsonget_num(json_object_get(cmp, "rules"), "min_change_counter", &counter_pct) == 0)
		counter_pct *= 100;
	client_table_init(&tab, ARRAY_SIZE(heads), heads, "llllrrrrrrl");
	json_array_foreach(rows, i, r) {
		char b[FMT_SIZE], p[FMT_SIZE], ch[FMT_SIZE], pv[FMT_SIZE], ci[FMT_SIZE], mde[FMT_SIZE];
		struct strbuf verdict = STRBUF_INIT, params = STRBUF_INIT;
		double m;

		if (!all && folded(r, counter_pct)) {
			nfolded++;
			continue;
		}
		add_params_text(&params, r);
		if (jsonget_num(r, "mde_pct", &m) == 0)
			snprintf(mde, sizeof(mde), "%.1f", m);
		else
			snprintf(mde, sizeof(mde), "-");
		strbuf_addstr(&verdict, str_or_dash(r, "verdict"));
		if (jsonget_str(r, "reason"))
			strbuf_addf(&verdict, " (%s)", jsonget_str(r, "reason"));
		{
			const char *row[] = {
				jsonget_str(r, "workload"), params.buf, jsonget_str(r, "metric"),
				str_or_dash(r, "class"), fmt_center(b, json_object_get(r, "base")),
				fmt_center(p, json_object_get(r, "patched")),
				fmt_pct(ch, json_object_get(r, "change_pct")), fmt_p(pv, r),
				fmt_ci(ci, json_object_get(r, "ci")), mde, verdict.buf,
			};

			client_table_add_row(&tab, row);
		}
		strbuf_release(&verdict);
		strbuf_release(&params);
	}
	fputc('\n', out);
	/* emulated instructions are not hardware cycles: say what a class is */
	print_classes(out, json_object_get(json_object_get(cmp, "rules"), "classes"));
	if (tab.nrows)
		client_table_print(&tab, out, NULL);
	else
		fprintf(out, "no rows\n");
	if (nfolded)
		fprintf(out, "(%zu rows folded: same, context (not tested), or counters that moved less than %g%%; "
			"--all shows them)\n", nfolded, counter_pct);
	client_table_release(&tab);
}

static void print_sweeps(FILE *out, const json_t *cmp)
{
	static const char *const heads[] = { "WORKERS", "BASE", "PATCHED", "%CHANGE", "VERDICT" };
	static const char *const cpu_heads[] = { "VCPUS", "BASE", "PATCHED", "%CHANGE", "VERDICT" };
	struct strbuf params = STRBUF_INIT;
	char clean[512], unit[64];
	size_t i, j;
	json_t *sw, *r;

	json_array_foreach(json_object_get(cmp, "sweeps"), i, sw) {
		struct table tab;
		/* along cpus: a suite's guest_cpus, a point per guest size */
		int cpus = !strcmp(jsonget_str(sw, "axis") ?: "", "cpus");

		fprintf(out, "\n%s sweep: %s", cpus ? "CPU" : "thread",
			client_fmt_clean(clean, sizeof(clean), str_or_dash(sw, "metric")));
		strbuf_reset(&params);
		add_params_text(&params, sw);
		if (params.len)
			fprintf(out, " (%s)", client_fmt_clean(clean, sizeof(clean), params.buf));
		fprintf(out, ", %s, %s\n", client_fmt_clean(unit, sizeof(unit), str_or_dash(sw, "unit")),
			direction_text(jsonget_str(sw, "direction")));
		client_table_init(&tab, ARRAY_SIZE(heads), cpus ? cpu_heads : heads, "rrrrl");
		json_array_foreach(json_object_get(sw, "rows"), j, r) {
			char w[FMT_SIZE], b[FMT_SIZE], p[FMT_SIZE], ch[FMT_SIZE];
			const char *row[] = {
				fmt_num_json(w, json_object_get(r, json_object_get(r, "x") ? "x" : "workers")),
				fmt_num_json(b, json_object_get(r, "base")),
				fmt_num_json(p, json_object_get(r, "patched")),
				fmt_pct(ch, json_object_get(r, "change_pct")), jsonget_str(r, "verdict"),
			};

			client_table_add_row(&tab, row);
		}
		client_table_print(&tab, out, "  ");
		client_table_release(&tab);
	}
	strbuf_release(&params);
}

/* The shootdown counters a side's kernels could not give, and why (arm64
 * has no TLB interrupts and no tlb_flush tracepoint: its flushes are TLBI
 * instructions). */
static void print_tlb_unavailable(FILE *out, const json_t *cmp, const char *heading)
{
	static const char *const names[] = { "interrupts.TLB", "tlb_flush.*", "vmstat.nr_tlb_remote_flush" };
	const json_t *u = json_object_get(cmp, "unavailable");
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		const char *wb = jsonget_str(json_object_get(u, "base"), names[i]);
		const char *wp = jsonget_str(json_object_get(u, "patched"), names[i]);

		if ((wb || wp) && heading) {
			fprintf(out, "%s", heading);
			heading = NULL;
		}
		if (wb && wp && !strcmp(wb, wp))
			fprintf(out, "  %s unavailable on both sides: %s\n", names[i], wb);
		else if (wb || wp)
			fprintf(out, "  %s unavailable on %s: %s\n", names[i], wb ? "base" : "patched", wb ? wb : wp);
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

	if (!json_array_size(tlb)) {
		print_tlb_unavailable(out, cmp, "\nTLB shootdowns\n");
		return;
	}
	fprintf(out, "\nTLB shootdowns (medians over boots; AVG per second over the window, PEAK the "
		"busiest sampling interval)\n");
	client_table_init(&tab, ARRAY_SIZE(heads), heads, "llrrrrrl");
	json_array_foreach(tlb, i, t) {
		const json_t *spk = json_object_get(t, "shootdowns_per_kop");
		struct strbuf label = STRBUF_INIT;

		strbuf_addstr(&label, str_or_dash(t, "workload"));
		if (jsonget_str(t, "params_text") && *jsonget_str(t, "params_text")) {
			strbuf_addch(&label, ' ');
			add_params_text(&label, t);
		}
		if (json_is_object(spk)) {
			char b[FMT_SIZE], p[FMT_SIZE], ch[FMT_SIZE];
			const char *row[] = {
				label.buf, "shootdowns/kop", fmt_num_json(b, json_object_get(spk, "base")), NULL,
				fmt_num_json(p, json_object_get(spk, "patched")), NULL,
				fmt_pct(ch, json_object_get(spk, "change_pct")), jsonget_str(spk, "verdict"),
			};

			client_table_add_row(&tab, row);
		}
		json_array_foreach(json_object_get(t, "counters"), j, c) {
			const json_t *b = json_object_get(c, "base"), *p = json_object_get(c, "patched");
			char ba[FMT_SIZE], bp[FMT_SIZE], pa[FMT_SIZE], pp[FMT_SIZE], name[128];
			const char *row[] = {
				/* a blank cell under the case's first row, not "-" */
				json_is_object(spk) || j ? " " : label.buf, name,
				fmt_num_json(ba, json_object_get(b, "per_sec")),
				fmt_num_json(bp, json_object_get(b, "peak_per_sec")),
				fmt_num_json(pa, json_object_get(p, "per_sec")),
				fmt_num_json(pp, json_object_get(p, "peak_per_sec")), NULL, jsonget_str(c, "verdict"),
			};

			snprintf(name, sizeof(name), "%s/s", str_or_dash(c, "name"));
			client_table_add_row(&tab, row);
		}
		strbuf_release(&label);
	}
	client_table_print(&tab, out, "  ");
	client_table_release(&tab);
	print_tlb_unavailable(out, cmp, NULL);
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
	jsonget_int(counts, "base", &nb);
	jsonget_int(counts, "patched", &np);
	fprintf(out, "\nprofile diff (average self %% over %lld base and %lld patched profiles)\n", nb, np);
	client_table_init(&tab, ARRAY_SIZE(heads), heads, "lrrr");
	json_array_foreach(syms, i, s) {
		char b[FMT_SIZE], p[FMT_SIZE], d[FMT_SIZE];
		double vb = 0, vp = 0, vd = 0;

		jsonget_num(s, "base_self", &vb);
		jsonget_num(s, "patched_self", &vp);
		jsonget_num(s, "delta", &vd);
		snprintf(b, sizeof(b), "%.2f", vb);
		snprintf(p, sizeof(p), "%.2f", vp);
		snprintf(d, sizeof(d), "%+.2f", vd);
		{
			const char *row[] = { jsonget_str(s, "symbol"), b, p, d };

			client_table_add_row(&tab, row);
		}
	}
	client_table_print(&tab, out, "  ");
	client_table_release(&tab);
}

/* "job=12 kernel=6.1.0" from the scalar fields of a provenance object of
 * another shape than the daemon's (a document made by hand) */
static void add_scalars(struct strbuf *sb, const json_t *o)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)o, k, v) {
		if (json_is_object(v) || json_is_array(v) || json_is_null(v))
			continue;
		strbuf_addf(sb, "%s%s=", sb->len ? " " : "", k);
		client_add_json_value(sb, v);
	}
}

/* "build b1f2e3d4c5a6 (6.1.0-tlblab+, commit f6e5d4c3b2a1, config 9c1e, gcc 12.2.0)" */
static void add_build(struct strbuf *sb, const json_t *b)
{
	static const char *const hashes[][2] = { { "commit", "commit" }, { "config_hash", "config" } };
	const char *release = jsonget_str(json_object_get(b, "meta"), "kernel_release");
	size_t k, n = 0;

	strbuf_addf(sb, "build %.12s", client_jstr_or(b, "build_id", "-"));
	if (release)
		strbuf_addf(sb, "%s%s", n++ ? ", " : " (", release);
	for (k = 0; k < ARRAY_SIZE(hashes); k++)
		if (jsonget_str(b, hashes[k][0]))
			strbuf_addf(sb, "%s%s %.12s", n++ ? ", " : " (", hashes[k][1], jsonget_str(b, hashes[k][0]));
	if (jsonget_str(b, "compiler"))
		strbuf_addf(sb, "%s%s", n++ ? ", " : " (", jsonget_str(b, "compiler"));
	if (n)
		strbuf_addch(sb, ')');
}

/*
 * What one side ran, from the daemon's provenance of it: {"job": JOB,
 * "builds": [{"side", "build_id", "commit", ...}]}. Both sides of an A/B
 * job are the same job, so its builds are told apart by side; two jobs
 * compared whole show each job's builds. Returns 1 when builds were named.
 */
static int add_side_provenance(struct strbuf *sb, const json_t *pv, const char *side)
{
	const json_t *p = json_object_get(pv, side), *job = json_object_get(p, "job");
	char idbuf[FMT_SIZE];
	long long id, other;
	int one_job, named = 0;
	size_t i;
	json_t *b;

	if (!json_is_object(job)) {
		add_scalars(sb, p);
		return 0;
	}
	one_job = jsonget_int(job, "id", &id) == 0 &&
		  jsonget_int(json_object_get(json_object_get(pv, strcmp(side, "base") ? "base" : "patched"), "job"),
		       "id", &other) == 0 && id == other;
	strbuf_addf(sb, "job %s", client_fmt_id(idbuf, job, "id"));
	json_array_foreach(json_object_get(p, "builds"), i, b) {
		if (one_job && jsonget_str(b, "side") && strcmp(jsonget_str(b, "side"), side))
			continue;
		strbuf_addstr(sb, named++ ? ", " : ": ");
		add_build(sb, b);
	}
	return named > 0;
}

static void add_list(struct strbuf *sb, const json_t *arr)
{
	size_t i;
	json_t *v;

	client_join_strings(sb, arr, ",");
	json_array_foreach(arr, i, v)
		if (json_is_string(v))
			return;
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
		int builds_named = add_side_provenance(&sb, pv, sides[k]);

		jsonget_int(json_object_get(pv, "boots"), sides[k], &boots);
		strbuf_addf(&sb, "%s%lld boot%s on ", sb.len ? "; " : "", boots, boots == 1 ? "" : "s");
		add_list(&sb, json_object_get(json_object_get(pv, "machines"), sides[k]));
		if (!builds_named && json_array_size(json_object_get(json_object_get(pv, "builds"), sides[k]))) {
			strbuf_addstr(&sb, "; builds ");
			add_list(&sb, json_object_get(json_object_get(pv, "builds"), sides[k]));
		}
		fprintf(out, "  %-8s %s\n", sides[k], client_fmt_clean(clean, sizeof(clean), sb.buf));
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
			if (jsonget_int(f, "run", &run) == 0)
				strbuf_addf(&sb, " run %lld", run);
			strbuf_addf(&sb, ": %s", txt ? txt : jsonget_str(f, "reason"));
			free(txt);
			fprintf(out, "  %s\n", client_fmt_clean(clean, sizeof(clean), sb.buf));
			strbuf_release(&sb);
		}
	}
	if (json_array_size(json_object_get(cmp, "notes"))) {
		fprintf(out, "\nnotes:\n");
		json_array_foreach(json_object_get(cmp, "notes"), i, n)
			if (json_is_string(n))
				fprintf(out, "  %s\n", client_fmt_clean(clean, sizeof(clean), json_string_value(n)));
	}
}

int client_compare_print(FILE *out, const json_t *cmp, int all, struct strbuf *err)
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

/* --- a per-patch series --------------------------------------------------- */

/* "+28.5% regression", "-" for a cell not compared */
static void add_step_cell(struct strbuf *sb, const json_t *cell)
{
	char pct[FMT_SIZE];

	if (!json_is_object(cell)) {
		strbuf_addstr(sb, "-");
		return;
	}
	strbuf_addf(sb, "%s %s", fmt_pct(pct, json_object_get(cell, "change_pct")), str_or_dash(cell, "verdict"));
}

int client_per_patch_print(FILE *out, const json_t *pp, struct strbuf *err)
{
	static const char *const job_heads[] = { "PATCH", "JOB", "STATE", "VERDICT (1..k VS BASE)", "SUBJECT" };
	const json_t *jobs = json_object_get(pp, "jobs"), *rows = json_object_get(pp, "rows"), *j, *r, *v;
	size_t i, k, n = json_array_size(jobs);
	const char **heads;
	char clean[512], *align;
	struct table tab;

	if (!json_is_array(jobs) || !json_is_array(rows)) {
		return strbuf_seterr(err, "the server's answer has no per-patch \"jobs\" or \"rows\"");
	}
	fprintf(out, "per-patch series: %s (%zu patches; job k applies patches 1..k on the base)\n",
		client_fmt_clean(clean, sizeof(clean), client_jstr_or(pp, "series", "-")), n);
	client_table_init(&tab, ARRAY_SIZE(job_heads), job_heads, "rrlll");
	json_array_foreach(jobs, i, j) {
		char kk[FMT_SIZE], id[FMT_SIZE], subj[256];
		const char *row[] = { client_fmt_id(kk, j, "k"), client_fmt_id(id, j, "id"), str_or_dash(j, "state"),
				      str_or_dash(j, "verdict"),
				      client_fmt_clean(subj, sizeof(subj), client_jstr_or(j, "patch_subject", "-")) };

		client_table_add_row(&tab, row);
	}
	client_table_print(&tab, out, "  ");
	client_table_release(&tab);

	fprintf(out, "\nwhich patch moved what: each patch's step (its prefix against the one before), "
		"per headline row\n");
	heads = xcalloc(n + 4, sizeof(*heads));
	heads[0] = "WORKLOAD";
	heads[1] = "PARAMS";
	heads[2] = "METRIC";
	for (k = 0; k < n; k++) {
		char *h = xmalloc(32);

		snprintf(h, 32, "PATCH %zu", k + 1);
		heads[3 + k] = h;
	}
	heads[3 + n] = "MOVED BY";
	align = xcalloc(n + 5, 1);
	memset(align, 'l', n + 4);
	client_table_init(&tab, n + 4, heads, align);
	json_array_foreach(rows, i, r) {
		struct strbuf *cells = xcalloc(n + 4, sizeof(*cells));
		const char **row = xcalloc(n + 4, sizeof(*row));

		for (k = 0; k < n + 4; k++)
			strbuf_init(&cells[k], 0);
		strbuf_addstr(&cells[0], str_or_dash(r, "workload"));
		add_params_text(&cells[1], r);
		strbuf_addstr(&cells[2], str_or_dash(r, "metric"));
		for (k = 0; k < n; k++)
			add_step_cell(&cells[3 + k], json_array_get(json_object_get(r, "steps"), k));
		json_array_foreach(json_object_get(r, "moved_by"), k, v)
			strbuf_addf(&cells[3 + n], "%s%lld", k ? "," : "", (long long)json_integer_value(v));
		if (!cells[3 + n].len)
			strbuf_addstr(&cells[3 + n], "none");
		for (k = 0; k < n + 4; k++)
			row[k] = cells[k].buf;
		client_table_add_row(&tab, row);
		for (k = 0; k < n + 4; k++)
			strbuf_release(&cells[k]);
		free(cells);
		free(row);
	}
	if (tab.nrows)
		client_table_print(&tab, out, NULL);
	else
		fprintf(out, "no rows yet: no job of the series is done\n");
	client_table_release(&tab);
	for (k = 0; k < n; k++)
		free((char *)heads[3 + k]);
	free(heads);
	free(align);
	json_array_foreach(json_object_get(pp, "notes"), i, v)
		fprintf(out, "note: %s\n", client_fmt_clean(clean, sizeof(clean), json_string_value(v) ?: ""));
	return 0;
}
