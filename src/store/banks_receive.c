/* banks_receive: the write of what banks report (docs/banks.md): each Pix
 * of a bank's webhook call (or of a reconciliation), and each item it sent
 * that failed the standard's schema, is a shardq item, written by the script
 * bank_pix with every other one of its shard that arrived in the same turn
 * of the loop, before the bank gets its answer. The connections themselves
 * are banks.c's. */
#include "pixrelay/store/banks.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/metrics.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/pix/event.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/redis/shardq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCH_MAX 128	   /* Pix and refusals in one bank_pix call */
#define CALL_NOTE_MS 60000 /* a connection's last call written this often */
#define CALL_NOTES 64	   /* connections whose last write is remembered */

/* ---- receiving ---- */

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
	/* per Pix: outcome, reason, event, charge (owned) */
	char *(*results)[4];
	size_t accepted, duplicates;
	struct banks_queue *q;
};

/* A Pix of a request, or one of its refusals, waiting for its shard's call. */
struct item {
	struct shardq_item link; /* first */
	struct request *req;
	size_t index; /* in batch.items, or in batch.refused */
	int refusal;  /* 1: batch.refused[index] */
	char evt[EVENT_ID_MAX];
	char (*revt)[EVENT_ID_MAX]; /* one per refund */
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
		for (int j = 0; j < 4; j++)
			free(rq->results[i][j]);
	free(rq->results);
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
	unsigned h = 5381;
	char key[KS_KEY_MAX], ms[32];
	const char *argv[2] = {key, ms};

	for (const char *p = id; *p; p++)
		h = h * 33 + (unsigned char)*p;
	h %= CALL_NOTES;
	if (strcmp(q->noted[h].id, id) == 0 && now - q->noted[h].ms < CALL_NOTE_MS)
		return;
	snprintf(q->noted[h].id, sizeof(q->noted[h].id), "%s", id);
	q->noted[h].ms = now;
	ks_bank_key(key, sizeof(key), q->cfg->prefix, ks_shard_of(id), id);
	snprintf(ms, sizeof(ms), "%lld", now);
	rds_script(q->r, NULL, NULL, SCRIPT_BANK_LAST_CALL, 1, 2, argv, NULL);
}

/* The answer to the bank once every item is written. */
static void request_finish(struct request *rq)
{
	yajl_gen g;
	const char *json;
	size_t len;

	if (rq->failed) {
		rq->cb(rq->ud, -1, NULL, rq->err);
		request_free(rq);
		return;
	}
	/* answered 200 (api_banks.c answers 400 when every item was refused) */
	if (strcmp(rq->source, "webhook") == 0 && (rq->batch.n > 0 || rq->batch.nrefused == 0))
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
		json_str_or_null(g, f->e2e[0] ? f->e2e : NULL);
		json_str(g, "error");
		json_str(g, f->err);
		json_close(g);
	}
	json_close_array(g);
	json_str(g, "pix");
	json_open_array(g);
	for (size_t i = 0; i < rq->batch.n; i++) {
		static const char *const names[4] = {"outcome", "reason", "event", "charge"};
		json_open(g);
		json_str(g, "endToEndId");
		json_str(g, rq->batch.items[i].e2e);
		for (int j = 0; j < 4; j++) {
			json_str(g, names[j]);
			json_str_or_null(g, rq->results[i][j] && rq->results[i][j][0]
						? rq->results[i][j]
						: NULL);
		}
		json_close(g);
	}
	json_close_array(g);
	json_close(g);
	json = json_buf(g, &len);
	rq->cb(rq->ud, 0, json, NULL);
	yajl_gen_free(g);
	request_free(rq);
}

