/* test-hash: FNV-1a in its 32- and 64-bit forms, against the published
 * test vectors of the FNV reference code, and a seed mixed in first. */
#include "pixrelay/core/hash.h"

#include "check.h"

int main(void)
{
	CHECK(hash_fnv1a("", HASH_FNV1A_INIT) == 0x811c9dc5u);
	CHECK(hash_fnv1a("a", HASH_FNV1A_INIT) == 0xe40c292cu);
	CHECK(hash_fnv1a("foobar", HASH_FNV1A_INIT) == 0xbf9cf968u);
	CHECK(hash_fnv1a64("", HASH_FNV1A64_INIT) == 0xcbf29ce484222325ull);
	CHECK(hash_fnv1a64("a", HASH_FNV1A64_INIT) == 0xaf63dc4c8601ec8cull);
	CHECK(hash_fnv1a64("foobar", HASH_FNV1A64_INIT) == 0x85944171f73967e8ull);
	/* continuing from a hash is hashing the concatenation */
	CHECK(hash_fnv1a("bar", hash_fnv1a("foo", HASH_FNV1A_INIT)) ==
	      hash_fnv1a("foobar", HASH_FNV1A_INIT));
	CHECK(hash_fnv1a64("bar", hash_fnv1a64("foo", HASH_FNV1A64_INIT)) ==
	      hash_fnv1a64("foobar", HASH_FNV1A64_INIT));
	CHECK(hash_fnv1a("foobar", HASH_FNV1A_INIT ^ 1) != hash_fnv1a("foobar", HASH_FNV1A_INIT));
	return check_finish("hash");
}
