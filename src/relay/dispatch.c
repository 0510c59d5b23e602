/* dispatch: the dispatcher proper, leasing and settling. Each shard's
 * outcomes are queued as deliveries end and sent with its next event_settle
 * call, which also leases what this process has room for (settle, pump);
 * leased events are handed to their host's slots or wait for one (begin),
 * and watchers of `pixrelay tail` hear of each outcome (publish). The tick
 * gives back leases that waited too long, beats the heartbeat and counts the
 * watchers. Elsewhere: one delivery's request and verdict in delivery.c,
 * the host, account and environment budgets in budget.c, curl on libevent
 * in curlev.c, event_settle's arguments in lease.c, charge expiry and
 * transfer recovery in janitor.c.
 */
#include "dispatch_int.h"

#include "pixrelay/relay/lease.h"
#include "pixrelay/redis/rargs.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/metrics.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/core/validate.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define IDLE_POLL_MS 200 /* an idle shard is settled this often */
#define LEASE_MARGIN_MS 20000
#define OUTCOMES_MAX 256 /* per settle call */
#define LEASE_MAX 256	 /* per settle call */
#define SETTLE_DEPTH 2	 /* settle calls under way per shard, at most */
#define SETTLE_AGAIN 32	 /* outcomes that justify a second call while one is under way */
#define LEASE_COLD 32	 /* per settle call to a shard that had nothing last time */
#define SUBSCRIBERS_EVERY_MS 1000
#define HEARTBEAT_EVERY_MS 5000 /* <prefix>{meta}:dispatchers: who dispatches (pixrelay tail) */
#define HEARTBEAT_FORGET_MS 60000

/* The outcome of one attempt, waiting for its shard's next settle call. */
struct outcome {
	struct outcome *next;
	char id[LEASE_ID_MAX];
	char token[LEASE_TOKEN_MAX];
	const char *what; /* delivered | retry | dead | release */
	long long next_ms;
	long status;
	char *error;
	char *entry; /* attempt log entry, JSON */
	int attempts;
	char *order, *queue; /* as leased */
	char sid[48];	     /* as leased: its stream entry, "" = none */
	int done;	     /* a stream event delivered: entry holds its record */
};

struct shard {
	int id;
	int busy;			    /* settle calls under way */
	int hot;			    /* its last lease was full, or it had outcomes */
	struct settle *calls[SETTLE_DEPTH]; /* under way */
	int want;			    /* settle as soon as possible */
	unsigned reserved;		    /* leases asked for by the call under way */
	uint64_t next_ms;		    /* when an idle shard is settled next */
	struct outcome *outcomes, *outcomes_tail;
	unsigned noutcomes;
	/* the stream's cursor as last known (a call's answer, or the last entry
	 * a call under way was given): where the next call reads from */
	char cur[LEASE_TOKEN_MAX];
	int cur_known;
	/* a call reading its entries, and one waiting to read after it (from
	 * the cursor the first one's entries leave) */
	struct settle *reading, *next_reading;
};

static void settle_soon(struct dispatch *d, struct shard *s);

void dispatch_url_host(const char *url, char *out, size_t size)
{
	const char *a = strstr(url, "://"), *end, *at;
	size_t n;

	out[0] = '\0';
	if (!a)
		return;
	a += 3;
	end = a + strcspn(a, "/?#");
	for (at = end; at > a && at[-1] != '@'; at--)
		;
	if (at > a)
		a = at;
	n = (size_t)(end - a);
	if (n + 1 > size)
		return;
	for (size_t i = 0; i < n; i++)
		out[i] = (char)tolower((unsigned char)a[i]);
	out[n] = '\0';
}

/* ---- outcomes ---- */

static void on_published(void *ud, redisReply *reply, const char *err)
{
}

/* Tell `pixrelay tail` watchers, when there are any. */
static void publish(struct delivery *dl, const char *outcome, long status, const char *error,
		    uint64_t now)
{
	struct dispatch *d = dl->d;
	yajl_gen g;
	char channel[256], at[25];
	const char *s;
	size_t len;

	if (d->subscribers <= 0)
		return;
	g = json_gen_new();
	timefmt_rfc3339(at, now);
	json_open(g);
	json_str(g, "at");
	json_str(g, at);
	json_str(g, "event");
	json_strn(g, dl->id, strcspn(dl->id, "/"));
	json_str(g, "endpoint");
	json_str_or_null(g, dl->endpoint[0] ? dl->endpoint : NULL);
	json_str(g, "env");
	json_str(g, dl->env);
	json_str(g, "account");
	json_str(g, dl->account);
	json_str(g, "destination");
	json_str(g, dl->url);
	json_str(g, "attempt");
	json_int(g, dl->attempts);
	json_str(g, "status");
	if (status > 0)
		json_int(g, status);
	else
		json_null(g);
	json_str(g, "outcome");
	json_str(g, outcome);
	json_str(g, "state"); /* the event's state now, named as the API names it */
	json_str(g, strcmp(outcome, "retry") == 0 ? "pending" : outcome);
	json_str(g, "durationMs");
	json_int(g, (long long)(now - dl->start_ms));
	json_str(g, "error");
	json_str_or_null(g, error);
	json_close(g);
	s = json_buf(g, &len);
	ks_deliveries_channel(channel, sizeof(channel), d->cfg->prefix);
	{
		const char *argv[] = {"PUBLISH", channel, s};
		size_t lens[] = {7, strlen(channel), len};
		rds_cmd_argv(d->r, on_published, NULL, 3, argv, lens);
	}
	yajl_gen_free(g);
}

