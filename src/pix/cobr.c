/* cobr: a recurring charge's request read, checked against its recurrence
 * and the standard's window for sending it, its PUT /cobr body, the bank's
 * answer held against it (include/pixrelay/pix/cobr.h). */
#include "pixrelay/pix/cobr.h"

#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/validate.h"
#include "pixrelay/pix/bankpix.h"
#include "pixrelay/pix/chargedue.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COBR_MAX_AMOUNT 999999999999LL /* \d{1,10}\.\d{2} */

static int say(int rc, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int say(int rc, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

int cobr_parse_create(yajl_val body, struct cobr_input *out, char *err, size_t errlen)
{
	static const char *const names[] = {"amount", "dueDate"};
	struct cobr_input in;
	yajl_val a = json_get(body, "amount"), d = json_get(body, "dueDate");

	memset(&in, 0, sizeof(in));
	for (size_t i = 0; i < body->u.object.len; i++) {
		const char *k = body->u.object.keys[i];

		if (strcmp(k, names[0]) != 0 && strcmp(k, names[1]) != 0)
			return say(-1, err, errlen,
				   "%.40s: unknown field; allowed: amount, dueDate", k);
	}
	if (!a)
		return say(-1, err, errlen, "amount: required (cents)");
	if (!json_is_int64(a, &in.amount))
		return say(-1, err, errlen, "amount: must be an integer number of cents");
	if (in.amount < 1 || in.amount > COBR_MAX_AMOUNT)
		return say(-1, err, errlen, "amount: must be from 1 to %lld (cents)",
			   COBR_MAX_AMOUNT);
	if (!d)
		return say(-1, err, errlen, "dueDate: required (YYYY-MM-DD)");
	if (!YAJL_IS_STRING(d) || strlen(d->u.string) != 10 ||
	    validate_date(d->u.string, NULL, NULL, NULL) < 0)
		return say(-1, err, errlen, "dueDate: must be a date written YYYY-MM-DD");
	memcpy(in.due, d->u.string, 11);
	*out = in;
	return 0;
}

static void cents_text(char out[32], int64_t cents)
{
	snprintf(out, 32, "%lld.%02lld", (long long)(cents / 100), (long long)(cents % 100));
}

int cobr_check(const struct cobr_input *in, const struct cobr_terms *t, long long today, char *err,
	       size_t errlen)
{
	long long due = chargedue_day(in->due);
	char a[32], b[32];

	if (strcmp(t->status, "APPROVED") != 0)
		return say(COBR_NOT_APPROVED, err, errlen,
			   "the recurrence is %s: a recurring charge needs it APPROVED by the "
			   "payer; nothing was done",
			   t->status);
	if (t->amount && in->amount != t->amount) {
		cents_text(a, t->amount);
		return say(-1, err, errlen,
			   "amount: must be the recurrence's fixed amount, %lld (%s)",
			   (long long)t->amount, a);
	}
	if (t->minimum && in->amount < t->minimum) {
		cents_text(b, t->minimum);
		return say(-1, err, errlen,
			   "amount: must be at least the recurrence's minimum amount, %lld (%s)",
			   (long long)t->minimum, b);
	}
	if (due < today + COBR_AHEAD_MIN || due > today + COBR_AHEAD_MAX)
		return say(-1, err, errlen,
			   "dueDate: a recurring charge is sent %d to %d days before its due "
			   "date: from today that is a date from %d to %d days ahead",
			   COBR_AHEAD_MIN, COBR_AHEAD_MAX, COBR_AHEAD_MIN, COBR_AHEAD_MAX);
	if (strcmp(in->due, t->start) < 0)
		return say(-1, err, errlen, "dueDate: before the recurrence's startDate, %s",
			   t->start);
	if (t->end && t->end[0] && strcmp(in->due, t->end) > 0)
		return say(-1, err, errlen, "dueDate: after the recurrence's endDate, %s", t->end);
	return 0;
}

char *cobr_body(const char *idrec, const struct cobr_input *in, const struct cobr_recebedor *rcv)
{
	yajl_gen g = json_gen_new();
	char valor[32];

	cents_text(valor, in->amount);
	json_open(g);
	json_str(g, "idRec");
	json_str(g, idrec);
	json_str(g, "calendario");
	json_open(g);
	json_str(g, "dataDeVencimento");
	json_str(g, in->due);
	json_close(g);
	json_str(g, "valor");
	json_open(g);
	json_str(g, "original");
	json_str(g, valor);
	json_close(g);
	json_str(g, "ajusteDiaUtil");
	json_bool(g, 1);
	json_str(g, "recebedor");
	json_open(g);
	if (rcv->agencia && rcv->agencia[0]) {
		json_str(g, "agencia");
		json_str(g, rcv->agencia);
	}
	json_str(g, "conta");
	json_str(g, rcv->conta);
	json_str(g, "tipoConta");
	json_str(g, rcv->tipo_conta);
	json_close(g);
	json_close(g);
	return json_take(g);
}

/* The string at obj.a[.b] or NULL. */
static const char *str_at(yajl_val obj, const char *a, const char *b)
{
	yajl_val v = json_get(obj, a);

	if (b)
		v = json_get(v, b);
	return YAJL_IS_STRING(v) ? v->u.string : NULL;
}

int cobr_read_answer(const char *body, size_t len, const char *txid, const char *idrec,
		     const struct cobr_input *in, const struct cobr_recebedor *rcv, char *why,
		     size_t whylen)
{
	const struct {
		const char *a, *b, *name, *asked;
	} same[] = {
	    {"txid", NULL, "txid", txid},
	    {"idRec", NULL, "idRec", idrec},
	    {"status", NULL, "status", "CRIADA"},
	    {"calendario", "dataDeVencimento", "calendario.dataDeVencimento", in->due},
	    {"recebedor", "conta", "recebedor.conta", rcv->conta},
	};
	yajl_val v = NULL;
	const char *s;
	int64_t cents = 0;
	char err[160], a[32];
	int rc = 0;

	if (!body || json_parse_object(body, len, &v, err, sizeof(err)) < 0)
		return say(COBR_MISMATCH, why, whylen, "the answer: not a JSON object");
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]) && rc == 0; i++) {
		s = str_at(v, same[i].a, same[i].b);
		if (!s)
			rc = say(COBR_MISMATCH, why, whylen, "%s: missing", same[i].name);
		else if (strcmp(s, same[i].asked) != 0)
			rc = say(COBR_MISMATCH, why, whylen, "%s: %.40s, not the %s sent",
				 same[i].name, s, same[i].asked);
	}
	s = str_at(v, "valor", "original");
	if (rc == 0 && (!s || bankpix_valor_cents(s, &cents) < 0))
		rc = say(COBR_MISMATCH, why, whylen, "valor.original: missing or not an amount");
	else if (rc == 0 && cents != in->amount) {
		cents_text(a, cents);
		rc = say(COBR_MISMATCH, why, whylen, "valor.original: %s, not the amount asked", a);
	}
	yajl_tree_free(v);
	return rc;
}

