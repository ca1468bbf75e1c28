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

enum setting_type {
	SET_PATH,	/* char *: a path */
	SET_STORE,	/* char *: a PostgreSQL URL (a secret may be in it) */
	SET_USER,	/* char *: a user name */
	SET_LISTEN,	/* listen_host, listen_port */
	SET_TOKENS,	/* char **: tokens, appended to */
	SET_TOKEN_FILE,	/* char *, and its tokens appended (token_file_list) */
	SET_HOSTS,	/* char **: host names */
	SET_FETCH,	/* char **: fetch_allow entries */
	SET_BOOL,	/* int */
	SET_INT,	/* int, from min to max */
	SET_BYTES,	/* size_t, from min to max */
	SET_SECONDS,	/* double, from min to max */
	SET_MAX
};

struct setting {
	const char *name;
	enum setting_type type;
	size_t off;		/* of the field in struct lab_config */
	double def;		/* the default of a number or a bool */
	const char *def_text;	/* of a string (NULL: none) */
	double min, max;	/* of a number */
	const char *what;	/* what it is, for the reference */
};

#define AT(field) offsetof(struct lab_config, field)
#define NONE NAN, NULL, NAN, NAN

static const struct setting settings[] = {
	/* the one required setting (a path without a default) */
	{ "data_dir", SET_PATH, AT(data_dir), NONE,
	  "required: where the store (tlblab.db) and the artifacts live" },
	{ "store", SET_STORE, AT(store), NAN, "data_dir/tlblab.db", NAN, NAN,
	  "the store: a PostgreSQL URL (postgresql://USER@HOST/DB, libpq's form) for a store several daemons "
	  "share, else the SQLite file in data_dir; read at start" },
	{ "lease_timeout", SET_SECONDS, AT(lease_timeout), 30, NULL, 3, 3600,
	  "with a store several daemons share (lab.store): how long a daemon may go unseen before another "
	  "takes over the stages it ran; longer than any pause of a daemon's host" },
	{ "user", SET_USER, AT(user), NONE,
	  "the user tlblabd becomes once started as root (what needs root comes first); data_dir, "
	  "the identities and the builders' workdirs are that user's (scripts/deps.sh makes tlblab)" },
	{ "listen", SET_LISTEN, AT(listen_host), NAN, "127.0.0.1:8080", NAN, NAN,
	  "the API's address, IPV4:PORT or [IPV6]:PORT" },
	{ "tokens", SET_TOKENS, AT(tokens), NONE,
	  "bearer tokens that may submit, and cancel what they submitted (16 to 4096 printable characters)" },
	{ "token_file", SET_TOKEN_FILE, AT(token_file), NONE,
	  "a file of more tokens, one a line ('#' comments), read at start and on reload" },
	{ "admin_tokens", SET_TOKENS, AT(admin_tokens), NONE,
	  "bearer tokens that may also cancel any job or bisection, triage alerts and set machines' health" },
	{ "admin_token_file", SET_TOKEN_FILE, AT(admin_token_file), NONE,
	  "a file of more admin tokens, as token_file" },
	{ "read_requires_token", SET_BOOL, AT(read_requires_token), 0, NULL, NAN, NAN,
	  "reads need a token too" },
	{ "allowed_hosts", SET_HOSTS, AT(allowed_hosts), NONE,
	  "Host header names accepted besides the listen address, localhost, 127.0.0.1 and ::1" },
	{ "max_body", SET_BYTES, AT(max_body), 1 << 20, NULL, 1024, 1 << 30,
	  "the largest request body (a patch); 413 past it" },
	{ "workers", SET_INT, AT(workers), 4, NULL, 1, 64,
	  "stages that may run at once (builds, boots)" },
	{ "stage_timeout", SET_SECONDS, AT(stage_timeout), 1800, NULL, TIMEOUT_MIN, TIMEOUT_MAX,
	  "a stage's time limit; a suite's timeout defaults to it" },
	{ "quiet_host", SET_BOOL, AT(quiet_host), 1, NULL, NAN, NAN,
	  "builds pause while a machine on their host measures; off trades noise for speed" },
	/* at least 2M: QEMU's display surfaces are files too (memfd, 1.2M) */
	{ "qemu_file_max", SET_BYTES, AT(qemu_file_max), 64 << 20, NULL, 2 << 20, 64.0 * (1 << 30),
	  "the most a QEMU guest's console and instruction-plugin files may hold on the VM host (QEMU's "
	  "RLIMIT_FSIZE); a boot or run whose kernel writes that much fails, class boot" },
	/* 512 is the server's limit on all connections together (api_server.c) */
	{ "max_connections_per_address", SET_INT, AT(max_connections_per_address), 64, NULL, 1, 512,
	  "connections one client address may hold open" },
	{ "header_timeout", SET_SECONDS, AT(header_timeout), 10, NULL, 1, 300,
	  "the time a client has to send a request's headers" },
	{ "max_jobs_per_token", SET_INT, AT(max_jobs_per_token), 20, NULL, 1, 100000,
	  "jobs one token may have queued or running (a running bisection counts as one)" },
	{ "max_boots_per_token", SET_INT, AT(max_boots_per_token), 200, NULL, 1, 1000000,
	  "boot stages not yet done one token may have (a running bisection: one step's boots)" },
	{ "fetch_allow", SET_FETCH, AT(fetch_allow), NONE,
	  "addresses, CIDRs or host names a patch or branch URL may reach besides public ones" },
};
#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))
_Static_assert(NSETTINGS <= MAX_KEYS, "more lab settings than a keyset holds");

