/* banks_view: what a bank's webhook call needs of its connection, and no
 * more (docs/banks.md, "Connect a bank"): what names it, how its bank
 * authenticates, the SHA-256 of its URL token, and its trust list already
 * parsed with its pins (core/certcheck.h). Never its API credentials.
 *
 * Built from one HMGET of the connection's record, then kept in the process
 * cache (redis/cache.h) under "b:<id>" until it expires or any process
 * changes or removes the connection: the scripts that do (bank_update,
 * bank_credentials, bank_set_token, bank_disconnect) announce "b:<id>" on
 * the invalidation channel, so the next call after a change is judged by
 * the record as it is then. A cached call costs no round trip and parses
 * nothing.
 */
#ifndef PIXRELAY_BANKS_VIEW_H
#define PIXRELAY_BANKS_VIEW_H

#include "pixrelay/store/banks_conn.h"

struct cache;
struct certcheck;
struct provsig_keys;

struct banks_view {
	struct banks_ref ref; /* id, account, environment */
	enum provider provider;
	enum banks_auth auth;
	/* BANKS_PROVIDER: the public keys of its signatures, read once (NULL:
	 * none, or they do not read: why says why), and (sandbox) the public
	 * half of pixrelay's own pair (NULL: none) */
	struct provsig_keys *prov_keys, *prov_own;
	char token_sha[65]; /* BANKS_URL_TOKEN: the SHA-256 of its token, hex ("" none) */
	/* BANKS_MTLS: the trust list with the leaf's pins, or NULL with why in
	 * `why` (a list or a pin that does not read) */
	struct certcheck *trust;
	char why[160];
};

/* result 0 with the view (borrowed for the call only), BANKS_NOT_FOUND, or
 * -1 with err. */
typedef void (*banks_view_fn)(void *ud, int result, const struct banks_view *v, const char *err);

/* The view of connection `id`, whoever owns it: from `cache` (NULL: none)
 * when it holds it (cb runs before this returns), else read (cb runs once,
 * later) and kept there. */
void banks_view_get(struct rds *r, struct cache *cache, const struct config *cfg, const char *id,
		    banks_view_fn cb, void *ud);

/* This process forgets connection `id`'s view at once (after a change it
 * made: the announcement that every process gets may come later). */
void banks_view_forget(struct cache *cache, const char *id);

#endif
