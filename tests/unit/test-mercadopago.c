/* Unit tests of mercadopago: Mercado Pago's payments, search pages,
 * notifications and answers read into bank Pix, a notice, a created
 * payment and a refund; the bodies pixrelay sends; and hostile variants:
 * decimals, 1e2, strings for numbers, missing fields, unknown statuses,
 * 10,000 results.
 *
 * The examples are written here, each field as the vendored SDK types
 * declare it (tests/vendor/mercadopago, MIT, sdk-nodejs @ 4339894:
 * src/clients/payment/commonTypes.ts PaymentResponse and TransactionData,
 * search/types.ts PaymentSearch, paymentRefund/commonTypes.ts
 * RefundResponse) with the values Mercado Pago's pages show (MP-ST: the
 * statuses and status_details; MP-EX: the notification's body; MP-PIX:
 * payment_method_id "pix" and point_of_interaction.transaction_data). */
#include "check.h"

#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/mercadopago.h"

#include <stdlib.h>
#include <string.h>

static char err[256];

/* A Pix payment approved (PaymentResponse; MP-ST approved/accredited;
 * transaction_amount a number of reais, times with milliseconds and an
 * offset as Mercado Pago writes them). %s: the middle of it. */
#define PAYMENT_HEAD                                                                               \
	"{\"id\":1325482561,\"date_created\":\"2026-12-02T09:58:01.000-04:00\","                   \
	"\"date_last_updated\":\"2026-12-02T10:00:01.000-04:00\","                                 \
	"\"date_of_expiration\":\"2026-12-03T09:58:01.000-04:00\","                                \
	"\"operation_type\":\"regular_payment\",\"payment_method_id\":\"pix\","                    \
	"\"payment_type_id\":\"bank_transfer\",\"payment_method\":{\"id\":\"pix\","                \
	"\"type\":\"bank_transfer\",\"issuer_id\":\"12501\"},\"currency_id\":\"BRL\","             \
	"\"description\":\"Pedido 42\",\"live_mode\":false,\"collector_id\":1234567890,"           \
	"\"payer\":{\"type\":\"guest\",\"email\":\"payer@example.com\"},\"metadata\":{},"          \
	"\"external_reference\":\"01KAR5Z3W6D2PJ8V2Q1M7XTB0F\",\"installments\":1,"                \
	"\"captured\":true,\"binary_mode\":false,"                                                 \
	"\"point_of_interaction\":{\"type\":\"OPENPLATFORM\",\"transaction_data\":"                \
	"{\"qr_code\":\"00020126580014br.gov.bcb.pix\",\"ticket_url\":"                            \
	"\"https://www.mercadopago.com.br/payments/1325482561/ticket\"}},"
#define APPROVED                                                                                   \
	PAYMENT_HEAD "\"status\":\"approved\",\"status_detail\":\"accredited\","                   \
		     "\"transaction_amount\":100.5,\"transaction_amount_refunded\":0,"             \
		     "\"date_approved\":\"2026-12-02T10:00:00.000-04:00\",\"refunds\":[]}"

static int pix_of(const char *body, struct bankpix *p)
{
	yajl_val root = NULL;
	int rc;

	if (json_parse_object(body, strlen(body), &root, err, sizeof(err)) < 0) {
		fprintf(stderr, "bad test JSON: %s\n", err);
		exit(2);
	}
	memset(p, 0x5a, sizeof(*p));
	err[0] = '\0';
	rc = mp_payment_pix(root, "", p, err, sizeof(err));
	yajl_tree_free(root);
	return rc;
}

static void pix_free(struct bankpix *p)
{
	for (size_t j = 0; j < p->nrefunds; j++)
		free(p->refunds[j].json);
	free(p->refunds);
	free(p->json);
}

