/* Unit tests of bankpix: the API Pix webhook body, item by item, with the
 * standard's own examples (pixWebhook1, pixWebhook2 of openapi.yaml 2.9.0),
 * exact cents, each refusal's message, the txid -> charge id rule, and a
 * page of GET /pix with its count of pages. */
#include "check.h"

#include "pixrelay/pix/bankpix.h"

#include <stdlib.h>
#include <string.h>

static char err[256];

static int parse(const char *text, struct bankpix_batch *b)
{
	memset(b, 0x5a, sizeof(*b));
	return bankpix_parse(text, strlen(text), b, err, sizeof(err));
}

static long long cents(const char *s)
{
	int64_t v = -7;

	return bankpix_valor_cents(s, &v) < 0 ? -1 : v;
}

static void test_valor(void)
{
	CHECK_INT(cents("110.00"), 11000);
	CHECK_INT(cents("0.01"), 1);
	CHECK_INT(cents("0.00"), 0);
	CHECK_INT(cents("01.00"), 100);
	CHECK_INT(cents("9999999999.99"), 999999999999LL);
	CHECK_INT(cents("12345678.91"), 1234567891LL); /* no float: .91 stays 91 */
	CHECK_INT(cents("99999999999.99"), -1);	       /* 11 digits */
	CHECK_INT(cents("1.5"), -1);
	CHECK_INT(cents("1.500"), -1);
	CHECK_INT(cents("1"), -1);
	CHECK_INT(cents(".50"), -1);
	CHECK_INT(cents("+1.00"), -1);
	CHECK_INT(cents("-1.00"), -1);
	CHECK_INT(cents("1e2"), -1);
	CHECK_INT(cents(" 1.00"), -1);
	CHECK_INT(cents("1.00 "), -1);
	CHECK_INT(cents("1,00"), -1);
	CHECK_INT(cents("abc1.00"), -1); /* the schema's unanchored pattern would take it */
	CHECK_INT(cents(""), -1);
}

static long long reais(const char *s)
{
	int64_t v = -7;

	return bankpix_reais_cents(s, &v) < 0 ? -1 : v;
}

/* A provider's JSON number of reais, read from its text. */
static void test_reais(void)
{
	char text[24];

	CHECK_INT(reais("10.5"), 1050);
	CHECK_INT(reais("100"), 10000);
	CHECK_INT(reais("94.51"), 9451);
	CHECK_INT(reais("0.01"), 1);
	CHECK_INT(reais("10.500"), 1050); /* more places, zeros only */
	CHECK_INT(reais("12345678.91"), 1234567891LL);
	CHECK_INT(reais("9999999999.99"), 999999999999LL);
	CHECK_INT(reais("10000000000"), -1); /* above the standard's largest valor */
	CHECK_INT(reais("99999999999999999999999"), -1);
	CHECK_INT(reais("10.505"), -1); /* a fraction of a cent */
	CHECK_INT(reais("1e2"), -1);
	CHECK_INT(reais("1E2"), -1);
	CHECK_INT(reais("1.0e2"), -1);
	CHECK_INT(reais("-1"), -1);
	CHECK_INT(reais("0"), -1);
	CHECK_INT(reais("0.00"), -1);
	CHECK_INT(reais("01"), -1);
	CHECK_INT(reais("1."), -1);
	CHECK_INT(reais(".5"), -1);
	CHECK_INT(reais(""), -1);
	CHECK_STR(bankpix_cents_text(1234, text), "12.34");
	CHECK_STR(bankpix_cents_text(1050, text), "10.50");
	CHECK_STR(bankpix_cents_text(5, text), "0.05");
	CHECK_STR(bankpix_cents_text(999999999999LL, text), "9999999999.99");
}

