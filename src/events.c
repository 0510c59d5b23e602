#include "pixrelay/events.h"

#include "pixrelay/ids.h"
#include "pixrelay/json.h"
#include "pixrelay/log.h"
#include "pixrelay/mem.h"
#include "pixrelay/timefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PUMP_BATCH 100

static const char crockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

int events_shard_of(const char *order_key, long nshards)
{
	/* FNV-1a: stable across processes and versions, which the mapping must be */
	uint32_t h = 2166136261u;

	for (const unsigned char *p = (const unsigned char *)order_key; *p; p++) {
		h ^= *p;
		h *= 16777619u;
	}
	return (int)(h % (uint32_t)(nshards > 0 ? nshards : 1));
}

void events_new_id(int shard, char out[EVENTS_ID_MAX])
{
	memcpy(out, "evt_", 4);
	ids_ulid(out + 4);
	out[4 + IDS_ULID_LEN - 1] = crockford[shard & 31];
}

int events_id_shard(const char *id)
{
	const char *p;

	if (strncmp(id, "evt_", 4) != 0 || !ids_is_ulid(id + 4))
		return -1;
	p = strchr(crockford, id[4 + IDS_ULID_LEN - 1]);
	return p ? (int)(p - crockford) : -1;
}

void events_shard_prefix(char *out, size_t size, const char *prefix, int shard)
{
	snprintf(out, size, "%s{q%d}:", prefix, shard);
}

void events_outbox_key(char *out, size_t size, const char *prefix, enum auth_env env)
{
	snprintf(out, size, "%s{%s}:outbox", prefix, auth_env_name(env));
}

/* ---- pump: outbox -> shards ---- */

/* One outbox entry on its way to its shard. */
struct pump_entry {
	char *raw;  /* the entry as stored, to remove it by value */
	yajl_val v; /* parsed; NULL when malformed */
	const char *order;
	int state; /* ENTRY_* */
	long pred; /* the previous entry of the same order key in this batch, or -1 */
};

enum { ENTRY_WAITING, ENTRY_SENT, ENTRY_OK, ENTRY_FAILED, ENTRY_BLOCKED };

struct pump {
	struct rds *r;
	const struct config *cfg;
	enum auth_env env;
	void (*done)(void *ud, int moved);
	void *ud;
	size_t n;
	struct pump_entry *e; /* oldest first */
	size_t in_flight;     /* enqueues sent, not answered */
	size_t removing;      /* LREMs not yet answered */
	int moved;
	int failed;
	int sending, again; /* pump_send_ready is running / must run again */
};

static void pump_free(struct pump *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->e[i].raw);
		yajl_tree_free(p->e[i].v);
	}
	free(p->e);
	free(p);
}

static void on_removed(void *ud, redisReply *reply, const char *err)
{
	struct pump *p = ud;

	if (err)
		log_warn("outbox: cannot remove a moved event: %s", err);
	if (--p->removing > 0)
		return;
	p->done(p->ud, p->moved);
	pump_free(p);
}

/* Every entry is settled: remove those that reached their shard. Entries
 * left behind (a failure, or waiting behind one of the same charge) are
 * tried again by the next pump, oldest first. */
static void pump_finish(struct pump *p)
{
	char outbox[256];
	size_t nremove = 0;

	events_outbox_key(outbox, sizeof(outbox), p->cfg->prefix, p->env);
	for (size_t i = 0; i < p->n; i++)
		if (p->e[i].state == ENTRY_OK)
			nremove++;
	p->moved = (int)nremove;
	if (nremove == 0) {
		p->done(p->ud, p->failed ? -1 : 0);
		pump_free(p);
		return;
	}
	/* one count more, held by this loop: at shutdown the callbacks run at
	 * once, and the last one frees p */
	p->removing = nremove + 1;
	for (size_t i = 0; i < p->n; i++) {
		if (p->e[i].state != ENTRY_OK)
			continue;
		{
			const char *argv[] = {"LREM", outbox, "-1", p->e[i].raw};
			rds_cmd_argv(p->r, on_removed, p, 4, argv, NULL);
		}
	}
	on_removed(p, NULL, NULL);
}

struct enqueue_cb {
	struct pump *p;
	size_t i;
};

static void pump_send_ready(struct pump *p);
static void pump_send_round(struct pump *p);

static void on_enqueued(void *ud, redisReply *reply, const char *err)
{
	struct enqueue_cb *c = ud;
	struct pump *p = c->p;

	if (err) {
		log_warn("outbox: cannot enqueue an event: %s", err);
		p->e[c->i].state = ENTRY_FAILED;
		p->failed = 1;
	} else {
		p->e[c->i].state = ENTRY_OK;
	}
	free(c);
	p->in_flight--;
	pump_send_ready(p);
}

