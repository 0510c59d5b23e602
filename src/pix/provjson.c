/* provjson: what the readers of woovi, asaas and mercadopago share (the
 * header), no I/O.
 */
#include "pixrelay/pix/provjson.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/validate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int provjson_fail(char *err, size_t errlen, const char *path, const char *field, const char *fmt,
		  ...)
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

void provjson_path(char *out, size_t size, const char *path, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(out, size, "%s%s", path, path[0] ? "." : "");

	if (n < 0 || (size_t)n >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(out + n, size - (size_t)n, fmt, ap);
	va_end(ap);
}

/* ---- predicates ---- */

bool provjson_is_token(const char *s, size_t max)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (n >= max || (unsigned char)s[n] <= ' ' || (unsigned char)s[n] >= 0x7f)
			return false;
	return n > 0;
}

bool provjson_is_id(const char *s, size_t max)
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

bool provjson_is_text(const char *s, long max)
{
	long chars = validate_utf8_chars(s, strlen(s));

	return chars > 0 && chars <= max && !validate_has_control(s);
}

bool provjson_is_e2e(const char *s)
{
	return s && bankpix_is_alnum(s, BANKPIX_E2E_LEN, BANKPIX_E2E_LEN);
}

/* ---- members ---- */

yajl_val provjson_optional(yajl_val obj, const char *key)
{
	yajl_val v = json_get(obj, key);

	return v && !YAJL_IS_NULL(v) ? v : NULL;
}

const char *provjson_text(yajl_val v, long max)
{
	return YAJL_IS_STRING(v) && provjson_is_text(v->u.string, max) ? v->u.string : NULL;
}

void provjson_token_copy(yajl_val v, char *out, size_t max)
{
	out[0] = '\0';
	if (YAJL_IS_STRING(v) && provjson_is_token(v->u.string, max))
		snprintf(out, max + 1, "%s", v->u.string);
}

int provjson_string_at(yajl_val obj, const char *key, const char *path, bool required, long max,
		       const char **out, char *err, size_t errlen)
{
	yajl_val v = provjson_optional(obj, key);
	long chars;

	if (!v) {
		if (required)
			return provjson_fail(err, errlen, path, key, "is required");
		*out = NULL;
		return 0;
	}
	if (!YAJL_IS_STRING(v))
		return provjson_fail(err, errlen, path, key, "must be a string");
	if (max) {
		chars = validate_utf8_chars(v->u.string, strlen(v->u.string));
		if (chars < 0 || chars > max || validate_has_control(v->u.string))
			return provjson_fail(
			    err, errlen, path, key,
			    "must be at most %ld characters, no control characters", max);
	}
	*out = v->u.string;
	return 0;
}

int provjson_id_at(yajl_val obj, const char *key, const char *path, size_t max, const char **out,
		   char *err, size_t errlen)
{
	const char *s;

	if (provjson_string_at(obj, key, path, true, 0, &s, err, errlen) < 0)
		return -1;
	if (!provjson_is_id(s, max))
		return provjson_fail(err, errlen, path, key,
				     "must be 1 to %zu letters, digits, '-' or '_'", max);
	*out = s;
	return 0;
}

int provjson_status_at(yajl_val obj, const char *path, size_t max, const char **out, char *err,
		       size_t errlen)
{
	const char *s;
	size_t n = 0;

	if (provjson_string_at(obj, "status", path, true, 0, &s, err, errlen) < 0)
		return -1;
	for (; s[n]; n++)
		if (n >= max || !((s[n] >= 'A' && s[n] <= 'Z') || s[n] == '_'))
			break;
	if (n == 0 || s[n])
		return provjson_fail(err, errlen, path, "status", "must be 1 to %zu of A-Z and _",
				     max);
	*out = s;
	return 0;
}

