/* provcharges: charges and refunds at a payment provider (provcharges.h). */
#include "pixrelay/relay/provcharges.h"

#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/metrics.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/pix/asaas.h"
#include "pixrelay/pix/bankday.h"
#include "pixrelay/pix/brcode.h"
#include "pixrelay/pix/mercadopago.h"
#include "pixrelay/pix/woovi.h"
#include "pixrelay/relay/bankapi.h"
#include "pixrelay/relay/bankcharges.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One charge or refund at a provider, from the first call to cb. */
struct job {
	struct bankapi *api;
	struct bank_creds creds;
	enum provider provider;
	char id[32];
	int64_t cents;
	provcharges_fn cb;
	void *ud;
	/* Asaas: the payer (its customer), the due date, the comment; the
	 * payment once made or found */
	char *name, *document, *comment;
	char due[11];
	char payment[ASAAS_ID_MAX + 1];
};

static struct job *job_new(struct bankapi *api, const struct bank_creds *creds, enum provider p,
			   const char *id, int64_t cents, provcharges_fn cb, void *ud)
{
	struct job *j = mem_new(struct job);

	j->api = api;
	bank_creds_copy(&j->creds, creds);
	j->provider = p;
	snprintf(j->id, sizeof(j->id), "%s", id);
	j->cents = cents;
	j->cb = cb;
	j->ud = ud;
	return j;
}

static void job_free(struct job *j)
{
	bank_creds_wipe(&j->creds);
	free(j->name);
	free(j->document);
	free(j->comment);
	free(j);
}

static void done(struct job *j, int result, const char *text)
{
	j->cb(j->ud, result, text);
	job_free(j);
}

/* An answer that is no answer (none, 5xx, 429) or refuses pixrelay's own
 * token (401, 403): 1 with the job done (UNAVAILABLE); 0 otherwise. */
static int unavailable(struct job *j, const char *what, long status, const char *body,
		       const char *err)
{
	char why[1024];
	const char *name = provider_name(j->provider);

	if (status != 0 && status < 500 && status != 429 && status != 401 && status != 403)
		return 0;
	if (status)
		bankapi_refusal(why, sizeof(why), what, status, body);
	log_warn("%s of charge %s at %s for %s: %s", what, j->id, name, j->creds.conn,
		 status ? why
		 : err	? err
			: "no answer");
	if (strcmp(what, "charge") == 0)
		metrics_bank_charge("unavailable");
	snprintf(why, sizeof(why),
		 status == 401 || status == 403
		     ? "%s refuses the connection's API token: nothing was done; once an operator "
		       "has fixed it (pixrelay bank show), ask again"
		     : "%s did not answer: ask again (the same request is sent)",
		 name);
	done(j, BANKCHARGES_UNAVAILABLE, why);
	return 1;
}

/* ---- create ---- */

/* The provider's code held against the charge: 0, or -1 with why. */
static int code_matches(const char *code, int64_t cents, char *why, size_t size)
{
	struct brcode_decoded d;

	if (brcode_decode(code, &d, why, size) < 0)
		return -1;
	if (d.amount_cents != cents) {
		snprintf(why, size, "its BR Code carries another amount");
		return -1;
	}
	return 0;
}

/* A create's answer that does not do: logged, UNAVAILABLE (nothing stored). */
static void mismatch(struct job *j, const char *why)
{
	char out[1100];

	snprintf(out, sizeof(out), "%s's answer does not match the charge: %s; nothing was stored",
		 provider_name(j->provider), why);
	log_error("charge %s at %s for %s: %s", j->id, provider_name(j->provider), j->creds.conn,
		  out);
	metrics_bank_charge("mismatch");
	done(j, BANKCHARGES_UNAVAILABLE, out);
}

/* A call's answer that is neither no answer nor 2xx: the charge refused
 * (a 4xx: the merchant's request, as Asaas judged it). */
static int refused(struct job *j, const char *what, long status, const char *body)
{
	char why[1024];

	if (status == 200 || status == 201)
		return 0;
	bankapi_refusal(why, sizeof(why), what, status, body);
	metrics_bank_charge("refused");
	done(j, BANKCHARGES_REFUSED, why);
	return 1;
}

/* The charge made at the provider: its code, to be stored. */
static void created(struct job *j, const char *code)
{
	metrics_bank_charge("created");
	j->cb(j->ud, 0, code);
	job_free(j);
}

