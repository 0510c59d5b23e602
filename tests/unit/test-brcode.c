/* Unit tests for brcode: CRC, ASCII folding, encoding and strict decoding,
 * against the vectors of shared/reference/pix-facts.md. */
#include "pixrelay/pix/brcode.h"
#include "pixrelay/core/json.h"
#include "check.h"

#include <stdlib.h>

static const char *const vec1 =
    "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-42665544000052040000530398658"
    "02BR5913Fulano de Tal6008BRASILIA62070503***63041D3D";
static const char *const vec2 =
    "00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986540566.665802BR5907EMPRESA"
    "6008BRASILIA62070503***630404ED";
static const char *const vec3 =
    "00020101021226770014BR.GOV.BCB.PIX2555pix.example.com/qr/93598be0-1bd0-4997-8318-81776a"
    "1d8a995204000053039865802BR5907EMPRESA6009SAO PAULO62070503***6304EEAB";
static const char *const vec4 =
    "00020101021226980014br.gov.bcb.pix2576api.woovi-sandbox.com/api/testaccount/qr/v1/d983a0"
    "7836cf48ed9a65764d3c18427352040000530398654040.015802BR5921Lucas_Aprigio_Sandbox6009Sao_"
    "Paulo62290525d983a07836cf48ed9a65764d363046759";
/* right CRC, but field 62 claims 8 characters while holding 7 */
static const char *const vec_lie =
    "00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986540566.665802BR5907EMPRESA"
    "6008BRASILIA62080503***6304170E";

/* A slice as a string (in one of a few static buffers), NULL when absent. */
static const char *sl(struct brcode_slice s)
{
	static char bufs[4][128];
	static int next;
	char *b;

	if (!s.ptr)
		return NULL;
	b = bufs[next++ % 4];
	snprintf(b, sizeof(bufs[0]), "%.*s", (int)s.len, s.ptr);
	return b;
}

/* body + "6304" + its CRC, in a static buffer */
static const char *with_crc(const char *body)
{
	static char buf[600];
	size_t n;

	snprintf(buf, sizeof(buf), "%s6304", body);
	n = strlen(buf);
	snprintf(buf + n, sizeof(buf) - n, "%04X", brcode_crc16(buf, n));
	return buf;
}

/* Decode to JSON; the JSON text (caller frees) or NULL with err filled. */
static char *decode_json(const char *code, char *err, size_t errlen)
{
	yajl_gen g = json_gen_new();
	char *text = NULL;
	const char *buf;
	size_t len;

	err[0] = '\0';
	if (brcode_decode_json(code, g, err, errlen) == 0) {
		buf = json_buf(g, &len);
		text = malloc(len + 1);
		memcpy(text, buf, len);
		text[len] = '\0';
	} else {
		json_buf(g, &len);
		CHECK_INT(len, 0); /* nothing written on failure */
	}
	yajl_gen_free(g);
	return text;
}

/* Expect code refused with exactly msg. */
static void refuse(const char *code, const char *msg, int line)
{
	struct brcode_decoded d;
	char err[256] = "";
	char *json;

	if (brcode_decode(code, &d, err, sizeof(err)) == 0) {
		check_count++;
		check_failures++;
		fprintf(stderr, "line %d: accepted \"%s\"\n", line, code);
		return;
	}
	if (msg && strcmp(err, msg) != 0) {
		fprintf(stderr, "line %d:\n", line);
		CHECK_STR(err, msg);
	}
	json = decode_json(code, err, sizeof(err));
	CHECK(json == NULL);
	CHECK(err[0] != '\0');
	free(json);
}
#define REFUSE(code, msg) refuse((code), (msg), __LINE__)

static void test_crc(void)
{
	const char *p;

	CHECK_INT(brcode_crc16("123456789", 9), 0x29B1);
	CHECK_INT(brcode_crc16("", 0), 0xFFFF);
	p = strstr(vec2, "6304");
	CHECK_INT(brcode_crc16(vec2, (size_t)(p + 4 - vec2)), 0x04ED);
	p = strstr(vec1, "6304");
	CHECK_INT(brcode_crc16(vec1, (size_t)(p + 4 - vec1)), 0x1D3D);
}

