/* redis: pixrelay's one way to talk to Redis, asynchronously, from the loop.
 *
 * Domain modules give it commands and scripts with their keys; they never see
 * a node, a redirection or a reconnect. Behind that it
 *  - speaks to one Redis, to a Redis Cluster, or to the master that Redis
 *    Sentinel names. A cluster is detected at connect (CLUSTER SLOTS answers
 *    with a slot map instead of "cluster support disabled"); Sentinel is asked
 *    for with a redis-sentinel:// address;
 *  - in a cluster: keeps the slot map (CLUSTER SLOTS, refreshed after MOVED,
 *    after a lost node and every few seconds), keeps one connection per
 *    primary, sends each command to the primary of its key's slot, follows
 *    MOVED and ASK, and tries again after TRYAGAIN, CLUSTERDOWN and LOADING
 *    until the command's timeout (a command for a slot whose primary is
 *    known to be down, its last connection attempt failed, fails at once:
 *    the other slots are served meanwhile, see rds_serving). A script runs
 *    inside MULTI/EXEC behind an EXISTS of its first key and of a key of
 *    the same slot that never exists (`{tag}:rds-migration-guard`): while
 *    its slot is being migrated that EXISTS is refused (TRYAGAIN, or ASK
 *    then TRYAGAIN), so a script never runs half on each side of a
 *    migration, and the command is sent again once the slot has moved;
 *  - with Sentinel: asks the sentinels for the master's address, checks
 *    with ROLE that it is the master, and asks again whenever the connection
 *    is lost or the node says it became a replica (READONLY);
 *  - connects each node with a timeout and reconnects by itself with
 *    backoff; loads every Lua script of `scripts` on every node before it
 *    sends commands there, and again on a node that answers NOSCRIPT;
 *  - gives every command a timeout: one timer per connection watches the
 *    oldest command without reply; when it is older than the timeout it
 *    fails with "redis command timed out" and that connection is reset, so a
 *    stuck node can never hold a request forever. Commands that had reached
 *    a node whose connection is lost fail (they may have run); commands that
 *    certainly did not run are sent again until their timeout;
 *  - optionally (rds_set_wait) answers a script only after WAIT has
 *    confirmed that N replicas have it: one WAIT at a time per connection,
 *    covering every script answered before it was sent; and
 *    (rds_watch_replicas) asks each primary ROLE to know which have fewer
 *    replicas than that;
 *  - calls each callback exactly once, never from inside the call that
 *    queued the command (except while rds_free runs: then at once, with
 *    err "redis client closed").
 *
 * Per command: one allocation (the command is formatted once, into the
 * same block as its bookkeeping, and that text is what every retry sends),
 * no timer of its own.
 */
#ifndef PIXRELAY_REDIS_H
#define PIXRELAY_REDIS_H

#include "pixrelay/redis/scripts.h"

#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stddef.h>

struct rds;

/* Reply callback. On success err is NULL and reply is the reply (borrowed:
 * freed when the callback returns). On failure err says what happened; reply
 * is the error reply when Redis answered one, else NULL. */
typedef void (*rds_reply_fn)(void *ud, redisReply *reply, const char *err);

#define RDS_MAX_SENTINELS 8

/* Where Redis is: a unix socket path, or host and port; and the db. With
 * Sentinel (master[0] set): the sentinels to ask for the master's address. */
struct rds_addr {
	char path[256];
	char host[256];
	int port;
	int db;
	char password[256];
	char sentinel_password[256]; /* AUTH to the sentinels; empty: none */
	char master[128];
	int nsentinels;
	struct rds_hostport {
		char host[256];
		int port;
	} sentinels[RDS_MAX_SENTINELS];
};

/* Parse redis://[:password@]host[:port][/db], unix:///path[?db=N], an
 * absolute path, or
 * redis-sentinel://[:password@]host[:port][,host[:port]...]/master[/db]
 * (sentinels on port 26379 unless given; the password is the master's).
 * Returns 0, or -1 when malformed. */
int rds_parse_addr(const char *url, struct rds_addr *out);

/* The password the sentinels of a redis-sentinel:// address require (the
 * redis-sentinel-password setting; "" for none). Returns 0, or -1 when it is
 * too long. */
int rds_addr_set_sentinel_password(struct rds_addr *a, const char *password);

/* Create a client for `addr` on `base`; it starts connecting at once.
 * Takes nothing; the caller frees with rds_free. */
struct rds *rds_new(struct event_base *base, const struct rds_addr *addr, long timeout_ms);

/* What happens on a subscriber client: a message (msg, len: borrowed for the
 * call), the subscription (re)established, or the connection lost (messages
 * published meanwhile are missed; it reconnects and subscribes again by
 * itself). */
enum rds_sub_event { RDS_SUB_MESSAGE, RDS_SUB_READY, RDS_SUB_LOST };
typedef void (*rds_message_fn)(void *ud, enum rds_sub_event what, const char *msg, size_t len);

/* A client that only listens to pub/sub `channel` (no commands, no scripts):
 * cb runs for each event above, from the loop. In a cluster it subscribes on
 * the primary of the channel's slot (every node receives every PUBLISH; that
 * one is also where PUBSUB NUMSUB of the channel is asked), and moves when
 * that slot does. Borrowed: base, cb's ud for the client's life. Freed with
 * rds_free (cb is not called then). */
