/* api_charges: the handlers of Pix charges.
 *
 * Creating, reading and listing charges, the PNG of a charge's BR Code (no
 * key: the id is the secret), the sandbox's simulated payment, expiry and
 * failure, and refunds; the transitions share one callback. A provider's
 * notifications that change charges are in api_ingest.c.
 */
#include "api_int.h"

#include "pixrelay/relay/bankcharges.h"
#include "pixrelay/store/charges.h"
#include "pixrelay/store/recurrences.h"
#include "pixrelay/pix/qrpng.h"
#include "pixrelay/pix/reqbody.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void on_charge_created(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;

	if (result < 0) {
		api_reply_failure(req, err);
	} else if (result == BANKCHARGES_REFUSED) {
		http_reply_error(req, 400, "%s", json);
	} else if (result == BANKCHARGES_UNAVAILABLE) {
		http_add_header(req, "Retry-After", "5");
		http_reply_error(req, 503, "%s", json);
	} else if (result == BANKCHARGES_NO_CHARGING) {
		http_reply_error(req, 409, "%s", json);
	} else if (result == CHARGES_CONFLICT) {
		http_reply_error(
		    req, 400,
		    "externalID: already used by charge %s with different data; send the "
		    "same request to get that charge again, or use a new externalID",
		    json);
	} else {
		http_reply_data(req, 200, json, strlen(json));
	}
}

