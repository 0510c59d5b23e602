/* recurrence: Pix Automático's recurrences as values, no I/O
 * (docs/recurrences.md).
 *
 * A merchant's create request (POST /v1/recurrences) read field by field;
 * the bodies pixrelay sends the bank (POST /locrec, POST /rec, PATCH
 * /rec/{idRec}, API Pix 2.9.0: RecSolicitada, RecRevisada); the bank's
 * answers read against what was asked (PayloadLocationRecGerada, RecGerada,
 * RecCompleta); the QR of the journey pixrelay offers (JORNADA_2: the payer
 * scans a code that carries the recurrence only) checked; and what the
 * bank's /rec callback and GET /rec/{idRec} report (RecNotification,
 * RecCompleta) read item by item. Every body from the bank is hostile input
 * of any size and shape.
 *
 * A recurrence's JSON is stored as a fixed head (an object's text without
 * its closing brace, ending in a comma) and the fields a change moves
 * (status, updatedAt, closing reason), so that a Lua script produces it in
 * its new state byte for byte in the step that changes it.
 */
#ifndef PIXRELAY_RECURRENCE_H
#define PIXRELAY_RECURRENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#define RECURRENCE_ID_MAX 40	/* "rec_" + ULID + NUL fits */
#define RECURRENCE_IDREC_LEN 29 /* the standard's idRec */
#define RECURRENCE_TEXT_MAX 35	/* contract, object (vinculo.contrato, objeto) */
#define RECURRENCE_NAME_MAX 140 /* vinculo.devedor.nome */
#define RECURRENCE_LOCATION_MAX 77
#define RECURRENCE_MAX_AMOUNT 999999999999LL /* \d{1,10}\.\d{2} */
#define RECURRENCE_BATCH_MAX 1000	     /* items of one /rec callback */

enum recurrence_period {
	RECURRENCE_WEEKLY,
	RECURRENCE_MONTHLY,
	RECURRENCE_QUARTERLY,
	RECURRENCE_SEMIANNUAL,
	RECURRENCE_ANNUAL,
};

/* pixrelay's statuses, in the order a recurrence may move through them:
 * CREATED, then APPROVED, then one of the final three (a recurrence also
 * goes from CREATED to a final one). */
enum recurrence_status {
	RECURRENCE_CREATED,
	RECURRENCE_APPROVED,
	RECURRENCE_REJECTED,
	RECURRENCE_EXPIRED,
	RECURRENCE_CANCELLED,
};

/* A validated create request. Strings owned (NULL when not given). */
struct recurrence_input {
	char *name;	    /* payer.name */
	char document[15];  /* payer.document, a normalised CPF (11) or CNPJ (14) */
	char *contract;	    /* vinculo.contrato */
	char *object;	    /* vinculo.objeto */
	int period;	    /* enum recurrence_period */
	char start[11];	    /* startDate, YYYY-MM-DD */
	char end[11];	    /* endDate, "" none */
	int64_t amount;	    /* fixed amount in cents (valorRec), 0 none */
	int64_t minimum;    /* minimumAmount in cents (valorMinimoRecebedor), 0 none */
	int retry;	    /* retryPolicy: 0 NONE, 1 THREE_IN_SEVEN_DAYS */
	char *postback_url; /* postbackUrl */
};

/* Validate `body` (a JSON object): payer {name, document}, contract,
 * object, periodicity, startDate, endDate?, amount? or minimumAmount?,
 * retryPolicy, postbackUrl?; no other field. 0 with *out (free with
 * recurrence_input_deinit), or -1 with "field: rule" in err, the first
 * field at fault in that order. */
int recurrence_parse_create(yajl_val body, struct recurrence_input *out, char *err, size_t errlen);
void recurrence_input_deinit(struct recurrence_input *in);

/* The API's and the standard's names of a period, of a status; NULL when
 * out of range. */
const char *recurrence_period_name(int period);
const char *recurrence_period_bcb(int period);
const char *recurrence_status_name(int status);
/* The status a standard's status (CRIADA, APROVADA, ...) is, or -1. */
int recurrence_status_of_bcb(const char *s);
/* True when `status` is one of the final three. */
bool recurrence_is_final(int status);

/* The body of POST /rec (RecSolicitada) for `in` with the location `loc_id`
 * (PayloadLocationRecGerada.id): malloc'd JSON. */
char *recurrence_rec_body(const struct recurrence_input *in, int64_t loc_id);

enum recurrence_result {
	RECURRENCE_REFUSED = 1, /* the bank's answer is not what was asked: why says how */
};

/* The bank's answer to POST /locrec (`len` bytes of `body`): 0 with its id
 * and location (out, RECURRENCE_LOCATION_MAX + 1 bytes), or
 * RECURRENCE_REFUSED with "<field>: <fault>" in why; out-parameters untouched
 * then. */
