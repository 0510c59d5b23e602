/* chargedue: a due-date charge's terms read from the create request field
 * by field (each refusal names its field), and the amount due on a day
 * computed in integer cents: the fine once after the due date, the interest
 * per calendar day late (a month's rate over 30 days), the discount until
 * its date. The rules are docs/due-dates.md's. */
#include "pixrelay/pix/chargedue.h"

#include "pixrelay/core/json.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/core/validate.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define DAY_MS (24LL * 3600 * 1000)
#define BRASILIA_MS (3LL * 3600 * 1000) /* UTC-3, no daylight saving since 2019 */

long long chargedue_day(const char *date)
{
	int y = 1970, m = 1, d = 1;

	validate_date(date, &y, &m, &d);
	return timefmt_days_from_civil(y, m, d);
}

long long chargedue_day_of_ms(int64_t ms)
{
	long long t = (long long)ms - BRASILIA_MS;

	return t >= 0 ? t / DAY_MS : -((-t + DAY_MS - 1) / DAY_MS);
}

int64_t chargedue_end_ms(const struct charge_due *d)
{
	return (chargedue_day(d->date) + d->days_after + 1) * DAY_MS + BRASILIA_MS;
}

void chargedue_percent_text(char out[32], int64_t hundredths)
{
	snprintf(out, 32, "%lld.%02lld", (long long)(hundredths / 100),
		 (long long)(hundredths % 100));
}

/* A date field: 0 with its day, or -1 with the message. */
static int date_field(yajl_val v, const char *name, char out[11], long long *day, char *err,
		      size_t errlen)
{
	const char *s = YAJL_GET_STRING(v);

	if (!s || strlen(s) != 10 || validate_date(s, NULL, NULL, NULL) < 0) {
		snprintf(err, errlen, "%s: must be a date written YYYY-MM-DD", name);
		return -1;
	}
	memcpy(out, s, 11);
	*day = chargedue_day(s);
	return 0;
}

/* A percentage: a string of 1 to 3 digits, a dot and 2 digits, more than
 * 0.00 and at most 100.00. 0 with hundredths, or -1 with the message. */
static int percent_field(yajl_val v, const char *name, const char *what, int64_t *out, char *err,
			 size_t errlen)
{
	const char *s = YAJL_GET_STRING(v);
	size_t n = s ? strlen(s) : 0, i;
	int64_t x = 0;

	if (!s || n < 4 || n > 6 || s[n - 3] != '.') {
		snprintf(err, errlen, "%s: must be a string with two decimals, e.g. \"2.00\" (%s)",
			 name, what);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (i == n - 3)
			continue;
		if (s[i] < '0' || s[i] > '9') {
			snprintf(err, errlen,
				 "%s: must be a string with two decimals, e.g. \"2.00\" (%s)", name,
				 what);
			return -1;
		}
		x = x * 10 + (s[i] - '0');
	}
	if (x <= 0 || x > CHARGEDUE_PERCENT_MAX) {
		snprintf(err, errlen, "%s: must be more than 0.00 and at most 100.00 (%s)", name,
			 what);
		return -1;
	}
	*out = x;
	return 0;
}

static bool given(yajl_val v)
{
	return v && !YAJL_IS_NULL(v);
}

static int discount_field(yajl_val v, int64_t amount, long long today, long long due,
			  struct charge_due *d, char *err, size_t errlen)
{
	yajl_val a, u;
	long long until = 0;

	if (!YAJL_IS_OBJECT(v)) {
		snprintf(
		    err, errlen,
		    "discount: must be an object {\"amount\": cents, \"until\": \"YYYY-MM-DD\"}");
		return -1;
	}
	for (size_t i = 0; i < v->u.object.len; i++) {
		const char *k = v->u.object.keys[i];

		if (strcmp(k, "amount") != 0 && strcmp(k, "until") != 0) {
			char echo[JSON_ECHO_MAX + 1];

			snprintf(err, errlen,
				 "discount: unknown field '%s'; allowed: amount, until",
				 json_echo(echo, k));
			return -1;
		}
	}
	a = json_get(v, "amount");
	if (!given(a)) {
		snprintf(err, errlen, "discount.amount: is required (an integer number of cents)");
		return -1;
	}
	if (!json_is_int64(a, &d->discount) || d->discount < 1) {
		d->discount = 0;
		snprintf(err, errlen,
			 "discount.amount: must be a positive integer number of cents");
		return -1;
	}
	if (d->discount >= amount) {
		snprintf(err, errlen, "discount.amount: must be less than amount (%lld cents)",
			 (long long)amount);
		return -1;
	}
	u = json_get(v, "until");
	if (!given(u)) {
		snprintf(err, errlen, "discount.until: is required (the last day of the discount)");
		return -1;
	}
	if (date_field(u, "discount.until", d->discount_until, &until, err, errlen) < 0)
		return -1;
	if (until > due) {
		snprintf(err, errlen, "discount.until: must not be after dueDate (%s)", d->date);
		return -1;
	}
	if (until < today) {
		snprintf(err, errlen, "discount.until: must not be in the past (Brasilia time)");
		return -1;
	}
	return 0;
}

