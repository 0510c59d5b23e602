/* banks_door: whether a Redis holds a connection that needs the bank door
 * (bank-listen, docs/deployment.md "The bank door"): a bank that
 * authenticates by mutual TLS has its certificate believed only there.
 */
#ifndef PIXRELAY_BANKS_DOOR_H
#define PIXRELAY_BANKS_DOOR_H

#include "pixrelay/store/banks_conn.h"

/* How every refusal for want of the bank door ends: mutual TLS needs it. */
#define BANKS_DOOR_HINT                                                                            \
	"no bank's client certificate can reach pixrelay without it: set bank-listen and send "    \
	"the proxy's bank webhooks there (docs/deployment.md, \"The bank door\")"

/* On a blocking client (rds_open), at start: the first connection of either
 * environment that authenticates its bank by mutual TLS, and so needs
 * bank-listen. Reads every connection's auth, one call each. Returns 0 with
 * its id and environment, BANKS_NOT_FOUND when there is none, -1 with why
 * in err. */
int banks_find_mtls(struct rds *c, const char *prefix, char id[BANKS_ID_MAX], enum env *env,
		    char *err, size_t errlen);

#endif