static void test_decode_valid(void)
{
	struct brcode_decoded d;
	char err[256] = "";
	char *json;

	CHECK_INT(brcode_decode(vec1, &d, err, sizeof(err)), 0);
	CHECK_STR(err, "");
	CHECK_STR(sl(d.payload_format), "01");
	CHECK(d.point_of_initiation.ptr == NULL);
	CHECK_STR(sl(d.gui), "br.gov.bcb.pix");
	CHECK_STR(sl(d.pix_key), "123e4567-e12b-12d1-a456-426655440000");
	CHECK(d.description.ptr == NULL);
	CHECK(d.location.ptr == NULL);
	CHECK(d.amount.ptr == NULL);
	CHECK_INT(d.amount_cents, -1);
	CHECK_STR(sl(d.merchant_name), "Fulano de Tal");
	CHECK_STR(sl(d.merchant_city), "BRASILIA");
	CHECK(d.txid.ptr == NULL);
	CHECK_INT(d.crc, 0x1D3D);
	CHECK_INT(d.nfields, 9);

	CHECK_INT(brcode_decode(vec2, &d, err, sizeof(err)), 0);
	CHECK_STR(sl(d.pix_key), "+5511943214321");
	CHECK_STR(sl(d.amount), "66.66");
	CHECK_INT(d.amount_cents, 6666);
	CHECK_STR(sl(d.merchant_name), "EMPRESA");
	CHECK_INT(d.crc, 0x04ED);

	CHECK_INT(brcode_decode(vec3, &d, err, sizeof(err)), 0);
	CHECK_STR(sl(d.point_of_initiation), "12");
	CHECK(d.pix_key.ptr == NULL);
	CHECK_STR(sl(d.location), "pix.example.com/qr/93598be0-1bd0-4997-8318-81776a1d8a99");
	CHECK_STR(sl(d.merchant_city), "SAO PAULO");
	CHECK_INT(d.crc, 0xEEAB);

	CHECK_INT(brcode_decode(vec4, &d, err, sizeof(err)), 0);
	CHECK_STR(sl(d.gui), "br.gov.bcb.pix");
	CHECK_STR(sl(d.location),
		  "api.woovi-sandbox.com/api/testaccount/qr/v1/d983a07836cf48ed9a65764d3c184273");
	CHECK_INT(d.amount_cents, 1);
	CHECK_STR(sl(d.merchant_name), "Lucas_Aprigio_Sandbox");
	CHECK_STR(sl(d.merchant_city), "Sao_Paulo");
	CHECK_STR(sl(d.txid), "d983a07836cf48ed9a65764d3");
	CHECK_INT(d.crc, 0x6759);

	/* the whole JSON of vector 2; the CRC keeps its leading zero */
	json = decode_json(vec2, err, sizeof(err));
	CHECK_STR(json,
		  "{\"payloadFormat\":\"01\",\"pointOfInitiation\":null,\"merchantAccount\":{"
		  "\"gui\":\"BR.GOV.BCB.PIX\",\"key\":\"+5511943214321\",\"description\":null,"
		  "\"url\":null},\"mcc\":\"0000\",\"currency\":\"986\",\"amount\":\"66.66\","
		  "\"amountCents\":6666,\"country\":\"BR\",\"merchantName\":\"EMPRESA\","
		  "\"merchantCity\":\"BRASILIA\",\"txid\":null,\"crc\":\"04ED\",\"fields\":["
		  "{\"id\":\"00\",\"value\":\"01\"},"
		  "{\"id\":\"26\",\"value\":\"0014BR.GOV.BCB.PIX0114+5511943214321\"},"
		  "{\"id\":\"52\",\"value\":\"0000\"},{\"id\":\"53\",\"value\":\"986\"},"
		  "{\"id\":\"54\",\"value\":\"66.66\"},{\"id\":\"58\",\"value\":\"BR\"},"
		  "{\"id\":\"59\",\"value\":\"EMPRESA\"},{\"id\":\"60\",\"value\":\"BRASILIA\"},"
		  "{\"id\":\"62\",\"value\":\"0503***\"},{\"id\":\"63\",\"value\":\"04ED\"}]}");
	free(json);

	json = decode_json(vec4, err, sizeof(err));
	CHECK(json && strstr(json, "\"pointOfInitiation\":\"12\""));
	CHECK(json && strstr(json, "\"key\":null"));
	CHECK(json && strstr(json, "\"amount\":\"0.01\",\"amountCents\":1,"));
	CHECK(json && strstr(json, "\"txid\":\"d983a07836cf48ed9a65764d3\""));
	CHECK(json && strstr(json, "\"crc\":\"6759\""));
	free(json);
}

