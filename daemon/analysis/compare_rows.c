/*
 * The rows of a comparison: one per row key seen on either side. A row's
 * samples are its groups' per-boot medians; its statistics are the
 * medians and spread of each side, the change, the Mann-Whitney p, the
 * bootstrap interval of the change and the equivalence interval; its
 * verdict is decided with all rows' at once (verdict.c), since their
 * p-values are adjusted as families. Which test a row takes follows from
 * its class's flags (compare_class.h); the tests themselves are in
 * compare_tests.c.
 */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare_int.h"
#include "compare_class.h"
#include "stats.h"
#include "util.h"
#include "verdict.h"
#include "banned.h"

static int is_own(const char *workload, const char *metric)
{
	size_t n = strlen(workload);

	return n && !strncmp(metric, workload, n) && metric[n] == '.';
}

static json_t *side_stats(const double *v, size_t n)
{
	json_t *samples = json_array();
	double mean = n ? stats_mean(v, n) : NAN, spread = NAN;
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(samples, json_real(v[i]));
	if (n >= 2 && mean != 0)
		spread = 100.0 * stats_stddev(v, n) / fabs(mean);
	return json_pack("{s:o,s:o,s:I,s:o}", "center", jreal(n ? stats_median(v, n) : NAN),
			 "spread_pct", jreal(spread), "n", (json_int_t)n, "samples", samples);
}

/* 1 when there are values and every one is below bound */
static int all_below(const double *a, size_t n, double bound)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!(a[i] < bound))
			return 0;
	return n > 0;
}

static int all_equal(const double *a, size_t na, const double *b, size_t nb)
{
	size_t i;

	if (!na || !nb)
		return 0;
	for (i = 0; i < na; i++)
		if (a[i] != a[0])
			return 0;
	for (i = 0; i < nb; i++)
		if (b[i] != a[0])
			return 0;
	return 1;
}

static int count_outliers(const double *v, size_t n, double z)
{
	int *flags, k;

	if (n < 3)
		return 0;
	flags = calloc(n, sizeof(*flags));
	if (!flags)
		abort();
	k = stats_outliers_mad(v, n, z, flags);
	free(flags);
	return k < 0 ? 0 : k;
}

/* The pooled per-boot standard deviation of both sides, in % of the base
 * median: the noise a detectable effect is measured against. */
static double pooled_sd_pct(const double *b, size_t nb, const double *p, size_t np, double cb)
{
	double vb, vp;

	if (nb < 2 || np < 2 || cb == 0)
		return NAN;
	vb = stats_stddev(b, nb);
	vp = stats_stddev(p, np);
	return 100 * sqrt(((double)(nb - 1) * vb * vb + (double)(np - 1) * vp * vp) /
			  (double)(nb + np - 2)) / fabs(cb);
}

/* Fills the statistics of a row from its two groups (either may be NULL);
 * its verdict comes later, with all rows' (row_decision). */