static void test_txid(void)
{
	char id[27] = "unchanged";

	CHECK_INT(bankpix_charge_of_txid("01KAR5Z3W6D2PJ8V2Q1M7XTB0F", id), 0);
	CHECK_STR(id, "01KAR5Z3W6D2PJ8V2Q1M7XTB0F");
	/* a static BR Code carries the id without its leading 0 */
	CHECK_INT(bankpix_charge_of_txid("1KAR5Z3W6D2PJ8V2Q1M7XTB0G", id), 0);
	CHECK_STR(id, "01KAR5Z3W6D2PJ8V2Q1M7XTB0G");
	strcpy(id, "unchanged");
	CHECK_INT(bankpix_charge_of_txid("c3e0e7a4e7f1469a9f782d3d4999343c", id), -1);
	CHECK_INT(bankpix_charge_of_txid("1KAR5Z3W6D2PJ8V2Q1M7XTBU", id), -1);	 /* 24 */
	CHECK_INT(bankpix_charge_of_txid("1KAR5Z3W6D2PJ8V2Q1M7XTBUG", id), -1);	 /* U */
	CHECK_INT(bankpix_charge_of_txid("01kar5z3w6d2pj8v2q1m7xtb0f", id), -1); /* lower case */
	CHECK_INT(bankpix_charge_of_txid("01KAR5Z3W6D2PJ8V2Q1M7XTBUF", id), -1); /* U */
	CHECK_INT(bankpix_charge_of_txid("", id), -1);
	CHECK_STR(id, "unchanged");
}

/* The standard's examples, as openapi.yaml gives them (each is one Pix; the
 * webhook body is {"pix": [them]}). */
static const char example1[] =
    "{\"endToEndId\":\"E12345678202009091221kkkkkkkkkkk\","
    "\"txid\":\"c3e0e7a4e7f1469a9f782d3d4999343c\",\"valor\":\"110.00\","
    "\"horario\":\"2020-09-09T20:15:00.358Z\",\"infoPagador\":\"0123456789\","
    "\"devolucoes\":{\"id\":\"123ABC\",\"rtrId\":\"D12345678202009091221abcdf098765\","
    "\"valor\":\"10.00\",\"horario\":{\"solicitacao\":\"2020-09-09T20:15:00.358Z\"},"
    "\"status\":\"EM_PROCESSAMENTO\"}}";
static const char example2[] =
    "{\"endToEndId\":\"E87654321202009091221dfghi123456\","
    "\"txid\":\"971122d8f37211eaadc10242ac120002\",\"valor\":\"110.00\","
    "\"horario\":\"2020-09-09T20:15:00.358Z\",\"infoPagador\":\"0123456789\"}";

static void test_examples(void)
{
	struct bankpix_batch b;
	char body[2048];

	snprintf(body, sizeof(body), "{\"pix\":[%s,%s]}", example1, example2);
	CHECK_INT(parse(body, &b), BANKPIX_OK);
	CHECK_INT(b.n, 2);
	CHECK_INT(b.nrefused, 0);
	CHECK_STR(b.items[0].e2e, "E12345678202009091221kkkkkkkkkkk");
	/* a bank's Pix is once by its endToEndId: no provider id */
	CHECK_STR(b.items[0].id, "");
	CHECK_STR(b.items[1].id, "");
	CHECK_STR(b.items[0].txid, "c3e0e7a4e7f1469a9f782d3d4999343c");
	CHECK_INT(b.items[0].cents, 11000);
	CHECK_INT(b.items[0].horario_ms, 1599682500358LL);
	/* pixWebhook1's refund, an object where the schema says array: one refund */
	CHECK_INT(b.items[0].nrefunds, 1);
	CHECK_STR(b.items[0].refunds[0].id, "123ABC");
	CHECK_STR(b.items[0].refunds[0].rtr_id, "D12345678202009091221abcdf098765");
	CHECK_INT(b.items[0].refunds[0].cents, 1000);
	CHECK_INT(b.items[0].refunds[0].status, BANKPIX_EM_PROCESSAMENTO);
	/* the canonical form the merchant gets: devolucoes an array */
	CHECK_STR(
	    b.items[0].json,
	    "{\"endToEndId\":\"E12345678202009091221kkkkkkkkkkk\","
	    "\"txid\":\"c3e0e7a4e7f1469a9f782d3d4999343c\",\"valor\":\"110.00\","
	    "\"horario\":\"2020-09-09T20:15:00.358Z\",\"infoPagador\":\"0123456789\","
	    "\"devolucoes\":[{\"id\":\"123ABC\",\"rtrId\":\"D12345678202009091221abcdf098765\","
	    "\"valor\":\"10.00\",\"horario\":{\"solicitacao\":\"2020-09-09T20:15:00.358Z\"},"
	    "\"status\":\"EM_PROCESSAMENTO\"}]}");
	CHECK_STR(b.items[1].json, example2);
	CHECK_INT(b.items[1].nrefunds, 0);
	bankpix_batch_deinit(&b);
}