/* Woovi's answer to POST /api/v1/charge: the charge it made (or had made
 * for this correlationID). */
static void on_woovi_charge(void *ud, long status, const char *body, const char *err)
{
	struct job *j = ud;
	struct woovi_created made = {0};
	char why[1024] = "";

	if (unavailable(j, "charge", status, body, err) || refused(j, "charge", status, body))
		return;
	if (woovi_charge_created(body, body ? strlen(body) : 0, &made, why, sizeof(why)) < 0) {
		mismatch(j, why);
		return;
	}
	if (strcmp(made.correlation, j->id) != 0 || made.cents != j->cents) {
		snprintf(why, sizeof(why), "another correlationID or value than %s, %lld", j->id,
			 (long long)j->cents);
		woovi_created_deinit(&made);
		mismatch(j, why);
		return;
	}
	if (code_matches(made.br_code, j->cents, why, sizeof(why)) < 0) {
		woovi_created_deinit(&made);
		mismatch(j, why);
		return;
	}
	created(j, made.br_code);
	woovi_created_deinit(&made);
}

/* ---- Mercado Pago: the payment, with X-Idempotency-Key ---- */

static void on_mp_payment(void *ud, long status, const char *body, const char *err)
{
	struct job *j = ud;
	struct mp_created made = {0};
	char why[1024] = "";

	if (unavailable(j, "charge", status, body, err) || refused(j, "charge", status, body))
		return;
	if (mp_payment_created(body, body ? strlen(body) : 0, &made, why, sizeof(why)) < 0) {
		mismatch(j, why);
		return;
	}
	if (strcmp(made.external_reference, j->id) != 0 || made.cents != j->cents ||
	    !made.qr_code) {
		snprintf(why, sizeof(why),
			 "another external_reference or transaction_amount than %s, %lld, or no "
			 "qr_code",
			 j->id, (long long)j->cents);
		mp_created_deinit(&made);
		mismatch(j, why);
		return;
	}
	if (code_matches(made.qr_code, j->cents, why, sizeof(why)) < 0) {
		mp_created_deinit(&made);
		mismatch(j, why);
		return;
	}
	created(j, made.qr_code);
	mp_created_deinit(&made);
}

static void mp_create(struct job *j, const struct charge_input *in)
{
	char exp[32], header[80], *body;

	if (!in->email) {
		done(j, BANKCHARGES_REFUSED,
		     "email: required for a charge made at Mercado Pago (its payer's e-mail)");
		return;
	}
	mp_expiration((long long)ids_now_ms() + (long long)in->expiration * 1000, exp);
	body = mp_payment_body(j->cents, in->comment ? in->comment : "Pix", in->email, j->id,
			       in->expiration > 0 ? exp : NULL);
	/* MP-PIX: mandatory; the same key again gets the same payment */
	snprintf(header, sizeof(header), "X-Idempotency-Key: %s", j->id);
	bankapi_call_with(j->api, &j->creds, "POST", "/v1/payments", body, header, on_mp_payment,
			  j);
	free(body);
}

/* ---- Asaas: the payment found or made, then its QR code ---- */

static void on_as_qr(void *ud, long status, const char *body, const char *err)
{
	struct job *j = ud;
	char *code = NULL, why[1024];

	if (unavailable(j, "charge", status, body, err) || refused(j, "charge", status, body))
		return;
	if (asaas_qrcode(body, body ? strlen(body) : 0, &code, why, sizeof(why)) < 0 ||
	    code_matches(code, j->cents, why, sizeof(why)) < 0) {
		free(code);
		mismatch(j, why);
		return;
	}
	created(j, code);
	free(code);
}

static void as_qr(struct job *j)
{
	char *path = mem_printf("/payments/%s/pixQrCode", j->payment);

	bankapi_call(j->api, &j->creds, "GET", path, NULL, on_as_qr, j);
	free(path);
}

/* The payment made or found is the charge asked for: its reference, its
 * value. 0 with j->payment, or -1 with the job done. */
static int as_payment(struct job *j, const struct asaas_created *p)
{
	char why[256];

	if (strcmp(p->external_reference, j->id) != 0 || p->cents != j->cents) {
		snprintf(why, sizeof(why), "another externalReference or value than %s, %lld",
			 j->id, (long long)j->cents);
		mismatch(j, why);
		return -1;
	}
	snprintf(j->payment, sizeof(j->payment), "%s", p->id);
	return 0;
}

