/* review.c: the operator's KYC review of business accounts (the `pixrelay
 * review` commands): the queue of accounts waiting, oldest first, with how
 * many other accounts name their representatives; one account with its KYC
 * data, the other claims on its CPFs and, when asked, its files; and the
 * decision, approve or reject, that makes its members count for groups or
 * stops them. Making accounts and reading them are in accounts.c and
 * accounts_read.c, internal transfers in transfers.c.
 */
#include "pixrelay/store/review.h"

#include "pixrelay/core/base64.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/store/keys.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the operator's KYC review ---- */

static const char *review_status_name(const char *s)
{
	if (!s || !*s)
		return NULL;
	if (strcmp(s, "approved") == 0)
		return "APPROVED";
	if (strcmp(s, "rejected") == 0)
		return "REJECTED";
	return "PENDING";
}

static bool reply_is_str(const redisReply *r)
{
	return r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS;
}

/* An integer reply, or a string holding one (a Lua number may come as
 * either); 0 otherwise. */
static long long reply_int(const redisReply *r)
{
	if (r->type == REDIS_REPLY_INTEGER)
		return r->integer;
	return reply_is_str(r) ? strtoll(r->str, NULL, 10) : 0;
}

/* A time in ms (text) as the spec writes times ("YYYY-MM-DD HH:MM:SS", UTC), or null. */
static void json_spec_time_ms(yajl_gen g, const char *ms)
{
	char t[TIMEFMT_LEN + 1];

	if (!ms || !*ms) {
		json_null(g);
		return;
	}
	timefmt_format(t, strtoull(ms, NULL, 10));
	json_str(g, t);
}

/* -- list -- */

struct queue_item {
	char id[IDS_ULID_LEN + 1];
	char *created, *owner;
	char **cpfs;
	size_t ncpfs;
	long long others;
	char *names[3]; /* officialName, tradeName, taxID (from the record) */
};

struct queue {
	struct rds *r;
	const struct config *cfg;
	enum env env;
	store_fn cb;
	void *ud;
	long long total;
	struct queue_item *items;
	size_t n, left;
	char *err;
};

static void queue_free(struct queue *q)
{
	for (size_t i = 0; i < q->n; i++) {
		struct queue_item *it = &q->items[i];
		free(it->created);
		free(it->owner);
		for (size_t k = 0; k < it->ncpfs; k++)
			free(it->cpfs[k]);
		free(it->cpfs);
		for (size_t k = 0; k < 3; k++)
			free(it->names[k]);
	}
	free(q->items);
	free(q->err);
	free(q);
}

static void queue_answer(struct queue *q)
{
	static const char *const names[] = {"officialName", "tradeName", "taxID"};
	yajl_gen g;
	const char *s;
	size_t len;

	if (q->err) {
		q->cb(q->ud, -1, NULL, q->err);
		queue_free(q);
		return;
	}
	g = json_gen_new();
	json_open(g);
	json_str(g, "total");
	json_int(g, q->total);
	json_str(g, "accounts");
	json_open_array(g);
	for (size_t i = 0; i < q->n; i++) {
		const struct queue_item *it = &q->items[i];
		json_open(g);
		json_str(g, "id");
		json_str(g, it->id);
		json_str(g, "createdAt");
		json_spec_time_ms(g, it->created);
		json_str(g, "owner");
		json_str_or_null(g, *it->owner ? it->owner : NULL);
		for (size_t k = 0; k < 3; k++) {
			json_str(g, names[k]);
			json_str_or_null(g, it->names[k]);
		}
		json_str(g, "representatives");
		json_open_array(g);
		for (size_t k = 0; k < it->ncpfs; k++)
			json_str(g, it->cpfs[k]);
		json_close_array(g);
		json_str(g, "alsoClaimedBy");
		json_int(g, it->others);
		json_close(g);
	}
	json_close_array(g);
	json_close(g);
	s = json_buf(g, &len);
	q->cb(q->ud, 0, s, NULL);
	yajl_gen_free(g);
	queue_free(q);
}

