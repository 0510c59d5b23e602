/* recurrence: a recurrence's create request read field by field, the
 * bodies of /locrec, /rec and PATCH /rec, the bank's answers held against
 * what was asked, the JORNADA_2 QR checked, and the /rec callback read item
 * by item (include/pixrelay/pix/recurrence.h says what each does).
 * relay/bankrec.c calls the bank with them; store/recurrences.c keeps the
 * result. */
#include "pixrelay/pix/recurrence.h"

#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/validate.h"
#include "pixrelay/pix/bankpix.h"
#include "pixrelay/pix/brcode.h"
#include "pixrelay/pix/taxid.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const period_names[] = {"WEEKLY", "MONTHLY", "QUARTERLY", "SEMIANNUAL",
					   "ANNUAL"};
static const char *const period_bcb[] = {"SEMANAL", "MENSAL", "TRIMESTRAL", "SEMESTRAL", "ANUAL"};
static const char *const status_names[] = {"CREATED", "APPROVED", "REJECTED", "EXPIRED",
					   "CANCELLED"};
static const char *const status_bcb[] = {"CRIADA", "APROVADA", "REJEITADA", "EXPIRADA",
					 "CANCELADA"};
static const char *const retry_names[] = {"NONE", "THREE_IN_SEVEN_DAYS"};
static const char *const retry_bcb[] = {"NAO_PERMITE", "PERMITE_3R_7D"};

#define NPERIODS (sizeof(period_names) / sizeof(period_names[0]))
#define NSTATUSES (sizeof(status_names) / sizeof(status_names[0]))

static const char *const known_fields[] = {
    "payer",   "contract", "object",	    "periodicity", "startDate",
    "endDate", "amount",   "minimumAmount", "retryPolicy", "postbackUrl",
};

const char *recurrence_period_name(int period)
{
	return period >= 0 && (size_t)period < NPERIODS ? period_names[period] : NULL;
}

const char *recurrence_period_bcb(int period)
{
	return period >= 0 && (size_t)period < NPERIODS ? period_bcb[period] : NULL;
}

const char *recurrence_status_name(int status)
{
	return status >= 0 && (size_t)status < NSTATUSES ? status_names[status] : NULL;
}

int recurrence_status_of_bcb(const char *s)
{
	for (size_t i = 0; s && i < NSTATUSES; i++)
		if (strcmp(s, status_bcb[i]) == 0)
			return (int)i;
	return -1;
}

bool recurrence_is_final(int status)
{
	return status == RECURRENCE_REJECTED || status == RECURRENCE_EXPIRED ||
	       status == RECURRENCE_CANCELLED;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* A text field: a string of 1 to `max` characters of valid UTF-8 without
 * control characters. `required`: absent is a fault. *out is malloc'd (NULL
 * when absent). */
static int text_field(yajl_val obj, const char *name, const char *shown, size_t max, int required,
		      char **out, char *err, size_t errlen)
{
	yajl_val v = json_get(obj, name);
	long n;

	if (!v || YAJL_IS_NULL(v)) {
		if (required)
			return fail(err, errlen, "%s: required", shown);
		return 0;
	}
	if (!YAJL_IS_STRING(v))
		return fail(err, errlen, "%s: must be a string", shown);
	n = validate_utf8_chars(v->u.string, strlen(v->u.string));
	if (n < 0)
		return fail(err, errlen, "%s: must be valid UTF-8", shown);
	if (validate_has_control(v->u.string))
		return fail(err, errlen, "%s: must not contain control characters", shown);
	if (validate_is_blank(v->u.string))
		return fail(err, errlen, "%s: must not be empty", shown);
	if ((size_t)n > max)
		return fail(err, errlen, "%s: must be at most %zu characters (got %ld)", shown, max,
			    n);
	*out = mem_strdup(v->u.string);
	return 0;
}

