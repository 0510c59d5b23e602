/* redis_int.h: what the files of the Redis client (src/redis/) share and
 * nobody else sees: the client (struct rds), its nodes (struct node: one
 * connection to one Redis) and its commands (struct cmd: formatted once,
 * with their bookkeeping), and the functions each file lends the others.
 * The public face is include/pixrelay/redis/redis.h; domain modules never
 * include this.
 *
 * Who does what: cmd.c formats commands and keeps their lists (pure);
 * redis.c is the client, its public calls, routing and parked retries;
 * node.c the nodes and their connections; send.c sends a command on a node
 * and reads its replies (and WAIT); cluster.c detects a cluster, keeps its
 * slot map and follows MOVED and ASK; sentinel.c asks Sentinel for the
 * master; sub.c is the pub/sub subscriber; block.c the blocking client;
 * health.c says how much of Redis is served and watches the primaries'
 * replicas; addr.c parses addresses (pure). */
#ifndef PIXRELAY_REDIS_INT_H
#define PIXRELAY_REDIS_INT_H

#include "pixrelay/redis/redis.h"

#include <event2/event.h>
#include <hiredis/async.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

#define RECONNECT_MIN_MS 50 /* a node's first wait to reconnect, again after a success */

enum mode {
	MODE_DETECT,   /* not known until the first node answers CLUSTER SLOTS */
	MODE_SINGLE,   /* one Redis */
	MODE_CLUSTER,  /* a Redis Cluster */
	MODE_SENTINEL, /* the master that Sentinel names */
};

enum role {
	ROLE_DATA,     /* commands and scripts (in a subscriber client: the map only) */
	ROLE_SUB,      /* one subscribed connection */
	ROLE_SENTINEL, /* asks the sentinels where the master is */
};

/* What to do with a command once the last reply of its current send is in. */
enum after {
	AFTER_FREE,   /* answered (or failed): free it */
	AFTER_ROUTE,  /* route it again (MOVED: the map says where now) */
	AFTER_ASK,    /* send it once to `ask` after ASKING */
	AFTER_RETRY,  /* route it again a little later */
	AFTER_RELOAD, /* load its script on the same node, then send it there again */
	AFTER_HOLD,   /* answered: held until a WAIT confirms the replicas have it */
};

/* The longest host name of a node, NUL included: a MOVED or ASK to a longer
 * one is an error (rslot_parse_error refuses it), never a host cut short. */
#define NODE_HOST_MAX 256

/* evio.c: a connection's events on the loop (hiredis' libevent adapter,
 * reading on through a reply under way). */
struct rds_evio {
	redisAsyncContext *ac;
	struct event *rev, *wev;
	int reading, gone; /* in its read callback; cleaned up meanwhile */
};
struct rds_evio *rds_evio_attach(redisAsyncContext *ac, struct event_base *base);

/* One connection to one Redis node. Nodes are freed only with their client,
 * so a command may keep pointing at one. */
struct node {
	struct rds *r;
	enum role role;
	char host[NODE_HOST_MAX];
	int port;
	char path[256];
	char name[280]; /* host:port or the path, for messages */
	redisAsyncContext *ac;
	int connected; /* the connection is up */
	int ready;     /* setup answered: commands may go */
	int setup_left;
	int in_map;  /* cluster: a primary of the current map */
	int seed;    /* the address given: kept even when it owns no slots */
	int retired; /* no longer in the map: closed, not reconnected */
	int subscribed;
	int was_connected; /* the next connection is a reconnection */
	int failed_tries;  /* connection attempts that failed since it was last ready */
	int timer_armed;
	long backoff_ms;
	struct event *reconnect_timer, *connect_timer, *timer;
	struct cmd *sent, *sent_tail;	    /* sent, waiting for replies, oldest first */
	struct cmd *waiting, *waiting_tail; /* to send once the node is ready */
	/* rds_set_wait: scripts answered, held until one WAIT covers them */
	struct cmd *held, *held_tail;
	uint64_t wseq;	      /* scripts sent on this connection */
	uint64_t wait_covers; /* the last of them the WAIT on its way covers */
	int wait_inflight;
	/* health.c, rds_watch_replicas: what ROLE last said */
	int replicas;		/* replicas connected to it; -1: not known */
	int replicas_short;	/* fewer than wait_replicas: said in the log */
	uint64_t role_asked_ms; /* a ROLE of the watch is on its way since; 0: none */
	struct node *next;
};

struct cmd;
typedef void (*internal_fn)(struct cmd *c, redisReply *reply, const char *err);

