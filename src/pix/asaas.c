/* asaas: Asaas's JSON read as hostile input, no I/O: a notification's
 * event and ids, payments as struct bankpix with the refunds they carry,
 * values in reais read from the number's text, the answers to the calls
 * pixrelay makes and the bodies it sends. What is done with a payment is
 * the bank store's (src/store/banks_receive.c), as for a bank's Pix; the
 * token of a notification is pix/provsig.c's.
 */
#include "pixrelay/pix/asaas.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/core/validate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values one payment may bring at most (its own ~50, discount, fine,
 * interest, split, refunds...). The tree of a page is capped at this times
 * ASAAS_PAGE_MAX. */
#define VALUES_PER_PAYMENT 1024
#define PAGE_VALUES (ASAAS_PAGE_MAX * VALUES_PER_PAYMENT + 16)
#define REFERENCE_MAX 140 /* characters of an externalReference the merchant's event shows */

static int fail(char *err, size_t errlen, const char *path, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* "<path>.<field>: <rule>" into err; always -1. */
static int fail(char *err, size_t errlen, const char *path, const char *field, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, errlen, "%s%s%s: ", path, path[0] && field[0] ? "." : "", field);

	if (n < 0 || (size_t)n >= errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* A member that may be absent: NULL for absent and for null. */
static yajl_val optional(yajl_val obj, const char *key)
{
	yajl_val v = json_get(obj, key);

	return v && !YAJL_IS_NULL(v) ? v : NULL;
}

/* Whether `s` is 1 to `max` printable ASCII characters without spaces. */
static bool id_text(const char *s, size_t max)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (n >= max || (unsigned char)s[n] <= ' ' || (unsigned char)s[n] >= 0x7f)
			return false;
	return n > 0;
}

/* An id of a notification into out, or "". */
static void id_copy(yajl_val v, char out[ASAAS_ID_MAX + 1])
{
	out[0] = '\0';
	if (YAJL_IS_STRING(v) && id_text(v->u.string, ASAAS_ID_MAX))
		snprintf(out, ASAAS_ID_MAX + 1, "%s", v->u.string);
}

/* Whether `s` is 1 to `max` of A-Z, a-z, 0-9, '-' and '_' (pay_...,
 * cus_...). */
static bool asaas_id(const char *s, size_t max)
{
	size_t n = 0;

	for (; s[n]; n++) {
		char c = s[n];
		if (n >= max || !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
				  (c >= 'A' && c <= 'Z') || c == '-' || c == '_'))
			return false;
	}
	return n > 0;
}

/* A string member, `max` characters at most when max is not 0. 0 with *out
 * (NULL when optional and absent), or -1 with err. */
static int string_at(yajl_val obj, const char *key, const char *path, bool required, long max,
		     const char **out, char *err, size_t errlen)
{
	yajl_val v = required ? json_get(obj, key) : optional(obj, key);
	long chars;

	*out = NULL;
	if (!v)
		return required ? fail(err, errlen, path, key, "is required") : 0;
	if (!YAJL_IS_STRING(v))
		return fail(err, errlen, path, key, "must be a string");
	if (max) {
		chars = validate_utf8_chars(v->u.string, strlen(v->u.string));
		if (chars < 0 || chars > max || validate_has_control(v->u.string))
			return fail(err, errlen, path, key,
				    "must be at most %ld characters, no control characters", max);
	}
	*out = v->u.string;
	return 0;
}

/* An id member (pay_..., cus_...): 1 to `max` of A-Z, a-z, 0-9, '-', '_'. */
static int id_at(yajl_val obj, const char *path, size_t max, const char **out, char *err,
		 size_t errlen)
{
	if (string_at(obj, "id", path, true, 0, out, err, errlen) < 0)
		return -1;
	if (!asaas_id(*out, max))
		return fail(err, errlen, path, "id", "must be 1 to %zu letters, digits, '-' or '_'",
			    max);
	return 0;
}