/* One of `names` (n of them): its index into *out. */
static int enum_field(yajl_val obj, const char *name, const char *const *names, size_t n, int *out,
		      char *err, size_t errlen)
{
	yajl_val v = json_get(obj, name);
	char list[160] = "";

	for (size_t i = 0; v && YAJL_IS_STRING(v) && i < n; i++)
		if (strcmp(v->u.string, names[i]) == 0) {
			*out = (int)i;
			return 0;
		}
	for (size_t i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			 i == 0 ? "" : (i + 1 == n ? " or " : ", "), names[i]);
	if (!v || YAJL_IS_NULL(v))
		return fail(err, errlen, "%s: required (%s)", name, list);
	return fail(err, errlen, "%s: must be %s", name, list);
}

/* A date YYYY-MM-DD into out (11 bytes). */
static int date_field(yajl_val obj, const char *name, int required, char *out, char *err,
		      size_t errlen)
{
	yajl_val v = json_get(obj, name);

	if (!v || YAJL_IS_NULL(v)) {
		if (required)
			return fail(err, errlen, "%s: required (YYYY-MM-DD)", name);
		return 0;
	}
	if (!YAJL_IS_STRING(v) || validate_date(v->u.string, NULL, NULL, NULL) < 0)
		return fail(err, errlen, "%s: must be a date YYYY-MM-DD", name);
	snprintf(out, 11, "%s", v->u.string);
	return 0;
}

/* An amount in cents, 1 .. RECURRENCE_MAX_AMOUNT. */
static int cents_field(yajl_val obj, const char *name, int64_t *out, char *err, size_t errlen)
{
	yajl_val v = json_get(obj, name);
	int64_t n = 0;

	if (!v || YAJL_IS_NULL(v))
		return 0;
	if (!json_is_int64(v, &n))
		return fail(err, errlen, "%s: must be an integer number of cents", name);
	if (n < 1 || n > RECURRENCE_MAX_AMOUNT)
		return fail(err, errlen, "%s: must be from 1 to %lld (cents)", name,
			    RECURRENCE_MAX_AMOUNT);
	*out = n;
	return 0;
}

static int parse_payer(yajl_val body, struct recurrence_input *in, char *err, size_t errlen)
{
	yajl_val payer = json_get(body, "payer");
	char *document = NULL;
	int rc = -1;

	if (!payer || YAJL_IS_NULL(payer))
		return fail(err, errlen, "payer: required ({\"name\", \"document\"})");
	if (!YAJL_IS_OBJECT(payer))
		return fail(err, errlen, "payer: must be an object {\"name\", \"document\"}");
	for (size_t i = 0; i < payer->u.object.len; i++) {
		const char *k = payer->u.object.keys[i];
		char e[JSON_ECHO_MAX + 1];
		if (strcmp(k, "name") != 0 && strcmp(k, "document") != 0)
			return fail(err, errlen,
				    "payer.%s: unknown field (payer has name, document)",
				    json_echo(e, k));
	}
	if (text_field(payer, "name", "payer.name", RECURRENCE_NAME_MAX, 1, &in->name, err,
		       errlen) < 0 ||
	    text_field(payer, "document", "payer.document", 32, 1, &document, err, errlen) < 0)
		goto done;
	if (taxid_normalize(document, in->document, NULL) < 0) {
		fail(err, errlen, "payer.document: not a valid CPF or CNPJ");
		goto done;
	}
	rc = 0;
done:
	free(document);
	return rc;
}

