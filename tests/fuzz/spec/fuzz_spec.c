/*
 * The agent's spec parser (agents/spec.h) on any bytes: the JSON the daemon
 * sends on stdin and the suites of a configuration. It returns a spec or an
 * error naming a field; the units' parsers get the same bytes as a string.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"
#include "banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf err = STRBUF_INIT;
	struct spec s;
	uint64_t bytes;
	double seconds;
	char *str;

	if (spec_parse(&s, (const char *)data, size, &err) == 0)
		spec_release(&s);
	else if (!err.len)
		abort();	/* a refusal always says why */
	strbuf_release(&err);

	if ((str = strndup((const char *)data, size))) {
		spec_parse_bytes(str, &bytes);
		spec_parse_seconds(str, &seconds);
		free(str);
	}
	return 0;
}
