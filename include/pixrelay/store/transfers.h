/* transfers: internal transfers between business accounts in Redis (spec
 * 4.3), asynchronous: moving money from one account's Pix key to another's
 * within the caller's group, a client's Idempotency-Key, and finishing the
 * transfers a process left half done.
 *
 * Money moves only inside one atomic script per change, so a balance never
 * goes negative and a transfer happens once. The answers are the accounts
 * module's (store_fn, enum accounts_result in accounts.h).
 */
#ifndef PIXRELAY_TRANSFERS_H
#define PIXRELAY_TRANSFERS_H

#include "pixrelay/store/accounts.h"
#include "pixrelay/core/config.h"
#include "pixrelay/pix/env.h"
#include "pixrelay/redis/redis.h"

/* Move `amount` cents from the account of Pix key `from_key` to that of
 * `to_key`, for `caller`. `idem` (NULL = none) with `fingerprint` makes a
 * retry safe (scoped to the caller and the source account).
 *
 * Accounts live in shards (keyspace.h). Between accounts of one shard the
 * transfer is one script. Across shards it is three, each atomic: the debit
 * with a transfer record in the source's shard, the credit in the
 * destination's (applied once per transfer id, however often it is sent),
 * and marking the record done. cb gets 0 only once the money has arrived;
 * if a step after the debit fails (Redis unavailable, or this process
 * dies), the record stays "debited" and transfers_recover, run by every
 * dispatcher, finishes it.
 *
 * cb gets 0, ACCOUNTS_NOT_FOUND (json = "from_key" or "to_key"),
 * ACCOUNTS_FORBIDDEN, ACCOUNTS_SAME, ACCOUNTS_INSUFFICIENT,
 * ACCOUNTS_IDEM_CONFLICT, ACCOUNTS_REPLAYED, ACCOUNTS_PENDING (debited, the
 * credit failed: transfers_recover will make it; json is NULL), or -1 with
 * err, exactly once.
 * The strings are copied: all are borrowed for the call. */
void transfers_create(struct rds *r, const struct config *cfg, enum env env, const char *caller,
		      const char *from_key, const char *to_key, long long amount, const char *idem,
		      const char *fingerprint, store_fn cb, void *ud);

/* Finish the transfers of `shard` that were debited more than 10 s ago and
 * never marked done (a process died between the steps). done(ud, n) runs
 * once, later, with how many were looked at (-1 on failure). */
void transfers_recover(struct rds *r, const struct config *cfg, int shard,
		       void (*done)(void *ud, int n), void *ud);

#endif
