/* janitor: the background work of a delivering process on every shard,
 * besides the deliveries themselves: the expiry of charges whose time has
 * come (charges_expire_due, every second per shard, again at once while
 * full batches come back) and the recovery of transfers left half-done by
 * a process that died (accounts_transfer_recover, every 5 s per shard).
 * The shards' turns are spread over each period. When either finds work,
 * the shard's events are new: the dispatcher is told to settle that shard
 * now (dispatch_kick_shard).
 *
 * One janitor runs next to each dispatcher, on the dispatcher's Redis
 * connection, from its own timer (every 100 ms).
 */
#ifndef PIXRELAY_JANITOR_H
#define PIXRELAY_JANITOR_H

#include "pixrelay/core/config.h"
#include "pixrelay/redis/redis.h"
#include "pixrelay/relay/dispatch.h"

#include <event2/event.h>

struct janitor;

/* Start the janitor of every shard of cfg at once. Borrowed: base, r, cfg
 * and d (the dispatcher it wakes), which outlive it; the answers of calls
 * under way when r is freed come back before janitor_free. */
struct janitor *janitor_new(struct event_base *base, struct rds *r, const struct config *cfg,
			    struct dispatch *d);
/* Start nothing more (calls under way finish). j may be NULL. */
void janitor_stop(struct janitor *j);
/* Free j (NULL is fine), after its Redis connection is freed. */
void janitor_free(struct janitor *j);

#endif