static void test_payment(void)
{
	struct bankpix p;

	CHECK_INT(pix_of(APPROVED, &p), 0);
	CHECK_STR(p.id, "mp:1325482561");
	CHECK_STR(p.e2e, ""); /* the SDK's types carry no endToEndId */
	CHECK_STR(p.txid, "01KAR5Z3W6D2PJ8V2Q1M7XTB0F");
	CHECK(p.chave == NULL);
	CHECK_INT(p.cents, 10050);
	CHECK_INT(p.horario_ms, 1796220000000LL);
	CHECK_INT(p.nrefunds, 0);
	CHECK_STR(p.json, "{\"txid\":\"01KAR5Z3W6D2PJ8V2Q1M7XTB0F\",\"valor\":\"100.50\","
			  "\"horario\":\"2026-12-02T14:00:00.000Z\",\"devolucoes\":[],"
			  "\"provider\":{\"name\":\"mercadopago\",\"paymentId\":\"1325482561\","
			  "\"externalReference\":\"01KAR5Z3W6D2PJ8V2Q1M7XTB0F\",\"status\":"
			  "\"approved\",\"statusDetail\":\"accredited\"}}");
	pix_free(&p);

	/* partially refunded (MP-ST approved/partially_refunded): the
	 * refunds as RefundResponse, ids numbers, amounts in reais */
	CHECK_INT(pix_of(PAYMENT_HEAD
			 "\"status\":\"approved\",\"status_detail\":\"partially_refunded\","
			 "\"transaction_amount\":100.5,\"transaction_amount_refunded\":20.25,"
			 "\"date_approved\":\"2026-12-02T10:00:00.000-04:00\",\"refunds\":["
			 "{\"id\":1700000001,\"payment_id\":1325482561,\"amount\":20,"
			 "\"metadata\":{},\"source\":{\"id\":\"1234567890\",\"name\":\"Owner\","
			 "\"type\":\"collector\"},\"date_created\":"
			 "\"2026-12-02T11:30:15.250-03:00\",\"refund_mode\":\"standard\","
			 "\"adjustment_amount\":0,\"status\":\"approved\","
			 "\"reason\":\"troca\",\"amount_refunded_to_payer\":20},"
			 "{\"id\":1700000002,\"amount\":0.25,\"status\":\"in_process\","
			 "\"date_created\":\"2026-12-02T11:31:00-0300\"}]}",
			 &p),
		  0);
	CHECK_INT(p.cents, 10050);
	CHECK_INT(p.nrefunds, 2);
	CHECK_STR(p.refunds[0].id, "1700000001");
	CHECK_STR(p.refunds[0].rtr_id, "");
	CHECK_INT(p.refunds[0].cents, 2000);
	CHECK_INT(p.refunds[0].status, BANKPIX_DEVOLVIDO);
	CHECK_STR(p.refunds[0].json,
		  "{\"id\":\"1700000001\",\"valor\":\"20.00\",\"horario\":{\"solicitacao\":"
		  "\"2026-12-02T14:30:15.250Z\"},\"motivo\":\"troca\",\"status\":\"DEVOLVIDO\"}");
	CHECK_INT(p.refunds[1].cents, 25);
	CHECK_INT(p.refunds[1].status, BANKPIX_EM_PROCESSAMENTO);
	CHECK(strstr(p.json, "\"devolucoes\":[{\"id\":\"1700000001\"") != NULL);
	CHECK(strstr(p.json, "\"statusDetail\":\"partially_refunded\"") != NULL);
	pix_free(&p);

	/* a refund pending, rejected, cancelled */
	CHECK_INT(pix_of(PAYMENT_HEAD "\"status\":\"refunded\",\"status_detail\":\"refunded\","
				      "\"transaction_amount\":1,\"date_approved\":"
				      "\"2026-12-02T10:00:00-04:00\",\"refunds\":["
				      "{\"id\":\"9\",\"amount\":1,\"status\":\"pending\","
				      "\"date_created\":\"2026-12-02T10:00:00Z\"},"
				      "{\"id\":10,\"amount\":1,\"status\":\"rejected\","
				      "\"date_created\":\"2026-12-02T10:00:00Z\"},"
				      "{\"id\":11,\"amount\":1,\"status\":\"cancelled\","
				      "\"date_created\":\"2026-12-02T10:00:00Z\"}]}",
			 &p),
		  0);
	CHECK_INT(p.refunds[0].status, BANKPIX_EM_PROCESSAMENTO);
	CHECK_STR(p.refunds[0].id, "9");
	CHECK_INT(p.refunds[1].status, BANKPIX_NAO_REALIZADO);
	CHECK_INT(p.refunds[2].status, BANKPIX_NAO_REALIZADO);
	pix_free(&p);

	/* an external_reference that is no txid: shown, not matched; no
	 * status_detail: null */
	CHECK_INT(pix_of("{\"id\":1,\"payment_method_id\":\"pix\",\"status\":\"approved\","
			 "\"transaction_amount\":5,\"external_reference\":\"pedido-42\","
			 "\"date_approved\":\"2026-12-02T10:00:00.000-04:00\"}",
			 &p),
		  0);
	CHECK_STR(p.txid, "");
	CHECK_STR(p.json, "{\"valor\":\"5.00\",\"horario\":\"2026-12-02T14:00:00.000Z\","
			  "\"devolucoes\":[],\"provider\":{\"name\":\"mercadopago\",\"paymentId\":"
			  "\"1\",\"externalReference\":\"pedido-42\",\"status\":\"approved\","
			  "\"statusDetail\":null}}");
	pix_free(&p);
}

/* A payment with `status` (and the rest of APPROVED). */
static int with_status(const char *status, struct bankpix *p)
{
	char body[2048];

	snprintf(body, sizeof(body),
		 PAYMENT_HEAD "\"status\":\"%s\",\"transaction_amount\":100.5,"
			      "\"date_approved\":\"2026-12-02T10:00:00.000-04:00\"}",
		 status);
	return pix_of(body, p);
}

