#include "run.h"

#include <errno.h>
#include <stdarg.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "console.h"
#include "ingest.h"
#include "insn.h"
#include "jsonget.h"
#include "log.h"
#include "store.h"
#include "transport.h"
#include "util.h"
#include "banned.h"

#define CONNECT_TIMEOUT 10.0
#define SHORT_TIMEOUT 30.0
#define AGENT_MAX_LINE (4u << 20)

void run_outcome_init(struct run_outcome *o)
{
	memset(o, 0, sizeof(*o));
	strbuf_init(&o->message, 0);
}

void run_outcome_release(struct run_outcome *o)
{
	if (!o)
		return;
	strbuf_release(&o->message);
	json_decref(o->specs);
	o->specs = NULL;
}

int run_file_sha256(const char *path, char out[65], struct strbuf *err)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned char md[32];
	unsigned int len = 0;
	int r;

	r = strbuf_read_file(&sb, path, 256u << 20);
	if (r < 0) {
		strbuf_release(&sb);
		return strbuf_seterr(err, "%s: %s", path, strerror(-r));
	}
	EVP_Digest(sb.buf, sb.len, md, &len, EVP_sha256(), NULL);
	hex_encode(md, sizeof(md), out);
	strbuf_release(&sb);
	return 0;
}

void run_stage_log(struct store *st, int64_t job_id, int64_t stage_id, const char *text)
{
	int rc;

	if (!st || (rc = store_stage_append_log(st, stage_id, text)) == 0)
		return;
	log_warnx("job %lld: stage %lld: store: a stage log line is lost: %s: %.200s", (long long)job_id,
		  (long long)stage_id, store_strerror(rc), text);
}

