/* banks: the store of bank connections (connect, read, list, disconnect,
 * the log of what each heard) and the write of what banks report: the Pix
 * of a bank's webhook call (or of a reconciliation), each a shardq item,
 * written by the script bank_pix with every other Pix of its shard that
 * arrived in the same turn of the loop. Parsing the bank's body is
 * bankpix's (pix floor); authenticating the call is the API's. */
#include "pixrelay/store/banks.h"

#include "pixrelay/core/certcheck.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/metrics.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/pix/event.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/redis/shardq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCH_MAX 128			       /* Pix and refusals in one bank_pix call */
#define BRASILIA_OFFSET_MS (3LL * 3600 * 1000) /* UTC-3, no daylight saving since 2019 */
#define LIST_MAX 1000			       /* connections in one listing */

static const char *auth_name(enum banks_auth a)
{
	return a == BANKS_URL_TOKEN ? "url-token" : "mtls";
}

void banks_conn_deinit(struct banks_conn *c)
{
	free(c->pix_key);
	free(c->client_ca);
	memset(c, 0, sizeof(*c));
}

int banks_check_pix_key(const char *key, char *err, size_t errlen)
{
	size_t n = strlen(key);

	if (n == 0 || n > BANKPIX_CHAVE_MAX) {
		snprintf(err, errlen, "must be 1 to %d characters", BANKPIX_CHAVE_MAX);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)key[i] <= ' ' || (unsigned char)key[i] >= 0x7f) {
			snprintf(err, errlen,
				 "must be printable ASCII without spaces (an e-mail, "
				 "+55 phone, CPF, CNPJ or random key)");
			return -1;
		}
	return 0;
}

/* A connection id this module could have made: "bnk_" + a ULID. */
static int valid_id(const char *id)
{
	return strlen(id) == IDS_ULID_LEN + 4 && strncmp(id, "bnk_", 4) == 0 &&
	       ks_shard_of(id) >= 0;
}

/* ---- rendering ---- */

/* A connection's stored fields, borrowed. */
struct fields {
	const char *id, *account, *env, *pix_key, *auth, *client_ca, *created_ms;
};

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

static void fields_of(const redisReply *h, struct fields *f)
{
	f->id = or_empty(rds_hash_field(h, "id"));
	f->account = or_empty(rds_hash_field(h, "account"));
	f->env = or_empty(rds_hash_field(h, "env"));
	f->pix_key = or_empty(rds_hash_field(h, "pix_key"));
	f->auth = or_empty(rds_hash_field(h, "auth"));
	f->client_ca = or_empty(rds_hash_field(h, "client_ca"));
	f->created_ms = or_empty(rds_hash_field(h, "created_ms"));
}

/* A connection as JSON, never with a secret: `token`, only when the
 * connection is made, goes into its webhookUrl that once. */
static void render(yajl_gen g, const struct config *cfg, const struct fields *f, const char *token)
{
	char *url, at[32];
	struct certcheck *cc = NULL;
	char err[128];
	/* the banks' webhook server, when it has a name of its own */
	const char *base =
	    cfg->bank_webhook_base_url[0] ? cfg->bank_webhook_base_url : cfg->base_url;

	url = token ? mem_printf("%s/webhooks/bank/%s?hmac=%s&ignorar=", base, f->id, token)
		    : mem_printf("%s/webhooks/bank/%s", base, f->id);
	json_open(g);
	json_str(g, "id");
	json_str(g, f->id);
	json_str(g, "account");
	json_str(g, f->account);
	json_str(g, "environment");
	json_str(g, f->env);
	json_str(g, "pixKey");
	json_str(g, f->pix_key);
	json_str(g, "auth");
	json_str(g, f->auth);
	json_str(g, "webhookUrl");
	json_str(g, url);
	json_str(g, "clientCa");
	if (f->client_ca[0] &&
	    (cc = certcheck_new(f->client_ca, strlen(f->client_ca), err, sizeof(err)))) {
		char fp[65];

		certcheck_fingerprint(cc, fp);
		json_open(g);
		json_str(g, "certificates");
		json_int(g, (long long)certcheck_count(cc));
		json_str(g, "sha256");
		json_str(g, fp);
		json_close(g);
		certcheck_free(cc);
	} else {
		json_null(g);
	}
	json_str(g, "createdAt");
	timefmt_rfc3339(at, strtoull(f->created_ms, NULL, 10));
	json_str(g, at);
	json_close(g);
	mem_wipe(url, strlen(url));
	free(url);
}

