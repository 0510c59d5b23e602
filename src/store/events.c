/* events: reading an account's stored events, on the event loop, in
 * either layout (a hash of its own, or an entry of its shard's stream with
 * its state derived: lib/event_read.lua, docs/event-layout.md): one with
 * its attempt log (event_get; events_render fills in the fields the hash
 * leaves out), a filtered page (event_list), a replay of one or of every
 * event a filter selects, the events after a point for a live stream
 * (event_after, api/evstream.c), how a shard's queue stands (/metrics) and
 * the trimming of a shard's stream (the janitor). The scripts of each
 * change write its events; leasing and settling deliveries is
 * relay/dispatch.c. */
#include "pixrelay/store/events.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/page.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- inspection and replay ---- */

struct lookup {
	struct rds *r;
	const struct config *cfg;
	enum env env;
	char account[32];
	char id[EVENT_ID_MAX];
	int shard;	  /* of the id, and of the account */
	char prefix[256]; /* ks_shard_prefix */
	store_fn cb;
	void *ud;
};

static void json_time_field(yajl_gen g, const char *name, const char *ms)
{
	json_str(g, name);
	json_time_ms(g, ms);
}

/* The value of field `name` of h, or `dflt` when the hash has none. */
static const char *field_or(const redisReply *h, const char *name, const char *dflt)
{
	const char *v = rds_hash_field(h, name);
	return v ? v : dflt;
}

/* The fields a reader gives of each delivery to a webhook endpoint, in the
 * order of DELIVERY_FIELDS in lib/event_read.lua. */
enum {
	DF_STATE,
	DF_ATTEMPTS,
	DF_CREATED,
	DF_UPDATED,
	DF_NEXT,
	DF_DELIVERED,
	DF_DEAD,
	DF_STATUS,
	DF_ERROR,
	DF_COUNT
};

/* One delivery to an endpoint: in a listing its state at a glance; with
 * `full` (one event's page) its url (NULL: the endpoint is gone), times and
 * attempt log (the earlier attempts `log`, then the latest `last`). */
static void render_delivery(yajl_gen g, const char *endpoint, const char *const f[DF_COUNT],
			    int full, const char *url, const redisReply *log, const char *last)
{
	const char *state = *f[DF_STATE] ? f[DF_STATE] : "pending";

	json_open(g);
	json_str(g, "endpoint");
	json_str(g, endpoint);
	if (full) {
		json_str(g, "url");
		json_str_or_null(g, url && *url ? url : NULL);
	}
	json_str(g, "state");
	json_str(g, state);
	json_str(g, "attempts");
	json_int(g, strtoll(f[DF_ATTEMPTS], NULL, 10));
	json_time_field(g, "updatedAt", *f[DF_UPDATED] ? f[DF_UPDATED] : f[DF_CREATED]);
	json_time_field(g, "nextAttemptAt",
			strcmp(state, "pending") == 0 ? (*f[DF_NEXT] ? f[DF_NEXT] : f[DF_CREATED])
						      : NULL);
	if (full) {
		json_time_field(g, "deliveredAt", f[DF_DELIVERED]);
		json_time_field(g, "deadAt", f[DF_DEAD]);
	}
	json_str(g, "lastStatus");
	if (*f[DF_STATUS])
		json_int(g, strtoll(f[DF_STATUS], NULL, 10));
	else
		json_null(g);
	json_str(g, "lastError");
	json_str_or_null(g, *f[DF_ERROR] ? f[DF_ERROR] : NULL);
	if (full) {
		json_str(g, "attemptLog");
		json_open_array(g);
		for (size_t i = 0; log && i < log->elements; i++)
			if (log->element[i]->str)
				json_raw(g, log->element[i]->str, log->element[i]->len);
		if (last && *last)
			json_raw(g, last, strlen(last));
		json_close_array(g);
	}
	json_close(g);
}

/* A string element of a reply, "" for anything else. */
static const char *str_at(const redisReply *r, size_t i)
{
	return r && i < r->elements && r->element[i]->type == REDIS_REPLY_STRING
		   ? r->element[i]->str
		   : "";
}

