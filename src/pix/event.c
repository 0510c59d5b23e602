/* event: the types of event, and the cursor of an event listing, parsed. */
#include "pixrelay/pix/event.h"

#include <stdlib.h>
#include <string.h>

const char *const event_types[EVENT_NTYPES] = {
    "EVENT:CHARGE_PAID", "EVENT:CHARGE_EXPIRED", "EVENT:CHARGE_REFUND", "EVENT:PIX_UNMATCHED",
    "EVENT:PIX_REFUND", "EVENT:PIX_MED_REFUND", "EVENT:PIX_REFUSED", "EVENT:TRANSFER_DONE",
    /* Pix Automático (docs/recurrences.md) */
    "EVENT:RECURRENCE_APPROVED", "EVENT:RECURRENCE_REJECTED", "EVENT:RECURRENCE_EXPIRED",
    "EVENT:RECURRENCE_CANCELLED",
    /* its recurring charges: an attempt failed, a retry scheduled (and a
     * recurring charge rejected or cancelled) */
    "EVENT:CHARGE_FAILED", "EVENT:CHARGE_RETRY_SCHEDULED"};

const char *const event_operational_types[EVENT_NOPERATIONAL] = {
    "EVENT:OPERATIONAL_ENDPOINT_DISABLED",
    "EVENT:OPERATIONAL_ENDPOINT_ENABLED",
    "EVENT:OPERATIONAL_DELIVERY_DEAD",
    "EVENT:OPERATIONAL_DELIVERIES_EXPIRED",
    "EVENT:OPERATIONAL_RECONCILIATION_FAILING",
    "EVENT:OPERATIONAL_RECONCILIATION_LATE",
    "EVENT:OPERATIONAL_RECONCILIATION_RECOVERED",
    "EVENT:OPERATIONAL_PIX_RECOVERED"};

const char *event_type_named(const char *type)
{
	for (int i = 0; type && i < EVENT_NTYPES; i++)
		if (strcmp(type, event_types[i]) == 0)
			return event_types[i];
	for (int i = 0; type && i < EVENT_NOPERATIONAL; i++)
		if (strcmp(type, event_operational_types[i]) == 0)
			return event_operational_types[i];
	return NULL;
}

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
