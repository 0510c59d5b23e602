/* banks_receive: the write of what banks report (docs/banks.md): each Pix
 * of a bank's webhook call (or of a reconciliation), and each item it sent
 * that failed the standard's schema, is a shardq item, written by the script
 * bank_pix with every other one of its shard that arrived in the same turn
 * of the loop, before the bank gets its answer. The connections themselves
 * are banks.c's. */
#include "pixrelay/store/banks_receive.h"

#include "pixrelay/core/hash.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/metrics.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/pix/bankday.h"
#include "pixrelay/pix/event.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/redis/rargs.h"
#include "pixrelay/redis/shardq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCH_MAX 128	   /* Pix and refused items in one bank_pix call */
#define CALL_NOTE_MS 60000 /* a connection's last call written this often */
#define CALL_NOTES 64	   /* connections whose last write is remembered */

/* ---- receiving ---- */

#define PIX_RESULTS 5	  /* outcome, reason, event, charge, the connection holding it */
#define REFUSAL_RESULTS 2 /* outcome, event */

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
	/* per Pix PIX_RESULTS strings, per refused item REFUSAL_RESULTS (owned) */
	char *(*results)[PIX_RESULTS];
	char *(*refusals)[REFUSAL_RESULTS];
	size_t accepted, duplicates, refused;
	struct banks_queue *q;
};

/* A Pix of a request, or one of its refusals, waiting for its shard's call,
 * with what the script is given of it besides the parsed item. */
struct item {
	struct shardq_item link; /* first */
	struct request *req;
	size_t index; /* in batch.items, or in batch.refused */
	int refusal;  /* 1: batch.refused[index] */
	char day[11]; /* of its horario, Brasilia time (a refusal without one: today) */
	char cid[27]; /* the charge its txid names in this account's shard ("" none) */
	char *keep;   /* what a charge it pays keeps: the Pix, with where it came from */
	int64_t refunded;
	char evt[EVENT_ID_MAX];
	char (*revt)[2][EVENT_ID_MAX]; /* two per refund (a MED refund may make two) */
};

struct banks_queue {
	struct rds *r;
	const struct config *cfg;
	struct shardq *q;
	/* when this process last wrote a connection's last call, by a hash of
	 * its id: two that share a slot cost a write more, never one less */
	struct {
		char id[BANKS_ID_MAX];
		long long ms;
	} noted[CALL_NOTES];
};

static void request_free(struct request *rq)
{
	for (size_t i = 0; rq->results && i < rq->batch.n; i++)
		for (int j = 0; j < PIX_RESULTS; j++)
			free(rq->results[i][j]);
	for (size_t i = 0; rq->refusals && i < rq->batch.nrefused; i++)
		for (int j = 0; j < REFUSAL_RESULTS; j++)
			free(rq->refusals[i][j]);
	free(rq->results);
	free(rq->refusals);
	bankpix_batch_deinit(&rq->batch);
	banks_conn_deinit(&rq->conn);
	free(rq);
}

/* Write that the bank of connection `id` called now, unless this process
 * did less than CALL_NOTE_MS ago: one command, not waited for, that leaves
 * a connection removed meanwhile removed. */
static void note_call(struct banks_queue *q, const char *id)
{
	long long now = (long long)ids_now_ms();
	uint32_t h = hash_fnv1a(id, HASH_FNV1A_INIT) % CALL_NOTES;
	char key[KS_KEY_MAX], ms[32];
	const char *argv[2] = {key, ms};

	if (strcmp(q->noted[h].id, id) == 0 && now - q->noted[h].ms < CALL_NOTE_MS)
		return;
	snprintf(q->noted[h].id, sizeof(q->noted[h].id), "%s", id);
	q->noted[h].ms = now;
	ks_bank_key(key, sizeof(key), q->cfg->prefix, ks_shard_of(id), id);
	snprintf(ms, sizeof(ms), "%lld", now);
	rds_script(q->r, NULL, NULL, SCRIPT_BANK_LAST_CALL, 1, 2, argv, NULL);
}