static void on_as_payment(void *ud, long status, const char *body, const char *err)
{
	struct job *j = ud;
	struct asaas_created p;
	char why[1024];

	if (unavailable(j, "charge", status, body, err) || refused(j, "charge", status, body))
		return;
	if (asaas_payment_created(body, body ? strlen(body) : 0, &p, why, sizeof(why)) < 0) {
		mismatch(j, why);
		return;
	}
	if (as_payment(j, &p) == 0)
		as_qr(j);
}

static void as_create_payment(struct job *j, const char *customer)
{
	char *body = asaas_payment_body(customer, j->cents, j->due, j->id, j->comment);

	bankapi_call(j->api, &j->creds, "POST", "/payments", body, on_as_payment, j);
	free(body);
}

static void on_as_customer(void *ud, long status, const char *body, const char *err)
{
	struct job *j = ud;
	char id[ASAAS_ID_MAX + 1], why[1024];

	if (unavailable(j, "charge", status, body, err) || refused(j, "charge", status, body))
		return;
	if (asaas_customer_created(body, body ? strlen(body) : 0, id, why, sizeof(why)) < 0) {
		mismatch(j, why);
		return;
	}
	as_create_payment(j, id);
}

static void on_as_customers(void *ud, long status, const char *body, const char *err)
{
	struct job *j = ud;
	char id[ASAAS_ID_MAX + 1], why[1024], *req;
	int rc;

	if (unavailable(j, "charge", status, body, err) || refused(j, "charge", status, body))
		return;
	rc = asaas_customers_found(body, body ? strlen(body) : 0, id, why, sizeof(why));
	if (rc < 0) {
		mismatch(j, why);
		return;
	}
	if (rc == ASAAS_OK) {
		as_create_payment(j, id);
		return;
	}
	/* the payer as Asaas's customer, made once: found by its CPF or CNPJ */
	req = asaas_customer_body(j->name ? j->name : "Pagador Pix", j->document, j->document);
	bankapi_call(j->api, &j->creds, "POST", "/customers", req, on_as_customer, j);
	free(req);
}

/* Asaas has no idempotency key: a payment of this charge made by an
 * earlier try is found by its externalReference first. */
static void on_as_found(void *ud, long status, const char *body, const char *err)
{
	struct job *j = ud;
	struct asaas_created p;
	char why[1024], *path;
	int rc;

	if (unavailable(j, "charge", status, body, err) || refused(j, "charge", status, body))
		return;
	rc = asaas_payments_found(body, body ? strlen(body) : 0, &p, why, sizeof(why));
	if (rc < 0) {
		mismatch(j, why);
		return;
	}
	if (rc == ASAAS_OK) {
		if (as_payment(j, &p) == 0)
			as_qr(j);
		return;
	}
	path = mem_printf("/customers?cpfCnpj=%s", j->document);
	bankapi_call(j->api, &j->creds, "GET", path, NULL, on_as_customers, j);
	free(path);
}

static void asaas_create(struct job *j, const struct charge_input *in)
{
	char *path;

	if (!in->document) {
		done(j, BANKCHARGES_REFUSED,
		     "document: required for a charge made at Asaas (the payer's CPF or CNPJ: "
		     "Asaas makes each charge for a customer)");
		return;
	}
	j->name = mem_strdup_or_null(in->name);
	j->document = mem_strdup(in->document);
	j->comment = mem_strdup_or_null(in->comment);
	/* due the day the charge expires, in Brasilia */
	bankday_date(j->due, (long long)ids_now_ms() + (long long)in->expiration * 1000);
	path = mem_printf("/payments?externalReference=%s", j->id);
	bankapi_call(j->api, &j->creds, "GET", path, NULL, on_as_found, j);
	free(path);
}

