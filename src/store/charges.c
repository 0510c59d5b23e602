/* charges: the charge store, on the event loop. Creating a charge (the
 * BR Code of the Pix key its caller chose, the charge id as txid, the JSON parts,
 * then charge_create in the account's shard, which also answers a repeated
 * externalID), reading and listing charges, the brCode for the QR image,
 * transitions (charge_transition: the charge, its event and the balance in
 * one step) and the expiry batches of relay/janitor.c. The request and the
 * JSON are pix/charge.c's; a provider's notifications are ingest.c. */
#include "pixrelay/store/charges.h"

#include "pixrelay/pix/brcode.h"
#include "pixrelay/store/events.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool charges_valid_id(const char *id)
{
	return ids_is_ulid(id);
}

/* ---- create ---- */

struct create {
	struct rds *r;
	const struct config *cfg;
	enum env env;
	char account[32];
	struct charge_input in;
	store_fn cb;
	void *ud;
	char *json; /* the new charge, answered once stored */
	/* a charge created at the bank: its id (the cob's txid) and BR Code
	 * (the cob's pixCopiaECola); "" and NULL: made here */
	char id[IDS_ULID_LEN + 1];
	char *bank_code;
};

static void create_free(struct create *c)
{
	charge_input_deinit(&c->in);
	free(c->json);
	free(c->bank_code);
	free(c);
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
	} else if (strcmp(e[0]->str, "existing") == 0 && reply->elements == 6 &&
		   e[1]->type == REDIS_REPLY_STRING && e[2]->type == REDIS_REPLY_STRING &&
		   e[3]->type == REDIS_REPLY_STRING && e[4]->type == REDIS_REPLY_STRING) {
		char *json = charge_assemble(e[1]->str, e[2]->str, e[3]->str, e[4]->str,
					     e[5]->type == REDIS_REPLY_STRING ? e[5]->str : NULL);
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
	char cus[41], created_txt[TIMEFMT_LEN + 1], k1[KS_KEY_MAX], k2[KS_KEY_MAX], k3[KS_KEY_MAX];
	char k4[KS_KEY_MAX], kp[KS_KEY_MAX], kr[KS_KEY_MAX] = "";
	char created_ms[32], expires_ms[32], amount[32], fee_s[32], due_min[32] = "",
								    due_max[32] = "";
	char *image_url, *head = NULL, *mid = NULL, desc[CHARGE_COMMENT_MAX + 1] = "";
	uint64_t now = ids_now_ms();
	struct brcode_input bi;
	struct charge_view v;
	int64_t fee = charge_fee(c->in.amount, cfg->fee_fixed, cfg->fee_bps);
	const char *argv[25];
	size_t room;
	int shard;

	/* in the shard of its account, like everything of the account */
	if (c->id[0])
		memcpy(id, c->id, sizeof(id));
	else
		ks_ulid_at(ks_shard_of(c->account), now, id);
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
	if (c->bank_code) {
		snprintf(code, sizeof(code), "%s", c->bank_code);
	} else if (brcode_encode(&bi, code, sizeof(code), err, sizeof(err)) < 0) {
		log_error("cannot build the BR Code of charge %s: %s", id, err);
		c->cb(c->ud, -1, NULL,
		      "cannot build the BR Code (check pix-key, merchant-name and merchant-city)");
		create_free(c);
		return;
	}
	image_url = mem_printf("%s/qrcode/%s", cfg->base_url, id);
	charge_customer_id(env_name(c->env), c->account, c->in.document, cus);
	memset(&v, 0, sizeof(v));
	v.id = id;
	v.external_id = c->in.external_id;
	v.br_code = code;
	v.image_url = image_url;
	v.amount = c->in.amount;
	v.comment = c->in.comment;
	v.fee = fee;
	v.created_ms = now;
	v.expires_ms = charge_expires_ms(&c->in, now);
	/* a due-date charge's: the seconds from its creation to its end */
	v.expiration =
	    charge_has_due(&c->in) ? (int64_t)((v.expires_ms - now) / 1000u) : c->in.expiration;
	v.due = charge_has_due(&c->in) ? &c->in.due : NULL;
	v.recurrence = c->in.recurrence[0] ? c->in.recurrence : NULL;
	if (c->in.name || c->in.email || c->in.phone || c->in.document) {
		v.customer_id = cus;
		v.name = c->in.name;
		v.document = c->in.document;
		v.email = c->in.email;
		v.phone = c->in.phone;
	}
	charge_render_parts(&v, &head, &mid);
	timefmt_format(created_txt, now);
	c->json = charge_assemble(head, "PENDING", mid, created_txt, NULL);
	charge_fingerprint(&c->in, fp);

	shard = ks_shard_of(id);
	ks_charge_key(k1, sizeof(k1), cfg->prefix, shard, id);
	ks_external_ids_key(k2, sizeof(k2), cfg->prefix, shard, c->account);
	ks_expiry_key(k3, sizeof(k3), cfg->prefix, shard);
	ks_charge_index_key(k4, sizeof(k4), cfg->prefix, shard, c->account);
	ks_charge_key_prefix(kp, sizeof(kp), cfg->prefix, shard);
	if (c->bank_code)
		ks_charge_reservations_key(kr, sizeof(kr), cfg->prefix, shard, c->account);
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
	argv[6] = env_name(c->env);
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
	argv[19] = kr;
	if (charge_has_due(&c->in)) {
		int64_t lo, hi;

		chargedue_bounds(&c->in.due, c->in.amount, &lo, &hi);
		snprintf(due_min, sizeof(due_min), "%lld", (long long)lo);
		snprintf(due_max, sizeof(due_max), "%lld", (long long)hi);
	}
	argv[20] = due_min;
	argv[21] = due_max;
	/* a recurring charge: what its bank's callbacks and the reconciliation
	 * find it by */
	argv[22] = c->in.recurrence;
	argv[23] = c->in.idrec;
	argv[24] = c->in.connection;
	rds_script(c->r, on_created, c, SCRIPT_CHARGE_CREATE, 4, c->in.recurrence[0] ? 25 : 22,
		   argv, NULL);
	free(image_url);
	free(head);
	free(mid);
}