struct queue_slot {
	struct queue *q;
	size_t i;
};

static void on_queue_record(void *ud, redisReply *reply, const char *err)
{
	struct queue_slot *slot = ud;
	struct queue *q = slot->q;

	if (err) {
		if (!q->err)
			q->err = mem_strdup(err);
	} else if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 3) {
		for (size_t k = 0; k < 3; k++)
			if (reply_is_str(reply->element[k]))
				q->items[slot->i].names[k] =
				    mem_strndup(reply->element[k]->str, reply->element[k]->len);
	}
	free(slot);
	if (--q->left == 0)
		queue_answer(q);
}

static void on_queue(void *ud, redisReply *reply, const char *err)
{
	struct queue *q = ud;
	size_t n;

	if (err || reply->type != REDIS_REPLY_ARRAY || reply->elements < 1) {
		q->cb(q->ud, -1, NULL, err ? err : "unexpected reply from account_queue");
		queue_free(q);
		return;
	}
	q->total = reply_int(reply->element[0]);
	n = reply->elements - 1;
	q->items = mem_calloc(n ? n : 1, sizeof(struct queue_item));
	for (size_t i = 0; i < n; i++) {
		const redisReply *e = reply->element[i + 1], *cpfs;
		struct queue_item *it = &q->items[q->n];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 5 ||
		    !reply_is_str(e->element[0]) || !ids_is_ulid(e->element[0]->str) ||
		    e->element[3]->type != REDIS_REPLY_ARRAY)
			continue;
		cpfs = e->element[3];
		snprintf(it->id, sizeof(it->id), "%s", e->element[0]->str);
		it->created = mem_strdup(reply_is_str(e->element[1]) ? e->element[1]->str : "");
		it->owner = mem_strdup(reply_is_str(e->element[2]) ? e->element[2]->str : "");
		it->cpfs = mem_calloc(cpfs->elements ? cpfs->elements : 1, sizeof(char *));
		for (size_t k = 0; k < cpfs->elements; k++)
			if (reply_is_str(cpfs->element[k]))
				it->cpfs[it->ncpfs++] = mem_strdup(cpfs->element[k]->str);
		it->others = reply_int(e->element[4]);
		q->n++;
	}
	if (q->n == 0) {
		queue_answer(q);
		return;
	}
	/* the names are in each account's shard: one HMGET each, all at once */
	q->left = q->n;
	for (size_t i = 0; i < q->n; i++) {
		struct queue_slot *slot = mem_new(struct queue_slot);
		char k[KS_KEY_MAX];
		slot->q = q;
		slot->i = i;
		ks_account_key(k, sizeof(k), q->cfg->prefix, q->env, q->items[i].id);
		{
			const char *argv[] = {"HMGET", k, "officialName", "tradeName", "taxID"};
			rds_cmd_argv(q->r, on_queue_record, slot, 5, argv, NULL);
		}
	}
}

void review_list(struct rds *r, const struct config *cfg, enum env env, int limit, store_fn cb,
		 void *ud)
{
	struct queue *q = mem_new(struct queue);
	char gp[KS_PREFIX_MAX], k[KS_KEY_MAX], lim[16];

	q->r = r;
	q->cfg = cfg;
	q->env = env;
	q->cb = cb;
	q->ud = ud;
	ks_env_prefix(gp, sizeof(gp), cfg->prefix, env);
	ks_env_review_key(k, sizeof(k), cfg->prefix, env);
	snprintf(lim, sizeof(lim), "%d", limit < 1 ? 1 : limit);
	{
		const char *argv[] = {k, gp, lim};
		rds_script(r, on_queue, q, SCRIPT_ACCOUNT_QUEUE, 1, 3, argv, NULL);
	}
}

/* -- show -- */

#define CLAIMS_SHOWN 50 /* other accounts named per CPF */

struct show {
	struct rds *r;
	const struct config *cfg;
	enum env env;
	store_fn cb;
	void *ud;
	int files;
	char id[IDS_ULID_LEN + 1];
	char owner[IDS_ULID_LEN + 1];
	char files_key[KS_KEY_MAX];
	yajl_gen g; /* the answer, written step by step */
};

