/* Fuzz the Retry-After parser (a destination's answer header): delay-seconds
 * and the three HTTP-date forms, judged against several "now"s, including
 * the extremes. Never crash or overflow (UBSan); an accepted value gives a
 * delay from 0 to BACKOFF_RETRY_AFTER_MAX_S seconds. Also feeds the moment
 * parser of the event filters (timefmt_parse). */
#include "pixrelay/pix/backoff.h"
#include "pixrelay/core/timefmt.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const long long nows[] = {0, 1795307992LL, -1, LLONG_MAX, LLONG_MIN, 784111777LL};
	char *s = malloc(size + 1);
	long long ms;

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	for (size_t i = 0; i < sizeof(nows) / sizeof(nows[0]); i++) {
		long long d = -1;
		if (backoff_parse_retry_after(s, nows[i], &d) == 0 &&
		    (d < 0 || d > BACKOFF_RETRY_AFTER_MAX_S * 1000))
			__builtin_trap();
	}
	(void)timefmt_parse(s, &ms);
	free(s);
	return 0;
}
