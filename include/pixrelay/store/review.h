/* review: the operator's KYC review of business accounts in Redis (the
 * `pixrelay review` commands), asynchronous.
 *
 * A new account is pending (in production, and in the sandbox with
 * sandbox-review = 1) until the operator approves or rejects it; only then
 * do its members (representatives, by CPF) count for groups (accounts.h).
 * The answers are the accounts module's (store_fn, enum accounts_result
 * in accounts.h); cb runs exactly once.
 */
#ifndef PIXRELAY_REVIEW_H
#define PIXRELAY_REVIEW_H

#include "pixrelay/store/accounts.h"
#include "pixrelay/core/config.h"
#include "pixrelay/pix/env.h"
#include "pixrelay/redis/redis.h"

/* The accounts waiting for review, oldest first, at most `limit`:
 * {"total": n, "accounts": [{id, createdAt, owner, officialName, tradeName,
 * taxID, representatives: [CPF...], alsoClaimedBy: n}]}, where alsoClaimedBy
 * counts the other accounts that name one of its representatives. */
void review_list(struct rds *r, const struct config *cfg, enum env env, int limit, store_fn cb,
		 void *ud);

/* One account with its KYC data (company, address, documents,
 * representatives and their pictures by SHA-256), its review status and,
 * for each representative, the other accounts that name the same CPF with
 * their status and owner. With `files` nonzero also "files": {sha256:
 * base64}. ACCOUNTS_NOT_FOUND when `id` is no account of env. */
void review_show(struct rds *r, const struct config *cfg, enum env env, const char *id, int files,
		 store_fn cb, void *ud);

/* Approve (approve nonzero) or reject account `id`; `reason` (may be NULL)
 * is kept with the decision. Approval makes its members count for groups at
 * once; rejection, also of an account approved before, stops them at once.
 * On 0, json is {"id", "kycStatus", "previous"}; else ACCOUNTS_NOT_FOUND or
 * ACCOUNTS_PLATFORM. */
void review_decide(struct rds *r, const struct config *cfg, enum env env, const char *id,
		   int approve, const char *reason, store_fn cb, void *ud);

#endif
