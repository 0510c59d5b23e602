/* cobr: a recurring charge's request read, checked against its recurrence
 * and the standard's window for sending it, its PUT /cobr body, the bank's
 * answer held against it (include/pixrelay/pix/cobr.h). */
#include "pixrelay/pix/cobr.h"

#include "pixrelay/core/json.h"
#include "pixrelay/core/validate.h"
#include "pixrelay/pix/bankpix.h"
#include "pixrelay/pix/chargedue.h"

#include <stdarg.h>
#include <stdio.h>
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
