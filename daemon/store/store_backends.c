/*
 * The store's backends (store_backend.h), one line each: the first that
 * claims store_open's argument serves it. SQLite, the embedded default,
 * comes last and claims any path.
 */
#include <stddef.h>

#include "store_backend.h"
#include "banned.h"

extern const struct store_backend store_backend_postgres;
extern const struct store_backend store_backend_sqlite;

static const struct store_backend *const backends[] = {
	&store_backend_postgres,
	&store_backend_sqlite,
};

const struct store_backend *store_backend_for(const char *where)
{
	size_t i;

	for (i = 0; i + 1 < sizeof(backends) / sizeof(backends[0]); i++)
		if (backends[i]->claims(where))
			return backends[i];
	return backends[i];
}
