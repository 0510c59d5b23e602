/* bankcobr: a recurring charge created at its recurrence's bank (PUT
 * /cobr/{txid}); include/pixrelay/relay/bankcobr.h says what each step
 * checks. The values are pix/cobr.c's, the store store/charges.c's, the HTTP
 * shape api/api_recurrences.c's. */
#include "pixrelay/relay/bankcobr.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/metrics.h"
#include "pixrelay/core/seal.h"
#include "pixrelay/pix/bankcreds.h"
#include "pixrelay/pix/bankpix.h"
#include "pixrelay/pix/chargedue.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/relay/bankapi.h"
#include "pixrelay/store/banks_conn.h"
#include "pixrelay/store/banks_receive.h"
#include "pixrelay/store/charges.h"
#include "pixrelay/store/cobrs.h"
#include "pixrelay/store/recurrences.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One creation, from the recurrence's read to the answer. */
struct job {
	const struct bankcharges *b;
	enum env env;
	char account[32];
	struct cobr_input cobr;
	struct charge_input in; /* the charge as stored */
	store_fn cb;
	void *ud;
	struct bank_creds creds;
	char conn[BANKS_ID_MAX];
	char idrec[RECURRENCE_IDREC_LEN + 1];
	char id[32]; /* the charge's id, the cobr's txid */
	char agencia[BANKS_AGENCIA_MAX + 1], conta[BANKS_CONTA_MAX + 1], tipo[12];
};

static void job_free(struct job *j)
{
	charge_input_deinit(&j->in);
	bank_creds_wipe(&j->creds);
	free(j);
}

static void answer(struct job *j, int result, const char *json, const char *err)
{
	j->cb(j->ud, result, json, err);
	job_free(j);
}

static struct cobr_recebedor recebedor_of(const struct job *j)
{
	return (struct cobr_recebedor){j->agencia, j->conta, j->tipo};
}

static void on_stored(void *ud, int result, const char *json, const char *err)
{
	answer(ud, result, json, err);
}

static void on_put(void *ud, long status, const char *body, const char *err)
{
	struct job *j = ud;
	struct cobr_recebedor rcv = recebedor_of(j);
	char why[1024];
	size_t n;

	if (status == 0 || status >= 500 || status == 429) {
		log_warn("recurring charge %s at the bank of %s: %s", j->id, j->conn,
			 err ? err : "the bank is unavailable");
		metrics_bank_charge("unavailable");
		answer(j, BANKREC_UNAVAILABLE,
		       "the bank did not answer (PUT /cobr): nothing was stored; retry", NULL);
		return;
	}
	if (status != 200 && status != 201) {
		bankapi_refusal(why, sizeof(why), "recurring charge", status, body);
		if (status == 401 || status == 403) {
			log_error("recurring charge %s at the bank of %s: %s", j->id, j->conn, why);
			n = strlen(why);
			snprintf(why + n, sizeof(why) - n,
				 "; the bank does not accept pixrelay's credentials for bank "
				 "connection %s (they need the scope cobr.write): nothing was "
				 "stored; see pixrelay bank show %s",
				 j->conn, j->conn);
			metrics_bank_charge("unavailable");
			answer(j, BANKREC_UNAVAILABLE, why, NULL);
			return;
		}
		metrics_bank_charge("refused");
		answer(j, BANKREC_REFUSED, why, NULL);
		return;
	}
	n = (size_t)snprintf(why, sizeof(why),
			     "the bank's answer does not match the recurring charge (PUT /cobr): ");
	if (cobr_read_answer(body, body ? strlen(body) : 0, j->id, j->idrec, &j->cobr, &rcv,
			     why + n, sizeof(why) - n) != 0) {
		log_error("recurring charge %s at the bank of %s: %s", j->id, j->conn, why);
		metrics_bank_charge("mismatch");
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "; nothing was stored");
		answer(j, BANKREC_UNAVAILABLE, why, NULL);
		return;
	}
	metrics_bank_charge("created");
	charges_create_at(j->b->r, j->b->cfg, j->env, j->account, &j->in, j->id, "", on_stored, j);
}

