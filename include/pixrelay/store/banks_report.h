/* banks_report: what a connection heard on one day, Brasilia time
 * (docs/banks.md, "The day's report"; banks_report.c): the counts bank_pix
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

#endif
