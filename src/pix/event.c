/* event: the cursor of an event listing, parsed. */
#include "pixrelay/pix/event.h"

#include <stdlib.h>
#include <string.h>

int event_parse_cursor(const char *s, long long *ms, const char **id)
{
	char *end = NULL;
	long long v = strtoll(s, &end, 10);

	if (end == s || *end != '_' || v <= 0 || strncmp(end + 1, "evt_", 4) != 0 ||
	    ks_shard_of(end + 1) < 0)
		return -1;
	*ms = v;
	*id = end + 1;
	return 0;
}
