/* api_provhook: a payment provider's notification on a connection's
 * webhook URL (docs/providers.md), the same URLs and doors as a bank's.
 *
 * Woovi: the body must carry a valid x-webhook-signature (RSA-SHA256 by one
 * of the connection's keys) or it is 401 and nothing is read further. As
 * Woovi signs every merchant's notifications with one key, what it points
 * at is then read with the connection's own AppID (provfetch): a payment
 * this account does not hold is 401 and nothing is stored; Woovi out of
 * reach is 503, so that Woovi sends it again. A sandbox connection without
 * an AppID, and a notification signed by pixrelay's own sandbox key
 * (`pixrelay trigger`: only pixrelay holds its private half, sealed), are
 * taken from the signed body itself. What was read goes through the bank store like
 * a bank's Pix (banks_receive): once per payment, its refunds once each.
 * Events that move no money (a charge expired: pixrelay expires its
 * charges itself) are answered 200 and logged, so that Woovi keeps the
 * queue going.
 */
#include "api_int.h"

#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/metrics.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/seal.h"
#include "pixrelay/pix/asaas.h"
#include "pixrelay/pix/mercadopago.h"
#include "pixrelay/store/banks_conn.h"
#include "pixrelay/pix/provsig.h"
#include "pixrelay/pix/woovi.h"
#include "pixrelay/relay/dispatch.h"
#include "pixrelay/relay/provfetch.h"
#include "pixrelay/store/banks_receive.h"
#include "pixrelay/store/banks_view.h"

#include <stdlib.h>
#include <string.h>

/* A provider's call, from its authentication to its answer. */
struct provhook {
	struct banks_ref ref;
	enum provider provider;
	struct woovi_notice notice;    /* Woovi's */
	struct asaas_notice as_notice; /* Asaas's */
	struct mp_notice mp_notice;    /* Mercado Pago's */
	struct woovi_dispute dispute;  /* Woovi's dispute, when dispute.status is set */
	char *data_id;		       /* Mercado Pago's: the query's data.id */
};

static void provhook_free(struct http_req *req)
{
	struct provhook *h = req->state;

	if (!h)
		return;
	woovi_notice_deinit(&h->notice);
	asaas_notice_deinit(&h->as_notice);
	free(h->data_id);
	free(h);
	req->state = NULL;
}

/* The provider's name as its merchants write it. */
static const char *title(enum provider p)
{
	return p == PROVIDER_ASAAS ? "Asaas" : p == PROVIDER_MERCADOPAGO ? "Mercado Pago" : "Woovi";
}

/* 401, nothing stored: "not authenticated as <provider> for this
 * connection", the reason logged. */
static void refuse(struct http_req *req, enum provider p, const char *conn, const char *why)
{
	log_warn("provider webhook %s: connection %s: refused: %s", req->request_id, conn, why);
	metrics_bank_call("unauthenticated");
	provhook_free(req);
	http_reply_error(req, 401, "not authenticated as %s for this connection", title(p));
}

/* The call's state once it is authenticated. */
static struct provhook *hook_new(struct http_req *req, const struct banks_view *v)
{
	struct provhook *h = mem_new(struct provhook);

	h->ref = v->ref;
	h->provider = v->provider;
	req->state = h;
	return h;
}

/* A body that is not the provider's notification: 400 with why. */
static void malformed(struct http_req *req, const char *why)
{
	metrics_bank_call("malformed");
	provhook_free(req);
	http_reply_error(req, 400, "%s", why);
}

/* An event that moves no money here: 200, so that the provider goes on
 * (Asaas stops its queue after 15 failures, Woovi retries 8 times). */
static void taken(struct http_req *req, const char *conn, const char *event)
{
	log_info("provider webhook %s: connection %s: %s taken, nothing to do", req->request_id,
		 conn, event);
	metrics_bank_call("accepted");
	provhook_free(req);
	http_reply_data(req, 200, "{\"received\":0,\"accepted\":0}", 28);
}

static void on_received(void *ud, int result, const struct banks_received *got, const char *err)
{
	struct http_req *req = ud;
	struct provhook *h = req->state;
	struct app *app = app_of(req);

	if (result < 0) {
		provhook_free(req);
		metrics_bank_call("unavailable");
		api_reply_failure(req, err ? err : "provider notification failed");
		return;
	}
	dispatch_kick(app->dispatch, h->ref.id);
	metrics_bank_call("accepted");
	provhook_free(req);
	http_reply_data(req, 200, got->json, strlen(got->json));
}

