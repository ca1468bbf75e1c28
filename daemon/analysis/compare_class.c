/*
 * The registry of classes and a row's role (compare_class.h says what they
 * mean). The class files fill a fixed table before main (constructors, one
 * thread), read-only afterwards, so lookups need no lock. Their claims are
 * kept in one list, most specific first, so the rule for any metric is
 * still read in one place, whatever order the files link in. The
 * workload's score comes from the agent's own workload table (ops->score),
 * so the daemon never spells a workload's headline a second time.
 */
#include "compare_class.h"

#include <stddef.h>
#include <string.h>

#include "util.h"
#include "workload_catalog.h"
#include "banned.h"

#define CLAIMS_MAX 128

struct entry {
	const struct compare_class *c;
	const char *file;
	int line;
};

struct claim_ref {
	const struct compare_claim *claim;
	const struct compare_class *cls;
};

/* both sorted: entries by (order, name), claims most specific first */
static struct entry entries[COMPARE_CLASSES_MAX];
static size_t nentries;
static struct claim_ref claims[CLAIMS_MAX];
static size_t nclaims;
/* what went wrong while registering: a name or a claim twice, a full table */
static struct strbuf problems = STRBUF_INIT;
/* "work: ...; wait: ...", made again at each registration */
static struct strbuf legend = STRBUF_INIT;

static const char *const role_names[COMPARE_ROLE_MAX] = { "headline", "score", "secondary", "context" };

static size_t len_of(const char *s)
{
	return s ? strlen(s) : 0;
}

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* <0 when a is tried before b: the kind's order; for names, those with a
 * suffix first, the longer suffix first, then the longer prefix */
static int claim_cmp(const struct compare_claim *a, const struct compare_claim *b)
{
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->kind != COMPARE_CLAIM_NAME)
		return 0;
	if (!a->suffix != !b->suffix)
		return a->suffix ? -1 : 1;
	if (len_of(a->suffix) != len_of(b->suffix))
		return len_of(a->suffix) > len_of(b->suffix) ? -1 : 1;
	if (len_of(a->prefix) != len_of(b->prefix))
		return len_of(a->prefix) > len_of(b->prefix) ? -1 : 1;
	return 0;
}

static int same_claim(const struct compare_claim *a, const struct compare_claim *b)
{
	return a->kind == b->kind && same_str(a->prefix, b->prefix) && same_str(a->suffix, b->suffix);
}

/* "`*.per_op`", "`kfunc.*.calls`", "a workload's own count (`<wl>.*`)" */
static void describe_claim(struct strbuf *sb, const struct compare_claim *c)
{
	switch (c->kind) {
	case COMPARE_CLAIM_NAME:
		strbuf_addf(sb, "`%s*%s`", c->prefix ?: "", c->suffix ?: "");
		break;
	case COMPARE_CLAIM_OWN_COUNT:
		strbuf_addstr(sb, "a workload's own neutral counts (`<wl>.*`, no unit of time, not its score)");
		break;
	default:
		strbuf_addstr(sb, "a workload's own metrics (`<wl>.*`)");
	}
}

static const struct entry *find(const char *name)
{
	for (size_t i = 0; name && i < nentries; i++)
		if (!strcmp(entries[i].c->name, name))
			return &entries[i];
	return NULL;
}

static void make_legend(void)
{
	strbuf_reset(&legend);
	for (size_t i = 0; i < nentries; i++)
		strbuf_addf(&legend, "%s%s: %s", i ? "; " : "", entries[i].c->name, entries[i].c->legend);
}

/* Adds c's claims to the list, in place by specificity; one another class
 * made already is a problem, reported at c's registration. */
static void add_claims(const struct compare_class *c, const char *file, int line)
{
	for (size_t k = 0; k < c->nclaims; k++) {
		const struct compare_claim *cl = &c->claims[k];
		size_t j;

		for (j = 0; j < nclaims; j++)
			if (same_claim(claims[j].claim, cl))
				break;
		if (j < nclaims) {
			const struct entry *other = find(claims[j].cls->name);

			strbuf_addf(&problems, "%s:%d: class '%s' claims ", file, line, c->name);
			describe_claim(&problems, cl);
			strbuf_addf(&problems, ", which class '%s' claims (at %s:%d)\n", other->c->name, other->file,
				    other->line);
			continue;
		}
		if (nclaims == CLAIMS_MAX) {
			strbuf_addf(&problems, "%s:%d: class '%s': more than %d claims\n", file, line, c->name,
				    CLAIMS_MAX);
			return;
		}
		for (j = nclaims; j > 0 && claim_cmp(claims[j - 1].claim, cl) > 0; j--)
			claims[j] = claims[j - 1];
		claims[j] = (struct claim_ref){ cl, c };
		nclaims++;
	}
}