/* ---- what the bank says ---- */

static bool alnum_len(const char *s, size_t lo, size_t hi)
{
	size_t n = s ? strlen(s) : 0;

	if (n < lo || n > hi)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z')))
			return false;
	return true;
}

/* s is one of the NULL-ended names. */
static bool one_of(const char *s, const char *const *names)
{
	for (; s && *names; names++)
		if (strcmp(s, *names) == 0)
			return true;
	return false;
}

static const char *const cobr_statuses[] = {"CRIADA",	 "ATIVA",     "CONCLUIDA", "EXPIRADA",
					    "REJEITADA", "CANCELADA", NULL};
static const char *const attempt_statuses[] = {"SOLICITADA", "AGENDADA", "PAGA", "CANCELADA",
					       "REJEITADA",  "EXPIRADA", NULL};
static const char *const attempt_types[] = {"AGND", "NTAG", "RIFL", NULL};

/* A rejeicao's or cancelamento's codigo: 1 to 4 letters and digits. */
static void code_of(yajl_val obj, char out[5])
{
	const char *c = str_at(obj, "codigo", NULL);

	if (alnum_len(c, 1, 4))
		snprintf(out, 5, "%s", c);
}

static int read_attempts(yajl_val list, struct cobr_heard *h, char *why, size_t whylen)
{
	if (!list)
		return 0;
	if (!YAJL_IS_ARRAY(list))
		return say(-1, why, whylen, "tentativas: not an array");
	for (size_t i = 0; i < list->u.array.len && h->nattempts < COBR_ATTEMPTS_MAX; i++) {
		yajl_val t = list->u.array.values[i];
		struct cobr_attempt *a = &h->attempts[h->nattempts];
		const char *d = str_at(t, "dataLiquidacao", NULL), *tipo = str_at(t, "tipo", NULL),
			   *st = str_at(t, "status", NULL);

		if (!d || strlen(d) != 10 || validate_date(d, NULL, NULL, NULL) < 0)
			return say(-1, why, whylen, "tentativas[%zu].dataLiquidacao: not a date",
				   i);
		if (!one_of(tipo, attempt_types))
			return say(-1, why, whylen, "tentativas[%zu].tipo: not AGND, NTAG or RIFL",
				   i);
		if (!one_of(st, attempt_statuses))
			return say(-1, why, whylen, "tentativas[%zu].status: not the standard's",
				   i);
		memset(a, 0, sizeof(*a));
		memcpy(a->date, d, 11);
		snprintf(a->tipo, sizeof(a->tipo), "%s", tipo);
		snprintf(a->status, sizeof(a->status), "%s", st);
		code_of(json_get(t, "rejeicao"), a->code);
		h->nattempts++;
	}
	return 0;
}

