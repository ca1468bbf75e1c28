/*
 * A comparison is built in three passes over plain JSON. First each side
 * is indexed: its measured runs (warm-ups and failed runs set aside, the
 * latter reported), its boots in the order they ran, and its metric values
 * grouped by row key (spec, workload, canonical parameters, metric) into
 * one list of iteration values per boot. Then every row key seen on either
 * side becomes a row: the per-boot medians are the samples, and the
 * verdict comes from stats (Mann-Whitney, bootstrap CI, MAD outliers).
 * Last, the views that read rows (summary, sweeps, TLB block) are derived
 * from the rows themselves, so a number never differs between two places.
 *
 * jansson objects serve as the hash maps (they keep insertion order, which
 * keeps boots and rows in the order they ran); the only C-side structure is
 * the array of rows, for sorting.
 *
 * The passes live in their own files, behind compare_int.h: compare_side.c
 * indexes a side, compare_rows.c makes and decides the rows,
 * compare_views.c derives the summary, sweeps and TLB block,
 * compare_profile.c diffs the profiles; compare_key.c names rows and
 * compare_rules.c holds the rules' defaults. This file holds the public
 * entry: the assembly of the document with its provenance and notes.
 */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare_class.h"
#include "compare_int.h"
#include "stats.h"
#include "verdict.h"
#include "banned.h"

/* ---- the whole ---- */

static json_t *provenance(const struct side *sb, const struct side *sp)
{
	const json_t *pb = json_object_get(sb->doc, "provenance"), *pp = json_object_get(sp->doc, "provenance");

	return json_pack("{s:o,s:o,s:{s:I,s:I},s:{s:O,s:O},s:{s:O,s:O}}",
			 "base", pb ? json_deep_copy(pb) : json_null(),
			 "patched", pp ? json_deep_copy(pp) : json_null(),
			 "boots", "base", (json_int_t)json_object_size(sb->boots),
			 "patched", (json_int_t)json_object_size(sp->boots),
			 "machines", "base", sb->machines, "patched", sp->machines,
			 "builds", "base", sb->builds, "patched", sp->builds);
}

/*
 * A workload measured beside a neighbour shares the machine with it: when
 * the neighbour's rate moved by half or more, so did what the workload
 * shared, and its rows that follow time (its own rate, kernel work from the
 * timer tick per operation) moved with it, whatever the patch did to the
 * workload itself. Under icount one host thread runs every vCPU in turn,
 * and what ends a vCPU's turn (an arm64 broadcast TLBI does) sets each
 * one's share (docs/tlb-model.md). A note per such case.
 */
static void neighbour_notes(json_t *notes, const struct row *rows, size_t n, struct strbuf *sb)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *m = rows[i].metric, *dot;
		double c = rows[i].v.change;

		if (strncmp(m, "neighbour.", 10) || !(dot = strchr(m + 10, '.')) || strcmp(dot, ".ops_per_sec") ||
		    isnan(c) || fabs(c) < 50)
			continue;
		strbuf_addf(sb, "the neighbour %.*s beside %s (%s) ran ", (int)(dot - m - 10), m + 10,
			    jsonget_str(rows[i].obj, "workload") ?: "the workload",
			    jsonget_str(rows[i].obj, "params_text") ?: "");
		if (isinf(c))
			strbuf_addstr(sb, "operations where the base's ran none");
		else
			strbuf_addf(sb, "%.3gx the base's operations per second", 1 + c / 100);
		strbuf_addstr(sb, "; the workload shared the machine with that much more or less work, and its "
			      "rows that follow time (its rate, its kernel work from the timer tick per "
			      "operation) moved with the share it got, not with the patch alone (under icount one "
			      "host thread runs every vCPU in turn, and a broadcast TLBI ends a vCPU's turn)");
		json_array_append_new(notes, json_string(sb->buf));
		strbuf_reset(sb);
	}
}

