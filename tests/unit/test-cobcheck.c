/* Unit tests of cobcheck: a bank's answer to PUT /cob/{txid} taken only
 * when it is the charge that was asked: each refusal's reason, and the
 * answers that pass (with and without field 54, location or loc, a txid
 * of a PSP's own in 62.05). */
#include "check.h"

#include "pixrelay/pix/brcode.h"
#include "pixrelay/pix/cobcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TXID "01HZY8K3M4N5P6Q7R8S9T0V1WX"
#define KEY "pagamentos@loja.example"
#define LOC "qr.banco.example/qr/v2/cob/9d36b84fc70b478fb95c12729b90ca25"

static const struct cobcheck_asked asked = {TXID, KEY, 1000, 3600, NULL};

static void tlv(char *out, size_t size, const char *id, const char *v)
{
	size_t n = strlen(out);

	snprintf(out + n, size - n, "%s%02zu%s", id, strlen(v), v);
}

/* A BR Code: field 26 with key (26.01) and/or loc (26.25), amount (54)
 * unless NULL, 62.05 = ref; the CRC right unless crc_off. */
static void code(char *out, size_t size, const char *key, const char *loc, const char *amount,
		 const char *ref)
{
	char acc[128] = "", extra[64] = "";

	out[0] = '\0';
	tlv(acc, sizeof(acc), "00", "br.gov.bcb.pix");
	if (key)
		tlv(acc, sizeof(acc), "01", key);
	if (loc)
		tlv(acc, sizeof(acc), "25", loc);
	tlv(extra, sizeof(extra), "05", ref);
	tlv(out, size, "00", "01");
	tlv(out, size, "01", "12");
	tlv(out, size, "26", acc);
	tlv(out, size, "52", "0000");
	tlv(out, size, "53", "986");
	if (amount)
		tlv(out, size, "54", amount);
	tlv(out, size, "58", "BR");
	tlv(out, size, "59", "LOJA");
	tlv(out, size, "60", "SAO PAULO");
	tlv(out, size, "62", extra);
	strcat(out, "6304");
	snprintf(out + strlen(out), size - strlen(out), "%04X", brcode_crc16(out, strlen(out)));
}

/* A CobGerada with the given parts; `loc_json` is the whole "loc" member
 * or "" (none), `more` more members or "". */
static char *answer(const char *brcode, const char *txid, const char *chave, const char *valor,
		    const char *exp, const char *loc_json, const char *more)
{
	char *out = malloc(4096);

	snprintf(out, 4096,
		 "{\"calendario\":{\"criacao\":\"2026-01-01T00:00:00Z\",\"expiracao\":%s},"
		 "\"txid\":\"%s\",\"revisao\":0,%s\"status\":\"ATIVA\","
		 "\"valor\":{\"original\":\"%s\"},\"chave\":\"%s\",%s"
		 "\"pixCopiaECola\":\"%s\"}",
		 exp, txid, loc_json, valor, chave, more, brcode);
	return out;
}

#define LOC_MEMBER "\"loc\":{\"id\":7,\"location\":\"" LOC "\",\"tipoCob\":\"cob\"},"
#define LOCS LOC_MEMBER "\"location\":\"" LOC "\","

static int check(const char *body, char **got, char *why, size_t whylen)
{
	why[0] = '\0';
	return cobcheck_answer(&asked, body, strlen(body), got, why, whylen);
}

static void expect_ok(const char *body, const char *want_code, int line)
{
	char why[256], *got = NULL;
	int rc = check(body, &got, why, sizeof(why));

	if (rc != 0)
		fprintf(stderr, "line %d: refused: %s\n", line, why);
	CHECK_INT(rc, 0);
	CHECK_STR(got, want_code);
	free(got);
}

