/* api_ingest: notifications from an upstream payment provider.
 *
 * POST /v1/webhooks/ingest/{accountId} needs no API key: the account's ingest
 * secret authenticates the provider. The handler finds the account, checks
 * the signature, parses the notification and hands it to the ingest queue;
 * the reply says what became of it. The charges it changes are served by
 * api_charges.c.
 */
#include "api_int.h"

#include "pixrelay/store/accounts.h"
#include "pixrelay/store/charges.h"
#include "pixrelay/store/ingest.h"
#include "pixrelay/pix/event.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/metrics.h"

#include <stdlib.h>
#include <string.h>

struct ingest_ctx {
	enum env env;
	char account[32];
	char event[EVENT_ID_MAX];
	struct ingest_note note;
};

static void ingest_done(struct http_req *req, int status, const char *event_id, int duplicate,
			const char *ignored, const char *charge_status)
{
	struct ingest_ctx *x = req->state;
	yajl_gen g = json_gen_new();

	/* event_id and charge_status may point into x: shape the reply first */
	json_open(g);
	json_str(g, "received");
	json_bool(g, 1);
	json_str(g, "duplicate");
	json_bool(g, duplicate);
	json_str(g, "event");
	json_str_or_null(g, event_id);
	json_str(g, "chargeStatus");
	json_str_or_null(g, charge_status);
	json_str(g, "ignored");
	json_str_or_null(g, ignored);
	json_close(g);
	ingest_note_deinit(&x->note);
	free(x);
	req->state = NULL;
	http_reply_gen(req, status, g);
	yajl_gen_free(g);
}

static void ingest_fail(struct http_req *req, const char *err)
{
	struct ingest_ctx *x = req->state;

	ingest_note_deinit(&x->note);
	free(x);
	req->state = NULL;
	api_reply_failure(req, err);
}

static const char *json_status_of(const char *charge_json, char *out, size_t size)
{
	const char *p = charge_json ? strstr(charge_json, "\"status\":\"") : NULL;

	if (!p)
		return NULL;
	p += 10;
	snprintf(out, size, "%.*s", (int)strcspn(p, "\""), p);
	return out;
}

static void on_ingested(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	struct app *app = app_of(req);
	struct ingest_ctx *x = req->state;
	char status[16], why[128];

	metrics_ingest(result == 0 || result == CHARGES_EXPIRED ? "accepted"
		       : result == CHARGES_RELAYED		? "relayed"
		       : result == CHARGES_DUPLICATE		? "duplicate"
		       : result < 0				? "failed"
								: "ignored");
	switch (result) {
	case 0:
		dispatch_kick(app->dispatch, x->account);
		ingest_done(req, 200, x->event[0] ? x->event : NULL, 0, NULL,
			    json_status_of(json, status, sizeof(status)));
		return;
	case CHARGES_RELAYED:
		dispatch_kick(app->dispatch, x->account);
		ingest_done(req, 200, json, 0, NULL, NULL);
		return;
	case CHARGES_DUPLICATE:
		ingest_done(req, 200, json, 1, NULL, NULL);
		return;
	case CHARGES_REFUSED:
		snprintf(why, sizeof(why), "the charge is %s", json);
		log_warn("ingest %s: %s ignored: %s", req->request_id, x->note.event, why);
		ingest_done(req, 200, NULL, 0, why, json);
		return;
	case CHARGES_EXPIRED:
		dispatch_kick(app->dispatch, x->account);
		ingest_done(req, 200, NULL, 0, "the charge had expired; it is EXPIRED now",
			    "EXPIRED");
		return;
	case CHARGES_AMOUNT_MISMATCH:
		/* charge_move compares the amount once the status allows the move:
		 * the charge is PAID for a refund, PENDING otherwise */
		snprintf(why, sizeof(why), "data.amount is %lld; the charge's amount is %s",
			 (long long)x->note.amount, json);
		log_warn("ingest %s: %s of charge %s ignored: %s", req->request_id, x->note.event,
			 x->note.charge_id, why);
		ingest_done(req, 200, NULL, 0, why,
			    ingest_action(x->note.event) == CHARGES_REFUND ? "PAID" : "PENDING");
		return;
	case CHARGES_STATUS_MISMATCH:
		snprintf(why, sizeof(why), "data.status is %s; %s needs %s", x->note.status,
			 x->note.event, ingest_event_status(x->note.event));
		log_warn("ingest %s: %s of charge %s ignored: %s", req->request_id, x->note.event,
			 x->note.charge_id, why);
		ingest_done(req, 200, NULL, 0, why, json);
		return;
	case CHARGES_INSUFFICIENT:
		log_error("ingest %s: refund of a charge larger than the balance (%s)",
			  req->request_id, json);
		ingest_done(req, 200, NULL, 0, "insufficient balance for the refund", "PAID");
		return;
	default:
		ingest_fail(req, err ? err : "ingest failed");
	}
}

static void ingest_with_secret(struct http_req *req, const char *secret)
{
	struct app *app = app_of(req);
	struct ingest_ctx *x = req->state;
	char err[256];

	if (ingest_verify(
		secret, http_header(req, "webhook-id"), http_header(req, "webhook-timestamp"),
		http_header(req, "webhook-signature"), http_header(req, "signature"), req->body,
		req->body_len, (long long)(ids_now_ms() / 1000), err, sizeof(err)) < 0) {
		free(x);
		req->state = NULL;
		http_reply_error(req, 401, "%s", err);
		return;
	}
	if (ingest_parse(req->body, req->body_len, &x->note, err, sizeof(err)) < 0) {
		free(x);
		req->state = NULL;
		http_reply_error(req, 400, "%s", err);
		return;
	}
	ingest_submit(app->ingest, x->env, x->account, &x->note, x->event, on_ingested, req);
}

static void on_ingest_account(void *ud, int result, const struct accounts_info *info,
			      const char *err)
{
	struct http_req *req = ud;
	struct ingest_ctx *x = req->state;

	if (result < 0) {
		free(x);
		req->state = NULL;
		api_reply_unavailable(req);
		return;
	}
	if (result != 0) {
		free(x);
		req->state = NULL;
		http_reply_error(req, 404, "account not found: %s", req->params[0]);
		return;
	}
	x->env = info->env;
	ingest_with_secret(req, info->ingest_secret);
}

/* POST /v1/webhooks/ingest/{accountId}: no API key; the account's ingest
 * secret authenticates the provider. */
void api_handle_ingest(struct http_req *req)
{
	struct app *app = app_of(req);
	struct ingest_ctx *x;

	if (!ids_is_ulid(req->params[0]) || ks_shard_of(req->params[0]) < 0) {
		http_reply_error(req, 404, "account not found: %.40s", req->params[0]);
		return;
	}
	if (!rds_serving(app->rds)) {
		api_reply_unavailable(req);
		return;
	}
	x = mem_new(struct ingest_ctx);
	snprintf(x->account, sizeof(x->account), "%s", req->params[0]);
	req->state = x;
	accounts_lookup(app->rds, app->cache, app->cfg, x->account, on_ingest_account, req);
}