struct cmd {
	struct rds *r;
	rds_reply_fn cb;
	void *ud;
	internal_fn icb;	 /* a command of the layer itself (setup, map, sentinel) */
	struct node *node;	 /* where it was last sent */
	redisAsyncContext *ac;	 /* on which connection */
	struct node *ask;	 /* AFTER_ASK: where */
	struct cmd *prev, *next; /* in a node's sent or waiting list, or parked */
	uint64_t deadline_ms;	 /* of the whole command, retries included */
	uint64_t sent_ms;
	uint64_t sent_us; /* for the latency metric */
	uint64_t due_ms;  /* parked: when to go again */
	const char *fail; /* parked: fail with this when due */
	const char *why;  /* the last reason it had to be tried again */
	redisReply *held; /* the answer, kept until WAIT confirms */
	uint64_t wseq;	  /* its number among the scripts sent on its connection */
	enum after after;
	int slot;   /* -1: any node */
	int parts;  /* replies still to come for the current send */
	int script; /* script id + 1 for EVALSHA */
	int tries;
	unsigned char done, reloaded, asking, redirects, guard_sent;
	unsigned char part_error; /* rslot_error + 1 of the first error of a guarded part */
	int part_slot, part_port;
	char part_text[96];    /* its host (MOVED, ASK) or its text */
	size_t keyoff, keylen; /* the routing argument inside buf */
	size_t len;
	char buf[]; /* the command, formatted once (RESP) */
};

struct rds {
	struct event_base *base;
	int own_base; /* made by rds_open */
	struct rds_addr addr;
	long timeout_ms;
	enum mode mode;
	int ready;
	int closing;
	int wait_replicas;
	struct node *nodes;    /* every node ever used */
	struct node *data;     /* single and Sentinel: the node commands go to */
	struct node *sentinel; /* Sentinel: the connection to a sentinel */
	int sentinel_next;     /* the sentinel to try next */
	int resolve_wanted;    /* Sentinel: ask for the master once connected */
	struct node **slots;   /* cluster: the primary of each slot */
	int covered;	       /* every slot has a primary */
	int refreshing;	       /* a CLUSTER SLOTS is on its way */
	uint64_t refresh_due;  /* when refresh_timer fires */
	int resolving;	       /* Sentinel: a question is on its way */
	struct event *refresh_timer;
	struct cmd *parked; /* commands waiting to go again, or to fail */
	struct event *park_timer;
	int park_armed;
	uint64_t park_due;
	/* a subscriber client */
	char *channel;
	int channel_slot;
	struct node *sub;
	rds_message_fn on_message;
	void *message_ud;
	int wake_on_ready; /* rds_open: stop the private loop once ready */
	char last_error[256];
	/* health.c: rds_watch_replicas asks the primaries ROLE, also on a timer */
	int watch_replicas;
	struct event *watch_timer;
};

/* The loop's cached time in ms (deadlines, timers), and ms as a timeval.
 * The wall clock in us (the latency metric) is ids_now_us. */