static char *gen_take(yajl_gen g)
{
	size_t len;
	const char *s = json_buf(g, &len);
	char *out = mem_strndup(s, len);

	/* the buffer may have held a token */
	mem_wipe((char *)s, len);
	yajl_gen_free(g);
	return out;
}

/* ---- calls ---- */

/* One asynchronous call of this module and what it needs to answer. */
struct call {
	struct rds *r;
	const struct config *cfg;
	enum env env;
	char account[32];
	char id[BANKS_ID_MAX];
	char key[KS_KEY_MAX];
	store_fn cb;
	banks_conn_fn conn_cb;
	void *ud;
	char *json;
	/* listing the connections of an environment or an account */
	redisReply *ids;
	size_t next;
	yajl_gen g;
};

static struct call *call_new(struct rds *r, const struct config *cfg, enum env env,
			     const char *account, const char *id, store_fn cb, void *ud)
{
	struct call *c = mem_new(struct call);

	c->r = r;
	c->cfg = cfg;
	c->env = env;
	snprintf(c->account, sizeof(c->account), "%s", account ? account : "");
	snprintf(c->id, sizeof(c->id), "%s", id ? id : "");
	if (id && valid_id(id))
		ks_bank_key(c->key, sizeof(c->key), cfg->prefix, ks_shard_of(id), id);
	c->cb = cb;
	c->ud = ud;
	return c;
}

static void call_free(struct call *c)
{
	if (c->ids)
		freeReplyObject(c->ids);
	if (c->g)
		yajl_gen_free(c->g);
	if (c->json) {
		mem_wipe(c->json, strlen(c->json));
		free(c->json);
	}
	free(c);
}

/* Whether HGETALL reply `h` is a connection `c` may see: of its
 * environment, and of its account unless that is "". */
static int visible(const struct call *c, const redisReply *h)
{
	const char *env = rds_hash_field(h, "env"), *account = rds_hash_field(h, "account");

	return env && account && strcmp(env, env_name(c->env)) == 0 &&
	       (!c->account[0] || strcmp(account, c->account) == 0);
}

/* ---- connect ---- */

static void on_env_indexed(void *ud, redisReply *reply, const char *err)
{
	struct call *c = ud;

	/* the environment's index serves listings only: the connection exists
	 * and works whatever this answer was */
	c->cb(c->ud, 0, c->json, NULL);
	call_free(c);
}

static void on_connected(void *ud, redisReply *reply, const char *err)
{
	struct call *c = ud;
	const char *what;

	if (err || reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 ||
	    reply->element[0]->type != REDIS_REPLY_STRING) {
		c->cb(c->ud, -1, NULL, err ? err : "unexpected reply from bank_connect");
		goto done;
	}
	what = reply->element[0]->str;
	if (strcmp(what, "created") == 0) {
		char idx[KS_KEY_MAX], score[32];
		const char *argv[4] = {"ZADD", idx, score, c->id};

		ks_env_banks_key(idx, sizeof(idx), c->cfg->prefix, c->env);
		snprintf(score, sizeof(score), "%llu", (unsigned long long)ids_now_ms());
		rds_cmd_argv(c->r, on_env_indexed, c, 4, argv, NULL);
		return;
	}
	if (strcmp(what, "no_account") == 0)
		c->cb(c->ud, BANKS_NO_ACCOUNT, NULL, NULL);
	else if (strcmp(what, "limit") == 0)
		c->cb(c->ud, BANKS_LIMIT, NULL, NULL);
	else if (strcmp(what, "key_taken") == 0 && reply->elements == 2 &&
		 reply->element[1]->type == REDIS_REPLY_STRING)
		c->cb(c->ud, BANKS_KEY_TAKEN, reply->element[1]->str, NULL);
	else
		c->cb(c->ud, -1, NULL, "unexpected reply from bank_connect");
done:
	call_free(c);
}