static void enqueue_one(struct pump *p, size_t i)
{
	yajl_val v = p->e[i].v;
	char prefix[256], due[300], created[32], now[32], ttl[32];
	struct enqueue_cb *c = mem_new(struct enqueue_cb);
	const char *id = YAJL_GET_STRING(json_get(v, "id"));
	yajl_val cv = json_get(v, "created");

	c->p = p;
	c->i = i;
	events_shard_prefix(prefix, sizeof(prefix), p->cfg->prefix, events_id_shard(id));
	snprintf(due, sizeof(due), "%sdue", prefix);
	snprintf(created, sizeof(created), "%lld",
		 YAJL_IS_INTEGER(cv) ? YAJL_GET_INTEGER(cv) : (long long)YAJL_GET_DOUBLE(cv));
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ids_now_ms());
	snprintf(ttl, sizeof(ttl), "%ld", p->cfg->event_retention_days * 86400);
	p->e[i].state = ENTRY_SENT;
	p->in_flight++;
	{
		const char *argv[] = {due,
				      prefix,
				      id,
				      auth_env_name(p->env),
				      YAJL_GET_STRING(json_get(v, "account")),
				      YAJL_GET_STRING(json_get(v, "type")),
				      YAJL_GET_STRING(json_get(v, "url")),
				      YAJL_GET_STRING(json_get(v, "body")),
				      p->e[i].order,
				      created,
				      now,
				      ttl};
		rds_script(p->r, on_enqueued, c, SCRIPT_EVENT_ENQUEUE, 1, 12, argv, NULL);
	}
}

/* Send every entry whose earlier entries of the same order key (charge) are
 * in their shard already; block those behind a failure. Entries of
 * different charges go out together. */
static void pump_send_ready(struct pump *p)
{
	/* at shutdown an answer may come at once, from inside enqueue_one:
	 * then the loop below runs again instead of nesting */
	if (p->sending) {
		p->again = 1;
		return;
	}
	p->sending = 1;
	do {
		p->again = 0;
		pump_send_round(p);
	} while (p->again);
	p->sending = 0;
	if (p->in_flight == 0)
		pump_finish(p);
}

static void pump_send_round(struct pump *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct pump_entry *e = &p->e[i];
		int pred_state = e->pred < 0 ? ENTRY_OK : p->e[e->pred].state;
		if (e->state != ENTRY_WAITING)
			continue;
		if (pred_state == ENTRY_FAILED || pred_state == ENTRY_BLOCKED)
			e->state = ENTRY_BLOCKED; /* it waits for the next pump */
		else if (pred_state == ENTRY_OK)
			enqueue_one(p, i);
	}
}

/* Parse an entry; a malformed one (which would block the outbox for good)
 * is logged and counted as moved, so that it is removed. */
static void pump_parse(struct pump *p, struct pump_entry *e)
{
	char err[128];
	const char *id, *order;
	yajl_val cv;

	if (json_parse_object(e->raw, strlen(e->raw), &e->v, err, sizeof(err)) < 0)
		e->v = NULL;
	id = e->v ? YAJL_GET_STRING(json_get(e->v, "id")) : NULL;
	order = e->v ? YAJL_GET_STRING(json_get(e->v, "order")) : NULL;
	cv = e->v ? json_get(e->v, "created") : NULL;
	if (id && events_id_shard(id) >= p->cfg->queue_shards) {
		/* written by a process with more shards: never drop it */
		log_error("outbox: event %s belongs to delivery shard %d, but queue-shards is %ld "
			  "here; it waits until this process has the same (larger) queue-shards",
			  id, events_id_shard(id), p->cfg->queue_shards);
		e->state = ENTRY_BLOCKED;
		e->order = "";
		return;
	}
	if (!id || !order || !YAJL_GET_STRING(json_get(e->v, "type")) ||
	    !YAJL_GET_STRING(json_get(e->v, "account")) ||
	    !YAJL_GET_STRING(json_get(e->v, "url")) || !YAJL_GET_STRING(json_get(e->v, "body")) ||
	    !YAJL_IS_NUMBER(cv) || events_id_shard(id) < 0) {
		log_error("outbox: dropping malformed entry: %.200s", e->raw);
		e->state = ENTRY_OK;
		e->order = "";
		return;
	}
	e->order = order;
	e->state = ENTRY_WAITING;
}

