/* Unit tests of provjson, the readers woovi, asaas and mercadopago share:
 * the "field: rule" writer at its edges (no path, no field, a short
 * buffer), the predicates at their bounds, null read as absent, amounts in
 * reais from the number's text, refund ids kept or hashed, the bankpix and
 * devolucao a payment becomes, a refusal's id the same for a payment sent
 * again in another order, and a page's and a lone payment's bodies. */
#include "check.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/pix/provjson.h"

#include <stdlib.h>
#include <string.h>

static char err[256];

/* A literal and its length. */
#define S(lit) lit, sizeof(lit) - 1

/* The tree of a JSON object literal (the caller frees). */
static yajl_val tree(const char *text)
{
	yajl_val v = NULL;
	char e[128];

	if (json_parse_object(text, strlen(text), &v, e, sizeof(e)) < 0)
		fprintf(stderr, "tree: %s: %s\n", text, e);
	return v;
}

static void test_fail_and_path(void)
{
	char small[8], p[16];

	CHECK_INT(provjson_fail(err, sizeof(err), "data[3]", "value", "is %s", "required"), -1);
	CHECK_STR(err, "data[3].value: is required");
	provjson_fail(err, sizeof(err), "", "value", "is required");
	CHECK_STR(err, "value: is required");
	provjson_fail(err, sizeof(err), "data[3]", "", "must be an object");
	CHECK_STR(err, "data[3]: must be an object");
	/* cut to the buffer, never past it */
	CHECK_INT(provjson_fail(small, sizeof(small), "transactions[0]", "x", "rule"), -1);
	CHECK_STR(small, "transac");
	CHECK_INT(provjson_fail(small, sizeof(small), "", "ab", "a long rule"), -1);
	CHECK_STR(small, "ab: a l");

	provjson_path(p, sizeof(p), "", "refunds[%zu]", (size_t)2);
	CHECK_STR(p, "refunds[2]");
	provjson_path(p, sizeof(p), "data[1]", "charge");
	CHECK_STR(p, "data[1].charge");
	provjson_path(p, sizeof(p), "data[1]", "refunds[%zu]", (size_t)12);
	CHECK_STR(p, "data[1].refunds");
}

static void test_predicates(void)
{
	char e2e[40];

	CHECK(!provjson_is_token("", 4));
	CHECK(provjson_is_token("ab~!", 4));
	CHECK(!provjson_is_token("abcde", 4));
	CHECK(!provjson_is_token("a b", 4));
	CHECK(!provjson_is_token("a\x7f", 4));
	CHECK(!provjson_is_token("\xc3\xa7", 4)); /* ç: printable ASCII only */

	CHECK(provjson_is_id("pay_080225913252-x", 45));
	CHECK(!provjson_is_id("", 45));
	CHECK(!provjson_is_id("a.b", 45));
	CHECK(provjson_is_id("abc", 3));
	CHECK(!provjson_is_id("abcd", 3));

	CHECK(provjson_is_text("Devolu\xc3\xa7\xc3\xa3o", 9)); /* 9 characters, 11 bytes */
	CHECK(!provjson_is_text("Devolu\xc3\xa7\xc3\xa3o", 8));
	CHECK(!provjson_is_text("", 8));
	CHECK(!provjson_is_text("a\nb", 8));
	CHECK(!provjson_is_text("a\xc3", 8)); /* cut UTF-8 */

	memset(e2e, 'A', 32);
	e2e[32] = '\0';
	CHECK(provjson_is_e2e(e2e));
	CHECK(!provjson_is_e2e(NULL));
	e2e[31] = '-';
	CHECK(!provjson_is_e2e(e2e));
	e2e[31] = 'A';
	e2e[32] = 'A';
	e2e[33] = '\0';
	CHECK(!provjson_is_e2e(e2e));
}