/* One bad item among good ones: the good ones pass, the bad one is refused
 * with its index, its endToEndId and the field. */
static const char *refusal(const char *item, char *e2e_out)
{
	static char msg[BANKPIX_ERR_MAX];
	struct bankpix_batch b;
	char body[4096];

	snprintf(body, sizeof(body), "{\"pix\":[%s,%s,%s]}", example2, item, example2);
	if (parse(body, &b) != BANKPIX_OK)
		return "(body refused)";
	if (b.n != 2 || b.nrefused != 1 || b.refused[0].index != 1) {
		bankpix_batch_deinit(&b);
		return "(no single refusal)";
	}
	snprintf(msg, sizeof(msg), "%s", b.refused[0].err);
	if (e2e_out)
		strcpy(e2e_out, b.refused[0].e2e);
	bankpix_batch_deinit(&b);
	return msg;
}

#define E2E "\"endToEndId\":\"E00000000202611261200abcdefghijk\""
#define HOR "\"horario\":\"2026-11-26T12:00:00-03:00\""

static void test_refusals(void)
{
	char e2e[40] = "";

	CHECK_STR(refusal("[]", NULL), "pix[1]: must be an object");
	CHECK_STR(refusal("{\"valor\":\"1.00\"," HOR "}", e2e), "pix[1].endToEndId: is required");
	CHECK_STR(e2e, "");
	CHECK_STR(refusal("{\"endToEndId\":\"E123\",\"valor\":\"1.00\"," HOR "}", NULL),
		  "pix[1].endToEndId: must be 32 letters or digits");
	CHECK_STR(refusal("{\"endToEndId\":7,\"valor\":\"1.00\"," HOR "}", NULL),
		  "pix[1].endToEndId: must be a string");
	CHECK_STR(refusal("{" E2E "," HOR "}", e2e), "pix[1].valor: is required");
	CHECK_STR(e2e, "E00000000202611261200abcdefghijk");
	CHECK_STR(refusal("{" E2E ",\"valor\":110.0," HOR "}", NULL),
		  "pix[1].valor: must be a string");
	CHECK_STR(refusal("{" E2E ",\"valor\":\"110\"," HOR "}", NULL),
		  "pix[1].valor: must be 1 to 10 digits, a dot and 2 digits, like \"110.00\"");
	CHECK_STR(refusal("{" E2E ",\"valor\":\"1.00\"}", NULL), "pix[1].horario: is required");
	CHECK_STR(refusal("{" E2E ",\"valor\":\"1.00\",\"horario\":\"2026-11-26T12:00:00\"}", NULL),
		  "pix[1].horario: must be an RFC 3339 date-time with a time zone, like "
		  "\"2020-09-09T20:15:00.358Z\"");
	CHECK_STR(
	    refusal("{" E2E ",\"valor\":\"1.00\",\"horario\":\"2026-02-30T12:00:00Z\"}", NULL),
	    "pix[1].horario: must be an RFC 3339 date-time with a time zone, like "
	    "\"2020-09-09T20:15:00.358Z\"");
	CHECK_STR(refusal("{" E2E ",\"valor\":\"1.00\"," HOR ",\"txid\":\"a-b\"}", NULL),
		  "pix[1].txid: must be 1 to 35 letters or digits");
	CHECK_STR(refusal("{" E2E ",\"valor\":\"1.00\"," HOR
			  ",\"txid\":\"123456789012345678901234567890123456\"}",
			  NULL),
		  "pix[1].txid: must be 1 to 35 letters or digits");
	CHECK_STR(refusal("{" E2E ",\"valor\":\"1.00\"," HOR ",\"componentesValor\":[]}", NULL),
		  "pix[1].componentesValor: must be an object");
	CHECK_STR(refusal("{" E2E ",\"valor\":\"1.00\"," HOR ",\"devolucoes\":\"x\"}", NULL),
		  "pix[1].devolucoes: must be an array of refunds");
	CHECK_STR(
	    refusal("{" E2E ",\"valor\":\"1.00\"," HOR ",\"devolucoes\":[{\"id\":\"1\"}]}", NULL),
	    "pix[1].devolucoes[0].rtrId: is required");
	CHECK_STR(
	    refusal("{" E2E ",\"valor\":\"1.00\"," HOR ",\"devolucoes\":[{\"id\":\"1\",\"rtrId\":"
		    "\"D00000000202611261200abcdefghijk\",\"valor\":\"1.00\",\"horario\":{},"
		    "\"status\":\"FEITO\"}]}",
		    NULL),
	    "pix[1].devolucoes[0].status: must be EM_PROCESSAMENTO, DEVOLVIDO or NAO_REALIZADO");
	CHECK_STR(refusal("{" E2E ",\"valor\":\"1.00\"," HOR
			  ",\"devolucoes\":[{\"id\":\"1\",\"rtrId\":"
			  "\"D00000000202611261200abcdefghijk\",\"valor\":\"1.00\","
			  "\"status\":\"DEVOLVIDO\"}]}",
			  NULL),
		  "pix[1].devolucoes[0].horario: is required");
	CHECK_STR(refusal("{" E2E ",\"valor\":\"1.00\"," HOR
			  ",\"devolucoes\":[{\"id\":\"1\",\"rtrId\":"
			  "\"D00000000202611261200abcdefghijk\",\"valor\":\"1.00\",\"horario\":"
			  "{\"liquidacao\":\"yesterday\"},\"status\":\"DEVOLVIDO\"}]}",
			  NULL),
		  "pix[1].devolucoes[0].horario.liquidacao: must be an RFC 3339 date-time with a "
		  "time zone, like \"2020-09-09T20:15:00.358Z\"");
	/* 141 characters of infoPagador (multi-byte characters count once) */
	{
		char item[1024], info[600] = "";
		for (int i = 0; i < 140; i++)
			strcat(info, "\xc3\xa7"); /* ç */
		snprintf(item, sizeof(item),
			 "{" E2E ",\"valor\":\"1.00\"," HOR ",\"infoPagador\":\"%s\"}", info);
		CHECK_STR(refusal(item, NULL), "(no single refusal)"); /* 140: fine */
		strcat(info, "c");
		snprintf(item, sizeof(item),
			 "{" E2E ",\"valor\":\"1.00\"," HOR ",\"infoPagador\":\"%s\"}", info);
		CHECK_STR(refusal(item, NULL),
			  "pix[1].infoPagador: must be at most 140 characters");
	}
}

