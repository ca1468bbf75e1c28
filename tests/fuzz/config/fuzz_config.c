/*
 * The configuration loader (daemon/config/config.h) on any bytes: config_load_string
 * parses the YAML, validates every section and checks each suite's specs
 * with the agent's parser. Whatever it is given, it returns a config or
 * errors, and frees all it allocated.
 */
#include <stdint.h>
#include <stdlib.h>

#include "config.h"
#include "banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf err = STRBUF_INIT;
	struct lab_config *cfg = NULL;

	if (config_load_string("fuzz.yaml", (const char *)data, size, &cfg, &err) == 0) {
		if (!cfg)
			abort();
		config_free(cfg);
	} else if (!err.len) {
		abort();	/* a refusal always says why */
	}
	strbuf_release(&err);
	return 0;
}