void dispatch_complete(struct delivery *dl, const char *what, long long next_ms, long status,
		       const char *error)
{
	struct dispatch *d = dl->d;
	struct shard *s = &d->shards[dl->shard];
	struct outcome *o = mem_new(struct outcome);
	uint64_t now = ids_now_ms();
	int release = strcmp(what, "release") == 0;

	snprintf(o->id, sizeof(o->id), "%s", dl->id);
	snprintf(o->token, sizeof(o->token), "%s", dl->token);
	o->what = what;
	o->next_ms = next_ms;
	o->status = status;
	o->error = mem_strdup(error ? error : "");
	o->attempts = dl->attempts;
	o->order = dl->order;
	o->queue = dl->queue;
	snprintf(o->sid, sizeof(o->sid), "%s", dl->sid);
	dl->order = dl->queue = NULL; /* the outcome's now */
	if (!release) {
		yajl_gen g = json_gen_new();
		char at[25], *entry;
		const char *response = post_response(&dl->post);
		json_open(g);
		json_str(g, "at");
		timefmt_rfc3339(at, dl->start_ms);
		json_str(g, at);
		json_str(g, "attempt");
		json_int(g, dl->attempts);
		json_str(g, "durationMs");
		json_int(g, (long long)(now - dl->start_ms));
		json_str(g, "status");
		if (status > 0)
			json_int(g, status);
		else
			json_null(g);
		json_str(g, "error");
		json_str_or_null(g, error);
		json_str(g, "response");
		json_str_or_null(g, response);
		json_str(g, "outcome");
		json_str(g, what);
		json_close(g);
		entry = json_take(g);
		if (dl->sid[0] && strcmp(what, "delivered") == 0) {
			/* a first attempt delivered: one field of done:<day> */
			o->entry =
			    lease_done_record((long long)now, dl->attempts, status, entry, error);
			o->done = 1;
			free(entry);
		} else {
			o->entry = entry;
		}
		publish(dl, what, status, error, now);
		log_info("delivery event=%s url_host=%s attempt=%d status=%ld outcome=%s "
			 "duration_ms=%llu%s%s",
			 dl->id, dl->host ? dl->host->name : "?", dl->attempts, status, what,
			 (unsigned long long)(now - dl->start_ms), error ? " error=" : "",
			 error ? error : "");
	} else {
		o->entry = mem_strdup("");
	}
	if (s->outcomes_tail)
		s->outcomes_tail->next = o;
	else
		s->outcomes = o;
	s->outcomes_tail = o;
	s->noutcomes++;
	metrics_delivery(dl->env, dl->endpoint[0] ? "endpoint" : "postback", what,
			 (double)(now - dl->start_ms) / 1000.0);
	d->queued++;
	d->held--;
	budget_release(&d->budget, dl->tenant, delivery_env(dl));
	delivery_free(dl);
	settle_soon(d, s);
}

static void outcome_free(struct outcome *o)
{
	free(o->error);
	free(o->entry);
	free(o->order);
	free(o->queue);
	free(o);
}

/* Free a list of outcomes (linked by next). */
static void outcomes_free(struct outcome *o)
{
	while (o) {
		struct outcome *next = o->next;
		outcome_free(o);
		o = next;
	}
}

/* Waiting deliveries that could outlive their lease go back to the queue
 * (all of them when `all`, at shutdown: due at once, for another process). */
static void expire_waiting(struct dispatch *d, int all, uint64_t now)
{
	for (struct budget_host *h = d->budget.hosts; h; h = h->all_next) {
		while (h->waiting &&
		       (all || now - h->waiting->waiting_since_ms >= LEASE_MARGIN_MS / 2)) {
			struct delivery *dl = h->waiting;
			h->waiting = dl->next_waiting;
			if (!h->waiting)
				h->waiting_tail = NULL;
			h->nwaiting--;
			dl->next_waiting = NULL;
			dispatch_complete(dl, "release", (long long)now + (all ? 0 : 1000), 0,
					  NULL);
		}
	}
}