static void *field(struct lab_config *cfg, const struct setting *s)
{
	return (char *)cfg + s->off;
}

/* The list a token file's tokens join: admin_token_file's, the admin tokens. */
static char ***token_file_list(struct lab_config *cfg, const struct setting *s)
{
	return s->off == AT(admin_token_file) ? &cfg->admin_tokens : &cfg->tokens;
}

/* 1024 as "1K", 1 MiB as "1M": as the configuration writes sizes */
static const char *bytes_text(uint64_t v, char *buf, size_t size)
{
	static const char units[] = "KMG";
	int u = -1;

	while (u < 2 && v && v % 1024 == 0) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, u < 0 ? "%" PRIu64 : "%" PRIu64 "%c", v, u < 0 ? 0 : units[u]);
	return buf;
}

void config_lab_defaults(struct lab_config *cfg)
{
	for (size_t i = 0; i < NSETTINGS; i++) {
		const struct setting *s = &settings[i];
		void *f = field(cfg, s);

		switch (s->type) {
		case SET_LISTEN:
			if (parse_listen(s->def_text, &cfg->listen_host, &cfg->listen_port) < 0)
				abort();	/* the table's own default */
			break;
		case SET_TOKENS:
			*(char ***)f = xcalloc(1, sizeof(char *));
			break;
		case SET_BOOL:
		case SET_INT:
			*(int *)f = (int)s->def;
			break;
		case SET_BYTES:
			*(size_t *)f = (size_t)s->def;
			break;
		case SET_SECONDS:
			*(double *)f = s->def;
			break;
		default:
			break;
		}
	}
}