/* A result string, or null when it is "". */
static void str_or_null(yajl_gen g, const char *s)
{
	json_str_or_null(g, s && s[0] ? s : NULL);
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
	/* every item is recorded, the refused ones too: the call is answered 200 */
	if (strcmp(rq->source, "webhook") == 0)
		note_call(rq->q, rq->conn.id);
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
		str_or_null(g, f->e2e);
		json_str(g, "error");
		json_str(g, f->err);
		json_str(g, "reasons");
		json_raw(g, f->reasons, strlen(f->reasons));
		json_str(g, "outcome");
		str_or_null(g, rq->refusals[i][0]);
		json_str(g, "event");
		str_or_null(g, rq->refusals[i][1]);
		json_close(g);
	}
	json_close_array(g);
	json_str(g, "pix");
	json_open_array(g);
	for (size_t i = 0; i < rq->batch.n; i++) {
		static const char *const names[PIX_RESULTS] = {"outcome", "reason", "event",
							       "charge", "heldBy"};
		json_open(g);
		json_str(g, "endToEndId");
		json_str(g, rq->batch.items[i].e2e);
		for (int j = 0; j < PIX_RESULTS; j++) {
			json_str(g, names[j]);
			str_or_null(g, rq->results[i][j]);
		}
		json_close(g);
	}
	json_close_array(g);
	json_close(g);
	json = json_take(g);
	rq->cb(rq->ud, 0, json, NULL);
	free(json);
	request_free(rq);
}

static void item_free(struct item *it)
{
	free(it->keep);
	free(it->revt);
	free(it);
}

