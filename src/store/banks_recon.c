/* banks_recon: what the reconciliation of bank connections keeps in Redis
 * (docs/bank-api.md, "Reconciliation"; banks_recon.h): the schedule of each
 * shard's connections and what a run needs of each (script bank_recon), a
 * run's end in one write (script bank_recon_done), the schedule of an
 * earlier version moved at start, the refunds pixrelay asked a bank for
 * and has not heard settled, and what the processes saw of each bank's
 * API. Asking the bank is relay/bankrecon.c's; taking the Pix it lists is
 * banks_receive.c's; the day's report, banks_report.c's.
 */
#include "pixrelay/store/banks_recon.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/bankday.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/redis/rargs.h"
#include "pixrelay/redis/scripts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The RUN fields of bank_recon.lua, in its order. */
enum {
	R_ID,
	R_ACCOUNT,
	R_ENV,
	R_PIX_KEY,
	R_CREATED,
	R_API_AT,
	R_REC_AT,
	R_FAILURES,
	R_API_URL,
	R_TOKEN_URL,
	R_CLIENT_ID,
	R_CLIENT_SECRET,
	R_CERT,
	R_KEY,
	R_BANK_CA,
	R_SCOPE,
	R_HEADERS,
	R_QUERY,
	R_PROVIDER,
	R_API_TOKEN,
	R_REFUNDS,
	R_COUNT
};

void banks_run_free(struct banks_run *run)
{
	if (!run)
		return;
	banks_stored_creds_deinit(&run->api);
	free(run->refunds);
	free(run);
}

/* ---- a claim's answer ---- */

/* Field e copied, NULL when it is "" (or no string). */
static char *text_or_null(const redisReply *e)
{
	return e->type == REDIS_REPLY_STRING && e->len ? mem_strndup(e->str, e->len) : NULL;
}

/* The run whose RUN fields start at f, or NULL when they do not read. */
static struct banks_run *run_of(redisReply *const *f)
{
	struct banks_run *run;
	long long failures;
	const redisReply *rf = f[R_REFUNDS];

	for (int i = 0; i < R_COUNT; i++)
		if (f[i]->type != REDIS_REPLY_STRING || strlen(f[i]->str) != f[i]->len)
			return NULL;
	if (!banks_id_valid(f[R_ID]->str) || f[R_ACCOUNT]->len >= sizeof(run->ref.account) ||
	    f[R_PIX_KEY]->len > BANKPIX_CHAVE_MAX)
		return NULL;
	run = mem_new(struct banks_run);
	if (env_parse(f[R_ENV]->str, &run->ref.env) < 0 ||
	    banks_field_number(f[R_CREATED], &run->created_ms) < 0 ||
	    banks_field_number(f[R_API_AT], &run->api_at_ms) < 0 ||
	    banks_field_number(f[R_REC_AT], &run->rec_at_ms) < 0 ||
	    banks_field_number(f[R_FAILURES], &failures) < 0 || failures > 1000000)
		goto bad;
	run->failures = (int)failures;
	memcpy(run->ref.id, f[R_ID]->str, f[R_ID]->len + 1);
	memcpy(run->ref.account, f[R_ACCOUNT]->str, f[R_ACCOUNT]->len + 1);
	memcpy(run->pix_key, f[R_PIX_KEY]->str, f[R_PIX_KEY]->len + 1);
	/* "<e2e> <refund id>" joined by newlines */
	for (const char *p = rf->str; *p;) {
		size_t n = strcspn(p, "\n");

		if (n == 0 || n >= BANKS_RECON_REFUND_MAX ||
		    run->nrefunds == BANKS_RECON_REFUNDS_MAX)
			goto bad;
		if (!run->refunds)
			run->refunds = mem_calloc(BANKS_RECON_REFUNDS_MAX, sizeof(*run->refunds));
		memcpy(run->refunds[run->nrefunds++], p, n);
		p += n + (p[n] == '\n');
	}
	run->api.api_url = text_or_null(f[R_API_URL]);
	if (run->api.api_url) {
		run->api.token_url = mem_strndup(f[R_TOKEN_URL]->str, f[R_TOKEN_URL]->len);
		run->api.client_id = mem_strndup(f[R_CLIENT_ID]->str, f[R_CLIENT_ID]->len);
		run->api.client_secret =
		    mem_strndup(f[R_CLIENT_SECRET]->str, f[R_CLIENT_SECRET]->len);
		run->api.cert = mem_strndup(f[R_CERT]->str, f[R_CERT]->len);
		run->api.key = mem_strndup(f[R_KEY]->str, f[R_KEY]->len);
		run->api.bank_ca = text_or_null(f[R_BANK_CA]);
		run->api.scope = text_or_null(f[R_SCOPE]);
		run->api.headers = text_or_null(f[R_HEADERS]);
		run->api.query = text_or_null(f[R_QUERY]);
		run->api.api_token = text_or_null(f[R_API_TOKEN]);
		if (provider_parse(f[R_PROVIDER]->str, &run->api.provider) < 0)
			goto bad;
	}
	return run;
bad:
	banks_run_free(run);
	return NULL;
}