static void show_end(struct show *sh, int result, const char *err)
{
	if (result == 0) {
		size_t len;
		const char *s;
		json_close(sh->g);
		s = json_buf(sh->g, &len);
		sh->cb(sh->ud, 0, s, NULL);
	} else {
		sh->cb(sh->ud, result, NULL, err);
	}
	yajl_gen_free(sh->g);
	free(sh);
}

static void on_show_files(void *ud, redisReply *reply, const char *err)
{
	struct show *sh = ud;

	if (err) {
		show_end(sh, -1, err);
		return;
	}
	json_str(sh->g, "files");
	json_open(sh->g);
	for (size_t i = 0; reply->type == REDIS_REPLY_ARRAY && i + 1 < reply->elements; i += 2) {
		const redisReply *k = reply->element[i], *v = reply->element[i + 1];
		char *b64;
		if (!reply_is_str(k) || !reply_is_str(v))
			continue;
		b64 = mem_alloc(base64_encoded_len(v->len) + 1);
		base64_encode(v->str, v->len, b64);
		json_strn(sh->g, k->str, k->len);
		json_str(sh->g, b64);
		free(b64);
	}
	json_close(sh->g);
	show_end(sh, 0, NULL);
}

static void on_show_claims(void *ud, redisReply *reply, const char *err)
{
	struct show *sh = ud;
	yajl_gen g = sh->g;

	if (err || reply->type != REDIS_REPLY_ARRAY || reply->elements < 2 ||
	    !reply_is_str(reply->element[0]) || !reply_is_str(reply->element[1])) {
		show_end(sh, -1, err ? err : "unexpected reply from account_claims");
		return;
	}
	json_str(g, "kycStatus");
	json_str_or_null(g, review_status_name(reply->element[0]->str));
	json_str(g, "claims");
	json_open_array(g);
	for (size_t i = 2; i < reply->elements; i++) {
		const redisReply *c = reply->element[i], *list;
		if (c->type != REDIS_REPLY_ARRAY || c->elements != 3 ||
		    !reply_is_str(c->element[0]) || c->element[2]->type != REDIS_REPLY_ARRAY)
			continue;
		list = c->element[2];
		json_open(g);
		json_str(g, "taxID");
		json_str(g, c->element[0]->str);
		json_str(g, "otherAccounts");
		json_int(g, reply_int(c->element[1]));
		json_str(g, "accounts");
		json_open_array(g);
		for (size_t k = 0; k + 2 < list->elements; k += 3) {
			const redisReply *id = list->element[k], *st = list->element[k + 1],
					 *ow = list->element[k + 2];
			if (!reply_is_str(id) || !reply_is_str(st) || !reply_is_str(ow))
				continue;
			json_open(g);
			json_str(g, "id");
			json_str(g, id->str);
			json_str(g, "kycStatus");
			json_str_or_null(g, review_status_name(st->str));
			json_str(g, "owner");
			json_str_or_null(g, *ow->str ? ow->str : NULL);
			json_str(g, "sameOwner");
			json_bool(g, *ow->str && strcmp(ow->str, sh->owner) == 0);
			json_close(g);
		}
		json_close_array(g);
		json_close(g);
	}
	json_close_array(g);
	if (!sh->files) {
		show_end(sh, 0, NULL);
		return;
	}
	{
		const char *argv[] = {"HGETALL", sh->files_key};
		rds_cmd_argv(sh->r, on_show_files, sh, 2, argv, NULL);
	}
}

