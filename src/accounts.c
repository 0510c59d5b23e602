#include "pixrelay/accounts.h"

#include "pixrelay/events.h"
#include "pixrelay/ids.h"
#include "pixrelay/json.h"
#include "pixrelay/keys.h"
#include "pixrelay/mem.h"
#include "pixrelay/sign.h"
#include "pixrelay/timefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {"", "pdf", "jpeg", "png"};

static void file_json(yajl_gen g, const char *name, const struct account_file *f)
{
	json_str(g, name);
	if (!f->len) {
		json_null(g);
		return;
	}
	json_open(g);
	json_str(g, "sha256");
	json_str(g, f->sha256);
	json_str(g, "type");
	json_str(g, kind_names[f->kind]);
	json_str(g, "bytes");
	json_int(g, (long long)f->len);
	json_close(g);
}

/* What is kept of the request besides the indexed fields: the address, the
 * representatives (files by SHA-256) and the documents. */
static char *details_json(const struct account_input *in)
{
	yajl_gen g = json_gen_new();
	const char *s;
	size_t len;
	char *out;

	json_open(g);
	json_str(g, "address");
	json_open(g);
	json_str(g, "zipcode");
	json_str(g, in->address.zipcode);
	json_str(g, "street");
	json_str(g, in->address.street);
	json_str(g, "number");
	json_str(g, in->address.number);
	json_str(g, "neighborhood");
	json_str(g, in->address.neighborhood);
	json_str(g, "city");
	json_str(g, in->address.city);
	json_str(g, "state");
	json_str(g, in->address.state);
	json_close(g);
	json_str(g, "documents");
	json_open_array(g);
	for (size_t i = 0; i < in->ndocuments; i++) {
		json_open(g);
		json_str(g, "sha256");
		json_str(g, in->documents[i].sha256);
		json_str(g, "bytes");
		json_int(g, (long long)in->documents[i].len);
		json_close(g);
	}
	json_close_array(g);
	json_str(g, "representatives");
	json_open_array(g);
	for (size_t i = 0; i < in->nrepresentatives; i++) {
		const struct account_representative *r = &in->representatives[i];
		json_open(g);
		json_str(g, "name");
		json_str(g, r->name);
		json_str(g, "birthDate");
		json_str(g, r->birth_date);
		json_str(g, "email");
		json_str(g, r->email);
		json_str(g, "taxID");
		json_str(g, r->tax_id);
		json_str(g, "phone");
		json_str(g, r->phone);
		json_str(g, "documents");
		json_open(g);
		file_json(g, "picture_face", &r->picture_face);
		file_json(g, "picture_identity_front", &r->picture_identity_front);
		file_json(g, "picture_identity_back", &r->picture_identity_back);
		json_str(g, "picture_identity_type");
		json_str(g, r->picture_identity_type);
		json_close(g);
		json_close(g);
	}
	json_close_array(g);
	json_close(g);
	s = json_buf(g, &len);
	out = mem_strndup(s, len);
	yajl_gen_free(g);
	return out;
}

/* ---- create ---- */

struct create {
	accounts_fn cb;
	void *ud;
	char *json;
};

static void on_created(void *ud, redisReply *reply, const char *err)
{
	struct create *c = ud;

	if (err)
		c->cb(c->ud, -1, NULL, err);
	else if (reply->type == REDIS_REPLY_ARRAY && reply->elements >= 1 &&
		 reply->element[0]->str && strcmp(reply->element[0]->str, "created") == 0)
		c->cb(c->ud, 0, c->json, NULL);
	else if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 && reply->element[1]->str)
		c->cb(c->ud, ACCOUNTS_DUPLICATE, reply->element[1]->str, NULL);
	else
		c->cb(c->ud, -1, NULL, "unexpected reply from account_create");
	mem_wipe(c->json, strlen(c->json));
	free(c->json);
	free(c);
}

