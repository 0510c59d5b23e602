/* bankpix: a bank's Pix notification in the Central Bank's API Pix standard,
 * parsed and checked item by item (no I/O).
 *
 * The bank POSTs {"pix": [Pix, ...]} to the webhook URL registered for a Pix
 * key (`callbacks.listaPix` of `PUT /webhook/{chave}`, API Pix 2.9.0). Each
 * Pix is checked against the standard's schema on its own: one bad item is
 * refused with the field at fault and never costs the good ones (the bank
 * may not send them again). Values are exact: `valor` "110.00" is 11000
 * cents, parsed as text, never through a float. What pixrelay decided where
 * the schema is loose or wrong is in docs/banks.md ("What pixrelay accepts").
 */
#ifndef PIXRELAY_BANKPIX_H
#define PIXRELAY_BANKPIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BANKPIX_ITEMS_MAX 1000	/* Pix in one notification (also GET /pix's page size) */
#define BANKPIX_REFUNDS_MAX 100 /* devolucoes of one Pix */
#define BANKPIX_E2E_LEN 32	/* endToEndId: [a-zA-Z0-9]{32} */
#define BANKPIX_TXID_MAX 35	/* txid: [a-zA-Z0-9]{1,35} */
#define BANKPIX_ID_MAX 48	/* id: "<provider>:<payment id>" */
#define BANKPIX_REFUND_ID_MAX 35
#define BANKPIX_CHAVE_MAX 77		 /* characters */
#define BANKPIX_TEXT_MAX 140		 /* infoPagador, motivo, descricao: characters */
#define BANKPIX_VALOR_MAX 13		 /* "9999999999.99" */
#define BANKPIX_CENTS_MAX 999999999999LL /* cents of "9999999999.99" */
#define BANKPIX_ERR_MAX 192
#define BANKPIX_REASONS_MAX 8 /* reasons a refused item is given at most */

enum bankpix_refund_status {
	BANKPIX_EM_PROCESSAMENTO = 0,
	BANKPIX_DEVOLVIDO = 1,
	BANKPIX_NAO_REALIZADO = 2,
};

/* One devolucao (refund) of a Pix; `json` is it in the canonical form (the
 * schema's fields only, in its order), owned. `natureza` is the nature as
 * the bank wrote it when that is a name of the schema's kind (1 to 31 of
 * A-Z, 0-9 and _), "" otherwise (absent means ORIGINAL, the standard says;
 * any text is kept in `json`). A refund of the MED (Mecanismo Especial de
 * Devolucao: MED_OPERACIONAL, MED_FRAUDE, MED_PIX_AUTOMATICO, and any later
 * MED_ nature) is money clawed back under a dispute: `med` is set. */
struct bankpix_refund {
	char id[BANKPIX_REFUND_ID_MAX + 1];
	char rtr_id[BANKPIX_E2E_LEN + 1];
	int64_t cents;
	enum bankpix_refund_status status;
	char natureza[32];
	int med;
	char *json;
};

/* One Pix as the bank reported it. `json` is the Pix again in a canonical
 * form: the schema's fields only, in the schema's order, `devolucoes`
 * always an array, `componentesValor` as received; it is what the
 * merchant's event carries. Strings owned.
 *
 * `id` is what makes the Pix once when its endToEndId cannot: "" for a
 * bank's Pix (bankpix_parse leaves it so: the endToEndId does), and for a
 * payment provider's "<short>:<the provider's payment id>" (Woovi:
 * "wv:<transactionID>", pix/woovi.h), whose `e2e` is then the Pix's
 * endToEndId when it has the standard's 32 letters or digits, else "". */
enum bankpix_parts { BANKPIX_PARTS_NONE, BANKPIX_PARTS_ADD_UP, BANKPIX_PARTS_WRONG };

struct bankpix {
	char id[BANKPIX_ID_MAX + 1];
	char e2e[BANKPIX_E2E_LEN + 1];
	char txid[BANKPIX_TXID_MAX + 1]; /* "" when the Pix carries none */
	char *chave;			 /* the Pix key paid; NULL when the Pix names none */
	int64_t cents;
	/* componentesValor: BANKPIX_PARTS_NONE without it; BANKPIX_PARTS_ADD_UP
	 * when its parts add up to valor (original + saque + troco + multa +
	 * juros - abatimento - desconto, each that is there), its original
	 * (cents) then in parts_original; BANKPIX_PARTS_WRONG when they do not
	 * or cannot be read */
	int parts;
	int64_t parts_original;
	long long horario_ms;
	struct bankpix_refund *refunds;
	size_t nrefunds;
	char *json;
};

