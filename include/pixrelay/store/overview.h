/* overview: how an environment's deliveries stand, or one account's, for the
 * dashboard's first page (GET /v1/overview, docs/dashboard.md): what waits
 * and how late, what was delivered, failed and died per minute, in the last
 * hour and day, which hosts and endpoints failed, which endpoints are
 * disabled. Read from the counters event_settle keeps per call (never per
 * event: src/store/lua/lib/overview.lua) and the shards' queues, with one
 * script per shard (overview_read.lua): an account's shard alone, or every
 * shard of the `shards` setting for an environment. Bounded: O(queues +
 * 204 buckets) per shard, no event read.
 */
#ifndef PIXRELAY_OVERVIEW_H
#define PIXRELAY_OVERVIEW_H

#include "pixrelay/core/config.h"
#include "pixrelay/pix/env.h"
#include "pixrelay/redis/redis.h"
#include "pixrelay/store/store.h"

/* The minutes of the per-minute series the counters keep (3 hours). */
#define OVERVIEW_MINUTES 180

/* The overview of `account` in `env` (NULL: every account of `env`), with
 * its last `minutes` minutes (1 .. OVERVIEW_MINUTES) per minute: json is the
 * object GET /v1/overview answers (docs/openapi.yaml, Overview). A shard
 * that fails fails the call (err). Borrowed: account. */
void overview_read(struct rds *r, const struct config *cfg, enum env env, const char *account,
		   int minutes, store_fn cb, void *ud);

#endif