static void on_show_record(void *ud, redisReply *reply, const char *err)
{
	static const struct keys_shown shown[] = {{"kind", "kind", 's'},
						  {"officialName", "officialName", 's'},
						  {"tradeName", "tradeName", 's'},
						  {"taxID", "taxID", 's'},
						  {"status", "status", 's'},
						  {"owner", "owner", 's'},
						  {"key_id", "createdWithKey", 's'},
						  {"created_at", "createdAt", 't'},
						  {"postback_url", "postbackUrl", 's'},
						  {"balance", "balance", 'i'},
						  {"files", "fileCount", 'i'},
						  {"file_bytes", "fileBytes", 'i'},
						  {"reviewed_at", "reviewedAt", 't'},
						  {"review_reason", "reviewReason", 's'}};
	struct show *sh = ud;
	yajl_gen g = sh->g;
	const char *details, *owner;
	yajl_val d = NULL;
	char perr[128], gp[KS_PREFIX_MAX], k[KS_KEY_MAX], cap[16];

	if (err) {
		show_end(sh, -1, err);
		return;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0) {
		show_end(sh, ACCOUNTS_NOT_FOUND, NULL);
		return;
	}
	owner = rds_hash_field(reply, "owner");
	snprintf(sh->owner, sizeof(sh->owner), "%s", owner ? owner : "");
	json_open(g);
	json_str(g, "id");
	json_str(g, sh->id);
	json_str(g, "environment");
	json_str(g, env_name(sh->env));
	keys_write_fields(g, reply, shown, sizeof(shown) / sizeof(shown[0]));
	/* the KYC data kept from the request: address, documents, representatives */
	details = rds_hash_field(reply, "details");
	if (details && json_parse_object(details, strlen(details), &d, perr, sizeof(perr)) == 0) {
		for (size_t i = 0; i < d->u.object.len; i++) {
			json_str(g, d->u.object.keys[i]);
			json_write_value(g, d->u.object.values[i]);
		}
		yajl_tree_free(d);
	}
	ks_env_prefix(gp, sizeof(gp), sh->cfg->prefix, sh->env);
	ks_env_kyc_key(k, sizeof(k), sh->cfg->prefix, sh->env);
	snprintf(cap, sizeof(cap), "%d", CLAIMS_SHOWN);
	{
		const char *argv[] = {k, gp, sh->id, cap};
		rds_script(sh->r, on_show_claims, sh, SCRIPT_ACCOUNT_CLAIMS, 1, 4, argv, NULL);
	}
}

void review_show(struct rds *r, const struct config *cfg, enum env env, const char *id, int files,
		 store_fn cb, void *ud)
{
	struct show *sh;
	char k[KS_KEY_MAX];

	if (!ids_is_ulid(id) || ks_account_key(k, sizeof(k), cfg->prefix, env, id) < 0) {
		cb(ud, ACCOUNTS_NOT_FOUND, NULL, NULL);
		return;
	}
	sh = mem_new(struct show);
	sh->r = r;
	sh->cfg = cfg;
	sh->env = env;
	sh->cb = cb;
	sh->ud = ud;
	sh->files = files;
	sh->g = json_gen_new();
	snprintf(sh->id, sizeof(sh->id), "%s", id);
	ks_files_key(sh->files_key, sizeof(sh->files_key), cfg->prefix, ks_shard_of(id), id);
	{
		const char *argv[] = {"HGETALL", k};
		rds_cmd_argv(r, on_show_record, sh, 2, argv, NULL);
	}
}

/* -- approve, reject -- */

struct decide {
	struct rds *r;
	const struct config *cfg;
	enum env env;
	store_fn cb;
	void *ud;
	int approve;
	char *reason;
	char id[IDS_ULID_LEN + 1];
	char key[KS_KEY_MAX];
	char before[16];
};

static void decide_end(struct decide *dc, int result, const char *json, const char *err)
{
	dc->cb(dc->ud, result, json, err);
	free(dc->reason);
	free(dc);
}

static void on_decision_recorded(void *ud, redisReply *reply, const char *err)
{
	struct decide *dc = ud;
	yajl_gen g;
	const char *s;
	size_t len;

	/* the decision holds already (the environment's status is what counts);
	 * the record's copy is for reading */
	if (err)
		log_warn("account %s: the review is decided, but its record is not updated: %s",
			 dc->id, err);
	g = json_gen_new();
	json_open(g);
	json_str(g, "id");
	json_str(g, dc->id);
	json_str(g, "kycStatus");
	json_str(g, dc->approve ? "APPROVED" : "REJECTED");
	json_str(g, "previous");
	json_str_or_null(g, review_status_name(dc->before));
	json_close(g);
	s = json_buf(g, &len);
	decide_end(dc, 0, s, NULL);
	yajl_gen_free(g);
}

