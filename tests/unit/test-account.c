/* Unit tests of account: the create request of spec 4.2. A valid request is
 * built from a template; each error case changes one piece of it and asserts
 * the exact message. */
#include "check.h"

#include "pixrelay/core/timefmt.h"
#include "pixrelay/pix/account.h"
#include "pixrelay/core/base64.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"

#include <stdlib.h>
#include <string.h>

/* Tiny real files (their SHA-256 computed independently with Python). */
static const unsigned char pdf[] = {
    0x25, 0x50, 0x44, 0x46, 0x2d, 0x31, 0x2e, 0x34, 0x0a, 0x31, 0x20, 0x30, 0x20, 0x6f, 0x62, 0x6a,
    0x3c, 0x3c, 0x2f, 0x54, 0x79, 0x70, 0x65, 0x2f, 0x43, 0x61, 0x74, 0x61, 0x6c, 0x6f, 0x67, 0x3e,
    0x3e, 0x65, 0x6e, 0x64, 0x6f, 0x62, 0x6a, 0x0a, 0x25, 0x25, 0x45, 0x4f, 0x46, 0x0a};
#define PDF_SHA256 "b8274cd2f933ba897ac5a626e96063aa6ed45d4389b105279661a55aedd2bc6f"
static const unsigned char png[] = {0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00,
				    0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00,
				    0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x00,
				    0x00, 0x00, 0x3a, 0x7e, 0x9b, 0x55};
#define PNG_SHA256 "b04e0a33d3985a9de120ad367c9e7d312178756a0d0194e87e9a4efe201c8b33"
static const unsigned char jpg[] = {0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46,
				    0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01,
				    0x00, 0x01, 0x00, 0x00, 0xff, 0xd9};
#define JPG_SHA256 "d20f6ffd523b78a86cd2f916fa34af5d1918d75f7b142237c752ad6b254213ab"

static char pdf64[128], png64[128], jpg64[128];

/* 2026-03-15 */
#define TODAY 20527LL

static const char *const template_body =
    "{\"officialName\":\"Empresa Exemplo Ltda\","
    "\"tradeName\":\"Exemplo\","
    "\"taxID\":\"11.222.333/0001-81\","
    "\"documents\":[\"@PDF@\",\"data:application/pdf;base64,@PDF@\"],"
    "\"address\":{\"zipcode\":\"01310-100\",\"street\":\"Avenida Paulista\","
    "\"number\":\"1000\",\"neighborhood\":\"Bela Vista\",\"city\":\"S\\u00e3o Paulo\","
    "\"state\":\"SP\"},"
    "\"representatives\":[{\"name\":\"Fulano de Tal\",\"birthDate\":\"1990-05-17\","
    "\"email\":\"fulano@example.com\",\"taxID\":\"529.982.247-25\","
    "\"phone\":\"+55 (11) 94321-4321\","
    "\"documents\":{\"picture_face\":\"@PNG@\","
    "\"picture_identity_front\":\"data:image/jpeg;base64,@JPG@\","
    "\"picture_identity_back\":\"@JPG@\",\"picture_identity_type\":\"CNH\"}}],"
    "\"postbackUrl\":\"https://example.com/hooks/pix\"}";

/* A new copy of `s` with the first `from` (or every one when `all`) replaced
 * by `to`; NULL when `from` does not occur. */
static char *subst(const char *s, const char *from, const char *to, int all)
{
	char *cur = mem_strdup(s);
	int found = 0;
	size_t start = 0;

	for (;;) {
		char *at = strstr(cur + start, from);
		char *next;
		if (!at)
			break;
		found = 1;
		next = mem_printf("%.*s%s%s", (int)(at - cur), cur, to, at + strlen(from));
		start = (size_t)(at - cur) + strlen(to);
		free(cur);
		cur = next;
		if (!all)
			break;
	}
	if (!found) {
		free(cur);
		return NULL;
	}
	return cur;
}

/* subst of every occurrence, or a plain copy when there is none. */
static char *expand(char *s, const char *from, const char *to)
{
	char *r = subst(s, from, to, 1);

	if (!r)
		return s;
	free(s);
	return r;
}

/* The template with one change, files expanded. NULL when `from` is absent. */
static char *make_body(const char *from, const char *to)
{
	char *s = from ? subst(template_body, from, to, 0) : mem_strdup(template_body);

	if (!s)
		return NULL;
	s = expand(s, "@PDF@", pdf64);
	s = expand(s, "@PNG@", png64);
	return expand(s, "@JPG@", jpg64);
}

/* Parse `text` and run account_parse_create; returns its result. */
static int run(const char *text, size_t max_file, struct account_input *out, char *err,
	       size_t errlen)
{
	struct account_limits lim = {max_file};
	char perr[256];
	yajl_val v = NULL;
	int rc;

	err[0] = '\0';
	if (json_parse_object(text, strlen(text), &v, perr, sizeof(perr)) < 0) {
		snprintf(err, errlen, "(json) %s", perr);
		return -2;
	}
	rc = account_parse_create(v, &lim, TODAY, out, err, errlen);
	yajl_tree_free(v);
	return rc;
}

#define EXPECT_ERR_MAX(from, to, max, want)                                                        \
	do {                                                                                       \
		char *b_ = make_body((from), (to));                                                \
		char e_[512];                                                                      \
		struct account_input o_;                                                           \
		memset(&o_, 0x5a, sizeof(o_));                                                     \
		CHECK(b_ != NULL);                                                                 \
		if (b_) {                                                                          \
			CHECK_INT(run(b_, (max), &o_, e_, sizeof(e_)), -1);                        \
			CHECK_STR(e_, (want));                                                     \
			CHECK_INT(o_.ndocuments, (size_t)0x5a5a5a5a5a5a5a5aULL);                   \
			free(b_);                                                                  \
		}                                                                                  \
	} while (0)

#define EXPECT_ERR(from, to, want) EXPECT_ERR_MAX((from), (to), 0, (want))

