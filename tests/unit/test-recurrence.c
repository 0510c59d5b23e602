/* Unit tests of recurrence: a merchant's create request read field by
 * field (each refusal's exact message), the POST /rec body, the bank's
 * answers held against what was asked, the JORNADA_2 QR's checks, and the
 * /rec callback read item by item. */
#include "check.h"

#include "pixrelay/core/json.h"
#include "pixrelay/pix/brcode.h"
#include "pixrelay/pix/recurrence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOC "qr.banco.example/qr/v2/rec/2353c790eefb11eaadc10242ac120002"
#define IDREC "RN9999999920261202abcdefghijk"

static const char *const base =
    "\"payer\":{\"name\":\"Fulano\",\"document\":\"529.982.247-25\"},\"contract\":\"C-1\","
    "\"object\":\"Academia\",\"periodicity\":\"MONTHLY\",\"startDate\":\"2026-12-10\","
    "\"retryPolicy\":\"NONE\"";

/* Parse {base, more}: the result and err. */
static int parse(const char *more, struct recurrence_input *in, char *err, size_t errlen)
{
	char text[2048];
	yajl_val v = NULL;
	int rc;

	snprintf(text, sizeof(text), "{%s%s%s}", base, more[0] ? "," : "", more);
	if (json_parse_object(text, strlen(text), &v, err, errlen) < 0)
		return -2;
	rc = recurrence_parse_create(v, in, err, errlen);
	yajl_tree_free(v);
	return rc;
}

static void refused(const char *more, const char *want)
{
	struct recurrence_input in;
	char err[512] = "";

	CHECK_INT(parse(more, &in, err, sizeof(err)), -1);
	CHECK_STR(err, want);
}

/* A whole body replaced (not base + more). */
static void refused_body(const char *text, const char *want)
{
	struct recurrence_input in;
	char err[512] = "";
	yajl_val v = NULL;

	CHECK_INT(json_parse_object(text, strlen(text), &v, err, sizeof(err)), 0);
	CHECK_INT(recurrence_parse_create(v, &in, err, sizeof(err)), -1);
	CHECK_STR(err, want);
	yajl_tree_free(v);
}

static void test_parse(void)
{
	struct recurrence_input in;
	char err[512] = "", *body;

	CHECK_INT(
	    parse("\"amount\":9990,\"endDate\":\"2027-12-10\",\"postbackUrl\":\"https://x.example/"
		  "h\"",
		  &in, err, sizeof(err)),
	    0);
	CHECK_STR(in.name, "Fulano");
	CHECK_STR(in.document, "52998224725");
	CHECK_INT(in.period, RECURRENCE_MONTHLY);
	CHECK_INT(in.amount, 9990);
	CHECK_INT(in.minimum, 0);
	CHECK_STR(in.end, "2027-12-10");
	body = recurrence_rec_body(&in, 108);
	CHECK_STR(body,
		  "{\"vinculo\":{\"objeto\":\"Academia\",\"devedor\":{\"cpf\":\"52998224725\","
		  "\"nome\":\"Fulano\"},\"contrato\":\"C-1\"},\"calendario\":{\"dataInicial\":"
		  "\"2026-12-10\",\"dataFinal\":\"2027-12-10\",\"periodicidade\":\"MENSAL\"},"
		  "\"valor\":{\"valorRec\":\"99.90\"},\"politicaRetentativa\":\"NAO_PERMITE\","
		  "\"loc\":108}");
	free(body);
	recurrence_input_deinit(&in);

	CHECK_INT(parse("\"minimumAmount\":500", &in, err, sizeof(err)), 0);
	body = recurrence_rec_body(&in, 1);
	CHECK(strstr(body, "\"valor\":{\"valorMinimoRecebedor\":\"5.00\"}") != NULL);
	free(body);
	recurrence_input_deinit(&in);

	refused_body("{}", "payer: required ({\"name\", \"document\"})");
	refused_body("{\"payer\":[]}", "payer: must be an object {\"name\", \"document\"}");
	refused_body("{\"payer\":{\"name\":\"A\",\"document\":\"52998224725\",\"x\":1}}",
		     "payer.x: unknown field (payer has name, document)");
	refused_body("{\"payer\":{\"document\":\"52998224725\"}}", "payer.name: required");
	refused_body("{\"payer\":{\"name\":\"A\",\"document\":\"52998224724\"}}",
		     "payer.document: not a valid CPF or CNPJ");
	refused_body("{\"payer\":{\"name\":\"A\",\"document\":\"52998224725\"}}",
		     "contract: required");
	refused("\"amount\":1.5", "amount: must be an integer number of cents");
	refused("\"amount\":-1", "amount: must be from 1 to 999999999999 (cents)");
	refused("\"amount\":1000000000000", "amount: must be from 1 to 999999999999 (cents)");
	refused("\"amount\":100,\"minimumAmount\":50",
		"minimumAmount: not with amount (a fixed amount has no minimum; give one or the "
		"other)");
	refused("\"endDate\":\"2026-12-09\"", "endDate: must not be before startDate");
	refused("\"endDate\":\"tomorrow\"", "endDate: must be a date YYYY-MM-DD");
	refused("\"postbackUrl\":\"http://\"",
		"postbackUrl: must be an absolute http or https URL");
	refused("\"extra\":1",
		"extra: unknown field (a recurrence has payer, contract, object, "
		"periodicity, startDate, endDate, amount, minimumAmount, retryPolicy, "
		"postbackUrl)");
	refused_body("{\"payer\":{\"name\":\"A\",\"document\":\"52998224725\"},\"contract\":\"C\","
		     "\"object\":\"O\",\"periodicity\":\"monthly\"}",
		     "periodicity: must be WEEKLY, MONTHLY, QUARTERLY, SEMIANNUAL or ANNUAL");
	refused_body("{\"payer\":{\"name\":\"A\",\"document\":\"52998224725\"},\"contract\":\"C\","
		     "\"object\":\"O\",\"periodicity\":\"WEEKLY\",\"startDate\":\"2026-12-10\"}",
		     "retryPolicy: required (NONE or THREE_IN_SEVEN_DAYS)");
	refused_body("{\"payer\":{\"name\":\"A\",\"document\":\"52998224725\"},\"contract\":\"C\","
		     "\"object\":\"O\",\"periodicity\":\"WEEKLY\"}",
		     "startDate: required (YYYY-MM-DD)");
	refused_body("{\"payer\":{\"name\":\"A\",\"document\":\"52998224725\"},\"contract\":\" \"}",
		     "contract: must not be empty");
}

