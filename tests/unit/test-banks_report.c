/* banks_report_decode (banks_report.h): bank_report's answer for a
 * connection and a day read into struct banks_report_reply: the
 * connection's instants, whether it has API credentials, the day's counts
 * and lists (borrowed), the spans read (a member that does not read left
 * out); {} is no such connection; every other shape refused. */
#include "pixrelay/store/banks_report.h"

#include "check.h"
#include "replies.h"

#include <stdlib.h>
#include <string.h>

/* bank_report's answer: {conn, day, recovered, their count, spans,
 * elsewhere, their count} */
struct report_answer {
	redisReply top;
	redisReply *top_p[7];
	struct replies conn, day, recovered, spans, elsewhere;
	redisReply nrecovered, nelsewhere;
};

static void answer_set(struct report_answer *a, const char *const *conn)
{
	static const char *const day[] = {"webhook", "3", "nature_MED_OPERACIONAL", "1"};
	static const char *const recovered[] = {"E1", "E2"};
	static const char *const spans[] = {"1795000000000-1795003600000", "junk",
					    "1795007200000-1795010800000"};
	static const char *const elsewhere[] = {"E3 bnk_OTHER"};

	memset(a, 0, sizeof(*a));
	replies_set(&a->conn, conn, 7);
	replies_set(&a->day, day, 4);
	replies_set(&a->recovered, recovered, 2);
	replies_set(&a->spans, spans, 3);
	replies_set(&a->elsewhere, elsewhere, 1);
	a->nrecovered.type = a->nelsewhere.type = REDIS_REPLY_INTEGER;
	a->nrecovered.integer = 2;
	a->nelsewhere.integer = 1;
	a->top_p[0] = &a->conn.top;
	a->top_p[1] = &a->day.top;
	a->top_p[2] = &a->recovered.top;
	a->top_p[3] = &a->nrecovered;
	a->top_p[4] = &a->spans.top;
	a->top_p[5] = &a->elsewhere.top;
	a->top_p[6] = &a->nelsewhere;
	a->top.type = REDIS_REPLY_ARRAY;
	a->top.element = a->top_p;
	a->top.elements = 7;
}

static const char *const CONN[] = {"sandbox",	    "01KBE0P6SM3T53EQ0E5W4SD1QB", "1795003600000",
				   "1795003600500", "https://api.bank.example",	  "1795000000000",
				   "1795000060000"};

static void test_report(void)
{
	static struct report_answer a;
	struct banks_report_reply r;

	answer_set(&a, CONN);
	CHECK_INT(banks_report_decode(&a.top, &r), 0);
	CHECK(r.rec_at_ms == 1795003600000LL);
	CHECK(r.created_ms == 1795000000000LL);
	CHECK(r.api_at_ms == 1795000060000LL);
	CHECK(r.has_api);
	CHECK(r.day == &a.day.top);
	CHECK(r.recovered == &a.recovered.top);
	CHECK(r.elsewhere == &a.elsewhere.top);
	CHECK_INT(r.nspans, 2);
	CHECK(r.spans[0].from_ms == 1795000000000LL && r.spans[0].to_ms == 1795003600000LL);
	CHECK(r.spans[1].from_ms == 1795007200000LL && r.spans[1].to_ms == 1795010800000LL);
	free(r.spans);
}

/* never reconciled, no credentials: its instants 0, has_api false */
static void test_bare(void)
{
	static struct report_answer a;
	const char *conn[] = {"sandbox", "A", "", "", "", "1795000000000", ""};
	struct banks_report_reply r;

	answer_set(&a, conn);
	CHECK_INT(banks_report_decode(&a.top, &r), 0);
	CHECK(r.rec_at_ms == 0 && r.api_at_ms == 0 && !r.has_api);
	free(r.spans);
}

static void test_not_found_and_bad(void)
{
	static struct report_answer a;
	struct banks_report_reply r = {.nspans = 99};
	const char *conn[7];
	redisReply none = {.type = REDIS_REPLY_ARRAY};

	CHECK_INT(banks_report_decode(&none, &r), BANKS_NOT_FOUND);
	none.type = REDIS_REPLY_NIL;
	CHECK_INT(banks_report_decode(&none, &r), -1);
	/* an instant that is no number */
	memcpy(conn, CONN, sizeof(conn));
	conn[2] = "soon";
	answer_set(&a, conn);
	CHECK_INT(banks_report_decode(&a.top, &r), -1);
	/* a part of another type, or missing */
	answer_set(&a, CONN);
	a.top_p[3] = &a.day.top;
	CHECK_INT(banks_report_decode(&a.top, &r), -1);
	answer_set(&a, CONN);
	a.day.top.elements = 3; /* a field without its value */
	CHECK_INT(banks_report_decode(&a.top, &r), -1);
	answer_set(&a, CONN);
	a.conn.top.elements = 6;
	CHECK_INT(banks_report_decode(&a.top, &r), -1);
	answer_set(&a, CONN);
	a.top.elements = 6;
	CHECK_INT(banks_report_decode(&a.top, &r), -1);
	CHECK_INT(r.nspans, 99); /* untouched */
}

int main(void)
{
	test_report();
	test_bare();
	test_not_found_and_bad();
	return check_finish("banks_report");
}
