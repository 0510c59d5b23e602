/* banks_int.h: what the files of the bank connections' store share
 * (banks.c: managing them, banks_conn.c: the record, banks_render.c: a
 * connection as JSON): a connection's stored fields, their rendering, and
 * the name a sealed field is bound to. */
#ifndef PIXRELAY_STORE_BANKS_INT_H
#define PIXRELAY_STORE_BANKS_INT_H

#include "pixrelay/core/json.h"
#include "pixrelay/store/banks.h"

/* A connection's stored fields, borrowed. */
struct banks_fields {
	const char *id, *account, *env, *provider, *pix_key, *auth, *client_ca, *created_ms,
	    *last_call_ms;
	const char *client_subject, *client_pins, *is_default;
	const char *api_url, *token_url, *client_id, *cert, *bank_ca;
	const char *api_scope, *api_header_names, *api_query_names;
	/* its reconciliation (bank_recon_done) */
	const char *rec_at, *rec_ok_ms, *rec_fail, *rec_error, *rec_error_ms, *rec_listed, *rec_new,
	    *rec_new_total;
	/* its bank's API as the processes saw it (banks_note_api) */
	const char *api_token_ms, *api_call_ms, *api_error, *api_error_ms;
	/* a provider's connection: the public keys of its signatures, and the
	 * public half of pixrelay's own sandbox pair */
	const char *prov_keys, *prov_own;
	/* its receiving account (banks_recebedor) */
	const char *rcv_agencia, *rcv_conta, *rcv_tipo;
};

/* The auth of a record's `auth` field: "url-token", "mtls" ("" too, as an
 * early record has it), or a provider's scheme (BANKS_PROVIDER). */
enum banks_auth banks_auth_of(const char *name);

/* s, or "" for NULL. */
static inline const char *banks_or_empty(const char *s)
{
	return s ? s : "";
}

/* The fields of HGETALL reply h (borrowed from it; "" when absent, but
 * api_scope NULL). */
void banks_fields_of(const redisReply *h, struct banks_fields *f);

/* Every field of f not set (NULL) made "": a record made now, before any
 * field of its life (reconciliation, health) was written. f holds only
 * `const char *` fields. */
void banks_fields_blank(struct banks_fields *f);

/* A connection as JSON into g, never with a secret: `token` (NULL: none),
 * only when the connection is made, goes into its webhookUrl that once. */
void banks_render(yajl_gen g, const struct config *cfg, const struct banks_fields *f,
		  const char *token);

/* The name a connection's sealed field is bound to, "<conn>:<field>", so
 * that a sealed value cannot be moved to another field or connection. */
void banks_sealed_name(char *out, size_t size, const char *conn, const char *field);

#endif
