#include "pixrelay/pix/backoff.h"

#include "check.h"

#include <limits.h>
#include <math.h>

#define SEC 1000LL
#define MIN (60 * SEC)
#define HOUR (60 * MIN)
#define DAY (24 * HOUR)
#define NOJ BACKOFF_RND_NO_JITTER

static void test_defaults(void)
{
	struct backoff_policy p;

	backoff_policy_default(&p);
	CHECK_INT(p.base_ms, 5 * SEC);
	CHECK(p.factor == 3.0);
	CHECK_INT(p.cap_ms, 10 * HOUR);
	CHECK_INT(p.max_attempts, 15);
	CHECK_INT(p.max_age_ms, 3 * DAY);
	CHECK_INT(p.jitter_pct, 20);
}

static void test_schedule(void)
{
	/* the table in backoff.h */
	static const long long want[] = {
	    5 * SEC,
	    15 * SEC,
	    45 * SEC,
	    2 * MIN + 15 * SEC,
	    6 * MIN + 45 * SEC,
	    20 * MIN + 15 * SEC,
	    1 * HOUR + 45 * SEC,
	    3 * HOUR + 2 * MIN + 15 * SEC,
	    9 * HOUR + 6 * MIN + 45 * SEC,
	    10 * HOUR,
	    10 * HOUR,
	    10 * HOUR,
	    10 * HOUR,
	    10 * HOUR,
	};
	struct backoff_policy p;
	long long total = 0;

	backoff_policy_default(&p);
	for (int i = 0; i < 14; i++) {
		CHECK_INT(backoff_delay_ms(&p, i + 1, NOJ), want[i]);
		total += want[i];
	}
	CHECK_INT(total, 63 * HOUR + 40 * MIN + 5 * SEC);
	CHECK(total < p.max_age_ms);
	/* attempt numbers below 1 count as 1 */
	CHECK_INT(backoff_delay_ms(&p, 0, NOJ), 5 * SEC);
	CHECK_INT(backoff_delay_ms(&p, -7, NOJ), 5 * SEC);
	/* the cap holds from attempt 10 on */
	CHECK_INT(backoff_delay_ms(&p, 9, NOJ), 32805 * SEC);
	CHECK_INT(backoff_delay_ms(&p, 10, NOJ), p.cap_ms);
	CHECK_INT(backoff_delay_ms(&p, 100, NOJ), p.cap_ms);
}

static void test_jitter(void)
{
	struct backoff_policy p;

	backoff_policy_default(&p);
	/* rnd = 0 is exactly -20 %, UINT32_MAX just under +20 %, 2^31 no change */
	CHECK_INT(backoff_delay_ms(&p, 1, 0), 4000);
	CHECK_INT(backoff_delay_ms(&p, 1, UINT32_MAX), 5999);
	CHECK_INT(backoff_delay_ms(&p, 1, 0xc0000000u), 5500);
	CHECK_INT(backoff_delay_ms(&p, 1, 0x40000000u), 4500);
	CHECK_INT(backoff_delay_ms(&p, 1, NOJ - 1), 5000);
	CHECK_INT(backoff_delay_ms(&p, 1, NOJ + 1), 5000);
	CHECK_INT(backoff_delay_ms(&p, 2, 0), 12000);
	CHECK_INT(backoff_delay_ms(&p, 2, UINT32_MAX), 17999);
	/* jitter applies after the cap */
	CHECK_INT(backoff_delay_ms(&p, 12, 0), 8 * HOUR);
	CHECK_INT(backoff_delay_ms(&p, 12, UINT32_MAX), 12 * HOUR - 1);

	/* always within +/- 20 % and non-decreasing in rnd */
	for (int attempt = 1; attempt <= 16; attempt++) {
		long long d = backoff_delay_ms(&p, attempt, NOJ), prev = -1;
		int ok = 1;
		for (uint64_t r = 0; r <= UINT32_MAX; r += 0x01000193u) {
			long long j = backoff_delay_ms(&p, attempt, (uint32_t)r);
			if (j < d - d / 5 || j >= d + d / 5 || j < prev)
				ok = 0;
			prev = j;
		}
		CHECK(ok);
	}

	/* 0 % means none; the percentage is clamped to 100 */
	p.jitter_pct = 0;
	CHECK_INT(backoff_delay_ms(&p, 1, 0), 5000);
	CHECK_INT(backoff_delay_ms(&p, 1, UINT32_MAX), 5000);
	p.jitter_pct = -20;
	CHECK_INT(backoff_delay_ms(&p, 1, 0), 5000);
	p.jitter_pct = 250;
	CHECK_INT(backoff_delay_ms(&p, 1, 0), 0);
	CHECK_INT(backoff_delay_ms(&p, 1, UINT32_MAX), 9999);
}

