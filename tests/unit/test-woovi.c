/* Unit tests of woovi: Woovi's published examples (tests/vendor/openpix,
 * whose directory meson passes as argv[1]: the webhook examples' JSON
 * blocks extracted from the .mdx pages, the swagger's answers as JSON)
 * read into notices, bank Pix, a charge and a refund; and hostile
 * variants: wrong types, floats, negative and huge values, missing fields,
 * refunds without their payment, 10,000 transactions. */
#include "check.h"

#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/woovi.h"

#include <stdlib.h>
#include <string.h>

static char err[256];
static const char *dir;

static char *slurp(const char *name)
{
	return check_file(dir, name);
}

/* The ```json block of a documentation page. */
static char *example(const char *mdx)
{
	char *page = slurp(mdx), *a = strstr(page, "```json\n"), *b, *out;

	if (!a || !(b = strstr(a + 8, "```"))) {
		fprintf(stderr, "%s: no json block\n", mdx);
		exit(2);
	}
	out = mem_strndup(a + 8, (size_t)(b - a - 8));
	free(page);
	return out;
}

static int notice(const char *body, struct woovi_notice *n)
{
	memset(n, 0x5a, sizeof(*n));
	return woovi_notice_parse(body, strlen(body), n, err, sizeof(err));
}

static void test_notices(void)
{
	struct woovi_notice n;
	char *body;

	body = example("docs/webhook/examples/charge-payload.mdx");
	CHECK_INT(notice(body, &n), WOOVI_OK);
	CHECK_INT(n.kind, WOOVI_CHARGE_COMPLETED);
	CHECK_STR(n.event, "OPENPIX:CHARGE_COMPLETED");
	CHECK_STR(n.charge_correlation, "b05a3247-5d2b-432b-9b29-253db3125634");
	CHECK_STR(n.charge_transaction, "79a955477ca34fffae213363d5c34070");
	CHECK_STR(n.pix_transaction, "79a955477ca34fffae213363d5c34070");
	CHECK_STR(n.pix_e2e, "Eac490bf76a684b21a2e458d56f888091"); /* 33: as sent */
	woovi_notice_deinit(&n);
	free(body);

	/* a refund: pix is the refund, charge the charge refunded */
	body = example("docs/webhook/examples/refund-payload.mdx");
	CHECK_INT(notice(body, &n), WOOVI_OK);
	CHECK_INT(n.kind, WOOVI_REFUND_RECEIVED);
	CHECK_STR(n.charge_correlation, "5e1f0740-4a18-4030-a5a7-686d3d8ec419");
	CHECK_STR(n.charge_transaction, "c37368e176894eea9b35fe0ea8ef2b7d");
	CHECK_STR(n.pix_transaction, "");
	CHECK_STR(n.pix_e2e, "D23114447202209161415HPf0GiKMeR4");
	woovi_notice_deinit(&n);
	free(body);

	body = example("docs/webhook/examples/charge-expired-payload.mdx");
	CHECK_INT(notice(body, &n), WOOVI_OK);
	CHECK_INT(n.kind, WOOVI_CHARGE_EXPIRED);
	CHECK_STR(n.charge_correlation, "0ac9e5a0-04f3-4879-85bf-8be34f16a1fa");
	CHECK_STR(n.pix_transaction, "");
	CHECK_STR(n.pix_e2e, "");
	woovi_notice_deinit(&n);
	free(body);

	body = example("docs/webhook/examples/transaction-received-payload.mdx");
	CHECK_INT(notice(body, &n), WOOVI_OK);
	CHECK_INT(n.kind, WOOVI_TRANSACTION_RECEIVED);
	CHECK_STR(n.pix_e2e, "E0430759820241011183203018680116");
	CHECK_STR(n.pix_transaction, "faff1a2ed1f44195a236402bbf85bce6");
	woovi_notice_deinit(&n);
	free(body);

	/* the charge from pix.charge when the body has none */
	CHECK_INT(notice("{\"event\":\"OPENPIX:TRANSACTION_RECEIVED\",\"pix\":{\"charge\":"
			 "{\"correlationID\":\"01KAR5Z3W6D2PJ8V2Q1M7XTB0F\"}}}",
			 &n),
		  WOOVI_OK);
	CHECK_STR(n.charge_correlation, "01KAR5Z3W6D2PJ8V2Q1M7XTB0F");
	woovi_notice_deinit(&n);
	CHECK_INT(notice("{\"event\":\"OPENPIX:DISPUTE_CREATED\"}", &n), WOOVI_OK);
	CHECK_INT(n.kind, WOOVI_DISPUTE);
	woovi_notice_deinit(&n);
	CHECK_INT(notice("{\"event\":\"OPENPIX:MOVEMENT_CONFIRMED\",\"charge\":5,\"pix\":[]}", &n),
		  WOOVI_OK);
	CHECK_INT(n.kind, WOOVI_OTHER);
	CHECK_STR(n.event, "OPENPIX:MOVEMENT_CONFIRMED");
	CHECK_STR(n.charge_correlation, "");
	woovi_notice_deinit(&n);
	/* ids of the wrong type, too long or with spaces: none */
	CHECK_INT(notice("{\"event\":\"OPENPIX:CHARGE_COMPLETED\",\"charge\":{\"correlationID\":7,"
			 "\"transactionID\":\"a b\"},\"pix\":{\"endToEndId\":\"x\\u0001\","
			 "\"transactionID\":\"0123456789012345678901234567890123456789012345678901"
			 "2345678901234\"}}",
			 &n),
		  WOOVI_OK);
	CHECK_STR(n.charge_correlation, "");
	CHECK_STR(n.charge_transaction, "");
	CHECK_STR(n.pix_e2e, "");
	CHECK_STR(n.pix_transaction, "");
	woovi_notice_deinit(&n);

	/* 400s: not an object with a string event */
	n.kind = (enum woovi_event)77;
	CHECK_INT(woovi_notice_parse("{}", 2, &n, err, sizeof(err)), WOOVI_MALFORMED);
	CHECK_STR(err, "event: is required");
	CHECK_INT(n.kind, 77);
	CHECK_INT(notice("{\"event\":1}", &n), WOOVI_MALFORMED);
	CHECK_STR(err, "event: must be a string");
	CHECK_INT(notice("[{\"event\":\"OPENPIX:CHARGE_COMPLETED\"}]", &n), WOOVI_MALFORMED);
	CHECK_INT(notice("not json", &n), WOOVI_MALFORMED);
	CHECK_INT(notice("", &n), WOOVI_MALFORMED);
}

