/* banks_pix (banks_pix.h): bank_pix's arguments in the order its header
 * gives them, for a Pix with a MED refund and for a refused item; its
 * answer for a Pix (with and without refunds) and for a refused item read
 * into struct banks_pix_heard; every answer of another shape refused. */
#include "pixrelay/store/banks_pix.h"

#include "check.h"
#include "replies.h"

#include <stdio.h>
#include <string.h>

/* argument i of a as text */
static const char *arg(const struct rargs *a, int i, char *buf, size_t size)
{
	snprintf(buf, size, "%.*s", (int)a->lens[i], a->argv[i]);
	return buf;
}

static void test_call(void)
{
	struct banks_pix_call c = {
	    "px:{s3}:bank", "px:{s3}:", 1795000000123LL, "2026-11-18T10:00:00.123Z", 7776000, 1, 1};
	struct bankpix_refund rf = {.id = "D1",
				    .cents = 500,
				    .status = BANKPIX_DEVOLVIDO,
				    .natureza = "MED_OPERACIONAL",
				    .med = 1,
				    .json = "{\"id\":\"D1\"}"};
	struct bankpix p = {.e2e = "E12345678202611181000abcdefghijk",
			    .txid = "",
			    .cents = 1250,
			    .horario_ms = 1795000000000LL,
			    .refunds = &rf,
			    .nrefunds = 1,
			    .json = "{\"valor\":\"12.50\"}"};
	char revt[1][2][EVENT_ID_MAX] = {{"evt_R1", "evt_R2"}};
	struct banks_pix_who w = {"bnk_X", "ACC", "sandbox", "webhook", "2026-11-18"};
	struct banks_pix_item it = {&p, "", "{\"keep\":1}", "evt_P", 500, revt};
	struct bankpix_refusal f = {.index = 3,
				    .e2e = "",
				    .id = "abc",
				    .reasons = "[\"pix[3].valor: bad\"]",
				    .item = "{}",
				    .cents = -1};
	static const char *const want[] = {
	    /* head */
	    "px:{s3}:bank", "px:{s3}:", "1795000000123", "2026-11-18T10:00:00.123Z", "7776000", "1",
	    "1",
	    /* the Pix */
	    "bnk_X", "ACC", "sandbox", "webhook", "2026-11-18", "E12345678202611181000abcdefghijk",
	    "", "", "1250", "1795000000000", "{\"valor\":\"12.50\"}", "{\"keep\":1}", "evt_P",
	    "500", "1", "",
	    /* its refund */
	    "D1", "DEVOLVIDO", "500", "evt_R1", "{\"id\":\"D1\"}", "MED_OPERACIONAL", "1", "evt_R2",
	    /* the refused item */
	    "bnk_X", "ACC", "sandbox", "webhook", "2026-11-18", "3", "abc", "", "", "evt_F",
	    "[\"pix[3].valor: bad\"]", "{}"};
	struct rargs a;
	char buf[128];

	rargs_init(&a);
	banks_pix_args(&a, &c);
	banks_pix_args_pix(&a, &w, &it);
	banks_pix_args_refusal(&a, &w, &f, "evt_F");
	CHECK_INT(a.argc, (int)(sizeof(want) / sizeof(*want)));
	CHECK_INT(a.argc, 7 + BANKS_PIX_ARGS + BANKS_PIX_REFUND_ARGS + BANKS_PIX_REFUSAL_ARGS);
	for (int i = 0; i < a.argc && i < (int)(sizeof(want) / sizeof(*want)); i++)
		CHECK_STR(arg(&a, i, buf, sizeof(buf)), want[i]);
	rargs_deinit(&a);
	/* a refused item whose valor was readable */
	f.cents = 700;
	rargs_init(&a);
	banks_pix_args_refusal(&a, &w, &f, "evt_F");
	CHECK_STR(arg(&a, 8, buf, sizeof(buf)), "700");
	rargs_deinit(&a);
}

