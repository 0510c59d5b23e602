/* mercadopago: Mercado Pago's JSON read as hostile input, no I/O: a
 * notification's payment id, payments as struct bankpix with the refunds
 * they carry, amounts in reais read from the number's text, the answers to
 * creating a payment and a refund, and the bodies pixrelay sends. What is
 * done with a payment is the bank store's (src/store/banks_receive.c), as
 * for a bank's Pix; the x-signature of a notification is pix/provsig.c's.
 */
#include "pixrelay/pix/mercadopago.h"

#include "pixrelay/pix/provjson.h"

#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values one payment may bring at most (PaymentResponse's ~80 fields and
 * their parts, its refunds, fee details, items...). The tree of a search
 * page is capped at this times MP_PAGE_MAX. */
#define VALUES_PER_PAYMENT 1024
#define PAGE_VALUES (MP_PAGE_MAX * VALUES_PER_PAYMENT + 16)
#define REFERENCE_MAX 140 /* characters of an external_reference the merchant's event shows */
#define PAGING_MAX 1000000000000000LL /* paging.total and offset at most */
#define BRASILIA_MS (3LL * 3600 * 1000)

/* Whether `s` is 1 to MP_PAYMENT_ID_MAX digits, the first not 0. */
static bool id_digits(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (n >= MP_PAYMENT_ID_MAX || s[n] < '0' || s[n] > '9')
			return false;
	return n > 0 && s[0] != '0';
}

/* The digits of an id given as a JSON number (its own text) or a string
 * of digits; NULL when it is neither. */
static const char *id_text(yajl_val v)
{
	const char *s = NULL;

	if (YAJL_IS_NUMBER(v))
		s = v->u.number.r;
	else if (YAJL_IS_STRING(v))
		s = v->u.string;
	return s && id_digits(s) ? s : NULL;
}

/* An id member: 0 with *out, or -1 with err. */
static int id_at(yajl_val obj, const char *path, const char **out, char *err, size_t errlen)
{
	yajl_val v = provjson_optional(obj, "id");

	if (!v)
		return provjson_fail(err, errlen, path, "id", "is required");
	if (!(*out = id_text(v)))
		return provjson_fail(err, errlen, path, "id",
				     "must be a whole number of 1 to %d digits", MP_PAYMENT_ID_MAX);
	return 0;
}