/* The `pix` of a notification example as a bankpix. */
static int pix_of(const char *body, struct bankpix *p)
{
	yajl_val root = NULL;
	int rc;

	if (json_parse_object(body, strlen(body), &root, err, sizeof(err)) < 0)
		return -9;
	memset(p, 0x5a, sizeof(*p));
	rc = woovi_transaction_pix(json_get(root, "pix"), "pix", p, err, sizeof(err));
	yajl_tree_free(root);
	return rc;
}

static void pix_free(struct bankpix *p)
{
	struct bankpix_batch b = {.items = mem_calloc(1, sizeof(*p)), .n = 1};

	b.items[0] = *p;
	bankpix_batch_deinit(&b);
}

static void test_pix(void)
{
	struct bankpix p;
	char *body = example("docs/webhook/examples/charge-payload.mdx");

	CHECK_INT(pix_of(body, &p), 0);
	CHECK_STR(p.id, "wv:79a955477ca34fffae213363d5c34070");
	CHECK_STR(p.e2e, ""); /* Woovi's sandbox e2e is 33 characters */
	CHECK_STR(p.txid, "");
	CHECK_INT(p.cents, 10000);
	CHECK_INT(p.horario_ms, 1706175974824LL);
	CHECK_STR(p.chave, "5081d2e9-45d0-4075-86b6-64c77bc5b73b"); /* the charge's */
	CHECK_INT(p.nrefunds, 0);
	CHECK_STR(p.json,
		  "{\"valor\":\"100.00\",\"chave\":\"5081d2e9-45d0-4075-86b6-64c77bc5b73b\","
		  "\"horario\":\"2024-01-25T09:46:14.824Z\",\"infoPagador\":\"OpenPix "
		  "testing\",\"devolucoes\":[],\"provider\":{\"name\":\"woovi\","
		  "\"transactionID\":\"79a955477ca34fffae213363d5c34070\","
		  "\"correlationID\":\"b05a3247-5d2b-432b-9b29-253db3125634\","
		  "\"endToEndId\":\"Eac490bf76a684b21a2e458d56f888091\"}}");
	pix_free(&p);
	free(body);

	body = example("docs/webhook/examples/transaction-received-payload.mdx");
	CHECK_INT(pix_of(body, &p), 0);
	CHECK_STR(p.id, "wv:faff1a2ed1f44195a236402bbf85bce6");
	CHECK_STR(p.e2e, "E0430759820241011183203018680116");
	CHECK_INT(p.cents, 1000);
	CHECK_INT(p.horario_ms, 1728671524840LL);
	CHECK_STR(p.json,
		  "{\"endToEndId\":\"E0430759820241011183203018680116\",\"valor\":\"10.00\","
		  "\"chave\":\"63ce15c3-acf2-489c-a89c-a2fef247362a\","
		  "\"horario\":\"2024-10-11T18:32:04.840Z\",\"devolucoes\":[],"
		  "\"provider\":{\"name\":\"woovi\",\"transactionID\":"
		  "\"faff1a2ed1f44195a236402bbf85bce6\",\"correlationID\":"
		  "\"8779c9d4-1ece-4cc1-825c-5d5983382ccb\"}}");
	pix_free(&p);
	free(body);

	/* pixrelay's own charge: its id is the correlationID, the txid */
	CHECK_INT(
	    pix_of("{\"pix\":{\"transactionID\":\"t1\",\"value\":150,\"time\":"
		   "\"2024-01-25T06:46:14-03:00\",\"pixKey\":\"k@example.com\",\"charge\":"
		   "{\"correlationID\":\"01KAR5Z3W6D2PJ8V2Q1M7XTB0F\",\"pixKey\":\"other\"}}}",
		   &p),
	    0);
	CHECK_STR(p.txid, "01KAR5Z3W6D2PJ8V2Q1M7XTB0F");
	CHECK_STR(p.chave, "k@example.com"); /* the transaction's own first */
	CHECK_INT(p.horario_ms, 1706175974000LL);
	CHECK_STR(p.json, "{\"txid\":\"01KAR5Z3W6D2PJ8V2Q1M7XTB0F\",\"valor\":\"1.50\","
			  "\"chave\":\"k@example.com\",\"horario\":\"2024-01-25T06:46:14-03:00\","
			  "\"devolucoes\":[],\"provider\":{\"name\":\"woovi\",\"transactionID\":"
			  "\"t1\",\"correlationID\":\"01KAR5Z3W6D2PJ8V2Q1M7XTB0F\"}}");
	pix_free(&p);

	/* refusals name the field; *out untouched */
	p.cents = 77;
	CHECK_INT(pix_of("{\"pix\":{\"transactionID\":\"t1\",\"value\":100.0,\"time\":"
			 "\"2024-01-25T09:46:14.824Z\"}}",
			 &p),
		  -1);
	CHECK_STR(err, "pix.value: must be a whole number of cents from 1 to 9999999999999");
	CHECK_INT(pix_of("{\"pix\":5}", &p), -1);
	CHECK_STR(err, "pix: must be an object");
}

