/*
 * Submitting a job (submit.h): a JOB_REQUEST body is read and checked
 * against the configuration before anything is stored, planned into the
 * stages the job will run, and weighed against its token's limits. The
 * HTTP handler (api_create_job in api_jobs.c) reads the body, counts the
 * token's work in the store, stores the job and answers; what it may
 * store is decided here.
 */
#include "submit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "config.h"
#include "jsonget.h"
#include "patch.h"
#include "store.h"
#include "util.h"
#include "verdict.h"
#include "banned.h"

static int check_names(const json_t *arr, const char *field, const struct lab_config *cfg,
		       int machines, struct strbuf *err)
{
	size_t i;
	json_t *v;

	if (!json_is_array(arr) || json_array_size(arr) > 256)
		return strbuf_seterr(err, "%s: must be a list of names", field);
	json_array_foreach(arr, i, v) {
		const char *s = json_string_value(v);

		if (!s || !config_valid_name(s))
			return strbuf_seterr(err, "%s[%zu]: not a valid name (letters, digits, '.', '_', '-')",
					     field, i);
		if (machines && !config_machine(cfg, s))
			return strbuf_seterr(err, "%s[%zu]: no machine '%s' in the configuration", field, i, s);
	}
	return 0;
}

const char *submit_job_arch(const struct lab_config *cfg, const json_t *machines, const json_t *tags,
			    const char *asked, struct strbuf *err)
{
	const struct arch *a = asked ? arch_lookup(asked) : NULL;
	size_t i;

	if (asked && !a) {
		strbuf_seterr(err, "arch: '%.32s' is not one of %s", asked, arch_names());
		return NULL;
	}
	for (i = 0; i < cfg->nmachines; i++) {
		const struct cfg_machine *m = &cfg->machines[i];

		if (config_machine_allowed(m, machines, tags) && (!a || !strcmp(m->arch, a->name)))
			return a ? a->name : arch_get(m->arch)->name;
	}
	if (a) {
		strbuf_seterr(err, "arch: no configured machine of arch %s fits the job's machines and tags",
			      a->name);
		return NULL;
	}
	/* no machine fits at all: the scheduler says so when it places the job */
	return arch_get(NULL)->name;
}

/* Reads the kernel fields of a job request into req: tree and base, and
 * for an A/B job one patch source, with what to call the patch in subject
 * (req points at it). Without a patch source the job is a run of the base
 * kernel, built and booted (kind run). 0, or -1 with err naming the field. */
static int parse_ab(const struct lab_config *cfg, json_t *body, struct job_request *req,
		    struct strbuf *subject, struct strbuf *err)
{
	json_t *patch = json_object_get(body, "patch"), *branch = json_object_get(body, "branch");
	json_t *url = json_object_get(body, "url");
	int sources = !!patch + !!branch + !!url;
	struct strbuf name = STRBUF_INIT, why = STRBUF_INIT;
	json_t *series;

