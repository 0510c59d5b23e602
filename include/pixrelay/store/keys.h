/* keys: managing API keys (create, list, revoke) and the platform account.
 *
 * Most of these are operator actions, run from the command line or at
 * start-up before the event loop; they take a blocking client made by
 * rds_open (one Redis, a cluster or Sentinel alike). The server's API
 * (GET/POST /v1/keys, POST /v1/keys/{id}/revoke) uses the asynchronous
 * functions at the end. The hot path, checking a key on each request, is
 * auth_lookup.
 *
 * Keys live under {keys}: the record <prefix>{keys}:h:<sha256>, the id
 * <prefix>{keys}:id:<key id> -> sha256, and three indexes by creation time:
 * every key (:all), the keys of an environment (:env:<env>) and of an
 * account (:acct:<env>:<account>).
 */
#ifndef PIXRELAY_KEYS_H
#define PIXRELAY_KEYS_H

#include "pixrelay/store/store.h"
#include "pixrelay/store/auth.h"
#include "pixrelay/pix/page.h"
#include "pixrelay/redis/redis.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <yajl/yajl_gen.h>

/* Expected outcomes (positive) besides 0 = done. */
enum keys_result {
	KEYS_NOT_FOUND = 1,
	KEYS_ALREADY_REVOKED = 2,
	KEYS_REFUSED = 3, /* keys_layout_check: data this version does not read */
};

/* Check the key layout of the Redis (docs/storage.md): 0 when this version
 * reads it (an empty one or one of layout 2 is marked as this version's),
 * KEYS_REFUSED with err when it holds data of a layout it does not read, -1
 * with err when Redis did not answer. */
int keys_layout_check(struct rds *c, const char *prefix, char *err, size_t errlen);

/* Create the platform account of `env` unless it exists. Writes its id
 * (IDS_ULID_LEN + 1 bytes) and *created (1 when made now). Returns 0 or -1
 * with err. */
int keys_platform_init(struct rds *c, const char *prefix, long shards, enum env env,
		       char *account_id, int *created, char *err, size_t errlen);

/* The id of the platform account of `env` into out (IDS_ULID_LEN + 1 bytes):
 * 0, KEYS_NOT_FOUND, or -1 with err. */
int keys_platform_id(struct rds *c, const char *prefix, enum env env, char *out, char *err,
		     size_t errlen);

/* Look account `id` up in `env`: 0 when it exists, KEYS_NOT_FOUND, or
 * -1 on Redis failure. */
int keys_account_find(struct rds *c, const char *prefix, enum env env, const char *id);

/* Create a key. `account` is the owning account (NULL: the platform account
 * of env, which must exist). Writes the key's text (shown once) into secret
 * and its record into *out. Returns 0, KEYS_NOT_FOUND when the account does
 * not exist, or -1 with err. */
int keys_create(struct rds *c, const char *prefix, enum env env, enum auth_kind kind,
		const char *account, const char *description, char secret[AUTH_KEY_MAX],
		struct auth_key *out, char *err, size_t errlen);

/* Print the keys (never their text) as a table, or as a JSON array when
 * json is nonzero. Returns 0 or -1 with err. */
int keys_list(struct rds *c, const char *prefix, FILE *out, int json, char *err, size_t errlen);

/* Revoke key `key_id`: 0 when revoked now, KEYS_ALREADY_REVOKED,
 * KEYS_NOT_FOUND, or -1 with err. */
int keys_revoke(struct rds *c, const char *prefix, const char *key_id, char *err, size_t errlen);

/* The webhook secrets of account `id`: the Standard Webhooks signing
 * secret of its postbacks (whsec_...), the compatibility secret sent as the
 * `signature` header, and the secret an upstream provider signs ingested
 * notifications with. Returns 0, KEYS_NOT_FOUND, or -1 with err. */
