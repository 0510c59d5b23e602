/* mercadopago: what Mercado Pago sends and answers, read as hostile input
 * (no I/O): its notifications (a pointer to a payment), its payments as
 * bank Pix (struct bankpix, so that a provider's payment takes the bank's
 * one path: matching, deduplication, events, the day's report), its
 * answers to creating a payment and a refund, and the bodies pixrelay
 * sends it. The x-signature of a notification is pix/provsig.h's.
 *
 * Sources (short names as in the tests' notes; the SDK is vendored in
 * tests/vendor/mercadopago/, MIT, see its NOTICE):
 * - MP-SDK: github mercadopago/sdk-nodejs @ 4339894: PaymentResponse
 *   (src/clients/payment/commonTypes.ts: id a number, status,
 *   status_detail, payment_method_id, transaction_amount a number in
 *   reais, date_approved, external_reference, refunds: RefundResponse[],
 *   point_of_interaction.transaction_data.qr_code), PaymentSearch
 *   (search/types.ts: {paging: {total, limit, offset}, results}; its
 *   results' id is typed string, the payment's a number: both are read),
 *   RefundResponse (paymentRefund/commonTypes.ts: id and payment_id
 *   numbers, amount, status "approved", "in_process", ..., date_created,
 *   reason), CreateRefundBody ({amount?}: no amount refunds what remains),
 *   PaymentCreateRequest (create/types.ts). None of these types carries
 *   the Pix's endToEndId: a Mercado Pago payment's e2e is "" (a refund's
 *   rtr_id too).
 * - MP-ST: mercadopago.com.br/developers/pt/docs/checkout-api/response-
 *   handling/query-results: the statuses (pending, approved, authorized,
 *   in_process, in_mediation, rejected, cancelled, refunded, charged_back)
 *   and status_details (accredited, partially_refunded,
 *   pending_waiting_transfer, expired, ...).
 * - MP-EX and MP-WH: a notification {"id": <number>, "live_mode", "type":
 *   "payment", "date_created", "user_id", "api_version": "v1", "action":
 *   "payment.created" | "payment.updated", "data": {"id": "<payment id>"}}
 *   POSTed to the URL with ?data.id=<id>&type=payment; the signature covers
 *   the query's data.id.
 * - MP-PIX: POST /v1/payments {transaction_amount, description,
 *   payment_method_id: "pix", payer: {email}, external_reference,
 *   date_of_expiration}; the copy-and-paste code in
 *   point_of_interaction.transaction_data.qr_code.
 *
 * Money: transaction_amount and a refund's amount are JSON numbers of
 * reais, read from the number's text (bankpix_reais_cents): at most two
 * decimal places, no exponent, 0.01 to 9,999,999,999.99.
 *
 * A payment becomes a bankpix when it is a Pix (payment_method_id "pix")
 * whose money was received (MP-ST): approved (accredited, or
 * partially_refunded after a partial refund), refunded, charged_back and
 * in_mediation (a dispute of money received). Another payment_method_id
 * (a card, a boleto) makes no item whatever its status. pending (the Pix not paid
 * yet: pending_waiting_transfer), in_process and authorized (nothing
 * credited), cancelled (expired or cancelled unpaid) and rejected make no
 * item; a status that is none of MP-ST's is a refusal (never silently
 * dropped). Its
 * - id is "mp:<payment id>" (the number's text: 1 to 20 digits);
 * - e2e "" (MP-SDK: no endToEndId);
 * - txid its external_reference when that is 1 to 35 letters or digits
 *   (pixrelay creates its payments with its charge id there), else "";
 * - cents its transaction_amount; chave NULL (Mercado Pago names no key);
 * - horario_ms its date_approved (ISO 8601 with an offset, milliseconds
 *   optional: "2026-12-02T10:00:00.000-04:00"; "-0400" is read too);
 * - refunds: its `refunds` (at most BANKPIX_REFUNDS_MAX): status approved
 *   is DEVOLVIDO, in_process and pending EM_PROCESSAMENTO, rejected and
 *   cancelled NAO_REALIZADO; a refund's id is its own id (a number, 1 to
 *   20 digits: letters and digits, kept as woovi and asaas keep such an
 *   id); cents its amount, its time its date_created, motivo its reason
 *   when that is at most 140 characters without control characters;
 * - json the API Pix form, so that a merchant reads one shape whatever the
 *   provider: {"txid"?, "valor": "100.00", "horario", "devolucoes": [{"id",
 *   "valor", "horario": {"solicitacao"}, "motivo"?, "status"}], "provider":
 *   {"name": "mercadopago", "paymentId", "externalReference"?, "status",
 *   "statusDetail" (null when absent)}}.
 */
