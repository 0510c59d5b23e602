/* woovi: what Woovi (OpenPix) sends and answers, read as hostile input (no
 * I/O): its notifications, its transactions as bank Pix (struct bankpix,
 * so that a provider's payment takes the bank's one path: matching,
 * deduplication, events, the day's report), and its answers to creating a
 * charge and a refund.
 *
 * Source: github Open-Pix/openpix-developers @ 76584f0 (MIT): the swagger
 * src/swaggers/openpix.yml and docs/webhook/examples/ (vendored in
 * tests/vendor/openpix/). Woovi's values are integer cents already: a
 * value is a JSON integer from 1 to 9999999999999 ("100.0", 1e2 and
 * negative values are refused).
 *
 * A PAYMENT transaction becomes a bankpix whose
 * - id is "wv:<transactionID>" (the Pix once: Woovi's sandbox endToEndIds
 *   are 33 characters, so the endToEndId cannot be the key);
 * - e2e its endToEndId when that is 32 letters or digits, else "";
 * - txid its charge's correlationID when that is 1 to 35 letters or digits
 *   (pixrelay creates its charges at Woovi with its own charge id), else "";
 * - cents its value, horario_ms its time (ISO 8601 with Z or an offset);
 * - chave its pixKey, else its charge's, else NULL;
 * - refunds: the REFUND transactions of it (woovi_transactions_parse);
 * - json the API Pix form, so that a merchant reads one shape whatever the
 *   provider: {"endToEndId"?, "txid"?, "valor": "100.00", "chave"?,
 *   "horario", "infoPagador"?, "devolucoes": [{"id", "rtrId"?, "valor",
 *   "horario": {"solicitacao"}, "status"}], "provider": {"name": "woovi",
 *   "transactionID", "correlationID"?}}.
 * A refund's id is its endToEndId, or its correlationID when it has none
 * (or its transactionID when it has neither), kept when it is 1 to 35
 * letters or digits, else the first 35 characters of its SHA-256 (hex).
 */
#ifndef PIXRELAY_WOOVI_H
#define PIXRELAY_WOOVI_H

#include "pixrelay/pix/bankpix.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#define WOOVI_ID_PREFIX "wv:"
#define WOOVI_TRANSACTION_ID_MAX 45 /* BANKPIX_ID_MAX less "wv:" */
#define WOOVI_ID_MAX 64		    /* correlationID, transactionID, endToEndId kept */
#define WOOVI_PAGE_MAX 1000	    /* transactions of one page (Woovi sends 100) */
#define WOOVI_VALUE_MAX 9999999999999LL

/* What woovi_*_parse say of a body as a whole (the numbers of enum
 * bankpix_result). */
enum woovi_result {
	WOOVI_OK = 0,
	WOOVI_MALFORMED = -1, /* not the answer's shape: the field in err */
	WOOVI_TOO_MANY = -2,  /* more than WOOVI_PAGE_MAX transactions */
};

enum woovi_event {
	WOOVI_OTHER = 0,
	WOOVI_CHARGE_COMPLETED,	    /* OPENPIX:CHARGE_COMPLETED */
	WOOVI_TRANSACTION_RECEIVED, /* OPENPIX:TRANSACTION_RECEIVED */
	WOOVI_REFUND_RECEIVED,	    /* OPENPIX:TRANSACTION_REFUND_RECEIVED */
	WOOVI_CHARGE_EXPIRED,	    /* OPENPIX:CHARGE_EXPIRED */
	WOOVI_DISPUTE,		    /* any OPENPIX:DISPUTE_... */
};

/* A notification: its event and what names the payment it is about. The
 * ids are "" when absent, not strings, longer than WOOVI_ID_MAX or not
 * printable ASCII without spaces (each is used to look the payment up at
 * Woovi, never trusted as the payment itself). The charge is the body's
 * `charge`, else the `pix`'s; for a refund, `pix` is the refund and
 * `charge` the charge refunded. `event` is the name as sent (owned). */