struct rds *rds_new_subscriber(struct event_base *base, const struct rds_addr *addr,
			       long timeout_ms, const char *channel, rds_message_fn cb, void *ud);

/* Answer scripts (EVALSHA) only once WAIT has confirmed that `replicas`
 * replicas of their node have received the change (0, the default: do not
 * wait). A WAIT covers every write sent before it on its connection, so one
 * is in flight per connection at a time and its answer releases every
 * script answered before it was sent. WAIT may take up to half the command
 * timeout; fewer replicas in that time make those scripts fail with
 * "redis: the change reached N of M replicas in time" (the change did
 * happen on the primary). */
void rds_set_wait(struct rds *r, int replicas);

/* Close every connection; pending callbacks run with err "redis client
 * closed". A client made by rds_open frees its private loop too. */
void rds_free(struct rds *r);

/* True when commands can go everywhere: connected and every script
 * loaded on the one Redis, or on every primary of a cluster with every slot
 * covered (a subscriber: subscribed). */
bool rds_ready(const struct rds *r);

/* The last connection problem, for /readyz and logs ("" when none). Borrowed. */
const char *rds_last_error(const struct rds *r);

/* True when some commands can go: the one Redis (or Sentinel's master) is
 * ready, or in a cluster at least one primary of the map is. While it is
 * and rds_ready is not, a command for a slot whose primary is missing fails
 * with err "redis unavailable ..." (at once when that primary is known to
 * be down) and the others are answered as usual. A subscriber: rds_ready. */
bool rds_serving(const struct rds *r);

/* How much of the keyspace is served: the slots (of RSLOT_COUNT, 16384)
 * whose primary is connected with the scripts loaded. One Redis or
 * Sentinel's master counts as every slot or none. */
int rds_slots_served(const struct rds *r);

/* What the client knows of one primary. */
struct rds_primary {
	const char *name; /* "host:port" or the socket path; borrowed, lives as
			     long as the client */
	int ready;	  /* connected, scripts loaded */
	int replicas;	  /* replicas connected to it as ROLE last said; -1 when
			     not known (not watched, or not asked yet) */
	int below;	  /* ready, with fewer replicas than rds_set_wait asks for */
};

/* The primaries commands go to (the one Redis, Sentinel's master, or the
 * cluster map's primaries): up to max of them into out (out may be NULL
 * when max is 0). Returns how many there are, which may be more than max. */
int rds_primaries(const struct rds *r, struct rds_primary *out, int max);

/* With rds_set_wait > 0: ask every primary ROLE when it becomes ready, every
 * 2 s, and when a WAIT there comes back short, to know how many replicas
 * each has (rds_primaries). A primary with fewer than the rds_set_wait
 * setting refuses every script answer (WAIT comes back short); the log says
 * so once when it happens (warning) and once when it ends (info). For a
 * server's client: the command-line tools have no use for it. */
void rds_watch_replicas(struct rds *r);

/* Send one command given as argv (binary-safe with lens, or NUL-terminated
 * strings when lens is NULL); argv is copied before this returns. cb may be
 * NULL when nobody waits for the answer. When its
 * node is not ready, cb gets err "redis unavailable" (in a cluster, after
 * trying again until the timeout). */
void rds_cmd_argv(struct rds *r, rds_reply_fn cb, void *ud, int argc, const char **argv,
		  const size_t *lens);

/* Call a script with `nkeys` keys followed by the other args, via EVALSHA
 * (every key in one slot: the first one routes it). */
void rds_script(struct rds *r, rds_reply_fn cb, void *ud, enum script_id id, int nkeys, int argc,
		const char **argv, const size_t *lens);

/* The value of field `name` in an HGETALL reply (a flat array of names and
 * values), borrowed from the reply; NULL when absent or when `h` is not an
 * array. A value that is not a string reads as "". */
const char *rds_hash_field(const redisReply *h, const char *name);

/* Blocking use, for the command-line tools and for start-up work done before
 * the server's loop runs (never from a loop): a client on a private event
 * loop, the same client as above (cluster, Sentinel and all). rds_open waits
 * until it is ready, at most timeout_ms; NULL with the reason in err
 * otherwise. Free it with rds_free. */
struct rds *rds_open(const struct rds_addr *addr, long timeout_ms, char *err, size_t errlen);

/* The private loop of a client made by rds_open (borrowed), for running
 * asynchronous domain calls from the command line; NULL for others. */
struct event_base *rds_base(const struct rds *r);

/* On a client made by rds_open: send one command (argv as rds_cmd_argv) and
 * run the private loop until its answer. Returns the reply, an error reply
 * included (the caller frees it with freeReplyObject), or NULL with the
 * reason in err when there is none. */
redisReply *rds_call(struct rds *r, int argc, const char **argv, const size_t *lens, char *err,
		     size_t errlen);

/* The same for a script (as rds_script). */
redisReply *rds_call_script(struct rds *r, enum script_id id, int nkeys, int argc,
			    const char **argv, char *err, size_t errlen);

/* A deep copy of a reply, to keep past its callback (hiredis frees replies
 * when the callback returns); free it with freeReplyObject. */
redisReply *rds_reply_copy(const redisReply *r);

#endif
