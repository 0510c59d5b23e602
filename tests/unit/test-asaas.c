/* Unit tests of asaas: Asaas's published examples (no licensed file of
 * Asaas's to vendor: each example is written here, citing its page) read
 * into notices, bank Pix, answers; the bodies pixrelay sends; and hostile
 * variants: values with too many decimals, floats like 1e2, strings,
 * negative, zero and huge values, wrong types, missing fields, unknown
 * statuses, too many refunds, 10,000 payments. */
#include "check.h"

#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/asaas.h"

#include <stdlib.h>
#include <string.h>

static char err[256];

/* A literal and its length. */
#define S(lit) lit, sizeof(lit) - 1

/* The payment notification of docs.asaas.com/docs/webhook-para-cobrancas
 * and /docs/receba-eventos-do-asaas-no-seu-endpoint-de-webhook (AS-WH), as
 * published up to its creditCard (discount, fine, interest, split and the
 * rest left out here); `billing` is its billingType (CREDIT_CARD in the
 * page), `refunds` its refunds (null there). */
#define WH_EXAMPLE(billing, refunds)                                                               \
	"{\"id\":\"evt_05b708f961d739ea7eba7e4db318f621&368604920\",\"event\":"                    \
	"\"PAYMENT_RECEIVED\",\"dateCreated\":\"2024-06-12 16:45:03\",\"payment\":{\"object\":"    \
	"\"payment\",\"id\":\"pay_080225913252\",\"dateCreated\":\"2021-01-01\",\"customer\":"     \
	"\"cus_G7Dvo4iphUNk\",\"subscription\":\"sub_VXJBYgP2u0eO\",\"installment\":"              \
	"\"2765d086-c7c5-5cca-898a-4262d212587c\",\"paymentLink\":\"123517639363\",\"dueDate\":"   \
	"\"2021-01-01\",\"originalDueDate\":\"2021-01-01\",\"value\":100,\"netValue\":94.51,"      \
	"\"originalValue\":null,\"interestValue\":null,\"nossoNumero\":null,\"description\":"      \
	"\"Pedido 056984\",\"externalReference\":\"056984\",\"billingType\":\"" billing "\","      \
	"\"status\":\"RECEIVED\",\"pixTransaction\":null,\"confirmedDate\":\"2021-01-01\","        \
	"\"paymentDate\":\"2021-01-01\",\"clientPaymentDate\":\"2021-01-01\","                     \
	"\"installmentNumber\":null,\"creditDate\":\"2021-02-01\",\"custody\":null,"               \
	"\"estimatedCreditDate\":\"2021-02-01\",\"invoiceUrl\":"                                   \
	"\"https://www.asaas.com/i/080225913252\",\"bankSlipUrl\":null,"                           \
	"\"transactionReceiptUrl\":\"https://www.asaas.com/comprovantes/4937311816045162\","       \
	"\"invoiceNumber\":\"00005101\",\"deleted\":false,\"anticipated\":false,"                  \
	"\"anticipable\":false,\"lastInvoiceViewedDate\":\"2021-01-01 12:54:56\","                 \
	"\"lastBankSlipViewedDate\":null,\"postalService\":false,\"creditCard\":"                  \
	"{\"creditCardNumber\":\"8829\",\"creditCardBrand\":\"MASTERCARD\",\"creditCardToken\":"   \
	"\"a75a1d98-c52d-4a6b-a413-71e00b193c99\"},\"refunds\":" refunds "}}"

/* The refunds of docs.asaas.com/docs/refunds (AS-REF), as published. */
#define REF_EXAMPLE                                                                                \
	"[{\"dateCreated\":\"2022-02-21 10:28:40\",\"status\":\"DONE\",\"value\":2.00,"            \
	"\"description\":\"Overpayment\",\"transactionReceiptUrl\":"                               \
	"\"https://www.asaas.com/comprovantes/6677732109104548\"}]"

static int notice(const char *body, struct asaas_notice *n)
{
	memset(n, 0x5a, sizeof(*n));
	return asaas_notice_parse(body, strlen(body), n, err, sizeof(err));
}

static void test_notices(void)
{
	struct asaas_notice n;

	CHECK_INT(notice(WH_EXAMPLE("CREDIT_CARD", "null"), &n), ASAAS_OK);
	CHECK_INT(n.kind, ASAAS_PAYMENT_RECEIVED);
	CHECK_STR(n.event, "PAYMENT_RECEIVED");
	CHECK_STR(n.id, "evt_05b708f961d739ea7eba7e4db318f621&368604920");
	CHECK_STR(n.payment, "pay_080225913252");
	asaas_notice_deinit(&n);

	static const struct {
		const char *event;
		enum asaas_event kind;
	} kinds[] = {
	    {"PAYMENT_CONFIRMED", ASAAS_PAYMENT_CONFIRMED},
	    {"PAYMENT_OVERDUE", ASAAS_PAYMENT_OVERDUE},
	    {"PAYMENT_DELETED", ASAAS_PAYMENT_DELETED},
	    {"PAYMENT_REFUNDED", ASAAS_PAYMENT_REFUNDED},
	    {"PAYMENT_PARTIALLY_REFUNDED", ASAAS_PAYMENT_PARTIALLY_REFUNDED},
	    {"PAYMENT_REFUND_IN_PROGRESS", ASAAS_PAYMENT_REFUND_IN_PROGRESS},
	    {"PAYMENT_CHARGEBACK_REQUESTED", ASAAS_PAYMENT_CHARGEBACK},
	    {"PAYMENT_CHARGEBACK_DISPUTE", ASAAS_PAYMENT_CHARGEBACK},
	    {"PAYMENT_AWAITING_CHARGEBACK_REVERSAL", ASAAS_PAYMENT_CHARGEBACK},
	    {"PAYMENT_CREATED", ASAAS_EVENT_OTHER},
	    {"PAYMENT_BANK_SLIP_VIEWED", ASAAS_EVENT_OTHER},
	};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(*kinds); i++) {
		char body[128];

		snprintf(body, sizeof(body), "{\"event\":\"%s\"}", kinds[i].event);
		CHECK_INT(notice(body, &n), ASAAS_OK);
		CHECK_INT(n.kind, kinds[i].kind);
		CHECK_STR(n.event, kinds[i].event);
		CHECK_STR(n.id, "");
		CHECK_STR(n.payment, "");
		asaas_notice_deinit(&n);
	}
	/* ids of the wrong type, with spaces or too long: none */
	CHECK_INT(
	    notice("{\"event\":\"PAYMENT_RECEIVED\",\"id\":7,\"payment\":{\"id\":\"pay 1\"}}", &n),
	    ASAAS_OK);
	CHECK_STR(n.id, "");
	CHECK_STR(n.payment, "");
	asaas_notice_deinit(&n);
	CHECK_INT(
	    notice("{\"event\":\"PAYMENT_RECEIVED\",\"payment\":{\"id\":\"pay_01234567890123456"
		   "789012345678901234567890123456789012345678901234567\"}}",
		   &n),
	    ASAAS_OK);
	CHECK_STR(n.payment, "");
	asaas_notice_deinit(&n);
	CHECK_INT(notice("{\"event\":\"PAYMENT_RECEIVED\",\"payment\":[]}", &n), ASAAS_OK);
	CHECK_STR(n.payment, "");
	asaas_notice_deinit(&n);

	/* 400s: not an object with a string event; *out untouched */
	n.kind = (enum asaas_event)77;
	CHECK_INT(asaas_notice_parse(S("{}"), &n, err, sizeof(err)), ASAAS_MALFORMED);
	CHECK_STR(err, "event: is required");
	CHECK_INT(n.kind, 77);
	CHECK_INT(notice("{\"event\":1}", &n), ASAAS_MALFORMED);
	CHECK_STR(err, "event: must be a string");
	CHECK_INT(notice("[{\"event\":\"PAYMENT_RECEIVED\"}]", &n), ASAAS_MALFORMED);
	CHECK_INT(notice("not json", &n), ASAAS_MALFORMED);
	CHECK_INT(notice("", &n), ASAAS_MALFORMED);
}

