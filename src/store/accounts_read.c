/* accounts_read.c: the reading side of the accounts module (accounts.h):
 * what the hot paths need of an account (accounts_lookup, cached), an
 * account's balance with its latest ledger entries (the API), and what the
 * dashboard shows: a page of accounts, one account with a page of its
 * ledger, its webhook secrets. Making an account is in accounts.c, internal
 * transfers in transfers.c, the operator's KYC review in review.c.
 */
#include "pixrelay/store/accounts.h"

#include "pixrelay/redis/cache.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- balance ---- */

struct balance {
	struct rds *r;
	store_fn cb;
	void *ud;
	char account[32];
	char ledger[KS_KEY_MAX];
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

void accounts_balance(struct rds *r, const struct config *cfg, enum env env, const char *account,
		      int entries, store_fn cb, void *ud)
{
	struct balance *b;
	char k[KS_KEY_MAX];
	const char *argv[] = {"HGET", k, "balance"};

	if (ks_account_key(k, sizeof(k), cfg->prefix, env, account) < 0) {
		cb(ud, -1, NULL, "the account id names no shard");
		return;
	}
	b = mem_new(struct balance);
	b->r = r;
	b->cb = cb;
	b->ud = ud;
	b->entries = entries;
	snprintf(b->account, sizeof(b->account), "%s", account);
	ks_ledger_key(b->ledger, sizeof(b->ledger), cfg->prefix, ks_shard_of(account), account);
	rds_cmd_argv(r, on_balance, b, 3, argv, NULL);
}

/* ---- what hot paths need of an account, cached ---- */

#define INFO_CACHE_MS 300000

struct lookup {
	accounts_info_fn cb;
	void *ud;
	struct cache *cache;
	uint64_t ticket;
	char ckey[40];
	int replies, found;
	struct accounts_info info;
	char err[128];
};

static void lookup_done(struct lookup *l)
{
	char v[512];

	if (l->err[0]) {
		l->cb(l->ud, -1, NULL, l->err);
	} else if (!l->found) {
		l->cb(l->ud, ACCOUNTS_NOT_FOUND, NULL, NULL);
	} else {
		snprintf(v, sizeof(v), "%s\t%d\t%s\t%s\t%s\t%s\t%s", env_name(l->info.env),
			 l->info.platform, l->info.ingest_secret, l->info.pix_key, l->info.bank_api,
			 l->info.charge_via, l->info.charge_key);
		cache_put(l->cache, l->ckey, v, l->ticket, INFO_CACHE_MS);
		mem_wipe(v, sizeof(v));
		l->cb(l->ud, 0, &l->info, NULL);
	}
	mem_wipe(&l->info, sizeof(l->info));
	free(l);
}

struct lookup_env {
	struct lookup *l;
	enum env env;
};

static const char *str_of(const redisReply *e)
{
	return e->type == REDIS_REPLY_STRING ? e->str : "";
}

static void on_info(void *ud, redisReply *reply, const char *err)
{
	struct lookup_env *le = ud;
	struct lookup *l = le->l;

	if (err) {
		snprintf(l->err, sizeof(l->err), "%s", err);
	} else if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 7 &&
		   reply->element[0]->type == REDIS_REPLY_STRING) {
		redisReply **e = reply->element;
		l->found = 1;
		l->info.env = le->env;
		snprintf(l->info.ingest_secret, sizeof(l->info.ingest_secret), "%s", str_of(e[1]));
		snprintf(l->info.pix_key, sizeof(l->info.pix_key), "%s", str_of(e[2]));
		snprintf(l->info.bank_api, sizeof(l->info.bank_api), "%s", str_of(e[3]));
		snprintf(l->info.charge_via, sizeof(l->info.charge_via), "%s", str_of(e[4]));
		snprintf(l->info.charge_key, sizeof(l->info.charge_key), "%s", str_of(e[5]));
		l->info.platform = strcmp(str_of(e[6]), "platform") == 0;
	}
	free(le);
	if (++l->replies == 2)
		lookup_done(l);
}

