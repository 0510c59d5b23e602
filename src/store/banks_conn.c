/* banks_conn: a bank connection's record (banks_conn.h): freeing what a
 * read of it holds, opening its sealed API credentials where a call to the
 * bank needs them, the checks of what names it. Its read (banks_get) is
 * banks.c's. */
#include "banks_int.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/seal.h"
#include "pixrelay/pix/bankcreds.h"
#include "pixrelay/pix/keyspace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void banks_conn_deinit(struct banks_conn *c)
{
	free(c->pix_key);
	free(c->client_ca);
	free(c->client_subject);
	free(c->client_pins);
	free(c->prov_keys);
	free(c->prov_priv);
	free(c->webhook_secret);
	banks_stored_creds_deinit(&c->api);
	memset(c, 0, sizeof(*c));
}

void banks_stored_creds_deinit(struct banks_stored_creds *s)
{
	free(s->api_url);
	free(s->token_url);
	free(s->client_id);
	free(s->client_secret);
	free(s->cert);
	free(s->key);
	free(s->bank_ca);
	free(s->scope);
	free(s->headers);
	free(s->query);
	free(s->api_token);
	memset(s, 0, sizeof(*s));
}

void banks_sealed_name(char *out, size_t size, const char *conn, const char *field)
{
	snprintf(out, size, "%s:%s", conn, field);
}

/* A provider's API token opened into the header it goes in. */
static int open_provider(const char *id, const struct banks_stored_creds *c,
			 const struct seal_key *key, struct bank_creds *out, char *err,
			 size_t errlen)
{
	unsigned char *token;
	size_t n;

	if (!c->api_token)
		return BANKS_NO_API;
	token = banks_open_sealed(id, "api_token", c->api_token, key, &n);
	if (!token) {
		snprintf(err, errlen,
			 "the credentials key does not open this connection's API token "
			 "(another key, or altered)");
		return -1;
	}
	memset(out, 0, sizeof(*out));
	snprintf(out->conn, sizeof(out->conn), "%s", id);
	out->api_url = mem_strdup(c->api_url);
	out->bank_ca_pem = mem_strdup_or_null(c->bank_ca);
	out->key_header = provider_key_header(c->provider, (const char *)token);
	mem_free_wiped((char *)token);
	return 0;
}

unsigned char *banks_open_sealed(const char *id, const char *field, const char *sealed,
				 const struct seal_key *key, size_t *len)
{
	char name[80];

	banks_sealed_name(name, sizeof(name), id, field);
	return seal_open(key, name, sealed, len);
}

int banks_open_credentials(const char *id, const struct banks_stored_creds *c,
			   const struct seal_key *key, struct bank_creds *out, char *err,
			   size_t errlen)
{
	char name[80];
	unsigned char *secret, *pkey, *headers, *query;
	size_t n;

	if (!c->api_url)
		return BANKS_NO_API;
	if (!key) {
		snprintf(err, errlen,
			 "no credentials key: set credentials-key-file (docs/banks.md)");
		return -1;
	}
	if (c->provider != PROVIDER_API_PIX)
		return open_provider(id, c, key, out, err, errlen);
	banks_sealed_name(name, sizeof(name), id, "client_secret");
	secret = seal_open(key, name, c->client_secret, &n);
	banks_sealed_name(name, sizeof(name), id, "key");
	pkey = seal_open(key, name, c->key, &n);
	banks_sealed_name(name, sizeof(name), id, "api_headers");
	headers = c->headers ? seal_open(key, name, c->headers, &n) : NULL;
	banks_sealed_name(name, sizeof(name), id, "api_query");
	query = c->query ? seal_open(key, name, c->query, &n) : NULL;
	if (!secret || !pkey || (c->headers && !headers) || (c->query && !query)) {
		mem_free_wiped((char *)secret);
		mem_free_wiped((char *)pkey);
		mem_free_wiped((char *)headers);
		mem_free_wiped((char *)query);
		snprintf(err, errlen,
			 "the credentials key does not open this connection's "
			 "secrets (another key, or altered)");
		return -1;
	}
	memset(out, 0, sizeof(*out));
	snprintf(out->conn, sizeof(out->conn), "%s", id);
	out->api_url = mem_strdup(c->api_url);
	out->token_url = mem_strdup(c->token_url);
	out->client_id = mem_strdup(c->client_id);
	out->client_secret = (char *)secret;
	out->cert_pem = mem_strdup(c->cert);
	out->key_pem = (char *)pkey;
	out->bank_ca_pem = mem_strdup_or_null(c->bank_ca);
	out->scope = mem_strdup_or_null(c->scope);
	out->headers = (char *)headers;
	out->query = (char *)query;
	return 0;
}

int banks_field_number(const redisReply *e, long long *out)
{
	long long v = 0;

	if (e->type != REDIS_REPLY_STRING || e->len > 18)
		return -1;
	for (size_t i = 0; i < e->len; i++) {
		if (e->str[i] < '0' || e->str[i] > '9')
			return -1;
		v = v * 10 + (e->str[i] - '0');
	}
	*out = v;
	return 0;
}

bool banks_id_valid(const char *id)
{
	return strlen(id) == IDS_ULID_LEN + 4 && strncmp(id, "bnk_", 4) == 0 &&
	       ks_shard_of(id) >= 0;
}
