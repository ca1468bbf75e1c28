/*
 * A builder made ready for build.sh (build_builder.h).
 */
#include "build_builder.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport.h"
#include "util.h"
#include "banned.h"

void build_builder_init(struct build_builder *bb)
{
	bb->t = NULL;
	strbuf_init(&bb->scripts, 0);
	strbuf_init(&bb->script, 0);
	strbuf_init(&bb->work, 0);
	strbuf_init(&bb->outdir, 0);
}

void build_builder_release(struct build_builder *bb)
{
	if (!bb)
		return;
	transport_free(bb->t);
	bb->t = NULL;
	strbuf_release(&bb->scripts);
	strbuf_release(&bb->script);
	strbuf_release(&bb->work);
	strbuf_release(&bb->outdir);
}

int build_builder_open(const struct cfg_builder *b, const struct cfg_tree *tree, const char *kernels_dir,
		       struct build_builder *bb, struct strbuf *err)
{
	struct strbuf src = STRBUF_INIT, why = STRBUF_INIT;
	struct exec_result res;
	int r;

	transport_exec_result_init(&res);
	r = transport_open(&b->ep, 10, &bb->t, &why);
	if (r < 0) {
		strbuf_addf(err, "cannot reach builder %s: %s", b->name, why.buf);
		goto out;
	}
	strbuf_addf(&bb->scripts, "%s/tlblab/scripts", b->workdir);
	strbuf_addf(&bb->script, "%s/build.sh", bb->scripts.buf);
	strbuf_addf(&bb->work, "%s/tlblab/work-%s", b->workdir, tree->name);
	strbuf_addf(&bb->outdir, "%s/tlblab/out", b->workdir);
	{
		const char *mk[] = { "mkdir", "-p", bb->scripts.buf, bb->work.buf, bb->outdir.buf, NULL };
		struct exec_req er = { .argv = mk, .timeout = 30 };

		r = transport_exec(bb->t, &er, &res, &why);
		if (r < 0 || res.status != 0) {
			strbuf_addf(err, "mkdir on %s failed: %s%s", b->name, why.buf, res.err.buf);
			r = r < 0 ? r : -EIO;
			goto out;
		}
	}
	strbuf_addf(&src, "%s/build.sh", kernels_dir);
	r = transport_upload(bb->t, src.buf, bb->script.buf, 0755, &why);
	if (r < 0)
		strbuf_addf(err, "uploading build.sh to %s: %s", b->name, why.buf);
out:
	if (r < 0) {
		transport_free(bb->t);
		bb->t = NULL;
	}
	transport_exec_result_release(&res);
	strbuf_release(&src);
	strbuf_release(&why);
	return r;
}
