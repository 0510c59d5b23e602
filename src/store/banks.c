/* banks: the store of bank connections: connect, read, list, update
 * (trust and default), disconnect, the log of what each heard, the API
 * credentials and a new URL token.
 * Writing what the banks report is banks_receive.c's; what a bank holds
 * as a connection's webhook is banks_webhook.c's; parsing a bank's body is
 * bankpix's (pix floor); authenticating a bank's call is the API's
 * (api_banks.c). */
#include "pixrelay/store/banks.h"
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

void banks_conn_deinit(struct banks_conn *c)
{
	free(c->pix_key);
	free(c->client_ca);
	free(c->client_subject);
	free(c->client_pins);
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
	memset(s, 0, sizeof(*s));
}

/* The name a connection's sealed field is bound to: its id and the field,
 * so a sealed value cannot be moved to another field or connection. */
static void sealed_name(char *out, size_t size, const char *conn, const char *field)
{
	snprintf(out, size, "%s:%s", conn, field);
}

int banks_open_credentials(const char *id, const struct banks_stored_creds *c,
			   const struct seal_key *key, struct bank_creds *out, char *err,
			   size_t errlen)
{
	char name[80];
	unsigned char *secret, *pkey, *headers, *query;
	size_t n;

	if (!c->api_url)
		return 1;
	if (!key) {
		snprintf(err, errlen,
			 "no credentials key: set credentials-key-file (docs/banks.md)");
		return -1;
	}
	sealed_name(name, sizeof(name), id, "client_secret");
	secret = seal_open(key, name, c->client_secret, &n);
	sealed_name(name, sizeof(name), id, "key");
	pkey = seal_open(key, name, c->key, &n);
	sealed_name(name, sizeof(name), id, "api_headers");
	headers = c->headers ? seal_open(key, name, c->headers, &n) : NULL;
	sealed_name(name, sizeof(name), id, "api_query");
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

/* ---- rendering ---- */

/* A connection's stored fields, borrowed. */
struct fields {
	const char *id, *account, *env, *pix_key, *auth, *client_ca, *created_ms, *last_call_ms;
	const char *client_subject, *client_pins, *is_default;
	const char *api_url, *token_url, *client_id, *cert, *bank_ca;
	const char *api_scope, *api_header_names, *api_query_names;
	/* its reconciliation (bank_recon_done) */
	const char *rec_at, *rec_ok_ms, *rec_fail, *rec_error, *rec_error_ms, *rec_listed, *rec_new,
	    *rec_new_total;
	/* its bank's API as the processes saw it (banks_note_api) */
	const char *api_token_ms, *api_call_ms, *api_error, *api_error_ms;
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
	f->client_subject = or_empty(rds_hash_field(h, "client_subject"));
	f->client_pins = or_empty(rds_hash_field(h, "client_pins"));
	f->is_default = or_empty(rds_hash_field(h, "default"));
	f->created_ms = or_empty(rds_hash_field(h, "created_ms"));
	f->last_call_ms = or_empty(rds_hash_field(h, "last_call_ms"));
	f->api_url = or_empty(rds_hash_field(h, "api_url"));
	f->token_url = or_empty(rds_hash_field(h, "token_url"));
	f->client_id = or_empty(rds_hash_field(h, "client_id"));
	f->cert = or_empty(rds_hash_field(h, "cert"));
	f->bank_ca = or_empty(rds_hash_field(h, "bank_ca"));
	f->api_scope = rds_hash_field(h, "api_scope");
	f->api_header_names = or_empty(rds_hash_field(h, "api_header_names"));
	f->api_query_names = or_empty(rds_hash_field(h, "api_query_names"));
	f->rec_at = or_empty(rds_hash_field(h, "rec_at"));
	f->rec_ok_ms = or_empty(rds_hash_field(h, "rec_ok_ms"));
	f->rec_fail = or_empty(rds_hash_field(h, "rec_fail"));
	f->rec_error = or_empty(rds_hash_field(h, "rec_error"));
	f->rec_error_ms = or_empty(rds_hash_field(h, "rec_error_ms"));
	f->rec_listed = or_empty(rds_hash_field(h, "rec_listed"));
	f->rec_new = or_empty(rds_hash_field(h, "rec_new"));
	f->rec_new_total = or_empty(rds_hash_field(h, "rec_new_total"));
	f->api_token_ms = or_empty(rds_hash_field(h, "api_token_ms"));
	f->api_call_ms = or_empty(rds_hash_field(h, "api_call_ms"));
	f->api_error = or_empty(rds_hash_field(h, "api_error"));
	f->api_error_ms = or_empty(rds_hash_field(h, "api_error_ms"));
}

/* "reconciliation": what its runs found ({} fields null before the first). */
static void render_reconciliation(yajl_gen g, const struct config *cfg, const struct fields *f)
{
	json_open(g);
	json_str(g, "intervalSeconds");
	json_int(g, cfg->bank_reconcile_interval);
	json_str(g, "reconciledUntil");
	json_time_ms(g, f->rec_at);
	json_str(g, "lastSuccessAt");
	json_time_ms(g, f->rec_ok_ms);
	json_str(g, "lastListed");
	json_int(g, strtoll(f->rec_listed, NULL, 10));
	json_str(g, "lastNew");
	json_int(g, strtoll(f->rec_new, NULL, 10));
	json_str(g, "newTotal");
	json_int(g, strtoll(f->rec_new_total, NULL, 10));
	json_str(g, "failures");
	json_int(g, strtoll(f->rec_fail, NULL, 10));
	json_str(g, "lastError");
	json_str_or_null(g, f->rec_error[0] ? f->rec_error : NULL);
	json_str(g, "lastErrorAt");
	json_time_ms(g, f->rec_error[0] ? f->rec_error_ms : "");
	json_close(g);
}

/* {"subject", "notAfter", "sha256"} of the first certificate of `pem`, or
 * null. */
static void render_cert(yajl_gen g, const char *pem)
{
	BIO *b = pem[0] ? BIO_new_mem_buf(pem, (int)strlen(pem)) : NULL;
	X509 *x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
	unsigned char md[32];
	unsigned int mdlen = 0;
	char subject[256] = "", hex[65], after[40] = "";
	struct tm tm;

	if (!x) {
		json_null(g);
		goto done;
	}
	/* as RFC 4514 writes it, as a pinned subject is written */
	if (certcheck_subject_text(x, subject, sizeof(subject)) < 0)
		X509_NAME_oneline(X509_get_subject_name(x), subject, sizeof(subject));
	X509_digest(x, EVP_sha256(), md, &mdlen);
	ids_hex(hex, md, sizeof(md));
	if (ASN1_TIME_to_tm(X509_get0_notAfter(x), &tm) == 1)
		strftime(after, sizeof(after), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_open(g);
	json_str(g, "subject");
	json_str(g, subject);
	json_str(g, "notAfter");
	json_str_or_null(g, after[0] ? after : NULL);
	json_str(g, "sha256");
	json_str(g, hex);
	json_close(g);
done:
	X509_free(x);
	BIO_free(b);
	ERR_clear_error();
}

/* ["a", "b"] of the comma-separated names "a,b" ("": []). */
static void render_names(yajl_gen g, const char *names)
{
	json_open_array(g);
	for (const char *p = names; *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		json_strn(g, p, n);
		p += n + (end ? 1 : 0);
	}
	json_close_array(g);
}

/* "trust": what an mTLS connection takes of its bank's certificate beyond
 * its trust list (null for a URL token): the pinned subject, the key pins,
 * and in production, while neither pins it, a warning that says what the
 * trust list alone lets in. */
static void render_trust(yajl_gen g, const struct fields *f)
{
	char warning[640];

	if (strcmp(f->auth, "mtls") != 0) {
		json_null(g);
		return;
	}
	json_open(g);
	json_str(g, "subject");
	json_str_or_null(g, f->client_subject[0] ? f->client_subject : NULL);
	json_str(g, "pins");
	json_open_array(g);
	for (const char *p = f->client_pins; *p;) {
		size_t n = strcspn(p, " ");

		if (n)
			json_strn(g, p, n);
		p += n + (p[n] == ' ');
	}
	json_close_array(g);
	json_str(g, "warning");
	if (!f->client_subject[0] && !f->client_pins[0] &&
	    strcmp(f->env, env_name(ENV_PRODUCTION)) == 0) {
		snprintf(warning, sizeof(warning),
			 "not pinned: any certificate for TLS clients that a CA of the trust list "
			 "issued is taken as this connection's bank, so anyone who holds one can "
			 "report Pix for it; pin the bank's own certificate with pixrelay bank "
			 "update %s --client-cert-subject DN or --client-cert-pin "
			 "sha256/..., or PATCH /v1/bank/connections/%s with clientCertSubject or "
			 "clientCertPins",
			 f->id, f->id);
		json_str(g, warning);
	} else {
		json_null(g);
	}
	json_close(g);
}

/* A connection as JSON, never with a secret: `token`, only when the
 * connection is made, goes into its webhookUrl that once. */
static void render(yajl_gen g, const struct config *cfg, const struct fields *f, const char *token)
{
	char url[2048], at[32];
	struct certcheck *cc = NULL;
	char err[128];

	banks_webhook_url(url, sizeof(url), cfg, f->id, token);
	json_open(g);
	json_str(g, "id");
	json_str(g, f->id);
	json_str(g, "account");
	json_str(g, f->account);
	json_str(g, "environment");
	json_str(g, f->env);
	json_str(g, "pixKey");
	json_str(g, f->pix_key);
	json_str(g, "default");
	json_bool(g, strcmp(f->is_default, "1") == 0);
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
	json_str(g, "trust");
	render_trust(g, f);
	json_str(g, "createdAt");
	timefmt_rfc3339(at, strtoull(f->created_ms, NULL, 10));
	json_str(g, at);
	/* the bank's last webhook call answered 200 (banks_receive.c) */
	json_str(g, "lastCallAt");
	json_time_ms(g, f->last_call_ms);
	/* the bank's API: never the client secret nor the key */
	json_str(g, "api");
	if (f->api_url && f->api_url[0]) {
		json_open(g);
		json_str(g, "apiUrl");
		json_str(g, f->api_url);
		json_str(g, "tokenUrl");
		json_str(g, f->token_url);
		json_str(g, "clientId");
		json_str(g, f->client_id);
		json_str(g, "certificate");
		render_cert(g, f->cert);
		json_str(g, "bankCa");
		render_cert(g, f->bank_ca);
		/* what is asked and added, never the extras' values */
		json_str(g, "scope");
		json_str_or_null(g, f->api_scope && f->api_scope[0] ? f->api_scope : NULL);
		json_str(g, "extraHeaders");
		render_names(g, f->api_header_names);
		json_str(g, "extraQuery");
		render_names(g, f->api_query_names);
		json_str(g, "health");
		json_open(g);
		json_str(g, "lastTokenAt");
		json_time_ms(g, f->api_token_ms);
		json_str(g, "lastCallAt");
		json_time_ms(g, f->api_call_ms);
		json_str(g, "lastError");
		json_str_or_null(g, f->api_error[0] ? f->api_error : NULL);
		json_str(g, "lastErrorAt");
		json_time_ms(g, f->api_error[0] ? f->api_error_ms : "");
		json_close(g);
		json_str(g, "reconciliation");
		render_reconciliation(g, cfg, f);
		json_close(g);
	} else {
		json_null(g);
	}
	json_close(g);
	mem_wipe(url, strlen(url));
}

void banks_webhook_url(char *out, size_t size, const struct config *cfg, const char *id,
		       const char *token)
{
	/* the banks' webhook server, when it has a name of its own */
	const char *base =
	    cfg->bank_webhook_base_url[0] ? cfg->bank_webhook_base_url : cfg->base_url;

	if (token)
		snprintf(out, size, "%s/webhooks/bank/%s?hmac=%s&ignorar=", base, id, token);
	else
		snprintf(out, size, "%s/webhooks/bank/%s", base, id);
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
static int visible(const struct call *c, const redisReply *h)
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
		   int make_default, store_fn cb, void *ud)
{
	const struct banks_trust none = {NULL, NULL, NULL};
	struct call *c = call_new(r, cfg, env, account, NULL, cb, ud);
	int shard = ks_shard_of(account);
	char idx[KS_KEY_MAX], acct[KS_KEY_MAX], kp[KS_KEY_MAX], created[32];
	char sp[KS_PREFIX_MAX], channel[KS_KEY_MAX];
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
		banks_make_token(token);
		ids_sha256_hex(sha, token, BANKS_TOKEN_LEN);
		trust = &none;
	}
	f = (struct fields){.id = c->id,
			    .account = account,
			    .env = env_name(env),
			    .pix_key = pix_key,
			    .auth = auth_name(auth),
			    .client_ca = or_empty(trust->client_ca),
			    .client_subject = or_empty(trust->subject),
			    .client_pins = or_empty(trust->pins),
			    .is_default = make_default ? "1" : "",
			    .created_ms = created,
			    .last_call_ms = "",
			    .api_url = ""};
	g = json_gen_new();
	render(g, cfg, &f, auth == BANKS_URL_TOKEN ? token : NULL);
	c->json = json_take(g);
	mem_wipe(token, sizeof(token));
	ks_shard_prefix(sp, sizeof(sp), cfg->prefix, shard);
	ks_invalidation_channel(channel, sizeof(channel), cfg->prefix);
	{
		const char *argv[18] = {c->key,
					idx,
					acct,
					c->id,
					account,
					env_name(env),
					pix_key,
					auth_name(auth),
					f.client_ca,
					sha,
					created,
					max,
					kp,
					f.client_subject,
					f.client_pins,
					f.is_default,
					sp,
					channel};
		rds_script(r, on_connected, c, SCRIPT_BANK_CONNECT, 3, 18, argv, NULL);
	}
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
	conn.client_subject = f.client_subject[0] ? mem_strdup(f.client_subject) : NULL;
	conn.client_pins = f.client_pins[0] ? mem_strdup(f.client_pins) : NULL;
	conn.is_default = strcmp(f.is_default, "1") == 0;
	snprintf(conn.token_sha, sizeof(conn.token_sha), "%s",
		 or_empty(rds_hash_field(reply, "token_sha")));
	conn.created_ms = strtoll(f.created_ms, NULL, 10);
	conn.api_at_ms = strtoll(or_empty(rds_hash_field(reply, "api_at")), NULL, 10);
	conn.rec_at_ms = strtoll(or_empty(rds_hash_field(reply, "rec_at")), NULL, 10);
	conn.last_call_ms = strtoll(f.last_call_ms, NULL, 10);
	if (f.api_url[0]) {
		conn.api.api_url = mem_strdup(f.api_url);
		conn.api.token_url = mem_strdup(f.token_url);
		conn.api.client_id = mem_strdup(f.client_id);
		conn.api.client_secret =
		    mem_strdup(or_empty(rds_hash_field(reply, "client_secret")));
		conn.api.cert = mem_strdup(f.cert);
		conn.api.key = mem_strdup(or_empty(rds_hash_field(reply, "key")));
		conn.api.bank_ca = f.bank_ca[0] ? mem_strdup(f.bank_ca) : NULL;
		conn.api.scope = f.api_scope && f.api_scope[0] ? mem_strdup(f.api_scope) : NULL;
		conn.api.headers = dup_field(reply, "api_headers");
		conn.api.query = dup_field(reply, "api_query");
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
		struct fields f;
		yajl_gen g = json_gen_new();

		fields_of(reply->element[1], &f);
		render(g, c->cfg, &f, NULL);
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
		struct fields f;
		yajl_gen g = json_gen_new();

		fields_of(reply, &f);
		render(g, c->cfg, &f, NULL);
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
	sealed_name(name, sizeof(name), id, "client_secret");
	secret = seal(key, name, creds->client_secret, strlen(creds->client_secret));
	sealed_name(name, sizeof(name), id, "key");
	pkey = seal(key, name, creds->key_pem, strlen(creds->key_pem));
	sealed_name(name, sizeof(name), id, "api_headers");
	headers = creds->headers && *creds->headers
		      ? seal(key, name, creds->headers, strlen(creds->headers))
		      : mem_strdup("");
	sealed_name(name, sizeof(name), id, "api_query");
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