static void test_pix(void)
{
	const char *f[] = {"paid", "", "evt_01JA", "01JCHARGE", ""};
	const char *g[] = {"duplicate", "no_txid", "evt_01JB",	"", "bnk_OTHER", "med",
			   "evt_R1",	"evt_R2",  "duplicate", "", ""};
	struct replies a;
	struct banks_pix_heard h;

	CHECK_INT(banks_pix_fields(0), 5);
	CHECK_INT(banks_pix_fields(2), 11);
	replies_set(&a, f, 5);
	CHECK_INT(banks_pix_decode(a.p, a.n, 0, &h), 0);
	CHECK_INT(h.outcome, BANKS_PIX_PAID);
	CHECK_STR(banks_pix_outcome_name(h.outcome), "paid");
	CHECK_STR(h.reason, "");
	CHECK_STR(h.event, "evt_01JA");
	CHECK_STR(h.charge, "01JCHARGE");
	CHECK_STR(h.held_by, "");
	/* with its two refunds */
	replies_set(&a, g, 11);
	CHECK_INT(banks_pix_decode(a.p, a.n, 2, &h), 0);
	CHECK_INT(h.outcome, BANKS_PIX_DUPLICATE);
	CHECK_STR(h.reason, "no_txid");
	CHECK_STR(h.held_by, "bnk_OTHER");
	/* unmatched */
	f[0] = "unmatched";
	f[1] = "amount_mismatch";
	replies_set(&a, f, 5);
	CHECK_INT(banks_pix_decode(a.p, a.n, 0, &h), 0);
	CHECK_INT(h.outcome, BANKS_PIX_UNMATCHED);
	CHECK_STR(h.reason, "amount_mismatch");
}

static void test_refusal(void)
{
	const char *f[] = {"refused", "evt_01JC"};
	struct replies a;
	struct banks_pix_heard h;

	replies_set(&a, f, 2);
	CHECK_INT(banks_pix_decode_refusal(a.p, a.n, &h), 0);
	CHECK_INT(h.outcome, BANKS_PIX_REFUSED);
	CHECK_STR(banks_pix_outcome_name(h.outcome), "refused");
	CHECK_STR(h.event, "evt_01JC");
	CHECK_STR(h.reason, "");
	f[0] = "duplicate";
	replies_set(&a, f, 2);
	CHECK_INT(banks_pix_decode_refusal(a.p, a.n, &h), 0);
	CHECK_INT(h.outcome, BANKS_PIX_DUPLICATE);
}

static void test_bad_answers(void)
{
	const char *good[] = {"paid", "", "evt_1", "", ""};
	const char *g2[] = {"unmatched", "x", "evt_1", "", "", "refunded", "", ""};
	struct replies a;
	struct banks_pix_heard h = {.outcome = BANKS_PIX_PAID, .reason = "kept"};
	char long_word[64];

	/* too few fields, for the Pix or for its refunds */
	replies_set(&a, good, 5);
	CHECK_INT(banks_pix_decode(a.p, 4, 0, &h), -1);
	CHECK_INT(banks_pix_decode(a.p, 5, 1, &h), -1);
	CHECK_INT(banks_pix_decode_refusal(a.p, 1, &h), -1);
	/* an outcome it does not write */
	good[0] = "refused";
	replies_set(&a, good, 5);
	CHECK_INT(banks_pix_decode(a.p, a.n, 0, &h), -1);
	good[0] = "PAID";
	replies_set(&a, good, 5);
	CHECK_INT(banks_pix_decode(a.p, a.n, 0, &h), -1);
	good[0] = "paid";
	/* a refund's outcome it does not write */
	g2[5] = "paid";
	replies_set(&a, g2, 8);
	CHECK_INT(banks_pix_decode(a.p, a.n, 1, &h), -1);
	/* a field that is no word, or longer than it can be */
	good[2] = "evt 1";
	replies_set(&a, good, 5);
	CHECK_INT(banks_pix_decode(a.p, a.n, 0, &h), -1);
	memset(long_word, 'a', sizeof(long_word) - 1);
	long_word[sizeof(long_word) - 1] = '\0';
	good[2] = "evt_1";
	good[4] = long_word;
	replies_set(&a, good, 5);
	CHECK_INT(banks_pix_decode(a.p, a.n, 0, &h), -1);
	/* not a string */
	good[4] = "";
	replies_set(&a, good, 5);
	a.r[1].type = REDIS_REPLY_NIL;
	CHECK_INT(banks_pix_decode(a.p, a.n, 0, &h), -1);
	a.r[1].type = REDIS_REPLY_STRING;
	a.r[0].type = REDIS_REPLY_INTEGER;
	CHECK_INT(banks_pix_decode_refusal(a.p, a.n, &h), -1);
	/* out untouched by every refusal */
	CHECK_INT(h.outcome, BANKS_PIX_PAID);
	CHECK_STR(h.reason, "kept");
}

int main(void)
{
	test_call();
	test_pix();
	test_refusal();
	test_bad_answers();
	return check_finish("banks_pix");
}
