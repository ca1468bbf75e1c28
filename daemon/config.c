/*
 * The configuration loader.
 *
 * The text is parsed whole into a libyaml document (a node tree where every
 * node keeps its position), then walked section by section. A check that
 * fails records an error at the position of the node it concerns and the
 * walk goes on, so one run shows every problem; the errors are sorted by
 * position before they are shown. Sections are walked in dependency order
 * (lab, builders, machines, trees, suites) whatever their order in the file,
 * so a tree may name a builder defined below it and a suite's default
 * timeout is the lab's stage_timeout.
 *
 * A suite's workload specs are converted to JSON and checked by the agent's
 * own spec parser (agents/spec.h), so a spec the agent would refuse after a
 * build and a boot is refused here, at the position of the field it names.
 * Times and sizes take the same units there and in the lab's settings
 * ("10m", "1M"), read by the same functions.
 *
 * Relative paths (data_dir, token_file, identity, ...) are kept as written:
 * they are relative to the daemon's working directory, not to the file.
 *
 * Everything a user controls is bounded: the file (4 MiB), the token file
 * (1 MiB), the number of errors kept, and the size and depth of a workload
 * spec after YAML aliases are expanded (an alias bomb would otherwise turn
 * a small file into a huge JSON tree).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "fetch.h"
#include "spec.h"
#include "util.h"
#include "banned.h"

#define CONFIG_MAX_BYTES	(4u << 20)
#define TOKEN_FILE_MAX_BYTES	(1u << 20)
#define CONFIG_MAX_ERRORS	100
#define NAME_MAX_LEN		64
#define USER_MAX_LEN		64
#define HOST_MAX_LEN		253
#define PATH_MAX_LEN		4096
#define ARG_MAX_LEN		4096
#define LIST_MAX		256
#define TOKEN_MIN_LEN		16
#define TOKEN_MAX_LEN		4096
#define HOST_KEY_B64_LEN	43	/* a SHA-256 digest in unpadded base64 */
#define CMDLINE_MAX_LEN		1024
#define QEMU_MEMORY_MIN		64	/* MiB */
#define QEMU_MEMORY_MAX		1048576
#define TIMEOUT_MIN		1
#define TIMEOUT_MAX		604800	/* a week */
#define JSON_MAX_DEPTH		32
#define JSON_MAX_NODES		100000	/* per suite, after alias expansion */

struct cfg_error {
	unsigned long line, col;	/* 1-based; 0 when the error has no position */
	size_t seq;			/* keeps the sort stable */
	char *msg;
};

struct cfg_ctx {
	const char *name;
	yaml_document_t *doc;
	struct lab_config *cfg;
	struct cfg_error *errs;
	size_t nerrs, alloc_errs;
	size_t dropped;			/* errors past CONFIG_MAX_ERRORS */
	size_t json_budget;		/* nodes left for the suite being converted */
	int json_limit_reported;
};

/* ---- small helpers ---- */

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		abort();	/* as strbuf does: no recovery from a failed allocation */
	return p;
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		abort();
	return p;
}

static void strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

__attribute__((format(printf, 4, 5)))
static void cfg_error(struct cfg_ctx *c, unsigned long line, unsigned long col,
		      const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	struct cfg_error *e;
	va_list ap;

	if (c->nerrs >= CONFIG_MAX_ERRORS) {
		c->dropped++;
		return;
	}
	if (c->nerrs == c->alloc_errs) {
		size_t n = c->alloc_errs ? 2 * c->alloc_errs : 8;
		struct cfg_error *p = realloc(c->errs, n * sizeof(*p));

		if (!p)
			abort();
		c->errs = p;
		c->alloc_errs = n;
	}
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	e = &c->errs[c->nerrs];
	e->line = line;
	e->col = col;
	e->seq = c->nerrs;
	e->msg = strbuf_detach(&sb, NULL);
	c->nerrs++;
}

/* An error at node n (libyaml marks are 0-based, messages 1-based). */
#define node_error(c, n, ...) \
	cfg_error((c), (unsigned long)(n)->start_mark.line + 1, \
		  (unsigned long)(n)->start_mark.column + 1, __VA_ARGS__)

static int cfg_error_cmp(const void *a, const void *b)
{
	const struct cfg_error *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Writes the errors to err, sorted by position, one per line (no final newline). */
static void cfg_errors_flush(struct cfg_ctx *c, struct strbuf *err)
{
	if (!c->nerrs || !err)
		return;
	qsort(c->errs, c->nerrs, sizeof(*c->errs), cfg_error_cmp);
	for (size_t i = 0; i < c->nerrs; i++) {
		if (i)
			strbuf_addch(err, '\n');
		if (c->errs[i].line)
			strbuf_addf(err, "%s:%lu:%lu: %s", c->name, c->errs[i].line,
				    c->errs[i].col, c->errs[i].msg);
		else
			strbuf_addf(err, "%s: %s", c->name, c->errs[i].msg);
	}
	if (c->dropped)
		strbuf_addf(err, "\n%s: %zu more errors not shown", c->name, c->dropped);
}

static yaml_node_t *node_get(struct cfg_ctx *c, int index)
{
	return yaml_document_get_node(c->doc, index);
}

/* The text of a scalar node, or NULL when n is not a scalar or holds a NUL. */
static const char *scalar(const yaml_node_t *n)
{
	const char *s;

	if (!n || n->type != YAML_SCALAR_NODE)
		return NULL;
	s = (const char *)n->data.scalar.value;
	if (strlen(s) != n->data.scalar.length)
		return NULL;
	return s;
}

/* A plain empty, "~" or "null" scalar: YAML's null. */
static int is_null(const yaml_node_t *n)
{
	const char *s = scalar(n);

	if (!s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

static int is_mapping(const yaml_node_t *n)
{
	return n && n->type == YAML_MAPPING_NODE;
}

/* The value of key in mapping map, or NULL. No error reported. */
static yaml_node_t *map_find(struct cfg_ctx *c, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *p;

	if (!is_mapping(map))
		return NULL;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *k = scalar(node_get(c, p->key));

		if (k && !strcmp(k, key))
			return node_get(c, p->value);
	}
	return NULL;
}

#define MAX_KEYS 32
/* A key table (NULL-terminated) and the enum indexing it must not drift apart. */
#define KEYS_MATCH(table, max) \
	_Static_assert(ARRAY_SIZE(table) == (max) + 1 && (max) <= MAX_KEYS, \
		       #table " does not match its enum")

/* The known keys of one mapping, found by map_keys(). */
struct keyset {
	yaml_node_t *key[MAX_KEYS];
	yaml_node_t *val[MAX_KEYS];
};

/*
 * Matches the pairs of map against keys[] (NULL-terminated, at most
 * MAX_KEYS). ks->val[i] and ks->key[i] get the nodes of keys[i], or NULL.
 * Reports unknown, duplicate and non-string keys, naming `what`.
 */
static void map_keys(struct cfg_ctx *c, yaml_node_t *map, const char *const *keys,
		     const char *what, const char *unknown_word, struct keyset *ks)
{
	yaml_node_pair_t *p;

	memset(ks, 0, sizeof(*ks));
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = node_get(c, p->key);
		const char *k = scalar(kn);
		size_t i;

		if (!k) {
			node_error(c, kn, "keys must be strings (in %s)", what);
			continue;
		}
		for (i = 0; keys[i] && strcmp(keys[i], k); i++)
			;
		if (!keys[i]) {
			node_error(c, kn, "unknown %s '%s' in %s", unknown_word, k, what);
			continue;
		}
		if (ks->key[i]) {
			node_error(c, kn, "duplicate key '%s' in %s (first at line %lu)", k, what,
				   (unsigned long)ks->key[i]->start_mark.line + 1);
			continue;
		}
		ks->key[i] = kn;
		ks->val[i] = node_get(c, p->value);
	}
}

/* ---- validators: 1 when s is acceptable ---- */

int config_valid_name(const char *s)
{
	size_t n;

	if (!s || !*s || *s == '-' || *s == '.')
		return 0;
	for (n = 0; s[n]; n++) {
		char ch = s[n];

		if (n >= NAME_MAX_LEN)
			return 0;
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-'))
			return 0;
	}
	return 1;
}

static int valid_user(const char *s)
{
	size_t n;

	if (!*s || *s == '-')
		return 0;
	for (n = 0; s[n]; n++) {
		char ch = s[n];

		if (n >= USER_MAX_LEN)
			return 0;
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-'))
			return 0;
	}
	return 1;
}

/* An IP literal, IPv6 without brackets. */
static int valid_ip(const char *s)
{
	unsigned char addr[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, s, addr) == 1 || inet_pton(AF_INET6, s, addr) == 1;
}

/* An IP literal or a DNS name: it reaches ssh arguments and log lines, so
 * nothing but [A-Za-z0-9.-] in labels. */
static int valid_host(const char *s)
{
	size_t n, label = 0;

	if (valid_ip(s))
		return 1;
	n = strlen(s);
	if (!n || n > HOST_MAX_LEN)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];

		if (ch == '.') {
			if (!label)
				return 0;	/* empty label, or a leading dot */
			label = 0;
			continue;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '-'))
			return 0;
		if (ch == '-' && !label)
			return 0;	/* a label (and the name) cannot start with '-' */
		if (++label > 63)
			return 0;
	}
	return 1;
}

/* Paths and URLs end up as arguments of ssh, git, make: no control
 * characters, and no leading '-' that a command would read as an option. */
static int valid_path(const char *s)
{
	size_t n;

	if (!*s || *s == '-')
		return 0;
	for (n = 0; s[n]; n++) {
		unsigned char ch = (unsigned char)s[n];

		if (n >= PATH_MAX_LEN || ch < 0x20 || ch == 0x7f)
			return 0;
	}
	return 1;
}