static void test_odd_policies(void)
{
	struct backoff_policy p;

	backoff_policy_default(&p);
	p.jitter_pct = 0;

	/* huge attempt numbers reach the cap without overflow */
	CHECK_INT(backoff_delay_ms(&p, INT_MAX, NOJ), 10 * HOUR);
	p.cap_ms = LLONG_MAX;
	CHECK_INT(backoff_delay_ms(&p, 20, NOJ), 5000 * 1162261467LL); /* 3^19 */
	CHECK_INT(backoff_delay_ms(&p, 40, NOJ), LLONG_MAX);
	CHECK_INT(backoff_delay_ms(&p, INT_MAX, NOJ), LLONG_MAX);
	p.jitter_pct = 20;
	CHECK_INT(backoff_delay_ms(&p, INT_MAX, UINT32_MAX), LLONG_MAX);
	CHECK_INT(backoff_delay_ms(&p, INT_MAX, 0), 7378697629483820646LL);
	CHECK_INT(backoff_delay_ms(&p, INT_MAX, NOJ), LLONG_MAX);
	p.jitter_pct = 0;

	/* factor 1 is constant; below 1 or NaN counts as 1; 2 doubles */
	p.cap_ms = 10 * HOUR;
	p.factor = 1.0;
	CHECK_INT(backoff_delay_ms(&p, INT_MAX, NOJ), 5000);
	p.factor = 0.5;
	CHECK_INT(backoff_delay_ms(&p, 5, NOJ), 5000);
	p.factor = NAN;
	CHECK_INT(backoff_delay_ms(&p, 5, NOJ), 5000);
	p.factor = INFINITY;
	CHECK_INT(backoff_delay_ms(&p, 1, NOJ), 5000);
	CHECK_INT(backoff_delay_ms(&p, 2, NOJ), 10 * HOUR);
	p.factor = 2.5;
	CHECK_INT(backoff_delay_ms(&p, 3, NOJ), 31250);

	/* the cap wins over the base; negative values count as 0 */
	p.factor = 3.0;
	p.base_ms = 20 * HOUR;
	CHECK_INT(backoff_delay_ms(&p, 1, NOJ), 10 * HOUR);
	p.base_ms = -5;
	CHECK_INT(backoff_delay_ms(&p, 3, NOJ), 0);
	p.base_ms = 5000;
	p.cap_ms = -1;
	CHECK_INT(backoff_delay_ms(&p, 3, NOJ), 0);
}

