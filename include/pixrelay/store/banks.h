/* banks: bank connections, and the Pix their banks report (docs/banks.md).
 *
 * A connection ties one Pix key (chave) of an account at its bank to a
 * webhook URL of pixrelay, {base_url}/webhooks/bank/{id}, registered at
 * the bank (by its API, `pixrelay bank register-webhook`, or by hand in
 * its portal); the bank POSTs {"pix": [...]} to that URL
 * with /pix appended. It is authenticated either by the bank's client
 * certificate (mutual TLS terminated by the reverse proxy, checked here
 * against the connection's own trust list) or by a random token in the
 * URL, for banks that offer no mTLS (kept only as its SHA-256).
 *
 * A connection lives in its account's shard, like the charges its Pix pay:
 *   <prefix>{s<k>}:bank:<id>         hash: the connection
 *   <prefix>{s<k>}:banks:<account>   zset: the account's connections by creation
 *   <prefix>{<env>}:banks            zset: every connection of the environment
 * and its id ("bnk_" + ULID) names that shard, so a webhook call leads
 * straight to it. What it hears is written by the script bank_pix (see its
 * header for its keys), one call per shard per turn of the loop, before
 * the bank gets its answer.
 */
#ifndef PIXRELAY_BANKS_H
#define PIXRELAY_BANKS_H

#include "pixrelay/store/store.h"
#include "pixrelay/core/config.h"
#include "pixrelay/pix/bankday.h"
#include "pixrelay/pix/bankpix.h"
#include "pixrelay/pix/env.h"
#include "pixrelay/redis/redis.h"

#include <event2/event.h>

#define BANKS_ID_MAX 32	     /* "bnk_" + ULID + NUL */
#define BANKS_PER_ACCOUNT 20 /* connections of one account */
#define BANKS_TOKEN_LEN 43   /* random base62 characters of a URL token (about 256 bits) */
#define BANKS_LOG_MAX 1000   /* notifications a connection keeps in its log */

enum banks_auth { BANKS_MTLS = 0, BANKS_URL_TOKEN = 1 };

/* Expected outcomes besides 0. */
enum banks_result {
	BANKS_NOT_FOUND = 1,  /* no such connection (of this account) */
	BANKS_NO_ACCOUNT = 2, /* the account does not exist in this environment */
	BANKS_LIMIT = 3,      /* BANKS_PER_ACCOUNT connections already */
	BANKS_KEY_TAKEN = 4,  /* the account connected this Pix key already (json = its id) */
	BANKS_BAD_DATE = 5,   /* a report's date is not YYYY-MM-DD */
	BANKS_CHANGED = 6,    /* the record changed meanwhile: nothing written */
	BANKS_NOT_MTLS = 7,   /* a change for mutual TLS to a URL-token connection */
};

/* A connection as stored: what the receiver needs. Strings owned. */
struct banks_conn {
	char id[BANKS_ID_MAX];
	char account[32];
	enum env env;
	enum banks_auth auth;
	char *pix_key;
	char *client_ca;      /* PEM of the trust list (mTLS); NULL for a URL token */
	char *client_subject; /* the leaf's pinned subject (certcheck_subject_normal); NULL: any */
	char *client_pins;    /* its key pins (certcheck_pins_add); NULL: any key */
	int is_default;	      /* the account's default charging connection in its environment */
	char token_sha[65];   /* SHA-256 of the URL token, hex; "" for mTLS */
	long long created_ms;
	long long api_at_ms;	/* when it was first given API credentials (0: never) */
	long long rec_at_ms;	/* the bank's Pix are reconciled up to here (0: not yet) */
	long long last_call_ms; /* the bank's last accepted webhook call (0: none recorded) */
	/* the bank's API credentials as stored (NULL: none): the client secret
	 * and the private key sealed (core/seal.h), banks_open_credentials
	 * opens them */
	struct banks_stored_creds {
		char *api_url, *token_url, *client_id, *client_secret, *cert, *key, *bank_ca;
		char *scope;	       /* NULL: none asked */
		char *headers, *query; /* sealed; NULL: none */
	} api;
};
void banks_conn_deinit(struct banks_conn *c);

/* The connection's API credentials in the clear (out, wiped by
 * bank_creds_wipe), opened with the credentials key. 0; 1 when it has none;
 * -1 with why in err when they do not open (another key, altered). */
struct seal_key;
struct bank_creds;
int banks_open_credentials(const struct banks_conn *c, const struct seal_key *key,
			   struct bank_creds *out, char *err, size_t errlen);