/* A leased event: start it, or let it wait for a slot of its host. */
static void begin(struct dispatch *d, struct shard *s, const char *token, const struct lease *l)
{
	struct delivery *dl = mem_new(struct delivery);
	char host[256];
	struct budget_host *h;

	dl->d = d;
	dl->shard = s->id;
	snprintf(dl->token, sizeof(dl->token), "%s", token);
	snprintf(dl->id, sizeof(dl->id), "%s", l->id);
	dl->url = mem_strdup(l->url);
	dl->body = mem_strdup(l->body);
	dl->attempts = l->attempts;
	dl->budget_base = l->budget_base;
	dl->created_ms = l->created_ms;
	dl->account = mem_strdup(l->account);
	snprintf(dl->env, sizeof(dl->env), "%s", l->env);
	dl->signing = mem_strdup(l->signing);
	dl->signing_prev = mem_strdup(l->signing_prev);
	dl->compat = mem_strdup(l->compat);
	dl->headers = mem_strdup(l->headers);
	snprintf(dl->endpoint, sizeof(dl->endpoint), "%s", l->endpoint);
	dl->order = mem_strdup(l->order);
	dl->queue = mem_strdup(l->queue);
	snprintf(dl->sid, sizeof(dl->sid), "%s", l->sid);
	dl->start_ms = ids_now_ms();
	/* an endpoint is a destination of its own, named by its id, whatever its
	 * host (its queue's name says the same: lib/endpoint.lua) */
	if (dl->endpoint[0])
		snprintf(host, sizeof(host), "%s", dl->endpoint);
	else
		dispatch_url_host(dl->url, host, sizeof(host));
	h = budget_host_get(&d->budget, host);
	h->last_ms = dl->start_ms;
	dl->host = h;
	dl->tenant = budget_hold(&d->budget, dl->account, delivery_env(dl));
	d->held++;
	if (budget_host_may_start(h) && !h->waiting) {
		delivery_start(dl);
		return;
	}
	dl->waiting_since_ms = dl->start_ms;
	if (h->waiting_tail)
		h->waiting_tail->next_waiting = dl;
	else
		h->waiting = dl;
	h->waiting_tail = dl;
	h->nwaiting++;
}

/* ---- settling ---- */

struct settle {
	struct dispatch *d;
	struct shard *s;
	uint64_t sent_ms;
	unsigned nres; /* hosts offered a budget, reserved until the answer */
	struct reservation {
		struct budget_host *h;
		unsigned n;
	} * res;
	unsigned asked;
	unsigned sent; /* outcomes in the call */
	char token[IDS_ULID_LEN + 24];
	struct outcome *outcomes; /* the call's, sent when its entries are read */
	/* the stream entries read for it (outside the script: their bodies never
	 * cross into Lua), after `from` */
	char from[LEASE_TOKEN_MAX];
	unsigned ngiven;
	struct given {
		char *sid, *meta, *body;
	} * given;
};

static void settle_free(struct settle *c)
{
	for (unsigned i = 0; i < c->ngiven; i++) {
		free(c->given[i].sid);
		free(c->given[i].meta);
		free(c->given[i].body);
	}
	free(c->given);
	outcomes_free(c->outcomes);
	free(c);
}

static void pump(struct dispatch *d);