/* Every single-character change before the CRC value is refused, and so is
 * every change to the CRC itself. */
static void test_one_char_changed(void)
{
	const char *const vecs[] = {vec1, vec2, vec3, vec4};

	for (size_t v = 0; v < 4; v++) {
		char code[600];
		size_t len = strlen(vecs[v]);
		int accepted = 0, tried = 0;

		for (size_t i = 0; i < len; i++) {
			const char subs[] = {'0', '1', '9', 'A', 'a', '*', ' '};
			for (size_t k = 0; k < sizeof(subs); k++) {
				struct brcode_decoded d;
				char err[256] = "";

				if (vecs[v][i] == subs[k])
					continue;
				memcpy(code, vecs[v], len + 1);
				code[i] = subs[k];
				tried++;
				if (brcode_decode(code, &d, err, sizeof(err)) == 0) {
					accepted++;
					fprintf(stderr, "accepted: %s\n", code);
				} else if (!err[0]) {
					accepted++;
					fprintf(stderr, "no message for: %s\n", code);
				}
			}
		}
		CHECK(tried > 700);
		CHECK_INT(accepted, 0);
	}
	/* the exact message for a plain change of the name */
	REFUSE("00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986540566.665802BR5907E"
	       "MPRESO6008BRASILIA62070503***630404ED",
	       "field 63 (CRC) is 04ED but the code's CRC is EB14");
}

