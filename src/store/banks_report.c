/* banks_report: the day's report of a bank connection (docs/bank-api.md,
 * "The day's report"): one call of the script bank_report reads what
 * bank_pix counted that day, the endToEndIds the reconciliation took
 * first, the spans of the bank's list it read (bank_recon_read) and what
 * another connection held; pix/bankday.c judges whether the day is
 * complete, and this renders it.
 */
#include "pixrelay/store/banks_report.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/pix/bankday.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/pix/recurrence.h"
#include "pixrelay/redis/scripts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The fields of the connection in bank_report's answer, in its order. */
enum { C_ENV, C_ACCOUNT, C_REC_AT, C_REC_OK, C_API_URL, C_CREATED, C_API_AT, C_COUNT };

int banks_report_decode(const redisReply *reply, struct banks_report_reply *out)
{
	struct banks_report_reply r;
	const redisReply *c, *spans;

	if (reply->type != REDIS_REPLY_ARRAY)
		return -1;
	if (reply->elements == 0)
		return BANKS_NOT_FOUND;
	if (reply->elements != 7)
		return -1;
	c = reply->element[0];
	spans = reply->element[4];
	memset(&r, 0, sizeof(r));
	if (c->type != REDIS_REPLY_ARRAY || c->elements != C_COUNT ||
	    reply->element[1]->type != REDIS_REPLY_ARRAY || reply->element[1]->elements % 2 ||
	    reply->element[2]->type != REDIS_REPLY_ARRAY ||
	    reply->element[3]->type != REDIS_REPLY_INTEGER || spans->type != REDIS_REPLY_ARRAY ||
	    reply->element[5]->type != REDIS_REPLY_ARRAY ||
	    reply->element[6]->type != REDIS_REPLY_INTEGER ||
	    c->element[C_API_URL]->type != REDIS_REPLY_STRING ||
	    banks_field_number(c->element[C_REC_AT], &r.rec_at_ms) < 0 ||
	    banks_field_number(c->element[C_CREATED], &r.created_ms) < 0 ||
	    banks_field_number(c->element[C_API_AT], &r.api_at_ms) < 0)
		return -1;
	r.has_api = c->element[C_API_URL]->len > 0;
	r.day = reply->element[1];
	r.recovered = reply->element[2];
	r.elsewhere = reply->element[5];
	r.spans = spans->elements ? mem_calloc(spans->elements, sizeof(*r.spans)) : NULL;
	for (size_t i = 0; i < spans->elements; i++) {
		const redisReply *e = spans->element[i];
		char *dash;

		if (e->type != REDIS_REPLY_STRING || !(dash = strchr(e->str, '-')))
			continue;
		r.spans[r.nspans].from_ms = strtoll(e->str, NULL, 10);
		r.spans[r.nspans].to_ms = strtoll(dash + 1, NULL, 10);
		r.nspans++;
	}
	*out = r;
	return 0;
}

/* The day judged from what bank_report read, into *d. */
static void judge_day(const struct report *rp, const struct banks_report_reply *r,
		      struct bankday *d)
{
	struct bankday_conn conn = {0};

	conn.has_api = r->has_api;
	conn.created_ms = r->created_ms;
	conn.began_ms = (r->api_at_ms ? r->api_at_ms : r->created_ms) - BANKDAY_FIRST_BEFORE_MS;
	bankday_judge(&conn, r->spans, r->nspans, rp->day_end_ms - BANKDAY_MS,
		      (long long)ids_now_ms(), d);
}

static void on_report(void *ud, redisReply *reply, const char *err)
{
	static const char *const reasons[] = {"paid",		"heard_late",	"amount_mismatch",
					      "charge_expired", "charge_paid",	"charge_refunded",
					      "charge_failed",	"unknown_txid", "no_txid"};
	struct report *rp = ud;
	struct banks_report_reply r = {0};
	const redisReply *day, *e2es, *elsewhere;
	long long rec_at, webhook, recovered;
	char at[32];
	struct bankday *d = NULL;
	yajl_gen g;
	char *out;
	int rc = err ? -1 : banks_report_decode(reply, &r);

	if (rc != 0) {
		rp->cb(rp->ud, rc == BANKS_NOT_FOUND ? BANKS_NOT_FOUND : -1, NULL,
		       rc == BANKS_NOT_FOUND ? NULL
		       : err		     ? err
					     : "unexpected reply from bank_report");
		goto done;
	}
	day = r.day;
	e2es = r.recovered;
	elsewhere = r.elsewhere;
	rec_at = r.rec_at_ms;
	d = mem_new(struct bankday);
	judge_day(rp, &r, d);
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
	/* the Pix that paid charges with a due date (counted among the paid
	 * too), and what they brought */
	json_str(g, "dueDate");
	json_open(g);
	json_str(g, "paid");
	json_int(g, day_count(day, "due_paid"));
	json_str(g, "cents");
	json_int(g, day_count(day, "due_paid_cents"));
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
	/* Pix Automático (docs/recurrences.md): the recurrences' statuses
	 * taken that day, those the reconciliation took first */
	json_str(g, "recurrences");
	json_open(g);
	for (int s = RECURRENCE_CREATED; s <= RECURRENCE_CANCELLED; s++) {
		char f[32];
		snprintf(f, sizeof(f), "rec_%s", recurrence_status_name(s));
		json_str(g, recurrence_status_name(s));
		json_int(g, day_count(day, f));
	}
	json_str(g, "recovered");
	json_int(g, day_count(day, "rec_recovered"));
	json_close(g);
	/* and their recurring charges: each status the bank said that day
	 * (the standard's names), with their cents (cobr_heard.lua) */
	json_str(g, "recurringCharges");
	json_open(g);
	{
		static const char *const st[] = {"CRIADA",   "ATIVA",	  "CONCLUIDA",
						 "EXPIRADA", "REJEITADA", "CANCELADA"};

		for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
			char f[40];

			json_str(g, st[i]);
			json_open(g);
			snprintf(f, sizeof(f), "cobr_%s", st[i]);
			json_str(g, "count");
			json_int(g, day_count(day, f));
			snprintf(f, sizeof(f), "cobr_%s_cents", st[i]);
			json_str(g, "cents");
			json_int(g, day_count(day, f));
			json_close(g);
		}
	}
	json_str(g, "recovered");
	json_int(g, day_count(day, "cobr_recovered"));
	json_close(g);
	json_str(g, "recoveredEndToEndIds");
	json_open_array(g);
	/* each entry begins with its endToEndId (lib bank_pix.lua) */
	for (size_t i = 0; i < e2es->elements; i++)
		if (e2es->element[i]->type == REDIS_REPLY_STRING)
			json_strn(g, e2es->element[i]->str, strcspn(e2es->element[i]->str, " "));
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
	out = json_take(g);
	rp->cb(rp->ud, 0, out, NULL);
	free(out);
done:
	free(r.spans);
	free(d);
	free(rp);
}

int banks_report_day(const char *date, char day[11], long long *end_ms)
{
	long long y, start;
	int m, d;

	if (!date || !date[0]) {
		bankday_date(day, (long long)ids_now_ms()); /* today */
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
	start = timefmt_days_from_civil(y, m, d) * 86400000LL + BANKDAY_OFFSET_MS;
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

	if (!banks_id_valid(id)) {
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
