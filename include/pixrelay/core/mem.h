/* mem: allocation that never returns NULL.
 *
 * A daemon that runs out of memory cannot keep its promises (an acknowledged
 * notification must not be lost half-written), so every allocation failure
 * aborts the process with the file and line of the caller.
 */
#ifndef PIXRELAY_MEM_H
#define PIXRELAY_MEM_H

#include <stddef.h>

void *mem_alloc_at(size_t n, const char *file, int line);
void *mem_calloc_at(size_t n, size_t size, const char *file, int line);
void *mem_realloc_at(void *p, size_t n, const char *file, int line);
char *mem_strdup_at(const char *s, const char *file, int line);
char *mem_strndup_at(const char *s, size_t n, const char *file, int line);
char *mem_strdup_or_null_at(const char *s, const char *file, int line);
/* printf into a new string; the caller owns the result. */
char *mem_printf_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define mem_alloc(n) mem_alloc_at((n), __FILE__, __LINE__)
#define mem_calloc(n, s) mem_calloc_at((n), (s), __FILE__, __LINE__)
#define mem_realloc(p, n) mem_realloc_at((p), (n), __FILE__, __LINE__)
#define mem_strdup(s) mem_strdup_at((s), __FILE__, __LINE__)
#define mem_strndup(s, n) mem_strndup_at((s), (n), __FILE__, __LINE__)
/* a copy of s, or NULL for NULL */
#define mem_strdup_or_null(s) mem_strdup_or_null_at((s), __FILE__, __LINE__)
#define mem_printf(...) mem_printf_at(__FILE__, __LINE__, __VA_ARGS__)
/* allocate one zeroed object of the pointed-to type */
#define mem_new(type) ((type *)mem_calloc(1, sizeof(type)))

/* Abort with a message naming file and line. */
_Noreturn void mem_oom(const char *file, int line);

/* Overwrite a secret before its memory is released (not optimised away). */
void mem_wipe(void *p, size_t n);
/* Wipe the NUL-terminated string s and free it; NULL is fine. */
void mem_free_wiped(char *s);

#endif
