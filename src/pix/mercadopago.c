/* mercadopago: Mercado Pago's JSON read as hostile input, no I/O: a
 * notification's payment id, payments as struct bankpix with the refunds
 * they carry, amounts in reais read from the number's text, the answers to
 * creating a payment and a refund, and the bodies pixrelay sends. What is
 * done with a payment is the bank store's (src/store/banks_receive.c), as
 * for a bank's Pix; the x-signature of a notification is pix/provsig.c's.
 */
#include "pixrelay/pix/mercadopago.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/core/validate.h"

#include <stdarg.h>
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
	yajl_val v = optional(obj, "id");

	if (!v)
		return fail(err, errlen, path, "id", "is required");
	if (!(*out = id_text(v)))
		return fail(err, errlen, path, "id", "must be a whole number of 1 to %d digits",
			    MP_PAYMENT_ID_MAX);
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
	yajl_val v = optional(obj, key);

	*out = NULL;
	if (!v)
		return required ? fail(err, errlen, path, key, "is required") : 0;
	if (!YAJL_IS_STRING(v) || !status_text(v->u.string))
		return fail(err, errlen, path, key, "must be 1 to %d of a-z, 0-9 and _",
			    MP_STATUS_MAX);
	*out = v->u.string;
	return 0;
}

/* A string member: 0 with *out (NULL when absent), or -1 with err. */
static int string_at(yajl_val obj, const char *key, const char *path, bool required,
		     const char **out, char *err, size_t errlen)
{
	yajl_val v = optional(obj, key);

	*out = NULL;
	if (!v)
		return required ? fail(err, errlen, path, key, "is required") : 0;
	if (!YAJL_IS_STRING(v))
		return fail(err, errlen, path, key, "must be a string");
	*out = v->u.string;
	return 0;
}

/* Whether `s` is 1 to `max` characters of UTF-8 without control
 * characters. */
static bool text_ok(const char *s, long max)
{
	long chars = validate_utf8_chars(s, strlen(s));

	return chars > 0 && chars <= max && !validate_has_control(s);
}

