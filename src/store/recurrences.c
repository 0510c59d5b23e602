/* recurrences: the store of Pix Automático's recurrences: created
 * (rec_create.lua), read (HGETALL of rec:<id>), listed (rec_list.lua), what
 * the bank said of one written with its event (rec_status.lua), and those
 * the reconciliation asks about (rec_open.lua). The values are
 * pix/recurrence.c's; the bank's calls relay/bankrec.c's. */
#include "pixrelay/store/recurrences.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/pix/bankday.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/redis/rargs.h"
#include "pixrelay/redis/scripts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool recurrences_valid_id(const char *id)
{
	return id && strncmp(id, "rec_", 4) == 0 && ids_is_ulid(id + 4);
}

int recurrences_new_id(const char *account, char *out)
{
	int shard = ks_shard_of(account);
	char ulid[IDS_ULID_LEN + 1];

	if (shard < 0)
		return -1;
	ks_ulid(shard, ulid);
	snprintf(out, RECURRENCE_ID_MAX, "rec_%s", ulid);
	return 0;
}

/* One call's callback and the JSON it answers with. */
struct call {
	store_fn cb;
	void *ud;
	char *json;
	enum env env;
	char account[32];
	recurrences_fn rcb;
};

static struct call *call_new(store_fn cb, void *ud)
{
	struct call *c = mem_new(struct call);

	c->cb = cb;
	c->ud = ud;
	return c;
}

static void call_free(struct call *c)
{
	free(c->json);
	free(c);
}

static bool all_strings(const redisReply *r, size_t from)
{
	for (size_t i = from; i < r->elements; i++)
		if (r->element[i]->type != REDIS_REPLY_STRING)
			return false;
	return true;
}

static void on_created(void *ud, redisReply *reply, const char *err)
{
	struct call *c = ud;

	if (err)
		c->cb(c->ud, -1, NULL, err);
	else if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 || !all_strings(reply, 0))
		c->cb(c->ud, -1, NULL, "unexpected reply from rec_create");
	else if (strcmp(reply->element[0]->str, "created") != 0)
		c->cb(c->ud, -1, NULL, "the bank's idRec names another recurrence already");
	else
		c->cb(c->ud, 0, c->json, NULL);
	call_free(c);
}

void recurrences_create(struct rds *r, const struct config *cfg, enum env env, const char *account,
			const struct recurrences_new *n, store_fn cb, void *ud)
{
	int shard = ks_shard_of(account);
	uint64_t now = ids_now_ms();
	char k[5][KS_KEY_MAX], day[11], created[24], at[TIMEFMT_LEN + 1], *image, *head;
	struct recurrence_view v;
	struct call *c;
	struct rargs a;

	if (shard < 0 || ks_shard_of(n->id + 4) != shard) {
		cb(ud, -1, NULL, "the account id names no shard");
		return;
	}
	image = mem_printf("%s/qrcode/%s", cfg->base_url, n->id);
	memset(&v, 0, sizeof(v));
	v.id = n->id;
	v.idrec = n->idrec;
	v.connection = n->connection;
	v.br_code = n->br_code;
	v.image_url = image;
	v.in = n->in;
	v.created_ms = now;
	head = recurrence_render_head(&v);
	timefmt_format(at, now);
	snprintf(created, sizeof(created), "%llu", (unsigned long long)now);
	c = call_new(cb, ud);
	c->json = recurrence_assemble(head, recurrence_status_name(RECURRENCE_CREATED), at, NULL);
	ks_recurrence_key(k[0], sizeof(k[0]), cfg->prefix, shard, n->id);
	ks_recurrence_index_key(k[1], sizeof(k[1]), cfg->prefix, shard, account);
	ks_recurrence_idrec_key(k[2], sizeof(k[2]), cfg->prefix, shard, account);
	ks_recurrence_open_key(k[3], sizeof(k[3]), cfg->prefix, shard, n->connection);
	bankday_date(day, (long long)now);
	ks_bank_day_key(k[4], sizeof(k[4]), cfg->prefix, shard, n->connection, day);
	rargs_init(&a);
	for (int i = 0; i < 5; i++)
		rargs_str(&a, k[i]);
	rargs_str(&a, n->id);
	rargs_str(&a, account);
	rargs_str(&a, env_name(env));
	rargs_str(&a, n->connection);
	rargs_str(&a, n->idrec);
	rargs_str(&a, head);
	rargs_str(&a, created);
	rargs_str(&a, at);
	rargs_str(&a, n->in->postback_url ? n->in->postback_url : "");
	rargs_str(&a, n->br_code);
	rargs_ll(&a, (long long)cfg->event_retention_days * 86400);
	rds_script(r, on_created, c, SCRIPT_REC_CREATE, 5, a.argc, a.argv, a.lens);
	rargs_deinit(&a);
	free(head);
	free(image);
}