/* A status: 1 to ASAAS_STATUS_MAX of A-Z and _. */
static int status_at(yajl_val obj, const char *path, const char **out, char *err, size_t errlen)
{
	const char *s;
	size_t n = 0;

	if (string_at(obj, "status", path, true, 0, &s, err, errlen) < 0)
		return -1;
	for (; s[n]; n++)
		if (n >= ASAAS_STATUS_MAX || !((s[n] >= 'A' && s[n] <= 'Z') || s[n] == '_'))
			break;
	if (n == 0 || s[n])
		return fail(err, errlen, path, "status", "must be 1 to %d of A-Z and _",
			    ASAAS_STATUS_MAX);
	*out = s;
	return 0;
}

/* A value in reais: a JSON number, read from its text. */
static int cents_at(yajl_val obj, const char *key, const char *path, int64_t *cents, char *err,
		    size_t errlen)
{
	yajl_val v = json_get(obj, key);

	if (!v || YAJL_IS_NULL(v))
		return fail(err, errlen, path, key, "is required");
	if (!YAJL_IS_NUMBER(v) || bankpix_reais_cents(v->u.number.r, cents) < 0)
		return fail(err, errlen, path, key,
			    "must be a number of reais from 0.01 to 9999999999.99 with at most 2 "
			    "decimal places, like 10.5");
	return 0;
}

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

enum kind { NOT_ITEM, ITEM, UNKNOWN };

/* What Asaas's payment status says of the money (the header). */
static enum kind status_kind(const char *s)
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

	for (size_t i = 0; i < sizeof(items) / sizeof(*items); i++)
		if (strcmp(s, items[i]) == 0)
			return ITEM;
	for (size_t i = 0; i < sizeof(others) / sizeof(*others); i++)
		if (strcmp(s, others[i]) == 0)
			return NOT_ITEM;
	return UNKNOWN;
}

static void refunds_free(struct bankpix_refund *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(r[i].json);
	free(r);
}

/* A refund's own id (id, else endToEndIdentifier) as the header says, into
 * out; false when it has neither. */
static bool refund_own_id(const char *own, char out[BANKPIX_REFUND_ID_MAX + 1])
{
	char sha[65];

	if (!own || !*own)
		return false;
	if (bankpix_is_alnum(own, 1, BANKPIX_REFUND_ID_MAX)) {
		snprintf(out, BANKPIX_REFUND_ID_MAX + 1, "%s", own);
		return true;
	}
	ids_sha256_hex(sha, own, strlen(own));
	memcpy(out, sha, BANKPIX_REFUND_ID_MAX);
	out[BANKPIX_REFUND_ID_MAX] = '\0';
	return true;
}

/* The refunds of the payment `pay_id` (rs[0..n), already checked to be
 * objects: an array) into *out (n of them, json owned), or -1 with err. */
static int refunds_read(yajl_val *rs, size_t n, const char *pay_id, const char *path,
			struct bankpix_refund **out, char *err, size_t errlen)
{
	struct bankpix_refund *list = n ? mem_calloc(n, sizeof(*list)) : NULL;
	const char **dates = n ? mem_calloc(n, sizeof(*dates)) : NULL;
	char rpath[64], valor[24], when[25];
	int rc = -1;

