/*
 * The body of POST /api/v1/machines/NAME/health (api.h: api_health_parse)
 * on any bytes, as the route reads it, without the server: a request
 * taken is maintenance or unknown, with a reason of at most 500
 * characters; a refusal says why and leaves nothing to free.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz_body.h"
#include "api.h"
#include "banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf err = STRBUF_INIT;
	const char *health = NULL, *reason = NULL;
	json_t *body = NULL;
	int rc = api_health_parse((const char *)data, size, &body, &health, &reason, &err);

	if (rc == 0 && (!health || (strcmp(health, "maintenance") && strcmp(health, "unknown")) || !reason ||
			strlen(reason) > 500))
		abort();
	fuzz_body_kept(rc, body, &err);
	return 0;
}
