/* banks_recon: what the reconciliation of bank connections keeps in Redis
 * (docs/banks.md, "Reconciliation"): the schedule of each environment
 * (script bank_recon: which connection is due, which one a process runs,
 * when each last succeeded), each run's result in the connection's record
 * (script bank_recon_done), and the refunds pixrelay asked a bank for and
 * has not heard settled. Asking the bank is relay/bankrecon.c's; taking
 * the Pix it lists is banks_receive.c's; the day's report,
 * banks_report.c's.
 */
#include "pixrelay/store/banks_recon.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/bankday.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/redis/scripts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One call and who waits for it. */
struct rcall {
	banks_ids_fn ids_cb;
	store_fn cb;
	void *ud;
};

static struct rcall *rcall_new(banks_ids_fn ids_cb, store_fn cb, void *ud)
{
	struct rcall *c = mem_new(struct rcall);

	c->ids_cb = ids_cb;
	c->cb = cb;
	c->ud = ud;
	return c;
}

/* An integer answer to a store_fn (NULL: nobody waits). */
static void on_integer(void *ud, redisReply *reply, const char *err)
{
	struct rcall *c = ud;

	if (c->cb) {
		if (err || reply->type != REDIS_REPLY_INTEGER)
			c->cb(c->ud, -1, NULL, err ? err : "unexpected reply from a bank script");
		else
			c->cb(c->ud, (int)reply->integer, NULL, NULL);
	}
	free(c);
}

/* The schedule's script on env's two keys with `action` and its arguments
 * after now. */
static void schedule(struct rds *r, const struct config *cfg, enum env env, const char *action,
		     int nargs, const char **args, rds_reply_fn fn, struct rcall *c)
{
	char due[KS_KEY_MAX], ok[KS_KEY_MAX], now[24];
	const char *argv[8] = {due, ok, action, now};

	ks_env_bankrec_key(due, sizeof(due), cfg->prefix, env);
	ks_env_bankok_key(ok, sizeof(ok), cfg->prefix, env);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ids_now_ms());
	for (int i = 0; i < nargs && i < 4; i++)
		argv[4 + i] = args[i];
	rds_script(r, fn, c, SCRIPT_BANK_RECON, 2, 4 + nargs, argv, NULL);
}

static void on_claimed(void *ud, redisReply *reply, const char *err)
{
	struct rcall *c = ud;
	const char *ids[BANKS_RECON_CLAIM_MAX];
	long long oldest = 0;
	size_t n = 0;

	if (err || reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 ||
	    reply->element[0]->type != REDIS_REPLY_STRING) {
		c->ids_cb(c->ud, err ? err : "unexpected reply from bank_recon", 0, NULL, 0);
		free(c);
		return;
	}
	oldest = strtoll(reply->element[0]->str, NULL, 10);
	for (size_t i = 1; i < reply->elements && n < BANKS_RECON_CLAIM_MAX; i++)
		if (reply->element[i]->type == REDIS_REPLY_STRING)
			ids[n++] = reply->element[i]->str;
	c->ids_cb(c->ud, NULL, oldest, ids, n);
	free(c);
}

void banks_recon_claim(struct rds *r, const struct config *cfg, enum env env, unsigned most,
		       long lease_ms, banks_ids_fn cb, void *ud)
{
	char m[16], lease[24];
	const char *args[2] = {m, lease};

	snprintf(m, sizeof(m), "%u", most > BANKS_RECON_CLAIM_MAX ? BANKS_RECON_CLAIM_MAX : most);
	snprintf(lease, sizeof(lease), "%ld", lease_ms);
	schedule(r, cfg, env, "claim", 2, args, on_claimed, rcall_new(cb, NULL, ud));
}

void banks_recon_next(struct rds *r, const struct config *cfg, enum env env, const char *id,
		      long long when_ms, int ok, store_fn cb, void *ud)
{
	char when[24];
	const char *args[3] = {id, when, ok ? "1" : "0"};

	snprintf(when, sizeof(when), "%lld", when_ms);
	schedule(r, cfg, env, "next", 3, args, on_integer, rcall_new(NULL, cb, ud));
}

void banks_recon_schedule(struct rds *r, const struct config *cfg, enum env env, const char *id,
			  store_fn cb, void *ud)
{
	schedule(r, cfg, env, "add", 1, &id, on_integer, rcall_new(NULL, cb, ud));
}

void banks_recon_drop(struct rds *r, const struct config *cfg, enum env env, const char *id,
		      store_fn cb, void *ud)
{
	schedule(r, cfg, env, "drop", 1, &id, on_integer, rcall_new(NULL, cb, ud));
}

void banks_recon_done(struct rds *r, const struct config *cfg, const char *id,
		      const struct banks_recon_stats *ok, const char *error, store_fn cb, void *ud)
{
	char key[KS_KEY_MAX], now[24], upto[24], pages[24], listed[24], fresh[24], refunds[24];
	const char *argv[9] = {key, id, now};
	int argc = 4;

	if (ks_bank_key(key, sizeof(key), cfg->prefix, ks_shard_of(id), id) < 0) {
		cb(ud, -1, NULL, NULL);
		return;
	}
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ids_now_ms());
	if (ok) {
		snprintf(upto, sizeof(upto), "%lld", ok->upto_ms);
		snprintf(pages, sizeof(pages), "%ld", ok->pages);
		snprintf(listed, sizeof(listed), "%ld", ok->listed);
		snprintf(fresh, sizeof(fresh), "%ld", ok->fresh);
		snprintf(refunds, sizeof(refunds), "%ld", ok->refunds);
		argv[3] = "1";
		argv[4] = upto;
		argv[5] = pages;
		argv[6] = listed;
		argv[7] = fresh;
		argv[8] = refunds;
		argc = 9;
	} else {
		argv[3] = "0";
		argv[4] = error ? error : "";
		argc = 5;
	}
	rds_script(r, on_integer, rcall_new(NULL, cb, ud), SCRIPT_BANK_RECON_DONE, 1, argc, argv,
		   NULL);
}

