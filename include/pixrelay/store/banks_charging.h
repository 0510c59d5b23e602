/* banks_charging: the connection an account's charges go to in an
 * environment (docs/banks.md, "The key on the QR"): its only connection
 * there, or the one of several marked default. Every change of its
 * connections (connect, disconnect, credentials, the default: banks.h)
 * writes it into the account's record, which accounts_lookup reads:
 * charge_via, charge_key, bank_api.
 */
#ifndef PIXRELAY_BANKS_CHARGING_H
#define PIXRELAY_BANKS_CHARGING_H

#include "pixrelay/store/banks_conn.h"

#define BANKS_VIA_NONE "none" /* charge_via: no connection in env */
#define BANKS_VIA_MANY "many" /* charge_via: several, none marked default */

struct banks_charging {
	char via[BANKS_ID_MAX];	     /* the connection's id, BANKS_VIA_NONE or BANKS_VIA_MANY */
	char key[80];		     /* its Pix key ("" for none and many) */
	char bank_api[BANKS_ID_MAX]; /* its id when it has API credentials, else "" */
};
/* result 0 with ch (borrowed for the call), or -1 with err. */
typedef void (*banks_charging_fn)(void *ud, int result, const struct banks_charging *ch,
				  const char *err);
/* Derive and write the charging connection of `account` of `env`, for a
 * record written by a version before it (no charge_via): when it has
 * several connections, none marked default, and its bank_api names one of
 * them, that one becomes the default (its charges keep going there). cb
 * runs once, later. */
void banks_charging(struct rds *r, const struct config *cfg, enum env env, const char *account,
		    banks_charging_fn cb, void *ud);

#endif
