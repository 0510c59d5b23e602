/* ingest: notifications from an upstream payment provider.
 *
 * POST /v1/webhooks/ingest/{accountId} takes the spec provider's format,
 * {"id": <upstream event id>, "event": "EVENT:CHARGE_PAID" | "EVENT:CHARGE_EXPIRED"
 * | "EVENT:CHARGE_REFUND", "data": {<charge>, "id": ...}}, authenticated with the
 * account's ingest secret. A charge pixrelay knows moves through the same
 * state machine as its own endpoints, when the notification's data.amount and
 * data.status (if given) agree with it; an unknown one is relayed as received.
 * Either way the upstream id deduplicates, and the answer comes only once the
 * event is in Redis (fsynced with the embedded Redis).
 */
#ifndef PIXRELAY_INGEST_H
#define PIXRELAY_INGEST_H

#include "pixrelay/store/auth.h"
#include "pixrelay/store/charges.h"
#include "pixrelay/core/config.h"
#include "pixrelay/redis/redis.h"

#include <event2/event.h>

#include <stddef.h>
#include <stdint.h>

#define INGEST_ID_MAX 128

/* A parsed notification; strings owned. */
struct ingest_note {
	char *id;	 /* upstream event id */
	char *event;	 /* one of the three names */
	char *charge_id; /* data.id */
	char *data_json; /* data, its bytes exactly as received */
	char *status;	 /* data.status, one of the five; NULL when absent or null */
	int has_amount;	 /* data.amount was given (not absent, not null) */
	int64_t amount;	 /* data.amount, integer cents, when has_amount */
};

/* Parse and check a notification body. data.amount, when given, must be an
 * integer number of cents and data.status one of the charge's five statuses
 * (null is absent); other fields of data are not read. Returns 0, or -1 with
 * "field: rule". */
int ingest_parse(const char *body, size_t len, struct ingest_note *out, char *err, size_t errlen);
void ingest_note_deinit(struct ingest_note *n);

/* The charge action an event name asks for. */
enum charges_action ingest_action(const char *event);

/* The status a charge has after the event `event` (one of the three names):
 * PAID, EXPIRED or REFUNDED. A notification whose data.status is another one
 * contradicts itself and moves no charge (ingest_submit). */
const char *ingest_event_status(const char *event);

/* Verify the caller: a Standard Webhooks signature (webhook-id,
 * webhook-timestamp within 5 minutes, webhook-signature) over the raw body,
 * or, for compatibility, `signature` equal to the secret (constant time).
 * Returns 0 when authentic, -1 otherwise with the reason in err. */
int ingest_verify(const char *secret, const char *wh_id, const char *wh_ts, const char *wh_sig,
		  const char *compat_sig, const char *body, size_t len, long long now_s, char *err,
		  size_t errlen);

/* Where verified notifications wait for their durable write: the
 * notifications that arrive during one turn of the loop are written by one
 * script call (`ingest`) per shard (up to 128 each), so that many share one
 * round trip and one fsync. Borrowed: base, r, cfg. */
struct ingest_queue;
struct ingest_queue *ingest_queue_new(struct event_base *base, struct rds *r,
				      const struct config *cfg);
/* Free; notifications still waiting get cb -1 "redis client closed". */
void ingest_queue_free(struct ingest_queue *q);

/* Take a verified notification for `account`: once per upstream
 * notification id, either the charge it names moves through the state
 * machine with its event, or, for a charge pixrelay does not know (nor one
 * of another account), it is relayed as received. A notification about a
 * charge of the account that contradicts it (data.amount other than the
 * charge's amount, data.status other than ingest_event_status) moves
 * nothing. A notification that moves nothing is not remembered: its id may
 * come again. cb runs once, later, with 0 (json = the charge; its event id
 * in event_out), CHARGES_RELAYED or CHARGES_DUPLICATE (json = the event id),
 * CHARGES_EXPIRED (json = the charge, which expired instead; the event id in
 * event_out), CHARGES_REFUSED or CHARGES_STATUS_MISMATCH (json = the charge's
 * status), CHARGES_AMOUNT_MISMATCH (json = the charge's amount),
 * CHARGES_INSUFFICIENT (json = the balance), or -1 with err. event_out is
 * NULL or EVENT_ID_MAX bytes that live until cb runs. */
void ingest_submit(struct ingest_queue *q, enum env env, const char *account,
		   const struct ingest_note *n, char *event_out, store_fn cb, void *ud);

#endif
