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
	[INSN_DTLB_MISS] = "dtlb_miss_per_op",
	[INSN_ITLB_MISS] = "itlb_miss_per_op",
	[INSN_TLB_LOST] = "tlb_lost_per_op",
	[INSN_TLB_RECEIVED] = "tlb_inval_received_per_op",
};

struct marker {
	char kind;
	int have_host, have_tlb;
	uint64_t n[INSN_COLS];
	int nvcpu, have_vinsn;
	uint64_t vcpu[INSN_VCPU_MAX][INSN_TLB_N];
	uint64_t vinsn[INSN_VCPU_MAX][INSN_CLASS_MAX];
};

/* a marker line's longest: the columns, then 64 vCPUs' seven counts */
#define LINE_MAX_LEN 8192

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

/* Reads columns [from, to) of a marker line after a space each: 1 read,
 * 0 none there (the line ended), -1 malformed. */
static int read_cols(const char **p, struct marker *m, int from, int to)
{
	int i;

	for (i = from; i < to; i++)
		m->n[i] = 0;
	if (**p != ' ')
		return 0;
	for (i = from; i < to; i++) {
		if (*(*p)++ != ' ' || read_u64(p, &m->n[i]) < 0)
			return -1;
	}
	return 1;
}

/* After the TLB model's sums: each vCPU's own, " vI=D,I,L,R" with I
 * counting from 0, each with ",K,U,S" (its instructions) or none without.
 * 0, or -1 malformed. */
static int read_vcpus(const char **p, struct marker *m)
{
	uint64_t id;
	int k, with;

	m->have_vinsn = 0;
	for (m->nvcpu = 0; **p == ' '; m->nvcpu++) {
		if (m->nvcpu == INSN_VCPU_MAX || (*p)[1] != 'v')
			return -1;
		*p += 2;
		if (read_u64(p, &id) < 0 || id != (uint64_t)m->nvcpu || *(*p)++ != '=')
			return -1;
		for (k = 0; k < INSN_TLB_N; k++)
			if ((k && *(*p)++ != ',') || read_u64(p, &m->vcpu[m->nvcpu][k]) < 0)
				return -1;
		with = **p == ',';
		if (m->nvcpu && with != m->have_vinsn)
			return -1;
		m->have_vinsn = with;
		for (k = 0; with && k < INSN_CLASS_MAX; k++)
			if (*(*p)++ != ',' || read_u64(p, &m->vinsn[m->nvcpu][k]) < 0)
				return -1;
	}
	return 0;
}

/* One line: 1 a marker, 0 a comment or blank, -1 malformed. */
static int parse_line(const char *line, size_t len, struct marker *m)
{
	char buf[LINE_MAX_LEN];
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
	/* the host's clocks, absent from older plugins' lines; then the TLB
	 * model's counts, when it is on */
	m->have_host = read_cols(&p, m, INSN_HOST_NS, INSN_DTLB_MISS);
	m->have_tlb = m->have_host > 0 ? read_cols(&p, m, INSN_DTLB_MISS, INSN_COLS) : 0;
	if (m->have_host < 0 || m->have_tlb < 0)
		return -1;
	m->nvcpu = m->have_vinsn = 0;
	if (m->have_tlb > 0 && read_vcpus(&p, m) < 0)
		return -1;
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
	int have_last, last_host, last_tlb;
	const char *tlb_why;
	struct strbuf *err;
};

/* Does column i of m go with the last marker's (both have it)? */
static int comparable(const struct collect *c, const struct marker *m, int i)
{
	if (i < INSN_CLASS_MAX)
		return 1;
	if (i < INSN_DTLB_MISS)
		return m->have_host && c->last_host;
	return m->have_tlb && c->last_tlb;
}