static void add_notes(json_t *notes, const struct side *sb, const struct side *sp,
		      const struct compare_rules *r, const struct verdict_design *d,
		      const struct row *rows, size_t n)
{
	size_t bb = json_object_size(sb->boots), bp = json_object_size(sp->boots), i, m = 0, welch = 0;
	double alpha = d->alpha_headline;
	struct strbuf sb_ = STRBUF_INIT;

	for (i = 0; i < n; i++) {
		m += rows[i].headline && rows[i].v.testable && !isnan(rows[i].v.p);
		welch += rows[i].headline && rows[i].v.testable && (rows[i].v.rule == VERDICT_RULE_WELCH ||
								    rows[i].v.rule == VERDICT_RULE_SET_ASIDE);
	}
	if (bb != bp) {
		strbuf_addf(&sb_, "base has %zu boots, patched %zu: each side is compared with the "
			    "boots it has; the missing ones failed or did not run", bb, bp);
		json_array_append_new(notes, json_string(sb_.buf));
		strbuf_reset(&sb_);
	}
	if (d->looks == 2) {
		strbuf_addf(&sb_, "look %d of 2 (%d boots per side, up to %d): this look spends "
			    "alpha %.3g of %g on the headline rows", d->look, d->boots, d->max_boots,
			    alpha, r->alpha);
		if (d->spend_headline == VERDICT_SPEND_SECOND)
			strbuf_addf(&sb_, " (%d boots a side cannot give a Mann-Whitney p below the "
				    "first look's share, so the second look spends all of it)", d->boots);
		json_array_append_new(notes, json_string(sb_.buf));
		strbuf_reset(&sb_);
	}
	if (bb && bp && m && !welch && alpha > 0 && stats_mwu_min_p(bb, bp) >= alpha / (double)m) {
		strbuf_addf(&sb_, "with %zu and %zu boots no Mann-Whitney p can go below %.3g, and "
			    "%zu headline rows at alpha %.3g need %.3g (Holm): no headline row can "
			    "be called a change at this look", bb, bp, stats_mwu_min_p(bb, bp), m,
			    alpha, alpha / (double)m);
		json_array_append_new(notes, json_string(sb_.buf));
		strbuf_reset(&sb_);
	}
	if (sb->ignored || sp->ignored) {
		strbuf_addf(&sb_, "%zu malformed run or metric entries ignored",
			    sb->ignored + sp->ignored);
		json_array_append_new(notes, json_string(sb_.buf));
		strbuf_reset(&sb_);
	}
	neighbour_notes(notes, rows, n, &sb_);
	strbuf_release(&sb_);
}

const char *compare_verdict(const json_t *comparison)
{
	const json_t *sum = json_object_get(comparison, "summary");
	json_int_t work_regressed = jsonget_int_or(json_object_get(sum, "counters"), "work_regressions", 0);

	/* a work row outside the headline that regressed (more page walks,
	 * more translations lost) is the job's regression, or, beside a
	 * headline that improved, a change of both ways */
	if (json_array_size(json_object_get(sum, "regressions")))
		return "regression";
	if (json_array_size(json_object_get(sum, "improvements")))
		return work_regressed ? "changed" : "improvement";
	if (work_regressed)
		return "regression";
	if (json_array_size(json_object_get(sum, "changed")))
		return "changed";
	if (jsonget_int_or(sum, "inconclusive", 0) > 0)
		return "inconclusive";
	/* every compared headline row same, but a headline row missing or
	 * another tested row called (compare_build_summary says which) */
	if (json_object_get(sum, "not_same"))
		return "inconclusive";
	if (jsonget_int_or(sum, "same", 0) > 0)
		return "same";
	return "unavailable";
}

/* every class's margins are numbers, none below 0 */
static int margins_valid(const struct compare_rules *r)
{
	for (size_t i = 0; i < compare_class_count(); i++)
		for (int k = 0; k < COMPARE_MARGIN_MAX; k++)
			if (!(r->margins[i][k] >= 0))
				return 0;
	return 1;
}