static void on_settled(void *ud, redisReply *reply, const char *err)
{
	struct settle *c = ud;
	struct dispatch *d = c->d;
	struct shard *s = c->s;
	uint64_t now = ids_now_ms();
	size_t leased = 0;

	s->busy--;
	d->settling--;
	for (unsigned i = 0; i < c->nres; i++)
		c->res[i].h->leasing -= c->res[i].n;
	free(c->res);
	for (int i = 0; i < SETTLE_DEPTH; i++)
		if (s->calls[i] == c)
			s->calls[i] = NULL;
	budget_settled(&d->budget, (double)(now - c->sent_ms));
	d->reserved -= c->asked;
	s->reserved -= c->asked;
	if (err) {
		/* the outcomes sent are lost with the call: their leases run out
		 * and the events are delivered again */
		if (rds_ready(d->r))
			log_warn("settle on shard %d failed: %s", s->id, err);
		s->next_ms = now + IDLE_POLL_MS;
	} else if (reply->type == REDIS_REPLY_ARRAY && reply->elements >= 2) {
		redisReply *next = reply->element[1];
		char batch[LEASE_TOKEN_MAX];
		const char *cur = lease_cursor(reply);
		unsigned g = 0;
		/* the stream events leased hold their call's batch (lease.h) */
		lease_batch(reply, batch, sizeof(batch));
		for (size_t i = LEASE_REPLY_FIRST; i + LEASE_FIELDS <= reply->elements;
		     i += LEASE_FIELDS) {
			redisReply *const *f = reply->element + i;
			struct lease l;
			int rc = -1;
			if (f[0]->type == REDIS_REPLY_STRING && f[0]->len &&
			    f[1]->type == REDIS_REPLY_STRING && !f[1]->len) {
				/* an entry this call gave: leased in their order */
				while (g < c->ngiven && strcmp(c->given[g].sid, f[0]->str) != 0)
					g++;
				if (g < c->ngiven) {
					rc = lease_decode_given(f, reply->elements - i,
								c->given[g].meta, c->given[g].body,
								&l);
					g++;
				}
			} else {
				rc = lease_decode(f, reply->elements - i, &l);
			}
			if (rc == 0) {
				begin(d, s, l.sid[0] ? batch : c->token, &l);
				leased++;
			}
		}
		/* where the next call reads from: the answer's cursor, unless
		 * this call took every entry it was given and a call under way
		 * was given the ones after them (s->cur names its last then) */
		if (cur && strlen(cur) < sizeof(s->cur) &&
		    (!s->busy || !c->ngiven || strcmp(cur, c->given[c->ngiven - 1].sid) != 0)) {
			snprintf(s->cur, sizeof(s->cur), "%s", cur);
			s->cur_known = 1;
		}
		if (reply->element[0]->type == REDIS_REPLY_INTEGER &&
		    (unsigned)reply->element[0]->integer < c->sent)
			log_warn("shard %d: %u outcomes came after their lease ran out", s->id,
				 c->sent - (unsigned)reply->element[0]->integer);
		s->hot = (c->asked && leased == c->asked) || c->sent;
		if (c->asked && leased == c->asked) {
			s->want = 1; /* more may be due */
		} else {
			uint64_t at = now + IDLE_POLL_MS;
			if (next->type == REDIS_REPLY_STRING && next->len) {
				uint64_t due = strtoull(next->str, NULL, 10);
				if (due > now && due < at)
					at = due;
			}
			s->next_ms = at;
		}
		if (leased || c->sent)
			log_debug("shard %d: leased %zu of %u, recorded %u, in %llu ms", s->id,
				  leased, c->asked, c->sent,
				  (unsigned long long)(now - c->sent_ms));
	} else {
		s->cur_known = 0;
	}
	if (err)
		s->cur_known = 0;
	settle_free(c);
	pump(d);
}

static void on_counted(void *ud, redisReply *reply, const char *err)
{
	struct dispatch *d = ud;

	d->counting = 0;
	if (!err && reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
	    reply->element[1]->type == REDIS_REPLY_INTEGER)
		d->subscribers = reply->element[1]->integer;
}

/* The budget of h for a call to shard s: what h can take, less what a call
 * to s under way may already bring (calls to other shards are not counted:
 * a host's events are almost always in one shard, and counting them would
 * hand its budget to shards that do not have its events). */
static unsigned shard_budget(const struct dispatch *d, const struct shard *s,
			     const struct budget_host *h, uint64_t now)
{
	unsigned b = budget_host_room(&d->budget, h, now), offered = 0;

	for (int i = 0; i < SETTLE_DEPTH; i++)
		for (unsigned j = 0; s->calls[i] && j < s->calls[i]->nres; j++)
			if (s->calls[i]->res[j].h == h)
				offered += s->calls[i]->res[j].n;
	return b > offered ? b - offered : 0;
}

static void settle_send(struct settle *c);
static void read_entries(struct settle *c);

/* The entries read for call c (XRANGE after c->from): copied, then the call
 * goes. Unreadable ones are not given (the script reads the stream then). */
