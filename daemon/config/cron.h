#ifndef TLBLAB_CRON_H
#define TLBLAB_CRON_H

#include <stdint.h>
#include <time.h>

#include "strbuf.h"

/*
 * A track's schedule: a cron expression of five fields, minute (0-59), hour
 * (0-23), day of month (1-31), month (1-12 or jan-dec) and day of week (0-7,
 * 0 and 7 both Sunday, or sun-sat), each `*`, a number, a range `a-b`, a
 * step `*` `/n` or `a-b/n`, or a comma list of those; or one of @hourly,
 * @daily (@midnight, @nightly), @weekly, @monthly. As in Vixie cron, when both
 * the day of month and the day of week are restricted, a day matching
 * either is due. Times are the daemon's local time (TZ); a wall-clock
 * minute is due once, so on the night clocks go back the repeated hour is
 * not due again, and on the night they go forward the minutes that do not
 * exist are not due at all.
 */

struct cron {
	uint64_t minutes;	/* bit m: minute m */
	uint32_t hours;
	uint32_t mdays;		/* bit d: day d (1..31) */
	uint16_t months;	/* bit m: month m (1..12) */
	uint8_t wdays;		/* bit d: day d (0..6, Sunday 0) */
	unsigned mday_star : 1;	/* the day-of-month field was `*` */
	unsigned wday_star : 1;
};

/* Parses expr into *ret (written only on success). -EINVAL with a message
 * naming the field and what is wrong in err. */
int cron_parse(const char *expr, struct cron *ret, struct strbuf *err);

/* The first due minute strictly after `after` (local time), in *ret.
 * -ERANGE when none falls within the next 5 years (a 31st of February). */
int cron_next(const struct cron *c, time_t after, time_t *ret);

#endif