/* Whether `s` is 1 to MP_STATUS_MAX of a-z, 0-9 and _. */
static bool status_text(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (n >= MP_STATUS_MAX ||
		    !((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '_'))
			return false;
	return n > 0;
}

/* A status member (`key`): 0 with *out, NULL when optional and absent, or
 * -1 with err. */
static int status_at(yajl_val obj, const char *key, const char *path, bool required,
		     const char **out, char *err, size_t errlen)
{
	yajl_val v = provjson_optional(obj, key);

	*out = NULL;
	if (!v)
		return required ? provjson_fail(err, errlen, path, key, "is required") : 0;
	if (!YAJL_IS_STRING(v) || !status_text(v->u.string))
		return provjson_fail(err, errlen, path, key, "must be 1 to %d of a-z, 0-9 and _",
				     MP_STATUS_MAX);
	*out = v->u.string;
	return 0;
}

/* An ISO 8601 moment with an offset ("...T10:00:00.000-04:00", or "-0400"
 * as Java writes it) as milliseconds: 0, or -1. */
static int moment_ms(const char *s, long long *ms)
{
	size_t n = strlen(s);
	char iso[40];

	if (n >= 24 && n < sizeof(iso) - 1 && (s[n - 5] == '+' || s[n - 5] == '-') &&
	    s[n - 4] >= '0' && s[n - 4] <= '9' && s[n - 3] >= '0' && s[n - 3] <= '9' &&
	    s[n - 2] >= '0' && s[n - 2] <= '9' && s[n - 1] >= '0' && s[n - 1] <= '9') {
		snprintf(iso, sizeof(iso), "%.*s:%s", (int)(n - 2), s, s + n - 2);
		return bankpix_time_ms(iso, ms);
	}
	return bankpix_time_ms(s, ms);
}

#define MOMENT_RULE                                                                                \
	"must be an ISO 8601 date-time with an offset, like \"2026-12-02T10:00:00.000-04:00\""

/* ---- a payment ---- */

/* What a payment's status says of the money (MP-ST; the header). */
static enum provjson_kind status_kind(const char *s)
{
	static const char *const items[] = {"approved", "refunded", "charged_back", "in_mediation"};
	static const char *const others[] = {"pending", "in_process", "authorized", "cancelled",
					     "rejected"};

	return provjson_status_kind(s, items, sizeof(items) / sizeof(*items), others,
				    sizeof(others) / sizeof(*others));
}

/* A refund's status (RefundResponse; the header), or -1. */
static int refund_status(const char *s)
{
	if (strcmp(s, "approved") == 0)
		return BANKPIX_DEVOLVIDO;
	if (strcmp(s, "in_process") == 0 || strcmp(s, "pending") == 0)
		return BANKPIX_EM_PROCESSAMENTO;
	if (strcmp(s, "rejected") == 0 || strcmp(s, "cancelled") == 0)
		return BANKPIX_NAO_REALIZADO;
	return -1;
}

#define REFUND_STATUS_RULE "must be approved, in_process, pending, rejected or cancelled"

/* One refund `v` at `rpath` into *r (json owned), or -1 with err. */
static int refund_read(yajl_val v, const char *rpath, struct bankpix_refund *r, char *err,
		       size_t errlen)
{
	const char *id, *status, *date;
	long long ms;
	char when[25];
	int st;

	if (!YAJL_IS_OBJECT(v))
		return provjson_fail(err, errlen, rpath, "", "must be an object");
	if (id_at(v, rpath, &id, err, errlen) < 0 ||
	    status_at(v, "status", rpath, true, &status, err, errlen) < 0)
		return -1;
	if ((st = refund_status(status)) < 0)
		return provjson_fail(err, errlen, rpath, "status", REFUND_STATUS_RULE);
	if (provjson_reais_at(v, "amount", rpath, &r->cents, err, errlen) < 0 ||
	    provjson_time_at(v, "date_created", rpath, true, moment_ms, MOMENT_RULE, &date, &ms,
			     err, errlen) < 0)
		return -1;
	snprintf(r->id, sizeof(r->id), "%s", id);
	r->rtr_id[0] = '\0';
	r->status = (enum bankpix_refund_status)st;
	timefmt_rfc3339(when, (uint64_t)ms);
	r->json = provjson_refund_json(
	    r, when, provjson_text(provjson_optional(v, "reason"), BANKPIX_TEXT_MAX));
	return 0;
}

/* The refunds rs[0..n) into *out (n of them), or -1 with err. */
static int refunds_read(yajl_val *rs, size_t n, const char *path, struct bankpix_refund **out,
			char *err, size_t errlen)
{
	struct bankpix_refund *list = n ? mem_calloc(n, sizeof(*list)) : NULL;
	char rpath[64];

	for (size_t j = 0; j < n; j++) {
		provjson_path(rpath, sizeof(rpath), path, "refunds[%zu]", j);
		if (refund_read(rs[j], rpath, &list[j], err, errlen) < 0) {
			provjson_refunds_free(list, n);
			return -1;
		}
	}
	*out = list;
	return 0;
}

int mp_payment_pix(yajl_val pay, const char *path, struct bankpix *out, char *err, size_t errlen)
{
	const char *id, *status, *detail = NULL, *method, *date, *ref;
	struct bankpix_refund *refunds = NULL;
	size_t nrefunds = 0;
	yajl_val rs;
	int64_t cents;
	long long ms;
	char when[25];
	yajl_gen g;

	if (!YAJL_IS_OBJECT(pay))
		return provjson_fail(err, errlen, path, "", "must be an object");
	if (id_at(pay, path, &id, err, errlen) < 0 ||
	    provjson_string_at(pay, "payment_method_id", path, true, 0, &method, err, errlen) < 0)
		return -1;
	if (strcmp(method, "pix") != 0)
		return MP_NOT_RECEIVED;
	if (status_at(pay, "status", path, true, &status, err, errlen) < 0 ||
	    status_at(pay, "status_detail", path, false, &detail, err, errlen) < 0)
		return -1;
	switch (status_kind(status)) {
	case PROVJSON_NOT_ITEM:
		return MP_NOT_RECEIVED;
	case PROVJSON_UNKNOWN:
		return provjson_fail(err, errlen, path, "status",
				     "is not one of Mercado Pago's payment statuses");
	case PROVJSON_ITEM:
		break;
	}
	if (provjson_reais_at(pay, "transaction_amount", path, &cents, err, errlen) < 0 ||
	    provjson_time_at(pay, "date_approved", path, true, moment_ms, MOMENT_RULE, &date, &ms,
			     err, errlen) < 0 ||
	    provjson_refunds_at(pay, path, &rs, err, errlen) < 0)
		return -1;
	if (rs) {
		nrefunds = rs->u.array.len;
		if (refunds_read(rs->u.array.values, nrefunds, path, &refunds, err, errlen) < 0)
			return -1;
	}
	ref = provjson_text(provjson_optional(pay, "external_reference"), REFERENCE_MAX);

	timefmt_rfc3339(when, (uint64_t)ms);
	/* a chargeback or a mediation: the Pix's dispute, a MED refund of the
	 * whole (MP-ST: charged_back settled, reimbursed or in_process) */
	if (strcmp(status, "charged_back") == 0 || strcmp(status, "in_mediation") == 0)
		provjson_med_add(&refunds, &nrefunds, id, cents,
				 strcmp(status, "in_mediation") == 0 ||
					 (detail && strcmp(detail, "in_process") == 0)
				     ? BANKPIX_EM_PROCESSAMENTO
				 : detail && strcmp(detail, "reimbursed") == 0
				     ? BANKPIX_NAO_REALIZADO
				     : BANKPIX_DEVOLVIDO,
				 when);
	g = provjson_pix_begin(out, MP_ID_PREFIX, id, NULL, ref, cents, ms);
	json_str(g, "horario");
	json_str(g, when);
	provjson_pix_provider(g, refunds, nrefunds, "mercadopago");
	provjson_pix_payment(g, id, ref, status);
	json_str(g, "statusDetail");
	json_str_or_null(g, detail);
	provjson_pix_end(g, out, refunds, nrefunds);
	return 0;
}

/* ---- a page ---- */

/* A refused payment: what the merchant gets of it (bankpix.h). */
static void refusal_make(yajl_val pay, size_t index, const char *err, struct bankpix_refusal *r)
{
	provjson_refusal_make(pay, index, err, MP_ID_PREFIX, id_text(json_get(pay, "id")), r);
	r->cents = provjson_reais_peek(json_get(pay, "transaction_amount"));
	r->horario_ms = provjson_time_peek(json_get(pay, "date_approved"), moment_ms);
}

int mp_payment_parse(const char *body, size_t len, struct bankpix_batch *out, char *err,
		     size_t errlen)
{
	return provjson_item_parse(body, len, mp_payment_pix, refusal_make, out, err, errlen);
}

/* paging.<key>: a whole number from 0 to PAGING_MAX. */
static int paging_at(yajl_val paging, const char *key, int64_t *out, char *err, size_t errlen)
{
	yajl_val v = json_get(paging, key);

	if (!v)
		return provjson_fail(err, errlen, "paging", key, "is required");
	if (!json_is_int64(v, out) || *out < 0 || *out > PAGING_MAX)
		return provjson_fail(err, errlen, "paging", key,
				     "must be a whole number from 0 to %lld", PAGING_MAX);
	return 0;
}

int mp_search_parse(const char *body, size_t len, struct bankpix_batch *out, bool *has_more,
		    char *err, size_t errlen)
{
	yajl_val root = NULL, paging, list;
	int64_t total, limit, offset;
	int rc = MP_MALFORMED;

	rc = provjson_page_parse(body, len, PAGE_VALUES, "results", MP_PAGE_MAX, &root, &list, err,
				 errlen);
	if (rc != PROVJSON_OK) {
		rc = rc == PROVJSON_TOO_MANY ? MP_TOO_MANY : MP_MALFORMED;
		goto done;
	}
	rc = MP_MALFORMED;
	if (provjson_object_at(root, "paging", "", &paging, err, errlen) < 0 ||
	    paging_at(paging, "total", &total, err, errlen) < 0 ||
	    paging_at(paging, "limit", &limit, err, errlen) < 0 ||
	    paging_at(paging, "offset", &offset, err, errlen) < 0)
		goto done;
	provjson_items_read(list->u.array.values, list->u.array.len, "results", NULL,
			    mp_payment_pix, refusal_make, out);
	*has_more = list->u.array.len > 0 && offset + (int64_t)list->u.array.len < total;
	rc = MP_OK;
done:
	yajl_tree_free(root);
	return rc;
}

/* ---- a notification ---- */

int mp_notice_parse(const char *body, size_t len, const char *query_data_id, struct mp_notice *out,
		    char *err, size_t errlen)
{
	struct mp_notice n = {0};
	yajl_val root = NULL, type, data, v;
	const char *s;
	int rc = MP_MALFORMED;

	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	type = json_get(root, "type");
	n.kind = YAJL_IS_STRING(type) && strcmp(type->u.string, "payment") == 0 ? MP_NOTICE_PAYMENT
										: MP_NOTICE_OTHER;
	n.live_mode = YAJL_IS_TRUE(json_get(root, "live_mode"));
	if ((s = id_text(json_get(root, "id"))))
		snprintf(n.id, sizeof(n.id), "%s", s);
	v = json_get(root, "action");
	if (YAJL_IS_STRING(v) && strlen(v->u.string) <= MP_ACTION_MAX &&
	    provjson_is_text(v->u.string, MP_ACTION_MAX))
		snprintf(n.action, sizeof(n.action), "%s", v->u.string);
	if (query_data_id && *query_data_id) {
		s = id_digits(query_data_id) ? query_data_id : NULL;
	} else {
		data = json_get(root, "data");
		s = YAJL_IS_OBJECT(data) ? id_text(json_get(data, "id")) : NULL;
	}
	if (s)
		snprintf(n.payment, sizeof(n.payment), "%s", s);
	*out = n;
	rc = MP_OK;
done:
	yajl_tree_free(root);
	return rc;
}

/* ---- answers ---- */

int mp_payment_created(const char *body, size_t len, struct mp_created *out, char *err,
		       size_t errlen)
{
	struct mp_created c = {0};
	yajl_val root = NULL, v;
	const char *id, *status, *qr = NULL;
	int rc = MP_MALFORMED;

	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	if (id_at(root, "", &id, err, errlen) < 0 ||
	    status_at(root, "status", "", true, &status, err, errlen) < 0 ||
	    provjson_reais_at(root, "transaction_amount", "", &c.cents, err, errlen) < 0)
		goto done;
	v = provjson_optional(root, "point_of_interaction");
	v = YAJL_IS_OBJECT(v) ? provjson_optional(v, "transaction_data") : NULL;
	v = YAJL_IS_OBJECT(v) ? provjson_optional(v, "qr_code") : NULL;
	if (v && (!YAJL_IS_STRING(v) || !provjson_is_text(v->u.string, MP_QR_MAX))) {
		provjson_fail(err, errlen, "", "point_of_interaction.transaction_data.qr_code",
			      "must be 1 to %d characters, no control characters", MP_QR_MAX);
		goto done;
	}
	if (v)
		qr = v->u.string;
	else if (strcmp(status, "pending") == 0) {
		provjson_fail(err, errlen, "", "point_of_interaction.transaction_data.qr_code",
			      "is required for a pending Pix");
		goto done;
	}
	provjson_token_copy(json_get(root, "external_reference"), c.external_reference,
			    MP_REFERENCE_MAX);
	snprintf(c.id, sizeof(c.id), "%s", id);
	snprintf(c.status, sizeof(c.status), "%s", status);
	c.qr_code = qr ? mem_strdup(qr) : NULL;
	*out = c;
	rc = MP_OK;
done:
	yajl_tree_free(root);
	return rc;
}

void mp_created_deinit(struct mp_created *c)
{
	free(c->qr_code);
	memset(c, 0, sizeof(*c));
}

int mp_refund_created(const char *body, size_t len, struct mp_refund_created *out, char *err,
		      size_t errlen)
{
	struct mp_refund_created r = {0};
	yajl_val root = NULL;
	const char *id, *status;
	int st, rc = MP_MALFORMED;

	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	if (id_at(root, "", &id, err, errlen) < 0 ||
	    status_at(root, "status", "", true, &status, err, errlen) < 0)
		goto done;
	if ((st = refund_status(status)) < 0) {
		provjson_fail(err, errlen, "", "status", REFUND_STATUS_RULE);
		goto done;
	}
	if (provjson_reais_at(root, "amount", "", &r.cents, err, errlen) < 0)
		goto done;
	snprintf(r.id, sizeof(r.id), "%s", id);
	snprintf(r.status_name, sizeof(r.status_name), "%s", status);
	r.status = (enum bankpix_refund_status)st;
	*out = r;
	rc = MP_OK;
done:
	yajl_tree_free(root);
	return rc;
}

/* ---- bodies ---- */

char *mp_payment_body(int64_t cents, const char *description, const char *payer_email,
		      const char *external_reference, const char *date_of_expiration)
{
	yajl_gen g = json_gen_new();

	json_open(g);
	json_str(g, "transaction_amount");
	provjson_gen_reais(g, cents);
	if (description && *description) {
		json_str(g, "description");
		json_str(g, description);
	}
	json_str(g, "payment_method_id");
	json_str(g, "pix");
	json_str(g, "payer");
	json_open(g);
	json_str(g, "email");
	json_str(g, payer_email);
	json_close(g);
	json_str(g, "external_reference");
	json_str(g, external_reference);
	if (date_of_expiration) {
		json_str(g, "date_of_expiration");
		json_str(g, date_of_expiration);
	}
	json_close(g);
	return json_take(g);
}

char *mp_refund_body(int64_t cents)
{
	yajl_gen g = json_gen_new();

	json_open(g);
	if (cents > 0) {
		json_str(g, "amount");
		provjson_gen_reais(g, cents);
	}
	json_close(g);
	return json_take(g);
}

char *mp_expiration(long long ms, char out[32])
{
	char utc[25];

	timefmt_rfc3339(utc, (uint64_t)(ms - BRASILIA_MS));
	snprintf(out, 32, "%.23s-03:00", utc);
	return out;
}
