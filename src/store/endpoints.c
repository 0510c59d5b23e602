/* endpoints: webhook endpoints in Redis, on the event loop (endpoints.h):
 * the calls of the API and of the command line, each one script or one
 * command on the account's shard, and the JSON an endpoint is shown as.
 * What an endpoint's record holds, and how events fan out to it, is
 * src/store/lua/lib/endpoint.lua.
 */
#include "pixrelay/store/endpoints.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/pix/sign.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ep_call {
	store_fn cb;
	endpoints_target_fn target_cb;
	void (*done)(void *ud, long long n);
	void *ud;
	enum env env;
	char account[32];
	char id[ENDPOINT_ID_MAX];
	char secret[SIGN_SECRET_LEN + 1]; /* a new one, shown once */
	long long prev_until;		  /* rotate: the end of the grace (0: none) */
};

static struct ep_call *call_new(enum env env, const char *account, const char *id, store_fn cb,
				void *ud)
{
	struct ep_call *c = mem_new(struct ep_call);

	c->cb = cb;
	c->ud = ud;
	c->env = env;
	snprintf(c->account, sizeof(c->account), "%s", account);
	snprintf(c->id, sizeof(c->id), "%s", id ? id : "");
	return c;
}

static void call_free(struct ep_call *c)
{
	mem_wipe(c->secret, sizeof(c->secret));
	free(c);
}

/* The shard of an account's endpoint `id` (the account's; an id of another
 * shard is none of its), or -1. */
static int shard_of(const char *account, const char *id)
{
	int shard = ks_shard_of(account);

	if (shard < 0 || (id && (!endpoint_valid_id(id) || ks_shard_of(id) != shard)))
		return -1;
	return shard;
}

static void json_time_field(yajl_gen g, const char *name, const char *ms)
{
	json_str(g, name);
	json_time_ms(g, ms && *ms ? ms : NULL);
}

static void json_int_field(yajl_gen g, const char *name, const char *v)
{
	json_str(g, name);
	json_int(g, v && *v ? strtoll(v, NULL, 10) : 0);
}

/* One endpoint (its record's HGETALL) as the API shows it; `secret` (NULL:
 * none) is shown once, when it is made. */