static void test_members(void)
{
	yajl_val t = tree("{\"s\":\"abc\",\"n\":null,\"i\":5,\"c\":\"a\\u0001\",\"o\":{},\"a\":[1],"
			  "\"b\":false,\"st\":\"RECEIVED\",\"low\":\"received\",\"id\":\"pay_1\","
			  "\"bad\":\"pay.1\",\"r\":10.5,\"rs\":\"10.5\",\"e\":1e2,\"z\":0,"
			  "\"d\":\"2024-06-12T16:45:03Z\",\"dz\":\"2024-06-12T16:45:03\","
			  "\"status\":\"REFUND_IN_PROGRESS\",\"tok\":\"ab c\",\"ok\":\"abc\"}");
	const char *s = "untouched", *untouched = s;
	yajl_val v = NULL;
	int64_t cents = 7;
	long long ms = 7;
	bool b = true;
	char tok[8];

	CHECK(provjson_optional(t, "n") == NULL);
	CHECK(provjson_optional(t, "absent") == NULL);
	CHECK(provjson_optional(json_get(t, "i"), "s") == NULL); /* not an object */
	CHECK(provjson_optional(t, "s") != NULL);

	/* strings: null is absent */
	CHECK_INT(provjson_string_at(t, "s", "", true, 3, &s, err, sizeof(err)), 0);
	CHECK_STR(s, "abc");
	CHECK_INT(provjson_string_at(t, "n", "", false, 0, &s, err, sizeof(err)), 0);
	CHECK(s == NULL);
	s = untouched;
	CHECK_INT(provjson_string_at(t, "n", "p", true, 0, &s, err, sizeof(err)), -1);
	CHECK_STR(err, "p.n: is required");
	CHECK(s == untouched);
	CHECK_INT(provjson_string_at(t, "i", "p", false, 0, &s, err, sizeof(err)), -1);
	CHECK_STR(err, "p.i: must be a string");
	CHECK_INT(provjson_string_at(t, "s", "p", true, 2, &s, err, sizeof(err)), -1);
	CHECK_STR(err, "p.s: must be at most 2 characters, no control characters");
	CHECK_INT(provjson_string_at(t, "c", "p", true, 10, &s, err, sizeof(err)), -1);
	CHECK_STR(err, "p.c: must be at most 10 characters, no control characters");
	CHECK_INT(provjson_string_at(t, "c", "p", true, 0, &s, err, sizeof(err)), 0);
	CHECK_STR(s, "a\x01");

	/* text and tokens */
	CHECK_STR(provjson_text(json_get(t, "s"), 3), "abc");
	CHECK(provjson_text(json_get(t, "s"), 2) == NULL);
	CHECK(provjson_text(json_get(t, "i"), 2) == NULL);
	CHECK(provjson_text(NULL, 2) == NULL);
	provjson_token_copy(json_get(t, "ok"), tok, 7);
	CHECK_STR(tok, "abc");
	provjson_token_copy(json_get(t, "tok"), tok, 7);
	CHECK_STR(tok, "");
	provjson_token_copy(json_get(t, "ok"), tok, 2);
	CHECK_STR(tok, "");

	/* ids and statuses */
	s = untouched;
	CHECK_INT(provjson_id_at(t, "id", "", 45, &s, err, sizeof(err)), 0);
	CHECK_STR(s, "pay_1");
	s = untouched;
	CHECK_INT(provjson_id_at(t, "bad", "data[0]", 45, &s, err, sizeof(err)), -1);
	CHECK_STR(err, "data[0].bad: must be 1 to 45 letters, digits, '-' or '_'");
	CHECK(s == untouched);
	CHECK_INT(provjson_id_at(t, "id", "", 4, &s, err, sizeof(err)), -1);
	CHECK_STR(err, "id: must be 1 to 4 letters, digits, '-' or '_'");
	CHECK_INT(provjson_status_at(t, "", 31, &s, err, sizeof(err)), 0);
	CHECK_STR(s, "REFUND_IN_PROGRESS");
	CHECK_INT(provjson_status_at(t, "refund", 17, &s, err, sizeof(err)), -1);
	CHECK_STR(err, "refund.status: must be 1 to 17 of A-Z and _");
	CHECK_INT(provjson_status_at(json_get(t, "o"), "x", 17, &s, err, sizeof(err)), -1);
	CHECK_STR(err, "x.status: is required");

	/* reais from the number's text */
	CHECK_INT(provjson_reais_at(t, "r", "", &cents, err, sizeof(err)), 0);
	CHECK_INT(cents, 1050);
	cents = 7;
	CHECK_INT(provjson_reais_at(t, "rs", "", &cents, err, sizeof(err)), -1);
	CHECK_STR(err, "rs: must be a number of reais from 0.01 to 9999999999.99 with at most 2 "
		       "decimal places, like 10.5");
	CHECK_INT(provjson_reais_at(t, "e", "", &cents, err, sizeof(err)), -1);
	CHECK_INT(provjson_reais_at(t, "z", "", &cents, err, sizeof(err)), -1);
	CHECK_INT(provjson_reais_at(t, "n", "", &cents, err, sizeof(err)), -1);
	CHECK_STR(err, "n: is required");
	CHECK_INT(cents, 7);

	/* moments */
	CHECK_INT(
	    provjson_time_at(t, "d", "", true, bankpix_time_ms, "rule", &s, &ms, err, sizeof(err)),
	    0);
	CHECK_INT(ms, 1718210703000LL);
	ms = 7;
	CHECK_INT(provjson_time_at(t, "absent", "", false, bankpix_time_ms, "rule", &s, &ms, err,
				   sizeof(err)),
		  0);
	CHECK(s == NULL);
	CHECK_INT(ms, 7);
	CHECK_INT(provjson_time_at(t, "dz", "p", false, bankpix_time_ms, "must have a zone", &s,
				   &ms, err, sizeof(err)),
		  -1);
	CHECK_STR(err, "p.dz: must have a zone");
	CHECK_INT(ms, 7);
	CHECK_INT(provjson_time_at(t, "absent", "p", true, bankpix_time_ms, "r", &s, &ms, err,
				   sizeof(err)),
		  -1);
	CHECK_STR(err, "p.absent: is required");

	/* objects, arrays, booleans */
	CHECK_INT(provjson_object_at(t, "o", "", &v, err, sizeof(err)), 0);
	CHECK(v == json_get(t, "o"));
	CHECK_INT(provjson_object_at(t, "a", "", &v, err, sizeof(err)), -1);
	CHECK_STR(err, "a: must be an object");
	CHECK_INT(provjson_object_at(t, "n", "", &v, err, sizeof(err)), -1);
	CHECK_STR(err, "n: is required");
	CHECK_INT(provjson_array_at(t, "a", "", &v, err, sizeof(err)), 0);
	CHECK(v == json_get(t, "a"));
	CHECK_INT(provjson_array_at(t, "o", "x", &v, err, sizeof(err)), -1);
	CHECK_STR(err, "x.o: must be an array");
	CHECK_INT(provjson_bool_at(t, "b", "", &b, err, sizeof(err)), 0);
	CHECK(!b);
	CHECK_INT(provjson_bool_at(t, "i", "pageInfo", &b, err, sizeof(err)), -1);
	CHECK_STR(err, "pageInfo.i: must be true or false");
	CHECK_INT(provjson_bool_at(NULL, "hasNextPage", "pageInfo", &b, err, sizeof(err)), -1);
	CHECK_STR(err, "pageInfo.hasNextPage: is required");

	/* lenient reads */
	CHECK_INT(provjson_reais_peek(json_get(t, "r")), 1050);
	CHECK_INT(provjson_reais_peek(json_get(t, "rs")), -1);
	CHECK_INT(provjson_reais_peek(NULL), -1);
	CHECK_INT(provjson_time_peek(json_get(t, "d"), bankpix_time_ms), 1718210703000LL);
	CHECK_INT(provjson_time_peek(json_get(t, "dz"), bankpix_time_ms), 0);
	CHECK_INT(provjson_time_peek(json_get(t, "i"), bankpix_time_ms), 0);
	yajl_tree_free(t);
}

