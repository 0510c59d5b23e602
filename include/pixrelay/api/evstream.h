/* evstream: live streams of an account's events (GET /v1/events/stream, SSE).
 *
 * Every event is written by a script through event_write (src/store/lua/lib/
 * event.lua). While this process serves a stream for an account of shard k,
 * it keeps the key <prefix>{s<k>}:live set (30 s TTL, renewed every 10 s) to
 * the name of one pub/sub channel, <prefix>live; event_write reads that key
 * and, when it is there, PUBLISHes the event on the channel in the same
 * script. Each process has one subscriber connection on the channel (opened
 * with its first stream) and hands each message to the streams of its
 * account in the process: no Redis command per stream and per event.
 *
 * Cost on the hot path (every charge transition, expiry, ingest, transfer):
 * one GET of a missing key per event while no stream is open in the shard;
 * with one open, a PUBLISH of the event (id, account, type, destination,
 * body: ~1 KB) to the channel (on Redis Cluster PUBLISH is broadcast to every
 * node). docs/performance.md has the measured figures.
 *
 * A stream opens in this order: the account's signing secrets are read (the
 * stream signs each event as its postback would be signed, at the moment it
 * is sent), the subscriber is ready, the shard's key is set; only then are
 * the events the client missed (Last-Event-ID or ?since) read from the
 * account's index, oldest first, in pages paced by what the client has read,
 * while live messages wait in a bounded buffer; then the buffer, then live.
 * Nothing is lost between the two: an event written after the key was set is
 * published, one written before is in the index. Duplicates (an event both
 * read and published) are dropped by id. A resume starts RESUME_OVERLAP_MS
 * before the last event id's time (events of several processes may be
 * written out of their timestamps' order), so a client may see an event again
 * after reconnecting: ids are stable, skip the ones you have.
 *
 * Bounds: stream-max streams per process, but never more than half of
 * max-connections (EVSTREAM_CONNECTION_SHARE: the rest stay for the API),
 * stream-max-per-account per account in a process; a stream ends after
 * stream-max-lifetime seconds (up to a tenth earlier, drawn per stream, so
 * that streams opened together do not reconnect together) with a last
 * comment ": end: ..." and the client resumes with Last-Event-ID; a client
 * with more than stream-max-pending bytes unread is dropped (it reconnects
 * and resumes); a comment line every stream-heartbeat seconds keeps proxies
 * from closing an idle stream; live messages waiting during a replay are
 * capped (the stream ends; a reconnect resumes). When the subscriber
 * connection is lost every stream ends (clients resume).
 *
 * A stream lives no longer than its API key: revoking the key ends it, in
 * every process, within the time an announcement takes, with a last comment
 * ": end: ..." (src/api/evstream_key.c tells how, and the window it closes).
 */
#ifndef PIXRELAY_EVSTREAM_H
#define PIXRELAY_EVSTREAM_H

#include "pixrelay/store/auth.h"
#include "pixrelay/core/config.h"
#include "pixrelay/http/http.h"
#include "pixrelay/redis/redis.h"

#include <event2/event.h>

#define EVSTREAM_RESUME_OVERLAP_MS 5000
/* Streams hold at most 1/EVSTREAM_CONNECTION_SHARE of max-connections. */
#define EVSTREAM_CONNECTION_SHARE 2
/* A stream ends up to 1/EVSTREAM_LIFETIME_JITTER of stream-max-lifetime
 * early (drawn per stream). */
#define EVSTREAM_LIFETIME_JITTER 10

struct evstream;

/* Why evstream_open refused a stream (it answered the request itself). */
enum evstream_result {
	EVSTREAM_OK = 0,
	EVSTREAM_TOO_MANY = 1, /* per process or per account: 429 answered */
	EVSTREAM_STOPPED = 2,  /* the process is stopping: 503 answered */
};

/* The streams of this process. Borrowed for its life: base, r (commands),
 * addr (the subscriber connects there), cfg. */
struct evstream *evstream_new(struct event_base *base, struct rds *r, const struct rds_addr *addr,
			      const struct config *cfg);

/* Serve `req` as a stream of the events of `account` of `env` created from
 * `from_ms` on (0: only new ones), skipping `skip_id` (the client's
 * Last-Event-ID, or NULL), for the API key whose SHA-256 is `key_sha` (hex;
 * the stream ends when that key is revoked). The request is answered in
 * every case: 429/503 when refused, 503 when Redis cannot be used, 401 when
 * the key turns out revoked before the stream begins, else a 200
 * text/event-stream that lasts until the client goes, the process stops,
 * the client is too slow, the key is revoked or stream-max-lifetime is over.
 * Copies the strings. */
int evstream_open(struct evstream *h, struct http_req *req, enum env env, const char *account,
		  const char *key_sha, long long from_ms, const char *skip_id);

/* Every event of the subscription to the invalidation channel (an
 * rds_message_fn; give it to cache_watch with the evstream as ud): an
 * announced key ("k:<sha256>") ends the streams opened with it; the
 * subscription (re)established has every stream's key read again. NULL ud
 * is fine. */
void evstream_announcement(void *ud, enum rds_sub_event what, const char *msg, size_t len);

/* Streams open now. */
unsigned evstream_count(const struct evstream *h);

/* End every stream (SIGTERM: clients reconnect to another process) and
 * refuse new ones. NULL is fine. */
void evstream_stop(struct evstream *h);

/* End every stream and free. Call after the command client `r` was freed
 * (its callbacks have run) and before the HTTP server is. NULL is fine. */
void evstream_free(struct evstream *h);

/* The time (ms) encoded in an event id ("evt_" + ULID), or -1 when `id` is
 * not one. */
long long evstream_id_ms(const char *id);

#endif