#define EXPECT_OK(from, to)                                                                        \
	do {                                                                                       \
		char *b_ = make_body((from), (to));                                                \
		char e_[512];                                                                      \
		struct account_input o_;                                                           \
		CHECK(b_ != NULL);                                                                 \
		if (b_) {                                                                          \
			int rc_ = run(b_, 0, &o_, e_, sizeof(e_));                                 \
			CHECK_INT(rc_, 0);                                                         \
			if (rc_ != 0)                                                              \
				fprintf(stderr, "  error: %s\n", e_);                              \
			else                                                                       \
				account_input_deinit(&o_);                                         \
			free(b_);                                                                  \
		}                                                                                  \
	} while (0)

static void test_days(void)
{
	CHECK_INT(timefmt_days_from_civil(1970, 1, 1), 0);
	CHECK_INT(timefmt_days_from_civil(1969, 12, 31), -1);
	CHECK_INT(timefmt_days_from_civil(2000, 3, 1), 11017);
	CHECK_INT(timefmt_days_from_civil(1900, 1, 1), -25567);
	CHECK_INT(timefmt_days_from_civil(2024, 2, 29), 19782);
	CHECK_INT(timefmt_days_from_civil(2026, 3, 15), TODAY);
}

static void test_valid(void)
{
	char *body = make_body(NULL, NULL);
	struct account_input in;
	struct account_representative *r;
	char err[512];

	CHECK(body != NULL);
	if (!body)
		return;
	CHECK_INT(run(body, 0, &in, err, sizeof(err)), 0);
	free(body);
	if (err[0]) {
		fprintf(stderr, "  error: %s\n", err);
		return;
	}
	CHECK_STR(in.official_name, "Empresa Exemplo Ltda");
	CHECK_STR(in.trade_name, "Exemplo");
	CHECK_STR(in.tax_id, "11222333000181");
	CHECK_INT(in.ndocuments, 2);
	for (size_t i = 0; i < 2 && i < in.ndocuments; i++) {
		CHECK_INT(in.documents[i].kind, ACCOUNT_PDF);
		CHECK_INT(in.documents[i].len, sizeof(pdf));
		CHECK(memcmp(in.documents[i].data, pdf, sizeof(pdf)) == 0);
		CHECK_STR(in.documents[i].sha256, PDF_SHA256);
	}
	CHECK_STR(in.address.zipcode, "01310100");
	CHECK_STR(in.address.street, "Avenida Paulista");
	CHECK_STR(in.address.number, "1000");
	CHECK_STR(in.address.neighborhood, "Bela Vista");
	CHECK_STR(in.address.city, "S\xc3\xa3o Paulo");
	CHECK_STR(in.address.state, "SP");
	CHECK_INT(in.nrepresentatives, 1);
	r = in.representatives;
	CHECK_STR(r->name, "Fulano de Tal");
	CHECK_STR(r->birth_date, "1990-05-17");
	CHECK_STR(r->email, "fulano@example.com");
	CHECK_STR(r->tax_id, "52998224725");
	CHECK_STR(r->phone, "+55 (11) 94321-4321");
	CHECK_INT(r->picture_face.kind, ACCOUNT_PNG);
	CHECK_INT(r->picture_face.len, sizeof(png));
	CHECK(memcmp(r->picture_face.data, png, sizeof(png)) == 0);
	CHECK_STR(r->picture_face.sha256, PNG_SHA256);
	CHECK_INT(r->picture_identity_front.kind, ACCOUNT_JPEG);
	CHECK_INT(r->picture_identity_front.len, sizeof(jpg));
	CHECK_STR(r->picture_identity_front.sha256, JPG_SHA256);
	CHECK_INT(r->picture_identity_back.kind, ACCOUNT_JPEG);
	CHECK_INT(r->picture_identity_back.len, sizeof(jpg));
	CHECK_STR(r->picture_identity_back.sha256, JPG_SHA256);
	CHECK_STR(r->picture_identity_type, "CNH");
	CHECK_STR(in.postback_url, "https://example.com/hooks/pix");
	account_input_deinit(&in);
	CHECK(in.official_name == NULL);
	CHECK(in.documents == NULL);
	CHECK_INT(in.ndocuments, 0);
	account_input_deinit(&in); /* twice is harmless */
}

