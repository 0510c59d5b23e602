/* check.h: the unit tests' few assertions. Each failed check prints where
 * and what, the test goes on, and main returns check_finish() (1 on any
 * failure). */
#ifndef PIXRELAY_TEST_CHECK_H
#define PIXRELAY_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int check_failures, check_count;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		check_count++;                                                                     \
		if (!(cond)) {                                                                     \
			check_failures++;                                                          \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
		}                                                                                  \
	} while (0)

#define CHECK_INT(got, want)                                                                       \
	do {                                                                                       \
		long long g_ = (long long)(got), w_ = (long long)(want);                           \
		check_count++;                                                                     \
		if (g_ != w_) {                                                                    \
			check_failures++;                                                          \
			fprintf(stderr, "%s:%d: %s == %lld, want %lld\n", __FILE__, __LINE__,      \
				#got, g_, w_);                                                     \
		}                                                                                  \
	} while (0)

#define CHECK_STR(got, want)                                                                       \
	do {                                                                                       \
		const char *g_ = (got), *w_ = (want);                                              \
		check_count++;                                                                     \
		if (!g_ || !w_ || strcmp(g_, w_) != 0) {                                           \
			check_failures++;                                                          \
			fprintf(stderr, "%s:%d: %s == \"%s\", want \"%s\"\n", __FILE__, __LINE__,  \
				#got, g_ ? g_ : "(null)", w_ ? w_ : "(null)");                     \
		}                                                                                  \
	} while (0)

static inline int check_finish(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
	return check_failures ? 1 : 0;
}

#endif