/* One CobRNotification or CobRCompleta into *h: 0, or -1 with why. */
static int read_item(yajl_val it, struct cobr_heard *h, char *why, size_t whylen)
{
	const char *idrec = str_at(it, "idRec", NULL), *txid = str_at(it, "txid", NULL),
		   *st = str_at(it, "status", NULL);
	yajl_val enc = json_get(it, "encerramento");

	memset(h, 0, sizeof(*h));
	if (!YAJL_IS_OBJECT(it))
		return say(-1, why, whylen, "not an object");
	if (!alnum_len(idrec, 29, 29))
		return say(-1, why, whylen, "idRec: missing or not 29 letters and digits");
	if (!alnum_len(txid, 26, 35))
		return say(-1, why, whylen, "txid: missing or not 26 to 35 letters and digits");
	if (!one_of(st, cobr_statuses))
		return say(-1, why, whylen, "status: missing or not the standard's");
	if (!YAJL_IS_ARRAY(json_get(it, "atualizacao")))
		return say(-1, why, whylen, "atualizacao: missing or not an array");
	snprintf(h->idrec, sizeof(h->idrec), "%s", idrec);
	snprintf(h->txid, sizeof(h->txid), "%s", txid);
	snprintf(h->status, sizeof(h->status), "%s", st);
	code_of(json_get(enc, "rejeicao"), h->code);
	if (!h->code[0])
		code_of(json_get(enc, "cancelamento"), h->code);
	return read_attempts(json_get(it, "tentativas"), h, why, whylen);
}

/* Append the items of `list` (an array, else nothing) to the pix array
 * open in g. */
static size_t add_pix(yajl_gen g, yajl_val list)
{
	size_t n = 0;

	for (size_t i = 0; YAJL_IS_ARRAY(list) && i < list->u.array.len; i++, n++)
		json_write_value(g, list->u.array.values[i]);
	return n;
}