/* The QR of a recurrence for `loc`; with `key` a Pix key in 26.01. */
static void rec_code(char *out, size_t size, const char *key, const char *loc, const char *amount)
{
	char f26[64], f80[128], body[512];

	if (key)
		snprintf(f26, sizeof(f26), "0014br.gov.bcb.pix01%02zu%s", strlen(key), key);
	else
		snprintf(f26, sizeof(f26), "0014br.gov.bcb.pix");
	snprintf(f80, sizeof(f80), "0014BR.GOV.BCB.PIX25%02zu%s", strlen(loc), loc);
	snprintf(body, sizeof(body),
		 "00020126%02zu%s52040000530398654%02zu%s5802BR5905LOJA 6002SP"
		 "62070503***80%02zu%s6304",
		 strlen(f26), f26, amount ? strlen(amount) : 0, amount ? amount : "", strlen(f80),
		 f80);
	if (!amount) {
		/* drop the empty 54 */
		char *p = strstr(body, "5400");
		memmove(p, p + 4, strlen(p + 4) + 1);
	}
	snprintf(out, size, "%s%04X", body, brcode_crc16(body, strlen(body)));
}

static void test_code(void)
{
	char c[512], why[256];

	rec_code(c, sizeof(c), NULL, LOC, NULL);
	CHECK(recurrence_check_code(c, LOC, why, sizeof(why)));
	CHECK(recurrence_check_code(c, "https://" LOC, why, sizeof(why)));
	CHECK(!recurrence_check_code(c, "qr.other.example/x", why, sizeof(why)));
	CHECK(strncmp(why, "its location (80.25) ", 21) == 0);
	rec_code(c, sizeof(c), "k@x.example", LOC, NULL);
	CHECK(!recurrence_check_code(c, LOC, why, sizeof(why)));
	CHECK_STR(why, "field 26 carries a Pix key (26.01): a recurrence's QR (JORNADA_2) asks no "
		       "payment now");
	rec_code(c, sizeof(c), NULL, LOC, "10.00");
	CHECK(!recurrence_check_code(c, LOC, why, sizeof(why)));
	CHECK_STR(why, "it has an amount (54): a recurrence's QR asks no payment");
	rec_code(c, sizeof(c), NULL, LOC, NULL);
	c[strlen(c) - 1] = c[strlen(c) - 1] == '0' ? '1' : '0';
	CHECK(!recurrence_check_code(c, LOC, why, sizeof(why)));
	CHECK(strncmp(why, "its CRC (63) is not ", 20) == 0);
	CHECK(!recurrence_check_code("000201", LOC, why, sizeof(why)));
	CHECK(!recurrence_check_code("", LOC, why, sizeof(why)));
}

