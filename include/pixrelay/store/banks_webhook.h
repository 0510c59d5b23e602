/* banks_webhook: a connection's webhook at its bank (docs/banks.md): the
 * URL pixrelay registers there, whether it is https, what the bank's answer
 * to GET /webhook/{chave} says of a connection (banks_webhook.c, pure), and
 * a URL-token connection's new token (banks.c). Calling the bank is the
 * CLI's (cli_bank_webhook.c).
 */
#ifndef PIXRELAY_BANKS_WEBHOOK_H
#define PIXRELAY_BANKS_WEBHOOK_H

#include "pixrelay/store/banks_conn.h"

/* The webhook URL of connection `id` to register at its bank (out, `size`
 * bytes): with `token` (NULL: none) in it as URL-token banks expect. */
void banks_webhook_url(char *out, size_t size, const struct config *cfg, const char *id,
		       const char *token);

/* Whether the webhook URLs that cfg makes are https, as the standard
 * demands of the URL a bank calls: 0, or -1 with what to change in err (it
 * names the setting: bank-webhook-base-url, or base-url when that one is
 * not set). */
int banks_webhook_https(const struct config *cfg, char *err, size_t errlen);

/* What a bank says is registered for a connection's Pix key. */
enum banks_hook {
	BANKS_HOOK_THIS = 0,	  /* this connection's URL, with its token when it has one */
	BANKS_HOOK_OLD_TOKEN = 1, /* this connection's URL with a token it no longer takes */
	BANKS_HOOK_OTHER = 2,	  /* another URL: host (and conn, one of ours) say which */
	BANKS_HOOK_BAD = 3,	  /* an answer that is no webhook: err says why */
};

#define BANKS_HOOK_HOST_MAX 253 /* characters of a host name shown */

struct banks_hook_seen {
	enum banks_hook hook;
	char host[BANKS_HOOK_HOST_MAX + 1]; /* OTHER: the URL's host, printable ("" none) */
	char conn[BANKS_ID_MAX];	    /* OTHER: the connection it names on our webhook
					     * server ("" when it names none) */
	long long since_ms;		    /* the bank's criacao (0: none that reads as a time) */
	char err[160];			    /* BAD: why, printable */
};

/* Judge the bank's answer to GET /webhook/{chave}, a WebhookCompleto
 * {"webhookUrl", "chave", "criacao"} (`body`, `len` bytes, hostile: any
 * size, type or text), for connection `c` as cfg makes its URL: the URL
 * compared whole for mTLS; for a URL token, the URL without its query, and
 * the SHA-256 of its hmac parameter with the stored one. Nothing of the
 * URL but its host reaches out (its path, query and user info may hold a
 * token); out is always written. */
void banks_webhook_judge(const struct banks_conn *c, const struct config *cfg, const char *body,
			 size_t len, struct banks_hook_seen *out);

/* A new random URL token: BANKS_TOKEN_LEN base62 characters and a NUL. */
void banks_make_token(char out[BANKS_TOKEN_LEN + 1]);

/* Make `token` the URL token of URL-token connection `id` of `env`, if its
 * stored token is still the one whose SHA-256 (hex) is `old_sha`, the one
 * the caller read before it registered the URL with `token` at the bank:
 * the old token is refused from then on. json NULL; BANKS_NOT_FOUND when
 * there is no such URL-token connection, BANKS_CHANGED when its token
 * changed meanwhile (another registration): nothing written then. */
void banks_set_token(struct rds *r, const struct config *cfg, enum env env, const char *id,
		     const char *token, const char *old_sha, store_fn cb, void *ud);

#endif
