/* janitor: the periodic work a delivering process does for every shard
 * besides delivering: expiring due charges, finishing half-done transfers
 * and trimming the stream of events past the retention (and with it, what
 * disabled webhook endpoints keep past the retention), each on its own
 * schedule per shard, and waking the dispatcher's shard when one of them
 * wrote events. The dispatcher (dispatch.c) leases and settles deliveries
 * and beats its own heartbeat; the domain calls themselves are the stores'
 * (charges.c, transfers.c, events.c).
 */
#include "pixrelay/relay/janitor.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/store/transfers.h"
#include "pixrelay/store/charges.h"
#include "pixrelay/store/endpoints.h"
#include "pixrelay/store/events.h"

#include <stdlib.h>
#include <sys/time.h>

#define TICK_MS 100	      /* the periodic look at every shard's timers */
#define EXPIRY_EVERY_MS 1000  /* per shard */
#define RECOVER_EVERY_MS 5000 /* per shard */
#define TRIM_EVERY_MS 60000   /* per shard */

struct janitor_shard {
	struct janitor *j;
	int id;
	uint64_t expiry_ms;  /* when its due charges are looked at next */
	uint64_t recover_ms; /* when its half-done transfers are looked at next */
	uint64_t trim_ms;    /* when its stream is trimmed next */
	int expiring, recovering, trimming;
};

struct janitor {
	struct rds *r;
	const struct config *cfg;
	struct dispatch *d;
	struct event *tick; /* every TICK_MS */
	int stopped;
	int nshards;
	struct janitor_shard *shards;
};

static void on_expired(void *ud, int n)
{
	struct janitor_shard *s = ud;

	s->expiring = 0;
	if (n >= 16)
		s->expiry_ms = 0; /* more are due: again at the next tick */
	if (n > 0)
		dispatch_kick_shard(s->j->d, s->id);
}

static void on_recovered(void *ud, int n)
{
	struct janitor_shard *s = ud;

	s->recovering = 0;
	if (n > 0)
		dispatch_kick_shard(s->j->d, s->id);
}

static void on_held_expired(void *ud, long long n)
{
	struct janitor_shard *s = ud;

	s->trimming = 0;
	if (n >= 256)
		s->trim_ms = 0; /* more are past the retention: again at the next tick */
}

/* The stream trimmed: then what disabled endpoints keep past the retention
 * is dead (its event's body goes with the stream's entry). */
static void on_trimmed(void *ud, long long n)
{
	struct janitor_shard *s = ud;

	(void)n;
	if (s->j->stopped || !rds_ready(s->j->r)) {
		s->trimming = 0;
		return;
	}
	endpoints_expire(s->j->r, s->j->cfg, s->id, ids_now_ms(), on_held_expired, s);
}

static void on_tick(evutil_socket_t fd, short kind, void *arg)
{
	struct janitor *j = arg;
	uint64_t now = ids_now_ms();

	if (j->stopped || !rds_ready(j->r))
		return;
	for (int i = 0; i < j->nshards; i++) {
		struct janitor_shard *s = &j->shards[i];
		if (!s->expiring && now >= s->expiry_ms) {
			s->expiring = 1;
			s->expiry_ms = now + EXPIRY_EVERY_MS;
			charges_expire_due(j->r, j->cfg, s->id, on_expired, s);
		}
		if (!s->recovering && now >= s->recover_ms) {
			s->recovering = 1;
			s->recover_ms = now + RECOVER_EVERY_MS;
			transfers_recover(j->r, j->cfg, s->id, on_recovered, s);
		}
		if (!s->trimming && now >= s->trim_ms) {
			s->trimming = 1;
			s->trim_ms = now + TRIM_EVERY_MS;
			events_trim(j->r, j->cfg, s->id, now, on_trimmed, s);
		}
	}
}

struct janitor *janitor_new(struct event_base *base, struct rds *r, const struct config *cfg,
			    struct dispatch *d)
{
	struct janitor *j = mem_new(struct janitor);
	struct timeval tv = {0, TICK_MS * 1000};
	uint64_t now = ids_now_ms();

	j->r = r;
	j->cfg = cfg;
	j->d = d;
	j->nshards = (int)cfg->shards;
	j->shards = mem_calloc((size_t)j->nshards, sizeof(*j->shards));
	for (int i = 0; i < j->nshards; i++) {
		j->shards[i].j = j;
		j->shards[i].id = i;
		/* spread the periodic work of the shards over its period */
		j->shards[i].expiry_ms = now + (uint64_t)(i * EXPIRY_EVERY_MS / j->nshards);
		j->shards[i].recover_ms = now + (uint64_t)(i * RECOVER_EVERY_MS / j->nshards);
		j->shards[i].trim_ms = now + (uint64_t)(i * TRIM_EVERY_MS / j->nshards);
	}
	j->tick = event_new(base, -1, EV_PERSIST, on_tick, j);
	event_add(j->tick, &tv);
	return j;
}

void janitor_stop(struct janitor *j)
{
	if (j) {
		j->stopped = 1;
		event_del(j->tick);
	}
}

void janitor_free(struct janitor *j)
{
	if (!j)
		return;
	event_free(j->tick);
	free(j->shards);
	free(j);
}
