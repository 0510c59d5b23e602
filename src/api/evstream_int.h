/* evstream_int: what the files of the live event streams share, private to
 * src/api/.
 *
 * evstream.c holds the streams themselves (opening, catching up, live
 * messages, heartbeats, the lifetime, closing); evstream_key.c the API key
 * behind each stream (checked when it opens, when the invalidation
 * subscription is back, every minute; the stream ended when the key is
 * revoked). The protocol is in include/pixrelay/api/evstream.h.
 */
#ifndef PIXRELAY_EVSTREAM_INT_H
#define PIXRELAY_EVSTREAM_INT_H

#include "pixrelay/api/evstream.h"
#include "pixrelay/pix/keyspace.h"

#include <stdint.h>

#define EVSTREAM_ACCT_BUCKETS 256

struct acct; /* the streams of one account, its signing secrets (evstream.c) */
struct msg;  /* an event waiting to be sent (evstream.c) */
struct seen; /* ids sent while catching up (evstream.c) */

enum evstream_state { S_OPENING, S_REPLAY, S_LIVE, S_DEAD };

struct stream {
	struct evstream *h;
	struct stream *prev, *next;	    /* in its account */
	struct stream *all_prev, *all_next; /* every stream of the process */
	struct acct *a;
	struct http_req *req;
	enum evstream_state state;
	int begun;    /* the 200 and its head are out (-1: answered otherwise) */
	int flag_set; /* the shard's live key was set after the subscriber was ready */
	int ops;      /* Redis calls under way that hold this stream */
	int in_timer; /* its timer's callback runs (it frees the stream if ended) */
	int fetching;
	int shard;
	long long from_ms;	    /* catching up: the next page starts at this time ... */
	long offset;		    /* ... after this many events of that time */
	struct msg *buf, *buf_tail; /* live events waiting while it catches up */
	unsigned nbuf;
	struct msg *page, *page_tail; /* read while catching up, not yet sent */
	int page_more;		      /* the index has more after them */
	int fetched;		      /* a page was asked for */
	struct seen *seen;	      /* while catching up, and a moment after */
	char skip[KS_EVENT_ID_MAX];
	struct event *timer;
	uint64_t deadline_ms; /* opening must be done by then */
	uint64_t last_write_ms;
	uint64_t live_since_ms;
	uint64_t end_ms; /* its lifetime (stream-max-lifetime) is over then */
	/* the API key that opened it (evstream_key.c) */
	char key_sha[65];	 /* the SHA-256 of its text, hex */
	int key_ok;		 /* found working after the stream was registered */
	int key_checking;	 /* a check is under way ... */
	int key_again;		 /* ... and another must follow it */
	uint64_t key_checked_ms; /* when it was last found working */
};

struct evstream {
	struct event_base *base;
	struct rds *r;
	struct rds_addr addr;
	const struct config *cfg;
	struct rds *sub;
	int sub_ready;
	char channel[256];
	struct acct *buckets[EVSTREAM_ACCT_BUCKETS];
	struct stream *all;
	unsigned nstreams;
	unsigned shard_open[KS_SHARDS_MAX];
	struct event *renew;
	int stopped;
};

/* evstream.c: move a stream on as far as it can go now (opening: once its
 * secrets, its key check, the subscriber and the shard's live key are
 * there). */
void evstream_advance(struct stream *s);

/* evstream.c: end a stream (answering 503 `why` if it had not begun) and
 * free it once no Redis call holds it. */
void evstream_close(struct stream *s, const char *why);

/* evstream.c: end a stream that has begun with a last comment line
 * ": end: <why>" so that its client knows why, then as evstream_close. */
void evstream_end(struct stream *s, const char *why);

/* evstream_key.c: check in Redis that the stream's key still works, now
 * (again once the check under way answers, if one is); a key that does not
 * ends the stream (401 if it had not begun). Holds the stream (ops). */
void evstream_key_check(struct stream *s);

/* evstream_key.c: from the stream's timer: check the key again when the
 * last check is a minute old. */
void evstream_key_tick(struct stream *s, uint64_t now_ms);

#endif
