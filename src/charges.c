#include "pixrelay/charges.h"

#include "pixrelay/brcode.h"
#include "pixrelay/events.h"
#include "pixrelay/ids.h"
#include "pixrelay/keys.h"
#include "pixrelay/log.h"
#include "pixrelay/mem.h"
#include "pixrelay/timefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int charges_valid_id(const char *id)
{
	return ids_is_ulid(id);
}

static void charge_key(char *out, size_t size, const char *prefix, enum auth_env env,
		       const char *id)
{
	snprintf(out, size, "%s{%s}:ch:%s", prefix, auth_env_name(env), id);
}

/* ---- create ---- */

struct create {
	struct rds *r;
	const struct config *cfg;
	enum auth_env env;
	char account[32];
	struct charge_input in;
	charges_fn cb;
	void *ud;
	char *json; /* the new charge, answered once stored */
};

static void create_free(struct create *c)
{
	charge_input_deinit(&c->in);
	free(c->json);
	free(c);
}

static char *dup_str(const char *s)
{
	return s ? mem_strdup(s) : NULL;
}

static void on_created(void *ud, redisReply *reply, const char *err)
{
	struct create *c = ud;
	redisReply **e;

	if (err) {
		c->cb(c->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 ||
	    reply->element[0]->type != REDIS_REPLY_STRING) {
		c->cb(c->ud, -1, NULL, "unexpected reply from charge_create");
		goto done;
	}
	e = reply->element;
	if (strcmp(e[0]->str, "created") == 0) {
		c->cb(c->ud, 0, c->json, NULL);
	} else if (strcmp(e[0]->str, "conflict") == 0 && reply->elements == 2) {
		c->cb(c->ud, CHARGES_CONFLICT, e[1]->str, NULL);
	} else if (strcmp(e[0]->str, "existing") == 0 && reply->elements == 5 &&
		   e[1]->type == REDIS_REPLY_STRING && e[2]->type == REDIS_REPLY_STRING &&
		   e[3]->type == REDIS_REPLY_STRING && e[4]->type == REDIS_REPLY_STRING) {
		char *json = charge_assemble(e[1]->str, e[2]->str, e[3]->str, e[4]->str);
		c->cb(c->ud, CHARGES_EXISTING, json, NULL);
		free(json);
	} else {
		c->cb(c->ud, -1, NULL, "unexpected reply from charge_create");
	}
done:
	create_free(c);
}

/* With the Pix key known, build the charge and store it. */
static void store(struct create *c, const char *pix_key)
{
	const struct config *cfg = c->cfg;
	char id[IDS_ULID_LEN + 1], code[BRCODE_ENCODE_BUF], err[256], fp[65];
	char cus[41], created_txt[TIMEFMT_LEN + 1], k1[256], k2[256], k3[256], k4[256], kp[256];
	char created_ms[32], expires_ms[32], amount[32], fee_s[32];
	char *image_url, *head = NULL, *mid = NULL, desc[CHARGE_COMMENT_MAX + 1] = "";
	uint64_t now = ids_now_ms();
	struct brcode_input bi;
	struct charge_view v;
	int64_t fee = charge_fee(c->in.amount, cfg->fee_fixed, cfg->fee_bps);
	const char *argv[19];
	size_t room;

	ids_ulid_at(id, now);
	memset(&bi, 0, sizeof(bi));
	bi.pix_key = pix_key;
	/* field 26 holds at most 99 chars: GUI (18) + key (4 + n) + description (4 + m) */
	room = 99 - 18 - 4 - strlen(pix_key);
	if (c->in.comment && room > 4) {
		brcode_fold_ascii(c->in.comment,
				  room - 4 < CHARGE_COMMENT_MAX ? room - 4 : CHARGE_COMMENT_MAX,
				  desc, sizeof(desc));
		bi.description = desc;
	}
	bi.amount_cents = c->in.amount;
	bi.merchant_name = cfg->merchant_name;
	bi.merchant_city = cfg->merchant_city;
	bi.txid = id + 1; /* a ULID's first char is '0' until the year 10889: 25 chars remain */
	bi.single_use = 1;
	if (brcode_encode(&bi, code, sizeof(code), err, sizeof(err)) < 0) {
		log_error("cannot build the BR Code of charge %s: %s", id, err);
		c->cb(c->ud, -1, NULL,
		      "cannot build the BR Code (check pix-key, merchant-name and merchant-city)");
		create_free(c);
		return;
	}
	image_url = mem_printf("%s/qrcode/%s", cfg->base_url, id);
	charge_customer_id(auth_env_name(c->env), c->account, c->in.document, cus);
	memset(&v, 0, sizeof(v));
	v.id = id;
	v.external_id = c->in.external_id;
	v.br_code = code;
	v.image_url = image_url;
	v.amount = c->in.amount;
	v.comment = c->in.comment;
	v.expiration = c->in.expiration;
	v.fee = fee;
	v.created_ms = now;
	v.expires_ms = now + (uint64_t)c->in.expiration * 1000u;
	if (c->in.name || c->in.email || c->in.phone || c->in.document) {
		v.customer_id = cus;
		v.name = c->in.name;
		v.document = c->in.document;
		v.email = c->in.email;
		v.phone = c->in.phone;
	}
	charge_render_parts(&v, &head, &mid);
	timefmt_format(created_txt, now);
	c->json = charge_assemble(head, "PENDING", mid, created_txt);
	charge_fingerprint(&c->in, fp);

	charge_key(k1, sizeof(k1), cfg->prefix, c->env, id);
	snprintf(k2, sizeof(k2), "%s{%s}:ext:%s", cfg->prefix, auth_env_name(c->env), c->account);
	snprintf(k3, sizeof(k3), "%s{%s}:expiry", cfg->prefix, auth_env_name(c->env));
	snprintf(k4, sizeof(k4), "%s{%s}:charges:%s", cfg->prefix, auth_env_name(c->env),
		 c->account);
	snprintf(kp, sizeof(kp), "%s{%s}:ch:", cfg->prefix, auth_env_name(c->env));
	snprintf(created_ms, sizeof(created_ms), "%llu", (unsigned long long)now);
	snprintf(expires_ms, sizeof(expires_ms), "%llu", (unsigned long long)v.expires_ms);
	snprintf(amount, sizeof(amount), "%lld", (long long)c->in.amount);
	snprintf(fee_s, sizeof(fee_s), "%lld", (long long)fee);
	argv[0] = k1;
	argv[1] = k2;
	argv[2] = k3;
	argv[3] = k4;
	argv[4] = id;
	argv[5] = c->account;
	argv[6] = auth_env_name(c->env);
	argv[7] = c->in.external_id ? c->in.external_id : "";
	argv[8] = fp;
	argv[9] = head;
	argv[10] = mid;
	argv[11] = created_ms;
	argv[12] = expires_ms;
	argv[13] = created_txt;
	argv[14] = amount;
	argv[15] = fee_s;
	argv[16] = c->in.postback_url ? c->in.postback_url : "";
	argv[17] = code;
	argv[18] = kp;
	rds_script(c->r, on_created, c, SCRIPT_CHARGE_CREATE, 4, 19, argv, NULL);
	free(image_url);
	free(head);
	free(mid);
}

static void on_account(void *ud, redisReply *reply, const char *err)
{
	struct create *c = ud;

	if (err) {
		c->cb(c->ud, -1, NULL, err);
		create_free(c);
		return;
	}
	if (reply->type != REDIS_REPLY_STRING || reply->len == 0) {
		c->cb(c->ud, -1, NULL, "the account has no Pix key");
		create_free(c);
		return;
	}
	store(c, reply->str);
}

void charges_create(struct rds *r, const struct config *cfg, enum auth_env env, const char *account,
		    const struct charge_input *in, charges_fn cb, void *ud)
{
	struct create *c = mem_new(struct create);
	char k[256];
	const char *argv[3];

	c->r = r;
	c->cfg = cfg;
	c->env = env;
	snprintf(c->account, sizeof(c->account), "%s", account);
	c->in.amount = in->amount;
	c->in.expiration = in->expiration;
	c->in.external_id = dup_str(in->external_id);
	c->in.comment = dup_str(in->comment);
	c->in.name = dup_str(in->name);
	c->in.email = dup_str(in->email);
	c->in.phone = dup_str(in->phone);
	c->in.document = dup_str(in->document);
	c->in.postback_url = dup_str(in->postback_url);
	c->cb = cb;
	c->ud = ud;
	if (*cfg->pix_key) {
		store(c, cfg->pix_key);
		return;
	}
	keys_redis_account(k, sizeof(k), cfg->prefix, env, account);
	argv[0] = "HGET";
	argv[1] = k;
	argv[2] = "pix_key";
	rds_cmd_argv(r, on_account, c, 3, argv, NULL);
}

/* ---- read ---- */

struct get {
	charges_fn cb;
	void *ud;
	char account[32];
};

static void on_get(void *ud, redisReply *reply, const char *err)
{
	struct get *g = ud;
	redisReply **e;

	if (err) {
		g->cb(g->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 5) {
		g->cb(g->ud, -1, NULL, "unexpected reply to HMGET");
		goto done;
	}
	e = reply->element;
	for (int i = 0; i < 5; i++) {
		if (e[i]->type != REDIS_REPLY_STRING) {
			g->cb(g->ud, CHARGES_NOT_FOUND, NULL, NULL);
			goto done;
		}
	}
	/* another account's charge does not exist for this caller */
	if (strcmp(e[4]->str, g->account) != 0) {
		g->cb(g->ud, CHARGES_NOT_FOUND, NULL, NULL);
		goto done;
	}
	{
		char *json = charge_assemble(e[0]->str, e[1]->str, e[2]->str, e[3]->str);
		g->cb(g->ud, 0, json, NULL);
		free(json);
	}
done:
	free(g);
}

void charges_get(struct rds *r, const struct config *cfg, enum auth_env env, const char *account,
		 const char *id, charges_fn cb, void *ud)
{
	struct get *g = mem_new(struct get);
	char k[256];
	const char *argv[] = {"HMGET", k, "head", "status", "mid", "updated_at", "account"};

	g->cb = cb;
	g->ud = ud;
	snprintf(g->account, sizeof(g->account), "%s", account);
	charge_key(k, sizeof(k), cfg->prefix, env, id);
	rds_cmd_argv(r, on_get, g, 7, argv, NULL);
}

/* ---- QR lookup ---- */

struct find {
	struct rds *r;
	const struct config *cfg;
	char id[32];
	int env; /* the environment being looked in */
	charges_fn cb;
	void *ud;
};

static void find_in(struct find *f);

static void on_find(void *ud, redisReply *reply, const char *err)
{
	struct find *f = ud;

	if (err) {
		f->cb(f->ud, -1, NULL, err);
		free(f);
		return;
	}
	if (reply->type == REDIS_REPLY_STRING) {
		f->cb(f->ud, 0, reply->str, NULL);
		free(f);
		return;
	}
	if (f->env == AUTH_SANDBOX) {
		f->env = AUTH_PRODUCTION;
		find_in(f);
		return;
	}
	f->cb(f->ud, CHARGES_NOT_FOUND, NULL, NULL);
	free(f);
}

static void find_in(struct find *f)
{
	char k[256];
	const char *argv[] = {"HGET", k, "br_code"};

	charge_key(k, sizeof(k), f->cfg->prefix, (enum auth_env)f->env, f->id);
	rds_cmd_argv(f->r, on_find, f, 3, argv, NULL);
}

void charges_find_brcode(struct rds *r, const struct config *cfg, const char *id, charges_fn cb,
			 void *ud)
{
	struct find *f = mem_new(struct find);

	f->r = r;
	f->cfg = cfg;
	snprintf(f->id, sizeof(f->id), "%s", id);
	f->env = AUTH_SANDBOX;
	f->cb = cb;
	f->ud = ud;
	find_in(f);
}

/* ---- transitions ---- */

static const char *const action_names[] = {"pay", "expire", "refund", "fail"};

struct transition {
	charges_fn cb;
	void *ud;
	char *event_out;
};

static void on_transition(void *ud, redisReply *reply, const char *err)
{
	struct transition *t = ud;
	redisReply **e;
	const char *what;

	if (err) {
		t->cb(t->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 ||
	    reply->element[0]->type != REDIS_REPLY_STRING) {
		t->cb(t->ud, -1, NULL, "unexpected reply from charge_transition");
		goto done;
	}
	e = reply->element;
	what = e[0]->str;
	if (strcmp(what, "ok") == 0 && reply->elements == 4) {
		if (t->event_out && e[3]->type == REDIS_REPLY_STRING)
			snprintf(t->event_out, EVENTS_ID_MAX, "%s", e[3]->str);
		t->cb(t->ud, 0, e[2]->str, NULL);
	} else if (strcmp(what, "expired") == 0 && reply->elements == 3)
		t->cb(t->ud, CHARGES_EXPIRED, e[1]->str, NULL);
	else if (strcmp(what, "not_found") == 0)
		t->cb(t->ud, CHARGES_NOT_FOUND, NULL, NULL);
	else if (strcmp(what, "refused") == 0 && reply->elements == 2)
		t->cb(t->ud, CHARGES_REFUSED, e[1]->str, NULL);
	else if (strcmp(what, "duplicate") == 0 && reply->elements == 2)
		t->cb(t->ud, CHARGES_DUPLICATE, e[1]->str, NULL);
	else if (strcmp(what, "amount_mismatch") == 0 && reply->elements == 2)
		t->cb(t->ud, CHARGES_AMOUNT_MISMATCH, e[1]->str, NULL);
	else if (strcmp(what, "insufficient") == 0 && reply->elements == 2)
		t->cb(t->ud, CHARGES_INSUFFICIENT, e[1]->str, NULL);
	else
		t->cb(t->ud, -1, NULL, "unexpected reply from charge_transition");
done:
	free(t);
}

void charges_transition(struct rds *r, const struct config *cfg, enum auth_env env,
			const char *account, const char *id, enum charges_action action,
			const char *upstream_id, const char *amount, char *event_out, charges_fn cb,
			void *ud)
{
	struct transition *t = mem_new(struct transition);
	const char *envn = auth_env_name(env);
	char k1[256], k2[256], k3[256], k4[256], now[32], now_txt[TIMEFMT_LEN + 1];
	char evt[EVENTS_ID_MAX], acct_prefix[256], dedupe[512] = "", ttl[32];
	uint64_t ms = ids_now_ms();

	t->cb = cb;
	t->ud = ud;
	t->event_out = event_out;
	if (event_out)
		event_out[0] = '\0';
	charge_key(k1, sizeof(k1), cfg->prefix, env, id);
	events_outbox_key(k2, sizeof(k2), cfg->prefix, env);
	snprintf(k3, sizeof(k3), "%s{%s}:expiry", cfg->prefix, envn);
	/* the script appends the account: the scheduler does not know it */
	snprintf(k4, sizeof(k4), "%s{%s}:ledger:", cfg->prefix, envn);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ms);
	timefmt_format(now_txt, ms);
	events_new_id(events_shard_of(id, cfg->queue_shards), evt);
	snprintf(acct_prefix, sizeof(acct_prefix), "%s{%s}:acct:", cfg->prefix, envn);
	if (upstream_id)
		snprintf(dedupe, sizeof(dedupe), "%s{%s}:upstream:%s:%s", cfg->prefix, envn,
			 account ? account : "", upstream_id);
	snprintf(ttl, sizeof(ttl), "%ld", cfg->event_retention_days * 86400);
	{
		const char *argv[] = {k1,
				      k2,
				      k3,
				      k4,
				      action_names[action],
				      now,
				      now_txt,
				      evt,
				      acct_prefix,
				      account ? account : "",
				      upstream_id ? dedupe : "",
				      upstream_id ? upstream_id : "",
				      amount ? amount : "",
				      ttl};
		rds_script(r, on_transition, t, SCRIPT_CHARGE_TRANSITION, 4, 14, argv, NULL);
	}
}

/* ---- expiry scheduler ---- */

struct expiry {
	struct rds *r;
	const struct config *cfg;
	enum auth_env env;
	void (*done)(void *ud, int n);
	void *ud;
	size_t left;
	int expired;
};

static void on_one_expired(void *ud, int result, const char *json, const char *err)
{
	struct expiry *x = ud;

	if (result == 0)
		x->expired++;
	else if (result < 0)
		log_warn("expiry: %s", err);
	if (--x->left == 0) {
		x->done(x->ud, x->expired);
		free(x);
	}
}

static void on_due(void *ud, redisReply *reply, const char *err)
{
	struct expiry *x = ud;

	if (err || reply->type != REDIS_REPLY_ARRAY || reply->elements == 0) {
		x->done(x->ud, err ? -1 : 0);
		free(x);
		return;
	}
	x->left = reply->elements;
	for (size_t i = 0; i < reply->elements; i++)
		charges_transition(x->r, x->cfg, x->env, "", reply->element[i]->str, CHARGES_EXPIRE,
				   NULL, NULL, NULL, on_one_expired, x);
}

void charges_expire_due(struct rds *r, const struct config *cfg, enum auth_env env,
			void (*done)(void *ud, int n), void *ud)
{
	struct expiry *x = mem_new(struct expiry);
	char k[256], now[32];
	const char *argv[] = {"ZRANGEBYSCORE", k, "-inf", now, "LIMIT", "0", "200"};

	x->r = r;
	x->cfg = cfg;
	x->env = env;
	x->done = done;
	x->ud = ud;
	snprintf(k, sizeof(k), "%s{%s}:expiry", cfg->prefix, auth_env_name(env));
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ids_now_ms());
	rds_cmd_argv(r, on_due, x, 7, argv, NULL);
}
