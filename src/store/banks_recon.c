/* banks_recon: what the reconciliation of bank connections keeps in Redis
 * (docs/bank-api.md, "Reconciliation"): the schedule of each environment
 * (script bank_recon: which connection is due, which one a process runs,
 * when each last succeeded), each run's result in the connection's record
 * (script bank_recon_done), and the refunds pixrelay asked a bank for and
 * has not heard settled. Asking the bank is relay/bankrecon.c's; taking
 * the Pix it lists is banks_receive.c's.
 */
#include "pixrelay/store/banks.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"
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

/* ---- the day's report ---- */

struct report {
	store_fn cb;
	void *ud;
	char id[BANKS_ID_MAX];
	char day[11];
	long long day_end_ms; /* the first instant of the next day, Brasilia time */
};

/* The count of `field` in an HGETALL reply (0 when absent). */
static long long day_count(const redisReply *h, const char *field)
{
	const char *v = rds_hash_field(h, field);

	return v ? strtoll(v, NULL, 10) : 0;
}

/* {"DEVOLVIDO": n, "EM_PROCESSAMENTO": n, "NAO_REALIZADO": n} of the day's
 * fields <prefix><status in lower case>. */
static void render_statuses(yajl_gen g, const redisReply *day, const char *prefix)
{
	static const char *const statuses[] = {"DEVOLVIDO", "EM_PROCESSAMENTO", "NAO_REALIZADO"};

	for (size_t i = 0; i < sizeof(statuses) / sizeof(*statuses); i++) {
		char field[40];

		snprintf(field, sizeof(field), "%s%s", prefix, statuses[i]);
		for (char *q = field; *q; q++)
			if (*q >= 'A' && *q <= 'Z')
				*q = (char)(*q - 'A' + 'a');
		json_str(g, statuses[i]);
		json_int(g, day_count(day, field));
	}
}

/* A field of the connection's part of the bank_report reply as a number
 * (0 when empty). */
static long long conn_field(const redisReply *c, size_t i)
{
	return c->element[i]->type == REDIS_REPLY_STRING ? strtoll(c->element[i]->str, NULL, 10)
							 : 0;
}

/* The day judged from the spans read ("<from>-<to>" members), into *d. */
static void judge_day(const struct report *rp, const redisReply *c, const redisReply *spans,
		      struct bankday *d)
{
	struct bankday_conn conn = {0};
	struct bankday_span *s = spans->elements ? mem_calloc(spans->elements, sizeof(*s)) : NULL;
	long long api_at = conn_field(c, 6);
	size_t n = 0;

	conn.has_api = c->element[4]->type == REDIS_REPLY_STRING && c->element[4]->str[0];
	conn.created_ms = conn_field(c, 5);
	conn.began_ms = (api_at ? api_at : conn.created_ms) - BANKDAY_FIRST_BEFORE_MS;
	for (size_t i = 0; i < spans->elements; i++) {
		const redisReply *e = spans->element[i];
		char *dash;

		if (e->type != REDIS_REPLY_STRING || !(dash = strchr(e->str, '-')))
			continue;
		s[n].from_ms = strtoll(e->str, NULL, 10);
		s[n].to_ms = strtoll(dash + 1, NULL, 10);
		n++;
	}
	bankday_judge(&conn, s, n, rp->day_end_ms - BANKDAY_MS, (long long)ids_now_ms(), d);
	free(s);
}