static void on_entries(void *ud, redisReply *reply, const char *err)
{
	struct settle *c = ud;
	struct shard *s = c->s;
	struct settle *next = s->next_reading;

	s->reading = NULL;
	s->next_reading = NULL;
	if (err) {
		/* the read failed, or the client is closing: the calls end as if
		 * sent and failed (their outcomes are lost, their leases run out,
		 * as when the script's call fails) */
		on_settled(c, NULL, err);
		if (next)
			on_settled(next, NULL, err);
		return;
	}
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements) {
		c->given = mem_calloc(reply->elements, sizeof(*c->given));
		for (size_t i = 0; i < reply->elements; i++) {
			const redisReply *e = reply->element[i], *f;
			if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
			    e->element[0]->type != REDIS_REPLY_STRING)
				break;
			f = e->element[1];
			/* fields m (meta) and b (body), and d (the endpoints it goes to
			 * besides) when it has some, as lib/event.lua writes them */
			if (f->type != REDIS_REPLY_ARRAY ||
			    (f->elements != 4 && f->elements != 6) ||
			    f->element[1]->type != REDIS_REPLY_STRING ||
			    f->element[3]->type != REDIS_REPLY_STRING ||
			    strcmp(f->element[0]->str ? f->element[0]->str : "", "m") != 0 ||
			    strlen(e->element[0]->str) >= LEASE_TOKEN_MAX ||
			    !lease_meta_has_head(f->element[1]->str))
				break;
			c->given[c->ngiven].sid = mem_strdup(e->element[0]->str);
			c->given[c->ngiven].meta = mem_strdup(f->element[1]->str);
			c->given[c->ngiven].body = mem_strdup(f->element[3]->str);
			c->ngiven++;
		}
	}
	/* the next call of the shard reads after what this one is given: it
	 * holds the shard's read meanwhile (a call made while c is sent waits) */
	if (next)
		s->reading = next;
	settle_send(c);
	if (next)
		read_entries(next);
}

/* How many entries call c reads: what it asks, at most what the known hosts
 * may take and the default for one more (an entry read and not leased is
 * read again by the next call; what calls under way hold is not taken off:
 * they usually answer before this call is sent). */
static unsigned read_most(const struct settle *c)
{
	uint64_t now = ids_now_ms();
	unsigned most = budget_default_room(&c->d->budget);

	for (struct budget_host *h = c->d->budget.hosts; h && most < c->asked; h = h->all_next)
		most += budget_host_room(&c->d->budget, h, now);
	return most < c->asked ? most : c->asked;
}

/* Whether stream entry id a ("<ms>-<seq>") comes after b. */
static bool sid_after(const char *a, const char *b)
{
	unsigned long long am = strtoull(a, NULL, 10), bm = strtoull(b, NULL, 10);
	const char *as = strchr(a, '-'), *bs = strchr(b, '-');

	if (am != bm)
		return am > bm;
	return strtoull(as ? as + 1 : "0", NULL, 10) > strtoull(bs ? bs + 1 : "0", NULL, 10);
}

/* Read the stream entries after the shard's cursor for call c. */
static void read_entries(struct settle *c)
{
	struct shard *s = c->s;
	char sk[KS_KEY_MAX], from[LEASE_TOKEN_MAX + 1], count[16];
	const char *argv[] = {"XRANGE", sk, from, "+", "COUNT", count};

	s->reading = c;
	ks_stream_key(sk, sizeof(sk), c->d->cfg->prefix, s->id);
	snprintf(c->from, sizeof(c->from), "%s", s->cur);
	if (c->from[0])
		snprintf(from, sizeof(from), "(%s", c->from);
	else
		snprintf(from, sizeof(from), "-");
	snprintf(count, sizeof(count), "%u", read_most(c));
	rds_cmd_argv(c->d->r, on_entries, c, 6, argv, NULL);
}

/* Send shard s its outcomes and ask for what this process has room for.
 * When it leases and knows where the stream's cursor is, it first reads the
 * entries after it itself (XRANGE: outside the script, their bodies never
 * cross into Lua, docs/performance.md) and gives them to the call. */
static void settle(struct dispatch *d, struct shard *s, unsigned lease)
{
	struct settle *c = mem_new(struct settle);
	unsigned n = s->noutcomes < OUTCOMES_MAX ? s->noutcomes : OUTCOMES_MAX;
	uint64_t now = ids_now_ms();
	struct outcome **tail = &c->outcomes;

	c->d = d;
	c->s = s;
	c->asked = lease;
	c->sent = n;
	c->sent_ms = now;
	s->busy++;
	for (int i = 0; i < SETTLE_DEPTH; i++)
		if (!s->calls[i]) {
			s->calls[i] = c;
			break;
		}
	s->want = 0;
	s->reserved += lease;
	d->reserved += lease;
	d->settling++;
	/* the call's outcomes, in order */
	for (unsigned i = 0; i < n; i++) {
		*tail = s->outcomes;
		s->outcomes = s->outcomes->next;
		tail = &(*tail)->next;
	}
	*tail = NULL;
	if (!s->outcomes)
		s->outcomes_tail = NULL;
	s->noutcomes -= n;
	d->queued -= n;
	if (lease && s->cur_known && s->hot) {
		/* one call of a shard reads at a time: the next reads after the
		 * entries the first one was given. (A shard whose last call leased
		 * little is not read: the script reads it, one round trip.) */
		if (!s->reading) {
			read_entries(c);
			return;
		}
		if (!s->next_reading) {
			s->next_reading = c;
			return;
		}
		/* (a third call at once: it goes without entries) */
	}
	settle_send(c);
}