static void test_statuses(void)
{
	static const char *const items[] = {"approved", "refunded", "charged_back", "in_mediation"};
	static const char *const none[] = {"pending", "in_process", "authorized", "cancelled",
					   "rejected"};
	struct bankpix p, untouched;

	memset(&untouched, 0x5a, sizeof(untouched));
	for (size_t i = 0; i < sizeof(items) / sizeof(*items); i++) {
		CHECK_INT(with_status(items[i], &p), 0);
		pix_free(&p);
	}
	for (size_t i = 0; i < sizeof(none) / sizeof(*none); i++) {
		CHECK_INT(with_status(none[i], &p), MP_NOT_RECEIVED);
		CHECK(memcmp(&p, &untouched, sizeof(p)) == 0);
	}
	/* a chargeback or a mediation is the Pix's dispute: a MED refund of
	 * the whole, in process, given back when settled */
	CHECK_INT(with_status("in_mediation", &p), 0);
	CHECK_INT(p.nrefunds, 1);
	CHECK(p.refunds[0].med && p.refunds[0].status == BANKPIX_EM_PROCESSAMENTO);
	CHECK_STR(p.refunds[0].natureza, "MED_CONTESTACAO");
	CHECK(strstr(p.refunds[0].json, "\"natureza\":\"MED_CONTESTACAO\"") != NULL);
	pix_free(&p);
	CHECK_INT(with_status("charged_back", &p), 0);
	CHECK_INT(p.nrefunds, 1);
	CHECK(p.refunds[0].status == BANKPIX_DEVOLVIDO && p.refunds[0].cents == p.cents);
	pix_free(&p);
	CHECK_INT(with_status("approved", &p), 0);
	CHECK_INT(p.nrefunds, 0);
	pix_free(&p);
	CHECK_INT(with_status("paid", &p), -1);
	CHECK_STR(err, "status: is not one of Mercado Pago's payment statuses");
	CHECK_INT(with_status("APPROVED", &p), -1);
	CHECK_STR(err, "status: must be 1 to 31 of a-z, 0-9 and _");

	/* a card payment is no Pix, whatever its status */
	CHECK_INT(pix_of("{\"id\":1,\"payment_method_id\":\"visa\",\"status\":\"approved\"}", &p),
		  MP_NOT_RECEIVED);
	CHECK_INT(pix_of("{\"id\":1,\"status\":\"approved\"}", &p), -1);
	CHECK_STR(err, "payment_method_id: is required");
}

/* The reason APPROVED with `from` replaced by `to` is refused. */
static const char *refused_by(const char *from, const char *to)
{
	char body[4096];
	const char *at = strstr(APPROVED, from);
	struct bankpix p;

	if (!at) {
		fprintf(stderr, "no %s in the example\n", from);
		exit(2);
	}
	snprintf(body, sizeof(body), "%.*s%s%s", (int)(at - APPROVED), APPROVED, to,
		 at + strlen(from));
	if (pix_of(body, &p) != -1) {
		if (p.json)
			pix_free(&p);
		return "(taken)";
	}
	return err;
}

#define AMOUNT_RULE                                                                                \
	"transaction_amount: must be a number of reais from 0.01 to 9999999999.99 with at most 2 " \
	"decimal places, like 10.5"

