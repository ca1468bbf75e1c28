#include "kfunc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"
#include "banned.h"

#define TRACEFS "/sys/kernel/tracing"
#define DEBUGFS_TRACING "/sys/kernel/debug/tracing"
#define STAT_MAX (4u << 20)
#define FILTER_MAX (1u << 20)
#define MAX_CPUS_STAT 8192
/* trace_stat prints a symbol in a 30-character column */
#define STAT_NAME_WIDTH 30

const char *const kfunc_default_names[] = {
	"switch_mm_irqs_off", "flush_tlb_mm_range", "native_flush_tlb_multi", "flush_tlb_func", NULL,
};

struct kfunc {
	char dir[64];
	struct strbuf old_filter;	/* what set_ftrace_filter held */
	int graph_time_was_on;
	json_t *missing;
};

static int path_of(const struct kfunc *k, const char *name, char *buf, size_t len)
{
	return snprintf(buf, len, "%s/%s", k->dir, name) < (int)len ? 0 : -1;
}

static int write_file(const char *path, const char *text, int flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags), rc = 0;
	size_t len = strlen(text);

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		rc = -errno ? -errno : -EIO;
	close(fd);
	return rc;
}

static int kwrite(const struct kfunc *k, const char *name, const char *text, int flags)
{
	char path[128];

	if (path_of(k, name, path, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	return write_file(path, text, flags);
}

static int kread(const struct kfunc *k, const char *name, struct strbuf *out, size_t max)
{
	char path[128];

	if (path_of(k, name, path, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	return strbuf_read_file(out, path, max);
}

/* Where tracefs is, mounting it when the kernel has it but nobody mounted it. */
static int find_tracefs(struct kfunc *k, struct strbuf *err)
{
	static const char *const dirs[] = { TRACEFS, DEBUGFS_TRACING };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		char probe[128];

		snprintf(probe, sizeof(probe), "%s/available_tracers", dirs[i]);
		if (access(probe, R_OK) == 0) {
			snprintf(k->dir, sizeof(k->dir), "%s", dirs[i]);
			return 0;
		}
	}
	if (mount("nodev", TRACEFS, "tracefs", 0, NULL) == 0 && access(TRACEFS "/available_tracers", R_OK) == 0) {
		snprintf(k->dir, sizeof(k->dir), "%s", TRACEFS);
		return 0;
	}
	return strbuf_seterr(err, "no tracefs (%s: %s; the kernel needs CONFIG_FTRACE, and the agent root)",
			     TRACEFS, strerror(errno));
}

/* Puts back what kfunc_start changed. */
static void restore(struct kfunc *k)
{
	const char *p = k->old_filter.buf;

	kwrite(k, "function_profile_enabled", "0", 0);
	kwrite(k, "set_ftrace_filter", "", O_TRUNC);
	/* the old filter, a line at a time (the "all functions" banner is no filter) */
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);

		if (n && *p != '#') {
			char line[512];

			snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) - 1 ? n : sizeof(line) - 1), p);
			kwrite(k, "set_ftrace_filter", line, O_APPEND);
		}
		p += n + (eol ? 1 : 0);
	}
	if (k->graph_time_was_on)
		kwrite(k, "options/graph-time", "1", 0);
}

static void kfunc_free(struct kfunc *k)
{
	strbuf_release(&k->old_filter);
	json_decref(k->missing);
	free(k);
}

struct kfunc *kfunc_start(const char *const *names, struct strbuf *err)
{
	struct kfunc *k = xcalloc(1, sizeof(*k));
	struct strbuf sb = STRBUF_INIT;
	size_t i, traced = 0;
	char probe[128];
	int rc;