void banks_connect(struct rds *r, const struct config *cfg, enum env env, const char *account,
		   const char *pix_key, enum banks_auth auth, const char *client_ca, store_fn cb,
		   void *ud)
{
	struct call *c = call_new(r, cfg, env, account, NULL, cb, ud);
	int shard = ks_shard_of(account);
	char idx[KS_KEY_MAX], acct[KS_KEY_MAX], kp[KS_KEY_MAX], created[32];
	char max[16], token[BANKS_TOKEN_LEN + 1] = "", sha[65] = "";
	struct fields f;
	yajl_gen g;

	if (shard < 0 || strlen(account) != IDS_ULID_LEN) {
		cb(ud, BANKS_NO_ACCOUNT, NULL, NULL);
		call_free(c);
		return;
	}
	memcpy(c->id, "bnk_", 4);
	ks_ulid(shard, c->id + 4);
	ks_bank_key(c->key, sizeof(c->key), cfg->prefix, shard, c->id);
	ks_bank_index_key(idx, sizeof(idx), cfg->prefix, shard, account);
	ks_account_key(acct, sizeof(acct), cfg->prefix, env, account);
	ks_bank_key_prefix(kp, sizeof(kp), cfg->prefix, shard);
	snprintf(created, sizeof(created), "%llu", (unsigned long long)ids_now_ms());
	snprintf(max, sizeof(max), "%d", BANKS_PER_ACCOUNT);
	if (auth == BANKS_URL_TOKEN) {
		ids_base62(token, BANKS_TOKEN_LEN);
		token[BANKS_TOKEN_LEN] = '\0';
		ids_sha256_hex(sha, token, BANKS_TOKEN_LEN);
		client_ca = "";
	}
	f = (struct fields){c->id,   account,	      env_name(env),
			    pix_key, auth_name(auth), client_ca ? client_ca : "",
			    created};
	g = json_gen_new();
	render(g, cfg, &f, auth == BANKS_URL_TOKEN ? token : NULL);
	c->json = gen_take(g);
	mem_wipe(token, sizeof(token));
	{
		const char *argv[13] = {c->key,	     idx,	    acct,    c->id,
					account,     env_name(env), pix_key, auth_name(auth),
					f.client_ca, sha,	    created, max,
					kp};
		rds_script(r, on_connected, c, SCRIPT_BANK_CONNECT, 3, 13, argv, NULL);
	}
}

/* ---- read ---- */

static void on_conn(void *ud, redisReply *reply, const char *err)
{
	struct call *c = ud;
	struct banks_conn conn;
	struct fields f;

	if (err) {
		c->conn_cb(c->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0) {
		c->conn_cb(c->ud, BANKS_NOT_FOUND, NULL, NULL);
		goto done;
	}
	fields_of(reply, &f);
	memset(&conn, 0, sizeof(conn));
	if (strcmp(f.id, c->id) != 0 || env_parse(f.env, &conn.env) < 0) {
		c->conn_cb(c->ud, BANKS_NOT_FOUND, NULL, NULL);
		goto done;
	}
	snprintf(conn.id, sizeof(conn.id), "%s", f.id);
	snprintf(conn.account, sizeof(conn.account), "%s", f.account);
	conn.auth = strcmp(f.auth, "url-token") == 0 ? BANKS_URL_TOKEN : BANKS_MTLS;
	conn.pix_key = mem_strdup(f.pix_key);
	conn.client_ca = f.client_ca[0] ? mem_strdup(f.client_ca) : NULL;
	snprintf(conn.token_sha, sizeof(conn.token_sha), "%s",
		 or_empty(rds_hash_field(reply, "token_sha")));
	conn.created_ms = strtoll(f.created_ms, NULL, 10);
	c->conn_cb(c->ud, 0, &conn, NULL);
	banks_conn_deinit(&conn);
done:
	call_free(c);
}

void banks_get(struct rds *r, const struct config *cfg, const char *id, banks_conn_fn cb, void *ud)
{
	struct call *c;
	const char *argv[2];

	if (!valid_id(id)) {
		cb(ud, BANKS_NOT_FOUND, NULL, NULL);
		return;
	}
	c = call_new(r, cfg, ENV_SANDBOX, "", id, NULL, NULL);
	c->conn_cb = cb;
	c->ud = ud;
	argv[0] = "HGETALL";
	argv[1] = c->key;
	rds_cmd_argv(r, on_conn, c, 2, argv, NULL);
}

static void on_show(void *ud, redisReply *reply, const char *err)
{
	struct call *c = ud;
	struct fields f;
	yajl_gen g;
	char *json;

	if (err) {
		c->cb(c->ud, -1, NULL, err);
	} else if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0 || !visible(c, reply)) {
		c->cb(c->ud, BANKS_NOT_FOUND, NULL, NULL);
	} else {
		fields_of(reply, &f);
		g = json_gen_new();
		render(g, c->cfg, &f, NULL);
		json = gen_take(g);
		c->cb(c->ud, 0, json, NULL);
		free(json);
	}
	call_free(c);
}