static int nbatch(const char *body, struct bankpix_batch *b)
{
	memset(b, 0x5a, sizeof(*b));
	return asaas_notice_batch(body, strlen(body), b, err, sizeof(err));
}

static void test_notice_batch(void)
{
	struct bankpix_batch b;

	/* the page's own example is a card payment: no Pix */
	CHECK_INT(nbatch(WH_EXAMPLE("CREDIT_CARD", "null"), &b), ASAAS_OK);
	CHECK_INT(b.n, 0);
	CHECK_INT(b.nrefused, 0);
	bankpix_batch_deinit(&b);

	/* the same paid by Pix, with the refund of AS-REF */
	CHECK_INT(nbatch(WH_EXAMPLE("PIX", REF_EXAMPLE), &b), ASAAS_OK);
	CHECK_INT(b.n, 1);
	CHECK_INT(b.nrefused, 0);
	CHECK_STR(b.items[0].id, "as:pay_080225913252");
	CHECK_STR(b.items[0].e2e, "");
	CHECK_STR(b.items[0].txid, "056984");
	CHECK_INT(b.items[0].cents, 10000);
	CHECK_INT(b.items[0].horario_ms, 1609513200000LL); /* 2021-01-01 12:00 in Brasilia */
	CHECK(b.items[0].chave == NULL);
	CHECK_INT(b.items[0].nrefunds, 1);
	CHECK_STR(b.items[0].refunds[0].id, "8d136094a593673ea0c1cf715c244e59293");
	CHECK_STR(b.items[0].refunds[0].rtr_id, "");
	CHECK_INT(b.items[0].refunds[0].cents, 200);
	CHECK_INT(b.items[0].refunds[0].status, BANKPIX_DEVOLVIDO);
	CHECK_STR(b.items[0].json,
		  "{\"txid\":\"056984\",\"valor\":\"100.00\",\"horario\":"
		  "\"2021-01-01T15:00:00.000Z\",\"devolucoes\":[{\"id\":"
		  "\"8d136094a593673ea0c1cf715c244e59293\",\"valor\":\"2.00\",\"horario\":"
		  "{\"solicitacao\":\"2022-02-21T13:28:40.000Z\"},\"motivo\":\"Overpayment\","
		  "\"status\":\"DEVOLVIDO\"}],\"provider\":{\"name\":\"asaas\",\"paymentId\":"
		  "\"pay_080225913252\",\"externalReference\":\"056984\",\"status\":"
		  "\"RECEIVED\"}}");
	bankpix_batch_deinit(&b);

	/* a payment that cannot be read: a refusal naming payment.<field> */
	CHECK_INT(nbatch("{\"event\":\"PAYMENT_RECEIVED\",\"payment\":{\"id\":\"pay_1\","
			 "\"status\":\"RECEIVED\",\"billingType\":\"PIX\",\"value\":10.505,"
			 "\"paymentDate\":\"2024-11-06\"}}",
			 &b),
		  ASAAS_OK);
	CHECK_INT(b.n, 0);
	CHECK_INT(b.nrefused, 1);
	CHECK_STR(b.refused[0].err, "payment.value: must be a number of reais from 0.01 to "
				    "9999999999.99 with at most 2 decimal places, like 10.5");
	CHECK_STR(b.refused[0].id, "as:pay_1");
	CHECK_INT(b.refused[0].cents, -1);
	CHECK_INT(b.refused[0].horario_ms, 1730905200000LL);
	bankpix_batch_deinit(&b);

	/* PENDING, OVERDUE (still payable), DELETED: nothing */
	CHECK_INT(nbatch("{\"event\":\"PAYMENT_OVERDUE\",\"payment\":{\"id\":\"pay_1\","
			 "\"status\":\"OVERDUE\",\"billingType\":\"PIX\",\"value\":10}}",
			 &b),
		  ASAAS_OK);
	CHECK_INT(b.n + b.nrefused, 0);
	bankpix_batch_deinit(&b);

	b.n = 77;
	CHECK_INT(asaas_notice_batch(S("{\"event\":\"PAYMENT_RECEIVED\"}"), &b, err, sizeof(err)),
		  ASAAS_MALFORMED);
	CHECK_STR(err, "payment: is required");
	CHECK_INT(b.n, 77);
	CHECK_INT(nbatch("{\"event\":\"PAYMENT_RECEIVED\",\"payment\":\"pay_1\"}", &b),
		  ASAAS_MALFORMED);
	CHECK_STR(err, "payment: must be an object");
	CHECK_INT(nbatch("{\"payment\":{}}", &b), ASAAS_MALFORMED);
	CHECK_STR(err, "event: is required");
}

