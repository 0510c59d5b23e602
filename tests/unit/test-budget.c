/* The dispatcher's budgets (budget.h), driven with a clock of the test's
 * own: each host's AIMD limit, its circuit breaker (open, half-open, closed
 * again), the rooms of hosts, tenants and environments, and what the tick
 * forgets. Expected values are derived from budget.h's constants and the
 * settings below. */
#include "pixrelay/relay/budget.h"

#include "check.h"

#include "pixrelay/core/log.h"

#include <math.h>

#define PER_HOST 4
#define PER_HOST_MAX 6
#define PER_ACCOUNT 3
#define CONCURRENCY 10
#define SANDBOX_SHARE 30

static struct config cfg;
static struct budget b; /* big: its tables of buckets */

static void setup(void)
{
	memset(&cfg, 0, sizeof(cfg));
	cfg.delivery_per_host = PER_HOST;
	cfg.delivery_per_host_max = PER_HOST_MAX;
	cfg.delivery_per_account = PER_ACCOUNT;
	cfg.delivery_concurrency = CONCURRENCY;
	cfg.delivery_sandbox_share = SANDBOX_SHARE;
	budget_init(&b, &cfg);
}

static int near(double got, double want)
{
	return fabs(got - want) < 1e-9;
}

/* n fast successes at h */
static void fine(struct budget_host *h, int n, uint64_t now)
{
	for (int i = 0; i < n; i++)
		budget_learn(&b, h, BUDGET_FINE, 1, now);
}

static void test_new_host(void)
{
	struct budget_host *h;

	setup();
	h = budget_host_get(&b, "example.com");
	CHECK_STR(h->name, "example.com");
	CHECK_INT(h->limit, PER_HOST);
	CHECK_INT(h->cooldown_ms, BUDGET_BREAKER_MIN_MS);
	CHECK_INT(b.nhosts, 1);
	CHECK(budget_host_get(&b, "example.com") == h);
	CHECK(budget_host_get(&b, "example.org") != h);
	CHECK_INT(b.nhosts, 2);
	/* its limit, and one more; the same for a host not known yet */
	CHECK_INT(budget_host_room(&b, h, 1000), PER_HOST + 1);
	CHECK_INT(budget_default_room(&b), PER_HOST + 1);
	h->active = 2;
	h->nwaiting = 1;
	CHECK_INT(budget_host_room(&b, h, 1000), PER_HOST + 1 - 3);
	h->nwaiting = PER_HOST;
	CHECK_INT(budget_host_room(&b, h, 1000), 0);
	budget_deinit(&b);
}

static void test_aimd(void)
{
	uint64_t now = 1000000;
	struct budget_host *h;

	setup();
	h = budget_host_get(&b, "h");
	/* additive increase: one more after as many fast successes as the limit */
	fine(h, PER_HOST - 1, now);
	CHECK_INT(h->limit, PER_HOST);
	budget_learn(&b, h, BUDGET_FINE, 0, now); /* slow: does not count */
	CHECK_INT(h->limit, PER_HOST);
	fine(h, 1, now);
	CHECK_INT(h->limit, PER_HOST + 1);
	CHECK_INT(h->successes, 0);
	fine(h, PER_HOST + 1, now);
	CHECK_INT(h->limit, PER_HOST + 2);
	/* up to delivery-per-host-max */
	fine(h, 10 * PER_HOST_MAX, now);
	CHECK_INT(h->limit, PER_HOST_MAX);
	/* multiplicative decrease: halves on 429/5xx/connection failures and
	 * timeouts, down to one; the successes start again */
	fine(h, PER_HOST_MAX - 1, now);
	budget_learn(&b, h, BUDGET_STRAINED, 0, now);
	CHECK_INT(h->limit, PER_HOST_MAX / 2);
	CHECK_INT(h->successes, 0);
	budget_learn(&b, h, BUDGET_UNREACHABLE, 0, now);
	CHECK_INT(h->limit, PER_HOST_MAX / 4);
	for (int i = 0; i < 5; i++)
		budget_learn(&b, h, BUDGET_STRAINED, 0, now);
	CHECK_INT(h->limit, 1);
	CHECK_INT(h->failures, 0); /* a strained host answers: no step towards the breaker */
	CHECK_INT(h->open_until_ms, 0);
	fine(h, 1, now);
	CHECK_INT(h->limit, 2);
	CHECK_INT(h->last_ms, now);
	/* a max below the first limit: the first limit is the max */
	cfg.delivery_per_host_max = PER_HOST - 1;
	h = budget_host_get(&b, "other");
	fine(h, 10 * PER_HOST, now);
	CHECK_INT(h->limit, PER_HOST);
	budget_deinit(&b);
}

