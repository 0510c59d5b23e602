/* hash: FNV-1a, the 32-bit hash of a string that the process's own tables
 * (the cache's slots, the delivery budgets' hosts, the metrics' series) are
 * indexed by. Not for anything an attacker could aim at a single bucket to
 * slow down more than linearly: each table is bounded. No I/O.
 */
#ifndef PIXRELAY_HASH_H
#define PIXRELAY_HASH_H

#include <stdint.h>

#define HASH_FNV1A_INIT 2166136261u

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

#endif