/* One payment's members after id (a page of one, its first element). */
#define PAY(members) "{\"id\":\"pay_r1\",\"billingType\":\"PIX\"," members "}"
#define PAID(value)                                                                                \
	PAY("\"status\":\"RECEIVED\",\"value\":" value ",\"paymentDate\":\"2024-11-06\"")
#define PAGE(...) "{\"object\":\"list\",\"hasMore\":false,\"data\":[" __VA_ARGS__ "]}"

static int page(const char *body, struct bankpix_batch *b, bool *more)
{
	memset(b, 0x5a, sizeof(*b));
	*more = true;
	return asaas_payments_parse(body, strlen(body), b, more, err, sizeof(err));
}

/* What a page of one payment gives: its cents, its refusal's reason,
 * "(none)" or "(page refused)". */
static const char *one(const char *body)
{
	static char msg[BANKPIX_ERR_MAX];
	struct bankpix_batch b;
	bool more;

	if (page(body, &b, &more) != ASAAS_OK)
		return "(page refused)";
	if (b.n == 1 && b.nrefused == 0)
		snprintf(msg, sizeof(msg), "%lld", (long long)b.items[0].cents);
	else if (b.nrefused == 1 && b.n == 0)
		snprintf(msg, sizeof(msg), "%s", b.refused[0].err);
	else if (b.n == 0 && b.nrefused == 0)
		snprintf(msg, sizeof(msg), "(none)");
	else
		snprintf(msg, sizeof(msg), "(%zu items, %zu refused)", b.n, b.nrefused);
	bankpix_batch_deinit(&b);
	return msg;
}

/* A chargeback is the Pix's dispute: a MED refund of the whole, in
 * process while requested or disputed, not made once its reversal is
 * awaited; one id for all its statuses. */
static void test_chargebacks(void)
{
	static const char *const open[] = {"CHARGEBACK_REQUESTED", "CHARGEBACK_DISPUTE"};
	char body[512], first[BANKPIX_REFUND_ID_MAX + 1] = "";
	struct bankpix_batch b;
	bool more;

	for (size_t i = 0; i < 3; i++) {
		const char *st = i < 2 ? open[i] : "AWAITING_CHARGEBACK_REVERSAL";

		snprintf(
		    body, sizeof(body),
		    PAGE(PAY("\"status\":\"%s\",\"value\":12.5,\"paymentDate\":\"2024-11-06\"")),
		    st);
		CHECK_INT(page(body, &b, &more), ASAAS_OK);
		CHECK_INT(b.n, 1);
		CHECK_INT(b.items[0].nrefunds, 1);
		CHECK(b.items[0].refunds[0].med && b.items[0].refunds[0].cents == 1250);
		CHECK(b.items[0].refunds[0].status ==
		      (i < 2 ? BANKPIX_EM_PROCESSAMENTO : BANKPIX_NAO_REALIZADO));
		CHECK_STR(b.items[0].refunds[0].natureza, "MED_CONTESTACAO");
		if (!first[0])
			snprintf(first, sizeof(first), "%s", b.items[0].refunds[0].id);
		CHECK_STR(b.items[0].refunds[0].id, first);
		bankpix_batch_deinit(&b);
	}
}

static void test_values(void)
{
	static const char *const rule = "data[0].value: must be a number of reais from 0.01 to "
					"9999999999.99 with at most 2 decimal places, like 10.5";
	int64_t c = 77;

	CHECK_STR(one(PAGE(PAID("10.5"))), "1050");
	CHECK_STR(one(PAGE(PAID("10.50"))), "1050");
	CHECK_STR(one(PAGE(PAID("10.500"))), "1050"); /* exact */
	CHECK_STR(one(PAGE(PAID("10"))), "1000");
	CHECK_STR(one(PAGE(PAID("0.01"))), "1");
	CHECK_STR(one(PAGE(PAID("94.51"))), "9451");
	CHECK_STR(one(PAGE(PAID("9999999999.99"))), "999999999999");
	CHECK_STR(one(PAGE(PAID("10.505"))), rule);
	CHECK_STR(one(PAGE(PAID("0.001"))), rule);
	CHECK_STR(one(PAGE(PAID("1e2"))), rule);
	CHECK_STR(one(PAGE(PAID("1E2"))), rule);
	CHECK_STR(one(PAGE(PAID("1.5e1"))), rule);
	CHECK_STR(one(PAGE(PAID("-10"))), rule);
	CHECK_STR(one(PAGE(PAID("-0.5"))), rule);
	CHECK_STR(one(PAGE(PAID("0"))), rule);
	CHECK_STR(one(PAGE(PAID("0.00"))), rule);
	CHECK_STR(one(PAGE(PAID("10000000000"))), rule);
	CHECK_STR(one(PAGE(PAID("99999999999999999999999"))), rule);
	CHECK_STR(one(PAGE(PAID("\"10.50\""))), rule);
	CHECK_STR(one(PAGE(PAID("true"))), rule);
	CHECK_STR(one(PAGE(PAID("null"))), "data[0].value: is required");
	CHECK_STR(one(PAGE(PAY("\"status\":\"RECEIVED\",\"paymentDate\":\"2024-11-06\""))),
		  "data[0].value: is required");
	CHECK_STR(one(PAGE(PAID("10.5 "))), "1050"); /* JSON white space */
	CHECK_STR(one("{\"hasMore\":false,\"data\":[" PAID("10.") "]}"), "(page refused)");

	/* the reader itself, on text yajl would not give */
	CHECK_INT(bankpix_reais_cents("1.", &c), -1);
	CHECK_INT(bankpix_reais_cents(".5", &c), -1);
	CHECK_INT(bankpix_reais_cents("+1", &c), -1);
	CHECK_INT(bankpix_reais_cents("", &c), -1);
	CHECK_INT(bankpix_reais_cents("1.5.0", &c), -1);
	CHECK_INT(bankpix_reais_cents("00000000000000000000000000000000000000001", &c), -1);
	CHECK_INT(c, 77);
	/* a JSON number has no leading zeros */
	CHECK_INT(bankpix_reais_cents("007.1", &c), -1);
	CHECK_INT(c, 77);
}

