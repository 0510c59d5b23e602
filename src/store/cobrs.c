/* cobrs: what a recurring charge's bank says, written by cobr_heard.lua
 * with its events (include/pixrelay/store/cobrs.h). */
#include "pixrelay/store/cobrs.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/pix/bankday.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/redis/rargs.h"
#include "pixrelay/redis/scripts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct call {
	store_fn cb;
	void *ud;
};

static void on_heard(void *ud, redisReply *reply, const char *err)
{
	struct call *c = ud;
	redisReply **e;

	if (err) {
		c->cb(c->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 ||
	    reply->element[0]->type != REDIS_REPLY_STRING) {
		c->cb(c->ud, -1, NULL, "unexpected reply from cobr_heard");
		goto done;
	}
	e = reply->element;
	if (strcmp(e[0]->str, "unknown") == 0)
		c->cb(c->ud, COBRS_UNKNOWN, NULL, NULL);
	else if (reply->elements == 3 && e[2]->type == REDIS_REPLY_STRING)
		c->cb(c->ud, strcmp(e[0]->str, "changed") == 0 ? 0 : COBRS_DUPLICATE, e[2]->str,
		      NULL);
	else
		c->cb(c->ud, -1, NULL, "unexpected reply from cobr_heard");
done:
	free(c);
}

void cobrs_heard(struct rds *r, const struct config *cfg, enum env env, const char *account,
		 const struct cobr_heard *h, enum cobrs_source source, store_fn cb, void *ud)
{
	int shard = ks_shard_of(h->txid);
	char k[KS_KEY_MAX], sp[KS_PREFIX_MAX], at[TIMEFMT_LEN + 1], day[11];
	char evts[COBR_ATTEMPTS_MAX + 1][KS_EVENT_ID_MAX];
	long long now = (long long)ids_now_ms();
	struct call *c;
	struct rargs a;
	char *lines;

	/* the txid is the charge's id, in its account's shard */
	if (shard < 0 || shard != ks_shard_of(account)) {
		cb(ud, COBRS_UNKNOWN, NULL, NULL);
		return;
	}
	c = mem_new(struct call);
	c->cb = cb;
	c->ud = ud;
	ks_charge_key(k, sizeof(k), cfg->prefix, shard, h->txid);
	ks_shard_prefix(sp, sizeof(sp), cfg->prefix, shard);
	timefmt_format(at, (uint64_t)now);
	bankday_date(day, now);
	lines = cobr_attempt_lines(h);
	rargs_init(&a);
	rargs_str(&a, k);
	rargs_str(&a, sp);
	rargs_str(&a, account);
	rargs_str(&a, env_name(env));
	rargs_str(&a, h->idrec);
	rargs_str(&a, h->status);
	rargs_str(&a, lines);
	rargs_str(&a, h->code);
	rargs_ll(&a, now);
	rargs_str(&a, at);
	rargs_str(&a, source == COBRS_RECONCILIATION ? "reconciliation"
		      : source == COBRS_REQUEST	     ? "request"
						     : "webhook");
	rargs_ll(&a, (long long)cfg->event_retention_days * 86400);
	rargs_str(&a, source == COBRS_RECONCILIATION ? "1" : "0");
	rargs_str(&a, day);
	/* an event id for each attempt and the final status, at most */
	for (size_t i = 0; i < h->nattempts + 1; i++) {
		ks_event_id(shard, evts[i]);
		rargs_str(&a, evts[i]);
	}
	rds_script(r, on_heard, c, SCRIPT_COBR_HEARD, 1, (int)a.argc, a.argv, a.lens);
	rargs_deinit(&a);
	free(lines);
}

static void on_open(void *ud, redisReply *reply, const char *err)
{
	struct call *c = ud;
	size_t size = 1, n = 0;
	char *out;

	if (err || reply->type != REDIS_REPLY_ARRAY) {
		c->cb(c->ud, -1, NULL, err ? err : "unexpected reply reading cobropen");
		free(c);
		return;
	}
	for (size_t i = 0; i < reply->elements; i++)
		if (reply->element[i]->type == REDIS_REPLY_STRING)
			size += reply->element[i]->len + 1;
	out = mem_alloc(size);
	out[0] = '\0';
	for (size_t i = 0; i < reply->elements; i++)
		if (reply->element[i]->type == REDIS_REPLY_STRING)
			n += (size_t)snprintf(out + n, size - n, "%s%s", n ? " " : "",
					      reply->element[i]->str);
	c->cb(c->ud, 0, out, NULL);
	free(out);
	free(c);
}

void cobrs_open(struct rds *r, const struct config *cfg, const char *account, const char *conn,
		int max, store_fn cb, void *ud)
{
	int shard = ks_shard_of(account);
	char k[KS_KEY_MAX], to[16];
	const char *argv[4] = {"ZRANGE", k, "0", to};
	struct call *c;

	if (shard < 0) {
		cb(ud, -1, NULL, "the account id names no shard");
		return;
	}
	c = mem_new(struct call);
	c->cb = cb;
	c->ud = ud;
	ks_cobr_open_key(k, sizeof(k), cfg->prefix, shard, conn);
	snprintf(to, sizeof(to), "%d", max - 1);
	rds_cmd_argv(r, on_open, c, 4, argv, NULL);
}
