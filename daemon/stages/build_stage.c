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

int build_builder_open(const struct cfg_builder *b, const struct cfg_tree *tree, const char *scripts_dir,
		       struct transport **ret_t, struct strbuf *scripts, struct strbuf *work,
		       struct strbuf *outdir, struct strbuf *err)
{
	struct strbuf buf = STRBUF_INIT, dst = STRBUF_INIT, why = STRBUF_INIT;
	struct transport *t = NULL;
	struct exec_result res;
	int r;

	transport_exec_result_init(&res);
	r = transport_open(&b->ep, 10, &t, &why);
	if (r < 0) {
		strbuf_addf(err, "cannot reach builder %s: %s", b->name, why.buf);
		goto out;
	}
	strbuf_addf(scripts, "%s/tlblab/scripts", b->workdir);
	strbuf_addf(work, "%s/tlblab/work-%s", b->workdir, tree->name);
	strbuf_addf(outdir, "%s/tlblab/out", b->workdir);
	{
		const char *mk[] = { "mkdir", "-p", scripts->buf, work->buf, outdir->buf, NULL };
		struct exec_req er = { .argv = mk, .timeout = 30 };

		r = transport_exec(t, &er, &res, &why);
		if (r < 0 || res.status != 0) {
			strbuf_addf(err, "mkdir on %s failed: %s%s", b->name, why.buf, res.err.buf);
			r = r < 0 ? r : -EIO;
			goto out;
		}
	}
	strbuf_addf(&buf, "%s/build.sh", scripts_dir);
	strbuf_addf(&dst, "%s/build.sh", scripts->buf);
	r = transport_upload(t, buf.buf, dst.buf, 0755, &why);
	if (r < 0)
		strbuf_addf(err, "uploading build.sh to %s: %s", b->name, why.buf);
out:
	if (r < 0)
		transport_free(t);
	else
		*ret_t = t;
	transport_exec_result_release(&res);
	strbuf_release(&buf);
	strbuf_release(&dst);
	strbuf_release(&why);
	return r;
}

