/*
 * daemon/submit: what POST /api/v1/jobs accepts, the exact message of each
 * refusal (the text of its 400 or 429 answer), the defaults a request gets,
 * and the stages a job is planned into, in the order they run.
 */
#include "testlib.h"

#include <jansson.h>

#include "config.h"
#include "jsonget.h"
#include "store.h"
#include "submit.h"
#include "util.h"
#include "banned.h"

#define L(s) s "\n"

static const char lab_yaml[] =
	L("lab:")
	L("  data_dir: /tmp/tlblab-test-submit")
	L("  stage_timeout: 100")
	L("  max_jobs_per_token: 3")
	L("  max_boots_per_token: 20")
	L("machines:")
	L("  - name: m1")
	L("    transport: local")
	L("  - name: a1")
	L("    transport: local")
	L("    arch: arm64")
	L("    tags: [arm]")
	L("  - name: q1")
	L("    transport: local")
	L("    boot: qemu")
	L("    qemu: {accel: icount, max_cpus: 4, initrd: /i, ssh_port: 2222, identity: /k, known_hosts: /h}")
	L("builders:")
	L("  - name: local")
	L("    transport: local")
	L("trees:")
	L("  - name: linux")
	L("    url: /tmp/linux")
	L("    builder: local")
	L("suites:")
	L("  - name: tlb")
	L("    timeout: 60")
	L("    workloads:")
	L("      - workload: mprotect")
	L("  - name: sweep")
	L("    timeout: 60")
	L("    guest_cpus: [2, 4]")
	L("    workloads: [{workload: mprotect, duration: 1}]");

#define DIFF "--- a/mm/x.c\\n+++ b/mm/x.c\\n@@ -1 +1 @@\\n-a\\n+b\\n"

static struct lab_config *cfg;

static int setup(void **state)
{
	struct strbuf err = STRBUF_INIT;

	(void)state;
	if (config_load_string("lab.yaml", lab_yaml, strlen(lab_yaml), &cfg, &err) < 0)
		fail_msg("lab.yaml: %s", err.buf);
	strbuf_release(&err);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	config_free(cfg);
	return 0;
}

/* body is refused with exactly this message (up to a final '*': that
 * prefix), and keeps nothing. */
static void refused(const char *body, const char *want)
{
	struct strbuf err = STRBUF_INIT, subject = STRBUF_INIT;
	struct job_request req;
	json_t *doc = NULL;

	if (submit_request_parse(cfg, body, strlen(body), &doc, &req, &subject, &err) == 0)
		fail_msg("accepted: %s", body);
	if (want[strlen(want) - 1] == '*' ? strncmp(err.buf, want, strlen(want) - 1) : strcmp(err.buf, want))
		fail_msg("%s\nrefused with \"%s\", not \"%s\"", body, err.buf, want);
	assert_null(doc);
	strbuf_release(&err);
	strbuf_release(&subject);
}