/* Parse a cached "env\tplatform\tingest\tpix\tbank\tvia\tkey" into
 * info; 0 or -1. */
static int info_parse(const char *v, struct accounts_info *info)
{
	const char *part[7];
	size_t len[7], n = 0;
	char env[16];

	for (const char *p = v; n < 7; n++) {
		const char *tab = strchr(p, '\t');

		part[n] = p;
		len[n] = tab ? (size_t)(tab - p) : strlen(p);
		if (!tab) {
			n++;
			break;
		}
		p = tab + 1;
	}
	if (n != 7 || len[0] >= sizeof(env))
		return -1;
	memcpy(env, part[0], len[0]);
	env[len[0]] = '\0';
	if (env_parse(env, &info->env) < 0)
		return -1;
	info->platform = len[1] == 1 && part[1][0] == '1';
	snprintf(info->ingest_secret, sizeof(info->ingest_secret), "%.*s", (int)len[2], part[2]);
	snprintf(info->pix_key, sizeof(info->pix_key), "%.*s", (int)len[3], part[3]);
	snprintf(info->bank_api, sizeof(info->bank_api), "%.*s", (int)len[4], part[4]);
	snprintf(info->charge_via, sizeof(info->charge_via), "%.*s", (int)len[5], part[5]);
	snprintf(info->charge_key, sizeof(info->charge_key), "%.*s", (int)len[6], part[6]);
	return 0;
}

void accounts_lookup(struct rds *r, struct cache *c, const struct config *cfg, const char *id,
		     accounts_info_fn cb, void *ud)
{
	struct lookup *l;
	char ckey[40];
	const char *cached;

	if (ks_shard_of(id) < 0 || strlen(id) != IDS_ULID_LEN) {
		cb(ud, ACCOUNTS_NOT_FOUND, NULL, NULL);
		return;
	}
	snprintf(ckey, sizeof(ckey), "a:%s", id);
	cached = cache_get(c, ckey);
	if (cached) {
		struct accounts_info info;
		if (info_parse(cached, &info) == 0) {
			cb(ud, 0, &info, NULL);
			mem_wipe(&info, sizeof(info));
			return;
		}
	}
	l = mem_new(struct lookup);
	l->cb = cb;
	l->ud = ud;
	l->cache = c;
	l->ticket = cache_ticket(c);
	snprintf(l->ckey, sizeof(l->ckey), "%s", ckey);
	/* the environment is not known: both records at once (one round trip,
	 * one slot: an account's shard holds both) */
	for (int e = 0; e < 2; e++) {
		struct lookup_env *le = mem_new(struct lookup_env);
		char k[KS_KEY_MAX];
		le->l = l;
		le->env = (enum env)e;
		ks_account_key(k, sizeof(k), cfg->prefix, le->env, id);
		{
			const char *argv[] = {"HMGET",	 k,	     "id",	   "ingest_secret",
					      "pix_key", "bank_api", "charge_via", "charge_key",
					      "kind"};
			rds_cmd_argv(r, on_info, le, 9, argv, NULL);
		}
	}
}

/* ---- what the dashboard shows ---- */

/* The record fields an account is shown with, in the order of account_ledger.lua. */
enum {
	AF_ID,
	AF_KIND,
	AF_OFFICIAL,
	AF_TRADE,
	AF_TAXID,
	AF_STATUS,
	AF_OWNER,
	AF_PIXKEY,
	AF_POSTBACK,
	AF_BALANCE,
	AF_CREATED,
	AF_COUNT
};

static const char *const shown_fields[AF_COUNT] = {
    "id",    "kind",	"officialName", "tradeName", "taxID",	  "status",
    "owner", "pix_key", "postback_url", "balance",   "created_at"};

static void str_or_null_if_empty(yajl_gen g, const char *name, const redisReply *e)
{
	json_str(g, name);
	if (e->type == REDIS_REPLY_STRING && e->len > 0)
		json_strn(g, e->str, e->len);
	else
		json_null(g);
}

