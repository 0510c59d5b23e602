/* charges: Pix charges in Redis (create, read, the QR lookup), asynchronous.
 *
 * Keys of one environment share the hash tag {<env>} so that a charge, its
 * account's indexes and (later) its balance change in one atomic script.
 */
#ifndef PIXRELAY_CHARGES_H
#define PIXRELAY_CHARGES_H

#include "pixrelay/auth.h"
#include "pixrelay/charge.h"
#include "pixrelay/config.h"
#include "pixrelay/redis.h"

/* Expected outcomes besides 0. */
enum charges_result {
	CHARGES_EXISTING = 1,  /* the same request with this externalID was made before */
	CHARGES_CONFLICT = 2,  /* another request already used this externalID */
	CHARGES_NOT_FOUND = 3,
};

/* result: 0 (created), CHARGES_EXISTING, CHARGES_CONFLICT, CHARGES_NOT_FOUND,
 * or -1 with err. json is the charge (borrowed for the call) when there is one;
 * for CHARGES_CONFLICT it is the id of the charge holding the externalID. */
typedef void (*charges_fn)(void *ud, int result, const char *json, const char *err);

/* Create a charge for `account` from a validated request. Takes nothing;
 * cb runs exactly once, later. */
void charges_create(struct rds *r, const struct config *cfg, enum auth_env env,
		    const char *account, const struct charge_input *in, charges_fn cb, void *ud);

/* Read a charge of `account` (another account's charge is CHARGES_NOT_FOUND). */
void charges_get(struct rds *r, const struct config *cfg, enum auth_env env, const char *account,
		 const char *id, charges_fn cb, void *ud);

/* Find the brCode of charge `id` in either environment (for the QR image,
 * which is served without a key). json is the brCode. */
void charges_find_brcode(struct rds *r, const struct config *cfg, const char *id, charges_fn cb,
			 void *ud);

/* Nonzero when `id` has the shape of a charge id (a ULID). */
int charges_valid_id(const char *id);

#endif