int keys_account_secrets(struct rds *c, const char *prefix, enum env env, const char *id,
			 char *signing, size_t slen, char *compat, size_t clen, char *ingest,
			 size_t ilen, char *err, size_t errlen);

/* Rotate the postback signing secret of account `id`: the current one is
 * kept as the previous (postbacks carry both signatures) and a new one is
 * written into `out` (SIGN_SECRET_LEN + 1 bytes). With end_rotation nonzero,
 * forget the previous one instead. Returns 0, KEYS_NOT_FOUND or -1 with err. */
int keys_rotate_signing(struct rds *c, const char *prefix, enum env env, const char *id,
			int end_rotation, char *out, size_t outlen, char *err, size_t errlen);

/* Set (or clear, with "") the postbackUrl of account `id`: it receives the
 * events of the account's charges that name none, and relayed upstream
 * notifications. The URL must already be valid. Returns 0, KEYS_NOT_FOUND,
 * or -1 with err. */
int keys_set_postback(struct rds *c, const char *prefix, enum env env, const char *id,
		      const char *url, char *err, size_t errlen);

/* Print account `id` (no secrets) as JSON into out. Returns 0, KEYS_NOT_FOUND
 * or -1 with err. */
int keys_account_show(struct rds *c, const char *prefix, enum env env, const char *id, FILE *out,
		      char *err, size_t errlen);

/* A field of an account record (a Redis hash) shown in JSON: its name in the
 * hash, its JSON name, and its type: 'i' an integer, 't' a time in ms (shown
 * as "YYYY-MM-DD HH:MM:SS", UTC), 's' text. */
struct keys_shown {
	const char *field, *name;
	char type;
};

/* Write the n fields `shown` of the HGETALL reply h, JSON name and value,
 * into the object open in g: null where h lacks the field or it is "". */
void keys_write_fields(yajl_gen g, const redisReply *h, const struct keys_shown *shown, size_t n);

/* ---- asynchronous, for the server ---- */

#define KEYS_DESCRIPTION_MAX 200 /* characters a description may have */

/* Its calls answer through a store_fn: 0 or a KEYS_* outcome, or -1. */

/* True when `id` has the shape of a key id ("key_" + ULID). */
bool keys_valid_id(const char *id);

/* A page of at most `limit` keys of `env` (never their text), newest first,
 * starting at `from`: the keys of `account`, or every key of the environment
 * when account is NULL. `viewer` is the kind of the key asking: for an
 * account key the page leaves master keys out (they belong to the platform
 * account, and only a master key or the operator manages them). json is
 * {"keys": [...], "nextCursor": ...}. cb runs exactly once, later. */
void keys_page(struct rds *r, const char *prefix, enum env env, const char *account,
	       enum auth_kind viewer, const struct page_cursor *from, int limit, store_fn cb,
	       void *ud);

/* Create an account key of `account` (which the caller has checked exists)
 * with `description`. On 0, json is the key with its text in "key", shown
 * this once: the buffer is wiped when cb returns. cb runs exactly once,
 * later. */
void keys_create_async(struct rds *r, const char *prefix, enum env env, const char *account,
		       const char *description, store_fn cb, void *ud);

/* Revoke key `key_id` when it is of `env`, unless account is NULL of
 * `account`, and, when `viewer` (the kind of the key asking) is an account
 * key, an account key: like keys_revoke (the same script; the invalidation
 * message tells every process that caches keys to forget it). This
 * process's cache `c` (may be NULL) forgets the key before cb runs, so that
 * its next request with the key is refused whenever the announcement
 * arrives. result 0 when revoked now, KEYS_ALREADY_REVOKED, both with json =
 * the key; KEYS_NOT_FOUND (also for a key of another environment or account,
 * and for a master key asked by an account key); or -1 with err. */
struct cache;
void keys_revoke_async(struct rds *r, struct cache *c, const char *prefix, enum env env,
		       const char *account, enum auth_kind viewer, const char *key_id, store_fn cb,
		       void *ud);

#endif
