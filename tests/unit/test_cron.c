/*
 * daemon/cron: a track's schedule. Parsing (fields, ranges, steps, names,
 * shorthands, the errors a user sees) and the next due minute, in UTC and
 * across Europe/Berlin's daylight-saving changes of 2026 (clocks forward
 * on 29 March at 02:00, back on 25 October at 03:00).
 */
#include "testlib.h"

#include <errno.h>
#include <time.h>

#include "cron.h"
#include "banned.h"

static void set_tz(const char *tz)
{
	setenv("TZ", tz, 1);
	tzset();
}

/* local wall time -> time_t (isdst as given: -1 lets mktime choose) */
static time_t at(int y, int mo, int d, int h, int mi, int isdst)
{
	struct tm tm = { 0 };

	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_isdst = isdst;
	return mktime(&tm);
}

static time_t next(const char *expr, time_t after)
{
	struct strbuf err = STRBUF_INIT;
	struct cron c;
	time_t t = 0;

	if (cron_parse(expr, &c, &err) < 0)
		fail_msg("%s: %s", expr, err.buf);
	assert_int_equal(cron_next(&c, after, &t), 0);
	strbuf_release(&err);
	return t;
}

static void test_next_utc(void **state)
{
	time_t t0 = at(2026, 12, 1, 5, 59, 0);	/* a Tuesday */

	(void)state;
	set_tz("UTC");
	assert_int_equal(next("* * * * *", t0), at(2026, 12, 1, 6, 0, 0));
	/* strictly after: a due minute is not due again */
	assert_int_equal(next("59 5 * * *", t0), at(2026, 12, 2, 5, 59, 0));
	assert_int_equal(next("@daily", t0), at(2026, 12, 2, 0, 0, 0));
	assert_int_equal(next("@nightly", t0 + 30), at(2026, 12, 2, 0, 0, 0));
	assert_int_equal(next("@hourly", t0), at(2026, 12, 1, 6, 0, 0));
	assert_int_equal(next("*/15 * * * *", at(2026, 12, 1, 10, 7, 0)), at(2026, 12, 1, 10, 15, 0));
	assert_int_equal(next("0 22-23/1 * * *", t0), at(2026, 12, 1, 22, 0, 0));
	/* weekdays at 02:30: from Friday evening, Monday */
	assert_int_equal(next("30 2 * * mon-fri", at(2026, 12, 4, 20, 0, 0)), at(2026, 12, 7, 2, 30, 0));
	/* 7 is Sunday as 0 is */
	assert_int_equal(next("0 3 * * 7", t0), at(2026, 12, 6, 3, 0, 0));
	assert_int_equal(next("0 3 * * SUN", t0), at(2026, 12, 6, 3, 0, 0));
	/* both days restricted: the 13th or a Friday, whichever comes first */
	assert_int_equal(next("0 0 13 * 5", t0), at(2026, 12, 4, 0, 0, 0));
	assert_int_equal(next("0 0 13 * 5", at(2026, 12, 12, 1, 0, 0)), at(2026, 12, 13, 0, 0, 0));
	/* across the year: 1 March of 2027 */
	assert_int_equal(next("0 4 1 mar *", t0), at(2027, 3, 1, 4, 0, 0));
	assert_int_equal(next("5,10,50 1 29 2 *", t0), at(2028, 2, 29, 1, 5, 0));
}

static void test_never_due(void **state)
{
	struct strbuf err = STRBUF_INIT;
	struct cron c;
	time_t t = 12345;

	(void)state;
	set_tz("UTC");
	assert_int_equal(cron_parse("0 0 31 2 *", &c, &err), 0);
	assert_int_equal(cron_next(&c, at(2026, 12, 1, 0, 0, 0), &t), -ERANGE);
	assert_int_equal(t, 12345);
	strbuf_release(&err);
}

static void test_daylight_saving(void **state)
{
	time_t first;

	(void)state;
	set_tz("Europe/Berlin");
	/* 02:30 does not exist on 29 March: the next one is on the 30th */
	assert_int_equal(next("30 2 * * *", at(2026, 3, 28, 12, 0, -1)), at(2026, 3, 30, 2, 30, -1));
	/* 03:00 is an hour after 01:00 that night, and due */
	assert_int_equal(next("0 3 * * *", at(2026, 3, 29, 1, 0, -1)), at(2026, 3, 29, 3, 0, -1));
	/* 02:30 happens twice on 25 October: due at the first, not the second */
	first = at(2026, 10, 25, 2, 30, 1);
	assert_int_equal(next("30 2 * * *", at(2026, 10, 25, 1, 0, -1)), first);
	assert_int_equal(next("30 2 * * *", first), at(2026, 10, 26, 2, 30, -1));
	/* asked during the second pass, the second 02:30 is not due either */
	assert_int_equal(next("30 2 * * *", at(2026, 10, 25, 2, 10, 0)), at(2026, 10, 26, 2, 30, -1));
	/* a wall-clock minute is due once: every minute goes on through the
	 * first pass and resumes after the second */
	assert_int_equal(next("* * * * *", first), first + 60);
	assert_int_equal(next("* * * * *", at(2026, 10, 25, 2, 10, 0)), at(2026, 10, 25, 3, 0, 0));
	set_tz("UTC");
}

static void test_parse_errors(void **state)
{
	static const struct {
		const char *expr, *msg;
	} bad[] = {
		{ "60 * * * *", "the minute field \"60\" is not a cron field of 0-59" },
		{ "* 24 * * *", "the hour field \"24\" is not a cron field of 0-23" },
		{ "* * 0 * *", "the day of month field \"0\" is not a cron field of 1-31" },
		{ "* * * 13 *", "the month field \"13\" is not a cron field of 1-12" },
		{ "* * * * 8", "the day of week field \"8\" is not a cron field of 0-7" },
		{ "*/0 * * * *", "the minute field \"*/0\" is not a cron field of 0-59" },
		{ "5-2 * * * *", "the minute field \"5-2\" is not a cron field of 0-59" },
		{ "1,,2 * * * *", "the minute field \"1,,2\" is not a cron field of 0-59" },
		{ "x * * * *", "the minute field \"x\" is not a cron field of 0-59" },
		{ "* * * foo *", "the month field \"foo\" is not a cron field of 1-12" },
		{ "* * *", "\"* * *\" has 3 fields, not 5 (minute hour day-of-month month day-of-week)" },
		{ "", "\"\" has 0 fields, not 5 (minute hour day-of-month month day-of-week)" },
		{ "* * * * * *", "\"* * * * * *\" has more than 5 fields" },
		{ "@yearly", "\"@yearly\" is not one of @hourly, @daily, @midnight, @nightly, @weekly, @monthly" },
		{ "99999999999 * * * *", "the minute field \"99999999999\" is not a cron field of 0-59" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct strbuf err = STRBUF_INIT;
		struct cron c;

		if (cron_parse(bad[i].expr, &c, &err) != -EINVAL)
			fail_msg("\"%s\" was accepted", bad[i].expr);
		assert_string_equal(err.buf, bad[i].msg);
		strbuf_release(&err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_next_utc),
		cmocka_unit_test(test_never_due),
		cmocka_unit_test(test_daylight_saving),
		cmocka_unit_test(test_parse_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
