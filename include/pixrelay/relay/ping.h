/* ping: a signed test request to a webhook endpoint, sent now and answered
 * with its outcome (POST /v1/webhook-endpoints/{id}/test, `pixrelay
 * endpoints test`). It is signed and sent as the endpoint's deliveries are
 * (its secrets, both during a rotation's grace; its static headers; the
 * address checks of production requests: relay/post.c), on the ping pool
 * of its environment (kept for the process's life, apart from the
 * deliveries'), and stored nowhere: its body is an EVENT:ENDPOINT_TEST with
 * a fresh event id.
 */
#ifndef PIXRELAY_PING_H
#define PIXRELAY_PING_H

#include "pixrelay/core/config.h"
#include "pixrelay/store/endpoints.h"

#include <event2/event.h>

/* What a ping came to, borrowed for the callback. */
struct ping_result {
	const char *id; /* the webhook-id it carried */
	int delivered;	/* the endpoint answered 2xx */
	long status;	/* its HTTP status, 0 when none */
	long long duration_ms;
	const char *error;    /* why it failed, NULL when delivered */
	const char *response; /* the answer's first KiB, NULL when none */
};
typedef void (*ping_fn)(void *ud, const struct ping_result *r);

struct ping_pool;

/* The pings of a process: a curl pool per environment, kept for its life
 * (their connections, and the CA store loaded once, not at each ping).
 * Borrowed: base and cfg, alive until ping_pool_free. Out of memory
 * aborts. */
struct ping_pool *ping_pool_new(struct event_base *base, const struct config *cfg);
/* Answer the pings still in flight (not delivered: "pixrelay stopped before
 * the endpoint answered"), then free pp (NULL: nothing). */
void ping_pool_free(struct ping_pool *pp);

/* Send a test event to endpoint t of `account` on pp; cb runs once, later
 * (never before this returns), when it is answered, fails or times out
 * (delivery-timeout-ms), or pp is freed. Borrowed: t and account (copied).
 * Out of memory aborts. */
void ping_send(struct ping_pool *pp, const struct endpoint_target *t, const char *account,
	       ping_fn cb, void *ud);

#endif
