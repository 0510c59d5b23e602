/* api: the route table of pixrelay and its handlers.
 *
 * Handlers parse and validate, call a domain module, and shape the reply;
 * none talks to Redis directly.
 */
#ifndef PIXRELAY_API_H
#define PIXRELAY_API_H

#include "pixrelay/store/auth.h"
#include "pixrelay/core/config.h"
#include "pixrelay/relay/bankcharges.h"
#include "pixrelay/relay/bankrecon.h"
#include "pixrelay/relay/dispatch.h"
#include "pixrelay/http/http.h"
#include "pixrelay/redis/redis.h"

#include <stddef.h>

/* What every handler may use; borrowed from server.c for the process's life. */
struct app {
	const struct config *cfg;
	struct event_base *base;
	struct rds *rds;
	struct cache *cache;		      /* keys and accounts, invalidated through Redis */
	struct ingest_queue *ingest;	      /* notifications waiting for their write */
	struct banks_queue *banks;	      /* banks' Pix waiting for their write */
	struct bankapi *bankapi;	      /* calls to merchants' banks (API Pix) */
	struct ping_pool *pings;	      /* tests of webhook endpoints */
	struct bankrecon *bankrecon;	      /* their reconciliation (with the dispatcher) */
	struct seal_keyfile *credentials_key; /* opens banks' API credentials */
	struct bankcharges bankcharges;	      /* charges created at accounts' banks */
	struct http_server *http;
	struct http_server *metrics_http; /* the metrics-listen listener, or NULL */
	struct http_server *bank_http;	  /* the bank door (bank-listen), or NULL */
	struct dispatch *dispatch;	  /* NULL when this process does not deliver */
	struct evstream *streams;	  /* live event streams (GET /v1/events/stream) */
	int embedded_redis;
	int draining; /* set on SIGTERM: /readyz says not ready */
};

/* The authenticated caller of a request (req->auth). */
struct api_caller {
	struct auth_key key;
	char account[32]; /* acting account: X-Account-ID for master keys, else key's */
};

extern const struct http_route api_routes[];
extern const size_t api_nroutes;
/* The routes of the metrics-listen listener: /metrics, /healthz, /readyz. */
extern const struct http_route api_metrics_routes[];
extern const size_t api_metrics_nroutes;
/* The routes of the bank door (bank-listen): the banks' webhooks only. */
extern const struct http_route api_bank_routes[];
extern const size_t api_bank_nroutes;

/* The http_auth_fn of the routes: Bearer key, then X-Account-ID. */
void api_authenticate(struct http_req *req);

#endif
