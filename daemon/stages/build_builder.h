#ifndef TLBLAB_BUILD_BUILDER_H
#define TLBLAB_BUILD_BUILDER_H

#include "config.h"
#include "strbuf.h"

/*
 * A builder made ready for kernels/build/build.sh, for the build stage
 * (build_stage.c) and the tracker's resolve (build_resolve.c): the
 * transport to it, its directories, and the build script set there.
 *
 * The set is kernels/build/: build.sh, parts.list, and the parts that
 * parts.list names (one file name a line, '#' comment lines), which
 * build.sh sources from its own directory. parts.list is the one list of
 * them. On the builder the set lives in WORKDIR/tlblab/scripts/build-ID/,
 * ID a hash of the set's names and bytes: a run reads one version of the
 * set whole, whatever another daemon (or a newer one) uploads meanwhile.
 * It is uploaded when that directory has no build.sh yet, build.sh last,
 * so one with build.sh is complete; each file arrives by rename.
 */

struct transport;

#define BUILD_SET_DIR "build"		/* the set's folder in kernels/ */
#define BUILD_SET_ENTRY "build.sh"
#define BUILD_SET_LIST "parts.list"
#define BUILD_SET_MAX_PARTS 32
#define BUILD_SET_MAX_BYTES (1u << 20)	/* per file */

/* The set in a kernels directory: the files to upload, in order. */
struct build_set {
	char *names[BUILD_SET_MAX_PARTS + 2];	/* parts.list, the parts, build.sh */
	size_t n;
	char id[17];	/* 16 hex digits of the SHA-256 of names and bytes */
};

/*
 * Reads kernels_dir/build/parts.list and hashes the set it names. 0; or -1
 * with err when a file is missing or unreadable, larger than
 * BUILD_SET_MAX_BYTES, or parts.list names something that is not a part
 * (a name like config.sh: [a-z][a-z0-9.-]*.sh, not build.sh, at most
 * BUILD_SET_MAX_PARTS of them), the same rule build.sh applies. set is
 * the caller's (build_set_release) either way.
 */
int build_set_read(const char *kernels_dir, struct build_set *set, struct strbuf *err);
void build_set_release(struct build_set *set);

/* A builder ready for build.sh; init, then open; release frees it all. */
struct build_builder {
	struct transport *t;
	struct strbuf scripts;	/* WORKDIR/tlblab/scripts: fragments, patches */
	struct strbuf script;	/* the set's build.sh there */
	struct strbuf work;	/* WORKDIR/tlblab/work-TREE: the tree's checkout */
	struct strbuf outdir;	/* WORKDIR/tlblab/out: the kernels built */
};

void build_builder_init(struct build_builder *bb);
void build_builder_release(struct build_builder *bb);

/*
 * Reads the set from kernels_dir, connects to builder b, makes the
 * directories for tree and uploads the set unless the builder has it.
 * 0, or a negative errno with err (bb then holds no transport).
 */
int build_builder_open(const struct cfg_builder *b, const struct cfg_tree *tree, const char *kernels_dir,
		       struct build_builder *bb, struct strbuf *err);

#endif
