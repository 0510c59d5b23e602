/* endpoints: an account's webhook endpoints in Redis, on the event loop:
 * created, listed, read, changed (enabled again, disabled by request),
 * deleted, their signing secret rotated, what a test ping needs, and the
 * janitor's expiry of what disabled endpoints keep past the retention.
 *
 * An endpoint lives in its account's shard (p ep:<id>, its id naming the
 * shard as an event id does); every script that writes one also writes the
 * account's field `fanout`, the one value event_write reads to fan an event
 * out (src/store/lua/lib/endpoint.lua, docs/event-layout.md "Endpoints").
 * Calls answer through a store_fn with the endpoint's JSON as the API shows
 * it (the secret only when it is made: create, rotate-secret). The
 * API's handlers (api/api_endpoints.c) and the command line
 * (cli/cli_endpoints.c) call the same functions.
 */
#ifndef PIXRELAY_ENDPOINTS_H
#define PIXRELAY_ENDPOINTS_H

#include "pixrelay/core/config.h"
#include "pixrelay/pix/endpoint.h"
#include "pixrelay/pix/env.h"
#include "pixrelay/redis/redis.h"
#include "pixrelay/store/store.h"

#include <stdint.h>

/* The named outcomes of these calls (store_fn's result; json NULL). */
enum endpoints_result {
	ENDPOINTS_NOT_FOUND = 1,  /* no such endpoint of the account */
	ENDPOINTS_TOO_MANY = 2,	  /* the account has ENDPOINT_MAX already */
	ENDPOINTS_NO_ACCOUNT = 3, /* the account is not of this environment */
};

/* Create an endpoint of `account` in `env` from a create spec
 * (endpoint_parse with create): json is the endpoint with its "secret",
 * shown this once. Borrowed: spec, strings. */
void endpoints_create(struct rds *r, const struct config *cfg, enum env env, const char *account,
		      const struct endpoint_spec *spec, store_fn cb, void *ud);

/* Change endpoint `id` by an update spec (only its given fields); json is
 * the endpoint. Enabling it again sends what it kept, in order; disabling
 * it keeps what it holds. */
void endpoints_update(struct rds *r, const struct config *cfg, enum env env, const char *account,
		      const char *id, const struct endpoint_spec *spec, store_fn cb, void *ud);

/* Endpoint `id` of `account` as JSON. */
void endpoints_get(struct rds *r, const struct config *cfg, enum env env, const char *account,
		   const char *id, store_fn cb, void *ud);

/* Every endpoint of `account` in `env`, oldest first: {"endpoints": [...]}. */
void endpoints_list(struct rds *r, const struct config *cfg, enum env env, const char *account,
		    store_fn cb, void *ud);

/* Delete endpoint `id`: json {"id", "deleted": true}. Its deliveries not
 * yet settled are dead. */
void endpoints_delete(struct rds *r, const struct config *cfg, enum env env, const char *account,
		      const char *id, store_fn cb, void *ud);

/* A new signing secret for endpoint `id`; the previous one signs beside it
 * for grace_s seconds (0: not at all). json {"id", "secret",
 * "previousSecretUntil"}. */
void endpoints_rotate(struct rds *r, const struct config *cfg, enum env env, const char *account,
		      const char *id, long grace_s, store_fn cb, void *ud);

/* What a test ping to an endpoint needs, borrowed for the callback. */
struct endpoint_target {
	const char *id, *url;
	const char *signing, *signing_prev; /* "" = none (the previous past its grace) */
	const char *headers;		    /* "Name: value" lines, "" = none */
	enum env env;
};
typedef void (*endpoints_target_fn)(void *ud, int result, const struct endpoint_target *t,
				    const char *err);
/* Read endpoint `id` of `account` for a test ping: cb runs once, later, with
 * 0 and t, ENDPOINTS_NOT_FOUND, or -1 with err. */
void endpoints_target(struct rds *r, const struct config *cfg, enum env env, const char *account,
		      const char *id, endpoints_target_fn cb, void *ud);

/* The deliveries disabled endpoints of `shard` keep whose event is older
 * than the retention are dead (endpoint_expire.lua, at most 256 a call).
 * done(ud, n) runs once, later, with how many (-1 on failure). For the
 * janitor. */
void endpoints_expire(struct rds *r, const struct config *cfg, int shard, uint64_t now_ms,
		      void (*done)(void *ud, long long n), void *ud);

#endif