static void test_hostile(void)
{
	/* the amount: a number's own text, never a double */
	CHECK_STR(refused_by("100.5,", "\"100.50\","), AMOUNT_RULE);
	CHECK_STR(refused_by("100.5,", "1e2,"), AMOUNT_RULE);
	CHECK_STR(refused_by("100.5,", "1E2,"), AMOUNT_RULE);
	CHECK_STR(refused_by("100.5,", "100.505,"), AMOUNT_RULE);
	CHECK_STR(refused_by("100.5,", "0.001,"), AMOUNT_RULE);
	CHECK_STR(refused_by("100.5,", "-1,"), AMOUNT_RULE);
	CHECK_STR(refused_by("100.5,", "0,"), AMOUNT_RULE);
	CHECK_STR(refused_by("100.5,", "10000000000,"), AMOUNT_RULE);
	CHECK_STR(refused_by("100.5,", "true,"), AMOUNT_RULE);
	CHECK_STR(refused_by("\"transaction_amount\":100.5,", ""),
		  "transaction_amount: is required");
	CHECK_STR(refused_by("100.5,", "null,"), "transaction_amount: is required");
	CHECK_STR(refused_by("100.5,", "100.500,"), "(taken)"); /* zeros only */

	/* the id: a whole number's digits */
	CHECK_STR(refused_by("{\"id\":1325482561,", "{\"id\":1.5,"),
		  "id: must be a whole number of 1 to 20 digits");
	CHECK_STR(refused_by("{\"id\":1325482561,", "{\"id\":-1,"),
		  "id: must be a whole number of 1 to 20 digits");
	CHECK_STR(refused_by("{\"id\":1325482561,", "{\"id\":1e9,"),
		  "id: must be a whole number of 1 to 20 digits");
	CHECK_STR(refused_by("{\"id\":1325482561,", "{\"id\":\"pay_1\","),
		  "id: must be a whole number of 1 to 20 digits");
	CHECK_STR(refused_by("{\"id\":1325482561,", "{\"id\":123456789012345678901,"),
		  "id: must be a whole number of 1 to 20 digits");
	CHECK_STR(refused_by("{\"id\":1325482561,", "{\"id\":12345678901234567890,"), "(taken)");
	CHECK_STR(refused_by("{\"id\":1325482561,", "{\"id\":\"1325482561\","), "(taken)");
	CHECK_STR(refused_by("{\"id\":1325482561,", "{"), "id: is required");

	/* the time */
	CHECK_STR(refused_by("\"date_approved\":\"2026-12-02T10:00:00.000-04:00\"",
			     "\"date_approved\":\"2026-12-02T10:00:00.000\""),
		  "date_approved: must be an ISO 8601 date-time with an offset, like "
		  "\"2026-12-02T10:00:00.000-04:00\"");
	CHECK_STR(refused_by("\"date_approved\":\"2026-12-02T10:00:00.000-04:00\"",
			     "\"date_approved\":1796220000000"),
		  "date_approved: must be a string");
	CHECK_STR(refused_by("\"date_approved\":\"2026-12-02T10:00:00.000-04:00\"",
			     "\"date_approved\":null"),
		  "date_approved: is required");
	CHECK_STR(refused_by("\"date_approved\":\"2026-12-02T10:00:00.000-04:00\"",
			     "\"date_approved\":\"2026-12-02T10:00:00.000-0400\""),
		  "(taken)");
	CHECK_STR(refused_by("\"date_approved\":\"2026-12-02T10:00:00.000-04:00\"",
			     "\"date_approved\":\"2026-02-30T10:00:00.000-04:00\""),
		  "date_approved: must be an ISO 8601 date-time with an offset, like "
		  "\"2026-12-02T10:00:00.000-04:00\"");

	/* types */
	CHECK_STR(refused_by("\"payment_method_id\":\"pix\"", "\"payment_method_id\":7"),
		  "payment_method_id: must be a string");
	CHECK_STR(refused_by("\"status_detail\":\"accredited\"", "\"status_detail\":[]"),
		  "status_detail: must be 1 to 31 of a-z, 0-9 and _");
	CHECK_STR(refused_by("\"refunds\":[]", "\"refunds\":{}"), "refunds: must be an array");
	CHECK_STR(refused_by("\"refunds\":[]", "\"refunds\":[7]"), "refunds[0]: must be an object");
	CHECK_STR(refused_by("\"refunds\":[]", "\"refunds\":null"), "(taken)");

	/* refunds */
	CHECK_STR(refused_by("\"refunds\":[]",
			     "\"refunds\":[{\"id\":1,\"amount\":1,\"status\":\"done\","
			     "\"date_created\":\"2026-12-02T10:00:00Z\"}]"),
		  "refunds[0].status: must be approved, in_process, pending, rejected or "
		  "cancelled");
	CHECK_STR(refused_by("\"refunds\":[]", "\"refunds\":[{\"id\":1,\"status\":\"approved\","
					       "\"date_created\":\"2026-12-02T10:00:00Z\"}]"),
		  "refunds[0].amount: is required");
	CHECK_STR(refused_by("\"refunds\":[]",
			     "\"refunds\":[{\"id\":1,\"amount\":0.001,\"status\":\"approved\","
			     "\"date_created\":\"2026-12-02T10:00:00Z\"}]"),
		  "refunds[0].amount: must be a number of reais from 0.01 to 9999999999.99 "
		  "with at most 2 decimal places, like 10.5");
	CHECK_STR(refused_by("\"refunds\":[]", "\"refunds\":[{\"amount\":1,\"status\":\"approved\","
					       "\"date_created\":\"2026-12-02T10:00:00Z\"}]"),
		  "refunds[0].id: is required");
	CHECK_STR(refused_by("\"refunds\":[]", "\"refunds\":[{\"id\":1,\"amount\":1,\"status\":"
					       "\"approved\"}]"),
		  "refunds[0].date_created: is required");
}

static void test_many_refunds(void)
{
	size_t cap = 101 * 120 + 4096, n = 0;
	char *body = mem_alloc(cap);
	struct bankpix p;

	n += (size_t)snprintf(body + n, cap - n,
			      PAYMENT_HEAD
			      "\"status\":\"refunded\",\"transaction_amount\":101,"
			      "\"date_approved\":\"2026-12-02T10:00:00Z\",\"refunds\":[");
	for (int i = 0; i < 101; i++)
		n += (size_t)snprintf(body + n, cap - n,
				      "%s{\"id\":%d,\"amount\":1,\"status\":\"approved\","
				      "\"date_created\":\"2026-12-02T10:00:00Z\"}",
				      i ? "," : "", i + 1);
	snprintf(body + n, cap - n, "]}");
	CHECK_INT(pix_of(body, &p), -1);
	CHECK_STR(err, "refunds: more than 100 refunds of one payment");
	free(body);
}

