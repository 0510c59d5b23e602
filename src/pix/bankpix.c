/* bankpix: the body of a bank's Pix webhook ({"pix": [...]}, API Pix 2.9.0,
 * or the list alone as some banks post it)
 * read item by item against the standard's schema, each Pix turned into a
 * struct bankpix (exact cents, its refunds, a canonical JSON for the
 * merchant's event) or into a refusal naming the field at fault. What is
 * done with them (matching charges, deduplication, events) is the bank
 * store's (src/store/banks.c); this file has no I/O.
 */
#include "pixrelay/pix/bankpix.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/core/validate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Values one Pix may bring at most (its object, its fields, componentesValor
 * and up to BANKPIX_REFUNDS_MAX refunds with theirs); the tree of a whole
 * body is capped at this times BANKPIX_ITEMS_MAX, a small multiple of the
 * largest body the HTTP server takes anyway. */
#define VALUES_PER_ITEM 64
#define BODY_VALUES (BANKPIX_ITEMS_MAX * VALUES_PER_ITEM + 16)
/* The most pages a GET /pix answer may announce (a billion Pix). */
#define PAGES_MAX 1000000

static const char *const refund_status_names[] = {"EM_PROCESSAMENTO", "DEVOLVIDO", "NAO_REALIZADO"};

const char *bankpix_refund_status_name(enum bankpix_refund_status s)
{
	return (unsigned)s < 3 ? refund_status_names[s] : "?";
}

bool bankpix_is_alnum(const char *s, size_t min, size_t max)
{
	size_t n = 0;

	for (; s[n]; n++) {
		char c = s[n];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
			return false;
		if (n >= max)
			return false;
	}
	return n >= min;
}

int bankpix_valor_cents(const char *s, int64_t *cents)
{
	int64_t v = 0;
	size_t n = 0;

	while (s[n] >= '0' && s[n] <= '9') {
		if (n == 10)
			return -1;
		v = v * 10 + (s[n] - '0');
		n++;
	}
	if (n == 0 || s[n] != '.' || !(s[n + 1] >= '0' && s[n + 1] <= '9') ||
	    !(s[n + 2] >= '0' && s[n + 2] <= '9') || s[n + 3] != '\0')
		return -1;
	*cents = v * 100 + (s[n + 1] - '0') * 10 + (s[n + 2] - '0');
	return 0;
}

/* Characters of a JSON number of reais read at most. */
#define REAIS_TEXT_MAX 40

int bankpix_reais_cents(const char *s, int64_t *cents)
{
	int64_t c = 0;
	size_t i = 0, frac = 0;

	if (strlen(s) > REAIS_TEXT_MAX || !(s[0] >= '0' && s[0] <= '9'))
		return -1;
	if (s[0] == '0' && s[1] >= '0' && s[1] <= '9')
		return -1; /* JSON has no leading zeros */
	for (; s[i] >= '0' && s[i] <= '9'; i++) {
		if (c > BANKPIX_CENTS_MAX / 10)
			return -1;
		c = c * 10 + (s[i] - '0');
	}
	if (s[i] == '.') {
		i++;
		if (!(s[i] >= '0' && s[i] <= '9'))
			return -1;
		for (; s[i] >= '0' && s[i] <= '9'; i++, frac++)
			if (frac < 2)
				c = c * 10 + (s[i] - '0');
			else if (s[i] != '0')
				return -1; /* a fraction of a cent */
	}
	if (s[i])
		return -1; /* an exponent, a sign, anything else */
	for (; frac < 2; frac++)
		c *= 10;
	if (c < 1 || c > BANKPIX_CENTS_MAX)
		return -1;
	*cents = c;
	return 0;
}

char *bankpix_cents_text(int64_t cents, char out[24])
{
	snprintf(out, 24, "%lld.%02lld", (long long)(cents / 100), (long long)(cents % 100));
	return out;
}

int bankpix_charge_of_txid(const char *txid, char out[27])
{
	char id[IDS_ULID_LEN + 2];
	size_t n = strlen(txid);

	if (n == IDS_ULID_LEN)
		memcpy(id, txid, n + 1);
	else if (n == IDS_ULID_LEN - 1) {
		id[0] = '0';
		memcpy(id + 1, txid, n + 1);
	} else
		return -1;
	if (!ids_is_ulid(id))
		return -1;
	memcpy(out, id, IDS_ULID_LEN + 1);
	return 0;
}