static void test_payments(void)
{
	struct bankpix_batch b;
	bool more;

	/* statuses: money received or not; billingType PIX only */
	CHECK_STR(one(PAGE(PAY("\"status\":\"PENDING\",\"value\":10"))), "(none)");
	CHECK_STR(one(PAGE(PAY("\"status\":\"OVERDUE\",\"value\":10"))), "(none)");
	CHECK_STR(one(PAGE(PAY("\"status\":\"AWAITING_RISK_ANALYSIS\""))), "(none)");
	CHECK_STR(one(PAGE(PAY("\"status\":\"RECEIVED_IN_CASH\",\"value\":10,"
			       "\"paymentDate\":\"2024-11-06\""))),
		  "(none)");
	CHECK_STR(one(PAGE(PAY("\"status\":\"DUNNING_RECEIVED\""))), "(none)");
	CHECK_STR(one(PAGE(PAY("\"status\":\"CONFIRMED\",\"value\":10,"
			       "\"confirmedDate\":\"2024-11-06\""))),
		  "1000");
	static const char *const later[] = {"REFUND_REQUESTED",	  "REFUND_IN_PROGRESS",
					    "REFUNDED",		  "CHARGEBACK_REQUESTED",
					    "CHARGEBACK_DISPUTE", "AWAITING_CHARGEBACK_REVERSAL"};
	for (size_t i = 0; i < sizeof(later) / sizeof(*later); i++) {
		char body[256];

		snprintf(body, sizeof(body),
			 PAGE("{\"id\":\"pay_r1\",\"billingType\":\"PIX\",\"status\":\"%s\","
			      "\"value\":10,\"paymentDate\":\"2024-11-06\"}"),
			 later[i]);
		CHECK_STR(one(body), "1000");
	}
	CHECK_STR(one(PAGE("{\"id\":\"pay_r1\",\"billingType\":\"BOLETO\",\"status\":\"RECEIVED\","
			   "\"value\":10,\"paymentDate\":\"2024-11-06\"}")),
		  "(none)");
	CHECK_STR(
	    one(PAGE("{\"id\":\"pay_r1\",\"billingType\":\"UNDEFINED\",\"status\":\"RECEIVED\","
		     "\"value\":10,\"paymentDate\":\"2024-11-06\"}")),
	    "(none)");
	CHECK_STR(one(PAGE(PAY("\"status\":\"PAID\",\"value\":10"))),
		  "data[0].status: is not one of Asaas's payment statuses");
	CHECK_STR(one(PAGE(PAY("\"status\":\"received\""))),
		  "data[0].status: must be 1 to 31 of A-Z and _");
	CHECK_STR(one(PAGE(PAY("\"status\":7"))), "data[0].status: must be a string");
	CHECK_STR(one(PAGE(PAY("\"value\":7"))), "data[0].status: is required");
	CHECK_STR(one(PAGE("{\"id\":\"pay_r1\",\"status\":\"RECEIVED\"}")),
		  "data[0].billingType: is required");
	CHECK_STR(one(PAGE("{\"id\":\"pay_r1\",\"billingType\":\"BOLETO\",\"status\":"
			   "\"DUNNING_SOMETHING_NEW\"}")),
		  "(none)");
	CHECK_STR(one(PAGE("{\"id\":\"pay_r1\",\"billingType\":5,\"status\":\"RECEIVED\"}")),
		  "data[0].billingType: must be a string");
	CHECK_STR(one(PAGE("{\"status\":\"RECEIVED\"}")), "data[0].id: is required");
	CHECK_STR(one(PAGE("{\"id\":\"pay r1\",\"status\":\"RECEIVED\"}")),
		  "data[0].id: must be 1 to 45 letters, digits, '-' or '_'");
	CHECK_STR(one(PAGE("{\"id\":\"pay_6egmyz6lpfxazko3-mock\",\"billingType\":\"PIX\","
			   "\"status\":\"RECEIVED\",\"value\":42.23,\"paymentDate\":"
			   "\"2024-11-06\"}")),
		  "4223");
	CHECK_STR(one(PAGE("{\"id\":\"pay_0123456789012345678901234567890123456789012\","
			   "\"billingType\":\"PIX\",\"status\":\"RECEIVED\"}")),
		  "data[0].id: must be 1 to 45 letters, digits, '-' or '_'");
	CHECK_STR(one(PAGE("7")), "data[0]: must be an object");

	/* dates: paymentDate, else clientPaymentDate, else confirmedDate */
	CHECK_STR(one(PAGE(PAY("\"status\":\"RECEIVED\",\"value\":1"))),
		  "data[0].paymentDate: is required (or clientPaymentDate, confirmedDate) for a "
		  "payment received");
	CHECK_STR(one(PAGE(PAY("\"status\":\"RECEIVED\",\"value\":1,\"paymentDate\":null,"
			       "\"clientPaymentDate\":\"2024-11-06\""))),
		  "100");
	CHECK_STR(one(PAGE(PAY("\"status\":\"RECEIVED\",\"value\":1,\"paymentDate\":"
			       "\"06/11/2024\""))),
		  "data[0].paymentDate: must be a date \"2024-06-12\", \"2024-06-12 16:45:03\" or "
		  "an ISO 8601 date-time");
	CHECK_STR(one(PAGE(PAY("\"status\":\"RECEIVED\",\"value\":1,\"paymentDate\":"
			       "\"2024-02-30\""))),
		  "data[0].paymentDate: must be a date \"2024-06-12\", \"2024-06-12 16:45:03\" or "
		  "an ISO 8601 date-time");
	CHECK_STR(one(PAGE(PAY("\"status\":\"RECEIVED\",\"value\":1,\"paymentDate\":5"))),
		  "data[0].paymentDate: must be a string");
	CHECK(page(PAGE(PAY("\"status\":\"RECEIVED\",\"value\":1,\"paymentDate\":"
			    "\"2024-06-12 16:45:03\"")),
		   &b, &more) == ASAAS_OK &&
	      b.n == 1);
	CHECK_INT(b.items[0].horario_ms, 1718221503000LL); /* Brasilia time */
	CHECK_INT(more, 0);
	bankpix_batch_deinit(&b);
	CHECK(page(PAGE(PAY("\"status\":\"RECEIVED\",\"value\":1,\"paymentDate\":"
			    "\"2024-06-12T19:45:03Z\"")),
		   &b, &more) == ASAAS_OK &&
	      b.n == 1);
	CHECK_INT(b.items[0].horario_ms, 1718221503000LL);
	bankpix_batch_deinit(&b);

	/* pixrelay's own charge: the externalReference is the txid; an e2e
	 * when one is given */
	CHECK(page(PAGE("{\"id\":\"pay_9\",\"billingType\":\"PIX\",\"status\":\"RECEIVED\","
			"\"value\":1.5,\"paymentDate\":\"2024-11-06\",\"externalReference\":"
			"\"01KAR5Z3W6D2PJ8V2Q1M7XTB0F\",\"pixTransaction\":"
			"\"0b9c4e2a-6f1d-4c8e-9a37-2d5e8f1a4b6c\",\"endToEndIdentifier\":"
			"\"E0000000020241106150000000000001\"}"),
		   &b, &more) == ASAAS_OK &&
	      b.n == 1);
	CHECK_STR(b.items[0].txid, "01KAR5Z3W6D2PJ8V2Q1M7XTB0F");
	CHECK_STR(b.items[0].e2e, "E0000000020241106150000000000001");
	CHECK_STR(b.items[0].json,
		  "{\"endToEndId\":\"E0000000020241106150000000000001\",\"txid\":"
		  "\"01KAR5Z3W6D2PJ8V2Q1M7XTB0F\",\"valor\":\"1.50\",\"horario\":"
		  "\"2024-11-06T15:00:00.000Z\",\"devolucoes\":[],\"provider\":{\"name\":"
		  "\"asaas\",\"paymentId\":\"pay_9\",\"externalReference\":"
		  "\"01KAR5Z3W6D2PJ8V2Q1M7XTB0F\",\"status\":\"RECEIVED\",\"pixTransaction\":"
		  "\"0b9c4e2a-6f1d-4c8e-9a37-2d5e8f1a4b6c\"}}");
	bankpix_batch_deinit(&b);
	/* a reference that is no txid is shown, not matched; an e2e of the
	 * wrong length is none */
	CHECK(page(PAGE("{\"id\":\"pay_9\",\"billingType\":\"PIX\",\"status\":\"RECEIVED\","
			"\"value\":1,\"paymentDate\":\"2024-11-06\",\"externalReference\":"
			"\"pedido-12\",\"pixTransaction\":{\"endToEndIdentifier\":\"E1\"}}"),
		   &b, &more) == ASAAS_OK &&
	      b.n == 1);
	CHECK_STR(b.items[0].txid, "");
	CHECK_STR(b.items[0].e2e, "");
	CHECK(strstr(b.items[0].json, "\"externalReference\":\"pedido-12\"") != NULL);
	bankpix_batch_deinit(&b);
}