void banks_recon_read(struct rds *r, const struct config *cfg, const char *id, long long from_ms,
		      long long to_ms, store_fn cb, void *ud)
{
	char key[KS_KEY_MAX], rk[KS_KEY_MAX], from[24], to[24], now[24], keep[24], most[16];
	const char *argv[8] = {key, rk, id, from, to, now, keep, most};
	int shard = ks_shard_of(id);

	if (ks_bank_key(key, sizeof(key), cfg->prefix, shard, id) < 0 ||
	    ks_bank_read_key(rk, sizeof(rk), cfg->prefix, shard, id) < 0) {
		cb(ud, -1, NULL, NULL);
		return;
	}
	snprintf(from, sizeof(from), "%lld", from_ms);
	snprintf(to, sizeof(to), "%lld", to_ms);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ids_now_ms());
	snprintf(keep, sizeof(keep), "%lld", cfg->event_retention_days * 86400000LL);
	snprintf(most, sizeof(most), "%d", BANKDAY_READS_MAX);
	rds_script(r, on_integer, rcall_new(NULL, cb, ud), SCRIPT_BANK_RECON_READ, 2, 8, argv,
		   NULL);
}

/* ---- refunds asked of a bank ---- */

/* "<e2e> <refund id>", the member of a pending refund. */
static int refund_member(char *out, size_t size, const char *e2e, const char *refund_id)
{
	return snprintf(out, size, "%s %s", e2e, refund_id) < (int)size ? 0 : -1;
}

void banks_refund_asked(struct rds *r, const struct config *cfg, const char *conn, const char *e2e,
			const char *refund_id, store_fn cb, void *ud)
{
	char key[KS_KEY_MAX], member[96], now[24];
	const char *argv[4] = {"ZADD", key, now, member};

	if (ks_bank_refunds_key(key, sizeof(key), cfg->prefix, ks_shard_of(conn), conn) < 0 ||
	    refund_member(member, sizeof(member), e2e, refund_id) < 0) {
		if (cb)
			cb(ud, -1, NULL, "no such connection");
		return;
	}
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ids_now_ms());
	rds_cmd_argv(r, on_integer, rcall_new(NULL, cb, ud), 4, argv, NULL);
}

void banks_refund_settled(struct rds *r, const struct config *cfg, const char *conn,
			  const char *e2e, const char *refund_id, store_fn cb, void *ud)
{
	char key[KS_KEY_MAX], member[96];
	const char *argv[3] = {"ZREM", key, member};

	if (ks_bank_refunds_key(key, sizeof(key), cfg->prefix, ks_shard_of(conn), conn) < 0 ||
	    refund_member(member, sizeof(member), e2e, refund_id) < 0) {
		if (cb)
			cb(ud, -1, NULL, "no such connection");
		return;
	}
	rds_cmd_argv(r, on_integer, rcall_new(NULL, cb, ud), 3, argv, NULL);
}

static void on_pending(void *ud, redisReply *reply, const char *err)
{
	struct rcall *c = ud;
	const char *items[BANKS_RECON_CLAIM_MAX * 4];
	long long oldest = 0;
	size_t n = 0;

	if (err || reply->type != REDIS_REPLY_ARRAY) {
		c->ids_cb(c->ud, err ? err : "unexpected reply listing refunds", 0, NULL, 0);
		free(c);
		return;
	}
	/* member, score, member, score...: the oldest first */
	for (size_t i = 0; i + 1 < reply->elements && n < sizeof(items) / sizeof(*items); i += 2)
		if (reply->element[i]->type == REDIS_REPLY_STRING)
			items[n++] = reply->element[i]->str;
	if (reply->elements >= 2 && reply->element[1]->type == REDIS_REPLY_STRING)
		oldest = strtoll(reply->element[1]->str, NULL, 10);
	c->ids_cb(c->ud, NULL, oldest, items, n);
	free(c);
}

void banks_refunds_pending(struct rds *r, const struct config *cfg, const char *conn, unsigned most,
			   banks_ids_fn cb, void *ud)
{
	char key[KS_KEY_MAX], last[16];
	const char *argv[5] = {"ZRANGE", key, "0", last, "WITHSCORES"};

	if (ks_bank_refunds_key(key, sizeof(key), cfg->prefix, ks_shard_of(conn), conn) < 0) {
		cb(ud, NULL, 0, NULL, 0);
		return;
	}
	if (most > BANKS_RECON_CLAIM_MAX * 4)
		most = BANKS_RECON_CLAIM_MAX * 4;
	snprintf(last, sizeof(last), "%u", most ? most - 1 : 0);
	rds_cmd_argv(r, on_pending, rcall_new(cb, NULL, ud), 5, argv, NULL);
}

/* ---- the bank's API as the processes saw it ---- */

void banks_note_api(struct rds *r, const struct config *cfg, const char *conn, long long token_ms,
		    long long call_ms, const char *error, long long error_ms)
{
	char key[KS_KEY_MAX], t[24], c[24], e[24];
	const char *argv[5] = {key, t, c, e, error ? error : ""};

	if (ks_bank_key(key, sizeof(key), cfg->prefix, ks_shard_of(conn), conn) < 0)
		return;
	snprintf(t, sizeof(t), "%lld", token_ms);
	snprintf(c, sizeof(c), "%lld", call_ms);
	snprintf(e, sizeof(e), "%lld", error ? error_ms : 0);
	rds_script(r, NULL, NULL, SCRIPT_BANK_NOTE_API, 1, 5, argv, NULL);
}
