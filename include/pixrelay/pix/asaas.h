/* asaas: what Asaas sends and answers, read as hostile input (no I/O): its
 * notifications, its payments as bank Pix (struct bankpix, so that a
 * provider's payment takes the bank's one path: matching, deduplication,
 * events, the day's report), its answers to the calls pixrelay makes, and
 * the bodies pixrelay sends it.
 *
 * Sources (no licensed OpenAPI of Asaas's was found to vendor; the unit
 * test writes the examples it uses, each citing its page):
 * - AS-WH: docs.asaas.com/docs/receba-eventos-do-asaas-no-seu-endpoint-de-
 *   webhook and /docs/webhook-para-cobrancas: the notification {"id":
 *   "evt_...", "event": "PAYMENT_RECEIVED", "dateCreated": "2024-06-12
 *   16:45:03", "payment": {"object": "payment", "id": "pay_...", ...}} and
 *   its events (PAYMENT_CONFIRMED: confirmed, the balance not yet
 *   available; PAYMENT_RECEIVED: received).
 * - AS-REF: docs.asaas.com/docs/refunds: after a refund the payment carries
 *   "refunds": [{"dateCreated": "2022-02-21 10:28:40", "status": "DONE",
 *   "value": 2.00, "description", "transactionReceiptUrl"}], status one of
 *   PENDING, CANCELLED, DONE. A refund has no id of its own there.
 * - AS-PIX: docs.asaas.com/docs/cobrancas-por-pix: the copy-and-paste code
 *   comes from GET /v3/payments/{id}/pixQrCode ({encodedImage, payload,
 *   expirationDate}); a Pix charge stays payable past its due date, so
 *   OVERDUE is still open.
 * - AS-GO: github GabrielHCataldo/go-asaas @ 38452b1 (MIT), asaas/charge.go
 *   (ChargeResponse: value a number in reais; paymentDate,
 *   clientPaymentDate, dateCreated "yyyy-MM-dd" dates, asaas/date.go;
 *   refunds; pixTransaction; POST /v3/payments/{id}/refund {value?,
 *   description?} answers the payment), asaas/enum.go (the payment
 *   statuses PENDING, RECEIVED, CONFIRMED, OVERDUE, REFUNDED,
 *   RECEIVED_IN_CASH, REFUND_REQUESTED, REFUND_IN_PROGRESS,
 *   CHARGEBACK_REQUESTED, CHARGEBACK_DISPUTE, AWAITING_CHARGEBACK_REVERSAL,
 *   DUNNING_REQUESTED, DUNNING_RECEIVED, AWAITING_RISK_ANALYSIS; refund
 *   statuses PENDING, CANCELLED, DONE), asaas/pageable.go ({hasMore,
 *   totalCount, limit, offset, data}, limit at most 100), asaas/pix.go (the
 *   Pix's endToEndIdentifier is on GET /v3/pix/transactions, not on the
 *   payment), asaas/customer.go.
 *
 * Money: Asaas writes a value as a JSON number in reais (10.5, 100,
 * 94.51). It is read from the number's text, never through a double: at
 * most two decimal places (more only when they are zeros: "10.500"), no
 * exponent, from 0.01 to ASAAS_VALUE_MAX cents (the API Pix's largest
 * valor; bankpix_reais_cents); "10.505", 1e2, -1 and 0 are refused.
 *
 * A payment becomes a bankpix when it is money received by Pix: billingType
 * PIX and a status of money received (RECEIVED, CONFIRMED: a Pix is
 * received when confirmed; REFUND_REQUESTED, REFUND_IN_PROGRESS, REFUNDED
 * and the chargeback statuses, which come after it). PENDING, OVERDUE
 * (still payable), AWAITING_RISK_ANALYSIS, RECEIVED_IN_CASH (marked paid by
 * the merchant: no Pix moved), DUNNING_* and any other billingType make no
 * item; a Pix payment whose status is none of Asaas's makes a refusal
 * (never silently dropped). Its
 * - id is "as:<payment id>" (1 to 45 of A-Z, a-z, 0-9, '_', '-');
 * - e2e the payment's endToEndIdentifier (or its pixTransaction's, when
 *   that is an object) when it is 32 letters or digits, else "" (Asaas's
 *   payment does not carry it: AS-GO);
 * - txid its externalReference when that is 1 to 35 letters or digits
 *   (pixrelay creates its payments with its charge id there), else "";
 * - cents its value; chave NULL (Asaas does not name the key paid);
 * - horario_ms its paymentDate, else clientPaymentDate, else
 *   confirmedDate: a date "yyyy-MM-dd" is read as 12:00 in Brasilia that
 *   day (15:00Z: Asaas gives no time of day); a date-time "yyyy-MM-dd
 *   HH:mm:ss" as Brasilia time (UTC-3, Brazil has no summer time since
 *   2019); an ISO 8601 date-time with a zone as it says;
 * - refunds: its `refunds` (at most BANKPIX_REFUNDS_MAX): DONE is
 *   DEVOLVIDO, PENDING EM_PROCESSAMENTO, CANCELLED NAO_REALIZADO; a
 *   refund's id is its own `id` or `endToEndIdentifier` when it has one
 *   (kept when 1 to 35 letters or digits, else the first 35 characters of
 *   its SHA-256, hex), else the first 35 characters of the SHA-256 of
 *   "<payment id>|<dateCreated>|<cents>|<n>" (n counts the refunds before
 *   it with the same date and value): the same refund listed again, in any
 *   order, keeps its id; rtr_id its endToEndIdentifier when 32 letters or
 *   digits; its time its dateCreated;
 * - json the API Pix form, so that a merchant reads one shape whatever the
 *   provider: {"endToEndId"?, "txid"?, "valor": "100.00", "horario",
 *   "devolucoes": [{"id", "rtrId"?, "valor", "horario": {"solicitacao"},
 *   "motivo"?, "status"}], "provider": {"name": "asaas", "paymentId",
 *   "externalReference"?, "status", "pixTransaction"?}}.
 */
