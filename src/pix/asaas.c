/* asaas: Asaas's JSON read as hostile input, no I/O: a notification's
 * event and ids, payments as struct bankpix with the refunds they carry,
 * values in reais read from the number's text, the answers to the calls
 * pixrelay makes and the bodies it sends. What is done with a payment is
 * the bank store's (src/store/banks_receive.c), as for a bank's Pix; the
 * token of a notification is pix/provsig.c's.
 */
#include "pixrelay/pix/asaas.h"

#include "pixrelay/pix/provjson.h"

#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values one payment may bring at most (its own ~50, discount, fine,
 * interest, split, refunds...). The tree of a page is capped at this times
 * ASAAS_PAGE_MAX. */
#define VALUES_PER_PAYMENT 1024
#define PAGE_VALUES (ASAAS_PAGE_MAX * VALUES_PER_PAYMENT + 16)
#define REFERENCE_MAX 140 /* characters of an externalReference the merchant's event shows */

/* Whether s[0..n) are digits. */
static bool digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* An Asaas moment as milliseconds: "yyyy-MM-dd" (12:00 in Brasilia),
 * "yyyy-MM-dd HH:mm:ss" (Brasilia time) or an ISO 8601 date-time with a
 * zone. 0, or -1. */
static int moment_ms(const char *s, long long *ms)
{
	size_t n = strlen(s);
	char iso[32];

	if (n == 10 && digits(s, 4) && s[4] == '-' && digits(s + 5, 2) && s[7] == '-' &&
	    digits(s + 8, 2)) {
		snprintf(iso, sizeof(iso), "%.10sT12:00:00-03:00", s);
	} else if (n == 19 && s[10] == ' ' && digits(s, 4) && s[4] == '-' && digits(s + 5, 2) &&
		   s[7] == '-' && digits(s + 8, 2) && digits(s + 11, 2) && s[13] == ':' &&
		   digits(s + 14, 2) && s[16] == ':' && digits(s + 17, 2)) {
		snprintf(iso, sizeof(iso), "%.10sT%.8s-03:00", s, s + 11);
	} else {
		return bankpix_time_ms(s, ms);
	}
	return timefmt_parse(iso, ms) < 0 ? -1 : 0;
}

#define MOMENT_RULE                                                                                \
	"must be a date \"2024-06-12\", \"2024-06-12 16:45:03\" or an ISO 8601 date-time"

/* ---- a payment ---- */

/* What Asaas's payment status says of the money (the header). */
static enum provjson_kind status_kind(const char *s)
{
	static const char *const items[] = {
	    "RECEIVED",		  "CONFIRMED",
	    "REFUND_REQUESTED",	  "REFUND_IN_PROGRESS",
	    "REFUNDED",		  "CHARGEBACK_REQUESTED",
	    "CHARGEBACK_DISPUTE", "AWAITING_CHARGEBACK_REVERSAL",
	};
	static const char *const others[] = {
	    "PENDING",		"OVERDUE",	     "AWAITING_RISK_ANALYSIS",
	    "RECEIVED_IN_CASH", "DUNNING_REQUESTED", "DUNNING_RECEIVED",
	};

	return provjson_status_kind(s, items, sizeof(items) / sizeof(*items), others,
				    sizeof(others) / sizeof(*others));
}

/* The refunds of the payment `pay_id` (rs[0..n), already checked to be
 * objects: an array) into *out (n of them, json owned), or -1 with err. */
static int refunds_read(yajl_val *rs, size_t n, const char *pay_id, const char *path,
			struct bankpix_refund **out, char *err, size_t errlen)
{
	struct bankpix_refund *list = n ? mem_calloc(n, sizeof(*list)) : NULL;
	const char **dates = n ? mem_calloc(n, sizeof(*dates)) : NULL;
	char rpath[64], when[25];
	int rc = -1;