static void on_connection(void *ud, int result, const struct banks_conn *c, const char *err)
{
	struct job *j = ud;
	struct cobr_recebedor rcv;
	char why[640], *body, *path;

	if (result < 0) {
		answer(j, -1, NULL, err);
		return;
	}
	if (result != 0 || c->env != j->env || strcmp(c->account, j->account) != 0 ||
	    !c->api.api_url ||
	    banks_open_credentials(c->id, &c->api, seal_keyfile_get(j->b->keys), &j->creds, why,
				   sizeof(why)) != 0) {
		if (result != 0 || c->env != j->env || strcmp(c->account, j->account) != 0)
			snprintf(why, sizeof(why), "no such connection");
		else if (!c->api.api_url)
			snprintf(why, sizeof(why), "no API credentials");
		log_error("recurring charges of account %s: bank connection %s: %s", j->account,
			  j->conn, why);
		answer(j, BANKREC_UNAVAILABLE,
		       "the recurrence's bank connection cannot be used now (see pixrelay bank "
		       "show)",
		       NULL);
		return;
	}
	if (!c->rcv.conta[0]) {
		snprintf(
		    why, sizeof(why),
		    "a recurring charge names the receiving account at the bank (recebedor), "
		    "and bank connection %s has none: give it (pixrelay bank update %s --conta "
		    "DIGITS --tipo-conta CORRENTE|POUPANCA|PAGAMENTO [--agencia DIGITS]; "
		    "docs/recurrences.md)",
		    j->conn, j->conn);
		answer(j, BANKCOBR_NO_RECEBEDOR, why, NULL);
		return;
	}
	snprintf(j->agencia, sizeof(j->agencia), "%s", c->rcv.agencia);
	snprintf(j->conta, sizeof(j->conta), "%s", c->rcv.conta);
	snprintf(j->tipo, sizeof(j->tipo), "%s", c->rcv.tipo_conta);
	rcv = recebedor_of(j);
	/* a new txid each time: the standard refuses a second cobr of a cycle,
	 * so a retry after a lost answer is refused rather than doubled */
	ks_ulid_at(ks_shard_of(j->account), ids_now_ms(), j->id);
	body = cobr_body(j->idrec, &j->cobr, &rcv);
	path = mem_printf("/cobr/%s", j->id);
	bankapi_call(j->b->bankapi, &j->creds, "PUT", path, body, on_put, j);
	free(path);
	free(body);
}

/* The int64 at obj.name, 0 when null or absent. */
static int64_t cents_of(yajl_val obj, const char *name)
{
	int64_t n = 0;

	return json_is_int64(json_get(obj, name), &n) ? n : 0;
}