/* Hand the payments read to the bank store. */
static void take(struct http_req *req, struct bankpix_batch *b)
{
	struct provhook *h = req->state;

	for (size_t i = 0; i < b->nrefused; i++)
		log_warn("provider webhook %s: connection %s: refused %s", req->request_id,
			 h->ref.id, b->refused[i].err);
	banks_receive(app_of(req)->banks, &h->ref, BANKS_WEBHOOK, b, on_received, req);
}

static void on_fetched(void *ud, int result, struct bankpix_batch *b, const char *err)
{
	struct http_req *req = ud;
	struct provhook *h = req->state;
	struct bankpix_batch own = {0};
	const char *name = title(h->provider);
	char why[256];
	int rc;

	if (result == PROVFETCH_NOT_THEIRS) {
		refuse(req, h->provider, h->ref.id, "the payment is not this connection's there");
		return;
	}
	if (result < 0) {
		log_warn("provider webhook %s: connection %s: reading it at %s: %s",
			 req->request_id, h->ref.id, name, err);
		metrics_bank_call("unavailable");
		provhook_free(req);
		http_reply_error(
		    req, 503, "%s could not be asked about this payment now: send it again", name);
		return;
	}
	if (result == PROVFETCH_NO_API) {
		/* a sandbox connection without an API token, or a body signed
		 * by pixrelay's own key: the authenticated body itself */
		rc = h->provider == PROVIDER_ASAAS
			 ? asaas_notice_batch(req->body, req->body_len, &own, why, sizeof(why))
			 : woovi_notice_batch(req->body, req->body_len, &own, why, sizeof(why));
		if (rc < 0) {
			malformed(req, why);
			return;
		}
		take(req, &own);
		return;
	}
	own = *b;
	memset(b, 0, sizeof(*b));
	if (h->dispute.status[0]) {
		/* the Pix disputed, as Woovi holds it: the dispute on it */
		if (own.n != 1) {
			bankpix_batch_deinit(&own);
			refuse(req, h->provider, h->ref.id,
			       "the disputed Pix is not a payment here");
			return;
		}
		woovi_dispute_apply(&own.items[0], &h->dispute);
	}
	take(req, &own);
}

/* Woovi: its RSA signature, then the payment read back with the AppID. */
static void woovi_hook(struct http_req *req, const struct banks_view *v)
{
	struct app *app = app_of(req);
	struct provhook *h;
	const char *sig = http_header(req, "x-webhook-signature");
	char why[256];
	int own;

	if (!sig || !*sig) {
		refuse(req, v->provider, v->ref.id, "no x-webhook-signature");
		return;
	}
	snprintf(why, sizeof(why), "no key to check the signature with: %s", v->why);
	if (v->prov_keys &&
	    provsig_keys_verify(v->prov_keys, req->body, req->body_len, sig, why, sizeof(why))) {
		own = 0;
	} else if (v->prov_own && provsig_keys_verify(v->prov_own, req->body, req->body_len, sig,
						      why, sizeof(why))) {
		/* signed by pixrelay's own sandbox key (trigger): its body */
		own = 1;
	} else {
		refuse(req, v->provider, v->ref.id, why);
		return;
	}
	h = hook_new(req, v);
	if (woovi_notice_parse(req->body, req->body_len, &h->notice, why, sizeof(why)) < 0) {
		malformed(req, why);
		return;
	}
	if (own && (h->notice.kind == WOOVI_CHARGE_COMPLETED ||
		    h->notice.kind == WOOVI_TRANSACTION_RECEIVED ||
		    h->notice.kind == WOOVI_REFUND_RECEIVED)) {
		on_fetched(req, PROVFETCH_NO_API, NULL, NULL);
		return;
	}
	switch (h->notice.kind) {
	case WOOVI_CHARGE_COMPLETED:
	case WOOVI_TRANSACTION_RECEIVED:
		if (!h->notice.pix_transaction[0]) {
			malformed(req, "pix.transactionID: required");
			return;
		}
		provfetch_woovi(&app->bankcharges, v->ref.id, h->notice.pix_transaction, NULL,
				on_fetched, req);
		return;
	case WOOVI_REFUND_RECEIVED:
		if (!h->notice.charge_transaction[0]) {
			malformed(req, "charge.transactionID: required");
			return;
		}
		provfetch_woovi(&app->bankcharges, v->ref.id, NULL, h->notice.charge_transaction,
				on_fetched, req);
		return;
	case WOOVI_DISPUTE:
		/* the Pix disputed, read back by its endToEndId (the guard),
		 * then the dispute on it: a MED refund */
		if (woovi_dispute_parse(req->body, req->body_len, &h->dispute, why, sizeof(why)) <
		    0) {
			malformed(req, why);
			return;
		}
		provfetch_woovi(&app->bankcharges, v->ref.id, h->dispute.e2e, NULL, on_fetched,
				req);
		return;
	default:
		taken(req, v->ref.id, h->notice.event);
	}
}

