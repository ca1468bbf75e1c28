#include "build.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch.h"
#include "build_builder.h"
#include "fetch.h"
#include "log.h"
#include "patch.h"
#include "run.h"
#include "store.h"
#include "transport.h"
#include "util.h"
#include "banned.h"

#define PATCH_MAX (4u << 20)
#define LOG_FLUSH_LINES 64

void build_outcome_init(struct build_outcome *o)
{
	memset(o, 0, sizeof(*o));
	strbuf_init(&o->message, 0);
}

void build_outcome_release(struct build_outcome *o)
{
	if (o)
		strbuf_release(&o->message);
}

void build_dir(const struct lab_config *cfg, const char *build_id, struct strbuf *out)
{
	strbuf_addf(out, "%s/builds/%s", cfg->data_dir, build_id);
}

struct build_lines {
	struct store *st;
	int64_t job, stage;
	struct strbuf pending;	/* log lines not yet in the store */
	int npending;
	volatile sig_atomic_t *cancel;
	/* TLBLAB facts */
	char status[16], cls[16], build_id[72], commit[72], config_hash[72], dir[1024];
	char compiler[200], kernelrelease[128], build_host[32], image_sha256[72], image[16], arch[16];
	double duration;
	long warnings;
	int cached;
	struct strbuf message, excerpt;
};

static void flush_log(struct build_lines *bl)
{
	if (bl->pending.len)
		run_stage_log(bl->st, bl->job, bl->stage, bl->pending.buf);
	strbuf_reset(&bl->pending);
	bl->npending = 0;
}

static void fact(char *dst, size_t len, const char *v, size_t vlen)
{
	snprintf(dst, len, "%.*s", (int)vlen, v);
}

static int on_build_line(void *arg, const char *line, size_t len, int truncated)
{
	struct build_lines *bl = arg;

	(void)truncated;
	if (bl->cancel && *bl->cancel)
		return -1;
	strbuf_add(&bl->pending, line, len);
	strbuf_addch(&bl->pending, '\n');
	if (++bl->npending >= LOG_FLUSH_LINES)
		flush_log(bl);
	if (len > 7 && !strncmp(line, "TLBLAB ", 7)) {
		const char *k = line + 7, *sp = memchr(k, ' ', len - 7);
		size_t klen = sp ? (size_t)(sp - k) : len - 7;
		const char *v = sp ? sp + 1 : "";
		size_t vlen = sp ? len - (size_t)(v - line) : 0;
		char num[64];

#define KEY(name) (klen == strlen(name) && !strncmp(k, name, klen))
		if (KEY("status"))
			fact(bl->status, sizeof(bl->status), v, vlen);
		else if (KEY("class"))
			fact(bl->cls, sizeof(bl->cls), v, vlen);
		else if (KEY("message")) {
			strbuf_reset(&bl->message);
			strbuf_add(&bl->message, v, vlen < 2000 ? vlen : 2000);
		} else if (KEY("excerpt")) {
			if (bl->excerpt.len < 8000) {
				strbuf_addstr(&bl->excerpt, "\n  ");
				strbuf_add(&bl->excerpt, v, vlen < 400 ? vlen : 400);
			}
		} else if (KEY("build_id"))
			fact(bl->build_id, sizeof(bl->build_id), v, vlen);
		else if (KEY("commit"))
			fact(bl->commit, sizeof(bl->commit), v, vlen);
		else if (KEY("config_hash"))
			fact(bl->config_hash, sizeof(bl->config_hash), v, vlen);
		else if (KEY("dir"))
			fact(bl->dir, sizeof(bl->dir), v, vlen);
		else if (KEY("compiler"))
			fact(bl->compiler, sizeof(bl->compiler), v, vlen);
		else if (KEY("kernelrelease"))
			fact(bl->kernelrelease, sizeof(bl->kernelrelease), v, vlen);
		else if (KEY("build_host"))
			fact(bl->build_host, sizeof(bl->build_host), v, vlen);
		else if (KEY("image_sha256"))
			fact(bl->image_sha256, sizeof(bl->image_sha256), v, vlen);
		else if (KEY("image"))
			fact(bl->image, sizeof(bl->image), v, vlen);
		else if (KEY("arch"))
			fact(bl->arch, sizeof(bl->arch), v, vlen);
		else if (KEY("cached"))
			bl->cached = vlen == 1 && v[0] == '1';
		else if (KEY("duration")) {
			fact(num, sizeof(num), v, vlen);
			parse_double(num, &bl->duration);
		} else if (KEY("warnings")) {
			uint64_t w = 0;

			fact(num, sizeof(num), v, vlen);
			if (parse_u64(num, &w) == 0)
				bl->warnings = (long)w;
		}
#undef KEY
	}
	return 0;
}