	for (size_t j = 0; j < n; j++) {
		struct bankpix_refund *r = &list[j];
		yajl_val v = rs[j];
		const char *status, *date, *own = NULL, *e2e = NULL, *motivo = NULL;
		long long ms;
		yajl_gen g;

		snprintf(rpath, sizeof(rpath), "%s%srefunds[%zu]", path, path[0] ? "." : "", j);
		if (!YAJL_IS_OBJECT(v)) {
			fail(err, errlen, rpath, "", "must be an object");
			goto done;
		}
		if (status_at(v, rpath, &status, err, errlen) < 0)
			goto done;
		if (strcmp(status, "DONE") == 0)
			r->status = BANKPIX_DEVOLVIDO;
		else if (strcmp(status, "PENDING") == 0)
			r->status = BANKPIX_EM_PROCESSAMENTO;
		else if (strcmp(status, "CANCELLED") == 0)
			r->status = BANKPIX_NAO_REALIZADO;
		else {
			fail(err, errlen, rpath, "status", "must be PENDING, DONE or CANCELLED");
			goto done;
		}
		if (cents_at(v, "value", rpath, &r->cents, err, errlen) < 0 ||
		    string_at(v, "dateCreated", rpath, true, 0, &date, err, errlen) < 0 ||
		    string_at(v, "id", rpath, false, 0, &own, err, errlen) < 0 ||
		    string_at(v, "endToEndIdentifier", rpath, false, 0, &e2e, err, errlen) < 0 ||
		    string_at(v, "description", rpath, false, BANKPIX_TEXT_MAX, &motivo, err,
			      errlen) < 0)
			goto done;
		if (moment_ms(date, &ms) < 0) {
			fail(err, errlen, rpath, "dateCreated", MOMENT_RULE);
			goto done;
		}
		dates[j] = date;
		if (!refund_own_id(own, r->id) && !refund_own_id(e2e, r->id)) {
			/* no id of its own (AS-REF): its payment, date, value and
			 * how many alike came before it */
			char sha[65], *key;
			size_t same = 0;

			for (size_t k = 0; k < j; k++)
				same += list[k].cents == r->cents && strcmp(dates[k], date) == 0;
			key = mem_printf("%s|%s|%lld|%zu", pay_id, date, (long long)r->cents, same);
			ids_sha256_hex(sha, key, strlen(key));
			free(key);
			memcpy(r->id, sha, BANKPIX_REFUND_ID_MAX);
			r->id[BANKPIX_REFUND_ID_MAX] = '\0';
		}
		if (e2e && bankpix_is_alnum(e2e, BANKPIX_E2E_LEN, BANKPIX_E2E_LEN))
			snprintf(r->rtr_id, sizeof(r->rtr_id), "%s", e2e);

		bankpix_cents_text(r->cents, valor);
		timefmt_rfc3339(when, (uint64_t)ms);
		g = json_gen_new();
		json_open(g);
		json_str(g, "id");
		json_str(g, r->id);
		if (r->rtr_id[0]) {
			json_str(g, "rtrId");
			json_str(g, r->rtr_id);
		}
		json_str(g, "valor");
		json_str(g, valor);
		json_str(g, "horario");
		json_open(g);
		json_str(g, "solicitacao");
		json_str(g, when);
		json_close(g);
		if (motivo && *motivo) {
			json_str(g, "motivo");
			json_str(g, motivo);
		}
		json_str(g, "status");
		json_str(g, bankpix_refund_status_name(r->status));
		json_close(g);
		r->json = json_take(g);
	}
	*out = list;
	list = NULL;
	rc = 0;
done:
	if (list)
		refunds_free(list, n);
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
	const char *id, *status, *billing, *date = NULL, *ref = NULL, *pixtx = NULL, *e2e;
	struct bankpix_refund *refunds = NULL;
	size_t nrefunds = 0;
	yajl_val rs, ext, ptx;
	int64_t cents;
	long long ms = 0;
	char valor[24], when[25];
	bool std_e2e, txid;
	yajl_gen g;