static void test_breaker(void)
{
	uint64_t now = 1000000;
	long long period = BUDGET_BREAKER_MIN_MS;
	struct budget_host *h;

	setup();
	h = budget_host_get(&b, "slow");
	for (int i = 0; i < BUDGET_BREAKER_FAILURES - 1; i++)
		budget_learn(&b, h, BUDGET_UNREACHABLE, 0, now);
	CHECK_INT(h->open_until_ms, 0);
	CHECK(budget_host_room(&b, h, now) > 0);
	/* an answer between the timeouts starts the count again */
	budget_learn(&b, h, BUDGET_STRAINED, 0, now);
	CHECK_INT(h->failures, 0);
	for (int i = 0; i < BUDGET_BREAKER_FAILURES - 1; i++)
		budget_learn(&b, h, BUDGET_UNREACHABLE, 0, now);
	CHECK_INT(h->open_until_ms, 0);
	budget_learn(&b, h, BUDGET_UNREACHABLE, 0, now);
	CHECK_INT(h->failures, BUDGET_BREAKER_FAILURES);
	CHECK_INT(h->open_until_ms, now + BUDGET_BREAKER_MIN_MS);
	CHECK_INT(h->cooldown_ms, 2 * BUDGET_BREAKER_MIN_MS);
	/* open: nothing, and a late timeout of an attempt made before does not
	 * extend it */
	CHECK_INT(budget_host_room(&b, h, now), 0);
	CHECK_INT(budget_host_room(&b, h, now + BUDGET_BREAKER_MIN_MS - 1), 0);
	budget_learn(&b, h, BUDGET_UNREACHABLE, 0, now + 1);
	CHECK_INT(h->open_until_ms, now + BUDGET_BREAKER_MIN_MS);
	CHECK_INT(h->cooldown_ms, 2 * BUDGET_BREAKER_MIN_MS);
	/* half-open: one probe, once nothing of the host is held */
	now += BUDGET_BREAKER_MIN_MS;
	h->nwaiting = 1;
	CHECK_INT(budget_host_room(&b, h, now), 0);
	h->nwaiting = 0;
	CHECK_INT(budget_host_room(&b, h, now), 1);
	CHECK(budget_host_may_start(h));
	budget_host_started(h);
	CHECK_INT(h->active, 1);
	CHECK(h->probing);
	CHECK(!budget_host_may_start(h));
	h->active = 0; /* even with a free slot: one probe at a time */
	CHECK(!budget_host_may_start(h));
	CHECK_INT(budget_host_room(&b, h, now), 0);
	/* a probe that could not start (curl refused it) frees the host for
	 * another at once, not when the host is swept */
	h->active = 1;
	budget_host_unstarted(h);
	CHECK_INT(h->active, 0);
	CHECK(!h->probing);
	CHECK(budget_host_may_start(h));
	CHECK_INT(budget_host_room(&b, h, now), 1);
	budget_host_started(h);
	CHECK(h->probing);
	h->active = 1;
	/* the probe times out: open again, for twice as long, doubling up to
	 * the longest period */
	budget_learn(&b, h, BUDGET_UNREACHABLE, 0, now);
	h->active = 0;
	period *= 2;
	CHECK_INT(h->open_until_ms, now + (uint64_t)period);
	CHECK(!h->probing);
	for (int i = 0; i < 20; i++) {
		now = h->open_until_ms;
		budget_host_started(h);
		budget_learn(&b, h, BUDGET_UNREACHABLE, 0, now);
		h->active = 0;
		period = period * 2 > BUDGET_BREAKER_MAX_MS ? BUDGET_BREAKER_MAX_MS : period * 2;
		CHECK_INT(h->open_until_ms, now + (uint64_t)period);
	}
	CHECK_INT(h->open_until_ms - now, BUDGET_BREAKER_MAX_MS);
	/* the probe is answered (slowly: a fast answer would also count
	 * towards the next limit): closed, from one slot, the cool-down reset */
	now = h->open_until_ms;
	budget_host_started(h);
	budget_learn(&b, h, BUDGET_FINE, 0, now);
	h->active = 0;
	CHECK_INT(h->open_until_ms, 0);
	CHECK_INT(h->limit, 1);
	CHECK_INT(h->failures, 0);
	CHECK_INT(h->cooldown_ms, BUDGET_BREAKER_MIN_MS);
	CHECK(!h->probing);
	CHECK_INT(budget_host_room(&b, h, now), 2);
	/* a 5xx also answers a probe: closed again */
	for (int i = 0; i < BUDGET_BREAKER_FAILURES; i++)
		budget_learn(&b, h, BUDGET_UNREACHABLE, 0, now);
	CHECK_INT(h->open_until_ms, now + BUDGET_BREAKER_MIN_MS);
	now += BUDGET_BREAKER_MIN_MS;
	budget_learn(&b, h, BUDGET_STRAINED, 0, now);
	CHECK_INT(h->open_until_ms, 0);
	CHECK_INT(h->limit, 1);
	budget_deinit(&b);
}