static void expect_refused(const char *body, const char *want, int line)
{
	char why[256], *got = (char *)"untouched";
	int rc = check(body, &got, why, sizeof(why));

	if (rc != COBCHECK_REFUSED || strcmp(why, want) != 0)
		fprintf(stderr, "line %d:\n", line);
	CHECK_INT(rc, COBCHECK_REFUSED);
	CHECK_STR(why, want);
	CHECK_STR(got, "untouched");
}

#define OK(body, c) expect_ok((body), (c), __LINE__)
#define REFUSED(body, why) expect_refused((body), (why), __LINE__)

static void test_good(void)
{
	char c[512], *a;

	code(c, sizeof(c), NULL, LOC, "10.00", "***");
	a = answer(c, TXID, KEY, "10.00", "3600", LOCS, "");
	OK(a, c);
	free(a);
	/* no amount in the code; location only, loc only, neither */
	code(c, sizeof(c), NULL, LOC, NULL, "***");
	a = answer(c, TXID, KEY, "10.00", "3600", "\"location\":\"" LOC "\",", "");
	OK(a, c);
	free(a);
	a = answer(c, TXID, KEY, "10.00", "3600", "\"loc\":{\"location\":\"https://" LOC "\"},",
		   "");
	OK(a, c);
	free(a);
	a = answer(c, TXID, KEY, "10.00", "3600", "", "");
	OK(a, c);
	free(a);
	/* the bank writes the key in lower case: the same key */
	a = answer(c, TXID, "PAGAMENTOS@Loja.Example", "10.00", "3600", "", "");
	OK(a, c);
	free(a);
	/* "10.0" and "10" are the same amount in field 54; a PSP's own txid in
	 * 62.05 is not judged */
	code(c, sizeof(c), NULL, LOC, "10", "d983a07836cf48ed9a65764d3");
	a = answer(c, TXID, KEY, "10.00", "3600", LOCS, "\"devedor\":{\"cpf\":\"12345678909\"},");
	OK(a, c);
	free(a);
}

static void test_the_code(void)
{
	char c[512], *a;

	/* another key: 26.01 (field 26 holds at most 99 characters) */
	code(c, sizeof(c), "k@fraude.io", "qr.banco.example/qr/v2/cob/9d36b84fc70b", "10.00",
	     "***");
	a = answer(c, TXID, KEY, "10.00", "3600", LOCS, "");
	REFUSED(a, "pixCopiaECola: it carries a Pix key (26.01); a charge's code carries only "
		   "its location");
	free(a);
	/* a static code of the merchant's own key is no charge's either */
	code(c, sizeof(c), KEY, NULL, "10.00", "***");
	a = answer(c, TXID, KEY, "10.00", "3600", LOCS, "");
	REFUSED(a, "pixCopiaECola: it carries a Pix key (26.01); a charge's code carries only "
		   "its location");
	free(a);
	/* R$ 0,01 */
	code(c, sizeof(c), NULL, LOC, "0.01", "***");
	a = answer(c, TXID, KEY, "10.00", "3600", LOCS, "");
	REFUSED(a, "pixCopiaECola: its amount (54) is 0.01, the charge's 10.00");
	free(a);
	/* another location than the cob's */
	code(c, sizeof(c), NULL, "qr.fraude.example/qr/v2/x", "10.00", "***");
	a = answer(c, TXID, KEY, "10.00", "3600", LOCS, "");
	REFUSED(a, "pixCopiaECola: its location (26.25) qr.fraude.example/qr/v2/x is not the "
		   "cob's loc.location " LOC);
	free(a);
	a = answer(c, TXID, KEY, "10.00", "3600", "\"location\":\"" LOC "\",", "");
	REFUSED(a, "pixCopiaECola: its location (26.25) qr.fraude.example/qr/v2/x is not the "
		   "cob's location " LOC);
	free(a);
	a = answer(c, TXID, KEY, "10.00", "3600", "\"location\":7,", "");
	REFUSED(a, "location: not a string");
	free(a);
	/* not a BR Code; none */
	a = answer("000201", TXID, KEY, "10.00", "3600", LOCS, "");
	REFUSED(a, "pixCopiaECola: the code must end with field 63 (CRC), not 00");
	free(a);
	code(c, sizeof(c), NULL, LOC, "10.00", "***");
	c[strlen(c) - 1] = c[strlen(c) - 1] == '0' ? '1' : '0';
	a = answer(c, TXID, KEY, "10.00", "3600", LOCS, "");
	CHECK_INT(check(a, &(char *){NULL}, (char[256]){0}, 256), COBCHECK_REFUSED);
	free(a);
	REFUSED("{\"txid\":\"" TXID "\"}", "pixCopiaECola: missing");
	REFUSED("{\"pixCopiaECola\":7}", "pixCopiaECola: missing");
	REFUSED("[1]", "the answer: not a JSON object");
	REFUSED("", "the answer: not a JSON object");
	REFUSED("{\"pixCopiaECola\":", "the answer: not a JSON object");
}

