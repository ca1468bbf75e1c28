/*
 * The views of a comparison that read its rows: the summary (headline
 * changes, counts, a line of text), the thread sweeps and the TLB block.
 * They are derived from the rows themselves, so a number never differs
 * between two places of the document.
 */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_class.h"
#include "compare_int.h"
#include "util.h"
#include "banned.h"

static const char *const shootdown_counters[] = {
	"interrupts.TLB", "vmstat.nr_tlb_remote_flush_received", "tlb_flush.remote_shootdown",
};

static json_t *summary_entry(const json_t *row)
{
	return json_pack("{s:O,s:O,s:s,s:O,s:s,s:O,s:O,s:O,s:O,s:s}", "spec", json_object_get(row, "spec"),
			 "case", json_object_get(row, "case"), "workload", jsonget_str(row, "workload"),
			 "params", json_object_get(row, "params"), "metric", jsonget_str(row, "metric"),
			 "change_pct", json_object_get(row, "change_pct"), "p", json_object_get(row, "p"),
			 "p_adj", json_object_get(row, "p_adj"),
			 "ci", json_object_get(row, "ci"), "verdict", jsonget_str(row, "verdict"));
}

static int by_abs_change(const void *x, const void *y)
{
	const json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
	double ca = fabs(jsonget_num_or(a, "change_pct", 0));
	double cb = fabs(jsonget_num_or(b, "change_pct", 0));

	if (json_is_null(json_object_get(a, "change_pct")))
		ca = INFINITY;
	if (json_is_null(json_object_get(b, "change_pct")))
		cb = INFINITY;
	return ca > cb ? -1 : ca < cb;
}

/* ---- by class ---- */

static const char *const class_verdicts[] = {
	"regression", "improvement", "changed", "inconclusive", "same", "unavailable",
};

/* a class's lead rows: its headline rows, and the scores that lost the
 * headline to instruction rows (time's: every score is a clock's) */
static int leads_class(const struct row *row, const struct compare_class *cls)
{
	return row->v.cls == cls && (row->v.role == COMPARE_ROLE_HEADLINE || row->v.role == COMPARE_ROLE_SCORE);
}

/* "kernel instructions per op" for the instruction rows, else the metric */
static void row_label(struct strbuf *sb, const json_t *row)
{
	static const char *const insn[][2] = {
		{ "kernel_insn_per_op", "kernel instructions per op" },
		{ "user_insn_per_op", "user instructions per op" },
		{ "spin_insn_per_op", "spin-wait instructions per op" },
		{ "perf_kernel_insn_per_op", "kernel instructions per op (perf)" },
		{ "perf_user_insn_per_op", "user instructions per op (perf)" },
	};
	const char *wl = jsonget_str(row, "workload"), *metric = jsonget_str(row, "metric");
	size_t i, n = strlen(wl);

	for (i = 0; i < ARRAY_SIZE(insn); i++)
		if (!strncmp(metric, wl, n) && metric[n] == '.' && !strcmp(metric + n + 1, insn[i][0])) {
			strbuf_addf(sb, "%s %s", wl, insn[i][1]);
			return;
		}
	strbuf_addstr(sb, metric);
}