	req->kind = "ab";
	req->tree = jsonget_str(body, "tree");
	req->base = jsonget_str(body, "base");
	if (!json_object_get(body, "tree"))
		return strbuf_seterr(err, "tree: missing (the kernel tree to build; the lab's defaults: "
				     "names none)");
	if (!req->tree || !config_valid_name(req->tree) || !config_tree(cfg, req->tree))
		return strbuf_seterr(err, "tree: no tree '%.64s' in the configuration",
				     req->tree ? req->tree : "(not a string)");
	if (!json_object_get(body, "base"))
		return strbuf_seterr(err, "base: missing (the ref of tree %s to build; the lab's defaults: "
				     "names none for it)", req->tree);
	if (!req->base || !ref_valid(req->base))
		return strbuf_seterr(err, "base: not a valid git ref or commit id");
	if (sources == 0) {
		req->kind = "run";
		return 0;
	}
	if (sources != 1)
		return strbuf_seterr(err, "patch: give exactly one of patch, branch or url");
	if (patch) {
		req->patch_kind = "patch";
		req->patch = json_string_value(patch);
		if (!req->patch || !*req->patch || strlen(req->patch) != json_string_length(patch))
			return strbuf_seterr(err, "patch: must be the text of a diff or a git format-patch mbox");
		/* an mbox's mails first: its errors name the mail */
		if (patch_series_json(req->patch, strlen(req->patch), &series, &why) < 0) {
			strbuf_seterr(err, "patch: %s", why.buf);
			strbuf_release(&why);
			return -1;
		}
		if (!strstr(req->patch, "\n+++ ") && strncmp(req->patch, "+++ ", 4) && !strstr(req->patch, "\nGIT binary patch")) {
			json_decref(series);
			return strbuf_seterr(err, "patch: no diff in it (no '+++' line)");
		}
		/* the body keeps it: req points into the body */
		if (series) {
			json_object_set_new(body, "patches", series);
			req->patches = series;
		}
		/* an mbox's first mail names it: the cover letter's, or the first patch's */
		patch_subject(req->patch, strlen(req->patch), subject);
	} else if (branch) {
		req->patch_kind = "branch";
		req->patch_url = jsonget_str(branch, "url");
		req->patch_ref = jsonget_str(branch, "ref");
		if (!json_is_object(branch) || !url_valid(req->patch_url, 1))
			return strbuf_seterr(err, "branch.url: must be an https:// or git:// URL (a host, an optional port, "
						     "a path of letters, digits and ._~/%%@-)");
		if (!ref_valid(req->patch_ref))
			return strbuf_seterr(err, "branch.ref: not a valid git ref");
		strbuf_addf(&name, "branch %s of %s", req->patch_ref, req->patch_url);
	} else {
		req->patch_kind = "url";
		req->patch_url = json_string_value(url);
		if (!url_valid(req->patch_url, 0))
			return strbuf_seterr(err, "url: must be an http(s) URL without spaces or quotes");
		strbuf_addstr(&name, req->patch_url);	/* until the mbox is fetched (build_stage.c) */
	}
	if (name.len) {
		strbuf_reset(subject);
		strbuf_add_line_clean(subject, name.buf, name.len, PATCH_SUBJECT_MAX);
		strbuf_release(&name);
	}
	req->patch_subject = subject->len ? subject->buf : NULL;
	return 0;
}

/*
 * The lab's defaults: (config.h) for what the request leaves out: the
 * suite; for a request with a patch, the tree; and the base where the tree
 * is the default one (a ref means nothing in another tree). What is taken
 * is written into body, and listed in body's "defaults" member (which a
 * request cannot send: it is not one of its fields) for the job to keep.
 */
static void take_defaults(const struct lab_config *cfg, json_t *body)
{
	const struct cfg_defaults *d = &cfg->defaults;
	json_t *taken = json_object();
	const char *tree;

	if (!json_object_get(body, "suite") && d->suite)
		json_object_set_new(taken, "suite", json_string(d->suite));
	if ((json_object_get(body, "patch") || json_object_get(body, "branch") || json_object_get(body, "url") ||
	     json_object_get(body, "base")) && !json_object_get(body, "tree") && d->tree)
		json_object_set_new(taken, "tree", json_string(d->tree));
	tree = jsonget_str(body, "tree") ?:
	       jsonget_str(taken, "tree");
	if ((json_object_get(body, "patch") || json_object_get(body, "branch") || json_object_get(body, "url")) &&
	    !json_object_get(body, "base") && d->base && tree && d->tree && !strcmp(tree, d->tree))
		json_object_set_new(taken, "base", json_string(d->base));
	if (!json_object_size(taken)) {
		json_decref(taken);
		return;
	}
	json_object_update(body, taken);
	json_object_set_new(body, "defaults", taken);
}

/* "per_patch": true asks for a per-patch series (submit.h) of the mbox
 * parse_ab read: req->per_patch becomes {"n", "series"}, kept in body. */
static int parse_per_patch(json_t *v, json_t *body, struct job_request *req, const struct strbuf *subject,
			   struct strbuf *err)
{
	size_t n = json_array_size(json_object_get(req->patches, "patches"));
	json_t *pp;

	if (!json_is_boolean(v))
		return strbuf_seterr(err, "per_patch: must be true or false");
	if (!json_is_true(v))
		return 0;
	if (!req->patch_kind || strcmp(req->patch_kind, "patch"))
		return strbuf_seterr(err, "per_patch: needs the series itself in patch (an mbox), not %s",
				     req->patch_kind ? req->patch_kind : "a run job");
	if (n < 2)
		return strbuf_seterr(err, "per_patch: needs an mbox of 2 or more patches (this one has %s)",
				     n ? "1" : "a plain diff");
	if (n > SUBMIT_PER_PATCH_MAX)
		return strbuf_seterr(err, "per_patch: at most %d patches, a job each (this series has %zu)",
				     SUBMIT_PER_PATCH_MAX, n);
	pp = json_pack("{s:I,s:s}", "n", (json_int_t)n, "series", subject->buf);
	json_object_set_new(body, "per_patch", pp);	/* the body keeps it: req points at it */
	req->per_patch = pp;
	return 0;
}