struct woovi_notice {
	enum woovi_event kind;
	char *event;
	char charge_correlation[WOOVI_ID_MAX + 1];
	char charge_transaction[WOOVI_ID_MAX + 1];
	char pix_transaction[WOOVI_ID_MAX + 1];
	char pix_e2e[WOOVI_ID_MAX + 1];
};

/* Read a notification body of `len` bytes. WOOVI_OK with *out filled (the
 * caller calls woovi_notice_deinit), or WOOVI_MALFORMED, with the reason
 * in err and *out untouched, only when the body is not a JSON object with
 * a string `event` (a 400): anything else about it is for the fetch of the
 * transaction to settle. */
int woovi_notice_parse(const char *body, size_t len, struct woovi_notice *out, char *err,
		       size_t errlen);
void woovi_notice_deinit(struct woovi_notice *n);

/* An OPENPIX:DISPUTE_* notification's dispute (docs/webhook/examples/
 * dispute-*.mdx): {"status": "OPENED" | "IN_REVIEW" | "ACCEPTED" |
 * "REJECTED" | "CANCELED", "endToEndId" of the Pix disputed, "value"
 * (cents), ...}. */
struct woovi_dispute {
	char status[24];
	char e2e[WOOVI_ID_MAX + 1];
	int64_t cents;
};

/* Read a dispute notification's `dispute`: WOOVI_OK with *out, or
 * WOOVI_MALFORMED with "dispute.field: rule" in err and *out untouched. */
int woovi_dispute_parse(const char *body, size_t len, struct woovi_dispute *out, char *err,
			size_t errlen);

/* The dispute on the Pix it disputes (read back from Woovi): a MED refund
 * of its value (provjson_med_add), in process while OPENED or IN_REVIEW,
 * given back once ACCEPTED, not made once REJECTED or CANCELED. */
void woovi_dispute_apply(struct bankpix *pix, const struct woovi_dispute *d);

/* A notification's own body as the batch woovi_transactions_parse makes of
 * a page: its `pix` as a transaction (PAYMENT, or REFUND of a
 * TRANSACTION_REFUND_RECEIVED, with the body's `charge`). For a body whose
 * signature is pixrelay's own (the sandbox): Woovi's are read back from its
 * API instead. WOOVI_OK with *out, or WOOVI_MALFORMED with err. */
int woovi_notice_batch(const char *body, size_t len, struct bankpix_batch *out, char *err,
		       size_t errlen);

/* The body of POST /api/v1/charge: {"correlationID", "value" (cents),
 * "expiresIn" (seconds, when above 0), "comment" (when given)}. malloc'd. */
char *woovi_charge_body(const char *correlation, int64_t cents, long long expires_s,
			const char *comment);
/* The body of POST /api/v1/charge/{id}/refund: {"correlationID", "value"}. */
char *woovi_refund_body(const char *correlation, int64_t cents);

/* GET /api/v1/webhook/public-keys's answer ({"public_keys": [{"key":
 * PEM}, ...]}): the keys one after the other (at most 8, 64 KiB) in *pem
 * (malloc'd), or -1 with "public_keys...: rule" in err. */
int woovi_public_keys(const char *body, size_t len, char **pem, char *err, size_t errlen);

/* One PAYMENT transaction `tx` (a Transaction of GET /api/v1/transaction,
 * or the `pix` of a CHARGE_COMPLETED notification: the same fields) as a
 * bankpix without refunds, as the header above says. 0 with *out filled
 * (the caller frees its strings, as bankpix_batch_deinit does), or -1
 * with "<path>.<field>: rule" in err (path: "transaction",
 * "transactions[3]", "pix") and *out untouched. */
int woovi_transaction_pix(yajl_val tx, const char *path, struct bankpix *out, char *err,
			  size_t errlen);