/* What a class's lead rows saw, in words, and its one verdict. */
static json_t *class_verdict(const struct row *rows, size_t n, const struct compare_class *cls)
{
	long long count[ARRAY_SIZE(class_verdicts)] = { 0 };
	double mde = NAN, least = 0, beyond = NAN;
	int headline = 0, shown = 0, called = 0, all_beyond = 1;
	struct strbuf text = STRBUF_INIT;
	const char *verdict = "unavailable";
	size_t i, k;
	json_t *o;

	for (i = 0; i < n; i++) {
		const char *v = jsonget_str(rows[i].obj, "verdict");

		if (!leads_class(&rows[i], cls))
			continue;
		headline |= rows[i].headline;
		for (k = 0; k < ARRAY_SIZE(class_verdicts); k++)
			count[k] += !strcmp(v, class_verdicts[k]);
		if (!strcmp(v, "regression") || !strcmp(v, "improvement") || !strcmp(v, "changed"))
			called++;
		if (!strcmp(v, "same"))
			least = fmax(least, fmin(rows[i].v.min_change, rows[i].v.margin));
		if (!strcmp(v, "inconclusive")) {
			if (!isnan(rows[i].v.mde))
				mde = isnan(mde) ? rows[i].v.mde : fmax(mde, rows[i].v.mde);
			if (isnan(rows[i].v.beyond))
				all_beyond = 0;
			else
				beyond = isnan(beyond) ? rows[i].v.beyond : fmax(beyond, rows[i].v.beyond);
		}
	}
	/* the class's word: the first kind of verdict any lead row has */
	for (k = 0; k < ARRAY_SIZE(class_verdicts); k++)
		if (count[k]) {
			verdict = class_verdicts[k];
			break;
		}
	for (k = 0; k < 3 && called; k++)	/* regressions, improvements, changes */
		for (i = 0; i < n; i++) {
			const json_t *c = json_object_get(rows[i].obj, "change_pct");

			if (!leads_class(&rows[i], cls) ||
			    strcmp(jsonget_str(rows[i].obj, "verdict"), class_verdicts[k]))
				continue;
			if (shown++ == 3)
				continue;
			if (text.len)
				strbuf_addstr(&text, ", ");
			if (json_is_number(c))
				strbuf_addf(&text, "%+.1f%% ", json_number_value(c));
			row_label(&text, rows[i].obj);
			strbuf_addf(&text, " (%s)", class_verdicts[k]);
		}
	if (shown > 3)
		strbuf_addf(&text, " and %d more", shown - 3);
	if (!called) {
		if (!strcmp(verdict, "same"))
			strbuf_addf(&text, "same (within +-%.1f%%)", least);
		else if (!strcmp(verdict, "inconclusive") && all_beyond && !isnan(beyond))
			strbuf_addf(&text, "inconclusive, no change beyond %.0f%%", beyond);
		else if (!strcmp(verdict, "inconclusive") && !isnan(mde))
			strbuf_addf(&text, "inconclusive, could have seen %.0f%%", mde);
		else if (!strcmp(verdict, "inconclusive"))
			strbuf_addstr(&text, "inconclusive");
		else
			strbuf_addstr(&text, "not measured");
	}
	if (!headline && strcmp(verdict, "unavailable"))
		strbuf_addstr(&text, " (shown, not the job's verdict)");
	o = json_pack("{s:s,s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:s}", "verdict", verdict, "makes_job_verdict", headline,
		      "regressions", count[0], "improvements", count[1], "changed", count[2],
		      "inconclusive", count[3], "same", count[4], "unavailable", count[5], "text", text.buf);
	strbuf_release(&text);
	return o;
}

json_t *compare_build_by_class(const struct row *rows, size_t n)
{
	json_t *o = json_object();
	size_t k;

	for (k = 0; k < compare_class_count(); k++) {
		const struct compare_class *c = compare_class_at(k);

		if (c->flags & COMPARE_CLASS_TESTED)
			json_object_set_new(o, c->name, class_verdict(rows, n, c));
	}
	return o;
}

/* "time: interrupts.TLB.per_kop +37.0% regression, ..." : the tested rows
 * outside the headline that were called, by class, three at most */
static void moved_rows(struct strbuf *sb, const struct row *rows, size_t n)
{
	size_t i, shown = 0, more = 0;

	for (i = 0; i < n; i++) {
		const char *v = jsonget_str(rows[i].obj, "verdict");
		const json_t *c = json_object_get(rows[i].obj, "change_pct");

		if (rows[i].headline || (strcmp(v, "regression") && strcmp(v, "improvement") && strcmp(v, "changed")))
			continue;
		if (shown == 3) {
			more++;
			continue;
		}
		strbuf_addf(sb, "%s%s: ", shown++ ? ", " : "", rows[i].v.cls ? rows[i].v.cls->name : "?");
		row_label(sb, rows[i].obj);
		if (json_is_number(c))
			strbuf_addf(sb, " %+.1f%%", json_number_value(c));
		else if (json_is_number(json_object_get(rows[i].obj, "change_abs")))
			strbuf_addf(sb, " %+.4g %s", jsonget_num_or(rows[i].obj, "change_abs", 0),
				    jsonget_str(rows[i].obj, "unit"));
		strbuf_addf(sb, " %s", v);
	}
	if (more)
		strbuf_addf(sb, " and %zu more", more);
}

/* "1 other work row regressed": the rows of classes whose secondary
 * regressions are the job's (COMPARE_CLASS_SECONDARY_COUNTS), by name */
static void counted_rows(struct strbuf *sb, long long n)
{
	size_t k, shown = 0;

	strbuf_addf(sb, "%lld other ", n);
	for (k = 0; k < compare_class_count(); k++)
		if (compare_class_at(k)->flags & COMPARE_CLASS_SECONDARY_COUNTS)
			strbuf_addf(sb, "%s%s", shown++ ? "/" : "", compare_class_at(k)->name);
	strbuf_addf(sb, " row%s regressed", n == 1 ? "" : "s");
}

