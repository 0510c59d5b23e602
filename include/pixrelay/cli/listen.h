/* listen: local webhook testing without a tunnel (pixrelay listen, trigger).
 *
 * `pixrelay listen --forward-to URL` reads an account's live event stream
 * (GET /v1/events/stream of a local or remote pixrelay, with an API key) and
 * POSTs each event to a local URL with the body and headers its postback
 * carries, signed by the server when it sent it on the stream (or again here
 * with --signing-secret); one line per event says what the local server
 * answered and how fast. When the stream breaks it reconnects with backoff
 * and resumes from the last event id (events seen twice are skipped).
 * Blocking libcurl on the command line's own thread: no event loop.
 *
 * The SSE parser is pure (no I/O) and bounded: a field or an event larger
 * than LISTEN_SSE_MAX ends the stream.
 */
#ifndef PIXRELAY_LISTEN_H
#define PIXRELAY_LISTEN_H

#include <stddef.h>

#define LISTEN_SSE_MAX (4 * 1024 * 1024)

/* ---- Server-Sent Events, parsed ---- */

/* Expected outcomes (positive) besides 0. */
enum sse_result {
	SSE_STOPPED = 1, /* sse_feed: an event callback asked to stop */
};

/* One dispatched event: its id ("" when none was given in it; the last id
 * stays in sse->last_id), its event name ("" = message) and data (lines
 * joined with '\n'); borrowed for the call. Return nonzero to stop. */
typedef int (*sse_event_fn)(void *ud, const char *id, const char *event, const char *data,
			    size_t len);
/* A comment line (": text"), without the colon and one space. */
typedef void (*sse_comment_fn)(void *ud, const char *text);

struct sse {
	sse_event_fn on_event;
	sse_comment_fn on_comment; /* may be NULL */
	void *ud;
	char *line;
	size_t line_len, line_cap;
	char *data;
	size_t data_len, data_cap;
	int has_data;
	int skip_lf; /* the last line ended with CR: a following LF belongs to it */
	char event[64];
	char id[256];	   /* of the event being read */
	char last_id[256]; /* the last id the stream gave */
	long retry_ms;	   /* from "retry:", -1 when none */
};

void sse_init(struct sse *p, sse_event_fn on_event, sse_comment_fn on_comment, void *ud);
void sse_deinit(struct sse *p);
/* Feed bytes as they come. Returns 0, SSE_STOPPED when a callback asked to
 * stop, or -1 when a line or an event passed LISTEN_SSE_MAX. */
int sse_feed(struct sse *p, const char *buf, size_t len);

/* ---- the commands ---- */

struct listen_opts {
	const char *base_url;	    /* ".../v1" */
	const char *api_key;	    /* Bearer */
	const char *account;	    /* X-Account-ID (master keys), or NULL */
	const char *forward_to;	    /* the local URL */
	const char *signing_secret; /* re-sign with this (whsec_...), or NULL */
	const char *signature;	    /* value of the compatibility `signature` header, or NULL */
	const char *since;	    /* start from this time or event id, or NULL: new events */
	long timeout_ms;	    /* for each forwarded request */
	long max_events;	    /* stop after forwarding this many (0: never) */
	int json;		    /* one JSON object per line instead of text */
};

/* Run `pixrelay listen` until SIGINT/SIGTERM (0), max_events (0), or a
 * refusal that retrying cannot fix (1: a bad key, a bad request; the
 * server's message is printed). */
int listen_run(const struct listen_opts *o);

/* One blocking request to a pixrelay API: `method` base_url + path with the
 * key (and X-Account-ID when account is given), `body` JSON or NULL.
 * Returns the HTTP status (0 when no answer came, with the reason in err)
 * and the answer's body in *out (malloc'd, NUL-terminated; NULL if none),
 * and its X-Event-Id header in event_id (EVENT_ID_MAX bytes, "" if none;
 * may be NULL). */
long listen_api(const char *base_url, const char *api_key, const char *account, const char *method,
		const char *path, const char *body, long timeout_ms, char **out, char *event_id,
		char *err, size_t errlen);

/* One blocking POST of `body` (JSON) to `url` with the header `name`:
 * `value` and no key: a provider's notification, signed, as `pixrelay
 * trigger` sends it. Returns as listen_api. */
long listen_post_signed(const char *url, const char *body, const char *name, const char *value,
			long timeout_ms, char **out, char *err, size_t errlen);

#endif
