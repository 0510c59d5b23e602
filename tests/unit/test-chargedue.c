/* Unit tests of chargedue and the due-date fields of charge_parse_create:
 * each field's refusals (types, dates, the past, decimals, discount after
 * the due date), the payer required, and the amount due in exact cents
 * (the fine once, the interest per calendar day, rounding half up). */
#include "check.h"

#include "pixrelay/core/json.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/pix/charge.h"
#include "pixrelay/pix/chargedue.h"

#include <stdlib.h>
#include <string.h>

static struct charge_limits lim = {86400, 2592000, 0};

/* charge_parse_create of `json`: 0 and *in, or -1 with err. */
static int parse(const char *json, struct charge_input *in, char *err, size_t errlen)
{
	yajl_val v = NULL;
	int rc;

	if (json_parse_object(json, strlen(json), &v, err, errlen) < 0)
		return -2;
	rc = charge_parse_create(v, &lim, in, err, errlen);
	yajl_tree_free(v);
	return rc;
}

#define PAYER "\"name\":\"Maria\",\"document\":\"529.982.247-25\""

static void refused(const char *json, const char *want)
{
	struct charge_input in;
	char err[512] = "";

	CHECK_INT(parse(json, &in, err, sizeof(err)), -1);
	CHECK_STR(err, want);
}

static void test_fields(void)
{
	struct charge_input in;
	char err[512] = "";

	CHECK_INT(parse("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"daysAfterDue\":5,"
			"\"fine\":\"2.00\",\"interest\":\"1.50\",\"discount\":{\"amount\":500,"
			"\"until\":\"2026-12-05\"}," PAYER "}",
			&in, err, sizeof(err)),
		  0);
	CHECK_STR(in.due.date, "2026-12-10");
	CHECK_INT(in.due.days_after, 5);
	CHECK_INT(in.due.fine, 200);
	CHECK_INT(in.due.interest, 150);
	CHECK_INT(in.due.discount, 500);
	CHECK_STR(in.due.discount_until, "2026-12-05");
	CHECK_INT(in.expiration, 0);
	CHECK_STR(in.document, "52998224725");
	charge_input_deinit(&in);

	/* the defaults; a due date today is fine */
	CHECK_INT(
	    parse("{\"amount\":10000,\"dueDate\":\"2026-12-02\"," PAYER "}", &in, err, sizeof(err)),
	    0);
	CHECK_INT(in.due.days_after, 30);
	CHECK_INT(in.due.fine, 0);
	CHECK_INT(in.due.discount, 0);
	charge_input_deinit(&in);

	/* an immediate charge has no terms */
	CHECK_INT(parse("{\"amount\":10000}", &in, err, sizeof(err)), 0);
	CHECK(!charge_has_due(&in));
	CHECK_INT(in.expiration, 86400);
	charge_input_deinit(&in);
}

