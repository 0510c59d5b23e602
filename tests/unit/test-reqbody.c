/* Unit tests of reqbody: the refund and transfer bodies and the event
 * filters, each refusal with its exact message. */
#include "check.h"

#include "pixrelay/core/json.h"
#include "pixrelay/pix/reqbody.h"

#include <stdlib.h>
#include <string.h>

static char err[1024];

/* Parse `text` (must be a JSON object) or abort the test. */
static yajl_val parse(const char *text)
{
	yajl_val v = NULL;

	if (json_parse_object(text, strlen(text), &v, err, sizeof(err)) < 0) {
		fprintf(stderr, "cannot parse %s: %s\n", text, err);
		abort();
	}
	return v;
}

/* reqbody_refund on `text`: the amount, or -1 with the message in err. */
static long long refund(const char *text)
{
	yajl_val v = text ? parse(text) : NULL;
	int64_t amount = -7;
	int rc = reqbody_refund(v, &amount, err, sizeof(err));

	yajl_tree_free(v);
	return rc < 0 ? -1 : amount;
}

static int transfer(const char *text, struct reqbody_transfer *t, char *from, char *to)
{
	yajl_val v = parse(text);
	int rc = reqbody_transfer(v, t, err, sizeof(err));

	if (rc == 0) {
		snprintf(from, 80, "%s", t->from_key);
		snprintf(to, 80, "%s", t->to_key);
	}
	yajl_tree_free(v);
	return rc;
}

static int replay(const char *text, struct event_filter *f)
{
	yajl_val v = parse(text);
	int rc = reqbody_replay(v, f, err, sizeof(err));

	yajl_tree_free(v);
	return rc;
}

static void test_refund(void)
{
	char reason[1200] = "{\"reason\":\"";

	CHECK_INT(refund(NULL), 0);
	CHECK_INT(refund("{}"), 0);
	CHECK_INT(refund("{\"amount\":1500,\"reason\":\"asked\"}"), 1500);
	CHECK_INT(refund("{\"amount\":null,\"reason\":null}"), 0);
	CHECK_INT(refund("{\"amount\":0}"), -1);
	CHECK_STR(err, "amount: must be a positive integer number of cents");
	CHECK_INT(refund("{\"amount\":1.5}"), -1);
	CHECK_STR(err, "amount: must be a positive integer number of cents");
	CHECK_INT(refund("{\"amount\":\"100\"}"), -1);
	CHECK_STR(err, "amount: must be a positive integer number of cents");
	CHECK_INT(refund("{\"amount\":99999999999999999999}"), -1);
	CHECK_STR(err, "amount: must be a positive integer number of cents");
	CHECK_INT(refund("{\"reason\":5}"), -1);
	CHECK_STR(err, "reason: must be a string of at most 500 characters");
	CHECK_INT(refund("{\"why\":1}"), -1);
	CHECK_STR(err, "unknown field 'why'; allowed: amount, reason");
	/* the unknown field is found before any other check */
	CHECK_INT(refund("{\"amount\":0,\"x\\u0007\":1}"), -1);
	CHECK_STR(err, "unknown field 'x?'; allowed: amount, reason");
	/* 500 characters of 2 bytes each are fine; 501 are not */
	for (int i = 0; i < 500; i++)
		strcat(reason, "\xc3\xa9");
	strcat(reason, "\"}");
	CHECK_INT(refund(reason), 0);
	strcpy(reason + strlen(reason) - 2, "x\"}");
	CHECK_INT(refund(reason), -1);
	CHECK_STR(err, "reason: must be a string of at most 500 characters");
}

