/* budget: the dispatcher's arithmetic of how much to lease, kept pure so a
 * unit test can drive it with its own clock: the table of destination hosts
 * with each one's adaptive (AIMD) limit and circuit breaker, the tenants
 * (accounts holding deliveries) with their caps, the environments' shares,
 * and the rates (EWMA per tick) that size every waiting room. What is
 * leased and settled with these numbers is dispatch.c's; the request each
 * delivery makes is delivery.c's.
 */
#include "pixrelay/relay/budget.h"
#include "pixrelay/core/hash.h"

#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/backoff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void budget_init(struct budget *b, const struct config *cfg)
{
	memset(b, 0, sizeof(*b));
	b->cfg = cfg;
}

/* ---- destination hosts ---- */

static unsigned host_bucket(const char *name)
{
	return hash_fnv1a(name, HASH_FNV1A_INIT) % BUDGET_HOST_BUCKETS;
}

static struct budget_host *host_find(struct budget *b, const char *name)
{
	for (struct budget_host *h = b->buckets[host_bucket(name)]; h; h = h->next)
		if (strcmp(h->name, name) == 0)
			return h;
	return NULL;
}

struct budget_host *budget_host_get(struct budget *b, const char *name)
{
	struct budget_host *h = host_find(b, name);
	unsigned k;

	if (h)
		return h;
	k = host_bucket(name);
	h = mem_new(struct budget_host);
	h->name = mem_strdup(name);
	h->limit = (unsigned)b->cfg->delivery_per_host;
	h->cooldown_ms = BUDGET_BREAKER_MIN_MS;
	h->next = b->buckets[k];
	b->buckets[k] = h;
	h->all_next = b->hosts;
	if (b->hosts)
		b->hosts->all_prev = h;
	b->hosts = h;
	b->nhosts++;
	return h;
}

unsigned budget_ahead(const struct budget *b, double rate)
{
	double n = rate * b->settle_ms * 2 / 1000.0;

	return n < BUDGET_HOST_QUEUE_MAX ? (unsigned)n : BUDGET_HOST_QUEUE_MAX;
}

unsigned budget_host_room(const struct budget *b, const struct budget_host *h, uint64_t now)
{
	unsigned held = h->active + h->nwaiting, room;

	if (h->open_until_ms > now)
		return 0;
	if (h->open_until_ms)
		/* half-open: one probe */
		return held || h->probing ? 0 : 1;
	room = h->limit + 1 + budget_ahead(b, h->rate);
	if (room > BUDGET_HOST_QUEUE_MAX)
		room = BUDGET_HOST_QUEUE_MAX;
	return held >= room ? 0 : room - held;
}

unsigned budget_default_room(const struct budget *b)
{
	return (unsigned)b->cfg->delivery_per_host + 1;
}

static void host_free(struct budget *b, struct budget_host *h)
{
	struct budget_host **pp = &b->buckets[host_bucket(h->name)];

	while (*pp != h)
		pp = &(*pp)->next;
	*pp = h->next;
	if (h->all_prev)
		h->all_prev->all_next = h->all_next;
	else
		b->hosts = h->all_next;
	if (h->all_next)
		h->all_next->all_prev = h->all_prev;
	b->nhosts--;
	free(h->name);
	free(h);
}

/* Forget hosts without deliveries that are back to the defaults, or idle
 * for long. */
static void hosts_sweep(struct budget *b, uint64_t now)
{
	struct budget_host *next;

	if (now - b->hosts_swept_ms < 1000)
		return;
	b->hosts_swept_ms = now;
	for (struct budget_host *h = b->hosts; h; h = next) {
		int idle = h->active == 0 && h->nwaiting == 0 && h->leasing == 0;
		int plain = h->limit == (unsigned)b->cfg->delivery_per_host &&
			    h->open_until_ms == 0 && h->failures == 0;
		next = h->all_next;
		if (idle && (plain || now - h->last_ms > BUDGET_HOST_IDLE_MS) &&
		    h->open_until_ms <= now)
			host_free(b, h);
	}
}

bool budget_host_may_start(const struct budget_host *h)
{
	return h->active < h->limit && !(h->open_until_ms && h->probing);
}

void budget_host_started(struct budget_host *h)
{
	h->active++;
	if (h->open_until_ms)
		h->probing = 1;
}

void budget_host_unstarted(struct budget_host *h)
{
	h->active--;
	h->probing = 0;
}