static int page(const char *body, struct bankpix_batch *b, bool *next)
{
	memset(b, 0x5a, sizeof(*b));
	*next = false;
	return woovi_transactions_parse(body, strlen(body), b, next, err, sizeof(err));
}

static void test_swagger(void)
{
	struct bankpix_batch b;
	char *body = slurp("transaction-get.json");
	bool next;

	CHECK_INT(woovi_transaction_parse(body, strlen(body), &b, err, sizeof(err)), WOOVI_OK);
	CHECK_INT(b.n, 1);
	CHECK_INT(b.nrefused, 0);
	CHECK_STR(b.items[0].id, "wv:transactionID");
	CHECK_STR(b.items[0].e2e, "E18236120202012032010s0133872GZA");
	CHECK_STR(b.items[0].txid, "");
	CHECK_INT(b.items[0].cents, 100);
	CHECK_INT(b.items[0].horario_ms, 1614774780536LL);
	CHECK(b.items[0].chave == NULL);
	CHECK_STR(b.items[0].json,
		  "{\"endToEndId\":\"E18236120202012032010s0133872GZA\",\"valor\":\"1.00\","
		  "\"horario\":\"2021-03-03T12:33:00.536Z\",\"infoPagador\":\"payer info 0\","
		  "\"devolucoes\":[],\"provider\":{\"name\":\"woovi\",\"transactionID\":"
		  "\"transactionID\",\"correlationID\":\"9134e286-6f71-427a-bf00-241681624586\"}}");
	bankpix_batch_deinit(&b);
	free(body);

	/* the list example as published: one object where an array belongs */
	body = slurp("transaction-list.json");
	CHECK_INT(page(body, &b, &next), WOOVI_MALFORMED);
	CHECK_STR(err, "transactions: must be an array");
	free(body);

	CHECK_INT(woovi_transaction_parse("{\"transaction\":[]}", 18, &b, err, sizeof(err)),
		  WOOVI_MALFORMED);
	CHECK_STR(err, "transaction: must be an object");
	/* a transaction of another kind: nothing */
	CHECK_INT(woovi_transaction_parse("{\"transaction\":{\"type\":\"WITHDRAW\"}}", 35, &b, err,
					  sizeof(err)),
		  WOOVI_OK);
	CHECK_INT(b.n + b.nrefused, 0);
	bankpix_batch_deinit(&b);
}