/* Optional fields given as null are absent; unknown fields are left out of
 * the canonical form. */
static void test_tolerance(void)
{
	struct bankpix_batch b;

	CHECK_INT(
	    parse("{\"pix\":[{" E2E ",\"valor\":\"2.50\"," HOR
		  ",\"txid\":null,\"chave\":null,\"infoPagador\":null,\"devolucoes\":null,"
		  "\"componentesValor\":{\"original\":{\"valor\":\"2.50\"}},\"extra\":[1,2]}],"
		  "\"other\":true}",
		  &b),
	    BANKPIX_OK);
	CHECK_INT(b.n, 1);
	CHECK_STR(b.items[0].txid, "");
	CHECK_INT(b.items[0].cents, 250);
	CHECK_INT(b.items[0].horario_ms, 1795705200000LL);
	CHECK_STR(b.items[0].json,
		  "{\"endToEndId\":\"E00000000202611261200abcdefghijk\","
		  "\"valor\":\"2.50\",\"componentesValor\":{\"original\":"
		  "{\"valor\":\"2.50\"}},\"horario\":\"2026-11-26T12:00:00-03:00\"}");
	bankpix_batch_deinit(&b);

	CHECK_INT(parse("{\"pix\":[]}", &b), BANKPIX_OK);
	CHECK_INT(b.n + b.nrefused, 0);
	bankpix_batch_deinit(&b);
}

/* componentesValor read for matching a charge with a due date: whether its
 * parts add up to valor, and its original. */
static int parts(const char *valor, const char *comp, int64_t *original)
{
	struct bankpix_batch b;
	char text[512];
	int rc = -1;

	snprintf(text, sizeof(text), "{\"pix\":[{" E2E ",\"valor\":\"%s\"," HOR "%s%s}]}", valor,
		 comp ? ",\"componentesValor\":" : "", comp ? comp : "");
	if (parse(text, &b) == BANKPIX_OK && b.n == 1) {
		rc = b.items[0].parts;
		*original = b.items[0].parts_original;
	}
	bankpix_batch_deinit(&b);
	return rc;
}