	if (!YAJL_IS_OBJECT(pay))
		return fail(err, errlen, path, "", "must be an object");
	if (id_at(pay, path, ASAAS_PAYMENT_ID_MAX, &id, err, errlen) < 0 ||
	    string_at(pay, "billingType", path, true, 0, &billing, err, errlen) < 0)
		return -1;
	/* a boleto's or a card's statuses are none of a Pix's business */
	if (strcmp(billing, "PIX") != 0)
		return ASAAS_NOT_RECEIVED;
	if (status_at(pay, path, &status, err, errlen) < 0)
		return -1;
	switch (status_kind(status)) {
	case NOT_ITEM:
		return ASAAS_NOT_RECEIVED;
	case UNKNOWN:
		return fail(err, errlen, path, "status", "is not one of Asaas's payment statuses");
	case ITEM:
		break;
	}
	if (cents_at(pay, "value", path, &cents, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(dates) / sizeof(*dates) && !date; i++) {
		if (string_at(pay, dates[i], path, false, 0, &date, err, errlen) < 0)
			return -1;
		if (date && moment_ms(date, &ms) < 0)
			return fail(err, errlen, path, dates[i], MOMENT_RULE);
	}
	if (!date)
		return fail(err, errlen, path, "paymentDate",
			    "is required (or clientPaymentDate, confirmedDate) for a payment "
			    "received");
	ext = json_get(pay, "externalReference");
	if (YAJL_IS_STRING(ext) && !validate_has_control(ext->u.string)) {
		long chars = validate_utf8_chars(ext->u.string, strlen(ext->u.string));
		if (chars > 0 && chars <= REFERENCE_MAX)
			ref = ext->u.string;
	}
	ptx = json_get(pay, "pixTransaction");
	if (YAJL_IS_STRING(ptx) && id_text(ptx->u.string, ASAAS_ID_MAX))
		pixtx = ptx->u.string;
	e2e = payment_e2e(pay);
	rs = optional(pay, "refunds");
	if (rs && !YAJL_IS_ARRAY(rs))
		return fail(err, errlen, path, "refunds", "must be an array");
	if (rs && rs->u.array.len > BANKPIX_REFUNDS_MAX)
		return fail(err, errlen, path, "refunds", "more than %d refunds of one payment",
			    BANKPIX_REFUNDS_MAX);
	if (rs) {
		nrefunds = rs->u.array.len;
		if (refunds_read(rs->u.array.values, nrefunds, id, path, &refunds, err, errlen) < 0)
			return -1;
	}

	std_e2e = e2e && bankpix_is_alnum(e2e, BANKPIX_E2E_LEN, BANKPIX_E2E_LEN);
	txid = ref && bankpix_is_alnum(ref, 1, BANKPIX_TXID_MAX);
	memset(out, 0, sizeof(*out));
	snprintf(out->id, sizeof(out->id), ASAAS_ID_PREFIX "%s", id);
	if (std_e2e)
		snprintf(out->e2e, sizeof(out->e2e), "%s", e2e);
	if (txid)
		snprintf(out->txid, sizeof(out->txid), "%s", ref);
	out->chave = NULL;
	out->cents = cents;
	out->parts = BANKPIX_PARTS_NONE;
	out->horario_ms = ms;

	bankpix_cents_text(cents, valor);
	timefmt_rfc3339(when, (uint64_t)ms);
	g = json_gen_new();
	json_open(g);
	if (std_e2e) {
		json_str(g, "endToEndId");
		json_str(g, e2e);
	}
	if (txid) {
		json_str(g, "txid");
		json_str(g, ref);
	}
	json_str(g, "valor");
	json_str(g, valor);
	json_str(g, "horario");
	json_str(g, when);
	json_str(g, "devolucoes");
	json_open_array(g);
	for (size_t j = 0; j < nrefunds; j++)
		json_raw(g, refunds[j].json, strlen(refunds[j].json));
	json_close_array(g);
	json_str(g, "provider");
	json_open(g);
	json_str(g, "name");
	json_str(g, "asaas");
	json_str(g, "paymentId");
	json_str(g, id);
	if (ref) {
		json_str(g, "externalReference");
		json_str(g, ref);
	}
	json_str(g, "status");
	json_str(g, status);
	if (pixtx) {
		json_str(g, "pixTransaction");
		json_str(g, pixtx);
	}
	json_close(g);
	json_close(g);
	out->json = json_take(g);
	out->refunds = refunds;
	out->nrefunds = nrefunds;
	return 0;
}

/* ---- a page ---- */

/* A refused payment: what the merchant gets of it (bankpix.h). */
static void refusal_make(yajl_val pay, size_t index, const char *err, struct bankpix_refusal *r)
{
	yajl_gen g = json_gen_new();
	yajl_val v;
	const char *buf, *e2e;
	size_t len;

	memset(r, 0, sizeof(*r));
	r->index = index;
	snprintf(r->err, sizeof(r->err), "%s", err);
	json_open_array(g);
	json_str(g, r->err);
	json_close_array(g);
	r->reasons = json_take(g);
	g = json_gen_new();
	json_write_value(g, pay);
	r->item = json_take(g);
	v = json_get(pay, "value");
	if (!YAJL_IS_NUMBER(v) || bankpix_reais_cents(v->u.number.r, &r->cents) < 0)
		r->cents = -1;
	r->horario_ms = 0;
	v = json_get(pay, "paymentDate");
	if (!YAJL_IS_STRING(v) || moment_ms(v->u.string, &r->horario_ms) < 0)
		r->horario_ms = 0;
	e2e = payment_e2e(pay);
	if (e2e && bankpix_is_alnum(e2e, BANKPIX_E2E_LEN, BANKPIX_E2E_LEN))
		snprintf(r->e2e, sizeof(r->e2e), "%s", e2e);
	v = json_get(pay, "id");
	if (YAJL_IS_STRING(v) && asaas_id(v->u.string, ASAAS_PAYMENT_ID_MAX)) {
		snprintf(r->id, sizeof(r->id), ASAAS_ID_PREFIX "%s", v->u.string);
	} else {
		/* the same payment sent again, its members in another order,
		 * is the same payment */
		g = json_gen_new();
		json_write_canonical(g, pay);
		buf = json_buf(g, &len);
		ids_sha256_hex(r->id, buf, len);
		yajl_gen_free(g);
	}
}

/* The payments ps[0..n) (a page's data, or the one payment of a
 * notification or of GET /payments/{id}, whose path is `one`) into *out. */
static void page_read(yajl_val *ps, size_t n, const char *one, struct bankpix_batch *out)
{
	struct bankpix_batch b = {0};
	char path[48], err[BANKPIX_ERR_MAX];

	if (n) {
		b.items = mem_calloc(n, sizeof(*b.items));
		b.refused = mem_calloc(n, sizeof(*b.refused));
	}
	for (size_t i = 0; i < n; i++) {
		int rc;

		if (one)
			snprintf(path, sizeof(path), "%s", one);
		else
			snprintf(path, sizeof(path), "data[%zu]", i);
		rc = asaas_payment_pix(ps[i], path, &b.items[b.n], err, sizeof(err));
		if (rc == 0)
			b.n++;
		else if (rc < 0)
			refusal_make(ps[i], i, err, &b.refused[b.nrefused++]);
	}
	*out = b;
}

/* The `data` array of a list, or NULL with err. */
static yajl_val list_data(yajl_val root, char *err, size_t errlen)
{
	yajl_val list = json_get(root, "data");

	if (!list)
		snprintf(err, errlen, "data: is required");
	else if (!YAJL_IS_ARRAY(list))
		snprintf(err, errlen, "data: must be an array");
	else
		return list;
	return NULL;
}

int asaas_payments_parse(const char *body, size_t len, struct bankpix_batch *out, bool *has_more,
			 char *err, size_t errlen)
{
	yajl_val root = NULL, list, more;
	int rc = ASAAS_MALFORMED;

	if (json_parse_object_max(body, len, PAGE_VALUES, &root, err, errlen) < 0)
		goto done;
	if (!(list = list_data(root, err, errlen)))
		goto done;
	if (list->u.array.len > ASAAS_PAGE_MAX) {
		snprintf(err, errlen, "data: more than %d in one page", ASAAS_PAGE_MAX);
		rc = ASAAS_TOO_MANY;
		goto done;
	}
	more = json_get(root, "hasMore");
	if (!YAJL_IS_TRUE(more) && !YAJL_IS_FALSE(more)) {
		snprintf(err, errlen, "hasMore: %s",
			 more ? "must be true or false" : "is required");
		goto done;
	}
	page_read(list->u.array.values, list->u.array.len, NULL, out);
	*has_more = YAJL_IS_TRUE(more);
	rc = ASAAS_OK;
done:
	yajl_tree_free(root);
	return rc;
}

int asaas_payment_parse(const char *body, size_t len, struct bankpix_batch *out, char *err,
			size_t errlen)
{
	yajl_val root = NULL;
	int rc = ASAAS_MALFORMED;

	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	page_read(&root, 1, "", out);
	rc = ASAAS_OK;
done:
	yajl_tree_free(root);
	return rc;
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
	yajl_val event = json_get(root, "event"), pay;
	struct asaas_notice n = {0};

	if (!YAJL_IS_STRING(event)) {
		snprintf(err, errlen, "event: %s", event ? "must be a string" : "is required");
		return -1;
	}
	n.kind = ASAAS_EVENT_OTHER;
	for (size_t i = 0; i < sizeof(events) / sizeof(*events); i++)
		if (strcmp(event->u.string, events[i].name) == 0)
			n.kind = events[i].kind;
	if (strncmp(event->u.string, CHARGEBACK_PREFIX, sizeof(CHARGEBACK_PREFIX) - 1) == 0)
		n.kind = ASAAS_PAYMENT_CHARGEBACK;
	id_copy(json_get(root, "id"), n.id);
	pay = json_get(root, "payment");
	if (YAJL_IS_OBJECT(pay))
		id_copy(json_get(pay, "id"), n.payment);
	n.event = mem_strdup(event->u.string);
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
	pay = json_get(root, "payment");
	if (!YAJL_IS_OBJECT(pay)) {
		snprintf(err, errlen, "payment: %s", pay ? "must be an object" : "is required");
		goto done;
	}
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
	if (id_at(root, "", ASAAS_ID_MAX, &s, err, errlen) < 0)
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
	yajl_val list = list_data(root, err, errlen);

	if (!list)
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
	if (id_at(first, "data[0]", ASAAS_ID_MAX, &s, err, errlen) < 0)
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

	if (id_at(pay, path, ASAAS_ID_MAX, &id, err, errlen) < 0 ||
	    status_at(pay, path, &status, err, errlen) < 0 ||
	    cents_at(pay, "value", path, &c.cents, err, errlen) < 0)
		return -1;
	snprintf(c.id, sizeof(c.id), "%s", id);
	snprintf(c.status, sizeof(c.status), "%s", status);
	id_copy(json_get(pay, "externalReference"), c.external_reference);
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
	if (string_at(root, "payload", "", true, ASAAS_BRCODE_MAX, &s, err, errlen) < 0)
		goto done;
	if (!*s) {
		fail(err, errlen, "", "payload", "must not be empty");
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
	if (status_at(root, "", &s, err, errlen) < 0)
		goto done;
	snprintf(status, ASAAS_STATUS_MAX + 1, "%s", s);
	rc = ASAAS_OK;
done:
	yajl_tree_free(root);
	return rc;
}

/* ---- bodies ---- */

/* `cents` as a JSON number of reais, written as exact text. */
static void reais(yajl_gen g, int64_t cents)
{
	char text[24];

	bankpix_cents_text(cents, text);
	json_raw(g, text, strlen(text));
}

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
	reais(g, cents);
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
		reais(g, cents);
	}
	if (description && *description) {
		json_str(g, "description");
		json_str(g, description);
	}
	json_close(g);
	return json_take(g);
}
