/* ingest: a provider's notification, from its body to Redis. The body is
 * hostile: parsed by json.c, its ids printable and bounded, its event one
 * of three names, data.amount and data.status (when given) the spec's
 * integer cents and one of five statuses; the caller proves itself by a
 * Standard Webhooks signature or the compatibility header. Verified
 * notifications wait in a shardq and go per shard, up to 128 in one call of
 * the ingest script, which moves a known charge when the notification agrees
 * with it (charges_reply reads its answer) or relays an unknown one. The
 * handler is api/api_ingest.c; a bank's Pix go the same way (banks.c). */
#include "pixrelay/store/ingest.h"

#include "pixrelay/store/events.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/redis/shardq.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/sign.h"
#include "pixrelay/core/timefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOLERANCE_S 300

static const char *const event_names[] = {"EVENT:CHARGE_PAID", "EVENT:CHARGE_EXPIRED",
					  "EVENT:CHARGE_REFUND"};

/* The five statuses of the spec's charge (data.status). */
static const char *const status_names[] = {"PENDING", "PAID", "EXPIRED", "REFUNDED", "FAILED"};

enum charges_action ingest_action(const char *event)
{
	if (strcmp(event, event_names[0]) == 0)
		return CHARGES_PAY;
	if (strcmp(event, event_names[1]) == 0)
		return CHARGES_EXPIRE;
	return CHARGES_REFUND;
}

const char *ingest_event_status(const char *event)
{
	static const char *const after[] = {"PAID", "EXPIRED", "REFUNDED"};

	return after[ingest_action(event)];
}

/* A non-empty printable ASCII string of at most INGEST_ID_MAX chars, or NULL. */
static const char *id_string(yajl_val v)
{
	const char *s = YAJL_IS_STRING(v) ? v->u.string : NULL;

	if (!s || !*s || strlen(s) > INGEST_ID_MAX)
		return NULL;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e)
			return NULL;
	return s;
}

int ingest_parse(const char *body, size_t len, struct ingest_note *out, char *err, size_t errlen)
{
	yajl_val root = NULL, v, data;
	struct ingest_note n;
	const char *s;
	size_t data_at = 0, data_len = 0;
	int rc = -1;

	memset(&n, 0, sizeof(n));
	if (json_parse_object_span(body, len, "data", &data_at, &data_len, &root, err, errlen) < 0)
		return -1;
	s = id_string(json_get(root, "id"));
	if (!s) {
		snprintf(err, errlen,
			 "id: must be the notification's id, 1 to %d printable characters",
			 INGEST_ID_MAX);
		goto done;
	}
	n.id = mem_strdup(s);
	v = json_get(root, "event");
	s = YAJL_IS_STRING(v) ? v->u.string : NULL;
	if (!s) {
		snprintf(err, errlen, "event: must be a string");
		goto done;
	}
	for (size_t i = 0; i < 3; i++)
		if (strcmp(s, event_names[i]) == 0)
			n.event = mem_strdup(event_names[i]);
	if (!n.event) {
		snprintf(err, errlen,
			 "event: must be EVENT:CHARGE_PAID, EVENT:CHARGE_EXPIRED or "
			 "EVENT:CHARGE_REFUND");
		goto done;
	}
	data = json_get(root, "data");
	if (!YAJL_IS_OBJECT(data)) {
		snprintf(err, errlen, "data: must be the charge, an object");
		goto done;
	}
	s = id_string(json_get(data, "id"));
	if (!s) {
		snprintf(err, errlen,
			 "data.id: must be the charge id, 1 to %d printable characters",
			 INGEST_ID_MAX);
		goto done;
	}
	n.charge_id = mem_strdup(s);
	/* the charge's fields the notification is checked against (null = absent) */
	v = json_get(data, "amount");
	if (v && !YAJL_IS_NULL(v)) {
		if (!json_is_int64(v, &n.amount)) {
			snprintf(err, errlen, "data.amount: must be an integer number of cents");
			goto done;
		}
		n.has_amount = 1;
	}
	v = json_get(data, "status");
	if (v && !YAJL_IS_NULL(v)) {
		s = YAJL_IS_STRING(v) ? v->u.string : "";
		for (size_t i = 0; i < 5; i++)
			if (strcmp(s, status_names[i]) == 0)
				n.status = mem_strdup(status_names[i]);
		if (!n.status) {
			snprintf(err, errlen,
				 "data.status: must be PENDING, PAID, EXPIRED, REFUNDED or FAILED");
			goto done;
		}
	}
	/* relayed as received: the object's bytes, validated by the parse */
	n.data_json = mem_strndup(body + data_at, data_len);
	*out = n;
	memset(&n, 0, sizeof(n));
	rc = 0;
done:
	ingest_note_deinit(&n);
	yajl_tree_free(root);
	return rc;
}