/* A creation of a charge of `account` from `in` (its strings copied). */
static struct create *create_new(struct rds *r, const struct config *cfg, enum env env,
				 const char *account, const struct charge_input *in, store_fn cb,
				 void *ud)
{
	struct create *c = mem_new(struct create);

	c->r = r;
	c->cfg = cfg;
	c->env = env;
	snprintf(c->account, sizeof(c->account), "%s", account);
	c->in.amount = in->amount;
	c->in.expiration = in->expiration;
	c->in.external_id = mem_strdup_or_null(in->external_id);
	c->in.comment = mem_strdup_or_null(in->comment);
	c->in.name = mem_strdup_or_null(in->name);
	c->in.email = mem_strdup_or_null(in->email);
	c->in.phone = mem_strdup_or_null(in->phone);
	c->in.document = mem_strdup_or_null(in->document);
	c->in.postback_url = mem_strdup_or_null(in->postback_url);
	c->in.due = in->due;
	memcpy(c->in.recurrence, in->recurrence, sizeof(c->in.recurrence));
	memcpy(c->in.idrec, in->idrec, sizeof(c->in.idrec));
	memcpy(c->in.connection, in->connection, sizeof(c->in.connection));
	c->cb = cb;
	c->ud = ud;
	return c;
}

void charges_create(struct rds *r, const struct config *cfg, enum env env, const char *account,
		    const struct charge_input *in, const char *pix_key, store_fn cb, void *ud)
{
	if (ks_shard_of(account) < 0) {
		cb(ud, -1, NULL, "the account id names no shard");
		return;
	}
	store(create_new(r, cfg, env, account, in, cb, ud), pix_key);
}

