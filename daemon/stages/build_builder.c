/*
 * A builder made ready for build.sh, and the build script set uploaded to
 * it (build_builder.h says why the set lives in a directory named by its
 * hash).
 */
#include "build_builder.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport.h"
#include "util.h"
#include "banned.h"

/* A part's name as build.sh takes it: [a-z][a-z0-9.-]*.sh, not build.sh. */
static int part_name_valid(const char *s, size_t len)
{
	size_t i;

	if (len < 4 || len > 64 || s[0] < 'a' || s[0] > 'z' || memcmp(s + len - 3, ".sh", 3) ||
	    (len == strlen(BUILD_SET_ENTRY) && !memcmp(s, BUILD_SET_ENTRY, len)))
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '-'))
			return 0;
	return 1;
}

/* The parts parts.list (text, read from path) names, into set->names. */
static int parse_list(const char *path, const char *text, struct build_set *set, struct strbuf *err)
{
	const char *line = text, *nl;
	int lineno = 0;

	for (; *line; line = nl ? nl + 1 : line + strlen(line)) {
		size_t len;

		nl = strchr(line, '\n');
		len = nl ? (size_t)(nl - line) : strlen(line);
		lineno++;
		if (!len || line[0] == '#')
			continue;
		if (!part_name_valid(line, len))
			return strbuf_seterr(err, "%s:%d: '%.*s' is not a part's name (like config.sh)", path, lineno,
					     (int)(len < 80 ? len : 80), line);
		if (set->n > BUILD_SET_MAX_PARTS)
			return strbuf_seterr(err, "%s: more than %d parts", path, BUILD_SET_MAX_PARTS);
		set->names[set->n] = xmalloc(len + 1);
		memcpy(set->names[set->n], line, len);
		set->names[set->n++][len] = '\0';
	}
	return 0;
}

int build_set_read(const char *kernels_dir, struct build_set *set, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;
	EVP_MD_CTX *md = NULL;
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned int dlen = 0;
	char hex[2 * EVP_MAX_MD_SIZE + 1];
	size_t i;
	int r = -1;

	memset(set, 0, sizeof(*set));
	set->names[set->n++] = xstrdup(BUILD_SET_LIST);
	strbuf_addf(&path, "%s/%s/%s", kernels_dir, BUILD_SET_DIR, BUILD_SET_LIST);
	if ((r = strbuf_read_file(&text, path.buf, BUILD_SET_MAX_BYTES)) < 0) {
		r = strbuf_seterr(err, "the build script set: %s: %s", path.buf, strerror(-r));
		goto out;
	}
	if ((r = parse_list(path.buf, text.buf, set, err)) < 0)
		goto out;
	set->names[set->n++] = xstrdup(BUILD_SET_ENTRY);
	md = EVP_MD_CTX_new();
	if (!md || !EVP_DigestInit_ex(md, EVP_sha256(), NULL)) {
		r = strbuf_seterr(err, "the build script set: no SHA-256");
		goto out;
	}
	/* each file as its name, its size and its bytes: the id changes with
	 * any of them, the order of the parts included */
	for (i = 0; i < set->n; i++) {
		strbuf_reset(&path);
		strbuf_reset(&text);
		strbuf_addf(&path, "%s/%s/%s", kernels_dir, BUILD_SET_DIR, set->names[i]);
		if ((r = strbuf_read_file(&text, path.buf, BUILD_SET_MAX_BYTES)) < 0) {
			r = strbuf_seterr(err, "the build script set: %s: %s", path.buf, strerror(-r));
			goto out;
		}
		strbuf_reset(&path);
		strbuf_addf(&path, "%s\n%zu\n", set->names[i], text.len);
		EVP_DigestUpdate(md, path.buf, path.len);
		EVP_DigestUpdate(md, text.buf, text.len);
	}
	EVP_DigestFinal_ex(md, digest, &dlen);
	hex_encode(digest, dlen, hex);
	snprintf(set->id, sizeof(set->id), "%.16s", hex);
	r = 0;
out:
	EVP_MD_CTX_free(md);
	strbuf_release(&path);
	strbuf_release(&text);
	return r;
}