static void test_kinds_and_lists(void)
{
	static const char *const items[] = {"approved", "refunded"};
	static const char *const others[] = {"pending"};
	char body[64];
	yajl_val t, v = NULL;

	CHECK_INT(provjson_status_kind("refunded", items, 2, others, 1), PROVJSON_ITEM);
	CHECK_INT(provjson_status_kind("pending", items, 2, others, 1), PROVJSON_NOT_ITEM);
	CHECK_INT(provjson_status_kind("Pending", items, 2, others, 1), PROVJSON_UNKNOWN);
	CHECK_INT(provjson_status_kind("", items, 2, others, 1), PROVJSON_UNKNOWN);

	t = tree("{\"data\":[1,2,3],\"refunds\":[{},{}],\"none\":null}");
	CHECK_INT(provjson_page_at(t, "data", 3, &v, err, sizeof(err)), PROVJSON_OK);
	CHECK(v == json_get(t, "data"));
	v = NULL;
	CHECK_INT(provjson_page_at(t, "data", 2, &v, err, sizeof(err)), PROVJSON_TOO_MANY);
	CHECK_STR(err, "data: more than 2 in one page");
	CHECK(v == NULL);
	CHECK_INT(provjson_page_at(t, "results", 2, &v, err, sizeof(err)), PROVJSON_MALFORMED);
	CHECK_STR(err, "results: is required");
	CHECK_INT(provjson_refunds_at(t, "data[0]", &v, err, sizeof(err)), 0);
	CHECK(v == json_get(t, "refunds"));
	CHECK_INT(provjson_refunds_at(json_get(t, "none"), "", &v, err, sizeof(err)), 0);
	CHECK(v == NULL);
	yajl_tree_free(t);

	/* refunds: an array of at most BANKPIX_REFUNDS_MAX */
	t = tree("{\"refunds\":{}}");
	CHECK_INT(provjson_refunds_at(t, "data[0]", &v, err, sizeof(err)), -1);
	CHECK_STR(err, "data[0].refunds: must be an array");
	yajl_tree_free(t);
	{
		char *many = malloc(16 + 3 * (BANKPIX_REFUNDS_MAX + 1));
		size_t n = 0;

		n += (size_t)sprintf(many + n, "{\"refunds\":[");
		for (int i = 0; i <= BANKPIX_REFUNDS_MAX; i++)
			n += (size_t)sprintf(many + n, "%s{}", i ? "," : "");
		sprintf(many + n, "]}");
		t = tree(many);
		CHECK_INT(provjson_refunds_at(t, "", &v, err, sizeof(err)), -1);
		CHECK_STR(err, "refunds: more than 100 refunds of one payment");
		yajl_tree_free(t);
		free(many);
	}

	/* a page's body: the tree capped, the array and its size */
	snprintf(body, sizeof(body), "{\"data\":[1,2],\"hasMore\":false}");
	t = NULL;
	CHECK_INT(provjson_page_parse(body, strlen(body), 100, "data", 2, &t, &v, err, sizeof(err)),
		  PROVJSON_OK);
	CHECK(t && v == json_get(t, "data"));
	yajl_tree_free(t);
	t = NULL;
	CHECK_INT(provjson_page_parse(body, strlen(body), 100, "data", 1, &t, &v, err, sizeof(err)),
		  PROVJSON_TOO_MANY);
	CHECK_STR(err, "data: more than 1 in one page");
	CHECK(t == NULL);
	CHECK_INT(provjson_page_parse(body, strlen(body), 2, "data", 9, &t, &v, err, sizeof(err)),
		  PROVJSON_MALFORMED);
	CHECK(t == NULL);
	CHECK_INT(provjson_page_parse(S("[1]"), 100, "data", 9, &t, &v, err, sizeof(err)),
		  PROVJSON_MALFORMED);
	CHECK_INT(provjson_page_parse(S("{\"data\":{}}"), 100, "data", 9, &t, &v, err, sizeof(err)),
		  PROVJSON_MALFORMED);
	CHECK_STR(err, "data: must be an array");
	CHECK(t == NULL);
}

