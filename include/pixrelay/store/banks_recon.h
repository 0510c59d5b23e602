/* banks_recon: what the reconciliation of bank connections keeps in Redis
 * (docs/bank-api.md, "Reconciliation"; banks_recon.c). Everything about a
 * connection's reconciliation lives in its shard, beside the connection:
 * the schedule (script bank_recon: which connection is due, which one a
 * process runs, when each last succeeded), and a run's end (script
 * bank_recon_done: its record, the span of the bank's list it read, the
 * refunds it heard settled and its next run, in one write). relay/
 * bankrecon.c runs it:
 *
 *   claim (one call per shard and tick) -> a run per leased connection,
 *   with all it needs: the connection's fields, its sealed credentials, its
 *   pending refunds -> GET /pix, each page written by banks_receive -> GET
 *   /pix/{e2eid} per pending refund, written the same way -> finish (one
 *   call).
 *
 * Also here: the refunds pixrelay asked a bank for (remembered until it
 * reports them settled), and what the processes saw of each bank's API.
 */
#ifndef PIXRELAY_BANKS_RECON_H
#define PIXRELAY_BANKS_RECON_H

#include "pixrelay/pix/bankpix.h"
#include "pixrelay/store/banks_conn.h"

#define BANKS_RECON_CLAIM_MAX 16   /* connections leased by one claim */
#define BANKS_RECON_REFUNDS_MAX 16 /* pending refunds a run is given */
#define BANKS_RECON_RUN_FIELDS 21  /* answer fields of one run (bank_recon.lua) */
#define BANKS_RECON_REFUND_MAX 96  /* "<endToEndId> <refund id>" and its NUL */

/* One connection's run, with all it needs of the connection. Owned
 * (banks_run_free). */
struct banks_run {
	struct banks_ref ref;
	char pix_key[BANKPIX_CHAVE_MAX + 1];
	long long created_ms;
	long long api_at_ms;	       /* its first API credentials (0: none) */
	long long rec_at_ms;	       /* reconciled up to here (0: not yet) */
	int failures;		       /* consecutive failed runs before this one */
	struct banks_stored_creds api; /* sealed; api_url NULL: no credentials */
	/* its oldest pending refunds, "<endToEndId> <refund id>" */
	char (*refunds)[BANKS_RECON_REFUND_MAX];
	size_t nrefunds;
};
void banks_run_free(struct banks_run *run);

/* What a claim answers: when the oldest last success of any connection of
 * each environment in the shard was (ms, 0 none; by enum env), and the runs
 * leased. */
struct banks_claim {
	long long oldest_ok_ms[2];
	struct banks_run *runs[BANKS_RECON_CLAIM_MAX];
	size_t n;
};
/* err (c NULL), or c, borrowed for the call; its runs become the callee's
 * (each freed with banks_run_free). */
typedef void (*banks_claim_fn)(void *ud, const char *err, struct banks_claim *c);

/* Lease up to `most` connections of `shard` whose reconciliation is due,
 * for lease_ms (no other process takes them meanwhile), each with its
 * oldest `refunds` pending refunds (at most BANKS_RECON_REFUNDS_MAX): one
 * script call. A connection gone, or without API credentials, leaves the
 * schedule instead. */
void banks_recon_claim(struct rds *r, const struct config *cfg, int shard, unsigned most,
		       long lease_ms, unsigned refunds, banks_claim_fn cb, void *ud);
/* The run of connection `id` whatever its schedule, leasing nothing (a run
 * asked for): n 1, or 0 when there is no such connection. */
void banks_recon_read(struct rds *r, const struct config *cfg, const char *id, unsigned refunds,
		      banks_claim_fn cb, void *ud);
/* A live run's lease, again, until until_ms (nothing when the connection
 * left the schedule meanwhile). Not waited for. */
void banks_recon_renew(struct rds *r, const struct config *cfg, const char *id, long long until_ms);
/* Schedule `id` of `env` now (a run asked for). cb may be NULL. */
void banks_recon_schedule(struct rds *r, const struct config *cfg, enum env env, const char *id,
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

/* How a run ended. Borrowed. */
struct banks_recon_end {
	const struct banks_ref *ref;
	const struct banks_recon_stats *ok; /* it succeeded; NULL: it failed with `error` */
	const char *error;		    /* no secret in it */
	long long read_from, read_to;	    /* the span of the bank's list read whole (from
					     * 0: none), kept for the event retention, at most
					     * BANKDAY_READS_MAX (pix/bankday.h) */
	const char *const *settled;	    /* refunds the bank settled ("<e2e> <refund id>") */
	size_t nsettled;
	long long next_ms; /* its next run is due then; 0: the schedule stays (asked for) */
};
/* Record the end of a run, in one script: the record (a success moves the
 * reconciled instant, a failure counts one more), the span read, the
 * refunds settled, the next run. result: consecutive failures now (0 after
 * a success), or -1 with err NULL when the connection is gone (it left the
 * schedule), or -1 with err. */
void banks_recon_finish(struct rds *r, const struct config *cfg, const struct banks_recon_end *e,
			store_fn cb, void *ud);

/* On a blocking client (rds_open), at start: move the schedule an earlier
 * version kept per environment (ks_env_bankrec_key, ks_env_bankok_key) into
 * the connections' shards, entry by entry (a process that starts meanwhile
 * moves what is left). 0, or -1 with why in err. */
int banks_recon_move(struct rds *c, const char *prefix, char *err, size_t errlen);

/* Refunds pixrelay asked a connection's bank for: remembered until the
 * bank reports them settled (DEVOLVIDO or NAO_REALIZADO), so that the
 * reconciliation asks about them. cb may be NULL. */
void banks_refund_asked(struct rds *r, const struct config *cfg, const char *conn, const char *e2e,
			const char *refund_id, store_fn cb, void *ud);

/* What a process saw of connection `conn`'s bank API (relay/bankapi.c's
 * health hook): when it last got a token, last called, last failed and
 * why (no secret in it). Kept in the connection's record, each instant
 * only moving forward, for `bank show` and GET .../connections/{id}
 * ("api.health"). Not waited for. */
void banks_note_api(struct rds *r, const struct config *cfg, const char *conn, long long token_ms,
		    long long call_ms, const char *error, long long error_ms);

/* Decode a claim's answer (bank_recon.lua: the oldest successes, then
 * BANKS_RECON_RUN_FIELDS fields per run) into out, its runs allocated
 * (the caller frees them). 0; -1 when it is not that shape, or a run's
 * fields do not read (out holds no run then). Pure. */
int banks_recon_decode_claim(const redisReply *reply, struct banks_claim *out);

#endif
