#include "client.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "banned.h"

/*
 * `tlblab results`: the metrics of a job come as a flat list of (run, name,
 * value) rows and the runs carry the (machine, side, spec, case) they
 * belong to. Each metric row becomes an entry tagged with its group; one
 * sort by (group, name, value) then puts every series in a contiguous,
 * ordered slice, whose median, min and max are read off directly. That
 * keeps the work O(n log n) in the number of rows without a hash table.
 *
 * Groups print in the order their runs first appear, except that an A/B
 * job's sides come one after the other, base then patched: its boots are
 * interleaved, so the order of appearance would mix them.
 */

struct group {
	const json_t *machine, *side, *spec, *kase;	/* borrowed from runs */
	const char *workload;
	const json_t *params;
};

struct run_ref {
	long long id;
	size_t group;
};

struct entry {
	size_t group;
	const char *name;
	const char *unit;
	int has_value;
	double value;
};

/* base before patched before anything else; no side (a plain run) first */
static int side_rank(const json_t *side)
{
	const char *s = json_is_string(side) ? json_string_value(side) : NULL;

	if (!s || !*s)
		return 0;
	if (!strcmp(s, "base"))
		return 1;
	if (!strcmp(s, "patched"))
		return 2;
	return 3;
}

struct group_order {
	int rank;
	size_t index;
};

static int cmp_group_order(const void *a, const void *b)
{
	const struct group_order *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank - y->rank;
	return (x->index > y->index) - (x->index < y->index);
}

/*
 * Sorts groups by side (stably) and renumbers the runs' references to
 * them, so that the entries, sorted by group number later, follow.
 */
