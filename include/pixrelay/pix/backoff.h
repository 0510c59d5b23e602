/* backoff: when to retry a failed webhook delivery (exponential with jitter), and
 * the plain doubling wait of a reconnect, a restart or a breaker's cooldown. No I/O.
 *
 * Defaults (backoff_policy_default): base 5 s, factor 3, cap 10 h, 15 attempts in
 * all, max age 3 days, jitter +/-20 %. Without jitter the retries come after:
 *
 *  retry  delay              time since the first attempt (cumulative)
 *    1   5 s                5 s              (after attempt 1 fails)
 *    2  15 s               20 s
 *    3  45 s                1 min 05 s
 *    4   2 min 15 s         3 min 20 s
 *    5   6 min 45 s        10 min 05 s
 *    6  20 min 15 s        30 min 20 s
 *    7   1 h 00 min 45 s    1 h 31 min 05 s
 *    8   3 h 02 min 15 s    4 h 33 min 20 s
 *    9   9 h 06 min 45 s   13 h 40 min 05 s
 *   10  10 h 00 min 00 s   23 h 40 min 05 s   (cap reached)
 *   11  10 h 00 min 00 s   33 h 40 min 05 s
 *   12  10 h 00 min 00 s   43 h 40 min 05 s
 *   13  10 h 00 min 00 s   53 h 40 min 05 s
 *   14  10 h 00 min 00 s   63 h 40 min 05 s
 *
 * so the 15th and last attempt comes about 2 days 16 h after the first (Standard
 * Webhooks recommends about 3 days). Jitter moves each delay by up to 20 %; the
 * 3-day max age bounds the worst case, where every delay is drawn high.
 */
#ifndef PIXRELAY_BACKOFF_H
#define PIXRELAY_BACKOFF_H

#include <stdint.h>

struct backoff_policy {
	long long base_ms;    /* first retry delay; default 5000 */
	double factor;	      /* growth per attempt; default 3.0; below 1 (or NaN) counts as 1 */
	long long cap_ms;     /* largest single delay before jitter; default 10 h */
	int max_attempts;     /* attempts in all, the first included; default 15; <= 0: no limit */
	long long max_age_ms; /* no attempt later than created + max_age; default 3 days;
			       * <= 0: no limit */
	int jitter_pct;	      /* +/- percent of randomisation; default 20; clamped to 0..100 */
};

#define BACKOFF_DEFAULT_BASE_MS 5000LL
#define BACKOFF_DEFAULT_FACTOR 3.0
#define BACKOFF_DEFAULT_CAP_MS (10LL * 3600 * 1000)
#define BACKOFF_DEFAULT_MAX_ATTEMPTS 15
#define BACKOFF_DEFAULT_MAX_AGE_MS (3LL * 24 * 3600 * 1000)
#define BACKOFF_DEFAULT_JITTER_PCT 20

/* rnd value for which backoff_delay_ms applies no jitter */
#define BACKOFF_RND_NO_JITTER UINT32_C(0x80000000)

/* Fill `p` with the defaults above. */
void backoff_policy_default(struct backoff_policy *p);

/* Delay before attempt `attempt + 1` after `attempt` failed attempts (values below
 * 1 count as 1): d = base * factor^(attempt - 1), capped at cap_ms (a negative base
 * or cap counts as 0; the cap wins over the base), then jittered:
 * d + floor-toward-zero(s * d * jitter_pct / 100 / 2^31) with s = rnd - 2^31, so
 * rnd = 0 gives exactly d - jitter, rnd = BACKOFF_RND_NO_JITTER gives d, and
 * rnd = UINT32_MAX gives just under d + jitter. `rnd` is a uniform 32-bit random
 * value from the caller (tests pass fixed values). The result is in [0, LLONG_MAX]
 * for any attempt number; it can exceed cap_ms by the jitter. */
long long backoff_delay_ms(const struct backoff_policy *p, int attempt, uint32_t rnd);

/* The wait after `delay_ms` where each failure doubles it up to `cap_ms` (a
 * node's reconnect, the embedded Redis's restart, a host's breaker): twice
 * delay_ms, at most cap_ms, with no jitter. */
long long backoff_double(long long delay_ms, long long cap_ms);

enum backoff_decision { BACKOFF_RETRY = 1, BACKOFF_GIVE_UP = 2 };

/* What to do after `attempts` failed attempts (the first one included) of a delivery
 * created at `created_ms`, the last one failing at `now_ms`. BACKOFF_GIVE_UP when
 * attempts >= max_attempts, or when the next attempt would come after
 * created_ms + max_age_ms. Otherwise BACKOFF_RETRY with *next_at_ms = now_ms + delay,
 * where the delay is backoff_delay_ms(p, attempts, rnd), or, when the server asked
 * with Retry-After (retry_after_ms >= 0), retry_after_ms brought into
 * [base_ms, cap_ms] without jitter. *next_at_ms is written only for BACKOFF_RETRY. */
enum backoff_decision backoff_next(const struct backoff_policy *p, int attempts,
				   long long created_ms, long long now_ms, long long retry_after_ms,
				   uint32_t rnd, long long *next_at_ms);

/* Largest delay backoff_parse_retry_after reports, in seconds (RFC 9111's 2^31). */
#define BACKOFF_RETRY_AFTER_MAX_S 2147483648LL

/* Parse a Retry-After header value, ignoring spaces and tabs around it: either
 * delta-seconds ("120", digits only) or an HTTP-date in any of the three forms
 * RFC 9110 makes recipients accept ("Wed, 21 Oct 2015 07:28:00 GMT",
 * "Wednesday, 21-Oct-15 07:28:00 GMT", "Wed Oct 21 07:28:00 2015"; names are
 * case-sensitive, the weekday is not checked against the date), compared with
 * `now_s` (Unix seconds). A date in the past gives 0; anything larger than
 * BACKOFF_RETRY_AFTER_MAX_S seconds gives that. Returns 0 with *delay_ms >= 0, or
 * -1 (nothing written) when malformed: empty, signed ("-5", "+5"), fractional,
 * or not a valid date. */
int backoff_parse_retry_after(const char *value, long long now_s, long long *delay_ms);

#endif