static void test_valid_variants(void)
{
	struct account_input in;
	char err[512], *body;

	/* optional fields absent or null */
	body = make_body(",\"picture_identity_back\":\"@JPG@\"", "");
	CHECK(body != NULL);
	if (body) {
		CHECK_INT(run(body, 0, &in, err, sizeof(err)), 0);
		if (!err[0]) {
			CHECK_INT(in.representatives[0].picture_identity_back.len, 0);
			CHECK(in.representatives[0].picture_identity_back.data == NULL);
			account_input_deinit(&in);
		}
		free(body);
	}
	body =
	    make_body("\"postbackUrl\":\"https://example.com/hooks/pix\"", "\"postbackUrl\":null");
	CHECK(body != NULL);
	if (body) {
		CHECK_INT(run(body, 0, &in, err, sizeof(err)), 0);
		if (!err[0]) {
			CHECK(in.postback_url == NULL);
			account_input_deinit(&in);
		}
		free(body);
	}
	EXPECT_OK(",\"postbackUrl\":\"https://example.com/hooks/pix\"", "");
	EXPECT_OK("\"picture_identity_back\":\"@JPG@\"", "\"picture_identity_back\":null");
	EXPECT_OK("\"picture_identity_type\":\"CNH\"", "\"picture_identity_type\":\"RG\"");
	/* the CNPJ vectors of pix-facts, bare, punctuated, alphanumeric */
	EXPECT_OK("11.222.333/0001-81", "33000167000101");
	EXPECT_OK("11.222.333/0001-81", "12345678000195");
	EXPECT_OK("11.222.333/0001-81", "07.549.767/0001-13");
	body = make_body("11.222.333/0001-81", "12.abc.345/01de-35");
	CHECK(body != NULL);
	if (body) {
		CHECK_INT(run(body, 0, &in, err, sizeof(err)), 0);
		if (!err[0]) {
			CHECK_STR(in.tax_id, "12ABC34501DE35");
			account_input_deinit(&in);
		}
		free(body);
	}
	/* the CPF vectors */
	EXPECT_OK("529.982.247-25", "39053344705");
	EXPECT_OK("529.982.247-25", "111.444.777-35");
	EXPECT_OK("529.982.247-25", "29094848074");
	/* zipcode without dash, yesterday's birthDate, 1900-01-01 */
	EXPECT_OK("01310-100", "01310100");
	EXPECT_OK("1990-05-17", "2026-03-14");
	EXPECT_OK("1990-05-17", "1900-01-01");
	EXPECT_OK("1990-05-17", "2024-02-29");
	/* images as PNG/JPEG in either slot, data: URI types in any case */
	EXPECT_OK("\"picture_face\":\"@PNG@\"", "\"picture_face\":\"data:IMAGE/JPG;base64,@JPG@\"");
	EXPECT_OK("data:image/jpeg;base64,@JPG@", "data:image/png;name=id.png;base64,@PNG@");
	/* 10 documents, 10 representatives, exactly at the size limit */
	{
		char *docs = mem_strdup("\"@PDF@\"");
		for (int i = 1; i < ACCOUNT_MAX_DOCUMENTS; i++) {
			char *n = mem_printf("%s,\"@PDF@\"", docs);
			free(docs);
			docs = n;
		}
		char *to = mem_printf("[%s]", docs);
		EXPECT_OK("[\"@PDF@\",\"data:application/pdf;base64,@PDF@\"]", to);
		free(to);
		free(docs);
	}
	{
		/* ten people: a representative appears once */
		static const char *const cpfs[ACCOUNT_MAX_REPRESENTATIVES] = {
		    "529.982.247-25", "12345678909", "98765432100", "11122233396", "44455566619",
		    "77788899941",    "13579246828", "24681357928", "31415926590", "27182818205"};
		const char *a = strstr(template_body, "[{\"name\"");
		const char *z = strstr(template_body, "}}]");
		char *rep = mem_printf("%.*s", (int)(z + 2 - (a + 1)), a + 1);
		char *reps = mem_strdup(rep);
		for (int i = 1; i < ACCOUNT_MAX_REPRESENTATIVES; i++) {
			char *other = subst(rep, "529.982.247-25", cpfs[i], 0);
			char *n = mem_printf("%s,%s", reps, other);
			free(other);
			free(reps);
			reps = n;
		}
		char *to = mem_printf("[%s]", reps);
		char *from = mem_printf("[%s]", rep);
		EXPECT_OK(from, to);
		free(reps);
		free(to);
		/* one more is too many */
		reps = mem_printf("[%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s]", rep, rep, rep, rep, rep,
				  rep, rep, rep, rep, rep, rep);
		EXPECT_ERR(from, reps, "representatives: must have at most 10 items");
		free(reps);
		free(from);
		free(rep);
	}
	body = make_body(NULL, NULL);
	if (body) {
		CHECK_INT(run(body, sizeof(pdf), &in, err, sizeof(err)), 0);
		if (!err[0])
			account_input_deinit(&in);
		free(body);
	}
}

static void test_unknown_and_types(void)
{
	EXPECT_ERR("{\"officialName\"", "{\"foo\":1,\"officialName\"", "unknown field 'foo'");
	EXPECT_ERR("\"postbackUrl\"", "\"postbackurl\"", "unknown field 'postbackurl'");
	EXPECT_ERR("\"state\":\"SP\"", "\"state\":\"SP\",\"x\":null", "address: unknown field 'x'");
	EXPECT_ERR("\"name\":\"Fulano de Tal\"", "\"age\":30,\"name\":\"Fulano de Tal\"",
		   "representatives[0]: unknown field 'age'");
	EXPECT_ERR("\"picture_identity_type\"", "\"selfie\":\"\",\"picture_identity_type\"",
		   "representatives[0].documents: unknown field 'selfie'");
	/* control characters and overlong keys are not echoed as they are */
	EXPECT_ERR("{\"officialName\"", "{\"a\\tb\":1,\"officialName\"", "unknown field 'a?b'");
	{
		/* 63 letters, then a 2-byte character that the 64-byte cut would split */
		char a63[64], to[128], want[128];
		memset(a63, 'a', 63);
		a63[63] = '\0';
		snprintf(to, sizeof(to), "{\"%s\\u00e3x\":1,\"officialName\"", a63);
		snprintf(want, sizeof(want), "unknown field '%s'", a63);
		EXPECT_ERR("{\"officialName\"", to, want);
	}
	/* unknown fields come first, before any other fault */
	EXPECT_ERR("\"taxID\":\"11.222.333/0001-81\"", "\"taxID\":1,\"zz\":2",
		   "unknown field 'zz'");

	EXPECT_ERR("\"officialName\":\"Empresa Exemplo Ltda\",", "", "officialName: is required");
	EXPECT_ERR("\"Empresa Exemplo Ltda\"", "null", "officialName: is required");
	EXPECT_ERR("\"Empresa Exemplo Ltda\"", "42", "officialName: must be a string");
	EXPECT_ERR("\"Empresa Exemplo Ltda\"", "[]", "officialName: must be a string");
	EXPECT_ERR("\"Empresa Exemplo Ltda\"", "\"\"", "officialName: must not be empty");
	EXPECT_ERR("\"Empresa Exemplo Ltda\"", "\"   \"", "officialName: must not be empty");
	EXPECT_ERR("\"Empresa Exemplo Ltda\"", "\"Empresa\\nExemplo\"",
		   "officialName: must not contain control characters");
	{
		char to[256];
		to[0] = '"';
		memset(to + 1, 'a', 201);
		strcpy(to + 202, "\"");
		EXPECT_ERR("\"Empresa Exemplo Ltda\"", to,
			   "officialName: must be at most 200 characters (got 201)");
		to[201] = '"';
		to[202] = '\0';
		EXPECT_OK("\"Empresa Exemplo Ltda\"", to);
		/* characters, not bytes: 200 x "ã" is 400 bytes */
		char *many = mem_strdup("\"");
		for (int i = 0; i < 200; i++) {
			char *n = mem_printf("%s\xc3\xa3", many);
			free(many);
			many = n;
		}
		char *q = mem_printf("%s\"", many);
		EXPECT_OK("\"Exemplo\"", q);
		free(q);
		free(many);
		EXPECT_ERR("\"Exemplo\"", "\"\"", "tradeName: must not be empty");
	}
	EXPECT_ERR("\"tradeName\":\"Exemplo\",", "", "tradeName: is required");
	EXPECT_ERR("\"tradeName\":\"Exemplo\"", "\"tradeName\":true",
		   "tradeName: must be a string");
	EXPECT_ERR("\"taxID\":\"11.222.333/0001-81\",", "", "taxID: is required");
	EXPECT_ERR("\"11.222.333/0001-81\"", "11222333000181", "taxID: must be a string");
	EXPECT_ERR("[\"@PDF@\",\"data:application/pdf;base64,@PDF@\"]", "{\"a\":\"@PDF@\"}",
		   "documents: must be an array");
	EXPECT_ERR(
	    "\"address\":{\"zipcode\":\"01310-100\",\"street\":\"Avenida Paulista\","
	    "\"number\":\"1000\",\"neighborhood\":\"Bela Vista\",\"city\":\"S\\u00e3o Paulo\","
	    "\"state\":\"SP\"}",
	    "\"address\":\"Avenida Paulista 1000\"", "address: must be an object");
	EXPECT_ERR("\"postbackUrl\":\"https://example.com/hooks/pix\"", "\"postbackUrl\":5",
		   "postbackUrl: must be a string");
	EXPECT_ERR("\"number\":\"1000\"", "\"number\":1000", "address.number: must be a string");
	EXPECT_ERR("\"birthDate\":\"1990-05-17\"", "\"birthDate\":19900517",
		   "representatives[0].birthDate: must be a string");
	EXPECT_ERR("\"picture_face\":\"@PNG@\"", "\"picture_face\":{}",
		   "representatives[0].documents.picture_face: must be a string");
}

