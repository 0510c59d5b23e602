/* banks_recon: what the reconciliation of bank connections keeps in Redis
 * (docs/banks.md, "Reconciliation"; banks_recon.c): the schedule of each
 * environment, each run's record in its connection, the spans of the
 * bank's list read whole, the refunds asked of a bank and not yet heard
 * settled, and what the processes saw of each bank's API.
 * relay/bankrecon.c runs it.
 */
#ifndef PIXRELAY_BANKS_RECON_H
#define PIXRELAY_BANKS_RECON_H

#include "pixrelay/store/banks_conn.h"

#define BANKS_RECON_CLAIM_MAX 16 /* connections leased by one claim */

/* ids (borrowed for the call): n of them, and a number that goes with
 * them (see each call); or err with n = 0. */
typedef void (*banks_ids_fn)(void *ud, const char *err, long long n0, const char *const *ids,
			     size_t n);

/* Lease up to `most` connections of env whose reconciliation is due, for
 * lease_ms (no other process takes them meanwhile). n0: when the oldest
 * last success of any connection of env was (ms; 0 when none). */
void banks_recon_claim(struct rds *r, const struct config *cfg, enum env env, unsigned most,
		       long lease_ms, banks_ids_fn cb, void *ud);
/* The run of `id` is over (ok: it succeeded) or its lease renewed: its
 * next one is due at when_ms. result 1, or 0 when it is no longer
 * scheduled (dropped meanwhile). cb may be NULL. */
void banks_recon_next(struct rds *r, const struct config *cfg, enum env env, const char *id,
		      long long when_ms, int ok, store_fn cb, void *ud);
/* Schedule `id` now (it was given API credentials). cb may be NULL. */
void banks_recon_schedule(struct rds *r, const struct config *cfg, enum env env, const char *id,
			  store_fn cb, void *ud);
/* No more reconciliations of `id`. cb may be NULL. */
void banks_recon_drop(struct rds *r, const struct config *cfg, enum env env, const char *id,
		      store_fn cb, void *ud);

/* What one successful run found. */
struct banks_recon_stats {
	long long upto_ms; /* the bank's Pix are taken up to here */
	long pages;	   /* pages of GET /pix read */
	long listed;	   /* Pix the bank listed (of this connection's key), refused ones too */
	long fresh;	   /* ... that pixrelay had not heard of (the webhook missed them) */
	long refused;	   /* ... that failed the standard's schema (each an event, once) */
	long refunds;	   /* pending refunds asked about */
};
/* Record a run of connection `id` in its record: ok, or failed with
 * `error` (ok NULL). result: consecutive failures now (0 after a success),
 * or -1 when the connection is gone. */
void banks_recon_done(struct rds *r, const struct config *cfg, const char *id,
		      const struct banks_recon_stats *ok, const char *error, store_fn cb, void *ud);

/* A span [from_ms, to_ms] of the bank's list of Pix (by horario) that a
 * run of connection `id` read whole, every page written: merged with those
 * read before (script bank_recon_read), kept for the event retention, at
 * most BANKDAY_READS_MAX (pix/bankday.h). result: the spans kept, or -1
 * when the connection is gone (nothing written). */
void banks_recon_read(struct rds *r, const struct config *cfg, const char *id, long long from_ms,
		      long long to_ms, store_fn cb, void *ud);

/* Refunds pixrelay asked a connection's bank for: remembered until the
 * bank reports them settled (DEVOLVIDO or NAO_REALIZADO), so that the
 * reconciliation asks about them. cb may be NULL. */
void banks_refund_asked(struct rds *r, const struct config *cfg, const char *conn, const char *e2e,
			const char *refund_id, store_fn cb, void *ud);
void banks_refund_settled(struct rds *r, const struct config *cfg, const char *conn,
			  const char *e2e, const char *refund_id, store_fn cb, void *ud);

/* The oldest `most` pending refunds of `conn`: ids "<e2e> <refund id>",
 * n0 when the oldest was asked (ms). */
void banks_refunds_pending(struct rds *r, const struct config *cfg, const char *conn, unsigned most,
			   banks_ids_fn cb, void *ud);

/* What a process saw of connection `conn`'s bank API (relay/bankapi.c's
 * health hook): when it last got a token, last called, last failed and
 * why (no secret in it). Kept in the connection's record, each instant
 * only moving forward, for `bank show` and GET .../connections/{id}
 * ("api.health"). Not waited for. */
void banks_note_api(struct rds *r, const struct config *cfg, const char *conn, long long token_ms,
		    long long call_ms, const char *error, long long error_ms);

#endif