void ingest_note_deinit(struct ingest_note *n)
{
	free(n->id);
	free(n->event);
	free(n->charge_id);
	free(n->data_json);
	free(n->status);
	memset(n, 0, sizeof(*n));
}

int ingest_verify(const char *secret, const char *wh_id, const char *wh_ts, const char *wh_sig,
		  const char *compat_sig, const char *body, size_t len, long long now_s, char *err,
		  size_t errlen)
{
	if (!secret || !*secret) {
		snprintf(err, errlen, "ingest is not set up for this account");
		return -1;
	}
	if (wh_sig) {
		char *end = NULL;
		long long ts;
		int rc;
		if (!wh_id || !wh_ts) {
			snprintf(err, errlen,
				 "webhook-signature needs webhook-id and webhook-timestamp");
			return -1;
		}
		ts = strtoll(wh_ts, &end, 10);
		if (end == wh_ts || *end) {
			snprintf(err, errlen, "webhook-timestamp must be Unix seconds");
			return -1;
		}
		rc = sign_verify(secret, wh_id, ts, body, len, wh_sig, now_s, TOLERANCE_S);
		if (rc == SIGN_BAD_TIMESTAMP) {
			snprintf(err, errlen, "webhook-timestamp is more than 5 minutes off");
			return -1;
		}
		if (rc != 0) {
			snprintf(err, errlen, "invalid webhook-signature");
			return -1;
		}
		return 0;
	}
	if (compat_sig) {
		if (sign_equal(compat_sig, secret))
			return 0;
		snprintf(err, errlen, "invalid signature");
		return -1;
	}
	snprintf(err, errlen,
		 "missing signature: send Standard Webhooks headers (webhook-id, "
		 "webhook-timestamp, webhook-signature) or the header signature");
	return -1;
}

/* ---- taking notifications: one script call per shard and turn of the loop ---- */

#define BATCH_MAX 128 /* notifications per script call */
/* calls of one shard under way: what comes meanwhile waits for the next
 * call, so that a call waiting for Redis' fsync gathers many turns' worth
 * (group commit, shardq.h). One: at saturation its calls carry half again
 * as many notifications as with two, for the same rate, and Redis spends
 * 2-4 us less per event (fewer fsyncs and calls; docs/performance.md) */
#define BATCH_DEPTH 1

/* One notification waiting for its shard's next call. */
struct item {
	struct shardq_item link; /* first */
	store_fn cb;
	void *ud;
	char *event_out;
	char ea[16 + IDS_ULID_LEN + 1]; /* env '\n' account */
	char evt[EVENT_ID_MAX];
	/* ingest.lua's arguments: the upstream id's key (ks_upstream_key); the
	 * middle of the stream entry's meta (event id, env, account, type joined
	 * by '\n'); the charge's id, action, data.amount and data.status joined
	 * by '\n' ("" = not a charge of this account; ids are printable,
	 * ingest_parse) */
	char *up, *charge, *mid, *body, *order;
};

struct ingest_queue {
	struct rds *r;
	const struct config *cfg;
	struct shardq *q;
	unsigned calls; /* under way */
	int freed;	/* ingest_queue_free came while calls were under way */
};

/* One script call and the notifications it carries, oldest first. */
struct batch {
	struct ingest_queue *q;
	int shard;
	struct item **items;
	unsigned n;
};

/* The strings of parts[0..n) one after the other, in one allocation (a body
 * of a kilobyte is copied once, not formatted twice as by mem_printf). */