/* The most vCPUs a suite's sweep asks (config.h: guest_cpus), or 0. */
static int sweep_max(const struct cfg_suite *s)
{
	int max = 0;

	for (size_t i = 0; i < s->nguest_cpus; i++)
		if (s->guest_cpus[i] > max)
			max = s->guest_cpus[i];
	return max;
}

/* Whether machine m can boot a guest of cpus vCPUs; why not in why (a
 * phrase after the machine's name). */
static int machine_boots_cpus(const struct cfg_machine *m, int cpus, char *why, size_t len)
{
	if (m->max_cpus <= 0) {
		snprintf(why, len, "is not a qemu machine (boot: %s), whose guest's vCPUs a job could choose",
			 config_boot_method_name(m));
		return 0;
	}
	if (m->max_cpus < cpus) {
		snprintf(why, len, "boots at most %d vCPUs (its max_cpus)", m->max_cpus);
		return 0;
	}
	return 1;
}

/*
 * A suite that sweeps guest_cpus boots QEMU guests of each count: its job
 * builds a kernel (tree and base), and a machine it names must boot the
 * largest count; of the machines it may use, one at least must (the
 * scheduler leaves the others out, sched_loop.c). 0, or -1 with err.
 */
static int check_sweep(const struct lab_config *cfg, const struct job_request *req, struct strbuf *err)
{
	const struct cfg_suite *s = config_suite(cfg, req->suite);
	const struct cfg_machine *refused = NULL;
	int max = sweep_max(s), fits = 0;
	char why[160] = "", first_why[160] = "";
	size_t i;

	if (!max)
		return 0;
	if (!req->tree)
		return strbuf_seterr(err, "suite: %s sweeps guest_cpus (up to %d vCPUs), which needs a kernel "
				     "of the job's own to boot: give tree and base", s->name, max);
	for (i = 0; i < json_array_size(req->machines); i++) {
		const struct cfg_machine *m = config_machine(cfg, json_string_value(json_array_get(req->machines, i)));

		if (m && !machine_boots_cpus(m, max, why, sizeof(why)))
			return strbuf_seterr(err, "machines: %s %s; suite %s sweeps guest_cpus up to %d vCPUs",
					     m->name, why, s->name, max);
	}
	for (i = 0; i < cfg->nmachines; i++) {
		const struct cfg_machine *m = &cfg->machines[i];

		if (arch_get(m->arch) != arch_get(req->arch) || !config_machine_allowed(m, req->machines, req->tags))
			continue;
		if (machine_boots_cpus(m, max, why, sizeof(why))) {
			fits = 1;
		} else if (!refused) {
			refused = m;
			snprintf(first_why, sizeof(first_why), "%s", why);
		}
	}
	if (!fits && refused)
		return strbuf_seterr(err, "suite: %s sweeps guest_cpus up to %d vCPUs, and no machine the job may "
				     "use boots such a guest (%s %s)", s->name, max, refused->name, first_why);
	return 0;
}

int submit_request_parse(const struct lab_config *cfg, const char *buf, size_t len, json_t **ret_body,
			 struct job_request *req, struct strbuf *subject, struct strbuf *err)
{
	json_error_t jerr;
	json_t *body, *v;
	const char *key;
	int rc = -1;
	static const char *const fields[] = { "suite", "machines", "tags", "submitter", "boots", "tree",
					      "base", "patch", "branch", "url", "max_boots", "arch", "per_patch" };