void build_set_release(struct build_set *set)
{
	size_t i;

	if (!set)
		return;
	for (i = 0; i < set->n; i++)
		free(set->names[i]);
	memset(set, 0, sizeof(*set));
}

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

/* Uploads the set to dir on the builder, build.sh last (with its mode). */
static int upload_set(struct transport *t, const char *kernels_dir, const struct build_set *set, const char *dir,
		      const char *builder, struct strbuf *err)
{
	struct strbuf src = STRBUF_INIT, dst = STRBUF_INIT, why = STRBUF_INIT;
	size_t i;
	int r = 0;

	for (i = 0; i < set->n && r == 0; i++) {
		int entry = !strcmp(set->names[i], BUILD_SET_ENTRY);

		strbuf_reset(&src);
		strbuf_reset(&dst);
		strbuf_addf(&src, "%s/%s/%s", kernels_dir, BUILD_SET_DIR, set->names[i]);
		strbuf_addf(&dst, "%s/%s", dir, set->names[i]);
		r = transport_upload(t, src.buf, dst.buf, entry ? 0755 : 0644, &why);
		if (r < 0)
			strbuf_addf(err, "uploading %s to %s: %s", set->names[i], builder, why.buf);
	}
	strbuf_release(&src);
	strbuf_release(&dst);
	strbuf_release(&why);
	return r;
}

int build_builder_open(const struct cfg_builder *b, const struct cfg_tree *tree, const char *kernels_dir,
		       struct build_builder *bb, struct strbuf *err)
{
	struct strbuf dir = STRBUF_INIT, why = STRBUF_INIT;
	struct build_set set;
	struct exec_result res;
	int r;

	transport_exec_result_init(&res);
	if (build_set_read(kernels_dir, &set, err) < 0) {
		r = -ENOENT;
		goto out;
	}
	r = transport_open(&b->ep, 10, &bb->t, &why);
	if (r < 0) {
		strbuf_addf(err, "cannot reach builder %s: %s", b->name, why.buf);
		goto out;
	}
	strbuf_addf(&bb->scripts, "%s/tlblab/scripts", b->workdir);
	strbuf_addf(&dir, "%s/%s-%s", bb->scripts.buf, BUILD_SET_DIR, set.id);
	strbuf_addf(&bb->script, "%s/%s", dir.buf, BUILD_SET_ENTRY);
	strbuf_addf(&bb->work, "%s/tlblab/work-%s", b->workdir, tree->name);
	strbuf_addf(&bb->outdir, "%s/tlblab/out", b->workdir);
	{
		/* exit 0: the set is there whole (its build.sh came last) */
		const char *mk[] = { "sh", "-c", "mkdir -p -- \"$@\" || exit 2; test -f \"$1/" BUILD_SET_ENTRY "\"",
				     "sh", dir.buf, bb->work.buf, bb->outdir.buf, NULL };
		struct exec_req er = { .argv = mk, .timeout = 30 };

		r = transport_exec(bb->t, &er, &res, &why);
		if (r < 0 || (res.status != 0 && res.status != 1)) {
			strbuf_addf(err, "mkdir on %s failed: %s%s", b->name, why.buf, res.err.buf);
			r = r < 0 ? r : -EIO;
			goto out;
		}
	}
	if (res.status == 1)
		r = upload_set(bb->t, kernels_dir, &set, dir.buf, b->name, err);
out:
	if (r < 0) {
		transport_free(bb->t);
		bb->t = NULL;
	}
	build_set_release(&set);
	transport_exec_result_release(&res);
	strbuf_release(&dir);
	strbuf_release(&why);
	return r;
}
