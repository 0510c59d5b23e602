/* transfers.c: internal transfers between business accounts: resolving
 * the two Pix keys and the caller's group, the debit, and across shards the
 * credit and marking the transfer done; a client's Idempotency-Key, and a
 * replay that finishes what a crash left; and the recovery, run by every
 * dispatcher, of transfers left debited. Making accounts and reading them
 * (balances, ledger) are in accounts.c and accounts_read.c, the operator's
 * KYC review in review.c.
 */
#include "pixrelay/store/transfers.h"

#include "pixrelay/pix/event.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- transfer ---- */

/* An internal transfer, step by step (transfers.h): transfer_resolve (the
 * environment's Pix keys and groups), transfer_debit (the source's shard;
 * everything when both accounts share it), then, across shards,
 * transfer_credit (the destination's shard) and transfer_finish (the
 * source's). The same steps finish a transfer that a process left debited
 * (transfers_recover). */
struct transfer {
	struct rds *r;
	const struct config *cfg;
	enum env env;
	store_fn cb;
	void *ud;
	char *caller, *from_key, *to_key, *idem, *fingerprint;
	char from[IDS_ULID_LEN + 1], to[IDS_ULID_LEN + 1];
	char id[IDS_ULID_LEN + 5];
	char evt_in[EVENT_ID_MAX];
	char amount[24], at[24], at_txt[TIMEFMT_LEN + 1];
	int replayed;
};

static void transfer_free(struct transfer *t)
{
	free(t->caller);
	free(t->from_key);
	free(t->to_key);
	free(t->idem);
	free(t->fingerprint);
	free(t);
}

static void transfer_end(struct transfer *t, int result, const char *json, const char *err)
{
	if (t->cb)
		t->cb(t->ud, result, json, err);
	transfer_free(t);
}

static void on_finished(void *ud, redisReply *reply, const char *err)
{
	struct transfer *t = ud;

	if (err) {
		log_warn("transfer %s: credited, but cannot mark it done yet: %s (recovery will)",
			 t->id, err);
	}
	/* the money has arrived either way */
	transfer_end(t, t->replayed ? ACCOUNTS_REPLAYED : 0, NULL, NULL);
}

static void transfer_finish(struct transfer *t)
{
	char sp[KS_PREFIX_MAX], k[KS_KEY_MAX], ttl[24];

	ks_shard_prefix(sp, sizeof(sp), t->cfg->prefix, ks_shard_of(t->id));
	ks_transfers_out_key(k, sizeof(k), t->cfg->prefix, ks_shard_of(t->id));
	snprintf(ttl, sizeof(ttl), "%ld", t->cfg->event_retention_days * 86400);
	{
		const char *argv[] = {k, sp, t->id, ttl};
		rds_script(t->r, on_finished, t, SCRIPT_TRANSFER_FINISH, 1, 4, argv, NULL);
	}
}

static void on_credited(void *ud, redisReply *reply, const char *err)
{
	struct transfer *t = ud;

	if (err) {
		log_warn("transfer %s: debited, credit pending: %s", t->id, err);
		transfer_end(t, ACCOUNTS_PENDING, NULL, NULL);
		return;
	}
	transfer_finish(t);
}

static void transfer_credit(struct transfer *t)
{
	char dp[KS_PREFIX_MAX], k[KS_KEY_MAX], ttl[24];

	ks_shard_prefix(dp, sizeof(dp), t->cfg->prefix, ks_shard_of(t->to));
	ks_transfer_in_key(k, sizeof(k), t->cfg->prefix, ks_shard_of(t->to), t->id);
	snprintf(ttl, sizeof(ttl), "%ld", t->cfg->event_retention_days * 86400);
	{
		const char *argv[] = {
		    k,	       dp,    t->id,	 t->amount,	   t->from,   t->to, t->from_key,
		    t->to_key, t->at, t->at_txt, env_name(t->env), t->evt_in, ttl};
		rds_script(t->r, on_credited, t, SCRIPT_TRANSFER_CREDIT, 1, 13, argv, NULL);
	}
}