static int payment(const char *body, struct bankpix_batch *b)
{
	memset(b, 0x5a, sizeof(*b));
	err[0] = '\0';
	return mp_payment_parse(body, strlen(body), b, err, sizeof(err));
}

static void test_payment_parse(void)
{
	struct bankpix_batch b, untouched;

	CHECK_INT(payment(APPROVED, &b), MP_OK);
	CHECK_INT(b.n, 1);
	CHECK_INT(b.nrefused, 0);
	CHECK_STR(b.items[0].id, "mp:1325482561");
	bankpix_batch_deinit(&b);

	/* refused: its id, cents and time where they read */
	CHECK_INT(payment("{\"id\":42,\"payment_method_id\":\"pix\",\"status\":\"approved\","
			  "\"transaction_amount\":12.34,\"date_approved\":\"yesterday\"}",
			  &b),
		  MP_OK);
	CHECK_INT(b.n, 0);
	CHECK_INT(b.nrefused, 1);
	CHECK_STR(b.refused[0].id, "mp:42");
	CHECK_INT(b.refused[0].cents, 1234);
	CHECK_INT(b.refused[0].horario_ms, 0);
	CHECK_STR(b.refused[0].err, "date_approved: must be an ISO 8601 date-time with an offset, "
				    "like \"2026-12-02T10:00:00.000-04:00\"");
	CHECK_STR(b.refused[0].reasons,
		  "[\"date_approved: must be an ISO 8601 date-time with an offset, like "
		  "\\\"2026-12-02T10:00:00.000-04:00\\\"\"]");
	bankpix_batch_deinit(&b);

	/* no id that reads: the SHA-256 of the payment, whatever the order */
	CHECK_INT(
	    payment("{\"id\":\"x\",\"payment_method_id\":\"pix\",\"status\":\"approved\"}", &b),
	    MP_OK);
	CHECK_INT(b.nrefused, 1);
	CHECK_INT(strlen(b.refused[0].id), 64);
	CHECK_INT(b.refused[0].cents, -1);
	{
		struct bankpix_batch c;

		CHECK_INT(payment("{\"status\":\"approved\",\"payment_method_id\":\"pix\","
				  "\"id\":\"x\"}",
				  &c),
			  MP_OK);
		CHECK_STR(c.refused[0].id, b.refused[0].id);
		bankpix_batch_deinit(&c);
	}
	bankpix_batch_deinit(&b);

	/* pending: nothing */
	CHECK_INT(payment("{\"id\":42,\"payment_method_id\":\"pix\",\"status\":\"pending\"}", &b),
		  MP_OK);
	CHECK_INT(b.n + b.nrefused, 0);
	bankpix_batch_deinit(&b);

	memset(&untouched, 0x5a, sizeof(untouched));
	CHECK_INT(payment("[]", &b), MP_MALFORMED);
	CHECK(memcmp(&b, &untouched, sizeof(b)) == 0);
	CHECK(err[0] != '\0');
	CHECK_INT(payment("{\"id\":", &b), MP_MALFORMED);
}

static int search(const char *body, struct bankpix_batch *b, bool *more)
{
	memset(b, 0x5a, sizeof(*b));
	err[0] = '\0';
	return mp_search_parse(body, strlen(body), b, more, err, sizeof(err));
}

