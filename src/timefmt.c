#include "pixrelay/timefmt.h"

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

int timefmt_parse(const char *s, long long *ms)
{
	struct tm tm;
	const char *p;
	char *end = NULL;
	long long v, frac = 0;
	int off = 0;

	if (!*s)
		return -1;
	v = strtoll(s, &end, 10);
	if (*end == '\0' && end != s) {
		if (v < 0 || v > 253402300799LL)
			return -1;
		*ms = v * 1000;
		return 0;
	}
	memset(&tm, 0, sizeof(tm));
	p = strptime(s, "%Y-%m-%d", &tm);
	if (!p || (*p != ' ' && *p != 'T'))
		return -1;
	p = strptime(p + 1, "%H:%M:%S", &tm);
	if (!p)
		return -1;
	if (*p == '.') {
		int digits = 0;
		for (p++; *p >= '0' && *p <= '9'; p++, digits++)
			if (digits < 3)
				frac = frac * 10 + (*p - '0');
		if (digits == 0)
			return -1;
		for (; digits < 3; digits++)
			frac *= 10;
	}
	if (*p == 'Z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int hh, mm;
		if (sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2 || hh > 23 || mm > 59)
			return -1;
		off = (hh * 60 + mm) * 60 * (*p == '+' ? 1 : -1);
		p += 6;
	}
	if (*p)
		return -1;
	*ms = ((long long)timegm(&tm) - off) * 1000 + frac;
	return *ms < 0 ? -1 : 0;
}
