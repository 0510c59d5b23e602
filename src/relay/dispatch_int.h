/* dispatch_int.h: what the files of the dispatcher share (src/relay/ only):
 * the dispatcher itself and one delivery, and the calls between
 * dispatch.c (leasing, settling, outcomes) and delivery.c (one delivery's
 * request and what its end means).
 */
#ifndef PIXRELAY_DISPATCH_INT_H
#define PIXRELAY_DISPATCH_INT_H

#include "pixrelay/relay/dispatch.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/netaddr.h"
#include "pixrelay/pix/backoff.h"
#include "pixrelay/relay/budget.h"
#include "pixrelay/relay/curlev.h"
#include "pixrelay/relay/lease.h"
#include "pixrelay/store/events.h"
#include "pixrelay/pix/endpoint.h"
#include "post_int.h"

#include <curl/curl.h>
#include <stdint.h>

#define TICK_MS BUDGET_TICK_MS /* the periodic look at every shard's timers */

struct shard; /* dispatch.c's */

/* A dispatcher (dispatch_new). */
struct dispatch {
	struct event_base *base;
	struct rds *r;
	const struct config *cfg;
	struct curlev *pools[2]; /* by enum env (curlev.h) */
	struct event *tick;	 /* every TICK_MS */
	struct event *flush;	 /* zero-delay: settle the shards that want it */
	struct netaddr_list allow;
	struct backoff_policy policy;
	char token[IDS_ULID_LEN + 1]; /* this process's id, the stem of lease tokens */
	unsigned held;		      /* leased deliveries whose outcome is not queued */
	unsigned reserved;	      /* leases asked for by calls under way */
	unsigned settling;	      /* settle calls under way */
	unsigned queued;	      /* outcomes not yet sent */
	int nshards;
	struct shard *shards;
	int next_shard; /* round robin of the free capacity */
	int stopped;
	struct budget budget;  /* hosts, tenants, environments (budget.h) */
	long long subscribers; /* of the deliveries channel (pixrelay tail) */
	uint64_t subscribers_ms;
	int counting;
	uint64_t beat_ms, swept_beats_ms;
	struct delivery *active; /* in curl now (freed by dispatch_free if still there) */
};

/* A leased event, from its lease to its outcome: waiting for a slot of its
 * host (next_waiting), then in curl (the active list). */
struct delivery {
	struct dispatch *d;
	int shard;
	/* the lease's token: only its holder may settle it; a stream event's is
	 * its batch, "@<first entry>/<last entry>" (lease.h) */
	char token[LEASE_TOKEN_MAX];
	struct delivery *prev_active, *next_active; /* in curl now */
	struct delivery *next_waiting;
	char id[LEASE_ID_MAX];		/* the event's, or "<event id>/<endpoint id>" */
	char endpoint[ENDPOINT_ID_MAX]; /* its webhook endpoint, "" = the postbackUrl */
	char *url, *body, *account;
	char *signing, *signing_prev, *compat;
	char *headers;	     /* the endpoint's static headers, "Name: value" lines */
	char *order, *queue; /* as leased: sent back with the outcome */
	char sid[48];	     /* its stream entry ("" = none), sent back likewise */
	char env[16];
	struct budget_tenant *tenant;
	int attempts, budget_base;
	long long created_ms;
	struct budget_host *host;
	struct curlev *pool;
	CURL *easy;
	struct post post; /* its request (post.c) */
	uint64_t start_ms;
	uint64_t waiting_since_ms;
};

/* ---- dispatch.c ---- */

/* Queue the outcome of dl for its shard's next settle call, and free dl.
 * A release made no attempt (the destination was busy). */
void dispatch_complete(struct delivery *dl, const char *what, long long next_ms, long status,
		       const char *error);

/* ---- delivery.c ---- */

/* The environment of dl's event. */
enum env delivery_env(const struct delivery *dl);
/* Take a slot of dl's host and send: its outcome is queued
 * (dispatch_complete) when curl is done with it, or at once when curl
 * refuses it. */
void delivery_start(struct delivery *dl);
/* A slot of `h` is free: start its oldest waiting delivery. */
void delivery_start_waiting(struct budget_host *h);
/* A transfer of a pool finished (curlev_done_fn; ud is the dispatcher):
 * judge it, teach the budget, queue its outcome, start what waits. */
void delivery_done(void *ud, CURL *easy, CURLcode result);
/* Take dl out of curl without an outcome (its lease runs out), and free it. */
void delivery_abandon(struct delivery *dl);
/* Free dl (its easy handle back to its pool, its secrets wiped). */
void delivery_free(struct delivery *dl);

#endif