static void test_next(void)
{
	struct backoff_policy p;
	const long long created = 1700000000000LL;
	long long next = 42;

	backoff_policy_default(&p);
	CHECK_INT(backoff_next(&p, 1, created, created, -1, NOJ, &next), BACKOFF_RETRY);
	CHECK_INT(next, created + 5 * SEC);
	CHECK_INT(backoff_next(&p, 2, created, created + 9 * SEC, -1, 0, &next), BACKOFF_RETRY);
	CHECK_INT(next, created + 9 * SEC + 12 * SEC);

	/* give up at max attempts; next is left alone */
	next = 42;
	CHECK_INT(backoff_next(&p, 14, created, created + MIN, -1, NOJ, &next), BACKOFF_RETRY);
	CHECK_INT(next, created + MIN + 10 * HOUR);
	next = 42;
	CHECK_INT(backoff_next(&p, 15, created, created + MIN, -1, NOJ, &next), BACKOFF_GIVE_UP);
	CHECK_INT(backoff_next(&p, 16, created, created + MIN, -1, NOJ, &next), BACKOFF_GIVE_UP);
	CHECK_INT(backoff_next(&p, INT_MAX, created, created, 0, NOJ, &next), BACKOFF_GIVE_UP);
	CHECK_INT(next, 42);

	/* give up when the next attempt would fall after created + max age */
	CHECK_INT(backoff_next(&p, 1, created, created + 3 * DAY - 5 * SEC, -1, NOJ, &next),
		  BACKOFF_RETRY);
	CHECK_INT(next, created + 3 * DAY);
	next = 42;
	CHECK_INT(backoff_next(&p, 1, created, created + 3 * DAY - 4 * SEC, -1, NOJ, &next),
		  BACKOFF_GIVE_UP);
	CHECK_INT(backoff_next(&p, 1, created, created + 4 * DAY, -1, NOJ, &next), BACKOFF_GIVE_UP);
	CHECK_INT(next, 42);

	/* a whole delivery without jitter: 15 attempts, the last at 63 h 40 min 05 s */
	long long now = created;
	int attempts = 1;
	while (backoff_next(&p, attempts, created, now, -1, NOJ, &next) == BACKOFF_RETRY) {
		now = next;
		attempts++;
	}
	CHECK_INT(attempts, 15);
	CHECK_INT(now - created, 63 * HOUR + 40 * MIN + 5 * SEC);
	/* every delay drawn at the top: the max age stops it one attempt earlier */
	now = created;
	attempts = 1;
	while (backoff_next(&p, attempts, created, now, -1, UINT32_MAX, &next) == BACKOFF_RETRY) {
		now = next;
		attempts++;
	}
	CHECK_INT(attempts, 14);
	CHECK(now - created <= 3 * DAY);
	/* every delay drawn at the bottom: all 15 attempts */
	now = created;
	attempts = 1;
	while (backoff_next(&p, attempts, created, now, -1, 0, &next) == BACKOFF_RETRY) {
		now = next;
		attempts++;
	}
	CHECK_INT(attempts, 15);
	CHECK_INT(now - created, (63 * HOUR + 40 * MIN + 5 * SEC) * 4 / 5);

	/* Retry-After replaces the schedule, without jitter, within [base, cap] */
	CHECK_INT(backoff_next(&p, 1, created, created, 0, NOJ, &next), BACKOFF_RETRY);
	CHECK_INT(next, created + 5 * SEC);
	CHECK_INT(backoff_next(&p, 1, created, created, 1 * SEC, NOJ, &next), BACKOFF_RETRY);
	CHECK_INT(next, created + 5 * SEC);
	CHECK_INT(backoff_next(&p, 1, created, created, 2 * MIN, 0, &next), BACKOFF_RETRY);
	CHECK_INT(next, created + 2 * MIN);
	CHECK_INT(backoff_next(&p, 9, created, created, 2 * MIN, UINT32_MAX, &next), BACKOFF_RETRY);
	CHECK_INT(next, created + 2 * MIN);
	CHECK_INT(backoff_next(&p, 1, created, created, 10 * HOUR, NOJ, &next), BACKOFF_RETRY);
	CHECK_INT(next, created + 10 * HOUR);
	CHECK_INT(backoff_next(&p, 1, created, created, 10 * HOUR + 1, NOJ, &next), BACKOFF_RETRY);
	CHECK_INT(next, created + 10 * HOUR);
	CHECK_INT(backoff_next(&p, 1, created, created, LLONG_MAX, NOJ, &next), BACKOFF_RETRY);
	CHECK_INT(next, created + 10 * HOUR);
	/* ... but not past the max age or the max attempts */
	next = 42;
	CHECK_INT(backoff_next(&p, 3, created, created + 3 * DAY - HOUR, 2 * HOUR, NOJ, &next),
		  BACKOFF_GIVE_UP);
	CHECK_INT(backoff_next(&p, 15, created, created, 0, NOJ, &next), BACKOFF_GIVE_UP);
	CHECK_INT(next, 42);

	/* times at the edge of the range do not overflow */
	CHECK_INT(backoff_next(&p, 1, created, LLONG_MAX - 10, -1, NOJ, &next), BACKOFF_GIVE_UP);
	CHECK_INT(backoff_next(&p, 1, LLONG_MAX - 10, LLONG_MAX - 10, -1, NOJ, &next),
		  BACKOFF_GIVE_UP);
	CHECK_INT(backoff_next(&p, 1, LLONG_MAX - 10 * SEC, LLONG_MAX - 10 * SEC, -1, NOJ, &next),
		  BACKOFF_RETRY);
	CHECK_INT(next, LLONG_MAX - 5 * SEC);

	/* no limits */
	p.max_attempts = 0;
	p.max_age_ms = 0;
	CHECK_INT(backoff_next(&p, 1000, created, created + 365 * DAY, -1, NOJ, &next),
		  BACKOFF_RETRY);
	CHECK_INT(next, created + 365 * DAY + 10 * HOUR);
}