static void test_search(void)
{
	struct bankpix_batch b;
	bool more = false;

	/* PaymentSearch: one item, one pending, one card, one refused */
	CHECK_INT(search("{\"paging\":{\"total\":7,\"limit\":4,\"offset\":0},\"results\":[" APPROVED
			 ",{\"id\":2,\"payment_method_id\":\"pix\",\"status\":\"pending\","
			 "\"status_detail\":\"pending_waiting_transfer\"},"
			 "{\"id\":3,\"payment_method_id\":\"master\",\"status\":\"approved\"},"
			 "{\"id\":4,\"payment_method_id\":\"pix\",\"status\":\"approved\","
			 "\"transaction_amount\":\"4.00\"}]}",
			 &b, &more),
		  MP_OK);
	CHECK(more); /* 0 + 4 < 7 */
	CHECK_INT(b.n, 1);
	CHECK_STR(b.items[0].id, "mp:1325482561");
	CHECK_INT(b.nrefused, 1);
	CHECK_INT(b.refused[0].index, 3);
	CHECK_STR(b.refused[0].id, "mp:4");
	CHECK_STR(b.refused[0].err,
		  "results[3].transaction_amount: must be a number of reais from 0.01 to "
		  "9999999999.99 with at most 2 decimal places, like 10.5");
	bankpix_batch_deinit(&b);

	CHECK_INT(search("{\"paging\":{\"total\":5,\"limit\":4,\"offset\":4},\"results\":[" APPROVED
			 "]}",
			 &b, &more),
		  MP_OK);
	CHECK(!more); /* 4 + 1 = 5 */
	bankpix_batch_deinit(&b);

	/* an empty page cannot move on, whatever total says */
	more = true;
	CHECK_INT(search("{\"paging\":{\"total\":50,\"limit\":30,\"offset\":30},\"results\":[]}",
			 &b, &more),
		  MP_OK);
	CHECK(!more);
	CHECK_INT(b.n + b.nrefused, 0);
	bankpix_batch_deinit(&b);

	/* the envelope */
	more = true;
	CHECK_INT(search("{\"results\":[]}", &b, &more), MP_MALFORMED);
	CHECK_STR(err, "paging: is required");
	CHECK(more);
	CHECK_INT(search("{\"paging\":{\"total\":1,\"limit\":30,\"offset\":0}}", &b, &more),
		  MP_MALFORMED);
	CHECK_STR(err, "results: is required");
	CHECK_INT(search("{\"paging\":{\"total\":1,\"limit\":30,\"offset\":0},\"results\":{}}", &b,
			 &more),
		  MP_MALFORMED);
	CHECK_STR(err, "results: must be an array");
	CHECK_INT(search("{\"paging\":{\"total\":\"1\",\"limit\":30,\"offset\":0},\"results\":[]}",
			 &b, &more),
		  MP_MALFORMED);
	CHECK_STR(err, "paging.total: must be a whole number from 0 to 1000000000000000");
	CHECK_INT(search("{\"paging\":{\"total\":1,\"limit\":30,\"offset\":-1},\"results\":[]}", &b,
			 &more),
		  MP_MALFORMED);
	CHECK_STR(err, "paging.offset: must be a whole number from 0 to 1000000000000000");
	CHECK_INT(search("{\"paging\":{\"total\":1,\"limit\":3.5,\"offset\":0},\"results\":[]}", &b,
			 &more),
		  MP_MALFORMED);
	CHECK_STR(err, "paging.limit: must be a whole number from 0 to 1000000000000000");
	CHECK_INT(search("{\"paging\":{\"total\":1e3,\"limit\":30,\"offset\":0},\"results\":[]}",
			 &b, &more),
		  MP_MALFORMED);
	CHECK_STR(err, "paging.total: must be a whole number from 0 to 1000000000000000");
	CHECK_INT(search("{\"paging\":{\"limit\":30,\"offset\":0},\"results\":[]}", &b, &more),
		  MP_MALFORMED);
	CHECK_STR(err, "paging.total: is required");
	CHECK(more);
}

static void test_many(void)
{
	struct bankpix_batch b;
	bool more;
	size_t cap = 10001 * 160 + 100, n = 0;
	char *body = mem_alloc(cap);

	/* 10,000 results: refused whole, before any is read */
	n += (size_t)snprintf(body + n, cap - n,
			      "{\"paging\":{\"total\":20000,\"limit\":10000,\"offset\":0},"
			      "\"results\":[");
	for (int i = 0; i < 10000; i++)
		n += (size_t)snprintf(body + n, cap - n,
				      "%s{\"id\":%d,\"payment_method_id\":\"pix\",\"status\":"
				      "\"approved\",\"transaction_amount\":%d.01,"
				      "\"date_approved\":\"2026-12-02T10:00:00Z\"}",
				      i ? "," : "", i + 1, i);
	snprintf(body + n, cap - n, "]}");
	more = false;
	CHECK_INT(search(body, &b, &more), MP_TOO_MANY);
	CHECK_STR(err, "results: more than 1000 in one page");
	CHECK(!more);

	/* 1,000: every one an item, in order */
	n = 0;
	n += (size_t)snprintf(body + n, cap - n,
			      "{\"paging\":{\"total\":1001,\"limit\":1000,\"offset\":0},"
			      "\"results\":[");
	for (int i = 0; i < 1000; i++)
		n += (size_t)snprintf(body + n, cap - n,
				      "%s{\"id\":%d,\"payment_method_id\":\"pix\",\"status\":"
				      "\"approved\",\"transaction_amount\":%d.01,"
				      "\"date_approved\":\"2026-12-02T10:00:00Z\"}",
				      i ? "," : "", i + 1, i);
	snprintf(body + n, cap - n, "]}");
	CHECK_INT(search(body, &b, &more), MP_OK);
	CHECK(more);
	CHECK_INT(b.n, 1000);
	CHECK_STR(b.items[999].id, "mp:1000");
	CHECK_INT(b.items[999].cents, 99901);
	bankpix_batch_deinit(&b);
	free(body);
}

static int notice(const char *body, const char *query, struct mp_notice *n)
{
	memset(n, 0x5a, sizeof(*n));
	err[0] = '\0';
	return mp_notice_parse(body, strlen(body), query, n, err, sizeof(err));
}

/* MP-EX: a payment notification's body. */
#define NOTICE                                                                                     \
	"{\"id\":12345678901,\"live_mode\":true,\"type\":\"payment\","                             \
	"\"date_created\":\"2026-12-02T10:00:02.000-04:00\",\"user_id\":1234567890,"               \
	"\"api_version\":\"v1\",\"action\":\"payment.updated\","                                   \
	"\"data\":{\"id\":\"1325482561\"}}"

