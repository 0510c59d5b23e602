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

#endif
