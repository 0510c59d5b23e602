/* banks_recon_decode_claim (banks_recon.h): bank_recon's answer to a claim
 * (the oldest successes of each environment, then 21 fields per leased
 * connection) read into struct banks_claim, each run with what it needs:
 * its connection, its sealed credentials, its pending refunds; every answer
 * of another shape refused, leaving no run behind. */
#include "pixrelay/store/banks_recon.h"

#include "check.h"
#include "replies.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ID "bnk_01KBE0P6SM3T53EQ0E5W4SD1QA"
#define ACCOUNT "01KBE0P6SM3T53EQ0E5W4SD1QB"

/* the RUN fields of a connection with API credentials and two refunds */
static const char *const RUN[BANKS_RECON_RUN_FIELDS] = {ID,
							ACCOUNT,
							"production",
							"pix@loja.example",
							"1795000000000",
							"1795000060000",
							"1795003600000",
							"2",
							"https://api.bank.example/v2",
							"https://auth.bank.example/token",
							"client-1",
							"sealed-secret",
							"-----BEGIN CERTIFICATE-----",
							"sealed-key",
							"",
							"cob.read pix.read",
							"sealed-headers",
							"",
							"",
							"",
							"E123 D1\nE456 D2"};

static void fields(const char **f, size_t *n, const char *const *run)
{
	for (int i = 0; i < BANKS_RECON_RUN_FIELDS; i++)
		f[(*n)++] = run[i];
}

static void test_claim(void)
{
	const char *f[REPLIES_MAX] = {"1795000000123", ""};
	size_t n = 2;
	struct replies a;
	struct banks_claim c;
	const struct banks_run *r;

	fields(f, &n, RUN);
	replies_set(&a, f, n);
	CHECK_INT(banks_recon_decode_claim(&a.top, &c), 0);
	CHECK(c.oldest_ok_ms[ENV_SANDBOX] == 1795000000123LL);
	CHECK(c.oldest_ok_ms[ENV_PRODUCTION] == 0);
	CHECK_INT(c.n, 1);
	r = c.runs[0];
	CHECK_STR(r->ref.id, ID);
	CHECK_STR(r->ref.account, ACCOUNT);
	CHECK_INT(r->ref.env, ENV_PRODUCTION);
	CHECK_STR(r->pix_key, "pix@loja.example");
	CHECK(r->created_ms == 1795000000000LL);
	CHECK(r->api_at_ms == 1795000060000LL);
	CHECK(r->rec_at_ms == 1795003600000LL);
	CHECK_INT(r->failures, 2);
	CHECK_STR(r->api.api_url, "https://api.bank.example/v2");
	CHECK_STR(r->api.token_url, "https://auth.bank.example/token");
	CHECK_STR(r->api.client_id, "client-1");
	CHECK_STR(r->api.client_secret, "sealed-secret");
	CHECK_STR(r->api.cert, "-----BEGIN CERTIFICATE-----");
	CHECK_STR(r->api.key, "sealed-key");
	CHECK(r->api.bank_ca == NULL);
	CHECK_STR(r->api.scope, "cob.read pix.read");
	CHECK_STR(r->api.headers, "sealed-headers");
	CHECK(r->api.query == NULL);
	CHECK_INT(r->nrefunds, 2);
	CHECK_STR(r->refunds[0], "E123 D1");
	CHECK_STR(r->refunds[1], "E456 D2");
	banks_run_free(c.runs[0]);
}

/* nothing due; a run asked for of a connection without credentials, never
 * reconciled, with no refund */
static void test_none_and_bare(void)
{
	const char *f[REPLIES_MAX] = {"", ""};
	const char *bare[BANKS_RECON_RUN_FIELDS];
	size_t n = 2;
	struct replies a;
	struct banks_claim c;

	replies_set(&a, f, n);
	CHECK_INT(banks_recon_decode_claim(&a.top, &c), 0);
	CHECK_INT(c.n, 0);
	CHECK(c.oldest_ok_ms[0] == 0 && c.oldest_ok_ms[1] == 0);
	for (int i = 0; i < BANKS_RECON_RUN_FIELDS; i++)
		bare[i] = i < 5 ? RUN[i] : "";
	fields(f, &n, bare);
	replies_set(&a, f, n);
	CHECK_INT(banks_recon_decode_claim(&a.top, &c), 0);
	CHECK_INT(c.n, 1);
	CHECK(c.runs[0]->api.api_url == NULL);
	CHECK(c.runs[0]->api.client_secret == NULL);
	CHECK(c.runs[0]->rec_at_ms == 0 && c.runs[0]->failures == 0);
	CHECK_INT(c.runs[0]->nrefunds, 0);
	banks_run_free(c.runs[0]);
}

/* The answer with field i of its second run replaced by v: refused. */
static void refused(size_t i, const char *v)
{
	const char *f[REPLIES_MAX] = {"", ""}, *run[BANKS_RECON_RUN_FIELDS];
	size_t n = 2;
	struct replies a;
	struct banks_claim c = {.n = 99};

	fields(f, &n, RUN);
	for (int j = 0; j < BANKS_RECON_RUN_FIELDS; j++)
		run[j] = (size_t)j == i ? v : RUN[j];
	fields(f, &n, run);
	replies_set(&a, f, n);
	CHECK_INT(banks_recon_decode_claim(&a.top, &c), -1);
	CHECK_INT(c.n, 99); /* untouched */
}

static void test_bad_answers(void)
{
	const char *f[REPLIES_MAX] = {"", ""};
	struct replies a;
	struct banks_claim c;
	char many[BANKS_RECON_REFUNDS_MAX * 8 + 8] = "", long_refund[BANKS_RECON_REFUND_MAX + 8];

	/* not an array, too short, a run cut short, an oldest not a number */
	replies_set(&a, f, 2);
	a.top.type = REDIS_REPLY_INTEGER;
	CHECK_INT(banks_recon_decode_claim(&a.top, &c), -1);
	replies_set(&a, f, 1);
	CHECK_INT(banks_recon_decode_claim(&a.top, &c), -1);
	replies_set(&a, f, 3);
	CHECK_INT(banks_recon_decode_claim(&a.top, &c), -1);
	f[0] = "-5";
	replies_set(&a, f, 2);
	CHECK_INT(banks_recon_decode_claim(&a.top, &c), -1);
	/* a field of a run that does not read */
	refused(0, "bnk_nope");
	refused(0, "ch_01KBE0P6SM3T53EQ0E5W4SD1QA");
	refused(1, "01KBE0P6SM3T53EQ0E5W4SD1QB01KBE0P6SM3T53EQ0E5W4SD1QB");
	refused(2, "staging");
	refused(4, "12a");
	refused(7, "-1");
	refused(18, "stripe"); /* a provider this version does not know */
	refused(20, "E123 D1\n\nE456 D2");
	for (int i = 0; i <= BANKS_RECON_REFUNDS_MAX; i++)
		strcat(many, i ? "\nE1 D1" : "E1 D1");
	refused(20, many);
	memset(long_refund, 'x', sizeof(long_refund) - 1);
	long_refund[sizeof(long_refund) - 1] = '\0';
	refused(20, long_refund);
	/* not a string */
	replies_set(&a, f, 2);
	a.r[1].type = REDIS_REPLY_NIL;
	f[0] = "";
	CHECK_INT(banks_recon_decode_claim(&a.top, &c), -1);
}

int main(void)
{
	test_claim();
	test_none_and_bare();
	test_bad_answers();
	return check_finish("banks_recon");
}
