/*
 * `tlblab status` and the words the other commands share about a job: the
 * name of a stage, whose failure an error is, and what became of each spec
 * of a run stage. A run stage keeps going when one spec fails (the others
 * still run and their numbers count), so a job can end done with a spec that
 * failed, and an A/B job repeats a boot whose run failed: the stage list
 * alone no longer says what ran. The spec lines do.
 *
 * Fields a daemon does not send (an older one has no "specs", "repeat_of"
 * or "note") are simply not shown. Every server string goes through
 * client_fmt_clean or the table's cleaning before it reaches the terminal.
 */
#include "client.h"

#include <limits.h>
#include <string.h>

#include "util.h"
#include "banned.h"

/* A spec's failure message can carry console lines: enough of it to act
 * on, --json has the rest. */
#define SPEC_MESSAGE_MAX 400

int client_job_is_final(const char *state)
{
	return state && (!strcmp(state, "done") || !strcmp(state, "failed") ||
			 !strcmp(state, "cancelled"));
}

void client_stage_name(struct strbuf *sb, const json_t *st)
{
	const char *kind = client_jstr_or(st, "kind", "stage"), *side = jsonget_str(st, "side");
	const char *where = client_jstr_or(st, "machine", jsonget_str(st, "host"));
	long long boot;

	strbuf_addstr(sb, kind);
	/* people count boots from 1; only a side's stages are numbered, a plain
	 * run job's stages differ by machine */
	if (side && *side) {
		strbuf_addf(sb, " %s", side);
		if (strcmp(kind, "build") && jsonget_int(st, "boot_index", &boot) == 0 &&
		    boot >= 0 && boot < LLONG_MAX)
			strbuf_addf(sb, " #%lld", boot + 1);
	}
	if (where && *where)
		strbuf_addf(sb, " on %s", where);
}

/* The stage of job whose "id" is stage_id, or NULL. */
static const json_t *job_find_stage(const json_t *job, long long stage_id)
{
	size_t i;
	json_t *st;
	long long v;

	json_array_foreach(json_object_get(job, "stages"), i, st)
		if (jsonget_int(st, "id", &v) == 0 && v == stage_id)
			return st;
	return NULL;
}

/*
 * Only infra is the lab's; a patch that does not apply, a kernel that does
 * not build or boot, a workload that fails on it are what the job found
 * out, and saying so keeps people from resubmitting in the hope that it was
 * the lab. A suite that fails on the base kernel too is neither the patch's
 * nor the lab's.
 */
const char *client_job_error_blame(const json_t *job)
{
	static const char *const result_classes[] = { "patch", "build", "boot", "workload" };
	const json_t *e = json_object_get(job, "error"), *st;
	const char *class = jsonget_str(e, "class"), *kind = jsonget_str(job, "kind");
	long long sid;
	size_t i;

	if (!class)
		return NULL;
	if (!strcmp(class, "suite"))
		return "the suite fails on the base kernel too: a problem of the suite on this "
		       "tree, not of the patch or the lab";
	for (i = 0; i < ARRAY_SIZE(result_classes); i++)
		if (!strcmp(class, result_classes[i]))
			break;
	if (i == ARRAY_SIZE(result_classes))
		return NULL;
	if (!kind || strcmp(kind, "ab"))
		return "a result of the kernel or workload under test, not a lab problem";
	st = jsonget_int(e, "stage", &sid) == 0 ? job_find_stage(job, sid) : NULL;
	if (strcmp(class, "patch") && st && jsonget_str(st, "side") && !strcmp(jsonget_str(st, "side"), "base"))
		return "a result of the base kernel, not of the patch or the lab";
	return "a result of the patch, not a lab problem";
}