void accounts_create(struct rds *r, const struct config *cfg, enum auth_env env, const char *owner,
		     const struct account_input *in, accounts_fn cb, void *ud)
{
	struct create *c = mem_new(struct create);
	const char *envn = auth_env_name(env);
	char id[IDS_ULID_LEN + 1], evp[IDS_UUID_LEN + 1], signing[SIGN_SECRET_LEN + 1];
	char ingest[SIGN_SECRET_LEN + 1], compat[41], created[32], created_txt[TIMEFMT_LEN + 1];
	char k1[256], k2[256], k3[256], k4[256], k5[256], mp[256], fp[256], nmembers[16];
	uint64_t now = ids_now_ms();
	char *details = details_json(in);
	size_t nfiles = in->ndocuments + 3 * in->nrepresentatives;
	size_t argc_max = 5 + 16 + in->nrepresentatives + 2 * nfiles, argc = 0;
	const char **argv = mem_calloc(argc_max, sizeof(char *));
	size_t *lens = mem_calloc(argc_max, sizeof(size_t));
	yajl_gen g = json_gen_new();
	const char *s;
	size_t len;

	c->cb = cb;
	c->ud = ud;
	ids_ulid_at(id, now);
	ids_uuid4(evp);
	sign_secret_new(signing, sizeof(signing));
	sign_secret_new(ingest, sizeof(ingest));
	memcpy(compat, "pxrwh_", 6);
	ids_base62(compat + 6, 32);
	snprintf(created, sizeof(created), "%llu", (unsigned long long)now);
	timefmt_format(created_txt, now);
	keys_redis_account(k1, sizeof(k1), cfg->prefix, env, id);
	snprintf(k2, sizeof(k2), "%s{%s}:taxids", cfg->prefix, envn);
	snprintf(k3, sizeof(k3), "%s{%s}:pixkeys", cfg->prefix, envn);
	snprintf(k4, sizeof(k4), "%s{%s}:accounts", cfg->prefix, envn);
	snprintf(k5, sizeof(k5), "%s{%s}:members:%s", cfg->prefix, envn, id);
	snprintf(mp, sizeof(mp), "%s{%s}:member:", cfg->prefix, envn);
	snprintf(fp, sizeof(fp), "%s{%s}:file:", cfg->prefix, envn);
	snprintf(nmembers, sizeof(nmembers), "%zu", in->nrepresentatives);
	{
		const char *fixed[] = {k1,
				       k2,
				       k3,
				       k4,
				       k5,
				       id,
				       envn,
				       owner,
				       created,
				       in->official_name,
				       in->trade_name,
				       in->tax_id,
				       evp,
				       signing,
				       compat,
				       ingest,
				       in->postback_url ? in->postback_url : "",
				       details,
				       mp,
				       fp,
				       nmembers};
		for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
			argv[argc] = fixed[i];
			lens[argc++] = strlen(fixed[i]);
		}
	}
	for (size_t i = 0; i < in->nrepresentatives; i++) {
		argv[argc] = in->representatives[i].tax_id;
		lens[argc++] = strlen(in->representatives[i].tax_id);
	}
	for (size_t i = 0; i < nfiles; i++) {
		const struct account_file *f =
		    i < in->ndocuments ? &in->documents[i]
		    : (i - in->ndocuments) % 3 == 0
			? &in->representatives[(i - in->ndocuments) / 3].picture_face
		    : (i - in->ndocuments) % 3 == 1
			? &in->representatives[(i - in->ndocuments) / 3].picture_identity_front
			: &in->representatives[(i - in->ndocuments) / 3].picture_identity_back;
		if (!f->len)
			continue;
		argv[argc] = f->sha256;
		lens[argc++] = 64;
		argv[argc] = (const char *)f->data;
		lens[argc++] = f->len;
	}

	/* the answer, shown once: it carries the secrets */
	json_open(g);
	json_str(g, "id");
	json_str(g, id);
	json_str(g, "officialName");
	json_str(g, in->official_name);
	json_str(g, "tradeName");
	json_str(g, in->trade_name);
	json_str(g, "taxID");
	json_str(g, in->tax_id);
	json_str(g, "status");
	json_str(g, "ACTIVE");
	json_str(g, "owner");
	json_str(g, owner);
	json_str(g, "pixKeys");
	json_open_array(g);
	json_open(g);
	json_str(g, "type");
	json_str(g, "EVP");
	json_str(g, "key");
	json_str(g, evp);
	json_close(g);
	json_open(g);
	json_str(g, "type");
	json_str(g, "CNPJ");
	json_str(g, "key");
	json_str(g, in->tax_id);
	json_close(g);
	json_close_array(g);
	json_str(g, "postbackUrl");
	json_str_or_null(g, in->postback_url);
	json_str(g, "balance");
	json_int(g, 0);
	json_str(g, "createdAt");
	json_str(g, created_txt);
	json_str(g, "secrets");
	json_open(g);
	json_str(g, "postbackSigningSecret");
	json_str(g, signing);
	json_str(g, "postbackSignature");
	json_str(g, compat);
	json_str(g, "ingestSecret");
	json_str(g, ingest);
	json_close(g);
	json_close(g);
	s = json_buf(g, &len);
	c->json = mem_strndup(s, len);
	yajl_gen_free(g);

	/* keys are passed as the first five arguments */
	rds_script(r, on_created, c, SCRIPT_ACCOUNT_CREATE, 5, (int)argc, argv, lens);
	mem_wipe(signing, sizeof(signing));
	mem_wipe(ingest, sizeof(ingest));
	mem_wipe(compat, sizeof(compat));
	free(details);
	free(argv);
	free(lens);
}