/* event_get's deliveries (each {endpoint, url, DELIVERY_FIELDS, latest
 * attempt, earlier attempts}) as "endpoints": [...], when there are any. */
static void render_deliveries(yajl_gen g, const redisReply *d)
{
	if (!d || d->type != REDIS_REPLY_ARRAY || !d->elements)
		return;
	json_str(g, "endpoints");
	json_open_array(g);
	for (size_t i = 0; i < d->elements; i++) {
		const redisReply *e = d->element[i], *f, *log;
		const char *fields[DF_COUNT];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 5 ||
		    e->element[2]->type != REDIS_REPLY_ARRAY || e->element[2]->elements != DF_COUNT)
			continue;
		f = e->element[2];
		log = e->element[4]->type == REDIS_REPLY_ARRAY ? e->element[4] : NULL;
		for (int j = 0; j < DF_COUNT; j++)
			fields[j] = str_at(f, (size_t)j);
		render_delivery(g, str_at(e, 0), fields, 1, str_at(e, 1), log, str_at(e, 3));
	}
	json_close_array(g);
}

void events_render(yajl_gen g, const char *id, const redisReply *h, const redisReply *log,
		   int leased, const redisReply *deliveries)
{
	const char *url = rds_hash_field(h, "url"), *status = rds_hash_field(h, "last_status");
	const char *err = rds_hash_field(h, "last_error"), *body = rds_hash_field(h, "body");
	const char *state = field_or(h, "state", "pending");
	const char *created = rds_hash_field(h, "created_ms");

	if (leased && strcmp(state, "pending") == 0)
		state = "delivering";

	json_open(g);
	json_str(g, "id");
	json_str(g, id); /* the key's: a stored `id` field says the same */
	json_str(g, "type");
	json_str(g, rds_hash_field(h, "type"));
	json_str(g, "state");
	json_str(g, state);
	json_str(g, "destination");
	json_str_or_null(g, url && *url ? url : NULL);
	json_str(g, "attempts");
	json_int(g, strtoll(field_or(h, "attempts", "0"), NULL, 10));
	json_time_field(g, "createdAt", created);
	json_time_field(g, "updatedAt", field_or(h, "updated_ms", created));
	json_time_field(g, "nextAttemptAt",
			strcmp(state, "pending") == 0 ? field_or(h, "next_ms", created) : NULL);
	json_time_field(g, "deliveredAt", rds_hash_field(h, "delivered_ms"));
	json_time_field(g, "deadAt", rds_hash_field(h, "dead_ms"));
	json_str(g, "lastStatus");
	if (status && *status)
		json_int(g, strtoll(status, NULL, 10));
	else
		json_null(g);
	json_str(g, "lastError");
	json_str_or_null(g, err && *err ? err : NULL);
	json_str(g, "payload");
	if (body && *body)
		json_raw(g, body, strlen(body));
	else
		json_null(g);
	if (log) {
		/* the earlier attempts, then the latest, kept with the event */
		const char *last = rds_hash_field(h, "attempt");
		json_str(g, "attemptLog");
		json_open_array(g);
		for (size_t i = 0; i < log->elements; i++)
			if (log->element[i]->str)
				json_raw(g, log->element[i]->str, log->element[i]->len);
		if (last && *last)
			json_raw(g, last, strlen(last));
		json_close_array(g);
	}
	render_deliveries(g, deliveries);
	json_close(g);
}

/* event_get's answer: {fields as HGETALL of a hash of version 2 gives them,
 * with the state derived and a lease folded in, earlier attempts}. */