static void on_record(void *ud, int result, const struct recurrences_record *rec, const char *err)
{
	struct job *j = ud;
	yajl_val v = NULL, payer;
	struct cobr_terms t;
	const char *policy, *url;
	char why[512];
	int rc;

	if (result != 0) {
		answer(j, result, NULL, err);
		return;
	}
	if (json_parse_object(rec->json, strlen(rec->json), &v, why, sizeof(why)) < 0) {
		answer(j, -1, NULL, "a stored recurrence does not read");
		return;
	}
	t.status = rec->status;
	t.amount = cents_of(v, "amount");
	t.minimum = cents_of(v, "minimumAmount");
	t.start = YAJL_GET_STRING(json_get(v, "startDate"));
	t.end = YAJL_GET_STRING(json_get(v, "endDate"));
	if (!t.start) {
		yajl_tree_free(v);
		answer(j, -1, NULL, "a stored recurrence has no startDate");
		return;
	}
	rc = cobr_check(&j->cobr, &t, chargedue_day_of_ms((int64_t)ids_now_ms()), why, sizeof(why));
	if (rc != 0) {
		yajl_tree_free(v);
		answer(j, rc == COBR_NOT_APPROVED ? BANKCOBR_NOT_APPROVED : BANKCOBR_INVALID, why,
		       NULL);
		return;
	}
	/* the charge as stored: the cobr's due date, payable through the
	 * retries its recurrence's policy allows; the payer, the destination */
	policy = YAJL_GET_STRING(json_get(v, "retryPolicy"));
	url = YAJL_GET_STRING(json_get(v, "postbackUrl"));
	payer = json_get(v, "payer");
	j->in.amount = j->cobr.amount;
	memcpy(j->in.due.date, j->cobr.due, sizeof(j->in.due.date));
	j->in.due.days_after =
	    policy && strcmp(policy, "THREE_IN_SEVEN_DAYS") == 0 ? COBR_RETRY_DAYS : 0;
	snprintf(j->in.recurrence, sizeof(j->in.recurrence), "%s", rec->id);
	j->in.postback_url = mem_strdup_or_null(url);
	j->in.name = mem_strdup_or_null(YAJL_GET_STRING(json_get(payer, "name")));
	j->in.document = mem_strdup_or_null(YAJL_GET_STRING(json_get(payer, "document")));
	yajl_tree_free(v);
	snprintf(j->idrec, sizeof(j->idrec), "%s", rec->idrec);
	snprintf(j->conn, sizeof(j->conn), "%s", rec->connection);
	snprintf(j->in.idrec, sizeof(j->in.idrec), "%s", rec->idrec);
	snprintf(j->in.connection, sizeof(j->in.connection), "%s", rec->connection);
	banks_get(j->b->r, j->b->cfg, j->conn, on_connection, j);
}

void bankcobr_create(const struct bankcharges *b, enum env env, const char *account,
		     const char *rec_id, const struct cobr_input *in, store_fn cb, void *ud)
{
	struct job *j = mem_new(struct job);

	j->b = b;
	j->env = env;
	snprintf(j->account, sizeof(j->account), "%s", account);
	j->cobr = *in;
	j->cb = cb;
	j->ud = ud;
	recurrences_read(b->r, b->cfg, env, account, rec_id, on_record, j);
}

/* ---- a retry, a cancel ---- */

/* One retry or cancel, from the charge's read to the answer. */
struct act {
	const struct bankcharges *b;
	enum env env;
	char account[32];
	char id[36];   /* the charge, the cobr's txid */
	char date[11]; /* the retry's day; "" for a cancel */
	char due[11];
	char idrec[RECURRENCE_IDREC_LEN + 1];
	char conn[BANKS_ID_MAX];
	store_fn cb;
	void *ud;
	struct bank_creds creds;
};

static void act_answer(struct act *a, int result, const char *json, const char *err)
{
	a->cb(a->ud, result, json, err);
	bank_creds_wipe(&a->creds);
	free(a);
}

static void on_act_charge(void *ud, int result, const char *json, const char *err)
{
	act_answer(ud, result, json, err);
}

static void on_act_heard(void *ud, int result, const char *json, const char *err)
{
	struct act *a = ud;

	(void)json;
	if (result < 0) {
		act_answer(a, -1, NULL, err);
		return;
	}
	charges_get(a->b->r, a->b->cfg, a->env, a->account, a->id, on_act_charge, a);
}

