/* banks_receive: the write of what banks report (docs/banks.md): each Pix
 * of a bank's webhook call (or of a reconciliation), and each item it sent
 * that failed the standard's schema, is a shardq item, written by the script
 * bank_pix with every other one of its shard that arrived in the same turn
 * of the loop, before the bank gets its answer. The connections themselves
 * are banks.c's. */
#include "pixrelay/store/banks_receive.h"

#include "pixrelay/store/banks_pix.h"

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
#include "pixrelay/redis/scripts.h"
#include "pixrelay/redis/shardq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCH_MAX 128	   /* Pix and refused items in one bank_pix call */
#define CALL_NOTE_MS 60000 /* a connection's last call written this often */
#define CALL_NOTES 64	   /* connections whose last write is remembered */

/* ---- receiving ---- */

static const char *const source_names[] = {"webhook", "reconciliation"};

/* One bank call: its connection, its answer, and how many of its items
 * are still to be written. */
struct request {
	struct banks_ref who;
	enum banks_source source;
	struct bankpix_batch batch;
	banks_received_fn cb;
	void *ud;
	unsigned waiting;
	int failed;
	char err[256];
	/* what became of each Pix, and of each refused item */
	struct banks_pix_heard *results, *refusals;
	struct banks_received counts;
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
	free(rq->results);
	free(rq->refusals);
	bankpix_batch_deinit(&rq->batch);
	free(rq);
}

/* Write that the bank of connection `id` called now, unless this process
 * did less than CALL_NOTE_MS ago: one command, not waited for, that leaves
 * a connection removed meanwhile removed. */
void banks_note_call(struct banks_queue *q, const char *id)
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

/* The answer to the bank: what each item became. */
static char *answer_json(const struct request *rq)
{
	yajl_gen g = json_gen_new();

	json_open(g);
	json_str(g, "received");
	json_int(g, (long long)rq->counts.received);
	json_str(g, "accepted");
	json_int(g, (long long)rq->counts.accepted);
	json_str(g, "duplicates");
	json_int(g, (long long)rq->counts.duplicates);
	json_str(g, "refused");
	json_open_array(g);
	for (size_t i = 0; i < rq->batch.nrefused; i++) {
		const struct bankpix_refusal *f = &rq->batch.refused[i];
		const struct banks_pix_heard *h = &rq->refusals[i];

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
		json_str(g, banks_pix_outcome_name(h->outcome));
		json_str(g, "event");
		str_or_null(g, h->event);
		json_close(g);
	}
	json_close_array(g);
	json_str(g, "pix");
	json_open_array(g);
	for (size_t i = 0; i < rq->batch.n; i++) {
		const struct banks_pix_heard *h = &rq->results[i];

		json_open(g);
		json_str(g, "endToEndId");
		json_str(g, rq->batch.items[i].e2e);
		json_str(g, "outcome");
		json_str(g, banks_pix_outcome_name(h->outcome));
		json_str(g, "reason");
		str_or_null(g, h->reason);
		json_str(g, "event");
		str_or_null(g, h->event);
		json_str(g, "charge");
		str_or_null(g, h->charge);
		json_str(g, "heldBy");
		str_or_null(g, h->held_by);
		json_close(g);
	}
	json_close_array(g);
	json_close(g);
	return json_take(g);
}