/* The webhook URL of connection `id` to register at its bank (out, `size`
 * bytes): with `token` (NULL: none) in it as URL-token banks expect. */
void banks_webhook_url(char *out, size_t size, const struct config *cfg, const char *id,
		       const char *token);

/* ---- the bank door (banks_door.c) ---- */

/* How every refusal for want of the bank door ends: mutual TLS needs it. */
#define BANKS_DOOR_HINT                                                                            \
	"no bank's client certificate can reach pixrelay without it: set bank-listen and send "    \
	"the proxy's bank webhooks there (docs/deployment.md, \"The bank door\")"

/* On a blocking client (rds_open), at start: the first connection of either
 * environment that authenticates its bank by mutual TLS, and so needs
 * bank-listen. Reads every connection's auth, one call each. Returns 0 with
 * its id and environment, BANKS_NOT_FOUND when there is none, -1 with why
 * in err. */
int banks_find_mtls(struct rds *c, const char *prefix, char id[BANKS_ID_MAX], enum env *env,
		    char *err, size_t errlen);

/* ---- the webhook registered at the bank (banks_webhook.c) ---- */

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

/* Give connection `id` of `env` (any account) the bank's API credentials
 * `creds` (checked with bank_creds_check), its secrets sealed with `key`;
 * they replace earlier ones. json is the connection as banks_show shows it.
 * BANKS_NOT_FOUND when there is no such connection. */
void banks_set_credentials(struct rds *r, const struct config *cfg, const struct seal_key *key,
			   enum env env, const char *id, const struct bank_creds *creds,
			   store_fn cb, void *ud);

/* Its calls answer through a store_fn: 0 with json, a banks_result with json
 * (or NULL), or -1 with err. */
/* result 0 with the connection (borrowed for the call), BANKS_NOT_FOUND, or
 * -1 with err. */
typedef void (*banks_conn_fn)(void *ud, int result, const struct banks_conn *c, const char *err);

/* Check a Pix key as a connection takes it: 1 to 77 characters, printable
 * ASCII without spaces (e-mail, +55 phone, CPF, CNPJ or random key). 0, or
 * -1 with the rule in err. */
int banks_check_pix_key(const char *key, char *err, size_t errlen);

/* What an mTLS connection takes of its bank's client certificate: a chain
 * to its trust list and, when given, the pins on the leaf (certcheck).
 * Borrowed. */
struct banks_trust {
	const char *client_ca; /* PEM of the trust list, checked by certcheck_new */
	const char *subject;   /* as certcheck_subject_normal writes it; NULL or "": none */
	const char *pins;      /* as certcheck_pins_add makes them; NULL or "": none */
};

/* Connect a bank to `account` of `env` for Pix key `pix_key`: with `trust`
 * for BANKS_MTLS, or with a new random URL token for BANKS_URL_TOKEN (trust
 * NULL). make_default: it becomes the account's default charging
 * connection in env (no other is then). The account's charging connection
 * is derived again (below). json is the connection with its
 * "webhookUrl" to register at the bank, the token in it (shown this once).
 * cb runs once, later. */
void banks_connect(struct rds *r, const struct config *cfg, enum env env, const char *account,
		   const char *pix_key, enum banks_auth auth, const struct banks_trust *trust,
		   int make_default, store_fn cb, void *ud);

/* A change to a connection: each field NULL (or -1) is left as it is. More
 * may be added; each is one field of the record. Borrowed. */
struct banks_change {
	const char *client_ca; /* a new trust list (mTLS), checked by certcheck_new */
	const char *subject;   /* the pinned subject, normal form; "": none from now on */
	const char *pins;      /* the key pins, a list that replaces the old; "": none */
	int is_default;	       /* 1: the account's default charging connection in its
				* environment (no other is then); 0: not; -1: as is */
};

/* Change connection `id` of `account` ("" = any of env) as `change` says,
 * in one script: the next bank call is judged by it; a change of its
 * default derives the account's charging connection again. json is the
 * connection as banks_show shows it. BANKS_NOT_FOUND; BANKS_NOT_MTLS when
 * a trust field is for a URL-token connection (nothing written). */
void banks_update(struct rds *r, const struct config *cfg, enum env env, const char *account,
		  const char *id, const struct banks_change *change, store_fn cb, void *ud);

/* ---- the connection an account's charges go to ---- */

/* An account's charging connection in an environment (docs/banks.md, "The
 * key on the QR"): its only connection there, or the one of several marked
 * default. Every change of its connections (connect, disconnect,
 * credentials, the default) writes it into the account's record, which
 * accounts_lookup reads: charge_via, charge_key, bank_api. */
