/* bankday: whether the spans of a bank's list of Pix that the
 * reconciliation read cover a day in Brasilia time, and why not, in words
 * (docs/bank-api.md, "The day's report"). The spans come from the store
 * (store/banks_recon.c reads them for the report); this file has no I/O.
 */
#include "pixrelay/pix/bankday.h"

#include "pixrelay/core/timefmt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SECOND_MS 1000LL
#define GAPS_SHOWN (BANKDAY_WHY_MAX - 4) /* the others are counted */

static int by_start(const void *a, const void *b)
{
	const struct bankday_span *x = a, *y = b;

	return x->from_ms < y->from_ms ? -1 : x->from_ms > y->from_ms;
}

size_t bankday_merge(struct bankday_span *s, size_t n)
{
	size_t kept = 0;

	for (size_t i = 0; i < n; i++)
		if (s[i].to_ms >= s[i].from_ms)
			s[kept++] = s[i];
	if (kept == 0)
		return 0;
	qsort(s, kept, sizeof(*s), by_start);
	n = kept;
	kept = 0;
	for (size_t i = 1; i < n; i++) {
		if (s[i].from_ms <= s[kept].to_ms) {
			if (s[i].to_ms > s[kept].to_ms)
				s[kept].to_ms = s[i].to_ms;
		} else {
			s[++kept] = s[i];
		}
	}
	return kept + 1;
}

void bankday_time(char out[BANKDAY_TIME_LEN + 1], long long ms)
{
	char utc[25];

	timefmt_rfc3339(utc, (uint64_t)(ms > BANKDAY_OFFSET_MS ? ms - BANKDAY_OFFSET_MS : 0));
	snprintf(out, BANKDAY_TIME_LEN + 1, "%.23s-03:00", utc);
}

void bankday_date(char out[11], long long ms)
{
	char t[BANKDAY_TIME_LEN + 1];

	bankday_time(t, ms);
	memcpy(out, t, 10);
	out[10] = '\0';
}

/* "HH:MM", or "HH:MM:SS" off the minute, of ms (to the second below) on
 * the day that starts at start; "24:00" at its end, "... the next day"
 * after it. */
static void clock_of(char out[40], long long ms, long long start)
{
	long long sec = (ms - start) / SECOND_MS, day = sec / 86400, h, m;
	char hm[16];

	sec %= 86400;
	h = sec / 3600;
	m = sec / 60 % 60;
	if (sec % 60)
		snprintf(hm, sizeof(hm), "%02lld:%02lld:%02lld", h, m, sec % 60);
	else
		snprintf(hm, sizeof(hm), "%02lld:%02lld", h, m);
	if (day == 1 && sec == 0)
		snprintf(out, 40, "24:00");
	else
		snprintf(out, 40, "%s%s", hm, day ? " the next day" : "");
}

/* "on YYYY-MM-DD at HH:MM[:SS]", Brasilia time. */
static void date_of(char out[64], long long ms)
{
	char t[BANKDAY_TIME_LEN + 1], hm[40];
	long long start = (ms + BANKDAY_MS - BANKDAY_OFFSET_MS) / BANKDAY_MS * BANKDAY_MS -
			  BANKDAY_MS + BANKDAY_OFFSET_MS;

	bankday_time(t, ms);
	clock_of(hm, ms, start);
	snprintf(out, 64, "on %.10s at %s", t, hm);
}

static void say(struct bankday *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct bankday *out, const char *fmt, ...)
{
	va_list ap;

	if (out->nwhy >= BANKDAY_WHY_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(out->why[out->nwhy++], BANKDAY_WHY_LEN, fmt, ap);
	va_end(ap);
}

void bankday_judge(const struct bankday_conn *c, const struct bankday_span *spans, size_t n,
		   long long start_ms, long long now_ms, struct bankday *out)
{
	long long end = start_ms + BANKDAY_MS, until = end + BANKDAY_OVERLAP_MS;
	long long limit = now_ms < until ? now_ms : until, cursor = start_ms;
	struct bankday_span gaps[BANKDAY_WHY_MAX];
	size_t ngaps = 0, more = 0;
	char a[64], b[40];
	int before_began = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n && out->nread < BANKDAY_READS_MAX; i++)
		if (spans[i].to_ms > start_ms && spans[i].from_ms < until)
			out->read[out->nread++] = spans[i];
	out->nread = bankday_merge(out->read, out->nread);
	for (size_t i = 0; i < out->nread; i++) {
		struct bankday_span *s = &out->read[i];

		if (s->from_ms < start_ms)
			s->from_ms = start_ms;
		if (s->to_ms > until)
			s->to_ms = until;
	}
	if (!c->has_api) {
		say(out, "the connection has no API credentials: only its webhook is heard");
		return;
	}
	if (now_ms < start_ms) {
		say(out, "the day has not begun");
		return;
	}
	/* what of [00:00, now or 24:00 + the overlap] no span covers */
	for (size_t i = 0; i <= out->nread && cursor < limit; i++) {
		long long next = i < out->nread ? out->read[i].from_ms : limit;

		if (next > cursor) {
			if (ngaps < BANKDAY_WHY_MAX)
				gaps[ngaps++] =
				    (struct bankday_span){cursor, next < limit ? next : limit};
			else
				more++;
			before_began |= cursor < c->began_ms;
		}
		if (i < out->nread && out->read[i].to_ms > cursor)
			cursor = out->read[i].to_ms;
	}
	out->complete = ngaps == 0 && now_ms >= until;
	if (ngaps && end <= c->created_ms) {
		date_of(a, c->created_ms);
		say(out,
		    "the connection was made %s, after this day (bank reconcile --since reads back "
		    "before it)",
		    a);
		before_began = 0;
	}
	/* the gaps, leaving room for the four lines that may go with them */
	for (size_t i = 0; i < ngaps; i++) {
		if (i == GAPS_SHOWN) {
			more += ngaps - i;
			break;
		}
		clock_of(a, gaps[i].from_ms, start_ms);
		/* a gap within one second still reads as one */
		clock_of(b,
			 gaps[i].to_ms / SECOND_MS > gaps[i].from_ms / SECOND_MS
			     ? gaps[i].to_ms
			     : gaps[i].from_ms + SECOND_MS,
			 start_ms);
		if (gaps[i].to_ms == now_ms && now_ms < until) /* up to now: not over */
			say(out, "not read since %s", a);
		else
			say(out, "not read from %s to %s", a, b);
	}
	if (more)
		say(out, "and %zu more spans not read", more);
	if (before_began) {
		date_of(a, c->began_ms);
		say(out,
		    "the reconciliation began %s, 10 minutes before the API credentials were given "
		    "(bank reconcile --since reads back before it)",
		    a);
	}
	if (now_ms < end)
		say(out, "the day is not over");
	else if (now_ms < until)
		say(out, "the 10 minutes past its end, when the bank may still list its last Pix, "
			 "are not over");
}