/* Reads n, the value of setting s, into cfg; an error at n when it is not one. */
static void parse_setting(struct cfg_ctx *c, const struct setting *s, yaml_node_t *n)
{
	struct lab_config *cfg = c->cfg;
	void *f = field(cfg, s);
	char lo[32], hi[32];
	uint64_t bytes;
	size_t count = 0;
	double d;
	long v;

	switch (s->type) {
	case SET_PATH:
		free(*(char **)f);
		*(char **)f = config_get_str(c, s->name, n, config_valid_path, MUST_PATH);
		break;
	case SET_USER:
		free(*(char **)f);
		*(char **)f = config_get_str(c, s->name, n, config_valid_user, MUST_USER);
		break;
	case SET_STORE:
		free(*(char **)f);
		*(char **)f = config_get_str(c, s->name, n, valid_store_url,
					     "a PostgreSQL URL (postgresql://USER@HOST/DB or postgres://...), "
					     "at most 1024 printable characters; without it the store is "
					     "data_dir/tlblab.db");
		break;
	case SET_LISTEN: {
		const char *text = config_scalar(n);

		free(cfg->listen_host);
		cfg->listen_host = NULL;
		if (!text || parse_listen(text, &cfg->listen_host, &cfg->listen_port) < 0)
			node_error(c, n, "listen: must be IPV4:PORT or [IPV6]:PORT "
				   "(an IP literal and a port from 1 to 65535)");
		break;
	}
	case SET_TOKENS: {
		char **t = config_get_list(c, s->name, n, config_valid_token, MUST_TOKEN, &count);

		if (t)
			tokens_append((char ***)f, t, count);
		free(t);	/* the strings now belong to the list */
		if (t && n->type == YAML_SEQUENCE_NODE)
			refuse_example_tokens(c, s->name, n);
		break;
	}
	case SET_TOKEN_FILE: {
		char *path = config_get_str(c, s->name, n, config_valid_path, MUST_PATH);

		if (path)
			load_token_file(c, n, s->name, path, token_file_list(cfg, s));
		free(*(char **)f);
		*(char **)f = path;
		break;
	}
	case SET_HOSTS:
	case SET_FETCH: {
		char **a = s->type == SET_HOSTS
				   ? config_get_list(c, s->name, n, config_valid_host, MUST_HOST, &count)
				   : config_get_list(c, s->name, n, fetch_allow_entry_valid, MUST_FETCH_ALLOW, &count);

		if (a) {
			config_strv_free(*(char ***)f);
			*(char ***)f = a;
		}
		break;
	}
	case SET_BOOL:
		config_get_bool(c, s->name, n, (int *)f);
		break;
	case SET_INT:
		if (config_get_int(c, s->name, n, (long)s->min, (long)s->max, &v) == 0)
			*(int *)f = (int)v;
		break;
	case SET_BYTES:
		if (config_get_bytes(c, s->name, n, (uint64_t)s->min, (uint64_t)s->max,
				     bytes_text((uint64_t)s->min, lo, sizeof(lo)),
				     bytes_text((uint64_t)s->max, hi, sizeof(hi)), &bytes) == 0)
			*(size_t *)f = (size_t)bytes;
		break;
	case SET_SECONDS:
		if (config_get_seconds_range(c, s->name, n, s->min, s->max, &d) == 0)
			*(double *)f = d;
		break;
	case SET_MAX:
		abort();
	}
}

void config_parse_lab(struct cfg_ctx *c, yaml_node_t *map)
{
	const char *names[NSETTINGS + 1];
	struct keyset ks;
	size_t i;

	if (!config_is_mapping(map)) {
		node_error(c, map, "lab: must be a mapping (lab.data_dir is required)");
		return;
	}
	for (i = 0; i < NSETTINGS; i++)
		names[i] = settings[i].name;
	names[i] = NULL;
	config_map_keys(c, map, names, "lab", "key", &ks);
	/* the rows' order: the tokens of a token file after those inline */
	for (i = 0; i < NSETTINGS; i++)
		if (ks.val[i])
			parse_setting(c, &settings[i], ks.val[i]);
		else if (settings[i].type == SET_PATH)
			config_missing_key(c, map, settings[i].name, "lab", " (where the store and artifacts live)");
	c->cfg->ntokens = tokens_count(c->cfg->tokens);
}