int banks_recon_decode_claim(const redisReply *reply, struct banks_claim *out)
{
	struct banks_claim c;
	size_t runs;

	memset(&c, 0, sizeof(c));
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 2 ||
	    (reply->elements - 2) % BANKS_RECON_RUN_FIELDS != 0)
		return -1;
	runs = (reply->elements - 2) / BANKS_RECON_RUN_FIELDS;
	if (runs > BANKS_RECON_CLAIM_MAX ||
	    banks_field_number(reply->element[0], &c.oldest_ok_ms[0]) < 0 ||
	    banks_field_number(reply->element[1], &c.oldest_ok_ms[1]) < 0)
		return -1;
	for (size_t i = 0; i < runs; i++) {
		c.runs[i] = run_of(reply->element + 2 + i * BANKS_RECON_RUN_FIELDS);
		if (!c.runs[i]) {
			for (size_t j = 0; j < i; j++)
				banks_run_free(c.runs[j]);
			return -1;
		}
		c.n++;
	}
	*out = c;
	return 0;
}

/* ---- the schedule ---- */

struct claim_call {
	banks_claim_fn cb;
	void *ud;
};

static void on_claim(void *ud, redisReply *reply, const char *err)
{
	struct claim_call *cc = ud;
	struct banks_claim c;

	if (err)
		cc->cb(cc->ud, err, NULL);
	else if (banks_recon_decode_claim(reply, &c) < 0)
		cc->cb(cc->ud, "unexpected reply from bank_recon", NULL);
	else
		cc->cb(cc->ud, NULL, &c);
	free(cc);
}

/* bank_recon on `shard`'s schedule: its keys, the action, now, the shard
 * key prefix (the arguments after them are the caller's to append). */
static void schedule_args(struct rargs *a, char keys[3][KS_KEY_MAX], char *sp,
			  const struct config *cfg, int shard, const char *action)
{
	ks_bank_schedule_key(keys[0], KS_KEY_MAX, cfg->prefix, shard);
	ks_bank_ok_key(keys[1], KS_KEY_MAX, cfg->prefix, shard, ENV_SANDBOX);
	ks_bank_ok_key(keys[2], KS_KEY_MAX, cfg->prefix, shard, ENV_PRODUCTION);
	ks_shard_prefix(sp, KS_PREFIX_MAX, cfg->prefix, shard);
	rargs_init(a);
	for (int i = 0; i < 3; i++)
		rargs_str(a, keys[i]);
	rargs_str(a, action);
	rargs_ll(a, (long long)ids_now_ms());
	rargs_str(a, sp);
}

void banks_recon_claim(struct rds *r, const struct config *cfg, int shard, unsigned most,
		       long lease_ms, unsigned refunds, banks_claim_fn cb, void *ud)
{
	struct claim_call *cc = mem_new(struct claim_call);
	char keys[3][KS_KEY_MAX], sp[KS_PREFIX_MAX];
	struct rargs a;

	cc->cb = cb;
	cc->ud = ud;
	schedule_args(&a, keys, sp, cfg, shard, "claim");
	rargs_ll(&a, most > BANKS_RECON_CLAIM_MAX ? BANKS_RECON_CLAIM_MAX : most);
	rargs_ll(&a, lease_ms);
	rargs_ll(&a, refunds > BANKS_RECON_REFUNDS_MAX ? BANKS_RECON_REFUNDS_MAX : refunds);
	rds_script(r, on_claim, cc, SCRIPT_BANK_RECON, 3, a.argc, a.argv, a.lens);
	rargs_deinit(&a);
}