/* An argv element run without a shell: anything but NUL, bounded. */
static int valid_arg(const char *s)
{
	return strlen(s) <= ARG_MAX_LEN;
}

static int valid_host_key(const char *s)
{
	static const char prefix[] = "SHA256:";
	size_t n;

	if (strncmp(s, prefix, sizeof(prefix) - 1))
		return 0;
	s += sizeof(prefix) - 1;
	for (n = 0; s[n]; n++) {
		char ch = s[n];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '+' || ch == '/'))
			break;
	}
	/* ssh-keygen prints it unpadded; accept a pasted '=' too */
	return n == HOST_KEY_B64_LEN && (!s[n] || (s[n] == '=' && !s[n + 1]));
}

static int is_alnum(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

/*
 * A program run on a lab host (qemu's binary). Transports may hand it to a
 * remote shell, so it is a bare name looked up in PATH or an absolute path,
 * of characters no shell treats specially.
 */
static int valid_program(const char *s)
{
	size_t n;

	if (!*s || *s == '-' || *s == '.')
		return 0;
	for (n = 0; s[n]; n++) {
		char ch = s[n];

		if (n >= PATH_MAX_LEN)
			return 0;
		if (!is_alnum(ch) && ch != '.' && ch != '_' && ch != '+' && ch != '-' && ch != '/')
			return 0;
		if (ch == '/' && *s != '/')
			return 0;	/* relative to what? neither a name nor absolute */
	}
	return s[n - 1] != '/';
}

/*
 * A kernel command line (qemu -append, kexec --append). It reaches the
 * remote kexec through a shell command, so only words of a safe set of
 * characters, separated by spaces; at least one word (to keep the running
 * kernel's command line, leave the key out).
 */
static int valid_cmdline(const char *s)
{
	int words = 0;

	for (size_t n = 0; s[n]; n++) {
		char ch = s[n];

		if (n >= CMDLINE_MAX_LEN)
			return 0;
		if (ch == ' ')
			continue;
		if (!is_alnum(ch) && !strchr("._,=:/+-", ch))
			return 0;
		if (n == 0 || s[n - 1] == ' ')
			words++;
	}
	return words > 0;
}

/* Bearer tokens: printable ASCII without spaces, so they survive headers. */
static int valid_token_n(const char *s, size_t len)
{
	if (len < TOKEN_MIN_LEN || len > TOKEN_MAX_LEN)
		return 0;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

static int valid_token(const char *s)
{
	return valid_token_n(s, strlen(s));
}

#define MUST_NAME	"a name of 1 to 64 letters, digits, '.', '_' or '-', " \
			"not starting with '-' or '.'"
#define MUST_PATH	"a non-empty path without control characters, not starting with '-'"
#define MUST_HOST	"an IP address or a host name of letters, digits, '.' and '-'"
#define MUST_FETCH_ALLOW "an IP address, a CIDR (10.0.0.0/8, fd00::/8) or a host name of letters, " \
			"digits, '.' and '-'"
#define MUST_USER	"a user name of letters, digits, '.', '_' and '-', not starting with '-'"
#define MUST_HOST_KEY	"SHA256: followed by 43 base64 characters (as ssh-keygen -lf prints)"
#define MUST_TOKEN	"a token of 16 to 4096 printable characters without spaces"
#define MUST_URL	"a path or git URL without control characters, not starting with '-'"
#define MUST_CONFIG_BASE "tinyconfig, defconfig or a config file path without control " \
			"characters, not starting with '-'"
#define MUST_ARG	"a string of at most 4096 bytes"
#define MUST_PROGRAM	"a program name or an absolute path of letters, digits, '.', '_', " \
			"'+', '-' and '/', not starting with '-' or '.'"
#define MUST_IP		"an IPv4 or IPv6 address (without brackets)"
#define MUST_CMDLINE	"a kernel command line of at most 1024 characters: words of " \
			"letters, digits and '._,=:/+-' separated by spaces"
#define EXAMPLE_TOKEN_FIX "it is the example token of configs/lab.example.yaml, known to " \
			"everyone; make a token of your own (e.g. head -c 24 /dev/urandom | od -An -tx1 " \
			"| tr -d ' \\n')"

/* ---- value getters: report an error and return -1 (or NULL) ---- */

static int get_int(struct cfg_ctx *c, const char *key, yaml_node_t *n, long min, long max,
		   long *ret)
{
	const char *s = scalar(n);

	if (!s || parse_int_range(s, min, max, ret) < 0) {
		node_error(c, n, "%s: must be an integer from %ld to %ld", key, min, max);
		return -1;
	}
	return 0;
}

static int get_seconds(struct cfg_ctx *c, const char *key, yaml_node_t *n, double *ret)
{
	double v;

	if (spec_parse_seconds(scalar(n), &v) < 0 || v < TIMEOUT_MIN || v > TIMEOUT_MAX) {
		node_error(c, n, "%s: must be a number from %d to %d seconds, " SPEC_SECONDS_FORMS,
			   key, TIMEOUT_MIN, TIMEOUT_MAX);
		return -1;
	}
	*ret = v;
	return 0;
}

/* A byte count from min to max; lo and hi are the bounds as messages show them. */
static int get_bytes(struct cfg_ctx *c, const char *key, yaml_node_t *n, uint64_t min,
		     uint64_t max, const char *lo, const char *hi, uint64_t *ret)
{
	uint64_t v;

	if (spec_parse_bytes(scalar(n), &v) < 0 || v < min || v > max) {
		node_error(c, n, "%s: must be a number of bytes from %s to %s: " SPEC_BYTES_FORMS,
			   key, lo, hi);
		return -1;
	}
	*ret = v;
	return 0;
}

static int get_bool(struct cfg_ctx *c, const char *key, yaml_node_t *n, int *ret)
{
	const char *s = scalar(n);

	if (s && (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))) {
		*ret = 1;
		return 0;
	}
	if (s && (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))) {
		*ret = 0;
		return 0;
	}
	node_error(c, n, "%s: must be true or false", key);
	return -1;
}

/* A copy of the string value of n when valid(s), else NULL with an error. */
static char *get_str(struct cfg_ctx *c, const char *key, yaml_node_t *n,
		     int (*valid)(const char *), const char *must)
{
	const char *s = scalar(n);

	if (!s || is_null(n) || !valid(s)) {
		node_error(c, n, "%s: must be %s", key, must);
		return NULL;
	}
	return xstrdup(s);
}

/* Index of n's value in names[0..count), or -1 with an error listing them. */
static int get_enum(struct cfg_ctx *c, const char *key, yaml_node_t *n,
		    const char *(*name_of)(int), int count)
{
	const char *s = scalar(n);
	struct strbuf list = STRBUF_INIT;

	for (int i = 0; s && i < count; i++)
		if (!strcmp(s, name_of(i)))
			return i;
	for (int i = 0; i < count; i++)
		strbuf_addf(&list, "%s%s", i ? (i == count - 1 ? " or " : ", ") : "", name_of(i));
	node_error(c, n, "%s: must be %s", key, list.buf);
	strbuf_release(&list);
	return -1;
}

/*
 * A NULL-terminated copy of the list of strings n (null is an empty list),
 * each checked with valid(); bad items are reported and left out. *ret_n
 * gets the count. Returns NULL, with an error, when n is not a list.
 */
static char **get_list(struct cfg_ctx *c, const char *key, yaml_node_t *n,
		       int (*valid)(const char *), const char *must, size_t *ret_n)
{
	char **v;
	size_t count = 0, i = 0;

	if (is_null(n)) {
		*ret_n = 0;
		return xcalloc(1, sizeof(*v));
	}
	if (n->type != YAML_SEQUENCE_NODE) {
		node_error(c, n, "%s: must be a list, each item %s", key, must);
		return NULL;
	}
	count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (count > LIST_MAX) {
		node_error(c, n, "%s: must have at most %d items", key, LIST_MAX);
		return NULL;
	}
	v = xcalloc(count + 1, sizeof(*v));
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		yaml_node_t *item = node_get(c, *it);
		const char *s = scalar(item);

		if (!s || is_null(item) || !valid(s)) {
			node_error(c, item, "%s[%td]: must be %s", key,
				   it - n->data.sequence.items.start, must);
			continue;
		}
		v[i++] = xstrdup(s);
	}
	*ret_n = i;
	return v;
}

/* Appends the NULL-terminated add[0..nadd) to cfg->tokens, taking the strings. */
static void tokens_append(struct lab_config *cfg, char **add, size_t nadd)
{
	char **v = realloc(cfg->tokens, (cfg->ntokens + nadd + 1) * sizeof(*v));

	if (!v)
		abort();
	memcpy(v + cfg->ntokens, add, nadd * sizeof(*v));
	cfg->ntokens += nadd;
	v[cfg->ntokens] = NULL;
	cfg->tokens = v;
}

/*
 * Reads a whole regular file of at most max bytes into sb. Returns 0 or a
 * negative errno (-EFBIG when larger, -EINVAL when not a regular file).
 */
static int read_regular_file(const char *path, struct strbuf *sb, size_t max)
{
	struct stat st;
	int fd, r;

	/* O_NONBLOCK: a FIFO must not hang the open; no effect on regular files */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto out;
	}
	if ((size_t)st.st_size > max) {
		r = -EFBIG;
		goto out;
	}
	r = strbuf_read_fd(sb, fd, max);
out:
	close(fd);
	return r;
}

