#ifndef TLBLAB_BUILD_BUILDER_H
#define TLBLAB_BUILD_BUILDER_H

#include "config.h"
#include "strbuf.h"

/*
 * A builder made ready for kernels/build.sh, for the build stage
 * (build_stage.c) and the tracker's resolve (build_resolve.c): the
 * transport to it, its directories, and the script there.
 */

struct transport;

/* A builder ready for build.sh; init, then open; release frees it all. */
struct build_builder {
	struct transport *t;
	struct strbuf scripts;	/* WORKDIR/tlblab/scripts: fragments, patches */
	struct strbuf script;	/* build.sh there */
	struct strbuf work;	/* WORKDIR/tlblab/work-TREE: the tree's checkout */
	struct strbuf outdir;	/* WORKDIR/tlblab/out: the kernels built */
};

void build_builder_init(struct build_builder *bb);
void build_builder_release(struct build_builder *bb);

/*
 * Connects to builder b, makes the directories for tree and uploads
 * kernels_dir/build.sh. 0, or a negative errno with err (bb then holds no
 * transport).
 */
int build_builder_open(const struct cfg_builder *b, const struct cfg_tree *tree, const char *kernels_dir,
		       struct build_builder *bb, struct strbuf *err);

#endif
