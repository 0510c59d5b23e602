/* overview: the dashboard's first page from the counters and queues of the
 * shards (overview.h): one overview_read script per shard, their answers
 * added up, and the JSON GET /v1/overview answers.
 */
#include "pixrelay/store/overview.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/keyspace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the most failing queues one answer lists */
#define FAILING_MAX 100

enum { KIND_DELIVERED, KIND_FAILED, KIND_DEAD, KINDS };

struct failing {
	char *queue;
	long long failed, dead, waiting;
};

struct disabled {
	char *queue;
	long long since_ms, kept;
};

struct ov_call {
	store_fn cb;
	void *ud;
	enum env env;
	char account[32]; /* "" = the environment */
	int minutes;
	uint64_t now_ms;
	int pending;			      /* shards not answered yet */
	char *err;			      /* the first failure */
	long long waiting, held, earliest_ms; /* earliest 0: none */
	long long per_minute[OVERVIEW_MINUTES][KINDS];
	long long day[KINDS];
	struct failing *failing;
	size_t nfailing;
	struct disabled *disabled;
	size_t ndisabled;
};

static long long int_of(const redisReply *r)
{
	if (r->type == REDIS_REPLY_INTEGER)
		return r->integer;
	if (r->type == REDIS_REPLY_STRING)
		return strtoll(r->str, NULL, 10);
	return 0;
}

/* Add one shard's answer to c; -1 when it is not shaped as overview_read's. */
static int add_shard(struct ov_call *c, const redisReply *reply)
{
	size_t at = 3 + OVERVIEW_MINUTES * KINDS + KINDS, n;
	redisReply **e = reply->element;

	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < at + 2)
		return -1;
	c->waiting += int_of(e[0]);
	c->held += int_of(e[1]);
	if (e[2]->type == REDIS_REPLY_STRING && e[2]->len) {
		long long t = strtoll(e[2]->str, NULL, 10);
		if (!c->earliest_ms || t < c->earliest_ms)
			c->earliest_ms = t;
	}
	for (int m = 0; m < OVERVIEW_MINUTES; m++)
		for (int k = 0; k < KINDS; k++)
			c->per_minute[m][k] += int_of(e[3 + m * KINDS + k]);
	for (int k = 0; k < KINDS; k++)
		c->day[k] += int_of(e[3 + OVERVIEW_MINUTES * KINDS + k]);
	n = (size_t)int_of(e[at++]);
	if (reply->elements < at + 4 * n + 1)
		return -1;
	for (size_t i = 0; i < n; i++, at += 4) {
		struct failing *f;

		if (e[at]->type != REDIS_REPLY_STRING || c->nfailing >= FAILING_MAX)
			continue;
		c->failing = mem_realloc(c->failing, (c->nfailing + 1) * sizeof(*c->failing));
		f = &c->failing[c->nfailing++];
		f->queue = mem_strdup(e[at]->str);
		f->failed = int_of(e[at + 1]);
		f->dead = int_of(e[at + 2]);
		f->waiting = int_of(e[at + 3]);
	}
	n = (size_t)int_of(e[at++]);
	if (reply->elements != at + 3 * n)
		return -1;
	for (size_t i = 0; i < n; i++, at += 3) {
		struct disabled *d;

		if (e[at]->type != REDIS_REPLY_STRING)
			continue;
		c->disabled = mem_realloc(c->disabled, (c->ndisabled + 1) * sizeof(*c->disabled));
		d = &c->disabled[c->ndisabled++];
		d->queue = mem_strdup(e[at]->str);
		d->since_ms = int_of(e[at + 1]);
		d->kept = int_of(e[at + 2]);
	}
	return 0;
}

static void counts(yajl_gen g, const char *name, const long long v[KINDS])
{
	json_str(g, name);
	json_open(g);
	json_str(g, "delivered");
	json_int(g, v[KIND_DELIVERED]);
	json_str(g, "failedAttempts");
	json_int(g, v[KIND_FAILED]);
	json_str(g, "dead");
	json_int(g, v[KIND_DEAD]);
	json_close(g);
}

static void time_field(yajl_gen g, const char *name, long long ms)
{
	char t[24];

	json_str(g, name);
	if (ms <= 0) {
		json_null(g);
		return;
	}
	snprintf(t, sizeof(t), "%lld", ms);
	json_time_ms(g, t);
}

/* The account, and the host or endpoint, of a queue
 * "<env>:<account>:<host or endpoint id>" (an endpoint's id starts wep_). */
static void queue_fields(yajl_gen g, const char *q)
{
	const char *a = strchr(q, ':'), *h = a ? strchr(a + 1, ':') : NULL;
	int endpoint;

	if (!h)
		return;
	endpoint = strncmp(h + 1, "wep_", 4) == 0;
	json_str(g, "account");
	json_strn(g, a + 1, (size_t)(h - a - 1));
	json_str(g, endpoint ? "endpoint" : "host");
	json_str(g, h + 1);
}

