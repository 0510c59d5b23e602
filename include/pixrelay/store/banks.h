/* banks: managing bank connections (docs/banks.md): connect, show, list,
 * update (trust and default), disconnect, the log of what each heard, the
 * bank's API credentials. The record itself is banks_conn.h's.
 *
 * Every change of a connection that moves where an account's charges go
 * (connect, disconnect, credentials, the default) derives the account's
 * charging connection again in the same script (banks_charging.h).
 *
 * Its calls answer through a store_fn: 0 with json, a banks_result with json
 * (or NULL), or -1 with err.
 */
#ifndef PIXRELAY_BANKS_H
#define PIXRELAY_BANKS_H

#include "pixrelay/store/banks_conn.h"

#define BANKS_PER_ACCOUNT 20 /* connections of one account */
#define BANKS_LOG_MAX 1000   /* notifications a connection keeps in its log */

/* Check a Pix key as a connection takes it: 1 to 77 characters, printable
 * ASCII without spaces (e-mail, +55 phone, CPF, CNPJ or random key). 0, or
 * -1 with the rule in err. */
int banks_check_pix_key(const char *key, char *err, size_t errlen);

/* The receiving account at the bank, as Pix Automático's recurring charges
 * name it (PUT /cobr's `recebedor`, DadosBancariosRecebedor): the agency
 * (agencia, optional), the account (conta) and its type (tipoConta).
 * Borrowed. */
struct banks_recebedor {
	const char *agencia;	/* 1..4 digits; NULL or "": none */
	const char *conta;	/* 1..20 digits; "" (in a change): remove the recebedor */
	const char *tipo_conta; /* CORRENTE, POUPANCA or PAGAMENTO */
};

/* Check a recebedor as a connection takes it (above): 0, or -1 with
 * "field: rule" in err, the field named as the standard names it. A
 * recebedor whose conta is "" is a removal and passes. */
int banks_check_recebedor(const struct banks_recebedor *r, char *err, size_t errlen);

/* What an mTLS connection takes of its bank's client certificate: a chain
 * to its trust list and, when given, the pins on the leaf (certcheck).
 * Borrowed. */
struct banks_trust {
	const char *client_ca; /* PEM of the trust list, checked by certcheck_new */
	const char *subject;   /* as certcheck_subject_normal writes it; NULL or "": none */
	const char *pins;      /* as certcheck_pins_add makes them; NULL or "": none */
};

/* What a provider's connection (docs/providers.md) takes when it is made,
 * checked by the caller (bank_creds_check_provider; the keys read as PEM
 * public keys). Secrets in the clear, sealed with `key` as they are
 * written. Borrowed. */
struct seal_key;
struct banks_provider_conn {
	enum provider provider;	    /* not PROVIDER_API_PIX */
	const char *api_url;	    /* its API's base URL, no trailing slash */
	const char *api_token;	    /* its API token (Woovi's AppID); NULL: none (sandbox
				     * only: nothing is called, charges are made here) */
	const char *server_ca;	    /* PEM of the CA of its server; NULL: the system's */
	const char *public_keys;    /* PEM public keys its notifications are signed with */
	const char *private_key;    /* sandbox: pixrelay's own pair (trigger signs with it) */
	const char *own_public_key; /* and its public half; NULL both in production */
	const char *webhook_secret; /* the token its notifications carry (Asaas's authToken):
				     * kept as its SHA-256 (token_sha), and sealed */
	const struct seal_key *key; /* the credentials key (needed with a secret) */
};

/* Connect a bank to `account` of `env` for Pix key `pix_key` ("" allowed
 * for a provider's): with `trust` for BANKS_MTLS, or with a new random URL
 * token for BANKS_URL_TOKEN (trust NULL), or (prov not NULL: a provider's
 * connection, auth and trust ignored) with the provider's own scheme; `rcv`
 * its receiving account (checked; NULL: none). make_default: it becomes the
 * account's default charging connection in env (no other is then). The
 * account's charging connection is derived again (below). json is the
 * connection with its "webhookUrl" to register at the bank, the token in it
 * (shown this once). cb runs once, later. */
void banks_connect(struct rds *r, const struct config *cfg, enum env env, const char *account,
		   const char *pix_key, enum banks_auth auth, const struct banks_trust *trust,
		   const struct banks_recebedor *rcv, int make_default,
		   const struct banks_provider_conn *prov, store_fn cb, void *ud);

/* A change to a connection: each field NULL (or -1) is left as it is. More
 * may be added; each is one field of the record. Borrowed. */
struct banks_change {
	const char *client_ca; /* a new trust list (mTLS), checked by certcheck_new */
	const char *subject;   /* the pinned subject, normal form; "": none from now on */
	const char *pins;      /* the key pins, a list that replaces the old; "": none */
	int is_default;	       /* 1: the account's default charging connection in its
				* environment (no other is then); 0: not; -1: as is */
	const struct banks_recebedor *recebedor; /* checked; conta "": removed */
};

/* Change connection `id` of `account` ("" = any of env) as `change` says,
 * in one script: the next bank call is judged by it; a change of its
 * default derives the account's charging connection again. json is the
 * connection as banks_show shows it. BANKS_NOT_FOUND; BANKS_NOT_MTLS when
 * a trust field is for a URL-token connection (nothing written). */
void banks_update(struct rds *r, const struct config *cfg, enum env env, const char *account,
		  const char *id, const struct banks_change *change, store_fn cb, void *ud);

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

/* Give connection `id` of `env` (any account) the bank's API credentials
 * `creds` (checked with bank_creds_check), its secrets sealed with `key`;
 * they replace earlier ones. json is the connection as banks_show shows it.
 * BANKS_NOT_FOUND when there is no such connection. */
struct seal_key;
struct bank_creds;
void banks_set_credentials(struct rds *r, const struct config *cfg, const struct seal_key *key,
			   enum env env, const char *id, const struct bank_creds *creds,
			   store_fn cb, void *ud);

#endif