static void test_parts(void)
{
	int64_t o = -1;

	CHECK_INT(parts("102.33", NULL, &o), BANKPIX_PARTS_NONE);
	CHECK_INT(parts("102.33",
			"{\"original\":{\"valor\":\"100.00\"},\"multa\":{\"valor\":\"2.00\"},"
			"\"juros\":{\"valor\":\"0.33\"}}",
			&o),
		  BANKPIX_PARTS_ADD_UP);
	CHECK_INT(o, 10000);
	CHECK_INT(parts("92.50",
			"{\"original\":{\"valor\":\"100.00\"},\"desconto\":{\"valor\":\"5.00\"},"
			"\"abatimento\":{\"valor\":\"2.50\"},\"outro\":1}",
			&o),
		  BANKPIX_PARTS_ADD_UP);
	CHECK_INT(o, 10000);
	/* one cent off, no original, an unreadable part */
	CHECK_INT(parts("102.34",
			"{\"original\":{\"valor\":\"100.00\"},\"multa\":{\"valor\":\"2.33\"}}", &o),
		  BANKPIX_PARTS_WRONG);
	CHECK_INT(parts("2.00", "{\"multa\":{\"valor\":\"2.00\"}}", &o), BANKPIX_PARTS_WRONG);
	CHECK_INT(parts("2.00", "{\"original\":{\"valor\":2}}", &o), BANKPIX_PARTS_WRONG);
	CHECK_INT(parts("2.00", "{\"original\":{}}", &o), BANKPIX_PARTS_WRONG);
}

static void test_bodies(void)
{
	struct bankpix_batch b;
	char *big;
	size_t at;

	CHECK_INT(parse("", &b), BANKPIX_MALFORMED);
	CHECK_INT(parse("7", &b), BANKPIX_MALFORMED);
	CHECK_STR(err, "request body must be a JSON object or array");
	CHECK_INT(parse("\"pix\"", &b), BANKPIX_MALFORMED);
	CHECK_STR(err, "request body must be a JSON object or array");
	CHECK_INT(parse("{\"pix\":{}}", &b), BANKPIX_MALFORMED);
	CHECK_STR(err, "pix: must be an array");
	CHECK_INT(parse("{\"evento\":\"teste_webhook\"}", &b), BANKPIX_MALFORMED);
	CHECK_STR(err,
		  "pix: is required (a Pix notification is {\"pix\": [...]}, or its list alone)");
	CHECK_INT(parse("[]", &b), BANKPIX_OK);
	CHECK_INT(b.n + b.nrefused, 0);
	bankpix_batch_deinit(&b);

	/* the list alone, as Inter posts it: read as {"pix": [...]} is */
	big = malloc(3 * sizeof(example2) + 64);
	sprintf(big, "[%s,{\"valor\":\"1.00\"}]", example2);
	CHECK_INT(parse(big, &b), BANKPIX_OK);
	CHECK_INT(b.n, 1);
	CHECK_STR(b.items[0].e2e, "E87654321202009091221dfghi123456");
	CHECK_INT(b.items[0].cents, 11000);
	CHECK_INT(b.nrefused, 1);
	CHECK_INT(b.refused[0].index, 1);
	CHECK_STR(b.refused[0].err, "pix[1].endToEndId: is required");
	bankpix_batch_deinit(&b);
	/* the array is the body's top level only */
	sprintf(big, "{\"pix\":[[%s]]}", example2);
	CHECK_INT(parse(big, &b), BANKPIX_OK);
	CHECK_INT(b.n, 0);
	CHECK_STR(b.refused[0].err, "pix[0]: must be an object");
	bankpix_batch_deinit(&b);
	free(big);

	/* 1,000 items pass, 1,001 are too many */
	big = malloc(1001 * sizeof(example2) + 64);
	at = (size_t)sprintf(big, "{\"pix\":[");
	for (int i = 0; i < 1000; i++)
		at += (size_t)sprintf(big + at, "%s%s", i ? "," : "", example2);
	strcpy(big + at, "]}");
	CHECK_INT(parse(big, &b), BANKPIX_OK);
	CHECK_INT(b.n, 1000);
	bankpix_batch_deinit(&b);
	at += (size_t)sprintf(big + at, ",%s", example2);
	strcpy(big + at, "]}");
	CHECK_INT(parse(big, &b), BANKPIX_TOO_MANY);
	CHECK_STR(err, "pix: more than 1000 items in one notification");
	/* as many bare */
	big[at] = ']';
	big[at + 1] = '\0';
	CHECK_INT(parse(big + strlen("{\"pix\":"), &b), BANKPIX_TOO_MANY);
	CHECK_STR(err, "pix: more than 1000 items in one notification");
	free(big);
}