/* Write the fields of an account (AF_COUNT elements, AF_ID a string) into an
 * object already open in g. */
static void account_fields(yajl_gen g, enum env env, redisReply **e)
{
	char t[TIMEFMT_LEN + 1];

	json_str(g, "id");
	json_strn(g, e[AF_ID]->str, e[AF_ID]->len);
	json_str(g, "environment");
	json_str(g, env_name(env));
	str_or_null_if_empty(g, "kind", e[AF_KIND]);
	str_or_null_if_empty(g, "officialName", e[AF_OFFICIAL]);
	str_or_null_if_empty(g, "tradeName", e[AF_TRADE]);
	str_or_null_if_empty(g, "taxID", e[AF_TAXID]);
	str_or_null_if_empty(g, "status", e[AF_STATUS]);
	str_or_null_if_empty(g, "owner", e[AF_OWNER]);
	str_or_null_if_empty(g, "pixKey", e[AF_PIXKEY]);
	str_or_null_if_empty(g, "postbackUrl", e[AF_POSTBACK]);
	json_str(g, "balance");
	json_int(g, e[AF_BALANCE]->type == REDIS_REPLY_STRING
			? strtoll(e[AF_BALANCE]->str, NULL, 10)
			: 0);
	json_str(g, "createdAt");
	if (e[AF_CREATED]->type == REDIS_REPLY_STRING && e[AF_CREATED]->len > 0) {
		timefmt_format(t, strtoull(e[AF_CREATED]->str, NULL, 10));
		json_str(g, t);
	} else {
		json_null(g);
	}
}

/* A listing: the page's ids, then one HMGET per account (each in its own
 * shard), answered when the last arrives. */
struct alist {
	store_fn cb;
	void *ud;
	enum env env;
	size_t n, left;
	redisReply **found; /* deep copies of the HMGET replies, by position */
	char *cursor;	    /* NULL = no more */
	int failed;
	char err[256];
};

static void alist_finish(struct alist *l)
{
	yajl_gen g;
	const char *s;
	size_t len;

	if (l->failed) {
		l->cb(l->ud, -1, NULL, l->err);
		goto done;
	}
	g = json_gen_new();
	json_open(g);
	json_str(g, "accounts");
	json_open_array(g);
	for (size_t i = 0; i < l->n; i++) {
		redisReply *a = l->found[i];
		/* an id the index names whose record is gone is left out */
		if (!a || a->type != REDIS_REPLY_ARRAY || a->elements != AF_COUNT ||
		    a->element[AF_ID]->type != REDIS_REPLY_STRING)
			continue;
		json_open(g);
		account_fields(g, l->env, a->element);
		json_close(g);
	}
	json_close_array(g);
	json_str(g, "nextCursor");
	json_str_or_null(g, l->cursor);
	json_close(g);
	s = json_buf(g, &len);
	l->cb(l->ud, 0, s, NULL);
	yajl_gen_free(g);
done:
	for (size_t i = 0; i < l->n; i++)
		freeReplyObject(l->found[i]);
	free(l->found);
	free(l->cursor);
	free(l);
}

struct alist_item {
	struct alist *l;
	size_t at;
};

static void on_alist_item(void *ud, redisReply *reply, const char *err)
{
	struct alist_item *it = ud;
	struct alist *l = it->l;

	if (err && !l->failed) {
		l->failed = 1;
		snprintf(l->err, sizeof(l->err), "%s", err);
	} else if (!err) {
		l->found[it->at] = rds_reply_copy(reply);
	}
	free(it);
	if (--l->left == 0)
		alist_finish(l);
}

