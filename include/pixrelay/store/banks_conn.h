/* banks_conn: a bank connection as stored (docs/banks.md), what every part
 * of the bank wing names it by, and its one read (banks.c).
 *
 * A connection ties one Pix key (chave) of an account at its bank to a
 * webhook URL of pixrelay, {base_url}/webhooks/bank/{id} (banks_webhook.h).
 * It is authenticated either by the bank's client certificate (mutual TLS
 * terminated by the reverse proxy, checked against the connection's own
 * trust list) or by a random token in the URL, for banks that offer no
 * mTLS (kept only as its SHA-256).
 *
 * A connection lives in its account's shard, like the charges its Pix pay:
 *   <prefix>{s<k>}:bank:<id>         hash: the connection
 *   <prefix>{s<k>}:banks:<account>   zset: the account's connections by creation
 *   <prefix>{<env>}:banks            zset: every connection of the environment
 * and its id ("bnk_" + ULID) names that shard, so a webhook call leads
 * straight to it.
 *
 * Managing connections is banks.h's; what banks report and its write,
 * banks_receive.h's; the reconciliation, banks_recon.h's; the day's report,
 * banks_report.h's; the webhook as the bank holds it, banks_webhook.h's;
 * the charging connection, banks_charging.h's; the bank door,
 * banks_door.h's.
 */
#ifndef PIXRELAY_BANKS_CONN_H
#define PIXRELAY_BANKS_CONN_H

#include "pixrelay/core/config.h"
#include "pixrelay/pix/env.h"
#include "pixrelay/pix/provider.h"
#include "pixrelay/redis/redis.h"
#include "pixrelay/store/store.h"

#include <stdbool.h>
#include <stddef.h>

#define BANKS_ID_MAX 32	   /* "bnk_" + ULID + NUL */
#define BANKS_TOKEN_LEN 43 /* random base62 characters of a URL token (about 256 bits) */

#define BANKS_CONTA_MAX 20  /* a recebedor's conta, digits (DadosBancariosRecebedor) */
#define BANKS_AGENCIA_MAX 4 /* its agencia, digits */

/* How a connection's caller is authenticated: the bank's client
 * certificate, a token in the URL, or (a provider's connection) the
 * provider's own scheme (provider_auth: Woovi's RSA signature). */
enum banks_auth { BANKS_MTLS = 0, BANKS_URL_TOKEN = 1, BANKS_PROVIDER = 2 };

/* What names a connection where it acts (the account its Pix credit, the
 * shard of its id): copied by value. */
struct banks_ref {
	char id[BANKS_ID_MAX];
	char account[32];
	enum env env;
};

/* Expected outcomes besides 0, of every call of the bank wing's stores. */
enum banks_result {
	BANKS_NOT_FOUND = 1,  /* no such connection (of this account) */
	BANKS_NO_ACCOUNT = 2, /* the account does not exist in this environment */
	BANKS_LIMIT = 3,      /* BANKS_PER_ACCOUNT connections already */
	BANKS_KEY_TAKEN = 4,  /* the account connected this Pix key already (json = its id) */
	BANKS_BAD_DATE = 5,   /* a report's date is not YYYY-MM-DD */
	BANKS_CHANGED = 6,    /* the record changed meanwhile: nothing written */
	BANKS_NOT_MTLS = 7,   /* a change for mutual TLS to a URL-token connection */
	BANKS_NO_API = 8,     /* the connection has no API credentials */
};

/* A connection as stored: what the receiver needs. Strings owned. */
struct banks_conn {
	char id[BANKS_ID_MAX];
	char account[32];
	enum env env;
	enum provider provider; /* api-pix: a bank in the standard */
	enum banks_auth auth;
	char *pix_key;	      /* "" for a provider's connection made without one */
	char *client_ca;      /* PEM of the trust list (mTLS); NULL for a URL token */
	char *client_subject; /* the leaf's pinned subject (certcheck_subject_normal); NULL: any */
	char *client_pins;    /* its key pins (certcheck_pins_add); NULL: any key */
	int is_default;	      /* the account's default charging connection in its environment */
	char token_sha[65];   /* SHA-256 of the URL token (or of a provider's webhook
			       * token), hex; "" for mTLS */
	long long created_ms;
	long long api_at_ms;	/* when it was first given API credentials (0: never) */
	long long rec_at_ms;	/* the bank's Pix are reconciled up to here (0: not yet) */
	long long last_call_ms; /* the bank's last accepted webhook call (0: none recorded) */
	/* the receiving account at the bank (banks.h's banks_recebedor); conta
	 * "": none given */
	struct {
		char agencia[BANKS_AGENCIA_MAX + 1];
		char conta[BANKS_CONTA_MAX + 1];
		char tipo_conta[12];
	} rcv;
	/* the bank's API credentials as stored (NULL: none): the client secret
	 * and the private key sealed (core/seal.h), banks_open_credentials
	 * opens them */
	struct banks_stored_creds {
		char *api_url, *token_url, *client_id, *client_secret, *cert, *key, *bank_ca;
		char *scope;	       /* NULL: none asked */
		char *headers, *query; /* sealed; NULL: none */
		/* a provider's connection: its API token (sealed; NULL: none,
		 * then no call is made), the provider it is for */
		char *api_token;
		enum provider provider;
	} api;
	/* a provider's connection: the PEM public keys its notifications are
	 * signed with (NULL: none), and in the sandbox the private half of
	 * pixrelay's own pair (sealed; NULL: none), which trigger signs with */
	char *prov_keys;
	char *prov_priv;
	/* a provider's connection whose notifications carry a token (Asaas):
	 * that token sealed (its SHA-256 is token_sha); NULL: none */
	char *webhook_secret;
};
void banks_conn_deinit(struct banks_conn *c);
/* Free the strings of s (the struct itself is the caller's) and zero it. */
void banks_stored_creds_deinit(struct banks_stored_creds *s);

/* Field e of a bank script's answer as an instant (ms) or a count, as the
 * scripts answer them: "" (a field the record lacks) is 0, else decimal
 * digits. 0 with *out, or -1 (out untouched). */
int banks_field_number(const redisReply *e, long long *out);

/* True when `id` is a connection id this wing could have made: "bnk_" and
 * a ULID that names a shard. */
bool banks_id_valid(const char *id);

/* The API credentials `stored` of connection `id` in the clear (out, wiped
 * by bank_creds_wipe), opened with the credentials key: only where a call
 * to the bank needs them. 0; BANKS_NO_API when it has none; -1 with why in
 * err when they do not open (no key, another key, altered). */
struct seal_key;
struct bank_creds;
int banks_open_credentials(const char *id, const struct banks_stored_creds *stored,
			   const struct seal_key *key, struct bank_creds *out, char *err,
			   size_t errlen);

/* The sealed field `field` of connection `id` (its API token, its sandbox
 * private key) in the clear, NUL-terminated, *len its length: malloc'd,
 * the caller frees it wiped (mem_free_wiped); NULL when it does not open. */
unsigned char *banks_open_sealed(const char *id, const char *field, const char *sealed,
				 const struct seal_key *key, size_t *len);

/* result 0 with the connection (borrowed for the call), BANKS_NOT_FOUND, or
 * -1 with err. */
typedef void (*banks_conn_fn)(void *ud, int result, const struct banks_conn *c, const char *err);

/* The connection `id`, whoever owns it, its whole record. */
void banks_get(struct rds *r, const struct config *cfg, const char *id, banks_conn_fn cb, void *ud);

#endif