/* A refused item reaches the merchant whole: every reason, the item as
 * received, what it could read of it, and what makes it once. */
static void test_refused_items(void)
{
	struct bankpix_batch b;
	const char *body = "{\"pix\":[{\"endToEndId\":\"short\",\"valor\":\"1\",\"horario\":\"x\","
			   "\"chave\":\"k@x.br\",\"extra\":[1,2.50]},"
			   "{\"valor\":\"2.00\",\"horario\":\"2020-09-10T01:00:00Z\"},"
			   "{\"horario\":\"2020-09-10T01:00:00Z\",\"valor\":\"2.00\"},"
			   "7,{" E2E ",\"valor\":\"3.00\"," HOR ",\"txid\":\"a-b\"}]}";
	char sha[65];

	CHECK_INT(parse(body, &b), BANKPIX_OK);
	CHECK_INT(b.n, 0);
	CHECK_INT(b.nrefused, 5);
	/* every field is checked: three reasons, in the schema's order */
	CHECK_STR(
	    b.refused[0].reasons,
	    "[\"pix[0].endToEndId: must be 32 letters or digits\","
	    "\"pix[0].valor: must be 1 to 10 digits, a dot and 2 digits, like \\\"110.00\\\"\","
	    "\"pix[0].horario: must be an RFC 3339 date-time with a time zone, like "
	    "\\\"2020-09-09T20:15:00.358Z\\\"\"]");
	CHECK_STR(b.refused[0].err, "pix[0].endToEndId: must be 32 letters or digits");
	CHECK_STR(b.refused[0].item, "{\"endToEndId\":\"short\",\"valor\":\"1\",\"horario\":\"x\","
				     "\"chave\":\"k@x.br\",\"extra\":[1,2.50]}");
	CHECK_STR(b.refused[0].e2e, "");
	CHECK_STR(b.refused[0].chave, "k@x.br");
	CHECK_INT(b.refused[0].cents, -1);
	CHECK_INT(b.refused[0].horario_ms, 0);
	/* no endToEndId: told by the SHA-256 of its canonical text, the same
	 * whatever the order of its members */
	CHECK_STR(b.refused[1].reasons, "[\"pix[1].endToEndId: is required\"]");
	CHECK_INT(b.refused[1].cents, 200);
	CHECK_INT(b.refused[1].horario_ms, 1599699600000LL);
	CHECK_INT(strlen(b.refused[1].id), 64);
	CHECK_STR(b.refused[1].id, b.refused[2].id);
	snprintf(sha, sizeof(sha), "%s", b.refused[0].id);
	CHECK(strcmp(sha, b.refused[1].id) != 0);
	CHECK_STR(b.refused[3].item, "7");
	CHECK_STR(b.refused[3].reasons, "[\"pix[3]: must be an object\"]");
	CHECK(b.refused[3].chave == NULL);
	/* a well-formed endToEndId tells the item */
	CHECK_STR(b.refused[4].id, "E00000000202611261200abcdefghijk");
	CHECK_STR(b.refused[4].e2e, "E00000000202611261200abcdefghijk");
	CHECK_INT(b.refused[4].cents, 300);
	CHECK_STR(b.refused[4].reasons, "[\"pix[4].txid: must be 1 to 35 letters or digits\"]");
	/* a connection reconciles its own key: a refused item of another goes */
	CHECK_INT(bankpix_batch_keep_chave(&b, "other@x.br"), 1);
	CHECK_INT(b.nrefused, 4);
	CHECK_STR(b.refused[0].reasons, "[\"pix[1].endToEndId: is required\"]");
	bankpix_batch_deinit(&b);
}