static void test_ahead(void)
{
	struct budget_host *h;
	double rate;

	setup();
	/* no round trip measured yet: no waiting room */
	CHECK_INT(budget_ahead(&b, 1000), 0);
	budget_settled(&b, 100);
	CHECK(near(b.settle_ms, 20));
	budget_settled(&b, 100);
	CHECK(near(b.settle_ms, 0.8 * 20 + 0.2 * 100));
	b.settle_ms = 50;
	/* what finishes in two round trips */
	CHECK_INT(budget_ahead(&b, 100), 10);
	CHECK_INT(budget_ahead(&b, 1e9), BUDGET_HOST_QUEUE_MAX);
	/* a host's rate: finished attempts per second, an EWMA per tick */
	h = budget_host_get(&b, "fast");
	h->active = 20;
	for (int i = 0; i < 10; i++)
		budget_done(&b, h, budget_hold(&b, "acct", ENV_SANDBOX), ENV_SANDBOX);
	CHECK_INT(h->active, 10);
	CHECK_INT(h->done_now, 10);
	budget_tick(&b, 1000);
	rate = 0.3 * 10 * (1000.0 / BUDGET_TICK_MS);
	CHECK(near(h->rate, rate));
	CHECK_INT(h->done_now, 0);
	CHECK(near(b.env_rate[ENV_SANDBOX], rate));
	CHECK(near(b.env_rate[ENV_PRODUCTION], 0));
	h->active = 0;
	CHECK_INT(budget_host_room(&b, h, 1000), PER_HOST + 1 + (unsigned)(rate * 50 * 2 / 1000));
	/* at most BUDGET_HOST_QUEUE_MAX, however fast */
	h->rate = 1e9;
	CHECK_INT(budget_host_room(&b, h, 1000), BUDGET_HOST_QUEUE_MAX);
	h->nwaiting = 10;
	CHECK_INT(budget_host_room(&b, h, 1000), BUDGET_HOST_QUEUE_MAX - 10);
	h->nwaiting = 0;
	budget_deinit(&b);
}

static void test_tenant_cap(void)
{
	struct budget_tenant *t[PER_ACCOUNT + 1], *u;

	setup();
	for (int i = 0; i < PER_ACCOUNT; i++) {
		t[i] = budget_hold(&b, "acc_a", ENV_PRODUCTION);
		CHECK(t[i] == t[0]);
		CHECK_INT(budget_tenant_room(&b, t[0]), PER_ACCOUNT - 1 - i);
	}
	CHECK_INT(t[0]->held, PER_ACCOUNT);
	CHECK_INT(b.ntenants, 1);
	/* over the cap (leased before it filled): still 0 */
	t[PER_ACCOUNT] = budget_hold(&b, "acc_a", ENV_PRODUCTION);
	CHECK_INT(budget_tenant_room(&b, t[0]), 0);
	/* another account has its own */
	u = budget_hold(&b, "acc_b", ENV_PRODUCTION);
	CHECK(u != t[0]);
	CHECK_INT(budget_tenant_room(&b, u), PER_ACCOUNT - 1);
	CHECK_INT(b.ntenants, 2);
	budget_release(&b, t[0], ENV_PRODUCTION);
	budget_release(&b, t[0], ENV_PRODUCTION);
	CHECK_INT(budget_tenant_room(&b, t[0]), 1);
	/* a tenant that finishes fast gets room for two round trips more */
	b.settle_ms = 100;
	t[0]->rate = 20;
	CHECK_INT(budget_tenant_room(&b, t[0]), 1 + (unsigned)(20 * 100 * 2 / 1000.0));
	/* forgotten by the tick once it holds nothing and is quiet */
	budget_release(&b, u, ENV_PRODUCTION);
	budget_tick(&b, 1000);
	CHECK_INT(b.ntenants, 1);
	budget_release(&b, t[0], ENV_PRODUCTION);
	budget_release(&b, t[0], ENV_PRODUCTION);
	CHECK_INT(t[0]->held, 0);
	budget_tick(&b, 1000); /* its rate is still >= 1 */
	CHECK_INT(b.ntenants, 1);
	for (int i = 0; i < 20; i++)
		budget_tick(&b, 1000);
	CHECK_INT(b.ntenants, 0);
	CHECK_INT(b.env_held[ENV_PRODUCTION], 0);
	budget_deinit(&b);
}