static void item_done(struct item *it)
{
	struct request *rq = it->req;

	free(it->revt);
	free(it);
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

/* The day of a moment in Brasilia time, "YYYY-MM-DD". */
static void brasilia_day(char out[11], long long ms)
{
	char t[TIMEFMT_LEN + 1];

	timefmt_format(
	    t, (uint64_t)(ms > BANKS_BRASILIA_OFFSET_MS ? ms - BANKS_BRASILIA_OFFSET_MS : 0));
	memcpy(out, t, 10);
	out[10] = '\0';
}

/* One call's items and the strings their arguments point to. */
struct batch {
	struct banks_queue *q;
	struct item **items;
	unsigned n;
	char **own; /* strings to free with the batch */
	size_t nown, capown;
};

static const char *own(struct batch *b, char *s)
{
	if (b->nown == b->capown) {
		b->capown = b->capown ? 2 * b->capown : 64;
		b->own = mem_realloc(b->own, b->capown * sizeof(*b->own));
	}
	b->own[b->nown++] = s;
	return s;
}

static void batch_free(struct batch *b)
{
	for (size_t i = 0; i < b->nown; i++)
		free(b->own[i]);
	free(b->own);
	free(b->items);
	free(b);
}

static void take(char **slot, const redisReply *e)
{
	*slot = mem_strdup(e->type == REDIS_REPLY_STRING ? e->str : "");
}

static void on_batch(void *ud, redisReply *reply, const char *err)
{
	struct batch *b = ud;
	size_t at = 0, want = 0;

	for (unsigned i = 0; i < b->n; i++)
		if (!b->items[i]->refusal)
			want += 4 + 2 * b->items[i]->req->batch.items[b->items[i]->index].nrefunds;
	if (!err && (reply->type != REDIS_REPLY_ARRAY || reply->elements != want))
		err = "unexpected reply from bank_pix";
	for (unsigned i = 0; i < b->n; i++) {
		struct item *it = b->items[i];
		struct request *rq = it->req;

		if (err) {
			item_fail(it, err);
			continue;
		}
		if (it->refusal) {
			metrics_bank_pix(it->req->source, "refused");
			item_done(it);
			continue;
		}
		for (int j = 0; j < 4; j++)
			take(&rq->results[it->index][j], reply->element[at + (size_t)j]);
		if (strcmp(rq->results[it->index][0], "duplicate") == 0) {
			rq->duplicates++;
			metrics_bank_pix(rq->source, "duplicate");
		} else {
			rq->accepted++;
			metrics_bank_pix(rq->source, strcmp(rq->results[it->index][0], "paid") == 0
							 ? "paid"
							 : rq->results[it->index][1]);
		}
		at += 4 + 2 * rq->batch.items[it->index].nrefunds;
		item_done(it);
	}
	batch_free(b);
}

static void send_batch(void *owner, int shard, struct shardq_item **links, unsigned n)
{
	struct banks_queue *q = owner;
	struct batch *b = mem_new(struct batch);
	char sp[KS_PREFIX_MAX], key[KS_KEY_MAX], now[32], now_txt[TIMEFMT_LEN + 1], ttl[32];
	char *npix, *nref;
	const char **argv;
	size_t argc = 7, cap = 7, a; /* the key and ARGV[1..6] */
	uint64_t ms = ids_now_ms();
	unsigned pix = 0, refused = 0;

	b->q = q;
	b->items = (struct item **)links;
	b->n = n;
	for (unsigned i = 0; i < n; i++) {
		struct item *it = b->items[i];
		if (it->refusal) {
			refused++;
			cap += 6;
		} else {
			pix++;
			cap += 15 + 5 * it->req->batch.items[it->index].nrefunds;
		}
	}
	argv = mem_calloc(cap, sizeof(*argv));
	ks_shard_prefix(sp, sizeof(sp), q->cfg->prefix, shard);
	ks_bank_pix_key(key, sizeof(key), q->cfg->prefix, shard);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ms);
	timefmt_format(now_txt, ms);
	snprintf(ttl, sizeof(ttl), "%ld", q->cfg->event_retention_days * 86400);
	npix = mem_printf("%u", pix);
	nref = mem_printf("%u", refused);
	argv[0] = key;
	argv[1] = sp;
	argv[2] = now;
	argv[3] = now_txt;
	argv[4] = ttl;
	argv[5] = own(b, npix);
	argv[6] = own(b, nref);
	a = 7;
	argc = 7;
	for (unsigned i = 0; i < n; i++) {
		struct item *it = b->items[i];
		const struct request *rq = it->req;
		const struct bankpix *p;
		char day[11], cid[27] = "";
		int64_t refunded = 0;

		if (it->refusal)
			continue;
		p = &rq->batch.items[it->index];
		brasilia_day(day, p->horario_ms);
		if (p->txid[0] && bankpix_charge_of_txid(p->txid, cid) == 0 &&
		    ks_shard_of(cid) != ks_shard_of(rq->conn.account))
			cid[0] = '\0';
		for (size_t j = 0; j < p->nrefunds; j++)
			if (p->refunds[j].status == BANKPIX_DEVOLVIDO)
				refunded += p->refunds[j].cents;
		argv[a++] = rq->conn.id;
		argv[a++] = rq->conn.account;
		argv[a++] = env_name(rq->conn.env);
		argv[a++] = rq->source;
		argv[a++] = own(b, mem_strdup(day));
		argv[a++] = p->e2e;
		argv[a++] = p->txid;
		argv[a++] = own(b, mem_strdup(cid));
		argv[a++] = own(b, mem_printf("%lld", (long long)p->cents));
		argv[a++] = own(b, mem_printf("%lld", p->horario_ms));
		argv[a++] = p->json;
		/* what a charge it pays keeps: the Pix, with where it came from */
		argv[a++] = own(b, mem_printf("{\"connection\":\"%s\",\"source\":\"%s\",%s",
					      rq->conn.id, rq->source, p->json + 1));
		argv[a++] = it->evt;
		argv[a++] = own(b, mem_printf("%lld", (long long)refunded));
		argv[a++] = own(b, mem_printf("%zu", p->nrefunds));
		for (size_t j = 0; j < p->nrefunds; j++) {
			argv[a++] = p->refunds[j].id;
			argv[a++] = bankpix_refund_status_name(p->refunds[j].status);
			argv[a++] = own(b, mem_printf("%lld", (long long)p->refunds[j].cents));
			argv[a++] = it->revt[j];
			argv[a++] = p->refunds[j].json;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		struct item *it = b->items[i];
		const struct bankpix_refusal *f;
		char day[11];

		if (!it->refusal)
			continue;
		f = &it->req->batch.refused[it->index];
		brasilia_day(day, (long long)ms);
		argv[a++] = it->req->conn.id;
		argv[a++] = it->req->source;
		argv[a++] = own(b, mem_strdup(day));
		argv[a++] = own(b, mem_printf("%zu", f->index));
		argv[a++] = f->e2e;
		argv[a++] = f->err;
	}
	argc = a;
	rds_script(q->r, on_batch, b, SCRIPT_BANK_PIX, 1, (int)argc, argv, NULL);
	free(argv);
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
	/* what the write needs is the id, account and key: never the
	 * credentials (their strings are the caller's) */
	memset(&rq->conn.api, 0, sizeof(rq->conn.api));
	snprintf(rq->source, sizeof(rq->source), "%s", source);
	rq->batch = *b;
	memset(b, 0, sizeof(*b));
	rq->results = rq->batch.n ? mem_calloc(rq->batch.n, sizeof(*rq->results)) : NULL;
	rq->waiting = (unsigned)(rq->batch.n + rq->batch.nrefused);
	if (rq->waiting == 0) {
		request_finish(rq);
		return;
	}
	for (size_t i = 0; i < rq->batch.n + rq->batch.nrefused; i++) {
		struct item *it = mem_new(struct item);

		it->req = rq;
		it->refusal = i >= rq->batch.n;
		it->index = it->refusal ? i - rq->batch.n : i;
		if (!it->refusal) {
			const struct bankpix *p = &rq->batch.items[it->index];

			ks_event_id(shard, it->evt);
			if (p->nrefunds) {
				it->revt = mem_calloc(p->nrefunds, sizeof(*it->revt));
				for (size_t j = 0; j < p->nrefunds; j++)
					ks_event_id(shard, it->revt[j]);
			}
		}
		shardq_add(q->q, shard, &it->link);
	}
}