static void on_event(void *ud, redisReply *reply, const char *err)
{
	struct lookup *l = ud;
	const redisReply *h, *log;
	const char *account, *env;
	yajl_gen g;
	size_t len;
	const char *s;

	if (err) {
		l->cb(l->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 3 ||
	    reply->element[0]->type != REDIS_REPLY_ARRAY ||
	    reply->element[1]->type != REDIS_REPLY_ARRAY) {
		l->cb(l->ud, -1, NULL, "unexpected reply from event_get");
		goto done;
	}
	h = reply->element[0];
	log = reply->element[1];
	account = rds_hash_field(h, "account");
	env = rds_hash_field(h, "env");
	if (!account || !env || strcmp(account, l->account) != 0 ||
	    strcmp(env, env_name(l->env)) != 0) {
		l->cb(l->ud, EVENTS_NOT_FOUND, NULL, NULL);
		goto done;
	}
	g = json_gen_new();
	events_render(g, l->id, h, log, 0, reply->element[2]);
	s = json_buf(g, &len);
	l->cb(l->ud, 0, s, NULL);
	yajl_gen_free(g);
done:
	free(l);
}

static struct lookup *lookup_new(struct rds *r, const struct config *cfg, enum env env,
				 const char *account, const char *id, store_fn cb, void *ud)
{
	int shard = ks_shard_of(id);
	struct lookup *l;

	/* an account's events live in its shard: an id of another shard is not its */
	if (strncmp(id, "evt_", 4) != 0 || shard < 0 || shard != ks_shard_of(account))
		return NULL;
	l = mem_new(struct lookup);
	l->r = r;
	l->cfg = cfg;
	l->env = env;
	snprintf(l->account, sizeof(l->account), "%s", account);
	snprintf(l->id, sizeof(l->id), "%s", id);
	l->shard = shard;
	ks_shard_prefix(l->prefix, sizeof(l->prefix), cfg->prefix, shard);
	l->cb = cb;
	l->ud = ud;
	return l;
}

struct deferred_nf {
	store_fn cb;
	void *ud;
};

void events_get(struct rds *r, const struct config *cfg, enum env env, const char *account,
		const char *id, store_fn cb, void *ud)
{
	struct lookup *l = lookup_new(r, cfg, env, account, id, cb, ud);
	char k[300];

	if (!l) {
		cb(ud, EVENTS_NOT_FOUND, NULL, NULL);
		return;
	}
	/* one script: the lease, the hash or the stream entry, and the log
	 * are read at one moment (event_get.lua) */
	ks_lease_key(k, sizeof(k), cfg->prefix, l->shard);
	{
		const char *argv[] = {k, l->prefix, l->id, l->account};
		rds_script(r, on_event, l, SCRIPT_EVENT_GET, 1, 4, argv, NULL);
	}
}

/* event_replay's answer: {code, the destinations requeued...}. */
static void on_replayed(void *ud, redisReply *reply, const char *err)
{
	struct lookup *l = ud;
	long long code = -1;
	char dests[512] = "";

	if (!err && reply->type == REDIS_REPLY_ARRAY && reply->elements >= 1 &&
	    reply->element[0]->type == REDIS_REPLY_INTEGER)
		code = reply->element[0]->integer;
	for (size_t i = 1; code == 1 && i < reply->elements; i++)
		snprintf(dests + strlen(dests), sizeof(dests) - strlen(dests), "%s%s",
			 dests[0] ? " " : "", str_at(reply, i));
	if (err)
		l->cb(l->ud, -1, NULL, err);
	else if (code == 1)
		l->cb(l->ud, 0, dests, NULL);
	else if (code == 2)
		l->cb(l->ud, EVENTS_BUSY, NULL, NULL);
	else if (code == 3)
		l->cb(l->ud, EVENTS_NO_DESTINATION, NULL, NULL);
	else
		l->cb(l->ud, EVENTS_NOT_FOUND, NULL, NULL);
	free(l);
}

void events_replay(struct rds *r, const struct config *cfg, enum env env, const char *account,
		   const char *id, const char *destination, store_fn cb, void *ud)
{
	struct lookup *l = lookup_new(r, cfg, env, account, id, cb, ud);
	char due[300], dead[300], now[32];

	if (!l) {
		cb(ud, EVENTS_NOT_FOUND, NULL, NULL);
		return;
	}
	ks_hosts_key(due, sizeof(due), cfg->prefix, l->shard);
	ks_dead_key(dead, sizeof(dead), cfg->prefix, l->shard);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ids_now_ms());
	{
		const char *argv[] = {due, dead,    l->prefix,	   l->id,
				      now, account, env_name(env), destination ? destination : ""};
		rds_script(r, on_replayed, l, SCRIPT_EVENT_REPLAY, 2, 8, argv, NULL);
	}
}