/* A replayed request whose transfer crossed shards: finish it if a process
 * left it debited. */
static void on_prior(void *ud, redisReply *reply, const char *err)
{
	struct transfer *t = ud;
	const char *state = err ? NULL : rds_hash_field(reply, "state");

	if (!state || strcmp(state, "debited") != 0) {
		transfer_end(t, err ? -1 : ACCOUNTS_REPLAYED, NULL, err);
		return;
	}
	snprintf(t->evt_in, sizeof(t->evt_in), "%s", rds_hash_field(reply, "evt_in"));
	snprintf(t->at, sizeof(t->at), "%s", rds_hash_field(reply, "at"));
	snprintf(t->at_txt, sizeof(t->at_txt), "%s", rds_hash_field(reply, "at_txt"));
	t->replayed = 1;
	transfer_credit(t);
}

static void on_debited(void *ud, redisReply *reply, const char *err)
{
	struct transfer *t = ud;
	const char *what = NULL;

	if (err) {
		transfer_end(t, -1, NULL, err);
		return;
	}
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements >= 1)
		what = reply->element[0]->str;
	if (!what)
		transfer_end(t, -1, NULL, "unexpected reply from transfer_debit");
	else if (strcmp(what, "done") == 0)
		transfer_end(t, 0, NULL, NULL);
	else if (strcmp(what, "debited") == 0)
		transfer_credit(t);
	else if (strcmp(what, "replayed") == 0 && reply->elements == 2 &&
		 ks_shard_of(t->from) != ks_shard_of(t->to)) {
		char k[KS_KEY_MAX];
		snprintf(t->id, sizeof(t->id), "%s", reply->element[1]->str);
		ks_transfer_key(k, sizeof(k), t->cfg->prefix, ks_shard_of(t->id), t->id);
		{
			const char *argv[] = {"HGETALL", k};
			rds_cmd_argv(t->r, on_prior, t, 2, argv, NULL);
		}
	} else if (strcmp(what, "replayed") == 0)
		transfer_end(t, ACCOUNTS_REPLAYED, NULL, NULL);
	else if (strcmp(what, "idem_conflict") == 0)
		transfer_end(t, ACCOUNTS_IDEM_CONFLICT, NULL, NULL);
	else if (strcmp(what, "insufficient") == 0 && reply->elements == 2)
		transfer_end(t, ACCOUNTS_INSUFFICIENT, reply->element[1]->str, NULL);
	else if (strcmp(what, "not_found") == 0)
		transfer_end(t, ACCOUNTS_NOT_FOUND, "from_key", NULL);
	else
		transfer_end(t, -1, NULL, "unexpected reply from transfer_debit");
}

