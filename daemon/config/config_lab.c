/*
 * The lab: section, the daemon's own settings: data directory, listen
 * address, API tokens (inline and from a token file; the example token is
 * refused), allowed Host names, limits and timeouts.
 *
 * Each setting is one row of settings[] below (name, type, where it lands,
 * default, bounds, what it is), as Redis' config.c declares its options:
 * the defaults config_load_string() starts from, the parser of this
 * section, `tlblabd -n` (the values in force) and `tlblabd -S` (the
 * reference in docs/lab-settings.md) all read the rows. A setting whose
 * value has a shape of its own (listen, tokens, token files) has a typed
 * handler; the rest share the handlers of their type.
 */
#include "config.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "backend.h"
#include "fetch.h"
#include "spec.h"
#include "util.h"
#include "banned.h"

/* Appends add[0..nadd) to the NULL-terminated list *list (cfg->tokens or
 * cfg->admin_tokens), taking the strings. */
static void tokens_append(char ***list, char **add, size_t nadd)
{
	size_t n = 0;
	char **v;

	while (*list && (*list)[n])
		n++;
	v = xrealloc(*list, (n + nadd + 1) * sizeof(*v));
	memcpy(v + n, add, nadd * sizeof(*v));
	v[n + nadd] = NULL;
	*list = v;
}

static size_t tokens_count(char *const *list)
{
	size_t n = 0;

	while (list && list[n])
		n++;
	return n;
}

/*
 * Appends the tokens of the file named by n: one a line, blank lines and
 * lines starting with '#' skipped, surrounding blanks trimmed. Tokens are
 * secrets: messages give the line, never the text.
 */
static void load_token_file(struct cfg_ctx *c, yaml_node_t *n, const char *key, const char *path,
			    char ***list)
{
	struct strbuf text = STRBUF_INIT;
	char why[128];
	size_t lineno = 0, pos = 0;
	int r;

	r = config_read_regular_file(path, &text, TOKEN_FILE_MAX_BYTES);
	if (r < 0) {
		node_error(c, n, "%s: cannot read %s: %s", key, path,
			   config_read_error_text(r, TOKEN_FILE_MAX_BYTES, why, sizeof(why)));
		goto out;
	}
	while (pos < text.len) {
		const char *line = text.buf + pos;
		const char *nl = memchr(line, '\n', text.len - pos);
		size_t len = nl ? (size_t)(nl - line) : text.len - pos;
		size_t start = 0, end = len;

		pos += len + (nl ? 1 : 0);
		lineno++;
		while (start < end && (line[start] == ' ' || line[start] == '\t'))
			start++;
		while (end > start && (line[end - 1] == ' ' || line[end - 1] == '\t' ||
				       line[end - 1] == '\r'))
			end--;
		if (start == end || line[start] == '#')
			continue;
		if (!config_valid_token_n(line + start, end - start)) {
			node_error(c, n, "%s: %s:%zu: must be %s", key, path, lineno,
				   MUST_TOKEN);
			continue;
		}
		if (end - start == strlen(CONFIG_EXAMPLE_TOKEN) &&
		    !memcmp(line + start, CONFIG_EXAMPLE_TOKEN, end - start)) {
			node_error(c, n, "%s: %s:%zu: %s", key, path, lineno, EXAMPLE_TOKEN_FIX);
			continue;
		}
		{
			char *tok = strndup(line + start, end - start);

			if (!tok)
				abort();
			tokens_append(list, &tok, 1);
		}
	}
out:
	strbuf_release(&text);
}

/* "IPV4:PORT" or "[IPV6]:PORT" into *ret_host (new string) and *ret_port. */
static int parse_listen(const char *s, char **ret_host, int *ret_port)
{
	unsigned char addr[sizeof(struct in6_addr)];
	char host[INET6_ADDRSTRLEN + 1];
	const char *colon, *h = s;
	size_t hlen;
	long port;
	int af = AF_INET;

	if (*s == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return -1;
		h = s + 1;
		hlen = (size_t)(close - h);
		colon = close + 1;
		af = AF_INET6;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -1;
		hlen = (size_t)(colon - s);
	}
	if (hlen == 0 || hlen >= sizeof(host))
		return -1;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	if (inet_pton(af, host, addr) != 1)
		return -1;
	if (colon[1] < '0' || colon[1] > '9' || parse_int_range(colon + 1, 1, 65535, &port) < 0)
		return -1;
	*ret_host = xstrdup(host);
	*ret_port = (int)port;
	return 0;
}