static int entry_before(const struct compare_class *a, const struct compare_class *b)
{
	return a->order != b->order ? a->order < b->order : strcmp(a->name, b->name) < 0;
}

void compare_class_register(const struct compare_class *c, const char *file, int line)
{
	const struct entry *first = find(c->name);
	size_t i;

	if (first) {
		strbuf_addf(&problems, "%s:%d: class '%s' registered twice (first at %s:%d)\n", file, line, c->name,
			    first->file, first->line);
		return;
	}
	if (nentries == COMPARE_CLASSES_MAX) {
		strbuf_addf(&problems, "%s:%d: class '%s': more than %d classes\n", file, line, c->name,
			    COMPARE_CLASSES_MAX);
		return;
	}
	for (i = nentries; i > 0 && entry_before(c, entries[i - 1].c); i--)
		entries[i] = entries[i - 1];
	entries[i] = (struct entry){ c, file, line };
	nentries++;
	add_claims(c, file, line);
	make_legend();
}

int compare_class_registry_errors(struct strbuf *out)
{
	size_t fallbacks = 0;

	for (size_t i = 0; i < nentries; i++)
		fallbacks += !!(entries[i].c->flags & COMPARE_CLASS_FALLBACK);
	if (!problems.len && fallbacks == 1)
		return 0;
	strbuf_addstr(out, problems.buf);
	if (fallbacks != 1) {
		strbuf_addf(out, "classes: %zu of them take the metrics no claim takes (COMPARE_CLASS_FALLBACK)",
			    fallbacks);
		for (size_t i = 0, k = 0; i < nentries; i++)
			if (entries[i].c->flags & COMPARE_CLASS_FALLBACK)
				strbuf_addf(out, "%s%s:%d", k++ ? ", " : ": ", entries[i].file, entries[i].line);
		strbuf_addstr(out, "; it must be one\n");
	}
	return -1;
}

size_t compare_class_count(void)
{
	return nentries;
}

const struct compare_class *compare_class_at(size_t i)
{
	return i < nentries ? entries[i].c : NULL;
}

int compare_class_index(const struct compare_class *c)
{
	for (size_t i = 0; c && i < nentries; i++)
		if (entries[i].c == c)
			return (int)i;
	return -1;
}

const struct compare_class *compare_class_find(const char *name)
{
	const struct entry *e = find(name);

	return e ? e->c : NULL;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && !strcmp(s + n - k, suffix);
}

static int starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* "<workload>." then the rest, or NULL */
static const char *own_part(const char *workload, const char *metric)
{
	size_t n = workload ? strlen(workload) : 0;

	if (!n || strncmp(metric, workload, n) || metric[n] != '.' || !metric[n + 1])
		return NULL;
	return metric + n + 1;
}

/* a unit of time or of a rate per time */
static int unit_is_time(const char *unit)
{
	static const char *const times[] = { "s", "ms", "us", "ns" };
	size_t i;

	if (!unit)
		return 0;
	for (i = 0; i < ARRAY_SIZE(times); i++)
		if (!strcmp(unit, times[i]))
			return 1;
	return ends_with(unit, "/s");
}

static int claim_matches(const struct compare_claim *c, const char *workload, const char *metric,
			 const char *unit, const char *direction)
{
	switch (c->kind) {
	case COMPARE_CLAIM_NAME:
		return (!c->prefix || starts_with(metric, c->prefix)) && (!c->suffix || ends_with(metric, c->suffix));
	case COMPARE_CLAIM_OWN_COUNT:
		return own_part(workload, metric) && (!direction || !strcmp(direction, "neutral")) &&
		       !unit_is_time(unit) && !compare_is_score(workload, metric);
	case COMPARE_CLAIM_OWN:
		return own_part(workload, metric) != NULL;
	default:
		return 0;
	}
}

static const struct compare_class *fallback(void)
{
	for (size_t i = 0; i < nentries; i++)
		if (entries[i].c->flags & COMPARE_CLASS_FALLBACK)
			return entries[i].c;
	return NULL;
}

const struct compare_class *compare_class_of(const char *workload, const char *metric, const char *unit,
					     const char *direction)
{
	size_t i;

	if (!metric)
		return fallback();
	for (i = 0; i < nclaims; i++)
		if (claim_matches(claims[i].claim, workload, metric, unit, direction))
			return claims[i].cls;
	return fallback();
}

const char *compare_class_legend(void)
{
	return legend.buf;
}

