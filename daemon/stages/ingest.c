#include "ingest.h"

#include <limits.h>
#include <string.h>

#include "insn.h"
#include "jsonget.h"
#include "pmu_rows.h"
#include "store.h"
#include "util.h"
#include "banned.h"

#define BAD_EXCERPT 400

void ingest_init(struct ingest *ig)
{
	memset(ig, 0, sizeof(*ig));
	strbuf_init(&ig->agent_error, 0);
	strbuf_init(&ig->bad, 0);
	ig->windows = json_array();
}

void ingest_release(struct ingest *ig)
{
	if (!ig)
		return;
	json_decref(ig->hello);
	json_decref(ig->windows);
	strbuf_release(&ig->agent_error);
	strbuf_release(&ig->bad);
}

static int garbage(struct ingest *ig, const char *why, const char *line, size_t len)
{
	strbuf_reset(&ig->bad);
	strbuf_addf(&ig->bad, "agent output line %ld: %s: %.*s%s", ig->lines, why,
		    (int)(len < BAD_EXCERPT ? len : BAD_EXCERPT), line, len > BAD_EXCERPT ? "..." : "");
	return -1;
}

/* The store did not take what line `what` carried: the stage must not go on
 * as if it had (ingest.h). */
static int store_lost(struct ingest *ig, int rc, const char *what)
{
	ig->store_error = rc;
	strbuf_reset(&ig->bad);
	strbuf_addf(&ig->bad, "store: could not save %s (agent output line %ld): %s", what, ig->lines,
		    store_strerror(rc));
	return -1;
}

static int is_int(json_t *o, const char *k)
{
	return json_is_integer(json_object_get(o, k));
}

static int is_num(json_t *o, const char *k)
{
	return json_is_number(json_object_get(o, k));
}

/* A case or iteration number: an integer from 0 to INT_MAX (a larger one
 * would wrap in the store's int columns and land on another case). */
static int is_index(json_t *o, const char *k)
{
	json_int_t v = jsonget_int_or(o, k, 0);

	return is_int(o, k) && v >= 0 && v <= INT_MAX;
}

/* A duration in seconds: a number, not negative. */
static int is_duration(json_t *o, const char *k)
{
	return is_num(o, k) && jsonget_num_or(o, k, 0) >= 0;
}

static int is_bool(json_t *o, const char *k)
{
	return json_is_boolean(json_object_get(o, k));
}

/* A window's list of CPUs, when given: the numbers of vCPUs a marker line
 * can count (insn.h) */
static int cpus_ok(const json_t *cpus)
{
	size_t i;
	json_t *c;

	if (!cpus)
		return 1;
	if (!json_is_array(cpus) || !json_array_size(cpus))
		return 0;
	json_array_foreach(cpus, i, c)
		if (!json_is_integer(c) || json_integer_value(c) < 0 || json_integer_value(c) >= INSN_VCPU_MAX)
			return 0;
	return 1;
}

/* where a window ran: its CPUs, and a neighbour's workload, CPUs and
 * operations */
static int window_where_ok(json_t *window)
{
	json_t *nb = json_object_get(window, "neighbour");

	if (!cpus_ok(json_object_get(window, "cpus")))
		return 0;
	return !nb || (json_is_object(nb) && json_is_string(json_object_get(nb, "workload")) &&
		       json_object_get(nb, "cpus") && cpus_ok(json_object_get(nb, "cpus")) && is_duration(nb, "ops"));
}

static int is_obj(json_t *o, const char *k)
{
	return json_is_object(json_object_get(o, k));
}

/* Every member of the object is a number. */
static int all_numbers(json_t *obj)
{
	const char *k;
	json_t *v;

	json_object_foreach(obj, k, v)
		if (!json_is_number(v) || strlen(k) > 200)
			return 0;
	return 1;
}