#define REFUND(status, value, date)                                                                \
	"{\"dateCreated\":\"" date "\",\"status\":\"" status "\",\"value\":" value "}"
#define WITH_REFUNDS(list)                                                                         \
	"{\"hasMore\":false,\"data\":[{\"id\":\"pay_r1\",\"billingType\":\"PIX\",\"status\":"      \
	"\"REFUNDED\",\"value\":10,\"paymentDate\":\"2024-11-06\",\"refunds\":[" list "]}]}"

static void test_refunds(void)
{
	struct bankpix_batch b;
	bool more;

	CHECK(page(WITH_REFUNDS(REFUND("DONE", "5", "2024-11-07 10:00:00") "," REFUND(
		       "PENDING", "5", "2024-11-07 10:00:00") "," REFUND("CANCELLED", "1",
									 "2024-11-08")),
		   &b, &more) == ASAAS_OK &&
	      b.n == 1);
	CHECK_INT(b.items[0].nrefunds, 3);
	CHECK_STR(b.items[0].refunds[0].id, "3af3aaff4dda052a4b05638209fdc68ee52");
	CHECK_STR(b.items[0].refunds[1].id,
		  "90d22db7adf027c6b49ce23105bcc7e6e96"); /* the 2nd alike */
	CHECK_INT(b.items[0].refunds[0].status, BANKPIX_DEVOLVIDO);
	CHECK_INT(b.items[0].refunds[1].status, BANKPIX_EM_PROCESSAMENTO);
	CHECK_INT(b.items[0].refunds[2].status, BANKPIX_NAO_REALIZADO);
	CHECK_INT(b.items[0].refunds[2].cents, 100);
	CHECK(strstr(b.items[0].json,
		     "\"valor\":\"1.00\",\"horario\":{\"solicitacao\":"
		     "\"2024-11-08T15:00:00.000Z\"},\"status\":\"NAO_REALIZADO\"}") != NULL);
	bankpix_batch_deinit(&b);

	/* the same refunds in another order keep their ids */
	CHECK(page(WITH_REFUNDS(REFUND("CANCELLED", "1", "2024-11-08") "," REFUND(
		       "DONE", "5", "2024-11-07 10:00:00")),
		   &b, &more) == ASAAS_OK &&
	      b.n == 1);
	CHECK_STR(b.items[0].refunds[1].id, "3af3aaff4dda052a4b05638209fdc68ee52");
	bankpix_batch_deinit(&b);

	/* a refund's own id or endToEndIdentifier when it has one */
	CHECK(
	    page(WITH_REFUNDS("{\"id\":\"ref1\",\"dateCreated\":\"2024-11-07\",\"status\":\"DONE\","
			      "\"value\":1,\"endToEndIdentifier\":"
			      "\"D0000000020241107100000000000001\"}"
			      ",{\"dateCreated\":\"2024-11-07\",\"status\":\"DONE\",\"value\":1,"
			      "\"endToEndIdentifier\":\"D0000000020241107100000000000002\"}"
			      ",{\"id\":\"a-refund-id-with-dashes\",\"dateCreated\":\"2024-11-07\","
			      "\"status\":\"DONE\",\"value\":1}"),
		 &b, &more) == ASAAS_OK &&
	    b.n == 1);
	CHECK_STR(b.items[0].refunds[0].id, "ref1");
	CHECK_STR(b.items[0].refunds[0].rtr_id, "D0000000020241107100000000000001");
	CHECK_STR(b.items[0].refunds[1].id, "D0000000020241107100000000000002");
	CHECK_INT(strlen(b.items[0].refunds[2].id), 35);
	bankpix_batch_deinit(&b);

	/* each fault of a refund refuses its payment, naming it */
	CHECK_STR(one(WITH_REFUNDS(REFUND("DONE", "1.001", "2024-11-07"))),
		  "data[0].refunds[0].value: must be a number of reais from 0.01 to 9999999999.99 "
		  "with at most 2 decimal places, like 10.5");
	CHECK_STR(one(WITH_REFUNDS(
		      REFUND("DONE", "1", "2024-11-07") "," REFUND("REFUSED", "1", "2024-11-07"))),
		  "data[0].refunds[1].status: must be PENDING, DONE or CANCELLED");
	CHECK_STR(one(WITH_REFUNDS(REFUND("DONE", "1", "yesterday"))),
		  "data[0].refunds[0].dateCreated: must be a date \"2024-06-12\", \"2024-06-12 "
		  "16:45:03\" or an ISO 8601 date-time");
	CHECK_STR(one(WITH_REFUNDS("{\"status\":\"DONE\",\"value\":1}")),
		  "data[0].refunds[0].dateCreated: is required");
	CHECK_STR(one(WITH_REFUNDS("5")), "data[0].refunds[0]: must be an object");
	CHECK_STR(one(PAGE(PAY("\"status\":\"REFUNDED\",\"value\":10,\"paymentDate\":"
			       "\"2024-11-06\",\"refunds\":{}"))),
		  "data[0].refunds: must be an array");
	CHECK_STR(one(PAGE(PAY("\"status\":\"REFUNDED\",\"value\":10,\"paymentDate\":"
			       "\"2024-11-06\",\"refunds\":null"))),
		  "1000");

	/* at most 100 refunds of one payment */
	{
		size_t cap = 200 * 80 + 512, n = 0;
		char *body = mem_alloc(cap);

		n += (size_t)snprintf(
		    body + n, cap - n,
		    "{\"hasMore\":false,\"data\":[{\"id\":\"pay_1\",\"billingType\":"
		    "\"PIX\",\"status\":\"REFUNDED\",\"value\":1000,\"paymentDate\":"
		    "\"2024-11-06\",\"refunds\":[");
		for (int i = 0; i < 101; i++)
			n += (size_t)snprintf(
			    body + n, cap - n,
			    "%s{\"dateCreated\":\"2024-11-07\",\"status\":\"DONE\","
			    "\"value\":0.01}",
			    i ? "," : "");
		snprintf(body + n, cap - n, "]}]}");
		CHECK_STR(one(body), "data[0].refunds: more than 100 refunds of one payment");
		free(body);
	}
}