static void render(yajl_gen g, const redisReply *h, const char *secret)
{
	const char *types = rds_hash_field(h, "types"), *headers = rds_hash_field(h, "headers");
	const char *state = rds_hash_field(h, "state"), *why = rds_hash_field(h, "disabled_why");
	const char *prev = rds_hash_field(h, "secret_prev"),
		   *until = rds_hash_field(h, "prev_until");
	const char *fails = rds_hash_field(h, "fails"), *status = rds_hash_field(h, "last_status");
	const char *last_error = rds_hash_field(h, "last_error");
	int enabled = state && strcmp(state, "on") == 0;

	json_open(g);
	json_str(g, "id");
	json_str(g, rds_hash_field(h, "id"));
	if (secret) {
		json_str(g, "secret");
		json_str(g, secret);
	}
	json_str(g, "url");
	json_str(g, rds_hash_field(h, "url"));
	json_str(g, "description");
	json_str(g, rds_hash_field(h, "description") ? rds_hash_field(h, "description") : "");
	json_str(g, "eventTypes");
	json_open_array(g);
	for (const char *at = types ? types : ""; *at;) {
		size_t n = strcspn(at, " ");
		if (n)
			json_strn(g, at, n);
		at += n;
		while (*at == ' ')
			at++;
	}
	json_close_array(g);
	json_str(g, "enabled");
	json_bool(g, enabled);
	json_time_field(g, "disabledAt", enabled ? NULL : rds_hash_field(h, "disabled_ms"));
	json_str(g, "disabledReason");
	json_str_or_null(g, !enabled && why && *why ? why : NULL);
	json_str(g, "headers");
	json_open(g);
	for (const char *at = headers ? headers : ""; *at;) {
		size_t n = strcspn(at, "\n");
		const char *colon = memchr(at, ':', n);
		if (colon) {
			const char *v = colon + 1;
			while (*v == ' ')
				v++;
			json_strn(g, at, (size_t)(colon - at));
			json_strn(g, v, (size_t)(at + n - v));
		}
		at += n + (at[n] == '\n');
	}
	json_close(g);
	json_str(g, "environment");
	json_str(g, rds_hash_field(h, "env"));
	json_str(g, "account");
	json_str(g, rds_hash_field(h, "account"));
	json_time_field(g, "createdAt", rds_hash_field(h, "created_ms"));
	json_time_field(g, "updatedAt", rds_hash_field(h, "updated_ms"));
	json_time_field(g, "previousSecretUntil",
			prev && *prev && until && strtoll(until, NULL, 10) > (long long)ids_now_ms()
			    ? until
			    : NULL);
	/* how it fares: its failures in a row, and what it did in all (the
	 * counters event_settle keeps per endpoint) */
	json_time_field(g, "failingSince", rds_hash_field(h, "failing_ms"));
	json_int_field(g, "failuresInARow", fails);
	json_str(g, "stats");
	json_open(g);
	json_int_field(g, "delivered", rds_hash_field(h, "n_delivered"));
	json_int_field(g, "failedAttempts", rds_hash_field(h, "n_failed"));
	json_int_field(g, "dead", rds_hash_field(h, "n_dead"));
	json_time_field(g, "lastAttemptAt", rds_hash_field(h, "last_ms"));
	json_str(g, "lastStatus");
	if (status && *status)
		json_int(g, strtoll(status, NULL, 10));
	else
		json_null(g);
	json_str(g, "lastError");
	json_str_or_null(g, last_error && *last_error ? last_error : NULL);
	json_close(g);
	json_close(g);
}

/* Answer c's caller with one endpoint's JSON. */
static void answer_one(struct ep_call *c, const redisReply *h, const char *secret)
{
	yajl_gen g = json_gen_new();
	size_t len;
	const char *s;

	render(g, h, secret);
	s = json_buf(g, &len);
	c->cb(c->ud, 0, s, NULL);
	yajl_gen_free(g);
}

/* ---- create, update ---- */

static void on_put(void *ud, redisReply *reply, const char *err)
{
	struct ep_call *c = ud;
	const char *what;

	if (err) {
		c->cb(c->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 ||
	    reply->element[0]->type != REDIS_REPLY_STRING) {
		c->cb(c->ud, -1, NULL, "unexpected reply from endpoint_put");
		goto done;
	}
	what = reply->element[0]->str;
	if (strcmp(what, "ok") == 0 && reply->elements == 2)
		answer_one(c, reply->element[1], c->secret[0] ? c->secret : NULL);
	else if (strcmp(what, "not_found") == 0)
		c->cb(c->ud, ENDPOINTS_NOT_FOUND, NULL, NULL);
	else if (strcmp(what, "too_many") == 0)
		c->cb(c->ud, ENDPOINTS_TOO_MANY, NULL, NULL);
	else if (strcmp(what, "no_account") == 0)
		c->cb(c->ud, ENDPOINTS_NO_ACCOUNT, NULL, NULL);
	else
		c->cb(c->ud, -1, NULL, "unexpected reply from endpoint_put");
done:
	call_free(c);
}

/* endpoint_put with the given fields of spec (and the secret on create). */
static void put(struct rds *r, const struct config *cfg, struct ep_call *c, int shard, int create,
		const struct endpoint_spec *spec)
{
	char key[KS_KEY_MAX], sp[KS_PREFIX_MAX], now[24], most[16], ttl[24];
	const char *argv[1 + 8 + 12];
	int n = 0;

	ks_endpoint_key(key, sizeof(key), cfg->prefix, shard, c->id);
	ks_shard_prefix(sp, sizeof(sp), cfg->prefix, shard);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ids_now_ms());
	snprintf(most, sizeof(most), "%d", ENDPOINT_MAX);
	snprintf(ttl, sizeof(ttl), "%ld", cfg->event_retention_days * 86400);
	argv[n++] = key;
	argv[n++] = sp;
	argv[n++] = env_name(c->env);
	argv[n++] = c->account;
	argv[n++] = c->id;
	argv[n++] = now;
	argv[n++] = create ? "1" : "0";
	argv[n++] = most;
	argv[n++] = ttl;
	if (spec->given & ENDPOINT_URL) {
		argv[n++] = "url";
		argv[n++] = spec->url;
	}
	if (spec->given & ENDPOINT_DESCRIPTION) {
		argv[n++] = "description";
		argv[n++] = spec->description;
	}
	if (spec->given & ENDPOINT_TYPES) {
		argv[n++] = "types";
		argv[n++] = spec->types;
	}
	if (spec->given & ENDPOINT_HEADERS) {
		argv[n++] = "headers";
		argv[n++] = spec->headers;
	}
	if (spec->given & ENDPOINT_ENABLED) {
		argv[n++] = "enabled";
		argv[n++] = spec->enabled ? "1" : "0";
	}
	if (create) {
		argv[n++] = "secret";
		argv[n++] = c->secret;
	}
	rds_script(r, on_put, c, SCRIPT_ENDPOINT_PUT, 1, n, argv, NULL);
}