/* The example token opens the lab to anyone who read the example. */
static void refuse_example_tokens(struct cfg_ctx *c, const char *key, yaml_node_t *seq)
{
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++) {
		yaml_node_t *item = config_node_get(c, *it);
		const char *s = config_scalar(item);

		if (s && !strcmp(s, CONFIG_EXAMPLE_TOKEN))
			node_error(c, item, "%s[%td]: %s", key, it - seq->data.sequence.items.start,
				   EXAMPLE_TOKEN_FIX);
	}
}

/* ---- the rows whose values have a shape of their own ---- */

static void listen_defaults(const struct setting *row, void *base)
{
	struct lab_config *cfg = base;

	if (parse_listen(row->def_text, &cfg->listen_host, &cfg->listen_port) < 0)
		abort();	/* the table's own default */
}

static void listen_parse(struct cfg_section *sec, const struct setting *row, void *base)
{
	struct lab_config *cfg = base;
	const char *text = settings_scalar(sec, row->name);

	free(cfg->listen_host);
	cfg->listen_host = NULL;
	if (!text || parse_listen(text, &cfg->listen_host, &cfg->listen_port) < 0)
		settings_error(sec, row->name, "listen: must be IPV4:PORT or [IPV6]:PORT "
				  "(an IP literal and a port from 1 to 65535)");
}

static void listen_text(const struct setting *row, const void *base, struct strbuf *out)
{
	const struct lab_config *cfg = base;

	(void)row;
	strbuf_addf(out, strchr(cfg->listen_host, ':') ? "[%s]:%d" : "%s:%d", cfg->listen_host,
		    cfg->listen_port);
}

static void listen_release(const struct setting *row, void *base)
{
	struct lab_config *cfg = base;

	(void)row;
	free(cfg->listen_host);
	cfg->listen_host = NULL;
}

static const struct setting_custom listen_custom = {
	"address", listen_defaults, listen_parse, listen_text, listen_release,
};

static char ***row_list(const struct setting *row, void *base)
{
	return (char ***)((char *)base + row->off);
}

static void tokens_defaults(const struct setting *row, void *base)
{
	*row_list(row, base) = xcalloc(1, sizeof(char *));
}

static void tokens_parse(struct cfg_section *sec, const struct setting *row, void *base)
{
	yaml_node_t *n = settings_value(sec, row->name);
	size_t count = 0;
	char **t = config_get_list(sec->c, row->name, n, config_valid_token, MUST_TOKEN, &count);

	if (t)
		tokens_append(row_list(row, base), t, count);
	free(t);	/* the strings now belong to the list */
	if (t && n->type == YAML_SEQUENCE_NODE)
		refuse_example_tokens(sec->c, row->name, n);
}

/* secrets: counted, never shown */
static void tokens_text(const struct setting *row, const void *base, struct strbuf *out)
{
	strbuf_addf(out, "%zu token(s)", tokens_count(*row_list(row, (void *)base)));
}

static void tokens_release(const struct setting *row, void *base)
{
	config_strv_free(*row_list(row, base));
	*row_list(row, base) = NULL;
}

static const struct setting_custom tokens_custom = {
	"list of tokens", tokens_defaults, tokens_parse, tokens_text, tokens_release,
};

/* The list a token file's tokens join: admin_token_file's, the admin tokens. */
static char ***token_file_list(struct lab_config *cfg, const struct setting *row)
{
	return row->off == offsetof(struct lab_config, admin_token_file) ? &cfg->admin_tokens : &cfg->tokens;
}

static void token_file_parse(struct cfg_section *sec, const struct setting *row, void *base)
{
	yaml_node_t *n = settings_value(sec, row->name);
	char *path = config_get_str(sec->c, row->name, n, config_valid_path, MUST_PATH);
	char **f = (char **)((char *)base + row->off);

	if (path)
		load_token_file(sec->c, n, row->name, path, token_file_list(base, row));
	free(*f);
	*f = path;
}

static void token_file_text(const struct setting *row, const void *base, struct strbuf *out)
{
	const char *f = *(char *const *)((const char *)base + row->off);

	strbuf_addstr(out, f ? f : "-");
}

static void token_file_release(const struct setting *row, void *base)
{
	char **f = (char **)((char *)base + row->off);

	free(*f);
	*f = NULL;
}

static const struct setting_custom token_file_custom = {
	"path", NULL, token_file_parse, token_file_text, token_file_release,
};

/* The longest store URL (lab.store). */
#define STORE_URL_MAX 1024

/* 1 when s may be lab.store: a PostgreSQL URL, printable, no blanks. */
static int valid_store_url(const char *s)
{
	size_t n = strlen(s);

	if (n > STORE_URL_MAX || (strncmp(s, "postgresql://", 13) && strncmp(s, "postgres://", 11)))
		return 0;
	for (; *s; s++)
		if (*s <= ' ' || *s > '~')
			return 0;
	return 1;
}

