#include "insn.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "banned.h"

static const char *const row_names[INSN_COLS] = {
	[INSN_KERNEL] = "kernel_insn_per_op",
	[INSN_USER] = "user_insn_per_op",
	[INSN_SPIN] = "spin_insn_per_op",
	[INSN_HOST_NS] = "host_ns_per_op",
	[INSN_HOST_CPU_NS] = "host_cpu_ns_per_op",
};

struct marker {
	char kind;
	int have_host;
	uint64_t n[INSN_COLS];
};

static int read_u64(const char **p, uint64_t *ret)
{
	const char *s = *p;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*ret = v;
	*p = s;
	return 0;
}

/* One line: 1 a marker, 0 a comment or blank, -1 malformed. */
static int parse_line(const char *line, size_t len, struct marker *m)
{
	char buf[160];
	const char *p = buf;
	uint64_t seq, vcpu;
	int i;

	if (!len || line[0] == '#')
		return 0;
	if (len >= sizeof(buf) || (line[0] != 'B' && line[0] != 'E') || line[1] != ' ')
		return -1;
	memcpy(buf, line, len);
	buf[len] = 0;
	m->kind = buf[0];
	p = buf + 2;
	if (read_u64(&p, &seq) < 0 || *p++ != ' ' || read_u64(&p, &vcpu) < 0)
		return -1;
	for (i = 0; i < INSN_CLASS_MAX; i++)
		if (*p++ != ' ' || read_u64(&p, &m->n[i]) < 0)
			return -1;
	/* the host's clocks: later columns, absent from older plugins' lines */
	m->n[INSN_HOST_NS] = m->n[INSN_HOST_CPU_NS] = 0;
	m->have_host = 0;
	if (*p == ' ') {
		for (i = INSN_HOST_NS; i < INSN_COLS; i++)
			if (*p++ != ' ' || read_u64(&p, &m->n[i]) < 0)
				return -1;
		m->have_host = 1;
	}
	return *p ? -1 : 1;
}

/* Calls fn for each marker of text; -1 with err at a malformed line. */
static int each_marker(const char *text, int (*fn)(void *, const struct marker *, size_t), void *arg,
		       struct strbuf *err)
{
	const char *line = text;
	size_t lineno = 0, nmark = 0;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		struct marker m;
		int r;

		lineno++;
		r = parse_line(line, len, &m);
		if (r < 0)
			return strbuf_seterr(err, "the instruction plugin's line %zu is not a marker: %.80s", lineno,
					     line);
		if (r > 0 && fn(arg, &m, nmark) < 0) {
			strbuf_addf(err, " (line %zu)", lineno);
			return -1;
		}
		nmark += r > 0;
		line += len + (nl != NULL);
	}
	return 0;
}

static int count_one(void *arg, const struct marker *m, size_t index)
{
	(void)m;
	*(size_t *)arg = index + 1;
	return 0;
}

int insn_count_markers(const char *text, size_t *ret_markers, struct strbuf *err)
{
	size_t n = 0;

	if (each_marker(text, count_one, &n, err) < 0)
		return -1;
	*ret_markers = n;
	return 0;
}

struct collect {
	size_t skip;
	struct insn_window *w;
	size_t n, alloc;
	int open;
	uint64_t last[INSN_COLS];
	int have_last, last_host;
	struct strbuf *err;
};

static int collect_one(void *arg, const struct marker *m, size_t index)
{
	struct collect *c = arg;
	int i;

	/* every count only grows while QEMU runs: one that fell wrapped */
	for (i = 0; c->have_last && i < INSN_COLS; i++)
		if (m->n[i] < c->last[i] && (i < INSN_CLASS_MAX || (m->have_host && c->last_host))) {
			strbuf_seterr(c->err, "the instruction plugin's %s count went backwards (%" PRIu64
				      " after %" PRIu64 "): a counter wrapped or the plugin restarted",
				      row_names[i], m->n[i], c->last[i]);
			return -1;
		}
	memcpy(c->last, m->n, sizeof(c->last));
	c->have_last = 1;
	c->last_host = m->have_host;
	if (index < c->skip)
		return 0;
	if (m->kind == 'B') {
		if (c->open) {
			strbuf_seterr(c->err, "the instruction plugin saw a window open twice without a close");
			return -1;
		}
		if (c->n == c->alloc) {
			c->alloc = c->alloc ? 2 * c->alloc : 8;
			c->w = xrealloc(c->w, c->alloc * sizeof(*c->w));
		}
		memcpy(c->w[c->n].begin, m->n, sizeof(m->n));
		c->w[c->n].have_host = m->have_host;
		c->open = 1;
		return 0;
	}
	if (!c->open) {
		strbuf_seterr(c->err, "the instruction plugin saw a window close that never opened");
		return -1;
	}
	memcpy(c->w[c->n].end, m->n, sizeof(m->n));
	c->w[c->n++].have_host &= m->have_host;
	c->open = 0;
	return 0;
}

int insn_windows(const char *text, size_t skip, struct insn_window **ret, size_t *ret_n, struct strbuf *err)
{
	struct collect c = { .skip = skip, .err = err };

	if (each_marker(text, collect_one, &c, err) < 0) {
		free(c.w);
		return -1;
	}
	*ret = c.w;
	*ret_n = c.n;
	return 0;
}

int insn_metrics(const struct insn_window *w, double ops, const char *workload, json_t *metrics, json_t *info,
		 json_t *unavailable, struct strbuf *err)
{
	int i;

	if (!(ops > 0))
		return strbuf_seterr(err, "no operations counted in the window");
	for (i = 0; i < INSN_COLS; i++) {
		char name[160];

		snprintf(name, sizeof(name), "%s.%s", workload, row_names[i]);
		if (i >= INSN_HOST_NS && !w->have_host) {
			json_object_set_new(unavailable, name, json_string("the instruction plugin's file has no "
				"host clock columns (a plugin older than this daemon)"));
			continue;
		}
		json_object_set_new(metrics, name, json_real((double)(w->end[i] - w->begin[i]) / ops));
		json_object_set_new(info, name, json_pack("{s:s,s:s,s:s}", "unit", i >= INSN_HOST_NS ? "ns/op" : "insn/op",
							  "direction", "lower", "source",
							  i == INSN_HOST_NS ? "qemu-plugin host clock" :
							  i == INSN_HOST_CPU_NS ? "qemu-plugin host CPU time" :
							  "qemu-plugin"));
	}
	return 0;
}

void insn_unavailable(const char *workload, const char *why, json_t *unavailable)
{
	int i;

	for (i = 0; i < INSN_COLS; i++) {
		char name[160];

		snprintf(name, sizeof(name), "%s.%s", workload, row_names[i]);
		json_object_set_new(unavailable, name, json_string(why));
	}
}