/* ---- one item ---- */

/* Where the checks of one item stand: its place, and the reasons it is
 * refused so far ("pix[3].devolucoes[0].valor: must be ..."); past
 * BANKPIX_REASONS_MAX they are counted, not kept. */
struct where {
	size_t index;
	char reasons[BANKPIX_REASONS_MAX][BANKPIX_ERR_MAX];
	size_t n;
};

static int refuse(struct where *w, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Add a reason; always -1, so that a check can end with it. */
static int refuse(struct where *w, const char *field, const char *fmt, ...)
{
	va_list ap;
	char *out;
	int n;

	if (w->n++ >= BANKPIX_REASONS_MAX)
		return -1;
	out = w->reasons[w->n - 1];
	n = snprintf(out, BANKPIX_ERR_MAX, "pix[%zu]%s%s: ", w->index, field[0] ? "." : "", field);
	if (n < 0 || (size_t)n >= BANKPIX_ERR_MAX)
		return -1;
	va_start(ap, fmt);
	vsnprintf(out + n, BANKPIX_ERR_MAX - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* A member that may be absent: NULL for absent and for JSON null (the
 * schema makes none of the optional fields nullable; banks send null for
 * "none" all the same, and refusing a Pix for it would lose a payment). */
static yajl_val optional(yajl_val obj, const char *key)
{
	yajl_val v = json_get(obj, key);

	return v && !YAJL_IS_NULL(v) ? v : NULL;
}

/* A required or optional string member, at most `max` characters when max
 * is not 0. 0 with *out (NULL when optional and absent), or -1. */
static int string_field(struct where *w, yajl_val obj, const char *key, const char *field,
			int required, long max, const char **out)
{
	yajl_val v = required ? json_get(obj, key) : optional(obj, key);
	long chars;

	*out = NULL;
	if (!v) {
		if (required)
			return refuse(w, field, "is required");
		return 0;
	}
	if (!YAJL_IS_STRING(v))
		return refuse(w, field, "must be a string");
	if (max) {
		chars = validate_utf8_chars(v->u.string, strlen(v->u.string));
		if (chars < 0 || chars > max)
			return refuse(w, field, "must be at most %ld characters", max);
	}
	*out = v->u.string;
	return 0;
}

static int valor_field(struct where *w, yajl_val obj, const char *field, int64_t *cents,
		       const char **text)
{
	const char *s;

	if (string_field(w, obj, "valor", field, 1, 0, &s) < 0)
		return -1;
	if (bankpix_valor_cents(s, cents) < 0)
		return refuse(w, field,
			      "must be 1 to 10 digits, a dot and 2 digits, like \"110.00\"");
	*text = s;
	return 0;
}

int bankpix_time_ms(const char *s, long long *ms)
{
	size_t n = strlen(s);

	if (n < 20 || s[10] != 'T' || !(s[n - 1] == 'Z' || s[n - 6] == '+' || s[n - 6] == '-'))
		return -1;
	return timefmt_parse(s, ms) < 0 ? -1 : 0;
}

/* RFC 3339 with a time zone (the schema's date-time), bankpix_time_ms. */
static int time_field(struct where *w, yajl_val obj, const char *key, const char *field,
		      int required, long long *ms, const char **text)
{
	const char *s;

	if (string_field(w, obj, key, field, required, 0, &s) < 0)
		return -1;
	*text = s;
	if (!s)
		return 0;
	if (bankpix_time_ms(s, ms) < 0)
		return refuse(w, field,
			      "must be an RFC 3339 date-time with a time zone, like "
			      "\"2020-09-09T20:15:00.358Z\"");
	return 0;
}

/* Whether a refund's natureza is a name of the schema's kind (ORIGINAL,
 * MED_FRAUDE...): 1 to 31 of A-Z, 0-9 and _. */
static bool nature_name(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (n >= 31 ||
		    !((s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '_'))
			return false;
	return n > 0;
}

static int refund_parse(struct where *w, yajl_val v, size_t j, struct bankpix_refund *r)
{
	yajl_gen g;
	char f[64];
	const char *id, *rtr, *valor, *status, *natureza, *descricao, *motivo, *sol = NULL,
									       *liq = NULL;
	yajl_val horario;
	long long ms;
	int st = -1;

#define FIELD(name) (snprintf(f, sizeof(f), "devolucoes[%zu]%s%s", j, name[0] ? "." : "", name), f)
	if (!YAJL_IS_OBJECT(v))
		return refuse(w, FIELD(""), "must be an object");
	if (string_field(w, v, "id", FIELD("id"), 1, 0, &id) < 0)
		return -1;
	if (!bankpix_is_alnum(id, 1, BANKPIX_REFUND_ID_MAX))
		return refuse(w, FIELD("id"), "must be 1 to 35 letters or digits");
	if (string_field(w, v, "rtrId", FIELD("rtrId"), 1, 0, &rtr) < 0)
		return -1;
	if (!bankpix_is_alnum(rtr, BANKPIX_E2E_LEN, BANKPIX_E2E_LEN))
		return refuse(w, FIELD("rtrId"), "must be 32 letters or digits");
	if (valor_field(w, v, FIELD("valor"), &r->cents, &valor) < 0)
		return -1;
	if (string_field(w, v, "status", FIELD("status"), 1, 0, &status) < 0)
		return -1;
	for (int k = 0; k < 3; k++)
		if (strcmp(status, refund_status_names[k]) == 0)
			st = k;
	if (st < 0)
		return refuse(w, FIELD("status"),
			      "must be EM_PROCESSAMENTO, DEVOLVIDO or NAO_REALIZADO");
	horario = json_get(v, "horario");
	if (!horario)
		return refuse(w, FIELD("horario"), "is required");
	if (!YAJL_IS_OBJECT(horario))
		return refuse(w, FIELD("horario"), "must be an object");
	if (time_field(w, horario, "solicitacao", FIELD("horario.solicitacao"), 0, &ms, &sol) < 0 ||
	    time_field(w, horario, "liquidacao", FIELD("horario.liquidacao"), 0, &ms, &liq) < 0)
		return -1;
	if (string_field(w, v, "natureza", FIELD("natureza"), 0, BANKPIX_TEXT_MAX, &natureza) < 0 ||
	    string_field(w, v, "descricao", FIELD("descricao"), 0, BANKPIX_TEXT_MAX, &descricao) <
		0 ||
	    string_field(w, v, "motivo", FIELD("motivo"), 0, BANKPIX_TEXT_MAX, &motivo) < 0)
		return -1;
#undef FIELD
	snprintf(r->id, sizeof(r->id), "%s", id);
	snprintf(r->rtr_id, sizeof(r->rtr_id), "%s", rtr);
	r->status = (enum bankpix_refund_status)st;
	r->natureza[0] = '\0';
	if (natureza && nature_name(natureza))
		snprintf(r->natureza, sizeof(r->natureza), "%s", natureza);
	r->med = strncmp(r->natureza, "MED_", 4) == 0;

	g = json_gen_new();
	json_open(g);
	json_str(g, "id");
	json_str(g, id);
	json_str(g, "rtrId");
	json_str(g, rtr);
	json_str(g, "valor");
	json_str(g, valor);
	if (natureza) {
		json_str(g, "natureza");
		json_str(g, natureza);
	}
	if (descricao) {
		json_str(g, "descricao");
		json_str(g, descricao);
	}
	json_str(g, "horario");
	json_open(g);
	if (sol) {
		json_str(g, "solicitacao");
		json_str(g, sol);
	}
	if (liq) {
		json_str(g, "liquidacao");
		json_str(g, liq);
	}
	json_close(g);
	json_str(g, "status");
	json_str(g, status);
	if (motivo) {
		json_str(g, "motivo");
		json_str(g, motivo);
	}
	json_close(g);
	r->json = json_take(g);
	return 0;
}

static void refunds_free(struct bankpix_refund *r, size_t n)
{
	for (size_t j = 0; j < n; j++)
		free(r[j].json);
	free(r);
}

/* Whether componentesValor `comp` adds up to `cents` (enum bankpix_parts),
 * its original then in p->parts_original. Parts of other names are not
 * the standard's: left aside. */
static int parts_of(yajl_val comp, int64_t cents, struct bankpix *p)
{
	static const char *const names[] = {"original", "saque",      "troco",	 "multa",
					    "juros",	"abatimento", "desconto"};
	int64_t sum = 0, original = -1;

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		yajl_val part = json_get(comp, names[i]);
		const char *valor = YAJL_GET_STRING(json_get(part, "valor"));
		int64_t c = 0;

		if (!part)
			continue;
		if (!valor || bankpix_valor_cents(valor, &c) < 0)
			return BANKPIX_PARTS_WRONG;
		if (i == 0)
			original = c;
		sum += i < 5 ? c : -c;
	}
	if (original < 0 || sum != cents)
		return BANKPIX_PARTS_WRONG;
	p->parts_original = original;
	return BANKPIX_PARTS_ADD_UP;
}

/* Check item `v` into *p (its strings owned), or -1 with the reasons in w
 * and nothing owned in *p. Every field is checked, so that a refusal names
 * all that is wrong; what was readable stays in *p all the same: e2e when
 * well-formed, cents (else -1) and horario_ms (else 0). */
static int item_parse(struct where *w, yajl_val v, struct bankpix *p)
{
	const char *e2e, *txid = NULL, *valor = NULL, *horario = NULL, *chave = NULL, *info = NULL;
	yajl_val comp, dev;
	struct bankpix_refund *refunds = NULL;
	size_t nrefunds = 0, ndev = 0, before = w->n;
	yajl_gen g = NULL;
	long long ms = 0;
	int64_t cents = -1;
	int rc = -1;

	p->id[0] = '\0'; /* a bank's Pix is once by its endToEndId */
	p->cents = -1;
	p->horario_ms = 0;
	if (!YAJL_IS_OBJECT(v))
		return refuse(w, "", "must be an object");
	if (string_field(w, v, "endToEndId", "endToEndId", 1, 0, &e2e) == 0) {
		if (bankpix_is_alnum(e2e, BANKPIX_E2E_LEN, BANKPIX_E2E_LEN))
			memcpy(p->e2e, e2e, BANKPIX_E2E_LEN + 1);
		else
			refuse(w, "endToEndId", "must be 32 letters or digits");
	}
	if (string_field(w, v, "txid", "txid", 0, 0, &txid) == 0 && txid &&
	    !bankpix_is_alnum(txid, 1, BANKPIX_TXID_MAX))
		refuse(w, "txid", "must be 1 to 35 letters or digits");
	if (valor_field(w, v, "valor", &cents, &valor) == 0)
		p->cents = cents;
	if (time_field(w, v, "horario", "horario", 1, &ms, &horario) == 0 && horario)
		p->horario_ms = ms;
	string_field(w, v, "chave", "chave", 0, BANKPIX_CHAVE_MAX, &chave);
	string_field(w, v, "infoPagador", "infoPagador", 0, BANKPIX_TEXT_MAX, &info);
	comp = optional(v, "componentesValor");
	if (comp && !YAJL_IS_OBJECT(comp))
		refuse(w, "componentesValor", "must be an object");
	dev = optional(v, "devolucoes");
	if (dev && !YAJL_IS_ARRAY(dev) && !YAJL_IS_OBJECT(dev)) {
		refuse(w, "devolucoes", "must be an array of refunds");
		dev = NULL;
	}
	if (dev) {
		/* the standard's own example pixWebhook1 sends one refund as an
		 * object: read it as an array of one (docs/banks.md) */
		ndev = YAJL_IS_ARRAY(dev) ? dev->u.array.len : 1;
		if (ndev > BANKPIX_REFUNDS_MAX) {
			refuse(w, "devolucoes", "more than %d refunds", BANKPIX_REFUNDS_MAX);
			ndev = 0;
		}
		refunds = ndev ? mem_calloc(ndev, sizeof(*refunds)) : NULL;
		for (size_t j = 0; j < ndev; j++) {
			yajl_val r = YAJL_IS_ARRAY(dev) ? dev->u.array.values[j] : dev;
			if (refund_parse(w, r, j, &refunds[nrefunds]) == 0)
				nrefunds++;
		}
	}
	if (w->n > before)
		goto done;

	g = json_gen_new();
	json_open(g);
	json_str(g, "endToEndId");
	json_str(g, e2e);
	if (txid) {
		json_str(g, "txid");
		json_str(g, txid);
	}
	json_str(g, "valor");
	json_str(g, valor);
	if (comp) {
		json_str(g, "componentesValor");
		json_write_value(g, comp);
	}
	if (chave) {
		json_str(g, "chave");
		json_str(g, chave);
	}
	json_str(g, "horario");
	json_str(g, horario);
	if (info) {
		json_str(g, "infoPagador");
		json_str(g, info);
	}
	if (dev) {
		json_str(g, "devolucoes");
		json_open_array(g);
		for (size_t j = 0; j < nrefunds; j++)
			json_raw(g, refunds[j].json, strlen(refunds[j].json));
		json_close_array(g);
	}
	json_close(g);
	if (txid)
		memcpy(p->txid, txid, strlen(txid) + 1);
	else
		p->txid[0] = '\0';
	p->chave = chave ? mem_strdup(chave) : NULL;
	p->parts_original = 0;
	p->parts = comp ? parts_of(comp, cents, p) : BANKPIX_PARTS_NONE;
	p->json = json_take(g);
	g = NULL;
	p->refunds = refunds;
	p->nrefunds = nrefunds;
	refunds = NULL;
	nrefunds = 0;
	rc = 0;
done:
	refunds_free(refunds, nrefunds);
	if (g)
		yajl_gen_free(g);
	return rc;
}

/* What the merchant gets of a refused item `v` (index w->index, whose
 * readable parts item_parse left in p): its reasons as a JSON array, the
 * item as received, and what makes it once (its endToEndId, or the
 * SHA-256 of its canonical text). */
static void refusal_make(const struct where *w, yajl_val v, const struct bankpix *p,
			 struct bankpix_refusal *r)
{
	yajl_gen g = json_gen_new();
	size_t n = w->n < BANKPIX_REASONS_MAX ? w->n : BANKPIX_REASONS_MAX, len;
	const char *buf;

	memset(r, 0, sizeof(*r));
	r->index = w->index;
	memcpy(r->e2e, p->e2e, sizeof(r->e2e));
	snprintf(r->err, sizeof(r->err), "%s", n ? w->reasons[0] : "");
	r->cents = p->cents;
	r->horario_ms = p->horario_ms;
	json_open_array(g);
	for (size_t i = 0; i < n; i++)
		json_str(g, w->reasons[i]);
	if (w->n > n) {
		char more[64];

		snprintf(more, sizeof(more), "pix[%zu]: and %zu more", w->index, w->n - n);
		json_str(g, more);
	}
	json_close_array(g);
	r->reasons = json_take(g);
	g = json_gen_new();
	json_write_value(g, v);
	r->item = json_take(g);
	if (YAJL_IS_OBJECT(v) && YAJL_IS_STRING(json_get(v, "chave")))
		r->chave = mem_strdup(json_get(v, "chave")->u.string);
	if (r->e2e[0]) {
		snprintf(r->id, sizeof(r->id), "%s", r->e2e);
	} else {
		/* the same item sent again, its members in another order, is
		 * the same item */
		g = json_gen_new();
		json_write_canonical(g, v);
		buf = json_buf(g, &len);
		ids_sha256_hex(r->id, buf, len);
		yajl_gen_free(g);
	}
}

/* ---- the body ---- */

/* The items of the parsed body `root` into *out: its "pix", or the root
 * itself when it is an array (Inter posts the list bare). */
static int parse_root(yajl_val root, struct bankpix_batch *out, char *err, size_t errlen)
{
	yajl_val list;
	struct bankpix_batch b = {0};
	int rc = BANKPIX_MALFORMED;

	list = YAJL_IS_ARRAY(root) ? root : json_get(root, "pix");
	if (!list) {
		snprintf(err, errlen,
			 "pix: is required (a Pix notification is {\"pix\": [...]}, or its list "
			 "alone)");
		goto done;
	}
	if (!YAJL_IS_ARRAY(list)) {
		snprintf(err, errlen, "pix: must be an array");
		goto done;
	}
	if (list->u.array.len > BANKPIX_ITEMS_MAX) {
		snprintf(err, errlen, "pix: more than %d items in one notification",
			 BANKPIX_ITEMS_MAX);
		rc = BANKPIX_TOO_MANY;
		goto done;
	}
	if (list->u.array.len) {
		b.items = mem_calloc(list->u.array.len, sizeof(*b.items));
		b.refused = mem_calloc(list->u.array.len, sizeof(*b.refused));
	}
	for (size_t i = 0; i < list->u.array.len; i++) {
		struct bankpix *p = &b.items[b.n];
		struct where *w = mem_new(struct where);

		w->index = i;
		memset(p, 0, sizeof(*p));
		if (item_parse(w, list->u.array.values[i], p) == 0) {
			b.n++;
		} else {
			refusal_make(w, list->u.array.values[i], p, &b.refused[b.nrefused++]);
			memset(p, 0, sizeof(*p));
		}
		free(w);
	}
	*out = b;
	rc = BANKPIX_OK;
done:
	return rc;
}

int bankpix_parse(const char *body, size_t len, struct bankpix_batch *out, char *err, size_t errlen)
{
	yajl_val root = NULL;
	int rc = BANKPIX_MALFORMED;

	if (json_parse_container_max(body, len, BODY_VALUES, &root, err, errlen) == 0)
		rc = parse_root(root, out, err, errlen);
	yajl_tree_free(root);
	return rc;
}

int bankpix_parse_page(const char *body, size_t len, struct bankpix_batch *out, long *pages,
		       char *err, size_t errlen)
{
	yajl_val root = NULL, n;
	int64_t count = 0;
	int rc = BANKPIX_MALFORMED;

	if (json_parse_object_max(body, len, BODY_VALUES, &root, err, errlen) < 0)
		goto done;
	n = json_get(json_get(json_get(root, "parametros"), "paginacao"), "quantidadeDePaginas");
	if (!n) {
		snprintf(err, errlen, "parametros.paginacao.quantidadeDePaginas: is required");
		goto done;
	}
	if (!json_is_int64(n, &count) || count < 0) {
		snprintf(err, errlen,
			 "parametros.paginacao.quantidadeDePaginas: must be a whole number");
		goto done;
	}
	if (count > PAGES_MAX) {
		snprintf(err, errlen,
			 "parametros.paginacao.quantidadeDePaginas: must be at most %d", PAGES_MAX);
		goto done;
	}
	if (!json_get(root, "pix") || YAJL_IS_NULL(json_get(root, "pix"))) {
		/* the standard's PixConsultados requires no list: a page without
		 * one (a bank with nothing to list) is an empty page */
		memset(out, 0, sizeof(*out));
		rc = BANKPIX_OK;
	} else {
		rc = parse_root(root, out, err, errlen);
	}
	if (rc == BANKPIX_OK)
		*pages = count < 1 ? 1 : (long)count;
done:
	yajl_tree_free(root);
	return rc;
}

static void refusal_free(struct bankpix_refusal *r)
{
	free(r->reasons);
	free(r->item);
	free(r->chave);
}

size_t bankpix_batch_keep_chave(struct bankpix_batch *b, const char *chave)
{
	size_t kept = 0, dropped = 0;

	for (size_t i = 0; i < b->n; i++) {
		struct bankpix *p = &b->items[i];
		if (p->chave && strcasecmp(p->chave, chave) != 0) {
			refunds_free(p->refunds, p->nrefunds);
			free(p->json);
			free(p->chave);
			dropped++;
			continue;
		}
		b->items[kept++] = *p;
	}
	b->n = kept;
	kept = 0;
	for (size_t i = 0; i < b->nrefused; i++) {
		struct bankpix_refusal *r = &b->refused[i];
		if (r->chave && strcasecmp(r->chave, chave) != 0) {
			refusal_free(r);
			dropped++;
			continue;
		}
		b->refused[kept++] = *r;
	}
	b->nrefused = kept;
	return dropped;
}

void bankpix_batch_deinit(struct bankpix_batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		refunds_free(b->items[i].refunds, b->items[i].nrefunds);
		free(b->items[i].json);
		free(b->items[i].chave);
	}
	for (size_t i = 0; i < b->nrefused; i++)
		refusal_free(&b->refused[i]);
	free(b->items);
	free(b->refused);
	memset(b, 0, sizeof(*b));
}