json_t *compare_build_summary(const struct row *rows, size_t n, const json_t *by_class)
{
	json_t *reg = json_array(), *imp = json_array(), *chg = json_array();
	long long same = 0, inc = 0, unav = 0, creg = 0, cimp = 0, cchg = 0, moved = 0, wreg = 0;
	struct strbuf text = STRBUF_INIT, not_same = STRBUF_INIT;
	size_t i, k;
	json_t *lists[3], *e;

	for (i = 0; i < n; i++) {
		const char *v = jsonget_str(rows[i].obj, "verdict");

		if (!strcmp(v, "context"))
			continue;
		if (!rows[i].headline) {
			moved += json_is_true(json_object_get(rows[i].obj, "moved_alone"));
			creg += !strcmp(v, "regression");
			wreg += !strcmp(v, "regression") && rows[i].v.cls &&
				(rows[i].v.cls->flags & COMPARE_CLASS_SECONDARY_COUNTS);
			cimp += !strcmp(v, "improvement");
			cchg += !strcmp(v, "changed");
			continue;
		}
		if (!strcmp(v, "regression"))
			json_array_append_new(reg, summary_entry(rows[i].obj));
		else if (!strcmp(v, "improvement"))
			json_array_append_new(imp, summary_entry(rows[i].obj));
		else if (!strcmp(v, "changed"))
			json_array_append_new(chg, summary_entry(rows[i].obj));
		else if (!strcmp(v, "same"))
			same++;
		else if (!strcmp(v, "inconclusive"))
			inc++;
		else
			unav++;
	}
	compare_sort_array(reg, by_abs_change);
	compare_sort_array(imp, by_abs_change);
	compare_sort_array(chg, by_abs_change);
	lists[0] = reg, lists[1] = imp, lists[2] = chg;
	for (k = 0; k < 3; k++)
		json_array_foreach(lists[k], i, e) {
			struct strbuf pt = STRBUF_INIT;
			const json_t *c = json_object_get(e, "change_pct");

			compare_params_text(&pt, json_object_get(e, "params"));
			if (text.len)
				strbuf_addstr(&text, "; ");
			strbuf_addstr(&text, jsonget_str(e, "metric"));
			if (pt.len)
				strbuf_addf(&text, " (%s)", pt.buf);
			if (json_is_number(c))
				strbuf_addf(&text, " %+.1f%%", json_number_value(c));
			strbuf_addf(&text, " %s", jsonget_str(e, "verdict"));
			strbuf_release(&pt);
		}
	if (!text.len)
		strbuf_addstr(&text, "no headline change");
	strbuf_addf(&text, "; %lld same, %lld inconclusive", same, inc);
	/* the kernel's work that is not the headline (the TLB model's page
	 * walks and lost translations): a regression there is the job's,
	 * unless a headline row regressed already (then it is said above) */
	if (wreg && !json_array_size(reg)) {
		strbuf_addstr(&text, ". ");
		counted_rows(&text, wreg);
		strbuf_addstr(&text, json_array_size(imp) ? " while the headline improved: changed (" : ": a regression (");
		moved_rows(&text, rows, n);
		strbuf_addch(&text, ')');
	}
	if (unav)
		strbuf_addf(&text, ", %lld unavailable", unav);
	/* same promises that nothing the job tested moved: not while a
	 * headline row is missing, nor while another tested row was called */
	if (!json_array_size(reg) && !json_array_size(imp) && !json_array_size(chg) && !inc && same && !wreg &&
	    (unav || creg + cimp + cchg || moved)) {
		if (unav)
			strbuf_addf(&not_same, "%lld headline row%s unavailable", unav, unav == 1 ? "" : "s");
		if (creg + cimp + cchg) {
			strbuf_addf(&not_same, "%s%lld other tested row%s called a change (", not_same.len ? "; " : "",
				    creg + cimp + cchg, creg + cimp + cchg == 1 ? "" : "s");
			moved_rows(&not_same, rows, n);
			strbuf_addch(&not_same, ')');
		}
		if (moved)
			strbuf_addf(&not_same, "%s%lld score%s moved past the least change at %s own alpha, "
				    "which Holm cannot test at these boots", not_same.len ? "; " : "", moved, moved == 1 ? "" : "s",
				    moved == 1 ? "its" : "their");
		strbuf_addf(&text, ". Not same: %s", not_same.buf);
	}
	{
		const char *cname;
		const json_t *cv;
		int first = 1;

		json_object_foreach((json_t *)by_class, cname, cv) {
			if (!strcmp(jsonget_str(cv, "verdict"), "unavailable"))
				continue;
			strbuf_addf(&text, "%s%s: %s", first ? ". By class: " : "; ", cname, jsonget_str(cv, "text"));
			first = 0;
		}
	}
	e = json_pack("{s:o,s:o,s:o,s:I,s:I,s:I,s:{s:I,s:I,s:I,s:I},s:s}", "regressions", reg,
		      "improvements", imp, "changed", chg, "same", (json_int_t)same,
		      "inconclusive", (json_int_t)inc, "unavailable", (json_int_t)unav,
		      "counters", "regressions", (json_int_t)creg, "improvements", (json_int_t)cimp,
		      "changed", (json_int_t)cchg, "work_regressions", (json_int_t)wreg, "text", text.buf);
	if (not_same.len)
		json_object_set_new(e, "not_same", json_string(not_same.buf));
	strbuf_release(&text);
	strbuf_release(&not_same);
	return e;
}