/* ---- listing ---- */

#define LIST_FIELDS 10
#define SCAN_CAP 2000

struct list_item {
	long long created;
	char *fields[LIST_FIELDS];
	size_t ndeliveries;
	char **deliveries; /* ndeliveries times: endpoint id, DF_COUNT fields */
};

struct list {
	struct rds *r;
	const struct config *cfg;
	enum env env;
	char account[32];
	int limit;
	int ids_only;
	store_fn cb;
	void *ud;
	int failed;
	int more;
	struct list_item *items;
	size_t n, cap;
	char err[256];
};

static void list_free(struct list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		for (int j = 0; j < LIST_FIELDS; j++)
			free(l->items[i].fields[j]);
		for (size_t j = 0; j < l->items[i].ndeliveries * (1 + DF_COUNT); j++)
			free(l->items[i].deliveries[j]);
		free(l->items[i].deliveries);
	}
	free(l->items);
	free(l);
}

static void list_finish(struct list *l)
{
	yajl_gen g;
	size_t len, shown;
	const char *s;
	char ms[PAGE_SCORE_MAX] = "";

	if (l->failed) {
		l->cb(l->ud, -1, NULL, l->err);
		list_free(l);
		return;
	}
	shown = l->n < (size_t)l->limit ? l->n : (size_t)l->limit;
	if (l->ids_only) {
		size_t total = 1, at = 0;
		char *ids;
		for (size_t i = 0; i < shown; i++)
			total += strlen(l->items[i].fields[0]) + 1;
		ids = mem_alloc(total);
		for (size_t i = 0; i < shown; i++) {
			size_t n = strlen(l->items[i].fields[0]);
			if (i)
				ids[at++] = ' ';
			memcpy(ids + at, l->items[i].fields[0], n);
			at += n;
		}
		ids[at] = '\0';
		l->cb(l->ud, 0, ids, NULL);
		free(ids);
		list_free(l);
		return;
	}
	g = json_gen_new();
	json_open(g);
	json_str(g, "events");
	json_open_array(g);
	for (size_t i = 0; i < shown; i++) {
		char **f = l->items[i].fields;
		json_open(g);
		json_str(g, "id");
		json_str(g, f[0]);
		json_str(g, "type");
		json_str(g, f[2]);
		json_str(g, "state");
		json_str(g, f[3]);
		json_str(g, "destination");
		json_str_or_null(g, *f[4] ? f[4] : NULL);
		json_str(g, "attempts");
		json_int(g, strtoll(f[5], NULL, 10));
		json_time_field(g, "createdAt", f[1]);
		json_time_field(g, "updatedAt", f[6]);
		json_time_field(g, "nextAttemptAt", strcmp(f[3], "pending") == 0 ? f[7] : NULL);
		json_str(g, "lastStatus");
		if (*f[8])
			json_int(g, strtoll(f[8], NULL, 10));
		else
			json_null(g);
		json_str(g, "lastError");
		json_str_or_null(g, *f[9] ? f[9] : NULL);
		if (l->items[i].ndeliveries) {
			json_str(g, "endpoints");
			json_open_array(g);
			for (size_t j = 0; j < l->items[i].ndeliveries; j++) {
				char **d = l->items[i].deliveries + j * (1 + DF_COUNT);
				render_delivery(g, d[0], (const char *const *)(d + 1), 0, NULL,
						NULL, NULL);
			}
			json_close_array(g);
		}
		json_close(g);
	}
	json_close_array(g);
	if (shown > 0 && (l->n > shown || l->more))
		snprintf(ms, sizeof(ms), "%lld", l->items[shown - 1].created);
	page_write_next(g, ms, shown > 0 ? l->items[shown - 1].fields[0] : NULL);
	json_close(g);
	s = json_buf(g, &len);
	l->cb(l->ud, 0, s, NULL);
	yajl_gen_free(g);
	list_free(l);
}

