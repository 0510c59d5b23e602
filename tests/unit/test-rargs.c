/* rargs (rargs.h): arguments appended in order, numbers as decimal text
 * that stays where it was written while the list grows, borrowed strings
 * and slices pointed to, everything freed by rargs_deinit. */
#include "pixrelay/redis/rargs.h"

#include "check.h"

#include <limits.h>
#include <stdio.h>

static void test_empty(void)
{
	struct rargs a;

	rargs_init(&a);
	CHECK_INT(a.argc, 0);
	rargs_deinit(&a);
	CHECK_INT(a.argc, 0);
	CHECK(a.argv == NULL);
}

static void test_kinds(void)
{
	static const char slice[] = {'a', '\0', 'b'};
	const char *s = "hello";
	struct rargs a;

	rargs_init(&a);
	rargs_str(&a, s);
	rargs_str(&a, "");
	rargs_bytes(&a, slice, sizeof(slice));
	rargs_ll(&a, 0);
	rargs_ll(&a, -12);
	rargs_ll(&a, LLONG_MIN);
	rargs_ll(&a, LLONG_MAX);
	CHECK_INT(a.argc, 7);
	CHECK(a.argv[0] == s); /* borrowed, not copied */
	CHECK_INT(a.lens[0], 5);
	CHECK_STR(a.argv[1], "");
	CHECK_INT(a.lens[1], 0);
	CHECK(a.argv[2] == slice);
	CHECK_INT(a.lens[2], 3);
	CHECK_STR(a.argv[3], "0");
	CHECK_INT(a.lens[3], 1);
	CHECK_STR(a.argv[4], "-12");
	CHECK_INT(a.lens[4], 3);
	CHECK_STR(a.argv[5], "-9223372036854775808");
	CHECK_INT(a.lens[5], 20);
	CHECK_STR(a.argv[6], "9223372036854775807");
	CHECK_INT(a.lens[6], 19);
	rargs_deinit(&a);
}

/* Past the first arrays and many blocks of text: what was appended first
 * is still there, unchanged. */
static void test_growth(void)
{
	struct rargs a;
	char want[32];
	int bad = 0;

	rargs_init(&a);
	for (long long i = 0; i < 5000; i++) {
		if (i % 3 == 0)
			rargs_str(&a, "x");
		else
			rargs_ll(&a, i * 1000003LL - 2500000000LL);
	}
	CHECK_INT(a.argc, 5000);
	for (long long i = 0; i < 5000; i++) {
		if (i % 3 == 0)
			snprintf(want, sizeof(want), "x");
		else
			snprintf(want, sizeof(want), "%lld", i * 1000003LL - 2500000000LL);
		bad += strcmp(a.argv[i], want) != 0 || a.lens[i] != strlen(want);
	}
	CHECK_INT(bad, 0);
	rargs_deinit(&a);
	/* usable again */
	rargs_ll(&a, 7);
	CHECK_INT(a.argc, 1);
	CHECK_STR(a.argv[0], "7");
	rargs_deinit(&a);
}

int main(void)
{
	test_empty();
	test_kinds();
	test_growth();
	return check_finish("rargs");
}