	*req = (struct job_request){ .kind = "run", .boots = 1 };
	body = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(body)) {
		if (body)
			strbuf_seterr(err, "body: must be a JSON object");
		else
			strbuf_seterr(err, "body: malformed JSON at line %d, column %d: %s",
				      jerr.line, jerr.column, jerr.text);
		goto out;
	}
	json_object_foreach(body, key, v) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(fields); i++)
			if (!strcmp(key, fields[i]))
				break;
		if (i == ARRAY_SIZE(fields)) {
			strbuf_seterr(err, "%.64s: unknown field", key);
			goto out;
		}
	}
	take_defaults(cfg, body);
	req->defaults = json_object_get(body, "defaults");
	req->suite = jsonget_str(body, "suite");
	if (!req->suite) {
		strbuf_seterr(err, "suite: missing (the name of a configured suite; the lab's defaults: names none)");
		goto out;
	}
	if (!config_valid_name(req->suite) || !config_suite(cfg, req->suite)) {
		strbuf_seterr(err, "suite: no suite '%.64s' in the configuration", req->suite);
		goto out;
	}
	if ((v = json_object_get(body, "machines")) && check_names(v, "machines", cfg, 1, err) < 0)
		goto out;
	req->machines = v;
	if ((v = json_object_get(body, "tags")) && check_names(v, "tags", cfg, 0, err) < 0)
		goto out;
	req->tags = v;
	if ((v = json_object_get(body, "arch")) && !json_is_string(v)) {
		strbuf_seterr(err, "arch: must be a string (%s)", arch_names());
		goto out;
	}
	req->arch = submit_job_arch(cfg, req->machines, req->tags, json_string_value(v), err);
	if (!req->arch)
		goto out;
	if ((v = json_object_get(body, "submitter"))) {
		req->submitter = json_string_value(v);
		if (!req->submitter || !config_valid_name(req->submitter)) {
			strbuf_seterr(err, "submitter: not a valid name (letters, digits, '.', '_', '-')");
			goto out;
		}
	}
	if (json_object_get(body, "tree") || json_object_get(body, "base") || json_object_get(body, "patch") ||
	    json_object_get(body, "branch") || json_object_get(body, "url")) {
		if (parse_ab(cfg, body, req, subject, err) < 0)
			goto out;
		/* DESIGN.md: 5 boots per side; an inconclusive headline metric
		 * adds boots, up to 10 (verdict.h says why) */
		if (!strcmp(req->kind, "ab")) {
			req->boots = VERDICT_BOOTS;
			req->max_boots = VERDICT_MAX_BOOTS;
		}
	}
	if ((v = json_object_get(body, "boots"))) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 100) {
			strbuf_seterr(err, "boots: must be an integer from 1 to 100");
			goto out;
		}
		req->boots = (int)json_integer_value(v);
		req->max_boots = req->boots;	/* boots chosen: no more unless asked */
	}
	if ((v = json_object_get(body, "max_boots"))) {
		if (!json_is_integer(v) || json_integer_value(v) < req->boots || json_integer_value(v) > 100 ||
		    strcmp(req->kind, "ab")) {
			strbuf_seterr(err, "max_boots: an integer from boots (%d) to 100, for A/B jobs", req->boots);
			goto out;
		}
		req->max_boots = (int)json_integer_value(v);
	}
	if ((v = json_object_get(body, "per_patch")) && parse_per_patch(v, body, req, subject, err) < 0)
		goto out;
	req->suite_json = config_suite(cfg, req->suite)->workloads;
	if (check_sweep(cfg, req, err) < 0)
		goto out;
	*ret_body = body;
	body = NULL;
	rc = 0;
out:
	json_decref(body);
	return rc;
}

/* The stages of a job: for "run", one run per boot; for "ab", both builds,
 * then base and patched boots interleaved (ABAB...), each followed by its run. */
size_t submit_plan(const struct lab_config *cfg, const struct cfg_suite *suite, const struct job_request *req,
		   struct stage_plan **ret)
{
	double run_timeout = suite->timeout > 0 ? suite->timeout : cfg->stage_timeout;
	/* a sweep boots each side once per count in every round; 0: the
	 * machine's own cpus */
	static const int own[] = { 0 };
	const int *counts = suite->nguest_cpus ? suite->guest_cpus : own;
	size_t ncounts = suite->nguest_cpus ? suite->nguest_cpus : 1, c;
	size_t n = 0, cap = 2 + 4 * (size_t)req->boots * ncounts;
	struct stage_plan *p = xcalloc(cap, sizeof(*p));
	static const char *const sides[] = { "base", "patched" };
	int i, k;