/* Send call c: its outcomes, the entries read for it, what to lease. */
static void settle_send(struct settle *c)
{
	struct dispatch *d = c->d;
	struct shard *s = c->s;
	char sp[KS_PREFIX_MAX], hosts_k[KS_KEY_MAX], lease_k[KS_KEY_MAX], dead_k[KS_KEY_MAX];
	unsigned n = c->sent, lease = c->asked;
	uint64_t now = ids_now_ms();
	unsigned dflt = budget_default_room(&d->budget);
	struct lease_call call = {0};
	struct rargs a;
	/* the call's outcomes, taken off it: rds_script may answer (and free
	 * c) before it returns, when the client is closing */
	struct outcome *outcomes = c->outcomes, *o;

	c->outcomes = NULL;
	ks_shard_prefix(sp, sizeof(sp), d->cfg->prefix, s->id);
	ks_hosts_key(hosts_k, sizeof(hosts_k), d->cfg->prefix, s->id);
	ks_lease_key(lease_k, sizeof(lease_k), d->cfg->prefix, s->id);
	ks_dead_key(dead_k, sizeof(dead_k), d->cfg->prefix, s->id);
	call.hosts_key = hosts_k;
	call.lease_key = lease_k;
	call.dead_key = dead_k;
	call.shard_prefix = sp;
	call.now_ms = now;
	call.lease_ms =
	    d->cfg->delivery_timeout_ms + d->cfg->delivery_connect_timeout_ms + LEASE_MARGIN_MS;
	call.most = lease;
	/* the token of a lease is its end: a later lease of the same event starts
	 * after this one ran out (so ends later) or after its outcome was recorded
	 * (then no other outcome of it comes) */
	snprintf(c->token, sizeof(c->token), "%llu",
		 (unsigned long long)(now + (uint64_t)call.lease_ms));
	call.token = c->token;
	call.log_cap = d->cfg->attempt_log_cap;
	call.retention_s = d->cfg->event_retention_days * 86400;
	call.host_most = dflt;
	/* the hosts whose budget differs from the default */
	if (lease)
		for (struct budget_host *h = d->budget.hosts; h; h = h->all_next)
			call.nhosts += shard_budget(d, s, h, now) != dflt;
	o = outcomes;
	for (unsigned i = 0; i < n; i++, o = o->next)
		call.ndone += o->done != 0;
	call.noutcomes = n - call.ndone;
	call.account_most = (unsigned)d->cfg->delivery_per_account;
	/* the accounts holding deliveries: their budget is below the default */
	call.naccounts = lease ? d->budget.ntenants : 0;
	call.sandbox_most = lease ? budget_env_room(&d->budget, ENV_SANDBOX) : 0;
	call.production_most = lease ? budget_env_room(&d->budget, ENV_PRODUCTION) : 0;
	if (call.nhosts)
		c->res = mem_calloc(call.nhosts, sizeof(*c->res));
	rargs_init(&a);
	lease_args(&a, &call);
	{
		unsigned i = 0;
		for (struct budget_host *h = d->budget.hosts; lease && h && i < call.nhosts;
		     h = h->all_next) {
			unsigned budget = shard_budget(d, s, h, now);
			if (budget == dflt)
				continue;
			lease_args_host(&a, h->name, budget);
			/* what this call may lease is not offered to another meanwhile */
			if (budget) {
				h->leasing += budget;
				c->res[c->nres].h = h;
				c->res[c->nres++].n = budget;
			}
			i++;
		}
	}
	{
		unsigned i = 0;
		for (int b = 0; b < BUDGET_TENANT_BUCKETS && i < call.naccounts; b++)
			for (struct budget_tenant *t = d->budget.tenants[b];
			     t && i < call.naccounts; t = t->next, i++)
				lease_args_account(&a, t->account,
						   budget_tenant_room(&d->budget, t));
	}
	/* the outcomes (those of stream events delivered last): their texts stay
	 * alive until rds_script has copied them */
	for (o = outcomes; o; o = o->next) {
		struct lease_outcome lo = {o->id,     o->token, o->what,  o->next_ms,
					   o->status, o->error, o->entry, o->attempts,
					   o->order,  o->queue, o->sid};
		if (!o->done)
			lease_args_outcome(&a, &lo);
	}
	for (o = outcomes; o; o = o->next)
		if (o->done)
			lease_args_done(&a, o->sid, o->token, o->id, o->order, o->entry, o->queue);
	if (lease) {
		/* the entries read (each with the head of its meta: on_entries) */
		lease_args_given(&a, c->from, c->ngiven);
		for (unsigned i = 0; i < c->ngiven; i++)
			lease_args_entry(&a, c->given[i].sid, c->given[i].meta);
		/* the next call reads after them (if this one takes them all; if
		 * not, the script reads the stream itself and answers the cursor) */
		if (c->ngiven && (!s->cur[0] || sid_after(c->given[c->ngiven - 1].sid, s->cur)))
			snprintf(s->cur, sizeof(s->cur), "%s", c->given[c->ngiven - 1].sid);
	}
	lease_args_endpoints(&a, d->cfg->endpoint_disable_after * 1000LL,
			     d->cfg->endpoint_disable_min_failures);
	rds_script(d->r, on_settled, c, SCRIPT_EVENT_SETTLE, LEASE_NKEYS, a.argc, a.argv, a.lens);
	/* (c may be gone now) */
	rargs_deinit(&a);
	outcomes_free(outcomes);
}