static void test_the_cob(void)
{
	char c[512], *a;

	code(c, sizeof(c), NULL, LOC, "10.00", "***");
	a = answer(c, "01HZY8K3M4N5P6Q7R8S9T0V1WY", KEY, "10.00", "3600", LOCS, "");
	REFUSED(a, "txid: 01HZY8K3M4N5P6Q7R8S9T0V1WY, not the charge's " TXID);
	free(a);
	a = answer(c, TXID, "outra@fraude.example", "10.00", "3600", LOCS, "");
	REFUSED(a, "chave: not the connection's Pix key");
	free(a);
	a = answer(c, TXID, KEY, "0.01", "3600", LOCS, "");
	REFUSED(a, "valor.original: 0.01, not the charge's 10.00");
	free(a);
	a = answer(c, TXID, KEY, "10", "3600", LOCS, "");
	REFUSED(a, "valor.original: missing or not an amount");
	free(a);
	a = answer(c, TXID, KEY, "10.00", "60", LOCS, "");
	REFUSED(a, "calendario.expiracao: 60, not the charge's 3600");
	free(a);
	a = answer(c, TXID, KEY, "10.00", "\"3600\"", LOCS, "");
	REFUSED(a, "calendario.expiracao: missing or not an integer");
	free(a);
	REFUSED("{\"pixCopiaECola\":\"x\"}",
		"pixCopiaECola: offset 0: 1 character(s) left, too few for an ID and a length");
	/* a txid quoted back is cut and made printable */
	a = answer(c, "a\\u0001bcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnop",
		   KEY, "10.00", "3600", LOCS, "");
	REFUSED(a, "txid: a?bcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk, "
		   "not the charge's " TXID);
	free(a);
}

/* The reason always fits the buffer given, cut and NUL-terminated. */
static void test_small_buffer(void)
{
	char c[512], why[16], *a, *got = NULL;

	code(c, sizeof(c), NULL, LOC, "0.01", "***");
	a = answer(c, TXID, KEY, "10.00", "3600", LOCS, "");
	CHECK_INT(cobcheck_answer(&asked, a, strlen(a), &got, why, sizeof(why)), COBCHECK_REFUSED);
	CHECK_STR(why, "pixCopiaECola: ");
	CHECK(got == NULL);
	free(a);
}

/* A CobVGerada: the calendario and valor given whole. */
static char *answer_v(const char *brcode, const char *cal, const char *valor, const char *tipo)
{
	char *out = malloc(4096);

	snprintf(out, 4096,
		 "{\"calendario\":{\"criacao\":\"2026-01-01T00:00:00Z\",%s},\"txid\":\"" TXID
		 "\",\"revisao\":0,\"loc\":{\"id\":7,\"location\":\"" LOC
		 "\",\"tipoCob\":\"%s\"},\"location\":\"" LOC
		 "\",\"status\":\"ATIVA\",\"valor\":%s,\"chave\":\"" KEY
		 "\",\"pixCopiaECola\":\"%s\"}",
		 cal, tipo, valor, brcode);
	return out;
}

