/* endpoint: a webhook endpoint's create and update bodies read field by
 * field (unknown fields refused; the URL by validate.c as a postbackUrl is;
 * the event type filter against the types pixrelay makes; static headers by
 * the HTTP rules and never one pixrelay sends itself), the early refusal of
 * a production URL naming a private address, and the filter's matching
 * rule. No I/O. */
#include "pixrelay/pix/endpoint.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/validate.h"
#include "pixrelay/pix/event.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const known_fields[] = {"url", "description", "eventTypes", "enabled",
					   "headers"};
#define NKNOWN (sizeof(known_fields) / sizeof(known_fields[0]))
#define KNOWN_TEXT "url, description, eventTypes, enabled, headers"

/* Headers every delivery carries, pixrelay's own: never a static one. */
static const char *const signing_headers[] = {"webhook-id", "webhook-timestamp",
					      "webhook-signature", "signature", NULL};

void endpoint_spec_free(struct endpoint_spec *s)
{
	if (!s)
		return;
	free(s->url);
	free(s->description);
	free(s->types);
	free(s->headers);
	memset(s, 0, sizeof(*s));
}

bool endpoint_valid_id(const char *id)
{
	return id && strncmp(id, "wep_", 4) == 0 && ids_is_ulid(id + 4);
}

/* Whether `item` (a filter's item, without its '*') is a prefix of `type`. */
static bool starts(const char *type, const char *prefix, size_t n)
{
	return strncmp(type, prefix, n) == 0;
}

/* One item of a filter against a type (n: the item's length). */
static bool item_matches(const char *item, size_t n, const char *type)
{
	bool operational = starts(type, ENDPOINT_OPERATIONAL, strlen(ENDPOINT_OPERATIONAL));

	if (n > 0 && item[n - 1] == '*') {
		size_t pre = n - 1;
		if (operational && pre < strlen(ENDPOINT_OPERATIONAL))
			return false;
		return starts(type, item, pre);
	}
	return strlen(type) == n && starts(type, item, n);
}

bool endpoint_types_match(const char *types, const char *type)
{
	const char *at = types;

	if (!types || !*types)
		return !starts(type, ENDPOINT_OPERATIONAL, strlen(ENDPOINT_OPERATIONAL));
	while (*at) {
		size_t n = strcspn(at, " ");
		if (n && item_matches(at, n, type))
			return true;
		at += n;
		while (*at == ' ')
			at++;
	}
	return false;
}

/* Whether a wildcard's prefix (pre, n bytes) takes any type: a type
 * pixrelay makes starts with it, or, when it names operational types (an
 * operational type is taken only by such a prefix), an operational one
 * does. */
static bool prefix_takes_any(const char *pre, size_t n)
{
	size_t op = strlen(ENDPOINT_OPERATIONAL);

	for (int i = 0; i < EVENT_NTYPES; i++)
		if (starts(event_types[i], pre, n))
			return true;
	for (int i = 0; i < EVENT_NOPERATIONAL && n >= op; i++)
		if (starts(event_operational_types[i], pre, n))
			return true;
	return false;
}

/* eventTypes: null or an array of distinct items, exact types or prefixes
 * ending in '*'. Writes the filter as stored. */
static int types_field(yajl_val v, char **out, char *err, size_t errlen)
{
	char *list;
	size_t at = 0;

	if (!v || YAJL_IS_NULL(v)) {
		*out = mem_strdup("");
		return 0;
	}
	if (!YAJL_IS_ARRAY(v)) {
		snprintf(err, errlen,
			 "eventTypes: must be an array of event types (e.g. "
			 "[\"EVENT:CHARGE_PAID\", \"EVENT:PIX_*\"])");
		return -1;
	}
	if (v->u.array.len > ENDPOINT_TYPES_MAX) {
		snprintf(err, errlen, "eventTypes: at most %d items", ENDPOINT_TYPES_MAX);
		return -1;
	}
	list = mem_alloc(v->u.array.len * (ENDPOINT_TYPE_MAX + 1) + 1);
	list[0] = '\0';
	for (size_t i = 0; i < v->u.array.len; i++) {
		yajl_val it = v->u.array.values[i];
		const char *s = YAJL_IS_STRING(it) ? YAJL_GET_STRING(it) : NULL;
		size_t n = s ? strlen(s) : 0, body;
		int wild;
		char echo[JSON_ECHO_MAX + 1];

		if (!s || n < 7 || n > ENDPOINT_TYPE_MAX || strncmp(s, "EVENT:", 6) != 0) {
			snprintf(err, errlen,
				 "eventTypes[%zu]: must be an event type (EVENT:NAME, at most %d "
				 "characters) or a prefix of some ending in '*' (EVENT:CHARGE_*)",
				 i, ENDPOINT_TYPE_MAX);
			goto fail;
		}
		wild = s[n - 1] == '*';
		body = wild ? n - 1 : n;
		for (size_t k = 6; k < body; k++)
			if (!((s[k] >= 'A' && s[k] <= 'Z') || (s[k] >= '0' && s[k] <= '9') ||
			      s[k] == '_')) {
				snprintf(err, errlen,
					 "eventTypes[%zu]: '%s' holds a character other than A-Z, "
					 "0-9 and _ after EVENT: (and a final '*')",
					 i, json_echo(echo, s));
				goto fail;
			}
		if (wild ? !prefix_takes_any(s, body) : !event_type_named(s)) {
			snprintf(err, errlen,
				 wild
				     ? "eventTypes[%zu]: %s matches no event type"
				     : "eventTypes[%zu]: %s is not an event type (" EVENT_TYPES_TEXT
				       ", or an operational one: " EVENT_OPERATIONAL_TYPES_TEXT ")",
				 i, s);
			goto fail;
		}
		for (size_t j = 0; j < i; j++) {
			const char *prev = YAJL_GET_STRING(v->u.array.values[j]);
			if (prev && strcmp(prev, s) == 0) {
				snprintf(err, errlen, "eventTypes[%zu]: %s is given twice", i, s);
				goto fail;
			}
		}
		if (at)
			list[at++] = ' ';
		memcpy(list + at, s, n);
		at += n;
		list[at] = '\0';
	}
	*out = list;
	return 0;
fail:
	free(list);
	return -1;
}