void banks_recon_read(struct rds *r, const struct config *cfg, const char *id, unsigned refunds,
		      banks_claim_fn cb, void *ud)
{
	struct claim_call *cc;
	char keys[3][KS_KEY_MAX], sp[KS_PREFIX_MAX];
	struct banks_claim none;
	struct rargs a;

	if (!banks_id_valid(id)) {
		memset(&none, 0, sizeof(none));
		cb(ud, NULL, &none);
		return;
	}
	cc = mem_new(struct claim_call);
	cc->cb = cb;
	cc->ud = ud;
	schedule_args(&a, keys, sp, cfg, ks_shard_of(id), "read");
	rargs_str(&a, id);
	rargs_ll(&a, refunds > BANKS_RECON_REFUNDS_MAX ? BANKS_RECON_REFUNDS_MAX : refunds);
	rds_script(r, on_claim, cc, SCRIPT_BANK_RECON, 3, a.argc, a.argv, a.lens);
	rargs_deinit(&a);
}

void banks_recon_renew(struct rds *r, const struct config *cfg, const char *id, long long until_ms)
{
	char keys[3][KS_KEY_MAX], sp[KS_PREFIX_MAX];
	struct rargs a;

	if (!banks_id_valid(id))
		return;
	schedule_args(&a, keys, sp, cfg, ks_shard_of(id), "renew");
	rargs_str(&a, id);
	rargs_ll(&a, until_ms);
	rds_script(r, NULL, NULL, SCRIPT_BANK_RECON, 3, a.argc, a.argv, a.lens);
	rargs_deinit(&a);
}

/* One call answered by an integer, and who waits for it (cb NULL: none). */
struct rcall {
	store_fn cb;
	void *ud;
};

static struct rcall *rcall_new(store_fn cb, void *ud)
{
	struct rcall *c = mem_new(struct rcall);

	c->cb = cb;
	c->ud = ud;
	return c;
}

static void on_integer(void *ud, redisReply *reply, const char *err)
{
	struct rcall *c = ud;

	if (c->cb) {
		if (err || reply->type != REDIS_REPLY_INTEGER)
			c->cb(c->ud, -1, NULL, err ? err : "unexpected reply from a bank script");
		else if (reply->integer < 0)
			c->cb(c->ud, -1, NULL, NULL);
		else
			c->cb(c->ud, (int)reply->integer, NULL, NULL);
	}
	free(c);
}

void banks_recon_schedule(struct rds *r, const struct config *cfg, enum env env, const char *id,
			  store_fn cb, void *ud)
{
	char keys[3][KS_KEY_MAX], sp[KS_PREFIX_MAX];
	struct rargs a;

	if (!banks_id_valid(id)) {
		if (cb)
			cb(ud, -1, NULL, "no such connection");
		return;
	}
	schedule_args(&a, keys, sp, cfg, ks_shard_of(id), "add");
	rargs_str(&a, id);
	rargs_str(&a, env_name(env));
	rds_script(r, on_integer, rcall_new(cb, ud), SCRIPT_BANK_RECON, 3, a.argc, a.argv, a.lens);
	rargs_deinit(&a);
}

/* ---- the end of a run ---- */