void banks_show(struct rds *r, const struct config *cfg, enum env env, const char *account,
		const char *id, store_fn cb, void *ud)
{
	struct call *c;
	const char *argv[2];

	if (!valid_id(id)) {
		cb(ud, BANKS_NOT_FOUND, NULL, NULL);
		return;
	}
	c = call_new(r, cfg, env, account, id, cb, ud);
	argv[0] = "HGETALL";
	argv[1] = c->key;
	rds_cmd_argv(r, on_show, c, 2, argv, NULL);
}

/* ---- list ---- */

static void list_next(struct call *c);

static void on_list_item(void *ud, redisReply *reply, const char *err)
{
	struct call *c = ud;
	struct fields f;

	if (err) {
		c->cb(c->ud, -1, NULL, err);
		call_free(c);
		return;
	}
	/* one disconnected meanwhile, or of another account: left out */
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements > 0 && visible(c, reply)) {
		fields_of(reply, &f);
		render(c->g, c->cfg, &f, NULL);
	}
	list_next(c);
}

/* Read the connections one after another (each in its own shard), then
 * answer. */
static void list_next(struct call *c)
{
	size_t len;
	const char *s;

	while (c->next < c->ids->elements) {
		const redisReply *e = c->ids->element[c->next++];
		const char *argv[2] = {"HGETALL", c->key};

		if (e->type != REDIS_REPLY_STRING || !valid_id(e->str))
			continue;
		ks_bank_key(c->key, sizeof(c->key), c->cfg->prefix, ks_shard_of(e->str), e->str);
		rds_cmd_argv(c->r, on_list_item, c, 2, argv, NULL);
		return;
	}
	json_close_array(c->g);
	json_close(c->g);
	s = json_buf(c->g, &len);
	c->json = mem_strndup(s, len);
	c->cb(c->ud, 0, c->json, NULL);
	call_free(c);
}

static void on_list_ids(void *ud, redisReply *reply, const char *err)
{
	struct call *c = ud;

	if (err || reply->type != REDIS_REPLY_ARRAY) {
		c->cb(c->ud, -1, NULL, err ? err : "unexpected reply listing bank connections");
		call_free(c);
		return;
	}
	c->ids = rds_reply_copy(reply);
	c->g = json_gen_new();
	json_open(c->g);
	json_str(c->g, "connections");
	json_open_array(c->g);
	list_next(c);
}

void banks_list(struct rds *r, const struct config *cfg, enum env env, const char *account,
		store_fn cb, void *ud)
{
	struct call *c = call_new(r, cfg, env, account, NULL, cb, ud);
	char idx[KS_KEY_MAX], last[16];
	const char *argv[4] = {"ZREVRANGE", idx, "0", last};

	if (account[0]) {
		if (ks_bank_index_key(idx, sizeof(idx), cfg->prefix, ks_shard_of(account),
				      account) < 0) {
			cb(ud, 0, "{\"connections\":[]}", NULL);
			call_free(c);
			return;
		}
	} else {
		ks_env_banks_key(idx, sizeof(idx), cfg->prefix, env);
	}
	snprintf(last, sizeof(last), "%d", LIST_MAX - 1);
	rds_cmd_argv(r, on_list_ids, c, 4, argv, NULL);
}

/* ---- disconnect ---- */

static void on_env_unindexed(void *ud, redisReply *reply, const char *err)
{
	struct call *c = ud;

	c->cb(c->ud, 0, c->json, NULL);
	call_free(c);
}

