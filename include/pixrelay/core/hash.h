/* hash: FNV-1a, the 32-bit hash of a string that the process's own tables
 * (the cache's slots, the delivery budgets' hosts, the metrics' series) are
 * indexed by, and its 64-bit form where the hash stands for the string (the
 * event stream's set of ids seen). Not for anything an attacker could aim at
 * a single bucket to slow down more than linearly: each table is bounded.
 * No I/O.
 */
#ifndef PIXRELAY_HASH_H
#define PIXRELAY_HASH_H

#include <stdint.h>

#define HASH_FNV1A_INIT 2166136261u
#define HASH_FNV1A64_INIT 14695981039346656037ull

/* FNV-1a of the NUL-terminated `s`, continuing from `h` (HASH_FNV1A_INIT to
 * start; another value mixes something in first). */
static inline uint32_t hash_fnv1a(const char *s, uint32_t h)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		h ^= *p;
		h *= 16777619u;
	}
	return h;
}

/* The same, 64 bits wide (HASH_FNV1A64_INIT to start). */
static inline uint64_t hash_fnv1a64(const char *s, uint64_t h)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		h ^= *p;
		h *= 1099511628211ull;
	}
	return h;
}

#endif