/* A refund's nature, and whether it is one of the MED. */
static void test_natures(void)
{
	struct bankpix_batch b;
	char body[2048];

	snprintf(body, sizeof(body),
		 "{\"pix\":[{" E2E ",\"valor\":\"3.00\"," HOR ",\"devolucoes\":["
		 "{\"id\":\"D1\",\"rtrId\":\"D12345678202009091221abcdf098765\",\"valor\":\"1.00\","
		 "\"natureza\":\"MED_FRAUDE\",\"horario\":{},\"status\":\"DEVOLVIDO\"},"
		 "{\"id\":\"D2\",\"rtrId\":\"D12345678202009091221abcdf098765\",\"valor\":\"1.00\","
		 "\"natureza\":\"ORIGINAL\",\"horario\":{},\"status\":\"DEVOLVIDO\"},"
		 "{\"id\":\"D3\",\"rtrId\":\"D12345678202009091221abcdf098765\",\"valor\":\"1.00\","
		 "\"horario\":{},\"status\":\"DEVOLVIDO\"},"
		 "{\"id\":\"D4\",\"rtrId\":\"D12345678202009091221abcdf098765\",\"valor\":\"1.00\","
		 "\"natureza\":\"MED_NOVA_NATUREZA\",\"horario\":{},\"status\":\"DEVOLVIDO\"},"
		 "{\"id\":\"D5\",\"rtrId\":\"D12345678202009091221abcdf098765\",\"valor\":\"1.00\","
		 "\"natureza\":\"med fraude\",\"horario\":{},\"status\":\"DEVOLVIDO\"}]}]}");
	CHECK_INT(parse(body, &b), BANKPIX_OK);
	CHECK_INT(b.n, 1);
	CHECK_INT(b.items[0].nrefunds, 5);
	CHECK_STR(b.items[0].refunds[0].natureza, "MED_FRAUDE");
	CHECK_INT(b.items[0].refunds[0].med, 1);
	CHECK_STR(b.items[0].refunds[1].natureza, "ORIGINAL");
	CHECK_INT(b.items[0].refunds[1].med, 0);
	CHECK_STR(b.items[0].refunds[2].natureza, "");
	CHECK_INT(b.items[0].refunds[2].med, 0);
	/* a later MED nature is one of the MED too */
	CHECK_INT(b.items[0].refunds[3].med, 1);
	/* text that is no nature's name is kept in the JSON only */
	CHECK_STR(b.items[0].refunds[4].natureza, "");
	CHECK_INT(b.items[0].refunds[4].med, 0);
	CHECK(strstr(b.items[0].refunds[4].json, "\"natureza\":\"med fraude\"") != NULL);
	bankpix_batch_deinit(&b);
}

/* A page of GET /pix whose paginacao carries `count` as JSON text (NULL:
 * no quantidadeDePaginas at all), with example2 as its one Pix. */
static int page(const char *count, struct bankpix_batch *b, long *pages)
{
	char body[2048];

	snprintf(body, sizeof(body),
		 "{\"parametros\":{\"inicio\":\"2020-09-09T00:00:00Z\","
		 "\"fim\":\"2020-09-10T00:00:00Z\",\"paginacao\":{\"paginaAtual\":0,"
		 "\"itensPorPagina\":1000%s%s,\"quantidadeTotalDeItens\":1}},\"pix\":[%s]}",
		 count ? ",\"quantidadeDePaginas\":" : "", count ? count : "", example2);
	memset(b, 0x5a, sizeof(*b));
	*pages = -7;
	err[0] = '\0';
	return bankpix_parse_page(body, strlen(body), b, pages, err, sizeof(err));
}

