/*
 * transport: sim, the simulated lab's transport (sim.h, docs/scale.md).
 * Nothing runs: exec answers the few commands the stages send as the real
 * programs would, after a time drawn from real stages' times (scaled):
 *
 *   sh build.sh ... --out DIR ...   a build: TLBLAB lines of a built (or,
 *                                   the second time for a build id,
 *                                   cached) kernel; the artifacts come by
 *                                   download, made up from the build id
 *   AGENT hello                     the recorded run's hello line
 *   AGENT run --spec -              the recorded run's lines, spread over
 *                                   a drawn run time, each iteration's
 *                                   metrics times a boot's noise factor
 *   cat /proc/cmdline|/proc/version the kernel boot sim put on the host
 *   sh -c ... (mkdir, the agent's place), rm: succeed, doing nothing
 *
 * and upload takes nothing. The endpoint's host names the machine or the
 * builder (it keys the booted kernels); nothing is reached over a network.
 */
#include "transport.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch.h"
#include "backend.h"
#include "settings.h"
#include "sim.h"
#include "util.h"
#include "banned.h"

/* a boot's factor on every metric (1% spread), and an iteration's own */
#define SIM_BOOT_NOISE 0.01
#define SIM_ITERATION_NOISE 0.003

static void sha256_hex(const char *text, char out[65])
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	EVP_Digest(text, strlen(text), d, &n, EVP_sha256(), NULL);
	hex_encode(d, n, out);
	out[64] = '\0';
}

/* What the kernel image of build id holds (its hash is the build's). */
static void image_text(const char *build_id, struct strbuf *out)
{
	strbuf_addf(out, "tlblab-sim kernel %s\n", build_id);
}

static int sim_open(struct transport *t, struct strbuf *err)
{
	(void)t;
	return sim_lab_ready(err) < 0 ? -EIO : 0;
}

static void sim_close(struct transport *t)
{
	(void)t;
}

/* A line of stdout, to on_line or to res->out. -ECANCELED when on_line
 * asked to stop. */
static int emit(const struct exec_req *req, struct exec_result *res, const char *line)
{
	if (req->on_line)
		return req->on_line(req->arg, line, strlen(line), 0) < 0 ? -ECANCELED : 0;
	strbuf_addstr(&res->out, line);
	strbuf_addch(&res->out, '\n');
	return 0;
}

static const char *arg_after(const char *const *argv, const char *name)
{
	for (; *argv; argv++)
		if (!strcmp(*argv, name) && argv[1])
			return argv[1];
	return NULL;
}

static int deadline_error(int r, struct transport *t, struct strbuf *err)
{
	if (r == -ECANCELED)
		strbuf_seterr(err, "%s: cancelled", t->label);
	else if (r == -ETIMEDOUT)
		strbuf_seterr(err, "%s: timed out", t->label);
	return r;
}

