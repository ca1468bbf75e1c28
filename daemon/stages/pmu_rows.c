#include "pmu_rows.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "jsonget.h"
#include "pmu_events.h"
#include "util.h"
#include "banned.h"

static const struct {
	const char *row;
	const char *unit;
} rows[PMU_EVENT_MAX] = {
	[PMU_INSN_KERNEL] = { "perf_kernel_insn_per_op", "insn/op" },
	[PMU_INSN_USER] = { "perf_user_insn_per_op", "insn/op" },
	[PMU_DTLB_MISS] = { "perf_dtlb_miss_per_op", "events/op" },
	[PMU_ITLB_MISS] = { "perf_itlb_miss_per_op", "events/op" },
};

/* A count from the agent: a whole number, not negative. */
static int is_count(const json_t *v)
{
	double x = json_number_value(v);

	return json_is_number(v) && isfinite(x) && x >= 0 && x == floor(x);
}

int pmu_rows(const char *workload, const json_t *agent_metrics, const json_t *agent_unavailable,
	     int have_window, double ops, const char *why_not, json_t *metrics, json_t *info,
	     json_t *unavailable, struct strbuf *err)
{
	const json_t *lost = json_object_get(agent_metrics, PMU_UNSCHEDULED);
	char lost_why[200] = "";
	int e;

	/* first every field, so that garbage adds no row */
	for (e = 0; e < PMU_EVENT_MAX; e++) {
		const json_t *v = json_object_get(agent_metrics, pmu_counter_names[e]);

		if (v && !is_count(v))
			return strbuf_seterr(err, "%s is not a count: %g", pmu_counter_names[e],
					     json_number_value(v));
	}
	if (lost && !is_count(lost))
		return strbuf_seterr(err, "%s is not a count: %g", PMU_UNSCHEDULED, json_number_value(lost));
	if (lost && json_number_value(lost) > 0)
		snprintf(lost_why, sizeof(lost_why), "the PMU's counters were off for %.0f ns of the window (%s): "
			 "another perf user, e.g. the NMI watchdog or a profile, took them, so no count is exact",
			 json_number_value(lost), PMU_UNSCHEDULED);
	for (e = 0; e < PMU_EVENT_MAX; e++) {
		const char *counter = pmu_counter_names[e];
		const json_t *v = json_object_get(agent_metrics, counter);
		const char *agent_why = jsonget_str(agent_unavailable, counter);
		char name[256];
		json_t *why = NULL;

		snprintf(name, sizeof(name), "%s.%s", workload, rows[e].row);
		if (why_not)
			why = json_string(why_not);
		else if (agent_why)
			why = json_sprintf("%s: %s", counter, agent_why);
		else if (!v)
			why = json_sprintf("the agent reported no %s (an agent older than the daemon?)", counter);
		else if (!have_window)
			why = json_string("the iteration has no measured window");
		else if (!(ops > 0))
			why = json_string("no operations counted in the window");
		else if (!lost)
			why = json_sprintf("the agent reported no %s: whether the PMU counted the whole window "
					   "is unknown", PMU_UNSCHEDULED);
		else if (lost_why[0])
			why = json_string(lost_why);
		if (why) {
			json_object_set_new(unavailable, name, why);
			continue;
		}
		json_object_set_new(metrics, name, json_real(json_number_value(v) / ops));
		json_object_set_new(info, name, json_pack("{s:s,s:s,s:s}", "unit", rows[e].unit, "direction", "lower",
							  "source", "perf"));
	}
	return 0;
}
