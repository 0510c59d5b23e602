/* endpoint: a webhook endpoint's bodies, its filter's rule, the early
 * refusal of a production URL naming a private address, and the grace of
 * a rotation. The filter cases are those of tests/e2e/test_endpoints.py's
 * check of the same rule in src/store/lua/lib/endpoint.lua. */
#include "pixrelay/pix/endpoint.h"
#include "pixrelay/pix/event.h"

#include "pixrelay/core/json.h"

#include "check.h"

#include <stdlib.h>

static char err[1024];

/* endpoint_parse of a JSON text; 0 or -1 (err has the message). */
static int parse(const char *text, int create, struct endpoint_spec *out)
{
	yajl_val body = NULL;
	int rc;

	if (json_parse_object(text, strlen(text), &body, err, sizeof(err)) < 0)
		return -2;
	rc = endpoint_parse(body, create, out, err, sizeof(err));
	yajl_tree_free(body);
	return rc;
}

static void test_create(void)
{
	struct endpoint_spec s;

	CHECK_INT(parse("{\"url\":\"https://erp.example/pix\"}", 1, &s), 0);
	CHECK_INT(s.given, ENDPOINT_URL | ENDPOINT_DESCRIPTION | ENDPOINT_TYPES | ENDPOINT_ENABLED |
			       ENDPOINT_HEADERS);
	CHECK_STR(s.url, "https://erp.example/pix");
	CHECK_STR(s.description, "");
	CHECK_STR(s.types, "");
	CHECK_INT(s.enabled, 1);
	CHECK_STR(s.headers, "");
	endpoint_spec_free(&s);
	CHECK_INT(parse("{\"url\":\"http://h:8080/x\",\"description\":\"ERP\",\"eventTypes\":"
			"[\"EVENT:CHARGE_*\",\"EVENT:PIX_UNMATCHED\",\"EVENT:OPERATIONAL_*\"],"
			"\"enabled\":false,\"headers\":{\"X-Team\":\"erp\",\"X-B\":\"a b\"}}",
			1, &s),
		  0);
	CHECK_STR(s.types, "EVENT:CHARGE_* EVENT:PIX_UNMATCHED EVENT:OPERATIONAL_*");
	CHECK_INT(s.enabled, 0);
	CHECK_STR(s.headers, "X-Team: erp\nX-B: a b\n");
	endpoint_spec_free(&s);
	CHECK_INT(
	    parse("{\"url\":\"https://x.example\",\"eventTypes\":null,\"headers\":null}", 1, &s),
	    0);
	CHECK_STR(s.types, "");
	endpoint_spec_free(&s);

	CHECK_INT(parse("{}", 1, &s), -1);
	CHECK_STR(err, "url: is required (where the endpoint's events are POSTed)");
	CHECK_INT(parse("{\"url\":\"x\"}", 1, &s), -1);
	CHECK_STR(err, "url: must be an absolute http or https URL (at most 2048 bytes, no user "
		       "info)");
	CHECK_INT(
	    parse("{\"url\":\"https://x.example\",\"eventTypes\":[\"EVENT:PIX_*\",1]}", 1, &s), -1);
	CHECK_STR(err, "eventTypes[1]: must be an event type (EVENT:NAME, at most 64 characters) "
		       "or a prefix of some ending in '*' (EVENT:CHARGE_*)");
	CHECK_INT(parse("{\"url\":\"https://x.example\",\"eventTypes\":[\"EVENT:OP*\"]}", 1, &s),
		  -1);
	CHECK_STR(err, "eventTypes[0]: EVENT:OP* matches no event type");
	CHECK_INT(
	    parse("{\"url\":\"https://x.example\",\"eventTypes\":[\"EVENT:OPERATIONAL_\"]}", 1, &s),
	    -1);
	CHECK(strncmp(err, "eventTypes[0]: EVENT:OPERATIONAL_ is not an event type", 53) == 0);
	/* only the operational types pixrelay makes (pix/event.h) */
	CHECK_INT(parse("{\"url\":\"https://x.example\",\"eventTypes\":[\"EVENT:OPERATIONAL_X\"]}",
			1, &s),
		  -1);
	CHECK_STR(err, "eventTypes[0]: EVENT:OPERATIONAL_X is not an event type (" EVENT_TYPES_TEXT
		       ", or an operational one: " EVENT_OPERATIONAL_TYPES_TEXT ")");
	CHECK_INT(parse("{\"url\":\"https://x.example\",\"eventTypes\":[\"EVENT:OPERATIONAL_X*\"]}",
			1, &s),
		  -1);
	CHECK_STR(err, "eventTypes[0]: EVENT:OPERATIONAL_X* matches no event type");
	CHECK_INT(parse("{\"url\":\"https://x.example\",\"eventTypes\":[\"EVENT:OPERATIONAL_"
			"RECONCILIATION_*\",\"EVENT:OPERATIONAL_PIX_RECOVERED\"]}",
			1, &s),
		  0);
	endpoint_spec_free(&s);
	CHECK_INT(
	    parse("{\"url\":\"https://x.example\",\"headers\":{\"content-type\":\"x\"}}", 1, &s),
	    -1);
	CHECK_STR(err, "headers.content-type: is pixrelay's to send (or frames the request), not "
		       "a static header");
	CHECK_INT(parse("{\"url\":\"https://x.example\",\"headers\":{\"X-A\":\" a\"}}", 1, &s), -1);
	CHECK_STR(err, "headers.X-A: must be a string of 1 to 512 printable ASCII characters, "
		       "without spaces around it");
}