int recurrence_parse_create(yajl_val body, struct recurrence_input *out, char *err, size_t errlen)
{
	struct recurrence_input in;
	int period = 0, retry = 0;

	memset(&in, 0, sizeof(in));
	if (!YAJL_IS_OBJECT(body))
		return fail(err, errlen, "request body must be a JSON object");
	for (size_t i = 0; i < body->u.object.len; i++) {
		const char *k = body->u.object.keys[i];
		size_t j = 0;
		char e[JSON_ECHO_MAX + 1];
		while (j < sizeof(known_fields) / sizeof(known_fields[0]) &&
		       strcmp(k, known_fields[j]) != 0)
			j++;
		if (j == sizeof(known_fields) / sizeof(known_fields[0]))
			return fail(err, errlen,
				    "%s: unknown field (a recurrence has payer, contract, object, "
				    "periodicity, startDate, endDate, amount, minimumAmount, "
				    "retryPolicy, postbackUrl)",
				    json_echo(e, k));
	}
	if (parse_payer(body, &in, err, errlen) < 0 ||
	    text_field(body, "contract", "contract", RECURRENCE_TEXT_MAX, 1, &in.contract, err,
		       errlen) < 0 ||
	    text_field(body, "object", "object", RECURRENCE_TEXT_MAX, 1, &in.object, err, errlen) <
		0 ||
	    enum_field(body, "periodicity", period_names, NPERIODS, &period, err, errlen) < 0 ||
	    date_field(body, "startDate", 1, in.start, err, errlen) < 0 ||
	    date_field(body, "endDate", 0, in.end, err, errlen) < 0)
		goto fail;
	in.period = period;
	if (in.end[0] && strcmp(in.end, in.start) < 0) {
		fail(err, errlen, "endDate: must not be before startDate");
		goto fail;
	}
	if (cents_field(body, "amount", &in.amount, err, errlen) < 0 ||
	    cents_field(body, "minimumAmount", &in.minimum, err, errlen) < 0)
		goto fail;
	if (in.amount && in.minimum) {
		fail(err, errlen,
		     "minimumAmount: not with amount (a fixed amount has no minimum; give one "
		     "or the other)");
		goto fail;
	}
	if (enum_field(body, "retryPolicy", retry_names, 2, &retry, err, errlen) < 0)
		goto fail;
	in.retry = retry;
	if (text_field(body, "postbackUrl", "postbackUrl", VALIDATE_URL_MAX, 0, &in.postback_url,
		       err, errlen) < 0)
		goto fail;
	if (in.postback_url && !validate_is_http_url(in.postback_url)) {
		fail(err, errlen, "postbackUrl: must be an absolute http or https URL");
		goto fail;
	}
	*out = in;
	return 0;
fail:
	recurrence_input_deinit(&in);
	return -1;
}

void recurrence_input_deinit(struct recurrence_input *in)
{
	free(in->name);
	free(in->contract);
	free(in->object);
	free(in->postback_url);
	memset(in, 0, sizeof(*in));
}

static void cents_text(char out[32], int64_t cents)
{
	snprintf(out, 32, "%lld.%02lld", (long long)(cents / 100), (long long)(cents % 100));
}

char *recurrence_rec_body(const struct recurrence_input *in, int64_t loc_id)
{
	yajl_gen g = json_gen_new();
	char valor[32];

	json_open(g);
	json_str(g, "vinculo");
	json_open(g);
	json_str(g, "objeto");
	json_str(g, in->object);
	json_str(g, "devedor");
	json_open(g);
	json_str(g, strlen(in->document) == 11 ? "cpf" : "cnpj");
	json_str(g, in->document);
	json_str(g, "nome");
	json_str(g, in->name);
	json_close(g);
	json_str(g, "contrato");
	json_str(g, in->contract);
	json_close(g);
	json_str(g, "calendario");
	json_open(g);
	json_str(g, "dataInicial");
	json_str(g, in->start);
	if (in->end[0]) {
		json_str(g, "dataFinal");
		json_str(g, in->end);
	}
	json_str(g, "periodicidade");
	json_str(g, period_bcb[in->period]);
	json_close(g);
	if (in->amount || in->minimum) {
		cents_text(valor, in->amount ? in->amount : in->minimum);
		json_str(g, "valor");
		json_open(g);
		json_str(g, in->amount ? "valorRec" : "valorMinimoRecebedor");
		json_str(g, valor);
		json_close(g);
	}
	json_str(g, "politicaRetentativa");
	json_str(g, retry_bcb[in->retry]);
	json_str(g, "loc");
	json_int(g, loc_id);
	json_close(g);
	return json_take(g);
}