/* build.sh: the build id from what makes one (ref, arch, the patch) */
static int sim_build(struct transport *t, const struct exec_req *req, struct exec_result *res,
		     double deadline, struct strbuf *err)
{
	const char *const *argv = req->argv;
	const char *ref = arg_after(argv, "--ref"), *out = arg_after(argv, "--out");
	const struct arch *a = arch_get(arg_after(argv, "--arch") ?: "x86_64");
	const char *patch = arg_after(argv, "--patch"), *fetch = arg_after(argv, "--fetch");
	struct strbuf key = STRBUF_INIT, text = STRBUF_INIT, line = STRBUF_INIT;
	char id[65], commit[65], config[65], image[65];
	int cached, r;
	double secs;

	if (!ref || !out || !a) {
		res->status = 2;
		strbuf_addstr(&res->err, "sim build.sh: --ref, --out and a known --arch wanted\n");
		return 0;
	}
	strbuf_addf(&key, "sim\n%s\n%s\n%s\n%s\n%s", ref, a->name, patch ?: "", fetch ?: "",
		    arg_after(argv, "--fetch-ref") ?: "");
	sha256_hex(key.buf, id);
	strbuf_reset(&key);
	strbuf_addf(&key, "commit %s", ref);
	sha256_hex(key.buf, commit);
	sha256_hex("sim config", config);
	image_text(id, &text);
	sha256_hex(text.buf, image);
	cached = !sim_lab_new_build(id);
	secs = sim_lab_draw(cached ? SIM_BUILD_CACHED : SIM_BUILD);
	r = sim_lab_work(secs, cached ? SIM_BUILD_CACHED : SIM_BUILD, t->ep->host, req->cancel, deadline);
	if (r < 0) {
		deadline_error(r, t, err);
		goto done;
	}
	strbuf_addf(&line, "TLBLAB build_id %s\nTLBLAB commit %.40s\nTLBLAB config_hash %s\nTLBLAB dir %s/%s\n"
		    "TLBLAB compiler gcc (Debian 12.2.0-14) 12.2.0\nTLBLAB kernelrelease 6.1.0-sim\n"
		    "TLBLAB build_host b-%.12s\nTLBLAB image_sha256 %s\nTLBLAB image %s\nTLBLAB arch %s\n"
		    "TLBLAB duration %.3f\nTLBLAB warnings 0\nTLBLAB cached %d\nTLBLAB status ok",
		    id, commit, config, out, id, id, image, a->image, a->name, secs, cached);
	for (char *p = line.buf, *nl; r == 0 && p < line.buf + line.len; p = nl + 1) {
		nl = strchrnul(p, '\n');
		*nl = '\0';
		r = emit(req, res, p);
	}
	res->status = 0;
done:
	strbuf_release(&key);
	strbuf_release(&text);
	strbuf_release(&line);
	return r;
}

/* An iteration line with its metrics times factor (and its own noise). */
static char *noisy(const char *line, double factor)
{
	json_t *o = json_loads(line, 0, NULL), *metrics, *v;
	const char *k;
	char *s;

	metrics = json_object_get(o, "metrics");
	if (!json_is_object(metrics)) {
		json_decref(o);
		return xstrdup(line);
	}
	json_object_foreach(metrics, k, v)
		if (json_is_number(v))
			json_object_set_new(metrics, k, json_real(json_number_value(v) * factor *
								  (1 + SIM_ITERATION_NOISE * sim_lab_gauss())));
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s ? s : xstrdup(line);
}

/* tlblab-agent run: the recorded lines, spread over a drawn run time */
static int sim_replay(struct transport *t, const struct exec_req *req, struct exec_result *res,
		      double deadline, struct strbuf *err)
{
	size_t i, n;
	const char *const *lines = sim_lab_replay(&n);
	double secs = sim_lab_draw(SIM_RUN), start = wall_now();
	double factor = 1 + SIM_BOOT_NOISE * sim_lab_gauss();
	int r = 0;

	for (i = 0; i < n && r == 0; i++) {
		/* not logged piece by piece: the whole run is one line */
		r = sim_lab_work(secs / (double)n, SIM_KIND_MAX, NULL, req->cancel, deadline);
		if (r < 0)
			return deadline_error(r, t, err);
		if (strstr(lines[i], "\"iteration\"")) {
			char *s = noisy(lines[i], factor);

			r = emit(req, res, s);
			free(s);
		} else {
			r = emit(req, res, lines[i]);
		}
	}
	if (r < 0)
		return deadline_error(r, t, err);
	/* the drawn time only: the lines' ingest between the pieces is the
	 * daemon's (on_line stores each), not the simulated machine's */
	sim_lab_log(start, start + secs, SIM_RUN, t->ep->host);
	res->status = 0;
	return 0;
}

static int sim_exec(struct transport *t, const struct exec_req *req, struct exec_result *res,
		    struct strbuf *err)
{
	const char *const *argv = req->argv;
	double deadline = req->timeout > 0 ? mono_now() + req->timeout : 0;
	const char *base;

