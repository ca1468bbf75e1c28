/*
 * The bodies of the API's POSTs other than a job's (api.h): a bisection,
 * an alert's new state, a machine's health. Each is read into what its
 * route needs, apart from the server and the store, so that the route
 * only acts on a request already checked and the fuzzers
 * (tests/fuzz/bisect, alert, health) can call the readers directly.
 */
#include "api.h"
#include "api_int.h"

#include <string.h>

#include "config.h"
#include "jsonget.h"
#include "store.h"
#include "util.h"
#include "banned.h"

#define HEALTH_REASON_MAX 500	/* characters of a health change's reason */

/* a metric's name as the agent writes them: letters, digits, '.', '_', ':', '-' */
static int metric_valid(const char *m)
{
	size_t i, n = m ? strlen(m) : 0;

	if (!n || n > 150)
		return 0;
	for (i = 0; i < n; i++)
		if (!((m[i] >= 'a' && m[i] <= 'z') || (m[i] >= 'A' && m[i] <= 'Z') || (m[i] >= '0' && m[i] <= '9') ||
		      strchr("._:-", m[i])))
			return 0;
	return 1;
}

int api_bisection_parse(const struct lab_config *cfg, const char *buf, size_t len, json_t **ret_body,
			struct bisection_request *req, struct strbuf *err)
{
	static const char *const keys[] = { "tree", "good", "bad", "suite", "metric", "machine", "workload", "boots",
					    "submitter", NULL };
	json_t *body = json_loadb(buf, len, 0, NULL), *v;
	const char *key, *bad_field = NULL, *why = "";
	size_t i;

	*req = (struct bisection_request){ 0 };
	if (!json_is_object(body)) {
		json_decref(body);
		return strbuf_seterr(err, "the body must be a JSON object");
	}
	json_object_foreach(body, key, v) {
		for (i = 0; keys[i] && strcmp(keys[i], key); i++)
			;
		if (!keys[i]) {
			bad_field = key;
			why = "not a field of a bisection (tree, good, bad, suite, metric, machine, workload, boots, "
			      "submitter)";
		}
	}
	req->tree = jsonget_str(body, "tree");
	req->good = jsonget_str(body, "good");
	req->bad = jsonget_str(body, "bad");
	req->suite = jsonget_str(body, "suite");
	req->metric = jsonget_str(body, "metric");
	req->machine = jsonget_str(body, "machine");
	req->workload = jsonget_str(body, "workload");
	req->submitter = jsonget_str(body, "submitter");
	/* an optional field sent as null is not there */
	for (i = 0; keys[i]; i++)
		if (json_is_null(json_object_get(body, keys[i])))
			json_object_del(body, keys[i]);
	v = json_object_get(body, "boots");
	if (bad_field)
		;
	else if (!req->tree || !config_tree(cfg, req->tree))
		bad_field = "tree", why = "must name a configured tree";
	else if (!ref_valid(req->good))
		bad_field = "good", why = "must be a git ref or commit id";
	else if (!ref_valid(req->bad))
		bad_field = "bad", why = "must be a git ref or commit id";
	else if (!req->suite || !config_suite(cfg, req->suite))
		bad_field = "suite", why = "must name a configured suite";
	else if (!metric_valid(req->metric))
		bad_field = "metric", why = "must be a metric's name, such as mprotect.ops_per_sec";
	else if (req->machine && !config_machine(cfg, req->machine))
		bad_field = "machine", why = "must name a configured machine";
	else if (!req->machine && !cfg->nmachines)
		bad_field = "machine", why = "the lab has no machine";
	else if (json_object_get(body, "workload") && !config_valid_name(req->workload))
		bad_field = "workload", why = "not a valid name";
	/* checked before the cast: 4294967298 is not 2 boots */
	else if (v && (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 20))
		bad_field = "boots", why = "must be an integer from 1 to 20";
	else if (json_object_get(body, "submitter") && !config_valid_name(req->submitter))
		bad_field = "submitter", why = "not a valid name (letters, digits, '.', '_', '-')";
	if (bad_field) {
		strbuf_seterr(err, "%.64s: %s", bad_field, why);	/* bad_field may be the body's */
		json_decref(body);
		*req = (struct bisection_request){ 0 };
		return -1;
	}
	req->boots = v ? (int)json_integer_value(v) : 2;
	if (!req->machine)
		req->machine = cfg->machines[0].name;
	*ret_body = body;
	return 0;
}

/*
 * A body of two string members, key (required) and opt (def when the body
 * does not say), which check accepts (0) or refuses (-1 with err). The
 * strings point into *ret_body, the caller's from then on.
 */
static int body_pair_parse(const char *buf, size_t len, const char *key, const char *opt, const char *def,
			   int (*check)(const char *val, const char *opt_val, struct strbuf *err),
			   json_t **ret_body, const char **ret_val, const char **ret_opt, struct strbuf *err)
{
	json_t *body = json_loadb(buf, len, 0, NULL);
	const char *val = jsonget_str(body, key);
	const char *opt_val = jsonget_str(body, opt);

	if (check(val, opt_val, err) < 0) {
		json_decref(body);
		return -1;
	}
	*ret_body = body;
	*ret_val = val;
	*ret_opt = opt_val ? opt_val : def;
	return 0;
}

/* whether the state is one is the store's to say */
static int alert_state_check(const char *state, const char *by, struct strbuf *err)
{
	if (!state)
		return strbuf_seterr(err, "%s", API_ALERT_STATE_WHY);
	if (by && !config_valid_name(by))
		return strbuf_seterr(err, "by: not a valid name (letters, digits, '.', '_', '-')");
	return 0;
}

int api_alert_state_parse(const char *buf, size_t len, json_t **ret_body, const char **ret_state,
			  const char **ret_by, struct strbuf *err)
{
	return body_pair_parse(buf, len, "state", "by", "unknown", alert_state_check, ret_body, ret_state,
			       ret_by, err);
}

static int health_check(const char *health, const char *reason, struct strbuf *err)
{
	if (!health || (strcmp(health, "maintenance") && strcmp(health, "unknown")))
		return strbuf_seterr(err, "health: must be maintenance or unknown");
	if (reason && strlen(reason) > HEALTH_REASON_MAX)
		return strbuf_seterr(err, "reason: at most %d characters", HEALTH_REASON_MAX);
	return 0;
}

int api_health_parse(const char *buf, size_t len, json_t **ret_body, const char **ret_health,
		     const char **ret_reason, struct strbuf *err)
{
	return body_pair_parse(buf, len, "health", "reason", "set by an operator", health_check, ret_body,
			       ret_health, ret_reason, err);
}