static void retry_after_ok(const char *v, long long now, long long want, int line)
{
	long long got = -42;
	int r = backoff_parse_retry_after(v, now, &got);

	check_count++;
	if (r != 0 || got != want) {
		check_failures++;
		fprintf(stderr, "%s:%d: \"%s\" gave %d, %lld; want 0, %lld\n", __FILE__, line, v, r,
			got, want);
	}
}

static void retry_after_bad(const char *v, long long now, int line)
{
	long long got = -42;
	int r = backoff_parse_retry_after(v, now, &got);

	check_count++;
	if (r != -1 || got != -42) {
		check_failures++;
		fprintf(stderr, "%s:%d: \"%s\" gave %d, %lld; want -1, untouched\n", __FILE__, line,
			v, r, got);
	}
}

#define RA_OK(v, now, want) retry_after_ok((v), (now), (want), __LINE__)
#define RA_BAD(v, now) retry_after_bad((v), (now), __LINE__)

static void test_double(void)
{
	/* the embedded Redis's restarts: 100 ms doubled up to 6.4 s */
	static const long long want[] = {200, 400, 800, 1600, 3200, 6400, 6400};
	long long d = 100;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		d = backoff_double(d, 6400);
		CHECK_INT(d, want[i]);
	}
	CHECK_INT(backoff_double(50, 30000), 100);
	CHECK_INT(backoff_double(20000, 30000), 30000); /* capped, never over */
	CHECK_INT(backoff_double(15000, 30000), 30000);
	CHECK_INT(backoff_double(14999, 30000), 29998);
	CHECK_INT(backoff_double(LLONG_MAX / 2 + 1, LLONG_MAX), LLONG_MAX); /* no overflow */
}

