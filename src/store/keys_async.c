/* keys_async: the API's key management, asynchronous (for /v1/keys): a
 * page of keys, a key made or revoked, with the invalidation every process's
 * cache hears. The operator's blocking calls are keys.c; checking a
 * request's key is auth.c. */
#include "pixrelay/store/keys.h"

#include "pixrelay/redis/cache.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"

#include <stdlib.h>
#include <string.h>

/* ---- asynchronous, for the server ---- */

/* The fields of a key record as key_list returns them, and as keys_render reads them. */
enum {
	KF_ID,
	KF_ENV,
	KF_KIND,
	KF_ACCOUNT,
	KF_DESCRIPTION,
	KF_HINT,
	KF_CREATED,
	KF_USED,
	KF_REVOKED,
	KF_COUNT
};

static const char *const key_fields[KF_COUNT] = {"id",	       "env",	       "kind",
						 "account",    "description",  "hint",
						 "created_at", "last_used_at", "revoked_at"};

static void json_ms(yajl_gen g, const char *name, const char *ms)
{
	json_str(g, name);
	json_time_ms(g, ms);
}

/* One key as the API shows it; `secret` (NULL = none) is its text. */
static void keys_render(yajl_gen g, const char *const f[KF_COUNT], const char *secret)
{
	json_open(g);
	json_str(g, "id");
	json_str(g, f[KF_ID]);
	if (secret) {
		json_str(g, "key");
		json_str(g, secret);
	}
	json_str(g, "environment");
	json_str(g, f[KF_ENV]);
	json_str(g, "kind");
	json_str(g, f[KF_KIND]);
	json_str(g, "account");
	json_str(g, f[KF_ACCOUNT]);
	json_str(g, "description");
	json_str(g, f[KF_DESCRIPTION]);
	json_str(g, "hint");
	json_str(g, f[KF_HINT]);
	json_ms(g, "createdAt", f[KF_CREATED]);
	json_ms(g, "lastUsedAt", f[KF_USED]);
	json_ms(g, "revokedAt", f[KF_REVOKED]);
	json_close(g);
}

bool keys_valid_id(const char *id)
{
	return strncmp(id, "key_", 4) == 0 && ids_is_ulid(id + 4);
}

struct keys_call {
	struct rds *r;
	struct cache *cache;
	store_fn cb;
	void *ud;
	enum env env;
	enum auth_kind
	    viewer;	  /* the kind of the key asking: an account key never sees a master key */
	char account[32]; /* "" = any of env */
	char prefix[KS_PREFIX_MAX];
	char id[AUTH_ID_MAX];
	char rec[256];
	char sha[65];
	char now[32];
	char *json;
};

static struct keys_call *call_new(struct rds *r, const char *prefix, enum env env,
				  const char *account, store_fn cb, void *ud)
{
	struct keys_call *k = mem_new(struct keys_call);

	k->r = r;
	snprintf(k->prefix, sizeof(k->prefix), "%s", prefix);
	k->env = env;
	k->cb = cb;
	k->ud = ud;
	snprintf(k->account, sizeof(k->account), "%s", account ? account : "");
	return k;
}

static void call_free(struct keys_call *k)
{
	if (k->json) {
		mem_wipe(k->json, strlen(k->json));
		free(k->json);
	}
	free(k);
}

/* A redis string element as a C string ("" for anything else). */
static const char *str_of(const redisReply *e)
{
	return e && e->type == REDIS_REPLY_STRING ? e->str : "";
}