static void test_notices(void)
{
	struct mp_notice n, untouched;

	CHECK_INT(notice(NOTICE, NULL, &n), MP_OK);
	CHECK_INT(n.kind, MP_NOTICE_PAYMENT);
	CHECK(n.live_mode);
	CHECK_STR(n.payment, "1325482561");
	CHECK_STR(n.id, "12345678901");
	CHECK_STR(n.action, "payment.updated");

	/* the query's data.id is what the signature covers: it wins */
	CHECK_INT(notice(NOTICE, "1325482999", &n), MP_OK);
	CHECK_STR(n.payment, "1325482999");
	CHECK_INT(notice(NOTICE, "", &n), MP_OK);
	CHECK_STR(n.payment, "1325482561");
	CHECK_INT(notice(NOTICE, "../1", &n), MP_OK);
	CHECK_STR(n.payment, ""); /* nothing to fetch */

	/* data.id a number; no action; live_mode absent */
	CHECK_INT(notice("{\"type\":\"payment\",\"data\":{\"id\":42}}", NULL, &n), MP_OK);
	CHECK_INT(n.kind, MP_NOTICE_PAYMENT);
	CHECK(!n.live_mode);
	CHECK_STR(n.payment, "42");
	CHECK_STR(n.id, "");
	CHECK_STR(n.action, "");

	/* hostile ids: nothing to fetch, never a refusal */
	CHECK_INT(notice("{\"type\":\"payment\",\"data\":{\"id\":\"1; DROP\"}}", NULL, &n), MP_OK);
	CHECK_STR(n.payment, "");
	CHECK_INT(notice("{\"type\":\"payment\",\"data\":{\"id\":1.5}}", NULL, &n), MP_OK);
	CHECK_STR(n.payment, "");
	CHECK_INT(notice("{\"type\":\"payment\",\"data\":\"1\"}", NULL, &n), MP_OK);
	CHECK_STR(n.payment, "");
	CHECK_INT(
	    notice("{\"type\":\"payment\",\"data\":{\"id\":\"123456789012345678901\"}}", NULL, &n),
	    MP_OK);
	CHECK_STR(n.payment, "");

	/* another type: taken, nothing to do */
	CHECK_INT(
	    notice("{\"type\":\"plan\",\"action\":\"updated\",\"data\":{\"id\":\"7\"}}", NULL, &n),
	    MP_OK);
	CHECK_INT(n.kind, MP_NOTICE_OTHER);
	CHECK_INT(notice("{}", NULL, &n), MP_OK);
	CHECK_INT(n.kind, MP_NOTICE_OTHER);

	/* not an object: the only refusal */
	memset(&untouched, 0x5a, sizeof(untouched));
	CHECK_INT(notice("[]", "1", &n), MP_MALFORMED);
	CHECK(memcmp(&n, &untouched, sizeof(n)) == 0);
	CHECK(err[0] != '\0');
	CHECK_INT(notice("", NULL, &n), MP_MALFORMED);
	CHECK_INT(notice("{\"type\":\"payment\",\"type\":\"x\"}", NULL, &n), MP_MALFORMED);
}

static int created(const char *body, struct mp_created *c)
{
	err[0] = '\0';
	return mp_payment_created(body, strlen(body), c, err, sizeof(err));
}

