/*
 * Nightly tracking in the configuration: the notify: section (webhooks)
 * and the tracks: section (a branch followed on a schedule, the suite and
 * machines that measure each new head, and the change-point detector's
 * settings). A track names a tree, a suite and machines that must exist,
 * so it is parsed after them.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config_int.h"
#include "util.h"
#include "banned.h"

#define SECRET_FILE_MAX_BYTES 4096
#define MUST_HOOK_URL	"an http:// or https:// URL without spaces or control characters"
#define MUST_SECRET	"a secret of 16 to 4096 printable characters without spaces"
#define MUST_REF	"a git ref (a branch or tag name, or a commit id)"
#define MUST_BRANCH_URL	"a path or git URL without control characters, not starting with '-'"

static const char *const event_names[NOTIFY_EVENT_MAX] = { "change_point", "bisection", "job" };

const char *config_notify_event_name(int e)
{
	return e >= 0 && e < NOTIFY_EVENT_MAX ? event_names[e] : NULL;
}

static int valid_hook_url(const char *s)
{
	size_t i;

	if (strncmp(s, "http://", 7) && strncmp(s, "https://", 8))
		return 0;
	for (i = 0; s[i]; i++)
		if (i >= 2048 || (unsigned char)s[i] <= ' ' || s[i] == 0x7f)
			return 0;
	return 1;
}

static int valid_secret(const char *s)
{
	return config_valid_token(s);
}

static int valid_event(const char *s)
{
	int e;

	for (e = 0; e < NOTIFY_EVENT_MAX; e++)
		if (!strcmp(s, event_names[e]))
			return 1;
	return 0;
}

/* the secret in a file: one line, its trailing newline dropped */
static char *load_secret_file(struct cfg_ctx *c, yaml_node_t *n, const char *path)
{
	struct strbuf text = STRBUF_INIT;
	char why[128];
	int r;

	r = config_read_regular_file(path, &text, SECRET_FILE_MAX_BYTES);
	if (r < 0) {
		node_error(c, n, "secret_file: cannot read %s: %s", path,
			   config_read_error_text(r, SECRET_FILE_MAX_BYTES, why, sizeof(why)));
		strbuf_release(&text);
		return NULL;
	}
	while (text.len && (text.buf[text.len - 1] == '\n' || text.buf[text.len - 1] == '\r'))
		strbuf_setlen(&text, text.len - 1);
	if (!valid_secret(text.buf)) {
		node_error(c, n, "secret_file: %s must hold %s", path, MUST_SECRET);
		strbuf_release(&text);
		return NULL;
	}
	return strbuf_detach(&text, NULL);
}

static const char *const hook_keys[] = {
	"name", "url", "secret", "secret_file", "events", "max_attempts", "timeout", "retry", NULL
};
enum {
	HK_NAME, HK_URL, HK_SECRET, HK_SECRET_FILE, HK_EVENTS, HK_MAX_ATTEMPTS, HK_TIMEOUT, HK_RETRY, HK_MAX
};
KEYS_MATCH(hook_keys, HK_MAX);