int provjson_reais_at(yajl_val obj, const char *key, const char *path, int64_t *cents, char *err,
		      size_t errlen)
{
	yajl_val v = provjson_optional(obj, key);
	int64_t c;

	if (!v)
		return provjson_fail(err, errlen, path, key, "is required");
	if (!YAJL_IS_NUMBER(v) || bankpix_reais_cents(v->u.number.r, &c) < 0)
		return provjson_fail(err, errlen, path, key,
				     "must be a number of reais from 0.01 to 9999999999.99 with "
				     "at most 2 decimal places, like 10.5");
	*cents = c;
	return 0;
}

int provjson_time_at(yajl_val obj, const char *key, const char *path, bool required,
		     provjson_time_fn parse, const char *rule, const char **text, long long *ms,
		     char *err, size_t errlen)
{
	const char *s;
	long long t;

	if (provjson_string_at(obj, key, path, required, 0, &s, err, errlen) < 0)
		return -1;
	if (s && parse(s, &t) < 0)
		return provjson_fail(err, errlen, path, key, "%s", rule);
	if (s)
		*ms = t;
	*text = s;
	return 0;
}

/* The required member `key` of the yajl type `type` (`rule` names it). */
static int typed_at(yajl_val obj, const char *key, const char *path, yajl_type type,
		    const char *rule, yajl_val *out, char *err, size_t errlen)
{
	yajl_val v = provjson_optional(obj, key);

	if (!v)
		return provjson_fail(err, errlen, path, key, "is required");
	if (v->type != type)
		return provjson_fail(err, errlen, path, key, "%s", rule);
	*out = v;
	return 0;
}

int provjson_object_at(yajl_val obj, const char *key, const char *path, yajl_val *out, char *err,
		       size_t errlen)
{
	return typed_at(obj, key, path, yajl_t_object, "must be an object", out, err, errlen);
}

int provjson_array_at(yajl_val obj, const char *key, const char *path, yajl_val *out, char *err,
		      size_t errlen)
{
	return typed_at(obj, key, path, yajl_t_array, "must be an array", out, err, errlen);
}

int provjson_bool_at(yajl_val obj, const char *key, const char *path, bool *out, char *err,
		     size_t errlen)
{
	yajl_val v = provjson_optional(obj, key);

	if (!v)
		return provjson_fail(err, errlen, path, key, "is required");
	if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v))
		return provjson_fail(err, errlen, path, key, "must be true or false");
	*out = YAJL_IS_TRUE(v);
	return 0;
}

int provjson_page_at(yajl_val root, const char *key, size_t max, yajl_val *list, char *err,
		     size_t errlen)
{
	yajl_val v;

	if (provjson_array_at(root, key, "", &v, err, errlen) < 0)
		return PROVJSON_MALFORMED;
	if (v->u.array.len > max) {
		provjson_fail(err, errlen, "", key, "more than %zu in one page", max);
		return PROVJSON_TOO_MANY;
	}
	*list = v;
	return PROVJSON_OK;
}

int provjson_refunds_at(yajl_val pay, const char *path, yajl_val *out, char *err, size_t errlen)
{
	yajl_val rs = provjson_optional(pay, "refunds");

	if (rs && !YAJL_IS_ARRAY(rs))
		return provjson_fail(err, errlen, path, "refunds", "must be an array");
	if (rs && rs->u.array.len > BANKPIX_REFUNDS_MAX)
		return provjson_fail(err, errlen, path, "refunds",
				     "more than %d refunds of one payment", BANKPIX_REFUNDS_MAX);
	*out = rs;
	return 0;
}

enum provjson_kind provjson_status_kind(const char *s, const char *const *items, size_t nitems,
					const char *const *others, size_t nothers)
{
	for (size_t i = 0; i < nitems; i++)
		if (strcmp(s, items[i]) == 0)
			return PROVJSON_ITEM;
	for (size_t i = 0; i < nothers; i++)
		if (strcmp(s, others[i]) == 0)
			return PROVJSON_NOT_ITEM;
	return PROVJSON_UNKNOWN;
}