static void on_report(void *ud, redisReply *reply, const char *err)
{
	static const char *const reasons[] = {"paid",		"heard_late",	"amount_mismatch",
					      "charge_expired", "charge_paid",	"charge_refunded",
					      "charge_failed",	"unknown_txid", "no_txid"};
	struct report *rp = ud;
	const redisReply *c, *day, *e2es, *elsewhere;
	long long rec_at, webhook, recovered;
	char at[32];
	struct bankday *d = NULL;
	yajl_gen g;
	const char *buf;
	size_t len;

	if (err || reply->type != REDIS_REPLY_ARRAY) {
		rp->cb(rp->ud, -1, NULL, err ? err : "unexpected reply from bank_report");
		goto done;
	}
	if (reply->elements != 7 || reply->element[0]->type != REDIS_REPLY_ARRAY ||
	    reply->element[0]->elements != 7 || reply->element[2]->type != REDIS_REPLY_ARRAY ||
	    reply->element[4]->type != REDIS_REPLY_ARRAY ||
	    reply->element[5]->type != REDIS_REPLY_ARRAY) {
		rp->cb(rp->ud, BANKS_NOT_FOUND, NULL, NULL);
		goto done;
	}
	c = reply->element[0];
	day = reply->element[1];
	e2es = reply->element[2];
	elsewhere = reply->element[5];
	rec_at = conn_field(c, 2);
	d = mem_new(struct bankday);
	judge_day(rp, c, reply->element[4], d);
	webhook = day_count(day, "webhook");
	recovered = day_count(day, "reconciliation");
	g = json_gen_new();
	json_open(g);
	json_str(g, "connection");
	json_str(g, rp->id);
	json_str(g, "date");
	json_str(g, rp->day);
	json_str(g, "timeZone");
	json_str(g, "America/Sao_Paulo");
	json_str(g, "reconciledUntil");
	if (rec_at > 0) {
		timefmt_rfc3339(at, (uint64_t)rec_at);
		json_str(g, at);
	} else {
		json_null(g);
	}
	/* the spans read cover the whole day and the overlap past it */
	json_str(g, "complete");
	json_bool(g, d->complete);
	json_str(g, "whyNotComplete");
	json_open_array(g);
	for (size_t i = 0; i < d->nwhy; i++)
		json_str(g, d->why[i]);
	json_close_array(g);
	json_str(g, "read");
	json_open_array(g);
	for (size_t i = 0; i < d->nread; i++) {
		char t[BANKDAY_TIME_LEN + 1];

		json_open(g);
		json_str(g, "from");
		bankday_time(t, d->read[i].from_ms);
		json_str(g, t);
		json_str(g, "to");
		bankday_time(t, d->read[i].to_ms);
		json_str(g, t);
		json_close(g);
	}
	json_close_array(g);
	json_str(g, "pix");
	json_open(g);
	json_str(g, "received");
	json_int(g, webhook + recovered);
	json_str(g, "byWebhook");
	json_int(g, webhook);
	json_str(g, "recovered");
	json_int(g, recovered);
	json_str(g, "duplicates");
	json_int(g, day_count(day, "duplicate"));
	json_str(g, "refused");
	json_int(g, day_count(day, "refused"));
	json_str(g, "heldElsewhere");
	json_int(g, day_count(day, "elsewhere"));
	json_close(g);
	json_str(g, "cents");
	json_open(g);
	json_str(g, "received");
	json_int(g, day_count(day, "webhook_cents") + day_count(day, "reconciliation_cents"));
	json_str(g, "byWebhook");
	json_int(g, day_count(day, "webhook_cents"));
	json_str(g, "recovered");
	json_int(g, day_count(day, "reconciliation_cents"));
	json_str(g, "refused");
	json_int(g, day_count(day, "refused_cents"));
	json_close(g);
	json_str(g, "outcomes");
	json_open(g);
	for (size_t i = 0; i < sizeof(reasons) / sizeof(*reasons); i++) {
		json_str(g, reasons[i]);
		json_int(g, day_count(day, reasons[i]));
	}
	json_close(g);
	json_str(g, "refunds");
	json_open(g);
	render_statuses(g, day, "refund_");
	/* refunds of the MED, counted among the others too */
	json_str(g, "med");
	json_open(g);
	render_statuses(g, day, "med_");
	json_str(g, "cents");
	json_int(g, day_count(day, "med_cents"));
	json_str(g, "natures");
	json_open(g);
	for (size_t i = 0; i + 1 < day->elements; i += 2) {
		const redisReply *f = day->element[i];

		if (f->type == REDIS_REPLY_STRING && strncmp(f->str, "nature_", 7) == 0) {
			json_str(g, f->str + 7);
			json_int(g, day_count(day, f->str));
		}
	}
	json_close(g);
	json_close(g);
	json_close(g);
	json_str(g, "recoveredEndToEndIds");
	json_open_array(g);
	for (size_t i = 0; i < e2es->elements; i++)
		if (e2es->element[i]->type == REDIS_REPLY_STRING)
			json_str(g, e2es->element[i]->str);
	json_close_array(g);
	/* what this connection's bank sent that another connection held */
	json_str(g, "heldElsewhere");
	json_open_array(g);
	for (size_t i = 0; i < elsewhere->elements; i++) {
		const redisReply *e = elsewhere->element[i];
		const char *sp = e->type == REDIS_REPLY_STRING ? strchr(e->str, ' ') : NULL;

		if (!sp)
			continue;
		json_open(g);
		json_str(g, "endToEndId");
		json_strn(g, e->str, (size_t)(sp - e->str));
		json_str(g, "connection");
		json_str(g, sp + 1);
		json_close(g);
	}
	json_close_array(g);
	json_close(g);
	buf = json_buf(g, &len);
	{
		char *out = mem_strndup(buf, len);

		rp->cb(rp->ud, 0, out, NULL);
		free(out);
	}
	yajl_gen_free(g);
done:
	free(d);
	free(rp);
}