/* ---- reads ---- */

static void on_read(void *ud, redisReply *reply, const char *err)
{
	struct call *c = ud;
	const char *account, *env, *head, *status, *updated, *closing;
	struct recurrences_record rec;
	char *json;

	if (err) {
		c->rcb(c->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY) {
		c->rcb(c->ud, -1, NULL, "unexpected reply reading a recurrence");
		goto done;
	}
	account = rds_hash_field(reply, "account");
	env = rds_hash_field(reply, "env");
	head = rds_hash_field(reply, "head");
	status = rds_hash_field(reply, "status");
	updated = rds_hash_field(reply, "updated_at");
	closing = rds_hash_field(reply, "closing");
	if (!account || !env || !head || !status || !updated || strcmp(account, c->account) != 0 ||
	    strcmp(env, env_name(c->env)) != 0) {
		c->rcb(c->ud, RECURRENCES_NOT_FOUND, NULL, NULL);
		goto done;
	}
	json = recurrence_assemble(head, status, updated, closing);
	rec.id = rds_hash_field(reply, "id");
	rec.idrec = rds_hash_field(reply, "idrec");
	rec.connection = rds_hash_field(reply, "connection");
	rec.status = status;
	rec.json = json;
	if (!rec.id || !rec.idrec || !rec.connection)
		c->rcb(c->ud, -1, NULL, "a recurrence's record lacks its fields");
	else
		c->rcb(c->ud, 0, &rec, NULL);
	free(json);
done:
	call_free(c);
}

void recurrences_read(struct rds *r, const struct config *cfg, enum env env, const char *account,
		      const char *id, recurrences_fn cb, void *ud)
{
	char k[KS_KEY_MAX];
	const char *argv[] = {"HGETALL", k};
	int shard = recurrences_valid_id(id) ? ks_shard_of(id + 4) : -1;
	struct call *c;

	if (shard < 0 || shard != ks_shard_of(account)) {
		cb(ud, RECURRENCES_NOT_FOUND, NULL, NULL);
		return;
	}
	c = call_new(NULL, ud);
	c->rcb = cb;
	c->env = env;
	snprintf(c->account, sizeof(c->account), "%s", account);
	ks_recurrence_key(k, sizeof(k), cfg->prefix, shard, id);
	rds_cmd_argv(r, on_read, c, 2, argv, NULL);
}

static void on_got(void *ud, int result, const struct recurrences_record *rec, const char *err)
{
	struct call *c = ud;

	c->cb(c->ud, result, result == 0 ? rec->json : NULL, err);
	call_free(c);
}

void recurrences_get(struct rds *r, const struct config *cfg, enum env env, const char *account,
		     const char *id, store_fn cb, void *ud)
{
	recurrences_read(r, cfg, env, account, id, on_got, call_new(cb, ud));
}

static void on_list(void *ud, redisReply *reply, const char *err)
{
	struct call *c = ud;
	yajl_gen g;
	const char *s;
	size_t n, len;

	if (err) {
		c->cb(c->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 2 ||
	    (reply->elements - 2) % 4 != 0 || !all_strings(reply, 0)) {
		c->cb(c->ud, -1, NULL, "unexpected reply from rec_list");
		goto done;
	}
	n = (reply->elements - 2) / 4;
	g = json_gen_new();
	json_open(g);
	json_str(g, "recurrences");
	json_open_array(g);
	for (size_t i = 0; i < n; i++) {
		redisReply **e = reply->element + i * 4;
		char *json = recurrence_assemble(e[0]->str, e[1]->str, e[2]->str, e[3]->str);
		json_raw(g, json, strlen(json));
		free(json);
	}
	json_close_array(g);
	page_write_next(g, reply->element[reply->elements - 2]->str,
			reply->element[reply->elements - 1]->str);
	json_close(g);
	s = json_buf(g, &len);
	c->cb(c->ud, 0, s, NULL);
	yajl_gen_free(g);
done:
	call_free(c);
}

void recurrences_list(struct rds *r, const struct config *cfg, enum env env, const char *account,
		      const char *status, int limit, const struct page_cursor *from, store_fn cb,
		      void *ud)
{
	char idx[KS_KEY_MAX], kp[KS_KEY_MAX], lim[16], cap[16];
	int shard = ks_shard_of(account);
	const char *argv[7];

	(void)env; /* an account lives in one environment */
	if (shard < 0) {
		cb(ud, -1, NULL, "the account id names no shard");
		return;
	}
	ks_recurrence_index_key(idx, sizeof(idx), cfg->prefix, shard, account);
	ks_recurrence_key(kp, sizeof(kp), cfg->prefix, shard, "");
	snprintf(lim, sizeof(lim), "%d", limit);
	snprintf(cap, sizeof(cap), "%d", RECURRENCES_SCAN_CAP);
	argv[0] = idx;
	argv[1] = kp;
	argv[2] = from->score;
	argv[3] = from->id;
	argv[4] = status ? status : "";
	argv[5] = lim;
	argv[6] = cap;
	rds_script(r, on_list, call_new(cb, ud), SCRIPT_REC_LIST, 1, 7, argv, NULL);
}

/* ---- what the bank said ---- */

static const char *const source_names[] = {"webhook", "reconciliation", "request"};

static void on_heard(void *ud, redisReply *reply, const char *err)
{
	struct call *c = ud;
	const char *what;
	char *json;

	if (err) {
		c->cb(c->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 || !all_strings(reply, 0)) {
		c->cb(c->ud, -1, NULL, "unexpected reply from rec_status");
		goto done;
	}
	what = reply->element[0]->str;
	if (strcmp(what, "unknown") == 0) {
		c->cb(c->ud, RECURRENCES_UNKNOWN, NULL, NULL);
		goto done;
	}
	if (reply->elements != 6) {
		c->cb(c->ud, -1, NULL, "unexpected reply from rec_status");
		goto done;
	}
	json = recurrence_assemble(reply->element[3]->str, reply->element[2]->str,
				   reply->element[4]->str, reply->element[5]->str);
	c->cb(c->ud, strcmp(what, "changed") == 0 ? 0 : RECURRENCES_DUPLICATE, json, NULL);
	free(json);
done:
	call_free(c);
}

void recurrences_heard(struct rds *r, const struct config *cfg, enum env env, const char *account,
		       const struct recurrence_heard *h, enum recurrences_source source,
		       store_fn cb, void *ud)
{
	int shard = ks_shard_of(account);
	char k[KS_KEY_MAX], sp[KS_PREFIX_MAX], evt[KS_EVENT_ID_MAX], at[TIMEFMT_LEN + 1], day[11];
	long long now = (long long)ids_now_ms();
	char *closing = NULL;
	struct rargs a;

	if (shard < 0) {
		cb(ud, -1, NULL, "the account id names no shard");
		return;
	}
	ks_recurrence_idrec_key(k, sizeof(k), cfg->prefix, shard, account);
	ks_shard_prefix(sp, sizeof(sp), cfg->prefix, shard);
	ks_event_id(shard, evt);
	timefmt_format(at, (uint64_t)now);
	if (recurrence_is_final(h->status))
		closing = recurrence_closing_json(h);
	rargs_init(&a);
	rargs_str(&a, k);
	rargs_str(&a, sp);
	rargs_str(&a, account);
	rargs_str(&a, env_name(env));
	rargs_str(&a, h->idrec);
	rargs_str(&a, recurrence_status_name(h->status));
	/* the moment pixrelay took the change: the bank's own is in its
	 * atualizacao, of a clock pixrelay does not judge */
	rargs_str(&a, at);
	rargs_ll(&a, now);
	rargs_str(&a, closing ? closing : "");
	rargs_str(&a, evt);
	rargs_str(&a, source_names[source]);
	rargs_ll(&a, (long long)cfg->event_retention_days * 86400);
	rargs_str(&a, source == RECURRENCES_RECONCILIATION ? "1" : "0");
	bankday_date(day, now);
	rargs_str(&a, day);
	rds_script(r, on_heard, call_new(cb, ud), SCRIPT_REC_STATUS, 1, (int)a.argc, a.argv,
		   a.lens);
	rargs_deinit(&a);
	free(closing);
}

static void on_brcode(void *ud, redisReply *reply, const char *err)
{
	struct call *c = ud;

	if (err)
		c->cb(c->ud, -1, NULL, err);
	else if (reply->type == REDIS_REPLY_STRING)
		c->cb(c->ud, 0, reply->str, NULL);
	else
		c->cb(c->ud, RECURRENCES_NOT_FOUND, NULL, NULL);
	call_free(c);
}

void recurrences_find_brcode(struct rds *r, const struct config *cfg, const char *id, store_fn cb,
			     void *ud)
{
	char k[KS_KEY_MAX];
	const char *argv[] = {"HGET", k, "br_code"};
	int shard = recurrences_valid_id(id) ? ks_shard_of(id + 4) : -1;

	if (shard < 0) {
		cb(ud, RECURRENCES_NOT_FOUND, NULL, NULL);
		return;
	}
	ks_recurrence_key(k, sizeof(k), cfg->prefix, shard, id);
	rds_cmd_argv(r, on_brcode, call_new(cb, ud), 3, argv, NULL);
}

static void on_open(void *ud, redisReply *reply, const char *err)
{
	struct call *c = ud;
	char *out;
	size_t len = 0;

	if (err) {
		c->cb(c->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY || !all_strings(reply, 0)) {
		c->cb(c->ud, -1, NULL, "unexpected reply from rec_open");
		goto done;
	}
	out = mem_calloc(reply->elements * (RECURRENCE_IDREC_LEN + 1) + 1, 1);
	for (size_t i = 0; i < reply->elements; i++) {
		if (reply->element[i]->len != RECURRENCE_IDREC_LEN)
			continue;
		if (len)
			out[len++] = ' ';
		memcpy(out + len, reply->element[i]->str, RECURRENCE_IDREC_LEN);
		len += RECURRENCE_IDREC_LEN;
	}
	c->cb(c->ud, 0, out, NULL);
	free(out);
done:
	call_free(c);
}

void recurrences_open(struct rds *r, const struct config *cfg, const char *account,
		      const char *conn, int max, store_fn cb, void *ud)
{
	int shard = ks_shard_of(account);
	char k[KS_KEY_MAX], kp[KS_KEY_MAX], n[16];
	const char *argv[3];

	if (shard < 0) {
		cb(ud, -1, NULL, "the account id names no shard");
		return;
	}
	ks_recurrence_open_key(k, sizeof(k), cfg->prefix, shard, conn);
	ks_recurrence_key(kp, sizeof(kp), cfg->prefix, shard, "");
	snprintf(n, sizeof(n), "%d", max);
	argv[0] = k;
	argv[1] = kp;
	argv[2] = n;
	rds_script(r, on_open, call_new(cb, ud), SCRIPT_REC_OPEN, 1, 3, argv, NULL);
}