static const char *read_error_text(int r, size_t max, char *buf, size_t size)
{
	if (r == -EFBIG)
		snprintf(buf, size, "larger than %zu KiB", max >> 10);
	else if (r == -EINVAL)
		snprintf(buf, size, "not a regular file");
	else
		snprintf(buf, size, "%s", strerror(-r));
	return buf;
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

	r = read_regular_file(path, &text, TOKEN_FILE_MAX_BYTES);
	if (r < 0) {
		node_error(c, n, "token_file: cannot read %s: %s", path,
			   read_error_text(r, TOKEN_FILE_MAX_BYTES, why, sizeof(why)));
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
		if (!valid_token_n(line + start, end - start)) {
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

/* ---- YAML to JSON, for workload specs ---- */

/* [-+]?[0-9]+ */
static int looks_integer(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/* [-+]?(digits)?(.digits)?([eE][-+]?digits)? with a digit in the mantissa;
 * strtod alone would also take "nan", "inf" and hex. */
static int looks_real(const char *s)
{
	int digits = 0;

	if (*s == '-' || *s == '+')
		s++;
	for (; *s >= '0' && *s <= '9'; s++)
		digits++;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			digits++;
	if (!digits)
		return 0;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+')
			s++;
		if (*s < '0' || *s > '9')
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return !*s;
}

static json_t *scalar_to_json(const yaml_node_t *n)
{
	const char *s = (const char *)n->data.scalar.value;
	size_t len = n->data.scalar.length;

	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return json_stringn(s, len);
	if (is_null(n))
		return json_null();
	if (!strcmp(s, "true"))
		return json_true();
	if (!strcmp(s, "false"))
		return json_false();
	if (looks_integer(s)) {
		char *end;
		long long v;
		int saved = errno;

		errno = 0;
		v = strtoll(s, &end, 10);
		if (!errno && !*end) {
			errno = saved;
			return json_integer((json_int_t)v);
		}
		errno = saved;	/* out of range: a real below */
	}
	if (looks_real(s)) {
		double v;

		if (parse_double(s, &v) == 0)
			return json_real(v);
	}
	return json_stringn(s, len);
}

/* The JSON form of n, or NULL after reporting every error in it. */
static json_t *node_to_json(struct cfg_ctx *c, yaml_node_t *n, int depth)
{
	json_t *j = NULL;
	int failed = 0;

	if (depth > JSON_MAX_DEPTH || c->json_budget == 0) {
		if (!c->json_limit_reported)
			node_error(c, n, "workload spec too large or nested deeper than %d levels",
				   JSON_MAX_DEPTH);
		c->json_limit_reported = 1;
		return NULL;
	}
	c->json_budget--;

	switch (n->type) {
	case YAML_SCALAR_NODE:
		j = scalar_to_json(n);
		if (!j)
			node_error(c, n, "value is not valid UTF-8 text");
		return j;
	case YAML_SEQUENCE_NODE:
		j = json_array();
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++) {
			json_t *v = node_to_json(c, node_get(c, *it), depth + 1);

			if (!v)
				failed = 1;
			else
				json_array_append_new(j, v);
		}
		break;
	case YAML_MAPPING_NODE:
		j = json_object();
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *kn = node_get(c, p->key);
			const char *k = scalar(kn);
			json_t *v;

			if (!k) {
				node_error(c, kn, "keys must be strings");
				failed = 1;
				continue;
			}
			if (json_object_get(j, k)) {
				node_error(c, kn, "duplicate key '%s'", k);
				failed = 1;
				continue;
			}
			v = node_to_json(c, node_get(c, p->value), depth + 1);
			if (!v || json_object_set_new(j, k, v) < 0) {
				if (v) {
					node_error(c, kn, "key is not valid UTF-8 text");
					json_decref(v);
				}
				failed = 1;
			}
		}
		break;
	default:
		node_error(c, n, "unexpected YAML node");
		return NULL;
	}
	if (failed) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* ---- sections ---- */

/* The first line of a mapping, for the `line` fields. */
static int node_line(const yaml_node_t *n)
{
	return (int)n->start_mark.line + 1;
}

/* "machine 'm1'", or "machines[2]" when the item has no valid name. */
static void item_label(struct cfg_ctx *c, yaml_node_t *map, const char *kind,
		       const char *section, size_t index, char *buf, size_t size)
{
	const char *name = scalar(map_find(c, map, "name"));

	if (name && config_valid_name(name))
		snprintf(buf, size, "%s '%s'", kind, name);
	else
		snprintf(buf, size, "%s[%zu]", section, index);
}

static void missing_key(struct cfg_ctx *c, yaml_node_t *map, const char *key,
			const char *what, const char *why)
{
	node_error(c, map, "missing key '%s' in %s%s", key, what, why);
}

/*
 * Records name (the value node n) in the set `seen` of one section and
 * reports a duplicate. Returns the name, or NULL when missing or invalid.
 */
static char *get_name(struct cfg_ctx *c, yaml_node_t *map, yaml_node_t *n, const char *kind,
		      const char *what, json_t *seen)
{
	json_t *first;
	char *name;

	if (!n) {
		missing_key(c, map, "name", what, "");
		return NULL;
	}
	name = get_str(c, "name", n, config_valid_name, MUST_NAME);
	if (!name)
		return NULL;
	first = json_object_get(seen, name);
	if (first)
		node_error(c, n, "duplicate %s name '%s' (first defined at line %lld)", kind,
			   name, (long long)json_integer_value(first));
	else
		json_object_set_new(seen, name, json_integer(node_line(n)));
	return name;
}

static const char *transport_name_int(int i)
{
	return transport_kind_name((enum transport_kind)i);
}

static const char *boot_name_int(int i)
{
	return boot_method_name((enum boot_method)i);
}

/* Keys shared by machines and builders, in this order at the start of both tables. */
enum {
	EK_NAME, EK_TRANSPORT, EK_HOST_GROUP, EK_HOST, EK_PORT, EK_USER, EK_IDENTITY, EK_KNOWN_HOSTS,
	EK_HOST_KEY, EK_MAX
};
#define ENDPOINT_KEYS "name", "transport", "host_group", "host", "port", "user", "identity", \
	"known_hosts", "host_key"

static void parse_endpoint(struct cfg_ctx *c, yaml_node_t *map, const struct keyset *ks,
			   const char *what, struct cfg_endpoint *ep)
{
	int kind = -1;
	long port;

	ep->port = 22;
	if (!ks->val[EK_TRANSPORT])
		missing_key(c, map, "transport", what, " (local or ssh)");
	else
		kind = get_enum(c, "transport", ks->val[EK_TRANSPORT], transport_name_int,
				TRANSPORT_KIND_MAX);
	if (kind >= 0)
		ep->transport = (enum transport_kind)kind;

	if (ks->val[EK_HOST_GROUP])
		ep->host_group = get_str(c, "host_group", ks->val[EK_HOST_GROUP], config_valid_name,
					 MUST_NAME);
	if (ks->val[EK_HOST])
		ep->host = get_str(c, "host", ks->val[EK_HOST], valid_host, MUST_HOST);
	if (ks->val[EK_PORT] && get_int(c, "port", ks->val[EK_PORT], 1, 65535, &port) == 0)
		ep->port = (int)port;
	if (ks->val[EK_USER])
		ep->user = get_str(c, "user", ks->val[EK_USER], valid_user, MUST_USER);
	else
		ep->user = xstrdup("root");
	if (ks->val[EK_IDENTITY])
		ep->identity = get_str(c, "identity", ks->val[EK_IDENTITY], valid_path, MUST_PATH);
	if (ks->val[EK_KNOWN_HOSTS])
		ep->known_hosts = get_str(c, "known_hosts", ks->val[EK_KNOWN_HOSTS], valid_path,
					  MUST_PATH);
	if (ks->val[EK_HOST_KEY])
		ep->host_key = get_str(c, "host_key", ks->val[EK_HOST_KEY], valid_host_key,
				       MUST_HOST_KEY);

	if (kind == TRANSPORT_SSH) {
		if (!ks->val[EK_HOST])
			missing_key(c, map, "host", what, " (required with transport ssh)");
		if (!ks->val[EK_IDENTITY])
			missing_key(c, map, "identity", what, " (required with transport ssh)");
		if (!ks->val[EK_KNOWN_HOSTS] && !ks->val[EK_HOST_KEY])
			node_error(c, map, "missing key 'known_hosts' or 'host_key' in %s "
				   "(transport ssh checks the host key strictly)", what);
	} else if (kind == TRANSPORT_LOCAL) {
		/* a remote setting on a local endpoint is a mistake, not a default */
		for (int i = EK_HOST; i < EK_MAX; i++)
			if (ks->key[i])
				node_error(c, ks->key[i], "%s: only used with transport ssh (in %s)",
					   scalar(ks->key[i]), what);
	}
}

static const char *const qemu_keys[] = {
	"binary", "memory", "accel", "initrd", "guest_host", "ssh_port", "identity",
	"host_key", "known_hosts", "append", "pin_vcpus", NULL
};
enum { QK_BINARY, QK_MEMORY, QK_ACCEL, QK_INITRD, QK_GUEST_HOST, QK_SSH_PORT, QK_IDENTITY,
       QK_HOST_KEY, QK_KNOWN_HOSTS, QK_APPEND, QK_PIN_VCPUS, QK_MAX };
KEYS_MATCH(qemu_keys, QK_MAX);

static const char *const qemu_accels[] = { "auto", "kvm", "tcg" };

static const char *qemu_accel_name_int(int i)
{
	return qemu_accels[i];
}

static const char *const qemu_pins[] = {
	[QEMU_PIN_AUTO] = "auto", [QEMU_PIN_ON] = "on", [QEMU_PIN_OFF] = "off",
};

static const char *qemu_pin_name_int(int i)
{
	return qemu_pins[i];
}

/* The qemu: section n of machine `machine` (boot: qemu), or NULL after an error. */
static struct cfg_qemu *parse_qemu(struct cfg_ctx *c, yaml_node_t *n, const char *machine)
{
	struct cfg_qemu *q;
	struct keyset ks;
	char what[128];
	long v;
	int accel = 0;

	if (!is_mapping(n)) {
		node_error(c, n, "qemu: must be a mapping (initrd, ssh_port, identity, and "
			   "host_key or known_hosts are required)");
		return NULL;
	}
	snprintf(what, sizeof(what), "the qemu section of %s", machine);
	map_keys(c, n, qemu_keys, what, "key", &ks);
	q = xcalloc(1, sizeof(*q));
	q->binary = ks.val[QK_BINARY]
		? get_str(c, "binary", ks.val[QK_BINARY], valid_program, MUST_PROGRAM)
		: xstrdup("qemu-system-x86_64");
	q->memory = 1024;
	if (ks.val[QK_MEMORY] && get_int(c, "memory", ks.val[QK_MEMORY], QEMU_MEMORY_MIN,
					 QEMU_MEMORY_MAX, &v) == 0)
		q->memory = (int)v;
	if (ks.val[QK_ACCEL])
		accel = get_enum(c, "accel", ks.val[QK_ACCEL], qemu_accel_name_int,
				 (int)ARRAY_SIZE(qemu_accels));
	if (accel >= 0)
		q->accel = xstrdup(qemu_accels[accel]);
	if (ks.val[QK_INITRD])
		q->initrd = get_str(c, "initrd", ks.val[QK_INITRD], valid_path, MUST_PATH);
	else
		missing_key(c, n, "initrd", what, " (the guest's initramfs)");
	q->guest_host = ks.val[QK_GUEST_HOST]
		? get_str(c, "guest_host", ks.val[QK_GUEST_HOST], valid_ip, MUST_IP)
		: xstrdup("127.0.0.1");
	if (ks.val[QK_SSH_PORT]) {
		if (get_int(c, "ssh_port", ks.val[QK_SSH_PORT], 1, 65535, &v) == 0)
			q->ssh_port = (int)v;
	} else {
		missing_key(c, n, "ssh_port", what, " (the host port forwarded to the guest's "
			    "SSH)");
	}
	if (ks.val[QK_IDENTITY])
		q->identity = get_str(c, "identity", ks.val[QK_IDENTITY], valid_path, MUST_PATH);
	else
		missing_key(c, n, "identity", what, " (the private key for root on the guest)");
	if (ks.val[QK_HOST_KEY])
		q->host_key = get_str(c, "host_key", ks.val[QK_HOST_KEY], valid_host_key,
				      MUST_HOST_KEY);
	if (ks.val[QK_KNOWN_HOSTS])
		q->known_hosts = get_str(c, "known_hosts", ks.val[QK_KNOWN_HOSTS], valid_path,
					 MUST_PATH);
	if (!ks.val[QK_HOST_KEY] && !ks.val[QK_KNOWN_HOSTS])
		node_error(c, n, "missing key 'known_hosts' or 'host_key' in %s "
			   "(the guest's host key is checked strictly)", what);
	if (ks.val[QK_APPEND])
		q->append = get_str(c, "append", ks.val[QK_APPEND], valid_cmdline, MUST_CMDLINE);
	if (ks.val[QK_PIN_VCPUS]) {
		int pin = get_enum(c, "pin_vcpus", ks.val[QK_PIN_VCPUS], qemu_pin_name_int, QEMU_PIN_MAX);

		if (pin >= 0)
			q->pin_vcpus = (enum qemu_pin)pin;
	}
	return q;
}

static void qemu_free(struct cfg_qemu *q)
{
	if (!q)
		return;
	free(q->binary);
	free(q->accel);
	free(q->initrd);
	free(q->guest_host);
	free(q->identity);
	free(q->host_key);
	free(q->known_hosts);
	free(q->append);
	free(q);
}

static const char *const kexec_keys[] = { "append", "initrd", NULL };
enum { XK_APPEND, XK_INITRD, XK_MAX };
KEYS_MATCH(kexec_keys, XK_MAX);

/* The kexec: section n of machine `machine` (boot: kexec), or NULL after an error. */
static struct cfg_kexec *parse_kexec(struct cfg_ctx *c, yaml_node_t *n, const char *machine)
{
	struct cfg_kexec *k;
	struct keyset ks;
	char what[128];

	if (!is_mapping(n)) {
		node_error(c, n, "kexec: must be a mapping (with the optional keys append and "
			   "initrd)");
		return NULL;
	}
	snprintf(what, sizeof(what), "the kexec section of %s", machine);
	map_keys(c, n, kexec_keys, what, "key", &ks);
	k = xcalloc(1, sizeof(*k));
	if (ks.val[XK_APPEND])
		k->append = get_str(c, "append", ks.val[XK_APPEND], valid_cmdline, MUST_CMDLINE);
	if (ks.val[XK_INITRD])
		k->initrd = get_str(c, "initrd", ks.val[XK_INITRD], valid_path, MUST_PATH);
	return k;
}

static void kexec_free(struct cfg_kexec *k)
{
	if (!k)
		return;
	free(k->append);
	free(k->initrd);
	free(k);
}

static const char *const reboot_keys[] = {
	"append", "kernel_dir", "grub_dir", "initrd", "entry_file", "once", "command", NULL
};
enum { RB_APPEND, RB_KERNEL_DIR, RB_GRUB_DIR, RB_INITRD, RB_ENTRY_FILE, RB_ONCE, RB_COMMAND, RB_MAX };
KEYS_MATCH(reboot_keys, RB_MAX);

/* A file name in a directory: no slash, nothing a GRUB script or a shell
 * would read specially. */
static int valid_file_name(const char *s)
{
	return config_valid_name(s);
}

#define MUST_FILE_NAME	"a file name of 1 to 64 letters, digits, '.', '_' or '-'"
/* GRUB reads these paths in its own script language: plain characters only */
#define MUST_GRUB_PATH	"an absolute path of letters, digits and '._/-'"

static int valid_grub_path(const char *s)
{
	size_t n;

	if (*s != '/')
		return 0;
	for (n = 0; s[n]; n++)
		if (n >= PATH_MAX_LEN || (!is_alnum(s[n]) && !strchr("._/-", s[n])))
			return 0;
	return 1;
}

/* An argv list (non-empty, a program name first) or NULL after an error. */
static char **get_argv(struct cfg_ctx *c, const char *key, yaml_node_t *n)
{
	size_t count = 0;
	char **v = get_list(c, key, n, valid_arg, MUST_ARG, &count);

	if (v && (count == 0 || !*v[0])) {
		node_error(c, n, "%s: must be a command as a list of strings (argv), with a non-empty "
			   "program name first", key);
		strv_free(v);
		return NULL;
	}
	return v;
}

static char **argv_of(const char *const *words)
{
	size_t n = 0;
	char **v;

	while (words[n])
		n++;
	v = xcalloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = xstrdup(words[i]);
	return v;
}

/* The reboot: section n (or NULL: all defaults) of machine `machine`. */
static struct cfg_reboot *parse_reboot(struct cfg_ctx *c, yaml_node_t *n, const char *machine)
{
	static const char *const once_default[] = { "grub-reboot", "{entry}", NULL };
	static const char *const command_default[] = { "reboot", NULL };
	struct cfg_reboot *r = xcalloc(1, sizeof(*r));
	struct keyset ks;
	char what[128];

	memset(&ks, 0, sizeof(ks));
	if (n && !is_mapping(n)) {
		node_error(c, n, "reboot: must be a mapping (append, kernel_dir, grub_dir, initrd, "
			   "entry_file, once, command)");
	} else if (n) {
		snprintf(what, sizeof(what), "the reboot section of %s", machine);
		map_keys(c, n, reboot_keys, what, "key", &ks);
	}
	if (ks.val[RB_APPEND])
		r->append = get_str(c, "append", ks.val[RB_APPEND], valid_cmdline, MUST_CMDLINE);
	r->kernel_dir = ks.val[RB_KERNEL_DIR]
		? get_str(c, "kernel_dir", ks.val[RB_KERNEL_DIR], valid_grub_path, MUST_GRUB_PATH)
		: xstrdup("/boot");
	if (ks.val[RB_GRUB_DIR])
		r->grub_dir = get_str(c, "grub_dir", ks.val[RB_GRUB_DIR], valid_grub_path, MUST_GRUB_PATH);
	else if (r->kernel_dir)
		r->grub_dir = xstrdup(r->kernel_dir);
	if (ks.val[RB_INITRD])
		r->initrd = get_str(c, "initrd", ks.val[RB_INITRD], valid_file_name, MUST_FILE_NAME);
	r->entry_file = ks.val[RB_ENTRY_FILE]
		? get_str(c, "entry_file", ks.val[RB_ENTRY_FILE], valid_path, MUST_PATH)
		: xstrdup("/boot/grub/custom.cfg");
	r->once = ks.val[RB_ONCE] ? get_argv(c, "once", ks.val[RB_ONCE]) : argv_of(once_default);
	r->command = ks.val[RB_COMMAND] ? get_argv(c, "command", ks.val[RB_COMMAND])
					: argv_of(command_default);
	return r;
}

static void reboot_free(struct cfg_reboot *r)
{
	if (!r)
		return;
	free(r->append);
	free(r->kernel_dir);
	free(r->grub_dir);
	free(r->initrd);
	free(r->entry_file);
	strv_free(r->once);
	strv_free(r->command);
	free(r);
}

static const char *const machine_keys[] = {
	ENDPOINT_KEYS, "arch", "cpus", "tags", "boot", "power_cycle", "agent_path", "workdir",
	"qemu", "kexec", "reboot", "boot_timeout", NULL
};
enum { MK_ARCH = EK_MAX, MK_CPUS, MK_TAGS, MK_BOOT, MK_POWER_CYCLE, MK_AGENT_PATH, MK_WORKDIR,
       MK_QEMU, MK_KEXEC, MK_REBOOT, MK_BOOT_TIMEOUT, MK_MAX };
KEYS_MATCH(machine_keys, MK_MAX);

static void parse_machine(struct cfg_ctx *c, yaml_node_t *map, size_t index, json_t *seen,
			  struct cfg_machine *m)
{
	struct keyset ks;
	char what[96];
	long v;
	int b;

	item_label(c, map, "machine", "machines", index, what, sizeof(what));
	map_keys(c, map, machine_keys, what, "key", &ks);
	m->line = node_line(map);
	m->name = get_name(c, map, ks.val[EK_NAME], "machine", what, seen);
	parse_endpoint(c, map, &ks, what, &m->ep);

	m->arch = ks.val[MK_ARCH] ? get_str(c, "arch", ks.val[MK_ARCH], config_valid_name,
					    MUST_NAME)
				  : xstrdup("x86_64");
	if (ks.val[MK_CPUS] && get_int(c, "cpus", ks.val[MK_CPUS], 0, 4096, &v) == 0)
		m->cpus = (int)v;
	if (ks.val[MK_TAGS])
		m->tags = get_list(c, "tags", ks.val[MK_TAGS], config_valid_name, MUST_NAME,
				   &m->ntags);
	if (!m->tags)
		m->tags = xcalloc(1, sizeof(*m->tags));
	m->boot = BOOT_NONE;
	b = BOOT_NONE;
	if (ks.val[MK_BOOT]) {
		b = get_enum(c, "boot", ks.val[MK_BOOT], boot_name_int, BOOT_METHOD_MAX);
		if (b >= 0)
			m->boot = (enum boot_method)b;
	}
	/* with an unknown boot method (b < 0, reported) neither section can be judged */
	if (ks.val[MK_QEMU] && b == BOOT_QEMU)
		m->qemu = parse_qemu(c, ks.val[MK_QEMU], what);
	else if (ks.val[MK_QEMU] && b >= 0)
		node_error(c, ks.key[MK_QEMU], "qemu: only for boot: qemu (in %s)", what);
	else if (b == BOOT_QEMU)
		missing_key(c, map, "qemu", what, " (required with boot: qemu)");
	/* kexec: ~ is no section, as it would be for any optional key */
	if (ks.val[MK_KEXEC] && b == BOOT_KEXEC && !is_null(ks.val[MK_KEXEC]))
		m->kexec = parse_kexec(c, ks.val[MK_KEXEC], what);
	else if (ks.val[MK_KEXEC] && b >= 0 && b != BOOT_KEXEC)
		node_error(c, ks.key[MK_KEXEC], "kexec: only for boot: kexec (in %s)", what);
	if (b == BOOT_REBOOT)
		m->reboot = parse_reboot(c, ks.val[MK_REBOOT] && !is_null(ks.val[MK_REBOOT])
					 ? ks.val[MK_REBOOT] : NULL, what);
	else if (ks.val[MK_REBOOT] && b >= 0)
		node_error(c, ks.key[MK_REBOOT], "reboot: only for boot: reboot (in %s)", what);
	if (ks.val[MK_POWER_CYCLE] && !is_null(ks.val[MK_POWER_CYCLE])) {
		size_t n = 0;

		m->power_cycle = get_list(c, "power_cycle", ks.val[MK_POWER_CYCLE], valid_arg,
					  MUST_ARG, &n);
		/* bad items were reported by get_list: only an empty command is left */
		if (m->power_cycle && (ks.val[MK_POWER_CYCLE]->data.sequence.items.top ==
				       ks.val[MK_POWER_CYCLE]->data.sequence.items.start ||
				       (n > 0 && !*m->power_cycle[0])))
			node_error(c, ks.val[MK_POWER_CYCLE],
				   "power_cycle: must be a command as a list of strings (argv), "
				   "with a non-empty program name first");
	}
	m->agent_path = ks.val[MK_AGENT_PATH]
		? get_str(c, "agent_path", ks.val[MK_AGENT_PATH], valid_path, MUST_PATH)
		: xstrdup("/tmp/tlblab-agent");
	if (ks.val[MK_BOOT_TIMEOUT])
		get_seconds(c, "boot_timeout", ks.val[MK_BOOT_TIMEOUT], &m->boot_timeout);
	m->workdir = ks.val[MK_WORKDIR]
		? get_str(c, "workdir", ks.val[MK_WORKDIR], valid_path, MUST_PATH)
		: xstrdup("/tmp/tlblab");
}

static const char *const builder_keys[] = { ENDPOINT_KEYS, "jobs", "workdir", "ccache", NULL };
enum { BK_JOBS = EK_MAX, BK_WORKDIR, BK_CCACHE, BK_MAX };
KEYS_MATCH(builder_keys, BK_MAX);

static void parse_builder(struct cfg_ctx *c, yaml_node_t *map, size_t index, json_t *seen,
			  struct cfg_builder *b)
{
	struct keyset ks;
	char what[96];
	long v;

	item_label(c, map, "builder", "builders", index, what, sizeof(what));
	map_keys(c, map, builder_keys, what, "key", &ks);
	b->line = node_line(map);
	b->name = get_name(c, map, ks.val[EK_NAME], "builder", what, seen);
	parse_endpoint(c, map, &ks, what, &b->ep);
	b->jobs = 2;
	if (ks.val[BK_JOBS] && get_int(c, "jobs", ks.val[BK_JOBS], 1, 256, &v) == 0)
		b->jobs = (int)v;
	b->workdir = ks.val[BK_WORKDIR]
		? get_str(c, "workdir", ks.val[BK_WORKDIR], valid_path, MUST_PATH)
		: xstrdup("/var/cache/tlblab");
	if (ks.val[BK_CCACHE])
		b->ccache = get_str(c, "ccache", ks.val[BK_CCACHE], valid_path, MUST_PATH);
}

static const char *const tree_keys[] = {
	"name", "url", "builder", "config_base", "fragments", NULL
};
enum { TK_NAME, TK_URL, TK_BUILDER, TK_CONFIG_BASE, TK_FRAGMENTS, TK_MAX };
KEYS_MATCH(tree_keys, TK_MAX);

static void parse_tree(struct cfg_ctx *c, yaml_node_t *map, size_t index, json_t *seen,
		       struct cfg_tree *t)
{
	struct keyset ks;
	char what[96];

	item_label(c, map, "tree", "trees", index, what, sizeof(what));
	map_keys(c, map, tree_keys, what, "key", &ks);
	t->line = node_line(map);
	t->name = get_name(c, map, ks.val[TK_NAME], "tree", what, seen);
	if (ks.val[TK_URL])
		t->url = get_str(c, "url", ks.val[TK_URL], valid_path, MUST_URL);
	else
		missing_key(c, map, "url", what, " (a path or git URL)");
	if (ks.val[TK_BUILDER]) {
		t->builder = get_str(c, "builder", ks.val[TK_BUILDER], config_valid_name,
				     MUST_NAME);
		if (t->builder && !config_builder(c->cfg, t->builder))
			node_error(c, ks.val[TK_BUILDER], "builder: no builder named '%s'",
				   t->builder);
	} else {
		missing_key(c, map, "builder", what, "");
	}
	t->config_base = ks.val[TK_CONFIG_BASE]
		? get_str(c, "config_base", ks.val[TK_CONFIG_BASE], valid_path, MUST_CONFIG_BASE)
		: xstrdup("tinyconfig");
	if (ks.val[TK_FRAGMENTS])
		t->fragments = get_list(c, "fragments", ks.val[TK_FRAGMENTS], valid_path,
					MUST_PATH, &t->nfragments);
	if (!t->fragments)
		t->fragments = xcalloc(1, sizeof(*t->fragments));
}

static const char *const suite_keys[] = { "name", "timeout", "workloads", "compare", NULL };
enum { SK_NAME, SK_TIMEOUT, SK_WORKLOADS, SK_COMPARE, SK_MAX };
KEYS_MATCH(suite_keys, SK_MAX);

#define MUST_FRACTION	"a percentage like 2% or a fraction from 0 to 1"
#define MUST_ALPHA	"a significance level above 0 and below 1, like 0.01"
#define MUST_PATTERN	"a metric name or pattern of 1 to 128 letters, digits and '._-*?[]'"
#define MAX_OVERRIDES	256

/* A share: "2%" or 0.02, from 0 to 1. */
static int get_fraction(struct cfg_ctx *c, const char *key, yaml_node_t *n, double *ret)
{
	const char *s = scalar(n);
	char num[64];
	size_t len = s ? strlen(s) : 0;
	double v, scale = 1;

	if (len && len < sizeof(num) && s[len - 1] == '%') {
		memcpy(num, s, len - 1);
		num[len - 1] = '\0';
		s = num;
		scale = 100;
	}
	if (!s || !len || (*s != '.' && (*s < '0' || *s > '9')) || parse_double(s, &v) < 0 ||
	    v / scale > 1) {
		node_error(c, n, "%s: must be %s", key, MUST_FRACTION);
		return -1;
	}
	*ret = v / scale;
	return 0;
}

static int get_alpha(struct cfg_ctx *c, const char *key, yaml_node_t *n, double *ret)
{
	const char *s = scalar(n);
	double v;

	if (!s || (*s != '.' && (*s < '0' || *s > '9')) || parse_double(s, &v) < 0 || !(v > 0 && v < 1)) {
		node_error(c, n, "%s: must be %s", key, MUST_ALPHA);
		return -1;
	}
	*ret = v;
	return 0;
}

static int valid_pattern(const char *s)
{
	size_t n;

	for (n = 0; s[n]; n++)
		if (n >= 128 || (!is_alnum(s[n]) && !strchr("._-*?[]", s[n])))
			return 0;
	return n > 0;
}

static const char *const rule_keys[] = { "alpha", "min_change", "same_band", NULL };
enum { RK_ALPHA, RK_MIN_CHANGE, RK_SAME_BAND, RK_MAX };
KEYS_MATCH(rule_keys, RK_MAX);

static const char *const compare_keys[] = {
	"alpha", "min_change", "min_change_counter", "same_band", "metrics", NULL
};
enum { CK_ALPHA, CK_MIN_CHANGE, CK_MIN_CHANGE_COUNTER, CK_SAME_BAND, CK_METRICS, CK_MAX };
KEYS_MATCH(compare_keys, CK_MAX);

/* compare.metrics: {pattern: {alpha, min_change, same_band}}, in file order. */
static void parse_overrides(struct cfg_ctx *c, yaml_node_t *n, struct cfg_suite *s, const char *what)
{
	size_t count = 0;

	if (!is_mapping(n)) {
		node_error(c, n, "metrics: must be a mapping of metric patterns to rules "
			   "(alpha, min_change, same_band)");
		return;
	}
	s->overrides = xcalloc(MAX_OVERRIDES, sizeof(*s->overrides));
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = node_get(c, p->key), *vn = node_get(c, p->value);
		struct compare_override *ov;
		struct keyset ks;
		char label[192];
		char *pattern;

		if (count == MAX_OVERRIDES) {
			node_error(c, kn, "metrics: at most %d patterns", MAX_OVERRIDES);
			break;
		}
		pattern = get_str(c, "metrics", kn, valid_pattern, MUST_PATTERN);
		if (!pattern)
			continue;
		if (!is_mapping(vn)) {
			node_error(c, vn, "metrics: '%s': must be a mapping with alpha, min_change or "
				   "same_band", pattern);
			free(pattern);
			continue;
		}
		snprintf(label, sizeof(label), "the rule for '%.64s' in %.100s", pattern, what);
		map_keys(c, vn, rule_keys, label, "key", &ks);
		ov = &s->overrides[count++];
		ov->metric = pattern;
		ov->alpha = ov->min_change = ov->same_band = NAN;
		if (ks.val[RK_ALPHA])
			get_alpha(c, "alpha", ks.val[RK_ALPHA], &ov->alpha);
		if (ks.val[RK_MIN_CHANGE])
			get_fraction(c, "min_change", ks.val[RK_MIN_CHANGE], &ov->min_change);
		if (ks.val[RK_SAME_BAND])
			get_fraction(c, "same_band", ks.val[RK_SAME_BAND], &ov->same_band);
	}
	s->rules.overrides = s->overrides;
	s->rules.noverrides = count;
}

static void parse_compare(struct cfg_ctx *c, yaml_node_t *n, struct cfg_suite *s, const char *what)
{
	struct keyset ks;
	char label[128];

	if (!is_mapping(n)) {
		node_error(c, n, "compare: must be a mapping (alpha, min_change, "
			   "min_change_counter, same_band, metrics)");
		return;
	}
	snprintf(label, sizeof(label), "the compare section of %.100s", what);
	map_keys(c, n, compare_keys, label, "key", &ks);
	if (ks.val[CK_ALPHA])
		get_alpha(c, "alpha", ks.val[CK_ALPHA], &s->rules.alpha);
	if (ks.val[CK_MIN_CHANGE])
		get_fraction(c, "min_change", ks.val[CK_MIN_CHANGE], &s->rules.min_change_headline);
	if (ks.val[CK_MIN_CHANGE_COUNTER])
		get_fraction(c, "min_change_counter", ks.val[CK_MIN_CHANGE_COUNTER],
			     &s->rules.min_change_counter);
	if (ks.val[CK_SAME_BAND])
		get_fraction(c, "same_band", ks.val[CK_SAME_BAND], &s->rules.same_band);
	if (ks.val[CK_METRICS])
		parse_overrides(c, ks.val[CK_METRICS], s, label);
}

/* "unknown field" and "not a parameter of W": the spec messages about a key (spec.h). */
static int spec_error_is_key(const char *text)
{
	return !strncmp(text, "unknown field", 13) || !strncmp(text, "not a parameter of ", 19);
}

/*
 * The node a message of the agent's spec parser is about. The message
 * starts with the field's path ("size", "size[1]", "neighbour.workers",
 * then ": "), walked here from the workload's mapping as far as it leads: a
 * missing field ("command: missing") stops at the mapping that lacks it.
 * Keys are matched whole, the longest first, so a key holding '.' or '['
 * is still found.
 */
static yaml_node_t *spec_error_node(struct cfg_ctx *c, yaml_node_t *item, const char *msg)
{
	const char *end = strstr(msg, ": "), *p = msg;
	yaml_node_t *n = item, *key = NULL;

	if (!end)
		return item;
	while (p < end) {
		if (*p == '[' && n->type == YAML_SEQUENCE_NODE) {
			size_t idx = 0, count = (size_t)(n->data.sequence.items.top -
							 n->data.sequence.items.start);
			const char *q = p + 1;

			for (; *q >= '0' && *q <= '9' && idx <= count; q++)
				idx = idx * 10 + (size_t)(*q - '0');
			if (q == p + 1 || *q != ']' || idx >= count)
				break;
			n = node_get(c, n->data.sequence.items.start[idx]);
			p = q + 1;
		} else if (is_mapping(n) && (p == msg || *p == '.')) {
			yaml_node_pair_t *best = NULL;
			size_t best_len = 0;

			if (p > msg)
				p++;
			for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
			     pr < n->data.mapping.pairs.top; pr++) {
				const char *k = scalar(node_get(c, pr->key));
				size_t len = k ? strlen(k) : 0;

				if (len > best_len && p + len <= end && !strncmp(p, k, len) &&
				    (p + len == end || p[len] == '.' || p[len] == '[')) {
					best = pr;
					best_len = len;
				}
			}
			if (!best)
				break;
			key = node_get(c, best->key);
			n = node_get(c, best->value);
			p += best_len;
		} else {
			break;
		}
	}
	if (key && p == end && spec_error_is_key(end + 2))
		return key;
	return n;
}

/*
 * Checks one workload spec with the agent's parser. The suite keeps the
 * spec as written ("8M" stays a string) and sends it so: the agent reads it
 * with this same code, and the suite shows in the API as the user wrote it.
 */
static int check_spec(struct cfg_ctx *c, yaml_node_t *item, json_t *j)
{
	struct strbuf err = STRBUF_INIT;
	struct spec sp;
	int r = spec_from_json(&sp, j, &err);

	if (r < 0)
		node_error(c, spec_error_node(c, item, err.buf), "%s", err.buf);
	else
		spec_release(&sp);
	strbuf_release(&err);
	return r;
}

static void parse_workloads(struct cfg_ctx *c, yaml_node_t *n, struct cfg_suite *s)
{
	json_t *arr;
	int failed = 0;

	if (n->type != YAML_SEQUENCE_NODE || n->data.sequence.items.top ==
					      n->data.sequence.items.start) {
		node_error(c, n, "workloads: must be a non-empty list of workload specs "
			   "(mappings with a 'workload' key)");
		return;
	}
	arr = json_array();
	c->json_budget = JSON_MAX_NODES;
	c->json_limit_reported = 0;
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		yaml_node_t *item = node_get(c, *it);
		ptrdiff_t i = it - n->data.sequence.items.start;
		yaml_node_t *w;
		json_t *j;
		int item_ok = 1;

		if (!is_mapping(item)) {
			node_error(c, item, "workloads[%td]: must be a mapping with a 'workload' key",
				   i);
			failed = 1;
			continue;
		}
		w = map_find(c, item, "workload");
		if (!w) {
			node_error(c, item, "workloads[%td]: missing key 'workload' "
				   "(the name of the workload to run)", i);
			item_ok = 0;
		} else if (!scalar(w) || is_null(w)) {
			node_error(c, w, "workload: must be the name of a workload");
			item_ok = 0;
		}
		j = node_to_json(c, item, 0);
		if (!j)
			item_ok = 0;
		else if (item_ok && check_spec(c, item, j) < 0)
			item_ok = 0;
		if (j)
			json_array_append_new(arr, j);
		if (!item_ok)
			failed = 1;
	}
	if (failed)
		json_decref(arr);
	else
		s->workloads = arr;
}