#define BANKS_VIA_NONE "none" /* charge_via: no connection in env */
#define BANKS_VIA_MANY "many" /* charge_via: several, none marked default */

struct banks_charging {
	char via[BANKS_ID_MAX];	     /* the connection's id, BANKS_VIA_NONE or BANKS_VIA_MANY */
	char key[80];		     /* its Pix key ("" for none and many) */
	char bank_api[BANKS_ID_MAX]; /* its id when it has API credentials, else "" */
};
/* result 0 with ch (borrowed for the call), or -1 with err. */
typedef void (*banks_charging_fn)(void *ud, int result, const struct banks_charging *ch,
				  const char *err);
/* Derive and write the charging connection of `account` of `env`, for a
 * record written by a version before it (no charge_via): when it has
 * several connections, none marked default, and its bank_api names one of
 * them, that one becomes the default (its charges keep going there). cb
 * runs once, later. */
void banks_charging(struct rds *r, const struct config *cfg, enum env env, const char *account,
		    banks_charging_fn cb, void *ud);

/* The connection `id`, whoever owns it (for the receiver). */
void banks_get(struct rds *r, const struct config *cfg, const char *id, banks_conn_fn cb, void *ud);

/* One connection of `account` ("" = any account of env: master keys and
 * the operator) as JSON, without any secret. */
void banks_show(struct rds *r, const struct config *cfg, enum env env, const char *account,
		const char *id, store_fn cb, void *ud);

/* The connections of `account` ("" = every account of env), newest first:
 * {"connections": [...]}. */
void banks_list(struct rds *r, const struct config *cfg, enum env env, const char *account,
		store_fn cb, void *ud);

/* Remove a connection: its webhook URL answers 401 from then on. What it
 * heard stays for the retention (events, log, deduplication). */
void banks_disconnect(struct rds *r, const struct config *cfg, enum env env, const char *account,
		      const char *id, store_fn cb, void *ud);

/* What the connection heard, newest first, at most `limit` (1..1000):
 * {"notifications": [...]}, each with its outcome and reason. */
void banks_log(struct rds *r, const struct config *cfg, enum env env, const char *account,
	       const char *id, int limit, store_fn cb, void *ud);

/* ---- receiving ---- */

/* Where the Pix of authenticated bank calls wait for their durable write:
 * those of one turn of the loop share one script call per shard (at most
 * 128 Pix a call). Borrowed: base, r, cfg. */
struct banks_queue;
struct banks_queue *banks_queue_new(struct event_base *base, struct rds *r,
				    const struct config *cfg);
/* Free; calls still waiting get cb -1 "redis client closed". */
void banks_queue_free(struct banks_queue *q);

/* Take the Pix of one bank call on connection `c` (copied) and the items
 * it refused, from `source` ("webhook" or "reconciliation"): every Pix once
 * per endToEndId, matched to its charge or reported, every refusal logged.
 * cb runs once, later: 0 with json {"received", "accepted", "duplicates",
 * "refused": [...], "pix": [{"endToEndId", "outcome", "reason", "charge",
 * "event"}]}, or -1 with err (nothing acknowledged: the bank should send it
 * again). The batch is taken (emptied). A "webhook" call answered 200
 * (not every item refused) is the connection's last call (last_call_ms):
 * written at most once a minute per connection and process, before cb. */
void banks_receive(struct banks_queue *q, const struct banks_conn *c, const char *source,
		   struct bankpix_batch *b, store_fn cb, void *ud);

/* ---- reconciliation (banks_recon.c; relay/bankrecon.c runs it) ---- */

#define BANKS_RECON_CLAIM_MAX 16 /* connections leased by one claim */

/* ids (borrowed for the call): n of them, and a number that goes with
 * them (see each call); or err with n = 0. */
typedef void (*banks_ids_fn)(void *ud, const char *err, long long n0, const char *const *ids,
			     size_t n);

/* Lease up to `most` connections of env whose reconciliation is due, for
 * lease_ms (no other process takes them meanwhile). n0: when the oldest
 * last success of any connection of env was (ms; 0 when none). */
void banks_recon_claim(struct rds *r, const struct config *cfg, enum env env, unsigned most,
		       long lease_ms, banks_ids_fn cb, void *ud);
/* The run of `id` is over (ok: it succeeded) or its lease renewed: its
 * next one is due at when_ms. result 1, or 0 when it is no longer
 * scheduled (dropped meanwhile). cb may be NULL. */
