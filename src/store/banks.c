/* banks: the store of bank connections: connect, read, list, update
 * (trust and default), disconnect, the log of what each heard, the API
 * credentials and a new URL token.
 * A connection as JSON is banks_render.c's; its record's helpers (the
 * credentials opened) banks_conn.c's; writing what the banks report is
 * banks_receive.c's; what a bank holds as a connection's webhook is
 * banks_webhook.c's; parsing a bank's body is bankpix's (pix floor);
 * authenticating a bank's call is the API's (api_banks.c, through
 * banks_view.c). */
#include "banks_int.h"

#include "pixrelay/store/banks_webhook.h"

#include "pixrelay/core/certcheck.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/seal.h"
#include "pixrelay/pix/bankcreds.h"
#include "pixrelay/pix/bankpix.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/pix/keyspace.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LIST_MAX 1000 /* connections in one listing */

static const char *auth_name(enum banks_auth a)
{
	return a == BANKS_URL_TOKEN ? "url-token" : "mtls";
}

enum banks_auth banks_auth_of(const char *name)
{
	if (strcmp(name, "url-token") == 0)
		return BANKS_URL_TOKEN;
	if (strcmp(name, "mtls") == 0 || !name[0])
		return BANKS_MTLS;
	return BANKS_PROVIDER;
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

/* True when s is 1..max ASCII digits. */
static bool digits(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

int banks_check_recebedor(const struct banks_recebedor *r, char *err, size_t errlen)
{
	static const char *const types[] = {"CORRENTE", "POUPANCA", "PAGAMENTO"};
	bool typed = false;

	if (!r->conta || !r->conta[0]) {
		if ((r->agencia && r->agencia[0]) || (r->tipo_conta && r->tipo_conta[0])) {
			snprintf(err, errlen, "conta: is required with agencia and tipoConta");
			return -1;
		}
		return 0;
	}
	if (!digits(r->conta, BANKS_CONTA_MAX)) {
		snprintf(err, errlen,
			 "conta: must be 1 to %d digits (the account with its check "
			 "digit, as the bank writes it)",
			 BANKS_CONTA_MAX);
		return -1;
	}
	if (r->agencia && r->agencia[0] && !digits(r->agencia, BANKS_AGENCIA_MAX)) {
		snprintf(err, errlen, "agencia: must be 1 to %d digits", BANKS_AGENCIA_MAX);
		return -1;
	}
	for (size_t i = 0; r->tipo_conta && i < 3; i++)
		typed = typed || strcmp(r->tipo_conta, types[i]) == 0;
	if (!typed) {
		snprintf(err, errlen, "tipoConta: must be CORRENTE, POUPANCA or PAGAMENTO");
		return -1;
	}
	return 0;
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
	if (id && banks_id_valid(id))
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
static bool visible(const struct call *c, const redisReply *h)
{
	const char *env = rds_hash_field(h, "env"), *account = rds_hash_field(h, "account");

	return env && account && strcmp(env, env_name(c->env)) == 0 &&
	       (!c->account[0] || strcmp(account, c->account) == 0);
}

/* The tag that opens a script's answer {'<tag>', ...}: its index among the
 * n `tags`, or -1 when the answer opens with none of them. */
static int answer_tag(const redisReply *reply, const char *const *tags, int n)
{
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 ||
	    reply->element[0]->type != REDIS_REPLY_STRING)
		return -1;
	for (int i = 0; i < n; i++)
		if (strcmp(reply->element[0]->str, tags[i]) == 0)
			return i;
	return -1;
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
	enum { CREATED, NO_ACCOUNT, LIMIT, KEY_TAKEN };
	static const char *const tags[] = {"created", "no_account", "limit", "key_taken"};
	struct call *c = ud;
	int tag = err ? -1 : answer_tag(reply, tags, 4);

	if (tag == CREATED) {
		char idx[KS_KEY_MAX], score[32];
		const char *argv[4] = {"ZADD", idx, score, c->id};

		ks_env_banks_key(idx, sizeof(idx), c->cfg->prefix, c->env);
		snprintf(score, sizeof(score), "%llu", (unsigned long long)ids_now_ms());
		rds_cmd_argv(c->r, on_env_indexed, c, 4, argv, NULL);
		return;
	}
	if (tag == NO_ACCOUNT)
		c->cb(c->ud, BANKS_NO_ACCOUNT, NULL, NULL);
	else if (tag == LIMIT)
		c->cb(c->ud, BANKS_LIMIT, NULL, NULL);
	else if (tag == KEY_TAKEN && reply->elements == 2 &&
		 reply->element[1]->type == REDIS_REPLY_STRING)
		c->cb(c->ud, BANKS_KEY_TAKEN, reply->element[1]->str, NULL);
	else
		c->cb(c->ud, -1, NULL, err ? err : "unexpected reply from bank_connect");
	call_free(c);
}

void banks_connect(struct rds *r, const struct config *cfg, enum env env, const char *account,
		   const char *pix_key, enum banks_auth auth, const struct banks_trust *trust,
		   const struct banks_recebedor *rcv, int make_default,
		   const struct banks_provider_conn *prov, store_fn cb, void *ud)
{
	const struct banks_trust none = {NULL, NULL, NULL};
	struct call *c = call_new(r, cfg, env, account, NULL, cb, ud);
	int shard = ks_shard_of(account);
	char idx[KS_KEY_MAX], acct[KS_KEY_MAX], kp[KS_KEY_MAX], created[32];
	char sp[KS_PREFIX_MAX], channel[KS_KEY_MAX], name[80];
	char max[16], token[BANKS_TOKEN_LEN + 1] = "", sha[65] = "";
	char *token_sealed = NULL, *priv_sealed = NULL, *secret_sealed = NULL;
	const char *api_url = "", *api_at = "";
	struct banks_fields f;
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
	if (prov) {
		/* a provider's own scheme; its API token and sandbox key sealed
		 * to this connection's fields */
		auth = BANKS_PROVIDER;
		trust = &none;
		if (prov->api_token) {
			banks_sealed_name(name, sizeof(name), c->id, "api_token");
			token_sealed =
			    seal(prov->key, name, prov->api_token, strlen(prov->api_token));
			api_url = prov->api_url;
			api_at = created;
		}
		if (prov->private_key) {
			banks_sealed_name(name, sizeof(name), c->id, "prov_priv");
			priv_sealed =
			    seal(prov->key, name, prov->private_key, strlen(prov->private_key));
		}
		if (prov->webhook_secret) {
			/* checked as its digest, as a URL token is; sealed for
			 * register-webhook and trigger */
			ids_sha256_hex(sha, prov->webhook_secret, strlen(prov->webhook_secret));
			banks_sealed_name(name, sizeof(name), c->id, "webhook_secret");
			secret_sealed = seal(prov->key, name, prov->webhook_secret,
					     strlen(prov->webhook_secret));
		}
	} else if (auth == BANKS_URL_TOKEN) {
		banks_make_token(token);
		ids_sha256_hex(sha, token, BANKS_TOKEN_LEN);
		trust = &none;
	}
	f = (struct banks_fields){
	    .id = c->id,
	    .account = account,
	    .env = env_name(env),
	    .provider = provider_name(prov ? prov->provider : PROVIDER_API_PIX),
	    .pix_key = pix_key,
	    .auth = !prov ? auth_name(auth)
		    : prov->provider == PROVIDER_MERCADOPAGO && !prov->webhook_secret
			/* QR-code integrations: unsigned, the fetch only */
			? "mp-fetch"
			: provider_auth(prov->provider),
	    .client_ca = banks_or_empty(trust->client_ca),
	    .client_subject = banks_or_empty(trust->subject),
	    .client_pins = banks_or_empty(trust->pins),
	    .is_default = make_default ? "1" : "",
	    .created_ms = created,
	    .last_call_ms = "",
	    .api_url = api_url,
	    .token_url = "",
	    .client_id = "",
	    .cert = "",
	    .bank_ca = prov ? banks_or_empty(prov->server_ca) : "",
	    .api_header_names = "",
	    .api_query_names = "",
	    .prov_keys = prov ? banks_or_empty(prov->public_keys) : "",
	    .prov_own = prov ? banks_or_empty(prov->own_public_key) : "",
	    .rcv_agencia = rcv ? banks_or_empty(rcv->agencia) : "",
	    .rcv_conta = rcv ? banks_or_empty(rcv->conta) : "",
	    .rcv_tipo = rcv ? banks_or_empty(rcv->tipo_conta) : ""};
	banks_fields_blank(&f);
	g = json_gen_new();
	banks_render(g, cfg, &f, auth == BANKS_URL_TOKEN ? token : NULL);
	c->json = json_take(g);
	mem_wipe(token, sizeof(token));
	ks_shard_prefix(sp, sizeof(sp), cfg->prefix, shard);
	ks_invalidation_channel(channel, sizeof(channel), cfg->prefix);
	{
		const char *argv[] = {c->key,
				      idx,
				      acct,
				      c->id,
				      account,
				      env_name(env),
				      pix_key,
				      f.auth,
				      f.client_ca,
				      sha,
				      created,
				      max,
				      kp,
				      f.client_subject,
				      f.client_pins,
				      f.is_default,
				      sp,
				      channel,
				      "rcv_agencia",
				      f.rcv_agencia,
				      "rcv_conta",
				      f.rcv_conta,
				      "rcv_tipo",
				      f.rcv_tipo,
				      "provider",
				      prov ? f.provider : "",
				      "api_url",
				      api_url,
				      "api_at",
				      api_at,
				      "api_token",
				      token_sealed ? token_sealed : "",
				      "bank_ca",
				      f.bank_ca,
				      "prov_keys",
				      f.prov_keys,
				      "prov_priv",
				      priv_sealed ? priv_sealed : "",
				      "prov_own",
				      prov ? banks_or_empty(prov->own_public_key) : "",
				      "webhook_secret",
				      secret_sealed ? secret_sealed : ""};

		rds_script(r, on_connected, c, SCRIPT_BANK_CONNECT, 3,
			   (int)(sizeof(argv) / sizeof(argv[0])), argv, NULL);
	}
	free(token_sealed);
	free(priv_sealed);
	free(secret_sealed);
}

/* ---- read ---- */

/* A field of HGETALL reply `h` that is there and not "", copied; else NULL. */
static char *dup_field(const redisReply *h, const char *name)
{
	const char *v = rds_hash_field(h, name);

	return v && v[0] ? mem_strdup(v) : NULL;
}

static void on_conn(void *ud, redisReply *reply, const char *err)
{
	struct call *c = ud;
	struct banks_conn conn;
	struct banks_fields f;

	if (err) {
		c->conn_cb(c->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0) {
		c->conn_cb(c->ud, BANKS_NOT_FOUND, NULL, NULL);
		goto done;
	}
	banks_fields_of(reply, &f);
	memset(&conn, 0, sizeof(conn));
	if (strcmp(f.id, c->id) != 0 || env_parse(f.env, &conn.env) < 0) {
		c->conn_cb(c->ud, BANKS_NOT_FOUND, NULL, NULL);
		goto done;
	}
	snprintf(conn.id, sizeof(conn.id), "%s", f.id);
	snprintf(conn.account, sizeof(conn.account), "%s", f.account);
	conn.auth = banks_auth_of(f.auth);
	if (provider_parse(f.provider, &conn.provider) < 0) {
		/* a provider this version does not know: not a connection it can serve */
		c->conn_cb(c->ud, BANKS_NOT_FOUND, NULL, NULL);
		goto done;
	}
	conn.prov_keys = dup_field(reply, "prov_keys");
	conn.prov_priv = dup_field(reply, "prov_priv");
	conn.webhook_secret = dup_field(reply, "webhook_secret");
	conn.pix_key = mem_strdup(f.pix_key);
	conn.client_ca = f.client_ca[0] ? mem_strdup(f.client_ca) : NULL;
	conn.client_subject = f.client_subject[0] ? mem_strdup(f.client_subject) : NULL;
	conn.client_pins = f.client_pins[0] ? mem_strdup(f.client_pins) : NULL;
	conn.is_default = strcmp(f.is_default, "1") == 0;
	snprintf(conn.token_sha, sizeof(conn.token_sha), "%s",
		 banks_or_empty(rds_hash_field(reply, "token_sha")));
	conn.created_ms = strtoll(f.created_ms, NULL, 10);
	conn.api_at_ms = strtoll(banks_or_empty(rds_hash_field(reply, "api_at")), NULL, 10);
	conn.rec_at_ms = strtoll(banks_or_empty(rds_hash_field(reply, "rec_at")), NULL, 10);
	conn.last_call_ms = strtoll(f.last_call_ms, NULL, 10);
	snprintf(conn.rcv.agencia, sizeof(conn.rcv.agencia), "%s", f.rcv_agencia);
	snprintf(conn.rcv.conta, sizeof(conn.rcv.conta), "%s", f.rcv_conta);
	snprintf(conn.rcv.tipo_conta, sizeof(conn.rcv.tipo_conta), "%s", f.rcv_tipo);
	if (f.api_url[0]) {
		conn.api.api_url = mem_strdup(f.api_url);
		conn.api.token_url = mem_strdup(f.token_url);
		conn.api.client_id = mem_strdup(f.client_id);
		conn.api.client_secret =
		    mem_strdup(banks_or_empty(rds_hash_field(reply, "client_secret")));
		conn.api.cert = mem_strdup(f.cert);
		conn.api.key = mem_strdup(banks_or_empty(rds_hash_field(reply, "key")));
		conn.api.bank_ca = f.bank_ca[0] ? mem_strdup(f.bank_ca) : NULL;
		conn.api.scope = f.api_scope && f.api_scope[0] ? mem_strdup(f.api_scope) : NULL;
		conn.api.headers = dup_field(reply, "api_headers");
		conn.api.query = dup_field(reply, "api_query");
		conn.api.api_token = dup_field(reply, "api_token");
		conn.api.provider = conn.provider;
	}
	c->conn_cb(c->ud, 0, &conn, NULL);
	banks_conn_deinit(&conn);
done:
	call_free(c);
}

void banks_get(struct rds *r, const struct config *cfg, const char *id, banks_conn_fn cb, void *ud)
{
	struct call *c;
	const char *argv[2];

	if (!banks_id_valid(id)) {
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
	struct banks_fields f;
	yajl_gen g;
	char *json;

	if (err) {
		c->cb(c->ud, -1, NULL, err);
	} else if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0 || !visible(c, reply)) {
		c->cb(c->ud, BANKS_NOT_FOUND, NULL, NULL);
	} else {
		banks_fields_of(reply, &f);
		g = json_gen_new();
		banks_render(g, c->cfg, &f, NULL);
		json = json_take(g);
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

	if (!banks_id_valid(id)) {
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
	struct banks_fields f;

	if (err) {
		c->cb(c->ud, -1, NULL, err);
		call_free(c);
		return;
	}
	/* one disconnected meanwhile, or of another account: left out */
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements > 0 && visible(c, reply)) {
		banks_fields_of(reply, &f);
		banks_render(c->g, c->cfg, &f, NULL);
	}
	list_next(c);
}

/* Read the connections one after another (each in its own shard), then
 * answer. */
static void list_next(struct call *c)
{
	while (c->next < c->ids->elements) {
		const redisReply *e = c->ids->element[c->next++];
		const char *argv[2] = {"HGETALL", c->key};

		if (e->type != REDIS_REPLY_STRING || !banks_id_valid(e->str))
			continue;
		ks_bank_key(c->key, sizeof(c->key), c->cfg->prefix, ks_shard_of(e->str), e->str);
		rds_cmd_argv(c->r, on_list_item, c, 2, argv, NULL);
		return;
	}
	json_close_array(c->g);
	json_close(c->g);
	c->json = json_take(c->g);
	c->g = NULL;
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
	static const char *const tags[] = {"ok", "not_found"};
	struct call *c = ud;
	char idx[KS_KEY_MAX];
	const char *argv[3] = {"ZREM", idx, c->id};
	int tag = err ? -1 : answer_tag(reply, tags, 2);

	if (tag != 0) {
		if (tag == 1)
			c->cb(c->ud, BANKS_NOT_FOUND, NULL, NULL);
		else
			c->cb(c->ud, -1, NULL, err ? err : "unexpected reply from bank_disconnect");
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
	char sp[KS_PREFIX_MAX], channel[KS_KEY_MAX];

	if (!banks_id_valid(id)) {
		cb(ud, BANKS_NOT_FOUND, NULL, NULL);
		return;
	}
	c = call_new(r, cfg, env, account, id, cb, ud);
	ks_shard_prefix(sp, sizeof(sp), cfg->prefix, ks_shard_of(id));
	ks_invalidation_channel(channel, sizeof(channel), cfg->prefix);
	{
		const char *argv[6] = {c->key, c->id, env_name(env), c->account, sp, channel};
		rds_script(r, on_disconnected, c, SCRIPT_BANK_DISCONNECT, 1, 6, argv, NULL);
	}
}

/* ---- update ---- */

static void on_updated(void *ud, redisReply *reply, const char *err)
{
	enum { OK, NOT_FOUND, NOT_MTLS };
	static const char *const tags[] = {"ok", "not_found", "not_mtls"};
	struct call *c = ud;
	int tag = err ? -1 : answer_tag(reply, tags, 3);

	if (tag == OK && reply->elements == 2 && reply->element[1]->type == REDIS_REPLY_ARRAY) {
		struct banks_fields f;
		yajl_gen g = json_gen_new();

		banks_fields_of(reply->element[1], &f);
		banks_render(g, c->cfg, &f, NULL);
		c->json = json_take(g);
		c->cb(c->ud, 0, c->json, NULL);
	} else if (tag == NOT_FOUND) {
		c->cb(c->ud, BANKS_NOT_FOUND, NULL, NULL);
	} else if (tag == NOT_MTLS) {
		c->cb(c->ud, BANKS_NOT_MTLS, NULL, NULL);
	} else {
		c->cb(c->ud, -1, NULL, err ? err : "unexpected reply from bank_update");
	}
	call_free(c);
}

void banks_update(struct rds *r, const struct config *cfg, enum env env, const char *account,
		  const char *id, const struct banks_change *change, store_fn cb, void *ud)
{
	/* the record's field of each change, its value, and whether it is
	 * for mutual TLS only */
	const struct {
		const char *field, *value;
		int mtls;
	} pairs[] = {
	    {"client_ca", change->client_ca, 1},
	    {"client_subject", change->subject, 1},
	    {"client_pins", change->pins, 1},
	    {"rcv_conta", change->recebedor ? change->recebedor->conta : NULL, 0},
	    {"rcv_agencia", change->recebedor ? banks_or_empty(change->recebedor->agencia) : NULL,
	     0},
	    {"rcv_tipo", change->recebedor ? banks_or_empty(change->recebedor->tipo_conta) : NULL,
	     0},
	};
	const char *argv[7 + 2 * sizeof(pairs) / sizeof(pairs[0])];
	char sp[KS_PREFIX_MAX], channel[KS_KEY_MAX];
	struct call *c;
	int argc = 7, mtls = 0;

	if (!banks_id_valid(id)) {
		cb(ud, BANKS_NOT_FOUND, NULL, NULL);
		return;
	}
	c = call_new(r, cfg, env, account, id, cb, ud);
	ks_shard_prefix(sp, sizeof(sp), cfg->prefix, ks_shard_of(id));
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		if (!pairs[i].value)
			continue;
		mtls |= pairs[i].mtls;
		argv[argc++] = pairs[i].field;
		argv[argc++] = pairs[i].value;
	}
	argv[0] = c->key;
	argv[1] = env_name(env);
	argv[2] = c->account;
	argv[3] = sp;
	argv[4] = change->is_default < 0 ? "" : change->is_default ? "1" : "0";
	argv[5] = mtls ? "1" : "";
	/* the account's charging connection follows its default */
	ks_invalidation_channel(channel, sizeof(channel), cfg->prefix);
	argv[6] = channel;
	rds_script(r, on_updated, c, SCRIPT_BANK_UPDATE, 1, argc, argv, NULL);
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
	json = json_take(g);
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

	if (!banks_id_valid(id)) {
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

/* ---- the bank's API credentials ---- */

static void on_credentials(void *ud, redisReply *reply, const char *err)
{
	struct call *c = ud;

	if (err || reply->type != REDIS_REPLY_ARRAY) {
		c->cb(c->ud, -1, NULL, err ? err : "unexpected reply from bank_credentials");
	} else if (reply->elements == 0) {
		c->cb(c->ud, BANKS_NOT_FOUND, NULL, NULL);
	} else {
		struct banks_fields f;
		yajl_gen g = json_gen_new();

		banks_fields_of(reply, &f);
		banks_render(g, c->cfg, &f, NULL);
		c->json = json_take(g);
		c->cb(c->ud, 0, c->json, NULL);
	}
	call_free(c);
}

void banks_set_credentials(struct rds *r, const struct config *cfg, const struct seal_key *key,
			   enum env env, const char *id, const struct bank_creds *creds,
			   store_fn cb, void *ud)
{
	struct call *c;
	char name[80], *secret, *pkey, *headers, *query, sp[KS_PREFIX_MAX], channel[KS_KEY_MAX];
	char now[24], header_names[BANK_CREDS_EXTRA_MAX * (BANK_CREDS_EXTRA_NAME_MAX + 1)];
	char query_names[BANK_CREDS_EXTRA_MAX * (BANK_CREDS_EXTRA_NAME_MAX + 1)];

	if (!banks_id_valid(id)) {
		cb(ud, BANKS_NOT_FOUND, NULL, NULL);
		return;
	}
	c = call_new(r, cfg, env, "", id, cb, ud);
	banks_sealed_name(name, sizeof(name), id, "client_secret");
	secret = seal(key, name, creds->client_secret, strlen(creds->client_secret));
	banks_sealed_name(name, sizeof(name), id, "key");
	pkey = seal(key, name, creds->key_pem, strlen(creds->key_pem));
	banks_sealed_name(name, sizeof(name), id, "api_headers");
	headers = creds->headers && *creds->headers
		      ? seal(key, name, creds->headers, strlen(creds->headers))
		      : mem_strdup("");
	banks_sealed_name(name, sizeof(name), id, "api_query");
	query = creds->query && *creds->query ? seal(key, name, creds->query, strlen(creds->query))
					      : mem_strdup("");
	bank_creds_header_names(creds, header_names, sizeof(header_names));
	bank_creds_query_names(creds, query_names, sizeof(query_names));
	ks_shard_prefix(sp, sizeof(sp), cfg->prefix, ks_shard_of(id));
	ks_invalidation_channel(channel, sizeof(channel), cfg->prefix);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ids_now_ms());
	{
		const char *argv[] = {c->key,
				      env_name(env),
				      creds->api_url,
				      creds->token_url,
				      creds->client_id,
				      secret,
				      creds->cert_pem,
				      pkey,
				      creds->bank_ca_pem ? creds->bank_ca_pem : "",
				      sp,
				      channel,
				      now,
				      creds->scope ? creds->scope : "",
				      headers,
				      query,
				      header_names,
				      query_names};
		rds_script(r, on_credentials, c, SCRIPT_BANK_CREDENTIALS, 1, 17, argv, NULL);
	}
	free(secret);
	free(pkey);
	free(headers);
	free(query);
}

/* ---- a new URL token ---- */

void banks_make_token(char out[BANKS_TOKEN_LEN + 1])
{
	ids_base62(out, BANKS_TOKEN_LEN);
	out[BANKS_TOKEN_LEN] = '\0';
}

struct set_token {
	store_fn cb;
	void *ud;
};

static void on_set_token(void *ud, redisReply *reply, const char *err)
{
	struct set_token *t = ud;

	if (err || reply->type != REDIS_REPLY_INTEGER)
		t->cb(t->ud, -1, NULL, err ? err : "unexpected reply setting a URL token");
	else if (reply->integer == 0)
		t->cb(t->ud, BANKS_NOT_FOUND, NULL, NULL);
	else if (reply->integer == 2)
		t->cb(t->ud, BANKS_CHANGED, NULL, NULL);
	else
		t->cb(t->ud, 0, NULL, NULL);
	free(t);
}

void banks_set_token(struct rds *r, const struct config *cfg, enum env env, const char *id,
		     const char *token, const char *old_sha, store_fn cb, void *ud)
{
	struct set_token *t;
	char key[KS_KEY_MAX], sha[65], channel[KS_KEY_MAX];

	if (!banks_id_valid(id)) {
		cb(ud, BANKS_NOT_FOUND, NULL, NULL);
		return;
	}
	t = mem_new(struct set_token);
	t->cb = cb;
	t->ud = ud;
	ids_sha256_hex(sha, token, strlen(token));
	ks_bank_key(key, sizeof(key), cfg->prefix, ks_shard_of(id), id);
	ks_invalidation_channel(channel, sizeof(channel), cfg->prefix);
	{
		const char *argv[] = {key, env_name(env), sha, old_sha, channel};
		rds_script(r, on_set_token, t, SCRIPT_BANK_SET_TOKEN, 1, 5, argv, NULL);
	}
}