static void on_resolved(void *ud, redisReply *reply, const char *err)
{
	struct transfer *t = ud;
	const char *what = NULL;
	char sp[KS_PREFIX_MAX], ak[KS_KEY_MAX], ik[KS_KEY_MAX + 72] = "", ttl[24];
	char evt_out[EVENT_ID_MAX];
	uint64_t ms = ids_now_ms();

	if (err) {
		transfer_end(t, -1, NULL, err);
		return;
	}
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements >= 1)
		what = reply->element[0]->str;
	if (!what) {
		transfer_end(t, -1, NULL, "unexpected reply from transfer_resolve");
		return;
	}
	if (strcmp(what, "not_found") == 0 && reply->elements == 2) {
		transfer_end(t, ACCOUNTS_NOT_FOUND, reply->element[1]->str, NULL);
		return;
	}
	if (strcmp(what, "forbidden") == 0 && reply->elements == 2 &&
	    reply->element[1]->type == REDIS_REPLY_STRING) {
		transfer_end(t, ACCOUNTS_FORBIDDEN, reply->element[1]->str, NULL);
		return;
	}
	if (strcmp(what, "same") == 0) {
		transfer_end(t, ACCOUNTS_SAME, NULL, NULL);
		return;
	}
	if (strcmp(what, "ok") != 0 || reply->elements != 3 ||
	    ks_shard_of(reply->element[1]->str) < 0 || ks_shard_of(reply->element[2]->str) < 0) {
		transfer_end(t, -1, NULL, "unexpected reply from transfer_resolve");
		return;
	}
	snprintf(t->from, sizeof(t->from), "%s", reply->element[1]->str);
	snprintf(t->to, sizeof(t->to), "%s", reply->element[2]->str);
	/* the transfer and its source event live in the source's shard, the
	 * destination's event in the destination's */
	memcpy(t->id, "trf_", 4);
	ks_ulid_at(ks_shard_of(t->from), ms, t->id + 4);
	ks_event_id(ks_shard_of(t->from), evt_out);
	ks_event_id(ks_shard_of(t->to), t->evt_in);
	snprintf(t->at, sizeof(t->at), "%llu", (unsigned long long)ms);
	timefmt_format(t->at_txt, ms);
	ks_shard_prefix(sp, sizeof(sp), t->cfg->prefix, ks_shard_of(t->from));
	ks_account_key(ak, sizeof(ak), t->cfg->prefix, t->env, t->from);
	if (t->idem) {
		char h[65];
		/* the client's key is hashed: any bytes, bounded key length; it is
		 * scoped to the caller and the source account */
		ids_sha256_hex(h, t->idem, strlen(t->idem));
		ks_idempotency_key(ik, sizeof(ik), t->cfg->prefix, ks_shard_of(t->from), t->caller,
				   h);
	}
	snprintf(ttl, sizeof(ttl), "%ld", t->cfg->event_retention_days * 86400);
	{
		const char *argv[] = {ak,
				      sp,
				      ks_shard_of(t->from) == ks_shard_of(t->to) ? "1" : "0",
				      t->id,
				      t->amount,
				      t->from,
				      t->to,
				      t->from_key,
				      t->to_key,
				      t->at,
				      t->at_txt,
				      env_name(t->env),
				      ik,
				      t->fingerprint ? t->fingerprint : "",
				      evt_out,
				      t->evt_in,
				      ttl};
		rds_script(t->r, on_debited, t, SCRIPT_TRANSFER_DEBIT, 1, 17, argv, NULL);
	}
}

void transfers_create(struct rds *r, const struct config *cfg, enum env env, const char *caller,
		      const char *from_key, const char *to_key, long long amount, const char *idem,
		      const char *fingerprint, store_fn cb, void *ud)
{
	struct transfer *t = mem_new(struct transfer);
	char gp[KS_PREFIX_MAX], k1[KS_KEY_MAX];

	t->r = r;
	t->cfg = cfg;
	t->env = env;
	t->cb = cb;
	t->ud = ud;
	t->caller = mem_strdup(caller);
	t->from_key = mem_strdup(from_key);
	t->to_key = mem_strdup(to_key);
	t->idem = idem ? mem_strdup(idem) : NULL;
	t->fingerprint = fingerprint ? mem_strdup(fingerprint) : NULL;
	snprintf(t->amount, sizeof(t->amount), "%lld", amount);
	ks_env_prefix(gp, sizeof(gp), cfg->prefix, env);
	ks_env_pixkeys_key(k1, sizeof(k1), cfg->prefix, env);
	{
		const char *argv[] = {k1, from_key, to_key, caller, gp};
		rds_script(r, on_resolved, t, SCRIPT_TRANSFER_RESOLVE, 1, 5, argv, NULL);
	}
}

/* ---- recovery of transfers left debited ---- */

#define RECOVER_AFTER_MS 10000
#define RECOVER_BATCH 20

struct recovery {
	void (*done)(void *ud, int n);
	void *ud;
	int left, total;
};

static void recovery_step_done(void *ud, int result, const char *json, const char *err)
{
	struct recovery *rc = ud;

	if (--rc->left == 0) {
		rc->done(rc->ud, rc->total);
		free(rc);
	}
}

