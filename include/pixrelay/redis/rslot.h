/* rslot: the pure parts of the Redis Cluster protocol, without I/O.
 *
 *  - the hash slot of a key (CRC16/XMODEM of the key, or of its hash tag:
 *    the text between the first '{' and the next '}' when it is not empty,
 *    modulo 16384), as the cluster specification defines it;
 *  - which argument of a command decides the node it goes to;
 *  - the MOVED and ASK redirections and the other error replies that mean
 *    "not executed, try again";
 *  - the slot map of a CLUSTER SLOTS reply.
 *
 * The Redis layer (redis.c) uses these; unit tests call them directly.
 */
#ifndef PIXRELAY_RSLOT_H
#define PIXRELAY_RSLOT_H

#include <hiredis/hiredis.h>
#include <stddef.h>

#define RSLOT_COUNT 16384

/* The hash slot of key[0..len). */
int rslot_of(const char *key, size_t len);

/* The part of key[0..len) that is hashed: its hash tag, or the whole key.
 * Writes its start and length. */
void rslot_hashed_part(const char *key, size_t len, const char **part, size_t *partlen);

/* The index in argv of the argument a command is routed by, or -1 when any
 * node may answer it. EVAL/EVALSHA: the first key (-1 without keys);
 * PUBLISH, SUBSCRIBE: the channel; PUBSUB NUMSUB: the first channel;
 * commands without keys (PING, SCRIPT, INFO, CLUSTER, WAIT, ...): -1; any
 * other command: argv[1]. lens may be NULL (NUL-terminated argv). */
int rslot_key_index(int argc, const char **argv, const size_t *lens);

/* What an error reply asks the client to do. */
enum rslot_error {
	RSLOT_ERR_OTHER,    /* an answer: give it to the caller */
	RSLOT_ERR_MOVED,    /* the slot lives elsewhere now: refresh the map, resend */
	RSLOT_ERR_ASK,	    /* this one command goes to another node, after ASKING */
	RSLOT_ERR_RETRY,    /* not executed (TRYAGAIN, CLUSTERDOWN, LOADING, MASTERDOWN):
			       the same again a little later */
	RSLOT_ERR_READONLY, /* not executed: the node is a replica now */
	RSLOT_ERR_NOSCRIPT, /* the script is not loaded on that node */
};

/* Classify the text of an error reply. For MOVED and ASK also writes the slot,
 * the host (NUL-terminated, at most hostlen - 1 bytes) and the port; a
 * malformed redirection is RSLOT_ERR_OTHER and writes nothing. */
enum rslot_error rslot_parse_error(const char *err, size_t len, int *slot, char *host,
				   size_t hostlen, int *port);

/* One range of slots and the address of its primary, borrowed from the
 * reply it was read from (host is not NUL-terminated). */
struct rslot_range {
	int start, end;
	const char *host;
	size_t hostlen;
	int port;
};

/* Read a CLUSTER SLOTS reply: each element [start, end, [host, port, ...],
 * replicas...]. A primary announced without an address ("" or "?") is at
 * `fallback_host` (the node that answered). Writes a new array (the caller
 * frees it) into *out and returns the number of ranges, or -1 when the reply
 * is malformed (then *out is not written). */
int rslot_parse_slots(const redisReply *reply, const char *fallback_host, struct rslot_range **out);

#endif