/* ---- lenient reads ---- */

int64_t provjson_reais_peek(yajl_val v)
{
	int64_t c;

	return YAJL_IS_NUMBER(v) && bankpix_reais_cents(v->u.number.r, &c) == 0 ? c : -1;
}

long long provjson_time_peek(yajl_val v, provjson_time_fn parse)
{
	long long ms;

	return YAJL_IS_STRING(v) && parse(v->u.string, &ms) == 0 ? ms : 0;
}

/* ---- refunds ---- */

void provjson_hash_id(const char *s, size_t len, char out[BANKPIX_REFUND_ID_MAX + 1])
{
	char sha[65];

	ids_sha256_hex(sha, s, len);
	memcpy(out, sha, BANKPIX_REFUND_ID_MAX);
	out[BANKPIX_REFUND_ID_MAX] = '\0';
}

int provjson_refund_id(const char *own, char out[BANKPIX_REFUND_ID_MAX + 1])
{
	if (!own || !*own)
		return -1;
	if (bankpix_is_alnum(own, 1, BANKPIX_REFUND_ID_MAX))
		snprintf(out, BANKPIX_REFUND_ID_MAX + 1, "%s", own);
	else
		provjson_hash_id(own, strlen(own), out);
	return 0;
}

char *provjson_refund_json(const struct bankpix_refund *r, const char *when, const char *motivo)
{
	yajl_gen g = json_gen_new();
	char valor[24];

	bankpix_cents_text(r->cents, valor);
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
	if (r->natureza[0]) {
		json_str(g, "natureza");
		json_str(g, r->natureza);
	}
	if (motivo && *motivo) {
		json_str(g, "motivo");
		json_str(g, motivo);
	}
	json_str(g, "status");
	json_str(g, bankpix_refund_status_name(r->status));
	json_close(g);
	return json_take(g);
}

void provjson_med_add(struct bankpix_refund **refunds, size_t *n, const char *payment,
		      int64_t cents, enum bankpix_refund_status status, const char *when)
{
	struct bankpix_refund *r;
	char seed[128];

	if (*n >= BANKPIX_REFUNDS_MAX)
		return;
	*refunds = mem_realloc(*refunds, (*n + 1) * sizeof(**refunds));
	r = &(*refunds)[(*n)++];
	memset(r, 0, sizeof(*r));
	/* one per payment: each of its statuses is then one event */
	snprintf(seed, sizeof(seed), "med|%s", payment);
	provjson_hash_id(seed, strlen(seed), r->id);
	r->cents = cents;
	r->status = status;
	r->med = 1;
	snprintf(r->natureza, sizeof(r->natureza), "%s", PROVJSON_MED_NATURE);
	r->json = provjson_refund_json(r, when, NULL);
}

void provjson_refunds_free(struct bankpix_refund *r, size_t n)
{
	for (size_t i = 0; r && i < n; i++)
		free(r[i].json);
	free(r);
}

/* ---- a payment as a bankpix ---- */

yajl_gen provjson_pix_begin(struct bankpix *out, const char *prefix, const char *id,
			    const char *e2e, const char *ref, int64_t cents, long long ms)
{
	yajl_gen g = json_gen_new();
	char valor[24];
	bool std_e2e = provjson_is_e2e(e2e);
	bool txid = ref && bankpix_is_alnum(ref, 1, BANKPIX_TXID_MAX);

	memset(out, 0, sizeof(*out));
	snprintf(out->id, sizeof(out->id), "%s%s", prefix, id);
	if (std_e2e)
		snprintf(out->e2e, sizeof(out->e2e), "%s", e2e);
	if (txid)
		snprintf(out->txid, sizeof(out->txid), "%s", ref);
	out->chave = NULL;
	out->cents = cents;
	out->parts = BANKPIX_PARTS_NONE;
	out->horario_ms = ms;

	bankpix_cents_text(cents, valor);
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
	return g;
}

