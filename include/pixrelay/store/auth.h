/* auth: API keys (spec section 5) and the environment they decide.
 *
 * A key's text is `pxr_test_` (sandbox) or `pxr_live_` (production) followed
 * by 44 random base62 characters (about 261 bits). It is shown once, when
 * created; Redis keeps only its SHA-256, so a key is looked up by that digest
 * and never compared as text (the lookup leaks nothing about the key).
 */
#ifndef PIXRELAY_AUTH_H
#define PIXRELAY_AUTH_H

#include "pixrelay/pix/env.h"
#include "pixrelay/redis/redis.h"

#include <stddef.h>

#define AUTH_KEY_MAX 64	   /* a key's text + NUL fits */
#define AUTH_KEY_RANDOM 44 /* random characters after the prefix */
#define AUTH_ID_MAX 40

enum auth_kind { AUTH_ACCOUNT_KEY = 0, AUTH_MASTER_KEY = 1 };

/* "account" / "master" */
const char *auth_kind_name(enum auth_kind kind);

/* Outcomes of reading and checking a key (0 is success). */
enum auth_status {
	AUTH_OK = 0,
	AUTH_MISSING = 1,   /* no Authorization header */
	AUTH_MALFORMED = 2, /* not "Bearer <token>" */
	AUTH_INVALID = 3,   /* not a pixrelay key, or unknown */
	AUTH_REVOKED = 4,
};

/* A key as stored: never its text. */
struct auth_key {
	char id[AUTH_ID_MAX];
	enum env env;
	enum auth_kind kind;
	char account[32]; /* the account that owns the key */
	char sha256[65];  /* hex SHA-256 of its text: its name in Redis and in the
			     invalidations of <prefix>invalidate ("" when not known) */
};

/* Take the token out of an Authorization header value ("Bearer <token>",
 * scheme case-insensitive). Returns AUTH_OK with *token and *len pointing into
 * `header`, or AUTH_MISSING (header NULL or empty) or AUTH_MALFORMED. */
int auth_bearer(const char *header, const char **token, size_t *len);

/* Check a token's shape and read its environment from its prefix.
 * Returns 0, or -1 when it cannot be a pixrelay key. */
int auth_token_env(const char *token, size_t len, enum env *env);

/* Make a new key's text for `env` into out (AUTH_KEY_MAX bytes). */
void auth_key_generate(enum env env, char out[AUTH_KEY_MAX]);

/* Result of auth_lookup: status AUTH_OK with the key, AUTH_INVALID or
 * AUTH_REVOKED; or err set (Redis unavailable) with status -1. */
typedef void (*auth_lookup_fn)(void *ud, int status, const struct auth_key *key, const char *err);

/* Look up a token (already shape-checked): from the cache `c` (may be NULL)
 * when it holds the key, then cb runs at once, before auth_lookup returns;
 * else from Redis, cb runs exactly once, later, and the result is cached for
 * a minute (the key's last use is recorded at most once a minute anyway).
 * The token is copied. */
struct cache;
void auth_lookup(struct rds *r, struct cache *c, const char *prefix, const char *token, size_t len,
		 auth_lookup_fn cb, void *ud);

/* Result of auth_check: AUTH_OK, AUTH_INVALID (no such key any more) or
 * AUTH_REVOKED; or status -1 with err set (Redis unavailable). */
typedef void (*auth_check_fn)(void *ud, int status, const char *err);

/* Ask Redis whether the key whose SHA-256 is `sha256_hex` still works, for
 * what outlives the request it authenticated (a live event stream): one
 * HMGET, never the cache, nothing written (its last use is not recorded).
 * cb runs exactly once, later. */
void auth_check(struct rds *r, const char *prefix, const char *sha256_hex, auth_check_fn cb,
		void *ud);

#endif