/* Asaas: the token the merchant set on the webhook (asaas-access-token),
 * compared as its SHA-256 in constant time; then the payment read back
 * with the API key. */
static void asaas_hook(struct http_req *req, const struct banks_view *v)
{
	struct app *app = app_of(req);
	struct provhook *h;
	const char *tok = http_header(req, "asaas-access-token");
	char why[256];

	if (!tok || !*tok) {
		refuse(req, v->provider, v->ref.id, "no asaas-access-token");
		return;
	}
	if (!provsig_asaas_verify(v->token_sha, tok, why, sizeof(why))) {
		refuse(req, v->provider, v->ref.id, why);
		return;
	}
	h = hook_new(req, v);
	if (asaas_notice_parse(req->body, req->body_len, &h->as_notice, why, sizeof(why)) < 0) {
		malformed(req, why);
		return;
	}
	switch (h->as_notice.kind) {
	case ASAAS_PAYMENT_RECEIVED:
	case ASAAS_PAYMENT_CONFIRMED:
	case ASAAS_PAYMENT_REFUNDED:
	case ASAAS_PAYMENT_PARTIALLY_REFUNDED:
	case ASAAS_PAYMENT_REFUND_IN_PROGRESS:
		if (!h->as_notice.payment[0]) {
			malformed(req, "payment.id: required");
			return;
		}
		provfetch_asaas(&app->bankcharges, v->ref.id, h->as_notice.payment, on_fetched,
				req);
		return;
	default:
		taken(req, v->ref.id, h->as_notice.event);
	}
}

/* Mercado Pago: the notification is only a pointer; the payment is read
 * back with the access token whatever the signature says. */
static void mp_fetch(struct http_req *req)
{
	struct provhook *h = req->state;

	if (h->mp_notice.kind != MP_NOTICE_PAYMENT) {
		taken(req, h->ref.id, "a notification of another topic");
		return;
	}
	if (!h->mp_notice.payment[0]) {
		malformed(req, "data.id: required (the payment's id)");
		return;
	}
	provfetch_mp(&app_of(req)->bankcharges, h->ref.id, h->mp_notice.payment, on_fetched, req);
}

/* Its secret key opened, the x-signature checked (MP-SDK's manifest). */
static void on_mp_conn(void *ud, int result, const struct banks_conn *c, const char *err)
{
	struct http_req *req = ud;
	struct provhook *h = req->state;
	const struct seal_key *key = seal_keyfile_get(app_of(req)->credentials_key);
	unsigned char *secret = NULL;
	char why[256];
	size_t n;
	bool ok;

	if (result != 0 || !c->webhook_secret || !key ||
	    !(secret = banks_open_sealed(c->id, "webhook_secret", c->webhook_secret, key, &n))) {
		log_warn(
		    "provider webhook %s: connection %s: its secret key does not open here: %s",
		    req->request_id, h->ref.id, err ? err : "the credentials key");
		metrics_bank_call("unavailable");
		provhook_free(req);
		http_reply_error(req, 503, "the notification cannot be checked now: send it again");
		return;
	}
	ok =
	    provsig_mp_verify((const char *)secret, http_header(req, "x-signature"),
			      http_header(req, "x-request-id"), h->data_id, NULL, why, sizeof(why));
	mem_free_wiped((char *)secret);
	if (!ok) {
		refuse(req, h->provider, h->ref.id, why);
		return;
	}
	mp_fetch(req);
}

static void mp_hook(struct http_req *req, const struct banks_view *v)
{
	struct provhook *h = hook_new(req, v);
	char why[256];

	h->data_id = http_query(req, "data.id");
	if (mp_notice_parse(req->body, req->body_len, h->data_id, &h->mp_notice, why, sizeof(why)) <
	    0) {
		malformed(req, why);
		return;
	}
	if (!v->token_sha[0]) {
		/* no secret (QR-code integrations, whose notifications are
		 * unsigned): the fetch is the guard */
		mp_fetch(req);
		return;
	}
	if (!http_header(req, "x-signature")) {
		refuse(req, v->provider, v->ref.id, "no x-signature");
		return;
	}
	banks_get(app_of(req)->rds, app_of(req)->cfg, v->ref.id, on_mp_conn, req);
}

void api_provider_hook(struct http_req *req, const struct banks_view *v)
{
	if (v->provider == PROVIDER_ASAAS)
		asaas_hook(req, v);
	else if (v->provider == PROVIDER_MERCADOPAGO)
		mp_hook(req, v);
	else
		woovi_hook(req, v);
}
