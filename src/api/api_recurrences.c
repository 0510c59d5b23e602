/* api_recurrences: the handlers of Pix Automático's recurrences
 * (docs/recurrences.md): POST /v1/recurrences (made at the account's bank,
 * relay/bankrec.c), GET /v1/recurrences and /v1/recurrences/{id}, POST
 * /v1/recurrences/{id}/cancel; and the bank's /rec callback, which the bank
 * door's route hands here once api_banks.c has authenticated the bank
 * (api_bank_rec_receive). */
#include "api_int.h"

#include "pixrelay/core/json.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/metrics.h"
#include "pixrelay/relay/bankcobr.h"
#include "pixrelay/relay/bankrec.h"
#include "pixrelay/relay/dispatch.h"
#include "pixrelay/core/validate.h"
#include "pixrelay/pix/bankpix.h"
#include "pixrelay/store/banks_receive.h"
#include "pixrelay/store/charges.h"
#include "pixrelay/store/cobrs.h"
#include "pixrelay/store/recurrences.h"

#include <stdlib.h>
#include <string.h>

static void on_rec_answer(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	if (result < 0) {
		api_reply_failure(req, err);
	} else if (result == BANKREC_REFUSED) {
		http_reply_error(req, 400, "%s", json);
	} else if (result == BANKREC_UNAVAILABLE) {
		http_add_header(req, "Retry-After", "5");
		http_reply_error(req, 503, "%s", json);
	} else if (result == BANKREC_NO_BANK) {
		http_reply_error(req, 409, "%s", json);
	} else if (result == BANKREC_FINAL) {
		http_reply_error(req, 409, "the recurrence is final already: nothing was done");
	} else if (result == RECURRENCES_NOT_FOUND) {
		http_reply_error(req, 404, "recurrence not found: %.40s", req->params[0]);
	} else {
		if (c)
			dispatch_kick(app->dispatch, c->account);
		http_reply_data(req, 200, json, strlen(json));
	}
}