static void on_act_bank(void *ud, long status, const char *body, const char *err)
{
	struct act *a = ud;
	const char *step = a->date[0] ? "POST /cobr/{txid}/retentativa" : "PATCH /cobr";
	struct cobr_heard h;
	yajl_val v = NULL;
	char why[1024], *pix = NULL;
	const char *st, *txid;

	if (status == 0 || status >= 500 || status == 429) {
		log_warn("recurring charge %s at the bank of %s: %s: %s", a->id, a->conn, step,
			 err ? err : "the bank is unavailable");
		snprintf(why, sizeof(why), "the bank did not answer (%s): nothing changed; retry",
			 step);
		act_answer(a, BANKREC_UNAVAILABLE, why, NULL);
		return;
	}
	if (status != 200 && status != 201) {
		bankapi_refusal(why, sizeof(why), "recurring charge", status, body);
		act_answer(a,
			   status == 401 || status == 403 ? BANKREC_UNAVAILABLE : BANKREC_REFUSED,
			   why, NULL);
		return;
	}
	if (a->date[0]) {
		/* CobRCompleta with its tentativas: written as a callback's */
		if (cobr_read_one(body, body ? strlen(body) : 0, a->id, &h, &pix, why,
				  sizeof(why)) != 0) {
			log_error("recurring charge %s at the bank of %s: %s: %s", a->id, a->conn,
				  step, why);
			act_answer(a, BANKREC_UNAVAILABLE,
				   "the bank's answer to the retry is not the recurring charge",
				   NULL);
			return;
		}
		free(pix);
	} else {
		/* CobRGerada, CANCELADA */
		if (body)
			json_parse_object(body, strlen(body), &v, why, sizeof(why));
		st = YAJL_GET_STRING(json_get(v, "status"));
		txid = YAJL_GET_STRING(json_get(v, "txid"));
		if (!st || strcmp(st, "CANCELADA") != 0 || !txid || strcmp(txid, a->id) != 0) {
			yajl_tree_free(v);
			act_answer(a, BANKREC_UNAVAILABLE,
				   "the bank's answer to the cancel is not the recurring charge "
				   "CANCELADA",
				   NULL);
			return;
		}
		yajl_tree_free(v);
		memset(&h, 0, sizeof(h));
		snprintf(h.txid, sizeof(h.txid), "%s", a->id);
		snprintf(h.status, sizeof(h.status), "CANCELADA");
		snprintf(h.code, sizeof(h.code), "SLCR");
	}
	snprintf(h.idrec, sizeof(h.idrec), "%s", a->idrec);
	cobrs_heard(a->b->r, a->b->cfg, a->env, a->account, &h, COBRS_REQUEST, on_act_heard, a);
}

static void on_act_connection(void *ud, int result, const struct banks_conn *c, const char *err)
{
	struct act *a = ud;
	char why[256], *path;

	if (result < 0) {
		act_answer(a, -1, NULL, err);
		return;
	}
	if (result != 0 || c->env != a->env || strcmp(c->account, a->account) != 0 ||
	    !c->api.api_url ||
	    banks_open_credentials(c->id, &c->api, seal_keyfile_get(a->b->keys), &a->creds, why,
				   sizeof(why)) != 0) {
		log_error("recurring charge %s: bank connection %s cannot be used", a->id, a->conn);
		act_answer(a, BANKREC_UNAVAILABLE,
			   "the recurrence's bank connection cannot be used now (see pixrelay bank "
			   "show)",
			   NULL);
		return;
	}
	if (a->date[0]) {
		path = mem_printf("/cobr/%s/retentativa/%s", a->id, a->date);
		bankapi_call(a->b->bankapi, &a->creds, "POST", path, NULL, on_act_bank, a);
	} else {
		path = mem_printf("/cobr/%s", a->id);
		bankapi_call(a->b->bankapi, &a->creds, "PATCH", path, "{\"status\":\"CANCELADA\"}",
			     on_act_bank, a);
	}
	free(path);
}