static int by_x(const void *x, const void *y)
{
	const json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
	json_int_t wa = jsonget_int_or(a, "x", 0);
	json_int_t wb = jsonget_int_or(b, "x", 0);

	return wa < wb ? -1 : wa > wb;
}

/*
 * Row i's params without the axis (and, when follow, without a "workers"
 * equal to its "cpus": a case of workers: cpus, whose workers follow the
 * guest's vCPUs), and its key among the sweeps of that axis. NULL when
 * the row is on no sweep of it.
 */
static json_t *sweep_rest(const struct row *r, const char *axis, int follow, struct strbuf *key)
{
	const json_t *params = json_object_get(r->obj, "params");
	const json_t *w = json_object_get(params, "workers"), *c = json_object_get(params, "cpus");
	json_t *rest;
	char *pc;

	if (!r->headline || !json_is_integer(json_object_get(params, axis)))
		return NULL;
	rest = json_deep_copy(params);
	json_object_del(rest, axis);
	if (follow) {
		if (!json_is_integer(w) || !json_is_integer(c) || json_integer_value(w) != json_integer_value(c)) {
			json_decref(rest);
			return NULL;
		}
		json_object_set_new(rest, "workers", json_string("cpus"));
	}
	pc = compare_params_canon(rest);
	compare_row_key(key, r->spec, jsonget_str(r->obj, "workload"), pc, r->metric);
	free(pc);
	return rest;
}

/*
 * The sweeps along one axis into sweeps: headline rows whose cases differ
 * only in that param, a table of at least two points each. Along "cpus"
 * (a suite's guest_cpus), a case whose workers equal its vCPUs and that
 * has no sweep of its own workers is on the sweep of workers: cpus.
 */
static void build_axis(const struct row *rows, size_t n, const char *axis, json_t *sweeps)
{
	json_t *groups = json_object(), *g;
	struct strbuf key = STRBUF_INIT;
	const char *k;
	size_t i;

	for (i = 0; i < n; i++) {
		const json_t *row = rows[i].obj;
		const json_t *x = json_object_get(json_object_get(row, "params"), axis);
		json_t *rest, *entry;

		if (!(rest = sweep_rest(&rows[i], axis, 0, &key)))
			continue;
		if (!strcmp(axis, "cpus") && (g = json_object_get(groups, key.buf)) == NULL) {
			/* alone so far: it joins a sweep of its own workers only
			 * when another row of it comes (the second pass) */
			size_t mates = 0;
			struct strbuf other = STRBUF_INIT;

			for (size_t k2 = 0; k2 < n; k2++) {
				json_t *o = k2 == i ? NULL : sweep_rest(&rows[k2], axis, 0, &other);

				if (o && !strcmp(other.buf, key.buf))
					mates++;
				json_decref(o);
			}
			strbuf_release(&other);
			if (!mates) {
				json_t *f = sweep_rest(&rows[i], axis, 1, &key);

				if (f) {
					json_decref(rest);
					rest = f;
				}
			}
		}
		g = json_object_get(groups, key.buf);
		if (!g) {
			struct strbuf pt = STRBUF_INIT;

			compare_params_text(&pt, rest);
			g = json_pack("{s:s,s:O,s:s,s:s,s:O,s:s,s:s,s:s,s:[]}", "axis", axis,
				      "spec", json_object_get(row, "spec"), "workload", jsonget_str(row, "workload"),
				      "metric", rows[i].metric, "params", rest, "params_text", pt.buf,
				      "unit", jsonget_str(row, "unit"), "direction", jsonget_str(row, "direction"),
				      "rows");
			strbuf_release(&pt);
			json_object_set_new(groups, key.buf, g);
		}
		json_decref(rest);
		entry = json_pack("{s:O,s:O,s:O,s:O,s:O,s:O,s:O}", axis, x, "x", x, "case", json_object_get(row, "case"),
				  "base", json_object_get(json_object_get(row, "base"), "center"),
				  "patched", json_object_get(json_object_get(row, "patched"), "center"),
				  "change_pct", json_object_get(row, "change_pct"),
				  "verdict", json_object_get(row, "verdict"));
		json_array_append_new(json_object_get(g, "rows"), entry);
	}
	json_object_foreach(groups, k, g)
		if (json_array_size(json_object_get(g, "rows")) >= 2) {
			compare_sort_array(json_object_get(g, "rows"), by_x);
			json_array_append(sweeps, g);
		}
	json_decref(groups);
	strbuf_release(&key);
}