/* ---- transfer ---- */

struct transfer {
	accounts_fn cb;
	void *ud;
};

static void on_transferred(void *ud, redisReply *reply, const char *err)
{
	struct transfer *t = ud;
	const char *what = NULL;

	if (err) {
		t->cb(t->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements >= 1)
		what = reply->element[0]->str;
	if (!what)
		t->cb(t->ud, -1, NULL, "unexpected reply from transfer");
	else if (strcmp(what, "ok") == 0)
		t->cb(t->ud, 0, NULL, NULL);
	else if (strcmp(what, "replayed") == 0)
		t->cb(t->ud, ACCOUNTS_REPLAYED, NULL, NULL);
	else if (strcmp(what, "idem_conflict") == 0)
		t->cb(t->ud, ACCOUNTS_IDEM_CONFLICT, NULL, NULL);
	else if (strcmp(what, "not_found") == 0 && reply->elements == 2)
		t->cb(t->ud, ACCOUNTS_NOT_FOUND, reply->element[1]->str, NULL);
	else if (strcmp(what, "forbidden") == 0)
		t->cb(t->ud, ACCOUNTS_FORBIDDEN, NULL, NULL);
	else if (strcmp(what, "same") == 0)
		t->cb(t->ud, ACCOUNTS_SAME, NULL, NULL);
	else if (strcmp(what, "insufficient") == 0 && reply->elements == 2)
		t->cb(t->ud, ACCOUNTS_INSUFFICIENT, reply->element[1]->str, NULL);
	else
		t->cb(t->ud, -1, NULL, "unexpected reply from transfer");
done:
	free(t);
}

void accounts_transfer(struct rds *r, const struct config *cfg, enum auth_env env,
		       const char *caller, const char *from_key, const char *to_key,
		       long long amount, const char *idem, const char *fingerprint, accounts_fn cb,
		       void *ud)
{
	struct transfer *t = mem_new(struct transfer);
	const char *envn = auth_env_name(env);
	char k1[256], k2[256], ap[256], mp[256], lp[256], ik[512] = "", amt[32], now[32];
	char now_txt[TIMEFMT_LEN + 1], e1[EVENTS_ID_MAX], e2[EVENTS_ID_MAX];
	char tid[IDS_ULID_LEN + 5];
	uint64_t ms = ids_now_ms();

	t->cb = cb;
	t->ud = ud;
	snprintf(k1, sizeof(k1), "%s{%s}:pixkeys", cfg->prefix, envn);
	events_outbox_key(k2, sizeof(k2), cfg->prefix, env);
	snprintf(ap, sizeof(ap), "%s{%s}:acct:", cfg->prefix, envn);
	snprintf(mp, sizeof(mp), "%s{%s}:members:", cfg->prefix, envn);
	snprintf(lp, sizeof(lp), "%s{%s}:ledger:", cfg->prefix, envn);
	if (idem) {
		char h[65];
		/* the client's key is hashed: any bytes, bounded key length */
		ids_sha256_hex(h, idem, strlen(idem));
		snprintf(ik, sizeof(ik), "%s{%s}:idem:%s:%s", cfg->prefix, envn, caller, h);
	}
	snprintf(amt, sizeof(amt), "%lld", amount);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ms);
	timefmt_format(now_txt, ms);
	memcpy(tid, "trf_", 4);
	ids_ulid_at(tid + 4, ms);
	events_new_id(events_shard_of("transfer", cfg->queue_shards), e1);
	events_new_id(events_shard_of("transfer", cfg->queue_shards), e2);
	{
		const char *argv[] = {k1,
				      k2,
				      from_key,
				      to_key,
				      amt,
				      caller,
				      now,
				      now_txt,
				      ap,
				      mp,
				      lp,
				      ik,
				      fingerprint ? fingerprint : "",
				      e1,
				      e2,
				      tid};
		rds_script(r, on_transferred, t, SCRIPT_TRANSFER, 2, 16, argv, NULL);
	}
}

