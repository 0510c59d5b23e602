/* lease_decode (lease.h): one leased event of event_settle's answer, 5
 * fields: its stream entry, its meta (7 parts), its body, its counts (an
 * event of its own hash) and its account's 3 secrets; anything else is
 * refused. lease_batch: the token of an answer's stream leases. The entries
 * a dispatcher reads itself: their meta's head, the event of one given
 * (meta and body "" in the answer), the cursor an answer ends with. */
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

/* an answer of n string elements "x" (el and p hold them) */
static void answer_of(redisReply *answer, redisReply *el, redisReply **p, size_t n)
{
	memset(el, 0, n * sizeof(*el));
	for (size_t i = 0; i < n; i++) {
		el[i].type = REDIS_REPLY_STRING;
		el[i].str = (char *)"x";
		el[i].len = 1;
		p[i] = &el[i];
	}
	answer->type = REDIS_REPLY_ARRAY;
	answer->element = p;
	answer->elements = n;
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

/* lease_batch: the first and last stream entries of an answer's leases */
static void test_batch(void)
{
	static const char *const sids[] = {"", "1795000000123-4", "", "1795000000124-0",
					   "1795000000130-12"};
	redisReply el[LEASE_REPLY_FIRST + 5 * LEASE_FIELDS],
	    *p[LEASE_REPLY_FIRST + 5 * LEASE_FIELDS];
	redisReply answer;
	char out[LEASE_TOKEN_MAX];

	answer_of(&answer, el, p, sizeof(el) / sizeof(el[0]));
	for (int k = 0; k < 5; k++) {
		el[LEASE_REPLY_FIRST + k * LEASE_FIELDS].str = (char *)sids[k];
		el[LEASE_REPLY_FIRST + k * LEASE_FIELDS].len = strlen(sids[k]);
	}
	lease_batch(&answer, out, sizeof(out));
	CHECK_STR(out, "@1795000000123-4/1795000000130-12");
	/* one stream event: a batch of one */
	answer.elements = LEASE_REPLY_FIRST + 2 * LEASE_FIELDS;
	lease_batch(&answer, out, sizeof(out));
	CHECK_STR(out, "@1795000000123-4/1795000000123-4");
	/* events of their own hash only, or nothing leased */
	answer.elements = LEASE_REPLY_FIRST + LEASE_FIELDS;
	lease_batch(&answer, out, sizeof(out));
	CHECK_STR(out, "");
	answer.elements = LEASE_REPLY_FIRST;
	lease_batch(&answer, out, sizeof(out));
	CHECK_STR(out, "");
	/* no room: none rather than a cut one */
	answer.elements = sizeof(el) / sizeof(el[0]);
	lease_batch(&answer, out, 20);
	CHECK_STR(out, "");
}

/* an entry the dispatcher gave: its meta and body are its own, not the
 * answer's; the head of a meta; the cursor at an answer's end */
static void test_given(void)
{
	const char *f[] = {"1795000000123-4", "", "", "", "whsec_a\n\npxrwh_c"};
	char meta[sizeof(META)];
	struct answer a;
	struct lease l;
	redisReply el[LEASE_REPLY_FIRST + LEASE_FIELDS + 1],
	    *p[LEASE_REPLY_FIRST + LEASE_FIELDS + 1];
	redisReply answer;

	answer_set(&a, f);
	memcpy(meta, META, sizeof(META));
	CHECK_INT(lease_decode_given(a.p, LEASE_FIELDS, meta, "{}", &l), 0);
	CHECK_STR(l.id, "evt_1");
	CHECK_STR(l.url, "http://sink/hook");
	CHECK_STR(l.body, "{}");
	CHECK_STR(l.signing, "whsec_a");
	/* the answer's empty meta is not a meta */
	answer_set(&a, f);
	CHECK_INT(lease_decode(a.p, LEASE_FIELDS, &l), -1);
	CHECK_INT(lease_meta_has_head(META), 1);
	CHECK_INT(lease_meta_has_head("ch_1\nsandbox:acc:sink\nevt_1"), 0);
	CHECK_INT(lease_meta_has_head(""), 0);
	{
		struct rargs r;
		rargs_init(&r);
		CHECK_INT(lease_args_entry(&r, "1-0", META), 0);
		CHECK_INT(r.argc, 4);
		CHECK(r.lens[1] == 4 && memcmp(r.argv[1], "ch_1", 4) == 0);
		CHECK(r.lens[2] == 16 && memcmp(r.argv[2], "sandbox:acc:sink", 16) == 0);
		CHECK(r.lens[3] == 5 && memcmp(r.argv[3], "evt_1", 5) == 0);
		CHECK_INT(lease_args_entry(&r, "1-1", "a\nb"), -1);
		CHECK_INT(r.argc, 4);
		rargs_deinit(&r);
	}
	/* the cursor: the one element past the leases, else none */
	answer_of(&answer, el, p, sizeof(el) / sizeof(el[0]));
	el[LEASE_REPLY_FIRST + LEASE_FIELDS].str = (char *)"1795000000130-12";
	CHECK_STR(lease_cursor(&answer), "1795000000130-12");
	answer.elements = LEASE_REPLY_FIRST + LEASE_FIELDS;
	CHECK(lease_cursor(&answer) == NULL);
	el[1].str = (char *)"";
	answer.elements = LEASE_REPLY_FIRST + 1;
	el[LEASE_REPLY_FIRST].str = (char *)"";
	CHECK_STR(lease_cursor(&answer), "");
}

int main(void)
{
	test_given();
	test_batch();
	test_stream_event();
	test_hashed_event();
	test_malformed();
	return check_finish("lease");
}