static void test_update(void)
{
	struct endpoint_spec s;

	CHECK_INT(parse("{\"enabled\":true}", 0, &s), 0);
	CHECK_INT(s.given, ENDPOINT_ENABLED);
	CHECK_INT(s.enabled, 1);
	endpoint_spec_free(&s);
	CHECK_INT(parse("{\"eventTypes\":[]}", 0, &s), 0);
	CHECK_INT(s.given, ENDPOINT_TYPES);
	CHECK_STR(s.types, "");
	endpoint_spec_free(&s);
	CHECK_INT(parse("{}", 0, &s), -1);
	CHECK_STR(err, "nothing to change; give any of url, description, eventTypes, enabled, "
		       "headers");
	CHECK_INT(parse("{\"url\":null}", 0, &s), -1);
	CHECK_STR(err, "url: must be an absolute http or https URL, not null");
	CHECK_INT(parse("{\"enabled\":1}", 0, &s), -1);
	CHECK_STR(err, "enabled: must be true or false");
}

/* The rule of a filter: the same table as test_endpoints.py's for the Lua. */
static void test_types_match(void)
{
	static const struct {
		const char *types, *type;
		int want;
	} cases[] = {
	    {"", "EVENT:CHARGE_PAID", 1},
	    {"", "EVENT:OPERATIONAL_ENDPOINT_DISABLED", 0},
	    {"EVENT:*", "EVENT:PIX_REFUSED", 1},
	    {"EVENT:*", "EVENT:OPERATIONAL_ENDPOINT_DISABLED", 0},
	    {"EVENT:CHARGE_*", "EVENT:CHARGE_REFUND", 1},
	    {"EVENT:CHARGE_*", "EVENT:PIX_REFUND", 0},
	    {"EVENT:CHARGE_PAID", "EVENT:CHARGE_PAID", 1},
	    {"EVENT:CHARGE_PAID", "EVENT:CHARGE_PAIDX", 0},
	    {"EVENT:CHARGE_PAID EVENT:PIX_*", "EVENT:PIX_MED_REFUND", 1},
	    {"EVENT:OPERATIONAL_*", "EVENT:OPERATIONAL_ENDPOINT_DISABLED", 1},
	    {"EVENT:OPERATIONAL_*", "EVENT:CHARGE_PAID", 0},
	    {"EVENT:OPERATIONAL_ENDPOINT_DISABLED", "EVENT:OPERATIONAL_ENDPOINT_DISABLED", 1},
	    {"EVENT:* EVENT:OPERATIONAL_*", "EVENT:OPERATIONAL_X", 1},
	    {"EVENT:OPER*", "EVENT:OPERATIONAL_X", 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = endpoint_types_match(cases[i].types, cases[i].type);
		if (got != cases[i].want)
			fprintf(stderr, "case %zu: \"%s\" takes %s: %d\n", i, cases[i].types,
				cases[i].type, got);
		CHECK_INT(got, cases[i].want);
	}
}

static void test_destination(void)
{
	struct netaddr_list allow;

	CHECK_INT(netaddr_list_parse(&allow, "10.0.0.0/8:8080", err, sizeof(err)), 0);
	CHECK_INT(
	    endpoint_check_destination("http://10.0.0.5/x", ENV_SANDBOX, &allow, err, sizeof(err)),
	    0);
	CHECK_INT(endpoint_check_destination("https://hooks.example/x", ENV_PRODUCTION, &allow, err,
					     sizeof(err)),
		  0);
	CHECK_INT(endpoint_check_destination("http://10.0.0.5:8080/x", ENV_PRODUCTION, &allow, err,
					     sizeof(err)),
		  0);
	CHECK_INT(endpoint_check_destination("http://10.0.0.5/x", ENV_PRODUCTION, &allow, err,
					     sizeof(err)),
		  -1);
	CHECK_STR(err, "url: 10.0.0.5 is not a public address; production endpoints may only "
		       "reach public addresses (see destination-allow)");
	CHECK_INT(endpoint_check_destination("https://[fd00::1]:443/", ENV_PRODUCTION, &allow, err,
					     sizeof(err)),
		  -1);
	CHECK_INT(endpoint_check_destination("https://8.8.8.8/", ENV_PRODUCTION, &allow, err,
					     sizeof(err)),
		  0);
	netaddr_list_deinit(&allow);
}

static void test_rotate_and_ids(void)
{
	yajl_val body = NULL;
	long grace = -1;

	CHECK_INT(endpoint_parse_rotate(NULL, &grace, err, sizeof(err)), 0);
	CHECK_INT(grace, ENDPOINT_GRACE_DEFAULT);
	CHECK_INT(json_parse_object("{\"graceSeconds\":0}", 18, &body, err, sizeof(err)), 0);
	CHECK_INT(endpoint_parse_rotate(body, &grace, err, sizeof(err)), 0);
	CHECK_INT(grace, 0);
	yajl_tree_free(body);
	CHECK_INT(json_parse_object("{\"graceSeconds\":\"1\"}", 20, &body, err, sizeof(err)), 0);
	CHECK_INT(endpoint_parse_rotate(body, &grace, err, sizeof(err)), -1);
	yajl_tree_free(body);
	CHECK(endpoint_valid_id("wep_01M8TCVNAKX9FC0W107D54H501"));
	CHECK(!endpoint_valid_id("evt_01M8TCVNAKX9FC0W107D54H501"));
	CHECK(!endpoint_valid_id("wep_"));
	CHECK(!endpoint_valid_id(NULL));
}

int main(void)
{
	test_create();
	test_update();
	test_types_match();
	test_destination();
	test_rotate_and_ids();
	return check_finish("endpoint");
}