void endpoints_create(struct rds *r, const struct config *cfg, enum env env, const char *account,
		      const struct endpoint_spec *spec, store_fn cb, void *ud)
{
	int shard = shard_of(account, NULL);
	struct ep_call *c;

	if (shard < 0) {
		cb(ud, ENDPOINTS_NO_ACCOUNT, NULL, NULL);
		return;
	}
	c = call_new(env, account, NULL, cb, ud);
	ks_endpoint_id(shard, c->id);
	sign_secret_new(c->secret, sizeof(c->secret));
	put(r, cfg, c, shard, 1, spec);
}

void endpoints_update(struct rds *r, const struct config *cfg, enum env env, const char *account,
		      const char *id, const struct endpoint_spec *spec, store_fn cb, void *ud)
{
	int shard = shard_of(account, id);

	if (shard < 0) {
		cb(ud, ENDPOINTS_NOT_FOUND, NULL, NULL);
		return;
	}
	put(r, cfg, call_new(env, account, id, cb, ud), shard, 0, spec);
}

/* ---- reading ---- */

/* Whether an endpoint's record (HGETALL) is of c's account and environment. */
static int record_ours(const struct ep_call *c, const redisReply *h)
{
	const char *env = rds_hash_field(h, "env"), *account = rds_hash_field(h, "account");

	return env && account && strcmp(env, env_name(c->env)) == 0 &&
	       strcmp(account, c->account) == 0;
}

static void on_record(void *ud, redisReply *reply, const char *err)
{
	struct ep_call *c = ud;

	if (err) {
		if (c->target_cb)
			c->target_cb(c->ud, -1, NULL, err);
		else
			c->cb(c->ud, -1, NULL, err);
	} else if (reply->type != REDIS_REPLY_ARRAY || !record_ours(c, reply)) {
		if (c->target_cb)
			c->target_cb(c->ud, ENDPOINTS_NOT_FOUND, NULL, NULL);
		else
			c->cb(c->ud, ENDPOINTS_NOT_FOUND, NULL, NULL);
	} else if (c->target_cb) {
		const char *prev = rds_hash_field(reply, "secret_prev");
		const char *until = rds_hash_field(reply, "prev_until");
		const char *headers = rds_hash_field(reply, "headers");
		const char *signing = rds_hash_field(reply, "secret");
		struct endpoint_target t = {c->id, rds_hash_field(reply, "url"), "", "", "",
					    c->env};
		t.signing = signing ? signing : "";
		if (prev && until && strtoll(until, NULL, 10) > (long long)ids_now_ms())
			t.signing_prev = prev;
		t.headers = headers ? headers : "";
		c->target_cb(c->ud, 0, &t, NULL);
	} else {
		answer_one(c, reply, NULL);
	}
	call_free(c);
}