static void test_refusals(void **state)
{
	(void)state;
	refused("[]", "body: must be a JSON object");
	refused("{\"suite\":", "body: malformed JSON at line 1, column 9: *");	/* then jansson's words */
	refused("{\"suite\":\"tlb\",\"colour\":1}", "colour: unknown field");
	refused("{}", "suite: missing (the name of a configured suite; the lab's defaults: names none)");
	refused("{\"suite\":\"nope\"}", "suite: no suite 'nope' in the configuration");
	refused("{\"suite\":\"tlb\",\"machines\":[\"m1\",\"m2\"]}", "machines[1]: no machine 'm2' in the configuration");
	refused("{\"suite\":\"tlb\",\"tags\":[\"a;b\"]}", "tags[0]: not a valid name (letters, digits, '.', '_', '-')");
	refused("{\"suite\":\"tlb\",\"tags\":\"qemu\"}", "tags: must be a list of names");
	refused("{\"suite\":\"tlb\",\"submitter\":\"a b\"}",
		"submitter: not a valid name (letters, digits, '.', '_', '-')");
	refused("{\"suite\":\"tlb\",\"boots\":0}", "boots: must be an integer from 1 to 100");
	refused("{\"suite\":\"tlb\",\"max_boots\":3}", "max_boots: an integer from boots (1) to 100, for A/B jobs");
	refused("{\"suite\":\"tlb\",\"tree\":\"bsd\",\"base\":\"v6.1\",\"patch\":\"" DIFF "\"}",
		"tree: no tree 'bsd' in the configuration");
	refused("{\"suite\":\"tlb\",\"tree\":\"linux\",\"base\":\"v6..1\",\"patch\":\"" DIFF "\"}",
		"base: not a valid git ref or commit id");
	refused("{\"suite\":\"tlb\",\"tree\":\"linux\",\"base\":\"v6.1\",\"url\":\"https://x/y\","
		"\"patch\":\"" DIFF "\"}", "patch: give exactly one of patch, branch or url");
	refused("{\"suite\":\"tlb\",\"tree\":\"linux\",\"base\":\"v6.1\",\"max_boots\":3}",
		"max_boots: an integer from boots (1) to 100, for A/B jobs");
	refused("{\"suite\":\"tlb\",\"base\":\"v6.1\"}",
		"tree: missing (the kernel tree to build; the lab's defaults: names none)");
	refused("{\"suite\":\"tlb\",\"patch\":\"" DIFF "\"}",
		"tree: missing (the kernel tree to build; the lab's defaults: names none)");
	refused("{\"suite\":\"tlb\",\"tree\":\"linux\",\"patch\":\"" DIFF "\"}",
		"base: missing (the ref of tree linux to build; the lab's defaults: names none for it)");
	refused("{\"suite\":\"tlb\",\"tree\":7,\"base\":\"v6.1\"}", "tree: no tree '(not a string)' in the configuration");
	/* the job's record of what it took from the defaults is the daemon's */
	refused("{\"suite\":\"tlb\",\"defaults\":{}}", "defaults: unknown field");
	refused("{\"suite\":\"tlb\",\"tree\":\"linux\",\"base\":\"v6.1\",\"patch\":\"hello\\n\"}",
		"patch: no diff in it (no '+++' line)");
	refused("{\"suite\":\"tlb\",\"tree\":\"linux\",\"base\":\"v6.1\",\"url\":\"ftp://x/y\"}",
		"url: must be an http(s) URL without spaces or quotes");
	refused("{\"suite\":\"tlb\",\"tree\":\"linux\",\"base\":\"v6.1\",\"boots\":4,\"max_boots\":3,"
		"\"patch\":\"" DIFF "\"}", "max_boots: an integer from boots (4) to 100, for A/B jobs");
	refused("{\"suite\":\"tlb\",\"arch\":\"mips\"}", "arch: 'mips' is not one of x86_64, arm64");
	refused("{\"suite\":\"tlb\",\"arch\":64}", "arch: must be a string (x86_64, arm64)");
	refused("{\"suite\":\"tlb\",\"machines\":[\"m1\"],\"arch\":\"arm64\"}",
		"arch: no configured machine of arch arm64 fits the job's machines and tags");
	/* a sweep (guest_cpus) boots QEMU guests of its counts: a kernel of
	 * the job's own, on a machine that boots the largest (a named one
	 * that cannot is named) */
	refused("{\"suite\":\"sweep\",\"tree\":\"linux\",\"base\":\"v6.1\",\"machines\":[\"q1\",\"m1\"]}",
		"machines: m1 is not a qemu machine (boot: none), whose guest's vCPUs a job could choose; "
		"suite sweep sweeps guest_cpus up to 4 vCPUs");
	refused("{\"suite\":\"sweep\",\"tree\":\"linux\",\"base\":\"v6.1\",\"arch\":\"arm64\"}",
		"suite: sweep sweeps guest_cpus up to 4 vCPUs, and no machine the job may use boots such a "
		"guest (a1 is not a qemu machine (boot: none), whose guest's vCPUs a job could choose)");
	refused("{\"suite\":\"sweep\",\"machines\":[\"q1\"]}",
		"suite: sweep sweeps guest_cpus (up to 4 vCPUs), which needs a kernel of the job's own to boot: "
		"give tree and base");
}

/* With the lab's defaults: a request with only a patch takes the suite,
 * the tree and its base, and says which it took; what it names wins; the
 * base is the default tree's, never given to another tree. */
