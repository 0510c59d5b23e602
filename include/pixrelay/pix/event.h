/* event: what an event is, apart from where it is stored (no I/O): its id,
 * the filter of a listing and the opaque cursor that continues one.
 */
#ifndef PIXRELAY_EVENT_H
#define PIXRELAY_EVENT_H

#include "pixrelay/pix/keyspace.h"

#define EVENT_ID_MAX KS_EVENT_ID_MAX /* "evt_" + ULID + NUL fits */

/* The types of event pixrelay makes (docs/postbacks.md, docs/banks.md): a
 * charge paid, expired or refunded, a Pix a bank reported that paid no
 * charge, a refund of one that changed none, a refund of the MED, an item
 * a bank reported that the standard's schema refused, an internal
 * transfer, a recurrence of Pix Automático approved, rejected, expired
 * or cancelled, and of its recurring charges an attempt that failed (or
 * the charge failed) and a retry scheduled. */
#define EVENT_NTYPES 14
extern const char *const event_types[EVENT_NTYPES];
/* "EVENT:CHARGE_PAID, EVENT:CHARGE_EXPIRED, ... or EVENT:PIX_REFUND", for
 * messages. */
#define EVENT_TYPES_TEXT                                                                           \
	"EVENT:CHARGE_PAID, EVENT:CHARGE_EXPIRED, EVENT:CHARGE_REFUND, EVENT:PIX_UNMATCHED, "      \
	"EVENT:PIX_REFUND, EVENT:PIX_MED_REFUND, EVENT:PIX_REFUSED, EVENT:TRANSFER_DONE, "         \
	"EVENT:CHARGE_FAILED, EVENT:CHARGE_RETRY_SCHEDULED or "                                    \
	"EVENT:RECURRENCE_ followed by APPROVED, REJECTED, EXPIRED or CANCELLED"

/* The operational types (docs/postbacks.md, "Operational events"): what
 * pixrelay tells an account about its own delivery and reconciliation, an
 * endpoint disabled or enabled again, a delivery dead after its last
 * attempt, an endpoint's kept deliveries dead at the retention, a bank
 * connection's reconciliation failing, late or working again, and the Pix a
 * day's reconciliation recovered. The same list as
 * src/store/lua/lib/operational.lua's TYPES. */
#define EVENT_NOPERATIONAL 8
extern const char *const event_operational_types[EVENT_NOPERATIONAL];
/* "EVENT:OPERATIONAL_ followed by ENDPOINT_DISABLED, ... or PIX_RECOVERED",
 * for messages (short enough for one of 1024 bytes with EVENT_TYPES_TEXT). */
#define EVENT_OPERATIONAL_TYPES_TEXT                                                               \
	"EVENT:OPERATIONAL_ followed by ENDPOINT_DISABLED, ENDPOINT_ENABLED, DELIVERY_DEAD, "      \
	"DELIVERIES_EXPIRED, RECONCILIATION_FAILING, RECONCILIATION_LATE, "                        \
	"RECONCILIATION_RECOVERED or PIX_RECOVERED"

/* The type named `type` as its static string (of event_types or
 * event_operational_types), or NULL when pixrelay makes no such type. */
const char *event_type_named(const char *type);

/* Which events to list. Strings borrowed; "" = any. */
struct event_filter {
	const char *state;   /* pending, delivering, delivered, dead */
	const char *type;    /* EVENT:CHARGE_PAID, ... */
	long long since_ms;  /* created at or after (0 = any) */
	long long until_ms;  /* created at or before (0 = any) */
	int limit;	     /* 1..EVENT_LIST_MAX */
	long long cursor_ms; /* continue below this point (0 = from the newest) */
	const char *cursor_id;
};

#define EVENT_LIST_MAX 1000

/* Parse an opaque cursor ("<ms>_<event id>"); 0 or -1. The id points into s. */
int event_parse_cursor(const char *s, long long *ms, const char **id);

#endif
