/*
 * The profile diff of a comparison: each symbol's self share averaged over
 * a side's measured runs that have a profile, the symbols that moved most
 * (and every one the agent timed on purpose), and why there is no diff
 * when a side has no profile.
 */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare_int.h"
#include "banned.h"

#define PROFILE_TOP 20

/* Sums each symbol's self share over the side's profiles into sums; kernel
 * gets each symbol's kernel flag, and timed the symbols that were timed by
 * ftrace (source "ftrace") rather than sampled. Returns how many profiles. */
static size_t profile_sum(const struct side *s, json_t *sums, json_t *kernel, json_t *timed)
{
	const json_t *profiles = json_object_get(s->doc, "profiles"), *p, *sym;
	json_t *done = json_object();
	size_t i, j, n = 0;

	json_array_foreach(profiles, i, p) {
		long long id;
		char idbuf[32];
		const json_t *symbols = json_object_get(json_object_get(p, "profile"), "symbols");

		if (jsonget_int(p, "run", &id) < 0 || !json_is_array(symbols))
			continue;
		snprintf(idbuf, sizeof(idbuf), "%lld", id);
		if (!json_object_get(s->runs, idbuf) || json_object_get(done, idbuf))
			continue;
		json_object_set_new(done, idbuf, json_true());
		n++;
		json_array_foreach(symbols, j, sym) {
			const char *name = jsonget_str(sym, "symbol");
			const json_t *self = json_object_get(sym, "self");
			double prev;

			if (!name || !json_is_number(self) || !isfinite(json_number_value(self)))
				continue;
			prev = jsonget_num_or(sums, name, 0);
			json_object_set_new(sums, name, json_real(prev + json_number_value(self)));
			if (json_is_boolean(json_object_get(sym, "kernel")))
				json_object_set(kernel, name, json_object_get(sym, "kernel"));
			if (!strcmp(jsonget_str(sym, "source") ?: "", "ftrace"))
				json_object_set_new(timed, name, json_true());
		}
	}
	json_decref(done);
	return n;
}

static int by_abs_delta(const void *x, const void *y)
{
	const json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
	double da = fabs(jsonget_num_or(a, "delta", 0));
	double db = fabs(jsonget_num_or(b, "delta", 0));

	if (da != db)
		return da > db ? -1 : 1;
	return strcmp(jsonget_str(a, "symbol"), jsonget_str(b, "symbol"));
}

/*
 * Why there is no diff: the sides without a profile, with what the agent
 * said (a run's "unavailable" profile reason, stored like any metric's), or
 * how to ask for one.
 */
static json_t *profile_missing(const struct side *b, const struct side *p)
{
	struct strbuf why = STRBUF_INIT;
	const struct side *sides[2] = { b, p };
	json_t *out;
	int i;

	for (i = 0; i < 2; i++) {
		const char *reason;

		if (!sides[i])
			continue;
		reason = compare_side_unavailable(sides[i], "profile");
		strbuf_addf(&why, "%sno profile on %s: %s", why.len ? "; " : "", sides[i]->name,
			    reason ? reason : "none was taken (a suite asks for one with monitors: [..., profile] "
			    "or profile: true)");
	}
	out = json_string(why.buf);
	strbuf_release(&why);
	return out;
}

/* What the side's profiles say they cannot see (their "blind_spot"), or NULL. */
static const char *profile_blind_spot(const struct side *s)
{
	const json_t *p;
	size_t i;

	json_array_foreach(json_object_get(s->doc, "profiles"), i, p) {
		const char *b = jsonget_str(json_object_get(p, "profile"), "blind_spot");
		long long id;
		char idbuf[32];

		if (!b || jsonget_int(p, "run", &id) < 0)
			continue;
		snprintf(idbuf, sizeof(idbuf), "%lld", id);
		if (json_object_get(s->runs, idbuf))
			return b;
	}
	return NULL;
}

json_t *compare_build_profile_diff(const struct side *sb, const struct side *sp)
{
	json_t *sum_b = json_object(), *sum_p = json_object(), *kernel = json_object(), *timed = json_object();
	json_t *syms = json_array(), *kept = json_array(), *v, *out;
	size_t nb = profile_sum(sb, sum_b, kernel, timed), np = profile_sum(sp, sum_p, kernel, timed);
	const char *name;
	size_t i;
	int pass;

	for (pass = 0; nb && np && pass < 2; pass++)
		json_object_foreach(pass ? sum_p : sum_b, name, v) {
			double b = jsonget_num_or(sum_b, name, 0) / (double)nb;
			double p = jsonget_num_or(sum_p, name, 0) / (double)np;
			json_t *e;

			if (pass && json_object_get(sum_b, name))
				continue;
			e = json_pack("{s:s,s:f,s:f,s:f}", "symbol", name, "base_self", b,
				      "patched_self", p, "delta", p - b);
			if (json_object_get(kernel, name))
				json_object_set(e, "kernel", json_object_get(kernel, name));
			if (json_object_get(timed, name))
				json_object_set_new(e, "source", json_string("ftrace"));
			json_array_append_new(syms, e);
		}
	compare_sort_array(syms, by_abs_delta);
	/* the top changes, and every function the agent timed on purpose
	 * (switch_mm_irqs_off...) whatever its change */
	json_array_foreach(syms, i, v)
		if (i < PROFILE_TOP || json_object_get(v, "source"))
			json_array_append(kept, v);
	json_decref(syms);
	syms = kept;
	json_decref(sum_b);
	json_decref(sum_p);
	json_decref(kernel);
	json_decref(timed);
	out = json_pack("{s:{s:I,s:I},s:o}", "profiles", "base", (json_int_t)nb, "patched", (json_int_t)np,
			"symbols", syms);
	if (!nb || !np)
		json_object_set_new(out, "reason", profile_missing(!nb ? sb : NULL, !np ? sp : NULL));
	/* a symbol missing from both sides may be one the profiler cannot see */
	if (profile_blind_spot(sb) || profile_blind_spot(sp))
		json_object_set_new(out, "blind_spot", json_string(profile_blind_spot(sb) ?: profile_blind_spot(sp)));
	return out;
}