	for (size_t j = 0; j < n; j++) {
		struct bankpix_refund *r = &list[j];
		yajl_val v = rs[j];
		const char *status, *date, *own = NULL, *e2e = NULL, *motivo = NULL;
		long long ms;

		provjson_path(rpath, sizeof(rpath), path, "refunds[%zu]", j);
		if (!YAJL_IS_OBJECT(v)) {
			provjson_fail(err, errlen, rpath, "", "must be an object");
			goto done;
		}
		if (provjson_status_at(v, rpath, ASAAS_STATUS_MAX, &status, err, errlen) < 0)
			goto done;
		if (strcmp(status, "DONE") == 0)
			r->status = BANKPIX_DEVOLVIDO;
		else if (strcmp(status, "PENDING") == 0)
			r->status = BANKPIX_EM_PROCESSAMENTO;
		else if (strcmp(status, "CANCELLED") == 0)
			r->status = BANKPIX_NAO_REALIZADO;
		else {
			provjson_fail(err, errlen, rpath, "status",
				      "must be PENDING, DONE or CANCELLED");
			goto done;
		}
		if (provjson_reais_at(v, "value", rpath, &r->cents, err, errlen) < 0 ||
		    provjson_string_at(v, "dateCreated", rpath, true, 0, &date, err, errlen) < 0 ||
		    provjson_string_at(v, "id", rpath, false, 0, &own, err, errlen) < 0 ||
		    provjson_string_at(v, "endToEndIdentifier", rpath, false, 0, &e2e, err,
				       errlen) < 0 ||
		    provjson_string_at(v, "description", rpath, false, BANKPIX_TEXT_MAX, &motivo,
				       err, errlen) < 0)
			goto done;
		if (moment_ms(date, &ms) < 0) {
			provjson_fail(err, errlen, rpath, "dateCreated", MOMENT_RULE);
			goto done;
		}
		dates[j] = date;
		if (provjson_refund_id(own, r->id) < 0 && provjson_refund_id(e2e, r->id) < 0) {
			/* no id of its own (AS-REF): its payment, date, value and
			 * how many alike came before it */
			char *key;
			size_t same = 0;

			for (size_t k = 0; k < j; k++)
				same += list[k].cents == r->cents && strcmp(dates[k], date) == 0;
			key = mem_printf("%s|%s|%lld|%zu", pay_id, date, (long long)r->cents, same);
			provjson_hash_id(key, strlen(key), r->id);
			free(key);
		}
		if (provjson_is_e2e(e2e))
			snprintf(r->rtr_id, sizeof(r->rtr_id), "%s", e2e);
		timefmt_rfc3339(when, (uint64_t)ms);
		r->json = provjson_refund_json(r, when, motivo);
	}
	*out = list;
	list = NULL;
	rc = 0;
done:
	if (list)
		provjson_refunds_free(list, n);
	free(dates);
	return rc;
}

/* The e2e a payment may carry: its endToEndIdentifier, or its
 * pixTransaction's when that is an object; NULL when neither is a string. */
static const char *payment_e2e(yajl_val pay)
{
	yajl_val v = json_get(pay, "endToEndIdentifier"), tx;

	if (!YAJL_IS_STRING(v)) {
		tx = json_get(pay, "pixTransaction");
		v = YAJL_IS_OBJECT(tx) ? json_get(tx, "endToEndIdentifier") : NULL;
	}
	return YAJL_IS_STRING(v) ? v->u.string : NULL;
}