static void alist_fetch(struct rds *r, const struct config *cfg, struct alist *l, size_t at,
			const char *id)
{
	struct alist_item *it = mem_new(struct alist_item);
	char k[KS_KEY_MAX];
	const char *argv[2 + AF_COUNT];

	it->l = l;
	it->at = at;
	if (ks_account_key(k, sizeof(k), cfg->prefix, l->env, id) < 0) {
		/* not an account id: nothing to show for it */
		free(it);
		if (--l->left == 0)
			alist_finish(l);
		return;
	}
	argv[0] = "HMGET";
	argv[1] = k;
	for (int j = 0; j < AF_COUNT; j++)
		argv[2 + j] = shown_fields[j];
	rds_cmd_argv(r, on_alist_item, it, 2 + AF_COUNT, argv, NULL);
}

struct alist_start {
	struct rds *r;
	const struct config *cfg;
	struct alist *l;
};

static void on_alist_ids(void *ud, redisReply *reply, const char *err)
{
	struct alist_start *st = ud;
	struct alist *l = st->l;
	size_t n;

	if (err) {
		l->failed = 1;
		snprintf(l->err, sizeof(l->err), "%s", err);
		alist_finish(l);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 2) {
		l->failed = 1;
		snprintf(l->err, sizeof(l->err), "unexpected reply from account_list");
		alist_finish(l);
		goto done;
	}
	for (size_t i = 0; i < reply->elements; i++) {
		if (reply->element[i]->type != REDIS_REPLY_STRING) {
			l->failed = 1;
			snprintf(l->err, sizeof(l->err), "unexpected reply from account_list");
			alist_finish(l);
			goto done;
		}
	}
	n = reply->elements - 2;
	if (reply->element[n]->len && reply->element[n + 1]->len)
		l->cursor = mem_printf("%s_%s", reply->element[n]->str, reply->element[n + 1]->str);
	if (n == 0) {
		alist_finish(l);
		goto done;
	}
	l->n = n;
	l->found = mem_calloc(n, sizeof(redisReply *));
	/* one count held by this loop, so that l outlives it */
	l->left = n + 1;
	for (size_t i = 0; i < n; i++)
		alist_fetch(st->r, st->cfg, l, i, reply->element[i]->str);
	if (--l->left == 0)
		alist_finish(l);
done:
	free(st);
}

void accounts_list(struct rds *r, const struct config *cfg, enum env env, const char *only,
		   const struct page_cursor *from, int limit, store_fn cb, void *ud)
{
	struct alist *l = mem_new(struct alist);
	struct alist_start *st;
	char idx[KS_KEY_MAX], lim[16];
	const char *argv[4];

	l->cb = cb;
	l->ud = ud;
	l->env = env;
	if (only) {
		/* the one account is the whole first page */
		if (*from->id) {
			l->left = 1;
			alist_finish(l);
			return;
		}
		l->n = 1;
		l->found = mem_calloc(1, sizeof(redisReply *));
		l->left = 1;
		alist_fetch(r, cfg, l, 0, only);
		return;
	}
	st = mem_new(struct alist_start);
	st->r = r;
	st->cfg = cfg;
	st->l = l;
	ks_env_accounts_key(idx, sizeof(idx), cfg->prefix, env);
	snprintf(lim, sizeof(lim), "%d", limit);
	argv[0] = idx;
	argv[1] = from->score;
	argv[2] = from->id;
	argv[3] = lim;
	rds_script(r, on_alist_ids, st, SCRIPT_ACCOUNT_LIST, 1, 4, argv, NULL);
}

struct ashow {
	store_fn cb;
	void *ud;
	enum env env;
};