int cobr_parse_notification(const char *body, size_t len, struct cobr_batch *out, char *err,
			    size_t errlen)
{
	struct cobr_batch b;
	yajl_val v = NULL, list;
	yajl_gen g = NULL;
	size_t npix = 0;
	int rc = COBR_PARSE_BAD;

	memset(&b, 0, sizeof(b));
	if (json_parse_object_max(body, len, (size_t)COBR_BATCH_MAX * 256, &v, err, errlen) < 0)
		goto done;
	list = json_get(v, "cobsr");
	if (!YAJL_IS_ARRAY(list)) {
		say(-1, err, errlen,
		    "cobsr: missing or not an array (the body is {\"cobsr\": [...]})");
		goto done;
	}
	if (list->u.array.len > COBR_BATCH_MAX) {
		say(-1, err, errlen, "cobsr: more than %d items", COBR_BATCH_MAX);
		rc = COBR_PARSE_TOO_MANY;
		goto done;
	}
	b.items = mem_calloc(list->u.array.len + 1, sizeof(*b.items));
	b.refused = mem_calloc(list->u.array.len + 1, sizeof(*b.refused));
	g = json_gen_new();
	json_open(g);
	json_str(g, "pix");
	json_open_array(g);
	for (size_t i = 0; i < list->u.array.len; i++) {
		char why[200];
		yajl_val it = list->u.array.values[i];

		if (read_item(it, &b.items[b.n], why, sizeof(why)) == 0) {
			b.n++;
			npix += add_pix(g, json_get(it, "pix"));
		} else {
			b.refused[b.nrefused++] = mem_printf("cobsr[%zu]: %s", i, why);
		}
	}
	json_close_array(g);
	json_close(g);
	if (npix)
		b.pix = json_take(g);
	else
		yajl_gen_free(g);
	g = NULL;
	*out = b;
	memset(&b, 0, sizeof(b));
	rc = COBR_PARSE_OK;
done:
	if (g)
		yajl_gen_free(g);
	cobr_batch_deinit(&b);
	yajl_tree_free(v);
	return rc;
}

void cobr_batch_deinit(struct cobr_batch *b)
{
	for (size_t i = 0; i < b->nrefused; i++)
		free(b->refused[i]);
	free(b->refused);
	free(b->items);
	free(b->pix);
	memset(b, 0, sizeof(*b));
}

int cobr_read_one(const char *body, size_t len, const char *txid, struct cobr_heard *out,
		  char **pix, char *why, size_t whylen)
{
	yajl_val v = NULL;
	struct cobr_heard h;
	yajl_gen g;
	char err[160];
	int rc = COBR_MISMATCH;

	if (!body || json_parse_object(body, len, &v, err, sizeof(err)) < 0) {
		say(0, why, whylen, "the answer: not a JSON object");
		goto done;
	}
	if (read_item(v, &h, why, whylen) < 0)
		goto done;
	if (strcmp(h.txid, txid) != 0) {
		say(0, why, whylen, "txid: not the charge's");
		goto done;
	}
	*out = h;
	*pix = NULL;
	if (YAJL_IS_ARRAY(json_get(v, "pix")) && json_get(v, "pix")->u.array.len) {
		g = json_gen_new();
		json_open(g);
		json_str(g, "pix");
		json_open_array(g);
		add_pix(g, json_get(v, "pix"));
		json_close_array(g);
		json_close(g);
		*pix = json_take(g);
	}
	rc = 0;
done:
	yajl_tree_free(v);
	return rc;
}

bool cobr_is_callback(const char *body, size_t len)
{
	size_t i = 0;

	while (i < len && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n'))
		i++;
	if (i >= len || body[i] != '{')
		return false;
	i++;
	while (i < len && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n'))
		i++;
	return len - i >= 7 && memcmp(body + i, "\"cobsr\"", 7) == 0;
}

char *cobr_attempt_lines(const struct cobr_heard *h)
{
	size_t size = h->nattempts * 40 + 1, n = 0;
	char *out = mem_alloc(size);

	out[0] = '\0';
	for (size_t i = 0; i < h->nattempts; i++) {
		const struct cobr_attempt *a = &h->attempts[i];

		n += (size_t)snprintf(out + n, size - n, "%s%s %s %s %s", i ? "\n" : "", a->date,
				      a->tipo, a->status, a->code[0] ? a->code : "-");
	}
	return out;
}
