/*
 * The lab: section, the daemon's own settings: data directory, listen
 * address, API tokens (inline and from a token file; the example token is
 * refused), allowed Host names, limits and timeouts. Their defaults are set
 * by config_load_string() before this section is read.
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "fetch.h"
#include "spec.h"
#include "util.h"
#include "banned.h"

/* Appends the NULL-terminated add[0..nadd) to cfg->tokens, taking the strings. */
static void tokens_append(struct lab_config *cfg, char **add, size_t nadd)
{
	char **v = xrealloc(cfg->tokens, (cfg->ntokens + nadd + 1) * sizeof(*v));

	memcpy(v + cfg->ntokens, add, nadd * sizeof(*v));
	cfg->ntokens += nadd;
	v[cfg->ntokens] = NULL;
	cfg->tokens = v;
}

/*
 * Appends the tokens of the file named by n: one a line, blank lines and
 * lines starting with '#' skipped, surrounding blanks trimmed. Tokens are
 * secrets: messages give the line, never the text.
 */
static void load_token_file(struct cfg_ctx *c, yaml_node_t *n, const char *path)
{
	struct strbuf text = STRBUF_INIT;
	char why[128];
	size_t lineno = 0, pos = 0;
	int r;

	r = config_read_regular_file(path, &text, TOKEN_FILE_MAX_BYTES);
	if (r < 0) {
		node_error(c, n, "token_file: cannot read %s: %s", path,
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
			node_error(c, n, "token_file: %s:%zu: must be %s", path, lineno,
				   MUST_TOKEN);
			continue;
		}
		if (end - start == strlen(CONFIG_EXAMPLE_TOKEN) &&
		    !memcmp(line + start, CONFIG_EXAMPLE_TOKEN, end - start)) {
			node_error(c, n, "token_file: %s:%zu: %s", path, lineno, EXAMPLE_TOKEN_FIX);
			continue;
		}
		{
			char *tok = strndup(line + start, end - start);

			if (!tok)
				abort();
			tokens_append(c->cfg, &tok, 1);
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
static void refuse_example_tokens(struct cfg_ctx *c, yaml_node_t *seq)
{
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++) {
		yaml_node_t *item = config_node_get(c, *it);
		const char *s = config_scalar(item);

		if (s && !strcmp(s, CONFIG_EXAMPLE_TOKEN))
			node_error(c, item, "tokens[%td]: %s", it - seq->data.sequence.items.start,
				   EXAMPLE_TOKEN_FIX);
	}
}

static const char *const lab_keys[] = {
	"data_dir", "listen", "tokens", "token_file", "read_requires_token", "max_body",
	"workers", "stage_timeout", "quiet_host", "max_connections_per_address", "header_timeout",
	"max_jobs_per_token", "max_boots_per_token", "allowed_hosts", "fetch_allow", NULL
};
enum { LK_DATA_DIR, LK_LISTEN, LK_TOKENS, LK_TOKEN_FILE, LK_READ_REQUIRES_TOKEN,
       LK_MAX_BODY, LK_WORKERS, LK_STAGE_TIMEOUT, LK_QUIET_HOST, LK_CONNS_PER_ADDRESS,
       LK_HEADER_TIMEOUT, LK_JOBS_PER_TOKEN, LK_BOOTS_PER_TOKEN, LK_ALLOWED_HOSTS, LK_FETCH_ALLOW, LK_MAX };
KEYS_MATCH(lab_keys, LK_MAX);

void config_parse_lab(struct cfg_ctx *c, yaml_node_t *map)
{
	struct lab_config *cfg = c->cfg;
	struct keyset ks;
	uint64_t bytes;
	long v;

	if (!config_is_mapping(map)) {
		node_error(c, map, "lab: must be a mapping (lab.data_dir is required)");
		return;
	}
	config_map_keys(c, map, lab_keys, "lab", "key", &ks);
	if (ks.val[LK_DATA_DIR])
		cfg->data_dir = config_get_str(c, "data_dir", ks.val[LK_DATA_DIR], config_valid_path, MUST_PATH);
	else
		config_missing_key(c, map, "data_dir", "lab", " (where the store and artifacts live)");
	if (ks.val[LK_LISTEN]) {
		const char *s = config_scalar(ks.val[LK_LISTEN]);

		free(cfg->listen_host);
		cfg->listen_host = NULL;
		if (!s || parse_listen(s, &cfg->listen_host, &cfg->listen_port) < 0)
			node_error(c, ks.val[LK_LISTEN], "listen: must be IPV4:PORT or [IPV6]:PORT "
				   "(an IP literal and a port from 1 to 65535)");
	}
	if (ks.val[LK_TOKENS]) {
		size_t n = 0;
		char **t = config_get_list(c, "tokens", ks.val[LK_TOKENS], config_valid_token, MUST_TOKEN, &n);

		if (t)
			tokens_append(cfg, t, n);
		free(t);	/* the strings now belong to cfg->tokens */
		if (t && ks.val[LK_TOKENS]->type == YAML_SEQUENCE_NODE)
			refuse_example_tokens(c, ks.val[LK_TOKENS]);
	}
	if (ks.val[LK_TOKEN_FILE]) {
		char *path = config_get_str(c, "token_file", ks.val[LK_TOKEN_FILE], config_valid_path, MUST_PATH);

		if (path)
			load_token_file(c, ks.val[LK_TOKEN_FILE], path);
		cfg->token_file = path;
	}
	if (ks.val[LK_ALLOWED_HOSTS]) {
		size_t n = 0;

		cfg->allowed_hosts = config_get_list(c, "allowed_hosts", ks.val[LK_ALLOWED_HOSTS], config_valid_host,
					      MUST_HOST, &n);
	}
	if (ks.val[LK_READ_REQUIRES_TOKEN])
		config_get_bool(c, "read_requires_token", ks.val[LK_READ_REQUIRES_TOKEN],
			 &cfg->read_requires_token);
	if (ks.val[LK_MAX_BODY] &&
	    config_get_bytes(c, "max_body", ks.val[LK_MAX_BODY], 1024, 1u << 30, "1K", "1G", &bytes) == 0)
		cfg->max_body = (size_t)bytes;
	if (ks.val[LK_WORKERS] && config_get_int(c, "workers", ks.val[LK_WORKERS], 1, 64, &v) == 0)
		cfg->workers = (int)v;
	if (ks.val[LK_STAGE_TIMEOUT])
		config_get_seconds(c, "stage_timeout", ks.val[LK_STAGE_TIMEOUT], &cfg->stage_timeout);
	if (ks.val[LK_QUIET_HOST])
		config_get_bool(c, "quiet_host", ks.val[LK_QUIET_HOST], &cfg->quiet_host);
	/* 512 is the server's limit on all connections together (api_server.c) */
	if (ks.val[LK_CONNS_PER_ADDRESS] &&
	    config_get_int(c, "max_connections_per_address", ks.val[LK_CONNS_PER_ADDRESS], 1, 512, &v) == 0)
		cfg->max_connections_per_address = (int)v;
	if (ks.val[LK_HEADER_TIMEOUT]) {
		double t;

		if (spec_parse_seconds(config_scalar(ks.val[LK_HEADER_TIMEOUT]), &t) < 0 || t < 1 || t > 300)
			node_error(c, ks.val[LK_HEADER_TIMEOUT], "header_timeout: must be a number from 1 "
				   "to 300 seconds, " SPEC_SECONDS_FORMS);
		else
			cfg->header_timeout = t;
	}
	if (ks.val[LK_JOBS_PER_TOKEN] &&
	    config_get_int(c, "max_jobs_per_token", ks.val[LK_JOBS_PER_TOKEN], 1, 100000, &v) == 0)
		cfg->max_jobs_per_token = (int)v;
	if (ks.val[LK_BOOTS_PER_TOKEN] &&
	    config_get_int(c, "max_boots_per_token", ks.val[LK_BOOTS_PER_TOKEN], 1, 1000000, &v) == 0)
		cfg->max_boots_per_token = (int)v;
	if (ks.val[LK_FETCH_ALLOW]) {
		size_t n = 0;
		char **a = config_get_list(c, "fetch_allow", ks.val[LK_FETCH_ALLOW], fetch_allow_entry_valid,
				    MUST_FETCH_ALLOW, &n);

		if (a) {
			config_strv_free(cfg->fetch_allow);
			cfg->fetch_allow = a;
		}
	}
}