/* url with its password (after the user, or a password= parameter)
 * written as "***", into sb: what `tlblabd -n` shows. */
static void store_url_hidden(const char *url, struct strbuf *sb)
{
	const char *auth = strstr(url, "://") + 3, *end = auth + strcspn(auth, "/?");
	const char *at = memchr(auth, '@', (size_t)(end - auth));
	const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
	const char *q;

	if (colon) {
		strbuf_add(sb, url, (size_t)(colon - url));
		strbuf_addstr(sb, ":***");
		url = at;
	}
	q = strchr(url, '?');
	if (!q) {
		strbuf_addstr(sb, url);
		return;
	}
	strbuf_add(sb, url, (size_t)(q - url));
	/* each parameter with its '?' or '&'; a password's value hidden */
	while (*q) {
		size_t len = 1 + strcspn(q + 1, "&");

		if (!strncmp(q + 1, "password=", 9)) {
			strbuf_add(sb, q, 10);
			strbuf_addstr(sb, "***");
		} else {
			strbuf_add(sb, q, len);
		}
		q += len;
	}
}

static void store_parse(struct cfg_section *sec, const struct setting *row, void *base)
{
	struct lab_config *cfg = base;

	free(cfg->store);
	cfg->store = config_get_str(sec->c, row->name, settings_value(sec, row->name), valid_store_url,
				    "a PostgreSQL URL (postgresql://USER@HOST/DB or postgres://...), "
				    "at most 1024 printable characters; without it the store is "
				    "data_dir/tlblab.db");
}

/* a secret may be in it: the password is never shown */
static void store_text(const struct setting *row, const void *base, struct strbuf *out)
{
	const struct lab_config *cfg = base;

	(void)row;
	if (cfg->store)
		store_url_hidden(cfg->store, out);
	else
		strbuf_addf(out, "%s/tlblab.db", cfg->data_dir ? cfg->data_dir : "data_dir");
}

static void store_release(const struct setting *row, void *base)
{
	struct lab_config *cfg = base;

	(void)row;
	free(cfg->store);
	cfg->store = NULL;
}

static const struct setting_custom store_custom = {
	"PostgreSQL URL", NULL, store_parse, store_text, store_release,
};

#define AT(field) offsetof(struct lab_config, field)

