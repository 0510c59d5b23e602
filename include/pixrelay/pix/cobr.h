/* cobr: Pix Automático's recurring charges as values, no I/O
 * (docs/recurrences.md, "Recurring charges").
 *
 * The merchant's request (POST /v1/recurrences/{id}/charges: amount,
 * dueDate) read field by field and checked against its recurrence and the
 * standard's rules for when a cobr may be sent; the body pixrelay puts at
 * the bank (PUT /cobr/{txid}, CobRSolicitada); the bank's answer (CobRGerada)
 * held against what was asked. Every body from the bank is hostile input of
 * any size and shape.
 */
#ifndef PIXRELAY_COBR_H
#define PIXRELAY_COBR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

/* How many calendar days before its due date a recurring charge is sent
 * to the bank: at least COBR_AHEAD_MIN, at most COBR_AHEAD_MAX (the
 * standard's rules, docs/recurrences.md). */
#define COBR_AHEAD_MIN 2
#define COBR_AHEAD_MAX 10
#define COBR_RETRY_DAYS 7 /* PERMITE_3R_7D: retries within 7 days of the due date */

/* Expected outcomes besides 0 and -1. */
enum cobr_result {
	COBR_NOT_APPROVED = 1, /* the recurrence is not APPROVED (409) */
	COBR_MISMATCH = 2,     /* the bank's answer is not the charge asked (why says) */
};

/* A validated request. */
struct cobr_input {
	int64_t amount; /* cents */
	char due[11];	/* dueDate, YYYY-MM-DD */
};

/* Read `body` (a JSON object): amount (integer cents), dueDate
 * (YYYY-MM-DD); no other field. 0 with *out, or -1 with "field: rule". */
int cobr_parse_create(yajl_val body, struct cobr_input *out, char *err, size_t errlen);

/* What of its recurrence a recurring charge is checked against (borrowed). */
struct cobr_terms {
	const char *status; /* the recurrence's status (pixrelay's name) */
	int64_t amount;	    /* its fixed amount, 0 none */
	int64_t minimum;    /* its minimum amount, 0 none */
	const char *start;  /* startDate */
	const char *end;    /* endDate, NULL or "": none */
};

/* Check `in` against its recurrence `t` on day `today` (days since
 * 1970-01-01, Brasilia): COBR_NOT_APPROVED (err says the status), 0, or -1
 * with "field: rule" in err. */
int cobr_check(const struct cobr_input *in, const struct cobr_terms *t, long long today, char *err,
	       size_t errlen);

/* The receiving account a cobr names (borrowed; agencia "" none). */
struct cobr_recebedor {
	const char *agencia, *conta, *tipo_conta;
};

/* The body of PUT /cobr/{txid} (CobRSolicitada): idRec, calendario
 * (dataDeVencimento), valor (original), ajusteDiaUtil (true), recebedor:
 * malloc'd JSON. */
char *cobr_body(const char *idrec, const struct cobr_input *in, const struct cobr_recebedor *rcv);

/* Hold the bank's answer to PUT /cobr/{txid} (CobRGerada) against what was
 * asked: the txid, the idRec, status CRIADA, calendario.dataDeVencimento,
 * valor.original, recebedor.conta. 0, or COBR_MISMATCH with the first field
 * at fault in why. */
int cobr_read_answer(const char *body, size_t len, const char *txid, const char *idrec,
		     const struct cobr_input *in, const struct cobr_recebedor *rcv, char *why,
		     size_t whylen);

/* ---- what the bank says of a recurring charge ---- */

#define COBR_BATCH_MAX 1000  /* items of one /cobr callback */
#define COBR_ATTEMPTS_MAX 16 /* tentativas of one item read */

/* One tentativa (an attempt of the payer's bank to pay), as the bank
 * reports it. */
struct cobr_attempt {
	char date[11];	 /* dataLiquidacao */
	char tipo[5];	 /* AGND, NTAG, RIFL */
	char status[12]; /* SOLICITADA, AGENDADA, PAGA, CANCELADA, REJEITADA, EXPIRADA */
	char code[5];	 /* rejeicao.codigo, "" none */
};

/* One item of a /cobr callback or of GET /cobr/{txid}. */
struct cobr_heard {
	char idrec[30];
	char txid[36];
	char status[12]; /* CRIADA, ATIVA, CONCLUIDA, EXPIRADA, REJEITADA, CANCELADA */
	char code[5];	 /* encerramento's rejeicao or cancelamento codigo, "" none */
	struct cobr_attempt attempts[COBR_ATTEMPTS_MAX];
	size_t nattempts;
};

/* A /cobr callback's items, each read or refused, and the Pix they carry. */
struct cobr_batch {
	struct cobr_heard *items;
	size_t n;
	size_t nrefused;
	char **refused; /* "cobsr[i]: <field>: <fault>" for each refused item */
	char *pix;	/* {"pix": [...]}: every item's pix[] (a /pix callback's body,
			 * read by bankpix), NULL when none carries one */
};

enum cobr_parse_result {
	COBR_PARSE_OK = 0,
	COBR_PARSE_BAD = 1,	 /* not {"cobsr": [...]}: err says why (400) */
	COBR_PARSE_TOO_MANY = 2, /* more than COBR_BATCH_MAX items (413) */
};

/* Read a /cobr callback body ({"cobsr": [CobRNotification, ...]}): each
 * item needs idRec (29 letters and digits), txid (26 to 35), status (the
 * standard's enum) and atualizacao (an array); its tentativas are read
 * (dataLiquidacao, tipo, status, rejeicao.codigo), at most
 * COBR_ATTEMPTS_MAX. A refused item is listed with its reason, the others
 * taken. COBR_PARSE_OK with *out (free with cobr_batch_deinit), or another
 * code with err. */
int cobr_parse_notification(const char *body, size_t len, struct cobr_batch *out, char *err,
			    size_t errlen);
void cobr_batch_deinit(struct cobr_batch *b);

/* Read one CobRCompleta (GET /cobr/{txid}) of charge `txid`: 0 with *out,
 * and the Pix it carries as {"pix": [...]} in *pix (malloc'd, NULL none), or
 * COBR_MISMATCH with why (out untouched). */
int cobr_read_one(const char *body, size_t len, const char *txid, struct cobr_heard *out,
		  char **pix, char *why, size_t whylen);

/* True when `body` is a JSON object whose first key is "cobsr": the bank
 * door's route reads the callback's kind by it. */
bool cobr_is_callback(const char *body, size_t len);

/* The attempts of h as lines "date tipo status code" (code "-" none),
 * joined by '\n' (malloc'd; "" when none): what the store's script reads. */
char *cobr_attempt_lines(const struct cobr_heard *h);

#endif