static inline uint64_t now_ms(struct rds *r)
{
	struct timeval tv;

	event_base_gettimeofday_cached(r->base, &tv);
	return (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
}

static inline struct timeval tv_ms(long ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	return tv;
}

/* ---- cmd.c: commands as data ---- */

/* The number of decimal digits of v. */
size_t rds_digits(size_t v);

/* A command of `nhead` fixed arguments then argc given ones, formatted into
 * one block with its bookkeeping; `key` is the index (over both) of the
 * argument it is routed by, or -1. Never fails (out of memory aborts). */
struct cmd *rds_cmd_new(struct rds *r, rds_reply_fn cb, void *ud, int nhead, const char **head,
			int argc, const char **argv, const size_t *lens, int key);
void rds_cmd_free(struct cmd *c); /* with the answer it holds, if any */

/* Answer the caller (or the layer, for its own commands), once. */
void rds_complete(struct cmd *c, redisReply *reply, const char *err);

/* The doubly linked lists commands wait in (tail may be NULL to remove). */
void rds_list_append(struct cmd **head, struct cmd **tail, struct cmd *c);
void rds_list_remove(struct cmd **head, struct cmd **tail, struct cmd *c);

/* "EXISTS <key> {<its hash tag>}:rds-migration-guard" into out: 0, or -1
 * when the key has no usable tag or is too long. */
int rds_guard_format(const struct cmd *c, char *out, size_t outlen, size_t *len);

/* ---- redis.c: the client, routing and parked commands ---- */

/* A client on base (rds_new, rds_new_subscriber, rds_open). */
struct rds *rds_create(struct event_base *base, const struct rds_addr *addr, long timeout_ms,
		       const char *channel, rds_message_fn cb, void *ud);

/* Send c where it belongs, or keep it until it can go, or fail it. */
void rds_route(struct cmd *c);

/* Park c: fail it with `fail` (not NULL) at the next turn of the loop, or
 * route it again after delay_ms. */
void rds_park(struct cmd *c, long delay_ms, const char *fail);

/* Try c again later, or fail it when its time is up. */
void rds_retry_later(struct cmd *c, const char *why);

/* Work out whether the client is ready now; log and wake rds_open when it
 * changes. */
void rds_update_ready(struct rds *r);

/* ---- node.c: nodes and their connections ---- */

/* A log line about the connections: info for a server's client, debug for
 * the command-line tools' (they report the reason themselves). */
void rds_note(const struct rds *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A connection problem: logged (once while it lasts) and kept for
 * rds_last_error. */
void rds_node_error(struct node *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Where n connects next (its name follows). */
void rds_node_set_address(struct node *n, const char *host, int port, const char *path);
/* A node of r, not connected yet; freed with r. */
struct node *rds_node_new(struct rds *r, enum role role, const char *host, int port,
			  const char *path);

/* The data node at host:port, made (and connecting) when new, revived when
 * retired. */
struct node *rds_node_get(struct rds *r, const char *host, size_t hostlen, int port);

/* Connect n again after its backoff (which doubles), or now. */
void rds_schedule_reconnect(struct node *n);
void rds_connect_now(struct node *n);

/* The commands waiting for n, which will not be ready soon: elsewhere, later,
 * or failed. None of them was sent. */
void rds_requeue_waiting(struct node *n, const char *why);

/* Drop n's connection: commands sent there fail, the others wait for a
 * reconnect. */
void rds_node_reset(struct node *n, const char *why);

/* A node that owns no slot any more: closed once its commands are answered,
 * and not reconnected. */
void rds_node_retire(struct node *n);

/* Start the timer that watches n's oldest command, unless it runs. */
void rds_node_arm(struct node *n);

/* n's setup is done: commands may go. */
void rds_node_ready(struct node *n);

/* The answer to one setup command of a node (an internal_fn). */
void rds_on_setup_reply(struct cmd *c, redisReply *reply, const char *err);

/* After AUTH (and the cluster question): what a data node needs before
 * commands may go. */
void rds_setup_data(struct node *n);

/* ---- send.c: sending on a node, replies, WAIT ---- */

/* Send c on n as it is now (ready, or during its setup). */
void rds_node_send(struct node *n, struct cmd *c);

/* A command of the layer itself on node n, answered to fn. */
void rds_internal_send(struct node *n, internal_fn fn, int argc, const char **argv);

/* ---- cluster.c: detection, the slot map, redirections ---- */

/* Ask the first node CLUSTER SLOTS: its answer says one Redis or a cluster. */
void rds_cluster_detect(struct node *n);

/* A ready primary of the map, or NULL. */
struct node *rds_any_primary(struct rds *r);

/* Ask for the slot map in delay_ms (sooner if already planned sooner). */
void rds_refresh_soon(struct rds *r, long delay_ms);
/* The refresh timer (made by rds_create): CLUSTER SLOTS to a ready node. */
void rds_on_refresh_timer(evutil_socket_t fd, short what, void *arg);

/* An error reply that may mean "not here" or "not now": plan what to do
 * with c. True when c will be sent again (c->after says how), false when
 * the error is the answer. */
bool rds_redirect(struct cmd *c, const char *err, size_t len);

/* The error `text` is c's answer (res: the error reply, or NULL). */
void rds_give_up(struct cmd *c, redisReply *res, const char *text);

/* ---- health.c: what is served, the primaries' replicas ---- */

/* True when n is a primary commands go to: one of the cluster's map, or
 * the one Redis (Sentinel's master). */
bool rds_node_is_primary(const struct node *n);

/* n became ready: with rds_watch_replicas, ask it ROLE now. */
void rds_watch_node(struct node *n);

/* A WAIT on n came back with fewer replicas than wanted: ask ROLE now,
 * unless the watch knows already (or is asking). */
void rds_watch_doubt(struct node *n);

/* ---- sentinel.c ---- */

/* The next connection of this sentinel node goes to the next sentinel. */
void rds_sentinel_next(struct node *n);

/* Ask a sentinel where the master is, then connect there. */
void rds_sentinel_resolve(struct rds *r);

/* A setup step of the master's node: ROLE must say "master". */
void rds_sentinel_check_role(struct node *n);

/* ---- sub.c ---- */

/* SUBSCRIBE on n, the subscriber's connection (reset when it cannot). */
void rds_sub_subscribe(struct node *n);

/* Point the subscription at the node it belongs on. */
void rds_sub_retarget(struct rds *r);

#endif
