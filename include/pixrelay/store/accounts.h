/* accounts: business accounts, Pix keys, groups, balances and the ledger in
 * Redis (spec 4.2), asynchronous. Internal transfers between accounts (spec
 * 4.3) are transfers.h; the operator's KYC review is review.h. Both answer
 * with store_fn and the results below.
 *
 * An account's group is itself plus every account that shares at least one
 * member (a representative, by CPF) with it — the spec's rule, not
 * transitive. A member is only a claim of whoever created the account, so it
 * counts once the operator has approved the KYC of both accounts, and only
 * between accounts of one owner (docs/security.md, "Groups"). A new account
 * is pending (in production, and in the sandbox with sandbox-review = 1)
 * until the operator approves or rejects it.
 *
 * What accounts keep is bounded: files and bytes per account (checked by the
 * caller with account_files_usage), accounts per account key per hour and
 * accounts and file bytes per environment (checked here, atomically with the
 * creation). Money moves only inside one atomic script per change, so a
 * balance never goes negative and a transfer happens once.
 */
#ifndef PIXRELAY_ACCOUNTS_H
#define PIXRELAY_ACCOUNTS_H

#include "pixrelay/store/store.h"
#include "pixrelay/pix/account.h"
#include "pixrelay/store/auth.h"
#include "pixrelay/core/config.h"
#include "pixrelay/pix/page.h"
#include "pixrelay/redis/redis.h"

enum accounts_result {
	ACCOUNTS_DUPLICATE = 1,	    /* taxID taken (json = its account's id, or "") */
	ACCOUNTS_NOT_FOUND = 2,	    /* a Pix key is unknown (json = "from_key" or "to_key") */
	ACCOUNTS_FORBIDDEN = 3,	    /* outside the caller's group (json = caller's review status) */
	ACCOUNTS_SAME = 4,	    /* both keys name one account */
	ACCOUNTS_INSUFFICIENT = 5,  /* json = the source's balance */
	ACCOUNTS_IDEM_CONFLICT = 6, /* Idempotency-Key reused with another body */
	ACCOUNTS_REPLAYED = 7,	    /* Idempotency-Key seen with this body: nothing moved now */
	ACCOUNTS_RATE = 8,	    /* the key made its accounts of the hour (json = ms to wait) */
	ACCOUNTS_FULL = 9,	    /* the environment holds max-accounts (json = the limit) */
	ACCOUNTS_STORAGE = 10,	    /* max-stored-file-bytes reached (json = bytes kept now) */
	ACCOUNTS_PLATFORM = 11,	    /* the platform account is not reviewed */
	ACCOUNTS_NO_ACCOUNT = 12,   /* no account of this id in the environment */
	ACCOUNTS_PENDING = 13,	    /* a transfer debited, its credit left to the recovery */
};

/* Its calls (and those of transfers.h and review.h) answer through a
 * store_fn: 0, one of the above, or -1 with err. */

/* Create an account owned by `owner`, with the API key `key_id` (NULL for a
 * master key: no hourly limit; else an account key of `owner`, whose keys
 * share one hourly count, so that more keys do not make more accounts).
 * Three steps: account_admit checks the quotas and the taxID before anything
 * is written; account_put writes the record and files into the account's
 * shard; account_index checks again and makes the account known, or refuses
 * it (then the record and files are deleted). On 0, json is the account as
 * the API shows it, with its webhook secrets (shown this once); else
 * ACCOUNTS_DUPLICATE, ACCOUNTS_RATE, ACCOUNTS_FULL or ACCOUNTS_STORAGE. A
 * creation refused as ACCOUNTS_DUPLICATE counts in the hour like one made,
 * and its json is the id of the account holding the taxID only for a master
 * key or when `owner` is that account or its owner (else ""). The per-
 * account limits (files, bytes) are the caller's to check first. Takes the
 * data of the files of `in` (their `data` become NULL, the rest of `in`
 * stays the caller's); the rest is borrowed for the call. */
void accounts_create(struct rds *r, const struct config *cfg, enum env env, const char *owner,
		     const char *key_id, struct account_input *in, store_fn cb, void *ud);

/* The balance of `account` and its latest ledger entries (newest first):
 * {"account", "balance", "entries": [...]}. */
void accounts_balance(struct rds *r, const struct config *cfg, enum env env, const char *account,
		      int entries, store_fn cb, void *ud);

/* ---- what the dashboard shows ---- */

#define ACCOUNTS_LIST_MAX 100
#define ACCOUNTS_LEDGER_MAX 100

/* A page of at most `limit` accounts of `env`, newest first, from `from`, as
 * {"accounts": [...], "nextCursor": ...}; each account without its secrets
 * (id, environment, kind, names, taxID, status, owner, pixKey, postbackUrl,
 * balance, createdAt). With `only` (not NULL) the page holds that one account
 * (on the first page). cb runs exactly once, later. */
void accounts_list(struct rds *r, const struct config *cfg, enum env env, const char *only,
		   const struct page_cursor *from, int limit, store_fn cb, void *ud);

/* Account `id` of `env` as accounts_list shows it, with a page of at most
 * `limit` ledger entries, newest first, in "ledger": {"entries", "nextCursor"}.
 * `pos` and `fp` (from page_parse_ledger_cursor; pos "" = from the newest) say
 * where the page starts. result 0, ACCOUNTS_NO_ACCOUNT, or -1 with err. */
void accounts_show(struct rds *r, const struct config *cfg, enum env env, const char *id, int limit,
		   const char *pos, const char *fp, store_fn cb, void *ud);

/* The webhook secrets of account `id` of `env`: {"account",
 * "postbackSigningSecret", "postbackSigningSecretPrevious" (null unless a
 * rotation is under way), "postbackSignature", "ingestSecret"}. json is wiped
 * when cb returns. result 0, ACCOUNTS_NO_ACCOUNT, or -1 with err. */
void accounts_secrets(struct rds *r, const struct config *cfg, enum env env, const char *id,
		      store_fn cb, void *ud);

/* What the hot paths need of an account (ingest, charge creation, acting
 * for an account with a master key). */
struct accounts_info {
	enum env env;
	int platform; /* the environment's platform account */
	char ingest_secret[80];
	char pix_key[80];  /* its own (random) key */
	char bank_api[40]; /* the bank connection its charges are created at ("": none) */
	/* its charging connection (store/banks_charging.h): the id, BANKS_VIA_NONE or
	 * BANKS_VIA_MANY; "" when its record predates it (banks_charging) */
	char charge_via[40];
	char charge_key[80]; /* that connection's Pix key */
};

/* result 0 with info (borrowed for the call), ACCOUNTS_NOT_FOUND, or -1 with
 * err. */
typedef void (*accounts_info_fn)(void *ud, int result, const struct accounts_info *info,
				 const char *err);

/* Look account `id` up in either environment: from the cache `c` (may be
 * NULL) when it holds it — then cb runs at once, before this returns — else
 * in Redis, both environments' records in one round trip, cb later; the
 * answer is then cached for 5 minutes (forgotten at once on "a:<id>"). */
struct cache;
void accounts_lookup(struct rds *r, struct cache *c, const struct config *cfg, const char *id,
		     accounts_info_fn cb, void *ud);

#endif
