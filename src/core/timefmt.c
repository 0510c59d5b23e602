/* timefmt: moments as text, always UTC: written as the spec's `YYYY-MM-DD
 * HH:MM:SS` or as RFC 3339, and read back, with Unix seconds, by
 * timefmt_parse. What it reads is outside input (since and until of the
 * event listings, a bank's timestamps, the CLI's --since): every field is
 * checked against the calendar and nothing is read past the NUL. Hinnant's
 * days_from_civil keeps mktime and the local zone out. Pure: no I/O. */
#include "pixrelay/core/timefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void timefmt_format(char out[TIMEFMT_LEN + 1], uint64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, TIMEFMT_LEN + 1, "%Y-%m-%d %H:%M:%S", &tm);
}

void timefmt_rfc3339(char out[25], uint64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char buf[20];

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, 25, "%s.%03uZ", buf, (unsigned)(ms % 1000));
}

/* Exactly `n` decimal digits at p, their value in *v; -1 otherwise (a NUL
 * stops it, so p is never read past the end). */
static int digits(const char *p, int n, int *v)
{
	int x = 0;

	for (int i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		x = x * 10 + (p[i] - '0');
	}
	*v = x;
	return 0;
}

/* H. Hinnant's algorithm */
long long timefmt_days_from_civil(long long y, int m, int d)
{
	long long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

int timefmt_days_in_month(long long y, int m)
{
	static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	if (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))
		return 29;
	return mdays[m - 1];
}

int timefmt_parse(const char *s, long long *ms)
{
	int y, mo, d, h, mi, sec, oh, om;
	long long frac = 0, t, off = 0;
	const char *p = s;
	size_t n = strspn(s, "0123456789");

	/* Unix seconds: digits only, up to 9999-12-31T23:59:59Z */
	if (n > 0 && s[n] == '\0') {
		if (n > 12)
			return -1;
		t = strtoll(s, NULL, 10);
		if (t > 253402300799LL)
			return -1;
		*ms = t * 1000;
		return 0;
	}
	/* YYYY-MM-DD, ' ' or 'T', HH:MM:SS, each index read only once the one
	 * before it was a digit or a separator (never past the NUL) */
	if (digits(p, 4, &y) || p[4] != '-' || digits(p + 5, 2, &mo) || p[7] != '-' ||
	    digits(p + 8, 2, &d) || (p[10] != ' ' && p[10] != 'T') || digits(p + 11, 2, &h) ||
	    p[13] != ':' || digits(p + 14, 2, &mi) || p[16] != ':' || digits(p + 17, 2, &sec))
		return -1;
	if (mo < 1 || mo > 12 || h > 23 || mi > 59 || sec > 60)
		return -1;
	if (d < 1 || d > timefmt_days_in_month(y, mo))
		return -1;
	p += 19;
	if (*p == '.') {
		int count = 0;
		/* milliseconds: the first three digits count, any more are dropped */
		for (p++; *p >= '0' && *p <= '9'; p++, count++)
			if (count < 3)
				frac = frac * 10 + (*p - '0');
		if (count == 0)
			return -1;
		for (; count < 3; count++)
			frac *= 10;
	}
	if (*p == 'Z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		if (digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om) || oh > 23 ||
		    om > 59)
			return -1;
		off = (oh * 60LL + om) * 60 * (*p == '+' ? 1 : -1);
		p += 6;
	}
	if (*p)
		return -1;
	t = timefmt_days_from_civil(y, mo, d) * 86400 + h * 3600LL + mi * 60LL + sec - off;
	if (t < 0)
		return -1;
	*ms = t * 1000 + frac;
	return 0;
}