/* the table's test column: what the flags say */
static void describe_test(struct strbuf *sb, unsigned flags)
{
	if (!(flags & COMPARE_CLASS_TESTED)) {
		strbuf_addstr(sb, "no");
		return;
	}
	strbuf_addstr(sb, flags & COMPARE_CLASS_LOG_T ? "Welch's t on the logs of the per-boot medians"
						       : "Mann-Whitney U");
	if (flags & COMPARE_CLASS_NEAR_ZERO)
		strbuf_addstr(sb, "; from a base near 0, Welch's t on the values (`min_change_count`)");
	if (flags & COMPARE_CLASS_FLOOR)
		strbuf_addstr(sb, "; below `wait_floor` on every boot, on the values");
	if (flags & COMPARE_CLASS_PAIRED)
		strbuf_addstr(sb, "; paired t for rounds that ran as duets");
	if (flags & COMPARE_CLASS_SECONDARY_COUNTS)
		strbuf_addstr(sb, "; a secondary row's regression is the job's");
}

static void describe_margins(struct strbuf *sb, const struct compare_class *c)
{
	static const char *const what[COMPARE_MARGIN_MAX] = { "least change", "of counters", "same within" };
	int shown = 0;

	for (int k = 0; k < COMPARE_MARGIN_MAX; k++) {
		const struct compare_margin *m = &c->margins[k];

		if (!m->key)
			continue;
		strbuf_addf(sb, "%s%s %g%% (`%s`", shown++ ? ", " : "", what[k], 100 * m->def, m->key);
		if (m->suite_key)
			strbuf_addf(sb, ", in a suite `%s`", m->suite_key);
		strbuf_addch(sb, ')');
	}
	if (!shown)
		strbuf_addstr(sb, "-");
}

void compare_class_table(struct strbuf *out)
{
	strbuf_addstr(out, "| class | what its numbers are | the metrics it claims | tested | its rows can make "
		      "the job's verdict | margins (rule key) |\n|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < nentries; i++) {
		const struct compare_class *c = entries[i].c;
		int shown = 0;

		strbuf_addf(out, "| %s | %s | ", c->name, c->legend);
		for (size_t k = 0; k < nclaims; k++) {
			if (claims[k].cls != c)
				continue;
			strbuf_addstr(out, shown++ ? ", " : "");
			describe_claim(out, claims[k].claim);
		}
		if (c->flags & COMPARE_CLASS_FALLBACK)
			strbuf_addstr(out, shown ? ", and every metric no other class claims"
						 : "every metric no other class claims");
		strbuf_addstr(out, " | ");
		describe_test(out, c->flags);
		strbuf_addf(out, " | %s | ", c->flags & COMPARE_CLASS_MAKES_VERDICT ? "yes" : "no");
		describe_margins(out, c);
		strbuf_addstr(out, " |\n");
	}
}

int compare_is_score(const char *workload, const char *metric)
{
	const char *own = metric ? own_part(workload, metric) : NULL;
	const struct workload_def *def = own ? workload_lookup(workload) : NULL;

	return def && def->score && !strcmp(own, def->score);
}

/* the rows of each source that are a case's headline; the first is the
 * marker whose presence makes them so */
static const char *const insn_rows[COMPARE_INSN_MAX][4] = {
	[COMPARE_INSN_PLUGIN] = { "kernel_insn_per_op", "user_insn_per_op", "spin_insn_per_op", NULL },
	[COMPARE_INSN_PERF] = { "perf_kernel_insn_per_op", "perf_user_insn_per_op", NULL },
};

int compare_is_insn(const char *workload, const char *metric, enum compare_insn src)
{
	const char *own = metric ? own_part(workload, metric) : NULL;
	size_t i;

	if (!own || src <= COMPARE_INSN_NONE || src >= COMPARE_INSN_MAX)
		return 0;
	for (i = 0; insn_rows[src][i]; i++)
		if (!strcmp(own, insn_rows[src][i]))
			return 1;
	return 0;
}

enum compare_insn compare_insn_marker(const char *workload, const char *metric)
{
	const char *own = metric ? own_part(workload, metric) : NULL;
	int src;

	for (src = COMPARE_INSN_NONE + 1; own && src < COMPARE_INSN_MAX; src++)
		if (!strcmp(own, insn_rows[src][0]))
			return (enum compare_insn)src;
	return COMPARE_INSN_NONE;
}

enum compare_role compare_role_of(const char *workload, const char *metric, const struct compare_class *cls,
				  enum compare_insn insn)
{
	int verdict = cls && (cls->flags & COMPARE_CLASS_MAKES_VERDICT);

	if (!cls || !(cls->flags & COMPARE_CLASS_TESTED))
		return COMPARE_ROLE_CONTEXT;
	if (insn != COMPARE_INSN_NONE) {
		if (verdict && compare_is_insn(workload, metric, insn))
			return COMPARE_ROLE_HEADLINE;
		if (verdict && compare_is_score(workload, metric))
			return COMPARE_ROLE_SCORE;
		return COMPARE_ROLE_SECONDARY;
	}
	return verdict && compare_is_score(workload, metric) ? COMPARE_ROLE_HEADLINE : COMPARE_ROLE_SECONDARY;
}

const char *compare_role_name(enum compare_role r)
{
	return r < COMPARE_ROLE_MAX ? role_names[r] : NULL;
}