static int refuse(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (whylen > 0) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return RECURRENCE_REFUSED;
}

/* The string at obj.a[.b] or NULL. */
static const char *str_at(yajl_val obj, const char *a, const char *b)
{
	yajl_val v = json_get(obj, a);

	if (b)
		v = json_get(v, b);
	return YAJL_IS_STRING(v) ? v->u.string : NULL;
}

static const char *no_scheme(const char *s)
{
	return strncasecmp(s, "https://", 8) == 0 ? s + 8 : s;
}

int recurrence_read_locrec(const char *body, size_t len, int64_t *loc_id, char *location, char *why,
			   size_t whylen)
{
	yajl_val v = NULL;
	const char *loc;
	int64_t id = 0;
	char err[160];
	int rc;

	if (!body || json_parse_object(body, len, &v, err, sizeof(err)) < 0)
		return refuse(why, whylen, "the answer: not a JSON object");
	loc = str_at(v, "location", NULL);
	if (!json_is_int64(json_get(v, "id"), &id) || id < 0)
		rc = refuse(why, whylen, "id: missing or not an integer");
	else if (!loc || !*loc || strlen(no_scheme(loc)) > RECURRENCE_LOCATION_MAX ||
		 !validate_printable(loc, strlen(loc)))
		rc = refuse(why, whylen,
			    "location: missing, or not a location of at most %d "
			    "printable characters",
			    RECURRENCE_LOCATION_MAX);
	else {
		*loc_id = id;
		snprintf(location, RECURRENCE_LOCATION_MAX + 1, "%s", no_scheme(loc));
		rc = 0;
	}
	yajl_tree_free(v);
	return rc;
}

static bool is_idrec(const char *s)
{
	if (!s || strlen(s) != RECURRENCE_IDREC_LEN)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= 'A' && *p <= 'Z')))
			return false;
	return true;
}

/* An amount of the answer's valor against the one asked (0: none asked,
 * then none may be given). */
static int same_valor(yajl_val answer, const char *field, int64_t asked, char *why, size_t whylen)
{
	const char *s = str_at(answer, "valor", field);
	int64_t cents = 0;
	char a[32], b[32];

	if (!asked && !s)
		return 0;
	if (!s || bankpix_valor_cents(s, &cents) < 0)
		return refuse(why, whylen, "valor.%s: missing or not an amount", field);
	if (cents != asked) {
		cents_text(a, cents);
		cents_text(b, asked);
		return refuse(why, whylen, "valor.%s: %s, not the %s asked", field, a,
			      asked ? b : "none");
	}
	return 0;
}

static int same_text(yajl_val answer, const char *a, const char *b, const char *field,
		     const char *asked, char *why, size_t whylen)
{
	const char *s = str_at(answer, a, b);

	if (!s)
		return refuse(why, whylen, "%s: missing", field);
	if (strcmp(s, asked) != 0)
		return refuse(why, whylen, "%s: not the one sent", field);
	return 0;
}

