/* banks_view: the narrow view of a bank connection that a webhook call is
 * judged by (banks_view.h): one HMGET of the fields authentication needs,
 * the trust list parsed and pinned once, the whole kept in the process
 * cache as an object until an announcement "b:<id>" or its expiry. The
 * judging itself is the API's (api/api_banks.c). */
#include "pixrelay/store/banks_view.h"

#include "banks_int.h"

#include "pixrelay/core/certcheck.h"
#include "pixrelay/pix/provsig.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/redis/cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VIEW_CACHE_MS 300000 /* as long as an account's facts */

/* The record's fields a view is built from, in the order asked. */
enum {
	F_ID,
	F_ACCOUNT,
	F_ENV,
	F_AUTH,
	F_TOKEN,
	F_CA,
	F_SUBJECT,
	F_PINS,
	F_PROVIDER,
	F_PROV_KEYS,
	F_PROV_OWN,
	F_COUNT
};
static const char *const fields[F_COUNT] = {
    "id",	   "account",  "env",	    "auth",    "token_sha", "client_ca", "client_subject",
    "client_pins", "provider", "prov_keys", "prov_own"};

static void view_free(void *p)
{
	struct banks_view *v = p;

	certcheck_free(v->trust);
	provsig_keys_free(v->prov_keys);
	provsig_keys_free(v->prov_own);
	free(v);
}

/* Field i of an HMGET reply: its text, "" when absent. */
static const char *field(const redisReply *h, int i)
{
	const redisReply *e = h->element[i];

	return e->type == REDIS_REPLY_STRING ? e->str : "";
}

/* The view of connection `id` from HMGET reply h, or NULL when h is no
 * such connection. */
static struct banks_view *view_of(const redisReply *h, const char *id)
{
	struct banks_view *v;
	const char *ca;

	if (h->type != REDIS_REPLY_ARRAY || h->elements != F_COUNT ||
	    strcmp(field(h, F_ID), id) != 0)
		return NULL;
	v = mem_new(struct banks_view);
	if (env_parse(field(h, F_ENV), &v->ref.env) < 0 ||
	    strlen(field(h, F_ACCOUNT)) >= sizeof(v->ref.account)) {
		free(v);
		return NULL;
	}
	snprintf(v->ref.id, sizeof(v->ref.id), "%s", id);
	snprintf(v->ref.account, sizeof(v->ref.account), "%s", field(h, F_ACCOUNT));
	if (provider_parse(field(h, F_PROVIDER), &v->provider) < 0) {
		free(v);
		return NULL;
	}
	v->auth = banks_auth_of(field(h, F_AUTH));
	if (v->auth == BANKS_PROVIDER) {
		/* Asaas: its token's SHA-256; Woovi: its keys */
		snprintf(v->token_sha, sizeof(v->token_sha), "%s", field(h, F_TOKEN));
		/* read once here, judged on every call; pixrelay's own key is
		 * believed in the sandbox only */
		if (field(h, F_PROV_KEYS)[0])
			v->prov_keys =
			    provsig_keys_new(field(h, F_PROV_KEYS), v->why, sizeof(v->why));
		if (v->ref.env == ENV_SANDBOX && field(h, F_PROV_OWN)[0])
			v->prov_own =
			    provsig_keys_new(field(h, F_PROV_OWN), v->why, sizeof(v->why));
		return v;
	}
	if (v->auth == BANKS_URL_TOKEN) {
		snprintf(v->token_sha, sizeof(v->token_sha), "%s", field(h, F_TOKEN));
		return v;
	}
	/* the chain to the trust list, then the leaf's pins: read once here,
	 * judged on every call */
	ca = field(h, F_CA);
	if (ca[0])
		v->trust = certcheck_new(ca, strlen(ca), v->why, sizeof(v->why));
	if (v->trust && certcheck_pin(v->trust, field(h, F_SUBJECT), field(h, F_PINS), v->why,
				      sizeof(v->why)) < 0) {
		certcheck_free(v->trust);
		v->trust = NULL;
	}
	return v;
}

struct view_call {
	struct cache *cache;
	uint64_t ticket;
	char id[BANKS_ID_MAX];
	banks_view_fn cb;
	void *ud;
};

static void on_fields(void *ud, redisReply *reply, const char *err)
{
	struct view_call *vc = ud;
	struct banks_view *v;
	char key[64];

	if (err) {
		vc->cb(vc->ud, -1, NULL, err);
		goto done;
	}
	v = view_of(reply, vc->id);
	if (!v) {
		vc->cb(vc->ud, BANKS_NOT_FOUND, NULL, NULL);
		goto done;
	}
	vc->cb(vc->ud, 0, v, NULL);
	ks_invalidation_bank_message(key, sizeof(key), vc->id);
	if (cache_put_obj(vc->cache, key, v, view_free, vc->ticket, VIEW_CACHE_MS) != 0)
		view_free(v);
done:
	free(vc);
}

void banks_view_get(struct rds *r, struct cache *cache, const struct config *cfg, const char *id,
		    banks_view_fn cb, void *ud)
{
	struct view_call *vc;
	const struct banks_view *v;
	char key[KS_KEY_MAX], name[64];
	const char *argv[2 + F_COUNT] = {"HMGET", key};

	if (!banks_id_valid(id)) {
		cb(ud, BANKS_NOT_FOUND, NULL, NULL);
		return;
	}
	ks_invalidation_bank_message(name, sizeof(name), id);
	v = cache_get_obj(cache, name);
	if (v) {
		cb(ud, 0, v, NULL);
		return;
	}
	vc = mem_new(struct view_call);
	vc->cache = cache;
	vc->ticket = cache_ticket(cache);
	snprintf(vc->id, sizeof(vc->id), "%s", id);
	vc->cb = cb;
	vc->ud = ud;
	ks_bank_key(key, sizeof(key), cfg->prefix, ks_shard_of(id), id);
	for (int i = 0; i < F_COUNT; i++)
		argv[2 + i] = fields[i];
	rds_cmd_argv(r, on_fields, vc, 2 + F_COUNT, argv, NULL);
}

void banks_view_forget(struct cache *cache, const char *id)
{
	char name[64];

	ks_invalidation_bank_message(name, sizeof(name), id);
	cache_forget(cache, name);
}
