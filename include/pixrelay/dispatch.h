/* dispatch: delivers postbacks from the Redis delivery queues.
 *
 * The curl multi interface runs on the process's libevent loop (no threads):
 * curl tells which sockets to watch and when to wake, libevent calls back.
 * Each tick the dispatcher pumps the outboxes into the shards, expires due
 * charges, and leases due events from the shards, as many as its
 * concurrency allows. A lease lasts longer than a request can (timeout plus a
 * margin), so one event is never in flight twice; if this process dies, its
 * leases run out and any process delivers the events again.
 */
#ifndef PIXRELAY_DISPATCH_H
#define PIXRELAY_DISPATCH_H

#include "pixrelay/config.h"
#include "pixrelay/redis.h"

#include <event2/event.h>

struct dispatch;

/* Create a dispatcher; it starts working at once. Borrowed: base, r, cfg.
 * Returns NULL after logging when curl cannot be set up. */
struct dispatch *dispatch_new(struct event_base *base, struct rds *r, const struct config *cfg);
/* Something was just written: look at the outboxes and queues now. */
void dispatch_kick(struct dispatch *d);
/* Stop taking new work; deliveries in flight go on. */
void dispatch_stop(struct dispatch *d);
/* Deliveries in flight. */
unsigned dispatch_inflight(const struct dispatch *d);
/* Abandon what is in flight (its leases will run out) and free. */
void dispatch_free(struct dispatch *d);

/* Delivery outcome of one attempt (pure, for tests): given the HTTP status
 * (0 when none) and curl's result, is it a success, a stop (410), or a
 * failure to retry? */
enum dispatch_verdict { DISPATCH_OK = 0, DISPATCH_RETRY = 1, DISPATCH_STOP = 2 };
enum dispatch_verdict dispatch_judge(long http_status, int curl_ok);

#endif