int recurrence_read_rec(const char *body, size_t len, const struct recurrence_input *in,
			int64_t loc_id, char *idrec, char *why, size_t whylen)
{
	yajl_val v = NULL, vinculo, devedor, loc;
	const char *id, *doc;
	int64_t got_loc = 0;
	char err[160];
	int rc;

	if (!body || json_parse_object(body, len, &v, err, sizeof(err)) < 0)
		return refuse(why, whylen, "the answer: not a JSON object");
	id = str_at(v, "idRec", NULL);
	vinculo = json_get(v, "vinculo");
	devedor = json_get(vinculo, "devedor");
	doc = str_at(devedor, strlen(in->document) == 11 ? "cpf" : "cnpj", NULL);
	loc = json_get(v, "loc");
	if (!is_idrec(id))
		rc = refuse(why, whylen, "idRec: missing or not 29 letters and digits");
	else if (id[0] != 'R' || id[1] != (in->retry ? 'R' : 'N'))
		rc = refuse(why, whylen,
			    "idRec: %.29s does not begin with %s, as a recurrence whose retry "
			    "policy is %s",
			    id, in->retry ? "RR" : "RN", retry_bcb[in->retry]);
	else if (recurrence_status_of_bcb(str_at(v, "status", NULL)) != RECURRENCE_CREATED)
		rc = refuse(why, whylen, "status: not CRIADA");
	else if ((rc = same_text(v, "vinculo", "contrato", "vinculo.contrato", in->contract, why,
				 whylen)) != 0)
		;
	else if (!doc || strcmp(doc, in->document) != 0)
		rc = refuse(why, whylen, "vinculo.devedor: not the payer's document sent");
	else if ((rc = same_text(v, "calendario", "periodicidade", "calendario.periodicidade",
				 period_bcb[in->period], why, whylen)) != 0 ||
		 (rc = same_text(v, "calendario", "dataInicial", "calendario.dataInicial",
				 in->start, why, whylen)) != 0 ||
		 (rc = same_text(v, "politicaRetentativa", NULL, "politicaRetentativa",
				 retry_bcb[in->retry], why, whylen)) != 0 ||
		 (rc = same_valor(v, "valorRec", in->amount, why, whylen)) != 0 ||
		 (rc = same_valor(v, "valorMinimoRecebedor", in->minimum, why, whylen)) != 0)
		;
	else if (loc && (!json_is_int64(json_get(loc, "id"), &got_loc) || got_loc != loc_id))
		rc = refuse(why, whylen, "loc.id: not the location sent");
	else {
		snprintf(idrec, RECURRENCE_IDREC_LEN + 1, "%s", id);
		rc = 0;
	}
	yajl_tree_free(v);
	return rc;
}

/* One TLV field at s (n bytes left): its id, value and the bytes it
 * takes; -1 when it does not fit. */
static int tlv(const char *s, size_t n, int *id, const char **value, size_t *vlen)
{
	size_t len;

	if (n < 4)
		return -1;
	for (int i = 0; i < 4; i++)
		if (s[i] < '0' || s[i] > '9')
			return -1;
	*id = (s[0] - '0') * 10 + (s[1] - '0');
	len = (size_t)((s[2] - '0') * 10 + (s[3] - '0'));
	if (len == 0 || len > n - 4)
		return -1;
	*value = s + 4;
	*vlen = len;
	return (int)(4 + len);
}

/* Field `want` of the template value (n bytes); *value NULL when absent.
 * -1 when the template's fields do not fit. */
static int sub_field(const char *t, size_t n, int want, const char **value, size_t *vlen)
{
	*value = NULL;
	*vlen = 0;
	while (n > 0) {
		int id, used;
		const char *v;
		size_t l;
		if ((used = tlv(t, n, &id, &v, &l)) < 0)
			return -1;
		if (id == want) {
			*value = v;
			*vlen = l;
		}
		t += used;
		n -= (size_t)used;
	}
	return 0;
}