static void on_ashow(void *ud, redisReply *reply, const char *err)
{
	struct ashow *a = ud;
	yajl_gen g;
	const char *s;
	size_t len;
	redisReply **e;

	if (err) {
		a->cb(a->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 0) {
		a->cb(a->ud, ACCOUNTS_NO_ACCOUNT, NULL, NULL);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < AF_COUNT + 2 ||
	    reply->element[AF_ID]->type != REDIS_REPLY_STRING) {
		a->cb(a->ud, -1, NULL, "unexpected reply from account_ledger");
		goto done;
	}
	e = reply->element;
	g = json_gen_new();
	json_open(g);
	account_fields(g, a->env, e);
	json_str(g, "ledger");
	json_open(g);
	json_str(g, "entries");
	json_open_array(g);
	for (size_t i = AF_COUNT + 2; i < reply->elements; i++)
		if (e[i]->type == REDIS_REPLY_STRING)
			json_raw(g, e[i]->str, e[i]->len);
	json_close_array(g);
	json_str(g, "nextCursor");
	if (e[AF_COUNT]->type == REDIS_REPLY_STRING && e[AF_COUNT]->len > 0 &&
	    e[AF_COUNT + 1]->type == REDIS_REPLY_STRING) {
		char *cur = mem_printf("%s.%s", e[AF_COUNT]->str, e[AF_COUNT + 1]->str);
		json_str(g, cur);
		free(cur);
	} else {
		json_null(g);
	}
	json_close(g);
	json_close(g);
	s = json_buf(g, &len);
	a->cb(a->ud, 0, s, NULL);
	yajl_gen_free(g);
done:
	free(a);
}

void accounts_show(struct rds *r, const struct config *cfg, enum env env, const char *id, int limit,
		   const char *pos, const char *fp, store_fn cb, void *ud)
{
	struct ashow *a;
	char k1[KS_KEY_MAX], k2[KS_KEY_MAX], lim[16];
	const char *argv[5];

	if (ks_account_key(k1, sizeof(k1), cfg->prefix, env, id) < 0) {
		cb(ud, ACCOUNTS_NO_ACCOUNT, NULL, NULL);
		return;
	}
	a = mem_new(struct ashow);
	a->cb = cb;
	a->ud = ud;
	a->env = env;
	ks_ledger_key(k2, sizeof(k2), cfg->prefix, ks_shard_of(id), id);
	snprintf(lim, sizeof(lim), "%d", limit);
	argv[0] = k1;
	argv[1] = k2;
	argv[2] = pos ? pos : "";
	argv[3] = fp ? fp : "";
	argv[4] = lim;
	rds_script(r, on_ashow, a, SCRIPT_ACCOUNT_LEDGER, 2, 5, argv, NULL);
}

static void on_secrets(void *ud, redisReply *reply, const char *err)
{
	struct ashow *a = ud;
	yajl_gen g;
	const char *s;
	size_t len;
	redisReply **e;

	if (err) {
		a->cb(a->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 5) {
		a->cb(a->ud, -1, NULL, "unexpected reply to HMGET");
		goto done;
	}
	e = reply->element;
	if (e[0]->type != REDIS_REPLY_STRING) {
		a->cb(a->ud, ACCOUNTS_NO_ACCOUNT, NULL, NULL);
		goto done;
	}
	g = json_gen_new();
	json_open(g);
	json_str(g, "account");
	json_strn(g, e[0]->str, e[0]->len);
	str_or_null_if_empty(g, "postbackSigningSecret", e[1]);
	str_or_null_if_empty(g, "postbackSigningSecretPrevious", e[2]);
	str_or_null_if_empty(g, "postbackSignature", e[3]);
	str_or_null_if_empty(g, "ingestSecret", e[4]);
	json_close(g);
	s = json_buf(g, &len);
	a->cb(a->ud, 0, s, NULL);
	mem_wipe((char *)s, len);
	yajl_gen_free(g);
done:
	free(a);
}

void accounts_secrets(struct rds *r, const struct config *cfg, enum env env, const char *id,
		      store_fn cb, void *ud)
{
	struct ashow *a;
	char k[KS_KEY_MAX];
	const char *argv[] = {
	    "HMGET",	    k, "id", "signing_secret", "signing_secret_prev", "webhook_secret",
	    "ingest_secret"};

	if (ks_account_key(k, sizeof(k), cfg->prefix, env, id) < 0) {
		cb(ud, ACCOUNTS_NO_ACCOUNT, NULL, NULL);
		return;
	}
	a = mem_new(struct ashow);
	a->cb = cb;
	a->ud = ud;
	a->env = env;
	rds_cmd_argv(r, on_secrets, a, 7, argv, NULL);
}
