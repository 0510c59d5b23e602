/* budget: how many deliveries a dispatcher gives each destination host,
 * each account and each environment (pure: no event loop, no curl, no
 * Redis; every function that needs the time takes `now`, in ms).
 *
 * Hosts: each host's limit of requests at once adapts (AIMD): it starts at
 * delivery-per-host, grows by one after as many fast successes (answered
 * within BUDGET_SLOW_MS) as the limit, up to delivery-per-host-max, and
 * halves on a timeout, a connection failure, a 429 or a 5xx. After
 * BUDGET_BREAKER_FAILURES timeouts in a row the host's circuit opens: it
 * gets nothing for a cool-down (BUDGET_BREAKER_MIN_MS, doubling up to
 * BUDGET_BREAKER_MAX_MS), then one probe (half-open); an answer closes it
 * again, from a limit of one, and a timeout opens it for the next period.
 *
 * Rooms: what a host, an account (delivery-per-account) or an environment
 * (delivery-concurrency; the sandbox its delivery-sandbox-share) may still
 * be given counts what it holds, in flight or waiting for its host; each is
 * raised by what its holder finishes in two settle round trips
 * (budget_ahead): one whose deliveries are answered fast keeps its slots
 * busy through the time it takes to lease more, and one whose deliveries
 * hang finishes next to nothing and gets nothing more.
 */
#ifndef PIXRELAY_BUDGET_H
#define PIXRELAY_BUDGET_H

#include "pixrelay/core/config.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/pix/env.h"

#include <stdbool.h>
#include <stdint.h>

#define BUDGET_TICK_MS 100	     /* budget_tick runs this often: the rates are per tick */
#define BUDGET_HOST_QUEUE_MAX 2048   /* leased deliveries of one host in a process, at most */
#define BUDGET_HOST_IDLE_MS 60000    /* a host without deliveries is forgotten after this */
#define BUDGET_SLOW_MS 1000	     /* a success slower than this does not raise the limit */
#define BUDGET_BREAKER_FAILURES 5    /* timeouts in a row that open a host's circuit */
#define BUDGET_BREAKER_MIN_MS 5000   /* its first cool-down */
#define BUDGET_BREAKER_MAX_MS 300000 /* its longest */
#define BUDGET_HOST_BUCKETS 1024
#define BUDGET_TENANT_BUCKETS 1024

struct delivery;

/* What this process knows of one destination host. */
struct budget_host {
	struct budget_host *next;		 /* in its bucket */
	struct budget_host *all_prev, *all_next; /* every host */
	char *name;
	unsigned active;			 /* requests in curl */
	unsigned nwaiting;			 /* leased, waiting for a slot */
	struct delivery *waiting, *waiting_tail; /* the dispatcher's, oldest first */
	unsigned limit;				 /* concurrent requests allowed now */
	unsigned successes;			 /* fast successes since the limit last grew */
	unsigned failures;			 /* in a row */
	uint64_t open_until_ms;			 /* circuit open: lease nothing before */
	long long cooldown_ms;			 /* the next open period */
	int probing;				 /* half-open: the one probe is out */
	uint64_t last_ms;			 /* last activity */
	unsigned done_now;			 /* attempts finished in this tick */
	double rate;				 /* attempts finished per second (EWMA) */
	unsigned leasing;			 /* offered to settle calls under way */
};

/* What this process holds of one account's deliveries. */
struct budget_tenant {
	struct budget_tenant *next; /* in its bucket */
	char account[IDS_ULID_LEN + 1];
	unsigned held;
	unsigned done_now; /* attempts finished in this tick */
	double rate;	   /* attempts finished per second (EWMA) */
};

struct budget {
	const struct config *cfg; /* borrowed: the delivery-* settings */
	struct budget_host *buckets[BUDGET_HOST_BUCKETS];
	struct budget_host *hosts; /* every host, for walking them */
	unsigned nhosts;
	uint64_t hosts_swept_ms;
	struct budget_tenant *tenants[BUDGET_TENANT_BUCKETS];
	unsigned ntenants;	  /* with deliveries held, or held a moment ago */
	unsigned env_held[2];	  /* deliveries held, by enum env */
	unsigned env_done_now[2]; /* attempts finished in this tick */
	double env_rate[2];	  /* attempts finished per second (EWMA) */
	double settle_ms;	  /* round trip of a settle call (EWMA) */
};