static void on_disconnected(void *ud, redisReply *reply, const char *err)
{
	struct call *c = ud;
	char idx[KS_KEY_MAX];
	const char *argv[3] = {"ZREM", idx, c->id};

	if (err || reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 ||
	    reply->element[0]->type != REDIS_REPLY_STRING) {
		c->cb(c->ud, -1, NULL, err ? err : "unexpected reply from bank_disconnect");
		call_free(c);
		return;
	}
	if (strcmp(reply->element[0]->str, "ok") != 0) {
		c->cb(c->ud, BANKS_NOT_FOUND, NULL, NULL);
		call_free(c);
		return;
	}
	c->json = mem_printf("{\"id\":\"%s\",\"disconnected\":true}", c->id);
	ks_env_banks_key(idx, sizeof(idx), c->cfg->prefix, c->env);
	rds_cmd_argv(c->r, on_env_unindexed, c, 3, argv, NULL);
}

void banks_disconnect(struct rds *r, const struct config *cfg, enum env env, const char *account,
		      const char *id, store_fn cb, void *ud)
{
	struct call *c;
	char sp[KS_PREFIX_MAX];

	if (!valid_id(id)) {
		cb(ud, BANKS_NOT_FOUND, NULL, NULL);
		return;
	}
	c = call_new(r, cfg, env, account, id, cb, ud);
	ks_shard_prefix(sp, sizeof(sp), cfg->prefix, ks_shard_of(id));
	{
		const char *argv[5] = {c->key, c->id, env_name(env), c->account, sp};
		rds_script(r, on_disconnected, c, SCRIPT_BANK_DISCONNECT, 1, 5, argv, NULL);
	}
}

/* ---- the log ---- */

static void on_log(void *ud, redisReply *reply, const char *err)
{
	struct call *c = ud;
	yajl_gen g;
	char *json;

	if (err || reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
	    reply->element[0]->type != REDIS_REPLY_ARRAY ||
	    reply->element[1]->type != REDIS_REPLY_ARRAY) {
		c->cb(c->ud, -1, NULL, err ? err : "unexpected reply reading a bank log");
		goto done;
	}
	if (reply->element[0]->elements == 0 || !visible(c, reply->element[0])) {
		c->cb(c->ud, BANKS_NOT_FOUND, NULL, NULL);
		goto done;
	}
	g = json_gen_new();
	json_open(g);
	json_str(g, "notifications");
	json_open_array(g);
	/* each entry was written by bank_pix as a JSON object */
	for (size_t i = 0; i < reply->element[1]->elements; i++) {
		const redisReply *e = reply->element[1]->element[i];
		if (e->type == REDIS_REPLY_STRING && e->len > 1 && e->str[0] == '{')
			json_raw(g, e->str, e->len);
	}
	json_close_array(g);
	json_close(g);
	json = gen_take(g);
	c->cb(c->ud, 0, json, NULL);
	free(json);
done:
	call_free(c);
}

void banks_log(struct rds *r, const struct config *cfg, enum env env, const char *account,
	       const char *id, int limit, store_fn cb, void *ud)
{
	struct call *c;
	char lk[KS_KEY_MAX], last[16];

	if (!valid_id(id)) {
		cb(ud, BANKS_NOT_FOUND, NULL, NULL);
		return;
	}
	c = call_new(r, cfg, env, account, id, cb, ud);
	ks_bank_log_key(lk, sizeof(lk), cfg->prefix, ks_shard_of(id), id);
	snprintf(last, sizeof(last), "%d",
		 (limit < 1		  ? 1
		  : limit > BANKS_LOG_MAX ? BANKS_LOG_MAX
					  : limit) -
		     1);
	{
		const char *argv[] = {c->key, lk, "0", last};
		rds_script(r, on_log, c, SCRIPT_BANK_LOG, 2, 4, argv, NULL);
	}
}

/* ---- receiving ---- */

/* One bank call: its connection, its answer, and how many of its items
 * are still to be written. */
struct request {
	struct banks_conn conn;
	char source[16];
	struct bankpix_batch batch;
	store_fn cb;
	void *ud;
	unsigned waiting;
	int failed;
	char err[256];
	/* per Pix: outcome, reason, event, charge (owned) */
	char *(*results)[4];
	size_t accepted, duplicates;
	struct banks_queue *q;
};