static void on_shard_list(void *ud, redisReply *reply, const char *err)
{
	struct list *l = ud;

	if (err) {
		l->failed = 1;
		snprintf(l->err, sizeof(l->err), "%s", err);
	} else if (reply->type == REDIS_REPLY_ARRAY && reply->elements >= 1) {
		/* per event LIST_FIELDS fields, k, and k deliveries of 1 + DF_COUNT */
		size_t at = 0, end = reply->elements - 1;
		redisReply *last = reply->element[end];
		if (last->str && strcmp(last->str, "1") == 0)
			l->more = 1;
		while (at + LIST_FIELDS + 1 <= end) {
			struct list_item it;
			size_t k = strtoul(str_at(reply, at + LIST_FIELDS), NULL, 10);
			if (at + LIST_FIELDS + 1 + k * (1 + DF_COUNT) > end)
				break;
			if (l->n == l->cap) {
				l->cap = l->cap ? 2 * l->cap : 64;
				l->items = mem_realloc(l->items, l->cap * sizeof(*l->items));
			}
			for (int j = 0; j < LIST_FIELDS; j++)
				it.fields[j] = mem_strdup(str_at(reply, at + (size_t)j));
			at += LIST_FIELDS + 1;
			it.ndeliveries = k;
			it.deliveries = k ? mem_calloc(k * (1 + DF_COUNT), sizeof(char *)) : NULL;
			for (size_t j = 0; j < k * (1 + DF_COUNT); j++)
				it.deliveries[j] = mem_strdup(str_at(reply, at + j));
			at += k * (1 + DF_COUNT);
			it.created = strtoll(it.fields[1], NULL, 10);
			l->items[l->n++] = it;
		}
	}
	list_finish(l);
}

void events_list(struct rds *r, const struct config *cfg, enum env env, const char *account,
		 const struct event_filter *f, int ids_only, store_fn cb, void *ud)
{
	struct list *l = mem_new(struct list);
	char maxs[32], mins[32], limit[16], cap[16];

	l->r = r;
	l->cfg = cfg;
	l->env = env;
	snprintf(l->account, sizeof(l->account), "%s", account);
	l->limit = f->limit;
	l->ids_only = ids_only;
	l->cb = cb;
	l->ud = ud;
	{
		long long max = f->until_ms > 0 ? f->until_ms : 0;
		if (f->cursor_ms > 0 && (max == 0 || f->cursor_ms < max))
			max = f->cursor_ms;
		if (max > 0)
			snprintf(maxs, sizeof(maxs), "%lld", max);
		else
			snprintf(maxs, sizeof(maxs), "+inf");
	}
	snprintf(mins, sizeof(mins), "%lld", f->since_ms > 0 ? f->since_ms : 0);
	snprintf(limit, sizeof(limit), "%d", f->limit);
	snprintf(cap, sizeof(cap), "%d", SCAN_CAP);
	{
		char prefix[KS_PREFIX_MAX], idx[KS_KEY_MAX];
		int shard = ks_shard_of(account);
		const char *argv[] = {idx,
				      prefix,
				      maxs,
				      f->cursor_ms > 0 && f->cursor_id ? f->cursor_id : "",
				      mins,
				      f->state ? f->state : "",
				      f->type ? f->type : "",
				      limit,
				      cap};
		if (shard < 0)
			shard = 0;
		ks_shard_prefix(prefix, sizeof(prefix), cfg->prefix, shard);
		ks_event_index_key(idx, sizeof(idx), cfg->prefix, shard, account);
		rds_script(r, on_shard_list, l, SCRIPT_EVENT_LIST, 1, 9, argv, NULL);
	}
}

/* ---- bulk replay ---- */

struct many {
	struct rds *r;
	const struct config *cfg;
	enum env env;
	char account[32];
	store_fn cb;
	void *ud;
	int matched, requeued, left, failed;
	char err[256];
};

static void many_finish(struct many *m)
{
	char json[96];

	if (m->failed) {
		m->cb(m->ud, -1, NULL, m->err);
	} else {
		snprintf(json, sizeof(json), "{\"matched\":%d,\"requeued\":%d}", m->matched,
			 m->requeued);
		m->cb(m->ud, 0, json, NULL);
	}
	free(m);
}