static void order_groups(struct group *groups, size_t ngroups, struct run_ref *refs,
			 size_t nrefs)
{
	struct group_order *order;
	struct group *sorted;
	size_t *renum, i;

	if (!ngroups)
		return;		/* groups may be NULL then: nothing to sort */
	order = xcalloc(ngroups, sizeof(*order));
	sorted = xcalloc(ngroups, sizeof(*sorted));
	renum = xcalloc(ngroups, sizeof(*renum));
	for (i = 0; i < ngroups; i++) {
		order[i].rank = side_rank(groups[i].side);
		order[i].index = i;
	}
	qsort(order, ngroups, sizeof(*order), cmp_group_order);
	for (i = 0; i < ngroups; i++) {
		sorted[i] = groups[order[i].index];
		renum[order[i].index] = i;
	}
	memcpy(groups, sorted, ngroups * sizeof(*groups));
	for (i = 0; i < nrefs; i++)
		refs[i].group = renum[refs[i].group];
	free(order);
	free(sorted);
	free(renum);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_run_ref(const void *a, const void *b)
{
	const struct run_ref *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	if (x->has_value != y->has_value)
		return x->has_value ? -1 : 1;
	return (x->value > y->value) - (x->value < y->value);
}

/* json_equal() that treats absent and null alike */
static int same(const json_t *a, const json_t *b)
{
	if (json_is_null(a))
		a = NULL;
	if (json_is_null(b))
		b = NULL;
	if (!a || !b)
		return a == b;
	return json_equal((json_t *)a, (json_t *)b);
}

static size_t group_of(struct group **groups, size_t *ngroups, const json_t *run)
{
	struct group g = {
		json_object_get(run, "machine"), json_object_get(run, "side"),
		json_object_get(run, "spec"), json_object_get(run, "case"),
		jsonget_str(run, "workload"), json_object_get(run, "params"),
	};
	size_t i;
	struct group *p;

	for (i = 0; i < *ngroups; i++) {
		struct group *h = &(*groups)[i];

		if (same(h->machine, g.machine) && same(h->side, g.side) &&
		    same(h->spec, g.spec) && same(h->kase, g.kase))
			return i;
	}
	p = reallocarray(*groups, *ngroups + 1, sizeof(*p));
	if (!p)
		abort();
	*groups = p;
	p[*ngroups] = g;
	return (*ngroups)++;
}

static void print_header(FILE *out, const struct group *g)
{
	struct strbuf sb = STRBUF_INIT;
	char clean[1024];

	strbuf_addstr(&sb, "spec ");
	client_add_json_value(&sb, g->spec);
	strbuf_addstr(&sb, ", case ");
	client_add_json_value(&sb, g->kase);
	if (g->workload)
		strbuf_addf(&sb, ": %s", g->workload);
	if (json_is_string(g->machine))
		strbuf_addf(&sb, " on %s", json_string_value(g->machine));
	if (json_is_string(g->side) && *json_string_value(g->side))
		strbuf_addf(&sb, " (%s)", json_string_value(g->side));
	fprintf(out, "%s\n", client_fmt_clean(clean, sizeof(clean), sb.buf));

	/* the header names the workload; a spec lists it among its params too */
	strbuf_reset(&sb);
	client_add_params(&sb, g->params, "workload");
	if (sb.len)
		fprintf(out, "  params: %s\n", client_fmt_clean(clean, sizeof(clean), sb.buf));
	strbuf_release(&sb);
}

int client_results_print(FILE *out, const json_t *runs, const json_t *metrics,
		  int all, struct strbuf *err)
{
	static const char *const heads[] = { "METRIC", "MEDIAN", "MIN", "MAX", "N", "UNIT" };
	const json_t *rarr = json_object_get(runs, "runs");
	const json_t *marr = json_object_get(metrics, "metrics");
	struct group *groups = NULL;
	struct run_ref *refs = NULL;
	struct entry *ents = NULL;
	const char **hidden = NULL;
	size_t ngroups = 0, nrefs = 0, nents = 0, nhidden = 0, nfailed = 0, i, g, e;
	const json_t *v;
	int ret = -1;

	if (!json_is_array(rarr) || !json_is_array(marr)) {
		strbuf_seterr(err, "the server's runs or metrics are not lists");
		goto out;
	}
	refs = xcalloc(json_array_size(rarr) + 1, sizeof(*refs));
	ents = xcalloc(json_array_size(marr) + 1, sizeof(*ents));
	hidden = xcalloc(json_array_size(marr) + 1, sizeof(*hidden));

	json_array_foreach(rarr, i, v) {
		json_t *w = json_object_get(v, "warmup");
		long long id;

		if (jsonget_int(v, "id", &id) < 0 || json_is_true(w))
			continue;
		/* a spec cut short by its failure is no sample of its side */
		if (jsonget_str(v, "error")) {
			nfailed++;
			continue;
		}
		refs[nrefs].id = id;
		refs[nrefs].group = group_of(&groups, &ngroups, v);
		nrefs++;
	}
	order_groups(groups, ngroups, refs, nrefs);
	qsort(refs, nrefs, sizeof(*refs), cmp_run_ref);

	json_array_foreach(marr, i, v) {
		struct run_ref key, *r;
		const char *name = jsonget_str(v, "name");

		if (jsonget_int(v, "run", &key.id) < 0 || !name)
			continue;
		r = bsearch(&key, refs, nrefs, sizeof(*refs), cmp_run_ref);
		if (!r)
			continue;	/* a warm-up run, or one we were not told about */
		if (!all && strstr(name, ".cpu")) {
			hidden[nhidden++] = name;
			continue;
		}
		ents[nents].group = r->group;
		ents[nents].name = name;
		ents[nents].unit = jsonget_str(v, "unit");
		ents[nents].has_value = jsonget_num(v, "value", &ents[nents].value) == 0 &&
					isfinite(ents[nents].value);
		nents++;
	}
	qsort(ents, nents, sizeof(*ents), cmp_entry);

	if (!ngroups)
		fprintf(out, "no measured runs\n");
	for (g = 0, e = 0; g < ngroups; g++) {
		struct table t;

		if (g)
			fputc('\n', out);
		print_header(out, &groups[g]);
		client_table_init(&t, ARRAY_SIZE(heads), heads, "lrrrrl");
		while (e < nents && ents[e].group == g) {
			size_t start = e, n = 0;
			char med[FMT_SIZE], lo[FMT_SIZE], hi[FMT_SIZE], cnt[FMT_SIZE];
			const char *unit = NULL;

			while (e < nents && ents[e].group == g &&
			       !strcmp(ents[e].name, ents[start].name)) {
				if (ents[e].has_value)
					n++;
				if (!unit)
					unit = ents[e].unit;
				e++;
			}
			snprintf(cnt, sizeof(cnt), "%zu", n);
			if (n) {
				const struct entry *s = &ents[start];
				double m = n % 2 ? s[n / 2].value
						 : (s[n / 2 - 1].value + s[n / 2].value) / 2;

				client_fmt_number(med, m);
				client_fmt_number(lo, s[0].value);
				client_fmt_number(hi, s[n - 1].value);
			} else {
				snprintf(med, sizeof(med), "unavailable");
				lo[0] = hi[0] = '\0';
			}
			{
				const char *row[] = { ents[start].name, med, lo, hi, cnt, unit };

				client_table_add_row(&t, row);
			}
		}
		if (t.nrows)
			client_table_print(&t, out, "  ");
		else
			fprintf(out, "  no metrics\n");
		client_table_release(&t);
	}
	if (nfailed)
		fprintf(out, "\n(%zu run%s of specs that failed in their stage left out; --json has them)\n",
			nfailed, nfailed == 1 ? "" : "s");
	if (nhidden) {
		size_t names = 1;

		qsort(hidden, nhidden, sizeof(*hidden), cmp_str);
		for (i = 1; i < nhidden; i++)
			names += strcmp(hidden[i - 1], hidden[i]) != 0;
		fprintf(out, "\n(%zu per-CPU metric%s hidden; --all shows %s)\n", names,
			names == 1 ? "" : "s", names == 1 ? "it" : "them");
	}
	ret = 0;
out:
	free(groups);
	free(refs);
	free(ents);
	free(hidden);
	return ret;
}
