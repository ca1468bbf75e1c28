/*
 * The nightly tracker's question to a builder: what does this ref name
 * now, and which commits lie between an older one and it (build.h,
 * build_resolve). The answer comes from kernels/build/build.sh --resolve, which
 * fetches into the same checkout the builds use, under the same lock, so
 * a commit it reports is one the next build finds without fetching again.
 */
#include "build.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "build_builder.h"
#include "transport.h"
#include "util.h"
#include "banned.h"

#define RESOLVE_MAX_COMMITS 100000

void build_resolved_init(struct build_resolved *r)
{
	memset(r, 0, sizeof(*r));
	strbuf_init(&r->author, 0);
	strbuf_init(&r->subject, 0);
}

void build_resolved_release(struct build_resolved *r)
{
	size_t i;

	for (i = 0; i < r->nbetween; i++)
		free(r->between[i].subject);
	free(r->between);
	strbuf_release(&r->author);
	strbuf_release(&r->subject);
	build_resolved_init(r);
}

struct resolve_lines {
	struct build_resolved *out;
	size_t cap;
	char status[16], cls[16];
	struct strbuf message;
	volatile sig_atomic_t *cancel;
	int bad;		/* a line that does not parse */
};

/* "SHA TIME SUBJECT": the commit, or -1 */
static int parse_between(const char *v, size_t vlen, struct build_commit *c)
{
	char num[32];
	const char *sp;
	double t;

	if (vlen < 42 || v[40] != ' ')
		return -1;
	memcpy(c->sha, v, 40);
	c->sha[40] = 0;
	if (!hex_valid(c->sha, 40))
		return -1;
	sp = memchr(v + 41, ' ', vlen - 41);
	if (!sp || (size_t)(sp - (v + 41)) >= sizeof(num))
		return -1;
	snprintf(num, sizeof(num), "%.*s", (int)(sp - (v + 41)), v + 41);
	if (parse_double(num, &t) < 0)
		return -1;
	c->time = t;
	{
		struct strbuf sb = STRBUF_INIT;

		strbuf_add(&sb, sp + 1, vlen - (size_t)(sp + 1 - v));
		c->subject = strbuf_detach(&sb, NULL);
	}
	return 0;
}

static int on_resolve_line(void *arg, const char *line, size_t len, int truncated)
{
	struct resolve_lines *rl = arg;
	struct build_resolved *o = rl->out;
	const char *k, *sp, *v;
	size_t klen, vlen;
	char num[32];

	if (rl->cancel && *rl->cancel)
		return -1;
	if (len <= 7 || strncmp(line, "TLBLAB ", 7))
		return 0;
	k = line + 7;
	sp = memchr(k, ' ', len - 7);
	klen = sp ? (size_t)(sp - k) : len - 7;
	v = sp ? sp + 1 : "";
	vlen = sp ? len - (size_t)(v - line) : 0;
#define KEY(name) (klen == strlen(name) && !strncmp(k, name, klen))
	if (KEY("status")) {
		snprintf(rl->status, sizeof(rl->status), "%.*s", (int)vlen, v);
	} else if (KEY("class")) {
		snprintf(rl->cls, sizeof(rl->cls), "%.*s", (int)vlen, v);
	} else if (KEY("message")) {
		strbuf_reset(&rl->message);
		strbuf_add(&rl->message, v, vlen < 2000 ? vlen : 2000);
	} else if (KEY("commit")) {
		if (vlen != 40 || truncated)
			rl->bad = 1;
		else
			snprintf(o->commit, sizeof(o->commit), "%.*s", (int)vlen, v);
	} else if (KEY("since")) {
		if (vlen != 40 || truncated)
			rl->bad = 1;
		else
			snprintf(o->since, sizeof(o->since), "%.*s", (int)vlen, v);
	} else if (KEY("commit_time")) {
		snprintf(num, sizeof(num), "%.*s", (int)(vlen < 31 ? vlen : 31), v);
		if (parse_double(num, &o->time) < 0)
			rl->bad = 1;
	} else if (KEY("author")) {
		strbuf_add(&o->author, v, vlen < 400 ? vlen : 400);
	} else if (KEY("subject")) {
		strbuf_add(&o->subject, v, vlen < 400 ? vlen : 400);
	} else if (KEY("between")) {
		if (o->nbetween >= RESOLVE_MAX_COMMITS)
			return 0;
		if (o->nbetween == rl->cap) {
			rl->cap = rl->cap ? 2 * rl->cap : 64;
			o->between = xrealloc(o->between, rl->cap * sizeof(*o->between));
		}
		if (parse_between(v, vlen, &o->between[o->nbetween]) == 0)
			o->nbetween++;
		else
			rl->bad = 1;
	}
#undef KEY
	return 0;
}