static void test_refunds(void)
{
	char id[BANKPIX_REFUND_ID_MAX + 1] = "untouched", sha[65], want[BANKPIX_REFUND_ID_MAX + 1];
	char long_id[BANKPIX_REFUND_ID_MAX + 2];
	struct bankpix_refund r = {0};
	char *json;

	CHECK_INT(provjson_refund_id(NULL, id), -1);
	CHECK_INT(provjson_refund_id("", id), -1);
	CHECK_STR(id, "untouched");
	CHECK_INT(provjson_refund_id("D23114447202209161415HPf0GiKMeR4", id), 0);
	CHECK_STR(id, "D23114447202209161415HPf0GiKMeR4");
	/* 35 letters or digits are kept, 36 or a '-' are hashed */
	memset(long_id, 'a', BANKPIX_REFUND_ID_MAX);
	long_id[BANKPIX_REFUND_ID_MAX] = '\0';
	CHECK_INT(provjson_refund_id(long_id, id), 0);
	CHECK_STR(id, long_id);
	long_id[BANKPIX_REFUND_ID_MAX] = 'a';
	long_id[BANKPIX_REFUND_ID_MAX + 1] = '\0';
	CHECK_INT(provjson_refund_id(long_id, id), 0);
	ids_sha256_hex(sha, long_id, strlen(long_id));
	memcpy(want, sha, BANKPIX_REFUND_ID_MAX);
	want[BANKPIX_REFUND_ID_MAX] = '\0';
	CHECK_STR(id, want);
	CHECK_INT(provjson_refund_id("re-1", id), 0);
	ids_sha256_hex(sha, "re-1", 4);
	CHECK(strlen(id) == BANKPIX_REFUND_ID_MAX && strncmp(id, sha, BANKPIX_REFUND_ID_MAX) == 0);
	provjson_hash_id(S("re-1"), want);
	CHECK_STR(want, id);

	snprintf(r.id, sizeof(r.id), "re1");
	r.cents = 1050;
	r.status = BANKPIX_DEVOLVIDO;
	json = provjson_refund_json(&r, "2024-06-12T16:45:03.000Z", NULL);
	CHECK_STR(json, "{\"id\":\"re1\",\"valor\":\"10.50\",\"horario\":{\"solicitacao\":"
			"\"2024-06-12T16:45:03.000Z\"},\"status\":\"DEVOLVIDO\"}");
	free(json);
	snprintf(r.rtr_id, sizeof(r.rtr_id), "D23114447202209161415HPf0GiKMeR4");
	r.status = BANKPIX_EM_PROCESSAMENTO;
	json = provjson_refund_json(&r, "t", "");
	CHECK_STR(json, "{\"id\":\"re1\",\"rtrId\":\"D23114447202209161415HPf0GiKMeR4\",\"valor\":"
			"\"10.50\",\"horario\":{\"solicitacao\":\"t\"},\"status\":"
			"\"EM_PROCESSAMENTO\"}");
	free(json);
	json = provjson_refund_json(&r, "t", "Devolu\xc3\xa7\xc3\xa3o");
	CHECK(json && strstr(json, "\"motivo\":\"Devolu\xc3\xa7\xc3\xa3o\",\"status\""));
	free(json);
	provjson_refunds_free(NULL, 3);
}

