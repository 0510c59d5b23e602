/* banks_report: what a connection heard on one day, Brasilia time
 * (docs/bank-api.md, "The day's report"; banks_report.c): the counts bank_pix
 * kept, the endToEndIds the reconciliation took first, and whether the
 * spans of the bank's list it read cover the day (pix/bankday.h).
 */
#ifndef PIXRELAY_BANKS_REPORT_H
#define PIXRELAY_BANKS_REPORT_H

#include "pixrelay/pix/bankday.h"
#include "pixrelay/store/banks_conn.h"

#define BANKS_REPORT_E2E_MAX 1000 /* recovered endToEndIds a report lists */

/* `date` (YYYY-MM-DD; NULL or "": today in Brasilia) into day, and the
 * first instant after it, Brasilia time (ms). 0, or -1 for a bad date. */
int banks_report_day(const char *date, char day[11], long long *end_ms);

/* What connection `id` of `account` ("" = any of env) heard on `date`
 * (Brasilia time; NULL: today): {"connection", "date", "timeZone",
 * "reconciledUntil", "complete", "whyNotComplete": [...], "read": [{"from",
 * "to"}] (the spans read, clipped to the day and its overlap, -03:00),
 * "pix": {"received", "byWebhook", "recovered", "duplicates", "refused"},
 * "cents": {...}, "outcomes": {...}, "refunds": {...},
 * "recoveredEndToEndIds": [...]}; complete as pix/bankday.h judges it, now.
 * BANKS_NOT_FOUND, BANKS_BAD_DATE, or -1 with err. */
void banks_report(struct rds *r, const struct config *cfg, enum env env, const char *account,
		  const char *id, const char *date, store_fn cb, void *ud);

/* What bank_report answers of a connection and a day: {{env, account,
 * rec_at, rec_ok_ms, api_url, created_ms, api_at}, the day's counts
 * (HGETALL), its first recovered endToEndIds, how many, the spans read
 * ("<from ms>-<to ms>"), its first "<endToEndId> <connection>" another
 * connection held, how many}, or {} when there is no such connection. */
struct banks_report_reply {
	long long rec_at_ms;  /* reconciled up to here (0: not yet) */
	long long created_ms; /* when the connection was made */
	long long api_at_ms;  /* its first API credentials (0: none) */
	bool has_api;	      /* it has API credentials now */
	/* borrowed from the answer: the day's counts (field, value, ...), its
	 * first recovered endToEndIds, and its first "<endToEndId>
	 * <connection>" held by another connection */
	const redisReply *day, *recovered, *elsewhere;
	struct bankday_span *spans; /* the spans read, nspans (malloc'd: the caller frees) */
	size_t nspans;
};
/* Decode bank_report's answer into out. 0; BANKS_NOT_FOUND for {}; -1 when
 * it is not that shape (out untouched then). A span that does not read is
 * left out. Pure. */
int banks_report_decode(const redisReply *reply, struct banks_report_reply *out);

#endif