void client_job_outcome(struct strbuf *sb, const json_t *job)
{
	const json_t *e = json_object_get(job, "error");
	const char *state = client_jstr_or(job, "state", "unknown");
	char clean[512];

	strbuf_addstr(sb, client_fmt_clean(clean, sizeof(clean), state));
	if (json_is_object(e) && strcmp(state, "done")) {
		const char *class = client_jstr_or(e, "class", "error");

		/* "cancelled: cancelled: ..." says nothing twice */
		if (strcmp(class, state))
			strbuf_addf(sb, ": %s", client_fmt_clean(clean, sizeof(clean), class));
		if (jsonget_str(e, "message"))
			strbuf_addf(sb, ": %s", client_fmt_clean(clean, sizeof(clean), jsonget_str(e, "message")));
		if (client_job_error_blame(job))
			strbuf_addf(sb, " (%s)", client_job_error_blame(job));
	}
}

/* Adds the stage's specs to c (absent "specs" adds nothing). */
static void stage_spec_counts(const json_t *st, struct spec_counts *c)
{
	size_t i;
	json_t *sp;

	json_array_foreach(json_object_get(st, "specs"), i, sp) {
		const char *state = client_jstr_or(sp, "state", "");

		if (!strcmp(state, "done") || !strcmp(state, "failed"))
			c->ran++;
		if (!strcmp(state, "failed"))
			c->failed++;
		else if (!strcmp(state, "not_run"))
			c->not_run++;
	}
}

/* "2 ran, 1 failed, 1 not run" */
static void add_counts(struct strbuf *sb, const struct spec_counts *c)
{
	strbuf_addf(sb, "%zu ran", c->ran);
	if (c->failed)
		strbuf_addf(sb, ", %zu failed", c->failed);
	if (c->not_run)
		strbuf_addf(sb, ", %zu not run", c->not_run);
}

/* "spec 1 mremap workers=2" */
static void add_spec_label(struct strbuf *sb, const json_t *sp)
{
	const char *workload = jsonget_str(sp, "workload");
	long long n;

	strbuf_addstr(sb, "spec ");
	if (jsonget_int(sp, "spec", &n) == 0)
		strbuf_addf(sb, "%lld", n);
	else
		strbuf_addch(sb, '?');
	if (workload)
		strbuf_addf(sb, " %s", workload);
	if (json_object_size(json_object_get(sp, "params"))) {
		strbuf_addch(sb, ' ');
		client_add_params(sb, json_object_get(sp, "params"), "workload");
	}
}

size_t client_stage_spec_problems_print(FILE *out, const json_t *st, const char *indent)
{
	char clean[SPEC_MESSAGE_MAX + 64];
	size_t i, n = 0;
	json_t *sp;

	json_array_foreach(json_object_get(st, "specs"), i, sp) {
		const char *state = client_jstr_or(sp, "state", "unknown"), *class = jsonget_str(sp, "class");
		struct strbuf line = STRBUF_INIT;

		if (!strcmp(state, "done"))
			continue;
		add_spec_label(&line, sp);
		strbuf_addf(&line, ": %s", !strcmp(state, "not_run") ? "not run" : state);
		if (class && *class)
			strbuf_addf(&line, " (%s)", class);
		if (jsonget_str(sp, "message") && *jsonget_str(sp, "message"))
			strbuf_addf(&line, ": %s", jsonget_str(sp, "message"));
		fprintf(out, "%s%s\n", indent, client_fmt_clean(clean, sizeof(clean), line.buf));
		strbuf_release(&line);
		n++;
	}
	return n;
}

static void print_field(FILE *out, const char *name, const char *value)
{
	char clean[1024];

	fprintf(out, "%-10s %s\n", name, client_fmt_clean(clean, sizeof(clean), value && *value ? value : "-"));
}

/* An mbox's series, as git am applies it:
 *	series     3 patches, after a cover letter
 *	  1/3      mm: one
 */