static void on_reviewed(void *ud, redisReply *reply, const char *err)
{
	struct decide *dc = ud;
	const char *what = NULL;
	char at[24];

	if (err) {
		decide_end(dc, -1, NULL, err);
		return;
	}
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements >= 1 &&
	    reply_is_str(reply->element[0]))
		what = reply->element[0]->str;
	if (what && strcmp(what, "not_found") == 0) {
		decide_end(dc, ACCOUNTS_NOT_FOUND, NULL, NULL);
		return;
	}
	if (what && strcmp(what, "platform") == 0) {
		decide_end(dc, ACCOUNTS_PLATFORM, NULL, NULL);
		return;
	}
	if (!what || strcmp(what, "ok") != 0 || reply->elements != 2 ||
	    !reply_is_str(reply->element[1])) {
		decide_end(dc, -1, NULL, "unexpected reply from account_review");
		return;
	}
	snprintf(dc->before, sizeof(dc->before), "%s", reply->element[1]->str);
	snprintf(at, sizeof(at), "%llu", (unsigned long long)ids_now_ms());
	{
		const char *argv[] = {
		    "HSET",	   dc->key, "kyc",	     dc->approve ? "approved" : "rejected",
		    "reviewed_at", at,	    "review_reason", dc->reason};
		rds_cmd_argv(dc->r, on_decision_recorded, dc, 8, argv, NULL);
	}
}

static void on_decide_record(void *ud, redisReply *reply, const char *err)
{
	struct decide *dc = ud;
	char gp[KS_PREFIX_MAX], k[KS_KEY_MAX];
	const char *kind, *owner;

	if (err) {
		decide_end(dc, -1, NULL, err);
		return;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
	    !reply_is_str(reply->element[0])) {
		decide_end(dc, ACCOUNTS_NOT_FOUND, NULL, NULL);
		return;
	}
	kind = reply->element[0]->str;
	owner = reply_is_str(reply->element[1]) ? reply->element[1]->str : "";
	if (strcmp(kind, "platform") == 0) {
		decide_end(dc, ACCOUNTS_PLATFORM, NULL, NULL);
		return;
	}
	ks_env_prefix(gp, sizeof(gp), dc->cfg->prefix, dc->env);
	ks_env_kyc_key(k, sizeof(k), dc->cfg->prefix, dc->env);
	{
		const char *argv[] = {k, gp, dc->id, dc->approve ? "approved" : "rejected", owner};
		rds_script(dc->r, on_reviewed, dc, SCRIPT_ACCOUNT_REVIEW, 1, 5, argv, NULL);
	}
}

void review_decide(struct rds *r, const struct config *cfg, enum env env, const char *id,
		   int approve, const char *reason, store_fn cb, void *ud)
{
	struct decide *dc;
	char k[KS_KEY_MAX];

	if (!ids_is_ulid(id) || ks_account_key(k, sizeof(k), cfg->prefix, env, id) < 0) {
		cb(ud, ACCOUNTS_NOT_FOUND, NULL, NULL);
		return;
	}
	dc = mem_new(struct decide);
	dc->r = r;
	dc->cfg = cfg;
	dc->env = env;
	dc->cb = cb;
	dc->ud = ud;
	dc->approve = approve;
	dc->reason = mem_strdup(reason ? reason : "");
	snprintf(dc->id, sizeof(dc->id), "%s", id);
	snprintf(dc->key, sizeof(dc->key), "%s", k);
	{
		const char *argv[] = {"HMGET", k, "kind", "owner"};
		rds_cmd_argv(r, on_decide_record, dc, 4, argv, NULL);
	}
}