static void test_transfer(void)
{
	struct reqbody_transfer t;
	char from[80], to[80], long_key[100];

	CHECK_INT(
	    transfer("{\"amount\":150,\"from_key\":\"a@b.c\",\"to_key\":\"k2\"}", &t, from, to), 0);
	CHECK_INT(t.amount, 150);
	CHECK_STR(from, "a@b.c");
	CHECK_STR(to, "k2");
	CHECK_INT(transfer("{\"amount\":150,\"from_key\":\"a\",\"to_key\":\"b\",\"memo\":1}", &t,
			   from, to),
		  -1);
	CHECK_STR(err, "unknown field 'memo'; allowed: amount, from_key, to_key");
	CHECK_INT(transfer("{\"from_key\":\"a\",\"to_key\":\"b\"}", &t, from, to), -1);
	CHECK_STR(err, "amount: is required (an integer number of cents)");
	CHECK_INT(transfer("{\"amount\":null,\"from_key\":\"a\",\"to_key\":\"b\"}", &t, from, to),
		  -1);
	CHECK_STR(err, "amount: is required (an integer number of cents)");
	CHECK_INT(transfer("{\"amount\":1e2,\"from_key\":\"a\",\"to_key\":\"b\"}", &t, from, to),
		  -1);
	CHECK_STR(err, "amount: must be an integer number of cents");
	CHECK_INT(transfer("{\"amount\":0,\"from_key\":\"a\",\"to_key\":\"b\"}", &t, from, to), -1);
	CHECK_STR(err, "amount: must be at least 1 (cent)");
	CHECK_INT(
	    transfer("{\"amount\":100000000000,\"from_key\":\"a\",\"to_key\":\"b\"}", &t, from, to),
	    -1);
	CHECK_STR(err, "amount: must be at most 99999999999 (cents)");
	CHECK_INT(transfer("{\"amount\":5,\"to_key\":\"b\"}", &t, from, to), -1);
	CHECK_STR(err, "from_key: is required (a Pix key)");
	CHECK_INT(transfer("{\"amount\":5,\"from_key\":\"a\",\"to_key\":7}", &t, from, to), -1);
	CHECK_STR(err, "to_key: must be a string (a Pix key)");
	CHECK_INT(transfer("{\"amount\":5,\"from_key\":\"\",\"to_key\":\"b\"}", &t, from, to), -1);
	CHECK_STR(err, "from_key: must be a Pix key of 1 to 77 characters");
	memset(long_key, 'k', 78);
	long_key[78] = '\0';
	{
		char body[200];
		snprintf(body, sizeof(body), "{\"amount\":5,\"from_key\":\"a\",\"to_key\":\"%s\"}",
			 long_key);
		CHECK_INT(transfer(body, &t, from, to), -1);
		CHECK_STR(err, "to_key: must be a Pix key of 1 to 77 characters");
		long_key[77] = '\0';
		snprintf(body, sizeof(body), "{\"amount\":5,\"from_key\":\"a\",\"to_key\":\"%s\"}",
			 long_key);
		CHECK_INT(transfer(body, &t, from, to), 0);
	}
	CHECK_INT(transfer("{\"amount\":5,\"from_key\":\"a\\tb\",\"to_key\":\"b\"}", &t, from, to),
		  -1);
	CHECK_STR(err, "from_key: must not contain control characters");
}

