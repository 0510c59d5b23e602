/* reqbody: the API's small bodies and filters as values: a refund's amount
 * and reason, an internal transfer's amount and Pix keys, and the filters
 * of an event listing (from the query) or of a replay (from a body, where
 * since, until and limit may be integers too). Each body is the client's,
 * parsed by json.c; each refusal names its field for a 400. The handlers
 * are in api/ (api_charges.c, api_accounts.c, api_events.c); the charge and
 * account create bodies are charge.c and account.c. No I/O. */
#include "pixrelay/pix/reqbody.h"

#include "pixrelay/pix/charge.h"
#include "pixrelay/pix/endpoint.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/core/validate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The index of `key` in `names` (n of them), or -1. */
static int index_of(const char *key, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(key, names[i]) == 0)
			return i;
	return -1;
}

/* The first key of `body` not in `names`, or NULL. */
static const char *unknown_key(yajl_val body, const char *const *names, int n)
{
	for (size_t i = 0; i < body->u.object.len; i++)
		if (index_of(body->u.object.keys[i], names, n) < 0)
			return body->u.object.keys[i];
	return NULL;
}

int reqbody_refund(yajl_val body, int64_t *amount, char *err, size_t errlen)
{
	static const char *const names[] = {"amount", "reason"};
	char echo[JSON_ECHO_MAX + 1];
	const char *k;
	yajl_val v;
	int64_t n = 0;

	if (!body) {
		*amount = 0;
		return 0;
	}
	if ((k = unknown_key(body, names, 2))) {
		snprintf(err, errlen, "unknown field '%s'; allowed: amount, reason",
			 json_echo(echo, k));
		return -1;
	}
	v = json_get(body, "reason");
	if (v && !YAJL_IS_NULL(v) &&
	    (!YAJL_IS_STRING(v) ||
	     validate_utf8_chars(v->u.string, strlen(v->u.string)) > REQBODY_REASON_MAX)) {
		snprintf(err, errlen, "reason: must be a string of at most %d characters",
			 REQBODY_REASON_MAX);
		return -1;
	}
	v = json_get(body, "amount");
	if (v && !YAJL_IS_NULL(v) && (!json_is_int64(v, &n) || n < 1)) {
		snprintf(err, errlen, "amount: must be a positive integer number of cents");
		return -1;
	}
	*amount = n;
	return 0;
}

/* A Pix key field of a transfer, borrowed from `body`; NULL with the message. */
static const char *pix_key(yajl_val body, const char *name, char *err, size_t errlen)
{
	yajl_val v = json_get(body, name);
	const char *s = YAJL_IS_STRING(v) ? v->u.string : NULL;

	if (!v || YAJL_IS_NULL(v)) {
		snprintf(err, errlen, "%s: is required (a Pix key)", name);
		return NULL;
	}
	if (!s) {
		snprintf(err, errlen, "%s: must be a string (a Pix key)", name);
		return NULL;
	}
	if (!*s || strlen(s) > REQBODY_PIX_KEY_MAX) {
		snprintf(err, errlen, "%s: must be a Pix key of 1 to %d characters", name,
			 REQBODY_PIX_KEY_MAX);
		return NULL;
	}
	if (validate_has_control(s)) {
		snprintf(err, errlen, "%s: must not contain control characters", name);
		return NULL;
	}
	return s;
}

int reqbody_transfer(yajl_val body, struct reqbody_transfer *out, char *err, size_t errlen)
{
	static const char *const names[] = {"amount", "from_key", "to_key"};
	char echo[JSON_ECHO_MAX + 1];
	const char *k, *from, *to;
	int64_t amount = 0;
	yajl_val v;

	if ((k = unknown_key(body, names, 3))) {
		snprintf(err, errlen, "unknown field '%s'; allowed: amount, from_key, to_key",
			 json_echo(echo, k));
		return -1;
	}
	v = json_get(body, "amount");
	if (!v || YAJL_IS_NULL(v)) {
		snprintf(err, errlen, "amount: is required (an integer number of cents)");
		return -1;
	}
	if (!json_is_int64(v, &amount)) {
		snprintf(err, errlen, "amount: must be an integer number of cents");
		return -1;
	}
	if (amount < 1) {
		snprintf(err, errlen, "amount: must be at least 1 (cent)");
		return -1;
	}
	if (amount > CHARGE_MAX_AMOUNT) {
		snprintf(err, errlen, "amount: must be at most %lld (cents)", CHARGE_MAX_AMOUNT);
		return -1;
	}
	if (!(from = pix_key(body, "from_key", err, errlen)) ||
	    !(to = pix_key(body, "to_key", err, errlen)))
		return -1;
	out->amount = amount;
	out->from_key = from;
	out->to_key = to;
	return 0;
}

