/*
 * The lab's architectures. x86_64 is the host's own; arm64 is cross-built
 * (build.sh --arch arm64) and booted on QEMU's `virt` machine, under TCG on
 * an x86 host.
 */
#include "arch.h"

#include <string.h>

#include "strbuf.h"
#include "util.h"
#include "banned.h"

static const struct arch arches[ARCH_MAX] = {
	{ "x86_64", "x86_64", "bzImage", "qemu-system-x86_64", "q35", "qemu64", "max", "Skylake-Client-v4", "ttyS0", "" },
	{ "arm64", "aarch64", "Image", "qemu-system-aarch64", "virt", "host", "max", "neoverse-n1", "ttyAMA0", "aarch64" },
};

const struct arch *arch_lookup(const char *name)
{
	size_t i;

	if (!name)
		return NULL;
	for (i = 0; i < ARRAY_SIZE(arches); i++)
		if (!strcmp(name, arches[i].name) || !strcmp(name, arches[i].uname))
			return &arches[i];
	return NULL;
}

const struct arch *arch_get(const char *name)
{
	const struct arch *a = arch_lookup(name);

	return a ? a : &arches[0];
}

size_t arch_index(const struct arch *a)
{
	return (size_t)(a - arches);
}

const struct arch *arch_at(size_t i)
{
	return i < ARRAY_SIZE(arches) ? &arches[i] : NULL;
}

const char *arch_names(void)
{
	return "x86_64, arm64";
}

char *arch_expand(const char *path, const struct arch *a)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = path, *hit;

	while ((hit = strstr(p, "{arch}"))) {
		strbuf_add(&sb, p, (size_t)(hit - p));
		strbuf_addstr(&sb, a->name);
		p = hit + strlen("{arch}");
	}
	strbuf_addstr(&sb, p);
	return strbuf_detach(&sb, NULL);
}