void budget_learn(struct budget *b, struct budget_host *h, enum budget_health health, int fast,
		  uint64_t now)
{
	unsigned max = (unsigned)(b->cfg->delivery_per_host_max > b->cfg->delivery_per_host
				      ? b->cfg->delivery_per_host_max
				      : b->cfg->delivery_per_host);

	h->last_ms = now;
	h->probing = 0;
	if (health != BUDGET_UNREACHABLE) {
		h->failures = 0;
		if (h->open_until_ms) {
			/* the probe was answered: closed again, from one slot */
			h->open_until_ms = 0;
			h->cooldown_ms = BUDGET_BREAKER_MIN_MS;
			h->limit = 1;
			log_info("destination %s answers again: sending to it again", h->name);
		}
	}
	if (health == BUDGET_FINE) {
		if (fast && ++h->successes >= h->limit) {
			h->successes = 0;
			if (h->limit < max)
				h->limit++;
		}
		return;
	}
	h->successes = 0;
	h->limit = h->limit > 1 ? h->limit / 2 : 1;
	if (health != BUDGET_UNREACHABLE)
		return;
	h->failures++;
	if (h->open_until_ms > now)
		return; /* open already: an attempt made before it opened */
	if (h->open_until_ms || h->failures >= BUDGET_BREAKER_FAILURES) {
		/* too many timeouts in a row, or the probe timed out too */
		log_warn("destination %s did not answer %u times in a row: pausing deliveries "
			 "to it for %lld ms",
			 h->name, h->failures, h->cooldown_ms);
		h->open_until_ms = now + (uint64_t)h->cooldown_ms;
		h->cooldown_ms = backoff_double(h->cooldown_ms, BUDGET_BREAKER_MAX_MS);
	}
}

/* ---- tenants and environments ---- */

struct budget_tenant *budget_hold(struct budget *b, const char *account, enum env env)
{
	unsigned k = host_bucket(account) % BUDGET_TENANT_BUCKETS;
	struct budget_tenant *t;

	for (t = b->tenants[k]; t; t = t->next)
		if (strcmp(t->account, account) == 0)
			break;
	if (!t) {
		t = mem_new(struct budget_tenant);
		snprintf(t->account, sizeof(t->account), "%s", account);
		t->next = b->tenants[k];
		b->tenants[k] = t;
		b->ntenants++;
	}
	t->held++;
	b->env_held[env]++;
	return t;
}

void budget_release(struct budget *b, struct budget_tenant *t, enum env env)
{
	b->env_held[env]--;
	t->held--;
}

void budget_done(struct budget *b, struct budget_host *h, struct budget_tenant *t, enum env env)
{
	h->active--;
	h->done_now++;
	t->done_now++;
	b->env_done_now[env]++;
}

static void tenants_tick(struct budget *b)
{
	for (int k = 0; k < BUDGET_TENANT_BUCKETS; k++) {
		struct budget_tenant **pp = &b->tenants[k];
		while (*pp) {
			struct budget_tenant *t = *pp;
			t->rate = 0.7 * t->rate + 0.3 * t->done_now * (1000.0 / BUDGET_TICK_MS);
			t->done_now = 0;
			if (!t->held && t->rate < 1) {
				*pp = t->next;
				b->ntenants--;
				free(t);
			} else {
				pp = &t->next;
			}
		}
	}
}

unsigned budget_env_room(const struct budget *b, enum env env)
{
	unsigned cap = (unsigned)b->cfg->delivery_concurrency;

	if (env == ENV_SANDBOX)
		cap = (unsigned)((unsigned long long)cap *
				 (unsigned long)b->cfg->delivery_sandbox_share / 100);
	cap += budget_ahead(b, b->env_rate[env]);
	return b->env_held[env] >= cap ? 0 : cap - b->env_held[env];
}

unsigned budget_tenant_room(const struct budget *b, const struct budget_tenant *t)
{
	unsigned cap = (unsigned)b->cfg->delivery_per_account + budget_ahead(b, t->rate);

	return t->held >= cap ? 0 : cap - t->held;
}

/* ---- time ---- */

void budget_settled(struct budget *b, double ms)
{
	b->settle_ms = 0.8 * b->settle_ms + 0.2 * ms;
}

void budget_tick(struct budget *b, uint64_t now)
{
	for (struct budget_host *h = b->hosts; h; h = h->all_next) {
		h->rate = 0.7 * h->rate + 0.3 * h->done_now * (1000.0 / BUDGET_TICK_MS);
		h->done_now = 0;
	}
	tenants_tick(b);
	for (int e = 0; e < 2; e++) {
		b->env_rate[e] =
		    0.7 * b->env_rate[e] + 0.3 * b->env_done_now[e] * (1000.0 / BUDGET_TICK_MS);
		b->env_done_now[e] = 0;
	}
	hosts_sweep(b, now);
}

void budget_deinit(struct budget *b)
{
	while (b->hosts)
		host_free(b, b->hosts);
	for (int k = 0; k < BUDGET_TENANT_BUCKETS; k++)
		while (b->tenants[k]) {
			struct budget_tenant *t = b->tenants[k];
			b->tenants[k] = t->next;
			free(t);
		}
}