int build_resolve(const struct lab_config *cfg, const struct cfg_tree *tree, const char *url,
		  const char *ref, const char *since, const char *scripts_dir, double timeout,
		  volatile sig_atomic_t *cancel, volatile sig_atomic_t *pause, struct build_resolved *out,
		  struct strbuf *err)
{
	const struct cfg_builder *b = config_builder(cfg, tree->builder);
	struct resolve_lines rl = { .out = out, .cancel = cancel };
	struct build_builder bb;
	struct exec_result res;
	const char *argv[16];
	int argc = 0, r;

	strbuf_init(&rl.message, 0);
	build_builder_init(&bb);
	transport_exec_result_init(&res);
	if (!b) {
		strbuf_addf(err, "tree %s: no builder '%s'", tree->name, tree->builder);
		r = -EINVAL;
		goto out;
	}
	if (!ref_valid(ref) || (since && !ref_valid(since)) || (url && !url_valid(url, 1) && url[0] != '/')) {
		strbuf_addf(err, "tree %s: not a ref, commit or URL to resolve", tree->name);
		r = -EINVAL;
		goto out;
	}
	r = build_builder_open(b, tree, scripts_dir, &bb, err);
	if (r < 0)
		goto out;
	argv[argc++] = "sh";
	argv[argc++] = bb.script.buf;
	argv[argc++] = "--resolve";
	argv[argc++] = "--tree";
	argv[argc++] = tree->url;
	argv[argc++] = "--work";
	argv[argc++] = bb.work.buf;
	argv[argc++] = "--ref";
	if (url) {	/* the tree's own head is the base; the commit is url's */
		argv[argc++] = "HEAD";
		argv[argc++] = "--fetch";
		argv[argc++] = url;
		argv[argc++] = "--fetch-ref";
	}
	argv[argc++] = ref;
	if (since) {
		argv[argc++] = "--since";
		argv[argc++] = since;
	}
	argv[argc] = NULL;
	{
		struct exec_req er = { .argv = argv, .timeout = timeout > 0 ? timeout : 600,
				       .on_line = on_resolve_line, .arg = &rl, .max_line = 1024,
				       .cancel = cancel, .pause = pause };

		r = transport_exec(bb.t, &er, &res, err);
	}
	if (r == -ECANCELED || (cancel && *cancel)) {
		r = -ECANCELED;
		goto out;
	}
	if (r < 0)
		goto out;
	if (res.status == 13) {
		strbuf_addf(err, "%s", rl.message.len ? rl.message.buf : "ref not found");
		r = -ENOENT;
	} else if (res.status != 0 || strcmp(rl.status, "ok") || rl.bad || !hex_valid(out->commit, 40)) {
		strbuf_addf(err, "build.sh --resolve on %s exited %d: %s", b->name, res.status,
			    rl.message.len ? rl.message.buf : rl.bad ? "a line that does not parse" :
			    res.err.len ? res.err.buf : "no commit");
		r = -EIO;
	}
out:
	if (r < 0)
		build_resolved_release(out);
	build_builder_release(&bb);
	transport_exec_result_release(&res);
	strbuf_release(&rl.message);
	return r;
}