void charges_create_at(struct rds *r, const struct config *cfg, enum env env, const char *account,
		       const struct charge_input *in, const char *id, const char *brcode,
		       store_fn cb, void *ud)
{
	struct create *c = create_new(r, cfg, env, account, in, cb, ud);

	snprintf(c->id, sizeof(c->id), "%s", id);
	c->bank_code = mem_strdup(brcode);
	/* the key was the bank's to write into the code; none is needed here */
	store(c, "");
}

/* ---- reserving the id of a charge created at the bank ---- */

struct reserve {
	store_fn cb;
	void *ud;
};

static void on_reserved(void *ud, redisReply *reply, const char *err)
{
	struct reserve *v = ud;
	redisReply **e;

	if (err || reply->type != REDIS_REPLY_ARRAY || reply->elements < 2 ||
	    reply->element[0]->type != REDIS_REPLY_STRING) {
		v->cb(v->ud, -1, NULL, err ? err : "unexpected reply from charge_reserve");
		goto done;
	}
	e = reply->element;
	if (strcmp(e[0]->str, "reserved") == 0 && e[1]->type == REDIS_REPLY_STRING) {
		v->cb(v->ud, 0, e[1]->str, NULL);
	} else if (strcmp(e[0]->str, "conflict") == 0 && e[1]->type == REDIS_REPLY_STRING) {
		v->cb(v->ud, CHARGES_CONFLICT, e[1]->str, NULL);
	} else if (strcmp(e[0]->str, "existing") == 0 && reply->elements == 6 &&
		   e[1]->type == REDIS_REPLY_STRING && e[2]->type == REDIS_REPLY_STRING &&
		   e[3]->type == REDIS_REPLY_STRING && e[4]->type == REDIS_REPLY_STRING) {
		char *json = charge_assemble(e[1]->str, e[2]->str, e[3]->str, e[4]->str,
					     e[5]->type == REDIS_REPLY_STRING ? e[5]->str : NULL);
		v->cb(v->ud, CHARGES_EXISTING, json, NULL);
		free(json);
	} else {
		v->cb(v->ud, -1, NULL, "unexpected reply from charge_reserve");
	}
done:
	free(v);
}

void charges_reserve(struct rds *r, const struct config *cfg, enum env env, const char *account,
		     const struct charge_input *in, store_fn cb, void *ud)
{
	char id[IDS_ULID_LEN + 1], fp[65], k1[KS_KEY_MAX], k2[KS_KEY_MAX], kp[KS_KEY_MAX];
	char now_s[32], until_s[32];
	uint64_t now = ids_now_ms();
	int shard = ks_shard_of(account);
	struct reserve *v;

	ks_ulid_at(shard, now, id);
	if (!in->external_id) {
		/* nothing to retry with: a new id each time */
		cb(ud, 0, id, NULL);
		return;
	}
	v = mem_new(struct reserve);
	v->cb = cb;
	v->ud = ud;
	charge_fingerprint(in, fp);
	ks_external_ids_key(k1, sizeof(k1), cfg->prefix, shard, account);
	ks_charge_reservations_key(k2, sizeof(k2), cfg->prefix, shard, account);
	ks_charge_key_prefix(kp, sizeof(kp), cfg->prefix, shard);
	snprintf(now_s, sizeof(now_s), "%llu", (unsigned long long)now);
	/* a retry is useful while the charge could still be paid */
	snprintf(until_s, sizeof(until_s), "%llu", (unsigned long long)charge_expires_ms(in, now));
	{
		const char *argv[] = {k1, k2, in->external_id, fp, id, now_s, until_s, kp};
		rds_script(r, on_reserved, v, SCRIPT_CHARGE_RESERVE, 2, 8, argv, NULL);
	}
	(void)env;
}