#define TIME "\"2021-03-03T12:33:00.536Z\""
#define PAY(id, value)                                                                             \
	"{\"type\":\"PAYMENT\",\"transactionID\":\"" id "\",\"value\":" value ",\"time\":" TIME "}"
#define CHARGE(id)                                                                                 \
	"{\"transactionID\":\"" id "\",\"value\":500,\"paidAt\":" TIME                             \
	",\"correlationID\":\"01KAR5Z3W6D2PJ8V2Q1M7XTB0F\"}"
#define REFUND(e2e, of, value)                                                                     \
	"{\"type\":\"REFUND\",\"value\":" value ",\"time\":\"2021-03-04T10:00:00Z\","              \
	"\"endToEndId\":\"" e2e "\",\"charge\":" CHARGE(of) "}"
#define PAGE(txs)                                                                                  \
	"{\"pageInfo\":{\"skip\":0,\"limit\":100,\"hasNextPage\":false},\"transactions\":[" txs "]}"

/* One transaction of a page refused: its reason. */
static const char *refused(const char *body)
{
	static char msg[BANKPIX_ERR_MAX];
	struct bankpix_batch b;
	bool next;

	msg[0] = '\0';
	if (page(body, &b, &next) != WOOVI_OK)
		return "(page refused)";
	if (b.nrefused == 1 && b.n == 0)
		snprintf(msg, sizeof(msg), "%s", b.refused[0].err);
	else
		snprintf(msg, sizeof(msg), "(%zu items, %zu refused)", b.n, b.nrefused);
	bankpix_batch_deinit(&b);
	return msg;
}

static void test_hostile(void)
{
	const char *cents_rule = "transactions[0].value: must be a whole number of cents from 1 to "
				 "9999999999999";

	CHECK_STR(refused(PAGE(PAY("a", "100.0"))), cents_rule);
	CHECK_STR(refused(PAGE(PAY("a", "1e2"))), cents_rule);
	CHECK_STR(refused(PAGE(PAY("a", "-100"))), cents_rule);
	CHECK_STR(refused(PAGE(PAY("a", "0"))), cents_rule);
	CHECK_STR(refused(PAGE(PAY("a", "10000000000000"))), cents_rule);
	CHECK_STR(refused(PAGE(PAY("a", "99999999999999999999999"))), cents_rule);
	CHECK_STR(refused(PAGE(PAY("a", "\"100\""))), cents_rule);
	CHECK_STR(refused(PAGE(PAY("a", "9999999999999"))), "(1 items, 0 refused)");
	CHECK_STR(refused(PAGE("{\"type\":\"PAYMENT\",\"value\":1,\"time\":" TIME "}")),
		  "transactions[0].transactionID: is required");
	CHECK_STR(refused(PAGE(PAY("0123456789012345678901234567890123456789012345", "1"))),
		  "transactions[0].transactionID: must be 1 to 45 letters, digits, '-' or '_'");
	CHECK_STR(refused(PAGE(PAY("a/b", "1"))),
		  "transactions[0].transactionID: must be 1 to 45 letters, digits, '-' or '_'");
	CHECK_STR(refused(PAGE("{\"type\":\"PAYMENT\",\"transactionID\":\"a\",\"value\":1}")),
		  "transactions[0].time: is required");
	CHECK_STR(refused(PAGE("{\"type\":\"PAYMENT\",\"transactionID\":\"a\",\"value\":1,"
			       "\"time\":\"2021-03-03T12:33:00\"}")),
		  "transactions[0].time: must be an ISO 8601 date-time with a time zone, like "
		  "\"2021-03-03T12:33:00.536Z\"");
	CHECK_STR(refused(PAGE("{\"type\":\"PAYMENT\",\"transactionID\":\"a\",\"value\":1,"
			       "\"time\":1614774780536}")),
		  "transactions[0].time: must be a string");
	CHECK_STR(refused(PAGE("{\"type\":\"PAYMENT\",\"transactionID\":\"a\",\"value\":1,"
			       "\"time\":" TIME ",\"charge\":\"x\"}")),
		  "transactions[0].charge: must be an object");
	CHECK_STR(refused(PAGE("{\"type\":\"PAYMENT\",\"transactionID\":\"a\",\"value\":1,"
			       "\"time\":" TIME ",\"pixKey\":[]}")),
		  "transactions[0].pixKey: must be a string");
	CHECK_STR(refused(PAGE("{\"transactionID\":\"a\"}")), "transactions[0].type: is required");
	CHECK_STR(refused(PAGE("{\"type\":3}")), "transactions[0].type: must be a string");
	CHECK_STR(refused(PAGE("5")), "transactions[0]: must be an object");
	CHECK_STR(refused(PAGE(REFUND("D23114447202209161415HPf0GiKMeR4", "a", "1") "")),
		  "(1 items, 0 refused)");
	CHECK_STR(refused(PAGE("{\"type\":\"REFUND\",\"value\":1,\"time\":" TIME "}")),
		  "transactions[0].charge: is required (the charge of the payment refunded)");
	/* its payment is not on the page and its charge says not when */
	CHECK_STR(refused(PAGE("{\"type\":\"REFUND\",\"value\":1,\"time\":" TIME
			       ",\"endToEndId\":\"D1\",\"charge\":{\"transactionID\":\"a\","
			       "\"value\":5}}")),
		  "transactions[0].charge.paidAt: is required");
	CHECK_STR(refused(PAGE("{\"type\":\"REFUND\",\"value\":1,\"time\":" TIME
			       ",\"charge\":" CHARGE("a") "}")),
		  "transactions[0].endToEndId: is required (or a correlationID or transactionID: "
		  "a refund's id)");
	/* other kinds skipped */
	CHECK_STR(refused(PAGE("{\"type\":\"WITHDRAW\",\"value\":-5},{\"type\":\"FEE\"}")),
		  "(0 items, 0 refused)");

	/* the page itself */
	{
		struct bankpix_batch b;
		bool next;

		b.n = 77;
		next = true;
		CHECK_INT(woovi_transactions_parse("{\"transactions\":[]}", 19, &b, &next, err,
						   sizeof(err)),
			  WOOVI_MALFORMED);
		CHECK(next);
		CHECK_STR(err, "pageInfo.hasNextPage: is required");
		CHECK_INT(b.n, 77);
		CHECK_INT(
		    page("{\"transactions\":[],\"pageInfo\":{\"hasNextPage\":\"yes\"}}", &b, &next),
		    WOOVI_MALFORMED);
		CHECK_STR(err, "pageInfo.hasNextPage: must be true or false");
		CHECK_INT(page("{\"pageInfo\":{}}", &b, &next), WOOVI_MALFORMED);
		CHECK_STR(err, "transactions: is required");
		CHECK_INT(page("[]", &b, &next), WOOVI_MALFORMED);
		CHECK_INT(
		    page("{\"transactions\":[],\"pageInfo\":{\"hasNextPage\":true}}", &b, &next),
		    WOOVI_OK);
		CHECK(next);
		CHECK_INT(b.n + b.nrefused, 0);
		bankpix_batch_deinit(&b);
	}
}

