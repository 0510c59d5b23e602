/* cobcheck: the bank's CobGerada held against the cob pixrelay put: its
 * pixCopiaECola decoded strictly (brcode.c) and judged as an immediate
 * charge's dynamic code, its location, amount, txid, chave and expiry
 * compared with what was sent. The first fault found is the reason given;
 * relay/bankcharges.c refuses the charge with it. */
#include "pixrelay/pix/cobcheck.h"

#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/bankpix.h"
#include "pixrelay/pix/brcode.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

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
	return COBCHECK_REFUSED;
}

static void cents_text(char out[32], int64_t cents)
{
	snprintf(out, 32, "%lld.%02lld", (long long)(cents / 100), (long long)(cents % 100));
}

/* The answer's location `field` (a string, or absent: nothing to compare)
 * against the code's. 0, or COBCHECK_REFUSED with why. */
static int same_location(yajl_val v, const char *field, struct brcode_slice code, char *why,
			 size_t whylen)
{
	const char *s;
	char a[JSON_ECHO_MAX + 1], b[JSON_ECHO_MAX + 1], mine[BRCODE_URL_MAX + 1];

	if (!v)
		return 0;
	if (!YAJL_IS_STRING(v))
		return refuse(why, whylen, "%s: not a string", field);
	s = v->u.string;
	if (strncasecmp(s, "https://", 8) == 0)
		s += 8;
	if (strlen(s) == code.len && memcmp(s, code.ptr, code.len) == 0)
		return 0;
	snprintf(mine, sizeof(mine), "%.*s", (int)code.len, code.ptr);
	return refuse(why, whylen, "pixCopiaECola: its location (26.25) %s is not the cob's %s %s",
		      json_echo(a, mine), field, json_echo(b, s));
}

/* The dynamic BR Code of an immediate charge, for `asked`. */
static int check_code(const struct cobcheck_asked *asked, yajl_val answer, const char *code,
		      char *why, size_t whylen)
{
	struct brcode_decoded d;
	char err[160], a[32], b[32];
	const char *tipo;
	int rc;

	if (brcode_decode(code, &d, err, sizeof(err)) < 0)
		return refuse(why, whylen, "pixCopiaECola: %s", err);
	if (d.pix_key.ptr)
		return refuse(why, whylen,
			      "pixCopiaECola: it carries a Pix key (26.01); a charge's code "
			      "carries only its location");
	if (!d.location.ptr)
		return refuse(why, whylen, "pixCopiaECola: it has no location (26.25)");
	if (!asked->due && d.amount_cents >= 0 && d.amount_cents != asked->amount) {
		cents_text(a, d.amount_cents);
		cents_text(b, asked->amount);
		return refuse(why, whylen, "pixCopiaECola: its amount (54) is %s, the charge's %s",
			      a, b);
	}
	tipo = YAJL_GET_STRING(json_get(json_get(answer, "loc"), "tipoCob"));
	if (asked->due && tipo && strcmp(tipo, "cobv") != 0)
		return refuse(why, whylen, "loc.tipoCob: not cobv");
	if ((rc = same_location(json_get(json_get(answer, "loc"), "location"), "loc.location",
				d.location, why, whylen)) != 0 ||
	    (rc = same_location(json_get(answer, "location"), "location", d.location, why,
				whylen)) != 0)
		return rc;
	return 0;
}

/* valor.<name>.valorPerc of a cobv's answer against `want` ("" when none
 * was sent), with its modalidade. */
static int same_term(yajl_val valor, const char *name, int modalidade, const char *want, char *why,
		     size_t whylen)
{
	yajl_val t = json_get(valor, name);
	const char *got;
	char e[JSON_ECHO_MAX + 1];
	int64_t m = 0;

	if (!t && !*want)
		return 0;
	if (!t)
		return refuse(why, whylen, "valor.%s: missing, not the charge's %s", name, want);
	if (!*want)
		return refuse(why, whylen, "valor.%s: the charge has none", name);
	got = YAJL_GET_STRING(json_get(t, "valorPerc"));
	if (!json_is_int64(json_get(t, "modalidade"), &m) || m != modalidade)
		return refuse(why, whylen, "valor.%s.modalidade: not %d", name, modalidade);
	if (!got || strcmp(got, want) != 0)
		return refuse(why, whylen, "valor.%s.valorPerc: %s, not the charge's %s", name,
			      got ? json_echo(e, got) : "missing", want);
	return 0;
}

