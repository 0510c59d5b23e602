/* redis: pixrelay's one way to talk to Redis, asynchronously, from the loop.
 *
 * A wrapper around a hiredis async context on libevent that
 *  - connects with a timeout and reconnects by itself with backoff;
 *  - loads every Lua script of `scripts` before it calls itself ready, and
 *    falls back to EVAL when Redis answers NOSCRIPT;
 *  - gives every command a timeout: a command without reply in time fails
 *    with "redis command timed out" and the connection is reset, so a stuck
 *    Redis can never hold a request forever;
 *  - calls each callback exactly once, never from inside the call that
 *    queued the command (except while rds_free runs: then at once, with
 *    err "redis client closed").
 */
#ifndef PIXRELAY_REDIS_H
#define PIXRELAY_REDIS_H

#include "pixrelay/scripts.h"

#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <stddef.h>

struct rds;

/* Reply callback. On success err is NULL and reply is the reply (borrowed:
 * freed when the callback returns). On failure err says what happened; reply
 * is the error reply when Redis answered one, else NULL. */
typedef void (*rds_reply_fn)(void *ud, redisReply *reply, const char *err);

/* Where Redis is: a unix socket path, or host and port; and the db. */
struct rds_addr {
	char path[256];
	char host[256];
	int port;
	int db;
	char password[256];
};

/* Parse redis://[:password@]host[:port][/db], unix:///path[?db=N] or an
 * absolute path. Returns 0, or -1 when malformed. */
int rds_parse_addr(const char *url, struct rds_addr *out);

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
 * cb runs for each event above, from the loop. Borrowed: base, cb's ud for
 * the client's life. Freed with rds_free (cb is not called then). */
struct rds *rds_new_subscriber(struct event_base *base, const struct rds_addr *addr,
			       long timeout_ms, const char *channel, rds_message_fn cb, void *ud);

/* Close the connection; pending callbacks run with err "redis client closed". */
void rds_free(struct rds *r);

/* Nonzero when connected and every script is loaded. */
int rds_ready(const struct rds *r);

/* The last connection problem, for /readyz and logs ("" when none). Borrowed. */
const char *rds_last_error(const struct rds *r);

/* Send one command given as argv (binary-safe with lens, or NUL-terminated
 * strings when lens is NULL). When not ready, cb gets err "redis unavailable". */
void rds_cmd_argv(struct rds *r, rds_reply_fn cb, void *ud, int argc, const char **argv,
		  const size_t *lens);

/* Call a script with `nkeys` keys followed by the other args, via EVALSHA. */
void rds_script(struct rds *r, rds_reply_fn cb, void *ud, enum script_id id, int nkeys, int argc,
		const char **argv, const size_t *lens);

/* The value of field `name` in an HGETALL reply (a flat array of names and
 * values), borrowed from the reply; NULL when absent or when `h` is not an
 * array. A value that is not a string reads as "". */
const char *rds_hash_field(const redisReply *h, const char *name);

/* Blocking access, for the command-line tools and for start-up work done
 * before the event loop runs; never used from the loop.
 * rds_sync_connect returns a connected context (after AUTH/SELECT) or NULL
 * with the reason in err. */
redisContext *rds_sync_connect(const struct rds_addr *addr, long timeout_ms, char *err,
			       size_t errlen);
/* Run a script (EVALSHA, EVAL on NOSCRIPT). Returns the reply (caller frees
 * with freeReplyObject) or NULL when the connection failed. */
redisReply *rds_sync_script(redisContext *c, enum script_id id, int nkeys, int argc,
			    const char **argv);

/* A deep copy of a reply, to keep past its callback (hiredis frees replies
 * when the callback returns); free it with freeReplyObject. */
redisReply *rds_reply_copy(const redisReply *r);

#endif