/* An item that failed the schema. Nothing a bank reports is dropped: the
 * merchant gets it as received, with every reason, once per Pix. `e2e` is
 * its endToEndId when that is well-formed ("" otherwise), `id` what makes
 * it once: the endToEndId, or the SHA-256 (hex) of `item` when there is
 * none. `err` is the first reason ("pix[i].field: rule"), `reasons` all of
 * them (at most BANKPIX_REASONS_MAX) as a JSON array, `item` the item
 * re-serialised from the parsed tree (owned). `cents` and `horario_ms` are
 * its valor and horario where those were readable, else -1 and 0; `chave`
 * its key when it names one as a string (owned; NULL otherwise). */
struct bankpix_refusal {
	size_t index;
	char e2e[BANKPIX_E2E_LEN + 1];
	char id[65];
	char err[BANKPIX_ERR_MAX];
	char *reasons;
	char *item;
	char *chave;
	int64_t cents;
	long long horario_ms;
};

/* A whole notification: the items that passed, in the bank's order, and
 * those that did not. */
struct bankpix_batch {
	struct bankpix *items;
	size_t n;
	struct bankpix_refusal *refused;
	size_t nrefused;
};

/* What bankpix_parse says of a body as a whole. */
enum bankpix_result {
	BANKPIX_OK = 0,
	BANKPIX_MALFORMED = -1, /* not {"pix": [...]} nor a bare array: 400 */
	BANKPIX_TOO_MANY = -2,	/* more than BANKPIX_ITEMS_MAX items: 413 */
};

/* Parse `len` bytes (not NUL-terminated): {"pix": [...]}, or the array
 * alone (a bank that posts it bare). BANKPIX_OK with *out filled (each
 * item either in items or in refused; both may be empty), or a negative
 * result with a message for the bank in err and *out untouched. Time and
 * memory are linear in len. The caller frees with bankpix_batch_deinit. */
int bankpix_parse(const char *body, size_t len, struct bankpix_batch *out, char *err,
		  size_t errlen);
void bankpix_batch_deinit(struct bankpix_batch *b);

/* A page of `GET /pix` ({"parametros": {..., "paginacao": {...}}, "pix":
 * [...]}), parsed as bankpix_parse does, and its number of pages
 * (parametros.paginacao.quantidadeDePaginas, at least 1: a bank with
 * nothing to list may say 0) into *pages. A page whose count is absent, not
 * a whole number or over a million is BANKPIX_MALFORMED, with the field
 * named in err; out and *pages are then untouched. */
int bankpix_parse_page(const char *body, size_t len, struct bankpix_batch *out, long *pages,
		       char *err, size_t errlen);

/* Drop from b the Pix paid to a key other than `chave`, and the refused
 * items that name another (those that name none stay): the bank lists
 * every Pix of the account, a connection reconciles its own key. Keys are
 * compared in any letter case (the DICT keeps e-mails and random keys in
 * lower case, however the merchant wrote theirs). Returns how many were
 * dropped. */
size_t bankpix_batch_keep_chave(struct bankpix_batch *b, const char *chave);

/* "123.45" (the standard's \d{1,10}\.\d{2}, whole string) as cents: 0, or
 * -1 for anything else ("1.5", "01.00" is fine, "+1.00", "1e2", " 1.00"). */
int bankpix_valor_cents(const char *s, int64_t *cents);

/* The text of a JSON number of reais, as a payment provider writes an
 * amount (Asaas's value, Mercado Pago's transaction_amount: 10.5, 100,
 * 94.51; the number's own text from the parsed tree, never a double) as
 * cents: at most two decimal places (more only when they are zeros:
 * "10.500"), no exponent, no sign, from 0.01 to BANKPIX_CENTS_MAX. 0, or
 * -1 for anything else ("10.505", "1e2", "-1", "0", "01"). */
int bankpix_reais_cents(const char *text, int64_t *cents);

/* cents (>= 0) as the decimal text of reais with two places, the
 * standard's valor: 1234 is "12.34", 1050 "10.50", 5 "0.05". Returns out. */
char *bankpix_cents_text(int64_t cents, char out[24]);

/* The pixrelay charge a txid names: its 26-character id (what pixrelay
 * creates at a bank as the cob's txid), or its id without the leading '0'
 * (the 25 characters its static BR Code carries in field 62-05). Writes the
 * charge id and returns 0, or returns -1 when the txid can name no charge. */
int bankpix_charge_of_txid(const char *txid, char out[27]);

/* Whether `s` is `min` to `max` ASCII letters or digits (the standard's
 * [a-zA-Z0-9]{min,max}: endToEndId, txid, a refund's id). */
bool bankpix_is_alnum(const char *s, size_t min, size_t max);

/* A moment with a time zone ("2020-09-09T20:15:00.358Z", "...00-03:00",
 * milliseconds optional) as milliseconds since the epoch: 0, or -1 for
 * anything else (a moment without a zone would be read 3 hours off in
 * Brazil). */
int bankpix_time_ms(const char *s, long long *ms);

/* The standard's name of a refund status ("DEVOLVIDO", ...). */
const char *bankpix_refund_status_name(enum bankpix_refund_status s);

#endif