void banks_recon_next(struct rds *r, const struct config *cfg, enum env env, const char *id,
		      long long when_ms, int ok, store_fn cb, void *ud);
/* Schedule `id` now (it was given API credentials). cb may be NULL. */
void banks_recon_schedule(struct rds *r, const struct config *cfg, enum env env, const char *id,
			  store_fn cb, void *ud);
/* No more reconciliations of `id`. cb may be NULL. */
void banks_recon_drop(struct rds *r, const struct config *cfg, enum env env, const char *id,
		      store_fn cb, void *ud);

/* What one successful run found. */
struct banks_recon_stats {
	long long upto_ms; /* the bank's Pix are taken up to here */
	long pages;	   /* pages of GET /pix read */
	long listed;	   /* Pix the bank listed (of this connection's key), refused ones too */
	long fresh;	   /* ... that pixrelay had not heard of (the webhook missed them) */
	long refused;	   /* ... that failed the standard's schema (each an event, once) */
	long refunds;	   /* pending refunds asked about */
};
/* Record a run of connection `id` in its record: ok, or failed with
 * `error` (ok NULL). result: consecutive failures now (0 after a success),
 * or -1 when the connection is gone. */
void banks_recon_done(struct rds *r, const struct config *cfg, const char *id,
		      const struct banks_recon_stats *ok, const char *error, store_fn cb, void *ud);

/* A span [from_ms, to_ms] of the bank's list of Pix (by horario) that a
 * run of connection `id` read whole, every page written: merged with those
 * read before (script bank_recon_read), kept for the event retention, at
 * most BANKDAY_READS_MAX (pix/bankday.h). result: the spans kept, or -1
 * when the connection is gone (nothing written). */
void banks_recon_read(struct rds *r, const struct config *cfg, const char *id, long long from_ms,
		      long long to_ms, store_fn cb, void *ud);

/* Refunds pixrelay asked a connection's bank for: remembered until the
 * bank reports them settled (DEVOLVIDO or NAO_REALIZADO), so that the
 * reconciliation asks about them. cb may be NULL. */
void banks_refund_asked(struct rds *r, const struct config *cfg, const char *conn, const char *e2e,
			const char *refund_id, store_fn cb, void *ud);
void banks_refund_settled(struct rds *r, const struct config *cfg, const char *conn,
			  const char *e2e, const char *refund_id, store_fn cb, void *ud);
/* What a process saw of connection `conn`'s bank API (relay/bankapi.c's
 * health hook): when it last got a token, last called, last failed and
 * why (no secret in it). Kept in the connection's record, each instant
 * only moving forward, for `bank show` and GET .../connections/{id}
 * ("api.health"). Not waited for. */
void banks_note_api(struct rds *r, const struct config *cfg, const char *conn, long long token_ms,
		    long long call_ms, const char *error, long long error_ms);

/* ---- the day's report (banks_recon.c) ---- */

#define BANKS_REPORT_E2E_MAX 1000		   /* recovered endToEndIds a report lists */
#define BANKS_BRASILIA_OFFSET_MS BANKDAY_OFFSET_MS /* UTC-3 (pix/bankday.h) */

/* `date` (YYYY-MM-DD; NULL or "": today in Brasilia) into day, and the
 * first instant after it, Brasilia time (ms). 0, or -1 for a bad date. */
int banks_report_day(const char *date, char day[11], long long *end_ms);

/* What connection `id` of `account` ("" = any of env) heard on `date`
 * (Brasilia time; NULL: today): {"connection", "date", "timeZone",
 * "reconciledUntil", "complete", "whyNotComplete": [...], "read": [{"from",
 * "to"}] (the spans read, clipped to the day and its overlap, -03:00),
 * "pix": {"received", "byWebhook", "recovered", "duplicates", "refused"},
 * "cents": {...}, "outcomes": {...}, "refunds": {...},
 * "recoveredEndToEndIds": [...]}; complete as pix/bankday.h judges it, now.
 * BANKS_NOT_FOUND, BANKS_BAD_DATE, or -1 with err. */
void banks_report(struct rds *r, const struct config *cfg, enum env env, const char *account,
		  const char *id, const char *date, store_fn cb, void *ud);

/* The oldest `most` pending refunds of `conn`: ids "<e2e> <refund id>",
 * n0 when the oldest was asked (ms). */
void banks_refunds_pending(struct rds *r, const struct config *cfg, const char *conn, unsigned most,
			   banks_ids_fn cb, void *ud);

#endif
