/* bankapi: calls to a merchant's bank in the Central Bank's API Pix
 * standard (docs/bank-api.md), from the event loop.
 *
 * Every call goes over mutual TLS with the merchant's client certificate
 * and key (held in memory only, handed to curl as blobs), to the bank's
 * API URL, with a Bearer token of the OAuth2 client-credentials flow and
 * the connection's extra headers and query parameters (a bank's
 * application key): the token is fetched from the bank's token URL (HTTP
 * Basic client id and secret, the scopes asked for, the same mTLS; no
 * extras) when a connection has none, kept in the process
 * until a little before it expires, and fetched once more when the bank
 * answers 401 (a token the bank dropped early); calls that wait for a token
 * share one fetch. Bodies are JSON; answers are capped (BANKAPI_BODY_MAX).
 * The curl multi interface runs on the loop (relay/curlev.c), so a bank
 * that is slow or down delays only its own calls.
 *
 * A payment provider's connection (docs/providers.md) uses the same client
 * with its credentials' key_header instead: that header on every call, no
 * token, no client certificate.
 */
#ifndef PIXRELAY_BANKAPI_H
#define PIXRELAY_BANKAPI_H

#include "pixrelay/pix/bankcreds.h"

#include <event2/event.h>
#include <stddef.h>

#define BANKAPI_BODY_MAX (8L << 20)   /* the largest answer read: a page of 1,000 Pix is far less */
#define BANKAPI_TOKEN_MARGIN_MS 30000 /* a token is used until this long before it expires */

/* The answer to a call: status is the HTTP status (body its text, NUL-
 * terminated, borrowed for the call; NULL when none), or 0 with err when no
 * answer came (connection, TLS, timeout, token refused: err says which). */
typedef void (*bankapi_fn)(void *ud, long status, const char *body, const char *err);

struct bankapi;

/* A client on `base`; timeout_ms bounds each request. Borrowed: base. */
struct bankapi *bankapi_new(struct event_base *base, long timeout_ms);
/* Free: calls in flight get status 0, err "bank client closed". */
void bankapi_free(struct bankapi *b);

/* Call `method` `path` (appended to api_url; the caller escapes it) with
 * `body` (JSON, or NULL) on connection `c` (copied). cb runs exactly once,
 * later. */
void bankapi_call(struct bankapi *b, const struct bank_creds *c, const char *method,
		  const char *path, const char *body, bankapi_fn cb, void *ud);
/* bankapi_call with one more header on this call only, "Name: value" (NULL:
 * none): a provider's idempotency key (Mercado Pago's X-Idempotency-Key). */
void bankapi_call_with(struct bankapi *b, const struct bank_creds *c, const char *method,
		       const char *path, const char *body, const char *header, bankapi_fn cb,
		       void *ud);

/* A bank's error answer (`status`, `body` as bankapi_fn got them) in one
 * line for a person, into out (always NUL-terminated): of a Problema (the
 * standard's RFC 7807 body) "HTTP 400 <detail, else title> (<propriedade>:
 * <razao>; ...)", at most 3 violations and none that repeats the detail;
 * of anything else, "HTTP 400" and a printable excerpt of the body. The
 * bank's text is bounded, cut at a UTF-8 character, and every control
 * character (C0, DEL, C1) becomes a space: safe to print on a terminal. */
void bankapi_problem(char *out, size_t size, long status, const char *body);

/* Try credentials: fetch a token with `c` now, the one kept for its
 * connection (c->conn) forgotten first. cb runs exactly once, later: status
 * 200 (body NULL) when the bank issued one, or 0 with err ("bank token:
 * HTTP 401 invalid_client: ...", "bank token: <curl's error>"). */
void bankapi_check(struct bankapi *b, const struct bank_creds *c, bankapi_fn cb, void *ud);

/* The token endpoint's answer (`len` bytes of `body`, hostile): {"access_token",
 * "token_type": "Bearer" (any case; absent is taken as Bearer), "expires_in"
 * (1 to 30 days in seconds; absent: 300)}. 0 with the token (malloc'd, the
 * caller wipes and frees it) and its lifetime in ms; or -1 with why in err
 * (never the token), out-parameters untouched. */
int bankapi_parse_token(const char *body, size_t len, char **token, long long *ttl_ms, char *err,
			size_t errlen);

/* Forget the token of connection `conn` (its credentials changed). */
void bankapi_forget(struct bankapi *b, const char *conn);

/* What the client saw of connection `conn`, for `pixrelay bank show`: when
 * it last got a token and last called the bank (ms, 0 never), and the last
 * error ("" none). Borrowed until the next call on b. */
struct bankapi_state {
	long long token_ms, call_ms, error_ms;
	const char *error;
};
void bankapi_state(const struct bankapi *b, const char *conn, struct bankapi_state *out);

/* Told what the client saw of a connection, so that it can be kept where
 * every process and `pixrelay bank show` see it: after a new error, and
 * otherwise at most once a minute per connection (st borrowed for the
 * call). */
typedef void (*bankapi_health_fn)(void *ud, const char *conn, const struct bankapi_state *st);
void bankapi_on_health(struct bankapi *b, bankapi_health_fn fn, void *ud);

/* The bank's refusal of `what` ("charge", "refund"...) in one line for
 * a merchant or an operator: "the bank refused the <what>: " and
 * bankapi_problem's line. */
void bankapi_refusal(char *out, size_t size, const char *what, long status, const char *body);

#endif
