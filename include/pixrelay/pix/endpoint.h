/* endpoint: a webhook endpoint as values (no I/O): the body of a create or
 * an update (POST and PATCH /v1/webhook-endpoints, and the command line,
 * which builds the same body), its event type filter, its static headers,
 * the check of a production destination written as an IP address, and the
 * grace of a secret's rotation. Each refusal names its field, as a client
 * gets it with status 400. Storing endpoints and fanning events out to them
 * is store/endpoints.c and src/store/lua/lib/endpoint.lua
 * (docs/event-layout.md, "Endpoints").
 */
#ifndef PIXRELAY_ENDPOINT_H
#define PIXRELAY_ENDPOINT_H

#include "pixrelay/core/netaddr.h"
#include "pixrelay/pix/env.h"

#include <stdbool.h>
#include <stddef.h>
#include <yajl/yajl_tree.h>

#define ENDPOINT_ID_MAX 32	      /* "wep_" + ULID + NUL fits */
#define ENDPOINT_MAX 20		      /* endpoints of one account in one environment */
#define ENDPOINT_DESCRIPTION_MAX 200  /* characters */
#define ENDPOINT_TYPES_MAX 32	      /* items of eventTypes */
#define ENDPOINT_TYPE_MAX 64	      /* characters of one item */
#define ENDPOINT_HEADERS_MAX 10	      /* static headers */
#define ENDPOINT_HEADER_NAME_MAX 64   /* characters of a header's name */
#define ENDPOINT_HEADER_VALUE_MAX 512 /* characters of a header's value */
#define ENDPOINT_GRACE_DEFAULT 86400  /* seconds both secrets sign after a rotation */
#define ENDPOINT_GRACE_MAX 604800
/* The prefix of the operational event types, which an endpoint gets only
 * when it names them (eventTypes). */
#define ENDPOINT_OPERATIONAL "EVENT:OPERATIONAL_"

/* The fields a body gave (struct endpoint_spec's given). */
enum endpoint_field {
	ENDPOINT_URL = 1,
	ENDPOINT_DESCRIPTION = 2,
	ENDPOINT_TYPES = 4,
	ENDPOINT_ENABLED = 8,
	ENDPOINT_HEADERS = 16
};

/* An endpoint as a body gives it; only the fields in `given` are set.
 * Owned strings (endpoint_spec_free). */
struct endpoint_spec {
	unsigned given;
	char *url;	   /* an absolute http or https URL */
	char *description; /* "" when none */
	char *types;	   /* the filter: items separated by spaces, "" = every type but the
			      operational ones */
	int enabled;
	char *headers; /* "Name: value\n" lines, "" = none */
};

/* Read a create (`create` nonzero: url required, the others defaulted:
 * description "", every type, enabled, no header) or an update (any of the
 * fields, at least one) body: {url, description, eventTypes, enabled,
 * headers}. `body` is an object parsed by json_parse_object (borrowed).
 * Returns 0 with *out filled, or -1 with e.g. "url: must be an absolute
 * http or https URL", "eventTypes[1]: EVENT:CHARGE_PAYED is not an event
 * type", "headers.Host: is pixrelay's to send" (*out untouched). */
int endpoint_parse(yajl_val body, int create, struct endpoint_spec *out, char *err, size_t errlen);

/* Free what a spec holds (s itself is the caller's). */
void endpoint_spec_free(struct endpoint_spec *s);

/* A production endpoint whose URL names an IP address that is not public
 * (and not in `allow`, destination-allow) is refused at once, as its
 * postbacks would be at each attempt: 0, or -1 with "url: 10.0.0.5 is not a
 * public address; production endpoints may only reach public addresses (see
 * destination-allow)". A host name is checked when it is resolved, at each
 * attempt (relay/delivery.c). */
int endpoint_check_destination(const char *url, enum env env, const struct netaddr_list *allow,
			       char *err, size_t errlen);

/* POST .../rotate-secret {graceSeconds?}: `body` may be NULL. Writes the
 * seconds the previous secret keeps signing (ENDPOINT_GRACE_DEFAULT when
 * not given, 0 .. ENDPOINT_GRACE_MAX). 0, or -1 with the message. */
int endpoint_parse_rotate(yajl_val body, long *grace_s, char *err, size_t errlen);

/* True when an event of `type` goes to an endpoint whose filter is
 * `types` (as stored: items separated by spaces, "" = every type but the
 * operational ones): an exact item, or an item ending in '*' that `type`
 * starts with; an operational type only when the item names operational
 * types (it starts with ENDPOINT_OPERATIONAL). The same rule as
 * src/store/lua/lib/endpoint.lua's. */
bool endpoint_types_match(const char *types, const char *type);

/* True when `id` is an endpoint id ("wep_" + a ULID). */
bool endpoint_valid_id(const char *id);

#endif