#ifndef PIXRELAY_MERCADOPAGO_H
#define PIXRELAY_MERCADOPAGO_H

#include "pixrelay/pix/bankpix.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#define MP_ID_PREFIX "mp:"
#define MP_PAYMENT_ID_MAX 20 /* digits of a payment's or refund's id */
#define MP_STATUS_MAX 31     /* a status or status_detail: a-z, 0-9, _ */
#define MP_REFERENCE_MAX 64  /* external_reference kept by mp_payment_created */
#define MP_PAGE_MAX 1000     /* results of one search page (MP's largest limit) */
#define MP_QR_MAX 512	     /* characters of the copy-and-paste code */
#define MP_ACTION_MAX 31     /* a notification's action kept */

/* What the mp_* readers say of a body as a whole (the negative numbers of
 * enum bankpix_result). */
enum mp_result {
	MP_OK = 0,
	MP_MALFORMED = -1,   /* not the answer's shape: the field in err */
	MP_TOO_MANY = -2,    /* more than MP_PAGE_MAX results */
	MP_NOT_RECEIVED = 2, /* mp_payment_pix: a payment that is no item */
};

enum mp_notice_kind {
	MP_NOTICE_OTHER = 0, /* type other than "payment": taken, nothing to do */
	MP_NOTICE_PAYMENT,   /* type "payment": fetch the payment */
};

/* A notification: what it is about and which payment. `payment` is the
 * query's data.id when given (what the signature covers), else the body's
 * data.id (a string or a number), kept when it is 1 to MP_PAYMENT_ID_MAX
 * digits, else "": nothing to fetch (it is never trusted as the payment
 * itself). `action` ("payment.created", "payment.updated") and `id` (the
 * notification's own number, for the log) are "" when absent or not
 * readable. */
struct mp_notice {
	enum mp_notice_kind kind;
	bool live_mode;
	char payment[MP_PAYMENT_ID_MAX + 1];
	char id[MP_PAYMENT_ID_MAX + 1];
	char action[MP_ACTION_MAX + 1];
};

/* Read a notification body of `len` bytes and the query's data.id
 * (`query_data_id`, NULL or "" when the URL has none). MP_OK with *out
 * filled, or MP_MALFORMED with the reason in err and *out untouched only
 * when the body is not a JSON object (a 400): anything else about it is
 * for the fetch of the payment to settle. Nothing to free. */
int mp_notice_parse(const char *body, size_t len, const char *query_data_id, struct mp_notice *out,
		    char *err, size_t errlen);

/* One payment object `pay` (PaymentResponse, or a search's result) as a
 * bankpix, as the header says. 0 with *out filled (the caller frees its
 * strings, as bankpix_batch_deinit does), MP_NOT_RECEIVED when the payment
 * is no item (*out untouched), or -1 with "<path>.<field>: rule" in err
 * (path "results[3]", or "" for the field alone) and *out untouched. */
int mp_payment_pix(yajl_val pay, const char *path, struct bankpix *out, char *err, size_t errlen);

/* GET /v1/payments/{id}'s answer (the payment) as a batch of what it gives:
 * an item, a refusal (its reason "<field>: rule", its id "mp:<id>" when
 * the id reads, else the SHA-256 of the payment) or nothing. MP_OK with
 * *out filled (bankpix_batch_deinit frees), or MP_MALFORMED with err when
 * the body is not a JSON object. */
