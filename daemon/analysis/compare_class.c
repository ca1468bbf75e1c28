/*
 * A row's class and role (compare_class.h says what they mean). The class
 * is one ordered table of name patterns, first match wins, so the rule for
 * any metric is read in one place; the workload's score comes from the
 * agent's own workload table (ops->score), so the daemon never spells a
 * workload's headline a second time.
 */
#include "compare_class.h"

#include <stddef.h>
#include <string.h>

#include "util.h"
#include "workload_catalog.h"
#include "banned.h"

enum match {
	M_SUFFIX,	/* the name ends with the pattern */
	M_PREFIX,	/* the name starts with it */
	M_CALLS,	/* kfunc.<fn>.calls: a count over the window */
	M_WL_COUNT,	/* the workload's own, neutral and not a time: a count */
	M_WORKLOAD,	/* the workload's own metric ("<wl>.") */
};

static const struct class_rule {
	enum match how;
	const char *pattern;
	enum compare_class cls;
} class_rules[] = {
	{ M_SUFFIX, ".spin_insn_per_op", COMPARE_CLASS_WAIT },
	/* the emulator's wall-clock and CPU time on the host per operation */
	{ M_SUFFIX, ".host_ns_per_op", COMPARE_CLASS_TIME },
	{ M_SUFFIX, ".host_cpu_ns_per_op", COMPARE_CLASS_TIME },
	{ M_SUFFIX, "_insn_per_op", COMPARE_CLASS_WORK },
	{ M_SUFFIX, ".per_kop", COMPARE_CLASS_WORK },	/* C.per_kop */
	{ M_SUFFIX, "_per_kop", COMPARE_CLASS_WORK },	/* tlb.shootdowns_per_kop */
	{ M_SUFFIX, ".per_op", COMPARE_CLASS_WORK },
	{ M_SUFFIX, "_per_op", COMPARE_CLASS_WORK },	/* kfunc.<fn>.calls_per_op */
	/* a counter's rate over wall-clock seconds: a slower kernel would
	 * look like an improvement */
	{ M_SUFFIX, ".peak_per_sec", COMPARE_CLASS_CONTEXT },
	{ M_SUFFIX, ".per_sec", COMPARE_CLASS_CONTEXT },
	{ M_CALLS, "kfunc.", COMPARE_CLASS_CONTEXT },
	{ M_PREFIX, "kfunc.", COMPARE_CLASS_TIME },	/* self_pct, ns_per_call */
	{ M_PREFIX, "procstat.", COMPARE_CLASS_TIME },	/* busy_pct */
	{ M_PREFIX, "neighbour.", COMPARE_CLASS_TIME },	/* its ops/s */
	{ M_WL_COUNT, NULL, COMPARE_CLASS_CONTEXT },	/* fault-write.rounds, exec.bogo_ops */
	{ M_WORKLOAD, NULL, COMPARE_CLASS_TIME },	/* scores, elapsed, mflops, latencies */
	/* the rest are the monitors' raw deltas: interrupts.*, vmstat.*,
	 * tlb_flush.*, perf_stat.* */
};

static const char *const class_names[COMPARE_CLASS_MAX] = { "work", "wait", "time", "context" };
static const char *const role_names[COMPARE_ROLE_MAX] = { "headline", "score", "secondary", "context" };

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

static int rule_matches(const struct class_rule *c, const char *workload, const char *metric,
			const char *unit, const char *direction)
{
	switch (c->how) {
	case M_SUFFIX:
		return ends_with(metric, c->pattern);
	case M_PREFIX:
		return starts_with(metric, c->pattern);
	case M_CALLS:
		return starts_with(metric, c->pattern) && ends_with(metric, ".calls");
	case M_WL_COUNT:
		return own_part(workload, metric) && (!direction || !strcmp(direction, "neutral")) &&
		       !unit_is_time(unit) && !compare_is_score(workload, metric);
	case M_WORKLOAD:
		return own_part(workload, metric) != NULL;
	}
	return 0;
}

enum compare_class compare_class_of(const char *workload, const char *metric, const char *unit,
				    const char *direction)
{
	size_t i;

	if (!metric)
		return COMPARE_CLASS_CONTEXT;
	for (i = 0; i < ARRAY_SIZE(class_rules); i++)
		if (rule_matches(&class_rules[i], workload, metric, unit, direction))
			return class_rules[i].cls;
	return COMPARE_CLASS_CONTEXT;
}

const char *compare_class_name(enum compare_class c)
{
	return c < COMPARE_CLASS_MAX ? class_names[c] : NULL;
}

enum compare_class compare_class_from_name(const char *name)
{
	int c;

	for (c = 0; name && c < COMPARE_CLASS_MAX; c++)
		if (!strcmp(name, class_names[c]))
			return (enum compare_class)c;
	return COMPARE_CLASS_MAX;
}

const char *compare_class_legend(void)
{
	return "work: instructions per operation, the emulator's (TCG plugin, not hardware cycles) or on a "
	       "real machine the CPU's (perf), and counters per operation; wait: spin-wait instructions; time: clock time, of the guest (under icount, the instructions run) or, in host_ns and host_cpu_ns rows, of the host; "
	       "context: counts and rates over the window, not tested";
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

enum compare_role compare_role_of(const char *workload, const char *metric, enum compare_class cls,
				  enum compare_insn insn)
{
	if (cls == COMPARE_CLASS_CONTEXT)
		return COMPARE_ROLE_CONTEXT;
	if (insn != COMPARE_INSN_NONE) {
		if (compare_is_insn(workload, metric, insn))
			return COMPARE_ROLE_HEADLINE;
		if (compare_is_score(workload, metric))
			return COMPARE_ROLE_SCORE;
		return COMPARE_ROLE_SECONDARY;
	}
	return compare_is_score(workload, metric) ? COMPARE_ROLE_HEADLINE : COMPARE_ROLE_SECONDARY;
}

const char *compare_role_name(enum compare_role r)
{
	return r < COMPARE_ROLE_MAX ? role_names[r] : NULL;
}