static void on_key_page(void *ud, redisReply *reply, const char *err)
{
	struct keys_call *k = ud;
	size_t n;
	yajl_gen g;
	const char *s, *score, *id;
	size_t len;

	if (err) {
		k->cb(k->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 2 ||
	    (reply->elements - 2) % KF_COUNT != 0) {
		k->cb(k->ud, -1, NULL, "unexpected reply from key_list");
		goto done;
	}
	n = (reply->elements - 2) / KF_COUNT;
	g = json_gen_new();
	json_open(g);
	json_str(g, "keys");
	json_open_array(g);
	for (size_t i = 0; i < n; i++) {
		const char *f[KF_COUNT];
		for (int j = 0; j < KF_COUNT; j++)
			f[j] = str_of(reply->element[i * KF_COUNT + (size_t)j]);
		keys_render(g, f, NULL);
	}
	json_close_array(g);
	score = str_of(reply->element[reply->elements - 2]);
	id = str_of(reply->element[reply->elements - 1]);
	page_write_next(g, score, id);
	json_close(g);
	s = json_buf(g, &len);
	k->cb(k->ud, 0, s, NULL);
	yajl_gen_free(g);
done:
	call_free(k);
}

void keys_page(struct rds *r, const char *prefix, enum env env, const char *account,
	       enum auth_kind viewer, const struct page_cursor *from, int limit, store_fn cb,
	       void *ud)
{
	struct keys_call *k = call_new(r, prefix, env, account, cb, ud);
	char all[256], kp[256], lim[16];
	const char *argv[8];

	ks_keys_all_key(all, sizeof(all), prefix);
	ks_keys_prefix(kp, sizeof(kp), prefix);
	snprintf(lim, sizeof(lim), "%d", limit);
	argv[0] = all;
	argv[1] = kp;
	argv[2] = env_name(env);
	argv[3] = k->account;
	argv[4] = from->score;
	argv[5] = from->id;
	argv[6] = lim;
	argv[7] = auth_kind_name(viewer);
	rds_script(r, on_key_page, k, SCRIPT_KEY_LIST, 1, 8, argv, NULL);
}

static void on_key_created(void *ud, redisReply *reply, const char *err)
{
	struct keys_call *k = ud;

	if (err)
		k->cb(k->ud, -1, NULL, err);
	else if (reply->type != REDIS_REPLY_INTEGER)
		k->cb(k->ud, -1, NULL, "unexpected reply from key_create");
	else
		k->cb(k->ud, 0, k->json, NULL);
	call_free(k);
}

void keys_create_async(struct rds *r, const char *prefix, enum env env, const char *account,
		       const char *description, store_fn cb, void *ud)
{
	struct keys_call *k = call_new(r, prefix, env, account, cb, ud);
	char text[AUTH_KEY_MAX], hint[24], k2[256], k3[256];
	const char *argv[11];
	const char *f[KF_COUNT];
	yajl_gen g = json_gen_new();

	auth_key_generate(env, text);
	ids_sha256_hex(k->sha, text, strlen(text));
	memcpy(k->id, "key_", 4);
	ids_ulid(k->id + 4);
	snprintf(hint, sizeof(hint), "%.13s...", text);
	snprintf(k->now, sizeof(k->now), "%llu", (unsigned long long)ids_now_ms());
	ks_keys_record_key(k->rec, sizeof(k->rec), prefix, k->sha);
	ks_keys_id_key(k2, sizeof(k2), prefix, k->id);
	ks_keys_all_key(k3, sizeof(k3), prefix);
	f[KF_ID] = k->id;
	f[KF_ENV] = env_name(env);
	f[KF_KIND] = auth_kind_name(AUTH_ACCOUNT_KEY);
	f[KF_ACCOUNT] = k->account;
	f[KF_DESCRIPTION] = description;
	f[KF_HINT] = hint;
	f[KF_CREATED] = k->now;
	f[KF_USED] = "";
	f[KF_REVOKED] = "";
	keys_render(g, f, text);
	k->json = json_take(g); /* its buffer, which held the text too, wiped */
	mem_wipe(text, sizeof(text));
	argv[0] = k->rec;
	argv[1] = k2;
	argv[2] = k3;
	argv[3] = k->id;
	argv[4] = env_name(env);
	argv[5] = auth_kind_name(AUTH_ACCOUNT_KEY);
	argv[6] = k->account;
	argv[7] = description;
	argv[8] = k->now;
	argv[9] = hint;
	argv[10] = k->sha;
	rds_script(r, on_key_created, k, SCRIPT_KEY_CREATE, 3, 11, argv, NULL);
}

static void on_key_revoked(void *ud, redisReply *reply, const char *err)
{
	struct keys_call *k = ud;
	char ckey[80];

	/* whatever the answer, this process asks Redis about the key next time */
	ks_invalidation_key_message(ckey, sizeof(ckey), k->sha);
	cache_forget(k->cache, ckey);
	if (err)
		k->cb(k->ud, -1, NULL, err);
	else if (reply->type != REDIS_REPLY_INTEGER)
		k->cb(k->ud, -1, NULL, "unexpected reply from key_revoke");
	else if (reply->integer == 0)
		k->cb(k->ud, KEYS_NOT_FOUND, NULL, NULL);
	else
		k->cb(k->ud, reply->integer == 1 ? 0 : KEYS_ALREADY_REVOKED, k->json, NULL);
	call_free(k);
}

static void on_key_record(void *ud, redisReply *reply, const char *err)
{
	struct keys_call *k = ud;
	const char *f[KF_COUNT];
	char chan[256], msg[80];
	const char *argv[4];
	yajl_gen g;
	int revoked;

	if (err) {
		k->cb(k->ud, -1, NULL, err);
		call_free(k);
		return;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != KF_COUNT) {
		k->cb(k->ud, -1, NULL, "unexpected reply to HMGET");
		call_free(k);
		return;
	}
	for (int j = 0; j < KF_COUNT; j++)
		f[j] = str_of(reply->element[j]);
	/* a key of another environment or account is not found for this caller,
	 * nor is a master key for an account key (master keys are the platform
	 * account's, and only a master key or the operator manages them) */
	if (strcmp(f[KF_ID], k->id) != 0 || strcmp(f[KF_ENV], env_name(k->env)) != 0 ||
	    (*k->account && strcmp(f[KF_ACCOUNT], k->account) != 0) ||
	    (k->viewer != AUTH_MASTER_KEY &&
	     strcmp(f[KF_KIND], auth_kind_name(AUTH_MASTER_KEY)) == 0)) {
		k->cb(k->ud, KEYS_NOT_FOUND, NULL, NULL);
		call_free(k);
		return;
	}
	revoked = *f[KF_REVOKED] != '\0';
	if (!revoked)
		f[KF_REVOKED] = k->now;
	g = json_gen_new();
	keys_render(g, f, NULL);
	k->json = json_take(g);
	if (revoked) {
		ks_invalidation_key_message(msg, sizeof(msg), k->sha);
		cache_forget(k->cache, msg);
		k->cb(k->ud, KEYS_ALREADY_REVOKED, k->json, NULL);
		call_free(k);
		return;
	}
	/* exactly what keys_revoke sends */
	ks_invalidation_channel(chan, sizeof(chan), k->prefix);
	ks_invalidation_key_message(msg, sizeof(msg), k->sha);
	argv[0] = k->rec;
	argv[1] = k->now;
	argv[2] = chan;
	argv[3] = msg;
	rds_script(k->r, on_key_revoked, k, SCRIPT_KEY_REVOKE, 1, 4, argv, NULL);
}

static void on_key_sha(void *ud, redisReply *reply, const char *err)
{
	struct keys_call *k = ud;
	const char *argv[2 + KF_COUNT];

	if (err) {
		k->cb(k->ud, -1, NULL, err);
		call_free(k);
		return;
	}
	if (reply->type != REDIS_REPLY_STRING || reply->len != 64) {
		k->cb(k->ud, KEYS_NOT_FOUND, NULL, NULL);
		call_free(k);
		return;
	}
	snprintf(k->sha, sizeof(k->sha), "%s", reply->str);
	ks_keys_record_key(k->rec, sizeof(k->rec), k->prefix, k->sha);
	argv[0] = "HMGET";
	argv[1] = k->rec;
	for (int j = 0; j < KF_COUNT; j++)
		argv[2 + j] = key_fields[j];
	rds_cmd_argv(k->r, on_key_record, k, 2 + KF_COUNT, argv, NULL);
}

void keys_revoke_async(struct rds *r, struct cache *c, const char *prefix, enum env env,
		       const char *account, enum auth_kind viewer, const char *key_id, store_fn cb,
		       void *ud)
{
	struct keys_call *k = call_new(r, prefix, env, account, cb, ud);
	char kid[256];
	const char *argv[2];

	k->cache = c;
	k->viewer = viewer;
	snprintf(k->id, sizeof(k->id), "%s", key_id);
	snprintf(k->now, sizeof(k->now), "%llu", (unsigned long long)ids_now_ms());
	ks_keys_id_key(kid, sizeof(kid), prefix, k->id);
	argv[0] = "GET";
	argv[1] = kid;
	rds_cmd_argv(r, on_key_sha, k, 2, argv, NULL);
}
