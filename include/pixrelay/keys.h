/* keys: managing API keys (create, list, revoke) and the platform account.
 *
 * These are operator actions, run from the command line or at start-up
 * before the event loop; they take a blocking client made by rds_open (one
 * Redis, a cluster or Sentinel alike). The hot path, checking a key on each
 * request, is auth_lookup.
 */
#ifndef PIXRELAY_KEYS_H
#define PIXRELAY_KEYS_H

#include "pixrelay/auth.h"
#include "pixrelay/redis.h"

#include <stdint.h>
#include <stdio.h>

/* Expected outcomes (positive) besides 0 = done. */
enum keys_result {
	KEYS_NOT_FOUND = 1,
	KEYS_ALREADY_REVOKED = 2,
};

/* Create the platform account of `env` unless it exists. Writes its id
 * (IDS_ULID_LEN + 1 bytes) and *created (1 when made now). Returns 0 or -1
 * with err. */
int keys_platform_init(struct rds *c, const char *prefix, long shards, enum auth_env env,
		       char *account_id, int *created, char *err, size_t errlen);

/* The id of the platform account of `env` into out (IDS_ULID_LEN + 1 bytes):
 * 0, KEYS_NOT_FOUND, or -1 with err. */
int keys_platform_id(struct rds *c, const char *prefix, enum auth_env env, char *out, char *err,
		     size_t errlen);

/* Nonzero when account `id` exists in `env`; -1 on Redis failure. */
int keys_account_exists(struct rds *c, const char *prefix, enum auth_env env, const char *id);

/* Create a key. `account` is the owning account (NULL: the platform account
 * of env, which must exist). Writes the key's text (shown once) into secret
 * and its record into *out. Returns 0, KEYS_NOT_FOUND when the account does
 * not exist, or -1 with err. */
int keys_create(struct rds *c, const char *prefix, enum auth_env env, enum auth_kind kind,
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
int keys_account_secrets(struct rds *c, const char *prefix, enum auth_env env, const char *id,
			 char *signing, size_t slen, char *compat, size_t clen, char *ingest,
			 size_t ilen, char *err, size_t errlen);

/* Rotate the postback signing secret of account `id`: the current one is
 * kept as the previous (postbacks carry both signatures) and a new one is
 * written into `out` (SIGN_SECRET_LEN + 1 bytes). With end_rotation nonzero,
 * forget the previous one instead. Returns 0, KEYS_NOT_FOUND or -1 with err. */
int keys_rotate_signing(struct rds *c, const char *prefix, enum auth_env env, const char *id,
			int end_rotation, char *out, size_t outlen, char *err, size_t errlen);

/* Set (or clear, with "") the postbackUrl of account `id`: it receives the
 * events of the account's charges that name none, and relayed upstream
 * notifications. The URL must already be valid. Returns 0, KEYS_NOT_FOUND,
 * or -1 with err. */
int keys_set_postback(struct rds *c, const char *prefix, enum auth_env env, const char *id,
		      const char *url, char *err, size_t errlen);

/* Print account `id` (no secrets) as JSON into out. Returns 0, KEYS_NOT_FOUND
 * or -1 with err. */
int keys_account_show(struct rds *c, const char *prefix, enum auth_env env, const char *id,
		      FILE *out, char *err, size_t errlen);

#endif