	if (!argv || !argv[0]) {
		strbuf_seterr(err, "%s: no command", t->label);
		return -EINVAL;
	}
	res->status = 0;
	if (!strcmp(argv[0], "sh") && argv[1] && strcmp(argv[1], "-c") &&
	    (base = strrchr(argv[1], '/')) && !strcmp(base, "/build.sh"))
		return sim_build(t, req, res, deadline, err);
	if (!strcmp(argv[0], "sh") || !strcmp(argv[0], "rm"))
		return 0;
	if (!strcmp(argv[0], "cat") && argv[1]) {
		struct strbuf cmdline = STRBUF_INIT, version = STRBUF_INIT;

		if (sim_lab_kernel(t->ep->host, &cmdline, &version) < 0) {
			res->status = 1;
			strbuf_addf(&res->err, "cat: %s: no kernel booted on %s\n", argv[1], t->ep->host);
		} else if (!strcmp(argv[1], "/proc/cmdline")) {
			strbuf_addstr(&res->out, cmdline.buf);
		} else if (!strcmp(argv[1], "/proc/version")) {
			strbuf_addstr(&res->out, version.buf);
		} else {
			res->status = 1;
			strbuf_addf(&res->err, "cat: %s: not simulated\n", argv[1]);
		}
		strbuf_release(&cmdline);
		strbuf_release(&version);
		return 0;
	}
	if (argv[1] && !strcmp(argv[1], "hello"))
		return emit(req, res, sim_lab_hello());
	if (argv[1] && !strcmp(argv[1], "run"))
		return sim_replay(t, req, res, deadline, err);
	res->status = 127;
	strbuf_addf(&res->err, "sim: %s: not simulated\n", argv[0]);
	return 0;
}

static int sim_upload(struct transport *t, const char *local_path, const char *remote_path, int mode,
		      struct strbuf *err)
{
	(void)remote_path;
	(void)mode;
	if (access(local_path, R_OK) < 0) {
		int e = errno;

		strbuf_seterr(err, "%s: %s: %s", t->label, local_path, strerror(e));
		return -e;
	}
	return 0;
}

/* The artifacts of a simulated build (DIR/BUILD_ID/NAME): the image as
 * image_text says, the rest a line that says what they stand for. */
static int sim_download(struct transport *t, const char *remote_path, const char *local_path, size_t max,
			struct strbuf *err)
{
	const char *name = strrchr(remote_path, '/'), *id = name;
	struct strbuf text = STRBUF_INIT, build_id = STRBUF_INIT;
	int fd, r = 0;

	(void)max;
	while (id && id > remote_path && id[-1] != '/')
		id--;
	if (!name || id == name) {
		strbuf_seterr(err, "%s: %s: not a simulated build's file", t->label, remote_path);
		return -ENOENT;
	}
	strbuf_add(&build_id, id, (size_t)(name - id));
	name++;
	if (!strcmp(name, "bzImage") || !strcmp(name, "Image"))
		image_text(build_id.buf, &text);
	else
		strbuf_addf(&text, "tlblab-sim: %s of build %s (simulated)\n", name, build_id.buf);
	fd = open(local_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write_all(fd, text.buf, text.len) < 0) {
		strbuf_seterr(err, "%s: %s: %s", t->label, local_path, strerror(errno));
		r = -EIO;
	}
	if (fd >= 0)
		close(fd);
	strbuf_release(&text);
	strbuf_release(&build_id);
	return r;
}

static const struct transport_ops ops = { TRANSPORT_OPS(sim, "sim") };

static const char *const endpoint_keys[] = { "host", NULL };

static void check_endpoint(struct cfg_section *sec, const struct cfg_endpoint *ep)
{
	if (!ep->host && !settings_has(sec, "host"))
		settings_missing(sec, "host", " (required with transport sim: the name the simulation knows it by)");
}

static const struct backend transport_sim_backend = {
	.kind = BACKEND_TRANSPORT,
	.name = "sim",
	.what = "tests only (build/tlblabd-sim): answers the stages' commands after real stages' times, scaled",
	.endpoint_keys = endpoint_keys,
	.check_endpoint = check_endpoint,
	.ops = &ops,
};
BACKEND_REGISTER(transport_sim_backend)