static char *concat(const char *const *parts, size_t n)
{
	size_t len[8], total = 1;
	char *out, *p;

	if (n > sizeof(len) / sizeof(*len))
		abort();
	for (size_t i = 0; i < n; i++)
		total += len[i] = strlen(parts[i]);
	p = out = mem_alloc(total);
	for (size_t i = 0; i < n; i++) {
		memcpy(p, parts[i], len[i]);
		p += len[i];
	}
	*p = '\0';
	return out;
}

static void item_free(struct item *it)
{
	free(it->up);
	free(it->charge);
	free(it->mid);
	free(it->body);
	free(it->order);
	free(it);
}

/* Answer one notification from its elements of the reply, e[0] saying how
 * many (charges_reply_len; "relayed" alone: the event id is the one sent).
 * Returns how many it took, 0 when malformed. */
static size_t answer(struct item *it, redisReply *const *e, size_t left)
{
	const char *json = NULL;
	size_t n;
	int rc = -1;

	if (e[0]->type != REDIS_REPLY_STRING)
		return 0;
	if (strcmp(e[0]->str, "relayed") == 0) {
		n = 1;
		rc = CHARGES_RELAYED;
		json = it->evt;
	} else {
		n = charges_reply_len(e[0]->str);
		if (n > left)
			return 0;
		rc = charges_reply(e, n, &json, it->event_out);
	}
	if (rc < 0)
		return 0;
	it->cb(it->ud, rc, json, NULL);
	return n;
}

static void on_batch(void *ud, redisReply *reply, const char *err)
{
	struct batch *b = ud;
	int ok = !err && reply->type == REDIS_REPLY_ARRAY;
	size_t at = 0;

	for (unsigned i = 0; i < b->n; i++) {
		struct item *it = b->items[i];
		size_t took = 0;
		if (ok && at < reply->elements)
			took = answer(it, reply->element + at, reply->elements - at);
		if (!took) {
			/* the ones after a malformed answer cannot be told apart */
			ok = 0;
			it->cb(it->ud, -1, NULL, err ? err : "unexpected reply from ingest");
		}
		at += took;
		item_free(it);
	}
	free(b->items);
	if (--b->q->calls == 0 && b->q->freed)
		free(b->q);
	else if (!b->q->freed)
		shardq_done(b->q->q, b->shard);
	free(b);
}

/* The run of items from `i` on that ingest.lua takes under one head:
 * consecutive items of one account, all with a charge or all without one.
 * Returns its length. */
static unsigned run_len(struct item *const *items, unsigned i, unsigned n)
{
	unsigned j = i + 1;
	int charged = items[i]->charge[0] != '\0';

	while (j < n && strcmp(items[j]->ea, items[i]->ea) == 0 &&
	       (items[j]->charge[0] != '\0') == charged)
		j++;
	return j - i;
}

/* Send `n` of shard's items (oldest first) in one call: in runs of one
 * account (ingest.lua's arguments), whose values are the account's once. */
static void send_batch(void *owner, int shard, struct shardq_item **links, unsigned n)
{
	struct ingest_queue *q = owner;
	struct batch *b = mem_new(struct batch);
	unsigned argc = 5, at = 5, runs = 0;
	char sp[KS_PREFIX_MAX], key[KS_KEY_MAX], now[32], now_txt[TIMEFMT_LEN + 1], ttl[32];
	/* a run's count and form ("12", "3c"), one per run at most */
	char(*spec)[16];
	const char **argv;
	uint64_t ms = ids_now_ms();

	b->q = q;
	b->shard = shard;
	b->items = (struct item **)links;
	b->n = n;
	q->calls++;
	for (unsigned i = 0; i < n; i += run_len(b->items, i, n)) {
		runs++;
		argc += 2 + run_len(b->items, i, n) * (b->items[i]->charge[0] ? 6 : 5);
	}
	argv = mem_calloc(argc, sizeof(char *));
	spec = mem_calloc(runs, sizeof(*spec));
	ks_shard_prefix(sp, sizeof(sp), q->cfg->prefix, shard);
	ks_ingest_key(key, sizeof(key), q->cfg->prefix, shard);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ms);
	timefmt_format(now_txt, ms);
	snprintf(ttl, sizeof(ttl), "%ld", q->cfg->event_retention_days * 86400);
	argv[0] = key;
	argv[1] = sp;
	argv[2] = now;
	argv[3] = now_txt;
	argv[4] = ttl;
	runs = 0;
	for (unsigned i = 0; i < n;) {
		unsigned len = run_len(b->items, i, n);
		int charged = b->items[i]->charge[0] != '\0';
		snprintf(spec[runs], sizeof(spec[runs]), "%u%s", len, charged ? "c" : "");
		argv[at++] = b->items[i]->ea;
		argv[at++] = spec[runs++];
		for (unsigned k = i; k < i + len; k++) {
			const struct item *it = b->items[k];
			argv[at++] = it->up;
			argv[at++] = it->evt;
			argv[at++] = it->order;
			argv[at++] = it->mid;
			argv[at++] = it->body;
			if (charged)
				argv[at++] = it->charge;
		}
		i += len;
	}
	rds_script(q->r, on_batch, b, SCRIPT_INGEST, 1, (int)argc, argv, NULL);
	free(spec);
	free(argv);
}

