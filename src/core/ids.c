/* ids: ids, secrets and digests from OpenSSL: ULIDs, v4 UUIDs, base62
 * secrets without modulo bias, hex and SHA-256. A failing random generator
 * or digest aborts. Pooled ULIDs (event and request ids) draw from a
 * per-thread pool of 512 random bytes that a fork empties; anything that
 * must stay unguessable draws afresh. ids_now_ms is the wall clock every
 * module stamps with; the same moments as text are timefmt.c's. */
#include "pixrelay/core/ids.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static const char crockford[] = IDS_CROCKFORD;
static const char base62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

void ids_random(void *buf, size_t n)
{
	if (RAND_bytes(buf, (int)n) != 1) {
		fprintf(stderr, "pixrelay: RAND_bytes failed\n");
		abort();
	}
}

/* Random bytes for event and request ids (ids_pooled_ulid_at), drawn from
 * RAND_bytes 512 at a time: one call per id cost about a microsecond of
 * OpenSSL's locking, a tenth of ingest's own time. Nothing that must stay
 * unguessable (secrets, charge ids, which open GET /v1/qrcode/{id}) comes
 * from here. A forked child starts with an empty pool so parent and child
 * never share bytes. */
static __thread unsigned char pool[512];
static __thread size_t pool_left;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void pool_forget(void)
{
	pool_left = 0;
}

static void pool_init(void)
{
	pthread_atfork(NULL, NULL, pool_forget);
}

static void id_random(unsigned char *buf, size_t n)
{
	pthread_once(&pool_once, pool_init);
	if (n > sizeof(pool)) {
		ids_random(buf, n);
		return;
	}
	if (pool_left < n) {
		ids_random(pool, sizeof(pool));
		pool_left = sizeof(pool);
	}
	memcpy(buf, pool + sizeof(pool) - pool_left, n);
	pool_left -= n;
}

uint64_t ids_now_ms(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (uint64_t)tv.tv_sec * 1000u + (uint64_t)tv.tv_usec / 1000u;
}

uint64_t ids_now_us(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

/* 48 bits of time in 10 chars, then the 80 bits of r in 16 chars. */
static void ulid_encode(char out[IDS_ULID_LEN + 1], uint64_t ms, const unsigned char r[10])
{
	for (int i = 9; i >= 0; i--) {
		out[i] = crockford[ms & 31];
		ms >>= 5;
	}
	for (int i = 0; i < 16; i++) {
		int bit = i * 5, byte = bit / 8, shift = bit % 8;
		unsigned v = (unsigned)r[byte] << 8 | (byte + 1 < 10 ? r[byte + 1] : 0);
		out[10 + i] = crockford[(v >> (11 - shift)) & 31];
	}
	out[IDS_ULID_LEN] = '\0';
}

void ids_ulid_at(char out[IDS_ULID_LEN + 1], uint64_t ms)
{
	unsigned char r[10];

	ids_random(r, sizeof(r));
	ulid_encode(out, ms, r);
}

void ids_pooled_ulid_at(char out[IDS_ULID_LEN + 1], uint64_t ms)
{
	unsigned char r[10];

	id_random(r, sizeof(r));
	ulid_encode(out, ms, r);
}

void ids_ulid(char out[IDS_ULID_LEN + 1])
{
	ids_ulid_at(out, ids_now_ms());
}

bool ids_is_ulid(const char *s)
{
	size_t n = strlen(s);

	if (n != IDS_ULID_LEN || s[0] > '7')
		return false;
	for (size_t i = 0; i < n; i++)
		if (ids_crockval(s[i]) < 0)
			return false;
	return true;
}

int ids_crockval(char c)
{
	const char *p = c ? strchr(crockford, c) : NULL;

	return p ? (int)(p - crockford) : -1;
}

void ids_uuid4(char out[IDS_UUID_LEN + 1])
{
	unsigned char b[16];

	ids_random(b, sizeof(b));
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, IDS_UUID_LEN + 1,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
		 b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
		 b[15]);
}

void ids_base62(char *out, size_t nchars)
{
	size_t i = 0;

	while (i < nchars) {
		unsigned char b[64];
		ids_random(b, sizeof(b));
		for (size_t j = 0; j < sizeof(b) && i < nchars; j++)
			if (b[j] < 248) /* 248 = 4 * 62: keeps the draw uniform */
				out[i++] = base62[b[j] % 62];
	}
	out[nchars] = '\0';
}

int ids_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

void ids_hex(char *out, const unsigned char *in, size_t n)
{
	static const char hx[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hx[in[i] >> 4];
		out[2 * i + 1] = hx[in[i] & 15];
	}
	out[2 * n] = '\0';
}

void ids_sha256_hex(char out[65], const void *data, size_t len)
{
	unsigned char md[32];
	unsigned int mdlen = 0;

	if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32) {
		fprintf(stderr, "pixrelay: SHA-256 failed\n");
		abort();
	}
	ids_hex(out, md, 32);
}

bool ids_sha256_matches(const void *token, size_t len, const char *sha_hex)
{
	char sha[65];
	bool same;

	if (!token || len == 0 || !sha_hex || strlen(sha_hex) != 64)
		return false;
	ids_sha256_hex(sha, token, len);
	same = CRYPTO_memcmp(sha, sha_hex, 64) == 0;
	OPENSSL_cleanse(sha, sizeof(sha));
	return same;
}