/* A bad transaction among good ones: the good ones pass, the refusal keeps
 * what is readable and what makes it once. */
static void test_refusal(void)
{
	struct bankpix_batch b;
	bool next;

	CHECK_INT(
	    page(PAGE(PAY("good1", "100") ",{\"type\":\"PAYMENT\",\"transactionID\":\"bad\","
					  "\"value\":1.5,\"time\":" TIME
					  ",\"endToEndId\":\"E18236120202012032010s0133872GZA\","
					  "\"pixKey\":\"k\"}," PAY(
					      "good2", "200") ","
							      "{\"type\":\"PAYMENT\",\"value\":1}"),
		 &b, &next),
	    WOOVI_OK);
	CHECK_INT(b.n, 2);
	CHECK_STR(b.items[0].id, "wv:good1");
	CHECK_STR(b.items[1].id, "wv:good2");
	CHECK_INT(b.nrefused, 2);
	CHECK_INT(b.refused[0].index, 1);
	CHECK_STR(b.refused[0].id, "wv:bad");
	CHECK_STR(b.refused[0].e2e, "E18236120202012032010s0133872GZA");
	CHECK_STR(b.refused[0].chave, "k");
	CHECK_INT(b.refused[0].cents, -1);
	CHECK_INT(b.refused[0].horario_ms, 1614774780536LL);
	CHECK_STR(b.refused[0].reasons, "[\"transactions[1].value: must be a whole number of cents "
					"from 1 to 9999999999999\"]");
	CHECK_INT(b.refused[1].index, 3);
	CHECK_INT(strlen(b.refused[1].id), 64); /* no transactionID: its SHA-256 */
	CHECK_STR(b.refused[1].item, "{\"type\":\"PAYMENT\",\"value\":1}");
	CHECK_INT(b.refused[1].cents, 1);
	bankpix_batch_deinit(&b);
}