static void test_retry_after(void)
{
	const long long t2015 = 1445412480; /* Wed, 21 Oct 2015 07:28:00 GMT */
	const long long max_ms = BACKOFF_RETRY_AFTER_MAX_S * 1000;

	/* delta-seconds */
	RA_OK("120", 0, 120 * SEC);
	RA_OK("0", t2015, 0);
	RA_OK("007", t2015, 7 * SEC);
	RA_OK(" 120\t", t2015, 120 * SEC);
	RA_OK("2147483647", t2015, 2147483647LL * SEC);
	RA_OK("2147483648", t2015, max_ms);
	RA_OK("2147483649", t2015, max_ms);
	RA_OK("99999999999999999999999999999999999999", t2015, max_ms);

	/* HTTP-date, all three forms */
	RA_OK("Wed, 21 Oct 2015 07:28:00 GMT", t2015 - 120, 120 * SEC);
	RA_OK("Wed, 21 Oct 2015 07:28:00 GMT", t2015, 0);
	RA_OK("Wed, 21 Oct 2015 07:28:00 GMT", t2015 + 3600, 0);
	RA_OK("Wednesday, 21-Oct-15 07:28:00 GMT", t2015 - 120, 120 * SEC);
	RA_OK("Wed Oct 21 07:28:00 2015", t2015 - 120, 120 * SEC);
	RA_OK("Sun Nov  6 08:49:37 1994", 784111777 - 1, 1 * SEC);
	RA_OK("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 - 1, 1 * SEC);
	RA_OK("  Wed, 21 Oct 2015 07:28:00 GMT  ", t2015 - 1, 1 * SEC);
	RA_OK("Mon, 29 Feb 2016 00:00:00 GMT", 1456704000 - 60, 60 * SEC);
	RA_OK("Thu, 01 Jan 1970 00:00:00 GMT", t2015, 0);
	RA_OK("Fri, 31 Dec 9999 23:59:59 GMT", t2015, max_ms);
	RA_OK("Fri, 31 Dec 9999 23:59:59 GMT", LLONG_MIN, max_ms);
	RA_OK("Wed, 21 Oct 2015 07:28:00 GMT", LLONG_MAX, 0);
	RA_OK("Wed, 21 Oct 2015 07:28:60 GMT", t2015, 60 * SEC); /* leap second */
	/* rfc850 two-digit years: up to 50 years ahead, else the past century */
	RA_OK("Wednesday, 21-Oct-65 07:28:00 GMT", t2015, 1577923200 * SEC);
	RA_OK("Friday, 21-Oct-66 07:28:00 GMT", t2015, 0);
	RA_OK("Sunday, 06-Nov-94 08:49:37 GMT", 784111777 - 2, 2 * SEC);

	/* malformed */
	RA_BAD("", t2015);
	RA_BAD("   ", t2015);
	RA_BAD("-5", t2015);
	RA_BAD("-0", t2015);
	RA_BAD("+5", t2015);
	RA_BAD("1.5", t2015);
	RA_BAD("12a", t2015);
	RA_BAD("1 2", t2015);
	RA_BAD("0x10", t2015);
	RA_BAD("soon", t2015);
	RA_BAD("120 seconds", t2015);
	RA_BAD("Wed, 21 Oct 2015 07:28:00 UTC", t2015);
	RA_BAD("Wed, 21 Oct 2015 07:28:00 gmt", t2015);
	RA_BAD("wed, 21 Oct 2015 07:28:00 GMT", t2015);
	RA_BAD("Wed, 21 oct 2015 07:28:00 GMT", t2015);
	RA_BAD("Wed, 21 Oct 2015 07:28:00", t2015);
	RA_BAD("Wed, 21 Oct 2015 07:28 GMT", t2015);
	RA_BAD("Wed, 21 Oct 15 07:28:00 GMT", t2015);
	RA_BAD("Wed, 1 Oct 2015 07:28:00 GMT", t2015);
	RA_BAD("Wed,21 Oct 2015 07:28:00 GMT", t2015);
	RA_BAD("Wed, 21 Oct 2015 07:28:00 GMT x", t2015);
	RA_BAD("Wed, 21 Oct 2015 07:28:00 GMT\n", t2015);
	RA_BAD("Wed, 32 Oct 2015 07:28:00 GMT", t2015);
	RA_BAD("Wed, 00 Oct 2015 07:28:00 GMT", t2015);
	RA_BAD("Sun, 29 Feb 2015 07:28:00 GMT", t2015);
	RA_BAD("Wed, 31 Sep 2015 07:28:00 GMT", t2015);
	RA_BAD("Wed, 21 Oct 2015 24:00:00 GMT", t2015);
	RA_BAD("Wed, 21 Oct 2015 07:60:00 GMT", t2015);
	RA_BAD("Wed, 21 Oct 2015 07:28:61 GMT", t2015);
	RA_BAD("Wed, 21 Oct -015 07:28:00 GMT", t2015);
	RA_BAD("Wed, 21-Oct-15 07:28:00 GMT", t2015);
	RA_BAD("Wednesday, 21 Oct 2015 07:28:00 GMT", t2015);
	RA_BAD("Wed Oct 21 07:28:00 2015 GMT", t2015);
	RA_BAD("Sun Nov 6 08:49:37 1994", t2015);
	RA_BAD("Sun Nov  6 08:49:37 94", t2015);
	RA_BAD("2015-10-21T07:28:00Z", t2015);
}

int main(void)
{
	test_defaults();
	test_schedule();
	test_jitter();
	test_odd_policies();
	test_next();
	test_double();
	test_retry_after();
	return check_finish("backoff");
}
