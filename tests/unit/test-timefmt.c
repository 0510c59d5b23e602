/* Unit tests of timefmt: formatting, and the strict parser of the event
 * filters' since/until. */
#include "check.h"

#include "pixrelay/core/timefmt.h"

#include <stdlib.h>
#include <string.h>

static long long parse(const char *s)
{
	long long ms = -7;

	return timefmt_parse(s, &ms) == 0 ? ms : -1;
}

int main(void)
{
	char out[32];

	timefmt_format(out, 1795306551123ULL);
	CHECK_STR(out, "2026-11-22 00:15:51");
	timefmt_rfc3339(out, 1795306551123ULL);
	CHECK_STR(out, "2026-11-22T00:15:51.123Z");

	CHECK_INT(parse("1795306551"), 1795306551000LL);
	CHECK_INT(parse("0"), 0);
	CHECK_INT(parse("253402300799"), 253402300799000LL);
	CHECK_INT(parse("253402300800"), -1);
	CHECK_INT(parse("0000000000001"), -1); /* 13 digits */
	CHECK_INT(parse(" 5"), -1);
	CHECK_INT(parse("+5"), -1);
	CHECK_INT(parse("-5"), -1);
	CHECK_INT(parse(""), -1);

	CHECK_INT(parse("2026-11-22 00:15:51"), 1795306551000LL);
	CHECK_INT(parse("2026-11-22T00:15:51Z"), 1795306551000LL);
	CHECK_INT(parse("2026-11-22T00:15:51.123Z"), 1795306551123LL);
	CHECK_INT(parse("2026-11-22T00:15:51.1Z"), 1795306551100LL);
	CHECK_INT(parse("2026-11-22T00:15:51.123999Z"), 1795306551123LL);
	CHECK_INT(parse("2026-11-22T00:15:51+00:00"), 1795306551000LL);
	CHECK_INT(parse("2026-11-21T21:15:51-03:00"), 1795306551000LL);
	CHECK_INT(parse("2026-11-22T03:15:51.5+03:00"), 1795306551500LL);
	CHECK_INT(parse("1970-01-01T00:00:00Z"), 0);
	CHECK_INT(parse("1970-01-01T00:00:00+00:01"), -1); /* before 1970 */
	CHECK_INT(parse("2024-02-29 12:00:00"), 1709208000000LL);
	CHECK_INT(parse("2016-12-31T23:59:60Z"), 1483228800000LL);
	CHECK_INT(parse("9999-12-31T23:59:59Z"), 253402300799000LL);

	/* a sign must have HH:MM after it: "-3:00" once read past the end */
	CHECK_INT(parse("6026-11-22T00:15:51.123600-3:00"), -1);
	CHECK_INT(parse("2026-11-22T00:15:51-03"), -1);
	CHECK_INT(parse("2026-11-22T00:15:51+"), -1);
	CHECK_INT(parse("2026-11-22T00:15:51+03:0"), -1);
	CHECK_INT(parse("2026-11-22T00:15:51+24:00"), -1);
	CHECK_INT(parse("2026-11-22T00:15:51+03:00x"), -1);
	CHECK_INT(parse("2026-11-22T00:15:51."), -1);
	CHECK_INT(parse("2026-11-22T00:15:51.Z"), -1);
	CHECK_INT(parse("2026-11-22T00:15:51ZZ"), -1);
	/* exact digit counts and real dates */
	CHECK_INT(parse("2026-1-22 00:15:51"), -1);
	CHECK_INT(parse("2026-11-22 0:15:51"), -1);
	CHECK_INT(parse("20260-11-22 00:15:51"), -1);
	CHECK_INT(parse(" 2026-11-22 00:15:51"), -1);
	CHECK_INT(parse("2026-13-01T00:00:00Z"), -1);
	CHECK_INT(parse("2026-00-01T00:00:00Z"), -1);
	CHECK_INT(parse("2025-02-29T00:00:00Z"), -1);
	CHECK_INT(parse("2100-02-29T00:00:00Z"), -1);
	CHECK_INT(parse("2026-04-31T00:00:00Z"), -1);
	CHECK_INT(parse("2026-11-22T24:00:00Z"), -1);
	CHECK_INT(parse("2026-11-22T23:60:00Z"), -1);
	CHECK_INT(parse("2026-11-22T23:59:61Z"), -1);
	CHECK_INT(parse("2026-11-22x00:15:51"), -1);
	CHECK_INT(parse("2026-11-22"), -1);
	CHECK_INT(parse("2026-11-22T00:15"), -1);
	CHECK_INT(parse("1969-12-31T23:59:59Z"), -1);
	/* every prefix of a valid moment that is not one itself ("2026" is Unix
	 * seconds, "...51.12" a moment) is refused, none read past its end */
	{
		const char *full = "2026-11-22T00:15:51.123+03:00";
		for (size_t n = 0; n < strlen(full); n++) {
			char *p = malloc(n + 1);
			if (!p)
				abort();
			memcpy(p, full, n);
			p[n] = '\0';
			if (n > 4 && n != 19 && (n < 21 || n > 23))
				CHECK_INT(parse(p), -1);
			free(p);
		}
	}
	/* the calendar arithmetic that timefmt_parse and backoff's HTTP dates share */
	CHECK_INT(timefmt_days_from_civil(1970, 1, 1), 0);
	CHECK_INT(timefmt_days_from_civil(1969, 12, 31), -1);
	CHECK_INT(timefmt_days_from_civil(2000, 3, 1), 11017);
	CHECK_INT(timefmt_days_in_month(2024, 2), 29);
	CHECK_INT(timefmt_days_in_month(2000, 2), 29);
	CHECK_INT(timefmt_days_in_month(1900, 2), 28);
	CHECK_INT(timefmt_days_in_month(2023, 4), 30);
	CHECK_INT(timefmt_days_in_month(2023, 12), 31);
	return check_finish("timefmt");
}