static void logf_stage(const struct run_request *req, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void logf_stage(const struct run_request *req, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strbuf_addch(&sb, '\n');
	run_stage_log(req->st, req->job_id, req->stage_id, sb.buf);
	strbuf_release(&sb);
}

/*
 * Where the agent lives on a machine must be the lab user's alone: another
 * user who owns the file, or any directory above it (a /tmp/tlblab made
 * first by someone else), could change the binary between our digest
 * check and the exec, and run code as the lab's user. This script, run
 * with the path as $1 (never spliced into it), makes the directory, walks
 * it and its physical path up to /: each part must belong to the lab's
 * user or root and be writable by nobody else, save a sticky directory
 * such as /tmp; a link must be the user's or root's. The file, when there,
 * must be the user's or root's and no link; its sha256sum is printed.
 * Exit 3 with the reason on stderr when the place is not safe. Busybox's
 * sh, stat, id and sha256sum do (a guest's agent).
 */
static const char agent_place_script[] =
	"u=$(id -u) || exit 2\n"
	"f=$1\n"
	"case $f in /*) ;; *) f=$PWD/$f ;; esac\n"
	"d=${f%/*}; [ -n \"$d\" ] || d=/\n"
	"bad() { echo \"$*\" >&2; exit 3; }\n"
	"own() {\n"
	"  s=$(stat -c '%u %a' \"$1\") || bad \"cannot stat $1\"\n"
	"  o=${s% *}; m=${s#* }\n"
	"  [ \"$o\" = \"$u\" ] || [ \"$o\" = 0 ] || bad \"$1 belongs to uid $o, neither the lab's user (uid $u) nor root\"\n"
	"  [ -L \"$1\" ] || [ $((0$m & 022)) = 0 ] || { [ \"$2\" = dir ] && [ $((0$m & 01000)) != 0 ]; } ||\n"
	"    bad \"$1 can be written by other users (mode $m)\"\n"
	"}\n"
	"walk() { p=$1; while :; do own \"$p\" dir; [ \"$p\" = / ] && break; p=${p%/*}; [ -n \"$p\" ] || p=/; done; }\n"
	"[ -d \"$d\" ] || mkdir -p \"$d\" || bad \"cannot create $d\"\n"
	"walk \"$d\"\n"
	"pd=$(cd -P \"$d\" && pwd -P) || bad \"cannot resolve $d\"\n"
	"[ \"$pd\" = \"$d\" ] || walk \"$pd\"\n"
	"[ ! -L \"$f\" ] || bad \"$f is a symbolic link\"\n"
	"[ ! -e \"$f\" ] || { own \"$f\" file; sha256sum \"$f\"; }\n";

/* Runs one of the health check's short commands on t: 0 when it exits 0,
 * 1 when it fails (its status and stderr in res, for the caller's
 * message), or the transport's negative errno with err. res is the
 * caller's to release in every case. */
static int short_exec(struct transport *t, const char *const *argv, struct exec_result *res,
		      struct strbuf *err)
{
	struct exec_req req = { .argv = argv, .timeout = SHORT_TIMEOUT };
	int r;

	transport_exec_result_init(res);
	r = transport_exec(t, &req, res, err);
	return r < 0 ? r : res->status != 0;
}

/* Makes sure the machine has our agent, in a place only the lab's user
 * (or root) can change; uploads it when the digest differs. */
static int ensure_agent(struct transport *t, const struct cfg_machine *m, const char *local,
			const char *sha, int *ret_uploaded, struct strbuf *err)
{
	const char *argv[] = { "sh", "-c", agent_place_script, "tlblab-agent-place", m->agent_path, NULL };
	struct exec_result res;
	int r;

	*ret_uploaded = 0;
	r = short_exec(t, argv, &res, err);
	if (r > 0) {
		r = -EIO;
		strbuf_seterr(err, "%s: agent_path %s: %s%.300s", t->label, m->agent_path,
			      res.status == 3 ? "not a safe place for the agent: " : "", res.err.buf);
		strbuf_trim(err);
	}
	if (r < 0)
		goto out;
	if (!strncmp(res.out.buf, sha, 64))
		goto out;
	r = transport_upload(t, local, m->agent_path, 0755, err);
	if (r == 0)
		*ret_uploaded = 1;
out:
	transport_exec_result_release(&res);
	return r;
}

/* hello: the agent answers and tells who the machine is. */
static int agent_hello(struct transport *t, const struct cfg_machine *m, json_t **ret_hello,
		       struct strbuf *err)
{
	const char *argv[] = { m->agent_path, "hello", NULL };
	struct exec_result res;
	const char *machine;
	json_t *h = NULL;
	int r;

	r = short_exec(t, argv, &res, err);
	if (r > 0) {
		r = -EIO;
		strbuf_seterr(err, "%s: tlblab-agent hello exited %d: %.300s", t->label, res.status, res.err.buf);
	}
	if (r < 0)
		goto out;
	h = json_loads(res.out.buf, 0, NULL);
	if (!json_is_object(h) || !json_is_object(json_object_get(h, "host"))) {
		r = -EIO;
		strbuf_seterr(err, "%s: tlblab-agent hello printed no hello line: %.200s", t->label, res.out.buf);
		json_decref(h);
		h = NULL;
		goto out;
	}
	/* a machine that is not the arch it is configured as would be given
	 * kernels it cannot boot, and its numbers filed under another arch */
	machine = jsonget_str(json_object_get(h, "host"), "machine");
	if (machine && arch_get(m->arch) != arch_lookup(machine)) {
		r = -EIO;
		strbuf_seterr(err, "%s: the machine is %s (uname -m), configured as arch %s", t->label, machine,
			      m->arch);
		json_decref(h);
		h = NULL;
		goto out;
	}
	*ret_hello = h;
out:
	transport_exec_result_release(&res);
	return r;
}

int run_health_check(const struct cfg_machine *m, const char *agent_local,
		     const char *agent_sha256, char *kernel, size_t kernel_len,
		     struct strbuf *err)
{
	struct transport *t = NULL;
	json_t *hello = NULL;
	int uploaded, r;

	r = transport_open(&m->ep, CONNECT_TIMEOUT, &t, err);
	if (r < 0)
		return -1;
	r = ensure_agent(t, m, agent_local, agent_sha256, &uploaded, err);
	if (r == 0)
		r = agent_hello(t, m, &hello, err);
	if (r == 0)
		snprintf(kernel, kernel_len, "%s",
			 jsonget_str(json_object_get(hello, "host"), "kernel_release") ?: "");
	json_decref(hello);
	transport_free(t);
	return r < 0 ? -1 : 0;
}

struct line_ctx {
	struct ingest *ig;
	volatile sig_atomic_t *cancel;
	int failed;
};

static int on_line(void *arg, const char *line, size_t len, int truncated)
{
	struct line_ctx *lc = arg;

	if (lc->cancel && *lc->cancel)
		return -1;
	if (ingest_line(lc->ig, line, len, truncated) < 0) {
		lc->failed = 1;
		return -1;
	}
	return 0;
}

static void fail(struct run_outcome *out, enum run_outcome_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(struct run_outcome *out, enum run_outcome_kind kind, const char *fmt, ...)
{
	va_list ap;

	out->kind = kind;
	va_start(ap, fmt);
	strbuf_vsetf(&out->message, fmt, ap);
	va_end(ap);
}

/*
 * Appends to msg what the machine's console says at the moment a spec
 * failed: the lines of the console's last part that tell why a process died
 * (a segfault, the OOM killer), else its last few lines. The console is
 * read now, so the lines are those of this moment, not of the stage's end.
 */
static void add_console_excerpt(const struct run_request *req, size_t *seen, struct strbuf *msg)
{
	struct strbuf con = STRBUF_INIT, hits = STRBUF_INIT;
	size_t from;

	if (!req->console)
		return;
	req->console(req->console_arg, &con);
	/* only what the console printed since the spec started */
	from = *seen <= con.len ? *seen : 0;
	if (!console_scan(con.buf + from, &hits, 4))
		strbuf_add_last_lines(&hits, con.buf + from, con.len - from, 5);
	strbuf_trim(&hits);
	if (hits.len)
		strbuf_addf(msg, "; console: %s", hits.buf);
	*seen = con.len;
	strbuf_release(&con);
	strbuf_release(&hits);
}

/* Remembers how long the console is, so a failure shows only what came after. */
static void console_mark(const struct run_request *req, size_t *seen)
{
	struct strbuf con = STRBUF_INIT;

	if (!req->console)
		return;
	req->console(req->console_arg, &con);
	*seen = con.len;
	strbuf_release(&con);
}

static const char *spec_state_name(enum run_outcome_kind k)
{
	switch (k) {
	case RUN_DONE: return "done";
	case RUN_WORKLOAD: return "failed";
	case RUN_INFRA: return "failed";
	case RUN_CANCELLED: return "cancelled";
	default: return "failed";
	}
}

static const char *spec_class_name(enum run_outcome_kind k)
{
	switch (k) {
	case RUN_WORKLOAD: return "workload";
	case RUN_INFRA: return "infra";
	case RUN_CANCELLED: return "cancelled";
	default: return NULL;
	}
}

/* The spec's entry in the stage's "specs": its workload and parameters
 * (the settings that are not parameters left out). */
static json_t *spec_entry(int index, const json_t *spec)
{
	static const char *const not_params[] = {
		"workload", "id", "iterations", "warmup", "interval", "monitors", "profile",
	};
	json_t *params = json_deep_copy(spec);
	size_t i;

	for (i = 0; i < ARRAY_SIZE(not_params); i++)
		json_object_del(params, not_params[i]);
	return json_pack("{s:i,s:s?,s:o,s:s,s:n,s:n}", "spec", index,
			 "workload", jsonget_str(spec, "workload"),
			 "params", params, "state", "not_run", "class", "message");
}

/* The vCPUs of the agent's list of CPUs (a window's "cpus"): every vCPU
 * when there is none, or one it names is not a vCPU the plugin could
 * count (then the rows say which, insn.c). */
static uint64_t window_vcpus(const json_t *cpus)
{
	uint64_t set = 0;
	size_t i;
	json_t *c;

	if (!json_is_array(cpus) || !json_array_size(cpus))
		return INSN_ALL_VCPUS;
	json_array_foreach(cpus, i, c) {
		json_int_t n = json_integer_value(c);

		if (!json_is_integer(c) || n < 0 || n >= INSN_VCPU_MAX)
			return INSN_ALL_VCPUS;
		set |= (uint64_t)1 << n;
	}
	return set;
}

/* A neighbour's TLB rows, neighbour.<its workload>.<row>, over its vCPUs
 * and its operations in the window. */
static void neighbour_rows(const struct insn_window *w, const json_t *nb, json_t *metrics, json_t *info,
			   json_t *unavailable)
{
	const char *wl = jsonget_str(nb, "workload");
	uint64_t set = window_vcpus(json_object_get(nb, "cpus"));
	char prefix[96];

	if (!wl || !json_is_number(json_object_get(nb, "ops")) || set == INSN_ALL_VCPUS)
		return;
	snprintf(prefix, sizeof(prefix), "neighbour.%s", wl);
	insn_tlb_metrics(w, jsonget_num_or(nb, "ops", 0), prefix, set, metrics, info, unavailable);
}

/* The plugin's file now: 0 with its markers counted, or -1 with why. */
static int insn_read(const struct run_request *req, struct strbuf *text, size_t *ret_markers, struct strbuf *why)
{
	strbuf_reset(text);
	if (!req->insn) {
		strbuf_addstr(why, "this machine is not emulated: QEMU's instruction plugin is not there; its "
			      "work rows are perf's instructions:k/u per op (<workload>.perf_kernel_insn_per_op, "
			      ".perf_user_insn_per_op)");
		return -1;
	}
	if (req->insn(req->insn_arg, text, why) < 0)
		return -1;
	return insn_count_markers(text->buf, ret_markers, why);
}

/*
 * After a spec: the instruction counts per operation of each window it
 * measured, from the markers the plugin wrote since `before`, added to the
 * stored iterations; or, for every workload the spec ran, why there are
 * none. Returns 0, or a store error (negative).
 */
static int insn_attach(const struct run_request *req, const struct ingest *ig, int have_before, size_t before,
		       const char *before_why)
{
	struct strbuf text = STRBUF_INIT, why = STRBUF_INIT;
	struct insn_window *w = NULL;
	json_t *unavailable = json_object(), *e;
	size_t nw = 0, i, after;
	int rc = 0;

	if (!json_array_size(ig->windows))
		goto out;
	if (!have_before)
		strbuf_addstr(&why, before_why);
	else if (insn_read(req, &text, &after, &why) == 0)
		insn_windows(text.buf, before, &w, &nw, &why);
	json_array_foreach(ig->windows, i, e) {
		const char *wl = jsonget_str(e, "workload");
		json_int_t k = jsonget_int_or(e, "index", 0);
		json_t *metrics, *info;
		struct strbuf werr = STRBUF_INIT;

		if (why.len) {
			insn_unavailable(wl, why.buf, unavailable);
			continue;
		}
		if (k < 1 || (size_t)k > nw) {
			strbuf_addf(&werr, "the agent's window %lld has no markers in the instruction plugin's "
				    "file (%zu windows there)", (long long)k, nw);
			insn_unavailable(wl, werr.buf, unavailable);
			strbuf_release(&werr);
			continue;
		}
		metrics = json_object();
		info = json_object();
		if (insn_metrics(&w[k - 1], jsonget_num_or(e, "ops", 0), wl,
				 window_vcpus(json_object_get(e, "cpus")), json_object_get(e, "neighbour") != NULL,
				 metrics, info, unavailable, &werr) < 0) {
			insn_unavailable(wl, werr.buf, unavailable);
		} else {
			neighbour_rows(&w[k - 1], json_object_get(e, "neighbour"), metrics, info, unavailable);
			rc = store_run_add_metrics(req->st, req->stage_id, ig->spec_index,
						   (int)jsonget_int_or(e, "case", 0),
						   (int)jsonget_int_or(e, "iteration", 0),
						   json_is_true(json_object_get(e, "warmup")), metrics, info);
		}
		json_decref(metrics);
		json_decref(info);
		strbuf_release(&werr);
		if (rc < 0)
			goto out;
	}
	if (json_object_size(unavailable))
		rc = store_unavailable_add(req->st, req->stage_id, unavailable);
out:
	if (rc < 0)
		logf_stage(req, "spec %d: store: the instruction counts are lost: %s", ig->spec_index,
			   store_strerror(rc));
	else if (why.len && json_array_size(ig->windows))
		logf_stage(req, "spec %d: no instruction counts: %s", ig->spec_index, why.buf);
	free(w);
	json_decref(unavailable);
	strbuf_release(&text);
	strbuf_release(&why);
	return rc;
}

/*
 * One spec of the suite through the agent. Returns how it ended; for a
 * failure, msg says why in words a developer can act on.
 */
static enum run_outcome_kind run_spec(const struct run_request *req, struct transport *t, int index,
				      const json_t *spec, size_t *console_seen, struct strbuf *msg,
				      int *ret_store_error)
{
	const struct cfg_machine *m = req->machine;
	const char *argv[] = { m->agent_path, "run", "--spec", "-", NULL };
	struct strbuf err = STRBUF_INIT, insn_why = STRBUF_INIT;
	struct exec_result res;
	struct ingest ig;
	size_t insn_before = 0;
	int have_insn = 0, rc;
	struct line_ctx lc;
	json_t *s = json_deep_copy(spec);
	char id[96], *input;
	double left = req->deadline - mono_now();
	enum run_outcome_kind k = RUN_WORKLOAD;
	int r;

	snprintf(id, sizeof(id), "job-%lld-stage-%lld-spec-%d", (long long)req->job_id,
		 (long long)req->stage_id, index);
	json_object_set_new(s, "id", json_string(id));
	input = json_dumps(s, JSON_COMPACT);
	json_decref(s);
	ingest_init(&ig);
	ig.st = req->st;
	ig.job_id = req->job_id;
	ig.stage_id = req->stage_id;
	ig.spec_index = index;
	ig.machine = m->name;
	ig.side = req->side;
	ig.build_id = req->build_id;
	ig.boot_id = req->boot_id;
	ig.cpus = req->cpus;
	lc.ig = &ig;
	lc.cancel = req->cancel;
	lc.failed = 0;
	transport_exec_result_init(&res);
	if (left <= 1) {
		k = RUN_INFRA;
		strbuf_addf(msg, "run: the stage timed out before spec %d (%s)", index, input);
		goto out;
	}
	console_mark(req, console_seen);
	{
		struct strbuf text = STRBUF_INIT;

		have_insn = insn_read(req, &text, &insn_before, &insn_why) == 0;
		strbuf_release(&text);
	}
	/* the plugin counts: QEMU runs the guest under TCG, whose PMU (arm64's
	 * PMUv3; x86 has none) counts no vCPU's own instructions */
	if (have_insn)
		ig.pmu_why = "an emulated machine (QEMU TCG): the instruction plugin's rows count its work; "
			     "QEMU's arm64 PMU counts INST_RETIRED only under icount, from the count of all "
			     "vCPUs, and no TLB refill (docs/emulated-work.md)";
	logf_stage(req, "== spec %d: %s", index, input);
	{
		struct exec_req er = { .argv = argv, .input = input, .input_len = strlen(input),
				       .timeout = left, .on_line = on_line, .arg = &lc,
				       .max_line = AGENT_MAX_LINE, .cancel = req->cancel };

		r = transport_exec(t, &er, &res, &err);
	}
	logf_stage(req, "spec %d: %ld lines, %ld iterations, %ld samples%s%s",
		   index, ig.lines, ig.iterations, ig.samples, res.err.len ? "; agent stderr: " : "",
		   res.err.len ? res.err.buf : "");
	/* the windows it measured get their instruction counts, or the
	 * reason they have none, whatever became of the spec */
	if (!ig.store_error && (rc = insn_attach(req, &ig, have_insn, insn_before, insn_why.buf)) < 0) {
		k = RUN_INFRA;
		*ret_store_error = rc;
		strbuf_addf(msg, "run: spec %d on %s: store: the instruction counts are lost", index, m->name);
		goto out;
	}
	if (req->cancel && *req->cancel) {
		k = RUN_CANCELLED;
		strbuf_addf(msg, "run: cancelled during spec %d", index);
		goto out;
	}
	if (lc.failed) {
		if (ig.store_error) {
			/* the lab's failure: retried, what was stored dropped */
			k = RUN_INFRA;
			*ret_store_error = ig.store_error;
		}
		strbuf_addf(msg, "run: spec %d on %s: %s", index, m->name, ig.bad.buf);
		goto out;
	}
	if (r == -ETIMEDOUT) {
		k = RUN_INFRA;
		strbuf_addf(msg, "run: spec %d on %s: the stage timeout passed: %s", index, m->name, err.buf);
		goto out;
	}
	if (r < 0) {
		k = RUN_INFRA;
		strbuf_addf(msg, "run: spec %d on %s: %s", index, m->name, err.buf);
		goto out;
	}
	if (res.status == 2) {
		strbuf_addf(msg, "run: spec %d: the agent refused the suite's spec: %.1000s", index, res.err.buf);
		goto out;
	}
	if (res.status != 0 || !ig.saw_result || !ig.result_ok) {
		struct strbuf tail = STRBUF_INIT;

		strbuf_add_last_lines(&tail, res.err.buf, res.err.len, 5);
		if (ig.agent_error.len)
			strbuf_addf(msg, "run: spec %d on %s: workload failed: %s", index, m->name,
				    ig.agent_error.buf);
		else if (res.status == -1)
			strbuf_addf(msg, "run: spec %d on %s: the agent was killed by signal %d (%s)", index,
				    m->name, res.signal, strsignal(res.signal));
		else
			strbuf_addf(msg, "run: spec %d on %s: the agent exited %d without a result", index,
				    m->name, res.status);
		if (tail.len)
			strbuf_addf(msg, "; stderr: %.800s", tail.buf);
		add_console_excerpt(req, console_seen, msg);
		strbuf_release(&tail);
		goto out;
	}
	k = RUN_DONE;
out:
	free(input);
	strbuf_release(&insn_why);
	transport_exec_result_release(&res);
	ingest_release(&ig);
	strbuf_release(&err);
	return k;
}

void run_stage(const struct run_request *req, struct run_outcome *out)
{
	const struct cfg_machine *m = req->machine;
	struct strbuf err = STRBUF_INIT, msg = STRBUF_INIT;
	struct transport *t = NULL;
	json_t *hello = NULL, *spec;
	size_t console_seen = 0;
	int uploaded = 0, r;
	size_t i;

	out->kind = RUN_DONE;
	out->store_error = 0;
	json_decref(out->specs);
	out->specs = json_array();
	out->nfailed = 0;
	json_array_foreach(req->workloads, i, spec)
		json_array_append_new(out->specs, spec_entry((int)i, spec));
	logf_stage(req, "== run on %s (%s)", m->name, config_transport_name(&m->ep));
	r = transport_open(&m->ep, CONNECT_TIMEOUT, &t, &err);
	if (r < 0) {
		fail(out, RUN_INFRA, "run: cannot reach %s: %s", m->name, err.buf);
		goto out;
	}
	r = ensure_agent(t, m, req->agent_local, req->agent_sha256, &uploaded, &err);
	if (r == 0)
		r = agent_hello(t, m, &hello, &err);
	if (r < 0) {
		fail(out, RUN_INFRA, "run: health check of %s failed: %s", m->name, err.buf);
		goto out;
	}
	snprintf(out->kernel, sizeof(out->kernel), "%s",
		 jsonget_str(json_object_get(hello, "host"), "kernel_release") ?: "");
	if ((r = store_stage_set_host(req->st, req->stage_id, hello)) < 0) {
		out->store_error = r;
		fail(out, RUN_INFRA, "run: store: could not keep %s's hello: %s", m->name, store_strerror(r));
		goto out;
	}
	logf_stage(req, "agent %s on %s, kernel %s, %s", uploaded ? "uploaded" : "up to date",
		   m->name, out->kernel,
		   jsonget_str(json_object_get(hello, "host"), "machine") ?: "?");
	json_array_foreach(req->workloads, i, spec) {
		json_t *e = json_array_get(out->specs, i);
		enum run_outcome_kind k;

		if (req->cancel && *req->cancel) {
			fail(out, RUN_CANCELLED, "run: cancelled");
			goto out;
		}
		strbuf_reset(&msg);
		k = run_spec(req, t, (int)i, spec, &console_seen, &msg, &out->store_error);
		json_object_set_new(e, "state", json_string(spec_state_name(k)));
		json_object_set_new(e, "class", spec_class_name(k) ? json_string(spec_class_name(k)) : json_null());
		json_object_set_new(e, "message", msg.len ? json_string(msg.buf) : json_null());
		/* without its specs' outcomes a stage's runs cannot be read
		 * right; a stage that stops anyway is retried or cancelled */
		if ((r = store_stage_set_specs(req->st, req->stage_id, out->specs)) < 0 &&
		    (k == RUN_DONE || k == RUN_WORKLOAD)) {
			out->store_error = r;
			fail(out, RUN_INFRA, "run: spec %d on %s: store: could not keep the specs' outcomes: %s",
			     (int)i, m->name, store_strerror(r));
			goto out;
		}
		if (k == RUN_DONE)
			continue;
		if (k != RUN_WORKLOAD) {
			fail(out, k, "%s", msg.buf);
			goto out;
		}
		/* a result: keep it, log it, and go on with the other specs */
		logf_stage(req, "%s", msg.buf);
		if (!out->nfailed++)
			strbuf_addstr(&out->message, msg.buf);
	}
	if (out->nfailed) {
		out->kind = RUN_WORKLOAD;
		if (json_array_size(out->specs) > 1) {
			strbuf_reset(&msg);
			strbuf_addf(&msg, "%d of %zu specs failed; first: %s", out->nfailed,
				    json_array_size(out->specs), out->message.buf);
			strbuf_reset(&out->message);
			strbuf_addstr(&out->message, msg.buf);
		}
		logf_stage(req, "== run done: %s", out->message.buf);
		goto done;
	}
	logf_stage(req, "== run done");
	goto done;
out:
	if (out->kind != RUN_DONE)
		logf_stage(req, "%s", out->message.buf);
done:
	json_decref(hello);
	transport_free(t);
	strbuf_release(&err);
	strbuf_release(&msg);
}