static int collect_one(void *arg, const struct marker *m, size_t index)
{
	struct collect *c = arg;
	int i;

	/* every count only grows while QEMU runs: one that fell wrapped */
	for (i = 0; c->have_last && i < INSN_COLS; i++)
		if (m->n[i] < c->last[i] && comparable(c, m, i)) {
			strbuf_seterr(c->err, "the instruction plugin's %s count went backwards (%" PRIu64
				      " after %" PRIu64 "): a counter wrapped or the plugin restarted",
				      row_names[i], m->n[i], c->last[i]);
			return -1;
		}
	memcpy(c->last, m->n, sizeof(c->last));
	c->have_last = 1;
	c->last_host = m->have_host;
	c->last_tlb = m->have_tlb;
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
		memcpy(c->w[c->n].vcpu_begin, m->vcpu, sizeof(m->vcpu));
		memcpy(c->w[c->n].vinsn_begin, m->vinsn, sizeof(m->vinsn));
		c->w[c->n].nvcpu = m->nvcpu;
		c->w[c->n].have_vinsn = m->have_vinsn;
		c->w[c->n].have_host = m->have_host;
		c->w[c->n].have_tlb = m->have_tlb;
		snprintf(c->w[c->n].tlb_why, sizeof(c->w[c->n].tlb_why), "%s", c->tlb_why);
		c->open = 1;
		return 0;
	}
	if (!c->open) {
		strbuf_seterr(c->err, "the instruction plugin saw a window close that never opened");
		return -1;
	}
	memcpy(c->w[c->n].end, m->n, sizeof(m->n));
	memcpy(c->w[c->n].vcpu_end, m->vcpu, sizeof(m->vcpu));
	memcpy(c->w[c->n].vinsn_end, m->vinsn, sizeof(m->vinsn));
	if (m->nvcpu != c->w[c->n].nvcpu)
		c->w[c->n].nvcpu = 0;
	c->w[c->n].have_vinsn &= m->have_vinsn && c->w[c->n].nvcpu;
	c->w[c->n].have_host &= m->have_host;
	c->w[c->n++].have_tlb &= m->have_tlb;
	c->open = 0;
	return 0;
}

/*
 * Why a window has no TLB counts: the plugin's own word ("# tlb
 * unavailable: WHY"), else whether its first line says the model is on.
 */
static void tlb_reason(const char *text, struct strbuf *why)
{
	static const char said[] = "\n# tlb unavailable: ";
	const char *p = strstr(text, said), *eol = strchrnul(text, '\n');

	if (p) {
		p += sizeof(said) - 1;
		strbuf_addf(why, "the instruction plugin's TLB model: %.*s", (int)(strchrnul(p, '\n') - p), p);
	} else if (memmem(text, (size_t)(eol - text), " tlb=", 5)) {
		strbuf_addstr(why, "the instruction plugin's TLB model is on, but the window's markers have no TLB "
			      "counts");
	} else {
		strbuf_addstr(why, "the TLB model was off in this boot (a suite turns it on with tlb_model: on; "
			      "a machine's qemu tlb_model: on has it in every boot, off in none)");
	}
}

int insn_windows(const char *text, size_t skip, struct insn_window **ret, size_t *ret_n, struct strbuf *err)
{
	struct strbuf why = STRBUF_INIT;
	struct collect c = { .skip = skip, .err = err };

	tlb_reason(text, &why);
	c.tlb_why = why.buf;
	if (each_marker(text, collect_one, &c, err) < 0) {
		strbuf_release(&why);
		free(c.w);
		return -1;
	}
	strbuf_release(&why);
	*ret = c.w;
	*ret_n = c.n;
	return 0;
}

static const char *col_unit(int i)
{
	if (i < INSN_CLASS_MAX)
		return "insn/op";
	return i < INSN_DTLB_MISS ? "ns/op" : "events/op";
}

static const char *col_source(int i)
{
	if (i == INSN_HOST_NS)
		return "qemu-plugin host clock";
	if (i == INSN_HOST_CPU_NS)
		return "qemu-plugin host CPU time";
	return i >= INSN_DTLB_MISS ? "qemu-plugin TLB model" : "qemu-plugin";
}

static void add_row(json_t *metrics, json_t *info, const char *name, int i, double v)
{
	json_object_set_new(metrics, name, json_real(v));
	json_object_set_new(info, name, json_pack("{s:s,s:s,s:s}", "unit", col_unit(i), "direction", "lower",
						  "source", col_source(i)));
}