static void print_series(FILE *out, const json_t *series)
{
	const json_t *list = json_object_get(series, "patches");
	char clean[512], n[48];
	size_t i, count = json_array_size(list);
	json_t *p;

	if (!count)
		return;
	fprintf(out, "%-10s %zu patch%s%s\n", "series", count, count == 1 ? "" : "es",
		json_is_string(json_object_get(series, "cover")) ? ", after a cover letter" : "");
	json_array_foreach(list, i, p) {
		snprintf(n, sizeof(n), "%zu/%zu", i + 1, count);
		fprintf(out, "  %-8s %s\n", n, client_fmt_clean(clean, sizeof(clean), json_string_value(p) ?: "?"));
	}
}

/* "branch https://git.example.org/linux.git tlb-fix", "url https://lore...",
 * "patch": where the patched side came from, as the job says it. */
static void add_source(struct strbuf *sb, const json_t *job)
{
	const char *kind = jsonget_str(job, "patch_kind"), *url = jsonget_str(job, "patch_url");

	if (!kind || !*kind)
		return;
	strbuf_addstr(sb, kind);
	if (url && *url)
		strbuf_addf(sb, " %s", url);
	if (jsonget_str(job, "patch_ref") && *jsonget_str(job, "patch_ref"))
		strbuf_addf(sb, " %s", jsonget_str(job, "patch_ref"));
}

/* A cancel reaches a running stage on the scheduler's next pass; until
 * then the job is still running, and saying so avoids a second cancel. */
void client_job_state_text(struct strbuf *sb, const json_t *job)
{
	const char *state = client_jstr_or(job, "state", "unknown");

	strbuf_addstr(sb, state);
	if (json_is_true(json_object_get(job, "cancel_requested")) && !client_job_is_final(state))
		strbuf_addstr(sb, ", cancel requested");
}

/* The column of a stage table whose columns are picked per job. */
enum stage_col {
	COL_SEQ, COL_KIND, COL_SIDE, COL_BOOT, COL_MACHINE, COL_STATE, COL_ATTEMPT,
	COL_STARTED, COL_DURATION, COL_BUILD, COL_REPEATS, COL_ERROR, COL_MAX
};