/* An amount in reais: a JSON number, read from its text. */
static int cents_at(yajl_val obj, const char *key, const char *path, int64_t *cents, char *err,
		    size_t errlen)
{
	yajl_val v = optional(obj, key);

	if (!v)
		return fail(err, errlen, path, key, "is required");
	if (!YAJL_IS_NUMBER(v) || bankpix_reais_cents(v->u.number.r, cents) < 0)
		return fail(err, errlen, path, key,
			    "must be a number of reais from 0.01 to 9999999999.99 with at most 2 "
			    "decimal places, like 10.5");
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

/* A moment member: 0 with *ms, or -1 with err. */
static int moment_at(yajl_val obj, const char *key, const char *path, long long *ms, char *err,
		     size_t errlen)
{
	const char *s;

	if (string_at(obj, key, path, true, &s, err, errlen) < 0)
		return -1;
	if (moment_ms(s, ms) < 0)
		return fail(err, errlen, path, key, MOMENT_RULE);
	return 0;
}

/* ---- a payment ---- */

enum kind { NOT_ITEM, ITEM, UNKNOWN };

/* What a payment's status says of the money (MP-ST; the header). */
static enum kind status_kind(const char *s)
{
	static const char *const items[] = {"approved", "refunded", "charged_back", "in_mediation"};
	static const char *const others[] = {"pending", "in_process", "authorized", "cancelled",
					     "rejected"};

	for (size_t i = 0; i < sizeof(items) / sizeof(*items); i++)
		if (strcmp(s, items[i]) == 0)
			return ITEM;
	for (size_t i = 0; i < sizeof(others) / sizeof(*others); i++)
		if (strcmp(s, others[i]) == 0)
			return NOT_ITEM;
	return UNKNOWN;
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

static void refunds_free(struct bankpix_refund *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(r[i].json);
	free(r);
}

/* One refund `v` at `rpath` into *r (json owned), or -1 with err. */
static int refund_read(yajl_val v, const char *rpath, struct bankpix_refund *r, char *err,
		       size_t errlen)
{
	const char *id, *status, *motivo = NULL;
	yajl_val reason;
	long long ms;
	char valor[24], when[25];
	int st;
	yajl_gen g;

	if (!YAJL_IS_OBJECT(v))
		return fail(err, errlen, rpath, "", "must be an object");
	if (id_at(v, rpath, &id, err, errlen) < 0 ||
	    status_at(v, "status", rpath, true, &status, err, errlen) < 0)
		return -1;
	if ((st = refund_status(status)) < 0)
		return fail(err, errlen, rpath, "status", REFUND_STATUS_RULE);
	if (cents_at(v, "amount", rpath, &r->cents, err, errlen) < 0 ||
	    moment_at(v, "date_created", rpath, &ms, err, errlen) < 0)
		return -1;
	reason = optional(v, "reason");
	if (YAJL_IS_STRING(reason) && text_ok(reason->u.string, BANKPIX_TEXT_MAX))
		motivo = reason->u.string;
	snprintf(r->id, sizeof(r->id), "%s", id);
	r->rtr_id[0] = '\0';
	r->status = (enum bankpix_refund_status)st;

	bankpix_cents_text(r->cents, valor);
	timefmt_rfc3339(when, (uint64_t)ms);
	g = json_gen_new();
	json_open(g);
	json_str(g, "id");
	json_str(g, r->id);
	json_str(g, "valor");
	json_str(g, valor);
	json_str(g, "horario");
	json_open(g);
	json_str(g, "solicitacao");
	json_str(g, when);
	json_close(g);
	if (motivo) {
		json_str(g, "motivo");
		json_str(g, motivo);
	}
	json_str(g, "status");
	json_str(g, bankpix_refund_status_name(r->status));
	json_close(g);
	r->json = json_take(g);
	return 0;
}

/* The refunds rs[0..n) into *out (n of them), or -1 with err. */
static int refunds_read(yajl_val *rs, size_t n, const char *path, struct bankpix_refund **out,
			char *err, size_t errlen)
{
	struct bankpix_refund *list = n ? mem_calloc(n, sizeof(*list)) : NULL;
	char rpath[64];

	for (size_t j = 0; j < n; j++) {
		snprintf(rpath, sizeof(rpath), "%s%srefunds[%zu]", path, path[0] ? "." : "", j);
		if (refund_read(rs[j], rpath, &list[j], err, errlen) < 0) {
			refunds_free(list, n);
			return -1;
		}
	}
	*out = list;
	return 0;
}

/* The external_reference the merchant's event shows, or NULL. */
static const char *reference_of(yajl_val pay)
{
	yajl_val ext = optional(pay, "external_reference");

	return YAJL_IS_STRING(ext) && text_ok(ext->u.string, REFERENCE_MAX) ? ext->u.string : NULL;
}

int mp_payment_pix(yajl_val pay, const char *path, struct bankpix *out, char *err, size_t errlen)
{
	const char *id, *status, *detail = NULL, *method, *ref;
	struct bankpix_refund *refunds = NULL;
	size_t nrefunds = 0;
	yajl_val rs;
	int64_t cents;
	long long ms;
	char valor[24], when[25];
	bool txid;
	yajl_gen g;

	if (!YAJL_IS_OBJECT(pay))
		return fail(err, errlen, path, "", "must be an object");
	if (id_at(pay, path, &id, err, errlen) < 0 ||
	    string_at(pay, "payment_method_id", path, true, &method, err, errlen) < 0)
		return -1;
	if (strcmp(method, "pix") != 0)
		return MP_NOT_RECEIVED;
	if (status_at(pay, "status", path, true, &status, err, errlen) < 0 ||
	    status_at(pay, "status_detail", path, false, &detail, err, errlen) < 0)
		return -1;
	switch (status_kind(status)) {
	case NOT_ITEM:
		return MP_NOT_RECEIVED;
	case UNKNOWN:
		return fail(err, errlen, path, "status",
			    "is not one of Mercado Pago's payment statuses");
	case ITEM:
		break;
	}
	if (cents_at(pay, "transaction_amount", path, &cents, err, errlen) < 0 ||
	    moment_at(pay, "date_approved", path, &ms, err, errlen) < 0)
		return -1;
	rs = optional(pay, "refunds");
	if (rs && !YAJL_IS_ARRAY(rs))
		return fail(err, errlen, path, "refunds", "must be an array");
	if (rs && rs->u.array.len > BANKPIX_REFUNDS_MAX)
		return fail(err, errlen, path, "refunds", "more than %d refunds of one payment",
			    BANKPIX_REFUNDS_MAX);
	if (rs) {
		nrefunds = rs->u.array.len;
		if (refunds_read(rs->u.array.values, nrefunds, path, &refunds, err, errlen) < 0)
			return -1;
	}
	ref = reference_of(pay);

	txid = ref && bankpix_is_alnum(ref, 1, BANKPIX_TXID_MAX);
	memset(out, 0, sizeof(*out));
	snprintf(out->id, sizeof(out->id), MP_ID_PREFIX "%s", id);
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
	json_str(g, "mercadopago");
	json_str(g, "paymentId");
	json_str(g, id);
	if (ref) {
		json_str(g, "externalReference");
		json_str(g, ref);
	}
	json_str(g, "status");
	json_str(g, status);
	json_str(g, "statusDetail");
	json_str_or_null(g, detail);
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
	const char *buf, *id;
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
	v = json_get(pay, "transaction_amount");
	if (!YAJL_IS_NUMBER(v) || bankpix_reais_cents(v->u.number.r, &r->cents) < 0)
		r->cents = -1;
	v = json_get(pay, "date_approved");
	if (!YAJL_IS_STRING(v) || moment_ms(v->u.string, &r->horario_ms) < 0)
		r->horario_ms = 0;
	if ((id = id_text(json_get(pay, "id")))) {
		snprintf(r->id, sizeof(r->id), MP_ID_PREFIX "%s", id);
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

/* The payments ps[0..n) (a page's results, or the one payment of GET
 * /v1/payments/{id}: `one`) into *out. */
static void page_read(yajl_val *ps, size_t n, bool one, struct bankpix_batch *out)
{
	struct bankpix_batch b = {0};
	char path[32], err[BANKPIX_ERR_MAX];

	if (n) {
		b.items = mem_calloc(n, sizeof(*b.items));
		b.refused = mem_calloc(n, sizeof(*b.refused));
	}
	for (size_t i = 0; i < n; i++) {
		int rc;

		if (one)
			path[0] = '\0';
		else
			snprintf(path, sizeof(path), "results[%zu]", i);
		rc = mp_payment_pix(ps[i], path, &b.items[b.n], err, sizeof(err));
		if (rc == 0)
			b.n++;
		else if (rc < 0)
			refusal_make(ps[i], i, err, &b.refused[b.nrefused++]);
	}
	*out = b;
}

int mp_payment_parse(const char *body, size_t len, struct bankpix_batch *out, char *err,
		     size_t errlen)
{
	yajl_val root = NULL;
	int rc = MP_MALFORMED;

	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	page_read(&root, 1, true, out);
	rc = MP_OK;
done:
	yajl_tree_free(root);
	return rc;
}

/* paging.<key>: a whole number from 0 to PAGING_MAX. */
static int paging_at(yajl_val paging, const char *key, int64_t *out, char *err, size_t errlen)
{
	yajl_val v = json_get(paging, key);

	if (!v)
		return fail(err, errlen, "paging", key, "is required");
	if (!json_is_int64(v, out) || *out < 0 || *out > PAGING_MAX)
		return fail(err, errlen, "paging", key, "must be a whole number from 0 to %lld",
			    PAGING_MAX);
	return 0;
}

int mp_search_parse(const char *body, size_t len, struct bankpix_batch *out, bool *has_more,
		    char *err, size_t errlen)
{
	yajl_val root = NULL, paging, list;
	int64_t total, limit, offset;
	int rc = MP_MALFORMED;

	if (json_parse_object_max(body, len, PAGE_VALUES, &root, err, errlen) < 0)
		goto done;
	list = json_get(root, "results");
	if (!YAJL_IS_ARRAY(list)) {
		fail(err, errlen, "", "results", list ? "must be an array" : "is required");
		goto done;
	}
	if (list->u.array.len > MP_PAGE_MAX) {
		fail(err, errlen, "", "results", "more than %d in one page", MP_PAGE_MAX);
		rc = MP_TOO_MANY;
		goto done;
	}
	paging = json_get(root, "paging");
	if (!YAJL_IS_OBJECT(paging)) {
		fail(err, errlen, "", "paging", paging ? "must be an object" : "is required");
		goto done;
	}
	if (paging_at(paging, "total", &total, err, errlen) < 0 ||
	    paging_at(paging, "limit", &limit, err, errlen) < 0 ||
	    paging_at(paging, "offset", &offset, err, errlen) < 0)
		goto done;
	page_read(list->u.array.values, list->u.array.len, false, out);
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
	    text_ok(v->u.string, MP_ACTION_MAX))
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
	    cents_at(root, "transaction_amount", "", &c.cents, err, errlen) < 0)
		goto done;
	v = optional(root, "point_of_interaction");
	v = YAJL_IS_OBJECT(v) ? optional(v, "transaction_data") : NULL;
	v = YAJL_IS_OBJECT(v) ? optional(v, "qr_code") : NULL;
	if (v && (!YAJL_IS_STRING(v) || !text_ok(v->u.string, MP_QR_MAX))) {
		fail(err, errlen, "", "point_of_interaction.transaction_data.qr_code",
		     "must be 1 to %d characters, no control characters", MP_QR_MAX);
		goto done;
	}
	if (v)
		qr = v->u.string;
	else if (strcmp(status, "pending") == 0) {
		fail(err, errlen, "", "point_of_interaction.transaction_data.qr_code",
		     "is required for a pending Pix");
		goto done;
	}
	v = optional(root, "external_reference");
	if (YAJL_IS_STRING(v) && strlen(v->u.string) <= MP_REFERENCE_MAX) {
		size_t i = 0;

		while (v->u.string[i] > ' ' && (unsigned char)v->u.string[i] < 0x7f)
			i++;
		if (i > 0 && !v->u.string[i])
			snprintf(c.external_reference, sizeof(c.external_reference), "%s",
				 v->u.string);
	}
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
		fail(err, errlen, "", "status", REFUND_STATUS_RULE);
		goto done;
	}
	if (cents_at(root, "amount", "", &r.cents, err, errlen) < 0)
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

/* `cents` as a JSON number of reais, written as exact text. */
static void reais(yajl_gen g, int64_t cents)
{
	char text[24];

	bankpix_cents_text(cents, text);
	json_raw(g, text, strlen(text));
}

char *mp_payment_body(int64_t cents, const char *description, const char *payer_email,
		      const char *external_reference, const char *date_of_expiration)
{
	yajl_gen g = json_gen_new();

	json_open(g);
	json_str(g, "transaction_amount");
	reais(g, cents);
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
		reais(g, cents);
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