void build_stage(const struct build_request *req, struct build_outcome *out)
{
	const struct lab_config *cfg = req->cfg;
	const struct cfg_builder *b = req->builder;
	const struct cfg_tree *tree = req->tree;
	const struct arch *arch = arch_get(req->arch);
	int patched = !strcmp(req->side, "patched");
	struct strbuf err = STRBUF_INIT, kind = STRBUF_INIT, text = STRBUF_INIT, url = STRBUF_INIT;
	struct strbuf ref = STRBUF_INIT, patch_local = STRBUF_INIT, buf = STRBUF_INIT;
	struct strbuf scripts = STRBUF_INIT, work = STRBUF_INIT, outdir = STRBUF_INIT, remote_patch = STRBUF_INIT;
	const char *argv[64];
	char **frag_remote = NULL;
	json_t *series = NULL;
	struct transport *t = NULL;
	struct exec_result res;
	struct build_lines bl;
	int argc = 0, r;
	size_t i;

	memset(&bl, 0, sizeof(bl));
	strbuf_init(&bl.pending, 0);
	strbuf_init(&bl.message, 0);
	strbuf_init(&bl.excerpt, 0);
	bl.st = req->st;
	bl.job = req->job_id;
	bl.stage = req->stage_id;
	bl.cancel = req->cancel;
	transport_exec_result_init(&res);
	out->kind = BUILD_DONE;
	out->store_error = 0;

	if (patched) {
		/* without it, the patched side would be built without its patch */
		if ((r = store_job_patch(req->st, req->job_id, &kind, &text, &url, &ref)) < 0) {
			fail_store(out, r, "could not read the job's patch");
			goto out;
		}
		/*
		 * git fetches a branch (build.sh, no redirects): its host is
		 * checked as a patch URL's are, under the policy in force now.
		 * One that does not resolve here is git's to fail on.
		 */
		if (!strcmp(kind.buf, "branch") && fetch_url_allowed(url.buf, cfg->fetch_allow, &err) == -EPERM) {
			fail(out, BUILD_PATCH, "build: the branch at %s: %s", url.buf, err.buf);
			goto out;
		}
		if (!strcmp(kind.buf, "url") && !text.len) {
			enum patch_subject_kind subject;
			long http = 0;
			struct fetch_opts fo = { .max = PATCH_MAX, .allow = cfg->fetch_allow, .cancel = req->cancel };

			r = fetch_url(url.buf, &fo, &text, &http, &err);
			if (r == -ECANCELED) {
				fail(out, BUILD_CANCELLED, "build: cancelled");
				goto out;
			}
			/* the URL is the submitter's: whatever keeps it from
			 * giving a patch is a result, not the lab's trouble */
			if (r < 0) {
				fail(out, BUILD_PATCH, "build: fetching the patch: %s", err.buf);
				goto out;
			}
			if (!strstr(text.buf, "\n+++ ") && strncmp(text.buf, "+++ ", 4)) {
				fail(out, BUILD_PATCH, "build: %s is not a patch (no diff in it)", url.buf);
				goto out;
			}
			if (patch_series_json(text.buf, text.len, &series, &err) < 0) {
				fail(out, BUILD_PATCH, "build: the mbox at %s: %s", url.buf, err.buf);
				goto out;
			}
			if (series && (r = store_job_set_patches(req->st, req->job_id, series)) < 0)
				log_warnx("job %lld: store: the fetched series is not listed: %s",
					  (long long)req->job_id, store_strerror(r));
			/* what was built must stay known, whatever the URL serves later */
			if ((r = store_job_set_patch(req->st, req->job_id, text.buf)) < 0) {
				fail_store(out, r, "could not keep the fetched patch");
				goto out;
			}
			/* the job was called by its URL until now; a name only */
			subject = patch_subject(text.buf, text.len, &buf);
			if ((subject == PATCH_SUBJECT_HEADER || subject == PATCH_SUBJECT_TEXT) &&
			    (r = store_job_set_patch_subject(req->st, req->job_id, buf.buf)) < 0)
				log_warnx("job %lld: store: the patch keeps its URL as its name: %s",
					  (long long)req->job_id, store_strerror(r));
			strbuf_reset(&buf);
		}
	}
	run_stage_log(req->st, req->job_id, req->stage_id, "");
	if (req->cancel && *req->cancel) {
		fail(out, BUILD_CANCELLED, "build: cancelled");
		goto out;
	}
	strbuf_addf(&bl.pending, "== build %s on %s (tree %s, base %s, arch %s)\n", req->side, b->name, tree->name,
		    req->base, arch->name);
	if (build_builder_open(b, tree, req->scripts_dir, &t, &scripts, &work, &outdir, &err) < 0) {
		fail(out, BUILD_INFRA, "build: %s", err.buf);
		goto out;
	}
	frag_remote = xcalloc(tree->nfragments + 2, sizeof(char *));
	for (i = 0; i < tree->nfragments; i++) {
		struct strbuf dst = STRBUF_INIT;
		char *frag = arch_expand(tree->fragments[i], arch);

		/* named by arch too: an x86_64 and an arm64 build of the tree
		 * upload their own qemu-{arch}.config under their own name */
		strbuf_addf(&dst, "%s/%s-%s-frag%zu.config", scripts.buf, tree->name, arch->name, i);
		r = transport_upload(t, frag, dst.buf, 0644, &err);
		frag_remote[i] = strbuf_detach(&dst, NULL);
		if (r < 0)
			fail(out, BUILD_INFRA, "build: uploading fragment %s: %s", frag, err.buf);
		free(frag);
		if (r < 0)
			goto out;
	}
	argv[argc++] = "sh";
	argv[argc++] = NULL; /* build.sh, below */
	argv[argc++] = "--tree";
	argv[argc++] = tree->url;
	argv[argc++] = "--work";
	argv[argc++] = work.buf;
	argv[argc++] = "--ref";
	argv[argc++] = req->base;
	argv[argc++] = "--config-base";
	argv[argc++] = tree->config_base;
	argv[argc++] = "--out";
	argv[argc++] = outdir.buf;
	argv[argc++] = "--arch";
	argv[argc++] = arch->name;
	for (i = 0; i < tree->nfragments && argc < 54; i++) {
		argv[argc++] = "--fragment";
		argv[argc++] = frag_remote[i];
	}
	if (b->ccache) {
		argv[argc++] = "--ccache";
		argv[argc++] = b->ccache;
	}
	if (patched && !strcmp(kind.buf, "branch")) {
		argv[argc++] = "--fetch";
		argv[argc++] = url.buf;
		argv[argc++] = "--fetch-ref";
		argv[argc++] = ref.buf;
	} else if (patched) {
		if (write_temp(cfg, text.buf, &patch_local, &err) < 0) {
			fail(out, BUILD_INFRA, "build: %s", err.buf);
			goto out;
		}
		/* with this daemon's pid: two daemons sharing a builder both
		 * have a job 1, and neither may build the other's patch */
		strbuf_addf(&remote_patch, "%s/job-%lld-%ld.patch", scripts.buf, (long long)req->job_id,
			    (long)getpid());
		if (transport_upload(t, patch_local.buf, remote_patch.buf, 0600, &err) < 0) {
			fail(out, BUILD_INFRA, "build: uploading the patch: %s", err.buf);
			goto out;
		}
		argv[argc++] = "--patch";
		argv[argc++] = remote_patch.buf;
	}
	{
		char jobs[16];
		struct strbuf script = STRBUF_INIT;
		struct exec_req er = { .timeout = req->deadline - mono_now(), .on_line = on_build_line,
				       .arg = &bl, .max_line = 8192, .pause = req->pause,
				       .cancel = req->cancel };

		snprintf(jobs, sizeof(jobs), "%d", b->jobs);
		argv[argc++] = "--jobs";
		argv[argc++] = jobs;
		argv[argc] = NULL;
		strbuf_addf(&script, "%s/build.sh", scripts.buf);
		argv[1] = script.buf;
		er.argv = argv;
		if (er.timeout < 1)
			er.timeout = 1;
		r = transport_exec(t, &er, &res, &err);
		strbuf_release(&script);
	}
	flush_log(&bl);
	if (req->cancel && *req->cancel) {
		fail(out, BUILD_CANCELLED, "build: cancelled");
		goto out;
	}
	if (r < 0) {
		fail(out, BUILD_INFRA, "build %s on %s: %s", req->side, b->name, err.buf);
		goto out;
	}
	if (res.status != 0) {
		const char *what = bl.message.len ? bl.message.buf : res.err.len ? res.err.buf : "no message";

		switch (res.status) {
		case 10: case 13:
			fail(out, BUILD_PATCH, "build %s: %s%s", req->side, what, bl.excerpt.buf);
			break;
		case 11: case 12:
			fail(out, BUILD_FAILED, "build %s: %s%s", req->side, what, bl.excerpt.buf);
			break;
		default:
			fail(out, BUILD_INFRA, "build %s on %s: build.sh exited %d: %s%s", req->side, b->name,
			     res.status, what, bl.excerpt.buf);
		}
		goto out;
	}
	if (strcmp(bl.status, "ok") || !hex_valid(bl.build_id, 64) || !bl.dir[0]) {
		fail(out, BUILD_INFRA, "build %s: build.sh ended without a build id", req->side);
		goto out;
	}
	/* the image's name becomes a file name here: only the arch's own */
	if (!hex_valid(bl.image_sha256, 64) || strcmp(bl.image, arch->image) || strcmp(bl.arch, arch->name)) {
		fail(out, BUILD_INFRA, "build %s: build.sh ended without the %s kernel's image and its hash "
		     "(said arch '%s', image '%s'; an old build.sh on %s?)", req->side, arch->name, bl.arch,
		     bl.image, b->name);
		goto out;
	}
	if (fetch_artifacts(t, cfg, bl.dir, bl.build_id, bl.image, bl.image_sha256, &err) < 0) {
		fail(out, BUILD_INFRA, "build %s: copying the artifacts from %s: %s", req->side, b->name, err.buf);
		goto out;
	}
	{
		json_t *meta = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:f,s:I,s:b}", "commit", bl.commit,
					 "config_hash", bl.config_hash, "compiler", bl.compiler,
					 "kernelrelease", bl.kernelrelease, "build_host", bl.build_host,
					 "arch", bl.arch, "image", bl.image, "image_sha256", bl.image_sha256,
					 "duration_s", bl.duration, "warnings", (json_int_t)bl.warnings,
					 "cached", bl.cached);
		struct build_row row = { .id = bl.build_id, .tree = tree->name, .commit_id = bl.commit,
					 .config_hash = bl.config_hash, .compiler = bl.compiler,
					 .duration = bl.duration, .meta = meta };
		struct strbuf path = STRBUF_INIT;

		build_dir(cfg, bl.build_id, &path);
		row.path = path.buf;
		r = store_build_add(req->st, &row);
		json_decref(meta);
		strbuf_release(&path);
		/* the artifacts stay: the retry finds the build cached */
		if (r < 0) {
			fail_store(out, r, "could not keep the build");
			goto out;
		}
	}
	if ((r = store_stage_set_ids(req->st, req->stage_id, bl.build_id, NULL)) < 0) {
		fail_store(out, r, "could not keep the stage's build id");
		goto out;
	}
	snprintf(out->build_id, sizeof(out->build_id), "%s", bl.build_id);
	strbuf_reset(&buf);
	strbuf_addf(&buf, "== build %s: %s %s, commit %.12s, %.0f s, %ld warnings\n", req->side,
		    bl.cached ? "cached" : "built", bl.build_id, bl.commit, bl.duration, bl.warnings);
	run_stage_log(req->st, req->job_id, req->stage_id, buf.buf);