static void test_company(void)
{
	EXPECT_ERR("11.222.333/0001-81", "11222333000182", "taxID: not a valid CNPJ");
	EXPECT_ERR("11.222.333/0001-81", "00000000000000", "taxID: not a valid CNPJ");
	EXPECT_ERR("11.222.333/0001-81", "11.222.333/0001-82", "taxID: not a valid CNPJ");
	EXPECT_ERR("11.222.333/0001-81", "12ABC34501DE36", "taxID: not a valid CNPJ");
	EXPECT_ERR("11.222.333/0001-81", "52998224725", "taxID: not a valid CNPJ");
	EXPECT_ERR("11.222.333/0001-81", "", "taxID: not a valid CNPJ");
	EXPECT_ERR("11.222.333/0001-81", " 11222333000181", "taxID: not a valid CNPJ");
	/* the first field at fault in the spec's order wins */
	EXPECT_ERR("\"SP\"}", "\"XX\"}",
		   "address.state: must be a Brazilian UF (2 capital "
		   "letters, e.g. SP)");
	{
		char *b = make_body("11.222.333/0001-81", "11222333000182");
		char *c = b ? subst(b, "\"state\":\"SP\"", "\"state\":\"XX\"", 0) : NULL;
		struct account_input o;
		char e[256];
		CHECK(c != NULL);
		if (c) {
			CHECK_INT(run(c, 0, &o, e, sizeof(e)), -1);
			CHECK_STR(e, "taxID: not a valid CNPJ");
		}
		free(b);
		free(c);
	}
}