static void test_refunds(void)
{
	struct bankpix_batch b;
	bool next;
	char *body;
	size_t cap = 200000, n = 0;

	/* A with its refund; B refunded but not on the page; C plain */
	CHECK_INT(
	    page(PAGE(PAY("A", "1000") "," REFUND("D23114447202209161415HPf0GiKMeR4", "A",
						  "300") "," REFUND("D2311444720220916141"
								    "5HPf0GiKMeR5",
								    "B", "200") "," PAY("C", "50")),
		 &b, &next),
	    WOOVI_OK);
	CHECK_INT(b.nrefused, 0);
	CHECK_INT(b.n, 3);
	CHECK_STR(b.items[0].id, "wv:A");
	CHECK_INT(b.items[0].nrefunds, 1);
	CHECK_STR(b.items[0].refunds[0].id, "D23114447202209161415HPf0GiKMeR4");
	CHECK_STR(b.items[0].refunds[0].rtr_id, "D23114447202209161415HPf0GiKMeR4");
	CHECK_INT(b.items[0].refunds[0].cents, 300);
	CHECK_INT(b.items[0].refunds[0].status, BANKPIX_DEVOLVIDO);
	CHECK_STR(b.items[0].refunds[0].json,
		  "{\"id\":\"D23114447202209161415HPf0GiKMeR4\",\"rtrId\":"
		  "\"D23114447202209161415HPf0GiKMeR4\",\"valor\":\"3.00\",\"horario\":"
		  "{\"solicitacao\":\"2021-03-04T10:00:00Z\"},\"status\":\"DEVOLVIDO\"}");
	CHECK(strstr(b.items[0].json,
		     "\"devolucoes\":[{\"id\":\"D23114447202209161415HPf0GiKMeR4\"") != NULL);
	CHECK_STR(b.items[1].id, "wv:C");
	CHECK_INT(b.items[1].nrefunds, 0);
	/* B from its charge: value, paidAt, correlationID (the txid) */
	CHECK_STR(b.items[2].id, "wv:B");
	CHECK_INT(b.items[2].cents, 500);
	CHECK_STR(b.items[2].txid, "01KAR5Z3W6D2PJ8V2Q1M7XTB0F");
	CHECK_STR(b.items[2].e2e, "");
	CHECK_INT(b.items[2].horario_ms, 1614774780536LL);
	CHECK_INT(b.items[2].nrefunds, 1);
	CHECK_STR(b.items[2].refunds[0].id, "D23114447202209161415HPf0GiKMeR5");
	bankpix_batch_deinit(&b);

	/* 101 refunds of one payment: the one past 100 refused */
	body = mem_alloc(cap);
	n += (size_t)snprintf(body + n, cap - n,
			      "{\"pageInfo\":{\"hasNextPage\":false},"
			      "\"transactions\":[" PAY("A", "100000"));
	for (int i = 0; i < 101; i++)
		n += (size_t)snprintf(body + n, cap - n,
				      ",{\"type\":\"REFUND\",\"value\":1,\"time\":" TIME
				      ",\"correlationID\":\"r%d\",\"charge\":" CHARGE("A") "}",
				      i);
	snprintf(body + n, cap - n, "]}");
	CHECK_INT(page(body, &b, &next), WOOVI_OK);
	CHECK_INT(b.n, 1);
	CHECK_INT(b.items[0].nrefunds, 100);
	CHECK_STR(b.items[0].refunds[0].id, "r0");
	CHECK_INT(b.nrefused, 1);
	CHECK_STR(b.refused[0].err, "transactions[101]: more than 100 refunds of one payment");
	bankpix_batch_deinit(&b);
	free(body);
}

static void test_many(void)
{
	struct bankpix_batch b;
	bool next;
	size_t cap = 10001 * 120 + 100, n = 0;
	char *body = mem_alloc(cap);

	/* 10,000 transactions: refused whole, before any is read */
	n += (size_t)snprintf(body + n, cap - n,
			      "{\"pageInfo\":{\"hasNextPage\":true},"
			      "\"transactions\":[");
	for (int i = 0; i < 10000; i++)
		n += (size_t)snprintf(
		    body + n, cap - n,
		    "%s{\"type\":\"PAYMENT\",\"transactionID\":\"t%d\",\"value\":%d,"
		    "\"time\":" TIME "}",
		    i ? "," : "", i, i + 1);
	snprintf(body + n, cap - n, "]}");
	CHECK_INT(page(body, &b, &next), WOOVI_TOO_MANY);
	CHECK_STR(err, "transactions: more than 1000 in one page");

	/* 1,000: every one an item, in order */
	n = 0;
	n += (size_t)snprintf(body + n, cap - n,
			      "{\"pageInfo\":{\"hasNextPage\":true},"
			      "\"transactions\":[");
	for (int i = 0; i < 1000; i++)
		n += (size_t)snprintf(
		    body + n, cap - n,
		    "%s{\"type\":\"PAYMENT\",\"transactionID\":\"t%d\",\"value\":%d,"
		    "\"time\":" TIME "}",
		    i ? "," : "", i, i + 1);
	snprintf(body + n, cap - n, "]}");
	CHECK_INT(page(body, &b, &next), WOOVI_OK);
	CHECK(next);
	CHECK_INT(b.n, 1000);
	CHECK_STR(b.items[999].id, "wv:t999");
	CHECK_INT(b.items[999].cents, 1000);
	bankpix_batch_deinit(&b);
	free(body);
}

