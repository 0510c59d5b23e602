/* cobcheck: the bank's answer to PUT /cob/{txid} checked against the charge
 * pixrelay asked for (docs/bank-api.md, "Charges created at the bank").
 *
 * The answer is a CobGerada of the standard; its pixCopiaECola becomes the
 * charge's BR Code, so what a payer pays must be what the merchant asked.
 * An immediate charge's code is a dynamic BR Code: field 26 holds the
 * location of the payload (26.25) and never a Pix key (26.01): the key the
 * payer sees is in the JWS served at that location, which pixrelay does not
 * fetch. The answer is taken only when:
 * - pixCopiaECola decodes strictly (pix/brcode.c), with a location and
 *   without a Pix key;
 * - its amount (54), when written, is the charge's;
 * - its location is the cob's: loc.location and location, each one the
 *   answer gives (a leading "https://" of theirs is not compared);
 * - txid, chave, valor.original and calendario.expiracao are those sent.
 * The answer to PUT /cobv/{txid} (CobVGerada, a due-date charge) is held
 * the same way, but: its amount (54), written or not, is not compared (the
 * amount due depends on the day paid: the payer's app reads it from the
 * payload at the location); loc.tipoCob, when given, must be "cobv";
 * calendario.dataDeVencimento and validadeAposVencimento replace
 * expiracao; valor.multa, juros and desconto must be those sent (or
 * absent when none was).
 * Field 62.05 is not judged: the standard writes "***" there, some PSPs a
 * txid of their own, and the payer's app takes the txid from the payload.
 *
 * Pure: no I/O; the body is hostile input of any size and shape.
 */
#ifndef PIXRELAY_COBCHECK_H
#define PIXRELAY_COBCHECK_H

#include "pixrelay/pix/chargedue.h"

#include <stddef.h>
#include <stdint.h>

/* What was sent in PUT /cob/{txid}. Borrowed for the call. */
struct cobcheck_asked {
	const char *txid;
	const char *chave;
	int64_t amount;		      /* valor.original, cents */
	int64_t expiration;	      /* calendario.expiracao, seconds (a cob's) */
	const struct charge_due *due; /* a cobv's terms; NULL: a cob */
};

enum cobcheck_result {
	COBCHECK_REFUSED = 1, /* the answer is not the charge's: why says how */
};

/* Check the bank's answer `body` (`len` bytes, NUL-terminated at len).
 * Returns 0 with its pixCopiaECola in *code (malloc'd; the caller frees),
 * or COBCHECK_REFUSED with why in `why` ("<field>: <fault>", at most
 * whylen - 1 bytes, always NUL-terminated; the answer's own text quoted at
 * most JSON_ECHO_MAX bytes with control characters as '?'); *code is then
 * untouched. Never fails otherwise. */
int cobcheck_answer(const struct cobcheck_asked *asked, const char *body, size_t len, char **code,
		    char *why, size_t whylen);

#endif