/* A page of GET /api/v1/transaction ({"transactions": [...], "pageInfo":
 * {..., "hasNextPage"}}) as a batch (a woovi_result), and its pageInfo.hasNextPage
 * in *has_next.
 * PAYMENT transactions become items, in the page's order. A REFUND
 * transaction becomes a refund (status DEVOLVIDO: the money went back) of
 * the item whose transactionID is its charge.transactionID. A refund whose
 * payment is not on the page becomes, with the other refunds of that
 * payment, an item built from its `charge` (id "wv:<charge.transactionID>",
 * value, paidAt as the time, correlationID, pixKey; no endToEndId): the
 * same Pix, the same id, as its PAYMENT would give, placed after the page's
 * own items. Transactions of other types (WITHDRAW, FEE, ...) are skipped.
 * A transaction that cannot be read is a refusal (struct bankpix_refusal,
 * its id "wv:<transactionID>" when that is readable, else the SHA-256 of
 * the transaction), never a failure of the page. WOOVI_OK with *out and
 * *has_next filled (bankpix_batch_deinit frees), or WOOVI_MALFORMED /
 * WOOVI_TOO_MANY with the reason in err and nothing written. Time is
 * n log n in the transactions, memory linear in len. */
int woovi_transactions_parse(const char *body, size_t len, struct bankpix_batch *out,
			     bool *has_next, char *err, size_t errlen);

/* GET /api/v1/transaction/{id}'s answer ({"transaction": Transaction}) as
 * a batch of what it gives, read as a page of one: a PAYMENT is one item,
 * a REFUND an item built from its charge with that refund, another type
 * nothing, an unreadable transaction one refusal. WOOVI_OK with *out
 * filled, or WOOVI_MALFORMED when `transaction` is not an object. */
int woovi_transaction_parse(const char *body, size_t len, struct bankpix_batch *out, char *err,
			    size_t errlen);

/* POST /api/v1/charge's answer: the charge Woovi made (or the existing
 * one: return_existing=true). */
struct woovi_created {
	char *br_code; /* brCode (owned), else charge.brCode */
	char correlation[WOOVI_ID_MAX + 1];
	char transaction[WOOVI_ID_MAX + 1]; /* "" when Woovi gives none */
	char status[24];		    /* ACTIVE, COMPLETED, EXPIRED, ... */
	int64_t cents;
};

/* Read POST /api/v1/charge's answer: charge.correlationID (else the top
 * level's), charge.value, charge.status (A-Z and _), brCode (the top
 * level's, else the charge's; at most 512 characters), charge.transactionID
 * when given. WOOVI_OK with *out filled (woovi_created_deinit frees), or
 * WOOVI_MALFORMED with "charge.value: rule" in err and *out untouched. */
int woovi_charge_created(const char *body, size_t len, struct woovi_created *out, char *err,
			 size_t errlen);
void woovi_created_deinit(struct woovi_created *c);

/* POST /api/v1/charge/{id}/refund's answer. */
struct woovi_refund_created {
	enum bankpix_refund_status status; /* IN_PROCESSING, CONFIRMED, REJECTED */
	int64_t cents;
	char correlation[WOOVI_ID_MAX + 1];
	char e2e[WOOVI_ID_MAX + 1];	    /* "" when Woovi gives none yet */
	char id[BANKPIX_REFUND_ID_MAX + 1]; /* the refund's id, as the header says */
};

/* Read {"refund": {status, value, correlationID, endToEndId?, time}}.
 * WOOVI_OK with *out filled, or WOOVI_MALFORMED with "refund.status: rule"
 * in err and *out untouched. */
int woovi_refund_created(const char *body, size_t len, struct woovi_refund_created *out, char *err,
			 size_t errlen);

/* A refund's id from its endToEndId, correlationID or transactionID (NULL
 * or "" when absent; the first given is used), as the header says. 0, or
 * -1 when all three are absent (out untouched). */
int woovi_refund_id(const char *e2e, const char *correlation, const char *transaction,
		    char out[BANKPIX_REFUND_ID_MAX + 1]);

#endif