static void test_answers(void)
{
	struct woovi_created c;
	struct woovi_refund_created r;
	char *body = slurp("charge-post.json"), id[BANKPIX_REFUND_ID_MAX + 1];
	const char *s;

	CHECK_INT(woovi_charge_created(body, strlen(body), &c, err, sizeof(err)), WOOVI_OK);
	CHECK_STR(c.correlation, "9134e286-6f71-427a-bf00-241681624586");
	CHECK_INT(c.cents, 100);
	CHECK_STR(c.status, "ACTIVE");
	CHECK_STR(c.transaction, ""); /* the example gives none */
	CHECK(strncmp(c.br_code, "000201010212261060014br.gov.bcb.pix", 35) == 0);
	CHECK(strstr(c.br_code, "6009Sao Paulo6236") != NULL);
	woovi_created_deinit(&c);
	free(body);

	s = "{\"charge\":{\"correlationID\":\"x\",\"value\":100.5,\"status\":\"ACTIVE\","
	    "\"brCode\":\"000201\"}}";
	c.cents = 77;
	CHECK_INT(woovi_charge_created(s, strlen(s), &c, err, sizeof(err)), WOOVI_MALFORMED);
	CHECK_STR(err, "charge.value: must be a whole number of cents from 1 to 9999999999999");
	CHECK_INT(c.cents, 77);
	s = "{\"charge\":{\"correlationID\":\"x\",\"value\":100,\"status\":\"active\","
	    "\"brCode\":\"000201\"}}";
	CHECK_INT(woovi_charge_created(s, strlen(s), &c, err, sizeof(err)), WOOVI_MALFORMED);
	CHECK_STR(err, "charge.status: must be 1 to 23 of A-Z and _");
	s = "{\"charge\":{\"correlationID\":\"x\",\"value\":100,\"status\":\"ACTIVE\"}}";
	CHECK_INT(woovi_charge_created(s, strlen(s), &c, err, sizeof(err)), WOOVI_MALFORMED);
	CHECK_STR(err, "charge.brCode: is required");
	s = "{\"charge\":{\"value\":100,\"status\":\"ACTIVE\",\"brCode\":\"0002\"}}";
	CHECK_INT(woovi_charge_created(s, strlen(s), &c, err, sizeof(err)), WOOVI_MALFORMED);
	CHECK_STR(err, "charge.correlationID: must be 1 to 64 printable characters without spaces");
	s = "{\"brCode\":7,\"charge\":{\"correlationID\":\"x\",\"value\":100,\"status\":\"ACTIVE\"}"
	    "}";
	CHECK_INT(woovi_charge_created(s, strlen(s), &c, err, sizeof(err)), WOOVI_MALFORMED);
	CHECK_STR(err, "brCode: must be a string");
	CHECK_INT(woovi_charge_created("{}", 2, &c, err, sizeof(err)), WOOVI_MALFORMED);
	CHECK_STR(err, "charge: is required");
	s = "{\"brCode\":\"0002top\",\"correlationID\":\"top\",\"charge\":{\"value\":1,\"status\":"
	    "\"COMPLETED\",\"transactionID\":\"tx1\",\"brCode\":\"0002inner\"}}";
	CHECK_INT(woovi_charge_created(s, strlen(s), &c, err, sizeof(err)), WOOVI_OK);
	CHECK_STR(c.br_code, "0002top");
	CHECK_STR(c.correlation, "top");
	CHECK_STR(c.transaction, "tx1");
	woovi_created_deinit(&c);

	body = slurp("charge-refund-post.json");
	CHECK_INT(woovi_refund_created(body, strlen(body), &r, err, sizeof(err)), WOOVI_OK);
	CHECK_INT(r.status, BANKPIX_EM_PROCESSAMENTO);
	CHECK_INT(r.cents, 100);
	CHECK_STR(r.correlation, "a273e72c-9547-4c75-a213-3b0a2735b8d5");
	CHECK_STR(r.e2e, "E23114447202304181826HJNwY577YDX");
	CHECK_STR(r.id, "E23114447202304181826HJNwY577YDX");
	free(body);
	s = "{\"refund\":{\"status\":\"DONE\",\"value\":1,\"correlationID\":\"r\"}}";
	r.cents = 77;
	CHECK_INT(woovi_refund_created(s, strlen(s), &r, err, sizeof(err)), WOOVI_MALFORMED);
	CHECK_STR(err, "refund.status: must be IN_PROCESSING, CONFIRMED or REJECTED");
	CHECK_INT(r.cents, 77);
	s = "{\"refund\":{\"status\":\"CONFIRMED\",\"value\":\"1\",\"correlationID\":\"r\"}}";
	CHECK_INT(woovi_refund_created(s, strlen(s), &r, err, sizeof(err)), WOOVI_MALFORMED);
	CHECK_STR(err, "refund.value: must be a whole number of cents from 1 to 9999999999999");
	s = "{\"refund\":{\"status\":\"REJECTED\",\"value\":5,\"correlationID\":\"r-1\"}}";
	CHECK_INT(woovi_refund_created(s, strlen(s), &r, err, sizeof(err)), WOOVI_OK);
	CHECK_INT(r.status, BANKPIX_NAO_REALIZADO);
	CHECK_STR(r.e2e, "");
	CHECK_INT(strlen(r.id), 35); /* "r-1" is not letters and digits: its SHA-256 */

	/* a refund's id */
	CHECK_INT(woovi_refund_id(NULL, "a273e72c-9547-4c75-a213-3b0a2735b8d5", NULL, id), 0);
	CHECK_STR(id, "da29f57ba7c8f70c3d685a7ac01b7215184");
	CHECK_INT(woovi_refund_id("", "", "T1", id), 0);
	CHECK_STR(id, "T1");
	strcpy(id, "same");
	CHECK_INT(woovi_refund_id(NULL, "", NULL, id), -1);
	CHECK_STR(id, "same");
}