static void on_outbox(void *ud, redisReply *reply, const char *err)
{
	struct pump *p = ud;
	size_t n;

	if (err || reply->type != REDIS_REPLY_ARRAY) {
		p->done(p->ud, -1);
		pump_free(p);
		return;
	}
	n = reply->elements;
	if (n == 0) {
		p->done(p->ud, 0);
		pump_free(p);
		return;
	}
	p->e = mem_calloc(n, sizeof(*p->e));
	/* LPUSH puts the newest first: walk from the end to go oldest first */
	for (size_t i = 0; i < n; i++) {
		redisReply *r = reply->element[n - 1 - i];
		p->e[p->n].raw = mem_strndup(r->str ? r->str : "", r->str ? r->len : 0);
		pump_parse(p, &p->e[p->n]);
		p->e[p->n].pred = -1;
		/* once per batch: which earlier entry of the same charge comes first */
		for (size_t j = p->n; j-- > 0;) {
			if (p->e[p->n].state == ENTRY_WAITING && p->e[j].state == ENTRY_WAITING &&
			    strcmp(p->e[j].order, p->e[p->n].order) == 0) {
				p->e[p->n].pred = (long)j;
				break;
			}
		}
		p->n++;
	}
	pump_send_ready(p);
}

void events_pump(struct rds *r, const struct config *cfg, enum auth_env env,
		 void (*done)(void *ud, int moved), void *ud)
{
	struct pump *p = mem_new(struct pump);
	char outbox[256], start[16];
	const char *argv[] = {"LRANGE", outbox, start, "-1"};

	p->r = r;
	p->cfg = cfg;
	p->env = env;
	p->done = done;
	p->ud = ud;
	events_outbox_key(outbox, sizeof(outbox), cfg->prefix, env);
	snprintf(start, sizeof(start), "-%d", PUMP_BATCH);
	rds_cmd_argv(r, on_outbox, p, 4, argv, NULL);
}

/* ---- inspection and replay ---- */

struct lookup {
	struct rds *r;
	const struct config *cfg;
	enum auth_env env;
	char account[32];
	char id[EVENTS_ID_MAX];
	char prefix[256];
	events_fn cb;
	void *ud;
	redisReply *event; /* HGETALL, kept until the log arrives */
};

static void json_time_field(yajl_gen g, const char *name, const char *ms)
{
	char t[25];

	json_str(g, name);
	if (!ms || !*ms) {
		json_null(g);
		return;
	}
	timefmt_rfc3339(t, strtoull(ms, NULL, 10));
	json_str(g, t);
}

/* Render an event (HGETALL reply) and its log (LRANGE reply) as JSON. */
void events_render(yajl_gen g, const redisReply *h, const redisReply *log)
{
	const char *url = rds_hash_field(h, "url"), *status = rds_hash_field(h, "last_status");
	const char *err = rds_hash_field(h, "last_error"), *body = rds_hash_field(h, "body");
	const char *state = rds_hash_field(h, "state");

	json_open(g);
	json_str(g, "id");
	json_str(g, rds_hash_field(h, "id"));
	json_str(g, "type");
	json_str(g, rds_hash_field(h, "type"));
	json_str(g, "state");
	json_str(g, state);
	json_str(g, "destination");
	json_str_or_null(g, url && *url ? url : NULL);
	json_str(g, "attempts");
	json_int(g, strtoll(rds_hash_field(h, "attempts"), NULL, 10));
	json_time_field(g, "createdAt", rds_hash_field(h, "created_ms"));
	json_time_field(g, "updatedAt", rds_hash_field(h, "updated_ms"));
	json_time_field(g, "nextAttemptAt",
			strcmp(state, "pending") == 0 ? rds_hash_field(h, "next_ms") : NULL);
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
		json_str(g, "attemptLog");
		json_open_array(g);
		for (size_t i = 0; i < log->elements; i++)
			if (log->element[i]->str)
				json_raw(g, log->element[i]->str, log->element[i]->len);
		json_close_array(g);
	}
	json_close(g);
}

static void lookup_free(struct lookup *l)
{
	if (l->event)
		freeReplyObject(l->event);
	free(l);
}

static void on_log(void *ud, redisReply *reply, const char *err)
{
	struct lookup *l = ud;
	yajl_gen g;
	size_t len;
	const char *s;

	if (err) {
		l->cb(l->ud, -1, NULL, err);
		lookup_free(l);
		return;
	}
	g = json_gen_new();
	events_render(g, l->event, reply);
	s = json_buf(g, &len);
	l->cb(l->ud, 0, s, NULL);
	yajl_gen_free(g);
	lookup_free(l);
}

