/* Unit tests of bankday: a day of a bank connection's report judged from
 * the spans its reconciliation read: complete only when they cover 00:00 to
 * 24:00 Brasilia time and the overlap past midnight, on a connection with
 * API credentials; the spans clipped to the day; each reason in words. */
#include "check.h"

#include "pixrelay/pix/bankday.h"

#define H (3600LL * 1000)
#define M (60LL * 1000)
/* 2026-11-26 00:00 in Brasilia: 03:00 UTC */
#define START 1795662000000LL
#define END (START + 24 * H)
#define UNTIL (END + 10 * M)

static struct bankday d;

static void judge(int has_api, long long created, long long began, const struct bankday_span *s,
		  size_t n, long long now)
{
	struct bankday_conn c = {has_api, created, began};

	bankday_judge(&c, s, n, START, now, &d);
}

static void test_time(void)
{
	char t[BANKDAY_TIME_LEN + 1];

	bankday_time(t, START);
	CHECK_STR(t, "2026-11-26T00:00:00.000-03:00");
	bankday_time(t, START + 9 * H + 41 * M + 7123);
	CHECK_STR(t, "2026-11-26T09:41:07.123-03:00");
	bankday_time(t, END - 1);
	CHECK_STR(t, "2026-11-26T23:59:59.999-03:00");
}

/* the day a moment's counts are kept by: midnight in Brasilia, 03:00 UTC */
static void test_date(void)
{
	char day[11];

	bankday_date(day, START);
	CHECK_STR(day, "2026-11-26");
	bankday_date(day, END - 1);
	CHECK_STR(day, "2026-11-26");
	bankday_date(day, END);
	CHECK_STR(day, "2026-11-27");
	bankday_date(day, 0);
	CHECK_STR(day, "1970-01-01");
}

static void test_merge(void)
{
	struct bankday_span s[] = {
	    {50, 60}, {10, 20}, {20, 30}, {15, 18}, {40, 39}, {55, 70}, {71, 80},
	};

	CHECK_INT(bankday_merge(s, 7), 3);
	CHECK_INT(s[0].from_ms, 10);
	CHECK_INT(s[0].to_ms, 30);
	CHECK_INT(s[1].from_ms, 50);
	CHECK_INT(s[1].to_ms, 70);
	CHECK_INT(s[2].from_ms, 71);
	CHECK_INT(s[2].to_ms, 80);
	CHECK_INT(bankday_merge(s, 0), 0);
	s[0] = (struct bankday_span){5, 4};
	CHECK_INT(bankday_merge(s, 1), 0);
}

static void test_complete(void)
{
	/* two runs that overlap, past the end and its ten minutes */
	struct bankday_span s[] = {{START + 11 * H, UNTIL + 5 * M},
				   {START - 2 * H, START + 12 * H}};

	judge(1, START - 48 * H, START - 48 * H, s, 2, UNTIL + 6 * M);
	CHECK_INT(d.complete, 1);
	CHECK_INT(d.nwhy, 0);
	CHECK_INT(d.nread, 1);
	CHECK_INT(d.read[0].from_ms, START);
	CHECK_INT(d.read[0].to_ms, UNTIL);
	/* one millisecond short of the overlap: not complete */
	s[0].to_ms = UNTIL - 1;
	judge(1, START - 48 * H, START - 48 * H, s, 2, UNTIL + 6 * M);
	CHECK_INT(d.complete, 0);
	CHECK_INT(d.nwhy, 1);
	CHECK_STR(d.why[0], "not read from 00:09:59 the next day to 00:10 the next day");
	/* read to midnight only */
	s[0].to_ms = END;
	judge(1, START - 48 * H, START - 48 * H, s, 2, UNTIL + 6 * M);
	CHECK_INT(d.complete, 0);
	CHECK_STR(d.why[0], "not read from 24:00 to 00:10 the next day");
}

static void test_no_api(void)
{
	struct bankday_span s[] = {{START - H, UNTIL + H}};

	judge(0, START - 48 * H, START - 48 * H, s, 1, UNTIL + 2 * H);
	CHECK_INT(d.complete, 0);
	CHECK_INT(d.nwhy, 1);
	CHECK_STR(d.why[0], "the connection has no API credentials: only its webhook is heard");
	CHECK_INT(d.nread, 1); /* what was read is still shown */
}

static void test_first_day(void)
{
	/* credentials given at 09:51: the first window from 09:41 */
	long long began = START + 9 * H + 41 * M;
	struct bankday_span s[] = {{began, UNTIL + H}};

	judge(1, began + 10 * M, began, s, 1, UNTIL + 2 * H);
	CHECK_INT(d.complete, 0);
	CHECK_INT(d.nwhy, 2);
	CHECK_STR(d.why[0], "not read from 00:00 to 09:41");
	CHECK_STR(d.why[1],
		  "the reconciliation began on 2026-11-26 at 09:41, 10 minutes before the "
		  "API credentials were given (bank reconcile --since reads back before it)");
	CHECK_INT(d.read[0].from_ms, began);
	/* backfilled: complete */
	s[0].from_ms = START - 5 * H;
	judge(1, began + 10 * M, began, s, 1, UNTIL + 2 * H);
	CHECK_INT(d.complete, 1);
	CHECK_INT(d.nwhy, 0);
}

static void test_before_the_connection(void)
{
	/* made the next day at 09:51 */
	long long made = END + 9 * H + 51 * M;

	judge(1, made, made - 10 * M, NULL, 0, made + H);
	CHECK_INT(d.complete, 0);
	CHECK_INT(d.nread, 0);
	CHECK_INT(d.nwhy, 2);
	CHECK_STR(d.why[0], "the connection was made on 2026-11-27 at 09:51, after this day (bank "
			    "reconcile --since reads back before it)");
	CHECK_STR(d.why[1], "not read from 00:00 to 00:10 the next day");
}

