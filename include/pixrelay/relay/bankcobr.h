/* bankcobr: Pix Automático's recurring charges at the recurrence's bank
 * (docs/recurrences.md, "Recurring charges").
 *
 * Creating one is: the recurrence read (it must be APPROVED), the request
 * checked against it (pix/cobr.h: its fixed or minimum amount, its dates,
 * the standard's window for sending a cobr), the recurrence's connection
 * with API credentials and a recebedor, a new charge id (the cobr's txid),
 * PUT /cobr/{txid} (CobRSolicitada), the bank's answer held against what
 * was asked, and the charge stored (store/charges.h) with `recurrence` set,
 * PENDING, its dueDate the cobr's, still payable for the retries of its
 * recurrence's policy. Nothing is stored unless the bank answered the
 * charge asked.
 */
#ifndef PIXRELAY_BANKCOBR_H
#define PIXRELAY_BANKCOBR_H

#include "pixrelay/pix/cobr.h"
#include "pixrelay/pix/env.h"
#include "pixrelay/relay/bankcharges.h"
#include "pixrelay/relay/bankrec.h"
#include "pixrelay/store/store.h"

/* Outcomes besides 0 (json the charge), -1 (err), RECURRENCES_NOT_FOUND,
 * and bankrec.h's BANKREC_REFUSED, BANKREC_UNAVAILABLE (json says what). */
enum bankcobr_result {
	BANKCOBR_NOT_APPROVED = 40, /* the recurrence is not APPROVED: json says (409) */
	BANKCOBR_INVALID = 41,	    /* the request breaks its recurrence's terms or the
				     * standard's dates: json is "field: rule" (400) */
	BANKCOBR_NO_RECEBEDOR = 42, /* the connection has no recebedor: json says what to
				     * run (409) */
	BANKCOBR_CONFLICT = 43,	    /* the charge is not a recurring charge, not PENDING,
				     * its recurrence allows no retry, or its due date has
				     * come (a cancel): json says which (409) */
};

/* Create a recurring charge of recurrence `rec_id` of `account` from a
 * validated request (copied). cb runs once, later. */
void bankcobr_create(const struct bankcharges *b, enum env env, const char *account,
		     const char *rec_id, const struct cobr_input *in, store_fn cb, void *ud);

/* Ask the bank for a retry of recurring charge `id` of `account` on `date`
 * (YYYY-MM-DD, after today and at most COBR_RETRY_DAYS after its due
 * date; its recurrence must allow retries): POST
 * /cobr/{txid}/retentativa/{date}, the bank's answer written as a
 * callback's (EVENT:CHARGE_RETRY_SCHEDULED once, source request). cb gets 0
 * with the charge, CHARGES_NOT_FOUND, BANKCOBR_CONFLICT, BANKCOBR_INVALID,
 * BANKREC_REFUSED, BANKREC_UNAVAILABLE (json says what), or -1 with err. */
void bankcobr_retry(const struct bankcharges *b, enum env env, const char *account, const char *id,
		    const char *date, store_fn cb, void *ud);

/* Cancel recurring charge `id` of `account` at the bank before its due
 * date: PATCH /cobr/{txid} {"status": "CANCELADA"}, then the charge FAILED
 * with its EVENT:CHARGE_FAILED (source request). cb as bankcobr_retry's. */
void bankcobr_cancel(const struct bankcharges *b, enum env env, const char *account, const char *id,
		     store_fn cb, void *ud);

struct bank_creds;
struct banks_ref;
struct banks_queue;

/* What bankcobr_reconcile found: how many recurring charges it asked the
 * bank about, and how many had changed there without a callback; err when
 * it stopped short (the rest wait for the next run). */
typedef void (*bankcobr_recon_fn)(void *ud, int asked, int recovered, const char *err);

/* Ask the bank of connection `conn` (its API credentials `creds`, both
 * borrowed until cb) about its recurring charges not final, at most
 * COBRS_OPEN_MAX, those asked longest ago first: GET /cobr/{txid} each,
 * what it says written as a callback's would be (cobrs_heard, source
 * reconciliation; the charge marked asked), its Pix taken through `q` as
 * the reconciliation's. `step` (may be NULL) runs before each call to the
 * bank. cb runs once, later. */
void bankcobr_reconcile(const struct bankcharges *b, struct banks_queue *q,
			const struct bank_creds *creds, const struct banks_ref *conn,
			void (*step)(void *ud), bankcobr_recon_fn cb, void *ud);

#endif