static void series(yajl_gen g, const struct ov_call *c, const char *name, int kind)
{
	json_str(g, name);
	json_open_array(g);
	for (int m = OVERVIEW_MINUTES - c->minutes; m < OVERVIEW_MINUTES; m++)
		json_int(g, c->per_minute[m][kind]);
	json_close_array(g);
}

static void answer(struct ov_call *c)
{
	yajl_gen g = json_gen_new();
	long long hour[KINDS] = {0}, minute = (long long)(c->now_ms / 60000), lag;
	size_t len;
	const char *s;

	for (int m = OVERVIEW_MINUTES - 60; m < OVERVIEW_MINUTES; m++)
		for (int k = 0; k < KINDS; k++)
			hour[k] += c->per_minute[m][k];
	lag = c->earliest_ms && (long long)c->now_ms > c->earliest_ms
		  ? ((long long)c->now_ms - c->earliest_ms) / 1000
		  : 0;
	json_open(g);
	json_str(g, "environment");
	json_str(g, env_name(c->env));
	json_str(g, "account");
	json_str_or_null(g, c->account[0] ? c->account : NULL);
	time_field(g, "at", (long long)c->now_ms);
	json_str(g, "waiting");
	json_int(g, c->waiting);
	json_str(g, "held");
	json_int(g, c->held);
	time_field(g, "oldestWaitingDueAt", c->earliest_ms);
	json_str(g, "oldestWaitingSeconds");
	json_int(g, lag);
	counts(g, "lastHour", hour);
	counts(g, "lastDay", c->day);
	json_str(g, "perMinute");
	json_open(g);
	time_field(g, "from", (minute - c->minutes + 1) * 60000);
	json_str(g, "minutes");
	json_int(g, c->minutes);
	series(g, c, "delivered", KIND_DELIVERED);
	series(g, c, "failedAttempts", KIND_FAILED);
	series(g, c, "dead", KIND_DEAD);
	json_close(g);
	json_str(g, "failing");
	json_open_array(g);
	for (size_t i = 0; i < c->nfailing; i++) {
		json_open(g);
		queue_fields(g, c->failing[i].queue);
		json_str(g, "failedAttempts");
		json_int(g, c->failing[i].failed);
		json_str(g, "dead");
		json_int(g, c->failing[i].dead);
		json_str(g, "waiting");
		json_int(g, c->failing[i].waiting);
		json_close(g);
	}
	json_close_array(g);
	json_str(g, "disabledEndpoints");
	json_open_array(g);
	for (size_t i = 0; i < c->ndisabled; i++) {
		json_open(g);
		queue_fields(g, c->disabled[i].queue);
		time_field(g, "disabledAt", c->disabled[i].since_ms);
		json_str(g, "kept");
		json_int(g, c->disabled[i].kept);
		json_close(g);
	}
	json_close_array(g);
	json_close(g);
	s = json_buf(g, &len);
	c->cb(c->ud, 0, s, NULL);
	yajl_gen_free(g);
}

static void call_free(struct ov_call *c)
{
	for (size_t i = 0; i < c->nfailing; i++)
		free(c->failing[i].queue);
	for (size_t i = 0; i < c->ndisabled; i++)
		free(c->disabled[i].queue);
	free(c->failing);
	free(c->disabled);
	free(c->err);
	free(c);
}

static void on_shard(void *ud, redisReply *reply, const char *err)
{
	struct ov_call *c = ud;

	if (!c->err && err)
		c->err = mem_strdup(err);
	else if (!c->err && add_shard(c, reply) < 0)
		c->err = mem_strdup("unexpected reply from overview_read");
	if (--c->pending > 0)
		return;
	if (c->err)
		c->cb(c->ud, -1, NULL, c->err);
	else
		answer(c);
	call_free(c);
}

void overview_read(struct rds *r, const struct config *cfg, enum env env, const char *account,
		   int minutes, store_fn cb, void *ud)
{
	struct ov_call *c = mem_new(struct ov_call);
	int first = 0, last = (int)cfg->shards - 1;
	char now[24];

	c->cb = cb;
	c->ud = ud;
	c->env = env;
	snprintf(c->account, sizeof(c->account), "%s", account ? account : "");
	c->minutes = minutes < 1 ? 1 : minutes > OVERVIEW_MINUTES ? OVERVIEW_MINUTES : minutes;
	c->now_ms = ids_now_ms();
	snprintf(now, sizeof(now), "%llu", (unsigned long long)c->now_ms);
	if (account) {
		first = last = ks_shard_of(account);
		if (first < 0) {
			cb(ud, -1, NULL, "not an account id");
			call_free(c);
			return;
		}
	}
	/* every call is counted before the first answers (one may answer at once) */
	c->pending = last - first + 1;
	for (int k = first; k <= last; k++) {
		char sp[KS_PREFIX_MAX], hosts[KS_KEY_MAX];
		const char *argv[] = {hosts, sp, now, env_name(env), c->account};

		ks_shard_prefix(sp, sizeof(sp), cfg->prefix, k);
		ks_hosts_key(hosts, sizeof(hosts), cfg->prefix, k);
		rds_script(r, on_shard, c, SCRIPT_OVERVIEW_READ, 1, 5, argv, NULL);
	}
}