static void on_act_rec(void *ud, int result, const struct recurrences_record *rec, const char *err)
{
	struct act *a = ud;
	yajl_val v = NULL;
	const char *policy;
	char why[512];
	long long today = chargedue_day_of_ms((int64_t)ids_now_ms());

	if (result != 0) {
		act_answer(a, result < 0 ? -1 : BANKCOBR_CONFLICT,
			   result < 0 ? NULL : "the charge's recurrence is gone", err);
		return;
	}
	json_parse_object(rec->json, strlen(rec->json), &v, why, sizeof(why));
	policy = YAJL_GET_STRING(json_get(v, "retryPolicy"));
	if (a->date[0] && (!policy || strcmp(policy, "THREE_IN_SEVEN_DAYS") != 0)) {
		yajl_tree_free(v);
		act_answer(a, BANKCOBR_CONFLICT,
			   "the recurrence's retryPolicy is NONE: its charges are not retried; "
			   "nothing was done",
			   NULL);
		return;
	}
	yajl_tree_free(v);
	if (a->date[0] && (chargedue_day(a->date) <= today ||
			   chargedue_day(a->date) > chargedue_day(a->due) + COBR_RETRY_DAYS)) {
		snprintf(why, sizeof(why),
			 "date: must be after today and at most %d days after the charge's due "
			 "date, %s",
			 COBR_RETRY_DAYS, a->due);
		act_answer(a, BANKCOBR_INVALID, why, NULL);
		return;
	}
	if (!a->date[0] && chargedue_day(a->due) <= today) {
		snprintf(
		    why, sizeof(why),
		    "a recurring charge is cancelled before its due date, %s: the payer's bank "
		    "is paying it; nothing was done",
		    a->due);
		act_answer(a, BANKCOBR_CONFLICT, why, NULL);
		return;
	}
	snprintf(a->idrec, sizeof(a->idrec), "%s", rec->idrec);
	snprintf(a->conn, sizeof(a->conn), "%s", rec->connection);
	banks_get(a->b->r, a->b->cfg, a->conn, on_act_connection, a);
}

static void on_act_read(void *ud, int result, const char *json, const char *err)
{
	struct act *a = ud;
	yajl_val v = NULL;
	const char *rec, *status, *due;
	char why[256];

	if (result != 0) {
		act_answer(a, result, json, err);
		return;
	}
	json_parse_object(json, strlen(json), &v, why, sizeof(why));
	rec = YAJL_GET_STRING(json_get(v, "recurrence"));
	status = YAJL_GET_STRING(json_get(v, "status"));
	due = YAJL_GET_STRING(json_get(v, "dueDate"));
	if (!rec || !status || !due || strlen(due) != 10) {
		yajl_tree_free(v);
		act_answer(
		    a, BANKCOBR_CONFLICT,
		    "the charge is not a recurring charge of Pix Automatico: nothing was done",
		    NULL);
		return;
	}
	if (strcmp(status, "PENDING") != 0) {
		snprintf(why, sizeof(why), "the charge is %s: nothing was done", status);
		yajl_tree_free(v);
		act_answer(a, BANKCOBR_CONFLICT, why, NULL);
		return;
	}
	memcpy(a->due, due, 11);
	snprintf(why, sizeof(why), "%s", rec);
	yajl_tree_free(v);
	recurrences_read(a->b->r, a->b->cfg, a->env, a->account, why, on_act_rec, a);
}

static void act_start(const struct bankcharges *b, enum env env, const char *account,
		      const char *id, const char *date, store_fn cb, void *ud)
{
	struct act *a = mem_new(struct act);

	a->b = b;
	a->env = env;
	snprintf(a->account, sizeof(a->account), "%s", account);
	snprintf(a->id, sizeof(a->id), "%s", id);
	snprintf(a->date, sizeof(a->date), "%s", date ? date : "");
	a->cb = cb;
	a->ud = ud;
	charges_get(b->r, b->cfg, env, account, id, on_act_read, a);
}

void bankcobr_retry(const struct bankcharges *b, enum env env, const char *account, const char *id,
		    const char *date, store_fn cb, void *ud)
{
	act_start(b, env, account, id, date, cb, ud);
}

void bankcobr_cancel(const struct bankcharges *b, enum env env, const char *account, const char *id,
		     store_fn cb, void *ud)
{
	act_start(b, env, account, id, NULL, cb, ud);
}

/* ---- reconciliation ---- */

/* One connection's recurring charges asked about, one after the other. */
struct recon {
	const struct bankcharges *b;
	struct banks_queue *q;
	const struct bank_creds *creds;
	struct banks_ref conn;
	void (*step)(void *ud);
	bankcobr_recon_fn cb;
	void *ud;
	char *txids; /* space-separated, from cobrs_open */
	char *next;
	char txid[36];
	char *pix; /* the asked charge's Pix, {"pix": [...]}, NULL none */
	struct bankpix_batch batch;
	int asked, recovered;
};