static void test_decode_invalid(void)
{
	char code[600];
	size_t len;

	/* the field-62 length lie: the reader runs into "304170E" */
	REFUSE(vec_lie, "field 30 at offset 111: length 41 runs past the end (3 characters left)");
	/* lengths that run past the end */
	REFUSE("00020126580014br.gov.bcb.pix01",
	       "field 26 at offset 6: length 58 runs past the end (20 characters left)");
	REFUSE(with_crc("0002012699"),
	       "field 26 at offset 6: length 99 runs past the end (8 characters left)");
	/* a CRC of 3 digits, written as 04 and as 03 */
	len = strlen(vec2);
	memcpy(code, vec2, len - 1);
	code[len - 1] = '\0';
	REFUSE(code, "field 63 at offset 110: length 04 runs past the end (3 characters left)");
	snprintf(code, sizeof(code), "%.*s63034ED", (int)(len - 8), vec2);
	REFUSE(code, "field 63 (CRC) \"4ED\" is not 4 uppercase hex digits");
	/* lower-case hex */
	snprintf(code, sizeof(code), "%.*s04ed", (int)(len - 4), vec2);
	REFUSE(code, "field 63 (CRC) \"04ed\" is not 4 uppercase hex digits");
	/* truncated anywhere */
	for (size_t cut = 0; cut < len; cut++) {
		memcpy(code, vec2, cut);
		code[cut] = '\0';
		REFUSE(code, NULL);
	}
	REFUSE("", "the code is empty");
	/* something after the CRC */
	snprintf(code, sizeof(code), "%s0", vec1);
	REFUSE(code, "offset 137: 1 character(s) left, too few for an ID and a length");
	snprintf(code, sizeof(code), "%s99020X", vec1);
	REFUSE(code, "the code must end with field 63 (CRC), not 99");
	REFUSE("6304ABCD", "the code must start with field 00 (payload format), not 63");

	/* rules checked after a good CRC */
	REFUSE(with_crc("00020226360014BR.GOV.BCB.PIX0114+55119432143215204000053039865802BR5907"
			"EMPRESA6008BRASILIA"),
	       "field 00 (payload format) is \"02\", not \"01\"");
	REFUSE(with_crc("520400000002012636..."), NULL);
	REFUSE(with_crc("00020101021326360014BR.GOV.BCB.PIX0114+55119432143215204000053039865802"
			"BR5907EMPRESA6008BRASILIA"),
	       "field 01 (point of initiation) is \"13\", not 11 or 12");
	REFUSE(with_crc("00020126360014BR.GOV.BCB.PAX0114+55119432143215204000053039865802BR5907"
			"EMPRESA6008BRASILIA"),
	       "field 26.00 (GUI) is \"BR.GOV.BCB.PAX\", not \"br.gov.bcb.pix\"");
	REFUSE(with_crc("00020126180114+5511943214321520400005303986"
			"5802BR5907EMPRESA6008BRASILIA"),
	       "field 26.00 (GUI) is missing");
	REFUSE(with_crc("00020126180014BR.GOV.BCB.PIX5204000053039865802BR5907EMPRESA6008BRASILIA"),
	       "field 26 holds neither a Pix key (01) nor a location (25)");
	REFUSE(with_crc("00020126360014BR.GOV.BCB.PIX0115+5511943214321520400005303986"
			"5802BR5907EMPRESA6008BRASILIA"),
	       "field 26.01 at offset 28: length 15 runs past the end (14 characters left)");
	REFUSE(with_crc("0002015204000053039865802BR5907EMPRESA6008BRASILIA"),
	       "field 26 (merchant account) is missing");
	REFUSE(with_crc("00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986"
			"5802BR6008BRASILIA"),
	       "field 59 (merchant name) is missing");
	REFUSE(with_crc("00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986"
			"5802BR5907EMPRESA"),
	       "field 60 (merchant city) is missing");
	REFUSE(with_crc("00020126360014BR.GOV.BCB.PIX0114+55119432143215303986"
			"5802BR5907EMPRESA6008BRASILIA"),
	       "field 52 (merchant category code) is missing");
	REFUSE(with_crc("00020126360014BR.GOV.BCB.PIX0114+55119432143215204000053038405802BR5907"
			"EMPRESA6008BRASILIA"),
	       "field 53 (currency) is \"840\", not 986 (BRL)");
	REFUSE(with_crc("00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986"
			"5802BR5907EMPRESA5907EMPRESA6008BRASILIA"),
	       "field 59 appears more than once");
	REFUSE(with_crc("00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986"
			"5802BR5926ABCDEFGHIJKLMNOPQRSTUVWXYZ6008BRASILIA"),
	       "field 59 (merchant name) has 26 characters, over 25");
	REFUSE(with_crc("00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986"
			"5802BR5907EMPRESA6016BRASILIABRASILIA"),
	       "field 60 (merchant city) has 16 characters, over 15");
	REFUSE(with_crc("00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986"
			"5802BR5907EMPRESA6008BRASILIA62070503a-b"),
	       "field 62.05 (txid) \"a-b\" is not \"***\" nor 1 to 25 letters or digits");
	REFUSE(with_crc("00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986"
			"5802BR5907EMPRESA6008BRASILIA6200"),
	       "field 62 at offset 90: length 00, a field cannot be empty");
	REFUSE(with_crc("00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986"
			"5802BR5907EMPRESA6008BRAS\xC3\x8DLIA"),
	       "byte 0xC3 at offset 86 is not a printable ASCII character");
	REFUSE(with_crc("000201263A0014BR.GOV.BCB.PIX"),
	       "field 26 at offset 6: length \"3A\" is not 2 digits");
}