static void test_documents(void)
{
	char *s;

	EXPECT_ERR("\"documents\":[\"@PDF@\",\"data:application/pdf;base64,@PDF@\"],", "",
		   "documents: is required");
	EXPECT_ERR("[\"@PDF@\",\"data:application/pdf;base64,@PDF@\"]", "null",
		   "documents: is required");
	EXPECT_ERR("[\"@PDF@\",\"data:application/pdf;base64,@PDF@\"]", "\"@PDF@\"",
		   "documents: must be an array");
	EXPECT_ERR("[\"@PDF@\",\"data:application/pdf;base64,@PDF@\"]", "[]",
		   "documents: must have at least 1 item");
	s = mem_printf("[%s\"@PDF@\"]", "\"@PDF@\",\"@PDF@\",\"@PDF@\",\"@PDF@\",\"@PDF@\","
					"\"@PDF@\",\"@PDF@\",\"@PDF@\",\"@PDF@\",\"@PDF@\",");
	EXPECT_ERR("[\"@PDF@\",\"data:application/pdf;base64,@PDF@\"]", s,
		   "documents: must have at most 10 items");
	free(s);
	EXPECT_ERR("[\"@PDF@\",", "[1,", "documents[0]: must be a string");
	EXPECT_ERR("[\"@PDF@\",", "[null,", "documents[0]: must be a string");
	EXPECT_ERR("[\"@PDF@\",", "[\"\",", "documents[0]: must not be empty");
	EXPECT_ERR("[\"@PDF@\",", "[\"not base64!\",", "documents[0]: not valid base64");
	EXPECT_ERR("[\"@PDF@\",", "[\"JVBERi0xLjQK JVBERi0xLjQK\",",
		   "documents[0]: not valid base64");
	EXPECT_ERR("[\"@PDF@\",", "[\"JVBERi0xLjQKA\",", "documents[0]: not valid base64");
	EXPECT_ERR("[\"@PDF@\",", "[\"JVBE=Ri0xLjQK\",", "documents[0]: not valid base64");
	EXPECT_ERR("[\"@PDF@\",", "[\"@PNG@\",", "documents[0]: not a PDF");
	EXPECT_ERR("[\"@PDF@\",", "[\"@JPG@\",", "documents[0]: not a PDF");
	/* "%PDF" without the dash is not a PDF header */
	EXPECT_ERR("[\"@PDF@\",", "[\"JVBERjEuNAo=\",", "documents[0]: not a PDF");
	EXPECT_ERR("\"data:application/pdf;base64,@PDF@\"", "\"@PNG@\"", "documents[1]: not a PDF");
	/* a PNG labelled as a PDF is still not a PDF */
	EXPECT_ERR("\"data:application/pdf;base64,@PDF@\"", "\"data:application/pdf;base64,@PNG@\"",
		   "documents[1]: not a PDF");
	/* a PDF labelled as a PNG: the label contradicts the content */
	EXPECT_ERR("data:application/pdf;base64,@PDF@", "data:image/png;base64,@PDF@",
		   "documents[1]: data: URI says image/png but the content is a PDF");
	EXPECT_ERR("data:application/pdf;base64,@PDF@", "data:text/plain;base64,@PDF@",
		   "documents[1]: data: URI says text/plain but the content is a PDF");
	EXPECT_ERR("data:application/pdf;base64,@PDF@", "data:application/pdf,@PDF@",
		   "documents[1]: not a valid data: URI (data:<type>;base64,<data>)");
	EXPECT_ERR("data:application/pdf;base64,@PDF@", "data:;base64,@PDF@",
		   "documents[1]: not a valid data: URI (data:<type>;base64,<data>)");
	EXPECT_ERR("data:application/pdf;base64,@PDF@", "data:application/pdf;base64,",
		   "documents[1]: must not be empty");
	EXPECT_ERR("data:application/pdf;base64,@PDF@", "data:application/pdf;base64,%PDF-1.4",
		   "documents[1]: not valid base64");
	/* 46 bytes against a limit of 45 */
	CHECK_INT(sizeof(pdf), 46);
	EXPECT_ERR_MAX(NULL, NULL, 45, "documents[0]: file too large (46 bytes, the limit is 45)");
	EXPECT_ERR_MAX("[\"@PDF@\",", "[\"@PDF@@PDF@\",", 100, "documents[0]: not valid base64");
	EXPECT_ERR_MAX("[\"@PDF@\",", "[\"JVBERi0xLjQKJVBERi0xLjQKJVBERi0xLjQKJVBERi0xLjQK\",", 35,
		       "documents[0]: file too large (36 bytes, the limit is 35)");
}

static void test_address(void)
{
	const char *uf = "address.state: must be a Brazilian UF (2 capital letters, e.g. SP)";
	const char *cep = "address.zipcode: not a valid CEP (8 digits, e.g. 01310-100)";

	EXPECT_ERR(
	    "\"address\":{\"zipcode\":\"01310-100\",\"street\":\"Avenida Paulista\","
	    "\"number\":\"1000\",\"neighborhood\":\"Bela Vista\",\"city\":\"S\\u00e3o Paulo\","
	    "\"state\":\"SP\"},",
	    "", "address: is required");
	EXPECT_ERR("\"zipcode\":\"01310-100\",", "", "address.zipcode: is required");
	EXPECT_ERR("\"01310-100\"", "1310100", "address.zipcode: must be a string");
	EXPECT_ERR("01310-100", "1234-567", cep);
	EXPECT_ERR("01310-100", "0131010", cep);
	EXPECT_ERR("01310-100", "013101000", cep);
	EXPECT_ERR("01310-100", "01310-10a", cep);
	EXPECT_ERR("01310-100", "", cep);
	EXPECT_ERR("\"street\":\"Avenida Paulista\",", "", "address.street: is required");
	EXPECT_ERR("\"Avenida Paulista\"", "\"\"", "address.street: must not be empty");
	EXPECT_ERR("\"number\":\"1000\"", "\"number\":\" \"", "address.number: must not be empty");
	EXPECT_ERR("\"Bela Vista\"", "null", "address.neighborhood: is required");
	EXPECT_ERR(",\"city\":\"S\\u00e3o Paulo\"", "", "address.city: is required");
	EXPECT_ERR("S\\u00e3o Paulo", "S\\u00e3o\\u0007Paulo",
		   "address.city: must not contain control characters");
	EXPECT_ERR(",\"state\":\"SP\"", "", "address.state: is required");
	EXPECT_ERR("\"state\":\"SP\"", "\"state\":null", "address.state: is required");
	EXPECT_ERR("\"state\":\"SP\"", "\"state\":35", "address.state: must be a string");
	EXPECT_ERR("\"state\":\"SP\"", "\"state\":\"sp\"", uf);
	EXPECT_ERR("\"state\":\"SP\"", "\"state\":\"XX\"", uf);
	EXPECT_ERR("\"state\":\"SP\"", "\"state\":\"SPA\"", uf);
	EXPECT_ERR("\"state\":\"SP\"", "\"state\":\"S\"", uf);
	EXPECT_ERR("\"state\":\"SP\"", "\"state\":\"\"", uf);
}

