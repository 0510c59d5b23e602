/* bankrec: Pix Automático's recurrences at the account's bank
 * (docs/recurrences.md).
 *
 * Creating one is: the account's charging connection, which must have API
 * credentials (a recurrence exists only at a bank); POST /locrec for the
 * location of its QR; POST /rec with that location (RecSolicitada); GET
 * /rec/{idRec} for the QR's code (dadosQR, JORNADA_2), checked to carry the
 * recurrence's location and no payment; then the recurrence stored
 * (store/recurrences.h), CREATED. Each answer is held against what was
 * asked (pix/recurrence.h); nothing is stored unless all three are right.
 * Cancelling one is PATCH /rec/{idRec} {"status": "CANCELADA"}, and the
 * bank's answer written as what the bank said (its event once).
 *
 * The struct bankcharges is the relay's handle on Redis, the cache, the
 * bank client and the credentials key; borrowed for the process's life.
 */
#ifndef PIXRELAY_BANKREC_H
#define PIXRELAY_BANKREC_H

#include "pixrelay/pix/env.h"
#include "pixrelay/pix/recurrence.h"
#include "pixrelay/relay/bankcharges.h"
#include "pixrelay/store/store.h"

/* Outcomes besides 0 and -1 (and RECURRENCES_NOT_FOUND for a cancel). */
enum bankrec_result {
	BANKREC_REFUSED = 30,	  /* the bank refused: json is its detail (400) */
	BANKREC_UNAVAILABLE = 31, /* the bank is down, slow, or answered what was not asked:
				   * json says what; nothing was stored (503) */
	BANKREC_NO_BANK = 32,	  /* the account has no charging connection with API
				   * credentials: json says what to run (409) */
	BANKREC_FINAL = 33,	  /* the recurrence is final already: json is it (409) */
};

/* Create a recurrence for `account` from a validated request (copied); cb
 * gets 0 with its JSON, or a code above, or -1 with err. Runs once, later. */
void bankrec_create(const struct bankcharges *b, enum env env, const char *account,
		    const struct recurrence_input *in, store_fn cb, void *ud);

/* Cancel recurrence `id` of `account` at its bank: cb gets 0 with it
 * CANCELLED (its EVENT:RECURRENCE_CANCELLED written once), BANKREC_FINAL,
 * RECURRENCES_NOT_FOUND, a code above, or -1 with err. */
void bankrec_cancel(const struct bankcharges *b, enum env env, const char *account, const char *id,
		    store_fn cb, void *ud);

struct bankapi;
struct bank_creds;
struct banks_ref;

/* What bankrec_reconcile found: how many recurrences it asked the bank
 * about, and how many had changed there without a callback (each now
 * written with its event, source reconciliation); err when it stopped
 * short (the bank or Redis failing: the rest wait for the next run). */
typedef void (*bankrec_recon_fn)(void *ud, int asked, int recovered, const char *err);

/* Ask the bank of connection `conn` (its API credentials `creds`, both
 * borrowed until cb) about its recurrences that are not final, at most
 * RECURRENCES_OPEN_MAX, those asked longest ago first: GET /rec/{idRec}
 * each, and what it says written as a callback's would be
 * (recurrences_heard, source reconciliation), the recurrence marked asked.
 * `step` (may be NULL) runs before each call to the bank (a run renews its
 * lease). Once `*stopped` (borrowed until cb) is nonzero, nothing more is
 * asked or written, an answer that comes is dropped, and cb gets err
 * "stopped" (the process is stopping: the next run asks again). cb runs
 * once, later. */
void bankrec_reconcile(const struct bankcharges *b, const struct bank_creds *creds,
		       const struct banks_ref *conn, const int *stopped, void (*step)(void *ud),
		       bankrec_recon_fn cb, void *ud);

#endif