void charges_unreserve(struct rds *r, const struct config *cfg, const char *account,
		       const char *external_id)
{
	char k[KS_KEY_MAX];
	const char *argv[3] = {"HDEL", k, external_id};

	if (!external_id)
		return;
	ks_charge_reservations_key(k, sizeof(k), cfg->prefix, ks_shard_of(account), account);
	rds_cmd_argv(r, NULL, NULL, 3, argv, NULL);
}

/* ---- read ---- */

struct get {
	store_fn cb;
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
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 6) {
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
		char *json = charge_assemble(e[0]->str, e[1]->str, e[2]->str, e[3]->str,
					     e[5]->type == REDIS_REPLY_STRING ? e[5]->str : NULL);
		g->cb(g->ud, 0, json, NULL);
		free(json);
	}
done:
	free(g);
}

void charges_get(struct rds *r, const struct config *cfg, enum env env, const char *account,
		 const char *id, store_fn cb, void *ud)
{
	struct get *g;
	char k[KS_KEY_MAX];
	const char *argv[] = {"HMGET", k, "head", "status", "mid", "updated_at", "account", "pix"};

	/* a charge lives in its account's shard: another shard's id is not the account's */
	if (ks_shard_of(id) < 0 || ks_shard_of(id) != ks_shard_of(account)) {
		cb(ud, CHARGES_NOT_FOUND, NULL, NULL);
		return;
	}
	g = mem_new(struct get);
	g->cb = cb;
	g->ud = ud;
	snprintf(g->account, sizeof(g->account), "%s", account);
	ks_charge_key(k, sizeof(k), cfg->prefix, ks_shard_of(id), id);
	rds_cmd_argv(r, on_get, g, 8, argv, NULL);
}

/* ---- QR lookup ---- */

struct find {
	store_fn cb;
	void *ud;
};

static void on_find(void *ud, redisReply *reply, const char *err)
{
	struct find *f = ud;

	if (err)
		f->cb(f->ud, -1, NULL, err);
	else if (reply->type == REDIS_REPLY_STRING)
		f->cb(f->ud, 0, reply->str, NULL);
	else
		f->cb(f->ud, CHARGES_NOT_FOUND, NULL, NULL);
	free(f);
}

void charges_find_brcode(struct rds *r, const struct config *cfg, const char *id, store_fn cb,
			 void *ud)
{
	struct find *f;
	char k[KS_KEY_MAX];
	const char *argv[] = {"HGET", k, "br_code"};

	if (ks_shard_of(id) < 0) {
		cb(ud, CHARGES_NOT_FOUND, NULL, NULL);
		return;
	}
	f = mem_new(struct find);
	f->cb = cb;
	f->ud = ud;
	ks_charge_key(k, sizeof(k), cfg->prefix, ks_shard_of(id), id);
	rds_cmd_argv(r, on_find, f, 3, argv, NULL);
}

/* ---- transitions ---- */

static const char *const action_names[] = {"pay", "expire", "refund", "fail"};

struct transition {
	store_fn cb;
	void *ud;
	char *event_out;
};

static void on_transition(void *ud, redisReply *reply, const char *err)
{
	struct transition *t = ud;
	const char *json;
	int rc;

	if (err) {
		t->cb(t->ud, -1, NULL, err);
	} else if (reply->type != REDIS_REPLY_ARRAY ||
		   (rc = charges_reply(reply->element, reply->elements, &json, t->event_out)) < 0 ||
		   rc == CHARGES_DUPLICATE || rc == CHARGES_RELAYED) {
		t->cb(t->ud, -1, NULL, "unexpected reply from charge_transition");
	} else {
		t->cb(t->ud, rc, json, NULL);
	}
	free(t);
}