static void test_filters(void)
{
	struct event_filter f, before;

	memset(&f, 0, sizeof(f));
	CHECK_INT(reqbody_filter_field("state", "dead", &f, 100, err, sizeof(err)), 0);
	CHECK_STR(f.state, "dead");
	CHECK_INT(reqbody_filter_field("type", "EVENT:CHARGE_REFUND", &f, 100, err, sizeof(err)),
		  0);
	CHECK_STR(f.type, "EVENT:CHARGE_REFUND");
	CHECK_INT(reqbody_filter_field("type", "EVENT:PIX_UNMATCHED", &f, 100, err, sizeof(err)),
		  0);
	CHECK_STR(f.type, "EVENT:PIX_UNMATCHED");
	CHECK_INT(reqbody_filter_field("since", "1795307992", &f, 100, err, sizeof(err)), 0);
	CHECK_INT(f.since_ms, 1795307992000LL);
	CHECK_INT(reqbody_filter_field("until", "2026-11-22T00:15:51Z", &f, 100, err, sizeof(err)),
		  0);
	CHECK_INT(f.until_ms, 1795306551000LL);
	CHECK_INT(reqbody_filter_field("limit", "100", &f, 100, err, sizeof(err)), 0);
	CHECK_INT(f.limit, 100);
	CHECK_INT(reqbody_filter_field("other", "x", &f, 100, err, sizeof(err)), 0);
	CHECK_INT(reqbody_filter_field("state", NULL, &f, 100, err, sizeof(err)), 0);
	before = f;
	CHECK_INT(reqbody_filter_field("state", "DEAD", &f, 100, err, sizeof(err)), -1);
	CHECK_STR(err, "state: must be pending, delivering, delivered or dead");
	CHECK_INT(reqbody_filter_field("type", "paid", &f, 100, err, sizeof(err)), -1);
	CHECK_STR(err,
		  "type: must be EVENT:CHARGE_PAID, EVENT:CHARGE_EXPIRED, EVENT:CHARGE_REFUND, "
		  "EVENT:PIX_UNMATCHED, EVENT:PIX_REFUND, EVENT:PIX_MED_REFUND, EVENT:PIX_REFUSED, "
		  "EVENT:TRANSFER_DONE, EVENT:CHARGE_FAILED, EVENT:CHARGE_RETRY_SCHEDULED or "
		  "EVENT:RECURRENCE_ followed by APPROVED, REJECTED, EXPIRED or "
		  "CANCELLED, or an operational one: EVENT:OPERATIONAL_ followed by "
		  "ENDPOINT_DISABLED, ENDPOINT_ENABLED, DELIVERY_DEAD, DELIVERIES_EXPIRED, "
		  "RECONCILIATION_FAILING, RECONCILIATION_LATE, RECONCILIATION_RECOVERED or "
		  "PIX_RECOVERED");
	CHECK_INT(reqbody_filter_field("type", "EVENT:OPERATIONAL_DELIVERY_DEAD", &f, 100, err,
				       sizeof(err)),
		  0);
	CHECK_STR(f.type, "EVENT:OPERATIONAL_DELIVERY_DEAD");
	f = before;
	CHECK_INT(reqbody_filter_field("until", "yesterday", &f, 100, err, sizeof(err)), -1);
	CHECK_STR(err, "until: must be Unix seconds, 'YYYY-MM-DD HH:MM:SS' (UTC) or RFC 3339");
	CHECK_INT(reqbody_filter_field("limit", "101", &f, 100, err, sizeof(err)), -1);
	CHECK_STR(err, "limit: must be an integer from 1 to 100");
	CHECK_INT(reqbody_filter_field("limit", "0", &f, 100, err, sizeof(err)), -1);
	CHECK_INT(reqbody_filter_field("limit", "5x", &f, 100, err, sizeof(err)), -1);
	CHECK_INT(reqbody_filter_field("limit", "99999999999999999999", &f, 100, err, sizeof(err)),
		  -1);
	CHECK_INT(reqbody_filter_field("cursor", "12_nope", &f, 100, err, sizeof(err)), -1);
	CHECK_STR(err, "cursor: not a cursor this endpoint returned");
	CHECK(memcmp(&f, &before, sizeof(f)) == 0);

	memset(&f, 0, sizeof(f));
	f.state = "dead";
	f.limit = 100;
	CHECK_INT(replay("{}", &f), 0);
	CHECK_STR(f.state, "dead");
	CHECK_INT(
	    replay("{\"state\":\"pending\",\"limit\":1000,\"since\":1795307992,\"type\":null}", &f),
	    0);
	CHECK_STR(f.state, "pending");
	CHECK_INT(f.limit, 1000);
	CHECK_INT(f.since_ms, 1795307992000LL);
	CHECK_INT(replay("{\"limit\":1001}", &f), -1);
	CHECK_STR(err, "limit: must be an integer from 1 to 1000");
	CHECK_INT(replay("{\"state\":1}", &f), -1);
	CHECK_STR(err, "state: must be a string");
	CHECK_INT(replay("{\"until\":1.5}", &f), -1);
	CHECK_STR(err, "until: must be a string or an integer");
	CHECK_INT(replay("{\"cursor\":\"1_x\"}", &f), -1);
	CHECK_STR(err, "unknown field 'cursor'; allowed: state, type, since, until, limit");
	CHECK_INT(reqbody_replay(NULL, &f, err, sizeof(err)), 0);
}

/* POST /v1/events/{id}/replay's body: a destination, optional */
static void test_event_replay(void)
{
	yajl_val body = NULL;
	const char *d = "x";
	char e[256];

	CHECK_INT(reqbody_event_replay(NULL, &d, e, sizeof(e)), 0);
	CHECK(d == NULL);
	CHECK_INT(json_parse_object("{\"destination\":\"postback\"}", 26, &body, e, sizeof(e)), 0);
	CHECK_INT(reqbody_event_replay(body, &d, e, sizeof(e)), 0);
	CHECK_STR(d, "postback");
	yajl_tree_free(body);
	CHECK_INT(json_parse_object("{\"destination\":\"wep_01M8TCVNAKX9FC0W107D54H501\"}", 48,
				    &body, e, sizeof(e)),
		  0);
	CHECK_INT(reqbody_event_replay(body, &d, e, sizeof(e)), 0);
	CHECK_STR(d, "wep_01M8TCVNAKX9FC0W107D54H501");
	yajl_tree_free(body);
	CHECK_INT(json_parse_object("{\"destination\":\"evt_x\"}", 23, &body, e, sizeof(e)), 0);
	CHECK_INT(reqbody_event_replay(body, &d, e, sizeof(e)), -1);
	CHECK_STR(e,
		  "destination: must be \"postback\" (the charge's or the account's postbackUrl) "
		  "or a webhook endpoint's id (wep_...)");
	yajl_tree_free(body);
	CHECK_INT(json_parse_object("{\"to\":1}", 8, &body, e, sizeof(e)), 0);
	CHECK_INT(reqbody_event_replay(body, &d, e, sizeof(e)), -1);
	CHECK_STR(e, "unknown field 'to'; allowed: destination");
	yajl_tree_free(body);
}

int main(void)
{
	test_refund();
	test_transfer();
	test_filters();
	test_event_replay();
	return check_finish("reqbody");
}