void provjson_pix_provider(yajl_gen g, const struct bankpix_refund *refunds, size_t n,
			   const char *name)
{
	json_str(g, "devolucoes");
	json_open_array(g);
	for (size_t j = 0; j < n; j++)
		json_raw(g, refunds[j].json, strlen(refunds[j].json));
	json_close_array(g);
	json_str(g, "provider");
	json_open(g);
	json_str(g, "name");
	json_str(g, name);
}

void provjson_pix_payment(yajl_gen g, const char *id, const char *ref, const char *status)
{
	json_str(g, "paymentId");
	json_str(g, id);
	if (ref) {
		json_str(g, "externalReference");
		json_str(g, ref);
	}
	json_str(g, "status");
	json_str(g, status);
}

void provjson_pix_end(yajl_gen g, struct bankpix *out, struct bankpix_refund *refunds, size_t n)
{
	json_close(g);
	json_close(g);
	out->json = json_take(g);
	out->refunds = refunds;
	out->nrefunds = n;
}

void provjson_gen_reais(yajl_gen g, int64_t cents)
{
	char text[24];

	bankpix_cents_text(cents, text);
	json_raw(g, text, strlen(text));
}

/* ---- a page ---- */

void provjson_refusal_make(yajl_val item, size_t index, const char *err, const char *prefix,
			   const char *id, struct bankpix_refusal *r)
{
	yajl_gen g = json_gen_new();
	const char *buf;
	size_t len;

	memset(r, 0, sizeof(*r));
	r->index = index;
	snprintf(r->err, sizeof(r->err), "%s", err);
	json_open_array(g);
	json_str(g, r->err);
	json_close_array(g);
	r->reasons = json_take(g);
	g = json_gen_new();
	json_write_value(g, item);
	r->item = json_take(g);
	r->cents = -1;
	r->horario_ms = 0;
	if (id) {
		snprintf(r->id, sizeof(r->id), "%s%s", prefix, id);
	} else {
		/* the same item sent again, its members in another order, is
		 * the same item */
		g = json_gen_new();
		json_write_canonical(g, item);
		buf = json_buf(g, &len);
		ids_sha256_hex(r->id, buf, len);
		yajl_gen_free(g);
	}
}

void provjson_items_read(yajl_val *vs, size_t n, const char *list, const char *one,
			 provjson_item_fn item, provjson_refuse_fn refuse,
			 struct bankpix_batch *out)
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
			snprintf(path, sizeof(path), "%s[%zu]", list, i);
		rc = item(vs[i], path, &b.items[b.n], err, sizeof(err));
		if (rc == 0)
			b.n++;
		else if (rc < 0)
			refuse(vs[i], i, err, &b.refused[b.nrefused++]);
	}
	*out = b;
}

int provjson_item_parse(const char *body, size_t len, provjson_item_fn item,
			provjson_refuse_fn refuse, struct bankpix_batch *out, char *err,
			size_t errlen)
{
	yajl_val root = NULL;
	int rc = PROVJSON_MALFORMED;

	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	provjson_items_read(&root, 1, "", "", item, refuse, out);
	rc = PROVJSON_OK;
done:
	yajl_tree_free(root);
	return rc;
}

int provjson_page_parse(const char *body, size_t len, size_t max_values, const char *key,
			size_t max, yajl_val *root, yajl_val *list, char *err, size_t errlen)
{
	yajl_val tree = NULL, v;
	int rc = PROVJSON_MALFORMED;

	if (json_parse_object_max(body, len, max_values, &tree, err, errlen) < 0)
		goto done;
	rc = provjson_page_at(tree, key, max, &v, err, errlen);
	if (rc != PROVJSON_OK)
		goto done;
	*root = tree;
	*list = v;
	tree = NULL;
done:
	yajl_tree_free(tree);
	return rc;
}