#define DISPUTE_BODY(s) (s), (sizeof(s) - 1)

/* A dispute notification (docs/webhook/examples/dispute-*.mdx's shape):
 * read, then put on the Pix it disputes as a MED refund. */
static void test_dispute(void)
{
	static const char body[] =
	    "{\"event\":\"OPENPIX:DISPUTE_ACCEPTED\",\"dispute\":{\"status\":\"ACCEPTED\","
	    "\"endToEndId\":\"E3524a995bbd54034b6d07c1c36014557\",\"name\":\"Seu jorge\","
	    "\"value\":1000,\"disputeReason\":\"Golpe\"}}";
	struct woovi_dispute d;
	struct bankpix p;

	CHECK_INT(woovi_dispute_parse(body, strlen(body), &d, err, sizeof(err)), WOOVI_OK);
	CHECK_STR(d.status, "ACCEPTED");
	CHECK_STR(d.e2e, "E3524a995bbd54034b6d07c1c36014557");
	CHECK_INT(d.cents, 1000);
	memset(&p, 0, sizeof(p));
	snprintf(p.id, sizeof(p.id), "wv:tx1");
	woovi_dispute_apply(&p, &d);
	CHECK_INT(p.nrefunds, 1);
	CHECK(p.refunds[0].med && p.refunds[0].status == BANKPIX_DEVOLVIDO &&
	      p.refunds[0].cents == 1000);
	free(p.refunds[0].json);
	free(p.refunds);
	CHECK_INT(woovi_dispute_parse(DISPUTE_BODY("{\"dispute\":{\"status\":\"OPENED\","
						   "\"endToEndId\":\"E1\",\"value\":1.5}}"),
				      &d, err, sizeof(err)),
		  WOOVI_MALFORMED);
	CHECK_STR(err, "dispute.value: must be cents from 1 to 9999999999999");
	CHECK_INT(woovi_dispute_parse(DISPUTE_BODY("{\"event\":\"OPENPIX:DISPUTE_CREATED\"}"), &d,
				      err, sizeof(err)),
		  WOOVI_MALFORMED);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test-woovi VENDOR_OPENPIX_DIR\n");
		test_dispute();
		return 2;
	}
	dir = argv[1];
	test_notices();
	test_pix();
	test_swagger();
	test_hostile();
	test_refusal();
	test_refunds();
	test_many();
	test_answers();
	return check_finish("woovi");
}