static void test_answers(void)
{
	struct mp_created c;
	struct mp_refund_created r;
	const char *s;

	/* POST /v1/payments's 201: the payment, pending, with its code */
	s = PAYMENT_HEAD "\"status\":\"pending\",\"status_detail\":\"pending_waiting_transfer\","
			 "\"transaction_amount\":100.5}";
	CHECK_INT(created(s, &c), MP_OK);
	CHECK_STR(c.id, "1325482561");
	CHECK_STR(c.status, "pending");
	CHECK_INT(c.cents, 10050);
	CHECK_STR(c.external_reference, "01KAR5Z3W6D2PJ8V2Q1M7XTB0F");
	CHECK_STR(c.qr_code, "00020126580014br.gov.bcb.pix");
	mp_created_deinit(&c);

	/* rejected: no code is needed */
	s = "{\"id\":5,\"status\":\"rejected\",\"transaction_amount\":1}";
	CHECK_INT(created(s, &c), MP_OK);
	CHECK(c.qr_code == NULL);
	CHECK_STR(c.external_reference, "");
	mp_created_deinit(&c);

	c.cents = 77;
	s = "{\"id\":5,\"status\":\"pending\",\"transaction_amount\":1}";
	CHECK_INT(created(s, &c), MP_MALFORMED);
	CHECK_STR(err, "point_of_interaction.transaction_data.qr_code: is required for a pending "
		       "Pix");
	CHECK_INT(c.cents, 77);
	s = "{\"id\":5,\"status\":\"pending\",\"transaction_amount\":1,\"point_of_interaction\":"
	    "{\"transaction_data\":{\"qr_code\":\"\"}}}";
	CHECK_INT(created(s, &c), MP_MALFORMED);
	CHECK_STR(err, "point_of_interaction.transaction_data.qr_code: must be 1 to 512 "
		       "characters, no control characters");
	s = "{\"id\":5,\"status\":\"pending\",\"transaction_amount\":1,\"point_of_interaction\":"
	    "{\"transaction_data\":{\"qr_code\":\"0002\\n\"}}}";
	CHECK_INT(created(s, &c), MP_MALFORMED);
	s = "{\"id\":5,\"status\":\"pending\",\"transaction_amount\":1.001}";
	CHECK_INT(created(s, &c), MP_MALFORMED);
	CHECK_STR(err, AMOUNT_RULE);
	s = "{\"id\":\"abc\",\"status\":\"pending\",\"transaction_amount\":1}";
	CHECK_INT(created(s, &c), MP_MALFORMED);
	CHECK_STR(err, "id: must be a whole number of 1 to 20 digits");
	s = "{\"id\":5,\"transaction_amount\":1}";
	CHECK_INT(created(s, &c), MP_MALFORMED);
	CHECK_STR(err, "status: is required");
	CHECK_INT(c.cents, 77);

	/* POST /v1/payments/{id}/refunds's 201 (RefundResponse) */
	s = "{\"id\":1700000001,\"payment_id\":1325482561,\"amount\":20.25,\"metadata\":{},"
	    "\"source\":{\"id\":\"1234567890\",\"name\":\"Owner\",\"type\":\"collector\"},"
	    "\"date_created\":\"2026-12-02T11:30:15.250-03:00\",\"refund_mode\":\"standard\","
	    "\"adjustment_amount\":0,\"status\":\"approved\",\"amount_refunded_to_payer\":20.25}";
	CHECK_INT(mp_refund_created(s, strlen(s), &r, err, sizeof(err)), MP_OK);
	CHECK_STR(r.id, "1700000001");
	CHECK_INT(r.status, BANKPIX_DEVOLVIDO);
	CHECK_STR(r.status_name, "approved");
	CHECK_INT(r.cents, 2025);
	s = "{\"id\":1,\"amount\":1,\"status\":\"in_process\"}";
	CHECK_INT(mp_refund_created(s, strlen(s), &r, err, sizeof(err)), MP_OK);
	CHECK_INT(r.status, BANKPIX_EM_PROCESSAMENTO);
	r.cents = 77;
	s = "{\"id\":1,\"amount\":1,\"status\":\"done\"}";
	CHECK_INT(mp_refund_created(s, strlen(s), &r, err, sizeof(err)), MP_MALFORMED);
	CHECK_STR(err, "status: must be approved, in_process, pending, rejected or cancelled");
	s = "{\"id\":1,\"amount\":\"1\",\"status\":\"approved\"}";
	CHECK_INT(mp_refund_created(s, strlen(s), &r, err, sizeof(err)), MP_MALFORMED);
	CHECK_STR(err, "amount: must be a number of reais from 0.01 to 9999999999.99 with at most "
		       "2 decimal places, like 10.5");
	CHECK_INT(r.cents, 77);
}

static void test_bodies(void)
{
	char *s, when[32];

	s = mp_payment_body(10050, "Pedido 42", "payer@example.com", "01KAR5Z3W6D2PJ8V2Q1M7XTB0F",
			    "2026-12-03T10:00:00.000-03:00");
	CHECK_STR(s, "{\"transaction_amount\":100.50,\"description\":\"Pedido 42\","
		     "\"payment_method_id\":\"pix\",\"payer\":{\"email\":\"payer@example.com\"},"
		     "\"external_reference\":\"01KAR5Z3W6D2PJ8V2Q1M7XTB0F\","
		     "\"date_of_expiration\":\"2026-12-03T10:00:00.000-03:00\"}");
	free(s);
	s = mp_payment_body(5, NULL, "a@b.c", "X", NULL);
	CHECK_STR(s, "{\"transaction_amount\":0.05,\"payment_method_id\":\"pix\",\"payer\":"
		     "{\"email\":\"a@b.c\"},\"external_reference\":\"X\"}");
	free(s);
	/* what it sends reads back as the same cents */
	s = mp_refund_body(2025);
	CHECK_STR(s, "{\"amount\":20.25}");
	free(s);
	s = mp_refund_body(0);
	CHECK_STR(s, "{}");
	free(s);
	CHECK_STR(mp_expiration(1796220000000LL, when), "2026-12-02T11:00:00.000-03:00");
	CHECK_STR(mp_expiration(1796221815250LL, when), "2026-12-02T11:30:15.250-03:00");
}

int main(void)
{
	test_payment();
	test_statuses();
	test_hostile();
	test_many_refunds();
	test_payment_parse();
	test_search();
	test_many();
	test_notices();
	test_answers();
	test_bodies();
	return check_finish("mercadopago");
}
