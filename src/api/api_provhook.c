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
#include "pixrelay/pix/provsig.h"
#include "pixrelay/pix/woovi.h"
#include "pixrelay/relay/dispatch.h"
#include "pixrelay/relay/provfetch.h"
#include "pixrelay/store/banks_receive.h"
#include "pixrelay/store/banks_view.h"

#include <stdlib.h>
#include <string.h>

#define MSG_NOT_WOOVI "not authenticated as Woovi for this connection"

struct provhook {
	struct banks_ref ref;
	struct woovi_notice notice;
	int simulated;
};

static void provhook_free(struct http_req *req)
{
	struct provhook *h = req->state;

	if (!h)
		return;
	woovi_notice_deinit(&h->notice);
	free(h);
	req->state = NULL;
}

static void refuse(struct http_req *req, const char *conn, const char *why)
{
	log_warn("provider webhook %s: connection %s: refused: %s", req->request_id, conn, why);
	metrics_bank_call("unauthenticated");
	provhook_free(req);
	http_reply_error(req, 401, "%s", MSG_NOT_WOOVI);
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
	char why[256];

	if (result == PROVFETCH_NOT_THEIRS) {
		refuse(req, h->ref.id, "the payment is not this connection's at Woovi");
		return;
	}
	if (result < 0) {
		log_warn("provider webhook %s: connection %s: reading it at Woovi: %s",
			 req->request_id, h->ref.id, err);
		metrics_bank_call("unavailable");
		provhook_free(req);
		http_reply_error(req, 503,
				 "Woovi could not be asked about this payment now: "
				 "send it again");
		return;
	}
	if (result == PROVFETCH_NO_API) {
		/* a sandbox connection without an AppID: the signed body */
		if (woovi_notice_batch(req->body, req->body_len, &own, why, sizeof(why)) < 0) {
			provhook_free(req);
			http_reply_error(req, 400, "%s", why);
			return;
		}
		take(req, &own);
		return;
	}
	own = *b;
	memset(b, 0, sizeof(*b));
	take(req, &own);
}

void api_provider_hook(struct http_req *req, const struct banks_view *v)
{
	struct app *app = app_of(req);
	struct provhook *h;
	const char *sig = http_header(req, "x-webhook-signature");
	char why[256];
	int own;

	if (!sig || !*sig) {
		refuse(req, v->ref.id, "no x-webhook-signature");
		return;
	}
	if (provsig_woovi_verify(v->prov_keys, req->body, req->body_len, sig, why, sizeof(why))) {
		own = 0;
	} else if (v->prov_own[0] && provsig_woovi_verify(v->prov_own, req->body, req->body_len,
							  sig, why, sizeof(why))) {
		/* signed by pixrelay's own sandbox key (trigger): its body */
		own = 1;
	} else {
		refuse(req, v->ref.id, why);
		return;
	}
	h = mem_new(struct provhook);
	h->ref = v->ref;
	req->state = h;
	if (woovi_notice_parse(req->body, req->body_len, &h->notice, why, sizeof(why)) < 0) {
		metrics_bank_call("malformed");
		provhook_free(req);
		http_reply_error(req, 400, "%s", why);
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
			provhook_free(req);
			http_reply_error(req, 400, "pix.transactionID: required");
			return;
		}
		provfetch_woovi(&app->bankcharges, v->ref.id, h->notice.pix_transaction, NULL,
				on_fetched, req);
		return;
	case WOOVI_REFUND_RECEIVED:
		if (!h->notice.charge_transaction[0]) {
			provhook_free(req);
			http_reply_error(req, 400, "charge.transactionID: required");
			return;
		}
		provfetch_woovi(&app->bankcharges, v->ref.id, NULL, h->notice.charge_transaction,
				on_fetched, req);
		return;
	default:
		/* moves no money here: taken, so that Woovi goes on */
		log_info("provider webhook %s: connection %s: %s taken, nothing to do",
			 req->request_id, v->ref.id, h->notice.event);
		metrics_bank_call("accepted");
		provhook_free(req);
		http_reply_data(req, 200, "{\"received\":0,\"accepted\":0}", 28);
	}
}