int asaas_payment_pix(yajl_val pay, const char *path, struct bankpix *out, char *err, size_t errlen)
{
	static const char *const dates[] = {"paymentDate", "clientPaymentDate", "confirmedDate"};
	const char *id, *status, *billing, *date = NULL, *ref, *pixtx = NULL;
	struct bankpix_refund *refunds = NULL;
	size_t nrefunds = 0;
	yajl_val rs, ptx;
	int64_t cents;
	long long ms = 0;
	char when[25];
	yajl_gen g;

	if (!YAJL_IS_OBJECT(pay))
		return provjson_fail(err, errlen, path, "", "must be an object");
	if (provjson_id_at(pay, "id", path, ASAAS_PAYMENT_ID_MAX, &id, err, errlen) < 0 ||
	    provjson_string_at(pay, "billingType", path, true, 0, &billing, err, errlen) < 0)
		return -1;
	/* a boleto's or a card's statuses are none of a Pix's business */
	if (strcmp(billing, "PIX") != 0)
		return ASAAS_NOT_RECEIVED;
	if (provjson_status_at(pay, path, ASAAS_STATUS_MAX, &status, err, errlen) < 0)
		return -1;
	switch (status_kind(status)) {
	case PROVJSON_NOT_ITEM:
		return ASAAS_NOT_RECEIVED;
	case PROVJSON_UNKNOWN:
		return provjson_fail(err, errlen, path, "status",
				     "is not one of Asaas's payment statuses");
	case PROVJSON_ITEM:
		break;
	}
	if (provjson_reais_at(pay, "value", path, &cents, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(dates) / sizeof(*dates) && !date; i++)
		if (provjson_time_at(pay, dates[i], path, false, moment_ms, MOMENT_RULE, &date, &ms,
				     err, errlen) < 0)
			return -1;
	if (!date)
		return provjson_fail(err, errlen, path, "paymentDate",
				     "is required (or clientPaymentDate, confirmedDate) for a "
				     "payment received");
	ref = provjson_text(json_get(pay, "externalReference"), REFERENCE_MAX);
	ptx = json_get(pay, "pixTransaction");
	if (YAJL_IS_STRING(ptx) && provjson_is_token(ptx->u.string, ASAAS_ID_MAX))
		pixtx = ptx->u.string;
	if (provjson_refunds_at(pay, path, &rs, err, errlen) < 0)
		return -1;
	if (rs) {
		nrefunds = rs->u.array.len;
		if (refunds_read(rs->u.array.values, nrefunds, id, path, &refunds, err, errlen) < 0)
			return -1;
	}

	timefmt_rfc3339(when, (uint64_t)ms);
	/* a chargeback: the Pix's dispute, a MED refund of the whole, in
	 * process while requested or disputed, not made once its reversal is
	 * awaited (AS-WH's chargeback events) */
	if (strncmp(status, "CHARGEBACK_", 11) == 0 ||
	    strcmp(status, "AWAITING_CHARGEBACK_REVERSAL") == 0)
		provjson_med_add(
		    &refunds, &nrefunds, id, cents,
		    status[0] == 'A' ? BANKPIX_NAO_REALIZADO : BANKPIX_EM_PROCESSAMENTO, when);
	g = provjson_pix_begin(out, ASAAS_ID_PREFIX, id, payment_e2e(pay), ref, cents, ms);
	json_str(g, "horario");
	json_str(g, when);
	provjson_pix_provider(g, refunds, nrefunds, "asaas");
	provjson_pix_payment(g, id, ref, status);
	if (pixtx) {
		json_str(g, "pixTransaction");
		json_str(g, pixtx);
	}
	provjson_pix_end(g, out, refunds, nrefunds);
	return 0;
}

/* ---- a page ---- */

/* A refused payment: what the merchant gets of it (bankpix.h). */
static void refusal_make(yajl_val pay, size_t index, const char *err, struct bankpix_refusal *r)
{
	yajl_val v = json_get(pay, "id");
	const char *e2e = payment_e2e(pay);

	provjson_refusal_make(pay, index, err, ASAAS_ID_PREFIX,
			      YAJL_IS_STRING(v) && provjson_is_id(v->u.string, ASAAS_PAYMENT_ID_MAX)
				  ? v->u.string
				  : NULL,
			      r);
	r->cents = provjson_reais_peek(json_get(pay, "value"));
	r->horario_ms = provjson_time_peek(json_get(pay, "paymentDate"), moment_ms);
	if (provjson_is_e2e(e2e))
		snprintf(r->e2e, sizeof(r->e2e), "%s", e2e);
}

/* The payments ps[0..n) (a page's data, or the one payment of a
 * notification, whose path is `one`) into *out. */
static void page_read(yajl_val *ps, size_t n, const char *one, struct bankpix_batch *out)
{
	provjson_items_read(ps, n, "data", one, asaas_payment_pix, refusal_make, out);
}

int asaas_payments_parse(const char *body, size_t len, struct bankpix_batch *out, bool *has_more,
			 char *err, size_t errlen)
{
	yajl_val root = NULL, list;
	bool more;
	int rc;

	rc = provjson_page_parse(body, len, PAGE_VALUES, "data", ASAAS_PAGE_MAX, &root, &list, err,
				 errlen);
	if (rc != PROVJSON_OK) {
		rc = rc == PROVJSON_TOO_MANY ? ASAAS_TOO_MANY : ASAAS_MALFORMED;
		goto done;
	}
	rc = ASAAS_MALFORMED;
	if (provjson_bool_at(root, "hasMore", "", &more, err, errlen) < 0)
		goto done;
	page_read(list->u.array.values, list->u.array.len, NULL, out);
	*has_more = more;
	rc = ASAAS_OK;
done:
	yajl_tree_free(root);
	return rc;
}

int asaas_payment_parse(const char *body, size_t len, struct bankpix_batch *out, char *err,
			size_t errlen)
{
	return provjson_item_parse(body, len, asaas_payment_pix, refusal_make, out, err, errlen);
}

/* ---- a notification ---- */

static const struct {
	const char *name;
	enum asaas_event kind;
} events[] = {
    {"PAYMENT_RECEIVED", ASAAS_PAYMENT_RECEIVED},
    {"PAYMENT_CONFIRMED", ASAAS_PAYMENT_CONFIRMED},
    {"PAYMENT_OVERDUE", ASAAS_PAYMENT_OVERDUE},
    {"PAYMENT_DELETED", ASAAS_PAYMENT_DELETED},
    {"PAYMENT_REFUNDED", ASAAS_PAYMENT_REFUNDED},
    {"PAYMENT_PARTIALLY_REFUNDED", ASAAS_PAYMENT_PARTIALLY_REFUNDED},
    {"PAYMENT_REFUND_IN_PROGRESS", ASAAS_PAYMENT_REFUND_IN_PROGRESS},
    {"PAYMENT_AWAITING_CHARGEBACK_REVERSAL", ASAAS_PAYMENT_CHARGEBACK},
};

#define CHARGEBACK_PREFIX "PAYMENT_CHARGEBACK_"

/* The notification in root: its event checked, *out filled; or -1 with
 * err. */
static int notice_read(yajl_val root, struct asaas_notice *out, char *err, size_t errlen)
{
	struct asaas_notice n = {0};
	const char *event;
	yajl_val pay;

	if (provjson_string_at(root, "event", "", true, 0, &event, err, errlen) < 0)
		return -1;
	n.kind = ASAAS_EVENT_OTHER;
	for (size_t i = 0; i < sizeof(events) / sizeof(*events); i++)
		if (strcmp(event, events[i].name) == 0)
			n.kind = events[i].kind;
	if (strncmp(event, CHARGEBACK_PREFIX, sizeof(CHARGEBACK_PREFIX) - 1) == 0)
		n.kind = ASAAS_PAYMENT_CHARGEBACK;
	provjson_token_copy(json_get(root, "id"), n.id, ASAAS_ID_MAX);
	pay = json_get(root, "payment");
	if (YAJL_IS_OBJECT(pay))
		provjson_token_copy(json_get(pay, "id"), n.payment, ASAAS_ID_MAX);
	n.event = mem_strdup(event);
	*out = n;
	return 0;
}

int asaas_notice_parse(const char *body, size_t len, struct asaas_notice *out, char *err,
		       size_t errlen)
{
	yajl_val root = NULL;
	int rc = ASAAS_MALFORMED;

	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	if (notice_read(root, out, err, errlen) < 0)
		goto done;
	rc = ASAAS_OK;
done:
	yajl_tree_free(root);
	return rc;
}

void asaas_notice_deinit(struct asaas_notice *n)
{
	free(n->event);
	memset(n, 0, sizeof(*n));
}

int asaas_notice_batch(const char *body, size_t len, struct bankpix_batch *out, char *err,
		       size_t errlen)
{
	struct asaas_notice n;
	yajl_val root = NULL, pay;
	int rc = ASAAS_MALFORMED;

	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	if (notice_read(root, &n, err, errlen) < 0)
		goto done;
	asaas_notice_deinit(&n);
	if (provjson_object_at(root, "payment", "", &pay, err, errlen) < 0)
		goto done;
	page_read(&pay, 1, "payment", out);
	rc = ASAAS_OK;
done:
	yajl_tree_free(root);
	return rc;
}

/* ---- answers ---- */

int asaas_customer_created(const char *body, size_t len, char id[ASAAS_ID_MAX + 1], char *err,
			   size_t errlen)
{
	yajl_val root = NULL;
	const char *s;
	int rc = ASAAS_MALFORMED;

	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	if (provjson_id_at(root, "id", "", ASAAS_ID_MAX, &s, err, errlen) < 0)
		goto done;
	snprintf(id, ASAAS_ID_MAX + 1, "%s", s);
	rc = ASAAS_OK;
done:
	yajl_tree_free(root);
	return rc;
}

/* The first element of a list's data: ASAAS_OK with *first (an object),
 * ASAAS_NONE, or ASAAS_MALFORMED with err. */
static int list_first(yajl_val root, yajl_val *first, char *err, size_t errlen)
{
	yajl_val list;

	if (provjson_array_at(root, "data", "", &list, err, errlen) < 0)
		return ASAAS_MALFORMED;
	if (list->u.array.len == 0)
		return ASAAS_NONE;
	if (!YAJL_IS_OBJECT(list->u.array.values[0])) {
		snprintf(err, errlen, "data[0]: must be an object");
		return ASAAS_MALFORMED;
	}
	*first = list->u.array.values[0];
	return ASAAS_OK;
}

int asaas_customers_found(const char *body, size_t len, char id[ASAAS_ID_MAX + 1], char *err,
			  size_t errlen)
{
	yajl_val root = NULL, first = NULL;
	const char *s;
	int rc = ASAAS_MALFORMED;

	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	rc = list_first(root, &first, err, errlen);
	if (rc != ASAAS_OK)
		goto done;
	rc = ASAAS_MALFORMED;
	if (provjson_id_at(first, "id", "data[0]", ASAAS_ID_MAX, &s, err, errlen) < 0)
		goto done;
	snprintf(id, ASAAS_ID_MAX + 1, "%s", s);
	rc = ASAAS_OK;
done:
	yajl_tree_free(root);
	return rc;
}

/* A payment object as a creating or finding call answers it. */
static int created_read(yajl_val pay, const char *path, struct asaas_created *out, char *err,
			size_t errlen)
{
	struct asaas_created c = {0};
	const char *id, *status;

	if (provjson_id_at(pay, "id", path, ASAAS_ID_MAX, &id, err, errlen) < 0 ||
	    provjson_status_at(pay, path, ASAAS_STATUS_MAX, &status, err, errlen) < 0 ||
	    provjson_reais_at(pay, "value", path, &c.cents, err, errlen) < 0)
		return -1;
	snprintf(c.id, sizeof(c.id), "%s", id);
	snprintf(c.status, sizeof(c.status), "%s", status);
	provjson_token_copy(json_get(pay, "externalReference"), c.external_reference, ASAAS_ID_MAX);
	*out = c;
	return 0;
}

int asaas_payment_created(const char *body, size_t len, struct asaas_created *out, char *err,
			  size_t errlen)
{
	yajl_val root = NULL;
	int rc = ASAAS_MALFORMED;

	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	if (created_read(root, "", out, err, errlen) < 0)
		goto done;
	rc = ASAAS_OK;
done:
	yajl_tree_free(root);
	return rc;
}

int asaas_payments_found(const char *body, size_t len, struct asaas_created *out, char *err,
			 size_t errlen)
{
	yajl_val root = NULL, first = NULL;
	int rc = ASAAS_MALFORMED;

	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	rc = list_first(root, &first, err, errlen);
	if (rc != ASAAS_OK)
		goto done;
	rc = ASAAS_MALFORMED;
	if (created_read(first, "data[0]", out, err, errlen) < 0)
		goto done;
	rc = ASAAS_OK;
done:
	yajl_tree_free(root);
	return rc;
}

int asaas_qrcode(const char *body, size_t len, char **payload, char *err, size_t errlen)
{
	yajl_val root = NULL;
	const char *s;
	int rc = ASAAS_MALFORMED;

	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	if (provjson_string_at(root, "payload", "", true, ASAAS_BRCODE_MAX, &s, err, errlen) < 0)
		goto done;
	if (!*s) {
		provjson_fail(err, errlen, "", "payload", "must not be empty");
		goto done;
	}
	*payload = mem_strdup(s);
	rc = ASAAS_OK;
done:
	yajl_tree_free(root);
	return rc;
}

int asaas_refund_answer(const char *body, size_t len, char status[ASAAS_STATUS_MAX + 1], char *err,
			size_t errlen)
{
	yajl_val root = NULL;
	const char *s;
	int rc = ASAAS_MALFORMED;

	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	if (provjson_status_at(root, "", ASAAS_STATUS_MAX, &s, err, errlen) < 0)
		goto done;
	snprintf(status, ASAAS_STATUS_MAX + 1, "%s", s);
	rc = ASAAS_OK;
done:
	yajl_tree_free(root);
	return rc;
}

/* ---- bodies ---- */

char *asaas_customer_body(const char *name, const char *cpf_cnpj, const char *external_reference)
{
	yajl_gen g = json_gen_new();

	json_open(g);
	json_str(g, "name");
	json_str(g, name);
	if (cpf_cnpj && *cpf_cnpj) {
		json_str(g, "cpfCnpj");
		json_str(g, cpf_cnpj);
	}
	json_str(g, "externalReference");
	json_str(g, external_reference);
	json_close(g);
	return json_take(g);
}

char *asaas_payment_body(const char *customer, int64_t cents, const char *due_date,
			 const char *external_reference, const char *description)
{
	yajl_gen g = json_gen_new();

	json_open(g);
	json_str(g, "customer");
	json_str(g, customer);
	json_str(g, "billingType");
	json_str(g, "PIX");
	json_str(g, "value");
	provjson_gen_reais(g, cents);
	json_str(g, "dueDate");
	json_str(g, due_date);
	json_str(g, "externalReference");
	json_str(g, external_reference);
	if (description && *description) {
		json_str(g, "description");
		json_str(g, description);
	}
	json_close(g);
	return json_take(g);
}

char *asaas_refund_body(int64_t cents, const char *description)
{
	yajl_gen g = json_gen_new();

	json_open(g);
	if (cents > 0) {
		json_str(g, "value");
		provjson_gen_reais(g, cents);
	}
	if (description && *description) {
		json_str(g, "description");
		json_str(g, description);
	}
	json_close(g);
	return json_take(g);
}