static void test_pix(void)
{
	struct bankpix b;
	struct bankpix_refund *rs = calloc(1, sizeof(*rs));
	yajl_gen g;

	rs[0].json = strdup("{\"id\":\"re1\"}");
	g = provjson_pix_begin(&b, "as:", "pay_1", "E00000000202406121645abcdefghijk",
			       "01KAR5Z3W6D2PJ8V2Q1M7XTB0F", 1050, 1718210703000LL);
	json_str(g, "horario");
	json_str(g, "2024-06-12T16:45:03.000Z");
	provjson_pix_provider(g, rs, 1, "asaas");
	provjson_pix_payment(g, "pay_1", "01KAR5Z3W6D2PJ8V2Q1M7XTB0F", "RECEIVED");
	provjson_pix_end(g, &b, rs, 1);
	CHECK_STR(b.id, "as:pay_1");
	CHECK_STR(b.e2e, "E00000000202406121645abcdefghijk");
	CHECK_STR(b.txid, "01KAR5Z3W6D2PJ8V2Q1M7XTB0F");
	CHECK(b.chave == NULL && b.cents == 1050 && b.horario_ms == 1718210703000LL);
	CHECK(b.parts == BANKPIX_PARTS_NONE && b.refunds == rs && b.nrefunds == 1);
	CHECK_STR(b.json, "{\"endToEndId\":\"E00000000202406121645abcdefghijk\",\"txid\":"
			  "\"01KAR5Z3W6D2PJ8V2Q1M7XTB0F\",\"valor\":\"10.50\",\"horario\":"
			  "\"2024-06-12T16:45:03.000Z\",\"devolucoes\":[{\"id\":\"re1\"}],"
			  "\"provider\":{\"name\":\"asaas\",\"paymentId\":\"pay_1\","
			  "\"externalReference\":\"01KAR5Z3W6D2PJ8V2Q1M7XTB0F\",\"status\":"
			  "\"RECEIVED\"}}");
	provjson_refunds_free(b.refunds, b.nrefunds);
	free(b.json);

	/* an e2e that is not the standard's and a reference that is no txid
	 * stay out of the standard's fields */
	g = provjson_pix_begin(&b, "mp:", "123", "E123", "order 7", 5, 0);
	provjson_pix_provider(g, NULL, 0, "mercadopago");
	provjson_pix_payment(g, "123", NULL, "approved");
	provjson_pix_end(g, &b, NULL, 0);
	CHECK_STR(b.e2e, "");
	CHECK_STR(b.txid, "");
	CHECK_STR(b.json, "{\"valor\":\"0.05\",\"devolucoes\":[],\"provider\":{\"name\":"
			  "\"mercadopago\",\"paymentId\":\"123\",\"status\":\"approved\"}}");
	free(b.json);

	g = json_gen_new();
	json_open_array(g);
	provjson_gen_reais(g, 1);
	provjson_gen_reais(g, 999999999999LL);
	json_close_array(g);
	{
		char *s = json_take(g);

		CHECK_STR(s, "[0.01,9999999999.99]");
		free(s);
	}
}