bool recurrence_check_code(const char *code, const char *location, char *why, size_t whylen)
{
	size_t n = code ? strlen(code) : 0, at = 0;
	const char *f26 = NULL, *f80 = NULL, *v, *gui;
	size_t l26 = 0, l80 = 0, l, lgui;
	int first = 1, saw63 = 0;
	char crc[5];

	if (n == 0 || n > BRCODE_MAX_LEN || !validate_printable(code, n)) {
		refuse(why, whylen, "not a BR Code of at most %d printable characters",
		       BRCODE_MAX_LEN);
		return false;
	}
	while (at < n) {
		int id, used = tlv(code + at, n - at, &id, &v, &l);
		if (used < 0 || saw63) {
			refuse(why, whylen, "its fields do not fit (at character %zu)", at);
			return false;
		}
		if (first && (id != 0 || l != 2 || memcmp(v, "01", 2) != 0)) {
			refuse(why, whylen, "field 00 is not first with 01");
			return false;
		}
		first = 0;
		if (id == 26) {
			f26 = v;
			l26 = l;
		} else if (id == 80) {
			f80 = v;
			l80 = l;
		} else if (id == 54) {
			refuse(why, whylen,
			       "it has an amount (54): a recurrence's QR asks no payment");
			return false;
		} else if (id == 63) {
			saw63 = 1;
			if (l != 4 || at + 8 != n) {
				refuse(why, whylen, "field 63 is not last with 4 characters");
				return false;
			}
			snprintf(crc, sizeof(crc), "%04X", brcode_crc16(code, at + 4));
			if (memcmp(crc, v, 4) != 0) {
				refuse(why, whylen, "its CRC (63) is not %s", crc);
				return false;
			}
		}
		at += (size_t)used;
	}
	if (!saw63) {
		refuse(why, whylen, "it has no CRC (63)");
		return false;
	}
	if (f26) {
		const char *k, *u;
		size_t kl, ul;
		if (sub_field(f26, l26, 1, &k, &kl) < 0 || sub_field(f26, l26, 25, &u, &ul) < 0) {
			refuse(why, whylen, "field 26's fields do not fit");
			return false;
		}
		if (k || u) {
			refuse(why, whylen,
			       "field 26 carries a %s: a recurrence's QR (JORNADA_2) asks no "
			       "payment now",
			       k ? "Pix key (26.01)" : "charge's location (26.25)");
			return false;
		}
	}
	if (!f80 || sub_field(f80, l80, 0, &gui, &lgui) < 0 ||
	    sub_field(f80, l80, 25, &v, &l) < 0) {
		refuse(why, whylen, "it has no recurrence (80)");
		return false;
	}
	if (!gui || lgui != strlen(BRCODE_GUI) || strncasecmp(gui, BRCODE_GUI, lgui) != 0) {
		refuse(why, whylen, "80.00 is not %s", BRCODE_GUI);
		return false;
	}
	if (!v) {
		refuse(why, whylen, "it has no recurrence's location (80.25)");
		return false;
	}
	if (l > 8 && strncasecmp(v, "https://", 8) == 0) {
		v += 8;
		l -= 8;
	}
	location = no_scheme(location);
	if (l != strlen(location) || memcmp(v, location, l) != 0) {
		char e[JSON_ECHO_MAX + 1], mine[BRCODE_MAX_LEN + 1];
		snprintf(mine, sizeof(mine), "%.*s", (int)l, v);
		refuse(why, whylen, "its location (80.25) %s is not the recurrence's %s",
		       json_echo(e, mine), location);
		return false;
	}
	return true;
}

int recurrence_read_qr(const char *body, size_t len, const char *idrec, const char *location,
		       char **code, char *why, size_t whylen)
{
	yajl_val v = NULL;
	const char *id, *jornada, *text;
	char err[160], reason[200];
	int rc;

	if (!body || json_parse_object(body, len, &v, err, sizeof(err)) < 0)
		return refuse(why, whylen, "the answer: not a JSON object");
	id = str_at(v, "idRec", NULL);
	jornada = str_at(v, "dadosQR", "jornada");
	text = str_at(v, "dadosQR", "pixCopiaECola");
	if (!id || strcmp(id, idrec) != 0)
		rc = refuse(why, whylen, "idRec: not the recurrence asked for");
	else if (!jornada || strcmp(jornada, "JORNADA_2") != 0)
		rc = refuse(why, whylen, "dadosQR.jornada: not JORNADA_2");
	else if (!text)
		rc = refuse(why, whylen, "dadosQR.pixCopiaECola: missing");
	else if (!recurrence_check_code(text, location, reason, sizeof(reason)))
		rc = refuse(why, whylen, "dadosQR.pixCopiaECola: %s", reason);
	else {
		*code = mem_strdup(text);
		rc = 0;
	}
	yajl_tree_free(v);
	return rc;
}

/* Printable ASCII of s, cut to size - 1 bytes, others as '?'. */
static void printable(char *out, size_t size, const char *s)
{
	size_t i = 0;

	for (; s && *s && i + 1 < size; s++, i++)
		out[i] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
	out[i] = '\0';
}