static void item_done(struct item *it)
{
	struct request *rq = it->req;

	item_free(it);
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

/* One call's items. */
struct batch {
	struct banks_queue *q;
	struct item **items;
	unsigned n;
};

static void take(char **slot, const redisReply *e)
{
	*slot = mem_strdup(e->type == REDIS_REPLY_STRING ? e->str : "");
}

/* The reply's elements for item `it`. */
static size_t reply_size(const struct item *it)
{
	if (it->refusal)
		return REFUSAL_RESULTS;
	return PIX_RESULTS + 3 * it->req->batch.items[it->index].nrefunds;
}

static void on_batch(void *ud, redisReply *reply, const char *err)
{
	struct batch *b = ud;
	size_t at = 0, want = 0;

	for (unsigned i = 0; i < b->n; i++)
		want += reply_size(b->items[i]);
	if (!err && (reply->type != REDIS_REPLY_ARRAY || reply->elements != want))
		err = "unexpected reply from bank_pix";
	for (unsigned i = 0; i < b->n; i++) {
		struct item *it = b->items[i];
		struct request *rq = it->req;
		size_t size;
		char **res;
		int nres;

		if (err) {
			item_fail(it, err);
			continue;
		}
		size = reply_size(it);
		res = it->refusal ? rq->refusals[it->index] : rq->results[it->index];
		nres = it->refusal ? REFUSAL_RESULTS : PIX_RESULTS;
		for (int j = 0; j < nres; j++)
			take(&res[j], reply->element[at + (size_t)j]);
		at += size;
		if (strcmp(res[0], "duplicate") == 0) {
			rq->duplicates++;
			metrics_bank_pix(rq->source, "duplicate");
		} else if (it->refusal) {
			rq->refused++;
			metrics_bank_pix(rq->source, "refused");
		} else {
			rq->accepted++;
			metrics_bank_pix(rq->source, strcmp(res[0], "paid") == 0 ? "paid" : res[1]);
		}
		item_done(it);
	}
	free(b->items);
	free(b);
}

/* The arguments of one Pix (see bank_pix.lua's header). */
static void pix_args(struct rargs *a, const struct item *it)
{
	const struct request *rq = it->req;
	const struct bankpix *p = &rq->batch.items[it->index];

	rargs_str(a, rq->conn.id);
	rargs_str(a, rq->conn.account);
	rargs_str(a, env_name(rq->conn.env));
	rargs_str(a, rq->source);
	rargs_str(a, it->day);
	rargs_str(a, p->e2e);
	rargs_str(a, p->txid);
	rargs_str(a, it->cid);
	rargs_ll(a, (long long)p->cents);
	rargs_ll(a, p->horario_ms);
	rargs_str(a, p->json);
	rargs_str(a, it->keep);
	rargs_str(a, it->evt);
	rargs_ll(a, (long long)it->refunded);
	rargs_ll(a, (long long)p->nrefunds);
	for (size_t j = 0; j < p->nrefunds; j++) {
		const struct bankpix_refund *f = &p->refunds[j];

		rargs_str(a, f->id);
		rargs_str(a, bankpix_refund_status_name(f->status));
		rargs_ll(a, (long long)f->cents);
		rargs_str(a, it->revt[j][0]);
		rargs_str(a, f->json);
		rargs_str(a, f->natureza);
		rargs_str(a, f->med ? "1" : "0");
		rargs_str(a, it->revt[j][1]);
	}
}

/* The arguments of one refused item (see bank_pix.lua's header). */
static void refusal_args(struct rargs *a, const struct item *it)
{
	const struct request *rq = it->req;
	const struct bankpix_refusal *f = &rq->batch.refused[it->index];

	rargs_str(a, rq->conn.id);
	rargs_str(a, rq->conn.account);
	rargs_str(a, env_name(rq->conn.env));
	rargs_str(a, rq->source);
	rargs_str(a, it->day);
	rargs_ll(a, (long long)f->index);
	rargs_str(a, f->id);
	rargs_str(a, f->e2e);
	if (f->cents >= 0)
		rargs_ll(a, (long long)f->cents);
	else
		rargs_str(a, "");
	rargs_str(a, it->evt);
	rargs_str(a, f->reasons);
	rargs_str(a, f->item);
}

static void send_batch(void *owner, int shard, struct shardq_item **links, unsigned n)
{
	struct banks_queue *q = owner;
	struct batch *b = mem_new(struct batch);
	char sp[KS_PREFIX_MAX], key[KS_KEY_MAX], now_txt[TIMEFMT_LEN + 1];
	uint64_t ms = ids_now_ms();
	unsigned pix = 0;
	struct rargs a;

	b->q = q;
	b->items = (struct item **)links;
	b->n = n;
	for (unsigned i = 0; i < n; i++)
		pix += !b->items[i]->refusal;
	ks_shard_prefix(sp, sizeof(sp), q->cfg->prefix, shard);
	ks_bank_pix_key(key, sizeof(key), q->cfg->prefix, shard);
	timefmt_format(now_txt, ms);
	rargs_init(&a);
	rargs_str(&a, key);
	rargs_str(&a, sp);
	rargs_ll(&a, (long long)ms);
	rargs_str(&a, now_txt);
	rargs_ll(&a, q->cfg->event_retention_days * 86400);
	rargs_ll(&a, pix);
	rargs_ll(&a, n - pix);
	/* the Pix first, then the refused items, each in the order given */
	for (unsigned i = 0; i < n; i++)
		if (!b->items[i]->refusal)
			pix_args(&a, b->items[i]);
	for (unsigned i = 0; i < n; i++)
		if (b->items[i]->refusal)
			refusal_args(&a, b->items[i]);
	rds_script(q->r, on_batch, b, SCRIPT_BANK_PIX, 1, a.argc, a.argv, a.lens);
	rargs_deinit(&a);
}

struct banks_queue *banks_queue_new(struct event_base *base, struct rds *r,
				    const struct config *cfg)
{
	struct banks_queue *q = mem_new(struct banks_queue);

	q->r = r;
	q->cfg = cfg;
	q->q = shardq_new(base, BATCH_MAX, 0, send_batch, drop, q);
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
	size_t all;

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
	rq->conn.client_subject = NULL;
	rq->conn.client_pins = NULL;
	/* what the write needs is the id, account and key: never the
	 * credentials (their strings are the caller's) */
	memset(&rq->conn.api, 0, sizeof(rq->conn.api));
	snprintf(rq->source, sizeof(rq->source), "%s", source);
	rq->batch = *b;
	memset(b, 0, sizeof(*b));
	rq->results = rq->batch.n ? mem_calloc(rq->batch.n, sizeof(*rq->results)) : NULL;
	rq->refusals =
	    rq->batch.nrefused ? mem_calloc(rq->batch.nrefused, sizeof(*rq->refusals)) : NULL;
	all = rq->batch.n + rq->batch.nrefused;
	rq->waiting = (unsigned)all;
	if (rq->waiting == 0) {
		request_finish(rq);
		return;
	}
	for (size_t i = 0; i < all; i++) {
		struct item *it = mem_new(struct item);

		it->req = rq;
		it->refusal = i >= rq->batch.n;
		it->index = it->refusal ? i - rq->batch.n : i;
		ks_event_id(shard, it->evt);
		if (it->refusal) {
			const struct bankpix_refusal *f = &rq->batch.refused[it->index];

			bankday_date(it->day,
				     f->horario_ms > 0 ? f->horario_ms : (long long)ids_now_ms());
		} else {
			const struct bankpix *p = &rq->batch.items[it->index];

			bankday_date(it->day, p->horario_ms);
			if (p->txid[0] && bankpix_charge_of_txid(p->txid, it->cid) == 0 &&
			    ks_shard_of(it->cid) != ks_shard_of(rq->conn.account))
				it->cid[0] = '\0';
			it->keep = mem_printf("{\"connection\":\"%s\",\"source\":\"%s\",%s",
					      rq->conn.id, rq->source, p->json + 1);
			if (p->nrefunds)
				it->revt = mem_calloc(p->nrefunds, sizeof(*it->revt));
			for (size_t j = 0; j < p->nrefunds; j++) {
				if (p->refunds[j].status == BANKPIX_DEVOLVIDO)
					it->refunded += p->refunds[j].cents;
				ks_event_id(shard, it->revt[j][0]);
				if (p->refunds[j].med)
					ks_event_id(shard, it->revt[j][1]);
			}
		}
		shardq_add(q->q, shard, &it->link);
	}
}
