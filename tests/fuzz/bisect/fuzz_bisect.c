/*
 * The body of POST /api/v1/bisections (api.h: api_bisection_parse) on any
 * bytes, read against a small lab (fuzz_lab.h) as the route reads it,
 * without the server. A request taken names a configured tree, suite and
 * machine, two valid refs, a metric, 1 to 20 boots, and a workload and
 * submitter that are valid names when given; a refusal says why and
 * leaves nothing to free.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

#include "../fuzz_body.h"
#include "../fuzz_lab.h"
#include "api.h"
#include "config.h"
#include "store.h"
#include "util.h"
#include "banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf err = STRBUF_INIT;
	struct bisection_request req;
	json_t *body = NULL;
	int rc = api_bisection_parse(fuzz_cfg, (const char *)data, size, &body, &req, &err);

	if (rc == 0 && (!config_tree(fuzz_cfg, req.tree) || !ref_valid(req.good) || !ref_valid(req.bad) ||
			!config_suite(fuzz_cfg, req.suite) || !req.metric || !config_machine(fuzz_cfg, req.machine) ||
			req.boots < 1 || req.boots > 20 || (req.workload && !config_valid_name(req.workload)) ||
			(req.submitter && !config_valid_name(req.submitter))))
		abort();
	fuzz_body_kept(rc, body, &err);
	return 0;
}