/* headers: null or an object of at most ENDPOINT_HEADERS_MAX names to
 * values. Writes them as "Name: value\n" lines. */
static int headers_field(yajl_val v, char **out, char *err, size_t errlen)
{
	char *lines = NULL;
	size_t at = 0;
	char echo[JSON_ECHO_MAX + 1];

	if (!v || YAJL_IS_NULL(v)) {
		*out = mem_strdup("");
		return 0;
	}
	if (!YAJL_IS_OBJECT(v)) {
		snprintf(err, errlen,
			 "headers: must be an object of header names to values (e.g. "
			 "{\"X-Team\": \"erp\"})");
		return -1;
	}
	if (v->u.object.len > ENDPOINT_HEADERS_MAX) {
		snprintf(err, errlen, "headers: at most %d", ENDPOINT_HEADERS_MAX);
		return -1;
	}
	lines = mem_alloc(
	    v->u.object.len * (ENDPOINT_HEADER_NAME_MAX + ENDPOINT_HEADER_VALUE_MAX + 3) + 1);
	lines[0] = '\0';
	for (size_t i = 0; i < v->u.object.len; i++) {
		const char *name = v->u.object.keys[i];
		yajl_val val = v->u.object.values[i];
		const char *s = YAJL_IS_STRING(val) ? YAJL_GET_STRING(val) : NULL;
		size_t nn = strlen(name), vn = s ? strlen(s) : 0;
		int own = 0;

		if (nn > ENDPOINT_HEADER_NAME_MAX || !validate_header_name(name, nn)) {
			snprintf(err, errlen,
				 "headers: '%s' is not a header name (1 to %d letters, digits or "
				 "!#$%%&'*+-.^_`|~)",
				 json_echo(echo, name), ENDPOINT_HEADER_NAME_MAX);
			goto fail;
		}
		for (size_t k = 0; signing_headers[k]; k++)
			own |= strcasecmp(name, signing_headers[k]) == 0;
		if (own || validate_header_reserved(name)) {
			snprintf(err, errlen,
				 "headers.%s: is pixrelay's to send (or frames the request), not a "
				 "static header",
				 name);
			goto fail;
		}
		for (size_t j = 0; j < i; j++)
			if (strcasecmp(v->u.object.keys[j], name) == 0) {
				snprintf(err, errlen, "headers.%s: is given twice", name);
				goto fail;
			}
		if (!s || vn == 0 || vn > ENDPOINT_HEADER_VALUE_MAX || !validate_printable(s, vn) ||
		    s[0] == ' ' || s[vn - 1] == ' ') {
			snprintf(
			    err, errlen,
			    "headers.%s: must be a string of 1 to %d printable ASCII characters, "
			    "without spaces around it",
			    name, ENDPOINT_HEADER_VALUE_MAX);
			goto fail;
		}
		at += (size_t)snprintf(lines + at, nn + vn + 4, "%s: %s\n", name, s);
	}
	*out = lines;
	return 0;
fail:
	free(lines);
	return -1;
}