/* Settle every shard that has outcomes to send or may have work, sharing
 * the free capacity among them. */
static void pump(struct dispatch *d)
{
	uint64_t now = ids_now_ms();
	unsigned cap = (unsigned)d->cfg->delivery_concurrency +
		       budget_ahead(&d->budget, d->budget.env_rate[ENV_SANDBOX] +
						    d->budget.env_rate[ENV_PRODUCTION]);

	if (!rds_ready(d->r))
		return;
	for (int i = 0; i < d->nshards; i++) {
		struct shard *s = &d->shards[(d->next_shard + i) % d->nshards];
		unsigned used = d->held + d->reserved, lease = 0;
		/* outcomes free slots of their hosts, whose next events are most
		 * likely in the same shard: lease with them */
		int due = s->want || s->noutcomes || now >= s->next_ms;
		/* a second call while one is under way only for a batch of outcomes:
		 * it keeps deliveries flowing through a slow round trip */
		if (s->busy >= SETTLE_DEPTH || (s->busy && s->noutcomes < SETTLE_AGAIN))
			continue;
		if (!d->stopped && due && used < cap) {
			/* a shard that had nothing last time asks for little: its
			 * call would hold the capacity busy shards need */
			unsigned most = s->hot || s->noutcomes ? LEASE_MAX : LEASE_COLD;
			lease = cap - used < most ? cap - used : most;
		}
		if (lease || s->noutcomes)
			settle(d, s, lease);
	}
	d->next_shard = (d->next_shard + 1) % d->nshards;
}

static void on_flush(evutil_socket_t fd, short kind, void *arg)
{
	pump(arg);
}

/* Outcomes from one turn of the loop go out together. */
static void settle_soon(struct dispatch *d, struct shard *s)
{
	struct timeval zero = {0, 0};

	if (s->busy < SETTLE_DEPTH)
		evtimer_add(d->flush, &zero);
}

/* ---- the tick: heartbeats, watchers, idle shards ---- */

static void on_beats(void *ud, redisReply *reply, const char *err)
{
	struct dispatch *d = ud;
	char key[256];
	uint64_t now = ids_now_ms();

	if (err || reply->type != REDIS_REPLY_ARRAY || !rds_ready(d->r))
		return;
	ks_meta_dispatchers_key(key, sizeof(key), d->cfg->prefix);
	for (size_t i = 0; i + 1 < reply->elements; i += 2) {
		const char *who = reply->element[i]->str, *v = reply->element[i + 1]->str;
		if (who && v && now > strtoull(v, NULL, 10) + HEARTBEAT_FORGET_MS) {
			const char *argv[] = {"HDEL", key, who};
			rds_cmd_argv(d->r, on_published, NULL, 3, argv, NULL);
		}
	}
}

/* Say that this process dispatches: field <token> of <prefix>{meta}:dispatchers
 * = "<ms> <base URL>" every 5 s (read by pixrelay tail and the command line);
 * fields of processes silent for a minute are removed. */
static void heartbeat(struct dispatch *d, uint64_t now, int leaving)
{
	char key[256], *v;

	ks_meta_dispatchers_key(key, sizeof(key), d->cfg->prefix);
	if (leaving) {
		const char *argv[] = {"HDEL", key, d->token};
		rds_cmd_argv(d->r, on_published, NULL, 3, argv, NULL);
		return;
	}
	d->beat_ms = now;
	v = mem_printf("%llu %s", (unsigned long long)now, d->cfg->base_url);
	{
		const char *argv[] = {"HSET", key, d->token, v};
		rds_cmd_argv(d->r, on_published, NULL, 4, argv, NULL);
	}
	free(v);
	if (now - d->swept_beats_ms >= HEARTBEAT_FORGET_MS) {
		const char *argv[] = {"HGETALL", key};
		d->swept_beats_ms = now;
		rds_cmd_argv(d->r, on_beats, d, 2, argv, NULL);
	}
}