#ifndef PIXRELAY_ASAAS_H
#define PIXRELAY_ASAAS_H

#include "pixrelay/pix/bankpix.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#define ASAAS_ID_PREFIX "as:"
#define ASAAS_PAYMENT_ID_MAX 45 /* BANKPIX_ID_MAX less "as:" */
#define ASAAS_ID_MAX 64		/* event, payment and customer ids kept */
#define ASAAS_STATUS_MAX 31
#define ASAAS_PAGE_MAX 1000		  /* payments of one page (Asaas sends 100 at most) */
#define ASAAS_VALUE_MAX BANKPIX_CENTS_MAX /* cents: R$ 9,999,999,999.99 */
#define ASAAS_BRCODE_MAX 512		  /* characters of pixQrCode's payload */

/* What the asaas_* readers say of a body as a whole (the negative numbers
 * of enum bankpix_result). */
enum asaas_result {
	ASAAS_OK = 0,
	ASAAS_NONE = 1,		/* a look-up found nothing: an empty list */
	ASAAS_MALFORMED = -1,	/* not the answer's shape: the field in err */
	ASAAS_TOO_MANY = -2,	/* more than ASAAS_PAGE_MAX payments */
	ASAAS_NOT_RECEIVED = 2, /* asaas_payment_pix: a payment that is no item */
};

enum asaas_event {
	ASAAS_EVENT_OTHER = 0,
	ASAAS_PAYMENT_RECEIVED,
	ASAAS_PAYMENT_CONFIRMED,
	ASAAS_PAYMENT_OVERDUE,
	ASAAS_PAYMENT_DELETED,
	ASAAS_PAYMENT_REFUNDED,
	ASAAS_PAYMENT_PARTIALLY_REFUNDED,
	ASAAS_PAYMENT_REFUND_IN_PROGRESS,
	ASAAS_PAYMENT_CHARGEBACK, /* PAYMENT_CHARGEBACK_*, PAYMENT_AWAITING_CHARGEBACK_REVERSAL */
};

/* A notification: its event, its id and the payment it is about. The ids
 * are "" when absent, not strings, longer than ASAAS_ID_MAX or not
 * printable ASCII without spaces (the payment id is used to look the
 * payment up at Asaas, never trusted as the payment itself). `event` is
 * the name as sent (owned). */
struct asaas_notice {
	enum asaas_event kind;
	char *event;
	char id[ASAAS_ID_MAX + 1];	/* evt_... */
	char payment[ASAAS_ID_MAX + 1]; /* payment.id: pay_... */
};

/* Read a notification body of `len` bytes. ASAAS_OK with *out filled (the
 * caller calls asaas_notice_deinit), or ASAAS_MALFORMED, with the reason
 * in err and *out untouched, only when the body is not a JSON object with
 * a string `event` (a 400): anything else about it is for the fetch of the
 * payment to settle. */
int asaas_notice_parse(const char *body, size_t len, struct asaas_notice *out, char *err,
		       size_t errlen);
void asaas_notice_deinit(struct asaas_notice *n);

/* A notification's `payment` as a batch: one item when it is money
 * received (as the header says), one refusal when it cannot be read (its
 * reason "payment.<field>: rule"), nothing otherwise. ASAAS_OK with *out
 * (bankpix_batch_deinit frees), or ASAAS_MALFORMED with err when the body
 * is not an object with a string `event` and an object `payment`. */
int asaas_notice_batch(const char *body, size_t len, struct bankpix_batch *out, char *err,
		       size_t errlen);

/* One payment object `pay` as a bankpix, as the header says. 0 with *out
 * filled (the caller frees its strings, as bankpix_batch_deinit does),
 * ASAAS_NOT_RECEIVED when the payment is no item (*out untouched), or -1
 * with "<path>.<field>: rule" in err (path: "payment", "data[3]", or ""
 * for the field alone) and *out untouched. */
