/*
 * /proc/stat: CPU busy and total ticks over all CPUs; the runner turns their
 * deltas into a busy percentage per window and per sample.
 */
#include "monitor.h"
#include "procparse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "banned.h"

#define STAT_PATH "/proc/stat"

static int stat_load(struct strbuf *text, uint64_t *busy, uint64_t *total, struct strbuf *err)
{
	int r;

	strbuf_reset(text);
	r = strbuf_read_file(text, STAT_PATH, 4u << 20);
	if (r < 0)
		return strbuf_seterr(err, "%s: %s", STAT_PATH, strerror(-r));
	if (procparse_stat_cpu(text->buf, busy, total) < 0)
		return strbuf_seterr(err, "%s: no aggregate cpu line", STAT_PATH);
	return 0;
}

static int procstat_open(struct monitor *m, struct counter_set *cs, struct strbuf *err)
{
	struct strbuf *text = xmalloc(sizeof(*text));
	uint64_t busy, total;

	strbuf_init(text, 0);
	if (stat_load(text, &busy, &total, err) < 0) {
		monitor_counter_set_unavailable(cs, "procstat.busy_ticks", "%s", err->buf);
		monitor_counter_set_unavailable(cs, "procstat.total_ticks", "%s", err->buf);
		strbuf_release(text);
		free(text);
		return -1;
	}
	monitor_counter_set_add(cs, "procstat.busy_ticks", "ticks", DIR_NEUTRAL, 0);
	monitor_counter_set_add(cs, "procstat.total_ticks", "ticks", DIR_NEUTRAL, 0);
	m->priv = text;
	return 0;
}

static int procstat_read(struct monitor *m, uint64_t *vals, struct strbuf *err)
{
	return stat_load(m->priv, &vals[m->first], &vals[m->first + 1], err);
}

static void procstat_close(struct monitor *m)
{
	strbuf_release(m->priv);
	free(m->priv);
	m->priv = NULL;
}

static const struct monitor_ops monitor_procstat = {
	.name = "procstat",
	.open = procstat_open,
	.read = procstat_read,
	.close = procstat_close,
};
MONITOR_REGISTER(monitor_procstat)