void config_parse_hook(struct cfg_ctx *c, yaml_node_t *map, size_t index, json_t *seen, void *item)
{
	struct cfg_hook *h = item;
	struct cfg_item it;
	long v;

	h->max_attempts = 8;
	h->timeout = 10;
	h->retry = 10;
	h->events = (1u << NOTIFY_EVENT_MAX) - 1;
	h->name = config_item_start(c, map, "webhook", "notify", index, hook_keys, HK_NAME, seen, &it,
				    &h->line);
	if (it.ks.val[HK_URL])
		h->url = config_get_str(c, "url", it.ks.val[HK_URL], valid_hook_url, MUST_HOOK_URL);
	else
		config_missing_key(c, map, "url", it.what, " (where deliveries are POSTed)");
	if (it.ks.val[HK_SECRET] && it.ks.val[HK_SECRET_FILE])
		node_error(c, it.ks.val[HK_SECRET_FILE], "secret_file: %s has secret already; give one "
			   "of the two", it.what);
	else if (it.ks.val[HK_SECRET])
		h->secret = config_get_str(c, "secret", it.ks.val[HK_SECRET], valid_secret, MUST_SECRET);
	else if (it.ks.val[HK_SECRET_FILE]) {
		h->secret_file = config_get_str(c, "secret_file", it.ks.val[HK_SECRET_FILE],
						config_valid_path, MUST_PATH);
		if (h->secret_file)
			h->secret = load_secret_file(c, it.ks.val[HK_SECRET_FILE], h->secret_file);
	}
	if (it.ks.val[HK_EVENTS]) {
		size_t n = 0, i;
		char **ev = config_get_list(c, "events", it.ks.val[HK_EVENTS], valid_event,
					    "change_point, bisection or job", &n);

		h->events = 0;
		for (i = 0; ev && i < n; i++) {
			int e;

			for (e = 0; e < NOTIFY_EVENT_MAX; e++)
				if (!strcmp(ev[i], event_names[e]))
					h->events |= 1u << e;
		}
		if (ev && !n)
			node_error(c, it.ks.val[HK_EVENTS], "events: %s has no events; leave the key out "
				   "for all of them", it.what);
		config_strv_free(ev);
	}
	if (it.ks.val[HK_MAX_ATTEMPTS] &&
	    config_get_int(c, "max_attempts", it.ks.val[HK_MAX_ATTEMPTS], 1, 50, &v) == 0)
		h->max_attempts = (int)v;
	if (it.ks.val[HK_TIMEOUT])
		config_get_seconds(c, "timeout", it.ks.val[HK_TIMEOUT], &h->timeout);
	if (it.ks.val[HK_RETRY])
		config_get_seconds(c, "retry", it.ks.val[HK_RETRY], &h->retry);
}

void config_hook_release(struct cfg_hook *h)
{
	free(h->name);
	free(h->url);
	free(h->secret);
	free(h->secret_file);
}

static const char *const detect_keys[] = {
	"window", "max_p", "min_change", "confirm_after", NULL
};
enum { DK_WINDOW, DK_MAX_P, DK_MIN_CHANGE, DK_CONFIRM_AFTER, DK_MAX };
KEYS_MATCH(detect_keys, DK_MAX);

static void parse_detect(struct cfg_ctx *c, yaml_node_t *n, struct cfg_track *t, const char *what)
{
	struct keyset ks;
	char label[128];
	long v;

	if (!config_is_mapping(n)) {
		node_error(c, n, "detect: must be a mapping (window, max_p, min_change, confirm_after)");
		return;
	}
	snprintf(label, sizeof(label), "the detect section of %.100s", what);
	config_map_keys(c, n, detect_keys, label, "key", &ks);
	if (ks.val[DK_WINDOW] && config_get_int(c, "window", ks.val[DK_WINDOW], 2 * (long)t->detect.min_segment,
						CHANGEPOINT_WINDOW_MAX, &v) == 0)
		t->detect.window = (size_t)v;
	if (ks.val[DK_MAX_P] && config_get_alpha(c, "max_p", ks.val[DK_MAX_P], &t->detect.max_p) == 0) {
		if (t->detect.max_p < 1e-4) {
			node_error(c, ks.val[DK_MAX_P], "max_p: at least 0.0001 (a smaller one takes "
				   "more shuffles than a night has time for)");
			t->detect.max_p = 1e-4;
		}
		/* enough shuffles for the smallest p to be half of max_p */
		if (t->detect.max_p * (t->detect.permutations + 1) < 2)
			t->detect.permutations = (int)(2 / t->detect.max_p + 0.5) - 1;
	}
	if (ks.val[DK_MIN_CHANGE])
		config_get_fraction(c, "min_change", ks.val[DK_MIN_CHANGE], &t->detect.min_magnitude);
	if (ks.val[DK_CONFIRM_AFTER] &&
	    config_get_int(c, "confirm_after", ks.val[DK_CONFIRM_AFTER], 1, 100, &v) == 0)
		t->confirm_after = (int)v;
}

static const char *const track_keys[] = {
	"name", "tree", "branch", "url", "schedule", "suite", "machines", "boots", "bisect", "detect",
	NULL
};
enum {
	TRK_NAME, TRK_TREE, TRK_BRANCH, TRK_URL, TRK_SCHEDULE, TRK_SUITE, TRK_MACHINES, TRK_BOOTS,
	TRK_BISECT, TRK_DETECT, TRK_MAX
};
KEYS_MATCH(track_keys, TRK_MAX);

static int valid_ref(const char *s)
{
	return ref_valid(s);
}

static int valid_schedule_text(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (i >= 256 || (unsigned char)s[i] < ' ' || s[i] == 0x7f)
			return 0;
	return i > 0;
}