/* POST /v1/charge/pix/create */
void api_handle_charge_create(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	struct charge_limits lim = {app->cfg->default_expiration, app->cfg->max_expiration,
				    chargedue_day_of_ms((int64_t)ids_now_ms())};
	struct charge_input in;
	yajl_val body = NULL;
	char err[512];

	if (json_parse_object(req->body, req->body_len, &body, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		return;
	}
	if (charge_parse_create(body, &lim, &in, err, sizeof(err)) < 0) {
		yajl_tree_free(body);
		http_reply_error(req, 400, "%s", err);
		return;
	}
	yajl_tree_free(body);
	/* at the account's bank when it has a connected one (docs/bank-api.md) */
	bankcharges_create(&app->bankcharges, c->key.env, c->account, &in, on_charge_created, req);
	charge_input_deinit(&in);
}

static void on_charge_read(void *ud, int result, const char *json, const char *err)
{
	api_reply_read(ud, result, CHARGES_NOT_FOUND, "charge", json, err);
}

/* GET /v1/charge/pix/{id} */
void api_handle_charge_get(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	if (!charges_valid_id(req->params[0])) {
		http_reply_error(req, 404, "charge not found: %.40s", req->params[0]);
		return;
	}
	charges_get(app->rds, app->cfg, c->key.env, c->account, req->params[0], on_charge_read,
		    req);
}

#define QR_DEFAULT_SCALE 8

static void on_qr_brcode(void *ud, int result, const char *brcode, const char *err)
{
	struct http_req *req = ud;
	unsigned char *png = NULL;
	size_t len = 0;
	long scale = (long)(intptr_t)req->state;

	req->state = NULL;
	if (result < 0) {
		api_reply_failure(req, err);
		return;
	}
	if (result == CHARGES_NOT_FOUND || result == RECURRENCES_NOT_FOUND) {
		http_reply_error(req, 404, "QR code not found: %s", req->params[0]);
		return;
	}
	if (!brcode || !*brcode) {
		/* a recurring charge of Pix Automático: the payer's bank pays it */
		http_reply_error(
		    req, 404,
		    "QR code not found: %s has no BR Code (a recurring charge is paid by "
		    "the payer's bank on its due date; its recurrence has the QR)",
		    req->params[0]);
		return;
	}
	if (qrpng_render(brcode, (int)scale, &png, &len) < 0) {
		http_reply_error(req, 500, "cannot render the QR code");
		return;
	}
	/* a charge's BR Code never changes: the image may be cached for good */
	http_reply_bytes(req, 200, "image/png", "public, max-age=31536000, immutable", png, len);
	free(png);
}

/* GET /v1/qrcode/{id}[?size=N]: the PNG of a charge's BR Code, without a key
 * (shops put this address in an <img>); the id is the secret. */
void api_handle_qrcode(struct http_req *req)
{
	struct app *app = app_of(req);
	char *size = http_query(req, "size");
	long scale = QR_DEFAULT_SCALE;
	char id[32];
	size_t n = strlen(req->params[0]);

	if (size) {
		char *end = NULL;
		scale = strtol(size, &end, 10);
		if (end == size || *end || scale < QRPNG_MIN_SCALE || scale > QRPNG_MAX_SCALE) {
			free(size);
			http_reply_error(
			    req, 400, "size: must be an integer from %d to %d (pixels per module)",
			    QRPNG_MIN_SCALE, QRPNG_MAX_SCALE);
			return;
		}
		free(size);
	}
	/* accept an optional .png suffix, as image URLs often carry one; a
	 * copy, the route's parameter stays as it came */
	if (n > 4 && strcmp(req->params[0] + n - 4, ".png") == 0)
		n -= 4;
	if (n < sizeof(id)) {
		memcpy(id, req->params[0], n);
		id[n] = '\0';
	}
	if (n < sizeof(id) && recurrences_valid_id(id)) {
		/* a recurrence's QR (Pix Automático), by its id alike */
		if (!rds_serving(app->rds)) {
			api_reply_unavailable(req);
			return;
		}
		req->state = (void *)(intptr_t)scale;
		recurrences_find_brcode(app->rds, app->cfg, id, on_qr_brcode, req);
		return;
	}
	if (n >= sizeof(id) || !charges_valid_id(id)) {
		http_reply_error(req, 404, "QR code not found: %.40s", req->params[0]);
		return;
	}
	if (!rds_serving(app->rds)) {
		api_reply_unavailable(req);
		return;
	}
	req->state = (void *)(intptr_t)scale;
	charges_find_brcode(app->rds, app->cfg, id, on_qr_brcode, req);
}

/* ---- charge lifecycle ---- */

/* A charge transition under way: what it does, and its event's id once made. */
struct transition {
	const char *verb;
	char event[EVENT_ID_MAX];
};

static void on_transitioned(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	struct app *app = app_of(req);
	struct transition *t = req->state;
	const char *verb = t->verb;
	char event[EVENT_ID_MAX];

	snprintf(event, sizeof(event), "%s", t->event);
	free(t);
	req->state = NULL;
	switch (result) {
	case 0:
		dispatch_kick(app->dispatch, req->params[0]);
		/* the event it made, for tools (pixrelay trigger) */
		if (*event)
			http_add_header(req, "X-Event-Id", event);
		http_reply_data(req, 200, json, strlen(json));
		return;
	case CHARGES_NOT_FOUND:
		http_reply_error(req, 404, "charge not found: %s", req->params[0]);
		return;
	case CHARGES_REFUSED:
		http_reply_error(req, 400, "charge is %s; only a %s charge can be %s", json,
				 strcmp(verb, "refunded") == 0 ? "PAID" : "PENDING", verb);
		return;
	case CHARGES_EXPIRED:
		dispatch_kick(app->dispatch, req->params[0]);
		if (*event)
			http_add_header(req, "X-Event-Id", event);
		http_reply_error(req, 400, "charge expired before the payment; it is EXPIRED now");
		return;
	case CHARGES_AMOUNT_MISMATCH:
		http_reply_error(
		    req, 400,
		    "amount: partial refunds are not supported; omit amount or send the "
		    "charge's amount (%s)",
		    json);
		return;
	case CHARGES_INSUFFICIENT:
		http_reply_error(req, 400, "insufficient balance for the refund (balance %s cents)",
				 json);
		return;
	default:
		api_reply_failure(req, err ? err : "charge transition failed");
	}
}

/* POST /v1/charge/pix/{id}/simulate-payment and .../simulate-failure:
 * sandbox only, they stand for what the payment provider reports in
 * production. */
static void simulate(struct http_req *req, enum charges_action action, const char *refusal,
		     const char *verb)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	struct transition *t;

	if (c->key.env != ENV_SANDBOX) {
		http_reply_error(req, 403, "%s", refusal);
		return;
	}
	if (!charges_valid_id(req->params[0])) {
		http_reply_error(req, 404, "charge not found: %.40s", req->params[0]);
		return;
	}
	t = mem_new(struct transition);
	t->verb = verb;
	req->state = t;
	charges_transition(app->rds, app->cfg, c->key.env, c->account, req->params[0], action, NULL,
			   t->event, on_transitioned, req);
}

