/* curlev: the curl multi interface on the process's libevent loop (no
 * threads), as curl's hiperfifo example drives it: curl says which sockets
 * to watch and when to wake, libevent calls back, and every finished
 * transfer is handed to a callback.
 *
 * One pool (a multi handle with its connection cache) per environment: a
 * connection opened for a sandbox postback (which may reach any address) is
 * never reused for a production one. Each pool keeps as many connections as
 * it may have requests in flight, and up to 64 finished easy handles, reset,
 * for the next requests.
 */
#ifndef PIXRELAY_CURLEV_H
#define PIXRELAY_CURLEV_H

#include "pixrelay/core/config.h"
#include "pixrelay/pix/env.h"

#include <curl/curl.h>
#include <event2/event.h>

struct curlev;

/* A transfer of the pool finished with `result`; `easy` is out of the multi
 * handle already and still belongs to the caller (curlev_release). */
typedef void (*curlev_done_fn)(void *ud, CURL *easy, CURLcode result);

/* A pool for the postbacks of `env`, with the connection cache that env may
 * use (delivery-concurrency, the sandbox its delivery-sandbox-share of it).
 * Borrowed: base, cfg. Out of memory aborts. */
struct curlev *curlev_new(struct event_base *base, const struct config *cfg, enum env env,
			  curlev_done_fn done, void *ud);

/* A pool of its own (the bank API client's) that keeps up to `keep`
 * connections. Borrowed: base. */
struct curlev *curlev_new_pool(struct event_base *base, long keep, curlev_done_fn done, void *ud);

/* An easy handle for a request: a spare one (reset) or a new one. Out of
 * memory aborts. The caller owns it until curlev_add. */
CURL *curlev_easy(struct curlev *p);

/* Start the transfer of `easy`: 0, or -1 when curl refuses it (the caller
 * still owns it then). done runs once it finishes, from the loop. */
int curlev_add(struct curlev *p, CURL *easy);

/* Take `easy` out of the multi handle before it finishes (done will not
 * run for it); the caller owns it again. */
void curlev_remove(struct curlev *p, CURL *easy);

/* Give back a handle that is not in the multi handle: kept, reset, for the
 * next request, or cleaned up when 64 are kept already (or p is NULL). */
void curlev_release(struct curlev *p, CURL *easy);

/* Clean up the spare handles, the multi handle (and its connections) and
 * the timer. Transfers still added are the caller's to remove first. */
void curlev_free(struct curlev *p);

#endif