static void test_pages(void)
{
	struct bankpix_batch b;
	bool more;

	/* items, refusals and the skipped, in the page's order */
	CHECK_INT(
	    page("{\"object\":\"list\",\"hasMore\":true,\"totalCount\":4,\"limit\":4,"
		 "\"offset\":0,\"data\":[" PAID("1") ",{\"id\":\"pay_2\",\"billingType\":"
						     "\"PIX\",\"status\":\"PENDING\"},{\"id\":"
						     "\"pay_3\",\"billingType\":\"PIX\","
						     "\"status\":\"RECEIVED\",\"value\":1e1},{"
						     "\"billingType\":\"PIX\",\"status\":"
						     "\"RECEIVED\"}," PAID("2") "]}",
		 &b, &more),
	    ASAAS_OK);
	CHECK_INT(more, 1);
	CHECK_INT(b.n, 2);
	CHECK_INT(b.items[0].cents, 100);
	CHECK_INT(b.items[1].cents, 200);
	CHECK_INT(b.nrefused, 2);
	CHECK_INT(b.refused[0].index, 2);
	CHECK_STR(b.refused[0].id, "as:pay_3");
	CHECK_STR(b.refused[0].reasons, "[\"data[2].value: must be a number of reais from 0.01 to "
					"9999999999.99 with at most 2 decimal places, like "
					"10.5\"]");
	CHECK_STR(b.refused[0].item, "{\"id\":\"pay_3\",\"billingType\":\"PIX\",\"status\":"
				     "\"RECEIVED\",\"value\":1e1}");
	CHECK_INT(b.refused[1].index, 3);
	CHECK_INT(strlen(b.refused[1].id), 64); /* no id: its SHA-256 */
	CHECK_STR(b.refused[1].err, "data[3].id: is required");
	bankpix_batch_deinit(&b);

	/* an empty page */
	CHECK_INT(page("{\"object\":\"list\",\"hasMore\":false,\"data\":[]}", &b, &more), ASAAS_OK);
	CHECK_INT(b.n + b.nrefused, 0);
	CHECK_INT(more, 0);
	bankpix_batch_deinit(&b);

	/* pages refused whole: nothing written */
	b.n = 77;
	more = true;
	CHECK_INT(asaas_payments_parse("{\"hasMore\":false}", 17, &b, &more, err, sizeof(err)),
		  ASAAS_MALFORMED);
	CHECK_STR(err, "data: is required");
	CHECK_INT(b.n, 77);
	CHECK_INT(more, 1);
	CHECK_INT(page("{\"hasMore\":false,\"data\":{}}", &b, &more), ASAAS_MALFORMED);
	CHECK_STR(err, "data: must be an array");
	CHECK_INT(page("{\"data\":[]}", &b, &more), ASAAS_MALFORMED);
	CHECK_STR(err, "hasMore: is required");
	CHECK_INT(page("{\"hasMore\":\"false\",\"data\":[]}", &b, &more), ASAAS_MALFORMED);
	CHECK_STR(err, "hasMore: must be true or false");
	CHECK_INT(page("{\"errors\":[{\"code\":\"invalid_access_token\"}]}", &b, &more),
		  ASAAS_MALFORMED);
	CHECK_INT(page("[]", &b, &more), ASAAS_MALFORMED);
	CHECK_INT(page("{\"hasMore\":false,\"data\":[],\"data\":[]}", &b, &more), ASAAS_MALFORMED);

	/* GET /v3/payments/{id}: the payment itself */
	{
		static const char *const body =
		    "{\"object\":\"payment\",\"id\":\"pay_1\",\"billingType\":\"PIX\",\"status\":"
		    "\"RECEIVED\",\"value\":0.5,\"paymentDate\":\"2024-11-06\"}";

		memset(&b, 0, sizeof(b));
		CHECK_INT(asaas_payment_parse(body, strlen(body), &b, err, sizeof(err)), ASAAS_OK);
		CHECK_INT(b.n, 1);
		CHECK_STR(b.items[0].id, "as:pay_1");
		CHECK_INT(b.items[0].cents, 50);
		bankpix_batch_deinit(&b);
		const char *bad =
		    "{\"id\":\"pay_1\",\"status\":\"RECEIVED\",\"billingType\":\"PIX\"}";

		CHECK_INT(asaas_payment_parse(bad, strlen(bad), &b, err, sizeof(err)), ASAAS_OK);
		CHECK_INT(b.nrefused, 1);
		CHECK_STR(b.refused[0].err, "value: is required");
		bankpix_batch_deinit(&b);
		CHECK_INT(asaas_payment_parse(S("[1]"), &b, err, sizeof(err)), ASAAS_MALFORMED);
	}
}