static void parse_suite(struct cfg_ctx *c, yaml_node_t *map, size_t index, json_t *seen,
			struct cfg_suite *s)
{
	struct keyset ks;
	char what[96];

	item_label(c, map, "suite", "suites", index, what, sizeof(what));
	map_keys(c, map, suite_keys, what, "key", &ks);
	s->line = node_line(map);
	s->name = get_name(c, map, ks.val[SK_NAME], "suite", what, seen);
	s->timeout = c->cfg->stage_timeout;
	if (ks.val[SK_TIMEOUT])
		get_seconds(c, "timeout", ks.val[SK_TIMEOUT], &s->timeout);
	if (ks.val[SK_WORKLOADS])
		parse_workloads(c, ks.val[SK_WORKLOADS], s);
	else
		missing_key(c, map, "workloads", what, "");
	compare_rules_default(&s->rules);
	if (ks.val[SK_COMPARE])
		parse_compare(c, ks.val[SK_COMPARE], s, what);
}

/* The example token opens the lab to anyone who read the example. */
static void refuse_example_tokens(struct cfg_ctx *c, yaml_node_t *seq)
{
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++) {
		yaml_node_t *item = node_get(c, *it);
		const char *s = scalar(item);

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

static void parse_lab(struct cfg_ctx *c, yaml_node_t *map)
{
	struct lab_config *cfg = c->cfg;
	struct keyset ks;
	uint64_t bytes;
	long v;

	if (!is_mapping(map)) {
		node_error(c, map, "lab: must be a mapping (lab.data_dir is required)");
		return;
	}
	map_keys(c, map, lab_keys, "lab", "key", &ks);
	if (ks.val[LK_DATA_DIR])
		cfg->data_dir = get_str(c, "data_dir", ks.val[LK_DATA_DIR], valid_path, MUST_PATH);
	else
		missing_key(c, map, "data_dir", "lab", " (where the store and artifacts live)");
	if (ks.val[LK_LISTEN]) {
		const char *s = scalar(ks.val[LK_LISTEN]);

		free(cfg->listen_host);
		cfg->listen_host = NULL;
		if (!s || parse_listen(s, &cfg->listen_host, &cfg->listen_port) < 0)
			node_error(c, ks.val[LK_LISTEN], "listen: must be IPV4:PORT or [IPV6]:PORT "
				   "(an IP literal and a port from 1 to 65535)");
	}
	if (ks.val[LK_TOKENS]) {
		size_t n = 0;
		char **t = get_list(c, "tokens", ks.val[LK_TOKENS], valid_token, MUST_TOKEN, &n);

		if (t)
			tokens_append(cfg, t, n);
		free(t);	/* the strings now belong to cfg->tokens */
		if (t && ks.val[LK_TOKENS]->type == YAML_SEQUENCE_NODE)
			refuse_example_tokens(c, ks.val[LK_TOKENS]);
	}
	if (ks.val[LK_TOKEN_FILE]) {
		char *path = get_str(c, "token_file", ks.val[LK_TOKEN_FILE], valid_path, MUST_PATH);

		if (path)
			load_token_file(c, ks.val[LK_TOKEN_FILE], path);
		cfg->token_file = path;
	}
	if (ks.val[LK_ALLOWED_HOSTS]) {
		size_t n = 0;

		cfg->allowed_hosts = get_list(c, "allowed_hosts", ks.val[LK_ALLOWED_HOSTS], valid_host,
					      MUST_HOST, &n);
	}
	if (ks.val[LK_READ_REQUIRES_TOKEN])
		get_bool(c, "read_requires_token", ks.val[LK_READ_REQUIRES_TOKEN],
			 &cfg->read_requires_token);
	if (ks.val[LK_MAX_BODY] &&
	    get_bytes(c, "max_body", ks.val[LK_MAX_BODY], 1024, 1u << 30, "1K", "1G", &bytes) == 0)
		cfg->max_body = (size_t)bytes;
	if (ks.val[LK_WORKERS] && get_int(c, "workers", ks.val[LK_WORKERS], 1, 64, &v) == 0)
		cfg->workers = (int)v;
	if (ks.val[LK_STAGE_TIMEOUT])
		get_seconds(c, "stage_timeout", ks.val[LK_STAGE_TIMEOUT], &cfg->stage_timeout);
	if (ks.val[LK_QUIET_HOST])
		get_bool(c, "quiet_host", ks.val[LK_QUIET_HOST], &cfg->quiet_host);
	/* 512 is the server's limit on all connections together (api.c) */
	if (ks.val[LK_CONNS_PER_ADDRESS] &&
	    get_int(c, "max_connections_per_address", ks.val[LK_CONNS_PER_ADDRESS], 1, 512, &v) == 0)
		cfg->max_connections_per_address = (int)v;
	if (ks.val[LK_HEADER_TIMEOUT]) {
		double t;

		if (spec_parse_seconds(scalar(ks.val[LK_HEADER_TIMEOUT]), &t) < 0 || t < 1 || t > 300)
			node_error(c, ks.val[LK_HEADER_TIMEOUT], "header_timeout: must be a number from 1 "
				   "to 300 seconds, " SPEC_SECONDS_FORMS);
		else
			cfg->header_timeout = t;
	}
	if (ks.val[LK_JOBS_PER_TOKEN] &&
	    get_int(c, "max_jobs_per_token", ks.val[LK_JOBS_PER_TOKEN], 1, 100000, &v) == 0)
		cfg->max_jobs_per_token = (int)v;
	if (ks.val[LK_BOOTS_PER_TOKEN] &&
	    get_int(c, "max_boots_per_token", ks.val[LK_BOOTS_PER_TOKEN], 1, 1000000, &v) == 0)
		cfg->max_boots_per_token = (int)v;
	if (ks.val[LK_FETCH_ALLOW]) {
		size_t n = 0;
		char **a = get_list(c, "fetch_allow", ks.val[LK_FETCH_ALLOW], fetch_allow_entry_valid,
				    MUST_FETCH_ALLOW, &n);

		if (a) {
			strv_free(cfg->fetch_allow);
			cfg->fetch_allow = a;
		}
	}
}

/*
 * Walks the list of mappings n of one section, calling parse for each into
 * a new array of *ret_n items of `size` bytes (returned; NULL when empty).
 */
static void *parse_section(struct cfg_ctx *c, yaml_node_t *n, const char *section,
			   size_t size, size_t *ret_n,
			   void (*parse)(struct cfg_ctx *, yaml_node_t *, size_t, json_t *, void *))
{
	json_t *seen;
	char *items;
	size_t count, i = 0;

	*ret_n = 0;
	if (is_null(n))
		return NULL;
	if (n->type != YAML_SEQUENCE_NODE) {
		node_error(c, n, "%s: must be a list of mappings", section);
		return NULL;
	}
	count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (!count)
		return NULL;
	items = xcalloc(count, size);
	seen = json_object();
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		yaml_node_t *item = node_get(c, *it);
		size_t index = (size_t)(it - n->data.sequence.items.start);

		if (!is_mapping(item)) {
			node_error(c, item, "%s[%zu]: must be a mapping", section, index);
			continue;
		}
		parse(c, item, index, seen, items + i * size);
		/* items are stored only as parsed; the count must match what config_free walks */
		i++;
		*ret_n = i;
	}
	json_decref(seen);
	return items;
}