/* HGETALL of endpoint c->id, answered by on_record. */
static void read_record(struct rds *r, const struct config *cfg, struct ep_call *c, int shard)
{
	char key[KS_KEY_MAX];
	const char *argv[] = {"HGETALL", key};

	ks_endpoint_key(key, sizeof(key), cfg->prefix, shard, c->id);
	rds_cmd_argv(r, on_record, c, 2, argv, NULL);
}

void endpoints_get(struct rds *r, const struct config *cfg, enum env env, const char *account,
		   const char *id, store_fn cb, void *ud)
{
	int shard = shard_of(account, id);

	if (shard < 0) {
		cb(ud, ENDPOINTS_NOT_FOUND, NULL, NULL);
		return;
	}
	read_record(r, cfg, call_new(env, account, id, cb, ud), shard);
}

void endpoints_target(struct rds *r, const struct config *cfg, enum env env, const char *account,
		      const char *id, endpoints_target_fn cb, void *ud)
{
	int shard = shard_of(account, id);
	struct ep_call *c;

	if (shard < 0) {
		cb(ud, ENDPOINTS_NOT_FOUND, NULL, NULL);
		return;
	}
	c = call_new(env, account, id, NULL, ud);
	c->target_cb = cb;
	read_record(r, cfg, c, shard);
}

