/*
 * The registry of backends (backend.h): a fixed table the constructors of
 * the backends' files fill before main, read-only afterwards, so lookups
 * need no lock. "none", the boot method of a machine that runs what it
 * runs, is the registry's own: it has no settings and no ops.
 */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "banned.h"

#define BACKENDS_MAX 64

struct entry {
	const struct backend *b;
	const char *file;
	int line;
};

static struct entry entries[BACKENDS_MAX];
static size_t nentries;
/* what went wrong while registering: a name twice, a full table */
static struct strbuf problems = STRBUF_INIT;

static const struct backend boot_none = {
	.kind = BACKEND_BOOT,
	.name = "none",
	.what = "boots nothing: the suites run on the kernel the machine runs",
};
BACKEND_REGISTER(boot_none)

const char *backend_kind_name(enum backend_kind k)
{
	static const char *const names[BACKEND_KIND_MAX] = {
		[BACKEND_BOOT] = "boot method", [BACKEND_TRANSPORT] = "transport",
	};

	return (unsigned)k < BACKEND_KIND_MAX ? names[k] : "backend";
}

const char *backend_kind_key(enum backend_kind k)
{
	static const char *const keys[BACKEND_KIND_MAX] = {
		[BACKEND_BOOT] = "boot", [BACKEND_TRANSPORT] = "transport",
	};

	return (unsigned)k < BACKEND_KIND_MAX ? keys[k] : "backend";
}

static struct entry *find(enum backend_kind k, const char *name)
{
	for (size_t i = 0; i < nentries; i++)
		if (entries[i].b->kind == k && !strcmp(entries[i].b->name, name))
			return &entries[i];
	return NULL;
}

void backend_register(const struct backend *b, const char *file, int line)
{
	struct entry *first = find(b->kind, b->name);

	if (first) {
		strbuf_addf(&problems, "%s:%d: %s '%s' registered twice (first at %s:%d)\n", file, line,
			    backend_kind_name(b->kind), b->name, first->file, first->line);
		return;
	}
	if (nentries == BACKENDS_MAX) {
		strbuf_addf(&problems, "%s:%d: %s '%s': more than %d backends\n", file, line,
			    backend_kind_name(b->kind), b->name, BACKENDS_MAX);
		return;
	}
	entries[nentries++] = (struct entry){ b, file, line };
}

const struct backend *backend_find(enum backend_kind k, const char *name)
{
	const struct entry *e = name ? find(k, name) : NULL;

	return e ? e->b : NULL;
}

/* The kind's entries sorted by name: the order every listing shows. */
static size_t sorted(enum backend_kind k, const struct backend **out)
{
	size_t n = 0;

	for (size_t i = 0; i < nentries; i++) {
		size_t j;

		if (entries[i].b->kind != k)
			continue;
		for (j = n; j > 0 && strcmp(out[j - 1]->name, entries[i].b->name) > 0; j--)
			out[j] = out[j - 1];
		out[j] = entries[i].b;
		n++;
	}
	return n;
}

const struct backend *backend_at(enum backend_kind k, size_t i)
{
	const struct backend *all[BACKENDS_MAX];

	return i < sorted(k, all) ? all[i] : NULL;
}

void backend_names(enum backend_kind k, struct strbuf *out)
{
	const struct backend *all[BACKENDS_MAX];
	size_t n = sorted(k, all);

	for (size_t i = 0; i < n; i++)
		strbuf_addf(out, "%s%s", i ? (i == n - 1 ? " or " : ", ") : "", all[i]->name);
}

int backend_registry_errors(struct strbuf *out)
{
	if (!problems.len)
		return 0;
	strbuf_addstr(out, problems.buf);
	return -1;
}
