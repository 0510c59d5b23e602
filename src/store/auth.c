/* auth: the API key of a request, from its Authorization header to its
 * record. The header is hostile: "Bearer", the token's length, prefix and
 * characters are checked before anything is looked up; then the key is
 * found by the SHA-256 of its text, in the process cache or by the script
 * key_auth (which records its last use at most once a minute). A record
 * whose environment disagrees with the key's prefix is not believed.
 * auth_check asks again, later, whether a key still works (for a live event
 * stream). On the event loop; managing keys is keys.c, the route glue
 * api/api_common.c. */
#include "pixrelay/store/auth.h"

#include "pixrelay/redis/cache.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/keyspace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PREFIX_TEST "pxr_test_"
#define PREFIX_LIVE "pxr_live_"
#define PREFIX_LEN 9

/* last_used_at is written at most this often per key */
#define TOUCH_INTERVAL_MS "60000"
/* a key's lookup is cached as long as its last use may go unrecorded */
#define CACHE_MS 60000

const char *auth_kind_name(enum auth_kind kind)
{
	return kind == AUTH_MASTER_KEY ? "master" : "account";
}

int auth_bearer(const char *header, const char **token, size_t *len)
{
	const char *p, *end;

	if (!header)
		return AUTH_MISSING;
	while (*header == ' ' || *header == '\t')
		header++;
	if (!*header)
		return AUTH_MISSING;
	if (strncasecmp(header, "Bearer", 6) != 0 || (header[6] != ' ' && header[6] != '\t'))
		return AUTH_MALFORMED;
	p = header + 6;
	while (*p == ' ' || *p == '\t')
		p++;
	end = p + strlen(p);
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (end == p || memchr(p, ' ', (size_t)(end - p)) || memchr(p, '\t', (size_t)(end - p)))
		return AUTH_MALFORMED;
	*token = p;
	*len = (size_t)(end - p);
	return AUTH_OK;
}

int auth_token_env(const char *token, size_t len, enum env *env)
{
	enum env e;

	if (len != PREFIX_LEN + AUTH_KEY_RANDOM)
		return -1;
	if (memcmp(token, PREFIX_TEST, PREFIX_LEN) == 0)
		e = ENV_SANDBOX;
	else if (memcmp(token, PREFIX_LIVE, PREFIX_LEN) == 0)
		e = ENV_PRODUCTION;
	else
		return -1;
	for (size_t i = PREFIX_LEN; i < len; i++) {
		char c = token[i];
		if (!(('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')))
			return -1;
	}
	*env = e;
	return 0;
}

void auth_key_generate(enum env env, char out[AUTH_KEY_MAX])
{
	memcpy(out, env == ENV_PRODUCTION ? PREFIX_LIVE : PREFIX_TEST, PREFIX_LEN);
	ids_base62(out + PREFIX_LEN, AUTH_KEY_RANDOM);
}

struct lookup {
	auth_lookup_fn cb;
	void *ud;
	enum env token_env;
	struct cache *cache;
	uint64_t ticket;
	char sha[65];
	char ckey[80];
};

/* A key record as the cache keeps it: "id env kind account revoked(0|1)". */
static void remember(struct lookup *l, const struct auth_key *key, int revoked)
{
	char v[160];

	snprintf(v, sizeof(v), "%s %s %s %s %d", key->id, env_name(key->env),
		 auth_kind_name(key->kind), key->account, revoked);
	cache_put(l->cache, l->ckey, v, l->ticket, CACHE_MS);
}

/* 0 with the key and *revoked from a cached record, or -1 when malformed. */
static int recall(const char *v, struct auth_key *key, int *revoked)
{
	char id[AUTH_ID_MAX], env[16], kind[16], account[32];

	memset(key, 0, sizeof(*key));
	if (sscanf(v, "%39s %15s %15s %31s %d", id, env, kind, account, revoked) != 5 ||
	    env_parse(env, &key->env) < 0)
		return -1;
	snprintf(key->id, sizeof(key->id), "%s", id);
	snprintf(key->account, sizeof(key->account), "%s", account);
	key->kind = strcmp(kind, "master") == 0 ? AUTH_MASTER_KEY : AUTH_ACCOUNT_KEY;
	return 0;
}