/* Adapters from the generic section walker to each item type. */
static void parse_machine_v(struct cfg_ctx *c, yaml_node_t *m, size_t i, json_t *s, void *o)
{
	parse_machine(c, m, i, s, o);
}

static void parse_builder_v(struct cfg_ctx *c, yaml_node_t *m, size_t i, json_t *s, void *o)
{
	parse_builder(c, m, i, s, o);
}

static void parse_tree_v(struct cfg_ctx *c, yaml_node_t *m, size_t i, json_t *s, void *o)
{
	parse_tree(c, m, i, s, o);
}

static void parse_suite_v(struct cfg_ctx *c, yaml_node_t *m, size_t i, json_t *s, void *o)
{
	parse_suite(c, m, i, s, o);
}

static const char *const top_keys[] = {
	"lab", "machines", "builders", "trees", "suites", NULL
};
enum { TOP_LAB, TOP_MACHINES, TOP_BUILDERS, TOP_TREES, TOP_SUITES, TOP_MAX };
KEYS_MATCH(top_keys, TOP_MAX);

static void parse_document(struct cfg_ctx *c, yaml_node_t *root)
{
	struct lab_config *cfg = c->cfg;
	struct keyset ks;

	if (!root) {
		cfg_error(c, 1, 1, "empty configuration (lab.data_dir is required)");
		return;
	}
	if (!is_mapping(root)) {
		node_error(c, root, "the configuration must be a mapping with the sections "
			   "lab, machines, builders, trees and suites");
		return;
	}
	map_keys(c, root, top_keys, "the configuration (sections: lab, machines, builders, "
		 "trees, suites)", "section", &ks);
	if (ks.val[TOP_LAB])
		parse_lab(c, ks.val[TOP_LAB]);
	else
		node_error(c, root, "missing section 'lab' (lab.data_dir is required)");
	if (ks.val[TOP_BUILDERS])
		cfg->builders = parse_section(c, ks.val[TOP_BUILDERS], "builders",
					      sizeof(*cfg->builders), &cfg->nbuilders,
					      parse_builder_v);
	if (ks.val[TOP_MACHINES])
		cfg->machines = parse_section(c, ks.val[TOP_MACHINES], "machines",
					      sizeof(*cfg->machines), &cfg->nmachines,
					      parse_machine_v);
	if (ks.val[TOP_TREES])
		cfg->trees = parse_section(c, ks.val[TOP_TREES], "trees", sizeof(*cfg->trees),
					   &cfg->ntrees, parse_tree_v);
	if (ks.val[TOP_SUITES])
		cfg->suites = parse_section(c, ks.val[TOP_SUITES], "suites", sizeof(*cfg->suites),
					    &cfg->nsuites, parse_suite_v);
}