static void test_lab_defaults(void **state)
{
	static const char more[] =
		L("  - name: next")
		L("    url: /tmp/next")
		L("    builder: local")
		L("defaults: {suite: tlb, tree: linux, base: v6.1-debian}");
	struct strbuf err = STRBUF_INIT, subject = STRBUF_INIT, yaml = STRBUF_INIT;
	struct lab_config *dcfg;
	struct job_request req;
	json_t *doc = NULL;
	const char *b;
	char *txt;

	(void)state;
	/* the second tree goes at the end of trees:, before suites: */
	strbuf_add(&yaml, lab_yaml, (size_t)(strstr(lab_yaml, "suites:") - lab_yaml));
	strbuf_add(&yaml, more, (size_t)(strstr(more, "defaults:") - more));
	strbuf_addstr(&yaml, strstr(lab_yaml, "suites:"));
	strbuf_addstr(&yaml, strstr(more, "defaults:"));
	if (config_load_string("lab.yaml", yaml.buf, yaml.len, &dcfg, &err) < 0)
		fail_msg("lab.yaml: %s", err.buf);

	b = "{\"patch\":\"" DIFF "\"}";
	assert_int_equal(submit_request_parse(dcfg, b, strlen(b), &doc, &req, &subject, &err), 0);
	assert_string_equal(req.kind, "ab");
	assert_string_equal(req.suite, "tlb");
	assert_string_equal(req.tree, "linux");
	assert_string_equal(req.base, "v6.1-debian");
	txt = json_dumps(req.defaults, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(txt, "{\"base\":\"v6.1-debian\",\"suite\":\"tlb\",\"tree\":\"linux\"}");
	free(txt);
	json_decref(doc);

	/* named fields win; only the rest is taken */
	doc = NULL;
	b = "{\"suite\":\"tlb\",\"base\":\"v6.1\",\"patch\":\"" DIFF "\"}";
	assert_int_equal(submit_request_parse(dcfg, b, strlen(b), &doc, &req, &subject, &err), 0);
	assert_string_equal(req.base, "v6.1");
	txt = json_dumps(req.defaults, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(txt, "{\"tree\":\"linux\"}");
	free(txt);
	json_decref(doc);

	/* another tree gets no default base */
	b = "{\"tree\":\"next\",\"patch\":\"" DIFF "\"}";
	assert_int_equal(submit_request_parse(dcfg, b, strlen(b), &doc, &req, &subject, &err), -1);
	assert_string_equal(err.buf, "base: missing (the ref of tree next to build; the lab's defaults: names none for it)");

	/* a request that names everything took nothing */
	doc = NULL;
	b = "{\"suite\":\"tlb\",\"tree\":\"next\",\"base\":\"v6.2\",\"patch\":\"" DIFF "\"}";
	assert_int_equal(submit_request_parse(dcfg, b, strlen(b), &doc, &req, &subject, &err), 0);
	assert_null(req.defaults);
	json_decref(doc);

	/* a run of the lab's default suite, no kernel named: the suite only */
	doc = NULL;
	b = "{}";
	assert_int_equal(submit_request_parse(dcfg, b, strlen(b), &doc, &req, &subject, &err), 0);
	assert_string_equal(req.kind, "run");
	assert_null(req.tree);
	txt = json_dumps(req.defaults, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(txt, "{\"suite\":\"tlb\"}");
	free(txt);
	json_decref(doc);
	config_free(dcfg);
	strbuf_release(&yaml);
	strbuf_release(&err);
	strbuf_release(&subject);
}

/* A job's arch: asked for, or its first allowed machine's; x86_64 when no
 * machine fits at all (the scheduler then says that none does). */
static void test_arch(void **state)
{
	json_t *m1 = json_pack("[s]", "m1"), *a1 = json_pack("[s]", "a1"), *arm = json_pack("[s]", "arm");
	json_t *none = json_pack("[s]", "gpu");
	struct strbuf err = STRBUF_INIT;

	(void)state;
	assert_string_equal(submit_job_arch(cfg, NULL, NULL, NULL, &err), "x86_64");
	assert_string_equal(submit_job_arch(cfg, m1, NULL, NULL, &err), "x86_64");
	assert_string_equal(submit_job_arch(cfg, a1, NULL, NULL, &err), "arm64");
	assert_string_equal(submit_job_arch(cfg, NULL, arm, NULL, &err), "arm64");
	assert_string_equal(submit_job_arch(cfg, NULL, NULL, "aarch64", &err), "arm64");
	assert_string_equal(submit_job_arch(cfg, NULL, none, NULL, &err), "x86_64");
	assert_null(submit_job_arch(cfg, NULL, arm, "x86_64", &err));
	assert_string_equal(err.buf, "arch: no configured machine of arch x86_64 fits the job's machines and tags");
	json_decref(m1);
	json_decref(a1);
	json_decref(arm);
	json_decref(none);
	strbuf_release(&err);
}

static void test_defaults(void **state)
{
	struct strbuf err = STRBUF_INIT, subject = STRBUF_INIT;
	struct job_request req;
	json_t *doc = NULL;
	const char *run = "{\"suite\":\"tlb\",\"machines\":[\"m1\"],\"submitter\":\"alice\"}";
	const char *ab = "{\"suite\":\"tlb\",\"tree\":\"linux\",\"base\":\"v6.1\",\"branch\":"
			 "{\"url\":\"https://git.example.org/linux.git\",\"ref\":\"tlb-fix\"}}";

	(void)state;
	assert_int_equal(submit_request_parse(cfg, run, strlen(run), &doc, &req, &subject, &err), 0);
	assert_string_equal(req.kind, "run");
	assert_string_equal(req.suite, "tlb");
	assert_string_equal(req.submitter, "alice");
	assert_int_equal(json_array_size(req.machines), 1);
	assert_int_equal(req.boots, 1);
	assert_null(req.patch_subject);
	json_decref(doc);

	doc = NULL;
	assert_int_equal(submit_request_parse(cfg, ab, strlen(ab), &doc, &req, &subject, &err), 0);
	assert_string_equal(req.kind, "ab");
	assert_string_equal(req.patch_kind, "branch");
	assert_int_equal(req.boots, 5);
	assert_int_equal(req.max_boots, 10);
	assert_string_equal(req.patch_subject, "branch tlb-fix of https://git.example.org/linux.git");
	json_decref(doc);

	/* a tree and a base without a patch: that kernel, built and run */
	doc = NULL;
	run = "{\"suite\":\"tlb\",\"tree\":\"linux\",\"base\":\"v6.1\"}";
	assert_int_equal(submit_request_parse(cfg, run, strlen(run), &doc, &req, &subject, &err), 0);
	assert_string_equal(req.kind, "run");
	assert_string_equal(req.tree, "linux");
	assert_string_equal(req.base, "v6.1");
	assert_null(req.patch_kind);
	assert_int_equal(req.boots, 1);
	json_decref(doc);
	strbuf_release(&err);
	strbuf_release(&subject);
}

/* The plan of body, as "kind/side/boot_index/timeout" items joined by ' ',
 * each with "/cN" when it boots a guest of N vCPUs (a sweep). */
static void plan_of(const char *body, struct strbuf *out)
{
	struct strbuf err = STRBUF_INIT, subject = STRBUF_INIT;
	struct job_request req;
	struct stage_plan *plan = NULL;
	json_t *doc = NULL;
	size_t i, n;

	if (submit_request_parse(cfg, body, strlen(body), &doc, &req, &subject, &err) < 0)
		fail_msg("%s: %s", body, err.buf);
	n = submit_plan(cfg, config_suite(cfg, req.suite), &req, &plan);
	for (i = 0; i < n; i++) {
		strbuf_addf(out, "%s%s/%s/%d/%g", i ? " " : "", plan[i].kind, plan[i].side ? plan[i].side : "-",
			    plan[i].boot_index, plan[i].timeout);
		if (plan[i].cpus)
			strbuf_addf(out, "/c%d", plan[i].cpus);
	}
	free(plan);
	json_decref(doc);
	strbuf_release(&err);
	strbuf_release(&subject);
}

static void test_plan(void **state)
{
	struct strbuf p = STRBUF_INIT;

	(void)state;
	plan_of("{\"suite\":\"tlb\",\"boots\":3}", &p);
	assert_string_equal(p.buf, "run/-/0/60 run/-/1/60 run/-/2/60");
	strbuf_reset(&p);
	/* both builds first, then boots ABAB..., each with its run */
	plan_of("{\"suite\":\"tlb\",\"tree\":\"linux\",\"base\":\"v6.1\",\"boots\":2,\"patch\":\"" DIFF "\"}", &p);
	assert_string_equal(p.buf, "build/base/0/100 build/patched/0/100 "
			    "boot/base/0/600 run/base/0/60 boot/patched/0/600 run/patched/0/60 "
			    "boot/base/1/600 run/base/1/60 boot/patched/1/600 run/patched/1/60");
	strbuf_reset(&p);
	/* one kernel: its build, then each boot with its run */
	plan_of("{\"suite\":\"tlb\",\"tree\":\"linux\",\"base\":\"v6.1\",\"boots\":2}", &p);
	assert_string_equal(p.buf, "build/base/0/100 boot/base/0/600 run/base/0/60 boot/base/1/600 run/base/1/60");
	strbuf_reset(&p);
	/* a sweep (guest_cpus: [2, 4]): each round boots each side at each
	 * count, ABAB at one count and then at the next */
	plan_of("{\"suite\":\"sweep\",\"tree\":\"linux\",\"base\":\"v6.1\",\"boots\":2,\"patch\":\"" DIFF "\"}", &p);
	assert_string_equal(p.buf, "build/base/0/100 build/patched/0/100 "
			    "boot/base/0/600/c2 run/base/0/60/c2 boot/patched/0/600/c2 run/patched/0/60/c2 "
			    "boot/base/0/600/c4 run/base/0/60/c4 boot/patched/0/600/c4 run/patched/0/60/c4 "
			    "boot/base/1/600/c2 run/base/1/60/c2 boot/patched/1/600/c2 run/patched/1/60/c2 "
			    "boot/base/1/600/c4 run/base/1/60/c4 boot/patched/1/600/c4 run/patched/1/60/c4");
	strbuf_reset(&p);
	plan_of("{\"suite\":\"sweep\",\"tree\":\"linux\",\"base\":\"v6.1\",\"machines\":[\"q1\"]}", &p);
	assert_string_equal(p.buf, "build/base/0/100 boot/base/0/600/c2 run/base/0/60/c2 "
			    "boot/base/0/600/c4 run/base/0/60/c4");
	strbuf_release(&p);
}

static void test_limits(void **state)
{
	struct stage_plan plan[] = {
		{ "build", "base", 0, 1, 0 }, { "boot", "base", 0, 1, 0 }, { "run", "base", 0, 1, 0 },
		{ "boot", "patched", 0, 1, 0 }, { "run", "patched", 0, 1, 0 },
	};
	struct stage_plan *const one[] = { plan }, *const three[] = { plan, plan, plan };
	const size_t n[] = { ARRAY_SIZE(plan), ARRAY_SIZE(plan), ARRAY_SIZE(plan) };
	struct strbuf err = STRBUF_INIT;

	(void)state;
	assert_int_equal(submit_within_limits(cfg, 2, 18, one, n, 1, &err), 0);
	assert_int_equal(submit_within_limits(cfg, 3, 0, one, n, 1, &err), -1);
	assert_string_equal(err.buf, "this token has 3 jobs queued or running, the most "
			    "lab.max_jobs_per_token allows (3): wait for one to end");
	assert_int_equal(submit_within_limits(cfg, 2, 19, one, n, 1, &err), -1);
	assert_string_equal(err.buf, "this job's 2 boots would give this token 21 boots still to run, "
			    "over lab.max_boots_per_token (20)");
	/* a series' jobs count on top of each other: 3 fit an idle token,
	 * one more job or 15 more boots do not, and the answer says so */
	assert_int_equal(submit_within_limits(cfg, 0, 14, three, n, 3, &err), 0);
	assert_int_equal(submit_within_limits(cfg, 1, 0, three, n, 3, &err), -1);
	assert_string_equal(err.buf, "the series' jobs: this token has 3 jobs queued or running, the most "
			    "lab.max_jobs_per_token allows (3): wait for one to end");
	assert_int_equal(submit_within_limits(cfg, 0, 15, three, n, 3, &err), -1);
	assert_string_equal(err.buf, "the series' jobs: this job's 2 boots would give this token 21 boots still "
			    "to run, over lab.max_boots_per_token (20)");
	strbuf_release(&err);
}

/* mail N of a series: a patch of mm/xN.c, or (N 0) a cover letter */
static void mail(struct strbuf *sb, int n, int of)
{
	strbuf_addf(sb, "From %040d Mon Sep 17 00:00:00 2001\nFrom: A <a@localhost>\n"
		    "Subject: [PATCH %d/%d] %s %d\n\n", n, n, of, n ? "mm: change" : "the series", n);
	if (n)
		strbuf_addf(sb, "Why.\n---\ndiff --git a/mm/x%d.c b/mm/x%d.c\n--- a/mm/x%d.c\n+++ b/mm/x%d.c\n"
			    "@@ -1 +1 @@\n-a\n+b\n-- \n2.39.5\n\n", n, n, n, n);
	else
		strbuf_addstr(sb, "What it does.\n\n-- \n2.39.5\n\n");
}

/* a request of the series (cover letter and n patches) with extra fields */
static void series_body(struct strbuf *body, int cover, int n, const char *extra)
{
	struct strbuf mbox = STRBUF_INIT;
	json_t *o;
	char *text;
	int i;

	if (cover)
		mail(&mbox, 0, n);
	for (i = 1; i <= n; i++)
		mail(&mbox, i, n);
	o = json_pack("{s:s,s:s,s:s,s:s}", "suite", "tlb", "tree", "linux", "base", "v6.1", "patch", mbox.buf);
	text = json_dumps(o, JSON_COMPACT);
	strbuf_reset(body);
	strbuf_add(body, text, strlen(text) - 1);
	strbuf_addf(body, "%s}", extra);
	free(text);
	json_decref(o);
	strbuf_release(&mbox);
}

/* per_patch: a job per prefix of the series, each with the text of its
 * first k patches (the cover letter kept), its own subject and series,
 * and the same plan as the whole series' job */
static void test_per_patch(void **state)
{
	struct strbuf body = STRBUF_INIT, err = STRBUF_INIT, subject = STRBUF_INIT, p = STRBUF_INIT;
	struct per_patch_job *jobs = NULL;
	struct job_request req;
	json_t *doc = NULL;
	size_t n, k;

	(void)state;
	series_body(&body, 1, 3, ",\"per_patch\":1");
	refused(body.buf, "per_patch: must be true or false");
	series_body(&body, 0, 1, ",\"per_patch\":true");
	refused(body.buf, "per_patch: needs an mbox of 2 or more patches (this one has 1)");
	series_body(&body, 0, 17, ",\"per_patch\":true");
	refused(body.buf, "per_patch: at most 16 patches, a job each (this series has 17)");
	refused("{\"suite\":\"tlb\",\"tree\":\"linux\",\"base\":\"v6.1\",\"per_patch\":true,\"patch\":\"" DIFF "\"}",
		"per_patch: needs an mbox of 2 or more patches (this one has a plain diff)");
	refused("{\"suite\":\"tlb\",\"tree\":\"linux\",\"base\":\"v6.1\",\"per_patch\":true,"
		"\"url\":\"https://x/y.mbox\"}", "per_patch: needs the series itself in patch (an mbox), not url");
	refused("{\"suite\":\"tlb\",\"per_patch\":true}", "per_patch: needs the series itself in patch (an mbox), "
		"not a run job");

	series_body(&body, 1, 3, ",\"per_patch\":true,\"boots\":2");
	if (submit_request_parse(cfg, body.buf, body.len, &doc, &req, &subject, &err) < 0)
		fail_msg("refused: %s", err.buf);
	assert_non_null(req.per_patch);
	assert_string_equal(subject.buf, "the series 0");
	n = submit_per_patch(cfg, config_suite(cfg, "tlb"), &req, &jobs);
	assert_int_equal(n, 3);
	for (k = 0; k < n; k++) {
		char want[64], *pp;
		const char *cut;

		snprintf(want, sizeof(want), "[%zu/3] mm: change %zu", k + 1, k + 1);
		assert_string_equal(jobs[k].req->patch_subject, want);
		/* the text is the series up to patch k+1: the cover letter, then
		 * patches 1..k+1, and not the next one */
		snprintf(want, sizeof(want), "+++ b/mm/x%zu.c", k + 1);
		assert_non_null(strstr(jobs[k].req->patch, "the series 0"));
		assert_non_null(cut = strstr(jobs[k].req->patch, want));
		snprintf(want, sizeof(want), "mm/x%zu.c", k + 2);
		assert_null(strstr(jobs[k].req->patch, want));
		assert_int_equal(json_array_size(json_object_get(jobs[k].req->patches, "patches")), k + 1);
		assert_string_equal(jsonget_str(jobs[k].req->patches, "cover"), "the series 0");
		pp = json_dumps(jobs[k].req->per_patch, JSON_COMPACT | JSON_SORT_KEYS);
		snprintf(want, sizeof(want), "{\"k\":%zu,\"n\":3,\"series\":\"the series 0\"}", k + 1);
		assert_string_equal(pp, want);
		free(pp);
		assert_string_equal(jobs[k].req->kind, "ab");
		assert_int_equal(jobs[k].req->boots, 2);
		assert_int_equal(jobs[k].nplan, 2 + 2 * 2 * 2);
	}
	/* the last job's text is the whole series */
	assert_string_equal(jobs[2].req->patch, req.patch);
	submit_per_patch_release(jobs, n);
	json_decref(doc);
	strbuf_release(&body);
	strbuf_release(&err);
	strbuf_release(&subject);
	strbuf_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_arch),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_lab_defaults),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_per_patch),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