static void test_refusals(void)
{
	refused("{\"amount\":10000,\"dueDate\":20261210," PAYER "}",
		"dueDate: must be a date written YYYY-MM-DD");
	refused("{\"amount\":10000,\"dueDate\":\"2026-02-30\"," PAYER "}",
		"dueDate: must be a date written YYYY-MM-DD");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-1\"," PAYER "}",
		"dueDate: must be a date written YYYY-MM-DD");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10T00:00:00\"," PAYER "}",
		"dueDate: must be a date written YYYY-MM-DD");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-01\"," PAYER "}",
		"dueDate: must not be in the past (Brasilia time)");
	refused("{\"amount\":10000,\"dueDate\":\"2036-12-01\"," PAYER "}",
		"dueDate: must be at most 3650 days from today");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"daysAfterDue\":-1," PAYER "}",
		"daysAfterDue: must be an integer from 0 to 3650 (days)");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"daysAfterDue\":1.5," PAYER "}",
		"daysAfterDue: must be an integer from 0 to 3650 (days)");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"daysAfterDue\":\"3\"," PAYER "}",
		"daysAfterDue: must be an integer from 0 to 3650 (days)");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"fine\":2," PAYER "}",
		"fine: must be a string with two decimals, e.g. \"2.00\" (percent of the amount)");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"fine\":\"2\"," PAYER "}",
		"fine: must be a string with two decimals, e.g. \"2.00\" (percent of the amount)");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"fine\":\"2.0\"," PAYER "}",
		"fine: must be a string with two decimals, e.g. \"2.00\" (percent of the amount)");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"fine\":\"-1.00\"," PAYER "}",
		"fine: must be a string with two decimals, e.g. \"2.00\" (percent of the amount)");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"fine\":\"1e2.00\"," PAYER "}",
		"fine: must be a string with two decimals, e.g. \"2.00\" (percent of the amount)");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"fine\":\"0.00\"," PAYER "}",
		"fine: must be more than 0.00 and at most 100.00 (percent of the amount)");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"fine\":\"100.01\"," PAYER "}",
		"fine: must be more than 0.00 and at most 100.00 (percent of the amount)");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"interest\":\"1.005\"," PAYER "}",
		"interest: must be a string with two decimals, e.g. \"2.00\" (percent a month)");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"interest\":1.5," PAYER "}",
		"interest: must be a string with two decimals, e.g. \"2.00\" (percent a month)");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"discount\":500," PAYER "}",
		"discount: must be an object {\"amount\": cents, \"until\": \"YYYY-MM-DD\"}");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"discount\":{\"amount\":5,"
		"\"until\":\"2026-12-05\",\"percent\":1}," PAYER "}",
		"discount: unknown field 'percent'; allowed: amount, until");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"discount\":{\"until\":"
		"\"2026-12-05\"}," PAYER "}",
		"discount.amount: is required (an integer number of cents)");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"discount\":{\"amount\":\"5\","
		"\"until\":\"2026-12-05\"}," PAYER "}",
		"discount.amount: must be a positive integer number of cents");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"discount\":{\"amount\":0,"
		"\"until\":\"2026-12-05\"}," PAYER "}",
		"discount.amount: must be a positive integer number of cents");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"discount\":{\"amount\":10000,"
		"\"until\":\"2026-12-05\"}," PAYER "}",
		"discount.amount: must be less than amount (10000 cents)");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"discount\":{\"amount\":500}," PAYER
		"}",
		"discount.until: is required (the last day of the discount)");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"discount\":{\"amount\":500,"
		"\"until\":\"5 dec\"}," PAYER "}",
		"discount.until: must be a date written YYYY-MM-DD");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"discount\":{\"amount\":500,"
		"\"until\":\"2026-12-11\"}," PAYER "}",
		"discount.until: must not be after dueDate (2026-12-10)");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"discount\":{\"amount\":500,"
		"\"until\":\"2026-12-01\"}," PAYER "}",
		"discount.until: must not be in the past (Brasilia time)");
	/* the terms without a due date */
	refused("{\"amount\":10000,\"fine\":\"2.00\"}",
		"fine: only with dueDate (a charge with a due date)");
	refused("{\"amount\":10000,\"daysAfterDue\":3}",
		"daysAfterDue: only with dueDate (a charge with a due date)");
	refused("{\"amount\":10000,\"discount\":{}}",
		"discount: only with dueDate (a charge with a due date)");
	/* the payer, and no expiration */
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"document\":\"52998224725\"}",
		"name: is required with dueDate (the payer's name)");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"name\":\"  \",\"document\":"
		"\"52998224725\"}",
		"name: is required with dueDate (the payer's name)");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"name\":\"Maria\"}",
		"document: is required with dueDate (the payer's CPF or CNPJ)");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"name\":\"Maria\",\"document\":"
		"\"529.982.247-24\"}",
		"document: not a valid CPF or CNPJ");
	refused("{\"amount\":10000,\"dueDate\":\"2026-12-10\",\"expiration\":3600," PAYER "}",
		"expiration: not with dueDate (a charge with a due date is payable until dueDate + "
		"daysAfterDue)");
}

static struct chargedue_parts on(const struct charge_due *d, int64_t amount, const char *day)
{
	struct chargedue_parts p;

	memset(&p, 0xff, sizeof(p));
	CHECK_INT(chargedue_amount_on(d, amount, chargedue_day(day), &p), 0);
	return p;
}

