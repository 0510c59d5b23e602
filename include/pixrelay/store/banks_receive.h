/* banks_receive: what banks report, written (docs/banks.md). The Pix of a
 * bank's webhook call, or of a reconciliation's page, and each item it sent
 * that failed the standard's schema, are written by the script bank_pix
 * (see its header for its keys), one call per shard per turn of the loop,
 * before the bank gets its answer.
 */
#ifndef PIXRELAY_BANKS_RECEIVE_H
#define PIXRELAY_BANKS_RECEIVE_H

#include "pixrelay/pix/bankpix.h"
#include "pixrelay/store/banks_conn.h"

#include <event2/event.h>

/* Where the Pix of authenticated bank calls wait for their durable write:
 * those of one turn of the loop share one script call per shard (at most
 * 128 Pix a call). Borrowed: base, r, cfg. */
struct banks_queue;
struct banks_queue *banks_queue_new(struct event_base *base, struct rds *r,
				    const struct config *cfg);
/* Free; calls still waiting get cb -1 "redis client closed". */
void banks_queue_free(struct banks_queue *q);

/* Take the Pix of one bank call on connection `c` (copied) and the items
 * it refused, from `source` ("webhook" or "reconciliation"): every Pix once
 * per endToEndId, matched to its charge or reported, every refusal logged.
 * cb runs once, later: 0 with json {"received", "accepted", "duplicates",
 * "refused": [...], "pix": [{"endToEndId", "outcome", "reason", "charge",
 * "event"}]}, or -1 with err (nothing acknowledged: the bank should send it
 * again). The batch is taken (emptied). A "webhook" call answered 200
 * (not every item refused) is the connection's last call (last_call_ms):
 * written at most once a minute per connection and process, before cb. */
void banks_receive(struct banks_queue *q, const struct banks_conn *c, const char *source,
		   struct bankpix_batch *b, store_fn cb, void *ud);

#endif