static const char *const event_states[] = {"pending", "delivering", "delivered", "dead"};

int reqbody_filter_field(const char *name, const char *value, struct event_filter *f, int max_limit,
			 char *err, size_t errlen)
{
	long long ms;
	char *end = NULL;
	int i;

	if (!value)
		return 0;
	if (strcmp(name, "state") == 0) {
		if ((i = index_of(value, event_states, 4)) < 0) {
			snprintf(err, errlen,
				 "state: must be pending, delivering, delivered or dead");
			return -1;
		}
		f->state = event_states[i];
	} else if (strcmp(name, "type") == 0) {
		if (!(f->type = event_type_named(value))) {
			snprintf(err, errlen,
				 "type: must be " EVENT_TYPES_TEXT
				 ", or an operational one: " EVENT_OPERATIONAL_TYPES_TEXT);
			return -1;
		}
	} else if (strcmp(name, "since") == 0 || strcmp(name, "until") == 0) {
		if (timefmt_parse(value, &ms) < 0) {
			snprintf(
			    err, errlen,
			    "%s: must be Unix seconds, 'YYYY-MM-DD HH:MM:SS' (UTC) or RFC 3339",
			    name);
			return -1;
		}
		if (name[0] == 's')
			f->since_ms = ms;
		else
			f->until_ms = ms;
	} else if (strcmp(name, "limit") == 0) {
		long n;

		errno = 0;
		n = strtol(value, &end, 10);
		if (errno || end == value || *end || n < 1 || n > max_limit) {
			snprintf(err, errlen, "limit: must be an integer from 1 to %d", max_limit);
			return -1;
		}
		f->limit = (int)n;
	} else if (strcmp(name, "cursor") == 0) {
		long long cms;
		const char *cid;

		if (event_parse_cursor(value, &cms, &cid) < 0) {
			snprintf(err, errlen, "cursor: not a cursor this endpoint returned");
			return -1;
		}
		f->cursor_ms = cms;
		f->cursor_id = cid;
	}
	return 0;
}

int reqbody_replay(yajl_val body, struct event_filter *f, char *err, size_t errlen)
{
	static const char *const names[] = {"state", "type", "since", "until", "limit"};

	for (size_t i = 0; body && i < body->u.object.len; i++) {
		const char *k = body->u.object.keys[i];
		yajl_val v = body->u.object.values[i];
		int j = index_of(k, names, 5);
		char num[32], echo[JSON_ECHO_MAX + 1];
		const char *value = NULL;

		if (j < 0) {
			snprintf(err, errlen,
				 "unknown field '%s'; allowed: state, type, since, until, limit",
				 json_echo(echo, k));
			return -1;
		}
		if (YAJL_IS_STRING(v)) {
			value = v->u.string;
		} else if (YAJL_IS_INTEGER(v) && j >= 2) {
			/* since, until and limit may be numbers */
			snprintf(num, sizeof(num), "%lld", YAJL_GET_INTEGER(v));
			value = num;
		} else if (!YAJL_IS_NULL(v)) {
			snprintf(err, errlen, "%s: must be a string%s", k,
				 j >= 2 ? " or an integer" : "");
			return -1;
		}
		if (reqbody_filter_field(k, value, f, EVENT_LIST_MAX, err, errlen) < 0)
			return -1;
	}
	return 0;
}

int reqbody_event_replay(yajl_val body, const char **destination, char *err, size_t errlen)
{
	yajl_val v;
	const char *d = NULL;

	for (size_t i = 0; body && i < body->u.object.len; i++)
		if (strcmp(body->u.object.keys[i], "destination") != 0) {
			char echo[JSON_ECHO_MAX + 1];
			snprintf(err, errlen, "unknown field '%s'; allowed: destination",
				 json_echo(echo, body->u.object.keys[i]));
			return -1;
		}
	v = body ? json_get(body, "destination") : NULL;
	if (v && !YAJL_IS_NULL(v)) {
		d = YAJL_IS_STRING(v) ? v->u.string : NULL;
		if (!d || (strcmp(d, "postback") != 0 && !endpoint_valid_id(d))) {
			snprintf(err, errlen,
				 "destination: must be \"postback\" (the charge's or the account's "
				 "postbackUrl) or a webhook endpoint's id (wep_...)");
			return -1;
		}
	}
	*destination = d;
	return 0;
}