static void test_many(void)
{
	size_t cap = 10000 * 128 + 64, n = 0;
	char *body = mem_alloc(cap);
	struct bankpix_batch b;
	bool more;

	/* 10,000 payments: refused whole, before any is read */
	n += (size_t)snprintf(body + n, cap - n, "{\"hasMore\":true,\"data\":[");
	for (int i = 0; i < 10000; i++)
		n += (size_t)snprintf(body + n, cap - n,
				      "%s{\"id\":\"pay_%d\",\"billingType\":\"PIX\",\"status\":"
				      "\"RECEIVED\",\"value\":%d,\"paymentDate\":\"2024-11-06\"}",
				      i ? "," : "", i, i + 1);
	snprintf(body + n, cap - n, "]}");
	CHECK_INT(page(body, &b, &more), ASAAS_TOO_MANY);
	CHECK_STR(err, "data: more than 1000 in one page");

	/* 1,000 (Asaas sends 100): all read */
	n = 0;
	n += (size_t)snprintf(body + n, cap - n, "{\"hasMore\":true,\"data\":[");
	for (int i = 0; i < 1000; i++)
		n +=
		    (size_t)snprintf(body + n, cap - n,
				     "%s{\"id\":\"pay_%d\",\"billingType\":\"PIX\",\"status\":"
				     "\"RECEIVED\",\"value\":%d.25,\"paymentDate\":\"2024-11-06\"}",
				     i ? "," : "", i, i);
	snprintf(body + n, cap - n, "]}");
	CHECK_INT(page(body, &b, &more), ASAAS_OK);
	CHECK_INT(b.n, 1000);
	CHECK_INT(b.items[999].cents, 99925);
	CHECK_STR(b.items[999].id, "as:pay_999");
	bankpix_batch_deinit(&b);
	free(body);
}

static void test_answers(void)
{
	struct asaas_created c;
	char id[ASAAS_ID_MAX + 1] = "same", status[ASAAS_STATUS_MAX + 1] = "same";
	char *payload = NULL;
	const char *body;

	/* POST /v3/customers (AS-GO customer.go CustomerResponse) */
	body =
	    "{\"object\":\"customer\",\"id\":\"cus_000005219613\",\"dateCreated\":\"2024-06-12\","
	    "\"name\":\"Marcelo Almeida\",\"cpfCnpj\":\"24971563792\",\"externalReference\":"
	    "\"01KAR5Z3W6D2PJ8V2Q1M7XTB0F\"}";
	CHECK_INT(asaas_customer_created(body, strlen(body), id, err, sizeof(err)), ASAAS_OK);
	CHECK_STR(id, "cus_000005219613");
	strcpy(id, "same");
	body = "{\"errors\":[{\"code\":\"invalid_cpfCnpj\",\"description\":\"CPF inválido\"}]}";
	CHECK_INT(asaas_customer_created(body, strlen(body), id, err, sizeof(err)),
		  ASAAS_MALFORMED);
	CHECK_STR(err, "id: is required");
	CHECK_STR(id, "same");
	CHECK_INT(asaas_customer_created(S("{\"id\":\"cus 1\"}"), id, err, sizeof(err)),
		  ASAAS_MALFORMED);
	CHECK_STR(err, "id: must be 1 to 64 letters, digits, '-' or '_'");

	/* GET /v3/customers?externalReference= */
	body = "{\"object\":\"list\",\"hasMore\":false,\"totalCount\":1,\"limit\":10,\"offset\":0,"
	       "\"data\":[{\"object\":\"customer\",\"id\":\"cus_1\"},{\"id\":\"cus_2\"}]}";
	CHECK_INT(asaas_customers_found(body, strlen(body), id, err, sizeof(err)), ASAAS_OK);
	CHECK_STR(id, "cus_1");
	body = "{\"object\":\"list\",\"hasMore\":false,\"totalCount\":0,\"data\":[]}";
	strcpy(id, "same");
	CHECK_INT(asaas_customers_found(body, strlen(body), id, err, sizeof(err)), ASAAS_NONE);
	CHECK_STR(id, "same");
	CHECK_INT(asaas_customers_found(S("{\"data\":[5]}"), id, err, sizeof(err)),
		  ASAAS_MALFORMED);
	CHECK_STR(err, "data[0]: must be an object");
	CHECK_INT(asaas_customers_found(S("{\"data\":[{}]}"), id, err, sizeof(err)),
		  ASAAS_MALFORMED);
	CHECK_STR(err, "data[0].id: is required");
	CHECK_INT(asaas_customers_found(S("{}"), id, err, sizeof(err)), ASAAS_MALFORMED);
	CHECK_STR(err, "data: is required");

	/* POST /v3/payments (AS-GO charge.go ChargeResponse) */
	body = "{\"object\":\"payment\",\"id\":\"pay_080225913252\",\"dateCreated\":\"2024-11-06\","
	       "\"customer\":\"cus_1\",\"value\":129.9,\"netValue\":128.91,\"billingType\":\"PIX\","
	       "\"status\":\"PENDING\",\"dueDate\":\"2024-11-07\",\"externalReference\":"
	       "\"01KAR5Z3W6D2PJ8V2Q1M7XTB0F\",\"refunds\":null}";
	memset(&c, 0x5a, sizeof(c));
	CHECK_INT(asaas_payment_created(body, strlen(body), &c, err, sizeof(err)), ASAAS_OK);
	CHECK_STR(c.id, "pay_080225913252");
	CHECK_STR(c.status, "PENDING");
	CHECK_INT(c.cents, 12990);
	CHECK_STR(c.external_reference, "01KAR5Z3W6D2PJ8V2Q1M7XTB0F");
	c.cents = 77;
	CHECK_INT(
	    asaas_payment_created(S("{\"id\":\"pay_1\",\"status\":\"PENDING\",\"value\":1e2}"), &c,
				  err, sizeof(err)),
	    ASAAS_MALFORMED);
	CHECK_STR(err, "value: must be a number of reais from 0.01 to 9999999999.99 with at most 2 "
		       "decimal places, like 10.5");
	CHECK_INT(c.cents, 77);
	CHECK_INT(asaas_payment_created(S("{\"id\":\"pay_1\",\"value\":1}"), &c, err, sizeof(err)),
		  ASAAS_MALFORMED);
	CHECK_STR(err, "status: is required");

	/* GET /v3/payments?externalReference= */
	body = "{\"object\":\"list\",\"hasMore\":false,\"data\":[{\"id\":\"pay_7\",\"status\":"
	       "\"RECEIVED\",\"value\":10,\"externalReference\":null}]}";
	CHECK_INT(asaas_payments_found(body, strlen(body), &c, err, sizeof(err)), ASAAS_OK);
	CHECK_STR(c.id, "pay_7");
	CHECK_STR(c.status, "RECEIVED");
	CHECK_INT(c.cents, 1000);
	CHECK_STR(c.external_reference, "");
	CHECK_INT(asaas_payments_found(S("{\"data\":[]}"), &c, err, sizeof(err)), ASAAS_NONE);
	CHECK_STR(c.id, "pay_7");
	CHECK_INT(asaas_payments_found(S("{\"data\":[{\"id\":\"pay_7\",\"status\":\"PENDING\"}]}"),
				       &c, err, sizeof(err)),
		  ASAAS_MALFORMED);
	CHECK_STR(err, "data[0].value: is required");

	/* GET /v3/payments/{id}/pixQrCode (AS-PIX) */
	body = "{\"encodedImage\":\"iVBORw0KGgo=\",\"payload\":"
	       "\"00020101021226820014br.gov.bcb.pix2560qrpix-h.bradesco.com.br/9d36b84f-c70b-478f-"
	       "b95c-12729b90ca255204000053039865802BR5905ASAAS6009JOINVILLE62070503***63041D3D\","
	       "\"expirationDate\":\"2023-05-02 23:59:59\"}";
	CHECK_INT(asaas_qrcode(body, strlen(body), &payload, err, sizeof(err)), ASAAS_OK);
	CHECK(payload && strncmp(payload, "000201010212", 12) == 0);
	free(payload);
	payload = NULL;
	CHECK_INT(asaas_qrcode(S("{\"payload\":\"\"}"), &payload, err, sizeof(err)),
		  ASAAS_MALFORMED);
	CHECK_STR(err, "payload: must not be empty");
	CHECK_INT(asaas_qrcode(S("{\"payload\":\"a\\nb\"}"), &payload, err, sizeof(err)),
		  ASAAS_MALFORMED);
	CHECK_STR(err, "payload: must be at most 512 characters, no control characters");
	CHECK_INT(asaas_qrcode(S("{\"encodedImage\":\"x\"}"), &payload, err, sizeof(err)),
		  ASAAS_MALFORMED);
	CHECK_STR(err, "payload: is required");
	CHECK(payload == NULL);

	/* POST /v3/payments/{id}/refund answers the payment (AS-GO) */
	body = "{\"object\":\"payment\",\"id\":\"pay_1\",\"status\":\"REFUNDED\",\"refunds\":"
	       "[{\"dateCreated\":\"2024-11-07 10:00:00\",\"status\":\"DONE\",\"value\":10}]}";
	CHECK_INT(asaas_refund_answer(body, strlen(body), status, err, sizeof(err)), ASAAS_OK);
	CHECK_STR(status, "REFUNDED");
	strcpy(status, "same");
	CHECK_INT(asaas_refund_answer(S("{\"status\":\"refunded\"}"), status, err, sizeof(err)),
		  ASAAS_MALFORMED);
	CHECK_STR(err, "status: must be 1 to 31 of A-Z and _");
	CHECK_STR(status, "same");
}