int chargedue_parse(yajl_val body, int64_t amount, long long today, struct charge_due *out,
		    char *err, size_t errlen)
{
	static const char *const only[] = {"daysAfterDue", "fine", "interest", "discount"};
	struct charge_due d;
	yajl_val v = json_get(body, "dueDate");
	long long due = 0;
	int rc = -1;

	memset(&d, 0, sizeof(d));
	if (!given(v)) {
		for (size_t i = 0; i < sizeof(only) / sizeof(*only); i++) {
			if (given(json_get(body, only[i]))) {
				snprintf(err, errlen,
					 "%s: only with dueDate (a charge with a due date)",
					 only[i]);
				goto done;
			}
		}
		*out = d;
		rc = 0;
		goto done;
	}
	if (date_field(v, "dueDate", d.date, &due, err, errlen) < 0)
		goto done;
	if (due < today) {
		snprintf(err, errlen, "dueDate: must not be in the past (Brasilia time)");
		goto done;
	}
	if (due > today + CHARGEDUE_AHEAD_MAX) {
		snprintf(err, errlen, "dueDate: must be at most %d days from today",
			 CHARGEDUE_AHEAD_MAX);
		goto done;
	}
	d.days_after = CHARGEDUE_DAYS_AFTER_DEFAULT;
	v = json_get(body, "daysAfterDue");
	if (given(v) && (!json_is_int64(v, &d.days_after) || d.days_after < 0 ||
			 d.days_after > CHARGEDUE_DAYS_AFTER_MAX)) {
		snprintf(err, errlen, "daysAfterDue: must be an integer from 0 to %d (days)",
			 CHARGEDUE_DAYS_AFTER_MAX);
		goto done;
	}
	v = json_get(body, "fine");
	if (given(v) && percent_field(v, "fine", "percent of the amount", &d.fine, err, errlen) < 0)
		goto done;
	v = json_get(body, "interest");
	if (given(v) &&
	    percent_field(v, "interest", "percent a month", &d.interest, err, errlen) < 0)
		goto done;
	v = json_get(body, "discount");
	if (given(v) && discount_field(v, amount, today, due, &d, err, errlen) < 0)
		goto done;
	*out = d;
	rc = 0;
done:
	return rc;
}

int chargedue_amount_on(const struct charge_due *d, int64_t amount, long long day,
			struct chargedue_parts *out)
{
	long long due = chargedue_day(d->date);
	struct chargedue_parts p;

	if (day > due + d->days_after)
		return CHARGEDUE_NOT_PAYABLE;
	memset(&p, 0, sizeof(p));
	p.original = amount;
	if (d->discount && day <= chargedue_day(d->discount_until))
		p.discount = d->discount;
	if (day > due) {
		/* amount <= 1e11, a percentage <= 1e4 hundredths and at most
		 * 3650 days late: every product fits in 63 bits */
		p.fine = (amount * d->fine + 5000) / 10000;
		p.interest = (amount * d->interest * (int64_t)(day - due) + 150000) / 300000;
	}
	p.total = p.original + p.fine + p.interest - p.discount;
	*out = p;
	return 0;
}

void chargedue_bounds(const struct charge_due *d, int64_t amount, int64_t *min, int64_t *max)
{
	/* the most days late a bank may count: its dates moved twice, the
	 * due date and then the last payable day */
	int64_t late = d->days_after + 2 * CHARGEDUE_MOVED_MAX;

	*min = amount - d->discount;
	*max = amount;
	if (d->days_after == 0)
		return; /* nothing late is payable: a moved due date moves the fine too */
	/* each part rounded up, for a bank that does (the standard names no
	 * rounding); amount <= 1e11, a percentage <= 1e4 hundredths and
	 * late <= 3660: every product fits in 63 bits */
	*max += (amount * d->fine + 9999) / 10000;
	*max += (amount * d->interest * late + 299999) / 300000;
}
