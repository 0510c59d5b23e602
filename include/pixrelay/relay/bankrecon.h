/* bankrecon: the reconciliation of bank connections (docs/bank-api.md,
 * "Reconciliation"). A bank's webhook promises nothing: a Pix it never
 * sends is money the merchant received and never heard of. So every
 * bank-reconcile-interval seconds, for each connection with API
 * credentials, one process of the deployment (the one whose claim of the
 * connection's shard leased it: store/banks_recon.h) asks the bank for the Pix received since the
 * last reconciliation (GET /pix, page by page, the window overlapping the
 * last one), and feeds them to the same write as the webhook's
 * (banks_receive, source "reconciliation"): what was heard already is a
 * duplicate, what was missed pays its charge or is reported. It then asks
 * about the refunds pixrelay requested and has not heard settled (GET
 * /pix/{e2eid}). A failure is recorded with the connection and retried
 * with a growing delay; nothing moves the reconciled instant but a whole
 * successful window.
 *
 * It runs next to the dispatcher, on its Redis connection, from its own
 * timer that claims the shards one after another; at most a few
 * connections at once per process.
 */
#ifndef PIXRELAY_BANKRECON_H
#define PIXRELAY_BANKRECON_H

#include "pixrelay/core/config.h"
#include "pixrelay/core/seal.h"
#include "pixrelay/redis/redis.h"
#include "pixrelay/relay/bankapi.h"
#include "pixrelay/relay/dispatch.h"
#include "pixrelay/store/banks_receive.h"

#include <event2/event.h>
#include <stdbool.h>

struct bankrecon;

/* A reconciler. With claims, it starts reconciling every due connection
 * (a server); without, it runs only what bankrecon_run asks (the CLI).
 * Borrowed, and outliving it: base, r, cfg, api (the bank client), keys
 * (the credentials key, looked for when a run needs it: without one, runs
 * fail saying so), q (where the Pix are written), d (woken when they wrote
 * events; may be NULL). */
struct bankrecon *bankrecon_new(struct event_base *base, struct rds *r, const struct config *cfg,
				struct bankapi *api, struct seal_keyfile *keys,
				struct banks_queue *q, struct dispatch *d, int claims);
/* Reconcile connection `id` of env now, whatever its schedule (the CLI's
 * `pixrelay bank reconcile`). since_ms 0: from its reconciled instant, as a
 * scheduled run. Else from since_ms (no earlier than the event retention
 * allows) to now, in windows of at most a day, the newest first, what they
 * read recorded with the run's end (banks_recon_finish); a window that fails
 * after one was read stops the run there, with what it read kept. cb runs
 * once: 0 with {"connection", "from", "to", "readFrom" (how far back the
 * windows read reach; null: none), "windows", "stopped" (why it stopped
 * short of "from"; null), "pages", "listed", "new", "refundsAsked",
 * "reconciledUntil" (null: the reconciled instant stays)}; BANKS_NOT_FOUND
 * (no such connection in env); BANKS_NO_API (it has no API
 * credentials); or -1 with why. */
void bankrecon_run(struct bankrecon *rc, enum env env, const char *id, long long since_ms,
		   store_fn cb, void *ud);

/* Start nothing more; runs under way are abandoned at their next step
 * (their leases run out and another process takes them). rc may be NULL. */
void bankrecon_stop(struct bankrecon *rc);
/* Free rc (NULL is fine); it goes when its last run's answer comes back
 * (when the clients it uses are freed). */
void bankrecon_free(struct bankrecon *rc);

/* For /metrics: seconds since the oldest last success of any connection
 * of env with API credentials (what the last claim of each shard saw);
 * false, *seconds untouched, when there was none. */
bool bankrecon_age(const struct bankrecon *rc, enum env env, double *seconds);

#endif