static void on_one_replayed(void *ud, int result, const char *json, const char *err)
{
	struct many *m = ud;

	if (result == 0)
		m->requeued++;
	else if (result < 0 && !m->failed) {
		m->failed = 1;
		snprintf(m->err, sizeof(m->err), "%s", err);
	}
	if (--m->left == 0)
		many_finish(m);
}

static void on_ids(void *ud, int result, const char *ids, const char *err)
{
	struct many *m = ud;
	char *copy, *save = NULL;

	if (result < 0) {
		m->failed = 1;
		snprintf(m->err, sizeof(m->err), "%s", err);
		many_finish(m);
		return;
	}
	copy = mem_strdup(ids);
	for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save))
		m->matched++;
	if (m->matched == 0) {
		free(copy);
		many_finish(m);
		return;
	}
	/* one extra count held by this loop, so that m outlives it */
	m->left = m->matched + 1;
	free(copy);
	copy = mem_strdup(ids);
	save = NULL;
	for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save))
		events_replay(m->r, m->cfg, m->env, m->account, t, NULL, on_one_replayed, m);
	free(copy);
	on_one_replayed(m, EVENTS_BUSY, NULL, NULL);
}

void events_replay_many(struct rds *r, const struct config *cfg, enum env env, const char *account,
			const struct event_filter *f, store_fn cb, void *ud)
{
	struct many *m = mem_new(struct many);

	m->r = r;
	m->cfg = cfg;
	m->env = env;
	snprintf(m->account, sizeof(m->account), "%s", account);
	m->cb = cb;
	m->ud = ud;
	events_list(r, cfg, env, account, f, 1, on_ids, m);
}

/* ---- how a shard's queue stands ---- */

struct stats_call {
	void (*cb)(void *ud, int result, const struct events_stats *st, const char *err);
	void *ud;
};

static void on_stats(void *ud, redisReply *reply, const char *err)
{
	struct stats_call *c = ud;
	struct events_stats st;

	memset(&st, 0, sizeof(st));
	if (err) {
		c->cb(c->ud, -1, NULL, err);
	} else if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 14 ||
		   reply->element[3]->type != REDIS_REPLY_STRING) {
		c->cb(c->ud, -1, NULL, "unexpected reply from shard_stats");
	} else {
		redisReply **e = reply->element;
		st.pending = e[0]->integer;
		st.delivering = e[1]->integer;
		st.dead = e[2]->integer;
		st.earliest_due_ms = e[3]->len ? strtoll(e[3]->str, NULL, 10) : 0;
		/* then 5 per environment, sandbox first (shard_stats.lua) */
		for (int env = 0; env < 2; env++, e += 5) {
			st.to_postback[env] = e[4]->integer;
			st.to_endpoint[env] = e[5]->integer;
			st.held[env] = e[6]->integer;
			st.disabled[env] = e[7]->integer;
			st.disabled_by_req[env] = e[8]->integer;
		}
		c->cb(c->ud, 0, &st, NULL);
	}
	free(c);
}

void events_shard_stats(struct rds *r, const struct config *cfg, int shard,
			void (*cb)(void *ud, int result, const struct events_stats *st,
				   const char *err),
			void *ud)
{
	struct stats_call *c = mem_new(struct stats_call);
	char sp[KS_PREFIX_MAX], k1[KS_KEY_MAX], k2[KS_KEY_MAX], k3[KS_KEY_MAX];

	c->cb = cb;
	c->ud = ud;
	ks_shard_prefix(sp, sizeof(sp), cfg->prefix, shard);
	ks_hosts_key(k1, sizeof(k1), cfg->prefix, shard);
	ks_lease_key(k2, sizeof(k2), cfg->prefix, shard);
	ks_dead_key(k3, sizeof(k3), cfg->prefix, shard);
	{
		const char *argv[] = {k1, k2, k3, sp};
		rds_script(r, on_stats, c, SCRIPT_SHARD_STATS, 3, 4, argv, NULL);
	}
}

/* ---- the events after a point, oldest first (live streams) ---- */

struct after {
	events_items_fn cb;
	void *ud;
	int limit;
};

/* event_after's answer: {index members read, then id, created_ms, type,
 * url, body per event still kept}. */
