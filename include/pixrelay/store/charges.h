/* charges: Pix charges in Redis (create, read, the QR lookup, state
 * changes, expiry), asynchronous.
 *
 * A charge lives in the shard of its account (keyspace.h): its id names that
 * shard, and its state change, the account's balance and ledger and the
 * event it produces are one script on one slot.
 */
#ifndef PIXRELAY_CHARGES_H
#define PIXRELAY_CHARGES_H

#include "pixrelay/store/store.h"
#include "pixrelay/store/auth.h"
#include "pixrelay/pix/charge.h"
#include "pixrelay/core/config.h"
#include "pixrelay/pix/page.h"
#include "pixrelay/redis/redis.h"

#include <stdbool.h>

/* Expected outcomes besides 0. */
enum charges_result {
	CHARGES_EXISTING = 1, /* the same request with this externalID was made before */
	CHARGES_CONFLICT = 2, /* another request already used this externalID */
	CHARGES_NOT_FOUND = 3,
	CHARGES_REFUSED = 4,	  /* not allowed from the current status (json = status) */
	CHARGES_EXPIRED = 5,	  /* a payment after expiresAt: expired instead (json = charge) */
	CHARGES_DUPLICATE = 6,	  /* this upstream notification was seen (json = event id) */
	CHARGES_INSUFFICIENT = 7, /* the account's balance cannot cover a refund (json = balance) */
	CHARGES_AMOUNT_MISMATCH = 8,  /* not the charge's amount (refund, ingest; json = amount) */
	CHARGES_RELAYED = 9,	      /* ingest: relayed as received (json = event id) */
	CHARGES_STATUS_MISMATCH = 10, /* ingest: data.status is not the event's (json = status) */
};

enum charges_action { CHARGES_PAY, CHARGES_EXPIRE, CHARGES_REFUND, CHARGES_FAIL };

/* Its calls answer through a store_fn: 0, CHARGES_EXISTING, CHARGES_CONFLICT,
 * CHARGES_NOT_FOUND, ..., or -1 with err. json is the charge when there is one;
 * for CHARGES_CONFLICT the id of the charge holding the externalID. */

/* Create a charge for `account` from a validated request, its static BR
 * Code for `pix_key` (relay/bankcharges.c chooses it: the account's
 * charging connection's, docs/banks.md). Takes nothing; cb runs exactly
 * once, later. */
void charges_create(struct rds *r, const struct config *cfg, enum env env, const char *account,
		    const struct charge_input *in, const char *pix_key, store_fn cb, void *ud);

/* Charges created at the account's bank (relay/bankcharges.c). First the id:
 * for a request with an externalID, charges_reserve answers CHARGES_EXISTING
 * (json = the charge) or CHARGES_CONFLICT (json = its id) as charges_create
 * would, else 0 with json = the id to put the cob with: the one an earlier
 * attempt of the same request reserved (the bank may have made that cob),
 * or a new one, reserved until the charge would expire. Without an
 * externalID, 0 with a new id, nothing reserved. */
void charges_reserve(struct rds *r, const struct config *cfg, enum env env, const char *account,
		     const struct charge_input *in, store_fn cb, void *ud);
/* Forget the reservation of `external_id` (NULL: none): the bank refused
 * the charge, a retry may start afresh. No answer. */
void charges_unreserve(struct rds *r, const struct config *cfg, const char *account,
		       const char *external_id);
/* Create the charge the bank made: its id (the cob's txid) and BR Code (the
 * cob's pixCopiaECola); clears the reservation. Answers as charges_create. */
void charges_create_at(struct rds *r, const struct config *cfg, enum env env, const char *account,
		       const struct charge_input *in, const char *id, const char *brcode,
		       store_fn cb, void *ud);

/* Read a charge of `account` (another account's charge is CHARGES_NOT_FOUND). */
void charges_get(struct rds *r, const struct config *cfg, enum env env, const char *account,
		 const char *id, store_fn cb, void *ud);

/* Find the brCode of charge `id` in either environment (for the QR image,
 * which is served without a key). json is the brCode. */
void charges_find_brcode(struct rds *r, const struct config *cfg, const char *id, store_fn cb,
			 void *ud);

/* Move charge `id` of `account` ("" = whichever: the scheduler) by `action`,
 * once, atomically with its event (and balance change). `amount` (may be
 * NULL) must equal the charge's amount. On 0, json is the charge in its new
 * state, and `event_out` (NULL, or EVENT_ID_MAX bytes that live until cb
 * runs) receives the new event's id. */
void charges_transition(struct rds *r, const struct config *cfg, enum env env, const char *account,
			const char *id, enum charges_action action, const char *amount,
			char *event_out, store_fn cb, void *ud);

/* Read an answer of charge_move (charge_transition, ingest): its `n`
 * elements `e`. Returns 0 or a CHARGES_* outcome with *json (borrowed from
 * e: the charge, a status, an amount or an event id as the outcome says),
 * writing the new event's id into event_out (NULL or EVENT_ID_MAX bytes)
 * on 0 and CHARGES_EXPIRED; -1 when the answer is malformed. */
int charges_reply(redisReply *const *e, size_t n, const char **json, char *event_out);

/* How many elements a charge_move answer starting with `what` has ("ok" 4,
 * "expired" 3, "not_found" 1, the others 2), for a reply holding several. */
size_t charges_reply_len(const char *what);

/* Expire the pending charges of `shard` whose time has come (a batch of at
 * most 16). done(ud, n) runs once, later, with how many were expired (-1 on
 * failure); n == 16 means more may be due. */
void charges_expire_due(struct rds *r, const struct config *cfg, int shard,
			void (*done)(void *ud, int n), void *ud);

/* Which charges to list. */
struct charges_filter {
	const char *status;	/* PENDING, PAID, ...; NULL = any */
	const char *recurrence; /* a recurrence's id: only its charges; NULL = any */
	int limit;		/* 1 .. CHARGES_LIST_MAX */
	struct page_cursor from;
};

#define CHARGES_LIST_MAX 100

/* A page of the charges of `account` (or of its recurrence f->recurrence,
 * from recch:<account>:<id>; none when it is another account's), newest
 * first, as {"charges": [...], "nextCursor": ...} (each charge as GET
 * /v1/charge/pix/{id} shows it). With a status filter at most
 * CHARGES_SCAN_CAP charges are looked at per page, so a page may be short
 * (even empty) with a cursor to go on. cb runs exactly once, later. */
void charges_list(struct rds *r, const struct config *cfg, enum env env, const char *account,
		  const struct charges_filter *f, store_fn cb, void *ud);

#define CHARGES_SCAN_CAP 2000

/* True when `id` has the shape of a charge id (a ULID). */
bool charges_valid_id(const char *id);

#endif