int banks_report_day(const char *date, char day[11], long long *end_ms)
{
	long long y, start;
	int m, d;

	if (!date || !date[0]) {
		/* today, Brasilia time (UTC-3, no daylight saving since 2019) */
		long long now = (long long)ids_now_ms() - BANKS_BRASILIA_OFFSET_MS;
		long long days = now >= 0 ? now / 86400000 : -1;
		char txt[32];

		timefmt_rfc3339(txt, (uint64_t)(days * 86400000));
		snprintf(day, 11, "%.10s", txt);
	} else {
		if (strlen(date) != 10 || date[4] != '-' || date[7] != '-')
			return -1;
		for (int i = 0; i < 10; i++)
			if (i != 4 && i != 7 && (date[i] < '0' || date[i] > '9'))
				return -1;
		memcpy(day, date, 10);
		day[10] = '\0';
	}
	y = strtoll(day, NULL, 10);
	m = atoi(day + 5);
	d = atoi(day + 8);
	if (y < 1970 || m < 1 || m > 12 || d < 1 || d > timefmt_days_in_month(y, m))
		return -1;
	start = timefmt_days_from_civil(y, m, d) * 86400000LL + BANKS_BRASILIA_OFFSET_MS;
	*end_ms = start + 86400000LL;
	return 0;
}

void banks_report(struct rds *r, const struct config *cfg, enum env env, const char *account,
		  const char *id, const char *date, store_fn cb, void *ud)
{
	struct report *rp;
	char bk[KS_KEY_MAX], dk[KS_KEY_MAX], rk[KS_KEY_MAX], sk[KS_KEY_MAX], ek[KS_KEY_MAX];
	char most[16];
	int shard = ks_shard_of(id);

	if (strlen(id) != IDS_ULID_LEN + 4 || strncmp(id, "bnk_", 4) != 0 || shard < 0) {
		cb(ud, BANKS_NOT_FOUND, NULL, NULL);
		return;
	}
	rp = mem_new(struct report);
	if (banks_report_day(date, rp->day, &rp->day_end_ms) < 0) {
		free(rp);
		cb(ud, BANKS_BAD_DATE, NULL, NULL);
		return;
	}
	rp->cb = cb;
	rp->ud = ud;
	snprintf(rp->id, sizeof(rp->id), "%s", id);
	ks_bank_key(bk, sizeof(bk), cfg->prefix, shard, id);
	ks_bank_day_key(dk, sizeof(dk), cfg->prefix, shard, id, rp->day);
	ks_bank_recovered_key(rk, sizeof(rk), cfg->prefix, shard, id, rp->day);
	ks_bank_read_key(sk, sizeof(sk), cfg->prefix, shard, id);
	ks_bank_elsewhere_key(ek, sizeof(ek), cfg->prefix, shard, id, rp->day);
	snprintf(most, sizeof(most), "%d", BANKS_REPORT_E2E_MAX);
	{
		const char *argv[8] = {bk,  dk, rk, sk, ek, env_name(env), account ? account : "",
				       most};
		rds_script(r, on_report, rp, SCRIPT_BANK_REPORT, 5, 8, argv, NULL);
	}
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