/* One RecNotification or RecCompleta item into *h: 0, or refuse with why. */
static int read_item(yajl_val item, struct recurrence_heard *h, char *why, size_t whylen)
{
	const char *id = str_at(item, "idRec", NULL);
	const char *st = str_at(item, "status", NULL);
	yajl_val hist = json_get(item, "atualizacao");
	yajl_val enc = json_get(item, "encerramento");
	yajl_val end = json_get(enc, "rejeicao");
	int status;

	memset(h, 0, sizeof(*h));
	if (!YAJL_IS_OBJECT(item))
		return refuse(why, whylen, "not an object");
	if (!is_idrec(id))
		return refuse(why, whylen, "idRec: missing or not 29 letters and digits");
	if ((status = recurrence_status_of_bcb(st)) < 0)
		return refuse(why, whylen,
			      "status: missing or not CRIADA, APROVADA, REJEITADA, EXPIRADA or "
			      "CANCELADA");
	if (!YAJL_IS_ARRAY(hist))
		return refuse(why, whylen, "atualizacao: missing or not an array");
	for (size_t i = 0; i < hist->u.array.len; i++) {
		yajl_val a = hist->u.array.values[i];
		const char *s = str_at(a, "status", NULL), *d = str_at(a, "data", NULL);
		if (!s || !d || recurrence_status_of_bcb(s) < 0)
			return refuse(why, whylen, "atualizacao[%zu]: needs status and data", i);
		if (strcmp(s, st) == 0)
			printable(h->at, sizeof(h->at), d);
	}
	snprintf(h->idrec, sizeof(h->idrec), "%s", id);
	h->status = status;
	if (!end)
		end = json_get(enc, "cancelamento");
	if (YAJL_IS_OBJECT(end)) {
		printable(h->code, sizeof(h->code), str_at(end, "codigo", NULL));
		printable(h->reason, sizeof(h->reason), str_at(end, "descricao", NULL));
		printable(h->by, sizeof(h->by), str_at(end, "solicitante", NULL));
	}
	return 0;
}

int recurrence_read_one(const char *body, size_t len, const char *idrec,
			struct recurrence_heard *out, char *why, size_t whylen)
{
	struct recurrence_heard h;
	yajl_val v = NULL;
	char err[160];
	int rc;

	if (!body || json_parse_object(body, len, &v, err, sizeof(err)) < 0)
		return refuse(why, whylen, "the answer: not a JSON object");
	rc = read_item(v, &h, why, whylen);
	if (rc == 0 && strcmp(h.idrec, idrec) != 0)
		rc = refuse(why, whylen, "idRec: not the recurrence asked for");
	if (rc == 0)
		*out = h;
	yajl_tree_free(v);
	return rc;
}

int recurrence_parse_notification(const char *body, size_t len, struct recurrence_batch *out,
				  char *err, size_t errlen)
{
	struct recurrence_batch b;
	yajl_val v = NULL, recs;
	int rc = RECURRENCE_PARSE_BAD;

	memset(&b, 0, sizeof(b));
	if (json_parse_object_max(body, len, (size_t)RECURRENCE_BATCH_MAX * 64, &v, err, errlen) <
	    0)
		goto done;
	recs = json_get(v, "recs");
	if (!YAJL_IS_ARRAY(recs)) {
		fail(err, errlen, "recs: missing or not an array (the body is {\"recs\": [...]})");
		goto done;
	}
	if (recs->u.array.len > RECURRENCE_BATCH_MAX) {
		fail(err, errlen, "recs: more than %d items", RECURRENCE_BATCH_MAX);
		rc = RECURRENCE_PARSE_TOO_MANY;
		goto done;
	}
	b.items = mem_calloc(recs->u.array.len + 1, sizeof(*b.items));
	b.refused = mem_calloc(recs->u.array.len + 1, sizeof(*b.refused));
	for (size_t i = 0; i < recs->u.array.len; i++) {
		char why[200];
		if (read_item(recs->u.array.values[i], &b.items[b.n], why, sizeof(why)) == 0)
			b.n++;
		else
			b.refused[b.nrefused++] = mem_printf("recs[%zu]: %s", i, why);
	}
	*out = b;
	memset(&b, 0, sizeof(b));
	rc = RECURRENCE_PARSE_OK;
done:
	recurrence_batch_deinit(&b);
	yajl_tree_free(v);
	return rc;
}

