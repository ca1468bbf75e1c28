#ifndef TLBLAB_MIGRATIONS_H
#define TLBLAB_MIGRATIONS_H

#include <stddef.h>

/* The store's schema migrations (schemas/NNNN-*.sql), embedded at build
 * time by scripts/embed.sh, in ascending version order. */
struct migration {
	int version;
	const char *name;
	const char *sql;
};

extern const struct migration migrations[];
extern const size_t nmigrations;

#endif