static void print_stages(FILE *out, const json_t *stages)
{
	static const char *const all_heads[COL_MAX] = {
		"SEQ", "KIND", "SIDE", "BOOT", "MACHINE", "STATE", "ATTEMPT", "STARTED",
		"DURATION", "BUILD", "REPEATS", "ERROR",
	};
	static const char all_align[COL_MAX + 1] = "rllrllrlrlrl";
	const char *heads[COL_MAX];
	char align[COL_MAX + 1];
	int show[COL_MAX];
	size_t i, k, ncols = 0;
	struct table tab;
	json_t *st;

	/* BOOT, BUILD and REPEATS only for jobs that have them (A/B), so a
	 * plain run job's table stays narrow */
	for (k = 0; k < COL_MAX; k++)
		show[k] = k != COL_BOOT && k != COL_BUILD && k != COL_REPEATS;
	json_array_foreach(stages, i, st) {
		long long v;

		if (jsonget_str(st, "side") && jsonget_int(st, "boot_index", &v) == 0)
			show[COL_BOOT] = 1;
		if (jsonget_str(st, "build_id") && *jsonget_str(st, "build_id"))
			show[COL_BUILD] = 1;
		if (jsonget_int(st, "repeat_of", &v) == 0)
			show[COL_REPEATS] = 1;
	}
	for (k = 0; k < COL_MAX; k++)
		if (show[k]) {
			heads[ncols] = all_heads[k];
			align[ncols++] = all_align[k];
		}
	align[ncols] = '\0';

	client_table_init(&tab, ncols, heads, align);
	json_array_foreach(stages, i, st) {
		char seq[FMT_SIZE], att[FMT_SIZE] = "-", started[FMT_SIZE], dur[FMT_SIZE];
		char boot[FMT_SIZE] = "", rep[FMT_SIZE];
		struct strbuf error = STRBUF_INIT;
		const char *cells[COL_MAX], *row[COL_MAX];
		long long b;

		if (jsonget_str(st, "error_class") || jsonget_str(st, "error_message"))
			strbuf_addf(&error, "%s: %s", client_jstr_or(st, "error_class", "error"),
				    client_jstr_or(st, "error_message", ""));
		else if (jsonget_str(st, "note") && *jsonget_str(st, "note"))
			strbuf_addf(&error, "(%s)", jsonget_str(st, "note"));
		if (jsonget_str(st, "side") && strcmp(client_jstr_or(st, "kind", ""), "build") &&
		    jsonget_int(st, "boot_index", &b) == 0 && b >= 0 && b < LLONG_MAX)
			snprintf(boot, sizeof(boot), "#%lld", b + 1);
		/* the API counts attempts from 0, people from 1 */
		if (jsonget_int(st, "attempt", &b) == 0 && b >= 0 && b < LLONG_MAX)
			snprintf(att, sizeof(att), "%lld", b + 1);
		cells[COL_SEQ] = client_fmt_id(seq, st, "seq");
		cells[COL_KIND] = jsonget_str(st, "kind");
		cells[COL_SIDE] = jsonget_str(st, "side");
		cells[COL_BOOT] = boot;
		cells[COL_MACHINE] = client_jstr_or(st, "machine", jsonget_str(st, "host"));
		cells[COL_STATE] = jsonget_str(st, "state");
		cells[COL_ATTEMPT] = att;
		cells[COL_STARTED] = client_fmt_time(started, st, "started");
		cells[COL_DURATION] = client_fmt_span(dur, st);
		cells[COL_BUILD] = jsonget_str(st, "build_id");
		cells[COL_REPEATS] = jsonget_int(st, "repeat_of", &b) == 0 ? client_fmt_id(rep, st, "repeat_of") : NULL;
		cells[COL_ERROR] = error.buf;
		for (k = 0, ncols = 0; k < COL_MAX; k++)
			if (show[k])
				row[ncols++] = cells[k];
		client_table_add_row(&tab, row);
		strbuf_release(&error);
	}
	fputc('\n', out);
	client_table_print(&tab, out, NULL);
	client_table_release(&tab);
}

/*
 * One line per run stage that reported its specs: how many ran, and the
 * workloads when all went well; then a line per spec that failed or did
 * not run, with its class and message.
 */
static void print_specs(FILE *out, const json_t *stages)
{
	char clean[1024];
	size_t i, j;
	json_t *st, *sp;
	int header = 0;

	json_array_foreach(stages, i, st) {
		struct spec_counts c = { 0, 0, 0 };
		struct strbuf line = STRBUF_INIT;
		long long v;

		if (!json_array_size(json_object_get(st, "specs")))
			continue;
		if (!header) {
			fprintf(out, "\nspecs of the run stages\n");
			header = 1;
		}
		stage_spec_counts(st, &c);
		if (jsonget_int(st, "seq", &v) == 0)
			strbuf_addf(&line, "seq %lld ", v);
		client_stage_name(&line, st);
		if (jsonget_int(st, "repeat_of", &v) == 0)
			strbuf_addf(&line, " (repeats seq %lld)", v);
		strbuf_addstr(&line, ": ");
		add_counts(&line, &c);
		if (!c.failed && !c.not_run) {
			strbuf_addstr(&line, " (");
			json_array_foreach(json_object_get(st, "specs"), j, sp) {
				long long n;

				if (j)
					strbuf_addstr(&line, ", ");
				if (jsonget_int(sp, "spec", &n) == 0)
					strbuf_addf(&line, "%lld ", n);
				strbuf_addstr(&line, client_jstr_or(sp, "workload", "?"));
			}
			strbuf_addch(&line, ')');
		}
		fprintf(out, "  %s\n", client_fmt_clean(clean, sizeof(clean), line.buf));
		client_stage_spec_problems_print(out, st, "    ");
		strbuf_release(&line);
	}
}