void recurrence_batch_deinit(struct recurrence_batch *b)
{
	for (size_t i = 0; i < b->nrefused; i++)
		free(b->refused[i]);
	free(b->refused);
	free(b->items);
	memset(b, 0, sizeof(*b));
}

bool recurrence_is_callback(const char *body, size_t len)
{
	size_t i = 0;

	while (i < len && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n'))
		i++;
	if (i >= len || body[i] != '{')
		return false;
	i++;
	while (i < len && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n'))
		i++;
	return len - i >= 6 && memcmp(body + i, "\"recs\"", 6) == 0;
}

char *recurrence_render_head(const struct recurrence_view *v)
{
	const struct recurrence_input *in = v->in;
	yajl_gen g = json_gen_new();
	char ms[24];
	const char *text;
	size_t len;
	char *head;

	json_open(g);
	json_str(g, "id");
	json_str(g, v->id);
	json_str(g, "idRec");
	json_str(g, v->idrec);
	json_str(g, "brCode");
	json_str(g, v->br_code);
	json_str(g, "brCodeImageUrl");
	json_str(g, v->image_url);
	json_str(g, "connection");
	json_str(g, v->connection);
	json_str(g, "payer");
	json_open(g);
	json_str(g, "name");
	json_str(g, in->name);
	json_str(g, "document");
	json_str(g, in->document);
	json_close(g);
	json_str(g, "contract");
	json_str(g, in->contract);
	json_str(g, "object");
	json_str(g, in->object);
	json_str(g, "periodicity");
	json_str(g, period_names[in->period]);
	json_str(g, "startDate");
	json_str(g, in->start);
	json_str(g, "endDate");
	json_str_or_null(g, in->end[0] ? in->end : NULL);
	json_str(g, "amount");
	if (in->amount)
		json_int(g, in->amount);
	else
		json_null(g);
	json_str(g, "minimumAmount");
	if (in->minimum)
		json_int(g, in->minimum);
	else
		json_null(g);
	json_str(g, "retryPolicy");
	json_str(g, retry_names[in->retry]);
	json_str(g, "postbackUrl");
	json_str_or_null(g, in->postback_url);
	json_str(g, "createdAt");
	snprintf(ms, sizeof(ms), "%llu", (unsigned long long)v->created_ms);
	json_time_ms(g, ms);
	json_close(g);
	text = json_buf(g, &len);
	/* "{...}" -> "{...," : the changing fields follow */
	head = mem_printf("%.*s,", (int)(len - 1), text);
	yajl_gen_free(g);
	return head;
}

char *recurrence_assemble(const char *head, const char *status, const char *updated_at,
			  const char *closing)
{
	if (closing && *closing)
		return mem_printf("%s\"status\":\"%s\",\"updatedAt\":\"%s\",\"closing\":%s}", head,
				  status, updated_at, closing);
	return mem_printf("%s\"status\":\"%s\",\"updatedAt\":\"%s\"}", head, status, updated_at);
}

char *recurrence_closing_json(const struct recurrence_heard *h)
{
	yajl_gen g;

	if (!h->code[0] && !h->reason[0] && !h->by[0])
		return NULL;
	g = json_gen_new();
	json_open(g);
	json_str(g, "code");
	json_str_or_null(g, h->code[0] ? h->code : NULL);
	json_str(g, "reason");
	json_str_or_null(g, h->reason[0] ? h->reason : NULL);
	json_str(g, "by");
	json_str_or_null(g, h->by[0] ? h->by : NULL);
	json_close(g);
	return json_take(g);
}