static void test_amounts(void)
{
	static const struct {
		const char *text;
		long long cents;
		const char *json;
	} good[] = {
	    {"100", 10000, "\"amount\":\"100.00\",\"amountCents\":10000,"},
	    {"0.9", 90, "\"amount\":\"0.90\",\"amountCents\":90,"},
	    {"66.66", 6666, "\"amount\":\"66.66\",\"amountCents\":6666,"},
	    {"0.01", 1, "\"amount\":\"0.01\",\"amountCents\":1,"},
	    {"9999999999.99", 999999999999LL, "\"amountCents\":999999999999,"},
	};
	static const char *const bad[] = {"1.",	 ".5", "1.234", "1,00",		  "-1",
					  "1e3", "+1", "1.2.3", "99999999999.99", " 1"};
	char body[300], err[256];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct brcode_decoded d;
		char *json;

		snprintf(body, sizeof(body),
			 "00020126360014BR.GOV.BCB.PIX0114+55119432143215204000053039865"
			 "4%02zu%s5802BR5907EMPRESA6008BRASILIA",
			 strlen(good[i].text), good[i].text);
		CHECK_INT(brcode_decode(with_crc(body), &d, err, sizeof(err)), 0);
		CHECK_INT(d.amount_cents, good[i].cents);
		json = decode_json(with_crc(body), err, sizeof(err));
		CHECK(json && strstr(json, good[i].json));
		free(json);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char msg[256];

		snprintf(body, sizeof(body),
			 "00020126360014BR.GOV.BCB.PIX0114+55119432143215204000053039865"
			 "4%02zu%s5802BR5907EMPRESA6008BRASILIA",
			 strlen(bad[i]), bad[i]);
		snprintf(msg, sizeof(msg),
			 "field 54 (amount) \"%s\" is not digits with an optional dot and 1 or 2 "
			 "decimals, at most 13 characters",
			 bad[i]);
		REFUSE(with_crc(body), msg);
	}
}

static void test_fold(void)
{
	char out[64];

	brcode_fold_ascii("S\xC3\xA3o Paulo", 25, out, sizeof(out));
	CHECK_STR(out, "Sao Paulo");
	brcode_fold_ascii("A\xC3\xA7\xC3\xA3o \xC3\x91\x61nd\xC3\xBA", 25, out, sizeof(out));
	CHECK_STR(out, "Acao Nandu");
	brcode_fold_ascii("\xC3\x80\xC3\x89\xC3\x8E\xC3\x95\xC3\x9C\xC3\x87 \xC3\xA0\xC3\xA9\xC3"
			  "\xAE\xC3\xB5\xC3\xBC\xC3\xBF",
			  25, out, sizeof(out));
	CHECK_STR(out, "AEIOUC aeiouy");
	brcode_fold_ascii("Stra\xC3\x9F\x65 \xC3\x86sir", 25, out, sizeof(out));
	CHECK_STR(out, "Strasse AEsir");
	/* combining tilde (NFD) dropped; ordinal sign folded */
	brcode_fold_ascii("Sa\xCC\x83o N\xC2\xBA 5", 25, out, sizeof(out));
	CHECK_STR(out, "Sao No 5");
	/* controls, NBSP, runs of spaces, leading and trailing spaces */
	brcode_fold_ascii("  Jo\xC3\xA3o\t\n da\xC2\xA0 Silva\r ", 25, out, sizeof(out));
	CHECK_STR(out, "Joao da Silva");
	/* emoji and invalid UTF-8 (stray byte, overlong, surrogate, cut) dropped */
	brcode_fold_ascii("Caf\xC3\xA9 \xE2\x98\x95 Bar\xFF\xC0\xAF\xED\xA0\x80!\xC3", 25, out,
			  sizeof(out));
	CHECK_STR(out, "Cafe Bar!");
	brcode_fold_ascii(NULL, 25, out, sizeof(out));
	CHECK_STR(out, "");
	brcode_fold_ascii("\xE2\x98\x95", 25, out, sizeof(out));
	CHECK_STR(out, "");
	/* truncation to 25 and 15 characters */
	brcode_fold_ascii("Padaria e Confeitaria P\xC3\xA3o de A\xC3\xA7\xC3\xBA\x63\x61r", 25, out,
			  sizeof(out));
	CHECK_STR(out, "Padaria e Confeitaria Pao");
	brcode_fold_ascii("S\xC3\xA3o Jos\xC3\xA9 dos Campos", 15, out, sizeof(out));
	CHECK_STR(out, "Sao Jose dos Ca");
	/* no trailing space after a cut */
	brcode_fold_ascii("Rio de Janeiro Centro", 15, out, sizeof(out));
	CHECK_STR(out, "Rio de Janeiro");
	/* a multi-letter fold cut in half */
	brcode_fold_ascii("ab\xC3\x86", 3, out, sizeof(out));
	CHECK_STR(out, "abA");
	/* the buffer limits too */
	brcode_fold_ascii("S\xC3\xA3o Paulo", 25, out, 4);
	CHECK_STR(out, "Sao");
	memset(out, 'x', sizeof(out));
	brcode_fold_ascii("abc", 25, out, 0);
	CHECK_INT(out[0], 'x');
	brcode_fold_ascii("abc", 0, out, sizeof(out));
	CHECK_STR(out, "");
}