static void test_page(void)
{
	struct bankpix_batch b;
	long pages;

	CHECK_INT(page("3", &b, &pages), BANKPIX_OK);
	CHECK_INT(pages, 3);
	CHECK_INT(b.n, 1);
	CHECK_STR(b.items[0].json, example2);
	bankpix_batch_deinit(&b);
	/* a bank with nothing to list may say 0 pages: one page, empty or not */
	CHECK_INT(page("0", &b, &pages), BANKPIX_OK);
	CHECK_INT(pages, 1);
	bankpix_batch_deinit(&b);
	CHECK_INT(page("1000000", &b, &pages), BANKPIX_OK);
	CHECK_INT(pages, 1000000);
	bankpix_batch_deinit(&b);

	/* the count is required (Paginacao of the standard): without it, or
	 * unreadable, the page is refused and nothing is written */
	CHECK_INT(page(NULL, &b, &pages), BANKPIX_MALFORMED);
	CHECK_STR(err, "parametros.paginacao.quantidadeDePaginas: is required");
	CHECK_INT(pages, -7);
	CHECK_INT(page("\"3\"", &b, &pages), BANKPIX_MALFORMED);
	CHECK_STR(err, "parametros.paginacao.quantidadeDePaginas: must be a whole number");
	CHECK_INT(pages, -7);
	CHECK_INT(page("-1", &b, &pages), BANKPIX_MALFORMED);
	CHECK_STR(err, "parametros.paginacao.quantidadeDePaginas: must be a whole number");
	CHECK_INT(page("2.5", &b, &pages), BANKPIX_MALFORMED);
	CHECK_STR(err, "parametros.paginacao.quantidadeDePaginas: must be a whole number");
	CHECK_INT(page("null", &b, &pages), BANKPIX_MALFORMED);
	CHECK_STR(err, "parametros.paginacao.quantidadeDePaginas: must be a whole number");
	CHECK_INT(page("1000001", &b, &pages), BANKPIX_MALFORMED);
	CHECK_STR(err, "parametros.paginacao.quantidadeDePaginas: must be at most 1000000");
	CHECK_INT(page("9223372036854775807", &b, &pages), BANKPIX_MALFORMED);
	CHECK_STR(err, "parametros.paginacao.quantidadeDePaginas: must be at most 1000000");
	CHECK_INT(page("99999999999999999999", &b, &pages), BANKPIX_MALFORMED);
	CHECK_STR(err, "parametros.paginacao.quantidadeDePaginas: must be a whole number");
	CHECK_INT(pages, -7);

	/* a page without its list (the standard requires none): empty */
	memset(&b, 0x5a, sizeof(b));
	{
		const char *nolist = "{\"parametros\":{\"paginacao\":{\"quantidadeDePaginas\":1}}}";

		CHECK_INT(bankpix_parse_page(nolist, strlen(nolist), &b, &pages, err, sizeof(err)),
			  BANKPIX_OK);
		CHECK_INT(b.n + b.nrefused, 0);
		CHECK_INT(pages, 1);
		bankpix_batch_deinit(&b);
	}
	pages = -7;

	/* no parametros at all; a body that is no object */
	memset(&b, 0x5a, sizeof(b));
	CHECK_INT(bankpix_parse_page("{\"pix\":[]}", 10, &b, &pages, err, sizeof(err)),
		  BANKPIX_MALFORMED);
	CHECK_STR(err, "parametros.paginacao.quantidadeDePaginas: is required");
	CHECK_INT(bankpix_parse_page("[]", 2, &b, &pages, err, sizeof(err)), BANKPIX_MALFORMED);
	CHECK_STR(err, "request body must be a JSON object");
	CHECK_INT(pages, -7);
}

/* The bank lists every Pix of the account; a connection keeps its key's,
 * and those that name no key. */
static void test_keep_chave(void)
{
	struct bankpix_batch b;
	char body[4096];

	snprintf(body, sizeof(body),
		 "{\"pix\":[{" E2E ",\"valor\":\"1.00\"," HOR ",\"chave\":\"a@loja.example\"},"
		 "{\"endToEndId\":\"E00000000202611261200bbbbbbbbbbb\",\"valor\":\"2.00\"," HOR
		 ",\"chave\":\"b@loja.example\"},%s]}",
		 example2);
	CHECK_INT(parse(body, &b), BANKPIX_OK);
	CHECK_INT(b.n, 3);
	CHECK_INT(bankpix_batch_keep_chave(&b, "a@loja.example"), 1);
	CHECK_INT(b.n, 2);
	CHECK_STR(b.items[0].chave, "a@loja.example");
	CHECK_INT(b.items[0].cents, 100);
	CHECK(b.items[1].chave == NULL);
	CHECK_STR(b.items[1].e2e, "E87654321202009091221dfghi123456");
	CHECK_INT(bankpix_batch_keep_chave(&b, "c@loja.example"), 1);
	CHECK_INT(b.n, 1);
	bankpix_batch_deinit(&b);
	/* the bank writes a key as the DICT keeps it (an e-mail or a random key
	 * in lower case): the key connected in other letters is the same key */
	CHECK_INT(parse(body, &b), BANKPIX_OK);
	CHECK_INT(bankpix_batch_keep_chave(&b, "A@Loja.Example"), 1);
	CHECK_INT(b.n, 2);
	CHECK_STR(b.items[0].chave, "a@loja.example");
	bankpix_batch_deinit(&b);
}

int main(void)
{
	test_parts();
	test_valor();
	test_reais();
	test_txid();
	test_examples();
	test_refusals();
	test_refused_items();
	test_natures();
	test_tolerance();
	test_bodies();
	test_page();
	test_keep_chave();
	return check_finish("bankpix");
}