/* Reports a libyaml error: one message at the problem's position. */
static void yaml_syntax_error(struct cfg_ctx *c, const yaml_parser_t *p, const char *text,
			      size_t len)
{
	const char *problem = p->problem ? p->problem : "cannot parse";

	if (p->error == YAML_MEMORY_ERROR) {
		cfg_error(c, 0, 0, "out of memory while parsing");
	} else if (p->error == YAML_READER_ERROR) {
		/* the reader knows only a byte offset */
		unsigned long line = 1, col = 1;

		for (size_t i = 0; i < p->problem_offset && i < len; i++) {
			if (text[i] == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
		}
		if (p->problem_value != -1)
			cfg_error(c, line, col, "%s (byte 0x%02x)", problem, p->problem_value);
		else
			cfg_error(c, line, col, "%s", problem);
	} else if (p->context) {
		cfg_error(c, (unsigned long)p->problem_mark.line + 1,
			  (unsigned long)p->problem_mark.column + 1, "%s (%s at line %lu, column %lu)",
			  problem, p->context, (unsigned long)p->context_mark.line + 1,
			  (unsigned long)p->context_mark.column + 1);
	} else {
		cfg_error(c, (unsigned long)p->problem_mark.line + 1,
			  (unsigned long)p->problem_mark.column + 1, "%s", problem);
	}
}

static void cfg_ctx_release(struct cfg_ctx *c)
{
	for (size_t i = 0; i < c->nerrs; i++)
		free(c->errs[i].msg);
	free(c->errs);
}

/* ---- public API ---- */

int config_load_string(const char *name, const char *text, size_t len,
		       struct lab_config **ret, struct strbuf *err)
{
	struct cfg_ctx c = { .name = name };
	yaml_parser_t parser;
	yaml_document_t doc, extra;
	int have_doc = 0, r = -1;

	if (err)
		strbuf_reset(err);
	if (!yaml_parser_initialize(&parser))
		abort();
	c.cfg = xcalloc(1, sizeof(*c.cfg));
	c.cfg->path = xstrdup(name);
	c.cfg->listen_host = xstrdup("127.0.0.1");
	c.cfg->listen_port = 8080;
	c.cfg->max_body = 1u << 20;
	c.cfg->workers = 4;
	c.cfg->stage_timeout = 1800;
	c.cfg->quiet_host = 1;
	c.cfg->max_connections_per_address = 64;
	c.cfg->header_timeout = 10;
	c.cfg->max_jobs_per_token = 20;
	c.cfg->max_boots_per_token = 200;
	c.cfg->tokens = xcalloc(1, sizeof(*c.cfg->tokens));

	if (len > CONFIG_MAX_BYTES) {
		cfg_error(&c, 0, 0, "larger than %u KiB", CONFIG_MAX_BYTES >> 10);
		goto out;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		yaml_syntax_error(&c, &parser, text, len);
		goto out;
	}
	have_doc = 1;
	c.doc = &doc;
	/* a second document would be silently ignored: refuse it */
	if (!yaml_parser_load(&parser, &extra)) {
		yaml_syntax_error(&c, &parser, text, len);
		goto out;
	}
	if (yaml_document_get_root_node(&extra)) {
		yaml_node_t *root = yaml_document_get_root_node(&extra);

		node_error(&c, root, "only one YAML document is allowed");
	}
	yaml_document_delete(&extra);
	if (c.nerrs)
		goto out;

	parse_document(&c, yaml_document_get_root_node(&doc));
	if (c.nerrs)
		goto out;
	*ret = c.cfg;
	c.cfg = NULL;
	r = 0;
out:
	cfg_errors_flush(&c, err);
	cfg_ctx_release(&c);
	config_free(c.cfg);
	if (have_doc)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return r;
}

int config_load(const char *path, struct lab_config **ret, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;
	char why[128];
	int r;

	r = read_regular_file(path, &text, CONFIG_MAX_BYTES);
	if (r < 0) {
		if (err) {
			strbuf_reset(err);
			strbuf_addf(err, "%s: cannot read: %s", path,
				    read_error_text(r, CONFIG_MAX_BYTES, why, sizeof(why)));
		}
		r = -1;
		goto out;
	}
	r = config_load_string(path, text.buf, text.len, ret, err);
out:
	strbuf_release(&text);
	return r;
}

static void endpoint_release(struct cfg_endpoint *ep)
{
	free(ep->host_group);
	free(ep->host);
	free(ep->user);
	free(ep->identity);
	free(ep->known_hosts);
	free(ep->host_key);
}

void config_free(struct lab_config *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->nmachines; i++) {
		struct cfg_machine *m = &cfg->machines[i];

		free(m->name);
		endpoint_release(&m->ep);
		free(m->arch);
		strv_free(m->tags);
		strv_free(m->power_cycle);
		free(m->agent_path);
		free(m->workdir);
		qemu_free(m->qemu);
		kexec_free(m->kexec);
		reboot_free(m->reboot);
	}
	free(cfg->machines);
	for (size_t i = 0; i < cfg->nbuilders; i++) {
		free(cfg->builders[i].name);
		endpoint_release(&cfg->builders[i].ep);
		free(cfg->builders[i].workdir);
		free(cfg->builders[i].ccache);
	}
	free(cfg->builders);
	for (size_t i = 0; i < cfg->ntrees; i++) {
		free(cfg->trees[i].name);
		free(cfg->trees[i].url);
		free(cfg->trees[i].builder);
		free(cfg->trees[i].config_base);
		strv_free(cfg->trees[i].fragments);
	}
	free(cfg->trees);
	for (size_t i = 0; i < cfg->nsuites; i++) {
		free(cfg->suites[i].name);
		json_decref(cfg->suites[i].workloads);
		for (size_t k = 0; k < cfg->suites[i].rules.noverrides; k++)
			free((char *)cfg->suites[i].overrides[k].metric);
		free(cfg->suites[i].overrides);
	}
	free(cfg->suites);
	strv_free(cfg->tokens);
	free(cfg->token_file);
	strv_free(cfg->allowed_hosts);
	strv_free(cfg->fetch_allow);
	free(cfg->path);
	free(cfg->data_dir);
	free(cfg->listen_host);
	free(cfg);
}