static void test_representatives(void)
{
	const char *date =
	    "representatives[0].birthDate: must be a real date YYYY-MM-DD in the past";
	char *rep, *two;

	EXPECT_ERR("\"representatives\":[", "\"r\":[", "unknown field 'r'");
	{
		const char *a = strstr(template_body, "\"representatives\":[");
		const char *z = strstr(template_body, "}}],");
		char *from = mem_printf("%.*s", (int)(z + 4 - a), a);
		EXPECT_ERR(from, "", "representatives: is required");
		EXPECT_ERR(from, "\"representatives\":null,", "representatives: is required");
		EXPECT_ERR(from, "\"representatives\":{\"name\":\"Fulano\"},",
			   "representatives: must be an array");
		EXPECT_ERR(from, "\"representatives\":[],",
			   "representatives: must have at least 1 item");
		EXPECT_ERR(from, "\"representatives\":[\"Fulano\"],",
			   "representatives[0]: must be an object");
		EXPECT_ERR(from, "\"representatives\":[null],",
			   "representatives[0]: must be an object");
		free(from);
	}
	/* a fault in the second representative names it */
	{
		const char *a = strstr(template_body, "[{\"name\"");
		const char *z = strstr(template_body, "}}]");
		rep = mem_printf("%.*s", (int)(z + 2 - (a + 1)), a + 1);
		char *bad = subst(rep, "529.982.247-25", "52998224724", 0);
		char *from = mem_printf("[%s]", rep);
		two = mem_printf("[%s,%s]", rep, bad);
		EXPECT_ERR(from, two, "representatives[1].taxID: invalid CPF");
		free(two);
		two = mem_printf("[%s,{}]", rep);
		EXPECT_ERR(from, two, "representatives[1].name: is required");
		free(two);
		free(bad);
		free(from);
		free(rep);
	}
	/* the same person twice, however the CPF is written: refused at the second */
	{
		const char *a = strstr(template_body, "[{\"name\"");
		const char *z = strstr(template_body, "}}]");
		char *from, *plain, *other, *broken;

		rep = mem_printf("%.*s", (int)(z + 2 - (a + 1)), a + 1);
		from = mem_printf("[%s]", rep);
		plain = subst(rep, "529.982.247-25", "52998224725", 0);
		other = subst(rep, "529.982.247-25", "390.533.447-05", 0);
		two = mem_printf("[%s,%s]", rep, rep);
		EXPECT_ERR(from, two,
			   "representatives[1].taxID: the same CPF as representatives[0]");
		free(two);
		two = mem_printf("[%s,%s,%s]", rep, other, plain);
		EXPECT_ERR(from, two,
			   "representatives[2].taxID: the same CPF as representatives[0]");
		free(two);
		two = mem_printf("[%s,%s,%s]", other, rep, other);
		EXPECT_ERR(from, two,
			   "representatives[2].taxID: the same CPF as representatives[0]");
		free(two);
		/* named before the fields that follow it (the spec's order) */
		broken = subst(plain, "\"phone\":\"+55 (11) 94321-4321\"", "\"phone\":\"x\"", 0);
		two = mem_printf("[%s,%s]", rep, broken);
		EXPECT_ERR(from, two,
			   "representatives[1].taxID: the same CPF as representatives[0]");
		free(two);
		/* two people are fine */
		two = mem_printf("[%s,%s]", rep, other);
		EXPECT_OK(from, two);
		free(two);
		free(broken);
		free(other);
		free(plain);
		free(from);
		free(rep);
	}

	EXPECT_ERR("\"name\":\"Fulano de Tal\",", "", "representatives[0].name: is required");
	EXPECT_ERR("\"Fulano de Tal\"", "\"\"", "representatives[0].name: must not be empty");
	EXPECT_ERR("\"Fulano de Tal\"", "7", "representatives[0].name: must be a string");

	EXPECT_ERR("\"birthDate\":\"1990-05-17\",", "",
		   "representatives[0].birthDate: is required");
	EXPECT_ERR("1990-05-17", "2023-02-30", date);
	EXPECT_ERR("1990-05-17", "2023-02-29", date);
	EXPECT_ERR("1990-05-17", "1990-13-01", date);
	EXPECT_ERR("1990-05-17", "1990-5-17", date);
	EXPECT_ERR("1990-05-17", "17/05/1990", date);
	EXPECT_ERR("1990-05-17", "1990-05-17T00:00:00", date);
	EXPECT_ERR("1990-05-17", "1899-12-31", date);
	EXPECT_ERR("1990-05-17", "2026-03-15", date); /* today */
	EXPECT_ERR("1990-05-17", "2026-03-16", date);
	EXPECT_ERR("1990-05-17", "2990-05-17", date);
	EXPECT_ERR("1990-05-17", "", date);

	EXPECT_ERR("\"email\":\"fulano@example.com\",", "",
		   "representatives[0].email: is required");
	EXPECT_ERR("fulano@example.com", "fulano@",
		   "representatives[0].email: not a valid e-mail address");
	EXPECT_ERR("fulano@example.com", "fulano.example.com",
		   "representatives[0].email: not a valid e-mail address");
	EXPECT_ERR("fulano@example.com", "fulano@example",
		   "representatives[0].email: not a valid e-mail address");
	EXPECT_ERR("fulano@example.com", "",
		   "representatives[0].email: not a valid e-mail address");

	EXPECT_ERR("\"taxID\":\"529.982.247-25\",", "", "representatives[0].taxID: is required");
	EXPECT_ERR("\"529.982.247-25\"", "52998224725",
		   "representatives[0].taxID: must be a string");
	EXPECT_ERR("529.982.247-25", "52998224724", "representatives[0].taxID: invalid CPF");
	EXPECT_ERR("529.982.247-25", "11111111111", "representatives[0].taxID: invalid CPF");
	EXPECT_ERR("529.982.247-25", "529.982.24725", "representatives[0].taxID: invalid CPF");
	EXPECT_ERR("529.982.247-25", "11222333000181", "representatives[0].taxID: invalid CPF");

	EXPECT_ERR("\"phone\":\"+55 (11) 94321-4321\",", "",
		   "representatives[0].phone: is required");
	EXPECT_ERR(
	    "+55 (11) 94321-4321", "123",
	    "representatives[0].phone: not a valid phone number (8 to 15 digits, optional +)");
	EXPECT_ERR(
	    "+55 (11) 94321-4321", "call me",
	    "representatives[0].phone: not a valid phone number (8 to 15 digits, optional +)");

	EXPECT_ERR(",\"documents\":{\"picture_face\"", ",\"docs\":{\"picture_face\"",
		   "representatives[0]: unknown field 'docs'");
	{
		const char *a = strstr(template_body, ",\"documents\":{");
		const char *z = strstr(template_body, "}}]");
		char *from = mem_printf("%.*s", (int)(z + 1 - a), a);
		EXPECT_ERR(from, "", "representatives[0].documents: is required");
		EXPECT_ERR(from, ",\"documents\":null",
			   "representatives[0].documents: is required");
		EXPECT_ERR(from, ",\"documents\":[\"@PNG@\"]",
			   "representatives[0].documents: must be an object");
		free(from);
	}
	EXPECT_ERR("\"picture_face\":\"@PNG@\",", "",
		   "representatives[0].documents.picture_face: is required");
	EXPECT_ERR("\"picture_face\":\"@PNG@\"", "\"picture_face\":\"@PDF@\"",
		   "representatives[0].documents.picture_face: not a JPG or PNG image");
	EXPECT_ERR("\"picture_face\":\"@PNG@\"", "\"picture_face\":\"data:image/png;base64,@PDF@\"",
		   "representatives[0].documents.picture_face: not a JPG or PNG image");
	EXPECT_ERR("\"picture_face\":\"@PNG@\"",
		   "\"picture_face\":\"data:image/jpeg;base64,@PNG@\"",
		   "representatives[0].documents.picture_face: data: URI says image/jpeg but the "
		   "content is a PNG image");
	EXPECT_ERR("\"picture_face\":\"@PNG@\"", "\"picture_face\":\"@PNG@=\"",
		   "representatives[0].documents.picture_face: not valid base64");
	EXPECT_ERR_MAX(NULL, NULL, 32, "documents[0]: file too large (46 bytes, the limit is 32)");
	{
		/* documents pass at 46 bytes, the 33-byte PNG does not at 32 */
		char *from =
		    mem_strdup("\"documents\":[\"@PDF@\",\"data:application/pdf;base64,@PDF@\"]");
		char *b = make_body(from, "\"documents\":[\"JVBERi0=\"]");
		struct account_input o;
		char e[256];
		CHECK(b != NULL);
		if (b) {
			CHECK_INT(run(b, 32, &o, e, sizeof(e)), -1);
			CHECK_STR(e, "representatives[0].documents.picture_face: file too large "
				     "(33 bytes, the limit is 32)");
		}
		free(b);
		free(from);
	}
	EXPECT_ERR("\"picture_identity_front\":\"data:image/jpeg;base64,@JPG@\",", "",
		   "representatives[0].documents.picture_identity_front: is required");
	EXPECT_ERR("data:image/jpeg;base64,@JPG@", "data:image/jpeg;base64,@PDF@",
		   "representatives[0].documents.picture_identity_front: not a JPG or PNG image");
	EXPECT_ERR("data:image/jpeg;base64,@JPG@", "data:image/png;base64,@JPG@",
		   "representatives[0].documents.picture_identity_front: data: URI says image/png "
		   "but the content is a JPG image");
	EXPECT_ERR("\"picture_identity_back\":\"@JPG@\"", "\"picture_identity_back\":\"@PDF@\"",
		   "representatives[0].documents.picture_identity_back: not a JPG or PNG image");
	EXPECT_ERR("\"picture_identity_back\":\"@JPG@\"", "\"picture_identity_back\":\"\"",
		   "representatives[0].documents.picture_identity_back: must not be empty");
	EXPECT_ERR("\"picture_identity_back\":\"@JPG@\"", "\"picture_identity_back\":false",
		   "representatives[0].documents.picture_identity_back: must be a string");
	EXPECT_ERR(",\"picture_identity_type\":\"CNH\"", "",
		   "representatives[0].documents.picture_identity_type: is required");
	EXPECT_ERR("\"CNH\"", "\"Passport\"",
		   "representatives[0].documents.picture_identity_type: must be RG or CNH");
	EXPECT_ERR("\"CNH\"", "\"rg\"",
		   "representatives[0].documents.picture_identity_type: must be RG or CNH");
	EXPECT_ERR("\"CNH\"", "\"\"",
		   "representatives[0].documents.picture_identity_type: must be RG or CNH");
	EXPECT_ERR("\"CNH\"", "1",
		   "representatives[0].documents.picture_identity_type: must be a string");
}