void client_status_print(FILE *out, long long id, const json_t *job)
{
	const json_t *e = json_object_get(job, "error"), *stages = json_object_get(job, "stages");
	struct strbuf sb = STRBUF_INIT;
	struct spec_counts c = { 0, 0, 0 };
	char kind[64], clean[256], t[FMT_SIZE];
	size_t i, nreported = 0;
	json_t *st;

	client_job_state_text(&sb, job);
	fprintf(out, "job %lld: %s (%s)\n", id, client_fmt_clean(clean, sizeof(clean), sb.buf),
		client_fmt_clean(kind, sizeof(kind), client_jstr_or(job, "kind", "run")));
	strbuf_reset(&sb);
	print_field(out, "suite", jsonget_str(job, "suite"));
	if (jsonget_str(job, "tree") || jsonget_str(job, "base")) {
		print_field(out, "tree", jsonget_str(job, "tree"));
		print_field(out, "base", jsonget_str(job, "base"));
		if (jsonget_str(job, "patch_subject"))
			print_field(out, "patch", jsonget_str(job, "patch_subject"));
		add_source(&sb, job);
		if (sb.len)
			print_field(out, "source", sb.buf);
		strbuf_reset(&sb);
		print_series(out, json_object_get(job, "patches"));
	}
	client_join_defaults(&sb, json_object_get(job, "defaults"));
	if (sb.len)
		print_field(out, "defaults", sb.buf);	/* what it took from the lab's */
	strbuf_reset(&sb);
	client_join_strings(&sb, json_object_get(job, "machines"), ", ");
	print_field(out, "machines", sb.buf);
	strbuf_reset(&sb);
	client_join_strings(&sb, json_object_get(job, "tags"), ", ");
	print_field(out, "tags", sb.buf);
	if (jsonget_str(job, "arch"))
		print_field(out, "arch", jsonget_str(job, "arch"));
	print_field(out, "submitter", jsonget_str(job, "submitter"));
	print_field(out, "created", client_fmt_time(t, job, "created"));
	print_field(out, "started", client_fmt_time(t, job, "started"));
	print_field(out, "finished", client_fmt_time(t, job, "finished"));
	print_field(out, "duration", client_fmt_span(t, job));
	if (jsonget_str(job, "verdict"))
		print_field(out, "verdict", jsonget_str(job, "verdict"));
	if (json_is_object(e)) {
		const json_t *es = NULL;
		long long sid, seq;

		strbuf_reset(&sb);
		strbuf_addf(&sb, "%s: %s", client_jstr_or(e, "class", "error"), client_jstr_or(e, "message", ""));
		/* the error names the stage by id; the table shows seq */
		if (jsonget_int(e, "stage", &sid) == 0) {
			if ((es = job_find_stage(job, sid))) {
				strbuf_addstr(&sb, " (");
				client_stage_name(&sb, es);
				if (jsonget_int(es, "seq", &seq) == 0)
					strbuf_addf(&sb, ", seq %lld", seq);
				strbuf_addch(&sb, ')');
			} else {
				strbuf_addf(&sb, " (stage id %lld)", sid);
			}
		} else if (jsonget_str(e, "stage")) {
			strbuf_addf(&sb, " (%s stage)", jsonget_str(e, "stage"));
		}
		print_field(out, "error", sb.buf);
		if (client_job_error_blame(job))
			print_field(out, "", client_job_error_blame(job));
	}
	json_array_foreach(stages, i, st)
		if (json_array_size(json_object_get(st, "specs"))) {
			stage_spec_counts(st, &c);
			nreported++;
		}
	if (nreported) {
		strbuf_reset(&sb);
		add_counts(&sb, &c);
		strbuf_addf(&sb, " (over %zu run stage%s)", nreported, nreported == 1 ? "" : "s");
		print_field(out, "specs", sb.buf);
	}
	strbuf_release(&sb);

	if (!json_array_size(stages)) {
		fprintf(out, "\nno stages yet\n");
		return;
	}
	print_stages(out, stages);
	print_specs(out, stages);
}