out:
	flush_log(&bl);
	if (out->kind != BUILD_DONE) {
		strbuf_reset(&buf);
		strbuf_addf(&buf, "%s\n", out->message.buf);
		run_stage_log(req->st, req->job_id, req->stage_id, buf.buf);
	}
	if (patch_local.len)
		unlink(patch_local.buf);
	/* the patch is in the store and, applied, in the builder's tree: the
	 * copy build.sh read goes, whatever the outcome */
	if (t && remote_patch.len) {
		const char *rm[] = { "rm", "-f", "--", remote_patch.buf, NULL };
		struct exec_req er = { .argv = rm, .timeout = 30 };

		strbuf_reset(&err);
		transport_exec_result_release(&res);
		transport_exec_result_init(&res);
		if (transport_exec(t, &er, &res, &err) < 0 || res.status != 0)
			log_warnx("job %lld: build %s: cannot remove %s on %s: %s%s", (long long)req->job_id,
				  req->side, remote_patch.buf, b->name, err.buf, res.err.buf);
	}
	if (frag_remote) {
		for (i = 0; frag_remote[i]; i++)
			free(frag_remote[i]);
		free(frag_remote);
	}
	transport_free(t);
	json_decref(series);
	transport_exec_result_release(&res);
	strbuf_release(&bl.pending);
	strbuf_release(&bl.message);
	strbuf_release(&bl.excerpt);
	strbuf_release(&err);
	strbuf_release(&kind);
	strbuf_release(&text);
	strbuf_release(&url);
	strbuf_release(&ref);
	strbuf_release(&patch_local);
	strbuf_release(&buf);
	strbuf_release(&scripts);
	strbuf_release(&work);
	strbuf_release(&outdir);
	strbuf_release(&remote_patch);
}
