#include "pixrelay/timefmt.h"

#include <stdio.h>
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
