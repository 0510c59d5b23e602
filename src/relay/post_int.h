/* post_int.h: one signed POST of an event's body, as every postback and
 * every endpoint's test ping is sent (src/relay/ only: delivery.c, ping.c).
 *
 * The headers (Content-Type, User-Agent, webhook-id, webhook-timestamp, the
 * Standard Webhooks signatures with both secrets during a rotation, the
 * compatibility `signature`, an endpoint's static headers), the options (no
 * proxy, no redirect, the timeouts, the first KiB of the answer, its
 * Retry-After), and the address checks that keep production requests on
 * public addresses (destination-allow): on the address curl is about to
 * connect to, after DNS, and on the connection about to carry the request,
 * new or reused.
 */
#ifndef PIXRELAY_POST_INT_H
#define PIXRELAY_POST_INT_H

#include "pixrelay/core/config.h"
#include "pixrelay/core/netaddr.h"
#include "pixrelay/pix/env.h"

#include <curl/curl.h>
#include <stddef.h>

#define POST_RESPONSE_KEEP 1024

/* What one request needs, borrowed until post_setup returns. */
struct post_msg {
	const char *url;
	const char *id; /* webhook-id: the event's id */
	const char *body;
	const char *signing, *signing_prev; /* "" = none */
	const char *compat;		    /* the `signature` header, "" = none */
	const char *headers;		    /* static headers, "Name: value" lines, "" = none */
};

/* A request's state, from post_setup to its end (embedded by its owner). */
struct post {
	enum env env;			  /* production: public addresses only */
	const struct netaddr_list *allow; /* destination-allow (borrowed) */
	struct curl_slist *headers;
	char *response; /* the answer's first POST_RESPONSE_KEEP bytes (+ NUL room) */
	size_t response_len;
	long long retry_after_ms; /* -1 when the answer had none */
	int refused_address;
	char refused_ip[64];
	char errbuf[CURL_ERROR_SIZE];
};

/* Set `easy` up to send m with p's checks (p->env and p->allow set first;
 * the rest of p is reset here). The caller sets CURLOPT_PRIVATE. Out of
 * memory aborts. */
void post_setup(struct post *p, CURL *easy, const struct config *cfg, const struct post_msg *m);

/* What went wrong with a finished request into out ("" when it was a
 * 2xx): the refused address, curl's error, or "HTTP <status>". */
void post_error(const struct post *p, CURLcode result, long status, char *out, size_t size);

/* The answer kept, as valid UTF-8 text (other bytes become '?'), or NULL
 * when there was none. Borrowed from p. */
const char *post_response(struct post *p);

/* Free what p holds (p itself is its owner's). */
void post_deinit(struct post *p);

#endif
