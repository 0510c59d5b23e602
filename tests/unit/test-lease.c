/* lease_decode (lease.h): one leased event of event_settle's answer, 5
 * fields: its stream entry, its meta (7 parts), its body, its counts (an
 * event of its own hash) and its account's 3 secrets; anything else is
 * refused. */
#include "pixrelay/relay/lease.h"

#include "check.h"

#include <stdio.h>
#include <string.h>

/* five string replies holding copies of f (lease_decode writes into them) */
struct answer {
	redisReply r[LEASE_FIELDS];
	redisReply *p[LEASE_FIELDS];
	char buf[LEASE_FIELDS][256];
};

static void answer_set(struct answer *a, const char *const f[LEASE_FIELDS])
{
	memset(a, 0, sizeof(*a));
	for (int i = 0; i < LEASE_FIELDS; i++) {
		snprintf(a->buf[i], sizeof(a->buf[i]), "%s", f[i]);
		a->r[i].type = REDIS_REPLY_STRING;
		a->r[i].str = a->buf[i];
		a->r[i].len = strlen(a->buf[i]);
		a->p[i] = &a->r[i];
	}
}

static const char META[] = "ch_1\nsandbox:acc:sink\nevt_1\nsandbox\nacc\nEVENT:CHARGE_PAID\n"
			   "http://sink/hook";

static void test_stream_event(void)
{
	const char *f[] = {"1795000000123-4", META, "{\"id\":\"evt_1\"}", "", "whsec_a\n\npxrwh_c"};
	struct answer a;
	struct lease l;

	answer_set(&a, f);
	CHECK_INT(lease_decode(a.p, LEASE_FIELDS, &l), 0);
	CHECK_STR(l.sid, "1795000000123-4");
	CHECK_STR(l.order, "ch_1");
	CHECK_STR(l.queue, "sandbox:acc:sink");
	CHECK_STR(l.id, "evt_1");
	CHECK_STR(l.env, "sandbox");
	CHECK_STR(l.account, "acc");
	CHECK_STR(l.url, "http://sink/hook");
	CHECK_STR(l.body, "{\"id\":\"evt_1\"}");
	/* a first attempt, its budget from the entry's time */
	CHECK_INT(l.attempts, 1);
	CHECK_INT(l.budget_base, 0);
	CHECK(l.created_ms == 1795000000123LL);
	CHECK_STR(l.signing, "whsec_a");
	CHECK_STR(l.signing_prev, "");
	CHECK_STR(l.compat, "pxrwh_c");
}

static void test_hashed_event(void)
{
	const char *f[] = {"", META, "{}", "3\t1\t1795000000999", "s1\ns0\nc"};
	struct answer a;
	struct lease l;

	answer_set(&a, f);
	CHECK_INT(lease_decode(a.p, LEASE_FIELDS, &l), 0);
	CHECK_STR(l.sid, "");
	CHECK_INT(l.attempts, 3);
	CHECK_INT(l.budget_base, 1);
	CHECK(l.created_ms == 1795000000999LL);
	CHECK_STR(l.signing, "s1");
	CHECK_STR(l.signing_prev, "s0");
	CHECK_STR(l.compat, "c");
}

static void test_malformed(void)
{
	static const char *const bad[][LEASE_FIELDS] = {
	    /* the meta short of a part */
	    {"1-1", "ch\nq\nid\nenv\nacc\nT", "{}", "", "a\nb\nc"},
	    /* an event of its own hash without its counts, or with two */
	    {"", META, "{}", "", "a\nb\nc"},
	    {"", META, "{}", "3\t1", "a\nb\nc"},
	    /* two secrets */
	    {"1-1", META, "{}", "", "a\nb"},
	};
	struct answer a;
	struct lease l;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		answer_set(&a, bad[i]);
		CHECK_INT(lease_decode(a.p, LEASE_FIELDS, &l), -1);
	}
	/* fewer fields than one event's, or one not a string */
	{
		const char *f[] = {"1-1", META, "{}", "", "a\nb\nc"};
		answer_set(&a, f);
		CHECK_INT(lease_decode(a.p, LEASE_FIELDS - 1, &l), -1);
		a.r[2].type = REDIS_REPLY_NIL;
		CHECK_INT(lease_decode(a.p, LEASE_FIELDS, &l), -1);
	}
}

int main(void)
{
	test_stream_event();
	test_hashed_event();
	test_malformed();
	return check_finish("lease");
}
