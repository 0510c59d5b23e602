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

/* Where a bank call's Pix come from. */
enum banks_source {
	BANKS_WEBHOOK = 0,	  /* the bank's webhook (or simulate-pix) */
	BANKS_RECONCILIATION = 1, /* a reconciliation's page (GET /pix, GET /pix/{e2eid}) */
};

/* What a bank call's items became. */
struct banks_received {
	size_t received;   /* items: Pix and refused ones */
	size_t accepted;   /* Pix taken for the first time */
	size_t duplicates; /* items taken before (nothing moved) */
	size_t refused;	   /* refused items reported for the first time */
	/* BANKS_WEBHOOK: the bank's answer, {"received", "accepted",
	 * "duplicates", "refused": [{"index", "endToEndId", "error", "reasons",
	 * "outcome", "event"}], "pix": [{"endToEndId", "outcome", "reason",
	 * "event", "charge", "heldBy"}]}; NULL for a reconciliation */
	const char *json;
};
/* result 0 with r (borrowed for the call), or -1 with err. */
typedef void (*banks_received_fn)(void *ud, int result, const struct banks_received *r,
				  const char *err);

/* Take the Pix of one bank call on connection `who` (copied) and the items
 * it refused: every Pix once per endToEndId, matched to its charge or
 * reported, every refusal logged. cb runs once, later: 0 with what they
 * became, or -1 with err (nothing acknowledged: the bank should send it
 * again). The batch is taken (emptied). A webhook call answered 200 (not
 * every item refused) is the connection's last call (last_call_ms):
 * written at most once a minute per connection and process, before cb. */
void banks_receive(struct banks_queue *q, const struct banks_ref *who, enum banks_source source,
		   struct bankpix_batch *b, banks_received_fn cb, void *ud);

/* Note that the bank of connection `id` called and was answered 200 (its
 * last call, last_call_ms), as banks_receive does for a webhook call: for
 * the bank's other callbacks (/rec). At most once a minute per connection
 * and process; not waited for, cannot fail. */
void banks_note_call(struct banks_queue *q, const char *id);

#endif