/* Start empty, with the settings of cfg (borrowed; it outlives b). */
void budget_init(struct budget *b, const struct config *cfg);
/* Free every host and tenant. The hosts' waiting deliveries are the
 * caller's: it frees them first. */
void budget_deinit(struct budget *b);

/* The host called `name` (as dispatch_url_host writes it): the one known,
 * or a new one at the first limit (delivery-per-host), owned by b. */
struct budget_host *budget_host_get(struct budget *b, const char *name);

/* How many deliveries a holder finishing `rate` per second finishes in two
 * settle round trips, at most BUDGET_HOST_QUEUE_MAX. */
unsigned budget_ahead(const struct budget *b, double rate);

/* How many more events of h this process would take now: its limit in
 * flight, one more, and enough waiting to keep it busy for two settle round
 * trips (a slow host gets next to no waiting room: what would wait for its
 * slots would hold capacity for nothing), less what it holds; at most
 * BUDGET_HOST_QUEUE_MAX. 0 while its circuit is open; half-open, 1 when
 * nothing of it is held and no probe is out. */
unsigned budget_host_room(const struct budget *b, const struct budget_host *h, uint64_t now);
/* The same for a host this process knows nothing of yet: its first limit,
 * and one more. */
unsigned budget_default_room(const struct budget *b);
/* What an environment may still be given: production the whole
 * delivery-concurrency, the sandbox (anyone may have a sandbox key) its
 * delivery-sandbox-share of it; each plus budget_ahead of its rate. */
unsigned budget_env_room(const struct budget *b, enum env env);
/* What an account may still be given: delivery-per-account plus
 * budget_ahead of its rate, less what it holds. */
unsigned budget_tenant_room(const struct budget *b, const struct budget_tenant *t);

/* May a request to h start now: a free slot under its limit, and no probe
 * out while it is half-open. */
bool budget_host_may_start(const struct budget_host *h);
/* A request to h started (half-open: it is the probe). */
void budget_host_started(struct budget_host *h);
/* A request budget_host_started counted could not start after all: its slot
 * is free again, and a half-open host may send its probe again. */
void budget_host_unstarted(struct budget_host *h);

enum budget_health {
	BUDGET_FINE,	    /* answered in time (2xx, or a 4xx other than 429) */
	BUDGET_STRAINED,    /* 429, 5xx, or the connection failed: fewer at once */
	BUDGET_UNREACHABLE, /* no answer in time (it held a slot for the whole timeout) */
};
/* An attempt at h ended: adapt its limit and circuit (logs when the circuit
 * opens or closes). `fast` when the answer came within BUDGET_SLOW_MS. */
void budget_learn(struct budget *b, struct budget_host *h, enum budget_health health, int fast,
		  uint64_t now);

/* A delivery of `account` in `env` is held (leased): counted against its
 * tenant (made when new, owned by b) and its environment. Returns the
 * tenant, for budget_release and budget_done. */
struct budget_tenant *budget_hold(struct budget *b, const char *account, enum env env);
/* That delivery is no longer held. A tenant is forgotten by budget_tick,
 * once it holds nothing and its rate has decayed: one that empties between
 * two leases keeps its rate. */
void budget_release(struct budget *b, struct budget_tenant *t, enum env env);
/* A request to h for t in env finished: its slot is free, and it counts
 * in the rates. */
void budget_done(struct budget *b, struct budget_host *h, struct budget_tenant *t, enum env env);

/* A settle call took `ms` there and back (the EWMA budget_ahead uses). */
void budget_settled(struct budget *b, double ms);

/* Every BUDGET_TICK_MS: the rates of hosts, tenants and environments; forget
 * tenants that hold nothing and are quiet, and (at most once a second)
 * hosts that hold nothing and are back to the defaults or idle for
 * BUDGET_HOST_IDLE_MS (their circuit closed). */
void budget_tick(struct budget *b, uint64_t now);

#endif