json_t *compare_sides(const json_t *base, const char *base_side, const json_t *patched,
		      const char *patched_side, const struct compare_rules *rules, struct strbuf *err)
{
	struct compare_rules defaults;
	struct verdict_design design;
	struct side sb = { 0 }, sp = { 0 };
	json_t *failed = json_array(), *notes = json_array(), *out = NULL, *jrows, *per_cpu, *by_class;
	struct strbuf reg = STRBUF_INIT;
	struct row *rows = NULL;
	size_t n = 0, i;
	const char *name;
	json_t *v;

	if (!rules) {
		compare_rules_default(&defaults);
		rules = &defaults;
	}
	/* a class given twice, or none for the metrics no claim takes: the
	 * build is broken, and no row's class can be trusted */
	if (compare_class_registry_errors(&reg) < 0) {
		strbuf_trim(&reg);
		strbuf_seterr(err, "compare: %s", reg.buf);
		strbuf_release(&reg);
		goto out;
	}
	if (!(rules->alpha > 0 && rules->alpha < 1) || rules->resamples < 1 || !margins_valid(rules) ||
	    !(rules->equiv_alpha > 0 && rules->equiv_alpha < 0.5) ||
	    !(rules->power > 0.5 && rules->power < 1) ||
	    !(rules->ci_level > 0 && rules->ci_level < 1) || !(rules->wait_floor >= 0) ||
	    !(rules->min_change_count >= 0) ||
	    !(rules->noise_floor >= 0 && rules->noise_floor < 1) || !(rules->outlier_z >= 0)) {
		strbuf_seterr(err, "compare: invalid rules");
		goto out;
	}
	for (i = 0; i < rules->noverrides; i++) {
		const struct compare_override *ov = &rules->overrides[i];

		if (!ov->metric || !(isnan(ov->alpha) || (ov->alpha > 0 && ov->alpha < 1)) ||
		    ov->min_change < 0 || ov->same_band < 0) {
			strbuf_seterr(err, "compare: invalid rule for metrics '%s'", ov->metric ?: "(null)");
			goto out;
		}
	}
	if (compare_side_load(&sb, "base", base, base_side, failed, err) < 0 ||
	    compare_side_load(&sp, "patched", patched, patched_side, failed, err) < 0)
		goto out;
	/* one job's two sides follow its sequential design; two jobs compared
	 * afterwards are one look */
	verdict_design_init(&design, rules, base == patched ? json_object_get(base, "design") : NULL);
	rows = compare_build_rows(&sb, &sp, rules, &design, &n);
	add_notes(notes, &sb, &sp, rules, &design, rows, n);
	jrows = json_array();
	for (i = 0; i < n; i++)
		json_array_append(jrows, rows[i].obj);
	per_cpu = json_array();
	json_object_foreach(sb.per_cpu, name, v)
		json_array_append_new(per_cpu, json_string(name));
	json_object_foreach(sp.per_cpu, name, v)
		if (!json_object_get(sb.per_cpu, name))
			json_array_append_new(per_cpu, json_string(name));
	by_class = compare_build_by_class(rows, n);
	out = json_pack("{s:o,s:O,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}",
			"summary", compare_build_summary(rows, n, by_class), "by_class", by_class,
			"rows", jrows,
			"sweeps", compare_build_sweeps(rows, n), "tlb", compare_build_tlb(rows, n),
			"profile_diff", compare_build_profile_diff(&sb, &sp),
			"provenance", provenance(&sb, &sp), "failed", failed, "notes", notes,
			"per_cpu_excluded", per_cpu, "ci_kind", json_string("percent"),
			"rules", compare_rules_json(rules));
	json_decref(by_class);
	failed = notes = NULL;
	if (!out)
		strbuf_seterr(err, "compare: out of memory");
	else {
		json_object_set_new(out, "design", verdict_design_json(&design, rules));
		json_object_set_new(out, "unavailable", json_pack("{s:o,s:o}", "base", compare_side_unavailable_all(&sb),
								  "patched", compare_side_unavailable_all(&sp)));
		json_object_set_new(out, "verdict", json_string(compare_verdict(out)));
	}
out:
	for (i = 0; i < n; i++)
		json_decref(rows[i].obj);
	free(rows);
	json_decref(failed);
	json_decref(notes);
	compare_side_release(&sb);
	compare_side_release(&sp);
	return out;
}
