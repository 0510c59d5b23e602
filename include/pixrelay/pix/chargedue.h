/* chargedue: the terms of a charge with a due date (the standard's cobv,
 * docs/due-dates.md), without I/O.
 *
 * It reads the create request's due-date fields (dueDate, daysAfterDue,
 * fine, interest, discount), and computes what pixrelay itself says a payer
 * owes on a day: for the sandbox and for display only, since the bank
 * computes the amount due of a real charge. Days are calendar days in
 * Brasilia time (UTC-3); no holiday calendar is kept. Percentages are exact
 * decimal strings with two places ("2.00"), kept as hundredths of a percent;
 * each part is rounded half up to a cent once, from the exact product.
 */
#ifndef PIXRELAY_CHARGEDUE_H
#define PIXRELAY_CHARGEDUE_H

#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#define CHARGEDUE_DAYS_AFTER_DEFAULT 30 /* the standard's validadeAposVencimento when not sent */
#define CHARGEDUE_DAYS_AFTER_MAX 3650
#define CHARGEDUE_AHEAD_MAX 3650    /* dueDate at most this many days after today */
#define CHARGEDUE_PERCENT_MAX 10000 /* fine and interest: at most 100.00 % */
/* The most calendar days a bank moves a date that falls on days that are not
 * business days for the payer (the standard's CobVCalendario: Carnival is
 * Saturday to Tuesday, 4; one more for a local holiday next to them). */
#define CHARGEDUE_MOVED_MAX 5

/* A due-date charge's terms; date[0] == '\0' for an immediate charge. */
struct charge_due {
	char date[11];		 /* dueDate, YYYY-MM-DD */
	int64_t days_after;	 /* daysAfterDue: calendar days still payable after it */
	int64_t fine;		 /* fine, hundredths of a percent of the amount; 0: none */
	int64_t interest;	 /* interest a month, hundredths of a percent; 0: none */
	int64_t discount;	 /* cents off when paid until discount_until; 0: none */
	char discount_until[11]; /* YYYY-MM-DD, "" without a discount */
};

/* What a payer owes on a day, in cents: original + fine + interest -
 * discount = total. */
struct chargedue_parts {
	int64_t original, fine, interest, discount, total;
};

enum chargedue_result {
	CHARGEDUE_NOT_PAYABLE = 1, /* the day is after the last payable day */
};

/* Read the due-date fields of the create request `body` (a JSON object)
 * for a charge of `amount` cents created on day `today` (days since
 * 1970-01-01 in Brasilia time). Without dueDate, the other fields are
 * refused. Returns 0 and fills *out (all zero without dueDate), or -1 with
 * "field: rule" in err. */
int chargedue_parse(yajl_val body, int64_t amount, long long today, struct charge_due *out,
		    char *err, size_t errlen);

/* Days since 1970-01-01 of a valid "YYYY-MM-DD". */
long long chargedue_day(const char *date);

/* The day (days since 1970-01-01) that `ms` falls on in Brasilia time. */
long long chargedue_day_of_ms(int64_t ms);

/* The instant the charge stops being payable (its expiresAt): 00:00 in
 * Brasilia of the day after dueDate + daysAfterDue, ms since the epoch. */
int64_t chargedue_end_ms(const struct charge_due *d);

/* What a payer owes on `day` for a charge of `amount` cents: 0 with *out,
 * or CHARGEDUE_NOT_PAYABLE (after the last payable day; *out untouched). */
int chargedue_amount_on(const struct charge_due *d, int64_t amount, long long day,
			struct chargedue_parts *out);

/* The least and the most a Pix may carry to pay the charge: the amount
 * less the discount; the amount plus the fine and the interest of the last
 * payable day as a bank may count it, its dates moved past days that are
 * not business days (twice CHARGEDUE_MOVED_MAX days more) and each part
 * rounded up; the amount when no day after the due date is payable. */
void chargedue_bounds(const struct charge_due *d, int64_t amount, int64_t *min, int64_t *max);

/* "2.00" from hundredths: out has 32 bytes. */
void chargedue_percent_text(char out[32], int64_t hundredths);

#endif