/* A Pix of a request, or one of its refusals, waiting for its shard's call. */
struct item {
	struct shardq_item link; /* first */
	struct request *req;
	size_t index; /* in batch.items, or in batch.refused */
	int refusal;  /* 1: batch.refused[index] */
	char evt[EVENT_ID_MAX];
	char (*revt)[EVENT_ID_MAX]; /* one per refund */
};

struct banks_queue {
	struct rds *r;
	const struct config *cfg;
	struct shardq *q;
};

static void request_free(struct request *rq)
{
	for (size_t i = 0; rq->results && i < rq->batch.n; i++)
		for (int j = 0; j < 4; j++)
			free(rq->results[i][j]);
	free(rq->results);
	bankpix_batch_deinit(&rq->batch);
	banks_conn_deinit(&rq->conn);
	free(rq);
}

/* The answer to the bank once every item is written. */
static void request_finish(struct request *rq)
{
	yajl_gen g;
	char *json;

	if (rq->failed) {
		rq->cb(rq->ud, -1, NULL, rq->err);
		request_free(rq);
		return;
	}
	g = json_gen_new();
	json_open(g);
	json_str(g, "received");
	json_int(g, (long long)(rq->batch.n + rq->batch.nrefused));
	json_str(g, "accepted");
	json_int(g, (long long)rq->accepted);
	json_str(g, "duplicates");
	json_int(g, (long long)rq->duplicates);
	json_str(g, "refused");
	json_open_array(g);
	for (size_t i = 0; i < rq->batch.nrefused; i++) {
		const struct bankpix_refusal *f = &rq->batch.refused[i];
		json_open(g);
		json_str(g, "index");
		json_int(g, (long long)f->index);
		json_str(g, "endToEndId");
		json_str_or_null(g, f->e2e[0] ? f->e2e : NULL);
		json_str(g, "error");
		json_str(g, f->err);
		json_close(g);
	}
	json_close_array(g);
	json_str(g, "pix");
	json_open_array(g);
	for (size_t i = 0; i < rq->batch.n; i++) {
		static const char *const names[4] = {"outcome", "reason", "event", "charge"};
		json_open(g);
		json_str(g, "endToEndId");
		json_str(g, rq->batch.items[i].e2e);
		for (int j = 0; j < 4; j++) {
			json_str(g, names[j]);
			json_str_or_null(g, rq->results[i][j] && rq->results[i][j][0]
						? rq->results[i][j]
						: NULL);
		}
		json_close(g);
	}
	json_close_array(g);
	json_close(g);
	json = gen_take(g);
	rq->cb(rq->ud, 0, json, NULL);
	free(json);
	request_free(rq);
}

static void item_done(struct item *it)
{
	struct request *rq = it->req;

	free(it->revt);
	free(it);
	if (--rq->waiting == 0)
		request_finish(rq);
}

static void item_fail(struct item *it, const char *err)
{
	if (!it->req->failed) {
		it->req->failed = 1;
		snprintf(it->req->err, sizeof(it->req->err), "%s", err);
	}
	item_done(it);
}

static void drop(void *owner, struct shardq_item *link)
{
	item_fail((struct item *)link, "redis client closed");
}

/* The day of a moment in Brasilia time, "YYYY-MM-DD". */
static void brasilia_day(char out[11], long long ms)
{
	char t[TIMEFMT_LEN + 1];

	timefmt_format(t, (uint64_t)(ms > BRASILIA_OFFSET_MS ? ms - BRASILIA_OFFSET_MS : 0));
	memcpy(out, t, 10);
	out[10] = '\0';
}

/* One call's items and the strings their arguments point to. */
struct batch {
	struct banks_queue *q;
	struct item **items;
	unsigned n;
	char **own; /* strings to free with the batch */
	size_t nown, capown;
};

static const char *own(struct batch *b, char *s)
{
	if (b->nown == b->capown) {
		b->capown = b->capown ? 2 * b->capown : 64;
		b->own = mem_realloc(b->own, b->capown * sizeof(*b->own));
	}
	b->own[b->nown++] = s;
	return s;
}