static void test_encode_vectors(void)
{
	struct brcode_input in = {
	    .pix_key = "123e4567-e12b-12d1-a456-426655440000",
	    .amount_cents = -1,
	    .merchant_name = "Fulano de Tal",
	    .merchant_city = "BRASILIA",
	};
	char out[BRCODE_ENCODE_BUF], err[256] = "";

	CHECK_INT(brcode_encode(&in, out, sizeof(out), err, sizeof(err)), 0);
	CHECK_STR(out, vec1);

	in = (struct brcode_input){
	    .gui = "BR.GOV.BCB.PIX",
	    .pix_key = "+5511943214321",
	    .amount_cents = 6666,
	    .merchant_name = "EMPRESA",
	    .merchant_city = "BRASILIA",
	};
	CHECK_INT(brcode_encode(&in, out, sizeof(out), err, sizeof(err)), 0);
	CHECK_STR(out, vec2); /* ends in 04ED: the leading zero is kept */
	CHECK_STR(out + strlen(out) - 8, "630404ED");

	/* default GUI is lower case; the out buffer needs exactly len + 1 */
	in.gui = NULL;
	CHECK_INT(brcode_encode(&in, out, sizeof(out), err, sizeof(err)), 0);
	CHECK_STR(out, "00020126360014br.gov.bcb.pix0114+5511943214321520400005303986540566.665802"
		       "BR5907EMPRESA6008BRASILIA62070503***630452B5");
	{
		char small[130];
		size_t need = strlen(out) + 1;

		memset(small, 'x', sizeof(small));
		CHECK_INT(brcode_encode(&in, small, need - 1, err, sizeof(err)), -1);
		CHECK_STR(err, "out has 118 bytes, the code needs 119");
		CHECK_INT(small[0], 'x');
		CHECK_INT(brcode_encode(&in, small, need, err, sizeof(err)), 0);
		CHECK_STR(small, out);
	}
}