/* the value of a required key that names something configured */
static char *named(struct cfg_ctx *c, struct cfg_item *it, yaml_node_t *map, int k, const char *key,
		   const char *why, int (*exists)(const struct lab_config *, const char *))
{
	char *name;

	if (!it->ks.val[k]) {
		config_missing_key(c, map, key, it->what, why);
		return NULL;
	}
	name = config_get_str(c, key, it->ks.val[k], config_valid_name, MUST_NAME);
	if (name && !exists(c->cfg, name))
		node_error(c, it->ks.val[k], "%s: no %s named '%s'", key, key, name);
	return name;
}

static int tree_exists(const struct lab_config *cfg, const char *name)
{
	return config_tree(cfg, name) != NULL;
}

static int suite_exists(const struct lab_config *cfg, const char *name)
{
	return config_suite(cfg, name) != NULL;
}

void config_parse_track(struct cfg_ctx *c, yaml_node_t *map, size_t index, json_t *seen, void *item)
{
	struct cfg_track *t = item;
	struct cfg_item it;
	size_t i;
	long v;

	t->boots = 3;
	t->bisect = 1;
	t->confirm_after = 6;
	changepoint_opts_init(&t->detect);
	t->name = config_item_start(c, map, "track", "tracks", index, track_keys, TRK_NAME, seen, &it,
				    &t->line);
	t->tree = named(c, &it, map, TRK_TREE, "tree", " (the tree whose branch is followed)",
			tree_exists);
	t->suite = named(c, &it, map, TRK_SUITE, "suite", " (what each new head runs)", suite_exists);
	if (it.ks.val[TRK_BRANCH])
		t->branch = config_get_str(c, "branch", it.ks.val[TRK_BRANCH], valid_ref, MUST_REF);
	else
		config_missing_key(c, map, "branch", it.what, " (the ref to follow, e.g. master)");
	if (it.ks.val[TRK_URL])
		t->url = config_get_str(c, "url", it.ks.val[TRK_URL], config_valid_path, MUST_BRANCH_URL);
	if (it.ks.val[TRK_SCHEDULE]) {
		t->schedule = config_get_str(c, "schedule", it.ks.val[TRK_SCHEDULE], valid_schedule_text,
					     "a cron expression");
		if (t->schedule) {
			struct strbuf why = STRBUF_INIT;

			time_t next;

			if (cron_parse(t->schedule, &t->cron, &why) < 0)
				node_error(c, it.ks.val[TRK_SCHEDULE], "schedule: %s", why.buf);
			else if (cron_next(&t->cron, time(NULL), &next) < 0)
				node_error(c, it.ks.val[TRK_SCHEDULE], "schedule: \"%s\" is never due (not "
					   "within 5 years)", t->schedule);
			strbuf_release(&why);
		}
	} else {
		config_missing_key(c, map, "schedule", it.what, " (a cron expression, e.g. \"0 2 * * *\")");
	}
	if (it.ks.val[TRK_MACHINES]) {
		t->machines = config_get_list(c, "machines", it.ks.val[TRK_MACHINES], config_valid_name,
					      MUST_NAME, &t->nmachines);
		for (i = 0; i < t->nmachines; i++)
			if (!config_machine(c->cfg, t->machines[i]))
				node_error(c, it.ks.val[TRK_MACHINES], "machines: no machine named '%s'",
					   t->machines[i]);
		if (t->machines && !t->nmachines)
			node_error(c, it.ks.val[TRK_MACHINES], "machines: %s needs at least one", it.what);
	} else {
		config_missing_key(c, map, "machines", it.what, " (where each new head is measured)");
	}
	if (!t->machines)
		t->machines = xcalloc(1, sizeof(*t->machines));
	if (it.ks.val[TRK_BOOTS] && config_get_int(c, "boots", it.ks.val[TRK_BOOTS], 1, 20, &v) == 0)
		t->boots = (int)v;
	if (it.ks.val[TRK_BISECT])
		config_get_bool(c, "bisect", it.ks.val[TRK_BISECT], &t->bisect);
	if (it.ks.val[TRK_DETECT])
		parse_detect(c, it.ks.val[TRK_DETECT], t, it.what);
}

void config_track_release(struct cfg_track *t)
{
	free(t->name);
	free(t->tree);
	free(t->branch);
	free(t->url);
	free(t->schedule);
	free(t->suite);
	config_strv_free(t->machines);
}