static void expect_v(const char *body, const char *want_why, int line)
{
	static const struct charge_due due = {"2026-12-10", 30, 200, 100, 500, "2026-12-05"};
	static const struct cobcheck_asked asked_v = {TXID, KEY, 1000, 0, &due};
	char why[256] = "", *got = NULL;
	int rc = cobcheck_answer(&asked_v, body, strlen(body), &got, why, sizeof(why));

	if (want_why ? strcmp(why, want_why) != 0 : rc != 0)
		fprintf(stderr, "line %d: %s\n", line, why);
	CHECK_INT(rc, want_why ? COBCHECK_REFUSED : 0);
	CHECK_STR(why, want_why ? want_why : "");
	free(got);
}

#define CAL "\"dataDeVencimento\":\"2026-12-10\",\"validadeAposVencimento\":30"
#define VALOR_V                                                                                    \
	"{\"original\":\"10.00\",\"multa\":{\"modalidade\":2,\"valorPerc\":\"2.00\"},"             \
	"\"juros\":{\"modalidade\":3,\"valorPerc\":\"1.00\"},\"desconto\":{\"modalidade\":1,"      \
	"\"descontoDataFixa\":[{\"data\":\"2026-12-05\",\"valorPerc\":\"5.00\"}]}}"

/* A cobv's answer: no amount compared in the code, its calendario and
 * terms as sent. */
static void test_cobv(void)
{
	char c[512], *a;

	code(c, sizeof(c), NULL, LOC, NULL, "***");
	a = answer_v(c, CAL, VALOR_V, "cobv");
	expect_v(a, NULL, __LINE__);
	free(a);
	/* an amount in field 54 is not the amount due of any one day: not compared */
	code(c, sizeof(c), NULL, LOC, "9.50", "***");
	a = answer_v(c, CAL, VALOR_V, "cobv");
	expect_v(a, NULL, __LINE__);
	free(a);
	code(c, sizeof(c), NULL, LOC, NULL, "***");
	a = answer_v(c, CAL, VALOR_V, "cob");
	expect_v(a, "loc.tipoCob: not cobv", __LINE__);
	free(a);
	a = answer_v(c, "\"dataDeVencimento\":\"2026-12-11\",\"validadeAposVencimento\":30",
		     VALOR_V, "cobv");
	expect_v(a, "calendario.dataDeVencimento: 2026-12-11, not the charge's 2026-12-10",
		 __LINE__);
	free(a);
	a = answer_v(c, "\"dataDeVencimento\":\"2026-12-10\"", VALOR_V, "cobv");
	expect_v(a, "calendario.validadeAposVencimento: missing or not the charge's 30", __LINE__);
	free(a);
	a = answer_v(c, CAL,
		     "{\"original\":\"10.00\",\"juros\":{\"modalidade\":3,\"valorPerc\":\"1.00\"}}",
		     "cobv");
	expect_v(a, "valor.multa: missing, not the charge's 2.00", __LINE__);
	free(a);
	a = answer_v(c, CAL,
		     "{\"original\":\"10.00\",\"multa\":{\"modalidade\":1,\"valorPerc\":\"2.00\"}}",
		     "cobv");
	expect_v(a, "valor.multa.modalidade: not 2", __LINE__);
	free(a);
	a = answer_v(c, CAL,
		     "{\"original\":\"10.00\",\"multa\":{\"modalidade\":2,\"valorPerc\":\"2.00\"},"
		     "\"juros\":{\"modalidade\":3,\"valorPerc\":\"1.00\"}}",
		     "cobv");
	expect_v(a, "valor.desconto: not the charge's", __LINE__);
	free(a);
	a = answer_v(c, CAL, "{\"original\":\"9.00\"}", "cobv");
	expect_v(a, "valor.original: 9.00, not the charge's 10.00", __LINE__);
	free(a);
}

int main(void)
{
	test_cobv();
	test_good();
	test_the_code();
	test_the_cob();
	test_small_buffer();
	return check_finish("cobcheck");
}