static void drop(void *owner, struct shardq_item *link)
{
	struct item *it = (struct item *)link;

	it->cb(it->ud, -1, NULL, "redis client closed");
	item_free(it);
}

struct ingest_queue *ingest_queue_new(struct event_base *base, struct rds *r,
				      const struct config *cfg)
{
	struct ingest_queue *q = mem_new(struct ingest_queue);

	q->r = r;
	q->cfg = cfg;
	q->q = shardq_new(base, BATCH_MAX, BATCH_DEPTH, send_batch, drop, q);
	return q;
}

void ingest_queue_free(struct ingest_queue *q)
{
	if (!q)
		return;
	shardq_free(q->q);
	q->q = NULL;
	/* a call under way answers its items when its reply (or its failure,
	 * when the Redis client is freed) comes: q goes with the last one */
	if (q->calls)
		q->freed = 1;
	else
		free(q);
}

void ingest_submit(struct ingest_queue *q, enum env env, const char *account,
		   const struct ingest_note *n, char *event_out, store_fn cb, void *ud)
{
	static const char *const actions[] = {"pay", "expire", "refund", "fail"};
	struct item *it;
	int shard = ks_shard_of(account);

	if (event_out)
		event_out[0] = '\0';
	if (shard < 0 || strlen(account) != IDS_ULID_LEN) {
		cb(ud, -1, NULL, "the account id names no shard");
		return;
	}
	it = mem_new(struct item);
	it->cb = cb;
	it->ud = ud;
	it->event_out = event_out;
	snprintf(it->ea, sizeof(it->ea), "%s\n%s", env_name(env), account);
	ks_event_id(shard, it->evt);
	{
		char up[KS_KEY_MAX + INGEST_ID_MAX];
		ks_upstream_key(up, sizeof(up), q->cfg->prefix, shard, account, n->id);
		it->up = mem_strdup(up);
	}
	/* a charge of this account lives in its shard; any other id is relayed */
	if (ids_is_ulid(n->charge_id) && ks_shard_of(n->charge_id) == shard) {
		char amount[24] = "";
		int contradicts =
		    n->status && strcmp(n->status, ingest_event_status(n->event)) != 0;
		if (n->has_amount)
			snprintf(amount, sizeof(amount), "%lld", (long long)n->amount);
		it->charge =
		    mem_printf("%s\n%s\n%s\n%s", n->charge_id, actions[ingest_action(n->event)],
			       amount, contradicts ? n->status : "");
	} else {
		it->charge = mem_strdup("");
	}
	it->mid = mem_printf("%s\n%s\n%s", it->evt, it->ea, n->event);
	{
		const char *parts[] = {"{\"id\":\"", it->evt,	     "\",\"event\":\"",
				       n->event,     "\",\"data\":", n->data_json,
				       "}"};
		it->body = concat(parts, sizeof(parts) / sizeof(*parts));
	}
	/* events about one upstream charge keep their order too */
	it->order = mem_printf("upstream:%s:%s", account, n->charge_id);
	shardq_add(q->q, shard, &it->link);
}