static void round_trip(const struct brcode_input *in, const char *name, const char *city, int line)
{
	struct brcode_decoded d;
	char out[BRCODE_ENCODE_BUF], err[256] = "", amount[32];

	if (brcode_encode(in, out, sizeof(out), err, sizeof(err)) != 0) {
		fprintf(stderr, "line %d: encode failed: %s\n", line, err);
		CHECK(0);
		return;
	}
	if (brcode_decode(out, &d, err, sizeof(err)) != 0) {
		fprintf(stderr, "line %d: decode of %s failed: %s\n", line, out, err);
		CHECK(0);
		return;
	}
	CHECK_STR(sl(d.gui), in->gui ? in->gui : "br.gov.bcb.pix");
	CHECK_STR(sl(d.pix_key), in->pix_key);
	if (in->description && in->description[0])
		CHECK(d.description.ptr != NULL);
	else
		CHECK(d.description.ptr == NULL);
	if (in->location)
		CHECK_STR(sl(d.location), in->location);
	else
		CHECK(d.location.ptr == NULL);
	CHECK_INT(d.amount_cents, in->amount_cents < 0 ? -1 : in->amount_cents);
	if (in->amount_cents >= 0) {
		snprintf(amount, sizeof(amount), "%lld.%02lld", in->amount_cents / 100,
			 in->amount_cents % 100);
		CHECK_STR(sl(d.amount), amount);
	}
	CHECK_STR(sl(d.merchant_name), name);
	CHECK_STR(sl(d.merchant_city), city);
	if (in->txid)
		CHECK_STR(sl(d.txid), in->txid);
	else
		CHECK(d.txid.ptr == NULL);
	if (in->single_use)
		CHECK_STR(sl(d.point_of_initiation), "12");
	else
		CHECK(d.point_of_initiation.ptr == NULL);
	CHECK_STR(sl(d.currency), "986");
	CHECK_STR(sl(d.country), "BR");
	CHECK_STR(sl(d.mcc), "0000");
}

static void test_round_trips(void)
{
	struct brcode_input in = {
	    .pix_key = "pagamentos@example.com.br",
	    .amount_cents = -1,
	    .merchant_name = "Padaria P\xC3\xA3o de A\xC3\xA7\xC3\xBA\x63\x61r Ltda ME",
	    .merchant_city = "S\xC3\xA3o Jos\xC3\xA9 dos Campos",
	};
	struct brcode_decoded d;
	char out[BRCODE_ENCODE_BUF], err[256];

	round_trip(&in, "Padaria Pao de Acucar Ltd", "Sao Jose dos Ca", __LINE__);
	in.amount_cents = 0;
	round_trip(&in, "Padaria Pao de Acucar Ltd", "Sao Jose dos Ca", __LINE__);
	in.amount_cents = 123456;
	in.single_use = 1;
	in.txid = "01HZY8K3M4N5P6Q7R8S9T0V1W"; /* 25 characters */
	round_trip(&in, "Padaria Pao de Acucar Ltd", "Sao Jose dos Ca", __LINE__);
	in.description = "Pedido 42 \xE2\x80\x94 p\xC3\xA3o";
	round_trip(&in, "Padaria Pao de Acucar Ltd", "Sao Jose dos Ca", __LINE__);
	CHECK_INT(brcode_encode(&in, out, sizeof(out), err, sizeof(err)), 0);
	CHECK_INT(brcode_decode(out, &d, err, sizeof(err)), 0);
	CHECK_STR(sl(d.description), "Pedido 42 pao");
	CHECK_STR(sl(d.amount), "1234.56");
	in.description = "";
	in.location = "pix.example.com/qr/9d36b84f";
	in.single_use = 0;
	round_trip(&in, "Padaria Pao de Acucar Ltd", "Sao Jose dos Ca", __LINE__);
	in.gui = "Br.Gov.Bcb.Pix";
	in.txid = "a";
	in.amount_cents = 1;
	round_trip(&in, "Padaria Pao de Acucar Ltd", "Sao Jose dos Ca", __LINE__);
}

static void refuse_encode(const struct brcode_input *in, const char *msg, int line)
{
	char out[BRCODE_ENCODE_BUF], err[256] = "";

	memset(out, 'x', sizeof(out));
	if (brcode_encode(in, out, sizeof(out), err, sizeof(err)) == 0) {
		fprintf(stderr, "line %d: encoded %s\n", line, out);
		CHECK(0);
		return;
	}
	if (strcmp(err, msg) != 0)
		fprintf(stderr, "line %d:\n", line);
	CHECK_STR(err, msg);
	CHECK_INT(out[0], 'x');
}
#define REFUSE_ENCODE(in, msg) refuse_encode((in), (msg), __LINE__)