static void on_lookup(void *ud, redisReply *reply, const char *err)
{
	struct lookup *l = ud;
	struct auth_key key;

	memset(&key, 0, sizeof(key));
	if (err) {
		l->cb(l->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 5) {
		l->cb(l->ud, AUTH_INVALID, NULL, NULL);
		goto done;
	}
	for (size_t i = 0; i < 5; i++) {
		if (reply->element[i]->type != REDIS_REPLY_STRING) {
			l->cb(l->ud, AUTH_INVALID, NULL, NULL);
			goto done;
		}
	}
	snprintf(key.id, sizeof(key.id), "%s", reply->element[0]->str);
	if (env_parse(reply->element[1]->str, &key.env) < 0 || key.env != l->token_env) {
		/* a record whose environment disagrees with the key's own prefix is
		 * not believed */
		l->cb(l->ud, AUTH_INVALID, NULL, NULL);
		goto done;
	}
	key.kind =
	    strcmp(reply->element[2]->str, "master") == 0 ? AUTH_MASTER_KEY : AUTH_ACCOUNT_KEY;
	snprintf(key.account, sizeof(key.account), "%s", reply->element[3]->str);
	memcpy(key.sha256, l->sha, sizeof(key.sha256));
	remember(l, &key, reply->element[4]->len > 0);
	if (reply->element[4]->len > 0)
		l->cb(l->ud, AUTH_REVOKED, &key, NULL);
	else
		l->cb(l->ud, AUTH_OK, &key, NULL);
done:
	free(l);
}

void auth_lookup(struct rds *r, struct cache *c, const char *prefix, const char *token, size_t len,
		 auth_lookup_fn cb, void *ud)
{
	struct lookup *l = mem_new(struct lookup);
	char rkey[256], now[32];
	const char *argv[3], *cached;
	struct auth_key key;
	int revoked = 0;

	l->cb = cb;
	l->ud = ud;
	l->cache = c;
	if (auth_token_env(token, len, &l->token_env) < 0)
		l->token_env = ENV_SANDBOX;
	ids_sha256_hex(l->sha, token, len);
	ks_invalidation_key_message(l->ckey, sizeof(l->ckey), l->sha);
	cached = cache_get(c, l->ckey);
	if (cached && recall(cached, &key, &revoked) == 0 && key.env == l->token_env) {
		memcpy(key.sha256, l->sha, sizeof(key.sha256));
		free(l);
		cb(ud, revoked ? AUTH_REVOKED : AUTH_OK, &key, NULL);
		return;
	}
	l->ticket = cache_ticket(c);
	ks_keys_record_key(rkey, sizeof(rkey), prefix, l->sha);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ids_now_ms());
	argv[0] = rkey;
	argv[1] = now;
	argv[2] = TOUCH_INTERVAL_MS;
	rds_script(r, on_lookup, l, SCRIPT_KEY_AUTH, 1, 3, argv, NULL);
}

struct check {
	auth_check_fn cb;
	void *ud;
};

static void on_check(void *ud, redisReply *reply, const char *err)
{
	struct check *k = ud;

	if (err)
		k->cb(k->ud, -1, err);
	else if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
		 reply->element[0]->type != REDIS_REPLY_STRING)
		k->cb(k->ud, AUTH_INVALID, NULL);
	else if (reply->element[1]->type == REDIS_REPLY_STRING && reply->element[1]->len > 0)
		k->cb(k->ud, AUTH_REVOKED, NULL);
	else
		k->cb(k->ud, AUTH_OK, NULL);
	free(k);
}

void auth_check(struct rds *r, const char *prefix, const char *sha256_hex, auth_check_fn cb,
		void *ud)
{
	struct check *k = mem_new(struct check);
	char rkey[256];
	const char *argv[4] = {"HMGET", rkey, "id", "revoked_at"};

	k->cb = cb;
	k->ud = ud;
	ks_keys_record_key(rkey, sizeof(rkey), prefix, sha256_hex);
	rds_cmd_argv(r, on_check, k, 4, argv, NULL);
}