static void row_stats(struct row *row, const json_t *gb, const json_t *gp, const struct side *sb,
		      const struct side *sp, const struct compare_rules *r,
		      const struct verdict_design *d)
{
	json_t *obj = row->obj;
	struct verdict_row *v = &row->v;
	size_t nb_boots = json_object_size(sb->boots), np_boots = json_object_size(sp->boots);
	double *b = calloc(nb_boots + 1, sizeof(double)), *p = calloc(np_boots + 1, sizeof(double));
	size_t nb = gb ? compare_group_samples(gb, b) : 0, np = gp ? compare_group_samples(gp, p) : 0;
	double cb, cp, change, pval = NAN, u, floor = 0;
	struct strbuf why = STRBUF_INIT, note = STRBUF_INIT;
	int welch_ok, modes = 0;
	unsigned flags;
	double *kb = xcalloc(nb + 1, sizeof(*kb)), *kp = xcalloc(np + 1, sizeof(*kp));
	size_t nkb = 0, nkp = 0;

	if (!b || !p)
		abort();
	memset(v, 0, sizeof(*v));
	v->metric = jsonget_str(obj, "metric");
	v->direction = jsonget_str(obj, "direction");
	v->cls = compare_class_find(jsonget_str(obj, "class"));
	flags = v->cls ? v->cls->flags : 0;
	v->own = is_own(jsonget_str(obj, "workload"), v->metric);
	v->p = v->change = v->sd_pct = NAN;
	json_object_set_new(obj, "base", side_stats(b, nb));
	json_object_set_new(obj, "patched", side_stats(p, np));
	json_object_set_new(obj, "outliers", json_integer(count_outliers(b, nb, r->outlier_z) +
							 count_outliers(p, np, r->outlier_z)));
	if (!nb || !np) {
		const struct side *missing = !nb ? sb : sp;
		const json_t *g = !nb ? gb : gp, *other = !nb ? gp : gb;
		const char *side_why = compare_side_unavailable(missing, jsonget_str(obj, "metric"));

		if (g && jsonget_str(g, "unavailable"))
			strbuf_addf(&why, "unavailable on %s: %s", missing->name, jsonget_str(g, "unavailable"));
		else if (side_why)
			strbuf_addf(&why, "unavailable on %s: %s", missing->name, side_why);
		else if (other && jsonget_str(other, "unavailable") && !(nb || np))
			strbuf_addf(&why, "unavailable: %s", jsonget_str(other, "unavailable"));
		else
			strbuf_addf(&why, "not measured on %s", missing->name);
		json_object_set_new(obj, "change_pct", json_null());
		json_object_set_new(obj, "p", json_null());
		json_object_set_new(obj, "ci", json_null());
		json_object_set_new(obj, "verdict", json_string("unavailable"));
		json_object_set_new(obj, "reason", json_string(why.buf));
		goto out;
	}
	v->testable = 1;
	v->nb = nb, v->np = np;
	cb = stats_median(b, nb);
	cp = stats_median(p, np);
	if (cb != 0)
		change = 100 * (cp / cb - 1);
	else if (cp != 0)
		change = cp > 0 ? INFINITY : -INFINITY;
	else
		change = 0;
	v->change = change;
	v->identical = all_equal(b, nb, p, np);
	v->negligible = (flags & COMPARE_CLASS_FLOOR) && all_below(b, nb, r->wait_floor) &&
			all_below(p, np, r->wait_floor);
	v->sd_pct = pooled_sd_pct(b, nb, p, np, cb);
	/* a base median below its own per-boot sd: a % change means nothing */
	v->near_zero = cb == 0 || (!isnan(v->sd_pct) && v->sd_pct > 100);
	json_object_set_new(obj, "change_pct", isinf(change) ? json_null() : jreal(change));
	if (!(flags & COMPARE_CLASS_TESTED)) {
		/* shown, not tested: no p, no interval */
		json_object_set_new(obj, "p", json_null());
		json_object_set_new(obj, "ci", json_null());
		strbuf_addf(&why, "%s: %s; shown beside the tested rows", v->cls ? v->cls->name : "?",
			    v->cls ? v->cls->legend : "not tested");
		json_object_set_new(obj, "reason", json_string(why.buf));
		goto out;
	}
	welch_ok = (flags & COMPARE_CLASS_LOG_T) && nb >= 2 && np >= 2 &&
		   compare_all_positive(b, nb) && compare_all_positive(p, np);
	if (welch_ok) {
		floor = fmax(r->noise_floor, fmax(compare_within_floor(gb), compare_within_floor(gp)));
		modes = compare_row_modes(obj, v, b, nb, p, np, floor, kb, &nkb, kp, &nkp);
	}
	if ((flags & COMPARE_CLASS_PAIRED) && compare_row_paired(obj, v, gb, gp, sb, sp, r, d) == 0) {
		v->rule = VERDICT_RULE_PAIRED;
		json_object_set_new(obj, "p_method", json_string("paired t"));
	} else if ((((flags & COMPARE_CLASS_NEAR_ZERO) && v->near_zero) || v->negligible) &&
		   compare_row_count(obj, v, b, nb, p, np, cb, cp, compare_count_least(obj, v, r), r, d) == 0) {
		v->rule = VERDICT_RULE_COUNT;
		json_object_set_new(obj, "p_method", json_string("welch, absolute"));
		/* a ratio from near 0 means nothing (0.03 -> 999.8 once
		 * printed +3,300,690%): change_abs says what changed */
		json_object_set_new(obj, "change_pct", json_null());
	} else if (welch_ok && !modes && compare_row_welch(obj, v, b, nb, p, np, floor, r, d) == 0) {
		v->rule = VERDICT_RULE_WELCH;
		json_object_set_new(obj, "p_method", json_string("welch"));
	} else if (welch_ok && modes > 0 && compare_row_set_aside(obj, v, kb, nkb, kp, nkp, floor, r, d) == 0) {
		v->rule = VERDICT_RULE_SET_ASIDE;
		json_object_set_new(obj, "p_method", json_string("welch, modes set aside"));
	} else {
		v->rule = VERDICT_RULE_RANK;
		if (stats_mann_whitney(b, nb, p, np, &u, &pval) == 0)
			v->p = pval;
		compare_row_interval(obj, v, b, nb, p, np, cb, r);
		compare_row_equivalence(v, b, nb, p, np, cb, d);
		switch (stats_mann_whitney_method(b, nb, p, np)) {
		case STATS_MWU_EXACT:
			json_object_set_new(obj, "p_method", json_string("exact"));
			break;
		case STATS_MWU_PERMUTATION:
			json_object_set_new(obj, "p_method", json_string("permutation"));
			break;
		default:
			json_object_set_new(obj, "p_method", json_string("approximate"));
		}
	}
	json_object_set_new(obj, "p", jreal(v->p));
	if (v->rule == VERDICT_RULE_COUNT) {
		json_object_set_new(obj, "ci", json_null());
		json_object_set_new(obj, "equiv_ci", json_null());
		json_object_set_new(obj, "equiv_ci_abs", json_pack("[f,f]", v->elo, v->ehi));
	} else {
		json_object_set_new(obj, "ci", v->have_ci ? json_pack("[f,f]", v->lo, v->hi) : json_null());
		json_object_set_new(obj, "equiv_ci", v->have_eq ? json_pack("[f,f]", v->elo, v->ehi) : json_null());
	}
	if (modes)
		strbuf_addf(&note, "boots in a mode of their own (beyond %g robust sds of both sides' median): "
			    "base %zu of %zu, patched %zu of %zu; %s; ", COMPARE_MODE_FENCE,
			    json_array_size(json_object_get(json_object_get(obj, "mode_boots"), "base")), nb,
			    json_array_size(json_object_get(json_object_get(obj, "mode_boots"), "patched")), np,
			    modes > 0 ? "set aside, Welch on the rest" : "more than a third of a side: ranked");
	if (v->rule == VERDICT_RULE_COUNT)
		strbuf_addf(&note, "the base is near 0: the change is absolute, %+.4g %s", v->change,
			    jsonget_str(obj, "unit"));
	else if (cb == 0 && cp != 0)
		strbuf_addf(&note, "base is 0: no ratio; the verdict rests on p alone");
	else if (nb != np)
		strbuf_addf(&note, "%zu boots on base, %zu on patched", nb, np);
	strbuf_trim(&note);
	if (note.len && note.buf[note.len - 1] == ';')
		strbuf_setlen(&note, note.len - 1);
	if (note.len)
		json_object_set_new(obj, "note", json_string(note.buf));
out:
	strbuf_release(&why);
	strbuf_release(&note);
	free(kb);
	free(kp);
	free(b);
	free(p);
}