struct recover_one {
	struct rds *r;
	const struct config *cfg;
	struct recovery *rc;
};

static void on_record(void *ud, redisReply *reply, const char *err)
{
	struct recover_one *o = ud;
	const char *f[] = {"id", "amount", "from", "to",     "from_key", "to_key",
			   "at", "at_txt", "env",  "evt_in", "state"};
	const char *v[11];
	struct transfer *t;
	enum env env;

	for (int i = 0; i < 11; i++)
		v[i] = err ? NULL : rds_hash_field(reply, f[i]);
	for (int i = 0; i < 11; i++)
		if (!v[i])
			goto skip;
	if (strcmp(v[10], "debited") != 0 || env_parse(v[8], &env) < 0 || ks_shard_of(v[0]) < 0 ||
	    ks_shard_of(v[3]) < 0)
		goto skip;
	log_info("transfer %s: finishing a transfer left debited", v[0]);
	t = mem_new(struct transfer);
	t->r = o->r;
	t->cfg = o->cfg;
	t->env = env;
	t->cb = recovery_step_done;
	t->ud = o->rc;
	snprintf(t->id, sizeof(t->id), "%s", v[0]);
	snprintf(t->amount, sizeof(t->amount), "%s", v[1]);
	snprintf(t->from, sizeof(t->from), "%s", v[2]);
	snprintf(t->to, sizeof(t->to), "%s", v[3]);
	t->from_key = mem_strdup(v[4]);
	t->to_key = mem_strdup(v[5]);
	snprintf(t->at, sizeof(t->at), "%s", v[6]);
	snprintf(t->at_txt, sizeof(t->at_txt), "%s", v[7]);
	snprintf(t->evt_in, sizeof(t->evt_in), "%s", v[9]);
	free(o);
	transfer_credit(t);
	return;
skip:
	recovery_step_done(o->rc, err ? -1 : 0, NULL, err);
	free(o);
}

static void on_stale(void *ud, redisReply *reply, const char *err)
{
	struct recover_one *o = ud;
	struct recovery *rc = o->rc;

	if (err || reply->type != REDIS_REPLY_ARRAY || reply->elements == 0) {
		rc->done(rc->ud, err ? -1 : 0);
		free(rc);
		free(o);
		return;
	}
	rc->total = (int)reply->elements;
	/* one count more, held by this loop: a step may answer at once */
	rc->left = (int)reply->elements + 1;
	for (size_t i = 0; i < reply->elements; i++) {
		struct recover_one *one = mem_new(struct recover_one);
		char k[KS_KEY_MAX];
		*one = *o;
		ks_transfer_key(k, sizeof(k), o->cfg->prefix, ks_shard_of(reply->element[i]->str),
				reply->element[i]->str);
		{
			const char *argv[] = {"HGETALL", k};
			rds_cmd_argv(o->r, on_record, one, 2, argv, NULL);
		}
	}
	free(o);
	recovery_step_done(rc, 0, NULL, NULL);
}

void transfers_recover(struct rds *r, const struct config *cfg, int shard,
		       void (*done)(void *ud, int n), void *ud)
{
	struct recovery *rc = mem_new(struct recovery);
	struct recover_one *o = mem_new(struct recover_one);
	char k[KS_KEY_MAX], until[32], batch[16];

	rc->done = done;
	rc->ud = ud;
	o->r = r;
	o->cfg = cfg;
	o->rc = rc;
	ks_transfers_out_key(k, sizeof(k), cfg->prefix, shard);
	snprintf(until, sizeof(until), "%llu",
		 (unsigned long long)(ids_now_ms() - RECOVER_AFTER_MS));
	snprintf(batch, sizeof(batch), "%d", RECOVER_BATCH);
	{
		const char *argv[] = {"ZRANGEBYSCORE", k, "-inf", until, "LIMIT", "0", batch};
		rds_cmd_argv(r, on_stale, o, 7, argv, NULL);
	}
}
