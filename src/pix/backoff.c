/* backoff: the arithmetic of retrying a postback. The delay before each
 * attempt (exponential, capped, jittered by a random value the caller
 * draws, without overflow for any attempt number), the verdict retry or
 * give up against the attempt and age limits, and the destination's
 * Retry-After header, which is hostile input: delta-seconds or any of RFC
 * 9110's three HTTP-date forms. Pure, with no clock of its own: the
 * dispatcher's relay/delivery.c passes the time and the policy. The plain
 * doubling of a reconnect's or a restart's wait is here too. */
#include "pixrelay/pix/backoff.h"

#include "pixrelay/core/timefmt.h"

#include <limits.h>
#include <math.h>
#include <string.h>

void backoff_policy_default(struct backoff_policy *p)
{
	p->base_ms = BACKOFF_DEFAULT_BASE_MS;
	p->factor = BACKOFF_DEFAULT_FACTOR;
	p->cap_ms = BACKOFF_DEFAULT_CAP_MS;
	p->max_attempts = BACKOFF_DEFAULT_MAX_ATTEMPTS;
	p->max_age_ms = BACKOFF_DEFAULT_MAX_AGE_MS;
	p->jitter_pct = BACKOFF_DEFAULT_JITTER_PCT;
}

static long long clamp_ll(long long v, long long lo, long long hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* base * factor^(attempt - 1), capped; in [0, cap]. */
static long long unjittered(const struct backoff_policy *p, int attempt)
{
	long long cap = p->cap_ms > 0 ? p->cap_ms : 0;
	long long base = clamp_ll(p->base_ms, 0, cap);
	double factor = p->factor >= 1.0 ? p->factor : 1.0; /* also catches NaN */
	double d;

	if (attempt < 1)
		attempt = 1;
	/* pow gives +inf rather than overflowing; (double)cap is at most 2^63 */
	d = (double)base * pow(factor, (double)(attempt - 1));
	if (!(d < (double)cap))
		return cap;
	return (long long)(d + 0.5);
}

long long backoff_delay_ms(const struct backoff_policy *p, int attempt, uint32_t rnd)
{
	long long d = unjittered(p, attempt);
	long long pct = clamp_ll(p->jitter_pct, 0, 100);
	/* span = d * pct / 100 without overflow; 0 <= span <= d */
	long long span = d / 100 * pct + d % 100 * pct / 100;
	long long s = (long long)rnd - 2147483648LL; /* [-2^31, 2^31) */
	/* offset = span * s / 2^31, split so that no product exceeds 2^63 - 2^31 */
	long long offset = (span >> 31) * s + (span & 0x7fffffffLL) * s / 2147483648LL;

	if (offset > 0 && d > LLONG_MAX - offset)
		return LLONG_MAX;
	return d + offset;
}

long long backoff_double(long long delay_ms, long long cap_ms)
{
	return delay_ms > cap_ms / 2 ? cap_ms : delay_ms * 2;
}

enum backoff_decision backoff_next(const struct backoff_policy *p, int attempts,
				   long long created_ms, long long now_ms, long long retry_after_ms,
				   uint32_t rnd, long long *next_at_ms)
{
	long long delay, next;

	if (attempts < 1)
		attempts = 1;
	if (p->max_attempts > 0 && attempts >= p->max_attempts)
		return BACKOFF_GIVE_UP;
	if (retry_after_ms >= 0) {
		long long cap = p->cap_ms > 0 ? p->cap_ms : 0;
		delay = clamp_ll(clamp_ll(retry_after_ms, p->base_ms, LLONG_MAX), 0, cap);
	} else {
		delay = backoff_delay_ms(p, attempts, rnd);
	}
	if (now_ms > 0 && delay > LLONG_MAX - now_ms)
		return BACKOFF_GIVE_UP; /* not representable, so beyond any deadline */
	next = now_ms + delay;
	if (p->max_age_ms > 0 && (created_ms <= LLONG_MAX - p->max_age_ms) &&
	    next > created_ms + p->max_age_ms)
		return BACKOFF_GIVE_UP;
	*next_at_ms = next;
	return BACKOFF_RETRY;
}

/* ---- Retry-After ---- */

struct cursor {
	const char *p, *end;
};

static int lit(struct cursor *c, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n) != 0)
		return -1;
	c->p += n;
	return 0;
}

/* Exactly `n` decimal digits. */
static int digits(struct cursor *c, int n, int *v)
{
	int x = 0;

	if (c->end - c->p < n)
		return -1;
	for (int i = 0; i < n; i++) {
		if (c->p[i] < '0' || c->p[i] > '9')
			return -1;
		x = x * 10 + (c->p[i] - '0');
	}
	c->p += n;
	*v = x;
	return 0;
}

/* One of `names`; its index in *idx. */
static int name(struct cursor *c, const char *const *names, int count, int *idx)
{
	for (int i = 0; i < count; i++) {
		if (lit(c, names[i]) == 0) {
			*idx = i;
			return 0;
		}
	}
	return -1;
}

