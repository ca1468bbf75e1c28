#ifndef TLBLAB_BUILD_H
#define TLBLAB_BUILD_H

#include <signal.h>
#include <stdint.h>

#include "config.h"
#include "strbuf.h"

/*
 * The build stage: one side (base or patched) of an A/B job built on the
 * tree's builder by kernels/build/build.sh, run over the builder's
 * transport. The script set (build_builder.h) and the tree's config
 * fragments are uploaded first (a local builder gets copies), the patch of
 * the patched side too (fetched with libcurl
 * first when the job gave a URL). The script's "TLBLAB key value" lines say
 * what happened; its artifacts (bzImage, config, System.map, build.log,
 * meta.json) are copied to DATA_DIR/builds/BUILD_ID/ unless already there.
 *
 * Failure classes: patch (does not apply, unknown ref, a patch URL or a
 * branch that cannot be fetched: refused by lab.fetch_allow (fetch.h), not
 * answering, too large, an HTTP error; the submitter's to fix), build
 * (compile error, or a required option that olddefconfig dropped), infra
 * (the builder, a timeout of the stage). A cancel (*cancel set) stops
 * whatever runs (the fetch, build.sh: transport.h) and ends as cancelled.
 * A build whose facts the store fails to keep (the patch's text, the build
 * row, the stage's build id) is infra with store_error set: never done
 * without them, retried, the builder not to blame. A lost stage log line is
 * only lost (run_stage_log).
 */

struct store;

enum build_outcome_kind {
	BUILD_DONE,
	BUILD_PATCH,
	BUILD_FAILED,
	BUILD_INFRA,
	BUILD_CANCELLED,
	BUILD_OUTCOME_MAX
};

struct build_request {
	struct store *st;
	const struct lab_config *cfg;
	int64_t job_id, stage_id;
	const struct cfg_tree *tree;
	const struct cfg_builder *builder;
	const char *side;		/* "base" | "patched" */
	const char *base;		/* the base ref */
	const char *arch;		/* arch.h's name (NULL: x86_64): build.sh --arch */
	const char *scripts_dir;	/* the local kernels/ directory (build/: build.sh's set) */
	double deadline;		/* mono_now() seconds */
	volatile sig_atomic_t *cancel;
	/* set while a machine on the builder's host measures: the build is
	 * stopped meanwhile (exec_req.pause); NULL when it cannot be */
	volatile sig_atomic_t *pause;
};

struct build_outcome {
	enum build_outcome_kind kind;
	struct strbuf message;
	char build_id[72];
	int store_error;	/* BUILD_INFRA because the store failed (store.h) */
};

void build_outcome_init(struct build_outcome *o);
void build_outcome_release(struct build_outcome *o);
void build_stage(const struct build_request *req, struct build_outcome *out);

/* A commit a resolve found, with its committer date and subject. */
struct build_commit {
	char sha[41];
	double time;
	char *subject;
};

/* What build.sh --resolve says: the commit a ref names now, its facts,
 * and (asked with a since) the commits after since up to it. */
struct build_resolved {
	char commit[41];
	char since[41];		/* the commit since names (asked with one) */
	double time;
	struct strbuf author, subject;
	struct build_commit *between;	/* oldest first */
	size_t nbetween;
};

void build_resolved_init(struct build_resolved *r);
void build_resolved_release(struct build_resolved *r);

/*
 * Brings the builder's checkout of tree up to date and resolves ref (of
 * url when not NULL, else of the tree's own URL), with the commits after
 * since (NULL: none) up to it: build.sh --resolve over the builder's
 * transport, at most timeout seconds, stopped while *pause is set (the
 * quiet-host rule; NULL: never). 0; or -ENOENT with err when the ref
 * or since is not there (build.sh's class ref), -ECANCELED, or another
 * negative errno with err (the builder's trouble).
 */
int build_resolve(const struct lab_config *cfg, const struct cfg_tree *tree, const char *url,
		  const char *ref, const char *since, const char *scripts_dir, double timeout,
		  volatile sig_atomic_t *cancel, volatile sig_atomic_t *pause, struct build_resolved *out,
		  struct strbuf *err);

/* DATA_DIR/builds/BUILD_ID into out. */
void build_dir(const struct lab_config *cfg, const char *build_id, struct strbuf *out);

#endif