/* hiredis frees a reply after its callback: keep a deep copy */
static redisReply *copy_reply(const redisReply *r)
{
	redisReply *c = mem_new(redisReply);

	c->type = r->type;
	c->integer = r->integer;
	if (r->str) {
		c->str = mem_strndup(r->str, r->len);
		c->len = r->len;
	}
	if (r->elements) {
		c->element = mem_calloc(r->elements, sizeof(redisReply *));
		c->elements = r->elements;
		for (size_t i = 0; i < r->elements; i++)
			c->element[i] = copy_reply(r->element[i]);
	}
	return c;
}

static void on_event(void *ud, redisReply *reply, const char *err)
{
	struct lookup *l = ud;
	const char *account, *env;
	char k[300];

	if (err) {
		l->cb(l->ud, -1, NULL, err);
		lookup_free(l);
		return;
	}
	account = rds_hash_field(reply, "account");
	env = rds_hash_field(reply, "env");
	if (!account || !env || strcmp(account, l->account) != 0 ||
	    strcmp(env, auth_env_name(l->env)) != 0) {
		l->cb(l->ud, EVENTS_NOT_FOUND, NULL, NULL);
		lookup_free(l);
		return;
	}
	l->event = copy_reply(reply);
	snprintf(k, sizeof(k), "%slog:%s", l->prefix, l->id);
	{
		const char *argv[] = {"LRANGE", k, "0", "-1"};
		rds_cmd_argv(l->r, on_log, l, 4, argv, NULL);
	}
}

static struct lookup *lookup_new(struct rds *r, const struct config *cfg, enum auth_env env,
				 const char *account, const char *id, events_fn cb, void *ud)
{
	int shard = events_id_shard(id);
	struct lookup *l;

	if (shard < 0 || shard >= cfg->queue_shards)
		return NULL;
	l = mem_new(struct lookup);
	l->r = r;
	l->cfg = cfg;
	l->env = env;
	snprintf(l->account, sizeof(l->account), "%s", account);
	snprintf(l->id, sizeof(l->id), "%s", id);
	events_shard_prefix(l->prefix, sizeof(l->prefix), cfg->prefix, shard);
	l->cb = cb;
	l->ud = ud;
	return l;
}

struct deferred_nf {
	events_fn cb;
	void *ud;
};

void events_get(struct rds *r, const struct config *cfg, enum auth_env env, const char *account,
		const char *id, events_fn cb, void *ud)
{
	struct lookup *l = lookup_new(r, cfg, env, account, id, cb, ud);
	char k[300];

	if (!l) {
		cb(ud, EVENTS_NOT_FOUND, NULL, NULL);
		return;
	}
	snprintf(k, sizeof(k), "%se:%s", l->prefix, l->id);
	{
		const char *argv[] = {"HGETALL", k};
		rds_cmd_argv(r, on_event, l, 2, argv, NULL);
	}
}

static void on_replayed(void *ud, redisReply *reply, const char *err)
{
	struct lookup *l = ud;

	if (err)
		l->cb(l->ud, -1, NULL, err);
	else if (reply->type != REDIS_REPLY_INTEGER || reply->integer == 0)
		l->cb(l->ud, EVENTS_NOT_FOUND, NULL, NULL);
	else if (reply->integer == 2)
		l->cb(l->ud, EVENTS_BUSY, NULL, NULL);
	else
		l->cb(l->ud, 0, NULL, NULL);
	lookup_free(l);
}

void events_replay(struct rds *r, const struct config *cfg, enum auth_env env, const char *account,
		   const char *id, events_fn cb, void *ud)
{
	struct lookup *l = lookup_new(r, cfg, env, account, id, cb, ud);
	char due[300], dead[300], now[32];

	if (!l) {
		cb(ud, EVENTS_NOT_FOUND, NULL, NULL);
		return;
	}
	snprintf(due, sizeof(due), "%sdue", l->prefix);
	snprintf(dead, sizeof(dead), "%sdead", l->prefix);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ids_now_ms());
	{
		const char *argv[] = {due, dead,    l->prefix,	       l->id,
				      now, account, auth_env_name(env)};
		rds_script(r, on_replayed, l, SCRIPT_EVENT_REPLAY, 2, 7, argv, NULL);
	}
}

/* ---- listing ---- */

#define LIST_FIELDS 10
#define SCAN_CAP 2000

struct list_item {
	long long created;
	char *fields[LIST_FIELDS];
};