/* A change of the row's, as the row states it: "+1.2%", or for a row of
 * absolute changes "+0.95 events/kop" (sign: with a sign) */
static void add_change(struct strbuf *sb, const struct verdict_row *v, const json_t *obj, double x, int sign)
{
	if (v->rule == VERDICT_RULE_COUNT)
		strbuf_addf(sb, sign ? "%+.4g %s" : "%.4g %s", x, jsonget_str(obj, "unit"));
	else
		strbuf_addf(sb, sign ? "%+.2f%%" : "%.1f%%", x);
}

/* A row's decision (verdict_decide) into its JSON. */
static void row_decision(struct row *row, const struct compare_rules *r)
{
	const struct verdict_row *v = &row->v;
	json_t *obj = row->obj;
	struct strbuf sb = STRBUF_INIT;
	int abs_rule;

	if (!v->testable)
		return;
	json_object_set_new(obj, "verdict", json_string(v->verdict));
	if (!strcmp(v->verdict, "context"))
		return;
	abs_rule = v->rule == VERDICT_RULE_COUNT;
	json_object_set_new(obj, "family", json_string(v->family ?: "none"));
	json_object_set_new(obj, "p_adj", jreal(v->p_adj));
	json_object_set_new(obj, "p_adj_method", v->p_adj_method ? json_string(v->p_adj_method) : json_null());
	json_object_set_new(obj, "alpha", json_real(v->alpha));
	json_object_set_new(obj, "min_change_pct", abs_rule ? json_null() : json_real(v->min_change));
	json_object_set_new(obj, "margin_pct", abs_rule ? json_null() : json_real(v->margin));
	if (abs_rule)
		json_object_set_new(obj, "min_change_abs", json_real(v->min_change));
	if (v->moved)
		json_object_set_new(obj, "moved_alone", json_true());
	json_object_set_new(obj, "mde_pct", jreal(v->mde));
	json_object_set_new(obj, "ruled_out_pct", jreal(v->ruled_out));
	json_object_set_new(obj, "no_change_beyond_pct", jreal(v->beyond));
	if (isnan(v->mde)) {
		if (v->near_zero)
			strbuf_addstr(&sb, "the base median is near 0 (below its per-boot spread): "
				      "no change in % can be stated");
		else
			strbuf_addf(&sb, "with %zu and %zu boots no change can be detected here", v->nb, v->np);
		json_object_set_new(obj, "mde_note", json_string(sb.buf));
		strbuf_reset(&sb);
	}
	if (!strcmp(v->verdict, "same") && v->negligible) {
		strbuf_addf(&sb, "every boot of both sides spun less than %g spin-wait instructions per "
			    "operation (the rules' wait_floor): none to speak of", r->wait_floor);
		json_object_set_new(obj, "reason", json_string(sb.buf));
	} else if (!strcmp(v->verdict, "same") && v->have_eq) {
		strbuf_addstr(&sb, "the change lies in ");
		add_change(&sb, v, obj, v->elo, 1);
		strbuf_addstr(&sb, "..");
		add_change(&sb, v, obj, v->ehi, 1);
		strbuf_addstr(&sb, " (equivalence interval), within +-");
		add_change(&sb, v, obj, fmin(v->min_change, v->margin), 0);
		json_object_set_new(obj, "reason", json_string(sb.buf));
	} else if (abs_rule && strcmp(v->verdict, "inconclusive")) {
		strbuf_addf(&sb, "from a base near 0: ");
		add_change(&sb, v, obj, v->change, 1);
		strbuf_addf(&sb, " (95%% interval %+.4g..%+.4g), p %.2g; the least change called is ", v->lo, v->hi,
			    v->p_adj);
		add_change(&sb, v, obj, v->min_change, 0);
		json_object_set_new(obj, "reason", json_string(sb.buf));
	}
	if (!strcmp(v->verdict, "inconclusive") && abs_rule) {
		strbuf_addstr(&sb, "from a base near 0: ");
		add_change(&sb, v, obj, v->change, 1);
		strbuf_addf(&sb, " (95%% interval %+.4g..%+.4g, equivalence %+.4g..%+.4g); a change needs p below "
			    "%.2g and at least ", v->lo, v->hi, v->elo, v->ehi, v->alpha);
		add_change(&sb, v, obj, v->min_change, 0);
		strbuf_addstr(&sb, ", same the equivalence interval within it");
		json_object_set_new(obj, "reason", json_string(sb.buf));
	} else if (!strcmp(v->verdict, "inconclusive")) {
		if (!isnan(v->beyond))
			strbuf_addf(&sb, "no change beyond %.1f%% (equivalence interval %+.1f%%..%+.1f%%); "
				    "same needs it within +-%.1f%%", v->beyond, v->elo, v->ehi,
				    fmin(v->min_change, v->margin));
		else if (!isnan(v->ruled_out))
			strbuf_addf(&sb, "changes larger than %.1f%% ruled out (95%% interval)", v->ruled_out);
		else
			strbuf_addstr(&sb, "no interval: no change ruled out");
		if (!isnan(v->mde))
			strbuf_addf(&sb, "; this job could detect %.1f%%", v->mde);
		if (!v->have_eq)
			strbuf_addstr(&sb, "; too few boots for an equivalence interval");
		else if (isnan(v->beyond))
			strbuf_addf(&sb, "; same needs the interval within +-%.1f%%",
				    fmin(v->min_change, v->margin));
		json_object_set_new(obj, "reason", json_string(sb.buf));
	}
	strbuf_release(&sb);
}