void charges_transition(struct rds *r, const struct config *cfg, enum env env, const char *account,
			const char *id, enum charges_action action, const char *amount,
			char *event_out, store_fn cb, void *ud)
{
	struct transition *t;
	char k1[KS_KEY_MAX], sp[KS_PREFIX_MAX], now[32], now_txt[TIMEFMT_LEN + 1];
	char evt[EVENT_ID_MAX], ttl[32];
	int shard = ks_shard_of(id);
	uint64_t ms = ids_now_ms();

	if (event_out)
		event_out[0] = '\0';
	if (shard < 0 || (*account && shard != ks_shard_of(account))) {
		cb(ud, CHARGES_NOT_FOUND, NULL, NULL);
		return;
	}
	t = mem_new(struct transition);
	t->cb = cb;
	t->ud = ud;
	t->event_out = event_out;
	ks_shard_prefix(sp, sizeof(sp), cfg->prefix, shard);
	ks_charge_key(k1, sizeof(k1), cfg->prefix, shard, id);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ms);
	timefmt_format(now_txt, ms);
	ks_event_id(shard, evt);
	snprintf(ttl, sizeof(ttl), "%ld", cfg->event_retention_days * 86400);
	{
		const char *argv[] = {k1,  sp,	    id,	 action_names[action], account,
				      now, now_txt, evt, amount ? amount : "", ttl};
		rds_script(r, on_transition, t, SCRIPT_CHARGE_TRANSITION, 1, 10, argv, NULL);
	}
}

size_t charges_reply_len(const char *what)
{
	if (strcmp(what, "ok") == 0)
		return 4;
	if (strcmp(what, "expired") == 0)
		return 3;
	if (strcmp(what, "not_found") == 0)
		return 1;
	return 2;
}

int charges_reply(redisReply *const *e, size_t n, const char **json, char *event_out)
{
	const char *what;

	*json = NULL;
	if (n < 1)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (e[i]->type != REDIS_REPLY_STRING)
			return -1;
	what = e[0]->str;
	if (strcmp(what, "ok") == 0 && n == 4) {
		if (event_out)
			snprintf(event_out, EVENT_ID_MAX, "%s", e[3]->str);
		*json = e[2]->str;
		return 0;
	}
	if (strcmp(what, "expired") == 0 && n == 3) {
		if (event_out)
			snprintf(event_out, EVENT_ID_MAX, "%s", e[2]->str);
		*json = e[1]->str;
		return CHARGES_EXPIRED;
	}
	if (strcmp(what, "not_found") == 0)
		return CHARGES_NOT_FOUND;
	if (n != 2)
		return -1;
	*json = e[1]->str;
	if (strcmp(what, "refused") == 0)
		return CHARGES_REFUSED;
	if (strcmp(what, "duplicate") == 0)
		return CHARGES_DUPLICATE;
	if (strcmp(what, "amount_mismatch") == 0)
		return CHARGES_AMOUNT_MISMATCH;
	if (strcmp(what, "insufficient") == 0)
		return CHARGES_INSUFFICIENT;
	if (strcmp(what, "relayed") == 0)
		return CHARGES_RELAYED;
	if (strcmp(what, "status_mismatch") == 0)
		return CHARGES_STATUS_MISMATCH;
	return -1;
}

/* ---- expiry scheduler ---- */

#define EXPIRY_BATCH 16

struct expiry {
	void (*done)(void *ud, int n);
	void *ud;
};

static void on_expired(void *ud, redisReply *reply, const char *err)
{
	struct expiry *x = ud;

	if (err)
		log_warn("expiry: %s", err);
	x->done(x->ud, err ? -1 : reply->type == REDIS_REPLY_INTEGER ? (int)reply->integer : 0);
	free(x);
}