/* POST /v1/recurrences */
void api_handle_recurrence_create(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	struct recurrence_input in;
	yajl_val body = NULL;
	char err[512];

	if (json_parse_object(req->body, req->body_len, &body, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		return;
	}
	if (recurrence_parse_create(body, &in, err, sizeof(err)) < 0) {
		yajl_tree_free(body);
		http_reply_error(req, 400, "%s", err);
		return;
	}
	yajl_tree_free(body);
	bankrec_create(&app->bankcharges, c->key.env, c->account, &in, on_rec_answer, req);
	recurrence_input_deinit(&in);
}

static void on_read(void *ud, int result, const char *json, const char *err)
{
	api_reply_read(ud, result, RECURRENCES_NOT_FOUND, "recurrence", json, err);
}

/* GET /v1/recurrences/{id} */
void api_handle_recurrence_get(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	recurrences_get(app->rds, app->cfg, c->key.env, c->account, req->params[0], on_read, req);
}

/* POST /v1/recurrences/{id}/cancel */
void api_handle_recurrence_cancel(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	bankrec_cancel(&app->bankcharges, c->key.env, c->account, req->params[0], on_rec_answer,
		       req);
}

static void on_cobr_answer(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;

	if (result == BANKCOBR_NOT_APPROVED || result == BANKCOBR_NO_RECEBEDOR)
		http_reply_error(req, 409, "%s", json);
	else if (result == BANKCOBR_INVALID)
		http_reply_error(req, 400, "%s", json);
	else
		on_rec_answer(ud, result, json, err);
}

/* POST /v1/recurrences/{id}/charges */
void api_handle_recurrence_charge(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	struct cobr_input in;
	yajl_val body = NULL;
	char err[512];

	if (json_parse_object(req->body, req->body_len, &body, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		return;
	}
	if (cobr_parse_create(body, &in, err, sizeof(err)) < 0) {
		yajl_tree_free(body);
		http_reply_error(req, 400, "%s", err);
		return;
	}
	yajl_tree_free(body);
	bankcobr_create(&app->bankcharges, c->key.env, c->account, req->params[0], &in,
			on_cobr_answer, req);
}

static void on_cobr_act(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;

	if (result == BANKCOBR_CONFLICT)
		http_reply_error(req, 409, "%s", json);
	else if (result == CHARGES_NOT_FOUND)
		http_reply_error(req, 404, "charge not found: %.40s", req->params[0]);
	else
		on_cobr_answer(ud, result, json, err);
}

/* POST /v1/charge/pix/{id}/retry {"date"} */
void api_handle_charge_retry(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	yajl_val body = NULL, date;
	char err[256];

	if (json_parse_object(req->body, req->body_len, &body, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		return;
	}
	for (size_t i = 0; i < body->u.object.len; i++)
		if (strcmp(body->u.object.keys[i], "date") != 0) {
			http_reply_error(req, 400, "%.40s: unknown field; allowed: date",
					 body->u.object.keys[i]);
			goto done;
		}
	date = json_get(body, "date");
	if (!YAJL_IS_STRING(date) || strlen(date->u.string) != 10 ||
	    validate_date(date->u.string, NULL, NULL, NULL) < 0) {
		http_reply_error(req, 400, "date: %s",
				 date ? "must be a date written YYYY-MM-DD"
				      : "required (YYYY-MM-DD, the retry's day)");
		goto done;
	}
	bankcobr_retry(&app->bankcharges, c->key.env, c->account, req->params[0], date->u.string,
		       on_cobr_act, req);
done:
	yajl_tree_free(body);
}

/* POST /v1/charge/pix/{id}/cancel */
void api_handle_charge_cancel(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	bankcobr_cancel(&app->bankcharges, c->key.env, c->account, req->params[0], on_cobr_act,
			req);
}

/* GET /v1/recurrences[?status=&limit=&cursor=] */
void api_handle_recurrences_list(struct http_req *req)
{
	static const char *const names[] = {"status", "limit", "cursor"};
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	struct page_cursor from;
	int limit = 0;
	char *v[3];
	bool known = false;

	if (api_query_params(req, names, 3, v) < 0)
		return;
	for (int s = RECURRENCE_CREATED; v[0] && s <= RECURRENCE_CANCELLED; s++)
		known = known || strcmp(v[0], recurrence_status_name(s)) == 0;
	if (v[0] && !known)
		http_reply_error(
		    req, 400, "status: must be CREATED, APPROVED, REJECTED, EXPIRED or CANCELLED");
	else if (api_query_limit(req, v[1], API_LIST_DEFAULT, RECURRENCES_LIST_MAX, &limit) == 0 &&
		 api_query_cursor(req, v[2], "rec_", &from) == 0)
		recurrences_list(app->rds, app->cfg, c->key.env, c->account, v[0], limit, &from,
				 api_on_json, req);
	api_query_free(v, 3);
}

/* ---- the bank's /rec callback ---- */

/* One callback, item after item (each one write with its event), then
 * the answer: a 200 means every item is durable. */
struct heard {
	struct recurrence_batch batch;
	struct banks_ref conn;
	int simulated; /* simulate-pix: not counted as the bank's call */
	size_t next;
	yajl_gen g; /* the answer: {"recs": [{"idRec", "outcome"}...], "refused": [...]} */
};

static void heard_free(struct heard *h)
{
	recurrence_batch_deinit(&h->batch);
	if (h->g)
		yajl_gen_free(h->g);
	free(h);
}

static void heard_next(struct http_req *req);

static void on_item(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	struct heard *h = req->state;
	const struct recurrence_heard *it = &h->batch.items[h->next];

	(void)json;
	if (result < 0) {
		req->state = NULL;
		if (!h->simulated)
			metrics_bank_call("unavailable");
		heard_free(h);
		api_reply_failure(req, err ? err : "recurrence notification failed");
		return;
	}
	if (result == RECURRENCES_UNKNOWN)
		log_warn("bank webhook %s: connection %s: /rec: idRec %s is no recurrence of "
			 "account %s",
			 req->request_id, h->conn.id, it->idrec, h->conn.account);
	json_open(h->g);
	json_str(h->g, "idRec");
	json_str(h->g, it->idrec);
	json_str(h->g, "outcome");
	json_str(h->g, result == 0			 ? "taken"
		       : result == RECURRENCES_DUPLICATE ? "duplicate"
							 : "unknown");
	json_close(h->g);
	h->next++;
	heard_next(req);
}

static void heard_next(struct http_req *req)
{
	struct app *app = app_of(req);
	struct heard *h = req->state;
	const char *text;
	size_t len;

	if (h->next < h->batch.n) {
		recurrences_heard(app->rds, app->cfg, h->conn.env, h->conn.account,
				  &h->batch.items[h->next], RECURRENCES_WEBHOOK, on_item, req);
		return;
	}
	json_close_array(h->g);
	json_str(h->g, "refused");
	json_open_array(h->g);
	for (size_t i = 0; i < h->batch.nrefused; i++)
		json_str(h->g, h->batch.refused[i]);
	json_close_array(h->g);
	json_close(h->g);
	dispatch_kick(app->dispatch, h->conn.account);
	/* answered 200: the connection's last call, as a /pix call is */
	banks_note_call(app->banks, h->conn.id);
	if (!h->simulated)
		metrics_bank_call("accepted");
	text = json_buf(h->g, &len);
	/* the answer may end the request: nothing of it is touched after */
	req->state = NULL;
	http_reply_data(req, 200, text, len);
	heard_free(h);
}

void api_bank_rec_receive(struct http_req *req, const struct banks_ref *c, int simulated)
{
	struct heard *h = mem_new(struct heard);
	char err[256];
	int rc =
	    recurrence_parse_notification(req->body, req->body_len, &h->batch, err, sizeof(err));

	if (rc != RECURRENCE_PARSE_OK) {
		if (!simulated)
			metrics_bank_call("malformed");
		log_warn("bank webhook %s: connection %s: /rec: %s", req->request_id, c->id, err);
		heard_free(h);
		http_reply_error(req, rc == RECURRENCE_PARSE_TOO_MANY ? 413 : 400, "%s", err);
		return;
	}
	for (size_t i = 0; i < h->batch.nrefused; i++)
		log_warn("bank webhook %s: connection %s: /rec: refused %s", req->request_id, c->id,
			 h->batch.refused[i]);
	h->conn = *c;
	h->simulated = simulated;
	h->g = json_gen_new();
	json_open(h->g);
	json_str(h->g, "recs");
	json_open_array(h->g);
	req->state = h;
	heard_next(req);
}

/* ---- the bank's /cobr callback ---- */

/* One callback, item after item (each one write with its events), then its
 * Pix as a /pix callback's (bank_pix: the charge PAID, refunds), then the
 * answer: a 200 means every item is durable. */
struct cobr_call {
	struct cobr_batch batch;
	struct bankpix_batch pix;
	struct banks_ref conn;
	int simulated; /* simulate-pix: not counted as the bank's call */
	size_t next;
	yajl_gen g; /* {"cobsr": [{"txid", "outcome"}...], "refused": [...], "pix": ...} */
};

static void cobr_call_free(struct cobr_call *h)
{
	cobr_batch_deinit(&h->batch);
	bankpix_batch_deinit(&h->pix);
	if (h->g)
		yajl_gen_free(h->g);
	free(h);
}

static void cobr_next(struct http_req *req);

static void cobr_fail(struct http_req *req, const char *err)
{
	struct cobr_call *h = req->state;

	if (!h->simulated)
		metrics_bank_call("unavailable");
	cobr_call_free(h);
	req->state = NULL;
	api_reply_failure(req, err ? err : "recurring charge notification failed");
}

static void cobr_answer(struct http_req *req)
{
	struct app *app = app_of(req);
	struct cobr_call *h = req->state;
	const char *text;
	size_t len;

	json_close(h->g);
	dispatch_kick(app->dispatch, h->conn.account);
	/* answered 200: the connection's last call, as a /pix call is */
	banks_note_call(app->banks, h->conn.id);
	if (!h->simulated)
		metrics_bank_call("accepted");
	text = json_buf(h->g, &len);
	/* the answer may end the request: nothing of it is touched after */
	req->state = NULL;
	http_reply_data(req, 200, text, len);
	cobr_call_free(h);
}

static void on_cobr_pix(void *ud, int result, const struct banks_received *got, const char *err)
{
	struct http_req *req = ud;
	struct cobr_call *h = req->state;

	if (result < 0) {
		cobr_fail(req, err);
		return;
	}
	json_str(h->g, "pix");
	if (got->json)
		json_raw(h->g, got->json, strlen(got->json));
	else
		json_null(h->g);
	cobr_answer(req);
}

static void on_cobr_item(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	struct cobr_call *h = req->state;
	const struct cobr_heard *it = &h->batch.items[h->next];

	(void)json;
	if (result < 0) {
		cobr_fail(req, err);
		return;
	}
	if (result == COBRS_UNKNOWN)
		log_warn("bank webhook %s: connection %s: /cobr: txid %s of idRec %s is no "
			 "recurring charge of account %s",
			 req->request_id, h->conn.id, it->txid, it->idrec, h->conn.account);
	json_open(h->g);
	json_str(h->g, "txid");
	json_str(h->g, it->txid);
	json_str(h->g, "outcome");
	json_str(h->g, result == 0 ? "taken" : result == COBRS_DUPLICATE ? "duplicate" : "unknown");
	json_close(h->g);
	h->next++;
	cobr_next(req);
}

static void cobr_next(struct http_req *req)
{
	struct app *app = app_of(req);
	struct cobr_call *h = req->state;
	char err[256];

	if (h->next < h->batch.n) {
		cobrs_heard(app->rds, app->cfg, h->conn.env, h->conn.account,
			    &h->batch.items[h->next], COBRS_WEBHOOK, on_cobr_item, req);
		return;
	}
	json_close_array(h->g);
	json_str(h->g, "refused");
	json_open_array(h->g);
	for (size_t i = 0; i < h->batch.nrefused; i++)
		json_str(h->g, h->batch.refused[i]);
	json_close_array(h->g);
	if (!h->batch.pix) {
		cobr_answer(req);
		return;
	}
	/* the Pix that paid them, as a /pix callback's: matched by txid to
	 * their charges, each once per endToEndId, refunds as /pix's */
	if (bankpix_parse(h->batch.pix, strlen(h->batch.pix), &h->pix, err, sizeof(err)) !=
	    BANKPIX_OK) {
		log_warn("bank webhook %s: connection %s: /cobr: its pix: %s", req->request_id,
			 h->conn.id, err);
		json_str(h->g, "pix");
		json_null(h->g);
		cobr_answer(req);
		return;
	}
	banks_receive(app->banks, &h->conn, BANKS_WEBHOOK, &h->pix, on_cobr_pix, req);
}

void api_bank_cobr_receive(struct http_req *req, const struct banks_ref *c, int simulated)
{
	struct cobr_call *h = mem_new(struct cobr_call);
	char err[256];
	int rc = cobr_parse_notification(req->body, req->body_len, &h->batch, err, sizeof(err));

	if (rc != COBR_PARSE_OK) {
		if (!simulated)
			metrics_bank_call("malformed");
		log_warn("bank webhook %s: connection %s: /cobr: %s", req->request_id, c->id, err);
		cobr_call_free(h);
		http_reply_error(req, rc == COBR_PARSE_TOO_MANY ? 413 : 400, "%s", err);
		return;
	}
	for (size_t i = 0; i < h->batch.nrefused; i++)
		log_warn("bank webhook %s: connection %s: /cobr: refused %s", req->request_id,
			 c->id, h->batch.refused[i]);
	h->conn = *c;
	h->simulated = simulated;
	h->g = json_gen_new();
	json_open(h->g);
	json_str(h->g, "cobsr");
	json_open_array(h->g);
	req->state = h;
	cobr_next(req);
}
