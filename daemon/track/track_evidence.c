/*
 * What the tracker's passes (track_thread.c) and its bisections (track_bisect.c)
 * both use, below either: webhook events queued for delivery, a branch
 * resolved on the builder behind the quiet-host gate, and the evidence of
 * a change (the raw runs of points as one side of a comparison, a
 * comparison's row of a series).
 */
#include "track_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "config.h"
#include "jsonget.h"
#include "log.h"
#include "notify.h"
#include "quiet.h"
#include "store.h"
#include "transport.h"
#include "banned.h"

#define RESOLVE_TIMEOUT_S 1800

/* ---- webhooks ---- */

void track_announce(struct tracker *tr, const struct lab_config *cfg, enum notify_event ev, json_t *body)
{
	const char *name = config_notify_event_name(ev);
	char *text;
	size_t i;

	json_object_set_new(body, "event", json_string(name));
	text = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(10));
	for (i = 0; text && i < cfg->nhooks; i++) {
		const struct cfg_hook *h = &cfg->hooks[i];
		int r;

		if (!(h->events & (1u << ev)))
			continue;
		if ((r = store_delivery_add(tr->st, h->name, name, h->url, text, NULL)) < 0)
			log_warnx("webhook %s: store: the %s delivery is lost: %s", h->name, name, store_strerror(r));
	}
	free(text);
	json_decref(body);
}

/* ---- a branch on the builder ---- */

int track_resolve(struct tracker *tr, const struct lab_config *cfg, const char *tree_name, const char *url,
		  const char *ref, const char *since, struct build_resolved *r, struct strbuf *err)
{
	const struct cfg_tree *tree = config_tree(cfg, tree_name);
	const struct cfg_builder *b = tree ? config_builder(cfg, tree->builder) : NULL;
	struct quiet_entry qe = { 0 };
	int rc, gated = 0;

	if (!tree || !b) {
		strbuf_addf(err, "tree %s or its builder is not configured", tree_name);
		return -EINVAL;
	}
	qe.ep = &b->ep;
	qe.pausable = transport_pausable(&b->ep);
	snprintf(qe.label, sizeof(qe.label), "resolve of %s on builder %s", ref, b->name);
	/* a run measures there and the resolve cannot pause: wait for its end
	 * (cancelled, the resolve below stops at once) */
	if (tr->quiet && cfg->quiet_host)
		gated = quiet_build_wait(tr->quiet, &qe, &tr->cancel) == 0;
	rc = build_resolve(cfg, tree, url, ref, since, tr->kernels_dir, RESOLVE_TIMEOUT_S, &tr->cancel, &qe.pause,
			   r, err);
	if (gated)
		quiet_build_end(tr->quiet, &qe);
	return rc;
}

/* ---- evidence of a change ---- */

json_t *track_jobs_side(struct tracker *tr, const int64_t *jobs, size_t from, size_t to)
{
	json_t *side = json_pack("{s:[],s:[],s:[],s:{}}", "runs", "metrics", "profiles", "provenance");
	size_t i;

	for (i = from; i < to; i++) {
		json_t *doc = jobs[i] ? store_compare_doc(tr->st, jobs[i]) : NULL;

		if (!doc)
			continue;
		json_array_extend(json_object_get(side, "runs"), json_object_get(doc, "runs"));
		json_array_extend(json_object_get(side, "metrics"), json_object_get(doc, "metrics"));
		json_decref(doc);
	}
	return side;
}

const json_t *track_row_of(const json_t *cmp, const char *workload, const json_t *params, const char *metric)
{
	const json_t *row;
	size_t i;

	json_array_foreach(json_object_get(cmp, "rows"), i, row)
		if (!strcmp(jsonget_str(row, "metric") ?: "", metric) &&
		    !strcmp(jsonget_str(row, "workload") ?: "", workload) &&
		    json_equal(json_object_get(row, "params"), params))
			return row;
	return NULL;
}
