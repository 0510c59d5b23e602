/* check.h: the unit tests' few assertions. Each failed check prints where
 * and what, the test goes on, and main returns check_finish() (1 on any
 * failure). */
#ifndef PIXRELAY_TEST_CHECK_H
#define PIXRELAY_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
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

/* The whole file `dir`/`name` (a test's data, as meson passes its
 * directory), NUL-terminated, malloc'd; exits 2 when it cannot be read. */
static inline char *check_file(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(2);
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		exit(2);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static inline int check_finish(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
	return check_failures ? 1 : 0;
}

#endif