static void test_today(void)
{
	long long now = START + 14 * H;
	struct bankday_span s[] = {{START - 3 * H, now - 2 * M - 30000}};

	judge(1, START - 48 * H, START - 48 * H, s, 1, now);
	CHECK_INT(d.complete, 0);
	CHECK_INT(d.nwhy, 2);
	CHECK_STR(d.why[0], "not read since 13:57:30");
	CHECK_STR(d.why[1], "the day is not over");
	/* the first day, read from 09:41 to 11:00 only */
	s[0] = (struct bankday_span){START + 9 * H + 41 * M, START + 11 * H};
	judge(1, START + 9 * H + 51 * M, START + 9 * H + 41 * M, s, 1, now);
	CHECK_INT(d.nwhy, 4);
	CHECK_STR(d.why[0], "not read from 00:00 to 09:41");
	CHECK_STR(d.why[1], "not read since 11:00");
	CHECK_STR(d.why[2],
		  "the reconciliation began on 2026-11-26 at 09:41, 10 minutes before the "
		  "API credentials were given (bank reconcile --since reads back before it)");
	CHECK_STR(d.why[3], "the day is not over");
	s[0] = (struct bankday_span){START - 3 * H, now - 2 * M - 30000};
	/* read up to now: only the day's end is missing */
	s[0].to_ms = now;
	judge(1, START - 48 * H, START - 48 * H, s, 1, now);
	CHECK_INT(d.nwhy, 1);
	CHECK_STR(d.why[0], "the day is not over");
	CHECK_INT(d.read[0].to_ms, now);
	/* past midnight, within the overlap */
	s[0].to_ms = END + 5 * M;
	judge(1, START - 48 * H, START - 48 * H, s, 1, END + 5 * M);
	CHECK_INT(d.complete, 0);
	CHECK_INT(d.nwhy, 1);
	CHECK_STR(d.why[0],
		  "the 10 minutes past its end, when the bank may still list its last Pix, "
		  "are not over");
	/* a day to come */
	judge(1, START - 48 * H, START - 48 * H, s, 1, START - 1);
	CHECK_INT(d.complete, 0);
	CHECK_INT(d.nwhy, 1);
	CHECK_STR(d.why[0], "the day has not begun");
}

static void test_gaps(void)
{
	struct bankday_span s[12];
	size_t n = 0;

	/* a gap from 12:00 to 13:05, the rest read */
	s[n++] = (struct bankday_span){START - H, START + 12 * H};
	s[n++] = (struct bankday_span){START + 13 * H + 5 * M, UNTIL + H};
	judge(1, START - 48 * H, START - 48 * H, s, n, UNTIL + 2 * H);
	CHECK_INT(d.complete, 0);
	CHECK_INT(d.nwhy, 1);
	CHECK_STR(d.why[0], "not read from 12:00 to 13:05");
	CHECK_INT(d.nread, 2);
	/* a gap of half a second: a second, said with its seconds */
	s[1].from_ms = START + 12 * H + 500;
	judge(1, START - 48 * H, START - 48 * H, s, n, UNTIL + 2 * H);
	CHECK_STR(d.why[0], "not read from 12:00 to 12:00:01");
	/* a first window that began off the minute */
	s[0] = (struct bankday_span){START + 9 * H + 41 * M + 47755, UNTIL + H};
	judge(1, START + 9 * H + 51 * M, START + 9 * H + 41 * M + 47755, s, 1, UNTIL + 2 * H);
	CHECK_INT(d.nwhy, 2);
	CHECK_STR(d.why[0], "not read from 00:00 to 09:41:47");
	CHECK_STR(d.why[1],
		  "the reconciliation began on 2026-11-26 at 09:41:47, 10 minutes before the "
		  "API credentials were given (bank reconcile --since reads back before it)");
	/* eleven gaps: four said, the others counted */
	n = 0;
	for (int i = 0; i < 10; i++)
		s[n++] = (struct bankday_span){START + i * H + M, START + i * H + 59 * M};
	s[n++] = (struct bankday_span){START + 10 * H, UNTIL + H};
	judge(1, START - 48 * H, START - 48 * H, s, n, UNTIL + 2 * H);
	CHECK_INT(d.complete, 0);
	CHECK_INT(d.nwhy, 5);
	CHECK_STR(d.why[0], "not read from 00:00 to 00:01");
	CHECK_STR(d.why[1], "not read from 00:59 to 01:01");
	CHECK_STR(d.why[3], "not read from 02:59 to 03:01");
	CHECK_STR(d.why[4], "and 7 more spans not read");
	CHECK_INT(d.nread, 11);
	/* spans outside the day are left out, those that only touch it too */
	s[0] = (struct bankday_span){START - 5 * H, START - H};
	s[1] = (struct bankday_span){UNTIL + 1, UNTIL + H};
	s[2] = (struct bankday_span){START - H, START};
	s[3] = (struct bankday_span){UNTIL, UNTIL + H};
	judge(1, START - 48 * H, START - 48 * H, s, 4, UNTIL + 2 * H);
	CHECK_INT(d.nread, 0);
	CHECK_STR(d.why[0], "not read from 00:00 to 00:10 the next day");
}

int main(void)
{
	test_time();
	test_date();
	test_merge();
	test_complete();
	test_no_api();
	test_first_day();
	test_before_the_connection();
	test_today();
	test_gaps();
	return check_finish("bankday");
}