static void test_env_share(void)
{
	unsigned sandbox = CONCURRENCY * SANDBOX_SHARE / 100;
	struct budget_tenant *t;

	setup();
	CHECK_INT(budget_env_room(&b, ENV_PRODUCTION), CONCURRENCY);
	CHECK_INT(budget_env_room(&b, ENV_SANDBOX), sandbox);
	t = budget_hold(&b, "acc_s", ENV_SANDBOX);
	CHECK_INT(budget_env_room(&b, ENV_SANDBOX), sandbox - 1);
	CHECK_INT(budget_env_room(&b, ENV_PRODUCTION), CONCURRENCY);
	for (unsigned i = 1; i < sandbox + 2; i++)
		budget_hold(&b, "acc_s", ENV_SANDBOX);
	CHECK_INT(b.env_held[ENV_SANDBOX], sandbox + 2);
	CHECK_INT(budget_env_room(&b, ENV_SANDBOX), 0);
	CHECK_INT(budget_env_room(&b, ENV_PRODUCTION), CONCURRENCY);
	budget_release(&b, t, ENV_SANDBOX);
	budget_release(&b, t, ENV_SANDBOX);
	budget_release(&b, t, ENV_SANDBOX);
	CHECK_INT(budget_env_room(&b, ENV_SANDBOX), 1);
	/* raised by what the environment finishes in two round trips */
	b.settle_ms = 100;
	b.env_rate[ENV_SANDBOX] = 50;
	CHECK_INT(budget_env_room(&b, ENV_SANDBOX), 1 + (unsigned)(50 * 100 * 2 / 1000.0));
	/* a share of 100 % is the whole capacity */
	cfg.delivery_sandbox_share = 100;
	b.env_rate[ENV_SANDBOX] = 0;
	CHECK_INT(b.env_held[ENV_SANDBOX], 2);
	CHECK_INT(budget_env_room(&b, ENV_SANDBOX), CONCURRENCY - 2);
	budget_deinit(&b);
}

static void test_sweep(void)
{
	uint64_t now = 10000000;
	struct budget_host *plain, *tuned, *busy, *open;

	setup();
	plain = budget_host_get(&b, "plain");
	tuned = budget_host_get(&b, "tuned");
	busy = budget_host_get(&b, "busy");
	open = budget_host_get(&b, "open");
	fine(tuned, PER_HOST, now);
	CHECK_INT(tuned->limit, PER_HOST + 1);
	busy->leasing = 1;
	for (int i = 0; i < BUDGET_BREAKER_FAILURES; i++)
		budget_learn(&b, open, BUDGET_UNREACHABLE, 0, now);
	(void)plain;
	/* a host back to the defaults, holding nothing, goes at once */
	budget_tick(&b, now);
	CHECK_INT(b.nhosts, 3);
	CHECK(b.hosts == open);
	/* at most once a second */
	busy->leasing = 0;
	budget_tick(&b, now + 999);
	CHECK_INT(b.nhosts, 3);
	budget_tick(&b, now + 1000);
	CHECK_INT(b.nhosts, 2);
	/* one that learned something is kept while not idle for long, and an
	 * open one while its circuit is open */
	budget_tick(&b, now + BUDGET_HOST_IDLE_MS);
	CHECK_INT(b.nhosts, 2);
	budget_tick(&b, now + BUDGET_HOST_IDLE_MS + 1000);
	CHECK_INT(b.nhosts, 0);
	CHECK(b.hosts == NULL);
	budget_deinit(&b);
}

int main(void)
{
	log_set_level(LOG_ERROR);
	test_new_host();
	test_aimd();
	test_breaker();
	test_ahead();
	test_tenant_cap();
	test_env_share();
	test_sweep();
	return check_finish("budget");
}