static const char *const day_short[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
static const char *const day_long[] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
				       "Friday", "Saturday", "Sunday"};
static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
				     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/* The Gregorian year that contains Unix time `t`. */
static long long year_of(long long t)
{
	long long z = (t >= 0 ? t : t - 86399) / 86400 + 719468;
	long long era = (z >= 0 ? z : z - 146096) / 146097;
	long long doe = z - era * 146097;
	long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	long long mp = (5 * doy + 2) / 153;

	return yoe + era * 400 + (mp >= 10);
}

/* "HH:MM:SS" */
static int time_of_day(struct cursor *c, int *h, int *mi, int *s)
{
	if (digits(c, 2, h) || lit(c, ":") || digits(c, 2, mi) || lit(c, ":") || digits(c, 2, s))
		return -1;
	return *h <= 23 && *mi <= 59 && *s <= 60 ? 0 : -1;
}

/* Parse the three HTTP-date forms of RFC 9110 section 5.6.7 into Unix seconds. */
static int http_date(struct cursor c, long long now_s, long long *t)
{
	struct cursor start = c;
	int wd, d, mon, y4, y2, h, mi, s;
	long long year;

	/* IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT */
	if (name(&c, day_short, 7, &wd) == 0 && lit(&c, ", ") == 0 && digits(&c, 2, &d) == 0 &&
	    lit(&c, " ") == 0 && name(&c, months, 12, &mon) == 0 && lit(&c, " ") == 0 &&
	    digits(&c, 4, &y4) == 0 && lit(&c, " ") == 0 && time_of_day(&c, &h, &mi, &s) == 0 &&
	    lit(&c, " GMT") == 0 && c.p == c.end) {
		year = y4;
		goto found;
	}
	/* rfc850-date: Sunday, 06-Nov-94 08:49:37 GMT */
	c = start;
	if (name(&c, day_long, 7, &wd) == 0 && lit(&c, ", ") == 0 && digits(&c, 2, &d) == 0 &&
	    lit(&c, "-") == 0 && name(&c, months, 12, &mon) == 0 && lit(&c, "-") == 0 &&
	    digits(&c, 2, &y2) == 0 && lit(&c, " ") == 0 && time_of_day(&c, &h, &mi, &s) == 0 &&
	    lit(&c, " GMT") == 0 && c.p == c.end) {
		/* a two-digit year more than 50 years ahead is in the past century */
		long long now_year = year_of(clamp_ll(now_s, -(1LL << 46), 1LL << 46));
		year = now_year - (now_year % 100 + 100) % 100 + y2;
		if (year > now_year + 50)
			year -= 100;
		goto found;
	}
	/* asctime-date: Sun Nov  6 08:49:37 1994 */
	c = start;
	if (name(&c, day_short, 7, &wd) == 0 && lit(&c, " ") == 0 &&
	    name(&c, months, 12, &mon) == 0 && lit(&c, " ") == 0) {
		if (lit(&c, " ") == 0) {
			if (digits(&c, 1, &d) != 0)
				return -1;
		} else if (digits(&c, 2, &d) != 0) {
			return -1;
		}
		if (lit(&c, " ") == 0 && time_of_day(&c, &h, &mi, &s) == 0 && lit(&c, " ") == 0 &&
		    digits(&c, 4, &y4) == 0 && c.p == c.end) {
			year = y4;
			goto found;
		}
	}
	return -1;
found:
	if (d < 1 || d > timefmt_days_in_month(year, mon + 1))
		return -1;
	*t = timefmt_days_from_civil(year, mon + 1, d) * 86400 + h * 3600LL + mi * 60LL + s;
	return 0;
}

int backoff_parse_retry_after(const char *value, long long now_s, long long *delay_ms)
{
	struct cursor c = {value, value + strlen(value)};
	long long secs = 0;

	while (c.p < c.end && (*c.p == ' ' || *c.p == '\t'))
		c.p++;
	while (c.end > c.p && (c.end[-1] == ' ' || c.end[-1] == '\t'))
		c.end--;
	if (c.p == c.end)
		return -1;

	if (*c.p >= '0' && *c.p <= '9') {
		for (const char *q = c.p; q < c.end; q++) {
			if (*q < '0' || *q > '9')
				return -1;
			if (secs < BACKOFF_RETRY_AFTER_MAX_S)
				secs = secs * 10 + (*q - '0');
		}
	} else {
		long long t;

		if (http_date(c, now_s, &t) != 0)
			return -1;
		if (t > now_s) {
			/* t - now_s without signed overflow */
			unsigned long long diff = (unsigned long long)t - (unsigned long long)now_s;
			secs = diff < BACKOFF_RETRY_AFTER_MAX_S ? (long long)diff
								: BACKOFF_RETRY_AFTER_MAX_S;
		}
	}
	if (secs > BACKOFF_RETRY_AFTER_MAX_S)
		secs = BACKOFF_RETRY_AFTER_MAX_S;
	*delay_ms = secs * 1000;
	return 0;
}