static int row_cmp(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	int c;

	if (a->spec != b->spec)
		return a->spec < b->spec ? -1 : 1;
	if (a->cas != b->cas)
		return a->cas < b->cas ? -1 : 1;
	c = strcmp(jsonget_str(a->obj, "workload"), jsonget_str(b->obj, "workload"));
	if (c)
		return c;
	c = strcmp(jsonget_str(a->obj, "params_text"), jsonget_str(b->obj, "params_text"));
	if (c)
		return c;
	if (a->headline != b->headline)
		return b->headline - a->headline;
	return strcmp(a->metric, b->metric);
}

static json_t *row_from_group(const json_t *g)
{
	struct strbuf pt = STRBUF_INIT;
	const char *wl = jsonget_str(g, "workload"), *metric = jsonget_str(g, "metric");
	const struct compare_class *cls = compare_class_of(wl, metric, jsonget_str(g, "unit"),
							   jsonget_str(g, "direction"));
	json_t *obj;

	compare_params_text(&pt, json_object_get(g, "params"));
	obj = json_pack("{s:O,s:O,s:s,s:O,s:s,s:s,s:s,s:s,s:s,s:b}",
			"spec", json_object_get(g, "spec"), "case", json_object_get(g, "case"),
			"workload", wl, "params", json_object_get(g, "params"), "params_text", pt.buf,
			"metric", metric, "unit", jsonget_str(g, "unit"), "direction", jsonget_str(g, "direction"),
			"class", cls ? cls->name : "?", "counter", !is_own(wl, metric));
	strbuf_release(&pt);
	return obj;
}