void charges_expire_due(struct rds *r, const struct config *cfg, int shard,
			void (*done)(void *ud, int n), void *ud)
{
	struct expiry *x = mem_new(struct expiry);
	char sp[KS_PREFIX_MAX], k[KS_KEY_MAX], now[32], now_txt[TIMEFMT_LEN + 1], ttl[32];
	char evts[EXPIRY_BATCH][EVENT_ID_MAX];
	const char *argv[5 + EXPIRY_BATCH];
	uint64_t ms = ids_now_ms();

	x->done = done;
	x->ud = ud;
	ks_shard_prefix(sp, sizeof(sp), cfg->prefix, shard);
	ks_expiry_key(k, sizeof(k), cfg->prefix, shard);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ms);
	timefmt_format(now_txt, ms);
	snprintf(ttl, sizeof(ttl), "%ld", cfg->event_retention_days * 86400);
	argv[0] = k;
	argv[1] = sp;
	argv[2] = now;
	argv[3] = now_txt;
	argv[4] = ttl;
	for (int i = 0; i < EXPIRY_BATCH; i++) {
		ks_event_id(shard, evts[i]);
		argv[5 + i] = evts[i];
	}
	rds_script(r, on_expired, x, SCRIPT_EXPIRE_DUE, 1, 5 + EXPIRY_BATCH, argv, NULL);
}

/* ---- listing ---- */

struct list {
	store_fn cb;
	void *ud;
};

static void on_list(void *ud, redisReply *reply, const char *err)
{
	struct list *l = ud;
	size_t n;
	yajl_gen g;
	const char *s;
	size_t len;
	redisReply *score, *id;

	if (err) {
		l->cb(l->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 2 ||
	    (reply->elements - 2) % 6 != 0) {
		l->cb(l->ud, -1, NULL, "unexpected reply from charge_list");
		goto done;
	}
	for (size_t i = 0; i < reply->elements; i++) {
		if (reply->element[i]->type != REDIS_REPLY_STRING) {
			l->cb(l->ud, -1, NULL, "unexpected reply from charge_list");
			goto done;
		}
	}
	n = (reply->elements - 2) / 6;
	g = json_gen_new();
	json_open(g);
	json_str(g, "charges");
	json_open_array(g);
	for (size_t i = 0; i < n; i++) {
		redisReply **e = reply->element + i * 6;
		char *json = charge_assemble(e[1]->str, e[2]->str, e[3]->str, e[4]->str, e[5]->str);
		json_raw(g, json, strlen(json));
		free(json);
	}
	json_close_array(g);
	score = reply->element[reply->elements - 2];
	id = reply->element[reply->elements - 1];
	page_write_next(g, score->str, id->str);
	json_close(g);
	s = json_buf(g, &len);
	l->cb(l->ud, 0, s, NULL);
	yajl_gen_free(g);
done:
	free(l);
}

void charges_list(struct rds *r, const struct config *cfg, enum env env, const char *account,
		  const struct charges_filter *f, store_fn cb, void *ud)
{
	struct list *l;
	char idx[KS_KEY_MAX], kp[KS_KEY_MAX], lim[16], cap[16];
	int shard = ks_shard_of(account);
	const char *argv[7];

	if (shard < 0) {
		cb(ud, -1, NULL, "the account id names no shard");
		return;
	}
	l = mem_new(struct list);
	l->cb = cb;
	l->ud = ud;
	if (f->recurrence)
		ks_recurrence_charges_key(idx, sizeof(idx), cfg->prefix, shard, account,
					  f->recurrence);
	else
		ks_charge_index_key(idx, sizeof(idx), cfg->prefix, shard, account);
	ks_charge_key_prefix(kp, sizeof(kp), cfg->prefix, shard);
	snprintf(lim, sizeof(lim), "%d", f->limit);
	snprintf(cap, sizeof(cap), "%d", CHARGES_SCAN_CAP);
	argv[0] = idx;
	argv[1] = kp;
	argv[2] = f->from.score;
	argv[3] = f->from.id;
	argv[4] = f->status ? f->status : "";
	argv[5] = lim;
	argv[6] = cap;
	rds_script(r, on_list, l, SCRIPT_CHARGE_LIST, 1, 7, argv, NULL);
}