/* A cobv's calendario and terms against what was sent. */
static int check_due(const struct charge_due *d, yajl_val answer, char *why, size_t whylen)
{
	yajl_val cal = json_get(answer, "calendario"), valor = json_get(answer, "valor");
	yajl_val desc = json_get(valor, "desconto"), first;
	const char *date = YAJL_GET_STRING(json_get(cal, "dataDeVencimento")), *fdate, *fval;
	char e[JSON_ECHO_MAX + 1], fine[32] = "", interest[32] = "", off[32];
	int64_t days = 0, m = 0;
	int rc;

	if (!date || strcmp(date, d->date) != 0)
		return refuse(why, whylen, "calendario.dataDeVencimento: %s, not the charge's %s",
			      date ? json_echo(e, date) : "missing", d->date);
	if (!json_is_int64(json_get(cal, "validadeAposVencimento"), &days) || days != d->days_after)
		return refuse(why, whylen,
			      "calendario.validadeAposVencimento: missing or not the charge's %lld",
			      (long long)d->days_after);
	if (d->fine)
		chargedue_percent_text(fine, d->fine);
	if (d->interest)
		chargedue_percent_text(interest, d->interest);
	if ((rc = same_term(valor, "multa", 2, fine, why, whylen)) != 0 ||
	    (rc = same_term(valor, "juros", 3, interest, why, whylen)) != 0)
		return rc;
	if (json_get(valor, "abatimento"))
		return refuse(why, whylen, "valor.abatimento: the charge has none");
	if (!desc && !d->discount)
		return 0;
	if (!desc || !d->discount)
		return refuse(why, whylen, "valor.desconto: not the charge's");
	first = json_get(desc, "descontoDataFixa");
	first = YAJL_IS_ARRAY(first) && first->u.array.len == 1 ? first->u.array.values[0] : NULL;
	cents_text(off, d->discount);
	fdate = first ? YAJL_GET_STRING(json_get(first, "data")) : NULL;
	fval = first ? YAJL_GET_STRING(json_get(first, "valorPerc")) : NULL;
	if (!json_is_int64(json_get(desc, "modalidade"), &m) || m != 1 || !fdate || !fval ||
	    strcmp(fdate, d->discount_until) != 0 || strcmp(fval, off) != 0)
		return refuse(why, whylen,
			      "valor.desconto: not the charge's (%s until %s, modalidade 1)", off,
			      d->discount_until);
	return 0;
}

/* The cob's own fields against what was sent. */
static int check_cob(const struct cobcheck_asked *asked, yajl_val answer, char *why, size_t whylen)
{
	const char *txid = YAJL_GET_STRING(json_get(answer, "txid"));
	const char *chave = YAJL_GET_STRING(json_get(answer, "chave"));
	const char *valor = YAJL_GET_STRING(json_get(json_get(answer, "valor"), "original"));
	yajl_val exp = json_get(json_get(answer, "calendario"), "expiracao");
	char e[JSON_ECHO_MAX + 1], a[32], b[32];
	int64_t cents = 0, secs = 0;

	if (!txid)
		return refuse(why, whylen, "txid: missing");
	if (strcmp(txid, asked->txid) != 0)
		return refuse(why, whylen, "txid: %s, not the charge's %s", json_echo(e, txid),
			      asked->txid);
	if (!chave)
		return refuse(why, whylen, "chave: missing");
	/* banks write e-mail and random keys in lower case; no two keys
	 * differ only in letters' case */
	if (strcasecmp(chave, asked->chave) != 0)
		return refuse(why, whylen, "chave: not the connection's Pix key");
	if (!valor || bankpix_valor_cents(valor, &cents) < 0)
		return refuse(why, whylen, "valor.original: missing or not an amount");
	if (cents != asked->amount) {
		cents_text(a, cents);
		cents_text(b, asked->amount);
		return refuse(why, whylen, "valor.original: %s, not the charge's %s", a, b);
	}
	if (asked->due)
		return check_due(asked->due, answer, why, whylen);
	if (!json_is_int64(exp, &secs))
		return refuse(why, whylen, "calendario.expiracao: missing or not an integer");
	if (secs != asked->expiration)
		return refuse(why, whylen, "calendario.expiracao: %lld, not the charge's %lld",
			      (long long)secs, (long long)asked->expiration);
	return 0;
}

int cobcheck_answer(const struct cobcheck_asked *asked, const char *body, size_t len, char **code,
		    char *why, size_t whylen)
{
	yajl_val v = NULL;
	const char *text;
	char err[160];
	int rc;

	if (!body || json_parse_object(body, len, &v, err, sizeof(err)) < 0)
		return refuse(why, whylen, "the answer: not a JSON object");
	text = YAJL_GET_STRING(json_get(v, "pixCopiaECola"));
	if (!text)
		rc = refuse(why, whylen, "pixCopiaECola: missing");
	else if ((rc = check_code(asked, v, text, why, whylen)) == 0 &&
		 (rc = check_cob(asked, v, why, whylen)) == 0)
		*code = mem_strdup(text);
	yajl_tree_free(v);
	return rc;
}