static void test_encode_refusals(void)
{
	const struct brcode_input base = {
	    .pix_key = "+5511943214321",
	    .amount_cents = 1000,
	    .merchant_name = "EMPRESA",
	    .merchant_city = "BRASILIA",
	};
	struct brcode_input in;
	char key78[79];

	in = base;
	in.txid = "abc-123";
	REFUSE_ENCODE(&in, "txid must be 1 to 25 ASCII letters or digits");
	in.txid = "01HZY8K3M4N5P6Q7R8S9T0V1WX"; /* 26 characters, a ULID */
	REFUSE_ENCODE(&in, "txid must be 1 to 25 ASCII letters or digits");
	in.txid = "";
	REFUSE_ENCODE(&in, "txid must be 1 to 25 ASCII letters or digits");
	in.txid = "p\xC3\xA3o";
	REFUSE_ENCODE(&in, "txid must be 1 to 25 ASCII letters or digits");
	in.txid = "***";
	REFUSE_ENCODE(&in, "txid must be 1 to 25 ASCII letters or digits");

	/* field 26: 18 (GUI) + 18 (key) + 4 + 60 = 100 */
	in = base;
	in.description = "012345678901234567890123456789012345678901234567890123456789";
	REFUSE_ENCODE(&in, "field 26 (merchant account) would have 100 characters, over 99");
	in.description = "01234567890123456789012345678901234567890123456789012345678";
	{
		char out[BRCODE_ENCODE_BUF], err[256];
		struct brcode_decoded d;

		CHECK_INT(brcode_encode(&in, out, sizeof(out), err, sizeof(err)), 0);
		CHECK_INT(brcode_decode(out, &d, err, sizeof(err)), 0);
		CHECK_INT(d.fields[1].id, 26);
		CHECK_INT(d.fields[1].value.len, 99);
	}
	in = base;
	in.location = "pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca25/extra/long";
	REFUSE_ENCODE(&in, "field 26 (merchant account) would have 105 characters, over 99");
	in.location = "https://pix.example.com/qr/1";
	REFUSE_ENCODE(&in, "location must be written without its scheme");
	in.location = "pix.example.com/a b";
	REFUSE_ENCODE(&in, "location must be printable ASCII without spaces");

	in = base;
	memset(key78, 'k', 78);
	key78[78] = '\0';
	in.pix_key = key78;
	REFUSE_ENCODE(&in, "pix_key has 78 characters, over 77");
	in.pix_key = NULL;
	REFUSE_ENCODE(&in, "pix_key is required");
	in.pix_key = "";
	REFUSE_ENCODE(&in, "pix_key is required");
	in.pix_key = "a b@example.com";
	REFUSE_ENCODE(&in, "pix_key must be printable ASCII without spaces");

	in = base;
	in.gui = "br.gov.bcb.pox";
	REFUSE_ENCODE(&in, "gui must be \"br.gov.bcb.pix\" (in any letter case)");
	in = base;
	in.merchant_name = " \xE2\x98\x95 ";
	REFUSE_ENCODE(&in, "merchant_name is empty once folded to ASCII");
	in = base;
	in.merchant_city = NULL;
	REFUSE_ENCODE(&in, "merchant_city is empty once folded to ASCII");
	in = base;
	in.amount_cents = 1000000000000LL; /* "10000000000.00", 14 characters */
	REFUSE_ENCODE(&in, "amount_cents 1000000000000 is too large for field 54");
	in.amount_cents = 999999999999LL;
	{
		char out[BRCODE_ENCODE_BUF], err[256];

		CHECK_INT(brcode_encode(&in, out, sizeof(out), err, sizeof(err)), 0);
		CHECK(strstr(out, "54139999999999.99") != NULL);
	}
}

int main(void)
{
	test_crc();
	test_decode_valid();
	test_one_char_changed();
	test_decode_invalid();
	test_amounts();
	test_fold();
	test_encode_vectors();
	test_round_trips();
	test_encode_refusals();
	return check_finish("brcode");
}