/* The value of s in cfg as the configuration would write it, into sb. */
static void value_text(const struct lab_config *cfg, const struct setting *s, struct strbuf *sb)
{
	const void *f = (const char *)cfg + s->off;
	char buf[32];

	switch (s->type) {
	case SET_PATH:
	case SET_USER:
	case SET_TOKEN_FILE:
		strbuf_addstr(sb, *(char *const *)f ? *(char *const *)f : "-");
		break;
	case SET_LISTEN:
		strbuf_addf(sb, strchr(cfg->listen_host, ':') ? "[%s]:%d" : "%s:%d", cfg->listen_host,
			    cfg->listen_port);
		break;
	case SET_STORE:
		if (*(char *const *)f)
			store_url_hidden(*(char *const *)f, sb);
		else
			strbuf_addf(sb, "%s/tlblab.db", cfg->data_dir ? cfg->data_dir : "data_dir");
		break;
	case SET_TOKENS:
		/* secrets: counted, never shown */
		strbuf_addf(sb, "%zu token(s)", tokens_count(*(char **const *)f));
		break;
	case SET_HOSTS:
	case SET_FETCH: {
		char *const *h = *(char **const *)f;

		for (size_t i = 0; h && h[i]; i++)
			strbuf_addf(sb, "%s%s", i ? ", " : "", h[i]);
		if (!h || !h[0])
			strbuf_addstr(sb, "-");
		break;
	}
	case SET_BOOL:
		strbuf_addstr(sb, *(const int *)f ? "true" : "false");
		break;
	case SET_INT:
		strbuf_addf(sb, "%d", *(const int *)f);
		break;
	case SET_BYTES:
		strbuf_addstr(sb, bytes_text(*(const size_t *)f, buf, sizeof(buf)));
		break;
	case SET_SECONDS:
		strbuf_addf(sb, "%gs", *(const double *)f);
		break;
	case SET_MAX:
		abort();
	}
}

void config_lab_print(FILE *out, const struct lab_config *cfg)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < NSETTINGS; i++) {
		strbuf_reset(&sb);
		value_text(cfg, &settings[i], &sb);
		fprintf(out, "lab.%s: %s\n", settings[i].name, sb.buf);
	}
	strbuf_release(&sb);
}

void config_lab_reference(FILE *out)
{
	static const char *const type_names[SET_MAX] = {
		[SET_PATH] = "path", [SET_STORE] = "PostgreSQL URL", [SET_USER] = "user name", [SET_LISTEN] = "address", [SET_TOKENS] = "list of tokens",
		[SET_TOKEN_FILE] = "path", [SET_HOSTS] = "list of host names",
		[SET_FETCH] = "list of addresses, CIDRs, host names", [SET_BOOL] = "true or false",
		[SET_INT] = "integer", [SET_BYTES] = "size (1K, 1M, 1G)", [SET_SECONDS] = "time (90, 30s, 10m, 2h)",
	};
	char def[64], lo[48], hi[32], b[32];

	fprintf(out, "| setting | type | default | bounds | what it is |\n|---|---|---|---|---|\n");
	for (size_t i = 0; i < NSETTINGS; i++) {
		const struct setting *s = &settings[i];

		if (s->def_text)
			snprintf(def, sizeof(def), "%s", s->def_text);
		else if (isnan(s->def))
			snprintf(def, sizeof(def), "-");
		else if (s->type == SET_BOOL)
			snprintf(def, sizeof(def), "%s", s->def ? "true" : "false");
		else if (s->type == SET_BYTES)
			bytes_text((uint64_t)s->def, def, sizeof(def));
		else
			snprintf(def, sizeof(def), s->type == SET_SECONDS ? "%.10gs" : "%.10g", s->def);
		if (s->type == SET_BYTES)
			snprintf(lo, sizeof(lo), "%s to ", bytes_text((uint64_t)s->min, b, sizeof(b)));
		else if (!isnan(s->min))
			snprintf(lo, sizeof(lo), s->type == SET_SECONDS ? "%.10gs to " : "%.10g to ", s->min);
		if (s->type == SET_BYTES)
			bytes_text((uint64_t)s->max, hi, sizeof(hi));
		else if (!isnan(s->max))
			snprintf(hi, sizeof(hi), s->type == SET_SECONDS ? "%.10gs" : "%.10g", s->max);
		fprintf(out, "| `lab.%s` | %s | %s | %s%s | %s |\n", s->name, type_names[s->type], def,
			isnan(s->min) ? "" : lo, isnan(s->min) ? "-" : hi, s->what);
	}
}