static void test_postback(void)
{
	const char *msg = "postbackUrl: must be an absolute http or https URL";

	EXPECT_ERR("https://example.com/hooks/pix", "ftp://example.com/hooks", msg);
	EXPECT_ERR("https://example.com/hooks/pix", "/hooks/pix", msg);
	EXPECT_ERR("https://example.com/hooks/pix", "", msg);
	EXPECT_ERR("https://example.com/hooks/pix", "https://user:pw@example.com/", msg);
	EXPECT_OK("https://example.com/hooks/pix", "http://127.0.0.1:8080/pix?x=1");
}

static void test_decode_file(void)
{
	struct account_file f, keep;
	char err[256];
	char *uri;

	memset(&keep, 0x33, sizeof(keep));
	f = keep;
	CHECK_INT(
	    account_decode_file(png64, ACCOUNT_KINDS_IMAGE, sizeof(png), &f, err, sizeof(err)), 0);
	CHECK_INT(f.kind, ACCOUNT_PNG);
	CHECK_INT(f.len, sizeof(png));
	CHECK_STR(f.sha256, PNG_SHA256);
	account_file_deinit(&f);
	CHECK(f.data == NULL);
	CHECK_INT(f.len, 0);

	f = keep;
	CHECK_INT(
	    account_decode_file(png64, ACCOUNT_KINDS_IMAGE, sizeof(png) - 1, &f, err, sizeof(err)),
	    -1);
	CHECK_STR(err, "file too large (33 bytes, the limit is 32)");
	CHECK(memcmp(&f, &keep, sizeof(f)) == 0);
	CHECK_INT(account_decode_file(png64, ACCOUNT_KINDS_PDF, 1000, &f, err, sizeof(err)), -1);
	CHECK_STR(err, "not a PDF");
	CHECK_INT(
	    account_decode_file(pdf64, ACCOUNT_KIND_BIT(ACCOUNT_PNG), 1000, &f, err, sizeof(err)),
	    -1);
	CHECK_STR(err, "not a PNG image");
	CHECK_INT(account_decode_file(png64, ACCOUNT_KINDS_PDF | ACCOUNT_KIND_BIT(ACCOUNT_JPEG),
				      1000, &f, err, sizeof(err)),
		  -1);
	CHECK_STR(err, "not a PDF or JPG");
	CHECK_INT(account_decode_file("QUJD", ACCOUNT_KINDS_PDF | ACCOUNT_KINDS_IMAGE, 1000, &f,
				      err, sizeof(err)),
		  -1);
	CHECK_STR(err, "not a PDF, JPG or PNG");
	CHECK_INT(account_decode_file(NULL, ACCOUNT_KINDS_PDF, 1000, &f, err, sizeof(err)), -1);
	CHECK_STR(err, "is required");
	CHECK(memcmp(&f, &keep, sizeof(f)) == 0);

	/* padding may be dropped; mime types in any case; parameters allowed */
	{
		char nopad[128];
		size_t n = strlen(pdf64);
		snprintf(nopad, sizeof(nopad), "%s", pdf64);
		while (n > 0 && nopad[n - 1] == '=')
			nopad[--n] = '\0';
		CHECK_INT(account_decode_file(nopad, ACCOUNT_KINDS_PDF, 46, &f, err, sizeof(err)),
			  0);
		CHECK_STR(f.sha256, PDF_SHA256);
		account_file_deinit(&f);
	}
	uri = mem_printf("DATA:Application/PDF;BASE64,%s", pdf64);
	CHECK_INT(account_decode_file(uri, ACCOUNT_KINDS_PDF, 46, &f, err, sizeof(err)), 0);
	CHECK_INT(f.kind, ACCOUNT_PDF);
	account_file_deinit(&f);
	free(uri);
	uri = mem_printf("data:image/jpeg;charset=binary;base64,%s", jpg64);
	CHECK_INT(account_decode_file(uri, ACCOUNT_KINDS_IMAGE, 22, &f, err, sizeof(err)), 0);
	CHECK_INT(f.kind, ACCOUNT_JPEG);
	CHECK_STR(f.sha256, JPG_SHA256);
	account_file_deinit(&f);
	free(uri);
	uri = mem_printf("data:image/jpeg;base64 ,%s", jpg64);
	CHECK_INT(account_decode_file(uri, ACCOUNT_KINDS_IMAGE, 22, &f, err, sizeof(err)), -1);
	CHECK_STR(err, "not a valid data: URI (data:<type>;base64,<data>)");
	free(uri);
	uri = mem_printf("data:image jpeg;base64,%s", jpg64);
	CHECK_INT(account_decode_file(uri, ACCOUNT_KINDS_IMAGE, 22, &f, err, sizeof(err)), -1);
	CHECK_STR(err, "not a valid data: URI (data:<type>;base64,<data>)");
	free(uri);
	CHECK_INT(account_decode_file("data:", ACCOUNT_KINDS_IMAGE, 22, &f, err, sizeof(err)), -1);
	CHECK_STR(err, "not a valid data: URI (data:<type>;base64,<data>)");
	/* a tiny error buffer is never overrun */
	{
		char small[8];
		memset(small, 'x', sizeof(small));
		CHECK_INT(
		    account_decode_file("@@", ACCOUNT_KINDS_PDF, 10, &f, small, sizeof(small)), -1);
		CHECK_STR(small, "not val");
	}
}