/* The answer once every item is written. */
static void request_finish(struct request *rq)
{
	char *json = NULL;

	if (rq->failed) {
		rq->cb(rq->ud, -1, NULL, rq->err);
		request_free(rq);
		return;
	}
	rq->counts.received = rq->batch.n + rq->batch.nrefused;
	/* every item is recorded, the refused ones too: the call is answered 200 */
	if (rq->source == BANKS_WEBHOOK) {
		banks_note_call(rq->q, rq->who.id);
		json = answer_json(rq);
	}
	rq->counts.json = json;
	rq->cb(rq->ud, 0, &rq->counts, NULL);
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

/* The answer's fields for item `it`. */
static size_t reply_size(const struct item *it)
{
	if (it->refusal)
		return BANKS_PIX_REFUSAL_FIELDS;
	return banks_pix_fields(it->req->batch.items[it->index].nrefunds);
}

/* Take the answer's `size` fields at f for item `it` (decoded into its
 * request): 0, or -1 when they do not decode. */
static int take(struct item *it, redisReply *const *f, size_t size)
{
	struct request *rq = it->req;
	struct banks_pix_heard *h;
	const char *metric;

	if (it->refusal) {
		h = &rq->refusals[it->index];
		if (banks_pix_decode_refusal(f, size, h) < 0)
			return -1;
	} else {
		h = &rq->results[it->index];
		if (banks_pix_decode(f, size, rq->batch.items[it->index].nrefunds, h) < 0)
			return -1;
	}
	if (h->outcome == BANKS_PIX_DUPLICATE) {
		rq->counts.duplicates++;
		metric = "duplicate";
	} else if (it->refusal) {
		rq->counts.refused++;
		metric = "refused";
	} else {
		rq->counts.accepted++;
		metric = h->outcome == BANKS_PIX_PAID ? "paid" : h->reason;
	}
	metrics_bank_pix(source_names[rq->source], metric);
	return 0;
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
		size_t size = reply_size(it);

		if (!err && take(it, reply->element + at, size) < 0)
			err = "unexpected reply from bank_pix";
		at += size;
		if (err)
			item_fail(it, err);
		else
			item_done(it);
	}
	free(b->items);
	free(b);
}

static void send_batch(void *owner, int shard, struct shardq_item **links, unsigned n)
{
	struct banks_queue *q = owner;
	struct batch *b = mem_new(struct batch);
	char sp[KS_PREFIX_MAX], key[KS_KEY_MAX], now_txt[TIMEFMT_LEN + 1];
	struct banks_pix_call call = {.key = key, .shard_prefix = sp, .now_text = now_txt};
	struct rargs a;

	b->q = q;
	b->items = (struct item **)links;
	b->n = n;
	for (unsigned i = 0; i < n; i++)
		call.npix += !b->items[i]->refusal;
	call.nrefused = n - call.npix;
	call.now_ms = (long long)ids_now_ms();
	call.retention_s = q->cfg->event_retention_days * 86400;
	ks_shard_prefix(sp, sizeof(sp), q->cfg->prefix, shard);
	ks_bank_pix_key(key, sizeof(key), q->cfg->prefix, shard);
	timefmt_format(now_txt, (uint64_t)call.now_ms);
	rargs_init(&a);
	banks_pix_args(&a, &call);
	/* the Pix first, then the refused items, each in the order given */
	for (unsigned i = 0; i < n; i++) {
		const struct item *it = b->items[i];
		const struct request *rq = it->req;
		const struct banks_pix_who w = {rq->who.id, rq->who.account, env_name(rq->who.env),
						source_names[rq->source], it->day};
		const struct banks_pix_item p = {
		    &rq->batch.items[it->index], it->cid, it->keep, it->evt,
		    (long long)it->refunded,	 it->revt};

		if (!it->refusal)
			banks_pix_args_pix(&a, &w, &p);
	}
	for (unsigned i = 0; i < n; i++) {
		const struct item *it = b->items[i];
		const struct request *rq = it->req;
		const struct banks_pix_who w = {rq->who.id, rq->who.account, env_name(rq->who.env),
						source_names[rq->source], it->day};

		if (it->refusal)
			banks_pix_args_refusal(&a, &w, &rq->batch.refused[it->index], it->evt);
	}
	rds_script(q->r, on_batch, b, SCRIPT_BANK_PIX, BANKS_PIX_NKEYS, a.argc, a.argv, a.lens);
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

void banks_receive(struct banks_queue *q, const struct banks_ref *who, enum banks_source source,
		   struct bankpix_batch *b, banks_received_fn cb, void *ud)
{
	struct request *rq;
	int shard = ks_shard_of(who->id);
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
	rq->who = *who;
	rq->source = source;
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
			    ks_shard_of(it->cid) != ks_shard_of(rq->who.account))
				it->cid[0] = '\0';
			it->keep = mem_printf("{\"connection\":\"%s\",\"source\":\"%s\",%s",
					      rq->who.id, source_names[rq->source], p->json + 1);
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