static void batch_free(struct batch *b)
{
	for (size_t i = 0; i < b->nown; i++)
		free(b->own[i]);
	free(b->own);
	free(b->items);
	free(b);
}

static void take(char **slot, const redisReply *e)
{
	*slot = mem_strdup(e->type == REDIS_REPLY_STRING ? e->str : "");
}

static void on_batch(void *ud, redisReply *reply, const char *err)
{
	struct batch *b = ud;
	size_t at = 0, want = 0;

	for (unsigned i = 0; i < b->n; i++)
		if (!b->items[i]->refusal)
			want += 4 + 2 * b->items[i]->req->batch.items[b->items[i]->index].nrefunds;
	if (!err && (reply->type != REDIS_REPLY_ARRAY || reply->elements != want))
		err = "unexpected reply from bank_pix";
	for (unsigned i = 0; i < b->n; i++) {
		struct item *it = b->items[i];
		struct request *rq = it->req;

		if (err) {
			item_fail(it, err);
			continue;
		}
		if (it->refusal) {
			metrics_bank_pix(it->req->source, "refused");
			item_done(it);
			continue;
		}
		for (int j = 0; j < 4; j++)
			take(&rq->results[it->index][j], reply->element[at + (size_t)j]);
		if (strcmp(rq->results[it->index][0], "duplicate") == 0) {
			rq->duplicates++;
			metrics_bank_pix(rq->source, "duplicate");
		} else {
			rq->accepted++;
			metrics_bank_pix(rq->source, strcmp(rq->results[it->index][0], "paid") == 0
							 ? "paid"
							 : rq->results[it->index][1]);
		}
		at += 4 + 2 * rq->batch.items[it->index].nrefunds;
		item_done(it);
	}
	batch_free(b);
}

static void send_batch(void *owner, int shard, struct shardq_item **links, unsigned n)
{
	struct banks_queue *q = owner;
	struct batch *b = mem_new(struct batch);
	char sp[KS_PREFIX_MAX], key[KS_KEY_MAX], now[32], now_txt[TIMEFMT_LEN + 1], ttl[32];
	char *npix, *nref;
	const char **argv;
	size_t argc = 7, cap = 7, a; /* the key and ARGV[1..6] */
	uint64_t ms = ids_now_ms();
	unsigned pix = 0, refused = 0;

	b->q = q;
	b->items = (struct item **)links;
	b->n = n;
	for (unsigned i = 0; i < n; i++) {
		struct item *it = b->items[i];
		if (it->refusal) {
			refused++;
			cap += 6;
		} else {
			pix++;
			cap += 15 + 5 * it->req->batch.items[it->index].nrefunds;
		}
	}
	argv = mem_calloc(cap, sizeof(*argv));
	ks_shard_prefix(sp, sizeof(sp), q->cfg->prefix, shard);
	ks_bank_pix_key(key, sizeof(key), q->cfg->prefix, shard);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ms);
	timefmt_format(now_txt, ms);
	snprintf(ttl, sizeof(ttl), "%ld", q->cfg->event_retention_days * 86400);
	npix = mem_printf("%u", pix);
	nref = mem_printf("%u", refused);
	argv[0] = key;
	argv[1] = sp;
	argv[2] = now;
	argv[3] = now_txt;
	argv[4] = ttl;
	argv[5] = own(b, npix);
	argv[6] = own(b, nref);
	a = 7;
	argc = 7;
	for (unsigned i = 0; i < n; i++) {
		struct item *it = b->items[i];
		const struct request *rq = it->req;
		const struct bankpix *p;
		char day[11], cid[27] = "";
		int64_t refunded = 0;

		if (it->refusal)
			continue;
		p = &rq->batch.items[it->index];
		brasilia_day(day, p->horario_ms);
		if (p->txid[0] && bankpix_charge_of_txid(p->txid, cid) == 0 &&
		    ks_shard_of(cid) != ks_shard_of(rq->conn.account))
			cid[0] = '\0';
		for (size_t j = 0; j < p->nrefunds; j++)
			if (p->refunds[j].status == BANKPIX_DEVOLVIDO)
				refunded += p->refunds[j].cents;
		argv[a++] = rq->conn.id;
		argv[a++] = rq->conn.account;
		argv[a++] = env_name(rq->conn.env);
		argv[a++] = rq->source;
		argv[a++] = own(b, mem_strdup(day));
		argv[a++] = p->e2e;
		argv[a++] = p->txid;
		argv[a++] = own(b, mem_strdup(cid));
		argv[a++] = own(b, mem_printf("%lld", (long long)p->cents));
		argv[a++] = own(b, mem_printf("%lld", p->horario_ms));
		argv[a++] = p->json;
		/* what a charge it pays keeps: the Pix, with where it came from */
		argv[a++] = own(b, mem_printf("{\"connection\":\"%s\",\"source\":\"%s\",%s",
					      rq->conn.id, rq->source, p->json + 1));
		argv[a++] = it->evt;
		argv[a++] = own(b, mem_printf("%lld", (long long)refunded));
		argv[a++] = own(b, mem_printf("%zu", p->nrefunds));
		for (size_t j = 0; j < p->nrefunds; j++) {
			argv[a++] = p->refunds[j].id;
			argv[a++] = bankpix_refund_status_name(p->refunds[j].status);
			argv[a++] = own(b, mem_printf("%lld", (long long)p->refunds[j].cents));
			argv[a++] = it->revt[j];
			argv[a++] = p->refunds[j].json;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		struct item *it = b->items[i];
		const struct bankpix_refusal *f;
		char day[11];

		if (!it->refusal)
			continue;
		f = &it->req->batch.refused[it->index];
		brasilia_day(day, (long long)ms);
		argv[a++] = it->req->conn.id;
		argv[a++] = it->req->source;
		argv[a++] = own(b, mem_strdup(day));
		argv[a++] = own(b, mem_printf("%zu", f->index));
		argv[a++] = f->e2e;
		argv[a++] = f->err;
	}
	argc = a;
	rds_script(q->r, on_batch, b, SCRIPT_BANK_PIX, 1, (int)argc, argv, NULL);
	free(argv);
}