/*
 * Each row's role (compare_class.h): a case whose rows include the
 * workload's kernel_insn_per_op (on either side) has the plugin's
 * instruction rows as its headline; else one with perf_kernel_insn_per_op
 * has perf's; otherwise its score is.
 */
static void assign_roles(struct row *rows, size_t n)
{
	json_t *insn = json_object();
	struct strbuf key = STRBUF_INIT;
	size_t i;

	for (i = 0; i < n; i++) {
		const char *wl = jsonget_str(rows[i].obj, "workload");
		char *pc = compare_params_canon(json_object_get(rows[i].obj, "params"));
		enum compare_insn src = compare_insn_marker(wl, rows[i].metric);
		json_int_t had;

		compare_row_key(&key, rows[i].spec, wl, pc, "");
		free(pc);
		had = jsonget_int_or(insn, key.buf, 0);
		/* the plugin's, where a case has both */
		if (src != COMPARE_INSN_NONE && (!had || (json_int_t)src < had))
			json_object_set_new(insn, key.buf, json_integer(src));
		rows[i].key_case = xstrdup(key.buf);
	}
	for (i = 0; i < n; i++) {
		const char *wl = jsonget_str(rows[i].obj, "workload");
		enum compare_role role = compare_role_of(wl, rows[i].metric, rows[i].v.cls,
			(enum compare_insn)jsonget_int_or(insn, rows[i].key_case, 0));

		rows[i].v.role = role;
		rows[i].headline = role == COMPARE_ROLE_HEADLINE;
		json_object_set_new(rows[i].obj, "role", json_string(compare_role_name(role)));
		json_object_set_new(rows[i].obj, "headline", json_boolean(rows[i].headline));
		free(rows[i].key_case);
		rows[i].key_case = NULL;
	}
	json_decref(insn);
	strbuf_release(&key);
}

struct row *compare_build_rows(struct side *sb, struct side *sp, const struct compare_rules *r,
		       struct verdict_design *d, size_t *ret_n)
{
	struct verdict_row *vr;
	size_t n = 0, i, alloc = json_object_size(sb->groups) + json_object_size(sp->groups) + 1;
	struct row *rows = calloc(alloc, sizeof(*rows));
	const char *key;
	json_t *g;
	int pass;

	if (!rows)
		abort();
	for (pass = 0; pass < 2; pass++) {
		json_t *groups = pass ? sp->groups : sb->groups;

		json_object_foreach(groups, key, g) {
			const json_t *gb = json_object_get(sb->groups, key), *gp = json_object_get(sp->groups, key);
			long long v = 0;

			if (pass && gb)
				continue;	/* done in the first pass */
			rows[n].obj = row_from_group(g);
			row_stats(&rows[n], gb, gp, sb, sp, r, d);
			jsonget_int(rows[n].obj, "spec", &v);
			rows[n].spec = v;
			jsonget_int(rows[n].obj, "case", &v);
			rows[n].cas = v;
			rows[n].metric = jsonget_str(rows[n].obj, "metric");
			n++;
		}
	}
	assign_roles(rows, n);
	qsort(rows, n, sizeof(*rows), row_cmp);
	/* the rows decide together: their p-values are adjusted as families */
	vr = calloc(n + 1, sizeof(*vr));
	if (!vr)
		abort();
	for (i = 0; i < n; i++)
		vr[i] = rows[i].v;
	verdict_decide(r, d, vr, n);
	for (i = 0; i < n; i++) {
		rows[i].v = vr[i];
		row_decision(&rows[i], r);
	}
	free(vr);
	*ret_n = n;
	return rows;
}
