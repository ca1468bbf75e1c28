/*
 * The body of POST /api/v1/alerts/ID/state (api.h: api_alert_state_parse)
 * on any bytes, as the route reads it, without the server: a request
 * taken has a state (the store says whether it is one) and a by that is a
 * valid name; a refusal says why and leaves nothing to free.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

#include "../fuzz_body.h"
#include "api.h"
#include "config.h"
#include "banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf err = STRBUF_INIT;
	const char *state = NULL, *by = NULL;
	json_t *body = NULL;
	int rc = api_alert_state_parse((const char *)data, size, &body, &state, &by, &err);

	if (rc == 0 && (!state || !config_valid_name(by)))
		abort();
	fuzz_body_kept(rc, body, &err);
	return 0;
}