struct banks_queue *banks_queue_new(struct event_base *base, struct rds *r,
				    const struct config *cfg)
{
	struct banks_queue *q = mem_new(struct banks_queue);

	q->r = r;
	q->cfg = cfg;
	q->q = shardq_new(base, BATCH_MAX, send_batch, drop, q);
	return q;
}

void banks_queue_free(struct banks_queue *q)
{
	if (!q)
		return;
	shardq_free(q->q);
	free(q);
}

void banks_receive(struct banks_queue *q, const struct banks_conn *c, const char *source,
		   struct bankpix_batch *b, store_fn cb, void *ud)
{
	struct request *rq;
	int shard = ks_shard_of(c->id);

	if (shard < 0) {
		cb(ud, -1, NULL, "the connection id names no shard");
		bankpix_batch_deinit(b);
		return;
	}
	rq = mem_new(struct request);
	rq->q = q;
	rq->cb = cb;
	rq->ud = ud;
	rq->conn = *c;
	rq->conn.pix_key = mem_strdup(c->pix_key ? c->pix_key : "");
	rq->conn.client_ca = NULL;
	snprintf(rq->source, sizeof(rq->source), "%s", source);
	rq->batch = *b;
	memset(b, 0, sizeof(*b));
	rq->results = rq->batch.n ? mem_calloc(rq->batch.n, sizeof(*rq->results)) : NULL;
	rq->waiting = (unsigned)(rq->batch.n + rq->batch.nrefused);
	if (rq->waiting == 0) {
		request_finish(rq);
		return;
	}
	for (size_t i = 0; i < rq->batch.n + rq->batch.nrefused; i++) {
		struct item *it = mem_new(struct item);

		it->req = rq;
		it->refusal = i >= rq->batch.n;
		it->index = it->refusal ? i - rq->batch.n : i;
		if (!it->refusal) {
			const struct bankpix *p = &rq->batch.items[it->index];

			ks_event_id(shard, it->evt);
			if (p->nrefunds) {
				it->revt = mem_calloc(p->nrefunds, sizeof(*it->revt));
				for (size_t j = 0; j < p->nrefunds; j++)
					ks_event_id(shard, it->revt[j]);
			}
		}
		shardq_add(q->q, shard, &it->link);
	}
}
