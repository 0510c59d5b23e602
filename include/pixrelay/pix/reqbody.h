/* reqbody: the small request bodies and filters of the API, without I/O.
 *
 * The refund and internal-transfer bodies and the event filters (the query
 * of GET /v1/events and the body of POST /v1/events/replay) are checked
 * here, apart from their handlers, so that unit tests and fuzz targets call
 * them directly. Every function takes a body parsed by json_parse_object
 * (borrowed), costs time linear in it, and on refusal writes the message a
 * client gets with status 400, naming the field at fault. Outputs are
 * written only on success.
 */
#ifndef PIXRELAY_REQBODY_H
#define PIXRELAY_REQBODY_H

#include "pixrelay/pix/event.h"

#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#define REQBODY_REASON_MAX 500 /* characters of a refund's reason */
#define REQBODY_PIX_KEY_MAX 77

/* POST /v1/charge/{id}/refund: {"amount": <cents>, "reason": "..."}, both
 * optional; `body` may be NULL (no body). Writes the amount asked for (0
 * when not given) to *amount. Returns 0, or -1 with e.g. "unknown field
 * 'x'; allowed: amount, reason" or "amount: must be a positive integer
 * number of cents". */
int reqbody_refund(yajl_val body, int64_t *amount, char *err, size_t errlen);

/* POST /v1/baas/internal-transfer: {"amount", "from_key", "to_key"}, all
 * required. The keys are borrowed from `body`. Returns 0, or -1 with e.g.
 * "amount: must be at least 1 (cent)", "from_key: is required (a Pix key)". */
struct reqbody_transfer {
	int64_t amount;
	const char *from_key, *to_key;
};
int reqbody_transfer(yajl_val body, struct reqbody_transfer *out, char *err, size_t errlen);

/* One filter of an event list: `name` is state, type, since, until, limit
 * or cursor (other names are ignored), `value` its text (NULL: not given).
 * limit must be 1..max_limit. On success the field of *f is set (state and
 * type point to static names, cursor_id into `value`) and 0 returned; else
 * -1 with e.g. "since: must be Unix seconds, 'YYYY-MM-DD HH:MM:SS' (UTC) or
 * RFC 3339" and *f untouched. */
int reqbody_filter_field(const char *name, const char *value, struct event_filter *f, int max_limit,
			 char *err, size_t errlen);

/* POST /v1/events/replay: {"state", "type", "since", "until", "limit"}, all
 * optional (state, type: strings; since, until, limit: strings or
 * integers); `body` may be NULL. Fills *f (the caller sets its defaults
 * first; limit up to EVENT_LIST_MAX). Returns 0, or -1 with the message
 * (*f may then be partly changed). */
int reqbody_replay(yajl_val body, struct event_filter *f, char *err, size_t errlen);

/* POST /v1/events/{id}/replay: {"destination"}, optional ("postback" or a
 * webhook endpoint's id); `body` may be NULL. Writes the destination
 * (borrowed from body; NULL when not given: wherever the event is dead).
 * Returns 0, or -1 with the message. */
int reqbody_event_replay(yajl_val body, const char **destination, char *err, size_t errlen);

#endif
