/* timefmt: the spec's `YYYY-MM-DD HH:MM:SS` timestamps.
 *
 * The spec leaves the time zone open; pixrelay writes UTC (docs/decisions.md).
 */
#ifndef PIXRELAY_TIMEFMT_H
#define PIXRELAY_TIMEFMT_H

#include <stdint.h>

#define TIMEFMT_LEN 19

/* Format `ms` (milliseconds since the epoch) as `YYYY-MM-DD HH:MM:SS` UTC. */
void timefmt_format(char out[TIMEFMT_LEN + 1], uint64_t ms);
/* Format as RFC 3339 with milliseconds, `2026-11-22T00:15:51.123Z`. */
void timefmt_rfc3339(char out[25], uint64_t ms);

/* Parse a moment: Unix seconds ("1795307992", digits only), "YYYY-MM-DD
 * HH:MM:SS" (UTC) or RFC 3339 ("2026-11-22T00:15:51Z", "...51.123Z",
 * "...51+00:00"): exactly these digit counts, a real date, from 1970 to
 * 9999-12-31T23:59:59Z (leap second :60 allowed, milliseconds beyond 3
 * digits dropped). Writes milliseconds since the epoch and returns 0, or
 * returns -1. Reads `s` only up to its NUL. */
int timefmt_parse(const char *s, long long *ms);

/* Days since 1970-01-01 of the proleptic Gregorian date y-m-d (m from 1 to
 * 12); negative before it. */
long long timefmt_days_from_civil(long long y, int m, int d);
/* The number of days of month m (1 to 12) of year y. */
int timefmt_days_in_month(long long y, int m);

#endif