static const struct setting settings[] = {
	/* the one required setting (a path without a default) */
	{ .name = "data_dir", .type = SET_STR, .off = AT(data_dir), .valid = config_valid_path, .must = MUST_PATH,
	  .type_name = "path", .flags = SETTING_REQUIRED, .need = " (where the store and artifacts live)",
	  .what = "required: where the store (tlblab.db) and the artifacts live" },
	{ .name = "store", .type = SET_CUSTOM, .custom = &store_custom, .def_text = "data_dir/tlblab.db",
	  .what = "the store: a PostgreSQL URL (postgresql://USER@HOST/DB, libpq's form) for a store several daemons "
	  "share, else the SQLite file in data_dir; read at start" },
	{ .name = "lease_timeout", .type = SET_SECONDS, .off = AT(lease_timeout), .def = 30, .min = 3, .max = 3600,
	  .what = "with a store several daemons share (lab.store): how long a daemon may go unseen before another "
	  "takes over the stages it ran; longer than any pause of a daemon's host" },
	{ .name = "user", .type = SET_STR, .off = AT(user), .valid = config_valid_user, .must = MUST_USER,
	  .type_name = "user name",
	  .what = "the user tlblabd becomes once started as root (what needs root comes first); data_dir, "
	  "the identities and the builders' workdirs are that user's (scripts/deps.sh makes tlblab)" },
	{ .name = "listen", .type = SET_CUSTOM, .custom = &listen_custom, .def_text = "127.0.0.1:8080",
	  .what = "the API's address, IPV4:PORT or [IPV6]:PORT" },
	{ .name = "tokens", .type = SET_CUSTOM, .custom = &tokens_custom, .off = AT(tokens),
	  .what = "bearer tokens that may submit, and cancel what they submitted (16 to 4096 printable characters)" },
	{ .name = "token_file", .type = SET_CUSTOM, .custom = &token_file_custom, .off = AT(token_file),
	  .what = "a file of more tokens, one a line ('#' comments), read at start and on reload" },
	{ .name = "admin_tokens", .type = SET_CUSTOM, .custom = &tokens_custom, .off = AT(admin_tokens),
	  .what = "bearer tokens that may also cancel any job or bisection, triage alerts and set machines' health" },
	{ .name = "admin_token_file", .type = SET_CUSTOM, .custom = &token_file_custom, .off = AT(admin_token_file),
	  .what = "a file of more admin tokens, as token_file" },
	{ .name = "read_requires_token", .type = SET_BOOL, .off = AT(read_requires_token), .def = 0,
	  .what = "reads need a token too" },
	{ .name = "allowed_hosts", .type = SET_LIST, .off = AT(allowed_hosts), .valid = config_valid_host,
	  .must = MUST_HOST, .type_name = "list of host names",
	  .what = "Host header names accepted besides the listen address, localhost, 127.0.0.1 and ::1" },
	{ .name = "max_body", .type = SET_BYTES, .off = AT(max_body), .def = 1 << 20, .min = 1024, .max = 1 << 30,
	  .what = "the largest request body (a patch); 413 past it" },
	{ .name = "workers", .type = SET_INT, .off = AT(workers), .def = 4, .min = 1, .max = 256,
	  .what = "stages that may run at once (builds, boots)" },
	{ .name = "stage_timeout", .type = SET_SECONDS, .off = AT(stage_timeout), .def = 1800, .min = TIMEOUT_MIN,
	  .max = TIMEOUT_MAX, .what = "a stage's time limit; a suite's timeout defaults to it" },
	{ .name = "quiet_host", .type = SET_BOOL, .off = AT(quiet_host), .def = 1,
	  .what = "builds pause while a machine on their host measures; off trades noise for speed" },
	/* at least 2M: QEMU's display surfaces are files too (memfd, 1.2M) */
	{ .name = "qemu_file_max", .type = SET_BYTES, .off = AT(qemu_file_max), .def = 64 << 20, .min = 2 << 20,
	  .max = 64.0 * (1 << 30),
	  .what = "the most a QEMU guest's console and instruction-plugin files may hold on the VM host (QEMU's "
	  "RLIMIT_FSIZE); a boot or run whose kernel writes that much fails, class boot" },
	/* 512 is the server's limit on all connections together (api_server.c) */
	{ .name = "max_connections_per_address", .type = SET_INT, .off = AT(max_connections_per_address),
	  .def = 64, .min = 1, .max = 512, .what = "connections one client address may hold open" },
	{ .name = "header_timeout", .type = SET_SECONDS, .off = AT(header_timeout), .def = 10, .min = 1, .max = 300,
	  .what = "the time a client has to send a request's headers" },
	{ .name = "max_jobs_per_token", .type = SET_INT, .off = AT(max_jobs_per_token), .def = 20, .min = 1,
	  .max = 100000, .what = "jobs one token may have queued or running (a running bisection counts as one)" },
	{ .name = "max_boots_per_token", .type = SET_INT, .off = AT(max_boots_per_token), .def = 200, .min = 1,
	  .max = 1000000,
	  .what = "boot stages not yet done one token may have (a running bisection: one step's boots)" },
	{ .name = "fetch_allow", .type = SET_LIST, .off = AT(fetch_allow), .valid = fetch_allow_entry_valid,
	  .must = MUST_FETCH_ALLOW, .type_name = "list of addresses, CIDRs, host names",
	  .what = "addresses, CIDRs or host names a patch or branch URL may reach besides public ones" },
};
#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))
_Static_assert(NSETTINGS <= MAX_KEYS, "more lab settings than a keyset holds");

void config_lab_defaults(struct lab_config *cfg)
{
	settings_defaults(settings, NSETTINGS, cfg);
}

void config_lab_release(struct lab_config *cfg)
{
	settings_release(settings, NSETTINGS, cfg);
}

void config_parse_lab(struct cfg_ctx *c, yaml_node_t *map)
{
	struct cfg_section sec = { .c = c, .map = map, .owner = map, .what = "lab", .rows = settings,
				   .n = NSETTINGS, .base = c->cfg };

	if (!config_is_mapping(map)) {
		node_error(c, map, "lab: must be a mapping (lab.data_dir is required)");
		return;
	}
	/* the rows' order: the tokens of a token file after those inline */
	settings_parse(&sec);
	c->cfg->ntokens = tokens_count(c->cfg->tokens);
}

void config_lab_print(FILE *out, const struct lab_config *cfg)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < NSETTINGS; i++) {
		strbuf_reset(&sb);
		settings_text(&settings[i], cfg, &sb);
		fprintf(out, "lab.%s: %s\n", settings[i].name, sb.buf);
	}
	strbuf_release(&sb);
}

void config_lab_reference(FILE *out)
{
	const struct backend *b;
	char prefix[96];

	settings_reference(out, "lab.", settings, NSETTINGS, 1);
	/* each boot method's section, from the method's own rows */
	for (size_t i = 0; (b = backend_at(BACKEND_BOOT, i)); i++) {
		snprintf(prefix, sizeof(prefix), "machines[].%s.", b->name);
		settings_reference(out, prefix, b->settings, b->nsettings, 0);
	}
}