/* ---- balance ---- */

struct balance {
	struct rds *r;
	accounts_fn cb;
	void *ud;
	char account[32];
	char ledger[256];
	long long balance;
	int entries;
};

static void on_ledger(void *ud, redisReply *reply, const char *err)
{
	struct balance *b = ud;
	yajl_gen g;
	const char *s;
	size_t len;

	if (err) {
		b->cb(b->ud, -1, NULL, err);
		free(b);
		return;
	}
	g = json_gen_new();
	json_open(g);
	json_str(g, "account");
	json_str(g, b->account);
	json_str(g, "balance");
	json_int(g, b->balance);
	json_str(g, "entries");
	json_open_array(g);
	for (size_t i = 0; reply->type == REDIS_REPLY_ARRAY && i < reply->elements; i++)
		if (reply->element[i]->str)
			json_raw(g, reply->element[i]->str, reply->element[i]->len);
	json_close_array(g);
	json_close(g);
	s = json_buf(g, &len);
	b->cb(b->ud, 0, s, NULL);
	yajl_gen_free(g);
	free(b);
}

static void on_balance(void *ud, redisReply *reply, const char *err)
{
	struct balance *b = ud;
	char stop[16];

	if (err) {
		b->cb(b->ud, -1, NULL, err);
		free(b);
		return;
	}
	b->balance = reply->str ? strtoll(reply->str, NULL, 10) : 0;
	snprintf(stop, sizeof(stop), "%d", b->entries - 1);
	{
		const char *argv[] = {"LRANGE", b->ledger, "0", stop};
		rds_cmd_argv(b->r, on_ledger, b, 4, argv, NULL);
	}
}

void accounts_balance(struct rds *r, const struct config *cfg, enum auth_env env,
		      const char *account, int entries, accounts_fn cb, void *ud)
{
	struct balance *b = mem_new(struct balance);
	char k[256];
	const char *argv[] = {"HGET", k, "balance"};

	b->r = r;
	b->cb = cb;
	b->ud = ud;
	b->entries = entries;
	snprintf(b->account, sizeof(b->account), "%s", account);
	snprintf(b->ledger, sizeof(b->ledger), "%s{%s}:ledger:%s", cfg->prefix, auth_env_name(env),
		 account);
	keys_redis_account(k, sizeof(k), cfg->prefix, env, account);
	rds_cmd_argv(r, on_balance, b, 3, argv, NULL);
}