static int on_iteration(struct ingest *ig, json_t *o, const char *line, size_t len)
{
	json_t *params = json_object_get(o, "params"), *metrics = json_object_get(o, "metrics");
	json_t *info = json_object_get(o, "info"), *profile = json_object_get(o, "profile");
	json_t *window = json_object_get(o, "window");
	const char *workload = jsonget_str(params, "workload");
	json_t *pmu_metrics = NULL, *pmu_info = NULL, *pmu_unavailable = NULL, *own_params = NULL;
	struct strbuf why = STRBUF_INIT;
	struct run_row r = { 0 };
	int rc;

	if (!is_index(o, "case") || !is_index(o, "iteration") || !is_bool(o, "warmup") ||
	    !json_is_object(params) || !workload || !json_is_object(metrics) || !all_numbers(metrics) ||
	    !is_duration(o, "duration_s") || (info && !json_is_object(info)) ||
	    (profile && !json_is_object(profile)))
		return garbage(ig, "malformed iteration", line, len);
	r.job_id = ig->job_id;
	r.stage_id = ig->stage_id;
	r.machine = ig->machine;
	r.side = ig->side;
	r.build_id = ig->build_id;
	r.boot_id = ig->boot_id;
	r.spec_index = ig->spec_index;
	r.case_index = (int)jsonget_int_or(o, "case", 0);
	r.iteration = (int)jsonget_int_or(o, "iteration", 0);
	r.warmup = json_is_true(json_object_get(o, "warmup"));
	r.workload = workload;
	r.params = params;
	r.duration = jsonget_num_or(o, "duration_s", 0);
	if (window && (!json_is_object(window) || !json_is_integer(json_object_get(window, "index")) ||
		       jsonget_int_or(window, "index", 0) < 1 ||
		       jsonget_int_or(window, "index", 0) > INT_MAX ||
		       !is_duration(window, "ops") || !window_where_ok(window)))
		return garbage(ig, "malformed iteration window", line, len);
	if (ig->cpus > 0) {
		/* the sweep's count, beside the agent's own params (no spec
		 * has a "cpus" field: the agent's parser refuses one) */
		own_params = json_deep_copy(params);
		json_object_set_new(own_params, "cpus", json_integer(ig->cpus));
		r.params = own_params;
	}
	/* the CPU's counts per op: the agent's counters over the window's
	 * operations (pmu_rows.h) */
	pmu_metrics = json_deep_copy(metrics);
	pmu_info = info ? json_deep_copy(info) : json_object();
	pmu_unavailable = json_object();
	if (pmu_rows(workload, metrics, json_object_get(o, "unavailable"), window != NULL,
		     jsonget_num_or(window, "ops", 0), ig->pmu_why, pmu_metrics, pmu_info,
		     pmu_unavailable, &why) < 0) {
		struct strbuf msg = STRBUF_INIT;

		strbuf_addf(&msg, "malformed iteration: %s", why.buf);
		rc = garbage(ig, msg.buf, line, len);
		strbuf_release(&msg);
		goto out;
	}
	if ((rc = store_run_add(ig->st, &r, pmu_metrics, pmu_info, profile, NULL)) < 0) {
		rc = store_lost(ig, rc, "an iteration");
		goto out;
	}
	if (window) {
		json_t *e = json_pack("{s:i,s:i,s:b,s:O,s:O,s:s}", "case", r.case_index, "iteration", r.iteration,
				      "warmup", r.warmup, "index", json_object_get(window, "index"),
				      "ops", json_object_get(window, "ops"), "workload", workload);

		/* where it ran, and its neighbour's share (checked where used) */
		if (json_object_get(window, "cpus"))
			json_object_set(e, "cpus", json_object_get(window, "cpus"));
		if (json_object_get(window, "neighbour"))
			json_object_set(e, "neighbour", json_object_get(window, "neighbour"));
		json_array_append_new(ig->windows, e);
	}
	if (is_obj(o, "unavailable"))
		json_object_update_missing(pmu_unavailable, json_object_get(o, "unavailable"));
	if (json_object_size(pmu_unavailable) &&
	    (rc = store_unavailable_add(ig->st, ig->stage_id, pmu_unavailable)) < 0) {
		rc = store_lost(ig, rc, "an iteration's unavailable counters");
		goto out;
	}
	ig->iterations++;
	rc = 0;
out:
	json_decref(own_params);
	json_decref(pmu_metrics);
	json_decref(pmu_info);
	json_decref(pmu_unavailable);
	strbuf_release(&why);
	return rc;
}

int ingest_line(struct ingest *ig, const char *line, size_t len, int truncated)
{
	json_error_t jerr;
	json_t *o;
	const char *type;
	int rc = 0;

	ig->lines++;
	if (truncated)
		return garbage(ig, "line too long", line, len);
	if (len == 0)
		return 0;
	o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!o)
		return garbage(ig, "not JSON", line, len);
	type = jsonget_str(o, "type");
	if (!json_is_object(o) || !type) {
		rc = garbage(ig, "no \"type\"", line, len);
		goto out;
	}
	if (!strcmp(type, "hello")) {
		if (!is_int(o, "protocol") || !is_obj(o, "host")) {
			rc = garbage(ig, "malformed hello", line, len);
			goto out;
		}
		json_decref(ig->hello);
		ig->hello = json_incref(o);
		ig->saw_hello = 1;
	} else if (!strcmp(type, "sample")) {
		if (!is_num(o, "t") || !is_duration(o, "dt") || !is_index(o, "case") || !is_index(o, "iteration") ||
		    !is_bool(o, "warmup") || !is_bool(o, "window") || !is_obj(o, "values") ||
		    !all_numbers(json_object_get(o, "values"))) {
			rc = garbage(ig, "malformed sample", line, len);
			goto out;
		}
		if ((rc = store_sample_add(ig->st, ig->stage_id, ig->spec_index, o)) < 0) {
			rc = store_lost(ig, rc, "a sample");
			goto out;
		}
		ig->samples++;
	} else if (!strcmp(type, "iteration")) {
		rc = on_iteration(ig, o, line, len);
	} else if (!strcmp(type, "result")) {
		const char *status = jsonget_str(o, "status");

		if (!status) {
			rc = garbage(ig, "malformed result", line, len);
			goto out;
		}
		ig->saw_result = 1;
		ig->result_ok = !strcmp(status, "ok");
		if (is_obj(o, "unavailable") &&
		    (rc = store_unavailable_add(ig->st, ig->stage_id, json_object_get(o, "unavailable"))) < 0)
			rc = store_lost(ig, rc, "the result's unavailable counters");
	} else if (!strcmp(type, "error")) {
		const char *msg = jsonget_str(o, "message");

		if (!msg) {
			rc = garbage(ig, "malformed error", line, len);
			goto out;
		}
		strbuf_reset(&ig->agent_error);
		strbuf_addf(&ig->agent_error, "%.2000s", msg);
	}
	/* other types: a newer agent's; ignored */
out:
	json_decref(o);
	return rc;
}