static void test_bodies(void)
{
	char text[24], *s;

	CHECK_STR(bankpix_cents_text(1234, text), "12.34");
	CHECK_STR(bankpix_cents_text(1050, text), "10.50");
	CHECK_STR(bankpix_cents_text(5, text), "0.05");
	CHECK_STR(bankpix_cents_text(0, text), "0.00");
	CHECK_STR(bankpix_cents_text(999999999999LL, text), "9999999999.99");

	s = asaas_customer_body("Loja \"A\"", "24971563792", "01KAR5Z3W6D2PJ8V2Q1M7XTB0F");
	CHECK_STR(s,
		  "{\"name\":\"Loja \\\"A\\\"\",\"cpfCnpj\":\"24971563792\",\"externalReference\":"
		  "\"01KAR5Z3W6D2PJ8V2Q1M7XTB0F\"}");
	free(s);
	s = asaas_customer_body("Loja", NULL, "x");
	CHECK_STR(s, "{\"name\":\"Loja\",\"externalReference\":\"x\"}");
	free(s);
	s = asaas_payment_body("cus_1", 1050, "2024-11-07", "01KAR5Z3W6D2PJ8V2Q1M7XTB0F",
			       "Pedido 7");
	CHECK_STR(s, "{\"customer\":\"cus_1\",\"billingType\":\"PIX\",\"value\":10.50,\"dueDate\":"
		     "\"2024-11-07\",\"externalReference\":\"01KAR5Z3W6D2PJ8V2Q1M7XTB0F\","
		     "\"description\":\"Pedido 7\"}");
	free(s);
	s = asaas_payment_body("cus_1", 999999999999LL, "2024-11-07", "r", "");
	CHECK_STR(s, "{\"customer\":\"cus_1\",\"billingType\":\"PIX\",\"value\":9999999999.99,"
		     "\"dueDate\":\"2024-11-07\",\"externalReference\":\"r\"}");
	free(s);
	s = asaas_refund_body(1, "Devolução");
	CHECK_STR(s, "{\"value\":0.01,\"description\":\"Devolução\"}");
	free(s);
	s = asaas_refund_body(0, NULL);
	CHECK_STR(s, "{}");
	free(s);

	/* what pixrelay writes, Asaas's reader (this one) reads back */
	{
		int64_t c = 0;

		for (int64_t v = 1; v < 100000; v += 37) {
			bankpix_cents_text(v, text);
			CHECK(bankpix_reais_cents(text, &c) == 0 && c == v);
		}
	}
}

int main(void)
{
	test_notices();
	test_notice_batch();
	test_values();
	test_chargebacks();
	test_payments();
	test_refunds();
	test_pages();
	test_many();
	test_answers();
	test_bodies();
	return check_finish("asaas");
}