static void on_list(void *ud, redisReply *reply, const char *err)
{
	struct ep_call *c = ud;
	yajl_gen g;
	size_t len;
	const char *s;

	if (err) {
		c->cb(c->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY) {
		c->cb(c->ud, -1, NULL, "unexpected reply from endpoint_list");
		goto done;
	}
	g = json_gen_new();
	json_open(g);
	json_str(g, "endpoints");
	json_open_array(g);
	for (size_t i = 0; i < reply->elements; i++)
		if (reply->element[i]->type == REDIS_REPLY_ARRAY &&
		    record_ours(c, reply->element[i]))
			render(g, reply->element[i], NULL);
	json_close_array(g);
	json_close(g);
	s = json_buf(g, &len);
	c->cb(c->ud, 0, s, NULL);
	yajl_gen_free(g);
done:
	call_free(c);
}

void endpoints_list(struct rds *r, const struct config *cfg, enum env env, const char *account,
		    store_fn cb, void *ud)
{
	int shard = shard_of(account, NULL);
	char idx[KS_KEY_MAX], sp[KS_PREFIX_MAX];

	if (shard < 0) {
		cb(ud, 0, "{\"endpoints\":[]}", NULL);
		return;
	}
	ks_endpoint_index_key(idx, sizeof(idx), cfg->prefix, shard, env, account);
	ks_shard_prefix(sp, sizeof(sp), cfg->prefix, shard);
	{
		const char *argv[] = {idx, sp};
		rds_script(r, on_list, call_new(env, account, NULL, cb, ud), SCRIPT_ENDPOINT_LIST,
			   1, 2, argv, NULL);
	}
}

/* ---- delete, rotate ---- */

static void on_changed(void *ud, redisReply *reply, const char *err)
{
	struct ep_call *c = ud;
	yajl_gen g;
	size_t len;
	const char *s;
	char until[24];

	if (err) {
		c->cb(c->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type != REDIS_REPLY_INTEGER) {
		c->cb(c->ud, -1, NULL, "unexpected reply from an endpoint script");
		goto done;
	}
	if (reply->integer == 0) {
		c->cb(c->ud, ENDPOINTS_NOT_FOUND, NULL, NULL);
		goto done;
	}
	g = json_gen_new();
	json_open(g);
	json_str(g, "id");
	json_str(g, c->id);
	if (c->secret[0]) {
		json_str(g, "secret");
		json_str(g, c->secret);
		snprintf(until, sizeof(until), "%lld", c->prev_until);
		json_time_field(g, "previousSecretUntil", c->prev_until ? until : NULL);
	} else {
		json_str(g, "deleted");
		json_bool(g, 1);
	}
	json_close(g);
	s = json_buf(g, &len);
	c->cb(c->ud, 0, s, NULL);
	yajl_gen_free(g);
done:
	call_free(c);
}

void endpoints_delete(struct rds *r, const struct config *cfg, enum env env, const char *account,
		      const char *id, store_fn cb, void *ud)
{
	int shard = shard_of(account, id);
	char key[KS_KEY_MAX], sp[KS_PREFIX_MAX], now[24];

	if (shard < 0) {
		cb(ud, ENDPOINTS_NOT_FOUND, NULL, NULL);
		return;
	}
	ks_endpoint_key(key, sizeof(key), cfg->prefix, shard, id);
	ks_shard_prefix(sp, sizeof(sp), cfg->prefix, shard);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ids_now_ms());
	{
		const char *argv[] = {key, sp, env_name(env), account, id, now};
		rds_script(r, on_changed, call_new(env, account, id, cb, ud),
			   SCRIPT_ENDPOINT_DELETE, 1, 6, argv, NULL);
	}
}

void endpoints_rotate(struct rds *r, const struct config *cfg, enum env env, const char *account,
		      const char *id, long grace_s, store_fn cb, void *ud)
{
	int shard = shard_of(account, id);
	char key[KS_KEY_MAX], until[24] = "";
	struct ep_call *c;

	if (shard < 0) {
		cb(ud, ENDPOINTS_NOT_FOUND, NULL, NULL);
		return;
	}
	c = call_new(env, account, id, cb, ud);
	sign_secret_new(c->secret, sizeof(c->secret));
	if (grace_s > 0) {
		c->prev_until = (long long)ids_now_ms() + grace_s * 1000LL;
		snprintf(until, sizeof(until), "%lld", c->prev_until);
	}
	ks_endpoint_key(key, sizeof(key), cfg->prefix, shard, id);
	{
		const char *argv[] = {key, env_name(env), account, c->secret, until};
		rds_script(r, on_changed, c, SCRIPT_ENDPOINT_ROTATE, 1, 5, argv, NULL);
	}
}

/* ---- the janitor's expiry ---- */

static void on_expired(void *ud, redisReply *reply, const char *err)
{
	struct ep_call *c = ud;

	c->done(c->ud, err || reply->type != REDIS_REPLY_INTEGER ? -1 : reply->integer);
	call_free(c);
}

void endpoints_expire(struct rds *r, const struct config *cfg, int shard, uint64_t now_ms,
		      void (*done)(void *ud, long long n), void *ud)
{
	struct ep_call *c = call_new(ENV_SANDBOX, "", NULL, NULL, ud);
	char held[KS_KEY_MAX], sp[KS_PREFIX_MAX], now[24], oldest[24], ttl[24];
	uint64_t keep = (uint64_t)cfg->event_retention_days * 86400000u;

	c->done = done;
	ks_held_key(held, sizeof(held), cfg->prefix, shard);
	ks_shard_prefix(sp, sizeof(sp), cfg->prefix, shard);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)now_ms);
	snprintf(oldest, sizeof(oldest), "%llu",
		 (unsigned long long)(now_ms > keep ? now_ms - keep : 0));
	snprintf(ttl, sizeof(ttl), "%ld", cfg->event_retention_days * 86400);
	{
		const char *argv[] = {held, sp, now, oldest, ttl};
		rds_script(r, on_expired, c, SCRIPT_ENDPOINT_EXPIRE, 1, 5, argv, NULL);
	}
}