static void on_tick(evutil_socket_t fd, short kind, void *arg)
{
	struct dispatch *d = arg;
	uint64_t now = ids_now_ms();

	expire_waiting(d, 0, now);
	budget_tick(&d->budget, now);
	if (d->stopped || !rds_ready(d->r))
		return;
	if (now - d->beat_ms >= HEARTBEAT_EVERY_MS)
		heartbeat(d, now, 0);
	if (!d->counting && now - d->subscribers_ms >= SUBSCRIBERS_EVERY_MS) {
		char channel[256];
		ks_deliveries_channel(channel, sizeof(channel), d->cfg->prefix);
		{
			const char *argv[] = {"PUBSUB", "NUMSUB", channel};
			d->counting = 1;
			d->subscribers_ms = now;
			rds_cmd_argv(d->r, on_counted, d, 3, argv, NULL);
		}
	}
	pump(d);
}

void dispatch_kick_shard(struct dispatch *d, int shard)
{
	if (!d || shard < 0 || shard >= d->nshards)
		return;
	d->shards[shard].want = 1;
	settle_soon(d, &d->shards[shard]);
}

void dispatch_kick(struct dispatch *d, const char *id)
{
	int shard;

	if (!d || d->stopped)
		return;
	shard = id ? ks_shard_of(id) : -1;
	if (shard >= 0 && shard < d->nshards) {
		dispatch_kick_shard(d, shard);
		return;
	}
	for (int i = 0; i < d->nshards; i++)
		d->shards[i].want = 1;
	settle_soon(d, &d->shards[0]);
}

struct dispatch *dispatch_new(struct event_base *base, struct rds *r, const struct config *cfg)
{
	struct dispatch *d = mem_new(struct dispatch);
	struct timeval tv = {0, TICK_MS * 1000};
	char err[256];

	d->base = base;
	d->r = r;
	d->cfg = cfg;
	budget_init(&d->budget, cfg);
	ids_ulid(d->token);
	if (netaddr_list_parse(&d->allow, cfg->destination_allow, err, sizeof(err)) < 0) {
		log_error("destination-allow: %s", err);
		free(d);
		return NULL;
	}
	backoff_policy_default(&d->policy);
	d->policy.base_ms = cfg->retry_base_ms;
	d->policy.factor = (double)cfg->retry_factor_pct / 100.0;
	d->policy.cap_ms = cfg->retry_cap_ms;
	d->policy.max_attempts = (int)cfg->retry_max_attempts;
	d->policy.max_age_ms = cfg->retry_max_age_s * 1000LL;
	d->nshards = (int)cfg->shards;
	d->shards = mem_calloc((size_t)d->nshards, sizeof(*d->shards));
	for (int i = 0; i < d->nshards; i++)
		d->shards[i].id = i;
	for (int i = 0; i < 2; i++)
		d->pools[i] = curlev_new(base, cfg, (enum env)i, delivery_done, d);
	d->tick = event_new(base, -1, EV_PERSIST, on_tick, d);
	d->flush = evtimer_new(base, on_flush, d);
	event_add(d->tick, &tv);
	return d;
}

void dispatch_stop(struct dispatch *d)
{
	if (d) {
		d->stopped = 1;
		event_del(d->tick);
		if (rds_ready(d->r))
			heartbeat(d, ids_now_ms(), 1);
		/* those not started yet go back to the queue now */
		expire_waiting(d, 1, ids_now_ms());
	}
}

void dispatch_stats(const struct dispatch *d, struct dispatch_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!d)
		return;
	for (const struct budget_host *h = d->budget.hosts; h; h = h->all_next) {
		out->active += h->active;
		out->waiting += h->nwaiting;
		out->hosts++;
		out->open += h->open_until_ms > ids_now_ms();
	}
	out->tenants = d->budget.ntenants;
	out->outcomes = d->queued;
}

unsigned dispatch_inflight(const struct dispatch *d)
{
	/* a settle under way may hold leases or outcomes: wait for its answer */
	return d ? d->held + d->queued + d->settling : 0;
}

void dispatch_free(struct dispatch *d)
{
	if (!d)
		return;
	/* deliveries still in curl are abandoned: their leases run out */
	while (d->active)
		delivery_abandon(d->active);
	for (int i = 0; i < 2; i++)
		curlev_free(d->pools[i]);
	event_free(d->tick);
	event_free(d->flush);
	for (struct budget_host *h = d->budget.hosts; h; h = h->all_next)
		while (h->waiting) {
			struct delivery *dl = h->waiting;
			h->waiting = dl->next_waiting;
			delivery_free(dl);
		}
	for (int i = 0; i < d->nshards; i++) {
		outcomes_free(d->shards[i].outcomes);
	}
	budget_deinit(&d->budget);
	free(d->shards);
	netaddr_list_deinit(&d->allow);
	free(d);
}