/* Writes text to a fresh local temporary file; its path into path. */
static int write_temp(const struct lab_config *cfg, const char *text, struct strbuf *path, struct strbuf *err)
{
	int fd, r;

	strbuf_addf(path, "%s/tmp", cfg->data_dir);
	mkdir(path->buf, 0700);
	strbuf_addstr(path, "/patch.XXXXXX");
	fd = mkostemp(path->buf, O_CLOEXEC);
	if (fd < 0)
		return strbuf_seterr(err, "%s: %s", path->buf, strerror(errno));
	r = write_all(fd, text, strlen(text));
	close(fd);
	if (r < 0)
		return strbuf_seterr(err, "%s: %s", path->buf, strerror(-r));
	return 0;
}

static void fail(struct build_outcome *out, enum build_outcome_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(struct build_outcome *out, enum build_outcome_kind kind, const char *fmt, ...)
{
	va_list ap;

	out->kind = kind;
	va_start(ap, fmt);
	strbuf_vsetf(&out->message, fmt, ap);
	va_end(ap);
}

/* The store failed to keep what the build must record (build.h). */
static void fail_store(struct build_outcome *out, int rc, const char *what)
{
	out->store_error = rc;
	fail(out, BUILD_INFRA, "build: store: %s: %s", what, store_strerror(rc));
}

/* 1 when DIR/IMAGE is there with the hash sha256, 0 when it is not there,
 * -1 when it is there with another. */
static int image_matches(const char *dir, const char *image, const char *sha256)
{
	struct strbuf path = STRBUF_INIT, err = STRBUF_INIT;
	struct stat stbuf;
	char have[65];
	int r;

	strbuf_addf(&path, "%s/%s", dir, image);
	if (lstat(path.buf, &stbuf) < 0)
		r = 0;
	else
		r = S_ISREG(stbuf.st_mode) && run_file_sha256(path.buf, have, &err) == 0 && !strcmp(have, sha256) ? 1 : -1;
	strbuf_release(&path);
	strbuf_release(&err);
	return r;
}

/*
 * Copies the artifacts of dir on the builder to DATA_DIR/builds/ID/, and
 * checks that the kernel image (bzImage, Image: arch.h) has the hash the
 * build recorded (sha256). A copy already here is reused only while its
 * image still has that hash; otherwise it is replaced.
 */
static int fetch_artifacts(struct transport *t, const struct lab_config *cfg, const char *dir,
			   const char *id, const char *image, const char *sha256, struct strbuf *err)
{
	const char *const files[] = { image, "config", "System.map", "build.log", "meta.json" };
	struct strbuf local = STRBUF_INIT, tmp = STRBUF_INIT, remote = STRBUF_INIT, path = STRBUF_INIT;
	size_t i;
	int r = 0;

	build_dir(cfg, id, &local);
	if (image_matches(local.buf, image, sha256) == 1)
		goto out;
	strbuf_addf(&tmp, "%s/builds", cfg->data_dir);
	mkdir(tmp.buf, 0755);
	strbuf_addf(&tmp, "/.%s.part", id);
	remove_tree(tmp.buf);
	mkdir(tmp.buf, 0755);
	for (i = 0; i < ARRAY_SIZE(files) && r == 0; i++) {
		strbuf_reset(&remote);
		strbuf_reset(&path);
		strbuf_addf(&remote, "%s/%s", dir, files[i]);
		strbuf_addf(&path, "%s/%s", tmp.buf, files[i]);
		r = transport_download(t, remote.buf, path.buf, 256u << 20, err);
	}
	if (r == 0 && image_matches(tmp.buf, image, sha256) != 1)
		r = strbuf_seterr(err, "the %s copied from %s does not have the hash its build recorded "
				  "(%.16s...)", image, dir, sha256);
	if (r == 0) {
		/* a stale copy with another hash goes first */
		remove_tree(local.buf);
		if (rename(tmp.buf, local.buf) < 0)
			r = strbuf_seterr(err, "rename %s: %s", local.buf, strerror(errno));
	}
	if (r < 0)
		remove_tree(tmp.buf);
out:
	strbuf_release(&local);
	strbuf_release(&tmp);
	strbuf_release(&remote);
	strbuf_release(&path);
	return r < 0 ? -1 : 0;
}

/* One build_stage call's state, from the request to the outcome. */
struct build_run {
	const struct build_request *req;
	struct build_outcome *out;
	const struct arch *arch;
	int patched;
	struct strbuf kind, text, url, ref;	/* the job's patch (store_job_patch) */
	struct strbuf patch_local;	/* its text in a local file, removed at the end */
	struct strbuf remote_patch;	/* that file on the builder, removed there too */
	struct build_builder bb;
	char **frag_remote;		/* the fragments on the builder (NULL-terminated) */
	struct build_lines bl;		/* what build.sh says */
	struct exec_result res;
	struct strbuf err;
};

static void build_run_init(struct build_run *br, const struct build_request *req, struct build_outcome *out)
{
	memset(br, 0, sizeof(*br));
	br->req = req;
	br->out = out;
	br->arch = arch_get(req->arch);
	br->patched = !strcmp(req->side, "patched");
	strbuf_init(&br->kind, 0);
	strbuf_init(&br->text, 0);
	strbuf_init(&br->url, 0);
	strbuf_init(&br->ref, 0);
	strbuf_init(&br->patch_local, 0);
	strbuf_init(&br->remote_patch, 0);
	strbuf_init(&br->err, 0);
	build_builder_init(&br->bb);
	strbuf_init(&br->bl.pending, 0);
	strbuf_init(&br->bl.message, 0);
	strbuf_init(&br->bl.excerpt, 0);
	br->bl.st = req->st;
	br->bl.job = req->job_id;
	br->bl.stage = req->stage_id;
	br->bl.cancel = req->cancel;
	transport_exec_result_init(&br->res);
	out->kind = BUILD_DONE;
	out->store_error = 0;
}

/*
 * The patch of a job that gave a URL, fetched with libcurl: kept in the
 * store (with its series and its subject) before it is built, so that what
 * was built stays known whatever the URL serves later.
 */
static int fetch_patch_url(struct build_run *br)
{
	const struct build_request *req = br->req;
	enum patch_subject_kind subject;
	struct strbuf name = STRBUF_INIT;
	json_t *series = NULL;
	long http = 0;
	struct fetch_opts fo = { .max = PATCH_MAX, .allow = req->cfg->fetch_allow, .cancel = req->cancel };
	int r = fetch_url(br->url.buf, &fo, &br->text, &http, &br->err);

	if (r == -ECANCELED) {
		fail(br->out, BUILD_CANCELLED, "build: cancelled");
		goto out;
	}
	/* the URL is the submitter's: whatever keeps it from
	 * giving a patch is a result, not the lab's trouble */
	if (r < 0) {
		fail(br->out, BUILD_PATCH, "build: fetching the patch: %s", br->err.buf);
		goto out;
	}
	r = -1;
	/* a patch is text: the API and the client refuse one with a NUL
	 * byte, and every step after this one reads it as a C string */
	if (memchr(br->text.buf, '\0', br->text.len)) {
		fail(br->out, BUILD_PATCH, "build: url: the patch at %s is not text (a NUL byte at offset %zu)",
		     br->url.buf, (size_t)((const char *)memchr(br->text.buf, '\0', br->text.len) - br->text.buf));
		goto out;
	}
	if (!strstr(br->text.buf, "\n+++ ") && strncmp(br->text.buf, "+++ ", 4)) {
		fail(br->out, BUILD_PATCH, "build: %s is not a patch (no diff in it)", br->url.buf);
		goto out;
	}
	if (patch_series_json(br->text.buf, br->text.len, &series, &br->err) < 0) {
		fail(br->out, BUILD_PATCH, "build: the mbox at %s: %s", br->url.buf, br->err.buf);
		goto out;
	}
	if (series && (r = store_job_set_patches(req->st, req->job_id, series)) < 0)
		log_warnx("job %lld: store: the fetched series is not listed: %s",
			  (long long)req->job_id, store_strerror(r));
	/* what was built must stay known, whatever the URL serves later */
	if ((r = store_job_set_patch(req->st, req->job_id, br->text.buf)) < 0) {
		fail_store(br->out, r, "could not keep the fetched patch");
		goto out;
	}
	/* the job was called by its URL until now; a name only */
	subject = patch_subject(br->text.buf, br->text.len, &name);
	if ((subject == PATCH_SUBJECT_HEADER || subject == PATCH_SUBJECT_TEXT) &&
	    (r = store_job_set_patch_subject(req->st, req->job_id, name.buf)) < 0)
		log_warnx("job %lld: store: the patch keeps its URL as its name: %s",
			  (long long)req->job_id, store_strerror(r));
	r = 0;
out:
	json_decref(series);
	strbuf_release(&name);
	return r < 0 ? -1 : 0;
}

/* The patched side's patch: its text, a URL's fetched, or its branch. */
static int read_patch(struct build_run *br)
{
	const struct build_request *req = br->req;
	int r;

	/* without it, the patched side would be built without its patch */
	if ((r = store_job_patch(req->st, req->job_id, &br->kind, &br->text, &br->url, &br->ref)) < 0) {
		fail_store(br->out, r, "could not read the job's patch");
		return -1;
	}
	/*
	 * git fetches a branch (build.sh, no redirects): its host is
	 * checked as a patch URL's are, under the policy in force now.
	 * One that does not resolve here is git's to fail on.
	 */
	if (!strcmp(br->kind.buf, "branch") &&
	    fetch_url_allowed(br->url.buf, req->cfg->fetch_allow, &br->err) == -EPERM) {
		fail(br->out, BUILD_PATCH, "build: the branch at %s: %s", br->url.buf, br->err.buf);
		return -1;
	}
	if (!strcmp(br->kind.buf, "url") && !br->text.len)
		return fetch_patch_url(br);
	return 0;
}

/* The tree's config fragments, for this arch, to the builder. */
static int upload_fragments(struct build_run *br)
{
	const struct cfg_tree *tree = br->req->tree;
	size_t i;
	int r;

	br->frag_remote = xcalloc(tree->nfragments + 2, sizeof(char *));
	for (i = 0; i < tree->nfragments; i++) {
		struct strbuf dst = STRBUF_INIT;
		char *frag = arch_expand(tree->fragments[i], br->arch);

		/* named by arch too: an x86_64 and an arm64 build of the tree
		 * upload their own qemu-{arch}.config under their own name */
		strbuf_addf(&dst, "%s/%s-%s-frag%zu.config", br->bb.scripts.buf, tree->name, br->arch->name, i);
		r = transport_upload(br->bb.t, frag, dst.buf, 0644, &br->err);
		br->frag_remote[i] = strbuf_detach(&dst, NULL);
		if (r < 0)
			fail(br->out, BUILD_INFRA, "build: uploading fragment %s: %s", frag, br->err.buf);
		free(frag);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* build.sh's arguments for the patch: the branch to fetch, or the patch's
 * text uploaded to the builder. */
static int add_patch_args(struct build_run *br, const char **argv, int *argc)
{
	const struct build_request *req = br->req;

	if (!strcmp(br->kind.buf, "branch")) {
		argv[(*argc)++] = "--fetch";
		argv[(*argc)++] = br->url.buf;
		argv[(*argc)++] = "--fetch-ref";
		argv[(*argc)++] = br->ref.buf;
		return 0;
	}
	if (write_temp(req->cfg, br->text.buf, &br->patch_local, &br->err) < 0) {
		fail(br->out, BUILD_INFRA, "build: %s", br->err.buf);
		return -1;
	}
	/* with this daemon's pid: two daemons sharing a builder both
	 * have a job 1, and neither may build the other's patch */
	strbuf_addf(&br->remote_patch, "%s/job-%lld-%ld.patch", br->bb.scripts.buf, (long long)req->job_id,
		    (long)getpid());
	if (transport_upload(br->bb.t, br->patch_local.buf, br->remote_patch.buf, 0600, &br->err) < 0) {
		fail(br->out, BUILD_INFRA, "build: uploading the patch: %s", br->err.buf);
		return -1;
	}
	argv[(*argc)++] = "--patch";
	argv[(*argc)++] = br->remote_patch.buf;
	return 0;
}

/* Runs build.sh on the builder, its lines read as they come (on_build_line). */
static int run_script(struct build_run *br)
{
	const struct build_request *req = br->req;
	const struct cfg_tree *tree = req->tree;
	const struct cfg_builder *b = req->builder;
	const char *argv[64];
	char jobs[16];
	int argc = 0, r;
	size_t i;
	struct exec_req er = { .on_line = on_build_line, .arg = &br->bl, .max_line = 8192,
			       .pause = req->pause, .cancel = req->cancel };

	argv[argc++] = "sh";
	argv[argc++] = br->bb.script.buf;
	argv[argc++] = "--tree";
	argv[argc++] = tree->url;
	argv[argc++] = "--work";
	argv[argc++] = br->bb.work.buf;
	argv[argc++] = "--ref";
	argv[argc++] = req->base;
	argv[argc++] = "--config-base";
	argv[argc++] = tree->config_base;
	argv[argc++] = "--out";
	argv[argc++] = br->bb.outdir.buf;
	argv[argc++] = "--arch";
	argv[argc++] = br->arch->name;
	for (i = 0; i < tree->nfragments && argc < 54; i++) {
		argv[argc++] = "--fragment";
		argv[argc++] = br->frag_remote[i];
	}
	if (b->ccache) {
		argv[argc++] = "--ccache";
		argv[argc++] = b->ccache;
	}
	if (br->patched && add_patch_args(br, argv, &argc) < 0)
		return -1;
	snprintf(jobs, sizeof(jobs), "%d", b->jobs);
	argv[argc++] = "--jobs";
	argv[argc++] = jobs;
	argv[argc] = NULL;
	er.argv = argv;
	er.timeout = req->deadline - mono_now();
	if (er.timeout < 1)
		er.timeout = 1;
	r = transport_exec(br->bb.t, &er, &br->res, &br->err);
	flush_log(&br->bl);
	if (req->cancel && *req->cancel) {
		fail(br->out, BUILD_CANCELLED, "build: cancelled");
		return -1;
	}
	if (r < 0) {
		fail(br->out, BUILD_INFRA, "build %s on %s: %s", req->side, b->name, br->err.buf);
		return -1;
	}
	return 0;
}

/* What build.sh's exit status and facts say: a build of this arch's
 * kernel, or a failure of its class (build.sh's exit codes). */
static int check_result(struct build_run *br)
{
	const struct build_request *req = br->req;
	const struct build_lines *bl = &br->bl;
	const char *side = req->side, *builder = req->builder->name;

	if (br->res.status != 0) {
		const char *what = bl->message.len ? bl->message.buf : br->res.err.len ? br->res.err.buf : "no message";

		switch (br->res.status) {
		case 10: case 13:
			fail(br->out, BUILD_PATCH, "build %s: %s%s", side, what, bl->excerpt.buf);
			break;
		case 11: case 12:
			fail(br->out, BUILD_FAILED, "build %s: %s%s", side, what, bl->excerpt.buf);
			break;
		default:
			fail(br->out, BUILD_INFRA, "build %s on %s: build.sh exited %d: %s%s", side, builder,
			     br->res.status, what, bl->excerpt.buf);
		}
		return -1;
	}
	if (strcmp(bl->status, "ok") || !hex_valid(bl->build_id, 64) || !bl->dir[0]) {
		fail(br->out, BUILD_INFRA, "build %s: build.sh ended without a build id", side);
		return -1;
	}
	/* the image's name becomes a file name here: only the arch's own */
	if (!hex_valid(bl->image_sha256, 64) || strcmp(bl->image, br->arch->image) || strcmp(bl->arch, br->arch->name)) {
		fail(br->out, BUILD_INFRA, "build %s: build.sh ended without the %s kernel's image and its hash "
		     "(said arch '%s', image '%s'; an old build.sh on %s?)", side, br->arch->name, bl->arch,
		     bl->image, builder);
		return -1;
	}
	return 0;
}

/* The artifacts copied here and the build kept in the store, with the
 * stage's build id. */
static int keep_build(struct build_run *br)
{
	const struct build_request *req = br->req;
	const struct build_lines *bl = &br->bl;
	struct strbuf path = STRBUF_INIT, line = STRBUF_INIT;
	json_t *meta;
	int r;

	if (fetch_artifacts(br->bb.t, req->cfg, bl->dir, bl->build_id, bl->image, bl->image_sha256, &br->err) < 0) {
		fail(br->out, BUILD_INFRA, "build %s: copying the artifacts from %s: %s", req->side,
		     req->builder->name, br->err.buf);
		return -1;
	}
	meta = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:f,s:I,s:b}", "commit", bl->commit,
			 "config_hash", bl->config_hash, "compiler", bl->compiler,
			 "kernelrelease", bl->kernelrelease, "build_host", bl->build_host,
			 "arch", bl->arch, "image", bl->image, "image_sha256", bl->image_sha256,
			 "duration_s", bl->duration, "warnings", (json_int_t)bl->warnings,
			 "cached", bl->cached);
	build_dir(req->cfg, bl->build_id, &path);
	{
		struct build_row row = { .id = bl->build_id, .tree = req->tree->name, .commit_id = bl->commit,
					 .config_hash = bl->config_hash, .compiler = bl->compiler,
					 .duration = bl->duration, .meta = meta, .path = path.buf };

		r = store_build_add(req->st, &row);
	}
	json_decref(meta);
	strbuf_release(&path);
	/* the artifacts stay: the retry finds the build cached */
	if (r < 0) {
		fail_store(br->out, r, "could not keep the build");
		return -1;
	}
	if ((r = store_stage_set_ids(req->st, req->stage_id, bl->build_id, NULL)) < 0) {
		fail_store(br->out, r, "could not keep the stage's build id");
		return -1;
	}
	snprintf(br->out->build_id, sizeof(br->out->build_id), "%s", bl->build_id);
	strbuf_addf(&line, "== build %s: %s %s, commit %.12s, %.0f s, %ld warnings\n", req->side,
		    bl->cached ? "cached" : "built", bl->build_id, bl->commit, bl->duration, bl->warnings);
	run_stage_log(req->st, req->job_id, req->stage_id, line.buf);
	strbuf_release(&line);
	return 0;
}

/* The patch is in the store and, applied, in the builder's tree: the
 * copy build.sh read goes, whatever the outcome. */
static void remove_remote_patch(struct build_run *br)
{
	const char *rm[] = { "rm", "-f", "--", br->remote_patch.buf, NULL };
	struct exec_req er = { .argv = rm, .timeout = 30 };
	struct exec_result res;
	struct strbuf err = STRBUF_INIT;

	transport_exec_result_init(&res);
	if (transport_exec(br->bb.t, &er, &res, &err) < 0 || res.status != 0)
		log_warnx("job %lld: build %s: cannot remove %s on %s: %s%s", (long long)br->req->job_id,
			  br->req->side, br->remote_patch.buf, br->req->builder->name, err.buf, res.err.buf);
	transport_exec_result_release(&res);
	strbuf_release(&err);
}

/* The stage log's last lines, the patch's copies removed, all freed. */
static void build_run_release(struct build_run *br)
{
	const struct build_request *req = br->req;
	size_t i;

	flush_log(&br->bl);
	if (br->out->kind != BUILD_DONE) {
		struct strbuf line = STRBUF_INIT;

		strbuf_addf(&line, "%s\n", br->out->message.buf);
		run_stage_log(req->st, req->job_id, req->stage_id, line.buf);
		strbuf_release(&line);
	}
	if (br->patch_local.len)
		unlink(br->patch_local.buf);
	if (br->bb.t && br->remote_patch.len)
		remove_remote_patch(br);
	if (br->frag_remote) {
		for (i = 0; br->frag_remote[i]; i++)
			free(br->frag_remote[i]);
		free(br->frag_remote);
	}
	build_builder_release(&br->bb);
	transport_exec_result_release(&br->res);
	strbuf_release(&br->bl.pending);
	strbuf_release(&br->bl.message);
	strbuf_release(&br->bl.excerpt);
	strbuf_release(&br->err);
	strbuf_release(&br->kind);
	strbuf_release(&br->text);
	strbuf_release(&br->url);
	strbuf_release(&br->ref);
	strbuf_release(&br->patch_local);
	strbuf_release(&br->remote_patch);
}

void build_stage(const struct build_request *req, struct build_outcome *out)
{
	struct build_run br;

	build_run_init(&br, req, out);
	if (br.patched && read_patch(&br) < 0)
		goto out;
	run_stage_log(req->st, req->job_id, req->stage_id, "");
	if (req->cancel && *req->cancel) {
		fail(out, BUILD_CANCELLED, "build: cancelled");
		goto out;
	}
	strbuf_addf(&br.bl.pending, "== build %s on %s (tree %s, base %s, arch %s)\n", req->side,
		    req->builder->name, req->tree->name, req->base, br.arch->name);
	if (build_builder_open(req->builder, req->tree, req->scripts_dir, &br.bb, &br.err) < 0) {
		fail(out, BUILD_INFRA, "build: %s", br.err.buf);
		goto out;
	}
	if (upload_fragments(&br) < 0 || run_script(&br) < 0 || check_result(&br) < 0)
		goto out;
	keep_build(&br);
out:
	build_run_release(&br);
}