const struct cfg_machine *config_machine(const struct lab_config *cfg, const char *name)
{
	for (size_t i = 0; cfg && name && i < cfg->nmachines; i++)
		if (cfg->machines[i].name && !strcmp(cfg->machines[i].name, name))
			return &cfg->machines[i];
	return NULL;
}

const struct cfg_builder *config_builder(const struct lab_config *cfg, const char *name)
{
	for (size_t i = 0; cfg && name && i < cfg->nbuilders; i++)
		if (cfg->builders[i].name && !strcmp(cfg->builders[i].name, name))
			return &cfg->builders[i];
	return NULL;
}

const struct cfg_tree *config_tree(const struct lab_config *cfg, const char *name)
{
	for (size_t i = 0; cfg && name && i < cfg->ntrees; i++)
		if (cfg->trees[i].name && !strcmp(cfg->trees[i].name, name))
			return &cfg->trees[i];
	return NULL;
}

/* The host an endpoint runs on, for config_same_host: its host_group, else
 * "local" or the SSH host. */
static void host_of(const struct cfg_endpoint *ep, char *buf, size_t len)
{
	if (ep->host_group)
		snprintf(buf, len, "group:%s", ep->host_group);
	else if (ep->transport == TRANSPORT_LOCAL)
		snprintf(buf, len, "local");
	else
		snprintf(buf, len, "ssh:%s", ep->host ? ep->host : "");
}