struct list {
	struct rds *r;
	const struct config *cfg;
	enum auth_env env;
	char account[32];
	int limit;
	int ids_only;
	events_fn cb;
	void *ud;
	long shards, replies;
	int failed;
	int more;
	struct list_item *items;
	size_t n, cap;
	char err[256];
};

int events_parse_cursor(const char *s, long long *ms, const char **id)
{
	char *end = NULL;
	long long v = strtoll(s, &end, 10);

	if (end == s || *end != '_' || v <= 0 || events_id_shard(end + 1) < 0)
		return -1;
	*ms = v;
	*id = end + 1;
	return 0;
}

static int item_cmp(const void *a, const void *b)
{
	const struct list_item *x = a, *y = b;

	if (x->created != y->created)
		return x->created < y->created ? 1 : -1;
	return -strcmp(x->fields[0], y->fields[0]);
}

static void list_free(struct list *l)
{
	for (size_t i = 0; i < l->n; i++)
		for (int j = 0; j < LIST_FIELDS; j++)
			free(l->items[i].fields[j]);
	free(l->items);
	free(l);
}

static void list_finish(struct list *l)
{
	yajl_gen g;
	size_t len, shown;
	const char *s;

	if (l->failed) {
		l->cb(l->ud, -1, NULL, l->err);
		list_free(l);
		return;
	}
	if (l->n > 1)
		qsort(l->items, l->n, sizeof(*l->items), item_cmp);
	shown = l->n < (size_t)l->limit ? l->n : (size_t)l->limit;
	if (l->ids_only) {
		char *ids = mem_strdup("");
		for (size_t i = 0; i < shown; i++) {
			char *next = mem_printf("%s%s%s", ids, i ? " " : "", l->items[i].fields[0]);
			free(ids);
			ids = next;
		}
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
		json_close(g);
	}
	json_close_array(g);
	json_str(g, "nextCursor");
	if (shown > 0 && (l->n > shown || l->more)) {
		char *cur = mem_printf("%lld_%s", l->items[shown - 1].created,
				       l->items[shown - 1].fields[0]);
		json_str(g, cur);
		free(cur);
	} else {
		json_null(g);
	}
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
		size_t n = (reply->elements - 1) / LIST_FIELDS;
		redisReply *last = reply->element[reply->elements - 1];
		if (last->str && strcmp(last->str, "1") == 0)
			l->more = 1;
		for (size_t i = 0; i < n; i++) {
			struct list_item it;
			if (l->n == l->cap) {
				l->cap = l->cap ? 2 * l->cap : 64;
				l->items = mem_realloc(l->items, l->cap * sizeof(*l->items));
			}
			for (int j = 0; j < LIST_FIELDS; j++) {
				redisReply *e = reply->element[i * LIST_FIELDS + (size_t)j];
				it.fields[j] =
				    mem_strndup(e->str ? e->str : "", e->str ? e->len : 0);
			}
			it.created = strtoll(it.fields[1], NULL, 10);
			l->items[l->n++] = it;
		}
	}
	if (++l->replies == l->shards)
		list_finish(l);
}

void events_list(struct rds *r, const struct config *cfg, enum auth_env env, const char *account,
		 const struct events_filter *f, int ids_only, events_fn cb, void *ud)
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
	l->shards = cfg->queue_shards;
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
	for (long i = 0; i < l->shards; i++) {
		char prefix[256], idx[300];
		events_shard_prefix(prefix, sizeof(prefix), cfg->prefix, (int)i);
		snprintf(idx, sizeof(idx), "%sa:%s:%s", prefix, auth_env_name(env), account);
		{
			const char *argv[] = {idx,
					      prefix,
					      maxs,
					      f->cursor_ms > 0 && f->cursor_id ? f->cursor_id : "",
					      mins,
					      f->state ? f->state : "",
					      f->type ? f->type : "",
					      limit,
					      cap};
			rds_script(r, on_shard_list, l, SCRIPT_EVENT_LIST, 1, 9, argv, NULL);
		}
	}
}

/* ---- bulk replay ---- */

struct many {
	struct rds *r;
	const struct config *cfg;
	enum auth_env env;
	char account[32];
	events_fn cb;
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
		events_replay(m->r, m->cfg, m->env, m->account, t, on_one_replayed, m);
	free(copy);
	on_one_replayed(m, EVENTS_BUSY, NULL, NULL);
}

void events_replay_many(struct rds *r, const struct config *cfg, enum auth_env env,
			const char *account, const struct events_filter *f, events_fn cb, void *ud)
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