static void test_answers(void)
{
	struct recurrence_input in;
	char err[512], idrec[RECURRENCE_IDREC_LEN + 1] = "untouched",
						    loc[RECURRENCE_LOCATION_MAX + 1];
	char c[512], answer[2048], *code = NULL;
	int64_t id = 0;
	const char *good =
	    "{\"idRec\":\"" IDREC "\",\"status\":\"CRIADA\",\"vinculo\":{\"contrato\":"
	    "\"C-1\",\"devedor\":{\"cpf\":\"52998224725\",\"nome\":\"Fulano\"}},"
	    "\"calendario\":{\"dataInicial\":\"2026-12-10\",\"periodicidade\":\"MENSAL\"},"
	    "\"politicaRetentativa\":\"NAO_PERMITE\",\"valor\":{\"valorRec\":\"99.90\"},"
	    "\"loc\":{\"id\":7}}";

	const char *locrec = "{\"id\":7,\"location\":\"" LOC "\"}";
	const char *noqr = "{\"idRec\":\"" IDREC "\"}";

	CHECK_INT(recurrence_read_locrec(locrec, strlen(locrec), &id, loc, err, sizeof(err)), 0);
	CHECK_INT(id, 7);
	CHECK_STR(loc, LOC);
	CHECK_INT(recurrence_read_locrec("{\"location\":\"x\"}", 16, &id, loc, err, sizeof(err)),
		  RECURRENCE_REFUSED);
	CHECK_STR(err, "id: missing or not an integer");

	CHECK_INT(parse("\"amount\":9990", &in, err, sizeof(err)), 0);
	CHECK_INT(recurrence_read_rec(good, strlen(good), &in, 7, idrec, err, sizeof(err)), 0);
	CHECK_STR(idrec, IDREC);
	CHECK_INT(recurrence_read_rec(good, strlen(good), &in, 8, idrec, err, sizeof(err)),
		  RECURRENCE_REFUSED);
	CHECK_STR(err, "loc.id: not the location sent");
	in.amount = 100;
	CHECK_INT(recurrence_read_rec(good, strlen(good), &in, 7, idrec, err, sizeof(err)),
		  RECURRENCE_REFUSED);
	CHECK_STR(err, "valor.valorRec: 99.90, not the 1.00 asked");
	in.amount = 9990;
	in.retry = 1;
	CHECK_INT(recurrence_read_rec(good, strlen(good), &in, 7, idrec, err, sizeof(err)),
		  RECURRENCE_REFUSED);
	CHECK_STR(err,
		  "idRec: " IDREC " does not begin with RR, as a recurrence whose retry policy "
		  "is PERMITE_3R_7D");
	recurrence_input_deinit(&in);

	rec_code(c, sizeof(c), NULL, LOC, NULL);
	snprintf(answer, sizeof(answer),
		 "{\"idRec\":\"" IDREC
		 "\",\"dadosQR\":{\"jornada\":\"JORNADA_2\",\"pixCopiaECola\":"
		 "\"%s\"}}",
		 c);
	CHECK_INT(recurrence_read_qr(answer, strlen(answer), IDREC, LOC, &code, err, sizeof(err)),
		  0);
	CHECK_STR(code, c);
	free(code);
	CHECK_INT(recurrence_read_qr(noqr, strlen(noqr), IDREC, LOC, &code, err, sizeof(err)),
		  RECURRENCE_REFUSED);
	CHECK_STR(err, "dadosQR.jornada: not JORNADA_2");
}

static void test_callback(void)
{
	struct recurrence_batch b;
	char err[256];
	const char *body =
	    "{\"recs\":[{\"idRec\":\"" IDREC "\",\"status\":\"CANCELADA\",\"atualizacao\":["
	    "{\"status\":\"CRIADA\",\"data\":\"2026-12-02T10:00:00Z\"},{\"status\":\"CANCELADA\","
	    "\"data\":\"2026-12-03T10:00:00Z\"}],\"encerramento\":{\"cancelamento\":{"
	    "\"solicitante\":"
	    "\"USUARIO_PAGADOR\",\"codigo\":\"ACCL\",\"descricao\":\"Cancelada\"}}},"
	    "{\"idRec\":\"x\",\"status\":\"CRIADA\",\"atualizacao\":[]},"
	    "{\"idRec\":\"" IDREC "\",\"status\":\"PAGA\",\"atualizacao\":[]}]}";

	CHECK(recurrence_is_callback(body, strlen(body)));
	CHECK(recurrence_is_callback(" { \"recs\": []}", 15));
	CHECK(!recurrence_is_callback("{\"pix\":[]}", 10));
	CHECK_INT(recurrence_parse_notification(body, strlen(body), &b, err, sizeof(err)),
		  RECURRENCE_PARSE_OK);
	CHECK_INT((int)b.n, 1);
	CHECK_INT(b.items[0].status, RECURRENCE_CANCELLED);
	CHECK_STR(b.items[0].at, "2026-12-03T10:00:00Z");
	CHECK_STR(b.items[0].code, "ACCL");
	CHECK_STR(b.items[0].by, "USUARIO_PAGADOR");
	CHECK_INT((int)b.nrefused, 2);
	CHECK_STR(b.refused[0], "recs[1]: idRec: missing or not 29 letters and digits");
	CHECK_STR(b.refused[1], "recs[2]: status: missing or not CRIADA, APROVADA, REJEITADA, "
				"EXPIRADA or CANCELADA");
	recurrence_batch_deinit(&b);
	CHECK_INT(recurrence_parse_notification("{\"pix\":[]}", 10, &b, err, sizeof(err)),
		  RECURRENCE_PARSE_BAD);
	CHECK_STR(err, "recs: missing or not an array (the body is {\"recs\": [...]})");
}

int main(void)
{
	test_parse();
	test_code();
	test_answers();
	test_callback();
	return check_finish("recurrence");
}
