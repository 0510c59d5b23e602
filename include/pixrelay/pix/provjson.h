/* provjson: what the readers of the payment providers' JSON share (woovi,
 * asaas, mercadopago), no I/O. Each provider's module says what its fields
 * mean; this one reads them the same way for all three:
 *
 * - a refusal names its field as "<path>.<field>: <rule>" (the path of the
 *   object, "" at the top: "data[3].value: is required");
 * - a member that is null is absent ("is required" when it must be there):
 *   the providers write null for what they have not got;
 * - an amount in reais is read from the JSON number's text (never through a
 *   double: bankpix_reais_cents);
 * - a payment becomes a struct bankpix in the API Pix form (its e2e only when
 *   it has the standard's 32 letters or digits, its txid only when its
 *   reference has the standard's 1 to 35), and its refunds the standard's
 *   devolucoes;
 * - a payment that cannot be read is a struct bankpix_refusal, its id the
 *   provider's payment id when readable, else the SHA-256 of the payment with
 *   its members in byte order (the same payment sent again is the same).
 *
 * Strings read from a yajl tree are borrowed from it.
 */
#ifndef PIXRELAY_PROVJSON_H
#define PIXRELAY_PROVJSON_H

#include "pixrelay/pix/bankpix.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

/* What provjson_page_at says of a page (the numbers of enum bankpix_result,
 * as each provider's result is). */
enum provjson_result {
	PROVJSON_OK = 0,
	PROVJSON_MALFORMED = -1, /* not the page's shape: the field in err */
	PROVJSON_TOO_MANY = -2,	 /* more elements than the page may hold */
};

/* What a payment's status says of the money (provjson_status_kind). */
enum provjson_kind {
	PROVJSON_NOT_ITEM, /* no money received (yet): no item */
	PROVJSON_ITEM,	   /* money received: an item */
	PROVJSON_UNKNOWN,  /* none of the provider's statuses: a refusal */
};

/* A moment's reader: 0 with *ms (milliseconds since the epoch), or -1
 * (bankpix_time_ms, or a provider's own). */
typedef int (*provjson_time_fn)(const char *s, long long *ms);

/* ---- refusals and paths ---- */

/* "<path>.<field>: <rule>" into err ("<field>: ..." when path is "",
 * "<path>: ..." when field is ""), the rule formatted as printf does; cut
 * to errlen. Always returns -1, so that a reader returns it. */
int provjson_fail(char *err, size_t errlen, const char *path, const char *field, const char *fmt,
		  ...) __attribute__((format(printf, 5, 6)));

/* "<path>.<member>" into out (the member alone when path is ""), the member
 * formatted as printf does ("refunds[%zu]"); cut to size. */