	if (strcmp(req->kind, "ab") && !req->tree) {
		for (i = 0; i < req->boots; i++)
			p[n++] = (struct stage_plan){ "run", NULL, i, run_timeout, 0 };
		*ret = p;
		return n;
	}
	if (strcmp(req->kind, "ab")) {	/* one kernel: its build, then boot and run */
		p[n++] = (struct stage_plan){ "build", "base", 0, cfg->stage_timeout, 0 };
		for (i = 0; i < req->boots; i++)
			for (c = 0; c < ncounts; c++) {
				p[n++] = (struct stage_plan){ "boot", "base", i, 600, counts[c] };
				p[n++] = (struct stage_plan){ "run", "base", i, run_timeout, counts[c] };
			}
		*ret = p;
		return n;
	}
	for (k = 0; k < 2; k++)
		p[n++] = (struct stage_plan){ "build", sides[k], 0, cfg->stage_timeout, 0 };
	/* ABAB at each count in turn, so a round's pairs are alike (and a
	 * duet's patched boot is two stages after its base one) */
	for (i = 0; i < req->boots; i++)
		for (c = 0; c < ncounts; c++)
			for (k = 0; k < 2; k++) {
				p[n++] = (struct stage_plan){ "boot", sides[k], i, 600, counts[c] };
				p[n++] = (struct stage_plan){ "run", sides[k], i, run_timeout, counts[c] };
			}
	*ret = p;
	return n;
}

int submit_within_limits(const struct lab_config *cfg, int jobs, int boots, struct stage_plan *const *plans,
			 const size_t *nplans, size_t n, struct strbuf *err)
{
	const char *series = n > 1 ? "the series' jobs: " : "";
	size_t i, k;
	int more;

	for (i = 0; i < n; i++, jobs++, boots += more) {
		for (more = 0, k = 0; k < nplans[i]; k++)
			more += !strcmp(plans[i][k].kind, "boot");
		if (jobs >= cfg->max_jobs_per_token)
			return strbuf_seterr(err, "%sthis token has %d jobs queued or running, the most "
					     "lab.max_jobs_per_token allows (%d): wait for one to end",
					     series, jobs, cfg->max_jobs_per_token);
		if (boots + more > cfg->max_boots_per_token)
			return strbuf_seterr(err, "%sthis job's %d boots would give this token %d boots still to "
					     "run, over lab.max_boots_per_token (%d)",
					     series, more, boots + more, cfg->max_boots_per_token);
	}
	return 0;
}

size_t submit_per_patch(const struct lab_config *cfg, const struct cfg_suite *suite, const struct job_request *req,
			struct per_patch_job **ret)
{
	struct patch_series ser;
	struct strbuf err = STRBUF_INIT;
	struct per_patch_job *jobs;
	size_t k, n;

	/* submit_request_parse read it already: a series of 2 or more */
	if (patch_series_read(req->patch, strlen(req->patch), &ser, &err) < 0 || ser.npatches < 2)
		abort();
	n = ser.npatches;
	jobs = xcalloc(n, sizeof(*jobs));
	for (k = 0; k < n; k++) {
		struct per_patch_job *j = &jobs[k];
		struct strbuf why = STRBUF_INIT;

		j->req = xmalloc(sizeof(*j->req));
		*j->req = *req;
		j->text = xmalloc(ser.ends[k] + 1);
		memcpy(j->text, req->patch, ser.ends[k]);
		j->text[ser.ends[k]] = '\0';
		strbuf_init(&j->subject, 0);
		strbuf_addf(&j->subject, "[%zu/%zu] %s", k + 1, n, ser.subjects[k]);
		if (patch_series_json(j->text, ser.ends[k], &j->patches, &why) < 0)
			abort();	/* a prefix of a series that reads is one */
		j->per_patch = json_pack("{s:I,s:I,s:O}", "k", (json_int_t)(k + 1), "n", (json_int_t)n,
					 "series", json_object_get(req->per_patch, "series"));
		j->req->patch = j->text;
		j->req->patch_subject = j->subject.buf;
		j->req->patches = j->patches;
		j->req->per_patch = j->per_patch;
		j->nplan = submit_plan(cfg, suite, j->req, &j->plan);
	}
	patch_series_release(&ser);
	*ret = jobs;
	return n;
}

void submit_per_patch_release(struct per_patch_job *jobs, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++) {
		free(jobs[k].req);
		free(jobs[k].plan);
		free(jobs[k].text);
		strbuf_release(&jobs[k].subject);
		json_decref(jobs[k].patches);
		json_decref(jobs[k].per_patch);
	}
	free(jobs);
}