static void test_amounts(void)
{
	struct charge_due d = {"2026-12-10", 30, 200, 100, 500, "2026-12-05"};
	struct chargedue_parts p;
	int64_t lo = 0, hi = 0;

	/* early: the discount; on the due date: the amount; late: fine and interest */
	p = on(&d, 10000, "2026-12-05");
	CHECK_INT(p.discount, 500);
	CHECK_INT(p.total, 9500);
	p = on(&d, 10000, "2026-12-06");
	CHECK_INT(p.discount, 0);
	CHECK_INT(p.total, 10000);
	p = on(&d, 10000, "2026-12-10");
	CHECK_INT(p.total, 10000);
	/* 1 day late: 2 % fine = 200; 1 %/month over 30 days: 10000 * 0.01 / 30 = 3.33 -> 3 */
	p = on(&d, 10000, "2026-12-11");
	CHECK_INT(p.fine, 200);
	CHECK_INT(p.interest, 3);
	CHECK_INT(p.total, 10203);
	/* 10 days late: 33.33 -> 33; the fine once */
	p = on(&d, 10000, "2026-12-20");
	CHECK_INT(p.fine, 200);
	CHECK_INT(p.interest, 33);
	CHECK_INT(p.total, 10233);
	/* the last payable day (30 days late: a whole month, 1 %) */
	p = on(&d, 10000, "2027-01-09");
	CHECK_INT(p.interest, 100);
	CHECK_INT(p.total, 10300);
	CHECK_INT(chargedue_amount_on(&d, 10000, chargedue_day("2027-01-10"), &p),
		  CHARGEDUE_NOT_PAYABLE);
	/* the most: a bank may move the due date and then the last payable day
	 * past days that are not business days (10 days more: 40 days, 133.33),
	 * and round each part up (134; the fine is exact) */
	chargedue_bounds(&d, 10000, &lo, &hi);
	CHECK_INT(lo, 9500);
	CHECK_INT(hi, 10000 + 200 + 134);
	d.interest = 0;
	chargedue_bounds(&d, 12345, &lo, &hi);
	CHECK_INT(hi, 12345 + 247); /* 246.9 up */
	chargedue_bounds(&d, 10000, &lo, &hi);
	CHECK_INT(hi, 10200);
	d.fine = 0;
	chargedue_bounds(&d, 10000, &lo, &hi);
	CHECK_INT(hi, 10000);

	/* rounding half up, once, from the exact product */
	d = (struct charge_due){"2026-12-10", 30, 250, 100, 0, ""};
	p = on(&d, 12345, "2026-12-11");
	CHECK_INT(p.fine, 309);	  /* 308.625 */
	CHECK_INT(p.interest, 4); /* 4.115 */
	p = on(&d, 12345, "2026-12-25");
	CHECK_INT(p.interest, 62); /* 61.725 */
	d = (struct charge_due){"2026-12-10", 30, 25, 100, 0, ""};
	p = on(&d, 200, "2026-12-11");
	CHECK_INT(p.fine, 1); /* 0.5 */
	p = on(&d, 1500, "2026-12-11");
	CHECK_INT(p.interest, 1); /* 0.5 */
	p = on(&d, 1499, "2026-12-11");
	CHECK_INT(p.interest, 0); /* 0.4997 */

	/* no days after: nothing late is payable, the most is the amount */
	d = (struct charge_due){"2026-12-10", 0, 200, 100, 0, ""};
	chargedue_bounds(&d, 10000, &lo, &hi);
	CHECK_INT(lo, 10000);
	CHECK_INT(hi, 10000);
	/* the largest: R$ 999,999,999.99, 100 % a month, 3650 days late */
	d = (struct charge_due){"2026-12-10", 3650, 10000, 10000, 0, ""};
	chargedue_bounds(&d, 99999999999LL, &lo, &hi);
	CHECK_INT(hi, 99999999999LL * 2 + 99999999999LL * 3660 / 30);
}

static void test_days(void)
{
	struct charge_due d = {"2026-12-10", 2, 0, 0, 0, ""};
	long long ms = 0;

	/* 00:00 in Brasilia after the last payable day (12-12) */
	CHECK_INT(timefmt_parse("2026-12-13T03:00:00Z", &ms), 0);
	CHECK_INT(chargedue_end_ms(&d), ms);
	CHECK_INT(chargedue_day_of_ms(ms - 1), chargedue_day("2026-12-12"));
	CHECK_INT(chargedue_day_of_ms(ms), chargedue_day("2026-12-13"));
	CHECK_INT(chargedue_day_of_ms(0), chargedue_day("1969-12-31"));
}

int main(void)
{
	lim.today = timefmt_days_from_civil(2026, 12, 2);
	test_fields();
	test_refusals();
	test_amounts();
	test_days();
	return check_finish("chargedue");
}
