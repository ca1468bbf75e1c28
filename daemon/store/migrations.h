#ifndef TLBLAB_MIGRATIONS_H
#define TLBLAB_MIGRATIONS_H

#include <stddef.h>

/* A store backend's schema migration (store/BACKEND/schema/NNNN-*.sql),
 * embedded at build time by scripts/embed.sh as BACKEND_migrations[], in
 * ascending version order, and BACKEND_nmigrations. */
struct migration {
	int version;
	const char *name;
	const char *sql;
};

#endif