int asaas_payment_pix(yajl_val pay, const char *path, struct bankpix *out, char *err,
		      size_t errlen);

/* A page of GET /v3/payments ({"object": "list", "hasMore", "totalCount",
 * "limit", "offset", "data": [...]}) as a batch (an asaas_result), and its
 * hasMore in *has_more. The payments that are items become items in the
 * page's order, those that cannot be read refusals (struct
 * bankpix_refusal, its id "as:<payment id>" when that is readable, else
 * the SHA-256 of the payment), the rest nothing. ASAAS_OK with *out and
 * *has_more filled (bankpix_batch_deinit frees), or ASAAS_MALFORMED /
 * ASAAS_TOO_MANY with the reason in err and nothing written. Time and
 * memory are linear in len. */
int asaas_payments_parse(const char *body, size_t len, struct bankpix_batch *out, bool *has_more,
			 char *err, size_t errlen);

/* GET /v3/payments/{id}'s answer (the payment object) as a batch of what
 * it gives: an item, a refusal (its reason "<field>: rule") or nothing.
 * ASAAS_OK with *out filled, or ASAAS_MALFORMED when the body is not a
 * JSON object. */
int asaas_payment_parse(const char *body, size_t len, struct bankpix_batch *out, char *err,
			size_t errlen);

/* ---- answers ---- */

/* POST /v3/customers's answer (the customer): its id (1 to ASAAS_ID_MAX of
 * A-Z, a-z, 0-9, '_', '-') into id. ASAAS_OK, or ASAAS_MALFORMED with "id:
 * rule" in err and id untouched. */
int asaas_customer_created(const char *body, size_t len, char id[ASAAS_ID_MAX + 1], char *err,
			   size_t errlen);

/* GET /v3/customers?externalReference='s answer (a list): the first
 * customer's id into id (ASAAS_OK), ASAAS_NONE when the list is empty, or
 * ASAAS_MALFORMED with "data[0].id: rule" in err; id written only on
 * ASAAS_OK. */
int asaas_customers_found(const char *body, size_t len, char id[ASAAS_ID_MAX + 1], char *err,
			  size_t errlen);

/* A payment as the calls that create or find one answer it. */
struct asaas_created {
	char id[ASAAS_ID_MAX + 1];
	char status[ASAAS_STATUS_MAX + 1]; /* PENDING, RECEIVED, ... (A-Z and _) */
	int64_t cents;
	char external_reference[ASAAS_ID_MAX + 1]; /* "" when absent or not an id */
};

/* POST /v3/payments's answer (the payment): its id, status, value (cents,
 * as the header says) and externalReference. ASAAS_OK with *out, or
 * ASAAS_MALFORMED with "value: rule" in err and *out untouched. */
int asaas_payment_created(const char *body, size_t len, struct asaas_created *out, char *err,
			  size_t errlen);

/* GET /v3/payments?externalReference='s answer (a list): its first
 * payment read as asaas_payment_created does (ASAAS_OK), ASAAS_NONE when
 * the list is empty, or ASAAS_MALFORMED with "data[0].field: rule" in err;
 * *out written only on ASAAS_OK. */
int asaas_payments_found(const char *body, size_t len, struct asaas_created *out, char *err,
			 size_t errlen);

/* GET /v3/payments/{id}/pixQrCode's answer: its payload (the copy-and-
 * paste code: 1 to ASAAS_BRCODE_MAX characters, no control characters) as
 * a new string in *payload (the caller frees). ASAAS_OK, or
 * ASAAS_MALFORMED with "payload: rule" in err and *payload untouched. */
int asaas_qrcode(const char *body, size_t len, char **payload, char *err, size_t errlen);

/* POST /v3/payments/{id}/refund's answer (the payment refunded): its
 * status (REFUNDED, REFUND_IN_PROGRESS, RECEIVED after a partial refund,
 * ...) into status. ASAAS_OK, or ASAAS_MALFORMED with "status: rule" in
 * err and status untouched. */
int asaas_refund_answer(const char *body, size_t len, char status[ASAAS_STATUS_MAX + 1], char *err,
			size_t errlen);

/* ---- bodies (new strings, the caller frees) ---- */

/* POST /v3/customers: {"name", "cpfCnpj" (when not NULL or ""),
 * "externalReference"}. */
char *asaas_customer_body(const char *name, const char *cpf_cnpj, const char *external_reference);
/* POST /v3/payments: {"customer", "billingType": "PIX", "value" (reais,
 * exact: bankpix_cents_text), "dueDate" ("yyyy-MM-dd"), "externalReference",
 * "description" (when not NULL or "")}. */
char *asaas_payment_body(const char *customer, int64_t cents, const char *due_date,
			 const char *external_reference, const char *description);
/* POST /v3/payments/{id}/refund: {"value" (when cents > 0; without it Asaas
 * refunds the whole payment), "description" (when not NULL or "")}. */
char *asaas_refund_body(int64_t cents, const char *description);

#endif