void banks_recon_finish(struct rds *r, const struct config *cfg, const struct banks_recon_end *e,
			store_fn cb, void *ud)
{
	const char *id = e->ref->id;
	int shard = ks_shard_of(id);
	char keys[5][KS_KEY_MAX], *settled = NULL;
	struct rargs a;
	size_t len = 0;

	if (!banks_id_valid(id)) {
		cb(ud, -1, NULL, NULL);
		return;
	}
	ks_bank_key(keys[0], KS_KEY_MAX, cfg->prefix, shard, id);
	ks_bank_read_key(keys[1], KS_KEY_MAX, cfg->prefix, shard, id);
	ks_bank_schedule_key(keys[2], KS_KEY_MAX, cfg->prefix, shard);
	ks_bank_ok_key(keys[3], KS_KEY_MAX, cfg->prefix, shard, e->ref->env);
	ks_bank_refunds_key(keys[4], KS_KEY_MAX, cfg->prefix, shard, id);
	for (size_t i = 0; i < e->nsettled; i++)
		len += strlen(e->settled[i]) + 1;
	settled = mem_alloc(len + 1);
	settled[0] = '\0';
	for (size_t i = 0, at = 0; i < e->nsettled; i++)
		at += (size_t)snprintf(settled + at, len + 1 - at, "%s%s", i ? "\n" : "",
				       e->settled[i]);
	rargs_init(&a);
	for (int i = 0; i < 5; i++)
		rargs_str(&a, keys[i]);
	rargs_str(&a, id);
	rargs_ll(&a, (long long)ids_now_ms());
	rargs_str(&a, e->ok ? "1" : "0");
	if (e->next_ms)
		rargs_ll(&a, e->next_ms);
	else
		rargs_str(&a, "");
	if (e->read_from) {
		rargs_ll(&a, e->read_from);
		rargs_ll(&a, e->read_to);
	} else {
		rargs_str(&a, "");
		rargs_str(&a, "");
	}
	rargs_ll(&a, cfg->event_retention_days * 86400000LL);
	rargs_ll(&a, BANKDAY_READS_MAX);
	rargs_str(&a, settled);
	if (e->ok) {
		rargs_ll(&a, e->ok->upto_ms);
		rargs_ll(&a, e->ok->pages);
		rargs_ll(&a, e->ok->listed);
		rargs_ll(&a, e->ok->fresh);
		rargs_ll(&a, e->ok->refunds);
	} else {
		rargs_str(&a, e->error ? e->error : "");
	}
	rds_script(r, on_integer, rcall_new(cb, ud), SCRIPT_BANK_RECON_DONE, 5, a.argc, a.argv,
		   a.lens);
	rargs_deinit(&a);
	free(settled);
}

/* ---- the schedule of an earlier version ---- */

/* Move the members of `from` (an environment's schedule, or with ok its
 * successes) into their shards' zsets, each only where it is not yet. */
static int move_zset(struct rds *c, const char *from, const char *prefix, enum env env, int ok,
		     char *err, size_t errlen)
{
	const char *argv[5] = {"ZRANGE", from, "0", "-1", "WITHSCORES"};
	redisReply *all = rds_call(c, 5, argv, NULL, err, errlen), *r;
	int rc = -1;

	if (!all)
		return -1;
	if (all->type != REDIS_REPLY_ARRAY) {
		snprintf(err, errlen, "unexpected reply reading %s", from);
		goto done;
	}
	for (size_t i = 0; i + 1 < all->elements; i += 2) {
		const char *id = all->element[i]->str, *score = all->element[i + 1]->str;
		char to[KS_KEY_MAX];

		if (!id || !score)
			continue;
		if (banks_id_valid(id)) {
			const char *add[5] = {"ZADD", to, "NX", score, id};

			if (ok)
				ks_bank_ok_key(to, sizeof(to), prefix, ks_shard_of(id), env);
			else
				ks_bank_schedule_key(to, sizeof(to), prefix, ks_shard_of(id));
			if (!(r = rds_call(c, 5, add, NULL, err, errlen)))
				goto done;
			freeReplyObject(r);
		}
		{
			const char *rem[3] = {"ZREM", from, id};

			if (!(r = rds_call(c, 3, rem, NULL, err, errlen)))
				goto done;
			freeReplyObject(r);
		}
	}
	rc = 0;
done:
	freeReplyObject(all);
	return rc;
}

int banks_recon_move(struct rds *c, const char *prefix, char *err, size_t errlen)
{
	for (int e = 0; e < 2; e++) {
		char k[KS_KEY_MAX];

		ks_env_bankrec_key(k, sizeof(k), prefix, (enum env)e);
		if (move_zset(c, k, prefix, (enum env)e, 0, err, errlen) < 0)
			return -1;
		ks_env_bankok_key(k, sizeof(k), prefix, (enum env)e);
		if (move_zset(c, k, prefix, (enum env)e, 1, err, errlen) < 0)
			return -1;
	}
	return 0;
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
	rds_cmd_argv(r, on_integer, rcall_new(cb, ud), 4, argv, NULL);
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