int config_same_host(const struct cfg_endpoint *a, const struct cfg_endpoint *b)
{
	char ha[300], hb[300];

	host_of(a, ha, sizeof(ha));
	host_of(b, hb, sizeof(hb));
	return !strcmp(ha, hb);
}

const struct cfg_suite *config_suite(const struct lab_config *cfg, const char *name)
{
	for (size_t i = 0; cfg && name && i < cfg->nsuites; i++)
		if (cfg->suites[i].name && !strcmp(cfg->suites[i].name, name))
			return &cfg->suites[i];
	return NULL;
}

int config_machine_has_tag(const struct cfg_machine *m, const char *tag)
{
	if (!m || !m->tags || !tag)
		return 0;
	for (char **t = m->tags; *t; t++)
		if (!strcmp(*t, tag))
			return 1;
	return 0;
}

const char *transport_kind_name(enum transport_kind k)
{
	static const char *const names[TRANSPORT_KIND_MAX] = {
		[TRANSPORT_LOCAL] = "local",
		[TRANSPORT_SSH] = "ssh",
	};

	return (unsigned)k < TRANSPORT_KIND_MAX ? names[k] : "unknown";
}

const char *boot_method_name(enum boot_method b)
{
	static const char *const names[BOOT_METHOD_MAX] = {
		[BOOT_NONE] = "none",
		[BOOT_QEMU] = "qemu",
		[BOOT_KEXEC] = "kexec",
		[BOOT_REBOOT] = "reboot",
	};

	return (unsigned)b < BOOT_METHOD_MAX ? names[b] : "unknown";
}

int config_host_allowed(const struct lab_config *cfg, const char *host)
{
	char name[HOST_MAX_LEN + 1];
	const char *end, *rest;
	size_t len;

	if (!host)
		return 1;
	if (host[0] == '[') {
		end = strchr(host, ']');
		if (!end)
			return 0;
		host++;
		rest = end + 1;
	} else {
		end = strchr(host, ':');
		if (!end)
			end = host + strlen(host);
		rest = end;
	}
	if (*rest && (*rest != ':' || !rest[1] || strspn(rest + 1, "0123456789") != strlen(rest + 1)))
		return 0;
	len = (size_t)(end - host);
	/* "lab.example.org." is the same name as "lab.example.org" */
	if (len > 1 && host[len - 1] == '.')
		len--;
	if (!len || len > HOST_MAX_LEN)
		return 0;
	memcpy(name, host, len);
	name[len] = '\0';
	if (!strcasecmp(name, "localhost") || !strcmp(name, "127.0.0.1") || !strcasecmp(name, "::1") ||
	    !strcasecmp(name, cfg->listen_host))
		return 1;
	for (char **h = cfg->allowed_hosts; h && *h; h++)
		if (!strcasecmp(name, *h))
			return 1;
	return 0;
}
