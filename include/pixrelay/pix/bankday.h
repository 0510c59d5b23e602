/* bankday: what a day's report of a bank connection can prove (docs/bank-api.md,
 * "The day's report"). The reconciliation records the spans of the bank's
 * list of Pix (GET /pix, by horario) it read whole; a day, in Brasilia time
 * (UTC-3), is complete only when those spans cover all of it, 00:00 to
 * 24:00, and the overlap past its midnight (a Pix of 23:59 that the bank
 * lists a few minutes late), on a connection that has API credentials. This
 * says whether, shows the spans clipped to the day, and says in words why a
 * day is not complete. Pure: no I/O, no clock (now is given).
 */
#ifndef PIXRELAY_BANKDAY_H
#define PIXRELAY_BANKDAY_H

#include <stddef.h>

#define BANKDAY_OFFSET_MS (3LL * 3600 * 1000) /* Brasilia: UTC-3, no daylight saving since 2019 */
#define BANKDAY_MS (24LL * 3600 * 1000)
/* Each window of the reconciliation starts this long before the last one
 * ended (a Pix the bank lists late); a day is complete once read this long
 * past its end. */
#define BANKDAY_OVERLAP_MS (10LL * 60 * 1000)
/* The first window starts this long before the API credentials were given. */
#define BANKDAY_FIRST_BEFORE_MS (10LL * 60 * 1000)
#define BANKDAY_READS_MAX 256 /* spans a connection keeps (the oldest go first) */
#define BANKDAY_WHY_MAX 8     /* reasons a report gives at most */
#define BANKDAY_WHY_LEN 200
#define BANKDAY_TIME_LEN 29 /* "2026-11-26T09:41:00.000-03:00" */

/* A span of horario read whole, [from_ms, to_ms], ms since the epoch. */
struct bankday_span {
	long long from_ms, to_ms;
};

/* What the judge needs of the connection. */
struct bankday_conn {
	int has_api;	      /* it has API credentials: the reconciliation runs */
	long long created_ms; /* when it was made */
	long long began_ms;   /* where its reconciliation's first window began */
};

/* A day judged. */
struct bankday {
	int complete;
	/* the spans read, merged, in order, clipped to the day and its overlap */
	struct bankday_span read[BANKDAY_READS_MAX];
	size_t nread;
	/* why it is not complete, for a person ("not read from 00:00 to 09:41",
	 * "the day is not over"); none when complete */
	char why[BANKDAY_WHY_MAX][BANKDAY_WHY_LEN];
	size_t nwhy;
};

/* Sort the n spans of s by their start and join those that overlap or
 * touch, in place; spans that end before they start are dropped. Returns
 * how many are left. */
size_t bankday_merge(struct bankday_span *s, size_t n);

/* Judge the day that starts at start_ms (its 00:00 in Brasilia) at now_ms,
 * from the n spans read (any order; those outside the day are ignored) of
 * connection c, into *out (always written whole). */
void bankday_judge(const struct bankday_conn *c, const struct bankday_span *spans, size_t n,
		   long long start_ms, long long now_ms, struct bankday *out);

/* ms as RFC 3339 in Brasilia time, "2026-11-26T09:41:00.000-03:00". */
void bankday_time(char out[BANKDAY_TIME_LEN + 1], long long ms);

/* The day of ms in Brasilia time, "YYYY-MM-DD" (what a bank connection's
 * counts of a day are kept by). */
void bankday_date(char out[11], long long ms);

#endif