static void recon_done(struct recon *r, const char *err)
{
	r->cb(r->ud, r->asked, r->recovered, err);
	free(r->txids);
	free(r->pix);
	bankpix_batch_deinit(&r->batch);
	free(r);
}

static void recon_next(struct recon *r);

static void on_recon_pix(void *ud, int result, const struct banks_received *got, const char *err)
{
	struct recon *r = ud;

	(void)got;
	if (result < 0) {
		recon_done(r, err ? err : "taking a recurring charge's Pix failed");
		return;
	}
	recon_next(r);
}

static void on_recon_heard(void *ud, int result, const char *json, const char *err)
{
	struct recon *r = ud;
	char why[256];

	(void)json;
	if (result < 0) {
		recon_done(r, err ? err : "writing what the bank said failed");
		return;
	}
	if (result == 0) {
		r->recovered++;
		log_info(
		    "bank connection %s: a recurring charge's change the bank's callback never "
		    "brought, taken by the reconciliation",
		    r->conn.id);
	}
	if (r->pix) {
		bankpix_batch_deinit(&r->batch);
		if (bankpix_parse(r->pix, strlen(r->pix), &r->batch, why, sizeof(why)) ==
		    BANKPIX_OK) {
			free(r->pix);
			r->pix = NULL;
			banks_receive(r->q, &r->conn, BANKS_RECONCILIATION, &r->batch, on_recon_pix,
				      r);
			return;
		}
		log_warn("bank connection %s: GET /cobr/%s: its pix: %s", r->conn.id, r->txid, why);
		free(r->pix);
		r->pix = NULL;
	}
	recon_next(r);
}

static void on_recon_cobr(void *ud, long status, const char *body, const char *err)
{
	struct recon *r = ud;
	struct cobr_heard h;
	char why[256];

	if (status != 200) {
		char msg[512];
		if (status == 0)
			snprintf(msg, sizeof(msg), "GET /cobr/%s: %s", r->txid,
				 err ? err : "no answer");
		else
			bankapi_problem(msg, sizeof(msg), status, body);
		recon_done(r, msg);
		return;
	}
	if (cobr_read_one(body, body ? strlen(body) : 0, r->txid, &h, &r->pix, why, sizeof(why)) !=
	    0) {
		log_warn("bank connection %s: GET /cobr/%s: the answer is no recurring charge: %s",
			 r->conn.id, r->txid, why);
		recon_next(r);
		return;
	}
	cobrs_heard(r->b->r, r->b->cfg, r->conn.env, r->conn.account, &h, COBRS_RECONCILIATION,
		    on_recon_heard, r);
}

static void recon_next(struct recon *r)
{
	char *path;
	size_t n;

	while (*r->next == ' ')
		r->next++;
	if (!*r->next) {
		recon_done(r, NULL);
		return;
	}
	n = strcspn(r->next, " ");
	snprintf(r->txid, sizeof(r->txid), "%.*s", (int)(n < 35 ? n : 35), r->next);
	r->next += n;
	r->asked++;
	if (r->step)
		r->step(r->ud);
	path = mem_printf("/cobr/%s", r->txid);
	bankapi_call(r->b->bankapi, r->creds, "GET", path, NULL, on_recon_cobr, r);
	free(path);
}

static void on_open(void *ud, int result, const char *json, const char *err)
{
	struct recon *r = ud;

	if (result != 0) {
		recon_done(r, err ? err : "reading the recurring charges not final failed");
		return;
	}
	r->txids = mem_strdup(json);
	r->next = r->txids;
	recon_next(r);
}

void bankcobr_reconcile(const struct bankcharges *b, struct banks_queue *q,
			const struct bank_creds *creds, const struct banks_ref *conn,
			void (*step)(void *ud), bankcobr_recon_fn cb, void *ud)
{
	struct recon *r = mem_new(struct recon);

	r->b = b;
	r->q = q;
	r->creds = creds;
	r->conn = *conn;
	r->step = step;
	r->cb = cb;
	r->ud = ud;
	cobrs_open(b->r, b->cfg, conn->account, conn->id, COBRS_OPEN_MAX, on_open, r);
}