void provcharges_create(struct bankapi *api, const struct bank_creds *creds, enum provider p,
			const char *id, const struct charge_input *in, provcharges_fn cb, void *ud)
{
	struct job *j = job_new(api, creds, p, id, in->amount, cb, ud);
	char *body;

	switch (p) {
	case PROVIDER_WOOVI:
		/* idempotent on the correlationID: a retry gets the same charge */
		body = woovi_charge_body(id, in->amount, in->expiration, in->comment);
		bankapi_call(api, &j->creds, "POST", "/api/v1/charge?return_existing=true", body,
			     on_woovi_charge, j);
		free(body);
		return;
	case PROVIDER_ASAAS:
		asaas_create(j, in);
		return;
	case PROVIDER_MERCADOPAGO:
		mp_create(j, in);
		return;
	default:
		done(j, BANKCHARGES_UNAVAILABLE, "no charges are made at this provider");
	}
}

/* ---- refund ---- */

static void on_refund(void *ud, long status, const char *body, const char *err)
{
	struct job *j = ud;
	char why[1024];

	if (unavailable(j, "refund", status, body, err))
		return;
	if (status != 200 && status != 201) {
		bankapi_refusal(why, sizeof(why), "refund", status, body);
		done(j, BANKCHARGES_REFUSED, why);
		return;
	}
	done(j, 0, NULL);
}

/* Asaas has no idempotency key: what it holds of the payment is read
 * first, and a refund already asked for (or made) is not asked again. */
static void on_as_refund_read(void *ud, long status, const char *body, const char *err)
{
	struct job *j = ud;
	struct bankpix_batch b = {0};
	int64_t asked = 0;
	char why[1024], *req, *path;

	if (unavailable(j, "refund", status, body, err))
		return;
	if (status != 200 || asaas_payment_parse(body, strlen(body), &b, why, sizeof(why)) < 0) {
		if (status == 200)
			snprintf(why, sizeof(why), "Asaas's payment %s: unreadable", j->payment);
		else
			bankapi_refusal(why, sizeof(why), "refund", status, body);
		done(j, BANKCHARGES_REFUSED, why);
		return;
	}
	for (size_t i = 0; i < b.n; i++)
		for (size_t k = 0; k < b.items[i].nrefunds; k++)
			if (b.items[i].refunds[k].status != BANKPIX_NAO_REALIZADO)
				asked += b.items[i].refunds[k].cents;
	bankpix_batch_deinit(&b);
	if (asked >= j->cents) {
		done(j, 0, NULL);
		return;
	}
	req = asaas_refund_body(j->cents, NULL);
	path = mem_printf("/payments/%s/refund", j->payment);
	bankapi_call(j->api, &j->creds, "POST", path, req, on_refund, j);
	free(path);
	free(req);
}

void provcharges_refund(struct bankapi *api, const struct bank_creds *creds, enum provider p,
			const char *id, const char *payment, int64_t cents, provcharges_fn cb,
			void *ud)
{
	struct job *j = job_new(api, creds, p, id, cents, cb, ud);
	char rid[80], *body, *path;

	switch (p) {
	case PROVIDER_MERCADOPAGO:
		if (!payment || !*payment) {
			done(j, BANKCHARGES_UNAVAILABLE,
			     "the charge's Mercado Pago payment is not known: refund it there");
			return;
		}
		/* its idempotency key: the refund's own id, D + the charge's */
		snprintf(rid, sizeof(rid), "X-Idempotency-Key: D%s", id);
		body = mp_refund_body(cents);
		path = mem_printf("/v1/payments/%s/refunds", payment);
		bankapi_call_with(api, &j->creds, "POST", path, body, rid, on_refund, j);
		free(path);
		free(body);
		return;
	case PROVIDER_ASAAS:
		if (!payment || !*payment) {
			done(j, BANKCHARGES_UNAVAILABLE,
			     "the charge's Asaas payment is not known: refund it in Asaas");
			return;
		}
		snprintf(j->payment, sizeof(j->payment), "%s", payment);
		path = mem_printf("/payments/%s", payment);
		bankapi_call(api, &j->creds, "GET", path, NULL, on_as_refund_read, j);
		free(path);
		return;
	case PROVIDER_WOOVI:
		/* idempotent on the refund's own correlationID, D + the charge's id */
		snprintf(rid, sizeof(rid), "D%s", id);
		body = woovi_refund_body(rid, cents);
		path = mem_printf("/api/v1/charge/%s/refund", id);
		bankapi_call(api, &j->creds, "POST", path, body, on_refund, j);
		free(path);
		free(body);
		return;
	default:
		done(j, BANKCHARGES_UNAVAILABLE, "no refunds are asked of this provider");
	}
}