void api_handle_simulate_payment(struct http_req *req)
{
	simulate(req, CHARGES_PAY,
		 "simulate-payment works with sandbox keys only; production charges are paid by "
		 "the payment provider's notification",
		 "paid");
}

/* Sandbox: the charge expires now, as it would at expiresAt (a charge
 * cannot expire sooner than 5 minutes after creation otherwise). */
void api_handle_simulate_expiry(struct http_req *req)
{
	simulate(req, CHARGES_EXPIRE,
		 "simulate-expiry works with sandbox keys only; production charges expire at "
		 "their expiresAt",
		 "expired");
}

void api_handle_simulate_failure(struct http_req *req)
{
	simulate(req, CHARGES_FAIL,
		 "simulate-failure works with sandbox keys only; in production only the payment "
		 "provider's notification changes a charge",
		 "failed");
}

/* POST /v1/charge/{id}/refund: a full refund of a paid charge. The body is
 * optional: {"amount": <the charge's amount>, "reason": "..."}. */
/* A refund's answer: asked of the bank (202), the bank's alone (409), else
 * as every transition. */
static void on_refunded(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;

	switch (result) {
	case BANKCHARGES_REQUESTED:
		free(req->state);
		req->state = NULL;
		http_reply_data(req, 202, json, strlen(json));
		return;
	case BANKCHARGES_AT_BANK_ONLY:
		free(req->state);
		req->state = NULL;
		http_reply_error(req, 409,
				 "the charge was paid through bank connection %s, which has no API "
				 "credentials: refund it at the bank; its report makes the charge "
				 "REFUNDED",
				 json);
		return;
	case BANKCHARGES_REFUSED:
		free(req->state);
		req->state = NULL;
		http_reply_error(req, 400, "%s", json);
		return;
	case BANKCHARGES_UNAVAILABLE:
		free(req->state);
		req->state = NULL;
		http_add_header(req, "Retry-After", "5");
		http_reply_error(req, 503, "%s", json);
		return;
	default:
		on_transitioned(ud, result, json, err);
	}
}

void api_handle_refund(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	struct transition *t;
	yajl_val body = NULL;
	char err[512], amount[32] = "";
	int64_t n = 0;

	if (req->body_len > 0 &&
	    json_parse_object(req->body, req->body_len, &body, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		return;
	}
	if (reqbody_refund(body, &n, err, sizeof(err)) < 0) {
		yajl_tree_free(body);
		http_reply_error(req, 400, "%s", err);
		return;
	}
	yajl_tree_free(body);
	if (n > 0)
		snprintf(amount, sizeof(amount), "%lld", (long long)n);
	if (!charges_valid_id(req->params[0])) {
		http_reply_error(req, 404, "charge not found: %.40s", req->params[0]);
		return;
	}
	t = mem_new(struct transition);
	t->verb = "refunded";
	req->state = t;
	/* at the bank when a bank's Pix paid it (docs/bank-api.md) */
	bankcharges_refund(&app->bankcharges, c->key.env, c->account, req->params[0], n, t->event,
			   on_refunded, req);
}

static const char *const charge_states[] = {"PENDING",	"PAID",	  "EXPIRED",
					    "REFUNDED", "FAILED", NULL};

static bool one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/* GET /v1/charges?status=&recurrence=&limit=&cursor= : the acting account's
 * charges (or its recurrence's), newest first. */
void api_handle_charges_list(struct http_req *req)
{
	static const char *const names[] = {"status", "limit", "cursor", "recurrence"};
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	struct charges_filter f;
	char *v[4];

	if (api_query_params(req, names, 4, v) < 0)
		return;
	memset(&f, 0, sizeof(f));
	f.status = v[0];
	f.recurrence = v[3];
	if (v[0] && !one_of(v[0], charge_states))
		http_reply_error(req, 400,
				 "status: must be PENDING, PAID, EXPIRED, REFUNDED or FAILED");
	else if (v[3] && !recurrences_valid_id(v[3]))
		http_reply_error(req, 400, "recurrence: must be a recurrence's id (rec_ + ULID)");
	else if (api_query_limit(req, v[1], API_LIST_DEFAULT, CHARGES_LIST_MAX, &f.limit) == 0 &&
		 api_query_cursor(req, v[2], "", &f.from) == 0)
		charges_list(app->rds, app->cfg, c->key.env, c->account, &f, api_on_json, req);
	api_query_free(v, 4);
}