/* The files an account keeps: each content once, in slot order. */
static void test_files_usage(void)
{
	char *body = make_body(NULL, NULL);
	struct account_input in;
	char err[512];
	size_t files = 99, bytes = 99;

	CHECK(body != NULL);
	if (!body || run(body, 0, &in, err, sizeof(err)) != 0) {
		CHECK(0);
		free(body);
		return;
	}
	free(body);
	/* two documents (the same PDF twice), face PNG, front JPG, back JPG again */
	CHECK_INT(account_file_slots(&in), 5);
	CHECK(account_file_slot(&in, 0) == &in.documents[0]);
	CHECK(account_file_slot(&in, 1) == &in.documents[1]);
	CHECK(account_file_slot(&in, 2) == &in.representatives[0].picture_face);
	CHECK(account_file_slot(&in, 3) == &in.representatives[0].picture_identity_front);
	CHECK(account_file_slot(&in, 4) == &in.representatives[0].picture_identity_back);
	CHECK_INT(account_file_is_first(&in, 0), 1);
	CHECK_INT(account_file_is_first(&in, 1), 0);
	CHECK_INT(account_file_is_first(&in, 2), 1);
	CHECK_INT(account_file_is_first(&in, 3), 1);
	CHECK_INT(account_file_is_first(&in, 4), 0);
	account_files_usage(&in, &files, &bytes);
	CHECK_INT(files, 3);
	CHECK_INT(bytes, sizeof(pdf) + sizeof(png) + sizeof(jpg));
	/* an absent picture is no file */
	account_file_deinit(&in.representatives[0].picture_identity_back);
	CHECK_INT(account_file_is_first(&in, 4), 0);
	account_files_usage(&in, &files, &bytes);
	CHECK_INT(files, 3);
	account_file_deinit(&in.representatives[0].picture_identity_front);
	account_files_usage(&in, &files, &bytes);
	CHECK_INT(files, 2);
	CHECK_INT(bytes, sizeof(pdf) + sizeof(png));
	account_input_deinit(&in);
}

int main(void)
{
	base64_encode(pdf, sizeof(pdf), pdf64);
	base64_encode(png, sizeof(png), png64);
	base64_encode(jpg, sizeof(jpg), jpg64);
	CHECK_STR(pdf64, "JVBERi0xLjQKMSAwIG9iajw8L1R5cGUvQ2F0YWxvZz4+ZW5kb2JqCiUlRU9GCg==");
	CHECK_STR(png64, "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptV");
	CHECK_STR(jpg64, "/9j/4AAQSkZJRgABAQAAAQABAAD/2Q==");

	test_days();
	test_valid();
	test_valid_variants();
	test_unknown_and_types();
	test_company();
	test_documents();
	test_address();
	test_representatives();
	test_postback();
	test_decode_file();
	test_files_usage();
	return check_finish("account");
}