static void on_after(void *ud, redisReply *reply, const char *err)
{
	struct after *a = ud;
	struct events_item *items = NULL;
	size_t n = 0;

	if (err) {
		a->cb(a->ud, -1, NULL, 0, 0, err);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 ||
	    reply->element[0]->type != REDIS_REPLY_INTEGER || (reply->elements - 1) % 5 != 0) {
		a->cb(a->ud, -1, NULL, 0, 0, "unexpected reply from event_after");
		goto done;
	}
	n = (reply->elements - 1) / 5;
	items = mem_calloc(n ? n : 1, sizeof(*items));
	for (size_t i = 0; i < n; i++) {
		redisReply *const *e = reply->element + 1 + 5 * i;
		if (e[0]->type != REDIS_REPLY_STRING || e[1]->type != REDIS_REPLY_STRING ||
		    e[2]->type != REDIS_REPLY_STRING || e[3]->type != REDIS_REPLY_STRING ||
		    e[4]->type != REDIS_REPLY_STRING) {
			a->cb(a->ud, -1, NULL, 0, 0, "unexpected reply from event_after");
			goto done;
		}
		items[i].id = e[0]->str;
		items[i].created_ms = strtoll(e[1]->str, NULL, 10);
		items[i].type = e[2]->str;
		items[i].url = e[3]->str;
		items[i].body = e[4]->str;
	}
	a->cb(a->ud, 0, items, n, reply->element[0]->integer >= a->limit, NULL);
done:
	free(items);
	free(a);
}

void events_after(struct rds *r, const struct config *cfg, enum env env, const char *account,
		  long long from_ms, long offset, int limit, events_items_fn cb, void *ud)
{
	struct after *a = mem_new(struct after);
	char idx[KS_KEY_MAX], sp[KS_PREFIX_MAX], mins[32], offs[32], lims[16];
	int shard = ks_shard_of(account);

	a->cb = cb;
	a->ud = ud;
	if (shard < 0)
		shard = 0;
	ks_shard_prefix(sp, sizeof(sp), cfg->prefix, shard);
	ks_event_index_key(idx, sizeof(idx), cfg->prefix, shard, account);
	snprintf(mins, sizeof(mins), "%lld", from_ms > 0 ? from_ms : 0);
	snprintf(offs, sizeof(offs), "%ld", offset > 0 ? offset : 0);
	if (limit < 1)
		limit = 1;
	if (limit > EVENTS_AFTER_MAX)
		limit = EVENTS_AFTER_MAX;
	a->limit = limit;
	snprintf(lims, sizeof(lims), "%d", limit);
	{
		const char *argv[] = {idx, sp, mins, offs, lims, env_name(env), account};
		rds_script(r, on_after, a, SCRIPT_EVENT_AFTER, 1, 7, argv, NULL);
	}
}

/* ---- trimming the stream ---- */

struct trim_call {
	void (*done)(void *ud, long long n);
	void *ud;
};

static void on_trimmed(void *ud, redisReply *reply, const char *err)
{
	struct trim_call *c = ud;

	if (err || reply->type != REDIS_REPLY_INTEGER)
		c->done(c->ud, -1);
	else
		c->done(c->ud, reply->integer);
	free(c);
}

void events_trim(struct rds *r, const struct config *cfg, int shard, uint64_t now_ms,
		 void (*done)(void *ud, long long n), void *ud)
{
	struct trim_call *c = mem_new(struct trim_call);
	char sp[KS_PREFIX_MAX], lease[KS_KEY_MAX], oldest[32];
	uint64_t keep = (uint64_t)cfg->event_retention_days * 86400000u;

	c->done = done;
	c->ud = ud;
	ks_shard_prefix(sp, sizeof(sp), cfg->prefix, shard);
	ks_lease_key(lease, sizeof(lease), cfg->prefix, shard);
	snprintf(oldest, sizeof(oldest), "%llu",
		 (unsigned long long)(now_ms > keep ? now_ms - keep : 0));
	{
		const char *argv[] = {lease, sp, oldest};
		rds_script(r, on_trimmed, c, SCRIPT_STREAM_TRIM, 1, 3, argv, NULL);
	}
}