/* A payment item: {"ok": cents} is an item, {"skip": ...} no item, any
 * other a refusal naming its path. */
static int item(yajl_val v, const char *path, struct bankpix *out, char *e, size_t elen)
{
	int64_t c;

	if (json_get(v, "skip"))
		return 1;
	if (!json_is_int64(json_get(v, "ok"), &c))
		return provjson_fail(e, elen, path, "ok", "is required");
	memset(out, 0, sizeof(*out));
	out->cents = c;
	out->json = strdup("{}");
	return 0;
}

static void refuse(yajl_val v, size_t index, const char *e, struct bankpix_refusal *r)
{
	provjson_refusal_make(v, index, e, "x:", NULL, r);
}

static void test_refusals_and_items(void)
{
	yajl_val a = tree("{\"id\":\"pay_1\",\"value\":{\"b\":1,\"a\":2}}");
	yajl_val b = tree("{\"value\":{\"a\":2,\"b\":1},\"id\":\"pay_1\"}");
	struct bankpix_refusal ra, rb;
	struct bankpix_batch batch;

	provjson_refusal_make(a, 3, "data[3].value: is required", "as:", "pay_1", &ra);
	CHECK_STR(ra.id, "as:pay_1");
	CHECK_INT(ra.index, 3);
	CHECK_STR(ra.err, "data[3].value: is required");
	CHECK_STR(ra.reasons, "[\"data[3].value: is required\"]");
	CHECK_STR(ra.item, "{\"id\":\"pay_1\",\"value\":{\"b\":1,\"a\":2}}");
	CHECK(ra.cents == -1 && ra.horario_ms == 0 && ra.e2e[0] == '\0' && ra.chave == NULL);
	free(ra.reasons);
	free(ra.item);
	/* no readable id: the SHA-256 of the payment, its members in byte
	 * order, so the same payment sent again in another order is the same */
	provjson_refusal_make(a, 0, "e", "as:", NULL, &ra);
	provjson_refusal_make(b, 0, "e", "as:", NULL, &rb);
	CHECK_INT(strlen(ra.id), 64);
	CHECK_STR(ra.id, rb.id);
	free(ra.reasons);
	free(ra.item);
	free(rb.reasons);
	free(rb.item);
	yajl_tree_free(a);
	yajl_tree_free(b);

	a = tree("{\"results\":[{\"ok\":5},{\"skip\":1},{\"no\":1},{\"ok\":7}]}");
	provjson_items_read(json_get(a, "results")->u.array.values, 4, "results", NULL, item,
			    refuse, &batch);
	CHECK_INT(batch.n, 2);
	CHECK_INT(batch.nrefused, 1);
	CHECK(batch.n == 2 && batch.items[0].cents == 5 && batch.items[1].cents == 7);
	CHECK(batch.nrefused == 1 && batch.refused[0].index == 2);
	CHECK_STR(batch.refused[0].err, "results[2].ok: is required");
	bankpix_batch_deinit(&batch);
	yajl_tree_free(a);

	/* a lone payment: its fields at the top */
	CHECK_INT(provjson_item_parse(S("{\"no\":1}"), item, refuse, &batch, err, sizeof(err)),
		  PROVJSON_OK);
	CHECK_INT(batch.nrefused, 1);
	CHECK(batch.nrefused == 1 && strcmp(batch.refused[0].err, "ok: is required") == 0);
	bankpix_batch_deinit(&batch);
	memset(&batch, 0x5a, sizeof(batch));
	CHECK_INT(provjson_item_parse(S("[1]"), item, refuse, &batch, err, sizeof(err)),
		  PROVJSON_MALFORMED);
	CHECK(err[0] != '\0');
	CHECK(batch.n == 0x5a5a5a5a5a5a5a5aULL);
}

int main(void)
{
	test_fail_and_path();
	test_predicates();
	test_members();
	test_kinds_and_lists();
	test_refunds();
	test_pix();
	test_refusals_and_items();
	return check_finish("provjson");
}