int endpoint_parse(yajl_val body, int create, struct endpoint_spec *out, char *err, size_t errlen)
{
	struct endpoint_spec s;
	yajl_val v;

	memset(&s, 0, sizeof(s));
	for (size_t i = 0; i < body->u.object.len; i++) {
		size_t k;
		for (k = 0; k < NKNOWN; k++)
			if (strcmp(body->u.object.keys[i], known_fields[k]) == 0)
				break;
		if (k == NKNOWN) {
			char echo[JSON_ECHO_MAX + 1];
			snprintf(err, errlen, "unknown field '%s'; allowed: " KNOWN_TEXT,
				 json_echo(echo, body->u.object.keys[i]));
			return -1;
		}
	}
	if (!create && body->u.object.len == 0) {
		snprintf(err, errlen, "nothing to change; give any of " KNOWN_TEXT);
		return -1;
	}
	v = json_get(body, "url");
	if (v) {
		if (YAJL_IS_NULL(v)) {
			snprintf(err, errlen,
				 "url: must be an absolute http or https URL, not null");
			goto fail;
		}
		if (json_opt_text(v, "url", VALIDATE_URL_MAX, &s.url, err, errlen) < 0)
			goto fail;
		if (!validate_is_http_url(s.url)) {
			snprintf(err, errlen,
				 "url: must be an absolute http or https URL (at most %d bytes, no "
				 "user info)",
				 VALIDATE_URL_MAX);
			goto fail;
		}
		s.given |= ENDPOINT_URL;
	} else if (create) {
		snprintf(err, errlen, "url: is required (where the endpoint's events are POSTed)");
		goto fail;
	}
	v = json_get(body, "description");
	if (v || create) {
		if (json_opt_text(v, "description", ENDPOINT_DESCRIPTION_MAX, &s.description, err,
				  errlen) < 0)
			goto fail;
		if (!s.description)
			s.description = mem_strdup("");
		s.given |= ENDPOINT_DESCRIPTION;
	}
	v = json_get(body, "eventTypes");
	if (v || create) {
		if (types_field(v, &s.types, err, errlen) < 0)
			goto fail;
		s.given |= ENDPOINT_TYPES;
	}
	v = json_get(body, "enabled");
	s.enabled = 1;
	if (v) {
		if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v)) {
			snprintf(err, errlen, "enabled: must be true or false");
			goto fail;
		}
		s.enabled = YAJL_IS_TRUE(v);
		s.given |= ENDPOINT_ENABLED;
	} else if (create) {
		s.given |= ENDPOINT_ENABLED;
	}
	v = json_get(body, "headers");
	if (v || create) {
		if (headers_field(v, &s.headers, err, errlen) < 0)
			goto fail;
		s.given |= ENDPOINT_HEADERS;
	}
	*out = s;
	return 0;
fail:
	endpoint_spec_free(&s);
	return -1;
}

int endpoint_check_destination(const char *url, enum env env, const struct netaddr_list *allow,
			       char *err, size_t errlen)
{
	const char *a = strstr(url, "://"), *end, *colon;
	char host[64];
	unsigned char bin[16];
	int port;
	size_t n;

	if (env != ENV_PRODUCTION || !a)
		return 0;
	a += 3;
	end = a + strcspn(a, "/?#");
	if (*a == '[') {
		const char *close = memchr(a, ']', (size_t)(end - a));
		if (!close)
			return 0;
		n = (size_t)(close - a - 1);
		if (n >= sizeof(host))
			return 0;
		memcpy(host, a + 1, n);
		colon = close + 1 < end && close[1] == ':' ? close + 1 : NULL;
	} else {
		colon = memchr(a, ':', (size_t)(end - a));
		n = (size_t)((colon ? colon : end) - a);
		if (n >= sizeof(host))
			return 0;
		memcpy(host, a, n);
	}
	host[n] = '\0';
	if (inet_pton(AF_INET, host, bin) != 1 && inet_pton(AF_INET6, host, bin) != 1)
		return 0; /* a name: checked once resolved, at each attempt */
	port = colon ? atoi(colon + 1) : (strncasecmp(url, "https", 5) == 0 ? 443 : 80);
	if (netaddr_ip_is_public(host) || (allow && netaddr_list_contains_port(allow, host, port)))
		return 0;
	snprintf(err, errlen,
		 "url: %s is not a public address; production endpoints may only reach public "
		 "addresses (see destination-allow)",
		 host);
	return -1;
}

int endpoint_parse_rotate(yajl_val body, long *grace_s, char *err, size_t errlen)
{
	yajl_val v;
	int64_t n = ENDPOINT_GRACE_DEFAULT;

	if (body) {
		for (size_t i = 0; i < body->u.object.len; i++)
			if (strcmp(body->u.object.keys[i], "graceSeconds") != 0) {
				char echo[JSON_ECHO_MAX + 1];
				snprintf(err, errlen, "unknown field '%s'; allowed: graceSeconds",
					 json_echo(echo, body->u.object.keys[i]));
				return -1;
			}
		v = json_get(body, "graceSeconds");
		if (v && !YAJL_IS_NULL(v) &&
		    (!json_is_int64(v, &n) || n < 0 || n > ENDPOINT_GRACE_MAX)) {
			snprintf(err, errlen,
				 "graceSeconds: must be an integer from 0 to %d (seconds the "
				 "previous secret keeps signing)",
				 ENDPOINT_GRACE_MAX);
			return -1;
		}
	}
	*grace_s = (long)n;
	return 0;
}
