/* mem: the allocation wrappers of mem.h. Each aborts with its caller's file
 * and line instead of returning NULL (a zero-byte request still gets a
 * block), so no caller checks for NULL; mem_wipe clears secrets with
 * OPENSSL_cleanse, which the compiler may not drop. Every file of src/
 * allocates through here. */
#include "pixrelay/core/mem.h"

#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mem_oom(const char *file, int line)
{
	fprintf(stderr, "pixrelay: out of memory at %s:%d\n", file, line);
	fflush(stderr);
	abort();
}

void *mem_alloc_at(size_t n, const char *file, int line)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		mem_oom(file, line);
	return p;
}

void *mem_calloc_at(size_t n, size_t size, const char *file, int line)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		mem_oom(file, line);
	return p;
}

void *mem_realloc_at(void *p, size_t n, const char *file, int line)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		mem_oom(file, line);
	return q;
}

char *mem_strdup_at(const char *s, const char *file, int line)
{
	return mem_strndup_at(s, strlen(s), file, line);
}

char *mem_strndup_at(const char *s, size_t n, const char *file, int line)
{
	char *p = mem_alloc_at(n + 1, file, line);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *mem_strdup_or_null_at(const char *s, const char *file, int line)
{
	return s ? mem_strdup_at(s, file, line) : NULL;
}

char *mem_printf_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	char *out = NULL;

	va_start(ap, fmt);
	if (vasprintf(&out, fmt, ap) < 0)
		mem_oom(file, line);
	va_end(ap);
	return out;
}

void mem_wipe(void *p, size_t n)
{
	if (p)
		OPENSSL_cleanse(p, n);
}

void mem_free_wiped(char *s)
{
	if (s) {
		mem_wipe(s, strlen(s));
		free(s);
	}
}