/* Why the TLB rows of vCPU set vcpus cannot be had from w, or NULL. */
static const char *tlb_missing(const struct insn_window *w, uint64_t vcpus, char *buf, size_t len)
{
	int i;

	if (!w->have_tlb)
		return w->tlb_why;
	if (vcpus == INSN_ALL_VCPUS)
		return NULL;
	if (!w->nvcpu)
		return "the instruction plugin's file has no per-vCPU TLB counts (a plugin older than this daemon): "
		       "a workload's vCPUs cannot be counted apart from its neighbour's";
	for (i = w->nvcpu; i < INSN_VCPU_MAX; i++)
		if (vcpus >> i & 1) {
			snprintf(buf, len, "the agent ran on CPU %d, but the instruction plugin counts %d vCPUs", i,
				 w->nvcpu);
			return buf;
		}
	return NULL;
}

void insn_tlb_metrics(const struct insn_window *w, double ops, const char *prefix, uint64_t vcpus,
		      json_t *metrics, json_t *info, json_t *unavailable)
{
	char buf[120];
	const char *why = tlb_missing(w, vcpus, buf, sizeof(buf));
	int i, k;

	for (i = INSN_DTLB_MISS; i < INSN_COLS; i++) {
		char name[160];
		uint64_t n = 0;

		snprintf(name, sizeof(name), "%s.%s", prefix, row_names[i]);
		if (why) {
			json_object_set_new(unavailable, name, json_string(why));
			continue;
		}
		if (!(ops > 0)) {
			json_object_set_new(unavailable, name, json_string("no operations counted in the window"));
			continue;
		}
		if (vcpus == INSN_ALL_VCPUS)
			n = w->end[i] - w->begin[i];
		else
			for (k = 0; k < w->nvcpu; k++)
				if (vcpus >> k & 1)
					n += w->vcpu_end[k][i - INSN_DTLB_MISS] - w->vcpu_begin[k][i - INSN_DTLB_MISS];
		add_row(metrics, info, name, i, (double)n / ops);
	}
}

/* Why the instruction rows of vCPU set vcpus cannot be had from w, or
 * NULL; *by_vcpu: count them from the per-vCPU counts. */
static const char *insn_missing(const struct insn_window *w, uint64_t vcpus, int shared, int *by_vcpu,
				char *buf, size_t len)
{
	*by_vcpu = 0;
	if (vcpus == INSN_ALL_VCPUS || !w->have_vinsn)
		return shared ? "a neighbour ran beside the workload, and the instruction plugin counted the "
				"machine's instructions, not each vCPU's (that comes with its TLB model: a suite's "
				"tlb_model: on): the count would add the neighbour's work" : NULL;
	*by_vcpu = 1;
	return tlb_missing(w, vcpus, buf, len);
}

int insn_metrics(const struct insn_window *w, double ops, const char *workload, uint64_t vcpus, int shared,
		 json_t *metrics, json_t *info, json_t *unavailable, struct strbuf *err)
{
	char buf[120];
	int i, k, by_vcpu;
	const char *why = insn_missing(w, vcpus, shared, &by_vcpu, buf, sizeof(buf));

	if (!(ops > 0))
		return strbuf_seterr(err, "no operations counted in the window");
	for (i = 0; i < INSN_DTLB_MISS; i++) {
		char name[160];
		uint64_t n = 0;

		snprintf(name, sizeof(name), "%s.%s", workload, row_names[i]);
		if (i >= INSN_HOST_NS && !w->have_host) {
			json_object_set_new(unavailable, name, json_string("the instruction plugin's file has no "
				"host clock columns (a plugin older than this daemon)"));
			continue;
		}
		if (i < INSN_CLASS_MAX && why) {
			json_object_set_new(unavailable, name, json_string(why));
			continue;
		}
		if (i < INSN_CLASS_MAX && by_vcpu)
			for (k = 0; k < w->nvcpu; k++)
				n += vcpus >> k & 1 ? w->vinsn_end[k][i] - w->vinsn_begin[k][i] : 0;
		else
			n = w->end[i] - w->begin[i];
		add_row(metrics, info, name, i, (double)n / ops);
	}
	insn_tlb_metrics(w, ops, workload, vcpus, metrics, info, unavailable);
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
