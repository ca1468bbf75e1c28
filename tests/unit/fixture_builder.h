#ifndef TLBLAB_FIXTURE_BUILDER_H
#define TLBLAB_FIXTURE_BUILDER_H

/*
 * What the tests of the builder's side share (test_build_builder.c,
 * test_build_resolve.c): a lab of one local builder whose work directory
 * is DIR/builder and one tree at DIR/linux, the store in DIR/data.
 * Include after testlib.h.
 */

#include "config.h"
#include "strbuf.h"

/* The lab over dir, loaded as the file `name` says in messages. */
static inline struct lab_config *builder_lab(const char *dir, const char *name)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	struct lab_config *cfg = NULL;

	strbuf_addf(&text, "lab: {data_dir: %s/data}\n"
		    "builders:\n  - {name: local, transport: local, workdir: %s/builder}\n"
		    "trees:\n  - {name: linux, url: %s/linux, builder: local}\n", dir, dir, dir);
	if (config_load_string(name, text.buf, text.len, &cfg, &err) < 0)
		fail_msg("%s", err.buf);
	strbuf_release(&text);
	strbuf_release(&err);
	return cfg;
}

#endif