void provjson_path(char *out, size_t size, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- predicates ---- */

/* Whether `s` is 1 to `max` printable ASCII characters without spaces (an
 * id kept to look a payment up: never trusted as the payment itself). */
bool provjson_is_token(const char *s, size_t max);

/* Whether `s` is 1 to `max` of A-Z, a-z, 0-9, '-' and '_' (an id that
 * makes a bankpix id "<prefix><it>"). */
bool provjson_is_id(const char *s, size_t max);

/* Whether `s` is 1 to `max` characters of valid UTF-8 without control
 * characters (a text shown to the merchant). */
bool provjson_is_text(const char *s, long max);

/* Whether `s` is not NULL and is an endToEndId of the standard (32 letters
 * or digits). */
bool provjson_is_e2e(const char *s);

/* ---- members ---- */

/* The member `key` of `obj` (NULL when obj is no object), NULL when it is
 * absent or null. Borrowed. */
yajl_val provjson_optional(yajl_val obj, const char *key);

/* v's string when v is a string that provjson_is_text accepts with `max`,
 * else NULL. Borrowed. */
const char *provjson_text(yajl_val v, long max);

/* v's string into out (max + 1 bytes) when it is a string that
 * provjson_is_token accepts with `max`, else "" into out. */
void provjson_token_copy(yajl_val v, char *out, size_t max);

/* The string member `key`: when max is not 0, at most `max` characters of
 * valid UTF-8 without control characters. 0 with *out (NULL when !required
 * and absent), or -1 with "<path>.<key>: rule" in err and *out untouched. */
int provjson_string_at(yajl_val obj, const char *key, const char *path, bool required, long max,
		       const char **out, char *err, size_t errlen);

/* The required id member `key`: provjson_is_id with `max`. 0 with *out, or
 * -1 with err ("must be 1 to <max> letters, digits, '-' or '_'") and *out
 * untouched. */
int provjson_id_at(yajl_val obj, const char *key, const char *path, size_t max, const char **out,
		   char *err, size_t errlen);

/* The required member "status": 1 to `max` of A-Z and _. 0 with *out, or -1
 * with err and *out untouched. */
int provjson_status_at(yajl_val obj, const char *path, size_t max, const char **out, char *err,
		       size_t errlen);

/* The required member `key`, a JSON number of reais, as cents
 * (bankpix_reais_cents). 0 with *cents, or -1 with err and *cents
 * untouched. */
int provjson_reais_at(yajl_val obj, const char *key, const char *path, int64_t *cents, char *err,
		      size_t errlen);

/* The string member `key` read by `parse` as a moment. 0 with *text and *ms
 * (*text NULL and *ms untouched when !required and absent), or -1 with
 * "<path>.<key>: <rule>" in err (or the string's own refusal) and both
 * untouched. */
int provjson_time_at(yajl_val obj, const char *key, const char *path, bool required,
		     provjson_time_fn parse, const char *rule, const char **text, long long *ms,
		     char *err, size_t errlen);

/* The required object member `key`. 0 with *out, or -1 with err and *out
 * untouched. */
int provjson_object_at(yajl_val obj, const char *key, const char *path, yajl_val *out, char *err,
		       size_t errlen);

/* The required member `key`, true or false. 0 with *out, or -1 with err and
 * *out untouched. */
int provjson_bool_at(yajl_val obj, const char *key, const char *path, bool *out, char *err,
		     size_t errlen);

/* The required array member `key`. 0 with *out, or -1 with err and *out
 * untouched. */
int provjson_array_at(yajl_val obj, const char *key, const char *path, yajl_val *out, char *err,
		      size_t errlen);

/* The array `key` of a page's root, at most `max` elements. PROVJSON_OK
 * with *list, PROVJSON_MALFORMED or PROVJSON_TOO_MANY ("<key>: more than
 * <max> in one page") with err and *list untouched. */
int provjson_page_at(yajl_val root, const char *key, size_t max, yajl_val *list, char *err,
		     size_t errlen);

/* The optional member "refunds" of a payment: an array of at most
 * BANKPIX_REFUNDS_MAX. 0 with *out (NULL when absent), or -1 with err and
 * *out untouched. */
int provjson_refunds_at(yajl_val pay, const char *path, yajl_val *out, char *err, size_t errlen);

/* What the status `s` says of the money: PROVJSON_ITEM when it is one of
 * items[0..nitems), PROVJSON_NOT_ITEM one of others[0..nothers),
 * PROVJSON_UNKNOWN otherwise. */
enum provjson_kind provjson_status_kind(const char *s, const char *const *items, size_t nitems,
					const char *const *others, size_t nothers);

/* ---- lenient reads, for what a refusal still tells ---- */

/* v's cents when v is a JSON number of reais, else -1. */
int64_t provjson_reais_peek(yajl_val v);

/* v's milliseconds when v is a string `parse` reads, else 0. */
long long provjson_time_peek(yajl_val v, provjson_time_fn parse);

/* ---- refunds ---- */

/* A refund's id from `own` (the provider's id for it): kept when it is 1 to
 * BANKPIX_REFUND_ID_MAX letters or digits, else the first
 * BANKPIX_REFUND_ID_MAX characters of its SHA-256 (hex). 0, or -1 when own
 * is NULL or "" (out untouched). */
int provjson_refund_id(const char *own, char out[BANKPIX_REFUND_ID_MAX + 1]);

/* The first BANKPIX_REFUND_ID_MAX characters of the SHA-256 (hex) of
 * s[0..len) into out: an id made of what names a refund that has none. */
void provjson_hash_id(const char *s, size_t len, char out[BANKPIX_REFUND_ID_MAX + 1]);

/* r as the standard's devolucao: {"id", "rtrId" (when r->rtr_id is not
 * ""), "valor", "horario": {"solicitacao": when}, "motivo" (when not NULL
 * or ""), "status"}. A new string (the caller frees). */
char *provjson_refund_json(const struct bankpix_refund *r, const char *when, const char *motivo);

/* Free the n refunds at r, their json and r itself (r may be NULL). */
/* A provider's chargeback or dispute of a Pix, a MED refund (the Pix's
 * dispute mechanism: docs/providers.md) of nature PROVJSON_MED_NATURE:
 * appended to *refunds (*n one more; nothing past BANKPIX_REFUNDS_MAX),
 * its id the same for every status of the payment's dispute, so that each
 * status it goes through is one EVENT:PIX_MED_REFUND. */
#define PROVJSON_MED_NATURE "MED_CONTESTACAO"
void provjson_med_add(struct bankpix_refund **refunds, size_t *n, const char *payment,
		      int64_t cents, enum bankpix_refund_status status, const char *when);
void provjson_refunds_free(struct bankpix_refund *r, size_t n);

/* ---- a payment as a bankpix ---- */

/* Start the bankpix of a payment into *out (memset first): id
 * "<prefix><id>", e2e when provjson_is_e2e, txid `ref` when it is 1 to
 * BANKPIX_TXID_MAX letters or digits, cents, horario_ms ms, chave NULL, no
 * parts. Returns a generator (the caller passes it on to
 * provjson_pix_provider) with the Pix open and "endToEndId"?, "txid"?,
 * "valor" written; the caller writes the members it has next. */
yajl_gen provjson_pix_begin(struct bankpix *out, const char *prefix, const char *id,
			    const char *e2e, const char *ref, int64_t cents, long long ms);

/* Write "devolucoes" (the json of refunds[0..n)) and open "provider" with
 * its "name"; the caller writes the provider's own members next. */
void provjson_pix_provider(yajl_gen g, const struct bankpix_refund *refunds, size_t n,
			   const char *name);

/* Write the provider's "paymentId": id, "externalReference": ref (when not
 * NULL) and "status" (Asaas's and Mercado Pago's names of them). */
void provjson_pix_payment(yajl_gen g, const char *id, const char *ref, const char *status);

/* Close the provider and the Pix, and end *out: its json (g freed) and the
 * refunds[0..n) (taken). */
void provjson_pix_end(yajl_gen g, struct bankpix *out, struct bankpix_refund *refunds, size_t n);

/* `cents` as a JSON number of reais written as exact text (10.50). */
void provjson_gen_reais(yajl_gen g, int64_t cents);

/* ---- a page ---- */

/* A refusal of `item` (the index-th of its page) for `err`: its reasons
 * [err], the item written again (owned), its id "<prefix><id>" when id is
 * not NULL, else the SHA-256 (hex) of the item with its members in byte
 * order; cents -1, horario_ms 0, no e2e, chave NULL, for the caller to
 * fill in from what it can read. */
void provjson_refusal_make(yajl_val item, size_t index, const char *err, const char *prefix,
			   const char *id, struct bankpix_refusal *r);

/* One payment as a bankpix: 0 with *out, a positive code when it is no
 * item (nothing written), or -1 with err (asaas_payment_pix,
 * mp_payment_pix). */
typedef int (*provjson_item_fn)(yajl_val v, const char *path, struct bankpix *out, char *err,
				size_t errlen);
/* A refusal of a payment that item_fn refused (provjson_refusal_make and
 * what the provider can still read of it). */
typedef void (*provjson_refuse_fn)(yajl_val v, size_t index, const char *err,
				   struct bankpix_refusal *r);

/* The payments vs[0..n) (the array `list` of a page, each at path
 * "<list>[i]", or the one payment whose path is `one` when one is not
 * NULL) into *out: items in order, refusals for those `item` refuses.
 * Memory is taken for n of each (bankpix_batch_deinit frees). */
void provjson_items_read(yajl_val *vs, size_t n, const char *list, const char *one,
			 provjson_item_fn item, provjson_refuse_fn refuse,
			 struct bankpix_batch *out);

/* A body of `len` bytes that is one payment (GET /payments/{id}'s answer)
 * as a batch of what it gives: an item, a refusal (its reason "<field>:
 * rule") or nothing, as provjson_items_read makes them. PROVJSON_OK with
 * *out (bankpix_batch_deinit frees), or PROVJSON_MALFORMED with err when
 * the body is not a JSON object (*out untouched). */
int provjson_item_parse(const char *body, size_t len, provjson_item_fn item,
			provjson_refuse_fn refuse, struct bankpix_batch *out, char *err,
			size_t errlen);

/* A page's body of `len` bytes: a JSON object of at most `max_values`
 * values whose member `key` is an array of at most `max` elements.
 * PROVJSON_OK with *root (the caller frees it with yajl_tree_free) and
 * *list (borrowed from it), or PROVJSON_MALFORMED / PROVJSON_TOO_MANY with
 * err and nothing written (the tree freed). */
int provjson_page_parse(const char *body, size_t len, size_t max_values, const char *key,
			size_t max, yajl_val *root, yajl_val *list, char *err, size_t errlen);

#endif
