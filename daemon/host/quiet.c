#include "quiet.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "guard.h"
#include "util.h"
#include "banned.h"

enum { Q_BUILD = 1, Q_RUN };
enum { M_NO, M_WAITING, M_ON };

struct quiet {
	pthread_mutex_t lock;
	pthread_cond_t changed;		/* a build ended or a run stopped measuring */
	struct quiet_entry *entries;
};

struct quiet *quiet_new(void)
{
	struct quiet *q = xcalloc(1, sizeof(*q));

	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->changed, NULL);
	return q;
}

void quiet_free(struct quiet *q)
{
	if (!q)
		return;
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->changed);
	free(q);
}

static void link_entry(struct quiet *q, struct quiet_entry *e, int kind)
{
	e->kind = kind;
	e->next = q->entries;
	q->entries = e;
}

static void unlink_entry(struct quiet *q, struct quiet_entry *e)
{
	struct quiet_entry **p;

	for (p = &q->entries; *p; p = &(*p)->next)
		if (*p == e) {
			*p = e->next;
			break;
		}
	e->next = NULL;
}

/* A run that measures, or waits to, on the host of ep. Called locked. */
static const struct quiet_entry *measurer_on(const struct quiet *q, const struct cfg_endpoint *ep)
{
	const struct quiet_entry *r;

	for (r = q->entries; r; r = r->next)
		if (r->kind == Q_RUN && r->measuring != M_NO && config_same_host(r->ep, ep))
			return r;
	return NULL;
}

/* A run leaves the gate: the builds it paused go on unless another run
 * measures on their host. Called locked. */
static void leave(struct quiet *q, struct quiet_entry *e)
{
	struct quiet_entry *b;

	unlink_entry(q, e);
	e->measuring = M_NO;
	for (b = q->entries; b; b = b->next)
		if (b->kind == Q_BUILD && b->pause && !measurer_on(q, b->ep))
			b->pause = 0;
	pthread_cond_broadcast(&q->changed);
}

int quiet_build_begin(struct quiet *q, struct quiet_entry *e, struct strbuf *why)
{
	const struct quiet_entry *r;
	int rc = 0;

	pthread_mutex_lock(&q->lock);
	r = measurer_on(q, e->ep);
	if (r && !e->pausable) {
		strbuf_addf(why, "%s measures on the same host, and %s cannot be paused", r->label, e->label);
		rc = -EBUSY;
	} else {
		e->pause = r != NULL;
		link_entry(q, e, Q_BUILD);
	}
	pthread_mutex_unlock(&q->lock);
	return rc;
}

void quiet_build_end(struct quiet *q, struct quiet_entry *e)
{
	pthread_mutex_lock(&q->lock);
	unlink_entry(q, e);
	e->pause = 0;
	pthread_cond_broadcast(&q->changed);
	pthread_mutex_unlock(&q->lock);
}

int quiet_build_wait(struct quiet *q, struct quiet_entry *e, volatile sig_atomic_t *cancel)
{
	GUARD_MUTEX(&q->lock);
	for (;;) {
		const struct quiet_entry *r = measurer_on(q, e->ep);
		struct timespec ts;

		if (!r || e->pausable) {
			e->pause = r != NULL;
			link_entry(q, e, Q_BUILD);
			return 0;
		}
		if (cancel && *cancel)
			return -ECANCELED;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&q->changed, &q->lock, &ts);
	}
}

int quiet_measure_begin(struct quiet *q, struct quiet_entry *e, volatile sig_atomic_t *cancel,
			double deadline, struct strbuf *note)
{
	double t0 = mono_now();
	int waited = 0;
	struct quiet_entry *b;
	int rc = 0;

	pthread_mutex_lock(&q->lock);
	e->measuring = M_WAITING;
	link_entry(q, e, Q_RUN);
	for (;;) {
		const struct quiet_entry *blocker = NULL;
		struct timespec ts;

		for (b = q->entries; b; b = b->next) {
			if (b->kind != Q_BUILD || !config_same_host(b->ep, e->ep))
				continue;
			if (b->pausable)
				b->pause = 1;
			else
				blocker = b;
		}
		if (!blocker)
			break;
		waited = 1;
		if ((cancel && *cancel) || mono_now() > deadline) {
			rc = -ECANCELED;
			break;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&q->changed, &q->lock, &ts);
	}
	if (rc) {
		/* builds this run paused go on unless another run measures */
		leave(q, e);
	} else {
		e->measuring = M_ON;
		for (b = q->entries; b; b = b->next)
			if (b->kind == Q_BUILD && b->pause && config_same_host(b->ep, e->ep))
				strbuf_addf(note, "%s%s paused", note->len ? "; " : "", b->label);
		if (waited)
			strbuf_addf(note, "%swaited %.0f s for a build that cannot be paused",
				    note->len ? "; " : "", mono_now() - t0);
	}
	pthread_mutex_unlock(&q->lock);
	return rc;
}

void quiet_measure_end(struct quiet *q, struct quiet_entry *e)
{
	pthread_mutex_lock(&q->lock);
	leave(q, e);
	pthread_mutex_unlock(&q->lock);
}