int recurrence_read_locrec(const char *body, size_t len, int64_t *loc_id, char *location, char *why,
			   size_t whylen);

/* The bank's answer to POST /rec (RecGerada) held against `in` and the
 * location asked for: idRec of 29 letters and digits whose second character
 * says the retry policy asked (R, N), status CRIADA, vinculo.contrato,
 * the payer's document, calendario.periodicidade and dataInicial, valor and
 * politicaRetentativa as sent, loc.id the location's when given. 0 with the
 * idRec (RECURRENCE_IDREC_LEN + 1 bytes), or RECURRENCE_REFUSED with why. */
int recurrence_read_rec(const char *body, size_t len, const struct recurrence_input *in,
			int64_t loc_id, char *idrec, char *why, size_t whylen);

/* The bank's answer to GET /rec/{idRec} read for the QR of JORNADA_2:
 * idRec as asked, dadosQR.jornada JORNADA_2 and dadosQR.pixCopiaECola a
 * code recurrence_check_code takes with `location`. 0 with the code in
 * *code (malloc'd, the caller frees), or RECURRENCE_REFUSED with why. */
int recurrence_read_qr(const char *body, size_t len, const char *idrec, const char *location,
		       char **code, char *why, size_t whylen);

/* Whether `code` is the BR Code of a recurrence's QR (JORNADA_2) for
 * `location`: TLV fields that fit exactly, 00 first with "01", 63 last with
 * the CRC-16 of everything before its value; field 26 holds the GUI only
 * (no key, no location: no payment now), no amount (54); field 80 holds the
 * GUI (80.00, br.gov.bcb.pix in any case) and the recurrence's location
 * (80.25), which is `location` (a leading "https://" of either is not
 * compared). True when it is; else why in `why`. */
bool recurrence_check_code(const char *code, const char *location, char *why, size_t whylen);

/* What the bank said of one recurrence (an item of /rec's callback, or its
 * GET /rec/{idRec}). */
struct recurrence_heard {
	char idrec[RECURRENCE_IDREC_LEN + 1];
	int status;	 /* enum recurrence_status */
	char at[40];	 /* the last atualizacao's data with the status, "" none */
	char code[8];	 /* encerramento's rejeicao or cancelamento codigo, "" none */
	char reason[96]; /* its descricao (printable, cut), "" none */
	char by[24];	 /* cancelamento.solicitante, "" none */
};

/* A /rec callback's items, each read or refused. */
struct recurrence_batch {
	struct recurrence_heard *items;
	size_t n;
	size_t nrefused;
	char **refused; /* "recs[i]: <field>: <fault>" for each refused item */
};

enum recurrence_parse_result {
	RECURRENCE_PARSE_OK = 0,
	RECURRENCE_PARSE_BAD = 1,      /* not {"recs": [...]}: err says why (400) */
	RECURRENCE_PARSE_TOO_MANY = 2, /* more than RECURRENCE_BATCH_MAX items (413) */
};

/* Read a /rec callback body ({"recs": [RecNotification, ...]}): each item
 * needs idRec (29 letters and digits), status (the standard's enum) and
 * atualizacao (an array of {status, data}); one that lacks them is refused
 * with its reason and the others are taken. RECURRENCE_PARSE_OK with *out
 * (free with recurrence_batch_deinit), or another code with err. */
int recurrence_parse_notification(const char *body, size_t len, struct recurrence_batch *out,
				  char *err, size_t errlen);
void recurrence_batch_deinit(struct recurrence_batch *b);

/* Read one RecCompleta (GET /rec/{idRec}) of recurrence `idrec` into *out:
 * 0, or RECURRENCE_REFUSED with why (out untouched). */
int recurrence_read_one(const char *body, size_t len, const char *idrec,
			struct recurrence_heard *out, char *why, size_t whylen);

/* True when `body` (`len` bytes) is a JSON object whose first key is
 * "recs": the bank door's route reads the callback's kind by it. */
bool recurrence_is_callback(const char *body, size_t len);

/* Everything the JSON of a recurrence shows but its status. */
struct recurrence_view {
	const char *id, *idrec, *connection, *br_code, *image_url;
	const struct recurrence_input *in;
	uint64_t created_ms;
};

/* The fixed head of the recurrence's JSON: "{...," without status,
 * updatedAt and closing (malloc'd). */
char *recurrence_render_head(const struct recurrence_view *v);

/* The whole JSON (malloc'd): head, then "status", "updatedAt" and, when
 * `closing` is neither NULL nor "", "closing": <closing> (JSON). */
char *recurrence_assemble(const char *head, const char *status, const char *updated_at,
			  const char *closing);

/* "closing" of a final status heard (JSON object, malloc'd): {"code",
 * "reason", "by"} of those given; NULL when none is. */
char *recurrence_closing_json(const struct recurrence_heard *h);

#endif