int mp_payment_parse(const char *body, size_t len, struct bankpix_batch *out, char *err,
		     size_t errlen);

/* A page of GET /v1/payments/search ({"paging": {"total", "limit",
 * "offset"}, "results": [...]}) as a batch: the items in the page's order,
 * the refusals as mp_payment_parse makes them ("results[i].field: rule").
 * *has_more is whether offset + the results' count < total (false for an
 * empty page: asking again could not move on). MP_OK with *out and
 * *has_more filled, or MP_MALFORMED ("paging.total: rule") / MP_TOO_MANY
 * (more than MP_PAGE_MAX results) with err and nothing written. Time and
 * memory are linear in len. */
int mp_search_parse(const char *body, size_t len, struct bankpix_batch *out, bool *has_more,
		    char *err, size_t errlen);

/* POST /v1/payments's answer: the payment made (or the same again: an
 * X-Idempotency-Key sent before). */
struct mp_created {
	char id[MP_PAYMENT_ID_MAX + 1];
	char status[MP_STATUS_MAX + 1]; /* pending, approved, rejected, ... */
	int64_t cents;
	char external_reference[MP_REFERENCE_MAX + 1]; /* "" when absent or unreadable */
	char *qr_code; /* the copy-and-paste code (owned); NULL when not pending and none */
};

/* Read POST /v1/payments's answer: id (1 to 20 digits), status (a-z, _),
 * transaction_amount (cents, as the header says), external_reference
 * (kept when 1 to MP_REFERENCE_MAX printable characters without spaces)
 * and point_of_interaction.transaction_data.qr_code (1 to MP_QR_MAX
 * characters, no control characters; required when the status is
 * pending: a Pix to pay). MP_OK with *out filled (mp_created_deinit
 * frees), or MP_MALFORMED with "transaction_amount: rule" in err and *out
 * untouched. */
int mp_payment_created(const char *body, size_t len, struct mp_created *out, char *err,
		       size_t errlen);
void mp_created_deinit(struct mp_created *c);

/* POST /v1/payments/{id}/refunds's answer (RefundResponse). */
struct mp_refund_created {
	char id[BANKPIX_REFUND_ID_MAX + 1]; /* its id's digits: the refund's id in the payment */
	enum bankpix_refund_status status;
	char status_name[MP_STATUS_MAX + 1]; /* as Mercado Pago wrote it */
	int64_t cents;
};

/* Read {"id", "status", "amount", ...}: id 1 to 20 digits, status one of
 * the refund statuses of the header, amount in reais. MP_OK with *out
 * filled, or MP_MALFORMED with "status: rule" in err and *out untouched. */
int mp_refund_created(const char *body, size_t len, struct mp_refund_created *out, char *err,
		      size_t errlen);

/* ---- bodies (new strings, the caller frees) ---- */

/* POST /v1/payments: {"transaction_amount" (reais, exact text),
 * "description" (when not NULL or ""), "payment_method_id": "pix",
 * "payer": {"email"}, "external_reference", "date_of_expiration" (when not
 * NULL: "yyyy-MM-ddTHH:mm:ss.000-03:00", mp_expiration)}. */
char *mp_payment_body(int64_t cents, const char *description, const char *payer_email,
		      const char *external_reference, const char *date_of_expiration);

/* POST /v1/payments/{id}/refunds: {"amount"} (reais, exact text), or {}
 * when cents is 0: Mercado Pago then refunds what remains. */
char *mp_refund_body(int64_t cents);

/* A moment (ms since the epoch) as date_of_expiration wants it: Brasilia
 * time (UTC-3, no summer time since 2019), "2026-12-02T07:00:00.000-03:00"
 * (the milliseconds kept); ms at least 3 hours. Returns out. */
char *mp_expiration(long long ms, char out[32]);

#endif
