#include "procparse.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "banned.h"

static const char *skip_blank(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static const char *next_line(const char *p)
{
	const char *nl = strchr(p, '\n');

	return nl ? nl + 1 : NULL;
}

/* Parses an unsigned decimal at p; returns the end, or NULL if none. */
static const char *scan_u64(const char *p, uint64_t *ret)
{
	uint64_t v = 0;
	const char *start = p;

	while (*p >= '0' && *p <= '9') {
		uint64_t d = (uint64_t)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return NULL;
		v = v * 10 + d;
		p++;
	}
	if (p == start)
		return NULL;
	*ret = v;
	return p;
}

int procparse_irq_header(const char *text, int *cpu_ids, int max)
{
	const char *p = skip_blank(text);
	int n = 0;

	while (strncmp(p, "CPU", 3) == 0) {
		uint64_t id;
		const char *end = scan_u64(p + 3, &id);

		if (!end || id >= PROC_MAX_CPUS || n >= max)
			return -EINVAL;
		cpu_ids[n++] = (int)id;
		p = skip_blank(end);
	}
	if (n == 0 || (*p != '\n' && *p != '\0'))
		return -EINVAL;
	return n;
}

int procparse_irq_row(const char *text, const char *name, int ncols,
		      uint64_t *counts, uint64_t *ret_sum)
{
	size_t nlen = strlen(name);
	const char *p;

	for (p = text; p; p = next_line(p)) {
		const char *q = skip_blank(p);
		uint64_t sum = 0;
		int i;

		if (strncmp(q, name, nlen) || q[nlen] != ':')
			continue;
		q += nlen + 1;
		for (i = 0; i < ncols; i++) {
			const char *end;

			q = skip_blank(q);
			end = scan_u64(q, &counts[i]);
			/* a row cut short, or a count that is not a number */
			if (!end || (*end != ' ' && *end != '\t' && *end != '\n' && *end != '\0'))
				return -EINVAL;
			if (*end == '\0' && i + 1 < ncols)
				return -EINVAL;
			sum += counts[i];
			q = end;
		}
		*ret_sum = sum;
		return 0;
	}
	return -ENOENT;
}

uint64_t procparse_irq_accumulate(uint64_t *prev, const uint64_t *now, uint64_t *totals, int ncols)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < ncols; i++) {
		uint64_t d = now[i] >= prev[i] ? now[i] - prev[i] : (uint32_t)(now[i] - prev[i]);

		totals[i] += d;
		prev[i] = now[i];
		sum += totals[i];
	}
	return sum;
}

int procparse_vmstat(const char *text, const char *name, uint64_t *ret)
{
	size_t nlen = strlen(name);
	const char *p;

	for (p = text; p; p = next_line(p)) {
		const char *end;

		if (strncmp(p, name, nlen) || p[nlen] != ' ')
			continue;
		end = scan_u64(p + nlen + 1, ret);
		if (!end || (*end != '\n' && *end != '\0'))
			return -EINVAL;
		return 0;
	}
	return -ENOENT;
}

int procparse_stat_cpu(const char *text, uint64_t *ret_busy, uint64_t *ret_total)
{
	uint64_t v[8] = { 0 }, total = 0;
	const char *p;
	int i;

	if (strncmp(text, "cpu ", 4))
		return -ENOENT;
	p = text + 4;
	/* user nice system idle iowait irq softirq steal; guest is inside user */
	for (i = 0; i < 8; i++) {
		p = skip_blank(p);
		p = scan_u64(p, &v[i]);
		if (!p)
			return -EINVAL;
		total += v[i];
	}
	*ret_total = total;
	*ret_busy = total - v[3] - v[4];
	return 0;
}

/*
 * Parses the { N, "text" } pairs of __print_symbolic(REC->reason, ...) in the
 * format file into ids and metric-friendly names ("remote shootdown" becomes
 * remote_shootdown). Returns the number of reasons found.
 */
int procparse_tlb_flush_reasons(const char *format, int *ids, char names[][48], int max)
{
	const char *p = strstr(format, "__print_symbolic(REC->reason");
	int n = 0;

	if (!p)
		return 0;
	while (n < max && (p = strchr(p, '{')) != NULL) {
		char *end;
		long id;
		const char *q;
		size_t k = 0;

		id = strtol(p + 1, &end, 10);
		if (end == p + 1)
			break;
		q = strchr(end, '"');
		if (!q)
			break;
		for (q++; *q && *q != '"' && k + 1 < 48; q++)
			names[n][k++] = isalnum((unsigned char)*q) ?
				(char)tolower((unsigned char)*q) : '_';
		names[n][k] = '\0';
		ids[n++] = (int)id;
		p = q;
		if (strchr(p, '}') == NULL)
			break;
		p = strchr(p, '}');
		if (p[1] == ')')
			break;
	}
	return n;
}

/* Parses hex digits at p; returns the end, or NULL if none or too many. */
static const char *scan_hex(const char *p, uint64_t *ret)
{
	uint64_t v = 0;
	const char *start = p;

	while (isxdigit((unsigned char)*p)) {
		if (p - start >= 16)
			return NULL;
		v = v << 4 | (uint64_t)(isdigit((unsigned char)*p) ? *p - '0' :
					(tolower((unsigned char)*p) - 'a' + 10));
		p++;
	}
	if (p == start)
		return NULL;
	*ret = v;
	return p;
}

int procparse_maps_whole(const char *text, uint64_t start, uint64_t end)
{
	const char *p;

	for (p = text; p && *p; p = next_line(p)) {
		uint64_t lo, hi;
		const char *q = scan_hex(p, &lo);

		if (!q || *q != '-' || !(q = scan_hex(q + 1, &hi)) || *q != ' ' || hi < lo)
			return -EINVAL;
		if (lo <= start && end <= hi)
			return 1;
	}
	return 0;
}

int procparse_pv_remote_flush(const char *log, char *line, size_t len)
{
	const char *p;

	for (p = log; p && *p; p = next_line(p)) {
		const char *end = strchr(p, '\n'), *msg = p, *hit;
		size_t n = end ? (size_t)(end - p) : strlen(p);

		hit = memmem(p, n, "remote TLB flush", 16);
		if (!hit || (!memmem(p, n, "hypercall", 9) && !memmem(p, n, "_HC_", 4)))
			continue;
		if (*msg == '<' && (msg = memchr(p, '>', n)))	/* <level> */
			msg++;
		else
			msg = p;
		if (*msg == '[' && (hit = memchr(msg, ']', n - (size_t)(msg - p))))	/* [time] */
			msg = hit + 1;
		while (*msg == ' ')
			msg++;
		n -= (size_t)(msg - p);
		if (len)
			snprintf(line, len, "%.*s", (int)n, msg);
		return 1;
	}
	return 0;
}