	strbuf_init(&k->old_filter, 0);
	k->missing = json_array();
	if (find_tracefs(k, err) < 0)
		goto fail;
	path_of(k, "function_profile_enabled", probe, sizeof(probe));
	if (access(probe, W_OK) < 0) {
		strbuf_seterr(err, "the kernel has no function profiler (%s: %s; CONFIG_FUNCTION_PROFILER)", probe,
			      strerror(errno));
		goto fail;
	}
	if (kread(k, "options/graph-time", &sb, 64) < 0) {
		strbuf_seterr(err, "the kernel's function profiler cannot time functions "
			      "(no options/graph-time: CONFIG_FUNCTION_GRAPH_TRACER)");
		goto fail;
	}
	k->graph_time_was_on = sb.buf[0] == '1';
	if (kread(k, "set_ftrace_filter", &k->old_filter, FILTER_MAX) < 0) {
		strbuf_seterr(err, "cannot read %s/set_ftrace_filter", k->dir);
		goto fail;
	}
	if ((rc = kwrite(k, "set_ftrace_filter", "", O_TRUNC)) < 0) {
		strbuf_seterr(err, "cannot write %s/set_ftrace_filter: %s", k->dir, strerror(-rc));
		goto fail;
	}
	/* one name a write: the kernel refuses a name it cannot trace */
	for (i = 0; names[i]; i++) {
		if (kwrite(k, "set_ftrace_filter", names[i], O_APPEND) == 0)
			traced++;
		else
			json_array_append_new(k->missing, json_string(names[i]));
	}
	/* an empty filter would trace every function of the kernel */
	strbuf_reset(&sb);
	if (!traced || kread(k, "set_ftrace_filter", &sb, FILTER_MAX) < 0 || !sb.len || sb.buf[0] == '#') {
		strbuf_seterr(err, "none of the functions to time can be traced on this kernel");
		restore(k);
		goto fail;
	}
	/* own time only: a function's children are other rows. graph-time is
	 * the function_graph tracer's option: through its own file, since
	 * trace_options takes only the current tracer's */
	if ((rc = kwrite(k, "options/graph-time", "0", 0)) < 0) {
		strbuf_seterr(err, "cannot turn off %s/options/graph-time: %s", k->dir, strerror(-rc));
		restore(k);
		goto fail;
	}
	if ((rc = kwrite(k, "function_profile_enabled", "1", 0)) < 0) {
		strbuf_seterr(err, "cannot start the function profiler in %s: %s", k->dir, strerror(-rc));
		restore(k);
		goto fail;
	}
	strbuf_release(&sb);
	return k;
fail:
	strbuf_release(&sb);
	kfunc_free(k);
	return NULL;
}

int kfunc_parse_stat(const char *text, json_t *sums)
{
	const char *line = text;
	int header = 0;

	while (*line) {
		const char *eol = strchr(line, '\n');
		size_t n = eol ? (size_t)(eol - line) : strlen(line);
		char name[64], unit[8];
		unsigned long long hits;
		double us;

		if (n < 512) {
			char buf[512];

			memcpy(buf, line, n);
			buf[n] = 0;
			if (strstr(buf, "Function") && strstr(buf, "Hit"))
				header = 1;
			else if (sscanf(buf, " %63s %llu %lf %7s", name, &hits, &us, unit) == 4 &&
				 !strcmp(unit, "us") && us >= 0) {
				json_t *e = json_object_get(sums, name);

				if (!e) {
					e = json_pack("[I,f]", (json_int_t)0, 0.0);
					json_object_set_new(sums, name, e);
				}
				json_array_set_new(e, 0, json_integer(json_integer_value(json_array_get(e, 0)) +
								       (json_int_t)hits));
				json_array_set_new(e, 1, json_real(json_number_value(json_array_get(e, 1)) +
								   us * 1000.0));
			}
		}
		line += n + (eol ? 1 : 0);
	}
	return header ? 0 : -1;
}

json_t *kfunc_stop(struct kfunc *k, struct strbuf *err)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *sums, *fns, *out = NULL, *v;
	const char *name;
	int cpu, files = 0;

	if (!k)
		return NULL;
	sums = json_object();
	kwrite(k, "function_profile_enabled", "0", 0);
	for (cpu = 0; cpu < MAX_CPUS_STAT; cpu++) {
		char file[64];

		snprintf(file, sizeof(file), "trace_stat/function%d", cpu);
		strbuf_reset(&sb);
		/* one file per possible CPU, numbered from 0 */
		if (kread(k, file, &sb, STAT_MAX) < 0)
			break;
		if (kfunc_parse_stat(sb.buf, sums) == 0)
			files++;
	}
	restore(k);
	if (!files) {
		strbuf_seterr(err, "the function profiler left no statistics in %s/trace_stat", k->dir);
		goto out;
	}
	fns = json_array();
	json_object_foreach(sums, name, v)
		json_array_append_new(fns, json_pack("{s:s,s:O,s:O}", "symbol", name, "calls",
						     json_array_get(v, 0), "self_ns", json_array_get(v, 1)));
	out = json_pack("{s:o,s:O}", "functions", fns, "missing", k->missing);
out:
	json_decref(sums);
	strbuf_release(&sb);
	kfunc_free(k);
	return out;
}