/* Headline rows whose cases differ only in "workers" (a thread sweep), and
 * then those that differ only in "cpus" (a suite's guest_cpus): a table
 * each. */
json_t *compare_build_sweeps(const struct row *rows, size_t n)
{
	json_t *sweeps = json_array();

	build_axis(rows, n, "workers", sweeps);
	build_axis(rows, n, "cpus", sweeps);
	return sweeps;
}

static const json_t *find_row(const json_t *index, const json_t *row, const char *metric,
			      struct strbuf *key)
{
	char *pc = compare_params_canon(json_object_get(row, "params"));
	long long spec = 0;

	jsonget_int(row, "spec", &spec);
	compare_row_key(key, spec, jsonget_str(row, "workload"), pc, metric);
	free(pc);
	return json_object_get(index, key->buf);
}

static json_t *center_of(const json_t *row, const char *side)
{
	return row ? json_incref(json_object_get(json_object_get(row, side), "center")) : json_null();
}

json_t *compare_build_tlb(const struct row *rows, size_t n)
{
	json_t *index = json_object(), *seen = json_object(), *out = json_array();
	struct strbuf key = STRBUF_INIT;
	size_t i, k;

	for (i = 0; i < n; i++) {
		char *pc = compare_params_canon(json_object_get(rows[i].obj, "params"));

		compare_row_key(&key, rows[i].spec, jsonget_str(rows[i].obj, "workload"), pc, rows[i].metric);
		free(pc);
		json_object_set(index, key.buf, rows[i].obj);
	}
	for (i = 0; i < n; i++) {
		const json_t *row = rows[i].obj, *spk;
		json_t *counters, *entry;

		if (!rows[i].headline)
			continue;
		find_row(index, row, "", &key);	/* the case's key */
		if (json_object_get(seen, key.buf))
			continue;
		json_object_set_new(seen, key.buf, json_true());
		counters = json_array();
		for (k = 0; k < ARRAY_SIZE(shootdown_counters); k++) {
			char ps[128], pk[128];
			const json_t *avg, *peak;

			snprintf(ps, sizeof(ps), "%s.per_sec", shootdown_counters[k]);
			snprintf(pk, sizeof(pk), "%s.peak_per_sec", shootdown_counters[k]);
			avg = find_row(index, row, ps, &key);
			peak = find_row(index, row, pk, &key);
			if (!avg && !peak)
				continue;
			json_array_append_new(counters, json_pack(
				"{s:s,s:{s:o,s:o},s:{s:o,s:o},s:o}", "name", shootdown_counters[k],
				"base", "per_sec", center_of(avg, "base"), "peak_per_sec", center_of(peak, "base"),
				"patched", "per_sec", center_of(avg, "patched"),
				"peak_per_sec", center_of(peak, "patched"),
				"verdict", avg ? json_incref(json_object_get(avg, "verdict")) : json_null()));
		}
		spk = find_row(index, row, "tlb.shootdowns_per_kop", &key);
		if (!spk && !json_array_size(counters)) {
			json_decref(counters);
			continue;
		}
		entry = json_pack("{s:O,s:O,s:s,s:O,s:s,s:o,s:o}", "spec", json_object_get(row, "spec"),
				  "case", json_object_get(row, "case"), "workload", jsonget_str(row, "workload"),
				  "params", json_object_get(row, "params"),
				  "params_text", jsonget_str(row, "params_text"),
				  "shootdowns_per_kop", spk ? json_pack("{s:o,s:o,s:O,s:O}",
						"base", center_of(spk, "base"), "patched", center_of(spk, "patched"),
						"change_pct", json_object_get(spk, "change_pct"),
						"verdict", json_object_get(spk, "verdict")) : json_null(),
				  "counters", counters);
		json_array_append_new(out, entry);
	}
	json_decref(index);
	json_decref(seen);
	strbuf_release(&key);
	return out;
}
